"""The graded design: exact unbiasedness by enumeration, its fit, seeds, resume, surrogates."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from activetest.stats import _design_models as dm
from activetest.stats.adaptive import (
    AdaptiveDesign,
    AdaptiveSampler,
    AdaptiveState,
    graded_matrix,
    refit_schedule,
    simulate_design,
)
from activetest.stats.graded import (
    graded_design,
    graded_features,
    judge_log_odds,
    p_wrong_agreement,
    p_wrong_judge,
    p_wrong_logprob,
)
from tests.stats.conftest import check_unbiased_at_every_budget

EVERY = refit_schedule(10, first=1, growth=1.0)  # refit (and re-choose lambda) before every draw


def _pool(n: int, seed: int, graded: bool = False):
    """Label-free surrogates of a judgment and the losses: wrong answers have lower
    log-probs, the judge is noisy; ``graded``: losses 1 - F1-like scores in [0, 1]."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    wrong = rng.random(n) < 1 / (1 + np.exp(-1.5 * z))
    sum_lp = -np.exp(0.5 * z + 0.5 * rng.normal(size=n)) * 3
    mean_lp = sum_lp / rng.integers(1, 5, size=n)
    agree = np.clip(1 - wrong + rng.normal(size=n) * 0.4, 0, 1)
    jo = z + rng.normal(size=n)
    judge = np.column_stack([-np.log1p(np.exp(-jo)), -np.log1p(np.exp(jo))])
    L = wrong.astype(float)
    if graded:
        L = np.clip(L * rng.uniform(0.4, 1.0, n) + (1 - L) * rng.uniform(0, 0.3, n), 0, 1)
    return dict(mean_lp=mean_lp, sum_lp=sum_lp, agreement=[agree], judges=[judge]), L


def _designs(feats: dict, schedule: np.ndarray) -> dict[str, AdaptiveDesign]:
    X, _ = graded_features(**feats)
    return {
        "graded": graded_design(**feats, schedule=schedule),
        "graded_lam0.3": graded_design(**feats, schedule=schedule, lam=0.3),
        # first refit two draws later: the prior model is used for the first draws
        "graded_prior_start": graded_design(**feats, schedule=schedule[2:]),
        "graded_uniform_start": AdaptiveDesign.graded(X, schedule=schedule[2:]),
    }


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize(("n", "seed"), [(5, 1), (6, 0), (4, 3)])
def test_exactly_unbiased_with_a_refit_before_every_draw(graded: bool, n: int,
                                                         seed: int) -> None:
    feats, losses = _pool(n, seed, graded)
    assert np.ptp(losses) > 0
    for name, design in _designs(feats, EVERY).items():
        is_bias, qs = check_unbiased_at_every_budget(design, losses, None, f"{name} {graded}")
        assert is_bias > 1e-3, name  # the enumeration has power: IS is visibly biased
        if name == "graded_lam0.3":  # the proposal really changes with the history (in-run
            assert len(qs) > n, name  # lambda may choose the uniform on so few labels)


def test_the_design_learns_from_the_losses() -> None:
    feats, _ = _pool(6, 0)
    design = graded_design(**feats, schedule=EVERY, lam=0.3)
    a = design.plan([0, 1], losses=[0.0, 0.0])
    b = design.plan([0, 1], losses=[1.0, 0.0])
    assert not np.allclose(a.control, b.control) and not np.allclose(a.q, b.q)
    assert a.refits == 3 and np.all(a.q[[0, 1]] == 0)
    # g is P(wrong) in (0, 1) and the score is its Bernoulli sd
    assert np.all((b.control > 0) & (b.control < 1))
    np.testing.assert_allclose(b.q[2:], 0.7 * np.sqrt(b.control * (1 - b.control))[2:]
                               / np.sqrt(b.control * (1 - b.control))[2:].sum() + 0.3 / 4)


def test_prior_model_is_the_label_free_prior() -> None:
    """Before any label the control is the clipped prior ``1 - exp(sum_lp)`` exactly."""
    feats, _ = _pool(50, 2)
    design = graded_design(**feats)
    plan = AdaptiveSampler(design, seed=0).plan()
    p0 = np.clip(p_wrong_logprob(feats["sum_lp"]), 0.01, 0.99)
    np.testing.assert_allclose(plan.control, p0, rtol=1e-12)
    assert plan.lam == 0.5
    s = np.sqrt(p0 * (1 - p0))
    np.testing.assert_allclose(plan.q, 0.5 * s / s.sum() + 0.5 / 50, rtol=1e-12)
    # without a prior: uniform with g = 0 until the first refit
    X, _ = graded_features(**feats)
    plan = AdaptiveSampler(AdaptiveDesign.graded(X), seed=0).plan()
    np.testing.assert_allclose(plan.q, 1 / 50)
    assert np.all(plan.control == 0)


@pytest.mark.parametrize("graded", [False, True])
def test_map_is_the_stationary_point_of_the_posterior(graded: bool) -> None:
    """The kernel's MAP zeroes the gradient of the penalised (quasi-)log-likelihood, and
    its evidence equals the Laplace formula computed here in numpy."""
    feats, L = _pool(200, 4, graded)
    X = graded_matrix(graded_features(**feats)[0], p_wrong_logprob(feats["sum_lp"]))
    idx = np.arange(0, 200, 3)
    w0 = np.zeros(X.shape[1])
    w0[0] = 1.0
    for rho in (0.01, 1.0, 10.0):
        w = w0.copy()
        ev = dm.graded_map(X, idx, L[idx], idx.size, w, w0, rho)
        eta = X[idx] @ w
        p = 1 / (1 + np.exp(-eta))
        grad = X[idx].T @ (L[idx] - p) - rho * (w - w0)
        assert np.max(np.abs(grad)) < 1e-6
        H = (X[idx] * (p * (1 - p))[:, None]).T @ X[idx] + rho * np.eye(X.shape[1])
        ll = np.sum(L[idx] * eta - np.logaddexp(0, eta))
        want = (ll - 0.5 * rho * np.sum((w - w0) ** 2) + 0.5 * X.shape[1] * np.log(rho)
                - 0.5 * np.linalg.slogdet(H)[1])
        assert ev == pytest.approx(want, rel=1e-9)


