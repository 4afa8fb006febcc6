"""A backup copied over a session whose journal still held the last answer.

QA (2026-12-07, seen once under load): a backup copied over the session file while
``label`` ran was refused as "the session file is damaged (database disk image is
malformed)" instead of "content was replaced" with a sheet of what was saved: the answer
given before the copy was in neither the file nor a sheet. A reader holding a snapshot
(the labelling page, another command, a poll) as ``label`` committed the answer kept its
fold of the journal into the file from completing; the answer stayed in the ``-wal``,
which SQLite then read over the backup's pages (a mix that could pass for this session,
or read malformed), and the last connection to close folded it into the backup. Here the
snapshot is held on purpose: the run refuses its next answer as a file put back, the
answer is in the sheet beside it, the backup's content is untouched, and the old journal
is set aside (not folded into it).

Real files and a real ``label`` child; the snapshot is a real second connection.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from session_support import (
    PoolFiles,
    cli_command,
    cli_env,
    cli_session,
    count_rows,
    label_child,
    session_with_backup,
    wait_for_question,
)


def _first_answer_left_in_the_journal(proc: subprocess.Popen[str], db: Path
                                      ) -> list[tuple[str, int]]:
    """The ``label`` child ``proc`` answers its first question while a reader holds a
    snapshot from before it: the answer is saved, but its fold into the file is held off
    (it stays in the journal). Returns the labels then stored (item id, label)."""
    assert proc.stdin is not None
    wait_for_question(proc, "1/4")
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True,
                                            isolation_level=None)) as reader:
        reader.execute("BEGIN")  # a snapshot from before the answer, held
        assert reader.execute("SELECT COUNT(*) FROM labels").fetchone() == (0,)
        proc.stdin.write("1\n")  # the first answer: saved, but not folded in
        proc.stdin.flush()
        wait_for_question(proc, "2/4")
        assert os.path.getsize(f"{db}-wal") > 0  # the answer is in the journal
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            first = con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                                "ON i.idx = l.idx").fetchall()
        reader.execute("COMMIT")
    return [(str(i), int(v)) for i, v in first]


def _put_over_after_the_first_answer(db: Path, env: dict[str, str], src: Path
                                     ) -> tuple[list[tuple[str, int]], str, str]:
    """A ``label`` run on ``db`` answers its first question, left in the journal
    (:func:`_first_answer_left_in_the_journal`); ``src`` is then copied over ``db``
    (``cp``) and the run answers again. Returns the labels stored before the copy and the
    run's output and errors; the run refused (exit 2)."""
    proc = label_child(db, env)
    try:
        first = _first_answer_left_in_the_journal(proc, db)
        subprocess.run(["cp", str(src), str(db)], check=True)  # put over the file
        out, err = proc.communicate("2\n", timeout=60)  # the next answer
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, (out, err)
    return first, out, err


def test_a_backup_copied_over_an_answer_left_in_the_journal_is_refused_with_it_kept(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    env, db, backup = session_with_backup(pool_files, tmp_path)  # 4 draws, no label
    first, _, err = _put_over_after_the_first_answer(db, env, backup)
    assert len(first) == 1
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "content was replaced" in err and "an older state of this session" in err, err
    assert "damaged" not in err, err
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    assert str(sheet) in err
    with sheet.open(newline="", encoding="utf-8") as f:
        assert [(r["item_id"], int(r["label"])) for r in csv.DictReader(f)] == first
    # the backup's content, byte for byte: the old journal was not folded into it
    assert db.read_bytes() == backup.read_bytes()
    (aside,) = tmp_path.glob("s.db-wal.replaced-*")
    assert str(aside) in err and aside.stat().st_size > 0
    assert not os.path.exists(f"{db}-wal") or os.path.getsize(f"{db}-wal") == 0
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 4
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # the sheet puts the saved answer back
    got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        assert con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                           "ON i.idx = l.idx").fetchall() == first


