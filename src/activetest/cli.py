"""The ``activetest`` command line: a thin layer over :mod:`activetest.session`.

Every command parses its arguments, calls the Python API and prints. User errors
(bad files, unknown labels, a locked or newer session file, ...) print one clear
message to stderr and exit with code 2; nothing already collected is lost.
"""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import sqlite3
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from activetest.errors import UserFacingError
from activetest.redaction import redact

__all__ = ["app", "main"]

app = typer.Typer(
    name="activetest", no_args_is_help=True, add_completion=False,
    help="Label-efficient evaluation of language models by active testing.\n\n"
         "Typical session: `activetest init S.db --pool pool.csv --task sst2 --surrogate "
         "smollm2-135m --target gemma3-270m`, then `activetest select S.db --n 20`, "
         "`activetest label S.db`, `activetest estimate S.db`. Try `activetest demo` first.")

# emoji=False: item text such as ":warning:" is shown as written, never as an emoji
# (markup is escaped by _escape wherever item or file text is printed)
_out = Console(highlight=False, soft_wrap=True, emoji=False)
_err = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)

F = TypeVar("F", bound=Callable[..., Any])


class Metric(str, Enum):
    """Values of ``--metric``."""

    log_loss = "log_loss"
    error_rate = "error_rate"
    both = "both"


class Acq(str, Enum):
    """Values of ``--acquisition``."""

    adaptive = "adaptive"
    adaptive_pe = "pe_adaptive"
    fixed_mix = "fixed_mix"
    ce = "ce"
    pe = "pe"
    zero_one = "zero_one"
    uniform = "uniform"
    graded_fixed = "graded_fixed"


class ExportFormat(str, Enum):
    """Values of ``--format`` for exports."""

    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    json = "json"
    labelstudio = "labelstudio"


class ImportFormat(str, Enum):
    """Values of ``--format`` for imports."""

    csv = "csv"
    tsv = "tsv"
    jsonl = "jsonl"
    json = "json"
    labelstudio = "labelstudio"


class OutFormat(str, Enum):
    """Values of ``estimate --format``."""

    text = "text"
    json = "json"
    eee = "eee"


class Resolve(str, Enum):
    """Values of ``import --resolve``."""

    skip = "skip"
    latest = "latest"
    majority = "majority"


class Which(str, Enum):
    """Values of ``export --which``."""

    pending = "pending"
    selected = "selected"
    labelled = "labelled"


