"""The hostile-pool suite (issue 20), reduced for CI: the pools are what they claim, the
earned in-run rule keeps the design near uniform sampling where the original one is led
far below it, stays exactly unbiased, and the variance bound of a uniform share holds."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from activetest.experiments.hostile import POOLS, hostile_pool
from activetest.experiments.robustness import run_pool
from activetest.stats import acquisition_scores, adaptive_lure, sample
from activetest.stats.adaptive import AdaptiveDesign, refit_schedule, simulate_design
from tests.stats.conftest import enumerate_design


def test_the_pools_are_what_they_claim() -> None:
    for name in POOLS:
        p = hostile_pool(name)
        assert p.target.shape == p.surrogate.shape == (2000, 4) and p.labels.shape == (2000,)
        np.testing.assert_allclose(np.exp(p.target).sum(axis=1), 1.0, rtol=1e-12)
    rare = hostile_pool("rare_miss")
    L = rare.losses("log")
    miss = L > 13
    assert miss.sum() == 20 and np.allclose(L[miss], -np.log(1e-6), rtol=1e-6)
    np.testing.assert_array_equal(rare.target[miss], rare.surrogate[miss])  # copied rows
    assert 0.12 < L[miss].sum() / L.size < 0.15
    near = hostile_pool("near_constant").losses("log")
    assert abs(near.mean() - 0.917) < 0.005 and 0.025 < near.std() < 0.045
    const = hostile_pool("constant")
    assert np.ptp(const.losses("log")) == 0 and np.all(const.losses("zero_one") == 1)
    anti = hostile_pool("anti_correlated")
    ce = acquisition_scores("ce", surrogate_logprobs=anti.surrogate, target_logprobs=anti.target)
    assert np.corrcoef(ce, anti.losses("log"))[0, 1] < -0.5
    from activetest.experiments import hostile
    clean = hostile.benign(np.random.default_rng(5), 2000, 4)[2]
    noisy = hostile.label_noise(np.random.default_rng(5), 2000, 4)[2]
    assert (noisy != clean).sum() == 20
    wrong = hostile_pool("wrong_class")
    assert np.all(wrong.surrogate[wrong.labels == 0].argmax(axis=1) == 1)
    # seeded: the same pool from the same seed, another from another
    np.testing.assert_array_equal(hostile_pool("rare_miss").labels, rare.labels)
    assert not np.array_equal(hostile_pool("rare_miss", seed=1).labels, rare.labels)


def _ratio_at(name: str, loss: str, rule: str, budget: int, runs: int) -> float:
    p = hostile_pool(name)
    L = p.losses(loss)
    design = AdaptiveDesign.calibrated(p.target, p.surrogate, loss=loss, rule=rule)
    d = simulate_design(design, losses=L, labels=p.labels, budget=budget, n_runs=runs,
                        random_state=1)
    err = np.median((d.curve(L)[:, -1] - L.mean()) ** 2)
    idx, _ = sample(np.ones(L.size), budget, n_runs=runs, proposal_floor=1.0, random_state=2)
    base = np.median((L[idx].mean(axis=1) - L.mean()) ** 2)
    return float(err / base)


def test_rare_miss_the_earned_rule_stays_near_uniform_where_the_original_does_not() -> None:
    """The issue's pool at 400 labels, 80 runs each (seeded). The full suite (800 runs)
    measures 0.83x for the earned rule and 6.7x for the original (docs/robustness.md);
    with 80 runs the median's sampling error is far below the gap between the two and
    the goal 2x."""
    earned = _ratio_at("rare_miss", "log", "earned", 400, 80)
    original = _ratio_at("rare_miss", "log", "original", 400, 80)
    assert earned < 2.0, earned
    assert original > 3.0, original  # the test has power: the old rule fails it


def test_constant_losses_the_earned_rule_is_exact() -> None:
    p = hostile_pool("constant")
    for loss in ("log", "zero_one"):
        L = p.losses(loss)
        err = {}
        for rule in ("earned", "original"):
            design = AdaptiveDesign.calibrated(p.target, p.surrogate, loss=loss, rule=rule)
            d = simulate_design(design, losses=L, labels=p.labels, budget=60, n_runs=10,
                                random_state=0)
            err[rule] = np.abs(d.curve(L) - L[0]).max()
        assert err["earned"] < 1e-12, (loss, err)
        assert err["original"] > 1e-6, (loss, err)


def test_the_suite_runs_reduced_and_reports_every_interval() -> None:
    r = run_pool("near_constant", "log", n_runs=8, budgets=(50, 100), exact=True)
    assert set(r.mse) == set(r.fixed) == set(r.anytime) == set(r.exact) == {
        "uniform", "paper", "original", "earned"}
    assert all(len(v) == 2 for v in r.fixed.values())
    assert r.ratio("uniform") == [1.0, 1.0]
    assert r.ratio("earned")[0] < r.ratio("original")[0]


def _tiny_rare_miss(n: int = 5, C: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A tiny pool with one confidently wrong item the surrogate copies."""
    rng = np.random.default_rng(4)
    z = rng.normal(size=(n, C)) * 1.5
    t = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    s = t + rng.normal(size=(n, C)) * 0.5
    s -= np.log(np.exp(s).sum(axis=1, keepdims=True))
    y = t.argmax(axis=1)
    row = np.log(np.array([1 - 2e-6, 1e-6, 1e-6]))
    t[0] = s[0] = row
    y[0] = 2
    return t, s, y


