"""The calibrated design over per-item features and the history features it uses."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats.adaptive import AdaptiveSampler, refit_schedule, simulate_design
from activetest.stats.feature_design import (
    choose_rank,
    design_matrix,
    feature_design,
    fit_predict,
    history_features,
    surrogate_features,
)
from tests.stats.conftest import check_unbiased_at_every_budget

EVERY = refit_schedule(10, first=1, growth=1.0)  # refit (and re-choose lambda) before every draw


def _matrix(H: int, N: int, rank: int, seed: int, missing: float = 0.0
            ) -> tuple[np.ndarray, np.ndarray]:
    """A response matrix of H + 1 models from a low-rank logistic model; the last row
    (the target) is returned apart, as its losses."""
    rng = np.random.default_rng(seed)
    b = rng.normal(size=N) * 1.5
    V = rng.normal(size=(N, rank))
    A = rng.normal(size=(H + 1, rank))
    theta = rng.normal(size=(H + 1, 1))
    P = 1 / (1 + np.exp(-(theta + b[None, :] + A @ V.T)))
    Y = (rng.random(P.shape) < P).astype(float)
    if missing:
        Y[:H][rng.random((H, N)) < missing] = np.nan
    return Y[:H], 1.0 - Y[H]


def _designs(n: int, seed: int, graded: bool):
    hist, L = _matrix(12, n, 2, seed, missing=0.2)
    hist[:, 0] = np.nan  # one item without any history
    hf = history_features(hist, rank=2)
    rng = np.random.default_rng(seed + 100)
    if graded:
        L = np.clip(L * rng.uniform(0.4, 1.0, n) + (1 - L) * rng.uniform(0, 0.3, n), 0, 1)
    extra = rng.normal(size=(n, 2))
    lp = rng.normal(size=(n, 3)) * 2  # a 3-class surrogate's log-probs (a classification pool)
    lp -= np.log(np.exp(lp).sum(axis=1, keepdims=True))
    return {
        # classification sessions with history: the surrogate's probabilities as features
        "history+surrogate": feature_design(history=hf, features=surrogate_features(lp),
                                            schedule=EVERY),
        "history": feature_design(history=hf, schedule=EVERY),
        "history_lam0.3": feature_design(history=hf, schedule=EVERY, lam=0.3),
        "history+features_late": feature_design(history=hf, features=extra,
                                                schedule=EVERY[2:]),
        "features_uniform_start": feature_design(features=extra, schedule=EVERY[2:]),
        # the guard: uniform draws with a constant control are a candidate at every refit
        "history_earned": feature_design(history=hf, schedule=EVERY, rule="earned"),
        "history_fallback_only": feature_design(history=hf, schedule=EVERY, rule="earned",
                                                rule_params=(1.0, 0.0, 1.0, 0.0)),
    }, L


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize(("n", "seed"), [(5, 1), (6, 0), (4, 3)])
def test_exactly_unbiased_with_a_refit_before_every_draw(graded: bool, n: int,
                                                         seed: int) -> None:
    """Every ordered draw sequence, the model refitted and lambda re-chosen before every
    draw: the expectation of adaptive LURE is the pool mean to 1e-12 at every budget."""
    designs, losses = _designs(n, seed, graded)
    assert np.ptp(losses) > 0
    for name, design in designs.items():
        is_bias, qs = check_unbiased_at_every_budget(design, losses, None, f"{name} {graded}")
        assert is_bias > 1e-3, name  # the enumeration has power: IS is visibly biased
        if name == "history_lam0.3":
            assert len(qs) > n, name  # the proposal really changes with the history


def test_needs_no_target_predictions_and_learns_from_losses() -> None:
    hist, _ = _matrix(30, 40, 2, 4)
    design = feature_design(history=history_features(hist, rank=2), schedule=EVERY, lam=0.3)
    assert design.needs_losses and design.name == "features"
    a = design.plan([0, 1, 2], losses=[0.0, 0.0, 0.0])
    b = design.plan([0, 1, 2], losses=[1.0, 1.0, 0.0])
    assert not np.allclose(a.control, b.control) and not np.allclose(a.q, b.q)
    assert np.all(a.q[[0, 1, 2]] == 0) and b.control[3:].mean() > a.control[3:].mean()


def test_prior_model_is_one_minus_the_shrunk_difficulty() -> None:
    Y = np.array([[1, 0, np.nan], [1, 1, np.nan], [0, 1, np.nan], [1, 0, np.nan]], float)
    hf = history_features(Y, rank=0)
    ybar = 5 / 8
    np.testing.assert_allclose(hf.p_correct, [(3 + 2 * ybar) / 6, (2 + 2 * ybar) / 6, ybar])
    assert hf.covered.tolist() == [True, True, False]
    plan = AdaptiveSampler(feature_design(history=hf), seed=0).plan()
    np.testing.assert_allclose(plan.control, 1 - hf.p_correct, rtol=1e-12)
    s = np.sqrt(plan.control * (1 - plan.control))
    np.testing.assert_allclose(plan.q, 0.5 * s / s.sum() + 0.5 / 3, rtol=1e-12)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        history_features(np.array([[0.0, 2.0]]))


def test_factors_recover_the_item_structure_and_the_rank_is_chosen_on_history() -> None:
    """On a rank-3 logistic matrix the chosen rank is the best held-out score and >= 3 (the
    logistic link adds linear factors beyond the true 3, so larger ranks may score as well),
    and a model fitted on 100 labels with the factors predicts a held-out model's items
    better than difficulty alone (log-likelihood on the rest)."""
    hist, L = _matrix(300, 400, 3, 7)
    r, scores = choose_rank(hist)
    by = dict(scores)
    assert r >= 3 and by[r] == max(by.values()), scores
    assert by[3] > by[0] + 0.03, scores  # the true factors are found
    hf = history_features(hist)
    assert hf.rank == r and hf.factors.shape == (400, r)
    rng = np.random.default_rng(0)
    fit = rng.permutation(400)[:100]
    test = np.setdiff1d(np.arange(400), fit)

    def ll(X: np.ndarray) -> float:
        g = np.clip(fit_predict(X, fit, L[fit]), 1e-9, 1 - 1e-9)[test]
        return float(np.mean(L[test] * np.log(g) + (1 - L[test]) * np.log(1 - g)))

    assert ll(design_matrix(hf.prior_wrong, hf.factors)) > ll(design_matrix(hf.prior_wrong)) + 0.02


def test_monte_carlo_unbiased_and_better_than_uniform_with_history() -> None:
    """1,000 runs of 60 draws: the mean estimate is within 4 SE of the pool mean and the
    design's variance is well below the uniform's (the history informs)."""
    hist, L = _matrix(200, 400, 3, 9)
    design = feature_design(history=history_features(hist, rank=3))
    runs = simulate_design(design, losses=L, labels=None, budget=60, n_runs=1000,
                           random_state=1)
    est = runs.curve(L)[:, -1]
    se = est.std(ddof=1) / np.sqrt(est.size)
    assert abs(est.mean() - L.mean()) < 4 * se
    uniform_var = L.var(ddof=1) / 60 * (400 - 60) / 399
    assert est.var() < 0.9 * uniform_var


def test_the_guard_falls_back_to_uniform_when_history_misleads() -> None:
    """History that says nothing about the target (it gets every item seen wrong, easy or
    hard by history): with the earned rule the plan is uniform draws with a constant
    control (the importance-weighted mean of the labels); the original rule keeps the
    fitted model. Where history is right, the guard keeps the model."""
    hist, _ = _matrix(60, 80, 1, 11)
    hf = history_features(hist, rank=0)
    good = (hf.prior_wrong > 0.5).astype(float)  # the target does what history predicts
    bad = np.ones(80)
    rng = np.random.default_rng(0)
    seen = rng.permutation(80)[:12].tolist()
    guarded = feature_design(history=hf, rule="earned", rule_params=(1.0, 0.0, 1.0, 0.0))
    plain = feature_design(history=hf)
    p = guarded.plan(seen, losses=bad[seen])
    rest = np.setdiff1d(np.arange(80), seen)
    np.testing.assert_allclose(p.q[rest], 1 / 68, rtol=1e-12)
    np.testing.assert_allclose(p.control[rest], 1.0, rtol=1e-12)
    q = plain.plan(seen, losses=bad[seen])
    assert np.ptp(q.q[rest]) > 0 and np.ptp(q.control[rest]) > 0
    k = guarded.plan(seen, losses=good[seen])
    assert np.ptp(k.q[rest]) > 0 and np.ptp(k.control[rest]) > 0


def test_default_draws_are_the_stored_ones() -> None:
    """The feature design's draws (original rule) on a seeded run are those stored in
    tests/stats/data/feature_design_draws.json, written before its constructor was shared
    with the graded design (so that change moved no draw of the default design)."""
    import json
    from pathlib import Path

    ref = json.loads((Path(__file__).parent / "data" / "feature_design_draws.json").read_text())
    hist, L = _matrix(60, 120, 2, 21, missing=0.1)
    hist[:, 3] = np.nan
    hf = history_features(hist)
    extra = np.random.default_rng(5).normal(size=(120, 2))
    for name, d in {"history": feature_design(history=hf),
                    "history+features": feature_design(history=hf, features=extra),
                    "uniform_start": feature_design(features=extra)}.items():
        r = simulate_design(d, losses=L, labels=None, budget=50, n_runs=3, random_state=7,
                            model_var=True)
        assert r.indices.tolist() == ref[name]["indices"], name
        for key, got in (("q", r.q.sum(axis=1)), ("g", r.control.sum(axis=1)),
                         ("lam", r.lam.sum(axis=1)),
                         ("mv", [np.nansum(x) for x in r.model_var])):
            np.testing.assert_allclose(got, ref[name][key], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("rule", ["original", "earned"])
@pytest.mark.parametrize("lam", [None, 0.3, 1.0])
@pytest.mark.parametrize("start", ["auto", "prior", "uniform"])
def test_feature_design_starts_as_the_graded_design(rule: str, lam: float | None,
                                                    start: str) -> None:
    """One constructor: on the same model matrix the feature design and the graded design
    have the same start (proposal, control, lambda, 'fitted' flag) under every rule, lambda
    and start (the feature design once skipped the earned rule's uniform start)."""
    from activetest.stats.adaptive import AdaptiveDesign

    hist, _ = _matrix(20, 30, 1, 2)
    hf = history_features(hist, rank=0)
    f = feature_design(history=hf, lam=lam, start=start, rule=rule)
    X = design_matrix(hf.prior_wrong, hf.columns())
    g = AdaptiveDesign.logistic(X, offset=True, name="features", lam=lam,
                                schedule=f.schedule, start=start, rule=rule)
    graded = AdaptiveDesign.graded(np.zeros((30, 0)), prior=hf.prior_wrong, lam=lam,
                                   start=start, rule=rule)
    for other in (g, graded):
        np.testing.assert_array_equal(f._s0, other._s0)
        np.testing.assert_array_equal(f._g0, other._g0)
        assert (f._lam0, f._fitted0) == (other._lam0, other._fitted0)
    if rule == "earned" and lam is None:
        assert f._lam0 == 1.0 and f._fitted0 == 0 and not f._g0.any()
