"""The label sweep's growth measure (benchmarks/bench_sessions.py): the largest median
above 0 labels over the 0-label median, with a bootstrap interval over the runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_sessions_under_test",
                                                  ROOT / "benchmarks" / "bench_sessions.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
    return mod


def test_growth_ratio_is_the_largest_median_over_the_zero_label_one() -> None:
    bench = _module()
    res = {0: {"select": [1.0, 1.0, 1.0]}, 50: {"select": [1.2, 1.2, 1.2]},
           500: {"select": [1.1, 1.5, 1.1]}, 2000: {"select": []}}
    ratio, lo, hi = bench.growth_ratio(res)
    assert ratio == 1.2 and lo == 1.2 and hi == 1.5  # 500's resampled median can be 1.5
    assert bench.growth_ratio({0: {"select": [1.0]}}) is None
    rng = np.random.default_rng(1)
    noisy = {0: {"select": list(1.0 + 0.1 * rng.standard_normal(40))},
             50: {"select": list(1.1 + 0.1 * rng.standard_normal(40))}}
    ratio, lo, hi = bench.growth_ratio(noisy)
    assert lo < ratio < hi and 1.0 < ratio < 1.2 and hi - lo < 0.2
    assert "baseline" not in bench.growth_line(noisy) and "1." in bench.growth_line(noisy)
