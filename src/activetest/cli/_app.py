"""The command line's shared parts: the typer app, the consoles, the option types and
values, and the one way user errors become a message and exit code 2.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import sqlite3
import sys
from collections.abc import Callable, Mapping
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from activetest.errors import UserFacingError
from activetest.redaction import redact

# rich_markup_mode=None: click's plain help, which wraps every column to the terminal; rich's
# option table cut option names to fit 80 columns ("--proposal-flo…", QA)
app = typer.Typer(
    name="activetest", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
    help="Label-efficient evaluation of language models by active testing.\n\n"
         "Typical session: `activetest init S.db --pool pool.csv --task sst2 --surrogate "
         "smollm2-135m --target gemma3-270m`, then `activetest select S.db --n 10`, "
         "`activetest label S.db`, `activetest estimate S.db`. Try `activetest demo` first.")


def _no_hyphen_breaks() -> None:
    """Help text wraps at spaces only: click's wrapper broke at hyphens, splitting option
    names and terms across lines ("--id-" / "column", "fixed-" / "budget": QA). Typer
    formats help with its own copy of click's wrapper (``typer._click``), click's is
    patched too; where a version moves its wrapper, help keeps the default wrapping."""
    import importlib

    for name in ("typer._click._textwrap", "click._textwrap"):
        try:
            mod = importlib.import_module(name)
        except ImportError:  # pragma: no cover - another layout
            continue
        base = getattr(mod, "TextWrapper", None)
        if base is None or getattr(base, "_activetest", False):
            continue

        class _SpacesOnly(base):  # type: ignore[misc, valid-type]
            _activetest = True

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                kwargs.setdefault("break_on_hyphens", False)
                super().__init__(*args, **kwargs)

        mod.TextWrapper = _SpacesOnly


_no_hyphen_breaks()

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
    compare = "compare"
    graded_fixed = "graded_fixed"


class LabelScoringMode(str, Enum):
    """Values of ``--label-scoring`` (:data:`activetest.session.config.LABEL_SCORING`)."""

    first_token = "first-token"
    full_sequence = "full-sequence"


#: ``--label-scoring``: one mode for every model of the run (``init``: stored in the session).
LABEL_SCORING_HELP = (
    "How each class's score is read from its label word: first-token (the log-prob of the "
    "word's first token, the paper's choice) or full-sequence (the summed log-prob of the "
    "whole word, for label words of several tokens such as 'entailment'). llama.cpp and "
    "transformers models; refused for openai: servers; table: files are read as they are.")


class LabelFileFormat(str, Enum):
    """Values of ``--format`` for the label files that ``export``, ``select --out`` write
    and ``import`` reads (one set: every format written can be read back)."""

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
        creates = kwargs.get("session") if fn.__name__ == "init" else None
        before = _file_state(creates)
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, BrokenPipeError):
            raise  # a reader that went away (`| head`): the entry point ends quietly
        except KeyboardInterrupt as exc:
            from activetest.supervise import Terminated

            what = (_interrupted_init(creates, before, bool(kwargs.get("no_cache"))
                                      or not _computes_scores(kwargs))
                    if creates is not None else "everything answered so far is saved")
            if isinstance(exc, Terminated):  # SIGTERM, or the supervising parent died
                _err.print(f"terminated; {_escape(what)}")
                code = 128 + int(signal.SIGTERM)
            else:
                _err.print(f"interrupted; {_escape(what)}")
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


def _file_state(path: Any) -> tuple[int, int] | None:
    """``(inode, mtime_ns)`` of a file, None where there is none (or no path)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def _computes_scores(kwargs: Mapping[str, Any]) -> bool:
    """Whether an ``init`` with these options runs a model whose scores go to the score
    cache: a bundled model, a .gguf file or folder, a server (also inside ``judge:`` /
    ``agree:``); not a ``table:`` file, an answer file, a pool column or ``uniform``
    (QA: an interrupted init from tables said its scores were kept in the cache)."""
    from activetest.models.registry import parse_spec

    specs: list[str] = []
    for key in ("target", "surrogate", "compare"):
        value = kwargs.get(key)
        specs += [str(v) for v in (value if isinstance(value, (list, tuple)) else [value])
                  if v is not None]
    for spec in specs:
        for candidate in (spec, spec.partition(":")[2]):
            if not candidate:
                continue
            try:
                if parse_spec(candidate)[0] != "table":
                    return True
            except (ValueError, OSError):
                continue
    return False


