"""``import`` of a hand-made label sheet keyed by ids that are only row numbers ("joins
never guess"): a sheet of ``item_id,label`` rows (no ``content_check``, no cell of the
item's text) keyed by whole numbers, on a pool whose ids are 0..N-1 (pandas' index), is
refused before any label is written unless ``import --ids-are-positions`` or the
session's ``init`` confirmed such a join; a sheet that carries the items' text, or a
``content_check`` (every export), or the dataset's own ids, imports as before (real CLI,
real files, real SQLite; docs/history.md "Ids that are only positions")."""

from __future__ import annotations

import csv
import re
import shutil
import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from session_support import PoolFiles, make_pool_files, run_cli_process

from activetest.formats.label_records import content_check
from activetest.session.store import SessionError
from activetest.session.workflow import Session

N = 60
OLD = Path(__file__).parent / "data" / "old"


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=200)


def _numbered(root: Path) -> PoolFiles:
    """The session tests' pool and tables with their ids "r0".."r59" made 0..59."""
    pf = make_pool_files(root, n=N)
    for f in (pf.pool, pf.surrogate, pf.target):
        f.write_text(re.sub(r"^r(\d+),", r"\1,", f.read_text(), flags=re.M))
    return pf


def _checked(pf: PoolFiles) -> tuple[Path, Path]:
    """The tables as Parquet with a content_check column (as `activetest score` writes
    them): ``init`` joins them by their checks, so nothing confirms positions there."""
    with pf.pool.open(newline="", encoding="utf-8") as f:
        texts = [r["text"] for r in csv.DictReader(f)]
    out = []
    for t in (pf.surrogate, pf.target):
        with t.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        path = t.with_suffix(".parquet")
        pq.write_table(pa.table({
            "id": [r["id"] for r in rows],
            "negative": [float(r["negative"]) for r in rows],
            "positive": [float(r["positive"]) for r in rows],
            "content_check": [content_check({"text": x}) for x in texts]}), path)
        out.append(path)
    return out[0], out[1]


def _session(tmp_path: Path, *extra: object) -> tuple[Path, PoolFiles, list[str]]:
    """A session on the numbered pool (tables confirmed by content, nothing confirmed as
    positions), 6 items drawn; returns it, the files and the drawn ids."""
    pf = _numbered(tmp_path / "d")
    sur, tgt = _checked(pf)
    db = tmp_path / "s.db"
    cli("init", db, "--task", "sst2", "--pool", pf.pool, "--id-column", "id", "--surrogate",
        f"table:{sur}", "--target", f"table:{tgt}", "--seed", "1", "--no-progress", *extra)
    cli("select", db, "--n", "6")
    with Session.open(db) as s:
        drawn = [a.item_id for a in s.acquisitions()]
    return db, pf, drawn


def _sheet(path: Path, ids: list[str], texts: list[str] | None = None) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "label"] if texts is None else ["item_id", "text", "label"])
        for k, i in enumerate(ids):
            w.writerow([i, "positive"] if texts is None else [i, texts[k], "positive"])
    return path


def _texts(pf: PoolFiles) -> dict[str, str]:
    with pf.pool.open(newline="", encoding="utf-8") as f:
        return {r["id"]: r["text"] for r in csv.DictReader(f)}


def _labels(db: Path) -> int:
    with sqlite3.connect(db) as c:
        return int(c.execute("SELECT COUNT(*) FROM labels").fetchone()[0])


def test_a_hand_made_sheet_keyed_by_row_numbers_is_refused_naming_file_row_item_and_sides(
        tmp_path: Path) -> None:
    db, pf, drawn = _session(tmp_path)
    sheet = _sheet(tmp_path / "hand.csv", drawn)
    before = db.read_bytes()
    out = cli("import", db, sheet, code=2)
    assert out.count("error:") == 1, out
    whole = sorted(drawn, key=int)
    text = _texts(pf)[drawn[0]][:57]
    assert (f"hand.csv, line 2: its item ids and the pool's look like row numbers "
            f"(positions), not ids (the pool's: '0'..'59', 60 ids, every whole number from "
            f"0; the sheet's: {whole[0]!r}..{whole[-1]!r}, 6 ids, ") in out, out
    assert (f"its label would go to pool item {drawn[0]!r} ('{text}") in out, out
    assert "Nothing was imported" in out and "--ids-are-positions confirms the join" in out
    assert _labels(db) == 0 and db.read_bytes() == before  # nothing written
    # the Python API: the same rule and keyword
    with Session.open(db) as s, pytest.raises(SessionError, match="look like row numbers"):
        s.import_file(sheet)
    assert _labels(db) == 0
    with Session.open(db) as s:
        r = s.import_file(sheet, ids_are_positions=True)
        assert r.added == 6 and r.position_note is not None


