"""How much the blind-spot widening costs on the 40 paper settings (adaptive design).

Run from the repository root (needs experiments/outputs/*.npz):
    python benchmarks/blind_spot_paper.py 30 log    # runs per setting, loss; ~3 minutes
    python benchmarks/blind_spot_paper.py 30 log 0.2  # another unexplored threshold
    python benchmarks/blind_spot_paper.py 30 log 0.5 earned  # the in-run rule new sessions run
Per setting: the calibrated adaptive design (in-run rule: the 4th argument, ``original``
by default, ``earned`` what new sessions run), R runs of 400 labels;
the median over runs of (widened / plain) fixed-budget width at 100 and 400 labels, and
the coverage of the plain and widened intervals. Results: docs/robustness.md.
"""

import sys
import time
from pathlib import Path

import numpy as np

from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import settings_for
from activetest.stats import fixed_interval_curve
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.blindspot import BLIND_RATIO, blind_spot_curve
from activetest.stats.blindspot_replay import design_proposals
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.losses import log_loss, zero_one_loss

R, LOSS = int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "log"
RATIO = float(sys.argv[3]) if len(sys.argv) > 3 else BLIND_RATIO
RULE = sys.argv[4] if len(sys.argv) > 4 else "original"
BUDGETS = (100, 400)
t0 = time.time()
ratios, cov_plain, cov_wide = [], [], []
for f in sorted(Path("experiments/outputs").glob("*.npz")):
    data = DatasetOutputs.load(f)
    for st in settings_for(data):
        T, S = data.outputs[st.target].pool, data.outputs[st.surrogate].pool
        y = data.pool_labels
        L = (log_loss if LOSS == "log" else zero_one_loss)(T, y)
        B = -T.min(axis=1) if LOSS == "log" else np.ones(len(y))
        N = len(y)
        design = AdaptiveDesign.calibrated(T, S, loss=LOSS, rule=RULE)
        runs = simulate_design(design, losses=L, labels=y, budget=max(BUDGETS), n_runs=R,
                               random_state=0, model_var=True)
        th = adaptive_lure_theta(L[runs.indices], runs.q, N, control=runs.control,
                                 control_rest=runs.control_rest)
        fi = fixed_interval_curve(th, N, model_var=runs.model_var)
        cols = [b - 1 for b in BUDGETS]
        wl, wh = np.zeros((R, len(BUDGETS))), np.zeros((R, len(BUDGETS)))
        for r in range(R):
            acq = runs.indices[r]
            c = blind_spot_curve(design_proposals(design, acq, labels=y[acq]), acq, B, N=N,
                                 at=BUDGETS, ratio=RATIO)
            wl[r], wh[r] = c.widen_low[cols], c.widen_high[cols]
        lo, hi = fi.low[:, cols], fi.high[:, cols]
        risk = L.mean()
        ratios.append(np.median((hi - lo + wl + wh) / (hi - lo), axis=0))
        cov_plain.append(((lo <= risk) & (hi >= risk)).mean(0))
        cov_wide.append(((lo - wl <= risk) & (hi + wh >= risk)).mean(0))
a, p, w = np.array(ratios), np.array(cov_plain), np.array(cov_wide)
for j, b in enumerate(BUDGETS):
    print(f"{LOSS}, rule {RULE}, ratio {RATIO:g}, {b} labels, {len(a)} settings: "
          "widened/plain fixed "
          f"width median {np.median(a[:, j]):.3f} (max {a[:, j].max():.3f}); coverage plain "
          f"{p[:, j].mean():.3f}, widened {w[:, j].mean():.3f}")
print(f"{R} runs per setting, {time.time() - t0:.0f} s")