def _interrupted_init(session: Any, before: tuple[int, int] | None, no_cache: bool) -> str:
    """What an interrupted ``init`` left: it writes its session file only once everything
    is scored and stored (QA: it said "everything answered so far is saved", of a session
    that was never made)."""
    after = _file_state(session)
    if after is not None and after != before:
        return f"the session {session} was created"
    cache = ("" if no_cache else "; the scores computed so far are kept in the score "
             "cache, so the same command resumes from them")
    kept = (f"{session} is as it was" if after is not None else
            f"no session was created at {session}")
    return kept + cache


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
    if exc.errno == errno.ENOSPC and not exc.filename:
        # no file named: the output itself (QA: `select > /dev/full` said the disk was
        # full and nothing lost, while the draws it had stored stood)
        what = ("cannot write the output: no space left where it goes (standard output "
                "redirected to a full disk?); what the command stored in the session "
                "before it stands (`activetest status` shows it)")
    elif exc.errno == errno.ENOSPC:
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
    from activetest.session.options import MIN_TARGET_WIDTH

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


#: An interval with no finite end: the value's whole (unknown) range, e.g. a paired
#: difference of log losses that no labelled item has shown to differ (a note says why).
UNBOUNDED = "unbounded (see the note)"


def marked(text: str, mark: str) -> str:
    """An interval's text followed by its basis mark (:func:`activetest.session.
    interval_names.basis_mark`, e.g. `` (exact anytime CS)``); an unbounded one says
    both in one bracket (QA: the two brackets "unbounded (see the note)" and the mark)."""
    if mark and text == UNBOUNDED:
        return f"unbounded ({mark.strip()[1:-1]}; see the note)"
    return text + mark


def _cs(low: float, high: float, n_labels: int | None = None,
        basis: str | None = None, n_pool: int | None = None) -> str:
    """An anytime CS ``[low, high]``: before 30 labels the anytime CS (asymptotic) is not claimed
    (infinite, or the whole range once clipped to it: "from 30 labels"), the exact anytime CS
    and the sure bounds of a difference (``basis`` "exact", "sure") are, and so is the
    CS of a census (every one of ``n_pool`` items labelled: the pool's value); infinite
    with ``n_labels`` >= 30 it is :data:`UNBOUNDED`."""
    from activetest.stats.confseq import cs_claimed

    early = n_labels is None or not cs_claimed(n_labels, n_pool)
    valid = basis in ("exact", "sure")  # claimed at any number of labels
    if low == float("-inf") and high == float("inf"):
        return "(from 30 labels)" if early and not valid else UNBOUNDED
    if early and n_labels is not None and not valid:
        return "(from 30 labels)"
    return _pair(low, high)


def _pair(low: float, high: float) -> str:
    """``[low, high]`` with 4 decimals, or as many more as its two ends need to differ
    (:func:`activetest.session.interval_names.interval_decimals`); an end that rounds to
    zero keeps its minus only where the other end shows one, as the summary and the
    labelling page print it (:func:`activetest.session.interval_names.interval_text`)."""
    from activetest.session.interval_names import interval_decimals, interval_text

    return interval_text(low, high, interval_decimals((low, high)))


def _num(x: float | None, digits: int = 4) -> str:
    """``x`` with ``digits`` decimals (4; an estimate beside its intervals takes theirs,
    :func:`_decimals`), ``—`` for none; a value that rounds to zero reads ``0.0000``, as
    the summary and the labelling page print it (QA: the terminal printed -1e-17 as
    "-0.0000")."""
    from activetest.session.interval_names import unsigned_zero

    if x is None:
        return "—"
    return unsigned_zero(f"{x:.{digits}f}")


def _decimals(boot: Any, anytime: Any = None) -> int:
    """The decimals of an estimate printed beside its intervals: those its widest-printed
    interval needs (4 in the ordinary case; more where an interval of nonzero width would
    print both ends alike). ``boot``: its bootstrap result (``low``, ``high``; or None);
    ``anytime``: its :class:`~activetest.session.records.AnytimeInterval` or the dict it
    is recorded as (or None)."""
    from activetest.session.interval_names import interval_decimals

    def get(name: str) -> Any:
        v = anytime.get(name) if isinstance(anytime, Mapping) else getattr(anytime, name, None)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    pairs = [] if boot is None else [(getattr(boot, "low", None), getattr(boot, "high", None))]
    if anytime is not None:
        pairs += [(get(f"{k}_low"), get(f"{k}_high")) for k in ("fixed", "cs", "exact")]
    return interval_decimals(*pairs)


def _outside_sure(anytime: Any, digits: int = 4) -> str:
    """What follows an estimate printed beside its intervals where its record says it
    lies outside the bounds that hold surely (``estimate_outside_sure``, with ``sure_low``
    / ``sure_high``; :func:`activetest.session.interval_names.outside_sure_mark`, the
    bounds with ``digits`` decimals, as the intervals beside them): the unbiased estimate,
    not moved; else nothing. ``anytime``: an
    :class:`~activetest.session.records.AnytimeInterval`, the dict ``status`` reads it
    back as, or None (QA: a single risk's 0.2222 beside intervals cut to [0.2250, 0.3000]
    was said only in a note at the end, where a paired difference's is said at it)."""
    from activetest.session.interval_names import outside_sure_mark

    def get(name: str) -> Any:
        return anytime.get(name) if isinstance(anytime, Mapping) else getattr(anytime, name,
                                                                              None)

    low, high = get("sure_low"), get("sure_high")
    if anytime is None or get("estimate_outside_sure") is not True \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in (low, high)):
        return ""
    return outside_sure_mark(float(low), float(high), f"{{:.{digits}f}}")


