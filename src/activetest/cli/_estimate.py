"""``activetest estimate``: the estimate and its intervals, printed."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any

import typer
from rich.table import Table

from activetest.cli._app import (
    UNBOUNDED,
    NoProgress,
    OutFormat,
    SessionArg,
    Threads,
    Timeout,
    _check_interval_options,
    _check_width,
    _cs,
    _decimals,
    _escape,
    _json_text,
    _num,
    _open,
    _out,
    _outside_sure,
    _user_errors,
    app,
    marked,
)
from activetest.session.interval_names import OUTSIDE_MARK as _OUTSIDE_MARK


def _interval_text(low: float | None, high: float | None, n_labels: int | None = None,
                   *, cs: bool = False, basis: str | None = None,
                   n_pool: int | None = None) -> str:
    """``[low, high]``, ``—`` when there is none, :data:`UNBOUNDED` when neither end is
    finite, or (``cs``: an anytime CS before 30 of ``n_labels``, short of a census of
    ``n_pool``) "from 30 labels"."""
    if low is None or high is None:
        return "—"
    if not cs and low == float("-inf") and high == float("inf"):
        return UNBOUNDED
    return _cs(low, high, n_labels if cs else None, basis, n_pool)


_MARKS = "¹²³⁴⁵⁶"
#: The mark beside an estimate in the table that lies outside the bounds that hold surely
#: (:func:`_outside_lines` says it under the table; the report's table marks it alike).
OUTSIDE_MARK = _OUTSIDE_MARK


def _outside_lines(r: Any) -> list[str]:
    """Under the estimate table, one line per metric whose estimate the table marks with
    :data:`OUTSIDE_MARK`: it lies outside the bounds that hold surely, kept as it is
    unbiased (the marks of the intervals' rows are their guarantees; QA: a single risk's
    estimate outside its sure bounds was said only in a note at the end, where a paired
    difference's is said at the number)."""
    from activetest.session.interval_names import outside_sure_line

    lines = []
    for m in r.metrics.values():
        d, a = _decimals(m.active, m.anytime), m.anytime
        if _outside_sure(a, d):
            lines.append(outside_sure_line(m.metric, _num(m.active.estimate, d),
                                           float(a.sure_low), float(a.sure_high),
                                           f"{{:.{d}f}}"))
    return lines


def _cv_difference(diff: float | None, estimate: float | None) -> str:
    """How far control-variate LURE lies from LURE where the two are the same estimator
    (CE or PE acquisition, log loss): ``"difference 3.1e-04"``, or where it is only
    floating-point rounding ``"the same to rounding"`` (QA: "difference -2.2e-16" read as
    a number to weigh)."""
    if diff is None:
        return "difference —"
    scale = 1.0 if estimate is None else max(1.0, abs(estimate))
    return "the same to rounding" if abs(diff) <= 1e-12 * scale else f"difference {diff:.1e}"


def _difference_basis(r: Any, c: Any) -> str:
    """What a paired difference subtracts: said where the target's estimate shown above
    is not the LURE the difference uses (an adaptive design's own, with its control), so
    that the numbers add up."""
    from activetest.session.interval_names import outside_sure_mark

    m = r.metrics.get(c.metric)
    a = c.difference_anytime
    # an estimate the labels make impossible is said at the number (it is kept: unbiased)
    outside = ("" if a is None or not a.estimate_outside_sure or a.sure_low is None
               or a.sure_high is None else "; " + outside_sure_mark(a.sure_low, a.sure_high))
    if c.target_lure is None or m is None or abs(m.active.estimate - c.target_lure) < 5e-5:
        return "paired LURE, same labels" + outside
    return (f"paired LURE, same labels: the target's LURE {_num(c.target_lure)} minus the other's "
            f"{_num(c.other.estimate)}; the target's estimate above, "
            f"{_num(m.active.estimate)}, is the design's own with its control, also "
            f"unbiased{outside}")


def _intervals_of(boot: Any, anytime: Any, level: float, n_labels: int | None = None,
                  n_pool: int | None = None) -> str:
    """An estimate's intervals, each named: fixed-budget, anytime, bootstrap."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        FIXED_BUDGET,
        basis_mark,
        interval_name,
    )

    parts = []
    if anytime is not None:
        # where the exact anytime CS stands in for both (few errors), or a difference's sure
        # bounds, each says so, as the target's table marks it (QA: named fixed-budget
        # and anytime, a note apart)
        mark = basis_mark(anytime.basis)
        parts += [f"{interval_name(FIXED_BUDGET, level)} "
                  + marked(_interval_text(anytime.fixed_low, anytime.fixed_high), mark),
                  f"{interval_name(ANYTIME, level)} "
                  + marked(_cs(anytime.cs_low, anytime.cs_high, n_labels, anytime.basis,
                                n_pool), mark)]
    parts.append(f"{interval_name(BOOTSTRAP, level)} {_interval_text(boot.low, boot.high)}")
    return "; ".join(parts)


def _estimate_rows(r: Any) -> list[tuple[str, str, list[str]]]:
    """``(interval kind or "", what it is, one cell per metric)`` of the estimate table."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        plain_mean_mark,
    )

    metrics = list(r.metrics.values())
    anytime = [m.anytime for m in metrics]

    def cells(low: str, high: str, cs: bool = False) -> list[str]:
        return [_interval_text(None if a is None else getattr(a, low),
                               None if a is None else getattr(a, high), r.n_labels, cs=cs,
                               basis=None if a is None else a.basis, n_pool=r.n_pool)
                for a in anytime]

    # an adaptive design's estimate is adaptive LURE (learnt controls), the paper's is LURE
    what = "adaptive LURE estimate" if r.design else "LURE estimate"
    # each estimate with the decimals of its intervals (4, or more where one is so narrow
    # that 4 print its two ends alike); one outside the bounds that hold surely marked
    # (kept: unbiased), said under the table (:func:`_outside_lines`)
    rows = [("", what, [_num(m.active.estimate, _decimals(m.active, m.anytime))
                        + (OUTSIDE_MARK if _outside_sure(m.anytime) else "")
                        for m in metrics]),
            (FIXED_BUDGET, "", cells("fixed_low", "fixed_high")),
            (ANYTIME, "", cells("cs_low", "cs_high", cs=True))]
    if any(a is not None and a.exact_low is not None for a in anytime):
        rows.append((EXACT_ANYTIME, "", cells("exact_low", "exact_high")))
    rows.append((BOOTSTRAP, "", [_interval_text(m.active.low, m.active.high) for m in metrics]))
    # every draw at the uniform rate (uniform sampling): the plain mean is unbiased here,
    # as the footnote says (QA: the row said "(biased)" beside an "unbiased here" note);
    # every item labelled: the pool's exact value (QA: "(biased)" at a census)
    plain = "uniform-equivalent" + plain_mean_mark(census=r.n_labels >= r.n_pool,
                                                   uniform_draws=r.uniform_draws)
    rows.append(("", plain, [_num(m.uniform.estimate) for m in metrics]))
    return rows


