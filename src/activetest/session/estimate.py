"""Estimates as pure functions of what a session stored: no file, no model, no writes.

:func:`estimate_report` turns the labelled draws (:class:`LabelledDraws`) and the
models' log-probs on them into an :class:`~activetest.session.records.EstimateReport`:
per metric LURE with its bootstrap interval, the (biased) plain mean for
contrast, control-variate LURE where a control exists, the label-noise alarm, the
labels projected for a target width, and paired comparisons of other targets on
the same labels (LURE of the per-item loss difference is unbiased for the
difference). :func:`history` recomputes the estimate at earlier label counts for
the report's curves. Every bootstrap draws from a generator seeded by (session
seed, labels, quantity), so the same call gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from activetest.session.config import SessionConfig
from activetest.session.estimate_base import (
    POINT_WIDTH,
    DesignControls,
    FewErrors,
    LabelledDraws,
    SureBounds,
    VarianceFloors,
    bootstrap_rng,
    clip_interval,
    clip_result,
    cut_to_sure,
    cut_to_sure_arrays,
    difference_range,
    exact_by_own_draws,
    exact_proposal_bound,
    sure_cut_in_force,
    sure_risk_curve,
    value_range,
)
from activetest.session.estimate_differences import (
    difference_few,
    difference_few_inputs,
    difference_floors,
    sure_difference,
)
from activetest.session.estimate_notes import (
    COMPARE_HINT,
    COMPARE_NOTE,
    _cs_misses,
    _difference_outside,
    _exact_line,
    _warnings,
    blind_spot_notes,
    exact_note,
    fixed_beyond_cs_note,
    fixed_beyond_line,
    metric_sure_line,
    no_spread_line,
    no_spread_note,
    outside_cs_note,
    outside_note,
    partial_credit_note,
    point_note,
    sure_line,
    sure_risk_line,
)
from activetest.session.options import check_level as options_check_level
from activetest.session.options import check_n_boot, check_target_width
from activetest.session.paired_bootstrap import at_uniform_rate, paired_bootstraps
from activetest.session.records import (
    METRICS,
    AnytimeInterval,
    Comparison,
    EstimateReport,
    FlaggedItem,
    MetricEstimate,
)
from activetest.session.store import EstimateRow
from activetest.stats import (
    BootstrapResult,
    bootstrap,
    fixed_interval,
    labels_for_width,
    log_loss,
    lure_curve,
    lure_terms,
    uniform_mean_curve,
    zero_one_loss,
)
from activetest.stats.blindspot import BlindSpotCurve
from activetest.stats.confseq import MIN_LABELS, cs_claimed

if TYPE_CHECKING:
    from activetest.session.blindspot import SessionBlindSpot

__all__ = [
    "COMPARE_HINT",
    "COMPARE_NOTE",
    "POINT_WIDTH",
    "DesignControls",
    "FewErrors",
    "IntervalCurves",
    "KindInputs",
    "LabelledDraws",
    "NoiseRule",
    "SureBounds",
    "VarianceFloors",
    "blind_spot_notes",
    "bootstrap_rng",
    "check_level",
    "clip_interval",
    "clip_result",
    "controls",
    "cut_to_sure",
    "cut_to_sure_arrays",
    "cv_same_as_lure",
    "difference_few",
    "difference_few_inputs",
    "difference_floors",
    "difference_range",
    "estimate_report",
    "estimate_stale",
    "exact_note",
    "few_errors_inputs",
    "fixed_beyond_cs_note",
    "fixed_proposal",
    "history",
    "interval_curves",
    "metric_sure_line",
    "no_spread_note",
    "noise_rule",
    "outside_cs_note",
    "outside_note",
    "partial_credit_note",
    "per_item_loss",
    "point_note",
    "q_floor",
    "session_estimate",
    "sure_difference",
    "sure_line",
    "sure_risk_curve",
    "sure_risk_line",
    "value_range",
]



@dataclass(frozen=True)
class NoiseRule:
    """The label-noise alarm: flag labels the target (``any``: or; ``all``: and) the
    surrogate finds very unlikely."""

    target_nll: float = 5.0
    surrogate_nll: float = 5.0
    rule: str = "any"

    def hits(self, target_nll: np.ndarray, surrogate_nll: np.ndarray) -> np.ndarray:
        """Boolean mask of flagged labels."""
        t, s = target_nll > self.target_nll, surrogate_nll > self.surrogate_nll
        return t | s if self.rule == "any" else t & s


def per_item_loss(metric: str, logprobs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Log loss or 0-1 loss of each row's prediction against its label."""
    if metric == "log_loss":
        return log_loss(logprobs, labels)
    return zero_one_loss(logprobs, labels)


def controls(metrics: Sequence[str], surrogate_lp: np.ndarray | None,
             target_lp: np.ndarray | None) -> dict[str, np.ndarray]:
    """Per metric, the control variate ``h`` over the whole pool (see MetricEstimate.cv).

    ``h`` is the surrogate's expected loss of the target; without target
    predictions on the pool (PE; rows of NaN) it is the surrogate's expected loss
    of itself.
    """
    from activetest.stats import control_values

    if surrogate_lp is None:
        return {}
    if target_lp is not None and not np.all(np.isfinite(target_lp)):
        target_lp = None
    out = {}
    for metric in metrics:
        loss = "log" if metric == "log_loss" else "zero_one"
        out[metric] = control_values(loss, surrogate_logprobs=surrogate_lp,
                                     target_logprobs=target_lp)
    return out


def cv_same_as_lure(metric: str, acquisition: str | None) -> bool:
    """Whether control-variate LURE equals LURE up to the proposal's floor.

    The control is the surrogate's expected loss of the target; CE acquisition
    for log loss draws by exactly that score, so LURE of the control is the pool
    mean of the control wherever the floor is not active, and the two estimates
    differ only by the floor's share (tiny for the default proposal floor). PE
    acquisition likewise: its score, the surrogate's predictive entropy, is the control
    of a PE session (the surrogate's expected log loss of itself; QA: the same number,
    to 5e-16, was printed twice as two estimates).
    """
    return metric == "log_loss" and acquisition in ("ce", "pe")


def estimate_stale(rows: Sequence[EstimateRow], n_usable: int, last_change: int) -> bool:
    """Whether labels changed after the recorded estimate ``rows`` (the last per method).

    Estimates record the label-history id they saw (``details["label_change"]``);
    older records fall back to comparing the labels used with those usable now.
    """
    if not rows:
        return False
    for row in rows:
        seen = row.details.get("label_change")
        if isinstance(seen, int):
            if seen < last_change:
                return True
        elif row.n_labels != n_usable:
            return True
    return False


