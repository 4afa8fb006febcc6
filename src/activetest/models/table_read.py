"""Reading a prediction table's rows (CSV, TSV, JSONL, JSON, Parquet) with their checks:
the whole table (:func:`read_table`) or one row at a time (:func:`stream_rows`), each
value (:func:`row_values`) and row (:func:`to_log_softmax_rows`) refused with a message
that names the file, the row (the line for CSV/JSONL) and the column (part of
:mod:`activetest.models.table`, whose module docstring describes the formats and kinds).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from activetest.formats.globs import is_pattern
from activetest.formats.json_array import iter_json_array, record_repeating_a_key
from activetest.formats.lmeval import looks_like_lmeval
from activetest.formats.tables import (
    RepeatedKeyError,
    decode_utf8,
    file_lines,
    gunzip_if_gzip,
    header_rows,
    header_table,
    iter_json_lines,
    json_lines,
    missing_file,
    object_without_repeats,
    repeated_key,
    rows_after_header,
)

__all__ = ["FORMATS", "KINDS", "Format", "Kind", "RowMark", "RowRuleError", "check_columns",
           "duplicate_message", "gzip_size", "infer_format", "looks_like_probs", "no_row_hint",
           "open_text", "read_table", "row_id", "row_values", "stream_rows", "to_log_softmax_rows"]

Kind = Literal["logprobs", "probs", "logits"]
Format = Literal["csv", "tsv", "jsonl", "json", "parquet", "lmeval"]

KINDS = ("logprobs", "probs", "logits")
FORMATS = ("csv", "tsv", "jsonl", "json", "parquet", "lmeval")
_SUFFIX_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
                   ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


class RowRuleError(ValueError):
    """A row refused by :func:`to_log_softmax_rows`'s rule for its kind (the message
    names the file and the row). The rule makes its checks in turn, each over every row,
    so the row named is the first refused by the first check that refuses any:
    ``rank`` is that check's place (from 0: ``probs`` checks the range, then the sums,
    then zeros; ``logits`` and ``logprobs`` have one check of rows). A reader that
    meets the rows a block at a time names the row of the lowest rank, the first of
    them (:mod:`activetest.session.stream_init`)."""

    def __init__(self, message: str, rank: int) -> None:
        super().__init__(message)
        self.rank = rank


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


def infer_format(path: Path) -> str:
    """The table format of ``path`` from its suffix (``lmeval`` for a folder, a glob or
    an lm-eval samples file, told by its content).

    Raises:
        ValueError: no such file, or a suffix that names no format.
    """
    if path.is_dir() or is_pattern(path):
        return "lmeval"  # a folder or a glob of samples files (lmeval_files checks)
    if not path.exists():
        raise ValueError(missing_file(path, "prediction table, table:FILE"))
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
                         f"{', '.join(FORMATS)}")
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
        data = json.loads(text, object_pairs_hook=object_without_repeats)
    except RepeatedKeyError as exc:  # (Python's parser keeps the last value)
        i = record_repeating_a_key(text)
        where = "" if i is None else f" record {i}:"
        raise ValueError(f"{path}:{where} {repeated_key(exc.key)}") from None
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
    raise ValueError(f"unknown table format {fmt!r}; expected {', '.join(FORMATS)}")


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
                        where: Sequence[str], *, probs_like: bool | None = None
                        ) -> np.ndarray:
    """Turn validated finite values of ``kind`` into log-softmax rows (each row on its
    own: the rows of a table converted in parts are those of the whole). ``probs_like``:
    whether every row of the whole table looks like probabilities
    (:func:`looks_like_probs`, which the message of a table read as logits or log-probs
    depends on), where ``values`` are only some of its rows; None: of ``values``."""
    def every_row_probs() -> bool:
        return looks_like_probs(values, tolerance) if probs_like is None else probs_like

    if kind == "logits":
        if every_row_probs():
            raise ValueError(f"{path}: every row lies in [0, 1] and sums to 1: these are "
                             f"probabilities, and ?kind=logits would softmax them again "
                             f"(a wrong log loss, no error); use ?kind=probs "
                             f"(kind='probs' in Python)")
        with np.errstate(over="ignore", invalid="ignore"):
            out = _log_softmax(values)
        bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
        if bad.size:
            i = int(bad[0])
            raise RowRuleError(f"{path}: {where[i]}: logits {values[i].tolist()!s:.80} differ "
                             f"by more than float64 can turn into probabilities (a class "
                             f"would get probability 0, log-probability -inf, which no "
                             f"estimate can use); give logits within about 700 of each "
                             f"other", 0)
        return out
    if kind == "probs":
        bad = np.flatnonzero(((values < 0) | (values > 1 + tolerance)).any(axis=1))
        if bad.size:
            i = int(bad[0])
            raise RowRuleError(f"{path}: {where[i]}: probabilities must lie in [0, 1], got "
                               f"{values[i].tolist()}", 0)
        sums = values.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > tolerance)
        if bad.size:
            i = int(bad[0])
            raise RowRuleError(f"{path}: {where[i]}: probabilities sum to {sums[i]:.6g}, not 1 "
                               f"(tolerance {tolerance}); for unnormalised scores add "
                               f"?kind=logits to the table: spec (kind='logits' in Python)", 1)
        bad = np.flatnonzero((values <= 0).any(axis=1))
        if bad.size:  # log 0 = -inf: no estimate, design or log loss can use it
            i = int(bad[0])
            raise RowRuleError(f"{path}: {where[i]}: a probability of 0 ({values[i].tolist()}): "
                               f"its log-probability is -inf, which no estimate can use (a "
                               f"label of that class would have an infinite log loss); give "
                               f"every class a probability above 0, e.g. clipped at 1e-9", 2)
        return np.log(values / sums[:, None])
    # logprobs
    lse = values.max(axis=1) + np.log(np.exp(values - values.max(axis=1, keepdims=True))
                                      .sum(axis=1))
    bad = np.flatnonzero(np.abs(lse) > tolerance)
    if bad.size:
        i = int(bad[0])
        if every_row_probs():  # QA: the logits hint silently mis-scored
            raise RowRuleError(f"{path}: {where[i]}: log-probabilities do not normalise "
                               f"(logsumexp = {lse[i]:.6g}), and every row lies in [0, 1] "
                               f"and sums to 1: these are probabilities; add ?kind=probs to "
                               f"the table: spec (kind='probs' in Python)", 0)
        raise RowRuleError(f"{path}: {where[i]}: log-probabilities do not normalise (logsumexp "
                           f"= {lse[i]:.6g}, tolerance {tolerance}); for probabilities add "
                           f"?kind=probs, for unnormalised scores (logits) ?kind=logits to the "
                           f"table: spec (kind='probs' / 'logits' in Python)", 0)
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
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    fmt = format or infer_format(p)
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
    check_columns(p, fmt, raw.columns, [id_column, *cols])
    ids: list[str] = []
    first: dict[str, str] = {}
    values = np.empty((len(raw.rows), len(cols)), dtype=np.float64)
    for i, (row, where) in enumerate(zip(raw.rows, raw.where, strict=True)):
        item_id = row_id(row, p, where, id_column, cols)
        if item_id in first:
            raise ValueError(duplicate_message(p, where, item_id, first[item_id]))
        first[item_id] = where
        ids.append(item_id)
        values[i] = row_values(row, p, where, cols)
    return ids, to_log_softmax_rows(values, kind, tolerance, p, raw.where)


def check_columns(p: Path, fmt: str, columns: Sequence[str], wanted: Sequence[str]) -> None:
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


def row_id(row: dict[str, Any], p: Path, where: str, id_column: str,
           cols: Sequence[str]) -> str:
    """The id of the table ``p``'s row ``row`` (named ``where``), as :func:`read_table`
    reads it.

    Raises:
        ValueError: the row lacks the id or a class column (``cols``), or its id is
            empty or neither text nor an integer.
    """
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


@dataclass(frozen=True)
class RowMark:
    """Where a CSV, TSV, JSONL or JSON-array table's row starts, to read the table from it
    on (:func:`stream_rows`): its number among the table's rows (from 0), the byte of the
    file (gunzipped, where it is gzipped) its record starts at, a line's start (and, in
    a CSV or TSV file, no quoted field open there), and the lines before it (the header's
    among them). In a JSON array (whose records are named by their number, not their
    line): the character of the text (as :func:`open_text` reads it, a BOM dropped) the
    record's ``{`` is at, and ``lines`` 0."""

    row: int
    offset: int
    lines: int


