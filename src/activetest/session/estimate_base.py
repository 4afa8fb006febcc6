"""The records and small helpers every estimate module shares: the labelled draws an
estimate is computed from, the few-errors and sure-bounds records, the ranges an
estimate is kept within, and the seeded bootstrap generator (split out of
:mod:`activetest.session.estimate`, which re-exports them)."""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from activetest.stats import (
    BootstrapResult,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "POINT_WIDTH",
    "DesignControls",
    "FewErrors",
    "LabelledDraws",
    "SureBounds",
    "VarianceFloors",
    "bootstrap_rng",
    "clip_interval",
    "clip_result",
    "difference_range",
    "value_range",
]


#: An adaptive design's per-draw ``(g_m, G_m, V_m)``: controls at the drawn items, their
#: sums over the remaining ones, and its own variance prediction (NaN: none); see
#: :func:`activetest.session.draw.design_controls`.
DesignControls = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class LabelledDraws:
    """The labelled prefix of the draw order, which every estimate is computed from.

    Attributes:
        n_pool: N.
        item_ids, steps: the K usable draws (the first K, all labelled), in order.
        rows: ``(K,)`` pool row of each draw.
        q: ``(K,)`` the probability each was drawn with.
        y: ``(K,)`` its label (class index).
        n_selected: all draws so far.
        n_waiting: labels of later draws that wait for an earlier unlabelled draw.
        first_unlabelled: ``(item id, step)`` of the first unlabelled draw, if any.
    """

    n_pool: int
    item_ids: tuple[str, ...]
    steps: tuple[int, ...]
    rows: np.ndarray
    q: np.ndarray
    y: np.ndarray
    n_selected: int
    n_waiting: int = 0
    first_unlabelled: tuple[str, int] | None = None

    @property
    def k(self) -> int:
        """K, the usable labels."""
        return int(self.rows.size)


def bootstrap_rng(seed: int, k: int, name: str) -> np.random.Generator:
    """Deterministic per (session seed, labels, quantity): the same call, the same interval."""
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, k,
                                                         zlib.crc32(name.encode())]))


def value_range(metric: str, loss_bound: float | None = None) -> tuple[float, float]:
    """The range every pool risk of ``metric`` lies in: ``[0, 1]`` for the error rate
    (and a graded task's ``1 - score``), ``[0, loss_bound]`` for the log loss
    (``loss_bound``: the largest loss any pool item can have; unknown: infinite)."""
    if metric == "error_rate":
        return 0.0, 1.0
    return 0.0, math.inf if loss_bound is None else float(loss_bound)


def difference_range(metric: str, bound_target: float | None = None,
                     bound_other: float | None = None) -> tuple[float, float]:
    """The range of ``risk(target) - risk(other)``: ``[-B_other, B_target]`` with each
    loss's :func:`value_range` (``[-1, 1]`` for the error rate)."""
    return -value_range(metric, bound_other)[1], value_range(metric, bound_target)[1]


def clip_interval(low: float, high: float, estimate: float,
                  bounds: tuple[float, float] | None) -> tuple[float, float]:
    """``[low, high]`` kept within ``bounds`` (the quantity's possible values), which
    cannot lose coverage; the interval always keeps the estimate itself (an unbiased
    estimate may fall outside the range at a few labels: it is then an end)."""
    if bounds is None:
        return low, high
    lo, hi = bounds
    return max(low, min(lo, estimate)), min(high, max(hi, estimate))


def clip_result(result: BootstrapResult, bounds: tuple[float, float] | None
                ) -> BootstrapResult:
    """A bootstrap result with its interval clipped by :func:`clip_interval`."""
    low, high = clip_interval(result.low, result.high, result.estimate, bounds)
    if (low, high) == (result.low, result.high):
        return result
    return replace(result, low=low, high=high)


@dataclass(frozen=True)
class FewErrors:
    """The few-errors rule of a session's error rate (:mod:`activetest.stats.fewerrors`,
    config ``clt_min_errors``) on its labelled draws.

    Attributes:
        min_errors: the errors (and labels without one) a CLT interval needs.
        few: ``(K,)`` True at the label counts where the exact CS stands in.
        exact_low, exact_high: ``(K,)`` the exact (betting) CS of the estimate.
        reason: why the exact CS stands in after all K labels (None: it does not).
    """

    min_errors: int
    few: np.ndarray
    exact_low: np.ndarray
    exact_high: np.ndarray
    reason: str | None


@dataclass(frozen=True)
class SureBounds:
    """Bounds of a paired difference that hold surely (:func:`sure_difference`).

    Attributes:
        rest: the most the unlabelled items could add, ``sum B_i`` over them (for two
            error rates: how many unlabelled items the two predictions differ on); the
            bounds are ``(sum of the labelled differences -+ rest) / N``.
        binding: the fixed-budget interval shown IS these bounds (both ends).
        low, high: the bounds themselves.
    """

    rest: float
    binding: bool
    low: float = -math.inf
    high: float = math.inf


#: Below this width a fixed-budget interval is a point (an SE of 0 gives 1e-12).
POINT_WIDTH = 1e-9


@dataclass(frozen=True)
class DifferenceFloor:
    """The model's parts of a paired difference's variance floor at each labelled draw
    (:func:`activetest.session.estimate.difference_floors`): ``second`` ``(K,)`` the
    weighted second moment ``sum_{S_m} E[d_i^2] / q_m(i)`` and ``model_rest`` ``(K,)`` the
    remaining items' total ``sum_{S_m} E[d_i]``, under the surrogate's label distribution;
    ``drawn_second`` ``(K,)`` the model's ``E[d_i^2]`` at each labelled draw;
    ``pool_second`` its mean over the whole pool (the scale's prior).
    """

    second: np.ndarray
    model_rest: np.ndarray
    drawn_second: np.ndarray
    pool_second: float

    def variance(self, values: np.ndarray, q: np.ndarray, n_pool: int) -> np.ndarray:
        """``(K,)`` the floor of each draw's ``N^2 Var(theta_m | past)``, the remaining
        total estimated from the labelled ``values`` and the second moments scaled by
        what the labels showed (:func:`activetest.stats.model_floor.
        labelled_mean_floor`)."""
        from activetest.stats.model_floor import labelled_mean_floor

        return labelled_mean_floor(self.second, self.model_rest, values, q, n_pool,
                                   drawn_second=self.drawn_second,
                                   prior_second=self.pool_second)


@dataclass(frozen=True)
class VarianceFloors:
    """A fixed proposal's model variance of each draw (``(K,)`` arrays of
    ``N^2 Var(theta_m | past)``, :func:`~activetest.stats.proposal.floored_model_var`),
    the floor of the intervals' variance (:func:`activetest.session.estimate.
    variance_floors`).

    Attributes:
        metrics: metric -> the target's.
        others: compared target spec -> its error rate's.
        differences: compared target spec -> metric -> the paired difference's (target
            minus it) :class:`DifferenceFloor`, from a label model's moments of the
            difference (:mod:`activetest.stats.model_floor`): any proposal, adaptive
            designs too.
    """

    metrics: Mapping[str, np.ndarray] = field(default_factory=dict)
    others: Mapping[str, np.ndarray] = field(default_factory=dict)
    differences: Mapping[str, Mapping[str, DifferenceFloor]] = field(default_factory=dict)
