"""The proposal floor is ``proposal_floor=`` in the sampler's API; ``alpha=`` (the paper's
name, which means 1 - the confidence level in confseq) still works with a
DeprecationWarning and draws exactly the same items."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from activetest.stats import (
    ActiveSampler,
    SamplerState,
    log_softmax,
    proposal,
    reference_sample,
    sample,
    simulate,
)

SCORES = np.random.default_rng(4).gamma(0.5, 1.0, size=40)


def _no_warning(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def test_sample_and_reference_sample_take_the_floor_by_its_name_and_alpha_warns() -> None:
    want = _no_warning(sample, SCORES, 12, n_runs=3, proposal_floor=0.3, random_state=5)
    with pytest.warns(DeprecationWarning, match=r"sample\(alpha=\).*proposal floor"):
        old = sample(SCORES, 12, n_runs=3, alpha=0.3, random_state=5)
    np.testing.assert_array_equal(want[0], old[0])
    np.testing.assert_array_equal(want[1], old[1])
    # the floor matters (a test that could not fail otherwise)
    other = sample(SCORES, 12, n_runs=3, proposal_floor=0.9, random_state=5)
    assert not np.array_equal(want[1], other[1])
    ref = _no_warning(reference_sample, SCORES, 12, proposal_floor=0.3, random_state=5)
    with pytest.warns(DeprecationWarning, match=r"reference_sample\(alpha=\)"):
        ref_old = reference_sample(SCORES, 12, alpha=0.3, random_state=5)
    np.testing.assert_array_equal(ref[0], ref_old[0])
    np.testing.assert_array_equal(ref[0], want[0][0])  # one seed, one run: the same draws


def test_proposal_positional_keyword_and_deprecated() -> None:
    rem = np.ones(SCORES.size, dtype=bool)
    rem[:5] = False
    by_position = _no_warning(proposal, SCORES, rem, 0.25)
    by_name = _no_warning(proposal, SCORES, rem, proposal_floor=0.25)
    with pytest.warns(DeprecationWarning, match=r"proposal\(alpha=\)"):
        old = proposal(SCORES, rem, alpha=0.25)
    np.testing.assert_array_equal(by_position, by_name)
    np.testing.assert_array_equal(by_position, old)
    # the floor: every remaining item has at least floor / R before renormalising
    assert by_name[rem].min() >= 0.25 / rem.sum() / (1 + 0.25) - 1e-15
    np.testing.assert_array_equal(_no_warning(proposal, SCORES, rem),
                                  proposal(SCORES, rem, 0.1))  # the default is the paper's


def test_active_sampler_and_its_state() -> None:
    s = _no_warning(ActiveSampler, SCORES, proposal_floor=0.2, seed=1)
    with pytest.warns(DeprecationWarning, match=r"ActiveSampler\(alpha=\)"):
        old = ActiveSampler(SCORES, alpha=0.2, seed=1)
    np.testing.assert_array_equal(s.draw(6)[1], old.draw(6)[1])
    state = s.state()
    assert isinstance(state, SamplerState) and state.proposal_floor == 0.2
    with pytest.warns(DeprecationWarning, match="SamplerState.alpha"):
        assert state.alpha == 0.2
    with pytest.warns(DeprecationWarning, match="ActiveSampler.alpha"):
        assert s.alpha == 0.2
    resumed = _no_warning(ActiveSampler.from_state, SCORES, state)
    assert resumed.proposal_floor == 0.2
    np.testing.assert_array_equal(resumed.draw(3)[0], s.draw(3)[0])


@pytest.mark.parametrize("call", [
    lambda: sample(SCORES, 3, proposal_floor=0.1, alpha=0.1),
    lambda: ActiveSampler(SCORES, proposal_floor=0.1, alpha=0.1),
    lambda: proposal(SCORES, np.ones(SCORES.size, dtype=bool), 0.1, alpha=0.1),
])
def test_both_names_at_once_are_refused(call) -> None:
    with pytest.raises(TypeError, match="give proposal_floor= only"):
        call()


@pytest.mark.parametrize("floor", [0.0, -0.1, 1.5])
def test_a_floor_outside_0_1_is_refused_by_name(floor: float) -> None:
    with pytest.raises(ValueError, match=r"the proposal floor must be in \(0, 1\]"):
        ActiveSampler(SCORES, proposal_floor=floor)


def test_simulate_takes_the_floor_by_name() -> None:
    rng = np.random.default_rng(0)
    z = rng.normal(size=(60, 2))
    t, s = log_softmax(z), log_softmax(z + rng.normal(size=(60, 2)) * 0.3)
    y = rng.integers(0, 2, size=60)
    args = dict(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=["ce+lure"],
                budget=10, n_runs=4, random_state=2)
    new = _no_warning(simulate, proposal_floor=0.5, **args)
    with pytest.warns(DeprecationWarning, match=r"simulate\(alpha=\)"):
        old = simulate(alpha=0.5, **args)
    np.testing.assert_array_equal(new.q["ce"], old.q["ce"])
