"""Response matrices: other models' per-item results on the same benchmark.

A response matrix is a wide table: one row per model, its name in the first
column (whatever that column's header, even empty, as pandas writes an index),
then one column per item id; cells are 1/0 (correct/wrong) or scores in [0, 1],
an empty cell (or ``NA``, ``nan``, ``null``) is missing. CSV (RFC 4180 quoting),
TSV (tab-separated, same quoting) or Parquet (the first column the model name; the
others numeric or null). A ``.gz`` name or gzip's magic bytes are decompressed.

Refusals name the file, the line (or row) and the column: repeated item ids or
model names, a cell that is not a number in [0, 1], a row of another width.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from activetest.formats.tables import (
    MissingDependencyError,
    decode_utf8,
    gunzip_if_gzip,
    read_file,
)

__all__ = ["HistoryFormatError", "ResponseMatrix", "read_response_matrix"]

_MISSING = {"", "na", "nan", "null", "none"}
_SUFFIX = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".parquet": "parquet",
           ".pq": "parquet"}


class HistoryFormatError(ValueError):
    """A response-matrix file that cannot be read (the message names file, line, column)."""


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


def _cell(text: object, where: str, col: str) -> float:
    if text is None:
        return math.nan
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        v = float(text)
    else:
        s = str(text).strip()
        if s.lower() in _MISSING:
            return math.nan
        try:
            v = float(s)
        except ValueError:
            raise HistoryFormatError(f"{where}, column {col!r}: {s[:40]!r} is not a score in "
                                     "[0, 1] (or empty for missing)") from None
    if math.isnan(v):
        return v
    if not 0.0 <= v <= 1.0:
        raise HistoryFormatError(f"{where}, column {col!r}: {v!r} is not a score in [0, 1]")
    return v


def _build(source: str, header: list[str], rows: list[tuple[str, list[object]]]
           ) -> ResponseMatrix:
    items = [h.strip() for h in header[1:]]
    if not items:
        raise HistoryFormatError(f"{source}: no item columns (expected a model-name column, "
                                 "then one column per item id)")
    if any(not i for i in items):
        raise HistoryFormatError(f"{source}: line 1: an item column has an empty name")
    dup = sorted({i for i in items if items.count(i) > 1})
    if dup:
        raise HistoryFormatError(f"{source}: line 1: item id(s) repeated: {dup[:5]}")
    if not rows:
        raise HistoryFormatError(f"{source}: no model rows")
    models: list[str] = []
    seen: dict[str, str] = {}
    S = np.empty((len(rows), len(items)))
    for r, (where, cells) in enumerate(rows):
        name = "" if cells[0] is None else str(cells[0]).strip()
        if not name:
            raise HistoryFormatError(f"{where}: empty model name (first column)")
        if name in seen:
            raise HistoryFormatError(f"{where}: model {name!r} repeated (also {seen[name]})")
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
            table = pq.read_table(pa.BufferReader(raw))
        except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
            raise HistoryFormatError(f"{p}: not a readable Parquet file: {exc}") from None
        header = [str(c) for c in table.column_names]
        cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
        rows = [(f"{p}: row {r}", [c[r] for c in cols]) for r in range(table.num_rows)]
        return _build(str(p), header, rows)
    try:
        text = decode_utf8(raw, p)
    except ValueError as exc:
        raise HistoryFormatError(str(exc)) from None
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
