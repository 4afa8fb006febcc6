"""The one table reader: CSV, TSV, JSONL, JSON, Parquet and FPB files as records.

Every file of rows the house reads (pools, test sets, answer and prediction
tables, label sheets) goes through :func:`read_records` (or its parts): one
decoder (:func:`decode`: UTF-8 with a byte-order mark tolerated, a wrong byte named
by line), one input guard (:func:`read_file`: no folders, devices or endless
pipes), one gzip rule and one reader per format, each yielding ``(where, record)``
pairs with ``where`` like ``"line 7"``. The formats differ where the outside
world does: CSV is RFC 4180 quoted, TSV is split on tabs with no quoting (as GLUE
writes it), FPB is ``sentence@label`` split on the last ``@``.

This module imports nothing from the rest of activetest but :mod:`._json` and
:mod:`.globs` (what a glob pattern is).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from activetest.formats import _json
from activetest.formats._json import RepeatedKeyError, object_without_repeats, repeated_key
from activetest.formats.globs import has_glob_chars

__all__ = ["FORMATS", "MAX_STREAM_BYTES", "MissingDependencyError", "PoolFormatError", "Record",
           "RepeatedKeyError", "arrow_message",
           "check_header_rows", "column_names", "decode", "detect_format", "file_lines",
           "files_under", "header_rows",
           "header_table",
           "iter_json_lines", "json_lines", "object_without_repeats", "parse_bytes",
           "read_bytes", "read_csv_lines",
           "read_file", "read_jsonl", "read_jsonl_lines", "read_records", "read_tsv_lines",
           "refuse_sqlite", "repeated", "repeated_key", "rows_after_header", "split_lines"]

#: Formats a pool file may have (``lmeval`` is read by :mod:`activetest.formats.lmeval`).
FORMATS = ("csv", "tsv", "jsonl", "json", "parquet", "fpb", "lmeval")

_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
             ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


class PoolFormatError(ValueError):
    """A pool file (or hub split) that cannot be turned into items."""


#: How many column names an error message lists (QA: a 251-column response matrix given as
#: a pool listed every one of them)
SHOWN_COLUMNS = 20


def column_names(names: Iterable[Any], *, sort: bool = False) -> str:
    """The column names an error message lists: each as ``repr``, at most
    :data:`SHOWN_COLUMNS` of them, then how many more there are."""
    cols = [str(c) for c in names]
    if sort:
        cols.sort()
    shown = ", ".join(repr(c) for c in cols[:SHOWN_COLUMNS])
    more = len(cols) - SHOWN_COLUMNS
    return shown if more <= 0 else f"{shown}, ... and {more} more ({len(cols)} columns)"


class MissingIdColumnError(PoolFormatError):
    """A record without the id column asked for; ``row``: its 0-based record number (0:
    the file has no such column at all)."""

    def __init__(self, message: str, row: int) -> None:
        super().__init__(message)
        self.row = row


class MissingDependencyError(ImportError):
    """An optional package needed for this input is not installed."""


Record = Mapping[str, Any]


def repeated(names: Iterable[str]) -> list[str]:
    """The names that occur more than once, sorted: one pass (a header's check counted
    each name over all of them, O(M^2): 10 s for a response matrix of 20,000 items)."""
    from collections import Counter

    return sorted(n for n, c in Counter(names).items() if c > 1)


def refuse_sqlite(path: str | Path, what: str) -> None:
    """Refuse a SQLite file (an activetest session, most likely) given where ``what`` (a
    pool, a label file) is read: only on the path where its suffix names no format (QA:
    `activetest import S.db S.db` was told to name the format with --format).

    Raises:
        PoolFormatError: the file starts with SQLite's header.
    """
    try:
        with Path(path).open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return
    if head == b"SQLite format 3\x00":
        raise PoolFormatError(f"{path} is a SQLite file (an activetest session?), not {what}")


def detect_format(path: str | Path) -> str:
    """The format for ``path`` from its suffix (ignoring a final ``.gz``).

    Raises:
        PoolFormatError: the suffix is not one of the known ones.
    """
    p = Path(path)
    name = p.name[:-3] if p.name.lower().endswith(".gz") else p.name
    suffix = Path(name).suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if suffix == ".txt" and re.match(r"^Sentences_\w*Agree\.txt$", name, re.IGNORECASE):
        return "fpb"
    refuse_sqlite(p, "a pool file: --pool takes the items as a table (CSV, TSV, JSONL, JSON, "
                     "Parquet) or lm-eval samples")
    raise PoolFormatError(f"{path}: cannot tell the format from the suffix {suffix!r}; name it "
                          f"with --pool-format (format= in Python), one of {', '.join(FORMATS)}")


def decode(data: bytes, source: str, encoding: str) -> str:
    """``data`` as text in ``encoding`` (for UTF-8, a leading byte-order mark is dropped).

    Raises:
        PoolFormatError: an unknown encoding, or bytes not valid in it; the message
            names ``source``, the line and the byte, and how to name the encoding.
    """
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise PoolFormatError(f"{source}: unknown encoding {encoding!r}") from None
    if codec.name == "utf-8":
        encoding = "utf-8-sig"  # tolerate a byte-order mark
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        bad = data[exc.start: exc.start + 1]
        raise PoolFormatError(f"{source}, line {line}: byte {bad!r} is not valid {encoding} "
                              f"(name the file's encoding with --encoding, encoding= in Python, "
                              f"e.g. 'iso-8859-1')") from None


def split_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its end) for every line, split on ``\\n`` only."""
    for n, line in enumerate(text.split("\n"), start=1):
        yield n, line[:-1] if line.endswith("\r") else line


