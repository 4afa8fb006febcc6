"""Adaptive LURE with per-draw weights fixed in advance: exactly unbiased (enumeration)."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats.adaptive import refit_schedule
from activetest.stats.estimators import adaptive_lure_theta, adaptive_lure_weights
from activetest.stats.feature_design import feature_design, history_features
from activetest.stats.step_weights import (
    profile_from_runs,
    smooth_profile,
    step_weights,
    weighted_lure_curve,
)
from tests.stats.conftest import enumerate_design

EVERY = refit_schedule(10, first=1, growth=1.0)  # refit before every draw


def _design(n: int, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    b = rng.normal(size=n) * 1.5
    V = rng.normal(size=(n, 2))
    A = rng.normal(size=(13, 2))
    P = 1 / (1 + np.exp(-(rng.normal(size=(13, 1)) + b[None, :] + A @ V.T)))
    Y = (rng.random(P.shape) < P).astype(float)
    hf = history_features(Y[:12], rank=2)
    return feature_design(history=hf, schedule=EVERY), 1.0 - Y[12]


@pytest.mark.parametrize(("n", "seed"), [(5, 1), (4, 0), (5, 4)])
def test_weights_fixed_in_advance_keep_the_estimate_exactly_unbiased(n: int,
                                                                      seed: int) -> None:
    """Every ordered draw sequence of the feature design refitted before every draw:
    with any positive profile fixed before the run, the expectation of the step-weighted
    estimate is the pool mean to 1e-12 at every budget; weights that depend on the run's
    own labels (normalised 1 / squared residual) are visibly biased (the check has power)."""
    design, losses = _design(n, seed)
    if np.ptp(losses) == 0:
        losses[0] = 1.0 - losses[0]
    truth = losses.mean()
    profiles = {"decreasing": 1.0 + 4.0 / np.arange(1, n + 1),
                "random": np.random.default_rng(seed).uniform(0.2, 3.0, n)}
    for M in range(1, n + 1):
        e = {k: 0.0 for k in profiles}
        e_lure = e_random_w = total = 0.0
        for seq, p, q, g, G in enumerate_design(design, losses, M):
            th = adaptive_lure_theta(losses[list(seq)], q, n, g, G)
            for k, prof in profiles.items():
                e[k] += p * float(th @ step_weights(n, M, prof))
            e_lure += p * float(th @ adaptive_lure_weights(n, M))
            r = 1.0 / (1e-3 + (losses[list(seq)] - g) ** 2)  # depends on the labels
            e_random_w += p * float(th @ (r / r.sum()))
            total += p
        assert total == pytest.approx(1.0, abs=1e-12)
        assert e_lure == pytest.approx(truth, abs=1e-12)
        for k in profiles:
            assert e[k] == pytest.approx(truth, abs=1e-12), (k, M)
        if 1 < M < n:
            assert abs(e_random_w - truth) > 1e-4, M


def test_step_weights_sum_to_one_and_reduce_to_lure() -> None:
    N, M = 50, 20
    np.testing.assert_allclose(step_weights(N, M), adaptive_lure_weights(N, M))
    np.testing.assert_allclose(step_weights(N, M, np.full(M, 3.0)), adaptive_lure_weights(N, M))
    v = step_weights(N, M, 1.0 + 10.0 / np.arange(1, M + 1))
    assert v.sum() == pytest.approx(1.0) and np.all(np.diff(v) > 0)
    with pytest.raises(ValueError, match="positive"):
        step_weights(N, M, np.zeros(M))
    th = np.random.default_rng(0).normal(size=(3, 30))
    cur = weighted_lure_curve(th, N, (5, 20))
    np.testing.assert_allclose(cur[:, 1], th[:, :20] @ adaptive_lure_weights(N, 20))


def test_profile_from_runs_and_its_smooth_fit() -> None:
    rng = np.random.default_rng(1)
    K, N = 40, 200
    m = np.arange(1, K + 1)
    true = 0.3 + 2.0 / (m + 4)
    sd = np.sqrt(true / adaptive_lure_weights(N, K))
    th = 0.5 + rng.normal(size=(4, 4000, K)) * sd * 0.01
    raw = profile_from_runs(th, np.full(4, 0.5), N)
    fit = smooth_profile(raw)
    np.testing.assert_allclose(fit / fit.mean(), true / true.mean(), rtol=0.08)
