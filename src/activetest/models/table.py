"""A scorer that reads predictions computed elsewhere from a file.

Use it when the model ran somewhere else (a cluster job, a vendor API, a
classifier that is not a language model) and wrote one row per item::

    id,negative,positive
    sst2-0001,-0.105,-2.303
    sst2-0002,-1.609,-0.223

Formats: CSV (``.csv``; ``.tsv`` is tab-separated), JSON Lines (``.jsonl``,
``.ndjson``), a JSON array of row objects (``.json``), Parquet (``.parquet``,
needs ``pyarrow``: ``pip install activetest[parquet]``), any of the text formats
gzipped (``.gz``), and lm-evaluation-harness ``--log_samples`` files
(``format="lmeval"``; detected from the content of ``.jsonl``/``.json`` files, and
for folders and glob patterns of samples files), see :mod:`activetest.formats.lmeval`.

Rows are matched to items by id (``Item.id`` against the ``id_column`` value,
compared as strings), so the file may hold more rows than the pool and in any
order. The class columns are ``columns`` (in class order) or, by default, the
task's label words. ``kind`` says what the numbers are:

- ``"logprobs"``: class log-probabilities; each row's ``logsumexp`` must be 0
  within ``tolerance`` (it is then renormalised exactly);
- ``"probs"``: probabilities in [0, 1] summing to 1 within ``tolerance``;
  stored as their logs (a probability of exactly 0 becomes ``-inf``);
- ``"logits"``: any finite scores, turned into log-probs by ``log_softmax``.

lm-eval files are joined more carefully, because their ids are positions: the
choices of every record are matched to the task's classes by label word, and
every item's text is checked against the record's document (both refuse a
mismatch, see :mod:`activetest.formats.lmeval`).

Options in a model spec: ``table:FILE?key=value&key=value`` with keys ``filter``
(lm-eval filter), ``format``, ``kind``, ``id`` (id column), ``columns`` (comma-
separated), ``tolerance``, ``choices=positional`` and ``match=id`` (see
:class:`TableScorer`), e.g. ``table:samples_sst2.jsonl?filter=maj@8``.

NaN, infinite or non-numeric values are errors that name the file, the row
(the line for CSV/JSONL) and the column.

A Parquet table with a ``content_check`` column (what
:mod:`activetest.models.ray_score` writes: the fingerprint of each item's fields,
:func:`~activetest.formats.label_records.content_check`) is joined by id AND
content: a row whose fingerprint is not that of the item with its id is refused,
naming the file, the item and both fingerprints.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from activetest.data.choices import CHOICE_RULES, ChoiceAlignment, class_logprobs
from activetest.data.task import Item, Task
from activetest.formats.lmeval import (
    LmEvalSamples,
    check_documents,
    lmeval_files,
    load_lmeval_samples,
    looks_like_lmeval,
)
from activetest.formats.tables import (
    decode_utf8,
    file_lines,
    gunzip_if_gzip,
    header_rows,
    header_table,
    iter_json_lines,
    json_lines,
)

__all__ = ["TableScorer", "confirm_content", "duplicate_message", "looks_like_probs",
           "no_row_hint", "normalise_table_spec", "parse_table_spec", "read_table", "row_values",
           "stream_rows"]

Kind = Literal["logprobs", "probs", "logits"]
Format = Literal["csv", "tsv", "jsonl", "json", "parquet", "lmeval"]

_KINDS = ("logprobs", "probs", "logits")
_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet", "lmeval")
_SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
                   ".json": "json", ".parquet": "parquet", ".pq": "parquet"}
#: How files join to items: ``text`` (lm-eval: check each item's text against the
#: record's document) or ``id`` (by id alone).
MATCH_RULES = ("text", "id")
#: ``table:FILE?key=value`` option -> TableScorer argument.
_SPEC_KEYS = {"filter": "filter_name", "format": "format", "kind": "kind", "id": "id_column",
              "id_column": "id_column", "columns": "columns", "tolerance": "tolerance",
              "choices": "choices", "match": "match"}


def parse_table_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``FILE?key=value&...`` into the path and :class:`TableScorer` arguments.

    A ``?`` is read as the start of options only when the whole text is not an
    existing file.

    Raises:
        ValueError: an unknown option or a malformed value.
    """
    if "?" not in text or Path(text).expanduser().exists():
        return text, {}
    path, _, query = text.rpartition("?")
    options: dict[str, Any] = {}
    for part in query.split("&"):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in _SPEC_KEYS:
            raise ValueError(f"table spec {text!r}: unknown option {part!r}; options are "
                             f"filter=NAME, format=csv|tsv|jsonl|json|parquet|lmeval, "
                             f"kind=logprobs|probs|logits, id=COLUMN, columns=A,B,..., "
                             f"tolerance=X, choices=positional, match=id")
        arg = _SPEC_KEYS[key]
        if arg == "columns":
            options[arg] = tuple(c.strip() for c in value.split(","))
        elif arg == "tolerance":
            try:
                options[arg] = float(value)
            except ValueError:
                raise ValueError(f"table spec {text!r}: tolerance={value!r} is not a "
                                 f"number") from None
        else:
            options[arg] = value
    return path, options