def _user_errors(fn: F) -> F:
    """Turn user errors into one message on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt as exc:
            from activetest.supervise import Terminated

            if isinstance(exc, Terminated):  # SIGTERM, or the supervising parent died
                _err.print("terminated; everything answered so far is saved")
                code = 128 + int(signal.SIGTERM)
            else:
                _err.print("interrupted; everything answered so far is saved")
                code = 130
            # Exit now: threads blocked in native code or in a network read (a server
            # that never answers) would otherwise hold the interpreter's exit. Every
            # answer is already committed; files are written by rename.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        # every message is redacted: no credential from a URL or a server reaches the terminal
        except (ValueError, ImportError, UserFacingError) as exc:
            _err.print(f"[bold red]error:[/] {_escape(redact(str(exc)))}")
            raise typer.Exit(2) from None
        except sqlite3.DatabaseError as exc:  # e.g. a damaged session file
            _err.print(f"[bold red]error:[/] "
                       f"{_escape(redact(_db_error(kwargs.get('session'), exc)))}")
            raise typer.Exit(2) from None
        except OSError as exc:  # a missing file, a full disk, a folder that cannot be written
            _err.print(f"[bold red]error:[/] {_escape(redact(_os_error(exc)))}")
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


# Terminal control characters (C0 but newline and tab, DEL, C1) and the bidirectional
# overrides that reorder what is shown: from item text they could clear the screen,
# retitle the window or disguise a label, so they are shown as visible escapes.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _db_error(session: Any, exc: sqlite3.DatabaseError) -> str:
    """A SQLite error as one sentence naming the session file and what is wrong."""
    from activetest.session.store import damaged, write_error

    if session is None:
        return f"a session file cannot be read or written: {exc}"
    path = Path(session)
    if isinstance(exc, sqlite3.OperationalError):
        err = write_error(path, exc)
        if err is not exc:
            return str(err)
        return f"{path}: the session file cannot be read or written ({exc})"
    return str(damaged(path, exc))


def _os_error(exc: OSError) -> str:
    """An OSError as one sentence: what failed on which file, without errno clutter."""
    import errno

    if type(exc) is not OSError and exc.args and not exc.filename:
        return str(exc)  # our own messages (FileNotFoundError("no session file ..."))
    what = exc.strerror or str(exc)
    where = f"{exc.filename}: " if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        what = ("no space left on the disk (it is full); free some space and retry; nothing "
                "collected is lost")
    elif exc.errno == errno.EROFS:
        what += " (the file system is read-only)"
    return f"{where}{what}"


def _escape(text: str) -> str:
    """Text safe for the terminal: rich markup escaped, control characters made visible."""
    from rich.markup import escape

    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}" if ord(m.group(0)) < 256
                               else f"\\u{ord(m.group(0)):04x}", str(text)))


def _check_width(width: float | None) -> None:
    """Refuse a ``--target-width`` that no projection can be made for."""
    from activetest.session.estimate import MIN_TARGET_WIDTH

    if width is not None and not MIN_TARGET_WIDTH <= width < float("inf"):
        raise ValueError(f"--target-width must be a width from {MIN_TARGET_WIDTH:g} up, in the "
                         f"metric's units (e.g. 0.05 for an error rate), got {width!r}")


def _check_interval_options(n_boot: int | None, level: float | None) -> None:
    """Refuse ``--n-boot`` / ``--level`` out of range, naming the flag (not the keyword)."""
    from activetest.stats.bootstrap import MAX_BOOT

    if n_boot is not None and not 2 <= n_boot <= MAX_BOOT:
        raise ValueError(f"--n-boot must be from 2 to {MAX_BOOT:,}, got {n_boot:,} (more "
                         f"resamples change the interval by far less than its own width)")
    if level is not None and not 0 < level < 1:
        raise ValueError(f"--level must be a coverage between 0 and 1 (e.g. 0.95), got {level!r}")


def _cs(low: float, high: float) -> str:
    if low == float("-inf") and high == float("inf"):
        return "(from 30 labels)"
    return f"[{_num(low)}, {_num(high)}]"


def _num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}f}"


SessionArg = Annotated[Path, typer.Argument(help="The session file (SQLite).",
                                            show_default=False)]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="Hide progress bars.")]
Threads = Annotated[int | None, typer.Option(
    "--threads", help="CPU threads per llama.cpp model (default: half the cores, llama.cpp's "
                      "convention; surrogate and target score side by side; 1 is much faster on "
                      "a machine busy with other work).", show_default=False)]
NoPredictions = Annotated[bool, typer.Option(
    "--no-predictions", help="Leave out the surrogate's guess (sheet columns predicted, "
                             "predicted_prob; Label Studio pre-annotations), so that it "
                             "cannot sway the people labelling.")]
Timeout = Annotated[float, typer.Option("--busy-timeout", help="Seconds to wait for another "
                                        "process's lock on the session file.")]


def _open(path: Path, busy_timeout: float = 5.0, threads: int | None = None) -> Any:
    from activetest.session.workflow import Session

    return Session.open(path, busy_timeout=busy_timeout, threads=threads)


# --------------------------------------------------------------------------- init


def _neighbours_option(history: bool, on: bool, until: int | None, after: str | None
                       ) -> Any:
    """``init``'s neighbours' column options as ``Session.create`` takes them: False,
    True, or a :class:`~activetest.session.history_neighbours.NeighbourUpdate`.

    Raises:
        SessionError: a limited update without --history, without the column, or with
            bad values.
    """
    from activetest.session.history_neighbours import NeighbourUpdate
    from activetest.session.store import SessionError

    if until is None and after is None:
        return on
    if not history:
        raise SessionError("--history-neighbours-until/--history-neighbours-after shape the "
                           "neighbours' column of --history: give --history")
    if not on:
        raise SessionError("--history-neighbours-until/--history-neighbours-after with "
                           "--no-history-neighbours: there is no column to limit")
    if until is None:
        raise SessionError("--history-neighbours-after needs --history-neighbours-until")
    return NeighbourUpdate(until, "drop" if after is None else after)


@app.command()
@_user_errors
def init(
    session: SessionArg,
    pool: Annotated[Path, typer.Option("--pool", help="Pool file (CSV, TSV, JSONL, JSON, "
                                       "Parquet, FPB), or lm-eval samples file(s): a file, "
                                       "folder or glob, whose records' docs become the "
                                       "items.", show_default=False)],
    task: Annotated[str, typer.Option("--task", help="Built-in task name: classification "
                                      "(sst2, subj, fpb, hs, mmlu, demo) or graded, free-form "
                                      "answers judged by people (squad, answers); or a task "
                                      "file (.toml; kind = \"graded\" for a graded task).",
                                      show_default=False)],
    surrogate: Annotated[str, typer.Option("--surrogate", help="Surrogate model spec, e.g. "
                                           "smollm2-135m or table:preds.csv.",
                                           show_default=False)],
    target: Annotated[str, typer.Option("--target", help="Target model spec (the model "
                                        "being evaluated), e.g. gemma3-270m or "
                                        "table:samples_sst2_DATE.jsonl?filter=none.",
                                        show_default=False)],
    metric: Annotated[Metric, typer.Option(help="What to estimate.")] = Metric.log_loss,
    acquisition: Annotated[Acq | None, typer.Option(
        help="Acquisition. Classification: adaptive (default: the calibrated-residual "
             "design, learns the surrogate's calibration from the labels), pe_adaptive "
             "(surrogate only), fixed_mix; the paper's ce, pe (surrogate only), zero_one; "
             "uniform. Graded tasks: graded_fixed (default, also fixed_mix: the fixed design "
             "of the surrogate's loss spread), the paper's ce or zero_one (expected loss); "
             "--surrogate adaptive for the graded adaptive design, --surrogate uniform for "
             "uniform sampling.",
        show_default=False)] = None,
    proposal_floor: Annotated[float, typer.Option(
        "--proposal-floor", help="Share of the uniform distribution mixed into a fixed "
        "proposal, the paper's alpha (0 < floor <= 1); not the confidence level.")] = 0.1,
    alpha: Annotated[float | None, typer.Option(
        "--alpha", hidden=True, help="Deprecated name of --proposal-floor.",
        show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(help="Sampler seed (default: random, stored).",
                                             show_default=False)] = None,
    budget: Annotated[int | None, typer.Option(
        help="Labels you plan to collect (stored): the anytime confidence sequence is "
             "narrowest there (about 1.3x the fixed-budget interval). Default: 400, at most "
             "half the pool; at most two thirds of the pool is kept (tuned nearer the "
             "whole pool, it is far wider before).", show_default=False)] = None,
    shots: Annotated[int | None, typer.Option(help="In-context examples drawn (stratified) "
                                              "from --examples; default: all of them.",
                                              show_default=False)] = None,
    examples: Annotated[Path | None, typer.Option(help="Labelled in-context examples, "
                                                  "disjoint from the pool (graded tasks: "
                                                  "with an 'answer' column).",
                                                  show_default=False)] = None,
    judge_examples: Annotated[Path | None, typer.Option(
        help="Graded tasks with a judge:<model> surrogate: judged answers (columns "
             "question, answer, judgment).", show_default=False)] = None,
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", help="Graded tasks: another target whose answers to the same items "
                          "are judged too, for the paired comparison (answers:FILE or a "
                          "model; repeatable). Classification compares at estimate time.",
        show_default=False)] = None,
    target_shots: Annotated[int | None, typer.Option(
        help="How many of the examples the target sees (0: zero-shot; default: same as "
             "the surrogate).", show_default=False)] = None,
    id_column: Annotated[str | None, typer.Option(help="Pool column with item ids (default: "
                                                  "row numbers).", show_default=False)] = None,
    text_column: Annotated[str | None, typer.Option(help="Pool column with the text.",
                                                    show_default=False)] = None,
    label_column: Annotated[str | None, typer.Option(
        help="Pool column with known labels (used only by simulations).",
        show_default=False)] = None,
    pool_format: Annotated[str | None, typer.Option(
        help="Pool (and examples) file format when the suffix does not say: csv, tsv, "
             "jsonl, json, parquet, fpb.", show_default=False)] = None,
    encoding: Annotated[str | None, typer.Option(
        help="Text encoding of the pool and examples files (default utf-8).",
        show_default=False)] = None,
    label_base: Annotated[int | None, typer.Option(
        help="How the pool and examples files number classes if their labels are numbers: "
             "0 or 1 (the first class is written 0, or 1). Default: the task's label_base "
             "(built-in tasks: 0); without one, numeric labels are refused. Class names "
             "always work.", show_default=False)] = None,
    noise_target_nll: Annotated[float, typer.Option(help="Label-noise alarm: flag labels "
                                                    "with target NLL above this.")] = 5.0,
    noise_surrogate_nll: Annotated[float, typer.Option(help="... or surrogate NLL above "
                                                       "this.")] = 5.0,
    cache_dir: Annotated[Path | None, typer.Option(help="Score cache folder (default: "
                                                   "$ACTIVETEST_CACHE or ~/.cache/activetest).",
                                                   show_default=False)] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the score "
                                           "cache.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing session "
                                            "file.")] = False,
    from_inspect: Annotated[Path | None, typer.Option(
        "--from-inspect", help="An inspect_ai log of an eval run with "
        "activetest.inspect.ActiveStopping on a session made with these same options: its "
        "draws are replayed (and checked) and its scores recorded as labels.",
        show_default=False)] = None,
    threads: Threads = None,
    no_progress: NoProgress = False,
    history: Annotated[list[Path] | None, typer.Option(
        "--history", help="Other models' results on the same items (graded tasks: with "
        "--surrogate history; classification: with --metric error_rate): a response matrix, "
        "rows = models, columns = item ids, cells 0/1 or scores in [0, 1] (CSV, TSV, "
        "Parquet), or a folder of other models' lm-eval samples, inspect_ai logs or Every "
        "Eval Ever instance files (one model per file); repeatable. Joined by item id; see "
        "docs/history.md.", show_default=False)] = None,
    history_exclude: Annotated[list[str] | None, typer.Option(
        "--history-exclude", help="A --history row (model name) never to use: the target "
        "itself; repeatable.", show_default=False)] = None,
    history_neighbours: Annotated[bool, typer.Option(
        "--history-neighbours/--no-history-neighbours", help="With --history: add the "
        "similarity-weighted neighbours' column, learnt from the labels as they arrive "
        "(stores the joined response matrix); --no-history-neighbours: the design without "
        "it. docs/history.md.")] = True,
    history_neighbours_until: Annotated[int | None, typer.Option(
        "--history-neighbours-until", help="With --history: recompute the neighbours' "
        "column only at refits that know at most this many labels, then drop it (or "
        "freeze it: --history-neighbours-after); default: at every refit. docs/harness.md.",
        show_default=False)] = None,
    history_neighbours_after: Annotated[str | None, typer.Option(
        "--history-neighbours-after", help="With --history-neighbours-until: drop (set the "
        "column to 0: the features' model from then on) or freeze (keep it as last "
        "computed).", show_default=False)] = None,
) -> None:
    """Create a session: load the pool, score it with the surrogate (and target), store all.

    Predictions made elsewhere (table:FILE) join the pool by item id: the
    --id-column values, else the row numbers (0, 1, ...). lm-evaluation-harness
    --log_samples files are keyed by doc_id (<task>/<doc_id> for a folder or glob
    of per-subject files) and checked twice: each record's choices are matched to
    the task's classes by label word, and each pool item's text must occur in the
    record's doc. The simplest pool for them is the samples file itself: --pool
    samples_x.jsonl --target table:samples_x.jsonl (ids and texts agree by
    construction). "pool item 'N' is not this record's document" means the pool
    lists the documents in another order (or is another dataset): use the
    samples file as the pool, or give --id-column holding lm-eval's doc_id.
    Spec options: table:FILE?filter=NAME (several lm-eval filters),
    ?choices=positional (choice j is class j), ?match=id (no text check).
    """
    from activetest.session.workflow import Session

    if alpha is not None:  # the deprecated name still works
        _err.print("note: --alpha is deprecated; it is the proposal floor: use "
                   "--proposal-floor")
        proposal_floor = alpha
    pool_options = {k: v for k, v in (("id_column", id_column), ("text_column", text_column),
                                      ("label_column", label_column), ("format", pool_format),
                                      ("encoding", encoding), ("label_base", label_base))
                    if v is not None}
    neighbours = _neighbours_option(bool(history), history_neighbours,
                                    history_neighbours_until, history_neighbours_after)
    log = None
    if from_inspect is not None:  # read before creating: a bad log leaves nothing behind
        from activetest.inspect_stopping import read_log

        log = read_log(from_inspect)
    with Session.create(session, pool=pool, task=task, surrogate=surrogate, target=target,
                        metric=metric.value, acquisition=None if acquisition is None
                        else acquisition.value, proposal_floor=proposal_floor, seed=seed,
                        shots=shots,
                        examples=examples, target_shots=target_shots,
                        noise_target_nll=noise_target_nll,
                        noise_surrogate_nll=noise_surrogate_nll, pool_options=pool_options,
                        cache_dir=cache_dir, use_cache=not no_cache, overwrite=overwrite,
                        progress=not no_progress, threads=threads,
                        **({"budget": budget} if budget is not None else {}),
                        **({"judge_examples": judge_examples} if judge_examples else {}),
                        **({"compare": list(compare)} if compare else {}),
                        **({"history": list(history), "history_exclude":
                            list(history_exclude or ()),
                            "history_neighbours": neighbours} if history else {})) as s:
        cfg = s.session_config
        for line in (cfg.extra.get("history") or {}).get("messages", []):
            _out.print(_escape(line))
        if cfg.extra.get("history"):
            from activetest.session.history_neighbours import design_label

            _out.print(f"design: {design_label(cfg.extra['history'])}")
        _out.print(f"created session {_escape(str(session))}: {s.n_items} items, task "
                   f"{_escape(repr(s.task.name))}, {cfg.shots} in-context example(s)")
        _out.print(f"surrogate {_escape(cfg.surrogate)}, target {_escape(cfg.target)}, "
                   f"metric {cfg.metric}, acquisition {cfg.acquisition}, proposal floor "
                   f"{cfg.proposal_floor:g}, seed {cfg.seed}")
        for role in ("surrogate", "target"):
            prov = s.provenance(role)
            if prov.get("source") in ("table", "lm-eval samples"):
                _out.print(f"{role}: predictions read from the file ({prov['source']}); "
                           f"in-context examples: {prov.get('n_examples', 'unknown')} (as the "
                           f"file says, not --shots)")
        if log is not None:
            _restore_log(s, log, session)
        _out.print(f"next: activetest select {_escape(str(session))} --n 20")


def _restore_log(s: Any, log: Any, session: Path) -> None:
    """``init --from-inspect``: replay the log's draws and labels; on failure remove the
    session just made."""
    from activetest.inspect_stopping import restore

    try:
        n = restore(s, log)
    except BaseException:
        s.close()
        session.unlink(missing_ok=True)
        raise
    _out.print(f"from {_escape(log.path)}: {len(log.draws)} draws replayed, {n} label(s) "
               f"recorded (the eval's scores)")


# --------------------------------------------------------------------------- select


def _snippet(item: Any, width: int = 70) -> str:
    text = " | ".join(str(v) for v in item.fields.values())
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


@app.command()
@_user_errors
def select(
    session: SessionArg,
    n: Annotated[int, typer.Option("--n", "-n", help="How many items to draw.",
                                   show_default=False)],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the items to this "
                                             "file (.csv, .tsv, .jsonl, .json = Label Studio).",
                                             show_default=False)] = None,
    format: Annotated[ExportFormat | None, typer.Option(help="File format (default: from "
                                                        "the suffix).",
                                                        show_default=False)] = None,
    no_predictions: NoPredictions = False,
    emit: Annotated[str | None, typer.Option(
        "--emit", help="lm-eval: write --out as lm-evaluation-harness's --samples file "
                       "(sessions created with --target lm-eval).", show_default=False)] = None,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Draw the next N items to label (sequential draws from the stored sampler)."""
    from activetest.session.labels import check_export_target

    fmt = None if format is None else format.value
    if emit is not None and (emit != "lm-eval" or out is None):
        raise ValueError("--emit takes lm-eval, with --out samples.json")
    if out is not None and emit is None:  # before drawing: a draw never seen is wasted
        check_export_target(out, fmt)
    with _open(session, busy_timeout) as s:
        waiting = s.n_pending()
        if emit is not None:
            from activetest.session.harness import harness_tool

            if harness_tool(s) != "lm-eval":
                raise ValueError(f"{session}: --emit lm-eval needs a session created with "
                                 f"--target lm-eval")
        elif out is not None:  # a sheet for people: a harness draw has no answer to judge
            from activetest.session.harness import check_person_labelling

            check_person_labelling(s, None, "select --out")
        drawn = s.select(n)
        if emit is not None:
            _emit_lmeval(s, session, drawn, out)
        elif out is not None:
            try:
                count = s.export(out, format=fmt, acquisitions=drawn,
                                 predictions=not no_predictions)
            except OSError as exc:
                raise ValueError(f"{out}: cannot write the file ({exc}); the {len(drawn)} "
                                 f"drawn item(s) are saved in the session: write them with "
                                 f"`activetest export {session} --out FILE`") from None
            _out.print(f"wrote {count} item(s) to {_escape(str(out))}")
        else:
            table = Table("draw", "item id", "q", "text", box=None)
            for a in drawn:
                table.add_row(str(a.step), _escape(a.item_id), f"{a.q:.3g}",
                              _escape(_snippet(s.display_item(a.item_id))))
            _out.print(table)
        msg = f"selected {len(drawn)} item(s) (draws {drawn[0].step}..{drawn[-1].step})"
        if waiting:
            msg += f"; {waiting} earlier item(s) still wait for labels"
        _out.print(msg)


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


