"""Agreement between annotators: Cohen's kappa, Krippendorff's alpha, a bootstrap interval.

Pure numpy, no I/O. The data are a ``(raters, units)`` float array of the values each
rater gave each unit (an item), ``NaN`` where a rater gave none (Krippendorff's
"reliability data"):

* :func:`cohen_kappa`: two raters, nominal categories, the units both rated;
  ``(p_o - p_e) / (1 - p_e)`` with ``p_e`` from each rater's own marginals (as
  ``sklearn.metrics.cohen_kappa_score``).
* :func:`krippendorff_alpha`: any number of raters, missing values allowed,
  ``nominal`` (categories) or ``interval`` (numbers: a graded task's level scores);
  ``1 - D_o / D_e`` from the coincidence matrix of the units rated at least twice
  (as the ``krippendorff`` package's ``alpha``).
* :func:`bootstrap_agreement`: a seeded percentile bootstrap of either, over the
  units (items are resampled, each with all its ratings).

The tests check both against scikit-learn and ``krippendorff`` to 1e-9.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from activetest.stats.validate import float_array, is_whole, open_unit

__all__ = ["AgreementInterval", "bootstrap_agreement", "cohen_kappa", "krippendorff_alpha",
           "pairable_units"]

LEVELS = ("nominal", "interval")


def _data(data: np.ndarray) -> np.ndarray:
    x = float_array(data, "reliability data", "a numeric (raters, units) array (NaN "
                    "where a rater gave no value)")
    if x.ndim != 2:
        raise ValueError(f"reliability data must be a (raters, units) array, got shape "
                         f"{x.shape}")
    return x


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two raters' nominal labels on the same units.

    Args:
        a, b: ``(n,)`` labels (any numbers; ``NaN`` in either leaves the unit out).

    Returns:
        ``(p_o - p_e) / (1 - p_e)``; ``nan`` with no unit, or when both raters gave one
        and the same category throughout (``p_e = 1``: kappa is undefined).
    """
    x = float_array(a, "a (the first rater's labels)", "a numeric 1-d array")
    y = float_array(b, "b (the second rater's labels)", "a numeric 1-d array")
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two raters' labels must be 1-d arrays of one length, got "
                         f"{x.shape} and {y.shape}")
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    n = len(x)
    if n == 0:
        return float("nan")
    cats = np.unique(np.concatenate([x, y]))
    ia = np.searchsorted(cats, x)
    ib = np.searchsorted(cats, y)
    C = len(cats)
    m = np.zeros((C, C))
    np.add.at(m, (ia, ib), 1.0)
    p_o = np.trace(m) / n
    p_e = float(m.sum(axis=1) @ m.sum(axis=0)) / (n * n)
    if p_e >= 1.0:
        return float("nan")
    return float((p_o - p_e) / (1.0 - p_e))


def pairable_units(data: np.ndarray) -> np.ndarray:
    """``(units,)`` bool: the units with at least two values (the only ones alpha uses)."""
    x = _data(data)
    return (~np.isnan(x)).sum(axis=0) >= 2


