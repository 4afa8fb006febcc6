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

import pytest
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
def report():
    loaded = sorted(m for m in heavy if m in sys.modules)
    blas = None
    if "numpy" in sys.modules:  # the threads numpy's OpenBLAS started with
        from threadpoolctl import threadpool_info
        blas = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
    sys.stderr.write("\\nBLAS " + json.dumps(blas) + "\\nHEAVY " + json.dumps(loaded) + "\\n")
atexit.register(report)
from activetest.cli import main
main(json.loads(sys.argv[2]))
"""


def _probe(tmp_path: Path, args: tuple[str, ...], code: int,
           env: dict[str, str] | None = None) -> tuple[str, set[str], list[int] | None]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(HEAVY), json.dumps(args)],
                          capture_output=True, text=True, env=env or cli_env(tmp_path),
                          timeout=300)
    assert proc.returncode == code, proc.stderr
    blas, last = proc.stderr.rstrip().splitlines()[-2:]
    assert last.startswith("HEAVY ") and blas.startswith("BLAS "), proc.stderr
    return (proc.stdout, set(json.loads(last[len("HEAVY "):])),
            json.loads(blas[len("BLAS "):]))


def probe(tmp_path: Path, *args: str, code: int = 0) -> tuple[str, set[str]]:
    """Run ``activetest ARGS`` in a child; its stdout and the heavy modules it imported."""
    out, loaded, _ = _probe(tmp_path, args, code)
    return out, loaded


def blas_threads(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> list[int]:
    """The threads of each OpenBLAS that ``activetest ARGS`` loaded (through numpy)."""
    _, _, blas = _probe(tmp_path, args, 0, env)
    assert blas, "numpy's OpenBLAS not seen"
    return blas


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


def test_status_and_import_start_one_blas_thread(pool_files: PoolFiles,
                                                 tmp_path: Path) -> None:
    """``status`` and ``import`` do no linear algebra: numpy's OpenBLAS starts with one
    thread for them (a thread per core costs CPU at load), unless the user set
    ``OPENBLAS_NUM_THREADS``; other commands keep OpenBLAS's own default."""
    pf = pool_files
    db = tmp_path / "s.db"
    env = cli_env(tmp_path)
    env.pop("OPENBLAS_NUM_THREADS", None)
    subprocess.run(cli_command("init", str(db), "--pool", str(pf.pool), "--task", "sst2",
                               "--id-column", "id", "--surrogate", f"table:{pf.surrogate}",
                               "--target", f"table:{pf.target}", "--seed", "0"),
                   env=env, check=True, capture_output=True)
    code = ("import json, numpy; from threadpoolctl import threadpool_info; print(json.dumps("
            "[p['num_threads'] for p in threadpool_info() if p['internal_api'] == 'openblas']))")
    default = json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                        capture_output=True, text=True).stdout)
    assert blas_threads(tmp_path, "select", str(db), "--n", "2", env=env) == default
    sheet = tmp_path / "labels.csv"
    idx = sqlite3.connect(db).execute("SELECT idx FROM acquisitions ORDER BY step").fetchone()[0]
    sheet.write_text(f"item_id,label\n{pf.ids[idx]},{['negative', 'positive'][pf.labels[idx]]}\n")
    assert blas_threads(tmp_path, "import", str(db), str(sheet), env=env) == [1] * len(default)
    for args in (["status", str(db)], ["status", str(db), "--busy-timeout=2"]):
        assert blas_threads(tmp_path, *args, env=env) == [1] * len(default)
    assert blas_threads(tmp_path, "status", str(db),
                        env={**env, "OPENBLAS_NUM_THREADS": "2"}) == [2] * len(default)
    if max(default) == 1:  # a one-core machine: OpenBLAS's default is one thread
        pytest.skip("OpenBLAS starts one thread here by default: nothing told apart")
