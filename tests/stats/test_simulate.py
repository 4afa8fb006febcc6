"""The many-run simulator: shapes, seeds, and the error summaries."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import Method, log_softmax, simulate


def _data(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2)) * 2
    y = (rng.random(n) < np.exp(log_softmax(z))[:, 1]).astype(int)
    return log_softmax(z * 1.2), log_softmax(z + rng.normal(size=(n, 2)) * 0.2), y


def test_shapes_truth_and_reproducibility() -> None:
    t, s, y = _data()
    methods = ["uniform+mean", "ce+lure", "ce+is", "ce+cv_lure", "ce+ase", "pe+lure",
               "zero_one+lure", "nll+lure", "oracle+lure", "ce+cv_lure_tuned"]
    a = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=methods, budget=30,
                 n_runs=50, random_state=3)
    b = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=methods[:2],
                 budget=30, n_runs=50, random_state=3)
    assert set(a.estimates) == {Method.parse(m).name for m in methods}
    assert a.estimates["ce+lure"].shape == (50, 30) and a.budget == 30 and a.n_runs == 50
    assert a.truth == pytest.approx(-t[np.arange(400), y].mean())
    # adding methods does not change the draws of the others
    np.testing.assert_array_equal(a.estimates["ce+lure"], b.estimates["ce+lure"])
    np.testing.assert_array_equal(a.estimates["uniform+mean"], b.estimates["uniform+mean"])
    # ASE is constant in M; estimators on one acquisition share draws
    assert np.all(a.estimates["ce+ase"] == a.estimates["ce+ase"][0, 0])
    assert a.median_squared_error("ce+lure").shape == (30,)
    rel = a.relative_error("ce+lure")
    assert rel.shape == (30,) and np.all(rel > 0)
    np.testing.assert_allclose(a.relative_error("uniform+mean"), 1.0)


def test_relative_error_offset_charges_labels() -> None:
    t, s, y = _data()
    r = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, budget=20, n_runs=40,
                 methods=["uniform+mean", "ce+lure"], random_state=0)
    rel = r.relative_error("ce+lure", offset=5)
    assert rel.shape == (15,)
    expected = r.median_squared_error("ce+lure")[:15] / r.median_squared_error("uniform+mean")[5:]
    np.testing.assert_allclose(rel, expected)
    with pytest.raises(ValueError, match="offset"):
        r.relative_error("ce+lure", offset=20)


def test_oracle_acquisition_beats_uniform() -> None:
    """Sampling proportional to the true loss is near-optimal: a real, checkable gain."""
    t, s, y = _data(1000, 1)
    r = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, budget=50, n_runs=2000,
                 methods=["uniform+mean", "oracle+lure"], random_state=0, proposal_floor=0.01)
    assert r.relative_error("oracle+lure", statistic="mean")[-1] < 0.3


def test_zero_one_loss_and_test_set_truth() -> None:
    t, s, y = _data()
    r = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, budget=10, n_runs=5,
                 methods=["zero_one+lure"], loss="zero_one", truth=0.25, random_state=0)
    assert r.truth == 0.25
    assert r.pool_risk == pytest.approx((t.argmax(1) != y).mean())


def test_pe_control_variate_uses_the_surrogate_alone() -> None:
    from activetest.stats import cv_lure_curve, predictive_entropy
    t, s, y = _data()
    r = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, budget=15, n_runs=3,
                 methods=["pe+cv_lure"], random_state=0)
    idx, q = r.acquired["pe"], r.q["pe"]
    h = predictive_entropy(s)
    losses = -t[np.arange(len(y)), y]
    np.testing.assert_allclose(r.estimates["pe+cv_lure"],
                               cv_lure_curve(losses[idx], q, len(y), h[idx], h.mean()))