def _estimate_table(r: Any) -> Table:
    """The estimate of every metric, one column per metric and one row per interval
    (named by :mod:`activetest.session.interval_names`), so that it fits 80 columns."""
    from rich.table import Column

    from activetest.session.interval_names import interval_name

    table = Table(Column("", overflow="fold", ratio=1),
                  *(Column(m, no_wrap=True) for m in r.metrics), box=None)
    mark = 0
    for kind, what, cells in _estimate_rows(r):
        if kind or what.startswith("uniform"):
            name = interval_name(kind, r.level) if kind else what
            table.add_row(name + _MARKS[mark], *cells)
            mark += 1
        else:
            table.add_row(what, *cells)
    return table


def _print_estimate(r: Any, target: str, classes: Any = None) -> None:
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        FIXED_BUDGET,
        interval_guarantee,
        interval_name,
    )

    _out.print(f"target {_escape(target)}: {r.n_labels} label(s) used of {r.n_pool} pool items "
               f"({r.n_selected} selected)")
    _out.print(_estimate_table(r))
    for line in _outside_lines(r):
        _out.print(_escape(line))
    mark = 0
    for kind, what, _ in _estimate_rows(r):
        if kind:
            extra = " The headline." if kind == FIXED_BUDGET else ""
            _out.print(f"{_MARKS[mark]} {interval_name(kind, r.level)}: "
                       f"{interval_guarantee(kind)}.{extra}")
            mark += 1
        elif what.startswith("uniform"):
            same = all(abs(m.uniform.estimate - m.active.estimate) <= 1e-12
                       for m in r.metrics.values())
            if r.n_labels >= r.n_pool and same:
                how = ("for contrast: BIASED under active draws (here it equals the "
                       "estimate: every pool item is labelled (a census)).")
            elif r.n_labels >= r.n_pool:
                how = ("for contrast: BIASED under active draws; here every pool item is "
                       "labelled (a census), so it is the pool's exact value (the estimate "
                       "above differs by its control).")
            elif r.uniform_draws:  # (QA: "BIASED here" under an adaptive design's uniform
                # start: its estimate differs by its control, not by the draws)
                how = ("for contrast: BIASED under active draws; unbiased here, where every "
                       "draw so far was made at the uniform rate" + (
                           "." if same else " (the estimate above differs by its control, "
                           "which lowers its variance)."))
            else:
                how = "BIASED here (items were drawn actively), for contrast."
            _out.print(f"{_MARKS[mark]} plain mean of the labelled items' losses: {how}")
            mark += 1
    from activetest.session.stop_lines import stop_lines

    cs_name = interval_name(ANYTIME, r.level)
    for line in stop_lines(r):  # (the same lines as ``str(report)``)
        head = f"{line.metric}: you may stop now"
        if line.may_stop and line.text.startswith(head):
            _out.print(f"[bold green]{_escape(head)}[/]{_escape(line.text[len(head):])}")
        else:
            _out.print(_escape(line.text))
    boot_name = interval_name(BOOTSTRAP, r.level)
    fixed_name = interval_name(FIXED_BUDGET, r.level)
    for m in r.metrics.values():
        if m.cv is not None and m.cv_same_as_lure:
            how = _cv_difference(m.cv.estimate - m.active.estimate, m.active.estimate)
            _out.print(f"{m.metric}: control-variate LURE equals LURE up to the proposal "
                       f"floor ({how}): with CE or PE "
                       f"acquisition "
                       f"the control variate is the acquisition score itself, so it cannot "
                       f"narrow the interval")
        elif m.cv is not None:
            ca = m.cv_anytime
            fixed = ("" if ca is None else
                     f"{fixed_name} {_interval_text(ca.fixed_low, ca.fixed_high)}, ")
            d = _decimals(m.cv, ca)
            outside = _outside_sure(ca, d)  # said at the number, as the headline's
            _out.print(f"{m.metric}: control-variate LURE {_num(m.cv.estimate, d)}"
                       f"{f' ({outside})' if outside else ''}, {fixed}"
                       f"{boot_name} {_interval_text(m.cv.low, m.cv.high)} (also unbiased; "
                       f"uses the surrogate's expected loss on the whole pool, "
                       f"{_num(m.control_mean)})")
    for m in r.metrics.values():
        if m.labels_needed is not None and r.n_labels >= r.n_pool:
            # a census: nothing is left to label and the estimate is the pool's value (QA:
            # "not reached within the pool's 2 items (about 31 labels projected)")
            _out.print(f"{m.metric}: every pool item is labelled: the estimate is the "
                       f"pool's exact value (the {boot_name}, without a finite-population "
                       f"factor, does not narrow to it)")
        elif m.labels_needed is not None and m.labels_needed <= r.n_labels:
            # already that narrow: a measurement, not a projection (QA: "needs about 80
            # labels in total (0 more; a projection ...)"); it guarantees nothing to stop on
            _out.print(f"{m.metric}: the {boot_name} is {m.active.high - m.active.low:.4g} "
                       f"wide, within {r.target_width:g} (no guarantee: stop on the "
                       f"{cs_name})")
        elif m.labels_needed is not None and m.labels_needed > r.n_pool:
            _out.print(f"{m.metric}: a {boot_name} of width {r.target_width:g} is not reached "
                       f"within the pool's {r.n_pool} items (about {m.labels_needed} labels "
                       f"projected: the bootstrap has no finite-population factor); stop on "
                       f"the {cs_name} (a full census gives the pool's exact value)")
        elif m.labels_needed is not None:
            more = max(0, m.labels_needed - r.n_labels)
            how = ("1/sqrt(labels) shrinkage, the design's later draws varying as its "
                   "model has them now" if r.design else "1/sqrt(labels) shrinkage")
            _out.print(f"{m.metric}: a {boot_name} of width {r.target_width:g} needs about "
                       f"{m.labels_needed} labels in total ({more} more; a projection from "
                       f"the bootstrap: {how})")
    if r.flagged:
        thr_t, thr_s, rule = r.noise_thresholds
        joiner = "or" if rule == "any" else "and"
        has_target = any(math.isfinite(f.target_nll) for f in r.flagged)
        rule_text = (f"target NLL > {thr_t:g} {joiner} surrogate NLL > {thr_s:g}" if has_target
                     else f"surrogate NLL > {thr_s:g}")
        _out.print(f"[bold yellow]label-noise alarm:[/] {len(r.flagged)} label(s) look unlikely "
                   f"({rule_text}); give them a second look:")
        for f in r.flagged[:20]:
            name = (classes[f.label] if classes is not None and 0 <= f.label < len(classes)
                    else str(f.label))
            target_text = (f"target NLL {f.target_nll:.2f}, " if math.isfinite(f.target_nll)
                           else "")
            _out.print(f"  item {_escape(f.item_id)} (draw {f.step}): label "
                       f"{_escape(name)}, {target_text}surrogate NLL {f.surrogate_nll:.2f}")
        if len(r.flagged) > 20:
            _out.print(f"  ... and {len(r.flagged) - 20} more")
        for m in r.metrics.values():
            if m.without_flagged is not None:
                _out.print(f"  {m.metric} without them: {_num(m.without_flagged)} (vs "
                           f"{_num(m.active.estimate)}; dropping items breaks unbiasedness, so "
                           f"treat this as a sensitivity check)")
    for c in r.comparisons:
        other = _intervals_of(c.other, c.other_anytime, r.level, r.n_labels, r.n_pool)
        diff = _intervals_of(c.difference, c.difference_anytime, r.level, r.n_labels,
                             r.n_pool)
        d = _decimals(c.other, c.other_anytime)
        outside = _outside_sure(c.other_anytime, d)  # a risk too: said at the number
        _out.print(f"compare ({c.metric}): {_escape(c.spec)} LURE estimate "
                   f"{_num(c.other.estimate, d)}{f' ({outside})' if outside else ''}, "
                   f"{other}")
        _out.print(f"  difference target - other = "
                   f"{_num(c.difference.estimate, _decimals(c.difference, c.difference_anytime))} "
                   f"({_difference_basis(r, c)}), {diff}")
        if c.difference_cs is not None:
            lo, hi = c.difference_cs
            verdict = ("the target is better (anytime)" if hi < 0 else
                       "the other model is better (anytime)" if lo > 0 else
                       # known to be 0: nothing more to label decides it (QA: "not decided
                       # yet" where every item the two could differ on was labelled)
                       "no difference (known exactly)" if hi - lo <= 1e-9 else
                       "not decided yet")
            # named by what decides it: the sure bounds where they stand in
            a = c.difference_anytime
            by = "sure bounds" if a is not None and a.basis == "sure" else cs_name
            _out.print(f"  by the {by} of the difference: {verdict}")
    if r.design:
        from activetest.session.draw import describe_design

        state, weights = describe_design(r.design)
        _out.print(f"design {r.design.get('design')}: {state}"
                   + (f"; weights {weights}" if weights else "")
                   + " (the estimate uses its own control; exactly unbiased)")
    for w in r.warnings:
        _out.print(f"[yellow]note:[/] {_escape(w)}")


