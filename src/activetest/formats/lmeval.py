"""Read lm-evaluation-harness ``--log_samples`` files as class log-probabilities.

``lm_eval --log_samples --output_path DIR`` writes one ``samples_<task>_<date>.jsonl``
per task (and ``results_<date>.json`` beside them), one JSON object per document::

    {"doc_id": 0, "doc": {"sentence": "...", "label": 1}, "target": "1",
     "arguments": {"gen_args_0": {"arg_0": "<context>", "arg_1": " negative"},
                   "gen_args_1": {"arg_0": "<context>", "arg_1": " positive"}},
     "resps": [[["-2.31", "False"]], [["-0.12", "True"]]],
     "filtered_resps": [["-2.31", "False"], ["-0.12", "True"]],
     "filter": "none", "metrics": ["acc"], "doc_hash": "...", "acc": 1.0}

For a ``multiple_choice`` task ``filtered_resps`` holds one ``[loglikelihood,
is_greedy]`` pair per choice. Versions 0.4.3 and later write every value as a
string; 0.4.0-0.4.2 wrote one indented JSON *array* of such records (named
``<model_args>_<task>.jsonl``), with numbers, ``arguments`` as ``[context,
continuation]`` pairs and no ``filter`` key. All of these are read, also gzipped
(``.gz``) and under a ``.json`` name; a byte-order mark is skipped.

What the numbers mean: each loglikelihood is the log-probability of the choice's
WHOLE continuation after the context, so the class log-probabilities are
``log_softmax`` over the choices' loglikelihoods. That equals the paper's
first-token scoring only when every choice is a single token (`` A``..`` D``);
for multi-token choices it is full-sequence scoring (no length normalisation).

Joining records to items, safely:

* **Keys.** A single file's records are keyed by ``str(doc_id)``. Several files (a
  folder or a glob, e.g. MMLU's one file per subject, whose ``doc_id`` restarts at
  0 in each) are keyed ``<task>/<doc_id>``, the task taken from the file name
  (``samples_<task>_<date>.jsonl``; for older names, the name without suffixes).
* **Classes.** Each record carries its choices (``arguments``, kept here in the file's
  order); putting them on the task's classes is the task's business, done by
  :func:`activetest.data.choices.class_logprobs` (by label word, per document).
* **Texts.** Each record carries its document (``doc``): :func:`check_documents`
  compares every pool item's fields with it (Unicode-normalised, case and
  whitespace ignored) and refuses a mismatch, naming the first differing item, so
  a pool in another row order cannot silently receive another item's prediction.

``target`` is the gold choice's index (as a string) or the text of one choice; a
negative index (``"-1"``, the usual mark of an unlabelled test set) means no gold
label. The session never uses these targets as labels.

``acc_mutual_info`` tasks log 2C loglikelihoods per document: C conditional ones,
then the same C continuations after an empty context; the conditional half is
read. ``generate_until`` files hold generated text, not class scores, and are refused.
"""

from __future__ import annotations

import ast
import glob as globlib
import gzip
import hashlib
import io
import json
import math
import re
import unicodedata
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest._numeric import log_softmax
from activetest.formats.globs import has_glob_chars, is_pattern
from activetest.formats.tables import decode_utf8, gunzip_if_gzip

__all__ = ["LmEvalSamples", "check_documents", "document_texts", "lmeval_documents",
           "lmeval_files", "load_lmeval_samples", "looks_like_lmeval", "normalise_text",
           "read_lmeval_samples", "task_of_file"]

#: ``samples_<task>_<date>.jsonl`` as lm-eval 0.4.3+ names its files.
_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+?)"
                   r"\.jsonl?(?:\.gz)?$", re.IGNORECASE)
_SAMPLE_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")


def _err(where: str, msg: str) -> ValueError:
    return ValueError(f"{where}: {msg}")


