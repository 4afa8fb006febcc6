"""Compiled kernel for many-run sampling (numba), with per-run O(M log N) cost.

Each run walks a segment tree over the sorted scores holding, per node, the raw
score mass and the count of remaining items below it. Removing an item zeroes
its leaf and recomputes its ancestors *from their children* (never by
subtraction), so every stored mass is an exact-as-floats sum of the remaining
scores: removing a huge score causes no cancellation. After a run the removed
leaves are restored the same way, so the tree is built once for all runs.

The draw convention (one uniform per step, CDF inverted in ascending score
order) matches :func:`activetest.stats.proposal.reference_sample`.
"""

from __future__ import annotations

import importlib.util
import threading
import types
from collections.abc import Callable
from typing import Any

import numpy as np

#: numba is a declared dependency; the numpy/Python path remains if it is unusable.
#: Found without importing it: numba (~0.3 CPU-s) is imported when a kernel first runs,
#: so a command that runs none (``status``, ``import``) never pays for it.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_lock = threading.Lock()


class _NoScipyLinalg:
    """An import hook refusing ``scipy.linalg`` (while numba's array functions load)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "scipy.linalg":
            raise ImportError("scipy.linalg is not loaded for numba's BLAS probe")


def _load_registries() -> None:
    """numba's numpy functions registered without importing ``scipy.linalg``:
    ``numba.np.arraymath`` probes for BLAS at its import by importing
    ``scipy.linalg.cython_blas`` (about 0.15 CPU-s, a tenth of a ``select``), and the
    probe's only use is ``np.correlate`` / ``np.convolve`` in compiled code (BLAS dot or
    a loop), which no activetest kernel calls (tests/stats/test_kernels_lazy.py checks
    it). Everything else numba does with BLAS (``np.dot``, ``np.linalg`` in compiled
    code) imports scipy.linalg when such a function is compiled, as before. Where
    scipy.linalg or numba's array functions are loaded already, nothing changes."""
    import sys

    if "scipy.linalg" not in sys.modules and "numba.np.arraymath" not in sys.modules:
        hook = _NoScipyLinalg()
        sys.meta_path.insert(0, hook)
        try:
            import numba.np.arraymath  # noqa: F401
        finally:
            sys.meta_path.remove(hook)


def _import_numba() -> Any:
    """``numba.njit``. numba's registries of compiled implementations (its numpy
    functions, typed containers, random generators: ~0.1 CPU-s to import and install)
    are needed only to compile a kernel, not to load one compiled before from the
    on-disk cache: a cached kernel's dispatcher loads it with numba's runtime only
    (:func:`_fast_cache_loads`), and the registries are loaded (by
    :func:`_load_registries`, then numba's own refresh) the first time a kernel is
    compiled."""
    from numba import njit as numba_njit

    return numba_njit


_FAST_LOAD: Any = None

#: What a terminal is told once when a kernel is not in numba's on-disk cache (QA: the
#: first `select` after an install, at 1e6 items, was silent for 73 s, 25 CPU-s, where
#: the docs said ~1.5 CPU-s).
COMPILING = ("compiling activetest's numba kernels: a first run after an install or "
             "upgrade takes a minute or two more (then they load from numba's cache)")

_said_compiling = False


def say_compiling() -> None:
    """:data:`COMPILING` on stderr, once per process, where stderr is a terminal (a
    captured or piped stderr gets nothing: scripts and logs read the same as before)."""
    global _said_compiling
    import sys

    if _said_compiling:
        return
    _said_compiling = True
    stream = sys.stderr
    if stream is not None and getattr(stream, "isatty", lambda: False)():
        print(COMPILING, file=stream, flush=True)


def _fast_cache_loads(dispatcher: Any) -> None:
    """Make ``dispatcher``'s on-disk cache load a compiled kernel without numba's
    registries: numba's ``Cache.load_overload`` refreshes the CPU target (imports and
    installs every registry of compiled implementations, ~0.1 CPU-s) before reading
    the cache, which loading a compiled library does not need, only numba's runtime
    (NRT, initialised here as that refresh would). The same machine code is loaded.
    A cache miss loads the registries (:func:`_load_registries`) before numba compiles
    (which refreshes the target itself). Left as numba made it where its cache is not
    numba's plain ``FunctionCache`` with the methods this relies on."""
    global _FAST_LOAD
    from numba.core import caching

    cache = getattr(dispatcher, "_cache", None)
    if (type(cache) is not caching.FunctionCache
            or not hasattr(cache, "_load_overload")
            or not hasattr(cache, "_guard_against_spurious_io_errors")):
        return
    if _FAST_LOAD is None:
        from numba.core.runtime import nrt

        class _FastLoad(caching.FunctionCache):  # type: ignore[misc]
            def load_overload(self, sig: Any, target_context: Any) -> Any:
                nrt.rtsys.initialize(target_context)
                with self._guard_against_spurious_io_errors():
                    got = self._load_overload(sig, target_context)
                    if got is not None:
                        return got
                say_compiling()
                _load_registries()  # a miss: numba compiles next
                return None

        _FAST_LOAD = _FastLoad
    cache.__class__ = _FAST_LOAD


