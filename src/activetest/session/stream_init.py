"""``init`` in chunks: a pool file and ``table:`` predictions streamed into the session.

The general path (:func:`activetest.session.create.create_session`) reads the whole
pool as Python objects and each prediction table whole (2.5 GB and 62 CPU-s per
million items). When a session is made of files alone -- a CSV, TSV, JSONL or Parquet
pool, and ``table:`` predictions in CSV, TSV, JSONL or Parquet for both models, no
in-context examples (predictions made elsewhere do not use them) -- :func:`try_stream`
reads the pool in blocks of :data:`BLOCK` records and writes each block's items into
the new file at once, and reads the tables in blocks with pyarrow (vectorised, no
Python object per number), joining them to the pool block by block. Memory is then
the model outputs as numpy arrays (``N x C`` float64 per model) plus one block.

A table that lists exactly the pool's items in the pool's order (as a scoring job that
reads the pool writes them) is joined block by block as the pool is read, a Parquet
table's ``content_check`` column (where it has one) confirming each row's item. A table
in another order, with fewer rows or with rows of items the pool does not have is joined
by id once the pool is written (:func:`_join_by_id`: a second pass over the table, each
block's ids looked up in the session file's items). Anything else -- a pool numbered by
its rows (no id column) with such a table, a value the fast reader does not take, a
malformed file -- falls back to the general path, which joins by id in memory and names
the file, line and column of any problem. So the streaming path never changes what a
session holds or which input is refused; it only changes what a good input costs. A
problem it can name exactly as the general path names it (a table's value that is not
a finite number, an empty or missing id, a row that does not normalise, a row repeating
an earlier row's id, a content check for other content, a pool's record the pool reader
refuses or whose id an earlier record has) is refused here with that message
(:class:`StreamRefusedError`), not by reading everything into memory to say the same. A
CSV, TSV or JSONL table's rows are named by their lines, which pyarrow does not tell: the
stream finds the line by reading the table's rows again, one at a time, with the general
path's rules (:func:`_read_again`), and where those rules refuse no row, falls back. A
text pool is read with the general path's own reader, one line at a time, so its records
have their lines; a block with a bad record is read again one record at a time
(:func:`_refuse_pool_block`), an id repeated from an earlier block found in the session
file. The pool is read and its block written before the tables' rows for it are joined,
as the general path reads the whole pool first.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from activetest.data.task import Item, Task
from activetest.formats.tables import PoolFormatError

__all__ = ["BLOCK", "NotStreamable", "PoolSize", "StreamRefusedError", "StreamRefusedPoolError",
           "try_stream"]

#: Records per block (pool and tables).
BLOCK = 16_384

#: How Parquet files are read: in 1 MiB reads, without pre-buffering (which keeps
#: every column chunk read so far: ~30 bytes per item of a prediction table, 3 GB at
#: 1e8 items, measured with pyarrow 26).
_PARQUET_READ = {"memory_map": False, "pre_buffer": False, "buffer_size": 1 << 20}

_POOL_FORMATS = ("csv", "tsv", "jsonl", "parquet")
_TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet")
_POOL_OPTIONS = {"id_column", "text_column", "label_column", "format", "encoding",
                 "label_base"}


class NotStreamable(Exception):  # noqa: N818 - a signal, not an error
    """This input takes the general path (internal: never reaches a user)."""


class StreamRefusedError(ValueError):
    """An input refused while streaming, with the general path's message: a problem it
    can name exactly (a table's row with a value that is not a finite number or not
    normalised, an empty or missing id, or an earlier row's id; a pool record the pool
    reader refuses or whose id an earlier record has, a content check that does not
    match),
    where falling back would read the whole pool and tables into memory only to say the
    same (about 1.8 GB per million items: killed for memory from ~1e7 items)."""


class StreamRefusedPoolError(StreamRefusedError, PoolFormatError):
    """A pool's record refused while streaming: the general path's
    :class:`~activetest.formats.tables.PoolFormatError`, with its message."""


@dataclasses.dataclass(frozen=True)
class _Table:
    spec: str  # as stored
    raw: str  # as given
    scorer: Any  # the TableScorer (settings, identity, provenance)
    columns: tuple[str, ...]


def _table(raw: Any, task: Task) -> _Table | None:
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
    if scorer.path.name.lower().endswith(".gz"):
        return None
    cols = scorer.columns if scorer.columns is not None else tuple(task.classes)
    if len(cols) != task.n_classes:
        return None
    if scorer.format != "parquet" and not _clean_table(scorer.path, scorer.format):
        return None
    return _Table(stored_spec(raw), raw, scorer, tuple(cols))


def _clean_table(p: Path, fmt: str) -> bool:
    """Whether the CSV, TSV or JSONL table ``p`` has none of the problems the general path
    refuses it for before any row, which the fast reader does not see outside the columns
    it reads: a NUL character or a byte that is not UTF-8 anywhere in the file, a header
    that names a column twice (QA: such tables were accepted). Where it has one, the
    general path names it (reading the file's bytes, or its header)."""
    if not _clean_text(p):
        return False
    if fmt == "jsonl":
        return True
    from activetest.formats.tables import header_rows

    try:
        with p.open(encoding="utf-8-sig", newline="") as f:
            header_rows(f, str(p), "," if fmt == "csv" else "\t")
    except (ValueError, OSError):
        return False
    return True


# ------------------------------------------------------------------------ pool blocks


def _pool_records(p: Path, fmt: str) -> Iterator[list[tuple[str, Mapping[str, Any]]]]:
    """Blocks of ``(where, record)`` of the pool file, read with the general path's
    rules and named as it names them (:func:`activetest.data.pool.load_pool`). A record
    the reader refuses (a CSV row of another width, a line that is not a JSON object)
    raises its :class:`PoolFormatError` after the block of the records before it (which
    the general path reads first); a NUL character or a byte that is not UTF-8, which
    the general path refuses reading the file whole before any record, NotStreamable."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(p, **_PARQUET_READ)
        n = 0
        for batch in pf.iter_batches(batch_size=BLOCK, use_threads=False):
            rows = batch.to_pylist()
            yield [(f"row {n + i}", r) for i, r in enumerate(rows)]
            n += len(rows)
        return
    with p.open(encoding="utf-8-sig", newline=_NEWLINE[fmt]) as f:
        block: list[tuple[str, Mapping[str, Any]]] = []
        try:
            for record in _text_records(_no_nul(f), str(p), fmt):
                block.append(record)
                if len(block) >= BLOCK:
                    yield block
                    block = []
        except UnicodeError:  # (a ValueError) the general path names it
            raise NotStreamable("encoding") from None
        except ValueError as exc:  # the reader's message: after the records before it
            if block:
                yield block
            raise _BadRecord(str(exc)) from None
        if block:
            yield block


#: How a text pool's lines end, as the general path splits its text: CSV as the csv
#: module reads it; TSV and JSONL on ``\n`` only (:func:`activetest.formats.tables.
#: split_lines`).
_NEWLINE = {"csv": "", "tsv": "\n", "jsonl": "\n"}


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


class _BadRecord(NotStreamable):
    """A text pool's record its reader refuses (a row of another width, a line that is
    not a JSON object, a malformed header); ``args[0]``: the reader's message."""