def allow_long_fields() -> None:
    """Let :mod:`csv` read a field of any length: its default limit of 131,072
    characters refused valid files with long texts (a long context, a long answer),
    including the label sheets this tool writes for them (QA). Process-wide, as the
    module's own setting is; raised, never lowered."""
    limit = 2**31 - 1  # a C long on every platform
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)


def _read_csv(text: str, source: str) -> Iterator[tuple[str, Record]]:
    return read_csv_lines(io.StringIO(text, newline=""), source)


def read_csv_lines(lines: Iterable[str], source: str) -> Iterator[tuple[str, Record]]:
    """A CSV pool's records as :func:`parse_bytes` reads them, from ``lines`` (a file
    opened with ``newline=""``, read one line at a time, or a ``StringIO`` of the text).

    Raises:
        PoolFormatError: as :func:`parse_bytes`, when the bad row is read (the checks of
            the whole text, its encoding and NUL characters, are the caller's).
    """
    allow_long_fields()
    reader = csv.reader(lines, strict=True)
    header: list[str] | None = None
    try:
        for row in reader:
            if not row or (len(row) == 1 and row[0] == "" and header is not None):
                continue  # blank line
            if header is None:
                header = _check_header(row, source, "csv")
                continue
            if len(row) != len(header):
                raise PoolFormatError(f"{source}, line {reader.line_num}: expected {len(header)} "
                                      f"comma-separated fields (header {header}), got {len(row)}")
            yield f"line {reader.line_num}", dict(zip(header, row, strict=True))
    except csv.Error as exc:
        raise PoolFormatError(f"{source}, line {reader.line_num}: malformed CSV: {exc}") from None
    if header is None:
        raise PoolFormatError(f"{source}: empty file (expected a header row)")


def _check_header(row: list[str], source: str, fmt: str) -> list[str]:
    other = {"csv": ("\t", "tsv", "tabs"), "tsv": (",", "csv", "commas")}[fmt]
    if len(row) == 1 and other[0] in row[0]:  # e.g. a TSV file read as CSV
        raise PoolFormatError(f"{source}, line 1: the header is one column that holds "
                              f"{other[2]} ({row[0][:60]!r}): a {other[1].upper()} file read as "
                              f"{fmt.upper()}? Name the format with --pool-format {other[1]} "
                              f"(format={other[1]!r} in Python)")
    header = [h.strip() for h in row]
    if any(not h for h in header):
        raise PoolFormatError(f"{source}, line 1: header has an empty column name: {row}")
    dupes = repeated(header)
    if dupes:
        raise PoolFormatError(f"{source}, line 1: header repeats column(s) {dupes}")
    return header


def _read_tsv(text: str, source: str) -> Iterator[tuple[str, Record]]:
    return read_tsv_lines(split_lines(text), source)


def read_tsv_lines(lines: Iterable[tuple[int, str]],
                   source: str) -> Iterator[tuple[str, Record]]:
    """A TSV pool's records as :func:`parse_bytes` reads them, from numbered lines
    (:func:`split_lines` of the text, :func:`file_lines` of a file read one line at a
    time). Raises as :func:`read_csv_lines`."""
    header: list[str] | None = None
    for n, line in lines:
        if not line:
            continue
        cells = line.split("\t")
        if header is None:
            header = _check_header(cells, source, "tsv")
            continue
        if len(cells) != len(header):
            raise PoolFormatError(f"{source}, line {n}: expected {len(header)} tab-separated "
                                  f"fields (header {header}), got {len(cells)}")
        yield f"line {n}", dict(zip(header, cells, strict=True))
    if header is None:
        raise PoolFormatError(f"{source}: empty file (expected a header row)")


