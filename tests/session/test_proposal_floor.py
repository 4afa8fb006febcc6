"""The proposal floor and the confidence level have distinct names: ``--proposal-floor`` /
``proposal_floor=``, with ``--alpha`` / ``alpha=`` kept as deprecated names that still
work; the stored key stays ``alpha`` (files written before keep opening)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from session_support import PoolFiles, write_squad_pool
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
    # the CLI's status --json: the clear name beside the legacy one, which is said to be
    # the floor's old name (QA: `alpha` beside each estimate's `level` read as 1 - level)
    import json

    out = runner.invoke(app, ["status", str(tmp_path / "b.db"), "--json"])
    assert out.exit_code == 0, out.output
    st = json.loads(out.output)
    keys = list(st)
    assert keys[keys.index("proposal_floor") + 1] == "alpha"
    assert st["proposal_floor"] == st["alpha"] == 0.2
    assert st["legacy_keys"] == {"alpha": "proposal_floor"}
    said = " ".join(runner.invoke(app, ["status", "--help"]).output.split())
    assert "Its key alpha is the proposal floor under its legacy name" in said
    assert "not 1 - level" in said
    help_text = runner.invoke(app, ["init", "--help"]).output  # 80 columns: not cut
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


def _init_code(pf: PoolFiles, db: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in (
        "init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", "5", "--no-progress",
        *extra)])
    return result.exit_code, result.output


def test_a_floor_given_to_an_adaptive_design_is_refused_not_ignored(pool_files: PoolFiles,
                                                                    tmp_path: Path) -> None:
    """QA: `init --proposal-floor 0.3` with the default (adaptive) acquisition drew and
    estimated exactly as without it (a design chooses its own uniform share, lambda),
    while init, status and the report showed "proposal floor 0.3" as the session's."""
    for extra in ((), ("--acquisition", "pe_adaptive"), ("--acquisition", "fixed_mix")):
        db = tmp_path / f"a{len(extra)}{extra[-1] if extra else ''}.db"
        code, out = _init_code(pool_files, db, "--proposal-floor", "0.3", *extra)
        assert code == 2 and "chooses its own uniform share" in out, out
        assert "Traceback" not in out and not db.exists()
    args = dict(pool=pool_files.pool, task="demo", surrogate=f"table:{pool_files.surrogate}",
                target=f"table:{pool_files.target}", seed=1, progress=False,
                pool_options={"id_column": "id"})
    with pytest.raises(ValueError, match="chooses its own uniform share"):
        Session.create(tmp_path / "p.db", proposal_floor=0.3, **args)
    # left out, the session is made; the floor is not shown as the design's
    code, out = _init_code(pool_files, tmp_path / "d.db")
    assert code == 0 and "acquisition adaptive, seed 5" in out, out
    status = runner.invoke(app, ["status", str(tmp_path / "d.db")]).output
    assert "acquisition adaptive (seed 5)" in status, status
    # a fixed acquisition takes it and shows it
    assert "proposal floor 0.3" in _init(pool_files, tmp_path / "c.db", "--proposal-floor",
                                         "0.3")


def test_a_floor_given_to_a_graded_design_is_refused_before_any_answer(tmp_path: Path
                                                                       ) -> None:
    pool = write_squad_pool(tmp_path / "pool.jsonl")
    args = dict(pool=pool, task="squad", target="pool", surrogate="column:conf", seed=1,
                progress=False)
    with pytest.raises(ValueError, match="graded_fixed design chooses its own uniform share"):
        Session.create(tmp_path / "g.db", proposal_floor=0.3, **args)
    assert not (tmp_path / "g.db").exists()
    with Session.create(tmp_path / "ce.db", proposal_floor=0.3, acquisition="ce",
                        **args) as s:  # the paper's expected loss: a floored proposal
        assert s.session_config.proposal_floor == 0.3
