"""Drawing items: the stored single-run sampler, resumed exactly where it stopped.

A draw reads the sampler's state and records the new draws in ONE write
transaction, with the sampler's RNG state after them, so no other process can
draw in between and a session stopped at any moment (even ``kill -9``) resumes
with the same future draws.

LURE needs the labels of the FIRST K draws: :func:`usable_prefix` is that
prefix, and the labels of later draws wait until every earlier draw is labelled.
"""

from __future__ import annotations

import numpy as np

from activetest.session.records import Waiting
from activetest.session.store import Acquisition, SessionError, SessionStore
from activetest.stats import ActiveSampler, SamplerState

__all__ = ["acquisition_scores_of", "pending", "select", "usable_prefix", "waiting"]


def acquisition_scores_of(store: SessionStore) -> np.ndarray:
    """The ``(N,)`` acquisition scores the session was created with."""
    stored = store.scores("acquisition")
    if stored is None:
        raise SessionError(f"{store.path}: the session has no acquisition scores")
    return stored.logprobs[:, 0]


def select(store: SessionStore, n: int) -> list[Acquisition]:
    """Draw the next ``n`` items (sequentially; persisted with the sampler state).

    Raises:
        ValueError: ``n`` is not a positive integer or exceeds the items left.
    """
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"the number of items to select must be a positive integer, "
                         f"got {n!r}")
    scores = acquisition_scores_of(store)
    with store.transaction():
        # Read the state inside the write transaction: no other process can draw between.
        row = store.sampler_row()
        if row is None:
            raise SessionError(f"{store.path}: the session has no sampler state")
        alpha, seed, rng_state = row
        acq = store.acquisitions()
        left = len(scores) - len(acq)
        if n > left:
            raise ValueError(f"cannot select {n} items: only {left} of {len(scores)} "
                             f"remain undrawn")
        state = SamplerState(alpha=alpha, seed=seed, rng_state=rng_state,
                             acquired=[a.index for a in acq], q=[a.q for a in acq])
        sampler = ActiveSampler.from_state(scores, state)
        idx, q = sampler.draw(int(n))
        return store.record_draws(idx.tolist(), q.tolist(), sampler.state().rng_state,
                                  expected_steps=len(acq))


def pending(store: SessionStore) -> list[Acquisition]:
    """Drawn items without a label, in draw order."""
    labelled = store.labels()
    return [a for a in store.acquisitions() if a.index not in labelled]


def usable_prefix(store: SessionStore) -> tuple[list[Acquisition], dict[int, int], int]:
    """``(first K draws that are all labelled, labels by row, labels waiting after them)``."""
    acq = store.acquisitions()
    labels = {i: lab.label for i, lab in store.labels().items()}
    k = 0
    while k < len(acq) and acq[k].index in labels:
        k += 1
    waiting = sum(1 for a in acq[k:] if a.index in labels)
    return acq[:k], labels, waiting


def waiting(store: SessionStore) -> Waiting | None:
    """The first unlabelled draw and the later labelled draws whose labels wait for it."""
    acq = store.acquisitions()
    labelled = store.labels()
    k = 0
    while k < len(acq) and acq[k].index in labelled:
        k += 1
    if k == len(acq):
        return None
    later = tuple(a.item_id for a in acq[k + 1:] if a.index in labelled)
    return Waiting(acq[k].item_id, acq[k].step, later)
