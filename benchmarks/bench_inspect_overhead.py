"""The inspect manager's bookkeeping per completed sample, against one ``estimate``.

``python benchmarks/bench_inspect_overhead.py [--n 5000] [--k 500]``: a graded session
of N items (tests/inspect_runs.py's arithmetic pool) with K labelled draws; per completed
sample :class:`activetest.inspect.ActiveStopping` records the label (one transaction) and
computes the anytime interval at every prefix length (:func:`prefix_intervals`). Prints
CPU milliseconds of each (median of 5) and their ratio to ``Session.estimate`` (what
``activetest estimate`` computes, bootstrap included) on the same session. Results in
docs/harness_inspect.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _cells import printed_ratio, ratio_cell

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _cpu_ms(fn: object, repeat: int = 5) -> float:
    out = []
    for _ in range(repeat):
        t = time.process_time()
        fn()  # type: ignore[operator]
        out.append(1000 * (time.process_time() - t))
    return float(np.median(out))


def main() -> None:
    """Run the measurement (module docstring)."""
    from tests.inspect_runs import TASK_TOML, write_pool

    from activetest.inspect import prefix_intervals
    from activetest.session.workflow import Session

    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--k", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_pool(d / "pool.jsonl", args.n)
        (d / "arith.toml").write_text(TASK_TOML)
        s = Session.create(d / "b.db", pool=str(d / "pool.jsonl"), task=str(d / "arith.toml"),
                           target="pool", surrogate="column:p_correct", seed=0, progress=False)
        rng = np.random.default_rng(0)
        acq = s.select(args.k + 5)
        s.add_labels([(a.item_id, int(rng.random() < 0.7)) for a in acq[:args.k]])
        extra = iter(acq[args.k:])
        label = _cpu_ms(lambda: s.add_label(next(extra).item_id, 1))
        curve = _cpu_ms(lambda: prefix_intervals(s))
        est = _cpu_ms(lambda: s.estimate(record=False, progress=False))
        s.close()
    print(f"N={args.n} K={args.k}: record one label {label:.1f} ms CPU, intervals at every "
          f"prefix {curve:.1f} ms; Session.estimate {est:.1f} ms; manager per sample / "
          "estimate = "
          + ratio_cell(printed_ratio(round(label, 1) + round(curve, 1), est, digits=1))
          + " (of the ms as printed)")


if __name__ == "__main__":
    main()