def normalise_text(text: str) -> str:
    """Text for comparison: Unicode NFKC, case-folded, without any whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).casefold())


# --------------------------------------------------------------------------- files


def task_of_file(path: str | Path) -> str:
    """The task name a samples file's name gives (``samples_<task>_<date>.jsonl``).

    Names that do not follow lm-eval 0.4.3+'s pattern give the name without its
    suffixes (lm-eval 0.4.0-0.4.2 wrote ``<model_args>_<task>.jsonl``).
    """
    name = Path(path).name
    m = _NAME.match(name)
    if m:
        return m["task"]
    for suffix in sorted(_SAMPLE_SUFFIXES, key=len, reverse=True):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def lmeval_files(spec: str | Path) -> list[Path]:
    """The samples files a path names: a file, a folder (every ``samples_*`` file
    under it, recursively) or a glob pattern; sorted.

    Raises:
        ValueError: nothing matches.
    """
    text = str(spec)
    p = Path(text).expanduser()
    if p.is_file():
        return [p]
    if p.is_dir():
        from activetest.formats.tables import files_under

        try:  # linked folders followed (QA: rglob passed over a linked run folder unsaid)
            found, odd = files_under(p)
        except OSError as exc:
            raise ValueError(f"{exc.filename or p}: a folder that cannot be read "
                             f"({exc.strerror or exc})") from None
        bad = [f for f in odd if f.name.startswith("samples_")
               and f.name.lower().endswith(_SAMPLE_SUFFIXES)]
        if bad:
            raise ValueError(f"{bad[0]}: not a readable file (a broken link, a link loop, a "
                             f"device or a pipe): an lm-eval samples file must be a file; "
                             f"restore it or move it out")
        files = [f for f in found if f.name.startswith("samples_")
                 and f.name.lower().endswith(_SAMPLE_SUFFIXES)]
        if not files:
            raise ValueError(f"{p} is a folder with no lm-eval samples files "
                             f"(samples_<task>_<date>.jsonl) in it or below it: give a file "
                             f"(a prediction table or a samples file), or the folder lm-eval "
                             f"--log_samples wrote")
        return files
    if is_pattern(text):  # (an existing file or folder was returned above)
        files = sorted(Path(f) for f in globlib.glob(str(p), recursive=True)
                       if Path(f).is_file())
        if not files:
            raise ValueError(_no_match(text, p))
        return files
    raise ValueError(f"{text}: no such file or folder")


def _no_match(text: str, pattern: Path) -> str:
    """What is said of a glob ``pattern`` (as given: ``text``) that matches no file: the
    pattern and the folder it was looked for in (the part before the first wildcard, as
    an absolute path), and whether that folder exists (QA: an unmatched pool pattern given
    with --id-column was said to be "an lm-eval samples pool", which takes none)."""
    parts = pattern.parts
    fixed = next((i for i, part in enumerate(parts) if has_glob_chars(part)), len(parts))
    folder = Path(*parts[:fixed]) if fixed else Path(".")
    where = folder.absolute()
    state = "" if folder.is_dir() else ", which does not exist"
    return f"{text}: no file matches the pattern (looked in the folder {where}{state})"


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read lm-eval samples file: "
                         f"{exc.strerror or exc}") from None
    return decode_utf8(gunzip_if_gzip(raw, path), path)


def _is_record(obj: Any) -> bool:
    return isinstance(obj, dict) and "doc_id" in obj and (
        "filtered_resps" in obj or "resps" in obj)


def looks_like_lmeval(path: str | Path) -> bool:
    """Whether ``path`` holds lm-eval sample records (JSON Lines or a JSON array).

    Looks past a byte-order mark, gzip compression, blank lines and up to 20 lines
    that are not valid JSON (so a damaged first line is reported by the reader,
    not mistaken for another format). Reads only as far as it must (the first record,
    or the lines before it; bytes that are not UTF-8 read as U+FFFD): a large JSON Lines
    or JSON-array prediction table is told from a samples file without its whole text
    in memory (QA: it was read whole here before being read row by row).
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        with (gzip.open(p, "rb") if gz else p.open("rb")) as raw, \
                io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace",
                                 newline="") as text:
            return _looks_like_records(iter(lambda: text.read(_HEAD_CHUNK), ""))
    except (OSError, EOFError, zlib.error):  # unreadable; a damaged gzip stream where read
        return False


#: Characters :func:`looks_like_lmeval` reads at a time.
_HEAD_CHUNK = 1 << 16


