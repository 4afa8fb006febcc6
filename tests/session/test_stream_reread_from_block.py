"""A streamed ``init`` that refuses a CSV, TSV or JSONL table's row names its line by
reading the table again from the block holding the row, not from its first row
(docs/pool-scale.md, "`init` in chunks"; :mod:`activetest.session.stream_marks`).

At 1e7-1e8 rows a refusal near the table's end read the whole table a second time, row by
row, to count the lines before it (2026-12-07). Each case here is made in real files and
the streamed refusal compared word for word with the general path's on the same files
(the line named is the same), and the rows read again counted through a hook on the
reader of rows (:func:`activetest.models.table.stream_rows`): a late block's row is read
from its block's start, a first block's from the first row. Text that makes counting
lines from bytes hard (``\\r\\n`` and lone ``\\r`` line ends, blank lines, a gzip stream,
a quoted field holding a line break, a byte order mark) is among the cases.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import general_and_streamed_refusals

from activetest.models import table as table_mod
from activetest.session import stream_base, stream_tables

N = 6000  # rows of about 470 bytes: a CSV text of 2.8 MB, marked once a MiB
PAD = "p" * 420  # a column neither reader takes (include_columns), for bytes a row


def _files(folder: Path, fmt: str, spoil: tuple[str, int], *, newline: str = "\n",
           blank: bool = False, quoted: bool = False, gz: bool = False, bom: bool = False
           ) -> tuple[Path, Path, Path]:
    """An sst2 pool of :data:`N` items (CSV) and two tables of log-probs in the pool's
    order, in ``fmt`` (``csv``, ``tsv``, ``jsonl``, ``parquet``), the surrogate spoiled
    at one row (``spoil``: ``nan``, ``nonorm`` a row that does not normalise, ``dup``
    the id of the row before, or, in a CSV or TSV text, ``open`` a quote at the row's start
    never closed, ``closed`` one closed at the end of the row 3 rows on). ``newline``:
    each text line's end (``"\\r"`` alternating with ``"\\r\\n"`` where ``"mixed"``);
    ``blank``: an empty line after every 97th row; ``quoted``: the 10th row's padding a
    quoted field holding a line break; ``gz``: the tables gzipped (names unchanged);
    ``bom``: the text begun with a UTF-8 byte order mark."""
    rng = np.random.default_rng(7)
    z = rng.normal(size=(2, N, 2))
    lp = z - np.logaddexp(z[..., :1], z[..., 1:])
    pool = folder / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(
        f"it{i},text {i},{('negative', 'positive')[i % 2]}\n" for i in range(N)))
    out = [pool]
    what, at = spoil
    for k, name in enumerate(("surrogate", "target")):
        rows: list[list[Any]] = [[f"it{i}", float(lp[k, i, 0]), float(lp[k, i, 1])]
                                 for i in range(N)]
        if name == "surrogate":
            if what == "nan":
                rows[at][1] = float("nan")
            elif what == "nonorm":
                rows[at][1] = 0.5
            elif what in ("open", "closed"):  # (a quote opened at the row's start)
                pass
            else:
                rows[at][0] = rows[at - 1][0]
        path = folder / f"{name}.{fmt}"
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({"id": [r[0] for r in rows],
                                     "negative": [r[1] for r in rows],
                                     "positive": [r[2] for r in rows]}), path,
                           row_group_size=1000)
            out.append(path)
            continue
        if fmt == "json":  # (a character beyond ASCII a record: marks count characters)
            text = "[" + ",\n".join(json.dumps({"id": r[0], "negative": r[1], "positive": r[2],
                                                "pad": PAD + "\u00e9"}, ensure_ascii=False)
                                     for r in rows) + "]\n"
            data = ("\ufeff" * bom + text).encode()
            path.write_bytes(gzip.compress(data) if gz else data)
            out.append(path)
            continue
        if fmt == "jsonl":
            lines = [json.dumps({"id": r[0], "negative": r[1], "positive": r[2],
                                 "pad": PAD}) for r in rows]
        else:
            sep = "," if fmt == "csv" else "\t"
            lines = [sep.join(["id", "negative", "positive", "pad"])]
            for i, r in enumerate(rows):
                pad = f'"{PAD[:20]}\n{PAD[20:]}"' if quoted and i == 10 else PAD
                lines.append(sep.join([r[0], repr(r[1]), repr(r[2]), pad]))
            if name == "surrogate" and what in ("open", "closed"):
                lines[at + 1] = '"' + lines[at + 1]  # (never closed, or 3 rows on)
                lines[at + 4] += '"' * (what == "closed")
        text = ""
        for i, line in enumerate(lines):
            end = ("\r" if i % 2 else "\r\n") if newline == "mixed" else newline
            text += line + end + (end if blank and i % 97 == 96 else "")
        data = ("\ufeff" * bom + text).encode()
        path.write_bytes(gzip.compress(data) if gz else data)
        out.append(path)
    return out[0], out[1], out[2]


def _reread_counted(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Each read of a table's rows again, as ``[its first row, the rows read]``."""
    reads: list[list[int]] = []
    real = table_mod.stream_rows

    def counted(*a: Any, **k: Any) -> Any:
        mark = k.get("mark")
        reads.append([0 if mark is None else mark.row, 0])
        for got in real(*a, **k):
            reads[-1][1] += 1
            yield got

    monkeypatch.setattr(table_mod, "stream_rows", counted)
    return reads


