"""Graded sessions over answers that harnesses already wrote (real inspect_ai and lm-eval logs).

The fixture logs in ``tests/models/data/answers`` were written by the tools
themselves (see its README). The join is by id, never by position, and a pool
whose text disagrees with the log under the same id is refused.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.models.answer_writers import ITEMS
from typer.testing import CliRunner

from activetest.cli import app
from activetest.models.answer_files import read_answers
from activetest.session.create_graded import read_answer_spec
from activetest.session.workflow import Session

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"
INSPECT = next((DATA / "inspect").glob("*.eval"))
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))
#: Every Eval Ever's lm-eval converter's output: sample_id is lm-eval's doc_id "0".."5"
EEE_LMEVAL = next((DATA / "eee" / "data" / "toyqa" / "HuggingFaceTB").glob("*/*_samples.jsonl"))
#: ... and its inspect converter's: the samples' own ids (q-lake, ...)
EEE_INSPECT = next((DATA / "eee" / "data" / "toyqa" / "llama-cpp-python").glob(
    "*/*_samples.jsonl"))
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



def test_answers_for_items_not_in_the_pool_are_left_out_and_said(tmp_path: Path) -> None:
    """A pool that samples a larger harness run joins; the answers it leaves out are said
    (QA: dropped without a word), by the command line as one note."""
    pytest.importorskip("zstandard")
    af = read_answers(INSPECT)
    rows = [{"id": r.item_id, "input": r.prompt["input"], "references": list(r.references)}
            for r in af.records[1:]]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = subprocess.run(
        [sys.executable, "-m", "activetest", "init", str(tmp_path / "s.db"), "--task",
         "answers", "--pool", str(pool), "--target", f"answers:{INSPECT}", "--surrogate",
         "uniform", "--no-progress"], capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stderr.splitlines() if "not in the pool" in line]
    assert len(notes) == 1 and notes[0].startswith("note: "), out.stderr
    assert f"1 answer(s) for items not in the pool left out ({af.records[0].item_id!r})" \
        in notes[0]
    with Session.open(tmp_path / "s.db") as s:
        assert s.n_items == len(af) - 1

# --------------------------------------------------------------------------- ids that are positions


@pytest.fixture(scope="module")
def unnumbered_eval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """inspect_ai's own log of samples that had no id (it numbers them 1..6, in ITEMS
    order), each input after one in-context example (the next item)."""
    if importlib.util.find_spec("inspect_ai") is None:
        pytest.skip("inspect-ai not installed")
    pytest.importorskip("zstandard")
    out = tmp_path_factory.mktemp("unnumbered")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")]),
           "INSPECT_LOG_LEVEL": "warning"}
    proc = subprocess.run([sys.executable, "-m", "tests.models.answer_writers", "inspect",
                           str(out), "--no-ids"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    wrote = [x for x in proc.stdout.splitlines() if x.startswith("WROTE ")]
    assert proc.returncode == 0 and wrote, proc.stderr[-3000:]
    return Path(wrote[-1][len("WROTE "):])


def _positional_source(name: str, request: pytest.FixtureRequest) -> tuple[str, int]:
    """(answers: spec, the id of ITEMS[0]) of a real log whose ids are positions, in
    ITEMS order."""
    if name == "eee":  # converted from lm-eval: sample_id "0".."5"
        return f"answers:{EEE_LMEVAL}?evaluation=exact_match", 0
    if name == "inspect":  # samples without ids: 1..6
        return f"answers:{request.getfixturevalue('unnumbered_eval')}", 1
    return f"answers:{LMEVAL}?filter=none", 0  # doc_id


def _pool(path: Path, order: list[int], first: int, *, refs: bool = True) -> Path:
    """A pool of ITEMS in ``order`` with ids by position (``first``, ...), its prompt
    fields named unlike any log's (so no field is shared: only the content can join)."""
    rows = [{"id": str(first + k), "passage": ITEMS[j][1], "query": ITEMS[j][2],
             **({"references": list(ITEMS[j][3])} if refs else {})}
            for k, j in enumerate(order)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _left(tmp_path: Path, name: str) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if name in p.name)


@pytest.mark.parametrize("source", ["eee", "inspect", "lmeval"])
@pytest.mark.parametrize("refs", [True, False])
def test_ids_that_are_positions_join_only_where_the_content_confirms(
        tmp_path: Path, source: str, refs: bool, request: pytest.FixtureRequest) -> None:
    pytest.importorskip("zstandard") if source == "inspect" else None
    spec, first = _positional_source(source, request)
    af = read_answer_spec(spec)
    init = ("init", "--task", "answers", "--target", spec, "--surrogate", "uniform",
            "--no-progress")
    # the pool in the file's order joins, every answer on its own question
    db = tmp_path / "same.db"
    run(*init[:1], db, *init[1:], "--pool", _pool(tmp_path / "same.jsonl", list(range(6)),
                                                   first, refs=refs))
    with Session.open(db) as s:
        items = s.items()
        for row, (answer, _, _) in s.answers().items():
            j = [it[2] for it in ITEMS].index(items[row].fields["query"])
            assert answer == af.by_id()[str(first + j)].answer
    # the same questions in another order, ids by position: refused, nothing created
    db = tmp_path / "reversed.db"
    out = run(*init[:1], db, *init[1:], "--pool",
              _pool(tmp_path / "reversed.jsonl", list(reversed(range(6))), first, refs=refs),
              code=2)
    msg = " ".join(out.split())
    assert "Traceback" not in out and msg.count("error:") == 1
    assert "".join(str(af.path).split()) in "".join(out.split())  # the file (wrapped or not)
    assert f"the record of id '{first}' is not shown to be the pool's item '{first}'" in msg
    # both sides: the pool's question at that id, and the file's record's
    assert ITEMS[5][2] in msg and ITEMS[0][2] in msg and "(6 of 6 items unconfirmed)" in msg
    assert "match=id" in msg
    assert _left(tmp_path, "reversed.db") == []
    # the person who knows the pool is in the file's order can say so
    run(*init[:1], tmp_path / "declared.db", "--task", "answers", "--target",
        f"{spec}{'&' if '?' in spec else '?'}match=id", "--surrogate", "uniform",
        "--no-progress", "--pool", tmp_path / "reversed.jsonl")


