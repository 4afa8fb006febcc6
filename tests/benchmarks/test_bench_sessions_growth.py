"""The label sweep's growth measures (benchmarks/bench_sessions.py): the largest median
above 0 labels over the 0-label median, the same of the paired ratios, each with a
bootstrap interval; the instruction table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_sessions_under_test",
                                                  ROOT / "benchmarks" / "bench_sessions.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(spec.name, None)
    return mod


def test_growth_ratio_is_the_largest_median_over_the_zero_label_one() -> None:
    bench = _module()
    res = {0: {"select": [1.0, 1.0, 1.0]}, 50: {"select": [1.2, 1.2, 1.2]},
           500: {"select": [1.1, 1.5, 1.1]}, 2000: {"select": []}}
    ratio, lo, hi = bench.growth_ratio(res)
    assert ratio == 1.2 and lo == 1.2 and hi == 1.5  # 500's resampled median can be 1.5
    assert bench.growth_ratio({0: {"select": [1.0]}}) is None
    rng = np.random.default_rng(1)
    noisy = {0: {"select": list(1.0 + 0.1 * rng.standard_normal(40))},
             50: {"select": list(1.1 + 0.1 * rng.standard_normal(40))}}
    ratio, lo, hi = bench.growth_ratio(noisy)
    assert lo < ratio < hi and 1.0 < ratio < 1.2 and hi - lo < 0.2
    assert "baseline" not in bench.growth_line(noisy) and "1." in bench.growth_line(noisy)


def test_paired_growth_ratio_divides_out_the_machines_drift() -> None:
    """Runs that slow down together over the sweep (a machine's drift): the unpaired
    ratio sees the spread, the paired one the true 1.05 of every run."""
    bench = _module()
    drift = np.linspace(1.0, 1.6, 40)
    res = {0: {"select": list(drift)}, 50: {"select": list(1.02 * drift)},
           2000: {"select": list(1.05 * drift)}}
    ratio, lo, hi = bench.paired_growth_ratio(res)
    assert ratio == pytest.approx(1.05) and lo == pytest.approx(1.05) and hi == pytest.approx(1.05)
    unpaired = bench.growth_ratio(res)
    assert unpaired is not None and unpaired[2] - unpaired[1] > 0.1
    rng = np.random.default_rng(2)
    noisy = {0: {"select": list(drift * (1 + 0.05 * rng.standard_normal(40)))},
             500: {"select": list(1.08 * drift * (1 + 0.05 * rng.standard_normal(40)))}}
    ratio, lo, hi = bench.paired_growth_ratio(noisy)
    # each ratio ~1.08 with sd ~0.08 (two 5% noises): the median of 40 has sd ~1.25 *
    # 0.08 / sqrt(40) ~ 0.016, so +-0.05 is ~3 sd
    assert lo < ratio < hi and 1.03 < ratio < 1.13 and lo < 1.08 < hi
    assert bench.paired_growth_ratio({0: {"select": [1.0]}}) is None
    assert "paired" in bench.growth_line(noisy)


def test_instruction_table() -> None:
    bench = _module()
    table = bench.instruction_table({0: [4.9e9, 5.0e9], 2000: [5.5e9]})
    assert "| 0 | 4.950e9 (2 run(s)) | 1.000 |" in table
    assert "| 2,000 | 5.500e9 (1 run(s)) | 1.111 |" in table


def test_the_ratio_column_is_this_over_baseline_of_the_printed_cells() -> None:
    """The docs' table printed 0.7x beside 0.41 and 0.64 (0.41 / 0.64 = 0.64): the ratio
    came from the unrounded seconds at one decimal. It is now the printed cells' ratio at
    two decimals, so a reader gets it back from the row."""
    bench = _module()
    res = {"baseline": {100_000: {"import": {"cpu": 0.6350, "rss_mib": 115.0}},
                        1_000_000: {"import": {"cpu": 0.52, "rss_mib": 115.0}}},
           "this": {100_000: {"import": {"cpu": 0.4051, "rss_mib": 56.0}},
                    1_000_000: {"import": {"cpu": 0.4349, "rss_mib": 56.0}}}}
    text = bench.table(res, [100_000, 1_000_000], ["baseline", "this"])
    rows = [r for r in text.splitlines() if r.startswith("| import")]
    # ru_maxrss (KiB) / 1024 is MiB, and the header names it so (it said "peak MB")
    assert "| baseline peak MiB |" in text and "MB" not in text
    assert rows[0] == "| import | 1e5 | 0.64 | 115 | 0.41 | 56 | 0.64x |"
    assert rows[1] == "| import | 1e6 | 0.52 | 115 | 0.43 | 56 | 0.83x |"
    # growth from the printed cells too: 0.41 -> 0.43 is x1.0 (not 0.4051 -> 0.4349, x1.1)
    assert bench.growth(res, [100_000, 1_000_000], "this") == "- import: 1e5->1e6: x1.0"
    # one source (no --baseline): the header closes its last cell and the separator has
    # a cell per column (it printed "| ... | this peak MB" over "|---|---|---|", 4 columns
    # under 3, which Markdown does not render as a table)
    one = bench.table({"this": res["this"]}, [100_000], ["this"]).splitlines()
    assert one[:3] == ["| command | N | this CPU s | this peak MiB |", "|---|---|---|---|",
                       "| import | 1e5 | 0.41 | 56 |"]
    zero = {"baseline": {10: {"init": {"cpu": 0.001, "rss_mib": 1.0}}},
            "this": {10: {"init": {"cpu": 0.5, "rss_mib": 1.0}}}}
    assert bench.table(zero, [10], ["baseline", "this"]).splitlines()[-1].endswith(" — |")


def test_printed_ratio_is_the_cells_ratio() -> None:
    """benchmarks/_cells.py, which bench_sessions, bench_difference_floor and
    bench_stream_by_id print their ratio columns with (the docs showed 1.44x beside 0.22
    and 0.15, 1.00 beside 0.40 and 0.39 GB)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _cells import printed_ratio
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert f"{printed_ratio(0.2249, 0.1549):.2f}" == "1.47"  # unrounded: 1.45
    assert f"{printed_ratio(0.40, 0.39):.2f}" == "1.03"
    assert f"{printed_ratio(17.14, 29.94, digits=1):.2f}" == "0.57"
    assert printed_ratio(1.0, 0.004) is None  # the denominator prints as 0.00


def test_the_progress_line_names_the_session_file_apart_from_the_commands() -> None:
    """The line printed as each N finishes showed the session file's size as a command,
    "_file_mb 0.00s/119MB" (a CPU time of 0 and a "peak" of the file's MiB)."""
    bench = _module()
    line = bench.progress_line(1_000_000, "this", {
        "init": {"cpu": 16.531, "rss_mib": 523.4},
        "_file_mib": {"cpu": 0.0, "rss_mib": 119.04}})
    assert line == "N=1e6 this: init 16.53 CPU-s/523 MiB peak; session file 119.0 MiB"