def few_errors_inputs(losses: np.ndarray, draws: LabelledDraws, min_errors: int | None, *,
                      q_floor: float | None, level: float = 0.95,
                      design: DesignControls | None = None) -> FewErrors | None:
    """:class:`FewErrors` of an error rate's ``(K,)`` losses at the labelled draws, with
    the exact anytime CS of the session's estimate (``design``: an adaptive design's controls, as
    :func:`anytime` has them) at every count as the estimate at that count has it, made
    from that count's draws alone (:func:`exact_by_own_draws`); None without a rule
    (``min_errors`` None: a session written before it) or without a proposal floor (no
    exact anytime CS)."""
    from activetest.stats import exact_cs
    from activetest.stats.fewerrors import few_errors, few_errors_reason

    L = np.asarray(losses, dtype=np.float64)
    if min_errors is None or q_floor is None or L.size == 0:
        return None

    def curve(d: LabelledDraws) -> tuple[np.ndarray, np.ndarray]:
        """The exact anytime CS at every count of the draws ``d`` (a prefix)."""
        k = d.k
        extra = {} if design is None else {
            "control": design[0][:k], "control_rest": design[1][:k], "control_low": 0.0,
            "control_high": 1.0}
        ex = exact_cs(L[:k], d.q, d.n_pool, loss_high=1.0, alpha=1.0 - level,
                      **exact_proposal_bound(d, q_floor), **extra)
        return np.asarray(ex.low, float), np.asarray(ex.high, float)

    # each count's CS as the estimate at that count has it (a later draw below its least
    # proposal does not change an earlier count's)
    low, high = exact_by_own_draws(draws, curve)
    return FewErrors(int(min_errors), few_errors(L, int(min_errors)), low, high,
                     few_errors_reason(L, int(min_errors)))


@dataclass(frozen=True)
class IntervalCurves:
    """The estimate with its fixed-budget interval and anytime confidence sequence at
    every budget M = 1..K (arrays ``(K,)``), as the session reports them at K: clipped to
    the quantity's range, the budget-tuned CS, both widened for the blind spot."""

    estimate: np.ndarray
    fixed_low: np.ndarray
    fixed_high: np.ndarray
    cs_low: np.ndarray
    cs_high: np.ndarray
    #: where the anytime CS claims its interval: from 30 labels
    #: (:func:`~activetest.stats.confseq.cs_claimed`), or where the exact anytime CS stands in
    #: (``few``) at that count; elsewhere the outputs show the quantity's whole range
    claimed: np.ndarray
    #: where the sure bounds are in force (:func:`sure_cut_in_force`; None: not asked)
    sure_cut: np.ndarray | None = None


def interval_curves(theta: np.ndarray, N: int, *, level: float = 0.95,
                    model_var: np.ndarray | None = None,
                    value_range: tuple[float, float] | None = None,
                    planned_budget: int | None = None,
                    blind: BlindSpotCurve | None = None,
                    few: FewErrors | None = None,
                    skew_widens_only: bool = False,
                    sure: tuple[np.ndarray, np.ndarray] | None = None) -> IntervalCurves:
    """:class:`IntervalCurves` of the per-draw estimates ``theta`` (``(K,)``): the
    fixed-budget interval (:func:`~activetest.stats.intervals.fixed_interval_curve`) and
    the anytime CS (asymptotic) (:func:`~activetest.stats.confseq.asymptotic_cs`, tuned to
    ``planned_budget``), widened at every budget by ``blind`` and clipped to
    ``value_range``, exactly as :func:`anytime` reports them at K; with ``few`` (the
    error rate's few-errors rule) the exact anytime CS stands in for both at the label counts
    with few errors, and the CS is then intersected over budgets
    (:func:`activetest.stats.fewerrors.switch_to_exact`); ``skew_widens_only`` as in
    :func:`anytime`; ``sure`` (:func:`sure_risk_curve` of the labelled draws) cuts both
    to the bounds the risk holds surely at every label count, as :func:`anytime` does
    at K."""
    from activetest.stats import asymptotic_cs
    from activetest.stats.intervals import fixed_interval_curve

    finite = value_range is not None and all(math.isfinite(x) for x in value_range)
    clip = value_range if finite else None
    fi = fixed_interval_curve(theta, N, level=level, model_var=model_var,
                              skew_widens_only=skew_widens_only)
    cs = asymptotic_cs(theta, N, alpha=1.0 - level, value_range=clip if blind is None else None,
                       model_var=model_var, budget=planned_budget,
                       intersect=blind is None and few is None)
    f_low, f_high = np.asarray(fi.low, float), np.asarray(fi.high, float)
    lo, hi = np.asarray(cs.low, float), np.asarray(cs.high, float)
    if blind is not None:  # widened at every budget, then intersected (budget-tuned CS)
        from activetest.stats.blindspot import widen_cs

        f_low, f_high = f_low - blind.widen_low, f_high + blind.widen_high
        lo, hi = widen_cs(lo, hi, blind, intersect=False)
        if clip is not None:
            lo, hi = np.maximum(lo, clip[0]), np.minimum(hi, clip[1])
        if planned_budget is not None and few is None:
            from activetest.stats.confseq import running_intersection

            lo, hi = running_intersection(lo, hi)
    if few is not None:  # the exact anytime CS where the labels show few errors (stats.fewerrors)
        from activetest.stats.fewerrors import switch_to_exact

        lo, hi = switch_to_exact(lo, hi, few.exact_low, few.exact_high, few.few)
        f_low, f_high = switch_to_exact(f_low, f_high, few.exact_low, few.exact_high, few.few,
                                        intersect=False)
    est = np.asarray(fi.estimate, float)
    clipped = [clip_interval(float(a), float(b), float(e), value_range)
               for a, b, e in zip(f_low, f_high, est, strict=True)]
    f_low = np.array([c[0] for c in clipped])
    f_high = np.array([c[1] for c in clipped])
    # claimed as :func:`anytime` has it: from 30 labels, or the exact anytime CS at that count
    # (a count after the exact phase and before 30 shows the whole range: the CS there
    # is the running intersection with asymptotic intervals not yet claimed)
    claims = np.array([cs_claimed(m, N) for m in range(1, est.size + 1)], dtype=bool)
    if few is not None:
        claims |= np.asarray(few.few, dtype=bool)
    force = None
    if sure is not None:
        force = sure_cut_in_force(f_low, f_high, lo, hi, *sure, claims)
        f_low, f_high = cut_to_sure_arrays(f_low, f_high, *sure, force=force)
        lo, hi = cut_to_sure_arrays(lo, hi, *sure, force=force)
    return IntervalCurves(est, f_low, f_high, lo, hi, claims, force)


