"""A uniform-sampling session shows one bootstrap interval for its one number.

Under uniform sampling LURE's weights are all 1, so LURE is the plain mean of the
labelled losses; sessions created before ``shared_resamples`` bootstrapped the two from
different generators and showed two intervals for one number (QA). New sessions record
the key: one set of resamples for both (:mod:`activetest.session.paired_bootstrap`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from session_support import PoolFiles, make_pool_files
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.estimate import bootstrap_rng, clip_result, value_range
from activetest.session.workflow import Session
from activetest.stats import bootstrap

runner = CliRunner()


def run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return result.output


def _session(pf: PoolFiles, db: Path, acquisition: str, n: int = 40) -> None:
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
        "--seed", "3", "--no-progress", "--metric", "both", "--acquisition", acquisition)
    run("select", db, "--n", n)
    run("label", db, "--from-data")


def _bootstrap_lines(status: str) -> dict[str, str]:
    """``"<metric> <what>"`` -> the bootstrap line under it, from `status`."""
    out: dict[str, str] = {}
    head = None
    for line in status.splitlines():
        m = re.match(r"last estimate \(.*\): (\w+) (LURE|uniform-equivalent) ", line)
        if m:
            head = f"{m.group(1)} {m.group(2)}"
        elif line.startswith("last estimate"):
            head = None
        elif head and line.strip().startswith("bootstrap"):
            out[head] = line.strip()
    return out


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> PoolFiles:
    return make_pool_files(tmp_path_factory.mktemp("data"), n=200)


def test_a_uniform_sessions_lure_and_plain_mean_have_one_bootstrap_interval(
        pool: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    _session(pool, db, "uniform")
    run("estimate", db)  # recorded: status shows it
    with Session.open(db) as s:
        assert s.store.config().shared_resamples is True
        r = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
    for m in r.metrics.values():
        assert m.active.estimate == m.uniform.estimate
        assert (m.active.low, m.active.high, m.active.std) == \
            (m.uniform.low, m.uniform.high, m.uniform.std), m.metric
    for rows in data.history.values():  # the report's last point is the estimate's
        last = rows[-1]
        assert last.uniform is not None and last.active.bootstrap == last.uniform.bootstrap
    lines = _bootstrap_lines(run("status", db))
    for metric in ("log_loss", "error_rate"):
        assert lines[f"{metric} LURE"] == lines[f"{metric} uniform-equivalent"], lines


def test_an_active_session_bootstraps_the_plain_mean_on_lures_resamples(
        pool: PoolFiles, tmp_path: Path) -> None:
    """Under active draws the two estimates differ; the plain mean's resamples are LURE's
    (its generator, ``"lure:<metric>"``), and LURE's interval is the one it always was."""
    db = tmp_path / "a.db"
    _session(pool, db, "ce")
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    m = r.metrics["error_rate"]
    assert m.active.estimate != m.uniform.estimate
    assert _plain_mean_bootstrap(db, "lure:error_rate") == (m.uniform.low, m.uniform.high)


def test_an_old_file_keeps_its_two_generators(pool: PoolFiles, tmp_path: Path) -> None:
    """A file without ``shared_resamples`` (every file before it) keeps its numbers: the
    plain mean's interval from its own generator, ``"mean:<metric>"``."""
    db = tmp_path / "old.db"
    _session(pool, db, "uniform")
    with Session.open(db) as s:
        s.store.update_config({"shared_resamples": None})  # as an older version wrote it
    with Session.open(db) as s:
        assert s.store.config().shared_resamples is None
        r = s.estimate(record=False, progress=False)
    m = r.metrics["error_rate"]
    assert (m.active.low, m.active.high) != (m.uniform.low, m.uniform.high)
    assert _plain_mean_bootstrap(db, "mean:error_rate") == (m.uniform.low, m.uniform.high)


def _plain_mean_bootstrap(db: Path, stream: str) -> tuple[float, float]:
    """The error rate's plain-mean bootstrap interval of the session ``db`` with the
    resamples of the generator ``stream``."""
    with Session.open(db) as s:
        cfg = s.store.config()
        draws = s.labelled_draws()
        lp = s.store.scores("target").logprobs[draws.rows]
    losses = (lp.argmax(axis=1) != draws.y).astype(float)
    b = clip_result(bootstrap(losses, n_boot=cfg.n_boot, level=cfg.level,
                              random_state=bootstrap_rng(cfg.seed, draws.k, stream)),
                    value_range("error_rate"))
    return b.low, b.high
