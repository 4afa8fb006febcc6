"""The lines an estimate adds in words: a CS that no longer holds its estimate, an
estimate outside its range, a point interval, the exact anytime CS standing in, blind
spots, sure bounds, partial credit, what a compare session draws for (split out of
:mod:`activetest.session.estimate`, which uses and re-exports them)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from activetest.session.records import (
    AnytimeInterval,
    BlindSpotNote,
    MetricEstimate,
)

if TYPE_CHECKING:
    from activetest.session.blindspot import SessionBlindSpot
from activetest.session.estimate_base import (
    POINT_WIDTH,
    LabelledDraws,
    SureBounds,
)

__all__ = [
    "COMPARE_HINT",
    "COMPARE_NOTE",
    "blind_spot_notes",
    "difference_outside_line",
    "exact_note",
    "fixed_beyond_cs_note",
    "fixed_beyond_line",
    "metric_sure_line",
    "no_spread_line",
    "no_spread_note",
    "outside_cs_note",
    "outside_note",
    "outside_reason",
    "partial_credit_note",
    "point_note",
    "sure_line",
    "sure_risk_line",
]


def _warnings(draws: LabelledDraws) -> list[str]:
    notes = []
    if draws.k < 100:
        notes.append(f"only {draws.k} label{'' if draws.k == 1 else 's'}: the bootstrap "
                     f"interval is unreliable below ~100 labels")
    if draws.n_waiting and draws.first_unlabelled is not None:
        item_id, step = draws.first_unlabelled
        notes.append(f"{draws.n_waiting} label(s) of later draws wait for item {item_id!r} "
                     f"(draw {step}) to be labelled; LURE uses the first {draws.k} draws")
    return notes


def _cs_misses(cs_low: float, cs_high: float, estimate: float,
               value_range: tuple[float, float] | None, basis: str | None) -> bool:
    """Whether a (finite) CS no longer holds the estimate it is centred on, the estimate
    clipped to the quantity's range as the CS is. The exact anytime CS, where it stands in
    (``basis`` "exact"), is valid without asymptotics: it is not judged so."""
    centre = estimate
    if value_range is not None:
        centre = min(max(centre, value_range[0]), value_range[1])
    tol = 1e-9 * max(1.0, abs(centre))
    return (basis != "exact" and math.isfinite(cs_low) and math.isfinite(cs_high)
            and math.isfinite(centre) and not cs_low - tol <= centre <= cs_high + tol)


def difference_outside_line(what: str, estimate: float, low: float, high: float,
                            rest: float, uniform_draws: bool = False) -> str:
    """The note on a paired difference whose estimate lies outside the bounds that hold
    surely ``[low, high]`` (``rest``: the most the unlabelled items could add, summed; for
    two error rates the unlabelled items where the two predictions differ): why an
    unbiased estimate can (the weights; under ``uniform_draws`` what the bounds know that
    the labelled mean does not), and that it is kept, not moved. ``estimate`` prints it
    and ``status`` repeats it under the recorded difference."""
    # (QA: "with few labels" read oddly at 37 of 40, as the single risk's note did: what
    # moves it is the weights, or under uniform draws what the bounds know)
    why = ("each labelled difference weighs by how unlikely its draw was, so a few heavy "
           "draws carry it"
           if not uniform_draws else
           f"every draw was made at the uniform rate, so it is the plain mean of the "
           f"labelled differences; the bounds know what that mean does not: each "
           f"unlabelled item adds at most its own bound on the difference (for two "
           f"error rates 0 where the two predictions agree), at most {rest:.4g} in "
           f"all over the unlabelled items")
    return (f"{what}: the estimate {estimate:.4g} lies outside the bounds that hold "
            f"surely [{low:.4g}, {high:.4g}]: an unbiased estimate can ({why}); it is "
            f"not moved, which would bias it (marked so beside the number); "
            f"the difference is within those bounds, and the intervals shown are cut to "
            f"them")


def _difference_outside(a: AnytimeInterval, estimate: float, sure: SureBounds | None,
                        value_range: tuple[float, float] | None,
                        target_width: float | None, level: float, what: str,
                        notes: list[str], uniform_draws: bool = False) -> AnytimeInterval:
    """A difference's intervals after its sure bounds cut them: whether its CS still holds
    the estimate, re-judged on the intervals shown, and a note where not. An estimate
    outside the sure bounds themselves (an unbiased estimate can: its weights) is no
    sign of a CS that missed: the cut intervals stay valid, "may stop" reads their width
    (QA: -0.7567 beside [-0.7374, -0.1285] with nothing said). Why it can: under
    importance-weighted draws each labelled difference weighs by how unlikely its draw
    was; under ``uniform_draws`` none does (the estimate is the labelled differences'
    mean), and the bounds know what the mean does not: each unlabelled item adds at
    most its own bound (QA: uniform draws were explained by the weights too). The
    estimate is kept (unbiased) and recorded as outside (``estimate_outside_sure``, with
    the bounds), which every output marks beside the number (QA: 0.011 was printed beside
    sure bounds from 0.0167 with nothing said there)."""
    tol = 1e-9 * max(1.0, abs(estimate))
    if sure is not None and not sure.low - tol <= estimate <= sure.high + tol:
        notes.append(difference_outside_line(what, estimate, sure.low, sure.high, sure.rest,
                                             uniform_draws))
        # recorded with it (JSON, status, the report): outside, and the bounds it is outside
        return replace(a, estimate_outside_cs=False, may_stop=None if target_width is None
                       else bool(a.cs_high - a.cs_low <= target_width),
                       estimate_outside_sure=True, sure_low=sure.low, sure_high=sure.high)
    outside = _cs_misses(a.cs_low, a.cs_high, estimate, value_range, a.basis)
    if outside:
        notes.append(_outside_cs_line(what, estimate, a, level))
    return replace(a, estimate_outside_cs=outside,
                   may_stop=None if target_width is None else bool(
                       (a.may_stop or a.basis == "sure") and not outside
                       and a.cs_high - a.cs_low <= target_width))


def outside_cs_note(m: MetricEstimate, level: float) -> str | None:
    """The line saying a metric's anytime CS no longer holds its estimate
    (:attr:`AnytimeInterval.estimate_outside_cs`); None where it does."""
    a = m.anytime
    if a is None or not a.estimate_outside_cs:
        return None
    return _outside_cs_line(m.metric.replace("_", " "), m.active.estimate, a, level)


def _outside_cs_line(name: str, estimate: float, a: AnytimeInterval, level: float) -> str:
    """:func:`outside_cs_note`'s line for the quantity ``name`` (a metric, a difference)."""
    return (f"{name}: the anytime {level:.0%} confidence sequence [{a.cs_low:.4f}, "
            f"{a.cs_high:.4f}] no longer holds the estimate {estimate:.4f}: it is "
            f"the intersection of the sequence at every label count so far, and the latest "
            f"labels disagree with what the earlier ones implied. Check the latest labels "
            f"(mistakes, a changed instruction); otherwise the asymptotic sequence has "
            f"missed. It is no basis to stop (\"you may stop\" is withheld); the "
            f"fixed-budget interval [{a.fixed_low:.4f}, {a.fixed_high:.4f}] is not "
            f"intersected")


