"""The out-of-sample guard of the logistic designs (``rule="guard"``, stats/_guard_kernels)."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import adaptive_lure, importance_sampling
from activetest.stats.adaptive import AdaptiveDesign, AdaptiveSampler, simulate_design
from activetest.stats.feature_design import feature_design, history_features
from tests.stats.conftest import enumerate_design
from tests.stats.test_feature_design import EVERY, _matrix

#: The guard with the least evidence asked (z = 0, from 2 records): it changes its mind
#: often on a tiny pool, so the enumeration sees both branches.
EAGER = (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 2.0, 0.0)


def _guarded(n: int, seed: int, graded: bool):
    hist, L = _matrix(12, n, 2, seed, missing=0.2)
    hist[:, 0] = np.nan
    hf = history_features(hist, rank=2)
    rng = np.random.default_rng(seed + 100)
    if graded:
        L = np.clip(L * rng.uniform(0.4, 1.0, n) + (1 - L) * rng.uniform(0, 0.3, n), 0, 1)
    return {
        "guard": feature_design(history=hf, schedule=EVERY, rule="guard"),
        "guard_eager": feature_design(history=hf, schedule=EVERY, rule="guard",
                                      rule_params=EAGER),
        "guard_eager_recent": feature_design(history=hf, schedule=EVERY, rule="guard",
                                             rule_params=(*EAGER[:6], 0.5, 2.0, 0.0)),
        # lambda chosen by the out-of-sample record too
        "guard_eager_oos_lambda": feature_design(history=hf, schedule=EVERY, rule="guard",
                                                 rule_params=(*EAGER[:8], 1.0)),
        "guard_eager_lam0.3": feature_design(history=hf, schedule=EVERY, lam=0.3, rule="guard",
                                             rule_params=EAGER),
        "guard_eager_late": feature_design(history=hf, schedule=EVERY[2:], rule="guard",
                                           rule_params=EAGER),
    }, L


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize(("n", "seed", "batch"), [(5, 1, 1), (6, 0, 1), (4, 3, 1), (5, 2, 2)])
def test_guard_is_exactly_unbiased_with_a_refit_before_every_draw(graded: bool, n: int,
                                                                  seed: int, batch: int) -> None:
    """Every ordered draw sequence (and with ``batch=2`` labels withheld within a batch),
    a refit and the guard's choice before every draw: adaptive LURE's expectation is the
    pool mean to 1e-12 at every budget; importance sampling on the same draws is visibly
    biased, and the eager guard takes the fallback on some paths and the model on others
    (the check has power)."""
    designs, losses = _guarded(n, seed, graded)
    truth = losses.mean()
    assert np.ptp(losses) > 0
    fell = kept = 0
    for name, design in designs.items():
        is_bias = 0.0
        for M in range(1, n + 1):
            e = e_is = total = 0.0
            for seq, p, q, g, G in enumerate_design(design, losses, M, batch=batch):
                L = losses[list(seq)]
                e += p * float(adaptive_lure(L, q, n, g, G))
                e_is += p * float(importance_sampling(L, q, n))
                total += p
                if n == M and name.startswith("guard_eager"):
                    # a fallback draw: uniform over the remaining items with a constant
                    # control, seen as q = 1/(n - m) and G = (n - m) g
                    rest = n - np.arange(n)
                    fb = (np.abs(q * rest - 1) < 1e-12) & (np.abs(G - rest * g) < 1e-12)
                    fell += int(fb[2:n - 1].any())
                    kept += int((~fb[2:n - 1]).any())
            assert total == pytest.approx(1.0, abs=1e-12), (name, M)
            assert e == pytest.approx(truth, abs=1e-12), (name, graded, M)
            is_bias = max(is_bias, abs(e_is - truth))
        assert is_bias > 1e-3, name
    assert fell > 0 and kept > 0, (fell, kept)


def _misleading(seed: int = 11):
    """History whose difficulty the target does not follow (its losses are random, mean
    0.75), and a target that does follow it."""
    hist, _ = _matrix(60, 200, 1, seed)
    hf = history_features(hist, rank=3)
    rng = np.random.default_rng(seed)
    bad = (rng.random(200) < 0.75).astype(float)
    good = (rng.random(200) < hf.prior_wrong).astype(float)
    return hf, bad, good


def test_guard_falls_back_where_history_misleads_and_keeps_the_model_where_it_helps() -> None:
    """On a target whose losses history does not predict, most draws after 60 labels are
    the fallback's (uniform, one constant control); on a target that follows history's
    difficulty almost none are; the original rule never falls back."""
    hf, bad, good = _misleading()
    d = feature_design(history=hf, rule="guard")
    r_bad = simulate_design(d, losses=bad, labels=None, budget=120, n_runs=40, random_state=0)
    r_good = simulate_design(d, losses=good, labels=None, budget=120, n_runs=40,
                             random_state=0)
    rest = 200 - np.arange(120)

    def fallback(r) -> np.ndarray:  # uniform q and one constant control on the rest
        return ((np.abs(r.q * rest - 1) < 1e-12)
                & (np.abs(r.control_rest - rest * r.control) < 1e-9 * rest))

    fb_bad, fb_good = fallback(r_bad)[:, 60:].mean(), fallback(r_good)[:, 60:].mean()
    assert fb_bad > 0.3 and fb_good < 0.05, (fb_bad, fb_good)  # 0.44 and 0 measured
    assert not fallback(simulate_design(feature_design(history=hf), losses=bad, labels=None,
                                        budget=120, n_runs=10, random_state=0)).any()


def test_guard_keeps_the_prior_start_and_replays() -> None:
    """Before the first refit the guard draws as the original rule (the history's
    difficulty model, lambda 0.5), not uniformly as the earned rule; a sampler's draws
    are the simulation's and a run resumed from its state continues the same."""
    hf, bad, _ = _misleading()
    g, o = feature_design(history=hf, rule="guard"), feature_design(history=hf)
    np.testing.assert_array_equal(g.first_proposal(), o.first_proposal())
    assert g.spec()["rule"] == "guard"
    s = AdaptiveSampler(g, seed=5)
    for _ in range(30):
        (i,), _ = s.draw()
        s.observe(losses=[bad[i]])
    state = s.state()
    for _ in range(30):
        (i,), _ = s.draw()
        s.observe(losses=[bad[i]])
    r = simulate_design(g, losses=bad, labels=None, budget=60, n_runs=1, random_state=5)
    assert r.indices[0].tolist() == s.acquired
    t = AdaptiveSampler.from_state(g, state)
    for _ in range(30):
        (i,), _ = t.draw()
        t.observe(losses=[bad[i]])
    assert t.acquired == s.acquired and np.allclose(t.q, s.q, rtol=1e-12)