SessionArg = Annotated[Path, typer.Argument(help="The session file (SQLite).",
                                            show_default=False)]
#: ``init``'s session file, as typed: a ``Path`` drops a trailing separator, which makes
#: ``newdir/`` a folder's name the store refuses (it made a file called ``newdir``, QA).
NewSessionArg = Annotated[str, typer.Argument(help="The session file (SQLite) to create.",
                                              show_default=False)]


def out_path(value: str | Path) -> Path:
    """``--out`` as typed (the ``parser`` of every command's ``--out``): refused when
    empty, exit 2 with one message. ``Path("")`` is the current folder, where ``report
    --out ""`` wrote without being asked (QA); ``.`` names it on purpose."""
    if not str(value).strip():
        raise typer.BadParameter("is empty: name the file or folder to write to (. for the "
                                 "current folder)")
    return Path(value)


NoProgress = Annotated[bool, typer.Option("--no-progress", help="Hide progress bars.")]
Threads = Annotated[int | None, typer.Option(
    "--threads", help="CPU threads per llama.cpp model (default: half the cores, llama.cpp's "
                      "convention; surrogate and target score side by side; 1 is much faster on "
                      "a machine busy with other work).", show_default=False)]
NoPredictions = Annotated[bool, typer.Option(
    "--no-predictions", help="Leave out the surrogate's guess (sheet columns predicted, "
                             "predicted_prob; Label Studio pre-annotations), so that it "
                             "cannot sway the people labelling.")]
OverwriteSheet = Annotated[bool, typer.Option(
    "--overwrite", help="Replace an existing --out file that holds labels filled in "
                        "(without it such a file is refused: import its labels first).")]
Timeout = Annotated[float, typer.Option("--busy-timeout", help="Seconds to wait for another "
                                        "process's lock on the session file.")]


def _json_text(obj: Any) -> str:
    """``obj`` as strict JSON for ``--json`` output: JSON has no NaN or Infinity, so a
    number that is not one (a graded target's NLL) or an unbounded side of an interval is
    ``null`` (QA: bare ``NaN`` tokens failed ``JSON.parse``); other objects as text."""
    import json
    import math

    def clean(x: Any) -> Any:
        if isinstance(x, float):
            return x if math.isfinite(x) else None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(obj), indent=1, default=str, allow_nan=False)


def _open(path: Path, busy_timeout: float = 5.0, threads: int | None = None) -> Any:
    from activetest.session.workflow import Session

    return Session.open(path, busy_timeout=busy_timeout, threads=threads)


def _rows_written(s: Any, count: int, items: str) -> str:
    """What an export wrote: ``count`` items, or, with compared answers (one row per
    answer), ``count`` rows (QA: "wrote 8 selected item(s)" for 4 items' 8 answers)."""
    if getattr(s, "graded", False) and s.compared_targets():
        return f"{count} row(s), one per answer of the {items}"
    return f"{count} {items}"


def replaced_note(out: Any, n: int) -> str:
    """The line that says a sheet written over held ``n`` answers, every one already
    stored in the session (imported), so none was lost."""
    return _escape(f"{out} held {n} label(s), all stored in the session (imported), and was "
                   f"written over")


def _draw(s: Any, n: int, progress: bool) -> list[Any]:
    """``s.select(n)`` with a bar of its draws on a terminal (an adaptive design's draw is a
    pass over the pool: QA saw ``select --n 20000`` at 1e5 items run 94 s without a
    word), then a row of the step after them (``select``'s ``phase``); on a file or a
    pipe none is drawn, nor its modules imported (a plain ``select`` is timed)."""
    if not progress or not (_out.is_terminal or _out.is_jupyter):
        return list(s.select(n))
    from activetest.models import phased_progress_bar

    # after the draws, the blind spot's state is advanced over them (QA: 2.4 s of 6.4 s
    # at 3,000 draws, 1e5 items, under a full bar): a row of its own says so
    with phased_progress_bar(n, "drawing", True) as bar:
        return list(s.select(n, progress=bar.advance, phase=bar.phase))


def _print_waiting(waiting: Any) -> None:
    """A note when labels of later draws wait for an earlier draw still unlabelled."""
    if waiting is not None and waiting.waiting:
        _out.print(f"[yellow]note:[/] {_escape(waiting.describe())}")
