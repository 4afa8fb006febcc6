"""Fixed-budget intervals for active testing from the per-draw estimates theta_m.

The design (METHOD.md, ADAPTIVE.md): draw m (m = 1..M) picks ``i_m`` from the
remaining set ``S_m`` (``|S_m| = N - m + 1``) with probability ``q_m(i)``; the
proposal ``q_m`` and a control ``g^(m)`` may depend on everything seen before
draw m. The per-draw estimate::

    N theta_m = sum_{j<m} L_{i_j} + sum_{i in S_m} g^(m)_i + (L_{i_m} - g^(m)_{i_m}) / q_m(i_m)

satisfies ``E[theta_m | F_{m-1}] = R`` (the pool mean risk), so ``D_m = theta_m - R``
are martingale differences. ``g = 0`` is LURE, a fixed ``g`` control-variate LURE.

**The estimate as a weighted martingale.** With the deterministic weights
``w_m = N / ((N - m)(N - m + 1))`` (which do not depend on the budget) and
``W_M = sum_{m<=M} w_m = M / (N - M)``, the LURE-family estimate at budget M is::

    R_M = sum_{m<=M} c_m theta_m,   c_m = w_m / W_M = N (N - M) / (M (N - m)(N - m + 1)),

so ``R_M - R = Z_M / W_M`` with ``Z_M = sum_{m<=M} w_m D_m`` a martingale in M. Its
variance is the expected predictable quadratic variation::

    Var R_M = E[V_M] / W_M^2,   V_M = sum_{m<=M} w_m^2 sigma_m^2,
    sigma_m^2 = Var(theta_m | F_{m-1}) = (sum_{S_m} (L-g)^2 / q_m - (sum_{S_m} (L-g))^2) / N^2.

**The variance estimate.** ``(theta_m - R)^2`` is conditionally unbiased for
``sigma_m^2``, so ``sum_m w_m^2 (theta_m - R)^2`` is unbiased for ``E[V_M]`` under
*any* adaptive design (the cross terms vanish by the martingale property; checked
exactly by enumeration in the tests). Replacing the unknown R by ``R_M`` gives::

    SE_M^2 = sum_{m<=M} c_m^2 (theta_m - R_M)^2 / kappa_M,   kappa_M = 1 - 2 S3/S2 + S2,

with ``S2 = sum c_m^2`` and ``S3 = sum c_m^3``: ``kappa_M`` is the exact small-sample
correction for independent terms of equal variance (``1 - 1/M`` when the c_m are
equal: the analogue of ddof = 1). ``SE_M^2 / Var(R_M | F) -> 1`` whenever the
conditional variances do not collapse and a Lindeberg condition holds (bounded
losses and a proposal floored away from 0 suffice); then the martingale CLT
(Hall and Heyde 1980, Thm 3.2; the argument of Zrnic and Candes 2024, "Active
statistical inference", for adaptively sampled inverse-probability terms) gives
``T = (R_M - R) / SE_M -> N(0, 1)``, and ``R_M +- z_{(1+level)/2} SE_M`` has
asymptotic coverage ``level`` at a budget fixed in advance (``skew=False``).
None of this is valid if the budget is chosen by looking at the intervals (use
:mod:`.confseq`).

**Second-order refinements (default).** Inverse-probability terms are skewed (a
rare item with a small ``q`` and a large loss), and the runs that have not met
one yet have both a low estimate and a low SE, so the symmetric interval misses
mostly on one side at small budgets. Two standard corrections, both vanishing
as M grows (so the interval stays asymptotically the one above):

* Hall's (1992, "On the removal of skewness by transformation") monotone
  transformation of the studentized statistic, ``g(T) = T + a T^2 + a^2 T^3 / 3
  + a / 2`` with ``a = gamma_M / 3`` and ``gamma_M = sum c^3 (theta - R_M)^3 /
  (sum c^2 (theta - R_M)^2)^{3/2}`` the estimated skewness of ``R_M`` (for i.i.d.
  terms ``gamma / sqrt(M)``); ``g(T)`` is normal to second order, so the interval
  is ``[R_M - SE g^{-1}(k), R_M - SE g^{-1}(-k)]`` with
  ``g^{-1}(x) = ((1 + 3 a (x - a/2))^{1/3} - 1) / a``;
* Student quantiles ``k = t_{df, (1+level)/2}`` with Kish's ``df = 1/S2 - 1``
  (``M - 1`` for equal weights) for the estimated variance.

**Skewness that may only widen (``skew_widens_only=True``).** Hall's interval is
shorter than the symmetric Student one on the side the estimated skewness points away
from. Where that skewness is mostly noise the shortened side misses: a graded
session's paired difference (about half the labelled differences 0, the rest spread
over seven values, weighted by an unrelated proposal) covered 0.922 at 30 labels with
Hall's interval and 0.956 with the symmetric Student one (1,000 seeded sessions,
``benchmarks/graded_difference_coverage.py``). With the flag each side is the farther
of Hall's and ``R_M -+ k SE_M``: the union of two intervals with the same first-order
guarantee, so never less coverage than either, and the same interval as M grows.
Sessions use it for paired differences (``session.estimate``), whose terms carry two
models' errors of either sign; a single target's risk keeps Hall's interval, whose
skewness has a known direction (rare large losses drawn with small ``q``).

**The finite-population factor is built in.** ``sigma_m`` shrinks as the remaining
set does (``sigma_N = 0``: the last draw reveals the pool). Under uniform
sampling the estimate is the sample mean and ``E sum c_m^2 (theta_m - R)^2 =
Var R_M = (1 - M/N) S^2 / M`` exactly (S^2 the pool variance, ddof 1), the
textbook finite-population variance, which ``SE_M^2`` matches to Monte Carlo
error in the tests; the bootstrap of the reweighted losses estimates ``S^2 / M``
instead, which over-covers the pool risk by the missing ``1 - M/N``.

**Runs that have not met the surprises (adaptive designs).** A design that learns
a control g makes most residuals L - g small; the variance then sits in a few
items the model underweights, and a run that has not drawn one yet has a low
estimate *and* a low SE at once (measured: the studentized statistic's sd 1.1-1.6
and mean down to -0.7 at 30-400 labels, coverage 0.85-0.93). The design knows
what it expects: with ``s_i`` the model's sd of item i's loss and ``g_i`` its mean,
``N^2 Var(theta_m | past) = sum_{S_m} s_i^2 / q_m(i) - sum_{S_m} s_i^2`` under the
model, an F_{m-1}-measurable prediction that does not depend on whether this run
met the surprises. With ``model_var=`` the SE is ``max(SE_obs, SE_model)``,
``SE_model^2 = sum c_m^2 x_m`` (``x_m`` the model's variance where it has one, the
observed term before a learnt design's first fit). The maximum of a consistent
estimate and anything else is asymptotically conservative, so the guarantee
above stands; the cost is a wider interval where the model over-predicts.

**Pool risk or population risk.** All of the above is design-based inference for
the pool's own mean R: the pool is fixed and the randomness is the draws. If the
target is the risk of the distribution the pool was sampled from (e.g. to compare
with a held-out test set's mean), add the pool's sampling variance ``S^2 / N``
(``pool_variance=`` below; estimate S^2 with :func:`pool_variance_curve`); the
test set's own mean has a further ``S^2 / N_test`` of noise around that risk.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from activetest.stats.validate import float_array, is_whole, open_unit

__all__ = [
    "FixedInterval",
    "IntervalCurve",
    "estimate_curve",
    "fixed_interval",
    "fixed_interval_curve",
    "hall_bounds",
    "interval_from_curves",
    "martingale_se_curve",
    "moment_curves",
    "pool_variance_curve",
]


def _check_theta(theta: object, N: int) -> tuple[np.ndarray, int]:
    th = float_array(theta, "theta")
    if th.ndim == 0 or th.shape[-1] == 0:
        raise ValueError("theta must hold at least one draw (last axis)")
    if not is_whole(N) or N < 1:  # (a string, None, NaN: int()'s errors before)
        raise ValueError(f"N must be a positive integer pool size, got {N!r}")
    N = int(N)
    if th.shape[-1] > N:
        raise ValueError(f"{th.shape[-1]} draws exceed the pool size N = {N}")
    if not np.all(np.isfinite(th)):
        raise ValueError("theta must be finite")
    return th, N


def _weights(N: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """``w_m`` for m = 1..min(K, N-1) padded to K, and ``W_M = M / (N - M)`` (inf at M = N)."""
    m = np.arange(1, K + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        w = N / ((N - m) * (N - m + 1.0))
        W = m / (N - m)
    return w, W


def _theta(losses: object, q: object, N: int, control: object = None,
           control_rest: object = None) -> np.ndarray:
    """``theta_m`` for LURE (``control=None``) or a control ``g`` (ADAPTIVE.md's formula).

    ``control`` is ``g^(m)`` at the drawn item and ``control_rest`` the sum of
    ``g^(m)`` over ``S_m``. Kept private: the package's general estimator
    (``estimators.adaptive_lure_theta``) computes the same quantity.
    """
    L = np.asarray(losses, dtype=np.float64)
    Q = np.asarray(q, dtype=np.float64)
    before = np.cumsum(L, axis=-1) - L
    if control is None:
        return (before + L / Q) / N
    g = np.asarray(control, dtype=np.float64)
    G = np.asarray(control_rest, dtype=np.float64)
    return (before + G + (L - g) / Q) / N


def _fixed_control_rest(h: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``G_m = sum(h) - sum_{j<m} h_{i_j}`` for a fixed control ``h`` over the pool."""
    hi = np.asarray(h, dtype=np.float64)[indices]
    return float(np.sum(h)) - (np.cumsum(hi, axis=-1) - hi)


def estimate_curve(theta: np.ndarray, N: int) -> np.ndarray:
    """``R_M = sum_{m<=M} w_m theta_m / W_M`` for every M = 1..K, in O(K).

    Equals LURE (``theta`` from g = 0), control-variate LURE (fixed g) or the
    adaptive estimate of ADAPTIVE.md, whichever produced ``theta``. ``R_N = theta_N``.
    """
    th, N = _check_theta(theta, N)
    K = th.shape[-1]
    w, W = _weights(N, K)
    # shift by the first term: cumsums of small numbers (the terms' spread), no
    # cancellation; the first term, not the run's mean, so that every budget's value is
    # a function of the terms up to it alone, bit for bit (a run cut at M gives the
    # first M values of the longer run's curve: :func:`moment_curves`)
    s = th[..., :1]
    with np.errstate(invalid="ignore", divide="ignore"):
        out = s + np.cumsum(w * (th - s), axis=-1) / W
    if K == N:
        out[..., -1] = th[..., -1]
    return out


def moment_curves(theta: np.ndarray, N: int, model_var: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(R_M, SE_M, gamma_M, df_M)`` at every budget, from cumulative sums (O(K)).

    ``model_var``: per draw ``N^2 Var(theta_m | past)`` as the design's model
    predicts it (NaN where it has none); then ``SE_M^2`` is the larger of the
    observed estimate and the model's (module docstring) and gamma is rescaled to it.

    Prefix-consistent to the last bit: every value at budget M is computed from the
    terms (and ``model_var``) up to M alone, so a run cut at M gives the first M points
    of the longer run's curves, and terms without spread (up to 1e-12 of their size, or
    the rounding of it) read as no spread (SE 0) alike in both.
    """
    th, N = _check_theta(theta, N)
    mv = None
    if model_var is not None:
        mv = np.asarray(model_var, dtype=np.float64)
        if mv.shape != th.shape:
            raise ValueError(f"model_var has shape {mv.shape}; theta has {th.shape}")
        if np.any(mv[np.isfinite(mv)] < 0):
            raise ValueError("model_var must be >= 0 (or NaN where unknown)")
    K = th.shape[-1]
    w, W = _weights(N, K)
    n_fin = min(K, N - 1)  # budgets with finite weights
    est = estimate_curve(th, N)
    se = np.zeros(th.shape)
    gam = np.zeros(th.shape)
    df = np.full(K, np.inf)
    if n_fin >= 1:
        t = th[..., :n_fin]
        s = t[..., :1]  # estimate_curve's shift: every sum at M is of the terms up to M
        d = t - s
        e = est[..., :n_fin] - s
        w2, w3 = w[:n_fin] ** 2, w[:n_fin] ** 3
        A0, C0 = np.cumsum(w2), np.cumsum(w3)
        A1, C1 = np.cumsum(w2 * d, axis=-1), np.cumsum(w3 * d, axis=-1)
        A2, C2 = np.cumsum(w2 * d * d, axis=-1), np.cumsum(w3 * d * d, axis=-1)
        C3 = np.cumsum(w3 * d**3, axis=-1)
        m2 = np.maximum(A2 - 2 * e * A1 + e * e * A0, 0.0)  # sum w^2 (theta - R_M)^2
        # equal terms so far (e.g. no error yet) are no spread: with the first term as
        # the shift their shifted sums are exactly 0, so a CS's "no spread, no interval"
        # rule sees it (and terms equal up to rounding, whose spread is of the order of
        # the rounding of their size: QA, 45 equal log losses gave SE 7e-19, a point
        # fixed-budget interval and CS, and "you may stop now"). Every sum and threshold
        # at budget M is of the terms up to M only (cumsums add in order), so the rule
        # is prefix-consistent to the last bit: a run cut at M has the first M points of
        # the longer run's curves, where it claims nothing and where it does (the shift
        # was the whole run's mean, which let a spread just above 1e-12 of the terms'
        # size be judged "none" in one and not in the other)
        scale = np.maximum.accumulate(np.abs(t), axis=-1)  # the size of the terms so far
        m2 = np.where((m2 <= 1e-12 * (A2 + e * e * A0))
                      | (m2 <= (1e-12 * scale) ** 2 * A0), 0.0, m2)
        m3 = C3 - 3 * e * C2 + 3 * e * e * C1 - e**3 * C0  # sum w^3 (theta - R_M)^3
        Wf = W[:n_fin]
        S2 = A0 / Wf**2
        S3 = C0 / Wf**3
        kappa = 1.0 - 2.0 * S3 / S2 + S2
        with np.errstate(invalid="ignore", divide="ignore"):
            v = m2 / Wf**2 / kappa
            g = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0)
            df[:n_fin] = 1.0 / S2 - 1.0
            if mv is not None:  # the model's variance where it has one, else the observed
                known = np.isfinite(mv[..., :n_fin])
                x = np.where(known, mv[..., :n_fin], 0.0) / float(N) ** 2
                u = np.where(known, 0.0, w2)
                U0, U1 = np.cumsum(u, axis=-1), np.cumsum(u * d, axis=-1)
                U2 = np.cumsum(u * d * d, axis=-1)
                r2 = np.maximum(U2 - 2 * e * U1 + e * e * U0, 0.0)
                r2 = np.where((r2 <= 1e-12 * (U2 + e * e * U0))
                              | (r2 <= (1e-12 * scale) ** 2 * U0), 0.0, r2)  # as m2
                rest = r2 / kappa
                v_obs = v
                v = np.maximum(v, (np.cumsum(w2 * x, axis=-1) + rest) / Wf**2)
                g = _rescaled_skewness(g, np.sqrt(v_obs), np.sqrt(v))
        v[..., 0] = np.inf
        se[..., :n_fin] = np.sqrt(v)
        gam[..., :n_fin] = g
    return est, se, gam, df


def _rescaled_skewness(gamma: np.ndarray, se_from: np.ndarray, se_to: np.ndarray) -> np.ndarray:
    """The skewness ``gamma`` of an estimate whose SE was ``se_from``, restated for a
    wider SE ``se_to`` (the third moment is unchanged: ``gamma (se_from / se_to)^3``;
    0 where ``se_to`` is 0 or the ratio is undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(se_to > 0, gamma * (se_from / np.where(se_to > 0, se_to, 1.0)) ** 3, 0.0)
    return np.where(np.isfinite(out), out, 0.0)


def martingale_se_curve(theta: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray]:
    """``(R_M, SE_M)`` for every budget M = 1..K (see the module docstring).

    ``SE_M^2 = sum_{m<=M} c_m^2 (theta_m - R_M)^2 / kappa_M``. ``SE_1 = inf`` (one
    draw says nothing about its spread) and ``SE_N = 0`` (the pool is revealed).
    """
    est, se, _, _ = moment_curves(theta, N)
    return est, se


def _student_quantile(p: float, df: np.ndarray) -> np.ndarray:
    """Student-t quantile by the Cornish-Fisher expansion (Abramowitz and Stegun 26.7.5).

    At p = 0.975: within 1e-3 of the exact value for df >= 4 and 3e-5 for df >= 8
    (exact as df -> inf); df is clipped at 1 (a handful of labels gives no usable
    interval anyway). Below 4 it is low: 11.30 for 12.71 at df = 1, 4.27 for 4.30 at
    df = 2 (an interval from 2-3 labels about 11 % and 1 % too narrow). Kept, knowingly
    (2026-12-05): the exact quantile there (tried: the regularised incomplete beta,
    inverted) changes the behaviour probes of the cached history experiments
    (``activetest.experiments.probe``), whose tables the docs re-render from the cache,
    for intervals no one should read at 2-3 labels (the CS starts at 30).
    """
    x = NormalDist().inv_cdf(p)
    nu = np.maximum(np.asarray(df, dtype=np.float64), 1.0)
    g1 = (x**3 + x) / 4
    g2 = (5 * x**5 + 16 * x**3 + 3 * x) / 96
    g3 = (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384
    g4 = (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160
    return x + g1 / nu + g2 / nu**2 + g3 / nu**3 + g4 / nu**4


def hall_bounds(est: np.ndarray, se: np.ndarray, gamma: np.ndarray, k: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """``[R - SE g^{-1}(k), R - SE g^{-1}(-k)]`` with Hall's transformation, ``a = gamma/3``
    (``est`` R, ``se`` SE, ``gamma`` the skewness, ``k`` the multiplier: a quantile, or a
    CS's boundary such as :func:`activetest.stats.confseq.normal_mixture_factor`); an
    infinite SE gives ``(-inf, inf)``."""
    a = np.asarray(gamma, dtype=np.float64) / 3.0
    small = np.abs(a) < 1e-8
    a_safe = np.where(small, 1.0, a)

    def ginv(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", over="ignore"):
            r = (np.cbrt(1.0 + 3.0 * a_safe * (x - a_safe / 2)) - 1.0) / a_safe
        return np.where(small, x, r)

    with np.errstate(invalid="ignore"):
        lo = est - se * ginv(k)
        hi = est - se * ginv(-k)
    inf = ~np.isfinite(se)
    return np.where(inf, -np.inf, lo), np.where(inf, np.inf, hi)


#: The former private name (kept for callers in other branches).
_hall_bounds = hall_bounds


class Bounds:
    """What every interval record shares: ``low``, ``high`` (floats, or arrays of
    budgets) and their width. A base of the records' dataclasses, not one itself: the
    records declare their own fields."""

    low: Any
    high: Any

    @property
    def width(self) -> Any:
        """``high - low``."""
        return self.high - self.low


class BoundsCurve(Bounds):
    """Intervals at every budget M = 1..K: ``low``, ``high`` of shape ``(..., K)``."""

    def at(self, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` after ``budget`` labels (1-based)."""
        return self.low[..., budget - 1], self.high[..., budget - 1]


@dataclass(frozen=True)
class IntervalCurve(BoundsCurve):
    """Fixed-budget intervals at every budget M = 1..K (arrays of shape ``(..., K)``).

    Attributes:
        estimate: ``R_M``.
        se: ``SE_M``.
        low, high: ``R_M -+ z SE_M``.
        level: nominal coverage at a budget fixed in advance.
        target: ``"pool"`` (the pool's mean loss) or ``"population"`` (``S^2/N`` added).
    """

    estimate: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    target: str


@dataclass(frozen=True)
class FixedInterval(Bounds):
    """The fixed-budget interval after the last label of one run."""

    estimate: float
    se: float
    low: float
    high: float
    level: float
    n_labels: int
    target: str


def _z(level: float) -> float:
    level = open_unit(level, "level")
    return NormalDist().inv_cdf(0.5 + level / 2)


def fixed_interval_curve(theta: np.ndarray, N: int, *, level: float = 0.95,
                         pool_variance: float | np.ndarray | None = None,
                         skew: bool = True,
                         model_var: np.ndarray | None = None,
                         skew_widens_only: bool = False) -> IntervalCurve:
    """Martingale-CLT interval at every budget M = 1..K.

    ``skew=True`` (default): Hall's skewness-corrected studentized interval with
    Student quantiles (module docstring); ``skew=False``: ``R_M +- z SE_M``.

    Args:
        theta: ``(..., K)`` per-draw estimates theta_m (LURE, CV-LURE or adaptive).
        N: pool size.
        level: coverage at a budget fixed in advance.
        pool_variance: ``S^2``, the variance of the per-item loss over the pool
            (scalar or broadcastable to ``(..., K)``, e.g. :func:`pool_variance_curve`).
            Given, the interval targets the *population* risk the pool was drawn
            from: ``SE^2 + S^2 / N`` (and the skewness is rescaled to that SE).
            Default: the pool's own mean loss.
        model_var: an adaptive design's own prediction of ``N^2 Var(theta_m | past)``
            per draw (:attr:`activetest.stats.adaptive.DesignRuns.model_var`; NaN
            where it has none): the SE is then the larger of the observed and the
            model's (module docstring, "Runs that have not met the surprises").
        skew_widens_only: with ``skew``, each side is the farther of Hall's and the
            symmetric Student interval's (module docstring, "Skewness that may only
            widen"; sessions' paired differences).
    """
    return interval_from_curves(*moment_curves(theta, N, model_var), N, level=level,
                                 pool_variance=pool_variance, skew=skew,
                                 skew_widens_only=skew_widens_only)


def interval_from_curves(est: np.ndarray, se: np.ndarray, gam: np.ndarray, df: np.ndarray,
                         N: int, *, level: float = 0.95,
                         pool_variance: float | np.ndarray | None = None,
                         skew: bool = True, skew_widens_only: bool = False) -> IntervalCurve:
    """:func:`fixed_interval_curve` from precomputed :func:`moment_curves` (reused by the
    experiments)."""
    z = _z(level)
    target = "pool"
    if pool_variance is not None:
        # (a string: numpy's "could not convert", or "0.5" read as 0.5, before)
        if isinstance(pool_variance, (bool, np.bool_)):
            raise ValueError(f"pool_variance must be a number or array >= 0, got "
                             f"{pool_variance!r}")
        pv = float_array(pool_variance, "pool_variance", "a number or array >= 0")
        try:
            np.broadcast_shapes(pv.shape, se.shape)
        except ValueError:  # (numpy's "operands could not be broadcast" before)
            raise ValueError(f"pool_variance has shape {pv.shape}: it must be a number or "
                             f"broadcast to the curve's shape {se.shape}") from None
        if np.any(pv < 0) or not np.all(np.isfinite(pv)):
            raise ValueError("pool_variance must be finite and >= 0")
        se_pool = se
        se = np.sqrt(se**2 + pv / int(N))
        gam = _rescaled_skewness(gam, se_pool, se)
        target = "population"
    if skew:
        k = _student_quantile(0.5 + level / 2, df)
        lo, hi = _hall_bounds(est, se, gam, k)
        if skew_widens_only:  # never a side inside the symmetric Student interval
            with np.errstate(invalid="ignore"):
                lo, hi = np.minimum(lo, est - k * se), np.maximum(hi, est + k * se)
    else:
        lo, hi = est - z * se, est + z * se
    exact = se == 0  # M = N: the pool mean itself, up to the rounding of a sum
    eps = 1e-12 * np.maximum(1.0, np.abs(est))
    lo, hi = np.where(exact, est - eps, lo), np.where(exact, est + eps, hi)
    return IntervalCurve(est, se, lo, hi, float(level), target)


def fixed_interval(theta: np.ndarray, N: int, *, level: float = 0.95,
                   pool_variance: float | None = None, skew: bool = True,
                   model_var: np.ndarray | None = None,
                   skew_widens_only: bool = False) -> FixedInterval:
    """The interval after the last of the K draws of one run (1-D ``theta``).

    This is what a session shows after each label when the budget was fixed in
    advance; see :func:`fixed_interval_curve` for the math.
    """
    th = float_array(theta, "theta")
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D (one run), got shape {th.shape}")
    c = fixed_interval_curve(th, N, level=level, pool_variance=pool_variance, skew=skew,
                             model_var=model_var, skew_widens_only=skew_widens_only)
    return FixedInterval(float(c.estimate[-1]), float(c.se[-1]), float(c.low[-1]),
                         float(c.high[-1]), c.level, th.size, c.target)


def pool_variance_curve(theta_sq: np.ndarray, theta: np.ndarray, N: int) -> np.ndarray:
    """Estimate of the pool variance ``S^2`` (ddof 1) of the loss at every budget.

    ``theta_sq`` are the per-draw estimates for the *squared* loss on the same
    draws (the same formula with ``L^2``; no control needed), so
    ``S^2_M = N/(N-1) * max(R_M[L^2] - R_M[L]^2, 0)``, consistent as M grows.
    """
    sq, th = float_array(theta_sq, "theta_sq"), float_array(theta, "theta")
    if sq.shape != th.shape:  # (QA: a scalar theta_sq was called "theta"; another
        # length gave numpy's broadcast error)
        raise ValueError(f"theta_sq {sq.shape} must have the shape of theta {th.shape} (the "
                         f"same draws, the squared loss)")
    a = estimate_curve(sq, N)
    b = estimate_curve(th, N)
    return (N / max(N - 1, 1)) * np.maximum(a - b * b, 0.0)
