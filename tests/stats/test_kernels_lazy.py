"""How the compiled kernels load numba: without ``scipy.linalg`` (numba's BLAS probe,
~0.15 CPU-s of every ``select``), which is safe only while no kernel calls the numpy
functions the probe decides (``np.correlate``, ``np.convolve``)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import activetest.stats as stats_pkg

_RUN = """
import sys
import numpy as np
from activetest.stats import _design_models as dm
from activetest.stats.kernels import HAVE_NUMBA
v = np.arange(5.0)
print(dm.total(v), HAVE_NUMBA, "scipy.linalg" in sys.modules, flush=True)
import scipy.linalg  # still importable afterwards, as usual
print(scipy.linalg.norm(v) > 0)
"""


def test_a_kernel_runs_without_importing_scipy_linalg() -> None:
    out = subprocess.run([sys.executable, "-c", _RUN], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "10.0" and out[1] == "True"
    assert out[2] == "False"  # numba loaded without scipy.linalg
    assert out[3] == "True"


def _calls(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names


def test_no_kernel_calls_what_numbas_blas_probe_decides() -> None:
    """np.correlate / np.convolve in compiled code take BLAS or a loop by the probe
    skipped at load (their sums could differ in the last bits): no kernel uses them,
    nor a BLAS product (@, np.dot, np.vdot, np.inner, np.linalg)."""
    src = Path(stats_pkg.__file__).parent
    kernels = 0
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            decos = {getattr(d, "id", None) or getattr(getattr(d, "func", None), "id", None)
                     for d in node.decorator_list}
            if "njit" not in decos:
                continue
            kernels += 1
            used = _calls(node)
            bad = used & {"correlate", "convolve", "dot", "vdot", "inner", "linalg",
                          "matmul"}
            assert not bad, f"{path.name}:{node.name} uses {bad}"
            assert not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
                           for n in ast.walk(node)), f"{path.name}:{node.name} uses @"
    assert kernels > 20


_LOADED = """
import sys
import numpy as np
from activetest.stats import _design_models as dm
v = np.arange(6.0)
rem = np.array([True, False, True, True, False, True])
print(dm.total(v), dm.rest_sum(v, rem), "numba.np.arraymath" in sys.modules,
      "scipy.linalg" in sys.modules)
"""


def test_a_cached_kernel_loads_without_numbas_registries(tmp_path: Path) -> None:
    """A kernel in numba's on-disk cache is loaded without numba's registries of
    compiled implementations (~0.1 CPU-s of every ``select``); a cache miss compiles
    with them (loaded without scipy.linalg). Both give the same numbers."""
    import os

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    runs = [subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True,
                           check=True, env=env).stdout.split() for _ in range(2)]
    assert runs[0] == ["15.0", "10.0", "True", "False"]  # compiled: registries loaded
    assert runs[1] == ["15.0", "10.0", "False", "False"]  # from the cache: not needed


_NEIGHBOURS = """
import sys
import numpy as np
from activetest.stats import neighbours
print("numba" in sys.modules, flush=True)  # importing the module compiles nothing
from activetest.stats.adaptive import simulate_design
from activetest.stats.feature_design import feature_design, history_features
rng = np.random.default_rng(0)
hist = (rng.random((20, 40)) < 0.6).astype(float)
L = (rng.random(40) < 0.3).astype(float)
hf = history_features(hist, rank=1)
nh = neighbours.neighbour_history(hist, p_correct=hf.p_correct, eps=0.2)
# the first compiled call is the neighbour design's simulation, whose compiled code calls
# the adaptive kernels as module attributes (ak.step): nothing bound them before
runs = simulate_design(feature_design(history=hf, neighbours=nh), losses=L, labels=None,
                       budget=10, n_runs=2, random_state=0)
print(np.isfinite(runs.curve(L)).all(), "numba" in sys.modules)
"""


def test_the_neighbour_design_compiles_on_first_use_from_a_fresh_process() -> None:
    """``stats.neighbours`` imports no numba (its kernels are lazy like every other's),
    and its compiled simulation, the first kernel called in the process, reaches the
    adaptive kernels it calls through their module (``ak.step``): binding follows module
    attributes, not only names."""
    out = subprocess.run([sys.executable, "-c", _NEIGHBOURS], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_binding_follows_kernels_reached_as_module_attributes() -> None:
    """A compiled kernel that calls another module's kernel as ``mod.kernel`` (never
    called before, so still lazy there) compiles: the first call binds that module's
    kernels too (else numba meets a plain Python object where it expects a function)."""
    import types

    a = types.ModuleType("activetest._lazy_test_a")
    exec("from activetest.stats.kernels import njit\n"
         "@njit\ndef inner(x):\n    return x + 1.0\n", a.__dict__)
    b = types.ModuleType("activetest._lazy_test_b")
    b.__dict__["a"] = a
    exec("from activetest.stats.kernels import njit\n"
         "@njit\ndef outer(x):\n    return a.inner(x) * 2.0\n", b.__dict__)
    from activetest.stats.kernels import HAVE_NUMBA, LazyKernel

    assert isinstance(a.__dict__["inner"], LazyKernel)
    assert b.outer(1.0) == 4.0
    if HAVE_NUMBA:
        assert not isinstance(a.__dict__["inner"], LazyKernel)  # bound by outer's call


def _stderr_of(env: dict[str, str], on_a_terminal: bool) -> str:
    """What :data:`_LOADED` writes to stderr, a pseudo-terminal's or a pipe's."""
    import os
    import pty

    if not on_a_terminal:
        return subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True,
                              check=True, env=env).stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", _LOADED], env=env, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal (EIO on Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.communicate(timeout=300)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    return b"".join(chunks).decode()


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_terminal_is_told_once_when_kernels_compile(tmp_path: Path) -> None:
    """QA: the first `select` after an install (numba's cache cold) was silent for 73 s
    at 1e6 items (25 CPU-s; the docs say ~1.5). A terminal is told once that the kernels
    compile; a run from the cache, or with stderr not a terminal, prints nothing."""
    import os

    from activetest.stats.kernels import COMPILING

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    piped = {**env, "NUMBA_CACHE_DIR": str(tmp_path / "numba-piped")}
    assert COMPILING not in _stderr_of(piped, on_a_terminal=False)  # compiled, piped
    first = _stderr_of(env, on_a_terminal=True)
    assert first.count(COMPILING) == 1, first  # two kernels compiled, one line
    assert COMPILING not in _stderr_of(env, on_a_terminal=True)  # from the cache
