"""What the labels make sure: a small pool with most of it labelled bounds its risk with
certainty (the labelled losses plus the most the unlabelled items could add), and every
interval a session shows is cut to that (docs/intervals.md, "Cut to what the labels make
sure"). Harness QA: 6 errors in 32 of 40 items labelled put the error rate surely in
[0.15, 0.35], beside a fixed-budget interval reaching below 0.15."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from tests.session.session_support import PoolFiles, make_pool_files, texts_inside
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session import estimate as est
from activetest.session.harness_runs import uniform_runs_for_width
from activetest.session.interval_names import OUTSIDE_POINT
from activetest.session.report.plots import estimates_figure
from activetest.session.workflow import Session

runner = CliRunner()


def run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return result.output


def test_the_sure_bounds_by_hand() -> None:
    """Two labels of five items (losses 1 and 0.5, bound 1): after the first, the risk is
    within [1/5, (1 + 4)/5]; after the second, [1.5/5, (1.5 + 3)/5]."""
    low, high = est.sure_risk_curve(np.array([1.0, 0.5]), np.array([3, 0]), 5, 1.0)
    assert low.tolist() == pytest.approx([0.2, 0.3])
    assert high.tolist() == pytest.approx([1.0, 0.9])
    # a log loss bounded by 2.5: the unlabelled items add at most 2.5 each
    low, high = est.sure_risk_curve(np.array([0.1, 2.0]), np.array([0, 1]), 4, 2.5)
    assert low[-1] == pytest.approx(2.1 / 4) and high[-1] == pytest.approx((2.1 + 5) / 4)
    # nothing sure: no bound known, an item labelled twice, a loss above the bound
    assert est.sure_risk_curve(np.array([0.1]), np.array([0]), 4, None) is None
    assert est.sure_risk_curve(np.array([0.1]), np.array([0]), 4, float("inf")) is None
    assert est.sure_risk_curve(np.array([1.0, 0.0]), np.array([2, 2]), 4, 1.0) is None
    assert est.sure_risk_curve(np.array([1.5]), np.array([0]), 4, 1.0) is None
    # cutting: the intersection, or the sure bounds where an interval missed them
    assert est.cut_to_sure(0.1, 0.5, 0.2, 0.9) == (0.2, 0.5)
    assert est.cut_to_sure(0.0, 0.1, 0.2, 0.9) == (0.2, 0.9)
    # a cut of less than a tenth of the width is not made (no note about 0 -> 0.01)
    assert est.cut_to_sure(0.0, 0.5, 0.01, 0.9) == (0.0, 0.5)
    assert est.cut_to_sure(0.0, 0.5, 0.06, 0.9) == (0.06, 0.5)


def test_the_elementwise_cut_by_hand() -> None:
    """The arrays' cut (report curves, the uniform projection; :func:`cut_to_sure` is it
    on one interval), entry by entry: a cut of a tenth or more, one under a tenth (kept
    unless ``force``), a miss (the bounds), an infinite end (always cut)."""
    lo = np.array([0.1, 0.0, 0.0, 0.0])
    hi = np.array([0.5, 0.5, 0.1, np.inf])
    s_lo = np.array([0.2, 0.01, 0.2, 0.1])
    s_hi = np.array([0.9, 0.9, 0.9, 0.6])
    a_lo, a_hi = est.cut_to_sure_arrays(lo, hi, s_lo, s_hi)
    assert a_lo.tolist() == [0.2, 0.0, 0.2, 0.1] and a_hi.tolist() == [0.5, 0.5, 0.9, 0.6]
    f_lo, f_hi = est.cut_to_sure_arrays(lo, hi, s_lo, s_hi,
                                        force=np.array([False, True, False, False]))
    assert f_lo.tolist() == [0.2, 0.01, 0.2, 0.1] and f_hi.tolist() == a_hi.tolist()


@pytest.mark.parametrize("losses", [
    [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],      # an error rate
    [0.0, 0.5, 1.0, 0.25, 0.0, 0.75, 0.5],    # graded judgments (1 - score)
])
def test_every_draw_order_keeps_the_risk_inside_and_never_loses_coverage(losses) -> None:
    """Every ordered draw of 5 of 7 items (2,520 orders, uniform without replacement, as a
    session draws): the pool's risk lies within the sure bounds at every label count;
    the cut fixed-budget interval and CS lie within the uncut ones (or are the sure
    bounds where an uncut one missed them entirely), and wherever an uncut interval
    covers the risk the cut one does, so coverage over the orders cannot drop."""
    L = np.array(losses)
    N, K = L.size, 5
    truth = float(L.mean())
    q = 1.0 / (N - np.arange(K))
    cover = {"fixed": [0, 0], "cs": [0, 0]}
    cut_somewhere = 0
    for order in itertools.permutations(range(N), K):
        rows = np.array(order)
        low, high = est.sure_risk_curve(L[rows], rows, N, 1.0)
        assert np.all(low <= truth + 1e-12) and np.all(truth <= high + 1e-12)
        draws = est.LabelledDraws(N, tuple(map(str, order)), tuple(range(K)), rows, q,
                                  np.zeros(K, int), K)
        plain = est.anytime(draws, L[rows], value_range=(0.0, 1.0))
        cut = est.anytime(draws, L[rows], value_range=(0.0, 1.0), sure_bound=1.0)
        assert plain is not None and cut is not None
        # (the CS before 30 labels claims nothing, so it stays the whole range: uncut)
        assert (cut.cs_low, cut.cs_high) == (plain.cs_low, plain.cs_high)
        for name, (p_lo, p_hi), (c_lo, c_hi) in (
                ("fixed", (plain.fixed_low, plain.fixed_high), (cut.fixed_low, cut.fixed_high)),
                ("cs", (plain.cs_low, plain.cs_high), (cut.cs_low, cut.cs_high))):
            inside = p_lo - 1e-12 <= c_lo <= c_hi <= p_hi + 1e-12
            assert inside or (c_lo, c_hi) == (low[-1], high[-1])
            if name == "fixed" and (c_lo, c_hi) != (p_lo, p_hi):  # cut: within the bounds
                assert low[-1] - 1e-12 <= c_lo and c_hi <= high[-1] + 1e-12
            was, now = p_lo <= truth <= p_hi, c_lo - 1e-12 <= truth <= c_hi + 1e-12
            assert now or not was
            cover[name][0] += was
            cover[name][1] += now
        cut_somewhere += cut.sure_low is not None
        if cut.sure_low is not None:
            assert (cut.sure_low, cut.sure_high) == (low[-1], high[-1])
    assert cut_somewhere > 0  # 5 of 7 labelled: the bounds cut in many orders
    assert all(now >= was for was, now in cover.values())


def _labelled(tmp_path: Path, name: str, *, n_pool: int = 40, n_labels: int = 32,
              acquisition: str = "uniform", seed: int = 3, metric: str = "error_rate",
              pool_seed: int = 0) -> tuple[Path, PoolFiles]:
    """A session of the demo pool of ``n_pool`` items (its own data folder) with
    ``n_labels`` drawn by ``acquisition`` and labelled from the data."""
    pf = make_pool_files(tmp_path / f"data-{name}", n=n_pool, seed=pool_seed)
    db = tmp_path / f"{name}.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
        "--metric", metric, "--acquisition", acquisition, "--seed", str(seed),
        "--no-progress")
    run("select", db, "--n", str(n_labels))
    run("label", db, "--from-data")
    return db, pf


def _qa_session(tmp_path: Path) -> tuple[Path, PoolFiles]:
    """The QA case: 40 items, 32 drawn uniformly and labelled."""
    return _labelled(tmp_path, "qa")


def test_a_session_with_most_of_its_pool_labelled_is_cut_to_what_is_sure(
        tmp_path: Path) -> None:
    db, pf = _qa_session(tmp_path)
    with Session.open(db) as s:  # the pool's true per-item error of the target
        wrong = (s.store.scores("target").logprobs.argmax(axis=1) != pf.labels).astype(float)
    with Session.open(db) as s:
        draws = s.labelled_draws()
        errors = float(s.item_losses(draws)["error_rate"].sum())
    assert draws.k == 32 and draws.n_pool == 40
    sure = (errors / 40, (errors + 8) / 40)
    assert sure[0] <= wrong.mean() <= sure[1]  # the pool's true error rate: inside
    out = json.loads(run("estimate", db, "--json", "--target-width", "0.21"))
    a = out["metrics"]["error_rate"]["anytime"]
    assert (a["sure_low"], a["sure_high"]) == pytest.approx(sure)
    for lo, hi in (("fixed_low", "fixed_high"), ("cs_low", "cs_high")):
        assert sure[0] - 1e-12 <= a[lo] <= a[hi] <= sure[1] + 1e-12
    # the CS is at most the sure bounds' 8/40 = 0.2 wide: within the width asked for
    assert a["cs_high"] - a["cs_low"] <= 0.2 + 1e-12 and a["may_stop"] is True
    assert a["labels_needed"] is None or a["labels_needed"] <= 32
    text = " ".join(run("estimate", db, "--target-width", "0.21").split())
    said = (f"with 32 of the pool's 40 items labelled, the pool's value lies surely within "
            f"[{sure[0]:.4f}, {sure[1]:.4f}] whatever the 8 unlabelled item(s) turn out to be")
    assert said in text, text
    assert "you may stop now" in text
    # the report's figures and table show the same intervals at 32 labels
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    row = data.history["error rate"][-1]
    assert row.n_labels == 32
    assert (row.active.fixed.low, row.active.fixed.high) == pytest.approx(
        (a["fixed_low"], a["fixed_high"]), abs=1e-12)
    assert (row.active.anytime.low, row.active.anytime.high) == pytest.approx(
        (a["cs_low"], a["cs_high"]), abs=1e-12)


def test_status_says_the_sure_bounds_where_estimate_does(tmp_path: Path) -> None:
    """QA: ``status`` showed the blind-spot note but not the sure-bounds note that
    ``estimate`` showed beside the same intervals; it now repeats estimate's line, word
    for word, under the estimate's intervals (and none where estimate says none)."""
    db, _ = _qa_session(tmp_path)
    text = run("estimate", db)
    (line,) = [x for x in " ".join(text.split()).split("note: ") if "lies surely" in x]
    status = " ".join(run("status", db).split())
    assert f"note: {line.strip()}" in status, (line, status)
    big, _ = _labelled(tmp_path, "big", n_pool=400)
    run("estimate", big)
    assert "lies surely within" not in run("status", big)