def read_jsonl(text: str, source: str, error: type[ValueError] = PoolFormatError,
               ) -> Iterator[tuple[str, Record]]:
    """One JSON object per line (split on ``\\n``, blank lines skipped): ``("line N",
    record)``; a bad line raises ``error`` naming ``source`` and the line."""
    return read_jsonl_lines(split_lines(text), source, error)


def read_jsonl_lines(lines: Iterable[tuple[int, str]], source: str,
                     error: type[ValueError] = PoolFormatError,
                     ) -> Iterator[tuple[str, Record]]:
    """:func:`read_jsonl` of numbered lines (:func:`split_lines` of the text,
    :func:`file_lines` of a file read one line at a time)."""
    for n, line in lines:
        if not line.strip():
            continue
        record = _json.loads(line, f"{source}, line {n}", error)
        if not isinstance(record, dict):
            raise error(f"{source}, line {n}: expected a JSON object, "
                        f"got {type(record).__name__}")
        yield f"line {n}", record


def _read_json(text: str, source: str) -> Iterator[tuple[str, Record]]:
    data = _json.loads(text, f"{source}, file", PoolFormatError)
    if not isinstance(data, list):
        raise PoolFormatError(f"{source}: expected a JSON array of objects, "
                              f"got {type(data).__name__} (for one object per line use .jsonl)")
    for i, record in enumerate(data):
        if not isinstance(record, dict):
            raise PoolFormatError(f"{source}, record {i}: expected a JSON object, "
                                  f"got {type(record).__name__}")
        yield f"record {i}", record


def _read_fpb(text: str, source: str) -> Iterator[tuple[str, Record]]:
    for n, line in split_lines(text):
        if not line.strip():
            continue
        sentence, at, label = line.rpartition("@")
        if not at:
            raise PoolFormatError(f"{source}, line {n}: expected 'sentence@label', found no '@'")
        if not label.strip():
            raise PoolFormatError(f"{source}, line {n}: empty label after the last '@'")
        yield f"line {n}", {"text": sentence, "label": label.strip()}


def arrow_message(exc: BaseException) -> str:
    """pyarrow's message about bytes read from a file, without its name for the buffer
    (``Could not open Parquet input source '<Buffer>'``, which reads as another file: QA);
    the caller names the file."""
    return str(exc).replace("Could not open Parquet input source '<Buffer>': ", "") \
        .replace("'<Buffer>'", "the file")


