"""Output that outlasts a stretch in which a native library silences the process.

llama-cpp-python silences a model load (``verbose=False``) by pointing file descriptors
1 and 2 at ``/dev/null`` and swapping ``sys.stdout``/``sys.stderr`` for null files, for
the whole process, for as long as the load takes. Whatever another thread writes
meanwhile (a ``note:`` line, a warning, a progress bar's redraw: two models scoring
side by side) is lost. :func:`silenced` marks such a stretch; :func:`emit` runs a write
at once, or, inside a stretch, keeps it and runs it when the last stretch ends, in the
order given, in the thread that ends it (the streams are restored by then, and the
write finds them as it would have: ``sys.stderr`` is looked up when it runs).

Why keep writes rather than make them wait on a lock held through the stretch:

* a write from the thread inside the stretch (a warning given during its own load)
  would wait for itself, or, with a reentrant lock, go to ``/dev/null``; kept, it is
  said when the load is done;
* a write may take other locks (rich's console lock, while a progress display redraws
  from its own thread), so no lock of ours is held across a write: a lock held there
  would be taken in the opposite order by a redraw that waits on it. Writes in flight
  are only counted, and a stretch starts once they are done (a write is never cut);
  writes that come meanwhile are kept.

Python's warnings take the same way while a stretch is open: :func:`silenced` puts a
``warnings.showwarning`` that shows each warning through :func:`emit` (a library user's
warning from another thread during a load was lost; the command line's own
``showwarning`` already emits, and is left as it is), and puts the one it found back when
the last stretch ends.

Nothing here stops the silencing itself: the library's own log lines still go to
``/dev/null``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

__all__ = ["DeferredStream", "emit", "silenced"]

_cond = threading.Condition()
_stretches = 0  # silenced stretches open now (any thread)
_writing = 0  # writes in flight, a flush of kept writes counting as one
_flushing = False  # kept writes are being run: new ones queue behind them
_kept: list[Callable[[], object]] = []
_shown: Any = None  # the warnings.showwarning found when the first stretch began


def _defer_warnings() -> None:
    """As the first stretch begins (holding ``_cond``): show warnings through
    :func:`emit` (unless the hook in place already does)."""
    global _shown
    import warnings

    current = warnings.showwarning
    if getattr(current, "emits", False):
        return
    _shown = current

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        emit(lambda: current(message, category, filename, lineno, file, line))

    show.emits = True  # type: ignore[attr-defined]
    show.deferring = True  # type: ignore[attr-defined]
    warnings.showwarning = show


def _restore_warnings() -> None:
    """As the last stretch ends (holding ``_cond``): put back the hook found, where ours
    is still in place (a ``catch_warnings`` meanwhile may have put another)."""
    global _shown
    import warnings

    if _shown is not None and getattr(warnings.showwarning, "deferring", False):
        warnings.showwarning = _shown
    _shown = None


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Mark a block in which the process's stdout/stderr may point at ``/dev/null``.

    Waits for writes in flight to finish; within the block :func:`emit` keeps the
    writes of every thread, and the last block to end runs them.
    """
    global _stretches
    with _cond:
        _stretches += 1
        if _stretches == 1:
            _defer_warnings()
        _cond.wait_for(lambda: _writing == 0)
    try:
        yield
    finally:
        with _cond:
            _stretches -= 1
            if _stretches == 0:
                _restore_warnings()
            flush = _start_flush()
        if flush:
            _flush()


def emit(write: Callable[[], object]) -> None:
    """Run ``write`` (a call that writes to ``sys.stderr`` or ``sys.stdout``) now, or,
    while a :func:`silenced` block is open, when it ends.

    A kept write that raises :class:`OSError` (a closed stream) is dropped, as the write
    would have failed then too; run now, its errors reach the caller.
    """
    global _writing
    with _cond:
        if _stretches or _flushing:
            _kept.append(write)
            return
        _writing += 1
    try:
        write()
    finally:
        with _cond:
            _writing -= 1
            _cond.notify_all()


def _start_flush() -> bool:
    """Whether the caller, holding ``_cond`` as the last stretch ends, is to flush."""
    global _flushing, _writing
    if _stretches or _flushing or not _kept:
        return False
    _flushing = True
    _writing += 1  # a stretch that starts now waits for the flush to pause
    return True


def _flush() -> None:
    """Run the kept writes in order until none is left or a new stretch waits."""
    global _flushing, _writing
    try:
        while True:
            with _cond:
                if _stretches or not _kept:
                    return
                batch = _kept[:]
                del _kept[:]
            for write in batch:
                with contextlib.suppress(OSError):
                    write()
    finally:
        with _cond:
            _flushing = False
            _writing -= 1
            _cond.notify_all()


class DeferredStream:
    """A text stream for ``sys.stdout`` or ``sys.stderr`` (as found at each write) whose
    writes go through :func:`emit`: the file of a rich console whose output must not
    be lost to another thread's silenced stretch (a progress display).

    A rich ``Live`` display wraps ``sys.stdout``/``sys.stderr`` in proxies that print
    through the console; the stream writes to the file they wrap, as rich does.
    """

    def __init__(self, name: str) -> None:
        if name not in ("stdout", "stderr"):
            raise ValueError(f"name must be 'stdout' or 'stderr', not {name!r}")
        self.name = name

    def _target(self) -> IO[str]:
        stream = getattr(sys, self.name)
        return getattr(stream, "rich_proxied_file", stream)

    def write(self, text: str) -> int:
        """Write ``text`` now or after the silenced stretch; returns its length."""
        emit(lambda: self._target().write(text))
        return len(text)

    def flush(self) -> None:
        """Flush the stream now or after the silenced stretch."""
        emit(lambda: self._target().flush())

    def isatty(self) -> bool:
        """Whether the stream is a terminal (False while it points at ``/dev/null``)."""
        isatty: Any = getattr(self._target(), "isatty", None)
        return bool(isatty()) if isatty is not None else False

    def fileno(self) -> int:
        """The stream's file descriptor."""
        return int(self._target().fileno())

    @property
    def encoding(self) -> str:
        """The stream's encoding."""
        return str(getattr(self._target(), "encoding", None) or "utf-8")
