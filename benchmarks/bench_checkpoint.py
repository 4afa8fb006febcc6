"""The adaptive design's checkpoint against a full replay: CPU seconds of one
``select --n 50`` and one ``estimate`` (in process, so the interpreter's start is not
counted) at N items with 0, 500 and 2,000 labels held.

Reproduce::

    nice -n 10 python benchmarks/bench_checkpoint.py --n 1e5 --labels 0 500 2000

The pool and predictions are bench_sessions.py's synthetic SST-2 tables (``table:``
CSV, default acquisition ``adaptive``); the session is brought to each label count by
``select --n 100`` rounds labelled from the pool's labels, then copied, and each
command runs on a fresh copy with ``ACTIVETEST_CHECKPOINTS=1`` (the checkpoint
loaded) and ``=0`` (the whole history replayed). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from activetest.session.workflow import Session
from bench_sessions import conditions, make_inputs


def _cpu(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--labels", type=int, nargs="+", default=[0, 500, 2000])
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
    print(f"| labels held | select --n 50, checkpoint | select, replay | estimate, "
          f"checkpoint | estimate, replay |  (N = {n:.0e}, CPU s)")
    print("|---|---|---|---|---|")
    for target in sorted(args.labels):
        with Session.open(db) as s:
            while len(s.labels()) < target:
                s.select(min(100, target - len(s.labels())))
                s.label_from_data()
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
        print(f"| {target} | " + " | ".join(f"{x:.2f}" for x in row) + " |", flush=True)
    shutil.rmtree(work)
    print(f"end: {conditions()}")


if __name__ == "__main__":
    main()
