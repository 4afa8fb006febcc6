"""A prediction table whose class columns are text ("-0.25": a Parquet string column, a
JSON table's strings) streams: its values are those the general path reads, and text
that is no finite number is refused with the general path's message, without reading
the table into memory (QA: such a Parquet table fell back to the general path, which
passed 6 GiB at 1e7 items; docs/pool-scale.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from session_support import create_from_tables as _create
from session_support import no_general_path, streamed_is_the_general_session
from session_support import write_pool_tables as _write_pool

from activetest.session import create, stream_base, stream_init

N = 300  # blocks of 64: row 250 is in the fourth block


def _as_text(files: tuple[Path, Path, Path], fmt: str,
             spoil: dict[tuple[str, int], str] | None = None) -> tuple[Path, Path, Path]:
    """``files``' tables rewritten with their class values as text (as Python writes the
    float, some with spaces around, some with a digit separator); ``spoil``: the text of
    ``(column, row)`` in the surrogate table replaced."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in files[1:]:
        t = pq.read_table(path) if fmt == "parquet" else pa.Table.from_pylist(
            [json.loads(line) for line in path.read_text().splitlines()])
        cols = {"id": t.column("id").to_pylist()}
        for c in ("negative", "positive"):
            vals = [repr(x) for x in t.column(c).to_pylist()]
            vals[1] = f"  {vals[1]}\t"  # the general path strips it
            dot = f"{t.column(c)[2].as_py():.20f}"
            cut = dot.index(".") + 3
            vals[2] = f"{dot[:cut]}_{dot[cut:]}"  # a digit separator: Python's rule
            for (col, row), text in (spoil or {}).items():
                if col == c and path.stem == "surrogate":
                    vals[row] = text
            cols[c] = vals
        table = pa.table(cols)
        if fmt == "parquet":
            pq.write_table(table, path)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    return files


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_table_of_text_values_streams_to_the_general_paths_session(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Text values stream (the general path not entered) and the session holds the
    scores the general path stores, bit for bit."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    files = _as_text(_write_pool(tmp_path, N, fmt), fmt)
    if fmt == "parquet":
        assert pa.types.is_string(pq.read_schema(files[1]).field("negative").type)
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    streamed_is_the_general_session(tmp_path, files, monkeypatch)


def _refusal(db: Path, files: tuple[Path, Path, Path]) -> str:
    with pytest.raises(ValueError) as err:
        _create(db, files)
    assert not db.exists()
    return str(err.value)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("spoil,words", [
    ({("positive", 250): "abc"}, "column 'positive': expected a number, got 'abc'"),
    ({("negative", 250): " nan "}, "column 'negative': value ' nan ' is not finite"),
    ({("positive", 100): "1e999", ("negative", 200): "x"}, "value '1e999' is not finite"),
    ({("positive", 100): "", ("negative", 100): "y"}, "column 'negative': expected a "
                                                        "number, got 'y'"),
])
def test_text_that_is_no_number_is_refused_as_the_general_path_refuses_it(
        spoil: dict[tuple[str, int], str], words: str, fmt: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream's refusal is the general path's, word for word (the first bad row, its
    first bad column), and the stream never enters the general path."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _as_text(_write_pool(tmp_path, N, fmt), fmt, spoil)
    real_try = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    general = _refusal(tmp_path / "g.db", files)
    monkeypatch.setattr(stream_init, "try_stream", real_try)
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    streamed = _refusal(tmp_path / "s.db", files)
    assert streamed == general
    assert words in streamed
    assert streamed.startswith(f"{files[1]}: {'row' if fmt == 'parquet' else 'line'} "), streamed
