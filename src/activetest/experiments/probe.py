"""Behaviour probes: what the experiments' result caches are keyed on.

A cached result is valid as long as the code that produced it would produce the same
numbers. Hashing the code's *source* (the old rule) made every refactor that changes
no number (a shared constructor, a renamed argument) invalidate hours of cached
simulation. A probe instead runs the experiment's own code paths -- the same
functions, designs, estimators, intervals and baselines, every variant the experiment
uses -- on a tiny seeded problem and keeps the numbers that come out (estimates,
relative errors, coverages, chosen ranks): a :class:`Probe`. The cache key is the
experiment's parameters, a fingerprint of its data and the id of the *stored* probe
that today's matches (:func:`probe_id`):

* a refactor that changes no number keeps the key (the cache stays valid);
* any change of a number the experiment uses beyond :data:`PROBE_RTOL` (relative) moves
  the probe off every stored one, hence the key (the entry is recomputed), provided the
  probe exercises that code: each probe below runs every variant of its experiment
  (tests/experiments/test_probe.py changes a parameter of each variant and checks the
  key moves);
* the last digits, which differ between CPUs, BLAS kernels and thread counts, never
  decide a hit: a probe is stored once per behaviour, at full precision, in the cache
  folder's ``probes/`` (``{id}.json``), and compared with a tolerance (:meth:`Probe.matches`),
  never hashed. An entry computed on a CPU whose probe matches a stored one is keyed by
  that stored probe's id (one probe file per behaviour, not per CPU).

Until 2026-12-05 the key hashed the probe's numbers rounded to :data:`DIGITS` (10)
significant digits. That was CPU-fragile (measured on an Intel Xeon, numpy's OpenBLAS
0.3.31 with its kernels switched by ``OPENBLAS_CORETYPE``): the history experiments'
probes agree only to 12-13 digits between kernels (Haswell/Zen against SkylakeX: up to
2.5e-13 relative; Nehalem: up to 1e-12) while some of their numbers lie within 2e-14 of
a 10-digit rounding edge, and under the Nehalem kernel the history experiment's 10-digit
digest changed, so every one of its cached files would have missed and been recomputed
(the reproduction's and the signals study's probes came out bit-identical under every
kernel; thread counts 1 and 2 changed no bit of any probe). The same rule had made
benchmarks/harness_runs.py's cache miss on every other CPU (QA, 2026-12-05), which now
shares :class:`Probe` and :func:`probe_id`. The committed entries kept their keys: the
probes they were keyed by are stored under their former digests (each such digest
reproduced here from today's code, and every committed entry found by today's keys:
tests/experiments/test_probe.py, tests/experiments/test_signals.py).

The probes of the history experiment and its studies are their modules'
``behaviour_probe`` (this module holds the shared pieces and the reproduction's
:func:`designs_probe`; it imports no experiment at module level, so there is no import
circle). Some only call functions that also existed in the experiments' earlier
versions (``run_scenario``, ``guard_study``, ``run_setting``), so they can be run
against an old checkout to show that a cached file was produced by code whose behaviour
equals today's: ``python -m activetest.experiments.rekey`` does that.

Each probe takes well under a second.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

__all__ = ["BUDGETS", "DIGITS", "PROBE_ATOL", "PROBE_RTOL", "Probe", "designs_probe", "digest",
           "probe_id", "stored_probe", "tiny_matrix"]

#: Significant digits the former rule kept of every probed number before hashing; kept to
#: recognise keys made by it (:meth:`Probe.digest`).
DIGITS = 10
#: Budgets of the tiny runs.
BUDGETS = (5, 10, 20)
#: The probes' tolerance: a stored probe stands for today's when every number of it is
#: within ``PROBE_RTOL`` (relative) of today's, or within ``PROBE_ATOL`` for numbers that
#: are zero up to rounding (:meth:`Probe.matches`). Far above the differences between CPUs
#: (measured: 1e-12 here, the 8th-10th digit for benchmarks/harness_runs.py's refitted
#: designs), far below what a rendered table shows (2-3 digits).
PROBE_RTOL = 1e-6
PROBE_ATOL = 1e-12


def digest(*arrays: object, digits: int = DIGITS) -> str:
    """Hash of numbers rounded to ``digits`` (:data:`DIGITS`) significant digits (NaN
    and inf kept): the former key rule, kept to recognise its keys."""
    h = hashlib.sha256()
    for a in arrays:
        x = np.asarray(a, dtype=np.float64).ravel()
        h.update(f"{x.size}:".encode())
        h.update(",".join(f"{v:.{digits}g}" for v in x).encode())
        h.update(b"|")
    return h.hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class Probe:
    """What a probe computes, at full precision: stored beside the cache entries keyed by
    it (``probes/{id}.json`` in the cache folder) and compared with a tolerance
    (:meth:`matches`), never hashed.

    Attributes:
        name: what was probed (an experiment's probe, or benchmarks/harness_runs.py's
            history design); probes of different names never match.
        sizes: the size of each probed array, in order.
        values: every probed number, the arrays one after another.
    """

    name: str
    sizes: tuple[int, ...]
    values: tuple[float, ...]

    @classmethod
    def of(cls, name: str, *arrays: object) -> Probe:
        """The probe of these arrays (each flattened, as float64)."""
        flat = [np.asarray(a, dtype=np.float64).ravel() for a in arrays]
        return cls(name, tuple(a.size for a in flat), tuple(float(v) for a in flat for v in a))

    def arrays(self) -> list[np.ndarray]:
        """The probed arrays, flattened."""
        v = np.asarray(self.values, dtype=np.float64)
        return [v[a:b] for a, b in itertools.pairwise(np.cumsum((0, *self.sizes)))]

    @property
    def id(self) -> str:
        """A name for this probe's file when it is first stored (a hash of its exact
        numbers: a probe computed on another CPU gets another id, though it may match)."""
        h = hashlib.sha256(f"{self.name}:{self.sizes}".encode())
        h.update(np.asarray(self.values, dtype=np.float64).tobytes())
        return h.hexdigest()[:16]

    def digest(self, digits: int = DIGITS) -> str:
        """The former rule's key part: the arrays' :func:`digest` at ``digits``."""
        return digest(*self.arrays(), digits=digits)

    def matches(self, other: Probe) -> bool:
        """The same name and arrays, every number within :data:`PROBE_RTOL` (relative) or
        :data:`PROBE_ATOL` of the other's (NaN matching NaN)."""
        return (self.name == other.name and self.sizes == other.sizes
                and bool(np.allclose(self.values, other.values, rtol=PROBE_RTOL,
                                     atol=PROBE_ATOL, equal_nan=True)))

    def __eq__(self, other: object) -> bool:
        """Exactly the same numbers (NaN equal to NaN): the same computation on the same
        machine. Whether a cache entry is valid is :meth:`matches`."""
        if not isinstance(other, Probe):
            return NotImplemented
        return (self.name == other.name and self.sizes == other.sizes
                and np.array_equal(self.values, other.values, equal_nan=True))

    def __hash__(self) -> int:
        """Hash of :attr:`id` (consistent with ``==``)."""
        return hash(self.id)

    def to_json(self) -> str:
        """The probe as JSON (every number exactly: Python's shortest round-trip repr)."""
        return json.dumps({"name": self.name, "sizes": list(self.sizes),
                           "values": list(self.values)})

    @classmethod
    def from_json(cls, text: str) -> Probe:
        """The probe :meth:`to_json` wrote (``design`` for ``name``: the files
        benchmarks/harness_runs.py wrote first)."""
        d = json.loads(text)
        return cls(str(d["name"] if "name" in d else d["design"]),
                   tuple(int(n) for n in d["sizes"]), tuple(float(v) for v in d["values"]))


def stored_probe(path: Path) -> Probe | None:
    """A stored probe file (None: missing or unreadable, e.g. half written)."""
    try:
        return Probe.from_json(Path(path).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None


def probe_id(cache: str | Path | None, today: Probe, *, store: bool = False) -> str:
    """What a cache key holds for the code's behaviour: the id of the first stored probe
    (``cache/probes/*.json``, by name) that matches ``today``, else ``today``'s own
    :attr:`Probe.id` (``store``: then written there, as when an entry computed under it
    is stored). ``cache=None`` (a cache kept in memory): ``today``'s own id."""
    if cache is None:
        return today.id
    folder = Path(cache) / "probes"
    for f in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        stored = stored_probe(f)
        if stored is not None and stored.matches(today):
            return f.stem
    if store:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"{today.id}.tmp"
        tmp.write_text(today.to_json() + "\n")
        tmp.replace(folder / f"{today.id}.json")
    return today.id


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
def designs_probe() -> Probe:
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
    return Probe.of("designs", *out)


if __name__ == "__main__":  # PYTHONPATH=<a checkout's src> python probe.py
    print(designs_probe().to_json())
