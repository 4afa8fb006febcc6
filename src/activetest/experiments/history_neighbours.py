"""The feature design with and without the similarity-weighted neighbours' column.

``python -m activetest.experiments.history_neighbours --matrix bbh --scenario random``

The neighbours' column (:mod:`activetest.stats.neighbours`) is recomputed before every
refit from the labels so far: the history models weighted by how well they predict the
target's labels (a mixture with flip probability ``eps``, chosen on the history alone),
their prediction's log-odds shift from the population's, leave-one-out on the labelled
items. Variants (keyword arguments of
:func:`activetest.stats.feature_design.feature_design`):

* ``original``: history's difficulty and item factors (the default design);
* ``neighbours``: the same plus the neighbours' column;
* ``neighbours (prior weight 0)``: the same with the column's prior weight 0 instead
  of 1 (the ridge then shrinks towards ignoring the neighbours).

Held-out models, history, rank choice, seeds and relative squared error exactly as in
:mod:`activetest.experiments.history_guard` (each variant with the same seeds). Outputs
are cached (``--cache``) by a key of the inputs and the behaviour probe
(:mod:`activetest.experiments.cache`).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
from pathlib import Path

import numpy as np

from activetest.experiments.probe import Probe, probe_id

__all__ = ["VARIANTS", "behaviour_probe", "cache_key", "main", "neighbour_study", "render"]

#: Variant names (the design each builds: module docstring).
VARIANTS = ("original", "neighbours", "neighbours (prior weight 0)")


def neighbour_study(root: str | Path, matrix: str, scenario: str, *, n_targets: int = 30,
                    n_runs: int = 30, budgets: tuple[int, ...] = (25, 50, 100, 200, 400),
                    seed: int = 0, log: bool = True) -> dict[str, np.ndarray]:
    """``{variant: (T, B) relative squared error}`` plus ``budgets``, ``accuracy`` and
    ``meta`` (rank, history rows, runs, eps, seconds)."""
    from activetest.experiments.history import MATRICES, _targets
    from activetest.formats.history import read_response_matrix
    from activetest.stats.adaptive import simulate_design
    from activetest.stats.feature_design import feature_design, history_features
    from activetest.stats.neighbours import neighbour_design, neighbour_history

    t0 = time.time()
    M = read_response_matrix(Path(root) / MATRICES[matrix])
    S = M.scores
    N = S.shape[1]
    bud = np.array([b for b in budgets if b < N])
    targets, hist = _targets(M, scenario, n_targets, seed)
    H = S[hist]
    hf = history_features(H, random_state=seed)
    nh = neighbour_history(H, p_correct=hf.p_correct, random_state=seed)
    out = {v: np.zeros((len(targets), bud.size)) for v in VARIANTS}
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        truth = L.mean()
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        h, n = hf, nh
        if same.any():
            h = history_features(H[~same], rank=hf.rank)
            n = neighbour_history(H[~same], p_correct=h.p_correct, eps=nh.eps)
        designs = {"original": feature_design(history=h),
                   "neighbours": feature_design(history=h, neighbours=n),
                   "neighbours (prior weight 0)": neighbour_design(feature_design(history=h),
                                                                   n, prior_weight=0.0)}
        uvar = L.var() * N / (N - 1) / bud * (N - bud) / N
        for v in VARIANTS:
            runs = simulate_design(designs[v], losses=L, labels=None, budget=int(bud.max()),
                                   n_runs=n_runs, random_state=seed + 1000 * t)
            est = runs.curve(L)[:, bud - 1]
            out[v][t] = ((est - truth) ** 2).mean(axis=0) / uvar
        if log:
            print(f"  {matrix} {scenario} target {t + 1}/{len(targets)} "
                  f"({time.time() - t0:.0f} s)", flush=True)
    out["budgets"] = bud
    out["accuracy"] = S[targets].mean(axis=1)
    out["meta"] = np.array([hf.rank, int(hist.sum()), n_runs, nh.eps, time.time() - t0])
    return out


def render(matrix: str, scenario: str, res: dict[str, np.ndarray]) -> str:
    """A markdown table: per variant and budget the median over held-out models, the
    worst model and how many exceed 1.05; then the median ratio to the original."""
    bud = res["budgets"]
    T = res["original"].shape[0]
    rank, n_hist, runs, eps, secs = res["meta"]
    lines = [f"{matrix}, {scenario}: {T} held-out models, {int(n_hist)} history models, "
             f"rank {int(rank)}, eps {eps:g}, {int(runs)} runs per model and variant "
             f"({secs:.0f} s). Median relative squared error (worst model; models above "
             "1.05):", "",
             "| variant | " + " | ".join(f"M = {b}" for b in bud)
             + " | models above 1.05 at some budget |", "|---|" + "---|" * (bud.size + 1)]
    for v in VARIANTS:
        r = res[v]
        cells = [f"{np.median(r[:, b]):.2f} ({r[:, b].max():.2f}; {(r[:, b] > 1.05).sum()})"
                 for b in range(bud.size)]
        lines.append(f"| {v} | " + " | ".join(cells)
                     + f" | {(r > 1.05).any(axis=1).sum()} of {T} |")
    lines.append("")
    for v in VARIANTS[1:]:
        ratio = res[v] / res["original"]
        lines.append(f"Median over models of {v} / original: " + ", ".join(
            f"M = {b}: {np.median(ratio[:, j]):.2f}" for j, b in enumerate(bud)) + ".")
    return "\n".join(lines)


def behaviour_probe() -> Probe:
    """The study's behaviour probe (:mod:`activetest.experiments.probe`):
    :func:`neighbour_study` (every variant) on both scenarios of a tiny matrix."""
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import MATRICES
    from activetest.experiments.history_neighbours import neighbour_study
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix

    out = []
    with tempfile.TemporaryDirectory() as d:
        tiny_matrix(Path(d) / MATRICES["bbh"])
        for sc in ("random", "cross"):
            res = neighbour_study(d, "bbh", sc, n_targets=3, n_runs=2, budgets=BUDGETS,
                                  seed=1, log=False)
            out += [res[k] for k in sorted(res) if k != "meta"]
            out.append(res["meta"][:4])  # rank, history rows, runs, eps (not the seconds)
    return Probe.of("history_neighbours", *out)


@functools.cache
def _probe() -> Probe:
    return behaviour_probe()


def cache_key(a: argparse.Namespace) -> str:
    """The cache key: the matrix file's content, the run parameters and the stored
    behaviour probe of ``a.cache`` that today's matches
    (:func:`activetest.experiments.probe.probe_id`; see :mod:`activetest.experiments.cache`)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES

    h = hashlib.sha256(f"{a.matrix}:{a.scenario}:{a.targets}:{a.runs}:{a.budgets}:{a.seed}"
                       .encode())
    h.update(file_fingerprint(Path(a.root) / MATRICES[a.matrix]).encode())
    h.update(probe_id(a.cache, _probe()).encode())
    return h.hexdigest()[:20]


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    from activetest.experiments.cache import cached_npz, study_parser

    a = study_parser("python -m activetest.experiments.history_neighbours",
                     scenario="random", runs=30).parse_args(argv)
    f = Path(a.cache) / f"history-neighbours-{a.matrix}-{a.scenario}-{cache_key(a)}.npz"
    res = cached_npz(f, lambda: neighbour_study(
        a.root, a.matrix, a.scenario, n_targets=a.targets, n_runs=a.runs,
        budgets=tuple(a.budgets), seed=a.seed), probe=_probe())
    print(render(a.matrix, a.scenario, res))


if __name__ == "__main__":
    main()
