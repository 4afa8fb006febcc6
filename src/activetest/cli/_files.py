"""``activetest export``, ``import`` and ``labelstudio-config``: labels through files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from activetest.cli._app import (
    LabelFileFormat,
    NoPredictions,
    OverwriteSheet,
    Resolve,
    SessionArg,
    Timeout,
    Which,
    _escape,
    _open,
    _out,
    _print_waiting,
    _rows_written,
    _user_errors,
    app,
    out_path,
    replaced_note,
)


@app.command("export")
@_user_errors
def export_(
    session: SessionArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write (.csv, .tsv, .jsonl, "
                                      ".json = Label Studio).", show_default=False,
                                      parser=out_path, metavar="<path>")],
    format: Annotated[LabelFileFormat | None, typer.Option(help="File format (default: from "
                                                        "the suffix).",
                                                        show_default=False)] = None,
    which: Annotated[Which, typer.Option(help="Which items.")] = Which.pending,
    no_predictions: NoPredictions = False,
    overwrite: OverwriteSheet = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Write selected items to a file for labelling elsewhere (sheet or Label Studio).

    Sheets list the items in draw order with their draw step: the estimate uses
    labels in that order, so an item left unlabelled holds back every later one.
    An existing file with labels filled in is not written over without --overwrite.
    """
    from activetest.session.exchange import stored_sheet_answers

    with _open(session, busy_timeout) as s:
        fmt = None if format is None else format.value
        replaced = stored_sheet_answers(s, out, fmt, overwrite=overwrite)
        count = s.export(out, format=fmt, which=which.value,
                         predictions=not no_predictions, overwrite=overwrite)
        _out.print(f"wrote {_rows_written(s, count, f'{which.value} item(s)')} to "
                   f"{_escape(str(out))}")
        if replaced:
            _out.print(replaced_note(out, replaced))


@app.command("labelstudio-config")
@_user_errors
def labelstudio_config(
    session: SessionArg,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the XML to this file "
                                             "instead of printing it.",
                                             show_default=False,
                                             parser=out_path, metavar="<path>")] = None,
    busy_timeout: Timeout = 5.0,
) -> None:
    """The Label Studio labelling config for this session's task (paste it into the project).

    In Label Studio: Project -> Settings -> Labeling Interface -> Code. Its names
    match the tasks `select --out tasks.json` writes and what `import` reads back.
    """
    from activetest.session.labelio import labelstudio_config as config

    with _open(session, busy_timeout) as s:
        xml = config(s.task)
    if out is None:
        print(xml, end="")
    else:
        from activetest.session.labels import refuse_session_file

        refuse_session_file(out, session)
        out.write_text(xml, encoding="utf-8")
        _out.print(f"wrote the labelling config to {_escape(str(out))}")


