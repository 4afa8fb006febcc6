"""``activetest select``: draw the next items (and ``--emit lm-eval``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from activetest.cli._app import (
    LabelFileFormat,
    NoPredictions,
    NoProgress,
    OverwriteSheet,
    SessionArg,
    Timeout,
    _draw,
    _escape,
    _open,
    _out,
    _rows_written,
    _user_errors,
    app,
    out_path,
    replaced_note,
)


def _snippet(item: Any, width: int = 70) -> str:
    """The start of an item's text as ``select`` lists it: its fields joined by `` | ``,
    empty ones left out (QA: a harness session's draws, which have no answer or
    references yet, read ``What is 2 plus 7? | |``)."""
    text = " | ".join(t for v in item.fields.values() if (t := " ".join(str(v).split())))
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command()
@_user_errors
def select(
    session: SessionArg,
    n: Annotated[int, typer.Option("--n", "-n", help="How many items to draw (with --emit "
                                   "lm-eval, 0 draws none and writes the drawn items still "
                                   "without a run).", show_default=False)],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the items to this "
                                             "file (.csv, .tsv, .jsonl, .json = Label Studio).",
                                             show_default=False,
                                             parser=out_path, metavar="<path>")] = None,
    format: Annotated[LabelFileFormat | None, typer.Option(help="File format (default: from "
                                                        "the suffix).",
                                                        show_default=False)] = None,
    no_predictions: NoPredictions = False,
    emit: Annotated[str | None, typer.Option(
        "--emit", help="lm-eval: write --out as lm-evaluation-harness's --samples file "
                       "(sessions created with --target lm-eval).", show_default=False)] = None,
    overwrite: OverwriteSheet = False,
    busy_timeout: Timeout = 5.0,
    no_progress: NoProgress = False,
) -> None:
    """Draw the next N items to label (sequential draws from the stored sampler)."""
    from activetest.session.labels import check_export_target, refuse_session_file

    fmt = None if format is None else format.value
    if emit is not None and (emit != "lm-eval" or out is None):
        raise ValueError("--emit takes lm-eval, with --out samples.json")
    if out is not None:  # before drawing: a draw never seen is wasted
        if emit is None:  # a filled sheet is checked against the session, below
            check_export_target(out, fmt, session=session, overwrite=True)
        else:
            refuse_session_file(out, session)
    with _open(session, busy_timeout) as s:
        replaced = 0
        if out is not None and emit is None:  # (QA: an imported sheet was refused every
            # round of the select / fill / import loop; one answer not stored still is)
            from activetest.session.exchange import stored_sheet_answers

            replaced = stored_sheet_answers(s, out, fmt, overwrite=overwrite)
        waiting = s.n_pending()
        if emit is not None:
            from activetest.session.harness import harness_tool

            if harness_tool(s) != "lm-eval":
                raise ValueError(f"{session}: --emit lm-eval needs a session created with "
                                 f"--target lm-eval")
        elif out is not None:  # a sheet for people: a harness draw has no answer to judge
            from activetest.session.harness import check_person_labelling

            check_person_labelling(s, None, "select --out")
        if emit is not None and n == 0:  # the pending draws again (a run that died): the
            # session is only read (a read-only session too), and the message says that
            # no item was drawn (it said "selected 0 item(s)")
            if not waiting:
                raise ValueError(f"{session}: no drawn item waits for a run, so --n 0 has "
                                 f"nothing to write: draw new items with --n N")
            _emit_lmeval(s, session, [], out)
            _out.print(f"drew no item (--n 0; the session is unchanged); wrote the "
                       f"{waiting} drawn item(s) that still wait for a run")
            return
        left = s.n_items - s.store.n_acquired()
        if emit is not None and waiting and n > left:
            raise ValueError(f"{session}: only {left} of {s.n_items} items remain undrawn, "
                             f"so --n {n} cannot be drawn; --n 0 writes the {waiting} drawn "
                             f"item(s) still waiting for a run, drawing none")
        drawn = _draw(s, n, not no_progress)  # a bar of the draws on a terminal
        if emit is not None:
            _emit_lmeval(s, session, drawn, out)
        elif out is not None:
            try:
                count = s.export(out, format=fmt, acquisitions=drawn,
                                 predictions=not no_predictions, overwrite=overwrite)
            except OSError as exc:
                raise ValueError(f"{out}: cannot write the file ({exc}); the {len(drawn)} "
                                 f"drawn item(s) are saved in the session: write them with "
                                 f"`activetest export {session} --out FILE`") from None
            what = (_rows_written(s, count, f"{len(drawn)} drawn item(s)")
                    if count != len(drawn) else f"{count} item(s)")
            _out.print(f"wrote {what} to {_escape(str(out))}")
            if replaced:
                _out.print(replaced_note(out, replaced))
        else:
            # q named (QA: a bare "q" column): the proposal probability of the draw
            table = Table("draw", "item id", "q (draw probability)", "text", box=None)
            for a in drawn:
                table.add_row(str(a.step), _escape(a.item_id), f"{a.q:.3g}",
                              _escape(_snippet(s.display_item(a.item_id))))
            _out.print(table)
        msg = f"selected {len(drawn)} item(s) (draws {drawn[0].step}..{drawn[-1].step})"
        if waiting:
            msg += f"; {waiting} earlier item(s) still wait for labels"
        _out.print(msg)
        from activetest.session.draw import uniform_batch_note

        note = uniform_batch_note(s.store, drawn)
        if note:
            from activetest.stats.adaptive.design import SCHEDULE_FIRST

            _out.print(_escape(f"{note}. Label them before drawing more; drawing "
                               f"{SCHEDULE_FIRST} at a time (--n {SCHEDULE_FIRST}) lets it "
                               f"learn from the first labels"))


def _emit_lmeval(s: Any, session: Path, drawn: Sequence[Any], out: Any) -> None:
    """Write the --samples file of these draws (all pending ones: a rerun is harmless)."""
    from activetest.formats.lmeval_results import tasks_argument
    from activetest.session.harness import emit_lmeval

    try:
        mapping = emit_lmeval(s, s.pending() or drawn, out)
    except OSError as exc:
        raise ValueError(f"{out}: cannot write the file ({exc}); the {len(drawn)} drawn "
                         f"item(s) are saved and pending: the next `select --emit lm-eval` "
                         f"writes them too") from None
    n = sum(len(v) for v in mapping.values())
    _out.print(f"wrote {n} document(s) of {len(mapping)} task(s) to {_escape(str(out))}")
    _out.print(f"run: lm_eval --model ... --tasks {_escape(tasks_argument(mapping))} "
               f"--samples {_escape(str(out))} --log_samples --output_path OUT")
    _out.print(f"then: activetest import {_escape(str(session))} OUT/*/samples_*.jsonl")
