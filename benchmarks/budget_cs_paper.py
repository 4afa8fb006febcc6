"""CS width at the planned budget vs the fixed interval, on the 40 paper settings (CE + LURE).

Run from the repository root (needs experiments/outputs/*.npz):
    python benchmarks/budget_cs_paper.py 500            # both losses, ~3 minutes
    python benchmarks/budget_cs_paper.py 500 zero_one   # one loss
Prints, per loss, the median over settings of (CS width / fixed width) at 400 labels for
the budget-tuned CS and the normal mixture, and their time-uniform coverage from 30.
Results: docs/robustness.md.
"""
import sys
import time
from pathlib import Path

import numpy as np

from activetest.experiments.coverage import Context, ce_lure
from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import settings_for
from activetest.stats import asymptotic_cs, fixed_interval_curve

R, K = int(sys.argv[1]), 400
LOSSES = sys.argv[2:] or ("log", "zero_one")
rows = []
t0 = time.time()
for f in sorted(Path("experiments/outputs").glob("*.npz")):
    data = DatasetOutputs.load(f)
    for st in settings_for(data):
        for loss in LOSSES:
            tgt, sur = data.outputs[st.target], data.outputs[st.surrogate]
            ctx = Context(tgt.pool, sur.pool, data.pool_labels, loss, R, K, 0)
            t = ce_lure(ctx)
            N = ctx.N
            risk = float(ctx.per_item.mean())
            fi = fixed_interval_curve(t.theta, N)
            new = asymptotic_cs(t.theta, N, budget=K)
            old = asymptotic_cs(t.theta, N)
            ok = fi.width[:, K - 1] > 0
            rows.append((data.dataset, loss,
                         np.median(new.width[ok, K - 1] / fi.width[ok, K - 1]),
                         np.median(old.width[ok, K - 1] / fi.width[ok, K - 1]),
                         new.covers(risk, 30).mean(), old.covers(risk, 30).mean()))
for loss in LOSSES:
    a = np.array([r[2:] for r in rows if r[1] == loss])
    print(f"{loss} ({len(a)} settings): CS/fixed width at {K}, median {np.median(a[:, 0]):.3f} "
          f"(max {a[:, 0].max():.3f}), normal mixture {np.median(a[:, 1]):.3f}; time-uniform "
          f"coverage mean {a[:, 2].mean():.3f} (min {a[:, 2].min():.3f}), normal mixture "
          f"{a[:, 3].mean():.3f} (min {a[:, 3].min():.3f})")
print(f"{R} runs per setting, {time.time() - t0:.0f} s")
