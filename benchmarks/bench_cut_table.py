"""``init`` with a Parquet prediction table cut short (its footer lost): refused by the
stream, against a baseline checkout (the general path, which read the whole pool into
memory before it named the table).

Reproduce (docs/pool-scale.md, "A Parquet table cut short")::

    nice -n 10 python benchmarks/bench_cut_table.py --n 10000000 --out /tmp/cut \
        --baseline /path/to/checkout/before/src

Writes once into ``--out`` a Parquet pool of ``--n`` items (``id``, ``sentence``,
``label``; row groups of 1M) and two Parquet tables of random log-probs in the pool's
order (seed 0), the target cut to half its bytes; then runs ``activetest init
--task sst2 --no-progress`` as its own process with this checkout's code and, with
``--baseline``, another checkout's ``src``, and prints each run's exit code, its
message, peak memory (``ru_maxrss`` of that child, ``os.wait4``, KiB) and CPU seconds (user +
system: the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from _parquet_pool import write_pool_and_tables

ROOT = Path(__file__).resolve().parents[1]


def make_files(out: Path, n: int) -> tuple[Path, Path, Path]:
    """The pool, the surrogate and the cut target (written once)."""
    out.mkdir(parents=True, exist_ok=True)
    pool, sur, tgt = (out / f"{k}.parquet" for k in ("pool", "surrogate", "target_cut"))
    if tgt.exists():
        return pool, sur, tgt
    paths = (pool, sur, out / "target.parquet")
    write_pool_and_tables(paths, n)
    data = paths[2].read_bytes()
    tgt.write_bytes(data[: len(data) // 2])
    paths[2].unlink()
    return pool, sur, tgt


def run(src: Path, files: tuple[Path, Path, Path], db: Path) -> str:
    """One ``init`` as its own process: its exit code, message, KiB and CPU seconds."""
    pool, sur, tgt = files
    env = {**os.environ, "PYTHONPATH": str(src), "ACTIVETEST_SUPERVISED": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "activetest", "init", str(db), "--pool",
                             str(pool), "--id-column", "id", "--task", "sst2", "--surrogate",
                             f"table:{sur}", "--target", f"table:{tgt}", "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, use = os.wait4(proc.pid, 0)  # this child's own peak and CPU
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = use.ru_utime + use.ru_stime
    p = subprocess.CompletedProcess(proc.args, proc.returncode, "", err)
    msg = (p.stderr.strip().splitlines() or [""])[-1][:160]
    return f"rc {p.returncode}, {use.ru_maxrss:,} KiB, {cpu:.1f} CPU-s: {msg}"


def main() -> None:
    """Write the files, run this checkout (and the baseline), print each run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/activetest-cut-table"))
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder")
    args = ap.parse_args()
    files = make_files(args.out, args.n)
    print(f"N = {args.n:,}, now: {run(ROOT / 'src', files, args.out / 'now.db')}")
    if args.baseline is not None:
        print(f"baseline: {run(args.baseline, files, args.out / 'base.db')}")


if __name__ == "__main__":
    main()
