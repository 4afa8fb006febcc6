"""``activetest report`` and ``status``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from activetest.cli._app import (
    UNBOUNDED,
    NoProgress,
    SessionArg,
    Threads,
    Timeout,
    _check_width,
    _cs,
    _decimals,
    _escape,
    _json_text,
    _num,
    _open,
    _out,
    _outside_sure,
    _print_waiting,
    _user_errors,
    app,
    marked,
    out_path,
)
from activetest.cli._estimate import _cv_difference, _interval_text, _print_agreement


@app.command()
@_user_errors
def report(
    session: SessionArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.md, report.html "
                                      "and the PNG figures.", show_default=False,
                                      parser=out_path, metavar="<path>")],
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", metavar="<spec>", help="Another target model spec to compare (repeatable).",
        show_default=False)] = None,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="Project the labels needed for this interval width.",
        show_default=False)] = None,
    threads: Threads = None,
    no_progress: NoProgress = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Write a Markdown + HTML report with plots."""
    from activetest.session.annotators import agreement_lines

    _check_width(target_width)
    with _open(session, busy_timeout, threads) as s:
        path = s.write_report(out, compare=list(compare or ()), target_width=target_width,
                              progress=not no_progress, notes=agreement_lines(s))
        _out.print(f"wrote {_escape(str(path))} (and report.html, PNG figures) in "
                   f"{_escape(str(out))}")


