"""A prediction table read once, row by row, keeping only the rows of the ids asked for
(:func:`read_wanted`) or only its ids (:func:`read_ids`): every row checked as
:func:`~activetest.models.table_read.read_table` checks it and a problem refused with
its message, in memory that does not grow with the table (8 bytes a row, to tell a
repeated id, and the rows kept). Used by :class:`~activetest.models.table.TableScorer`
for a large CSV, TSV, JSONL, JSON-array or Parquet table, a text one gzipped or not (a
JSON array read by :mod:`activetest.formats.json_array`; ``estimate --compare table:FILE`` reads
the compared model's rows of the labelled items only: at 1e6 items the whole table
read into memory was 0.9 GB).

Which problem is named is :func:`read_table`'s: it reads the whole file before any
row (bytes that are not UTF-8, a NUL, malformed CSV or JSON, a missing column), then
each row in order (its id, an id an earlier row has, its values), then the values of
every row together (a row that does not normalise; whether every row looks like
probabilities changes the message). A row refused here is so refused only once the
whole file has been read for the problems named before it.
"""

from __future__ import annotations

import itertools
import zlib
from array import array
from collections.abc import Container, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from activetest.formats.json_array import NotAStreamedArray, iter_json_array
from activetest.formats.tables import (
    check_header_rows,
    decode_utf8,
    file_lines,
    iter_json_lines,
)
from activetest.models.table_read import (
    check_columns,
    duplicate_message,
    looks_like_probs,
    open_text,
    read_table,
    row_id,
    row_values,
    stream_rows,
    to_log_softmax_rows,
)

__all__ = ["STREAMED_FORMATS", "WantedRows", "id_blocks", "read_ids", "read_wanted",
           "refuse_a_repeated_id", "refuse_file_problems", "streams"]

#: The formats read row by row, gzipped or not (but Parquet); lm-eval samples files are
#: read whole (docs/pool-scale.md: their reader decides across all records).
STREAMED_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")

#: What reading (and gunzipping) a file raises, besides a refusal (ValueError).
_FILE_ERRORS = (UnicodeError, OSError, EOFError, zlib.error, NotAStreamedArray)

#: Rows converted to numbers at a time.
_BLOCK = 4096


@dataclass(frozen=True)
class WantedRows:
    """The rows of a table kept for the ids asked for.

    Attributes:
        index: item id -> its row in :attr:`logprobs` (the ids asked for the table has).
        logprobs: ``(len(index), C)`` log-softmax rows, as :func:`read_table` gives them.
        first_ids: the table's first ids (up to three, file order), for the message of
            items none of which has a row.
    """

    index: dict[str, int]
    logprobs: np.ndarray
    first_ids: tuple[str, ...]


def streams(path: Path, fmt: str) -> bool:
    """Whether the table ``path`` of format ``fmt`` is read row by row here (a gzipped
    Parquet file is no Parquet file: read whole, which names it)."""
    return fmt in STREAMED_FORMATS and not (fmt == "parquet"
                                            and path.name.lower().endswith(".gz"))


def read_wanted(path: Path, *, columns: Sequence[str], id_column: str, kind: str,
                fmt: str, tolerance: float, wanted: Container[str]) -> WantedRows:
    """The rows of the ids in ``wanted`` of the table ``path`` (arguments as
    :func:`~activetest.models.table_read.read_table`'s), every row checked.

    Raises:
        ValueError: as :func:`read_table` (the file, row and column named).
    """
    index: dict[str, int] = {}
    kept: list[list[float]] = []
    first: list[str] = []
    for ids, vals in _checked_blocks(path, columns, id_column, kind, fmt, tolerance):
        if len(first) < 3:
            first.extend(ids[:3 - len(first)])
        for j, item_id in enumerate(ids):
            if item_id in wanted:
                index[item_id] = len(kept)
                kept.append(vals[j])
    values = np.array(kept, dtype=np.float64).reshape(len(kept), len(columns))
    # every row is known good, and each converts on its own: as read_table's rows
    lp = to_log_softmax_rows(values, kind, tolerance, path, (), probs_like=False)
    return WantedRows(index, lp, tuple(first))


