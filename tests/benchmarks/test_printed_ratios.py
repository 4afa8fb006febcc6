"""Ratio columns of the benchmark scripts are the ratios of their printed cells
(benchmarks/_cells.printed_ratio), so that a reader gets them back from the row:
docs/benchmarks.md showed 21.5x beside 11.9 and 0.56 items/s (bench_scoring; the cells
give 21.2) and 1.52x beside 1.56 and 1.02 ms (bench_adaptive; 1.53)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"


def _module(name: str) -> ModuleType:
    """Load ``benchmarks/<name>.py`` as its command would (its folder on the path)."""
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCH))
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
        sys.path.remove(str(BENCH))
    return mod


def test_printed_ratio_rounds_each_side_as_its_cell() -> None:
    cells = _module("_cells")
    # reuse 11.94 (prints 11.9) over naive 0.5551 (prints 0.56): unrounded 21.51
    assert f"{cells.printed_ratio(11.94, 0.5551, digits=1, den_digits=2):.1f}" == "21.2"
    assert f"{cells.printed_ratio(7.9213, 0.06217, den_digits=3):.1f}" == "127.7"
    assert cells.printed_ratio(5.0, 0.0004, den_digits=3) is None
    assert cells.ratio_cell(None) == "-" and cells.ratio_cell(1.525, 1) == "1.5x"


def _scoring_row(bench: ModuleType, backend: str, naive: float, reuse: float) -> object:
    return bench.Row(model="smollm2-135m", backend=backend, shots=50, prefix_tokens=1158,
                     mean_suffix_tokens=30.0, load_s=12.2, naive_items_per_s=naive,
                     reuse_items_per_s=reuse, speedup=reuse / naive, peak_rss_mib=1539.0,
                     naive_flop_fraction=0.56, reuse_flop_fraction=0.33, accuracy=0.653,
                     log_loss=0.617, mean_abs_diff_vs_hf=0.0)


def test_scoring_speedup_is_reuse_over_naive_as_printed() -> None:
    bench = _module("bench_scoring")
    rows = [_scoring_row(bench, "hf", 0.5551, 11.94),       # unrounded 21.5x
            _scoring_row(bench, "llamacpp", 0.1459, 5.946)]  # unrounded 40.8x
    info = {"batch_size": 16, "date": "2026-12-06", "cpu": "cpu", "cores": 2,
            "mem_gib": 23.5, "python": "3.11", "torch": "t", "threads": 2,
            "transformers": "x", "llama_cpp": "y", "load_before": 1.0, "load_after": 1.0,
            "busy": [], "n": 1000, "seed": 0, "naive_n": 20, "rate_f32": 163.4e9,
            "rate_bf16": 1.4e9}
    info["notes"] = bench.notes(rows, info)
    text = bench.render_markdown(rows, info, "python benchmarks/bench_scoring.py")
    assert "| 0.56 | 11.9 | 21.2x |" in text
    # /proc/self/statm pages x page size / 2**20: MiB, and the header says so (it said MB)
    assert "| peak RSS MiB |" in text and "| 1539 |" in text
    assert "| 0.15 | 5.9 | 39.3x |" in text
    assert "prefix reuse is 21x (hf) and 39x (llamacpp) faster" in text
    assert "bfloat16 matmuls ran at 0.01x the float32 rate" in text  # 1 / 163 GFLOP/s
    # the memory factor from the peak RSS cells (the note said '3-5x' whatever they were)
    rows[0].peak_rss_mib, rows[1].peak_rss_mib = 1920.2, 317.4
    extra = _scoring_row(bench, "hf", 0.5, 10.0)
    extra.peak_rss_mib = 1539.0
    low = _scoring_row(bench, "llamacpp", 0.3, 5.0)
    low.peak_rss_mib = 496.0
    got = "\n".join(bench.notes([*rows, extra, low], info))
    assert "needs 3-6x less memory (peak RSS 317-496 MiB against 1,539-1,920)" in got


def test_memory_columns_name_mib() -> None:
    """bench_stats and bench_status_ab divide ru_maxrss (KiB on Linux) by 1024, which is
    MiB; they printed "MB" (4.9% off a 10**6-byte MB)."""
    row = _module("bench_stats").scale_row({"seconds": 0.94, "peak_rss_mib": 273.4})
    assert "0.94 s, peak RSS 273 MiB |" in row
    ab = _module("bench_status_ab").table(
        ["status s.db"], {("status s.db", "baseline"): [0.5, 0.4, 0.6],
                          ("status s.db", "this"): [0.3]},
        {("status s.db", "baseline"): 43, ("status s.db", "this"): 40})
    assert ab[0].endswith("| peak MiB |")
    assert ab[2:] == ["| status s.db | baseline | 0.500 | 0.400 | 0.600 | 43 |",
                      "| status s.db | this | 0.300 | 0.300 | 0.300 | 40 |"]


def test_adaptive_ratios_are_the_cells_ratios() -> None:
    bench = _module("bench_adaptive")
    rows = [{"pool": "mmlu", "method": "fixed_mix+cv_lure", "loss": "log", "ms": 1.0249,
             "base_ms": 0.06217}]  # unrounded 16.49x, the cells 1.02 / 0.062 = 16.45
    mv = [{"design": "fixed_mix", "off": 1.0249, "on": 1.5551}]  # unrounded 1.517x
    one = {"run_ms": 15.4, "resume_ms": 16.0, "base_ms": 30.6}  # unrounded 0.50x
    text = "\n".join(bench.render(rows, mv, one))
    assert "| 1.02 | 0.062 | 16.5x | <= 15 ms |" in text
    assert "| fixed_mix | 1.02 | 1.56 | 1.53x |" in text
    assert "drawing 400: 31 ms, ratio 0.5x)" in text  # 15 / 31 = 0.48


def test_instruction_ratio_is_that_of_the_printed_counts() -> None:
    bench = _module("bench_sessions")
    table = bench.instruction_table({0: [4.9204e9], 50: [6.1476e9]})  # unrounded 1.249
    assert "| 50 | 6.148e9 (1 run(s)) | 1.250 |" in table


def test_stream_by_id_prints_gb_of_1e9_bytes_from_kib() -> None:
    """ru_maxrss is KiB: the script divided it by 1e6 and called that GB (0.40 'GB' for
    409,600,000 bytes)."""
    bench = _module("bench_stream_by_id")
    assert bench.gb(400_000) == 0.4096
    assert f"{bench.gb(4_060_000):.2f}" == "4.16"


def test_harness_runs_ratio_columns_are_those_of_the_printed_medians() -> None:
    """docs/harness.md showed '214 | 838 | 0.25' and '334 | ... | 767 | 0.43': a median of
    100 runs' stops can end in .5 (213.5, 333.5), which the cells print rounded; the
    ratios are now of the cells (0.26, 0.44), and so are the summaries' medians and
    ranges."""
    hr = _module("harness_runs")

    def row(h: float, active: float, uniform: float, wilson: int) -> dict:
        return dict(pool="mmlu_pro_math_8b model 220", surrogate="history", N=1351,
                    acc=0.244, h=h, plan=None, cs="mixture", runs=100, design="svd8",
                    active=active, uniform=uniform, wilson=wilson, a_cov=1.0, u_cov=1.0)

    text = hr.table([row(0.03, 213.5, 838.0, 497), row(0.02, 333.5, 1079.0, 767)], 100)
    assert "| 0.03 | 214 | 838 | 0.26 | 497 | 0.43 |" in text
    assert "| 0.02 | 334 | 1079 | 0.31 | 767 | 0.44 |" in text
    assert "h = 0.03: median ratio to uniform (same CS) 0.26 (range 0.26-0.26)" in text
    assert "to fixed-n Wilson 0.44;" in text


def test_harness_weighted_cs_cells_are_runs_and_the_ratio_of_the_printed_medians() -> None:
    """harness_weighted_cs printed only the ratio of the unrounded medians (a median of
    100 stops can end in .5) beside uniform's median rounded to whole runs, so a reader
    could not get the ratio back; a cell now shows the CS's median runs and the ratio of
    the two as printed."""
    wcs = _module("harness_weighted_cs")
    n = np.array([213.0, 214.0] * 50)  # median 213.5, printed 214
    u_n = np.full(100, 838.0)
    cov = np.ones(100)
    ratio, text = wcs.cell(n, u_n, cov)
    assert text == "214: 0.26 (1.00)" and ratio == 0.26  # unrounded 213.5 / 838 = 0.2548
