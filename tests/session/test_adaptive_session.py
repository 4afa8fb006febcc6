"""Sessions that draw by an adaptive design (the default acquisition).

The session must make exactly the draws of :class:`activetest.stats.AdaptiveSampler`
fed the same labels in the same order (one at a time, or in batches that refit only
between batches), estimate with the design's own controls, survive a ``kill -9``
with the same future draws, and replay what the design saw even after a label is
changed later.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, cli_env

from activetest.session.workflow import Session
from activetest.stats import adaptive_lure
from activetest.stats.adaptive import AdaptiveDesign, AdaptiveSampler


def _create(pf: PoolFiles, path: Path, **kw: object) -> Session:
    args: dict[str, object] = dict(pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=11, progress=False,
                                   pool_options={"id_column": "id"})
    args.update(kw)
    return Session.create(path, **args)  # type: ignore[arg-type]


def _design(s: Session) -> AdaptiveDesign:
    return AdaptiveDesign.calibrated(s.store.scores("target").logprobs,
                                     s.store.scores("surrogate").logprobs, loss="log")


def test_default_is_the_adaptive_design_and_draws_match_the_sampler(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        assert s.config["acquisition"] == "adaptive"
        ref = AdaptiveSampler(_design(s), seed=11)
        batches = [1] * 14 + [5, 3]  # one at a time past the first refits, then batches
        got = []
        for b in batches:
            got += s.select(b)
            s.label_from_data()
            idx, _ = ref.draw(b)
            ref.observe(labels=pool_files.labels[idx].tolist())
        assert [a.index for a in got] == ref.acquired
        np.testing.assert_allclose([a.q for a in got], ref.q, rtol=1e-12, atol=0)
        assert ref.refits[-1] >= 2  # the design did refit
        r = s.estimate()
        L = _design(s).losses_of(np.array(ref.acquired), pool_files.labels[ref.acquired])
        want = adaptive_lure(L, np.array(ref.q), len(pool_files.ids), np.array(ref.control),
                             np.array(ref.control_rest))
        assert r.metrics["log_loss"].active.estimate == pytest.approx(float(want), rel=1e-12)
        assert r.metrics["log_loss"].anytime is not None


def test_a_changed_label_changes_the_estimate_not_the_past_draws(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        for _ in range(12):
            s.select(1)
            s.label_from_data()
        before = s.estimate().metrics["log_loss"].active.estimate
        first = s.acquisitions()[0]
        s.add_label(first.item_id, 1 - int(s.labels()[first.item_id]), overwrite=True)
        after = s.estimate().metrics["log_loss"].active.estimate
        assert after != before
        more = s.select(2)  # the design replays what it saw, then goes on
        assert len(more) == 2


def test_pe_design_scores_the_target_on_labelled_items_only(pool_files: PoolFiles,
                                                            tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db", acquisition="pe_adaptive") as s:
        assert not np.isfinite(s.store.scores("target").logprobs).any()
        for _ in range(12):
            s.select(1)
            s.label_from_data()
        r = s.estimate()
        scored = np.isfinite(s.store.scores("target").logprobs).all(axis=1)
        assert scored.sum() == 12
        assert np.isfinite(r.metrics["log_loss"].active.estimate)


_LOOP = """
import sys, time
from activetest.session.workflow import Session
with Session.open(sys.argv[1]) as s:
    while s.n_items - len(s.acquisitions()) > 0 and len(s.acquisitions()) < int(sys.argv[2]):
        s.select(1)
        s.label_from_data()
        print(len(s.acquisitions()), flush=True)
        time.sleep(0.02)  # a person's pace: the kill lands mid-run, not after it
"""


@pytest.mark.slow
def test_resume_after_kill_9_gives_the_same_draws(pool_files: PoolFiles, tmp_path: Path) -> None:
    n = 40
    with _create(pool_files, tmp_path / "a.db") as s:
        for _ in range(n):
            s.select(1)
            s.label_from_data()
        ref = [(a.index, a.q) for a in s.acquisitions()]
    db = tmp_path / "b.db"
    _create(pool_files, db).close()
    env = cli_env(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", _LOOP, str(db), str(n)], env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    while True:  # kill it somewhere past the first refit
        line = proc.stdout.readline()
        if not line or int(line) >= 17:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Session.open(db) as s:
        done = len(s.acquisitions())
        assert 17 <= done < n
        s.label_from_data()  # a draw may have been committed before its label
        while len(s.acquisitions()) < n:
            s.select(1)
            s.label_from_data()
        got = [(a.index, a.q) for a in s.acquisitions()]
    assert [i for i, _ in got] == [i for i, _ in ref]
    np.testing.assert_allclose([q for _, q in got], [q for _, q in ref], rtol=1e-12, atol=0)


def test_estimate_and_report_show_the_design_state(pool_files: PoolFiles,
                                                   tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from activetest.cli import app

    with _create(pool_files, tmp_path / "a.db") as s:
        for _ in range(15):
            s.select(1)
            s.label_from_data()
        r = s.estimate()
        assert r.design["design"] == "adaptive" and r.design["refits"] >= 2
        assert set(r.design["weights"]) >= {"surrogate log-prob", "target log-prob"}
        assert 0.1 <= r.design["lam"] <= 1
    out = CliRunner().invoke(app, ["estimate", str(tmp_path / "a.db")]).output
    assert "design adaptive:" in out and "refit(s)" in out
    CliRunner().invoke(app, ["report", str(tmp_path / "a.db"), "--out", str(tmp_path / "r")])
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Design: adaptive" in md and "Fitted calibration" in md


def test_intervals_use_the_designs_own_variance_and_the_exact_cs(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The session's fixed interval and CS take the design's variance prediction as a
    floor (the same as the sampler's, replayed), and its exact CS is shown too."""
    from activetest.stats import adaptive_lure_theta, fixed_interval

    with _create(pool_files, tmp_path / "v.db") as s:
        ref = AdaptiveSampler(_design(s), seed=11)
        for _ in range(4):
            idx = [a.index for a in s.select(10)]
            s.label_from_data()
            ref.draw(10)
            ref.observe(labels=pool_files.labels[idx].tolist())
        m = s.estimate().metrics["log_loss"]
        L = _design(s).losses_of(np.array(ref.acquired), pool_files.labels[ref.acquired])
        theta = adaptive_lure_theta(L, np.array(ref.q), len(pool_files.ids),
                                    control=np.array(ref.control),
                                    control_rest=np.array(ref.control_rest))
        with_model = fixed_interval(theta, len(pool_files.ids),
                                    model_var=np.array(ref.model_var))
        observed = fixed_interval(theta, len(pool_files.ids))
        assert m.anytime is not None
        assert m.anytime.se == pytest.approx(with_model.se, rel=1e-9)
        assert m.anytime.se >= observed.se
        assert m.anytime.exact_low is not None and m.anytime.exact_high is not None
        assert m.anytime.exact_low <= m.active.estimate <= m.anytime.exact_high
