"""History sessions' draws and estimates as written by activetest BEFORE the neighbours'
column existed (``init --history``, the feature design on difficulty and item factors).

``expected.json`` holds, for a graded and a classification history session made from the
committed inputs of ``../old/inputs/`` and the history matrices written here (seeded),
every draw (item, q as ``float.hex``), the design rows and the estimate, as the version
before commit "session: neighbours' column in history sessions" computed them.
``tests/session/test_history_neighbours_session.py`` makes the same sessions with
``history_neighbours=False`` and must get the same numbers. To regenerate (only when those
numbers are meant to change; say why):

    git worktree add /tmp/at-base 82a4cd4
    PYTHONPATH=/tmp/at-base/src python tests/session/data/history_before_neighbours/make_expected.py

The history matrices: 25 other models (rows) whose results follow the pool's own
right/wrong answers with noise, item columns shuffled (the join is by id), one pool item
without history, one column not in the pool, and the target's own row named ``me``.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
INPUTS = HERE.parent / "old" / "inputs"

#: select batch sizes, each labelled from the pool file before the next
BATCHES = (1, 1, 1, 2, 3, 5, 8, 6)


def _matrix(path: Path, ids: list[str], right: np.ndarray, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, H = len(ids), 25
    b = np.where(right > 0, 1.2, -1.0) + rng.normal(0, 0.7, n)
    Y = rng.random((H, n)) < 1 / (1 + np.exp(-(b[None, :] + rng.normal(0, 0.6, (H, 1)))))
    cols = rng.permutation(np.arange(1, n))  # item 0 has no history; shuffled order
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["model", *(ids[c] for c in cols), "not-in-pool"])
        for h in range(H):
            w.writerow([f"m{h}", *(int(Y[h, c]) for c in cols), 1])
        w.writerow(["me", *(int(right[c]) for c in cols), 0])


def write_history(out: Path) -> dict[str, Path]:
    """The two history matrices (graded pool, classification pool) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    recs = [json.loads(line) for line in (INPUTS / "graded.jsonl").read_text().splitlines()]
    g_right = np.array([r["judgment"] == "correct" for r in recs], dtype=float)
    with open(INPUTS / "pool.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(INPUTS / "target.csv", newline="", encoding="utf-8") as f:
        t = list(csv.DictReader(f))
    classes = ["negative", "neutral", "positive"]
    pred = [max(classes, key=lambda c, r=r: float(r[c])) for r in t]
    c_right = np.array([p == r["label"] for p, r in zip(pred, rows, strict=True)], dtype=float)
    paths = {"graded": out / "history_graded.csv", "classification": out / "history_class.csv"}
    _matrix(paths["graded"], [r["id"] for r in recs], g_right, 1)
    _matrix(paths["classification"], [r["id"] for r in rows], c_right, 2)
    return paths


def create(kind: str, db: Path, history: Path, **kw: Any) -> Any:
    """The session (open); ``kw`` more options of ``Session.create``."""
    from activetest.session.workflow import Session

    if kind == "graded":
        return Session.create(db, pool=str(INPUTS / "graded.jsonl"), task="squad",
                              target="pool", surrogate="history", history=[history],
                              history_exclude=["me"], seed=11, progress=False,
                              use_cache=False, **kw)
    return Session.create(db, pool=str(INPUTS / "pool.csv"), task="fpb",
                          surrogate=f"table:{INPUTS / 'surrogate.csv'}",
                          target=f"table:{INPUTS / 'target.csv'}", metric="error_rate",
                          history=[history], history_exclude=["me"], seed=7, progress=False,
                          use_cache=False, pool_options={"id_column": "id",
                                                         "text_column": "text"}, **kw)


def run(s: Any) -> dict[str, Any]:
    """Select and label ``BATCHES``; the draws, design rows and estimate."""
    for k in BATCHES:
        s.select(k)
        s.label_from_data()
    est = s.estimate(record=False, progress=False).metrics["error_rate"]
    nums = {"estimate": est.active.estimate, "std": est.active.std, "low": est.active.low,
            "high": est.active.high}
    return {"draws": [[a.index, float(a.q).hex()] for a in s.acquisitions()],
            "design": [[None if v is None else (float(v).hex() if isinstance(v, float)
                                                  else v) for v in d[:5]]
                       for d in s.store.design_draws()],
            "estimate": {k: float(v).hex() for k, v in nums.items()
                         if v is not None and math.isfinite(v)}}


def main() -> None:
    import tempfile

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_history(Path(tmp))
        for kind in ("graded", "classification"):
            with create(kind, Path(tmp) / f"{kind}.db", paths[kind]) as s:
                out[kind] = run(s)
    (HERE / "expected.json").write_text(json.dumps(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
