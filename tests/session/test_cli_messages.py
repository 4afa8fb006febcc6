"""The CLI's refusals of bad input say what was wrong in one message (exit 2, no
traceback), naming the option, the file and what to give instead."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from session_support import PoolFiles, run_cli, tmpfs

from activetest.session.store import SessionReadOnlyError
from activetest.session.workflow import Session


def refused(*args: object) -> str:
    """``activetest ARGS``, refused: its one message, whitespace folded."""
    out = run_cli(*args, code=2)
    assert out.count("error:") == 1, out
    return " ".join(out.split())


def _drawn_sheet(pool_files: PoolFiles, tmp_path: Path
                 ) -> tuple[Path, Path, list[dict[str, str]]]:
    """A ``table:`` session ``s.db`` (task demo, seed 5) with 3 draws written to
    ``sheet.csv`` by ``select --out``: the session, the sheet and its rows."""
    db, sheet = tmp_path / "s.db", tmp_path / "sheet.csv"
    run_cli("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
            "--id-column", "id", "--seed", "5", "--no-progress")
    run_cli("select", db, "--n", "3", "--out", sheet)
    return db, sheet, list(csv.DictReader(sheet.open(newline="", encoding="utf-8")))


def test_a_graded_tasks_target_on_a_classification_task_says_what_it_takes(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: ``--target answers:nope.jsonl`` on a classification task was read as a table's
    path ("answers:nope.jsonl: no such file or folder (given as the prediction table,
    table:FILE)"), and ``--target pool`` as a model ("'pool' is not a bundled model").
    Both are graded tasks' targets: the message says so and what a classification target
    is, before anything is read."""
    db = tmp_path / "s.db"
    base = ("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--id-column", "id", "--no-progress")
    for target in ("answers:nope.jsonl", f"answers:{pool_files.target}", "pool", "lm-eval"):
        out = refused(*base, "--target", target)
        assert f"error: {target}: " in out and "is a target of graded tasks" in out, out
        assert "task 'demo' is a classification task" in out, out
        assert "table:FILE" in out and "smollm2-135m" in out, out
        assert "prediction table" not in out and "not a bundled model" not in out, out
    out = refused(*base, "--target", f"table:{pool_files.target}", "--compare",
                  "answers:other.jsonl")
    assert "error: answers:other.jsonl: an answer log (answers:FILE) is a target of graded " \
           "tasks" in out, out
    assert not db.exists()
    # a file named like a keyword is still that file
    monkeypatch.chdir(tmp_path)
    Path("pool").write_text("x")
    out = refused(*base, "--target", "pool")
    assert "graded tasks" not in out and "cannot tell which backend serves 'pool'" in out, out


