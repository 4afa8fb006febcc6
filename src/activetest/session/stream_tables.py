"""The ``table:`` predictions of a streamed ``init``, in blocks: which tables stream
(:func:`streamable_table`), their rows read with pyarrow (:func:`table_blocks`), taken
``m`` at a time in the pool's order (:class:`TableRows`), turned into log-probs by the
table reader's rule (:func:`converted_rows`), and a row the fast reader does not take
read again with the general path's rules to refuse it with its message
(:func:`read_again`) (part of :mod:`activetest.session.stream_init`)."""

from __future__ import annotations

import dataclasses
import json
import os
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Task
from activetest.models.table_read import open_text
from activetest.session import stream_base
from activetest.session.stream_base import (
    PARQUET_READ,
    READ_ERRORS,
    LateRefusalError,
    NotStreamable,
    StreamMismatchError,
    StreamRefusedError,
)
from activetest.session.stream_marks import CsvMarks, Marks
from activetest.session.stream_pool import clean_text, open_pool_bytes

__all__ = ["JSONL_BLOCK", "Repeated", "Table", "TableEnds", "TableRows", "converted_rows",
           "gzipped_table", "read_again", "refuse_file_problems", "streamable_table",
           "table_blocks"]

_TABLE_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")

#: The bytes of a JSONL table read at a time (cut after a line's end), read as
#: ``stream_tables.JSONL_BLOCK`` (a test makes it small).
JSONL_BLOCK = 16 << 20


@dataclasses.dataclass(frozen=True)
class Table:
    """A ``table:`` prediction file that streams: its spec as stored and as given, the
    table reader (settings, identity, provenance) and the class columns read."""

    spec: str  # as stored
    raw: str  # as given
    scorer: Any  # the TableScorer (settings, identity, provenance)
    columns: tuple[str, ...]


def streamable_table(raw: Any, task: Task) -> Table | None:
    """The :class:`Table` of the model spec ``raw`` where it is a ``table:`` file the
    stream reads (CSV, TSV, JSONL or a JSON array of row objects, gzipped or not, or
    Parquet; one column per class, no problem the general path names before any row);
    None where it takes the general path."""
    if not isinstance(raw, (str, os.PathLike)):
        return None
    raw = os.fspath(raw)
    if not raw.startswith("table:"):
        return None
    from activetest.models.registry import get_scorer
    from activetest.models.table import TableScorer
    from activetest.session.scoring import stored_spec

    try:
        scorer = get_scorer(raw)
    except (ValueError, OSError):
        return None
    if not isinstance(scorer, TableScorer) or scorer.format not in _TABLE_FORMATS:
        return None
    if scorer.format == "parquet" and scorer.path.name.lower().endswith(".gz"):
        return None  # (no Parquet file: the general path names it)
    cols = scorer.columns if scorer.columns is not None else tuple(task.classes)
    if len(cols) != task.n_classes:
        return None
    if scorer.format != "parquet" and not _clean_table(scorer.path, scorer.format):
        return None
    return Table(stored_spec(raw), raw, scorer, tuple(cols))


def _clean_table(p: Path, fmt: str) -> bool:
    """Whether the CSV, TSV, JSONL or JSON table ``p`` (gzipped or not) has none of the
    problems the general path refuses it for before any row, which the fast reader does
    not see outside the columns it reads: a NUL character or a byte that is not UTF-8
    anywhere in the file, a broken gzip stream, a header that names a column twice (QA:
    such tables were accepted). Where it has one, the general path names it (reading the
    file's bytes, or its header)."""
    if not clean_text(p, gzipped_table(p)):
        return False
    if fmt in ("jsonl", "json"):
        return True
    from activetest.formats.tables import header_rows

    try:
        with open_text(p, newline="") as f:
            header_rows(f, str(p), "," if fmt == "csv" else "\t")
    except (ValueError, OSError):
        return False
    return True


