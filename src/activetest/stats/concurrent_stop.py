"""Stopping a run whose drawn items complete out of order (a harness running them at once).

A harness (inspect_ai, lm-evaluation-harness) runs the target on the drawn items
concurrently, up to ``c`` at a time, and they complete in any order. Two rules keep
the active-testing estimate and its confidence sequence (CS) what a one-at-a-time
run would give:

1. **The estimate uses the longest completed prefix of the draw order**
   (:func:`completed_prefix`): LURE's ``theta_m`` needs the losses of draws
   ``1..m-1``, so an item that completed ahead of an earlier draw waits.
2. **The stop is the first prefix length ``M`` at which the CS is narrow enough**
   (:func:`first_narrow`), checked at every length the prefix passes through, not
   only at the lengths it happens to reach between two completions. Since the CS
   at ``M`` is a function of the first ``M`` draws only, ``tau = min{M : width_M <=
   w}`` is the same stopping time a sequential run has, whatever the completion
   order: the completion order changes only how many items beyond ``tau`` were
   already started when the stop was seen (at most what was in flight), never the
   estimate or the interval reported at ``tau``. ``tau`` is a stopping time of the
   draws' own filtration (items completed beyond the prefix are never looked at),
   so the fixed-point martingale arguments behind the estimate hold at it; and a CS
   covers at every time at once, so it covers at ``tau`` (Ville's inequality: any
   random time, even one that peeked, keeps its coverage).

An adaptive design refits its proposal only between batches of draws (a batch is
drawn from one fitted proposal, as ``activetest select --n`` does); items running at
once belong to a batch already drawn, so running them concurrently changes nothing
the design sees.

:func:`run_concurrently` simulates a harness (``c`` workers, random durations,
possibly correlated with the loss) for the tests and docs: it returns the stop and
the items started; tests/stats/test_concurrent_stop.py checks that the stop equals
the sequential one in every seeded run and that coverage at the stop holds.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from activetest.stats.confseq import MIN_LABELS

__all__ = ["ConcurrentRun", "completed_prefix", "first_narrow", "run_concurrently"]


def completed_prefix(done: Sequence[bool] | np.ndarray) -> int:
    """The number of leading draws that are complete: ``done[:K]`` all true, ``done[K]`` not."""
    d = np.asarray(done, dtype=bool)
    missing = np.flatnonzero(~d)
    return int(missing[0]) if missing.size else int(d.size)


def first_narrow(low: np.ndarray, high: np.ndarray, width: float, *, after: int, upto: int,
                 min_labels: int = MIN_LABELS) -> int | None:
    """The first budget ``M`` (1-based) in ``(after, upto]`` whose interval is at most ``width``.

    ``low``/``high`` are the CS bounds at budgets ``1..K`` (``K >= upto``), e.g.
    :func:`activetest.stats.confseq.asymptotic_cs` of the completed prefix; budgets
    below ``min_labels`` (where the anytime CS (asymptotic) is not claimed) never stop. None if
    no budget in the range is narrow enough.
    """
    if not width > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    if lo.shape != hi.shape or lo.ndim != 1:
        raise ValueError(f"low and high must be 1-D of one shape, got {lo.shape}, {hi.shape}")
    if not 0 <= after <= upto <= lo.size:
        raise ValueError(f"need 0 <= after ({after}) <= upto ({upto}) <= K ({lo.size})")
    start = max(after, int(min_labels) - 1)
    if start >= upto:
        return None
    w = hi[start:upto] - lo[start:upto]
    ok = np.flatnonzero(np.isfinite(w) & (w <= width))
    return int(start + ok[0] + 1) if ok.size else None


@dataclass(frozen=True)
class ConcurrentRun:
    """One simulated concurrent run.

    Attributes:
        stop: the prefix length at which the stop was decided (None: never narrow
            enough; every item was run).
        started: how many items were started (the target runs spent), in draw order.
        completion_order: draw positions (0-based) in the order they completed.
        prefix_at_stop: the completed prefix when the stop was seen (>= ``stop``).
    """

    stop: int | None
    started: int
    completion_order: tuple[int, ...]
    prefix_at_stop: int | None


def run_concurrently(n_items: int, durations: np.ndarray, concurrency: int,
                     check: Callable[[int, int], int | None]) -> ConcurrentRun:
    """Run ``n_items`` drawn items on ``concurrency`` workers, in draw order, until a stop.

    Item ``j`` (0-based draw position) takes ``durations[j]``; a free worker starts the
    next item unless the stop was seen. After every completion the completed prefix
    ``K`` is recomputed and, if it grew from ``K0``, ``check(K0, K)`` returns the stop
    (a prefix length in ``(K0, K]``, e.g. :func:`first_narrow`) or None. Items in
    flight when the stop is seen still complete (a harness does not cancel them).
    Deterministic given ``durations``; ties complete in draw order.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
    dur = np.asarray(durations, dtype=np.float64)
    if dur.shape != (n_items,) or not np.all(np.isfinite(dur)) or np.any(dur < 0):
        raise ValueError(f"durations must be ({n_items},) finite and >= 0")
    done = np.zeros(n_items, dtype=bool)
    running: list[tuple[float, int]] = []
    nxt = 0
    now = 0.0
    stop: int | None = None
    seen_at: int | None = None
    prefix = 0
    order: list[int] = []
    while nxt < n_items and len(running) < concurrency:
        heapq.heappush(running, (now + float(dur[nxt]), nxt))
        nxt += 1
    while running:
        now, j = heapq.heappop(running)
        done[j] = True
        order.append(j)
        if stop is None:
            k = prefix
            while k < n_items and done[k]:
                k += 1
            if k > prefix:
                found = check(prefix, k)
                if found is not None:
                    if not prefix < found <= k:
                        raise ValueError(f"check returned {found}, outside ({prefix}, {k}]")
                    stop, seen_at = found, k
                prefix = k
        if stop is None and nxt < n_items:
            heapq.heappush(running, (now + float(dur[nxt]), nxt))
            nxt += 1
    return ConcurrentRun(stop, nxt, tuple(order), seen_at)