class LazyKernel:
    """A function compiled by ``numba.njit(**options)`` on its first call.

    Until then it is a plain object holding the Python function; the first call
    imports numba and, in the calling function's module (and the modules of the
    kernels it reaches), replaces every :class:`LazyKernel` by its numba dispatcher,
    so compiled code calls compiled code exactly as with ``@njit`` at import (the
    same dispatcher, the same on-disk cache). Without a usable numba the Python
    function runs.
    """

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        self.py_func = func
        self.options = options
        self.dispatcher: Any = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def compiled(self) -> Any:
        """The numba dispatcher (made on first use), or the Python function."""
        if self.dispatcher is None:
            with _lock:
                if self.dispatcher is None:
                    try:
                        numba_njit = _import_numba()
                    except ImportError:  # pragma: no cover - only without numba
                        self.dispatcher = self.py_func
                    else:
                        dispatcher = numba_njit(**self.options)(self.py_func)
                        _fast_cache_loads(dispatcher)
                        self.dispatcher = dispatcher
        return self.dispatcher

    def __call__(self, *args: Any) -> Any:
        if self.dispatcher is None:
            _bind(self.py_func.__globals__, set())
        return self.compiled()(*args)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__} (compiled on first call)>"


def _bind(namespace: dict[str, Any], seen: set[int]) -> None:
    """Replace each lazy kernel in a module's namespace by its dispatcher, and the
    same in the namespaces of the kernels found (numba reads a compiled function's
    callees from its module's globals when it compiles it)."""
    if id(namespace) in seen:
        return
    seen.add(id(namespace))
    for name, value in list(namespace.items()):
        if isinstance(value, LazyKernel):
            namespace[name] = value.compiled()
            _bind(value.py_func.__globals__, seen)
        elif isinstance(value, types.ModuleType) and value.__name__.startswith("activetest."):
            # kernels reached as a module's attributes (``ak.step`` in compiled code):
            # numba reads them from that module when it compiles the caller
            _bind(vars(value), seen)


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` compiled on first call (see :class:`LazyKernel`): ``@njit`` or
    ``@njit(cache=True, ...)``."""
    if args and callable(args[0]):
        return LazyKernel(args[0], options)

    def wrap(func: Callable[..., Any]) -> LazyKernel:
        return LazyKernel(func, options)

    return wrap


@njit(cache=True)
def _update(sm, ct, leaf, value, count):  # pragma: no cover - compiled
    sm[leaf] = value
    ct[leaf] = count
    j = leaf >> 1
    while j >= 1:
        sm[j] = sm[2 * j] + sm[2 * j + 1]
        ct[j] = ct[2 * j] + ct[2 * j + 1]
        j >>= 1


@njit(cache=True)
def _prefix(sm, ct, P, k):  # pragma: no cover - compiled
    """Remaining (count, raw mass) over sorted positions [0, k)."""
    lo = P
    hi = P + k
    s = 0.0
    c = 0
    while lo < hi:
        if lo & 1:
            s += sm[lo]
            c += ct[lo]
            lo += 1
        if hi & 1:
            hi -= 1
            s += sm[hi]
            c += ct[hi]
        lo >>= 1
        hi >>= 1
    return c, s


@njit(cache=True)
def _kth_remaining(ct, P, j):  # pragma: no cover - compiled
    node = 1
    while node < P:
        left = 2 * node
        if ct[left] > j:
            node = left
        else:
            j -= ct[left]
            node = left + 1
    return node - P


@njit(cache=True)
def _by_mass(sm, P, target):  # pragma: no cover - compiled
    node = 1
    while node < P:
        left = 2 * node
        if target < sm[left] or sm[left + 1] <= 0.0:
            node = left
        else:
            target -= sm[left]
            node = left + 1
    return node - P


@njit(cache=True)
def sample_sorted(s, U, floor, pos_out, q_out):  # pragma: no cover - compiled
    """Fill ``pos_out``/``q_out`` (R, M) with sorted positions and q_m for each run."""
    n = s.shape[0]
    R, M = U.shape
    P = 1
    while n > P:
        P *= 2
    sm = np.zeros(2 * P)
    ct = np.zeros(2 * P, dtype=np.int64)
    for i in range(n):
        sm[P + i] = s[i]
        ct[P + i] = 1
    for j in range(P - 1, 0, -1):
        sm[j] = sm[2 * j] + sm[2 * j + 1]
        ct[j] = ct[2 * j] + ct[2 * j + 1]
    for r in range(R):
        for m in range(M):
            n_rem = n - m
            rem_sum = sm[1]
            t = floor * rem_sum / n_rem if rem_sum > 0.0 else 1.0
            kt = np.searchsorted(s, t)  # positions < kt weigh t
            cb, sb = _prefix(sm, ct, P, kt)
            floor_mass = t * cb
            Z = floor_mass + (rem_sum - sb)
            x = U[r, m] * Z
            if x < floor_mass:
                j = int(x / t)
                if j >= cb:
                    j = cb - 1
                p = _kth_remaining(ct, P, j)
            else:
                p = _by_mass(sm, P, x - floor_mass + sb)
                if p < kt or p >= n or ct[P + p] == 0:  # floating-point edge
                    p = _kth_remaining(ct, P, min(cb, n_rem - 1))
            pos_out[r, m] = p
            q_out[r, m] = max(s[p], t) / Z
            _update(sm, ct, P + p, 0.0, 0)
        for m in range(M):
            p = pos_out[r, m]
            _update(sm, ct, P + p, s[p], 1)
