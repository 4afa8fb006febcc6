"""Batches with leave-one-out controls (a prototype, tried 2026-12-05; not built).

Reproduce (docs/history.md, "Leave-one-out controls in batches")::

    nice -n 10 python benchmarks/history_loo_batches.py --matrix mmlu_pro_math \\
        --targets 8 --runs 60

The idea: the adaptive design's early draws have poor controls (the control of draw m is
fitted on the m - 1 labels before it, PPI++'s on all of them). Drawn in batches, each
batch i.i.d. from a proposal fixed before it (fitted on the earlier batches, mixed with
the uniform at ``--lam``) over the items not yet labelled, a draw's control may be fitted
on every earlier batch AND the batch's other draws (leave one out): given the earlier
batches the draws of a batch are independent, so each term ``sum_R g_-m + (L - g_-m(x))
/ q(x)`` is unbiased for the remainder's total. A batch's estimate of the pool mean is the
labelled items' losses plus that; batches are combined with weights fixed in advance (the
batch sizes). Exactly unbiased; compared on held-out models (the history experiment's
first ``--targets`` of its random scenario, same features, no neighbours' column) with
the feature design (adaptive LURE, 200 runs) and uniform-draw PPI++ and cross-PPI
(``history_baselines.baselines``, ``ppi_py``, 200 runs) at 100 labels. ``--mode srs``:
one uniform batch without replacement, each control fitted on the other 99 labels.
Prints the relative squared errors per held-out model and the medians.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest.experiments.history import MATRICES, _targets
from activetest.experiments.history_baselines import baselines
from activetest.formats.history import read_response_matrix
from activetest.stats.adaptive import simulate_design
from activetest.stats.estimators import adaptive_lure_theta, adaptive_lure_weights
from activetest.stats.feature_design import (
    design_matrix,
    feature_design,
    fit_predict,
    history_features,
)


def batch_run(X: np.ndarray, L: np.ndarray, sizes: list[int], lam: float,
              rng: np.random.Generator) -> float:
    """One run of the batched design with leave-one-out controls: the estimate."""
    N = L.size
    labelled = np.zeros(N, dtype=bool)
    lab: list[int] = []
    ests = []
    for nb in sizes:
        R = np.flatnonzero(~labelled)
        g = fit_predict(X, np.array(lab, dtype=np.int64), L[np.array(lab, dtype=np.int64)])
        s = np.sqrt(np.clip(g[R] * (1 - g[R]), 1e-12, None))
        q = lam / R.size + (1 - lam) * s / s.sum()
        q /= q.sum()
        draws = rng.choice(R.size, size=nb, p=q, replace=True)
        items = R[draws]
        terms = np.empty(nb)
        for m in range(nb):
            idx = np.concatenate([np.array(lab, dtype=np.int64),
                                  np.unique(np.delete(items, m))])
            gm = fit_predict(X, idx, L[idx])
            terms[m] = gm[R].sum() + (L[items[m]] - gm[items[m]]) / q[draws[m]]
        ests.append((L[labelled].sum() + terms.mean()) / N)
        for i in np.unique(items):
            labelled[i] = True
            lab.append(int(i))
    w = np.array(sizes, dtype=np.float64)
    return float(np.dot(w / w.sum(), ests))


def srs_run(X: np.ndarray, L: np.ndarray, M: int, rng: np.random.Generator) -> float:
    """One uniform sample of M without replacement, each control fitted on the other
    M - 1 labels: ``(S_-m + sum_{not S_-m} g_-m + (N - M + 1)(L_m - g_-m(x_m))) / N``,
    averaged over m (each term unbiased given the other draws)."""
    N = L.size
    idx = rng.permutation(N)[:M]
    terms = np.empty(M)
    for m in range(M):
        o = np.delete(idx, m)
        gm = fit_predict(X, o, L[o])
        rest = np.ones(N, dtype=bool)
        rest[o] = False
        terms[m] = (L[o].sum() + gm[rest].sum() + (N - M + 1) * (L[idx[m]] - gm[idx[m]])) / N
    return float(terms.mean())


def main() -> None:
    """Print the batched design's error against the design's, PPI++'s and cross-PPI's."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="../shared/datasets/history")
    ap.add_argument("--matrix", choices=tuple(MATRICES), default="mmlu_pro_math")
    ap.add_argument("--targets", type=int, default=8)
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--batches", default="25,25,50")
    ap.add_argument("--lam", type=float, default=0.3)
    ap.add_argument("--mode", choices=("batches", "srs"), default="batches")
    a = ap.parse_args()
    M = read_response_matrix(Path(a.root) / MATRICES[a.matrix])
    S = M.scores
    N = S.shape[1]
    targets, hist = _targets(M, "random", 30, 0)
    hf = history_features(S[hist], rank=64)
    X = design_matrix(hf.prior_wrong, hf.columns())
    design = feature_design(history=hf)
    sizes = [int(x) for x in a.batches.split(",")]
    budget = sum(sizes)
    res = []
    t0 = time.process_time()
    for t, row in enumerate(targets[:a.targets]):
        L = 1.0 - np.where(np.isnan(S[row]), hf.p_correct, S[row])
        truth = L.mean()
        var_u = L.var(ddof=1) / budget * (N - budget) / N
        rng = np.random.default_rng(100 + t)
        e = np.array([batch_run(X, L, sizes, a.lam, rng) if a.mode == "batches"
                      else srs_run(X, L, budget, rng) for _ in range(a.runs)])
        runs = simulate_design(design, losses=L, labels=None, budget=budget, n_runs=200,
                               random_state=1000 * t)
        g, G, _ = runs.controls(None)
        d = adaptive_lure_theta(L[runs.indices], runs.q, N, g, G)[:, :budget] \
            @ adaptive_lure_weights(N, budget)
        base = baselines(X, L, (budget,), 200, np.random.default_rng(5 + t))

        def rel(x: np.ndarray, truth: float = truth, var_u: float = var_u) -> float:
            return float(((np.asarray(x).reshape(-1) - truth) ** 2).mean() / var_u)

        r = (rel(e), rel(d), rel(base.ppi), rel(base.cross))
        res.append(r)
        print(f"held-out model {t}: {a.mode} {r[0]:.3f}, design {r[1]:.3f}, PPI++ {r[2]:.3f}, "
              f"cross-PPI {r[3]:.3f} (MSE / uniform's at {budget} labels; "
              f"{time.process_time() - t0:.0f} CPU-s)", flush=True)
    R = np.array(res)
    print(f"{a.matrix}, {len(R)} held-out models, {a.runs} runs of {a.mode}: median "
          f"{a.mode} / design {np.median(R[:, 0] / R[:, 1]):.2f}, {a.mode} / PPI++ "
          f"{np.median(R[:, 0] / R[:, 2]):.2f}, design / PPI++ "
          f"{np.median(R[:, 1] / R[:, 2]):.2f}; medians of the relative errors "
          f"{', '.join(f'{x:.3f}' for x in np.median(R, axis=0))}")


if __name__ == "__main__":
    main()