def krippendorff_alpha(data: np.ndarray, level: str = "nominal") -> float:
    """Krippendorff's alpha of ``(raters, units)`` reliability data (``NaN`` = missing).

    Args:
        data: the values each rater gave each unit.
        level: ``nominal`` (a disagreement is any two different values) or
            ``interval`` (squared difference of the values).

    Returns:
        ``1 - D_o / D_e``; ``nan`` when fewer than two values are pairable or every
        pairable value is the same (``D_e = 0``).
    """
    if not isinstance(level, str) or level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    x = _data(data)[:, pairable_units(data)]
    if x.shape[1] == 0:
        return float("nan")
    vals = np.unique(x[~np.isnan(x)])
    V = len(vals)
    # per unit, how many raters gave each value: (units, V)
    counts = np.zeros((x.shape[1], V))
    r, u = np.nonzero(~np.isnan(x))
    np.add.at(counts, (u, np.searchsorted(vals, x[r, u])), 1.0)
    m_u = counts.sum(axis=1)
    # coincidences: o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1)
    w = 1.0 / (m_u - 1.0)
    o = (counts * w[:, None]).T @ counts - np.diag((counts * w[:, None]).sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d = 1.0 - np.eye(V) if level == "nominal" else (vals[:, None] - vals[None, :]) ** 2
    D_o = float((o * d).sum()) / n
    D_e = float(n_c @ d @ n_c) / (n * (n - 1.0))
    if D_e <= 0.0:
        return float("nan")
    return 1.0 - D_o / D_e


@dataclass(frozen=True)
class AgreementInterval:
    """An agreement statistic with its bootstrap interval.

    Attributes:
        estimate: the statistic on the data as given.
        low, high: the percentile bootstrap interval at ``level`` (``nan`` where too
            few resamples give a defined value: fewer than half of them).
        level: nominal coverage, e.g. 0.95.
        n_units: units (items) the statistic uses.
        n_boot: bootstrap resamples.
        seed: the resampling seed.
    """

    estimate: float
    low: float
    high: float
    level: float
    n_units: int
    n_boot: int
    seed: int


def bootstrap_agreement(data: np.ndarray, statistic: Callable[[np.ndarray], float], *,
                        n_boot: int = 1000, level: float = 0.95,
                        seed: int = 0, clusters: np.ndarray | None = None
                        ) -> AgreementInterval:
    """A percentile bootstrap interval of ``statistic`` over the units of ``data``.

    Units with fewer than two values carry no agreement and are dropped first; the
    rest are resampled with replacement (each with all its ratings), ``n_boot`` times,
    from ``numpy.random.default_rng(seed)``. With ``clusters`` (``(units,)`` labels:
    the item of each unit, where one item has several units, e.g. two answers judged)
    whole clusters are resampled, each with all its units: units of one item are not
    independent, and resampling them one by one gave too narrow an interval (QA). Where
    every cluster holds one unit the draws are those of the unit bootstrap. Resamples
    where the statistic is undefined (``nan``, e.g. one category throughout) are left
    out; below half of ``n_boot`` defined, the interval is ``nan``, and so it is from a
    single item (one cluster, or one unit): every resample is that item again, a point
    that claims nothing (QA: "bootstrap 95% interval [0.000, 0.000]" from one item).

    Args:
        data: ``(raters, units)`` values, ``NaN`` missing.
        statistic: e.g. ``krippendorff_alpha`` or ``lambda d: cohen_kappa(d[0], d[1])``.
        n_boot, level, seed: resamples, coverage, the resampling seed.
        clusters: optional cluster label of each unit (before units without two values
            are dropped).
    """
    level = open_unit(level, "level")  # (QA: level="a" raised Python's TypeError)
    if not is_whole(n_boot) or n_boot < 2:  # type: ignore[operator]
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    n_boot = int(n_boot)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) \
            or seed < 0:
        raise ValueError(f"seed must be a non-negative integer (the resampling seed), got "
                         f"{seed!r}")
    if not callable(statistic):
        raise ValueError(f"statistic must be a function of the (raters, units) data, e.g. "
                         f"krippendorff_alpha; got {type(statistic).__name__}")
    keep = pairable_units(data)
    x = _data(data)[:, keep]
    est = statistic(x) if x.shape[1] else float("nan")
    n = x.shape[1]
    if n == 0:
        return AgreementInterval(float("nan"), float("nan"), float("nan"), level, 0, n_boot,
                                 seed)
    rng = np.random.default_rng(seed)
    groups: list[np.ndarray] | None = None
    if clusters is not None:
        c = np.asarray(clusters)
        n_units = _data(data).shape[1]  # (a list: data.shape raised an AttributeError)
        if c.shape != (n_units,):
            raise ValueError(f"clusters has shape {c.shape}; data has {n_units} units")
        _, inverse = np.unique(c[keep], return_inverse=True)
        if inverse.max(initial=-1) + 1 < n:  # some item has several units
            groups = [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]
    if groups is None:
        stats = np.array([statistic(x[:, rng.integers(0, n, n)]) for _ in range(n_boot)])
    else:
        G = len(groups)
        stats = np.array([statistic(x[:, np.concatenate([groups[g] for g in
                                                         rng.integers(0, G, G)])])
                          for _ in range(n_boot)])
    ok = stats[~np.isnan(stats)]
    if len(ok) < n_boot / 2 or (n if groups is None else len(groups)) < 2:
        lo = hi = float("nan")
    else:
        lo, hi = (float(v) for v in np.quantile(ok, [(1 - level) / 2, (1 + level) / 2]))
    return AgreementInterval(float(est), lo, hi, level, n, n_boot, seed)
