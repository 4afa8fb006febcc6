"""Sessions that compare two targets (``init --compare SPEC``, ``--acquisition compare``):
the compared model is scored on the pool at creation and compared at every estimate; the
``compare`` acquisition draws where the two targets' losses may differ, and the paired
difference it reports is LURE of the per-item difference at the session's own draws."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import PoolFiles, make_pool_files
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session import estimate as est
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure, expected_difference, zero_one_loss

runner = CliRunner()


def run(*args: object, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


def _init(pf: PoolFiles, db: Path, *extra: object, code: int = 0) -> str:
    return run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
               f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
               "--seed", "3", "--no-progress", *extra, code=code)


def _table(path: Path, ids: list[str]) -> np.ndarray:
    """A prediction table's (N, 2) log-probs in the pool's order (its columns id,
    negative, positive)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = {r["id"]: (float(r["negative"]), float(r["positive"]))
                for r in csv.DictReader(f)}
    return np.array([rows[i] for i in ids])


def _flipped(pf: PoolFiles, T: np.ndarray, rows: Any, path: Path) -> tuple[np.ndarray, Path]:
    """A compared model predicting as the target ``T`` but for the other class at
    ``rows``: its ``(N, 2)`` log-probs and the prediction table written to ``path``."""
    G = T.copy()
    G[rows] = G[rows][:, ::-1]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "negative", "positive"])
        for i, row in zip(pf.ids, G, strict=True):
            w.writerow([i, repr(float(row[0])), repr(float(row[1]))])
    return G, path


def _labelled_compare_session(tmp_path: Path, metric: str
                              ) -> tuple[Any, Any, str, dict[str, np.ndarray]]:
    """A compare session on 400 items with 60 labels drawn by the compare acquisition:
    ``(report, blind spots, compared spec, role -> (N, C) log-probs of the target and of
    the compared model)``."""
    from session_support import make_pool_files

    pf = make_pool_files(tmp_path / "data", n=400)
    db = tmp_path / "c.db"
    _init(pf, db, "--metric", metric, "--acquisition", "compare", "--compare",
          f"table:{pf.target2}")
    run("select", db, "--n", "60")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        parts = s._estimate(compare=(), n_boot=None, level=None, target_width=None,
                            record=False, progress=False)
        spec = s.session_config.compare[0]
        scores = {r: s.store.scores(r).logprobs for r in ("target", f"compare:{spec}")}
    return parts.report, parts.blind_spots, spec, scores


