"""Acquisition scores, computed once over the pool (the surrogate is fixed).

Notation: ``pi`` is the surrogate's class distribution, ``p_f`` the target's;
both arrive as ``(N, C)`` log-probabilities. Every score is a non-negative
``(N,)`` float64 array; larger means "more useful to label".

==============  ==========================================  =====================
name            score a(x)                                  needs
==============  ==========================================  =====================
``ce``          ``-sum_y pi(y|x) log p_f(y|x)``             surrogate + target
``pe``          ``-sum_y pi(y|x) log pi(y|x)``              surrogate only
``nll``         ``-log pi(y|x)`` (label-aware, curation)    surrogate + labels
``zero_one``    ``1 - pi(argmax_y p_f(y|x) | x)``           surrogate + target
``uniform``     ``1``                                       nothing
``oracle``      the true loss (experiments only)            target + labels
``compare``     ``sqrt(sum_y pi(y|x) d(y|x)^2)``, ``d`` the   surrogate + two targets
                two targets' log-loss difference
``compare_``    the same with ``d`` the 0-1 losses'           surrogate + two targets
``zero_one``    difference: ``sqrt(pi(a) + pi(b))`` where
                the predictions ``a != b``, else 0
==============  ==========================================  =====================

``ce`` is also the surrogate's *expected loss* of the target, the quantity ASE
averages and the control-variate estimators subtract.

``compare`` and ``compare_zero_one`` serve a **paired comparison** of two targets, f and
g, on the same labels: the estimand is ``R_f - R_g``, the pool mean of the per-item
difference ``d = L_f - L_g``. An importance-weighted mean of d has variance
``(1/M) (sum_i d_i^2 / (N^2 q_i) - (R_f - R_g)^2)``; with d known only through the
surrogate, the ``q`` minimising its expectation is proportional to ``sqrt(E_pi[d_i^2])``
(Cauchy-Schwarz). For the error rate d is 0 wherever the two targets predict the same
class, whatever the label: such items need no label at all, and the proposal leaves them
only the floor's share. The estimate stays unbiased for any proposal with the floor
(LURE), so a poor surrogate costs width, never bias.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from activetest.stats.losses import log_loss, zero_one_loss
from activetest.stats.validate import as_labels, as_logprobs, float_array, is_whole

__all__ = [
    "ACQUISITIONS",
    "acquisition_scores",
    "difference_bounds",
    "expected_difference",
    "expected_log_loss",
    "expected_zero_one_loss",
    "nll_score",
    "predictive_entropy",
    "uniform_score",
]


def _pair(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray,
          target_name: str = "target_logprobs") -> tuple[np.ndarray, ...]:
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    t = as_logprobs(target_logprobs, target_name)
    if s.shape != t.shape:
        raise ValueError(f"surrogate_logprobs {s.shape} and {target_name} {t.shape} must have "
                         "the same (N, C) shape")
    return s, t


def expected_log_loss(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray) -> np.ndarray:
    """CE score: the surrogate's expected log loss of the target.

    ``a(x) = -sum_y pi(y|x) log p_f(y|x)``, computed from log-probabilities
    (``pi = exp(log pi)`` never overflows since ``log pi <= 0``).
    """
    s, t = _pair(surrogate_logprobs, target_logprobs)
    out = np.empty(s.shape[0])
    for a in range(0, s.shape[0], _ROWS):  # in blocks: each row's numbers as at once
        np.maximum(-(np.exp(s[a:a + _ROWS]) * t[a:a + _ROWS]).sum(axis=1), 0.0,
                   out=out[a:a + _ROWS])
    return out


#: rows per block of :func:`expected_log_loss` (its temporaries: a block's, not the pool's)
_ROWS = 1 << 20


def predictive_entropy(surrogate_logprobs: np.ndarray) -> np.ndarray:
    """PE score: the surrogate's predictive entropy ``-sum_y pi log pi``.

    Needs no target predictions on the pool. It is also the surrogate's
    expected log loss *of itself*, the natural surrogate-only control variate.
    """
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    return np.maximum(-(np.exp(s) * s).sum(axis=1), 0.0)


def nll_score(surrogate_logprobs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """NLL score ``-log pi(y|x)`` for curating a fixed subset (needs the labels).

    Uses the surrogate's log-probability of the given label directly (no
    softmax of a one-hot label, a bug of the research code).
    """
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    y = as_labels(labels, s.shape[0], s.shape[1])
    return -s[np.arange(s.shape[0]), y]


def expected_zero_one_loss(surrogate_logprobs: np.ndarray,
                           target_logprobs: np.ndarray) -> np.ndarray:
    """Accuracy acquisition: the surrogate's expected 0-1 loss of the target.

    ``a(x) = 1 - pi(argmax_y p_f(y|x) | x)``.
    """
    s, t = _pair(surrogate_logprobs, target_logprobs)
    pred = np.argmax(t, axis=1)
    return np.clip(1.0 - np.exp(s[np.arange(s.shape[0]), pred]), 0.0, 1.0)


def expected_difference(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray,
                        other_logprobs: np.ndarray, *, metric: str = "error_rate"
                        ) -> np.ndarray:
    """Paired-comparison score: ``sqrt(E_pi[(L_f - L_g)^2])``, the surrogate's expected
    squared difference of two targets' losses (f: ``target_logprobs``, g:
    ``other_logprobs``), square-rooted (the proposal that minimises the expected
    variance of an importance-weighted mean of the difference; module docstring).

    ``metric="error_rate"``: ``L = 1[y != argmax p]``, so ``d^2 = 1`` exactly when one
    of the two predictions is y: ``sqrt(pi(a) + pi(b))`` where the predictions ``a != b``,
    and 0 where they agree (the difference is 0 whatever the label).
    ``metric="log_loss"``: ``sqrt(sum_y pi(y) (log p_f(y) - log p_g(y))^2)``.
    """
    s, t = _pair(surrogate_logprobs, target_logprobs)
    _, o = _pair(surrogate_logprobs, other_logprobs, "other_logprobs")
    if metric == "error_rate":
        n = np.arange(s.shape[0])
        a, b = np.argmax(t, axis=1), np.argmax(o, axis=1)
        mass = np.exp(s[n, a]) + np.exp(s[n, b])
        return np.where(a != b, np.sqrt(np.clip(mass, 0.0, 1.0)), 0.0)
    if metric == "log_loss":
        out = np.empty(s.shape[0])
        for i in range(0, s.shape[0], _ROWS):  # in blocks, as expected_log_loss
            d = t[i:i + _ROWS] - o[i:i + _ROWS]
            out[i:i + _ROWS] = np.sqrt(np.maximum((np.exp(s[i:i + _ROWS]) * d * d).sum(axis=1),
                                                  0.0))
        return out
    raise ValueError(f"metric must be 'error_rate' or 'log_loss', got {metric!r}")


def difference_bounds(metric: str, target_pool: np.ndarray, other_pool: np.ndarray
                      ) -> np.ndarray:
    """``B_i``, the largest ``|L_target - L_other|`` item i can have whatever its label,
    from both targets' ``(N, C)`` log-probs on the pool: for the error rate 1 where the
    two predictions differ and 0 where they agree (both right or both wrong: the
    difference is 0 whatever the label); for the log loss ``max_c |log p_t(c) - log
    p_o(c)|``."""
    t = float_array(target_pool, "target_pool", "a numeric (N, C) array of log-probabilities")
    o = float_array(other_pool, "other_pool", "a numeric (N, C) array of log-probabilities")
    if metric not in ("error_rate", "log_loss"):
        raise ValueError(f"metric must be 'error_rate' or 'log_loss', got {metric!r}")
    if t.ndim != 2 or t.shape != o.shape:
        raise ValueError(f"target_pool {t.shape} and other_pool {o.shape} must be (N, C) "
                         f"arrays of the same shape")
    if metric == "log_loss":
        return np.abs(t - o).max(axis=1)
    return (t.argmax(axis=1) != o.argmax(axis=1)).astype(np.float64)


def uniform_score(n: int) -> np.ndarray:
    """Constant scores: the proposal is then uniform over the remaining items."""
    if not is_whole(n) or n < 1:  # type: ignore[operator]
        raise ValueError(f"n must be a whole number >= 1 (the pool size), got {n!r}")
    return np.ones(int(n))  # type: ignore[call-overload]


AcquisitionFn = Callable[..., np.ndarray]

#: Names accepted by :func:`acquisition_scores`.
ACQUISITIONS = ("ce", "pe", "nll", "zero_one", "uniform", "oracle", "oracle_zero_one",
                "compare", "compare_zero_one")


def acquisition_scores(name: str, *, surrogate_logprobs: np.ndarray | None = None,
                       target_logprobs: np.ndarray | None = None,
                       labels: np.ndarray | None = None, n: int | None = None,
                       other_logprobs: np.ndarray | None = None) -> np.ndarray:
    """Compute the named acquisition score over the pool.

    Args:
        name: one of :data:`ACQUISITIONS`. ``oracle`` (true log loss) and
            ``oracle_zero_one`` (true 0-1 loss) use the labels: experiments only.
        surrogate_logprobs, target_logprobs: ``(N, C)`` class log-probabilities.
        labels: ``(N,)`` class indices (``nll`` and the oracles only).
        n: pool size (``uniform`` only, when no arrays are given).
        other_logprobs: ``(N, C)`` the second target's class log-probabilities
            (``compare`` and ``compare_zero_one``: :func:`expected_difference`).
    """
    if not isinstance(name, str):  # (QA: an array gave numpy's "truth value ... ambiguous")
        raise ValueError(f"name must be an acquisition's name (one of "
                         f"{', '.join(ACQUISITIONS)}), got {type(name).__name__}")

    def need(x: object, what: str) -> np.ndarray:
        if x is None:
            raise ValueError(f"acquisition {name!r} needs {what}")
        return np.asarray(x)

    if name == "ce":
        return expected_log_loss(need(surrogate_logprobs, "surrogate_logprobs"),
                                 need(target_logprobs, "target_logprobs"))
    if name == "pe":
        return predictive_entropy(need(surrogate_logprobs, "surrogate_logprobs"))
    if name == "nll":
        return nll_score(need(surrogate_logprobs, "surrogate_logprobs"), need(labels, "labels"))
    if name == "zero_one":
        return expected_zero_one_loss(need(surrogate_logprobs, "surrogate_logprobs"),
                                      need(target_logprobs, "target_logprobs"))
    if name == "uniform":
        for arr in (surrogate_logprobs, target_logprobs, labels):
            if arr is not None:
                return uniform_score(len(np.asarray(arr)))
        return uniform_score(int(need(n, "n (the pool size)")))
    if name == "oracle":
        return log_loss(need(target_logprobs, "target_logprobs"), need(labels, "labels"))
    if name == "oracle_zero_one":
        return zero_one_loss(need(target_logprobs, "target_logprobs"), need(labels, "labels"))
    if name in ("compare", "compare_zero_one"):
        return expected_difference(need(surrogate_logprobs, "surrogate_logprobs"),
                                   need(target_logprobs, "target_logprobs"),
                                   need(other_logprobs, "other_logprobs (the compared target)"),
                                   metric="log_loss" if name == "compare" else "error_rate")
    raise ValueError(f"unknown acquisition {name!r}; expected one of {', '.join(ACQUISITIONS)}")
