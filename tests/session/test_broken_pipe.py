"""A reader that goes away (``activetest ... | head``, ``| true``): every command, text or
JSON, supervised or not, ends quietly with exit code 1 (README, Troubleshooting), and
what it stored before printing stays stored."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path

from session_support import PoolFiles, cli_command, cli_env

from activetest.session.workflow import Session


def _closed_pipe_run(tmp_path: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """Run the CLI with its stdout a pipe whose reading end is already closed: every
    write to it fails, as after `| true` exits."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(cli_command(*map(str, args)), env=cli_env(tmp_path),
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    finally:
        os.close(write_end)


def _drawn(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return int(con.execute("SELECT COUNT(*) FROM acquisitions").fetchone()[0])


def test_a_closed_output_pipe_is_exit_1_without_a_message(pool_files: PoolFiles,
                                                          tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init = subprocess.run(cli_command(
        "init", str(db), "--pool", str(pool_files.pool), "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--seed", "5", "--no-progress"), env=cli_env(tmp_path),
        capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stderr
    for args, drawn in ((("select", db, "--n", "3"), 3),  # the plain form
                        (("select", db, "-n", "2", "--busy-timeout=5"), 5),  # typer's
                        (("status", db), 5), (("status", db, "--json"), 5),
                        (("estimate", db, "--json"), 5),  # a supervised child
                        (("estimate", db), 5)):
        if args[0] == "status":
            with Session.open(db) as s:
                s.label_from_data()
        proc = _closed_pipe_run(tmp_path, *args)
        assert proc.returncode == 1, (args, proc.returncode, proc.stderr)
        assert "error" not in proc.stderr and "Traceback" not in proc.stderr, (args,
                                                                               proc.stderr)
        assert "Exception ignored" not in proc.stderr, (args, proc.stderr)
        assert _drawn(db) == drawn, args  # the draws were committed before printing
