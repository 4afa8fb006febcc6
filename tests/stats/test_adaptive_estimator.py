"""The general (adaptive) LURE estimator: LURE and CV-LURE as special cases, exact bias 0."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import (
    adaptive_lure,
    adaptive_lure_curve,
    adaptive_lure_se,
    adaptive_lure_terms,
    adaptive_lure_theta,
    adaptive_lure_weights,
    cv_lure_curve,
    fixed_control_rest,
    importance_sampling,
    lure,
    lure_curve,
    proposal,
    sample,
)


def _runs(N: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    losses = rng.exponential(size=N) * 2
    h = losses * rng.lognormal(0, 0.4, size=N)
    idx, q = sample(rng.exponential(size=N), K, n_runs=6, random_state=seed)
    return losses, h, idx, q


@pytest.mark.parametrize(("N", "K"), [(50, 20), (30, 30), (200, 1), (7, 6)])
def test_zero_control_is_lure(N: int, K: int) -> None:
    losses, _, idx, q = _runs(N, K, N + K)
    L = losses[idx]
    np.testing.assert_allclose(adaptive_lure_curve(L, q, N), lure_curve(L, q, N),
                               rtol=1e-12, atol=1e-12)
    for M in (1, K // 2 + 1, K):
        np.testing.assert_allclose(adaptive_lure(L[:, :M], q[:, :M], N), lure(L[:, :M], q[:, :M],
                                   N), rtol=1e-12)
        t = adaptive_lure_terms(L[:, :M], q[:, :M], N)
        np.testing.assert_allclose(t.mean(axis=1), lure(L[:, :M], q[:, :M], N), rtol=1e-12)


@pytest.mark.parametrize(("N", "K"), [(50, 20), (30, 30), (9, 4)])
def test_fixed_control_is_cv_lure(N: int, K: int) -> None:
    losses, h, idx, q = _runs(N, K, 3 * N + K)
    L, H = losses[idx], h[idx]
    G = fixed_control_rest(h, idx)
    np.testing.assert_allclose(G[:, 0], h.sum())
    np.testing.assert_allclose(adaptive_lure_curve(L, q, N, H, G),
                               cv_lure_curve(L, q, N, H, h.mean()), rtol=1e-12, atol=1e-12)


def test_weights_sum_to_one_and_the_full_pool_is_exact() -> None:
    for N, M in ((10, 1), (10, 9), (2000, 400), (5, 5)):
        c = adaptive_lure_weights(N, M)
        assert c.shape == (M,) and np.all(c >= 0)
        assert c.sum() == pytest.approx(1.0, abs=1e-13)
    losses, h, idx, q = _runs(12, 12, 0)
    L = losses[idx]
    G = fixed_control_rest(h, idx)
    np.testing.assert_allclose(adaptive_lure(L, q, 12, h[idx], G), losses.mean(), rtol=1e-13)
    np.testing.assert_array_equal(adaptive_lure_se(L, q, 12), 0.0)
    np.testing.assert_allclose(adaptive_lure_terms(L, q, 12).mean(axis=1), losses.mean())


def test_theta_has_the_stated_form() -> None:
    L = np.array([1.0, 3.0, 0.5])
    q = np.array([0.25, 0.5, 0.4])
    g = np.array([0.8, 2.0, 1.0])
    G = np.array([10.0, 8.0, 6.0])
    th = adaptive_lure_theta(L, q, 5, g, G)
    expect = np.array([(0 + 10 + (1 - 0.8) / 0.25), (1 + 8 + (3 - 2) / 0.5),
                       (4 + 6 + (0.5 - 1) / 0.4)]) / 5
    np.testing.assert_allclose(th, expect, rtol=1e-15)
    with pytest.raises(ValueError, match="both"):
        adaptive_lure_theta(L, q, 5, g, None)
    with pytest.raises(ValueError, match="shape"):
        adaptive_lure_theta(L, q, 5, g[:2], G[:2])


LOSSES = np.array([0.1, 2.5, 0.0, 1.3, 0.7, 4.0])


def _adaptive_orders(n: int, M: int):
    """Every ordered sequence under a design whose scores AND control change with the
    labels seen so far (an arbitrary adaptive rule, not the calibrated design)."""
    base = np.array([0.3, 1.7, 0.05, 2.2, 0.9, 0.4])[:n]

    def design(seq: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        seen = LOSSES[list(seq)]
        k = len(seq)
        level = seen.mean() if k else 0.0
        g = level * base / base.mean() + 0.1 * k  # control moves with the labels
        scores = np.abs(base - (seen.max() if k else 0.0)) + 0.01 * k
        rem = np.ones(n, dtype=bool)
        rem[list(seq)] = False
        return proposal(scores, rem, 0.2), g

    def rec(seq, prob, qs, gs, Gs):
        if len(seq) == M:
            yield seq, prob, np.array(qs), np.array(gs), np.array(Gs)
            return
        q, g = design(seq)
        rem = np.ones(n, dtype=bool)
        rem[list(seq)] = False
        for i in np.flatnonzero(rem):
            yield from rec((*seq, int(i)), prob * q[i], (*qs, q[i]), (*gs, g[i]),
                           (*Gs, g[rem].sum()))

    yield from rec((), 1.0, (), (), ())


@pytest.mark.parametrize("n", [2, 4, 6])
def test_exactly_unbiased_under_an_adaptive_design_and_is_biased(n: int) -> None:
    truth = LOSSES[:n].mean()
    worst_is = 0.0
    for M in range(1, n + 1):
        e = e_is = total = 0.0
        for seq, p, q, g, G in _adaptive_orders(n, M):
            L = LOSSES[list(seq)]
            e += p * float(adaptive_lure(L, q, n, g, G))
            e_is += p * float(importance_sampling(L, q, n))
            total += p
        assert total == pytest.approx(1.0, abs=1e-12)
        assert e == pytest.approx(truth, abs=1e-12), (n, M)
        worst_is = max(worst_is, abs(e_is - truth))
    assert worst_is > 1e-2  # the same enumeration detects a biased estimator
