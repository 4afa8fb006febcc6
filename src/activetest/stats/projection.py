"""Projections: how many more labels until an interval is narrow enough.

A **projection** is not a guarantee: it says roughly when the interval a session shows
will reach a width, so that a person can plan the labelling; stopping when the
*observed* interval is narrow enough is what keeps the guarantee. Three questions:

* :func:`labels_for_cs_width`: total labels until the asymptotic confidence sequence
  (:mod:`activetest.stats.confseq`) is at most a width wide, from the draws so far and,
  for a design that learns, from its own model of the draws to come
  (:func:`future_variance_ratio`); :func:`anytime_summary` puts it beside both intervals.
* :func:`labels_for_width`: the same for the single-run bootstrap interval
  (:mod:`activetest.stats.bootstrap`).
* :func:`uniform_labels_for_width`: the labels **uniform sampling** would need for the
  same width, from any design's draws (the comparison a session prints).

Where the labels show no spread yet (no error labelled in an error rate's first labels)
each projection gives the draws a loss at the range's ends with Laplace's rate instead
of none: no spread seen is not no spread (docs/projection.md, "No error seen yet").
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from activetest.stats.bootstrap import BootstrapResult
from activetest.stats.confseq import (
    MIN_LABELS,
    PLANNED_LABELS,
    _cs_factor,
    _student_ratio,
    asymptotic_cs,
)
from activetest.stats.intervals import _hall_bounds, _theta, moment_curves, pool_variance_curve
from activetest.stats.validate import float_array, is_whole, open_unit, real_number

__all__ = [
    "RECENT_DRAWS",
    "AnytimeSummary",
    "anytime_summary",
    "future_variance_ratio",
    "labels_for_cs_width",
    "labels_for_width",
    "uniform_labels_for_width",
]


def _laplace_variance(p_hat: float, K: int, value_range: tuple[float, float]) -> float:
    """The variance of a loss at the ends of ``value_range`` with Laplace's rate
    ``(K p_hat + 1) / (K + 2)``, ``p_hat`` the share at the upper end seen in K labels:
    what labels without spread are given (no spread seen is not no spread)."""
    a, b = float(value_range[0]), float(value_range[1])
    p = (K * min(max(p_hat, 0.0), 1.0) + 1.0) / (K + 2.0)
    return p * (1.0 - p) * (b - a) ** 2


def _finite_range(value_range: tuple[float, float] | None) -> bool:
    return value_range is not None and bool(np.all(np.isfinite(value_range))) \
        and float(value_range[1]) > float(value_range[0])


def labels_for_width(result: BootstrapResult, width: float, *,
                     variance_ratio: float = 1.0,
                     value_range: tuple[float, float] | None = None) -> int:
    """Project the total labels needed for an interval of the given width.

    With ``variance_ratio = 1`` (default) the standard error shrinks as ``1/sqrt(K)``
    (true for the uniform estimator and approximately for LURE with a fixed proposal):
    ``K (w_now / w)^2``. A design that learns from the labels draws its later items with
    a better model: ``variance_ratio`` (:func:`future_variance_ratio`,
    rho) is a further draw's variance over the average of the K so far, and the squared
    width after K' labels is ``w_now^2 K (K + (K' - K) rho) / K'^2``; the projection is
    the smallest K' where that is at most ``width^2``. Measured (docs/projection.md): on
    the bundled pools' adaptive design the plain rule projected 1.9x the labels the
    bootstrap then needed from 30 labels (median), 1.6x from 60.

    ``value_range`` (finite: an error rate's ``(0, 1)``): where the terms show no spread
    (the bootstrap's std is 0: e.g. no error labelled yet) the width now is that of a
    loss at the range's ends with Laplace's rate, ``2 z (b - a) sqrt(p (1 - p) / K)``,
    ``p = (K p_hat + 1) / (K + 2)``; without it such a result "needs" the labels it has
    (its interval is a point), which is what sessions were told until 2026-12-04.
    """
    if not isinstance(result, BootstrapResult):  # (an AttributeError before)
        raise ValueError(f"result must be a BootstrapResult (what stats.bootstrap returns), "
                         f"got {type(result).__name__}")
    if not real_number(width, "width", "a number > 0") > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    if not (np.isfinite(variance_ratio) and variance_ratio > 0):
        raise ValueError(f"variance_ratio must be > 0, got {variance_ratio!r}")
    K = result.n_labels
    w_now = result.width
    if result.std == 0.0 and _finite_range(value_range):
        lo, hi = float(value_range[0]), float(value_range[1])  # type: ignore[index]
        z = NormalDist().inv_cdf(0.5 + result.level / 2)
        s2 = _laplace_variance((result.estimate - lo) / (hi - lo), K, (lo, hi))
        w_now = 2.0 * z * np.sqrt(s2 / K)
    if w_now <= width:
        return K
    a = w_now ** 2 * K  # w(K')^2 = a (rho K' + K (1 - rho)) / K'^2
    rho = float(variance_ratio)
    disc = (a * rho) ** 2 + 4.0 * width ** 2 * a * K * (1.0 - rho)
    k = (a * rho + np.sqrt(max(disc, 0.0))) / (2.0 * width ** 2)
    return max(K + 1, int(np.ceil(k - 1e-9)))


def uniform_labels_for_width(losses: np.ndarray, q: np.ndarray, N: int, width: float, *,
                             level: float = 0.95,
                             value_range: tuple[float, float] | None = None) -> int:
    """Projected labels for **uniform sampling's** bootstrap interval of the given width,
    from the draws of any design.

    Uniform sampling's bootstrap interval after n labels is about ``2 z S / sqrt(n)``
    wide (``z = z_{(1+level)/2}``; the normal bootstrap of a mean of n i.i.d. draws), so
    ``n = ceil((2 z S / width)^2)``. It may exceed N: the bootstrap interval has no
    finite-population factor, so it does not get that narrow within the pool (a full
    census gives the pool's exact value, whatever the interval says); the callers say so
    rather than calling N enough (QA: "200 labels (0 more)" beside a 0.18-wide interval
    at a census of 200).
    ``S^2`` is the pool's variance of the loss, estimated from the draws by LURE on
    ``L`` and ``L^2`` (:func:`activetest.stats.intervals.pool_variance_curve`), which
    is consistent under any design. The spread of the *drawn* losses is not: an active
    design draws the items it expects to be hard, whose losses vary differently from the
    pool's (an error rate of 0.1 in the pool drawn at 0.4 has a variance of 0.24 among
    the drawn items against 0.09 in the pool).

    Args:
        losses: ``(K,)`` the drawn items' losses, in draw order.
        q: ``(K,)`` each draw's probability (sampling without replacement).
        N: pool size.
        width: the interval width asked for (``high - low``).
        level: the bootstrap interval's coverage.
        value_range: the loss's range where finite (an error rate's ``(0, 1)``): losses
            without spread (no error labelled yet) are then given the variance of a
            loss at its ends with Laplace's rate, ``p (1 - p) (b - a)^2``,
            ``p = (K p_hat + 1) / (K + 2)``, instead of none (which projected 1 label).
    """
    if not real_number(width, "width", "a number > 0") > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    level = open_unit(level, "level")
    L = float_array(losses, "losses")
    q = float_array(q, "q")
    if L.ndim != 1 or L.size == 0 or q.shape != L.shape:
        raise ValueError(f"losses {L.shape} and q {q.shape} must be 1-D arrays of the same "
                         f"length >= 1 (one run's draws)")
    if not is_whole(N) or not L.size <= N:  # type: ignore[operator]
        raise ValueError(f"N must be an integer pool size >= the {L.size} draws, got {N!r}")
    if L.size and float(np.ptp(L)) == 0.0 and _finite_range(value_range):
        lo, hi = float(value_range[0]), float(value_range[1])  # type: ignore[index]
        S2 = _laplace_variance((float(L[0]) - lo) / (hi - lo), L.size, (lo, hi))
    else:
        S2 = float(pool_variance_curve(_theta(L * L, q, N), _theta(L, q, N), N)[-1])
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return int(max(1, np.ceil((2 * z / width) ** 2 * S2)))



#: Draws whose model variance sets the projected variance of the draws still to come
#: (:func:`labels_for_cs_width`, ``future="recent"``).
RECENT_DRAWS = 5


def labels_for_cs_width(theta: np.ndarray, N: int, width: float, *, alpha: float = 0.05,
                        planned_labels: float = PLANNED_LABELS,
                        model_var: np.ndarray | None = None,
                        budget: int | None = None, future: str = "recent",
                        value_range: tuple[float, float] | None = None) -> int:
    """Projected total labels until the anytime CS (asymptotic) is at most ``width`` wide.

    A **projection**, not a guarantee. In the martingale's units (``.intervals``) the CS
    at M' is a multiple of ``SE_{M'} = sqrt(V_{M'}) / W_{M'}`` with ``V_{M'}`` the sum of
    ``w_m^2 sigma_m^2`` over the draws; the draws so far give ``V_M = SE_M^2 W_M^2``
    (the session's own SE, floored by the design's model where it has one), and each
    draw still to come is assumed to have the variance of uniform sampling's draw m
    times a constant ``s^2`` (``w_m^2 sigma_m^2 = s^2 / ((N - m)(N - m + 1))``, whose
    sum from M + 1 to M' is ``s^2 (W_{M'} - W_M) / N``)::

        V_{M'} = V_M + s^2 (W_{M'} - W_M) / N.

    ``future="recent"`` (default; docs/projection.md measures both ways against what
    simulated runs then needed, ``benchmarks/cs_projection.py``):

    * ``s^2``: where ``model_var`` is given (an adaptive design's own prediction of
      ``N^2 sigma_m^2`` at each draw), the mean over the last :data:`RECENT_DRAWS`
      draws of ``model_var_m / ((N - m)(N - m + 1))``: the variance of the design **as
      it is now** (a design that learns from the labels draws with a better model than
      at its first draws, so the average of the past overstates the future); without a
      model (no ``model_var``, or NaN) the average of the draws so far,
      ``s^2 = N V_M / W_M``.
    * the projected CS at M' is the CS's own formula (:func:`asymptotic_cs`): Hall's
      bounds around today's estimate with ``SE_{M'}``, the skewness ``gamma_M
      sqrt(M / M')`` (a weighted sum's skewness fades as ``1 / sqrt(labels)``), the
      factor ``f(tau_{M'})`` of the chosen rule and, tuned to a ``budget``, Student's
      allowance with Kish's df grown in proportion, ``(df_M + 1) M' / M - 1``;
      ``value_range`` clips it as the session's CS is clipped (an error rate near 0:
      the CS shown is narrower than its plain width).
    * no spread seen yet (every term equal, e.g. no error in the first labels, and no
      model): with a finite ``value_range`` ``[a, b]`` the draws to come are given the
      variance of a loss at ``a`` or ``b`` with Laplace's rule, ``p (1 - p) (b - a)^2``,
      ``p = (M p_hat + 1) / (M + 2)``, its skewness (Hall's correction as for any
      skewed loss), centred at ``a + p (b - a)``, for the draws made as for those to
      come; before, such a session was told the CS would be
      narrow at the next label whatever the width asked for.

    ``future="average"`` (how it projected before 2026-12-04; kept for the comparison):
    ``s^2`` the average of the draws so far at every later draw (then ``SE_{M'} = SE_M
    sqrt(P(M') / P(M))``, ``P(M) = N (N - M) / M``: uniform sampling's variance profile),
    the plain width ``2 SE_{M'} f(tau_{M'})`` scaled by today's (observed width / plain
    width), so that its allowances for skewness and an estimated SE stay at today's size
    at every later budget; with ``value_range``, split below and above today's estimate
    as today's CS is, then clipped. From 30 labels it projected 1.2-2.8 times the
    labels needed (medians, docs/projection.md).

    Returns ``M`` if the CS as shown now (clipped to ``value_range``) is narrow enough,
    else the first ``M' > M`` (from ``min_labels`` on) whose projected width is at most
    ``width`` (with ``budget``, the running minimum: the CS is intersected over budgets),
    N at worst (the whole pool has width 0). Stopping when the *observed* CS is narrow
    enough is valid; the projection only says roughly when that will be.
    ``model_var``: as for :func:`asymptotic_cs` (the SE projected from is the floored
    one); ``budget``: the CS tuned to a planned budget (:func:`asymptotic_cs`).
    """
    th = float_array(theta, "theta")
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    if not real_number(width, "width", "a number > 0") > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    if future not in ("recent", "average"):
        raise ValueError(f"future must be 'recent' or 'average', got {future!r}")
    cs = asymptotic_cs(th, N, alpha=alpha, planned_labels=planned_labels, model_var=model_var,
                       budget=budget)  # unclipped: its width is the plain one's anchor
    M = th.size
    lo_now, hi_now = float(cs.low[-1]), float(cs.high[-1])
    if value_range is not None:
        shown = min(hi_now, value_range[1]) - max(lo_now, value_range[0])
    else:
        shown = hi_now - lo_now
    if shown <= width:
        return M
    if M == 1:
        raise ValueError("one label gives no spread to project from; label a few more")
    est, se, gam, df = (float(x[-1]) for x in moment_curves(th, N, model_var))
    W_M = M / (N - M) if M < N else np.inf
    V_now = se ** 2 * W_M ** 2
    s2_avg, s2_recent = _per_draw_variances(se, M, N, model_var)
    s2 = s2_recent if future == "recent" else s2_avg
    if future == "recent" and s2 == 0.0 and value_range is not None \
            and all(np.isfinite(value_range)):
        # equal terms so far (no error yet): no spread seen is not no spread; a loss in
        # [a, b] with one pseudo-observation at each end (Laplace's rule) instead
        a, b = float(value_range[0]), float(value_range[1])
        p = (min(max((est - a) / (b - a), 0.0), 1.0) * M + 1.0) / (M + 2.0)
        s2 = p * (1.0 - p) * (b - a) ** 2
        gam = (1.0 - 2.0 * p) / np.sqrt(p * (1.0 - p) * M)  # that loss's skewness, at M
        est = a + p * (b - a)  # and centred there, not at the range's end
        V_now = s2 * W_M / N  # the draws made had it too (their spread was luck)
    # budgets up to K at a time, K growing fourfold: the cost follows the answer, not N
    K = min(N - 1, max(1024, 4 * M))
    while True:
        future_m = np.arange(max(M + 1, MIN_LABELS), K + 1)  # budgets after M
        if future_m.size:
            proj = _projected_widths(future_m, N, K, est=est, se=se, gam=gam, df=df, M=M,
                                     V_now=V_now, s2=s2, alpha=alpha,
                                     planned_labels=planned_labels, budget=budget,
                                     future=future, cs_now=(lo_now, hi_now),
                                     value_range=value_range)
            ok = np.flatnonzero(proj <= width)
            if ok.size:
                return int(future_m[ok[0]])
        if K >= N - 1:
            return int(N)
        K = min(N - 1, 4 * K)


def _per_draw_variances(se: float, M: int, N: int, model_var: np.ndarray | None
                        ) -> tuple[float, float]:
    """``(s^2 average, s^2 recent)`` of :func:`labels_for_cs_width`: a draw's variance in
    uniform sampling's units, averaged over the draws so far (from the SE at M) and as
    the design's model has it at its last :data:`RECENT_DRAWS` draws (the average again
    where it has no model)."""
    W_M = M / (N - M)
    s2_avg = N * se ** 2 * W_M
    if model_var is None:
        return s2_avg, s2_avg
    recent = np.arange(max(1, M - RECENT_DRAWS + 1), M + 1)
    mv = np.asarray(model_var, dtype=np.float64)[recent - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        per = mv / ((N - recent) * (N - recent + 1.0))
    per = per[np.isfinite(per)]
    return s2_avg, float(per.mean()) if per.size else s2_avg


def future_variance_ratio(theta: np.ndarray, N: int, *,
                          model_var: np.ndarray | None = None) -> float:
    """A draw's variance as the design's model has it now over the average of the draws so
    far (uniform sampling's units; 1 without a model, or before two draws): how much the
    draws still to come are expected to vary relative to the ones made. A design that
    learns from the labels has a ratio below 1 (its first draws had a worse model).

    Used to project the bootstrap's width (:func:`labels_for_width`,
    ``variance_ratio=``) as :func:`labels_for_cs_width` projects the CS's.
    """
    th = float_array(theta, "theta")
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    M = th.size
    if model_var is None or M < 2 or M >= N:
        return 1.0
    se = float(moment_curves(th, N, model_var)[1][-1])
    s2_avg, s2_recent = _per_draw_variances(se, M, N, model_var)
    if not (np.isfinite(s2_avg) and s2_avg > 0 and np.isfinite(s2_recent)
            and s2_recent > 0):
        # a model that predicts no variance at all for the draws to come is not believed
        # (it would project that no more labels are needed; QA: the projection raised
        # "variance_ratio must be > 0"): the draws to come vary as the ones made
        return 1.0
    return float(s2_recent / s2_avg)


def _projected_widths(future_m: np.ndarray, N: int, K: int, *, est: float, se: float,
                      gam: float, df: float, M: int, V_now: float, s2: float, alpha: float,
                      planned_labels: float, budget: int | None, future: str,
                      cs_now: tuple[float, float],
                      value_range: tuple[float, float] | None) -> np.ndarray:
    """The projected CS widths at ``future_m`` (budgets ``M + 1..K``, ascending), as
    :func:`labels_for_cs_width` describes (the running minimum with ``budget``)."""
    fac = _cs_factor(N, K, alpha, planned_labels, budget)
    Wf = future_m / (N - future_m)
    W_M = M / (N - M)
    lo_now, hi_now = cs_now
    width_now = hi_now - lo_now
    if future == "average":  # how it was: the plain CS, its allowances anchored at M
        proj = 2 * np.sqrt(V_now + s2 * (Wf - W_M) / N) / Wf * fac[future_m - 1]
        plain_now = 2 * se * float(_cs_factor(N, M, alpha, planned_labels, budget)[-1])
        if M >= MIN_LABELS and np.isfinite(width_now) and plain_now > 0:
            proj = proj * max(1.0, width_now / plain_now)
        lo_f, hi_f = est - proj / 2, est + proj / 2
        if value_range is not None and np.isfinite(width_now) and width_now > 0 \
                and lo_now <= est <= hi_now:  # split below and above as the CS is now
            below = (est - lo_now) / width_now
            lo_f, hi_f = est - below * proj, est + (1.0 - below) * proj
    else:  # the CS's own formula: its SE, skewness fading as 1 / sqrt(labels), Kish's df
        se_f = np.sqrt(V_now + s2 * (Wf - W_M) / N) / Wf
        gam_f = gam * np.sqrt(M / future_m)
        f = fac[future_m - 1]
        if budget is not None:
            f = f * _student_ratio(alpha, (df + 1.0) * future_m / M - 1.0)
        lo_f, hi_f = _hall_bounds(np.full(future_m.size, est), se_f, gam_f, f)
    if value_range is not None:
        lo_f, hi_f = np.maximum(lo_f, value_range[0]), np.minimum(hi_f, value_range[1])
    proj = hi_f - lo_f
    if budget is not None:  # intersected over budgets: it never widens
        proj = np.minimum.accumulate(proj)
    return proj


@dataclass(frozen=True)
class AnytimeSummary:
    """What a session shows after a label: both intervals, and whether it may stop.

    Attributes:
        n_labels: labels so far (M).
        estimate: ``R_M``.
        fixed_low, fixed_high: the fixed-budget interval (valid if M was fixed in advance).
        cs_low, cs_high: the anytime CS (asymptotic) (valid at any stopping rule; infinite
            before ``min_labels``).
        target_width: the width asked for, if any.
        may_stop: the CS is at most ``target_width`` wide (False without a target).
        labels_needed: projected total labels for that width (a projection; None
            without a target or before two labels).
    """

    n_labels: int
    estimate: float
    fixed_low: float
    fixed_high: float
    cs_low: float
    cs_high: float
    target_width: float | None
    may_stop: bool
    labels_needed: int | None


def anytime_summary(theta: np.ndarray, N: int, *, target_width: float | None = None,
                    level: float = 0.95, alpha: float = 0.05,
                    planned_labels: float = PLANNED_LABELS,
                    model_var: np.ndarray | None = None,
                    budget: int | None = None,
                    value_range: tuple[float, float] | None = None,
                    skew_widens_only: bool = False) -> AnytimeSummary:
    """One call for a session: the fixed interval and the CS side by side after M labels.

    ``theta`` holds one run's per-draw estimates so far (1-D), ``model_var`` an
    adaptive design's own variance prediction per draw (optional). "You may stop now" is
    read off the CS, never the fixed interval: stopping when the CS is narrow
    enough keeps its coverage; stopping when the fixed interval is does not. ``budget``:
    the CS tuned to a planned budget (:func:`asymptotic_cs`); ``value_range``: the CS
    clipped to it (as a session shows it), for "may stop" and the projection;
    ``skew_widens_only``: the fixed interval's skewness correction may only widen it
    (:func:`~activetest.stats.intervals.fixed_interval_curve`; paired differences).
    """
    from activetest.stats.intervals import fixed_interval

    th = float_array(theta, "theta")
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    if target_width is not None and not real_number(target_width, "target_width",
                                                    "a number > 0, or None") > 0:
        # (a string: Python's "'<=' not supported" before; NaN or 0 was called "width")
        raise ValueError(f"target_width must be > 0, got {target_width!r}")
    fi = fixed_interval(th, N, level=level, model_var=model_var,
                        skew_widens_only=skew_widens_only)
    cs = asymptotic_cs(th, N, alpha=alpha, planned_labels=planned_labels, model_var=model_var,
                       budget=budget, value_range=value_range)
    lo, hi = float(cs.low[-1]), float(cs.high[-1])
    may_stop = target_width is not None and hi - lo <= target_width
    need = None
    if target_width is not None and th.size >= 2:
        need = labels_for_cs_width(th, N, target_width, alpha=alpha,
                                   planned_labels=planned_labels, model_var=model_var,
                                   budget=budget, value_range=value_range)
    return AnytimeSummary(th.size, fi.estimate, fi.low, fi.high, lo, hi, target_width,
                          bool(may_stop), need)
