"""The session file names the pool file (and the examples' file) without its local path.

QA: ``init --pool /home/me/data/pool.csv`` stored the path as given (or resolved) as
the config's ``pool.source`` in a file users share. No later command re-opens it (the
items are stored), so new sessions store the file's last component and the SHA-256 of
its bytes (a file given again can be confirmed the same); old files keep their path.

tests/session/test_spec_file_names.py reads the same session files the same way (the
stored config, by sqlite3) for another part of them: the model specs' files (answer
logs, prediction tables, a judge's table), which later commands read again and find by
their digests. The pool's and the examples' names are checked only here."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from session_support import make_pool_files, run_cli, write_squad_pool


def _stored(db: Path) -> dict:
    """The config as the session file holds it (read with sqlite3, not the library)."""
    con = sqlite3.connect(db)
    try:
        (doc,) = con.execute("SELECT json FROM config").fetchone()
    finally:
        con.close()
    return json.loads(doc)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_classification_session_names_its_pool_and_examples_files(tmp_path: Path) -> None:
    files = make_pool_files(tmp_path / "private" / "data")
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", files.pool.resolve(), "--examples", files.examples.resolve(),
            "--task", "sst2", "--surrogate", f"table:{files.surrogate}", "--target",
            f"table:{files.target}", "--id-column", "id", "--seed", "3", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"]["source"] == "pool.csv" and cfg["pool"]["sha256"] == _sha(files.pool)
    assert cfg["examples"]["source"] == "examples.csv"
    assert cfg["examples"]["sha256"] == _sha(files.examples)
    assert "private" not in json.dumps({k: cfg[k] for k in ("pool", "examples")}), cfg
    run_cli("status", db)  # the session opens and works as before


def test_a_graded_and_an_inspect_session_name_their_pool_file(tmp_path: Path) -> None:
    folder = tmp_path / "private"
    folder.mkdir()
    pool = write_squad_pool(folder / "squad.jsonl")
    db = tmp_path / "g.db"
    run_cli("init", db, "--pool", pool.resolve(), "--task", "squad", "--target", "pool",
            "--surrogate", "column:conf", "--seed", "0", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"] == {"source": "squad.jsonl", "sha256": _sha(pool), "n_items": 12}, cfg
    insp = folder / "pool.jsonl"
    insp.write_text("".join(json.dumps({"id": f"q{i}", "question": f"What is {i} plus 2?",
                                        "p_correct": 0.5}) + "\n" for i in range(20)))
    db = tmp_path / "i.db"
    run_cli("init", db, "--pool", insp.resolve(), "--task", "answers", "--target", "inspect",
            "--surrogate", "column:p_correct", "--seed", "0", "--no-progress")
    cfg = _stored(db)
    assert cfg["pool"] == {"source": "pool.jsonl", "sha256": _sha(insp), "n_items": 20}, cfg
    run_cli("status", db)
