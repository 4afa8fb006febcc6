"""What the neighbours' column costs a history session at the shared matrices' sizes.

    nice -n 10 python benchmarks/bench_history_session.py [--labels 60]

For each shared response matrix (``../shared/datasets/history/``: BBH 4,027 models x 250
items, MMLU-Pro math 755 x 1,351) one model is the target (its right/wrong answers are
a graded pool of the matrix's item ids, ``--target pool``) and every other row is the
history (a CSV). A graded history session is made with and without the neighbours'
column (``init --history`` through :meth:`Session.create`, in a fresh child process
each, so peak memory is the session's own), then ``--labels`` draws are made one at a
time, each labelled before the next (every refit of the schedule happens), and one
estimate. Reported: CPU seconds of ``init``, of all the selects and of the estimate, the
ratio with/without, the child's peak resident memory and the session file's size.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _cells import printed_ratio

ROOT = Path(__file__).resolve().parents[1]
HISTORY = ROOT.parent / "shared" / "datasets" / "history"
MATRICES = {"BBH": "bbh_shuffled_objects_5.csv", "MMLU-Pro math": "mmlu_pro_math_8b.csv"}


def _inputs(matrix: str, out: Path) -> tuple[Path, Path]:
    """The pool (the target's answers) and the history (the other rows) of ``matrix``."""
    from activetest.formats.history import read_response_matrix

    M = read_response_matrix(HISTORY / MATRICES[matrix])
    target = 0
    pool = out / "pool.jsonl"
    with open(pool, "w", encoding="utf-8") as f:
        for i, item in enumerate(M.item_ids):
            right = M.scores[target, i] == 1.0
            f.write(json.dumps({"id": item, "question": f"item {item}?",
                                "answer": "yes" if right else "no",
                                "references": ["yes"]}) + "\n")
    hist = out / "history.csv"
    rows = [h for h in range(M.scores.shape[0]) if h != target]
    with open(hist, "w", encoding="utf-8") as f:
        f.write("model," + ",".join(M.item_ids) + "\n")
        for h in rows:
            f.write(f"{M.models[h]}," + ",".join("" if np.isnan(v) else f"{v:g}"
                                                 for v in M.scores[h]) + "\n")
    return pool, hist


def one(pool: str, hist: str, db: str, neighbours: bool, labels: int) -> dict[str, float]:
    """One session's costs (run in a child process)."""
    from activetest.session.workflow import Session

    t0 = time.process_time()
    s = Session.create(db, pool=pool, task="answers", target="pool", surrogate="history",
                       history=[hist], seed=0, progress=False, use_cache=False,
                       history_neighbours=neighbours)
    t_init = time.process_time() - t0
    t0 = time.process_time()
    for _ in range(labels):
        s.select(1)
        s.label_from_data()
    t_select = time.process_time() - t0
    t0 = time.process_time()
    s.estimate(record=False, progress=False)
    t_est = time.process_time() - t0
    s.close()
    return {"init": t_init, "select": t_select, "estimate": t_est,
            "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "file_mib": Path(db).stat().st_size / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=int, default=60)
    ap.add_argument("--one", nargs=4, metavar=("POOL", "HISTORY", "DB", "NEIGHBOURS"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        pool, hist, db, nb = a.one
        print(json.dumps(one(pool, hist, db, nb == "1", a.labels)))
        return
    if not HISTORY.is_dir():
        sys.exit(f"no shared history matrices at {HISTORY}")
    lines = ["| matrix (history rows x items) | design | init CPU s | "
             f"{a.labels} selects CPU s | estimate CPU s | peak RSS MiB | file MiB |",
             "|---|---|---|---|---|---|---|"]
    for name in MATRICES:
        with tempfile.TemporaryDirectory() as tmp:
            pool, hist = _inputs(name, Path(tmp))
            res = {}
            for nb in ("0", "1"):
                proc = subprocess.run([sys.executable, __file__, "--labels", str(a.labels),
                                       "--one", str(pool), str(hist),
                                       str(Path(tmp) / f"s{nb}.db"), nb],
                                      capture_output=True, text=True, check=True)
                res[nb] = json.loads(proc.stdout.strip().splitlines()[-1])
            n_hist = len(hist.read_text().splitlines()) - 1
            n_items = len(pool.read_text().splitlines())
            for nb, label in (("0", "features (--no-history-neighbours)"),
                              ("1", "features + neighbours")):
                r = res[nb]
                lines.append(f"| {name} ({n_hist:,} x {n_items:,}) | {label} | "
                             f"{r['init']:.2f} | {r['select']:.2f} | {r['estimate']:.2f} | "
                             f"{r['rss_mib']:.0f} | {r['file_mib']:.1f} |")
            ratio = {k: printed_ratio(res["1"][k], res["0"][k])  # the cells as printed
                     for k in ("init", "select", "estimate")}
            lines.append(f"| {name} | ratio with/without | "
                         + " | ".join("-" if ratio[k] is None else f"{ratio[k]:.1f}x"
                                      for k in ("init", "select", "estimate")) + " | | |")
            print(lines[-3], lines[-2], lines[-1], sep="\n", flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
