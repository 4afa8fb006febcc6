"""A session file copied over while its journal still held this process's commit.

Each write of :class:`~activetest.session.store.SessionStore` is folded from the WAL
(``<file>-wal``) into the file as it commits; a reader holding an older snapshot (the
labelling page, another command, a poll) makes that fold incomplete, and the commit
stays in the journal. A backup copied over the file then (``cp backup.db s.db``: the
same file, its content replaced; the ``-wal`` and ``-shm`` beside it untouched) was read
with that journal's pages over its own: the put-back check
(:func:`~activetest.session.store_marks.check_mark`) read the mark this process had
written (in the journal) and let the next write through into a mix of both contents, or
SQLite found the mix malformed (QA: "the session file is damaged" instead of the
put-back refusal, and the label answered before the copy in neither the file nor a
sheet), and the last connection to close folded the old journal into the backup.

So where a fold was incomplete the store keeps the state of the file itself, read
without the journal (:class:`MainFileState`: its size and times, and its write mark),
and before its next write compares it with the file's now (:func:`journal_put_back`):
a file moved forward by a fold (another process's, or a later one of the journal's
commits: its mark later in the same session) is the journal's own; any other change (an
older mark, another session's, the same mark in a file written since: a copy of the
state it had) is content put back under the journal. The refusal then reads what the
file holds without the journal (:func:`main_only`), and the journal is set aside
(:func:`set_aside_journal`) so that no connection folds it into the new content.

A fold is not instant: SQLite writes the journal's pages into the file one by one
(the mark's page among the first), truncates it and syncs it. A file read while another
connection's fold was under way (:func:`fold_under_way`: SQLite's wal-index says so)
changes again as that fold ends, its mark already the fold's: that is the fold's own
change, not a copy (QA: under load, the labelling page's write, folding as the test's
reader noted the file, was taken for "a copy of the file as it was" and the reader's
next read refused); and a file read while a fold is under way is read again once it
has ended (at most :data:`FOLD_WAIT_S`: a fold cut off by a killed process stays
"under way" until the next one).

A file whose mark moved forward is a fold's only where it can be: a mark as far
forward as this store's commit in the journal is that commit's (its token); another
one there is a copy of this session written to elsewhere as many times, refused as
such (QA: it was taken for a fold, and the next write went into a mix of the copy and
the journal).

Not seen: a copy made within the file system's timestamp granularity of the fold (a
few milliseconds) with the same size and the same mark as the file had; a copy of this
session written to elsewhere more times than this store wrote (its mark beyond this
store's, as another process's later commit folded in makes it: telling them apart
would read the file's history, which a fold under way writes after the mark); a journal
another process left unfolded (that process sees it at its write); a connection of
another process that still holds the old journal open and folds it when it closes
last (the journal is emptied in place, so that fold finds no frame to copy).

The wal-index is read through one descriptor per file per process, opened the first
time and closed only when the last store of this process on the file has closed
(:func:`hold_wal_index`, :func:`release_wal_index`): SQLite's locks (a reader's
snapshot, the write lock, the fold's) are POSIX locks on that file, and closing any
descriptor of a file drops all of the process's locks on it (QA, CI 2026-12-08: the
check opened and closed the ``-shm`` to read it, inside the write transaction; the
other labelling server then wrote at the same time, and SQLite said "locking protocol"
or the check found the other's half-done work and refused a put-back that was none).
The file's times and its mark are read as one state only where its times did not change
around the mark's read (QA: the times read before another process's fold, the mark
after it, made the next check take that fold's own change for a copy).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from activetest.session.store_marks import WriteMark, mark_gap, read_mark

#: A file found changed and not moved forward is read again (up to this many times,
#: :data:`REREAD_S` apart) until its mark reads the same twice: read while another
#: process's fold was writing it, its page of the mark could still be the old one.
REREADS = 4
REREAD_S = 0.05
#: The longest wait for a fold under way to end before the file is judged as it is.
FOLD_WAIT_S = 5.0

#: SQLite's wal-index (the ``-shm`` file, native byte order): two copies of a 48-byte
#: header, then the checkpoint information, whose ``nBackfill`` (the journal's frames
#: copied into the file) is at byte 96 and ``nBackfillAttempted`` (the frames a fold
#: began to copy) at byte 128 (https://www.sqlite.org/walformat.html).
_SHM_BACKFILL = 96
_SHM_ATTEMPTED = 128

__all__ = ["FOLD_WAIT_S", "REREADS", "REREAD_S", "MainFileState", "fold_under_way",
           "hold_wal_index", "journal_put_back", "main_file_state", "main_only",
           "release_wal_index", "set_aside_journal"]


@dataclass(frozen=True)
class MainFileState:
    """A session file as it is without its journal, read after a commit whose fold was
    incomplete.

    Attributes:
        size: the file's size in bytes.
        mtime_ns: its modification time (ns).
        ctime_ns: its status change time (ns).
        mark: its write mark read without the journal (None: it could not be read).
        folding: whether a fold of the journal into the file was under way as it was
            read (:func:`fold_under_way`): its size and times were then those of the
            fold's middle, and change as the fold ends.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    mark: WriteMark | None
    folding: bool = False


