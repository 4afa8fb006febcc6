"""Cost of the feature design (stats/feature_design.py) in simulation.

Reproduce::

    nice -n 10 python benchmarks/bench_feature_design.py [--runs 200] [--rank 10] [--neighbours]

A synthetic pool of N = 2,000 items, a 300-model response matrix from a rank-3
logistic model, 12 features (an offset, an intercept, 10 history factors), M = 400
draws, each loss observed before the next draw (17 refits x 4 ridges). Baseline in
the same run: the fixed-score design with in-run lambda (``AdaptiveDesign.fixed``)
on the same pool. CPU seconds of this process per run (best of 3), not wall time.
``--neighbours``: also the design with the similarity-weighted neighbours' column
(stats/neighbours.py, recomputed before every refit from the 300 history models).
Numbers go to docs/history.md by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _cells import printed_ratio, ratio_cell
from _timing import best_cpu_time
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.feature_design import feature_design, history_features


def main() -> None:
    """Print the per-run cost of the feature design and of the fixed baseline."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rank", type=int, default=10, help="history factors (features = rank + 2)")
    ap.add_argument("--neighbours", action="store_true", help="also time the neighbours' column")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    N, H, M = 2000, 300, 400
    b = rng.normal(size=N) * 1.5
    V = rng.normal(size=(N, 3))
    A = rng.normal(size=(H + 1, 3))
    P = 1 / (1 + np.exp(-(b[None, :] + A @ V.T)))
    Y = (rng.random(P.shape) < P).astype(float)
    hf = history_features(Y[:H], rank=args.rank)
    L = 1.0 - Y[H]
    design = feature_design(history=hf)
    K = design._Phi.shape[1]
    fixed = AdaptiveDesign.fixed(np.sqrt(hf.prior_wrong * hf.p_correct), hf.prior_wrong,
                                 lam=None)
    for d in (design, fixed):  # compile
        simulate_design(d, losses=L, labels=None, budget=M, n_runs=2)
    R = args.runs
    t_f = best_cpu_time(lambda: simulate_design(design, losses=L, labels=None, budget=M, n_runs=R))
    t_b = best_cpu_time(lambda: simulate_design(fixed, losses=L, labels=None, budget=M, n_runs=R))
    print(f"feature design: N={N} M={M} K={K} features: {1e3 * t_f / R:.2f} ms/run "
          f"(CPU); fixed design, in-run lambda: {1e3 * t_b / R:.2f} ms/run; "
          f"ratio {ratio_cell(printed_ratio(1e3 * t_f / R, 1e3 * t_b / R))} (of the ms as printed)")
    if args.neighbours:
        from activetest.stats.neighbours import neighbour_history

        nh = neighbour_history(Y[:H], p_correct=hf.p_correct)
        nbd = feature_design(history=hf, neighbours=nh)
        simulate_design(nbd, losses=L, labels=None, budget=M, n_runs=2)
        t_n = best_cpu_time(lambda: simulate_design(nbd, losses=L, labels=None, budget=M, n_runs=R))
        print(f"with the neighbours' column (H={H}, eps {nh.eps:g}, K={K + 1}): "
              f"{1e3 * t_n / R:.2f} ms/run (CPU); the column costs "
              f"{1e3 * (t_n - t_f) / R:.2f} ms/run")


if __name__ == "__main__":
    main()