def test_a_pool_pattern_that_matches_nothing_says_so_with_its_folder(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: ``--pool 'r2/*.csv' --id-column id`` whose pattern matches nothing said "an
    lm-eval samples pool takes no --id-column"; without --id-column "the pattern matches
    no file". Both now say no file matches the pattern, and in which folder it looked
    (and that the folder does not exist, where it does not)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r3").mkdir()
    base = ("init", tmp_path / "s.db", "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
            "--no-progress")
    for extra in (("--id-column", "id"), ("--label-column", "label"), ()):
        out = refused(*base, "--pool", "r2/*.csv", *extra)
        assert f"error: r2/*.csv: no file matches the pattern (looked in the folder " \
               f"{tmp_path.resolve() / 'r2'}, which does not exist)" in out, out
        out = refused(*base, "--pool", "r3/*.csv", *extra)
        assert f"error: r3/*.csv: no file matches the pattern (looked in the folder " \
               f"{tmp_path.resolve() / 'r3'})" in out, out
        assert "takes no" not in out, out
    assert not (tmp_path / "s.db").exists()


def test_a_pool_pattern_of_tables_is_refused_as_not_samples_files(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: ``--pool 'r3/*.csv'`` matching CSV files was read as lm-eval samples files:
    "r3/a.csv: line 1: not valid JSON", and with --id-column "an lm-eval samples pool
    takes no --id-column". A pattern pool is read as samples files; a matched file that
    is not one (a CSV, a JSON Lines table, lm-eval's results_<date>.json beside the
    samples) is refused by name, saying a table pool is one file. A samples file renamed
    (by its content) still reads through a pattern."""
    from activetest.data.pool import load_pool

    monkeypatch.chdir(tmp_path)
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    r3, r4 = tmp_path / "r3", tmp_path / "r4"
    r3.mkdir()
    r4.mkdir()
    for name in ("a.csv", "b.csv"):
        shutil.copy(pool_files.pool, r3 / name)
    (r3 / "t.jsonl").write_text('{"id": "x", "text": "fine", "label": "positive"}\n')
    shutil.copy(samples, r4 / samples.name)
    (r4 / "results_2026-11-30T12-00-00.json").write_text('{"results": {}}\n')
    base = ("init", tmp_path / "s.db", "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
            "--no-progress")
    tail = ("is not one; a table pool (CSV, TSV, JSONL, JSON, Parquet, FPB) is one file: "
            "give the file itself, e.g. {f}, or join the files into one")
    for extra in (("--id-column", "id"), ("--label-column", "label"), ()):
        out = refused(*base, "--pool", "r3/*.csv", *extra)
        assert "error: r3/*.csv: a pattern pool is read as lm-eval --log_samples files " \
               "(samples_<task>_<date>.jsonl), and r3/a.csv (of the 2 files it matches) " \
               + tail.format(f="r3/a.csv") in out, out
        assert "takes no" not in out and "valid JSON" not in out, out
    out = refused(*base, "--pool", "r3/t.js?nl")
    assert "error: r3/t.js?nl: a pattern pool is read as lm-eval --log_samples files " \
           "(samples_<task>_<date>.jsonl), and r3/t.jsonl (the one file it matches) " \
           + tail.format(f="r3/t.jsonl") in out, out
    out = refused(*base, "--pool", "r4/*")
    assert "and r4/results_2026-11-30T12-00-00.json (of the 2 files it matches) is not " \
           "one" in out, out
    assert not (tmp_path / "s.db").exists()
    # samples files by name or by content still read through a pattern
    (r4 / "results_2026-11-30T12-00-00.json").unlink()
    shutil.copy(samples, r4 / "renamed.jsonl")
    (r4 / samples.name).unlink()
    assert [it.id for it in load_pool("r4/*.jsonl", task="sst2")] == \
        [it.id for it in load_pool(samples, task="sst2")]


def test_a_pattern_with_a_bracket_class_is_one_pattern_for_pool_and_table(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the pool reader counted only ``*`` and ``?`` as glob characters, the lm-eval
    reader ``[`` too (:mod:`activetest.formats.globs` is now both's rule): ``--pool
    'r/samples_..._0[0-9].jsonl'`` was "no such file or folder (no file matches this
    pattern ...)" while ``table:`` of the same pattern read its file. A file that exists
    under the exact name given wins over the pattern: ``pool[1].csv`` is that file, not
    ``pool1.csv``."""
    from activetest.data.pool import load_pool
    from activetest.formats.lmeval import lmeval_files

    monkeypatch.chdir(tmp_path)
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    (tmp_path / "r").mkdir()
    shutil.copy(samples, tmp_path / "r" / samples.name)
    (tmp_path / "r" / "notes.txt").write_text("not matched\n")
    pattern = "r/samples_sst2_2026-11-30T12-00-0[0-9].jsonl"
    out = run_cli("init", tmp_path / "s.db", "--pool", pattern, "--task", "sst2",
                  "--surrogate", f"table:{pattern}", "--target", f"table:{pattern}",
                  "--seed", "3", "--no-progress")
    assert "created session" in out and "20 items" in out, out
    with Session.open(tmp_path / "s.db") as s:
        assert s.n_items == 20
    assert [it.id for it in load_pool(pattern, task="sst2")] == \
        [it.id for it in load_pool(samples, task="sst2")]
    # an existing file of the exact name wins over the pattern, in both readers
    (tmp_path / "p").mkdir()
    shutil.copy(pool_files.pool, tmp_path / "p" / "pool[1].csv")
    (tmp_path / "p" / "pool1.csv").write_text("not,the,pool\n")
    out = run_cli("init", tmp_path / "t.db", "--pool", "p/pool[1].csv", "--task", "demo",
                  "--surrogate", f"table:{pool_files.surrogate}", "--target",
                  f"table:{pool_files.target}", "--id-column", "id", "--no-progress")
    assert "created session" in out and "60 items" in out, out
    shutil.copy(samples, tmp_path / "r" / "samples_sst2_[1].jsonl")
    assert lmeval_files("r/samples_sst2_[1].jsonl") == [Path("r/samples_sst2_[1].jsonl")]


def test_a_missing_history_file_is_said_naming_the_option(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a missing ``--history`` file was "nope.csv: no such file or folder (given as
    the response matrix)", naming no option (and a missing log "--history: no such
    harness log file: nope.jsonl"); it is now said as every missing input is
    (:func:`activetest.formats.tables.missing_file`), naming --history, whatever the
    path looks like."""
    monkeypatch.chdir(tmp_path)
    base = ("init", tmp_path / "s.db", "--pool", pool_files.pool, "--task", "demo",
            "--surrogate", f"table:{pool_files.surrogate}", "--target",
            f"table:{pool_files.target}", "--id-column", "id", "--metric", "error_rate",
            "--no-progress")
    said = "given as the other models' results, --history)"
    for given in ("nope.csv", "nope.jsonl", "nofolder", "nope.parquet"):
        out = refused(*base, "--history", given)
        assert f"error: {given}: no such file or folder ({said}" in out, out
    assert not (tmp_path / "s.db").exists()
    # an lm-eval session's --history (other models' lm-eval runs) says it in the same
    # words (QA: "--history nope: no such file or folder", "--history runs/*: the pattern
    # matches nothing"); a pattern, as a missing pattern is said everywhere
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    (tmp_path / "run").mkdir()
    shutil.copy(samples, tmp_path / "run" / samples.name)
    lmeval = ("init", tmp_path / "s.db", "--pool", "run/", "--task", "answers", "--target",
              "lm-eval", "--surrogate", "history", "--seed", "3", "--no-progress")
    for given in ("nofolder", "nope.jsonl"):
        out = refused(*lmeval, "--history", given)
        assert f"error: {given}: no such file or folder ({said}" in out, out
    for given in ("runs/*", "run/samples_[xy]*.jsonl"):
        out = refused(*lmeval, "--history", given)
        assert f"error: {given}: no such file or folder (no file matches this pattern: the " \
               f"shell passed it on as it is; {said}" in out, out
    assert not (tmp_path / "s.db").exists()


#: The store's words for a session file that cannot be written (``select`` says them).
READ_ONLY = ("the session file is read-only (the file, its folder or its disk cannot be "
             "written)")


def test_import_and_serve_refuse_a_read_only_session_before_any_work(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """On a read-only session (a real tmpfs remounted read-only: root writes read-only
    files; skipped where none can be mounted) ``import`` refused only after reading the
    file (QA: a sheet's problems were said first, then, fixed, "read-only"); it now
    refuses before, in select's words, as ``serve`` does (before it listens)."""
    db, sheet, rows = _drawn_sheet(pool_files, tmp_path)
    for r in rows:
        r["label"] = "maybe"  # no class: a problem of the file, said after the refusal
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    assert "unknown label 'maybe'" in refused("import", db, sheet)
    with tmpfs(4096) as mnt:
        ro = mnt / "s.db"
        shutil.copy(db, ro)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        said = refused("select", ro, "--n", "1")
        assert f"error: {ro}: {READ_ONLY}" in said, said
        for args in (("import", ro, sheet), ("import", ro, tmp_path / "none.csv"),
                     ("serve", ro, "--port", "0")):
            out = refused(*args)
            assert f"error: {ro}: {READ_ONLY}" in out, (args, out)
            assert "maybe" not in out and "labelling page:" not in out, (args, out)
        with Session.open(ro) as s, pytest.raises(SessionReadOnlyError, match=re.escape(READ_ONLY)):
            s.import_file(sheet)  # Python too: refused before the file is read


def test_emitting_the_waiting_draws_of_a_read_only_lmeval_session_draws_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``select --emit lm-eval --n 0`` writes the samples file of the draws still waiting
    for a run and changes nothing in the session, so it works on a read-only session (a
    real tmpfs remounted read-only; skipped where none can be mounted): the file lists
    the pending draws, the session file's bytes stay, and the message says no item was
    drawn (it said "selected 0 item(s)"); drawing one more is refused, read-only."""
    import hashlib
    import json

    monkeypatch.chdir(tmp_path)
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    (tmp_path / "run").mkdir()
    shutil.copy(samples, tmp_path / "run" / samples.name)
    db = tmp_path / "le.db"
    run_cli("init", db, "--pool", "run/", "--task", "answers", "--target", "lm-eval",
            "--surrogate", "pool-run", "--seed", "3", "--no-progress")
    run_cli("select", db, "--n", "3", "--emit", "lm-eval", "--out", tmp_path / "s1.json")
    first = json.loads((tmp_path / "s1.json").read_text())
    with tmpfs(4096) as mnt:
        ro = mnt / "le.db"
        shutil.copy(db, ro)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        before = hashlib.sha256(ro.read_bytes()).hexdigest()
        out = " ".join(run_cli("select", ro, "--n", "0", "--emit", "lm-eval", "--out",
                               tmp_path / "s0.json").split())
        assert "drew no item (--n 0; the session is unchanged); wrote the 3 drawn item(s) " \
               "that still wait for a run" in out, out
        assert "selected" not in out, out
        assert json.loads((tmp_path / "s0.json").read_text()) == first
        assert hashlib.sha256(ro.read_bytes()).hexdigest() == before
        with Session.open(ro) as s:
            assert s.store.n_acquired() == 3 and len(s.pending()) == 3
        said = refused("select", ro, "--n", "1", "--emit", "lm-eval", "--out",
                       tmp_path / "s2.json")
        assert f"error: {ro}: {READ_ONLY}" in said, said
        assert not (tmp_path / "s2.json").exists()


def test_a_blank_annotator_cell_is_counted_as_naming_no_annotator(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: an annotator cell of whitespace only names no one for the label checks and
    the votes kept for agreement, but ``import`` counted it as a name: of a sheet
    labelled by alice and two blank cells, it kept 1 label for agreement and said
    nothing of the other 2; it now says they name no annotator."""
    db, sheet, rows = _drawn_sheet(pool_files, tmp_path)
    for r, who in zip(rows, ("alice", "  ", "\t"), strict=True):
        r["label"], r["annotator"] = "positive", who
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = " ".join(run_cli("import", db, sheet).split())
    assert "imported 3 new label(s)" in out and "kept 1 annotator label(s)" in out, out
    assert "note: 2 label(s) name no annotator" in out and "blank annotator cell" in out, out
