"""Ray scoring of a 10,000-item pool on a local cluster, round-tripped into a session.

Scores ``--n`` demo reviews (zero-shot, task ``demo``) with the bundled SmolLM2-135M
through :func:`activetest.models.ray_score.score_with_ray` on a local Ray cluster of
``--cpus`` CPUs (one llama.cpp thread per shard), then creates a session from the
Parquet file (``activetest init ... --surrogate table:FILE``) and checks every item's
stored log-probs against the file by id. The baseline is in-process
:class:`~activetest.models.llamacpp.LlamaCppScorer` (one thread) on the first
``--baseline-n`` items, timed in the same run; the ratio is Ray items/s over
baseline items/s (at most ``--cpus`` on an idle machine).

Reproduce::

    nice -n 10 python benchmarks/bench_ray_score.py            # 10,000 items, 2 CPUs
    python benchmarks/bench_ray_score.py --n 500 --baseline-n 100   # quick look
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _cells import printed_ratio, ratio_cell

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--baseline-n", type=int, default=300)
    args = ap.parse_args()

    import pyarrow.parquet as pq
    import ray

    from activetest.data.demo import demo_items
    from activetest.data.pool import load_pool
    from activetest.data.taskfile import load_task
    from activetest.models.bundled import bundled_model_path
    from activetest.models.llamacpp import LlamaCppScorer
    from activetest.models.ray_score import score_with_ray
    from activetest.session import Session

    task = load_task("demo")
    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_"))
    pool_csv = tmp / "pool.csv"
    with pool_csv.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "label"])
        for i, it in enumerate(demo_items(args.n, seed=0)):
            w.writerow([f"r{i}", it.fields["text"], task.classes[int(it.label)]])
    pool = load_pool(pool_csv, task=task, id_column="id")

    local = LlamaCppScorer(bundled_model_path("smollm2-135m"), n_threads=1)
    t0 = time.monotonic()
    base = local.score(task, list(pool)[:args.baseline_n], progress=False)
    base_s = time.monotonic() - t0
    local.close()

    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    start_s = time.monotonic() - t0
    out = tmp / "preds.parquet"
    res = score_with_ray(pool, task, "smollm2-135m", out, shards=args.shards)
    ray.shutdown()
    load1 = os.getloadavg()[0]

    rows = pq.read_table(out).to_pylist()
    assert [r["id"] for r in rows] == [it.id for it in pool], "ids lost or repeated"
    got = np.array([[r[w] for w in task.classes] for r in rows])
    diff_base = float(np.abs(got[:args.baseline_n] - base).max())

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ACTIVETEST_CACHE": str(tmp / "c")}
    db = tmp / "s.db"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "activetest.cli", "init", str(db), "--pool",
                    str(pool_csv), "--task", "demo", "--surrogate", f"table:{out}",
                    "--target", f"table:{out}", "--id-column", "id", "--no-progress"],
                   env=env, check=True, capture_output=True)
    init_s = time.monotonic() - t0
    by_id = {r["id"]: [r[w] for w in task.classes] for r in rows}
    with Session.open(db) as s:
        ids = [it.id for it in s.items()]
        stored = s.store.scores("surrogate").logprobs
    mismatched = sum(not np.allclose(stored[i], by_id[i_id], atol=1e-12, rtol=0)
                     for i, i_id in enumerate(ids))
    assert sorted(ids) == sorted(by_id) and mismatched == 0, mismatched

    ray_rate = res.n_items / res.seconds
    base_rate = args.baseline_n / base_s
    print(f"| items | CPUs | shards | Ray start s | scoring s | items/s | baseline items/s "
          f"(in process, 1 thread, {args.baseline_n} items) | ratio | max abs diff vs "
          f"baseline | init from table s | items matching in the session | load avg |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    print(f"| {res.n_items:,} | {args.cpus} | {res.n_shards} | {start_s:.1f} | "
          f"{res.seconds:.1f} | {ray_rate:.1f} | {base_rate:.1f} | "
          f"{ratio_cell(printed_ratio(ray_rate, base_rate, digits=1))} | "
          f"{diff_base:.1e} | {init_s:.1f} | {len(ids) - mismatched:,} / {len(ids):,} | "
          f"{load0:.1f} -> {load1:.1f} |")


if __name__ == "__main__":
    main()