def normalise_table_spec(text: str) -> str:
    """The spec's path made absolute (globs too), its options kept."""
    path, options = parse_table_spec(text)
    query = text[len(path):] if options else ""
    p = Path(path).expanduser()
    p = p.resolve() if p.exists() else Path(os.path.abspath(p))
    return f"{p}{query}"


@dataclass
class _Raw:
    """A table as read: column names and rows of raw cell values, with row labels."""

    columns: list[str]
    rows: list[dict[str, Any]]
    where: list[str]  # "line 7" / "row 3", per row, for error messages


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def looks_like_probs(values: np.ndarray, tolerance: float) -> bool:
    """Every row in [0, 1] and summing to 1 (within ``tolerance``): probabilities."""
    return bool(values.shape[0] and ((values >= 0) & (values <= 1 + tolerance)).all()
                and (np.abs(values.sum(axis=1) - 1.0) <= tolerance).all())


def _infer_format(path: Path) -> str:
    if path.is_dir() or (not path.exists() and any(ch in str(path) for ch in "*?[")):
        return "lmeval"  # a folder or a glob of samples files (lmeval_files checks)
    if not path.is_file():
        raise ValueError(f"prediction table {path} does not exist or is not a file")
    name = path.name[:-3] if path.name.lower().endswith(".gz") else path.name
    suffix = Path(name).suffix.lower()
    fmt = _SUFFIX_FORMATS.get(suffix)
    if fmt in ("jsonl", "json", None) and looks_like_lmeval(path):
        return "lmeval"
    if fmt is None:
        raise ValueError(f"{path}: cannot tell the format from the suffix {suffix!r}; add "
                         f"?format=NAME to the table: spec (format= in Python), one of "
                         f"{', '.join(_FORMATS)}")
    return fmt


def _read_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    return decode_utf8(gunzip_if_gzip(raw, path), path)


def _read_csv(path: Path, delimiter: str) -> _Raw:
    text = _read_text(path)
    if "\x00" in text:
        raise ValueError(f"{path}: contains NUL bytes; not a CSV text file")
    header, rows = header_table(text, str(path), delimiter)
    return _Raw(header, [row for _, row in rows], [line for line, _ in rows])


def _read_jsonl(path: Path) -> _Raw:
    columns: list[str] = []
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    where: list[str] = []
    for line, rec in json_lines(_read_text(path), str(path)):
        for key in rec:
            if key not in seen:
                seen.add(key)
                columns.append(key)
        rows.append(rec)
        where.append(line)
    return _Raw(columns, rows, where)


def _read_json(path: Path) -> _Raw:
    text = _read_text(path)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path}: not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON array of row objects, got "
                         f"{type(data).__name__}")
    columns: list[str] = []
    rows: list[dict[str, Any]] = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise ValueError(f"{path}: record {i}: expected a JSON object, got "
                             f"{type(rec).__name__}")
        columns.extend(k for k in rec if k not in columns)
        rows.append(rec)
    return _Raw(columns, rows, [f"record {i}" for i in range(len(rows))])


def _read_parquet(path: Path) -> _Raw:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is in the dev/parquet extras
        raise ValueError(f"{path}: reading Parquet needs pyarrow "
                         f"(pip install 'activetest[parquet]')") from None
    try:
        table = pq.read_table(path)
        rows = table.to_pylist()
    except Exception as exc:  # pyarrow raises many types (ArrowInvalid, OSError, ...)
        raise ValueError(f"{path}: cannot read as Parquet: {str(exc)[:200]}") from None
    return _Raw([str(c) for c in table.column_names], rows,
                [f"row {i}" for i in range(1, len(rows) + 1)])


