"""Coverage of a paired difference's intervals where the two models rarely differ.

A synthetic pool (N = 5,000, two classes, the target's probabilities known and the
labels drawn from them; the surrogate = the target) and a second model that predicts
the other class on a share of the items (``--rates``), where the target is right with
probability ``--better``. Each seed draws by a design (uniform sampling, and the
``compare`` acquisition) in memory (``ActiveTest``) and estimates the difference of the
two error rates at each budget (``--budgets``) from the same run. Printed per design,
share and budget: the coverage of the fixed-budget interval and of the anytime sequence,
how often each interval basis was shown (``clt``, ``exact``: the few-differences rule's
exact CS, ``sure``: the sure bounds), and the median number of labelled items where the
two differ. A coverage below 0.95 by more than about 2 standard errors
(``sqrt(0.95 * 0.05 / seeds)``) is what to look at.

Run from the repository root (about 6 CPU-minutes at 400 seeds):
    python benchmarks/difference_coverage.py --seeds 400
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import activetest as at


def main(argv: list[str] | None = None) -> None:
    """Print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=400)
    ap.add_argument("--rates", type=float, nargs="+", default=[0.02, 0.04, 0.08, 0.16])
    ap.add_argument("--budgets", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--better", type=float, default=0.8)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # the bootstrap's "below ~100 labels" notes
    t0 = time.process_time()
    rng = np.random.default_rng(1)
    N = 5000
    p = 1 / (1 + np.exp(-rng.normal(0, 2, N)))
    truth = (rng.random(N) < p).astype(int)
    T = np.column_stack([1 - p, p])
    right = T.argmax(1) == truth
    budgets = sorted(a.budgets)
    print(f"{a.seeds} seeds; N = {N}; the target right on {a.better:.0%} of the differing "
          f"items (in expectation)\n")
    print("| design | differ | truth | labels | coverage fixed-budget | anytime | basis "
          "shown (clt/exact/sure) | labelled differing (median) |")
    print("|---|---|---|---|---|---|---|---|")
    for rate in a.rates:
        # the other model flips the prediction on `rate` of the items: where the target
        # is right (the target better there) with probability `better`
        w = np.where(right, a.better / right.sum(), (1 - a.better) / (~right).sum())
        dif = np.zeros(N, dtype=bool)
        dif[rng.choice(N, int(rate * N), replace=False, p=w / w.sum())] = True
        other = T.copy()
        other[dif] = other[dif][:, ::-1]
        tr = float(np.mean(T.argmax(1) != truth) - np.mean(other.argmax(1) != truth))
        for acq in ("uniform", "compare"):
            cov = {b: [] for b in budgets}
            cs = {b: [] for b in budgets}
            basis = {b: Counter() for b in budgets}
            seen = {b: [] for b in budgets}
            for seed in range(a.seeds):
                run = at.ActiveTest(surrogate=T, target=T, metric="error_rate", seed=seed,
                                    acquisition=acq, compare={"other": other}, n_boot=10)
                done = 0
                for b in budgets:
                    rows = run.next(b - done)
                    run.label_many(rows, truth[rows])
                    done = b
                    (c,) = run.estimate().comparisons
                    d = c.difference_anytime
                    cov[b].append(d.fixed_low - 1e-12 <= tr <= d.fixed_high + 1e-12)
                    cs[b].append(d.cs_low - 1e-12 <= tr <= d.cs_high + 1e-12)
                    basis[b][d.basis or "clt"] += 1
                    seen[b].append(int(dif[run.drawn[:b]].sum()))
            for b in budgets:
                n = a.seeds
                shown = "/".join(f"{basis[b][k] / n:.2f}" for k in ("clt", "exact", "sure"))
                print(f"| {acq} | {rate:.0%} | {tr:+.4f} | {b} | {np.mean(cov[b]):.3f} | "
                      f"{np.mean(cs[b]):.3f} | {shown} | {np.median(seen[b]):.0f} |")
    print(f"\n({time.process_time() - t0:.0f} CPU-s)")


if __name__ == "__main__":
    main()