def test_a_large_pool_is_not_cut_and_says_nothing(tmp_path: Path) -> None:
    """The same labels' share of a pool of 400 (32 labelled): the sure bounds are nearly
    the whole range, cut nothing and are not mentioned."""
    db, _ = _labelled(tmp_path, "big", n_pool=400)
    out = json.loads(run("estimate", db, "--json"))
    a = out["metrics"]["error_rate"]["anytime"]
    assert a["sure_low"] is None and a["sure_high"] is None
    assert "lies surely within" not in run("estimate", db)


def test_uniform_runs_for_a_width_read_the_same_cut_cs() -> None:
    """The projection of what uniform sampling needs for a width cuts its simulated runs'
    CS as the session cuts its own: on 40 items a width of 0.1 is reached by the time 36
    are labelled (the sure bounds are then (40 - 36) / 40 = 0.1 wide), and a width of 0
    (a point, as at a census) needs the whole pool."""
    assert uniform_runs_for_width(0.2, 40, 0.1, budget=20, labels=40, sure=True) <= 36
    assert uniform_runs_for_width(0.2, 40, 0.1, budget=20, labels=40) > 36  # not cut
    assert uniform_runs_for_width(0.3, 40, 0.0) == 40
    with pytest.raises(ValueError, match="width >= 0"):
        uniform_runs_for_width(0.3, 40, -0.1)


