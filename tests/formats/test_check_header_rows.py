"""``check_header_rows`` (the scan a streamed ``init`` makes of a CSV or TSV table before
it refuses a row) refuses exactly what reading every row with ``header_rows`` refuses,
with its message, and accepts exactly what it accepts."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activetest.formats.tables import check_header_rows, header_rows


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