def _read_raw(path: Path, fmt: str) -> _Raw:
    if fmt == "csv":
        return _read_csv(path, ",")
    if fmt == "tsv":
        return _read_csv(path, "\t")
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    if fmt == "parquet":
        return _read_parquet(path)
    raise ValueError(f"unknown table format {fmt!r}; expected {', '.join(_FORMATS)}")


def _cell_float(value: Any, path: Path, where: str, column: str) -> float:
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{path}: {where}: column {column!r}: expected a number, got {value!r}")
    try:
        x = float(value.strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{path}: {where}: column {column!r}: expected a number, "
                         f"got {value!r:.60}") from None
    if not math.isfinite(x):
        raise ValueError(f"{path}: {where}: column {column!r}: value {value!r:.60} is not "
                         f"finite (NaN/inf are not allowed)")
    return x


def _cell_id(value: Any, path: Path, where: str, column: str) -> str:
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"{path}: {where}: id column {column!r} is empty")
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"{path}: {where}: id column {column!r} must be a string or integer, "
                     f"got {value!r:.60}")


def to_log_softmax_rows(values: np.ndarray, kind: str, tolerance: float, path: Path,
                        where: Sequence[str]) -> np.ndarray:
    """Turn validated finite values of ``kind`` into log-softmax rows."""
    if kind == "logits":
        if values.shape[0] and looks_like_probs(values, tolerance):
            raise ValueError(f"{path}: every row lies in [0, 1] and sums to 1: these are "
                             f"probabilities, and ?kind=logits would softmax them again "
                             f"(a wrong log loss, no error); use ?kind=probs "
                             f"(kind='probs' in Python)")
        with np.errstate(over="ignore", invalid="ignore"):
            out = _log_softmax(values)
        bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{path}: {where[i]}: logits {values[i].tolist()!s:.80} differ "
                             f"by more than float64 can turn into probabilities (a class "
                             f"would get probability 0, log-probability -inf, which no "
                             f"estimate can use); give logits within about 700 of each "
                             f"other")
        return out
    if kind == "probs":
        bad = np.flatnonzero(((values < 0) | (values > 1 + tolerance)).any(axis=1))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{path}: {where[i]}: probabilities must lie in [0, 1], got "
                             f"{values[i].tolist()}")
        sums = values.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > tolerance)
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{path}: {where[i]}: probabilities sum to {sums[i]:.6g}, not 1 "
                             f"(tolerance {tolerance}); for unnormalised scores add "
                             f"?kind=logits to the table: spec (kind='logits' in Python)")
        bad = np.flatnonzero((values <= 0).any(axis=1))
        if bad.size:  # log 0 = -inf: no estimate, design or log loss can use it
            i = int(bad[0])
            raise ValueError(f"{path}: {where[i]}: a probability of 0 ({values[i].tolist()}): "
                             f"its log-probability is -inf, which no estimate can use (a "
                             f"label of that class would have an infinite log loss); give "
                             f"every class a probability above 0, e.g. clipped at 1e-9")
        return np.log(values / sums[:, None])
    # logprobs
    lse = values.max(axis=1) + np.log(np.exp(values - values.max(axis=1, keepdims=True))
                                      .sum(axis=1))
    bad = np.flatnonzero(np.abs(lse) > tolerance)
    if bad.size:
        i = int(bad[0])
        if looks_like_probs(values, tolerance):  # QA: the logits hint silently mis-scored
            raise ValueError(f"{path}: {where[i]}: log-probabilities do not normalise "
                             f"(logsumexp = {lse[i]:.6g}), and every row lies in [0, 1] and "
                             f"sums to 1: these are probabilities; add ?kind=probs to the "
                             f"table: spec (kind='probs' in Python)")
        raise ValueError(f"{path}: {where[i]}: log-probabilities do not normalise (logsumexp "
                         f"= {lse[i]:.6g}, tolerance {tolerance}); for probabilities add "
                         f"?kind=probs, for unnormalised scores (logits) ?kind=logits to the "
                         f"table: spec (kind='probs' / 'logits' in Python)")
    return values - lse[:, None]


