"""One vocabulary for the intervals a session reports, each named by what it guarantees.

Every place a person reads an interval (the terminal's ``estimate`` and
``status``, ``report.md`` and ``report.html``, the figures, the Every Eval Ever
record) takes its name from here, so one interval never goes by two names:

* **fixed-budget** (:data:`FIXED_BUDGET`): the martingale-CLT interval with the
  finite-population factor built in; valid if the number of labels was fixed in
  advance. The headline.
* **anytime** (:data:`ANYTIME`): the asymptotic confidence sequence; valid however
  and whenever you stop, asymptotically (from 30 labels). "You may stop now" reads
  it. Rare large losses not yet drawn break it (QA: a uniform sample of a log loss
  with 1% confident misses covered 0.58 at 200-400 labels,
  ``benchmarks/coverage_gaps.py``); the exact one, where shown, holds.
* **exact anytime** (:data:`EXACT_ANYTIME`): the betting confidence sequence for
  bounded losses; valid at any number of labels without asymptotics.
* **bootstrap** (:data:`BOOTSTRAP`): the paper's single-run bootstrap; no
  guarantee (no finite-population factor, unreliable below ~100 labels).

Where something else stands in for the fixed-budget interval and the anytime CS (an
interval record's ``basis``), each cell says so with :func:`basis_mark`: "(exact anytime CS)"
(the few-errors rule) or "(sure bounds)" (a paired difference's bounds that hold surely,
:data:`SURE_BOUNDS`). An estimate outside the bounds that hold surely (unbiased, not moved)
is marked beside the number with :func:`outside_sure_mark`; in a table of estimates, with
:data:`OUTSIDE_MARK` at the number and :func:`outside_sure_line` under the table; in a
figure, ringed, named :data:`OUTSIDE_POINT` in the legend.
"""

from __future__ import annotations

import math

__all__ = ["ANYTIME", "BOOTSTRAP", "EXACT_ANYTIME", "FIXED_BUDGET", "INTERVAL_KINDS",
           "OUTSIDE_MARK", "OUTSIDE_POINT", "SURE_BOUNDS", "basis_mark", "blind_spot_sentence",
           "comparison_blind_spot_sentence",
           "few_errors_name", "interval_decimals", "interval_guarantee", "interval_name",
           "interval_text", "outside_sure_line", "outside_sure_mark", "plain_mean_mark",
           "unsigned_zero"]

FIXED_BUDGET = "fixed_budget"
ANYTIME = "anytime"
EXACT_ANYTIME = "exact_anytime"
BOOTSTRAP = "bootstrap"

#: kind -> (name with ``{pct}`` for the level, what it guarantees).
INTERVAL_KINDS: dict[str, tuple[str, str]] = {
    FIXED_BUDGET: ("fixed-budget {pct} interval",
                   "valid if the number of labels was fixed in advance (martingale CLT, "
                   "finite-population factor)"),
    ANYTIME: ("anytime {pct} confidence sequence",
              "valid however and whenever you stop, asymptotically (from 30 labels; rare "
              "large losses not yet drawn can break it, the exact one not)"),
    EXACT_ANYTIME: ("exact anytime {pct} confidence sequence",
                    "valid at any number of labels without asymptotics (bounded losses)"),
    BOOTSTRAP: ("bootstrap {pct} interval",
                "the paper's single-run bootstrap: no guarantee (no finite-population "
                "factor; unreliable below ~100 labels)"),
}


#: What a paired difference's intervals are where its sure bounds stand in for both (its
#: ``basis`` "sure": the labelled differences plus the most the unlabelled items could
#: add, from both targets' predictions on the pool; no level, no asymptotics).
SURE_BOUNDS = "sure bounds (hold at any label count)"


def basis_mark(basis: str | None) -> str:
    """What follows a fixed-budget interval or anytime CS where a person reads it, by
    what its record's ``basis`` says stands in for it: ``" (exact anytime CS)"`` (the
    few-errors rule), ``" (sure bounds)"`` (:data:`SURE_BOUNDS`), else nothing (QA: a
    difference's sure bounds were shown in `status` and the report under the CLT
    intervals' names, only the JSON and a note said what they were; the exact one was
    marked ``"(exact CS)"``, a shorthand of no interval the product names)."""
    return {"exact": " (exact anytime CS)", "sure": " (sure bounds)"}.get(str(basis), "")


def interval_decimals(*intervals: tuple[float | None, float | None], least: int = 4,
                      most: int = 12, point: float = 1e-9) -> int:
    """The decimals to print ``intervals`` (``(low, high)`` pairs) with, and an estimate
    beside them: ``least`` (4, the ordinary case), or the fewest more, up to ``most``, at
    which every interval of nonzero width (two distinct finite ends) prints its two ends
    apart (QA: a fixed-budget interval 3e-5 wide read ``[0.0012, 0.0012]``, a point it is
    not). Pairs with a missing or infinite end, points (at most ``point`` wide, the
    estimate's :data:`~activetest.session.estimate_base.POINT_WIDTH`: a census's interval
    is its value -+ 1e-12) and intervals whose ends print alike even at ``most`` decimals
    ask for nothing more. Two ends that differ only in the sign of a zero
    (``-0.0000`` and ``0.0000``, 4e-5 wide across 0) print alike too: the summary and
    the labelling page print a lone ``-0.0000`` as ``0.0000``, which made such an
    interval ``[0.0000, 0.0000]``."""
    d = least
    for low, high in intervals:
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) \
                or abs(high - low) <= point:
            continue
        need = d
        while need <= most and unsigned_zero(f"{low:.{need}f}") == \
                unsigned_zero(f"{high:.{need}f}"):
            need += 1
        if need <= most:
            d = need
    return d


