"""The pool file of a streamed ``init``, in blocks: read with the general path's rules and
named as it names them; a block with a record the general path refuses is read again one
record at a time to refuse it with the general path's message (part of
:mod:`activetest.session.stream_init`)."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from activetest.data.task import Task
from activetest.session import stream_base
from activetest.session.stream_base import (
    PARQUET_READ,
    NotStreamable,
    StreamRefusedPoolError,
)

__all__ = ["BadRecord", "clean_text", "gzipped_pool", "open_pool_bytes", "pool_records",
           "pool_size", "refuse_pool_block", "refuse_record", "whole_json_array"]


def gzipped_pool(p: Path) -> bool:
    """Whether the pool file ``p`` is gunzipped as it is read: its name ends in ``.gz``, the
    general path's rule (:func:`activetest.formats.tables.read_bytes`)."""
    return p.name.lower().endswith(".gz")


def open_pool_bytes(p: Path, gz: bool | None = None) -> IO[bytes]:
    """The bytes of the file ``p``, gunzipped as they are read where ``gz`` (None: where
    the pool's rule says, :func:`gzipped_pool`). A broken gzip stream raises OSError,
    EOFError or zlib.error as it is read."""
    if gz if gz is not None else gzipped_pool(p):
        return gzip.open(p, "rb")  # type: ignore[return-value]
    return p.open("rb")


def _open_pool_text(p: Path, fmt: str) -> IO[str]:
    return io.TextIOWrapper(open_pool_bytes(p), encoding="utf-8-sig", newline=_NEWLINE[fmt])


def pool_records(p: Path, fmt: str) -> Iterator[list[tuple[str, Mapping[str, Any]]]]:
    """Blocks of ``(where, record)`` of the pool file, read with the general path's
    rules and named as it names them (:func:`activetest.data.pool.load_pool`). A record
    the reader refuses (a CSV row of another width, a line that is not a JSON object)
    raises its :class:`PoolFormatError` after the block of the records before it (which
    the general path reads first); a NUL character or a byte that is not UTF-8, which
    the general path refuses reading the file whole before any record, NotStreamable."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(p, **PARQUET_READ)
        n = 0
        for batch in pf.iter_batches(batch_size=stream_base.BLOCK, use_threads=False):
            rows = batch.to_pylist()
            yield [(f"row {n + i + 1}", r) for i, r in enumerate(rows)]  # from 1
            n += len(rows)
        return
    with _open_pool_text(p, fmt) as f:  # (a .gz pool gunzipped as it is read)
        block: list[tuple[str, Mapping[str, Any]]] = []
        try:
            for record in (_json_records(f) if fmt == "json"
                           else _text_records(_no_nul(f), str(p), fmt)):
                block.append(record)
                if len(block) >= stream_base.BLOCK:
                    yield block
                    block = []
        except UnicodeError:  # (a ValueError) the general path names it
            raise NotStreamable("encoding") from None
        except (OSError, EOFError, zlib.error):  # a broken gzip stream: the general
            raise NotStreamable("gzip") from None  # path names it (reading it whole)
        except ValueError as exc:  # the reader's message: after the records before it
            if block:
                yield block
            raise BadRecord(str(exc)) from None
        if block:
            yield block


#: How a text pool's lines end, as the general path splits its text: CSV as the csv
#: module reads it; TSV and JSONL on ``\n`` only (:func:`activetest.formats.tables.
#: split_lines`).
_NEWLINE = {"csv": "", "tsv": "\n", "jsonl": "\n", "json": ""}


def _json_records(f: IO[str]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The records of a JSON-array pool (``record i``, from 0, as the general path names
    them), one at a time (:func:`activetest.formats.json_array.iter_json_array`, an
    object that repeats a key refused as the pool reader refuses it). Text that is no
    such array (malformed anywhere, a record that is no object, a NUL character, text
    after the array): NotStreamable where met, the general path names it (reading the
    text whole, as its message gives the whole document's line and column)."""
    from activetest.formats.json_array import NotAStreamedArray, iter_json_array

    try:
        yield from iter_json_array(f)
    except NotAStreamedArray:
        raise NotStreamable("json") from None


def whole_json_array(p: Path) -> bool:
    """Whether the JSON-array pool ``p`` (gunzipped as read where its name says) is a
    whole array of objects, read one record at a time: where it is not, the general path
    names that before any record's problem (it parses the whole text first). Memory: a
    record and a window of the text."""
    try:
        with _open_pool_text(p, "json") as f:
            for _ in _json_records(f):
                pass
    except (NotStreamable, UnicodeError, OSError, EOFError, zlib.error):
        return False
    return True


