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

from activetest.stats.intervals import Bounds, _theta, pool_variance_curve

__all__ = [
    "MAX_BOOT",
    "BootstrapResult",
    "bootstrap",
    "bootstrap_means",
    "bootstrap_std_many",
    "labels_for_width",
    "uniform_labels_for_width",
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
    L = np.asarray(terms, dtype=np.float64)
    if L.ndim != 1 or L.size == 0:
        raise ValueError(f"terms must be a non-empty 1-D array, got shape {L.shape}")
    if not np.all(np.isfinite(L)):
        raise ValueError("terms must be finite")
    _check_n_boot(n_boot)
    rng = np.random.default_rng(random_state)
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
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 2:
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
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if method not in ("normal", "percentile"):
        raise ValueError(f"method must be 'normal' or 'percentile', got {method!r}")
    means = offset + bootstrap_means(terms, n_boot, random_state)
    est = float(offset + np.mean(terms))
    sd = float(np.std(means, ddof=1))
    if method == "normal":
        z = NormalDist().inv_cdf(0.5 + level / 2)
        lo, hi = est - z * sd, est + z * sd
    else:
        lo, hi = (float(x) for x in np.quantile(means, [(1 - level) / 2, (1 + level) / 2]))
    return BootstrapResult(est, sd, lo, hi, level, method, int(np.size(terms)))


def _laplace_variance(p_hat: float, K: int, value_range: tuple[float, float]) -> float:
    """The variance of a loss at the ends of ``value_range`` with Laplace's rate
    ``(K p_hat + 1) / (K + 2)``, ``p_hat`` the share at the upper end seen in K labels:
    what labels without spread are given (no spread seen is not no spread)."""
    a, b = float(value_range[0]), float(value_range[1])
    p = (K * min(max(p_hat, 0.0), 1.0) + 1.0) / (K + 2.0)
    return p * (1.0 - p) * (b - a) ** 2


def _finite_range(value_range: tuple[float, float] | None) -> bool:
    return value_range is not None and bool(np.all(np.isfinite(value_range))) \
        and float(value_range[1]) > float(value_range[0])


def labels_for_width(result: BootstrapResult, width: float, *,
                     variance_ratio: float = 1.0,
                     value_range: tuple[float, float] | None = None) -> int:
    """Project the total labels needed for an interval of the given width.

    With ``variance_ratio = 1`` (default) the standard error shrinks as ``1/sqrt(K)``
    (true for the uniform estimator and approximately for LURE with a fixed proposal):
    ``K (w_now / w)^2``. A design that learns from the labels draws its later items with
    a better model: ``variance_ratio`` (:func:`activetest.stats.confseq.future_variance_ratio`,
    rho) is a further draw's variance over the average of the K so far, and the squared
    width after K' labels is ``w_now^2 K (K + (K' - K) rho) / K'^2``; the projection is
    the smallest K' where that is at most ``width^2``. Measured (docs/projection.md): on
    the bundled pools' adaptive design the plain rule projected 1.9x the labels the
    bootstrap then needed from 30 labels (median), 1.6x from 60.

    ``value_range`` (finite: an error rate's ``(0, 1)``): where the terms show no spread
    (the bootstrap's std is 0: e.g. no error labelled yet) the width now is that of a
    loss at the range's ends with Laplace's rate, ``2 z (b - a) sqrt(p (1 - p) / K)``,
    ``p = (K p_hat + 1) / (K + 2)``; without it such a result "needs" the labels it has
    (its interval is a point), which is what sessions were told until 2026-12-04.
    """
    if not width > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    if not (np.isfinite(variance_ratio) and variance_ratio > 0):
        raise ValueError(f"variance_ratio must be > 0, got {variance_ratio!r}")
    K = result.n_labels
    w_now = result.width
    if result.std == 0.0 and _finite_range(value_range):
        lo, hi = float(value_range[0]), float(value_range[1])  # type: ignore[index]
        z = NormalDist().inv_cdf(0.5 + result.level / 2)
        s2 = _laplace_variance((result.estimate - lo) / (hi - lo), K, (lo, hi))
        w_now = 2.0 * z * np.sqrt(s2 / K)
    if w_now <= width:
        return K
    a = w_now ** 2 * K  # w(K')^2 = a (rho K' + K (1 - rho)) / K'^2
    rho = float(variance_ratio)
    disc = (a * rho) ** 2 + 4.0 * width ** 2 * a * K * (1.0 - rho)
    k = (a * rho + np.sqrt(max(disc, 0.0))) / (2.0 * width ** 2)
    return max(K + 1, int(np.ceil(k - 1e-9)))


def uniform_labels_for_width(losses: np.ndarray, q: np.ndarray, N: int, width: float, *,
                             level: float = 0.95,
                             value_range: tuple[float, float] | None = None) -> int:
    """Projected labels for **uniform sampling's** bootstrap interval of the given width,
    from the draws of any design.

    Uniform sampling's bootstrap interval after n labels is about ``2 z S / sqrt(n)``
    wide (``z = z_{(1+level)/2}``; the normal bootstrap of a mean of n i.i.d. draws), so
    ``n = ceil((2 z S / width)^2)``, at most N (the whole pool is the answer itself).
    ``S^2`` is the pool's variance of the loss, estimated from the draws by LURE on
    ``L`` and ``L^2`` (:func:`activetest.stats.intervals.pool_variance_curve`), which
    is consistent under any design. The spread of the *drawn* losses is not: an active
    design draws the items it expects to be hard, whose losses vary differently from the
    pool's (an error rate of 0.1 in the pool drawn at 0.4 has a variance of 0.24 among
    the drawn items against 0.09 in the pool).

    Args:
        losses: ``(K,)`` the drawn items' losses, in draw order.
        q: ``(K,)`` each draw's probability (sampling without replacement).
        N: pool size.
        width: the interval width asked for (``high - low``).
        level: the bootstrap interval's coverage.
        value_range: the loss's range where finite (an error rate's ``(0, 1)``): losses
            without spread (no error labelled yet) are then given the variance of a
            loss at its ends with Laplace's rate, ``p (1 - p) (b - a)^2``,
            ``p = (K p_hat + 1) / (K + 2)``, instead of none (which projected 1 label).
    """
    if not width > 0:
        raise ValueError(f"width must be > 0, got {width!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    L = np.asarray(losses, dtype=np.float64)
    if L.size and float(np.ptp(L)) == 0.0 and _finite_range(value_range):
        lo, hi = float(value_range[0]), float(value_range[1])  # type: ignore[index]
        S2 = _laplace_variance((float(L[0]) - lo) / (hi - lo), L.size, (lo, hi))
    else:
        S2 = float(pool_variance_curve(_theta(L * L, q, N), _theta(L, q, N), N)[-1])
    z = NormalDist().inv_cdf(0.5 + level / 2)
    return int(min(N, max(1, np.ceil((2 * z / width) ** 2 * S2))))


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
    L = np.asarray(terms, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] == 0:
        raise ValueError(f"terms must be a non-empty 2-D (runs, labels) array, got {L.shape}")
    _check_n_boot(n_boot)
    K = L.shape[1]
    rng = np.random.default_rng(random_state)
    W = rng.multinomial(K, np.full(K, 1.0 / K), size=int(n_boot)) / K  # (B, K)
    means = L @ W.T  # (R, B)
    return means.std(axis=1, ddof=1)
