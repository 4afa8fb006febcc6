"""CPU-time measurement shared by the benchmarks."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def best_cpu_time(fn: Callable[[], object], repeats: int = 3) -> float:
    """Best of ``repeats`` CPU seconds of this process running ``fn()`` (the machine is
    shared: wall time would count the other jobs' time slices; the work is
    single-threaded)."""
    best = np.inf
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best
