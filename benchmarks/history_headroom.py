"""How far an exactly unbiased design can go at M labels: a bound beside PPI++ (issue 21).

Reproduce (docs/history.md, "How far an exactly unbiased design can go")::

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/history_headroom.py

For each held-out model of the four scenarios of the PPI++ study
(:mod:`activetest.experiments.history_vs_ppi`: the same held-out models, history,
features with the neighbours' column and ridge-logistic model), ``--fits`` times: the
model fitted on ``--labels`` uniformly drawn labels of the held-out model (the study's own
fit, :func:`~activetest.experiments.history_vs_ppi.uniform_fits`), predicting P(wrong)
``g`` on the other items. On those items, the relative variance (to uniform sampling's
``Var(L)``) of one draw of the unbiased estimate whose control is ``g`` **from the first
draw on**:

* uniform draws: ``Var(L - g) / Var(L)`` (the difference estimator);
* the proposal ``q = 0.9 sqrt(g (1 - g)) / sum + 0.1 / N`` (the design's shape, floor 0.1):
  ``(sum (L - g)^2 / (N^2 q) - mean(L - g)^2) / Var(L)``.

An adaptive design's control at draw m is fitted on the m - 1 labels before it, fewer
than ``--labels``, so (up to what its choice of items teaches its model beyond uniform
labels, and its proposal's shape) its relative squared error at ``--labels`` labels is
not below the second number. Beside it, from the study's cached blocks (the same runs
as the tables of docs/history.md; computed if absent, which takes hours): PPI++'s and the
design's relative squared error at ``--labels`` labels, and the median over held-out
models of bound / PPI++ and design / PPI++.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest.experiments import history_vs_ppi as hv
from activetest.experiments.cache import file_fingerprint
from activetest.experiments.history import MATRICES
from activetest.stats.feature_design import feature_design

#: The four scenarios of the PPI++ study and their held-out models (docs/history.md).
SCENARIOS = (("mmlu_pro_math", "random", 30), ("mmlu_pro_math", "cross", 10),
             ("bbh", "random", 30), ("bbh", "cross", 15))


def bound(L: np.ndarray, G: np.ndarray, fitted: np.ndarray, floor: float = 0.1
          ) -> tuple[float, float]:
    """``(uniform draws, the design's proposal)``: the relative variance of one draw of
    the unbiased estimate with control ``G[r]`` on the items outside ``fitted[r]``,
    averaged over the fits ``r`` (module docstring)."""
    var = float(L.var())
    cv, prop = [], []
    for g_all, fit in zip(G, fitted, strict=True):
        rest = np.setdiff1d(np.arange(L.size), fit)
        g = np.clip(g_all[rest], 1e-6, 1 - 1e-6)
        e = L[rest] - g
        n = rest.size
        sv = np.sqrt(g * (1 - g))
        q = (1 - floor) * sv / sv.sum() + floor / n
        cv.append(float(e.var()) / var)
        prop.append(float((e * e / (n * n * q)).sum() - e.mean() ** 2) / var)
    return float(np.mean(cv)), float(np.mean(prop))


def scenario(root: str, cache: str, matrix: str, name: str, targets: int, labels: int,
             fits: int) -> dict[str, np.ndarray]:
    """Per held-out model: the two bounds, PPI++'s and the design's relative squared
    error at ``labels`` labels (the study's 1,000 runs)."""
    a = hv.parser().parse_args(["--matrix", matrix, "--scenario", name, "--targets",
                                str(targets), "--runs", "50", "--blocks", "20", "--root", root,
                                "--cache", cache])
    res = hv.combine([hv._get(a, b) for b in range(a.blocks)])
    col = list(res["budgets"]).index(labels)
    S, held, hist, hf, nh, _ = hv._setup(a.root, matrix, name, targets, 0,
                                        file_fingerprint(Path(a.root) / MATRICES[matrix]))
    H = S[hist]
    N = S.shape[1]
    out = {k: np.zeros(len(held)) for k in ("uniform", "design_bound", "ppi", "design")}
    for t, row in enumerate(held):
        L = 1.0 - S[row]
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        h, n = hf, nh
        if same.any():  # as the study: rows identical to the target leave its history
            h, n = hv._features(H[~same], 0, rank=hf.rank, eps=nh.eps)
        d = feature_design(history=h, neighbours=n)
        rng = np.random.default_rng([1000, t])
        perms = np.stack([rng.permutation(N) for _ in range(fits)])
        G = hv.uniform_fits(d._Phi, d._w0, L, perms, (labels,), neighbours=n)[:, 0]
        out["uniform"][t], out["design_bound"][t] = bound(L, G, perms[:, :labels])
        out["ppi"][t], out["design"][t] = res["rel_ppi_nb"][t, col], res["rel_design"][t, col]
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--root", default=str(Path(__file__).resolve().parents[2] / "shared"
                                         / "datasets" / "history"))
    p.add_argument("--cache", default=str(Path(__file__).resolve().parents[1] / "experiments"
                                          / "cache"))
    p.add_argument("--labels", type=int, default=100)
    p.add_argument("--fits", type=int, default=20, help="fits per held-out model")
    a = p.parse_args(argv)
    t0 = time.process_time()
    print(f"| matrix, scenario (held-out models) | control from {a.labels} uniform labels "
          f"from draw 1: uniform draws | the same, the design's proposal (bound) | PPI++ at "
          f"{a.labels} | design at {a.labels} | bound / PPI++ (median of each model's ratio) | "
          f"design / PPI++ (the same) |")
    print("|---|---|---|---|---|---|---|")
    for matrix, name, targets in SCENARIOS:
        r = scenario(a.root, a.cache, matrix, name, targets, a.labels, a.fits)
        med = np.median
        print(f"| {matrix}, {name} ({targets}) | {med(r['uniform']):.3f} | "
              f"{med(r['design_bound']):.3f} | {med(r['ppi']):.3f} | {med(r['design']):.3f} | "
              f"{med(r['design_bound'] / r['ppi']):.2f} | {med(r['design'] / r['ppi']):.2f} |",
              flush=True)
    print(f"\nmedians over held-out models of relative squared error (to uniform "
          f"sampling's); {a.fits} fits per model; {time.process_time() - t0:.0f} CPU-s")


if __name__ == "__main__":
    main()