def test_a_compare_session_draws_where_the_two_differ_and_compares_at_every_estimate(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    pf = pool_files
    db = tmp_path / "c.db"
    other = f"table:{pf.target2}"
    out = _init(pf, db, "--metric", "error_rate", "--acquisition", "compare",
                "--compare", other)
    assert "acquisition compare" in out
    with Session.open(db) as s:
        cfg = s.session_config
        assert cfg.acquisition == "compare" and cfg.compare is not None and len(cfg.compare) == 1
        spec = cfg.compare[0]
        stored = s.store.scores(f"compare:{spec}")
        assert stored is not None and np.isfinite(stored.logprobs).all()  # the whole pool
        S = s.store.scores("surrogate").logprobs
        T = s.store.scores("target").logprobs
        G = stored.logprobs
        acq = s.store.scores("acquisition").logprobs[:, 0]
    assert np.array_equal(acq, expected_difference(S, T, G))
    agree = T.argmax(1) == G.argmax(1)
    assert agree.any() and (~agree).any()
    assert (acq[agree] == 0).all() and (acq[~agree] > 0).all()
    # the stored tables are the files' (the same numbers the acquisition was computed from)
    assert np.allclose(G, _table(pf.target2, pf.ids))
    assert f"compared with {spec} at every estimate" in run("status", db)
    run("select", db, "--n", "20")
    run("label", db, "--from-data")
    # every estimate compares with the model named at creation: no --compare needed
    data = json.loads(run("estimate", db, "--json"))
    (c,) = data["comparisons"]
    assert c["spec"] == spec and c["metric"] == "error_rate"
    text = run("estimate", db)
    assert "difference target - " in text
    # the difference is LURE of the per-item difference at the draws, with their q
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
        draws = s.labelled_draws()
    y = pf.labels[draws.rows]
    d = zero_one_loss(T[draws.rows], y) - zero_one_loss(G[draws.rows], y)
    (cmp_,) = r.comparisons
    assert cmp_.difference.estimate == pytest.approx(float(adaptive_lure(d, draws.q,
                                                                         draws.n_pool)))
    # items where the predictions agree got only the floor's share: the draws went where
    # they differ far more often than their share of the pool
    drawn_disagree = float((~agree[draws.rows]).mean())
    assert drawn_disagree > float((~agree).mean()) + 0.1
    # naming the same model again at estimate time compares once
    again = json.loads(run("estimate", db, "--json", "--compare", other))
    assert [x["spec"] for x in again["comparisons"]] == [spec]
    assert not any("serve the target's own risk" in w for w in again["warnings"])
    # a session whose draws serve the target: estimate --compare says a design for the
    # difference exists
    db2 = tmp_path / "t.db"
    _init(pf, db2, "--metric", "error_rate", "--acquisition", "ce")
    run("select", db2, "--n", "5")
    run("label", db2, "--from-data")
    hint = [w for w in json.loads(run("estimate", db2, "--json", "--compare", other))["warnings"]
            if "serve the target's own risk" in w]
    assert len(hint) == 1 and "--acquisition compare" in hint[0]


def test_compare_without_the_compare_acquisition_is_scored_and_compared(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    pf = pool_files
    db = tmp_path / "a.db"
    _init(pf, db, "--metric", "both", "--compare", f"table:{pf.target2}")
    run("select", db, "--n", "8")
    run("label", db, "--from-data")
    data = json.loads(run("estimate", db, "--json"))
    assert {c["metric"] for c in data["comparisons"]} == {"log_loss", "error_rate"}
    with Session.open(db) as s:
        assert s.session_config.acquisition == "adaptive"


def test_bad_compare_options_are_refused_with_one_message(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    pf = pool_files
    out = _init(pf, tmp_path / "x.db", "--acquisition", "compare", code=2)
    assert "give one --compare SPEC (got 0)" in out
    out = _init(pf, tmp_path / "y.db", "--acquisition", "compare", "--compare",
                f"table:{pf.target2}", "--compare", f"table:{pf.surrogate}", code=2)
    assert "(got 2)" in out
    out = _init(pf, tmp_path / "z.db", "--compare", f"table:{pf.target}", code=2)
    assert "is the session's target" in out
    assert "Traceback" not in out
    # a compared table that lacks items, or is not there: one message naming the file
    short = tmp_path / "short.csv"
    lines = pf.target2.read_text(encoding="utf-8").splitlines()
    short.write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")
    out = _init(pf, tmp_path / "s.db", "--acquisition", "compare", "--compare",
                f"table:{short}", code=2)
    assert f"{short}: no row for 3 of 60 item id(s): 'r57', 'r58', 'r59'" in out
    out = _init(pf, tmp_path / "n.db", "--compare", f"table:{tmp_path / 'nope.csv'}", code=2)
    assert "nope.csv: no such file or folder" in out and "Traceback" not in out
    assert not any(tmp_path.glob("*.db"))  # nothing left behind


def test_only_unexplored_items_where_the_two_differ_widen_the_difference(
        tmp_path: Path) -> None:
    """400 items, 60 labels by the compare acquisition: the items where the two targets
    agree are drawn at the floor's rate, so the target's own error rate is widened for
    what they could hide; the difference cannot hide anything there (0 whatever the
    label), so its blind spot counts only the unexplored items where the predictions
    differ, and it is not widened by the target's."""
    from activetest.session.blindspot import difference_bounds

    rep, blind, spec, scores = _labelled_compare_session(tmp_path, "error_rate")
    T, G = scores["target"], scores[f"compare:{spec}"]
    spot = blind["error_rate"]
    own = spot.estimate.widen_high[-1]
    diff = spot.differences[spec].widen_high[-1]
    assert own > 0.1  # the target's own blind spot: many unexplored agreeing items
    assert diff < own / 4
    B = difference_bounds("error_rate", T, G)
    assert set(np.unique(B)) == {0.0, 1.0}
    (c,) = rep.comparisons
    a = c.difference_anytime
    # the difference's interval is far narrower than a widening by the target's D would be
    assert a.fixed_high - a.fixed_low < own
    assert any(w.startswith("this session draws for the difference with ") for w in
               rep.warnings)
    # the line says which interval was widened by which amount: the other target's error
    # rate by the target's D (its errors could hide anywhere), the difference by its own
    (line,) = [w for w in rep.warnings if w.startswith(f"compared with {spec} (error rate)")]
    assert f"those of {spec}'s error rate by +{own:.4g}" in line
    assert (f"those of target - {spec} by +/-{diff:.4g} (only where" in line) == (diff > 0)
    # one sentence in order (QA: "... of X's error rate by +0.69 widened for what ...")
    assert line.startswith(f"compared with {spec} (error rate): the fixed-budget 95% "
                           f"interval and anytime 95% confidence sequence are widened for "
                           f"what the "), line


def test_once_every_item_where_they_differ_is_labelled_the_difference_is_known(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A compared model that predicts as the target on all but 3 of 60 items: the
    difference of their error rates is 0 on the other 57 whatever the labels, so once
    the 3 are labelled it is known exactly, and the intervals say so (the sure bounds:
    the labelled differences plus the most the unlabelled items could add). Before, the
    exact CS of the few-differences rule stood in (never 5 labelled differences: the pool
    has 3) and stayed wide at any budget."""
    pf = pool_files
    T = _table(pf.target, pf.ids)
    flip = [4, 17, 33]
    G, other = _flipped(pf, T, flip, tmp_path / "other.csv")  # the other class on those 3
    db = tmp_path / "k.db"
    _init(pf, db, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{other}")
    run("select", db, "--n", "12")
    run("label", db, "--from-data")
    y = pf.labels
    truth = float(((T.argmax(1) != y).astype(float) - (G.argmax(1) != y)).mean())
    with Session.open(db) as s:
        draws = s.labelled_draws()
        assert set(flip) <= set(draws.rows.tolist())  # the proposal put them first
        r = s.estimate(record=False, progress=False)
    (c,) = r.comparisons
    a = c.difference_anytime
    assert (a.fixed_low, a.fixed_high) == pytest.approx((truth, truth), abs=1e-12)
    assert (a.cs_low, a.cs_high) == pytest.approx((truth, truth), abs=1e-12)
    # said as what it is: neither the CLT intervals nor the exact CS
    assert a.basis == "sure" and "known exactly" in a.basis_note
    assert a.basis_note in r.warnings
    assert not any("target - " in w and "are the exact anytime" in w for w in r.warnings)
    # with 2 labels: the interval holds the truth, at most 2 / 60 wide per unlabelled one
    db2 = tmp_path / "k2.db"
    _init(pf, db2, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{other}")
    run("select", db2, "--n", "2")
    run("label", db2, "--from-data")
    with Session.open(db2) as s:
        (c2,) = s.estimate(record=False, progress=False).comparisons
        left = len(set(flip) - set(s.labelled_draws().rows.tolist()))
    a2 = c2.difference_anytime
    assert 1 <= left <= 2
    assert a2.basis == "sure" and f"what {left:g} unlabelled item(s) where" in a2.basis_note
    assert a2.fixed_low <= truth <= a2.fixed_high
    assert a2.fixed_high - a2.fixed_low <= 2 * left / 60 + 1e-12


def _sure_bounds_session(pf: PoolFiles, tmp_path: Path) -> tuple[Path, Path]:
    """A compare session (error rate) whose difference's intervals are its sure bounds:
    the target and a copy with 3 predictions flipped, 12 items labelled; ``(db, other)``.

    Two tests use it and check different things (so both stay): where the bounds are
    named in `estimate`, `status` and the report's table
    (:func:`test_the_sure_bounds_are_named_wherever_a_difference_shows_them`), and the
    report's difference figure's last point (:func:`test_the_difference_figure_takes_the
    _sure_bounds_at_the_last_count_and_says_so`)."""
    _, other = _flipped(pf, _table(pf.target, pf.ids), [4, 17, 33], tmp_path / "other.csv")
    db = tmp_path / "k.db"
    _init(pf, db, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{other}")
    run("select", db, "--n", "12")
    run("label", db, "--from-data")
    return db, other


def test_the_sure_bounds_are_named_wherever_a_difference_shows_them(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: where a difference's intervals are its sure bounds (basis "sure"), only the
    JSON and a note said so: `estimate`, `status` and the report's comparison table showed
    them under the CLT intervals' names, and the report's verdict named the anytime CS.
    Each of their cells now says "(sure bounds)", as "(exact anytime CS)" marks the exact
    anytime CS, and the verdicts are named by them; the compared target's own row (not
    sure) is not."""
    db, other = _sure_bounds_session(pool_files, tmp_path)
    (c,) = json.loads(run("estimate", db, "--json"))["comparisons"]
    assert c["difference_anytime"]["basis"] == "sure"  # the case at hand
    assert c["other_anytime"]["basis"] != "sure"

    def flat(text: str) -> str:
        return " ".join(text.split())  # rich wraps long lines

    cell = r"\[[^\]]+\]"
    sure = (rf"fixed-budget 95% interval {cell} \(sure bounds\);? anytime 95% confidence "
            rf"sequence {cell} \(sure bounds\);? bootstrap 95% interval {cell}")
    said = flat(run("estimate", db))  # recorded: status shows this one
    # (its estimate lies outside them here, which the number's bracket says)
    outside = r"; outside the bounds that hold surely, [^)]+"
    assert re.search(rf"difference target - other = \S+ \(paired LURE, same labels"
                     rf"{outside}\), " + sure, said), said
    assert said.count("(sure bounds)") == 2
    assert "by the sure bounds of the difference:" in said
    st = flat(run("status", db))
    # the compared table as the session file names it: by its name, not its path
    assert re.search(rf"difference target - table:{re.escape(other.name)} = \S+ \(paired "
                     rf"LURE, same labels{outside}\) " + sure.replace(";?", ""), st), st
    assert st.count("(sure bounds)") == 2  # not the compared target's own row
    out = tmp_path / "report"
    run("report", db, "--out", out)
    md = (out / "report.md").read_text(encoding="utf-8")
    (row,) = [r for r in md.splitlines() if r.startswith("| error rate | difference ")]
    cells = row.split(" | ")
    assert cells[3].endswith("] (sure bounds)") and cells[4].endswith("] (sure bounds)"), row
    assert "(sure bounds)" not in cells[5]  # the bootstrap
    assert "lower by the sure bounds (hold at any label count)" in cells[7] or (
        "not decided by the sure bounds" in cells[7]), row
    (second,) = [r for r in md.splitlines() if r.startswith("| error rate | second target ")]
    assert "(sure bounds)" not in second
    assert "Cells marked (sure bounds): for the difference's error rate both cells are the " \
           "sure bounds (hold at any label count)" in flat(md)
    assert "(sure bounds)" in (out / "report.html").read_text(encoding="utf-8")


def test_a_model_compared_at_creation_bounds_its_own_log_loss_too(tmp_path: Path) -> None:
    """Known on the pool, the compared model's log loss has a bound per item (its largest
    ``-log p``): its intervals are widened for what the unexplored items could hide, and
    the line says by how much, instead of assuming no rare large losses there."""
    rep, blind, spec, scores = _labelled_compare_session(tmp_path, "both")
    G = scores[f"compare:{spec}"]
    curve = blind["log_loss"].others[spec]
    D = float(curve.widen_high[-1])
    assert 0 < D <= float((-G.min(axis=1)).sum()) / 400  # at most all items' bounds
    (line,) = [w for w in rep.warnings if w.startswith(f"compared with {spec} (log loss)")]
    assert f"{spec}'s log loss by +{D:.4g}" in line
    assert "assumes no rare large losses" not in line
    c = {c.metric: c for c in rep.comparisons}["log_loss"]
    assert c.other_anytime.fixed_high - c.other_anytime.fixed_low > D  # widened by D


def test_a_log_loss_compare_session_leaves_no_item_where_they_differ_unexplored(
        tmp_path: Path) -> None:
    """For the log loss every item's difference can be non-zero, and the raw score
    ``sqrt(E[d^2])`` leaves many items near the floor's rate: each such item never drawn
    would widen the difference's intervals by its bound. The stored scores are raised so
    that every item where the two can differ is drawn at 1.2 times the blind ratio of the
    uniform rate or more (``explored_scores``), and after 60 labels the difference's blind
    spot counts no unexplored item."""
    from activetest.session.blindspot import difference_bounds
    from activetest.session.design import EXPLORE_MARGIN
    from activetest.stats.proposal import explored_scores, proposal

    _, blind, spec, scores = _labelled_compare_session(tmp_path, "log_loss")
    db = tmp_path / "c.db"
    with Session.open(db) as s:
        acq = s.store.scores("acquisition").logprobs[:, 0]
        S = s.store.scores("surrogate").logprobs
        cfg = s.session_config
    T, G = scores["target"], scores[f"compare:{spec}"]
    raw = expected_difference(S, T, G, metric="log_loss")
    reach = difference_bounds("log_loss", T, G) > 0
    assert cfg.blind_ratio is not None
    rate = EXPLORE_MARGIN * cfg.blind_ratio
    n = acq.size
    before = proposal(raw, np.ones(n, dtype=bool), cfg.proposal_floor) * n
    after = proposal(acq, np.ones(n, dtype=bool), cfg.proposal_floor) * n
    assert (before[reach] < cfg.blind_ratio).sum() > n // 10  # the raw scores' blind spot
    assert after[reach].min() >= rate * (1 - 1e-9)
    assert np.array_equal(acq, explored_scores(raw, reach, rate,
                                               proposal_floor=cfg.proposal_floor))
    curve = blind["log_loss"].differences[spec]
    assert int(curve.n_unexplored[-1]) == 0 and float(curve.widen_high[-1]) == 0.0


def test_the_exact_cs_of_a_difference_bounds_each_draw_by_the_items_it_could_draw(
        tmp_path: Path) -> None:
    """A compared model wrong on 60 items where the target is right, and predicting as
    the target elsewhere: every labelled difference is -1 or 0, so the few-differences
    rule keeps the exact CS. Bounding each draw by the floor (``1 / q_floor`` per draw)
    kept it about +-1 wide; bounding it by the items the proposal could draw and their
    bounds (0 where the two agree) gives a CS far inside that and inside the sure bounds,
    still holding the truth."""
    from session_support import make_pool_files

    from activetest.stats.betting import paired_difference_exact_cs
    from activetest.stats.fewerrors import MIN_ERRORS

    pf = make_pool_files(tmp_path / "data", n=400)
    T = _table(pf.target, pf.ids)
    y = pf.labels
    right = np.flatnonzero(T.argmax(1) == y)
    assert right.size >= 60
    flip = right[:60]
    G, other = _flipped(pf, T, flip, tmp_path / "worse.csv")
    db = tmp_path / "w.db"
    _init(pf, db, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{other}")
    run("select", db, "--n", "25")
    run("label", db, "--from-data")
    N = len(pf.ids)
    truth = float(((T.argmax(1) != y).astype(float) - (G.argmax(1) != y)).mean())
    assert truth == pytest.approx(-60 / N)
    with Session.open(db) as s:
        draws = s.labelled_draws()
        r = s.estimate(record=False, progress=False)
        floor = s.session_config.proposal_floor
    (c,) = r.comparisons
    a = c.difference_anytime
    d = ((T.argmax(1) != y).astype(float) - (G.argmax(1) != y))[draws.rows]
    assert (d != -1).sum() < MIN_ERRORS  # the exact CS stands in
    assert a.basis == "exact"
    old = paired_difference_exact_cs((T.argmax(1) != y)[draws.rows].astype(float),
                                     (G.argmax(1) != y)[draws.rows].astype(float), draws.q, N,
                                     bound_a=1.0, bound_b=1.0, q_floor=floor / (1 + floor))
    assert old.high[-1] - old.low[-1] > 1.5
    left = 60 - int(np.isin(flip, draws.rows).sum())
    assert a.cs_low <= truth <= a.cs_high
    assert a.cs_high - a.cs_low < 0.6 * (2 * left / N)  # inside the sure bounds
    assert a.cs_high < 0  # the target is better, and the CS says so


def test_an_adaptive_sessions_exact_cs_of_a_difference_bounds_each_draw_by_its_design(
        tmp_path: Path) -> None:
    """The default (adaptive) acquisition, a model compared at creation that is wrong on
    20 items where the target is right and predicts as the target elsewhere: after 150
    labels only a few differences are labelled, so the exact CS stands in. Each draw is
    bounded by what the design's replayed proposal could draw next (0 where the two
    agree), not by the floor: the CS leaves the sure bounds and is narrower than the
    floor's version (which stays at them), still holding the truth."""
    from session_support import make_pool_files

    from activetest.stats.betting import paired_difference_exact_cs
    from activetest.stats.fewerrors import MIN_ERRORS

    pf = make_pool_files(tmp_path / "data", n=400)
    T = _table(pf.target, pf.ids)
    y = pf.labels
    flip = np.flatnonzero(T.argmax(1) == y)[:20]
    G, other = _flipped(pf, T, flip, tmp_path / "worse.csv")
    db = tmp_path / "a.db"
    _init(pf, db, "--metric", "error_rate", "--compare", f"table:{other}")
    run("select", db, "--n", "150")
    run("label", db, "--from-data")
    N = len(pf.ids)
    La, Lb = (T.argmax(1) != y).astype(float), (G.argmax(1) != y).astype(float)
    truth = float((La - Lb).mean())
    with Session.open(db) as s:
        assert s.session_config.acquisition == "adaptive"
        draws = s.labelled_draws()
        r = s.estimate(record=False, progress=False)
    (c,) = r.comparisons
    a = c.difference_anytime
    d = (La - Lb)[draws.rows]
    assert 0 < (d != 0).sum() < MIN_ERRORS and a.basis == "exact"
    rest = 20 - np.cumsum(np.isin(draws.rows, flip))
    old = paired_difference_exact_cs(La[draws.rows], Lb[draws.rows], draws.q, N,
                                     bound_a=1.0, bound_b=1.0, q_floor=0.1, rest_bound=rest)
    sure_high = (d.sum() + rest[-1]) / N
    assert old.high[-1] == pytest.approx(sure_high, abs=1e-9)  # the floor's: the sure bound
    assert a.cs_low <= truth <= a.cs_high
    assert a.cs_high < sure_high - 0.01  # 0.022 against 0.035


def test_draws_the_proposal_could_not_have_made_keep_the_floors_bound() -> None:
    """The per-draw bound is only used where every labelled draw is within it (the
    stored scores are the ones the draws were made with); draws it does not cover (a
    file whose scores were changed) keep the floor's bound, and nothing fails."""
    from activetest.session.estimate import LabelledDraws, difference_few_inputs
    from activetest.stats.betting import paired_difference_exact_cs

    N, K = 50, 8
    rows = np.arange(K)
    draws = LabelledDraws(N, tuple(f"i{r}" for r in rows), tuple(range(1, K + 1)), rows,
                          np.full(K, 5e-3), np.zeros(K, dtype=np.int64), K)
    La = np.zeros(K)
    Lb = np.array([1.0, 1, 1, 1, 1, 1, 1, 0])
    B = np.ones(N)
    scores = np.ones(N)  # uniform: q = 1 / (N - m), far above the recorded 5e-3
    got = difference_few_inputs(La, Lb, draws, 5, q_floor=0.1 / 1.1, item_bounds=B,
                                proposal=(scores, 0.1))
    assert got is not None
    want = paired_difference_exact_cs(La, Lb, draws.q, N, bound_a=1.0, bound_b=1.0,
                                      q_floor=0.1 / 1.1,
                                      rest_bound=B.sum() - np.cumsum(B[rows]))
    np.testing.assert_array_equal(got.exact_low, want.low)
    np.testing.assert_array_equal(got.exact_high, want.high)
    # an adaptive design's replayed bound that the draws exceed: the floor's stays too
    got = difference_few_inputs(La, Lb, draws, 5, q_floor=0.1 / 1.1, item_bounds=B,
                                weight_bound=np.full(K, 10.0))
    assert got is not None
    np.testing.assert_array_equal(got.exact_low, want.low)
    np.testing.assert_array_equal(got.exact_high, want.high)
    # one over the first 20 of 30 draws (|d| / q = 20 each): the floor's bound
    # continues it after them, and it makes the CS narrower than the floor's alone
    N, K = 50, 30
    rows = np.arange(K)
    draws = LabelledDraws(N, tuple(f"i{r}" for r in rows), tuple(range(1, K + 1)), rows,
                          np.full(K, 0.05), np.zeros(K, dtype=np.int64), K)
    La, Lb = np.zeros(K), np.zeros(K)
    Lb[[2, 9, 17]] = 1.0
    B = np.zeros(N)
    B[[2, 9, 17, 40, 41, 42, 43, 44, 45, 46]] = 1.0
    rest = B.sum() - np.cumsum(B[rows])
    W = np.full(20, 25.0)
    got = difference_few_inputs(La, Lb, draws, 5, q_floor=0.1 / 1.1, item_bounds=B,
                                weight_bound=W)
    full = np.concatenate([W, (N - np.arange(20, K)) / (0.1 / 1.1) * (1 + 1e-9)])
    want = paired_difference_exact_cs(La, Lb, draws.q, N, bound_a=1.0, bound_b=1.0,
                                      weight_bound=full, rest_bound=rest)
    np.testing.assert_array_equal(got.exact_low, want.low)
    np.testing.assert_array_equal(got.exact_high, want.high)
    floor_only = difference_few_inputs(La, Lb, draws, 5, q_floor=0.1 / 1.1, item_bounds=B)
    assert got.exact_high[19] < floor_only.exact_high[19] - 5e-4  # 0.079 against 0.080
    whole = difference_few_inputs(La, Lb, draws, 5, q_floor=0.1 / 1.1, item_bounds=B,
                                  weight_bound=np.full(K, 25.0))
    assert whole.exact_high[-1] < got.exact_high[-1] - 0.02  # 0.0375 against 0.075
    # a new session's draws carry their least proposal (exact_least): after the prefix
    # each draw is bounded by max B / q_min, q_min the larger of it and the floor's
    least = np.full(K, 0.04)
    got2 = difference_few_inputs(La, Lb, replace(draws, q_least=least), 5,
                                 q_floor=0.1 / 1.1, item_bounds=B, weight_bound=W)
    q_min = np.maximum((0.1 / 1.1) / (N - np.arange(K)), least * (1 - 1e-9))
    full2 = np.concatenate([W, 1.0 / q_min[20:] * (1 + 1e-9)])
    want2 = paired_difference_exact_cs(La, Lb, draws.q, N, bound_a=1.0, bound_b=1.0,
                                       weight_bound=full2, rest_bound=rest)
    np.testing.assert_array_equal(got2.exact_low, want2.low)
    np.testing.assert_array_equal(got2.exact_high, want2.high)
    assert got2.exact_high[-1] < got.exact_high[-1] - 0.005


def _qa_pool(folder: Path, n: int = 200, seed: int = 0) -> tuple[Path, Path, Path, Path]:
    """Reviews with a surrogate and two targets of accuracy 0.8, 0.75 and 0.65 (sharper
    to blunter): the pool the QA pass found the report's unclipped log loss on."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    words = ["great", "awful", "fine", "bad", "lovely", "boring", "superb", "meh"]
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pool.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text", "label"])
        for i in range(n):
            w.writerow([f"r{i}", f"review {i}: " + " ".join(rng.choice(words, 5)),
                        ["negative", "positive"][labels[i]]])
    paths = []
    for name, acc, sharp in (("surrogate", .8, 1.5), ("target", .75, 2.0), ("target2", .65, 1.0)):
        pred = np.where(rng.random(n) < acc, labels, 1 - labels)
        conf = 1 / (1 + np.exp(-rng.normal(sharp, 1.0, n)))
        p = np.clip(np.where(pred == 1, conf, 1 - conf), 1e-9, 1 - 1e-9)
        lp = np.log(np.stack([1 - p, p], 1))
        with (folder / f"{name}.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "negative", "positive"])
            for i in range(n):
                w.writerow([f"r{i}", repr(float(lp[i, 0])), repr(float(lp[i, 1]))])
        paths.append(folder / f"{name}.csv")
    return folder / "pool.csv", paths[0], paths[1], paths[2]


def test_the_reports_log_loss_intervals_are_the_estimates_where_the_loss_bound_clips(
        tmp_path: Path) -> None:
    """The report's curves keep the log loss's intervals within the largest loss any pool
    item can have, as the estimate does: after 50 labels drawn by the compare acquisition
    the fixed-budget interval reaches that bound, and the report's last row shows the
    estimate's intervals (it showed [0.4486, 6.405] against [0.4486, 4.8821], an upper
    end above any possible log loss, QA). Before 30 labels the report shows no anytime
    CS (it showed the clipped range, and the plot a band over it), as `estimate` says
    "(from 30 labels)"."""
    pool, sur, tgt, tgt2 = _qa_pool(tmp_path / "data")
    db = tmp_path / "r.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{sur}",
        "--target", f"table:{tgt}", "--id-column", "id", "--seed", "5", "--no-progress",
        "--metric", "both", "--compare", f"table:{tgt2}", "--acquisition", "compare")
    run("select", db, "--n", "10")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        early = s.report_data(progress=False)
    assert all(r.active.anytime is None for r in early.history["log loss"])
    run("select", db, "--n", "40")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        rep = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
        bound = float((-s.store.scores("target").logprobs.min(axis=1)).max())
    a = rep.metrics["log_loss"].anytime
    assert a is not None
    row = data.history["log loss"][-1]
    assert row.n_labels == 50
    assert (row.active.fixed.low, row.active.fixed.high) == pytest.approx(
        (a.fixed_low, a.fixed_high), abs=1e-12)
    assert (row.active.anytime.low, row.active.anytime.high) == pytest.approx(
        (a.cs_low, a.cs_high), abs=1e-12)
    assert max(a.fixed_high, a.cs_high) <= bound + 1e-12
    # what 50 labels make sure clips here, below the bound: the labelled log losses
    # plus at most the bound on each item not labelled
    assert a.sure_high is not None and a.sure_high < bound
    assert a.fixed_high == pytest.approx(a.sure_high)


def test_a_log_loss_difference_no_labelled_item_shows_is_not_a_point(tmp_path: Path) -> None:
    """A compared model with the target's log-probs on every labelled item and others on
    10 unlabelled ones: the labelled differences are all 0, and the log loss's paired
    difference was the point [-1e-12, 1e-12] (a CLT interval of zero spread). The
    few-differences rule now covers it: with the compared model scored on the pool
    (``init --compare``) the intervals are the sure bounds, holding the truth; compared
    only at ``estimate`` (its losses known on the labelled items alone) no bound is
    known, and the intervals say so (unbounded, with the note naming the metric)."""
    from session_support import make_pool_files

    pf = make_pool_files(tmp_path / "data", n=200)
    T = _table(pf.target, pf.ids)
    db = tmp_path / "e.db"
    _init(pf, db, "--metric", "both")
    run("select", db, "--n", "40")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        seen = set(s.labelled_draws().rows.tolist())
    flip = [i for i in range(len(pf.ids)) if i not in seen][:10]
    G, other = _flipped(pf, T, flip, tmp_path / "t10.csv")
    y = pf.labels
    truth = float((-T[np.arange(len(y)), y] + G[np.arange(len(y)), y]).mean())
    assert abs(truth) > 0.01
    out = run("estimate", db, "--compare", f"table:{other}")
    assert "[-0.0000, 0.0000]" not in out, out
    line = next(x for x in out.splitlines() if "difference target - other" in x)
    # one bracket says both what stands in and where to read why (QA: "unbounded (see
    # the note) (exact CS)")
    assert "fixed-budget 95% interval unbounded (exact anytime CS; see the note);" in line, \
        out
    assert "(log loss): the fixed-budget 95% interval and the anytime 95% confidence " \
           "sequence are the whole range" in " ".join(out.split()), out
    with Session.open(db) as s:
        r = s.estimate(compare=[f"table:{other}"], record=False, progress=False)
    c = next(c for c in r.comparisons if c.metric == "log_loss")
    a = c.difference_anytime
    assert a is not None and a.basis == "exact"
    assert a.fixed_low == -np.inf and a.fixed_high == np.inf
    # compared at creation: the sure bounds, with the truth inside
    db2 = tmp_path / "e2.db"
    _init(pf, db2, "--metric", "both", "--compare", f"table:{other}")
    run("select", db2, "--n", "40")
    run("label", db2, "--from-data")
    with Session.open(db2) as s:
        assert set(s.labelled_draws().rows.tolist()) == seen  # the same draws
        r = s.estimate(record=False, progress=False)
    c = next(c for c in r.comparisons if c.metric == "log_loss")
    a = c.difference_anytime
    assert a is not None and a.fixed_high - a.fixed_low > 0.05
    assert a.fixed_low <= truth <= a.fixed_high and a.cs_low <= truth <= a.cs_high


def test_a_difference_says_what_it_subtracts_where_the_headline_is_the_designs(
        tmp_path: Path) -> None:
    """An adaptive session's headline is the design's estimate (with its control); the
    paired difference is LURE of the per-item difference, i.e. the target's plain LURE
    minus the other's. The numbers shown did not add up (QA: 0.7780 - 0.7346 shown as a
    difference of 0.0699); the record now carries the target's LURE, the difference is
    exactly it minus the other's, and the output and the report say so."""
    from session_support import make_pool_files

    from activetest.stats import lure

    pf = make_pool_files(tmp_path / "data", n=300)
    db = tmp_path / "s.db"
    _init(pf, db, "--metric", "both", "--compare", f"table:{pf.target2}")
    for n in (40, 30):  # the design refits between the two batches
        run("select", db, "--n", n)
        run("label", db, "--from-data")
    with Session.open(db) as s:
        draws = s.labelled_draws()
        r = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
    T = _table(pf.target, pf.ids)[draws.rows]
    y = pf.labels[draws.rows]
    own = {"log_loss": -T[np.arange(draws.k), y],
           "error_rate": (T.argmax(1) != y).astype(float)}
    shown = 0
    for c in r.comparisons:
        want = float(lure(own[c.metric], draws.q, draws.n_pool))
        assert c.target_lure == pytest.approx(want, abs=1e-12)
        assert c.difference.estimate == pytest.approx(c.target_lure - c.other.estimate,
                                                      abs=1e-12)
        headline = r.metrics[c.metric].active.estimate
        shown += abs(headline - c.target_lure) >= 5e-5
    assert shown  # the design's control moved the headline off LURE here
    out = " ".join(run("estimate", db).split())
    assert "(paired LURE, same labels: the target's LURE" in out, out
    assert any("the paired difference is the target's LURE" in n for n in data.notes)


def test_estimate_refuses_the_target_as_its_own_comparison_and_names_the_plain_mean(
        tmp_path: Path) -> None:
    """``estimate --compare`` with the target itself is refused as ``init --compare`` is
    (it was accepted: a difference of 0 from the same model); and the footnote of the
    plain mean does not call it biased "here" where it equals the estimate (uniform
    draws)."""
    from session_support import make_pool_files

    pf = make_pool_files(tmp_path / "data", n=100)
    db = tmp_path / "u.db"
    _init(pf, db, "--acquisition", "uniform")
    run("select", db, "--n", "10")
    run("label", db, "--from-data")
    out = run("estimate", db, "--compare", f"table:{pf.target}", code=2)
    assert "is the session's target" in out and out.count("error:") == 1
    out = " ".join(run("estimate", db).split())
    assert "unbiased here, where every draw so far was made at the uniform rate." in out
    assert "BIASED here" not in out, out
    assert "uniform-equivalent (biased)" not in out  # the row agrees with its footnote (QA)
    run("report", db, "--out", tmp_path / "rep")  # the report's table and legend too (QA)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| uniform-equivalent |" in md and "(biased)" not in md, md
    with Session.open(db) as s:
        assert not s.report_data(progress=False).uniform_biased
    # an adaptive design's uniform start: the estimate differs by its control, the draws
    # are uniform all the same (QA: "BIASED here (items were drawn actively)")
    db3 = tmp_path / "ad.db"
    _init(pf, db3, "--metric", "both")
    run("select", db3, "--n", "2")
    run("label", db3, "--from-data")
    with Session.open(db3) as s:
        r = s.estimate(record=False, progress=False)
    assert r.uniform_draws
    out = " ".join(run("estimate", db3).split())
    assert "unbiased here, where every draw so far was made at the uniform rate" in out, out
    assert "BIASED here" not in out
    out = " ".join(run("status", db3).split())  # status agrees (QA: "(biased)" there)
    assert "uniform-equivalent" in out and "(biased)" not in out, out
    db2 = tmp_path / "a.db"
    _init(pf, db2, "--acquisition", "ce")
    run("select", db2, "--n", "10")
    run("label", db2, "--from-data")
    assert "BIASED here (items were drawn actively)" in " ".join(run("estimate", db2).split())
    # a fixed design's bootstrap projection is not described as an adaptive design's (QA)
    out = " ".join(run("estimate", db2, "--target-width", "0.3").split())
    assert "a projection from the bootstrap: 1/sqrt(labels) shrinkage)" in out, out
    with Session.open(db2) as s:
        assert not s.estimate(record=False, progress=False).uniform_draws
    # every item labelled under CE: equal because it is a census, not uniform draws (QA)
    run("select", db2, "--n", "90")
    run("label", db2, "--from-data")
    out = " ".join(run("estimate", db2).split())
    assert "here it equals the estimate: every pool item is labelled (a census)" in out, out
    assert "uniform rate" not in out


def test_estimates_outside_what_their_intervals_hold_are_said(tmp_path: Path) -> None:
    """Control-variate LURE below 0 (6 labels) had no note (QA: -0.2163 beside a fixed
    interval starting at it); a difference outside the bounds that hold surely, or outside
    its own CS, neither (QA: -0.7567 beside [-0.7374, -0.1285], flagged only in JSON)."""
    from session_support import make_pool_files

    from activetest.session.records import AnytimeInterval

    pf = make_pool_files(tmp_path / "data", n=60)
    lines = pf.target.read_text().splitlines()
    bad = tmp_path / "bad.csv"  # the target's predictions with the classes swapped
    bad.write_text("\n".join([lines[0]] + [
        ",".join([ln.split(",")[0], ln.split(",")[2], ln.split(",")[1]])
        for ln in lines[1:]]) + "\n")
    db = tmp_path / "s.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--compare", f"table:{bad}",
        "--acquisition", "compare", "--metric", "both", "--seed", "7", "--no-progress")
    with Session.open(db) as s:
        s.select(6)
        s.label_from_data()
        rep = s.estimate(record=False, progress=False)
    cv = rep.metrics["error_rate"].cv
    assert cv is not None and cv.estimate < 0
    assert any(w.startswith(f"error rate: control-variate LURE {cv.estimate:.4g} lies "
                            f"outside the values the risk can take") for w in rep.warnings)
    # the difference: outside its sure bounds (the cut intervals stay valid: may stop by
    # their width), or, within them, outside its CS (no stop, a note)
    a = AnytimeInterval(0.1, -0.7374, -0.1285, -0.7374, -0.1285, basis="clt",
                        may_stop=False, target_width=0.7)
    notes: list[str] = []
    got = est._difference_outside(a, -0.7567, est.SureBounds(10.0, False, -0.7374, 0.7099),
                                  (-1.0, 1.0), 0.7, 0.95, "target - B (error rate)", notes)
    assert not got.estimate_outside_cs and got.may_stop is True
    assert len(notes) == 1 and "outside the bounds that hold surely [-0.7374, 0.7099]" in notes[0]
    notes.clear()
    got = est._difference_outside(a, -0.75, est.SureBounds(10.0, False, -0.9, 0.7), (-1.0, 1.0),
                                  0.7, 0.95, "target - B (error rate)", notes)
    assert got.estimate_outside_cs and got.may_stop is False
    assert len(notes) == 1 and "no longer holds the estimate -0.7500" in notes[0]
    notes.clear()
    got = est._difference_outside(a, -0.5, None, (-1.0, 1.0), 0.7, 0.95, "d", notes)
    assert not got.estimate_outside_cs and notes == []
    # the exact CS (few differences) is valid without asymptotics: not judged so
    exact = replace(a, basis="exact")
    got = est._difference_outside(exact, -0.75, None, (-1.0, 1.0), 0.7, 0.95, "d", notes)
    assert not got.estimate_outside_cs and notes == []


def _compare_session(tmp_path: Path, n: int) -> Path:
    """A session drawn by the compare acquisition (error rate) over ``n`` demo reviews."""
    pf = make_pool_files(tmp_path / "d", n=n)
    db = tmp_path / "c.db"
    Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                   target=f"table:{pf.target}", compare=[f"table:{pf.target2}"],
                   acquisition="compare", metric="error_rate", seed=4, progress=False,
                   pool_options={"id_column": "id"}).close()
    return db


def test_the_compare_designs_own_interval_has_its_floor_in_the_estimate_and_the_report(
        tmp_path: Path) -> None:
    """The compare acquisition's floor on the target's own error-rate variance
    (:func:`activetest.session.estimate.variance_floors`) is the same in ``estimate`` and
    in the report's curves (their last row is the estimate), and it is only a floor: the
    interval is at least as wide as without it."""
    from activetest.stats import adaptive_lure_theta
    from activetest.stats.intervals import fixed_interval

    db = _compare_session(tmp_path, 200)
    with Session.open(db) as s:
        s.select(60)
        s.label_from_data()
        parts = s._estimate(compare=(), n_boot=50, level=None, target_width=None,
                            record=False, progress=False)
        data = s.report_data(progress=False)
    floor = parts.variance_floors.metrics["error_rate"]
    assert floor.shape == (60,) and np.all(floor >= 0) and floor.max() > 0
    (other,) = parts.variance_floors.others.values()  # the compared model's error rate
    assert other.shape == (60,) and other.max() > 0
    a = parts.report.metrics["error_rate"].anytime
    last = data.history["error rate"][-1]
    if a.basis != "exact":
        assert (last.active.fixed.low, last.active.fixed.high) == pytest.approx(
            (a.fixed_low, a.fixed_high), rel=1e-12)
    d = parts.draws
    theta = adaptive_lure_theta(parts.losses["error_rate"], d.q, d.n_pool)
    plain = fixed_interval(theta, d.n_pool)
    assert a.se >= plain.se - 1e-15


def test_the_compare_note_is_not_shown_at_a_census_and_the_hint_names_both_metrics(
        tmp_path: Path) -> None:
    """QA: every interval a point at the census, and the note still said the target's
    intervals were wide; and ``estimate --compare`` of a log-loss session quoted the
    error rate's ratio alone."""
    from activetest.session.estimate_notes import COMPARE_HINT

    db = _compare_session(tmp_path, 40)
    with Session.open(db) as s:
        s.select(20)
        s.label_from_data()
        some = s.estimate(record=False, progress=False)
        s.select(20)
        s.label_from_data()
        census = s.estimate(record=False, progress=False)
    note = "this session draws for the difference with "
    assert any(w.startswith(note) for w in some.warnings)
    assert not any(w.startswith(note) for w in census.warnings)
    assert "two error rates 0.37x" in COMPARE_HINT and "two log losses 0.75x" in COMPARE_HINT


def test_the_note_on_an_estimate_outside_its_range_says_which_intervals_stay_within(
        tmp_path: Path) -> None:
    """QA: beside control-variate LURE's fixed-budget interval [-0.0337, 0.892] for an
    error rate, the note said "Read the fixed-budget interval and the CS, which stay
    within the range". Every interval is clipped to the range, but the fixed-budget and
    bootstrap intervals still hold the estimate (the CS, and the exact CS where it stands
    in, do not reach past the range): the note names each interval shown beside the
    estimate with its ends, and says "within the range" only of those that are."""
    from activetest.session.interval_names import BOOTSTRAP, FIXED_BUDGET, interval_name

    pf = make_pool_files(tmp_path / "data")
    db = tmp_path / "s.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--id-column", "id", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--compare",
        f"table:{pf.target2}", "--acquisition", "compare", "--metric", "both", "--seed", "6",
        "--no-progress")
    with Session.open(db) as s:
        s.select(20)
        s.label_from_data()
        rep = s.estimate(record=False, progress=False)
    m = rep.metrics["error_rate"]
    assert m.cv is not None and m.cv_anytime is not None and m.cv.estimate < 0
    # the QA case had its fixed-budget interval reach below 0 to hold the estimate; on
    # this pool of 60 it is now cut to what the 20 labels make sure, within the range
    assert m.cv_anytime.basis == "clt" and m.cv_anytime.sure_low is not None
    assert m.cv_anytime.fixed_low == m.cv_anytime.sure_low >= 0
    checked = 0
    for m in rep.metrics.values():
        bounds = est.value_range(m.metric)
        if m.cv is None or bounds[0] <= m.cv.estimate <= bounds[1]:
            continue
        note = next(w for w in rep.warnings if w.startswith(
            f"{m.metric.replace('_', ' ')}: control-variate LURE {m.cv.estimate:.4g} lies "))
        beyond, _, within = note.lower().partition(" clipped to the range")
        shown = [(interval_name(BOOTSTRAP), m.cv.low, m.cv.high)]
        if m.cv_anytime is not None:
            shown.append((interval_name(FIXED_BUDGET), m.cv_anytime.fixed_low,
                          m.cv_anytime.fixed_high))
        for name, low, high in shown:
            said = f"the {name} [{low:.4g}, {high:.4g}]"
            inside = bounds[0] <= low and high <= bounds[1]
            assert said in (within if inside else beyond), (said, note)
            checked += 1
    assert checked >= 2


