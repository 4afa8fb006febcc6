"""Sessions at pool scale: every CLI command's CPU seconds and peak memory against N.

Reproduce::

    nice -n 10 python benchmarks/bench_sessions.py --n 1e4 1e5 1e6 \
        --baseline /path/to/old/checkout/src     # writes its section of docs/benchmarks.md
    nice -n 10 python benchmarks/bench_sessions.py --n 1e7 --format parquet --no-write
    python benchmarks/bench_sessions.py --n 1e6 --labels 0 50 500 2000 --repeat 40 \
        --select-only --no-write                  # select's growth with the labels held
    python benchmarks/bench_sessions.py --n 1e6 --labels 0 50 500 2000 --repeat 2 \
        --instructions --no-write                 # the same in instructions (valgrind)

Per N, a synthetic SST-2 pool (``id``, ``sentence``, ``label``) and two prediction
tables (``table:`` surrogate and target, random log-probs) are written once into a
cache folder; then each command runs as its own ``python -m activetest`` child of a
small measuring process, which reports the CPU seconds (user + system) and the peak
resident memory (``ru_maxrss``, KiB on Linux, printed in MiB = 2^20 bytes: the
tables' "peak MiB"; until 2026-12-06 they said "MB" of the same numbers) of its
children: ``init`` (default acquisition, the
adaptive design), ``status``, ``select --n 50``, ``import`` of those 50 labels,
``estimate``, ``report`` and a second ``select --n 50`` with the labels held.

``--labels 0 50 500 2000`` (one N) measures instead how ``select --n 50`` and
``estimate`` grow with the labels a session holds: the session is grown as people run
it, rounds of ``select --n 50``, the round's labels (from the pool's label column) and
an ``estimate`` (in one untimed child process), and the file kept at each label count;
then a copy of each kept file is measured by the round's next commands (``select --n
50``; its labels; ``estimate``, each as its own timed process), ``--repeat`` times, the
label counts interleaved (every count in each repeat, the order rotated;
``--select-only``: the ``select`` alone). ``estimate*``
is one estimate of a copy whose stored blind-spot state was deleted (what a file
without one, written before, costs at its first estimate; ``select`` stores the state
since). With ``--baseline SRC`` the
other checkout's commands run on the same copies, alternating with this one's. The
sweep prints the growth of ``select`` two ways: the largest median over the 0-label
median (:func:`growth_ratio`) and the largest median of each run over the 0-label run
of its repeat (:func:`paired_growth_ratio`, which a drift of the machine's speed over
the sweep does not move), each with a 95% bootstrap interval.

``--labels ... --instructions`` counts instead the instructions of ``select --n 50`` at
each label count under valgrind's cachegrind (``--repeat`` runs each; numba's kernels
built for a generic x86-64 CPU in both): a measure of the work that a shared machine's
load cannot move, though it counts no memory stall. About half a minute per run at 1e6.

CPU seconds, not wall time: the machine is shared, and the commands are
single-threaded. ``--baseline SRC`` runs the same commands with another checkout's
``src`` on ``PYTHONPATH`` in the same run (the ratio column is this / baseline, of the
CPU seconds as the table prints them, so that a reader gets it back from the cells).

Each source is measured as an installed package runs: its modules compiled to bytecode
first (``compileall``; ``PYTHONDONTWRITEBYTECODE`` is dropped from the commands'
environment, which would otherwise make every command compile activetest's source
again) and its numba kernels compiled into their cache by an untimed session of 1,000
items. The date and the load average before and after are printed with the table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _cells import printed_ratio  # noqa: E402

SECTION = "Sessions at pool scale"
COMMANDS = ("init", "status", "select", "import", "estimate", "report", "select2")
#: activetest.stats.adaptive.LAZY_MIN_ROWS (not imported here: the bench measures
#: other checkouts too)
LAZY_ROWS = 262_144

_MEASURE = r"""
import json, os, resource, signal, subprocess, sys, tempfile, time
floor_mib = float(sys.argv[1])  # stop the command when the machine has less available (MiB)
err = tempfile.TemporaryFile()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err,
                     start_new_session=True)
