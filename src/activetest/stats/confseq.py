"""Confidence sequences for active testing: intervals valid at every budget at once.

A fixed-budget interval checked after every label is no longer a 95% interval:
someone who labels until it "looks narrow enough", or until it excludes a
value, stops preferentially at its errors. A confidence sequence (CS) is a
sequence of intervals ``C_1, C_2, ...`` with ``P(R in C_M for every M) >= 1 -
alpha``, so it stays valid at any data-dependent stopping budget. Two kinds:

* :func:`asymptotic_cs` (**asymptotic**): the time-uniform CLT of Waudby-Smith,
  Arbour, Sinha, Kennedy and Ramdas ("Time-uniform central limit theory and
  asymptotic confidence sequences", Ann. Statist. 2024), applied to the
  weighted martingale of :mod:`activetest.stats.intervals`. Cheap, about 1.6x
  the width of the fixed-budget interval; its guarantee holds as the budget
  grows, like the CLT interval's.
* :func:`exact_cs` / :func:`betting_cs` (**exact**): a betting (capital-process)
  CS valid for every pool and every budget with no approximation, for losses
  with a known bound (error rate in [0, 1]; log loss up to the largest per-item
  loss the target's predictions allow, see :func:`log_loss_bound`), under
  sequential, non-uniform, adaptive sampling without replacement. This extends
  Waudby-Smith and Ramdas (NeurIPS 2020, equal weights) and Shekhar, Xu, Lipton,
  Liang and Ramdas (UAI 2023, weighted sampling without replacement) to the
  active-testing estimate with a control. Wider, especially its upper end.

Both take the per-draw estimates ``theta_m`` (see :mod:`.intervals`):
``N theta_m = sum_{j<m} L_{i_j} + sum_{S_m} g^(m) + (L_{i_m} - g^(m)_{i_m}) / q_m(i_m)``,
``E[theta_m | F_{m-1}] = R`` for LURE, CV-LURE and the adaptive design alike.

Asymptotic CS
-------------
``R_M - R = Z_M / W_M`` with ``Z_M = sum_{m<=M} w_m (theta_m - R)`` a martingale
whose predictable variance is ``V_M = sum w_m^2 sigma_m^2`` (``.intervals``). For a
Brownian motion ``B(V)`` Robbins' normal mixture ``int exp(l B - l^2 V / 2) dN(0, rho^2)(l)
= exp(rho^2 B^2 / (2 (V rho^2 + 1))) / sqrt(V rho^2 + 1)`` is a nonnegative
martingale, so by Ville's inequality ``|B(V)| < sqrt(2 (V rho^2 + 1) / rho^2 *
log(sqrt(V rho^2 + 1) / alpha))`` for all V with probability ``1 - alpha``. The
strong approximation of a martingale by ``B(V_M)`` (WS et al., Lyapunov-type
Theorem) makes this an asymptotic CS for R once V is replaced by a consistent
estimate. We run the mixture on the clock

    tau_M = N W_M = M / (1 - M/N)      (the label count when M << N)

which is the intrinsic time ``V_M / kappa`` of uniform sampling, exactly: there
``w_m^2 E sigma_m^2 = S^2 / ((N - m)(N - m + 1))``, so ``E V_M = S^2 W_M / N``.
For any design whose per-draw variance is, like uniform sampling's, a stable
multiple of the remaining set's, ``V_M / tau_M`` settles to a constant kappa;
estimating it by ``SE_M^2 W_M^2 / tau_M`` (WS et al.'s i.i.d. form uses the
running sd the same way) gives the half-width

    h_M = SE_M * sqrt(2 (tau_M rho^2 + 1) / (tau_M rho^2) * log(sqrt(tau_M rho^2 + 1) / alpha)),

a deterministic multiple of the fixed interval's SE. ``rho`` is chosen **a
priori** to minimise the width at a planned budget ``tau* = planned_labels``
(default 200, the middle of the 100-400 labels sessions use) by the closed form
``rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / tau*`` (WS et al.; Howard et
al. 2021). At alpha = 0.05 the multiplier is then 1.55-1.60 times the normal
quantile 1.96 from 100 to 500 labels (:func:`asymptotic_cs_multiplier`).

Tuned to a planned budget (``budget=``, new sessions)
---------------------------------------------------
The normal mixture keeps its 1.55x at every clock value at once, also far past
any budget a person uses. A session knows its planned budget ``T`` (labels; its
clock value ``tau_T = N T / (N - T)``), and anytime validity only has to be paid
for up to it (Koning and van Meer 2025: "anytime validity is nearly free" when
the horizon is known). Two boundaries, each time-uniform, intersected:

* a **line** through the planned budget, ``|B(tau)| < a + b tau`` for
  ``tau <= tau_T`` with ``a = b tau_T = c sqrt(tau_T) / 2`` (the line tangent to the
  ``c sqrt(tau)`` curve at ``tau_T``). For Brownian motion the chance of crossing
  ``a + b tau`` by time ``t`` is exact (Bachelier-Levy / Siegmund 1986):
  ``P = 1 - Phi((a + b t)/sqrt t) + exp(-2 a b) Phi((b t - a)/sqrt t)``; at
  ``t = tau_T`` and ``a = b tau_T`` that is ``1 - Phi(c) + exp(-c^2/2) / 2`` per side,
  set to ``alpha_1 / 2`` with ``alpha_1 = 0.8 alpha`` (:data:`BUDGET_ALPHA_SHARE`),
  so ``c = 2.630`` at alpha = 0.05: the CS at the planned budget is
  ``2.630 / 1.96 = 1.34`` times the fixed interval (a fixed-time interval at the same
  level would need 1.96; the rest is the price of stopping anywhere before it).
  Its half-width in SE units is ``f_line(tau) = (c/2) (sqrt(tau_T/tau) + sqrt(tau/tau_T))``
  (1.68x at T/4, 1.42x at T/2); it is not used after ``tau_T``.
* the **normal mixture** above at the remaining ``alpha_2 = 0.2 alpha``, with rho
  tuned at ``tau_T``: it covers every budget, also beyond T (1.82x there).

The CS is ``SE_M min(f_line, f_mix) t_df / z`` (Hall's correction as below; ``t_df / z``
the fixed interval's Student allowance for an estimated SE, which tends to 1), intersected
over budgets (the intersection of ``C_1..C_M`` contains R whenever every ``C_m``
does, so the time-uniform event is unchanged; where the intersection is empty,
which needs a miss at an earlier budget, the current interval is shown). By the
union bound ``P(R outside C_M for some M) <= alpha_1 + alpha_2 = alpha`` in the
Brownian limit (``T -> inf`` with ``tau / tau_T`` fixed, the strong-approximation
error is ``o(sqrt(tau_T))``, as for the mixture). Sessions created before the
planned budget was recorded keep the mixture alone (``budget=None``).

As for the fixed interval, Hall's skewness correction is applied by default
(``f`` in place of the normal quantile; it vanishes as M grows, so the CS is
still an asymptotic CS in WS et al.'s sense: its bounds differ from the plain
ones by a vanishing fraction of the width). The CS is claimed from
``min_labels = 30`` on: before that the studentized statistic of a skewed
importance-weighted sum is far from normal (docs/intervals.md measures it).

Exact CS (proof of validity)
----------------------------
Fix the pool (its losses ``L_i`` in ``[a, b]``); all randomness is in the draws.
Let ``F_{m-1}`` hold everything before draw m (past draws, labels, any randomness
used to choose ``q_m`` and ``g^(m)``). Assume (i) ``q_m(i) > 0`` for every
``i in S_m`` and (ii) bounds ``lo_m <= theta_m <= hi_m`` that are
``F_{m-1}``-measurable (known before the draw, e.g. from ``L in [a, b]`` and a
lower bound ``q_min_m`` on the proposal: :func:`theta_bounds`). Then, with ``r* = R``:

1. ``E[theta_m | F_{m-1}] = r*``: ``E[(L_{i_m} - g_{i_m}) / q_m(i_m) | F_{m-1}] =
   sum_{S_m} (L_i - g_i)``, so ``E[N theta_m | F_{m-1}] = sum_{j<m} L_{i_j} +
   sum_{S_m} L_i = N r*``. Non-uniform, adaptive ``q`` and ``g`` are allowed: only
   (i) and measurability are used; without replacement is what the sum over
   ``S_m`` encodes.
2. For a candidate r and predictable bets ``0 <= l+_m(r) <= c / (r - lo_m)``
   (any bet if ``r <= lo_m``) and ``0 <= l-_m(r) <= c / (hi_m - r)``, c < 1, the
   factors ``1 + l+_m (theta_m - r)`` and ``1 - l-_m (theta_m - r)`` are >= 1 - c > 0,
   so ``K+_t(r) = prod_{m<=t} (1 + l+_m (theta_m - r))`` and ``K-_t(r)`` (with
   ``1 - l-_m(...)``) are nonnegative, and at ``r = r*`` they are martingales with
   ``K_0 = 1`` by step 1.
3. Ville's inequality: ``P(exists t: K+_t(r*) >= 2/alpha) <= alpha/2``, the same
   for ``K-``; so with probability >= 1 - alpha, ``r*`` is never rejected by
   either process, at any t, hence at any stopping time.
4. The bets here are ``l+_m(r) = min(lt_m, c/(r - lo_m))`` and ``l-_m(r) =
   min(lt_m, c/(hi_m - r))`` with ``lt_m`` a function of ``theta_1..theta_{m-1}``
   only (the predictable plug-in of Waudby-Smith and Ramdas 2023:
   ``lt_m = sqrt(2 log(2/alpha) / (s2_{m-1} m log(1 + m)))``, ``s2`` a running
   variance with one pseudo-observation of ``((b - a)/2)^2``). Then
   ``r -> l+_m(r)(theta_m - r)`` is nonincreasing (uncapped: a constant times
   ``theta_m - r``; capped: ``c((theta_m - lo_m)/(r - lo_m) - 1)``), so ``K+_t`` is
   nonincreasing in r and ``{r : K+_t(r) >= 2/alpha}`` is an interval below r*
   on the event of step 3; symmetrically ``K-_t`` is nondecreasing in r.
5. Reported bounds: the largest grid point rejected by ``K+`` (below r* by step
   4, whatever the grid, so the grid may even depend on the data) and the
   smallest rejected by ``K-``, intersected with the bounds every pool
   consistent with the labels satisfies (``(sum_{j<=t} L_j + (N - t) a)/N <= R``,
   the same with b) and across t (running intersection). Rounding is
   outward, so the reported CS contains the exact one: coverage >= 1 - alpha,
   uniformly over budgets 1..N, for every pool and every such design.

With a control, ``theta_m``'s lower bound involves ``(a - max g)/q_min``, which
weakens the CS; bounds from the actual proposal and per-item loss bounds (if a
session has them) are tighter and may be passed to :func:`betting_cs` directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from activetest.stats.intervals import (
    BoundsCurve,
    _check_theta,
    _hall_bounds,
    _theta,
    martingale_se_curve,
    moment_curves,
)
from activetest.stats.kernels import njit

__all__ = [
    "AnytimeSummary",
    "ConfidenceSequence",
    "anytime_summary",
    "asymptotic_cs",
    "asymptotic_cs_from_curves",
    "asymptotic_cs_multiplier",
    "betting_capital",
    "betting_cs",
    "budget_cs_multiplier",
    "budget_line_constant",
    "cs_clock",
    "default_budget",
    "exact_cs",
    "future_variance_ratio",
    "labels_for_cs_width",
    "log_loss_bound",
    "max_budget",
    "normal_mixture_factor",
    "normal_mixture_rho2",
    "paired_difference_cs",
    "paired_difference_exact_cs",
    "q_lower_bound",
    "running_intersection",
    "theta_bounds",
]

#: Default planned budget for the asymptotic CS's mixture (labels).
PLANNED_LABELS = 200
#: The asymptotic CS is claimed from this budget on.
MIN_LABELS = 30
#: The planned budget a NEW session records when none is given (labels; at most N - 1):
#: the top of the 100-400 labels sessions use, so the CS is near its narrowest there
#: and 1.4x the fixed interval from T/2 on (module docstring).
DEFAULT_BUDGET = 400
#: Share of alpha spent on the line through the planned budget (the rest: the mixture).
BUDGET_ALPHA_SHARE = 0.8


@dataclass(frozen=True)
class ConfidenceSequence(BoundsCurve):
    """A CS at every budget M = 1..K (arrays ``(..., K)``).

    Attributes:
        estimate: ``R_M`` (the LURE-family estimate; the exact CS is not centred on it).
        low, high: the CS. ``low > high`` (empty) can happen only on the
            probability-alpha event that the truth has been excluded.
        alpha: ``P(truth outside C_M for some M) <= alpha`` (exactly or asymptotically).
        kind: ``"asymptotic"`` or ``"exact"``.
    """

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    alpha: float
    kind: str

    def covers(self, value: float | np.ndarray, start: int = 1) -> np.ndarray:
        """Whether ``value`` lies in the CS at every budget from ``start`` on (per run)."""
        v = np.asarray(value, dtype=np.float64)[..., None]
        ok = (self.low[..., start - 1:] <= v) & (v <= self.high[..., start - 1:])
        return ok.all(axis=-1)


def _check_alpha(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return float(alpha)


# ---------------------------------------------------------------- asymptotic


def normal_mixture_rho2(planned_labels: float = PLANNED_LABELS, alpha: float = 0.05) -> float:
    """``rho^2`` minimising the normal-mixture boundary at clock ``planned_labels``.

    ``(-2 log alpha + log(1 - 2 log alpha)) / tau*`` (the closed-form approximation
    of WS et al. / Howard et al. 2021; within 0.1% of the numerical optimum).
    """
    alpha = _check_alpha(alpha)
    if not planned_labels > 0:
        raise ValueError(f"planned_labels must be > 0, got {planned_labels!r}")
    la = -2.0 * np.log(alpha)
    return float((la + np.log(la + 1.0)) / planned_labels)


def cs_clock(N: int, K: int) -> np.ndarray:
    """``tau_M = N M / (N - M)`` for M = 1..K (inf at M = N): uniform sampling's intrinsic time."""
    m = np.arange(1, K + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return N * m / (N - m)


def normal_mixture_factor(tau: np.ndarray, rho2: float, alpha: float) -> np.ndarray:
    """The two-sided normal-mixture boundary in units of the SE at intrinsic time ``tau``
    (the variance clock in per-label units; uniform sampling's is :func:`cs_clock`):
    ``sqrt(2 (x + 1) / x * log(sqrt(x + 1) / alpha))`` with ``x = tau rho2``, 0 where
    ``tau`` is infinite (the whole pool labelled). ``rho2``: the mixture's
    :func:`normal_mixture_rho2`; ``alpha``: the level's complement (both sides)."""
    x = tau * rho2
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        f = np.sqrt(2.0 * (x + 1.0) / x * np.log(np.sqrt(x + 1.0) / alpha))
    return np.where(np.isfinite(tau), f, 0.0)


#: The former private name (kept for callers in other branches).
_mixture_factor = normal_mixture_factor


def asymptotic_cs_multiplier(N: int, K: int, *, alpha: float = 0.05,
                             planned_labels: float = PLANNED_LABELS) -> np.ndarray:
    """The CS half-width in units of ``SE_M`` at every budget M = 1..K.

    Divide by ``z_{1 - alpha/2}`` (1.96) for the width cost of anytime validity
    relative to the fixed-budget interval at the same level. 0 at M = N.
    """
    alpha = _check_alpha(alpha)
    return _mixture_factor(cs_clock(N, K), normal_mixture_rho2(planned_labels, alpha), alpha)


def default_budget(N: int) -> int:
    """The planned budget a new session records when none is given:
    ``min(DEFAULT_BUDGET, N // 2)`` (at least 1).

    Half the pool at most: the CS's clock ``tau_M = N M / (N - M)`` runs away as M nears
    N, and a CS tuned to a budget near N is many standard errors wide at every earlier M
    (``budget_cs_multiplier(300, 299, 299)`` is 46 at 30 labels, 4.2 when tuned to 150).
    """
    return int(max(1, min(DEFAULT_BUDGET, int(N) // 2)))


def max_budget(N: int) -> int:
    """The largest budget a CS is tuned to on a pool of N items: ``2 N // 3`` (at least
    1), where the clock ``tau_T = 2 N``; a larger planned budget is recorded as this one
    (see :func:`default_budget` for why)."""
    return int(max(1, 2 * int(N) // 3))


def _normal_sf(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def budget_line_constant(alpha: float = 0.05) -> float:
    """``c`` with ``1 - Phi(c) + exp(-c^2/2) / 2 = BUDGET_ALPHA_SHARE * alpha / 2``: the
    line's half-width at the planned budget in SE units (2.630 at alpha = 0.05)."""
    alpha = _check_alpha(alpha)
    target = BUDGET_ALPHA_SHARE * alpha / 2.0
    lo, hi = 0.0, 40.0  # the left side decreases in c
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _normal_sf(mid) + 0.5 * math.exp(-0.5 * mid * mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


def _check_budget(budget: int, N: int) -> float:
    if isinstance(budget, bool) or int(budget) != budget or budget < 1:
        raise ValueError(f"the planned budget must be a positive integer, got {budget!r}")
    T = min(int(budget), int(N) - 1)  # tau is infinite at M = N: the pool is revealed
    return N * T / (N - T) if T >= 1 else 1.0


def budget_cs_multiplier(N: int, K: int, budget: int, *, alpha: float = 0.05) -> np.ndarray:
    """The budget-tuned CS half-width in units of ``SE_M``, M = 1..K (module docstring):
    ``min(f_line(tau_M), f_mix(tau_M))``, the line only up to the planned budget's clock."""
    alpha = _check_alpha(alpha)
    tau_T = _check_budget(budget, N)
    tau = cs_clock(N, K)
    c = budget_line_constant(alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        line = 0.5 * c * (np.sqrt(tau_T / tau) + np.sqrt(tau / tau_T))
    line = np.where(tau <= tau_T * (1 + 1e-12), line, np.inf)
    a2 = (1.0 - BUDGET_ALPHA_SHARE) * alpha
    mix = _mixture_factor(tau, normal_mixture_rho2(tau_T, a2), a2)
    return np.where(np.isfinite(tau), np.minimum(line, mix), 0.0)


def _student_ratio(alpha: float, df: np.ndarray) -> np.ndarray:
    """``t_{df, 1 - alpha/2} / z_{1 - alpha/2}``: the fixed interval's allowance for an
    estimated variance (Student quantiles, Kish's df), applied to the budget-tuned CS
    as well (it tends to 1, so the CS stays asymptotically the plain one)."""
    from statistics import NormalDist

    from activetest.stats.intervals import _student_quantile

    p = 1.0 - alpha / 2.0
    return _student_quantile(p, df) / NormalDist().inv_cdf(p)


def running_intersection(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``C_1 n ... n C_M`` at every M (``(..., K)`` bounds of a CS over budgets; valid
    for a CS, whose guarantee holds at every budget at once); the current interval
    where that is empty."""
    rlo = np.maximum.accumulate(lo, axis=-1)
    rhi = np.minimum.accumulate(hi, axis=-1)
    empty = rlo > rhi
    return np.where(empty, lo, rlo), np.where(empty, hi, rhi)


def asymptotic_cs(theta: np.ndarray, N: int, *, alpha: float = 0.05,
                  planned_labels: float = PLANNED_LABELS, min_labels: int = MIN_LABELS,
                  skew: bool = True,
                  value_range: tuple[float, float] | None = None,
                  model_var: np.ndarray | None = None,
                  budget: int | None = None, intersect: bool = True) -> ConfidenceSequence:
    """Asymptotic CS around ``R_M`` with half-width ``SE_M f(tau_M)`` (module docstring).

    Args:
        theta: ``(..., K)`` per-draw estimates theta_m (LURE, CV-LURE, adaptive).
        N: pool size.
        alpha: time-uniform miscoverage (asymptotically).
        planned_labels: the budget where the CS is narrowest. It must be fixed before
            the labels are seen (a session may pass its intended budget); choosing it
            from the data would void the time-uniform guarantee.
        min_labels: the CS starts here; before it, it is the whole line (or
            ``value_range``). An asymptotic CS is only claimed from some start on
            (WS et al.'s definition); 30 is where, on the bundled outputs, the
            studentized statistic is close enough to normal (docs/intervals.md).
        skew: apply Hall's skewness correction (as :func:`.fixed_interval_curve`
            does) with ``f(tau_M)`` in place of the normal quantile; it vanishes
            as M grows, so the CS stays asymptotically the plain one.
        value_range: optional ``(a, b)`` every pool risk lies in (e.g. (0, 1) for the
            error rate): the CS is clipped to it, which cannot lose coverage.
        model_var: an adaptive design's own ``N^2 Var(theta_m | past)`` per draw: SE_M
            is then the larger of the observed and the model's (as in
            :func:`.fixed_interval_curve`).
        budget: the planned budget in labels, fixed before the labels are seen: the
            CS tuned to it (:func:`budget_cs_multiplier`, intersected over budgets;
            ``planned_labels`` is then unused). None: the normal mixture alone (the
            rule of sessions created before a budget was recorded).
        intersect: with ``budget``, intersect over budgets (False: the raw intervals,
            for a caller that widens each budget's first, :func:`.blindspot.widen_cs`).
    """
    th, N = _check_theta(theta, N)
    est, se, gam, df = moment_curves(th, N, model_var)
    return asymptotic_cs_from_curves(est, se, gam, N, alpha=alpha, planned_labels=planned_labels,
                                   min_labels=min_labels, skew=skew, value_range=value_range,
                                   budget=budget, df=df, intersect=intersect)


def _cs_factor(N: int, K: int, alpha: float, planned_labels: float,
               budget: int | None) -> np.ndarray:
    """The CS multiplier of either rule at M = 1..K."""
    if budget is None:
        return asymptotic_cs_multiplier(N, K, alpha=alpha, planned_labels=planned_labels)
    return budget_cs_multiplier(N, K, budget, alpha=alpha)


def asymptotic_cs_from_curves(est: np.ndarray, se: np.ndarray, gam: np.ndarray, N: int, *,
                              alpha: float = 0.05, planned_labels: float = PLANNED_LABELS,
                              min_labels: int = MIN_LABELS, skew: bool = True,
                              value_range: tuple[float, float] | None = None,
                              budget: int | None = None,
                              df: np.ndarray | None = None,
                              intersect: bool = True) -> ConfidenceSequence:
    """:func:`asymptotic_cs` from precomputed ``intervals.moment_curves`` (reused by experiments);
    ``df``: Kish's degrees of freedom (``moment_curves``' fourth value), which the budget-tuned
    CS needs."""
    K = est.shape[-1]
    if isinstance(min_labels, bool) or int(min_labels) != min_labels or min_labels < 2:
        raise ValueError(f"min_labels must be an integer >= 2, got {min_labels!r}")
    f = _cs_factor(N, K, alpha, planned_labels, budget)
    if budget is not None:
        if df is None:
            raise ValueError("the budget-tuned CS needs the degrees of freedom (df)")
        f = f * _student_ratio(alpha, df)
    if skew:
        lo, hi = _hall_bounds(est, se, gam, f)
    else:
        lo, hi = est - se * f, est + se * f
    early = np.arange(1, K + 1) < min_labels
    lo, hi = np.where(early, -np.inf, lo), np.where(early, np.inf, hi)
    exact = se == 0  # M = N: the pool is revealed (up to the rounding of a sum), even
    eps = 1e-12 * np.maximum(1.0, np.abs(est))  # for a pool smaller than min_labels
    if budget is not None:
        # before M = N a zero SE only means every term so far was equal (e.g. no error
        # in the first labels): no information on the spread, so no interval (the
        # mixture rule's point there was one budget's miss; intersected, it would stick)
        blind = exact & (np.arange(1, K + 1) < N)
        exact = exact & ~blind
        lo, hi = np.where(blind, -np.inf, lo), np.where(blind, np.inf, hi)
    lo, hi = np.where(exact, est - eps, lo), np.where(exact, est + eps, hi)
    if value_range is not None:
        lo, hi = np.maximum(lo, value_range[0]), np.minimum(hi, value_range[1])
    if budget is not None and intersect:
        lo, hi = running_intersection(lo, hi)
    return ConfidenceSequence(est, lo, hi, float(alpha), "asymptotic")


#: Draws whose model variance sets the projected variance of the draws still to come
#: (:func:`labels_for_cs_width`, ``future="recent"``).
RECENT_DRAWS = 5


def labels_for_cs_width(theta: np.ndarray, N: int, width: float, *, alpha: float = 0.05,
                        planned_labels: float = PLANNED_LABELS,
                        model_var: np.ndarray | None = None,
                        budget: int | None = None, future: str = "recent",
                        value_range: tuple[float, float] | None = None) -> int:
    """Projected total labels until the asymptotic CS is at most ``width`` wide.

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
    th = np.asarray(theta, dtype=np.float64)
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    if not width > 0:
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

    Used to project the bootstrap's width (:func:`activetest.stats.bootstrap.labels_for_width`,
    ``variance_ratio=``) as :func:`labels_for_cs_width` projects the CS's.
    """
    th = np.asarray(theta, dtype=np.float64)
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    M = th.size
    if model_var is None or M < 2 or M >= N:
        return 1.0
    se = float(moment_curves(th, N, model_var)[1][-1])
    s2_avg, s2_recent = _per_draw_variances(se, M, N, model_var)
    if not (np.isfinite(s2_avg) and s2_avg > 0 and np.isfinite(s2_recent)):
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
        cs_low, cs_high: the asymptotic CS (valid at any stopping rule; infinite
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
                    value_range: tuple[float, float] | None = None) -> AnytimeSummary:
    """One call for a session: the fixed interval and the CS side by side after M labels.

    ``theta`` holds one run's per-draw estimates so far (1-D), ``model_var`` an
    adaptive design's own variance prediction per draw (optional). "You may stop now" is
    read off the CS, never the fixed interval: stopping when the CS is narrow
    enough keeps its coverage; stopping when the fixed interval is does not. ``budget``:
    the CS tuned to a planned budget (:func:`asymptotic_cs`); ``value_range``: the CS
    clipped to it (as a session shows it), for "may stop" and the projection.
    """
    from activetest.stats.intervals import fixed_interval

    th = np.asarray(theta, dtype=np.float64)
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    fi = fixed_interval(th, N, level=level, model_var=model_var)
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


# ---------------------------------------------------------------- exact


def log_loss_bound(target_logprobs: np.ndarray) -> float:
    """The largest log loss any pool item can have: ``max_{i, c} -log p_f(c | x_i)``.

    Known without labels when the target's predictions are on the pool, so it is
    a valid a priori bound for :func:`exact_cs` with the log loss.
    """
    lp = np.asarray(target_logprobs, dtype=np.float64)
    if lp.ndim != 2 or lp.size == 0 or not np.all(np.isfinite(lp)):
        raise ValueError("target_logprobs must be a finite, non-empty (N, C) array")
    return float(-lp.min())


def q_lower_bound(N: int, K: int, floor: float) -> np.ndarray:
    """``q_min_m = floor / (N - m + 1)`` for m = 1..K.

    For the paper's floored proposal (floor alpha, then renormalise) every
    remaining item has ``q >= alpha / ((1 + alpha)(N - m + 1))``: pass
    ``floor = alpha / (1 + alpha)``. The adaptive design's mixture with weight
    lambda >= 0.1 on uniform gives ``floor = 0.1``.
    """
    if not 0.0 < floor <= 1.0:
        raise ValueError(f"floor must be in (0, 1], got {floor!r}")
    return floor / (N - np.arange(K, dtype=np.float64))


def theta_bounds(losses: np.ndarray, N: int, q_min: np.ndarray, *, loss_low: float,
                 loss_high: float, control_rest: np.ndarray | None = None,
                 control_low: float | None = None, control_high: float | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Predictable bounds ``lo_m <= theta_m <= hi_m`` from a loss range and ``q_min``.

    ``N theta_m = B_m + G_m + e / q`` with ``B_m = sum_{j<m} L_j`` and ``G_m`` known
    before draw m, ``e = L - g`` in ``[loss_low - control_high, loss_high - control_low]``
    and ``q`` in ``[q_min_m, 1]``; the extremes of ``e / q`` over that box give the
    bounds. Without a control (LURE) ``e = L``.

    Args:
        losses: ``(..., K)`` observed losses (only their past sums are used).
        q_min: lower bound on every remaining item's probability at each draw,
            broadcastable to ``losses`` (:func:`q_lower_bound`).
        control_rest: ``G_m`` (sum of ``g^(m)`` over ``S_m``) for a control; then
            ``control_low``/``control_high`` bound ``g`` (default the loss range).
    """
    L = np.asarray(losses, dtype=np.float64)
    qm = np.broadcast_to(np.asarray(q_min, dtype=np.float64), L.shape)
    if np.any(qm <= 0) or np.any(qm > 1):
        raise ValueError("q_min must lie in (0, 1]")
    before = np.cumsum(L, axis=-1) - L
    if control_rest is None:
        e_lo, e_hi, G = loss_low, loss_high, 0.0
    else:
        glo = loss_low if control_low is None else control_low
        ghi = loss_high if control_high is None else control_high
        e_lo, e_hi = loss_low - ghi, loss_high - glo
        G = np.asarray(control_rest, dtype=np.float64)
    lo_e = e_lo if e_lo >= 0 else e_lo / qm
    hi_e = e_hi / qm if e_hi > 0 else e_hi
    return (before + G + lo_e) / N, (before + G + hi_e) / N


@njit(cache=True)
def _betting_kernel(theta, lo, hi, lam, grid, thr, trunc, low_out, high_out):  # pragma: no cover
    """Largest grid point rejected by K+ and smallest rejected by K-, per run and draw."""
    R, K = theta.shape
    G = grid.shape[1]
    lp = np.zeros(G)
    lm = np.zeros(G)
    for r in range(R):
        for g in range(G):
            lp[g] = 0.0
            lm[g] = 0.0
        for m in range(K):
            th = theta[r, m]
            lo_m = lo[r, m]
            hi_m = hi[r, m]
            lt = lam[r, m]
            best_lo = -np.inf
            best_hi = np.inf
            for g in range(G):
                x = grid[r, g]
                a = lt
                if x > lo_m:
                    c = trunc / (x - lo_m)
                    if c < a:
                        a = c
                lp[g] += np.log1p(a * (th - x))
                b = lt
                if x < hi_m:
                    c = trunc / (hi_m - x)
                    if c < b:
                        b = c
                lm[g] += np.log1p(-b * (th - x))
                if lp[g] >= thr and x > best_lo:
                    best_lo = x
                if lm[g] >= thr and x < best_hi:
                    best_hi = x
            low_out[r, m] = best_lo
            high_out[r, m] = best_hi


def _plugin_bets(th: np.ndarray, alpha: float, prior_mean: float, prior_var: float
                 ) -> np.ndarray:
    """Waudby-Smith and Ramdas's predictable plug-in bets from theta_1..theta_{m-1}."""
    K = th.shape[-1]
    t = np.arange(1, K + 1, dtype=np.float64)
    mu = (prior_mean + np.cumsum(th, axis=-1)) / (t + 1)
    s2 = (prior_var + np.cumsum((th - mu) ** 2, axis=-1)) / (t + 1)
    s2_prev = np.concatenate([np.full((*th.shape[:-1], 1), prior_var), s2[..., :-1]], axis=-1)
    return np.sqrt(2.0 * np.log(2.0 / alpha) / (s2_prev * t * np.log1p(t)))


def betting_capital(theta: np.ndarray, theta_low: np.ndarray, theta_high: np.ndarray,
                    r: float | np.ndarray, *, value_low: float, value_high: float,
                    alpha: float = 0.05, trunc: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """``(log K+_t(r), log K-_t(r))`` for t = 1..K: the two capital processes at one null.

    These are the test martingales behind :func:`betting_cs` (same bets): at the
    true pool risk both have expectation 1 at every t, and the CS at t is
    ``{r : both < log(2 / alpha)}``. ``r`` may be per run (broadcast over the last axis).
    """
    th = np.asarray(theta, dtype=np.float64)
    lo = np.minimum(np.broadcast_to(np.asarray(theta_low, dtype=np.float64), th.shape), th)
    hi = np.maximum(np.broadcast_to(np.asarray(theta_high, dtype=np.float64), th.shape), th)
    rr = np.asarray(r, dtype=np.float64)
    rr = rr[..., None] if rr.ndim else rr
    lam = _plugin_bets(th, _check_alpha(alpha), 0.5 * (value_low + value_high),
                       (0.5 * (value_high - value_low)) ** 2)
    with np.errstate(divide="ignore"):
        cap_p = np.where(rr > lo, trunc / (rr - lo), np.inf)
        cap_m = np.where(rr < hi, trunc / (hi - rr), np.inf)
    lp = np.cumsum(np.log1p(np.minimum(lam, cap_p) * (th - rr)), axis=-1)
    lm = np.cumsum(np.log1p(-np.minimum(lam, cap_m) * (th - rr)), axis=-1)
    return lp, lm


def _default_grid(est: np.ndarray, se: np.ndarray, value_low: float, value_high: float,
                  grid_size: int) -> np.ndarray:
    """A coarse grid over the whole range plus a fine one around each run's estimate.

    Any grid keeps the CS valid (rounding is outward); this only sets resolution.
    """
    R = est.shape[0]
    n_coarse = max(16, grid_size // 4)
    coarse = np.broadcast_to(np.linspace(value_low, value_high, n_coarse), (R, n_coarse))
    K = est.shape[1]
    k = min(K, 30) - 1
    centre = est[:, -1]
    s = se[:, k] if K > 1 else np.full(R, np.inf)
    half = np.where(np.isfinite(s), 8.0 * s, value_high - value_low)
    half = np.minimum(np.maximum(half, 1e-3 * (value_high - value_low)), value_high - value_low)
    u = np.linspace(-1.0, 1.0, grid_size - n_coarse)
    fine = np.clip(centre[:, None] + half[:, None] * u, value_low, value_high)
    return np.ascontiguousarray(np.concatenate([coarse, fine], axis=1))


def betting_cs(theta: np.ndarray, theta_low: np.ndarray, theta_high: np.ndarray, *,
               value_low: float, value_high: float, alpha: float = 0.05,
               known_low: np.ndarray | None = None, known_high: np.ndarray | None = None,
               grid: np.ndarray | None = None, grid_size: int | None = None,
               trunc: float = 0.5, running_intersection: bool = True,
               N: int | None = None) -> ConfidenceSequence:
    """Exact (non-asymptotic) betting CS from theta_m and predictable bounds on it.

    Args:
        theta: ``(R, K)`` or ``(K,)`` per-draw estimates, conditionally unbiased for R.
        theta_low, theta_high: ``lo_m <= theta_m <= hi_m``, each known before draw m.
        value_low, value_high: the range of the pool risk (the loss range).
        known_low, known_high: optional ``(.., K)`` bounds R surely satisfies after
            each draw (e.g. from the labels seen plus the loss range).
        grid: candidate values of R, ``(G,)`` or ``(R, G)``; default a grid of
            ``grid_size`` points (4001 for one run, 512 per run for many).
        trunc: c in the bet caps ``c / (r - lo_m)``, ``c / (hi_m - r)`` (WSR use 1/2).
        running_intersection: intersect with the CS at earlier budgets (valid).
        N: pool size, only to report the estimate ``R_M`` alongside the CS.

    Returns:
        An ``"exact"`` :class:`ConfidenceSequence`: coverage >= 1 - alpha at every
        budget simultaneously, for every pool (proof in the module docstring).
    """
    alpha = _check_alpha(alpha)
    th = np.asarray(theta, dtype=np.float64)
    one = th.ndim == 1
    th2 = np.atleast_2d(th)
    lo = np.ascontiguousarray(np.broadcast_to(np.asarray(theta_low, dtype=np.float64),
                                              th.shape).reshape(th2.shape))
    hi = np.ascontiguousarray(np.broadcast_to(np.asarray(theta_high, dtype=np.float64),
                                              th.shape).reshape(th2.shape))
    if th2.ndim != 2 or th2.shape[1] == 0:
        raise ValueError(f"theta must be (K,) or (R, K), got shape {th.shape}")
    if not np.all(np.isfinite(th2)):
        raise ValueError("theta must be finite")
    tol = 1e-9 * max(1.0, abs(value_high), abs(value_low))
    if np.any(th2 < lo - tol) or np.any(th2 > hi + tol):
        raise ValueError("theta lies outside [theta_low, theta_high]: the bounds are wrong "
                         "(they must hold for every item that could have been drawn)")
    if not value_low < value_high:
        raise ValueError("value_low must be below value_high")
    if not 0.0 < trunc < 1.0:
        raise ValueError(f"trunc must be in (0, 1), got {trunc!r}")
    lo = np.minimum(lo, th2)  # absorb rounding so every factor stays positive
    hi = np.maximum(hi, th2)
    R, K = th2.shape
    lam = np.ascontiguousarray(_plugin_bets(th2, alpha, 0.5 * (value_low + value_high),
                                            (0.5 * (value_high - value_low)) ** 2))
    if N is not None:
        est, se = martingale_se_curve(th2, N)
    else:
        est = np.full(th2.shape, np.nan)
        se = np.full(th2.shape, np.inf)
    if grid is None:
        if grid_size is None:
            grid_size = 4001 if R == 1 else 512
        if R == 1:
            gr = np.linspace(value_low, value_high, int(grid_size))[None, :]
        else:
            centre = est if N is not None else np.cumsum(th2, axis=1) / np.arange(1, K + 1)
            gr = _default_grid(centre, se, value_low, value_high, int(grid_size))
    else:
        gr = np.asarray(grid, dtype=np.float64)
        gr = np.broadcast_to(gr, (R, gr.shape[-1])) if gr.ndim == 1 else gr
        if gr.shape[0] != R:
            raise ValueError(f"grid must be (G,) or ({R}, G), got {gr.shape}")
    gr = np.ascontiguousarray(gr)
    low = np.empty((R, K))
    high = np.empty((R, K))
    _betting_kernel(np.ascontiguousarray(th2), lo, hi, lam, gr, float(np.log(2.0 / alpha)),
                    float(trunc), low, high)
    low = np.maximum(low, value_low)
    high = np.minimum(high, value_high)
    # known bounds are sums of floats: widen by rounding so the truth is never cut off
    eps = 1e-12 * max(1.0, abs(value_low), abs(value_high))
    if known_low is not None:
        kl = np.broadcast_to(np.asarray(known_low, dtype=np.float64), th.shape)
        low = np.maximum(low, kl.reshape(th2.shape) - eps)
    if known_high is not None:
        kh = np.broadcast_to(np.asarray(known_high, dtype=np.float64), th.shape)
        high = np.minimum(high, kh.reshape(th2.shape) + eps)
    if running_intersection:
        low = np.maximum.accumulate(low, axis=1)
        high = np.minimum.accumulate(high, axis=1)
    if one:
        est, low, high = est[0], low[0], high[0]
    return ConfidenceSequence(est, low, high, alpha, "exact")


def exact_cs(losses: np.ndarray, q: np.ndarray, N: int, *, loss_high: float,
             loss_low: float = 0.0, q_min: np.ndarray | None = None,
             q_floor: float | None = None, control: np.ndarray | None = None,
             control_rest: np.ndarray | None = None, control_low: float | None = None,
             control_high: float | None = None, alpha: float = 0.05,
             grid_size: int | None = None) -> ConfidenceSequence:
    """Exact CS for the pool risk of a bounded loss, from one or many runs.

    Args:
        losses, q: ``(..., K)`` losses of the drawn items and their ``q_m(i_m)``.
        N: pool size.
        loss_high, loss_low: every pool item's loss lies in ``[loss_low, loss_high]``
            (error rate: 0 and 1; log loss: 0 and :func:`log_loss_bound`).
        q_min: ``(..., K)`` lower bound on the proposal over the remaining items
            at each draw (the exact ``min_{S_m} q_m`` where a session has it), or
        q_floor: the proposal's guaranteed floor, ``q_min_m = q_floor / (N - m + 1)``
            (paper: ``alpha_floor / (1 + alpha_floor)``; see :func:`q_lower_bound`).
        control, control_rest: ``g^(m)`` at the drawn item and its sum over ``S_m``
            (CV-LURE, the adaptive design); bounded by ``[control_low, control_high]``.
    """
    L = np.asarray(losses, dtype=np.float64)
    if (q_min is None) == (q_floor is None):
        raise ValueError("give exactly one of q_min (per draw) or q_floor")
    if np.any(loss_low - 1e-12 > L) or np.any(loss_high + 1e-12 < L):
        raise ValueError(f"losses must lie in [{loss_low}, {loss_high}]")
    if (control is None) != (control_rest is None):
        raise ValueError("give both control and control_rest, or neither")
    K = L.shape[-1]
    qm = q_lower_bound(N, K, q_floor) if q_min is None else np.asarray(q_min, dtype=np.float64)
    th = _theta(L, q, N, control, control_rest)
    lo, hi = theta_bounds(L, N, qm, loss_low=loss_low, loss_high=loss_high,
                          control_rest=control_rest, control_low=control_low,
                          control_high=control_high)
    seen = np.cumsum(L, axis=-1)
    rest = N - np.arange(1, K + 1)
    return betting_cs(th, lo, hi, value_low=loss_low, value_high=loss_high, alpha=alpha,
                      known_low=(seen + rest * loss_low) / N,
                      known_high=(seen + rest * loss_high) / N, grid_size=grid_size, N=N)


# ---------------------------------------------------------------- paired


def paired_difference_cs(theta_a: np.ndarray, theta_b: np.ndarray, N: int, *,
                         alpha: float = 0.05, planned_labels: float = PLANNED_LABELS
                         ) -> ConfidenceSequence:
    """Asymptotic CS for ``R_a - R_b``, two targets' pool risks on the *same* draws.

    theta is linear in the loss, so ``theta_a - theta_b`` are the per-draw
    estimates for the per-item loss difference (with control ``g_a - g_b``), and
    the asymptotic CS of the difference follows. ``high < 0`` at any budget
    means "A has the lower risk" at level alpha, anytime; ``low > 0`` the reverse.
    """
    ta = np.asarray(theta_a, dtype=np.float64)
    tb = np.asarray(theta_b, dtype=np.float64)
    if ta.shape != tb.shape:
        raise ValueError(f"theta_a {ta.shape} and theta_b {tb.shape} must match (same draws)")
    return asymptotic_cs(ta - tb, N, alpha=alpha, planned_labels=planned_labels)


def paired_difference_exact_cs(losses_a: np.ndarray, losses_b: np.ndarray, q: np.ndarray,
                               N: int, *, bound_a: float, bound_b: float,
                               q_min: np.ndarray | None = None, q_floor: float | None = None,
                               alpha: float = 0.05, grid_size: int | None = None
                               ) -> ConfidenceSequence:
    """Exact CS for ``R_a - R_b`` (LURE, no control) from losses in ``[0, bound_*]``.

    The per-item difference lies in ``[-bound_b, bound_a]``; the CS is
    :func:`exact_cs` on it. Its lower bound on theta involves ``-bound_b / q_min``,
    so it is much wider than the CS of one target: a guarantee, not a workhorse.
    """
    La = np.asarray(losses_a, dtype=np.float64)
    Lb = np.asarray(losses_b, dtype=np.float64)
    if La.shape != Lb.shape:
        raise ValueError("losses_a and losses_b must have the same shape (same draws)")
    return exact_cs(La - Lb, q, N, loss_low=-float(bound_b), loss_high=float(bound_a),
                    q_min=q_min, q_floor=q_floor, alpha=alpha, grid_size=grid_size)
