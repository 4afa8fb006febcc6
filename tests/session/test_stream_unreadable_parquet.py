"""A Parquet prediction table that is no readable Parquet file (cut short: a copy or a
download that stopped) is refused by the streamed ``init`` with the general path's
message, without the general path (QA, 2026-12-07: a 1e7-item pool with a truncated
target table fell back to the general path, which read the whole pool into memory,
8.8 GB and 9 minutes, before it said "cannot read as Parquet").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from session_support import general_and_streamed_refusals, init_refusal, no_general_path
from tests.session.test_stream_refusal_order import _files

from activetest.session import create, stream_base


def _cut(path: Path, keep: float = 0.5) -> None:
    """Cut the file to ``keep`` of its bytes (its footer lost)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


@pytest.mark.parametrize("which", ["surrogate", "target"])
def test_a_cut_parquet_table_is_refused_by_the_stream_as_by_the_general_path(
        which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream names the cut table as the general path does, word for word, and the
    general path (the whole pool in memory) is never entered."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, 300, "parquet", [])
    _cut(files[1 if which == "surrogate" else 2])
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(f"{tmp_path / which}.parquet: cannot read as Parquet"), streamed


def test_a_pool_problem_is_still_named_before_a_cut_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The general path reads the whole pool first: a bad pool record is named before
    the cut table, by the stream too."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, 300, "parquet", [("emptyid", "", 250)])
    _cut(files[2])
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert "empty id" in streamed and streamed.startswith(str(tmp_path / "pool")), streamed


def test_a_cut_surrogate_is_named_before_a_cut_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cut tables: the one given first is named, as the general path names it."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, 300, "parquet", [])
    _cut(files[1])
    _cut(files[2], 0.3)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(str(tmp_path / "surrogate")), streamed
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    assert init_refusal(tmp_path / "again.db", files) == streamed
