"""``activetest init --history``: a graded session whose design learns from other models'
results on the same items (real CLI, real files, real SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
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


def test_history_exclude_of_a_row_other_than_the_target_is_not_called_the_target(
        tmp_path: Path) -> None:
    """--history-exclude is repeatable: a second row left out (here a model the target is
    compared with) is said to be named by the option, not "named as the target" (QA: the
    compared model's row read as the session's target)."""
    pool, hist, _ = _files(tmp_path)
    out = cli("init", tmp_path / "s.db", "--task", "answers", "--pool", pool, "--target",
              "pool", "--surrogate", "history", "--history", hist, "--history-exclude", "me",
              "--history-exclude", "m7", "--seed", "3", "--no-progress")
    assert "row 'm7' not used (named by --history-exclude)" in out, out
    assert "named as the target" not in out
    # the report counts them by why, not all as "the target's own" (QA)
    with Session.open(tmp_path / "s.db") as s:
        s.select(5)
        s.label_from_data()
        info = s.report_data(progress=False).info
    assert info["History"].endswith("2 row(s) dropped (2 named by --history-exclude)"), info


def test_init_with_history_draws_by_it_and_stays_unbiased(tmp_path: Path) -> None:
    pool, hist, right = _files(tmp_path)
    db = tmp_path / "s.db"
    out = cli("init", db, "--task", "answers", "--pool", pool, "--target", "pool",
              "--surrogate", "history", "--history", hist, "--history-exclude", "me",
              "--seed", "3", "--no-progress")
    assert "history: 40 model(s)" in out and "59 of 60 pool items have history" in out
    assert "1 item column(s) are not in the pool" in out
    assert "row 'me' not used (named by --history-exclude)" in out
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


def test_a_matrix_is_refused_where_the_graded_pools_ids_are_positions(tmp_path: Path) -> None:
    """Joins never guess (QA): a response matrix holds no item content, so a graded pool
    keyed by positions (an lm-eval log's doc_id used as the pool itself; row numbers)
    joins no matrix, as in classification sessions; a pool with its own ids still does."""
    from session_support import REPO

    from activetest.session.store import SessionError

    log = next((REPO / "tests" / "models" / "data" / "answers" / "lmeval")
               .glob("samples_*.jsonl"))
    ids = list(dict.fromkeys(str(json.loads(line)["doc_id"])  # a record per filter
                             for line in log.read_text().splitlines()))
    hist = tmp_path / "by_doc_id.csv"
    hist.write_text("model," + ",".join(ids) + "\n"
                    + "".join(f"m{h}," + ",".join(str((h + k) % 2) for k in range(len(ids)))
                              + "\n" for h in range(6)))
    out = cli("init", tmp_path / "x.db", "--task", "answers", "--pool", log, "--target",
              f"answers:{log}?filter=none", "--surrogate", "history", "--history", hist,
              "--no-progress", code=2)
    assert "holds no item content" in out and "doc_id" in out and "by_doc_id.csv" in out
    assert not (tmp_path / "x.db").exists()

    pool, _, _ = _files(tmp_path, n=12)
    rows = tmp_path / "by_row.csv"
    rows.write_text("model," + ",".join(str(k) for k in range(12)) + "\n"
                    + "".join(f"m{h}," + ",".join(str((h * k) % 2) for k in range(12)) + "\n"
                              for h in range(6)))
    with pytest.raises(SessionError, match=r"ids are its rows' numbers"):
        Session.create(tmp_path / "y.db", pool=pool, task="answers", target="pool",
                       surrogate="history", history=[rows], progress=False,
                       pool_options={"id_column": None})
    # the same pool keyed by its own ids joins a matrix of those ids
    hist = _files(tmp_path, n=12)[1]
    with Session.create(tmp_path / "z.db", pool=pool, task="answers", target="pool",
                        surrogate="history", history=[hist], history_exclude=["me"],
                        progress=False) as s:
        assert s.config["history"]["n_models"] == 40


def test_the_session_file_names_history_files_without_their_local_paths(
        tmp_path: Path) -> None:
    """QA: the history record kept the --history paths as given (``/home/me/runs/...``)
    in the session file, which users share. init still says the paths; the file names
    each by its last component (two of one name by their shortest distinguishing
    suffix) and keeps each file's content digest and the rows it gave."""
    import hashlib
    import sqlite3

    pool, hist, _ = _files(tmp_path)
    lines = hist.read_text().splitlines()
    paths = []
    for k, part in enumerate(("a", "b")):  # two files of one name in two folders
        (tmp_path / "runs" / part).mkdir(parents=True)
        p = tmp_path / "runs" / part / "history.csv"
        p.write_text("\n".join([lines[0], *(f"{part}{line}" for line in
                                            lines[1 + 20 * k:21 + 20 * k])]) + "\n")
        paths.append(p)
    db = tmp_path / "s.db"
    out = " ".join(cli("init", db, "--task", "answers", "--pool", pool, "--target", "pool",
                       "--surrogate", "history", "--history", paths[0], "--history",
                       paths[1], "--seed", "3", "--no-progress").split())
    assert f"history: 40 model(s) from {paths[0]}, {paths[1]};" in out, out  # said
    con = sqlite3.connect(db)
    try:
        (stored,) = con.execute("SELECT json FROM config").fetchone()
    finally:
        con.close()
    assert str(tmp_path) not in json.dumps(json.loads(stored)["history"]), stored
    with Session.open(db) as s:
        h = s.config["history"]
        s.select(5)
        s.label_from_data()
        info = s.report_data(progress=False).info
    assert h["sources"] == ["a/history.csv", "b/history.csv"], h
    assert h["messages"][0].startswith("history: 40 model(s) from a/history.csv, "
                                       "b/history.csv; "), h["messages"]
    assert h["files"] == [
        {"name": f"{part}/history.csv", "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
         "models": [f"{part}m{k}" for k in range(20 * j, 20 * j + 20)]}
        for j, (part, p) in enumerate(zip("ab", paths, strict=True))], h["files"]
    assert info["History"].startswith("40 other model(s) from a/history.csv, b/history.csv; ")
    # a file written before keeps its record as it was (paths, no "files"): it opens, and
    # gives the same numbers and the report names its files as before
    with Session.open(db) as s:
        est = s.estimate(record=False, progress=False).to_dict()
    doc = json.loads(stored)
    doc["history"] = {**{k: v for k, v in doc["history"].items() if k != "files"},
                      "sources": [str(p) for p in paths]}
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute("UPDATE config SET json = ? WHERE id = 1", (json.dumps(doc),))
    finally:
        con.close()
    with Session.open(db) as s:
        assert s.estimate(record=False, progress=False).to_dict() == est
        info = s.report_data(progress=False).info
    assert info["History"].startswith(f"40 other model(s) from {paths[0]}, {paths[1]}; ")


def test_a_history_file_whose_name_holds_a_bracket_is_named_by_its_own_name(
        tmp_path: Path) -> None:
    """QA: the session file named a ``--history`` file by where it was read from, and an
    existing file whose name holds ``[`` (``runs/h[1].csv``) was taken for a glob pattern
    there (:func:`glob.has_magic`) while the reader read the file: the record named the
    folder (``runs``), not the file. Every reader's rule (an existing file of the exact
    name wins over the pattern, :mod:`activetest.formats.globs`) names it ``h[1].csv``."""
    pool, hist, _ = _files(tmp_path)
    (tmp_path / "runs").mkdir()
    odd = tmp_path / "runs" / "h[1].csv"
    odd.write_bytes(hist.read_bytes())
    db = tmp_path / "s.db"
    out = " ".join(cli("init", db, "--task", "answers", "--pool", pool, "--target", "pool",
                       "--surrogate", "history", "--history", odd, "--seed", "3",
                       "--no-progress").split())
    assert f"history: 41 model(s) from {odd};" in out, out  # said as given
    with Session.open(db) as s:
        h = s.config["history"]
    assert h["sources"] == ["h[1].csv"], h
    assert [f["name"] for f in h["files"]] == ["h[1].csv"], h["files"]
    assert h["messages"][0].startswith("history: 41 model(s) from h[1].csv; "), h


def test_a_history_pattern_is_quoted_as_typed(tmp_path: Path) -> None:
    """QA: ``--history 'runs/*/'`` (every model's folder) that matched nothing was said to
    be ``runs/*``, the trailing separator dropped by the CLI's ``Path``: the message now
    quotes what was typed; an empty ``--history`` (which a ``Path`` made the current
    folder, read as a history) is refused by name."""
    pool, _, _ = _files(tmp_path)
    (tmp_path / "runs").mkdir()
    base = ("init", tmp_path / "x.db", "--task", "answers", "--pool", pool, "--target", "pool",
            "--surrogate", "history", "--no-progress")
    typed = f"{tmp_path}/runs/*/"
    out = " ".join(cli(*base, "--history", typed, code=2).split())
    assert f"{typed}: no such file or folder (no file matches this pattern" in out, out
    out = " ".join(cli(*base, "--history", "", code=2).split())
    assert out == "error: --history is empty: name a response matrix, a folder of runs or " \
                  "a glob pattern", out
    assert not (tmp_path / "x.db").exists()
