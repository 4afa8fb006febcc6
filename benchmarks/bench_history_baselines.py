"""Cost of the history experiment's uniform-draw baselines (PPI++, cross-PPI, IRT-style).

Reproduce::

    nice -n 10 python benchmarks/bench_history_baselines.py [--runs 20] [--rank 64]

A synthetic pool of N = 1,351 items (MMLU-Pro math's size), a 400-model response matrix
from a rank-5 logistic model, the design's model matrix with ``--rank`` history factors
(64: what the shared matrices choose; K = rank + 2), budgets 25, 50, 100, 200, 400, two
cross-fitting folds: per run 15 fits x 4 ridges and the ppi_py calls. The fast path
(:func:`activetest.experiments.history_baselines.baselines`) against the per-run loop it
replaced (``baselines_reference``) on the same orders, in the same process; CPU seconds
of this process per run (best of 3), not wall time. Numbers go to docs/history.md by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _cells import printed_ratio, ratio_cell
from _timing import best_cpu_time
from activetest.experiments.history_baselines import baselines, baselines_reference
from activetest.stats.feature_design import design_matrix, history_features


def main() -> None:
    """Print the per-run cost of both paths and their largest difference."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rank", type=int, default=64)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    H, N = 401, 1351
    P = 1 / (1 + np.exp(-(rng.normal(0, 1, (H, 1)) + rng.normal(0, 1.5, (1, N))
                          + rng.normal(0, 1, (H, 5)) @ rng.normal(0, 0.6, (5, N)))))
    Y = (rng.random((H, N)) < P).astype(float)
    hf = history_features(Y[1:], rank=a.rank)
    X = design_matrix(hf.prior_wrong, hf.columns())
    L = 1.0 - Y[0]
    budgets = (25, 50, 100, 200, 400)
    baselines(X, L, budgets, 1, np.random.default_rng(1))  # compile
    fast = best_cpu_time(lambda: baselines(X, L, budgets, a.runs, np.random.default_rng(1)))
    ref = best_cpu_time(
        lambda: baselines_reference(X, L, budgets, a.runs, np.random.default_rng(1)))
    f = baselines(X, L, budgets, a.runs, np.random.default_rng(1))
    r = baselines_reference(X, L, budgets, a.runs, np.random.default_rng(1))
    diff = max(float(np.abs(getattr(f, k) - getattr(r, k)).max()) for k in ("ppi", "cross", "irt"))
    print(f"N = {N}, K = {X.shape[1]}, budgets {budgets}, {a.runs} runs: fast "
          f"{1e3 * fast / a.runs:.1f} ms per run, per-run loop {1e3 * ref / a.runs:.1f} ms "
          f"per run ({ratio_cell(printed_ratio(1e3 * ref / a.runs, 1e3 * fast / a.runs, digits=1))}"
          "); "
          f"largest difference {diff:.1e}")


if __name__ == "__main__":
    main()
