"""Confidence sequences: exact validity by enumeration, coverage by simulation.

Simulation tolerances are binomial standard errors (fixed seeds); the exact CS is
checked by enumerating every ordered draw sequence of tiny pools with its
probability, under the paper's floored proposal and under an adaptive design.
"""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import bootstrap_std_many, lure_terms, proposal, sample
from activetest.stats.betting import (
    betting_capital,
    betting_cs,
    exact_cs,
    log_loss_bound,
    paired_difference_exact_cs,
    q_lower_bound,
    theta_bounds,
)
from activetest.stats.confseq import (
    asymptotic_cs,
    asymptotic_cs_multiplier,
    cs_clock,
    normal_mixture_rho2,
    paired_difference_cs,
)
from activetest.stats.intervals import _theta, fixed_interval_curve, martingale_se_curve
from activetest.stats.projection import labels_for_cs_width
from tests.stats.conftest import SCORE_CASES, enumerate_orders
from tests.stats.test_intervals import CONTROL, LOSSES, adaptive_orders

# ------------------------------------------------------------------ the tuning


def test_width_cost_of_anytime_validity_is_under_1_6_from_100_to_400_labels() -> None:
    ratio = asymptotic_cs_multiplier(2000, 400) / 1.959964
    assert np.all(ratio[99:] < 1.6) and np.all(ratio[99:] > 1.5)
    # the a-priori rho is (close to) the minimiser of the boundary at the planned time
    from activetest.stats.confseq import normal_mixture_factor
    t = np.array([200.0])
    r2 = normal_mixture_rho2(200, 0.05)
    grid = np.geomspace(r2 / 4, r2 * 4, 4001)
    best = min(float(normal_mixture_factor(t, g, 0.05)[0]) for g in grid)
    assert float(normal_mixture_factor(t, r2, 0.05)[0]) < best * 1.001


def test_clock_is_the_label_count_for_small_fractions_and_exact_for_uniform() -> None:
    tau = cs_clock(10**6, 100)
    np.testing.assert_allclose(tau, np.arange(1, 101), rtol=2e-4)
    # uniform sampling: E V_M = Var R_M * W_M^2 is proportional to the clock
    N = 50
    M = np.arange(1, N)
    W = M / (N - M)
    var = (1 - M / N) / M  # uniform variance of the mean, S^2 = 1
    ratio = var * W**2 / cs_clock(N, N - 1)
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    # ... and E V_M is the sum of w_m^2 E sigma_m^2 = S^2 / ((N - m)(N - m + 1))
    m = np.arange(1, N)
    np.testing.assert_allclose(np.cumsum(1 / ((N - m) * (N - m + 1.0))), var * W**2,
                               rtol=1e-12)


def test_q_lower_bound_holds_for_the_paper_proposal() -> None:
    rng = np.random.default_rng(0)
    for case in sorted(SCORE_CASES):
        s = SCORE_CASES[case]
        for alpha in (0.1, 0.5):
            for _ in range(30):
                rem = rng.random(7) < 0.7
                if not rem.any():
                    continue
                q = proposal(s, rem, alpha)[rem]
                bound = q_lower_bound(7, 8 - rem.sum(), alpha / (1 + alpha))[-1]
                assert q.min() >= bound * (1 - 1e-12)


def test_log_loss_bound() -> None:
    lp = np.log(np.array([[0.9, 0.1], [0.5, 0.5], [0.01, 0.99]]))
    assert log_loss_bound(lp) == pytest.approx(-np.log(0.01))


# ------------------------------------------------------------------ exact, by enumeration


def _enumerated(case: str, n: int, floor: float):
    seqs = list(enumerate_orders(SCORE_CASES[case][:n], floor, n))
    idx = np.array([s for s, _, _ in seqs])
    return idx, np.array([p for _, p, _ in seqs]), np.array([q for _, _, q in seqs])


@pytest.mark.parametrize("case", ["random", "one_huge", "ties"])
@pytest.mark.parametrize("floor", [0.1, 1.0])
def test_capital_processes_are_martingales_at_the_truth(case: str, floor: float) -> None:
    n = 6
    L = LOSSES[:n] / 4  # in [0, 1]
    idx, P, Q = _enumerated(case, n, floor)
    th = _theta(L[idx], Q, n)
    lo, hi = theta_bounds(L[idx], n, q_lower_bound(n, n, floor / (1 + floor)), loss_low=0,
                          loss_high=1)
    kp, km = betting_capital(th, lo, hi, L.mean(), value_low=0, value_high=1, alpha=0.2)
    np.testing.assert_allclose(P @ np.exp(kp), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P @ np.exp(km), 1.0, rtol=1e-12)
    # the check has power: away from the truth the expectations move off 1
    kp, km = betting_capital(th, lo, hi, L.mean() + 0.1, value_low=0, value_high=1, alpha=0.2)
    assert (P @ np.exp(kp))[-1] < 0.9 and (P @ np.exp(km))[-1] > 1.01


