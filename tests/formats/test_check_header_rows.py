"""``check_header_rows`` (the scan a streamed ``init`` makes of a CSV or TSV table before
it refuses a row) refuses exactly what reading every row with ``header_rows`` refuses,
with its message, and accepts exactly what it accepts."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activetest.formats.tables import check_header_rows, header_rows, rows_after_header


def _read_all(text: str, delimiter: str) -> str:
    try:
        header, rows = header_rows(io.StringIO(text, newline=""), "t.csv", delimiter)
        for _ in rows:
            pass
    except ValueError as exc:
        return f"refused: {exc}"
    return f"read: {header}"


def _scan(text: str, delimiter: str) -> str:
    try:
        header = check_header_rows(io.StringIO(text, newline=""), "t.csv", delimiter)
    except ValueError as exc:
        return f"refused: {exc}"
    return f"read: {header}"


_TEXTS = [
    "id,a,b\nx,1,2\n",
    "id,a,b\nx,1\n",  # a row too short
    "id,a,b\nx,1,2,3\n",  # too long
    "id,a,b\n\n , \nx,1,2\n",  # blank rows, one of spaces (skipped)
    "id,a,b\nx,1,2\n,,\n",  # a row of empty cells, the header's width
    'id,a,b\n"x,1,2\n',  # an unclosed quote
    "id,a,b\nx,\"1\"2,3\n",  # a quote inside a field
    "id,a,id\nx,1,2\n",  # a column named twice
    "",  # no header
    " , \n",
    "id\ta\tb\nx\t1\t2\n",
    "id,a,b\r\nx,1,2\r\ny,3\r\n",
    'id,a,b\nx,1,2\n\n"y,3,4\nz,5,6\n\nw,7,8\n',  # a quote at a row's start, never closed
    'id,a,b\nx,1,2\n"y,3,4\r\nz,5,6",7\nw,8,9\n',  # closed a line on: a row of 2
]


@pytest.mark.parametrize("delimiter", [",", "\t"])
@pytest.mark.parametrize("text", _TEXTS)
def test_the_scan_refuses_what_reading_every_row_refuses(text: str, delimiter: str) -> None:
    assert _scan(text, delimiter) == _read_all(text, delimiter)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab ,\t"\n\r')), max_size=40))
def test_the_scan_and_the_rows_agree_on_any_text(text: str) -> None:
    for delimiter in (",", "\t"):
        assert _scan(text, delimiter) == _read_all(text, delimiter)


def test_a_record_over_several_lines_is_named_by_where_it_begins_and_its_text() -> None:
    """A quote at a row's start left open: the record runs to the file's end, one field;
    its message names the line it ends at (the reader's), the line it begins at (the
    row's) and the text read there (since 2026-12-08: only the file's last line, whose
    row the reader never met), the same read from a row's start on (the streamed
    ``init``'s reading from a block's start); a record of one line as before."""
    text = 'id,a,b\nx,1,2\n\n"y,3,4\nz,5,6\nw,7,8\n'
    want = ("refused: t.csv: line 6: 1 fields, header has 3 (the record begun at line 4 "
            "runs to line 6: a quoted field holds the line breaks between; it reads "
            "'y,3,4\\nz,5,6\\nw,7,8\\n')")
    assert _scan(text, ",") == _read_all(text, ",") == want
    rest = io.StringIO(text[text.index("\n") + 1:], newline="")
    with pytest.raises(ValueError) as err:
        for _ in rows_after_header(rest, ["id", "a", "b"], "t.csv", ",", lines_before=1):
            pass
    assert f"refused: {err.value}" == want
    long = "id,a,b\n" + '"' + ",".join(["v" * 30] * 3) + "\nx,1,2\n"
    assert _scan(long, ",").endswith(f"it reads '{'v' * 30},{'v' * 29}...')")
    assert _scan("id,a,b\nx,1\n", ",") == "refused: t.csv: line 2: 2 fields, header has 3"