def read_table(path: str | Path, *, columns: Sequence[str], id_column: str = "id",
               kind: Kind = "logprobs", format: Format | None = None,
               tolerance: float = 1e-3) -> tuple[list[str], np.ndarray]:
    """Read per-item class scores from a CSV/TSV/JSONL/Parquet file.

    Args:
        path: the file.
        columns: the class columns, in class order.
        id_column: the column holding item ids (compared as strings).
        kind: ``"logprobs"``, ``"probs"`` or ``"logits"`` (see the module docstring).
        format: ``"csv"``, ``"tsv"``, ``"jsonl"``, ``"json"`` or ``"parquet"``; default:
            from the suffix (a final ``.gz`` is decompressed).
        tolerance: allowed deviation of a probability row's sum from 1 (or of a
            log-prob row's ``logsumexp`` from 0).

    Returns:
        ``(item_ids, logprobs)``: ids in file order and ``(N, C)`` float64 log-softmax rows.

    Raises:
        ValueError: unreadable file, missing columns, duplicate ids, or a bad value
            (the file, row and column are named).
    """
    p = Path(path)
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    fmt = format or _infer_format(p)
    if fmt == "lmeval":
        raise ValueError(f"{p}: lm-eval samples files hold their own classes; read them with "
                         f"activetest.models.lmeval.read_lmeval_samples or TableScorer")
    cols = list(columns)
    if len(cols) < 2:
        raise ValueError(f"columns must name at least 2 class columns, got {cols}")
    if len(set(cols)) != len(cols):
        raise ValueError(f"columns has duplicates: {cols}")
    raw = _read_raw(p, fmt)
    if not raw.rows:
        raise ValueError(f"{p}: no data rows")
    _check_columns(p, fmt, raw.columns, [id_column, *cols])
    ids: list[str] = []
    first: dict[str, str] = {}
    values = np.empty((len(raw.rows), len(cols)), dtype=np.float64)
    for i, (row, where) in enumerate(zip(raw.rows, raw.where, strict=True)):
        item_id = _row_id(row, p, where, id_column, cols)
        if item_id in first:
            raise ValueError(duplicate_message(p, where, item_id, first[item_id]))
        first[item_id] = where
        ids.append(item_id)
        values[i] = row_values(row, p, where, cols)
    return ids, to_log_softmax_rows(values, kind, tolerance, p, raw.where)


def _check_columns(p: Path, fmt: str, columns: Sequence[str], wanted: Sequence[str]) -> None:
    """Refuse a table whose columns (``columns``: a header, or every key of a JSON
    table's rows) lack one of ``wanted``."""
    missing = [c for c in wanted if c not in columns]
    one = columns[0] if len(columns) == 1 else ""
    for sep, other in (("\t", "tsv"), (",", "csv")):
        if missing and sep in one and fmt != other:  # e.g. a TSV file read as CSV
            raise ValueError(f"{p}: the header is one column that holds "
                             f"{'tabs' if sep == chr(9) else 'commas'} ({one[:60]!r}): a "
                             f"{other.upper()} file read as {fmt.upper()}? Add ?format={other} "
                             f"to the table: spec (format={other!r} in Python)")
    if missing:
        raise ValueError(f"{p}: missing column(s) {missing}; the file has {list(columns)} "
                         f"(name them with ?id=COLUMN&columns=A,B,... on the table: spec; "
                         f"id_column= and columns= in Python)")


def _row_id(row: dict[str, Any], p: Path, where: str, id_column: str,
            cols: Sequence[str]) -> str:
    for c in [id_column, *cols]:
        if c not in row:
            raise ValueError(f"{p}: {where}: missing column {c!r}")
    return _cell_id(row[id_column], p, where, id_column)


def duplicate_message(p: Path, where: str, item_id: str, first: str) -> str:
    """How a table's row that repeats an earlier row's id is refused (``where``: that
    row, ``first``: the earlier one, e.g. ``"line 7"``)."""
    return f"{p}: {where}: duplicate id {item_id!r} (first at {first})"


def no_row_hint(table_first: Sequence[str], pool_first: Sequence[str]) -> str:
    """What a table none of whose ids is a pool item's is refused with, after its count
    of items without a row: the first ids of each (``table_first``, ``pool_first``: up to
    three, in file order), and what to check (QA at 1e5 items: a table keyed by integers
    beside a pool of ``it0``... said only "no row for 100000 of 100000 item id(s): 'it0',
    ..."); empty where the table has no row."""
    if not table_first:
        return ""
    return (f"; no pool item has a row: the table's ids begin "
            f"{', '.join(map(repr, table_first))}, the pool's "
            f"{', '.join(map(repr, pool_first))} (a table of another pool, or the ids in "
            f"another column: name it with ?id=COLUMN on the table: spec, the pool's with "
            f"--id-column)")


