"""The records and small helpers every estimate module shares: the labelled draws an
estimate is computed from, the few-errors and sure-bounds records, the ranges an
estimate is kept within, and the seeded bootstrap generator (split out of
:mod:`activetest.session.estimate`, which re-exports them)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from activetest.stats import (
    BootstrapResult,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "POINT_WIDTH",
    "SURE_CUT_SHARE",
    "DesignControls",
    "FewErrors",
    "LabelledDraws",
    "SureBounds",
    "VarianceFloors",
    "bootstrap_rng",
    "clip_interval",
    "clip_result",
    "cut_to_sure",
    "cut_to_sure_arrays",
    "difference_range",
    "exact_by_own_draws",
    "exact_proposal_bound",
    "first_draws",
    "least_covered",
    "sure_bounds_of_runs",
    "sure_cut_in_force",
    "sure_risk_curve",
    "value_range",
]


#: An adaptive design's per-draw ``(g_m, G_m, V_m)``: controls at the drawn items, their
#: sums over the remaining ones, and its own variance prediction (NaN: none); see
#: :func:`activetest.session.draw.design_controls`.
DesignControls = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class LabelledDraws:
    """The labelled prefix of the draw order, which every estimate is computed from.

    Attributes:
        n_pool: N.
        item_ids, steps: the K usable draws (the first K, all labelled), in order.
        rows: ``(K,)`` pool row of each draw.
        q: ``(K,)`` the probability each was drawn with.
        y: ``(K,)`` its label (class index).
        n_selected: all draws so far.
        n_waiting: labels of later draws that wait for an earlier unlabelled draw.
        first_unlabelled: ``(item id, step)`` of the first unlabelled draw, if any.
        q_share: ``(K,)`` where the session records it (``exact_share``, an adaptive
            design): the share of the uniform in the proposal each draw was made from,
            chosen before the draw (the run's lambda; 1 while the design is uniform):
            every remaining item had probability at least ``q_share / (N - m + 1)``,
            which bounds the exact anytime CS's bets (:func:`exact_proposal_bound`). None: the
            session's least share (``q_floor``) bounds every draw.
        q_least: ``(K,)`` where the session uses it (``exact_least``, an adaptive design
            with a blind-spot pass): each draw's least proposal over the items it could
            draw, ``min_{S_m} q_m(i)``, replayed from the design's history (known before
            the draw), a tighter bound on the draw's weight than the share's (an item
            the design thinks informative is drawn well above its uniform share).
            None: not used.
    """

    n_pool: int
    item_ids: tuple[str, ...]
    steps: tuple[int, ...]
    rows: np.ndarray
    q: np.ndarray
    y: np.ndarray
    n_selected: int
    n_waiting: int = 0
    first_unlabelled: tuple[str, int] | None = None
    q_share: np.ndarray | None = None
    q_least: np.ndarray | None = None

    @property
    def k(self) -> int:
        """K, the usable labels."""
        return int(self.rows.size)


def exact_proposal_bound(draws: LabelledDraws, q_floor: float | None) -> dict[str, Any]:
    """The proposal bound of the exact anytime CS of ``draws`` (keywords of
    :func:`activetest.stats.betting.exact_cs`): ``q_floor`` (every draw's proposal gave
    each remaining item at least ``q_floor / (N - m + 1)``), or where the draws record
    their own uniform share (:attr:`LabelledDraws.q_share`) the per-draw ``q_min =
    max(q_floor, share_m) / (N - m + 1)``, known before each draw (the share is chosen
    from the earlier labels), so the bets stay predictable and the CS exact. Where the
    draws carry each one's least proposal over the items it could draw
    (:attr:`LabelledDraws.q_least`, equally known before the draw) the bound is the
    larger of the two, the least proposal shrunk by ``1e-9`` of itself for rounding
    (both hold: the largest lower bound is one); not where a labelled draw's own
    probability is below it (draws not made by the replayed proposals: the share's bound
    stays, as a design weight bound a draw exceeds is not used)."""
    if q_floor is None or (draws.q_share is None and draws.q_least is None):
        return {"q_floor": q_floor}
    K = draws.k
    left = draws.n_pool - np.arange(K)
    q_min = np.full(K, float(q_floor)) / left
    if draws.q_share is not None:
        share = np.asarray(draws.q_share, dtype=np.float64)[:K]
        if share.shape != (K,) or not np.all((share > 0) & (share <= 1)):
            raise ValueError(f"q_share must hold {K} shares in (0, 1]")
        q_min = np.maximum(share, q_floor) / left
    if draws.q_least is not None:
        least = np.asarray(draws.q_least, dtype=np.float64)[:K]
        if least.shape != (K,) or not np.all((least >= 0) & (least <= 1)):
            raise ValueError(f"q_least must hold {K} probabilities")
        if least_covered(draws) == K:
            q_min = np.maximum(q_min, least * (1.0 - 1e-9))
    return {"q_min": q_min}


def least_covered(draws: LabelledDraws) -> int:
    """How many leading draws were made with at least their least proposal
    (:attr:`LabelledDraws.q_least`): up to the first whose own probability is below it
    (less ``1e-6`` of it for rounding; that draw was not made by the replayed proposals);
    K where every one was, or where the draws carry none."""
    K = draws.k
    if draws.q_least is None:
        return K
    least = np.asarray(draws.q_least, dtype=np.float64)[:K]
    below = np.asarray(draws.q, dtype=np.float64)[:K] < least * (1.0 - 1e-6)
    return int(np.argmax(below)) if below.any() else K


def first_draws(draws: LabelledDraws, k: int) -> LabelledDraws:
    """The first ``k`` of ``draws`` (every per-draw array cut to them), as an estimate
    made when those were the labelled draws has them."""
    def cut(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else np.asarray(a)[:k]

    return replace(draws, item_ids=draws.item_ids[:k], steps=draws.steps[:k],
                   rows=draws.rows[:k], q=draws.q[:k], y=draws.y[:k],
                   q_share=cut(draws.q_share), q_least=cut(draws.q_least))


def exact_by_own_draws(draws: LabelledDraws,
                       curve: Callable[[LabelledDraws], tuple[np.ndarray, np.ndarray]]
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``, each ``(K,)``: an exact anytime CS at every count 1..K as the
    estimate at that count has it, made from that count's draws alone. ``curve(d)`` is
    the CS at every count of draws ``d`` under the estimate's rule, which bounds the
    draws by their least proposals (:func:`exact_proposal_bound`) only where every one
    of them is within it: one later draw below its least proposal would otherwise put
    the share's bound on every earlier count too. The counts up to
    :func:`least_covered` are ``curve`` of those draws, the later ones ``curve`` of all
    (the CS is a running one: its value at count k depends on the first k draws only)."""
    c = least_covered(draws)
    if c in (0, draws.k):
        return curve(draws)
    low, high = curve(first_draws(draws, c))
    all_low, all_high = curve(draws)
    return (np.concatenate([np.asarray(low, float), np.asarray(all_low, float)[c:]]),
            np.concatenate([np.asarray(high, float), np.asarray(all_high, float)[c:]]))


