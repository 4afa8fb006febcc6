"""Scoring throughput: naive full prompts vs few-shot prefix reuse, per backend and model.

For each bundled model (SmolLM2-135M, Gemma 3 270M) and each local backend
(``hf`` = transformers float32, ``hf-bf16`` = transformers bfloat16, ``llamacpp``)
and each number of in-context examples (32, 50), on SST-2 pool items drawn from
``../shared/datasets/sst2/train.tsv``:

* items/s of naive per-item full prompts (on a small subset, ``--naive-n``) and of
  prefix reuse (on all ``--n`` items; the time includes encoding the prefix once);
* peak resident memory (RSS) while scoring, sampled every 20 ms, in MiB (2^20 bytes;
  until 2026-12-06 the same numbers were headed "MB");
* the achieved fraction of a FLOP floor: ``2 x P x T`` FLOPs, P = the model's
  non-embedding parameters (the embedding table is a lookup; the output head is
  applied to the label tokens only), T = real tokens processed (prefix once + all
  item suffixes for prefix reuse; every full prompt for naive), at the float32
  matmul rate measured with torch in the same run. Attention and padding are not
  in the floor, so they show up as lost efficiency;
* accuracy and mean log loss of the prefix-reuse scores, and the mean absolute
  log-prob difference to the ``hf`` float32 scores of the same items.

Every (model, backend) pair runs in a fresh subprocess so that its peak memory is
its own. Results are printed as a table and written to ``docs/benchmarks.md``
(section "Scoring"; other sections are kept).

Reproduce::

    python benchmarks/bench_scoring.py            # full: 1,000 items, 32 and 50 shots
    python benchmarks/bench_scoring.py --n 200 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from _cells import printed_ratio, ratio_cell

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATASETS = ROOT / ".." / "shared" / "datasets"
DOC = ROOT / "docs" / "benchmarks.md"
MODELS = ("smollm2-135m", "gemma3-270m")
BACKENDS = ("hf", "hf-bf16", "llamacpp")
SECTION = "Scoring"


@dataclass
class Row:
    """One (model, backend, shots) measurement."""

    model: str
    backend: str
    shots: int
    prefix_tokens: int
    mean_suffix_tokens: float
    load_s: float
    naive_items_per_s: float
    reuse_items_per_s: float
    speedup: float
    peak_rss_mib: float
    naive_flop_fraction: float
    reuse_flop_fraction: float
    accuracy: float
    log_loss: float
    mean_abs_diff_vs_hf: float | None = None


def shown_speedup(r: Row) -> float | None:
    """Reuse over naive items/s of the two cells as printed (reuse one decimal, naive
    two: ``_cells.printed_ratio``), so that a reader gets the speedup column back from
    them; None where naive prints as 0.00."""
    return printed_ratio(r.reuse_items_per_s, r.naive_items_per_s, digits=1, den_digits=2)


class PeakRSS:
    """Sample this process's resident set size in a thread; ``peak`` in bytes."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self._page

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.peak = self._rss()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())


def matmul_rate(dtype: str = "float32", size: int = 1024, seconds: float = 0.5) -> float:
    """Best-of-3 dense matmul rate in FLOP/s with torch on this machine (default threads)."""
    import torch

    dt = getattr(torch, dtype)
    a = torch.randn(size, size, dtype=dt)
    b = torch.randn(size, size, dtype=dt)
    a @ b  # warm up
    best = 0.0
    for _ in range(3):
        n, t = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - t) < seconds:
            a @ b
            n += 1
        best = max(best, 2 * size**3 * n / elapsed)
    return best


def non_embedding_params(model: str) -> int:
    """Parameters of a bundled GGUF model outside the token-embedding table."""
    from gguf import GGUFReader

    from activetest.models.bundled import bundled_model_path

    reader = GGUFReader(str(bundled_model_path(model)), "r")
    return int(sum(int(t.n_elements) for t in reader.tensors
                   if not t.name.startswith("token_embd")))


