"""An empirical-Bayes prior from history for the feature design (tried; docs/history.md).

Reproduce::

    nice -n 10 python benchmarks/history_eb_prior.py --targets 10 --runs 60

MMLU-Pro math, random scenario of the history experiment (same held-out models, history
features of rank 64). The weights of the design's model fitted (MAP, ridge 1) on the full
rows of 300 history models give a prior mean ``mu`` and covariance ``Sigma``; the design
then runs on the model matrix ``[X mu (as the offset), X chol(Sigma)]`` (label-free for the
target, so exactly unbiased as any feature design). Prints the median over held-out
models of the relative squared error of both designs and of their ratio at 25, 50, 100
labels (same seeds).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest.experiments.history import MATRICES, _targets
from activetest.experiments.history_baselines import _map
from activetest.formats.history import read_response_matrix
from activetest.stats.adaptive import simulate_design
from activetest.stats.feature_design import (
    HistoryFeatures,
    design_matrix,
    feature_design,
    history_features,
)


def main() -> None:
    """Print both designs' errors relative to uniform, and their ratio."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="../shared/datasets/history")
    ap.add_argument("--targets", type=int, default=10)
    ap.add_argument("--runs", type=int, default=60)
    a = ap.parse_args()
    Mx = read_response_matrix(Path(a.root) / MATRICES["mmlu_pro_math"])
    S = Mx.scores
    N = S.shape[1]
    targets, hist = _targets(Mx, "random", 30, 0)
    H = S[hist]
    hf = history_features(H, rank=64)
    X = design_matrix(hf.prior_wrong, hf.columns())
    K = X.shape[1]
    rows = np.random.default_rng(0).choice(H.shape[0], size=min(300, H.shape[0]),
                                           replace=False)
    w0 = np.zeros(K)
    w0[0] = 1.0
    W = []
    for h in rows:
        y = 1.0 - H[h]
        ok = ~np.isnan(y)
        w = w0.copy()
        _map(np.ascontiguousarray(X[ok]), np.ascontiguousarray(y[ok]), w, w0, 1.0)
        W.append(w)
    W = np.array(W)
    mu, Sig = W.mean(axis=0), np.cov(W.T) + 1e-6 * np.eye(K)
    A = np.linalg.cholesky(Sig)
    pw = 1.0 / (1.0 + np.exp(-(X @ mu)))
    eb = HistoryFeatures(1.0 - pw, X @ A, np.ones(N, dtype=bool), hf.n_models, K)
    designs = {"design": feature_design(history=hf), "eb-prior": feature_design(history=eb)}
    budgets = np.array([25, 50, 100])
    out: dict[str, list[np.ndarray]] = {k: [] for k in designs}
    for t, row in enumerate(targets[:a.targets]):
        L = 1.0 - S[row]
        uvar = L.var() * N / (N - 1) / budgets * (N - budgets) / N
        for k, d in designs.items():
            runs = simulate_design(d, losses=L, labels=None, budget=100, n_runs=a.runs,
                                   random_state=1000 * t)
            est = runs.curve(L)[:, budgets - 1]
            out[k].append(((est - L.mean()) ** 2).mean(axis=0) / uvar)
    for k, v in out.items():
        print(k, "median relative squared error at 25, 50, 100:",
              np.round(np.median(np.array(v), axis=0), 3))
    r = np.array(out["eb-prior"]) / np.array(out["design"])
    print("eb-prior / design, median over held-out models:", np.round(np.median(r, axis=0), 3))


if __name__ == "__main__":
    main()