def test_guard_serves_logistic_designs_only() -> None:
    lp = np.log(np.full((6, 2), 0.5))
    with pytest.raises(ValueError, match="logistic designs"):
        AdaptiveDesign.calibrated(lp, lp, rule="guard")
    with pytest.raises(ValueError, match="logistic designs"):
        AdaptiveDesign.pe(lp, rule="guard")
    assert AdaptiveDesign.graded(np.zeros((6, 1)), prior=np.full(6, 0.3),
                                 rule="guard").rule == "guard"


def test_a_history_session_opts_in_by_its_config_key() -> None:
    """Sessions build the guard only where their config's ``design_rule`` says
    ``"guard"`` (a config without the key ran, and replays, the original rule)."""
    from activetest.session.config import SessionConfig
    from activetest.session.design import design_rule, history_design

    hf, _, _ = _misleading()
    stored = np.column_stack([hf.p_correct, hf.covered.astype(float), hf.factors])
    old = SessionConfig(task={}, surrogate="s", target="t", metric="log_loss",
                        acquisition="adaptive", seed=0)
    new = SessionConfig.from_dict({**old.to_dict(), "design_rule": "guard"})
    assert design_rule(old) == "original" and design_rule(new) == "guard"
    d = history_design(stored, design_rule(new))
    assert d.rule == "guard" and d.spec()["rule"] == "guard"
    assert history_design(stored, design_rule(old)).spec().get("rule") is None


def test_a_classification_session_with_the_guard_is_refused_by_name() -> None:
    """The calibrated (classification) design has no guard: a config asking for it is
    refused with a SessionError naming the rule and the design, not a ValueError."""
    from activetest.session.config import SessionConfig
    from activetest.session.design import pool_design
    from activetest.session.store import SessionError

    cfg = SessionConfig.from_dict({**SessionConfig(
        task={}, surrogate="s", target="t", metric="log_loss", acquisition="adaptive",
        seed=0).to_dict(), "design_rule": "guard"})
    lp = np.log(np.full((6, 2), 0.5))
    with pytest.raises(SessionError, match=r"'guard'.*history.*'original' or 'earned'"):
        pool_design(cfg, lp, lp)
