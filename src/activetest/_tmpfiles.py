"""Temporary files that name their writer, so that what a dead writer left can be removed.

Every file (or folder) activetest writes is written whole to a hidden temporary file beside
it and renamed into place. The temporary name carries the writer's pid
(``.<name>.pid<pid>.<random>.tmp``): after a native crash or a ``kill -9`` the file
stays behind (a partial 253 MB model copy, a score chunk), and :func:`sweep_tmp`
removes exactly those whose writer is dead, never a live process's.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

__all__ = ["default_cache_dir", "pid_alive", "sweep_creating", "sweep_tmp", "tmp_prefix"]


def default_cache_dir() -> Path:
    """The per-user activetest cache root.

    ``$ACTIVETEST_CACHE`` if set, else ``$XDG_CACHE_HOME/activetest``, else
    ``~/.cache/activetest``. Models go in ``models/``, scores in ``scores/``.
    """
    env = os.environ.get("ACTIVETEST_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "activetest"


def tmp_prefix(name: str) -> str:
    """Prefix for a temporary file next to ``name``: hidden, with the writer's pid."""
    return f".{name}.pid{os.getpid()}."


# mkstemp's random part has no dots, so the pid is the last ".pid<digits>." field
_TMP_RE = re.compile(r"^\..*\.pid(\d+)\.[^.]*\.tmp$")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (this one, or another that may be signalled or is
    another user's)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def sweep_tmp(folders: Iterable[str | os.PathLike[str]], *, pid: int | None = None,
              depth: int = 0) -> list[Path]:
    """Remove temporary files and folders (``.<name>.pid<pid>.<random>.tmp``) of dead writers.

    With ``pid`` only that process's files are removed (the parent, after its child
    died). ``depth`` > 0 also looks that many levels of subfolders down (the score
    cache keeps one folder per entry). Returns the removed paths; unreadable folders
    are skipped.
    """
    removed: list[Path] = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            m = _TMP_RE.match(entry.name)
            is_dir = entry.is_dir(follow_symlinks=False)
            if not m:
                if depth > 0 and is_dir:
                    removed += sweep_tmp([entry.path], pid=pid, depth=depth - 1)
                continue
            owner = int(m.group(1))
            if (pid is not None and owner != pid) or (pid is None and pid_alive(owner)):
                continue
            with contextlib.suppress(OSError):
                if is_dir:  # a half-written folder (a model conversion)
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def sweep_creating(path: str | os.PathLike[str]) -> list[Path]:
    """Remove what a dead writer left while creating the session file ``path``:
    ``.<name>.creating-<pid>`` and its ``-wal``/``-shm``/``-journal`` (from a crash, a
    power loss or an older activetest); a live writer's are kept. Returns them."""
    p = Path(path)
    pattern = re.compile(r"^\." + re.escape(p.name) + r"\.creating-(\d+)(-wal|-shm|-journal)?$")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(p.parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m and not pid_alive(int(m.group(1))) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed
