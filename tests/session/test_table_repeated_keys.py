"""A JSONL or JSON-array prediction table whose object repeats a key is refused, naming
the file, the line (JSONL) or record (JSON array, from 0) and the key, by the general
table reader (:func:`~activetest.models.table_read.read_table`), the reader of large
tables row by row (:mod:`activetest.models.table_stream`) and the streamed ``init``
(:mod:`activetest.session.stream_tables`) alike, word for word.

QA: the table reader kept the last value of a repeated key (``"positive": -0.1,
"positive": -2.3`` read as -2.3, without a word) where the pool reader refuses it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from session_support import create_from_tables, write_pool_tables

from activetest.formats.json_array import NotAStreamedArray, record_repeating_a_key
from activetest.models import table_stream
from activetest.models.table_read import read_table, stream_rows
from activetest.session import create, stream_base, stream_init

N = 300  # blocks of 64
BAD = 200  # in the fourth block

#: what the bad row adds to its object (after its own keys), and the key it repeats
_REPEATS = {"a class column": (', "negative": -0.5', "negative"),
            "the id": (', "id": "it7"', "id"),
            "a nested object": (', "meta": {"a": 1, "a": 2}', "a")}


def _write(folder: Path, name: str, rows: list[dict[str, Any]], extra: dict[int, str]) -> Path:
    """``rows`` as JSONL (one object a line) or a JSON array (one record a line), with
    ``extra[i]`` written inside row i's object after its keys; gzipped where ``name``
    ends in ``.gz``."""
    texts = [json.dumps(r)[:-1] + extra.get(i, "") + "}" for i, r in enumerate(rows)]
    text = ("\n".join(texts) + "\n" if ".jsonl" in name
            else "[\n" + ",\n".join(texts) + "\n]\n")
    path = folder / name
    path.write_bytes(gzip.compress(text.encode(), mtime=0) if name.endswith(".gz")
                     else text.encode())
    return path


def _files(tmp_path: Path, name: str, extra: dict[int, str]) -> tuple[Path, Path, Path]:
    """The pool (JSONL), the surrogate table ``name`` with ``extra`` (:func:`_write`) and
    the target table (JSONL)."""
    pool, sur, tgt = write_pool_tables(tmp_path, N, "jsonl")
    rows = [json.loads(line) for line in sur.read_text().splitlines()]
    sur.unlink()
    return pool, _write(tmp_path, name, rows, extra), tgt


def _fmt(name: str) -> str:
    return "jsonl" if ".jsonl" in name else "json"


def _where(name: str, i: int) -> str:
    return f"line {i + 1}" if ".jsonl" in name else f"record {i}"


def _readers(path: Path, name: str) -> dict[str, str]:
    """Each table reader's refusal of ``path``: the whole read, the large table's read
    (rows kept for some ids; the ids alone)."""
    kw: dict[str, Any] = {"columns": ("negative", "positive"), "id_column": "id"}
    out = {}
    with pytest.raises(ValueError) as exc:
        read_table(path, format=_fmt(name), **kw)  # type: ignore[arg-type]
    out["read_table"] = str(exc.value)
    with pytest.raises(ValueError) as exc:
        table_stream.read_wanted(path, kind="logprobs", fmt=_fmt(name), tolerance=1e-6,
                                 wanted={"it3"}, **kw)
    out["read_wanted"] = str(exc.value)
    with pytest.raises(ValueError) as exc:
        table_stream.read_ids(path, kind="logprobs", fmt=_fmt(name), tolerance=1e-6, **kw)
    out["read_ids"] = str(exc.value)
    return out


def _inits(tmp_path: Path, files: tuple[Path, Path, Path],
           monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The refusal of ``init`` on the general path and on the streamed one."""
    real = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    with pytest.raises(ValueError) as general:
        create_from_tables(tmp_path / "g.db", files)
    monkeypatch.setattr(stream_init, "try_stream", real)
    entered: list[int] = []
    real_stream = stream_init._stream

    def spy(*a: Any, **k: Any) -> Any:
        entered.append(1)
        return real_stream(*a, **k)

    monkeypatch.setattr(stream_init, "_stream", spy)
    real_load = create.load_inputs

    def no_general(*a: Any, **k: Any) -> Any:
        raise AssertionError("the general path read the table")

    monkeypatch.setattr(create, "load_inputs", no_general)
    with pytest.raises(ValueError) as streamed:
        create_from_tables(tmp_path / "s.db", files)
    monkeypatch.setattr(create, "load_inputs", real_load)
    assert entered  # the stream ran, and refused it itself
    assert not (tmp_path / "s.db").exists() and not (tmp_path / "g.db").exists()
    return str(general.value), str(streamed.value)