def load_sst2(n: int, seed: int) -> tuple[Any, list[Any], list[Any]]:
    """The SST-2 task, 50 stratified in-context examples and ``n`` pool items."""
    from activetest.data.datasets import load_shared

    ds = load_shared("sst2", DATASETS)
    split = ds.split(seed, n_examples=50, pool_size=n, test_size=0)
    return ds.task, list(split.examples), list(split.pool)


def make_scorer(model: str, backend: str, batch_size: int, threads: int) -> Any:
    if backend == "llamacpp":
        from activetest.models.llamacpp import LlamaCppScorer

        return LlamaCppScorer(model, n_ctx=4096, n_threads=threads)
    from activetest.models.hf import HFScorer

    dtype = "bfloat16" if backend == "hf-bf16" else "float32"
    return HFScorer(model, dtype=dtype, batch_size=batch_size, n_threads=threads)


def worker(args: argparse.Namespace) -> None:
    """Measure one (model, backend) pair; writes rows and scores to ``args.result``."""
    task, examples, pool = load_sst2(args.n, args.seed)
    rate = args.rate
    n_params = non_embedding_params(args.model)
    t0 = time.perf_counter()
    scorer = make_scorer(args.model, args.backend, args.batch_size, args.threads)
    scorer.tokenize("load")  # llama.cpp scorers load lazily: time the real load
    load_s = time.perf_counter() - t0
    labels = np.array([it.label for it in pool])
    rows, scores = [], {}
    for shots in args.shots:
        ex = examples[:shots]
        prefix_tokens = len(scorer.prompt_ids(task, pool[0], ex)) - len(
            scorer.tokenize(task.render_item(pool[0])))
        suffix_tokens = np.array([len(scorer.tokenize(task.render_item(it))) for it in pool])
        naive_items = pool[:args.naive_n]
        with PeakRSS() as mem:
            scorer.naive = True
            t = time.perf_counter()
            scorer.score(task, naive_items, ex, progress=False)
            naive_s = time.perf_counter() - t
            scorer.naive = False
            t = time.perf_counter()
            lp = scorer.score(task, pool, ex, progress=not args.quiet)
            reuse_s = time.perf_counter() - t
        naive_tok = args.naive_n * prefix_tokens + suffix_tokens[:args.naive_n].sum()
        reuse_tok = prefix_tokens + suffix_tokens.sum()
        floor = lambda tok: 2.0 * n_params * tok / rate  # noqa: E731 - seconds at the matmul rate
        rows.append(Row(
            model=args.model, backend=args.backend, shots=shots, prefix_tokens=prefix_tokens,
            mean_suffix_tokens=float(suffix_tokens.mean()), load_s=load_s,
            naive_items_per_s=args.naive_n / naive_s, reuse_items_per_s=len(pool) / reuse_s,
            speedup=(len(pool) / reuse_s) / (args.naive_n / naive_s),
            peak_rss_mib=mem.peak / 2**20,
            naive_flop_fraction=floor(naive_tok) / naive_s,
            reuse_flop_fraction=floor(reuse_tok) / reuse_s,
            accuracy=float((lp.argmax(1) == labels).mean()),
            log_loss=float(-lp[np.arange(len(pool)), labels].mean())))
        scores[f"s{shots}"] = lp
        print(f"  {args.model} {args.backend} {shots} shots: "
              f"{rows[-1].reuse_items_per_s:.1f} items/s (naive {rows[-1].naive_items_per_s:.2f})",
              flush=True)
    np.savez(args.result + ".npz", **scores)
    Path(args.result).write_text(json.dumps([asdict(r) for r in rows]))


def machine_info() -> dict[str, Any]:
    import torch
    import transformers

    try:
        import llama_cpp
        llama_version = llama_cpp.__version__
    except ImportError:
        llama_version = "not installed"
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": round(mem_gib, 1),
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "llama_cpp": llama_version,
            "torch_threads": torch.get_num_threads()}