def test_the_compared_targets_risk_is_cut_too(tmp_path: Path) -> None:
    """A second target compared on the same labels: its risk's intervals are cut to what
    the labels make sure of it, and a line says so, naming it."""
    db, pf = _qa_session(tmp_path)
    pf_target2 = pf.target2
    out = json.loads(run("estimate", db, "--json", "--compare", f"table:{pf_target2}"))
    (c,) = out["comparisons"]
    o = c["other_anytime"]
    assert o["sure_low"] is not None
    assert o["sure_high"] - o["sure_low"] == pytest.approx(8 / 40)
    assert o["sure_low"] - 1e-12 <= o["cs_low"] <= o["cs_high"] <= o["sure_high"] + 1e-12
    text = " ".join(run("estimate", db, "--compare", f"table:{pf_target2}").split())
    assert re.search(r"table:\S*target2\.csv's error rate: with 32 of the pool's 40 items "
                     r"labelled, the pool's value lies surely within", text), text


def _ce_session(tmp_path: Path, n_labels: int = 32) -> Path:
    """The demo's 40 items, CE draws (seed 1), both metrics, ``n_labels`` labelled."""
    return _labelled(tmp_path, "ce", n_labels=n_labels, acquisition="ce", seed=1,
                     metric="both")[0]


def test_where_the_sure_bounds_are_said_every_interval_lies_within_them(
        tmp_path: Path) -> None:
    """QA: CE draws, 32 of 40 labelled: the note said the error rate lies surely within
    [0.2250, 0.4250] and that the fixed-budget interval is cut to it, beside a
    fixed-budget interval [0.2241, 0.3534] (its own cut, 0.0009, was under a tenth of its
    width) and a note that it "reaches below" the CS. Once the bounds cut one interval
    (and are said), every interval of that estimate is intersected with them; the
    report's curves at 32 labels are the same."""
    db = _ce_session(tmp_path)
    out = json.loads(run("estimate", db, "--json"))
    said = 0
    for metric, m in out["metrics"].items():
        for a in (m["anytime"], m["cv_anytime"]):
            if a is None or a["sure_low"] is None:
                continue
            said += 1
            lo, hi = a["sure_low"] - 1e-12, a["sure_high"] + 1e-12
            for name in ("fixed", "cs", "exact"):
                if a[f"{name}_low"] is not None:
                    assert lo <= a[f"{name}_low"] <= a[f"{name}_high"] <= hi, (metric, name, a)
    assert said > 0
    a = out["metrics"]["error_rate"]["anytime"]
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    row = data.history["error rate"][-1]
    assert (row.active.fixed.low, row.active.fixed.high) == pytest.approx(
        (a["fixed_low"], a["fixed_high"]), abs=1e-12)
    assert (row.active.anytime.low, row.active.anytime.high) == pytest.approx(
        (a["cs_low"], a["cs_high"]), abs=1e-12)
    assert "reaches below the anytime" not in run("estimate", db)


