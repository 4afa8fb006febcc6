"""CS width at the planned budget vs the fixed interval, on the 40 paper settings, for the
design new sessions run (the calibrated adaptive design with the earned in-run rule).

Run from the repository root (needs experiments/outputs/*.npz):
    python benchmarks/budget_cs_earned.py 100            # both losses, a few minutes
    python benchmarks/budget_cs_earned.py 100 zero_one   # one loss
Per setting: R runs of 400 labels of ``AdaptiveDesign.calibrated(..., rule="earned")``
fitted to the loss (seed 0), the design's own estimate (adaptive LURE with its control)
and model-variance floor, as sessions compute them. Prints, per loss, the median over
settings of the median over runs of (CS width / fixed-budget width) at 400 labels for the
CS tuned to the planned budget 400 (what new sessions record) and the normal mixture, and
their time-uniform coverage of the pool risk from 30 labels. Results: docs/robustness.md
(``benchmarks/budget_cs_paper.py`` measures the same for CE + LURE).
"""
import sys
import time
from pathlib import Path

from _budget_cs import cs_row, print_summary
from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import settings_for
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.losses import log_loss, zero_one_loss

R, K = int(sys.argv[1]), 400
LOSSES = sys.argv[2:] or ("log", "zero_one")
rows = []
t0 = time.time()
for f in sorted(Path("experiments/outputs").glob("*.npz")):
    data = DatasetOutputs.load(f)
    for st in settings_for(data):
        T, S = data.outputs[st.target].pool, data.outputs[st.surrogate].pool
        y = data.pool_labels
        N = len(y)
        for loss in LOSSES:
            L = (log_loss if loss == "log" else zero_one_loss)(T, y)
            design = AdaptiveDesign.calibrated(T, S, loss=loss, rule="earned")
            runs = simulate_design(design, losses=L, labels=y, budget=K, n_runs=R,
                                   random_state=0, model_var=True)
            th = adaptive_lure_theta(L[runs.indices], runs.q, N, control=runs.control,
                                     control_rest=runs.control_rest)
            rows.append(cs_row(data.dataset, loss, th, N, K, float(L.mean()),
                               model_var=runs.model_var))
print_summary(rows, LOSSES, K, R, t0)
