"""A session's blind spot (issue 20, item 2): the proposals replayed from what it stored,
the widened intervals in ``estimate``/``status``/the report, and old files untouched."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session import draw
from activetest.session.blindspot import item_loss_bounds, session_blind_spots
from activetest.session.config import SessionConfig
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure_theta, fixed_interval
from activetest.stats.blindspot import BLIND_RATIO, EARNED_BLIND_RATIO
from activetest.stats.blindspot_replay import design_proposals, floored_proposals

runner = CliRunner()


def run(*args: object, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


def _init(pf: PoolFiles, db: Path, acquisition: str, n: int) -> None:
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--metric", "both",
        "--acquisition", acquisition, "--seed", "5", "--no-progress")
    run("select", db, "--n", n)
    with Session.open(db) as s:
        s.label_from_data()


def test_ce_session_widens_and_says_so(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "ce.db"
    _init(pool_files, db, "ce", 30)
    with Session.open(db) as s:
        cfg = s.session_config
        assert cfg.blind_ratio == BLIND_RATIO and cfg.to_dict()["blind_ratio"] == BLIND_RATIO
        draws = s.labelled_draws()
        losses = s.item_losses(draws)
        # the replayed proposals are the ones the session drew from
        acq = s.store.acquisitions()
        scores = draw.acquisition_scores_of(s.store)
        got = [q[a.index] for (q, _), a in zip(
            floored_proposals(scores, [a.index for a in acq], cfg.proposal_floor), acq,
            strict=True)]
        np.testing.assert_allclose(got, [a.q for a in acq], rtol=1e-12)
    out = json.loads(run("estimate", db, "--json"))
    notes = {n["metric"]: n for n in out["blind_spots"] if n["estimator"] == "estimate"}
    assert set(notes) == {"log_loss", "error_rate"}
    for metric, note in notes.items():
        assert note["n_unexplored"] > 0 and note["ratio"] == BLIND_RATIO
        assert note["widen_low"] == 0.0 and note["widen_high"] > 0  # LURE: upwards only
        theta = adaptive_lure_theta(losses[metric], draws.q, draws.n_pool)
        fi = fixed_interval(theta, draws.n_pool)
        a = out["metrics"][metric]["anytime"]
        top = 1.0 if metric == "error_rate" else note["loss_cap"]
        # then cut to what 30 labels of the pool's 60 make sure (the labelled losses, plus
        # at most the cap on each of the 30 others)
        sure_low = float(losses[metric].sum()) / draws.n_pool
        sure_high = sure_low + (draws.n_pool - draws.k) * top / draws.n_pool
        assert a["fixed_high"] == pytest.approx(min(fi.high + note["widen_high"], top,
                                                    sure_high))
        assert a["fixed_low"] == pytest.approx(max(fi.low, sure_low))
        assert a["sure_high"] is None or a["sure_high"] == pytest.approx(sure_high)
    assert notes["error_rate"]["loss_cap"] == 1.0
    with Session.open(db) as s:  # the log loss's cap: the report's own bound
        t = s.store.scores("target").logprobs
    assert notes["log_loss"]["loss_cap"] == pytest.approx(float(-t.min()))
    text = run("estimate", db)
    assert "widened by +" in text and "below 1/2 the uniform rate" in text
    # CE: the log loss's control-variate LURE is not shown (its control is CE's score:
    # it equals LURE), nor is its widening (QA); the error rate's is shown, and widened
    flat = " ".join(text.split())
    assert "log loss: control-variate LURE's" not in flat
    assert "error rate: control-variate LURE's" in flat
    status = run("status", db)
    assert "widened by +" in status
    run("report", db, "--out", tmp_path / "rep")
    assert "below 1/2 the uniform rate" in (tmp_path / "rep" / "report.md").read_text(
        encoding="utf-8")
    # the report's curves end at the estimate's widened intervals (mutation check: the
    # report's fixed-budget curve left unwidened passed every test)
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    for metric, name in (("log_loss", "log loss"), ("error_rate", "error rate")):
        last, a = data.history[name][-1], out["metrics"][metric]["anytime"]
        assert last.n_labels == 30 and last.active.fixed is not None
        assert (last.active.fixed.low, last.active.fixed.high) == pytest.approx(
            (a["fixed_low"], a["fixed_high"]), rel=1e-9)
        assert (last.active.anytime.low, last.active.anytime.high) == pytest.approx(
            (a["cs_low"], a["cs_high"]), rel=1e-9)


def test_the_reports_curves_before_30_labels_are_widened_as_the_estimate_was(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: the blind spot was computed from the CS's start (30 labels), so the report's
    curves at fewer labels showed the unwidened interval ([0.18, 0.84] at 20 labels where
    ``estimate`` had printed [0.18, 1.47]). Each budget's point is the estimate a session
    stopped there would show: compared with a copy of the session cut at 20 labels."""
    import shutil

    db = tmp_path / "ce.db"
    _init(pool_files, db, "ce", 30)
    cut = tmp_path / "ce20.db"
    _init(pool_files, cut, "ce", 20)  # the same seed: the same first 20 draws
    with Session.open(cut) as s:
        r20 = s.estimate(record=False, progress=False)
    shutil.copy(db, tmp_path / "copy.db")
    with Session.open(tmp_path / "copy.db") as s:
        data = s.report_data(progress=False, n_points=200)
    assert any(n.estimator == "estimate" and n.n_unexplored for n in r20.blind_spots)
    for metric, name in (("log_loss", "log loss"), ("error_rate", "error rate")):
        a = r20.metrics[metric].anytime
        (row,) = [r for r in data.history[name] if r.n_labels == 20]
        if a.basis == "exact":
            continue
        assert (row.active.fixed.low, row.active.fixed.high) == pytest.approx(
            (a.fixed_low, a.fixed_high), rel=1e-9)