def anytime(draws: LabelledDraws, losses: np.ndarray, *, control: np.ndarray | None = None,
            level: float = 0.95, target_width: float | None = None,
            loss_bound: float | None = None, q_floor: float | None = None,
            value_range: tuple[float, float] | None = None,
            design: DesignControls | None = None,
            planned_budget: int | None = None,
            blind: BlindSpotCurve | None = None,
            few: FewErrors | None = None,
            skew_widens_only: bool = False,
            model_var: np.ndarray | None = None,
            sure_bound: float | None = None) -> AnytimeInterval | None:
    """The fixed-budget interval and the confidence sequences of one estimate.

    ``control`` (``(N,)``) gives control-variate LURE; ``design`` (``(g_m, G_m, V_m)``
    per draw, :func:`.draw.design_controls`: V_m the design's own variance prediction,
    a floor for the intervals' variance) an adaptive design's estimate with its own controls and its
    exact anytime CS (control bounded by the loss bound); ``loss_bound`` (every pool
    item's loss lies in ``[0, loss_bound]``) and ``q_floor`` (each remaining item's
    probability is at least ``q_floor / (N - m + 1)``) enable the exact anytime CS;
    ``planned_budget`` tunes the CS to it (None: the normal mixture of older sessions);
    ``blind`` (:func:`.blindspot.session_blind_spots`) widens the fixed-budget interval
    and the CS, at every budget, by what the unexplored items could hide; ``few``
    (:func:`few_errors_inputs`, the error rate of a session recording
    ``clt_min_errors``) puts the exact anytime CS in their place while the labels show few
    errors, and says so (``basis``, ``basis_note``). ``skew_widens_only``: the fixed-budget
    interval's skewness correction may only widen it (a paired difference, whose
    estimated skewness is mostly noise: :mod:`activetest.stats.intervals`).
    ``model_var``: a model's ``N^2 Var(theta_m | past)`` of plain LURE per draw (a fixed
    proposal's, :func:`~activetest.stats.proposal.floored_model_var`), a floor for the
    intervals' variance as an adaptive design's own prediction is. ``sure_bound``: every
    pool item's loss lies in ``[0, sure_bound]``: the fixed-budget interval and the CS
    (and the exact anytime CS) are cut to the bounds the risk holds surely given the labels
    (:func:`sure_risk_curve`: a small pool with most of it labelled), recorded in
    ``sure_low``/``sure_high`` where they cut one. The intervals keep their names (and
    ``basis``): each is still what it was, intersected with a set that holds surely.
    """
    from activetest.stats import (
        adaptive_lure_theta,
        anytime_summary,
        exact_cs,
        fixed_control_rest,
    )

    if draws.k < 2:
        return None
    N, q, alpha = draws.n_pool, draws.q, 1.0 - level
    given_var, model_var = model_var, None
    if design is not None:
        theta = adaptive_lure_theta(losses, q, N, control=design[0], control_rest=design[1])
        model_var = design[2]  # NaN where the design has no model: the observed SE alone
    elif control is None:
        theta = adaptive_lure_theta(losses, q, N)
        model_var = given_var
    else:
        theta = adaptive_lure_theta(losses, q, N, control=control[draws.rows],
                                    control_rest=fixed_control_rest(control, draws.rows))
    finite = value_range is not None and all(math.isfinite(x) for x in value_range)
    summary = anytime_summary(theta, N, target_width=target_width, level=level, alpha=alpha,
                              model_var=model_var, budget=planned_budget,
                              value_range=value_range if finite else None,
                              skew_widens_only=skew_widens_only)
    curves = interval_curves(theta, N, level=level, model_var=model_var,
                             value_range=value_range, planned_budget=planned_budget,
                             blind=blind, few=few, skew_widens_only=skew_widens_only)
    cs_low, cs_high = float(curves.cs_low[-1]), float(curves.cs_high[-1])
    f_low, f_high = summary.fixed_low, summary.fixed_high
    may_stop = summary.may_stop
    if blind is not None:
        from activetest.stats.blindspot import widen

        f_low, f_high = widen(f_low, f_high, blind.at(draws.k))
        may_stop = target_width is not None and cs_high - cs_low <= target_width
    se = float(fixed_interval(theta, N, level=level, model_var=model_var).se)
    fixed_low, fixed_high = clip_interval(f_low, f_high, summary.estimate, value_range)
    exact_low = exact_high = None
    if control is None and loss_bound is not None and q_floor is not None:
        extra = {} if design is None else {
            "control": design[0], "control_rest": design[1], "control_low": 0.0,
            "control_high": float(loss_bound)}
        ex = exact_cs(losses, q, N, loss_high=float(loss_bound), alpha=alpha,
                      **exact_proposal_bound(draws, q_floor),
                      **extra)
        exact_low, exact_high = float(ex.low[-1]), float(ex.high[-1])
    basis = None
    if few is not None:  # the rule of new sessions: the exact anytime CS while few errors
        basis = "exact" if bool(few.few[-1]) else "clt"
        if basis == "exact":
            fixed_low, fixed_high = float(few.exact_low[-1]), float(few.exact_high[-1])
        may_stop = target_width is not None and cs_high - cs_low <= target_width
        if basis == "clt" and not cs_claimed(draws.k, N):
            # the k-th error came before the anytime CS (asymptotic) claims anything: the CS is
            # the exact phase's, held, which the outputs do not show as the CS ("from 30
            # labels"); no stop on it (QA: "you may stop now: the CS is 0.475 wide"
            # beside no CS and "needs about 35 labels")
            may_stop = False
    # The CS is the running intersection over label counts: valid while every interval
    # covers, and it can narrow to a sliver when the latest labels pull the estimate away
    # from what the earlier ones implied (QA: 20 careless labels after 100 gave a CS
    # [0.150, 0.196] around an estimate of 0.2245, and "you may stop now"). A CS that no
    # longer holds its own estimate (clipped to the quantity's range) is no basis to stop.
    outside = _cs_misses(cs_low, cs_high, summary.estimate, value_range, basis)
    # What the labels make sure (a small pool, most of it labelled: QA, 6 errors in 32
    # of 40 items, so the error rate is within [0.15, 0.35], beside a fixed-budget
    # interval [0.124, 0.260]): every interval is cut to it, which cannot lower coverage.
    sure = None if sure_bound is None else sure_risk_curve(losses, draws.rows, N,
                                                           sure_bound)
    sure_low = sure_high = None
    sure_outside = False
    basis_note = None if few is None or basis != "exact" else few.reason
    if sure is not None:
        s_low, s_high = float(sure[0][-1]), float(sure[1][-1])
        claims = bool(curves.claimed[-1])  # the exact anytime CS at this count, or from 30
        in_force = bool(sure_cut_in_force(fixed_low, fixed_high, cs_low, cs_high, s_low,
                                          s_high, claims))

        def cut(lo: float, hi: float) -> tuple[float, float]:
            c_lo, c_hi = cut_to_sure_arrays(lo, hi, s_low, s_high, force=in_force)
            return float(c_lo), float(c_hi)  # (cut_to_sure, with the force)

        new_fixed, new_cs = cut(fixed_low, fixed_high), cut(cs_low, cs_high)
        if in_force:  # every interval then within what the note calls sure
            sure_low, sure_high = s_low, s_high
            tol = 1e-9 * max(1.0, abs(summary.estimate))
            if not s_low - tol <= summary.estimate <= s_high + tol:
                # an unbiased estimate outside what is sure (few labels, heavy weights):
                # no sign of a CS that missed; a note says so, and the record
                outside = False
                sure_outside = True
            may_stop = may_stop or (target_width is not None and claims
                                    and new_cs[1] - new_cs[0] <= target_width)
        fixed_low, fixed_high = new_fixed
        if claims:  # a CS not claimed yet stays the whole range (outputs say "from 30")
            cs_low, cs_high = new_cs
        if exact_low is not None and exact_high is not None:
            exact_low, exact_high = cut(exact_low, exact_high)
    if outside:
        may_stop = False
    need = summary.labels_needed
    if basis == "exact" or (outside and need is not None and need <= draws.k):
        # no projection of an interval not shown: the exact anytime CS stands in (its width
        # follows the errors labelled, not the anytime CS (asymptotic)'s formula: QA, "1 more"
        # beside a 0.78-wide interval), or the CS is narrow enough already but no longer
        # holds its estimate (no basis to stop; the outputs say so)
        need = None
    if need is not None and not se > 0 and draws.k < N:
        # every labelled term the same: no spread to project the CS's width from (QA:
        # "reaches width 0.1 at about 197 labels" from 45 equal log losses)
        need = None
    if need is not None and not may_stop:
        # the projection is of the CS before any widening; one that is not yet narrow
        # enough needs at least one more label, never "0 more"
        need = max(need, draws.k + 1)
    need_sure = False
    if need is not None and not may_stop and sure is not None and target_width is not None:
        # the sure bounds narrow by B / N a label: once they are at most 0.9 of the width
        # asked for (a CS wider than it is then cut, by a tenth or more), and the CS is
        # claimed, it is within the width surely (QA: "at about 39 labels (6 more)" where
        # 36 labels of 40 surely did)
        surely = _sure_labels_for_width(draws.k, N, float(sure_bound), target_width)
        need_sure = surely <= need  # certain then, not a projection (the outputs say so)
        need = min(need, surely)
    if need is not None and may_stop:  # narrow enough now (the sure bounds may make it)
        need = min(need, draws.k)
        need_sure = False
    return AnytimeInterval(se, fixed_low, fixed_high, cs_low, cs_high, exact_low, exact_high,
                           target_width, may_stop if target_width is not None else None,
                           need, basis, basis_note, bool(outside), sure_low, sure_high,
                           need_sure, sure_outside)