def unsigned_zero(text: str) -> str:
    """A printed number that rounds to zero without its minus (``"-0.0000"`` ->
    ``"0.0000"``), any other as it is: a lone value of -1e-17 reads 0 (QA: a paired
    difference printed "-0.0000"). An interval's end keeps its minus where the other
    end shows one (:func:`interval_text`)."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def interval_text(low: float, high: float, digits: int = 4) -> str:
    """``[low, high]`` with ``digits`` decimals, as the summary and the labelling page
    print it: an end that rounds to zero reads ``0.0000``, unless the other end prints a
    minus, where it keeps its own (``[-0.0100, -0.0000]``: the interval lies below 0,
    which ``[-0.0100, 0.0000]`` would not say; QA)."""
    lo, hi = f"{low:.{digits}f}", f"{high:.{digits}f}"
    if not lo.startswith("-"):  # the other end (the lower) shows no minus
        hi = unsigned_zero(hi)
    if not hi.startswith("-"):
        lo = unsigned_zero(lo)
    return f"[{lo}, {hi}]"


def outside_sure_mark(low: float, high: float, number: str = "{:.4f}") -> str:
    """What follows an estimate that lies outside the bounds that hold surely
    ``[low, high]`` (:attr:`activetest.session.records.AnytimeInterval.estimate_outside_sure`)
    where a person reads the number: it is the unbiased estimate, not moved into them
    (which would bias it), and a note says why (QA: a paired difference of 0.011 was
    printed beside sure bounds from 0.0167 with nothing said at the number). ``number``
    formats each bound as the intervals beside it are."""
    return (f"outside the bounds that hold surely, [{number.format(low)}, "
            f"{number.format(high)}]: unbiased, not moved; see the note")


#: The mark beside an estimate in a table of estimates (the terminal's ``estimate``, the
#: report's) that lies outside the bounds that hold surely; :func:`outside_sure_line`
#: says it under the table.
OUTSIDE_MARK = "†"


#: A figure's legend entry for the ringed points: estimates outside the bounds that hold
#: surely at their label count, in the words (and with the mark) of the table's
#: :func:`outside_sure_line` (QA: the report's estimates figure left the point the table
#: marked unringed).
OUTSIDE_POINT = f"{OUTSIDE_MARK} estimate outside the bounds that hold surely: unbiased, not moved"


def outside_sure_line(metric: str, value: str, low: float, high: float,
                      number: str = "{:.4f}") -> str:
    """The line under a table of estimates for a metric whose estimate (``value``, as the
    table prints it) the table marks with :data:`OUTSIDE_MARK`: it lies outside the
    bounds that hold surely ``[low, high]`` (each formatted by ``number``), kept as it is
    unbiased (:func:`outside_sure_mark`), e.g. ``"† error_rate: 0.2222 outside the bounds
    that hold surely, [0.2250, 0.3000]: unbiased, not moved; see the note"``. One line for
    the terminal's table and the report's (QA: the report's table left it unmarked)."""
    return f"{OUTSIDE_MARK} {metric}: {value} {outside_sure_mark(low, high, number)}"


def _pct(level: float) -> str:
    return f"{100 * float(level):g}%"


def interval_name(kind: str, level: float = 0.95) -> str:
    """The name of an interval of ``kind`` at ``level``, e.g. ``"fixed-budget 95% interval"``.

    Raises:
        ValueError: an unknown kind.
    """
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"unknown interval kind {kind!r}; expected one of "
                         f"{sorted(INTERVAL_KINDS)}")
    return INTERVAL_KINDS[kind][0].format(pct=_pct(level))


def interval_guarantee(kind: str) -> str:
    """What an interval of ``kind`` guarantees, in a few words (for footnotes and notes)."""
    if kind not in INTERVAL_KINDS:
        raise ValueError(f"unknown interval kind {kind!r}; expected one of "
                         f"{sorted(INTERVAL_KINDS)}")
    return INTERVAL_KINDS[kind][1]


