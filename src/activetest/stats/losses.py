"""Per-item losses of a target model, and log-space helpers.

All inputs are ``(N, C)`` float arrays of class log-probabilities (each row a
log-softmax over the classes) and length-N integer labels.
"""

from __future__ import annotations

import numpy as np

from activetest.stats.validate import as_labels, as_logprobs, float_array, is_whole

__all__ = ["log_loss", "log_softmax", "logsumexp", "zero_one_loss"]


def _class_array(x: object, name: str, axis: object) -> np.ndarray:
    """``x`` as a float array of at least one dimension with ``axis`` one of them (the
    classes); ValueError naming ``name`` otherwise (QA: a string or an object gave numpy's
    own message, a scalar came back as shape ``(1,)``)."""
    a = float_array(x, name)
    if a.ndim == 0:
        raise ValueError(f"{name} must be an array of at least one dimension (the classes "
                         f"along axis), got the scalar {type(x).__name__} {a.item()!r}")
    if not is_whole(axis) or not -a.ndim <= int(axis) < a.ndim:  # type: ignore[call-overload]
        raise ValueError(f"axis must be an integer in {-a.ndim}..{a.ndim - 1} for {name} of "
                         f"shape {a.shape}, got {axis!r}")
    if a.shape[int(axis)] == 0:  # type: ignore[call-overload]
        raise ValueError(f"{name} has no classes along axis {axis} (shape {a.shape})")
    return a


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log(sum(exp(a)))`` along ``axis``, stable for large values (max-shift).

    Raises:
        ValueError: ``a`` is no numeric array of at least one dimension, or ``axis``
            is not one of its axes.
    """
    a = _class_array(a, "a", axis)
    axis = int(axis)
    mx = np.max(a, axis=axis, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    out = mx + np.log(np.sum(np.exp(a - mx), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis)


def log_softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Normalise raw logits to log-probabilities: ``z - logsumexp(z)``.

    Works for logits of any magnitude (no naive ``exp``), so that raw LLM logits
    above ~35 do not overflow. The result has the shape of ``logits``.

    Raises:
        ValueError: ``logits`` is no numeric array of at least one dimension (a scalar
            has no classes to normalise over), is not finite, or ``axis`` is not one
            of its axes.
    """
    z = _class_array(logits, "logits", axis)
    if not np.all(np.isfinite(z)):
        raise ValueError("logits must be finite")
    return z - np.expand_dims(logsumexp(z, axis=axis), int(axis))


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
