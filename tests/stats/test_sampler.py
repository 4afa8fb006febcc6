"""The fast samplers draw exactly from the paper's proposal."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from activetest.stats import ActiveSampler, SamplerState, kernels, reference_sample, sample
from activetest.stats.sampler import _SortedPool
from tests.stats.conftest import SCORE_CASES, enumerate_orders


def _numpy_sample(scores: np.ndarray, M: int, R: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The pure-numpy vectorised path (used when numba is absent; progress bars)."""
    return sample(scores, M, n_runs=R, random_state=seed, progress=True)


def _random_pools(n_pools: int, seed: int):
    rng = np.random.default_rng(seed)
    for k in range(n_pools):
        n = int(rng.integers(1, 80))
        s = rng.exponential(size=n) * (rng.random(n) < 0.7)
        if k % 4 == 0:
            s[rng.integers(n)] = 1e12
        if k % 9 == 0:
            s[:] = 0.0
        if k % 5 == 0:
            s = np.round(s)  # many ties
        yield s, int(rng.integers(1, n + 1))


def test_all_paths_give_identical_draws() -> None:
    for k, (s, M) in enumerate(_random_pools(40, 1)):
        ref_i, ref_q = reference_sample(s, M, random_state=k)
        fast_i, fast_q = sample(s, M, n_runs=2, random_state=k)
        np_i, np_q = _numpy_sample(s, M, 2, k)
        sampler = ActiveSampler(s, seed=k)
        one_i, one_q = sampler.draw(M)
        for i, q in ((fast_i[0], fast_q[0]), (np_i[0], np_q[0]), (one_i, one_q)):
            np.testing.assert_array_equal(i, ref_i)
            np.testing.assert_allclose(q, ref_q, rtol=1e-9)
        np.testing.assert_array_equal(fast_i, np_i)
        np.testing.assert_allclose(fast_q, np_q, rtol=1e-9)


def test_draws_are_permutations_without_replacement() -> None:
    s = np.random.default_rng(0).exponential(size=300)
    idx, q = sample(s, 300, n_runs=20, random_state=0)
    assert all(sorted(row) == list(range(300)) for row in idx.tolist())
    np.testing.assert_allclose(q[:, -1], 1.0)  # the last item is certain


def test_pair_frequencies_match_exact_probabilities() -> None:
    """Monte Carlo: the first two draws follow the exact sequential distribution."""
    scores = np.array([0.05, 1.0, 3.0, 0.5, 0.0])
    exact = {seq: p for seq, p, _ in enumerate_orders(scores, 0.1, 2)}
    R = 200_000
    idx, _ = sample(scores, 2, n_runs=R, random_state=123)
    codes = idx[:, 0] * 5 + idx[:, 1]
    counts = np.bincount(codes, minlength=25)
    for (a, b), p in exact.items():
        se = np.sqrt(p * (1 - p) / R)
        # 20 cells: |z| < 4.5 keeps the family-wise false-alarm rate below 1e-4
        assert abs(counts[a * 5 + b] / R - p) < 4.5 * se, (a, b)
    assert counts[[i * 5 + i for i in range(5)]].sum() == 0


def test_q_equals_the_proposal_probability_of_the_drawn_item() -> None:
    from activetest.stats import proposal
    for s, M in _random_pools(15, 2):
        idx, q = sample(s, M, n_runs=3, random_state=5)
        for r in range(3):
            rem = np.ones(len(s), dtype=bool)
            for m in range(M):
                p = proposal(s, rem, 0.1)
                assert q[r, m] == pytest.approx(p[idx[r, m]], rel=1e-9)
                rem[idx[r, m]] = False


def test_same_seed_same_draws_and_chunking_does_not_matter() -> None:
    s = np.random.default_rng(0).exponential(size=500)
    a = sample(s, 50, n_runs=30, random_state=7)
    b = sample(s, 50, n_runs=30, random_state=7)
    c = sample(s, 50, n_runs=30, random_state=7, chunk_size=4, progress=True)
    d = sample(s, 50, n_runs=30, random_state=8)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[0], c[0])
    assert not np.array_equal(a[0], d[0])


def test_sampler_resumes_from_serialised_state() -> None:
    s = np.random.default_rng(1).exponential(size=200)
    full = ActiveSampler(s, proposal_floor=0.2, seed=42)
    all_i, all_q = full.draw(60)
    part = ActiveSampler(s, proposal_floor=0.2, seed=42)
    part.draw(13)
    part.draw(0)
    saved = json.dumps(asdict(part.state()))
    resumed = ActiveSampler.from_state(s, SamplerState(**json.loads(saved)))
    rest_i, rest_q = resumed.draw(47)
    np.testing.assert_array_equal(np.r_[part.acquired, rest_i], all_i)
    np.testing.assert_allclose(np.r_[part.q, rest_q], all_q, rtol=1e-15)
    assert resumed.n_remaining == 140


def test_sampler_rejects_bad_state_and_overdraw() -> None:
    s = np.ones(5)
    sp = ActiveSampler(s, seed=0)
    with pytest.raises(ValueError, match="only 5 remain"):
        sp.draw(6)
    st = sp.state()
    st.acquired = [1, 1]
    st.q = [0.2, 0.25]
    with pytest.raises(ValueError, match="twice"):
        ActiveSampler.from_state(s, st)


@pytest.mark.parametrize("case", sorted(SCORE_CASES))
def test_extreme_score_vectors(case: str) -> None:
    s = SCORE_CASES[case]
    ref = reference_sample(s, 7, random_state=3)
    got = sample(s, 7, n_runs=1, random_state=3)
    np.testing.assert_array_equal(got[0][0], ref[0])
    np.testing.assert_allclose(got[1][0], ref[1], rtol=1e-9)


def test_numba_kernel_is_in_use() -> None:
    # The speed targets rely on the compiled kernel; numba is a declared dependency.
    assert kernels.HAVE_NUMBA


def test_sorted_pool_orders_stably() -> None:
    pool = _SortedPool(np.array([2.0, 1.0, 2.0, 0.0]))
    np.testing.assert_array_equal(pool.order, [3, 1, 0, 2])


@pytest.mark.parametrize("path", ["single", "many"])
def test_whole_pool_draws_keep_every_q_in_0_1(path: str) -> None:
    """Drawing the whole pool: every q in (0, 1], the last exactly 1 (sessions store q
    under CHECK (q > 0 AND q <= 1)); before the fix 6 of 12 seeds gave 1 + 2e-16."""
    from activetest.stats import acquisition_scores

    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 400))
        lp = [np.log(rng.dirichlet(np.full(2, 0.5), size=n) + 1e-300) for _ in range(2)]
        scores = acquisition_scores("ce", surrogate_logprobs=lp[0], target_logprobs=lp[1])
        if path == "single":
            idx, q = ActiveSampler(scores, proposal_floor=0.1, seed=seed).draw(n)
        else:
            idx, q = (a[0] for a in sample(scores, n, n_runs=1, random_state=seed))
        assert sorted(idx.tolist()) == list(range(n))
        assert np.all(q > 0) and np.all(q <= 1), (seed, q.max())
        assert q[-1] == 1.0
