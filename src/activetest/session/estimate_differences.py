"""Paired differences of two targets on the same labels: the exact anytime CS inputs of the
few-differences rule, the floor of its variance and the bounds a difference holds surely
(split out of :mod:`activetest.session.estimate`, which uses and re-exports them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from activetest.session.records import (
    AnytimeInterval,
)

if TYPE_CHECKING:
    pass
from activetest.session.estimate_base import (
    DifferenceFloor,
    FewErrors,
    LabelledDraws,
    SureBounds,
    cut_to_sure_arrays,
    exact_by_own_draws,
    exact_proposal_bound,
)

__all__ = [
    "DifferenceMoments",
    "difference_few",
    "difference_few_inputs",
    "difference_floors",
    "difference_moments_of",
    "sure_difference",
]


@dataclass(frozen=True)
class DifferenceMoments:
    """Each paired difference's moments over the pool under the surrogate's label
    distribution (:func:`activetest.stats.model_floor.difference_moments`), one row per
    ``(compared spec, metric)`` in ``keys``: ``mean`` and ``second`` ``(R, N)``."""

    keys: tuple[tuple[str, str], ...]
    mean: np.ndarray
    second: np.ndarray


def difference_moments_of(metrics: Sequence[str], *, surrogate_pool: np.ndarray | None,
                          target_pool: np.ndarray | None,
                          compared: Mapping[str, np.ndarray]) -> DifferenceMoments | None:
    """:class:`DifferenceMoments` of the target against each compared model (``(N, C)``
    log-probs, both known on the pool) for each metric, computed once per command (the
    blind spot's pass sums ``second`` under each draw's proposal for the floor). None
    without the surrogate or the target on the whole pool, or nothing compared."""
    from activetest.stats.model_floor import class_losses, difference_moments

    if surrogate_pool is None or target_pool is None or not compared \
            or not np.all(np.isfinite(target_pool)):
        return None
    keys: list[tuple[str, str]] = []
    H, X = [], []
    for spec, other in compared.items():
        for metric in metrics:
            h, x = difference_moments(surrogate_pool, class_losses(metric, target_pool),
                                      class_losses(metric, other))
            keys.append((spec, metric))
            H.append(h)
            X.append(x)
    if not keys:
        return None
    return DifferenceMoments(tuple(keys), np.stack(H), np.stack(X))


def difference_few_inputs(losses: np.ndarray, other_losses: np.ndarray, draws: LabelledDraws,
                          min_errors: int | None, *, q_floor: float | None,
                          level: float = 0.95, item_bounds: np.ndarray | None = None,
                          proposal: tuple[np.ndarray, float] | None = None,
                          weight_bound: np.ndarray | None = None,
                          bound: float | None = 1.0
                          ) -> FewErrors | None:
    """:class:`FewErrors` of the paired difference ``losses - other_losses`` of two
    targets' losses (``(K,)`` each, at the same labelled draws; every difference within
    ``[-bound, bound]``: 1 for two error rates): the exact anytime CS of the difference
    (:func:`~activetest.stats.betting.paired_difference_exact_cs`, plain LURE as the
    difference's estimate is) stands in while fewer than ``min_errors`` labels differ from
    the most common difference (:func:`~activetest.stats.fewerrors.few_differences`; for
    a log loss: while fewer labelled items show the two losses differ at all, where two
    targets that agree on every labelled item had a point interval at 0); None without a
    rule or a proposal floor. ``bound`` None (a log loss whose difference is not bounded:
    the compared model was not scored on the pool): no exact anytime CS exists, and while the rule
    holds the intervals are the whole range (``-inf``, ``inf`` here).

    ``item_bounds`` (``(N,)`` ``|d_i| <= B_i``, a model compared at creation) and
    ``proposal`` (the fixed acquisition's ``(scores, floor)``): the exact anytime CS bounds each
    draw by the items the proposal could draw and their bounds
    (:func:`~activetest.stats.proposal.floored_weight_bound`) and is intersected with
    the sure bounds, instead of bounding every draw by the floor (about +-1 wide for
    many labels: the floor's items weigh ``1 / q_floor``). ``weight_bound`` (an adaptive
    design's, with ``item_bounds``: ``(J,)`` for its first J <= K draws,
    :func:`~activetest.stats.blindspot_replay.design_weight_bounds`) does the same for a
    design's proposals, the floor's bound standing in after the J-th draw (the exact anytime CS
    is used only while few labels differ: a prefix); with bounds and neither, the sure
    bounds only. A bound a labelled draw exceeds (the draws were not made by that
    proposal) is used only before that draw: from it on, the floor's stands in, so that
    each count's CS is the one the estimate at that count has (made from its labels
    alone; a later draw does not change an earlier count's)."""
    from activetest.stats.fewerrors import few_differences, few_differences_reason

    La = np.asarray(losses, dtype=np.float64)
    Lb = np.asarray(other_losses, dtype=np.float64)
    if min_errors is None or q_floor is None or La.size == 0:
        return None
    d = La - Lb
    if bound is None:
        reason = few_differences_reason(d, int(min_errors))
        if reason is not None:
            reason = reason.replace("exact interval: ", "no interval: ", 1) + (
                "; the difference has no known bound (the compared model's losses are "
                "known on the labelled items only: compare it at creation, init --compare, "
                "to bound it)")
        inf = np.full(La.size, np.inf)
        return FewErrors(int(min_errors), few_differences(d, int(min_errors)), -inf, inf,
                         reason)
    if not bound > 0.0:  # the two models' losses agree on every item: the difference is 0
        # surely (QA: the exact anytime CS of a range [-0, 0] failed every estimate of the session)
        zero = np.zeros(La.size)
        return FewErrors(int(min_errors), few_differences(d, int(min_errors)), zero,
                         zero.copy(), few_differences_reason(d, int(min_errors)))

    def curve(dr: LabelledDraws) -> tuple[np.ndarray, np.ndarray]:
        """The exact anytime CS at every count of the draws ``dr`` (a prefix)."""
        return _difference_exact(La[:dr.k], Lb[:dr.k], dr, q_floor=q_floor, level=level,
                                 item_bounds=item_bounds, proposal=proposal,
                                 weight_bound=weight_bound, bound=float(bound))

    # each count's CS as the estimate at that count has it: a later draw below its least
    # proposal (an adaptive design's) does not change an earlier count's
    low, high = exact_by_own_draws(draws, curve)
    return FewErrors(int(min_errors), few_differences(d, int(min_errors)), low, high,
                     few_differences_reason(d, int(min_errors)))


def _difference_exact(La: np.ndarray, Lb: np.ndarray, draws: LabelledDraws, *,
                      q_floor: float | None, level: float, item_bounds: np.ndarray | None,
                      proposal: tuple[np.ndarray, float] | None,
                      weight_bound: np.ndarray | None, bound: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``, each ``(K,)``: the exact anytime CS of the paired difference
    ``La - Lb`` at every count of ``draws`` (:func:`difference_few_inputs`, whose
    arguments these are), each draw bounded by the per-draw weight bound as far as the
    draws so far are within it, the floor's bound from the first that is not."""
    from activetest.stats.betting import paired_difference_exact_cs

    rest: np.ndarray | None = None
    W: np.ndarray | None = None
    covered = 0  # the leading draws the per-draw bound W holds for
    if item_bounds is not None:
        B = np.asarray(item_bounds, dtype=np.float64)
        rest = B.sum() - np.cumsum(B[draws.rows])
        if proposal is not None:
            W, covered = _weight_bound(proposal, B, draws, La - Lb)
        if not covered and weight_bound is not None:
            W, covered = _design_weight_bound(np.asarray(weight_bound, dtype=np.float64), B,
                                              draws, La - Lb, q_floor)

    def cs(k: int, bounded: bool) -> Any:
        """The exact anytime CS of the first ``k`` draws, each draw bounded by ``W`` or
        by the floor's bound."""
        extra: dict[str, Any] = {} if rest is None else {"rest_bound": rest[:k]}
        return paired_difference_exact_cs(
            La[:k], Lb[:k], draws.q[:k], draws.n_pool, bound_a=bound,
            bound_b=bound, alpha=1.0 - level, **extra,
            **({"q_floor": None, "weight_bound": W[:k]} if bounded and W is not None
               else exact_proposal_bound(draws, q_floor)))

    # each count's CS as the estimate at that count has it (one made from those labels
    # alone): W where it holds for every draw so far, the floor's bound from the first
    # draw it does not (QA: one late draw outside W put the floor's bound on every count
    # of the report's curve)
    if covered:
        ex = cs(covered, True)
        low, high = np.asarray(ex.low, float), np.asarray(ex.high, float)
        if covered < La.size:
            ex = cs(La.size, False)
            low = np.concatenate([low, np.asarray(ex.low, float)[covered:]])
            high = np.concatenate([high, np.asarray(ex.high, float)[covered:]])
    else:
        ex = cs(La.size, False)
        low, high = np.asarray(ex.low, float), np.asarray(ex.high, float)
    return low, high


def difference_few(metric: str, losses: np.ndarray, other_losses: np.ndarray,
                   draws: LabelledDraws, min_errors: int | None, *, q_floor: float | None,
                   level: float = 0.95, item_bounds: np.ndarray | None = None,
                   proposal: tuple[np.ndarray, float] | None = None,
                   weight_bound: np.ndarray | None = None) -> FewErrors | None:
    """:func:`difference_few_inputs` of one metric's paired difference as the estimate
    and the report's curve both take it (one rule, so that every label count of the
    curve is the estimate's at that count): two error rates differ by at most 1 an item;
    a log loss's difference by the largest of ``item_bounds`` (a model compared at
    creation), else by nothing known (``bound`` None)."""
    bound = 1.0 if metric == "error_rate" else (
        None if item_bounds is None else float(np.max(item_bounds, initial=0.0)))
    return difference_few_inputs(losses, other_losses, draws, min_errors, q_floor=q_floor,
                                 level=level, item_bounds=item_bounds, proposal=proposal,
                                 weight_bound=weight_bound, bound=bound)


def _covered(W: np.ndarray, item_bounds: np.ndarray, draws: LabelledDraws,
             d: np.ndarray) -> int:
    """How many leading labelled draws the per-draw weight bound ``W`` (``(K,)``) holds
    for: up to the first draw whose own ``|d| / q`` is above it, whose ``|d|`` is above
    its item's bound, or whose bound is not finite (that draw was not made by the
    proposal ``W`` is of). The estimate at a count uses ``W`` only where every draw so far
    is within it, so each count is decided by its own draws, not by later ones."""
    bad = (~np.isfinite(W) | (np.abs(d) / draws.q > W * (1 + 1e-6) + 1e-12)
           | (np.abs(d) > item_bounds[draws.rows] + 1e-12))
    return int(np.argmax(bad)) if bad.any() else int(W.shape[0])


def _design_weight_bound(prefix: np.ndarray, item_bounds: np.ndarray, draws: LabelledDraws,
                         d: np.ndarray, q_floor: float | None
                         ) -> tuple[np.ndarray | None, int]:
    """``(W, covered)``: ``W`` ``(K,)`` an adaptive design's weight bound over its first
    draws (``prefix``), then the floor's ``max B * (N - m) / q_floor`` (0-based draw m:
    every remaining item is drawn with probability at least ``q_floor / (N - m)``), or
    where the draws carry each one's least proposal (:attr:`LabelledDraws.q_least`,
    ``exact_least``) ``max B / q_min_m`` with the per-draw bound of
    :func:`exact_proposal_bound`; ``covered`` the leading draws it holds for
    (:func:`_covered`); ``(None, 0)`` without a floor to continue it."""
    K, J = draws.k, min(prefix.shape[0], draws.k)
    if q_floor is None or not q_floor > 0:
        return None, 0
    m = np.arange(J, K, dtype=np.float64)
    B = float(item_bounds.max(initial=0.0))
    tail = B * (draws.n_pool - m) / float(q_floor) * (1.0 + 1e-9)
    if draws.q_least is not None:  # each draw's own bound (the least proposal, the share)
        tail = B / exact_proposal_bound(draws, q_floor)["q_min"][J:] * (1.0 + 1e-9)
    W = np.concatenate([prefix[:J], tail])
    return W, _covered(W, item_bounds, draws, d)


def _weight_bound(proposal: tuple[np.ndarray, float], item_bounds: np.ndarray,
                  draws: LabelledDraws, d: np.ndarray) -> tuple[np.ndarray, int]:
    """``(W, covered)``: ``W`` ``(K,)`` the
    :func:`~activetest.stats.proposal.floored_weight_bound` of the labelled draws,
    ``covered`` the leading draws it holds for (:func:`_covered`; from the first draw
    whose own ``|d| / q`` is above it, e.g. a session whose stored scores are not the ones
    it drew with, the floor's bound stands in)."""
    from activetest.stats.proposal import floored_weight_bound

    scores, floor = proposal
    W = floored_weight_bound(scores, item_bounds, draws.rows, floor)
    return W, _covered(W, item_bounds, draws, d)


def sure_difference(a: AnytimeInterval, d_loss: np.ndarray, rows: np.ndarray,
                    bounds: np.ndarray) -> tuple[AnytimeInterval, SureBounds]:
    """The paired difference's fixed-budget interval and CS intersected with the bounds
    that hold surely: with ``|d_i| <= B_i`` known on the whole pool, ``N (R_t - R_o)`` is
    the labelled items' sum of d plus the rest's, which lies within ``-+ sum B_i`` over the
    unlabelled items. For two error rates ``B_i = 1[the predictions differ]``: once every
    item where they differ is labelled the difference is known exactly. Where an interval
    misses the sure bounds entirely (possible only on a run where it fails) the sure
    bounds are shown. The bounds are recorded (``sure_low``/``sure_high``) where they cut
    an interval; the report's curve applies this at each label count (``d_loss`` and
    ``rows`` of the first ``k`` draws: the bounds after ``k`` labels)."""
    B = np.asarray(bounds, dtype=np.float64)
    N = B.size
    rest = float(B.sum() - B[np.unique(np.asarray(rows, dtype=np.int64))].sum())
    seen = float(np.sum(d_loss))
    lo, hi = (seen - rest) / N, (seen + rest) / N

    def cut(low: float, high: float) -> tuple[float, float]:
        c_low, c_high = cut_to_sure_arrays(low, high, lo, hi, force=True)
        return float(c_low), float(c_high)

    f_low, f_high = cut(a.fixed_low, a.fixed_high)
    c_low, c_high = cut(a.cs_low, a.cs_high)
    cuts = (f_low, f_high, c_low, c_high) != (a.fixed_low, a.fixed_high, a.cs_low, a.cs_high)
    return (replace(a, fixed_low=f_low, fixed_high=f_high, cs_low=c_low, cs_high=c_high,
                    sure_low=lo if cuts else a.sure_low, sure_high=hi if cuts else a.sure_high),
            SureBounds(rest, (f_low, f_high) == (lo, hi), lo, hi))


def difference_floors(metrics: Sequence[str], draws: LabelledDraws, *,
                      surrogate_pool: np.ndarray | None, target_pool: np.ndarray | None,
                      compared: Mapping[str, np.ndarray], acquisition: str | None,
                      proposal: tuple[np.ndarray, float] | None, sampler: Any = None,
                      moments: DifferenceMoments | None = None,
                      second_sums: np.ndarray | None = None
                      ) -> dict[str, dict[str, DifferenceFloor]]:
    """compared spec -> metric -> the :class:`DifferenceFloor` of the paired difference
    at each labelled draw (:mod:`activetest.stats.model_floor`): the surrogate's model of
    the difference (its label distribution over both targets' losses, both known on the
    pool: ``compared`` holds each compared model's ``(N, C)`` log-probs) under the
    proposal each draw was made from: an adaptive design's replayed from its history
    (``sampler``: its ``design`` and ``state()``), a fixed acquisition's floored proposal
    (``proposal``: its ``(scores, floor)``) or uniform sampling's. The estimate takes
    ``max(0, second moment - (remaining total)^2)`` with the total estimated from the
    labels (:meth:`DifferenceFloor.variance`) as a floor of each draw's variance.

    Why: a design that draws for the target's own loss seldom draws the items where the
    compared model alone is confidently wrong, so the difference's rare large values
    are missing from most runs' labels, with a low estimate and a low SE at once (QA:
    the default design's anytime CS of a log-loss difference covered 0.78-0.90, its
    fixed-budget interval 0.77 at 30 labels; docs/robustness.md). The surrogate sees
    where the two targets disagree, so its model knows those values exist.

    Empty with fewer than 2 labels, without the surrogate or the target on the whole
    pool, or for a fixed acquisition whose proposal is not given.

    ``moments``: :func:`difference_moments_of` of these arguments, if computed already;
    ``second_sums``: ``(R, K)`` an adaptive design's weighted second moments at its K
    labelled draws, from the blind spot's pass over them
    (:attr:`activetest.session.blindspot.BlindSpotPass.second_sums`: continued from the
    session's checkpoint, so an estimate pays for the draws new since the last, not for
    all of them); without them the design is replayed from the first draw
    (:func:`activetest.stats.model_floor.design_second_sums`, the same numbers)."""
    from activetest.stats.model_floor import design_second_sums, uniform_model_var
    from activetest.stats.proposal import floored_model_vars

    K = draws.k
    if K < 2:
        return {}
    if sampler is None and proposal is None and acquisition != "uniform":
        return {}
    if moments is None:
        moments = difference_moments_of(metrics, surrogate_pool=surrogate_pool,
                                        target_pool=target_pool, compared=compared)
    if moments is None:
        return {}
    keys, H, X = moments.keys, moments.mean, moments.second
    rows = [int(i) for i in draws.rows]
    zero = np.zeros(draws.n_pool)  # the second moments alone: sum x / q (no mean term)
    if sampler is not None and second_sums is not None:
        if second_sums.shape != (len(keys), K):
            raise ValueError(f"second_sums has shape {second_sums.shape}, expected "
                             f"{(len(keys), K)}")
        second = second_sums
    elif sampler is not None:
        st = sampler.state()
        acq = [int(i) for i in st.acquired[:K]]
        second = design_second_sums(sampler.design, acq, X, labels=st.labels[:K],
                                    losses=st.losses[:K], n_known=st.n_known[:K])
    elif proposal is not None and acquisition != "uniform":
        second = floored_model_vars(proposal[0], proposal[1], rows,
                                    np.zeros_like(X), X)
    else:
        second = np.stack([uniform_model_var(draws.n_pool, rows, zero, x) for x in X])
    out: dict[str, dict[str, DifferenceFloor]] = {}
    r = np.asarray(rows, dtype=np.int64)
    for (spec, metric), h, x, s2 in zip(keys, H, X, second, strict=True):
        rest = h.sum() - np.concatenate([[0.0], np.cumsum(h[r])[:-1]])
        out.setdefault(spec, {})[metric] = DifferenceFloor(
            np.asarray(s2, dtype=np.float64), rest, x[r], float(x.mean()))
    return out
