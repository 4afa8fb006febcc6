"""Adaptive LURE with per-draw weights fixed in advance (a prototype; not the default).

Adaptive LURE (:func:`activetest.stats.estimators.adaptive_lure_curve`) combines the
per-draw estimates ``theta_m`` (:func:`~activetest.stats.estimators.adaptive_lure_theta`)
with LURE's weights ``c_m = N (N - M) / (M (N - m)(N - m + 1))``. Each ``theta_m`` is
unbiased for the pool mean given the draws before it, whatever the design learnt, so
**any weights fixed before the run** (functions of m, M, N and label-free information
only) that sum to one keep the estimate exactly unbiased:

    R_M^v = sum_m v_m theta_m,   sum_m v_m = 1,   E R_M^v = mean(L).

The ``theta_m - mean(L)`` are martingale differences (uncorrelated), so the mean squared
error is ``sum_m v_m^2 E[Var(theta_m | past)]``, least for ``v_m`` proportional to
``1 / E Var(theta_m | past)``. LURE's ``c_m`` are exactly that when the control and the
proposal do not improve (``E Var(theta_m | past)`` proportional to ``(N - m)(N - m + 1)``:
uniform draws). A design that refits its model on the labels gets better controls as the
labels arrive: its early draws (the prior's control) are noisier *relative to uniform*
than its late ones, and LURE's weights give them the same say. :func:`step_weights`
takes a **relative variance profile** ``rho(m)`` (the design's per-draw variance over
uniform's at draw m, up to a constant) and returns ``v_m`` proportional to
``c_m / rho(m)``.

The profile must not come from the target's labels (it would make the weights random and
the estimate biased): :func:`profile_from_runs` estimates it from simulated runs of the
same design on *other* models' rows of the response matrix (pseudo-targets), and
:func:`smooth_profile` fits ``rho(m) = a + b / (m + m0)`` to it.
"""

from __future__ import annotations

import numpy as np

from activetest.stats.estimators import adaptive_lure_weights

__all__ = ["profile_from_runs", "smooth_profile", "step_weights", "weighted_lure_curve"]


def step_weights(N: int, M: int, profile: np.ndarray | None = None) -> np.ndarray:
    """``(M,)`` weights ``v_m`` proportional to ``c_m / profile[m - 1]``, summing to one.

    Args:
        N: pool size; M: budget (1 <= M <= N).
        profile: ``(>= M,)`` positive relative per-draw variances, fixed before the run;
            None: LURE's own weights.
    """
    c = adaptive_lure_weights(N, M)
    if profile is None:
        return c
    p = np.asarray(profile, dtype=np.float64)[:M]
    if p.shape != (M,) or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"the profile must hold {M} positive finite values")
    if M == N:
        return c  # theta_N is the pool mean itself
    v = c / p
    return v / v.sum()


def weighted_lure_curve(theta: np.ndarray, N: int, budgets: tuple[int, ...],
                        profile: np.ndarray | None = None) -> np.ndarray:
    """``(..., B)`` the step-weighted estimate at each budget from ``theta`` (``(..., K)``,
    K >= max(budgets)); each budget M uses :func:`step_weights` ``(N, M, profile)``."""
    th = np.asarray(theta, dtype=np.float64)
    return np.stack([th[..., :M] @ step_weights(N, M, profile) for M in budgets], axis=-1)


def profile_from_runs(theta: np.ndarray, truth: np.ndarray, N: int) -> np.ndarray:
    """``(K,)`` the mean over pseudo-targets of each draw's squared error relative to
    uniform's: ``mean_runs (theta_m - truth)^2 * c_m`` normalised per pseudo-target to
    mean one (``c_m`` proportional to 1 / uniform's per-draw variance).

    Args:
        theta: ``(T, R, K)`` per-draw estimates of R simulated runs on T pseudo-targets
            (other models than the one measured).
        truth: ``(T,)`` their pool means.
    """
    th = np.asarray(theta, dtype=np.float64)
    T, _, K = th.shape
    c = adaptive_lure_weights(N, K)
    out = np.empty((T, K))
    for t in range(T):
        p = ((th[t] - truth[t]) ** 2).mean(axis=0) * c
        out[t] = p / p.mean()
    return out.mean(axis=0)


def smooth_profile(raw: np.ndarray, m0_grid: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 64)
                   ) -> np.ndarray:
    """``(K,)`` the least-squares fit of ``a + b / (m + m0)`` (a, b >= 0; m0 from the grid)
    to a raw profile, floored at a tenth of its mean (a noisy raw profile must not give
    one draw all the weight)."""
    r = np.asarray(raw, dtype=np.float64)
    K = r.size
    m = np.arange(1, K + 1, dtype=np.float64)
    best, fit = np.inf, np.ones(K)
    for m0 in m0_grid:
        A = np.column_stack([np.ones(K), 1.0 / (m + m0)])
        coef, *_ = np.linalg.lstsq(A, r, rcond=None)
        coef = np.maximum(coef, 0.0)
        f = A @ coef
        err = float(((f - r) ** 2).sum())
        if err < best and f.min() > 0:
            best, fit = err, f
    return np.maximum(fit, 0.1 * fit.mean())