def _sure_labels_for_width(k: int, N: int, bound: float, width: float) -> int:
    """The fewest labels (more than ``k``, at most ``N``) at which the anytime CS (asymptotic) is
    surely within ``width`` by the sure bounds alone: claimed (from 30 labels, or a
    census) and the bounds ``(N - m) bound / N`` wide at most ``1 - SURE_CUT_SHARE`` of
    ``width`` (:func:`activetest.session.estimate_base.cut_to_sure` then cuts any CS
    wider than ``width``); ``N`` where none sooner."""
    from activetest.session.estimate_base import SURE_CUT_SHARE

    # (N - m) bound / N <= (1 - share) width  <=>  m >= N - (1 - share) width N / bound;
    # closed form: a loop over m was O(N) per estimate (seconds at 1e7 items)
    if not bound > 0:
        return min(k + 1, N)
    room = (1.0 - SURE_CUT_SHARE) * width * N / bound
    m = N - math.floor(room * (1 + 1e-12)) if math.isfinite(room) else 0
    return int(min(max(k + 1, m, MIN_LABELS), N))


def _metric_estimate(metric: str, draws: LabelledDraws, losses: np.ndarray, hit: np.ndarray,
                     control: np.ndarray | None, *, seed: int, n_boot: int, level: float,
                     target_width: float | None, loss_bound: float | None = None,
                     q_floor: float | None = None, acquisition: str | None = None,
                     design: DesignControls | None = None,
                     planned_budget: int | None = None,
                     blind: SessionBlindSpot | None = None,
                     clt_min_errors: int | None = None,
                     model_var: np.ndarray | None = None,
                     sure_bounds: bool = False,
                     shared_resamples: bool = False) -> MetricEstimate:
    from activetest.stats import adaptive_lure_curve, adaptive_lure_terms

    K, N, q = draws.k, draws.n_pool, draws.q
    if design is not None:  # the adaptive design's estimate, with its own controls
        control = None
        terms = adaptive_lure_terms(losses, q, N, design[0], design[1])
        curve = tuple(float(x) for x in adaptive_lure_curve(losses, q, N, design[0], design[1]))
    else:
        terms = lure_terms(losses, q, N)
        curve = tuple(float(x) for x in lure_curve(losses, q, N))
    bounded = value_range(metric, loss_bound)
    pair = paired_bootstraps(terms, losses, metric=metric, seed=seed, n_boot=n_boot,
                             level=level, shared=shared_resamples,
                             uniform_terms=design is None and at_uniform_rate(q, N))
    raw = pair.active
    active = clip_result(raw, bounded)
    uniform = clip_result(pair.uniform, bounded)
    ucurve = tuple(float(x) for x in uniform_mean_curve(losses))
    without = float(terms[~hit].mean()) if hit.any() and (~hit).any() else None
    needed = None
    if target_width:  # a learning design's later draws vary less than its first
        ratio = 1.0
        if design is not None and K >= 2:
            from activetest.stats import adaptive_lure_theta
            from activetest.stats.projection import future_variance_ratio

            ratio = future_variance_ratio(
                adaptive_lure_theta(losses, q, N, control=design[0], control_rest=design[1]),
                N, model_var=design[2])
        # not capped at the pool: the bootstrap interval has no finite-population factor
        # and need not reach the width within it, which the outputs then say (QA: capped,
        # it read "200 labels (0 more)" beside a 0.18-wide interval at a census)
        needed = labels_for_width(raw, target_width, variance_ratio=ratio,
                                  value_range=bounded)
    cv: BootstrapResult | None = None
    control_mean = None
    if control is not None:
        control_mean = float(control.mean())
        cv_terms = control_mean + lure_terms(losses - control[draws.rows], q, N)
        cv = clip_result(bootstrap(cv_terms, n_boot=n_boot, level=level,
                                   random_state=bootstrap_rng(seed, K, f"cv:{metric}")),
                         bounded)
    # the error rate's few-errors rule (sessions recording clt_min_errors): the exact anytime CS
    # of the session's estimate stands in while the labels show few errors; it covers
    # the same risk, so it stands in for control-variate LURE's intervals too
    few = None if metric != "error_rate" or K < 2 else few_errors_inputs(
        losses, draws, clt_min_errors, q_floor=q_floor, level=level, design=design)
    any_lure = anytime(draws, losses, level=level, target_width=target_width,
                       loss_bound=1.0 if metric == "error_rate" else loss_bound, q_floor=q_floor,
                       value_range=bounded, design=design, planned_budget=planned_budget,
                       blind=blind.estimate if blind is not None and blind.bounded else None,
                       few=few, model_var=model_var,
                       sure_bound=bounded[1] if sure_bounds else None)
    any_cv = None if control is None else anytime(
        draws, losses, control=control, level=level, target_width=target_width,
        value_range=bounded, planned_budget=planned_budget,
        blind=blind.cv if blind is not None and blind.bounded else None, few=few,
        sure_bound=bounded[1] if sure_bounds else None)
    return MetricEstimate(metric, active, uniform, curve, ucurve, without, needed, cv,
                          control_mean, any_lure, any_cv,
                          cv is not None and cv_same_as_lure(metric, acquisition))