def row_values(row: dict[str, Any], p: Path, where: str, cols: Sequence[str]) -> list[float]:
    """A table row's class values (``cols``, in order) as :func:`read_table` reads them.

    Raises:
        ValueError: a value that is not a finite number, naming ``p``, ``where`` and the
            column.
    """
    return [_cell_float(row[c], p, where, c) for c in cols]


def stream_rows(path: Path, fmt: str, *, columns: Sequence[str],
                id_column: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The rows of a CSV, TSV or JSONL table (not gzipped) as :func:`read_table` reads
    them, one at a time, in constant memory: ``(where, item id, row)``, the file's and each
    row's checks but the duplicate id's and the values' (:func:`row_values`) applied,
    raising :func:`read_table`'s messages. A JSON row without a class or id column is
    refused as :func:`read_table` refuses it: naming the row where some row of the file
    has the column (the file read on to tell), else naming the file.

    Raises:
        ValueError: as :func:`read_table`, when the row is read; UnicodeError and
            OSError as reading the file raises them.
    """
    p = Path(path)
    wanted = [id_column, *columns]
    with p.open(encoding="utf-8-sig", newline="" if fmt in ("csv", "tsv") else "\n") as f:
        if fmt in ("csv", "tsv"):
            header, rows = header_rows(_without_nul(f, p), str(p), "," if fmt == "csv" else "\t")
            first = next(rows, None)
            if first is None:  # read_table says so before it looks at the columns
                raise ValueError(f"{p}: no data rows")
            _check_columns(p, fmt, header, wanted)
            for where, row in itertools.chain([first], rows):
                yield where, _row_id(row, p, where, id_column, columns), row
            return
        if fmt != "jsonl":
            raise ValueError(f"{p}: {fmt} tables are not read row by row")
        seen: dict[str, None] = {}  # every key so far, in the order met
        records = iter_json_lines(file_lines(f), str(p))
        for where, rec in records:
            seen.update(dict.fromkeys(rec))
            if any(c not in seen for c in wanted):  # a column of no row so far: of any?
                for _, later in records:
                    seen.update(dict.fromkeys(later))
                _check_columns(p, fmt, list(seen), wanted)
            yield where, _row_id(rec, p, where, id_column, columns), rec


def _without_nul(f: Iterable[str], p: Path) -> Iterator[str]:
    for line in f:
        if "\x00" in line:
            raise ValueError(f"{p}: contains NUL bytes; not a CSV text file")
        yield line


def _content_checks(path: Path, id_column: str) -> dict[str, str] | None:
    """``id -> content_check`` of a Parquet table that has the column, else None."""
    import pyarrow.parquet as pq

    from activetest.formats.label_records import CHECK_COLUMN

    try:
        if CHECK_COLUMN not in pq.read_schema(path).names:
            return None
        cols = pq.read_table(path, columns=[id_column, CHECK_COLUMN]).to_pydict()
    except Exception as exc:  # pyarrow raises many types
        raise ValueError(f"{path}: cannot read the {CHECK_COLUMN} column: "
                         f"{str(exc)[:200]}") from None
    # keyed by the id as the rows are read (:func:`_cell_id`: a string stripped), so a
    # row whose id has spaces around it is checked too (QA: it was passed over)
    return {i.strip() if isinstance(i, str) else str(i): str(c)
            for i, c in zip(cols[id_column], cols[CHECK_COLUMN], strict=True)}


def confirm_content(path: Path, checks: dict[str, str], items: Sequence[Item]) -> None:
    """Refuse a row whose content fingerprint is not that of the item with its id."""
    from activetest.formats.label_records import CHECK_COLUMN, content_check

    for it in items:
        mine = content_check(it.fields)
        if checks.get(it.id, mine) != mine:
            raise ValueError(f"{path}: the row for item {it.id!r} was written for other "
                             f"content ({CHECK_COLUMN} {checks[it.id]} in the file, {mine} "
                             f"for this item's fields): the pool changed since the file was "
                             f"written, or its ids are positions in another order; score "
                             f"this pool again")


class TableScorer:
    """Scores items by looking up class log-probs in a file (predictions made elsewhere).

    Args:
        path: CSV/TSV/JSONL/JSON/Parquet table, or lm-eval ``--log_samples`` file(s):
            a file, a folder of them or a glob pattern (one target keyed by
            ``<task>/<doc_id>``).
        id_column: the column with item ids (ignored for lm-eval files, which use ``doc_id``).
        columns: the class columns in class order; default: the task's label words.
            Ignored for lm-eval files (their choices are matched to the classes).
        kind: what the numbers are: ``"logprobs"``, ``"probs"`` or ``"logits"``
            (ignored for lm-eval files, which hold loglikelihoods).
        format: ``"csv"``, ``"tsv"``, ``"jsonl"``, ``"json"``, ``"parquet"`` or
            ``"lmeval"``; default: from the suffix and content.
        tolerance: allowed deviation of a probability row's sum from 1 (or a
            log-prob row's ``logsumexp`` from 0).
        filter_name: for lm-eval files with several filters, which one to read.
        choices: lm-eval: ``"labels"`` (match each record's choices to the classes
            by label word; the default) or ``"positional"`` (choice j is class j).
        match: lm-eval: ``"text"`` (check every item's text against its record's
            document; the default) or ``"id"`` (join by id alone).

    The file is parsed when first needed and the parsed table is kept; errors name
    the file, row and column.
    """

    def __init__(self, path: str | Path, *, id_column: str = "id",
                 columns: Sequence[str] | None = None, kind: Kind = "logprobs",
                 format: Format | None = None, tolerance: float = 1e-3,
                 filter_name: str | None = None, choices: str = "labels",
                 match: str = "text") -> None:
        self.path = Path(path).expanduser()
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if format is not None and format not in _FORMATS:
            raise ValueError(f"format must be one of {', '.join(_FORMATS)}, got {format!r}")
        if choices not in CHOICE_RULES:
            raise ValueError(f"choices must be one of {', '.join(CHOICE_RULES)}, got "
                             f"{choices!r}")
        if match not in MATCH_RULES:
            raise ValueError(f"match must be one of {', '.join(MATCH_RULES)}, got {match!r}")
        self.format = format or _infer_format(self.path)
        if self.format == "lmeval":
            self.files = lmeval_files(str(path))
        elif not self.path.is_file():
            raise ValueError(f"prediction table {self.path} does not exist or is not a file")
        else:
            self.files = [self.path]
        self.id_column = id_column
        self.columns = tuple(columns) if columns is not None else None
        self.kind = kind
        self.tolerance = tolerance
        self.filter_name = filter_name
        self.choices = choices
        self.match = match
        self.name = f"table:{self.path.name}"
        self._cache: dict[tuple[str, ...], tuple[dict[str, int], np.ndarray]] = {}
        self._lmeval: LmEvalSamples | None = None
        self._aligned: dict[tuple[tuple[str, ...], tuple[str, ...]], ChoiceAlignment] = {}
        self._last: ChoiceAlignment | None = None
        self._checks: dict[str, str] | None = None  # Parquet content_check column, by id

    def __repr__(self) -> str:
        return (f"TableScorer({str(self.path)!r}, format={self.format!r}, kind={self.kind!r}, "
                f"id_column={self.id_column!r}, columns={self.columns!r})")

    def cache_identity(self) -> dict[str, Any]:
        """What determines this scorer's outputs: the file(s) (path, size, mtime) and settings."""
        files = []
        for f in self.files:
            st = f.resolve().stat()
            files.append([str(f.resolve()), st.st_size, st.st_mtime_ns])
        ident: dict[str, Any] = {
            "backend": "table", "path": str(self.path), "files": files,
            "format": self.format, "kind": self.kind, "id_column": self.id_column,
            "columns": self.columns, "tolerance": self.tolerance,
            "filter_name": self.filter_name}
        if self.format == "lmeval":
            ident.update(choices=self.choices, match=self.match)
        return ident

    @property
    def lmeval(self) -> LmEvalSamples | None:
        """The parsed lm-eval samples (choices, labels), for ``format="lmeval"``; else None."""
        if self.format != "lmeval":
            return None
        if self._lmeval is None:
            self._lmeval = load_lmeval_samples(list(self.files), filter_name=self.filter_name)
        return self._lmeval

    def labels(self) -> dict[str, int]:
        """Gold choices recorded in an lm-eval file (``target``, in the file's choice
        order; documents without one left out); empty for plain tables."""
        s = self.lmeval
        if s is None:
            return {}
        return {i: int(y) for i, y in zip(s.item_ids, s.labels, strict=True) if y >= 0}

    def _load(self, task: Task) -> tuple[dict[str, int], np.ndarray]:
        if self.format == "lmeval":
            s = self.lmeval
            assert s is not None
            key = (tuple(task.classes), tuple(task.class_names))
            if key not in self._aligned:
                self._aligned[key] = class_logprobs(s, task.classes, task.class_names,
                                                    choices=self.choices)
            self._last = self._aligned[key]
            return {i: r for r, i in enumerate(s.item_ids)}, self._last.logprobs
        cols = self.columns if self.columns is not None else tuple(task.classes)
        if len(cols) != task.n_classes:
            raise ValueError(f"columns {list(cols)} has {len(cols)} entries, task {task.name!r} "
                             f"has {task.n_classes} classes {list(task.classes)}")
        if cols not in self._cache:
            ids, lp = read_table(self.path, columns=cols, id_column=self.id_column,
                                 kind=self.kind, format=self.format,  # type: ignore[arg-type]
                                 tolerance=self.tolerance)
            self._cache[cols] = ({i: r for r, i in enumerate(ids)}, lp)
            if self.format == "parquet" and self._checks is None:
                self._checks = _content_checks(self.path, self.id_column)
        return self._cache[cols]

    def item_ids(self, task: Task) -> list[str]:
        """The item ids the file has rows (lm-eval: records) for, in its order."""
        return list(self._load(task)[0])

    def confirms_content(self, task: Task) -> bool:
        """Whether its join by id is confirmed by each item's content: lm-eval files read
        with ``match="text"`` (every record's document checked) and tables with a
        ``content_check`` column (Parquet, as ``activetest score`` writes them). Ids that
        are only positions join nothing else (:func:`activetest.session.create.
        check_position_joins`)."""
        if self.format == "lmeval":
            return self.match == "text"
        self._load(task)
        return bool(self._checks)

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """Look up the ``(len(items), C)`` class log-probs of ``items`` by id.

        ``examples`` and ``progress`` are accepted for the Scorer protocol and
        ignored: the predictions were made elsewhere, with whatever prompt was used there.

        Raises:
            ValueError: ids missing from the file (named), a malformed file, or (lm-eval)
                choices that are not the task's classes or items that are not the
                records' documents.
        """
        index, lp = self._load(task)
        missing = [it.id for it in items if it.id not in index]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            hint = ""
            if self.format == "lmeval":
                example = next(iter(index), "0")
                hint = (f"; the files' keys look like {example!r} (doc_id, or <task>/<doc_id> "
                        f"for several files): use the samples file(s) as the pool (--pool) "
                        f"to get the same ids")
            elif len(missing) == len(items):
                hint = no_row_hint(list(itertools.islice(index, 3)),
                                   [it.id for it in items[:3]])
            where = self.path if len(self.files) == 1 else f"{self.path} ({len(self.files)} files)"
            raise ValueError(f"{where}: no row for {len(missing)} of {len(items)} item id(s): "
                             f"{shown}{more}{hint}")
        rows = [index[it.id] for it in items]
        if self._checks:
            confirm_content(self.path, self._checks, items)
        if self.format == "lmeval" and self.match == "text":
            s = self.lmeval
            assert s is not None
            check_documents(s, rows, ((it.id, it.fields) for it in items))
        return np.array(lp[rows], dtype=np.float64).reshape(len(items), task.n_classes)

    def prompt_provenance(self) -> dict[str, Any]:
        """What the file says about how its predictions were made (for the session).

        ``n_examples`` is the in-context examples the predictions used: lm-eval's
        ``n-shot`` from the results file beside the samples file, else ``"unknown"``
        (never the session's own setting: the predictions were made elsewhere).
        """
        s = self.lmeval
        if s is None:
            return {"source": "table", "files": [str(f) for f in self.files],
                    "n_examples": "unknown", "kind": self.kind}
        shots = {t: ("unknown" if n is None else n) for t, n in (s.n_shot or {}).items()}
        values = set(shots.values())
        prov: dict[str, Any] = {
            "source": "lm-eval samples", "files": list(s.files), "filter": s.filter,
            "n_examples": values.pop() if len(values) == 1 else "unknown", "n_shot": shots,
            "join": "id and document text" if self.match == "text" else "id only",
            "mutual_info": s.mutual_info}
        if self._last is not None:
            prov.update(choices=list(self._last.file_order), choice_rule=self._last.rule,
                        reordered_documents=self._last.reordered)
        return prov
