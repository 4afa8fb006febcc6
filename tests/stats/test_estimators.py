"""Estimators, acquisition scores and the bootstrap on exact, hand-checkable cases."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import (
    BootstrapResult,
    acquisition_scores,
    ase,
    bootstrap,
    bootstrap_means,
    cv_lure,
    cv_lure_curve,
    expected_log_loss,
    expected_zero_one_loss,
    labels_for_width,
    log_loss,
    log_softmax,
    lure,
    lure_curve,
    nll_score,
    predictive_entropy,
    sample,
    tuned_beta,
    uniform_mean_curve,
    zero_one_loss,
)


def test_uniform_proposal_makes_lure_the_plain_mean() -> None:
    rng = np.random.default_rng(0)
    losses = rng.exponential(size=100)
    idx, q = sample(np.ones(100), 40, n_runs=5, random_state=0)
    np.testing.assert_allclose(q, np.broadcast_to(1 / (100 - np.arange(40)), q.shape))
    np.testing.assert_allclose(lure_curve(losses[idx], q, 100), uniform_mean_curve(losses[idx]),
                               rtol=1e-12)


def test_perfect_control_variate_has_zero_error() -> None:
    rng = np.random.default_rng(1)
    losses = rng.exponential(size=50)
    idx, q = sample(rng.random(50), 20, n_runs=10, random_state=1)
    est = cv_lure_curve(losses[idx], q, 50, losses[idx], losses.mean())
    np.testing.assert_allclose(est, losses.mean(), rtol=1e-12)


def test_tuned_beta_recovers_a_scaled_control() -> None:
    rng = np.random.default_rng(2)
    h = rng.exponential(size=80)
    losses = 2.5 * h
    idx, q = sample(h, 30, n_runs=4, random_state=2)
    beta = tuned_beta(losses[idx], h[idx], q, 80)
    np.testing.assert_allclose(beta, 2.5, rtol=1e-10)
    np.testing.assert_allclose(cv_lure(losses[idx], q, 80, h[idx], h.mean(), beta),
                               losses.mean(), rtol=1e-10)


def test_lure_accepts_single_runs_and_checks_shapes() -> None:
    assert float(lure([1.0, 2.0], [0.5, 1.0], 2)) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="same shape"):
        lure([1.0, 2.0], [0.5], 2)
    with pytest.raises(ValueError, match="exceed the pool size"):
        lure([1.0, 2.0, 3.0], [0.5, 0.5, 1.0], 2)
    with pytest.raises(ValueError, match=r"q must lie in \(0, 1\]"):
        lure([1.0], [0.0], 3)


def test_losses_and_acquisition_scores_by_hand() -> None:
    t = np.log(np.array([[0.9, 0.1], [0.3, 0.7]]))
    s = np.log(np.array([[0.6, 0.4], [0.5, 0.5]]))
    y = np.array([1, 1])
    np.testing.assert_allclose(log_loss(t, y), [-np.log(0.1), -np.log(0.7)])
    np.testing.assert_array_equal(zero_one_loss(t, y), [1.0, 0.0])
    np.testing.assert_allclose(expected_log_loss(s, t),
                               [-(0.6 * np.log(0.9) + 0.4 * np.log(0.1)),
                                -(0.5 * np.log(0.3) + 0.5 * np.log(0.7))])
    np.testing.assert_allclose(predictive_entropy(s),
                               [-(0.6 * np.log(0.6) + 0.4 * np.log(0.4)), np.log(2)])
    np.testing.assert_allclose(nll_score(s, y), [-np.log(0.4), -np.log(0.5)])
    np.testing.assert_allclose(expected_zero_one_loss(s, t), [0.4, 0.5])
    np.testing.assert_allclose(acquisition_scores("uniform", surrogate_logprobs=s), [1, 1])
    np.testing.assert_allclose(acquisition_scores("oracle", target_logprobs=t, labels=y),
                               log_loss(t, y))
    assert ase(expected_log_loss(s, t)) == pytest.approx(expected_log_loss(s, t).mean())
    with pytest.raises(ValueError, match="needs target_logprobs"):
        acquisition_scores("ce", surrogate_logprobs=s)
    with pytest.raises(ValueError, match="unknown acquisition"):
        acquisition_scores("bald", surrogate_logprobs=s)


def test_log_softmax_survives_huge_logits() -> None:
    z = np.array([[1000.0, 990.0, -50.0]])
    lp = log_softmax(z)
    assert np.all(np.isfinite(lp))
    assert np.exp(lp).sum() == pytest.approx(1.0)
    assert lp[0, 0] == pytest.approx(-np.log1p(np.exp(-10.0) + np.exp(-1050.0)))


def test_bootstrap_intervals() -> None:
    terms = np.random.default_rng(0).normal(1.0, 2.0, size=400)
    r = bootstrap(terms, n_boot=1000, random_state=0)
    assert r.estimate == pytest.approx(terms.mean())
    assert r.std == pytest.approx(terms.std() / np.sqrt(400), rel=0.1)
    assert r.low == pytest.approx(r.estimate - 1.959964 * r.std, rel=1e-6)
    p = bootstrap(terms, offset=3.0, method="percentile", random_state=0)
    assert p.low < p.estimate < p.high and p.estimate == pytest.approx(terms.mean() + 3.0)
    assert p.std == pytest.approx(r.std)  # same seed, same resamples; the offset moves nothing
    np.testing.assert_array_equal(bootstrap_means(terms, 50, 1), bootstrap_means(terms, 50, 1))
    assert labels_for_width(r, r.width / 2) == pytest.approx(1600, abs=1)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap(terms, n_boot=1)
    with pytest.raises(ValueError, match="level"):
        bootstrap(terms, level=1.5)


def test_bootstrap_std_many_matches_single_run_distribution() -> None:
    from activetest.stats import bootstrap_std_many
    rng = np.random.default_rng(5)
    terms = rng.exponential(size=(3, 200))
    many = bootstrap_std_many(terms, n_boot=4000, random_state=0)
    single = np.array([bootstrap(t, n_boot=4000, random_state=1).std for t in terms])
    # two independent bootstraps of the same rows: each relative sd error ~ 1/sqrt(2B),
    # so their ratio has sd ~ 1/sqrt(B); allow 5 of those
    np.testing.assert_allclose(many, single, rtol=5 / np.sqrt(4000))
    np.testing.assert_allclose(many, terms.std(axis=1) / np.sqrt(200), rtol=0.1)


def test_curves_are_the_estimators_at_every_prefix() -> None:
    """``importance_sampling_curve`` (the biased contrast the simulations show) is
    ``importance_sampling`` of every prefix (mutation check: a wrong divisor passed)."""
    from activetest.stats import importance_sampling, importance_sampling_curve

    rng = np.random.default_rng(3)
    N, K = 40, 12
    L = rng.random(K)
    q = rng.uniform(0.01, 0.2, size=K)
    curve = importance_sampling_curve(L, q, N)
    for k in range(1, K + 1):
        assert curve[k - 1] == pytest.approx(float(importance_sampling(L[:k], q[:k], N)),
                                             rel=1e-12)


def test_adaptive_lure_se_is_the_plug_in_martingale_se() -> None:
    """``adaptive_lure_se`` is ``sqrt(sum c_m^2 (theta_m - R)^2)``: the fixed-budget SE
    times ``sqrt(kappa)`` (the SE divides by kappa = 1 - 2 S3 / S2 + S2, S_p = sum c^p;
    :mod:`activetest.stats.intervals`), so the two implementations pin each other."""
    from activetest.stats import adaptive_lure_se, adaptive_lure_theta, adaptive_lure_weights
    from activetest.stats.intervals import martingale_se_curve

    rng = np.random.default_rng(4)
    N, K = 50, 15
    L = rng.random(K)
    q = rng.uniform(0.5, 2.0, size=K) / (N - np.arange(K))
    g = rng.random(K)
    G = rng.random(K) * (N - np.arange(K))
    se = float(adaptive_lure_se(L, q, N, g, G))
    c = adaptive_lure_weights(N, K)
    S2, S3 = float(np.sum(c**2)), float(np.sum(c**3))
    kappa = 1.0 - 2.0 * S3 / S2 + S2
    _, mse = martingale_se_curve(adaptive_lure_theta(L, q, N, g, G), N)
    assert se == pytest.approx(float(mse[-1]) * np.sqrt(kappa), rel=1e-10)


def test_uniform_labels_for_width_reads_the_pool_variance_off_active_draws() -> None:
    """A design that draws the likely errors sees an error rate of about 0.24 among its
    draws where the pool's is 0.1: the spread of the drawn items (what the report used)
    projects about twice the labels uniform sampling needs; the pool variance estimated
    by LURE on L and L^2 projects what uniform sampling's bootstrap then gives."""
    from activetest.stats import uniform_labels_for_width

    rng = np.random.default_rng(7)
    N, K, W = 5000, 300, 0.04
    score = rng.beta(0.5, 4.0, size=N)  # P(wrong) of each item
    L = (rng.random(N) < score).astype(float)
    S2 = L.var(ddof=1)
    z = 1.959964
    want = np.ceil((2 * z / W) ** 2 * S2)
    idx, q = sample(score, K, n_runs=200, random_state=8)
    got = np.array([uniform_labels_for_width(L[idx[r]], q[r], N, W) for r in range(200)])
    drawn = np.array([labels_for_width(bootstrap(L[idx[r]], n_boot=200, random_state=r), W)
                      for r in range(200)])
    assert L[idx].mean() > 2 * L.mean()  # the draws are not the pool
    assert abs(np.median(got) / want - 1) < 0.1, (np.median(got), want)
    assert np.median(drawn) / want > 1.6, (np.median(drawn), want)
    # uniform sampling with that many labels: its bootstrap interval is about W wide
    n = int(want)
    widths = [bootstrap(L[rng.choice(N, n, replace=False)], n_boot=200, random_state=s).width
              for s in range(40)]
    assert abs(np.median(widths) / W - 1) < 0.05, np.median(widths)
    # not capped at the pool: the bootstrap has no finite-population factor, and the
    # callers say "not within the pool" (QA: capped, it read as reached at a census)
    assert uniform_labels_for_width(L[idx[0]], q[0], N, 1e-6) > N
    with pytest.raises(ValueError, match="width"):
        uniform_labels_for_width(L[idx[0]], q[0], N, 0.0)


