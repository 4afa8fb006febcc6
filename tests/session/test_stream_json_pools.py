"""JSON-array pools (``--pool x.json``, gzipped or not) and gzipped Parquet pools
(``pool.parquet.gz``) stream (docs/pool-scale.md, "`init` in chunks").

Both took the general path: every record a Python object (a JSON array parsed whole; a
gzipped Parquet file gunzipped whole into memory and read whole). A JSON array is now
read a record at a time (:mod:`activetest.formats.json_array`), a gzipped Parquet file
gunzipped into a copy beside the session file and read by row groups. The session is
the general path's bit for bit and each refusal its message, in real files.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from session_support import create_from_tables, same_session, spy_on_stream, write_pool_tables

from activetest.session import create, stream_base, stream_init

N = 300  # blocks of 64


def _no_general_path(*a: object, **k: object) -> object:
    raise AssertionError("the general path read the whole pool into memory")


def _records(folder: Path) -> tuple[list[dict[str, Any]], Path, Path, Path]:
    """The pool's records, the pool as Parquet and the two Parquet tables."""
    import pyarrow.parquet as pq

    pool, sur, tgt = write_pool_tables(folder, N, "parquet")
    return pq.read_table(pool).to_pylist(), pool, sur, tgt


def _json_pool(folder: Path, records: list[dict[str, Any]], name: str,
               text: str | None = None) -> Path:
    """``records`` as a JSON array (``text``: written instead) in ``name``, gzipped where
    it ends in ``.gz``."""
    data = (text if text is not None
            else json.dumps(records, indent=1, ensure_ascii=False)).encode()
    path = folder / name
    path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
    return path


def _general(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make the next ``init`` take the general path; returns the undo."""
    real = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    return lambda: monkeypatch.setattr(stream_init, "try_stream", real)


@pytest.mark.parametrize("name", ["pool.json", "pool.json.gz", "pool.parquet.gz"])
def test_a_json_array_or_gzipped_parquet_pool_streams_into_the_general_paths_session(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream runs to its end without entering the general path, writes the general
    path's session (items, config with the pool's sha256 of its gunzipped bytes, scores,
    sampler) and leaves no copy of the pool behind."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    records, parquet, sur, tgt = _records(tmp_path)
    if name == "pool.parquet.gz":
        pool = tmp_path / name
        pool.write_bytes(gzip.compress(parquet.read_bytes(), mtime=0))
    else:
        pool = _json_pool(tmp_path, records, name)
    db = tmp_path / "out"
    db.mkdir()
    ran = spy_on_stream(monkeypatch)
    real_load = create.load_inputs
    monkeypatch.setattr(create, "load_inputs", _no_general_path)
    create_from_tables(db / "s.db", (pool, sur, tgt)).close()
    assert ran
    assert sorted(p.name for p in db.iterdir()) == ["s.db"]  # the pool's copy removed
    monkeypatch.setattr(create, "load_inputs", real_load)
    _general(monkeypatch)
    create_from_tables(db / "g.db", (pool, sur, tgt)).close()
    same_session(db / "s.db", db / "g.db")


def _refusals(tmp_path: Path, files: tuple[Path, Path, Path],
              monkeypatch: pytest.MonkeyPatch, streamed_only: bool) -> tuple[str, str]:
    """The general path's refusal and the stream's (``streamed_only``: the general path
    not entered by it)."""
    undo = _general(monkeypatch)
    with pytest.raises(ValueError) as general:
        create_from_tables(tmp_path / "g.db", files)
    undo()
    real_load = create.load_inputs
    if streamed_only:
        monkeypatch.setattr(create, "load_inputs", _no_general_path)
    with pytest.raises(ValueError) as streamed:
        create_from_tables(tmp_path / "s.db", files)
    monkeypatch.setattr(create, "load_inputs", real_load)
    assert not list(tmp_path.glob(".*")) and not (tmp_path / "s.db").exists()
    return str(general.value), str(streamed.value)


@pytest.mark.parametrize("name", ["pool.json", "pool.json.gz", "pool.parquet.gz"])
@pytest.mark.parametrize("case", ["empty id", "repeated id", "label"])
def test_a_bad_record_is_refused_by_the_stream(case: str, name: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A record of the fourth block the pool reader refuses: refused by the stream with
    the general path's message, naming the pool file and the record (``record i`` of a
    JSON array, from 0; ``row i`` of Parquet, from 1)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    records, _, sur, tgt = _records(tmp_path)
    bad = 200
    records[bad].update({"empty id": {"id": " "}, "repeated id": {"id": "it5"},
                         "label": {"label": "maybe"}}[case])
    if name == "pool.parquet.gz":
        raw = tmp_path / "raw.parquet"
        pq.write_table(pa.Table.from_pylist(records), raw)
        pool = tmp_path / name
        pool.write_bytes(gzip.compress(raw.read_bytes(), mtime=0))
        raw.unlink()
    else:
        pool = _json_pool(tmp_path, records, name)
    general, streamed = _refusals(tmp_path, (pool, sur, tgt), monkeypatch, True)
    assert streamed == general
    where = f"row {bad + 1}" if name.endswith("parquet.gz") else f"record {bad}"
    assert streamed.startswith(f"{pool}, {where}: "), streamed


@pytest.mark.parametrize("problem", ["malformed at the end", "a repeated key",
                                     "a record that is no object", "text after the array",
                                     "a NUL character"])
@pytest.mark.parametrize("name", ["pool.json", "pool.json.gz"])
def test_a_json_arrays_text_problem_is_named_as_the_general_path_names_it(
        problem: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JSON array whose text has a problem, after a record with a label the task has
    not: named as the general path names it, which parses the whole text before any
    record (its message gives the whole document's line and column) and then names a
    record that is no object in the records' order."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    records, _, sur, tgt = _records(tmp_path)
    records[10]["label"] = "maybe"
    text = json.dumps(records, indent=1, ensure_ascii=False)
    if problem == "malformed at the end":
        text = text[:-3] + "}}]"
    elif problem == "a repeated key":
        text = text[:-3] + ', "label": "negative"\n }\n]'
    elif problem == "a record that is no object":
        text = text[:-2] + ",\n 5\n]"
    elif problem == "text after the array":
        text += "\n[]"
    else:
        text = text[:-40] + "\x00" + text[-40:]
    pool = _json_pool(tmp_path, records, name, text)
    general, streamed = _refusals(tmp_path, (pool, sur, tgt), monkeypatch, False)
    assert streamed == general and str(pool) in streamed
    # (a record that is no object is named in the records' order, after record 10's)
    assert ("maybe" in streamed) == (problem == "a record that is no object")


def test_a_gzipped_parquet_pool_cut_short_is_named_as_the_general_path_names_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``.parquet.gz`` whose gzip stream is cut: the general path's message (its copy
    is not left behind)."""
    _, parquet, sur, tgt = _records(tmp_path)
    pool = tmp_path / "pool.parquet.gz"
    pool.write_bytes(gzip.compress(parquet.read_bytes(), mtime=0)[:-40])
    general, streamed = _refusals(tmp_path, (pool, sur, tgt), monkeypatch, False)
    assert streamed == general and str(pool) in streamed
