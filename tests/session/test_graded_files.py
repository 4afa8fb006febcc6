"""Graded sessions over answers that harnesses already wrote (real inspect_ai and lm-eval logs).

The fixture logs in ``tests/models/data/answers`` were written by the tools
themselves (see its README). The join is by id, never by position, and a pool
whose text disagrees with the log under the same id is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from activetest.cli import app
from activetest.models.answer_files import read_answers
from activetest.session.workflow import Session

DATA = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"
INSPECT = next((DATA / "inspect").glob("*.eval"))
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))
runner = CliRunner()


def run(*args: object, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


@pytest.mark.parametrize(("log", "query"), [(INSPECT, ""), (LMEVAL, "?filter=none")])
def test_a_harness_log_is_the_pool_and_the_target(tmp_path: Path, log: Path,
                                                  query: str) -> None:
    pytest.importorskip("zstandard") if log.suffix == ".eval" else None
    af = read_answers(log, filter_name="none") if query else read_answers(log)
    db = tmp_path / "s.db"
    run("init", db, "--task", "answers", "--pool", log, "--target", f"answers:{log}{query}",
        "--surrogate", "uniform", "--seed", "2", "--no-progress")
    with Session.open(db) as s:
        assert s.graded and s.n_items == len(af)
        stored = {s.items()[i].id: a for i, (a, _, _) in s.answers().items()}
        assert stored == {r.item_id: r.answer for r in af}
        shown = s.display(af.records[0].item_id)
        assert af.records[0].answer in shown
        s.select(len(af))
        assert s.label_from_data() == len(af)  # the log's own judgments, for simulation
        est = s.estimate().metrics["error_rate"].active.estimate
    scores = np.array([r.score for r in af], dtype=float)
    assert est == pytest.approx(1 - scores.mean(), abs=1e-12)


def test_answers_join_a_separate_pool_by_id_and_refuse_a_wrong_join(tmp_path: Path) -> None:
    pytest.importorskip("zstandard")
    af = read_answers(INSPECT)
    rows = [{"id": r.item_id, "input": r.prompt["input"], "references": list(r.references)}
            for r in reversed(af.records)]  # another order: the join is by id
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.db"
    run("init", db, "--task", "answers", "--pool", pool, "--target", f"answers:{INSPECT}",
        "--surrogate", "uniform", "--no-progress")
    with Session.open(db) as s:
        got = {s.items()[i].id: a for i, (a, _, _) in s.answers().items()}
    assert got == {r.item_id: r.answer for r in af}
    rows[0]["input"] = "a different question entirely"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = run("init", tmp_path / "t.db", "--task", "answers", "--pool", pool, "--target",
              f"answers:{INSPECT}", "--surrogate", "uniform", "--no-progress", code=2)
    assert "join different items" in out and "Traceback" not in out
    rows.append({"id": "not-in-the-log", "input": "?", "references": []})
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows[1:]))
    out = run("init", tmp_path / "u.db", "--task", "answers", "--pool", pool, "--target",
              f"answers:{INSPECT}", "--surrogate", "uniform", "--no-progress", code=2)
    assert "not-in-the-log" in out
    assert not (tmp_path / "t.db").exists() and not (tmp_path / "u.db").exists()
