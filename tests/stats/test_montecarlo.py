"""Monte Carlo checks on larger pools; tolerances come from the standard error."""

from __future__ import annotations

import numpy as np

from activetest.stats import (
    bootstrap,
    importance_sampling,
    log_softmax,
    lure_terms,
    sample,
    simulate,
)


def _pool(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    logit = rng.normal(size=(n, 3)) * 2
    p = np.exp(log_softmax(logit))
    y = (rng.random((n, 1)) > np.cumsum(p, axis=1)).sum(axis=1)
    target = log_softmax(logit * 1.3 + rng.normal(size=(n, 3)) * 0.5)
    surrogate = log_softmax(logit + rng.normal(size=(n, 3)) * 0.3)
    return target, surrogate, y


def test_lure_and_cv_lure_unbiased_on_a_large_pool() -> None:
    t, s, y = _pool(3000, 0)
    R = 4000
    res = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, budget=60, n_runs=R,
                   methods=["ce+lure", "ce+cv_lure", "pe+lure", "pe+cv_lure", "uniform+mean"],
                   random_state=11)
    for name, E in res.estimates.items():
        for M in (1, 10, 60):
            x = E[:, M - 1]
            se = x.std(ddof=1) / np.sqrt(R)
            # 5 methods x 3 budgets: |z| < 4 has a family-wise false alarm rate < 1e-3
            assert abs(x.mean() - res.truth) < 4 * se, (name, M, x.mean(), res.truth, se)


def test_importance_sampling_bias_is_visible_at_large_budgets() -> None:
    t, s, y = _pool(200, 1)
    from activetest.stats import expected_log_loss, log_loss
    losses = log_loss(t, y)
    scores = expected_log_loss(s, t)
    idx, q = sample(scores, 150, n_runs=4000, random_state=2)
    est = importance_sampling(losses[idx], q, 200)
    se = est.std(ddof=1) / np.sqrt(len(est))
    assert abs(est.mean() - losses.mean()) > 6 * se


def test_bootstrap_variance_matches_its_expectation_under_uniform_sampling() -> None:
    """Under uniform sampling without replacement E[sample var] = S^2 (ddof 1), so the
    bootstrap variance of the mean has expectation (M-1)/M^2 * S^2 (up to B noise)."""
    rng = np.random.default_rng(0)
    N, M, R = 2000, 100, 1500
    pool = rng.gamma(0.5, 2.0, size=N)
    S2 = pool.var(ddof=1)
    idx, q = sample(np.ones(N), M, n_runs=R, random_state=1)
    boot_var = np.array([bootstrap(lure_terms(pool[i], qq, N), n_boot=1000,
                                   random_state=r).std ** 2 for r, (i, qq) in
                         enumerate(zip(idx, q, strict=True))])
    expected = (M - 1) / M**2 * S2
    se = boot_var.std(ddof=1) / np.sqrt(R)
    assert abs(boot_var.mean() - expected) < 4 * se, (boot_var.mean(), expected, se)
    # ... and it tracks the true variance of the uniform estimator (with FPC) within 10%.
    true_var = (1 - M / N) * S2 / M
    assert abs(boot_var.mean() / true_var - 1) < 0.1
