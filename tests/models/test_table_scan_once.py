"""The scan for a table's problems named before any row
(:func:`activetest.models.table_stream.refuse_file_problems`, called by a streamed
``init`` before it refuses a row) reads a good file once, not twice (2026-12-07: every
byte decoded in one pass, the text read again in a second), and still names a problem
of the bytes anywhere before a malformed row, as the table reader does. Real files; the
bytes read counted through the opener of the table's text.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO, Any

import pytest

from activetest.models import table_stream
from activetest.models.table import read_table

N = 2000


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that gets one entry per opening of a table's text by the scan."""
    opened: list[int] = []
    real = table_stream.open_text

    def counted(p: Path, **k: Any) -> IO[str]:
        opened.append(1)
        return real(p, **k)

    monkeypatch.setattr(table_stream, "open_text", counted)
    return opened


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json"])
@pytest.mark.parametrize("gz", [False, True])
def test_a_good_table_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   fmt: str, gz: bool) -> None:
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        text = sep.join(["id", "a", "b"]) + "\n" + "".join(
            sep.join([f"it{i}", "-0.5", "-1.5"]) + "\n" for i in range(N))
    elif fmt == "jsonl":
        text = "".join(f'{{"id": "it{i}", "a": -0.5, "b": -1.5}}\n' for i in range(N))
    else:
        text = "[" + ",".join(f'{{"id": "it{i}", "a": -0.5, "b": -1.5}}'
                              for i in range(N)) + "]"
    path = tmp_path / f"t.{fmt}"
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    opened = _counting(monkeypatch)
    table_stream.refuse_file_problems(path, fmt, ["a", "b"], "id")
    assert len(opened) == 1


def test_a_bad_byte_after_a_malformed_row_is_named_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row with a cell too many at line 3 and a byte that is not UTF-8 at the end: the
    byte is named, as the table reader names it (it decodes the file first)."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"id,a,b\nit0,-0.5,-1.5\nit1,-0.5,-1.5,9\n"
                     + b"".join(b"it%d,-0.5,-1.5\n" % i for i in range(2, N)) + b"it\xff,0,0\n")
    with pytest.raises(ValueError) as general:
        read_table(path, columns=["a", "b"], id_column="id", format="csv")
    with pytest.raises(ValueError) as scanned:
        table_stream.refuse_file_problems(path, "csv", ["a", "b"], "id")
    assert str(scanned.value) == str(general.value)
    assert "UTF-8" in str(general.value) or "utf-8" in str(general.value), general.value