def test_a_compared_models_log_loss_is_kept_within_what_it_can_take(tmp_path: Path) -> None:
    """A model compared at creation is known on the pool, so its log loss lies in
    ``[0, max_i max_c -log p(c | x_i)]``: its intervals (and the lower end of the
    difference's range) are kept there, as the target's are (QA: [0, 35.56] for a log
    loss of at most 3.56, from 3 labels of the compare design)."""
    files = make_pool_files(tmp_path / "data", n=200)
    db = tmp_path / "k.db"
    Session.create(db, pool=files.pool, task="demo", surrogate=f"table:{files.surrogate}",
                   target=f"table:{files.target}", compare=[f"table:{files.target2}"],
                   acquisition="compare", metric="both", seed=0, progress=False,
                   pool_options={"id_column": "id"}).close()
    rows = [line.split(",") for line in files.target2.read_text().splitlines()[1:]]
    cap = max(-min(float(a), float(b)) for _, a, b in rows)
    with Session.open(db) as s:
        s.select(3)
        s.label_from_data()
        r = s.estimate(record=False, progress=False)
    (c,) = [c for c in r.comparisons if c.metric == "log_loss"]
    o = c.other_anytime
    assert o is not None and 0.0 <= o.fixed_low <= o.fixed_high <= cap + 1e-9, (o, cap)
    assert c.other.high <= cap + 1e-9 and c.difference.low >= -cap - 1e-9


