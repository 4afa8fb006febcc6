"""Speed of the statistical core, against baselines measured in the same run.

Usage: python benchmarks/bench_stats.py [--runs 3000] [--ref-runs 5] [--markdown]

1. SST-2-sized simulation: N = 10,000, M = 400, R = 3,000, CE acquisition,
   LURE recorded after every label. Baseline: the research code's per-step loop
   (per run, per step: renormalise the proposal over the remaining pool and
   draw), timed on a few runs; reported as a per-run ratio.
2. Scale: N = 1,000,000, M = 10,000, one run (time and peak memory, measured in
   a child process so the parent's arrays do not count; ``ru_maxrss``, KiB on Linux,
   printed in MiB = 2^20 bytes: until 2026-12-06 the same number was printed as "MB").
3. Bootstrap: B = 1,000 resamples of M = 400 terms.

The pool is synthetic (class log-probs drawn from a seeded model of a
calibrated surrogate and an over-confident target): the sampler's cost does not
depend on where the scores came from.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

from _cells import printed_ratio, ratio_cell
from activetest.stats import (
    bootstrap,
    expected_log_loss,
    log_loss,
    log_softmax,
    lure_curve,
    lure_terms,
    reference_sample,
    sample,
    simulate,
)


def synthetic_pool(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target and surrogate log-probs and labels for a 2-class pool of size n."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2)) * 2
    y = (rng.random(n) < np.exp(log_softmax(z))[:, 1]).astype(np.int64)
    return log_softmax(z * 1.5), log_softmax(z + rng.normal(size=(n, 2)) * 0.3), y


def bench_simulation(runs: int, ref_runs: int) -> dict[str, float]:
    """Fast simulator vs the per-step reference loop (per-run times)."""
    t, s, y = synthetic_pool(10_000)
    # warm the compiled kernel (numba caches it on disk; first import compiles)
    simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=["ce+lure"], budget=5,
             n_runs=2, random_state=0)
    t0 = time.perf_counter()
    res = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=["ce+lure"],
                   budget=400, n_runs=runs, random_state=0)
    fast = time.perf_counter() - t0
    assert res.estimates["ce+lure"].shape == (runs, 400)
    losses, scores = log_loss(t, y), expected_log_loss(s, t)
    t0 = time.perf_counter()
    for r in range(ref_runs):
        idx, q = reference_sample(scores, 400, random_state=r)
        lure_curve(losses[idx], q, len(losses))
    ref = time.perf_counter() - t0
    return {"runs": runs, "fast_s": fast, "fast_per_run_ms": 1e3 * fast / runs,
            "ref_runs": ref_runs, "ref_s": ref, "ref_per_run_ms": 1e3 * ref / ref_runs,
            "ratio": (ref / ref_runs) / (fast / runs)}


def _scale_child() -> None:
    rng = np.random.default_rng(0)
    n, m = 1_000_000, 10_000
    losses = rng.exponential(size=n)
    scores = losses * rng.lognormal(0, 0.5, size=n)
    sample(scores, 5, random_state=0)  # warm-up compile (cached)
    t0 = time.perf_counter()
    idx, q = sample(scores, m, n_runs=1, random_state=0)
    est = lure_curve(losses[idx], q, n)
    dt = time.perf_counter() - t0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    print(json.dumps({"seconds": dt, "peak_rss_mib": peak_mib, "final": float(est[0, -1]),
                      "truth": float(losses.mean())}))


def bench_scale() -> dict[str, float]:
    """N = 1e6, M = 1e4, one run, in a fresh process (peak RSS includes Python+numpy)."""
    out = subprocess.run([sys.executable, __file__, "--scale-child"], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_bootstrap() -> dict[str, float]:
    """B = 1000 resamples of M = 400 terms, against a per-resample Python loop."""
    rng = np.random.default_rng(0)
    terms = lure_terms(rng.exponential(size=400), rng.uniform(1e-4, 1e-3, size=400), 10_000)
    bootstrap(terms, n_boot=1000, random_state=0)
    t0 = time.perf_counter()
    for _ in range(10):
        bootstrap(terms, n_boot=1000, random_state=0)
    fast = (time.perf_counter() - t0) / 10
    t0 = time.perf_counter()
    g = np.random.default_rng(0)
    means = [terms[g.integers(0, 400, 400)].mean() for _ in range(1000)]
    np.var(means, ddof=1)
    loop = time.perf_counter() - t0
    return {"seconds": fast, "loop_seconds": loop, "ratio": loop / fast}


def scale_row(scale: dict[str, float]) -> str:
    """The table's row of the N = 1e6 run: its seconds and its peak RSS in MiB (the
    child's ``ru_maxrss`` KiB / 1024)."""
    return (f"| one run N=1,000,000 M=10,000 + LURE curve | {scale['seconds']:.2f} s, peak RSS "
            f"{scale['peak_rss_mib']:.0f} MiB | | | < 5 s, < 2 GB |")


def main() -> None:
    """Run all benchmarks and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3000)
    ap.add_argument("--ref-runs", type=int, default=5)
    ap.add_argument("--scale-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.scale_child:
        _scale_child()
        return
    sim = bench_simulation(args.runs, args.ref_runs)
    scale = bench_scale()
    boot = bench_bootstrap()
    load = os.getloadavg()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("| benchmark | result | baseline (same run) | ratio | goal |")
    print("|---|---|---|---|---|")
    sim_x = printed_ratio(sim["ref_per_run_ms"], sim["fast_per_run_ms"], digits=0, den_digits=3)
    boot_x = printed_ratio(1e3 * boot["loop_seconds"], 1e3 * boot["seconds"], digits=0,
                           den_digits=1)  # both ratios: of the ms as printed
    print(f"| simulate N=10,000 M=400 R={sim['runs']:,} CE+LURE, every step | "
          f"{sim['fast_s']:.2f} s ({sim['fast_per_run_ms']:.3f} ms/run) | per-step loop: "
          f"{sim['ref_per_run_ms']:.0f} ms/run ({sim['ref_runs']} runs) | "
          f"{ratio_cell(sim_x, 0)} per run | <= 10 s; >= 200x |")
    print(scale_row(scale))
    print(f"| bootstrap B=1,000, M=400 | {1e3 * boot['seconds']:.1f} ms | Python loop: "
          f"{1e3 * boot['loop_seconds']:.0f} ms | {ratio_cell(boot_x, 0)} | < 1 s |")


if __name__ == "__main__":
    main()
