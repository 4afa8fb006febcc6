"""``init`` at pool scale says what it does after the pool's bar is full.

QA: at 1e7 items the streamed ``init``'s bar sat at 100% for ~12 s (about 2 s at 2e6,
seen on a pseudo-terminal) while the first proposal was computed and the scores
written: the terminal looked hung. A row of its own (no count; it pulses) now says
so from the pool's last block (and any table's join by id) until the file is in
place. Recorded here as the terminal's bar would show it (``forward_progress``, as
tests/session/test_select_progress.py and test_columns.py record theirs), with the
scores' writes, so that the row is seen to come first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from session_support import run_cli, spy_on_stream, write_pool_tables

from activetest.models._util import forward_progress
from activetest.session import stream_base
from activetest.session.store import SessionStore
from activetest.session.stream_init import writing_text


def _spy_on_writes(monkeypatch: pytest.MonkeyPatch, events: list[object]) -> None:
    """Each stored model's scores noted in ``events`` as they are written."""
    real = SessionStore.put_scores

    def put(self: SessionStore, role: str, *a: object, **k: object) -> object:
        events.append(f"scores of {role}")
        return real(self, role, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(SessionStore, "put_scores", put)


def _init(db: Path, files: tuple[Path, Path, Path], *extra: str) -> str:
    pool, sur, tgt = files
    return run_cli("init", db, "--pool", pool, "--task", "sst2", "--surrogate", f"table:{sur}",
                   "--target", f"table:{tgt}", "--id-column", "id", "--seed", "3", *extra)


@pytest.mark.parametrize("order", ["the pool's", "another"])
def test_writing_the_scores_has_a_row_after_the_pools_bar(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    """The pool's bar counts its blocks, a table in another order its join by id, then
    the row says the writing (before any score is written); none with --no-progress."""
    n = 200
    perm = np.arange(n)
    if order == "another":
        perm[[130, 131]] = perm[[131, 130]]
    files = write_pool_tables(tmp_path, n, order=perm)
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    ran = spy_on_stream(monkeypatch)
    events: list[object] = []
    _spy_on_writes(monkeypatch, events)
    with forward_progress(events.append, phase=events.append):
        _init(tmp_path / "s.db", files)
    assert ran == [1]
    counts = [64, 64, 64, 8]
    if order == "another":  # each table's rows read again, by id (a count of its own)
        counts += [n, n]
    at = events.index(writing_text(n))
    assert events[:at] == counts, events
    assert events[at + 1:] == ["scores of surrogate", "scores of target",
                               "scores of acquisition"]
    events.clear()
    with forward_progress(events.append, phase=events.append):
        _init(tmp_path / "q.db", files, "--no-progress")
    assert events == ["scores of surrogate", "scores of target", "scores of acquisition"]