def test_status_shows_an_unbounded_log_loss_difference_as_estimate_does(tmp_path: Path
                                                                         ) -> None:
    """A compared model scored only at ``estimate`` (no bound known on its log losses): the
    log loss's paired difference has unbounded intervals, which `estimate` prints as
    "unbounded (exact anytime CS; see the note)". `status` left the fixed-budget interval out
    and called the anytime one "(from 30 labels)" at 40 labels (its stored ends are the
    strings "-inf"/"inf"); it now prints each interval as `estimate` does."""
    from session_support import make_pool_files

    pf = make_pool_files(tmp_path / "data", n=200)
    T = _table(pf.target, pf.ids)
    db = tmp_path / "u.db"
    _init(pf, db, "--metric", "both")
    run("select", db, "--n", "40")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        seen = set(s.labelled_draws().rows.tolist())
    flip = [i for i in range(len(pf.ids)) if i not in seen][:10]
    _, other = _flipped(pf, T, flip, tmp_path / "t10.csv")
    out = run("estimate", db, "--compare", f"table:{other}")
    line = next(x for x in out.splitlines() if "difference target - other" in x
                and "unbounded" in x)
    fixed = "fixed-budget 95% interval unbounded (exact anytime CS; see the note)"
    anytime = "anytime 95% confidence sequence unbounded (exact anytime CS; see the note)"
    assert fixed in line and anytime in line, out
    status = run("status", db)
    lines = status.splitlines()
    at = next(i for i, x in enumerate(lines) if "log_loss difference target - " in x)
    names = []
    for x in lines[at + 1:]:
        if not x.startswith("  "):
            break
        names.append(x.strip())
    assert fixed in names and anytime in names, status
    assert not any("from 30 labels" in n for n in names), status
    # the note they point to is there too, as estimate's
    assert any(n.startswith("note: the fixed-budget 95% interval and the anytime 95% "
                            "confidence sequence are the whole range") for n in names), status


