"""A target's answers read from the files evaluation harnesses already write.

:func:`read_answers` turns one file into an :class:`AnswerFile`: a tuple of
:class:`AnswerRecord` (one per item: the answer text, the prompt fields a judge
is shown, the references, the file's own judgment, token log-probs where
recorded) and the file's provenance (format, model, task, n-shot where known).
Ids are compared as strings; :meth:`AnswerFile.align` puts the answers in the
order of a pool's ids and names every id the file lacks, and where the ids may be
mere positions (:func:`ids_may_be_positions`: lm-eval's ``doc_id``, inspect_ai's
numbering of samples without ids, their Every Eval Ever copies, whole-number table
ids) :func:`confirm_join` refuses the join unless every item's content confirms
it, so a join is never silently wrong. Errors are ``ValueError`` naming the file,
the line (or zip entry) and what was expected.

The prompt a judge is shown is the sample's own input: a rendered few-shot prompt
(lm-eval's, an Every Eval Ever ``input.raw``, an inspect input) loses the
in-context examples before it (:func:`own_input`), system messages and earlier
turns; the full prompt as sent is ``meta["prompt_text"]``.

Formats (``format=``; detected when omitted, from the bytes and every record,
not only the first)
----------------------------------------------------------------------------

``lmeval``: lm-evaluation-harness ``--log_samples`` files of ``generate_until``
    tasks, ``samples_<task>_<date>.jsonl`` (optionally gzipped), one object per
    document and filter::

        {"doc_id": 0, "doc": {"question": "...", "context": "..."}, "target": "...",
         "arguments": {"gen_args_0": {"arg_0": "<prompt>", "arg_1": {"until": ["\\n"]}}},
         "resps": [[" Paris\\n"]], "filtered_resps": [" Paris"], "filter": "none",
         "metrics": ["exact_match"], "exact_match": 1.0, "doc_hash": "...", ...}

    - ``item_id``: ``str(doc_id)``, or ``str(doc[id_field])`` with ``id_field=``
      (e.g. ``"id"`` for SQuAD's question ids). A file holds one task, so the
      key (task, doc_id) is unique per file; a repeated doc_id within the chosen
      filter is an error.
    - ``answer``: the filtered response (stripped); ``meta["response"]`` keeps
      it unstripped and ``meta["raw_response"]`` the unfiltered ``resps``.
      Several filters in one file (e.g. gsm8k's ``strict-match`` and
      ``flexible-extract``) need ``filter_name=``. A filter that leaves several
      generations per document (``repeats`` without a reducing filter),
      loglikelihood (multiple-choice) files (read those with
      :mod:`activetest.models.lmeval`) and ``loglikelihood_rolling`` files are
      refused: a generate_until sample's arguments carry its generation settings.
    - ``prompt``: the string fields of ``doc``; ``{"input": <rendered prompt
      without its few-shot examples>}`` when ``doc`` has none. The rendered prompt
      (with its few-shot examples) is ``meta["prompt_text"]``.
    - ``references``: ``target``. lm-eval writes ``str(target)``, so a list of
      references arrives as its Python repr (``"['Paris', 'Paris, France']"``);
      a target that parses as a list of strings is read as that list.
    - ``score``: a per-sample metric field named in ``metrics``. Default: the
      first one whose values are numbers in [0, 1] in every chosen record (none:
      no score); ``score_name=`` names one (it must be such a number everywhere);
      ``score_name=""`` reads none. All metric values are in ``meta["metrics"]``.
    - provenance: the task from the file name; model, n-shot and the lm-eval
      version from the ``results_<date>.json`` written beside it, if present.

``inspect``: inspect_ai logs: ``.eval`` files (a zip of ``header.json`` and
    ``samples/<id>_epoch_<n>.json``; also the chunked sample layout
    ``samples/<id>_epoch_<n>/sample.json``, and logs of a run that stopped
    early, which have ``_journal/start.json`` instead of ``header.json``) and
    ``.json`` logs (one object with ``eval`` and ``samples``). Read with the
    standard library; members compressed with zstandard (what inspect_ai writes
    today) need the ``zstandard`` package before Python 3.14 (a dependency of
    activetest there).

    - ``item_id``: the sample ``id`` (inspect_ai numbers samples without one
      1..N: such ids are positions). A log with several epochs needs ``epoch=``
      (answers differ between epochs); a repeated (id, epoch) is an error.
    - ``answer``: ``output.completion`` (stripped), else the text parts of
      ``output.choices[0].message.content``. A sample without output (e.g. it
      failed: ``error``) has no answer.
    - ``prompt``: ``{"input": ...}``, the text of ``input`` (or of its last user
      message), without inline few-shot examples; ``meta["prompt_text"]`` is the
      whole input (a ``role: text`` transcript, system messages and earlier turns
      included, when it has several messages).
    - ``references``: ``target`` (a string or a list of strings).
    - ``score``: a scorer's ``value`` read as inspect reads it: ``C`` = 1,
      ``I`` = 0, ``P`` = 0.5, ``N`` = 0, booleans, numbers, numeric strings,
      yes/no/true/false. Default: the first scorer (header order) whose values
      are all in [0, 1]; ``score_name=`` chooses; ``""`` reads none. A sample
      answered but never scored (no ``scores``: its scorer failed) has no score and
      does not disqualify the scorer (its id is in ``provenance["unscored"]``); a
      scorer whose value is a dict is not read unless one key is named,
      ``score_name="scorer/key"`` (no key is guessed). All values
      and each scorer's extracted ``answer`` are in ``meta["scores"]`` and
      ``meta["score_answers"]``.
    - ``token_logprobs``: ``output.choices[0].logprobs.content[].logprob`` when
      the model was asked for log-probs (``GenerateConfig(logprobs=True)``), as
      the provider reported them: every generated token, which need not match
      the stripped answer token for token. lm-eval and EEE files record none.
    - ``attachment://`` references (inspect moves long text out of samples) are
      resolved.

``eee``: Every Eval Ever instance-level JSONL (schema 0.2 and 0.3:
    ``instance_level_eval.schema.json``), one record per sample and evaluation::

        {"schema_version": "0.3.0", "evaluation_id": "...", "model_id": "org/model",
         "evaluation_name": "squad", "sample_id": "56be4db0acb8001400a502ec",
         "interaction_type": "single_turn",
         "input": {"raw": "...", "reference": ["Denver Broncos"]},
         "output": {"raw": ["Denver Broncos"]},
         "answer_attribution": [{"turn_idx": 0, "source": "output.raw",
                                 "extracted_value": "Denver Broncos",
                                 "extraction_method": "none", "is_terminal": true}],
         "evaluation": {"score": 1.0, "is_correct": true}}

    - ``item_id``: ``sample_id`` (the lm-eval converter writes lm-eval's
      ``doc_id``: a position). Records of several evaluations
      (``evaluation_result_id``, else ``evaluation_name``) need
      ``evaluation_name=``; several ``model_id`` values, or a repeated
      ``sample_id``, are errors.
    - ``answer``: the terminal ``answer_attribution`` value (the schema's final
      answer), else ``output.raw`` (a string, or a list of one), else the last
      assistant message of ``messages`` (``interactions`` in 0.2).
      ``meta["raw_output"]`` keeps ``output.raw``.
    - ``prompt``: ``{"input": input.raw}`` without its few-shot examples (the
      n-shot from the aggregate record, when there is one); ``input.raw`` is
      ``meta["prompt_text"]``; ``input.formatted`` and ``input.choices`` are in
      ``meta``.
    - ``references``: ``input.reference`` (a list, or a string in 0.2); an
      entry that is a list's repr (EEE's lm-eval converter copies lm-eval's
      ``str(target)``) is read as that list, as for ``lmeval``.
    - ``score``: ``score_name="score"`` (``evaluation.score``) or
      ``"is_correct"`` (1 / 0). Default: ``score`` if every score lies in
      [0, 1], else ``is_correct``. (EEE converters write a score even where the
      harness had none: lm-eval's writes 0 when no metric was a number.)
    - provenance: from the aggregate record ``<uuid>.json`` beside
      ``<uuid>_samples.jsonl`` if present (model, library, n-shot).

``csv`` / ``tsv`` / ``jsonl``: a plain table, one row per item, with a header
    row (CSV/TSV) or one object per line (JSONL):

    ========================  ==================================================
    column                    meaning
    ========================  ==================================================
    ``id``                    item id (``id_column=`` to rename); required
    ``answer``                the answer text (``answer_column=``); required.
                              An empty CSV cell or a JSONL ``null`` is a
                              missing answer (write ``""`` in JSONL for an
                              empty answer)
    ``score``                 optional judgment in [0, 1] (a number, or
                              true/false); empty = none (``score_name=``
                              renames, ``""`` ignores)
    ``references``            optional: a JSON list of strings (in CSV, a cell
                              starting with ``[``), or one reference
    ``reference``             optional: one reference (alternative to the above)
    ``token_logprobs``        optional: a JSON list of numbers
    ``meta`` / ``meta.<k>``   optional: JSONL ``meta`` object / CSV columns
                              ``meta.<k>``, copied into ``meta``
    anything else             a prompt field shown to the judge (``question``,
                              ``context``, ``input``, ...), as text
    ========================  ==================================================

Records without an answer are errors; ``skip_missing=True`` drops them instead
(their ids are in :attr:`AnswerFile.skipped`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from activetest.formats.answer_records import (
    _ZIP,
    AnswerFile,
    AnswerRecord,
    _as_unit_score,
    _base_suffix,
    _Collector,
    _decode,
    _fail,
    _json_safe,
    _jsonl,
    _logprobs,
    _read_bytes,
    _short,
    _text_id,
)
from activetest.formats.eee import (
    _read_eee,
)
from activetest.formats.inspect import (
    _load_inspect_json,
    _load_inspect_zip,
    _read_inspect,
)
from activetest.formats.lmeval_answers import (
    _read_lmeval,
)
from activetest.formats.model_ids import model_variant, public_model_name
from activetest.formats.tables import header_table

__all__ = ["FORMATS", "AnswerFile", "AnswerRecord", "Format", "detect_format", "file_provenance",
           "public_model_name", "read_answers"]

Format = Literal["lmeval", "inspect", "eee", "csv", "tsv", "jsonl"]
FORMATS: tuple[str, ...] = ("lmeval", "inspect", "eee", "csv", "tsv", "jsonl")


# --------------------------------------------------------------------------- detection


def _kind(rec: Mapping[str, Any], id_column: str, answer_column: str) -> str | None:
    if "doc_id" in rec and ("filtered_resps" in rec or "resps" in rec):
        return "lmeval"
    if "sample_id" in rec and "evaluation" in rec and (
            "schema_version" in rec or "evaluation_id" in rec or "answer_attribution" in rec):
        return "eee"
    if id_column in rec and answer_column in rec:
        return "jsonl"
    return None


_EXPECTED = ("an lm-eval sample (keys doc_id, filtered_resps), an Every Eval Ever instance "
             "record (sample_id, evaluation, schema_version) or a table row (columns "
             "{id}, {answer})")


def _detect_jsonl(path: Path, recs: Sequence[tuple[str, dict[str, Any]]], id_column: str,
                  answer_column: str) -> str:
    expected = _EXPECTED.format(id=id_column, answer=answer_column)
    first: tuple[str, str] | None = None
    for where, rec in recs:
        kind = _kind(rec, id_column, answer_column)
        if kind is None:
            raise _fail(where, f"not a record of a known answers format: expected {expected}; "
                               f"has keys {sorted(rec)[:12]}")
        if first is None:
            first = (kind, where)
        elif kind != first[0]:
            raise _fail(where, f"looks like {_NAMES[kind]}, but {first[1]} looks like "
                               f"{_NAMES[first[0]]}: a file must hold one format")
    assert first is not None
    return first[0]


_NAMES = {"lmeval": "an lm-eval sample", "eee": "an Every Eval Ever instance record",
          "jsonl": "a table row", "inspect": "an inspect_ai log"}


def _looks_like_inspect_json(text: str) -> dict[str, Any] | None:
    head = text.lstrip()
    if not head.startswith("{"):
        return None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and (
            "samples" in doc or "results" in doc or "status" in doc):
        return doc
    return None


def _not_jsonl(path: Path, text: str) -> None:
    """Refuse a multi-line JSON document that is not an inspect log, saying what it looks like."""
    if not text.lstrip().startswith(("{", "[")) or len(text.strip().splitlines()) < 2:
        return
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return
    hint = ""
    if isinstance(doc, dict) and "evaluation_results" in doc:
        hint = ("; it is an Every Eval Ever aggregate record: the answers are in the "
                "instance-level <uuid>_samples.jsonl beside it")
    elif isinstance(doc, dict) and "results" in doc and ("n-shot" in doc or "configs" in doc):
        hint = ("; it is an lm-eval results file: the answers are in the "
                "samples_<task>_<date>.jsonl written with --log_samples")
    raise ValueError(f"{path}: one JSON document, not JSON lines, and not an inspect_ai log "
                     f"(an object with 'eval' and 'samples'){hint}")


def detect_format(path: str | os.PathLike[str], *, id_column: str = "id",
                  answer_column: str = "answer") -> str:
    """The answers format of ``path`` (one of :data:`FORMATS`), from its bytes and every record.

    Raises:
        ValueError: the file is none of the formats, or its records mix formats
            (the first line that disagrees is named).
    """
    p = Path(path)
    raw = _read_bytes(p)
    if raw[:4] == _ZIP:
        return "inspect"
    suffix = _base_suffix(p)
    if suffix in (".csv", ".tsv"):
        return suffix[1:]
    if suffix == ".eval":
        raise ValueError(f"{p}: an .eval file must be a zip archive (inspect_ai log); this "
                         f"one is not")
    text = _decode(p, raw)
    if _looks_like_inspect_json(text) is not None:
        return "inspect"
    _not_jsonl(p, text)
    return _detect_jsonl(p, _jsonl(p, text), id_column, answer_column)


# --------------------------------------------------------------------------- tables


_TABLE_RESERVED = ("score", "references", "reference", "token_logprobs", "meta")


def _table_rows(path: Path, text: str, fmt: str, recs: list[tuple[str, dict[str, Any]]] | None
                ) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    if fmt == "jsonl":
        recs = recs if recs is not None else _jsonl(path, text)
        cols: list[str] = []
        for _, r in recs:
            cols.extend(k for k in r if k not in cols)
        return cols, recs
    header, lines = header_table(text, str(path), "," if fmt == "csv" else "\t",
                                 width="{cells} fields, the header has {header}")
    rows: list[tuple[str, dict[str, Any]]] = [(f"{path}: {line}", row) for line, row in lines]
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return header, rows


def _cell_json_list(value: Any, where: str, column: str) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            raise _fail(where, f"column {column!r}: {_short(value)} is not a JSON list") \
                from None
        if isinstance(parsed, list):
            return parsed
    return None


def _read_table(path: Path, text: str, fmt: str, recs: list[tuple[str, dict[str, Any]]] | None,
                *, id_column: str, answer_column: str,
                score_name: str | None, skip_missing: bool) -> AnswerFile:
    columns, rows = _table_rows(path, text, fmt, recs)
    for c in (id_column, answer_column):
        if c not in columns:
            raise ValueError(f"{path}: missing column {c!r}; the file has {columns} (a table "
                             f"of answers needs {id_column!r} and {answer_column!r})")
    score_col = "score" if score_name is None else score_name
    if score_name not in (None, "") and score_name not in columns:
        raise ValueError(f"{path}: no score column {score_name!r} (score_name=); the file "
                         f"has {columns}")
    reserved = {id_column, answer_column, score_col, *_TABLE_RESERVED}
    out = _Collector(path, skip_missing)
    any_score = False
    for where, row in rows:
        if id_column not in row:
            raise _fail(where, f"missing column {id_column!r}")
        item_id = _text_id(row[id_column], where, f"id column {id_column!r}")
        out.claim(item_id, where)
        answer = row.get(answer_column)
        if answer is None or (fmt != "jsonl" and answer == ""):
            out.missing(item_id, where, f"column {answer_column!r} is empty")
            continue
        if not isinstance(answer, str):
            raise _fail(where, f"column {answer_column!r} must be text, got {_short(answer)}")
        score = None
        if score_col and row.get(score_col) not in (None, ""):
            score = _as_unit_score(row[score_col])
            if score is None:
                raise _fail(where, f"column {score_col!r}: {_short(row[score_col])} is not a "
                                   f"judgment in [0, 1] (a number or true/false)")
            any_score = True
        refs: tuple[str, ...] = ()
        for col in ("references", "reference"):
            value = row.get(col)
            if value in (None, ""):
                continue
            listed = _cell_json_list(value, where, col)
            if listed is not None:
                if not all(isinstance(t, str) for t in listed):
                    raise _fail(where, f"column {col!r}: references must be texts")
                refs = (*refs, *listed)
            elif isinstance(value, str):
                refs = (*refs, value)
            else:
                raise _fail(where, f"column {col!r}: {_short(value)} is not text or a list "
                                   f"of texts")
        lps = None
        if row.get("token_logprobs") not in (None, ""):
            listed = _cell_json_list(row["token_logprobs"], where, "token_logprobs")
            if listed is None:
                raise _fail(where, "column 'token_logprobs' must be a JSON list of numbers")
            lps = _logprobs(listed, where, "token_logprobs")
        meta: dict[str, Any] = {}
        if isinstance(row.get("meta"), Mapping):
            meta.update(_json_safe(dict(row["meta"])))
        elif row.get("meta") not in (None, ""):
            raise _fail(where, "column 'meta' must be a JSON object (JSONL) or be split into "
                               "meta.<key> columns")
        prompt: dict[str, str] = {}
        for col, value in row.items():
            if col in reserved:
                continue
            if col.startswith("meta."):
                if value not in (None, ""):
                    meta[col[5:]] = _json_safe(value)
                continue
            if value is None:
                continue
            if isinstance(value, (bool, dict, list)):
                raise _fail(where, f"prompt column {col!r} must be text, got {_short(value)}")
            prompt[col] = value if isinstance(value, str) else str(value)
        out.add(AnswerRecord(item_id=item_id, answer=answer, prompt=prompt, references=refs,
                             score=score, token_logprobs=lps, meta=meta))
    used = score_col if (score_name not in (None, "") or any_score) else None
    return AnswerFile(path=path, format=fmt, records=tuple(out.records),
                      score_name=used or None, skipped=tuple(out.skipped),
                      provenance={"columns": columns, "id_column": id_column,
                                  "answer_column": answer_column})


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class _Options:
    """The reading options of :func:`read_answers`; each reader takes the ones it knows."""

    score_name: str | None
    filter_name: str | None
    epoch: int | None
    evaluation_name: str | None
    id_field: str | None
    id_column: str
    answer_column: str
    skip_missing: bool


_Recs = list[tuple[str, dict[str, Any]]]


def _inspect_json(p: Path, text: str, recs: _Recs | None, o: _Options) -> AnswerFile:
    doc = _looks_like_inspect_json(text)
    if doc is None:
        raise ValueError(f"{p}: not an inspect_ai log: expected an .eval zip archive or "
                         f"a JSON object with 'eval' and 'samples'")
    return _read_inspect(p, _load_inspect_json(p, doc), epoch=o.epoch, score_name=o.score_name,
                         skip_missing=o.skip_missing)


def _table(fmt: str) -> Callable[[Path, str, _Recs | None, _Options], AnswerFile]:
    def read(p: Path, text: str, recs: _Recs | None, o: _Options) -> AnswerFile:
        return _read_table(p, text, fmt, recs, id_column=o.id_column,
                           answer_column=o.answer_column, score_name=o.score_name,
                           skip_missing=o.skip_missing)
    return read


def _lmeval(p: Path, text: str, recs: _Recs | None, o: _Options) -> AnswerFile:
    return _read_lmeval(p, recs if recs is not None else _jsonl(p, text),
                        filter_name=o.filter_name, score_name=o.score_name, id_field=o.id_field,
                        skip_missing=o.skip_missing)


def _eee(p: Path, text: str, recs: _Recs | None, o: _Options) -> AnswerFile:
    return _read_eee(p, recs if recs is not None else _jsonl(p, text),
                     evaluation_name=o.evaluation_name, score_name=o.score_name,
                     skip_missing=o.skip_missing)


#: The reader of each text format (an inspect_ai ``.eval`` zip is read before decoding):
#: ``(path, text, JSON Lines records already parsed or None, options) -> AnswerFile``.
_READERS: dict[str, Callable[[Path, str, _Recs | None, _Options], AnswerFile]] = {
    "inspect": _inspect_json, "csv": _table("csv"), "tsv": _table("tsv"),
    "jsonl": _table("jsonl"), "lmeval": _lmeval, "eee": _eee}


def read_answers(path: str | os.PathLike[str], *, format: Format | str | None = None,
                 score_name: str | None = None, filter_name: str | None = None,
                 epoch: int | None = None, evaluation_name: str | None = None,
                 id_field: str | None = None, id_column: str = "id",
                 answer_column: str = "answer", skip_missing: bool = False,
                 cut: list[str] | None = None) -> AnswerFile:
    """Read a target's answers from a harness's file (see the module docstring for formats).

    Args:
        path: the file (``.gz`` is decompressed, whatever the format).
        format: one of :data:`FORMATS`; default: detected from the bytes and every
            record (:func:`detect_format`).
        score_name: which of the file's judgments fills ``score``: an lm-eval
            metric, an inspect scorer, ``"score"`` / ``"is_correct"`` (EEE), a
            table column; ``""`` for none; default: per format (module docstring).
        filter_name: lm-eval: the filter whose responses to read (needed when the
            file has several).
        epoch: inspect_ai: the epoch to read (needed when the log has several).
        evaluation_name: EEE: the evaluation (``evaluation_name`` or
            ``evaluation_result_id``) to read (needed when the file has several).
        id_field: lm-eval: a ``doc`` field holding the item id (default: ``doc_id``).
        id_column, answer_column: tables: the id and answer columns.
        skip_missing: leave out records without an answer (listed in
            :attr:`AnswerFile.skipped`) instead of raising.
        cut: a list to collect the unfinished last record of a JSON Lines file a killed
            run left (:func:`activetest.formats._json.unfinished_last_line`: skipped,
            ``"<file>: line <n>"`` appended; the caller says so); without it such a
            line is refused like any bad line.

    Returns:
        The records in file order, with provenance.

    Raises:
        ValueError: unreadable or malformed file, a record of another format,
            duplicate ids, a missing answer, an ambiguous selection (several
            filters, epochs or evaluations), a score outside [0, 1]; the message
            names the file, the line or zip entry, and what was expected.
    """
    p = Path(path)
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {format!r}")
    if not p.exists():
        raise ValueError(f"{p}: no such file")
    raw = _read_bytes(p)
    if raw[:4] == _ZIP:
        if format not in (None, "inspect"):
            raise ValueError(f"{p}: a zip archive (an inspect_ai .eval log?), not {format} "
                             f"text")
        _check_applies(p, "inspect", epoch=epoch, filter_name=filter_name, id_field=id_field,
                       evaluation_name=evaluation_name)
        return _read_inspect(p, _load_inspect_zip(p, raw), epoch=epoch, score_name=score_name,
                             skip_missing=skip_missing)
    if cut is not None:
        from activetest.formats._json import unfinished_last_line

        raw, line = unfinished_last_line(raw)
        if line is not None:
            cut.append(f"{p}: line {line}")
    text = _decode(p, raw)
    fmt = format
    recs: list[tuple[str, dict[str, Any]]] | None = None
    if fmt is None:
        suffix = _base_suffix(p)
        if suffix in (".csv", ".tsv"):
            fmt = suffix[1:]
        elif suffix == ".eval":
            raise ValueError(f"{p}: an .eval file must be a zip archive (inspect_ai log); "
                             f"this one is not")
        elif _looks_like_inspect_json(text) is not None:
            fmt = "inspect"
        else:
            _not_jsonl(p, text)
            recs = _jsonl(p, text)
            fmt = _detect_jsonl(p, recs, id_column, answer_column)
    _check_applies(p, fmt, epoch=epoch, filter_name=filter_name, id_field=id_field,
                   evaluation_name=evaluation_name)
    options = _Options(score_name=score_name, filter_name=filter_name, epoch=epoch,
                       evaluation_name=evaluation_name, id_field=id_field, id_column=id_column,
                       answer_column=answer_column, skip_missing=skip_missing)
    return _READERS[fmt](p, text, recs, options)


#: the options that only one format reads: option -> (its format, its name in a spec)
_ONLY_FOR = {"epoch": ("inspect", "epoch"), "filter_name": ("lmeval", "filter"),
             "id_field": ("lmeval", "id_field"), "evaluation_name": ("eee", "evaluation")}


def _check_applies(p: Path, fmt: str, **given: Any) -> None:
    """Refuse an option the file's format does not read (it was silently ignored: an
    ``id_field`` on a CSV table joined by the table's own id column)."""
    for key, value in given.items():
        want, name = _ONLY_FOR[key]
        if value is not None and fmt != want:
            raise ValueError(f"{p}: {name}= applies to {want} files; this one reads as {fmt}")


