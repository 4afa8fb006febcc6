"""An in-memory run keeps its blind spot's running state between estimates.

The blind spot needs each draw's proposal over the pool: a session continues it from
the state stored in its file, and :class:`ActiveTest` from the state it keeps
(:mod:`activetest.session.blind_memory`), so a repeat estimate replays the new draws
only. The numbers must be a fresh replay's to the last bit.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

from activetest.api import ActiveTest
from activetest.session.blind_memory import MemoryCurves

# (``activetest.stats.proposal`` as an attribute is the function the package exports)
proposal_module = importlib.import_module("activetest.stats.proposal")
replay_module = importlib.import_module("activetest.stats.blindspot_replay")

N = 600
FIXED = ("ce", "pe")


def _pool() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    S = np.log(rng.dirichlet([1, 1, 1], size=N))
    T = np.log(rng.dirichlet([1, 1, 1], size=N))
    other = np.log(rng.dirichlet([1, 1, 1], size=N))
    return S, T, rng.integers(0, 3, size=N), other


def _run(acquisition: str, S: np.ndarray, T: np.ndarray,
         compare: dict[str, np.ndarray] | None = None) -> ActiveTest:
    target: Any = (lambda rows: T[rows]) if acquisition in ("pe", "pe_adaptive") else T
    return ActiveTest(S, target, metric="both", seed=3, acquisition=acquisition, n_boot=50,
                      compare=compare)


def _label_to(run: ActiveTest, y: np.ndarray, n: int) -> None:
    """Draws up to ``n`` in batches of 10 (an adaptive design refits between them)."""
    while len(run.drawn) < n:
        rows = run.next(min(10, n - len(run.drawn)))
        run.label_many(rows, y[rows])


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of draws the blind spot's pass computes (a fixed acquisition's floored
    proposals; an adaptive design's compiled pass over the pool)."""
    calls = [0]
    for module, name in ((proposal_module, "proposal"), (replay_module, "_expose_all")):
        real = getattr(module, name)

        def counting(*args: Any, _real: Any = real, **kw: Any) -> Any:
            calls[0] += 1
            return _real(*args, **kw)

        monkeypatch.setattr(module, name, counting)
    return calls


def _replayed(run: ActiveTest) -> dict[str, Any]:
    """The run's estimate with no state kept (every draw replayed); the kept one back."""
    kept = run._blind_memory
    run._blind_memory = MemoryCurves()
    try:
        return run.estimate().to_dict()
    finally:
        run._blind_memory = kept


@pytest.mark.parametrize("acquisition", ["ce", "pe", "adaptive", "pe_adaptive", "fixed_mix"])
def test_a_repeat_estimate_replays_only_the_new_draws_with_the_same_bits(
        acquisition: str, counted: list[int]) -> None:
    """Estimates after 50, 100 and 150 labels (another level in between) give at 150
    exactly (==, every float) the record of a fresh run's estimate at 150; the estimate
    at 150 computed the blind spot of the 50 new draws only."""
    S, T, y, _ = _pool()
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
    if acquisition in FIXED:  # (the adaptive design's earned rule leaves none here)
        assert any(b["n_unexplored"] > 0 for b in mine["blind_spots"])


def test_a_compared_model_and_a_changed_label_keep_the_same_bits(counted: list[int]) -> None:
    """The default design with a model compared (the pass also sums the difference's
    second moments): continued, the same record as replayed; a label changed among
    those the design learnt from changes the estimate, not the proposals drawn from,
    labels given out of order wait, and every estimate equals the replay's."""
    S, T, y, other = _pool()
    run = _run("adaptive", S, T, compare={"old": other})
    _label_to(run, y, 60)
    assert run.estimate().to_dict() == _replayed(run)
    _label_to(run, y, 90)
    counted[0] = 0
    assert run.estimate().to_dict() == _replayed(run)
    assert counted[0] == 30 + 90
    first = run.drawn[0]
    run.label(first, (int(y[first]) + 1) % 3, overwrite=True)
    counted[0] = 0
    assert run.estimate().to_dict() == _replayed(run)
    # the proposals are those of the design's history (it saw the old label): the
    # kept state still serves, only the replay computes
    assert counted[0] == 0 + 90
    rows = run.next(10)
    run.label_many(rows[:0:-1], y[rows[:0:-1]])  # the first of the batch not yet
    assert run.estimate().to_dict() == _replayed(run)
    run.label(rows[0], int(y[rows[0]]))
    counted[0] = 0
    assert run.estimate().to_dict() == _replayed(run)
    assert counted[0] == 10 + 100


@pytest.mark.parametrize("acquisition", ["ce", "adaptive"])
def test_an_estimate_stopped_part_way_leaves_no_damaged_state(
        acquisition: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass interrupted part way (Ctrl-C in a notebook) has changed the kept state's
    arrays in place: the next estimate must not continue it (the numbers of a fresh
    run, to the last bit)."""
    S, T, y, _ = _pool()
    run = _run(acquisition, S, T)
    _label_to(run, y, 60)
    run.estimate()
    _label_to(run, y, 120)
    module, name = ((proposal_module, "proposal") if acquisition in FIXED
                    else (replay_module, "_expose_all"))
    real = getattr(module, name)
    calls = [0]

    def interrupted(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        if calls[0] == 30:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(module, name, interrupted)
    with pytest.raises(KeyboardInterrupt):
        run.estimate()
    monkeypatch.setattr(module, name, real)
    fresh = _run(acquisition, S, T)
    _label_to(fresh, y, 120)
    assert run.estimate().to_dict() == fresh.estimate().to_dict()


def _sharp_pool(concentration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A surrogate sure of most items and a target near it: an adaptive design that
    learns to draw some items at below the blind ratio's rate."""
    rng = np.random.default_rng(5)
    S = np.log(np.clip(rng.dirichlet([concentration] * 3, size=N), 1e-6, 1))
    S -= np.log(np.exp(S).sum(axis=1, keepdims=True))
    T = S + rng.normal(0, 0.3, S.shape)
    T -= np.log(np.exp(T).sum(axis=1, keepdims=True))
    return S, T, np.array([rng.choice(3, p=np.exp(t)) for t in T])


@pytest.mark.parametrize(("acquisition", "concentration", "steps"), [
    ("pe_adaptive", 0.3, (100, 150, 200)), ("fixed_mix", 0.1, (200, 250, 300))])
def test_an_adaptive_designs_blind_spot_continued_is_the_replays(
        acquisition: str, concentration: float, steps: tuple[int, ...],
        counted: list[int]) -> None:
    """Where the design left items unexplored (its curves widen the intervals), the
    estimate continued from the kept state is a fresh run's, every float."""
    S, T, y = _sharp_pool(concentration)
    run = _run(acquisition, S, T)
    for n in steps:
        _label_to(run, y, n)
        counted[0] = 0
        mine = run.estimate().to_dict()
        assert counted[0] == (n if n == steps[0] else n - steps[steps.index(n) - 1])
    fresh = _run(acquisition, S, T)
    _label_to(fresh, y, steps[-1])
    assert mine == fresh.estimate().to_dict()
    assert any(b["n_unexplored"] > 0 for b in mine["blind_spots"])