class _WalIndexReaders:
    """The descriptors this process reads wal-indexes through: one per session file
    (its real path) that a store of this process holds (:func:`hold_wal_index`), opened
    at its first read and closed when the last holder lets go (:func:`release_wal_index`,
    after its SQLite connection is closed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, int] = {}
        self._fds: dict[str, int] = {}

    def hold(self, key: str) -> None:
        with self._lock:
            self._holders[key] = self._holders.get(key, 0) + 1

    def release(self, key: str) -> None:
        with self._lock:
            left = self._holders.get(key, 0) - 1
            if left > 0:
                self._holders[key] = left
                return
            self._holders.pop(key, None)
            fd = self._fds.pop(key, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def read(self, key: str, n: int) -> bytes | None:
        """The first ``n`` bytes of ``<key>-shm`` (None: it cannot be read); through the
        kept descriptor where the file is held, else through one opened and closed."""
        shm = f"{key}-shm"
        with self._lock:
            if key in self._holders:
                fd = self._fds.get(key)
                if fd is not None and _unlinked(fd):  # (the last connection removed it)
                    self._fds.pop(key)
                    with contextlib.suppress(OSError):
                        os.close(fd)
                    fd = None
                if fd is None:
                    try:
                        fd = self._fds[key] = os.open(shm, os.O_RDONLY)
                    except OSError:
                        return None
                try:
                    return os.pread(fd, n, 0)
                except OSError:
                    return None
        try:  # no store of this process has the file open: no lock of it to drop
            with open(shm, "rb") as f:
                return f.read(n)
        except OSError:
            return None


def _unlinked(fd: int) -> bool:
    try:
        return os.fstat(fd).st_nlink == 0
    except OSError:
        return True


_READERS = _WalIndexReaders()


def _key(p: str | os.PathLike[str]) -> str:
    return os.path.realpath(p)


def hold_wal_index(p: str | os.PathLike[str]) -> str:
    """Note that a store of this process has the session file ``p`` open (SQLite's locks
    on its wal-index are then this process's): its wal-index is read through a
    descriptor kept open until :func:`release_wal_index`. Returns the key to release."""
    key = _key(p)
    _READERS.hold(key)
    return key


def release_wal_index(key: str) -> None:
    """Let go of a hold of :func:`hold_wal_index` (after the store's SQLite connection is
    closed); the last one closes the descriptor."""
    _READERS.release(key)


def fold_under_way(p: Path) -> bool:
    """Whether a fold (SQLite's checkpoint) of the journal of the session file ``p`` into
    the file is under way now, by any connection of any process: its wal-index says a
    fold began to copy frames that are not all copied yet (``nBackfillAttempted`` above
    ``nBackfill``). Also True after a fold cut off (its process killed, a write error)
    until the next fold; False where there is no wal-index to read.

    Read without dropping this process's SQLite locks on the wal-index where a store of
    this process holds the file (:func:`hold_wal_index`)."""
    head = _READERS.read(_key(p), _SHM_ATTEMPTED + 4)
    if head is None or len(head) < _SHM_ATTEMPTED + 4:
        return False
    (done,) = struct.unpack_from("=I", head, _SHM_BACKFILL)
    (began,) = struct.unpack_from("=I", head, _SHM_ATTEMPTED)
    return began > done


@contextlib.contextmanager
def main_only(p: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the session file ``p`` that reads the file alone, not
    its journal (SQLite's ``immutable`` URI: no lock, no ``-wal``). Opened and closed
    through SQLite, so that the locks of this process's other connections to the file
    stay held (closing a raw descriptor of it would drop them)."""
    conn = sqlite3.connect(f"file:{quote(str(p.resolve()))}?mode=ro&immutable=1", uri=True,
                           isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def main_file_state(p: Path) -> MainFileState | None:
    """The state of the session file ``p`` without its journal (None: no file): its size
    and times read before and after its mark, as one state where they are the same (up
    to :data:`REREADS` more tries, :data:`REREAD_S` apart; a file that kept changing is
    noted as read in a fold's middle); a fold under way before or after is noted
    (:attr:`MainFileState.folding`)."""
    for tries in range(REREADS + 1):
        folding = fold_under_way(p)
        try:
            st = os.stat(p)
        except OSError:
            return None
        try:
            with main_only(p) as conn:
                mark = read_mark(conn)
        except sqlite3.Error:
            mark = None
        try:
            after = os.stat(p)
        except OSError:
            return None
        folding = folding or fold_under_way(p)
        steady = (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
            after.st_size, after.st_mtime_ns, after.st_ctime_ns)
        if steady or tries == REREADS:
            return MainFileState(after.st_size, after.st_mtime_ns, after.st_ctime_ns, mark,
                                 folding or not steady)
        time.sleep(REREAD_S)
    raise AssertionError("unreachable")  # pragma: no cover


#: :func:`journal_put_back`'s mark not read yet (None is a read that found none).
_UNREAD = object()
#: Why a file changed under the journal whose mark cannot be read is refused.
_UNREADABLE = ("content in which this session's write mark cannot be read (a copy cut "
               "short, or not a session file: the file rewritten since this "
               "command's last write, not by a fold of its journal)")


def journal_put_back(p: Path, before: MainFileState, seen: WriteMark | None
                     ) -> tuple[str, MainFileState | None]:
    """Whether the session file ``p`` was put back under the journal since ``before``
    (read after this store's last commit, whose fold was incomplete); ``seen``: the mark
    this store wrote then (in the journal).

    Only the file's size and times are read where they are as they were (the usual
    case: a few microseconds); its mark, where they are not.

    A file whose mark cannot be read (read twice, no fold under way) is content put back
    too: the mark is among the first pages a fold writes, and a file changed since
    ``before`` whose mark does not read with no fold under way is no state the journal's
    fold leaves (QA: a copy cut short, ``head -c N backup.db > s.db``, was taken as
    "cannot tell": the next answer was said "saved" into a mix of the cut copy and the
    journal, which SQLite then read as malformed, or the run stopped with "the session
    file is damaged ... nothing was changed" and the answer before the copy was in
    neither the file nor a sheet). Where a fold is under way still (after
    :data:`FOLD_WAIT_S`: one cut off by a killed process), an unreadable mark is the
    fold's middle, and cannot be told.

    Returns:
        ("", the file's state now) where the file is as it was, or moved forward by a
        fold (its mark later in the same session), or where it cannot be told (no file:
        the identity check says so; a mark that cannot be read in a fold's middle, or
        none read after this store's commit); else (why it is not, a phrase as
        :func:`~activetest.session.store_marks.check_mark` says it, None).
    """
    try:
        st = os.stat(p)
    except OSError:
        return "", before
    if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (before.size, before.mtime_ns,
                                                        before.ctime_ns):
        return "", before
    old = before.mark
    if old is None:
        return "", main_file_state(p)
    last: object = _UNREAD
    rereads = 0
    deadline = time.monotonic() + FOLD_WAIT_S
    while True:
        now = main_file_state(p)
        if now is None:
            return "", now
        if (now.mark is not None and now.mark.created == old.created
                and now.mark.count > old.count):
            if seen is not None and now.mark.count == seen.count and now.mark != seen:
                # as far forward as this store's own commit, but not it: a copy of this
                # session written to elsewhere as many times (QA: taken for a fold, the
                # next write went into a mix of the copy and the journal)
                return mark_gap(now.mark, seen), None
            return "", now  # folded forward (a commit of the journal, now in the file)
        if now.folding and time.monotonic() < deadline:
            last = _UNREAD  # a fold under way: read again once it has ended
            time.sleep(REREAD_S)
            continue
        if now.mark is None and now.folding:
            return "", now  # a fold cut off, its file in its middle: cannot be told
        if before.folding and now.mark == old:
            return "", now  # ``before`` was read in a fold's middle: its end changed it
        if now.mark == last or rereads >= REREADS:
            break  # the same twice: no fold was under way
        last = now.mark
        rereads += 1
        time.sleep(REREAD_S)
    if now.mark is None:
        return _UNREADABLE, None
    return mark_gap(now.mark, seen) or (
        "a copy of this session's file put over it (the file rewritten since this "
        "command's last write, not by a fold of its journal)"), None


def _aside_name(p: Path) -> Path:
    """A free name beside ``p`` for a journal set aside:
    ``<name>-wal.replaced-<UTC time>``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for k in range(1000):
        cand = p.with_name(f"{p.name}-wal.replaced-{stamp}{'' if k == 0 else f'-{k}'}")
        if not os.path.lexists(cand):
            return cand
    return p.with_name(f"{p.name}-wal.replaced-{stamp}-{os.getpid()}")


def set_aside_journal(p: Path) -> Path | None:
    """Copy the journal of the file ``p`` held before its content was put back to a name
    beside it (:func:`_aside_name`) and empty it in place, so that no connection (this
    one closing, or another process's) folds its pages into the content put back.
    Returns where it was kept (None: no journal, or it could not be copied: emptied
    all the same)."""
    wal = Path(f"{p}-wal")
    if not wal.is_file():
        return None
    kept: Path | None = _aside_name(p)
    try:
        shutil.copyfile(wal, kept)  # type: ignore[arg-type]
    except OSError:
        kept = None
    with contextlib.suppress(OSError):
        os.truncate(wal, 0)
    return kept
