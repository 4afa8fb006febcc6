"""Intervals that know their blind spot: what the items a run hardly looked at could hide.

A design that draws some items far below the uniform rate learns nothing about them
until it draws one. If a few of them carry large losses that the model did not
expect (a target confidently wrong where the surrogate agrees with it), a run that
has not met one has a low estimate *and* a low variance estimate, and neither the
fixed-budget interval nor the anytime CS (asymptotic) can tell (issue 20: 22-39% coverage on
such a pool). Only the loss bound can: this module bounds what such items could add.

Exposure
--------
Item i's **exposure** after K draws is ``Q_i = sum_{m<=K} q_m(i)`` (``q_m(i) = 0``
once drawn): the number of times the run expected to draw it. Uniform sampling gives
every undrawn item ``Q_u = sum_{m<=K} 1 / (N - m + 1)`` (about K/N). A session
knows every ``q_m``: a fixed proposal's are ``q_m(i) = p_i / sum_{S_m} p``
(:func:`floored_proposals`), an adaptive design's are replayed from its stored history
(:func:`design_proposals`). The **unexplored** items are the undrawn ones with
``Q_i < ratio * Q_u`` (``ratio`` = 1/2: drawn at below half the uniform rate; at 1/5 the rare-miss
pool's items escape, see :data:`BLIND_RATIO`).

What a set of unexplored items can hide (the proof)
---------------------------------------------------
Fix any set H of items before sampling. ``X_t = 1[no item of H drawn by t] /
prod_{m<=t} (1 - q_m(H))`` with ``q_m(H) = sum_{i in H n S_m} q_m(i)`` is a
nonnegative martingale with ``X_0 = 1`` (``E[1[miss at m] | F_{m-1}] = 1 - q_m(H)``,
whatever the adaptive design did before). By Ville's inequality, with probability
at least ``1 - delta``, at every t at once: either H has been hit, or
``prod (1 - q_m(H)) > delta``, hence (``-log(1 - x) >= x``)
``sum_{i in H} Q_i < log(1 / delta)``. So a set of never-drawn items whose exposure
adds up to ``log(1/delta)`` or more is, with probability ``1 - delta``, not the
set that hides losses; the largest loss never-drawn items could hide is

    D = max { sum_{i in H} B_i : H unexplored, sum_{i in H} Q_i <= log(1/delta) } / N,

``B_i`` the largest loss item i can have (error rate 1; log loss
``max_c -log p_target(c | x_i)``, never above the pool-wide cap the report applies,
:func:`activetest.stats.log_loss_bound`). It is computed as a fractional knapsack
(items by ``B_i / Q_i``, the last one in part), an upper bound on the 0/1 one, and it
is never more than ``sum_{i in U} B_i / N``, the unexplored items' whole bound.

The **widened interval** is ``[low - D_low, high + D]``. The estimate counts a
never-drawn item at the control's value (adaptive designs) or not at all (LURE), so
the truth can exceed it by up to ``B_i`` per hidden item; below, by the control's
value, so ``D_low`` is the same knapsack with the weights ``g_i`` (the design's
control at the last draw; 0 without one). Both interval kinds take the same D: the
Ville bound holds at every budget at once, so the anytime CS stays anytime. The
split of the miss probability (``delta = (1 - level) / 2`` here, the interval keeping
its own) is a union bound, conservative when the interval itself is; coverage is
checked by seeded simulation (tests/stats/test_blindspot.py: the rare-miss pool). No
unexplored item (uniform sampling; a design that stays near it): D = 0 and the
intervals are unchanged.

The proposals a run drew from are replayed by :mod:`activetest.stats.blindspot_replay`
(a fixed acquisition's floored proposal, an adaptive design's from its stored history,
resumable from a checkpoint); this module has the bound and its knapsack.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from activetest.stats.kernels import njit

__all__ = [
    "BLIND_RATIO",
    "EARNED_BLIND_RATIO",
    "BlindSpot",
    "BlindSpotCurve",
    "RunningCurve",
    "blind_spot",
    "blind_spot_curve",
    "hidden_mass",
    "new_blind_ratio",
    "unexplored_items",
    "uniform_exposure",
    "widen",
    "widen_cs",
]

#: Items drawn at below this share of the uniform rate (and never drawn) are unexplored:
#: half (at a fifth, the rare-miss pool's 20 items escape: the adaptive design starts at
#: lambda 0.5, so their exposure is 0.2-0.5 of uniform's; measured in docs/robustness.md).
BLIND_RATIO = 0.5
#: The threshold of new sessions whose adaptive design runs the earned in-run rule
#: (:mod:`activetest.stats.adaptive`): that rule keeps the rare-miss pool's items
#: explored, so a fifth covers it (fixed-budget 0.94-0.97, anytime 0.95 at 50-400
#: labels) at a fraction of the half's cost on the paper settings (docs/robustness.md).
EARNED_BLIND_RATIO = 0.2


def new_blind_ratio(design_rule: str | None) -> float:
    """The ``blind_ratio`` a new session records: :data:`EARNED_BLIND_RATIO` for an
    adaptive design with the earned rule, else :data:`BLIND_RATIO` (the paper's fixed
    acquisitions and designs with the original rule, which can draw the rare-miss
    pool's items at 0.2-0.5 of the uniform rate)."""
    return EARNED_BLIND_RATIO if design_rule == "earned" else BLIND_RATIO


@dataclass(frozen=True)
class BlindSpot:
    """What the items a run hardly looked at could hide (module docstring).

    Attributes:
        n_unexplored: never-drawn items with exposure below ``ratio`` times uniform's.
        ratio: that threshold (1/2).
        unexplored_bound: ``sum_{i in U} B_i / N``: the most they could add to the risk.
        widen_high: ``D``, added to the intervals' upper ends.
        widen_low: ``D_low``, taken from their lower ends.
        delta: the miss probability spent on it.
        loss_cap: the per-item loss bound used (the largest ``B_i``; 1 for the error rate).
    """

    n_unexplored: int
    ratio: float
    unexplored_bound: float
    widen_high: float
    widen_low: float
    delta: float
    loss_cap: float

    @property
    def widened(self) -> bool:
        """Whether the intervals were widened at all."""
        return self.widen_high > 0 or self.widen_low > 0


def uniform_exposure(N: int, K: int) -> float:
    """``Q_u = sum_{m=1}^{K} 1 / (N - m + 1)``: an undrawn item's exposure under uniform
    sampling after K draws."""
    if K <= 0:
        return 0.0
    return float(np.sum(1.0 / (N - np.arange(K, dtype=np.float64))))


@dataclass(frozen=True)
class BlindSpotCurve:
    """:class:`BlindSpot` at every budget M = 1..K (arrays ``(K,)``)."""

    n_unexplored: np.ndarray
    unexplored_bound: np.ndarray
    widen_high: np.ndarray
    widen_low: np.ndarray
    ratio: float
    delta: float
    loss_cap: float

    def at(self, budget: int) -> BlindSpot:
        """The blind spot after ``budget`` labels (1-based)."""
        j = budget - 1
        return BlindSpot(int(self.n_unexplored[j]), self.ratio,
                         float(self.unexplored_bound[j]), float(self.widen_high[j]),
                         float(self.widen_low[j]), self.delta, self.loss_cap)


def blind_spot_curve(proposals: Iterable[tuple[np.ndarray, np.ndarray | None]],
                     acquired: Sequence[int], loss_high: np.ndarray | float, *, N: int,
                     level: float = 0.95, fixed_control: np.ndarray | None = None,
                     ratio: float = BLIND_RATIO, start: int = 1,
                     at: Sequence[int] | None = None) -> BlindSpotCurve:
    """:func:`blind_spot` after every draw, from the proposals before each draw
    (:func:`floored_proposals`, :func:`design_proposals`). The value the estimate gives
    a never-drawn item is the design's ``sum_m c_m g^(m)_i`` where the proposals carry a
    control, else ``fixed_control`` (CV-LURE's fixed ``h``), else 0 (LURE). Budgets
    below ``start`` are left at 0 (e.g. where the CS is not claimed yet), and so are
    budgets not in ``at`` when it is given (simulations that look at a few)."""
    curve = RunningCurve(acquired, loss_high, N=N, level=level, fixed_control=fixed_control,
                   ratio=ratio, start=start, at=at)
    for m, (q, g) in enumerate(proposals):
        if m >= curve.K:
            break
        curve.Q += q
        k = m + 1
        if g is not None and k < N:
            curve.wg += N / ((N - k) * (N - k + 1.0)) * g
        curve.after(m, g is not None)
    return curve.result()


_NONE = np.zeros(0)
_NONE_BOOL = np.zeros(0, dtype=bool)


class RunningCurve:
    """The running exposure ``Q`` and control sum ``wg`` of a run, and its
    :class:`BlindSpot` at each budget (:func:`blind_spot_curve`; the replays of
    :mod:`activetest.stats.blindspot_replay` share one ``Q`` among several, ``shared``)."""

    def __init__(self, acquired: Sequence[int], loss_high: np.ndarray | float, *, N: int,
                 level: float, fixed_control: np.ndarray | None, ratio: float, start: int,
                 at: Sequence[int] | None, shared: bool = False) -> None:
        self.acq = np.asarray(acquired, dtype=np.int64)
        self.K = self.acq.size
        self.N, self.level, self.ratio, self.start = N, level, ratio, start
        # ``shared``: the caller sets ``Q``, ``wg`` and ``undrawn`` (one set for every
        # curve of a run: three per-item arrays per curve less at large N)
        self.Q = _NONE if shared else np.zeros(N)
        self.wg = _NONE if shared else np.zeros(N)
        self.undrawn = _NONE_BOOL if shared else np.ones(N, dtype=bool)
        self.out = np.zeros((4, self.K))
        self.delta, self.cap = (1.0 - float(level)) / 2.0, 0.0
        self.B = np.broadcast_to(np.asarray(loss_high, dtype=np.float64), (N,))
        self.B_max = float(self.B.max()) if self.B.size else 0.0
        self.B_arg = _bounds_arg(self.B)
        self.fixed = (None if fixed_control is None  # (as the compiled pass reads it)
                      else np.ascontiguousarray(fixed_control, dtype=np.float64))
        self.wanted = None if at is None else {int(k) for k in at}

    def after(self, m: int, has_control: bool, at: np.ndarray | None = None) -> None:
        """Draw m's exposure (and control) added: its item drawn, the blind spot at
        budget m + 1 (if asked for); ``at``: its unexplored items, if already found."""
        N, k = self.N, m + 1
        if self.undrawn.size:
            self.undrawn[self.acq[m]] = False
        if k < self.start or (self.wanted is not None and k not in self.wanted):
            return
        if at is None:
            at = unexplored_items(self.Q, self.undrawn, N=N, K=k, ratio=self.ratio)
        ctrl, scale = self.fixed, 1.0
        if has_control:  # the design's control estimate sum_m c_m g^(m) / (k / (N - k))
            ctrl, scale = (self.wg, k / (N - k)) if k < N else (None, 1.0)
        spot = _spot_at(at, self.Q, self.B_arg, self.B_max, N=N, level=self.level,
                        control=ctrl, control_scale=scale, ratio=self.ratio)
        self.out[:, m] = (spot.n_unexplored, spot.unexplored_bound, spot.widen_high,
                          spot.widen_low)
        self.delta, self.cap = spot.delta, spot.loss_cap

    def result(self) -> BlindSpotCurve:
        """The curve."""
        out = self.out
        return BlindSpotCurve(out[0].astype(np.int64), out[1], out[2], out[3],
                              float(self.ratio), self.delta, self.cap)


def hidden_mass(weights: np.ndarray, exposure: np.ndarray, capacity: float) -> float:
    """``max sum_H w_i`` over sets H with ``sum_H Q_i <= capacity``, fractionally: an
    upper bound on the 0/1 knapsack.

    The items with ``w_i > 0`` are taken in decreasing ``w_i / Q_i`` (ties in index
    order; an item with ``Q_i <= 0``, never exposed, is always taken: nothing says it
    is not hiding its weight) while their exposures add up to at most ``capacity``;
    the first that does not fit is taken in part, ``w_i (capacity - taken) / Q_i``.
    The value is unique in exact arithmetic (items of equal ratio trade weight for
    exposure at the same rate, so the tie order does not change it). It is found by
    selection, not by sorting (:func:`_hidden_mass`: expected linear time); its float
    sums run in the selection's order, fixed by the input, so the same inputs give the
    same bits on every machine."""
    w = np.ascontiguousarray(weights, dtype=np.float64).ravel()
    Q = np.ascontiguousarray(exposure, dtype=np.float64).ravel()
    if w.shape != Q.shape:
        raise ValueError(f"weights ({w.size}) and exposures ({Q.size}) differ in length")
    return float(_hidden_mass(w, Q, float(capacity)))


@njit(cache=True)
def _key_less(r, a, b):  # pragma: no cover - compiled
    """Item ``a`` before item ``b``: a smaller ``r`` (``-w / Q``), ties in index order."""
    return r[a] < r[b] or (r[a] == r[b] and a < b)


@njit(cache=True)
def _hidden_mass(w, Q, cap):  # pragma: no cover - compiled
    """:func:`hidden_mass` of float64 arrays, by quickselect on ``r_i = -w_i / Q_i``
    (NaN as +inf: last) with the index as tie-break, so every key differs.

    Where all the exposures fit (their sum, in index order, at most ``cap``) every
    weight is taken. Else the candidates ``ix[lo:hi]`` are the items between those
    taken (``tq``, ``tw``: their exposure and weight) and those left out. A pivot (a
    seeded pseudo-random one of the range: expected linear time whatever the items'
    order) splits them into the items before it and after it; if the items before it
    overfill the knapsack the cut lies among them, else they are taken, and the pivot
    too if it fits (else it is the item taken in part). Each step is a pass over the
    range, which shrinks geometrically: about 2-4n key comparisons in all, against
    n log n for a sort. Should rounding make a range fit whole that the step before
    found overfull (the two sums add the same numbers in different orders), the item
    after it (``nxt``) is the one taken in part."""
    n = w.shape[0]
    free = 0.0
    ix = np.empty(n, dtype=np.int64)
    r = np.empty(n)
    m = 0
    q_all = 0.0
    w_all = 0.0
    for i in range(n):
        wi = w[i]
        if wi > 0.0:
            qi = Q[i]
            if qi <= 0.0:
                free += wi
            else:
                v = -wi / qi
                r[i] = v if v == v else np.inf
                ix[m] = i
                m += 1
                q_all += qi
                w_all += wi
    if q_all <= cap:  # everything fits
        return free + w_all
    tq = 0.0
    tw = 0.0
    lo = 0
    hi = m
    nxt = -1
    seed = 12345
    while lo < hi:
        seed = (seed * 1103515245 + 12345) % 2147483648  # < 2**31: no overflow in int64
        p = lo + seed % (hi - lo)
        piv = ix[p]
        ix[p] = ix[hi - 1]
        ix[hi - 1] = piv
        store = lo
        sq = 0.0
        for t in range(lo, hi - 1):
            j = ix[t]
            if _key_less(r, j, piv):
                ix[t] = ix[store]
                ix[store] = j
                store += 1
                sq += Q[j]
        ix[hi - 1] = ix[store]
        ix[store] = piv
        if tq + sq > cap:  # the cut is before the pivot
            hi = store
            nxt = piv
            continue
        for t in range(lo, store):
            tw += w[ix[t]]
        tq += sq
        if tq + Q[piv] > cap:  # the pivot is the item taken in part
            left = cap - tq
            return free + tw + w[piv] * (left if left > 0.0 else 0.0) / Q[piv]
        tq += Q[piv]
        tw += w[piv]
        lo = store + 1
    if nxt >= 0:
        left = cap - tq
        return free + tw + w[nxt] * (left if left > 0.0 else 0.0) / Q[nxt]
    return free + tw


def blind_spot(exposure: np.ndarray, drawn: np.ndarray, loss_high: np.ndarray | float, *,
               N: int, K: int, level: float = 0.95, control: np.ndarray | None = None,
               ratio: float = BLIND_RATIO) -> BlindSpot:
    """The widening of a run's intervals for what its unexplored items could hide.

    Args:
        exposure: ``(N,)`` ``Q_i`` after the K draws (:func:`blind_spot_curve` sums the
            proposals of :func:`floored_proposals` or :func:`design_proposals`).
        drawn: ``(N,)`` bool, or the drawn items' indices.
        loss_high: ``B_i`` per item (or one bound for all): the largest loss it can have.
        N, K: pool size and draws.
        level: the intervals' level; ``delta = (1 - level) / 2`` is spent here.
        control: ``(N,)`` the value the estimate gives a never-drawn item (an adaptive
            design's control at the last draw); None: 0 (LURE).
        ratio: unexplored below ``ratio`` times the uniform exposure.
    """
    Q = np.asarray(exposure, dtype=np.float64)
    d = np.asarray(drawn)
    mask = np.zeros(Q.size, dtype=bool)
    if d.dtype == bool:
        mask |= d
    else:
        mask[d.astype(np.int64)] = True
    B = np.broadcast_to(np.asarray(loss_high, dtype=np.float64), Q.shape)
    at = unexplored_items(Q, ~mask, N=N, K=K, ratio=ratio)
    g = None if control is None else np.ascontiguousarray(control, dtype=np.float64)
    return _spot_at(at, Q, _bounds_arg(B), float(B.max()) if B.size else 0.0, N=N,
                    level=level, control=g, ratio=ratio)


def unexplored_items(Q: np.ndarray, undrawn: np.ndarray, *, N: int, K: int, ratio: float
                     ) -> np.ndarray:
    """The unexplored items (undrawn, ``Q_i < ratio * Q_u``), in index order."""
    unexplored = ratio * uniform_exposure(N, K) > Q
    unexplored &= undrawn
    return np.flatnonzero(unexplored)


def _bounds_arg(B: np.ndarray) -> tuple[np.ndarray, bool]:
    """The loss bounds as :func:`_spot_sums` reads them: a contiguous float64 array, and
    whether it is one bound for every item (a broadcast value: its one element)."""
    if B.ndim == 1 and B.size > 1 and B.strides[0] == 0:
        return np.ascontiguousarray(B[:1]), True
    return np.ascontiguousarray(B, dtype=np.float64), False


def _spot_at(at: np.ndarray, Q: np.ndarray, B: tuple[np.ndarray, bool], B_max: float, *,
             N: int, level: float, control: np.ndarray | None, ratio: float,
             control_scale: float = 1.0) -> BlindSpot:
    """:func:`blind_spot` from its unexplored items ``at`` (index order), the float64
    exposures ``Q`` (``(N,)``), the bounds as :func:`_bounds_arg` gives them (their
    maximum ``B_max``) and the ``(N,)`` control, read at the items and divided by
    ``control_scale`` (None: no control, ``D_low = 0``): one compiled pass over the
    items (:func:`_spot_sums`), every per-item array read at them only."""
    delta = (1.0 - float(level)) / 2.0
    cap = math.log(1.0 / delta)
    bounds, one = B
    ctrl = _NONE if control is None else control
    total, hi, lo = _spot_sums(np.ascontiguousarray(at, dtype=np.int64),
                               np.ascontiguousarray(Q, dtype=np.float64), bounds, one, ctrl,
                               control is not None, float(control_scale), cap)
    return BlindSpot(int(at.size), float(ratio), float(total / N), float(hi / N),
                     float(lo / N), delta, B_max)


@njit(cache=True)
def _spot_sums(at, Q, B, one, ctrl, has_ctrl, scale, cap):  # pragma: no cover - compiled
    """At the items ``at``: ``sum B_i`` (in index order), the knapsack of the bounds
    (``D`` times N) and, if ``has_ctrl``, that of the control ``ctrl_i / scale``
    clipped to ``[0, B_i]`` (``D_low`` times N; NaN stays NaN, as ``np.clip`` gives
    it, and weighs nothing). ``one``: ``B`` holds one bound for every item."""
    n = at.shape[0]
    Bu = np.empty(n)
    Qu = np.empty(n)
    total = 0.0
    for j in range(n):
        i = at[j]
        b = B[0] if one else B[i]
        Bu[j] = b
        Qu[j] = Q[i]
        total += b
    hi = _hidden_mass(Bu, Qu, cap)
    lo = 0.0
    if has_ctrl:
        for j in range(n):
            x = ctrl[at[j]] / scale
            if x < 0.0:
                x = 0.0
            if x > Bu[j]:
                x = Bu[j]
            Bu[j] = x  # the bound is not read again
        lo = _hidden_mass(Bu, Qu, cap)
    return total, hi, lo


def widen(low: float, high: float, spot: BlindSpot) -> tuple[float, float]:
    """``[low - D_low, high + D]``."""
    return low - spot.widen_low, high + spot.widen_high


def widen_cs(low: np.ndarray, high: np.ndarray, curve: BlindSpotCurve, *,
             intersect: bool) -> tuple[np.ndarray, np.ndarray]:
    """A CS (``(K,)`` bounds, not yet intersected over budgets) widened at every budget by
    that budget's blind spot, then intersected over budgets if ``intersect`` (the
    budget-tuned CS): valid at every budget at once, as the Ville bound is."""
    lo = np.asarray(low, dtype=np.float64) - curve.widen_low
    hi = np.asarray(high, dtype=np.float64) + curve.widen_high
    if intersect:
        from activetest.stats.confseq import running_intersection

        lo, hi = running_intersection(lo, hi)
    return lo, hi
