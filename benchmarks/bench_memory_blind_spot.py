"""An in-memory run's repeat estimate: the blind spot continued against replayed (CPU s).

:class:`activetest.ActiveTest` widens its intervals by the blind spot, which needs each
draw's proposal over the pool (O(N) per draw: a fixed acquisition's floored proposal in
numpy, the paper's CE or PE; the adaptive design's compiled pass). Since 2026-12-07 the
run keeps the blind spot's running state between
estimates (:mod:`activetest.session.blind_memory`) and a repeat estimate replays the
draws labelled since; before, every estimate replayed every draw from the first. Here a
run is labelled ``--step`` items at a time up to ``--labels``, with an estimate after
each step; at the last step the CPU seconds of the estimate continuing the kept state
(only the last step's draws replayed) and of the same estimate with the kept state
dropped (every draw replayed, the baseline: the code before), best of ``--repeats``
each, in the same process on the same labels; the two records are checked equal.

Run from the repository root:
    nice -n 10 python benchmarks/bench_memory_blind_spot.py --n 1e6 --labels 400 --step 50
Results: docs/benchmarks.md ("In-memory runs: the blind spot kept between estimates").
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import activetest as at
from _cells import printed_ratio, ratio_cell
from activetest.session.blind_memory import MemoryCurves
from activetest.stats.losses import log_softmax


def _estimate_cpu(run: at.ActiveTest, fresh: bool) -> tuple[float, dict]:
    """CPU seconds of one estimate continuing the kept state (``fresh``: the state
    dropped first, so every draw is replayed) and its record. The kept state is
    restored after, so each repeat starts from the same one."""
    kept = run._blind_memory
    saved = (kept.key, copy.deepcopy(kept.state))  # (a pass changes it in place)
    if fresh:
        run._blind_memory = MemoryCurves()
    t = time.process_time()
    rep = run.estimate().to_dict()
    cpu = time.process_time() - t
    run._blind_memory = MemoryCurves(*saved)
    return cpu, rep


def main(argv: list[str] | None = None) -> None:
    """Print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--labels", type=int, default=400)
    ap.add_argument("--step", type=int, default=50)
    ap.add_argument("--acquisitions", nargs="+", default=["ce", "pe", "adaptive"])
    ap.add_argument("--metric", default="error_rate")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    N = int(a.n)
    print(f"| pool | acquisition | labels | estimate CPU-s, state kept ({a.step} new draws) "
          f"| every draw replayed | ratio |")
    print("|---|---|---|---|---|---|")
    for acq in a.acquisitions:
        rng = np.random.default_rng(a.seed)
        T, S = (log_softmax(rng.normal(0, 2, (N, 3))) for _ in range(2))
        y = rng.integers(0, 3, N)
        run = at.ActiveTest(surrogate=S, target=T, metric=a.metric, seed=a.seed,
                            acquisition=acq, n_boot=100)
        while run.n_labelled < a.labels - a.step:
            rows = run.next(min(a.step, a.labels - a.step - run.n_labelled))
            run.label_many(rows, y[rows])
            run.estimate()
        rows = run.next(a.step)
        run.label_many(rows, y[rows])
        kept = min((_estimate_cpu(run, False) for _ in range(a.repeats)),
                   key=lambda x: x[0])
        replay = min((_estimate_cpu(run, True) for _ in range(a.repeats)),
                     key=lambda x: x[0])
        if kept[1] != replay[1]:
            raise SystemExit("the records differ: the kept state is not the replay's")
        r = printed_ratio(kept[0], replay[0])
        print(f"| {N:,} | {acq} | {run.n_labelled} | {kept[0]:.2f} | {replay[0]:.2f} | "
              f"{ratio_cell(r)} |", flush=True)


if __name__ == "__main__":
    main()