def test_confirmed_by_the_flag_the_labels_are_imported_and_the_join_said(
        tmp_path: Path) -> None:
    db, _, drawn = _session(tmp_path)
    out = cli("import", db, _sheet(tmp_path / "hand.csv", drawn), "--ids-are-positions")
    assert ("note: " + str(tmp_path / "hand.csv") + ": labels joined by ids that look like "
            "row numbers (the pool's: '0'..'59', 60 ids, every whole number from 0;") in out
    assert "as --ids-are-positions confirms" in out and "imported 6 new label(s)" in out, out
    assert _labels(db) == 6


def test_a_sheet_with_the_items_text_is_confirmed_by_it(tmp_path: Path) -> None:
    """The text column is compared with the pool's: equal, the labels are imported, no
    flag; a sheet of a shuffled copy (another item's text under the id) is refused."""
    db, pf, drawn = _session(tmp_path)
    texts = _texts(pf)
    out = cli("import", db, _sheet(tmp_path / "text.csv", drawn, [texts[i] for i in drawn]))
    assert "imported 6 new label(s)" in out and "row numbers" not in out, out
    db2, _, drawn2 = _session(tmp_path / "b")
    other = [texts[str((int(i) + 1) % N)] for i in drawn2]  # a shuffled copy's rows
    out = cli("import", db2, _sheet(tmp_path / "moved.csv", drawn2, other), code=2)
    assert "were the ids taken from another file or row order?" in out, out
    assert _labels(db2) == 0


def test_a_session_whose_init_confirmed_positions_takes_the_sheet_and_says_so(
        tmp_path: Path) -> None:
    pf = _numbered(tmp_path / "d")
    db = tmp_path / "s.db"
    cli("init", db, "--task", "sst2", "--pool", pf.pool, "--id-column", "id", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--seed", "1",
        "--no-progress", "--ids-are-positions")
    cli("select", db, "--n", "4")
    with Session.open(db) as s:
        drawn = [a.item_id for a in s.acquisitions()]
    out = cli("import", db, _sheet(tmp_path / "hand.csv", drawn))
    assert ("as the session's init (--ids-are-positions, for its surrogate predictions) "
            "confirms") in out and "imported 4 new label(s)" in out, out


def test_exported_sheets_real_ids_and_old_sessions_are_unaffected(tmp_path: Path) -> None:
    db, _, _ = _session(tmp_path)
    sheet = tmp_path / "out.csv"
    cli("export", db, "--out", sheet)  # carries content_check
    with sheet.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with sheet.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows({**r, "label": "positive"} for r in rows)
    out = cli("import", db, sheet)
    assert "imported 6 new label(s)" in out and "row numbers" not in out, out
    # the dataset's own ids ("r0".."r59"): a hand-made sheet joins by id, as before
    pf = make_pool_files(tmp_path / "t", n=N)
    db2 = tmp_path / "t.db"
    cli("init", db2, "--task", "sst2", "--pool", pf.pool, "--id-column", "id", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--no-progress")
    cli("select", db2, "--n", "3")
    with Session.open(db2) as s:
        ids = [a.item_id for a in s.acquisitions()]
    out = cli("import", db2, _sheet(tmp_path / "own.csv", ids))
    assert "imported 3 new label(s)" in out and "row numbers" not in out, out
    # an old session file (schema 1) takes its exported, labelled sheet back
    old = tmp_path / "old.db"
    shutil.copyfile(OLD / "schema1_ce_both.db", old)
    back = tmp_path / "back.csv"
    cli("export", old, "--which", "labelled", "--out", back)
    out = cli("import", old, back)
    assert "already present" in out and "row numbers" not in out, out
