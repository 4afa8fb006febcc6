"""The records a session hands out: estimates, label imports, status (plain dataclasses).

They cross module boundaries (workflow -> CLI, reports, demo) and are built by the
pure functions in :mod:`activetest.session.estimate` and friends; none of them
knows the SQLite store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from activetest.session.config import ACQUISITIONS
from activetest.session.source_names import SourceName, of_file
from activetest.session.store import EstimateRow, LabelChange, SessionError
from activetest.stats import BootstrapResult

if TYPE_CHECKING:
    from activetest.models.labels import LabelScoring

__all__ = [
    "ACQUISITION_CHOICES",
    "ADAPTIVE_ACQUISITIONS",
    "EXPORT_FORMATS",
    "LEGACY_STATUS_KEYS",
    "METRICS",
    "METRIC_CHOICES",
    "NOISE_RULES",
    "RESOLVE_RULES",
    "AnytimeInterval",
    "BlindSpotNote",
    "Comparison",
    "EstimateReport",
    "FlaggedItem",
    "LabelConflict",
    "LabelError",
    "LabelImport",
    "MetricEstimate",
    "SessionStatus",
    "SummaryRow",
    "Waiting",
]

#: Metrics a session estimates: mean log loss and error rate (mean 0-1 loss).
METRICS = ("log_loss", "error_rate")
#: Values of ``metric=``: one metric or ``both``.
METRIC_CHOICES = ("log_loss", "error_rate", "both")
#: Acquisitions a classification session can use (label-free ones; ``nll``/oracles need
#: the labels): derived from :data:`activetest.session.config.ACQUISITIONS`, the one list.
ACQUISITION_CHOICES = tuple(a.name for a in ACQUISITIONS.values()
                            if "classification" in a.kinds)
#: Acquisitions that are adaptive designs (:mod:`activetest.stats.adaptive`): the
#: proposal and the control are refitted from the labels as they arrive (name -> design;
#: derived from :data:`~activetest.session.config.ACQUISITIONS`).
ADAPTIVE_ACQUISITIONS = {a.name: str(a.design) for a in ACQUISITIONS.values() if a.adaptive}
#: Formats :meth:`Session.export` writes.
EXPORT_FORMATS = ("csv", "tsv", "jsonl", "json", "labelstudio")

#: How the label-noise alarm combines its two thresholds.
NOISE_RULES = ("any", "all")
#: How an import settles an item that its records label differently (annotators who
#: disagree): ``skip`` leaves it out (and reports it), ``latest`` takes the label
#: given last (by the instant of its time, zones honoured; by place in the file where
#: a time is missing or zoned and zone-less times mix), ``majority`` the most frequent
#: one, one vote per annotator (their latest; a tie stays unsettled).
RESOLVE_RULES = ("skip", "latest", "majority")


class LabelError(SessionError):
    """Labels that cannot be accepted: unknown item or class, not selected, conflicting."""


@dataclass(frozen=True)
class FlaggedItem:
    """A labelled item whose label both or either model finds very unlikely.

    Attributes:
        item_id: the item.
        step: its draw step.
        label: the class index it was given.
        target_nll: ``-log p_target(label | x)``.
        surrogate_nll: ``-log pi_surrogate(label | x)``.
    """

    item_id: str
    step: int
    label: int
    target_nll: float
    surrogate_nll: float


@dataclass(frozen=True)
class AnytimeInterval:
    """Intervals with a justification the bootstrap lacks (see docs/intervals.md).

    Attributes:
        se: the martingale-CLT standard error of the estimate (consistent under the
            sequential, adaptive, without-replacement design; finite-population
            factor built in).
        fixed_low, fixed_high: the fixed-budget interval from ``se`` (with Hall's
            skewness correction): valid if the number of labels was chosen in advance;
            kept within the values the risk can take (and holding the estimate, except
            a paired difference's, cut to the bounds that hold surely: an estimate outside
            those is said in a note, :func:`activetest.session.estimate.sure_difference`).
        cs_low, cs_high: the asymptotic confidence sequence: valid at ANY number of
            labels, including one chosen by looking at the results (stop whenever you
            like); before 30 labels it claims nothing: the whole range the quantity can
            take (the whole line where that is unbounded).
        exact_low, exact_high: the exact (non-asymptotic) betting confidence sequence
            for bounded losses, or None where no bound is known.
        target_width: the width asked for, if any.
        may_stop: whether the CS is already at most ``target_width`` wide.
        labels_needed: projected total labels until the CS is that narrow.
        labels_needed_sure: ``labels_needed`` is not a projection but certain: by then
            the bounds that hold surely (``sure_low``/``sure_high``'s, narrowing by the
            loss bound over the pool size a label) cut the CS within ``target_width``
            whatever the labels are (sooner if the CS's own formula gets there).
        basis: what the fixed-budget interval and the CS at this label count are:
            ``"clt"`` (the intervals above) or ``"exact"`` (the exact anytime CS stands in: the
            labels show too few errors, :mod:`activetest.stats.fewerrors`); for a paired
            difference also ``"sure"``: the bounds that hold surely from both targets'
            predictions on the pool (:func:`activetest.session.estimate.sure_difference`).
            None: no such rule applies (a log loss, or a session file from before the
            rule): always the CLT ones.
        basis_note: why the exact anytime CS stands in, e.g. ``"exact interval: fewer than 5
            errors labelled (2 of 40)"``, or what the sure bounds are (None otherwise).
        estimate_outside_cs: the CS (the intersection of the CS at every label count so
            far) no longer holds the estimate it is centred on: the latest labels
            disagree with what the earlier ones implied (labelling mistakes, a changed
            instruction, or an anytime CS (asymptotic) that missed); ``may_stop`` is then False.
        sure_low, sure_high: the bounds the risk holds surely given the labels (the
            labelled items' losses plus the most the unlabelled ones could add,
            :func:`activetest.session.estimate_base.sure_risk_curve`), where they cut
            the fixed-budget interval or the CS shown (a small pool with most of it
            labelled); None where they cut nothing. The intervals keep their names
            (``basis`` "sure" is a paired difference's alone). A paired difference's
            are its own bounds (:func:`activetest.session.estimate.sure_difference`).
        estimate_outside_sure: the estimate lies outside ``sure_low``/``sure_high``: an
            unbiased estimate can (each label weighs by how unlikely its draw was); it is
            not moved (which would bias it), and the outputs say so beside the number: a
            paired difference's (``estimate``, ``status``, the report, the summary), a
            risk's (``estimate``'s table marks it and says it under the table, ``status``,
            the summary), with its sure-bounds note.
    """

    se: float
    fixed_low: float
    fixed_high: float
    cs_low: float
    cs_high: float
    exact_low: float | None = None
    exact_high: float | None = None
    target_width: float | None = None
    may_stop: bool | None = None
    labels_needed: int | None = None
    basis: str | None = None
    basis_note: str | None = None
    estimate_outside_cs: bool = False
    sure_low: float | None = None
    sure_high: float | None = None
    labels_needed_sure: bool = False
    estimate_outside_sure: bool = False


@dataclass(frozen=True)
class BlindSpotNote:
    """What the items a session's draws hardly looked at could hide, for one estimate
    (:mod:`activetest.session.blindspot`): its fixed-budget interval and anytime CS are
    already widened by it.

    Attributes:
        metric: ``log_loss`` or ``error_rate``.
        estimator: ``estimate`` (the session's headline: LURE or the design's own) or
            ``cv`` (control-variate LURE).
        n_unexplored: never-drawn items drawn at below ``ratio`` times the uniform rate.
        ratio: that share (the session's ``blind_ratio``: 1/2 for a fixed acquisition,
            0.2 for an adaptive design under the earned rule).
        widen_low, widen_high: taken from the lower ends and added to the upper ends
            (0 and 0: nothing unexplored). None: no loss bound is known, nothing was
            widened, and the intervals assume no rare large losses among those items.
        loss_cap: the largest loss an item can have, as used (1 for the error rate; the
            log loss's cap, the largest ``-log p`` of the target's predictions); None
            where unknown.
        unexplored_bound: the most those items could add to the risk (their bounds'
            sum over N), if a bound is known.
    """

    metric: str
    estimator: str
    n_unexplored: int
    ratio: float
    widen_low: float | None
    widen_high: float | None
    loss_cap: float | None
    unexplored_bound: float | None = None

    def describe(self, level: float = 0.95) -> str | None:
        """The line the terminal and the report show (None: nothing unexplored)."""
        from activetest.session.interval_names import blind_spot_sentence

        return blind_spot_sentence(self.metric, self.n_unexplored, self.ratio,
                                   self.widen_low, self.widen_high, self.loss_cap,
                                   "control-variate LURE's " if self.estimator == "cv" else "",
                                   level)


@dataclass(frozen=True)
class MetricEstimate:
    """The estimate of one metric.

    Attributes:
        metric: ``log_loss`` or ``error_rate``.
        active: the session's headline estimate with its bootstrap interval: LURE for
            the paper's fixed proposals, the adaptive design's own estimate (LURE with its
            learnt controls) for an adaptive design; unbiased under the session's
            sampling.
        uniform: the plain mean of the labelled items' losses with its bootstrap
            interval: what uniform sampling would report with as many labels, but
            BIASED here (the items were not drawn uniformly); shown for contrast.
        curve: the headline estimate (``active``'s: LURE, or an adaptive design's own)
            after each of the first K labels (left out of ``repr``, as ``uniform_curve``).
        uniform_curve: the running plain mean after each label.
        without_flagged: LURE mean with the flagged items' terms dropped (None if
            nothing was flagged). Dropping items breaks unbiasedness.
        labels_needed: total labels projected for ``target_width`` (or None).
        cv: control-variate LURE, ``mean_pool(h) + LURE(loss - h)`` with ``h`` the
            surrogate's expected loss of the target on every pool item (for PE
            sessions, whose target is not scored on the pool: of itself), and its
            bootstrap interval. Unbiased like LURE (beta = 1, fixed ``h``); narrower
            when the surrogate's expectation tracks the real losses. None when no
            control can be formed.
        control_mean: the pool mean of ``h`` (the ASE estimate, which needs no labels).
        anytime: the martingale fixed-budget interval and the confidence sequences of
            that headline estimate (None below 2 labels).
        cv_anytime: the same for control-variate LURE.
        cv_same_as_lure: the acquisition score IS ``h`` (CE or PE acquisition for log
            loss): the draws are then weighted so that ``LURE(h)`` is ``mean_pool(h)``
            up to the proposal's floor, so ``cv`` equals LURE up to that floor and
            cannot narrow the interval.
    """

    metric: str
    active: BootstrapResult
    uniform: BootstrapResult
    # left out of repr: a value per label (QA: ``r`` at a prompt printed hundreds of floats)
    curve: tuple[float, ...] = field(default=(), repr=False)
    uniform_curve: tuple[float, ...] = field(default=(), repr=False)
    without_flagged: float | None = None
    labels_needed: int | None = None
    cv: BootstrapResult | None = None
    control_mean: float | None = None
    anytime: AnytimeInterval | None = None
    cv_anytime: AnytimeInterval | None = None
    cv_same_as_lure: bool = False


@dataclass(frozen=True)
class Comparison:
    """Two targets on the same labels.

    Attributes:
        spec: the second target's model spec.
        metric: the metric compared.
        other: LURE estimate of the second target's risk with its bootstrap interval.
        difference: LURE estimate of ``risk(target) - risk(other)`` with its
            bootstrap interval (unbiased: LURE of the per-item difference).
        difference_cs: the asymptotic confidence sequence of the difference
            (``high < 0``: the target is better, at any number of labels), or None.
        other_anytime: the second target's fixed-budget interval and CS (finite-population
            factor: exact with every pool item labelled), kept within the loss's range;
            None below 2 labels.
        difference_anytime: the same for the difference, kept within ``[-B, B]``.
        target_lure: LURE of the target's own risk at the same draws: the difference is
            this minus ``other`` (LURE is linear). Where the target's headline is an
            adaptive design's estimate (with its control) the two differ, both unbiased;
            the output says which number the difference subtracts from.
    """

    spec: str
    metric: str
    other: BootstrapResult
    difference: BootstrapResult
    difference_cs: tuple[float, float] | None = None
    other_anytime: AnytimeInterval | None = None
    difference_anytime: AnytimeInterval | None = None
    target_lure: float | None = None


def _fixed4(x: float, digits: int = 4) -> str:
    """``x`` with 4 decimals (``digits``: more, where an interval beside it needs them,
    :func:`activetest.session.interval_names.interval_decimals`), a value that rounds to
    zero as ``0.0000`` (QA: a paired difference of -1e-17 read "-0.0000")."""
    from activetest.session.interval_names import unsigned_zero

    return unsigned_zero(f"{x:.{digits}f}")


@dataclass(frozen=True)
class SummaryRow:
    """One estimate as :meth:`EstimateReport.summary` shows it.

    Attributes:
        metric: ``error_rate``, ``log_loss``, ...
        of: whose: ``target``, a compared model's spec, or ``target - <spec>`` (the
            paired difference).
        estimator: what made the estimate (adaptive LURE, LURE, paired LURE difference).
        estimate: the number (printed with ``decimals`` decimals: 4, or as many as an
            interval beside it needs for its two ends to differ).
        intervals: ``(name, interval)`` pairs, each named by what it guarantees, the
            interval as text (``—`` where there is none; "(from 30 labels)" for a CS
            not yet claimed); a mark where the exact anytime CS or sure bounds stand in.
        note: what the number is where that needs saying (a difference whose target
            term differs from the headline; an estimate outside the bounds that hold
            surely, kept as it is unbiased), else empty.
    """

    metric: str
    of: str
    estimator: str
    estimate: float
    intervals: tuple[tuple[str, str], ...]
    note: str = ""
    decimals: int = 4


@dataclass(frozen=True)
class EstimateReport:
    """Everything :meth:`Session.estimate` computes.

    Attributes:
        n_pool: N.
        n_labels: K, the labels used (the labelled prefix of the draw order).
        n_selected: draws so far.
        n_waiting: labels of later draws that wait for an earlier unlabelled draw.
        metrics: per metric, the estimates.
        flagged: items flagged by the label-noise alarm (among the K used).
        noise_thresholds: ``(target NLL, surrogate NLL, rule)`` of the alarm.
        comparisons: paired comparisons (``compare=``).
        target_width: the interval width asked for, or None.
        level: interval coverage.
        warnings: things the user should know (few labels, waiting labels, ...).
        design: an adaptive design's state (name, refits, lambda, ridge, fitted
            weights); empty for the paper's fixed acquisitions.
        blind_spots: what items drawn far below the uniform rate could hide, per
            estimate (empty for sessions written before it was recorded).
        uniform_draws: every draw used was made at the uniform rate (``q_m = 1 / (N - m
            + 1)``): the plain mean of the labelled losses is unbiased too (an adaptive
            design draws uniformly until its first fit; ``uniform``).
    """

    n_pool: int
    n_labels: int
    n_selected: int
    n_waiting: int
    metrics: dict[str, MetricEstimate]
    flagged: list[FlaggedItem] = field(default_factory=list)
    noise_thresholds: tuple[float, float, str] = (5.0, 5.0, "any")
    comparisons: list[Comparison] = field(default_factory=list)
    target_width: float | None = None
    level: float = 0.95
    warnings: list[str] = field(default_factory=list)
    design: dict[str, Any] = field(default_factory=dict)
    blind_spots: list[BlindSpotNote] = field(default_factory=list)
    uniform_draws: bool = False

    def summary_rows(self) -> list[SummaryRow]:
        """One :class:`SummaryRow` per estimate shown: per metric the headline, then per
        compared model its own estimate and the paired difference; what :meth:`summary`
        writes as lines and a notebook shows as a table (:meth:`_repr_html_`)."""
        from activetest.session.interval_names import (
            ANYTIME,
            BOOTSTRAP,
            EXACT_ANYTIME,
            FIXED_BUDGET,
            basis_mark,
            interval_decimals,
            interval_name,
            interval_text,
        )
        from activetest.stats.confseq import cs_claimed

        def iv(low: float | None, high: float | None) -> str:
            if low is None or high is None:
                return "—"
            d = interval_decimals((low, high))  # 4, or more where 4 show two ends alike
            # an end that rounds to zero keeps its minus where the other end shows one
            # (QA: [-0.0100, 0.0000] for an interval wholly below 0)
            return interval_text(low, high, d)

        def digits(boot: BootstrapResult, a: AnytimeInterval | None) -> int:
            pairs = [(boot.low, boot.high)]
            if a is not None:
                pairs += [(a.fixed_low, a.fixed_high), (a.cs_low, a.cs_high),
                          (a.exact_low, a.exact_high)]
            return interval_decimals(*pairs)

        def named(boot: BootstrapResult, a: AnytimeInterval | None
                  ) -> tuple[tuple[str, str], ...]:
            parts = []
            if a is not None:
                mark = basis_mark(a.basis)
                cs = (iv(a.cs_low, a.cs_high) if a.basis in ("exact", "sure")
                      or cs_claimed(self.n_labels, self.n_pool) else "(from 30 labels)")
                parts += [(interval_name(FIXED_BUDGET, self.level),
                           f"{iv(a.fixed_low, a.fixed_high)}{mark}"),
                          (interval_name(ANYTIME, self.level), f"{cs}{mark}")]
                if a.exact_low is not None and a.basis != "exact":
                    parts.append((interval_name(EXACT_ANYTIME, self.level),
                                  iv(a.exact_low, a.exact_high)))
            parts.append((interval_name(BOOTSTRAP, self.level), iv(boot.low, boot.high)))
            return tuple(parts)

        def outside(a: AnytimeInterval | None) -> str:
            # an estimate outside the bounds that hold surely, said at the number (kept:
            # unbiased), a single risk's as a paired difference's
            if a is None or not a.estimate_outside_sure or a.sure_low is None \
                    or a.sure_high is None:
                return ""
            from activetest.session.interval_names import outside_sure_mark

            return outside_sure_mark(a.sure_low, a.sure_high)

        lure = "adaptive LURE" if self.design else "LURE"
        rows = [SummaryRow(m.metric, "target", lure, m.active.estimate,
                           named(m.active, m.anytime), outside(m.anytime),
                           digits(m.active, m.anytime))
                for m in self.metrics.values()]
        for c in self.comparisons:
            rows.append(SummaryRow(c.metric, c.spec, "LURE", c.other.estimate,
                                   named(c.other, c.other_anytime), outside(c.other_anytime),
                                   digits(c.other, c.other_anytime)))
            m = self.metrics.get(c.metric)
            of = ("" if c.target_lure is None or m is None
                  or abs(m.active.estimate - c.target_lure) < 5e-5 else
                  f"the target's LURE {c.target_lure:.4f} minus the other's")
            of = "; ".join(x for x in (of, outside(c.difference_anytime)) if x)
            rows.append(SummaryRow(c.metric, f"target - {c.spec}", "paired LURE difference",
                                   c.difference.estimate,
                                   named(c.difference, c.difference_anytime), of,
                                   digits(c.difference, c.difference_anytime)))
        return rows

    def summary(self) -> str:
        """A few lines a person reads (``str(report)``): per metric the estimate named by
        its estimator, each interval named by what it guarantees (the fixed-budget
        interval, the anytime CS, the exact anytime CS where known, the bootstrap), the paired
        differences, with a target width what it says about stopping
        (:func:`activetest.session.stop_lines.stop_lines`, as ``estimate --target-width``
        prints), and the notes; the dataclass's ``repr`` keeps every field but the
        per-label curves (QA: ``print(report)`` gave the curves and no estimator's name)."""
        lines = [self._head()]
        for r in self.summary_rows():
            what = r.metric if r.of == "target" else f"{r.metric}: {r.of}"
            note = f" ({r.note})" if r.note else ""
            lines.append(f"{what}: {r.estimator} {_fixed4(r.estimate, r.decimals)}{note}; "
                         + "; ".join(f"{n} {v}" for n, v in r.intervals))
        from activetest.session.stop_lines import stop_lines

        # with a target width: may stop, or the labels needed (QA: only the CLI said it)
        lines += [line.text for line in stop_lines(self)]
        lines += [f"note: {w}" for w in self.warnings]
        return "\n".join(lines)

    def _head(self) -> str:
        return (f"{self.n_labels} label(s) used of {self.n_pool} pool items "
                f"({self.n_selected} selected)")

    def _repr_html_(self) -> str:
        """The summary as a table, for notebooks: one row per estimate, one column per
        interval, each headed by what it guarantees; the notes below."""
        from html import escape

        rows = self.summary_rows()
        names: list[str] = []
        for r in rows:
            names += [n for n, _ in r.intervals if n not in names]
        head = "".join(f"<th>{escape(h)}</th>" for h in
                       ("metric", "of", "estimator", "estimate", *names))
        body = []
        for r in rows:
            got = dict(r.intervals)
            note = f"<br><small>{escape(r.note)}</small>" if r.note else ""
            cells = [escape(r.metric), escape(r.of), escape(r.estimator),
                     f"{_fixed4(r.estimate, r.decimals)}{note}",
                     *(escape(got.get(n, "")) for n in names)]
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        notes = "".join(f"<li>{escape(w)}</li>" for w in self.warnings)
        return (f"<div><p>{escape(self._head())}</p><table><thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(body)}</tbody></table>"
                + (f"<p>notes:</p><ul>{notes}</ul>" if notes else "") + "</div>")

    def __str__(self) -> str:
        """:meth:`summary`."""
        return self.summary()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable data; every interval named (``interval``,
        ``fixed_interval``, ...) and every estimate's estimator (``estimator``: adaptive
        LURE or LURE, the plain mean, control-variate LURE, a paired LURE difference)."""
        out = asdict(self)
        # each estimate names its estimator, as the text output and `status --json` do
        # (QA: `estimate --json` named the intervals but not what "active" estimated with)
        lure = "adaptive LURE" if self.design else "LURE"
        for m in out["metrics"].values():
            m["curve"] = list(m["curve"])
            m["uniform_curve"] = list(m["uniform_curve"])
            _name_intervals(m, self.level)
            for key, name in (("active", lure), ("uniform", "plain mean"),
                              ("cv", "control-variate LURE")):
                if isinstance(m.get(key), dict):
                    m[key]["estimator"] = name
            m["curve_estimator"] = lure
        for c in out["comparisons"]:
            _name_intervals({"active": c.get("other"), "anytime": c.get("other_anytime")},
                            self.level)
            _name_intervals({"active": c.get("difference"),
                             "anytime": c.get("difference_anytime")}, self.level)
            c["other"]["estimator"] = "LURE"
            c["difference"]["estimator"] = "paired LURE difference"
        out["noise_thresholds"] = list(self.noise_thresholds)
        return out


#: What ``labels_needed`` is in the JSON (QA: a projected total read as a count): the CS's
#: and the bootstrap's projections (docs/projection.md).
PROJECTION_CS = ("a projection: the total labels at which the confidence sequence's own "
                 "formula reaches the width asked for, its spread as estimated now")
SURE_LABELS_NEEDED = ("certain, not a projection: the total labels (of distinct items) at "
                      "which the bounds that hold surely (the labelled losses plus the most "
                      "the unlabelled items could add) cut the confidence sequence within "
                      "the width asked for, whatever the labels are; sooner if its own "
                      "formula gets there")
PROJECTION_BOOTSTRAP = ("a projection: the total labels at which the bootstrap interval, "
                        "shrinking as 1/sqrt(labels), reaches the width asked for")


def _name_intervals(m: dict[str, Any], level: float) -> None:
    """Name each interval of a metric's (or a comparison's) JSON by what it is
    (``interval``: the bootstrap's low/high; ``fixed_interval``, ``cs_interval``,
    ``exact_interval`` beside the anytime record's bounds), as the text output names
    them (:mod:`activetest.session.interval_names`): ``low``/``high`` are the bootstrap's,
    the headline is ``anytime.fixed_low``/``fixed_high`` (QA: nothing said which)."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        SURE_BOUNDS,
        interval_name,
    )

    boot = interval_name(BOOTSTRAP, level)
    for key in ("active", "uniform", "cv"):
        if isinstance(m.get(key), dict):
            m[key]["interval"] = boot + (" of the plain mean (biased under active draws)"
                                         if key == "uniform" else "")
    for a in (m.get("anytime"), m.get("cv_anytime")):
        if not isinstance(a, dict):
            continue
        exact = a.get("basis") == "exact"
        a["fixed_interval"] = (interval_name(EXACT_ANYTIME, level) + " (stands in for the "
                               + interval_name(FIXED_BUDGET, level) + ")" if exact else
                               interval_name(FIXED_BUDGET, level))
        a["cs_interval"] = interval_name(EXACT_ANYTIME if exact else ANYTIME, level)
        if a.get("basis") == "sure":  # both shown intervals are the sure bounds
            a["fixed_interval"] = a["cs_interval"] = SURE_BOUNDS
        a["exact_interval"] = interval_name(EXACT_ANYTIME, level)
        if a.get("labels_needed") is not None:  # a projection of the CS (QA: unnamed)
            a["labels_needed_interval"] = a["cs_interval"]
            a["labels_needed_method"] = (SURE_LABELS_NEEDED if a.get("labels_needed_sure")
                                         else PROJECTION_CS)
    if m.get("labels_needed") is not None:  # the bootstrap's projection, beside the CS's
        m["labels_needed_interval"] = boot
        m["labels_needed_method"] = PROJECTION_BOOTSTRAP