stopped = ""
while p.poll() is None:
    time.sleep(2)
    with open("/proc/meminfo") as f:
        # /proc/meminfo's "kB" are KiB: / 1024 is MiB
        avail = next(int(x.split()[1]) for x in f if x.startswith("MemAvailable")) / 1024
    if floor_mib > 0 and avail < floor_mib and p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        stopped = f"stopped: MemAvailable {avail:.0f} MiB < {floor_mib:.0f} MiB"
        p.wait()
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
err.seek(0)
print(json.dumps({"rc": p.returncode, "cpu": ru.ru_utime + ru.ru_stime,
                  "rss_mib": ru.ru_maxrss / 1024,  # ru_maxrss: KiB on Linux
                  "err": (stopped + "\n" + err.read().decode())[-2000:]}))
"""

#: ``--min-available-gib``: stop a command when the machine's available memory falls
#: below this many MiB (0: never); the machine may be shared.
MIN_AVAILABLE_MIB = 0.0


def make_inputs(folder: Path, n: int, fmt: str, seed: int = 0) -> tuple[Path, Path, Path]:
    """Write (once) the pool and the two prediction tables of ``n`` items in ``fmt``
    (``csv`` or ``parquet``), in chunks of 1M rows; returns their paths."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    paths = tuple(folder / f"{name}.{fmt}" for name in ("pool", "surrogate", "target"))
    done = folder / f"done.{fmt}"
    if done.exists():
        return paths  # type: ignore[return-value]
    rng = np.random.default_rng(seed)
    writers: list = [None, None, None]
    words = np.array(["a fine film", "dull and long", "the cast shines", "a mess",
                      "worth a look", "never again", "quietly moving"])
    chunk = 1_000_000
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        ids = pc.binary_join_element_wise("i", pc.cast(pa.array(np.arange(start, start + m)),
                                                       pa.string()), "")
        y = rng.integers(0, 2, m)
        text = pc.binary_join_element_wise(
            pa.array(words[rng.integers(0, len(words), m)]), pc.cast(
                pa.array(np.arange(start, start + m)), pa.string()), " #")
        tables = [pa.table({"id": ids, "sentence": text,
                            "label": pa.array(np.array(["negative", "positive"])[y])})]
        for quality in (1.0, 2.0):  # surrogate, target: logits leaning to the label
            z = rng.normal(0, 1, (m, 2))
            z[np.arange(m), y] += quality
            lp = z - np.logaddexp(z[:, 0], z[:, 1])[:, None]
            tables.append(pa.table({"id": ids, "negative": lp[:, 0], "positive": lp[:, 1]}))
        for k, t in enumerate(tables):
            if writers[k] is None:
                writers[k] = (pq.ParquetWriter(paths[k], t.schema) if fmt == "parquet"
                              else pcsv.CSVWriter(paths[k], t.schema))
            writers[k].write_table(t)
    for w in writers:
        w.close()
    done.touch()
    return paths  # type: ignore[return-value]


def _env(src: Path, workdir: Path, **extra: str) -> dict[str, str]:
    """A child's environment: ``src`` on the path, the session cache in ``workdir``, no
    display, bytecode kept (as an installed package has it), and ``extra``."""
    env = {**os.environ, "PYTHONPATH": str(src), "ACTIVETEST_CACHE": str(workdir / "cache"),
           "MPLBACKEND": "Agg", **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(src: Path, args: list[str], workdir: Path) -> dict:
    env = _env(src, workdir)
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(MIN_AVAILABLE_MIB),
                          sys.executable, "-m", "activetest", *args], capture_output=True,
                         text=True, env=env, cwd=workdir, check=True)
    res = json.loads(out.stdout)
    if res["rc"] != 0:
        raise RuntimeError(f"activetest {' '.join(args)} failed ({res['rc']}):\n{res['err']}")
    return res


def _drawn(db: Path) -> list[int]:
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT idx FROM acquisitions ORDER BY step")]
    finally:
        con.close()


