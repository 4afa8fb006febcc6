"""An estimate over a session file: what is stored, assembled for the pure estimators.

:meth:`activetest.session.workflow.Session.estimate` lands here: read the draws and
labels, score the target (and any compared model) on the labelled items only, build the
session kind's inputs (losses, controls, the blind spots, the variance floors) and hand
them to :func:`activetest.session.estimate.session_estimate`; then record the result in
the session's history (:func:`record_estimate`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from activetest.session import draw
from activetest.session import estimate as est
from activetest.session.options import (
    check_flag,
    check_level,
    check_n_boot,
    check_target_width,
    compare_specs,
)
from activetest.session.records import EstimateReport
from activetest.session.scoring import jsonable, session_spec
from activetest.session.store import (
    SessionError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionStore,
    SessionWriteError,
)
from activetest.stats import BootstrapResult

__all__ = ["EstimateParts", "estimate_parts", "record_estimate"]


@dataclass(frozen=True)
class EstimateParts:
    """An estimate with what it was computed from (:func:`estimate_parts`): the report
    and the parts the report's curves and the inspect manager recompute from.

    Attributes:
        report: the estimate.
        draws: the labelled draws it used.
        losses: metric -> ``(K,)`` the target's loss at them.
        design_controls: metric -> the adaptive design's controls at them (empty: a
            fixed acquisition).
        blind_spots: metric -> its blind spot at every budget.
        loss_bounds: metric -> the largest loss any pool item can have (known ones):
            the range the intervals are clipped to.
        variance_floors: a fixed proposal's model variance of each draw, the floor of
            its intervals (:func:`.estimate.variance_floors`).
        sampler: an adaptive design's sampler, replayed from the session's history (None:
            a fixed acquisition): the report asks it for the next draw's proposal.
    """

    report: EstimateReport
    draws: est.LabelledDraws
    losses: dict[str, np.ndarray]
    design_controls: dict[str, est.DesignControls]
    blind_spots: dict[str, Any]
    loss_bounds: dict[str, float]
    variance_floors: est.VarianceFloors = dataclasses.field(
        default_factory=est.VarianceFloors)
    sampler: Any = None
    #: compared target -> metric -> ``(K,)`` its losses at the draws (the report's curve
    #: of each paired difference)
    compare: dict[str, dict[str, np.ndarray]] = dataclasses.field(default_factory=dict)
    #: compared target -> metric -> the largest loss any pool item can have for it
    other_loss_bounds: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    #: what the kind gave the estimate (the paired differences' per-item bounds, the
    #: fixed proposal, an adaptive design's weight bounds: the report's curve of each
    #: difference applies them at every label count, as the estimate at that count)
    inputs: est.KindInputs | None = None


def estimate_parts(s: Any, *, compare: Sequence[Any] | Any, n_boot: int | None,
                   level: float | None, target_width: float | None, record: bool,
                   progress: bool, curves_from: int | None = None) -> EstimateParts:
    """The estimate of every metric of ``s`` (a :class:`~.workflow.Session`), with what it
    was computed from (:meth:`Session.estimate` documents the arguments; ``curves_from``:
    the first budget the blind spots are computed at, None where the anytime CS starts).

    Reads the stored draws, labels and pool scores, scores the target (and the compared
    models) on the labelled items, assembles the kind's inputs and hands them to the
    pure :func:`.estimate.session_estimate`; with ``record``, stores the result
    (:func:`record_estimate`), or says in its warnings why it could not.
    """
    cfg = s.session_config
    # the types first (a string is refused, a float not truncated), before scoring
    level = None if level is None else check_level(level)
    n_boot = None if n_boot is None else check_n_boot(n_boot)
    target_width = check_target_width(target_width)
    others = compare_specs(compare)  # a spec (str) or one Scorer is one target
    record, progress = check_flag(record, "record"), check_flag(progress, "progress")
    draws = s.labelled_draws()
    if draws.k == 0:
        if draws.n_selected == 0:
            # a harness session's labels are the target's runs (QA: it said to label)
            tool = (cfg.extra.get("harness") or {}).get("tool")
            raise SessionError(
                "no labels yet: run the eval with activetest.inspect.ActiveStopping on this "
                "session (docs/harness_inspect.md)" if tool == "inspect" else
                f"no labels yet: draw items for lm-eval (`activetest select {s.path} --n 10 "
                f"--emit lm-eval --out samples.json`), run lm_eval with --samples "
                f"samples.json and import its results (docs/harness.md)" if tool == "lm-eval"
                else
                "no labels yet: select items (`activetest select`) and label them first")
        raise SessionError(f"no usable labels yet: the first selected item "
                           f"({s.store.acquisitions()[0].item_id!r}) has no label; LURE "
                           f"uses the labels of the first K draws")
    s_stored = s.store.scores("surrogate")
    assert s_stored is not None
    kind = s.kind
    t_lp = kind.target_logprobs(draws, s._target_score(progress))  # scored once, stored

    def spec_of(o: Any) -> str:  # a file the session names by its name: that spec
        return session_spec(os.fspath(o), cfg.model_files)

    for o in others:  # as init --compare refuses it
        if isinstance(o, (str, os.PathLike)) and spec_of(o) == cfg.target:
            raise SessionError(f"--compare {spec_of(o)} is the session's "
                               f"target: compare it with another model")
    if kind.name == "classification" and cfg.compare:
        # the models compared at creation (scored on the pool then): every estimate
        given = {spec_of(o) for o in others if isinstance(o, (str, os.PathLike))}
        others = [s for s in cfg.compare if s not in given] + others
    compared, warnings = kind.comparisons(s.store, others, draws, s.metrics,
                                          s._score_other(draws.rows, progress))
    design_controls: dict[str, est.DesignControls] = {}
    design_info = sampler = None
    if cfg.adaptive:
        sampler = draw.replayed(s.store)  # one replay for the controls and the info
        # each metric the design serves with its own control (both, for a session
        # with both metrics created with the two-metric design)
        design_controls = draw.metric_controls(s.store, draws.k, sampler)
        design_info = draw.design_info(s.store, sampler)
        if cfg.exact_share:  # each draw's own uniform share bounds the exact anytime CS's bets
            draws = dataclasses.replace(draws, q_share=np.asarray(
                sampler.lam[:draws.k], dtype=np.float64))
    t_pool = s.store.scores("target")  # read after scoring: a census knows it all
    inputs = kind.estimate_inputs(
        draws, s.metrics, surrogate_pool=s_stored.logprobs,
        target_pool=None if t_pool is None else t_pool.logprobs, target_lp=t_lp,
        compare=compared)
    from activetest.session.blindspot import (
        blind_spot_pass,
        compared_pools,
        design_difference_weight_bounds,
        other_loss_bounds,
        stored_differences,
    )
    from activetest.session.estimate_differences import difference_moments_of

    # models compared at creation are known on the pool: each item's largest difference
    pools = compared_pools(cfg, s.store)  # read once: the bounds, the floors
    sure = stored_differences(cfg, s.store, s.metrics,
                              None if t_pool is None else t_pool.logprobs, pools)
    # a fixed acquisition's scores, read once: the blind spot's replay and the
    # difference's exact anytime CS both use them
    fixed_scores = (draw.acquisition_scores_of(s.store) if not cfg.adaptive and (
        sure or cfg.acquisition != "uniform") else None)
    inputs = dataclasses.replace(inputs, difference_bounds={
        spec: dict(cb.difference) for spec, cb in sure.items()},
        other_loss_bounds=other_loss_bounds(sure),
        proposal_scores=fixed_scores if sure else None,
        difference_weight_bounds=design_difference_weight_bounds(
            cfg, sampler, k=draws.k, differences=sure, losses=inputs.losses,
            compare=inputs.compare) if sure else {})
    # the paired differences' moments under the surrogate (their variance floor, below):
    # an adaptive design's blind-spot pass sums them under each draw's proposal, kept in
    # its state with the curves, so an estimate pays for the new draws only
    moments = None if not sure else difference_moments_of(
        s.metrics, surrogate_pool=s_stored.logprobs,
        target_pool=None if t_pool is None else t_pool.logprobs,
        compared={spec: pools[spec] for spec in sure})
    passed = blind_spot_pass(  # what items drawn far below uniform could hide
        cfg, s.store, k=draws.k, n_pool=draws.n_pool, metrics=s.metrics,
        sampler=sampler, target_pool=None if t_pool is None else t_pool.logprobs,
        loss_bounds=inputs.loss_bounds, pool_controls=inputs.pool_controls, level=level,
        save=record and s.store.writable,  # its running state, for the next one
        differences=sure, scores=fixed_scores,
        start=None if curves_from is None else min(max(1, curves_from), draws.k),
        second_moments=None if moments is None or not cfg.adaptive else moments.second)
    blind = passed.spots
    if cfg.exact_least and passed.least_q is not None:  # each draw's least proposal
        draws = dataclasses.replace(draws, q_least=passed.least_q[:draws.k])
    floors = est.variance_floors(  # computed once: the estimate and the report's curves
        cfg.acquisition, None if inputs.proposal_scores is None or design_controls else
        (inputs.proposal_scores, float(cfg.proposal_floor)), inputs.pool_controls, draws,
        bool(design_controls), others={  # the compared targets known on the pool
            spec: est.controls(["error_rate"], s_stored.logprobs, sc)
            ["error_rate"] for spec in (cfg.compare if cfg.acquisition == "compare"
                                        and "error_rate" in s.metrics else ())
            if (sc := pools.get(spec)) is not None})
    if sure:  # the paired differences with a model compared at creation: the surrogate's
        # model of each difference floors its variance (a design seldom draws where the
        # compared model alone is confidently wrong)
        floors = dataclasses.replace(floors, differences=est.difference_floors(
            s.metrics, draws, surrogate_pool=s_stored.logprobs,
            target_pool=None if t_pool is None else t_pool.logprobs,
            compared={spec: pools[spec] for spec in sure},
            acquisition=cfg.acquisition, sampler=sampler,
            proposal=None if fixed_scores is None else
            (fixed_scores, float(cfg.proposal_floor)), moments=moments,
            second_sums=passed.second_sums))
    report = est.session_estimate(cfg, draws, inputs, design_controls=design_controls,
                                  floors=floors,
                                  design_info=design_info, warnings=warnings,
                                  n_boot=n_boot, level=level, target_width=target_width,
                                  blind_spots=blind)
    if record and s.store.writable:
        try:
            record_estimate(s.store, report)
        except (SessionWriteError, SessionReadOnlyError, SessionLockedError) as exc:
            # the estimate only reads; a full disk or another command's lock keeps
            # it from being recorded (status then shows the previous one), no more
            report = dataclasses.replace(report, warnings=[
                *report.warnings, f"this estimate is not recorded in the session file "
                f"(`status` shows the last one recorded): {exc}"])
    elif record:  # opened read-only (the file, its folder or the disk)
        report = dataclasses.replace(report, warnings=[
            *report.warnings, "this estimate is not recorded in the session file: it is "
            "open read-only (`status` shows the last one recorded)"])
    return EstimateParts(report, draws, dict(inputs.losses), design_controls, blind,
                         dict(inputs.loss_bounds), floors, sampler,
                         {spec: dict(m) for spec, m in inputs.compare.items()},
                         {spec: dict(m) for spec, m in inputs.other_loss_bounds.items()},
                         inputs)


def record_estimate(store: SessionStore, report: EstimateReport) -> None:
    """Store an estimate in the session's history (one transaction): per metric LURE,
    the plain mean, the control-variate LURE, and each comparison's estimate and
    difference, each with the label history it saw (a later change makes it stale)."""
    # the label history it saw: a later label change makes it stale (status says so)
    seen = store.last_label_change()

    def put(metric: str, method: str, r: BootstrapResult, **details: Any) -> None:
        store.add_estimate(n_labels=report.n_labels, metric=metric, method=method,
                                estimate=r.estimate, std=r.std, low=r.low, high=r.high,
                                level=r.level, details={**details, "label_change": seen})

    blind = {n.metric: line for n in report.blind_spots if n.estimator == "estimate"
             and (line := n.describe(report.level)) is not None}
    with store.transaction():
        for m in report.metrics.values():
            extra = {} if m.anytime is None else {"anytime": jsonable(asdict(m.anytime))}
            if m.metric in blind and m.anytime is not None and m.anytime.basis != "exact":
                # status repeats it under the intervals (not where the exact anytime CS stands in)
                extra["blind_spot"] = blind[m.metric]
            if (sure := est.metric_sure_line(m, report.n_labels, report.n_pool,
                                             report.level, report.uniform_draws)) is not None:
                extra["sure_bounds"] = sure  # status repeats it, as the blind spot's
            put(m.metric, "lure", m.active, n_flagged=len(report.flagged),
                without_flagged=m.without_flagged, labels_needed=m.labels_needed, **extra)
            put(m.metric, "mean", m.uniform, note="plain mean; biased under active sampling",
                uniform_draws=report.uniform_draws)
            if m.cv is not None:
                put(m.metric, "cv_lure", m.cv, control_pool_mean=m.control_mean,
                    same_as_lure=m.cv_same_as_lure, **(
                        {} if m.cv_anytime is None else
                        {"anytime": jsonable(asdict(m.cv_anytime))}))
        for c in report.comparisons:
            # the compared target's sure-bounds line, as estimate prints it: status repeats
            # it under that row, as the target's (QA: status showed its estimate outside
            # them with nothing said)
            o_sure = est.sure_risk_line(
                f"{c.spec}'s {c.metric.replace('_', ' ')}", c.other_anytime,
                float(c.other.estimate), report.n_labels, report.n_pool, report.level,
                (c.other.low, c.other.high))
            put(c.metric, f"lure:{c.spec}", c.other, **(
                {} if c.other_anytime is None else
                {"anytime": jsonable(asdict(c.other_anytime))}),
                **({} if o_sure is None else {"sure_bounds": o_sure}))
            # the target's LURE the difference subtracts from (status says it where the
            # headline is an adaptive design's own estimate, as estimate does)
            d = c.difference_anytime
            outside = {}
            if d is not None and d.estimate_outside_sure and d.sure_low is not None \
                    and d.sure_high is not None:  # status repeats estimate's note
                from activetest.session.estimate_notes import difference_outside_line

                outside["sure_outside"] = difference_outside_line(
                    f"target - {c.spec} ({c.metric.replace('_', ' ')})",
                    float(c.difference.estimate), d.sure_low, d.sure_high,
                    (d.sure_high - d.sure_low) * report.n_pool / 2, report.uniform_draws)
            put(c.metric, f"difference:{c.spec}", c.difference, target_lure=c.target_lure,
                **({} if d is None else {"anytime": jsonable(asdict(d))}), **outside)
