"""What a report shows, as plain records (no rendering, no session).

:class:`ReportData` is built by :mod:`activetest.session.report.build` from a
session's plain inputs (or by hand, e.g. in the demo), validated on construction, and rendered by
:mod:`~activetest.session.report.render` (Markdown/HTML) with the figures of
:mod:`~activetest.session.report.plots`. Tuples and dicts are accepted wherever a
row record is expected.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from activetest.session.source_names import SourceName

__all__ = ["Comparison", "DifferenceCurve", "Estimate", "FlaggedItem", "HistoryRow", "Interval",
           "LabelsNeeded", "ReportData"]


@dataclass(frozen=True)
class Interval:
    """An interval's two ends, ``low <= high`` (``(low, high)`` or a mapping of them is
    accepted too)."""

    low: float
    high: float

    @property
    def width(self) -> float:
        """``high - low``."""
        return self.high - self.low


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its intervals, each named by what it guarantees (see
    :mod:`activetest.session.interval_names`), all at ``ReportData.level``. A tuple
    ``(value, (low, high)[, (low, high)[, (low, high)]])`` or a mapping is accepted too.

    Attributes:
        value: the estimate.
        bootstrap: its bootstrap :class:`Interval`.
        fixed: its fixed-budget interval (martingale CLT, finite-population factor), the
            report's headline (``None`` if not computed: the bootstrap is then shown
            alone, named as such).
        anytime: its anytime-valid confidence sequence (``None`` before it starts, at 30
            labels, or if not computed).
        exact: its exact (non-asymptotic) anytime confidence sequence for bounded losses
            (``None`` where no bound is known, or not computed).
        basis: what ``fixed`` and ``anytime`` are: ``"clt"`` (the CLT intervals),
            ``"exact"`` (the exact anytime CS stands in for both: the labels show too few errors)
            or ``"sure"`` (a difference's bounds that hold surely); ``None``: unknown, read
            as the CLT ones.
        outside_sure: the bounds that hold surely, where ``value`` lies outside them (a
            paired difference's, or a single risk's at the latest count: the unbiased
            estimate is kept, not moved into them; the tables mark it, the difference's
            figure rings it); ``None`` otherwise.
    """

    value: float
    bootstrap: Interval
    fixed: Interval | None = None
    anytime: Interval | None = None
    exact: Interval | None = None
    basis: str | None = None
    outside_sure: Interval | None = None


@dataclass(frozen=True)
class HistoryRow:
    """One metric's estimates after ``n_labels`` labels.

    Attributes:
        n_labels: labels used so far (K).
        active: the active-testing estimate (LURE) with its intervals.
        uniform: the uniform-equivalent estimate with its bootstrap interval for the same
            number of labels (what the workflow computes as the baseline; ``None`` if not
            available).
    """

    n_labels: int
    active: Estimate
    uniform: Estimate | None = None


@dataclass(frozen=True)
class FlaggedItem:
    """An item worth a second look (e.g. a possibly wrong label).

    Attributes:
        item_id: the item's id.
        text: the item's text (shortened to 80 characters in the report).
        label: the label it was given, as a label word or class name.
        target_nll: the target's ``-log p(label | x)`` (``None`` where the target has
            none: a graded target's answer is judged, not scored per level).
        surrogate_nll: the surrogate's ``-log pi(label | x)`` (``None`` if unknown).
        shift: how much the headline estimate moves if the item is dropped (estimate
            without it minus estimate with it, from the estimate's own terms; first
            metric).
    """

    item_id: str
    text: str
    label: str
    target_nll: float | None
    surrogate_nll: float | None
    shift: float


@dataclass(frozen=True)
class Comparison:
    """Paired difference ``target_a - target_b`` of one metric on the same labels.

    Attributes:
        metric: which metric.
        target_a, target_b: the two models.
        difference: the estimate of the difference with its intervals.
        n_labels: labels used.
        other: ``target_b``'s own risk with its intervals (``None`` if not computed).
    """

    metric: str
    target_a: str
    target_b: str
    difference: Estimate
    n_labels: int
    other: Estimate | None = None


@dataclass(frozen=True)
class DifferenceCurve:
    """The paired difference ``R_A - R_B`` of one metric (LURE of the per-item difference
    ``L_A - L_B``) as it stood after each of its label counts, with its fixed-budget
    interval and anytime CS (:attr:`HistoryRow.active`; ``uniform`` is None).

    Attributes:
        metric: which metric.
        target_a, target_b: the two models (A is the session's target).
        rows: :class:`HistoryRow` s in increasing ``n_labels``.
        pool: the session's pool (its file name), for the figure's title.
        last_as_estimate: the last point's intervals are not the curve's CLT ones but
            what ``estimate`` shows by its other rules there (the exact anytime CS while few
            labels show a difference, the bounds that hold surely, a blind spot's
            widening), named in words; None: the curve's own.
    """

    metric: str
    target_a: str
    target_b: str
    rows: Sequence[HistoryRow]
    pool: str = ""
    last_as_estimate: str | None = None


