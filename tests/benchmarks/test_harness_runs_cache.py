"""benchmarks/harness_runs.py's cache key: the pool's rows and the run, never the bits of
the SVD features (which differ between CPUs, BLAS builds and thread counts), so the
committed cache (experiments/cache/harness-runs) is found on any machine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hr():
    spec = importlib.util.spec_from_file_location("harness_runs_under_test",
                                                  ROOT / "benchmarks" / "harness_runs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def _matrix(seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    M = (rng.random((12, 20)) < 0.6).astype(float)
    return M


def test_the_key_ignores_the_features_bits_and_sees_the_rows(hr, monkeypatch) -> None:
    p = hr.history_pool("m 0", _matrix(), 0)
    monkeypatch.setattr(hr, "behaviour_probe", lambda hist: "probe")
    key = hr.cache_key(p, 100, 0, "features", ("mixture",))
    # the same rows with the SVD's signs flipped and the last bits moved: the same key
    flipped = hr.Pool(p.name, p.surrogate, p.loss, -p.features * (1 + 1e-15), p.prior,
                      p.others)
    assert hr.cache_key(flipped, 100, 0, "features", ("mixture",)) == key
    # any change of the rows, the held-out losses, the name or the run: another key
    others = p.others.copy()
    others[0, 0] = 1.0 - others[0, 0]
    changed = [hr.Pool(p.name, p.surrogate, p.loss, p.features, p.prior, others),
               hr.Pool(p.name, p.surrogate, 1.0 - p.loss, p.features, p.prior, p.others),
               hr.Pool("m 1", p.surrogate, p.loss, p.features, p.prior, p.others)]
    keys = {hr.cache_key(q, 100, 0, "features", ("mixture",)) for q in changed}
    keys |= {hr.cache_key(p, 50, 0, "features", ("mixture",)),
             hr.cache_key(p, 100, 1, "features", ("mixture",)),
             hr.cache_key(p, 100, 0, "features+neighbours", ("mixture",)),
             hr.cache_key(p, 100, 0, "features", ("mixture", "planned"))}
    assert key not in keys and len(keys) == 7