def variance_floors(acquisition: str | None, proposal: tuple[np.ndarray, float] | None,
                    pool_controls: Mapping[str, np.ndarray], draws: LabelledDraws,
                    adaptive: bool, others: Mapping[str, np.ndarray] | None = None
                    ) -> VarianceFloors:
    """A fixed proposal's model variance of each draw, the floor of its intervals
    (:func:`~activetest.stats.proposal.floored_model_var`; as an adaptive design's own
    prediction is for its intervals). Only the ``compare`` acquisition's error rates: it
    draws for the difference, ignoring either target's own loss, so a target's error
    rate rests on rare, heavy draws of the items the two agree on, and a run that has met
    none has a low estimate and a low SE at once (QA: the target's and the other's
    fixed-budget intervals covered 0.78-0.81 at 150-200 labels,
    ``benchmarks/coverage_gaps.py``). The model: the surrogate's expected 0-1 loss of
    the target (``pool_controls["error_rate"]``) and of each compared target known on
    the pool (``others``: spec -> ``(N,)``). Empty otherwise.
    """
    if acquisition != "compare" or proposal is None or adaptive or draws.k < 2:
        return VarianceFloors()
    from activetest.stats.proposal import floored_model_vars

    h = pool_controls.get("error_rate")
    named: list[tuple[str | None, np.ndarray]] = [] if h is None else [(None, h)]
    named += list((others or {}).items())
    if not named:
        return VarianceFloors()
    H = np.clip(np.stack([np.asarray(v, float) for _, v in named]), 0.0, 1.0)
    rows = floored_model_vars(proposal[0], proposal[1], draws.rows, H, H)  # one sort
    return VarianceFloors({"error_rate": rows[0]} if h is not None else {},
                          {k: v for (k, _), v in zip(named, rows, strict=True)
                           if k is not None})