def test_labels_for_width_with_a_variance_ratio_solves_its_width_rule() -> None:
    """The projection is the smallest K' whose width ``w sqrt(K (K + (K' - K) rho)) / K'``
    is at most the width asked for; rho = 1 is the 1/sqrt(K) rule."""
    r = bootstrap(np.random.default_rng(3).normal(0.4, 1.0, size=50), n_boot=200,
                  random_state=4)

    def width(k: int, rho: float) -> float:
        return r.width * np.sqrt(50 * (50 + (k - 50) * rho)) / k

    for rho in (0.2, 0.5, 1.0, 1.7):
        for frac in (0.9, 0.5, 0.2):
            k = labels_for_width(r, frac * r.width, variance_ratio=rho)
            assert width(k, rho) <= frac * r.width * (1 + 1e-9) < width(k - 1, rho), (rho, frac)
    assert labels_for_width(r, 0.5 * r.width, variance_ratio=1.0) == labels_for_width(
        r, 0.5 * r.width) == 200
    assert labels_for_width(r, 2 * r.width, variance_ratio=0.3) == 50
    with pytest.raises(ValueError, match="variance_ratio"):
        labels_for_width(r, 0.1, variance_ratio=0.0)


def test_bootstrap_projection_follows_a_design_that_learns() -> None:
    """On a design that learns from the labels, projected from 30 labels with the design's
    variance ratio (as sessions do) the bootstrap's projection is close to the labels the
    runs needed; by the 1/sqrt(K) rule alone it was far above."""
    from activetest.stats.adaptive import AdaptiveDesign, simulate_design
    from activetest.stats.estimators import adaptive_lure_theta, adaptive_lure_weights
    from activetest.stats.projection import future_variance_ratio

    rng = np.random.default_rng(21)
    N, K, runs, z = 1500, 400, 60, 1.959964
    X = rng.normal(size=(N, 3))
    p_wrong = 1.0 / (1.0 + np.exp(-(-1.2 + 2.5 * X[:, 0] - 1.5 * X[:, 1])))
    L = (rng.random(N) < p_wrong).astype(float)
    d = simulate_design(AdaptiveDesign.graded(X), losses=L, labels=None, budget=K,
                        n_runs=runs, random_state=22, model_var=True)
    th = adaptive_lure_theta(L[d.indices], d.q, N, control=d.control,
                             control_rest=d.control_rest)
    grid = np.arange(10, K + 1, 2)
    widths = np.array([[2 * z * (M * adaptive_lure_weights(N, M) * th[r, :M]).std(ddof=1)
                        / np.sqrt(M) for M in grid] for r in range(runs)])
    W = float(np.median(widths[:, np.searchsorted(grid, 150)]))
    plain, learnt = [], []
    for r in range(runs):
        ok = np.flatnonzero(widths[r] <= W)
        w30 = widths[r, np.searchsorted(grid, 30)]
        if not ok.size or w30 <= W:
            continue
        stop = grid[ok[0]]
        res = BootstrapResult(0.0, w30 / (2 * z), -w30 / 2, w30 / 2, 0.95, "normal", 30)
        rho = future_variance_ratio(th[r, :30], N, model_var=d.model_var[r, :30])
        assert 0 < rho < 1.5
        plain.append(labels_for_width(res, W) / stop)
        learnt.append(labels_for_width(res, W, variance_ratio=rho) / stop)
    assert len(learnt) > 0.8 * runs
    assert 0.8 < np.median(learnt) < 1.25, np.median(learnt)
    assert np.median(plain) > 1.3, np.median(plain)
    assert future_variance_ratio(th[0, :30], N) == 1.0  # no model: no ratio