@app.command()
@_user_errors
def status(
    session: SessionArg,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON. Its key alpha is "
                                          "the proposal floor under its legacy name (the "
                                          "same number as proposal_floor, kept for older "
                                          "readers; listed in legacy_keys), not 1 - level."
                                          )] = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Where the session stands: pool size, selected, labelled, pending, last estimate."""
    from activetest.session.annotators import agreement_json
    from activetest.session.config import ACQUISITIONS
    from activetest.session.interval_names import (
        ANYTIME,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        interval_name,
        plain_mean_mark,
    )

    with _open(session, busy_timeout) as s:
        st = s.status()
        if as_json:
            from activetest.session.harness import runs_summary

            out = {**st.to_dict(), **agreement_json(s)}
            if s.session_config.extra.get("history"):  # init --history: which design
                from activetest.session.history_neighbours import design_label

                # (what draws, "surrogate" and "surrogate_column": the status record's own)
                out["history_design"] = design_label(s.session_config.extra["history"])
            runs = runs_summary(s)
            if runs is not None:  # a harness session: its target runs
                out["target_runs"] = runs.to_dict()
            print(_json_text(out))
            return
        _out.print(f"session {_escape(st.path)} (created {_when(st.created)})")
        from activetest.session.history_neighbours import surrogate_label

        # what draws (QA: "surrogate history" for --surrogate column:NAME --history)
        shown = surrogate_label(st.surrogate, s.session_config.extra.get("history"))
        _out.print(f"target {_escape(st.spec_text(st.target))}; surrogate "
                   f"{_escape(st.spec_text(shown))}; metric "
                   f"{st.metric}; acquisition {st.acquisition} ("
                   + ("" if s.session_config.adaptive  # a design: its lambda, not the floor
                      else f"proposal floor {st.proposal_floor:g}, ")
                   + f"seed {st.seed})")
        if s.session_config.extra.get("history"):  # init --history: which design
            from activetest.session.history_neighbours import design_label

            _out.print(f"design: {design_label(s.session_config.extra['history'])}")
            from activetest.session.harness_history import history_target_note

            said = history_target_note(s)
            if said is not None:
                _out.print(f"note: {_escape(said)}")
        cfg = s.session_config
        if cfg.kind == "classification" and cfg.compare:  # init --compare: every estimate
            named = ", ".join(_escape(st.spec_text(c)) for c in cfg.compare)
            _out.print(f"compared with {named} at every estimate (scored on the pool at "
                       f"creation)"
                       + ("; the draws serve the difference" if cfg.acquisition == "compare"
                          else ""))
        if cfg.kind == "classification" and cfg.label_scoring_mode == "full-sequence":
            _out.print("label scoring: full-sequence (init --label-scoring: each class is "
                       "the summed log-prob of its whole label word, for every model "
                       "scored here; a table: file's scores are read as they are)")
        _out.print(f"{_escape(st.pool_text)}: {st.n_selected} selected, {st.n_labelled} "
                   f"labelled, {st.n_pending} pending; {st.n_usable} label(s) usable by the "
                   f"estimate")
        _print_runs(s)
        for role, how in st.label_scoring.items():
            if how.on_prefix:  # the scores rest on the first token of longer words
                _out.print(f"{_escape(role)} scores: {_escape(how.describe())}")
        for spec, n_wait in st.compared.items():
            _out.print(f"compared target {_escape(st.spec_text(spec))}: {n_wait} drawn "
                       f"answer(s) still to judge"
                       + (" (`activetest label` asks for them)" if n_wait else ""))
        shown = [e for e in st.last_estimates if e.method in ("lure", "cv_lure", "mean")]
        # an adaptive design's estimate is adaptive LURE (learnt controls)
        acq = ACQUISITIONS.get(st.acquisition)
        lure_name = "adaptive LURE" if acq is not None and acq.adaptive else "LURE"
        order = {"lure": 0, "cv_lure": 1, "mean": 2}
        lure = {e.metric: e for e in shown if e.method == "lure"}
        # a graded session with partial credit: its "error_rate" is the mean of 1 - score,
        # as estimate and the report say (QA: status showed "error_rate ... 0.38" alone)
        from activetest.session.estimate_notes import partial_credit_note

        partial = partial_credit_note(s.session_config.task)
        for e in sorted(shown, key=lambda e: (e.metric, order[e.method])):
            if e.method == "cv_lure" and e.metric in st.cv_same_as_lure:
                diff = e.estimate - lure[e.metric].estimate if e.metric in lure else None
                _out.print(f"  {e.metric} control-variate LURE: equals LURE up to the "
                           f"proposal floor ({_cv_difference(diff, e.estimate)}): with CE or "
                           f"PE acquisition "
                           f"the control "
                           f"variate is the acquisition score itself, so it cannot narrow "
                           f"the interval")
                continue
            # the plain mean is unbiased where every draw was made at the uniform rate
            # (uniform sampling; an adaptive design's uniform start: QA), as estimate says;
            # every item labelled (a census), the pool's exact value
            unbiased = st.acquisition == "uniform" or e.details.get("uniform_draws") is True
            mark = plain_mean_mark(census=e.n_labels >= st.n_items, uniform_draws=unbiased)
            what = {"lure": lure_name, "cv_lure": "control-variate LURE",
                    "mean": "uniform-equivalent" + mark}[e.method]
            level = e.level if e.level is not None else 0.95
            a = e.details.get("anytime") if e.method in ("lure", "cv_lure") else None
            a = a if isinstance(a, dict) else {}
            names = _named_intervals(e, st.n_items)
            if e.method == "mean" and (not unbiased or e.n_labels >= st.n_items):
                # biased under active draws, or the pool's exact value at a census: no
                # interval around it, as estimate shows none (QA: status printed a
                # bootstrap interval of the biased mean; then one around the pool's value)
                names = []
            d = _decimals(e, a) if names else 4
            # an estimate outside the bounds that hold surely, said at the number as
            # estimate says it (kept: unbiased; the recorded note below says why)
            outside = _outside_sure(a, d)
            _out.print(f"last estimate ({_when(e.at)}, {e.n_labels} labels): {e.metric} {what} "
                       f"{_num(e.estimate, d)}{f' ({outside})' if outside else ''}")
            for name in names:
                _out.print(f"  {name}")
            if e.method == "lure" and e.metric == "error_rate" and partial:
                _out.print(f"  note: {_escape(partial)}")
            if e.method == "lure" and isinstance(e.details.get("blind_spot"), str):
                _out.print(f"  note: {_escape(e.details['blind_spot'])}")
            if e.method == "lure" and isinstance(e.details.get("sure_bounds"), str):
                _out.print(f"  note: {_escape(e.details['sure_bounds'])}")
            if e.method == "lure" and a.get("basis") != "exact" and e.n_labels < st.n_items \
                    and all(isinstance(a.get(k), (int, float))
                            for k in ("fixed_low", "fixed_high")) \
                    and a["fixed_high"] - a["fixed_low"] <= 1e-9 and e.n_labels >= 2:
                # as estimate's note: a point from terms that are all the same (QA)
                _out.print("  note: every labelled term is the same so far: the fixed-budget "
                           "interval is a point that claims nothing (no spread to estimate)")
            if e.method == "lure" and isinstance(a.get("basis_note"), str):
                # each named as the rows are, with its level (QA: "fixed-budget and
                # anytime rows are the exact anytime confidence sequence")
                _out.print(f"  note: the {interval_name(FIXED_BUDGET, level)} and "
                           f"{interval_name(ANYTIME, level)} rows are the "
                           f"{interval_name(EXACT_ANYTIME, level)} "
                           f"({_escape(a['basis_note'])})")
            if a and e.method == "lure":
                cs_name = interval_name(ANYTIME, level)
                if a.get("may_stop") and not st.estimate_stale:
                    _out.print(f"  [bold green]you may stop now[/]: the {cs_name} is "
                               f"within the width {a.get('target_width')} asked for")
                elif a.get("may_stop"):  # said of fewer labels than there are now (QA:
                    # a stale "you may stop" read as a projection of the current count)
                    _out.print(f"  the last estimate ({e.n_labels} labels) said you may stop: "
                               f"its {cs_name} was within the width {a.get('target_width')} "
                               f"asked for; run `activetest estimate` to check it now")
                elif a.get("target_width") is not None and a.get("labels_needed") and \
                        a.get("labels_needed_sure"):
                    _out.print(f"  the {cs_name} is within width {a['target_width']} by "
                               f"{a['labels_needed']} labels at the latest (certain: the "
                               f"bounds that hold surely then cut it within the width)")
                elif a.get("target_width") is not None and a.get("labels_needed"):
                    _out.print(f"  the {cs_name} reaches width {a['target_width']} at "
                               f"about {a['labels_needed']} labels in total (a projection)")
        _print_compared(st)
        if not shown:
            _out.print(_no_estimate_line(s, st))
        elif st.estimate_stale and not s.store.writable:  # estimate cannot record here
            _out.print(f"[bold yellow]the last estimate is stale:[/] labels were added or "
                       f"changed since; the session file is open read-only, so "
                       f"`activetest estimate {_escape(st.path)}` shows the current numbers "
                       f"but cannot record them (status keeps showing these)")
        elif st.estimate_stale:
            _out.print(f"[bold yellow]the last estimate is stale:[/] labels were added or "
                       f"changed since; run `activetest estimate {_escape(st.path)}`")
        _print_waiting(st.waiting)
        _print_agreement(s)


def _no_estimate_line(s: Any, st: Any) -> str:
    """What status says where no estimate is recorded: with labels to estimate from, the
    command that computes and records it, and why status shows none (it shows the last
    recorded estimate, as for every session; QA: after an inspect eval with
    ActiveStopping stopped on its own estimate, status said "no estimate yet" and no
    more, as if nothing could be estimated)."""
    if not st.n_usable:
        return "no estimate yet"
    from activetest.session.harness import harness_tool

    why = ("status shows the last estimate `activetest estimate` recorded"
           + ("; an inspect eval's ActiveStopping keeps the estimate it stopped on in "
              "its log, not in the session" if harness_tool(s) == "inspect" else ""))
    if not s.store.writable:
        return (f"no estimate yet: `activetest estimate {_escape(st.path)}` shows the "
                f"estimate of the {st.n_usable} usable label(s) but cannot record it here (the "
                f"session file is open read-only); {why}")
    return (f"no estimate yet: `activetest estimate {_escape(st.path)}` computes it from the "
            f"{st.n_usable} usable label(s) and records it ({why})")


def _when(at: Any) -> str:
    """A stored ISO time as a person reads it, to the second ("2026-12-07 03:15:18 UTC"):
    each row of one estimate is stored with its own microseconds, and status showed one
    estimate as rows of different times, "03:15:18.102434" over "03:15:18.102465" (QA).
    A time that is not ISO is shown as stored."""
    from datetime import datetime, timezone

    try:
        t = datetime.fromisoformat(str(at))
    except ValueError:
        return str(at)
    if t.utcoffset() is None:
        return t.strftime("%Y-%m-%d %H:%M:%S")
    return t.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _named_intervals(e: Any, n_pool: int | None = None) -> list[str]:
    """A recorded estimate's intervals, each named: the headline first (fixed-budget),
    then anytime (claimed from 30 labels, or at a census of the ``n_pool`` items), then
    the bootstrap."""
    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        EXACT_ANYTIME,
        FIXED_BUDGET,
        basis_mark,
        interval_name,
    )

    level = e.level if e.level is not None else 0.95
    a = e.details.get("anytime") if e.method != "mean" else None
    a = a if isinstance(a, dict) else {}
    names = []
    # a comparison's row marks where the exact anytime CS or a difference's sure bounds stand in,
    # as `estimate` does (the target's own rows say it in a note below them)
    mark = basis_mark(a.get("basis")) if ":" in e.method else ""
    # an unbounded end is stored as the string "-inf" or "inf" (JSON has no infinity):
    # read back, each interval is printed as `estimate` prints it (QA: status left an
    # unbounded fixed-budget interval out and called an unbounded CS "(from 30 labels)"
    # at 40 labels, where estimate said "unbounded (exact anytime CS; see the note)")
    fixed_low, fixed_high = _stored_end(a.get("fixed_low")), _stored_end(a.get("fixed_high"))
    cs_low, cs_high = _stored_end(a.get("cs_low")), _stored_end(a.get("cs_high"))
    if fixed_low is not None and fixed_high is not None:
        names.append(f"{interval_name(FIXED_BUDGET, level)} "
                     + marked(_interval_text(fixed_low, fixed_high), mark))
    if cs_low is not None and cs_high is not None:
        names.append(f"{interval_name(ANYTIME, level)} "
                     + marked(_cs(cs_low, cs_high, e.n_labels, a.get('basis'), n_pool), mark))
    if all(isinstance(a.get(k), (int, float)) for k in ("exact_low", "exact_high")):
        # as estimate's row (QA: status left it out, which before 30 labels left no
        # anytime interval at all where estimate showed one)
        names.append(f"{interval_name(EXACT_ANYTIME, level)} "
                     f"{_interval_text(a['exact_low'], a['exact_high'])}")
    if e.low is not None and e.high is not None:
        names.append(f"{interval_name(BOOTSTRAP, level)} {_interval_text(e.low, e.high)}")
    if any(UNBOUNDED in n or "see the note" in n for n in names):
        # the note the intervals point to, as estimate prints it below its table
        from activetest.session.estimate_base import POINT_WIDTH
        from activetest.session.estimate_notes import no_spread_line, whole_range_note

        why = a.get("basis_note")
        if why:
            names.append(f"note: {whole_range_note(why, level)}")
        elif fixed_low is not None and fixed_high is not None \
                and fixed_high - fixed_low <= POINT_WIDTH:
            # every labelled term the same: estimate's own sentence (QA: a generic one)
            what = e.metric.replace("_", " ")
            if e.method.startswith("lure:"):
                what = f"{e.method.split(':', 1)[1]}'s {what}"
            exact = [a.get(k) if isinstance(a.get(k), (int, float)) else None
                     for k in ("exact_low", "exact_high")]
            names.append(f"note: {no_spread_line(what, level, *exact)}")
        else:
            names.append("note: unbounded: the labelled terms have no spread yet, so no "
                         "interval is claimed until they differ (`activetest estimate` says "
                         "more)")
    return names


def _stored_end(v: object) -> float | None:
    """A recorded interval's end: a number, or the string an infinite one is stored as
    ("inf", "-inf"); None where there is none (or it is anything else)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if v in ("inf", "-inf"):
        return float(v)  # type: ignore[arg-type]
    return None


