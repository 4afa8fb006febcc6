"""Small helpers shared by the scoring backends: log-softmax, progress bars, parallel scoring."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from activetest._numeric import log_softmax
from activetest.errors import UserFacingError

__all__ = ["QUIET_OUTPUT_LOCK", "ContextOverflowError", "PhasedProgress", "ScoringCancelledError",
           "forward_progress", "log_softmax", "phased_progress_bar", "progress_bar",
           "run_parallel"]

T = TypeVar("T")

#: Held while a backend points the process's stdout and stderr at /dev/null (llama-cpp-python
#: silences a model load that way, file descriptors and ``sys.stderr`` alike; the load also
#: marks an :func:`activetest._quiet.silenced` stretch, so the command line's notes and the
#: progress display wait for it). A warning given from another thread meanwhile would be
#: lost where nothing shows it through :func:`activetest._quiet.emit` (the library used
#: from Python), so some notices are given holding it too
#: (:class:`~activetest.models.labels.LabelScoringLog`).
QUIET_OUTPUT_LOCK = threading.Lock()


class ContextOverflowError(ValueError):
    """A prompt does not fit in the model's context window.

    Attributes:
        facts: what does not fit (the item or the prefix, its token count, the limit).
        advice: what the caller can do about it (said after the facts).
        model: the model that refused (its name or spec), or None.
    """

    def __init__(self, facts: str, advice: str = "", *, model: str | None = None) -> None:
        self.facts, self.advice, self.model = facts, advice, model
        head = f"model {model}: " if model else ""
        super().__init__(head + (f"{facts}; {advice}" if advice else facts))


class ScoringCancelledError(UserFacingError, RuntimeError):
    """Scoring stopped because a job running beside it failed or was interrupted."""


class _Shared:
    """One live display for the bars of every thread in a :func:`run_parallel` block."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.cancel = threading.Event()
        self.lock = threading.Lock()


# rich allows one live display at a time; while run_parallel runs, bars started in
# any thread become rows of its display instead of opening their own.
_shared: _Shared | None = None


_console: Any = None


def _progress_console() -> Any:
    """The console of every progress display: stdout, as rich's own, but written through
    :func:`activetest._quiet.emit`, so a redraw that meets another thread's llama.cpp load
    (stdout pointed at /dev/null) is made after it, not lost, which would leave rich
    moving the cursor over lines it never drew."""
    global _console
    if _console is None:
        from rich.console import Console

        from activetest._quiet import DeferredStream

        _console = Console(file=DeferredStream("stdout"))  # type: ignore[arg-type]
    return _console


def drawn(console: Any) -> bool:
    """Whether a progress display on ``console`` is drawn: a terminal or a notebook.
    Elsewhere (output to a file or a pipe) rich draws nothing but still ends a transient
    display with an empty line (QA: `activetest init ... > log` began with blank lines)."""
    return bool(console.is_terminal or console.is_jupyter)


def _columns() -> tuple[Any, ...]:
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    return (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeRemainingColumn())


# Per thread: the advance() of an outer bar that inner bars feed instead of drawing
# their own (a cache scoring a chunk: the backend's per-item steps move the cache's bar).
_forward = threading.local()


@contextlib.contextmanager
def forward_progress(advance: Callable[..., None], phase: Callable[[str], None] | None = None
                     ) -> Iterator[Callable[[], int]]:
    """Within the block, :func:`progress_bar` in this thread advances ``advance`` (and
    :func:`phased_progress_bar`'s ``phase(description)`` calls ``phase``, if given).

    Yields a function giving how many steps were forwarded so far (the caller
    advances the rest, for backends that report no progress of their own).
    """
    count = [0]

    def step(n: int = 1) -> None:
        count[0] += n
        advance(n)

    previous = getattr(_forward, "advance", None), getattr(_forward, "phase", None)
    _forward.advance, _forward.phase = step, phase
    try:
        yield lambda: count[0]
    finally:
        _forward.advance, _forward.phase = previous


@dataclass(frozen=True)
class PhasedProgress:
    """A progress bar that a later step without a count of its own takes over.

    Attributes:
        advance: ``advance(n=1)``, as :func:`progress_bar` yields it.
        phase: ``phase(description)``: the bar's row gives way to one that says
            ``description`` and pulses (no count: a step whose length is not told), so a
            terminal does not look hung once the counted steps are done.
    """

    advance: Callable[..., None]
    phase: Callable[[str], None]