# --------------------------------------------------------------------------- label


class _Keys:
    """Answers from stdin: single key presses on a terminal (C <= 9), else lines.

    On a terminal the whole labelling run is in cbreak mode (set with TCSANOW, so
    keys typed ahead are kept, not flushed), restored on exit.
    """

    def __init__(self, n_classes: int) -> None:
        self.single = sys.stdin.isatty() and n_classes <= 9
        self._saved: Any = None

    def __enter__(self) -> _Keys:
        if self.single:
            import termios
            import tty

            fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            import termios

            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)

    def read(self) -> str | None:
        """One answer (None at end of input)."""
        if self.single:
            ch = sys.stdin.read(1)
            while ch in ("\n", "\r", " ", "\t"):  # Enter after a key press: ignore
                ch = sys.stdin.read(1)
            if ch in ("", "\x04"):
                return None
            if ch == "\x03":
                raise KeyboardInterrupt
            _out.print(ch)
            return ch
        line = sys.stdin.readline()
        if line == "":
            return None
        return line.strip()


@app.command()
@_user_errors
def label(
    session: SessionArg,
    n: Annotated[int | None, typer.Option("--n", "-n", help="First draw this many more "
                                          "items if fewer are pending.",
                                          show_default=False)] = None,
    from_data: Annotated[bool, typer.Option("--from-data", help="Simulate: answer with the "
                                            "labels in the pool file.")] = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Label the selected, unlabelled items in the terminal.

    Keys: 1..C choose a class, u undoes the last answer, q quits; p prints the full
    prompt of an item read from a harness log (its in-context examples too; the
    screen shows the item's own input). Every answer is saved at once, so quitting
    (or a crash) loses nothing.
    """
    if n is not None and n < 1:
        raise ValueError(f"--n must be a positive number of items to draw, got {n}")
    with _open(session, busy_timeout) as s:
        pending = s.pending()
        if not from_data:  # a harness item has no answer to judge: refused before drawing
            from activetest.session.harness import check_person_labelling

            check_person_labelling(s, None if n is not None else pending, "label")
        if n is not None and len(pending) < n:
            s.select(n - len(pending))
            pending = s.pending()
        if not pending and not (s.pending_judgments() and not from_data):
            _out.print("nothing to label: every selected item has a label. Draw more with "
                       f"`activetest select {_escape(str(session))} --n 20` or `label --n 20`.")
            return
        if from_data:
            done = s.label_from_data(source="data")
            _out.print(f"labelled {done} item(s) from the pool file's labels")
            return
        _label_loop(s, pending)


@app.command()
@_user_errors
def serve(
    session: SessionArg,
    host: Annotated[str, typer.Option(help="Address to listen on; another than 127.0.0.1 "
                                      "shares the page on a network.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: a free one).")] = 0,
    n: Annotated[int | None, typer.Option("--n", "-n", help="Draw at most this many items in "
                                          "all (default: the pool).", show_default=False)] = None,
    batch: Annotated[int, typer.Option(help="Items drawn at once when none is open (the "
                                       "adaptive design refits between batches).")] = 10,
    overlap: Annotated[float, typer.Option(help="Share of drawn items asked of --reviews "
                                           "annotators (agreement).")] = 0.0,
    reviews: Annotated[int, typer.Option(help="Annotators per overlap item.")] = 2,
    resolve: Annotated[Resolve, typer.Option(help="Annotators who disagree: skip (unlabelled "
                                             "until adjudicated), latest or majority.")
                       ] = Resolve.skip,
    adjudicator: Annotated[list[str] | None, typer.Option(
        help="A name that may settle disagreements on the page (repeatable).",
        show_default=False)] = None,
    show_guess: Annotated[bool, typer.Option("--show-guess", help="Show the surrogate's guess "
                                             "(hidden by default: it can sway people).")] = False,
    target_width: Annotated[float | None, typer.Option(
        "--target-width", help="Say \"you may stop now\" when the anytime interval is this "
                               "narrow.", show_default=False)] = None,
    claim_seconds: Annotated[float, typer.Option(
        "--claim-seconds", help="How long an item given to one annotator stays theirs "
                                "before it may go to another (an answer after that is "
                                "still stored).")] = 600.0,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Label in the browser: a local page (keys 1..C, u undo, s skip, ? help) for one or
    more annotators; every answer is saved at once. See docs/labelling.md."""
    from activetest.web.server import serve as run_server

    _check_width(target_width)
    run_server(session, host=host, port=port, budget=n, batch=batch, overlap=overlap,
               reviews=reviews, resolve=resolve.value, adjudicators=adjudicator or (),
               show_guess=show_guess, target_width=target_width, busy_timeout=busy_timeout,
               claim_seconds=claim_seconds,
               announce=lambda url: _out.print(f"labelling page: {url}  (Ctrl-C stops it; "
                                               f"every answer is saved at once)"))


def _label_loop(s: Any, pending: Sequence[Any]) -> None:
    """The selected items' labels, then (graded comparisons) the compared answers."""
    keys = "  ".join(f"[bold]{k + 1}[/]={_escape(name)}" for k, name in
                     enumerate(s.task.class_names))
    help_line = f"{keys}   [bold]u[/]=undo  [bold]q[/]=quit"
    with _Keys(s.task.n_classes) as keys_in:
        answered = _answer_all(s, pending, keys_in, help_line)
        if not s.n_pending() and s.pending_judgments():
            answered += _judge_compared(s, keys_in, help_line)
    left = s.n_pending()
    _out.print(f"labelled {answered} item(s) in this run; {left} selected item(s) still pending")
    if s.pending_judgments():
        _out.print(f"{len(s.pending_judgments())} compared answer(s) still to judge "
                   f"(`activetest label` asks for them)")
    _print_waiting(s.waiting())


def _key_to_class(s: Any, key: str, C: int) -> int | None:
    """The class (judgment level) a key names: 1..C, or a class name; None if neither."""
    if key.isdigit() and 1 <= int(key) <= C:
        return int(key) - 1
    try:
        return s.parse_label(key) if key and not key.isdigit() else None
    except ValueError:
        return None


def _read_answer(s: Any, keys_in: _Keys, help_line: str, full: str | None = None) -> int | str:
    """``"quit"`` (q or end of input), ``"undo"`` (u) or a class index; asks again after
    an unknown key, and after p, which prints the item's ``full`` prompt (if any)."""
    C = s.task.n_classes
    if full:
        help_line += "  [bold]p[/]=full prompt"
    while True:
        _out.print(help_line)
        _out.print("> ", end="")
        key = keys_in.read()
        if key is None or key.lower() in ("q", "quit"):
            return "quit"
        if key.lower() in ("u", "undo"):
            return "undo"
        if full and key.lower() in ("p", "prompt"):
            _out.rule("the model's full prompt")
            _out.print(_escape(full))
            _out.rule()
            continue
        y = _key_to_class(s, key, C)
        if y is not None:
            return y
        _out.print(f"unknown answer {_escape(key)!r}: press 1..{C}, u or q")


def _judge_compared(s: Any, keys_in: _Keys, help_line: str) -> int:
    """Ask for the judgments of compared targets' answers, one answer at a time.

    The list is recomputed after each answer: judging one answer settles every
    identical answer of the same item.
    """
    from activetest.session.store import SessionError

    done: list[Any] = []
    answered = 0
    while waiting := s.pending_judgments():
        p = waiting[0]
        a = p.acquisition
        _out.rule(f"compared answer: {_escape(p.spec)}  item {_escape(a.item_id)}  "
                  f"(draw {a.step}; {len(waiting)} to judge)")
        _out.print(_escape(s.display(a.item_id, target=p.spec)))
        y = _read_answer(s, keys_in, help_line, s.full_prompt(a.item_id))
        if y == "quit":
            break
        if y == "undo":
            if done:
                s.undo(done.pop(), source="cli:undo")
                answered -= 1
                _out.print("undone")
            else:
                _out.print("nothing to undo")
            continue
        assert isinstance(y, int)
        try:
            change = s.judge(a.item_id, y, target=p.spec, source="cli")
        except SessionError:  # incl. LabelError
            role = f"compare:{p.spec}"
            other = s.store.judgments(role).get(a.index)
            if other is None:
                raise
            _not_saved(s, a.item_id, y, other.label, f" (the answer of {p.spec})")
            continue
        if change is not None:
            done.append(change)
            answered += 1
        _out.print(f"saved: {_escape(s.task.class_names[y])} for {_escape(p.spec)}")
    return answered


def _answer_all(s: Any, pending: Sequence[Any], keys_in: _Keys, help_line: str) -> int:
    from activetest.session.store import SessionError

    done: list[tuple[int, Any]] = []  # (position in pending, change) for undo
    i = 0
    answered = 0
    while i < len(pending):
        a = pending[i]
        other = s.labels().get(a.item_id)
        if other is not None:  # labelled meanwhile (another `label` run, an import)
            _out.print(f"item {_escape(a.item_id)} (draw {a.step}) was labelled "
                       f"{_escape(repr(s.task.class_names[other]))} meanwhile (another "
                       f"labelling run or an import); skipped")
            i += 1
            continue
        _out.rule(f"{i + 1}/{len(pending)}  item {_escape(a.item_id)}  (draw {a.step})")
        _out.print(_escape(s.display(a.item_id)))
        y = _read_answer(s, keys_in, help_line, s.full_prompt(a.item_id))
        if y == "quit":
            break
        if y == "undo":
            if done:
                pos, change = done.pop()
                s.undo(change, source="cli:undo")
                answered -= 1
                _out.print(f"undone: item {_escape(change.item_id)} is unlabelled again")
                i = pos
            else:
                _out.print("nothing to undo")
            continue
        assert isinstance(y, int)
        try:
            change = s.add_label(a.item_id, y, source="cli", overwrite=False)
        except SessionError:  # incl. LabelError
            other = s.labels().get(a.item_id)
            if other is None:
                raise
            _not_saved(s, a.item_id, y, other)
            i += 1
            continue
        if change is not None:
            done.append((i, change))
            answered += 1
        _out.print(f"saved: {_escape(s.task.class_names[y])}")
        i += 1
    return answered


def _not_saved(s: Any, item_id: str, y: int, other: int, whose: str = "") -> None:
    """Say that an answer was not saved: someone else labelled the item first."""
    names = s.task.class_names
    _out.print(f"[bold yellow]not saved:[/] item {_escape(item_id)}{_escape(whose)} was "
               f"labelled {_escape(repr(names[other]))} meanwhile (another labelling run or "
               f"an import), so your {_escape(repr(names[y]))} was not saved. To replace "
               f"that label, import a sheet with it: `activetest import "
               f"{_escape(str(s.path))} FILE --overwrite`")


# --------------------------------------------------------------------------- export / import


@app.command("export")
@_user_errors
def export_(
    session: SessionArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write (.csv, .tsv, .jsonl, "
                                      ".json = Label Studio).", show_default=False)],
    format: Annotated[ExportFormat | None, typer.Option(help="File format (default: from "
                                                        "the suffix).",
                                                        show_default=False)] = None,
    which: Annotated[Which, typer.Option(help="Which items.")] = Which.pending,
    no_predictions: NoPredictions = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Write selected items to a file for labelling elsewhere (sheet or Label Studio).

    Sheets list the items in draw order with their draw step: the estimate uses
    labels in that order, so an item left unlabelled holds back every later one.
    """
    with _open(session, busy_timeout) as s:
        count = s.export(out, format=None if format is None else format.value,
                         which=which.value, predictions=not no_predictions)
        _out.print(f"wrote {count} {which.value} item(s) to {_escape(str(out))}")


@app.command("labelstudio-config")
@_user_errors
def labelstudio_config(
    session: SessionArg,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the XML to this file "
                                             "instead of printing it.",
                                             show_default=False)] = None,
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
    format: Annotated[ImportFormat | None, typer.Option(help="File format (default: from the "
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
             "(their latest; a tie stays unlabelled). Reported either way.")] = Resolve.skip,
    metric_key: Annotated[str | None, typer.Option(
        "--metric-key", help="lm-eval results: the per-item metric read as the label "
        "(default: the session's, chosen at init).", show_default=False)] = None,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Import labels from a file (or a --target lm-eval session's lm-eval results).

    Any bad record (unknown item or class, an item never selected, a stored label
    that differs without --overwrite, a row whose content_check says it showed
    another item or whose text was edited) imports nothing. Items that annotators
    label differently do not block the rest: they are listed and left out, or
    settled by --resolve.
    """
    with _open(session, busy_timeout) as s:
        from activetest.session.harness import harness_config

        if harness_config(s) is not None and format is None and _lmeval_files(files):
            _import_lmeval(s, files, metric_key)
            return
        if len(files) != 1:
            raise ValueError(f"import reads one labels file at a time, got {len(files)}")
        file = files[0]
        result = s.import_file(file, format=None if format is None else format.value,
                               overwrite=overwrite, id_column=id_column,
                               label_column=label_column, from_name=from_name,
                               label_base=label_base, resolve=resolve.value)
        _out.print(f"imported {result.added} new label(s), changed {result.changed}, "
                   f"{result.unchanged} already present; {s.n_pending()} selected item(s) "
                   f"still pending")
        _print_conflicts(result.conflicts, resolve.value)
        _print_waiting(s.waiting())


def _lmeval_files(files: Sequence[Path]) -> bool:
    from activetest.formats.lmeval import looks_like_lmeval

    return all(f.is_dir() or looks_like_lmeval(f) for f in files)


def _import_lmeval(s: Any, files: Sequence[Path], metric_key: str | None) -> None:
    from activetest.session.harness import import_lmeval

    r = import_lmeval(s, files, metric_key=metric_key)
    _out.print(f"imported {r.added} target run(s) as labels ({r.metric}, from "
               f"{_escape(r.metric_from)}), {r.unchanged} already present; "
               f"{s.n_pending()} drawn item(s) still wait for a run")
    for where in r.cut:
        _out.print(f"skipped the unfinished last record at {_escape(where)} (a run killed "
                   f"while writing?): its item waits for the next run")
    _print_waiting(s.waiting())


def _print_conflicts(conflicts: Sequence[Any], resolve: str) -> None:
    settled = [c for c in conflicts if c.settled is not None]
    left = [c for c in conflicts if c.settled is None]
    if settled:
        _out.print(f"{len(settled)} disagreement(s) settled by --resolve {resolve}:")
        for c in settled[:20]:
            _out.print(f"  {_escape(c.describe())} -> {_escape(repr(c.settled))}")
    if left:
        how = ("label them in the terminal (`activetest label`), or import again with "
               "--resolve latest or --resolve majority")
        _out.print(f"[bold yellow]{len(left)} item(s) left out[/]: the file labels them "
                   f"differently ({how}):")
        for c in left[:20]:
            _out.print(f"  {_escape(c.describe())}")
        if len(left) > 20:
            _out.print(f"  ... and {len(left) - 20} more")


def _print_waiting(waiting: Any) -> None:
    if waiting is not None and waiting.waiting:
        _out.print(f"[yellow]note:[/] {_escape(waiting.describe())}")


# --------------------------------------------------------------------------- estimate


def _interval_text(low: float | None, high: float | None) -> str:
    """``[low, high]``, ``—`` when there is none, or the anytime CS's "from 30 labels"."""
    if low is None or high is None:
        return "—"
    return _cs(low, high)


_MARKS = "¹²³⁴⁵⁶"


def _intervals_of(boot: Any, anytime: Any, level: float) -> str:
    """An estimate's intervals, each named: fixed-budget, anytime, bootstrap."""
    from activetest.session.interval_names import ANYTIME, BOOTSTRAP, FIXED_BUDGET, interval_name

    parts = []
    if anytime is not None:
        parts += [f"{interval_name(FIXED_BUDGET, level)} "
                  f"{_interval_text(anytime.fixed_low, anytime.fixed_high)}",
                  f"{interval_name(ANYTIME, level)} {_cs(anytime.cs_low, anytime.cs_high)}"]
    parts.append(f"{interval_name(BOOTSTRAP, level)} {_interval_text(boot.low, boot.high)}")
    return "; ".join(parts)


def _estimate_rows(r: Any) -> list[tuple[str, str, list[str]]]:
    """``(interval kind or "", what it is, one cell per metric)`` of the estimate table."""
    from activetest.session.interval_names import ANYTIME, BOOTSTRAP, EXACT_ANYTIME, FIXED_BUDGET

    metrics = list(r.metrics.values())
    anytime = [m.anytime for m in metrics]

    def cells(low: str, high: str) -> list[str]:
        return [_interval_text(None if a is None else getattr(a, low),
                               None if a is None else getattr(a, high)) for a in anytime]

    # an adaptive design's estimate is adaptive LURE (learnt controls), the paper's is LURE
    what = "adaptive LURE estimate" if r.design else "LURE estimate"
    rows = [("", what, [_num(m.active.estimate) for m in metrics]),
            (FIXED_BUDGET, "", cells("fixed_low", "fixed_high")),
            (ANYTIME, "", cells("cs_low", "cs_high"))]
    if any(a is not None and a.exact_low is not None for a in anytime):
        rows.append((EXACT_ANYTIME, "", cells("exact_low", "exact_high")))
    rows.append((BOOTSTRAP, "", [_interval_text(m.active.low, m.active.high) for m in metrics]))
    rows.append(("", "uniform-equivalent (biased)", [_num(m.uniform.estimate) for m in metrics]))
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


def _print_estimate(r: Any, target: str) -> None:
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
    mark = 0
    for kind, what, _ in _estimate_rows(r):
        if kind:
            extra = " The headline." if kind == FIXED_BUDGET else ""
            _out.print(f"{_MARKS[mark]} {interval_name(kind, r.level)}: "
                       f"{interval_guarantee(kind)}.{extra}")
            mark += 1
        elif what.startswith("uniform"):
            _out.print(f"{_MARKS[mark]} plain mean of the labelled items' losses: BIASED here "
                       f"(items were drawn actively), for contrast.")
            mark += 1
    cs_name = interval_name(ANYTIME, r.level)
    for m in r.metrics.values():
        a = m.anytime
        if a is not None and a.target_width is not None:
            if a.may_stop:
                _out.print(f"[bold green]{m.metric}: you may stop now[/]: the {cs_name} "
                           f"is {a.cs_high - a.cs_low:.4g} wide, within {a.target_width:g}")
            elif a.labels_needed is not None:
                _out.print(f"{m.metric}: the {cs_name} reaches width "
                           f"{a.target_width:g} at about {a.labels_needed} labels "
                           f"({max(0, a.labels_needed - r.n_labels)} more; a projection)")
    boot_name = interval_name(BOOTSTRAP, r.level)
    fixed_name = interval_name(FIXED_BUDGET, r.level)
    for m in r.metrics.values():
        if m.cv is not None and m.cv_same_as_lure:
            _out.print(f"{m.metric}: control-variate LURE equals LURE up to the proposal "
                       f"floor (difference {m.cv.estimate - m.active.estimate:.1e}): with CE "
                       f"acquisition "
                       f"the control variate is the acquisition score itself, so it cannot "
                       f"narrow the interval")
        elif m.cv is not None:
            ca = m.cv_anytime
            fixed = ("" if ca is None else
                     f"{fixed_name} {_interval_text(ca.fixed_low, ca.fixed_high)}, ")
            _out.print(f"{m.metric}: control-variate LURE {_num(m.cv.estimate)}, {fixed}"
                       f"{boot_name} [{_num(m.cv.low)}, {_num(m.cv.high)}] (also unbiased; "
                       f"uses the surrogate's expected loss on the whole pool, "
                       f"{_num(m.control_mean)})")
    for m in r.metrics.values():
        if m.labels_needed is not None:
            more = max(0, m.labels_needed - r.n_labels)
            _out.print(f"{m.metric}: a {boot_name} of width {r.target_width:g} needs about "
                       f"{m.labels_needed} labels in total ({more} more; projected from the "
                       f"bootstrap, assuming 1/sqrt(K) shrinkage)")
    if r.flagged:
        thr_t, thr_s, rule = r.noise_thresholds
        joiner = "or" if rule == "any" else "and"
        _out.print(f"[bold yellow]label-noise alarm:[/] {len(r.flagged)} label(s) look unlikely "
                   f"(target NLL > {thr_t:g} {joiner} surrogate NLL > {thr_s:g}); give them a "
                   f"second look:")
        for f in r.flagged[:20]:
            _out.print(f"  item {_escape(f.item_id)} (draw {f.step}): label {f.label}, target "
                       f"NLL {f.target_nll:.2f}, surrogate NLL {f.surrogate_nll:.2f}")
        if len(r.flagged) > 20:
            _out.print(f"  ... and {len(r.flagged) - 20} more")
        for m in r.metrics.values():
            if m.without_flagged is not None:
                _out.print(f"  {m.metric} without them: {_num(m.without_flagged)} (vs "
                           f"{_num(m.active.estimate)}; dropping items breaks unbiasedness, so "
                           f"treat this as a sensitivity check)")
    for c in r.comparisons:
        _out.print(f"compare ({c.metric}): {_escape(c.spec)} estimate "
                   f"{_num(c.other.estimate)}, {_intervals_of(c.other, c.other_anytime, r.level)}")
        _out.print(f"  difference target - other = {_num(c.difference.estimate)} (paired, same "
                   f"labels), {_intervals_of(c.difference, c.difference_anytime, r.level)}")
        if c.difference_cs is not None:
            lo, hi = c.difference_cs
            verdict = ("the target is better (anytime)" if hi < 0 else
                       "the other model is better (anytime)" if lo > 0 else "not decided yet")
            _out.print(f"  by the {cs_name} of the difference: {verdict}")
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
        "--compare", help="Another target model spec to compare on the same labels "
                          "(repeatable).", show_default=False)] = None,
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

    out_format = "json" if as_json else (fmt.value if fmt is not None else "text")
    _check_width(target_width)
    _check_interval_options(n_boot, level)
    with _open(session, busy_timeout, threads) as s:
        r = s.estimate(compare=list(compare or ()), target_width=target_width, n_boot=n_boot,
                       level=level, progress=not no_progress)
        if out_format == "json":
            print(json.dumps({**r.to_dict(), **agreement_json(s)}, indent=1, default=str))
        elif out_format == "eee":
            from activetest.session.eee_report import eee_records

            records = eee_records(s, r, model_id=model_id,
                                  source_organization=source_organization)
            print(json.dumps(records if len(records) > 1 else records[0], indent=1))
        else:
            _print_estimate(r, s.session_config.target)
            _print_agreement(s)


