"""Shared by budget_cs_paper.py and budget_cs_earned.py: one setting's CS / fixed-budget
width ratio and time-uniform coverage, and the summary both print."""
from __future__ import annotations

import time

import numpy as np

from activetest.stats import asymptotic_cs, fixed_interval_curve


def cs_row(dataset: str, loss: str, theta: np.ndarray, N: int, K: int, risk: float,
           model_var: np.ndarray | None = None) -> tuple:
    """(dataset, loss, median CS/fixed width at K for the budget-tuned CS, the same for
    the normal mixture, time-uniform coverage of ``risk`` from 30 labels of each)."""
    fi = fixed_interval_curve(theta, N, model_var=model_var)
    new = asymptotic_cs(theta, N, budget=K, model_var=model_var)
    old = asymptotic_cs(theta, N, model_var=model_var)
    ok = fi.width[:, K - 1] > 0
    return (dataset, loss,
            np.median(new.width[ok, K - 1] / fi.width[ok, K - 1]),
            np.median(old.width[ok, K - 1] / fi.width[ok, K - 1]),
            new.covers(risk, 30).mean(), old.covers(risk, 30).mean())


def print_summary(rows: list[tuple], losses: tuple[str, ...] | list[str], K: int, R: int,
                  t0: float) -> None:
    """Per loss: the median (max) width ratio over settings and the coverage (mean, min)."""
    for loss in losses:
        a = np.array([r[2:] for r in rows if r[1] == loss])
        print(f"{loss} ({len(a)} settings): CS/fixed width at {K}, median "
              f"{np.median(a[:, 0]):.3f} (max {a[:, 0].max():.3f}), normal mixture "
              f"{np.median(a[:, 1]):.3f}; time-uniform coverage mean {a[:, 2].mean():.3f} "
              f"(min {a[:, 2].min():.3f}), normal mixture {a[:, 3].mean():.3f} "
              f"(min {a[:, 3].min():.3f})")
    print(f"{R} runs per setting, {time.time() - t0:.0f} s")