def run_commands(src: Path, inputs: tuple[Path, Path, Path], workdir: Path, fmt: str,
                 commands: tuple[str, ...]) -> dict[str, dict]:
    """Run the session's commands with ``src`` on the path; returns command -> measures."""
    pool, sur, tgt = inputs
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    db = workdir / "s.db"
    out: dict[str, dict] = {}
    out["init"] = _run(src, ["init", str(db), "--pool", str(pool), "--task", "sst2",
                             "--id-column", "id", "--surrogate", f"table:{sur}",
                             "--target", f"table:{tgt}", "--seed", "0", "--no-progress",
                             "--no-cache"], workdir)
    out["status"] = _run(src, ["status", str(db)], workdir)
    out["select"] = _run(src, ["select", str(db), "--n", "50"], workdir)
    if "import" in commands:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        rows = _drawn(db)
        if fmt == "parquet":  # only the row groups holding the drawn rows (1e8: 1 GB)
            pf = pq.ParquetFile(pool)
            starts = np.cumsum([0] + [pf.metadata.row_group(g).num_rows
                                      for g in range(pf.num_row_groups)])
            groups = sorted({int(np.searchsorted(starts, r, "right")) - 1 for r in rows})
            col = pa.chunked_array([pf.read_row_group(g, columns=["label"])["label"]
                                    .combine_chunks() for g in groups])
            at = {g: int(sum(starts[h + 1] - starts[h] for h in groups[:j]))
                  for j, g in enumerate(groups)}
            rows_in = [at[g] + r - int(starts[g]) for r in rows
                       for g in [int(np.searchsorted(starts, r, "right")) - 1]]
            labels = pc.take(col, rows_in).to_pylist()
        else:
            import pyarrow.csv as pcsv

            col = pcsv.read_csv(pool, convert_options=pcsv.ConvertOptions(
                include_columns=["label"]))["label"]
            labels = pc.take(col, rows).to_pylist()
        sheet = workdir / "labels.csv"
        sheet.write_text("item_id,label\n" + "".join(
            f"i{i},{y}\n" for i, y in zip(rows, labels, strict=True)))
        out["import"] = _run(src, ["import", str(db), str(sheet)], workdir)
    if "estimate" in commands:
        out["estimate"] = _run(src, ["estimate", str(db), "--no-progress"], workdir)
    if "report" in commands:
        out["report"] = _run(src, ["report", str(db), "--out", str(workdir / "report"),
                                   "--no-progress"], workdir)
    if "select2" in commands:
        out["select2"] = _run(src, ["select", str(db), "--n", "50"], workdir)
    out["_file_mib"] = {"cpu": 0.0, "rss_mib": db.stat().st_size / 2**20}
    return out


_GROW = r"""
import sys
from activetest.session.workflow import Session
db, want, step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with Session.open(db) as s:
    while len(s.acquisitions()) < want:
        s.select(min(step, want - len(s.acquisitions())))
        s.label_from_data()
        s.estimate(progress=False)
"""


def _grow(src: Path, db: Path, labels: int, step: int, workdir: Path) -> None:
    env = _env(src, workdir)
    subprocess.run([sys.executable, "-c", _GROW, str(db), str(labels), str(step)], env=env,
                   cwd=workdir, check=True, stdout=subprocess.DEVNULL)


def grow_snapshots(src: Path, inputs: tuple[Path, Path, Path], workdir: Path,
                   levels: list[int]) -> dict[int, Path]:
    """A session (``init`` in a fresh ``workdir``) grown with ``src`` in rounds of 50
    (:func:`_grow`) and its file kept at each label count: level -> kept file."""
    pool, sur, tgt = inputs
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    db = workdir / "s.db"
    _run(src, ["init", str(db), "--pool", str(pool), "--task", "sst2", "--id-column", "id",
               "--surrogate", f"table:{sur}", "--target", f"table:{tgt}", "--seed", "0",
               "--no-progress", "--no-cache"], workdir)
    snapshots: dict[int, Path] = {}
    for level in sorted(levels):  # grown once; each level's file kept
        _grow(src, db, level, 50, workdir)
        snapshots[level] = workdir / f"s-{level}.db"
        shutil.copy(db, snapshots[level])
    return snapshots


