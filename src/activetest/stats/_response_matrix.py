"""A response matrix (models x items, scores in [0, 1], NaN = missing) checked, and its
items' shrunk difficulty: shared by :mod:`activetest.stats.feature_design` and
:mod:`activetest.stats.neighbours` (which the feature design imports, so neither can
import the other for these)."""

from __future__ import annotations

import numpy as np

__all__ = ["SHRINK"]

#: Pseudo-models of the difficulty's shrinkage towards the matrix mean.
SHRINK = 2.0


def _as_matrix(matrix: object) -> np.ndarray:
    Y = np.asarray(matrix, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] < 1 or Y.shape[1] < 1:
        raise ValueError(f"the response matrix must be (models, items), got shape {Y.shape}")
    obs = ~np.isnan(Y)
    if np.any(np.isinf(Y)) or np.any((Y[obs] < 0) | (Y[obs] > 1)):
        raise ValueError("response-matrix cells must be scores in [0, 1] (or missing)")
    return Y


def _difficulty(Y: np.ndarray, shrink: float = SHRINK) -> tuple[np.ndarray, np.ndarray, float]:
    obs = ~np.isnan(Y)
    n_obs = obs.sum(axis=0)
    tot = np.where(obs, Y, 0.0).sum(axis=0)
    ybar = float(tot.sum() / max(n_obs.sum(), 1))
    p = (tot + shrink * ybar) / (n_obs + shrink)
    return p, n_obs > 0, ybar
