"""A streamed ``init`` refused for a table's row that does not normalise: what the refusal
costs, against a baseline checkout.

Reproduce (docs/pool-scale.md, "A row that does not normalise")::

    python benchmarks/bench_stream_late_refusal.py --n 200000 --out /tmp/late \
        --baseline /path/to/checkout/before/src

Writes once into ``--out`` a CSV pool of ``--n`` items (``it{i},text {i},negative``) and
two CSV tables of log-probs (``numpy.random.default_rng(1)`` normal logits,
log-softmaxed), in the pool's order, for each case: the surrogate's row 5 that does not
normalise (its first value written ``0.5``), the same with a ``nan`` 100 rows before the
table's end too, and good tables (``--format json``: the tables a JSON array of row
objects each, in ``--out``'s ``json-case*`` folders). Then runs ``activetest init``
(``--task sst2``) as its own process for each case, ``--repeat`` times, with this
checkout's code and, with ``--baseline``, another checkout's ``src`` on the same files,
and prints the smallest
CPU seconds (user + system of the child: the machine may be shared) and peak memory
(``ru_maxrss``, KiB) of each, and how this checkout's refusal began.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: case -> the surrogate's spoiled rows ((row, what) from 0)
CASES = {"a row at 5 that does not normalise": ((5, "0.5"),),
         "that row and a nan 100 rows before the end": ((5, "0.5"), (-100, "nan")),
         "good tables": ()}

_MEASURE = """
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": r.returncode, "err": r.stderr[-400:], "kb": u.ru_maxrss,
                  "cpu": u.ru_utime + u.ru_stime}))
"""


def _case(out: Path, k: int, fmt: str) -> Path:
    """The folder of case ``k``'s files in ``fmt``."""
    return out / (f"case{k}" if fmt == "csv" else f"{fmt}-case{k}")


def write_files(out: Path, n: int, fmt: str = "csv") -> None:
    """The pool and each case's tables in ``fmt`` (``csv`` or ``json``; skipped where they
    exist)."""
    import numpy as np

    for k, spoil in enumerate(CASES.values()):
        d = _case(out, k, fmt)
        if (d / f"target.{fmt}").exists():
            continue
        d.mkdir(parents=True, exist_ok=True)
        with open(d / "pool.csv", "w") as f:
            f.write("id,sentence,label\n")
            f.writelines(f"it{i},text {i},negative\n" for i in range(n))
        rng = np.random.default_rng(1)
        for name in ("surrogate", "target"):
            z = rng.normal(size=(n, 2))
            lp = z - np.logaddexp(z[:, :1], z[:, 1:])
            cells = {r % n: v for r, v in spoil} if name == "surrogate" else {}
            if fmt == "json":  # (NaN: JSON's extension, as json.dumps writes it)
                with open(d / f"{name}.json", "w") as f:
                    neg = [cells.get(i, repr(float(lp[i, 0]))).replace("nan", "NaN")
                           for i in range(n)]
                    f.write("[" + ",\n".join(
                        f'{{"id": "it{i}", "negative": {neg[i]}, '
                        f'"positive": {float(lp[i, 1])!r}}}' for i in range(n)) + "]\n")
                continue
            with open(d / f"{name}.csv", "w") as f:
                f.write("id,negative,positive\n")
                f.writelines(f"it{i},{cells.get(i, repr(float(lp[i, 0])))},"
                             f"{float(lp[i, 1])!r}\n" for i in range(n))


def run_init(d: Path, src: Path, fmt: str = "csv") -> dict[str, object]:
    """One ``init`` as its own process: ``rc``, ``err`` (stderr's end), peak memory
    (``kb``: KiB) and CPU seconds (``cpu``)."""
    db = d / "bench.db"
    db.unlink(missing_ok=True)
    cmd = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "activetest", "init",
           str(db), "--pool", str(d / "pool.csv"), "--id-column", "id", "--task", "sst2",
           "--surrogate", f"table:{d / f'surrogate.{fmt}'}",
           "--target", f"table:{d / f'target.{fmt}'}", "--seed", "3", "--no-progress"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONPATH": str(src)})
    db.unlink(missing_ok=True)
    return json.loads(r.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    """Write the files, run every case, print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/activetest-late-refusal"))
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--format", choices=("csv", "json"), default="csv",
                    help="the tables' format (json: a JSON array of row objects)")
    a = ap.parse_args()
    write_files(a.out, a.n, a.format)
    what = "CSV" if a.format == "csv" else "JSON-array"
    print(f"init of a {a.n}-item CSV pool with two {what} tables (the smallest CPU seconds "
          f"of {a.repeat} runs, user + system; peak memory in KiB)")
    print("| case | now | baseline | said |")
    print("|---|---|---|---|")
    for k, case in enumerate(CASES):
        cells = []
        said = ""
        for src in (ROOT / "src", a.baseline):
            if src is None:
                cells.append("-")
                continue
            runs = [run_init(_case(a.out, k, a.format), src, a.format)
                    for _ in range(a.repeat)]
            best = min(runs, key=lambda r: float(r["cpu"]))  # type: ignore[arg-type]
            cells.append(f"{float(best['cpu']):.2f} CPU-s, {best['kb']} KiB")  # type: ignore[arg-type]
            err = str(best["err"]).strip().splitlines()
            if src == ROOT / "src":  # (this checkout's words)
                said = (err[-1] if err else "")[:70] if best["rc"] else "created"
        print(f"| {case} | {cells[0]} | {cells[1]} | {said} |", flush=True)


if __name__ == "__main__":
    main()
