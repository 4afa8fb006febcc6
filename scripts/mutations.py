"""Mutation checks: does the test suite notice a wrong number?

Each entry of ``scripts/mutations.json`` is one small, deliberate bug in the code (a wrong
quantile, a swapped interval, a join check switched off) and the tests that should catch
it. This script applies each in a throw-away git worktree of HEAD (the working tree is
never touched), runs those tests (``pytest -x``), and reports whether they failed
(``caught``) or passed (``SURVIVED``: a gap in the tests, or an equivalent mutant, which
the entry's ``note`` then says). Not part of CI: a survivor is for a person to judge.

    python scripts/mutations.py                 # every entry (23 minutes on 2 cores)
    python scripts/mutations.py --only cs- int- # entries whose id starts so

Exit status 1 if an entry not marked ``"equivalent": true`` survived.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    """Run the mutation checks; print one line per entry."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=(), help="id prefixes to run")
    ap.add_argument("--file", default=str(ROOT / "scripts" / "mutations.json"))
    ap.add_argument("--timeout", type=int, default=900, help="seconds per entry")
    a = ap.parse_args()
    entries = json.loads(Path(a.file).read_text(encoding="utf-8"))
    if a.only:
        entries = [e for e in entries if e["id"].startswith(tuple(a.only))]
    bad = 0
    with tempfile.TemporaryDirectory(prefix="activetest-mut-") as tmp:
        wt = Path(tmp) / "wt"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(wt), "HEAD"],
                       check=True, capture_output=True)
        try:
            for e in entries:
                path = wt / e["file"]
                src = path.read_text(encoding="utf-8")
                if src.count(e["old"]) != 1:
                    print(f"{e['id']}: STALE (the code it mutates changed)", flush=True)
                    bad += 1
                    continue
                path.write_text(src.replace(e["old"], e["new"]), encoding="utf-8")
                t0 = time.time()
                r = subprocess.run(
                    ["timeout", str(a.timeout), sys.executable, "-m", "pytest", "-x", "-q",
                     "-p", "no:cacheprovider", *e["tests"]], cwd=wt, capture_output=True,
                    text=True, env={**os.environ, "PYTHONPATH": str(wt / "src")})
                path.write_text(src, encoding="utf-8")
                last = (r.stdout.strip().splitlines() or [""])[-1]
                if " failed" in last:
                    state = "caught"
                elif r.returncode == 0:
                    state = "equivalent" if e.get("equivalent") else "SURVIVED"
                else:
                    state = f"ERROR (exit {r.returncode}: {last[:120]})"
                bad += state == "SURVIVED" or state.startswith("ERROR")
                print(f"{e['id']}: {state} ({time.time() - t0:.0f} s)", flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(wt)],
                           capture_output=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