# --------------------------------------------------------------------------- provenance

_TOOL_KEYS = (("lm_eval_version", "lm-eval"), ("inspect_ai_version", "inspect_ai"))


def file_provenance(af: AnswerFile) -> dict[str, Any]:
    """What a session keeps of an answer file: never a local path.

    Keys: ``format``; ``file`` (the file's name, no directory); ``sha256`` and
    ``bytes`` of the file as stored; ``model`` (the model's name as the log states
    it, a local path reduced to its last component; None where the file names
    none); ``model_variant`` (only where stated: which weights of the named model ran,
    lm-eval's ``gguf_file``, ``revision``, ... of ``model_args``, an Every Eval Ever
    record's ``model_info.additional_details`` as activetest writes them);
    ``developer`` (where the file states one: Every Eval Ever's
    ``model_info.developer``); ``n_shot`` (where stated); ``task``; ``score_name``
    (the file's judgment read as each answer's score); ``tool`` (the harness and
    its version, where stated); ``n_records``.
    """
    import hashlib

    p = Path(af.path)
    digest = hashlib.sha256()
    size = 0
    try:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
                size += len(chunk)
        sha: str | None = digest.hexdigest()
    except OSError:
        sha, size = None, 0
    prov = af.provenance
    model = af.model
    if af.format == "eee" and isinstance(prov.get("model_name"), str) and model is None:
        model = prov["model_name"]
    tool = None
    for key, name in _TOOL_KEYS:
        if isinstance(prov.get(key), str):
            tool = f"{name} {prov[key]}"
    if af.format == "eee":
        tool = "every_eval_ever" + (f" (from {prov['eval_library']})"
                                    if isinstance(prov.get("eval_library"), str) else "")
    developer = prov.get("model_developer") if isinstance(prov.get("model_developer"),
                                                         str) else None
    # which weights of the named model ran (lm-eval's gguf_file, ... of model_args; an EEE
    # record's model_info as activetest writes it): kept beside the name
    variant = (model_variant(prov.get("model_args")) if af.format == "lmeval"
               else prov.get("model_variant"))
    return {"format": af.format, "file": p.name, "sha256": sha, "bytes": size,
            **({"model_variant": dict(variant)} if variant else {}),
            "model": public_model_name(model),
            "developer": developer if developer and developer.strip() else None,
            "n_shot": af.n_shot, "task": af.task, "score_name": af.score_name,
            "tool": tool, "n_records": len(af.records)}