def _print_compared(st: Any) -> None:
    """The compared targets' LURE and the paired LURE differences of the last recorded
    estimate, named as `estimate` names them (none where that estimate had none: an
    older one's are not shown as if current). The stale line after them covers them:
    they were recorded with the target's rows, seeing the same labels and judgments."""
    lure_ids = [e.id for e in st.last_estimates if e.method == "lure"]
    if not lure_ids:
        return
    last = max(lure_ids)  # one estimate's rows are written together, comparisons last
    rows = [e for e in st.last_estimates if e.id > last
            and e.method.startswith(("lure:", "difference:"))]
    head = {e.metric: e.estimate for e in st.last_estimates if e.method == "lure"}
    others = {e.method.split(":", 1)[1] + "|" + e.metric: e.estimate for e in rows
              if e.method.startswith("lure:")}
    for e in sorted(rows, key=lambda e: e.id):
        kind, spec = e.method.split(":", 1)
        if kind == "lure":
            a = e.details.get("anytime")
            d = _decimals(e, a)
            outside = _outside_sure(a if isinstance(a, dict) else None, d)  # as estimate's
            _out.print(f"last estimate ({_when(e.at)}, {e.n_labels} labels): {e.metric} compared "
                       f"target {_escape(spec)}: LURE {_num(e.estimate, d)}"
                       f"{f' ({outside})' if outside else ''}")
        else:
            # what the difference subtracts, where the target's estimate above is an
            # adaptive design's own (with its control): the numbers add up as estimate
            # and the report say (QA: status left 0.3841 - 0.6588 = -0.2548 unexplained)
            t_lure, mine = e.details.get("target_lure"), head.get(e.metric)
            other = others.get(f"{spec}|{e.metric}")
            basis = "paired LURE, same labels"
            if isinstance(t_lure, (int, float)) and mine is not None and other is not None \
                    and abs(mine - t_lure) >= 5e-5:
                basis += (f": the target's LURE {_num(t_lure)} minus the other's "
                          f"{_num(other)}; the target's estimate above, {_num(mine)}, is the "
                          f"design's own with its control, also unbiased")
            a = e.details.get("anytime")
            a = a if isinstance(a, dict) else {}
            if a.get("estimate_outside_sure") is True and all(
                    isinstance(a.get(k), (int, float)) for k in ("sure_low", "sure_high")):
                # as estimate marks it at the number (kept: unbiased), with its note below
                from activetest.session.interval_names import outside_sure_mark

                basis += "; " + outside_sure_mark(a["sure_low"], a["sure_high"])
            _out.print(f"last estimate ({_when(e.at)}, {e.n_labels} labels): {e.metric} difference "
                       f"target - {_escape(spec)} = {_num(e.estimate, _decimals(e, a))} "
                       f"({_escape(basis)})")
        for name in _named_intervals(e, st.n_items):
            _out.print(f"  {name}")
        for key in ("sure_bounds", "sure_outside"):  # as estimate's notes: the compared
            # target's sure bounds, and the note a difference's mark points to
            if isinstance(e.details.get(key), str):
                _out.print(f"  note: {_escape(e.details[key])}")