@pytest.mark.parametrize("case", ["random", "one_huge", "ties"])
@pytest.mark.parametrize("alpha", [0.2, 0.5])
def test_exact_cs_never_excludes_the_truth_more_often_than_alpha(case: str, alpha: float
                                                                 ) -> None:
    """P(R outside C_t for some t <= N), summed exactly over all 5040 orders of N = 7."""
    n = 7
    L = LOSSES[:n] / 4
    idx, P, Q = _enumerated(case, n, 0.1)
    ex = exact_cs(L[idx], Q, n, loss_high=1.0, q_floor=0.1 / 1.1, alpha=alpha)
    miss = P @ ~ex.covers(L.mean())
    assert miss <= alpha
    # ... where a fixed interval checked at every budget fails: the check can fail
    th = _theta(L[idx], Q, n)
    fc = fixed_interval_curve(th, n, level=1 - alpha)
    assert P @ ~((fc.low[:, 1:] <= L.mean()) & (fc.high[:, 1:] >= L.mean())).all(1) > alpha


def test_exact_cs_is_not_vacuous_on_tiny_pools() -> None:
    """Summed over the enumeration cases, the exact CS does exclude the truth sometimes."""
    n = 7
    L = LOSSES[:n] / 4
    idx, P, Q = _enumerated("ties", n, 0.1)
    ex = exact_cs(L[idx], Q, n, loss_high=1.0, q_floor=0.1 / 1.1, alpha=0.5)
    assert 0.01 < P @ ~ex.covers(L.mean()) <= 0.5
    assert (P @ ex.width[:, 3]) < 0.99  # narrower than the range [0, 1] half-way


@pytest.mark.parametrize("alpha", [0.2, 0.5])
def test_exact_cs_under_an_adaptive_design_with_a_control(alpha: float) -> None:
    n = 6
    L, h = LOSSES[:n] / 4, CONTROL[:n] / 4
    seqs = list(adaptive_orders(L, SCORE_CASES["random"][:n], h, 0.2, n))
    P = np.array([s[1] for s in seqs])
    idx = np.array([s[0] for s in seqs])
    Q, g, G = (np.array([s[k] for s in seqs]) for k in (2, 3, 4))
    th = _theta(L[idx], Q, n, g, G)
    lo, hi = theta_bounds(L[idx], n, q_lower_bound(n, n, 0.2 / 1.2), loss_low=0, loss_high=1,
                          control_rest=G, control_low=0, control_high=float(g.max()))
    assert np.all(lo <= th + 1e-12) and np.all(th <= hi + 1e-12)
    kp, km = betting_capital(th, lo, hi, L.mean(), value_low=0, value_high=1, alpha=alpha)
    np.testing.assert_allclose(P @ np.exp(kp), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P @ np.exp(km), 1.0, rtol=1e-12)
    ex = exact_cs(L[idx], Q, n, loss_high=1.0, q_floor=0.2 / 1.2, control=g, control_rest=G,
                  control_low=0, control_high=float(g.max()), alpha=alpha)
    assert P @ ~ex.covers(L.mean()) <= alpha
    ex0 = exact_cs(L[idx], Q, n, loss_high=1.0, q_floor=0.2 / 1.2, alpha=alpha)  # g = 0
    assert P @ ~ex0.covers(L.mean()) <= alpha