@app.command()
@_user_errors
def estimate(
    session: SessionArg,
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", metavar="<spec>", help="Another target model spec to compare on the "
        "same labels (repeatable).", show_default=False)] = None,
    ids_are_positions: Annotated[bool, typer.Option(
        "--ids-are-positions", help="Confirm a --compare table:'s join by ids that look "
        "like positions (its ids and the pool's both row numbers, 0..N-1 or 1..N): "
        "refused otherwise, as at init (docs/history.md).")] = False,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="Project the labels needed for an interval this wide.",
        show_default=False)] = None,
    n_boot: Annotated[int | None, typer.Option(help="Bootstrap resamples (default 1000).",
                                               show_default=False)] = None,
    level: Annotated[float | None, typer.Option(help="Interval coverage (default 0.95).",
                                                show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (same as --format "
                                          "json).")] = False,
    fmt: Annotated[OutFormat | None, typer.Option(
        "--format", help="text (default), json, or eee (an Every Eval Ever aggregate record "
                         "per metric, with the uncertainty method named).",
        show_default=False)] = None,
    model_id: Annotated[str | None, typer.Option(
        help="--format eee: the target's model id (e.g. HuggingFaceTB/SmolLM2-135M-Instruct; "
             "default: the model its answer log names, else the target's model; never a "
             "local path).", show_default=False)] = None,
    source_organization: Annotated[str, typer.Option(
        help="--format eee: who ran this evaluation.")] = "unknown",
    threads: Threads = None,
    no_progress: NoProgress = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """The estimate of every metric with its intervals (fixed-budget, anytime, bootstrap)."""
    from activetest.session.annotators import agreement_json

    if as_json and fmt is not None and fmt.value != "json":  # QA: --json won, silently
        raise ValueError(f"--json is --format json: give one of --json and --format "
                         f"{fmt.value}")
    out_format = "json" if as_json else (fmt.value if fmt is not None else "text")
    if out_format != "eee" and (model_id is not None or source_organization != "unknown"):
        raise ValueError("--model-id and --source-organization go into an Every Eval Ever "
                         "record: add --format eee")  # QA: ignored without it
    _check_width(target_width)
    _check_interval_options(n_boot, level)
    with _open(session, busy_timeout, threads) as s:
        r = s.estimate(compare=list(compare or ()), target_width=target_width, n_boot=n_boot,
                       level=level, progress=not no_progress,
                       **({"ids_are_positions": True} if ids_are_positions else {}))
        from activetest.session.harness import labels_from

        read_as = labels_from(s)  # a harness session: what its labels are (QA)
        if out_format == "json":
            print(_json_text({**r.to_dict(), **agreement_json(s),
                              **({"labels_from": read_as} if read_as else {})}))
        elif out_format == "eee":
            from activetest.session.eee_report import eee_records

            records = eee_records(s, r, model_id=model_id,
                                  source_organization=source_organization)
            print(json.dumps(records if len(records) > 1 else records[0], indent=1))
        else:
            _print_estimate(r, s.session_config.target, getattr(s.task, "classes", None))
            if read_as:
                _out.print(f"labels: {_escape(read_as)}")
            _print_agreement(s)


def _print_agreement(s: Any) -> None:
    """Agreement of the labelling page's annotators (nothing when it was never used)."""
    from activetest.session.annotators import agreement_lines

    for line in agreement_lines(s):
        _out.print(_escape(line))
