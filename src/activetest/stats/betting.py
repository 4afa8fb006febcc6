"""The exact confidence sequence: a betting (capital-process) CS for bounded losses.

:func:`exact_cs` / :func:`betting_cs` (**exact**): valid for every pool and every
budget with no approximation, for losses with a known bound (error rate in [0, 1]; log
loss up to the largest per-item loss the target's predictions allow, see
:func:`log_loss_bound`), under sequential, non-uniform, adaptive sampling without
replacement. This extends Waudby-Smith and Ramdas (NeurIPS 2020, equal weights) and
Shekhar, Xu, Lipton, Liang and Ramdas (UAI 2023, weighted sampling without replacement)
to the active-testing estimate with a control. Wider than the anytime CS (asymptotic) of
:mod:`activetest.stats.confseq`, especially its upper end; the few-errors rule
(:mod:`activetest.stats.fewerrors`) lets it stand in while too few errors are labelled
for the asymptotic one.

It runs on the same per-draw estimates ``theta_m`` (:mod:`.intervals`), with
``E[theta_m | F_{m-1}] = R`` for LURE, CV-LURE and the adaptive design alike.

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

import numpy as np

from activetest.stats.confseq import ConfidenceSequence, _check_alpha
from activetest.stats.intervals import _theta, martingale_se_curve
from activetest.stats.kernels import njit
from activetest.stats.validate import float_array, is_whole, open_unit, real_number

__all__ = [
    "betting_capital",
    "betting_cs",
    "exact_cs",
    "log_loss_bound",
    "paired_difference_exact_cs",
    "q_lower_bound",
    "theta_bounds",
]


def log_loss_bound(target_logprobs: np.ndarray) -> float:
    """The largest log loss any pool item can have: ``max_{i, c} -log p_f(c | x_i)``.

    Known without labels when the target's predictions are on the pool, so it is
    a valid a priori bound for :func:`exact_cs` with the log loss.
    """
    lp = float_array(target_logprobs, "target_logprobs",
                     "a numeric (N, C) array of class log-probabilities")
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

    Args:
        theta: ``(..., K)`` per-draw estimates (``(K,)`` or ``(R, K)``), finite.
        theta_low, theta_high: ``lo_m <= theta_m <= hi_m``, numbers or arrays that
            broadcast to ``theta`` (not bools).
        r: the null value, a number or one per run (``theta.shape[:-1]``), finite.
        value_low, value_high: the range of the pool risk, ``value_low < value_high``.
        alpha: the CS's miscoverage in (0, 1) (it sets the plug-in bets).
        trunc: c in (0, 1) in the bet caps ``c / (r - lo_m)``, ``c / (hi_m - r)``.

    Raises:
        ValueError: an argument of another type (a string, a bool, None) or shape,
            named as :func:`betting_cs` names it; bounds that ``theta`` lies outside
            (QA: arguments went straight into numpy: ``theta_high=True`` was the bound
            1, ``r=True`` the null 1 and ``r="0.5"`` 0.5, ``value_low="0"`` raised
            Python's "can only concatenate str", a scalar ``theta`` an IndexError).
    """
    th = float_array(theta, "theta")
    if th.ndim == 0 or th.shape[-1] == 0:
        raise ValueError(f"theta must be (K,) or (R, K) with K >= 1, got shape {th.shape}")
    if not np.all(np.isfinite(th)):
        raise ValueError("theta must be finite")
    lo = np.broadcast_to(_bound(theta_low, "theta_low", th.shape), th.shape)
    hi = np.broadcast_to(_bound(theta_high, "theta_high", th.shape), th.shape)
    value_low = real_number(value_low, "value_low")
    value_high = real_number(value_high, "value_high")
    if not value_low < value_high:
        raise ValueError(f"value_low must be below value_high, got {value_low!r} and "
                         f"{value_high!r}")
    tol = 1e-9 * max(1.0, abs(value_high), abs(value_low))
    if np.any(th < lo - tol) or np.any(th > hi + tol):
        raise ValueError("theta lies outside [theta_low, theta_high]: the bounds are wrong "
                         "(they must hold for every item that could have been drawn)")
    trunc = open_unit(trunc, "trunc")
    r_what = "a number or one number per run (the null value of the pool risk)"
    if isinstance(r, (bool, np.bool_)) or (isinstance(r, np.ndarray) and r.dtype == np.bool_):
        got = "a bool array" if isinstance(r, np.ndarray) else repr(bool(r))
        raise ValueError(f"r must be {r_what}, got {got}")
    rr = float_array(r, "r", r_what)
    try:
        fits = np.broadcast_shapes(rr.shape, th.shape[:-1]) == th.shape[:-1]
    except ValueError:
        fits = False
    if not fits:
        runs = (f"one run, shape {th.shape}" if th.ndim == 1 else
                f"{th.shape[:-1]} runs: give a number or one per run")
        raise ValueError(f"r must be a number (theta is {runs}), got shape {rr.shape}")
    if not np.all(np.isfinite(rr)):
        raise ValueError("r must be finite")
    lo = np.minimum(lo, th)
    hi = np.maximum(hi, th)
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
    n_coarse = min(max(16, grid_size // 4), grid_size)  # (all of a grid under 16 points)
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
    th = float_array(theta, "theta")
    value_low = real_number(value_low, "value_low")
    value_high = real_number(value_high, "value_high")
    if th.ndim not in (1, 2):  # (a scalar: numpy's "cannot broadcast a non-scalar" before)
        raise ValueError(f"theta must be (K,) or (R, K), got shape {th.shape}")
    one = th.ndim == 1
    th2 = np.atleast_2d(th)
    lo = np.ascontiguousarray(np.broadcast_to(_bound(theta_low, "theta_low", th.shape),
                                              th.shape).reshape(th2.shape))
    hi = np.ascontiguousarray(np.broadcast_to(_bound(theta_high, "theta_high", th.shape),
                                              th.shape).reshape(th2.shape))
    kl = None if known_low is None else _bound(known_low, "known_low", th.shape)
    kh = None if known_high is None else _bound(known_high, "known_high", th.shape)
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
    trunc = open_unit(trunc, "trunc")
    if not isinstance(running_intersection, (bool, np.bool_)):
        raise ValueError(f"running_intersection must be True or False, got "
                         f"{running_intersection!r}")
    if N is not None and (not is_whole(N) or N < 1):  # type: ignore[operator]
        raise ValueError(f"N must be a positive integer pool size, or None, got {N!r}")
    if grid_size is not None and grid is None and (not is_whole(grid_size) or grid_size < 2):  # type: ignore[operator]
        raise ValueError(f"grid_size must be a whole number of grid points >= 2, or None, "
                         f"got {grid_size!r}")
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
    if kl is not None:
        low = np.maximum(low, np.broadcast_to(kl, th.shape).reshape(th2.shape) - eps)
    if kh is not None:
        high = np.minimum(high, np.broadcast_to(kh, th.shape).reshape(th2.shape) + eps)
    if running_intersection:
        low = np.maximum.accumulate(low, axis=1)
        high = np.minimum.accumulate(high, axis=1)
    if one:
        est, low, high = est[0], low[0], high[0]
    return ConfidenceSequence(est, low, high, alpha, "exact")


def _bound(x: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A bound given per draw: a number or an array that broadcasts to ``shape``; a bool
    (or an array of them) is refused by name (QA: ``theta_high=True`` was taken as 1)."""
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype == np.bool_):
        raise ValueError(f"{name} must be a number or an array of numbers (a bound), got "
                         f"{'a bool array' if isinstance(x, np.ndarray) else repr(bool(x))}")
    a = float_array(x, name)
    if not np.all(np.isfinite(a)) and np.any(np.isnan(a)):
        raise ValueError(f"{name} has a NaN: bounds must be numbers (infinity allowed)")
    try:
        np.broadcast_shapes(a.shape, shape)
    except ValueError:
        raise ValueError(f"{name} {a.shape} does not fit the draws' shape {shape}") from None
    return a


def exact_cs(losses: np.ndarray, q: np.ndarray, N: int, *, loss_high: float,
             loss_low: float = 0.0, q_min: np.ndarray | None = None,
             q_floor: float | None = None, control: np.ndarray | None = None,
             control_rest: np.ndarray | None = None, control_low: float | None = None,
             control_high: float | None = None, weight_bound: np.ndarray | None = None,
             rest_bound: np.ndarray | None = None, alpha: float = 0.05,
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
        weight_bound: ``(..., K)`` instead of ``q_min``/``q_floor``: before each draw, an
            upper bound on ``|L_i - g_i| / q_m(i)`` over the items that could be drawn
            (with per-item bounds ``|L_i| <= B_i`` known on the pool and no control,
            :func:`activetest.stats.proposal.floored_weight_bound`), predictable; then
            ``|N theta_m - sum_{j<m} L_j - G_m| <= W_m`` bounds the bets. Where most
            items have ``B_i = 0`` (two targets that agree) it is far below the floor's.
        rest_bound: ``(..., K)`` after each draw, ``sum |L_i|``'s bound over the items
            not yet drawn: the risk surely lies within ``(sum_{j<=t} L_j -+ rest_t) / N``,
            intersected with what the loss range allows.

    The proof (module docstring) needs only bounds on ``theta_m`` known before draw m and
    bounds the risk surely satisfies: ``weight_bound`` and ``rest_bound`` give both.
    """
    L = float_array(losses, "losses")
    q = float_array(q, "q")
    try:
        fits = L.ndim > 0 and L.shape[-1] > 0 and np.broadcast_shapes(q.shape, L.shape) == L.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"losses {L.shape} and q {q.shape} must be (..., K) arrays of K >= 1 "
                         f"draws, q of the shape of losses (or one that broadcasts to it)")
    if not is_whole(N) or N < 1:  # type: ignore[operator]
        raise ValueError(f"N must be a positive integer pool size, got {N!r}")
    N = int(N)  # type: ignore[call-overload]
    loss_low = real_number(loss_low, "loss_low")
    loss_high = real_number(loss_high, "loss_high")
    if q_floor is not None:
        q_floor = real_number(q_floor, "q_floor")
    if weight_bound is None and (q_min is None) == (q_floor is None):
        raise ValueError("give exactly one of q_min (per draw) or q_floor (or weight_bound)")
    out = (loss_low - 1e-12 > L) | (loss_high + 1e-12 < L) | np.isnan(L)
    if np.any(out):  # the first one named (QA: the range alone; NaN passed)
        at = tuple(int(i) for i in np.argwhere(out)[0])
        where = ", ".join(map(str, at))
        raise ValueError(f"losses[{where}] = {float(L[at])!r} is outside [{loss_low}, "
                         f"{loss_high}]: loss_low and loss_high must bound every loss "
                         f"(error rate: 0 and 1; log loss: 0 and log_loss_bound)")
    if (control is None) != (control_rest is None):
        raise ValueError("give both control and control_rest, or neither")
    K = L.shape[-1]
    th = _theta(L, q, N, control, control_rest)
    seen = np.cumsum(L, axis=-1)
    if weight_bound is None:
        qm = (q_lower_bound(N, K, q_floor) if q_min is None
              else np.asarray(q_min, dtype=np.float64))
        lo, hi = theta_bounds(L, N, qm, loss_low=loss_low, loss_high=loss_high,
                              control_rest=control_rest, control_low=control_low,
                              control_high=control_high)
    else:
        W = np.broadcast_to(np.asarray(weight_bound, dtype=np.float64), L.shape)
        if np.any(W < 0) or not np.all(np.isfinite(W)):
            raise ValueError("weight_bound must be finite and non-negative")
        mid = seen - L + (0.0 if control_rest is None
                          else np.asarray(control_rest, dtype=np.float64))
        lo, hi = (mid - W) / N, (mid + W) / N
    rest = N - np.arange(1, K + 1)
    known_low, known_high = (seen + rest * loss_low) / N, (seen + rest * loss_high) / N
    if rest_bound is not None:
        R = np.broadcast_to(np.asarray(rest_bound, dtype=np.float64), L.shape)
        known_low = np.maximum(known_low, (seen - R) / N)
        known_high = np.minimum(known_high, (seen + R) / N)
    return betting_cs(th, lo, hi, value_low=loss_low, value_high=loss_high, alpha=alpha,
                      known_low=known_low, known_high=known_high, grid_size=grid_size, N=N)


def paired_difference_exact_cs(losses_a: np.ndarray, losses_b: np.ndarray, q: np.ndarray,
                               N: int, *, bound_a: float, bound_b: float,
                               q_min: np.ndarray | None = None, q_floor: float | None = None,
                               weight_bound: np.ndarray | None = None,
                               rest_bound: np.ndarray | None = None,
                               alpha: float = 0.05, grid_size: int | None = None
                               ) -> ConfidenceSequence:
    """Exact CS for ``R_a - R_b`` (LURE, no control) from losses in ``[0, bound_*]``.

    The per-item difference lies in ``[-bound_b, bound_a]``; the CS is
    :func:`exact_cs` on it. Its lower bound on theta involves ``-bound_b / q_min``,
    so it is much wider than the CS of one target: a guarantee, not a workhorse.

    With per-item bounds known on the pool (both targets' predictions: ``|d_i| <= B_i``,
    0 where two error rates' predictions agree) it is far tighter: ``weight_bound``
    (before each draw, ``max B_i / q_m(i)`` over the items that could be drawn,
    :func:`activetest.stats.proposal.floored_weight_bound`) and ``rest_bound`` (the sure
    bounds' ``sum B_i`` over the undrawn items), as :func:`exact_cs` takes them.
    """
    La = float_array(losses_a, "losses_a")
    Lb = float_array(losses_b, "losses_b")
    if La.shape != Lb.shape:
        raise ValueError("losses_a and losses_b must have the same shape (same draws)")
    bound_a = real_number(bound_a, "bound_a")
    bound_b = real_number(bound_b, "bound_b")
    return exact_cs(La - Lb, q, N, loss_low=-bound_b, loss_high=bound_a,
                    q_min=q_min, q_floor=q_floor, weight_bound=weight_bound,
                    rest_bound=rest_bound, alpha=alpha, grid_size=grid_size)