def _read_parquet(data: bytes, source: str) -> Iterator[tuple[str, Record]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError(f"{source}: reading Parquet needs pyarrow "
                                     f"(pip install 'activetest[parquet]')") from None
    try:
        rows = pq.read_table(pa.BufferReader(data)).to_pylist()
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise PoolFormatError(f"{source}: not a readable Parquet file: "
                              f"{arrow_message(exc)}") from None
    for i, row in enumerate(rows):
        yield f"row {i + 1}", row  # counted from 1, as a table's rows are


_TEXT_READERS = {"csv": _read_csv, "tsv": _read_tsv, "jsonl": read_jsonl, "json": _read_json,
                 "fpb": _read_fpb}


#: The most a pool read from a pipe (not a regular file) may hold.
MAX_STREAM_BYTES = 1 << 30


def missing_file(path: Path | str, what: str) -> str:
    """How every command says an input file is missing: the path, that nothing is
    there, a pattern the shell passed on unexpanded (it matched nothing), and what the
    file was for, as ``import`` says it (QA: other commands said "label file not found:
    PATH", and ``--examples`` was "pool file not found")."""
    head = f"{path}: no such file or folder ("
    if has_glob_chars(path):
        head += "no file matches this pattern: the shell passed it on as it is; "
    return f"{head}given as the {what})"


def read_file(path: Path, what: str = "pool file", kinds: str = "CSV, TSV, JSONL, JSON, "
              "Parquet, FPB") -> bytes:
    """The bytes of an input file: a regular file whole, a pipe up to
    :data:`MAX_STREAM_BYTES`; a folder or a device (``/dev/zero``) is refused.

    Raises:
        FileNotFoundError: no such file.
        PoolFormatError: a folder, a device or socket, or an endless pipe (the message
            names the file and what was expected: a ``what`` of ``kinds``).
    """
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(missing_file(path, what)) from None
    if stat.S_ISDIR(mode):
        raise PoolFormatError(f"{path} is a folder, not a file: give a {what} ({kinds})")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise PoolFormatError(f"{path} is not a regular file (a device or socket): give a "
                              f"{what} ({kinds})")
    if stat.S_ISREG(mode):
        try:
            return path.read_bytes()
        except OSError as exc:  # a read error names no file (QA: "error: Input/output error")
            raise _named(exc, path) from None
    with path.open("rb") as f:  # a pipe: bounded, an endless stream is refused
        data = f.read(MAX_STREAM_BYTES + 1)
    if len(data) > MAX_STREAM_BYTES:
        raise PoolFormatError(f"{path}: more than {MAX_STREAM_BYTES >> 20} MiB from a pipe; "
                              f"write the {what} to a file first")
    return data


def _named(exc: OSError, path: Path | str) -> OSError:
    """``exc`` naming ``path`` where it names no file (an error while reading, e.g. EIO:
    the command's one message would not say which file)."""
    if exc.filename or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def files_under(root: str | Path) -> tuple[list[Path], list[Path]]:
    """Every file under the folder ``root``, recursively, in name order, following links
    to folders (QA: ``Path.rglob`` passes over a linked folder without a word, so a
    folder of model runs assembled with links lost those runs); each folder is read once
    (a link back up, or to a folder already read, is not followed again). Also the
    entries that are neither a folder nor a readable file (a broken link, a link loop, a
    device or pipe), in name order, for the caller to name.

    Raises:
        OSError: a folder under ``root`` that cannot be listed (named).
    """
    import os

    def fail(exc: OSError) -> None:
        raise _named(exc, getattr(exc, "filename", None) or root)

    def key(d: str) -> tuple[int, int]:
        st = os.stat(d)
        return st.st_dev, st.st_ino

    seen = {key(str(root))}
    files: list[Path] = []
    odd: list[Path] = []
    for top, dirs, names in os.walk(root, followlinks=True, onerror=fail):
        keep = []
        for d in sorted(dirs):
            try:
                k = key(os.path.join(top, d))
            except OSError:
                odd.append(Path(top, d))
                continue
            if k not in seen:
                seen.add(k)
                keep.append(d)
        dirs[:] = keep
        for n in names:
            f = Path(top, n)
            (files if f.is_file() else odd).append(f)
    return sorted(files), sorted(odd)


def gunzip_if_gzip(raw: bytes, path: Path | str) -> bytes:
    """``raw`` decompressed when it starts with gzip's magic bytes (whatever the name
    says), else unchanged.

    Raises:
        ValueError: gzip's magic but not a valid gzip stream.
    """
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: not a valid gzip file: {exc}") from None


def decode_utf8(raw: bytes, path: Path | str) -> str:
    """``raw`` as UTF-8 text (a BOM dropped).

    Raises:
        ValueError: not UTF-8; the message names the line and byte.
    """
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}: line {line}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def read_bytes(path: Path) -> bytes:
    """The bytes of a pool file (:func:`read_file`), decompressed when its name ends in
    ``.gz``.

    Raises:
        FileNotFoundError: no such file.
        PoolFormatError: not a file that can be read whole (see :func:`read_file`), or
            a ``.gz`` name on bytes that are not a valid gzip stream.
    """
    data = read_file(path)
    if path.name.lower().endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise PoolFormatError(f"{path}: not a valid gzip file: {exc}") from None
    return data


def parse_bytes(data: bytes, source: str, fmt: str,
                 encoding: str | None) -> Iterator[tuple[str, Record]]:
    """The ``(where, record)`` pairs of a pool file's bytes in format ``fmt`` (one of
    :data:`FORMATS` but ``lmeval``), ``where`` like ``"line 7"``; a text format is
    decoded with ``encoding`` (default UTF-8, ISO-8859-1 for ``fpb``). ``source`` names
    the file in messages.

    Raises:
        PoolFormatError: an unknown format, undecodable bytes, a NUL character (a binary
            file or the wrong encoding), or a malformed record (naming the line).
    """
    if fmt == "parquet":
        return _read_parquet(data, source)
    if fmt not in _TEXT_READERS:
        raise PoolFormatError(f"{source}: unknown format {fmt!r}; expected one of "
                              f"{', '.join(FORMATS)}")
    enc = encoding or ("iso-8859-1" if fmt == "fpb" else "utf-8")
    if "\x00" in (text := decode(data, source, enc)):
        line = text[: text.index("\x00")].count("\n") + 1
        raise PoolFormatError(f"{source}, line {line}: NUL character (binary file, or the "
                              f"wrong encoding?)")
    return _TEXT_READERS[fmt](text, source)


