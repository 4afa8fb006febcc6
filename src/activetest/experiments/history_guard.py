"""The feature design with and without its guard, on the same held-out models and seeds.

``python -m activetest.experiments.history_guard --matrix bbh --scenario cross``

The guard is the earned in-run rule of :mod:`activetest.stats.adaptive` passed to
:func:`activetest.stats.feature_design.feature_design` (``rule="earned"``): at every
refit, uniform draws with a constant control (the importance-weighted mean of the labels
seen) are a candidate beside the lambda grid, chosen when their importance-weighted
estimate of the next draw's variance is no larger than the fitted model's best. Variants:

* ``original``: no guard (the rule of sessions before the guard);
* ``earned``: the earned rule as the classification designs run it (also its smoothed
  scores, ``a = 4`` pseudo-labels);
* ``fallback``: only the uniform fallback (rule parameters ``(1, 0, 1, 0)``).

Out-of-sample guard variants (``--variants``; the rule ``"guard"`` of
:mod:`activetest.stats._guard_kernels`, prior start kept):

* ``guard``: the fallback when the out-of-sample record over every past label says the
  model is worse by z = 1 standard errors, lambda chosen in-sample as the original rule;
* ``guard z=0``: the fallback as soon as its out-of-sample record is the better one;
* ``guard oos-lambda``: also the model's lambda chosen by the out-of-sample record;
* ``guard oos-lambda z=0``: both.
* ``guard oos-lambda recent``: lambda and the fallback scored on the later half of the
  labels only (the model improves as labels arrive; its early record is a weaker one's):
  the rule ``"guard"``'s own parameters (``GUARD_PARAMS``).
* ``guard oos-lambda 3/4``: the same over the later three quarters of the labels.

Held-out models and history as in :mod:`activetest.experiments.history` (same target
choice, same rank choice); per model R runs of each variant, each variant with the
same seeds; the relative squared error is the mean squared error over runs divided by
uniform sampling's exact one. Outputs are cached (``--cache``) by a key of the inputs
and the behaviour probe (:mod:`activetest.experiments.cache`).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
from pathlib import Path

import numpy as np

from activetest.experiments.probe import Probe, probe_id

__all__ = ["GUARD_VARIANTS", "VARIANTS", "behaviour_probe", "cache_key", "guard_study", "main",
           "render"]

#: Variant name -> keyword arguments of ``feature_design``.
VARIANTS = {"original": {}, "earned": {"rule": "earned"},
            "fallback": {"rule": "earned", "rule_params": (1.0, 0.0, 1.0, 0.0)}}
#: The out-of-sample guard's variants (module docstring); not in the default run, so the
#: default tables keep their cache keys.
GUARD_VARIANTS = {
    "guard": {"rule": "guard", "rule_params": (0, 0, 0, 0, 1, 1.0, 1.0, 5, 0)},
    "guard z=0": {"rule": "guard", "rule_params": (0, 0, 0, 0, 1, 0.0, 1.0, 5, 0)},
    "guard oos-lambda": {"rule": "guard", "rule_params": (0, 0, 0, 0, 1, 1.0, 1.0, 5, 1)},
    "guard oos-lambda z=0": {"rule": "guard", "rule_params": (0, 0, 0, 0, 1, 0.0, 1.0, 5, 1)},
    "guard oos-lambda recent": {"rule": "guard",
                                "rule_params": (0, 0, 0, 0, 1, 1.0, 0.5, 5, 1)},
    "guard oos-lambda 3/4": {"rule": "guard", "rule_params": (0, 0, 0, 0, 1, 1.0, 0.75, 5, 1)}}


def _variant(name: str) -> dict:
    if name in VARIANTS:
        return VARIANTS[name]
    if name in GUARD_VARIANTS:
        return GUARD_VARIANTS[name]
    raise ValueError(f"unknown variant {name!r}; expected one of "
                     f"{', '.join([*VARIANTS, *GUARD_VARIANTS])}")


def guard_study(root: str | Path, matrix: str, scenario: str, *, n_targets: int = 30,
                n_runs: int = 30, budgets: tuple[int, ...] = (25, 50, 100, 200, 400),
                seed: int = 0, log: bool = True,
                variants: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """``{variant: (T, B) relative squared error}`` plus ``budgets`` and ``accuracy``;
    ``variants``: names of :data:`VARIANTS` or :data:`GUARD_VARIANTS` (default the former)."""
    from activetest.experiments.history import MATRICES, _targets
    from activetest.formats.history import read_response_matrix
    from activetest.stats.adaptive import simulate_design
    from activetest.stats.feature_design import feature_design, history_features

    t0 = time.time()
    M = read_response_matrix(Path(root) / MATRICES[matrix])
    S = M.scores
    N = S.shape[1]
    bud = np.array([b for b in budgets if b < N])
    targets, hist = _targets(M, scenario, n_targets, seed)
    H = S[hist]
    hf = history_features(H, random_state=seed)
    chosen = {v: _variant(v) for v in (tuple(VARIANTS) if variants is None else variants)}
    out = {v: np.zeros((len(targets), bud.size)) for v in chosen}
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        truth = L.mean()
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        h = hf if not same.any() else history_features(H[~same], rank=hf.rank)
        uvar = L.var() * N / (N - 1) / bud * (N - bud) / N
        for v, kw in chosen.items():
            runs = simulate_design(feature_design(history=h, **kw), losses=L, labels=None,
                                   budget=int(bud.max()), n_runs=n_runs,
                                   random_state=seed + 1000 * t)
            est = runs.curve(L)[:, bud - 1]
            out[v][t] = ((est - truth) ** 2).mean(axis=0) / uvar
        if log:
            print(f"  {matrix} {scenario} target {t + 1}/{len(targets)} "
                  f"({time.time() - t0:.0f} s)", flush=True)
    out["budgets"] = bud
    out["accuracy"] = S[targets].mean(axis=1)
    out["meta"] = np.array([hf.rank, int(hist.sum()), n_runs, time.time() - t0])
    return out


def render(matrix: str, scenario: str, res: dict[str, np.ndarray]) -> str:
    """A markdown table: per variant and budget the median over held-out models, the
    worst model and how many exceed 1.05."""
    bud = res["budgets"]
    names = [v for v in res if v not in ("budgets", "accuracy", "meta")]
    T = res[names[0]].shape[0]
    rank, n_hist, runs, secs = res["meta"]
    lines = [f"{matrix}, {scenario}: {T} held-out models, {int(n_hist)} history models, "
             f"rank {int(rank)}, {int(runs)} runs per model and variant ({secs:.0f} s). "
             "Median relative squared error (worst model; models above 1.05):", "",
             "| variant | " + " | ".join(f"M = {b}" for b in bud)
             + " | models above 1.05 at some budget |", "|---|" + "---|" * (bud.size + 1)]
    for v in names:
        r = res[v]
        cells = [f"{np.median(r[:, b]):.2f} ({r[:, b].max():.2f}; {(r[:, b] > 1.05).sum()})"
                 for b in range(bud.size)]
        lines.append(f"| {v} | " + " | ".join(cells)
                     + f" | {(r > 1.05).any(axis=1).sum()} of {T} |")
    return "\n".join(lines)


def behaviour_probe(variants: tuple[str, ...] | None = None) -> Probe:
    """The guard study's behaviour probe (:mod:`activetest.experiments.probe`):
    :func:`guard_study` (every variant run: ``variants``, default :data:`VARIANTS`) on
    both scenarios of a tiny matrix.
    Self-contained (its imports inside), so that the re-keying tool can run it against
    an old checkout."""
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import MATRICES
    from activetest.experiments.history_guard import guard_study
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix

    out = []
    with tempfile.TemporaryDirectory() as d:
        tiny_matrix(Path(d) / MATRICES["bbh"])
        for sc in ("random", "cross"):
            kw = {} if variants is None else {"variants": variants}
            res = guard_study(d, "bbh", sc, n_targets=3, n_runs=2, budgets=BUDGETS, seed=1,
                              log=False, **kw)
            out += [res[k] for k in sorted(res) if k != "meta"]
            out.append(res["meta"][:3])  # rank, history rows, runs (not the seconds)
    return Probe.of("history_guard" if variants is None else f"history_guard:{','.join(variants)}",
                    *out)


@functools.cache
def _probe(variants: tuple[str, ...] | None = None) -> Probe:
    return behaviour_probe(variants)


def cache_key(a: argparse.Namespace) -> str:
    """The cache key: the matrix file's content, the run parameters and the stored
    behaviour probe of ``a.cache`` that today's matches (:func:`behaviour_probe`,
    :func:`activetest.experiments.probe.probe_id`; see :mod:`activetest.experiments.cache`)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES

    variants = getattr(a, "variants", None)
    variants = None if not variants or tuple(variants) == tuple(VARIANTS) else tuple(variants)
    # the default variants' key is what it was before --variants existed
    h = hashlib.sha256(f"{a.matrix}:{a.scenario}:{a.targets}:{a.runs}:{a.budgets}:{a.seed}"
                       f"{'' if variants is None else ':' + ','.join(variants)}".encode())
    h.update(file_fingerprint(Path(a.root) / MATRICES[a.matrix]).encode())
    h.update(probe_id(a.cache, _probe(variants)).encode())
    return h.hexdigest()[:20]


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    from activetest.experiments.cache import cached_npz, study_parser

    p = study_parser("python -m activetest.experiments.history_guard", scenario="cross",
                     runs=30)
    p.add_argument("--variants", nargs="*", default=None,
                   help=f"default {' '.join(VARIANTS)}; also: {', '.join(GUARD_VARIANTS)}")
    a = p.parse_args(argv)
    f = Path(a.cache) / f"history-guard-{a.matrix}-{a.scenario}-{cache_key(a)}.npz"
    res = cached_npz(f, lambda: guard_study(
        a.root, a.matrix, a.scenario, n_targets=a.targets, n_runs=a.runs,
        budgets=tuple(a.budgets), seed=a.seed,
        variants=None if a.variants is None else tuple(a.variants)),
        probe=_probe(None if not a.variants or tuple(a.variants) == tuple(VARIANTS)
                     else tuple(a.variants)))
    print(render(a.matrix, a.scenario, res))


if __name__ == "__main__":
    main()
