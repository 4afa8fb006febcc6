"""The adaptive design's checkpoint against a full replay: CPU seconds of one
``select --n 50`` and one ``estimate`` (in process, so the interpreter's start is not
counted) at N items with 0, 500 and 2,000 labels held.

Reproduce::

    nice -n 10 python benchmarks/bench_checkpoint.py --n 1e5 --labels 0 500 2000

The pool and predictions are bench_sessions.py's synthetic SST-2 tables (``table:``
CSV, default acquisition ``adaptive``); the session is brought to each label count by
``select --n 100`` rounds labelled from the pool's labels, then copied, and each
command runs (after one untimed select and estimate on another copy, so nothing is
compiled inside a timed one) on a fresh copy with ``ACTIVETEST_CHECKPOINTS=1`` (the checkpoint
loaded) and ``=0`` (the whole history replayed, the baseline of the ratios). Two
estimates more run one after the other on a copy whose checkpoint is made one written
before the digests were kept (its blob without ``digest`` and ``cd_*``): the first
replays and re-writes it with them, the second loads it. Then the SHA-256 of two
per-item columns of ``--digest-n`` values (``checkpoint._column_digest``, median of 5): what a
``select`` that continues a column-stored checkpoint without a refit no longer
computes. Prints a Markdown table and those milliseconds.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from activetest.session import checkpoint
from activetest.session.workflow import Session
from bench_sessions import conditions, make_inputs


def _cpu(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _predigest(db: Path) -> None:
    """Make the stored checkpoint of ``db`` one written before the digests were kept."""
    con = sqlite3.connect(db)
    (raw,), = con.execute("SELECT state FROM adaptive_checkpoints").fetchall()
    with np.load(io.BytesIO(bytes(raw)), allow_pickle=False) as z:
        blob = {k: z[k] for k in z.files if k != "digest" and not k.startswith("cd_")}
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **blob)
    con.execute("UPDATE adaptive_checkpoints SET state = ?", (buf.getvalue(),))
    con.commit()
    con.close()


def _estimate(db: Path) -> float:
    """CPU seconds of one estimate of ``db`` (opened for it, as a command does)."""
    with Session.open(db) as s:
        return _cpu(lambda: s.estimate(record=False, progress=False))


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--labels", type=int, nargs="+", default=[0, 500, 2000])
    ap.add_argument("--digest-n", type=float, default=1e6,
                    help="items of the two columns hashed (default 1e6)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "at_bench")
    args = ap.parse_args()
    n = int(args.n)
    pool, sur, tgt = make_inputs(args.cache / f"n{n}", n, "csv")
    work = Path(tempfile.mkdtemp(prefix="at_ck_"))
    db = work / "s.db"
    s = Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", seed=0, progress=False,
                       pool_options={"id_column": "id"})
    s.close()
    print(f"start: {conditions()}")
    print(f"| labels held | select --n 50, checkpoint | select, replay | ratio | estimate, "
          f"checkpoint | estimate, replay | ratio | estimate, pre-digest: 1st | 2nd |  "
          f"(N = {n:.0e}, CPU s)")
    print("|---|---|---|---|---|---|---|---|---|")
    for target in sorted(args.labels):
        with Session.open(db) as s:
            while len(s.labels()) < target:
                s.select(min(100, target - len(s.labels())))
                s.label_from_data()
        warm = work / "w.db"  # compiled once, not in the first timed command
        shutil.copy(db, warm)
        with Session.open(warm) as s:
            s.select(50)
            if target:
                s.estimate(record=False, progress=False)
        warm.unlink()
        row = []
        for cmd in ("select", "estimate"):
            for flag in ("1", "0"):
                if cmd == "estimate" and target == 0:  # nothing to estimate from
                    row.append(float("nan"))
                    continue
                copy = work / f"c{flag}.db"
                shutil.copy(db, copy)
                os.environ["ACTIVETEST_CHECKPOINTS"] = flag
                with Session.open(copy) as s:
                    if cmd == "select":
                        row.append(_cpu(lambda s=s: s.select(50)))
                    else:
                        row.append(_cpu(lambda s=s: s.estimate(record=False, progress=False)))
                os.environ.pop("ACTIVETEST_CHECKPOINTS")
                copy.unlink()
            row.append(row[-2] / row[-1])  # against the replay, the same run's baseline
        if target:  # a pre-digest checkpoint: the first estimate re-writes it
            copy = work / "p.db"
            shutil.copy(db, copy)
            _predigest(copy)
            row += [_estimate(copy), _estimate(copy)]
            copy.unlink()
        else:
            row += [float("nan")] * 2
        print(f"| {target} | " + " | ".join("-" if x != x else f"{x:.2f}" for x in row)
              + " |", flush=True)
    times = []
    dn = int(args.digest_n)
    for seed in range(5):
        s_, g_ = np.random.default_rng(seed).random((2, dn))
        times.append(_cpu(lambda s_=s_, g_=g_: (checkpoint._column_digest(s_),
                                                checkpoint._column_digest(g_))))
    print(f"s and g digests at N = {dn:.0e}: {1000 * statistics.median(times):.1f} ms "
          f"(median of 5, CPU)")
    shutil.rmtree(work)
    print(f"end: {conditions()}")


if __name__ == "__main__":
    main()
