"""The proposal floor and the confidence level have distinct names: ``--proposal-floor`` /
``proposal_floor=``, with ``--alpha`` / ``alpha=`` kept as deprecated names that still
work; the stored key stays ``alpha`` (files written before keep opening)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from session_support import PoolFiles
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.workflow import Session

runner = CliRunner()


def _init(pf: PoolFiles, db: Path, *extra: str) -> str:
    result = runner.invoke(app, [str(a) for a in (
        "init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", "5",
        "--acquisition", "ce", "--no-progress", *extra)])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_the_cli_takes_proposal_floor_and_still_alpha(pool_files: PoolFiles,
                                                     tmp_path: Path) -> None:
    out = _init(pool_files, tmp_path / "a.db", "--proposal-floor", "0.3")
    assert "proposal floor 0.3" in out and "alpha" not in out
    old = _init(pool_files, tmp_path / "b.db", "--alpha", "0.2")
    assert "--alpha is deprecated" in old and "proposal floor 0.2" in old
    for name, floor in (("a.db", 0.3), ("b.db", 0.2)):
        with Session.open(tmp_path / name) as s:
            assert s.session_config.proposal_floor == floor
            assert s.config["alpha"] == floor  # the stored key, as every version wrote
            assert s.store.sampler_row()[0] == floor
            assert s.status().proposal_floor == floor
            st = s.status().to_dict()  # status --json: the distinct name, and the old one
            assert st["proposal_floor"] == floor and st["alpha"] == floor
    help_text = runner.invoke(app, ["init", "--help"], env={"COLUMNS": "200"}).output
    assert "--proposal-floor" in help_text and "--alpha" not in help_text


def test_session_create_takes_proposal_floor_and_warns_on_alpha(pool_files: PoolFiles,
                                                                tmp_path: Path) -> None:
    args = dict(pool=pool_files.pool, task="demo", surrogate=f"table:{pool_files.surrogate}",
                target=f"table:{pool_files.target}", seed=1, acquisition="ce", progress=False,
                pool_options={"id_column": "id"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with Session.create(tmp_path / "n.db", proposal_floor=0.25, **args) as s:
            assert s.config["alpha"] == 0.25
    with pytest.warns(DeprecationWarning, match="proposal_floor="), \
            Session.create(tmp_path / "o.db", alpha=0.4, **args) as s:
        assert s.session_config.proposal_floor == 0.4
    with pytest.raises(TypeError, match="proposal_floor= only"):
        Session.create(tmp_path / "x.db", alpha=0.4, proposal_floor=0.4, **args)
    with pytest.raises(ValueError, match=r"proposal floor \(alpha\) must be in \(0, 1\]"):
        Session.create(tmp_path / "y.db", proposal_floor=0, **args)
