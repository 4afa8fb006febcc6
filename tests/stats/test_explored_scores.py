"""``explored_scores``: raised scores keep every reachable item at the asked rate of the
uniform's under the floored proposal, leave the other items alone, change nothing where
nothing needs raising, and (with the blind spot replayed from the proposals) leave far
fewer unexplored items than the raw scores on a pool with a few high scores."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import sample
from activetest.stats.blindspot import BLIND_RATIO, blind_spot_curve
from activetest.stats.blindspot_replay import floored_proposals
from activetest.stats.proposal import explored_scores, proposal

FLOOR = 0.1


def _rates(scores: np.ndarray) -> np.ndarray:
    n = scores.size
    return proposal(scores, np.ones(n, dtype=bool), FLOOR) * n


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rate", [0.3, 0.6, 0.9])
def test_every_reachable_item_at_the_rate(seed: int, rate: float) -> None:
    rng = np.random.default_rng(seed)
    n = 500
    s = rng.pareto(1.0, size=n)  # heavy-tailed: most items far below the mean
    reach = rng.random(n) < 0.7
    s[~reach & (rng.random(n) < 0.5)] = 0.0
    assert _rates(s)[reach].min() < rate  # the raw scores leave some below it
    e = explored_scores(s, reach, rate, proposal_floor=FLOOR)
    r = _rates(e)
    assert r[reach].min() == pytest.approx(rate, rel=1e-9)  # at the rate, not above it
    assert np.array_equal(e[~reach], s[~reach])  # the rest keep their scores
    assert np.all(e >= s)
    # the raised level is the least one: lowering it a little puts an item below the rate
    u = e[reach].min()
    lower = np.where(reach, np.maximum(s, 0.99 * u), s)
    assert _rates(lower)[reach].min() < rate


def test_nothing_to_raise() -> None:
    s = np.array([1.0, 2.0, 0.0, 3.0])
    reach = np.array([True, True, False, True])
    assert np.array_equal(explored_scores(s, reach, FLOOR, proposal_floor=FLOOR), s)
    assert np.array_equal(explored_scores(s, np.zeros(4, dtype=bool), 0.6), s)
    assert np.array_equal(explored_scores(np.zeros(4), reach, 0.6), np.zeros(4))
    flat = np.ones(4)  # uniform already: every item at rate 1
    assert np.array_equal(explored_scores(flat, reach, 0.6), flat)
    with pytest.raises(ValueError, match="rate must be"):
        explored_scores(s, reach, 1.0)
    with pytest.raises(ValueError, match="reachable must have shape"):
        explored_scores(s, reach[:3], 0.6)


def test_fewer_unexplored_items() -> None:
    """The point of it: on a pool where the scores leave most items near the floor, the
    replayed exposures after 100 draws leave many items unexplored under the raw scores
    and (nearly) none under the raised ones."""
    rng = np.random.default_rng(3)
    n = 2000
    s = np.where(rng.random(n) < 0.1, 5.0, 0.05)
    reach = np.ones(n, dtype=bool)
    bound = np.ones(n)
    counts = {}
    for name, sc in (("raw", s), ("explored", explored_scores(s, reach, 0.6,
                                                               proposal_floor=FLOOR))):
        idx, _ = sample(sc, 100, n_runs=20, proposal_floor=FLOOR, random_state=4)
        counts[name] = [blind_spot_curve(floored_proposals(sc, r, FLOOR), r, bound, N=n,
                                         ratio=BLIND_RATIO).n_unexplored[-1] for r in idx]
    assert min(counts["raw"]) > n // 2
    assert max(counts["explored"]) == 0
