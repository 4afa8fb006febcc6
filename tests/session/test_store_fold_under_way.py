"""The put-back check and a fold of the journal under way as it reads the file.

QA (the project's CI, 2026-12-07, under load): the labelling page's write was folding
its journal into the file as the test's reader noted the file after its own commit (its
fold held off); the page's fold then ended (its last pages, the truncate, the sync: the
file's times changed, its mark already the page's), and the reader's next read was
refused as "a copy of the file as it was before this command's last write". SQLite's
wal-index says when a fold is under way (:func:`fold_under_way`); a file read in a fold's
middle is not taken for a copy when that fold ends, and a file found changed while a fold
is under way is read again once it has ended.

The wal-index is read for real (a real fold cut off by a real write error); the moment
a fold is caught halfway cannot be made to happen on demand, so that one state is given
(a :class:`MainFileState` read "in a fold's middle") or, for the wait, the wal-index's
answer is.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from activetest.data.task import Item
from activetest.session import store_journal
from activetest.session.store import SessionStore
from activetest.session.store_journal import fold_under_way, journal_put_back, main_file_state
from activetest.session.store_marks import read_mark

ITEMS = [Item(f"i{k}", {"text": f"text {k}"}, None) for k in range(6)]
EXAMPLES = [Item("e0", {"text": "good"}, 1), Item("e1", {"text": "bad"}, 0)]

#: A child that writes past the file's end and folds with its file size limit at the
#: file's size: the fold's first writes land, one past the end fails (EFBIG), and the
#: fold is cut off: SQLite's wal-index keeps "frames begun" above "frames copied".
_CUT_OFF_FOLD = r"""
import os, resource, signal, sqlite3, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
db = sys.argv[1]
c = sqlite3.connect(db, isolation_level=None)
c.execute("PRAGMA wal_autocheckpoint = 0")
c.execute("CREATE TABLE scratch (x)")
c.execute("INSERT INTO scratch VALUES (?)", (b"x" * 200000,))
resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(db), resource.RLIM_INFINITY))
try:
    c.execute("PRAGMA wal_checkpoint(PASSIVE)")
except sqlite3.Error as exc:
    print("cut off:", exc)
"""


def _store(tmp_path: Path) -> SessionStore:
    return SessionStore.create(tmp_path / "s.db", config={"metric": "log_loss", "seed": 3},
                               items=ITEMS, examples=EXAMPLES)


def test_the_wal_index_says_when_a_fold_is_cut_off_and_when_one_has_ended(
        tmp_path: Path) -> None:
    st = _store(tmp_path)
    keep = sqlite3.connect(st.path)  # (so that the child's close is not the last one)
    try:
        with st.transaction():
            pass
        assert not fold_under_way(st.path)  # every fold ended
        assert not main_file_state(st.path).folding  # type: ignore[union-attr]
        got = subprocess.run([sys.executable, "-c", _CUT_OFF_FOLD, str(st.path)],
                             capture_output=True, text=True, timeout=60)
        assert "cut off:" in got.stdout, (got.stdout, got.stderr)
        assert fold_under_way(st.path)
        assert main_file_state(st.path).folding  # type: ignore[union-attr]
        with st.transaction():  # this store's fold copies the rest
            pass
        assert not fold_under_way(st.path)
    finally:
        keep.close()
        st.close()
    assert not fold_under_way(tmp_path / "none.db")  # no wal-index: nothing under way


def test_a_file_read_in_a_folds_middle_is_not_taken_for_a_copy_when_the_fold_ends(
        tmp_path: Path) -> None:
    with _store(tmp_path) as st:
        with st.transaction():
            pass
        seen = read_mark(st._conn)
        now = main_file_state(st.path)
        assert now is not None and now.mark == seen
        # read in the middle of a fold that has ended since: the fold's last writes (its
        # truncate, its sync) changed the file's times, its mark was already written
        mid = dataclasses.replace(now, mtime_ns=now.mtime_ns - 10**6, folding=True)
        assert journal_put_back(st.path, mid, seen) == ("", now)
        # the same change with no fold under way is no fold's: a copy put over the file
        why, gone = journal_put_back(st.path, dataclasses.replace(mid, folding=False), seen)
        assert why.startswith("a copy of this session's file put over it") and gone is None


def test_a_file_changed_while_a_fold_is_under_way_is_read_again_once_it_has_ended(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    st = _store(tmp_path)
    try:
        with st.transaction():
            pass
        seen = read_mark(st._conn)
        before = main_file_state(st.path)
        assert before is not None and seen is not None and before.mark == seen
        ended = threading.Event()

        def another_writer() -> None:  # its fold: the first pages, then the mark's
            time.sleep(0.5)
            with SessionStore.open(st.path) as other, other.transaction():
                pass
            ended.set()

        # the fold's first pages written (the file's times change), its mark's not yet
        os.utime(st.path, ns=(before.mtime_ns + 10**6, before.mtime_ns + 10**6))
        monkeypatch.setattr(store_journal, "fold_under_way", lambda p: not ended.is_set())
        writer = threading.Thread(target=another_writer)
        writer.start()
        try:
            why, now = journal_put_back(st.path, before, seen)
        finally:
            writer.join()
        assert why == "" and now is not None and now.mark is not None
        assert now.mark.count == seen.count + 1  # read after the fold: moved forward
    finally:
        st.close()


def test_a_cut_off_fold_delays_the_judgment_by_at_most_the_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fold cut off stays "under way" until the next one: the check waits for it at
    most :data:`FOLD_WAIT_S`, then judges the file as it is (a copy: refused)."""
    monkeypatch.setattr(store_journal, "FOLD_WAIT_S", 0.3)
    monkeypatch.setattr(store_journal, "fold_under_way", lambda p: True)
    with _store(tmp_path) as st:
        with st.transaction():
            pass
        seen = read_mark(st._conn)
        before = main_file_state(st.path)
        assert before is not None
        os.utime(st.path, ns=(before.mtime_ns + 10**6, before.mtime_ns + 10**6))  # a copy
        why, _ = journal_put_back(st.path, dataclasses.replace(before, folding=False), seen)
        assert why.startswith("a copy of this session's file put over it")


