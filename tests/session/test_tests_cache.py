"""The test run keeps its records out of the user's cache folder (tests/conftest.py).

A run used to write where each test's prediction tables were into the user's
``~/.cache/activetest/files.json``: ``init`` records a table's path by its SHA-256 there
(:func:`activetest.session.spec_files.remember`). The run now has its own cache folder;
the costly shared parts (the joined bundled model, the score cache) stay the user's.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from session_support import make_pool_files
from tests.conftest import SHARED, real_cache_dir
from typer.testing import CliRunner

from activetest._tmpfiles import default_cache_dir
from activetest.cli import app


def _paths(index: Path) -> set[str]:
    """Every path a files index records (none where it is not there)."""
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    return {p for paths in data.values() for p in paths}


def test_storing_a_table_spec_leaves_the_users_files_index_untouched(tmp_path: Path) -> None:
    """``init`` with a table target records the table's path in the run's index, not in
    the user's; the shared cache parts are the user's folders. (The user's index is
    checked for this test's path, not for its mtime: other activetest processes on the
    machine may write it meanwhile.)"""
    assert "ACTIVETEST_CACHE" in os.environ  # not set by this test: the run's own
    run, real = default_cache_dir(), real_cache_dir()
    assert run.resolve() != real.resolve()
    for name in SHARED:
        if (run / name).is_symlink():
            assert (run / name).resolve() == (real / name).resolve()
    files = make_pool_files(tmp_path / "preds")
    res = CliRunner().invoke(app, [str(a) for a in (
        "init", tmp_path / "s.db", "--pool", files.pool, "--task", "sst2", "--surrogate",
        f"table:{files.surrogate}", "--target", f"table:{files.target}?kind=logprobs",
        "--id-column", "id", "--acquisition", "pe", "--seed", "3", "--no-progress")])
    assert res.exit_code == 0, res.output
    digest = hashlib.sha256(files.target.read_bytes()).hexdigest()
    path = os.path.realpath(files.target)
    index = json.loads((run / "files.json").read_text(encoding="utf-8"))
    assert index[digest][0] == path
    assert path not in _paths(real / "files.json")
