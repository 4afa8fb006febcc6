"""A results cache for the slow rows of the reproduction (the adaptive designs).

Simulating the adaptive designs for every setting takes most of an hour; their
summaries (median squared error at every budget) are small. Each entry is keyed
by a hash of everything that determines it: the arrays simulated (pool outputs,
labels, truth), the run parameters, and the *code* of the statistics modules
that produce it (their syntax trees without docstrings, so editing a comment or
a docstring keeps the cache, editing the code invalidates it). The cache is one
compressed ``.npz``; a stale or missing entry is simply recomputed.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
from pathlib import Path
from types import ModuleType

import numpy as np

__all__ = ["ResultCache", "code_fingerprint", "source_fingerprint"]


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
    """:func:`source_fingerprint` of the modules' source files."""
    return source_fingerprint(*(inspect.getsource(m) for m in modules))


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
