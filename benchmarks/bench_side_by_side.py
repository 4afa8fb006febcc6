"""Surrogate and target scored one after the other vs side by side (two threads).

What a session (and ``activetest demo``) does when it is created: score the pool
with the surrogate and with the target. Both bundled models run in llama.cpp
with the default thread count (half the cores each), on the demo's generated
reviews with its 8 in-context examples. The baseline (one after the other) and
the side-by-side run are measured in the same process, with fresh scorers and
no score cache; models are loaded before the clock starts.

Reproduce::

    python benchmarks/bench_side_by_side.py            # 400 items; writes docs/benchmarks.md
    python benchmarks/bench_side_by_side.py --n 100 --no-write
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from _cells import printed_ratio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "Side-by-side scoring"


def _scorers(threads: int | None) -> list[Any]:
    from activetest.models.llamacpp import LlamaCppScorer

    out = [LlamaCppScorer(m, n_threads=threads) for m in ("smollm2-135m", "gemma3-270m")]
    for s in out:
        s.tokenize("load")  # load outside the timed region
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; optionally rewrite the doc section."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=400, help="pool items (default 400)")
    p.add_argument("--shots", type=int, default=8)
    p.add_argument("--threads", type=int, default=None,
                   help="threads per model (default: the scorer's, half the cores)")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)

    from activetest.data.demo import demo_items, demo_task
    from activetest.data.split import split_items
    from activetest.models.parallel import run_parallel

    task = demo_task()
    data = demo_items(args.n + max(4 * args.shots, 20), seed=0)
    split = split_items(data, n_examples=args.shots, pool_size=args.n, test_size=0, seed=0,
                        n_classes=task.n_classes)
    items, shots = list(split.pool), list(split.examples)
    load = os.getloadavg()[0]

    a, b = _scorers(args.threads)
    t0 = time.perf_counter()
    ta = time.perf_counter()
    a.score(task, items, shots, progress=False)
    ta = time.perf_counter() - ta
    tb = time.perf_counter()
    b.score(task, items, shots, progress=False)
    tb = time.perf_counter() - tb
    serial = time.perf_counter() - t0
    a.close()
    b.close()

    a, b = _scorers(args.threads)
    t0 = time.perf_counter()
    run_parallel([lambda: a.score(task, items, shots, progress=False),
                  lambda: b.score(task, items, shots, progress=False)], progress=False)
    parallel = time.perf_counter() - t0

    threads = a.n_threads
    ratio = printed_ratio(serial, parallel, digits=1)  # of the seconds as printed
    ideal = printed_ratio(serial, max(round(ta, 1), round(tb, 1)), digits=1)
    lines = [
        f"## {SECTION}", "",
        f"`python benchmarks/bench_side_by_side.py --n {args.n}` "
        f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, load average {load:.1f} at "
        f"the start; {threads} llama.cpp thread(s) per model). Scoring {args.n} demo reviews "
        f"({args.shots}-shot) with the surrogate (SmolLM2-135M) and the target (Gemma 3 270M), "
        "models loaded beforehand, no score cache:", "",
        "| | seconds | items/s (both models) |", "|---|---|---|",
        f"| one after the other (SmolLM2 {ta:.1f} s + Gemma {tb:.1f} s) | {serial:.1f} | "
        f"{args.n / serial:.2f} |",
        f"| side by side (two threads) | {parallel:.1f} | {args.n / parallel:.2f} |", "",
        f"Side by side is **{ratio:.2f}x** faster; the ideal on two cores, both times over the "
        f"slower model's, is {ideal:.2f}x. llama.cpp releases the GIL during "
        "decoding, so two threads need no second process. `activetest demo` (1,000 items, "
        "100 labels, fresh cache) took 302 s one after the other and 194 s side by side on "
        "the idle machine (`time activetest demo --cache-dir $(mktemp -d)`).", ""]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        from _docs import write_section

        write_section(text, SECTION, DOC)
        print(f"wrote section '{SECTION}' of {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