def label_sweep(src: Path, inputs: tuple[Path, Path, Path], workdir: Path,
                levels: list[int], repeat: int = 2, baseline: Path | None = None,
                select_only: bool = False) -> dict[int, dict[str, list[float]]]:
    """labels held -> command -> CPU seconds of each repeat (module docstring).
    ``baseline``: another checkout's ``src``, measured on the same copies in the same
    minutes (its commands' keys get a ``base `` prefix; the order of the two alternates
    from repeat to repeat); the session is grown with ``src``."""
    sources = [("", src)] + ([] if baseline is None else [("base ", baseline)])
    levels = sorted(levels)
    snapshots = grow_snapshots(src, inputs, workdir, levels)
    out: dict[int, dict[str, list[float]]] = {
        level: {f"{p}{c}": [] for p, _ in sources for c in ("select", "estimate", "estimate*")}
        for level in levels}
    copy = workdir / "copy.db"
    for r in range(repeat):
        # interleaved: every level in each repeat, the order rotated from repeat to repeat,
        # so that a change in the machine's load falls on all levels alike
        for level in levels[r % len(levels):] + levels[:r % len(levels)]:
            got = out[level]
            for prefix, source in (sources if r % 2 else sources[::-1]):
                shutil.copy(snapshots[level], copy)
                got[f"{prefix}select"].append(
                    _run(source, ["select", str(copy), "--n", "50"], workdir)["cpu"])
                if select_only:
                    continue
                _label_all(src, copy, workdir)
                got[f"{prefix}estimate"].append(
                    _run(source, ["estimate", str(copy), "--no-progress"], workdir)["cpu"])
    for level in levels:
        got = out[level]
        if level >= 50 and not select_only:
            for prefix, source in sources:
                shutil.copy(snapshots[level], copy)
                con = sqlite3.connect(copy)
                con.execute("DROP TABLE IF EXISTS blind_spot_checkpoint")
                con.commit()
                con.close()
                got[f"{prefix}estimate*"].append(
                    _run(source, ["estimate", str(copy), "--no-progress"], workdir)["cpu"])
        print(f"labels {level}: " + ", ".join(
            f"{c} " + "/".join(f"{x:.2f}" for x in v) for c, v in got.items()), flush=True)
    return out


_LABEL = r"""
import sys
from activetest.session.workflow import Session
with Session.open(sys.argv[1]) as s:
    s.label_from_data()
"""


def _label_all(src: Path, db: Path, workdir: Path) -> None:
    env = _env(src, workdir)
    subprocess.run([sys.executable, "-c", _LABEL, str(db)], env=env, cwd=workdir, check=True)


def _cell(xs: list[float]) -> str:
    """Each value (up to three), else the median and the range."""
    if not xs:
        return "-"
    if len(xs) <= 3:
        return ", ".join(f"{x:.2f}" for x in xs)
    return f"{float(np.median(xs)):.2f} ({min(xs):.2f}-{max(xs):.2f}; {len(xs)} runs)"


