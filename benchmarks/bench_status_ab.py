"""`status` and `import` of one session file, this checkout against another, interleaved.

Reproduce (a 1e6 session made by ``benchmarks/bench_sessions.py``: its file right after
``init``, the file after its first ``select --n 50`` and those 50 labels as a sheet)::

    nice -n 10 python benchmarks/bench_status_ab.py --baseline OLD/src --rounds 8 \
        --status AFTER_INIT.db LABELLED.db --import SELECTED.db SHEET.csv

Each command runs as its own ``python -m activetest`` child; its CPU seconds (user +
system) and peak resident memory are those of the child (``os.wait4``). The rounds
alternate which checkout goes first; ``import`` runs on a fresh copy of its file each
time. Both checkouts are compiled to bytecode first and run without
``PYTHONDONTWRITEBYTECODE`` (as an installed package). Printed: per command and
checkout the median, min and max CPU seconds over the rounds, the peak MiB (the child's
``ru_maxrss``, KiB on Linux, // 1024; headed "peak MB" until 2026-12-06), whether both
checkouts printed the same text, and the 1-minute load average at each round's end.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(src: Path, args: list[str], cwd: Path) -> tuple[float, int, bytes]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen([sys.executable, "-m", "activetest", *args], env=env, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, ru = os.wait4(proc.pid, 0)
    if status != 0:
        raise RuntimeError(f"{src}: activetest {' '.join(args)} failed ({status})")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss // 1024, out  # KiB // 1024: MiB


def table(names: list[str], cpu: dict[tuple[str, str], list[float]],
          mib: dict[tuple[str, str], int]) -> list[str]:
    """Markdown rows: per command and checkout the median, min and max CPU seconds and
    the peak resident memory in MiB."""
    lines = ["| command | checkout | CPU s median | min | max | peak MiB |",
             "|---|---|---|---|---|---|"]
    for name in names:
        for who in ("baseline", "this"):
            v = cpu[(name, who)]
            lines.append(f"| {name} | {who} | {statistics.median(v):.3f} | {min(v):.3f} | "
                         f"{max(v):.3f} | {mib[(name, who)]} |")
    return lines


def main() -> None:
    """Run the rounds and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True, help="another checkout's src")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--status", type=Path, nargs="*", default=[], help="session files")
    ap.add_argument("--import", dest="imp", type=Path, nargs=2, default=None,
                    metavar=("SESSION", "SHEET"))
    args = ap.parse_args()
    srcs = {"baseline": args.baseline.resolve(), "this": ROOT / "src"}
    for src in srcs.values():
        compileall.compile_dir(str(src), quiet=1)
    cmds: list[tuple[str, list[str] | None]] = []
    for db in args.status:
        cmds += [(f"status {db.name}", ["status", str(db)]),
                 (f"status --json {db.name}", ["status", str(db), "--json"])]
    if args.imp:
        cmds.append((f"import {args.imp[1].name}", None))
    cpu: dict[tuple[str, str], list[float]] = {}
    mib: dict[tuple[str, str], int] = {}
    texts: dict[tuple[str, str], set[bytes]] = {}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for r in range(args.rounds):
            for who in (("baseline", "this") if r % 2 == 0 else ("this", "baseline")):
                for name, cmd in cmds:
                    if cmd is None:  # import: a fresh copy of the selected session
                        assert args.imp is not None
                        db = work / "import.db"
                        shutil.copy(args.imp[0], db)
                        cmd = ["import", str(db), str(args.imp[1])]
                    c, m, out = _run(srcs[who], cmd, work)
                    cpu.setdefault((name, who), []).append(c)
                    mib[(name, who)] = max(mib.get((name, who), 0), m)
                    texts.setdefault((name, who), set()).add(out)
            loads.append(os.getloadavg()[0])
    print("\n".join(table([name for name, _ in cmds], cpu, mib)))
    for name, _ in cmds:
        print(f"{name}: same text from both checkouts: "
              f"{texts[(name, 'baseline')] == texts[(name, 'this')]}")
    print("load (1 min) at each round's end:", ", ".join(f"{x:.1f}" for x in loads))


if __name__ == "__main__":
    main()