def _print_agreement(s: Any) -> None:
    """Agreement of the labelling page's annotators (nothing when it was never used)."""
    from activetest.session.annotators import agreement_lines

    for line in agreement_lines(s):
        _out.print(_escape(line))


# --------------------------------------------------------------------------- report / status


@app.command()
@_user_errors
def report(
    session: SessionArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for report.md, report.html "
                                      "and the PNG figures.", show_default=False)],
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", help="Another target model spec to compare (repeatable).",
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
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    busy_timeout: Timeout = 5.0,
) -> None:
    """Where the session stands: pool size, selected, labelled, pending, last estimate."""
    from activetest.session.annotators import agreement_json
    from activetest.session.config import ACQUISITIONS
    from activetest.session.interval_names import ANYTIME, BOOTSTRAP, FIXED_BUDGET, interval_name

    with _open(session, busy_timeout) as s:
        st = s.status()
        if as_json:
            from dataclasses import asdict

            from activetest.session.harness import runs_summary

            out = {**st.to_dict(), **agreement_json(s)}
            if s.session_config.extra.get("history"):  # init --history: which design
                from activetest.session.history_neighbours import design_label

                out["history_design"] = design_label(s.session_config.extra["history"])
            runs = runs_summary(s)
            if runs is not None:  # a harness session: its target runs
                out["target_runs"] = asdict(runs)
            print(json.dumps(out, indent=1, default=str))
            return
        _out.print(f"session {_escape(st.path)} (created {st.created})")
        _out.print(f"target {_escape(st.target)}; surrogate {_escape(st.surrogate)}; metric "
                   f"{st.metric}; acquisition {st.acquisition} (proposal floor "
                   f"{st.proposal_floor:g}, seed {st.seed})")
        if s.session_config.extra.get("history"):  # init --history: which design
            from activetest.session.history_neighbours import design_label

            _out.print(f"design: {design_label(s.session_config.extra['history'])}")
        _out.print(f"pool {st.n_items} items: {st.n_selected} selected, {st.n_labelled} "
                   f"labelled, {st.n_pending} pending; {st.n_usable} label(s) usable by the "
                   f"estimate")
        _print_runs(s)
        for spec, n_wait in st.compared.items():
            _out.print(f"compared target {_escape(spec)}: {n_wait} drawn answer(s) still to "
                       f"judge" + (" (`activetest label` asks for them)" if n_wait else ""))
        shown = [e for e in st.last_estimates if e.method in ("lure", "cv_lure", "mean")]
        # an adaptive design's estimate is adaptive LURE (learnt controls)
        acq = ACQUISITIONS.get(st.acquisition)
        lure_name = "adaptive LURE" if acq is not None and acq.adaptive else "LURE"
        order = {"lure": 0, "cv_lure": 1, "mean": 2}
        lure = {e.metric: e for e in shown if e.method == "lure"}
        for e in sorted(shown, key=lambda e: (e.metric, order[e.method])):
            if e.method == "cv_lure" and e.metric in st.cv_same_as_lure:
                diff = e.estimate - lure[e.metric].estimate if e.metric in lure else None
                _out.print(f"  {e.metric} control-variate LURE: equals LURE up to the "
                           f"proposal floor (difference "
                           f"{'—' if diff is None else f'{diff:.1e}'}): with CE acquisition "
                           f"the control "
                           f"variate is the acquisition score itself, so it cannot narrow "
                           f"the interval")
                continue
            what = {"lure": lure_name, "cv_lure": "control-variate LURE",
                    "mean": "uniform-equivalent (biased)"}[e.method]
            level = e.level if e.level is not None else 0.95
            a = e.details.get("anytime") if e.method in ("lure", "cv_lure") else None
            a = a if isinstance(a, dict) else {}
            names = []  # the headline first: fixed-budget, then anytime, then the bootstrap
            if all(isinstance(a.get(k), (int, float)) for k in ("fixed_low", "fixed_high")):
                names.append(f"{interval_name(FIXED_BUDGET, level)} "
                             f"[{_num(a['fixed_low'])}, {_num(a['fixed_high'])}]")
            if all(isinstance(a.get(k), (int, float)) for k in ("cs_low", "cs_high")):
                names.append(f"{interval_name(ANYTIME, level)} "
                             f"{_cs(a['cs_low'], a['cs_high'])}")
            elif a.get("cs_low") == "-inf":
                names.append(f"{interval_name(ANYTIME, level)} (from 30 labels)")
            if e.low is not None and e.high is not None:
                names.append(f"{interval_name(BOOTSTRAP, level)} "
                             f"[{_num(e.low)}, {_num(e.high)}]")
            _out.print(f"last estimate ({e.at}, {e.n_labels} labels): {e.metric} {what} "
                       f"{_num(e.estimate)}")
            for name in names:
                _out.print(f"  {name}")
            if e.method == "lure" and isinstance(e.details.get("blind_spot"), str):
                _out.print(f"  note: {_escape(e.details['blind_spot'])}")
            if e.method == "lure" and isinstance(a.get("basis_note"), str):
                _out.print(f"  note: fixed-budget and anytime rows are the exact anytime "
                           f"confidence sequence ({_escape(a['basis_note'])})")
            if a and e.method == "lure":
                cs_name = interval_name(ANYTIME, level)
                if a.get("may_stop") and not st.estimate_stale:
                    _out.print(f"  [bold green]you may stop now[/]: the {cs_name} is "
                               f"within the width {a.get('target_width')} asked for")
                elif a.get("target_width") is not None and a.get("labels_needed"):
                    _out.print(f"  about {a['labels_needed']} labels in total for width "
                               f"{a['target_width']} (a projection)")
        if not shown:
            _out.print("no estimate yet")
        elif st.estimate_stale:
            _out.print(f"[bold yellow]the last estimate is stale:[/] labels were added or "
                       f"changed since; run `activetest estimate {_escape(st.path)}`")
        _print_waiting(st.waiting)
        _print_agreement(s)