def sweep_table(res: dict[int, dict[str, list[float]]]) -> str:
    """Markdown: labels held -> CPU s of ``select --n 50``, ``estimate``, ``estimate*``
    (and the baseline's, where measured)."""
    cmds = ["select", "estimate", "estimate*"]
    heads = ["select --n 50", "estimate (50 new labels)", "estimate* (no stored state)"]
    if any("base select" in got for got in res.values()):
        cmds = [c for c in cmds for c in (f"base {c}", c)]
        heads = [h for h in heads for h in (f"baseline: {h}", f"this: {h}")]
    lines = ["| labels held | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]
    for level, got in sorted(res.items()):
        cells = [_cell(got.get(c, [])) for c in cmds]
        lines.append(f"| {level:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def growth_ratio(res: dict[int, dict[str, list[float]]], command: str = "select",
                 boot: int = 2000, seed: int = 0) -> tuple[float, float, float] | None:
    """The issue's measure of a command's growth with the labels held: the largest
    median over the label counts above 0 divided by the 0-label median, with a 95%
    percentile bootstrap interval (each count's runs resampled with replacement,
    ``boot`` times, seeded); None without a 0-label count and one more."""
    base = res.get(0, {}).get(command, [])
    rest = [got[command] for level, got in sorted(res.items()) if level > 0
            and got.get(command)]
    if not base or not rest:
        return None

    def ratio(b: np.ndarray, rs: list[np.ndarray]) -> float:
        return max(float(np.median(r)) for r in rs) / float(np.median(b))

    rng = np.random.default_rng(seed)
    b0 = np.asarray(base)
    r0 = [np.asarray(r) for r in rest]
    draws = [ratio(rng.choice(b0, b0.size), [rng.choice(r, r.size) for r in r0])
             for _ in range(boot)]
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return ratio(b0, r0), float(lo), float(hi)


def paired_growth_ratio(res: dict[int, dict[str, list[float]]], command: str = "select",
                        boot: int = 2000, seed: int = 0
                        ) -> tuple[float, float, float] | None:
    """:func:`growth_ratio` by pairs: each label count's runs divided by the 0-label run
    of the same repeat (the sweep runs every count once per repeat, minutes apart at
    most, so a drift of the machine's speed over the run divides out), the median of
    those ratios per count, the largest over the counts; 95% percentile bootstrap
    interval resampling the repeats (the same repeats for every count), seeded. None
    without a 0-label count and one more."""
    base = np.asarray(res.get(0, {}).get(command, []), dtype=np.float64)
    rest = [np.asarray(got[command], dtype=np.float64) for level, got in sorted(res.items())
            if level > 0 and got.get(command)]
    if not base.size or not rest:
        return None
    n = min([base.size] + [r.size for r in rest])
    ratios = np.stack([r[:n] / base[:n] for r in rest])  # (counts, repeats)

    def stat(cols: np.ndarray) -> float:
        return float(np.median(ratios[:, cols], axis=1).max())

    rng = np.random.default_rng(seed)
    draws = [stat(rng.integers(0, n, n)) for _ in range(boot)]
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return stat(np.arange(n)), float(lo), float(hi)


def growth_line(res: dict[int, dict[str, list[float]]]) -> str:
    """Per source: :func:`growth_ratio` of ``select`` and :func:`paired_growth_ratio`
    (and the baseline's)."""
    out = []
    for prefix, name in (("", "this"), ("base ", "baseline")):
        got = growth_ratio(res, f"{prefix}select")
        if got is not None:
            out.append(f"{name}: largest median over 50+ labels / 0-label median of select "
                       f"--n 50 = {got[0]:.3f} (95% bootstrap interval over the runs "
                       f"{got[1]:.3f}-{got[2]:.3f})")
        got = paired_growth_ratio(res, f"{prefix}select")
        if got is not None:
            out.append(f"{name}: largest median of the paired ratios (each run over the "
                       f"0-label run of its repeat) = {got[0]:.3f} (95% bootstrap interval "
                       f"over the repeats {got[1]:.3f}-{got[2]:.3f})")
    return "\n".join(out)


def _instructions(src: Path, args: list[str], workdir: Path) -> int:
    """The instructions ``python -m activetest ARGS`` executes, counted by valgrind's
    cachegrind (``I refs``), with numba's kernels for a generic x86-64 CPU
    (``NUMBA_CPU_NAME=generic``: valgrind's virtual CPU has other features than the
    host's, whose cached kernels numba would otherwise compile again under it)."""
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                          "--cachegrind-out-file=/dev/null", sys.executable, "-m",
                          "activetest", *args], capture_output=True, text=True,
                         env=_env(src, workdir, NUMBA_CPU_NAME="generic"), cwd=workdir)
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind activetest {' '.join(args)} failed "
                           f"({out.returncode}):\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def instruction_sweep(src: Path, inputs: tuple[Path, Path, Path], workdir: Path,
                      levels: list[int], repeat: int = 1) -> dict[int, list[int]]:
    """labels held -> the instructions of ``select --n 50`` on a copy of the kept file,
    each of ``repeat`` runs (:func:`_instructions`; one untimed run per count first
    fills numba's cache for the generic CPU). Runs differ by some 25 million
    instructions (dates, addresses, the hash seed): 1% of a 1e4 ``select``, 0.15% of a
    1e6 one; what the machine's load cannot move, unlike CPU seconds; but it counts no
    memory stall, so it is the work done, not its time."""
    snapshots = grow_snapshots(src, inputs, workdir, levels)
    copy = workdir / "copy.db"
    out: dict[int, list[int]] = {level: [] for level in snapshots}
    for level, snap in snapshots.items():
        shutil.copy(snap, copy)
        subprocess.run([sys.executable, "-m", "activetest", "select", str(copy), "--n", "50"],
                       env=_env(src, workdir, NUMBA_CPU_NAME="generic"), cwd=workdir,
                       check=True, capture_output=True)
        for _ in range(repeat):
            shutil.copy(snap, copy)
            out[level].append(_instructions(src, ["select", str(copy), "--n", "50"], workdir))
        print(f"labels {level}: select instructions "
              + "/".join(f"{x / 1e9:.3f}e9" for x in out[level]), flush=True)
    return out