def _clean_text(p: Path) -> bool:
    """Whether the text pool ``p`` has no NUL character and no byte that is not UTF-8:
    the problems the general path names first, reading the file whole (so the stream,
    having found a bad record, names it only where the file has none; where it has one,
    the general path names it, reading only the file's bytes). Memory: 16 MiB."""
    import codecs

    dec = codecs.getincrementaldecoder("utf-8-sig")()
    try:
        with p.open("rb") as f:
            for data in iter(lambda: f.read(16 << 20), b""):
                if b"\x00" in data:
                    return False
                dec.decode(data)
        dec.decode(b"", final=True)
    except UnicodeError:
        return False
    return True


# ------------------------------------------------------------------------ table blocks


def _table_blocks(t: _Table) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
    """Blocks of ``(ids as str objects, (m, C) float64 values, content checks)`` of a
    prediction table; the checks (str objects) where a Parquet table has the
    ``content_check`` column (a scoring job's table: the join confirms each item's
    content by it, as the table reader does), else None."""
    import pyarrow as pa

    from activetest.formats.label_records import CHECK_COLUMN

    s = t.scorer
    want = [s.id_column, *t.columns]
    checked = False
    if s.format == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(s.path, **_PARQUET_READ)
        if any(c not in pf.schema_arrow.names for c in want):
            raise NotStreamable("columns")
        checked = CHECK_COLUMN in pf.schema_arrow.names
        batches: Any = pf.iter_batches(batch_size=BLOCK,
                                       columns=want + [CHECK_COLUMN] * checked,
                                       use_threads=False)
    elif s.format in ("csv", "tsv"):  # TSV: quoted as CSV, as the table reader reads it
        import pyarrow.csv as pcsv

        types = {s.id_column: pa.string(), **{c: pa.float64() for c in t.columns}}
        # small blocks, one thread, the system allocator: memory stays a few blocks
        batches = pcsv.open_csv(
            s.path, read_options=pcsv.ReadOptions(block_size=1 << 20, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter="\t" if s.format == "tsv" else ","),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=want,
                                                strings_can_be_null=False,
                                                quoted_strings_can_be_null=False),
            memory_pool=pa.system_memory_pool())
    else:
        batches = _jsonl_batches(s.path, want)
    start = 0  # the table's rows before this batch
    for batch in batches:
        checks = None
        if checked:
            col = batch.column(len(want))
            if col.null_count or not pa.types.is_string(col.type):
                raise NotStreamable("content check")  # the general path names the row
            checks = np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)
        ids = _ids(batch.column(want.index(s.id_column)), t, start)
        yield ids, _values(batch, want[1:], t, start), checks
        start += batch.num_rows


def _jsonl_batches(path: Path, want: list[str]) -> Iterator[Any]:
    import io

    import pyarrow.json as pjson

    with path.open("rb") as f:
        rest = b""
        while True:
            data = f.read(16 << 20)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            block, rest = data[:cut], data[cut:]
            if block.strip():
                yield pjson.read_json(io.BytesIO(block)).select(want)
        if rest.strip():
            yield pjson.read_json(io.BytesIO(rest)).select(want)


