"""An in-memory run keeps its blind spot's running state between estimates.

A fixed acquisition's blind spot needs each draw's floored proposal over the pool; a
session continues it from the state stored in its file, and :class:`ActiveTest` from the
state it keeps (:mod:`activetest.session.blind_memory`), so a repeat estimate replays the
new draws only. The numbers must be a fresh replay's to the last bit.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from activetest.api import ActiveTest

# (``activetest.stats.proposal`` as an attribute is the function the package exports)
proposal_module = importlib.import_module("activetest.stats.proposal")

N = 600


def _pool() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    S = np.log(rng.dirichlet([1, 1, 1], size=N))
    T = np.log(rng.dirichlet([1, 1, 1], size=N))
    return S, T, rng.integers(0, 3, size=N)


def _run(acquisition: str, S: np.ndarray, T: np.ndarray) -> ActiveTest:
    target: Any = (lambda rows: T[rows]) if acquisition == "pe" else T
    return ActiveTest(S, target, metric="both", seed=3, acquisition=acquisition, n_boot=50)


def _label_to(run: ActiveTest, y: np.ndarray, n: int) -> None:
    rows = run.next(n - len(run.drawn))
    run.label_many(rows, y[rows])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of floored proposals computed (one per draw replayed)."""
    calls = [0]
    real = proposal_module.proposal

    def counting(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(proposal_module, "proposal", counting)
    return calls


@pytest.mark.parametrize("acquisition", ["ce", "pe"])
def test_a_repeat_estimate_replays_only_the_new_draws_with_the_same_bits(
        acquisition: str, counted: list[int]) -> None:
    """Estimates after 50, 100 and 150 labels (another level in between) give at 150
    exactly (==, every float) the record of a fresh run's estimate at 150; the estimate
    at 150 computed the proposals of the 50 new draws only."""
    S, T, y = _pool()
    run = _run(acquisition, S, T)
    for n in (50, 100):
        _label_to(run, y, n)
        run.estimate()
    run.estimate(level=0.9)  # another key: replayed from the first draw, kept
    run.estimate()  # back: from the first draw again (only the latest state is kept)
    _label_to(run, y, 150)
    counted[0] = 0
    mine = run.estimate().to_dict()
    assert counted[0] == 50
    counted[0] = 0
    assert run.estimate().to_dict() == mine  # nothing new: nothing replayed
    assert counted[0] == 0

    fresh = _run(acquisition, S, T)
    _label_to(fresh, y, 150)
    assert fresh.drawn == run.drawn
    counted[0] = 0
    theirs = fresh.estimate().to_dict()
    assert counted[0] == 150
    assert mine == theirs
    assert any(b["n_unexplored"] > 0 for b in mine["blind_spots"])  # a blind spot to keep


def test_an_estimate_stopped_part_way_leaves_no_damaged_state(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass interrupted part way (Ctrl-C in a notebook) has changed the kept state's
    exposures in place: the next estimate must not continue it (the numbers of a fresh
    run, to the last bit)."""
    S, T, y = _pool()
    run = _run("ce", S, T)
    _label_to(run, y, 60)
    run.estimate()
    _label_to(run, y, 120)
    real = proposal_module.proposal
    calls = [0]

    def interrupted(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        if calls[0] == 30:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(proposal_module, "proposal", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run.estimate()
    monkeypatch.setattr(proposal_module, "proposal", real)
    fresh = _run("ce", S, T)
    _label_to(fresh, y, 60)
    _label_to(fresh, y, 120)
    assert run.estimate().to_dict() == fresh.estimate().to_dict()
