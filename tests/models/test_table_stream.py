"""A large prediction table read row by row, keeping only the rows asked for
(``activetest.models.table_stream``): the numbers and the messages of the table read
whole, in memory that does not grow with the table (QA: ``estimate --compare
table:FILE`` at 1e6 items read the whole table, 0.9 GB, for the labelled items' rows)."""

from __future__ import annotations

import csv
import gzip
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data.task import Item, Task
from activetest.models import table, table_read
from activetest.models.table import TableScorer, read_table
from activetest.models.table_stream import read_ids, read_wanted

TASK = Task(name="fpb", instruction="Classify.\n", classes=("negative", "neutral", "positive"))
COLS = TASK.classes
_HC = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # (a loaded CI machine)


def _lsm(z: np.ndarray) -> np.ndarray:
    return z - np.logaddexp.reduce(z, axis=1)[:, None]


def _write_csv(path: Path, ids: list[str], values: np.ndarray) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", *COLS, "note"])
        w.writerows([i, *map(repr, map(float, v)), "some other text"]
                    for i, v in zip(ids, values, strict=True))
    return path


def _both(path: Path, kind: str = "logprobs", fmt: str | None = None) -> tuple[str, str]:
    """The message of the table read whole and of the table read row by row (``ok``:
    read, with the same ids and the same bytes)."""
    out = []
    try:
        ids, lp = read_table(path, columns=COLS, kind=kind, format=fmt)  # type: ignore[arg-type]
        whole = "ok"
    except ValueError as exc:
        whole = str(exc)
    try:
        fmt = fmt or table_read.infer_format(path)  # (a .gz one: of the name before)
        got = read_wanted(path, columns=COLS, id_column="id", kind=kind, fmt=fmt,
                          tolerance=1e-3, wanted=set(ids) if whole == "ok" else set())
        streamed = "ok"
        if whole == "ok":
            assert list(got.index) == ids
            assert got.logprobs.tobytes() == lp.tobytes()
            assert read_ids(path, columns=COLS, id_column="id", kind=kind, fmt=fmt,
                            tolerance=1e-3) == ids
    except ValueError as exc:
        streamed = str(exc)
    out = [whole, streamed]
    return out[0], out[1]


def _as(path: Path, name: str) -> Path:
    """The CSV table ``path`` as ``name``: ``.json`` a JSON array of its rows, ``.jsonl``
    JSON Lines, ``.gz`` gzipped (the ids and the values as they are, text)."""
    out = path.with_name(name)
    text = path.read_text(encoding="utf-8")
    plain = name.removesuffix(".gz")
    if plain.endswith((".json", ".jsonl")):
        rows = list(csv.DictReader(text.splitlines()))
        text = (json.dumps(rows, indent=1) if plain.endswith(".json")
                else "".join(json.dumps(r) + "\n" for r in rows))
    data = text.encode("utf-8")
    out.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return out


@pytest.mark.parametrize("name", ["big.csv", "big.csv.gz", "big.json", "big.jsonl.gz",
                                  "big.json.gz"])
