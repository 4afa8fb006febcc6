"""Coverage of a graded session's paired difference (two answer sets, partial credit).

Reproduce (docs/compare.md, "Graded differences: coverage")::

    nice -n 10 python benchmarks/graded_difference_coverage.py --seeds 400

A pool of 300 questions judged on four levels (scores 0, 0.3, 0.7, 1); the target's
levels uniform, the compared answers' the same on half the items and uniform elsewhere;
the surrogate a pool column unrelated to either (``column:p``); the sessions' default
design (``graded_fixed``) and, with ``--acquisition ce``, the paper's CE. Each seed: a
new session (``Session.create``, ``compare=[answers:...]``), 10 draws at a time, each
drawn item judged for both answer sets from the known levels; at 30 and 60 labels, whether
the difference's fixed-budget interval and anytime CS hold the true difference, and the
target's own fixed-budget interval its risk. Prints the coverages with their Monte Carlo
standard errors, the Monte Carlo sd of the difference's estimate and the median SE the
session reported.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from activetest import Session

LEVELS = ["wrong", "poor", "good", "right"]
SCORES = np.array([0.0, 0.3, 0.7, 1.0])
BUDGETS = (30, 60)


def write_pool(folder: Path, n: int = 300, seed: int = 9) -> tuple[np.ndarray, np.ndarray]:
    """The task file, the pool (target answers, the column p) and the compared answers;
    returns the target's and the compared answers' levels."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, n)
    lev_a = rng.integers(0, 4, n)
    lev_b = np.where(rng.random(n) < 0.5, lev_a, rng.integers(0, 4, n))
    (folder / "t.toml").write_text(
        'kind = "graded"\nname = "qa"\ninstruction = ""\n[templates]\n'
        'item = "Q: {question}\\nA:"\nexample = "Q: {question}\\nA: {answer}\\n"\n'
        f'[judgment]\nlevels = {json.dumps(LEVELS)}\nscores = {json.dumps(SCORES.tolist())}\n',
        encoding="utf-8")
    (folder / "pool.jsonl").write_text("".join(json.dumps(
        {"id": f"q{i}", "question": f"question {i}?", "answer": f"a{i}",
         "p": round(float(p[i]), 3)}) + "\n" for i in range(n)), encoding="utf-8")
    (folder / "b.jsonl").write_text("".join(json.dumps(
        {"id": f"q{i}", "answer": f"a{i}" if lev_b[i] == lev_a[i] and i % 3 == 0
         else f"b{i}"}) + "\n" for i in range(n)), encoding="utf-8")
    return lev_a, lev_b


def main() -> None:
    """Print the coverages at 30 and 60 labels."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=400)
    ap.add_argument("--seed0", type=int, default=40000)
    ap.add_argument("--acquisition", default=None, help="default: the sessions' default")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    lev_a, lev_b = write_pool(tmp)
    truth_d = float(np.mean(SCORES[lev_b] - SCORES[lev_a]))  # (1 - s_A) - (1 - s_B)
    truth_a = float(np.mean(1 - SCORES[lev_a]))
    hits = {b: {"fixed": 0, "cs": 0, "own": 0, "est": [], "se": []} for b in BUDGETS}
    t0 = time.process_time()
    for k in range(a.seeds):
        db = tmp / f"s{k}.db"
        opts = {"seed": a.seed0 + k, "progress": False, "n_boot": 20,
                "compare": [f"answers:{tmp / 'b.jsonl'}"]}
        if a.acquisition:
            opts["acquisition"] = a.acquisition
        with Session.create(db, pool=str(tmp / "pool.jsonl"), task=str(tmp / "t.toml"),
                            surrogate="column:p", target="pool", **opts) as s:
            spec = s.compared_targets()[0]
            got = 0
            for b in BUDGETS:
                while got < b:
                    s.select(10)
                    ids = [x.item_id for x in s.acquisitions()][got:]
                    s.add_labels([(i, LEVELS[lev_a[int(i[1:])]]) for i in ids])
                    s.judge_many(spec, [(i, LEVELS[lev_b[int(i[1:])]]) for i in ids])
                    got += len(ids)
                r = s.estimate(record=False, progress=False)
                c, h = r.comparisons[0], hits[b]
                d = c.difference_anytime
                h["fixed"] += d.fixed_low <= truth_d <= d.fixed_high
                h["cs"] += d.cs_low <= truth_d <= d.cs_high
                own = r.metrics["error_rate"].anytime
                h["own"] += own.fixed_low <= truth_a <= own.fixed_high
                h["est"].append(c.difference.estimate)
                h["se"].append(d.se)
        db.unlink()
    n = a.seeds
    print(f"graded difference ({a.acquisition or 'default design'}), truth {truth_d:+.4f}, "
          f"{n} seeds from {a.seed0}, {time.process_time() - t0:.0f} CPU-s")
    for b in BUDGETS:
        h = hits[b]
        cov = {key: h[key] / n for key in ("fixed", "cs", "own")}
        se = {key: np.sqrt(v * (1 - v) / n) for key, v in cov.items()}
        print(f"  {b} labels: difference fixed-budget {cov['fixed']:.3f} (SE {se['fixed']:.3f}), "
              f"anytime CS {cov['cs']:.3f}; target's own fixed-budget {cov['own']:.3f}; "
              f"MC sd of the difference {np.std(h['est']):.4f}, median reported SE "
              f"{np.median(h['se']):.4f}")


if __name__ == "__main__":
    main()