def _looks_like_records(chunks: Iterator[str]) -> bool:
    """:func:`looks_like_lmeval` of the text given in ``chunks``, read only as far as
    needed: the first element of a JSON array, else the first line that is JSON (after at
    most 20 that are not), lines split as :meth:`str.splitlines` splits them."""
    text = ""
    eof = False

    def more() -> bool:
        nonlocal text, eof
        chunk = next(chunks, "")
        if not chunk:
            eof = True
            return False
        text += chunk
        return True

    while not text.lstrip() and more():
        pass
    head = text.lstrip()
    if head.startswith("["):
        # the first element alone, so that an array damaged further on is still found
        start = len(text) - len(head) + 1
        while True:
            while start < len(text) and text[start].isspace():
                start += 1
            if start < len(text) or not more():
                break
        while True:
            try:
                first, _ = _DECODER.raw_decode(text, start)
            except (ValueError, RecursionError):
                if more():  # perhaps cut where the text read so far ends
                    continue
                return False
            return _is_record(first)
    def lines() -> Iterator[str]:
        """The lines of the text, read on a chunk at a time (the last line of what is read
        may go on in the next chunk)."""
        nonlocal text
        while True:
            went_on = more()
            parts = text.splitlines(keepends=True)
            text = parts.pop() if went_on and parts else ""
            for part in parts:
                yield part.splitlines()[0]
            if not went_on:
                return

    bad = 0
    for line in lines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            if bad > 20:
                return False
            continue
        return _is_record(rec)
    return False

_DECODER = json.JSONDecoder()


def _records(path: Path, cut: list[str] | None = None) -> Iterator[tuple[str, Any]]:
    """``(where, record)`` of every record in one file (JSON Lines or a JSON array).

    ``cut``: a list to collect the unfinished last record of a file a killed run left
    (:func:`activetest.formats._json.unfinished_last_line`: skipped, ``"<file>: line
    <n>"`` appended); without it such a line is refused like any bad line."""
    if cut is None:
        text = _read_text(path)
    else:
        from activetest.formats._json import unfinished_last_line

        try:
            raw = gunzip_if_gzip(path.read_bytes(), path)
        except OSError as exc:
            raise ValueError(f"{path}: cannot read lm-eval samples file: "
                             f"{exc.strerror or exc}") from None
        raw, line = unfinished_last_line(raw)
        if line is not None:
            cut.append(f"{path}: line {line}")
        text = decode_utf8(raw, path)
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _err(f"{path}: line {exc.lineno}", f"not valid JSON ({exc.msg}); lm-eval "
                       f"0.4.0-0.4.2 files are one JSON array") from None
        except (ValueError, RecursionError) as exc:
            raise _err(str(path), f"not valid JSON ({str(exc)[:80]})") from None
        if not isinstance(data, list):
            raise _err(str(path), "expected a JSON array of sample records")
        for i, rec in enumerate(data):
            yield f"{path}: record {i}", rec
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise _err(where, f"not valid JSON ({str(exc)[:80]})") from None
        yield where, rec