@pytest.mark.parametrize("bound_b", [1.0, 3.0])
def test_paired_difference_exact_cs_by_enumeration(bound_b: float) -> None:
    """Coverage by enumeration; with unequal bounds (log losses of two targets) the
    difference's range is [-bound_b, bound_a], each side its own target's bound."""
    n = 7
    La, Lb = LOSSES[:n] / 4, CONTROL[:n] / 4 * bound_b
    assert Lb.max() > 1.0 or bound_b == 1.0  # the B side reaches past A's bound
    idx, P, Q = _enumerated("random", n, 0.5)
    cs = paired_difference_exact_cs(La[idx], Lb[idx], Q, n, bound_a=1.0, bound_b=bound_b,
                                    q_floor=0.5 / 1.5, alpha=0.5)
    assert P @ ~cs.covers(La.mean() - Lb.mean()) <= 0.5
    assert np.all(cs.low >= -bound_b) and np.all(cs.high <= 1.0)
    # the same CS as exact_cs on the difference over its own range
    ex = exact_cs(La[idx] - Lb[idx], Q, n, loss_low=-bound_b, loss_high=1.0,
                  q_floor=0.5 / 1.5, alpha=0.5)
    np.testing.assert_array_equal(cs.low, ex.low)
    np.testing.assert_array_equal(cs.high, ex.high)


def test_betting_cs_agrees_with_its_capital_processes() -> None:
    """The reported bounds are the outermost grid points the capital rejects, and valid
    bounds are required."""
    rng = np.random.default_rng(5)
    N, K = 200, 60
    L = rng.random(N)
    idx, q = sample(L + 0.1, K, n_runs=1, random_state=6)
    th = _theta(L[idx[0]], q[0], N)
    lo, hi = theta_bounds(L[idx[0]], N, q_lower_bound(N, K, 0.1 / 1.1), loss_low=0, loss_high=1)
    grid = np.linspace(0, 1, 201)
    cs = betting_cs(th, lo, hi, value_low=0, value_high=1, alpha=0.1, grid=grid,
                    running_intersection=False)
    thr = np.log(2 / 0.1)
    kp = np.array([betting_capital(th, lo, hi, r, value_low=0, value_high=1, alpha=0.1)[0]
                   for r in grid])  # (G, K)
    km = np.array([betting_capital(th, lo, hi, r, value_low=0, value_high=1, alpha=0.1)[1]
                   for r in grid])
    for t in (9, 29, 59):
        rej_lo = grid[kp[:, t] >= thr]
        rej_hi = grid[km[:, t] >= thr]
        assert cs.low[t] == pytest.approx(max(rej_lo.max() if rej_lo.size else 0.0, 0.0))
        assert cs.high[t] == pytest.approx(min(rej_hi.min() if rej_hi.size else 1.0, 1.0))
    with pytest.raises(ValueError, match="outside"):
        betting_cs(th, lo + 0.5, hi, value_low=0, value_high=1)


# ------------------------------------------------------------------ by simulation


@pytest.fixture(scope="module")
def sim() -> dict:
    """3,000 runs of 200 draws from a skewed pool of 2,000 with a CE-like proposal."""
    rng = np.random.default_rng(0)
    N, K = 2000, 200
    L = np.minimum(rng.gamma(1.0, 0.5, size=N), 4.0)
    s = L * np.exp(rng.normal(0, 0.7, size=N)) + 0.05
    idx, q = sample(s, K, n_runs=3000, random_state=1)
    return {"L": L, "idx": idx, "q": q, "N": N, "K": K, "th": _theta(L[idx], q, N)}


def _tol(p: float, n: int) -> float:
    return 4 * np.sqrt(p * (1 - p) / n)


def test_asymptotic_cs_time_uniform_coverage(sim: dict) -> None:
    R, n = sim["L"].mean(), sim["th"].shape[0]
    cs = asymptotic_cs(sim["th"], sim["N"])
    assert np.all(np.isinf(cs.low[:, :29]))  # claimed from 30 labels on
    assert cs.covers(R, 30).mean() >= 0.95 - _tol(0.95, n)


def test_adversarial_stopping_breaks_the_bootstrap_not_the_cs(sim: dict) -> None:
    """The adversary labels until the interval excludes the truth (sampling to a
    foregone conclusion), checking at every 10th budget from 30 on. A 95% bootstrap
    interval is fooled far more than 5% of the time; both CSs are not."""
    L, idx, q, N, K = sim["L"], sim["idx"], sim["q"], sim["N"], sim["K"]
    R = L.mean()
    runs = 1000
    fooled = np.zeros(runs, dtype=bool)
    rng = np.random.default_rng(2)
    for M in range(30, K + 1, 10):
        t = lure_terms(L[idx[:runs, :M]], q[:runs, :M], N)
        sd = bootstrap_std_many(t, 200, rng)
        fooled |= np.abs(t.mean(1) - R) > 1.96 * sd
    assert fooled.mean() > 0.05 + 3 * _tol(0.05, runs)  # the bootstrap breaks
    checks = np.arange(30, K + 1, 10) - 1
    cs = asymptotic_cs(sim["th"][:runs], N)
    out = ~((cs.low[:, checks] <= R) & (cs.high[:, checks] >= R)).all(1)
    assert out.mean() <= 0.05 + _tol(0.05, runs)
    ex = exact_cs(L[idx[:runs]], q[:runs], N, loss_high=4.0, q_floor=0.1 / 1.1, grid_size=256)
    assert (~ex.covers(R)).mean() <= 0.05 + _tol(0.05, runs)
    assert ex.width[:, -1].mean() > cs.width[:, -1].mean()  # the price of exactness