def test_a_file_whose_mark_cannot_be_read_is_refused_but_in_a_folds_middle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file changed since this store's commit whose mark cannot be read (a copy cut
    short: its first half) with no fold under way is content put back, refused (QA: it
    was "cannot tell", and let through); where a fold is under way still (one cut off,
    after the wait) the file is in that fold's middle, and it cannot be told."""
    monkeypatch.setattr(store_journal, "FOLD_WAIT_S", 0.3)
    with _store(tmp_path) as st:
        with st.transaction():
            pass
        seen = read_mark(st._conn)
        before = main_file_state(st.path)
        assert before is not None and before.mark == seen
        cut = tmp_path / "cut.db"  # (the state is compared by size and times only)
        cut.write_bytes(st.path.read_bytes()[:before.size // 2])
    cut_state = main_file_state(cut)
    assert cut_state is not None and cut_state.mark is None and not cut_state.folding
    why, gone = journal_put_back(cut, before, seen)
    assert "write mark cannot be read" in why and gone is None
    monkeypatch.setattr(store_journal, "fold_under_way", lambda p: True)  # one cut off
    why, now = journal_put_back(cut, before, seen)
    assert why == "" and now is not None and now.mark is None and now.folding

#: A child that tries to take the session file's write lock at once, and then to fold
#: its journal whole; prints what it got.
_OTHER_WRITER = r"""
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=0)
try:
    c.execute("BEGIN IMMEDIATE")
    c.execute("ROLLBACK")
    print("write lock: taken")
except sqlite3.OperationalError as exc:
    print("write lock:", exc)
busy = c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
print("fold:", "held off" if busy else "done")
"""


def _other_writer(p: Path) -> list[str]:
    got = subprocess.run([sys.executable, "-c", _OTHER_WRITER, str(p)],
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    return got.stdout.splitlines()


def test_reading_the_wal_index_keeps_this_processs_locks_on_it(tmp_path: Path) -> None:
    """QA (CI, 2026-12-08: two labelling servers on one file): the wal-index was read
    through a descriptor opened and closed, which dropped every SQLite lock this process
    held on it (POSIX locks go with any descriptor's close): inside a write transaction,
    another process then took the write lock too. Each read keeps them (the write lock,
    a reader's snapshot), for every store of this process on the file, until the last
    one closes."""
    st = _store(tmp_path)
    other = SessionStore.open(st.path)
    try:
        with st.transaction():
            assert _other_writer(st.path)[0] == "write lock: database is locked"
            fold_under_way(st.path)
            main_file_state(st.path)
            assert _other_writer(st.path)[0] == "write lock: database is locked"
        with st.reading() as conn:  # a snapshot held: the journal may not be emptied
            conn.execute("SELECT count(*) FROM meta").fetchone()
            with other.transaction():
                pass  # (a commit after the snapshot, in the journal)
            fold_under_way(st.path)
            assert _other_writer(st.path) == ["write lock: taken", "fold: held off"]
        with st.transaction():
            fold_under_way(st.path)
            other.close()  # the other store of this process on the file lets go: this
            fold_under_way(st.path)  # one's locks are still kept
            assert _other_writer(st.path)[0] == "write lock: database is locked"
    finally:
        other.close()
        st.close()
    assert _other_writer(st.path) == ["write lock: taken", "fold: done"]


def test_a_fold_between_the_times_and_the_mark_is_not_taken_for_a_copy_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA (CI, 2026-12-08, under load): the file's times were read before another
    process's fold and its mark after it; the next check found the times changed (by
    that fold) and the mark as noted, and refused "a copy put over it". The times are
    read around the mark, and read again where they moved. The other writer is real;
    only its moment (inside the mark's read) is chosen."""
    st = _store(tmp_path)
    try:
        with st.transaction():
            pass
        seen = read_mark(st._conn)
        real = store_journal.read_mark
        calls = []

        def read_during_a_fold(conn: sqlite3.Connection):  # type: ignore[no-untyped-def]
            if not calls:
                time.sleep(0.02)  # (the file's times move on: a coarse clock)
                with SessionStore.open(st.path) as other, other.transaction():
                    pass  # committed and folded whole: the file's times change
            calls.append(1)
            return real(conn)

        monkeypatch.setattr(store_journal, "read_mark", read_during_a_fold)
        noted = main_file_state(st.path)
        monkeypatch.setattr(store_journal, "read_mark", real)
        assert noted is not None and noted.mark is not None and seen is not None
        assert noted.mark.count == seen.count + 1
        assert journal_put_back(st.path, noted, seen) == ("", noted)
        assert os.stat(st.path).st_mtime_ns == noted.mtime_ns and len(calls) == 2
    finally:
        st.close()
