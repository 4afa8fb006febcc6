"""The confidence sequence tuned to a planned budget (issue 20, item 3).

Checked against the Brownian-motion crossing probability it is built on (by a
simulated random walk), and on real per-draw estimates by seeded simulation: the
chance of leaving the CS at ANY budget from 30 labels on stays within alpha plus the
Monte Carlo tolerance, and at the planned budget the CS is at most 1.3x the
fixed-budget interval (the normal mixture it replaces for new sessions: ~1.58x).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from activetest.stats import asymptotic_cs, fixed_interval_curve, labels_for_cs_width, sample
from activetest.stats.confseq import (
    BUDGET_ALPHA_SHARE,
    asymptotic_cs_multiplier,
    budget_cs_multiplier,
    budget_line_constant,
    default_budget,
    max_budget,
)
from activetest.stats.intervals import _theta


def _tol(p: float, n: int) -> float:
    """Four binomial standard deviations."""
    return 4 * math.sqrt(p * (1 - p) / n)


def test_line_constant_solves_its_crossing_equation() -> None:
    for alpha in (0.01, 0.05, 0.1):
        c = budget_line_constant(alpha)
        sf = 0.5 * math.erfc(c / math.sqrt(2))
        assert sf + 0.5 * math.exp(-c * c / 2) == pytest.approx(BUDGET_ALPHA_SHARE * alpha / 2,
                                                               rel=1e-9)
    assert budget_line_constant(0.05) == pytest.approx(2.630, abs=1e-3)


def test_line_crossing_probability_of_a_random_walk() -> None:
    """A Gaussian random walk to the planned time crosses ``+-(a + b t)`` with about the
    probability the formula gives (a bit less: the walk is watched at 2,000 points only)."""
    rng = np.random.default_rng(0)
    n_steps, runs = 2000, 20000
    c = budget_line_constant(0.05)
    t = np.arange(1, n_steps + 1) / n_steps
    a = b = c / 2  # tau_T = 1
    crossed = np.zeros(runs, dtype=bool)
    for chunk in range(0, runs, 2000):
        walk = np.cumsum(rng.normal(0, math.sqrt(1 / n_steps), size=(2000, n_steps)), axis=1)
        crossed[chunk:chunk + 2000] = (np.abs(walk) >= a + b * t).any(axis=1)
    p = BUDGET_ALPHA_SHARE * 0.05
    assert crossed.mean() <= p + _tol(p, runs)
    assert crossed.mean() >= p - 0.01  # tight: the boundary spends what it is given


def test_multiplier_at_the_planned_budget_and_beyond() -> None:
    N, K, T = 2000, 1200, 400
    f = budget_cs_multiplier(N, K, T)
    old = asymptotic_cs_multiplier(N, K)
    assert f[T - 1] / 1.96 == pytest.approx(budget_line_constant(0.05) / 1.96)
    assert f[T - 1] / 1.96 < 1.35 < old[T - 1] / 1.96
    assert np.all(np.isfinite(f[:K - 1])) and np.all(f > 0)  # valid after T: the mixture
    assert f[T] > f[T - 1]  # ... at the remaining alpha, so wider than the line was
    # the line is the narrowest at T; the mixture takes over early where it is narrower
    assert np.argmin(f[:T]) == T - 1
    assert budget_cs_multiplier(50, 49, 400)[-1] == 0.0 or np.isfinite(
        budget_cs_multiplier(50, 49, 400)[-1])


def test_default_budget() -> None:
    assert default_budget(2000) == 400
    assert default_budget(801) == 400 and default_budget(799) == 399
    assert default_budget(60) == 30
    assert default_budget(1) == 1
    assert max_budget(300) == 200 and max_budget(1) == 1


def test_capped_budgets_keep_early_intervals_usable() -> None:
    # tuned to the whole pool the CS is tens of SEs wide early (the defect the cap fixes);
    # tuned to the cap it is within a few SEs, and the cap's width at the cap is the line's
    N = 300
    whole = budget_cs_multiplier(N, N - 1, N - 1)
    capped = budget_cs_multiplier(N, N - 1, max_budget(N))
    assert whole[29] > 20 and capped[29] < 6
    assert capped[max_budget(N) - 1] == pytest.approx(budget_line_constant(0.05))


@pytest.fixture(scope="module")
def runs() -> dict:
    """2,000 runs of 400 draws from a skewed pool of 2,000: uniform and CE-like proposals."""
    rng = np.random.default_rng(0)
    N, K = 2000, 400
    L = np.minimum(rng.gamma(1.0, 0.5, size=N), 4.0)
    out = {"N": N, "K": K, "R": float(L.mean())}
    for name, s in (("ce", L * np.exp(rng.normal(0, 0.7, size=N)) + 0.05),
                    ("uniform", np.ones(N))):
        idx, q = sample(s, K, n_runs=2000, random_state=1)
        out[name] = _theta(L[idx], q, N)
    return out


@pytest.mark.parametrize("proposal", ["ce", "uniform"])
@pytest.mark.parametrize("budget", [100, 400])
def test_time_uniform_coverage_and_width_at_the_budget(runs: dict, proposal: str,
                                                        budget: int) -> None:
    th, N, R = runs[proposal], runs["N"], runs["R"]
    cs = asymptotic_cs(th, N, budget=budget)
    n = th.shape[0]
    assert np.all(np.isinf(cs.low[:, :29]))  # still claimed from 30 labels on
    # leaving the CS at any budget from 30 to 400 (past the planned budget too)
    assert 1 - cs.covers(R, 30).mean() <= 0.05 + _tol(0.05, n)
    fi = fixed_interval_curve(th, N)
    ratio = np.median(cs.width[:, budget - 1] / fi.width[:, budget - 1])
    assert ratio <= 1.3
    old = asymptotic_cs(th, N)
    assert np.median(old.width[:, budget - 1] / fi.width[:, budget - 1]) > 1.5
    # running intersection: the CS never widens from one budget to the next (except
    # where the intersection is empty, which needs an earlier miss)
    w = cs.width[cs.covers(R, 30), 29:]
    assert np.all(np.diff(w, axis=1) <= 1e-12)


def test_projection_uses_the_budget_tuned_cs(runs: dict) -> None:
    th, N = runs["uniform"][0, :60], runs["N"]
    cs_now = asymptotic_cs(th, N, budget=400)
    assert labels_for_cs_width(th, N, cs_now.width[-1], budget=400) == 60
    need = [labels_for_cs_width(th, N, cs_now.width[-1] * f, budget=400) for f in (0.5, 0.3)]
    assert 60 < need[0] < need[1] < N
    # the projection never has the CS widen (it is intersected over budgets)
    assert labels_for_cs_width(th, N, cs_now.width[-1] * 0.29, budget=400) >= need[1]


def test_budget_none_is_the_old_rule(runs: dict) -> None:
    th, N = runs["ce"][:5], runs["N"]
    a, b = asymptotic_cs(th, N), asymptotic_cs(th, N, budget=None)
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)


def test_bad_budget_refused(runs: dict) -> None:
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="planned budget"):
            asymptotic_cs(runs["ce"][0], runs["N"], budget=bad)


def test_a_zero_se_before_the_census_gives_no_interval_not_a_point() -> None:
    """No error among the first labels (every theta equal): the SE is 0 but says nothing
    about the spread; intersected over budgets, a point there would stick for good."""
    N = 500
    th = np.concatenate([np.zeros(40), np.random.default_rng(0).binomial(1, 0.2, 160) * 2.0])
    cs = asymptotic_cs(th, N, budget=100)
    assert np.all(np.isinf(cs.low[:40])) and np.all(np.isinf(cs.high[:40]))
    assert np.all(cs.width[60:] > 0.01)
    assert np.isfinite(cs.low[-1])


def test_no_errors_yet_is_no_spread_in_a_whole_run_curve_too() -> None:
    """A run's first 40 labels show no error, then some: computed over the whole run, the
    first 40 budgets see exactly no spread, as the run cut there does (the shifted sums
    leave only rounding), so the CS tuned to a budget gives no interval there rather than
    a point at 0 after 30 correct labels; and its later budgets are intersected with
    those, not thrown off by them."""
    from activetest.stats.intervals import moment_curves

    N = 2000
    L = np.zeros(120)
    L[[40, 70, 90, 100, 110]] = 1.0
    q = 1.0 / (N - np.arange(120))
    th = _theta(L, q, N)
    se = moment_curves(th, N)[1]
    for k in (30, 35, 40):
        assert se[k - 1] == moment_curves(th[:k], N)[1][-1] == 0.0
    cs = asymptotic_cs(th, N, budget=400, value_range=(0.0, 1.0))
    assert np.all(cs.low[29:40] == 0.0) and np.all(cs.high[29:40] == 1.0)
    for k in (60, 100, 120):  # the whole run's curve at k is the cut run's at its end
        cut = asymptotic_cs(th[:k], N, budget=400, value_range=(0.0, 1.0))
        assert (cs.low[k - 1], cs.high[k - 1]) == pytest.approx((cut.low[-1], cut.high[-1]),
                                                                abs=1e-12)
    assert cs.high[119] < 0.15  # intersected with the earlier budgets (0.21 on its own)
