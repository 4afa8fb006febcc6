"""Bootstrap error estimates from a single run (the paper's recipe, vectorised).

Take the K reweighted terms ``L_m`` whose mean is the estimate (for LURE,
``L_m = v_m loss_m``, see :func:`activetest.stats.estimators.lure_terms`),
resample K of them with replacement B times, and use the variance of the B
resampled means (ddof = 1) as the estimate of the squared error. Unbiased
estimators have MSE = variance, so ``estimate +- 2 sd`` is the paper's interval.
It carries no guarantee (the ``L_m`` are not independent under sequential
sampling) and is unreliable below ~100 labels.

Any estimator of the form ``offset + mean(L)`` fits: uniform (``L = loss``),
IS (``L = loss/(N q)``), control-variate LURE (offset = the pool mean of the
control, ``L = v (loss - h)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from activetest.stats.intervals import Bounds
from activetest.stats.validate import float_array, is_whole, open_unit, real_number, rng_of

__all__ = [
    "MAX_BOOT",
    "BootstrapResult",
    "bootstrap",
    "bootstrap_means",
    "bootstrap_std_many",
]


#: The most resamples accepted: beyond it the interval moves by far less than its own
#: Monte Carlo error, and the time grows linearly (1e6 x 400 labels takes ~10 s).
MAX_BOOT = 1_000_000
_CHUNK = 1 << 21  # resampled indices held in memory at once (16 MiB)


@dataclass(frozen=True)
class BootstrapResult(Bounds):
    """An estimate with its bootstrap error.

    Attributes:
        estimate: ``offset + mean(terms)``.
        std: bootstrap standard deviation of the estimate (ddof = 1 over B).
        low, high: interval ends at ``level``.
        level: nominal coverage, e.g. 0.95.
        method: ``"normal"`` (estimate +- z * std) or ``"percentile"``.
        n_labels: K, the number of terms.
    """

    estimate: float
    std: float
    low: float
    high: float
    level: float
    method: str
    n_labels: int


def bootstrap_means(terms: np.ndarray, n_boot: int = 1000,
                    random_state: int | np.random.Generator | None = None) -> np.ndarray:
    """``(B,)`` means of K-of-K resamples with replacement of a 1-D ``terms``."""
    L = float_array(terms, "terms")
    if L.ndim != 1 or L.size == 0:
        raise ValueError(f"terms must be a non-empty 1-D array, got shape {L.shape}")
    if not np.all(np.isfinite(L)):
        raise ValueError("terms must be finite")
    _check_n_boot(n_boot)
    rng = rng_of(random_state)
    # In chunks of resamples, so memory stays bounded; the draws are the same as one
    # (B, K) call (Generator.integers fills row after row from one stream).
    B, K = int(n_boot), L.size
    rows = max(1, _CHUNK // K)
    out = np.empty(B)
    for b0 in range(0, B, rows):
        b1 = min(B, b0 + rows)
        out[b0:b1] = L[rng.integers(0, K, size=(b1 - b0, K))].mean(axis=1)
    return out


def _check_n_boot(n_boot: int) -> None:
    if not is_whole(n_boot) or n_boot < 2:  # type: ignore[operator]
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    if n_boot > MAX_BOOT:
        raise ValueError(f"n_boot must be <= {MAX_BOOT:,}, got {int(n_boot):,}: more "
                         f"resamples change the interval by far less than its own width")


def bootstrap(terms: np.ndarray, *, offset: float = 0.0, n_boot: int = 1000, level: float = 0.95,
              method: str = "normal",
              random_state: int | np.random.Generator | None = None) -> BootstrapResult:
    """Estimate ``offset + mean(terms)`` with a bootstrap standard error and interval.

    Args:
        terms: the K reweighted losses of one run.
        offset: added to the mean (control-variate LURE's pool mean of h).
        n_boot: B resamples (the paper uses 1000).
        level: interval coverage in (0, 1).
        method: ``"normal"``: estimate +- z_{(1+level)/2} * std (with level 0.9545
            this is the paper's +- 2 sd); ``"percentile"``: quantiles of the
            resampled estimates.
    """
    level = open_unit(level, "level")
    if not isinstance(method, str) or method not in ("normal", "percentile"):
        raise ValueError(f"method must be 'normal' or 'percentile', got {method!r}")
    # (a string or None: numpy's "ufunc 'add' did not contain a loop" before)
    offset = real_number(offset, "offset")
    if not np.isfinite(offset):
        raise ValueError(f"offset must be finite, got {offset!r}")
    means = offset + bootstrap_means(terms, n_boot, random_state)
    est = float(offset + np.mean(terms))
    sd = float(np.std(means, ddof=1))
    if method == "normal":
        z = NormalDist().inv_cdf(0.5 + level / 2)
        lo, hi = est - z * sd, est + z * sd
    else:
        lo, hi = (float(x) for x in np.quantile(means, [(1 - level) / 2, (1 + level) / 2]))
    return BootstrapResult(est, sd, lo, hi, level, method, int(np.size(terms)))


def bootstrap_std_many(terms: np.ndarray, n_boot: int = 1000,
                       random_state: int | np.random.Generator | None = None) -> np.ndarray:
    """Bootstrap standard deviations for many runs at once.

    Args:
        terms: ``(R, K)`` reweighted terms, one row per independent run.

    Returns:
        ``(R,)`` standard deviations (ddof = 1 over B) of the resampled means.
        Each resample is drawn as multinomial counts shared by all rows, which
        leaves each row's bootstrap distribution exact while costing one matmul.
    """
    L = float_array(terms, "terms")
    if L.ndim != 2 or L.shape[1] == 0:
        raise ValueError(f"terms must be a non-empty 2-D (runs, labels) array, got {L.shape}")
    _check_n_boot(n_boot)
    K = L.shape[1]
    rng = rng_of(random_state)
    W = rng.multinomial(K, np.full(K, 1.0 / K), size=int(n_boot)) / K  # (B, K)
    means = L @ W.T  # (R, B)
    return means.std(axis=1, ddof=1)