def test_only_the_rows_asked_for_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          name: str) -> None:
    """Scoring 10 items of a 60,000-row table holds a few MB at most, where the table read
    whole is tens of MB (every row a dict of its cells); the 10 rows are the table's.
    A gzipped table and a JSON array too (QA: they were read whole)."""
    n = 60_000
    rng = np.random.default_rng(0)
    lp = _lsm(rng.normal(size=(n, 3)))
    ids = [f"it{i}" for i in range(n)]
    path = _write_csv(tmp_path / "big.csv", ids, lp)
    if name != "big.csv":
        path = _as(path, name)
    items = [Item(id=ids[i], fields={"text": "t"}) for i in range(0, n, n // 10)]
    monkeypatch.setattr(table, "STREAM_BYTES", 0)
    tracemalloc.start()
    try:
        got = TableScorer(path).score(TASK, items)
        _, streamed = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        monkeypatch.setattr(table, "STREAM_BYTES", 1 << 40)
        whole = TableScorer(path).score(TASK, items)
        _, peak_whole = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.tobytes() == whole.tobytes()
    np.testing.assert_allclose(got, lp[::n // 10], atol=1e-12)
    assert peak_whole > 30e6, peak_whole  # the bound below means something
    assert streamed < 5e6, (streamed, peak_whole)


def _corrupt(path: Path, line: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("name", ["t.csv", "t.csv.gz"])
@pytest.mark.parametrize("case", ["value then ragged", "value then duplicate",
                                  "duplicate then value", "not normalised then value",
                                  "value then bad utf-8", "missing id then duplicate"])
def test_the_problem_named_is_the_whole_readers(tmp_path: Path, case: str, name: str) -> None:
    """Two problems in one table: the one named is the one the table read whole names
    (it reads the whole file, then each row in order, then every row's sums), although
    the stream meets the other first."""
    n = 40
    lp = _lsm(np.random.default_rng(1).normal(size=(n, 3)))
    ids = [f"r{i}" for i in range(n)]
    path = _write_csv(tmp_path / "t.csv", ids, lp)
    first, second = case.split(" then ")
    edits = {"value": "r4,nan,0,0,x", "ragged": "r30,-1,-1,-1,x,extra",
             "duplicate": "r2,-1.0986,-1.0986,-1.0986,x", "not normalised": "r3,0,0,0,x",
             "missing id": ",-1.0986,-1.0986,-1.0986,x"}
    _corrupt(path, 6, edits[first])
    if second == "bad utf-8":
        path.write_bytes(path.read_bytes() + b"r99,\xff,0,0,x\n")
    else:
        _corrupt(path, 30, edits[second])
    if name.endswith(".gz"):
        gz = path.with_name(name)
        gz.write_bytes(gzip.compress(path.read_bytes()))
        path = gz
    whole, streamed = _both(path)
    assert whole != "ok" and streamed == whole


@pytest.mark.parametrize("kind", ["logprobs", "probs", "logits"])
def test_a_table_of_probabilities_in_blocks(tmp_path: Path, kind: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether every row looks like probabilities is of the whole table, across the
    blocks the rows are checked in (the message of a table read as log-probs or logits
    depends on it)."""
    from activetest.models import table_stream

    monkeypatch.setattr(table_stream, "_BLOCK", 7)
    probs = np.exp(_lsm(np.random.default_rng(2).normal(size=(30, 3))))
    path = _write_csv(tmp_path / "p.csv", [f"p{i}" for i in range(30)], probs)
    whole, streamed = _both(path, kind)
    assert streamed == whole
    assert (whole == "ok") == (kind == "probs")
    _corrupt(path, 25, "p23,0.5,0.6,0.2,x")  # sums to 1.3: one row that is no probability
    whole, streamed = _both(path, kind)
    assert streamed == whole and (whole != "ok") == (kind != "logits")


_cell = st.one_of(st.floats(-5, 5).map(repr), st.sampled_from(["nan", "", "abc", "0", "1",
                                                                "0.5", "-0.69314718056"]))


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(rows=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d", "", "7"]),
                               st.lists(_cell, min_size=2, max_size=4)), max_size=8),
       kind=st.sampled_from(["logprobs", "probs", "logits"]), gz=st.booleans())
def test_fuzz_csv_the_same_as_read_whole(tmp_path: Path, rows: list, kind: str,
                                         gz: bool) -> None:
    path = tmp_path / ("f.csv.gz" if gz else "f.csv")
    text = "id,negative,neutral,positive\n" + "".join(
        ",".join([i, *cells]) + "\n" for i, cells in rows)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    whole, streamed = _both(path, kind)
    assert streamed == whole


_jcell = st.one_of(st.none(), st.booleans(), st.floats(-5, 5), st.sampled_from(
    [float("nan"), 0.5, 0, 1, "x", -0.6931471805599453]))


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(st.dictionaries(st.sampled_from(["id", *COLS]), st.one_of(
           _jcell, st.sampled_from(["a", "b", "c", 3])), max_size=4), max_size=6),
       kind=st.sampled_from(["logprobs", "probs", "logits"]), gz=st.booleans())
def test_fuzz_jsonl_the_same_as_read_whole(tmp_path: Path, recs: list, kind: str,
                                           gz: bool) -> None:
    path = tmp_path / ("f.jsonl.gz" if gz else "f.jsonl")
    text = "".join(json.dumps(r) + "\n" for r in recs)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    whole, streamed = _both(path, kind)
    assert streamed == whole


@settings(max_examples=200, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(st.one_of(st.dictionaries(st.sampled_from(["id", *COLS]), st.one_of(
           _jcell, st.sampled_from(["a", "b", "c", 3])), max_size=4),
           st.sampled_from([1, "x", None, [], [{"id": "a"}]])), max_size=6),
       kind=st.sampled_from(["logprobs", "probs", "logits"]), gz=st.booleans(),
       indent=st.sampled_from([None, 1]), cut=st.one_of(st.none(), st.integers(0, 400)),
       tail=st.sampled_from(["", " \n", "x", "]", ",{}"]), chunk=st.sampled_from([1, 5, 4096]))
def test_fuzz_json_array_the_same_as_read_whole(tmp_path: Path, recs: list, kind: str,
                                                gz: bool, indent: int | None, cut: int | None,
                                                tail: str, chunk: int) -> None:
    """A JSON array read a window at a time (windows of 1, 5 characters: every value cut
    by a window's end) gives the rows and the messages of the text read whole: malformed
    text (cut short, text after it), a record that is no object, a row's problem."""
    from activetest.formats import json_array

    text = json.dumps(recs, indent=indent)
    text = (text if cut is None else text[:cut]) + tail
    path = tmp_path / ("f.json.gz" if gz else "f.json")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    old = json_array.CHUNK
    json_array.CHUNK = chunk
    try:
        whole, streamed = _both(path, kind, "json")
    finally:
        json_array.CHUNK = old
    assert streamed == whole


@pytest.mark.parametrize("damage", ["truncated", "not gzip", "bad utf-8"])
def test_a_damaged_gzip_table_is_refused_as_read_whole(tmp_path: Path, damage: str) -> None:
    """A gzip stream cut short (EOFError while streaming), a gzip header over other bytes,
    bytes that are not UTF-8 inside: the whole reader's message, no traceback."""
    lp = _lsm(np.random.default_rng(4).normal(size=(200, 3)))
    path = _write_csv(tmp_path / "t.csv", [f"g{i}" for i in range(200)], lp)
    data = path.read_bytes()
    if damage == "bad utf-8":
        data = data.replace(b"g150,", b"g150\xff,", 1)
    blob = gzip.compress(data)
    blob = {"truncated": blob[:len(blob) // 2], "not gzip": blob[:10] + b"junk" * 50,
            "bad utf-8": blob}[damage]
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(blob)
    whole, streamed = _both(gz)
    assert whole != "ok" and streamed == whole, (whole, streamed)


def test_parquet_rows_the_same_as_read_whole(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    lp = _lsm(np.random.default_rng(3).normal(size=(50, 3)))
    rows = [{"id": f"q{i}", **dict(zip(COLS, map(float, v), strict=True))}
            for i, v in enumerate(lp)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=16)
    assert _both(path) == ("ok", "ok")
    for bad in ({"id": "q3"}, {"neutral": float("inf")}, {"id": ""}, {"negative": 0.0}):
        rows2 = [dict(r) for r in rows]
        rows2[20].update(bad)
        pq.write_table(pa.Table.from_pylist(rows2), path, row_group_size=16)
        whole, streamed = _both(path)
        assert whole != "ok" and streamed == whole, bad
