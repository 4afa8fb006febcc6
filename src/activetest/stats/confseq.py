"""Confidence sequences for active testing: intervals valid at every budget at once.

A fixed-budget interval checked after every label is no longer a 95% interval:
someone who labels until it "looks narrow enough", or until it excludes a
value, stops preferentially at its errors. A confidence sequence (CS) is a
sequence of intervals ``C_1, C_2, ...`` with ``P(R in C_M for every M) >= 1 -
alpha``, so it stays valid at any data-dependent stopping budget.

This module holds the **asymptotic** CS, :func:`asymptotic_cs`: the time-uniform CLT
of Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas ("Time-uniform central limit theory
and asymptotic confidence sequences", Ann. Statist. 2024), applied to the weighted
martingale of :mod:`activetest.stats.intervals`. Cheap, about 1.6x the width of the
fixed-budget interval; its guarantee holds as the budget grows, like the CLT interval's.

The **exact** CS, a betting CS valid for every pool and budget with no approximation
for bounded losses, has its own module, :mod:`activetest.stats.betting`; how many labels
until a CS is narrow enough is projected in :mod:`activetest.stats.projection`.

All take the per-draw estimates ``theta_m`` (see :mod:`.intervals`):
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
Theorem) makes this an anytime CS (asymptotic) for R once V is replaced by a consistent
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
still an anytime CS (asymptotic) in WS et al.'s sense: its bounds differ from the plain
ones by a vanishing fraction of the width). The CS is claimed from
``min_labels = 30`` on: before that the studentized statistic of a skewed
importance-weighted sum is far from normal (docs/intervals.md measures it).

"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from activetest.stats.intervals import (
    BoundsCurve,
    _check_theta,
    _hall_bounds,
    moment_curves,
)
from activetest.stats.validate import float_array, is_whole, open_unit, real_number

__all__ = [
    "ConfidenceSequence",
    "asymptotic_cs",
    "asymptotic_cs_from_curves",
    "asymptotic_cs_multiplier",
    "budget_cs_multiplier",
    "budget_line_constant",
    "cs_claimed",
    "cs_clock",
    "default_budget",
    "max_budget",
    "normal_mixture_factor",
    "normal_mixture_rho2",
    "paired_difference_cs",
    "running_intersection",
]

#: Default planned budget for the mixture of the anytime CS (asymptotic) (labels).
PLANNED_LABELS = 200
#: The anytime CS (asymptotic) is claimed from this budget on.
MIN_LABELS = 30


def cs_claimed(n_labels: int, n_pool: int | None = None) -> bool:
    """Whether the anytime CS (asymptotic) claims an interval after ``n_labels`` labels of a pool
    of ``n_pool``: from :data:`MIN_LABELS` on, or once every pool item is labelled (a
    census: the pool's value is known exactly, and :func:`asymptotic_cs_from_curves`
    makes it the point there, however small the pool). Outputs show "from 30 labels"
    only where this is False (QA: a census of 2 items showed "(from 30 labels)" beside
    "you may stop now: the CS is 2e-12 wide")."""
    return n_labels >= MIN_LABELS or (n_pool is not None and n_labels >= n_pool)
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
        estimate: ``R_M`` (the LURE-family estimate; the exact anytime CS is not centred on it).
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
    return open_unit(alpha, "alpha")


# ---------------------------------------------------------------- asymptotic


def normal_mixture_rho2(planned_labels: float = PLANNED_LABELS, alpha: float = 0.05) -> float:
    """``rho^2`` minimising the normal-mixture boundary at clock ``planned_labels``.

    ``(-2 log alpha + log(1 - 2 log alpha)) / tau*`` (the closed-form approximation
    of WS et al. / Howard et al. 2021; within 0.1% of the numerical optimum).
    """
    alpha = _check_alpha(alpha)
    # (a string or None: Python's "'>' not supported between instances" before)
    if not real_number(planned_labels, "planned_labels", "a number of labels > 0") > 0:
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
            ``value_range``). An anytime CS (asymptotic) is only claimed from some start on
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
    if not is_whole(min_labels) or min_labels < 2:  # type: ignore[operator]
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


# ---------------------------------------------------------------- paired


def paired_difference_cs(theta_a: np.ndarray, theta_b: np.ndarray, N: int, *,
                         alpha: float = 0.05, planned_labels: float = PLANNED_LABELS
                         ) -> ConfidenceSequence:
    """Asymptotic CS for ``R_a - R_b``, two targets' pool risks on the *same* draws.

    theta is linear in the loss, so ``theta_a - theta_b`` are the per-draw
    estimates for the per-item loss difference (with control ``g_a - g_b``), and
    the anytime CS (asymptotic) of the difference follows. ``high < 0`` at any budget
    means "A has the lower risk" at level alpha, anytime; ``low > 0`` the reverse.
    """
    ta = float_array(theta_a, "theta_a")
    tb = float_array(theta_b, "theta_b")
    if ta.shape != tb.shape:
        raise ValueError(f"theta_a {ta.shape} and theta_b {tb.shape} must match (same draws)")
    return asymptotic_cs(ta - tb, N, alpha=alpha, planned_labels=planned_labels)
