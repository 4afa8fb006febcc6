"""``activetest score --engine ray``: bad input is one message and exit 2, before Ray starts."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.session.session_support import cli_command, cli_env


def test_bad_engine_and_missing_pool_are_one_message(tmp_path: Path) -> None:
    proc = subprocess.run(cli_command("score", "--engine", "spark"), env=cli_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--engine 'spark': the one engine is ray" in proc.stderr
    proc = subprocess.run(cli_command(
        "score", "--engine", "ray", "--pool", str(tmp_path / "missing.csv"), "--task", "demo",
        "--model", "smollm2-135m", "--out", str(tmp_path / "p.parquet")),
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("error:") == 1 and "missing.csv" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "p.parquet").exists()
