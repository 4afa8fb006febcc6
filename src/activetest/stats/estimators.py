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

Adaptive LURE (the general form; ADAPTIVE.md, "Unbiasedness"): draw m picks
``i_m`` from the remaining set ``S_m`` (``|S_m| = N - m + 1``) with probability
``q_m(i_m)`` and uses a control ``g^(m)``; both may depend on everything seen
before draw m. With ``G_m = sum_{i in S_m} g^(m)_i``::

    N theta_m = sum_{j<m} L_{i_j} + G_m + (L_{i_m} - g^(m)_{i_m}) / q_m(i_m),

so ``E[theta_m | past] = R`` (the pool mean) for every m, and with the fixed
weights ``c_m = N (N - M) / (M (N - m)(N - m + 1))`` (they sum to 1 over
m = 1..M; ``R_N`` = the pool mean)::

    R_M = sum_{m<=M} c_m theta_m

is exactly unbiased. ``g = 0`` gives LURE and a fixed ``g = h`` gives
control-variate LURE, term for term in the sum (the coefficient of ``L_j`` is
``sum_{m>j} c_m / N = (1 - (N - M)/(N - j)) / M``, LURE's). The ``theta_m`` are
martingale differences around R, so ``Var R_M = sum_m c_m^2 E(theta_m - R)^2``.
"""

from __future__ import annotations

import numpy as np

from activetest.stats.validate import float_array, is_whole, real_number

__all__ = [
    "adaptive_lure",
    "adaptive_lure_curve",
    "adaptive_lure_se",
    "adaptive_lure_terms",
    "adaptive_lure_theta",
    "adaptive_lure_weights",
    "ase",
    "cv_lure",
    "cv_lure_curve",
    "fixed_control_rest",
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
    L = float_array(losses, "losses")
    Q = float_array(q, "q")
    if L.shape != Q.shape:
        raise ValueError(f"losses {L.shape} and q {Q.shape} must have the same shape")
    if L.ndim == 0 or L.shape[-1] == 0:
        raise ValueError("losses must hold at least one acquired item (last axis)")
    if not is_whole(N):  # (a string, None, NaN: int()'s errors before)
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
    Q = float_array(q, "q")
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
    return _losses(losses).mean(axis=-1)


def uniform_mean_curve(losses: np.ndarray) -> np.ndarray:
    """Running mean after every label."""
    L = _losses(losses)
    return np.cumsum(L, axis=-1) / np.arange(1, L.shape[-1] + 1)


def _losses(losses: object) -> np.ndarray:
    L = float_array(losses, "losses")
    if L.ndim == 0 or L.shape[-1] == 0:
        raise ValueError("losses must hold at least one acquired item (last axis)")
    return L


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
    h = float_array(expected_loss, "expected_loss")
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
    L, Q, N = _check(losses, q, N)  # (another length than q's: numpy's broadcast error)
    v = lure_weights(Q, N)
    a = v * L
    b = v * _fixed_control(L, control)
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
    L = float_array(losses, "losses")
    H = _fixed_control(L, control)
    B = float_array(beta, "beta")
    try:
        np.broadcast_shapes(B.shape, L.shape[:-1])
    except ValueError:  # (numpy's "operands could not be broadcast" before)
        raise ValueError(f"beta has shape {B.shape}: give a number or one per run "
                         f"{L.shape[:-1]}") from None
    B = B[..., None]
    c = real_number(control_pool_mean, "control_pool_mean")
    if not np.isfinite(c):
        raise ValueError(f"control_pool_mean must be finite, got {c!r}")
    return np.squeeze(B, -1) * c + lure(L - B * H, q, N)


def cv_lure_curve(losses: np.ndarray, q: np.ndarray, N: int, control: np.ndarray,
                  control_pool_mean: float) -> np.ndarray:
    """Control-variate LURE (beta = 1, unbiased) after every label."""
    L = float_array(losses, "losses")
    H = _fixed_control(L, control)
    c = real_number(control_pool_mean, "control_pool_mean")
    if not np.isfinite(c):
        raise ValueError(f"control_pool_mean must be finite, got {c!r}")
    return c + lure_curve(L - H, q, N)


def _fixed_control(L: np.ndarray, control: object) -> np.ndarray:
    """``control`` (``h`` at each acquired item) checked against the losses ``L``: the
    same shape (QA: another length gave numpy's broadcast error, a scalar was taken for
    every item), finite (QA: NaN was refused as "losses must be finite")."""
    H = float_array(control, "control")
    if H.shape != L.shape:
        raise ValueError(f"control {H.shape} must have the shape of losses {L.shape} (h at "
                         f"each acquired item)")
    if not np.all(np.isfinite(H)):
        i = int(np.argmax(~np.isfinite(H.ravel())))
        raise ValueError(f"control must be finite, got {H.ravel()[i]} at flat position {i}")
    return H


def _check_controls(L: np.ndarray, control: object, control_rest: object
                    ) -> tuple[np.ndarray, np.ndarray]:
    g = np.zeros_like(L) if control is None else float_array(control, "control")
    G = np.zeros_like(L) if control_rest is None else float_array(control_rest, "control_rest")
    if (control is None) != (control_rest is None):
        raise ValueError("give both control (g at the drawn items) and control_rest (the sum "
                         "of g over the remaining items at each draw), or neither")
    for name, a in (("control", g), ("control_rest", G)):
        if a.shape != L.shape:
            raise ValueError(f"{name} {a.shape} must have the shape of losses {L.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite")
    return g, G


def fixed_control_rest(h: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``G_m = sum_{i in S_m} h_i`` for a fixed control ``h`` and the acquired ``indices``.

    ``S_m`` holds the item drawn at step m and every item not yet drawn, so
    ``G_m = sum(h) - sum_{j<m} h_{i_j}``. Shape of ``indices`` (``(..., K)``).
    """
    hv = float_array(h, "h", "a numeric 1-D array (the control on the pool)")
    if hv.ndim != 1:
        raise ValueError(f"h must be a 1-D array (the control on the pool), got shape {hv.shape}")
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise ValueError(f"indices must be integer pool rows, got dtype {idx.dtype}")
    if np.any((idx < 0) | (idx >= hv.size)):
        raise ValueError(f"indices must be pool rows in 0..{hv.size - 1}, got "
                         f"{int(idx[(idx < 0) | (idx >= hv.size)][0])}")
    hi = hv[idx]
    return hv.sum() - (np.cumsum(hi, axis=-1) - hi)


def adaptive_lure_theta(losses: np.ndarray, q: np.ndarray, N: int, control: object = None,
                        control_rest: object = None) -> np.ndarray:
    """The per-draw estimates ``theta_m`` (each unbiased for the pool mean given the past).

    Args:
        losses: ``(..., K)`` loss of the m-th acquired item.
        q: ``(..., K)`` its probability ``q_m(i_m)`` under the proposal of draw m.
        N: pool size.
        control: ``(..., K)`` ``g^(m)_{i_m}``, the control of draw m at the drawn item
            (default 0: plain LURE).
        control_rest: ``(..., K)`` ``G_m``, the sum of ``g^(m)`` over ``S_m`` (the drawn
            item and all items not yet drawn).

    Returns:
        ``(..., K)``: ``theta_m = (sum_{j<m} L_j + G_m + (L_m - g_m)/q_m) / N``.
    """
    L, Q, N = _check(losses, q, N)
    g, G = _check_controls(L, control, control_rest)
    before = np.cumsum(L, axis=-1) - L
    return (before + G + (L - g) / Q) / N


def adaptive_lure_weights(N: int, M: int) -> np.ndarray:
    """``c_m = N (N - M) / (M (N - m)(N - m + 1))`` for m = 1..M (``c = e_N`` when M = N)."""
    if not is_whole(N) or not is_whole(M) or not 1 <= M <= N:  # type: ignore[operator]
        raise ValueError(f"N (pool size) and M (budget) must be integers with 1 <= M <= N, "
                         f"got N={N!r}, M={M!r}")
    N, M = int(N), int(M)
    if M == N:
        c = np.zeros(M)
        c[-1] = 1.0
        return c
    m = np.arange(1, M + 1)
    return N * (N - M) / (M * (N - m) * (N - m + 1.0))


def adaptive_lure_curve(losses: np.ndarray, q: np.ndarray, N: int, control: object = None,
                        control_rest: object = None) -> np.ndarray:
    """``R_M`` for every M = 1..K in O(K): ``N (N - M)/M * cumsum(theta_m/((N-m)(N-m+1)))``."""
    th = adaptive_lure_theta(losses, q, N, control, control_rest)
    K = th.shape[-1]
    m = np.arange(1, K + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = np.cumsum(th / ((N - m) * (N - m + 1.0)), axis=-1)
        out = N * (N - m) / m * acc
    if K == N:
        out[..., -1] = th[..., -1]  # R_N = theta_N = the pool mean
    return out


def adaptive_lure(losses: np.ndarray, q: np.ndarray, N: int, control: object = None,
                  control_rest: object = None) -> np.ndarray:
    """``R_M = sum_m c_m theta_m`` at budget M = K (the full last axis)."""
    th = adaptive_lure_theta(losses, q, N, control, control_rest)
    return (adaptive_lure_weights(int(N), th.shape[-1]) * th).sum(axis=-1)


def adaptive_lure_terms(losses: np.ndarray, q: np.ndarray, N: int, control: object = None,
                        control_rest: object = None) -> np.ndarray:
    """Reweighted terms ``t_m = M c_m theta_m`` at budget M = K; their mean is ``R_M``.

    These are what the single-run error bars resample (:func:`activetest.stats.bootstrap`,
    or ``std(t)/sqrt(M)``). At M = N (the whole pool) they are the losses themselves,
    whose mean is the pool mean exactly.
    """
    th = adaptive_lure_theta(losses, q, N, control, control_rest)
    N, M = int(N), th.shape[-1]
    if N == M:
        return np.asarray(losses, dtype=np.float64).copy()
    return M * adaptive_lure_weights(N, M) * th


def adaptive_lure_se(losses: np.ndarray, q: np.ndarray, N: int, control: object = None,
                     control_rest: object = None) -> np.ndarray:
    """Plug-in standard error ``sqrt(sum_m c_m^2 (theta_m - R_M)^2)``.

    The ``theta_m - R`` are martingale differences, so ``Var R_M = sum_m c_m^2
    E(theta_m - R)^2``; this replaces R by ``R_M``. It is approximate (no
    guarantee), like the bootstrap, and 0 at M = N.
    """
    th = adaptive_lure_theta(losses, q, N, control, control_rest)
    N, M = int(N), th.shape[-1]
    if N == M:
        return np.zeros(th.shape[:-1])
    c = adaptive_lure_weights(N, M)
    est = (c * th).sum(axis=-1, keepdims=True)
    return np.sqrt((c**2 * (th - est) ** 2).sum(axis=-1))