def _line(fmt: str, row: int, blank: bool = False, quoted: bool = False) -> str:
    """How the general path names the table's row ``row`` (from 0)."""
    if fmt == "parquet":
        return f"row {row + 1}"
    if fmt == "json":
        return f"record {row}"
    line = row + (2 if fmt != "jsonl" else 1)
    line += (row + 1) // 97 if blank else 0  # (an empty line after every 97th line)
    return f"line {line + (quoted and row > 10)}"


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet"])
@pytest.mark.parametrize("what", ["nan", "nonorm", "dup"])
@pytest.mark.parametrize("at", [5, N - 7])
def test_a_refused_row_is_named_as_the_general_path_names_it(
        fmt: str, what: str, at: int, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A row refused in the table's first block or its last: the same words as the
    general path; the rows read again from the block holding the row (a late one: not
    from the first row, at most a block's rows), none for a Parquet table (its rows are
    named by their numbers)."""
    monkeypatch.setattr(stream_base, "BLOCK", 512)
    monkeypatch.setattr(stream_tables, "JSONL_BLOCK", 1 << 20)
    files = _files(tmp_path, fmt, (what, at))
    reads = _reread_counted(monkeypatch)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(f"{files[1]}: {_line(fmt, at)}: "), streamed
    if fmt == "parquet":
        assert reads == []
        return
    assert reads, "the row's line was not read again"
    first, count = reads[0]
    if at < 100:
        assert first == 0
    elif fmt == "json":  # a block of records (BLOCK, 512 here) a mark (since 2026-12-07)
        assert 0 < first <= at and at - first < 512 and count <= 512, reads
    else:  # a MiB of about 470-byte rows: 2,231 rows a block
        assert 0 < first <= at and at - first < 2300 and count <= 2300, reads


@pytest.mark.parametrize("case", ["crlf", "mixed", "blank", "gz", "quoted", "gzjsonl", "bom",
                                  "bomjsonl", "gzjson", "bomjson"])
def test_lines_counted_from_bytes_are_the_general_paths(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Line ends of each kind, blank lines, a gzipped table, a byte order mark, a quoted
    field holding a line break: a late row refused (a NaN) is named by the general path's line, read
    again from its block (from the first row where a quote was met before it)."""
    monkeypatch.setattr(stream_base, "BLOCK", 512)
    monkeypatch.setattr(stream_tables, "JSONL_BLOCK", 1 << 20)
    fmt = case[-5:] if case.endswith("jsonl") else case[-4:] if case.endswith("json") else "csv"
    at = N - 7
    files = _files(tmp_path, fmt, ("nan", at),
                   newline={"crlf": "\r\n", "mixed": "mixed"}.get(case, "\n"),
                   blank=case == "blank", quoted=case == "quoted",
                   gz=case in ("gz", "gzjsonl"), bom=case.startswith("bom"))
    reads = _reread_counted(monkeypatch)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    words = _line(fmt, at, blank=case == "blank", quoted=case == "quoted")
    if fmt == "json":
        words = _line(fmt, at)
    assert streamed.startswith(f"{files[1]}: {words}: column 'negative'"), streamed
    first, count = reads[0]
    if case == "quoted":
        assert first == 0 and count == at + 1, reads
    else:
        assert 0 < first <= at and count <= 2300, reads


def _nonorm_table(folder: Path, n: int = 60, at: int = 50) -> tuple[Any, list[bytes]]:
    """A CSV table of log-probs (ids ``it0``...) whose row ``at`` does not normalise, as
    the stream reads it (:func:`stream_tables.streamable_table`), and its lines' bytes."""
    from activetest.data.builtin import get_task

    half = "-0.6931471805599453"
    lines = [b"id,negative,positive\n"] + [
        f"it{i},{-0.5 if i == at else half},{half}\n".encode() for i in range(n)]
    path = folder / "sur.csv"
    path.write_bytes(b"".join(lines))
    t = stream_tables.streamable_table(f"table:{path}", get_task("sst2"))
    assert t is not None
    return t, lines


def _mark(t: Any, row: int, offset: int, lines: int) -> None:
    """Note one block start for the table ``t``: its row ``row`` (from 0) said to start at
    the byte ``offset``, after ``lines`` lines (a wrong one, made by hand)."""
    from activetest.models.table_read import RowMark
    from activetest.session.stream_marks import Marks

    marks = Marks()
    marks.add(RowMark(row, offset, lines))
    stream_tables._MARKS[t] = marks


def test_a_row_reached_with_another_id_than_streamed_is_an_internal_error(
        tmp_path: Path) -> None:
    """A refused row's line is found by reading the table again from a block's start; a
    wrong start (row 40 said to begin at row 41's line) reaches other rows there: said as
    an internal error naming both ids (of the first row streamed that is reached), never
    a line (``line 53``, row 51's) named for row 50 (the unit: the row names of
    :func:`stream_tables.converted_rows`)."""
    t, lines = _nonorm_table(tmp_path)
    ids = np.array([f"it{i}" for i in range(48, 60)], dtype=object)
    _mark(t, 40, len(b"".join(lines[:42])), 42)  # row 41's line (43: the header's first)
    where = stream_tables._Lines(t, 48, ids)
    with pytest.raises(stream_base.StreamMismatchError) as err:
        where[2]
    msg = str(err.value)
    assert msg.startswith("internal error: ") and "row 49 of the table" in msg, msg
    assert "'it48' as streamed, but 'it49' (line 51)" in msg, msg
    assert "row 41 (a block's start" in msg and "no line is named for row 51" in msg, msg
    vals = np.log(np.full((len(ids), 2), 0.5))
    vals[2, 0] = -0.5
    with pytest.raises(stream_base.StreamMismatchError):  # not a refusal naming line 53
        stream_tables.converted_rows(vals, ids, t, 48)
    _mark(t, 40, len(b"".join(lines[:41])), 41)  # the right start: the row's own line
    assert where[2] == "line 52"
    _mark(t, 50, len(b"".join(lines[:52])), 52)  # a start at the row: row 51's
    with pytest.raises(stream_base.StreamMismatchError, match="'it50' as streamed, but 'it51'"):
        where[2]


def test_a_wrong_start_inside_the_header_is_an_internal_error(tmp_path: Path) -> None:
    """A wrong block start inside the header (its text from its second byte read as a
    row, id ``d``): an internal error naming the row streamed there, never the general
    path's refusal of that text's values naming ``line 1``."""
    t, _ = _nonorm_table(tmp_path)
    ids = np.array([f"it{i}" for i in range(48, 60)], dtype=object)
    _mark(t, 48, 1, 0)
    with pytest.raises(stream_base.StreamMismatchError) as err:
        stream_tables._Lines(t, 48, ids)[2]
    msg = str(err.value)
    assert "'it48' as streamed, but 'd' (line 1)" in msg and "byte 1" in msg, msg


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@pytest.mark.parametrize("what", ["open", "closed"])
@pytest.mark.parametrize("at", [5, N - 700])
def test_a_quote_left_open_at_a_rows_start_is_named_from_its_block(
        fmt: str, what: str, at: int, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A quote at a row's start that never closes (the rest of the file one field) or
    closes rows later: pyarrow refuses the block without saying which row, and the
    stream names the malformed record as the general path does (the same words: the
    file, the line the record ends at, the line it begins at, the row's, and the text
    read there) from the start of the block before it, not by reading the table again
    from its first row, row by row, then scanning it whole (2026-12-08); a row in the
    first block, with no block start before it, by the general path's scan from the
    first row only."""
    from activetest.formats import tables as tables_mod
    from activetest.models import table_stream

    monkeypatch.setattr(stream_base, "BLOCK", 512)
    files = _files(tmp_path, fmt, (what, at))
    reads = _reread_counted(monkeypatch)
    scans: list[int] = []
    real_scan = table_stream.refuse_file_problems
    real_after = tables_mod.rows_after_header

    def scan(*a: Any, **k: Any) -> Any:
        scans.append(0)
        return real_scan(*a, **k)

    def after(*a: Any, **k: Any) -> Any:
        scans.append(k["lines_before"])
        return real_after(*a, **k)

    monkeypatch.setattr(table_stream, "refuse_file_problems", scan)
    monkeypatch.setattr(tables_mod, "rows_after_header", after)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    end = N + 1 if what == "open" else at + 5
    sep = "," if fmt == "csv" else "\\t"  # (as repr writes it)
    assert streamed.startswith(
        f"{files[1]}: line {end}: 1 fields, header has 4 (the record begun at line {at + 2} "
        f"runs to line {end}: a quoted field holds the line breaks between; it reads "
        f"'it{at}{sep}"), streamed
    assert reads == [], "read again row by row"
    if at < 100:  # (no block's start before it: the general path's scan, once)
        assert scans == [0], scans
    else:  # one reading, from a block's start (a MiB of about 470-byte rows) on
        assert len(scans) == 1 and at + 2 - 2300 < scans[0] <= at + 1, scans