def instruction_table(res: dict[int, list[int]]) -> str:
    """Markdown: labels held -> instructions of ``select --n 50`` (median) and their
    ratio to the 0-label count's."""
    base = float(np.median(res[0])) if res.get(0) else None
    lines = ["| labels held | instructions of select --n 50 | / 0 labels |", "|---|---|---|"]
    for level, xs in sorted(res.items()):
        med = float(np.median(xs))
        r = None if base is None else printed_ratio(med / 1e9, base / 1e9, digits=3)
        ratio = "-" if r is None else f"{r:.3f}"  # of the e9 cells as printed
        lines.append(f"| {level:,} | {med / 1e9:.3f}e9 ({len(xs)} run(s)) | {ratio} |")
    return "\n".join(lines)


def warm(src: Path, cache: Path, fmt: str, large: bool = False) -> None:
    """Compile ``src`` to bytecode and its numba kernels into their cache (untimed);
    ``large``: also those of pools from ``LAZY_MIN_ROWS`` items on (the design's lazy
    tables are other argument types: compiled on their first use, ~20 CPU-s)."""
    import compileall

    compileall.compile_dir(str(src), quiet=1)
    sizes = [1000] + ([LAZY_ROWS + 1000] if large else [])
    for n in sizes:
        run_commands(src, make_inputs(cache / f"{fmt}-{n}", n, fmt), cache / "warm", fmt,
                     ("init", "status", "select", "import", "estimate", "report",
                      "select2"))


def conditions() -> str:
    """The date (UTC) and the load average (1, 5, 15 min)."""
    import datetime

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, load {load}"


def _fmt_n(n: int) -> str:
    e = round(float(np.log10(n)))
    return f"1e{e}" if 10**e == n else f"{n:,}"