def test_a_census_says_no_sure_bounds(tmp_path: Path) -> None:
    """QA: every item labelled: beside "every pool item is labelled: the estimate is the
    pool's exact value", a note per metric (and per compared target) said the value lies
    surely within [0.2250, 0.2250] "whatever the 0 unlabelled item(s) turn out to be".
    At a census the census line alone speaks; the intervals are the point."""
    db = _ce_session(tmp_path, n_labels=40)
    other = f"table:{tmp_path / 'data-ce' / 'target2.csv'}"
    text = " ".join(run("estimate", db, "--target-width", "0.1").split())
    assert "every pool item is labelled: the estimate is the pool's exact value" in text
    for said in (text, " ".join(run("estimate", db, "--compare", other).split())):
        assert "lies surely within" not in said and "0 unlabelled" not in said, said
    out = json.loads(run("estimate", db, "--json"))
    a = out["metrics"]["error_rate"]["anytime"]
    assert a["fixed_low"] == pytest.approx(a["fixed_high"], abs=1e-9)


def test_the_note_names_the_intervals_it_cut(tmp_path: Path) -> None:
    """QA: 25 of 28 items labelled: the note said "the fixed-budget 95% interval and the
    anytime 95% confidence sequence are cut to it" beside a CS shown as "(from 30
    labels)", and left out the exact CS it had cut. The note names the intervals shown:
    the CS only where it is claimed, the exact CS where it is computed."""
    db, _ = _labelled(tmp_path, "s28", n_pool=28, n_labels=25, acquisition="ce", seed=5,
                      pool_seed=1)
    text = " ".join(run("estimate", db).split())
    assert "(from 30 labels)" in text
    assert ("the fixed-budget 95% interval and the exact anytime 95% confidence sequence "
            "are cut to it, which cannot lower their coverage") in text, text
    # 32 of 40: the CS is claimed, and named
    text = " ".join(run("estimate", _ce_session(tmp_path)).split())
    assert ("error rate: with 32 of the pool's 40 items labelled" in text
            and "the fixed-budget 95% interval, the anytime 95% confidence sequence and the "
            "exact anytime 95% confidence sequence are cut to it" in text), text


