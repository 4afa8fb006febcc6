"""A session's :class:`ReportData` from plain inputs: the estimate, its history, the alarms.

:class:`ReportInputs` holds what a report needs of a session, computed once by
:meth:`activetest.session.workflow.Session.report_data` (one estimate, one replay
of an adaptive design shared by the estimate and the report); :func:`report_data`
turns them into the report's records. Nothing here reads a session file or runs a model.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from activetest.session import estimate as est
from activetest.session.config import SessionConfig
from activetest.session.records import EstimateReport
from activetest.session.report import data as rp
from activetest.session.source_names import shown_source
from activetest.stats import (
    BootstrapResult,
    adaptive_lure_terms,
    lure_terms,
    uniform_labels_for_width,
)
from activetest.stats.confseq import cs_claimed
from activetest.stats.fewerrors import few_errors_what

__all__ = ["METRIC_NAMES", "ReportInputs", "check_report_options", "cv_notes",
           "difference_curves", "examples_used",
           "report_data"]


#: How metrics are named in reports.
METRIC_NAMES = {"log_loss": "log loss", "error_rate": "error rate"}


def _snippet(fields: Mapping[str, Any]) -> str:
    return " | ".join(str(v) for v in fields.values())


def _budgets(k: int, n_points: int) -> list[int]:
    budgets = sorted({round(float(x)) for x in np.linspace(1, k, min(n_points, k))} | {k})
    return [b for b in budgets if b >= 2] or [k]


def _cs_curve(draws: est.LabelledDraws, losses: np.ndarray, level: float,
              metric: str, design: est.DesignControls | None = None,
              planned_budget: int | None = None, blind: Any = None,
              few: est.FewErrors | None = None, loss_bound: float | None = None,
              floor: np.ndarray | None = None, sure: bool = False,
              ) -> est.IntervalCurves:
    """The anytime CS (inf before it starts) and the fixed-budget interval of the
    session's estimate at every label count 1..K, as :func:`.estimate.anytime` has them
    for the last: LURE, or an adaptive design's own (``design`` = its controls and
    variance prediction, :func:`activetest.session.draw.design_controls`). Returns
    ``(cs_low, cs_high, fixed_low, fixed_high)``, by :func:`.estimate.interval_curves`
    (the one implementation: blind spots, clipping and the error rate's few-errors rule
    ``few``, :func:`.estimate.few_errors_inputs`, as the estimate applies them; kept
    within ``[0, loss_bound]`` and, with ``sure`` (sessions recording ``sure_bounds``),
    cut to the bounds that hold surely, as the estimate keeps them)."""
    from activetest.stats import adaptive_lure_theta

    if design is None:
        theta = adaptive_lure_theta(losses, draws.q, draws.n_pool)
        mv = floor  # a fixed proposal's model variance, where it has one
    else:
        theta = adaptive_lure_theta(losses, draws.q, draws.n_pool, control=design[0],
                                    control_rest=design[1])
        mv = design[2]
    curve = None if blind is None or not blind.bounded else blind.estimate
    bounds = est.value_range(metric, loss_bound)
    return est.interval_curves(theta, draws.n_pool, level=level, model_var=mv,
                               value_range=bounds, planned_budget=planned_budget, blind=curve,
                               few=few, sure=None if not sure else est.sure_risk_curve(
                                   losses, draws.rows, draws.n_pool, bounds[1]))


def _pair(low: float | None, high: float | None) -> rp.Interval | None:
    """The interval if both ends are finite, else none (a CS not started yet)."""
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return None
    return rp.Interval(float(low), float(high))


def _estimate(boot: BootstrapResult, fixed: rp.Interval | None = None,
              anytime: rp.Interval | None = None, exact: rp.Interval | None = None,
              basis: str | None = None, outside_sure: rp.Interval | None = None
              ) -> rp.Estimate:
    """A bootstrap result as the report's :class:`Estimate`, with its other intervals."""
    return rp.Estimate(boot.estimate, rp.Interval(boot.low, boot.high), fixed, anytime, exact,
                       basis, outside_sure)


def _outside_sure(a: Any) -> rp.Interval | None:
    """An interval record's sure bounds where its estimate lies outside them
    (:attr:`activetest.session.records.AnytimeInterval.estimate_outside_sure`), else None."""
    if a is None or not a.estimate_outside_sure or a.sure_low is None or a.sure_high is None:
        return None
    return _pair(a.sure_low, a.sure_high)


