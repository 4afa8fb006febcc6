"""``init`` with Parquet prediction tables whose class columns are text (``"-0.25"``, a
string column): streamed since 2026-12-07, against a baseline checkout (which fell back
to the general path and read the whole table into memory).

Reproduce (docs/pool-scale.md, "A Parquet table of text values")::

    nice -n 10 python benchmarks/bench_text_table.py --n 1000000 --out /tmp/text \
        --baseline /path/to/checkout/before/src

Writes once into ``--out`` a Parquet pool of ``--n`` items (``id``, ``sentence``,
``label``; row groups of 1M) and two Parquet tables of random log-probs in the pool's
order (seed 0) written as text (Python's ``repr`` of each float); then runs
``activetest init --task sst2 --no-progress`` as its own process with this checkout's
code and, with ``--baseline``, another checkout's ``src``, under ``/usr/bin/time -v``,
and prints each run's exit code, peak memory (its "Maximum resident set size", KiB) and
wall seconds, and whether the two sessions hold the same scores.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from _parquet_pool import write_pool_and_tables

ROOT = Path(__file__).resolve().parents[1]


def make_files(out: Path, n: int) -> tuple[Path, Path, Path]:
    """The pool and the two tables of text values (written once)."""
    import pyarrow as pa

    out.mkdir(parents=True, exist_ok=True)
    paths = tuple(out / f"{k}.parquet" for k in ("pool", "surrogate", "target"))
    if all(p.exists() for p in paths):
        return paths  # type: ignore[return-value]
    write_pool_and_tables(paths, n, lambda v: pa.array([repr(x) for x in v.tolist()]))
    return paths  # type: ignore[return-value]


def run(src: Path, files: tuple[Path, Path, Path], db: Path) -> str:
    """One ``init`` under ``/usr/bin/time -v``: its exit code, KiB and wall seconds."""
    pool, sur, tgt = files
    db.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(src), "ACTIVETEST_SUPERVISED": "0"}
    p = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "activetest", "init",
                        str(db), "--pool", str(pool), "--id-column", "id", "--task", "sst2",
                        "--surrogate", f"table:{sur}", "--target", f"table:{tgt}",
                        "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True, env=env, check=False)
    kib = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr)
    return (f"rc {p.returncode}, {int(kib.group(1)) if kib else -1:,} KiB, "
            f"{wall.group(1) if wall else '?'} wall")


def _scores(db: Path) -> bytes:
    """The session's stored surrogate and target log-probs, as bytes."""
    from activetest.session.store import SessionStore

    s = SessionStore.open(db)
    try:
        return b"".join(s.scores(r).logprobs.tobytes() for r in ("surrogate", "target"))
    finally:
        s.close()


def main() -> None:
    """Write the files, run this checkout (and the baseline), print each run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/activetest-text-table"))
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder")
    args = ap.parse_args()
    files = make_files(args.out, args.n)
    print(f"N = {args.n:,}, now: {run(ROOT / 'src', files, args.out / 'now.db')}")
    if args.baseline is not None:
        print(f"baseline: {run(args.baseline, files, args.out / 'base.db')}")
        same = _scores(args.out / "now.db") == _scores(args.out / "base.db")
        print(f"the same scores, bit for bit: {same}")


if __name__ == "__main__":
    main()
