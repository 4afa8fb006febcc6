"""The error rate when the labels show few errors (issue 20, item 3): the near-constant
pool (2.2 % errors), where most runs of 50 labels see no error and the CLT intervals
fail (fixed-budget 0.60; anytime 0.585 for the earned design, 0.99 for uniform sampling
since the rounding fix of 2026-12-04), for uniform sampling and the earned design.

Run from the repository root (a minute):
    python benchmarks/few_errors.py
Rule measured: report the CLT interval (fixed-budget; the CS tuned to 400 labels) only
once the labels show at least k errors (and k labels without one), else the exact
(betting) CS at that budget; the CS is then intersected over budgets. k = 5 is what
sessions apply (``activetest.stats.fewerrors``, config ``clt_min_errors``), with this
module's ``switch_to_exact``.
200 runs each (uniform from seed 0, the earned design from seed 3000, as
python -m activetest.experiments.robustness draws them). Results: docs/robustness.md.
"""

import numpy as np

from activetest.experiments.hostile import hostile_pool
from activetest.experiments.robustness import BUDGETS, CS_FROM, _draws
from activetest.stats.betting import exact_cs
from activetest.stats.confseq import asymptotic_cs, running_intersection
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.fewerrors import few_errors, switch_to_exact
from activetest.stats.intervals import fixed_interval_curve

pool = hostile_pool("near_constant", seed=0)
L = pool.losses("zero_one")
n, risk = len(L), L.mean()
at = np.array(BUDGETS) - 1


def covers(lo, hi):
    """Share of runs covering the risk at each budget."""
    return np.round([((lo[:, b] <= risk) & (risk <= hi[:, b])).mean() for b in at], 3)


for method, seed in (("uniform", 0), ("earned", 3000)):
    idx, q, g, G, mv, floor, _ = _draws(pool, method, "zero_one", 400, 200, seed)
    Ld = L[idx]
    th = adaptive_lure_theta(Ld, q, n, control=g, control_rest=G)
    fi = fixed_interval_curve(th, n, model_var=mv)
    extra = {} if g is None else {"control": g, "control_rest": G, "control_low": 0.0,
                                  "control_high": 1.0}
    ex = exact_cs(Ld, q, n, loss_high=1.0, q_floor=floor, alpha=0.05, **extra)
    cs = asymptotic_cs(th, n, alpha=0.05, value_range=(0, 1), model_var=mv, budget=400,
                       intersect=False)
    plo, phi = running_intersection(np.asarray(cs.low), np.asarray(cs.high))  # as shown
    always = (plo[:, CS_FROM - 1:] <= risk) & (risk <= phi[:, CS_FROM - 1:])
    print(f"{method}: plain fixed {covers(fi.low, fi.high)}, CS (budget 400) "
          f"{always.all(1).mean():.3f}; exact CS {covers(ex.low, ex.high)} at widths "
          f"{np.round(np.median(ex.high - ex.low, 0)[at], 3)} (fixed "
          f"{np.round(np.nanmedian(fi.high - fi.low, 0)[at], 3)})")
    for k in (1, 3, 5, 10):
        few = few_errors(Ld, k)
        use = ~few
        lo, hi = switch_to_exact(fi.low, fi.high, ex.low, ex.high, few, intersect=False)
        clo, chi = switch_to_exact(np.asarray(cs.low), np.asarray(cs.high), ex.low, ex.high,
                                   few)
        ok = (clo[:, CS_FROM - 1:] <= risk) & (risk <= chi[:, CS_FROM - 1:])
        print(f"  CLT from {k} errors: fixed {covers(lo, hi)}, anytime {ok.all(1).mean():.3f}, "
              f"share of runs with a CLT interval {np.round(use[:, at].mean(0), 2)}")