def cv_notes(report: EstimateReport) -> list[str]:
    """The report's paragraph on control-variate LURE (empty when there is none)."""
    from activetest.session.interval_names import (
        BOOTSTRAP,
        FIXED_BUDGET,
        interval_name,
        outside_sure_mark,
    )

    parts = []
    for m in report.metrics.values():
        if m.cv is None or m.cv_same_as_lure:
            continue
        a = m.cv_anytime
        fixed = ("" if a is None else f", {interval_name(FIXED_BUDGET, report.level)} "
                                      f"[{a.fixed_low:.4f}, {a.fixed_high:.4f}]")
        # outside its sure bounds: said at the number, as `estimate` says it
        out = "" if (sure := _outside_sure(a)) is None else \
            f" ({outside_sure_mark(sure.low, sure.high)})"
        parts.append(f"{METRIC_NAMES[m.metric]} {m.cv.estimate:.4f}{out}{fixed}, "
                     f"{interval_name(BOOTSTRAP, report.level)} "
                     f"[{m.cv.low:.4f}, {m.cv.high:.4f}]")
    same = [METRIC_NAMES[m.metric] for m in report.metrics.values()
            if m.cv is not None and m.cv_same_as_lure]
    notes = []
    if parts:
        notes.append(f"Control-variate LURE with {report.n_labels} label"
                     f"{'' if report.n_labels == 1 else 's'} (unbiased too; it "
                     f"subtracts the surrogate's expected loss, whose pool mean needs no "
                     f"labels): " + "; ".join(parts) + ".")
    if same:
        notes.append(f"Control-variate LURE is not shown for {', '.join(same)}: with CE or PE "
                     f"acquisition the control variate is the acquisition score itself, so it "
                     f"equals LURE up to the proposal's floor and cannot narrow the interval.")
    return notes


@dataclass(frozen=True)
class ReportInputs:
    """What a report shows of a session, as plain values (no session, no file).

    Attributes:
        estimate: the current estimate (:meth:`Session.estimate`, not recorded); its
            ``design`` is the replayed adaptive design's state (``{}``: a fixed proposal).
        draws: the labelled draws it was computed from.
        losses: metric -> ``(K,)`` the target's loss at each labelled draw.
        config: the session's configuration.
        task_name: the task's name.
        class_names: the task's class names, by class index (names the flagged labels).
        design_controls: metric -> ``(g_m, G_m, V_m)`` of the labelled draws for the
            metrics an adaptive design serves (:func:`.draw.metric_controls`, from the
            same replay as ``estimate.design``); empty for a fixed proposal.
        scores: the pool's ``(N,)`` acquisition scores.
        acquired_idx, acquired_q: pool row and probability of every draw so far, in order.
        item_fields: item id -> its fields, for (at least) the flagged items.
        provenance: model role (``surrogate``, ``target``) -> where its stored scores
            came from (:meth:`Session.provenance`).
        session: the session file, as the report's header names it.
        blind_spots: metric -> its blind spot at every budget
            (:func:`activetest.session.blindspot.session_blind_spots`): the curves'
            intervals are widened by it, as the estimate's are.
        loss_bounds: metric -> the largest loss any pool item can have (the log loss's,
            where the target is known on the pool): the curves' intervals are kept within
            it, as the estimate's are.
        variance_floors: metric -> a fixed proposal's model variance of each draw
            (:func:`.estimate.variance_floors`): the curves' floor, as the estimate's.
        labels_from: what a harness session's labels are
            (:func:`activetest.session.harness.labels_from`), for the header.
        next_proposal: an adaptive design's ``(N,)`` proposal for the next draw (0 on
            drawn items), what the acquisition figure shows for it (None: a fixed
            proposal, or every item drawn).
        compare_losses: compared target -> metric -> ``(K,)`` its losses at the labelled
            draws: the figure of each paired difference over labels (empty: no figure).
        other_loss_bounds: compared target -> metric -> the largest loss any pool item
            can have for it (a model compared at creation): the difference's range.
        difference_floors: compared target -> metric -> the difference's variance floor
            (:attr:`.estimate.VarianceFloors.differences`), as the estimate applies it.
        difference_bounds: compared target -> metric -> ``(N,)`` the largest
            ``|L_A - L_B|`` each pool item can have (a model compared at creation): the
            curve cuts each count's intervals to the bounds that hold surely then
            (:func:`.estimate.sure_difference`) and bounds its exact anytime CS by them.
        difference_proposal: the fixed acquisition's ``(scores, floor)``
            (:func:`.estimate.fixed_proposal`), and ``difference_weight_bounds`` an
            adaptive design's weight bounds: the difference's exact anytime CS as the estimate
            bounds it (:func:`.estimate.difference_few`).
    """

    estimate: EstimateReport
    draws: est.LabelledDraws
    losses: Mapping[str, np.ndarray]
    config: SessionConfig
    task_name: str
    class_names: Sequence[str]
    scores: np.ndarray
    acquired_idx: np.ndarray
    acquired_q: np.ndarray
    design_controls: Mapping[str, est.DesignControls] = field(default_factory=dict)
    item_fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    provenance: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    session: str = ""
    blind_spots: Mapping[str, Any] = field(default_factory=dict)
    loss_bounds: Mapping[str, float] = field(default_factory=dict)
    variance_floors: Mapping[str, np.ndarray] = field(default_factory=dict)
    labels_from: str | None = None
    next_proposal: np.ndarray | None = None
    compare_losses: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    other_loss_bounds: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    difference_floors: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    difference_bounds: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    difference_proposal: tuple[np.ndarray, float] | None = None
    difference_weight_bounds: Mapping[str, Mapping[str, np.ndarray]] = field(
        default_factory=dict)