def test_paired_difference_cs_covers_the_true_difference() -> None:
    """Two targets on the same draws, acquired by both targets' predicted losses."""
    rng = np.random.default_rng(8)
    N, K, runs = 2000, 200, 2000
    La = np.minimum(rng.gamma(1.0, 0.5, size=N), 4.0)
    Lb = np.minimum(La * np.exp(rng.normal(0.15, 0.3, size=N)), 4.0)
    s = (La + Lb) * np.exp(rng.normal(0, 0.5, size=N)) + 0.05
    idx, q = sample(s, K, n_runs=runs, random_state=9)
    cs = paired_difference_cs(_theta(La[idx], q, N), _theta(Lb[idx], q, N), N)
    d = La.mean() - Lb.mean()
    assert cs.covers(d, 30).mean() >= 0.95 - _tol(0.95, runs)
    # the difference is clearly negative here, and the CS says so for most runs by 200
    assert d < -0.05 and (cs.high[:, -1] < 0).mean() > 0.5


def test_labels_for_cs_width_projects_the_stopping_budget() -> None:
    """Uniform draws, where the projection's model holds: the budget projected from
    50 labels is close to the budget at which the CS actually gets that narrow."""
    rng = np.random.default_rng(4)
    N, K, runs = 1000, 600, 300
    L = rng.gamma(2.0, 0.5, size=N)
    idx, q = sample(np.ones(N), K, n_runs=runs, random_state=5)
    th = _theta(L[idx], q, N)
    cs = asymptotic_cs(th, N)
    W = float(np.median(cs.width[:, 299]))
    hit = np.argmax(cs.width <= W, axis=1) + 1
    ok = (cs.width <= W).any(1)
    proj = np.array([labels_for_cs_width(th[r, :50], N, W) for r in range(runs)])
    rel = np.median(proj[ok] / hit[ok])
    assert 0.85 < rel < 1.15, rel
    assert labels_for_cs_width(th[0], N, 1e9) == K  # already narrow enough
    _, se = martingale_se_curve(th[0, :50], N)
    assert se[-1] > 0


def _projection_ratios(th: np.ndarray, N: int, model_var: np.ndarray | None, budget: int,
                       at: int, width: float, future: str) -> np.ndarray:
    """projection from ``at`` labels / the labels each run needed (runs narrow by K only)."""
    cs = asymptotic_cs(th, N, model_var=model_var, budget=budget, value_range=(0.0, 1.0))
    ok = (cs.width <= width).any(1) & (cs.width[:, at - 1] > width)
    hit = np.argmax(cs.width <= width, axis=1) + 1
    proj = np.array([labels_for_cs_width(th[r, :at], N, width, budget=budget, future=future,
                                         value_range=(0.0, 1.0),
                                         model_var=None if model_var is None
                                         else model_var[r, :at])
                     for r in np.flatnonzero(ok)])
    return proj / hit[ok]


def test_projection_follows_a_design_that_learns() -> None:
    """A design that learns from the labels draws better than it did at first: projected
    from 30 labels with its own variance as it is now (``recent``, the default) the
    budget is close to what the runs needed; from the average of the draws so far it was
    far above (benchmarks/cs_projection.py measures both on the shared data)."""
    from activetest.stats.adaptive import AdaptiveDesign, simulate_design
    from activetest.stats.estimators import adaptive_lure_theta

    rng = np.random.default_rng(21)
    N, K, runs = 1500, 400, 60
    X = rng.normal(size=(N, 3))
    p_wrong = 1.0 / (1.0 + np.exp(-(-1.2 + 2.5 * X[:, 0] - 1.5 * X[:, 1])))
    L = (rng.random(N) < p_wrong).astype(float)
    d = simulate_design(AdaptiveDesign.graded(X), losses=L, labels=None, budget=K,
                        n_runs=runs, random_state=22, model_var=True)
    th = adaptive_lure_theta(L[d.indices], d.q, N, control=d.control,
                             control_rest=d.control_rest)
    cs = asymptotic_cs(th, N, model_var=d.model_var, budget=400, value_range=(0.0, 1.0))
    W = float(np.median(cs.width[:, 149]))
    recent = _projection_ratios(th, N, d.model_var, 400, 30, W, "recent")
    average = _projection_ratios(th, N, d.model_var, 400, 30, W, "average")
    assert recent.size > 0.9 * runs
    assert 0.8 < np.median(recent) < 1.25, np.median(recent)
    assert np.median(average) > 1.3, np.median(average)


