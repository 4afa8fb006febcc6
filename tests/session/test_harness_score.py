"""The harness's own judgment as the surrogate (``--surrogate score``), and the advice
given when a surrogate needs token log-probs that a log does not have.

Through the command line in a subprocess, on the answer logs the real tools wrote
(``tests/models/data/answers``: lm-eval ``generate_until`` samples, an inspect_ai
``.eval`` log, Every Eval Ever's conversion of the lm-eval run).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from session_support import REPO, run_cli_process

from activetest.data.generative import Judgment
from activetest.models.answer_files import read_answers
from activetest.models.judges import score_logprobs
from activetest.session.create_graded import AGREE_JUDGE_MEASURED, SCORE_MEASURED
from activetest.session.workflow import Session

DATA = REPO / "tests" / "models" / "data" / "answers"
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))
INSPECT = next((DATA / "inspect").glob("*.eval"))
EEE = next((DATA / "eee" / "data" / "toyqa" / "HuggingFaceTB").glob("*/*_samples.jsonl"))


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=200)


def _init(db: Path, log: Path, query: str, surrogate: str, *more: str, code: int = 0) -> str:
    return cli("init", db, "--task", "answers", "--pool", log, "--target",
               f"answers:{log}{query}", "--surrogate", surrogate, "--seed", "5",
               "--no-progress", *more, code=code)


def _surrogate_p_correct(db: Path) -> np.ndarray:
    with Session.open(db) as s:
        stored = s.store.scores("surrogate")
        assert stored is not None
        lp = stored.logprobs
    return np.exp(lp[:, 1])


@pytest.mark.parametrize(("log", "query", "name"), [
    (LMEVAL, "?filter=none", "exact_match"),
    (EEE, "?evaluation=exact_match", "score"),
])
def test_a_log_without_log_probs_is_told_to_use_its_own_judgment(
        tmp_path: Path, log: Path, query: str, name: str) -> None:
    for surrogate in ("confidence:sum", "confidence", "adaptive"):
        out = _init(tmp_path / "s.db", log, query, surrogate, code=2)
        assert f"surrogate '{surrogate}' needs the target's token log-probs" in out
        assert "lm-eval and Every Eval Ever logs record none" in out
        assert "use --surrogate score" in out and repr(name) in out
        assert SCORE_MEASURED in out and "docs/generative.md" in out
        assert "agree:" not in out and "judge:" not in out  # measured worse than uniform
        assert not (tmp_path / "s.db").exists()


def test_a_pool_column_without_log_probs_is_told_what_measured_best(tmp_path: Path) -> None:
    af = read_answers(LMEVAL, filter_name="none")
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": r.item_id, "question": r.prompt.get("question",
                                                                                  "?"),
                                        "answer": r.answer, "references": list(r.references)})
                            + "\n" for r in af))
    out = cli("init", tmp_path / "s.db", "--task", "answers", "--pool", pool, "--target", "pool",
              "--surrogate", "confidence:sum", "--no-progress", code=2)
    assert "which these answers (a pool column) do not have" in out
    assert "--surrogate uniform" in out and AGREE_JUDGE_MEASURED in out
    out = cli("init", tmp_path / "s.db", "--task", "answers", "--pool", pool, "--target", "pool",
              "--surrogate", "score", "--no-progress", code=2)
    assert "needs an answers:FILE target" in out and "column:<name>" in out


@pytest.mark.parametrize(("log", "query", "surrogate", "name"), [
    (LMEVAL, "?filter=none", "score", "exact_match"),
    (LMEVAL, "?filter=none", "score:f1", "f1"),
    (INSPECT, "", "score:match", "match"),
    (EEE, "?evaluation=f1", "score", "score"),
])
def test_the_harness_score_is_the_surrogate(tmp_path: Path, log: Path, query: str,
                                            surrogate: str, name: str) -> None:
    if log.suffix == ".eval":
        pytest.importorskip("zstandard")
    db = tmp_path / "s.db"
    out = _init(db, log, query, surrogate)
    assert f"surrogate {surrogate}," in out and "acquisition graded_fixed" in out
    opts = {"filter_name": "none"} if log == LMEVAL else {}
    if log == EEE:
        opts = {"evaluation_name": query.partition("=")[2]}
    af = read_answers(log, score_name=name, **opts)
    with Session.open(db) as s:
        ids = [it.id for it in s.items()]
        assert s.config["acquisition"] == "graded_fixed"
    by_id = {r.item_id: r.score for r in af}
    want = score_logprobs([by_id[i] for i in ids], Judgment())
    np.testing.assert_allclose(_surrogate_p_correct(db), np.exp(want[:, 1]), rtol=1e-9)
    assert np.ptp(np.exp(want[:, 1])) > 0  # the file's judgments differ between answers
    # exactly unbiased whatever the surrogate: at census the estimate is the pool's mean loss
    with Session.open(db) as s:
        s.select(s.n_items)
        s.label_from_data()
        est = s.estimate().metrics["error_rate"].active.estimate
        labels = [s.items()[i].label for i in range(s.n_items)]
    assert est == pytest.approx(1 - np.mean([Judgment().scores[k] for k in labels]), abs=1e-12)


def test_a_judgment_the_log_lacks_is_refused_by_name(tmp_path: Path) -> None:
    out = _init(tmp_path / "s.db", LMEVAL, "?filter=none", "score:bleu", code=2)
    assert "surrogate 'score:bleu'" in out and "exact_match" in out and "f1" in out
    out = _init(tmp_path / "s.db", LMEVAL, "?filter=none", "score:answer_chars", code=2)
    assert "surrogate 'score:answer_chars'" in out  # not in [0, 1]
    out = _init(tmp_path / "s.db", LMEVAL, "?filter=none", "score:a&b", code=2)
    assert "no '&'" in out
    # a table with no judgment: --surrogate score says so, and what to do
    table = tmp_path / "answers.jsonl"
    af = read_answers(LMEVAL, filter_name="none")
    table.write_text("".join(json.dumps({"id": r.item_id, "answer": r.answer,
                                         "question": r.prompt.get("question", "?")}) + "\n"
                             for r in af))
    out = _init(tmp_path / "s.db", table, "", "score", code=2)
    assert "holds no judgment of this answer" in out and "score:<judgment>" in out
    out = _init(tmp_path / "s.db", table, "", "confidence", code=2)
    assert "--surrogate uniform" in out and "use --surrogate score:" not in out
    assert not (tmp_path / "s.db").exists()