def estimate_report(draws: LabelledDraws, *, losses: Mapping[str, np.ndarray],
                    surrogate_nll: np.ndarray, target_nll: np.ndarray | None = None,
                    pool_controls: Mapping[str, np.ndarray],
                    compare: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                    noise: NoiseRule = NoiseRule(), seed: int, n_boot: int = 1000,
                    level: float = 0.95, target_width: float | None = None,
                    loss_bounds: Mapping[str, float] | None = None,
                    q_floor: float | None = None, acquisition: str | None = None,
                    design_controls: Mapping[str, DesignControls] | None = None,
                    planned_budget: int | None = None,
                    blind_spots: Mapping[str, SessionBlindSpot] | None = None,
                    clt_min_errors: int | None = None,
                    difference_bounds: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                    proposal: tuple[np.ndarray, float] | None = None,
                    difference_weight_bounds: Mapping[str, Mapping[str, np.ndarray]]
                    | None = None,
                    floors: VarianceFloors | None = None,
                    other_loss_bounds: Mapping[str, Mapping[str, float]] | None = None,
                    sure_bounds: bool = False,
                    shared_resamples: bool = False,
                    ) -> EstimateReport:
    """Every metric's estimate from the labelled draws.

    Args:
        draws: the usable labelled prefix (K >= 1).
        losses: metric (of :data:`METRICS`) -> ``(K,)`` the target's loss at each
            labelled draw (log loss or 0-1 loss from its class log-probs; for a graded
            task ``1 - score`` of the judgment).
        surrogate_nll, target_nll: ``(K,)`` how unlikely each label is to the surrogate
            and (classification only) to the target, for the label-noise alarm.
        pool_controls: metric -> ``(N,)`` control values (see :func:`controls`).
        compare: other target spec -> metric -> ``(K,)`` its losses at the same draws.
        difference_bounds: other target spec -> metric -> ``(N,)`` the largest
            ``|L_target - L_other|`` each pool item can have: the difference's intervals
            are then intersected with the sure bounds ``(sum of the labelled differences
            -+ sum of the unlabelled items' bounds) / N`` (:func:`sure_difference`).
        proposal: the fixed acquisition's ``(scores, floor)`` the draws were made with
            (None: an adaptive design): with ``difference_bounds``, the difference's
            exact anytime CS bounds each draw by it (:func:`difference_few_inputs`).
        floors: a fixed proposal's model variance of each draw, the floor of its
            intervals (None: :func:`variance_floors` of ``acquisition`` and ``proposal``,
            the target's alone).
        difference_weight_bounds: other target spec -> metric -> an adaptive design's
            weight bound over its first draws (with ``difference_bounds``; the
            ``weight_bound`` of :func:`difference_few_inputs`).
        noise: the label-noise alarm.
        seed, n_boot, level: the bootstraps' seed, resamples and coverage.
        target_width: also project the labels needed for this interval width (by the
            bootstrap, and by the confidence sequence: ``anytime.labels_needed``).
        loss_bounds: metric -> the largest loss any pool item can have (enables the
            exact anytime CS for log loss; the error rate's bound is 1).
        other_loss_bounds: other target spec -> metric -> the same for a compared model
            known on the pool (compared at creation): its risk's intervals, and the lower
            end of the difference's, are kept within what it can take (QA: a compared
            log loss of at most 3.56 had a fixed-budget interval [0, 35.6]).
        q_floor: every remaining item's probability is at least ``q_floor / (N - m + 1)``
            (a proposal floor ``f``, the paper's alpha, gives ``f / (1 + f)``).
        acquisition: the session's acquisition (says whether CV-LURE can differ
            from LURE, see :func:`cv_same_as_lure`).
        design_controls: metric -> ``(g_m, G_m, V_m)`` per labelled draw: an
            adaptive design's controls (the estimate of that metric is then the
            design's ``R_K = sum_m c_m theta_m``; other metrics use its q with g = 0)
            and its own variance prediction (:func:`.draw.design_controls`).
        planned_budget: the session's planned budget (labels), fixed at creation: every
            anytime CS is tuned to it (None: the normal mixture, as sessions created
            before it was recorded were shown).
        blind_spots: metric -> what the items drawn far below the uniform rate could
            hide (:func:`.blindspot.session_blind_spots`): the fixed-budget interval and
            the CS are widened by it, and the report says so.
        sure_bounds: cut every metric's intervals (and a compared target's) to the bounds
            the labels make sure (:func:`sure_risk_curve`, :func:`anytime`'s
            ``sure_bound``; sessions recording ``sure_bounds``; False: as files from
            before it were shown).
        clt_min_errors: the error rate's few-errors rule (:mod:`activetest.stats.fewerrors`;
            None: none, as sessions created before it was recorded were shown): while the
            labels show fewer errors (or labels without one), the exact anytime CS stands in for
            the fixed-budget interval and the CS, and the report says so.
        shared_resamples: the plain mean's bootstrap uses LURE's resamples
            (:mod:`activetest.session.paired_bootstrap`; sessions recording
            ``shared_resamples``; False: each its own, as files from before it were shown).
    """
    target_width = check_target_width(target_width)  # type first (a str, True: QA)
    n_boot = check_n_boot(n_boot)
    unknown = [m for m in losses if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; expected {METRICS}")
    K, N, q, y = draws.k, draws.n_pool, draws.q, draws.y
    s_nll = np.asarray(surrogate_nll, dtype=np.float64)
    t_nll = np.full(K, np.nan) if target_nll is None else np.asarray(target_nll, np.float64)
    hit = noise.hits(np.nan_to_num(t_nll, nan=-np.inf), s_nll)
    flagged = [FlaggedItem(draws.item_ids[j], draws.steps[j], int(y[j]), float(t_nll[j]),
                           float(s_nll[j])) for j in np.flatnonzero(hit)]
    if floors is None:  # the target's (a session passes them, the compared ones too)
        floors = variance_floors(acquisition, proposal, pool_controls, draws,
                                 bool(design_controls))
    out: dict[str, MetricEstimate] = {}
    for metric, loss in losses.items():
        out[metric] = _metric_estimate(metric, draws, np.asarray(loss, dtype=np.float64), hit,
                                       pool_controls.get(metric), seed=seed, n_boot=n_boot,
                                       level=level, target_width=target_width,
                                       loss_bound=(loss_bounds or {}).get(metric),
                                       q_floor=q_floor, acquisition=acquisition,
                                       design=(design_controls or {}).get(metric),
                                       planned_budget=planned_budget,
                                       blind=(blind_spots or {}).get(metric),
                                       clt_min_errors=clt_min_errors,
                                       model_var=floors.metrics.get(metric),
                                       sure_bounds=sure_bounds,
                                       shared_resamples=shared_resamples)
    comparisons: list[Comparison] = []
    notes_cmp: list[str] = []
    for spec, other_losses in (compare or {}).items():
        for metric in losses:
            # The second target's risk and the paired difference, each with its
            # fixed-budget interval (finite-population factor: exact at census) and CS,
            # all kept within the values the risk (difference) can take.
            # its log loss bound: where it is known on the pool (compared at creation)
            o_bound = (other_loss_bounds or {}).get(spec, {}).get(metric)
            o_range = value_range(metric, o_bound)
            d_range = difference_range(metric, (loss_bounds or {}).get(metric), o_bound)
            o_loss = np.asarray(other_losses[metric], dtype=np.float64)
            other = clip_result(bootstrap(lure_terms(o_loss, q, N), n_boot=n_boot, level=level,
                                          random_state=bootstrap_rng(seed, K,
                                                                     f"other:{spec}:{metric}")),
                                o_range)
            d_loss = np.asarray(losses[metric]) - o_loss
            d_terms = lure_terms(d_loss, q, N)
            diff = clip_result(bootstrap(d_terms, n_boot=n_boot, level=level,
                                         random_state=bootstrap_rng(seed, K,
                                                                    f"diff:{spec}:{metric}")),
                               d_range)
            # the few-errors rule (sessions recording it), for the other target's error
            # rate and for the paired difference: the exact anytime CS while few labels show an
            # error / a difference (two targets that agree on every labelled item had a
            # point interval at 0, whatever they do elsewhere)
            o_few = d_few = None
            if K >= 2:
                if metric == "error_rate":
                    o_few = few_errors_inputs(o_loss, draws, clt_min_errors, q_floor=q_floor,
                                              level=level)
                d_few = difference_few(
                    metric, np.asarray(losses[metric], dtype=np.float64), o_loss, draws,
                    clt_min_errors, q_floor=q_floor, level=level,
                    item_bounds=(difference_bounds or {}).get(spec, {}).get(metric),
                    proposal=proposal,
                    weight_bound=(difference_weight_bounds or {}).get(spec, {}).get(metric))
            # the blind spot (error rates): the unexplored items the target's intervals
            # are widened for could hide the other target's errors (up to 1 each: its
            # plain LURE counts them at 0) and a difference anywhere in [-1, 1]; where
            # both targets' predictions are known on the pool (a model compared at
            # creation) only the unexplored items where they differ can hide one, and
            # the log loss's difference is bounded there too
            o_blind = d_blind = None
            spot = (blind_spots or {}).get(metric)
            own = None if spot is None else spot.differences.get(spec)
            if spot is not None and spot.bounded:
                if metric == "error_rate":
                    up = np.asarray(spot.estimate.widen_high, dtype=np.float64)
                    o_blind = replace(spot.estimate, widen_low=np.zeros_like(up))
                    d_blind = replace(spot.estimate, widen_low=up.copy())
                if own is not None:  # either side, by the difference's own bounds
                    d_blind = replace(own, widen_low=np.asarray(own.widen_high,
                                                                dtype=np.float64).copy())
                other_curve = spot.others.get(spec)
                if other_curve is not None:  # its log loss, bounded on the pool
                    o_blind = replace(other_curve, widen_low=np.zeros_like(
                        np.asarray(other_curve.widen_high, dtype=np.float64)))
            o_any = anytime(draws, o_loss, level=level, value_range=o_range,
                            planned_budget=planned_budget, few=o_few, blind=o_blind,
                            model_var=floors.others.get(spec) if metric == "error_rate"
                            else None, sure_bound=o_range[1] if sure_bounds else None)
            # the width asked for is the difference's too: its record says so beside
            # may_stop (QA: may_stop False with no target_width)
            d_floor = floors.differences.get(spec, {}).get(metric)
            d_any = anytime(draws, d_loss, level=level, value_range=d_range,
                            planned_budget=planned_budget, few=d_few, blind=d_blind,
                            skew_widens_only=True, target_width=target_width,
                            model_var=None if d_floor is None else
                            d_floor.variance(d_loss, q, N))
            bounds_d = (difference_bounds or {}).get(spec, {}).get(metric)
            sure = None
            if d_any is not None and bounds_d is not None:
                d_any, sure = sure_difference(d_any, d_loss, draws.rows, bounds_d)
                if sure.binding:  # what is shown: neither the CLT nor the exact anytime CS
                    d_any = replace(d_any, basis="sure",
                                    basis_note=sure_line(spec, metric, sure))
            if spot is not None:
                from activetest.session.interval_names import comparison_blind_spot_sentence

                line = comparison_blind_spot_sentence(
                    spec, metric, int(spot.estimate.n_unexplored[K - 1]), spot.estimate.ratio,
                    None if d_blind is None else float(d_blind.widen_high[K - 1]),
                    d_any is not None and d_any.basis not in ("exact", "sure"),
                    o_any is not None and o_any.basis != "exact", level,
                    widen_other=None if o_blind is None else float(o_blind.widen_high[K - 1]),
                    differ_only=own is not None)
                if line is not None:
                    notes_cmp.append(line)
            if (line := sure_risk_line(f"{spec}'s {metric.replace('_', ' ')}", o_any,
                                       float(other.estimate), K, N, level,
                                       (other.low, other.high))):
                notes_cmp.append(line)
            if o_any is not None and o_any.basis != "exact" and 2 <= K < N and \
                    o_any.fixed_high - o_any.fixed_low <= POINT_WIDTH:
                # every labelled loss of the compared model the same: its CS is shown
                # "unbounded (see the note)"; this is the note (QA: none was there)
                notes_cmp.append(no_spread_line(f"{spec}'s {metric.replace('_', ' ')}",
                                                level, o_any.exact_low, o_any.exact_high))
            for what, a in ((f"{spec}'s error rate", o_any),
                            (f"target - {spec} ({metric.replace('_', ' ')})", d_any)):
                if a is not None and a.basis == "exact":
                    notes_cmp.append(_exact_line(what, a, level))
            if d_any is not None and d_any.basis == "sure" and d_any.basis_note:
                notes_cmp.append(d_any.basis_note)
            if d_any is not None:
                d_any = _difference_outside(d_any, float(diff.estimate), sure, d_range,
                                            target_width, level,
                                            f"target - {spec} ({metric.replace('_', ' ')})",
                                            notes_cmp, uniform_draws=_uniform_draws(draws))
            if d_any is not None and d_any.basis in (None, "clt") and \
                    not d_any.estimate_outside_cs and K >= MIN_LABELS and (
                        line := fixed_beyond_line(
                            f"target - {spec} ({metric.replace('_', ' ')})", d_any, level)):
                notes_cmp.append(line)
            if 2 <= K < N and diff.std == 0.0:
                notes_cmp.append(f"target - {spec} ({metric.replace('_', ' ')}): the "
                                 f"bootstrap interval is a point: the two targets' losses "
                                 f"differ by the same amount on every labelled item; read "
                                 f"the fixed-budget interval and the CS")
            comparisons.append(Comparison(spec, metric, other, diff,
                                          None if d_any is None else (d_any.cs_low,
                                                                      d_any.cs_high),
                                          o_any, d_any,
                                          float(lure_terms(np.asarray(losses[metric],
                                                                      dtype=np.float64),
                                                           q, N).mean())))
    notes = blind_spot_notes(blind_spots or {}, K, level)
    exact = {m for m, e in out.items() if e.anytime is not None and e.anytime.basis == "exact"}
    # where the exact anytime CS stands in (few errors), nothing shown was widened: no such line;
    # nor for control-variate LURE where it is not shown, equal to LURE (CE; QA: its
    # widening was reported beside "equals LURE")
    same = {m for m, e in out.items() if e.cv_same_as_lure}
    # below two labels no fixed-budget interval or CS is shown: nothing was widened that
    # a reader sees (QA: 'widened by +0.2825' beside a table of dashes)
    shown = {(m, "estimate") for m, e in out.items() if e.anytime is not None} | \
        {(m, "cv") for m, e in out.items() if e.cv_anytime is not None}
    lines = [line for n in notes
             if n.metric not in exact and not (n.estimator == "cv" and n.metric in same)
             and (n.metric, n.estimator) in shown
             and (line := n.describe(level)) is not None]
    lines += [line for m in out.values() if (line := exact_note(m, level)) is not None]
    uniform = _uniform_draws(draws)  # every label weighs alike: what moves an estimate
    lines += [line for m in out.values()
              if (line := metric_sure_line(m, K, N, level, uniform))]
    # at a census every item was drawn: "the bootstrap cannot see what was not drawn" is
    # not so (QA); the census line says the estimate is the pool's exact value
    lines += [point_note(m, level) for m in out.values()
              if 2 <= K < N and m.active.std == 0.0]
    if K == 1 and K < N:  # (QA: a point "bootstrap 95% interval" from one label, unsaid)
        lines.append("one label has no spread: the fixed-budget interval and the CS need "
                     "two or more, and the bootstrap interval shown is that label's own "
                     "value, a point that claims nothing")
    lines += [line for m in out.values() if (line := no_spread_note(m, level, K, N))]
    lines += [line for m in out.values() if (line := outside_cs_note(m, level)) is not None]
    lines += [line for m in out.values() if (line := fixed_beyond_cs_note(m, level))]
    lines += [line for m in out.values() for cv in (False, True) if (line := outside_note(
        m, value_range(m.metric, (loss_bounds or {}).get(m.metric)), cv=cv,
        level=level, uniform_draws=uniform)) is not None]
    lines += notes_cmp
    return EstimateReport(N, K, draws.n_selected, draws.n_waiting, out, flagged,
                          (noise.target_nll, noise.surrogate_nll, noise.rule), comparisons,
                          target_width, level, [*_warnings(draws), *lines],
                          blind_spots=notes, uniform_draws=uniform)


def _uniform_draws(draws: LabelledDraws) -> bool:
    """Whether every draw used was made at the uniform rate, ``1 / (N - m + 1)``."""
    return at_uniform_rate(draws.q, draws.n_pool)


@dataclass(frozen=True)
class KindInputs:
    """What a session kind gives the estimate, at the labelled draws and on the pool
    (:meth:`activetest.session.kinds.SessionKind.estimate_inputs`).

    Attributes:
        losses: metric -> ``(K,)`` the target's loss at each labelled draw.
        surrogate_nll, target_nll: ``(K,)`` how unlikely each label is to the surrogate
            and (None: no class log-probs, e.g. graded) to the target: the noise alarm's inputs.
        pool_controls: metric -> ``(N,)`` control values (:func:`controls`).
        loss_bounds: metric -> the largest loss any pool item can have (known ones only).
        compare: compared target -> metric -> ``(K,)`` its losses at the same draws.
        difference_bounds: compared target -> metric -> ``(N,)`` the largest
            ``|L_target - L_other|`` each pool item can have
            (:func:`activetest.session.blindspot.difference_bounds`), where both targets'
            predictions are known on the pool (a model compared at creation).
        proposal_scores: ``(N,)`` the fixed acquisition's scores the draws were made
            with (the floored proposal's; None: an adaptive design, or not needed): with
            ``difference_bounds`` the difference's exact anytime CS bounds each draw by the
            items it could draw (:func:`activetest.stats.proposal.floored_weight_bound`)
            instead of the floor.
        difference_weight_bounds: compared target -> metric -> ``(J,)`` the same bound
            of an adaptive design's first J draws, replayed
            (:func:`activetest.session.blindspot.design_difference_weight_bounds`).
        other_loss_bounds: compared target -> metric -> the largest loss any pool item
            can have for it (known ones only: a model compared at creation).
    """

    losses: Mapping[str, np.ndarray]
    surrogate_nll: np.ndarray
    target_nll: np.ndarray | None = None
    pool_controls: Mapping[str, np.ndarray] = field(default_factory=dict)
    loss_bounds: Mapping[str, float] = field(default_factory=dict)
    compare: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    difference_bounds: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    proposal_scores: np.ndarray | None = None
    difference_weight_bounds: Mapping[str, Mapping[str, np.ndarray]] = field(
        default_factory=dict)
    other_loss_bounds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


def check_level(level: float | None) -> None:
    """Refuse an interval coverage outside (0, 1) (None: the session's), before anything
    is computed with it.

    Raises:
        ValueError: naming the value.
    """
    if level is not None:
        options_check_level(level)


def noise_rule(config: SessionConfig) -> NoiseRule:
    """The label-noise alarm a session was created with (a target threshold of None:
    the target is not asked)."""
    noise = config.noise
    t_thr = noise.target_nll
    return NoiseRule(float("inf") if t_thr is None else float(t_thr),
                     float(noise.surrogate_nll),  # type: ignore[arg-type]
                     noise.rule)


def q_floor(config: SessionConfig, adaptive: bool) -> float:
    """The least share of the uniform in every proposal, for the exact anytime CS: each
    remaining item's probability is at least ``q_floor / (N - m + 1)``. A floored
    fixed proposal gives ``floor / (1 + floor)``; the adaptive designs mix in at least
    :data:`activetest.stats.adaptive.LAMBDAS`' least share (10 %); uniform draws are
    the uniform itself (1: each remaining item ``1 / (N - m + 1)``; with the floor's
    1/11 the exact anytime CS bet as if an item could weigh 11 times what it can, and 60 labels
    with 2 errors of 300 gave ``[0.007, 0.807]`` instead of ``[0.007, 0.143]``)."""
    from activetest.stats.adaptive import LAMBDAS

    if adaptive:
        return min(LAMBDAS)
    if config.acquisition == "uniform":
        return 1.0
    floor = float(config.proposal_floor)
    return floor / (1 + floor)


def fixed_proposal(config: SessionConfig, inputs: KindInputs, adaptive: bool
                   ) -> tuple[np.ndarray, float] | None:
    """The fixed acquisition's ``(scores, floor)`` the draws were made with, as the
    estimate bounds a paired difference's exact anytime CS by it (:func:`difference_few_inputs`'s
    ``proposal``); None for an adaptive design or without the scores."""
    if inputs.proposal_scores is None or adaptive:
        return None
    return inputs.proposal_scores, float(config.proposal_floor)


def session_estimate(config: SessionConfig, draws: LabelledDraws, inputs: KindInputs, *,
                     design_controls: Mapping[str, DesignControls] | None = None,
                     design_info: Mapping[str, Any] | None = None,
                     warnings: Sequence[str] = (), n_boot: int | None = None,
                     level: float | None = None,
                     target_width: float | None = None,
                     blind_spots: Mapping[str, SessionBlindSpot] | None = None,
                     floors: VarianceFloors | None = None,
                     ) -> EstimateReport:
    """The estimate of a session (or an in-memory run) from what it stored: the one
    policy behind ``Session.estimate`` and ``ActiveTest.estimate``.

    Applies the session's noise rule, seed, bootstrap defaults (``n_boot``, ``level``
    when not given), acquisition and proposal floor (:func:`q_floor`) to the kind's
    ``inputs`` (:class:`KindInputs`) and the adaptive design's ``design_controls``
    (empty or None: a fixed design), via :func:`estimate_report`; ``design_info``
    (the design's state) and ``warnings`` are added to the record; ``blind_spots``
    (:func:`.blindspot.session_blind_spots`) widen the intervals; ``floors``: the
    fixed proposal's variance floors where already computed (:func:`variance_floors`).
    """
    report = estimate_report(
        draws, losses=inputs.losses, surrogate_nll=inputs.surrogate_nll,
        target_nll=inputs.target_nll, pool_controls=inputs.pool_controls,
        compare=inputs.compare, noise=noise_rule(config), seed=int(config.seed),
        n_boot=check_n_boot(n_boot if n_boot is not None else config.n_boot),
        level=float(level if level is not None else config.level),
        target_width=target_width, acquisition=config.acquisition,
        loss_bounds=dict(inputs.loss_bounds), q_floor=q_floor(config, bool(design_controls)),
        design_controls=design_controls, planned_budget=config.planned_budget,
        blind_spots=blind_spots, clt_min_errors=config.clt_min_errors,
        sure_bounds=bool(config.sure_bounds),
        shared_resamples=bool(config.shared_resamples),
        difference_bounds=inputs.difference_bounds,
        difference_weight_bounds=inputs.difference_weight_bounds if design_controls else None,
        proposal=fixed_proposal(config, inputs, bool(design_controls)),
        floors=floors, other_loss_bounds=inputs.other_loss_bounds)
    if design_info is not None:
        report = replace(report, design=dict(design_info))
    # (not at a census, which knows both risks exactly; QA: it said "wide" there)
    if config.acquisition == "compare" and config.compare and draws.k < draws.n_pool:
        warnings = [*(warnings or ()), COMPARE_NOTE.format(spec=config.compare[0])]
    partial = partial_credit_note(config.task)
    if partial is not None and "error_rate" in report.metrics:
        warnings = [*(warnings or ()), partial]
    asked = [c.spec for c in report.comparisons if c.spec not in (config.compare or ())]
    if (config.kind == "classification" and config.needs_target and asked
            and config.acquisition != "compare"):
        warnings = [*(warnings or ()), COMPARE_HINT.format(spec=asked[0])]
    if warnings:
        report = replace(report, warnings=[*report.warnings, *warnings])
    return report


@dataclass(frozen=True)
class HistoryPoint:
    """LURE and the plain mean, with bootstrap intervals, after the first ``n_labels``."""

    n_labels: int
    active: BootstrapResult
    uniform: BootstrapResult


def history(draws: LabelledDraws, metric: str, losses: np.ndarray, budgets: Sequence[int],
            *, seed: int, n_boot: int, level: float,
            design: DesignControls | None = None,
            loss_bound: float | None = None,
            shared_resamples: bool = False) -> list[HistoryPoint]:
    """The estimate as it stood after each of ``budgets`` labels (same seeds as
    :func:`estimate_report`, so the last point equals the current estimate): LURE, or
    with ``design`` (:func:`.draw.design_controls`) the adaptive design's own. The
    bootstrap intervals are kept within :func:`value_range` (``loss_bound``: the log
    loss's, as :func:`estimate_report` has it); ``shared_resamples``: as
    :func:`estimate_report`'s."""
    from activetest.stats import adaptive_lure_terms

    out = []
    bounds = value_range(metric, loss_bound)
    for b in budgets:
        terms = (lure_terms(losses[:b], draws.q[:b], draws.n_pool) if design is None else
                 adaptive_lure_terms(losses[:b], draws.q[:b], draws.n_pool, design[0][:b],
                                     design[1][:b]))
        pair = paired_bootstraps(terms, losses[:b], metric=metric, seed=seed, n_boot=n_boot,
                                 level=level, shared=shared_resamples,
                                 uniform_terms=design is None and at_uniform_rate(
                                     draws.q[:b], draws.n_pool))
        out.append(HistoryPoint(b, clip_result(pair.active, bounds),
                                clip_result(pair.uniform, bounds)))
    return out
