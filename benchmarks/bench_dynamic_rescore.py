"""CPU cost of one re-score pass of the dynamic-surrogate ablation (docs/dynamic.md).

Scores the first ``--n`` items of the cached SST-2 pool (``experiments/outputs/sst2.npz``,
text from ``../shared/datasets``) with a surrogate and its backend, prompted with the
first 10, 30 and 49 cached in-context examples (the prompt sizes of the ablation's
first, middle and last passes), one thread, and prints CPU seconds per 100 items (the
prefix, evaluated once per call, included). A pass over the ablation's pool costs
about 5x the printed number. Prints nothing but a note when the datasets are absent.

Reproduce (the numbers in docs/dynamic.md)::

    nice -n 19 python benchmarks/bench_dynamic_rescore.py smollm2-135m hf
    nice -n 19 python benchmarks/bench_dynamic_rescore.py smollm2-135m llamacpp
    nice -n 19 python benchmarks/bench_dynamic_rescore.py gemma3-270m llamacpp
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from activetest.data.datasets import find_shared_root, load_shared
from activetest.experiments.outputs import DatasetOutputs
from activetest.models.registry import get_scorer

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Print CPU-s per 100 items at 10, 30 and 49 in-context examples."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("backend", choices=["hf", "llamacpp"])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--datasets", default=None)
    args = ap.parse_args()
    try:
        find_shared_root(args.datasets)
    except FileNotFoundError as exc:
        print(f"skipped: {exc}")
        return
    ds = load_shared("sst2", args.datasets)
    out = DatasetOutputs.load(ROOT / "experiments" / "outputs" / "sst2.npz")
    by_id = {it.id: it for it in ds.items}
    pool = [by_id[str(r)] for r in out.pool_rows[:args.n]]
    examples = [by_id[str(r)] for r in out.example_rows]
    scorer = get_scorer(args.model, args.backend, n_threads=1)
    scorer.score(ds.task, pool[:2], examples[:10], progress=False)  # load outside the timing
    for k in (10, 30, 49):
        c0, w0 = time.process_time(), time.time()
        scorer.score(ds.task, pool, examples[:k], progress=False)
        cpu, wall = time.process_time() - c0, time.time() - w0
        print(f"{args.model} {args.backend} {k} examples: {100 * cpu / args.n:.1f} CPU-s per "
              f"100 items ({wall:.1f} s wall for {args.n})", flush=True)


if __name__ == "__main__":
    main()
