"""llama.cpp with its extra CPU buffer types (AMX / repacked weights) on vs off.

The AMX workaround (:mod:`activetest.models.llama_cpu`) loads models with
``use_extra_bufts = False`` where the llama.cpp build has AMX kernels. Those
buffer types also carry the AVX2/AVX-512 weight repacking, so turning them off
everywhere would cost speed on CPUs without AMX. This measures that cost: each
setting scores the same demo reviews (few-shot, prefix reuse, as a session does)
in a fresh child process (a setting that crashes, as "on" does on AMX builds,
is reported, not fatal), alternating the settings ``--repeats`` times. Load
time is measured apart from scoring.

To measure a CPU without AMX on an AMX machine, run it with a llama-cpp-python
built without AMX kernels, e.g. in its own venv::

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON" \
      pip install --no-cache-dir llama-cpp-python==0.3.36

Reproduce::

    python benchmarks/bench_extra_bufts.py --label "AVX-512 build, no AMX"   # writes the doc
    python benchmarks/bench_extra_bufts.py --n 50 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _cells import printed_ratio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DOC = ROOT / "docs" / "benchmarks.md"
SECTION = "llama.cpp extra buffer types"
MODELS = ("smollm2-135m", "gemma3-270m")


def _worker(model: str, n: int, shots: int, threads: int) -> None:
    from activetest.data.demo import demo_items, demo_task
    from activetest.data.split import split_items
    from activetest.models.llamacpp import LlamaCppScorer

    task = demo_task()
    data = demo_items(n + max(4 * shots, 20), seed=0)
    split = split_items(data, n_examples=shots, pool_size=n, test_size=0, seed=0,
                        n_classes=task.n_classes)
    scorer = LlamaCppScorer(model, n_threads=threads)
    t0 = time.perf_counter()
    scorer.tokenize("load")
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    lp = scorer.score(task, list(split.pool), list(split.examples), progress=False)
    score = time.perf_counter() - t0
    print(json.dumps({"load": load, "score": score, "extra_bufts": scorer.extra_bufts,
                      "checksum": float(lp.sum())}))


def _run(model: str, setting: str, args: argparse.Namespace) -> dict[str, object]:
    env = {**os.environ, "ACTIVETEST_LLAMA_EXTRA_BUFTS": setting,
           "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, __file__, "--worker", model, "--n", str(args.n),
                           "--shots", str(args.shots), "--threads", str(args.threads)],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        why = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return {"error": why}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _cell(c: tuple[float | None, float | None, object], n: int) -> str:
    if c[0] is None or c[1] is None:
        return f"crashes ({c[2]})"
    return f"{c[0]:.1f} s ({n / c[0]:.1f} items/s), load {c[1]:.2f} s"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the table; optionally rewrite the doc section."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=300, help="pool items (default 300)")
    p.add_argument("--shots", type=int, default=8)
    p.add_argument("--threads", type=int, default=1,
                   help="llama.cpp threads (default 1, what each model gets side by side "
                        "on 2 cores)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--label", default=None, help="what build/CPU this is, for the doc")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.n, args.shots, args.threads)
        return 0

    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode(errors="replace").strip()
    features = [f.split("=")[0].strip() for f in info.replace("CPU :", "").split("|")
                if f.strip().endswith("= 1")]
    load_avg = os.getloadavg()[0]
    results: dict[tuple[str, str], list[dict[str, object]]] = {}
    for _ in range(args.repeats):
        for model in MODELS:
            for setting in ("on", "off"):
                results.setdefault((model, setting), []).append(_run(model, setting, args))
    rows = []
    for model in MODELS:
        cells = {}
        for setting in ("on", "off"):
            runs = results[(model, setting)]
            errors = [r["error"] for r in runs if "error" in r]
            ok = [r for r in runs if "error" not in r]
            cells[setting] = (min(float(r["score"]) for r in ok) if ok else None,
                              min(float(r["load"]) for r in ok) if ok else None,
                              errors[0] if errors else None)
        on, off = cells["on"], cells["off"]
        r = printed_ratio(off[0], on[0], digits=1) if on[0] and off[0] else None
        ratio = "n/a" if r is None else f"{r:.2f}x"  # of the seconds as _cell prints them
        rows.append(f"| {model} | {_cell(on, args.n)} | {_cell(off, args.n)} | {ratio} |")
    label = args.label or "this machine's build"
    text = "\n".join([
        f"### {label}", "",
        f"`python benchmarks/bench_extra_bufts.py --label \"{label}\"` "
        f"({time.strftime('%Y-%m-%d')}; llama.cpp features: {', '.join(features)}; "
        f"{args.threads} thread(s), {args.n} demo reviews {args.shots}-shot, best of "
        f"{args.repeats}, load average {load_avg:.1f} at the start):", "",
        "| model | extra buffer types on | off | off / on (time) |", "|---|---|---|---|",
        *rows, ""])
    print(text)
    if not args.no_write:
        _write(text, label)
        print(f"wrote '{label}' in section '{SECTION}' of {DOC}")
    return 0


_INTRO = """## llama.cpp extra buffer types

llama.cpp 0.3.36 (llama-cpp-python) built on an AMX CPU crashes in its AMX kernels
(SIGSEGV in `ggml_backend_amx_mul_mat`, llama.cpp issue 20824). activetest loads
models with `use_extra_bufts = False` only where the build has AMX kernels
(`activetest.models.llama_cpu`; override with `ACTIVETEST_LLAMA_EXTRA_BUFTS=on|off`).
The extra buffer types also hold the repacked AVX2/AVX-512 weight layouts, so the
question is what turning them off costs where the crash does not happen. Each
subsection is one build, measured by `benchmarks/bench_extra_bufts.py` (the
settings alternate, each in a fresh process; scoring time excludes loading).

Conclusion (2026-12-01; see each run's load average): off / on is 0.98-1.03x on an AVX-512 and on
an AVX2 build, i.e. no measurable cost for these quantisations (Q4_1, Q4_K_M) at
one thread; on the AMX build "on" crashes both models and "off" runs at the speed
of the other builds. So the rule (off only where the build has AMX kernels) costs
nothing anywhere, and keeps the other builds exactly as llama.cpp ships them.
"""


def _write(text: str, label: str) -> None:
    import re

    from _docs import write_section

    doc = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    m = re.search(rf"^## {re.escape(SECTION)}\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    body = m.group(1) if m else ""
    subs = dict(re.findall(r"^### (.+?)\n(.*?)(?=^### |\Z)", body, re.S | re.M))
    subs[label] = text.split("\n", 1)[1]  # one subsection per build, the others kept
    parts = [_INTRO] + [f"### {k}\n{v.strip()}\n" for k, v in subs.items()]
    write_section("\n".join(parts), SECTION, DOC)


if __name__ == "__main__":
    raise SystemExit(main())
