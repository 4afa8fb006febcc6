"""Per-item numbers of a session in chunked columns inside the session file (schema 4).

A session stays ONE SQLite file (people copy ``eval.db`` around), but a pool's numbers
(each model's ``(N, C)`` log-probs) are no longer one blob each: SQLite refuses blobs
over 1e9 bytes (42M items of 3 classes), and one blob is read whole for one row. Each
column is stored in rows of the table ``columns(name, chunk, data)``, a chunk holding
at most :data:`CHUNK_BYTES` of consecutive item rows as little-endian bytes, described
by one row of ``column_info(name, dtype, n_rows, width, chunk_rows)``::

    name         "scores:surrogate", "scores:target", "scores:acquisition", ...
    dtype        numpy dtype string ("<f8")
    n_rows       N (item rows 0..N-1)
    width        values per item row (C for log-probs)
    chunk_rows   item rows per chunk (the last chunk may hold fewer)

A column is read with :func:`numpy.frombuffer` into one preallocated array (no Python
object per item), or only the chunks holding given rows (:func:`read_rows`). A column
is written inside the caller's transaction, so it is in the file whole or not at all
(``kill -9`` safe, as every other write of a session).

This module knows SQLite and numpy only; :mod:`activetest.session.store` creates the
tables and calls it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["CHUNK_BYTES", "COLUMNS_SCHEMA", "ColumnInfo", "ColumnWriter", "column_info",
           "delete_column", "overwrite_column", "read_column", "read_rows", "update_rows",
           "write_column"]

#: The most bytes one chunk row holds (well under SQLite's 1e9-byte blob limit, and
#: small enough that reading a few rows reads little).
CHUNK_BYTES = 64 << 20

#: The tables (created by :mod:`activetest.session.store` for schema 4 and by its
#: migration of older files).
COLUMNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS column_info (
    name TEXT PRIMARY KEY,
    dtype TEXT NOT NULL,
    n_rows INTEGER NOT NULL,
    width INTEGER NOT NULL,
    chunk_rows INTEGER NOT NULL CHECK (chunk_rows > 0)
);
CREATE TABLE IF NOT EXISTS columns (
    name TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (name, chunk)
);
"""