@dataclass(frozen=True)
class LabelsNeeded:
    """Projected total labels to reach an interval of width ``width``.

    Attributes:
        metric: which metric.
        width: requested interval width (``high - low``).
        n_labels: projected labels with active testing, for its bootstrap interval
            (1/sqrt(labels) shrinkage; an adaptive design's later draws varying as its
            model has them now: :func:`activetest.stats.projection.labels_for_width`).
        uniform_n_labels: the same for uniform sampling's bootstrap interval, from the
            pool's variance estimated on the draws (``None`` if unknown).
        anytime_n_labels: projected labels until the session's anytime confidence
            sequence is that narrow (:func:`activetest.stats.projection.labels_for_cs_width`;
            ``None`` if unknown, e.g. before two labels).
        anytime_sure: ``anytime_n_labels`` is certain, not a projection: by then the
            bounds that hold surely cut the CS within ``width``
            (:attr:`activetest.session.records.AnytimeInterval.labels_needed_sure`).
    """

    metric: str
    width: float
    n_labels: int
    uniform_n_labels: int | None = None
    anytime_n_labels: int | None = None
    anytime_sure: bool = False


def _finite(x: Any, what: str, optional: bool = False) -> float | None:
    if x is None and optional:
        return None
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{what} must be a number, got {x!r}")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {x!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return v


def _interval(value: Any, what: str) -> Interval:
    """An :class:`Interval` from itself, ``(low, high)`` or a mapping, in order."""
    iv = _coerce(Interval, value, what)
    if not iv.low <= iv.high:
        raise ValueError(f"{what}: expected low <= high, got {iv.low}, {iv.high}")
    return iv


def _count(x: Any, what: str, optional: bool = False) -> int | None:
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {x!r}")
    return int(x)


def _coerce(cls: type, value: Any, what: str) -> Any:
    """A record from itself, a mapping of its fields, or a tuple in field order.

    Values are checked and converted by the fields' annotations: ``int`` ->
    non-negative int, ``float`` -> finite float, ``bool`` -> a flag (true or false only),
    ``Interval`` -> an ordered
    :class:`Interval`, ``Estimate`` -> an :class:`Estimate`, ``str`` -> str (``| None``:
    optional).
    """
    names = [f.name for f in fields(cls)]
    if not isinstance(value, cls):
        try:
            if isinstance(value, Mapping):
                unknown = set(value) - set(names)
                if unknown:
                    raise TypeError(f"unknown key(s) {sorted(unknown)}")
                value = cls(**value)
            elif isinstance(value, (str, bytes)):
                raise TypeError("a string is not a record")
            else:
                value = cls(*value)
        except TypeError as exc:
            article = "an" if cls.__name__[0] in "AEIOU" else "a"
            raise ValueError(f"{what}: expected {article} {cls.__name__} (fields {names}), a "
                             f"mapping or a tuple of them; got {value!r} ({exc})") from None
    clean = {}
    for f in fields(cls):
        v = getattr(value, f.name)
        kind = str(f.type)
        optional = kind.endswith("| None")
        where = f"{what}.{f.name}"
        if v is None and optional:
            clean[f.name] = None
        elif kind.startswith("int"):
            clean[f.name] = _count(v, where, optional)
        elif kind.startswith("Interval"):
            clean[f.name] = _interval(v, where)
        elif kind.startswith("Estimate"):
            clean[f.name] = _coerce(Estimate, v, where)
        elif kind.startswith("float"):
            clean[f.name] = _finite(v, where, optional)
        elif kind.startswith("bool"):  # (str() made "False" a true flag)
            if not isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{where}: expected true or false, got {v!r}")
            clean[f.name] = bool(v)
        else:
            clean[f.name] = str(v)
    return cls(**clean)