def test_inspect_metadata_confirms_or_refutes_a_join(tmp_path: Path,
                                                    unnumbered_eval: Path) -> None:
    def pool(name: str, order: list[int]) -> Path:  # the samples' metadata, nothing else
        path = tmp_path / name
        path.write_text("".join(json.dumps({"id": str(1 + k), "position": j}) + "\n"
                                for k, j in enumerate(order)), encoding="utf-8")
        return path

    init = ("--task", "answers", "--target", f"answers:{unnumbered_eval}", "--surrogate",
            "uniform", "--no-progress")
    run("init", tmp_path / "a.db", *init, "--pool", pool("same.jsonl", list(range(6))))
    out = run("init", tmp_path / "b.db", *init, "--pool",
              pool("rev.jsonl", list(reversed(range(6)))), code=2)
    assert "its metadata 'position' is '0' where the pool's column is '5'" in \
        " ".join(out.split())
    assert not (tmp_path / "b.db").exists()


@pytest.mark.parametrize("log", [INSPECT, EEE_INSPECT])
def test_a_log_with_real_ids_joins_a_pool_in_any_order(tmp_path: Path, log: Path) -> None:
    pytest.importorskip("zstandard")
    query = "?evaluation=match:accuracy" if log == EEE_INSPECT else ""
    af = read_answer_spec(f"answers:{log}{query}")
    order = {it[0]: k for k, it in enumerate(ITEMS)}
    rows = [{"id": sid, "query": ITEMS[order[sid]][2]} for sid in reversed(sorted(af.ids))]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "s.db"
    run("init", db, "--task", "answers", "--pool", pool, "--target", f"answers:{log}{query}",
        "--surrogate", "uniform", "--no-progress")
    with Session.open(db) as s:
        got = {s.items()[i].id: a for i, (a, _, _) in s.answers().items()}
    assert got == {r.item_id: r.answer for r in af}


def test_a_compared_table_with_row_number_ids_is_checked_too(tmp_path: Path) -> None:
    pool = _pool(tmp_path / "pool.jsonl", list(range(6)), 0)
    rows = [{"id": str(k), "answer": ITEMS[j][4] or "x", "references": list(ITEMS[j][3])}
            for k, j in enumerate(reversed(range(6)))]
    b = tmp_path / "b.jsonl"
    b.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    base = ("init", tmp_path / "c.db", "--task", "answers", "--pool", pool, "--target",
            f"answers:{EEE_LMEVAL}?evaluation=exact_match", "--surrogate", "uniform",
            "--no-progress")
    out = run(*base, "--compare", f"answers:{b}", code=2)
    msg = " ".join(out.split())
    assert msg.startswith("error: --compare answers:") and "share none with the pool's" in msg
    assert not (tmp_path / "c.db").exists()
    run(*base, "--compare", f"answers:{b}?match=id")


@pytest.mark.parametrize("source", ["eee", "inspect"])
def test_a_log_as_the_pool_shows_each_item_own_input(tmp_path: Path, source: str,
                                                     request: pytest.FixtureRequest) -> None:
    spec, first = _positional_source(source, request)
    log = spec.removeprefix("answers:").partition("?")[0]
    db = tmp_path / "s.db"
    run("init", db, "--task", "answers", "--pool", log, "--target", spec, "--surrogate",
        "uniform", "--seed", "1", "--no-progress")
    questions = [it[2] for it in ITEMS]
    with Session.open(db) as s:
        for item in s.items():
            own = questions[int(item.id) - first]
            shown = s.display(item.id)
            # the item's own question, not the in-context example's before it
            assert own in shown and [q for q in questions if q in shown] == [own]
            assert shown.splitlines()[-1].startswith("(the model's full prompt, ")
            full = item.fields["full_prompt"]
            assert own in full and sum(q in full for q in questions) == 2
        first_id = s.select(1)[0].item_id
        full = s.item(first_id).fields["full_prompt"]
    example = next(q for q in questions if q in full and q != questions[int(first_id) - first])
    result = runner.invoke(app, ["label", str(db)], input="p\n2\n")
    assert result.exit_code == 0, result.output
    screen, _, after_p = result.output.partition("the model's full prompt")
    assert example not in screen and example in after_p and "p=full prompt" in result.output
    with Session.open(db) as s:
        assert s.labels()[first_id] == 1