def table_blocks(t: Table) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Blocks of ``(ids as str objects, (m, C) float64 values, content checks)`` of a
    prediction table; the checks (str objects) where a Parquet table has the
    ``content_check`` column (a scoring job's table: the join confirms each item's
    content by it, as the table reader does), else None."""
    import pyarrow as pa

    from activetest.formats.label_records import CHECK_COLUMN

    s = t.scorer
    want = [s.id_column, *t.columns]
    checked = False
    if t not in _READ_AS:  # (as the stream began reading it: read_again's rows checked)
        _READ_AS[t] = _file_state(s.path)
    if s.format == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(s.path, **PARQUET_READ)
        if any(c not in pf.schema_arrow.names for c in want):
            raise NotStreamable("columns")
        checked = CHECK_COLUMN in pf.schema_arrow.names
        batches: Any = pf.iter_batches(batch_size=stream_base.BLOCK,
                                       columns=want + [CHECK_COLUMN] * checked,
                                       use_threads=False)
    elif s.format in ("csv", "tsv"):  # TSV: quoted as CSV, as the table reader reads it
        import pyarrow.csv as pcsv

        types = {s.id_column: pa.string(), **{c: pa.float64() for c in t.columns}}
        # small blocks, one thread, the system allocator: memory stays a few blocks; a
        # gzipped file gunzipped as it is read (by its bytes, as the table reader, not by
        # its name as pyarrow would)
        source = pa.input_stream(str(s.path),
                                 compression="gzip" if gzipped_table(s.path) else None)
        batches = pcsv.open_csv(  # (its rows' starts noted as read: read_again)
            pa.PythonFile(CsvMarks(source, _marks(t), b"\t" if s.format == "tsv" else b","),
                          mode="r"),
            read_options=pcsv.ReadOptions(block_size=1 << 20, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter="\t" if s.format == "tsv" else ","),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=want,
                                                strings_can_be_null=False,
                                                quoted_strings_can_be_null=False),
            memory_pool=pa.system_memory_pool())
    elif s.format == "json":
        batches = _json_array_batches(s.path, want, _marks(t))
    else:
        batches = _jsonl_batches(s.path, want, _marks(t))
    start = 0  # the table's rows before this batch
    for batch in batches:
        checks = None
        if checked:
            col = batch.column(len(want))
            if col.null_count or not pa.types.is_string(col.type):
                raise NotStreamable("content check")  # the general path names the row
            checks = np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)
        try:
            ids = _ids(batch.column(want.index(s.id_column)), t, start)
            vals = _values(batch, want[1:], t, start)
        except (_BadRow, _RowRefusedError) as exc:  # its rows' ids, for a repeated id before
            exc.batch = (start, _batch_ids(batch.column(want.index(s.id_column))))
            raise
        yield ids, vals, checks
        start += batch.num_rows


def _jsonl_batches(path: Path, want: list[str], marks: Marks) -> Iterator[Any]:
    """The ``want`` columns (the id first) of a JSONL table, a block of lines at a time
    (:data:`JSONL_BLOCK` bytes; gunzipped as read where the file is gzipped; each block's
    start noted in ``marks``: :func:`read_again` reads from it): read by pyarrow, or where its
    reader refuses a block (ids of both kinds, numbers and strings, which it takes for a
    column that changes type) by the standard library's, a block of
    :data:`stream_base.BLOCK` lines at a time, the ids as the table reader takes them
    (:func:`_json_block`)."""
    import io

    import pyarrow as pa
    import pyarrow.json as pjson

    from activetest.formats.tables import object_without_repeats

    def read(block: bytes) -> Iterator[Any]:
        try:
            yield pjson.read_json(io.BytesIO(block)).select(want)
            return
        except pa.ArrowInvalid:
            pass
        lines = [line for line in block.split(b"\n") if line.strip()]
        for k in range(0, len(lines), stream_base.BLOCK):  # (a block of records in
            try:  # memory at a time, not the 16 MiB of lines)
                recs = [json.loads(line, object_pairs_hook=object_without_repeats)
                        for line in lines[k:k + stream_base.BLOCK]]
            except ValueError:  # (not JSON, or an object that repeats a key, which
                # pyarrow refuses too: the general path's rules name the line)
                raise pa.ArrowInvalid("not JSON") from None
            if not all(isinstance(r, dict) for r in recs):
                raise pa.ArrowInvalid("a line that is no object") from None
            yield _json_block(recs, want)

    from activetest.models.table_read import RowMark

    at = [0, 0, 0]  # the rows, bytes and lines before the block

    def marked(block: bytes) -> Iterator[Any]:
        marks.add(RowMark(*at))
        if block.strip():
            for part in read(block):
                at[0] += part.num_rows
                yield part
        at[1] += len(block)
        at[2] += block.count(b"\n")

    with open_pool_bytes(path, gzipped_table(path)) as f:
        rest = b""
        while True:
            data = f.read(JSONL_BLOCK)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
            yield from marked(block)
        if rest.strip():
            yield from marked(rest)


def _json_block(recs: Sequence[Mapping[str, Any]], want: list[str]) -> Any:
    """The ``want`` columns (the id first) of JSON records as a pyarrow table: each id as
    text by the table reader's rule (:func:`activetest.models.table_read.row_id`: a
    string as written, an integer in decimal; so a table whose ids are numbers in some
    rows and strings in others streams, since 2026-12-07: it took the general path), any
    other id (a float, ``true``, null, missing) null, which refuses its row (read again
    with the general path's rules, which name it); the values as pyarrow converts them,
    but a JSON ``true`` or ``false`` null (refused, its row read again and named by the
    general path's rule: ``expected a number, got True``), since 2026-12-07: pyarrow
    converts ``[0.25, true]`` to ``[0.25, 1.0]``, so a boolean after a number in a
    table's column was taken as 1.0 or 0.0 (as a logit or log-prob), where the table
    reader refuses it."""
    import pyarrow as pa

    ids = pa.array([v if isinstance(v, str) else str(v)
                    if isinstance(v, int) and not isinstance(v, bool) else None
                    for v in (r.get(want[0]) for r in recs)], type=pa.string())
    return pa.table({want[0]: ids, **{c: pa.array([None if isinstance(v, bool) else v
                                                   for v in (r.get(c) for r in recs)])
                                      for c in want[1:]}})


def _json_array_batches(path: Path, want: list[str], marks: Marks) -> Iterator[Any]:
    """The ``want`` columns of a JSON array of row objects, :data:`stream_base.BLOCK`
    records at a time (:func:`activetest.formats.json_array.iter_json_array`: one record
    at a time, a window of the text; gunzipped as read where the file is gzipped); a
    record without a column has a null there (refused as the table reader refuses it:
    :func:`read_again`), ids as :func:`_json_block` takes them. Text that is no such
    array raises
    :class:`~activetest.formats.json_array.NotAStreamedArray` (a ValueError) where met.
    Each block's first record's start (its number, the character of the text its ``{``
    is at) noted in ``marks``: :func:`read_again` reads from it (since 2026-12-07: a JSON
    array's row was read again from its first record)."""
    from activetest.formats.json_array import iter_json_array
    from activetest.models.table_read import RowMark

    def at(i: int, c: int) -> None:
        if i % stream_base.BLOCK == 0:
            marks.add(RowMark(i, c, 0))

    with open_text(path, newline="") as f:
        recs: list[dict[str, Any]] = []
        for _, rec in iter_json_array(f, at=at):
            recs.append(rec)
            if len(recs) >= stream_base.BLOCK:
                yield _json_block(recs, want)
                recs = []
        if recs:
            yield _json_block(recs, want)


def gzipped_table(p: Path) -> bool:
    """Whether the table ``p`` is gunzipped as it is read: it starts with gzip's magic
    bytes, whatever its name (the table reader's rule,
    :func:`activetest.models.table_read.open_text`)."""
    try:
        with p.open("rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


class _BadRow(NotStreamable):
    """A row of a CSV, TSV or JSONL table the fast reader does not take (``row``: its number
    in the table from 0; None where the reader does not say which): the general path's
    rules decide, reading the table's rows again (:func:`_refuse_bad_row`)."""

    def __init__(self, row: int | None) -> None:
        super().__init__("bad row")
        self.row = row
        self.batch: tuple[int, list[str | None]] | None = None  # set by table_blocks


class _RowRefusedError(StreamRefusedError):
    """A Parquet table's row ``row`` (from 0) refused by the fast reader with the general
    path's message (a value that is not a finite number); ``batch``: as
    :class:`_BadRow`'s."""

    def __init__(self, message: str, row: int) -> None:
        super().__init__(message)
        self.row = row
        self.batch: tuple[int, list[str | None]] | None = None  # set by table_blocks


def _batch_ids(col: Any) -> list[str | None]:
    """A batch's ids as the fast reader takes them (text stripped, an integer in
    decimal), None for one it refuses (null, empty, of another type): the rows before a
    refused row, looked through for an earlier row's id (:meth:`TableRows._read`)."""
    out: list[str | None] = []
    for v in col.to_pylist():
        if isinstance(v, str):
            v = v.strip()
            out.append(v or None)
        elif isinstance(v, int) and not isinstance(v, bool):
            out.append(str(v))
        else:
            out.append(None)
    return out


def _bad(t: Table, what: str, first: Any = None, start: int = 0) -> NotStreamable:
    """NotStreamable for a Parquet table (the general path names its row), a
    :class:`_BadRow` for a CSV, TSV or JSONL table: at ``start`` plus the first true index of
    the boolean array ``first``, or of no row known (None)."""
    if t.scorer.format == "parquet":
        return NotStreamable(what)
    if first is None:
        return _BadRow(None)
    return _BadRow(start + int(np.flatnonzero(np.asarray(first, dtype=bool))[0]))


def _ids(col: Any, t: Table, start: int) -> np.ndarray:
    """A batch's id column (its rows ``start``, ...) as str objects, by the general path's
    rule (:func:`activetest.models.table_read.row_id`): an integer in decimal, text with
    white space trimmed. pyarrow's ``utf8_trim_whitespace`` trims exactly what Python's
    ``str.strip`` does (its white space is Python's ``isspace``: category Zs or
    bidirectional class WS, B or S; checked for every code point by
    tests/session/test_stream_whitespace_ids.py, with tables streamed and read whole). A
    null, empty or other id: :func:`_bad` (the general path's rules refuse its row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if col.null_count:  # a CSV id reads no null; a JSON line's missing or null id does
        raise _bad(t, "null id", col.is_null().to_numpy(zero_copy_only=False), start)
    if pa.types.is_integer(col.type):
        col = pc.cast(col, pa.string())
    elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = pc.utf8_trim_whitespace(col)
        empty = pc.equal(pc.utf8_length(col), 0)
        if pc.any(empty).as_py():
            raise _bad(t, "empty id", empty.to_numpy(zero_copy_only=False), start)
    else:
        raise _bad(t, "id type")
    return np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)


def _values(batch: Any, cols: Sequence[str], t: Table, start: int) -> np.ndarray:
    """The batch's class columns as ``(m, C)`` float64; a value that is not finite in a
    Parquet table (whose rows the general path names by their position: ``row k`` for
    the k-th) is refused here with the general path's message; a value the fast reader
    does not take in a CSV, TSV or JSONL table: :class:`_BadRow` (the general path's rules
    name its line). A column of text (a Parquet string column, a JSON table's strings)
    is read as the general path reads it (:func:`_text_floats`), and text that is no
    finite number refused as it refuses it."""
    import pyarrow as pa

    out = np.empty((batch.num_rows, len(cols)), dtype=np.float64)
    texts: dict[int, list[str]] = {}  # a text column's values, as written
    for j in range(len(cols)):
        col = batch.column(j + 1)
        if col.null_count:  # an empty cell, a JSON null or missing key
            raise _bad(t, "value type", col.is_null().to_numpy(zero_copy_only=False), start)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            texts[j] = col.to_pylist()  # (a block of them: memory stays a few blocks)
            out[:, j] = _text_floats(texts[j])
            continue
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise _bad(t, "value type")  # a JSON table's true: which row?
        out[:, j] = col.to_numpy(zero_copy_only=False)
    finite = np.isfinite(out)
    if not finite.all():
        if t.scorer.format != "parquet":  # lines: the general path's rules name them
            raise _BadRow(start + int(np.flatnonzero(~finite.all(axis=1))[0]))
        i = int(np.flatnonzero(~finite.all(axis=1))[0])  # the first row, its first column
        j = int(np.flatnonzero(~finite[i])[0])
        if j in texts:  # text that is no number, or no finite one: the general path's
            from activetest.models.table_read import row_values  # rule names it

            try:
                row_values({cols[j]: texts[j][i]}, t.scorer.path, f"row {start + i + 1}",
                           [cols[j]])
            except ValueError as exc:
                raise _RowRefusedError(str(exc), start + i) from None
        # refused here, not by the general path, which would read the whole table into
        # memory to say it (1.8 GB per million items: killed for memory at 1e7-1e8)
        raise _RowRefusedError(f"{t.scorer.path}: row {start + i + 1}: column {cols[j]!r}: "
                               f"value {float(out[i, j])!r:.60} is not finite (NaN/inf "
                               f"are not allowed)", start + i)
    return out


def _text_floats(texts: Sequence[str]) -> np.ndarray:
    """Text values as the general path reads them (``float(value.strip())``: Python's
    rule, so the same numbers and the same text taken, e.g. ``" -0.25"``, ``"1_0"``), NaN
    for text that is no number (refused by the caller with the general path's message,
    :func:`activetest.models.table_read.row_values`). QA: a Parquet table's text column
    fell back to the general path, which read a 1e7-item table into memory (6 GiB+)."""
    try:
        return np.array([float(v.strip()) for v in texts], dtype=np.float64)
    except (ValueError, OverflowError):
        pass
    out = np.empty(len(texts), dtype=np.float64)
    for k, v in enumerate(texts):
        try:
            out[k] = float(v.strip())
        except (ValueError, OverflowError):
            out[k] = np.nan
    return out


class TableEnds(NotStreamable):
    """A table with fewer rows than the pool (it is then joined by id: some pool items
    may have no row, which the join names)."""


#: ``repeated(ids, start)`` of :class:`TableRows`: refuse the first of the table's rows
#: ``start``, ``start + 1``, ... (their ``ids``, None for a row's id the reader refuses)
#: whose id an earlier row has, with the general path's message; return where none does.
Repeated = Callable[[Sequence[str | None], int], None]


class TableRows:
    """Exactly ``m`` rows at a time from a stream of blocks of the table ``table``.

    ``repeated``: where a row is refused (a value, an id), the rows not yet handed out
    before it (and the row itself) are first looked through for an earlier row's id
    (:data:`Repeated`; the rows handed out are the caller's to have checked), since the
    general path reads each row's id before its values and names a repeated id first
    (QA: a row repeating an id followed in the same block by a NaN was refused naming
    the NaN, where the general path names the repeated id)."""

    def __init__(self, blocks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
                 table: Table, repeated: Repeated | None = None) -> None:
        self.blocks = blocks
        self.table = table
        self.repeated = repeated
        self.ids: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.checks: list[np.ndarray | None] = []
        self.held = 0
        self.given = 0  # the rows handed out

    def _read(self) -> bool:
        """Read the next block; False at the end of the table. A CSV, TSV or JSONL row the
        fast reader does not take is refused with the general path's message, where
        the general path refuses it (else NotStreamable: it reads the table); a repeated
        id before a refused row first (``repeated``)."""
        import csv

        try:
            nxt = next(self.blocks, None)
        except (_BadRow, _RowRefusedError) as exc:
            self._refuse_a_repeated_id(exc.row, exc.batch)
            if isinstance(exc, _RowRefusedError):
                raise
            _refuse_bad_row(self.table, exc.row, self._streamed(exc.batch))
        except StreamRefusedError:
            raise
        except (*READ_ERRORS, csv.Error) as exc:  # e.g. a value pyarrow cannot convert
            if self.table.scorer.format != "parquet":
                if "CSV conversion error" not in str(exc):  # a record's shape (pyarrow:
                    # "CSV parse error", "CSV parser got out of sync with chunker", ...)
                    _refuse_malformed(self.table, self.given + self.held)
                _refuse_bad_row(self.table, None, self._streamed(None))
            raise NotStreamable("read") from None
        if nxt is None:
            return False
        self.ids.append(nxt[0])
        self.vals.append(nxt[1])
        self.checks.append(nxt[2])
        self.held += len(nxt[0])
        return True

    def take(self, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The next ``m`` rows: ``(ids, values, content checks or None)``."""
        while self.held < m:
            if not self._read():
                raise TableEnds("table ends before the pool")
        ids = np.concatenate(self.ids) if len(self.ids) > 1 else self.ids[0]
        vals = np.concatenate(self.vals) if len(self.vals) > 1 else self.vals[0]
        checks = None
        if self.checks[0] is not None:  # a file has the column in every block or none
            checks = (np.concatenate(self.checks) if len(self.checks) > 1  # type: ignore[arg-type]
                      else self.checks[0])
        self.ids, self.vals = [ids[m:]], [vals[m:]]
        self.checks = [None if checks is None else checks[m:]]
        self.held = len(ids) - m
        self.given += m
        return ids[:m], vals[:m], None if checks is None else checks[:m]

    def each(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """Every block of the table, from its first row (none taken before)."""
        while self._read():
            block = self.ids.pop(), self.vals.pop(), self.checks.pop()
            self.held = 0
            self.given += len(block[0])
            yield block

    def _refuse_a_repeated_id(self, row: int | None,
                              batch: tuple[int, list[str | None]] | None) -> None:
        """Before the row ``row`` (from 0) is refused: refuse the first row not handed out
        up to it (those held, then the failing block's, ``batch``: its first row and ids)
        whose id an earlier row has (``repeated``). Where the reader does not say which
        row it refuses (None: a block it cannot convert), nothing is looked through here:
        :func:`read_again` finds the row, and a repeated id before it, by the general
        path's rules."""
        if self.repeated is None or row is None or batch is None:
            return
        start, ids = batch
        held: list[str | None] = [str(i) for a in self.ids for i in a.tolist()]
        self.repeated(held + ids[:row - start + 1], self.given)

    def _streamed(self, batch: tuple[int, list[str | None]] | None
                  ) -> tuple[int, list[str | None]]:
        """The ids the stream read of the rows not handed out (those held, then the
        failing block's, ``batch``: its first row and ids, where it follows them), as
        ``(first row, ids)``: :func:`read_again`'s ``expect``, each of these rows read
        again confirmed by its id (a row handed out is the caller's, its id not kept)."""
        held: list[str | None] = [str(i) for a in self.ids for i in a.tolist()]
        if batch is None:
            return self.given, held
        start, ids = batch
        if start == self.given + len(held):
            return self.given, held + ids
        return start, ids

    def next_id(self) -> str | None:
        """The id of the first row left after those taken; None where none is."""
        while self.held == 0:
            if not self._read():
                return None
        return str(next(a for a in self.ids if len(a))[0])



def _refuse_malformed(t: Table, row: int) -> None:
    """Refuse the CSV or TSV table ``t`` whose block from its row ``row`` (from 0; the rows
    before it streamed) pyarrow could not parse (a record of another width than the
    header, a quote left open), naming its first malformed record as the general path
    names it before any row's problem (:func:`refuse_file_problems`'s message: its
    line, and where it spans lines the line it begins at and its text); return where
    the general path's reader finds none from there (the readers disagree: the caller
    reads the rows again from the first).

    Read with the general path's reader from the last block's start at or before
    ``row`` (:mod:`.stream_marks`), to the malformed record, since 2026-12-08: the table
    was read again from its first row, row by row, to the refused one, then scanned
    from its first row again (a quote at a row's start that never closes: twice the
    whole file). From the first row where no block's start is before ``row``."""
    import io
    import zlib

    from activetest.formats.tables import header_rows, rows_after_header

    s = t.scorer
    if s.format not in ("csv", "tsv"):
        return
    seen = _MARKS.get(t)
    mark = None if seen is None else seen.before(row)
    if mark is None:
        refuse_file_problems(t)  # (from the first row: the general path's own scan)
        return
    delimiter = "," if s.format == "csv" else "\t"
    try:
        with open_text(s.path, newline="") as f:  # (the header: the file's first record)
            header, _ = header_rows(f, str(s.path), delimiter)
        with open_pool_bytes(s.path, gzipped_table(s.path)) as raw:
            raw.seek(mark.offset)  # (past the first byte: no byte order mark there)
            with io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
                for _ in rows_after_header(text, header, str(s.path), delimiter,
                                           lines_before=mark.lines):
                    pass
    except (UnicodeError, OSError, EOFError, zlib.error):  # (checked before the stream)
        return
    except ValueError as exc:  # the general path's message of the record
        raise StreamRefusedError(str(exc)) from None


def _refuse_bad_row(t: Table, row: int | None,
                    streamed: tuple[int, Sequence[str | None]] | None = None) -> None:
    """Refuse the CSV, TSV or JSONL table ``t``'s row ``row`` (from 0; None: the first that
    the general path refuses, reading to the end), that the fast reader does not take,
    with the general path's message: its rows are read again one at a time, as the
    general path reads them (memory: one row). Where the general path refuses none of
    them, NotStreamable: it reads the table. ``streamed``: ``(k, ids)``, the ids the
    stream read of the rows ``k``, ``k + 1``, ... (None: one it refused); each such row
    read again with another id is a :class:`StreamMismatchError` naming the file, the
    row and both ids (since 2026-12-08: a table rewritten between the two readings, its
    rows reordered, was refused naming another row's line as the refused row's)."""
    read_again(t, row, refused=True, expect=streamed)
    raise NotStreamable("bad row")  # pragma: no cover - read_again raises


def read_again(t: Table, upto: int | None, *, first: int | None = None,
                repeated: str | None = None, refused: bool = False,
                expect: tuple[int, Sequence[str | None]] | None = None) -> str:
    """Read the CSV, TSV or JSONL table ``t``'s rows again, one at a time, with the general
    path's rules (:func:`activetest.models.table.stream_rows`), up to its row ``upto``
    (from 0; None: to the end). The first row refused there is refused with the general
    path's message (:class:`StreamRefusedError`); ``repeated``: row ``upto`` is refused
    as repeating row ``first``'s id ``repeated``. Returns row ``upto``'s name (``"line
    N"``); NotStreamable where ``refused`` and no row is refused. ``expect``: ``(k,
    ids)``, the ids of the rows ``k``, ``k + 1``, ... as the stream read them (None: one
    it refused; row ``upto`` among them: a row the table reader's rule refuses, to be
    named, :class:`_Lines`, or the rows of a block the fast reader refused,
    :func:`_refuse_bad_row`); each such row reached with another id, before its values
    are read, is a :class:`StreamMismatchError` naming the file, the row and both ids
    (the rows read again are not those streamed: a line named from them would be
    another row's), and so is row ``first`` or ``upto`` reached with another id than
    ``repeated`` (since 2026-12-08: the general path then read the table, rewritten
    between the two readings, as if nothing had changed)."""
    import zlib
    from array import array

    from activetest.formats.json_array import NotAStreamedArray, RepeatedKeyInArray
    from activetest.formats.tables import repeated_key
    from activetest.models.table import duplicate_message, row_values, stream_rows

    # From the block holding the row (or row ``first``, where that is earlier), since
    # 2026-12-07: a row's name is its line, which only the general path's reader tells
    # (a quoted CSV field may span lines, blank lines are passed over), so the fast
    # reader notes where each block of the text starts, counting the lines and rows in
    # its bytes (:mod:`.stream_marks`: a CSV text only while no quote character is met),
    # and the rows are read again from the last such start at or before the row (a
    # gzip stream gunzipped up to it, not parsed). A refusal near the end of a 1e7-1e8
    # row table read the whole table again, row by row. The rows before that start are
    # not checked again by the general path's rules: the fast reader took them, and
    # where it takes a row those rules refuse, a table without a refused row would be
    # taken by the stream and refused by the general path (a difference the stream
    # rests on not being, for every row). From the first row where the row is not
    # known (``upto`` None) or no block start is before it (a CSV text's quote before
    # the row: :mod:`.stream_marks` says why). A JSON array's blocks are marked by their
    # first record's character (since 2026-12-07; before, read from its first record).
    s = t.scorer
    mark = None
    if upto is not None and s.format in ("csv", "tsv", "jsonl", "json"):
        seen = _MARKS.get(t)
        mark = None if seen is None else seen.before(upto if first is None
                                                     else min(upto, first))
    first_where = None
    given = 0  # the rows read
    # refused, read from the first row: each row's id's hash, for a repeated id before
    # the row (from a block's start: the caller looked through the rows before the row
    # refused for one, TableRows._refuse_a_repeated_id)
    hashes: array[int] | None = array("q") if refused and mark is None else None
    try:
        for r, (where, item_id, row) in enumerate(stream_rows(
                s.path, s.format, columns=t.columns, id_column=s.id_column, mark=mark),
                start=0 if mark is None else mark.row):
            given = r + 1
            if hashes is not None:
                hashes.append(hash(item_id))
            if r == first and item_id == repeated:
                first_where = where
            if expect is not None:  # the row streamed here? (before its values: a row's
                # refusal from them would name another row's line)
                _same_row(t, expect, r, item_id, where, mark, upto)
            if repeated is not None and r in (first, upto) and item_id != repeated:
                # the repeated id streamed at both rows, now another: said, never a
                # general path reading a table rewritten between the two readings
                _same_row(t, (r, [repeated]), r, item_id, where, mark, upto)
            if r == upto and repeated is not None:
                if first_where is None:
                    break  # pragma: no cover - row first is read before row upto
                refuse_file_problems(t)
                raise StreamRefusedError(duplicate_message(s.path, where, item_id, first_where))
            row_values(row, s.path, where, t.columns)
            if r == upto:
                if refused:
                    break
                return where
    except StreamRefusedError:
        raise
    except RepeatedKeyInArray as exc:  # a JSON array's record met before any problem of
        # the text (or a record that is no object): the general path, parsing the whole
        # text first, meets it first too (the file's bytes are checked before the stream)
        raise StreamRefusedError(f"{s.path}: record {given}: {repeated_key(exc.key)}"
                                 ) from None
    except (UnicodeError, OSError, RecursionError, EOFError, zlib.error,
            NotAStreamedArray):  # the file's bytes, gzip stream or JSON text: the
        raise NotStreamable("read") from None  # general path names it (reading it whole)
    except ValueError as exc:  # a row (or the file) the general path refuses, so named,
        refuse_file_problems(t)  # unless the file has a problem named before any row
        if hashes is not None:  # or a row before it (or it) repeats an earlier row's id:
            # named first
            from activetest.models.table_stream import refuse_a_repeated_id

            try:  # (the block the fast reader refused, its rows unknown: QA, a repeated
                refuse_a_repeated_id(s.path, s.format, t.columns, s.id_column, hashes)
            except ValueError as dup:  # id then a value that is no number, the value named)
                raise StreamRefusedError(str(dup)) from None
        raise StreamRefusedError(str(exc)) from None
    raise NotStreamable("read again")


def _same_row(t: Table, expect: tuple[int, Sequence[str | None]], r: int, item_id: str,
              where: str, mark: Any, upto: int | None) -> None:
    """Check the row ``r`` (from 0) of the table ``t`` read again by :func:`read_again`
    (from ``mark``: a block's start, :class:`~activetest.models.table_read.RowMark`, or
    None: the first row), its id ``item_id`` at ``where``, against the stream's ids of the
    rows ``expect`` (``(k, ids)``: of the rows ``k``, ``k + 1``, ...; a row outside them,
    or whose id is None, one the stream refused, passes; ``upto``: the row to name, None
    where the stream did not say which).

    Raises:
        StreamMismatchError: the stream read another id there, naming the file, the row
            and both ids (no line is named for row ``upto``: it would be another row's):
            the file changed while ``init`` read it where its state
            (:func:`_file_state`) is not the one it had when the stream began reading
            it, else an internal error.
    """
    k, ids = expect
    if not 0 <= r - k < len(ids) or ids[r - k] is None or item_id == ids[r - k]:
        return
    path = t.scorer.path
    if t in _READ_AS and _READ_AS[t] != _file_state(path):
        raise StreamMismatchError(
            f"{path} changed while init read it: row {r + 1} of the table (from 1) had id "
            f"{ids[r - k]!r} when it was read, but has {item_id!r} ({where}) now; no "
            f"session was written: run init again once the file is written")
    start = ("its first row" if mark is None else
             f"row {mark.row + 1} (a block's start: byte {mark.offset}, line {mark.lines + 1})")
    raise StreamMismatchError(
        f"internal error: {path}: row {r + 1} of the table (from 1) has id {ids[r - k]!r} "
        f"as streamed, but {item_id!r} ({where}) read again from {start}: no line is named "
        f"for {'the row refused' if upto is None else f'row {upto + 1}'} (the two readers "
        f"disagree; please report this)")


def _file_state(p: Path) -> tuple[int, int, int] | None:
    """``(size, mtime_ns, inode)`` of the file ``p``; None where it cannot be read."""
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


#: Each table's file state (:func:`_file_state`) when the stream began reading it: a row
#: read again with another id than streamed is said as the file changed where the state
#: is another now (:func:`_same_row`).
_READ_AS: weakref.WeakKeyDictionary[Table, tuple[int, int, int] | None] = (
    weakref.WeakKeyDictionary())


def refuse_file_problems(t: Table) -> None:
    """Refuse the CSV, TSV, JSONL or JSON table ``t`` (gzipped or not) for a problem the
    general path names before any row's, as it names it (:class:`StreamRefusedError`):
    text that is not UTF-8, a NUL, a malformed row or line anywhere in the file (a JSON
    array's text), a column no row has (:func:`activetest.models.table_stream.
    refuse_file_problems`: the rows read one at a time; a broken gzip stream or JSON
    text named by reading the file whole, as the general path does). Called before a
    row is refused: a row's problem found while streaming was named where the general
    path names a malformed line after it (QA)."""
    from activetest.models.table_stream import refuse_file_problems as scan

    if t in _CLEAN:  # read once: the file is the same for the whole init
        return
    s = t.scorer
    try:
        scan(s.path, s.format, t.columns, s.id_column)
    except ValueError as exc:
        raise StreamRefusedError(str(exc)) from None
    _CLEAN.add(t)


#: Where each table's blocks start, noted as the fast reader reads it (:func:`_marks`),
#: for :func:`read_again`.
_MARKS: weakref.WeakKeyDictionary[Table, Marks] = weakref.WeakKeyDictionary()


def _marks(t: Table) -> Marks:
    """The :class:`~.stream_marks.Marks` of the table ``t`` (made where none are yet)."""
    got = _MARKS.get(t)
    if got is None:
        got = _MARKS[t] = Marks()
    return got


#: The tables :func:`refuse_file_problems` read and found no such problem in: each is
#: read so once per ``init`` (each ``init`` has its own :class:`Table`, by its scorer), not
#: once per late refusal of it (a table of probabilities has up to three, one per check
#: of the rule, each replacing the one before; it was read whole for each, 2026-12-07).
_CLEAN: weakref.WeakSet[Table] = weakref.WeakSet()


def converted_rows(values: np.ndarray, ids: np.ndarray, t: Table, start: int) -> np.ndarray:
    """The table's values (its rows ``start``, ``start + 1``, ...; ``ids``: theirs, as
    streamed) as log-probs (the table reader's rule). A row the rule refuses is refused
    here with the general path's message (which reads the whole table into memory to say
    it; a CSV, TSV or JSONL row's line found by reading the table's rows again, checked
    there by its id) as a
    :class:`~activetest.session.stream_base.LateRefusalError` (the general path names a
    later row's bad value or repeated id first, and a later row refused by a check the
    rule makes before, its rank: the caller reads on), unless the message
    depends on the whole table (whether every row looks like probabilities:
    NotStreamable, the general path decides)."""
    from activetest.models.table import looks_like_probs, to_log_softmax_rows

    named = not (t.scorer.kind != "probs" and looks_like_probs(values, t.scorer.tolerance))
    where: Sequence[str] = _NoWhere()
    if named:
        where = (_RowNames(start) if t.scorer.format == "parquet"
                 else _Lines(t, start, ids))
    try:
        return to_log_softmax_rows(values, t.scorer.kind, t.scorer.tolerance, t.scorer.path,
                                   where)
    except IndexError:
        raise NotStreamable("values") from None
    except ValueError as exc:
        if named:
            if t.scorer.format != "parquet":  # a malformed line after it: named first
                refuse_file_problems(t)
            raise LateRefusalError(str(exc), getattr(exc, "rank", 0)) from None  # (a
            # later row's problem first; a later block's row of a check made before)
        raise NotStreamable("values") from None


class _RowNames(Sequence[str]):
    """A Parquet table's rows as the general path names them (``row k``, from 1), for
    the rows from ``start`` on."""

    def __init__(self, start: int) -> None:
        self.start = start

    def __len__(self) -> int:
        return 0  # indexed only

    def __getitem__(self, i: Any) -> Any:
        return f"row {self.start + int(i) + 1}"


class _Lines(Sequence[str]):
    """A CSV, TSV or JSONL table's rows from ``start`` on (``ids``: theirs, as streamed)
    as the general path names them (``line N``), found when asked (a row refused) by
    reading the table's rows again; the row reached there checked by its id
    (:func:`read_again`'s ``expect``, each row of ``ids`` reached: another id is an
    internal error, never a wrong line named)."""

    def __init__(self, t: Table, start: int, ids: np.ndarray) -> None:
        self.t = t
        self.start = start
        self.ids = ids

    def __len__(self) -> int:
        return 0  # indexed only

    def __getitem__(self, i: Any) -> Any:
        # (at once, though a later row's problem may replace this refusal: the message
        # is made by the general path's rule, to_log_softmax_rows, which names the row
        # as it raises; a name found only when said would need that rule to give its
        # parts, not its words. A table has at most one such refusal per check of the
        # rule: one for log-probs and logits, three for probabilities.)
        return read_again(self.t, self.start + int(i), expect=(self.start, self.ids))


class _NoWhere(Sequence[str]):
    """Row names for messages: the general path names them (never reached)."""

    def __len__(self) -> int:
        return 0

    def __getitem__(self, i: Any) -> Any:
        raise NotStreamable("values")