def test_the_labels_needed_count_the_sure_bounds(tmp_path: Path) -> None:
    """QA: 33 of 40 labelled (CE), a width of 0.12 asked for: "the anytime 95% confidence
    sequence reaches width 0.12 at about 39 labels (6 more; a projection)", though by 36
    labels the sure bounds are (40 - 36) / 40 = 0.1 wide, and the CS is cut to them (a
    cut of at least a tenth of its width, as it is wider than 0.12): 3 more surely do."""
    db, _ = _labelled(tmp_path, "w", n_labels=33, acquisition="ce", seed=5)
    a = json.loads(run("estimate", db, "--json", "--target-width", "0.12")
                   )["metrics"]["error_rate"]["anytime"]
    assert a["may_stop"] is False
    assert a["labels_needed"] is not None and 34 <= a["labels_needed"] <= 36, a
    # at 36 the bounds decide: certain, and said so, not "a projection" (the count is the
    # cap here: 0.9 * 0.12 * 40 = 4.32 unlabelled items at most)
    assert a["labels_needed"] == 36 and a["labels_needed_sure"] is True, a
    assert a["labels_needed_method"].startswith("certain, not a projection"), a
    text = " ".join(run("estimate", db, "--target-width", "0.12").split())
    assert ("is within width 0.12 by 36 labels at the latest (3 more): certain" in text
            and "36 labels (3 more; a projection)" not in text), text
    status = " ".join(run("status", db).split())
    assert "within width 0.12 by 36 labels at the latest (certain" in status, status
    with Session.open(db) as s:
        needed = s.report_data(target_width=0.12, progress=False).labels_needed
    assert [(p.anytime_n_labels, p.anytime_sure) for p in needed] == [(36, True)]
    # a large pool: the same labels are far from deciding anything; a projection
    big, _ = _labelled(tmp_path, "big", n_pool=400, n_labels=33, acquisition="ce", seed=5)
    b = json.loads(run("estimate", big, "--json", "--target-width", "0.12")
                   )["metrics"]["error_rate"]["anytime"]
    assert b["labels_needed"] is not None and b["labels_needed_sure"] is False, b
    assert b["labels_needed_method"].startswith("a projection"), b
    # and the count holds: 3 more labels, and the CS is within 0.12
    run("select", db, "--n", str(a["labels_needed"] - 33))
    run("label", db, "--from-data")
    a = json.loads(run("estimate", db, "--json", "--target-width", "0.12")
                   )["metrics"]["error_rate"]["anytime"]
    assert a["may_stop"] is True and a["cs_high"] - a["cs_low"] <= 0.12 + 1e-12, a


