"""Step weights fixed in advance (src/activetest/stats/step_weights.py) on held-out models.

Reproduce (docs/history.md, small-budget study)::

    nice -n 10 python benchmarks/history_step_weights.py --matrix mmlu_pro_math \\
        --scenario random --targets 8 --runs 200 [--neighbours]

The first ``--targets`` held-out models of the history experiment's scenario (same seed,
same history features; rank 48 for MMLU-Pro cross, 64 otherwise, as the tables chose),
``--runs`` runs of the feature design to 100 labels each. For each held-out model: the
relative per-draw variance profile from the OTHER held-out models' first half of runs
(``profile_from_runs`` + ``smooth_profile``; never this model's labels), and the mean
squared error of the step-weighted estimate over adaptive LURE's on this model's second
half of runs. Prints the median (and range) over held-out models at 25, 50, 100 labels.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest.experiments.history import MATRICES, _targets
from activetest.formats.history import read_response_matrix
from activetest.stats.adaptive import simulate_design
from activetest.stats.estimators import adaptive_lure_theta, adaptive_lure_weights
from activetest.stats.feature_design import feature_design, history_features
from activetest.stats.step_weights import profile_from_runs, smooth_profile, step_weights


def main() -> None:
    """Print the step-weighted / adaptive-LURE error ratios."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="../shared/datasets/history")
    ap.add_argument("--matrix", choices=tuple(MATRICES), default="mmlu_pro_math")
    ap.add_argument("--scenario", choices=("random", "cross"), default="random")
    ap.add_argument("--targets", type=int, default=8)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--neighbours", action="store_true",
                    help="the sessions' default design: history features + the in-run "
                         "neighbours' column (eps chosen on the history, seed 0)")
    ap.add_argument("--profile-from", choices=("held-out", "history"), default="held-out",
                    help="held-out: the other held-out models' runs (the prototype); history: "
                         "pseudo-targets drawn from the history rows, their design built from "
                         "the remaining history (what a session can do: no held-out model's "
                         "labels)")
    ap.add_argument("--pseudo", type=int, default=8, help="pseudo-targets (--profile-from history)")
    a = ap.parse_args()
    M = read_response_matrix(Path(a.root) / MATRICES[a.matrix])
    S = M.scores
    N = S.shape[1]
    n_t = 30 if a.scenario == "random" else (10 if a.matrix == "mmlu_pro_math" else 15)
    targets, hist = _targets(M, a.scenario, n_t, 0)
    rank = 48 if (a.matrix, a.scenario) == ("mmlu_pro_math", "cross") else 64
    hf = history_features(S[hist], rank=rank)
    if a.neighbours:
        from activetest.stats.neighbours import neighbour_history

        nh = neighbour_history(S[hist], p_correct=hf.p_correct, random_state=0)
        design = feature_design(history=hf, neighbours=nh)
    else:
        design = feature_design(history=hf)
    th, truth = [], []
    for t, row in enumerate(targets[:a.targets]):
        L = 1.0 - S[row]
        runs = simulate_design(design, losses=L, labels=None, budget=100, n_runs=a.runs,
                               random_state=1000 * t)
        g, G, _ = runs.controls(None)
        th.append(adaptive_lure_theta(L[runs.indices], runs.q, N, g, G))
        truth.append(L.mean())
    theta, tr = np.stack(th), np.array(truth)
    T, R = theta.shape[:2]
    hprof = None
    if a.profile_from == "history":
        hprof = history_profile(S[hist], rank, a.pseudo, a.runs // 2, a.neighbours)
    for Mb in (25, 50, 100):
        ratios = []
        for t in range(T):
            others = [u for u in range(T) if u != t]
            prof = hprof if hprof is not None else smooth_profile(
                profile_from_runs(theta[others][:, :R // 2], tr[others], N))
            x = theta[t, R // 2:, :Mb] - tr[t]
            ratios.append(((x @ step_weights(N, Mb, prof[:Mb])) ** 2).mean()
                          / ((x @ adaptive_lure_weights(N, Mb)) ** 2).mean())
        print(f"{a.matrix} {a.scenario}{' (neighbours)' if a.neighbours else ''}, M = {Mb}: "
              f"step-weighted / adaptive LURE MSE median "
              f"{np.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f}; "
              f"{T} held-out models, {R // 2} runs each measured; profile from "
              f"{a.profile_from})")


def history_profile(H: np.ndarray, rank: int, n_pseudo: int, runs: int, neighbours: bool,
                    budget: int = 100, seed: int = 7) -> np.ndarray:
    """The smoothed profile from ``n_pseudo`` history rows as pseudo-targets, the design
    built from the other history rows (label-free for every held-out model)."""
    rng = np.random.default_rng(seed)
    ok = np.flatnonzero(np.nanstd(H, axis=1) > 0)
    pseudo = rng.choice(ok, size=min(n_pseudo, ok.size), replace=False)
    rest = np.ones(H.shape[0], dtype=bool)
    rest[pseudo] = False
    hf = history_features(H[rest], rank=rank)
    if neighbours:
        from activetest.stats.neighbours import neighbour_history

        nh = neighbour_history(H[rest], p_correct=hf.p_correct, random_state=0)
        design = feature_design(history=hf, neighbours=nh)
    else:
        design = feature_design(history=hf)
    N = H.shape[1]
    th, truth = [], []
    for t, row in enumerate(pseudo):
        L = 1.0 - np.where(np.isnan(H[row]), hf.p_correct, H[row])
        r = simulate_design(design, losses=L, labels=None, budget=budget, n_runs=runs,
                            random_state=500 + t)
        g, G, _ = r.controls(None)
        th.append(adaptive_lure_theta(L[r.indices], r.q, N, g, G))
        truth.append(L.mean())
    return smooth_profile(profile_from_runs(np.stack(th), np.array(truth), N))


if __name__ == "__main__":
    main()