def stream_rows(path: Path, fmt: str, *, columns: Sequence[str], id_column: str,
                mark: RowMark | None = None) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The rows of a CSV, TSV, JSONL or JSON-array table (gzipped or not: :func:`open_text`)
    as :func:`read_table` reads them, one at a time, in constant memory: ``(where, item
    id, row)``, the file's and each row's checks but the duplicate id's and the values'
    (:func:`row_values`) applied, raising :func:`read_table`'s messages. A JSON row
    without a class or id column is refused as :func:`read_table` refuses it: naming the
    row where some row of the file has the column (the file read on to tell), else naming
    the file.

    Raises:
        ValueError: as :func:`read_table`, when the row is read;
            :class:`~activetest.formats.json_array.NotAStreamedArray` where a JSON array's
            text is malformed or holds a record that is no object (:func:`read_table`
            names that, reading the file whole); UnicodeError, OSError, EOFError and
            zlib.error as reading (and gunzipping) the file raises them.

    ``mark``: read from that row on (a CSV, TSV, JSONL or JSON-array table; the rows before it read
    before, each with every column: a JSON row's missing column named as where it is
    the first row read), each named as reading from the first row names it; the header
    is read from the file's start still.
    """
    p = Path(path)
    wanted = [id_column, *columns]
    if mark is not None:
        yield from _rows_from(p, fmt, wanted, columns, mark)
        return
    with open_text(p, newline="" if fmt in ("csv", "tsv") else "\n") as f:
        if fmt in ("csv", "tsv"):
            header, rows = header_rows(_without_nul(f, p), str(p), "," if fmt == "csv" else "\t")
            first = next(rows, None)
            if first is None:  # read_table says so before it looks at the columns
                raise ValueError(f"{p}: no data rows")
            check_columns(p, fmt, header, wanted)
            for where, row in itertools.chain([first], rows):
                yield where, row_id(row, p, where, id_column, columns), row
            return
        if fmt not in ("jsonl", "json"):
            raise ValueError(f"{p}: {fmt} tables are not read row by row")
        seen: dict[str, None] = {}  # every key so far, in the order met
        records = (iter_json_lines(file_lines(f), str(p)) if fmt == "jsonl"
                   else iter_json_array(f))
        for where, rec in records:
            seen.update(dict.fromkeys(rec))
            if any(c not in seen for c in wanted):  # a column of no row so far: of any?
                for _, later in records:
                    seen.update(dict.fromkeys(later))
                check_columns(p, fmt, list(seen), wanted)
            yield where, row_id(rec, p, where, id_column, columns), rec


def _rows_from(p: Path, fmt: str, wanted: list[str], columns: Sequence[str],
               mark: RowMark) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """:func:`stream_rows` from the row ``mark`` on: the file's text read from its byte
    (a gzip stream gunzipped up to it, not parsed; ``mark.offset`` past the first byte),
    rows named by their lines in the whole file."""
    import io

    if fmt in ("csv", "tsv"):
        delimiter = "," if fmt == "csv" else "\t"
        with open_text(p, newline="") as f:  # (the header: the file's first record)
            header, _ = header_rows(_without_nul(f, p), str(p), delimiter)
        check_columns(p, fmt, header, wanted)
    elif fmt == "json":  # (from its record's first character, the text before decoded)
        with open_text(p, newline="") as f:
            for where, rec in iter_json_array(f, start=(mark.row, mark.offset)):
                yield where, row_id(rec, p, where, wanted[0], columns), rec
        return
    elif fmt != "jsonl":
        raise ValueError(f"{p}: {fmt} tables are not read from a row on")
    with p.open("rb") as b:
        gz = b.read(2) == b"\x1f\x8b"
    with (gzip.open(p, "rb") if gz else p.open("rb")) as raw:
        raw.seek(mark.offset)  # (past the file's first byte: no BOM to drop there)
        with io.TextIOWrapper(raw, encoding="utf-8",  # type: ignore[arg-type]
                              newline="" if fmt != "jsonl" else "\n") as text:
            if fmt != "jsonl":
                for where, row in rows_after_header(_without_nul(text, p), header, str(p),
                                                    delimiter, lines_before=mark.lines):
                    yield where, row_id(row, p, where, wanted[0], columns), row
                return
            for where, rec in iter_json_lines(file_lines(text, start=mark.lines + 1), str(p)):
                yield where, row_id(rec, p, where, wanted[0], columns), rec


def open_text(p: Path, *, newline: str) -> IO[str]:
    """The table ``p`` opened as UTF-8 text (a BOM dropped), gunzipped as it is read where
    it starts with gzip's magic bytes (whatever its name says, as :func:`read_table`
    reads it)."""
    with p.open("rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(p, "rt", encoding="utf-8-sig", newline=newline)
    return p.open(encoding="utf-8-sig", newline=newline)


def gzip_size(p: Path) -> int | None:
    """The size of the gzipped file ``p`` once gunzipped, as its last member's trailer
    says it (modulo 2**32), or None where ``p`` is no gzip file."""
    try:
        with p.open("rb") as f:
            if f.read(2) != b"\x1f\x8b":
                return None
            f.seek(-4, 2)
            return int.from_bytes(f.read(4), "little")
    except OSError:
        return None


def _without_nul(f: Iterable[str], p: Path) -> Iterator[str]:
    for line in f:
        if "\x00" in line:
            raise ValueError(f"{p}: contains NUL bytes; not a CSV text file")
        yield line
