"""The gunzipped copy of a ``.parquet.gz`` pool that a streamed ``init`` reads, and the
removal of one that a killed ``init`` left.

A gzipped Parquet pool is read from a hidden copy beside the session file
(``.<session>.pool-pid<pid>.<random>.parquet``, as large as the pool's Parquet bytes:
:func:`activetest.session.stream_init._readable_pool`), removed when ``init`` ends. A
``kill -9`` (or the out-of-memory killer, a power loss) of that ``init`` leaves it. The
copy names its writer's pid and is held under an exclusive ``flock`` for as long as it
is in use, so the next ``init`` of any session in that folder, and any command that
opens one there (:meth:`~activetest.session.store.SessionStore.open`), removes exactly
the copies whose writer is gone -- its pid not running here, and the lock free (a live
writer in another pid namespace sharing the folder, a container, still holds it) -- and
says so (a ``note:`` line: the file, its size, the process that left it).

Copies named the old way (``.<session>.pool-<random>.parquet``: no pid, no lock; the
activetest of 2026-12-07 09:44 to 10:07 UTC made them) cannot name their writer. Such a
copy was read only while its ``init`` ran: written whole first, then read by that
``init`` while it built ``.<session>.creating-<pid>`` (seconds apart). So one is removed
(and said) only when all of these hold: no ``.<session>.creating-*`` file is beside it
(of any process, live or not: a dead one's is removed by the next ``init`` of that
session, and the copy after it); it has not been written to for
:data:`OLD_COPY_AGE_S`; and no process here has it open (``/proc``, where there is one).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from activetest._tmpfiles import pid_alive

__all__ = ["pool_copy", "sweep_pool_copies"]

# mkstemp's random part is letters, digits and "_"
_COPY_RE = re.compile(r"^\..+\.pool-pid(\d+)\.[A-Za-z0-9_]+\.parquet$")
# the old way (before the pid was in the name): the session's name, then the random part
_OLD_COPY_RE = re.compile(r"^\.(.+)\.pool-(?!pid\d+\.)[A-Za-z0-9_]+\.parquet$")

#: An old-named copy (no pid in its name) is removed only when it has not been written to
#: for this many seconds (its ``init`` stopped writing it seconds before it made its
#: ``.<session>.creating-<pid>`` file, which keeps the copy while it lasts).
OLD_COPY_AGE_S = 600.0


def _lock(fd: int, *, wait: bool) -> bool:
    """An exclusive ``flock`` on ``fd``: whether it is held (without ``wait``, False where
    another open file holds it). Where there is no ``flock`` (Windows: an open file
    cannot be removed there anyway), True."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks: the pid alone decides
        return True
    return True


@contextlib.contextmanager
def pool_copy(session: Path) -> Iterator[tuple[Path, IO[bytes]]]:
    """A new hidden copy file beside the session file ``session`` for a gzipped Parquet
    pool's gunzipped bytes: yields ``(its path, a binary writer)``, the file locked
    (exclusive ``flock``) and named by this process's pid until the block ends, when it
    is removed. A supervising parent removes it too should this process die by a signal
    (:func:`activetest.supervise.note`). Raises OSError where the file cannot be made."""
    from activetest.supervise import note

    fd, name = tempfile.mkstemp(dir=session.parent, suffix=".parquet",
                                prefix=f".{session.name}.pool-pid{os.getpid()}.")
    out = Path(name)
    try:
        _lock(fd, wait=True)
        note(event="pool copy", tmp_files=[name])
        with open(fd, "wb", closefd=False) as sink:
            yield out, sink
    finally:
        with contextlib.suppress(OSError):
            out.unlink()
        os.close(fd)  # (the lock goes with it)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,}-byte"


def _open_here(st: os.stat_result) -> bool:
    """Whether a process here (other than this one) has the file ``st`` open, as far as
    ``/proc`` shows (False where there is no ``/proc``; another user's processes whose
    files cannot be listed are not seen)."""
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit() and int(d) != os.getpid()]
    except OSError:
        return False
    for pid in pids:
        try:
            fds = list(os.scandir(f"/proc/{pid}/fd"))
        except OSError:  # gone meanwhile, or another user's
            continue
        for fd in fds:
            try:
                other = os.stat(fd.path)
            except OSError:
                continue
            if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
                return True
    return False


def _old_copy_gone(entry: os.DirEntry[str], names: list[str], session: str) -> bool:
    """Whether the old-named copy ``entry`` (of the session named ``session``) is no
    live ``init``'s (the module docstring): no ``.<session>.creating-*`` beside it, not
    written to for :data:`OLD_COPY_AGE_S`, open in no process here."""
    if any(n.startswith(f".{session}.creating-") for n in names):
        return False
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or time.time() - st.st_mtime < OLD_COPY_AGE_S:
        return False
    return not _open_here(st)


def sweep_pool_copies(folder: str | os.PathLike[str]) -> list[tuple[Path, int, int]]:
    """Remove the copies of gzipped Parquet pools (:func:`pool_copy`) in ``folder`` whose
    writer is gone: its pid (in the name) runs no process here, and no one holds the
    file's lock (taken, without waiting, before the file is removed). A copy in use by a
    live ``init`` is never removed; an unreadable folder or file is passed over. Copies
    named the old way (no pid) are removed where no ``init`` of theirs can be running
    (the module docstring). Each removal is said (a :class:`UserWarning`: the CLI's
    ``note:`` line). Returns the removed ``(path, size in bytes, writer's pid)`` (pid 0:
    an old-named copy, whose writer is not known)."""
    removed: list[tuple[Path, int, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    names = [e.name for e in entries]
    for entry in entries:
        m = _COPY_RE.match(entry.name)
        if m is None:
            old = _OLD_COPY_RE.match(entry.name)
            if old is not None and _old_copy_gone(entry, names, old.group(1)):
                with contextlib.suppress(OSError):
                    size = entry.stat(follow_symlinks=False).st_size
                    os.unlink(entry.path)
                    removed.append((Path(entry.path), size, 0))
            continue
        if pid_alive(int(m.group(1))):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:  # gone meanwhile, a link, unreadable
            continue
        try:
            if not _lock(fd, wait=False):  # a live writer the pid does not show
                continue
            size = os.fstat(fd).st_size
            os.unlink(entry.path)
        except OSError:
            continue
        finally:
            os.close(fd)
        removed.append((Path(entry.path), size, int(m.group(1))))
    for path, size, pid in removed:
        who = (f"an `init` (process {pid}, no longer running) left when it was stopped"
               if pid else f"an `init` of an earlier activetest left (named without its "
               f"process; no `init` of that session runs, and the copy was not written to "
               f"for {OLD_COPY_AGE_S / 60:g} minutes)")
        warnings.warn(f"removed {path}, a {_size(size)} gunzipped copy of a "
                      f".parquet.gz pool that {who}", stacklevel=2)
    return removed
