"""Agreement between annotators (the labelling page's and imported files'), and the
session's progress as the page shows it (split from :mod:`activetest.session.annotators`,
which re-exports every name): Cohen's kappa and Krippendorff's alpha with bootstrap
intervals (:mod:`activetest.stats.agreement`), and the estimate with its fixed-budget and
anytime intervals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.session.annotator_records import (
    ANNOTATION_SOURCE,
    VOTE_KINDS,
    AgreementReport,
    AgreementStat,
    Annotation,
    Disagreement,
    has_annotations,
    read_annotations,
)
from activetest.session.store import SessionError

__all__ = ["MetricProgress", "Progress", "WaitingNote", "agreement", "agreement_json",
           "agreement_lines", "describe_agreement", "progress"]

_SOURCE = ANNOTATION_SOURCE


def agreement(session: Any, *, n_boot: int = 1000, level: float = 0.95,
              seed: int | None = None) -> AgreementReport:
    """Agreement between annotators on the items two or more answered.

    Annotators are the page's and those of imported files (their labels are kept,
    :func:`activetest.session.annotators.keep_votes`). Units are (item, answer) pairs
    with answers from two or more annotators (each annotator's latest answer;
    adjudications and ground-truth answers settle, and are not votes). Cohen's kappa when
    exactly two annotators share units; Krippendorff's alpha (nominal) always; for a
    graded task also alpha on the interval scale of the levels' scores. Intervals:
    the percentile bootstrap over units, seeded by ``seed`` (default the session's),
    ``n_boot`` resamples (0: none).
    """
    from activetest.stats.agreement import (
        bootstrap_agreement,
        cohen_kappa,
        krippendorff_alpha,
    )

    store = session.store
    if not has_annotations(store):
        return AgreementReport((), 0, note="no answers from the labelling page or imported "
                                           "files")
    ids = [it.id for it in session.items()]
    rows = read_annotations(store, ids, include_undone=False)
    names = tuple(sorted({a.annotator for a in rows if a.kind in VOTE_KINDS}))
    kinds = {a.kind for a in rows if a.kind in VOTE_KINDS}
    sources = " and ".join(w for k, w in (("answer", "on the labelling page"),
                                          ("import", "in imported files")) if k in kinds)
    sources = sources or "on the labelling page"
    steps = {a.index: a.step for a in store.acquisitions()}
    latest: dict[tuple[int, str], dict[str, Annotation]] = {}
    adjudicated: dict[tuple[int, str], Annotation] = {}
    for a in rows:
        if a.kind == "adjudication":
            adjudicated[(a.index, a.role)] = a
        elif a.kind in VOTE_KINDS:  # a ground-truth answer settles; it is not a vote
            latest.setdefault((a.index, a.role), {})[a.annotator] = a
    units = sorted((k for k, v in latest.items() if len(v) >= 2),
                   key=lambda k: (steps.get(k[0], 0), k[1]))
    classes = session.task.class_names
    current = {i: lab for i, lab in store.labels(check=False).items()}
    disagreements = []
    for idx, role in units:
        votes = latest[(idx, role)]
        if len({a.label for a in votes.values()}) < 2:
            continue
        held = (current.get(idx) if role == "target" else store.judgments(role).get(idx))
        adj = adjudicated.get((idx, role))
        page = f"{_SOURCE} ("
        how = (f"adjudicated by {adj.annotator}" if adj is not None else
               "unsettled" if held is None else
               str(held.source).removeprefix(page).removesuffix(")")
               if str(held.source).startswith(page) else str(held.source))
        disagreements.append(Disagreement(
            ids[idx], steps.get(idx, 0), role,
            tuple((a.annotator, classes[a.label], a.at) for a in votes.values()),
            None if held is None else classes[held.label], how))
    if not units:
        return AgreementReport(names, 0, (), tuple(disagreements),
                               note="no item has answers from two annotators yet",
                               sources=sources)
    rater = {n: i for i, n in enumerate(sorted({n for k in units for n in latest[k]}))}
    data = np.full((len(rater), len(units)), np.nan)
    for j, k in enumerate(units):
        for n, a in latest[k].items():
            data[rater[n], j] = a.label
    seed = int(session.session_config.seed) if seed is None else int(seed)
    stats = []
    notes = []

    items = np.array([k[0] for k in units])  # two answers of one item are one cluster
    n_items = len(set(items.tolist()))

    def stat(name: str, fn: Any, x: np.ndarray) -> None:
        if n_boot:
            r = bootstrap_agreement(x, fn, n_boot=n_boot, level=level, seed=seed,
                                    clusters=items)
            stats.append(AgreementStat(name, r.estimate, r.low, r.high, level, r.n_units,
                                       n_boot, seed, n_items))
        else:
            stats.append(AgreementStat(name, float(fn(x)), float("nan"), float("nan"), level,
                                       x.shape[1], 0, seed, n_items))

    if len(rater) == 2:
        stat("Cohen's kappa", lambda d: cohen_kappa(d[0], d[1]), data)
    else:
        notes.append(f"Cohen's kappa needs exactly two annotators ({len(rater)} share items)")
    stat("Krippendorff's alpha (nominal)", krippendorff_alpha, data)
    if session.graded:
        scores = np.asarray(session.task.judgment.scores, dtype=np.float64)
        scored = np.where(np.isnan(data), np.nan, scores[np.nan_to_num(data).astype(int)])
        stat("Krippendorff's alpha (interval, level scores)",
             lambda d: krippendorff_alpha(d, "interval"), scored)
    return AgreementReport(names, len(units), tuple(stats), tuple(disagreements),
                           note="; ".join(notes), sources=sources)


@dataclass(frozen=True)
class MetricProgress:
    """One metric's estimate as the page's progress line shows it.

    Attributes:
        metric: ``log_loss`` or ``error_rate``.
        estimator: ``LURE`` or ``adaptive LURE``.
        estimate: its value.
        fixed_name, fixed_low, fixed_high: the fixed-budget interval (its name from
            :mod:`activetest.session.interval_names`).
        anytime_name, cs_low, cs_high: the anytime confidence sequence (None where it
            claims nothing: before 30 labels, unless the exact anytime CS stands in, as
            ``estimate`` shows it).
        target_width: the width asked for (None: none).
        may_stop: the anytime interval is narrower than ``target_width``.
        exact_name, exact_low, exact_high: the exact (betting) confidence sequence where
            the loss is bounded (None otherwise), valid at any number of labels.
        basis_note: why the exact anytime CS stands in for both intervals, or why a point
            fixed-budget interval claims nothing (every labelled term the same); None
            otherwise.
        basis: ``"exact"`` where the exact anytime CS stands in for the fixed-budget
            interval and the anytime CS (few errors labelled): ``fixed_low``/``high``
            are then the exact anytime CS at this count and ``cs_low``/``high`` its
            intersection over the counts so far, and the page names them so; else the
            estimate's own basis (``"clt"``, ``"sure"``) or None (no such rule).
    """

    metric: str
    estimator: str
    estimate: float
    fixed_name: str
    fixed_low: float | None
    fixed_high: float | None
    anytime_name: str
    cs_low: float | None
    cs_high: float | None
    target_width: float | None
    may_stop: bool
    exact_name: str | None = None
    exact_low: float | None = None
    exact_high: float | None = None
    basis_note: str | None = None
    basis: str | None = None


@dataclass(frozen=True)
class WaitingNote:
    """Labels of later draws that wait for an earlier unlabelled one: the estimate stops
    before it. Its parts are kept apart so that the page isolates the item's id (a
    ``<bdi>``, as its every status line does; QA: the id sat in the note's plain text,
    where a right-to-left id takes the words after it into its direction).

    Attributes:
        n_waiting: labels of later draws that wait.
        item_id, step: the first unlabelled draw (None: not known, "an earlier draw").
        n_labels: the draws the estimate uses (the labelled prefix).
    """

    n_waiting: int
    item_id: str | None
    step: int | None
    n_labels: int

    def text(self) -> str:
        """The note as plain text (the id quoted), as ``estimate`` says it."""
        which = ("an earlier draw" if self.item_id is None else
                 f"item {self.item_id!r} (draw {self.step})")
        return (f"{self.n_waiting} label(s) of later draws wait for {which} to be "
                f"labelled; the estimate uses the first {self.n_labels} draws")


@dataclass(frozen=True)
class Progress:
    """Where the session stands, for the page: labels, draws, estimates.

    Attributes:
        n_labels: labels the estimate uses (the labelled prefix of the draws).
        n_selected: draws so far; budget: the most draws asked for (None: the pool).
        n_pool: the pool's size.
        metrics: per metric, the estimate with its fixed-budget and anytime intervals.
        note: why there is no estimate yet, or "".
        notes: what the intervals shown rest on, as `estimate` says it: the widening
            for what items drawn far below the uniform rate could hide, a CS that no
            longer holds its estimate (QA: the page said none of it).
        waiting: labels waiting for an earlier unlabelled draw (the estimate stops
            before them), the note before ``notes``; None: none wait.
    """

    n_labels: int
    n_selected: int
    budget: int | None
    n_pool: int
    metrics: tuple[MetricProgress, ...] = ()
    note: str = ""
    notes: tuple[str, ...] = ()
    waiting: WaitingNote | None = None


def progress(session: Any, *, target_width: float | None = None,
             budget: int | None = None) -> Progress:
    """The session's estimate with its fixed-budget and anytime intervals (not recorded;
    the bootstrap, not shown, with few resamples)."""
    from activetest.session.estimate_notes import (
        fixed_beyond_cs_note,
        no_spread_note,
        outside_cs_note,
    )
    from activetest.session.interval_names import (
        ANYTIME,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        interval_name,
    )
    from activetest.stats.confseq import cs_claimed

    n_sel = session.store.n_acquired()
    try:
        r = session.estimate(record=False, progress=False, target_width=target_width,
                             n_boot=100)
    except SessionError as exc:
        return Progress(0, n_sel, budget, session.n_items, note=str(exc))
    name = "adaptive LURE" if session.session_config.adaptive else "LURE"
    out = []

    def finite(x: float | None) -> float | None:
        return None if x is None or not np.isfinite(x) else float(x)

    for m in r.metrics.values():
        a = m.anytime
        # before 30 labels the anytime CS (asymptotic) claims nothing (the whole range): not shown
        # as an interval, as `estimate` shows it (QA: "[0.000, 4.879]" on the page)
        claims = a is not None and (cs_claimed(r.n_labels, r.n_pool)
                                    or a.basis in ("exact", "sure"))
        exact = a is not None and a.exact_low is not None
        out.append(MetricProgress(
            m.metric, name, float(m.active.estimate), interval_name(FIXED_BUDGET, r.level),
            finite(a.fixed_low) if a else None, finite(a.fixed_high) if a else None,
            interval_name(ANYTIME, r.level), finite(a.cs_low) if claims else None,
            finite(a.cs_high) if claims else None, target_width,
            bool(a is not None and a.may_stop),
            interval_name(EXACT_ANYTIME, r.level) if exact else None,
            finite(a.exact_low) if exact else None, finite(a.exact_high) if exact else None,
            a.basis_note if a is not None and a.basis == "exact" else
            # a point from terms that are all the same claims nothing: said, as
            # `estimate` says it (QA)
            no_spread_note(m, r.level, r.n_labels, r.n_pool),
            a.basis if a is not None else None))
    notes = []
    waiting = None
    if r.n_waiting:  # the estimate stops at the first unlabelled draw: the page says so
        first = next(iter(session.pending()), None)  # which one (held, set aside, open)
        waiting = WaitingNote(int(r.n_waiting), None if first is None else first.item_id,
                              None if first is None else int(first.step), int(r.n_labels))
    for b in r.blind_spots:  # the headline's widening (the page shows no CV estimate)
        line = b.describe(r.level) if b.estimator == "estimate" else None
        if line:
            notes.append(line)
    for m in r.metrics.values():
        line = outside_cs_note(m, r.level) or fixed_beyond_cs_note(m, r.level)
        if line:
            notes.append(line)
    return Progress(r.n_labels, n_sel, budget, session.n_items, tuple(out), notes=tuple(notes),
                    waiting=waiting)


def describe_agreement(report: AgreementReport, limit: int = 20) -> list[str]:
    """Plain lines for the terminal and the report: who, how many shared items, each
    statistic with its bootstrap interval, the disagreements (at most ``limit``).

    None while fewer than two annotators were ever seen: one person's labels (an import
    from a single annotator, one person on the page) have nothing to agree with, and a
    block saying so was noise under every `status` (QA). Not even one line: the import
    already says it kept the labels, and the block appears with the second annotator's
    first label (their "0 answer(s) given by two or more" then says something)."""
    if len(report.annotators) < 2:
        return []
    out = [f"annotators {report.sources}: {', '.join(report.annotators)}; "
           f"{report.n_overlap} answer(s) given by two or more of them"]

    def num(x: float) -> str:
        return "undefined" if x != x else f"{x:.3f}"

    for st in report.stats:
        what = (f"{st.n_units} items" if st.n_items in (None, st.n_units) else
                f"{st.n_items} items ({st.n_units} answers)")
        one = (st.n_items if st.n_items is not None else st.n_units) == 1
        boot = ("" if not st.n_boot else
                # (QA: "bootstrap 95% interval [0.000, 0.000]" from one item)
                ", no bootstrap interval from one item (every resample is that item)"
                if one else
                f", bootstrap {100 * st.level:g}% interval [{num(st.low)}, {num(st.high)}] "
                f"({st.n_boot} resamples of the {what}, seed {st.seed})")
        out.append(f"agreement: {st.name} {num(st.estimate)}{boot}")
    if report.note:
        out.append(f"agreement: {report.note}")
    if report.disagreements:
        out.append(f"{len(report.disagreements)} disagreement(s):")
        for d in report.disagreements[:limit]:
            whose = "" if d.role == "target" else f" (answer of {d.role.removeprefix('compare:')})"
            votes = ", ".join(f"{who} {label!r}" for who, label, _ in d.votes)
            now_ = "unlabelled" if d.settled is None else repr(d.settled)
            out.append(f"  item {d.item_id}{whose} (draw {d.step}): {votes}; now {now_} "
                       f"({d.how})")
        if len(report.disagreements) > limit:
            out.append(f"  ... and {len(report.disagreements) - limit} more")
    return out


def agreement_lines(session: Any) -> list[str]:
    """:func:`describe_agreement` of :func:`agreement` (no line when neither the page nor
    an import that names annotators was used): what ``status``, ``estimate`` and
    ``report`` print."""
    return describe_agreement(agreement(session)) if has_annotations(session.store) else []


def agreement_json(session: Any) -> dict[str, Any]:
    """``{"agreement": ...}`` for the JSON outputs (``{}`` when no answer was kept)."""
    return {"agreement": agreement(session).to_dict()} if has_annotations(session.store) else {}
