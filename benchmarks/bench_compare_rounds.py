"""What an ``estimate`` of an adaptive session compared at creation costs as its labels
grow (CPU seconds): the paired difference's variance floor from the blind spot's pass
(its second-moment sums kept in the session's checkpoint, advanced by each ``select``)
against the floor replaying the design from the first draw (as before 2026-12-06), in
the same process on the same session and labels.

The pool and the target's and surrogate's predictions are bench_sessions.py's synthetic
SST-2 tables (``table:`` CSV); the compared model is the target with noise on its logits
(sd 1). The session (default adaptive design, log loss) is brought to each label count by
``select --n BATCH`` rounds labelled from the pool's labels; after each round one
``estimate`` (not recorded, so both conditions see the same stored state) runs as
shipped, and once more with the pass's sums dropped (the floor then replays the design
over every draw; the same numbers, checked). Prints a Markdown table.

Reproduce::

    nice -n 10 python benchmarks/bench_compare_rounds.py --n 1e6 --rounds 5 --batch 400
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _cells import printed_ratio
from activetest.session import blindspot
from activetest.session.workflow import Session
from bench_sessions import conditions, make_inputs


def _compared_table(folder: Path, target: Path, seed: int = 1) -> Path:
    """The target's table with noise on its logits (written once)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    out = folder / "compared.csv"
    if out.exists():
        return out
    t = pcsv.read_csv(target)
    lp = np.stack([t["negative"].to_numpy(), t["positive"].to_numpy()], axis=1)
    z = lp + np.random.default_rng(seed).normal(0.0, 1.0, lp.shape)
    z -= np.logaddexp(z[:, 0], z[:, 1])[:, None]
    pcsv.write_csv(pa.table({"id": t["id"], "negative": z[:, 0], "positive": z[:, 1]}), out)
    return out


def _cpu(s: Session) -> tuple[float, str]:
    t0 = time.process_time()
    rep = s.estimate(record=False, progress=False)
    return time.process_time() - t0, repr(rep)


def main() -> None:
    """Run the benchmark and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "at_bench")
    args = ap.parse_args()
    n = int(args.n)
    folder = args.cache / f"n{n}"
    pool, sur, tgt = make_inputs(folder, n, "csv")
    cmp = _compared_table(folder, tgt)
    work = Path(tempfile.mkdtemp(prefix="at_cmp_"))
    s = Session.create(work / "s.db", pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", compare=[f"table:{cmp}"], metric="log_loss",
                       seed=0, progress=False, pool_options={"id_column": "id"})
    real = blindspot.blind_spot_pass

    def without_sums(*a, **kw):  # type: ignore[no-untyped-def]
        return dataclasses.replace(real(*a, **kw), second_sums=None)

    print(f"start: {conditions()}")
    print(f"| labels | estimate CPU-s, floor from the pass | floor replayed from the first "
          f"draw | ratio |  (N = {n:.0e}, compared at creation, log loss)")
    print("|---|---|---|---|")
    with s:
        for _ in range(args.rounds):
            s.select(args.batch)
            s.label_from_data()
            now, a = _cpu(s)
            blindspot.blind_spot_pass = without_sums
            try:
                before, b = _cpu(s)
            finally:
                blindspot.blind_spot_pass = real
            assert a == b, "the two floors differ"
            r = printed_ratio(now, before)  # of the two cells as printed
            print(f"| {len(s.labels())} | {now:.2f} | {before:.2f} | "
                  + ("- |" if r is None else f"{r:.2f}x |"), flush=True)
    shutil.rmtree(work)
    print(f"end: {conditions()}")


if __name__ == "__main__":
    main()