def few_errors_name(kind: str, level: float = 0.95, everywhere: bool = True,
                    what: str = "errors") -> str:
    """The name of a fixed-budget interval or anytime CS (``kind``) for which the exact
    anytime CS stands in while the labels show few errors (the error rate's few-errors
    rule, :mod:`activetest.stats.fewerrors`; ``estimate`` and ``status`` say the same in a
    note): at every label count it covers (``everywhere``), e.g. ``"exact anytime 95%
    confidence sequence (few errors)"``, or at some, e.g. ``"anytime 95% confidence
    sequence (exact anytime CS while few errors)"``. ``what`` the labels showed few of
    (:func:`activetest.stats.fewerrors.few_errors_what`), e.g. ``"labels without an
    error"`` for an error rate near 1."""
    if not everywhere:
        return f"{interval_name(kind, level)} (exact anytime CS while few {what})"
    return interval_name(EXACT_ANYTIME, level) + (
        f" (few {what})" if kind == ANYTIME else
        f" (few {what}; in place of the {interval_name(kind, level)})")


#: What the plain mean of the labelled items' losses is called where every pool item is
#: labelled: it is then the pool's exact value, whatever the draws were.
CENSUS_MARK = " (every item labelled: the pool's value)"


def plain_mean_mark(*, census: bool, uniform_draws: bool) -> str:
    """What follows the plain mean's name ("uniform-equivalent") where a person reads it:
    at a census (every pool item labelled) :data:`CENSUS_MARK`, the pool's exact value
    (QA: "(biased)" beside it); with every draw made at the uniform rate nothing (it is
    unbiased there); else ``" (biased)"`` (the items were drawn actively)."""
    if census:
        return CENSUS_MARK
    return "" if uniform_draws else " (biased)"


def _share(ratio: float) -> str:
    inv = 1.0 / float(ratio)
    return f"1/{inv:g}" if abs(inv - round(inv)) < 1e-9 else f"{float(ratio):g}"


def blind_spot_sentence(metric: str, n_unexplored: int, ratio: float,
                        widen_low: float | None, widen_high: float | None,
                        loss_cap: float | None, what: str = "",
                        level: float = 0.95) -> str | None:
    """The line the terminal and the report show about a session's blind spot (None:
    nothing unexplored). ``what`` names the estimate (e.g. ``"control-variate LURE's "``)."""
    if n_unexplored <= 0:
        return None
    name = metric.replace("_", " ")
    items = (f"{n_unexplored} item(s) drawn at below {_share(ratio)} the uniform rate and "
             f"never drawn")
    if widen_high is None or widen_low is None:
        return (f"{name}: {what}{interval_name(FIXED_BUDGET, level)} and "
                f"{interval_name(ANYTIME, level)} assume no rare large losses among the "
                f"{items} (no loss bound is known to widen them by)")
    cap = "1" if loss_cap is None else f"{loss_cap:.4g}"
    return (f"{name}: {what}{interval_name(FIXED_BUDGET, level)} and "
            f"{interval_name(ANYTIME, level)} widened by +{widen_high:.4f} / "
            f"-{widen_low:.4f} for what the {items} could hide (a loss of at most {cap} "
            f"per item)")


def comparison_blind_spot_sentence(spec: str, metric: str, n_unexplored: int, ratio: float,
                                   widen: float | None, difference: bool, other: bool,
                                   level: float = 0.95, *, widen_other: float | None,
                                   differ_only: bool = False) -> str | None:
    """The line about a compared target's intervals and the session's blind spot (None:
    nothing unexplored, or nothing widened): the paired difference is widened by
    ``widen`` on each side (``difference``: its CLT intervals are shown) and the other
    target's risk by ``widen_other`` upwards (``other``). A widening of None is not
    known: the line says those intervals assume no rare large losses there (the log loss
    of a target whose predictions on the pool are unknown). ``differ_only``: the
    difference's widening counts only the unexplored items where the two predictions
    differ (a model compared at creation, known on the pool)."""
    if n_unexplored <= 0:
        return None
    name = metric.replace("_", " ")
    items = f"the {n_unexplored} item(s) drawn at below {_share(ratio)} the uniform rate and " \
            f"never drawn"
    kinds = f"{interval_name(FIXED_BUDGET, level)} and {interval_name(ANYTIME, level)}"
    if widen is None and widen_other is None:
        return (f"compared with {spec} ({name}): the {kinds} of target - {spec} and of "
                f"{spec}'s {name} assume no rare large losses among {items} (no bound of "
                f"{spec}'s loss on the pool is known to widen them by)")
    parts = []
    if difference and widen is not None and widen > 0:
        how = ("" if not differ_only else " (only where the two predictions differ)"
               if metric == "error_rate" else " (each item by its largest difference of the "
               "two targets' log-probabilities)")
        parts.append(f"those of target - {spec} by +/-{widen:.4g}{how}")
    if other and widen_other is not None and widen_other > 0:
        parts.append(f"those of {spec}'s {name} by +{widen_other:.4g}")
    line = (f"compared with {spec} ({name}): the {kinds} are widened for what {items} could "
            f"hide (either target may err there): {'; '.join(parts)}") if parts else None
    if other and widen_other is None:
        assumed = (f"{spec}'s {name} assumes no rare large losses among them"
                   if line is not None else
                   f"compared with {spec} ({name}): the {kinds} of {spec}'s {name} assume "
                   f"no rare large losses among {items}")
        line = assumed if line is None else f"{line}; {assumed}"
    return line