def _sequential(design: AdaptiveDesign, losses: np.ndarray, M: int, seed: int,
                batch: int = 1) -> AdaptiveSampler:
    sm = AdaptiveSampler(design, seed=seed)
    while len(sm.acquired) < M:
        idx, _ = sm.draw(min(batch, M - len(sm.acquired)))
        sm.observe(losses=losses[idx])
    return sm


def test_same_seed_same_draws_and_simulate_matches_one_run() -> None:
    feats, L = _pool(300, 5, graded=True)
    design = graded_design(**feats)
    a = _sequential(design, L, 80, seed=7)
    b = _sequential(design, L, 80, seed=7)
    c = _sequential(design, L, 80, seed=8)
    assert a.acquired == b.acquired and a.q == b.q and a.acquired != c.acquired
    runs = simulate_design(design, losses=L, labels=None, budget=80, n_runs=2, random_state=7)
    np.testing.assert_array_equal(runs.indices[0], a.acquired)
    np.testing.assert_array_equal(runs.q[0], a.q)
    np.testing.assert_array_equal(runs.control_rest[0], a.control_rest)
    info = a.info()
    assert runs.refits[0] == info["refits"] == len(refit_schedule(80))
    assert info["ridge"] in design.rhos and len(info["weights"]) == 2 + 4
    np.testing.assert_allclose(runs.curve(L)[0, -1], a.estimate().estimate, rtol=1e-12)
    live, pure = a.plan(), design.plan(a.acquired, losses=a.losses)
    np.testing.assert_array_equal(live.q, pure.q)
    np.testing.assert_array_equal(live.control, pure.control)


@pytest.mark.parametrize("batch", [1, 7])
def test_resume_from_saved_state_gives_the_same_future_draws(batch: int) -> None:
    feats, L = _pool(400, 6)
    design = graded_design(**feats)
    full = _sequential(design, L, 90, seed=3, batch=batch)
    part = _sequential(design, L, 42, seed=3, batch=batch)
    part.draw(3)
    saved = json.loads(json.dumps(asdict(part.state())))
    resumed = AdaptiveSampler.from_state(design, AdaptiveState(**saved))
    assert resumed.acquired == part.acquired and resumed.info() == part.info()
    pend = np.array(resumed.acquired[-3:])
    resumed.observe(losses=L[pend])
    while len(resumed.acquired) < 90:
        size = batch - (len(resumed.acquired) % batch) if batch > 1 else 1
        idx, _ = resumed.draw(min(size, 90 - len(resumed.acquired)))
        resumed.observe(losses=L[idx])
    if batch == 1:
        assert resumed.acquired == full.acquired and resumed.q == full.q
        assert resumed.estimate().estimate == full.estimate().estimate
    else:
        assert resumed.acquired[:42] == full.acquired[:42]
    # a changed pool is refused, not silently replayed
    other = graded_design(**{**feats, "sum_lp": feats["sum_lp"] * 2})
    with pytest.raises(ValueError, match="changed"):
        AdaptiveSampler.from_state(other, AdaptiveState(**saved))


def test_graded_runs_need_losses() -> None:
    feats, _ = _pool(30, 0)
    sm = AdaptiveSampler(graded_design(**feats), seed=0)
    sm.draw(2)
    with pytest.raises(ValueError, match="losses"):
        sm.observe(labels=[0, 1])


def test_monte_carlo_unbiased_and_better_than_uniform_on_an_informative_pool() -> None:
    """3,000 runs of 60 draws on 400 items: the mean estimate is within 4 standard errors of
    the pool mean, and the design's variance is below the uniform's (the features inform)."""
    feats, L = _pool(400, 9)
    runs = simulate_design(graded_design(**feats), losses=L, labels=None, budget=60,
                           n_runs=3000, random_state=1)
    est = runs.curve(L)[:, -1]
    se = est.std(ddof=1) / np.sqrt(est.size)
    assert abs(est.mean() - L.mean()) < 4 * se
    uniform_var = L.var(ddof=1) / 60 * (400 - 60) / 399
    assert est.var() < uniform_var


def test_surrogate_transforms() -> None:
    np.testing.assert_allclose(p_wrong_logprob(np.array([0.0, np.log(0.25), 0.1])),
                               [0.0, 0.75, 0.0])
    np.testing.assert_allclose(p_wrong_agreement(np.array([1.0, 0.25])), [0.0, 0.75])
    j = np.log(np.array([[0.2, 0.8], [0.9, 0.1]]))
    np.testing.assert_allclose(p_wrong_judge(j), [0.2, 0.9])
    np.testing.assert_allclose(judge_log_odds(j), np.log([0.25, 9.0]))
    with pytest.raises(ValueError):
        p_wrong_agreement(np.array([1.5]))
    with pytest.raises(ValueError):
        graded_features()
    X = graded_matrix(np.column_stack([np.arange(5.0), np.ones(5)]), np.full(5, 0.5))
    assert X.shape == (5, 3)  # offset, intercept, the non-constant column
    np.testing.assert_allclose(X[:, 2].std(), 1.0)
