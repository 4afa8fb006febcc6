"""What the paired difference's variance floor costs an estimate (CPU seconds).

A target compared with a second model known on the pool (``ActiveTest(compare=...)``,
as a session compared at creation): each estimate now computes the floor of the
difference's variance, the surrogate's model of it under each draw's proposal
(:func:`activetest.session.estimate.difference_floors`); for the default adaptive
design that sums the moments under each draw's proposal in the blind spot's replay (one
compiled pass over the pool per draw, shared with the blind spot since 2026-12-06).
Printed per pool size: the CPU seconds of one estimate with and without the floor (the
floor switched off in the same process, the same labels), and their ratio.

Run from the repository root:
    python benchmarks/bench_difference_floor.py --sizes 10000 100000 1000000 --labels 400
Results: docs/benchmarks.md ("The paired difference's variance floor").
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import activetest as at
from _cells import printed_ratio
from activetest.session import estimate as est
from activetest.session import estimate_differences as ed
from activetest.stats.losses import log_softmax


def _cpu(run: at.ActiveTest, repeats: int) -> float:
    """The smallest CPU seconds of ``repeats`` estimates."""
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        run.estimate()
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    """Print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--labels", type=int, default=400)
    ap.add_argument("--acquisition", default="adaptive")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    real = est.difference_floors
    real_moments = ed.difference_moments_of  # the pass sums them for the floor (one replay)
    print("| pool | labels | acquisition | estimate CPU-s with the floor | without | ratio |")
    print("|---|---|---|---|---|---|")
    for N in a.sizes:
        rng = np.random.default_rng(a.seed)
        T, B, S = (log_softmax(rng.normal(0, 2, (N, 3))) for _ in range(3))
        y = rng.integers(0, 3, N)
        run = at.ActiveTest(surrogate=S, target=T, metric="log_loss", seed=a.seed,
                            acquisition=a.acquisition, n_boot=100, compare={"B": B})
        for i in run.next(a.labels):
            run.label(i, int(y[i]))
        est.difference_floors, ed.difference_moments_of = real, real_moments
        with_floor = _cpu(run, a.repeats)
        est.difference_floors = lambda *args, **kwargs: {}
        ed.difference_moments_of = lambda *args, **kwargs: None
        without = _cpu(run, a.repeats)
        est.difference_floors, ed.difference_moments_of = real, real_moments
        r = printed_ratio(with_floor, without)
        print(f"| {N:,} | {a.labels} | {a.acquisition} | {with_floor:.2f} | {without:.2f} | "
              + ("- |" if r is None else f"{r:.2f}x |"))


if __name__ == "__main__":
    main()
