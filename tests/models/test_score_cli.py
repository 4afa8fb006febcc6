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


def test_out_that_is_the_pool_or_not_parquet_is_refused_before_ray(tmp_path: Path) -> None:
    # (QA: --out pool.csv wrote Parquet bytes over the pool it read, exit 0)
    pool = tmp_path / "pool.csv"
    pool.write_text("id,text\na,good film\nb,bad film\n", encoding="utf-8")
    before = pool.read_bytes()
    base = ("score", "--pool", str(pool), "--id-column", "id", "--task", "sst2",
            "--model", "smollm2-135m")
    (tmp_path / "link.parquet").symlink_to(pool)
    for extra, said in (
            (("--out", str(pool)), "is the file read"),
            (("--out", str(tmp_path / "link.parquet")), "is the file read"),
            (("--out", str(tmp_path / "sc.csv")), "name a file ending .parquet"),
            (("--out", str(tmp_path / "p.parquet"), "--shards", "0"), "--shards must be >= 1"),
            (("--out", str(tmp_path / "p.parquet"), "--max-retries", "-1"),
             "--max-retries must be >= 0")):
        proc = subprocess.run(cli_command(*base, *extra), env=cli_env(tmp_path),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert proc.stderr.count("error:") == 1 and said in proc.stderr, (extra, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert pool.read_bytes() == before
    assert not (tmp_path / "sc.csv").exists() and not (tmp_path / "p.parquet").exists()
