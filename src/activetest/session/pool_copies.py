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
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from activetest._tmpfiles import pid_alive

__all__ = ["pool_copy", "sweep_pool_copies"]

# mkstemp's random part is letters, digits and "_"
_COPY_RE = re.compile(r"^\..+\.pool-pid(\d+)\.[A-Za-z0-9_]+\.parquet$")


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


def sweep_pool_copies(folder: str | os.PathLike[str]) -> list[tuple[Path, int, int]]:
    """Remove the copies of gzipped Parquet pools (:func:`pool_copy`) in ``folder`` whose
    writer is gone: its pid (in the name) runs no process here, and no one holds the
    file's lock (taken, without waiting, before the file is removed). A copy in use by a
    live ``init`` is never removed; an unreadable folder or file is passed over. Each
    removal is said (a :class:`UserWarning`: the CLI's ``note:`` line). Returns the
    removed ``(path, size in bytes, writer's pid)``."""
    removed: list[tuple[Path, int, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _COPY_RE.match(entry.name)
        if m is None or pid_alive(int(m.group(1))):
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
        warnings.warn(f"removed {path}, a {_size(size)} gunzipped copy of a "
                      f".parquet.gz pool that an `init` (process {pid}, no longer running) "
                      f"left when it was stopped", stacklevel=2)
    return removed
