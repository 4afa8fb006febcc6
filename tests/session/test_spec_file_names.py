"""The session file names the answer logs and prediction tables of its model specs
without their local paths.

QA: ``init --target answers:/home/me/runs/samples.jsonl`` (graded) and ``--target
table:/home/me/runs/target.csv`` (classification) stored the absolute path in a file
users share: as the config's target and compared specs, as the store's roles
(``compare:<spec>``), in each answer's provenance and in the scores' provenance. New
sessions store each file by its name (two of one name by their shortest distinguishing
suffix) and, for a table a later command reads again (a PE target), its SHA-256; the
path is said on the terminal only. A session copied to another folder (or machine)
finds its table beside it or by ``$ACTIVETEST_FILES``, else refuses naming the file and
its digest; old session files keep their specs (tests/session/test_old_sessions.py).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from activetest import Session
from activetest.cli import app

DATA = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))


def _run(*args: object, code: int = 0) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert "Traceback" not in res.output
    return res.output


def _dump(db: Path) -> str:
    """Every text the session file holds (read with sqlite3, not the library)."""
    con = sqlite3.connect(db)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def _config(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        (doc,) = con.execute("SELECT json FROM config").fetchone()
    finally:
        con.close()
    return json.loads(doc)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _estimates(db: Path) -> dict[str, float]:
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    out = {k: m.active.estimate for k, m in r.metrics.items()}
    for c in r.comparisons:
        out[f"{c.spec}/{c.metric}"] = c.other.estimate
    return out


def test_a_graded_sessions_answer_logs_are_named_by_their_names(tmp_path: Path) -> None:
    """The target's and two compared answer logs of one file name in two private folders:
    stored as ``answers:<distinguishing suffix>?options`` everywhere (config, roles,
    answers' provenance), said with their paths at init; the session copied to another
    folder (the logs left behind) labels and estimates as the original does."""
    private = tmp_path / "home" / "me"
    logs = []
    for run in ("run1", "run2", "run3"):
        (private / run).mkdir(parents=True)
        logs.append(shutil.copy(LMEVAL, private / run / LMEVAL.name))
    logs = [Path(p) for p in logs]
    db = tmp_path / "s.db"
    out = _run("init", db, "--task", "answers", "--pool", logs[0], "--target",
               f"answers:{logs[0]}?filter=none", "--compare", f"answers:{logs[1]}?filter=none",
               "--compare", f"answers:{logs[2]}?filter=none", "--surrogate", "uniform",
               "--seed", "2", "--no-progress")
    text = _dump(db)
    assert str(private) not in text and "home/me" not in text, text[:2000]
    cfg = _config(db)
    names = [f"answers:{r}/{LMEVAL.name}?filter=none" for r in ("run1", "run2", "run3")]
    assert cfg["target"] == names[0] and cfg["compare"] == names[1:]
    assert set(cfg["answer_files"]) == {"target", *(f"compare:{n}" for n in names[1:])}
    assert all(f["sha256"] == _sha(LMEVAL) for f in cfg["answer_files"].values())
    for log in logs:  # the paths: said, not stored
        assert str(log) in " ".join(out.split())
    with Session.open(db) as s:
        assert s.compared_targets() == names[1:]
        # a compared log named by its path, as given at init, is the stored one
        assert s.compared_answer(s.items()[0].id, f"answers:{logs[1]}?filter=none") == \
            s.compared_answer(s.items()[0].id, names[1])
    moved = tmp_path / "elsewhere" / "s.db"
    moved.parent.mkdir()
    shutil.copy(db, moved)
    shutil.rmtree(private)  # another machine: the logs are not there
    results = []
    for path in (db, moved):
        with Session.open(path) as s:
            s.select(s.n_items)
            s.label_from_data()  # (the compared answers are the target's: judged so)
        results.append(_estimates(path))
    assert results[0] == pytest.approx(results[1], abs=1e-12)
    assert set(results[0]) >= {f"{n}/error_rate" for n in names[1:]}
