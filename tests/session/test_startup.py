"""A command pays at its start only for what it uses: ``status`` and ``import`` run no
statistics kernel, so they never import numba (about 0.3 CPU-s), nor scipy, torch,
scikit-learn or pyarrow, nor the modules of activetest's own statistics and pool
readers they do not use (``stats.adaptive``, ``data.pool``, ...); a plainly written
``status`` skips typer's parsing (its pydantic validators). Checked in real
``activetest`` processes on a real session; ``select`` (which runs the adaptive
design's compiled kernels) shows the check can see numba and ``stats.adaptive`` when
they are imported. Costs are measured in benchmarks/bench_sessions.py.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from session_support import PoolFiles, cli_command, cli_env

HEAVY = ("numba", "scipy", "torch", "sklearn", "pyarrow", "pydantic",
         # activetest's own modules that neither command uses: the packages ``stats``
         # and ``data`` import a name's module on its first use, not all at once
         "activetest.stats.adaptive", "activetest.stats.simulate", "activetest.data.pool",
         "activetest.data.datasets", "activetest.data.split")

# Runs the CLI's entry point and, at exit (after sys.exit too), writes the heavy
# packages the process imported as the last line of stderr.
_PROBE = """
import atexit, json, sys
heavy = json.loads(sys.argv[1])
atexit.register(lambda: sys.stderr.write(
    "\\nHEAVY " + json.dumps(sorted(m for m in heavy if m in sys.modules)) + "\\n"))
from activetest.cli import main
main(json.loads(sys.argv[2]))
"""


def probe(tmp_path: Path, *args: str, code: int = 0) -> tuple[str, set[str]]:
    """Run ``activetest ARGS`` in a child; its stdout and the heavy modules it imported."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(HEAVY), json.dumps(args)],
                          capture_output=True, text=True, env=cli_env(tmp_path), timeout=300)
    assert proc.returncode == code, proc.stderr
    last = proc.stderr.rstrip().splitlines()[-1]
    assert last.startswith("HEAVY "), proc.stderr
    return proc.stdout, set(json.loads(last[len("HEAVY "):]))


def test_importing_the_cli_imports_no_numba(tmp_path: Path) -> None:
    code = ("import sys, json, activetest.cli; "
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=cli_env(tmp_path), check=True).stdout
    assert json.loads(out) == []


def test_status_and_import_start_without_numba(pool_files: PoolFiles, tmp_path: Path) -> None:
    pf = pool_files
    db = tmp_path / "s.db"
    subprocess.run(cli_command("init", str(db), "--pool", str(pf.pool), "--task", "sst2",
                               "--id-column", "id", "--surrogate", f"table:{pf.surrogate}",
                               "--target", f"table:{pf.target}", "--seed", "0"),
                   env=cli_env(tmp_path), check=True, capture_output=True)
    _, loaded = probe(tmp_path, "select", str(db), "--n", "4")
    assert "numba" in loaded  # the adaptive design ran its kernels: the probe sees numba
    assert "activetest.stats.adaptive" in loaded  # and the design's module

    con = sqlite3.connect(db)
    drawn = [r[0] for r in con.execute("SELECT idx FROM acquisitions ORDER BY step")]
    con.close()
    sheet = tmp_path / "labels.csv"
    sheet.write_text("item_id,label\n" + "".join(
        f"{pf.ids[i]},{['negative', 'positive'][pf.labels[i]]}\n" for i in drawn[:3]))
    out, loaded = probe(tmp_path, "import", str(db), str(sheet))
    assert "imported 3 new label(s)" in out
    assert loaded <= {"pydantic"}, loaded  # typer's parsing; no statistics

    for args in (["status", str(db)], ["status", str(db), "--json"],
                 ["status", "--busy-timeout", "2", str(db), "--json"]):
        out, loaded = probe(tmp_path, *args)
        assert loaded == set(), (args, loaded)
        # the same output as through typer's parsing (an option written with "=")
        typer_args = [a for a in args if a not in ("--busy-timeout", "2")]
        via_typer, _ = probe(tmp_path, *typer_args, "--busy-timeout=2")
        assert out == via_typer
        if "--json" in args:
            assert (json.loads(out)["n_labelled"], json.loads(out)["n_pending"]) == (3, 1)
        else:
            assert "4 selected, 3 labelled, 1 pending" in out

    # errors keep their one message and exit code 2 on the direct path too
    proc = subprocess.run([sys.executable, "-m", "activetest", "status",
                           str(tmp_path / "none.db")], capture_output=True, text=True,
                          env=cli_env(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no session file")


def test_a_plain_select_skips_typers_parsing(pool_files: PoolFiles, tmp_path: Path) -> None:
    """``select SESSION --n N`` is called directly (no pydantic validators built): the
    same draws and output as through typer's parsing (an option written with "=")."""
    import shutil

    pf = pool_files
    db = tmp_path / "s.db"
    subprocess.run(cli_command("init", str(db), "--pool", str(pf.pool), "--task", "sst2",
                               "--id-column", "id", "--surrogate", f"table:{pf.surrogate}",
                               "--target", f"table:{pf.target}", "--seed", "0"),
                   env=cli_env(tmp_path), check=True, capture_output=True)
    other = tmp_path / "t.db"
    shutil.copy(db, other)
    out, loaded = probe(tmp_path, "select", str(db), "-n", "3", "--busy-timeout", "2")
    assert "numba" in loaded and "pydantic" not in loaded, loaded
    via_typer, loaded = probe(tmp_path, "select", str(other), "--n=3", "--busy-timeout=2")
    assert "pydantic" in loaded  # the probe sees typer's parsing when it runs
    assert out.replace(str(db), "S") == via_typer.replace(str(other), "S") and out
    drawn = [[r[0] for r in sqlite3.connect(p).execute(
        "SELECT idx FROM acquisitions ORDER BY step")] for p in (db, other)]
    assert drawn[0] == drawn[1] and len(drawn[0]) == 3
    # not plain: through typer, with its message and exit code
    probe(tmp_path, "select", str(db), "--n", "-2", code=2)
