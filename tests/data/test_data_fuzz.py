"""Fuzzing the file parsers: any bytes give items or a clean ValueError, nothing else."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data import get_task, load_pool
from activetest.data.pool import FORMATS

TASKS = [None, get_task("sst2"), get_task("fpb"), get_task("mmlu")]
SUFFIX = {"csv": ".csv", "tsv": ".tsv", "jsonl": ".jsonl", "json": ".json",
          "parquet": ".parquet", "fpb": ".txt", "lmeval": ".jsonl"}

# Lines that look almost right, so the fuzzer reaches the deeper code paths.
ALMOST = st.sampled_from([
    "text,label", "text\tlabel", "sentence\tlabel", "a,0", "b\t1", '"q,""x""",positive',
    '{"text": "a", "label": 1}', '{"text": null}', '{"text": "a", "label": "neutral"}',
    '{"question": "q", "choices": ["1", "2", "3", "4"], "answer": 2}', "[1, 2]",
    "Profit rose .@positive", "x@y@negative", "@", "", '{"text": "a", "label": 1e999}',
    '{"text": "a", "label": 123456789012345678901234567890}', '{"label": [1]}', "\x00", "\r",
])
LINES = st.lists(st.one_of(ALMOST, st.text(max_size=30)), max_size=8).map("\n".join)


def check(data: bytes, fmt: str, task_index: int, encoding: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzz{SUFFIX[fmt]}"
        path.write_bytes(data)
        try:
            pool = load_pool(path, format=fmt, task=TASKS[task_index], encoding=encoding)
        except ValueError as exc:
            assert str(path) in str(exc), str(exc)
            return
        for item in pool:
            assert isinstance(item.id, str) and item.id
            assert all(isinstance(v, str) for v in item.fields.values())
            assert item.label is None or isinstance(item.label, int)


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.binary(max_size=300), task_index=st.integers(0, len(TASKS) - 1))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_bytes(fmt: str, data: bytes, task_index: int) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    check(data, fmt, task_index, None)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "parquet"])
@given(text=LINES, task_index=st.integers(0, len(TASKS) - 1),
       encoding=st.sampled_from([None, "utf-8", "latin-1", "utf-16"]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_lines(fmt: str, text: str, task_index: int, encoding: str | None) -> None:
    try:
        data = text.encode(encoding or ("latin-1" if fmt == "fpb" else "utf-8"))
    except UnicodeEncodeError:
        data = text.encode("utf-8")
    check(data, fmt, task_index, encoding)