def read_ids(path: Path, *, columns: Sequence[str], id_column: str, kind: str, fmt: str,
             tolerance: float) -> list[str]:
    """The table's ids in file order, every row checked (as :func:`read_wanted`)."""
    out: list[str] = []
    for ids in id_blocks(path, columns=columns, id_column=id_column, kind=kind, fmt=fmt,
                         tolerance=tolerance):
        out.extend(ids)
    return out


def id_blocks(path: Path, *, columns: Sequence[str], id_column: str, kind: str, fmt: str,
              tolerance: float) -> Iterator[list[str]]:
    """The table's ids in file order, a block at a time, every row checked (as
    :func:`read_wanted`; a problem is raised once the rows before it are given, the checks
    of the whole table once every row is: a caller keeps nothing of a refused table)."""
    for ids, _ in _checked_blocks(path, columns, id_column, kind, fmt, tolerance):
        yield ids


def _checked_blocks(path: Path, columns: Sequence[str], id_column: str, kind: str,
                    fmt: str, tolerance: float) -> Iterator[tuple[list[str], list[list[float]]]]:
    """The table's rows in blocks, ``(ids, values)``; once every row is read, the
    checks of the whole table (an id an earlier row has, a row that does not normalise)
    are made, so a caller keeps nothing of a refused table."""
    hashes = array("q")  # each row's id's hash: a repeated id, in 8 bytes a row
    checks = _ValueChecks(kind, tolerance, len(columns))
    n = 0
    ids: list[str] = []
    vals: list[list[float]] = []
    wheres: list[str] = []
    try:
        for where, item_id, row in _rows(path, fmt, columns, id_column):
            hashes.append(hash(item_id))
            vals.append(row_values(row, path, where, columns))
            ids.append(item_id)
            wheres.append(where)
            if len(ids) == _BLOCK:
                checks.add(np.array(vals, dtype=np.float64), wheres, n)
                yield ids, vals
                n += len(ids)
                ids, vals, wheres = [], [], []
    except (ValueError, *_FILE_ERRORS) as exc:  # a row (or the file) refused
        _refuse(path, fmt, columns, id_column, hashes, exc)
    if ids:
        checks.add(np.array(vals, dtype=np.float64), wheres, n)
        yield ids, vals
        n += len(ids)
    if n == 0:
        raise ValueError(f"{path}: no data rows")
    _refuse_a_repeated_id(path, fmt, columns, id_column, hashes)
    checks.refuse(path)


