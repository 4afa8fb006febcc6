"""Fixed-budget intervals from the per-draw estimates theta_m.

Exact identities by enumerating every ordered draw sequence (fixed and adaptive
designs), and coverage by simulation with tolerances from the binomial standard
error (fixed seeds).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activetest.stats import (
    adaptive_lure_theta,
    cv_lure_curve,
    lure_curve,
    lure_terms,
    proposal,
    sample,
)
from activetest.stats.intervals import (
    _fixed_control_rest,
    _student_quantile,
    _theta,
    estimate_curve,
    fixed_interval,
    fixed_interval_curve,
    hall_bounds,
    martingale_se_curve,
    moment_curves,
    pool_variance_curve,
)
from tests.stats.conftest import SCORE_CASES, enumerate_orders

LOSSES = np.array([0.1, 2.5, 0.0, 1.3, 0.7, 4.0, 0.2])
CONTROL = np.array([0.3, 1.9, 0.2, 1.0, 0.5, 3.1, 0.1])


Orders = Iterator[tuple[tuple[int, ...], float, np.ndarray, np.ndarray, np.ndarray]]


def adaptive_orders(losses: np.ndarray, base: np.ndarray, h: np.ndarray, alpha: float,
                    M: int) -> Orders:
    """Every sequence under a design that re-chooses the proposal and control before each draw.

    Before draw m the scores and the control are functions of the labels seen so far
    (any such rule keeps theta_m unbiased). Yields (sequence, probability, q_m, g_m at
    the drawn item, G_m = sum of g^(m) over the remaining set).
    """
    n = len(losses)

    def rec(seq, prob, qs, gs, Gs):
        if len(seq) == M:
            yield seq, prob, np.array(qs), np.array(gs), np.array(Gs)
            return
        rem = np.ones(n, dtype=bool)
        rem[list(seq)] = False
        seen = losses[list(seq)]
        k = len(seq)
        scale = 1.0 + 0.5 * seen.mean() if k else 1.0
        scores = base * scale + 0.4 * (np.arange(n) % 2) * (seen > 1).sum()
        g = h * (seen.mean() / max(h[list(seq)].mean(), 1e-9) if k else 0.0)
        q = proposal(scores, rem, alpha)
        G = float(g[rem].sum())
        for i in np.flatnonzero(rem):
            yield from rec((*seq, int(i)), prob * q[i], (*qs, float(q[i])), (*gs, float(g[i])),
                           (*Gs, G))

    yield from rec((), 1.0, (), (), ())


def _weights(N: int, M: int) -> np.ndarray:
    m = np.arange(1, M + 1)
    return N * (N - M) / (M * (N - m) * (N - m + 1.0))


def test_estimate_curve_is_lure_and_cv_lure() -> None:
    rng = np.random.default_rng(0)
    N = 300
    L = rng.exponential(size=N)
    h = 0.7 * L + 0.3 * rng.random(N)
    idx, q = sample(h, N, n_runs=3, random_state=1)
    np.testing.assert_allclose(estimate_curve(_theta(L[idx], q, N), N), lure_curve(L[idx], q, N),
                               rtol=1e-11, atol=1e-12)
    th = _theta(L[idx], q, N, h[idx], _fixed_control_rest(h, idx))
    np.testing.assert_allclose(estimate_curve(th, N), cv_lure_curve(L[idx], q, N, h[idx],
                                                                   h.mean()), rtol=1e-11)


@pytest.mark.parametrize("case", ["random", "one_huge", "ties"])
def test_martingale_variance_identity_by_enumeration(case: str) -> None:
    """E[sum c_m^2 (theta_m - R)^2] = Var R_M exactly, and E theta_m = R, for M = 1..N-1."""
    n = 6
    scores, L = SCORE_CASES[case][:n], LOSSES[:n]
    R = L.mean()
    seqs = list(enumerate_orders(scores, 0.1, n))
    idx = np.array([s for s, _, _ in seqs])
    P = np.array([p for _, p, _ in seqs])
    th = _theta(L[idx], np.array([q for _, _, q in seqs]), n)
    np.testing.assert_allclose(P @ th, R, rtol=1e-12)
    for M in range(1, n):
        c = _weights(n, M)
        est = th[:, :M] @ c
        assert P @ est == pytest.approx(R, rel=1e-12)
        assert P @ ((est - R) ** 2) == pytest.approx(P @ ((th[:, :M] - R) ** 2 @ c**2), rel=1e-10)


def test_identity_holds_under_an_adaptive_design_with_a_control() -> None:
    n = 6
    L, h = LOSSES[:n], CONTROL[:n]
    R = L.mean()
    seqs = list(adaptive_orders(L, SCORE_CASES["random"][:n], h, 0.2, n))
    P = np.array([s[1] for s in seqs])
    assert P.sum() == pytest.approx(1.0, abs=1e-12)
    idx = np.array([s[0] for s in seqs])
    th = _theta(L[idx], np.array([s[2] for s in seqs]), n, np.array([s[3] for s in seqs]),
                np.array([s[4] for s in seqs]))
    np.testing.assert_allclose(P @ th, R, rtol=1e-12)
    for M in range(1, n):
        c = _weights(n, M)
        est = th[:, :M] @ c
        var = P @ ((est - R) ** 2)
        assert var > 1e-3  # not a degenerate check
        assert P @ ((th[:, :M] - R) ** 2 @ c**2) == pytest.approx(var, rel=1e-10)
    # ... and the check has power: importance sampling's terms are biased without replacement
    is_terms = L[idx] / (n * np.array([s[2] for s in seqs]))
    assert abs(P @ is_terms[:, 3] - R) > 1e-2


def test_se_has_the_finite_population_variance_under_uniform_sampling() -> None:
    """Uniform draws: E[SE_M^2] ~ (1 - M/N) S^2 / M, checked to Monte Carlo error."""
    rng = np.random.default_rng(3)
    N, K, runs = 300, 200, 4000
    L = rng.gamma(2.0, 1.0, size=N)
    idx, q = sample(np.ones(N), K, n_runs=runs, random_state=4)
    _, se = martingale_se_curve(_theta(L[idx], q, N), N)
    for M in (20, 100, 200):
        v = se[:, M - 1] ** 2
        target = (1 - M / N) * L.var(ddof=1) / M
        assert abs(v.mean() - target) < 4 * v.std(ddof=1) / np.sqrt(runs), (M, v.mean(), target)


def test_edges_one_draw_and_the_whole_pool() -> None:
    L = np.array([1.0, 3.0, 2.0, 0.5])
    q = np.array([0.1, 0.5, 0.5, 1.0])
    est, se = martingale_se_curve(_theta(L, q, 4), 4)
    assert np.isinf(se[0]) and se[-1] == 0.0
    assert est[-1] == pytest.approx(L.mean())
    c = fixed_interval_curve(_theta(L, q, 4), 4)
    assert c.low[0] == -np.inf and c.high[0] == np.inf
    assert c.low[-1] == pytest.approx(L.mean()) == c.high[-1]
    one = fixed_interval(_theta(L[:3], q[:3], 4), 4)
    assert one.n_labels == 3 and one.low < one.estimate < one.high


def test_student_quantile_matches_tables() -> None:
    # t_{0.975} for df 4, 10, 29 and the normal limit (printed tables)
    got = _student_quantile(0.975, np.array([4, 10, 29, 1e9]))
    table = np.array([2.7764, 2.2281, 2.0452, 1.95996])
    assert np.all(np.abs(got - table) < [1e-3, 1e-4, 1e-4, 1e-5]), got


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_symmetric_interval_is_scipys_normal_quantile_times_the_se(level: float) -> None:
    """``skew=False`` is ``R_M +- z SE_M`` with z the normal quantile of the level, as
    scipy computes it. Coverage checks cannot see a wrong quantile (a 93% interval
    called 95% is within their Monte Carlo error at 3,000 runs); this pins it."""
    from scipy.stats import norm

    rng = np.random.default_rng(5)
    N = 60
    L = rng.gamma(1.0, 0.5, size=N)
    q = np.full(25, 1.0)  # q_m is of the remaining set: uniform draws
    q /= N - np.arange(25)
    c = fixed_interval_curve(_theta(L[:25], q, N), N, level=level, skew=False)
    z = norm.ppf(0.5 + level / 2)
    ok = np.isfinite(c.se) & (c.se > 0)
    assert ok.sum() == 24  # all but the first draw, whose SE is infinite
    np.testing.assert_allclose(c.high[ok] - c.estimate[ok], z * c.se[ok], rtol=1e-12)
    np.testing.assert_allclose(c.estimate[ok] - c.low[ok], z * c.se[ok], rtol=1e-12)


def test_student_degrees_of_freedom_are_kish_s() -> None:
    """``df = 1 / S2 - 1`` (Kish): ``M - 1`` for equal weights (a pool so large that
    LURE's weights are equal), so a symmetric run's interval is ``R +- t_{M-1} SE``.
    A df of M instead of M - 1 moves the quantile by about 5% at M = 6; the coverage
    checks cannot see that, this pins it (mutation check)."""
    from scipy.stats import t

    from activetest.stats.intervals import moment_curves

    N, K = 10**9, 12
    theta = np.tile([0.2, 0.6], K // 2)  # symmetric about 0.4 at every even budget
    df = moment_curves(theta, N)[3]
    np.testing.assert_allclose(df[1:], np.arange(1, K), rtol=1e-6)
    c = fixed_interval_curve(theta, N, level=0.95)
    for M in (6, 8, 12):  # even budgets: no skewness, Hall's bounds are the t interval
        k = t.ppf(0.975, M - 1)
        np.testing.assert_allclose(c.high[M - 1] - c.estimate[M - 1], k * c.se[M - 1],
                                   rtol=1e-3)
        np.testing.assert_allclose(c.estimate[M - 1] - c.low[M - 1], k * c.se[M - 1],
                                   rtol=1e-3)


@pytest.mark.parametrize("gamma", [-1.2, -0.3, 0.05, 0.4, 1.5])
def test_hall_bounds_invert_halls_transformation(gamma: float) -> None:
    """The bounds are ``R - SE g^{-1}(+-k)`` for Hall's (1992) forward transformation
    ``g(T) = T + a T^2 + a^2 T^3 / 3 + a / 2``, ``a = gamma / 3``: applying g to the
    studentized bounds gives back -+k exactly (every term and sign of g is pinned; the
    coverage checks cannot see the sign of the a / 2 shift at their run counts)."""
    a = gamma / 3.0

    def g(t: np.ndarray) -> np.ndarray:
        return t + a * t**2 + a**2 * t**3 / 3.0 + a / 2.0

    est, se = np.full(4, 0.7), np.array([0.05, 0.1, 0.2, 0.3])
    k = np.array([1.0, 1.645, 1.96, 2.576])
    lo, hi = hall_bounds(est, se, np.full(4, gamma), k)
    np.testing.assert_allclose(g((est - lo) / se), k, rtol=1e-9)
    np.testing.assert_allclose(g((est - hi) / se), -k, rtol=1e-9)
    assert np.all(lo < est) and np.all(hi > est)


def _pool(n: int, seed: int, shape: float) -> tuple[np.ndarray, np.ndarray]:
    """Skewed losses in [0, 4] and noisy scores tracking them (a CE-like acquisition)."""
    rng = np.random.default_rng(seed)
    L = np.minimum(rng.gamma(shape, 0.5, size=n), 4.0)
    return L, L * np.exp(rng.normal(0, 0.7, size=n)) + 0.05


@pytest.fixture(scope="module")
def runs() -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    L, s = _pool(400, 0, 1.0)
    idx, q = sample(s, 200, n_runs=3000, random_state=1)
    return L, idx, q, 400


def _covered(lo: np.ndarray, hi: np.ndarray, R: float) -> np.ndarray:
    return (lo <= R) & (hi >= R)


def test_fixed_interval_coverage_and_the_bootstrap_without_fpc(runs) -> None:
    """Coverage within 4 binomial SEs of 0.95 at budgets 30..200 of N = 400; the
    paper's bootstrap over-covers at M = N/2 because it misses the factor 1 - M/N."""
    L, idx, q, N = runs
    R = L.mean()
    R_runs = idx.shape[0]
    tol = 4 * np.sqrt(0.95 * 0.05 / R_runs)
    c = fixed_interval_curve(_theta(L[idx], q, N), N)
    cov = _covered(c.low, c.high, R).mean(axis=0)
    for M in (30, 60, 120, 200):
        assert abs(cov[M - 1] - 0.95) < tol, (M, cov[M - 1])
    M = 200
    t = lure_terms(L[idx[:, :M]], q[:, :M], N)
    boot = np.abs(t.mean(1) - R) <= 1.96 * t.std(1) / np.sqrt(M)  # the B -> inf bootstrap
    assert boot.mean() > 0.95 + tol


def test_skew_correction_helps_at_small_budgets(runs) -> None:
    """On a right-skewed pool the symmetric interval misses low at 30 labels; the
    corrected one covers more, by more than the paired Monte Carlo error."""
    L, idx, q, N = runs
    R = L.mean()
    th = _theta(L[idx], q, N)
    a = _covered(*fixed_interval_curve(th, N).at(30), R)
    b = _covered(*fixed_interval_curve(th, N, skew=False).at(30), R)
    diff = a.astype(float) - b
    assert diff.mean() > 3 * diff.std(ddof=1) / np.sqrt(len(diff)), diff.mean()


def test_population_interval_covers_a_fresh_population_draw() -> None:
    """Pools drawn from a population: the interval with S^2/N added covers the
    population mean; the pool-risk interval does not (its truth is the pool)."""
    rng = np.random.default_rng(7)
    N, M, reps = 300, 150, 1500
    mu = 2.0  # gamma(2, 1) population mean
    hit_pop = hit_pool_iv = 0
    for r in range(reps):
        L = rng.gamma(2.0, 1.0, size=N)
        idx, q = sample(L + 0.5, M, n_runs=1, random_state=r)
        th, th2 = _theta(L[idx], q, N), _theta(L[idx] ** 2, q, N)
        pv = pool_variance_curve(th2, th, N)
        pop = fixed_interval_curve(th, N, pool_variance=pv)
        pool = fixed_interval_curve(th, N)
        hit_pop += bool(_covered(*pop.at(M), mu)[0])
        hit_pool_iv += bool(_covered(*pool.at(M), mu)[0])
    tol = 4 * np.sqrt(0.95 * 0.05 / reps)
    assert abs(hit_pop / reps - 0.95) < tol
    assert hit_pool_iv / reps < 0.95 - tol


def _zero_inflated_difference(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A graded paired difference on N = 300 (four levels 0, 0.3, 0.7, 1; the second
    answer judged alike on half the items) and a proposal score unrelated to it."""
    rng = np.random.default_rng(seed)
    levels = np.array([0.0, 0.3, 0.7, 1.0])
    a = rng.integers(0, 4, 300)
    b = np.where(rng.random(300) < 0.5, a, rng.integers(0, 4, 300))
    return levels[b] - levels[a], rng.uniform(0.05, 0.95, 300)


def test_skew_that_may_only_widen_keeps_each_side_at_least_the_symmetric_interval() -> None:
    d, p = _zero_inflated_difference(9)
    idx, q = sample(p, 40, n_runs=50, proposal_floor=0.1, random_state=3)
    th = adaptive_lure_theta(d[idx], q, d.size)
    hall = fixed_interval_curve(th, d.size)
    both = fixed_interval_curve(th, d.size, skew_widens_only=True)
    k = _student_quantile(0.975, moment_curves(th, d.size)[3])
    sym_lo, sym_hi = hall.estimate - k * hall.se, hall.estimate + k * hall.se
    m = np.isfinite(hall.se)
    assert np.allclose(both.low[m], np.minimum(hall.low, sym_lo)[m])
    assert np.allclose(both.high[m], np.maximum(hall.high, sym_hi)[m])
    # it moves sides, both ways: Hall's interval was the shorter on some runs' low side
    # and on others' high side
    assert np.any(both.low[m] < hall.low[m] - 1e-9) and np.any(both.high[m] > hall.high[m] + 1e-9)


@pytest.mark.parametrize("seed", [9, 1])
def test_skew_that_may_only_widen_covers_a_zero_inflated_difference(seed: int) -> None:
    """Hall's interval on a zero-inflated difference of 30 labels covered 0.89-0.90 (its
    estimated skewness is noise); the interval sessions show for differences covers
    within 3 Monte Carlo SE of 0.95 (2,000 runs: SE 0.005)."""
    d, p = _zero_inflated_difference(seed)
    idx, q = sample(p, 30, n_runs=2000, proposal_floor=0.1, random_state=seed + 100)
    th = adaptive_lure_theta(d[idx], q, d.size)
    truth, se_mc = d.mean(), np.sqrt(0.95 * 0.05 / 2000)
    cov = {}
    for flag in (False, True):
        fi = fixed_interval_curve(th, d.size, skew_widens_only=flag)
        cov[flag] = np.mean((fi.low[:, -1] <= truth) & (truth <= fi.high[:, -1]))
    assert cov[True] >= 0.95 - 3 * se_mc, cov
    assert cov[False] < 0.95 - 3 * se_mc, cov  # what it mends


def test_terms_equal_up_to_rounding_have_no_spread_as_a_cut_run_sees_them() -> None:
    """Terms that differ only by the rounding of their size (a target equally sure on
    every item, all labelled right) have no spread: SE 0, not 7e-19 (QA), in the whole
    run and in the run cut where they end, however large the later terms are."""
    N = 200
    base = 0.6931471805599453
    th = base * (1 + 1e-16 * (np.arange(45) % 3))  # equal to the last bits
    th = np.concatenate([th, [5.0, 0.01, 3.0, 40.0]])
    _, se_all, _, _ = moment_curves(th, N)
    _, se_cut, _, _ = moment_curves(th[:45], N)
    # (one term has no SE: infinite)
    assert np.all(se_cut[1:] == 0.0) and np.all(se_all[1:45] == 0.0)
    assert se_all[-1] > 0.1
    # a genuine small spread (1e-6 of the size) is kept
    _, se_small, _, _ = moment_curves(base * (1 + 1e-6 * (np.arange(45) % 3)), N)
    assert se_small[-1] > 0.0


@st.composite
def _near_constant_runs(draw: st.DrawFn) -> tuple[np.ndarray, int]:
    """A run whose first terms are equal up to a spread around the no-spread rule's
    threshold (1e-12 of their size, and the rounding of their size), then terms of any
    size, which moved the whole run's mean (the old shift) far from the first ones."""
    base = draw(st.floats(1e-3, 1e3))
    k = draw(st.integers(2, 40))
    rel = draw(st.sampled_from([0.0, 1e-16, 5e-16, 1e-13, 5e-13, 1e-12, 1.5e-12, 2e-12,
                                5e-12, 1e-11, 1e-9]))
    steps = draw(st.lists(st.integers(-3, 3), min_size=k, max_size=k))
    tail = draw(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=8))
    th = np.concatenate([base * (1 + rel * np.array(steps, dtype=float)), tail])
    return th, draw(st.integers(th.size + 1, 10**6))


@settings(max_examples=300, deadline=None)
@given(_near_constant_runs())
def test_a_cut_run_has_the_first_points_of_the_longer_runs_curves_bit_for_bit(
        run: tuple[np.ndarray, int]) -> None:
    """``moment_curves`` of a run cut at M are the first M points of the longer run's,
    to the last bit (estimate, SE, skewness, degrees of freedom), so "no spread, no
    interval" is decided alike: the shift of the cumulative sums was the whole run's
    mean, with which a spread just above 1e-12 of the terms' size read as none in the
    cut run and as a spread in the longer one (or the reverse); it is now the first term."""
    th, N = run
    full = moment_curves(th, N)
    for M in range(2, th.size):
        cut = moment_curves(th[:M], N)
        for name, a, b in zip(("estimate", "se", "gamma", "df"), cut, full, strict=True):
            assert a.tobytes() == b[..., :M].tobytes(), (name, M, a, b[..., :M])
