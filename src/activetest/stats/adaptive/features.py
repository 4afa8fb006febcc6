"""The label-free inputs of the adaptive designs: per-class loss tables, the calibration
features of the surrogate and the target, the graded and PE features, and their lazy form
for large pools (the same bits, computed entry by entry). See :mod:`activetest.stats.adaptive`."""

from __future__ import annotations

from typing import Any

import numpy as np

from activetest.stats import _design_models as dm
from activetest.stats.validate import as_logprobs, as_vector

__all__ = [
    "LAZY_MIN_ROWS",
    "PRIOR_CLIP",
    "LazyLossTable",
    "calibration_features",
    "graded_matrix",
    "loss_table",
    "mixture_score_control",
    "pe_features",
]


#: From this many pool items on, the calibrated designs keep their features and loss
#: tables lazy (:class:`LazyLossTable`; computed entry by entry from the model outputs
#: with the same float operations, so the same bits) instead of as ``(N, C, C + 1)``
#: and ``(N, C)`` arrays (48 + 16 bytes per item with two classes).
LAZY_MIN_ROWS = 1 << 18

#: Clip of the graded design's label-free prior probability before its log-odds.
PRIOR_CLIP = (0.01, 0.99)

def loss_table(target_logprobs: np.ndarray, loss: str = "log") -> np.ndarray:
    """``(N, C)`` loss of the target if the label were c: ``-log p_f(c|x)`` or ``1[c != pred]``."""
    t = as_logprobs(target_logprobs, "target_logprobs")
    if loss == "log":
        return -t
    if loss == "zero_one":
        return (np.arange(t.shape[1])[None, :] != t.argmax(axis=1)[:, None]).astype(np.float64)
    raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")

class LazyLossTable:
    """A loss table computed from the target's log-probs ``t`` on demand (the
    kernel's lazy ``(t, mode)``, :mod:`._design_models`): ``mode`` 0 ``-t``
    (:func:`loss_table` ``"log"``), 1 ``1[c != argmax t_i]`` (``"zero_one"``), 2 both
    side by side (the two-metric design's table). Indexed like the array with
    ``[rows, columns]`` (integer arrays or integers)."""

    def __init__(self, t: np.ndarray, mode: int) -> None:
        self.t = t
        self.mode = int(mode)
        C = t.shape[1]
        self.shape = (t.shape[0], 2 * C if self.mode == dm.LAZY_BOTH else C)
        #: what the kernels take
        self.kernel = (t, self.mode)

    def __getitem__(self, key: tuple[Any, Any]) -> Any:
        rows, cols = key
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        r, c = np.broadcast_arrays(r, c)
        C = self.t.shape[1]
        if np.any((c < 0) | (c >= self.shape[1])):
            raise IndexError(f"column outside 0..{self.shape[1] - 1}")
        log = self.mode == dm.LAZY_LOG or self.mode == dm.LAZY_BOTH
        out = np.empty(r.shape, dtype=np.float64)
        first = c < C if log else np.zeros(r.shape, dtype=bool)
        out[first] = -self.t[r[first], c[first]]
        rest = ~first
        cc = c[rest] - (C if self.mode == dm.LAZY_BOTH else 0)
        out[rest] = (cc != np.argmax(self.t[r[rest]], axis=1)).astype(np.float64)
        return out if out.ndim else float(out)

def _lazy_features(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's lazy :func:`calibration_features`: ``(s, t, mean s, mean t)``."""
    s = np.ascontiguousarray(as_logprobs(surrogate_logprobs, "surrogate_logprobs"))
    t = np.ascontiguousarray(as_logprobs(target_logprobs, "target_logprobs", s.shape[1]))
    if s.shape != t.shape:
        raise ValueError(f"surrogate_logprobs {s.shape} and target_logprobs {t.shape} must have "
                         "the same (N, C) shape")
    return s, t, s.mean(axis=0), t.mean(axis=0)

def _sequential_sum(v: np.ndarray, block: int = 1 << 20) -> float:
    """``0.0 + v[0] + v[1] + ...`` in index order, as the kernels sum (numpy's ``sum`` is
    pairwise): a running sum in blocks, without compiling a kernel."""
    tot = 0.0
    for start in range(0, v.shape[0], block):
        part = np.array(v[start:start + block], dtype=np.float64)
        part[0] = tot + part[0]
        tot = float(np.cumsum(part)[-1])
    return tot

def _use_lazy(lazy: bool | None, n: int) -> bool:
    if lazy is not None and not isinstance(lazy, (bool, np.bool_)):  # ("a" was taken as True)
        raise ValueError(f"lazy must be True, False or None (from {LAZY_MIN_ROWS} items on), "
                         f"got {lazy!r}")
    return n >= LAZY_MIN_ROWS if lazy is None else bool(lazy)

def calibration_features(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray
                         ) -> np.ndarray:
    """``(N, C, C + 1)`` label-free features ``[lpi - mean lpi, lpf - mean lpf, e_2..e_C]``."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    t = as_logprobs(target_logprobs, "target_logprobs", s.shape[1])
    if s.shape != t.shape:
        raise ValueError(f"surrogate_logprobs {s.shape} and target_logprobs {t.shape} must have "
                         "the same (N, C) shape")
    N, C = s.shape
    F = np.zeros((N, C, C + 1))
    F[:, :, 0] = s - s.mean(axis=0)
    F[:, :, 1] = t - t.mean(axis=0)
    for c in range(1, C):
        F[:, c, 1 + c] = 1.0
    return F

def mixture_score_control(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray,
                          loss: str = "log") -> tuple[np.ndarray, np.ndarray]:
    """Score ``sd_P(l)`` and control ``E_P[l]`` under the mixture ``P = (pi + p_f) / 2``."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    t = as_logprobs(target_logprobs, "target_logprobs", s.shape[1])
    P = 0.5 * (np.exp(s) + np.exp(t))
    lt = loss_table(t, loss)
    g = (P * lt).sum(axis=1)
    v = (P * lt**2).sum(axis=1) - g**2
    return np.sqrt(np.maximum(v, 0.0)), g

def graded_matrix(features: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """``(N, K)`` matrix ``[logit(clip(p0)), 1, standardised features]`` of the graded design.

    ``features``: ``(N, D)`` label-free per-item features (``D >= 0``); each column
    is centred and scaled to unit sd over the pool (constant columns are dropped).
    ``prior``: ``(N,)`` a label-free probability that the answer is wrong, or None
    (no offset column).
    """
    Z = np.asarray(features, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[0] < 1:
        raise ValueError(f"features must be (N, D), got shape {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("features must be finite")
    n = Z.shape[0]
    sd = Z.std(axis=0)
    keep = sd > 0
    Z = (Z[:, keep] - Z[:, keep].mean(axis=0)) / sd[keep]
    cols = [np.ones((n, 1)), Z]
    if prior is not None:
        p = as_vector(prior, "prior", n)
        if np.any((p < 0) | (p > 1)):
            raise ValueError("prior must hold probabilities in [0, 1]")
        p = np.clip(p, *PRIOR_CLIP)
        cols.insert(0, np.log(p / (1 - p))[:, None])
    return np.ascontiguousarray(np.hstack(cols))

def pe_features(surrogate_logprobs: np.ndarray) -> np.ndarray:
    """``(N, C + 1)`` surrogate-only features ``[pi(2..C), H(pi), max pi]``, standardised."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    p = np.exp(s)
    X = np.column_stack([p[:, 1:], -(p * s).sum(axis=1), p.max(axis=1)])
    X = X - X.mean(axis=0)
    sd = X.std(axis=0)
    return X / np.where(sd > 0, sd, 1.0)