def _min_labels() -> int:
    """The labels from which the anytime interval is claimed (and uniform's runs are
    projected)."""
    from activetest.stats.confseq import MIN_LABELS

    return int(MIN_LABELS)


def _print_runs(s: Any) -> None:
    """A harness session's target runs, and a uniform sample's projected runs."""
    from activetest.session.harness import runs_summary

    r = runs_summary(s)
    if r is None:
        return
    waiting = r.drawn - r.target_runs - r.person_labels
    # the count is of results recorded: a run in flight, or one that ended without a
    # result (a killed eval's samples), cost a run that is not counted (QA)
    pending = ("" if waiting <= 0 else
               f"; {waiting} drawn item(s) without a result (not run yet, in flight, or "
               f"ended without one, as in a killed eval: not counted as spent)")
    _out.print(f"target runs spent: {r.target_runs} (results read from {r.tool} as labels); "
               f"{r.person_labels} label(s) from people; {r.drawn} item(s) drawn{pending}")
    if r.labels_from is not None:
        _out.print(f"  labels: {_escape(r.labels_from)}")
    elif r.tasks:  # kept when an eval started, before any score (QA: named by init only)
        kind = "inspect task" if r.tool.startswith("inspect") else f"{r.tool} task"
        _out.print(f"  the target's runs are of {_escape(kind)}{'s' if len(r.tasks) > 1 else ''} "
                   f"{_escape(', '.join(repr(t) for t in r.tasks))} (no result read yet)")
    if r.uniform_runs is not None and r.width is not None:
        # the width is the last recorded estimate's: said with its labels where more came
        # since (QA: an old width read beside the current count of runs)
        now = r.target_runs + r.person_labels
        of = ("" if r.width_labels is None or r.width_labels >= now else
              f" of the last estimate, at {r.width_labels} labels: `activetest estimate` "
              f"for the {now} now")
        _out.print(f"  a uniform sample would need about {r.uniform_runs} target runs for the "
                   f"same anytime interval width {r.width:.4f}{of} (a projection: the median "
                   f"of seeded simulated uniform runs, error rate = the estimate, with the "
                   f"session's confidence-sequence family)")
    elif r.width is not None and r.width <= 0:
        # QA: at a census (every item run) the anytime interval is a point and nothing is
        # projected; status said "not projected yet (it needs an estimate from 30 labels
        # or more ...)" beside a last estimate from 60
        _out.print(f"  a uniform sample's runs for the same width: none to project (the "
                   f"last estimate's anytime interval, at {r.width_labels} labels, is a "
                   f"point: the pool's value is known)")
    elif r.target_runs + r.person_labels >= _min_labels():
        # QA: after an inspect eval stopped on its own estimate (32 runs) this said it
        # "needs an estimate from 30 labels or more": none is recorded yet
        _out.print(f"  a uniform sample's runs for the same width: not projected yet (no "
                   f"recorded estimate of the {r.target_runs + r.person_labels} labels has "
                   f"an anytime interval: `activetest estimate {_escape(str(s.store.path))}` "
                   f"records one)")
    elif r.target_runs or r.person_labels:
        # QA: the README's loop says status shows uniform's runs; below 30 labels it
        # printed nothing, and did not say why
        from activetest.stats.confseq import MIN_LABELS

        _out.print(f"  a uniform sample's runs for the same width: not projected yet (it "
                   f"needs an estimate from {MIN_LABELS} labels or more, where the anytime "
                   f"interval starts: `activetest estimate`)")
