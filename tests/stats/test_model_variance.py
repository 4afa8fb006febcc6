"""The adaptive design's own variance prediction, and intervals that take it as a floor.

``model_var_m = sum_{S_m} s_i^2 / q_m(i) - sum_{S_m} s_i^2`` is ``N^2 Var(theta_m | past)``
when ``s`` is each remaining loss's sd and ``g`` its mean. With it the SE is
``max(SE_obs, SE_model)``: a run that has not met the rare large residuals no
longer has a small SE as well as a low estimate.
"""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats.adaptive import AdaptiveDesign, AdaptiveSampler, simulate_design
from activetest.stats.confseq import asymptotic_cs
from activetest.stats.intervals import _theta, fixed_interval_curve


def _rare_surprises(N: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """P(wrong) per item (80% of them near 0) and one fixed realisation of the pool."""
    rng = np.random.default_rng(seed)
    p = np.where(rng.random(N) < 0.8, 0.03, rng.uniform(0.3, 0.7, N))
    return p, (rng.random(N) < p).astype(float)


def test_model_variance_is_the_formula_on_the_remaining_items() -> None:
    p, L = _rare_surprises(60)
    s = np.sqrt(p * (1 - p))
    lam = 0.3
    d = AdaptiveDesign.fixed(s, p, lam=lam)
    runs = simulate_design(d, losses=L, labels=None, budget=12, n_runs=3, random_state=4,
                           model_var=True)
    assert runs.model_var is not None
    plain = simulate_design(d, losses=L, labels=None, budget=12, n_runs=3, random_state=4)
    assert plain.model_var is None  # not asked for: the same draws without the extra pass
    np.testing.assert_array_equal(plain.indices, runs.indices)
    np.testing.assert_array_equal(plain.q, runs.q)
    for r in range(3):
        rem = np.ones(60, dtype=bool)
        for m in range(12):
            q = np.where(rem, (1 - lam) * s / s[rem].sum() + lam / rem.sum(), 0.0)
            want = (s[rem] ** 2 / q[rem]).sum() - (s[rem] ** 2).sum()
            assert runs.model_var[r, m] == pytest.approx(want, rel=1e-10)
            assert runs.q[r, m] == pytest.approx(q[runs.indices[r, m]], rel=1e-12)
            rem[runs.indices[r, m]] = False
    # one sequential sampler, and its replay from the stored state, give the same values
    sampler = AdaptiveSampler(d, seed=9)
    for _ in range(8):
        i, _q = sampler.draw(1)
        sampler.observe(losses=[float(L[i[0]])])
    again = AdaptiveSampler.from_state(d, sampler.state())
    np.testing.assert_allclose(again.model_var, sampler.model_var, rtol=1e-12)


def test_a_learnt_design_has_no_model_before_its_first_fit() -> None:
    rng = np.random.default_rng(1)
    N, C = 80, 3
    t_lp = np.log(rng.dirichlet(np.ones(C), N))
    s_lp = np.log(rng.dirichlet(np.ones(C), N))
    y = rng.integers(0, C, N)
    d = AdaptiveDesign.calibrated(t_lp, s_lp, start="uniform")
    L = -t_lp[np.arange(N), y]
    runs = simulate_design(d, losses=L, labels=y, budget=30, n_runs=2, random_state=0,
                           model_var=True)
    first_fit = int(d.schedule[0]) - 1  # 0-based draw of the first refit
    assert np.isnan(runs.model_var[:, :first_fit]).all()
    assert np.isfinite(runs.model_var[:, first_fit:]).all()


def test_the_model_only_widens_and_nan_is_no_model() -> None:
    p, L = _rare_surprises()
    d = AdaptiveDesign.fixed(np.sqrt(p * (1 - p)), p, lam=0.1)
    runs = simulate_design(d, losses=L, labels=None, budget=50, n_runs=200, random_state=2,
                           model_var=True)
    th = _theta(L[runs.indices], runs.q, L.size, runs.control, runs.control_rest)
    obs = fixed_interval_curve(th, L.size)
    mod = fixed_interval_curve(th, L.size, model_var=runs.model_var)
    none = fixed_interval_curve(th, L.size, model_var=np.full(th.shape, np.nan))
    np.testing.assert_array_equal(obs.estimate, mod.estimate)
    assert np.all(mod.se[:, 1:] >= obs.se[:, 1:] - 1e-15)
    assert np.any(mod.se[:, 1:] > 1.01 * obs.se[:, 1:])
    np.testing.assert_allclose(none.se, obs.se, rtol=1e-12)
    np.testing.assert_allclose(none.low, obs.low, rtol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        fixed_interval_curve(th, L.size, model_var=runs.model_var[:, :10])
    with pytest.raises(ValueError, match=">= 0"):
        fixed_interval_curve(th, L.size, model_var=-np.ones(th.shape))


def test_coverage_with_rare_surprises_needs_the_model() -> None:
    """A pool where 80% of items have P(wrong) = 0.03 and a few of them are wrong:
    drawn at the uniform share, they make the observed-SE interval under-cover
    (shown), and the model's variance restores the level (binomial sd 0.0035 at
    4,000 runs; both margins are > 3 sd)."""
    p, L = _rare_surprises()
    d = AdaptiveDesign.fixed(np.sqrt(p * (1 - p)), p, lam=0.1)
    runs = simulate_design(d, losses=L, labels=None, budget=40, n_runs=4000, random_state=1,
                           model_var=True)
    th = _theta(L[runs.indices], runs.q, L.size, runs.control, runs.control_rest)
    R = L.mean()

    def coverage(mv: np.ndarray | None) -> float:
        c = fixed_interval_curve(th, L.size, model_var=mv)
        return float(((c.low[:, -1] <= R) & (c.high[:, -1] >= R)).mean())

    assert coverage(None) < 0.935
    assert coverage(runs.model_var) >= 0.94
    # the confidence sequence takes the same floor: it is never narrower
    a = asymptotic_cs(th, L.size)
    b = asymptotic_cs(th, L.size, model_var=runs.model_var)
    assert np.all(b.high[:, 30:] - b.low[:, 30:] >= a.high[:, 30:] - a.low[:, 30:] - 1e-12)
