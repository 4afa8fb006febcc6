"""``looks_like_lmeval`` reads a file only as far as it must (QA: every ``.jsonl`` or
``.json`` prediction table was read whole by it, before ``estimate --compare`` read the
table row by row): the answer of the whole text read, for any text, in chunks of any
size."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.formats import lmeval
from activetest.formats.lmeval import _is_record, looks_like_lmeval


def _whole(text: str) -> bool:
    """The rule, on the whole text (as it was written before)."""
    head = text.lstrip()
    if head.startswith("["):
        start = len(text) - len(head) + 1
        while start < len(text) and text[start].isspace():
            start += 1
        try:
            first, _ = json.JSONDecoder().raw_decode(text, start)
        except (ValueError, RecursionError):
            return False
        return _is_record(first)
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            bad += 1
            if bad > 20:
                return False
            continue
        return _is_record(rec)
    return False


_REC = {"doc_id": 0, "resps": [[["-1.0", "False"]]], "doc": {"q": "x"}}
_piece = st.sampled_from([json.dumps(_REC), json.dumps({"id": "a", "x": 1}), "[", "]", ",",
                          "{", "}", "not json", "\n", "\r\n", "\r", " ", "\u2028", "\x85",
                          "\x0c", "7", "12", "true", "\"s\"", json.dumps([_REC])])


@settings(max_examples=400, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(pieces=st.lists(_piece, max_size=30), chunk=st.sampled_from([1, 2, 3, 7, 1 << 16]),
       gz=st.booleans(), bom=st.booleans())
def test_the_answer_of_the_whole_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      pieces: list[str], chunk: int, gz: bool,
                                      bom: bool) -> None:
    text = "".join(pieces)
    data = ("\ufeff" if bom else "").encode() + text.encode("utf-8")
    path = tmp_path / "f.jsonl"
    path.write_bytes(gzip.compress(data) if gz else data)
    monkeypatch.setattr(lmeval, "_HEAD_CHUNK", chunk)
    assert looks_like_lmeval(path) == _whole(text), text


def test_a_large_table_is_not_read_whole(tmp_path: Path) -> None:
    rows = "".join(json.dumps({"id": f"r{i}", "a": -0.69, "b": -0.69}) + "\n"
                   for i in range(200_000))
    path = tmp_path / "t.jsonl"
    path.write_text(rows, encoding="utf-8")
    tracemalloc.start()
    try:
        assert not looks_like_lmeval(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(rows) > 8e6 and peak < 1e6, peak