def test_adaptive_session_replays_its_design(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "ad.db"
    _init(pool_files, db, "adaptive", 12)
    run("select", db, "--n", "12")
    with Session.open(db) as s:
        s.label_from_data()
        sampler = draw.replayed(s.store)
        st = sampler.state()
        acq = s.store.acquisitions()
        rows = [a.index for a in acq]
        plans = list(design_proposals(sampler.design, rows, labels=st.labels,
                                      losses=st.losses, n_known=st.n_known))
        np.testing.assert_allclose([q[i] for (q, _), i in zip(plans, rows, strict=True)],
                                   [a.q for a in acq], rtol=1e-12)
        np.testing.assert_allclose([g[i] for (_, g), i in zip(plans, rows, strict=True)],
                                   st.control, rtol=1e-12)
        spots = session_blind_spots(s.session_config, s.store, k=len(rows),
                                    n_pool=s.store.n_items(), metrics=("log_loss",),
                                    sampler=sampler)
    assert spots["log_loss"].estimate.widen_high.shape == (len(rows),)
    # an adaptive design with the earned rule records the earned rule's threshold
    assert s.session_config.design_rule == "earned"
    assert s.session_config.blind_ratio == EARNED_BLIND_RATIO
    out = json.loads(run("estimate", db, "--json"))
    assert all(n["estimator"] == "estimate" for n in out["blind_spots"])
    assert all(n["ratio"] == EARNED_BLIND_RATIO for n in out["blind_spots"])


def test_uniform_and_old_sessions_are_not_widened(pool_files: PoolFiles,
                                                  tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    _init(pool_files, db, "uniform", 20)
    assert json.loads(run("estimate", db, "--json"))["blind_spots"] == []
    with Session.open(db) as s:
        old = SessionConfig.from_dict({k: v for k, v in s.session_config.to_dict().items()
                                       if k != "blind_ratio"})
        assert old.blind_ratio is None
        assert session_blind_spots(old, s.store, k=20, n_pool=60, metrics=("log_loss",)) == {}


def test_item_loss_bounds() -> None:
    lp = np.log(np.array([[0.5, 0.5], [1 - 1e-6, 1e-6]]))
    assert item_loss_bounds("error_rate", lp) == 1.0
    np.testing.assert_allclose(item_loss_bounds("log_loss", lp), [np.log(2), -np.log(1e-6)])
    assert item_loss_bounds("log_loss", None, 7.0) == 7.0
    assert item_loss_bounds("log_loss", None) is None


@pytest.mark.parametrize("C", [1, 2, 3, 6])
def test_item_loss_bounds_are_the_rows_largest_log_loss_bit_for_bit(C: int) -> None:
    """The bounds (taken a column at a time) are ``-min`` over each row's classes, to the
    bit (they enter the blind-spot state's key), in a column-major array too."""
    rng = np.random.default_rng(C)
    z = rng.normal(0, 3, (5000, C))
    lp = z - np.logaddexp.reduce(z, axis=1)[:, None]
    lp[::7, 0] = lp[::7, -1]  # ties between classes
    for t in (lp, np.asfortranarray(lp)):
        got = item_loss_bounds("log_loss", t)
        assert isinstance(got, np.ndarray)
        assert got.tobytes() == (-lp.min(axis=1)).tobytes()


def test_a_compared_targets_intervals_are_widened_for_the_same_blind_spot(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """``estimate --compare`` on a CE session with unexplored items: those items could hide
    the other target's errors and a paired difference anywhere in [-1, 1], so the other
    target's error-rate intervals are widened upwards and the difference's on both sides
    by the target's own D (the same items, the same bound 1, LURE counting them at 0);
    a line says so. (Before, neither was widened: on a pool where two targets differ
    only where the proposal rarely looks, the difference's intervals covered 0.81 at 400
    labels; ``benchmarks/paired_few_differences.py``.)"""
    from activetest.stats.fewerrors import MIN_ERRORS, few_differences, few_errors

    db = tmp_path / "ce.db"
    _init(pool_files, db, "ce", 30)
    spec = f"table:{pool_files.surrogate}"
    with Session.open(db) as s:
        rep = s.estimate(compare=[spec])
        draws = s.labelled_draws()
    spot = {n.metric: n for n in rep.blind_spots if n.estimator == "estimate"}["error_rate"]
    D = spot.widen_high
    assert spot.n_unexplored > 0 and D > 0
    c = {c.metric: c for c in rep.comparisons}["error_rate"]
    d, o = c.difference_anytime, c.other_anytime
    with Session.open(db) as s:
        t_loss = s.item_losses(draws)["error_rate"]
        o_lp = s.store.scores("surrogate").logprobs[draws.rows]
    o_loss = (o_lp.argmax(1) != draws.y).astype(float)
    dl = t_loss - o_loss
    assert not few_differences(dl, MIN_ERRORS)[-1]  # the CLT intervals, widened
    assert not few_errors(o_loss, MIN_ERRORS)[-1]
    N = draws.n_pool
    fd = fixed_interval(adaptive_lure_theta(dl, draws.q, N), N, skew_widens_only=True)
    fo = fixed_interval(adaptive_lure_theta(o_loss, draws.q, N), N)
    assert d.basis == "clt" and o.basis == "clt"
    assert (d.fixed_low, d.fixed_high) == pytest.approx(
        (max(fd.low - D, -1.0), min(fd.high + D, 1.0)), rel=1e-9)
    # the other's, cut to what the labels make sure of its error rate too
    o_sure = (float(o_loss.sum()) / N, (float(o_loss.sum()) + N - draws.k) / N)
    assert (o.fixed_low, o.fixed_high) == pytest.approx(
        (max(fo.low, 0.0, o_sure[0]), min(fo.high + D, 1.0, o_sure[1])), rel=1e-9)
    lines = {w.split("(")[1].split(")")[0]: w for w in rep.warnings
             if w.startswith("compared with ")}
    assert set(lines) == {"error rate", "log loss"}, rep.warnings
    assert f"+/-{D:.4g}" in lines["error rate"]
    assert f"error rate by +{D:.4g}" in lines["error rate"]
    assert "are widened for what the" in lines["error rate"]
    assert "below 1/2 the uniform rate" in lines["error rate"]
    # the log loss: the other target's bound is not known on the pool, so it says so
    assert "assume no rare large losses among the" in lines["log loss"]
