"""``init`` from ``table:`` predictions that are not in the pool's order: joined by id
while streaming, against a baseline checkout (the general path, which joins in memory).

Reproduce (docs/pool-scale.md, "A table in another order than the pool")::

    python benchmarks/bench_stream_by_id.py --n 1000000 --out /tmp/scale \
        --baseline /path/to/checkout/before/src

Writes once into ``--out`` a CSV pool of ``--n`` items (``id``, ``sentence``,
``label``) and two CSV tables of random log-probs, each in the pool's order and
shuffled, and the target's table of a corpus four times the pool (its rows and 3N rows
of other items, shuffled; seed 0); then runs ``activetest init`` (``--task sst2``, seed
3) as its own process for each case (tables in order, the target's shuffled, both
shuffled, the corpus's table), with this checkout's code and, with ``--baseline``, with
another checkout's ``src`` on the same files, and prints each run's peak memory
(``ru_maxrss`` of the child) and CPU seconds (user + system: the machine may be
shared) with the ratio now / baseline. Memory is in GB of 10**9 bytes: ``ru_maxrss`` is
in KiB on Linux, so GB = KiB * 1024 / 1e9 (until 2026-12-06 the script divided the KiB
by 1e6 and called that GB, 2.4% low).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _cells import printed_ratio  # noqa: E402

CASES = {"in order": ("surrogate.csv", "target.csv"),
         "target shuffled": ("surrogate.csv", "target_shuffled.csv"),
         "both shuffled": ("surrogate_shuffled.csv", "target_shuffled.csv"),
         "target: a corpus of 4x the pool, shuffled": ("surrogate.csv", "target_corpus.csv")}

_MEASURE = """
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": r.returncode, "err": r.stderr[-400:], "kb": u.ru_maxrss,
                  "cpu": u.ru_utime + u.ru_stime}))
"""


def write_files(out: Path, n: int) -> None:
    """The pool and the tables (skipped where they exist)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    out.mkdir(parents=True, exist_ok=True)
    if all((out / f).exists() for case in CASES.values() for f in ("pool.csv", *case)):
        return
    rng = np.random.default_rng(0)
    ids = np.array([f"it{i}" for i in range(n)], dtype=object)
    y = rng.integers(0, 2, n)
    pcsv.write_csv(pa.table({"id": ids, "sentence": [f"a short sentence number {i}"
                                                     for i in range(n)],
                             "label": np.where(y == 1, "positive", "negative")}),
                   out / "pool.csv")
    for name in ("surrogate", "target"):
        z = rng.normal(size=(n, 2))
        lp = z - np.logaddexp(z[:, :1], z[:, 1:])
        t = pa.table({"id": ids, "negative": lp[:, 0], "positive": lp[:, 1]})
        pcsv.write_csv(t, out / f"{name}.csv")
        pcsv.write_csv(t.take(pa.array(rng.permutation(n))), out / f"{name}_shuffled.csv")
    # the target's table of a corpus the pool is a quarter of (rows of 3n other items)
    z = rng.normal(size=(3 * n, 2))
    lp = z - np.logaddexp(z[:, :1], z[:, 1:])
    other = pa.table({"id": pa.array([f"other{i}" for i in range(3 * n)]),
                      "negative": lp[:, 0], "positive": lp[:, 1]})
    corpus = pa.concat_tables([pcsv.read_csv(out / "target.csv").cast(other.schema), other])
    pcsv.write_csv(corpus.take(pa.array(rng.permutation(4 * n))), out / "target_corpus.csv")


def gb(kb: float) -> float:
    """``ru_maxrss`` (KiB on Linux) in GB of 10**9 bytes."""
    return kb * 1024 / 1e9


def run_init(out: Path, src: Path, sur: str, tgt: str) -> dict[str, float]:
    """One ``init`` as its own process: peak memory (``kb``: KiB) and CPU seconds."""
    db = out / "bench.db"
    db.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "activetest", "init",
           str(db), "--pool", str(out / "pool.csv"), "--id-column", "id", "--task", "sst2",
           "--surrogate", f"table:{out / sur}", "--target", f"table:{out / tgt}",
           "--seed", "3", "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(src)})
    got = json.loads(r.stdout.strip().splitlines()[-1])
    if got["rc"] != 0:
        raise SystemExit(f"init failed ({src}): {got['err']}")
    db.unlink(missing_ok=True)
    return got  # type: ignore[no-any-return]


def main() -> None:
    """Write the files, run every case, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/activetest-stream-by-id"))
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder")
    a = ap.parse_args()
    write_files(a.out, a.n)
    print(f"init of a {a.n}-item CSV pool with two CSV tables (peak memory in GB of 1e9 "
          "bytes, CPU seconds)")
    print("| tables | now | baseline | now / baseline (memory; CPU) |")
    print("|---|---|---|---|")
    for case, (sur, tgt) in CASES.items():
        now = run_init(a.out, ROOT / "src", sur, tgt)
        cell = f"{gb(now['kb']):.2f} GB, {now['cpu']:.1f} CPU-s"
        if a.baseline is None:
            print(f"| {case} | {cell} | - | - |", flush=True)
            continue
        base = run_init(a.out, a.baseline, sur, tgt)
        mem = printed_ratio(gb(now["kb"]), gb(base["kb"]))
        cpu = printed_ratio(now["cpu"], base["cpu"], digits=1)
        print(f"| {case} | {cell} | {gb(base['kb']):.2f} GB, {base['cpu']:.1f} CPU-s | "
              f"{'-' if mem is None else f'{mem:.2f}'}; {'-' if cpu is None else f'{cpu:.2f}'} |",
              flush=True)


if __name__ == "__main__":
    main()
