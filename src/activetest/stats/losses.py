"""Per-item losses of a target model, and log-space helpers.

All inputs are ``(N, C)`` float arrays of class log-probabilities (each row a
log-softmax over the classes) and length-N integer labels.
"""

from __future__ import annotations

import numpy as np

from activetest.stats.validate import as_labels, as_logprobs, float_array

__all__ = ["log_loss", "log_softmax", "logsumexp", "zero_one_loss"]


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log(sum(exp(a)))`` along ``axis``, stable for large values (max-shift)."""
    a = np.asarray(a, dtype=np.float64)
    mx = np.max(a, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    out = mx + np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis)


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Normalise raw logits to log-probabilities: ``z - logsumexp(z)``.

    Works for logits of any magnitude (no naive ``exp``), so that raw LLM logits
    above ~35 do not overflow.
    """
    z = float_array(logits, "logits")
    if not np.all(np.isfinite(z)):
        raise ValueError("logits must be finite")
    return z - np.expand_dims(logsumexp(z, axis=axis), axis)


def log_loss(target_logprobs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-item log loss ``-log p_f(y_i | x_i)``; shape ``(N,)``."""
    lp = as_logprobs(target_logprobs, "target_logprobs")
    y = as_labels(labels, lp.shape[0], lp.shape[1])
    return -lp[np.arange(lp.shape[0]), y]


def zero_one_loss(target_logprobs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-item 0-1 loss ``1[argmax_c p_f(c | x_i) != y_i]``; shape ``(N,)``.

    Ties go to the lowest class index (numpy ``argmax``), deterministically.
    """
    lp = as_logprobs(target_logprobs, "target_logprobs")
    y = as_labels(labels, lp.shape[0], lp.shape[1])
    return (np.argmax(lp, axis=1) != y).astype(np.float64)
