"""Where a streamed CSV, TSV or JSONL table's rows start, noted as the fast reader reads
its bytes (:class:`Marks`, :class:`CsvMarks`), so that a refused row's line is found by
reading the table again from the block holding the row, not from its first row
(:func:`activetest.session.stream_tables.read_again`; part of
:mod:`activetest.session.stream_init`).

A mark is a :class:`~activetest.models.table_read.RowMark`: a row's number, the byte its
record starts at and the lines before it, counted in the bytes the reader is given
(``bytes.count``: no row parsed twice). A CSV or TSV text is marked only while no quote
character has been met (a quoted field may hold a line break, which only a CSV parser
tells from a row's end): a table with one reads again from its first row, as before."""

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
    where the file is gzipped), each block's rows counted as it passes: a mark (``marks``)
    after the block's last line break, while no quote character has been met.

    Rows are counted as both readers count them: the header is the first line; a line
    ends at ``\\n``, ``\\r`` or ``\\r\\n`` (Python's reader of a file opened with
    ``newline=""``, and pyarrow's); an empty line is no row (both pass it over). A line
    that either reader refuses or reads otherwise (whitespace alone, empty cells) is
    refused by the fast reader when its block is read, before any later row is named,
    so a mark after it is never used."""

    def __init__(self, src: Any, marks: Marks) -> None:
        self.src = src
        self.marks = marks
        self.rest = b""  # the bytes after the last line break seen
        self.offset: int | None = 0  # of rest's first byte; None: a quote met, no marks
        self.lines = 0
        self.row = 0
        self.header = False

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
        buf = self.rest + data if self.rest else data
        cut = buf.rfind(b"\n") + 1
        if buf.find(b'"', 0, cut) >= 0:
            self.offset = None  # (a quoted field from here on may span lines)
            self.rest = b""
            return
        self.rest = buf[cut:]
        if cut == 0:
            return
        pos = 0
        if not self.header:  # the first line: the header, no row
            ends = [i for i in (buf.find(b"\r", 0, cut), buf.find(b"\n", 0, cut)) if i >= 0]
            pos = min(ends) + 1
            if buf[pos - 1] == 13 and buf.startswith(b"\n", pos):  # (\r\n)
                pos += 1
            self.header = True
            self.lines += 1
        if pos < cut:
            lines = buf.count(b"\n", pos, cut)
            cr = buf.find(b"\r", pos, cut) >= 0
            if cr:  # a lone \r ends a line too
                lines += buf.count(b"\r", pos, cut) - buf.count(b"\r\n", pos, cut)
            rows = lines
            if (buf[pos] in (10, 13) or buf.find(b"\n\n", pos, cut) >= 0
                    or (cr and (buf.find(b"\r\r", pos, cut) >= 0
                                or buf.find(b"\n\r", pos, cut) >= 0))):
                rows = sum(1 for line in buf[pos:cut].splitlines() if line)  # empty lines
            self.lines += lines
            self.row += rows
        self.offset += cut  # type: ignore[operator]
        self.marks.add(RowMark(self.row, self.offset, self.lines))  # type: ignore[arg-type]