@pytest.mark.parametrize("name", ["s.jsonl", "s.jsonl.gz", "s.json", "s.json.gz"])
@pytest.mark.parametrize("case", list(_REPEATS))
def test_a_repeated_key_is_refused_by_every_table_reader_with_one_message(
        case: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    extra, key = _REPEATS[case]
    pool, sur, tgt = _files(tmp_path, name, {BAD: extra})
    want = f"{sur}: {_where(name, BAD)}: an object repeats the key {key!r} (which value is meant?)"
    assert _readers(sur, name) == dict.fromkeys(["read_table", "read_wanted", "read_ids"], want)
    general, streamed = _inits(tmp_path, (pool, sur, tgt), monkeypatch)
    assert general == streamed == want


@pytest.mark.parametrize("name", ["s.jsonl", "s.json.gz"])
def test_a_repeated_key_is_named_before_an_earlier_rows_bad_value(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The general reader parses the whole text before it checks any row's values: a
    repeated key at row 200 is named before row 5's value that is not a number, on every
    path (the row-by-row readers find row 5 first, then read the text for problems named
    before it)."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    pool, sur, tgt = _files(tmp_path, name, {5: ', "zz": 0', BAD: _REPEATS["the id"][0]})
    text = gzip.decompress(sur.read_bytes()).decode() if name.endswith(".gz") \
        else sur.read_text()
    lines = text.split("\n")
    k = 5 + (".jsonl" not in name)  # (the array's "[" is line 1)
    assert '"zz": 0' in lines[k]
    lines[k] = lines[k].replace('"negative": ', '"negative": "x", "was": ', 1)
    text = "\n".join(lines)
    sur.write_bytes(gzip.compress(text.encode(), mtime=0) if name.endswith(".gz")
                    else text.encode())
    want = f"{sur}: {_where(name, BAD)}: an object repeats the key 'id' (which value is meant?)"
    assert _readers(sur, name) == dict.fromkeys(["read_table", "read_wanted", "read_ids"], want)
    general, streamed = _inits(tmp_path, (pool, sur, tgt), monkeypatch)
    assert general == streamed == want


def test_the_row_reader_refuses_a_repeated_key_where_it_meets_it(tmp_path: Path) -> None:
    """:func:`stream_rows` gives the rows before the object that repeats a key: a JSONL
    line is refused with the general message, a JSON array's record as text the caller
    reads whole to name (:class:`NotAStreamedArray`), and that record is the one
    :func:`record_repeating_a_key` finds."""
    _, sur, _ = write_pool_tables(tmp_path, 20, "jsonl")
    rows = [json.loads(line) for line in sur.read_text().splitlines()]
    for name in ("t.jsonl", "t.json"):
        path = _write(tmp_path, name, rows, {12: ', "positive": 0'})
        got = []
        with pytest.raises(ValueError) as exc:
            for where, _, _ in stream_rows(path, _fmt(name), columns=("negative", "positive"),
                                           id_column="id"):
                got.append(where)
        assert got == [_where(name, i) for i in range(12)]
        if name == "t.jsonl":
            assert str(exc.value) == (f"{path}: line 13: an object repeats the key "
                                      f"'positive' (which value is meant?)")
        else:
            assert isinstance(exc.value, NotAStreamedArray)
            assert record_repeating_a_key(path.read_text()) == 12
    assert record_repeating_a_key('[1, {"a": [{"b": 1, "b": 2}]}]') == 1
    assert record_repeating_a_key('{"a": 1, "a": 2}') is None  # no array
    assert record_repeating_a_key('[{"a": 1}, {"a": 2,]') is None  # malformed first