def read_records(path: str | Path, *, format: str | None = None,
                 encoding: str | None = None) -> list[tuple[str, Record]]:
    """Raw records of a pool file: ``(where, record)`` pairs, ``where`` like ``"line 7"``.

    ``encoding`` defaults to UTF-8 (a byte-order mark is skipped), ISO-8859-1 for
    ``fpb``. Raises :class:`PoolFormatError` naming the file and line for
    malformed input, ``FileNotFoundError`` if the file is absent.
    """
    p = Path(path)
    fmt = (format or detect_format(p)).lower()
    return list(parse_bytes(read_bytes(p), str(p), fmt, encoding))


# --------------------------------------------------------------------------- tables of scores

# Prediction tables (models/table.py) and answer tables (formats/answers.py) are read
# with their own rules: TSV is quoted like CSV (a spreadsheet's export, not GLUE's),
# lines are Python's (``str.splitlines``), and messages say ``<file>: line N: ...``.


def header_table(text: str, source: str, delimiter: str, *,
                 width: str = "{cells} fields, header has {header}",
                 ) -> tuple[list[str], list[tuple[str, dict[str, str]]]]:
    """A quoted CSV (or ``delimiter``-separated) text with a header row: the column names
    (stripped) and ``("line N", row)`` per row; blank rows are skipped.

    Raises:
        ValueError: no header, repeated column names, a row of another width (``width``
            is the message, with ``{cells}`` and ``{header}`` counts), or malformed quoting;
            each names ``source`` and the line.
    """
    header, rows = header_rows(io.StringIO(text, newline=""), source, delimiter, width=width)
    return header, list(rows)


def header_rows(lines: Iterable[str], source: str, delimiter: str, *,
                width: str = "{cells} fields, header has {header}",
                ) -> tuple[list[str], Iterator[tuple[str, dict[str, str]]]]:
    """:func:`header_table` one row at a time: the header read (and checked) now, the
    rows as they are read from ``lines`` (a file opened with ``newline=""``, or a
    ``StringIO`` of the text), so a file is read in constant memory.

    Raises:
        ValueError: as :func:`header_table`; a problem in a row when that row is read.
    """
    header, reader = _header(lines, source, delimiter)
    return header, _header_rows(reader, header, source, width)


def check_header_rows(lines: Iterable[str], source: str, delimiter: str, *,
                      width: str = "{cells} fields, header has {header}") -> list[str]:
    """:func:`header_rows`'s checks of the header and of every row, nothing kept (a
    row's width, malformed quoting): its header, once every row is read. No dict or
    name per row: a 2e5-row CSV table of three columns is scanned by
    :func:`activetest.models.table_stream.refuse_file_problems` in 0.08 CPU-s (its
    bytes' UTF-8 check included), its rows read by :func:`header_rows` alone took 0.29
    (Intel Xeon, 2 cores shared with other work, 2026-12-07).

    Raises:
        ValueError: as :func:`header_rows` raises it for the first row it refuses.
    """
    header, reader = _header(lines, source, delimiter)
    n = len(header)
    last = reader.line_num  # the line before the record read next
    try:
        for cells in reader:
            if len(cells) != n and cells and not all(not c.strip() for c in cells):
                raise ValueError(_wrong_width(source, last + 1, reader.line_num, cells, n,
                                              width, delimiter))
            last = reader.line_num
    except csv.Error as exc:
        raise ValueError(f"{source}: line {reader.line_num}: malformed CSV ({exc})") from None
    return header


def _wrong_width(source: str, start: int, end: int, cells: Sequence[str], n: int,
                 width: str, delimiter: str) -> str:
    """The message of a CSV record of ``len(cells)`` fields where the header has ``n``
    (``width``: its words), the record read from line ``start`` to line ``end``: named by
    its last line; where it spans lines (a quoted field holds line breaks: a quote that
    opens a field and closes lines later, or never, so the rest of the file is one
    field), also by the line it begins at and the text read there (since 2026-12-08: a
    quote left open at a row's start was named by the file's last line only, whose row
    the reader had not met)."""
    msg = f"{source}: line {end}: " + width.format(cells=len(cells), header=n)
    if end <= start:
        return msg
    seen = delimiter.join(cells)
    seen = seen[:60] + "..." * (len(seen) > 60)
    return (f"{msg} (the record begun at line {start} runs to line {end}: a quoted field "
            f"holds the line breaks between; it reads {seen!r})")