def fixed_beyond_cs_note(m: MetricEstimate, level: float) -> str | None:
    """The line for a metric whose fixed-budget interval reaches beyond its anytime CS
    (None where it does not, or where either is not the CLT one).

    Both are valid, for different uses: the fixed-budget interval for a label count
    fixed in advance, the CS whenever one stops. The CS is the intersection of the
    sequence at every label count so far, so it can cut a side that the latest labels'
    interval still holds (QA: fixed [0.7482, 1.0000] beside CS [0.6928, 0.9867], with
    nothing said, read as a contradiction).
    """
    from activetest.stats.confseq import MIN_LABELS

    a = m.anytime
    if a is None or a.basis not in (None, "clt") or a.estimate_outside_cs or \
            m.active.n_labels < MIN_LABELS:
        return None
    return fixed_beyond_line(m.metric.replace("_", " "), a, level)


def fixed_beyond_line(what: str, a: AnytimeInterval, level: float) -> str | None:
    """:func:`fixed_beyond_cs_note`'s line for the quantity ``what`` (a metric, a
    difference); None where the fixed-budget interval lies within the CS."""
    from activetest.session.interval_names import ANYTIME, FIXED_BUDGET, interval_name

    vals = (a.fixed_low, a.fixed_high, a.cs_low, a.cs_high)
    if not all(math.isfinite(v) for v in vals):
        return None
    # compared as printed (4 decimals): a side beyond the CS by less than the printed
    # digits show read "[0.0000, 0.6659] reaches below [0.0000, 0.7941]" (QA, a compare
    # session at 1e6 items: the CS's lower end 4e-06, the fixed-budget one 0)
    fl, fh, cl, ch = (float(f"{v:.4f}") for v in vals)
    below, above = fl < cl, fh > ch
    if not (below or above):
        return None
    side = "both sides" if below and above else ("below" if below else "above")
    where = "beyond" if side == "both sides" else side
    return (f"{what}: the {interval_name(FIXED_BUDGET, level)} [{a.fixed_low:.4f}, "
            f"{a.fixed_high:.4f}] reaches {where} the {interval_name(ANYTIME, level)} "
            f"[{a.cs_low:.4f}, {a.cs_high:.4f}]: both hold, the fixed-budget one for a "
            f"label count fixed in advance, the CS (the intersection over every label "
            f"count so far) whenever you stop; having stopped on what the labels showed, "
            f"read the CS")