def bootstrap_rng(seed: int, k: int, name: str) -> np.random.Generator:
    """Deterministic per (session seed, labels, quantity): the same call, the same interval."""
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, k,
                                                         zlib.crc32(name.encode())]))


def value_range(metric: str, loss_bound: float | None = None) -> tuple[float, float]:
    """The range every pool risk of ``metric`` lies in: ``[0, 1]`` for the error rate
    (and a graded task's ``1 - score``), ``[0, loss_bound]`` for the log loss
    (``loss_bound``: the largest loss any pool item can have; unknown: infinite)."""
    if metric == "error_rate":
        return 0.0, 1.0
    return 0.0, math.inf if loss_bound is None else float(loss_bound)


def difference_range(metric: str, bound_target: float | None = None,
                     bound_other: float | None = None) -> tuple[float, float]:
    """The range of ``risk(target) - risk(other)``: ``[-B_other, B_target]`` with each
    loss's :func:`value_range` (``[-1, 1]`` for the error rate)."""
    return -value_range(metric, bound_other)[1], value_range(metric, bound_target)[1]


def clip_interval(low: float, high: float, estimate: float,
                  bounds: tuple[float, float] | None) -> tuple[float, float]:
    """``[low, high]`` kept within ``bounds`` (the quantity's possible values), which
    cannot lose coverage; the interval always keeps the estimate itself (an unbiased
    estimate may fall outside the range at a few labels: it is then an end)."""
    if bounds is None:
        return low, high
    lo, hi = bounds
    return max(low, min(lo, estimate)), min(high, max(hi, estimate))


