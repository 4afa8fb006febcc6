"""The README's in-memory comparison, repeated over seeds: how often its intervals hold.

The README's synthetic pool (N = 5,000, two classes, the target's probabilities known,
a noisier surrogate) and its "older model" (the target's log-odds shifted by -1: biased
to class 0), compared by ``ActiveTest(..., acquisition="compare")`` and by uniform
sampling, 100 labels drawn in one batch per seed. Printed per design: the mean estimate
of the difference of the two error rates (with its standard error) against the truth,
the coverage of the fixed-budget interval and of the anytime sequence, and the median
width of the fixed-budget interval.

Run from the repository root (about 80 CPU-s for 1,000 seeds):
    python benchmarks/compare_in_memory.py --seeds 1000
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import activetest as at


def main(argv: list[str] | None = None) -> None:
    """Print one line per design (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--labels", type=int, default=100)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")  # the bootstrap's "below ~100 labels" notes
    t0 = time.process_time()
    rng = np.random.default_rng(0)  # the README's pool, built in the README's order
    N = 5000
    p = 1 / (1 + np.exp(-rng.normal(0, 2, N)))
    truth = (rng.random(N) < p).astype(int)
    T = np.column_stack([1 - p, p])
    s = 1 / (1 + np.exp(-np.log(p / (1 - p)) - rng.normal(0, 1, N)))
    S = np.column_stack([1 - s, s])
    old = 1 / (1 + np.exp(1.0 - np.log(p / (1 - p))))
    T_old = np.column_stack([1 - old, old])
    tr = float(np.mean(T.argmax(1) != truth) - np.mean(T_old.argmax(1) != truth))
    print(f"truth {tr:+.4f}; {a.seeds} seeds, {a.labels} labels each")
    for acq in ("compare", "uniform"):
        rows = []
        for seed in range(a.seeds):
            run = at.ActiveTest(surrogate=S, target=T, metric="error_rate", seed=seed,
                                acquisition=acq, compare={"old": T_old}, n_boot=10)
            drawn = run.next(a.labels)
            run.label_many(drawn, truth[drawn])
            (c,) = run.estimate().comparisons
            d = c.difference_anytime
            rows.append((c.difference.estimate, d.fixed_low <= tr <= d.fixed_high,
                         d.cs_low <= tr <= d.cs_high, d.fixed_high - d.fixed_low))
        x = np.array(rows, dtype=float)
        se = x[:, 0].std(ddof=1) / np.sqrt(len(x))
        print(f"{acq}: mean estimate {x[:, 0].mean():+.4f} (+-{se:.4f}), "
              f"coverage fixed-budget {x[:, 1].mean():.3f}, anytime {x[:, 2].mean():.3f}, "
              f"median fixed-budget width {np.median(x[:, 3]):.3f}")
    print(f"({time.process_time() - t0:.0f} CPU-s)")


if __name__ == "__main__":
    main()