@dataclass
class ReportData:
    """Everything the report shows. Tuples and dicts are accepted for the records.

    Attributes:
        title: the report's heading.
        task, target, surrogate: names shown in the header.
        metrics: metric names in display order, e.g. ``["log loss", "error rate"]``.
        history: for each metric, :class:`HistoryRow` s (or tuples
            ``(n_labels, active[, uniform])`` of :class:`Estimate` s or their tuples) in
            increasing ``n_labels``; may be empty before the first label.
        scores: the pool's acquisition scores, ``(N,)``; ``None``: no acquisition figure.
        acquired_idx: pool indices (into ``scores``) of the acquired items, in order.
        acquired_q: ``q_m`` of each acquired item, in order.
        next_proposal: an adaptive design's proposal for the next draw, ``(N,)`` (0 on
            the drawn items); the acquisition figure shows it instead of ``scores``,
            which such a design does not draw by. None: not known.
        flagged: :class:`FlaggedItem` s (or dicts with its fields).
        comparison: :class:`Comparison` s of two targets (one or a list).
        labels_needed: :class:`LabelsNeeded` projections.
        truth: known true value per metric (e.g. in the demo).
        value_range: per metric, ``(low, high)`` the values it can take (e.g. ``(0, 1)``
            for an error rate; either end ``None``: unbounded); the figures keep their
            axes and bands within it.
        level: the intervals' nominal coverage.
        acquisition: name of the acquisition function, e.g. ``"ce"``.
        pool_size: N (default ``len(scores)``).
        pool_file: the pool's file(s) by name and the SHA-256 the session stores of them
            (:func:`activetest.session.source_names.shown_source`), said beside N so
            that a reader knows which pool it counts; None: not known (items given in
            Python).
        uniform_label: what the baseline is called in tables and legends.
        uniform_biased: whether that plain mean is biased (active draws), so that tables
            and legends say "(biased)"; False when every draw so far was made at the
            uniform rate, where it is unbiased too.
        info: extra ``key: value`` lines for the header (seed, proposal floor, session file).
        notes: extra paragraphs at the end.
        few_what: per metric, what the labels showed too few of where the exact anytime
            CS stood in (:func:`activetest.stats.fewerrors.few_errors_what`, e.g.
            ``"labels without an error"``); a metric not in it: ``"errors"``.
        differences: :class:`DifferenceCurve` s of compared targets (the report's
            figure of the difference over labels; empty: none).
        absent_paths: the stored specs of :attr:`target`, :attr:`surrogate` and the
            compared targets whose recorded local path names nothing on this machine (an
            old session opened on another machine:
            :func:`activetest.session.session_status.absent_paths`); the header and the
            comparison say so beside each, as ``status`` does
            (:func:`activetest.session.spec_files.absent_note`).
    """

    title: str
    task: str
    target: str
    surrogate: str
    metrics: Sequence[str]
    history: Mapping[str, Sequence[Any]]
    scores: Any = None
    acquired_idx: Any = None
    acquired_q: Any = None
    next_proposal: Any = None
    flagged: Sequence[Any] = field(default_factory=list)
    comparison: Any = None
    labels_needed: Sequence[Any] = field(default_factory=list)
    truth: Mapping[str, float] | None = None
    value_range: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    level: float = 0.95
    acquisition: str | None = None
    pool_size: int | None = None
    pool_file: SourceName | None = None
    uniform_label: str = "uniform-equivalent"
    uniform_biased: bool = True
    info: Mapping[str, Any] = field(default_factory=dict)
    notes: Sequence[str] = field(default_factory=list)
    few_what: Mapping[str, str] = field(default_factory=dict)
    differences: Sequence[DifferenceCurve] = field(default_factory=list)
    absent_paths: Sequence[str] = field(default_factory=tuple)

    @property
    def estimator_name(self) -> str:
        """What the active estimate is: adaptive LURE for an adaptive design (learnt
        controls), LURE for the paper's fixed proposals."""
        from activetest.session.config import ACQUISITIONS

        acq = ACQUISITIONS.get(self.acquisition or "")
        return "adaptive LURE estimate" if acq is not None and acq.adaptive else "LURE estimate"

    def __post_init__(self) -> None:
        self.metrics = [str(m) for m in self.metrics]
        if not self.metrics:
            raise ValueError("metrics must name at least one metric")
        if len(set(self.metrics)) != len(self.metrics):
            raise ValueError(f"metrics must be distinct, got {self.metrics}")
        unknown = set(self.history) - set(self.metrics)
        if unknown:
            raise ValueError(f"history has metric(s) {sorted(unknown)} not in metrics "
                             f"{self.metrics}")
        history: dict[str, list[HistoryRow]] = {}
        for m in self.metrics:
            rows = [_coerce(HistoryRow, r, f"history[{m!r}][{i}]")
                    for i, r in enumerate(self.history.get(m, []))]
            for i, r in enumerate(rows):
                where = f"history[{m!r}][{i}]"
                a = r.active
                if not a.bootstrap.low <= a.value <= a.bootstrap.high:
                    raise ValueError(f"{where}.active: expected low <= estimate <= high, got "
                                     f"{a.bootstrap.low}, {a.value}, {a.bootstrap.high}")
                if i and r.n_labels <= rows[i - 1].n_labels:
                    raise ValueError(f"{where}: n_labels must increase, got "
                                     f"{rows[i - 1].n_labels} then {r.n_labels}")
            history[m] = rows
        self.history = history
        if not 0 < self.level < 1:
            raise ValueError(f"level must be in (0, 1), got {self.level!r}")
        if self.scores is not None:
            s = np.asarray(self.scores, dtype=np.float64)
            if s.ndim != 1 or not np.all(np.isfinite(s)):
                raise ValueError(f"scores must be a finite 1-D array, got shape {s.shape}")
            self.scores = s
            if self.pool_size is None:
                self.pool_size = int(s.size)
        if self.acquired_idx is not None:
            idx = np.asarray(self.acquired_idx)
            if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
                raise ValueError("acquired_idx must be a 1-D array of integer pool indices")
            if self.scores is not None and idx.size and (idx.min() < 0
                                                         or idx.max() >= self.scores.size):
                raise ValueError(f"acquired_idx must lie in 0..{self.scores.size - 1}")
            self.acquired_idx = idx.astype(np.int64)
        if self.acquired_q is not None:
            q = np.asarray(self.acquired_q, dtype=np.float64)
            if q.ndim != 1 or not np.all((q >= 0) & (q <= 1)):
                raise ValueError("acquired_q must be a 1-D array of probabilities in [0, 1]")
            if self.acquired_idx is not None and q.size != self.acquired_idx.size:
                raise ValueError(f"acquired_q has {q.size} entries, acquired_idx "
                                 f"{self.acquired_idx.size}")
            self.acquired_q = q
        if self.next_proposal is not None:
            nq = np.asarray(self.next_proposal, dtype=np.float64)
            if nq.ndim != 1 or not np.all(np.isfinite(nq)) or np.any(nq < 0):
                raise ValueError("next_proposal must be a 1-D array of probabilities >= 0")
            self.next_proposal = nq
        self.flagged = [_coerce(FlaggedItem, f, f"flagged[{i}]")
                        for i, f in enumerate(self.flagged)]
        comp = self.comparison
        if comp is None:
            comp = []
        elif isinstance(comp, (Comparison, Mapping)):
            comp = [comp]
        self.comparison = [_coerce(Comparison, c, f"comparison[{i}]") for i, c in enumerate(comp)]
        self.labels_needed = [_coerce(LabelsNeeded, p, f"labels_needed[{i}]")
                              for i, p in enumerate(self.labels_needed)]
        truth = {} if self.truth is None else dict(self.truth)
        bad = set(truth) - set(self.metrics)
        if bad:
            raise ValueError(f"truth has metric(s) {sorted(bad)} not in metrics {self.metrics}")
        self.truth = {k: float(_finite(v, f"truth[{k!r}]")) for k, v in truth.items()}
        ranges = dict(self.value_range or {})
        bad = set(ranges) - set(self.metrics)
        if bad:
            raise ValueError(f"value_range has metric(s) {sorted(bad)} not in metrics "
                             f"{self.metrics}")
        clean: dict[str, tuple[float | None, float | None]] = {}
        for k, v in ranges.items():
            if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or len(v) != 2:
                raise ValueError(f"value_range[{k!r}] must be (low, high), got {v!r}")
            lo = _finite(v[0], f"value_range[{k!r}][0]", optional=True)
            hi = _finite(v[1], f"value_range[{k!r}][1]", optional=True)
            if lo is not None and hi is not None and not lo < hi:
                raise ValueError(f"value_range[{k!r}]: expected low < high, got {lo}, {hi}")
            clean[k] = (lo, hi)
        self.value_range = clean
        bad = set(self.few_what or {}) - set(self.metrics)
        if bad:
            raise ValueError(f"few_what has metric(s) {sorted(bad)} not in metrics "
                             f"{self.metrics}")
        self.few_what = {str(k): str(v) for k, v in (self.few_what or {}).items()}
        curves = []
        for i, c in enumerate(self.differences or ()):
            if not isinstance(c, DifferenceCurve):
                raise ValueError(f"differences[{i}]: expected a DifferenceCurve, got {c!r}")
            rows = [_coerce(HistoryRow, r, f"differences[{i}].rows[{j}]")
                    for j, r in enumerate(c.rows)]
            if any(b.n_labels <= a.n_labels for a, b in itertools.pairwise(rows)):
                raise ValueError(f"differences[{i}].rows: n_labels must increase")
            curves.append(replace(c, rows=rows))
        self.differences = curves

    @property
    def census(self) -> bool:
        """Whether every pool item is labelled in the latest estimate (``pool_size`` known):
        the plain mean is then the pool's exact value."""
        return self.pool_size is not None and 0 < self.pool_size <= self.n_labels

    @property
    def n_labels(self) -> int:
        """Labels used in the latest estimate (max over metrics; 0 before the first)."""
        return max((rows[-1].n_labels for rows in self.history.values() if rows), default=0)