def clip_result(result: BootstrapResult, bounds: tuple[float, float] | None
                ) -> BootstrapResult:
    """A bootstrap result with its interval clipped by :func:`clip_interval`."""
    low, high = clip_interval(result.low, result.high, result.estimate, bounds)
    if (low, high) == (result.low, result.high):
        return result
    return replace(result, low=low, high=high)


def sure_risk_curve(losses: np.ndarray, rows: np.ndarray, n_pool: int,
                    bound: float | None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(low, high)``, each ``(K,)``: after each of the K labelled draws, the bounds the
    pool's mean loss holds surely, whatever the unlabelled items are:

        low_k = sum_{j<=k} L_j / N,   high_k = (sum_{j<=k} L_j + (N - k) B) / N

    with every pool item's loss in ``[0, B]`` (``bound``: 1 for the error rate and a
    graded task's ``1 - score``; a log loss's largest possible loss where known). The
    bounds are nested (each label moves ``low`` up and ``high`` down), so cutting an
    interval to them at every label count keeps a running intersection one, and cannot
    lower any interval's coverage: the risk lies within them with certainty, given the
    labels. On a pool of 1e6 they are the whole range; on 40 items with 32 labelled and
    6 errors the error rate is within [0.15, 0.35] however the 8 others turn out.

    None where no bound is known (or it is not finite), where a labelled loss lies
    outside ``[0, B]`` (then ``B`` is not every item's bound), or where a pool row was
    drawn twice (the labelled sum would count it twice)."""
    if bound is None or not math.isfinite(float(bound)):
        return None
    L = np.asarray(losses, dtype=np.float64)
    r = np.asarray(rows, dtype=np.int64)
    B, N, K = float(bound), int(n_pool), L.size
    tol = 1e-9 * max(1.0, B)
    if K == 0 or r.size != K or np.unique(r).size != K or K > N \
            or not np.all(np.isfinite(L)) or L.min() < -tol or L.max() > B + tol:
        return None
    return sure_bounds_of_runs(np.clip(L, 0.0, B), N, B)


def sure_bounds_of_runs(losses: np.ndarray, n_pool: int, bound: float = 1.0
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The formula of :func:`sure_risk_curve` along the last axis of ``losses`` (e.g.
    simulated runs x draws, each run's draws distinct pool items in order, every loss in
    ``[0, bound]``), without its checks: ``(low, high)`` of the same shape, the labelled
    losses' running sum over ``n_pool``, and that plus ``(n_pool - k) bound`` over
    ``n_pool`` after the k-th draw."""
    seen = np.cumsum(np.asarray(losses, dtype=np.float64), axis=-1)
    rest = (int(n_pool) - np.arange(1, seen.shape[-1] + 1)) * float(bound)
    return seen / n_pool, (seen + rest) / n_pool


#: The sure bounds cut an interval only where that removes at least this share of its
#: width: a smaller cut (the lower end of a CS moved from 0 to the few errors labelled
#: over a large pool, e.g. 6 / 400) changes nothing a reader would act on, and a note
#: about it would be noise. Either way the interval is valid.
#:
#: Where no interval of an estimate is cut by this share, the bounds are not in force:
#: no output shows them (no note, no ``sure_low``/``sure_high``), so an interval reaching
#: past them contradicts nothing a reader sees. E.g. the README's inspect recipe at 44 of
#: 300 labelled, 39 errors: the error rate is surely at most 295/300 = 0.98333; the
#: anytime CS [0.6928, 0.98667] would lose 1% of its width and the fixed-budget interval
#: [0.7482, 1.0] 6.6%, so neither is cut and nothing names the bound. The exact anytime
#: CS there ends at 0.98333 on its own (betting without replacement knows the same
#: finite pool); it is its own interval, not the bound shown, and the two CS are each
#: valid. Once the bounds cut one interval they are said, and every interval of that
#: estimate is then cut to them (:func:`sure_cut_in_force`), so none reaches past a
#: bound that is shown. Cutting below this share as well would change the numbers of
#: sessions that record ``sure_bounds`` (tests/session/test_old_sessions.py) for a
#: reader gain of nothing: a CS end moved by under a tenth of its width.
SURE_CUT_SHARE = 0.1


def cut_to_sure(low: float, high: float, sure_low: float, sure_high: float
                ) -> tuple[float, float]:
    """``[low, high]`` intersected with the sure bounds ``[sure_low, sure_high]`` where
    that narrows it by at least :data:`SURE_CUT_SHARE` of its width (else unchanged);
    where they do not meet (an interval that missed, on a run where it fails) the sure
    bounds themselves, which hold (:func:`cut_to_sure_arrays` of one interval)."""
    lo, hi = cut_to_sure_arrays(low, high, sure_low, sure_high)
    return float(lo), float(hi)


def cut_to_sure_arrays(low: np.ndarray, high: np.ndarray, sure_low: np.ndarray,
                       sure_high: np.ndarray, force: np.ndarray | bool = False
                       ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cut_to_sure` elementwise (any shapes that broadcast, e.g. runs x budgets);
    where ``force`` (:func:`sure_cut_in_force`: the bounds cut another interval of the
    same estimate there, and are said; a paired difference's sure bounds always)
    intersected whatever share it removes."""
    lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    s_lo, s_hi = np.asarray(sure_low, dtype=np.float64), np.asarray(sure_high, dtype=np.float64)
    new_lo, new_hi = np.maximum(lo, s_lo), np.minimum(hi, s_hi)
    width = hi - lo
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(width) & (new_hi - new_lo > (1.0 - SURE_CUT_SHARE) * width)
    keep &= ~np.asarray(force, dtype=bool)
    miss = new_lo > new_hi
    out_lo = np.where(miss, s_lo, np.where(keep, lo, new_lo))
    out_hi = np.where(miss, s_hi, np.where(keep, hi, new_hi))
    return out_lo, out_hi


def sure_cut_in_force(fixed_low: np.ndarray, fixed_high: np.ndarray, cs_low: np.ndarray,
                      cs_high: np.ndarray, sure_low: np.ndarray, sure_high: np.ndarray,
                      claims: np.ndarray | bool) -> np.ndarray:
    """Where the sure bounds are in force for one estimate (elementwise): where
    :func:`cut_to_sure` cuts its fixed-budget interval, or its CS where the CS is claimed
    (``claims``). There the bounds are said, and every interval of the estimate (the
    exact anytime CS too) is intersected with them, even by less than :data:`SURE_CUT_SHARE`
    of its width: an interval reaching beyond what the note calls sure, beside it, reads
    as a contradiction (QA: "surely within [0.2250, 0.4250]" beside a fixed-budget
    interval [0.2241, 0.3534] said to be cut to it)."""
    f_lo, f_hi = cut_to_sure_arrays(fixed_low, fixed_high, sure_low, sure_high)
    c_lo, c_hi = cut_to_sure_arrays(cs_low, cs_high, sure_low, sure_high)
    fixed_cut = (f_lo != np.asarray(fixed_low, float)) | (f_hi != np.asarray(fixed_high, float))
    cs_cut = (c_lo != np.asarray(cs_low, float)) | (c_hi != np.asarray(cs_high, float))
    return fixed_cut | (np.asarray(claims, dtype=bool) & cs_cut)


@dataclass(frozen=True)
class FewErrors:
    """The few-errors rule of a session's error rate (:mod:`activetest.stats.fewerrors`,
    config ``clt_min_errors``) on its labelled draws.

    Attributes:
        min_errors: the errors (and labels without one) a CLT interval needs.
        few: ``(K,)`` True at the label counts where the exact anytime CS stands in.
        exact_low, exact_high: ``(K,)`` the exact (betting) CS of the estimate.
        reason: why the exact anytime CS stands in after all K labels (None: it does not).
    """

    min_errors: int
    few: np.ndarray
    exact_low: np.ndarray
    exact_high: np.ndarray
    reason: str | None


@dataclass(frozen=True)
class SureBounds:
    """Bounds of a paired difference that hold surely (:func:`sure_difference`).

    Attributes:
        rest: the most the unlabelled items could add, ``sum B_i`` over them (for two
            error rates: how many unlabelled items the two predictions differ on); the
            bounds are ``(sum of the labelled differences -+ rest) / N``.
        binding: the fixed-budget interval shown IS these bounds (both ends).
        low, high: the bounds themselves.
    """

    rest: float
    binding: bool
    low: float = -math.inf
    high: float = math.inf


#: Below this width a fixed-budget interval is a point (an SE of 0 gives 1e-12).
POINT_WIDTH = 1e-9


@dataclass(frozen=True)
class DifferenceFloor:
    """The model's parts of a paired difference's variance floor at each labelled draw
    (:func:`activetest.session.estimate.difference_floors`): ``second`` ``(K,)`` the
    weighted second moment ``sum_{S_m} E[d_i^2] / q_m(i)`` and ``model_rest`` ``(K,)`` the
    remaining items' total ``sum_{S_m} E[d_i]``, under the surrogate's label distribution;
    ``drawn_second`` ``(K,)`` the model's ``E[d_i^2]`` at each labelled draw;
    ``pool_second`` its mean over the whole pool (the scale's prior).
    """

    second: np.ndarray
    model_rest: np.ndarray
    drawn_second: np.ndarray
    pool_second: float

    def variance(self, values: np.ndarray, q: np.ndarray, n_pool: int) -> np.ndarray:
        """``(K,)`` the floor of each draw's ``N^2 Var(theta_m | past)``, the remaining
        total estimated from the labelled ``values`` and the second moments scaled by
        what the labels showed (:func:`activetest.stats.model_floor.
        labelled_mean_floor`)."""
        from activetest.stats.model_floor import labelled_mean_floor

        return labelled_mean_floor(self.second, self.model_rest, values, q, n_pool,
                                   drawn_second=self.drawn_second,
                                   prior_second=self.pool_second)


@dataclass(frozen=True)
class VarianceFloors:
    """A fixed proposal's model variance of each draw (``(K,)`` arrays of
    ``N^2 Var(theta_m | past)``, :func:`~activetest.stats.proposal.floored_model_var`),
    the floor of the intervals' variance (:func:`activetest.session.estimate.
    variance_floors`).

    Attributes:
        metrics: metric -> the target's.
        others: compared target spec -> its error rate's.
        differences: compared target spec -> metric -> the paired difference's (target
            minus it) :class:`DifferenceFloor`, from a label model's moments of the
            difference (:mod:`activetest.stats.model_floor`): any proposal, adaptive
            designs too.
    """

    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)
    others: Mapping[str, np.ndarray] = field(default_factory=dict)
    differences: Mapping[str, Mapping[str, DifferenceFloor]] = field(default_factory=dict)
