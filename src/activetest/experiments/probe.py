"""Behaviour probes: what the experiments' result caches are keyed on.

A cached result is valid as long as the code that produced it would produce the same
numbers. Hashing the code's *source* (the old rule) made every refactor that changes
no number (a shared constructor, a renamed argument) invalidate hours of cached
simulation. A probe instead runs the experiment's own code paths -- the same
functions, designs, estimators, intervals and baselines, every variant the experiment
uses -- on a tiny seeded problem and hashes the numbers that come out (estimates,
relative errors, coverages, chosen ranks). The cache key is that digest plus the
experiment's parameters and a fingerprint of its data:

* a refactor that changes no number keeps the key (the cache stays valid);
* any change of a number the experiment uses changes the probe's numbers, hence the
  key (the entry is recomputed), provided the probe exercises that code: each probe
  below runs every variant of its experiment (tests/experiments/test_probe.py changes a
  parameter of each variant and checks the key moves).

Numbers are hashed after rounding to :data:`DIGITS` significant digits, so a change in
the last bits of a float (another BLAS, a summation order) does not throw away a
cache whose rendered tables (2-3 digits) it cannot change.

The probes of the history experiment and the guard study are their modules'
``behaviour_probe`` (this module holds the shared pieces and the reproduction's
:func:`designs_probe`; it imports no experiment at module level, so there is no import
circle). They only call functions that also existed in the experiments' earlier
versions (``run_scenario``, ``guard_study``, ``run_setting``), so they can be run
against an old checkout to show that a cached file was produced by code whose behaviour
equals today's: ``python -m activetest.experiments.rekey`` does that.

Each probe takes well under a second.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import numpy as np

__all__ = ["BUDGETS", "DIGITS", "designs_probe", "digest", "tiny_matrix"]

#: Significant digits kept of every probed number before hashing.
DIGITS = 10
#: Budgets of the tiny runs.
BUDGETS = (5, 10, 20)


def digest(*arrays: object, digits: int = DIGITS) -> str:
    """Hash of numbers rounded to ``digits`` (:data:`DIGITS`) significant digits (NaN
    and inf kept)."""
    h = hashlib.sha256()
    for a in arrays:
        x = np.asarray(a, dtype=np.float64).ravel()
        h.update(f"{x.size}:".encode())
        h.update(",".join(f"{v:.{digits}g}" for v in x).encode())
        h.update(b"|")
    return h.hexdigest()[:16]


def tiny_matrix(path: Path) -> Path:
    """Write a 60-model x 40-item response matrix with item structure (two factors; the
    rank choice picks factors) to ``path``; every fourth row twice (a target's identical
    row is dropped from its history)."""
    rng = np.random.default_rng(20261202)
    H, N = 60, 40
    ability = rng.normal(0, 1.2, (H, 1))
    load = rng.normal(0, 1, (H, 2))
    diff = rng.normal(0, 1, (1, N))
    fac = rng.normal(0, 2.5, (2, N))
    p = 1 / (1 + np.exp(-(ability - diff + load @ fac)))
    S = (rng.random((H, N)) < p).astype(float)
    S[1::4] = S[0::4]
    lines = ["model," + ",".join(f"i{j}" for j in range(N))]
    lines += [f"m{i}," + ",".join(f"{v:g}" for v in row) for i, row in enumerate(S)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _tiny_outputs() -> object:
    """A tiny two-model, two-class dataset: zero- and few-shot targets (the zero-shot
    one is charged its shots), a pool of 60 and a test set of 40."""
    from activetest.experiments.outputs import DatasetOutputs, ModelOutputs

    rng = np.random.default_rng(7)
    Np, Nt, C = 60, 40, 2
    yp, yt = rng.integers(0, C, Np), rng.integers(0, C, Nt)
    outs = {}
    for k, name in enumerate(("a/zero", "a/few", "b/few")):
        def lp(y: np.ndarray, k: int = k) -> np.ndarray:
            z = rng.normal(0, 1 + k, (y.size, C))
            z[np.arange(y.size), y] += 0.8 + 0.3 * k
            return z - np.logaddexp.reduce(z, axis=1, keepdims=True)
        outs[name] = ModelOutputs(lp(yp), lp(yt))
    return DatasetOutputs("probe", np.arange(Np), np.arange(Np, Np + Nt),
                          np.arange(Np + Nt, Np + Nt + 3), yp, yt, 3, outs)


@cache
def designs_probe() -> str:
    """:func:`activetest.experiments.paper.run_setting` with the reproduction's design rows
    (``DESIGN_METHODS`` on the log loss, the error-rate rows on the 0-1 loss) and the
    uniform baseline they are divided by, on a zero-shot and a few-shot target."""
    from activetest.experiments.paper import DESIGN_METHODS, Setting, run_setting

    error_methods = ("adaptive+cv_lure", "fixed_mix+cv_lure")  # reproduce.ERROR_METHODS
    data = _tiny_outputs()
    out = []
    for target in ("a/zero", "a/few"):
        s = Setting("probe", target, "b/few")
        for methods, loss in ((DESIGN_METHODS, "log"), (error_methods, "zero_one")):
            r = run_setting(data, s, n_runs=3, budget=15, random_state=1,
                            methods=("uniform+mean", *methods), loss=loss)
            out += [[r.offset, r.truth]] + [r.relative[m] for m in ("uniform+mean", *methods)]
    return digest(*out)


if __name__ == "__main__":  # PYTHONPATH=<a checkout's src> python probe.py
    print(designs_probe())
