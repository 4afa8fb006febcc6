"""The headline estimate of a session at every prefix length of its draws (for the manager).

inspect completes samples out of order; the manager reads the estimate, its fixed-budget
interval and its anytime confidence sequence at every prefix length of the draw order
the completed samples cover (:mod:`activetest.inspect.manager`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PrefixIntervals", "prefix_intervals"]

@dataclass(frozen=True)
class PrefixIntervals:
    """The headline estimate of a session at every prefix length ``M = 1..K`` of its draws.

    Exactly what ``Session.estimate`` reports at ``M = K`` (its metric's LURE, or the
    adaptive design's estimate, with the fixed-budget interval and the anytime
    confidence sequence), for every shorter prefix too. Arrays are ``(K,)``.
    ``cs_claimed``: where the anytime CS claims an interval (:meth:`claims`);
    ``exact_low``/``exact_high``: the exact (betting) CS of the error rate (None for
    other metrics and for sessions written before the few-errors rule).
    """

    metric: str
    level: float
    n_pool: int
    item_ids: tuple[str, ...]
    estimate: np.ndarray
    fixed_low: np.ndarray
    fixed_high: np.ndarray
    cs_low: np.ndarray
    cs_high: np.ndarray
    cs_claimed: np.ndarray | None = None
    exact_low: np.ndarray | None = None
    exact_high: np.ndarray | None = None

    def claims(self, m: int) -> bool:
        """Whether the anytime CS after ``m`` labels claims an interval: from 30 labels
        (or a census), or where the exact anytime CS has stood in (few errors) by then; before,
        it is the quantity's whole range (:func:`activetest.stats.confseq.cs_claimed`)."""
        return True if self.cs_claimed is None else bool(self.cs_claimed[m - 1])

    @property
    def k(self) -> int:
        """K, the labelled prefix length."""
        return len(self.item_ids)


def prefix_intervals(session: Any) -> PrefixIntervals:
    """:class:`PrefixIntervals` of a :class:`activetest.session.workflow.Session` (K >= 2):
    at every prefix, the intervals the session's own ``estimate`` reports at that many
    labels (the budget-tuned CS and the blind-spot widening included)."""
    from activetest.session import estimate as est
    from activetest.stats import adaptive_lure_theta

    cfg = session.session_config
    metric = session.metrics[0]
    draws = session.labelled_draws()
    if draws.k < 2:
        raise ValueError(f"{draws.k} usable label(s): intervals need at least 2")
    level = float(cfg.level)
    parts = session._estimate(compare=(), n_boot=2, level=level, target_width=None,
                              record=False, progress=False)
    draws, losses_by, controls, blind_by = (parts.draws, parts.losses,
                                            parts.design_controls, parts.blind_spots)
    losses = np.asarray(losses_by[metric], dtype=np.float64)
    N = draws.n_pool
    design = controls.get(metric)
    model_var = None
    if design is not None:
        theta = adaptive_lure_theta(losses, draws.q, N, control=design[0],
                                    control_rest=design[1])
        model_var = design[2]
    else:
        theta = adaptive_lure_theta(losses, draws.q, N)
    spot = blind_by.get(metric)
    few = None if metric != "error_rate" else est.few_errors_inputs(  # clt_min_errors
        losses, draws, cfg.clt_min_errors, q_floor=est.q_floor(cfg, bool(controls)),
        level=level, design=design)
    sure = None if not cfg.sure_bounds else est.sure_risk_curve(
        losses, draws.rows, N, est.value_range(metric)[1])
    curves = est.interval_curves(
        theta, N, level=level, model_var=model_var, value_range=est.value_range(metric),
        planned_budget=cfg.planned_budget,
        blind=spot.estimate if spot is not None and spot.bounded else None, few=few,
        sure=sure)
    exact = None
    if few is not None:  # cut to the sure bounds as the estimate cuts it
        exact = [np.asarray(few.exact_low, float), np.asarray(few.exact_high, float)]
        if sure is not None:  # intersected where the bounds are in force, as the CS is
            exact = list(est.cut_to_sure_arrays(*exact, *sure, force=curves.sure_cut))
    return PrefixIntervals(metric, level, N, draws.item_ids, curves.estimate, curves.fixed_low,
                           curves.fixed_high, curves.cs_low, curves.cs_high, curves.claimed,
                           None if exact is None else exact[0],
                           None if exact is None else exact[1])