def test_projection_of_a_skewed_loss_lets_the_skewness_allowance_fade() -> None:
    """Uniform draws of a rare error (10%): the CS's skewness correction is large at 30
    labels and fades; carried unchanged to every later budget (``average``, how it was)
    it projected about twice the labels needed."""
    rng = np.random.default_rng(31)
    N, K, runs = 2000, 700, 200
    L = (rng.random(N) < 0.1).astype(float)
    idx, q = sample(np.ones(N), K, n_runs=runs, random_state=32)
    th = _theta(L[idx], q, N)
    cs = asymptotic_cs(th, N, budget=400, value_range=(0.0, 1.0))
    W = float(np.median(cs.width[:, 249]))
    for at in (30, 60):
        recent = _projection_ratios(th, N, None, 400, at, W, "recent")
        average = _projection_ratios(th, N, None, 400, at, W, "average")
        assert 0.8 < np.median(recent) < 1.3, (at, np.median(recent))
        assert np.median(average) > 1.4, (at, np.median(average))


def test_projection_and_may_stop_see_the_clipped_cs() -> None:
    """An error rate near 0: the CS shown is clipped at 0, narrower than its plain width;
    "may stop" and the projection are judged on it."""
    from activetest.stats import anytime_summary

    rng = np.random.default_rng(41)
    N = 2000
    L = (rng.random(N) < 0.03).astype(float)
    idx, q = sample(np.ones(N), 120, n_runs=1, random_state=42)
    th = _theta(L[idx], q, N)[0]
    raw = asymptotic_cs(th, N, budget=400)
    shown = asymptotic_cs(th, N, budget=400, value_range=(0.0, 1.0))
    assert raw.low[-1] < 0.0 and shown.width[-1] < raw.width[-1]
    W = float(shown.width[-1] + raw.width[-1]) / 2
    s = anytime_summary(th, N, target_width=W, budget=400, value_range=(0.0, 1.0))
    assert s.may_stop and s.labels_needed == th.size
    assert not anytime_summary(th, N, target_width=W, budget=400).may_stop
    for M in (105, 112, 120):  # prefixes with errors (the first at 100): spread seen
        assert np.ptp(th[:M]) > 0
        for w in (0.02, 0.03, 0.05):
            clipped = labels_for_cs_width(th[:M], N, w, budget=400, value_range=(0.0, 1.0))
            plain = labels_for_cs_width(th[:M], N, w, budget=400)
            assert clipped <= plain, (M, w)
    with pytest.raises(ValueError, match="future must be"):
        labels_for_cs_width(th, N, 0.01, future="soon")


def test_projection_from_a_handful_of_labels_lets_the_student_allowance_fade() -> None:
    """From 8 and 12 labels the CS tuned to a budget carries a large Student allowance
    (Kish's df of 7-11); it fades as the labels grow, and the projection says so: at
    today's df for every later budget it projected about 1.25x the labels needed."""
    rng = np.random.default_rng(61)
    N, K, runs = 2000, 700, 200
    L = rng.gamma(2.0, 0.5, size=N)
    idx, q = sample(np.ones(N), K, n_runs=runs, random_state=62)
    th = _theta(L[idx], q, N)
    cs = asymptotic_cs(th, N, budget=400)
    W = float(np.median(cs.width[:, 249]))
    hit = np.argmax(cs.width <= W, axis=1) + 1
    for at in (8, 12):
        proj = np.array([labels_for_cs_width(th[r, :at], N, W, budget=400)
                         for r in range(runs)])
        assert 0.85 < np.median(proj / hit) < 1.15, (at, np.median(proj / hit))
    # a width no budget before the whole pool reaches: the whole pool
    assert labels_for_cs_width(th[0, :40], N, 1e-12, budget=400) == N