@dataclass(frozen=True)
class LabelConflict:
    """An item that one import labels differently (e.g. two Label Studio annotators).

    Attributes:
        item_id: the item.
        step: its draw step.
        votes: ``(class name, who, where)`` per record, in file order (who: the
            annotator, or the source).
        settled: the class name a resolution rule chose, or None (left out).
        rule: what decided: a ``--resolve`` rule, ``"ground truth"`` (a Label Studio
            annotation marked as ground truth settled it, whatever ``--resolve``) or
            ``"ground truths differ"`` (two such annotations disagree: left out,
            never guessed).
    """

    item_id: str
    step: int
    votes: tuple[tuple[str, str, str], ...]
    settled: str | None = None
    rule: str = ""

    def describe(self) -> str:
        """One line: the item and who gave which class."""
        given = " vs ".join(f"{name!r} ({who})" for name, who, _ in self.votes)
        return f"item {self.item_id!r} (draw {self.step}): {given}"


@dataclass(frozen=True)
class LabelImport:
    """What :meth:`Session.add_labels` did.

    Attributes:
        added: items labelled for the first time (the target's labels; a graded
            comparison's judgments of compared answers are :attr:`judged`).
        changed: items whose label was overwritten (the target's labels).
        unchanged: records that repeated an existing label or judgment.
        changes: the history rows written.
        conflicts: items the records labelled differently: left out (``settled``
            None) or settled by the resolution rule (their label is in ``changes``).
        votes_kept: annotators' labels stored for agreement (records that name an
            annotator; the same label imported again is not counted again).
        unnamed: records that name no annotator (the file carries no identity for
            them: each counts as a voter of its own, and none is kept for agreement);
            not the label rows of the sheet a session file put back (the session's
            own labels, :attr:`LabelRecord.own_source`).
        judged: compared answers judged for the first time (graded comparisons; not
            in :attr:`added`).
        judged_changed: compared answers' judgments overwritten (not in
            :attr:`changed`).
        position_note: a sheet's join by ids that look like positions, made as
            confirmed (:mod:`activetest.session.sheet_positions`), said; else None.
        taken_back: labels (and judgments) removed because the file marks them undone
            (the sheet a session file put back leaves:
            :mod:`activetest.session.put_back_rows`); their ``undo`` rows are in
            :attr:`changes`.
        answers_undone: annotators' answers the file marks undone, kept so (marked
            undone, or added undone).
    """

    added: int
    changed: int
    unchanged: int
    changes: list[LabelChange]
    conflicts: list[LabelConflict] = field(default_factory=list)
    votes_kept: int = 0
    unnamed: int = 0
    judged: int = 0
    judged_changed: int = 0
    position_note: str | None = None
    taken_back: int = 0
    answers_undone: int = 0

    @property
    def left_out(self) -> list[LabelConflict]:
        """Conflicts no rule settled: those items were not labelled by this import."""
        return [c for c in self.conflicts if c.settled is None]