def _header(lines: Iterable[str], source: str, delimiter: str) -> tuple[list[str], Any]:
    """The checked header of a CSV text and the reader of its rows after it."""
    allow_long_fields()
    reader = csv.reader(lines, delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise ValueError(f"{source}: line {reader.line_num}: malformed CSV ({exc})") from None
    if header is None or not any(h.strip() for h in header):
        raise ValueError(f"{source}: empty file (no header row)")
    header = [h.strip() for h in header]
    dup = repeated(header)
    if dup:
        raise ValueError(f"{source}: line 1: duplicate column names {dup}")
    return header, reader


def rows_after_header(lines: Iterable[str], header: list[str], source: str, delimiter: str,
                      *, lines_before: int,
                      width: str = "{cells} fields, header has {header}",
                      ) -> Iterator[tuple[str, dict[str, str]]]:
    """:func:`header_rows`'s rows of a CSV text read from a record's start on (``lines``:
    the text from there, opened with ``newline=""``), the header (``header``, as
    :func:`header_rows` gave it) read before: each row named by its line in the whole
    text, ``lines_before`` lines (the header's among them) being before ``lines``' first.

    Raises:
        ValueError: as :func:`header_rows`, when the row is read.
    """
    allow_long_fields()
    return _header_rows(csv.reader(lines, delimiter=delimiter), header, source, width,
                        lines_before)


def _header_rows(reader: Any, header: list[str], source: str, width: str,
                 lines_before: int = 0) -> Iterator[tuple[str, dict[str, str]]]:
    last = reader.line_num  # the line before the record read next
    try:
        for cells in reader:
            if not cells or all(not c.strip() for c in cells):
                last = reader.line_num
                continue
            line = f"line {reader.line_num + lines_before}"
            if len(cells) != len(header):
                raise ValueError(_wrong_width(
                    source, last + 1 + lines_before, reader.line_num + lines_before, cells,
                    len(header), width, reader.dialect.delimiter))
            yield line, dict(zip(header, cells, strict=True))
            last = reader.line_num
    except csv.Error as exc:
        raise ValueError(f"{source}: line {reader.line_num + lines_before}: malformed CSV "
                         f"({exc})") from None


def json_lines(text: str, source: str) -> list[tuple[str, dict[str, Any]]]:
    """One JSON object per line (split on ``\n`` only, as JSON Lines and the pool reader
split; a ``\r`` before it dropped; blank ones skipped): ``("line N", record)``. Not
Python's ``splitlines``, which also splits inside a JSON string holding a raw U+2028,
U+0085 or form feed (valid JSON: QA saw such a table refused while the same rows in the
pool's order streamed).

    Raises:
        ValueError: a line that is not JSON or not an object, or an object that repeats
            a key (which value is meant? as the pool reader refuses it: Python's parser
            keeps the last one), naming ``source``, the line (and the key).
    """
    return list(iter_json_lines(split_lines(text), source))


def file_lines(f: Iterable[str], start: int = 1) -> Iterator[tuple[int, str]]:
    """:func:`split_lines` of a text file opened with ``newline="\n"`` (split on ``\n``
    only, nothing translated), read one line at a time; ``start``: the first line's
    number (a file read from a line's start on)."""
    for n, line in enumerate(f, start=start):
        line = line[:-1] if line.endswith("\n") else line
        yield n, line[:-1] if line.endswith("\r") else line


def iter_json_lines(lines: Iterable[tuple[int, str]],
                    source: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """:func:`json_lines` one record at a time, of numbered lines (:func:`split_lines` of
    a text, :func:`file_lines` of a file read in constant memory).

    Raises:
        ValueError: as :func:`json_lines`, when the line is read.
    """
    for lineno, line in lines:
        if not line.strip():
            continue
        try:
            rec = json.loads(line, object_pairs_hook=object_without_repeats)
        except RepeatedKeyError as exc:
            raise ValueError(f"{source}: line {lineno}: {repeated_key(exc.key)}") from None
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{source}: line {lineno}: not valid JSON ({str(exc)[:80]})") \
                from None
        if not isinstance(rec, dict):
            raise ValueError(f"{source}: line {lineno}: expected a JSON object, got "
                             f"{type(rec).__name__}")
        yield f"line {lineno}", rec