def _same(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two intervals (None: none) agree to 1e-12."""
    if a is None or b is None:
        return a is None and b is None
    return all(abs(x - y) <= 1e-12 * max(1.0, abs(y)) for x, y in zip(a, b, strict=True))


def difference_curves(inputs: ReportInputs, budgets: Sequence[int], target: str,
                      ) -> list[rp.DifferenceCurve]:
    """Each compared target's paired difference ``R_A - R_B`` after each of ``budgets``
    labels, from the stored labels prefix by prefix as the target's own curve is: LURE of
    the per-item differences ``d_m = L_A - L_B`` (``theta_m`` of
    :func:`activetest.stats.adaptive_lure_theta`), its bootstrap with the estimate's own
    seeds, and its fixed-budget interval and anytime CS by :func:`.estimate.interval_curves`
    (skewness may only widen, kept within the difference's range, the CS claimed from 30
    labels, the difference's variance floor and the blind spot's widening where the
    estimate has them, the exact anytime CS while few labels differ by
    :func:`.estimate.difference_few`), then, for a model compared at creation, cut at each
    count to the bounds that hold surely then (:func:`.estimate.sure_difference`): every
    point is what ``estimate --compare`` shows at that count (QA: the sure bounds and the
    exact anytime CS of a model compared at creation were applied at the last point alone). Where
    ``estimate`` still shows other intervals at the last count, the last point takes them
    and says so (:attr:`rp.DifferenceCurve.last_as_estimate`); a point whose estimate
    lies outside its sure bounds records them (:attr:`rp.Estimate.outside_sure`)."""
    from activetest.session.records import AnytimeInterval
    from activetest.stats import adaptive_lure_theta, bootstrap

    final, draws, cfg = inputs.estimate, inputs.draws, inputs.config
    level, N, q = float(cfg.level), draws.n_pool, draws.q
    shown = shown_source(cfg.pool, cfg.kind)
    pool = "" if shown is None else shown.source
    out = []
    for c in final.comparisons:
        other = inputs.compare_losses.get(c.spec, {}).get(c.metric)
        if other is None or draws.k < 2:
            continue
        la = np.asarray(inputs.losses[c.metric], dtype=np.float64)
        lb = np.asarray(other, dtype=np.float64)
        d = la - lb
        o_bound = inputs.other_loss_bounds.get(c.spec, {}).get(c.metric)
        d_range = est.difference_range(c.metric, inputs.loss_bounds.get(c.metric), o_bound)
        floor = inputs.difference_floors.get(c.spec, {}).get(c.metric)
        # the blind spot, as the estimate widens the difference for it at every count:
        # an error rate's unexplored items could hide a difference either way; where both
        # targets are known on the pool, the difference's own bounds
        blind, spot = None, inputs.blind_spots.get(c.metric)
        if spot is not None and spot.bounded:
            own = spot.differences.get(c.spec)
            base = own if own is not None else spot.estimate if c.metric == "error_rate" \
                else None
            if base is not None:
                blind = dataclasses.replace(base, widen_low=np.asarray(
                    base.widen_high, dtype=np.float64).copy())
        # the few-errors rule (sessions recording it): the exact anytime CS while few labels show
        # a difference, bounded as the estimate bounds it (a model compared at creation:
        # by each item's bound and the proposal's draws)
        bounds = inputs.difference_bounds.get(c.spec, {}).get(c.metric)
        few = est.difference_few(
            c.metric, la, lb, draws, cfg.clt_min_errors,
            q_floor=est.q_floor(cfg, bool(inputs.design_controls)), level=level,
            item_bounds=bounds, proposal=inputs.difference_proposal,
            weight_bound=inputs.difference_weight_bounds.get(c.spec, {}).get(c.metric))
        curves = est.interval_curves(
            adaptive_lure_theta(d, q, N), N, level=level, value_range=d_range,
            model_var=None if floor is None else floor.variance(d, q, N), blind=blind,
            few=few, planned_budget=cfg.planned_budget, skew_widens_only=True)
        rows = []
        for b in budgets:
            j = b - 1
            boot = est.clip_result(bootstrap(
                lure_terms(d[:b], q[:b], N), n_boot=cfg.n_boot, level=level,
                random_state=est.bootstrap_rng(cfg.seed, b, f"diff:{c.spec}:{c.metric}")),
                d_range)
            basis = None if few is None else "exact" if few.few[j] else "clt"
            f_lo, f_hi = float(curves.fixed_low[j]), float(curves.fixed_high[j])
            c_lo, c_hi = float(curves.cs_low[j]), float(curves.cs_high[j])
            claimed, outside = bool(curves.claimed[j]), None
            if bounds is not None:  # the bounds that hold surely after b labels
                cut, sure = est.sure_difference(
                    AnytimeInterval(math.nan, f_lo, f_hi, c_lo, c_hi, basis=basis),
                    d[:b], draws.rows[:b], bounds)
                f_lo, f_hi, c_lo, c_hi = cut.fixed_low, cut.fixed_high, cut.cs_low, cut.cs_high
                if sure.binding:  # what is shown: neither the CLT nor the exact anytime CS
                    basis = "sure"
                tol = 1e-9 * max(1.0, abs(boot.estimate))
                if not sure.low - tol <= boot.estimate <= sure.high + tol:
                    outside = _pair(sure.low, sure.high)  # kept: unbiased (see the notes)
            cs = (_pair(c_lo, c_hi) if claimed or basis in ("exact", "sure") else None)
            rows.append(rp.HistoryRow(b, _estimate(boot, _pair(f_lo, f_hi), cs, basis=basis,
                                                   outside_sure=outside)))
        last_as = None
        a = c.difference_anytime
        if rows and rows[-1].n_labels == draws.k and a is not None:
            shown_cs = (a.cs_low, a.cs_high) if (
                cs_claimed(draws.k, N) or a.basis in ("exact", "sure")) else None
            r = rows[-1].active
            mine_cs = None if r.anytime is None else (r.anytime.low, r.anytime.high)
            mine_f = None if r.fixed is None else (r.fixed.low, r.fixed.high)
            if not (_same(mine_f, (a.fixed_low, a.fixed_high)) and _same(mine_cs, shown_cs)):
                last_as = ("the exact anytime CS (few labels show a difference)"
                           if a.basis == "exact" else
                           "cut to the bounds that hold surely" if a.basis == "sure" else
                           "by its other rules (see the notes)")
                rows[-1] = rp.HistoryRow(b, rp.Estimate(
                    r.value, r.bootstrap, _pair(a.fixed_low, a.fixed_high),
                    None if shown_cs is None else _pair(*shown_cs), basis=a.basis,
                    outside_sure=_outside_sure(a)))
        out.append(rp.DifferenceCurve(METRIC_NAMES[c.metric], target, c.spec, rows, pool,
                                      last_as))
    return out


def examples_used(config: SessionConfig, provenance: Mapping[str, Any], role: str) -> Any:
    """The in-context examples a model's predictions used, as its scores record it.

    ``provenance``: the role's (:meth:`Session.provenance`). For predictions read
    from a file this is what the file says (lm-eval's ``n-shot``) or ``"unknown"``,
    never the session's own setting.
    """
    if "n_examples" in provenance:
        return provenance["n_examples"]
    spec = str(config.target if role == "target" else config.surrogate)
    shots = ((config.answer_files or {}).get("target") or {}).get("n_shot")
    if role == "target" and isinstance(shots, dict) and shots:
        # an lm-eval target: the n-shot its results said, kept with the first round
        # (QA: "unknown" though it was stored)
        values = set(shots.values())
        return (next(iter(values)) if len(values) == 1 else
                ", ".join(f"{task}: {n}" for task, n in sorted(shots.items())))
    harness = config.extra.get("harness") if isinstance(config.extra, Mapping) else None
    if role == "surrogate" and spec == "pool-run" and isinstance(harness, Mapping):
        # an lm-eval session's pool run: the n-shot its results file said, else unknown
        # (QA: the session's own 0, whatever the pool run's prompts were)
        pool = harness.get("pool_n_shot")
        values = set(pool.values()) if isinstance(pool, Mapping) else set()
        if not values:
            return "unknown"
        return (next(iter(values)) if len(values) == 1 else
                ", ".join(f"{task}: {n}" for task, n in sorted(pool.items())))
    if not provenance and spec.partition("?")[0].partition(":")[0] in _NOT_RUN_HERE:
        # nothing stored of its scores and not run here (an lm-eval or inspect target,
        # run by the harness on the drawn items; a file): not the session's --shots
        return "unknown"
    return config.target_examples if role == "target" else config.shots


#: specs whose predictions or answers activetest does not make itself (the head of the
#: spec): their in-context examples are what made them
_NOT_RUN_HERE = ("lm-eval", "inspect", "answers", "table", "pool")



def _dropped_rows(excluded: Any) -> str:
    """The history rows ``init`` left out, counted by why (its ``excluded`` record: name,
    reason): every one was called "the target's own" (QA: a compared model's row named by
    --history-exclude, a copy of another row, a row with no result on the pool)."""
    kinds: dict[str, int] = {}
    for row in excluded:
        why = str(row[1]) if isinstance(row, (list, tuple)) and len(row) > 1 else ""
        kind = ("named by --history-exclude" if why.startswith("named") else
                "the target's own (its scores)" if "taken for the target" in why else
                "copies of another row" if why.startswith("identical to row") else
                "without a result on the pool" if why.startswith("no result") else
                why or "left out")
        kinds[kind] = kinds.get(kind, 0) + 1
    total = sum(kinds.values())
    if not total:
        return "0 row(s) dropped"
    return f"{total} row(s) dropped ({', '.join(f'{n} {k}' for k, n in kinds.items())})"


def _by_position(files: Any) -> str:
    """The files ``init`` joined by ids that look like positions, as the user confirmed
    (``--ids-are-positions``: the ``history`` record's ``by_position``)."""
    from pathlib import Path

    names = [Path(str(f)).name or str(f) for f in files]
    if not names:
        return ""
    return (f"; joined by position, not checked ({', '.join(names)}: ids that look like "
            f"row numbers, confirmed with --ids-are-positions)")


def check_report_options(*, truth: Any = None, n_points: Any = 40, title: Any = None,
                         notes: Any = ()) -> None:
    """Refuse a report option of the wrong type or range, by name and value, before
    anything is estimated or written (:func:`report_data` takes them).

    ``truth``: None or a mapping metric name -> real number; ``n_points``: a whole
    number >= 2; ``title``: None or a non-empty string; ``notes``: a list or tuple of
    strings.

    Raises:
        ValueError: naming the option (QA: ``truth=5`` raised "'int' object has no
            attribute 'items'", ``n_points="a"`` Python's "'<' not supported",
            ``n_points=0`` or ``True`` gave one point, ``title=5`` was the title 5,
            ``notes="abc"`` three notes "a", "b", "c" and ``notes=5`` "Value after *
            must be an iterable").
    """
    from activetest.session.options import as_integer

    if truth is not None:
        if not isinstance(truth, Mapping):
            raise ValueError(f"truth must be a mapping metric -> true value (e.g. "
                             f"{{'error_rate': 0.2}}), or None; got "
                             f"{type(truth).__name__} {truth!r}")
        for k, v in truth.items():
            if not isinstance(k, str) or isinstance(v, bool) \
                    or not isinstance(v, (int, float, np.integer, np.floating)):
                raise ValueError(f"truth must map metric names to numbers, got {k!r}: "
                                 f"{type(v).__name__} {v!r}")
    n = as_integer(n_points)
    if n is None or n < 2:
        raise ValueError(f"n_points must be a whole number of label counts >= 2 (the "
                         f"history's points, the first and last included), got "
                         f"{type(n_points).__name__} {n_points!r}")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise ValueError(f"title must be a non-empty string, or None (the default title), "
                         f"got {type(title).__name__} {title!r}")
    if not isinstance(notes, (list, tuple)) or not all(isinstance(x, str) for x in notes):
        bad = next((x for x in notes if not isinstance(x, str)), None) \
            if isinstance(notes, (list, tuple)) else notes
        raise ValueError(f"notes must be a list or tuple of strings (one per note), got "
                         f"{type(bad).__name__} {bad!r}"
                         f"{'' if bad is notes else ' in it'}")


def report_data(inputs: ReportInputs, *, truth: Mapping[str, float] | None = None,
                n_points: int = 40, title: str | None = None, notes: Sequence[str] = (),
                ) -> rp.ReportData:
    """The :class:`ReportData` of a session's :class:`ReportInputs`.

    The history holds the LURE and uniform-equivalent estimates with bootstrap
    intervals at up to ``n_points`` label counts (always including the last).
    ``truth`` (metric -> value) is shown when known, e.g. in simulations. The labels
    needed are projected for the estimate's ``target_width`` (if it has one).
    """
    check_report_options(truth=truth, n_points=n_points, title=title, notes=notes)
    final, draws, losses, cfg = inputs.estimate, inputs.draws, inputs.losses, inputs.config
    seed, n_boot, level = cfg.seed, cfg.n_boot, float(cfg.level)
    metrics = cfg.metrics
    budgets = _budgets(draws.k, n_points)
    history: dict[str, list[rp.HistoryRow]] = {}
    # what the labels showed few of, where the exact anytime CS stood in
    few_what: dict[str, str] = {}
    designs = inputs.design_controls  # the design's own estimate, for the metrics it serves
    for metric in metrics:
        bound = inputs.loss_bounds.get(metric)
        points = est.history(draws, metric, losses[metric], budgets, seed=seed,
                             n_boot=n_boot, level=level, design=designs.get(metric),
                             loss_bound=bound, shared_resamples=bool(cfg.shared_resamples))
        few = None if metric != "error_rate" or draws.k < 2 else est.few_errors_inputs(
            losses[metric], draws, cfg.clt_min_errors, level=level,
            q_floor=est.q_floor(cfg, bool(designs)), design=designs.get(metric))
        curves = _cs_curve(draws, losses[metric], level, metric, designs.get(metric),
                           cfg.planned_budget, inputs.blind_spots.get(metric), few, bound,
                           inputs.variance_floors.get(metric), bool(cfg.sure_bounds))
        cs_lo, cs_hi, f_lo, f_hi = (curves.cs_low, curves.cs_high, curves.fixed_low,
                                    curves.fixed_high)
        # the anytime CS (asymptotic) is claimed from 30 labels (before, it is the clipped range:
        # no row value, no band), the exact anytime CS wherever it stands in: as `estimate`
        claimed = curves.claimed
        now = final.metrics[metric].anytime if metric in final.metrics else None
        cs_lo = np.where(claimed, cs_lo, np.nan)
        cs_hi = np.where(claimed, cs_hi, np.nan)
        # one label has no fixed-budget interval (no spread to estimate): `estimate` shows
        # none (QA: the report showed the clipped range [0, bound] as one, and drew it)
        f_lo = np.where(np.arange(1, draws.k + 1) >= 2, f_lo, np.nan)
        # the exact anytime CS at the latest count, as `estimate` shows it (QA: the report left it
        # out), and what the shown intervals are at each count (the exact anytime CS stands in
        # where the labels show few errors: the table says so)
        exact = None if now is None or now.exact_low is None else _pair(now.exact_low,
                                                                         now.exact_high)
        rows = []
        for p in points:
            j = p.n_labels - 1
            basis = None if few is None else ("exact" if few.few[j] else "clt")
            if p.n_labels == draws.k and now is not None and now.basis is not None:
                basis = now.basis
            last = p.n_labels == draws.k
            # the latest estimate outside its sure bounds: recorded, as `estimate` marks it
            # at the number (QA: the report's table left a single risk's unmarked)
            rows.append(rp.HistoryRow(
                p.n_labels,
                _estimate(p.active, _pair(f_lo[j], f_hi[j]), _pair(cs_lo[j], cs_hi[j]),
                          exact if last else None, basis,
                          outside_sure=_outside_sure(now) if last else None),
                _estimate(p.uniform)))
        history[METRIC_NAMES[metric]] = rows
        if few is not None and cfg.clt_min_errors is not None and (
                what := few_errors_what(losses[metric], int(cfg.clt_min_errors))):
            few_what[METRIC_NAMES[metric]] = what
    # each flagged item's shift of the headline estimate: the terms the estimate's own
    # "without them" drops (an adaptive design's, with its controls; QA: plain LURE's were
    # shown beside an adaptive estimate)
    control = designs.get(metrics[0])
    terms = (lure_terms(losses[metrics[0]], draws.q, draws.n_pool) if control is None else
             adaptive_lure_terms(losses[metrics[0]], draws.q, draws.n_pool, control[0],
                                 control[1]))
    position = {step: j for j, step in enumerate(draws.steps)}
    flagged = []
    for f in final.flagged:
        j = position[f.step]
        shift = float(np.delete(terms, j).mean() - terms.mean()) if draws.k > 1 else 0.0
        flagged.append(rp.FlaggedItem(  # a graded target has no NLL of the label: None
            f.item_id, _snippet(inputs.item_fields[f.item_id]), inputs.class_names[f.label],
            f.target_nll if math.isfinite(f.target_nll) else None, f.surrogate_nll, shift))
    # a graded session's --target pool is the pool file's own answer column: "pool on
    # squad" read as if a model named "pool" were evaluated (QA); so in the comparison
    # table ("difference pool − answers:b.jsonl", QA) as in the title
    target = "the pool file's answers (--target pool)" if cfg.target == "pool" else cfg.target
    comparisons = []
    sums = []  # what a paired difference subtracts, where it is not the headline
    for c in final.comparisons:
        m = final.metrics.get(c.metric)
        if c.target_lure is not None and m is not None and abs(
                m.active.estimate - c.target_lure) >= 5e-5:
            sums.append(f"target − {c.spec} ({METRIC_NAMES[c.metric]}): the paired "
                        f"difference is the target's LURE {c.target_lure:.4g} minus the "
                        f"other's {c.other.estimate:.4g} on the same labels; the target's "
                        f"estimate in the tables, {m.active.estimate:.4g}, is the design's own "
                        f"with its control (both unbiased).")
        d, o = c.difference_anytime, c.other_anytime
        # the CS as `estimate` shows it: the asymptotic one from 30 labels, the exact anytime CS
        # and the sure bounds (valid at any count) wherever they stand in (QA: the report
        # showed [-1.78, 1.765] at 10 labels, and its verdict could rest on it)
        d_cs = None if d is None or not (cs_claimed(final.n_labels, final.n_pool)
                                         or d.basis in ("exact", "sure")) \
            else _pair(d.cs_low, d.cs_high)
        # the second target's CS by the same rule, beside its fixed-budget and bootstrap
        # intervals, as `estimate` shows them (QA: the report showed its fixed-budget
        # interval alone)
        o_cs = None if o is None or not (cs_claimed(final.n_labels, final.n_pool)
                                         or o.basis == "exact") \
            else _pair(o.cs_low, o.cs_high)
        comparisons.append(rp.Comparison(
            METRIC_NAMES[c.metric], target, c.spec,
            _estimate(c.difference, *(() if d is None else (_pair(d.fixed_low, d.fixed_high),
                                                             d_cs)),
                      basis=None if d is None else d.basis, outside_sure=_outside_sure(d)),
            final.n_labels,
            _estimate(c.other, *(() if o is None else (_pair(o.fixed_low, o.fixed_high),
                                                        o_cs)),
                      basis=None if o is None else o.basis)))
    needed = []
    target_width = final.target_width
    if target_width is not None:
        for m in final.metrics.values():
            a = m.anytime
            needed.append(rp.LabelsNeeded(
                METRIC_NAMES[m.metric], float(target_width), int(m.labels_needed or draws.k),
                uniform_labels_for_width(losses[m.metric], draws.q, draws.n_pool,
                                         float(target_width), level=level,
                                         value_range=est.value_range(
                                             m.metric, inputs.loss_bounds.get(m.metric))),
                None if a is None else (draws.k if a.may_stop else a.labels_needed),
                a is not None and not a.may_stop and a.labels_needed_sure))
    design = final.design
    info = {"Session": inputs.session, "Seed": cfg.seed,
            # a design chooses its own uniform share (lambda, in the design's line)
            **({} if cfg.adaptive else {"Proposal floor": cfg.proposal_floor}),
            "In-context examples": examples_used(
                cfg, inputs.provenance.get("surrogate", {}), "surrogate"),
            "Target in-context examples": examples_used(
                cfg, inputs.provenance.get("target", {}), "target")}
    if inputs.labels_from:
        info["Labels"] = inputs.labels_from
    hist = cfg.extra.get("history")
    if isinstance(hist, dict) and hist.get("n_models") is not None:  # what it learnt from
        from pathlib import Path

        given = [str(x) for x in hist.get("sources") or ()]
        short = [Path(x).name or x for x in given]  # whole paths where names repeat (QA)
        names = ", ".join(short if len(set(short)) == len(short) else given)
        info["History"] = (f"{hist['n_models']} other model(s) from {names or 'the files'}; "
                           f"{hist.get('n_covered', '?')} of {draws.n_pool} pool items "
                           f"covered; {_dropped_rows(hist.get('excluded') or ())}"
                           + _by_position(hist.get("by_position") or ()))
    if design:
        from activetest.session.draw import describe_design

        state, weights = describe_design(design)
        info["Design"] = f"{design.get('design')}, {state}"
        if weights:
            info["Fitted calibration"] = weights
    # The report states the few-labels warning itself.
    all_notes = [*(w for w in final.warnings if not w.startswith("only ")),
                 "The uniform-equivalent column is the plain mean of the labelled items' "
                 "losses: what uniform sampling would report with as many labels. Under "
                 "active sampling it is biased; it is shown for contrast only"
                 + (" (here every pool item is labelled, so it is the pool's exact "
                    "value)." if final.n_labels >= final.n_pool else
                    " (here every draw so far was made at the uniform rate, so it is "
                    "unbiased too)." if final.uniform_draws else "."),
                 *cv_notes(final), *sums, *notes]
    if final.flagged:
        all_notes.append("Flagged items: dropping items breaks the estimator's "
                         "unbiasedness; the shift column is a sensitivity check only.")
    from activetest.session.history_neighbours import surrogate_label
    from activetest.session.session_status import absent_paths
    # The title names what was evaluated, the target as stored (as every command names
    # it), without the note that its recorded path is absent here (absent_note, which the
    # header's "Target:" line and `status` carry): the report's numbers come from the
    # predictions stored in the session, not from that file, so the note says nothing
    # about them; a title that changed with the machine the report is written on would
    # name two reports of one session differently (a browser tab, a file list); and the
    # note stands two lines below it, in both documents.
    return rp.ReportData(
        title=title or f"Active testing: {target} on {inputs.task_name}",
        task=inputs.task_name, target=target,
        surrogate=surrogate_label(cfg.surrogate, cfg.extra.get("history")),
        metrics=[METRIC_NAMES[m] for m in metrics], history=history,
        scores=inputs.scores, next_proposal=inputs.next_proposal,
        acquired_idx=np.asarray(inputs.acquired_idx, dtype=np.int64),
        acquired_q=np.asarray(inputs.acquired_q, dtype=np.float64), flagged=flagged,
        comparison=comparisons, labels_needed=needed,
        truth=None if truth is None else {METRIC_NAMES.get(k, k): v for k, v in truth.items()},
        value_range={METRIC_NAMES[m]: est.value_range(m) if m == "error_rate"
                     else (0.0, None) for m in metrics},
        level=level, acquisition=cfg.acquisition, pool_size=draws.n_pool,
        pool_file=shown_source(cfg.pool, cfg.kind), info=info,
        notes=all_notes, uniform_biased=not final.uniform_draws, few_what=few_what,
        differences=difference_curves(inputs, budgets, target),
        absent_paths=absent_paths(cfg))