@dataclass(frozen=True)
class Waiting:
    """Labels that the estimate cannot use yet (LURE uses the first K draws, in order).

    Attributes:
        item_id, step: the first drawn item without a label.
        waiting: ids of the LATER draws that have labels; they count once it is labelled.
    """

    item_id: str
    step: int
    waiting: tuple[str, ...]

    def describe(self) -> str:
        """One sentence for people."""
        if not self.waiting:
            return (f"item {self.item_id!r} (draw {self.step}) is the next to label: the "
                    f"estimate uses the labels of the draws before it")
        shown = ", ".join(repr(i) for i in self.waiting[:5])
        more = f" and {len(self.waiting) - 5} more" if len(self.waiting) > 5 else ""
        return (f"item {self.item_id!r} (draw {self.step}) has no label yet, so the "
                f"{len(self.waiting)} label(s) of later draws ({shown}{more}) cannot be "
                f"used until it has one (LURE uses the first draws, in order)")


#: ``status --json``'s keys kept under an old name -> the key that says what they hold
#: (:meth:`SessionStatus.to_dict`): ``alpha`` is the proposal floor, not 1 - level.
LEGACY_STATUS_KEYS = {"alpha": "proposal_floor"}


@dataclass(frozen=True)
class SessionStatus:
    """Where a session stands.

    Attributes:
        path: the session file.
        n_items: pool size N.
        n_selected: draws so far.
        n_labelled: labelled items (all drawn).
        n_pending: drawn items still waiting for a label.
        n_usable: labels usable by the estimate (the labelled prefix of the draws).
        metric, acquisition, surrogate, target, seed: the configuration.
        alpha: the proposal floor (the stored key's name, kept in ``to_dict`` for
            ``status --json`` readers; also :attr:`proposal_floor`). Not 1 - the
            confidence level.
        last_estimates: the most recent recorded estimate per (metric, method).
        created: when the session was created.
        estimate_stale: labels were added, changed or undone after the last
            recorded estimate (run ``estimate`` again).
        waiting: the first unlabelled draw and the labels that wait for it, or None.
        cv_same_as_lure: metrics whose control-variate LURE equals LURE up to the
            proposal's floor (log loss under CE or PE acquisition, whose score IS the control).
        compared: graded sessions: compared target -> drawn answers of it still to judge.
        label_scoring: model role -> how its stored scores were read from the label
            words (first token or whole word, each word's token count); a role whose
            scores do not record it (stored before it was kept, a table) is absent:
            unknown.
        surrogate_column: a session made with ``--surrogate column:NAME --history``
            (``surrogate`` stored as ``history``, the design's rule): ``NAME``, the pool
            column that draws beside the history's features (None: no such column); the
            text and :meth:`to_dict` then name the surrogate as ``status`` does
            (:attr:`surrogate_name`).
        pool_file: the pool's file(s) by name and the SHA-256 the session stores of them
            (:func:`activetest.session.source_names.shown_source`: never a local path; a
            session made before by its stored path's last component), said beside N
            (:attr:`pool_text`; QA: "pool N items" named no file); None: items given in
            Python. ``to_dict`` gives ``{"source", "sha256", "unzipped", "shards",
            "hub"}`` (``unzipped``: the digest is of a ``.gz`` file's unzipped text, a
            classification session's; ``shards``: of a hub snapshot folder's shard files;
            ``hub``: read from the hub by name, no digest) or null.
        absent_paths: the specs of :attr:`target`, :attr:`surrogate` and the compared
            targets whose recorded local path names nothing on this machine (a session
            made before specs were stored by name, opened on another machine:
            :func:`activetest.session.spec_files.absent_recorded_path`); the text says so
            beside each (:meth:`spec_text`) rather than print it as a file in use.
    """

    path: str
    n_items: int
    n_selected: int
    n_labelled: int
    n_pending: int
    n_usable: int
    metric: str
    acquisition: str
    surrogate: str
    target: str
    seed: int
    alpha: float
    last_estimates: list[EstimateRow]
    created: str
    estimate_stale: bool = False
    waiting: Waiting | None = None
    cv_same_as_lure: tuple[str, ...] = ()
    compared: dict[str, int] = field(default_factory=dict)
    label_scoring: dict[str, LabelScoring] = field(default_factory=dict)
    surrogate_column: str | None = None
    pool_file: SourceName | None = None
    absent_paths: tuple[str, ...] = ()

    def spec_text(self, spec: str) -> str:
        """``spec`` as ``status`` prints it: as stored, followed by ``(the path recorded at
        init; nothing is there on this machine)`` where its recorded local path is absent
        (:attr:`absent_paths`; QA: an old session's ``target table:/tmp/oldout/target.csv``
        read as a file in use where no such file was there)."""
        from activetest.session.spec_files import absent_note

        return absent_note(spec, self.absent_paths)

    @property
    def pool_text(self) -> str:
        """``pool N items of pool.csv (sha256 2077bd67c0a6…)``, as ``status`` and the
        report's header name the pool (:func:`activetest.session.source_names.of_file`)."""
        return f"pool {self.n_items} items{of_file(self.pool_file)}"

    @property
    def proposal_floor(self) -> float:
        """The proposal floor (:attr:`alpha`)."""
        return self.alpha

    @property
    def surrogate_name(self) -> str:
        """The surrogate as ``status`` names it: :attr:`surrogate`, except in a session
        whose pool column draws beside the history's features (:attr:`surrogate_column`):
        ``column:NAME beside the history's features`` (QA: ``print(session.status())``
        said "surrogate history", as if the column took no part in the draws)."""
        if self.surrogate_column is None:
            return self.surrogate
        from activetest.session.history_neighbours import column_label

        return column_label(self.surrogate_column)

    def __str__(self) -> str:
        """A few lines, as ``activetest status`` begins (``print(session.status())``; QA:
        it printed the dataclass, an adaptive estimate as ``method='lure'`` and a floor
        the adaptive designs do not use). ``repr`` keeps every field."""
        acq = ACQUISITIONS.get(self.acquisition)
        adaptive = acq is not None and acq.adaptive
        floor = "" if adaptive or acq is None else f", proposal floor {self.alpha:g}"
        lines = [f"session {self.path}: target {self.spec_text(self.target)}, surrogate "
                 f"{self.spec_text(self.surrogate_name)}, metric {self.metric}, acquisition "
                 f"{self.acquisition}{floor}, seed {self.seed}",
                 f"{self.pool_text}: {self.n_selected} selected, {self.n_labelled} "
                 f"labelled, {self.n_pending} pending; {self.n_usable} label(s) usable by "
                 f"the estimate"]
        names = {"lure": "adaptive LURE" if adaptive else "LURE",
                 "cv_lure": "control-variate LURE", "mean": "uniform-equivalent"}
        for e in self.last_estimates:
            if e.method in names:
                lines.append(f"last estimate ({e.n_labels} labels): {e.metric} "
                             f"{names[e.method]} {e.estimate:.4f}")
        if self.last_estimates and self.estimate_stale:
            lines.append("the last estimate is stale: labels changed since (estimate again)")
        if not self.last_estimates:
            lines.append("no estimate yet")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable data: ``proposal_floor``, and just after it ``alpha``,
        the same number under the name older ``status --json`` readers know (the key the
        session file stores it under); ``legacy_keys`` says so: ``{"alpha":
        "proposal_floor"}`` (:data:`LEGACY_STATUS_KEYS`).

        Why ``alpha`` is kept: it was the floor's only name in ``status --json`` and is
        still the stored key; dropping it would break readers (a missing key). Why it is
        not enough alone: beside each estimate's ``level`` it reads as a significance
        level, 1 - level (QA); it is not one.

        ``surrogate`` is :attr:`surrogate_name` (what draws, as ``status`` says), with
        ``surrogate_column`` beside it only where a pool column draws beside the
        history's features."""
        d: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if key == "alpha":  # the clear name first, the legacy one beside it
                d["proposal_floor"] = self.alpha
            d[key] = value
        d["legacy_keys"] = dict(LEGACY_STATUS_KEYS)
        # what draws, as the text names it (the column beside the history's features)
        d["surrogate"] = self.surrogate_name
        if self.surrogate_column is None:
            del d["surrogate_column"]
        adaptive = self.acquisition in ACQUISITIONS and ACQUISITIONS[self.acquisition].adaptive
        for e in d["last_estimates"]:  # name what each number is (QA: low/high unnamed)
            if e.get("low") is not None and e.get("level") is not None:
                from activetest.session.interval_names import BOOTSTRAP, interval_name

                e["interval"] = interval_name(BOOTSTRAP, float(e["level"]))
                if isinstance(e.get("details"), dict):  # fixed_*, cs_*, exact_*: named
                    _name_intervals({"anytime": e["details"].get("anytime")},
                                    float(e["level"]))
                    if e["details"].get("labels_needed") is not None:  # the bootstrap's
                        e["details"]["labels_needed_interval"] = e["interval"]
                        e["details"]["labels_needed_method"] = PROJECTION_BOOTSTRAP
            if e.get("method") == "lure":
                e["estimator"] = "adaptive LURE" if adaptive else "LURE"
            elif str(e.get("method")).startswith("lure:"):  # a compared target's
                e["estimator"] = "LURE"
            elif str(e.get("method")).startswith("difference:"):
                e["estimator"] = "paired LURE difference"
            elif e.get("method") == "cv_lure":  # (QA: these two were left unnamed)
                e["estimator"] = "control-variate LURE"
            elif e.get("method") == "mean":
                e["estimator"] = "plain mean"
        return d