def _print_runs(s: Any) -> None:
    """A harness session's target runs, and a uniform sample's projected runs."""
    from activetest.session.harness import runs_summary

    r = runs_summary(s)
    if r is None:
        return
    _out.print(f"target runs spent: {r.target_runs} (results read from {r.tool} as labels); "
               f"{r.person_labels} label(s) from people; {r.drawn} item(s) drawn")
    if r.uniform_runs is not None and r.width is not None:
        _out.print(f"  a uniform sample would need about {r.uniform_runs} target runs for the "
                   f"same anytime interval width {r.width:.4f} (a projection from the "
                   f"estimate's variance p(1 - p), same confidence-sequence family)")


# --------------------------------------------------------------------------- demo


@app.command()
@_user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the session file, the "
                                      "report and its plots.")] = Path("activetest-demo"),
    quick: Annotated[bool, typer.Option("--quick", help="A smaller, faster demo (for CI): "
                                        "200 items, 50 labels.")] = False,
    pool_size: Annotated[int | None, typer.Option(help="Pool size (default 1000; --quick "
                                                  "200).", show_default=False)] = None,
    labels: Annotated[int | None, typer.Option(help="Labels to collect (default 100; --quick "
                                               "50).", show_default=False)] = None,
    shots: Annotated[int, typer.Option(help="In-context examples for the surrogate.")] = 8,
    target_shots: Annotated[int | None, typer.Option(
        help="In-context examples for the target (0: zero-shot; default: same as "
             "--shots).", show_default=False)] = None,
    surrogate: Annotated[str, typer.Option(help="Surrogate model spec.")] = "gemma3-270m",
    target: Annotated[str, typer.Option(help="Target model spec.")] = "smollm2-135m",
    seed: Annotated[int, typer.Option(help="Seed for the data, the draws and the "
                                      "bootstrap.")] = 0,
    cache_dir: Annotated[Path | None, typer.Option(help="Score cache folder.",
                                                   show_default=False)] = None,
    threads: Threads = None,
    no_progress: NoProgress = False,
) -> None:
    """Offline demo: a full active-testing evaluation on generated data with the bundled models.

    Labels come from the generated data (a simulated labeller); the estimate is shown
    beside the true value and beside uniform sampling with as many labels.
    """
    from activetest.session.demo import run_demo

    result = run_demo(out, quick=quick, pool_size=pool_size, n_labels=labels, shots=shots,
                      target_shots=shots if target_shots is None else target_shots,
                      surrogate=surrogate, target=target, seed=seed,
                      cache_dir=cache_dir, threads=threads, progress=not no_progress,
                      console=_out)
    _out.print(f"done in {result.seconds:.0f} s; report: {_escape(str(result.report))}")