@pytest.mark.parametrize("loss", ["log", "zero_one"])
def test_the_earned_rule_is_exactly_unbiased_on_a_tiny_rare_miss_pool(loss: str) -> None:
    t, s, y = _tiny_rare_miss()
    n = y.size
    L = -t[np.arange(n), y] if loss == "log" else (t.argmax(1) != y).astype(float)
    every = refit_schedule(n, first=1, growth=1.0)
    design = AdaptiveDesign.calibrated(t, s, loss=loss, schedule=every, rule="earned")
    for M in range(1, n + 1):
        e = total = 0.0
        for seq, p, q, g, G in enumerate_design(design, L, M, y):
            e += p * float(adaptive_lure(L[list(seq)], q, n, g, G))
            total += p
        assert total == pytest.approx(1.0, abs=1e-12)
        assert e == pytest.approx(L.mean(), abs=1e-12 * max(1.0, L.max())), (loss, M)


@pytest.mark.parametrize("lam", [0.1, 0.3, 0.5, 1.0])
def test_a_uniform_share_lambda_bounds_the_variance_ratio_by_one_over_lambda(lam: float) -> None:
    """One draw from n items with q_i >= lambda / n: N^2 Var(theta) = sum r^2/q - (sum r)^2
    <= (1/lambda) V_u + (1/lambda - 1)(sum r)^2, V_u = n sum (r - rbar)^2 (uniform draws),
    computed exactly over the n outcomes, for random and for adversarial proposals; the
    adversary (all residual on the item the proposal starves) nearly attains it."""
    rng = np.random.default_rng(0)
    n = 50
    for trial in range(200):
        r = rng.normal(size=n) * rng.gamma(0.5, 2.0, size=n)
        if trial % 2:
            r -= r.mean()  # residuals of mean 0: the bound is 1/lambda itself
        score = rng.gamma(0.3, 1.0, size=n)
        q = lam / n + (1 - lam) * score / score.sum()
        var = float(np.sum(r * r / q) - r.sum() ** 2)
        vu = float(n * np.sum((r - r.mean()) ** 2))
        bound = vu / lam + (1 / lam - 1) * r.sum() ** 2
        assert var <= bound * (1 + 1e-12) + 1e-12
        if trial % 2:
            assert var <= vu / lam * (1 + 1e-12) + 1e-12
    # nearly attained: the residual sits on one item the score ignores
    r = np.zeros(n)
    r[0], r[1] = 1.0, -1.0
    score = np.ones(n)
    score[[0, 1]] = 0.0
    q = lam / n + (1 - lam) * score / score.sum()
    var = float(np.sum(r * r / q) - r.sum() ** 2)
    vu = float(n * np.sum((r - r.mean()) ** 2))
    assert var == pytest.approx(vu / lam, rel=1e-12)


def test_the_enumeration_checks_every_order() -> None:
    """Sanity of the enumeration helper used above: its probabilities over every order
    of 3 draws from 4 items of a uniform design sum to 1 and number 4!/1!."""
    t, s, y = _tiny_rare_miss(n=4)
    L = -t[np.arange(4), y]
    design = AdaptiveDesign.calibrated(t, s, schedule=refit_schedule(4, first=1, growth=1.0),
                                       rule="earned", lam=1.0)
    seqs = [seq for seq, *_ in enumerate_design(design, L, 3, y)]
    assert sorted(seqs) == sorted(itertools.permutations(range(4), 3))


def test_the_fixed_designs_are_the_same_under_both_rules() -> None:
    """The earned rule changes the learnt designs only: a fixed design (fixed_mix, and the
    graded sessions' fixed design behind the SQuAD numbers) draws the same items."""
    p = hostile_pool("benign", n=300)
    L = p.losses("log")
    runs = {rule: simulate_design(AdaptiveDesign.fixed_mix(p.target, p.surrogate, rule=rule),
                                  losses=L, labels=p.labels, budget=60, n_runs=5,
                                  random_state=3) for rule in ("original", "earned")}
    np.testing.assert_array_equal(runs["original"].indices, runs["earned"].indices)
    np.testing.assert_array_equal(runs["original"].q, runs["earned"].q)
