"""Shared helpers for the statistics tests: exact enumeration of acquisition orders."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

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


SCORE_CASES = {
    "random": np.array([0.3, 1.7, 0.05, 2.2, 0.9, 0.4, 1.1]),
    "all_zero": np.zeros(7),
    "one_huge": np.array([1e12, 0.2, 0.1, 0.3, 0.0, 0.7, 0.2]),
    "ties": np.array([1.0, 1.0, 2.0, 2.0, 0.0, 0.0, 1.0]),
    "tiny": np.array([1e-300, 3e-300, 0.0, 1e-299, 2e-300, 5e-301, 1e-300]),
}
