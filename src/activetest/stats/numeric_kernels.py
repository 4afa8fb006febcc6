"""Small compiled numerical helpers (numba) the designs' kernels are built from.

A Cholesky factor and its solves for the small (features x features) systems of the
designs' Newton steps, the logistic link's pieces without overflow, a linear predictor
over one row, and the ridge penalty. Shared by the adaptive designs' kernels
(:mod:`activetest.stats._design_models`) and the history experiment's uniform-draw
baselines (:mod:`activetest.experiments.history_baselines`), so that the baselines are
fitted with the same arithmetic as the design they are compared with. Each is compiled
on first call (:func:`activetest.stats.kernels.njit`).
"""

from __future__ import annotations

import math

from activetest.stats.kernels import njit

__all__ = ["chol_solve", "cholesky", "linear", "log1pexp", "penalty", "sigmoid"]


@njit(cache=True)
def cholesky(A, Lo):  # pragma: no cover - compiled
    """In-place lower Cholesky factor of SPD ``A`` into ``Lo``; returns log det A."""
    K = A.shape[0]
    logdet = 0.0
    for j in range(K):
        d = A[j, j]
        for p in range(j):
            d -= Lo[j, p] * Lo[j, p]
        if d <= 0.0:
            d = 1e-300
        r = math.sqrt(d)
        Lo[j, j] = r
        logdet += 2.0 * math.log(r)
        for i in range(j + 1, K):
            v = A[i, j]
            for p in range(j):
                v -= Lo[i, p] * Lo[j, p]
            Lo[i, j] = v / r
        for i in range(j):
            Lo[i, j] = 0.0
    return logdet


@njit(cache=True)
def chol_solve(Lo, b, x):  # pragma: no cover - compiled
    """``x = A^{-1} b`` in place from ``A``'s lower Cholesky factor ``Lo``
    (:func:`cholesky`): a forward then a backward substitution."""
    K = b.shape[0]
    for i in range(K):
        v = b[i]
        for p in range(i):
            v -= Lo[i, p] * x[p]
        x[i] = v / Lo[i, i]
    for i in range(K - 1, -1, -1):
        v = x[i]
        for p in range(i + 1, K):
            v -= Lo[p, i] * x[p]
        x[i] = v / Lo[i, i]


@njit(cache=True)
def penalty(w, w0, K):  # pragma: no cover - compiled
    """``|w - w0|^2`` over the first ``K`` weights."""
    pen = 0.0
    for a in range(K):
        d = w[a] - w0[a]
        pen += d * d
    return pen


@njit(cache=True)
def log1pexp(x):  # pragma: no cover - compiled
    """``log(1 + e^x)`` without overflow."""
    if x > 0.0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@njit(cache=True)
def sigmoid(x):  # pragma: no cover - compiled
    """``1 / (1 + e^-x)`` without overflow."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(cache=True)
def linear(X, i, w):  # pragma: no cover - compiled
    """``X_i . w`` over ``X``'s columns."""
    eta = 0.0
    for a in range(X.shape[1]):
        eta += X[i, a] * w[a]
    return eta
