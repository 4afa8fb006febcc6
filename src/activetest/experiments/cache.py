"""Results caches of the slow experiments, and the rule they are keyed by.

Simulating the adaptive designs for every setting of the reproduction takes most of
an hour, the history experiment's tables hours; their summaries are small. Each
cached result is keyed by a hash of everything that determines it:

* the data (the arrays simulated, or the data file's content: :func:`file_fingerprint`);
* the run parameters (runs, budgets, seeds, targets, methods);
* the **behaviour** of the code, not its source: the experiment's behaviour probe
  (:mod:`activetest.experiments.probe`) runs the experiment's own code paths, every
  variant it uses, on a tiny seeded problem; the key holds the id of the probe stored in
  the cache folder's ``probes/`` that today's numbers match within a relative 1e-6
  (:func:`activetest.experiments.probe.probe_id`). A refactor that changes no number,
  or another CPU that changes only the last digits, keeps every key (the cache stays
  valid); a change of any number the experiment uses beyond that changes the key (the
  entry is recomputed).

Until 2026-12-02 the keys hashed the statistics modules' source
(:func:`code_fingerprint`, kept for the re-keying tool), so any refactor made the
caches stale. ``python -m activetest.experiments.rekey`` moves a cached result made
under that rule to today's key only after showing that the commit that produced it
gives a probe that matches today's (run against a checkout of that commit); otherwise the
file stays stale and is recomputed. A stale or missing entry is simply recomputed.
Until 2026-12-05 the probe's numbers were hashed, rounded to 10 digits, into the key, which
the last digits could flip on another CPU; the committed entries kept their keys, their
probes stored under those digests (:mod:`activetest.experiments.probe`).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from activetest.experiments.probe import Probe, probe_id

__all__ = ["ResultCache", "cached_npz", "code_fingerprint", "file_fingerprint",
           "source_fingerprint", "study_parser"]


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body[0] = ast.Pass()
    return tree


def source_fingerprint(*sources: str) -> str:
    """Hash of Python sources' syntax trees without docstrings (comments and layout vanish too)."""
    h = hashlib.sha256()
    for src in sources:
        h.update(ast.dump(_strip_docstrings(ast.parse(src))).encode())
    return h.hexdigest()[:16]


def code_fingerprint(*modules: ModuleType) -> str:
    """:func:`source_fingerprint` of the modules' source files (the old keys' rule)."""
    return source_fingerprint(*(inspect.getsource(m) for m in modules))


def file_fingerprint(path: str | Path) -> str:
    """Hash of a data file's bytes (its size and name alone would miss an edit)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


class ResultCache:
    """``key -> {name: array}`` stored in one ``.npz`` (``path=None``: memory only)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self._data: dict[str, np.ndarray] = {}
        self._dirty = False
        self._read: set[str] = set()
        self.hits = 0
        self.misses = 0
        if self.path is not None and self.path.exists():
            with np.load(self.path, allow_pickle=False) as z:
                self._data = {k: z[k] for k in z.files}

    @staticmethod
    def key(*parts: object) -> str:
        """A hash of the parts (arrays by their bytes, shape and dtype; others by repr)."""
        h = hashlib.sha256()
        for p in parts:
            if isinstance(p, np.ndarray):
                a = np.ascontiguousarray(p)
                h.update(f"{a.dtype}{a.shape}".encode())
                h.update(a.tobytes())
            else:
                h.update(repr(p).encode())
            h.update(b"|")
        return h.hexdigest()[:24]

    def get(self, key: str, names: list[str]) -> dict[str, np.ndarray] | None:
        """The entry's arrays, or None when any is missing."""
        out = {}
        for n in names:
            arr = self._data.get(f"{key}|{n}")
            if arr is None:
                self.misses += 1
                return None
            out[n] = arr.astype(np.float64)
        self._read.update(f"{key}|{n}" for n in names)
        self.hits += 1
        return out

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Store (float32 suffices for error summaries) and mark for saving."""
        for n, a in arrays.items():
            self._data[f"{key}|{n}"] = np.asarray(a, dtype=np.float32)
            self._read.add(f"{key}|{n}")
        self._dirty = True

    def clear(self) -> None:
        """Forget every entry (they are recomputed and stored again)."""
        self._data = {}
        self._dirty = True

    def prune(self, keep: set[str]) -> None:
        """Drop entries whose key is not in ``keep``, and arrays nobody read (after a full run)."""
        before = len(self._data)
        self._data = {k: v for k, v in self._data.items()
                      if k.split("|", 1)[0] in keep and k in self._read}
        self._dirty |= len(self._data) != before

    def save(self) -> None:
        """Write atomically if anything changed."""
        if self.path is None or not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **self._data)
        tmp.replace(self.path)
        self._dirty = False


def study_parser(prog: str, *, scenario: str, runs: int,
                 budgets: tuple[int, ...] = (25, 50, 100, 200, 400)) -> argparse.ArgumentParser:
    """The command line the history studies share (``--root --matrix --scenario --targets
    --runs --budgets --seed --cache``; a study adds its own options to it)."""
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--root", default="../shared/datasets/history",
                   help="the response matrices' folder (default: %(default)s)")
    p.add_argument("--matrix", default="bbh", help="bbh or mmlu_pro_math (default: %(default)s)")
    p.add_argument("--scenario", default=scenario,
                   help="random or cross (held-out models; default: %(default)s)")
    p.add_argument("--targets", type=int, default=30,
                   help="held-out models (default: %(default)s)")
    p.add_argument("--runs", type=int, default=runs,
                   help="runs per held-out model (a block's; default: %(default)s)")
    p.add_argument("--budgets", type=int, nargs="*", default=list(budgets),
                   help="label budgets (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    p.add_argument("--cache", default="experiments/cache",
                   help="cached blocks' folder (default: %(default)s)")
    return p


def cached_npz(path: str | Path, compute: Callable[[], dict[str, np.ndarray]],
               probe: Probe | None = None) -> dict[str, np.ndarray]:
    """A study's result from ``path`` (a ``.npz``) if it is there, else ``compute()``,
    written to ``path`` (through a temporary file, so a killed run leaves no half file).
    ``probe``: the behaviour probe ``path``'s key names, stored beside it (in
    ``probes/`` of its folder, :func:`activetest.experiments.probe.probe_id`) with the
    result when no stored probe matches it yet."""
    f = Path(path)
    if f.exists():
        with np.load(f, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    res = compute()
    if probe is not None:
        probe_id(f.parent, probe, store=True)
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **res)
    tmp.replace(f)
    return res