def test_the_labels_needed_cap_is_the_first_count_where_the_bounds_decide() -> None:
    """The cap on the labels a width needs (closed form, O(1) at any pool size) is the
    first label count past the current one where the CS is claimed and the sure bounds
    are at most 0.9 of the width, found here by walking the counts (random small pools,
    bounds 1 and a log loss's 2.5)."""
    from activetest.session.estimate import _sure_labels_for_width
    from activetest.stats.confseq import cs_claimed

    def walk(k: int, N: int, bound: float, width: float) -> int:
        for m in range(k + 1, N):
            if cs_claimed(m, N) and (N - m) * bound / N <= 0.9 * width:
                return m
        return N

    rng = np.random.default_rng(3)
    for _ in range(3000):
        N = int(rng.integers(2, 300))
        k = int(rng.integers(1, N))
        bound, width = float(rng.choice([1.0, 2.5])), float(rng.uniform(0.001, 1.2))
        assert _sure_labels_for_width(k, N, bound, width) == walk(k, N, bound, width)
    assert _sure_labels_for_width(10, 10**7, 1.0, 0.05) == 10**7 - 450_000


def test_a_log_loss_differences_sure_bounds_are_said_in_one_readable_sentence() -> None:
    """QA: the note of a log loss's difference shown as its sure bounds read "from the
    labelled items and what the unlabelled items, by at most 235 in all could add": the
    sentence broken, and 235 (a sum over the pool) beside intervals of the mean about
    0.78 wide each way. It now says what the unlabelled items could add, summed and on
    the mean; the error rate's (a count of items) is unchanged."""
    from activetest.session.estimate_base import SureBounds
    from activetest.session.estimate_notes import sure_line

    line = sure_line("table:b.csv", "log_loss", SureBounds(235.0, True, -0.2, 1.3667))
    assert line == ("target - table:b.csv (log loss): the intervals shown are the bounds "
                    "that hold surely, from the labelled items and what the unlabelled "
                    "items could add (at most 235 summed over them, 0.7833 either way on "
                    "the mean)"), line
    err = sure_line("table:b.csv", "error_rate", SureBounds(3.0, True, -0.1, 0.0))
    assert err.endswith("from the labelled items and what 3 unlabelled item(s) where the "
                        "two predictions differ could add"), err


def test_a_risk_outside_its_sure_bounds_is_said_at_the_number(tmp_path: Path) -> None:
    """QA: CE draws, 37 of 40 labelled: the error rate's LURE estimate 0.2222 lies outside
    the bounds that hold surely, [0.2250, 0.3000] (an unbiased estimate can: each label
    weighs by how unlikely its draw was), and was said so only in a note at the end, below
    intervals all cut to them; a paired difference's is said at the number. Now the
    estimate table marks it and says it under the table, `status` at the number, as does
    the Python API's summary; the note stays. Within its bounds nothing is said there."""
    db, _ = _labelled(tmp_path, "out", n_labels=37, acquisition="ce", seed=6, metric="both")
    m = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]
    e, a = m["active"]["estimate"], m["anytime"]
    lo, hi = a["sure_low"], a["sure_high"]
    assert a["estimate_outside_sure"] is True and not lo <= e <= hi, (e, lo, hi)
    mark = (f"outside the bounds that hold surely, [{lo:.4f}, {hi:.4f}]: unbiased, not "
            f"moved; see the note")
    text = run("estimate", db)
    (row,) = [x for x in text.splitlines() if x.strip().startswith("LURE estimate")]
    assert f"{e:.4f}†" in row, row
    flat = " ".join(text.split())
    assert f"† error_rate: {e:.4f} {mark}" in flat, flat
    assert f"The estimate {e:.4f} lies outside these bounds" in flat  # the note, as before
    # control-variate LURE, outside them too: marked at its number, and the note says so
    cv, ca = m["cv"]["estimate"], m["cv_anytime"]
    assert ca["estimate_outside_sure"] is True and not lo <= cv <= hi, (cv, lo, hi)
    assert f"error_rate: control-variate LURE {cv:.4f} ({mark})," in flat, flat
    assert f"Control-variate LURE's estimate {cv:.4f} lies outside them too" in flat, flat
    status = " ".join(run("status", db).split())
    assert f"error_rate LURE {e:.4f} ({mark})" in status, status
    assert f"error_rate control-variate LURE {cv:.4f} ({mark})" in status, status
    assert f"Control-variate LURE's estimate {cv:.4f} lies outside them too" in status
    with Session.open(db) as s:
        report = s.estimate(record=False, progress=False)
    assert f"error_rate: LURE {e:.4f} ({mark})" in str(report)
    # the QA session of 32 of 40 (uniform draws): inside its bounds, nothing at the number
    qa, _ = _qa_session(tmp_path)
    for said in (run("estimate", qa), run("status", qa)):
        assert "outside the bounds that hold surely" not in said and "†" not in said, said


