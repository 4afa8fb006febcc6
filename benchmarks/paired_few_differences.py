"""Two targets compared on the same labels when they rarely differ (``estimate --compare``).

The paired difference of two targets' error rates has per-item values in {-1, 0, 1}.
Where the two disagree on few items, most early runs label none of them: every term is
0 and the CLT intervals of the difference are a point at 0. Sessions apply the
few-errors rule to the difference (``activetest.stats.fewerrors.few_differences``):
the CLT intervals only once 5 labelled items differ from the most common difference,
else the exact CS of the difference
(``activetest.stats.betting.paired_difference_exact_cs``); the CS is then intersected
over budgets.

Pool: N = 2,000, target A errs on 20 %; B differs from A on 2.5 % of the items (35 where
B errs alone, 15 where A does), so the true difference A - B is -0.01. Draws: uniform
sampling, and a non-uniform proposal as sessions use (the paper's floored proposal on a
seeded random score, floor 0.1). Printed: coverage of the fixed-budget interval at 50,
100, 200, 400 labels (and its median width), and of the CS tuned to 400 labels,
time-uniform from 30 to 400, without and with the rule.

Run from the repository root (under a minute):
    python benchmarks/paired_few_differences.py --runs 800
Results: docs/robustness.md ("Two targets that rarely differ").
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest.stats import sample
from activetest.stats.betting import paired_difference_exact_cs
from activetest.stats.confseq import asymptotic_cs, running_intersection
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.fewerrors import MIN_ERRORS, few_differences, switch_to_exact
from activetest.stats.intervals import fixed_interval_curve

BUDGETS = (50, 100, 200, 400)
CS_FROM = 30


def pool(seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The two targets' 0/1 losses on the pool (module docstring)."""
    rng = np.random.default_rng(seed)
    N = 2000
    La = (rng.random(N) < 0.2).astype(float)
    Lb = La.copy()
    where = rng.choice(N, 50, replace=False)
    Lb[where[:35]], La[where[:35]] = 1.0, 0.0
    Lb[where[35:]], La[where[35:]] = 0.0, 1.0
    return La, Lb


def main(argv: list[str] | None = None) -> None:
    """Print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=800)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.process_time()
    La, Lb = pool()
    N, truth = La.size, La.mean() - Lb.mean()
    at = np.array(BUDGETS) - 1
    print(f"Pool N = {N:,}; A errs on {La.mean():.1%}, B differs from A on "
          f"{np.mean(La != Lb):.1%}; true difference A - B = {truth:+.4f}. {a.runs} runs, "
          f"seed {a.seed}; nominal 0.95.\n")
    print("| draws | intervals | fixed at " + " | fixed at ".join(map(str, BUDGETS))
          + " | median fixed width at 50 / 400 | anytime (CS tuned to 400, 30-400) |")
    print("|---|---|" + "---|" * len(BUDGETS) + "---|---|")
    rng = np.random.default_rng(a.seed)
    for name, scores, floor in (("uniform", np.ones(N), 1.0),
                                ("floored proposal", rng.random(N) ** 2, 0.1)):
        idx, q = sample(scores, max(BUDGETS), n_runs=a.runs, proposal_floor=floor,
                        random_state=a.seed + 1)
        A, B = La[idx], Lb[idx]
        d = A - B
        th = adaptive_lure_theta(d, q, N)
        fi = fixed_interval_curve(th, N, skew_widens_only=True)  # as sessions show differences
        cs = asymptotic_cs(th, N, value_range=(-1.0, 1.0), budget=max(BUDGETS),
                           intersect=False)
        qf = floor / (1.0 + floor)
        ex = paired_difference_exact_cs(A, B, q, N, bound_a=1.0, bound_b=1.0, q_floor=qf)
        few = np.stack([few_differences(r, MIN_ERRORS) for r in d])
        rows = {"CLT alone": (fi.low, fi.high, *running_intersection(np.asarray(cs.low),
                                                                     np.asarray(cs.high))),
                "with the rule": (*switch_to_exact(fi.low, fi.high, ex.low, ex.high, few,
                                                   intersect=False),
                                  *switch_to_exact(np.asarray(cs.low), np.asarray(cs.high),
                                                   ex.low, ex.high, few))}
        if floor < 1.0:  # what sessions add for a non-uniform proposal: the blind spot
            from activetest.stats.blindspot import BLIND_RATIO, blind_spot_curve
            from activetest.stats.blindspot_replay import floored_proposals

            D = np.stack([blind_spot_curve(floored_proposals(scores, r, floor), r, 1.0, N=N,
                                           ratio=BLIND_RATIO).widen_high for r in idx])
            flo, fhi, clo, chi = rows["with the rule"]
            wf = np.where(few, 0.0, D)  # where the exact CS stands in nothing is widened
            rows["with the rule and the blind spot"] = (
                flo - wf, fhi + wf,
                *switch_to_exact(np.asarray(cs.low) - D, np.asarray(cs.high) + D,
                                 ex.low, ex.high, few))
        for label, (flo, fhi, clo, chi) in rows.items():
            cov = [((flo[:, b] <= truth) & (truth <= fhi[:, b])).mean() for b in at]
            w = np.median(fhi - flo, axis=0)
            anyt = ((clo[:, CS_FROM - 1:] <= truth) & (truth <= chi[:, CS_FROM - 1:])).all(1)
            print(f"| {name} | {label} | " + " | ".join(f"{c:.3f}" for c in cov)
                  + f" | {w[at[0]]:.3f} / {w[at[-1]]:.3f} | {anyt.mean():.3f} |")
        print(f"| {name} | (share of runs where the exact CS stands in) | "
              + " | ".join(f"{few[:, b].mean():.2f}" for b in at) + " | | |")
    print(f"\n({time.process_time() - t0:.0f} CPU-s)")


if __name__ == "__main__":
    main()