#: Why an unbiased estimate of importance-weighted draws can lie outside what the risk
#: can be (:func:`outside_reason`).
WEIGHTS_REASON = "each label weighs by how unlikely its draw was"
HEAVY_REASON = f"{WEIGHTS_REASON}, so a few heavy draws carry it"


def outside_reason(m: MetricEstimate, *, cv: bool, uniform_draws: bool) -> str:
    """Why ``m``'s unbiased estimate (``cv``: its control-variate LURE) can lie outside
    the values the risk can take, or outside its sure bounds, for the notes that say
    it does (:func:`outside_note`, :func:`sure_risk_line`).

    Importance-weighted draws: each label weighs by how unlikely its draw was (and
    control-variate LURE adds the control's terms). Uniform draws (``uniform_draws``:
    every draw at the uniform rate) weigh every label alike: LURE is the plain mean
    and cannot leave the range, so it is the control variate's doing: it adds the
    control's mean prediction over the pool minus its mean on the labelled items,
    both named (QA: the uniform case was explained by "how unlikely its draw was",
    where every item is equally likely)."""
    if not cv:
        return WEIGHTS_REASON if not uniform_draws else (
            "every draw was made at the uniform rate, so it is the plain mean of the "
            "labelled losses")
    if m.cv is None or m.control_mean is None or not uniform_draws:
        return (f"{WEIGHTS_REASON}, and the control variate adds the control's mean "
                f"prediction over the pool minus its weighted mean on the labelled items")
    added = float(m.cv.estimate) - float(m.uniform.estimate)  # LURE is the plain mean here
    return (f"every draw was made at the uniform rate, so no label weighs more than "
            f"another: it is the control variate's doing, which adds the control's mean "
            f"prediction over the pool ({m.control_mean:.4g}) minus its mean on the "
            f"{m.cv.n_labels} labelled item(s) ({m.control_mean - added:.4g}), "
            f"{added:+.4g}, to the labelled losses' mean ({m.uniform.estimate:.4g})")