def _text_records(f: Any, source: str, fmt: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The records of the text pool file ``f`` (opened with :data:`_NEWLINE`), one at a
    time, with the general path's reader (:func:`activetest.formats.tables.parse_bytes`)."""
    from activetest.formats.tables import (
        file_lines,
        read_csv_lines,
        read_jsonl_lines,
        read_tsv_lines,
    )

    if fmt == "csv":
        return read_csv_lines(f, source)
    if fmt == "tsv":
        return read_tsv_lines(file_lines(f), source)
    return read_jsonl_lines(file_lines(f), source)


def _no_nul(lines: Iterator[str]) -> Iterator[str]:
    """``lines``; NotStreamable at a NUL character (the general path refuses the file,
    naming the first NUL's line, before reading any record: reading the bytes only)."""
    for line in lines:
        if "\x00" in line:
            raise NotStreamable("NUL")
        yield line


class BadRecord(NotStreamable):
    """A text pool's record its reader refuses (a row of another width, a line that is
    not a JSON object, a malformed header); ``args[0]``: the reader's message."""


def clean_text(p: Path, gz: bool | None = None) -> bool:
    """Whether the text pool ``p`` has no NUL character and no byte that is not UTF-8
    (and, gzipped, is a whole gzip stream): the problems the general path names first,
    reading the file whole (so the stream, having found a bad record, names it only where
    the file has none; where it has one, the general path names it, reading only the
    file's bytes). ``gz``: whether ``p`` is gunzipped as read (None: the pool's rule,
    :func:`gzipped_pool`). Memory: 16 MiB."""
    import codecs

    dec = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        with open_pool_bytes(p, gz) as f:
            for data in iter(lambda: f.read(16 << 20), b""):
                if b"\x00" in data:
                    return False
                dec.decode(data)
        dec.decode(b"", final=True)
    except (UnicodeError, OSError, EOFError, zlib.error):
        return False
    return True



def refuse_record(p: Path, fmt: str, message: str) -> NoReturn:
    """Refuse the text pool ``p``'s record its reader refused (``message``), as the
    general path refuses it, unless the file has a problem the general path names
    first (:func:`clean_text`: NotStreamable)."""
    if not clean_text(p):
        raise NotStreamable("text")
    raise StreamRefusedPoolError(message)


def refuse_pool_block(conn: Any, p: Path, fmt: str, block: Sequence[tuple[str, Any]], n: int,
                       keys: list[str], by_row: bool, task: Task,
                       opts: Mapping[str, Any]) -> NoReturn:
    """Refuse the first record of ``block`` (the pool's records ``n``, ``n + 1``, ...)
    the general path refuses, with its message: its records turned into items one at a
    time, with :func:`activetest.data.pool.records_to_items`'s rules, in the general
    path's order (a record that repeats an id of an earlier block is named by the
    earlier record's place: row, or line found by reading the pool again; the items of
    the earlier blocks are in the session file: memory is one block). NotStreamable
    where the file has a problem the general path names first, or no record is refused."""
    from activetest.data.pool import duplicate_id_message, records_to_items

    if fmt != "parquet" and not clean_text(p):
        raise NotStreamable("text")
    if fmt == "json" and not whole_json_array(p):  # named first by the general path
        raise NotStreamable("json")
    seen: dict[str, str] = {}
    for j, (where, record) in enumerate(block):
        try:
            [item] = records_to_items(
                [(where, record)], str(p), task=task, text_column=opts.get("text_column"),
                label_column=opts.get("label_column"), id_column=opts.get("id_column"),
                label_base=opts.get("label_base"), keys=keys,
                ids=[str(n + j)] if by_row else None)
        except ValueError as exc:
            raise StreamRefusedPoolError(str(exc)) from None
        first = seen.get(item.id)
        if first is None:
            row = conn.execute("SELECT idx FROM items WHERE item_id = ? AND idx < ?",
                               (item.id, n)).fetchone()
            if row is not None:
                first = _record_where(p, fmt, int(row[0]))
        if first is not None:
            raise StreamRefusedPoolError(duplicate_id_message(str(p), where, item.id, first))
        seen[item.id] = where
    raise NotStreamable("pool")


def _record_where(p: Path, fmt: str, k: int) -> str:
    """Where the general path says the pool's ``k``-th record (from 0) is: ``row k + 1``
    of a Parquet pool (rows counted from 1, as a table's), a text pool's ``line N``
    found by reading its records again."""
    if fmt == "parquet":
        return f"row {k + 1}"
    if fmt == "json":
        return f"record {k}"
    with _open_pool_text(p, fmt) as f:
        for i, (where, _) in enumerate(_text_records(f, str(p), fmt)):
            if i == k:
                return where
    raise NotStreamable("pool")  # pragma: no cover - the record was read before


def pool_size(p: Path, fmt: str) -> int | None:
    """The pool's records, where the file says (Parquet), else None."""
    if fmt != "parquet":
        return None
    import pyarrow.parquet as pq

    try:
        return int(pq.ParquetFile(p).metadata.num_rows)
    except Exception:  # pyarrow raises many types: the general path names the file (QA)
        raise NotStreamable("read") from None