def test_width_projections_with_no_spread_seen_yet_use_laplaces_rate() -> None:
    """Thirty labels without an error: the bootstrap's interval is a point, and both
    projections used to say the width was reached (the bootstrap's: the 30 labels it has;
    uniform sampling's: 1 label). With the error rate's range they give the labels a loss
    at 0 or 1 with Laplace's rate p = 1/32 would need, (2 z / W)^2 p (1 - p)."""
    from statistics import NormalDist

    from activetest.stats import uniform_labels_for_width

    K, N, W = 30, 2000, 0.05
    z = NormalDist().inv_cdf(0.975)
    p = 1.0 / (K + 2)
    want = (2 * z / W) ** 2 * p * (1 - p)
    terms = np.zeros(K)
    res = bootstrap(terms, n_boot=200, random_state=0)
    assert res.std == 0.0 and res.width == 0.0
    assert labels_for_width(res, W) == K  # without the range: as before
    got = labels_for_width(res, W, value_range=(0.0, 1.0))
    assert got == int(np.ceil(want - 1e-9)), (got, want)
    q = 1.0 / (N - np.arange(K))
    assert uniform_labels_for_width(terms, q, N, W) == 1  # as before
    assert uniform_labels_for_width(terms, q, N, W, value_range=(0.0, 1.0)) == int(
        np.ceil(want))
    # all labels errors (rate near 1): the mirror, the same numbers
    ones = np.ones(K)
    assert labels_for_width(bootstrap(ones, n_boot=200, random_state=0), W,
                            value_range=(0.0, 1.0)) == got
    assert uniform_labels_for_width(ones, q, N, W, value_range=(0.0, 1.0)) == int(
        np.ceil(want))
    # with spread, the range changes nothing
    mixed = np.r_[np.zeros(K - 3), np.ones(3)]
    r2 = bootstrap(mixed, n_boot=200, random_state=0)
    assert labels_for_width(r2, W, value_range=(0.0, 1.0)) == labels_for_width(r2, W)
    assert (uniform_labels_for_width(mixed, q, N, W, value_range=(0.0, 1.0))
            == uniform_labels_for_width(mixed, q, N, W))
