"""``select`` shows a progress bar of its draws (QA: ``select --n 20000`` at 1e5 items ran
94 s without a word on a terminal; an adaptive design's draw is a pass over the pool):
the command line passes the bar's advance down to the sampler, called once a draw; a bar
only on a terminal, as ``init``'s and ``score``'s."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from session_support import PoolFiles, make_pool_files, run_cli

from activetest.models._util import forward_progress
from activetest.session.workflow import Session


def _init(pf: PoolFiles, db: Path, *extra: str) -> Path:
    run_cli("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
            f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
            "--seed", "5", "--no-progress", *extra)
    return db


def _draws(db: Path) -> list[tuple[int, float]]:
    with sqlite3.connect(db) as c:
        return [(int(i), float(q)) for i, q in c.execute(
            "SELECT idx, q FROM acquisitions ORDER BY step")]


@pytest.mark.parametrize("acquisition", ["adaptive", "ce"])
def test_the_callback_is_called_once_a_draw(tmp_path: Path, acquisition: str) -> None:
    """``Session.select(n, progress=)`` calls it with 1 after each of the ``n`` draws, in
    an adaptive design and a fixed proposal alike, and draws what it draws without."""
    pf = make_pool_files(tmp_path / "data")
    db = _init(pf, tmp_path / "s.db", "--acquisition", acquisition)
    plain = tmp_path / "plain.db"
    shutil.copy(db, plain)
    calls: list[int] = []
    with Session.open(db) as s:
        s.select(7, progress=calls.append)
        s.label_from_data()
        got = s.select(5, progress=calls.append)
    assert calls == [1] * 12 and len(got) == 5
    with Session.open(plain) as s:
        s.select(7)
        s.label_from_data()
        s.select(5)
    assert _draws(db) == _draws(plain)


def test_the_command_moves_a_bar_on_a_terminal_only(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``activetest select``: the bar's advance once a draw (what a terminal's bar
    shows, recorded here); none with ``--no-progress``; and, its output not a terminal,
    no bar text in it."""
    from activetest.cli import _app

    pf = make_pool_files(tmp_path / "data")
    db = _init(pf, tmp_path / "s.db")
    steps: list[int] = []
    with monkeypatch.context() as m:
        m.setattr(_app._out, "_force_terminal", True)  # the output a terminal
        with forward_progress(steps.append):  # stands in for the terminal's bar
            run_cli("select", db, "--n", "6")
        assert steps == [1] * 6
        steps.clear()
        with forward_progress(steps.append):
            run_cli("select", db, "--n", "3", "--no-progress")
        assert steps == []
    with forward_progress(steps.append):  # not a terminal: no bar
        out = run_cli("select", db, "--n", "4")
    assert steps == []
    assert "drawing" not in out and "━" not in out
    assert out.splitlines()[0].split() == ["draw", "item", "id", "q", "(draw", "probability)",
                                           "text"]


def test_label_n_moves_the_bar_of_its_draws(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``label --n N`` draws what is missing first: the same bar as ``select``'s, on a
    terminal only, hidden by ``--no-progress``."""
    from activetest.cli import _app

    pf = make_pool_files(tmp_path / "data")
    db = _init(pf, tmp_path / "s.db")
    steps: list[int] = []
    with monkeypatch.context() as m:
        m.setattr(_app._out, "_force_terminal", True)
        with forward_progress(steps.append):
            run_cli("label", db, "--n", "5", "--from-data")
            assert steps == [1] * 5
            run_cli("label", db, "--n", "8", "--from-data", "--no-progress")
    assert steps == [1] * 5
    with forward_progress(steps.append):
        out = run_cli("label", db, "--n", "12", "--from-data")
    assert steps == [1] * 5 and "drawing" not in out
    assert "with the pool's labels stored when the session was created" in out


def test_the_blind_spots_step_after_the_draws_has_a_row_of_its_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an adaptive design's draws ``select`` advances the blind spot's stored state
    over them (QA: 2.4 s of 6.4 s at 3,000 draws, 1e5 items, under a full bar): on a
    terminal the bar says so once the draws are done (a row of no count); nothing with
    ``--no-progress`` or on a pipe; a fixed proposal has no such step."""
    from activetest.cli import _app

    pf = make_pool_files(tmp_path / "data")
    db = _init(pf, tmp_path / "s.db", "--acquisition", "adaptive")
    events: list[object] = []
    with monkeypatch.context() as m:
        m.setattr(_app._out, "_force_terminal", True)
        with forward_progress(events.append, phase=events.append):
            run_cli("select", db, "--n", "6")
        assert events == [1] * 6 + ["advancing the blind spot's state over draws 1..6"]
        events.clear()
        run_cli("label", db, "--n", "6", "--from-data", "--no-progress")
        with forward_progress(events.append, phase=events.append):
            run_cli("select", db, "--n", "3", "--no-progress")
        assert events == []
    with forward_progress(events.append, phase=events.append):  # not a terminal
        out = run_cli("select", db, "--n", "4")
    assert events == [] and "blind spot" not in out
    fixed = _init(pf, tmp_path / "f.db", "--acquisition", "ce")
    with monkeypatch.context() as m:
        m.setattr(_app._out, "_force_terminal", True)
        with forward_progress(events.append, phase=events.append):
            run_cli("select", fixed, "--n", "5")
    assert events == [1] * 5
