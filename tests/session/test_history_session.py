"""``activetest init --history``: a graded session whose design learns from other models'
results on the same items (real CLI, real files, real SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from session_support import run_cli_process

from activetest.session.workflow import Session


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=200)


def _files(tmp_path: Path, n: int = 60, H: int = 40) -> tuple[Path, Path, np.ndarray]:
    """A pool of answers (right where the answer is the reference) and a response matrix
    of H other models from a logistic model sharing the items' difficulty, with the
    target's own row (named 'me') and one item the history lacks."""
    rng = np.random.default_rng(0)
    b = rng.normal(size=n) * 2
    right = rng.random(n) < 1 / (1 + np.exp(-b))
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": f"q{i}", "question": f"what is {i}?",
                                        "answer": str(i) if right[i] else "no",
                                        "references": [str(i)]}) + "\n" for i in range(n)))
    Y = (rng.random((H, n)) < 1 / (1 + np.exp(-(b[None, :] + rng.normal(size=(H, 1))))))
    rows = ["model," + ",".join(f"q{i}" for i in range(1, n)) + ",other"]
    rows += [f"m{h}," + ",".join(str(int(v)) for v in Y[h, 1:]) + ",1" for h in range(H)]
    rows.append("me," + ",".join(str(int(v)) for v in right[1:]) + ",0")
    hist = tmp_path / "history.csv"
    hist.write_text("\n".join(rows) + "\n")
    return pool, hist, right


def test_init_with_history_draws_by_it_and_stays_unbiased(tmp_path: Path) -> None:
    pool, hist, right = _files(tmp_path)
    db = tmp_path / "s.db"
    out = cli("init", db, "--task", "answers", "--pool", pool, "--target", "pool",
              "--surrogate", "history", "--history", hist, "--history-exclude", "me",
              "--seed", "3", "--no-progress")
    assert "history: 40 model(s)" in out and "59 of 60 pool items have history" in out
    assert "1 item column(s) are not in the pool" in out
    assert "row 'me' not used (named as the target)" in out
    with Session.open(db) as s:
        assert s.config["design"] == "features" and s.config["history"]["n_models"] == 40
        # the original in-run rule: no design_rule recorded (docs/history.md, docs/harness.md)
        assert "design_rule" not in s.config
        s.select(25)
        s.label_from_data()
        s.select(10)  # the design refits on the 25 judgments, from the stored features
        s.label_from_data()
        from activetest.session.draw import design_info
        info = design_info(s.store)
        # the report says what the design learnt from (QA: it never named the history)
        info_lines = s.report_data(progress=False).info
        assert info_lines["History"].startswith(f"40 other model(s) from {Path(hist).name}; "
                                                f"59 of 60 pool items covered; 1 row(s)")
        s.select(s.n_items - 35)
        s.label_from_data()
        est = s.estimate().metrics["error_rate"].active.estimate
    assert abs(est - (1 - right.mean())) < 1e-9  # at census: the pool's error rate exactly
    assert info["refits"] == 1 and "difficulty log-odds" in info["weights"]  # one batch refit
    assert "factor 1" in info["weights"]


def test_history_refusals(tmp_path: Path) -> None:
    pool, hist, _ = _files(tmp_path)
    base = ("init", tmp_path / "x.db", "--task", "answers", "--pool", pool, "--target", "pool",
            "--no-progress")
    bad = tmp_path / "positional.csv"
    bad.write_text("model,0,1,2\nm,1,0,1\n")
    out = cli(*base, "--surrogate", "history", "--history", bad, code=2)
    assert "never by position" in out and "positional.csv" in out
    out = cli(*base, "--surrogate", "history", "--history", hist, "--history-exclude", "you",
              code=2)
    assert "'you' matches no history row" in out
    out = cli(*base, "--surrogate", "uniform", "--history", hist, code=2)
    assert "go together" in out
    assert not (tmp_path / "x.db").exists()
