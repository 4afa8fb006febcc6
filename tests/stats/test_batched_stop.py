"""A design that refits between batches inside one harness run, and the stop on its CS.

``activetest.inspect.ActiveStopping(batch=c)`` draws ``c`` items from the design, lets
them run at once (they complete in any order), and once all ``c`` have completed
refits the design on their scores and draws the next ``c``; the stop is the first
prefix length of the draw order whose anytime interval is narrow enough. Checked
here without any harness:

* exact unbiasedness of LURE under the graded designs (the harness sessions' own,
  graded_fixed, and the logistic graded design) when labels are withheld until a
  batch completes: every draw order of a tiny pool enumerated, for every budget,
  including budgets that stop inside a batch;
* by seeded simulation with random completion orders (durations correlated with the
  loss): the draws, the stop and the runs spent do not depend on the completion
  order, and coverage of the anytime interval at the stop holds (binomial tolerance).
"""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import adaptive_lure, adaptive_lure_theta, importance_sampling
from activetest.stats.adaptive import AdaptiveDesign, AdaptiveSampler, refit_schedule
from activetest.stats.concurrent_stop import first_narrow
from activetest.stats.confseq import asymptotic_cs
from tests.stats.conftest import enumerate_design


def _tiny(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """0/1 errors, a surrogate P(error) that knows something, two label-free features."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(-0.5, 1.5, n)
    err = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    p = 1 / (1 + np.exp(-(logit + rng.normal(0, 1.0, n))))
    X = np.column_stack([logit + rng.normal(0, 0.5, n), rng.normal(size=n)])
    return err, p, X


def _graded_designs(p: np.ndarray, X: np.ndarray, schedule: np.ndarray
                    ) -> dict[str, AdaptiveDesign]:
    sd = np.sqrt(p * (1 - p))
    return {
        # graded_fixed (activetest.session.design.graded_fixed_design): score the loss's
        # sd under the surrogate, control its mean, lambda refitted in the run
        "graded_fixed": AdaptiveDesign.fixed(sd, p, lam=None, schedule=schedule,
                                             name="graded_fixed"),
        "graded": AdaptiveDesign.graded(X, prior=p, schedule=schedule),
        "graded_earned": AdaptiveDesign.graded(X, prior=p, schedule=schedule, rule="earned"),
    }


@pytest.mark.parametrize("batch", [2, 3])
def test_exactly_unbiased_when_refitted_only_between_batches(batch: int) -> None:
    n = 6
    err, p, X = _tiny(n, 5)
    assert 0 < err.sum() < n
    every = refit_schedule(n, first=1, growth=1.0)
    for name, design in _graded_designs(p, X, every).items():
        is_bias = 0.0
        qs: set[float] = set()
        for M in range(1, n + 1):  # budgets inside a batch too (a stop mid-batch)
            e = e_is = total = 0.0
            for seq, pr, q, g, G in enumerate_design(design, err, M, batch=batch):
                L = err[list(seq)]
                e += pr * float(adaptive_lure(L, q, n, g, G))
                e_is += pr * float(importance_sampling(L, q, n))
                total += pr
                qs.update(np.round(q * 1e9).tolist())
            assert total == pytest.approx(1.0, abs=1e-12), (name, M)
            assert e == pytest.approx(err.mean(), abs=1e-12), (name, batch, M)
            is_bias = max(is_bias, abs(e_is - err.mean()))
        assert is_bias > 1e-3, name  # the enumeration has power: IS is biased here
        assert len(qs) > 2 * n, name  # and the proposals change with the labels seen


def _pool(rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    logit = rng.normal(-1.0, 1.5, N)
    err = (rng.random(N) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    p = 1 / (1 + np.exp(-(logit + rng.normal(0, 1.0, N))))
    X = np.column_stack([logit + rng.normal(0, 1.0, N), rng.normal(size=N)])
    return err, p, X


def _batched_run(seed: int, N: int, c: int, budget: int, width: float, order_seed: int
                 ) -> tuple[float, list[int], int | None, int, float, float]:
    """The manager's rule, simulated: draw c, complete them in a random order
    (exponential durations, 4x longer for wrong answers), advance the completed
    prefix and check the stop at every length it passes, refit and draw the next c
    only when the batch is complete. Returns (truth, draws, stop, runs, cs_low, cs_high
    at the stop, else at the end)."""
    rng = np.random.default_rng(seed)
    err, p, X = _pool(rng, N)
    sampler = AdaptiveSampler(AdaptiveDesign.graded(X, prior=p), seed=seed)
    timing = np.random.default_rng(order_seed)
    stop: int | None = None
    prefix = 0
    lo = hi = np.zeros(0)
    while stop is None and len(sampler.acquired) < budget:
        idx, _ = sampler.draw(min(c, budget - len(sampler.acquired)))
        acq = np.asarray(sampler.acquired)
        theta = adaptive_lure_theta(err[acq], np.asarray(sampler.q), N,
                                    control=np.asarray(sampler.control),
                                    control_rest=np.asarray(sampler.control_rest))
        cs = asymptotic_cs(theta, N, value_range=(0.0, 1.0))
        lo, hi = cs.low, cs.high
        first = len(acq) - len(idx)
        done = np.zeros(len(idx), dtype=bool)
        durations = timing.exponential(1.0, len(idx)) * (1.0 + 3.0 * err[idx])
        for j in np.argsort(durations, kind="stable"):  # the completion order
            done[j] = True
            k = first + int(np.argmin(np.append(done, False)))  # the completed prefix
            if stop is None and k > prefix:
                stop = first_narrow(lo, hi, width, after=prefix, upto=k)
                prefix = k
        sampler.observe(losses=err[idx])  # the batch is complete: its scores are seen
    at = (stop or len(sampler.acquired)) - 1
    return (float(err.mean()), list(sampler.acquired), stop, len(sampler.acquired),
            float(lo[at]), float(hi[at]))


def test_the_batched_stop_does_not_depend_on_the_completion_order() -> None:
    for seed in range(6):
        a = _batched_run(seed, 800, 8, 400, 0.2, order_seed=1)
        b = _batched_run(seed, 800, 8, 400, 0.2, order_seed=2)
        assert a == b, seed
        assert a[2] is not None and a[3] == 8 * -(-a[2] // 8)  # the stop's batch ran whole


@pytest.mark.parametrize("R", [pytest.param(400, marks=pytest.mark.slow), 80])
def test_coverage_at_the_batched_stop_under_random_completion_orders(R: int) -> None:
    # R seeded runs, batches of 8: coverage of the anytime interval at the stop >= 0.95
    # within 2.5 binomial SEs (CI runs 80; the slow run 400)
    N, c, budget, w = 1500, 8, 900, 0.16
    hits, stops, runs = 0, [], []
    for seed in range(R):
        truth, _, stop, spent, lo, hi = _batched_run(seed, N, c, budget, w, 70_000 + seed)
        hits += lo <= truth <= hi
        stops.append(stop if stop is not None else budget)
        runs.append(spent)
    cov = hits / R
    print(f"coverage at the batched stop {cov:.3f} over {R} runs; median stop "
          f"{np.median(stops)}, median runs {np.median(runs)}")
    assert cov >= 0.95 - 2.5 * np.sqrt(0.95 * 0.05 / R), cov
    assert 30 <= np.median(stops) < budget  # it does stop, and not at once