def test_a_copy_written_to_elsewhere_as_often_is_refused_under_the_journal(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A copy of the session taken before ``label`` ran, written to elsewhere once (a
    label of another item), copied over the file while the run's first answer was still
    in the journal: its mark is as far forward as the run's commit, which a fold of the
    journal would give, but it is not that commit (its token). QA: taken for a fold,
    the next answer was said "saved" into a mix of the copy and the journal. Now it is
    refused as a copy written to elsewhere, the first answer in the sheet beside it."""
    from activetest.session.workflow import Session

    env = cli_env(tmp_path)
    db, copy = tmp_path / "s.db", tmp_path / "copy.db"
    cli_session(pool_files, db, env, 4)
    shutil.copyfile(db, copy)
    with Session.open(copy) as other:  # one write elsewhere: the last item labelled
        last = other.pending()[-1].item_id
        other.add_label(last, 0, source="api")
    first, _, err = _put_over_after_the_first_answer(db, env, copy)
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "content was replaced" in err and "written to elsewhere" in err, err
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    assert str(sheet) in err
    with sheet.open(newline="", encoding="utf-8") as f:
        assert [(r["item_id"], int(r["label"])) for r in csv.DictReader(f)] == first
    assert db.read_bytes() == copy.read_bytes()  # the copy's content, untouched
    assert count_rows(db, "labels") == 1 and count_rows(db, "acquisitions") == 4


def test_a_file_moved_forward_by_another_writer_under_the_journal_is_not_put_back(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The other side: this store's fold held off by a reader's snapshot, then another
    process writes the file (``select``, its fold complete: the file changed, its mark
    later): that is a fold moving the file forward, not a copy put back; this store's
    next writes are taken, and no sheet is written."""
    from activetest.session.workflow import Session

    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 3)
    s = Session.open(db)
    try:
        first, second, third = (a.item_id for a in s.pending())
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True,
                                                isolation_level=None)) as reader:
            reader.execute("BEGIN")
            reader.execute("SELECT COUNT(*) FROM labels").fetchone()
            s.add_label(first, 1, source="api")  # its fold held off
            assert os.path.getsize(f"{db}-wal") > 0
        subprocess.run(cli_command("select", str(db), "--n", "1"), env=env, check=True,
                       capture_output=True)  # another writer: the file moves forward
        s.add_label(second, 0, source="api")
        s.add_label(third, 1, source="api")
        assert s.labels() == {first: 1, second: 0, third: 1}
    finally:
        s.close()
    assert not list(tmp_path.glob("s.unsaved-*")) and not list(tmp_path.glob("*.replaced-*"))
    assert count_rows(db, "labels") == 3 and count_rows(db, "acquisitions") == 4


@pytest.mark.parametrize("kept", [0.0, 0.5])
def test_a_copy_cut_short_put_over_an_answer_left_in_the_journal_is_refused_with_it_kept(
        pool_files: PoolFiles, tmp_path: Path, kept: float) -> None:
    """A copy of the session cut short (``head -c N backup.db > s.db``: the first
    ``kept`` of its bytes) put over the file while the run's first answer was still in
    the journal: its write mark cannot be read, and no fold is under way. QA: that was
    "cannot tell", and let through: the next answer was said "saved" into a mix of the
    cut copy and the journal (which SQLite then read as malformed), or the run stopped
    with "the session file is damaged ... nothing was changed" and the first answer in
    neither the file nor a sheet. Now it is refused as content put back, the first
    answer in the sheet beside it, the cut copy untouched, the journal set aside."""
    env, db, backup = session_with_backup(pool_files, tmp_path)  # 4 draws, no label
    data = backup.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[:int(len(data) * kept)])
    first, _, err = _put_over_after_the_first_answer(db, env, cut)
    assert len(first) == 1
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "content was replaced" in err and "write mark cannot be read" in err, err
    assert "damaged" not in err, err
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    assert str(sheet) in err
    with sheet.open(newline="", encoding="utf-8") as f:
        assert [(r["item_id"], int(r["label"])) for r in csv.DictReader(f)] == first
    assert db.read_bytes() == cut.read_bytes()  # the cut copy, untouched
    (aside,) = tmp_path.glob("s.db-wal.replaced-*")
    assert str(aside) in err and aside.stat().st_size > 0