@app.command("import")
@_user_errors
def import_(
    session: SessionArg,
    files: Annotated[list[Path], typer.Argument(
        help="Labels: a sheet (CSV/TSV/JSONL/JSON with item_id and label columns) or a Label "
             "Studio JSON export; or, for a --target lm-eval session, lm-eval samples files "
             "(several: one per task).", show_default=False)],
    format: Annotated[LabelFileFormat | None, typer.Option(help="File format (default: from the "
                                                        "suffix).", show_default=False)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace existing different "
                                            "labels (the old ones stay in the "
                                            "history).")] = False,
    id_column: Annotated[str, typer.Option(help="Sheet column with the item ids.")] = "item_id",
    label_column: Annotated[str, typer.Option(help="Sheet column with the labels.")] = "label",
    from_name: Annotated[str | None, typer.Option(
        help="Label Studio: the <Choices> control to read (when the project has several).",
        show_default=False)] = None,
    label_base: Annotated[int | None, typer.Option(
        help="The file writes classes as numbers counted from 0 or from 1 (the terminal "
             "labeller's keys count from 1). Without it, only class names and label words "
             "are read and numbers are refused.", show_default=False)] = None,
    resolve: Annotated[Resolve, typer.Option(
        help="Items the file labels differently (annotators who disagree): skip leaves "
             "them unlabelled, latest takes the label given last (by the instant of its "
             "time, zones honoured; by place in the file where a time is missing or zoned "
             "and zone-less times mix), majority the most frequent, one vote per annotator "
             "(their latest; a tie stays unlabelled). Reported either way. A Label Studio "
             "annotation marked ground truth settles its item whatever this says (two that "
             "differ leave it unlabelled).")] = Resolve.skip,
    metric_key: Annotated[str | None, typer.Option(
        "--metric-key", help="lm-eval results: the per-item metric read as the label "
        "(default: the session's, chosen at init).", show_default=False)] = None,
    ids_are_positions: Annotated[bool, typer.Option(
        "--ids-are-positions", help="Confirm a sheet's join by ids that look like "
        "positions: its item ids and the pool's both row numbers (0..N-1 or 1..N), and "
        "the rows carry no content_check and no cell of the item's text. Refused "
        "otherwise (unless init confirmed such a join), as a sheet made from a shuffled, "
        "filtered or other split's copy of the pool would label other items. Only where "
        "the sheet's ids are this pool's own. docs/history.md.")] = False,
    trust_labels_from_people: Annotated[bool, typer.Option(
        "--trust-labels-from-people", help="A --target lm-eval or --target inspect "
        "session: also take the file's labels for drawn items the target has not run, as "
        "its results (a judgment made elsewhere); refused without it, since such an item "
        "is never run afterwards (lm-eval is not given it, ActiveStopping skips it).")] = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Import labels from a file (or a --target lm-eval session's lm-eval results).

    Any bad record (unknown item or class, an item never selected, a stored label
    that differs without --overwrite, a row whose content_check says it showed
    another item or whose text was edited) imports nothing. Items that annotators
    label differently do not block the rest: they are listed and left out, or
    settled by --resolve (or by a Label Studio ground-truth annotation). Each
    annotator's label is kept for agreement (`status` shows it).
    """
    for f in files:  # (QA: an empty samples file was read as an unanswered sheet)
        if f.is_file() and f.stat().st_size == 0:
            raise ValueError(f"{f}: the file is empty: it holds no labels and no lm-eval "
                             f"records (a run that wrote nothing yet?)")
    with _open(session, busy_timeout) as s:
        from activetest.session.harness import harness_config, harness_tool

        # a read-only session: before any file is read (QA: a file's problems were said,
        # a large file read whole, and only then "the session file is read-only")
        s.store.check_writable()
        tool = harness_tool(s)
        missing = next((f for f in files if not f.exists()), None)
        if missing is not None:
            raise ValueError(_missing_refusal(session, missing, tool))
        log = next((f for f in files if f.suffix.lower() == ".eval"), None)
        if log is not None and format is None:
            raise ValueError(_inspect_log_refusal(log, tool))
        folder = next((f for f in files if f.is_dir()), None)
        if folder is not None and not (tool == "lm-eval" and format is None):
            raise ValueError(_folder_refusal(folder, tool, format))
        if harness_config(s) is not None and format is None and _lmeval_files(files):
            if trust_labels_from_people:
                raise ValueError("--trust-labels-from-people is about labels from people "
                                 "(a sheet or a Label Studio export); lm-eval's results "
                                 "are the target's own")
            if ids_are_positions:  # (QA: accepted and ignored)
                raise ValueError("--ids-are-positions is about label sheets keyed by row "
                                 "numbers; lm-eval's samples are joined by their "
                                 "documents' content, so it has nothing to confirm")
            _import_lmeval(s, files, metric_key, overwrite)
            return
        if len(files) != 1:
            raise ValueError(f"import reads one labels file at a time, got {len(files)}")
        file = files[0]
        try:
            result = s.import_file(file, format=None if format is None else format.value,
                                   overwrite=overwrite, id_column=id_column,
                                   label_column=label_column, from_name=from_name,
                                   label_base=label_base, resolve=resolve.value,
                                   trust_people=trust_labels_from_people,
                                   ids_are_positions=ids_are_positions)
        except ValueError as exc:
            h = harness_config(s)
            if h is not None and h.get("tool") == "lm-eval" and format is None:
                # QA: a wrong file given to an lm-eval session was refused as a sheet
                # only ("no column 'item_id'"), not said to be no lm-eval results file
                raise ValueError(f"{exc}; this session's target runs in lm-eval, whose "
                                 f"results are imported from its samples_<task>_<date>.jsonl "
                                 f"files (written with --log_samples), which {file.name} is "
                                 f"not: a sheet or a Label Studio export is read as people's "
                                 f"labels") from None
            raise
        # a graded comparison's judgments of compared answers are said apart from the
        # target's labels (QA: "16 new label(s)" counted both together)
        if result.position_note is not None:
            _out.print(f"note: {_escape(result.position_note)}")
        judged = (f"judged {result.judged} compared answer(s) (changed "
                  f"{result.judged_changed}), " if result.judged or result.judged_changed
                  else "")
        _out.print(f"imported {result.added} new label(s), changed {result.changed}, "
                   f"{judged}{result.unchanged} already present; {s.n_pending()} selected "
                   f"item(s) still pending")
        if not (result.added or result.changed or result.judged or result.judged_changed
                or result.unchanged or result.conflicts):
            _out.print(f"nothing in {_escape(file.name)} was a label: no row has its label "
                       f"filled in (a sheet from `select --out` not answered yet? fill in "
                       f"its label column, then import it)")
        if result.votes_kept:
            _out.print(f"kept {result.votes_kept} annotator label(s) for agreement "
                       f"(`activetest status` shows it once two annotators have labelled)")
        if result.taken_back or result.answers_undone:
            _out.print(f"took back {result.taken_back} label(s) and kept "
                       f"{result.answers_undone} annotator answer(s) undone, as "
                       f"{_escape(file.name)} marks them (its undone column: undos of the "
                       f"command whose file was put back; the history keeps each label)")
        if result.unnamed and (result.votes_kept or result.conflicts):
            _out.print(f"note: {result.unnamed} label(s) name no annotator (the file carries "
                       f"no identity for them: no annotator column, an empty or blank "
                       f"annotator cell, or a Label Studio user with neither id nor "
                       f"e-mail): each counts as a voter of its own, and they are not kept "
                       f"for agreement")
        labelled = {k: s.task.class_names[v] for k, v in s.labels().items()}
        _print_conflicts(result.conflicts, resolve.value, labelled)
        _print_waiting(s.waiting())


def _folder_refusal(folder: Path, tool: str | None, format: LabelFileFormat | None) -> str:
    """Why ``import`` does not read ``folder`` for a session whose target runs in
    ``tool`` (None: no harness): what it reads instead, which formats read a folder
    (QA: a folder was "cannot tell the format from the suffix ''")."""
    formats = ", ".join(f.value for f in LabelFileFormat)
    head = (f"{folder} is a folder, not a file: import reads a label file, a sheet (CSV, "
            f"TSV, JSONL, JSON) or a Label Studio export, whose format it tells from the "
            f"suffix or from --format ({formats}); give the file in the folder")
    if tool == "lm-eval":  # only reached with --format: without it the folder is read
        return (f"{head}. This session's target runs in lm-eval: a folder of its samples "
                f"files (samples_<task>_<date>.jsonl, written with --log_samples) is read "
                f"without --format; --format {format.value if format else ''} names a "
                f"labels file's format")
    if tool == "inspect":
        return (f"{head}. This session's target runs in inspect_ai: its labels are the "
                f"eval's scores, recorded by activetest.inspect.ActiveStopping while the "
                f"eval runs, not imported from the eval's log folder")
    return (f"{head}. Folders are read only as lm-eval samples files "
            f"(samples_<task>_<date>.jsonl) by a --target lm-eval session's import, and as "
            f"inspect_ai logs by `init --from-inspect`; this session's target runs in "
            f"neither")


def _missing_refusal(session: Path, path: Path, tool: str | None) -> str:
    """Why ``import`` reads nothing from ``path``, which does not exist: said as such, with
    what a pattern left unexpanded means, and for a session whose target runs in lm-eval,
    that a run writes its samples files only when it ends (QA: a killed run's round was
    "label file not found: round2/*/samples_*.jsonl", and its missing folder "cannot
    tell the format from the suffix ''")."""
    from activetest.formats.tables import missing_file

    head = missing_file(path, "lm-eval samples file of a round" if tool == "lm-eval"
                        else "label file to import")
    if tool == "lm-eval":
        return (f"{head}. lm_eval writes its samples files (and the folder holding them) "
                f"only when its run ends: a run that was killed, failed or is still running "
                f"wrote none, and nothing was imported. Run the round again: `activetest "
                f"select {session} --n 0 --emit lm-eval --out samples.json` writes the drawn "
                f"items still waiting for a run")
    return f"{head}; nothing was imported"


def _inspect_log_refusal(log: Path, tool: str | None) -> str:
    """Why ``import`` does not read an inspect_ai ``.eval`` log, and what does (QA: given
    to an inspect session it was "cannot tell the format from the suffix '.eval'; name it
    with --format", which no format reads)."""
    head = (f"{log} is an inspect_ai log (.eval), not a label file: import reads a sheet "
            f"(CSV, TSV, JSONL, JSON) or a Label Studio export; nothing was imported")
    if tool == "inspect":
        return (f"{head}. This session's target runs in inspect_ai: its labels are the "
                f"eval's scores, recorded by activetest.inspect.ActiveStopping while the eval "
                f"runs; to make a session again from its logs, `activetest init ... "
                f"--from-inspect LOG_DIR` (docs/harness_inspect.md)")
    if tool == "lm-eval":
        return (f"{head}. This session's target runs in lm-eval: its results are imported "
                f"from the samples_<task>_<date>.jsonl files lm_eval --log_samples writes")
    return (f"{head}. An inspect_ai log gives a graded session its answers (`init --target "
            f"answers:{log.name}`), other models' results (`init --history`), or an inspect "
            f"session made again from its evals' logs (`init --target inspect --from-inspect`)")


def _lmeval_files(files: Sequence[Path]) -> bool:
    from activetest.formats.lmeval import looks_like_lmeval

    return all(f.is_dir() or looks_like_lmeval(f) for f in files)


def _import_lmeval(s: Any, files: Sequence[Path], metric_key: str | None,
                   overwrite: bool) -> None:
    from activetest.session.harness import import_lmeval

    r = import_lmeval(s, files, metric_key=metric_key, overwrite=overwrite)
    _out.print(f"imported {r.added} target run(s) as labels ({r.metric}, from "
               f"{_escape(r.metric_from)}), {r.unchanged} already present; "
               f"{s.n_pending()} drawn item(s) still wait for a run")
    for where in r.cut:
        _out.print(f"skipped the unfinished last record at {_escape(where)} (a run killed "
                   f"while writing?): its item waits for the next run")
    if r.other_filters:
        theirs = ", ".join(f"{n} of filter {f!r}" for f, n in r.other_filters)
        _out.print(f"skipped {sum(n for _, n in r.other_filters)} record(s) of other lm-eval "
                   f"filters ({_escape(theirs)}): the session reads filter "
                   f"{_escape(repr(r.filter))}")
    if r.history_note is not None:
        _out.print(f"note: {_escape(r.history_note)}")
    _print_waiting(s.waiting())


def _print_conflicts(conflicts: Sequence[Any], resolve: str,
                     labelled: Mapping[str, str] | None = None) -> None:
    """The disagreements an import met: those ``resolve`` settled, those it left out
    (an item already labelled, ``labelled``: item id -> class name, keeps its label, as
    said: QA, a re-import after ``--resolve latest`` asked to label them again)."""
    from activetest.session.labels import GROUND_TRUTH, GROUND_TRUTHS_DIFFER

    labelled = labelled or {}
    truth = [c for c in conflicts if c.settled is not None and c.rule == GROUND_TRUTH]
    settled = [c for c in conflicts if c.settled is not None and c.rule != GROUND_TRUTH]
    kept = [c for c in conflicts if c.settled is None and c.item_id in labelled]
    left = [c for c in conflicts if c.settled is None and c.item_id not in labelled
            and c.rule != GROUND_TRUTHS_DIFFER]
    truths = [c for c in conflicts if c.settled is None and c.item_id not in labelled
              and c.rule == GROUND_TRUTHS_DIFFER]
    if kept:
        _out.print(f"{len(kept)} disagreement(s) left as they are labelled already:")
        for c in kept[:20]:
            _out.print(f"  {_escape(c.describe())}; keeps {_escape(repr(labelled[c.item_id]))}")
        if len(kept) > 20:
            _out.print(f"  ... and {len(kept) - 20} more")
    if truth:
        _out.print(f"{len(truth)} disagreement(s) settled by the annotation marked ground "
                   f"truth (the other annotators' votes are kept for agreement):")
        for c in truth[:20]:
            _out.print(f"  {_escape(c.describe())} -> {_escape(repr(c.settled))}")
        if len(truth) > 20:
            _out.print(f"  ... and {len(truth) - 20} more")
    if settled:
        _out.print(f"{len(settled)} disagreement(s) settled by --resolve {resolve}:")
        for c in settled[:20]:
            _out.print(f"  {_escape(c.describe())} -> {_escape(repr(c.settled))}")
    if truths:
        _out.print(f"[bold yellow]{len(truths)} item(s) left out[/]: annotations marked "
                   f"ground truth disagree, and which is right is not guessed (--resolve "
                   f"does not choose between them): mark one ground truth in Label Studio "
                   f"and export again, or label them in the terminal (`activetest label`):")
        for c in truths[:20]:
            _out.print(f"  {_escape(c.describe())}")
        if len(truths) > 20:
            _out.print(f"  ... and {len(truths) - 20} more")
    if left:
        if resolve == "majority":  # what is left is a tie: majority again settles nothing
            why = "ties: no label has more votes"
            how = ("label them in the terminal (`activetest label`), or import again with "
                   "--resolve latest")
        else:
            why = "the file labels them differently"
            how = ("label them in the terminal (`activetest label`), or import again with "
                   "--resolve latest or --resolve majority")
        _out.print(f"[bold yellow]{len(left)} item(s) left out[/]: {why} ({how}):")
        for c in left[:20]:
            _out.print(f"  {_escape(c.describe())}")
        if len(left) > 20:
            _out.print(f"  ... and {len(left) - 20} more")
