"""An adaptive design's draws for a :class:`~activetest.session.workflow.Session`
(:meth:`~activetest.session.workflow.Session.select`): the design's losses read from the
target's log-probs (scored where not stored), and the blind spot's stored state kept in
step with the draws (:mod:`activetest.session.blindspot`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from activetest.session import draw
from activetest.session.store import Acquisition, SessionStore

__all__ = ["advance_blind", "before_draws", "select_adaptive"]


def select_adaptive(s: Any, n: int, *, progress: Callable[[int], object] | None = None,
                    phase: Callable[[str], object] | None = None) -> list[Acquisition]:
    """Draw the next ``n`` items of the open session ``s`` by its adaptive design
    (:func:`activetest.session.draw.select_adaptive`), the blind spot's stored state
    advanced over them after (``progress`` and ``phase`` as
    :meth:`activetest.session.workflow.Session.select` takes them).

    Raises:
        ValueError: ``n`` is not a positive integer or exceeds the items left.
    """
    cfg = s.session_config

    def losses_of(rows: np.ndarray, ys: np.ndarray) -> np.ndarray:
        return s.kind.draw_losses(cfg.design_metric, rows, ys, s._target_score(True))

    with s.store.shared_scores():  # the design and the blind spot read them once
        return draw.select_adaptive(s.store, n, losses_of,
                                    after=lambda sampler: advance_blind(s, sampler, n, phase),
                                    before=lambda sampler: before_draws(s.store, sampler),
                                    progress=progress)


def before_draws(store: SessionStore, sampler: Any) -> None:
    """Before ``select``'s draws: the sampler keeps the design's arrays from before a
    refit where the blind spot's stored state is behind the draws so far (it then
    continues from the arrays at its own refit, which the refit may replace; 16
    bytes per item while the select runs); a state at the draws so far continues
    with the run's own state (``RunDraws``) unless that reuse is switched off."""
    from activetest.session import blind_checkpoint, blindspot

    k0 = blind_checkpoint.stored_k(store)
    sampler.keep_arrays_before_refit = k0 is not None and k0 >= 1 and (
        k0 < len(sampler.acquired) or not blindspot.REUSE_RUN)


def advance_blind(s: Any, sampler: Any, n: int,
                  phase: Callable[[str], object] | None = None) -> None:
    """The blind spot's stored state of the open session ``s`` advanced over the ``n``
    draws just made (:func:`activetest.session.blindspot.advance_design_state`;
    ``phase``: told before, where it is)."""
    from activetest.session.blindspot import advance_design_state

    cfg, store = s.session_config, s.store

    def pool() -> tuple[np.ndarray | None, dict[str, float], dict[str, np.ndarray]]:
        sur = store.scores("surrogate")
        t = store.scores("target")
        assert sur is not None
        t_pool = None if t is None else t.logprobs
        # the blind spot reads the fixed control of the metrics the design does not serve
        unserved = [m for m in s.metrics if m not in cfg.design_metrics]
        controls, bounds = s.kind.pool_inputs(unserved, sur.logprobs, t_pool)
        return t_pool, bounds, controls

    def announce(k0: int, k: int) -> None:
        if phase is not None:
            phase(f"advancing the blind spot's state over draws {k0 + 1}..{k}")

    advance_design_state(cfg, store, sampler, n_pool=sampler.design.n, metrics=s.metrics,
                         batch=n, pool_inputs=pool, announce=announce)