def _rows(path: Path, fmt: str, columns: Sequence[str],
          id_column: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(where, id, row)`` of each row, the file's and the row's id checks made."""
    if fmt != "parquet":
        yield from stream_rows(path, fmt, columns=columns, id_column=id_column)
        return
    pf = _parquet(path)
    if pf.metadata.num_rows == 0:
        raise ValueError(f"{path}: no data rows")
    check_columns(path, fmt, [str(c) for c in pf.schema_arrow.names], [id_column, *columns])
    r = 0
    batches = pf.iter_batches(batch_size=_BLOCK, columns=[id_column, *columns],
                              use_threads=False)
    while True:
        try:
            batch = next(batches, None)
            rows = [] if batch is None else batch.to_pylist()
        except Exception as exc:  # pyarrow raises many types (ArrowInvalid, OSError, ...)
            raise ValueError(f"{path}: cannot read as Parquet: {str(exc)[:200]}") from None
        if batch is None:
            return
        for row in rows:
            r += 1
            where = f"row {r}"
            yield where, row_id(row, path, where, id_column, columns), row


def _parquet(path: Path) -> Any:
    """The Parquet file, opened without reading its row groups (no pre-buffering, which
    keeps every column chunk read so far)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is in the dev/parquet extras
        raise ValueError(f"{path}: reading Parquet needs pyarrow "
                         f"(pip install 'activetest[parquet]')") from None
    try:
        return pq.ParquetFile(path, memory_map=False, pre_buffer=False, buffer_size=1 << 20)
    except Exception as exc:  # pyarrow raises many types
        raise ValueError(f"{path}: cannot read as Parquet: {str(exc)[:200]}") from None


def _refuse(path: Path, fmt: str, columns: Sequence[str], id_column: str, hashes: array,
            exc: Exception) -> None:
    """Refuse the table whose row (or file) was refused with ``exc`` while read, with the
    message :func:`read_table` gives: a problem of the whole file it reads first, else an
    earlier row that repeats an id (``hashes``: of the rows read), else ``exc``."""
    if isinstance(exc, _FILE_ERRORS):  # the file's bytes, gzip or JSON: read_table
        _read_whole(path, fmt, columns, id_column, exc)  # names them (reading them whole)
    if fmt != "parquet":  # (a Parquet file's problems are its rows')
        _scan_whole_file(path, fmt, columns, id_column)
    _refuse_a_repeated_id(path, fmt, columns, id_column, hashes)
    raise exc


def _read_whole(path: Path, fmt: str, columns: Sequence[str], id_column: str,
                exc: BaseException) -> NoReturn:
    """Refuse the table as :func:`read_table` refuses it, reading it whole: a problem of
    its bytes (``exc``, met while streaming: not UTF-8, a broken gzip stream, malformed
    JSON) that only the whole text names as it does."""
    read_table(path, columns=columns, id_column=id_column, format=fmt)  # type: ignore[arg-type]
    raise ValueError(f"{path}: cannot read: {exc}") from None


def _scan_whole_file(path: Path, fmt: str, columns: Sequence[str], id_column: str) -> None:
    """Refuse the CSV, TSV, JSONL or JSON table ``path`` (gzipped or not) for a problem
    :func:`read_table` names before any row: bytes that are not UTF-8, a NUL, a malformed
    row or line anywhere (a JSON array's text, a record that is no object), a column no
    row has (reading every line, one at a time).

    One pass over a good file, since 2026-12-07 (it was two: every byte decoded first,
    then the text read again): the text is read to its end, which decodes every byte as
    strictly as the first pass did. Where the text pass raises, the bytes are checked
    then (:func:`_refuse_bytes`), so a problem of the bytes anywhere is still named
    before a row's, as :func:`read_table`, which decodes the whole file first, names it."""
    try:
        _scan_text(path, fmt, columns, id_column)
    except Exception:
        _refuse_bytes(path, fmt, columns, id_column)
        raise


def _refuse_bytes(path: Path, fmt: str, columns: Sequence[str], id_column: str) -> None:
    """Refuse the table ``path`` as :func:`read_table` does for a byte that is not UTF-8
    or a broken gzip stream (every byte decoded, a block at a time); return where it has
    none."""
    import codecs

    try:
        with open_text(path, newline="") as f:  # a byte that is not UTF-8 (or a broken
            raw = f.buffer  # gzip stream): read_table's message
            dec = codecs.getincrementaldecoder("utf-8-sig")()
            for data in iter(lambda: raw.read(16 << 20), b""):
                dec.decode(data)
            dec.decode(b"", final=True)
    except (UnicodeError, OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, UnicodeError) and not _gzipped(path):
            decode_utf8(path.read_bytes(), path)
        _read_whole(path, fmt, columns, id_column, exc)


def _scan_text(path: Path, fmt: str, columns: Sequence[str], id_column: str) -> None:
    """The text checks of :func:`_scan_whole_file`, the text read to its end (every
    byte decoded)."""
    with open_text(path, newline="" if fmt in ("csv", "tsv") else "\n") as f:
        if fmt in ("csv", "tsv"):
            check_header_rows(_no_nul(f, path), str(path), "," if fmt == "csv" else "\t")
        else:
            keys: dict[str, None] = {}
            n = 0
            try:
                for _, rec in (iter_json_lines(file_lines(f), str(path)) if fmt == "jsonl"
                               else iter_json_array(f)):
                    keys.update(dict.fromkeys(rec))
                    n += 1
            except NotAStreamedArray as exc:
                _refuse_bytes(path, fmt, columns, id_column)
                _read_whole(path, fmt, columns, id_column, exc)
            if n:
                check_columns(path, fmt, list(keys), [id_column, *columns])
        while f.read(16 << 20):  # (the rest, if a check stopped early: decoded)
            pass


def refuse_file_problems(path: Path, fmt: str, columns: Sequence[str],
                         id_column: str) -> None:
    """Refuse the CSV, TSV, JSONL or JSON table ``path`` (gzipped or not) for a problem
    :func:`read_table` names before any row's, with its message (ValueError): bytes that
    are not UTF-8, a NUL, a malformed row or line anywhere, a JSON array's text, a column
    no row has. Memory: a line at a time (a broken gzip stream or malformed JSON: read
    whole, as :func:`read_table` reads it, to name it)."""
    _scan_whole_file(path, fmt, columns, id_column)


def _gzipped(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _no_nul(f: Any, path: Path) -> Iterator[str]:
    for line in f:
        if "\x00" in line:
            raise ValueError(f"{path}: contains NUL bytes; not a CSV text file")
        yield line


def refuse_a_repeated_id(path: Path, fmt: str, columns: Sequence[str], id_column: str,
                         hashes: array) -> None:
    """Refuse the first of the table's rows read so far (``hashes``: their ids' hashes,
    ``hash(id)`` in file order) whose id an earlier row has, naming both rows as
    :func:`read_table` does (ValueError); return where none does. The rows whose ids
    share a hash are read again to tell."""
    _refuse_a_repeated_id(path, fmt, columns, id_column, hashes)


def _refuse_a_repeated_id(path: Path, fmt: str, columns: Sequence[str], id_column: str,
                          hashes: array) -> None:
    """Refuse the first of the rows read (``hashes``: their ids' hashes, in order) whose
    id an earlier row has, naming both rows as :func:`read_table` does; the rows whose
    ids share a hash are read again to tell (a hash shared by two ids passes)."""
    h = np.frombuffer(hashes, dtype=np.int64) if len(hashes) else np.empty(0, np.int64)
    s = np.sort(h)
    shared = np.unique(s[1:][s[1:] == s[:-1]])
    if shared.size == 0:
        return
    suspects = set(shared.tolist())
    first: dict[str, str] = {}
    for where, item_id, _ in itertools.islice(_rows(path, fmt, columns, id_column),
                                              len(hashes)):
        if hash(item_id) not in suspects:
            continue
        if item_id in first:
            raise ValueError(duplicate_message(path, where, item_id, first[item_id]))
        first[item_id] = where


class _ValueChecks:
    """The checks :func:`to_log_softmax_rows` makes of the whole table, made block by
    block: the first row each of its checks refuses, and whether every row looks like
    probabilities."""

    def __init__(self, kind: str, tolerance: float, width: int) -> None:
        self.kind = kind
        self.width = width
        self.tolerance = tolerance
        self.probs_like = True
        self.first: dict[int, tuple[int, np.ndarray, str]] = {}  # check -> its first row

    def add(self, values: np.ndarray, wheres: Sequence[str], start: int) -> None:
        """Check the rows ``start``, ``start + 1``, ... (``values``, named ``wheres``)."""
        self.probs_like = self.probs_like and looks_like_probs(values, self.tolerance)
        for k, bad in enumerate(self._refused(values)):
            hit = np.flatnonzero(bad)
            if hit.size and k not in self.first:
                i = int(hit[0])
                self.first[k] = (start + i, values[i].copy(), wheres[i])

    def _refused(self, values: np.ndarray) -> list[np.ndarray]:
        """Per check of :func:`to_log_softmax_rows` (in its order), the rows it refuses."""
        tol = self.tolerance
        if self.kind == "logits":
            with np.errstate(over="ignore", invalid="ignore"):
                z = values - values.max(axis=1, keepdims=True)
                out = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            return [~np.isfinite(out).all(axis=1)]
        if self.kind == "probs":
            return [((values < 0) | (values > 1 + tol)).any(axis=1),
                    np.abs(values.sum(axis=1) - 1.0) > tol, (values <= 0).any(axis=1)]
        lse = values.max(axis=1) + np.log(np.exp(values - values.max(axis=1, keepdims=True))
                                          .sum(axis=1))
        return [np.abs(lse) > tol]

    def refuse(self, path: Path) -> None:
        """Refuse the table as :func:`to_log_softmax_rows` refuses the whole of it: the
        first row of each check, in file order, checked with the whole table's
        ``probs_like`` (the first row a check refuses there is the first of these)."""
        rows = sorted(self.first.values(), key=lambda r: r[0])
        values = np.array([r[1] for r in rows], dtype=np.float64).reshape(len(rows),
                                                                          self.width)
        if not rows and not (self.kind == "logits" and self.probs_like):
            return
        to_log_softmax_rows(values, self.kind, self.tolerance, path, [r[2] for r in rows],
                            probs_like=self.probs_like)
