"""The paper's PE acquisition as a baseline on the history experiment's held-out models.

``nice -n 10 python -m activetest.experiments.history_pe --matrix M --scenario S``

Issue 21 item 4 asks for the paper's PE acquisition beside the other baselines. The
paper's PE (predictive entropy, ../shared/paper/METHOD.md) draws items with probability
proportional to the surrogate's predictive entropy, mixed with the uniform (proposal
floor 0.1), and estimates by LURE. Here the surrogate of the target's correctness is the
history alone (label-free): the shrunk item difficulty ``p`` of
:func:`activetest.stats.feature_design.history_features`, so the acquisition is the
Bernoulli entropy ``-p log p - (1 - p) log(1 - p)`` (static: no refits). Same held-out
models, same history (rows identical to the target's dropped) and the same relative
squared error (mean squared error over runs / uniform's exact one) as
:mod:`activetest.experiments.history`; its own cache file (``history-pe-*.npz``, keyed by
the data, the parameters and :func:`behaviour_probe`).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
from pathlib import Path

import numpy as np

from activetest.experiments.probe import Probe, probe_id

__all__ = ["behaviour_probe", "pe_study", "render"]


def pe_study(M: object, scenario: str, *, n_targets: int = 30, n_runs: int = 1000,
             budgets: tuple[int, ...] = (25, 50, 100, 200, 400), seed: int = 0,
             proposal_floor: float = 0.1) -> dict[str, np.ndarray]:
    """``rel``: ``(T, B)`` relative squared error of PE + LURE; ``budgets``, ``accuracy``,
    ``meta`` (history rows, runs, seconds)."""
    from activetest.experiments.history import _targets
    from activetest.stats.estimators import lure_curve
    from activetest.stats.feature_design import history_features
    from activetest.stats.sampler import sample

    t0 = time.time()
    S = M.scores  # type: ignore[attr-defined]
    N = S.shape[1]
    bud = np.array([b for b in budgets if b < N])
    targets, hist = _targets(M, scenario, n_targets, seed)  # type: ignore[arg-type]
    H = S[hist]
    rel = np.zeros((len(targets), bud.size))
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        p = np.clip(history_features(H[~same], rank=0).p_correct, 1e-12, 1 - 1e-12)
        ent = -(p * np.log(p) + (1 - p) * np.log(1 - p))
        idx, q = sample(ent, int(bud.max()), n_runs=n_runs, proposal_floor=proposal_floor,
                        random_state=seed + 1000 * t)
        est = lure_curve(L[idx], q, N)[:, bud - 1]
        uvar = L.var() * N / (N - 1) / bud * (N - bud) / N
        rel[t] = ((est - L.mean()) ** 2).mean(axis=0) / uvar
    return {"rel": rel, "budgets": bud, "accuracy": S[targets].mean(axis=1),
            "meta": np.array([int(hist.sum()), n_runs, time.time() - t0])}


def behaviour_probe() -> Probe:
    """:func:`pe_study` on both scenarios of the tiny matrix
    (:mod:`activetest.experiments.probe`), a few of its items made ones every model gets
    wrong or right (their entropy is small: the proposal floor acts, as on the shared
    matrices)."""
    import dataclasses
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import MATRICES
    from activetest.experiments.history_pe import pe_study
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix
    from activetest.formats.history import read_response_matrix

    with tempfile.TemporaryDirectory() as d:
        M = read_response_matrix(tiny_matrix(Path(d) / MATRICES["bbh"]))
    S = M.scores.copy()
    S[:, :6] = 0.0
    S[:, 6:9] = 1.0
    M = dataclasses.replace(M, scores=S)
    out = []
    for sc in ("random", "cross"):
        r = pe_study(M, sc, n_targets=3, n_runs=3, budgets=BUDGETS, seed=1)
        out += [r["rel"], r["budgets"], r["accuracy"], r["meta"][:2]]
    return Probe.of("history_pe", *out)


@functools.cache
def _probe() -> Probe:
    return behaviour_probe()


def cache_key(a: argparse.Namespace) -> str:
    """The data file's content, the parameters and the stored behaviour probe of
    ``a.cache`` that today's matches (:func:`activetest.experiments.probe.probe_id`)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES

    h = hashlib.sha256(f"{a.matrix}:{a.scenario}:{a.targets}:{a.runs}:{a.budgets}:{a.seed}"
                       .encode())
    h.update(file_fingerprint(Path(a.root) / MATRICES[a.matrix]).encode())
    h.update(probe_id(a.cache, _probe()).encode())
    return h.hexdigest()[:20]


def render(matrix: str, scenario: str, res: dict[str, np.ndarray]) -> str:
    """One markdown row per budget group: median (share above 1; worst)."""
    bud, rel = res["budgets"], res["rel"]
    n_hist, runs, secs = res["meta"]
    return (f"{matrix}, {scenario}: {rel.shape[0]} held-out models, {int(n_hist)} history "
            f"models, {int(runs)} runs per model ({secs:.0f} s). PE + LURE, median relative "
            "squared error (share of models above 1; worst): "
            + ", ".join(f"M = {b}: {np.median(rel[:, i]):.2f} ({(rel[:, i] > 1).mean():.0%}; "
                        f"{rel[:, i].max():.2f})" for i, b in enumerate(bud)) + ".")


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    from activetest.experiments.cache import cached_npz, study_parser
    from activetest.experiments.history import MATRICES
    from activetest.formats.history import read_response_matrix

    a = study_parser("python -m activetest.experiments.history_pe", scenario="cross",
                     runs=1000).parse_args(argv)
    f = Path(a.cache) / f"history-pe-{a.matrix}-{a.scenario}-{cache_key(a)}.npz"
    res = cached_npz(f, lambda: pe_study(
        read_response_matrix(Path(a.root) / MATRICES[a.matrix]), a.scenario,
        n_targets=a.targets, n_runs=a.runs, budgets=tuple(a.budgets), seed=a.seed),
        probe=_probe())
    print(render(a.matrix, a.scenario, res))


if __name__ == "__main__":
    main()
