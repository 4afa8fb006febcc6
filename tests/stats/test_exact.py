"""Exact expectations by enumerating every ordered acquisition sequence (N <= 7)."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import cv_lure, importance_sampling, lure, lure_curve, lure_weights, proposal
from tests.stats.conftest import SCORE_CASES, enumerate_orders

LOSSES = np.array([0.1, 2.5, 0.0, 1.3, 0.7, 4.0, 0.2])
CONTROL = np.array([0.3, 1.9, 0.2, 1.0, 0.5, 3.1, 0.1])


@pytest.mark.parametrize("case", sorted(SCORE_CASES))
@pytest.mark.parametrize("alpha", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("n", [1, 2, 4, 6])
def test_lure_and_cv_lure_are_exactly_unbiased(case: str, alpha: float, n: int) -> None:
    scores = SCORE_CASES[case][:n]
    losses, h = LOSSES[:n], CONTROL[:n]
    truth = losses.mean()
    for M in range(1, n + 1):
        e_lure = e_cv = total = 0.0
        for seq, prob, qs in enumerate_orders(scores, alpha, M):
            idx = list(seq)
            e_lure += prob * float(lure(losses[idx], qs, n))
            e_cv += prob * float(cv_lure(losses[idx], qs, n, h[idx], h.mean()))
            total += prob
        assert total == pytest.approx(1.0, abs=1e-12)
        assert e_lure == pytest.approx(truth, abs=1e-12), (case, alpha, n, M)
        assert e_cv == pytest.approx(truth, abs=1e-12), (case, alpha, n, M)


def test_seven_item_pool_all_budgets() -> None:
    """The largest pool (N = 7, 5040 orders at M = 7) on the hardest score vector."""
    scores = SCORE_CASES["one_huge"]
    for M in (3, 7):
        e = sum(p * float(lure(LOSSES[list(s)], q, 7)) for s, p, q in
                enumerate_orders(scores, 0.1, M))
        assert e == pytest.approx(LOSSES.mean(), abs=1e-12)


def test_importance_sampling_is_biased_without_replacement() -> None:
    scores = SCORE_CASES["random"][:5]
    losses = LOSSES[:5]
    bias = []
    for M in (2, 3, 4):
        e = sum(p * float(importance_sampling(losses[list(s)], q, 5))
                for s, p, q in enumerate_orders(scores, 0.1, M))
        bias.append(e - losses.mean())
    # IS is unbiased only at M = 1; here it is off by far more than rounding.
    assert max(abs(b) for b in bias) > 1e-2


def test_importance_sampling_unbiased_at_first_draw() -> None:
    scores = SCORE_CASES["random"][:5]
    e = sum(p * float(importance_sampling(LOSSES[list(s)], q, 5))
            for s, p, q in enumerate_orders(scores, 0.1, 1))
    assert e == pytest.approx(LOSSES[:5].mean(), abs=1e-12)


@pytest.mark.parametrize("case", sorted(SCORE_CASES))
def test_proposal_sums_to_one_over_remaining(case: str) -> None:
    scores = SCORE_CASES[case]
    rng = np.random.default_rng(3)
    for _ in range(20):
        rem = rng.random(7) < 0.6
        if not rem.any():
            continue
        q = proposal(scores, rem, 0.1)
        assert q[rem].sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(q[~rem] == 0)
        # the floor: every remaining item has at least alpha / R_m before renormalising
        assert np.all(q[rem] > 0)


def test_proposal_matches_paper_steps() -> None:
    s = np.array([4.0, 1.0, 0.0, 5.0])
    rem = np.array([True, True, True, False])
    # normalise over remaining: [0.8, 0.2, 0]; floor at 0.1/3; renormalise
    p = np.maximum(np.array([0.8, 0.2, 0.0]), 0.1 / 3)
    np.testing.assert_allclose(proposal(s, rem, 0.1)[:3], p / p.sum(), rtol=1e-15)


def test_weights_are_one_when_the_pool_is_exhausted() -> None:
    q = np.array([0.2, 0.5, 0.5, 1.0])
    np.testing.assert_array_equal(lure_weights(q, 4), np.ones(4))


def test_incremental_lure_equals_direct_formula() -> None:
    rng = np.random.default_rng(0)
    N, K = 50, 50
    L = rng.exponential(size=(3, K))
    q = rng.uniform(0.01, 1.0, size=(3, K))
    curve = lure_curve(L, q, N)
    for M in range(1, K + 1):
        m = np.arange(1, M + 1)
        v = np.ones(M) if M == N else 1 + (N - M) / (N - m) * (1 / ((N - m + 1) * q[:, :M]) - 1)
        direct = (v * L[:, :M]).mean(axis=1)
        np.testing.assert_allclose(curve[:, M - 1], direct, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(lure(L[:, :M], q[:, :M], N), direct, rtol=1e-12)