class _BadRow(NotStreamable):
    """A row of a CSV, TSV or JSONL table the fast reader does not take (``row``: its number
    in the table from 0; None where the reader does not say which): the general path's
    rules decide, reading the table's rows again (:func:`_refuse_bad_row`)."""

    def __init__(self, row: int | None) -> None:
        super().__init__("bad row")
        self.row = row


def _bad(t: _Table, what: str, first: Any = None, start: int = 0) -> NotStreamable:
    """NotStreamable for a Parquet table (the general path names its row), a
    :class:`_BadRow` for a CSV, TSV or JSONL table: at ``start`` plus the first true index of
    the boolean array ``first``, or of no row known (None)."""
    if t.scorer.format == "parquet":
        return NotStreamable(what)
    if first is None:
        return _BadRow(None)
    return _BadRow(start + int(np.flatnonzero(np.asarray(first, dtype=bool))[0]))


def _ids(col: Any, t: _Table, start: int) -> np.ndarray:
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


def _values(batch: Any, cols: Sequence[str], t: _Table, start: int) -> np.ndarray:
    """The batch's class columns as ``(m, C)`` float64; a value that is not finite in a
    Parquet table (whose rows the general path names by their position: ``row k`` for
    the k-th) is refused here with the general path's message; a value the fast reader
    does not take in a CSV, TSV or JSONL table: :class:`_BadRow` (the general path's rules
    name its line)."""
    import pyarrow as pa

    out = np.empty((batch.num_rows, len(cols)), dtype=np.float64)
    for j in range(len(cols)):
        col = batch.column(j + 1)
        if col.null_count:  # an empty cell, a JSON null or missing key
            raise _bad(t, "value type", col.is_null().to_numpy(zero_copy_only=False), start)
        if not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
            raise _bad(t, "value type")  # a JSON table's string or true: which row?
        out[:, j] = col.to_numpy(zero_copy_only=False)
    finite = np.isfinite(out)
    if not finite.all():
        if t.scorer.format != "parquet":  # lines: the general path's rules name them
            raise _BadRow(start + int(np.flatnonzero(~finite.all(axis=1))[0]))
        i = int(np.flatnonzero(~finite.all(axis=1))[0])  # the first row, its first column
        j = int(np.flatnonzero(~finite[i])[0])
        # refused here, not by the general path, which would read the whole table into
        # memory to say it (1.8 GB per million items: killed for memory at 1e7-1e8)
        raise StreamRefusedError(f"{t.scorer.path}: row {start + i + 1}: column {cols[j]!r}: "
                                 f"value {float(out[i, j])!r:.60} is not finite (NaN/inf are "
                                 f"not allowed)")
    return out


class _TableEnds(NotStreamable):
    """A table with fewer rows than the pool (it is then joined by id: some pool items
    may have no row, which the join names)."""


