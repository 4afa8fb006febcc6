"""Where a streamed CSV, TSV or JSONL table's rows start, noted as the fast reader reads
its bytes (:class:`Marks`, :class:`CsvMarks`), so that a refused row's line is found by
reading the table again from the block holding the row, not from its first row
(:func:`activetest.session.stream_tables.read_again`; part of
:mod:`activetest.session.stream_init`).

A mark is a :class:`~activetest.models.table_read.RowMark`: a row's number, the byte its
record starts at and the lines before it, counted in the bytes the reader is given
(``bytes.count``: no row parsed twice). A CSV or TSV text is marked only while no quote
character has been met (a quoted field may hold a line break, which only a CSV parser
tells from a row's end): a table with one reads again from its first row, as before.

A JSON array's blocks are marked by its reader
(:func:`activetest.session.stream_tables._json_array_batches`: a block's first record,
the character of the text its ``{`` is at; since 2026-12-07, before from its first
record). Where the rows are still read again from the first row, and why:

- a CSV or TSV text after its first quote character: not safe from bytes alone. Counting
  quotes (a quoted field closed at an even count) is right only where each quote opens
  or closes a field or is doubled inside one; both readers take a quote inside an
  unquoted field (``5" screen``) as text and text after a closing quote as more of the
  field, so a count would put a line's start inside a quoted field (a wrong line named
  for the row, or the row's content check failing, :func:`.stream_tables._same_row`).
  Telling them apart needs the CSV parser's state at each byte: a Python pass over every
  byte as the fast reader reads, which every streamed ``init`` would pay (the marks are
  noted for good tables too), not only a refused one (not measured).
- a row the fast reader refused without saying which (``upto`` None: a block pyarrow
  cannot convert): the rows before that block were taken, but a repeated id among the
  rows before it is named first by the general path, and only a reading from the
  first row collects every earlier row's id (:func:`.stream_tables.read_again`'s
  hashes), so it reads from there. But a block pyarrow cannot parse (a record of
  another width, a quote left open at a row's start) is read from the block's start
  before it by the general path's reader for the malformed record, which the general
  path names before any row's problem (:func:`.stream_tables._refuse_malformed`, since
  2026-12-08: the table was read from its first row twice).
- a row in the first block (no mark before it): the first block is read again, at most
  a block's rows."""

from __future__ import annotations

import bisect
from typing import Any

from activetest.models.table_read import RowMark

__all__ = ["CsvMarks", "Marks"]


class Marks:
    """The marks of one table file, by row: each at the start of a block of the bytes
    read (one a MiB of a CSV or TSV text, one per 16 MiB block of a JSONL one)."""

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.marks: list[RowMark] = []

    def add(self, mark: RowMark) -> None:
        """Note ``mark`` (none at the first row, and none a second time: a table read
        again from its first row, joined by id, meets the same marks)."""
        if mark.row > 0 and (not self.rows or mark.row > self.rows[-1]):
            self.rows.append(mark.row)
            self.marks.append(mark)

    def before(self, row: int) -> RowMark | None:
        """The last mark at or before the row ``row`` (from 0); None where none is (read
        from the first row)."""
        k = bisect.bisect_right(self.rows, row)
        return self.marks[k - 1] if k else None


class CsvMarks:
    """A CSV or TSV text's bytes as pyarrow's CSV reader reads them (a file-like object
    for :class:`pyarrow.PythonFile`: ``read`` of the stream ``src``, gunzipped already
    where the file is gzipped; ``delimiter``: one byte), each block's rows counted as it
    passes: a mark (``marks``) after the block's last line break, while no quote
    character has been met.

    The header is the first line; a line ends at ``\\n``, ``\\r`` or ``\\r\\n`` (Python's
    reader of a file opened with ``newline=""``, and pyarrow's). Rows are counted by
    their delimiters (``bytes.count``, no line split: the header's count each), since
    an empty line, which both readers pass over, has none. A line of another count is
    refused by the fast reader when its block is read, and a mark after it (its count
    at least the rows of the header's count before it, the refused row's among them) is
    never at or before the row refused."""

    def __init__(self, src: Any, marks: Marks, delimiter: bytes) -> None:
        self.src = src
        self.marks = marks
        self.delimiter = delimiter
        self.rest = b""  # the bytes after the last line break seen
        self.offset: int | None = 0  # of rest's first byte; None: a quote met, no marks
        self.lines = 0
        self.cells = 0  # the delimiters after the header's
        self.width = 0  # the header's delimiters

    @property
    def closed(self) -> bool:
        """Whether ``src`` is closed."""
        return bool(self.src.closed)

    def readable(self) -> bool:
        """True: read, never written."""
        return True

    def seekable(self) -> bool:
        """False: read once, in order (a gzip stream cannot seek)."""
        return False

    def close(self) -> None:
        """Close ``src``."""
        self.src.close()

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes of ``src`` (all where ``n`` < 0), counted (:meth:`_see`)."""
        data: bytes = self.src.read(n)
        if data and self.offset is not None:
            self._see(data)
        return data

    def _see(self, data: bytes) -> None:
        if data.find(b'"') >= 0:
            self.offset = None  # (a quoted field from here on may span lines)
            self.rest = b""
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            self.rest += data
            return
        first = data.find(b"\n") + 1  # (the line the rest begins, ended)
        self._count(self.rest + data[:first], 0, len(self.rest) + first)
        self._count(data, first, cut)
        self.offset += len(self.rest) + cut  # type: ignore[operator]
        self.rest = data[cut:]
        if self.width:
            self.marks.add(RowMark(self.cells // self.width, self.offset, self.lines))

    def _count(self, buf: bytes, lo: int, hi: int) -> None:
        """Count the lines and delimiters of ``buf[lo:hi]`` (whole lines), the header's
        apart (the first line seen)."""
        if lo >= hi:
            return
        if not self.lines:  # the header: its delimiters, a row's
            ends = [i for i in (buf.find(b"\r", lo, hi), buf.find(b"\n", lo, hi)) if i >= 0]
            end = min(ends) + 1
            if buf[end - 1] == 13 and buf.startswith(b"\n", end):  # (\r\n)
                end += 1
            self.width = buf.count(self.delimiter, lo, end)
            self.lines = 1
            lo = end
        lines = buf.count(b"\n", lo, hi)
        if buf.find(b"\r", lo, hi) >= 0:  # a lone \r ends a line too
            lines += buf.count(b"\r", lo, hi) - buf.count(b"\r\n", lo, hi)
        self.lines += lines
        self.cells += buf.count(self.delimiter, lo, hi)
