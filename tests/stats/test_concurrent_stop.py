"""Stopping on the anytime interval while the drawn items complete out of order.

The harness managers (activetest.inspect) run the drawn items concurrently and stop
at the first prefix length of the draw order whose confidence sequence is narrow
enough (activetest.stats.concurrent_stop). Checked here without any harness, by
seeded simulation: the stop (and so the estimate and interval reported at it) is
the sequential run's in every run, for every concurrency and for random durations
that are correlated with the loss (hard items take longer); coverage at the stop
holds (binomial tolerance); and the naive rule (stop when the interval of whatever
prefix has completed is narrow, read off the fixed-budget interval) does not.
"""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import ActiveSampler, adaptive_lure_theta
from activetest.stats.concurrent_stop import completed_prefix, first_narrow, run_concurrently
from activetest.stats.confseq import asymptotic_cs
from activetest.stats.intervals import fixed_interval_curve


def test_completed_prefix() -> None:
    assert completed_prefix([]) == 0
    assert completed_prefix([False, True, True]) == 0
    assert completed_prefix([True, True, False, True]) == 2
    assert completed_prefix([True] * 3) == 3


def test_first_narrow_looks_only_inside_the_range_and_from_min_labels() -> None:
    lo = np.zeros(50)
    hi = np.linspace(1.0, 0.02, 50)  # width at budget M: hi[M - 1]
    w = float(hi[39])  # budget 40 is the first narrow enough
    assert first_narrow(lo, hi, w, after=0, upto=50) == 40
    assert first_narrow(lo, hi, w, after=0, upto=39) is None
    assert first_narrow(lo, hi, w, after=44, upto=50) == 45  # only budgets it passes
    hi2 = np.full(50, 0.01)
    assert first_narrow(lo, hi2, 0.05, after=0, upto=50) == 30  # never before 30 labels
    assert first_narrow(lo, hi2, 0.05, after=0, upto=50, min_labels=2) == 2
    inf = np.full(50, np.inf)
    assert first_narrow(-inf, inf, 0.05, after=0, upto=50) is None
    with pytest.raises(ValueError):
        first_narrow(lo, hi, 0.1, after=10, upto=60)
    with pytest.raises(ValueError):
        first_narrow(lo, hi, 0.0, after=0, upto=10)


def test_run_concurrently_in_order_with_one_worker_and_in_flight_items_finish() -> None:
    calls: list[tuple[int, int]] = []

    def check(a: int, k: int) -> int | None:
        calls.append((a, k))
        return 5 if a < 5 <= k else None

    r = run_concurrently(20, np.ones(20), 1, check)
    assert r.completion_order == tuple(range(5)) and r.stop == 5 and r.started == 5
    assert calls == [(j, j + 1) for j in range(5)]
    # 3 workers, item 0 slow: nothing counts until it completes, then the prefix jumps
    d = np.ones(20)
    d[0] = 10.0
    r = run_concurrently(20, d, 3, lambda a, k: 5 if a < 5 <= k else None)
    assert r.stop == 5 and r.prefix_at_stop is not None and r.prefix_at_stop >= 5
    assert r.started > 5  # the items started before the stop was seen were run
    assert sorted(r.completion_order) == list(range(r.started))


def _pool(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray]:
    """(0/1 errors, surrogate P(error)): a surrogate that knows something."""
    logit = rng.normal(-1.0, 1.5, N)
    p = 1 / (1 + np.exp(-logit))
    err = (rng.random(N) < p).astype(np.float64)
    s = 1 / (1 + np.exp(-(logit + rng.normal(0, 1.0, N))))
    return err, s


def test_the_cs_at_a_budget_depends_on_the_draws_up_to_it_only() -> None:
    rng = np.random.default_rng(3)
    err, s = _pool(rng, 1500)
    idx, q = ActiveSampler(s, proposal_floor=0.1, seed=3).draw(400)
    theta = adaptive_lure_theta(err[idx], q, 1500)
    full = asymptotic_cs(theta, 1500, value_range=(0.0, 1.0))
    for M in (30, 31, 77, 200, 399):
        part = asymptotic_cs(theta[:M], 1500, value_range=(0.0, 1.0))
        assert part.low[-1] == pytest.approx(full.low[M - 1], abs=1e-12)
        assert part.high[-1] == pytest.approx(full.high[M - 1], abs=1e-12)