def test_projection_in_growing_blocks_equals_every_budget_at_once() -> None:
    """The projection evaluates budgets in blocks growing fourfold (its cost follows the
    answer, not N); the answer is the first budget of the whole curve at once."""
    from activetest.stats.intervals import moment_curves
    from activetest.stats.projection import _projected_widths

    rng = np.random.default_rng(51)
    for N, width, budget, future in ((50_000, 0.004, 400, "recent"),
                                     (50_000, 0.01, None, "average"),
                                     (3_000, 0.02, 400, "average"),
                                     (200_000, 0.003, 1000, "recent")):
        th = rng.normal(0.3, 0.4, 80)
        got = labels_for_cs_width(th, N, width, budget=budget, future=future,
                                  value_range=(0.0, 1.0))
        est, se, gam, df = (float(x[-1]) for x in moment_curves(th, N))
        M = th.size
        cs = asymptotic_cs(th, N, budget=budget)
        W_M = M / (N - M)
        future_m = np.arange(M + 1, N)
        proj = _projected_widths(future_m, N, N - 1, est=est, se=se, gam=gam, df=df, M=M,
                                 V_now=se**2 * W_M**2, s2=N * se**2 * W_M, alpha=0.05,
                                 planned_labels=200, budget=budget, future=future,
                                 cs_now=(float(cs.low[-1]), float(cs.high[-1])),
                                 value_range=(0.0, 1.0))
        want = int(future_m[np.flatnonzero(proj <= width)[0]])
        assert got == want > 1024, (N, got, want)  # beyond the first block


def test_exact_cs_rejects_bad_inputs() -> None:
    L = np.array([0.2, 0.5, 1.5])
    q = np.array([0.1, 0.2, 0.5])
    with pytest.raises(ValueError, match=r"losses\[2\] = 1\.5 is outside \[0\.0, 1\.0\]"):
        exact_cs(L, q, 10, loss_high=1.0, q_floor=0.1)
    with pytest.raises(ValueError, match="exactly one"):
        exact_cs(L, q, 10, loss_high=2.0)


def test_anytime_summary_reads_stopping_off_the_cs() -> None:
    from activetest.stats import anytime_summary
    rng = np.random.default_rng(11)
    N = 1000
    L = rng.gamma(2.0, 0.5, size=N)
    idx, q = sample(L + 0.3, 300, n_runs=1, random_state=12)
    th = _theta(L[idx[0]], q[0], N)
    early = anytime_summary(th[:20], N, target_width=0.3)
    assert np.isinf(early.cs_low) and not early.may_stop  # the CS starts at 30 labels
    assert early.fixed_low < early.estimate < early.fixed_high
    s = anytime_summary(th, N, target_width=0.3)
    cs = asymptotic_cs(th, N)
    assert (s.cs_low, s.cs_high) == (cs.low[-1], cs.high[-1])
    assert s.cs_high - s.cs_low > s.fixed_high - s.fixed_low  # the price of peeking
    assert s.may_stop == (cs.width[-1] <= 0.3)
    assert s.labels_needed == labels_for_cs_width(th, N, 0.3)
    assert anytime_summary(th, N).labels_needed is None


def test_projection_with_no_spread_seen_yet_is_not_the_first_budget() -> None:
    """Uniform draws of a 2% error rate whose first 30 labels show no error: every term is
    equal, which is no spread seen, not no spread. The projection gives the draws the
    variance (and skewness) of a loss at 0 or 1 by Laplace's rule; it used to say the CS
    would be narrow at its first budget (31 labels) where the runs needed hundreds."""
    rng = np.random.default_rng(1)
    N = 5000
    L = (rng.random(N) < 0.02).astype(float)
    idx, q = sample(np.ones(N), 4000, n_runs=300, random_state=3)
    th = _theta(L[idx], q, N)
    quiet = [r for r in range(300) if not L[idx[r, :30]].any()]
    assert len(quiet) > 100
    for w in (0.02, 0.05):
        ratio = []
        for r in quiet:
            cs = asymptotic_cs(th[r], N, budget=400, value_range=(0.0, 1.0))
            ok = np.flatnonzero(cs.width <= w)
            proj = labels_for_cs_width(th[r, :30], N, w, budget=400, value_range=(0.0, 1.0))
            assert proj > 300  # never "at the first budget"
            if ok.size:
                ratio.append(proj / (ok[0] + 1))
        assert 0.7 < np.median(ratio) < 2.5, (w, np.median(ratio))