def _wants_supervisor(args: Sequence[str]) -> bool:
    from activetest.supervise import wants_supervisor

    return wants_supervisor(args)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def score(ctx: typer.Context, engine: Annotated[str, typer.Option(
        "--engine", help="Where to score: ray (a Ray cluster). The other options are "
        "python -m activetest.models.ray_score's (see its --help and docs/scale.md).")] = "ray",
          ) -> None:
    """Score a pool on a cluster and write the table: Parquet file a session reads."""
    if engine != "ray":
        _err.print(f"error: --engine {engine!r}: the one engine is ray")
        raise typer.Exit(2)
    from activetest.models.ray_score import main as ray_main

    raise typer.Exit(ray_main(list(ctx.args)))


_PLAIN_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?")


def _plain_status(args: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of ``status SESSION [--json] [--busy-timeout SECONDS]`` written
    plainly (each option at most once, seconds as digits), else None.

    Such a ``status`` is called directly: typer's parsing builds a pydantic validator
    per option, which costs more than the command itself at any pool size. Any other
    form (``--help``, a typo, ``--busy-timeout=3``) goes through typer, as before."""
    if not args or args[0] != "status":
        return None
    out: dict[str, Any] = {"as_json": False, "busy_timeout": 5.0}
    rest = list(args[1:])
    while rest:
        a = rest.pop(0)
        if a == "--json" and not out["as_json"]:
            out["as_json"] = True
        elif (a == "--busy-timeout" and "seen_timeout" not in out and rest
              and _PLAIN_SECONDS.fullmatch(rest[0])):
            out["busy_timeout"] = float(rest.pop(0))
            out["seen_timeout"] = True
        elif a and not a.startswith("-") and "session" not in out:
            out["session"] = Path(a)
        else:
            return None
    out.pop("seen_timeout", None)
    return out if "session" in out else None


_PLAIN_COUNT = re.compile(r"[0-9]+")


def _plain_select(args: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of ``select SESSION --n N [--busy-timeout SECONDS]`` written
    plainly (``-n`` too; each option once, numbers as digits), else None: called
    directly, as a plain ``status`` (:func:`_plain_status`); any other form goes through
    typer."""
    if not args or args[0] != "select":
        return None
    out: dict[str, Any] = {}
    rest = list(args[1:])
    while rest:
        a = rest.pop(0)
        if a in ("--n", "-n") and "n" not in out and rest and _PLAIN_COUNT.fullmatch(rest[0]):
            out["n"] = int(rest.pop(0))
        elif (a == "--busy-timeout" and "busy_timeout" not in out and rest
              and _PLAIN_SECONDS.fullmatch(rest[0])):
            out["busy_timeout"] = float(rest.pop(0))
        elif a and not a.startswith("-") and "session" not in out:
            out["session"] = Path(a)
        else:
            return None
    return out if "session" in out and "n" in out else None


#: Commands that do no linear algebra: numpy's OpenBLAS starts with one thread for them.
_NO_BLAS_COMMANDS = ("status", "import")


def _one_blas_thread(args: Sequence[str]) -> None:
    """For ``status`` and ``import``, which do no linear algebra, let numpy's OpenBLAS
    start one thread (unless ``OPENBLAS_NUM_THREADS`` is set already): loading it with a
    thread per core costs ~0.06 CPU-s on 2 cores, a fifth of a ``status``, and more with
    more cores. Called before numpy is imported (this module does not import it); the
    commands start no child that would inherit the setting."""
    if args and args[0] in _NO_BLAS_COMMANDS and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``activetest`` console script."""
    from activetest import supervise

    args = list(sys.argv[1:] if argv is None else argv)
    if _wants_supervisor(args):
        sys.exit(supervise.run_supervised(args))
    _one_blas_thread(args)
    # SIGTERM unwinds like Ctrl-C (temporary files removed); a supervised child also
    # terminates when its parent dies (a `kill -9` of the command the user started)
    supervise.handle_sigterm()
    supervise.watch_parent()
    for parse, command in ((_plain_status, status), (_plain_select, select)):
        plain = parse(args)
        if plain is not None:
            try:
                command(**plain)
            except typer.Exit as exc:
                sys.exit(exc.exit_code)
            return
    app(args=args, prog_name="activetest")


if __name__ == "__main__":
    main()