def busy_processes() -> list[str]:
    """Other processes using CPU right now (from ps), to say how loaded the machine was."""
    try:
        out = subprocess.run(["ps", "-eo", "stat,pcpu,args", "--sort=-pcpu"],
                             capture_output=True, text=True, timeout=10).stdout.splitlines()[1:]
    except (OSError, subprocess.SubprocessError):
        return []
    me = str(os.getpid())
    busy = []
    for line in out:
        stat, _, rest = line.strip().partition(" ")
        if stat.startswith("T"):  # stopped (e.g. paused with SIGSTOP for this run): not busy
            continue
        pcpu, _, cmd = rest.strip().partition(" ")
        if float(pcpu) >= 20 and "bench_scoring" not in cmd and me not in cmd:
            busy.append(f"{float(pcpu):.0f}% {cmd.strip()[:80]}")
    return busy[:6]


def render_markdown(rows: list[Row], info: dict[str, Any], command: str) -> str:
    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    lines = [
        f"## {SECTION}", "",
        "Few-shot scoring throughput of the local backends on SST-2 pool items "
        "(`benchmarks/bench_scoring.py`). *Naive* runs every item's full prompt "
        "(instruction + examples + item); *reuse* encodes the shared prefix once and "
        "scores items against its key/value cache (hf: batches of "
        f"{info['batch_size']} right-padded suffixes; llama.cpp: one item at a time, the "
        "context rewound to the end of the prefix). Reuse time includes encoding the prefix.",
        "",
        f"Reproduce: `{command}`", "",
        f"Run {info['date']} on {info['cpu']}, {info['cores']} cores, {info['mem_gib']} GiB "
        f"RAM, no GPU; Python {info['python']}, torch {info['torch']} "
        f"({info['threads']} threads for torch and llama.cpp), transformers "
        f"{info['transformers']}, llama-cpp-python {info['llama_cpp']}. "
        f"Machine load (1-min load average) {info['load_before']:.1f} before and "
        f"{info['load_after']:.1f} after the run"
        + (f"; other busy processes at the start: {'; '.join(info['busy'])}"
           if info["busy"] else "") + ".",
        "",
        f"{info['n']} pool items (seed {info['seed']}), naive timed on the first "
        f"{info['naive_n']}. FLOP floor: 2 x non-embedding parameters x real tokens "
        f"processed, at the torch float32 matmul rate measured in this run "
        f"({info['rate_f32'] / 1e9:.0f} GFLOP/s; bfloat16 {info['rate_bf16'] / 1e9:.0f} "
        "GFLOP/s); it ignores attention and padding, and llama.cpp's quantised kernels "
        "are not bound by the float32 rate. Peak RSS is sampled while scoring. "
        "|Δ hf| = mean absolute log-prob difference to the hf float32 scores of the same items.",
        "",
        "| model | backend | shots | prefix tok | naive items/s | reuse items/s | speedup "
        "| peak RSS MiB | FLOP frac naive | FLOP frac reuse | accuracy | log loss | \\|Δ hf\\| "
        "| load s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.model} | {r.backend} | {r.shots} | {r.prefix_tokens} | "
            f"{f(r.naive_items_per_s, 2)} | {f(r.reuse_items_per_s)} | "
            f"{ratio_cell(shown_speedup(r), 1)} | "
            f"{r.peak_rss_mib:.0f} | {f(r.naive_flop_fraction, 2)} | "
            f"{f(r.reuse_flop_fraction, 2)} | {f(r.accuracy, 3)} | {f(r.log_loss, 3)} | "
            f"{f(r.mean_abs_diff_vs_hf, 3)} | {f(r.load_s)} |")
    lines += ["", *info.get("notes", []), ""]
    return "\n".join(lines)