def _draw(w: np.ndarray, B: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """B sequential draws without replacement, each with probability proportional to ``w``
    among the items left (the Gumbel top-k order), and the probability of each."""
    order = np.argsort(-(np.log(w) + rng.gumbel(size=w.size)))[:B]
    left = w.sum() - np.concatenate([[0.0], np.cumsum(w[order])[:-1]])
    return order, w[order] / left


def test_the_gumbel_draws_are_sequential_proportional_draws() -> None:
    # P(first = i) = w_i / sum w; P(second = j | first = i) = w_j / (sum w - w_i)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    rng = np.random.default_rng(0)
    firsts = np.zeros(4)
    pairs = 0
    R = 20_000
    for _ in range(R):
        o, q = _draw(w, 2, rng)
        firsts[o[0]] += 1
        pairs += o[0] == 3 and o[1] == 0
        assert q[0] == w[o[0]] / 10 and q[1] == w[o[1]] / (10 - w[o[0]])
    assert np.allclose(firsts / R, w / 10, atol=4 * np.sqrt(0.25 / R))
    assert abs(pairs / R - 0.4 * 1 / 6) < 4 * np.sqrt(0.07 / R)


def _run(seed: int, N: int, B: int, width: float) -> tuple[float, np.ndarray, np.ndarray,
                                                           np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    err, s = _pool(rng, N)
    sd = np.sqrt(s * (1 - s))
    idx, q = _draw(0.9 * sd / sd.mean() + 0.1, B, rng)  # mixed with the uniform
    theta = adaptive_lure_theta(err[idx], q, N)
    cs = asymptotic_cs(theta, N, value_range=(0.0, 1.0))
    fi = fixed_interval_curve(theta, N)
    return float(err.mean()), err[idx], cs.low, cs.high, np.stack([fi.low, fi.high])


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_concurrent_stop_is_the_sequential_stop_in_every_run(concurrency: int) -> None:
    N, B, w = 2000, 600, 0.15
    stops = []
    for seed in range(60):
        _, losses, lo, hi, _ = _run(seed, N, B, w)
        tau = first_narrow(lo, hi, w, after=0, upto=B)
        rng = np.random.default_rng(10_000 + seed)
        durations = rng.exponential(1.0, B) * (1.0 + 3.0 * losses)  # wrong answers are slow
        r = run_concurrently(B, durations, concurrency,
                             lambda a, k, lo=lo, hi=hi: first_narrow(lo, hi, w, after=a, upto=k))
        assert r.stop == tau, seed
        if tau is not None:
            # the items run beyond the stop: those in flight or already completed
            # ahead of the prefix when it was seen (what a sequential run saves)
            assert tau <= r.prefix_at_stop <= r.started <= B
        stops.append(tau)
    assert all(t is not None for t in stops) and len(set(stops)) > 5  # a real, varying stop


def test_coverage_at_the_stop_under_random_completion_orders() -> None:
    # 400 seeded runs, 8 workers, durations correlated with the loss: coverage of the
    # anytime interval at the stop >= 0.95 within 2.5 binomial SEs; the naive rule
    # (the fixed-budget interval of the completed prefix, checked at completions)
    # covers less
    N, B, w, R, c = 2000, 800, 0.12, 400, 8
    cs_hits = naive_hits = 0
    taus, spent = [], []
    for seed in range(R):
        truth, losses, lo, hi, fixed = _run(seed, N, B, w)
        rng = np.random.default_rng(50_000 + seed)
        durations = rng.exponential(1.0, B) * (1.0 + 3.0 * losses)
        r = run_concurrently(B, durations, c,
                             lambda a, k, lo=lo, hi=hi: first_narrow(lo, hi, w, after=a, upto=k))
        tau = r.stop if r.stop is not None else B
        cs_hits += lo[tau - 1] <= truth <= hi[tau - 1]
        taus.append(tau)
        spent.append(r.started)
        nv = run_concurrently(B, durations, c,
                              lambda a, k, f=fixed: k if k >= 10 and (
                                  f[1, k - 1] - f[0, k - 1] <= w / 1.6) else None)
        t2 = nv.stop if nv.stop is not None else B
        naive_hits += fixed[0, t2 - 1] <= truth <= fixed[1, t2 - 1]
    cov, naive = cs_hits / R, naive_hits / R
    print(f"coverage at the stop {cov:.3f}, naive {naive:.3f}, median stop {np.median(taus)},"
          f" median runs {np.median(spent)}")
    se = np.sqrt(0.95 * 0.05 / R)
    assert cov >= 0.95 - 2.5 * se, cov
    assert naive < cov, (naive, cov)
    assert 30 <= np.median(taus) < B  # the rule does stop early, and not at once
    assert np.all(np.array(spent) - np.array(taus) <= B)  # spent counts the items started
