"""A small session store built in a temporary folder without a model (real SQLite):
the rooms' unit tests draw and label on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from activetest.data.task import Item
from activetest.data.taskfile import task_to_dict
from activetest.session.create import resolve_task
from activetest.session.store import SessionStore
from activetest.stats import ActiveSampler

N_ITEMS = 6


def make_store(tmp_path: Path, *, seed: int = 0, alpha: float = 0.1) -> SessionStore:
    """A uniform-acquisition sst2 session of :data:`N_ITEMS` items ``r0..r5`` (no draws)."""
    task = resolve_task("sst2")
    items = [Item(f"r{i}", {"text": f"review {i}"}, i % 2) for i in range(N_ITEMS)]
    config = {"task": task_to_dict(task), "task_ref": "sst2", "surrogate": "s", "target": "t",
              "metric": "error_rate", "acquisition": "uniform", "alpha": alpha, "seed": seed}
    scores = np.ones(N_ITEMS)

    def init(store: SessionStore) -> None:
        lp = np.log(np.full((N_ITEMS, 2), 0.5))
        store.put_scores("surrogate", "s", lp, {"spec": "s"})
        store.put_scores("target", "t", lp, {"spec": "t"})
        store.put_scores("acquisition", "uniform", scores[:, None], {}, predictions=False)
        state = ActiveSampler(scores, proposal_floor=alpha, seed=seed).state()
        store.init_sampler(state.proposal_floor, seed, state.rng_state)

    return SessionStore.create(tmp_path / "s.db", config=config, items=items, init=init)