def memory_factor(rows: list[Row]) -> str:
    """How much less memory llama.cpp needs than hf, from the peak RSS cells as printed
    (whole MiB): the smallest and the largest hf peak over the largest and the smallest
    llama.cpp one ("3-6x less memory (peak RSS 317-496 MiB against 1,539-1,920)")."""
    hf = [round(r.peak_rss_mib) for r in rows if r.backend == "hf"]
    ll = [round(r.peak_rss_mib) for r in rows if r.backend == "llamacpp"]
    if not hf or not ll or min(ll) <= 0:
        return "less memory"
    lo, hi = min(hf) / max(ll), max(hf) / min(ll)
    span = f"{lo:.0f}x" if f"{lo:.0f}" == f"{hi:.0f}" else f"{lo:.0f}-{hi:.0f}x"
    return (f"{span} less memory (peak RSS {min(ll):,}-{max(ll):,} MiB against "
            f"{min(hf):,}-{max(hf):,})")


def notes(rows: list[Row], info: dict[str, Any]) -> list[str]:
    """Findings that follow from the numbers (fastest backend, speedups, bfloat16)."""
    out = []
    top = max(r.shots for r in rows) if rows else 0
    for model in dict.fromkeys(r.model for r in rows):
        at = sorted((r for r in rows if r.model == model and r.shots == top),
                    key=lambda r: -r.reuse_items_per_s)
        if at:
            others = ", ".join(f"{r.backend} {r.reuse_items_per_s:.1f}" for r in at[1:])
            speedups = " and ".join(f"{ratio_cell(shown_speedup(r), 0)} ({r.backend})" for r in at)
            out.append(f"- {model}, {top} shots: fastest with prefix reuse is **{at[0].backend}** "
                       f"({at[0].reuse_items_per_s:.1f} items/s{'; ' + others if others else ''}"
                       f"); prefix reuse is {speedups} faster than naive full prompts.")
    out.append("- load s: time to construct the scorer and load the model in a fresh process; "
               "for hf this reads the cached safetensors conversion (the one-time GGUF "
               "conversion is not included) and the tokenizer.")
    out.append("- Default backend for GGUF models: **llamacpp**, although hf is faster per model "
               "here. A session scores two models: llama.cpp runs them side by side, one core "
               "each (see 'Side-by-side scoring'), which matches hf running them one after the "
               "other with both cores, and it loads in about a second instead of 10-30 s "
               "(paid again by every CLI command that scores), needs "
               f"{memory_factor(rows)}, and needs "
               "no torch (the `hf` extra is optional). Scores differ between the backends by "
               "the |Δ hf| column (quantised vs dequantised weights), so the default must not "
               "depend on what happens to be installed. For one big pool on a machine with the "
               "extra, `hf:<model>` is the faster choice.")
    ratio = printed_ratio(info["rate_bf16"] / 1e9, info["rate_f32"] / 1e9, digits=0)
    out.append(f"- torch bfloat16 matmuls ran at {'-' if ratio is None else f'{ratio:.2f}'}x "
               "the float32 rate on this CPU "
               "(no native bfloat16 instructions such as AVX512-BF16/AMX), so the hf backend "
               "defaults to float32, which also matches naive scoring to ~1e-5.")
    return out


def write_section(text: str, path: Path = DOC) -> None:
    """Replace (or append) the ``## Scoring`` section of ``path``, keeping the others."""
    from _docs import write_section as write

    write(text, SECTION, path)