def test_the_difference_figure_takes_the_sure_bounds_at_every_count_and_says_so(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The report's figure of the paired difference over labels computes its intervals
    from the labels prefix by prefix, cut at each count to the sure bounds of a model
    compared at creation, as `estimate` shows them (before, only the last point took
    them, from `estimate`); the legend and the report's text name the sure bounds where
    they stand in, and ring the estimates that lie outside them (kept: unbiased)."""
    from activetest.session.interval_names import OUTSIDE_POINT
    from activetest.session.report.plots import differences_figure

    db, _ = _sure_bounds_session(pool_files, tmp_path)
    with Session.open(db) as s:
        (c,) = s.estimate(record=False, progress=False).comparisons
        data = s.report_data(progress=False)
    a = c.difference_anytime
    assert a is not None and a.basis == "sure"
    (curve,) = data.differences
    last = curve.rows[-1].active
    assert curve.last_as_estimate is None  # the curve's own, as estimate has it
    assert last.basis == "sure" and abs(last.value - c.difference.estimate) <= 1e-12
    assert last.fixed is not None and last.anytime is not None
    assert abs(last.fixed.low - a.fixed_low) <= 1e-12
    assert abs(last.fixed.high - a.fixed_high) <= 1e-12
    assert abs(last.anytime.low - a.cs_low) <= 1e-12
    assert abs(last.anytime.high - a.cs_high) <= 1e-12
    # the sure bounds stand in before the last count too (every flipped item labelled)
    assert sum(r.active.basis == "sure" for r in curve.rows) >= 2
    labels = [t.get_text() for t in differences_figure(data).legends[0].get_texts()]
    assert any("(the sure bounds where they stand in)" in t for t in labels), labels
    assert not any("last count as `estimate` shows it" in t for t in labels), labels
    if a.estimate_outside_sure:
        assert OUTSIDE_POINT in labels  # the words of the table's † line
    out = tmp_path / "rep"
    run("report", db, "--out", out)
    md = (out / "report.md").read_text(encoding="utf-8").replace("\\_", "_")
    assert "at the counts where they stand in, the intervals are the sure bounds (hold " \
           "at any label count), as \\`estimate\\` shows them at that count" in md, md
    assert "the last count's intervals are" not in md


def test_a_difference_outside_its_sure_bounds_is_kept_and_said_at_the_number(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: with most of a small pool labelled the sure bounds of a paired difference are
    in force, and its unbiased estimate can lie outside them (here 0.014 beside bounds of
    -0.0167: each labelled difference weighs by how unlikely its draw was). As the single
    risk does, the estimate is kept (moving it would bias it), and every output says so
    at the number, not only in a note at the end: `estimate` (text and JSON), `status`,
    the report's table and the Python API's summary."""
    db = tmp_path / "o.db"
    _init(pf := pool_files, db, "--metric", "error_rate", "--acquisition", "compare",
          "--compare", f"table:{pf.target2}")
    run("select", db, "--n", "40")
    run("label", db, "--from-data")
    (c,) = json.loads(run("estimate", db, "--json"))["comparisons"]
    d, a = c["difference"]["estimate"], c["difference_anytime"]
    lo, hi = a["sure_low"], a["sure_high"]
    assert not lo - 1e-9 <= d <= hi + 1e-9, (d, lo, hi)  # the case at hand
    assert a["estimate_outside_sure"] is True and a["basis"] == "sure"
    assert (a["fixed_low"], a["fixed_high"]) == (lo, hi)

    def flat(text: str) -> str:
        return " ".join(text.split())

    mark = (f"outside the bounds that hold surely, [{lo:.4f}, {hi:.4f}]: unbiased, not "
            f"moved; see the note")
    said = flat(run("estimate", db))
    assert f"difference target - other = {d:.4f} (paired LURE, same labels; {mark})" \
        in said, said
    note = (f"target - table:{pf.target2.name} (error rate): the estimate {d:.4g} lies "
            f"outside the bounds that hold surely")
    assert note in said and "it is not moved, which would bias it" in said
    # why, as the single risk's note says it (QA: "with few labels" at 40 of 60 labelled)
    assert (f"{note} [{lo:.4g}, {hi:.4g}]: an unbiased estimate can (each labelled "
            f"difference weighs by how unlikely its draw was, so a few heavy draws carry "
            f"it); it is not moved") in said, said
    st = flat(run("status", db))
    assert f"= {d:.4f} (paired LURE, same labels; {mark})" in st, st
    assert note in st, st  # the note the mark points to, as recorded
    # and the compared target's own sure-bounds line, as estimate has it
    (other,) = [w for w in said.split("note: ") if w.startswith(
        f"table:{pf.target2.name}'s error rate: with 40 of the pool's 60 items labelled")]
    assert other.strip() in st, st
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    (row,) = [x for x in r.summary_rows() if x.of.startswith("target - ")]
    assert row.note == mark and f"{d:.4f} ({mark})" in str(r)
    out = tmp_path / "rep"
    run("report", db, "--out", out)
    md = flat((out / "report.md").read_text(encoding="utf-8")).replace("\\", "")
    assert f"| {d:.4g} (outside the bounds that hold surely, [{lo:.4g}, {hi:.4g}]: " \
           f"unbiased, not moved; see the note) |" in md, md
    # where the estimate is within them, nothing is said at the number
    db2 = tmp_path / "i.db"
    _init(pf, db2, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{pf.target2}")
    run("select", db2, "--n", "20")
    run("label", db2, "--from-data")
    (c2,) = json.loads(run("estimate", db2, "--json"))["comparisons"]
    assert c2["difference_anytime"]["estimate_outside_sure"] is False
    assert "outside the bounds that hold surely" not in flat(run("estimate", db2))


def test_every_point_of_the_difference_curve_is_estimate_compare_at_that_count(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: for a model compared at creation the report's curve of the paired difference
    applied the sure bounds and the few-errors rule's exact CS (bounded by each item's
    bound and the proposal) at its last point alone, which took `estimate`'s; the points
    before were another method's. Now each count is cut to the bounds that hold surely
    then and takes the exact CS as the estimate bounds it: a point in the middle is what
    `estimate --compare` said with that many labels (1e-12), sure bounds, basis and the
    estimate outside them included, for both metrics."""
    pf = pool_files
    db = tmp_path / "c.db"
    _init(pf, db, "--metric", "both", "--acquisition", "compare", "--compare",
          f"table:{pf.target2}")
    then = {}
    for n, more in ((8, 8), (30, 22)):  # the estimate at 8 labels, then at 30
        run("select", db, "--n", more)
        run("label", db, "--from-data")
        then[n] = json.loads(run("estimate", db, "--json"))["comparisons"]
    run("select", db, "--n", "15")
    run("label", db, "--from-data")
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    assert {c.metric for c in data.differences} == {"log loss", "error rate"}
    bases = set()
    for curve, n in ((curve, n) for curve in data.differences for n in then):
        (c,) = [c for c in then[n] if c["metric"].replace("_", " ") == curve.metric]
        (row,) = [r for r in curve.rows if r.n_labels == n]
        p, a = row.active, c["difference_anytime"]

        def close(x: float, y: float) -> bool:
            return abs(x - y) <= 1e-12 * max(1.0, abs(y))

        assert close(p.value, c["difference"]["estimate"]), curve.metric
        assert close(p.bootstrap.low, c["difference"]["low"])
        assert close(p.bootstrap.high, c["difference"]["high"])
        assert p.basis == a["basis"], (curve.metric, p.basis, a["basis"])
        assert close(p.fixed.low, a["fixed_low"]) and close(p.fixed.high, a["fixed_high"]), (
            curve.metric, p.fixed, a["fixed_low"], a["fixed_high"])
        if n >= 30 or a["basis"] in ("exact", "sure"):  # shown (claimed, or standing in)
            assert p.anytime is not None
            assert close(p.anytime.low, a["cs_low"]) and close(p.anytime.high, a["cs_high"])
        else:
            assert p.anytime is None
        if a["estimate_outside_sure"]:
            assert p.outside_sure is not None
            assert close(p.outside_sure.low, a["sure_low"])
            assert close(p.outside_sure.high, a["sure_high"])
        else:
            assert p.outside_sure is None
        bases.add(p.basis)
        # the last point is the curve's own, the estimate's method at every count
        assert curve.last_as_estimate is None
    # the cases at hand: the sure bounds in force, and the exact CS (few differences)
    assert {"sure", "exact"} <= bases, bases


def test_a_curve_point_is_the_estimate_at_its_count_where_a_later_draw_breaks_the_bound(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The exact anytime CS of a difference bounds each draw by the items the proposal
    could draw (the weight bound), used only where every labelled draw is within it. The
    check ran over all the labels: one later draw outside it (here the session file's
    recorded probability of the 9th draw lowered, still above the floor's bound, as a
    file edited or scores changed would leave it) put the floor's bound on every count of
    the report's curve, so the point at 8 labels was the sure bounds [-0.28, 0.42], where
    `estimate --compare` with those 8 labels said the exact anytime CS [-0.076, 0.42].
    Each count now takes the bound as far as its own draws are within it."""
    import sqlite3

    pf = pool_files
    db = tmp_path / "c.db"
    _init(pf, db, "--metric", "error_rate", "--acquisition", "compare", "--compare",
          f"table:{pf.target2}")
    run("select", db, "--n", 8)
    run("label", db, "--from-data")
    (then,) = json.loads(run("estimate", db, "--json"))["comparisons"]
    assert then["difference_anytime"]["basis"] == "exact"  # the few-differences rule
    run("select", db, "--n", 22)
    run("label", db, "--from-data")
    with Session.open(db) as s:
        parts = s._estimate(compare=(), n_boot=None, level=None, target_width=None,
                            record=False, progress=False)
        spec = s.session_config.compare[0]
        q_floor, N = est.q_floor(s.session_config, False), s.n_items
    d = parts.losses["error_rate"] - parts.compare[spec]["error_rate"]
    late = next(j for j in range(8, 30) if d[j] != 0)  # a later draw where they differ
    with sqlite3.connect(db) as con:
        con.execute("UPDATE acquisitions SET q = ? WHERE step = ?",
                    (1.05 * q_floor / (N - late), int(parts.draws.steps[late])))
    con.close()
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    (curve,) = data.differences
    (row,) = [r for r in curve.rows if r.n_labels == 8]
    p, a = row.active, then["difference_anytime"]

    def close(x: float, y: float) -> bool:
        return abs(x - y) <= 1e-12 * max(1.0, abs(y))

    assert close(p.value, then["difference"]["estimate"])
    assert p.basis == a["basis"] == "exact", p.basis
    assert close(p.fixed.low, a["fixed_low"]) and close(p.fixed.high, a["fixed_high"]), (
        p.fixed, a["fixed_low"], a["fixed_high"])
    assert close(p.anytime.low, a["cs_low"]) and close(p.anytime.high, a["cs_high"])
    # the draw outside the bound is seen from its count on: the last count's CS is the
    # estimate's now, as before
    last = data.differences[0].rows[-1].active
    now = json.loads(run("estimate", db, "--json"))["comparisons"][0]["difference_anytime"]
    assert close(last.fixed.low, now["fixed_low"]) and close(last.fixed.high,
                                                              now["fixed_high"])


def test_each_counts_exact_cs_of_a_difference_is_made_from_its_own_draws() -> None:
    """:func:`difference_few_inputs` at every count is what it gives from that count's
    draws alone, where a later draw breaks the per-draw bound (a fixed proposal's, and an
    adaptive design's): the bound holds before that draw, the floor's from it on."""
    from activetest.session.estimate import LabelledDraws, difference_few_inputs

    N, K = 50, 30
    rows = np.arange(K)
    q = np.full(K, 0.05)
    La, Lb = np.zeros(K), np.zeros(K)
    Lb[[2, 9, 15, 17]] = 1.0
    B = np.zeros(N)
    B[[2, 9, 15, 17]] = 1.0
    B[30:] = 1.0  # unlabelled items where the two differ: the sure bounds wide
    q[15] = 0.0035  # draw 16 is outside both bounds (|d| / q = 286), above the floor's
    floor = 0.1 / 1.1
    assert q[15] > floor / (N - 15)

    def draws(k: int) -> LabelledDraws:
        return LabelledDraws(N, tuple(f"i{r}" for r in rows[:k]), tuple(range(1, k + 1)),
                             rows[:k], q[:k], np.zeros(k, dtype=np.int64), k)

    for extra in ({"proposal": (np.ones(N), 0.1)}, {"weight_bound": np.full(20, 25.0)}):
        whole = difference_few_inputs(La, Lb, draws(K), 5, q_floor=floor, item_bounds=B,
                                      **extra)
        floor_only = difference_few_inputs(La, Lb, draws(K), 5, q_floor=floor,
                                           item_bounds=B)
        for k in (5, 10, 15, 16, 30):
            part = difference_few_inputs(La[:k], Lb[:k], draws(k), 5, q_floor=floor,
                                         item_bounds=B, **extra)
            assert whole.exact_low[k - 1] == part.exact_low[-1], (extra, k)
            assert whole.exact_high[k - 1] == part.exact_high[-1], (extra, k)
        # before the draw outside it the bound narrows the CS; from it on, the floor's
        assert whole.exact_high[14] < floor_only.exact_high[14] - 0.1, extra
        np.testing.assert_array_equal(whole.exact_high[15:], floor_only.exact_high[15:])
