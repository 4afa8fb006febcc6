"""A large prediction table read row by row, keeping only the rows asked for
(``activetest.models.table_stream``): the numbers and the messages of the table read
whole, in memory that does not grow with the table (QA: ``estimate --compare
table:FILE`` at 1e6 items read the whole table, 0.9 GB, for the labelled items' rows)."""

from __future__ import annotations

import csv
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data.task import Item, Task
from activetest.models import table
from activetest.models.table import TableScorer, read_table
from activetest.models.table_stream import read_ids, read_wanted

TASK = Task(name="fpb", instruction="Classify.\n", classes=("negative", "neutral", "positive"))
COLS = TASK.classes
_HC = [HealthCheck.function_scoped_fixture]


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
        fmt = fmt or {".csv": "csv", ".jsonl": "jsonl", ".parquet": "parquet"}[path.suffix]
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


def test_only_the_rows_asked_for_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          ) -> None:
    """Scoring 10 items of a 60,000-row table holds a few MB at most, where the table read
    whole is tens of MB (every row a dict of its cells); the 10 rows are the table's."""
    n = 60_000
    rng = np.random.default_rng(0)
    lp = _lsm(rng.normal(size=(n, 3)))
    ids = [f"it{i}" for i in range(n)]
    path = _write_csv(tmp_path / "big.csv", ids, lp)
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


@pytest.mark.parametrize("case", ["value then ragged", "value then duplicate",
                                  "duplicate then value", "not normalised then value",
                                  "value then bad utf-8", "missing id then duplicate"])
def test_the_problem_named_is_the_whole_readers(tmp_path: Path, case: str) -> None:
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
       kind=st.sampled_from(["logprobs", "probs", "logits"]))
def test_fuzz_csv_the_same_as_read_whole(tmp_path: Path, rows: list, kind: str) -> None:
    path = tmp_path / "f.csv"
    path.write_text("id,negative,neutral,positive\n" + "".join(
        ",".join([i, *cells]) + "\n" for i, cells in rows), encoding="utf-8")
    whole, streamed = _both(path, kind)
    assert streamed == whole


_jcell = st.one_of(st.none(), st.booleans(), st.floats(-5, 5), st.sampled_from(
    [float("nan"), 0.5, 0, 1, "x", -0.6931471805599453]))


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(st.dictionaries(st.sampled_from(["id", *COLS]), st.one_of(
           _jcell, st.sampled_from(["a", "b", "c", 3])), max_size=4), max_size=6),
       kind=st.sampled_from(["logprobs", "probs", "logits"]))
def test_fuzz_jsonl_the_same_as_read_whole(tmp_path: Path, recs: list, kind: str) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    whole, streamed = _both(path, kind)
    assert streamed == whole


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