def print_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Scoring throughput (SST-2)")
    for col in ("model", "backend", "shots", "prefix", "naive/s", "reuse/s", "speedup",
                "RSS MiB", "FLOP% naive", "FLOP% reuse", "acc", "log loss", "|Δ hf|"):
        table.add_column(col, justify="left" if col in ("model", "backend") else "right")
    for r in rows:
        table.add_row(r.model, r.backend, str(r.shots), str(r.prefix_tokens),
                      f"{r.naive_items_per_s:.2f}", f"{r.reuse_items_per_s:.1f}",
                      ratio_cell(shown_speedup(r), 1), f"{r.peak_rss_mib:.0f}",
                      f"{100 * r.naive_flop_fraction:.0f}", f"{100 * r.reuse_flop_fraction:.0f}",
                      f"{r.accuracy:.3f}", f"{r.log_loss:.3f}",
                      "-" if r.mean_abs_diff_vs_hf is None else f"{r.mean_abs_diff_vs_hf:.3f}")
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1000, help="pool items (default 1000)")
    p.add_argument("--naive-n", type=int, default=20, help="items timed naively (default 20)")
    p.add_argument("--shots", type=int, nargs="+", default=[32, 50])
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--backends", nargs="+", default=["hf", "llamacpp"], choices=BACKENDS,
                   help="hf-bf16 is emulated (slow) on CPUs without AVX512-BF16/AMX")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="CPU threads for torch and llama.cpp (default: all cores)")
    p.add_argument("--no-write", action="store_true", help=f"do not update {DOC.name}")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--worker", nargs=2, metavar=("MODEL", "BACKEND"), help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--rate", type=float, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if not (DATASETS / "sst2" / "train.tsv").is_file():
        print(f"skipped: SST-2 not found at {DATASETS / 'sst2' / 'train.tsv'}")
        return 0
    if args.naive_n > args.n or max(args.shots) > 50:
        p.error("--naive-n must be <= --n and shots <= 50")
    if args.worker:
        args.model, args.backend = args.worker
        worker(args)
        return 0

    import torch

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()[0]
    busy = busy_processes()
    rate_f32, rate_bf16 = matmul_rate("float32"), matmul_rate("bfloat16")
    print(f"torch matmul: float32 {rate_f32 / 1e9:.0f} GFLOP/s, bfloat16 {rate_bf16 / 1e9:.0f} "
          f"GFLOP/s; load average {load_before:.1f}", flush=True)
    rows: list[Row] = []
    scores: dict[tuple[str, str], Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models:
            for backend in args.backends:
                result = str(Path(tmp) / f"{model}-{backend}.json")
                cmd = [sys.executable, __file__, "--worker", model, backend, "--result", result,
                       "--rate", repr(rate_f32), "--n", str(args.n), "--naive-n",
                       str(args.naive_n), "--batch-size", str(args.batch_size), "--threads",
                       str(args.threads), "--seed", str(args.seed), "--shots",
                       *map(str, args.shots)]
                if args.quiet:
                    cmd.append("--quiet")
                print(f"{model} / {backend} ...", flush=True)
                proc = subprocess.run(cmd)
                if proc.returncode != 0:
                    print(f"  failed (exit {proc.returncode}); skipped", flush=True)
                    continue
                rows += [Row(**r) for r in json.loads(Path(result).read_text())]
                with np.load(result + ".npz") as z:
                    scores[(model, backend)] = {k: z[k] for k in z.files}
    for r in rows:
        ref = scores.get((r.model, "hf"))
        if ref is not None:
            key = f"s{r.shots}"
            r.mean_abs_diff_vs_hf = float(np.abs(scores[(r.model, r.backend)][key]
                                                 - ref[key]).mean())
    print_table(rows)
    info = {**machine_info(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_before": load_before, "load_after": os.getloadavg()[0], "busy": busy,
            "rate_f32": rate_f32, "rate_bf16": rate_bf16, "n": args.n, "naive_n": args.naive_n,
            "seed": args.seed, "batch_size": args.batch_size, "threads": args.threads}
    info["notes"] = notes(rows, info)
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--quiet"]
    command = " ".join(["python benchmarks/bench_scoring.py", *shown])
    if not args.no_write:
        write_section(render_markdown(rows, info, command))
        print(f"wrote section '{SECTION}' of {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