def table(results: dict, ns: list[int], labels: list[str]) -> str:
    """Markdown: per command and N, CPU s and peak MiB of each source, and the ratio
    this / baseline of the printed CPU seconds (``_cells.printed_ratio``)."""
    head = "| command | N | " + " | ".join(
        f"{lab} CPU s | {lab} peak MiB" for lab in labels) + " |" + (
        " CPU this / baseline |" if len(labels) > 1 else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for cmd in COMMANDS:
        for n in ns:
            cells = []
            got = [results.get(lab, {}).get(n, {}).get(cmd) for lab in labels]
            if all(g is None for g in got):
                continue
            for g in got:
                cells += (["—", "—"] if g is None else [f"{g['cpu']:.2f}", f"{g['rss_mib']:.0f}"])
            ratio = ""
            if len(labels) > 1:
                r = (printed_ratio(got[1]["cpu"], got[0]["cpu"])
                     if got[0] and got[1] else None)
                ratio = " — |" if r is None else f" {r:.2f}x |"
            lines.append(f"| {cmd} | {_fmt_n(n)} | " + " | ".join(cells) + " |" + ratio)
    return "\n".join(lines)


def progress_line(n: int, label: str, res: dict) -> str:
    """One source's commands at one N as they finish: CPU seconds and peak MiB of each,
    then the session file's size in MiB (``_file_mib``, not a command: it printed as
    "_file_mb 0.00s/119MB", a CPU time and a peak of a command of that name)."""
    cells = ", ".join(f"{c} {r['cpu']:.2f} CPU-s/{r['rss_mib']:.0f} MiB peak"
                      for c, r in res.items() if not c.startswith("_"))
    size = res.get("_file_mib")
    return (f"N={_fmt_n(n)} {label}: {cells}"
            + ("" if size is None else f"; session file {size['rss_mib']:.1f} MiB"))


def growth(results: dict, ns: list[int], label: str) -> str:
    """Per command, the CPU growth between consecutive N (linear: the ratio of the N),
    of the CPU seconds as printed (``_cells.printed_ratio``)."""
    rows = []
    for cmd in COMMANDS:
        parts = []
        for a, b in itertools.pairwise(ns):
            ra = results.get(label, {}).get(a, {}).get(cmd)
            rb = results.get(label, {}).get(b, {}).get(cmd)
            r = printed_ratio(rb["cpu"], ra["cpu"]) if ra and rb else None
            if r is not None:
                parts.append(f"{_fmt_n(a)}->{_fmt_n(b)}: x{r:.1f}")
        if parts:
            rows.append(f"- {cmd}: " + ", ".join(parts))
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", nargs="+", default=["1e4", "1e5", "1e6"])
    ap.add_argument("--format", default="csv", choices=("csv", "parquet"))
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout's src folder, run in the same run")
    ap.add_argument("--baseline-max-n", type=float, default=1e6,
                    help="run the baseline only up to this N")
    ap.add_argument("--baseline-only", action="store_true")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get(
        "BENCH_CACHE", "/tmp/activetest-bench-sessions")))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--labels", nargs="+", type=int, default=None,
                    help="instead: select and estimate against the labels held (one N)")
    ap.add_argument("--repeat", type=int, default=2,
                    help="with --labels: measurements per label count (interleaved)")
    ap.add_argument("--instructions", action="store_true",
                    help="with --labels: count select --n 50's instructions under valgrind "
                         "(cachegrind) instead of timing it")
    ap.add_argument("--select-only", action="store_true",
                    help="with --labels: time select --n 50 alone (no labels, no estimate)")
    ap.add_argument("--min-available-gib", "--min-available-gb", dest="min_available_gib",
                    type=float, default=0.0,
                    help="stop a command when the machine's available memory falls below "
                         "this many GiB (2**30 bytes; a shared machine; 0: never; "
                         "--min-available-gb is the same flag, in GiB as it always was)")
    args = ap.parse_args()
    global MIN_AVAILABLE_MIB
    MIN_AVAILABLE_MIB = args.min_available_gib * 1024
    ns = [int(float(x)) for x in args.n]
    commands = tuple(args.commands.split(","))
    sources = [("this", ROOT / "src")]
    if args.baseline is not None:
        sources.insert(0, ("baseline", args.baseline.resolve()))
        if args.baseline_only:
            sources = sources[:1]
    results: dict[str, dict[int, dict]] = {}
    for _, src in sources:
        warm(src, args.cache, args.format, large=max(ns) >= LAZY_ROWS)
    start = conditions()
    print(f"start: {start}", flush=True)
    if args.labels is not None and args.instructions:
        if shutil.which("valgrind") is None:
            sys.exit("--instructions needs valgrind (apt install valgrind)")
        n = ns[0]
        counts = instruction_sweep(ROOT / "src", make_inputs(
            args.cache / f"{args.format}-{n}", n, args.format), args.cache / f"labels-{n}",
            args.labels, repeat=args.repeat)
        print(f"N = {_fmt_n(n)}; start: {start}; end: {conditions()}")
        print(instruction_table(counts))
        return
    if args.labels is not None:
        n = ns[0]
        res = label_sweep(ROOT / "src", make_inputs(args.cache / f"{args.format}-{n}", n,
                                                   args.format),
                          args.cache / f"labels-{n}", args.labels, repeat=args.repeat,
                          select_only=args.select_only,
                          baseline=None if args.baseline is None else args.baseline.resolve())
        print(f"N = {_fmt_n(n)}; start: {start}; end: {conditions()}")
        print(sweep_table(res))
        print(growth_line(res))
        return
    for n in ns:
        inputs = make_inputs(args.cache / f"{args.format}-{n}", n, args.format)
        for label, src in sources:
            if label == "baseline" and n > args.baseline_max_n:
                continue
            res = run_commands(src, inputs, args.cache / f"run-{label}-{n}", args.format,
                               commands)
            results.setdefault(label, {})[n] = res
            print(progress_line(n, label, res), flush=True)
            (args.cache / "results.json").write_text(json.dumps(
                {lab: {str(k): v for k, v in d.items()} for lab, d in results.items()}))
    labels = [lab for lab, _ in sources]
    text = table(results, ns, labels)
    end = conditions()
    print(f"start: {start}; end: {end}")
    print(text)
    for lab in labels:
        print(f"growth ({lab}):\n" + growth(results, ns, lab))
    if not args.no_write:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from _docs import write_section

        cmd = "nice -n 10 python benchmarks/bench_sessions.py --n " + " ".join(args.n)
        if args.baseline is not None:
            cmd += " --baseline OLD/src"
        doc = (f"## {SECTION}\n\n`{cmd}` ({platform.processor() or platform.machine()}, "
               f"{os.cpu_count()} cores, shared; {start} -> {end}; CPU seconds of each "
               f"command's process tree, peak resident memory in MiB = 2^20 bytes)\n\n"
               f"{text}\n\nGrowth in N (CPU):\n\n"
               + "\n\n".join(f"{lab}:\n\n{growth(results, ns, lab)}" for lab in labels)
               + "\n")
        write_section(doc, SECTION)


if __name__ == "__main__":
    main()
