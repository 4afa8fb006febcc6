"""Sessions show the fixed-budget interval and the anytime confidence sequence side by side.

Checked through the CLI on a table-backed session: the numbers equal the stats
functions applied to the stored draws, "you may stop" follows the CS (never the
fixed interval), the report carries the CS band, and ``--format eee`` writes
Every Eval Ever aggregate records that pass our schema check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import PoolFiles, labelled_table_session
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.eee import check_eee_aggregate
from activetest.session.estimate import cut_to_sure
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure_theta, asymptotic_cs, fixed_interval

runner = CliRunner()


def run(*args: object, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


@pytest.fixture
def session(pool_files: PoolFiles, tmp_path: Path) -> Path:
    return labelled_table_session(pool_files, tmp_path / "s.db", seed=4, n=45)


def test_intervals_equal_the_statistics_on_the_stored_draws(session: Path) -> None:
    out = json.loads(run("estimate", session, "--json"))
    with Session.open(session) as s:
        draws = s.labelled_draws()
        losses = s.item_losses(draws)
        budget = s.session_config.planned_budget  # recorded at init: the CS is tuned to it
        log_bound = float((-s.store.scores("target").logprobs.min(axis=1)).max())
    assert budget == draws.n_pool // 2  # the default rule: 400, at most half the pool
    for metric, loss in losses.items():
        theta = adaptive_lure_theta(loss, draws.q, draws.n_pool)
        fi = fixed_interval(theta, draws.n_pool)
        cs = asymptotic_cs(theta, draws.n_pool,
                           value_range=(0.0, 1.0) if metric == "error_rate" else None,
                           budget=budget)
        got = out["metrics"][metric]["anytime"]
        # widened (upwards only: LURE gives never-drawn items nothing) by what the items
        # CE drew at below half the uniform rate could hide (tests/session/test_blind_spot)
        note = next(n for n in out["blind_spots"] if n["metric"] == metric)
        assert note["widen_low"] == 0 and note["widen_high"] > 0
        # cut to what the labels make sure (45 of the pool's 60 items labelled): the
        # labelled losses' sum, plus at most the bound on each of the 15 others, where
        # that removes a tenth of the width or more of one of its intervals (then every
        # interval of the estimate is intersected with them)
        bound = 1.0 if metric == "error_rate" else log_bound
        s_low = float(loss.sum()) / draws.n_pool
        s_high = s_low + (draws.n_pool - draws.k) * bound / draws.n_pool
        assert got["se"] == pytest.approx(fi.se)
        top = 1.0 if metric == "error_rate" else np.inf
        plain = (fi.low, min(fi.high + note["widen_high"], top))
        if got["sure_low"] is not None:  # in force
            assert (got["sure_low"], got["sure_high"]) == pytest.approx((s_low, s_high))
            fixed = (max(plain[0], s_low), min(plain[1], s_high))
        else:  # not in force: neither interval cut by a tenth
            fixed = plain
            assert cut_to_sure(*plain, s_low, s_high) == plain
        assert (got["fixed_low"], got["fixed_high"]) == pytest.approx(fixed)
        assert got["cs_low"] <= max(cs.low[-1], s_low) + 1e-12
        assert got["cs_high"] >= min(cs.high[-1], s_high) - 1e-12
        # (the CS is intersected over all label counts, so it need not contain the
        # fixed interval, only be valid: its own numbers are checked above)
        assert got["fixed_low"] <= got["fixed_high"] and got["cs_low"] <= got["cs_high"]
        # the exact CS: the error rate is bounded by 1, the log loss by the target's
        # largest log loss on the pool (known without labels)
        est = out["metrics"][metric]["active"]["estimate"]
        assert got["exact_low"] is not None and got["exact_low"] <= est <= got["exact_high"]
    assert np.isfinite(out["metrics"]["log_loss"]["anytime"]["exact_high"])
    # every interval is named by what it is (QA: `active.low/high` were the bootstrap's,
    # the headline hidden in anytime.fixed_low/high, nothing said which)
    m = out["metrics"]["error_rate"]
    assert m["active"]["interval"] == "bootstrap 95% interval"
    assert m["uniform"]["interval"].startswith("bootstrap 95% interval of the plain mean")
    assert (m["anytime"]["fixed_interval"], m["anytime"]["cs_interval"]) == (
        "fixed-budget 95% interval", "anytime 95% confidence sequence")
    assert m["anytime"]["exact_interval"] == "exact anytime 95% confidence sequence"


def test_may_stop_follows_the_confidence_sequence(session: Path) -> None:
    wide = json.loads(run("estimate", session, "--json", "--target-width", "10"))
    for m in wide["metrics"].values():
        assert m["anytime"]["may_stop"] is True
    text = run("estimate", session, "--target-width", "10")
    assert "you may stop now" in text
    a = json.loads(run("estimate", session, "--json"))["metrics"]["error_rate"]["anytime"]
    between = (a["fixed_high"] - a["fixed_low"] + a["cs_high"] - a["cs_low"]) / 2
    narrow = json.loads(run("estimate", session, "--json", "--target-width", str(between)))
    b = narrow["metrics"]["error_rate"]["anytime"]
    # the fixed interval is already narrower than W, but the CS is not: keep labelling
    assert b["fixed_high"] - b["fixed_low"] < between < b["cs_high"] - b["cs_low"]
    assert b["may_stop"] is False and b["labels_needed"] > 45


def test_report_draws_the_anytime_band_and_eee_records_are_valid(session: Path,
                                                                 tmp_path: Path) -> None:
    run("report", session, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "anytime 95%" in md
    records = json.loads(run("estimate", session, "--format", "eee", "--model-id",
                             "org/target"))
    assert isinstance(records, list) and len(records) == 2
    for rec in records:
        assert check_eee_aggregate(rec) == []
        text = json.dumps(rec)
        assert "LURE" in text and "martingale" in text
    # QA: the record's options without --format eee were ignored, and --json beat --format
    out = " ".join(run("estimate", session, "--model-id", "org/target", code=2).split())
    assert "--model-id and --source-organization go into an Every Eval Ever record: add " \
           "--format eee" in out, out
    out = " ".join(run("estimate", session, "--json", "--format", "eee", code=2).split())
    assert "--json is --format json: give one of --json and --format eee" in out, out


def test_status_says_you_may_stop_and_marks_stale_estimates(session: Path) -> None:
    run("estimate", session, "--target-width", "10")
    assert "you may stop now" in run("status", session)
    with Session.open(session) as s:
        s.select(1)
        s.label_from_data()
    out = run("status", session)
    assert "stale" in out and "you may stop now" not in out
    # status --json names what each recorded number is (QA: low/high unnamed, "lure"
    # for an adaptive design's estimate)
    rec = next(e for e in json.loads(run("status", session, "--json"))["last_estimates"]
               if e["method"] == "lure")
    assert rec["interval"] == "bootstrap 95% interval" and rec["estimator"] == "LURE"
    assert rec["details"]["anytime"]["fixed_interval"] == "fixed-budget 95% interval"


def _hundred_true_labels() -> Any:
    """An ``ActiveTest`` (both metrics) of a 300-item binary pool with a surrogate noisier
    than the target, its first 100 draws labelled from the truth (every later label in
    the tests below is "class 1": careless)."""
    from activetest import ActiveTest

    rng = np.random.default_rng(1)
    N = 300
    y = rng.integers(0, 2, N)

    def probs(noise: float) -> np.ndarray:
        p = 1 / (1 + np.exp(-((2 * y - 1) * 1.5 + rng.normal(0, noise, N))))
        return np.stack([1 - p, p], axis=1)

    T, S = probs(1.5), probs(2.5)
    run = ActiveTest(np.log(S), T, metric="both", seed=0)
    rows = run.next(100)
    run.label_many(rows, [int(y[r]) for r in rows])
    return run


def test_a_cs_that_no_longer_holds_its_estimate_never_says_stop() -> None:
    """The CS is the running intersection over label counts. 100 labels from the truth,
    then 20 careless ones (every item "class 1"): the log loss's CS shrinks to a sliver
    [0.368, 0.432] beside its estimate 0.51, narrower than the width asked for (QA: it
    said "you may stop now"). Now: flagged, no "may stop", and a note says why."""
    run = _hundred_true_labels()
    before = run.estimate(target_width=0.07).metrics["log_loss"].anytime
    assert before is not None and not before.estimate_outside_cs
    rows = run.next(20)
    run.label_many(rows, [1] * 20)
    rep = run.estimate(target_width=0.07)
    m = rep.metrics["log_loss"]
    a = m.anytime
    assert a is not None and a.cs_high - a.cs_low <= 0.07  # narrow enough by width alone
    assert not a.cs_low <= m.active.estimate <= a.cs_high
    assert a.estimate_outside_cs and a.may_stop is False
    # and no projection of a label count it has already (QA: "at about 121 labels (1 more)")
    assert a.labels_needed is None
    assert not rep.metrics["error_rate"].anytime.estimate_outside_cs  # it still holds it
    note = [w for w in rep.warnings if "no longer holds the estimate" in w]
    assert len(note) == 1 and note[0].startswith("log loss:")


def test_a_fixed_budget_interval_beyond_the_cs_is_said_and_only_then() -> None:
    """The CS is the running intersection over label counts, so the fixed-budget
    interval can reach beyond it on one side (QA: fixed [0.7482, 1.0000] beside CS
    [0.6928, 0.9867], nothing said, read as a contradiction). A line says both hold and
    which to read; a metric whose fixed-budget interval lies within its CS gets none."""
    from activetest.session.estimate_notes import fixed_beyond_cs_note

    run = _hundred_true_labels()
    rows = run.next(15)
    run.label_many(rows, [1] * 15)  # careless labels pull the estimate up
    rep = run.estimate()
    said = 0
    for name, m in rep.metrics.items():
        a = m.anytime
        assert a is not None
        beyond = (round(a.fixed_low, 4) < round(a.cs_low, 4)
                  or round(a.fixed_high, 4) > round(a.cs_high, 4))
        line = fixed_beyond_cs_note(m, rep.level)
        if a.estimate_outside_cs:  # its own line (which names the fixed-budget one) only
            assert line is None and name == "log_loss"
            continue
        assert (line is not None) == beyond, (name, a)
        if line is not None:
            said += 1
            assert line in rep.warnings
            assert (f"[{a.fixed_low:.4f}, {a.fixed_high:.4f}] reaches above the anytime 95% "
                    f"confidence sequence [{a.cs_low:.4f}, {a.cs_high:.4f}]") in line
            assert "read the CS" in line
    assert said == 1  # the error rate's
    # before any careless label, the error rate's fixed-budget interval is within its CS
    m = _hundred_true_labels().estimate().metrics["error_rate"]
    assert m.anytime.cs_low <= m.anytime.fixed_low and m.anytime.fixed_high <= m.anytime.cs_high
    assert fixed_beyond_cs_note(m, 0.95) is None


def test_a_fixed_budget_interval_beyond_the_cs_by_less_than_printed_is_not_said() -> None:
    """QA (a compare session at 1e6 items): the note said the fixed-budget interval
    "[0.0000, 0.6659] reaches below the anytime 95% confidence sequence [0.0000, 0.7941]"
    (the CS's lower end 4e-06, the fixed-budget one 0): two equal numbers read as a
    contradiction. The sides are compared as printed; a side beyond by what the digits
    show is still said."""
    from activetest.session.estimate_notes import fixed_beyond_line
    from activetest.session.records import AnytimeInterval

    hidden = AnytimeInterval(se=0.1, fixed_low=0.0, fixed_high=0.6659, cs_low=4e-06,
                             cs_high=0.7941)
    assert fixed_beyond_line("error rate", hidden, 0.95) is None
    shown = AnytimeInterval(se=0.1, fixed_low=0.0, fixed_high=0.6659, cs_low=2e-04,
                            cs_high=0.7941)
    line = fixed_beyond_line("error rate", shown, 0.95)
    assert line is not None and "[0.0000, 0.6659] reaches below the anytime 95% " \
        "confidence sequence [0.0002, 0.7941]" in line