@dataclass(frozen=True)
class ColumnInfo:
    """How one column is stored (a row of ``column_info``)."""

    name: str
    dtype: str
    n_rows: int
    width: int
    chunk_rows: int

    @property
    def n_chunks(self) -> int:
        """How many chunk rows the column has."""
        return -(-self.n_rows // self.chunk_rows)


def _chunk_rows(width: int, itemsize: int, chunk_bytes: int) -> int:
    return max(1, chunk_bytes // max(1, width * itemsize))


def column_info(conn: sqlite3.Connection, name: str) -> ColumnInfo | None:
    """The stored layout of column ``name``, or None when there is none."""
    row = conn.execute("SELECT dtype, n_rows, width, chunk_rows FROM column_info "
                       "WHERE name = ?", (name,)).fetchone()
    if row is None:
        return None
    return ColumnInfo(name, str(row[0]), int(row[1]), int(row[2]), int(row[3]))


def delete_column(conn: sqlite3.Connection, name: str) -> None:
    """Remove a column (inside the caller's transaction)."""
    conn.execute("DELETE FROM columns WHERE name = ?", (name,))
    conn.execute("DELETE FROM column_info WHERE name = ?", (name,))


class ColumnWriter:
    """Writes a column of ``width`` values per row from consecutive blocks of rows
    (init streams a pool through it); call :meth:`close` after the last block.

    Everything goes through ``conn`` inside the caller's transaction.
    """

    def __init__(self, conn: sqlite3.Connection, name: str, width: int, dtype: str = "<f8",
                 chunk_bytes: int | None = None) -> None:
        self.conn = conn
        self.name = name
        self.width = int(width)
        self.dtype = np.dtype(dtype)
        self.chunk_rows = _chunk_rows(self.width, self.dtype.itemsize,
                                      CHUNK_BYTES if chunk_bytes is None else chunk_bytes)
        self._buf: list[np.ndarray] = []
        self._buffered = 0
        self._chunk = 0
        self.n_rows = 0
        delete_column(conn, name)

    def append(self, block: np.ndarray) -> None:
        """Add the next rows: ``(m, width)`` (or ``(m,)`` for width 1)."""
        a = np.ascontiguousarray(block, dtype=self.dtype).reshape(-1, self.width)
        self._buf.append(a)
        self._buffered += len(a)
        self.n_rows += len(a)
        while self._buffered >= self.chunk_rows:
            self._flush(self.chunk_rows)

    def _flush(self, rows: int) -> None:
        whole = self._buf[0] if len(self._buf) == 1 else np.concatenate(self._buf)
        self.conn.execute("INSERT INTO columns (name, chunk, data) VALUES (?, ?, ?)",
                          (self.name, self._chunk, whole[:rows].tobytes()))
        self._chunk += 1
        rest = whole[rows:]
        self._buf = [rest] if len(rest) else []
        self._buffered = len(rest)

    def close(self) -> ColumnInfo:
        """Write the last chunk and the column's description."""
        if self._buffered:
            self._flush(self._buffered)
        info = ColumnInfo(self.name, self.dtype.str, self.n_rows, self.width, self.chunk_rows)
        self.conn.execute("INSERT INTO column_info (name, dtype, n_rows, width, chunk_rows) "
                          "VALUES (?, ?, ?, ?, ?)", (info.name, info.dtype, info.n_rows,
                                                     info.width, info.chunk_rows))
        return info


def write_column(conn: sqlite3.Connection, name: str, values: np.ndarray,
                 chunk_bytes: int | None = None) -> ColumnInfo:
    """Store (replace) ``values`` (``(N, width)`` or ``(N,)``) as column ``name``
    (``chunk_bytes``: at most that many bytes per chunk; None: :data:`CHUNK_BYTES`)."""
    a = np.asarray(values)
    width = 1 if a.ndim == 1 else int(a.shape[1])
    w = ColumnWriter(conn, name, width, "<f8", chunk_bytes)
    step = w.chunk_rows
    for start in range(0, len(a), step):
        w.append(a[start:start + step])
    return w.close()


def overwrite_column(conn: sqlite3.Connection, name: str, values: np.ndarray) -> bool:
    """Store ``values`` (``(N,)`` float64) over column ``name`` in place, where it is
    stored with the layout :func:`write_column` would give them (the same dtype, rows,
    width 1 and chunking, every chunk of its full size): each chunk's bytes rewritten
    through SQLite's incremental blob I/O, inside the caller's transaction (all or
    nothing, as every write), without deleting the rows and freeing their pages first
    (which, for a column rewritten at every command, cost as much as the writing).
    False, writing nothing, where the layout differs (or this Python's ``sqlite3`` has
    no ``blobopen``): then :func:`write_column`."""
    a = np.ascontiguousarray(values, dtype="<f8")
    info = column_info(conn, name)
    if (info is None or a.ndim != 1 or not hasattr(conn, "blobopen")
            or info.dtype != a.dtype.str or info.n_rows != a.shape[0] or info.width != 1
            or info.chunk_rows != _chunk_rows(1, a.dtype.itemsize, CHUNK_BYTES)):
        return False
    rows = conn.execute("SELECT chunk, rowid, length(data) FROM columns WHERE name = ? "
                        "ORDER BY chunk", (name,)).fetchall()
    if [int(k) for k, _, _ in rows] != list(range(info.n_chunks)):
        return False
    for k, _, size in rows:
        n = min(info.chunk_rows, info.n_rows - int(k) * info.chunk_rows)
        if int(size) != n * a.dtype.itemsize:
            return False
    for k, rowid, _ in rows:
        start = int(k) * info.chunk_rows
        with conn.blobopen("columns", "data", int(rowid)) as blob:
            blob.write(a[start:start + info.chunk_rows].tobytes())
    return True


def _chunks(conn: sqlite3.Connection, info: ColumnInfo, which: list[int] | None = None,
            ) -> Iterator[tuple[int, bytes]]:
    if which is None:
        cur = conn.execute("SELECT chunk, data FROM columns WHERE name = ? ORDER BY chunk",
                           (info.name,))
        yield from cur
        return
    for k in which:
        row = conn.execute("SELECT data FROM columns WHERE name = ? AND chunk = ?",
                           (info.name, k)).fetchone()
        if row is None:
            raise ValueError(f"column {info.name!r}: chunk {k} is missing")
        yield k, row[0]


def _decode(info: ColumnInfo, k: int, data: bytes) -> np.ndarray:
    a = np.frombuffer(data, dtype=info.dtype)
    rows = min(info.chunk_rows, info.n_rows - k * info.chunk_rows)
    if a.size != rows * info.width:
        raise ValueError(f"column {info.name!r}: chunk {k} holds {a.size} values, expected "
                         f"{rows * info.width}")
    return a.reshape(rows, info.width)


def read_column(conn: sqlite3.Connection, info: ColumnInfo, out: np.ndarray | None = None,
                ) -> np.ndarray:
    """The whole column as a ``(N, width)`` float64 array (one copy per chunk), into
    ``out`` when given (an ``(N, width)`` or, for width 1, ``(N,)`` array).

    Raises:
        ValueError: a chunk missing or of the wrong size (a damaged file), or ``out``
            of another size.
    """
    if out is None:
        out = np.empty((info.n_rows, info.width), dtype=np.float64)
    elif out.size != info.n_rows * info.width or not out.flags.c_contiguous:
        raise ValueError(f"column {info.name!r}: {info.n_rows} x {info.width} values, the "
                         f"array holds {out.size}")
    else:
        out = out.reshape(info.n_rows, info.width)  # a view: written in place
    seen = 0
    for k, data in _chunks(conn, info):
        part = _decode(info, int(k), data)
        start = int(k) * info.chunk_rows
        out[start:start + len(part)] = part
        seen += 1
    if seen != info.n_chunks:
        raise ValueError(f"column {info.name!r}: {seen} of {info.n_chunks} chunks stored")
    return out


def read_rows(conn: sqlite3.Connection, info: ColumnInfo, rows: np.ndarray) -> np.ndarray:
    """``(len(rows), width)`` float64: the column at item ``rows`` (only the chunks
    holding them are read)."""
    r = np.asarray(rows, dtype=np.int64)
    out = np.empty((len(r), info.width), dtype=np.float64)
    if len(r) == 0:
        return out
    if r.min() < 0 or r.max() >= info.n_rows:
        raise IndexError(f"column {info.name!r}: rows outside 0..{info.n_rows - 1}")
    which = r // info.chunk_rows
    for k, data in _chunks(conn, info, sorted(set(which.tolist()))):
        part = _decode(info, int(k), data)
        sel = which == k
        out[sel] = part[r[sel] - int(k) * info.chunk_rows]
    return out


def update_rows(conn: sqlite3.Connection, info: ColumnInfo, rows: np.ndarray,
                values: np.ndarray) -> None:
    """Set the column at item ``rows`` to ``values`` (only the chunks holding them are
    rewritten; inside the caller's transaction)."""
    r = np.asarray(rows, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64).reshape(len(r), info.width)
    which = r // info.chunk_rows
    for k, data in list(_chunks(conn, info, sorted(set(which.tolist())))):
        part = _decode(info, int(k), data).copy()
        sel = which == k
        part[r[sel] - int(k) * info.chunk_rows] = v[sel]
        conn.execute("UPDATE columns SET data = ? WHERE name = ? AND chunk = ?",
                     (part.astype(info.dtype).tobytes(), info.name, int(k)))