def _results_nshot(path: Path, task: str) -> int | None:
    """lm-eval's ``n-shot`` for ``task`` from the results file written with ``path``."""
    m = _NAME.match(path.name)
    candidates = []
    if m:
        candidates.append(path.with_name(f"results_{m['date']}.json"))
    for results in candidates:
        try:
            data = json.loads(results.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError, RecursionError):
            continue
        shots = data.get("n-shot") if isinstance(data, dict) else None
        value = shots.get(task) if isinstance(shots, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


#: The keys of an lm-eval task config that make the prompt a model is shown and how its
#: answer is read: two rounds of one target must agree on them.
PROMPT_KEYS = ("doc_to_text", "doc_to_target", "doc_to_choice", "description",
               "target_delimiter", "fewshot_delimiter", "use_prompt", "gen_prefix",
               "output_type")


def _results_prompt(path: Path, task: str) -> dict[str, str] | None:
    """A digest of each :data:`PROMPT_KEYS` value lm-eval's results file written with
    ``path`` gives ``task``'s config (``configs``; functions as their source, as lm-eval
    writes them); None where no results file gives the task's config."""
    m = _NAME.match(path.name)
    if not m:
        return None
    try:
        data = json.loads(path.with_name(f"results_{m['date']}.json").read_text(
            encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None
    configs = data.get("configs") if isinstance(data, dict) else None
    cfg = configs.get(task) if isinstance(configs, dict) else None
    if not isinstance(cfg, dict):
        return None
    return {k: hashlib.sha256(json.dumps(cfg.get(k), sort_keys=True, default=str)
                              .encode("utf-8")).hexdigest()[:16] for k in PROMPT_KEYS}


# --------------------------------------------------------------------------- values


def _parse_float(value: Any) -> float | None:
    """A loglikelihood written as a number or as a string; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _loglikelihood(entry: Any) -> float | None:
    """The loglikelihood of one choice from its ``filtered_resps`` entry."""
    if isinstance(entry, (list, tuple)):
        return _parse_float(entry[0]) if entry else None
    if isinstance(entry, str) and entry.strip().startswith("("):
        # a stringified tuple, "(-1.23, False)", as some writers produce
        try:
            parsed = ast.literal_eval(entry.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(parsed, tuple) and parsed:
            return _parse_float(parsed[0])
        return None
    return _parse_float(entry)


def _arguments(arguments: Any) -> list[tuple[str, str]] | None:
    """``(context, continuation)`` per request from ``arguments`` (dict or legacy pairs)."""
    pairs: list[Any]
    if isinstance(arguments, Mapping):
        pairs = []
        for key in sorted(arguments, key=lambda k: (len(str(k)), str(k))):
            arg = arguments[key]
            if not isinstance(arg, Mapping):
                return None
            pairs.append([arg.get("arg_0"), arg.get("arg_1")])
    elif isinstance(arguments, list):
        pairs = arguments
    else:
        return None
    out: list[tuple[str, str]] = []
    for pair in pairs:
        if (not isinstance(pair, (list, tuple)) or len(pair) < 2 or not isinstance(pair[1], str)
                or not isinstance(pair[0], str)):
            return None
        out.append((pair[0], pair[1]))
    return out


def _target_index(target: Any, choices: Sequence[str] | None, n: int) -> int | None:
    """The gold choice's index, -1 for "no gold label", None if unreadable."""
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return -1 if target < 0 else (target if target < n else None)
    if isinstance(target, str):
        text = target.strip()
        if re.fullmatch(r"-?[0-9]{1,18}", text):
            idx = int(text)
            return -1 if idx < 0 else (idx if idx < n else None)
        if text == "":
            return -1
        if choices:
            matches = [i for i, c in enumerate(choices) if c.strip() == text]
            if len(matches) == 1:
                return matches[0]
    return None


# --------------------------------------------------------------------------- the samples


@dataclass(frozen=True)
class LmEvalSamples:
    """The parsed content of lm-eval samples file(s), one row per document.

    Attributes:
        item_ids: the join key per document: ``str(doc_id)`` for one file,
            ``<task>/<doc_id>`` for several (see the module docstring).
        logprobs: ``(N, C)`` float64 log-softmax over the choices' loglikelihoods,
            in each document's own choice order (see
            :func:`activetest.data.choices.class_logprobs`).
        labels: ``(N,)`` int64 gold choice index in that order; -1 where the file
            gives none.
        choices: the first document's continuations (stripped), or ``()``.
        filter: the lm-eval filter whose responses were read (``"none"`` if unnamed).
        doc_choices: per document, its continuations (stripped), None if not recorded.
        docs: per document, its ``doc`` (the dataset row), None if not recorded.
        where: per document, ``"<file>: line <n>"`` (``record <i>`` in JSON arrays).
        tasks: per document, the task name its file's name gives.
        files: the files read, in order.
        n_shot: task -> lm-eval's ``n-shot`` from the results file beside the
            samples file, None where there is none.
        mutual_info: the files log ``acc_mutual_info``'s 2C loglikelihoods; the
            conditional half was read.
    """

    item_ids: tuple[str, ...]
    logprobs: np.ndarray
    labels: np.ndarray
    choices: tuple[str, ...]
    filter: str
    doc_choices: tuple[tuple[str, ...] | None, ...] = ()
    docs: tuple[Any, ...] = ()
    where: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    n_shot: Mapping[str, int | None] | None = None
    mutual_info: bool = False


@dataclass
class _Doc:
    key: str
    where: str
    task: str
    lls: list[float]
    target: int
    conts: tuple[str, ...] | None
    doc: Any
    mutual_info: bool
    unnamed_filter: bool  # lm-eval 0.4.0-0.4.2 did not record the filter


def _parse_record(rec: Any, where: str) -> tuple[int | str, list[float],
                                                tuple[str, ...] | None, int, bool]:
    """``(doc_id, loglikelihoods, continuations, target index, mutual_info)`` of a record."""
    if not isinstance(rec, dict):
        raise _err(where, f"expected a JSON object, got {type(rec).__name__}")
    for key in ("doc_id", "filtered_resps"):
        if key not in rec:
            raise _err(where, f"missing key {key!r}; is this an lm-eval --log_samples file?")
    doc_id = rec["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
        raise _err(where, f"doc_id must be an integer or string, got {doc_id!r:.60}")
    resps = rec["filtered_resps"]
    if isinstance(resps, list) and resps and all(
            isinstance(e, str) and _loglikelihood(e) is None for e in resps):
        raise _err(where, f"filtered_resps holds generated text ({resps[0]!r:.40}), as a "
                          f"generate_until task writes: only multiple-choice (loglikelihood) "
                          f"tasks give class scores, not generate_until ones")
    if not isinstance(resps, list) or len(resps) < 2:
        raise _err(where, "filtered_resps must list one [loglikelihood, is_greedy] pair per "
                          "choice (at least 2): only multiple-choice (loglikelihood) tasks "
                          "can be read")
    lls: list[float] = []
    for j, entry in enumerate(resps):
        ll = _loglikelihood(entry)
        if ll is None:
            raise _err(where, f"filtered_resps[{j}] = {entry!r:.60} is not a loglikelihood; "
                              f"only multiple-choice (loglikelihood) tasks can be read, not "
                              f"generate_until ones")
        if not math.isfinite(ll):
            raise _err(where, f"filtered_resps[{j}] loglikelihood is {ll} (not finite)")
        lls.append(ll)
    args = _arguments(rec.get("arguments"))
    if args is not None and len(args) != len(lls):
        args = None
    metrics = rec.get("metrics")
    wants_mi = isinstance(metrics, list) and "acc_mutual_info" in metrics
    mutual_info = False
    if args is not None and len(args) % 2 == 0:
        half = len(args) // 2
        cond, uncond = args[:half], args[half:]
        if (half >= 2 and all(c == "" for c, _ in uncond) and any(c != "" for c, _ in cond)
                and [x for _, x in cond] == [x for _, x in uncond]):
            mutual_info = True
            lls, args = lls[:half], cond
    if wants_mi and not mutual_info:
        raise _err(where, f"an acc_mutual_info record with {len(lls)} loglikelihoods whose "
                          f"'arguments' do not show which are conditional and which are "
                          f"unconditional; it cannot be read as class scores")
    conts = tuple(c.strip() for _, c in args) if args is not None else None
    target = _target_index(rec.get("target", -1), conts, len(lls))
    if target is None:
        raise _err(where, f"target {rec.get('target')!r:.60} is neither a choice index in "
                          f"0..{len(lls) - 1} (or -1 for none) nor the text of one choice")
    return doc_id, lls, conts, target, mutual_info


def _read_docs(files: Sequence[Path], cut: list[str] | None = None
               ) -> Iterator[tuple[str | None, list[_Doc]]]:
    """Per file and filter, the parsed documents (filter None: the record names none;
    ``cut``: as :func:`_records`)."""
    several = len(files) > 1
    tasks: dict[str, Path] = {}
    for path in files:
        task = task_of_file(path)
        if several:
            if task in tasks:
                raise ValueError(f"{path}: holds task {task!r} like {tasks[task]} (two runs of "
                                 f"one task?); pass only one file per task")
            tasks[task] = path
        by_filter: dict[str | None, list[_Doc]] = {}
        seen = False
        for where, rec in _records(path, cut):
            seen = True
            doc_id, lls, conts, target, mi = _parse_record(rec, where)
            flt = str(rec["filter"]) if "filter" in rec else None
            key = f"{task}/{doc_id}" if several else str(doc_id)
            by_filter.setdefault(flt, []).append(
                _Doc(key, where, task, lls, target, conts, rec.get("doc"), mi, flt is None))
        if not seen:
            raise ValueError(f"{path}: no samples (empty file)")
        for flt, docs in by_filter.items():
            yield flt, docs


def _gather(files: Sequence[Path], filter_name: str | None, *, any_filter: bool,
            cut: list[str] | None = None) -> tuple[list[_Doc], str]:
    per_filter: dict[str, list[_Doc]] = {}
    for flt, docs in _read_docs(files, cut):
        per_filter.setdefault("none" if flt is None else flt, []).extend(docs)
    filters = sorted(per_filter)
    if any_filter:
        chosen = filter_name if filter_name in per_filter else filters[0]
    elif filter_name is None:
        if len(filters) > 1:
            raise ValueError(f"{files[0] if len(files) == 1 else 'the samples files'}: hold "
                             f"responses for several lm-eval filters {filters}; choose one by "
                             f"adding ?filter=NAME to the table: spec, e.g. "
                             f"table:FILE?filter={filters[0]} (filter_name= in Python)")
        chosen = filters[0]
    else:
        if filter_name not in per_filter:
            raise ValueError(f"{files[0] if len(files) == 1 else 'the samples files'}: no "
                             f"samples for filter {filter_name!r} (has {filters})")
        chosen = filter_name
    docs = per_filter[chosen]
    first: dict[str, str] = {}
    out: list[_Doc] = []
    for d in docs:
        if d.key in first:
            if any_filter:
                continue
            old = "" if not d.unnamed_filter else (
                "; lm-eval 0.4.0-0.4.2 wrote one record per filter without naming the filter: "
                "if the run had several filters, the file cannot tell them apart")
            raise _err(d.where, f"duplicate doc_id {d.key.rsplit('/', 1)[-1]!r} (first on "
                                f"{first[d.key].rsplit(': ', 1)[-1]}){old}")
        first[d.key] = d.where
        out.append(d)
    return out, chosen


def load_lmeval_samples(path: str | Path | Sequence[str | Path], *,
                        filter_name: str | None = None,
                        cut: list[str] | None = None) -> LmEvalSamples:
    """Parse lm-eval samples file(s) into class log-probs, gold choices and documents.

    Args:
        path: a ``samples_<task>_<date>.jsonl`` file (or ``.json``, ``.gz``, or an
            lm-eval 0.4.0-0.4.2 JSON array), a folder of them, a glob pattern, or a
            list of files. Several files are keyed ``<task>/<doc_id>``.
        filter_name: which lm-eval filter's responses to read when the files hold
            several (the ``filter`` key); default: the only one.
        cut: a list to collect the unfinished last record of a file a killed run left
            (skipped, ``"<file>: line <n>"`` appended; the caller says so); without it
            such a line is refused like any bad line.

    Raises:
        ValueError: unreadable file, malformed record (the file and line are named),
            a duplicate ``doc_id``, a non-loglikelihood task, inconsistent numbers of
            choices, or several filters without ``filter_name``.
    """
    files = ([Path(p) for p in path] if isinstance(path, (list, tuple))
             else lmeval_files(path))  # type: ignore[arg-type]
    docs, chosen = _gather(files, filter_name, any_filter=False, cut=cut)
    n = len(docs[0].lls)
    for d in docs:
        if len(d.lls) != n:
            raise _err(d.where, f"{len(d.lls)} choices, but earlier documents have {n}")
    lp = log_softmax(np.asarray([d.lls for d in docs], dtype=np.float64))
    tasks = sorted({d.task for d in docs})
    return LmEvalSamples(
        item_ids=tuple(d.key for d in docs), logprobs=lp,
        labels=np.asarray([d.target for d in docs], dtype=np.int64),
        choices=docs[0].conts or (), filter=chosen,
        doc_choices=tuple(d.conts for d in docs), docs=tuple(d.doc for d in docs),
        where=tuple(d.where for d in docs), tasks=tuple(d.task for d in docs),
        files=tuple(str(f) for f in files),
        n_shot={t: _results_nshot(next(f for f in files if task_of_file(f) == t), t)
                for t in tasks},
        mutual_info=any(d.mutual_info for d in docs))


def lmeval_documents(path: str | Path) -> tuple[list[str], list[str], list[Any],
                                                list[tuple[str, ...] | None], list[int]]:
    """The documents of samples file(s), whatever their filters: for a pool.

    Returns:
        ``(keys, where, docs, choices, targets)`` per document, in file order
        (one entry per key; with several filters, the first filter's records).
    """
    files = lmeval_files(path)
    docs, _ = _gather(files, None, any_filter=True)
    return ([d.key for d in docs], [d.where for d in docs], [d.doc for d in docs],
            [d.conts for d in docs], [d.target for d in docs])


def read_lmeval_samples(path: str | Path, *, filter_name: str | None = None,
                        ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Read lm-eval ``--log_samples`` file(s).

    Returns:
        ``(item_ids, logprobs, labels)``: the key per document in file order,
        ``(N, C)`` float64 class log-probs in the file's choice order, and ``(N,)``
        int64 gold choice indices (-1 where the file gives none).

    Raises:
        ValueError: see :func:`load_lmeval_samples`.
    """
    s = load_lmeval_samples(path, filter_name=filter_name)
    return list(s.item_ids), s.logprobs, s.labels


# --------------------------------------------------------------------------- documents


def _leaves(value: Any, out: set[str], depth: int = 0) -> None:
    if depth > 20:
        return
    if isinstance(value, str):
        out.add(normalise_text(value))
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, (int, float)):
        out.add(normalise_text(str(value)))
    elif isinstance(value, Mapping):
        for v in value.values():
            _leaves(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _leaves(v, out, depth + 1)


def document_texts(doc: Any) -> set[str]:
    """Every text (and number) a document holds, normalised (:func:`normalise_text`)."""
    out: set[str] = set()
    _leaves(doc, out)
    return out


def check_documents(samples: LmEvalSamples, rows: Sequence[int],
                    items: Iterable[tuple[str, Mapping[str, str]]], *,
                    remedy: str | None = None) -> None:
    """Refuse a join whose pool items are not the file's documents.

    Args:
        samples: the parsed files.
        rows: per item, its row in ``samples``.
        items: ``(item id, fields)`` per item, in pool order.
        remedy: what the message tells the user to do where the texts differ (None: the
            pool's remedies, for a file read as the pool's target or surrogate; a
            ``--history`` log is moved out instead, the pool being right).

    Every non-empty field of an item must occur, normalised, among the texts of
    the document it is joined to (so the join holds for any templates).

    Raises:
        ValueError: naming the first item whose text differs (and how many do), or
            the first document without a ``doc`` (its text cannot be checked).
    """
    bad: list[tuple[str, int, str, str]] = []
    undocumented: list[tuple[str, int]] = []
    n = 0
    for (item_id, fields), r in zip(items, rows, strict=True):
        n += 1
        doc = samples.docs[r] if samples.docs else None
        if doc is None:
            undocumented.append((item_id, r))
            continue
        texts = document_texts(doc)
        for name, value in fields.items():
            key = normalise_text(str(value))
            if key and key not in texts:
                bad.append((item_id, r, name, str(value)))
                break
    if undocumented:
        item_id, r = undocumented[0]
        raise ValueError(
            f"{samples.where[r]}: the record for pool item {item_id!r} has no 'doc', so its "
            f"text cannot be checked against the pool ({len(undocumented)} of {n} such); "
            f"lm-eval writes the document with --log_samples. To join by id alone (only if "
            f"you know the pool is in the file's order), add ?match=id to the table: spec "
            f"(match='id' in Python)")
    if bad:
        item_id, r, name, value = bad[0]
        doc = json.dumps(samples.docs[r], ensure_ascii=False)
        doc = doc if len(doc) <= 160 else doc[:157] + "..."
        raise ValueError(
            f"{samples.where[r]}: pool item {item_id!r} is not this record's document: its "
            f"{name} {value[:80]!r} does not occur in the doc {doc} ({len(bad)} of {n} items "
            f"differ). Items are joined to lm-eval records by id = doc_id (the document's "
            f"position in its dataset split), "
            + (remedy if remedy is not None else
               "so the pool must list the documents in the same order, or name an id "
               "column holding lm-eval's doc_id (--id-column). Simplest: use the samples "
               "file itself as the pool (--pool FILE), whose items are the records' "
               "documents"))
