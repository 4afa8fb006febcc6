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
    """The design a new session runs (the earned in-run rule, recorded in its config)."""
    return AdaptiveDesign.calibrated(s.store.scores("target").logprobs,
                                     s.store.scores("surrogate").logprobs, loss="log",
                                     rule="earned")


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
        # a person's pace: the kill lands mid-run, not after it (past the 17th, slower:
        # a test process stalled on a loaded machine must still find the run unfinished)
        time.sleep(0.02 if len(s.acquisitions()) < 17 else 0.5)
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


def _both(s: Session) -> AdaptiveDesign:
    return AdaptiveDesign.calibrated_both(s.store.scores("target").logprobs,
                                          s.store.scores("surrogate").logprobs, rule="earned")


def test_both_metrics_draw_by_the_two_metric_design_each_with_its_own_control(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """``--metric both``: the design serving both (config ``design``), the error rate
    estimated with ITS control and model variance (not LURE on a log-loss design's q),
    and a reopened session replays and continues with the uninterrupted run's draws."""
    from activetest.stats import adaptive_lure_theta, fixed_interval

    N = len(pool_files.ids)
    with _create(pool_files, tmp_path / "b.db", metric="both") as s:
        assert s.config["design"] == "calibrated-both"
        ref = AdaptiveSampler(_both(s), seed=11)
        for b in [1] * 12 + [5, 3]:
            idx = [a.index for a in s.select(b)]
            s.label_from_data()
            ref.draw(b)
            ref.observe(labels=pool_files.labels[idx].tolist())
        assert [a.index for a in s.acquisitions()] == ref.acquired
        r = s.estimate()
        design = _both(s)
    from activetest.session.draw import describe_design

    assert r.design["metrics"] == ["log_loss", "error_rate"]
    assert describe_design(r.design)[0].startswith(
        "one proposal for log loss and error rate, each with its own control")
    acq = np.array(ref.acquired)
    for metric, loss in (("log_loss", "log"), ("error_rate", "zero_one")):
        g, G, V = ref.controls(loss)
        L = design.losses_of(acq, pool_files.labels[acq], loss)
        want = adaptive_lure(L, np.array(ref.q), N, g, G)
        m = r.metrics[metric]
        assert m.active.estimate == pytest.approx(float(want), rel=1e-12), metric
        theta = adaptive_lure_theta(L, np.array(ref.q), N, control=g, control_rest=G)
        assert m.anytime is not None
        assert m.anytime.se == pytest.approx(fixed_interval(theta, N, model_var=V).se,
                                             rel=1e-9), metric
    g_err = ref.controls("zero_one")[0]
    assert np.ptp(g_err) > 0 and np.all((g_err >= 0) & (g_err <= 1))  # a learnt control
    L_err = design.losses_of(acq, pool_files.labels[acq], "zero_one")
    assert r.metrics["error_rate"].active.estimate != pytest.approx(
        float(adaptive_lure(L_err, np.array(ref.q), N)), rel=1e-6)  # not plain LURE
    # Resume from the file: the replay gives the same controls, the future the same draws.
    with Session.open(tmp_path / "b.db") as s2:
        again = s2.estimate()
        for metric in ("log_loss", "error_rate"):
            assert again.metrics[metric].active == r.metrics[metric].active
        more = [a.index for a in s2.select(4)]
    ref.draw(4)
    assert more == ref.acquired[-4:]


def _as_before_the_two_metric_design(path: Path, pf: PoolFiles) -> None:
    """Make a fresh ``--metric both`` session file what activetest wrote before the
    two-metric design: no ``design`` key (and the log-loss design's first proposal as
    its stored acquisition scores)."""
    import json
    import sqlite3

    with sqlite3.connect(path) as c:
        cfg = json.loads(c.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
        del cfg["design"]
        c.execute("UPDATE config SET json = ? WHERE id = 1", (json.dumps(cfg),))
    with Session.open(path) as s:
        q = _design(s).plan([]).q
        s.store.put_scores("acquisition", "adaptive", q[:, None],
                           {"acquisition": "adaptive", "alpha": 0.1}, predictions=False)


def test_an_older_both_metric_session_keeps_its_log_loss_design(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Files written before the two-metric design (no ``design`` in the config) open and
    keep their meaning: drawn by the design fitted to log loss, the error rate by LURE
    on its q, as before; resuming continues that design."""
    from activetest.stats import lure

    N = len(pool_files.ids)
    path = tmp_path / "old.db"
    _create(pool_files, path, metric="both").close()
    _as_before_the_two_metric_design(path, pool_files)
    with Session.open(path) as s:
        assert "design" not in s.config
        ref = AdaptiveSampler(_design(s), seed=11)
        for b in [1] * 12 + [4]:
            idx = [a.index for a in s.select(b)]
            s.label_from_data()
            ref.draw(b)
            ref.observe(labels=pool_files.labels[idx].tolist())
        assert [a.index for a in s.acquisitions()] == ref.acquired
        r = s.estimate()
        design, t_lp = _design(s), s.store.scores("target").logprobs
    acq = np.array(ref.acquired)
    L = design.losses_of(acq, pool_files.labels[acq])
    assert r.metrics["log_loss"].active.estimate == pytest.approx(
        float(adaptive_lure(L, np.array(ref.q), N, np.array(ref.control),
                            np.array(ref.control_rest))), rel=1e-12)
    L_err = (t_lp[acq].argmax(1) != pool_files.labels[acq]).astype(float)
    assert r.metrics["error_rate"].active.estimate == pytest.approx(
        float(lure(L_err, np.array(ref.q), N)), rel=1e-12)
    with Session.open(path) as s2:
        more = [a.index for a in s2.select(3)]
    ref.draw(3)
    assert more == ref.acquired[-3:]


def test_a_single_metric_session_records_no_design_variant(pool_files: PoolFiles,
                                                           tmp_path: Path) -> None:
    for metric in ("log_loss", "error_rate"):
        with _create(pool_files, tmp_path / f"{metric}.db", metric=metric) as s:
            assert "design" not in s.config
    with _create(pool_files, tmp_path / "fm.db", metric="both", acquisition="fixed_mix") as s:
        assert "design" not in s.config  # only the calibrated design has a two-metric form


@pytest.mark.parametrize("bad", ["calibrated-triple", ["calibrated-both"], 5])
def test_an_unknown_design_variant_is_one_clear_error(pool_files: PoolFiles, tmp_path: Path,
                                                      bad: object) -> None:
    from activetest.session.store import SessionError

    with _create(pool_files, tmp_path / "b.db", metric="both") as s:
        s.store.update_config({"design": bad})
    with Session.open(tmp_path / "b.db") as s, pytest.raises(SessionError,
                                                              match=r"config\.design is"):
        s.select(1)