def test_a_risk_outside_its_sure_bounds_is_marked_in_the_reports_table(tmp_path: Path
                                                                       ) -> None:
    """QA: the report's table of estimates left a single risk's estimate outside its sure
    bounds unmarked (0.2222 beside intervals cut to [0.225, 0.3]), where `estimate`'s table
    marks it with † and says it under the table, and a paired difference's is said at the
    number. The report's table now marks it the same way, with the same line under it,
    and its control-variate LURE note at the number; within its bounds nothing is said."""
    db, _ = _labelled(tmp_path, "out", n_labels=37, acquisition="ce", seed=6, metric="both")
    m = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]
    e, a, cv = m["active"]["estimate"], m["anytime"], m["cv"]["estimate"]
    assert a["estimate_outside_sure"] is True and m["cv_anytime"]["estimate_outside_sure"]
    run("report", db, "--out", tmp_path / "rep", "--no-progress")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    (row,) = [x for x in md.splitlines() if x.startswith("| error rate |")]
    assert f"| {e:.4g}† |" in row, row
    (row,) = [x for x in md.splitlines() if x.startswith("| log loss |")]
    assert "†" not in row, row  # within its bounds
    line = (f"† error rate: {e:.4g} outside the bounds that hold surely, "
            f"[{a['sure_low']:.4g}, {a['sure_high']:.4g}]: unbiased, not moved; see the note")
    assert line in md and "\\]" not in md, md  # as written (QA: "[0.225, 0.3\\]:")
    assert line in html.replace("&nbsp;", " "), html
    # the same words as `estimate` under its table (there with its own decimals)
    said = " ".join(run("estimate", db).split())
    assert line.replace(f"{e:.4g}", f"{e:.4f}").replace(
        f"[{a['sure_low']:.4g}, {a['sure_high']:.4g}]",
        f"[{a['sure_low']:.4f}, {a['sure_high']:.4f}]").replace("error rate", "error_rate") \
        in said, said
    assert (f"error rate {cv:.4f} (outside the bounds that hold surely, "
            f"[{a['sure_low']:.4f}, {a['sure_high']:.4f}]: unbiased, not moved; see the "
            f"note), fixed-budget") in md, md
    # the estimates figure rings that point, named in the legend in the table's words,
    # and its caption says so (QA: the point the table marks with † was drawn unringed)
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    fig = estimates_figure(data)
    assert OUTSIDE_POINT in [t.get_text() for t in fig.legends[0].get_texts()]
    panel = {ax.get_title(): ax for ax in fig.axes}
    (ring,) = [x for x in panel["error rate"].get_lines() if x.get_label() == OUTSIDE_POINT]
    assert list(ring.get_xdata()) == [37] and abs(ring.get_ydata()[0] - e) <= 1e-12
    assert not [x for x in panel["log loss"].get_lines() if x.get_label() == OUTSIDE_POINT]
    texts_inside(fig)
    assert ("error rate: a ringed point (†) is an estimate outside the bounds that hold "
            "surely at that count, unbiased, not moved)](estimates.png)") in md, md
    # the QA session of 32 of 40 (uniform draws): inside its bounds, no mark, no line, no ring
    qa, _ = _qa_session(tmp_path)
    run("report", qa, "--out", tmp_path / "qa", "--no-progress")
    md = (tmp_path / "qa" / "report.md").read_text(encoding="utf-8")
    assert "†" not in md and "outside the bounds that hold surely" not in md, md
    with Session.open(qa) as s:
        fig = estimates_figure(s.report_data(progress=False))
    assert not [x for ax in fig.axes for x in ax.get_lines() if x.get_label() == OUTSIDE_POINT]