@contextlib.contextmanager
def progress_bar(total: int | None, description: str,
                 enabled: bool) -> Iterator[Callable[..., None]]:
    """A transient rich progress bar; yields ``advance(n=1)`` (thread-safe). ``total``
    None: a count of the steps (the total is not known in advance).

    Inside :func:`run_parallel` the bar is a row of the shared display, and
    ``advance`` raises :class:`ScoringCancelledError` once a sibling job has failed, so a
    scoring loop (which calls it after every item or batch) stops promptly. Inside
    :func:`forward_progress` no bar is drawn: ``advance`` moves the outer one (if
    ``enabled``; a disabled inner bar, e.g. a calibration probe, moves nothing).
    """
    with phased_progress_bar(total, description, enabled) as bar:
        yield bar.advance


@contextlib.contextmanager
def phased_progress_bar(total: int | None, description: str,
                        enabled: bool) -> Iterator[PhasedProgress]:
    """:func:`progress_bar`, with a :attr:`PhasedProgress.phase` for a step after the
    counted ones (inside :func:`forward_progress`: its ``phase``, if ``enabled``)."""
    from rich.progress import Progress

    outer = getattr(_forward, "advance", None)
    if outer is not None:
        outer_phase = getattr(_forward, "phase", None)
        if enabled:
            yield PhasedProgress(outer, outer_phase or _no_phase)
        else:
            yield PhasedProgress(lambda n=1: None, _no_phase)
        return
    shared = _shared
    if shared is not None:
        tid = shared.bar.add_task(description, total=total, visible=enabled)

        def advance_shared(n: int = 1) -> None:
            if shared.cancel.is_set():
                raise ScoringCancelledError("scoring cancelled: a job running beside it stopped")
            with shared.lock:
                shared.bar.advance(tid, n)

        rows = [tid]

        def phase_shared(text: str) -> None:
            with shared.lock:
                shared.bar.update(rows[-1], visible=False)
                rows.append(shared.bar.add_task(text, total=None, visible=enabled))
        try:
            yield PhasedProgress(advance_shared, phase_shared)
        finally:
            for row in rows:
                shared.bar.remove_task(row)
        return
    console = _progress_console()
    bar = Progress(*_columns(), console=console, disable=not (enabled and drawn(console)),
                   transient=True)
    lock = threading.Lock()
    with bar:
        tid = bar.add_task(description, total=total)

        def advance(n: int = 1) -> None:
            with lock:
                bar.advance(tid, n)

        def phase(text: str) -> None:  # a row of no count (it pulses) for the counted one
            with lock:
                bar.update(tid, visible=False)
                bar.add_task(text, total=None)
        yield PhasedProgress(advance, phase)


def _no_phase(text: str) -> None:
    """A phase nothing shows."""


def run_parallel(jobs: Sequence[Callable[[], T]], *, progress: bool = True) -> list[T]:
    """Run scoring jobs in threads at once, with one shared progress display.

    The backends spend their time in native code that releases the GIL (llama.cpp
    through ctypes, torch, HTTP waits), so two models score side by side on two
    cores. If a job raises, or the caller is interrupted (Ctrl-C), the others stop
    at their next progress step and an error is re-raised: where several jobs failed,
    the first job's error in the order of ``jobs`` (not the first in time, which varies
    from run to run), a job stopped by the cancellation only where no job failed
    otherwise.
    """
    global _shared
    if len(jobs) <= 1:
        return [job() for job in jobs]
    from rich.progress import Progress

    if _shared is not None:  # already inside a parallel block: keep it simple
        return [job() for job in jobs]
    console = _progress_console()
    bar = Progress(*_columns(), console=console, disable=not (progress and drawn(console)),
                   transient=True)
    shared = _Shared(bar)
    _shared = shared
    try:
        with bar:
            pool = ThreadPoolExecutor(max_workers=len(jobs))
            futures = [pool.submit(job) for job in jobs]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException:  # Ctrl-C while waiting: do not wait for the jobs
                shared.cancel.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            if any(f.done() and f.exception() for f in futures):
                shared.cancel.set()
                wait(futures)
                pool.shutdown(wait=True)
                # every job has ended: their errors in job order (QA: the one raised was
                # whichever failed first in time, so two failures gave either message)
                errors = [e for f in futures if (e := f.exception()) is not None]
                real = [e for e in errors if not isinstance(e, ScoringCancelledError)]
                raise (real or errors)[0]
            pool.shutdown(wait=True)
            return [f.result() for f in futures]
    finally:
        _shared = None