def outside_note(m: MetricEstimate, bounds: tuple[float, float], *, cv: bool = False,
                 level: float = 0.95, uniform_draws: bool = False) -> str | None:
    """The line saying a metric's unbiased estimate (``cv``: its control-variate LURE)
    lies outside the values the risk can take (possible with few labels: each label is
    weighted by how unlikely its draw was, and a control adds its own terms; under
    ``uniform_draws``, the control alone: :func:`outside_reason`); None where it does
    not (or there is no such estimate).

    The line says which of the intervals shown beside that estimate stay within the
    range and which do not: every one is clipped to it (which cannot lower its
    coverage), but the fixed-budget and bootstrap intervals still hold the estimate
    itself, so they reach beyond the range to it; the anytime CS is clipped outright,
    and the exact anytime CS, where it stands in, lies within the range (QA: "Read the
    fixed-budget interval and the CS, which stay within the range" beside a
    control-variate LURE fixed-budget interval of [-0.0337, 0.892] for an error
    rate). Control-variate LURE is shown with its fixed-budget and bootstrap intervals
    only; the headline with its anytime CS too (from 30 labels, or where the exact anytime CS
    stands in)."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        FIXED_BUDGET,
        interval_name,
    )
    from activetest.stats.confseq import MIN_LABELS

    lo, hi = bounds
    r = m.cv if cv else m.active
    if r is None:
        return None
    e = r.estimate
    if lo <= e <= hi or not math.isfinite(e):
        return None
    what = "control-variate LURE" if cv else "the estimate"
    a = m.cv_anytime if cv else m.anytime
    shown: list[tuple[str, float, float]] = []
    if a is not None:
        shown.append((interval_name(FIXED_BUDGET, level), a.fixed_low, a.fixed_high))
        if not cv and (r.n_labels >= MIN_LABELS or a.basis == "exact"):
            shown.append((interval_name(ANYTIME, level), a.cs_low, a.cs_high))
    shown.append((interval_name(BOOTSTRAP, level), r.low, r.high))
    tol = 1e-9 * max(1.0, abs(lo), abs(hi) if math.isfinite(hi) else 1.0)
    inside = [(n, x, y) for n, x, y in shown if lo - tol <= x and y <= hi + tol]
    beyond = [(n, x, y) for n, x, y in shown if (n, x, y) not in inside]

    def names(ivs: list[tuple[str, float, float]]) -> str:
        parts = [f"the {n} [{x:.4g}, {y:.4g}]" for n, x, y in ivs]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]

    side = f"below {lo:g}" if e < lo else f"above {hi:g}"
    line = (f"{m.metric.replace('_', ' ')}: {what} {e:.4g} lies outside the values the "
            f"risk can take ([{lo:g}, {hi:g}]): an unbiased estimate can, with few labels "
            f"({outside_reason(m, cv=cv, uniform_draws=uniform_draws)}); it is not "
            f"clipped, which would bias it")
    if beyond:
        one, said = len(beyond) == 1, names(beyond)
        line += (f". T{said[1:]} {'is' if one else 'are'} clipped to the range but "
                 f"still {'holds' if one else 'hold'} the estimate, so "
                 f"{'it reaches' if one else 'they reach'} {side}, where the risk cannot "
                 f"be")
    if inside:
        one = len(inside) == 1
        line += (f"; {names(inside)} {'stays' if one else 'stay'} within the range"
                 if beyond else f". Read {names(inside)}, which {'stays' if one else 'stay'} "
                 f"within the range")
    return line


def point_note(m: MetricEstimate, level: float) -> str:
    """The line for a metric whose bootstrap interval is a point (every labelled term the
    same, e.g. no error labelled yet). Sessions with the few-errors rule show the exact anytime CS
    as the fixed-budget interval and the CS then, so the line sends the reader there; in a
    session written before the rule (no ``clt_min_errors``) the fixed-budget interval is
    a point as well (its SE is 0) and the CS the whole range, so the line says so and
    gives the exact anytime CS where the loss is bounded."""
    name = m.metric.replace("_", " ")
    a = m.anytime
    head = (f"{name}: the bootstrap interval is a point: every labelled term is the same "
            f"(e.g. no error labelled yet), and the bootstrap cannot see what was not drawn")
    if a is None or a.basis is not None or a.fixed_high - a.fixed_low > POINT_WIDTH:
        return f"{head}; read the fixed-budget interval and the CS"
    if a.exact_low is not None and a.exact_high is not None:
        where = (f"read the exact anytime {100 * level:g}% CS, [{a.exact_low:.4f}, "
                 f"{a.exact_high:.4f}]")
    else:
        where = "the CS is the whole range until the labels differ"
    return (f"{head}; so is the fixed-budget interval, as this session was written before "
            f"the few-errors rule (which puts the exact anytime CS in its place): {where}")


def no_spread_note(m: MetricEstimate, level: float, n_labels: int, n_pool: int
                   ) -> str | None:
    """The line for a metric whose fixed-budget interval is a point before a census
    while its bootstrap is not (every labelled term the same up to rounding, e.g. a
    target equally confident on every item, all labelled right): the CLT has no spread to
    estimate, so the point claims nothing and the CS is the whole range until the terms
    differ (QA: 45 equal log losses showed a point interval and "you may stop now").
    None: not such a metric (the bootstrap's own point is :func:`point_note`'s)."""
    a = m.anytime
    if (a is None or a.basis == "exact" or n_labels < 2 or n_labels >= n_pool
            or m.active.std == 0.0 or a.fixed_high - a.fixed_low > POINT_WIDTH):
        return None
    return no_spread_line(m.metric.replace("_", " "), level, a.exact_low, a.exact_high)


def no_spread_line(what: str, level: float, exact_low: float | None = None,
                   exact_high: float | None = None) -> str:
    """The sentence for a quantity ``what`` (a metric, a compared model's risk) whose
    labelled terms are all the same: its fixed-budget interval is a point that claims
    nothing and its anytime CS the whole range until they differ; where the exact anytime CS is
    known (``exact_low``, ``exact_high``) read it, else label more. What `estimate`
    notes, and `status` beside a recorded estimate's unbounded CS that has no other
    reason recorded."""
    where = ("label more" if exact_low is None or exact_high is None else
             f"read the exact anytime {100 * level:g}% CS, [{exact_low:.4f}, "
             f"{exact_high:.4f}]")
    return (f"{what}: every labelled term is the same so far, so the fixed-budget interval "
            f"is a point that claims nothing (no spread to estimate) and the anytime CS is "
            f"the whole range until they differ: {where}")


def exact_note(m: MetricEstimate, level: float) -> str | None:
    """The line saying which interval a metric's fixed-budget and anytime rows are, where
    the exact anytime CS stands in for them (None: the CLT ones, or no few-errors rule)."""
    a = m.anytime
    if a is None or a.basis != "exact":
        return None
    return _exact_line(m.metric.replace('_', ' '), a, level)


def whole_range_note(basis_note: str | None, level: float) -> str:
    """Why a metric's fixed-budget and anytime intervals are unbounded (the whole range
    the value can take): what `estimate` notes, and `status` beside a recorded estimate's
    intervals (``basis_note``: the few-differences rule's reason, as recorded)."""
    from activetest.session.interval_names import ANYTIME, FIXED_BUDGET, interval_name

    return (f"the {interval_name(FIXED_BUDGET, level)} and the {interval_name(ANYTIME, level)} "
            f"are the whole range the value can take here ({basis_note}; the CLT intervals "
            f"are not trusted before that)")


def _exact_line(what: str, a: AnytimeInterval, level: float) -> str:
    from activetest.session.interval_names import (
        ANYTIME,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        interval_name,
    )

    if not (math.isfinite(a.fixed_low) and math.isfinite(a.fixed_high)):
        return f"{what}: {whole_range_note(a.basis_note, level)}"
    return (f"{what}: the {interval_name(FIXED_BUDGET, level)} and the "
            f"{interval_name(ANYTIME, level)} are the {interval_name(EXACT_ANYTIME, level)} "
            f"here ({a.basis_note}; the CLT intervals are not trusted before that)")


def blind_spot_notes(blind_spots: Mapping[str, SessionBlindSpot], k: int, level: float
                     ) -> list[BlindSpotNote]:
    """The :class:`BlindSpotNote` of every estimate after ``k`` labels (the CV one only
    where it differs from the headline's)."""
    notes = []
    for metric, b in blind_spots.items():
        for name, curve in (("estimate", b.estimate), ("cv", b.cv)):
            if curve is None:
                continue
            spot = curve.at(k)
            if name == "cv" and spot.widen_low == b.estimate.at(k).widen_low:
                continue  # the same widening: one line says it
            notes.append(BlindSpotNote(
                metric, name, spot.n_unexplored, spot.ratio,
                spot.widen_low if b.bounded else None,
                spot.widen_high if b.bounded else None,
                spot.loss_cap if b.bounded else None,
                spot.unexplored_bound if b.bounded else None))
    return notes


def sure_line(spec: str, metric: str, sure: SureBounds) -> str:
    """The line for a difference whose interval is its sure bounds."""
    name = metric.replace("_", " ")
    if sure.rest == 0.0:
        return (f"target - {spec} ({name}): known exactly: every item where the two "
                f"targets could differ is labelled")
    if metric == "error_rate":
        what = f"what {sure.rest:g} unlabelled item(s) where the two predictions differ could add"
    else:  # QA: "what the unlabelled items, by at most 235 in all could add" (a sum over
        # the pool beside intervals of the mean): the amount said on the mean as well
        what = (f"what the unlabelled items could add (at most {sure.rest:.4g} summed over "
                f"them, {(sure.high - sure.low) / 2:.4g} either way on the mean)")
    return (f"target - {spec} ({name}): the intervals shown are the bounds that hold "
            f"surely, from the labelled items and {what}")


def sure_risk_line(what: str, a: AnytimeInterval | None, estimate: float, n_labels: int,
                   n_pool: int, level: float,
                   bootstrap: tuple[float, float] | None = None, whose: str = "",
                   why: str = HEAVY_REASON) -> str | None:
    """The line for an estimate whose intervals its sure bounds cut
    (:attr:`AnytimeInterval.sure_low`; :func:`activetest.session.estimate_base.sure_risk_curve`):
    what the labelled items alone make certain, and that the fixed-budget interval and
    the CS shown are cut to it; also where the estimate itself lies outside (an unbiased
    estimate can), and where the ``bootstrap`` interval reaches beyond (it is the
    resampled labels' spread, not cut). None where the bounds cut nothing, and at a census
    (every item labelled: the intervals are the point, and the census line says so).
    ``whose`` names the estimator whose intervals are cut where they are not the
    headline's (``"control-variate LURE's "``); ``why``: why the estimate can lie
    outside the bounds (:func:`outside_reason`)."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        interval_name,
    )

    if a is None or a.sure_low is None or a.sure_high is None or n_labels >= n_pool:
        # a census: the census line says the estimate is the pool's value (QA: "whatever
        # the 0 unlabelled item(s) turn out to be" beside it)
        return None
    rest = n_pool - n_labels
    line = (f"{what}: with {n_labels} of the pool's {n_pool} items labelled, the pool's "
            f"value lies surely within [{a.sure_low:.4f}, {a.sure_high:.4f}] whatever the {rest} "
            f"unlabelled item(s) turn out to be (the labelled losses plus the most the "
            f"others could add)")
    from activetest.stats.confseq import cs_claimed

    if a.basis == "exact":
        cut = [interval_name(EXACT_ANYTIME, level) + " standing in for both"]
    else:  # the intervals shown: the CS from 30 labels, the exact anytime CS where computed
        # (QA: "the ... anytime 95% confidence sequence are cut to it" beside a CS shown
        # as "(from 30 labels)", and the exact anytime CS cut unsaid)
        cut = [interval_name(FIXED_BUDGET, level)]
        if cs_claimed(n_labels, n_pool):
            cut.append(interval_name(ANYTIME, level))
        if a.exact_low is not None and a.exact_high is not None:
            cut.append(interval_name(EXACT_ANYTIME, level))
    one = len(cut) == 1
    shown = cut[0] if one else ", the ".join(cut[:-1]) + " and the " + cut[-1]
    line += f"; {whose or 'the '}{shown} {'is' if one else 'are'} cut to it, which " \
            f"cannot lower {'its' if one else 'their'} coverage"
    tol = 1e-9 * max(1.0, abs(estimate))
    if bootstrap is not None and (bootstrap[0] < a.sure_low - tol
                                  or bootstrap[1] > a.sure_high + tol):
        line += (f"; the {interval_name(BOOTSTRAP, level)} is not (it is the spread of "
                 f"the labels resampled, blind to what is known)")
    if math.isfinite(estimate) and not a.sure_low - tol <= estimate <= a.sure_high + tol:
        # (QA: "with few labels" read oddly at 37 of 40: what moves it is the weights)
        line += (f". The estimate {estimate:.4f} lies outside these bounds: an unbiased "
                 f"estimate can ({why}); it is not moved, which would bias it")
    return line


def metric_sure_line(m: MetricEstimate, n_labels: int, n_pool: int,
                     level: float, uniform_draws: bool = False) -> str | None:
    """A metric's sure-bounds line (:func:`sure_risk_line`), one per metric: the sure
    bounds are the risk's, whichever estimate's intervals they cut (the headline's;
    control-variate LURE's where it is shown and only its were cut). ``estimate`` shows
    it, and ``status`` shows it as recorded with the estimate (QA: status showed the
    blind-spot note but not this one). None where the bounds cut nothing.
    ``uniform_draws``: every draw at the uniform rate (:func:`outside_reason`)."""
    # (QA: a log loss's line said "the fixed-budget ... interval and the anytime ...
    # sequence are cut to it" beside LURE's, uncut: control-variate LURE's were)
    headline = (m.anytime is not None and m.anytime.sure_low is not None) \
        or m.cv_same_as_lure or m.cv is None
    cv = None if headline else m.cv
    line = sure_risk_line(
        m.metric.replace("_", " "), m.anytime if cv is None else m.cv_anytime,
        float(m.active.estimate if cv is None else cv.estimate), n_labels, n_pool, level,
        (m.active.low, m.active.high) if cv is None else (cv.low, cv.high),
        whose="" if cv is None else "control-variate LURE's ",
        why=(HEAVY_REASON if cv is None and not uniform_draws else
             outside_reason(m, cv=cv is not None, uniform_draws=uniform_draws)))
    ca = m.cv_anytime
    if line is not None and cv is None and m.cv is not None and not m.cv_same_as_lure \
            and ca is not None and ca.estimate_outside_sure:
        # control-variate LURE outside them too: its number is marked "see the note"
        # beside it, as the headline's (QA: the note named the headline's estimate alone)
        too = " too" if m.anytime is not None and m.anytime.estimate_outside_sure else ""
        line += (f". Control-variate LURE's estimate {float(m.cv.estimate):.4f} lies "
                 f"outside them{too}: an unbiased estimate can ("
                 f"{outside_reason(m, cv=True, uniform_draws=uniform_draws)}); it is not "
                 f"moved either")
    return line


def partial_credit_note(task: Mapping[str, Any]) -> str | None:
    """The line a graded session with partial credit shows: its "error rate" is the mean
    of ``1 - score`` over the judgment levels' scores, not the share of answers judged
    other than the best level (QA: 0.567 read as an error rate where that share was
    0.767). None for a task whose scores are all 0 or 1."""
    judgment = task.get("judgment") if isinstance(task, Mapping) else None
    if not isinstance(judgment, Mapping):
        return None
    levels, scores = judgment.get("levels") or (), judgment.get("scores") or ()
    if not scores or all(float(x) in (0.0, 1.0) for x in scores):
        return None
    shown = ", ".join(f"{lv} {float(sc):g}" for lv, sc in zip(levels, scores, strict=False))
    return (f"error_rate here is the mean of 1 - score over the judgments (scores: "
            f"{shown}): a partly right answer counts as part of an error")


#: The line an ``estimate --compare`` of a classification session shows: its draws serve
#: the target's own risk, and a design that serves the difference exists.
COMPARE_HINT = ("the draws of this session serve the target's own risk, not the difference "
                "with {spec}; a session created with --compare {spec} --acquisition compare "
                "draws where the two predictions differ (docs/compare.md, median over the "
                "pairs of the bundled models at 100 labels: for two error rates 0.37x "
                "uniform sampling's squared error, where drawing for one target is 1.25x; "
                "for two log losses 0.75x, where drawing for one target is 1.04x)")


#: The line a session drawn by the ``compare`` acquisition shows: what its labels were for.
COMPARE_NOTE = ("this session draws for the difference with {spec} (the compare "
                "acquisition: labels where the two predictions may differ); the target's "
                "own risk is still estimated without bias, but its intervals are wide: the "
                "items where the two agree were drawn at the floor's rate")