class _Rows:
    """Exactly ``m`` rows at a time from a stream of blocks of the table ``table``."""

    def __init__(self, blocks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
                 table: _Table) -> None:
        self.blocks = blocks
        self.table = table
        self.ids: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.checks: list[np.ndarray | None] = []
        self.held = 0

    def _read(self) -> bool:
        """Read the next block; False at the end of the table. A CSV, TSV or JSONL row the
        fast reader does not take is refused with the general path's message, where
        the general path refuses it (else NotStreamable: it reads the table)."""
        import csv

        try:
            nxt = next(self.blocks, None)
        except StreamRefusedError:
            raise
        except _BadRow as exc:
            _refuse_bad_row(self.table, exc.row)
        except (*_READ_ERRORS, csv.Error):  # e.g. a value pyarrow cannot convert
            if self.table.scorer.format != "parquet":
                _refuse_bad_row(self.table, None)
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
                raise _TableEnds("table ends before the pool")
        ids = np.concatenate(self.ids) if len(self.ids) > 1 else self.ids[0]
        vals = np.concatenate(self.vals) if len(self.vals) > 1 else self.vals[0]
        checks = None
        if self.checks[0] is not None:  # a file has the column in every block or none
            checks = (np.concatenate(self.checks) if len(self.checks) > 1  # type: ignore[arg-type]
                      else self.checks[0])
        self.ids, self.vals = [ids[m:]], [vals[m:]]
        self.checks = [None if checks is None else checks[m:]]
        self.held = len(ids) - m
        return ids[:m], vals[:m], None if checks is None else checks[:m]

    def each(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        """Every block of the table, from its first row (none taken before)."""
        while self._read():
            block = self.ids.pop(), self.vals.pop(), self.checks.pop()
            self.held = 0
            yield block

    def next_id(self) -> str | None:
        """The id of the first row left after those taken; None where none is."""
        while self.held == 0:
            if not self._read():
                return None
        return str(next(a for a in self.ids if len(a))[0])


# ------------------------------------------------------------------------ the session


def try_stream(path: Path, *, pool: Any, task: Task, surrogate: Any, target: Any,
               examples: Any, shots: int | None, target_shots: int | None,
               pool_options: Mapping[str, Any] | None, config_of: Any, options: Any,
               compare: Sequence[Any] = (), progress: bool = False) -> Any:
    """Create the session at ``path`` by streaming, or return None when this input
    takes the general path (see the module docstring).

    ``config_of(pool_info, specs, raw_specs)`` builds the session's config (the pool's
    ``n_items`` is set here); ``options`` carries ``overwrite`` and ``busy_timeout``.
    ``compare``: the models compared at creation (``init --compare``), streamed like the
    target when each is a ``table:`` in the pool's order (stored as ``compare:<spec>``,
    named in the config; the ``compare`` acquisition's scores from them); anything else,
    or one that is the target, takes the general path (which names the problem).
    ``progress``: a bar of the pool's items read and written (its total from a Parquet
    pool's metadata; a count for CSV, TSV and JSONL).
    Returns ``(store, N, pool_info, specs, raw_specs)``.
    """
    from activetest.data.generative import GenTask

    opts = dict(pool_options or {})
    if (isinstance(task, GenTask) or examples is not None or shots or target_shots
            or not isinstance(pool, (str, os.PathLike)) or set(opts) - _POOL_OPTIONS
            or str(opts.get("encoding") or "utf-8").lower().replace("_", "-")
            not in ("utf-8", "utf8")):
        return None
    p = Path(pool)
    if not p.is_file() or p.name.lower().endswith(".gz"):
        return None
    from activetest.data.pool import detect_format, is_lmeval_source

    try:
        fmt = (opts.get("format") or detect_format(p)).lower()
    except ValueError:
        return None
    if fmt not in _POOL_FORMATS or is_lmeval_source(p, opts.get("format")):
        return None
    sur = _table(surrogate, task)
    tgt = _table(target, task)
    if sur is None or tgt is None:
        return None
    cmp: list[_Table] = []
    for raw in compare:
        t = _table(raw, task)
        if t is None or t.spec == tgt.spec:
            return None
        if t.spec not in [c.spec for c in cmp]:
            cmp.append(t)
    try:
        return _stream(path, p, fmt, task, sur, tgt, opts, config_of, options, cmp, progress)
    except NotStreamable as exc:
        _refuse_a_join_too_big_for_memory(exc)
        return None


#: What the general path holds per pool item, at least (the pool's records and each
#: table's rows as Python objects; measured 1.6-1.8 KB with short texts at 1e6-3e6).
GENERAL_PATH_BYTES_PER_ITEM = 1_000


def available_memory() -> int | None:
    """The bytes of memory this machine has available now (``MemAvailable``), or None
    where that cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _refuse_a_join_too_big_for_memory(exc: NotStreamable) -> None:
    """A table that is not in the order of a pool numbered by its rows (no id column:
    the stream joins no such table by id) takes the general path, which joins in memory;
    refuse it, naming the row, where that needs more memory than there is (else the
    process is killed for memory, after minutes, with no message)."""
    if len(exc.args) < 3 or exc.args[0] != "order":
        return
    where, n_items = exc.args[1], int(exc.args[2])
    need = n_items * GENERAL_PATH_BYTES_PER_ITEM
    free = available_memory()
    if free is None or need <= free:
        return
    raise StreamRefusedError(
        f"{where}: the table is not in the pool's order, and joining it by id in memory "
        f"needs at least {need / 1e9:.1f} GB for {n_items} items, more than the "
        f"{free / 1e9:.1f} GB available; write the table with one row per pool item in "
        f"the pool's order (as `activetest score` writes it), which `init` streams in "
        f"blocks (docs/pool-scale.md)")


def _stream(path: Path, p: Path, fmt: str, task: Task, sur: _Table, tgt: _Table,
            opts: dict[str, Any], config_of: Any, options: Any,
            cmp: Sequence[_Table] = (), progress: bool = False) -> Any:
    from activetest.data.pool import column_plan, records_to_items
    from activetest.formats.label_records import content_check
    from activetest.session.design import initial_scores
    from activetest.session.store import SessionStore, now
    from activetest.stats import ActiveSampler

    digest = hashlib.sha256()
    with p.open("rb") as f:
        for data in iter(lambda: f.read(16 << 20), b""):
            digest.update(data)
    info = {"source": str(p.resolve()), "format": fmt, "sha256": digest.hexdigest()}
    specs = {"surrogate": sur.spec, "target": tgt.spec}
    raw_specs = {sur.spec: sur.raw, tgt.spec: tgt.raw, **{c.spec: c.raw for c in cmp}}
    config0 = config_of(info, specs, raw_specs)
    if cmp:
        config0 = dataclasses.replace(config0, compare=tuple(c.spec for c in cmp))
    need_target = config0.needs_target
    got: dict[str, Any] = {}

    sources = [sur, *([tgt] if need_target else []), *cmp]

    def write_items(conn: Any) -> None:
        from activetest.models import progress_bar

        size = _pool_size(p, fmt)
        with progress_bar(size, "reading the pool", progress) as advance:
            parts, by_id = write_blocks(conn, size, advance)
        n = got["n"]
        for k in by_id:  # the tables in another order: joined by id, a second pass
            with progress_bar(None, f"joining {sources[k].scorer.path.name} by id",
                              progress) as advance:
                parts[k] = _join_by_id(conn, sources[k], n, task.n_classes, advance)
        got["lp"] = [part.array() if isinstance(part, _Parts) else part for part in parts]

    def write_blocks(conn: Any, size: int | None, advance: Any
                     ) -> tuple[list[Any], list[int]]:
        """Write the pool's items; read each table in the pool's order alongside. A table
        found in another order (or shorter) is left for :func:`_join_by_id`: returns
        ``(the tables' parts, which tables to join by id)``."""
        tables = [_Rows(_table_blocks(t), t) for t in sources]
        parts: list[Any] = [_Parts(size, task.n_classes) for _ in tables]
        by_id: list[int] = []
        n = 0
        keys: list[str] | None = None
        by_row = False
        pool = _guarded(_pool_records(p, fmt))
        while True:
            try:
                block = next(pool, None)
            except _BadRecord as exc:  # the records before it were read (and good)
                _refuse_record(p, fmt, str(exc))
            if block is None:
                break
            if keys is None:  # the first record's, for every block (the general path's)
                keys = list(block[0][1])
                plan = column_plan(keys, task, opts.get("text_column"),
                                   opts.get("label_column"), opts.get("id_column"), None)
                by_row = plan.id is None  # ids are the rows' numbers in the file
            try:
                items = records_to_items(
                    block, str(p), task=task, text_column=opts.get("text_column"),
                    label_column=opts.get("label_column"), id_column=opts.get("id_column"),
                    label_base=opts.get("label_base"), keys=keys,
                    ids=[str(n + j) for j in range(len(block))] if by_row else None)
            except ValueError:  # named as the general path names it
                _refuse_pool_block(conn, p, fmt, block, n, keys, by_row, task, opts)
            if len(items) != len(block):
                raise NotStreamable("dropped rows")
            try:
                conn.executemany(
                    "INSERT INTO items (idx, item_id, fields, data_label) VALUES (?, ?, ?, ?)",
                    ((n + j, it.id, _dumps(dict(it.fields)), it.label)
                     for j, it in enumerate(items)))
            except sqlite3.IntegrityError:  # an id of an earlier block: named as there
                # (before any table: the general path reads the whole pool first)
                _refuse_pool_block(conn, p, fmt, block, n, keys, by_row, task, opts)
            ids = np.array([it.id for it in items], dtype=object)
            mine = None
            for k, t in enumerate(tables):
                if k in by_id:
                    continue
                try:
                    t_ids, vals, checks = _guarded_take(t, len(items))
                except _TableEnds:
                    if by_row:  # positions: the general path decides
                        raise NotStreamable("table ends before the pool") from None
                    by_id.append(k)  # fewer rows than the pool: which are missing?
                    parts[k] = None  # (the rows so far: read again, by id)
                    continue
                if not np.array_equal(t_ids, ids):
                    j = int(np.flatnonzero(t_ids != ids)[0])
                    _refuse_a_repeated_id(conn, sources[k], t_ids[j], ids, n, j)
                    if not by_row:  # by id, once the pool is written
                        by_id.append(k)
                        parts[k] = None  # (the rows so far: read again, by id)
                        continue
                    raise NotStreamable(
                        "order", f"{sources[k].scorer.path}: row {n + j + 1} is for item "
                        f"{t_ids[j]!r}, where item {n + j + 1} of the pool is {ids[j]!r}",
                        max(n + len(items), size or 0))
                if by_row and checks is None:  # positions alone: the general path refuses
                    raise NotStreamable("row ids")
                if checks is not None:  # written for these items' content? (else the
                    # general path refuses, naming the row: joins never guess)
                    if mine is None:
                        mine = np.array([content_check(it.fields) for it in items],
                                        dtype=object)
                    if not np.array_equal(checks, mine):  # the first item, as the table
                        from activetest.models.table import confirm_content  # reader does

                        try:
                            confirm_content(sources[k].scorer.path,
                                             dict(zip(t_ids, checks, strict=True)), items)
                        except ValueError as exc:
                            raise StreamRefusedError(str(exc)) from None
                        raise NotStreamable("content check")  # pragma: no cover
                parts[k].append(_converted(vals, sources[k], n))  # row by row: per block
            n += len(items)
            advance(len(items))
        if n == 0:
            raise NotStreamable("empty")
        for k, t in enumerate(tables):  # rows after the pool's last item: a repeated id
            if k in by_id:  # (refused, naming both rows), or items of another pool:
                continue  # joined by id (which checks every row of the table)
            extra = t.next_id()
            if extra is not None:
                _refuse_a_repeated_id(conn, sources[k], extra, [], n, 0)
                if by_row:  # positions: the general path decides
                    raise NotStreamable("table rows after the pool")
                by_id.append(k)
                parts[k] = None
        got["n"] = n
        config1 = config_of(info, specs, raw_specs, n)  # the planned budget needs N
        config = dataclasses.replace(config1, pool={**config1.pool, "n_items": n},
                                     compare=config0.compare)
        got["config"] = config
        conn.execute("UPDATE config SET json = ? WHERE id = 1", (_dumps(config.to_dict()),))
        return parts, by_id

    def init(store: SessionStore) -> None:
        from activetest.models.cache import scorer_identity

        config = got["config"]
        n = got["n"]
        lps = got["lp"]
        s_lp = lps[0]
        t_lp = lps[1] if need_target else None
        c_lps = lps[2 if need_target else 1:]
        scores = initial_scores(config, s_lp, t_lp, n,
                                other_logprobs=c_lps[0] if c_lps else None)

        def prov(role: str, t: _Table) -> dict[str, Any]:
            from activetest.session.scoring import jsonable

            try:
                ident: Any = scorer_identity(t.scorer)
            except Exception:  # identity is provenance only
                ident = {"name": getattr(t.scorer, "name", "?")}
            out = {"role": role, "spec": t.spec, "scorer": ident, "n_examples": 0,
                   "example_ids": None, "scored_at": now(), "n_items": n,
                   **t.scorer.prompt_provenance()}
            return jsonable(out)  # type: ignore[no-any-return]

        store.put_scores("surrogate", sur.spec, s_lp, prov("surrogate", sur))
        if t_lp is not None:
            store.put_scores("target", tgt.spec, t_lp, prov("target", tgt))
        else:
            store.put_scores("target", tgt.spec, np.full((n, task.n_classes), np.nan),
                             {"spec": tgt.spec, "note": "scored on labelled items only "
                              "(PE acquisition)"})
        for t, lp in zip(cmp, c_lps, strict=True):  # what estimate compares with
            store.put_scores(f"compare:{t.spec}", t.spec, lp, prov(f"compare:{t.spec}", t))
        store.put_scores("acquisition", config.acquisition, scores[:, None],
                         {"acquisition": config.acquisition, "alpha": config.proposal_floor},
                         predictions=False)
        state = ActiveSampler.fresh_state(scores, proposal_floor=config.proposal_floor,
                                          seed=config.seed)
        store.init_sampler(state.proposal_floor, config.seed, state.rng_state)

    store = SessionStore.create(path, config=config0, items=[], examples=[],
                                overwrite=options["overwrite"],
                                busy_timeout=options["busy_timeout"], init=init,
                                items_writer=write_items)
    return store, got["n"], info, specs, raw_specs


#: What a reader raises on input the general path reads (or refuses with a message).
_READ_ERRORS = (ValueError, UnicodeError, OSError, KeyError, TypeError, IndexError)


def _guarded(blocks: Iterator[Any]) -> Iterator[Any]:
    """``blocks``, with any read error turned into :class:`NotStreamable`."""
    import csv

    try:
        yield from blocks
    except StreamRefusedError:
        raise
    except (*_READ_ERRORS, csv.Error):
        raise NotStreamable("read") from None


def _guarded_take(rows: _Rows, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    try:
        return rows.take(m)
    except StreamRefusedError:
        raise
    except _READ_ERRORS:
        raise NotStreamable("read") from None


def _refuse_a_repeated_id(conn: Any, t: _Table, item_id: str, ids: Sequence[str], n: int,
                          j: int) -> None:
    """Row ``n + j`` of the table ``t`` is for ``item_id`` where the pool's item ``n + j``
    (``ids[j]``, of the block of items ``n``, ``n + 1``, ...; none after the pool's last)
    is another: where an earlier row of the table is for ``item_id`` (the rows before
    are for the pool's items, in its order: the pool's item of that number), refuse the
    row as the general path refuses a duplicate id, naming both rows; else return (the
    table is in another order: the general path joins it by id)."""
    if len(set(ids)) != len(ids):  # a pool that repeats an id: the general path names it
        return
    rows = conn.execute("SELECT idx FROM items WHERE item_id = ? AND idx < ?",
                        (item_id, n)).fetchall()  # (fetchall: no statement left open)
    row = rows[0] if rows else None
    before = [n + i for i in range(j) if ids[i] == item_id]
    if row is None and not before:
        return
    first = int(row[0]) if row is not None else before[0]
    if t.scorer.format == "parquet":  # rows named by number (from 1), as there
        from activetest.models.table import duplicate_message

        raise StreamRefusedError(duplicate_message(t.scorer.path, f"row {n + j + 1}", item_id,
                                                   f"row {first + 1}"))
    _read_again(t, n + j, first=first, repeated=item_id)
    raise NotStreamable("repeated id")  # pragma: no cover - _read_again raises


def _join_by_id(conn: Any, t: _Table, n: int, width: int, advance: Any) -> np.ndarray:
    """The ``(n, width)`` log-probs of the table ``t``, joined by id to the ``n`` pool
    items already written to the session file: a table in another order than the pool's
    (a sharded scoring job's), with fewer rows (a pool item without one: named) or with
    rows of items the pool does not have (passed over, as the general path passes them).

    The table is read again in blocks; each block's ids are looked up in the file's
    items (their unique index) through a temporary table, so memory stays the result,
    the table's row of each pool item (8 bytes an item) and one block. Every row is
    checked by the general path's rules and refused with its message: a value (the row
    named), an id that an earlier row has (both rows named; the ids of rows the pool
    does not have are kept in a temporary table to tell), a pool item with no row (the
    first ten named, in the pool's order), a content check written for other content
    (the first such pool item in the pool's order)."""
    import json as _json

    from activetest.formats.label_records import content_check
    from activetest.models.table import confirm_content, duplicate_message

    path = t.scorer.path
    out = np.full((n, width), np.nan)
    row_of = np.full(n, -1, dtype=np.int64)  # the table's row of each pool item
    bad: tuple[int, str, str, str] | None = None  # the first item whose check differs
    # temporary tables (gone with the connection; emptied, not dropped, after: a DROP
    # fails while any statement of the connection is open)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_block (pos INTEGER PRIMARY KEY, "
                 "item_id TEXT)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_other (item_id TEXT PRIMARY KEY, "
                 "row INTEGER)")
    conn.execute("DELETE FROM _at_other")
    try:
        start = 0
        for ids, vals, checks in _Rows(_table_blocks(t), t).each():
            m = len(ids)
            conv = _converted(vals, t, start)  # every row, as the general path reads it
            conn.execute("DELETE FROM _at_block")
            conn.executemany("INSERT INTO _at_block (pos, item_id) VALUES (?, ?)",
                             enumerate(ids.tolist()))
            found = conn.execute(
                "SELECT b.pos, i.idx" + (", i.fields" if checks is not None else "") +
                " FROM _at_block b JOIN items i ON i.item_id = b.item_id").fetchall()
            pos = np.fromiter((f[0] for f in found), dtype=np.int64, count=len(found))
            idx = np.fromiter((f[1] for f in found), dtype=np.int64, count=len(found))
            # an earlier row with this row's id: of an earlier block (a pool item's row,
            # or a row of an id the pool does not have, kept in _at_other), else the
            # first row of the id in this block
            first = np.full(m, -1, dtype=np.int64)
            first[pos] = row_of[idx]
            for j, row in conn.execute("SELECT b.pos, o.row FROM _at_block b JOIN _at_other "
                                       "o ON o.item_id = b.item_id").fetchall():
                first[j] = row
            _, lead, where = np.unique(ids, return_index=True, return_inverse=True)
            later = (lead[where] != np.arange(m)) & (first < 0)
            first[later] = start + lead[where][later]
            mine = np.zeros(m, dtype=bool)
            mine[pos] = True
            fresh = np.flatnonzero(~mine & (first < 0))  # a new id of no pool item
            conn.executemany("INSERT INTO _at_other (item_id, row) VALUES (?, ?)",
                             zip(ids[fresh].tolist(), (start + fresh).tolist(), strict=True))
            if (first >= 0).any():  # the first row that repeats an earlier row's id
                j = int(np.flatnonzero(first >= 0)[0])
                if t.scorer.format == "parquet":  # rows named by number (from 1)
                    raise StreamRefusedError(duplicate_message(
                        path, f"row {start + j + 1}", ids[j], f"row {int(first[j]) + 1}"))
                _read_again(t, start + j, first=int(first[j]), repeated=ids[j])
                raise NotStreamable("repeated id")  # pragma: no cover - _read_again raises
            out[idx] = conv[pos]
            row_of[idx] = start + pos
            if checks is not None:
                for (p_, i_, fields), theirs in zip(found, checks[pos].tolist(), strict=True):
                    if bad is not None and i_ >= bad[0]:
                        continue
                    have = _json.loads(fields)
                    if content_check(have) != theirs:
                        bad = (i_, str(ids[p_]), theirs, fields)
            start += m
            advance(m)
        if start == 0:  # a header alone, an empty JSONL file: named as the table reader does
            raise StreamRefusedError(f"{path}: no data rows")
        missing = np.flatnonzero(row_of < 0)
        if missing.size:  # the general path's message (the first ten, in the pool's order)
            shown = ", ".join(repr(conn.execute("SELECT item_id FROM items WHERE idx = ?",
                                                (int(i),)).fetchall()[0][0])
                              for i in missing[:10])
            more = f" and {missing.size - 10} more" if missing.size > 10 else ""
            raise StreamRefusedError(f"{path}: no row for {missing.size} of {n} item id(s): "
                                     f"{shown}{more}")
        if bad is not None:
            try:
                confirm_content(path, {bad[1]: bad[2]},
                                [Item(bad[1], _json.loads(bad[3]), None)])
            except ValueError as exc:
                raise StreamRefusedError(str(exc)) from None
    finally:
        conn.execute("DELETE FROM _at_block")
        conn.execute("DELETE FROM _at_other")
    return out


def _refuse_bad_row(t: _Table, row: int | None) -> None:
    """Refuse the CSV, TSV or JSONL table ``t``'s row ``row`` (from 0; None: the first that
    the general path refuses, reading to the end), that the fast reader does not take,
    with the general path's message: its rows are read again one at a time, as the
    general path reads them (memory: one row). Where the general path refuses none of
    them, NotStreamable: it reads the table."""
    _read_again(t, row, refused=True)
    raise NotStreamable("bad row")  # pragma: no cover - _read_again raises


def _read_again(t: _Table, upto: int | None, *, first: int | None = None,
                repeated: str | None = None, refused: bool = False) -> str:
    """Read the CSV, TSV or JSONL table ``t``'s rows again, one at a time, with the general
    path's rules (:func:`activetest.models.table.stream_rows`), up to its row ``upto``
    (from 0; None: to the end). The first row refused there is refused with the general
    path's message (:class:`StreamRefusedError`); ``repeated``: row ``upto`` is refused
    as repeating row ``first``'s id ``repeated``. Returns row ``upto``'s name (``"line
    N"``); NotStreamable where ``refused`` and no row is refused, or where the rows read
    are not those streamed (the general path reads the table)."""
    from activetest.models.table import duplicate_message, row_values, stream_rows

    s = t.scorer
    first_where = None
    try:
        for r, (where, item_id, row) in enumerate(stream_rows(
                s.path, s.format, columns=t.columns, id_column=s.id_column)):
            if r == first and item_id == repeated:
                first_where = where
            if r == upto and repeated is not None:
                if item_id != repeated or first_where is None:
                    break  # not the rows streamed
                raise StreamRefusedError(duplicate_message(s.path, where, item_id, first_where))
            row_values(row, s.path, where, t.columns)
            if r == upto:
                if refused:
                    break
                return where
    except StreamRefusedError:
        raise
    except (UnicodeError, OSError, RecursionError):  # the general path names the file
        raise NotStreamable("read") from None
    except ValueError as exc:  # a row (or the file) the general path refuses, so named
        raise StreamRefusedError(str(exc)) from None
    raise NotStreamable("read again")


def _refuse_record(p: Path, fmt: str, message: str) -> NoReturn:
    """Refuse the text pool ``p``'s record its reader refused (``message``), as the
    general path refuses it, unless the file has a problem the general path names
    first (:func:`_clean_text`: NotStreamable)."""
    if not _clean_text(p):
        raise NotStreamable("text")
    raise StreamRefusedPoolError(message)


def _refuse_pool_block(conn: Any, p: Path, fmt: str, block: Sequence[tuple[str, Any]], n: int,
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

    if fmt != "parquet" and not _clean_text(p):
        raise NotStreamable("text")
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
    """Where the general path says the pool's ``k``-th record (from 0) is: ``row k`` of a
    Parquet pool, a text pool's ``line N`` found by reading its records again."""
    if fmt == "parquet":
        return f"row {k}"
    with p.open(encoding="utf-8-sig", newline=_NEWLINE[fmt]) as f:
        for i, (where, _) in enumerate(_text_records(f, str(p), fmt)):
            if i == k:
                return where
    raise NotStreamable("pool")  # pragma: no cover - the record was read before


def _pool_size(p: Path, fmt: str) -> int | None:
    """The pool's records, where the file says (Parquet), else None."""
    if fmt != "parquet":
        return None
    import pyarrow.parquet as pq

    try:
        return int(pq.ParquetFile(p).metadata.num_rows)
    except Exception:  # pyarrow raises many types: the general path names the file (QA)
        raise NotStreamable("read") from None


class _Parts:
    """Blocks of ``(m, C)`` rows into one array: written in place when the size is
    known (no second copy), else joined at the end."""

    def __init__(self, size: int | None, width: int) -> None:
        self.out = None if size is None else np.empty((size, width), dtype=np.float64)
        self.blocks: list[np.ndarray] = []
        self.n = 0

    def append(self, block: np.ndarray) -> None:
        if self.out is not None and self.n + len(block) <= len(self.out):
            self.out[self.n:self.n + len(block)] = block
        else:
            if self.out is not None:  # more records than the file said: join instead
                self.blocks, self.out = [self.out[:self.n]], None
            self.blocks.append(block)
        self.n += len(block)

    def array(self) -> np.ndarray:
        if self.out is not None:
            return self.out[:self.n]
        return np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]


def _converted(values: np.ndarray, t: _Table, start: int) -> np.ndarray:
    """The table's values (its rows ``start``, ``start + 1``, ...) as log-probs (the table
    reader's rule). A row the rule refuses is refused here with the general path's
    message (which reads the whole table into memory to say it; a CSV, TSV or JSONL row's
    line found by reading the table's rows again), unless the message depends on the
    whole table (whether every row looks like probabilities: NotStreamable, the general
    path decides)."""
    from activetest.models.table import looks_like_probs, to_log_softmax_rows

    named = not (t.scorer.kind != "probs" and looks_like_probs(values, t.scorer.tolerance))
    where: Sequence[str] = _NoWhere()
    if named:
        where = _RowNames(start) if t.scorer.format == "parquet" else _Lines(t, start)
    try:
        return to_log_softmax_rows(values, t.scorer.kind, t.scorer.tolerance, t.scorer.path,
                                   where)
    except IndexError:
        raise NotStreamable("values") from None
    except ValueError as exc:
        if named:
            raise StreamRefusedError(str(exc)) from None
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
    """A CSV, TSV or JSONL table's rows from ``start`` on as the general path names them
    (``line N``), found when asked (a row refused) by reading the table's rows again."""

    def __init__(self, t: _Table, start: int) -> None:
        self.t = t
        self.start = start

    def __len__(self) -> int:
        return 0  # indexed only

    def __getitem__(self, i: Any) -> Any:
        return _read_again(self.t, self.start + int(i))


class _NoWhere(Sequence[str]):
    """Row names for messages: the general path names them (never reached)."""

    def __len__(self) -> int:
        return 0

    def __getitem__(self, i: Any) -> Any:
        raise NotStreamable("values")


class PoolSize(Sequence[Item]):
    """A streamed pool as a length (its items are in the session file)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise IndexError("the streamed pool is in the session file")


#: ``json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False)``, the store's
#: rule, with one encoder for every item (``dumps`` makes one per call).
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)


def _dumps(obj: Any) -> str:
    return _ENCODER.encode(obj)
