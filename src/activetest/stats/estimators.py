"""Risk estimators from one or many acquisition runs.

Conventions: ``losses`` and ``q`` are ``(..., K)`` arrays holding, for each run,
the loss of the m-th acquired item and the proposal probability it was drawn
with (m = 1..K along the last axis); ``N`` is the pool size. Every ``*_curve``
function returns the estimate after each of the first K labels, shape
``(..., K)``; the plain function returns the estimate at budget K.

LURE (Farquhar et al. 2021), with m counted from 1 and budget M::

    R_hat(M) = (1/M) sum_{m<=M} v_m loss_m,
    v_m = 1 + (N - M)/(N - m) * (1 / ((N - m + 1) q_m) - 1),   v_m = 1 if M = N.

Writing ``a_m = loss_m (1/((N-m+1) q_m) - 1) / (N - m)`` (and ``a_N = 0``)
gives the cumulative-sum identity used by :func:`lure_curve`::

    R_hat(M) = (1/M) [ sum_{m<=M} loss_m  +  (N - M) sum_{m<=M} a_m ].

LURE is unbiased for the pool mean of *any* per-item function under the
sequential floored sampler, so the control-variate estimator::

    R_cv(M) = mean_pool(h) + LURE(loss - h)

is unbiased too, for any fixed per-item ``h`` (e.g. the surrogate's expected
loss of the target); its variance is small when ``h`` tracks the loss.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ase",
    "cv_lure",
    "cv_lure_curve",
    "importance_sampling",
    "importance_sampling_curve",
    "lure",
    "lure_curve",
    "lure_terms",
    "lure_weights",
    "tuned_beta",
    "uniform_mean",
    "uniform_mean_curve",
]


def _check(losses: object, q: object, N: int) -> tuple[np.ndarray, np.ndarray, int]:
    L = np.asarray(losses, dtype=np.float64)
    Q = np.asarray(q, dtype=np.float64)
    if L.shape != Q.shape:
        raise ValueError(f"losses {L.shape} and q {Q.shape} must have the same shape")
    if L.ndim == 0 or L.shape[-1] == 0:
        raise ValueError("losses must hold at least one acquired item (last axis)")
    if isinstance(N, bool) or int(N) != N:
        raise ValueError(f"N must be an integer pool size, got {N!r}")
    N = int(N)
    K = L.shape[-1]
    if K > N:
        raise ValueError(f"{K} acquired items exceed the pool size N = {N}")
    if not np.all(np.isfinite(L)):
        raise ValueError("losses must be finite")
    if not np.all((Q > 0) & (Q <= 1)):
        raise ValueError("q must lie in (0, 1]: every acquired item had positive probability")
    return L, Q, N


def lure_weights(q: np.ndarray, N: int) -> np.ndarray:
    """LURE weights v_m for the final budget M = K (the last axis of ``q``)."""
    Q = np.asarray(q, dtype=np.float64)
    _, Q, N = _check(np.zeros_like(Q), Q, N)
    M = Q.shape[-1]
    if M == N:
        return np.ones_like(Q)
    m = np.arange(1, M + 1)
    return 1.0 + (N - M) / (N - m) * (1.0 / ((N - m + 1) * Q) - 1.0)


def lure_terms(losses: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """The reweighted losses ``v_m loss_m`` at budget K; their mean is LURE."""
    L, Q, N = _check(losses, q, N)
    return lure_weights(Q, N) * L


def lure(losses: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """LURE estimate at budget K (the full last axis); shape ``losses.shape[:-1]``."""
    return lure_terms(losses, q, N).mean(axis=-1)


def lure_curve(losses: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """LURE after every label, via the cumulative-sum identity (O(K), not O(K^2))."""
    L, Q, N = _check(losses, q, N)
    K = L.shape[-1]
    m = np.arange(1, K + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = L * (1.0 / ((N - m + 1) * Q) - 1.0) / (N - m)
    if K == N:
        a[..., -1] = 0.0  # multiplied by N - M = 0 only
    return (np.cumsum(L, axis=-1) + (N - m) * np.cumsum(a, axis=-1)) / m


def uniform_mean(losses: np.ndarray) -> np.ndarray:
    """Plain mean of the K losses (unbiased under uniform sampling only)."""
    L = np.asarray(losses, dtype=np.float64)
    return L.mean(axis=-1)


def uniform_mean_curve(losses: np.ndarray) -> np.ndarray:
    """Running mean after every label."""
    L = np.asarray(losses, dtype=np.float64)
    return np.cumsum(L, axis=-1) / np.arange(1, L.shape[-1] + 1)


def importance_sampling(losses: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """IS: ``(1/K) sum_m loss_m / (N q_m)``; biased without replacement (ablation only)."""
    L, Q, N = _check(losses, q, N)
    return (L / (N * Q)).mean(axis=-1)


def importance_sampling_curve(losses: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """IS after every label."""
    L, Q, N = _check(losses, q, N)
    return np.cumsum(L / (N * Q), axis=-1) / np.arange(1, L.shape[-1] + 1)


def ase(expected_loss: np.ndarray) -> float:
    """ASE: the pool mean of the surrogate's expected loss (uses no labels)."""
    h = np.asarray(expected_loss, dtype=np.float64)
    if h.ndim != 1 or h.size == 0:
        raise ValueError("expected_loss must be a non-empty 1-D array over the pool")
    return float(h.mean())


def tuned_beta(losses: np.ndarray, control: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """Variance-minimising control coefficient from the labelled items alone.

    ``beta = Cov(v*loss, v*h) / Var(v*h)`` over the reweighted terms at budget K.
    Because beta is estimated from the same labels, ``cv_lure(..., beta=tuned)``
    is only *asymptotically* unbiased (its bias is O(1/K)); use ``beta=1`` for an
    exactly unbiased estimate.
    """
    v = lure_weights(q, N)
    a = v * np.asarray(losses, dtype=np.float64)
    b = v * np.asarray(control, dtype=np.float64)
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    var = (b * b).sum(axis=-1)
    cov = (a * b).sum(axis=-1)
    return np.where(var > 0, cov / np.where(var > 0, var, 1.0), 0.0)


def cv_lure(losses: np.ndarray, q: np.ndarray, N: int, control: np.ndarray,
            control_pool_mean: float, beta: float | np.ndarray = 1.0) -> np.ndarray:
    """Control-variate LURE at budget K: ``beta*mean_pool(h) + LURE(loss - beta*h)``.

    Args:
        control: ``h`` at each acquired item, same shape as ``losses``.
        control_pool_mean: the pool mean of ``h`` (known: h needs no labels).
        beta: 1 (unbiased) or per-run coefficients (see :func:`tuned_beta`).
    """
    H = np.asarray(control, dtype=np.float64)
    B = np.asarray(beta, dtype=np.float64)[..., None]
    return np.squeeze(B, -1) * control_pool_mean + lure(np.asarray(losses) - B * H, q, N)


def cv_lure_curve(losses: np.ndarray, q: np.ndarray, N: int, control: np.ndarray,
                  control_pool_mean: float) -> np.ndarray:
    """Control-variate LURE (beta = 1, unbiased) after every label."""
    H = np.asarray(control, dtype=np.float64)
    return control_pool_mean + lure_curve(np.asarray(losses, dtype=np.float64) - H, q, N)
