"""Shared helpers for the statistics tests: exact enumeration of acquisition orders."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from activetest.stats.proposal import proposal


def enumerate_orders(scores: np.ndarray, alpha: float, M: int
                     ) -> Iterator[tuple[tuple[int, ...], float, np.ndarray]]:
    """Every ordered acquisition sequence of length M with its probability and q_m."""
    n = len(scores)

    def rec(seq: tuple[int, ...], prob: float, qs: tuple[float, ...]):
        if len(seq) == M:
            yield seq, prob, np.array(qs)
            return
        rem = np.ones(n, dtype=bool)
        rem[list(seq)] = False
        q = proposal(scores, rem, alpha)
        for i in np.flatnonzero(rem):
            yield from rec((*seq, int(i)), prob * q[i], (*qs, float(q[i])))

    yield from rec((), 1.0, ())


def enumerate_design(design: Any, losses: np.ndarray, M: int, labels: np.ndarray | None = None,
                     batch: int = 1, second: bool = False
                     ) -> Iterator[tuple[tuple[int, ...], float, np.ndarray, np.ndarray,
                                         np.ndarray]]:
    """Every ordered draw sequence of length M of an adaptive design: (sequence,
    probability, q, g, G).

    The design is asked for its plan before each draw from the history alone (its
    public, pure-function interface); with ``batch > 1`` the labels of the current
    batch are withheld until it is complete. ``labels``: None for designs that
    observe losses only (the graded design). ``losses`` are those the design
    observes (a two-metric design's first); ``second``: yield a two-metric design's
    second control (g, G) instead of its first.
    """

    def rec(seq, prob, qs, gs, Gs):  # type: ignore[no-untyped-def]
        if len(seq) == M:
            yield seq, prob, np.array(qs), np.array(gs), np.array(Gs)
            return
        m = len(seq)
        known = [(j // batch) * batch for j in range(m + 1)]
        seen = list(seq[:known[m]])
        plan = design.plan(seq, labels=None if labels is None else labels[seen],
                           losses=losses[seen], n_known=known[:m])
        assert plan.q.sum() == pytest.approx(1.0, abs=1e-13)
        assert np.all(plan.q[list(seq)] == 0)
        for i in np.flatnonzero(plan.q > 0):
            g, G = ((plan.control2[i], plan.control_rest2) if second
                    else (plan.control[i], plan.control_rest))
            yield from rec((*seq, int(i)), prob * plan.q[i], (*qs, plan.q[i]), (*gs, g),
                           (*Gs, G))

    yield from rec((), 1.0, (), (), ())


def check_unbiased_at_every_budget(design: Any, losses: np.ndarray, labels: np.ndarray | None,
                                   name: str = "") -> tuple[float, set[float]]:
    """Enumerate every draw order of a classification design at every budget M = 1..n and
    assert that the probabilities sum to 1 and that adaptive LURE's expectation is the
    pool mean, both to 1e-12.

    Returns what the callers' power checks need: the largest bias of importance sampling
    on the same draws (visible: the enumeration can fail) and the proposals ``q`` met on
    full-length orders, rounded to 1e-6 (more than n of them: the design adapts).
    """
    from activetest.stats import adaptive_lure, importance_sampling

    n = len(losses)
    truth = losses.mean()
    is_bias, qs = 0.0, set()
    for M in range(1, n + 1):
        e = e_is = total = 0.0
        for seq, p, q, g, G in enumerate_design(design, losses, M, labels):
            L = losses[list(seq)]
            e += p * float(adaptive_lure(L, q, n, g, G))
            e_is += p * float(importance_sampling(L, q, n))
            total += p
            if n == M:
                qs.update(np.round(q * 1e6).tolist())
        assert total == pytest.approx(1.0, abs=1e-12), (name, M)
        assert e == pytest.approx(truth, abs=1e-12), (name, M)
        is_bias = max(is_bias, abs(e_is - truth))
    return is_bias, qs


SCORE_CASES = {
    "random": np.array([0.3, 1.7, 0.05, 2.2, 0.9, 0.4, 1.1]),
    "all_zero": np.zeros(7),
    "one_huge": np.array([1e12, 0.2, 0.1, 0.3, 0.0, 0.7, 0.2]),
    "ties": np.array([1.0, 1.0, 2.0, 2.0, 0.0, 0.0, 1.0]),
    "tiny": np.array([1e-300, 3e-300, 0.0, 1e-299, 2e-300, 5e-301, 1e-300]),
}
