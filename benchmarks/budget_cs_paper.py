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

from _budget_cs import cs_row, print_summary
from activetest.experiments.coverage import Context, ce_lure
from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import settings_for

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
            rows.append(cs_row(data.dataset, loss, t.theta, ctx.N, K,
                               float(ctx.per_item.mean())))
print_summary(rows, LOSSES, K, R, t0)
