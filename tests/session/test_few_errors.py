"""The few-errors rule in sessions (issue 20): new sessions record ``clt_min_errors``; while
the labels show fewer than 5 errors the error rate's fixed-budget interval and anytime CS
are the exact CS, and ``estimate``, ``status`` and the report say so; files without the
key keep the CLT intervals they were shown."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import PoolFiles
from typer.testing import CliRunner

from activetest import ActiveTest
from activetest.cli import app
from activetest.session import estimate as est
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure_theta, exact_cs, fixed_interval
from activetest.stats.fewerrors import MIN_ERRORS

runner = CliRunner()
OLD = Path(__file__).parent / "data" / "old"


def run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return result.output


def test_a_new_session_records_the_rule_and_says_which_interval(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    pf = pool_files
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--metric", "both",
        "--seed", "5", "--no-progress")
    run("select", db, "--n", 3)
    with Session.open(db) as s:
        s.label_from_data()
        cfg = s.session_config
        assert cfg.clt_min_errors == MIN_ERRORS == 5
    import sqlite3

    with sqlite3.connect(db) as c:  # stored in the file as written
        stored = json.loads(c.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
    assert stored["clt_min_errors"] == 5
    out = json.loads(run("estimate", db, "--json"))
    a = out["metrics"]["error_rate"]["anytime"]
    assert a["basis"] == "exact"
    assert a["basis_note"].startswith("exact interval: fewer than 5 errors labelled (")
    assert (a["fixed_low"], a["fixed_high"]) == (a["exact_low"], a["exact_high"])
    assert (a["cs_low"], a["cs_high"]) == (a["exact_low"], a["exact_high"])
    assert a["fixed_high"] - a["fixed_low"] > 0.5  # three labels: no point interval
    assert out["metrics"]["log_loss"]["anytime"]["basis"] is None  # the log loss: not switched
    text = run("estimate", db)
    assert "fewer than 5 errors labelled" in text and "exact anytime 95%" in text
    st = " ".join(run("status", db).split())
    assert "fewer than 5 errors labelled" in st
    # the rows named with their level, as they are printed (QA: "fixed-budget and anytime
    # rows are the exact anytime confidence sequence")
    assert ("note: the fixed-budget 95% interval and anytime 95% confidence sequence rows "
            "are the exact anytime 95% confidence sequence (exact interval: fewer than 5 "
            "errors labelled (") in st, st
    run("report", db, "--out", tmp_path / "rep")
    assert "fewer than 5 errors labelled" in (tmp_path / "rep" / "report.md").read_text(
        encoding="utf-8")


@pytest.fixture
def pool() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pool of 300 where the target errs on about a third (seeded)."""
    rng = np.random.default_rng(4)
    S = np.log(rng.dirichlet([1, 1, 1], size=300))
    T = rng.dirichlet([1, 1, 1], size=300)
    y = np.array([rng.choice(3, p=p) for p in T])
    return S, T, y


def _run(S: np.ndarray, T: Any, labels: np.ndarray, k: int,
         rule: bool = True) -> ActiveTest:
    run = ActiveTest(S, T, metric="error_rate", seed=2)
    if not rule:  # as a file written before the key: no rule
        run._config = dataclasses.replace(run._config, clt_min_errors=None)
    rows = run.next(k)
    run.label_many(rows, [int(labels[r]) for r in rows])
    return run


def test_three_correct_labels_give_the_exact_interval_not_a_point(pool) -> None:
    S, T, _ = pool
    right = T.argmax(axis=1)  # labels the target gets right: no error
    old = _run(S, T, right, 3, rule=False).estimate().metrics["error_rate"].anytime
    assert old.basis is None and old.fixed_high - old.fixed_low < 1e-9  # the defect
    new = _run(S, T, right, 3).estimate().metrics["error_rate"].anytime
    assert new.basis == "exact" and new.basis_note == ("exact interval: fewer than 5 errors "
                                                       "labelled (0 of 3)")
    assert new.fixed_low == 0.0 and new.fixed_high > 0.5


def test_a_point_interval_note_names_the_interval_that_bounds_the_risk(pool) -> None:
    """Every labelled term the same (no error in 40 labels): the bootstrap interval is a
    point. A new session's note sends the reader to its fixed-budget interval and CS (the
    exact CS, not points); in a session written before the rule the fixed-budget interval
    is a point too (the CS the whole range), so its note says so and gives the exact CS's
    numbers instead."""
    S, T, _ = pool
    right = T.argmax(axis=1)
    new = _run(S, T, right, 40).estimate()
    assert new.metrics["error_rate"].anytime.basis == "exact"
    line = [w for w in new.warnings if "bootstrap interval is a point" in w]
    assert len(line) == 1 and line[0].endswith("read the fixed-budget interval and the CS")
    old = _run(S, T, right, 40, rule=False).estimate()
    a = old.metrics["error_rate"].anytime
    assert a.basis is None and a.fixed_high - a.fixed_low < 1e-9  # a point
    # the CS: the whole range, less the 40 items the labels show surely right
    assert (a.cs_low, a.cs_high) == (0.0, pytest.approx(1 - 40 / 300))
    assert (a.sure_low, a.sure_high) == (0.0, pytest.approx(1 - 40 / 300))
    assert a.exact_high is not None and 0.05 < a.exact_high < 1.0  # the exact CS says more
    line = [w for w in old.warnings if "bootstrap interval is a point" in w]
    assert len(line) == 1
    assert "so is the fixed-budget interval" in line[0]
    assert f"[{a.exact_low:.4f}, {a.exact_high:.4f}]" in line[0]
    assert "read the fixed-budget interval" not in line[0]


def _least_q(sampler: Any, k: int) -> np.ndarray:
    """Each of the first ``k`` draws' least proposal over the items it could draw, from
    the design's proposals replayed by hand (:func:`design_proposals`)."""
    from activetest.stats.blindspot_replay import design_proposals

    st = sampler.state()
    rows = [int(i) for i in st.acquired[:k]]
    out = []
    for m, (q, _) in enumerate(design_proposals(sampler.design, rows, labels=st.labels[:k],
                                                losses=st.losses[:k],
                                                n_known=st.n_known[:k])):
        rem = np.ones(q.shape[0], dtype=bool)
        rem[rows[:m]] = False
        out.append(q[rem].min())
    return np.asarray(out)


def _share_q_min(run: Any) -> np.ndarray:
    """Each labelled draw's bound of a new session's exact CS: the design's recorded
    uniform share (at least 0.1) over the items left, or the draw's least proposal over
    them where that is more (``exact_least``)."""
    draws = run.labelled_draws()
    lam = np.maximum(np.asarray(run._sampler.lam[:draws.k], dtype=float), 0.1)
    share = lam / (draws.n_pool - np.arange(draws.k))
    return np.maximum(share, _least_q(run._sampler, draws.k) * (1 - 1e-9))


def test_the_exact_interval_is_the_exact_cs_at_the_sessions_level(pool) -> None:
    """While few errors are labelled, the fixed-budget interval shown is
    :func:`exact_cs` at alpha = 1 - level on the session's draws and controls (each
    draw bounded by the uniform share the design recorded at it, at least the least
    share 0.1); at 150 labels the CS is informative, so a wrong level moves it
    (checked: alpha 0.1 gives another bound)."""
    S, T, _ = pool
    K = 150
    run = _run(S, T, T.argmax(axis=1), K)  # every label one the target gets right
    a = run.estimate().metrics["error_rate"].anytime
    assert a.basis == "exact"
    draws = run.labelled_draws()
    g, G, _ = run._sampler.controls("zero_one")

    def cs(alpha: float):
        return exact_cs(np.zeros(K), draws.q, draws.n_pool, loss_high=1.0,
                        q_min=_share_q_min(run), alpha=alpha, control=g[:K],
                        control_rest=G[:K], control_low=0.0, control_high=1.0)

    ex = cs(0.05)
    assert (a.fixed_low, a.fixed_high) == (float(ex.low[-1]), float(ex.high[-1]))
    assert (a.exact_low, a.exact_high) == (float(ex.low[-1]), float(ex.high[-1]))
    assert ex.high[-1] < 0.5 and cs(0.1).high[-1] < ex.high[-1]


def test_uniform_draws_bet_with_the_uniform_as_their_floor(pool) -> None:
    """Uniform draws weigh each remaining item ``1 / (N - m + 1)``: the exact CS bets with
    floor 1, not the fixed proposals' 1/11 (QA: 2 errors in 60 labels of 300 gave
    ``[0.007, 0.807]``, the sure bounds' upper end, for what floor 1 gives as about
    ``[0.007, 0.14]``). Checked against :func:`exact_cs` on the same draws and against
    the fixed-n hypergeometric bound, which an anytime CS may not undercut."""
    from scipy import stats

    S, T, _ = pool
    run = ActiveTest(S, T, metric="error_rate", seed=2, acquisition="uniform")
    rows = run.next(60)
    pred = T.argmax(axis=1)
    run.label_many(rows, [int((pred[r] + (i < 2)) % 3) for i, r in enumerate(rows)])
    a = run.estimate().metrics["error_rate"].anytime
    assert a.basis == "exact"
    draws = run.labelled_draws()
    L = (np.arange(60) < 2).astype(float)
    ex = exact_cs(L, draws.q, draws.n_pool, loss_high=1.0, q_floor=1.0, alpha=0.05)
    assert (a.fixed_low, a.fixed_high) == (float(ex.low[-1]), float(ex.high[-1]))
    loose = exact_cs(L, draws.q, draws.n_pool, loss_high=1.0, q_floor=1 / 11, alpha=0.05)
    assert a.fixed_high < 0.2 < float(loose.high[-1])
    n_high = max(e for e in range(301) if stats.hypergeom.cdf(2, 300, e, 60) > 0.025) / 300
    assert n_high <= a.fixed_high


def test_from_five_errors_the_fixed_interval_is_the_clt_one(pool) -> None:
    S, T, y = pool
    run = _run(S, T, y, 60)
    r = run.estimate()
    a = r.metrics["error_rate"].anytime
    losses = (T.argmax(axis=1) != y).astype(float)[run.labelled_draws().rows]
    assert (losses > 0).sum() >= 5 and (losses == 0).sum() >= 5
    assert a.basis == "clt" and a.basis_note is None
    assert not any("exact interval" in w for w in r.warnings)
    old = _run(S, T, y, 60, rule=False).estimate().metrics["error_rate"].anytime
    assert (a.fixed_low, a.fixed_high, a.se) == (old.fixed_low, old.fixed_high, old.se)
    # the CS: the CLT one intersected with the exact CS of the budgets before the 5th error
    assert old.cs_low <= a.cs_low <= a.cs_high <= old.cs_high
    # the fixed interval is the design's own CLT interval (as without the rule)
    draws = run.labelled_draws()
    g, G, V = run._sampler.controls("zero_one")
    th = adaptive_lure_theta(losses, draws.q, draws.n_pool, control=g[:60], control_rest=G[:60])
    fi = fixed_interval(th, draws.n_pool, model_var=V[:60])
    assert a.fixed_low == pytest.approx(max(fi.low, 0.0))


def test_old_files_record_no_rule_and_keep_the_clt_intervals(tmp_path: Path) -> None:
    """The committed files of every schema (tests/session/test_old_sessions.py replays their
    numbers to 1e-12): no ``clt_min_errors``, so no interval is switched."""
    from activetest.models import get_scorer

    files = sorted(OLD.glob("schema*.db"))
    assert files
    for src in files:
        path = tmp_path / src.name
        shutil.copyfile(src, path)
        with Session.open(path) as s:
            assert s.session_config.clt_min_errors is None
            assert "clt_min_errors" not in s.session_config.to_dict()
            spec = s.session_config.target
        scorers = {spec: get_scorer(f"table:{OLD / 'inputs' / 'target.csv'}")}
        with Session.open(path, scorers=scorers) as s:
            r = s.estimate(record=False, progress=False)
        for m in r.metrics.values():
            assert m.anytime is None or m.anytime.basis is None
        assert not any("exact interval" in w for w in r.warnings)


def test_the_rule_is_a_config_key_read_and_written_back() -> None:
    from activetest.session.config import ConfigError, SessionConfig

    base = {"task": {}, "surrogate": "s", "target": "t", "metric": "error_rate",
            "acquisition": "ce", "seed": 0}
    assert SessionConfig.from_dict(base).clt_min_errors is None
    assert "clt_min_errors" not in SessionConfig.from_dict(base).to_dict()
    cfg = SessionConfig.from_dict({**base, "clt_min_errors": 5})
    assert cfg.clt_min_errors == 5 and cfg.to_dict()["clt_min_errors"] == 5
    for bad in (0, 2.5, True, "5"):
        with pytest.raises(ConfigError, match="clt_min_errors"):
            SessionConfig.from_dict({**base, "clt_min_errors": bad})
    assert est.few_errors_inputs(np.zeros(3), None, None, q_floor=0.1) is None  # type: ignore[arg-type]


def test_a_compared_target_that_agrees_on_every_label_gets_no_point_difference(pool) -> None:
    """``estimate --compare``: a second target whose predictions differ from the target's
    on a few pool items, none of them labelled yet. The paired difference's terms are all
    0 and its CLT interval a point at 0 (the defect; files without the rule now get the
    floor of the surrogate's model of the difference where both targets are known on the
    pool, :func:`activetest.session.estimate.difference_floors`); under the rule the
    exact CS of the difference stands in, contains the true difference, and a note says
    why. Once enough labelled items differ, the CLT intervals
    return. (The target asked only on the labelled items, so that the two are not both
    known on the pool: where they are, the sure bounds serve, below.)"""
    from activetest.stats.betting import paired_difference_exact_cs

    S, T, _ = pool
    labels = T.argmax(axis=1)  # the target right everywhere labelled: 0 errors
    other = T.copy()
    run0 = _run(S, lambda rows: T[rows], labels, 40)
    known = _run(S, T, labels, 40)
    drawn = {int(r) for r in run0.labelled_draws().rows} | {
        int(r) for r in known.labelled_draws().rows}
    rest = [i for i in range(len(T)) if i not in drawn][:12]
    other[rest] = np.roll(T[rest], 1, axis=1)  # differs (and errs) only where not labelled
    true_diff = float(np.mean(T.argmax(1) != labels) - np.mean(other.argmax(1) != labels))
    assert true_diff < 0
    old = _run(S, T, labels, 40, rule=False).estimate(compare={"o": np.log(other)})
    c_old = {c.metric: c for c in old.comparisons}["error_rate"]
    d_old = c_old.difference_anytime
    assert d_old.fixed_high - d_old.fixed_low > 0.05  # not a point: the model's floor
    assert d_old.fixed_low <= true_diff <= d_old.fixed_high
    new = run0.estimate(compare={"o": np.log(other)})
    c = {c.metric: c for c in new.comparisons}["error_rate"]
    d, o = c.difference_anytime, c.other_anytime
    assert d.basis == "exact" and o.basis == "exact"
    assert d.basis_note == ("exact interval: fewer than 5 labelled items where the two "
                            "targets' losses differ (0 of 40)")
    assert d.fixed_low <= true_diff <= d.fixed_high and d.cs_low <= true_diff <= d.cs_high
    draws = run0.labelled_draws()
    La = (T.argmax(1)[draws.rows] != labels[draws.rows]).astype(float)
    Lb = (other.argmax(1)[draws.rows] != labels[draws.rows]).astype(float)
    ex = paired_difference_exact_cs(La, Lb, draws.q, draws.n_pool, bound_a=1.0, bound_b=1.0,
                                    q_min=_share_q_min(run0))
    assert (d.fixed_low, d.fixed_high) == (float(ex.low[-1]), float(ex.high[-1]))
    assert any("target - o (error rate): the fixed-budget 95%" in w and "(0 of 40)" in w
               for w in new.warnings), new.warnings
    assert c.difference.std == 0.0 and any(
        w.startswith("target - o (error rate): the bootstrap interval is a point")
        for w in new.warnings), new.warnings
    # both known on the pool (the target an array): the sure bounds, 12 unlabelled items
    # where the two differ, far inside the exact CS, and said
    k = {c.metric: c for c in known.estimate(compare={"o": np.log(other)}).comparisons}
    ks = k["error_rate"].difference_anytime
    assert ks.basis == "sure" and "12 unlabelled item(s)" in ks.basis_note
    assert ks.fixed_low <= true_diff <= ks.fixed_high
    assert ks.fixed_high - ks.fixed_low <= 2 * 12 / len(T) + 1e-12 < d.fixed_high - d.fixed_low
    # many labelled differences: the CLT intervals of the difference again
    O2 = T.copy()
    half = draws.rows[::2]
    O2[half] = np.roll(T[half], 1, axis=1)  # errs on half the labelled items
    far = run0.estimate(compare={"o2": np.log(O2)})
    c2 = {c.metric: c for c in far.comparisons}["error_rate"]
    assert c2.difference_anytime.basis == "clt"


def test_no_error_labelled_yet_projects_more_labels_not_the_ones_it_has(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A session whose 20 labels are all the target's own class (no error): the error
    rate's bootstrap interval is a point, and `estimate --target-width` and the report's
    "Labels needed" said the width was reached (the 20 labels it has; uniform sampling 1).
    Now each projects the labels of a loss at 0 or 1 with Laplace's rate."""
    db = tmp_path / "s.db"
    pf = pool_files
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--metric", "both",
        "--seed", "5", "--no-progress")
    run("select", db, "--n", 20)
    with Session.open(db) as s:
        t = s.store.scores("target").logprobs
        index = {item_id: j for j, item_id in enumerate(s.store.item_ids())}
        s.add_labels([(a.item_id, int(t[index[a.item_id]].argmax()))
                      for a in s.acquisitions()])
        rep = s.estimate(target_width=0.15)
        data = s.report_data(target_width=0.15, progress=False)
    m = rep.metrics["error_rate"]
    assert m.active.std == 0.0 and m.active.estimate == 0.0
    assert any(w.startswith("error rate: the bootstrap interval is a point") for w in
               rep.warnings), rep.warnings
    assert not any(w.startswith("log loss: the bootstrap interval is a point") for w in
                   rep.warnings)
    assert m.labels_needed > 20 + 5, m.labels_needed
    need = {n.metric: n for n in data.labels_needed}["error rate"]
    assert need.n_labels == m.labels_needed  # not capped at the pool's 60 (QA)
    assert need.uniform_n_labels > 20, need
    # the exact CS stands in (no error labelled): no projection of the asymptotic CS,
    # which is not the interval shown (QA: "1 more" beside a 0.78-wide interval)
    a = m.anytime
    assert a is not None and a.basis == "exact" and a.labels_needed is None
    assert need.anytime_n_labels is None
    out = " ".join(run("estimate", db, "--target-width", "0.15").split())
    assert ("error_rate: no projection while the exact anytime 95% confidence sequence "
            "stands in (") in out, out
    assert "error_rate: the anytime 95% confidence sequence reaches width" not in out


def test_the_reports_legend_names_the_exact_cs_where_it_stands_in(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: where the labels show few errors the error rate's fixed-budget interval and
    anytime CS are the exact anytime CS (as ``estimate`` and ``status`` say), but the
    report's figure still named its bands "fixed-budget" and "anytime". The legend now
    names them by what they are: the exact CS at every count drawn (3 labels), or the
    asymptotic CS and the CLT interval with the exact CS while few errors (40 labels);
    the log loss (no few-errors rule) keeps its plain names."""
    from activetest.session.report.plots import estimates_figure

    db = tmp_path / "s.db"
    pf = pool_files
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--metric", "both",
        "--seed", "5", "--no-progress")

    symbols: dict[str, tuple[Any, ...]] = {}

    def legend(n: int) -> tuple[set[str], list[bool], str]:
        run("select", db, "--n", n)
        with Session.open(db) as s:
            s.label_from_data()
            data = s.report_data(progress=False)
            rows = data.history["error rate"]
            few = [r.active.basis == "exact" for r in rows]
        fig = estimates_figure(data)
        run("report", db, "--out", tmp_path / f"rep{n}")
        md = (tmp_path / f"rep{n}" / "report.md").read_text(encoding="utf-8")
        leg = fig.legends[0]
        symbols.clear()
        for text, h in zip(leg.get_texts(), leg.legend_handles, strict=True):
            symbols[text.get_text()] = (  # a band's pattern and colours, a line's style
                (h.get_hatch(), tuple(np.round(h.get_facecolor(), 3)),
                 tuple(np.round(h.get_edgecolor(), 3))) if hasattr(h, "get_hatch") else
                (h.get_linestyle(), h.get_color(), h.get_marker()))
        # QA: "fixed-budget 95% interval" and "... (exact anytime CS while few errors)"
        # had one symbol in the legend; every entry now has its own
        assert len(set(symbols.values())) == len(symbols), symbols
        return {t.get_text() for t in leg.get_texts()}, few, md

    names, few, md = legend(3)
    assert all(few)
    assert {"exact anytime 95% confidence sequence (few errors)",
            "exact anytime 95% confidence sequence (few errors; in place of the "
            "fixed-budget 95% interval)", "fixed-budget 95% interval"} <= names, names
    assert "anytime 95% confidence sequence" not in names  # the log loss's starts at 30
    assert ("(error rate: the exact anytime 95% confidence sequence stands in for both "
            "while the labels show few errors)](estimates.png)") in md
    names, few, md = legend(37)  # 40 labels: 5 errors well before the end
    assert any(few) and not all(few), few
    assert {"anytime 95% confidence sequence (exact anytime CS while few errors)",
            "fixed-budget 95% interval (exact anytime CS while few errors)",
            "anytime 95% confidence sequence", "fixed-budget 95% interval"} <= names, names
    assert not any(n.startswith("exact anytime") for n in names), names


def test_the_report_names_the_few_labels_without_an_error_where_those_are_few(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a session whose target is wrong on most items (an error rate near 0.9: the
    history walk's BBH model) has the exact CS stand in because the labels show few
    *correct* answers, as `estimate` says ("fewer than 5 labels without an error"); the
    report's legend and captions said "... while few errors". They now name what the
    labels show few of; a pure check of the words on the losses beside it."""
    from activetest.session.report.plots import estimates_figure
    from activetest.stats.fewerrors import few_errors_what

    assert few_errors_what(np.array([1, 0, 1, 1, 1, 1, 1, 1]), 5) == "labels without an error"
    assert few_errors_what(np.array([0, 1, 0, 0, 0, 0, 0, 0]), 5) == "errors"
    assert few_errors_what(np.array([1, 0, 1]), 5) == "labels without an error"  # the rarer
    assert few_errors_what(np.array([0, 1, 0]), 5) == "errors"
    assert few_errors_what(np.array([0.3] * 6 + [0, 1] * 5), 5) == "labels off the usual loss"
    assert few_errors_what(np.array([0, 1] * 10), 5) == "errors"  # 4 errors of 9 at the last
    assert few_errors_what(np.zeros(0), 5) is None
    pf = pool_files
    wrong = tmp_path / "wrong.csv"  # the other class, confidently, on all but every 10th
    rows = ["id,negative,positive"]
    for j, (i, y) in enumerate(zip(pf.ids, pf.labels, strict=True)):
        pred = y if j % 10 == 0 else 1 - y
        lp = [math.log(0.1), math.log(0.9)] if pred == 1 else [math.log(0.9), math.log(0.1)]
        rows.append(f"{i},{lp[0]!r},{lp[1]!r}")
    wrong.write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "w.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{wrong}", "--id-column", "id", "--metric", "error_rate",
        "--acquisition", "ce", "--seed", "5", "--no-progress")
    run("select", db, "--n", 12)
    with Session.open(db) as s:
        s.label_from_data()
        data = s.report_data(progress=False)
        losses = s.labelled_draws()  # the labels' outcomes, as the report read them
    reason = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]["anytime"]
    assert reason["basis"] == "exact"
    assert "labels without an error" in reason["basis_note"], reason  # as estimate says
    assert data.few_what == {"error rate": "labels without an error"}, (data.few_what, losses)
    names = {t.get_text() for t in estimates_figure(data).legends[0].get_texts()}
    assert not any("few errors" in n for n in names), names
    assert any(n.endswith("(few labels without an error)") or
               n.endswith("(exact anytime CS while few labels without an error)")
               for n in names), names
    run("report", db, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "few errors" not in md, md
    assert ("Cells marked (exact anytime CS): for error rate the labels show too few labels "
            "without an error for the CLT intervals") in md, md
    assert ("stands in for both while the labels show few labels without an error)"
            "](estimates.png)") in md, md


def test_graded_labels_all_at_a_middle_level_give_the_exact_interval(tmp_path: Path) -> None:
    """A graded session whose labels are all judged 'good' (loss 0.3, partial credit) under
    a sure surrogate: the CLT interval had (almost) no spread to go by and covered 0.71 of
    runs at 20 labels (QA 2026-12-06, benchmarks/coverage_hunt.py --case
    graded-interior-sure); now the exact CS stands in until 5 labels differ from the usual
    loss, and says so."""
    levels, scores = ["wrong", "poor", "good", "right"], [0.0, 0.3, 0.7, 1.0]
    (tmp_path / "t.toml").write_text(
        'kind = "graded"\nname = "qa"\ninstruction = ""\n[templates]\n'
        'item = "Q: {question}\\nA:"\nexample = "Q: {question}\\nA: {answer}\\n"\n'
        f'[judgment]\nlevels = {json.dumps(levels)}\nscores = {json.dumps(scores)}\n',
        encoding="utf-8")
    p = np.random.default_rng(3).uniform(0.995, 0.9995, 100)
    (tmp_path / "pool.jsonl").write_text("".join(json.dumps(
        {"id": f"q{i}", "question": f"question {i}?", "answer": f"a{i}",
         "p": round(float(p[i]), 4)}) + "\n" for i in range(100)), encoding="utf-8")
    with Session.create(tmp_path / "s.db", pool=str(tmp_path / "pool.jsonl"),
                        task=str(tmp_path / "t.toml"), surrogate="column:p", target="pool",
                        seed=1, progress=False, n_boot=20) as s:
        s.select(20)
        s.add_labels([(x.item_id, "good") for x in s.acquisitions()])
        a = s.estimate(record=False, progress=False).metrics["error_rate"].anytime
    assert a.basis == "exact"
    assert a.basis_note == ("exact interval: fewer than 5 labels whose loss is not the "
                            "usual 0.3 (0 of 20)")
    # 5 % of the answers 'wrong' would make the risk 0.335: the interval leaves room
    assert a.fixed_low <= 0.3 and a.fixed_high >= 0.4


def test_no_stop_on_the_exact_phase_cs_held_before_the_asymptotic_one_claims() -> None:
    """QA: 24 labels of a 40-item pool, the 5th error at label 22: the fixed-budget
    interval is the CLT one again, the asymptotic CS claims nothing before 30 labels
    (shown "from 30 labels"), and the CS held from the exact phase made `estimate`
    say "you may stop now" beside "needs about 35 labels". No stop on a CS not shown;
    at 30 labels the asymptotic CS is claimed and the rule is the usual one."""
    from activetest import ActiveTest

    rng = np.random.default_rng(3)
    N = 40
    y = rng.integers(0, 2, N)
    p = 1 / (1 + np.exp(-((2 * y - 1) * 1.0 + rng.normal(0, 1.5, N))))
    T = np.stack([1 - p, p], axis=1)
    run = ActiveTest(np.log(T), T, metric="error_rate", seed=6)
    rows = run.next(24)
    run.label_many(rows, [int(y[r]) for r in rows])
    rep = run.estimate(target_width=0.5)
    a = rep.metrics["error_rate"].anytime
    assert a is not None and a.basis == "clt"  # five errors or more: CLT again
    assert a.cs_high - a.cs_low <= 0.5  # the held CS is narrow enough ...
    assert a.may_stop is False  # ... but not shown, so no stop on it
    assert "anytime 95% confidence sequence (from 30 labels)" in str(rep)
    assert a.labels_needed is not None and a.labels_needed >= 30
    rows = run.next(6)
    run.label_many(rows, [int(y[r]) for r in rows])
    a = run.estimate(target_width=0.5).metrics["error_rate"].anytime
    assert a is not None and a.may_stop == (a.cs_high - a.cs_low <= 0.5)


def test_the_cs_is_claimed_where_the_exact_cs_stands_in_or_from_30_not_between() -> None:
    """One rule for `estimate`, the report's band and inspect's stop (three copies before;
    inspect's claimed every count after an exact phase, where the CS is the running
    intersection with asymptotic intervals not yet claimed, and `estimate` shows the
    whole range "from 30 labels"): the exact CS at that count, or from 30 labels."""
    rng = np.random.default_rng(0)
    k = 35
    few = est.FewErrors(5, np.arange(k) < 21, np.zeros(k), np.full(k, 0.5), None)
    c = est.interval_curves(rng.uniform(0, 0.3, k), 40, value_range=(0.0, 1.0), few=few)
    m = np.arange(1, k + 1)
    assert c.claimed.tolist() == ((m <= 21) | (m >= 30)).tolist()
    plain = est.interval_curves(rng.uniform(0, 0.3, k), 40, value_range=(0.0, 1.0))
    assert plain.claimed.tolist() == (m >= 30).tolist()


def test_the_default_designs_exact_interval_bets_by_each_draws_own_uniform_share() -> None:
    """QA: a 99%-accurate target, 200 labels and no error: the default design's interval
    was [0, 0.341] beside uniform sampling's [0, 0.034] on the same pool, as its exact CS
    bet as if any item could weigh 10 times the uniform (the least share of the uniform
    a design may mix in) while the design, with no error seen, was drawing uniformly.
    New sessions bound each draw by its own recorded share (1 while uniform): the same
    interval as uniform sampling's here; the exact CS is the one with that per-draw
    bound, computed by hand; an old file's rule (no ``exact_share``) keeps its numbers."""
    import dataclasses

    from activetest import ActiveTest

    rng = np.random.default_rng(1)
    N = 2000
    truth = rng.integers(0, 2, N)
    right = rng.random(N) < 0.99
    conf = np.where(right, 0.95, 0.3)
    pt = np.where(truth == 1, conf, 1 - conf)
    T = np.column_stack([1 - pt, pt])
    ps = np.clip(pt + rng.normal(0, 0.1, N), 0.01, 0.99)
    S = np.column_stack([1 - ps, ps])
    got = {}
    for acq in ("adaptive", "uniform"):
        run = ActiveTest(S, T, metric="error_rate", seed=0, acquisition=acq)
        for _ in range(20):
            for i in run.next(10):
                run.label(i, int(truth[i]))
        got[acq] = run
    a = got["adaptive"].estimate().metrics["error_rate"].anytime
    u = got["uniform"].estimate().metrics["error_rate"].anytime
    assert a.basis == u.basis == "exact" and a.fixed_low == 0.0
    assert a.fixed_high <= 1.2 * u.fixed_high < 0.05, (a, u)
    run = got["adaptive"]
    draws = run.labelled_draws()
    lam = np.asarray(run._sampler.lam[:draws.k])
    L = (T[draws.rows].argmax(axis=1) != truth[draws.rows]).astype(float)
    assert L.sum() == 0
    ex = exact_cs(L, draws.q, N, loss_high=1.0, alpha=0.05,
                  q_min=np.maximum(lam, 0.1) / (N - np.arange(draws.k)))
    assert a.fixed_high == pytest.approx(float(ex.high[-1]), abs=1e-12)
    run._config = dataclasses.replace(run._config, exact_share=None,  # an old file's rule
                                      exact_least=None)
    old = run.estimate().metrics["error_rate"].anytime
    assert old.fixed_high > 5 * a.fixed_high  # the least share's bets


def test_a_new_sessions_exact_cs_bets_by_each_draws_recorded_share(pool_files: PoolFiles,
                                                                  tmp_path: Path) -> None:
    """A session created now records ``exact_share``: its error rate's exact CS is the
    one with each draw bounded by the design's recorded uniform share (the sampler's
    ``lam``, replayed from the file), not the least share; the file says so."""
    import dataclasses

    from activetest.session import draw

    db = tmp_path / "s.db"
    pf = pool_files
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--metric", "error_rate",
        "--seed", "5", "--no-progress")
    run("select", db, "--n", 8)
    run("label", db, "--from-data")
    with Session.open(db) as s:
        assert s.session_config.exact_share is True
        draws = s.labelled_draws()
        sampler = draw.replayed(s.store)
        g, G, _ = draw.design_controls(s.store, draws.k, sampler)
        L = s.item_losses(draws)["error_rate"]
        lam = np.maximum(np.asarray(sampler.lam[:draws.k], dtype=float), 0.1)
    a = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]["anytime"]
    ex = exact_cs(L, draws.q, draws.n_pool, loss_high=1.0, alpha=0.05,
                  q_min=lam / (draws.n_pool - np.arange(draws.k)), control=g, control_rest=G,
                  control_low=0.0, control_high=1.0)
    old = exact_cs(L, draws.q, draws.n_pool, loss_high=1.0, alpha=0.05, q_floor=0.1,
                   control=g, control_rest=G, control_low=0.0, control_high=1.0)
    assert (a["exact_low"], a["exact_high"]) == pytest.approx(
        (float(ex.low[-1]), float(ex.high[-1])), abs=1e-12)
    assert float(old.high[-1]) - float(old.low[-1]) > float(ex.high[-1]) - float(ex.low[-1])
    # a session made with exact_share before exact_least (2026-12-07: the least proposal,
    # at least the share's bound, hid the share in every file made since; the catalogue's
    # exact-share-off survived): the share's bound alone, through the session's own path
    with Session.open(db) as s:
        s._cfg = dataclasses.replace(s._cfg, exact_least=None)
        between = s.estimate(record=False, progress=False).metrics["error_rate"].anytime
        s._cfg = dataclasses.replace(s._cfg, exact_share=None)  # neither: the least share
        oldest = s.estimate(record=False, progress=False).metrics["error_rate"].anytime
    assert (between.exact_low, between.exact_high) == pytest.approx(
        (float(ex.low[-1]), float(ex.high[-1])), abs=1e-12)
    assert (oldest.exact_low, oldest.exact_high) == pytest.approx(
        (float(old.low[-1]), float(old.high[-1])), abs=1e-12)


def _write_binary_pool(root: Path, N: int, seed: int, mean: float = 4.0
                       ) -> tuple[Path, Path, Path]:
    """A pool of ``N`` items (ids ``i0``..), a target right on about 93% of them (the
    default ``mean`` of its logit) and a noisier surrogate, as CSV files (pool with
    labels, two prediction tables)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(mean, 2.0, N)
    p = 1 / (1 + np.exp(-z))  # the target's P(positive)
    y = (rng.random(N) < p).astype(int)
    s = 1 / (1 + np.exp(-z - rng.normal(0, 1, N)))
    root.mkdir(parents=True, exist_ok=True)
    names = ["negative", "positive"]
    pool = root / "pool.csv"
    pool.write_text("id,text,label\n" + "".join(f"i{i},item {i},{names[y[i]]}\n"
                                                for i in range(N)), encoding="utf-8")
    paths = []
    for name, prob in (("surrogate", s), ("target", p)):
        path = root / f"{name}.csv"
        path.write_text("id,negative,positive\n" + "".join(
            f"i{i},{float(np.log1p(-prob[i]))!r},{float(np.log(prob[i]))!r}\n"
            for i in range(N)),
            encoding="utf-8")
        paths.append(path)
    return pool, paths[0], paths[1]


def test_a_new_sessions_exact_cs_bets_by_each_draws_least_proposal(tmp_path: Path) -> None:
    """After its uniform phase the default design mixes in 10% of the uniform (the share
    the exact CS bounded each draw by: items weighing up to 10 times the uniform), yet it
    draws every item at several times that share: a new session (``exact_least``) bounds
    each draw by the least probability its proposal gave an item it could draw, replayed
    in the blind spot's pass and continued from its stored state between rounds. The
    error rate's exact CS is :func:`exact_cs` with that per-draw bound, computed here by
    hand from the design's replayed proposals; narrower than the share's; the same
    from a file whose stored state is removed (replayed from the first draw)."""
    import sqlite3

    from activetest.session import draw

    pool, sur, tgt = _write_binary_pool(tmp_path / "data", 600, seed=1)
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{sur}",
        "--target", f"table:{tgt}", "--id-column", "id", "--metric", "error_rate",
        "--seed", "3", "--no-progress")
    for _ in range(5):  # rounds: each estimate stores the pass's state, the next continues
        run("select", db, "--n", 40)
        run("label", db, "--from-data")
        run("estimate", db, "--json")
    a = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]["anytime"]
    with Session.open(db) as s:
        assert s.session_config.exact_least is True
        draws = s.labelled_draws()
        sampler = draw.replayed(s.store)
        g, G, _ = draw.design_controls(s.store, draws.k, sampler)
        L = s.item_losses(draws)["error_rate"]
        lam = np.maximum(np.asarray(sampler.lam[:draws.k], dtype=float), 0.1)
        least = _least_q(sampler, draws.k)
    share = lam / (draws.n_pool - np.arange(draws.k))
    assert draws.k == 200 and 0 < L.sum() < 30  # few errors: the exact CS matters
    assert np.max(least / share) > 3  # the design draws far above its uniform share

    def cs(q_min: np.ndarray):
        return exact_cs(L, draws.q, draws.n_pool, loss_high=1.0, alpha=0.05, q_min=q_min,
                        control=g, control_rest=G, control_low=0.0, control_high=1.0)

    ex, by_share = cs(np.maximum(share, least * (1 - 1e-9))), cs(share)
    assert (a["exact_low"], a["exact_high"]) == pytest.approx(
        (float(ex.low[-1]), float(ex.high[-1])), abs=1e-12)
    width = float(ex.high[-1] - ex.low[-1])
    # (here 0.096 by the share, 0.081 by the least proposal)
    assert float(by_share.high[-1] - by_share.low[-1]) > 1.15 * width, (ex, by_share)
    # replayed from the first draw: the same numbers
    fresh = tmp_path / "fresh.db"
    shutil.copy(db, fresh)
    with sqlite3.connect(fresh) as c:
        assert c.execute("SELECT COUNT(*) FROM blind_spot_checkpoint").fetchone()[0] == 1
        c.execute("DELETE FROM blind_spot_checkpoint")
    b = json.loads(run("estimate", fresh, "--json"))["metrics"]["error_rate"]["anytime"]
    assert (b["exact_low"], b["exact_high"]) == (a["exact_low"], a["exact_high"])
    # a stored state from before the least proposals were kept: not continued by a
    # session that uses them (the same numbers, replayed), and replaced by one with them
    import io

    older = tmp_path / "older.db"
    shutil.copy(db, older)
    with sqlite3.connect(older) as c:
        blob = c.execute("SELECT state FROM blind_spot_checkpoint").fetchone()[0]
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files if name != "least_q"}
        assert len(arrays) == len(z.files) - 1
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, **arrays)
        c.execute("UPDATE blind_spot_checkpoint SET state = ?", (buf.getvalue(),))
    b = json.loads(run("estimate", older, "--json"))["metrics"]["error_rate"]["anytime"]
    assert (b["exact_low"], b["exact_high"]) == (a["exact_low"], a["exact_high"])
    with sqlite3.connect(older) as c:
        blob = c.execute("SELECT state FROM blind_spot_checkpoint").fetchone()[0]
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        assert z["least_q"].shape == (200,)


def test_the_apis_exact_cs_after_the_uniform_phase_bets_by_the_least_proposal() -> None:
    """``ActiveTest`` as a new session: a target wrong on about 6% of 2,000 items, 200
    labels by the default design. Its exact CS with each draw bounded by the least
    proposal is far narrower than by the share (QA measurement: [0.007, 0.180] by the
    share, [0.007, 0.108] by the least proposal), and is :func:`exact_cs` with that
    bound by hand; an old file's rule (no ``exact_least``) keeps the share's numbers."""
    rng = np.random.default_rng(1)
    N = 2000
    z = rng.normal(4.0, 2.0, N)
    p = 1 / (1 + np.exp(-z))
    truth = (rng.random(N) < p).astype(int)
    T = np.column_stack([1 - p, p])
    s = 1 / (1 + np.exp(-z - rng.normal(0, 1, N)))
    run = ActiveTest(np.column_stack([1 - s, s]), T, metric="error_rate", seed=1)
    for _ in range(20):
        for i in run.next(10):
            run.label(i, int(truth[i]))
    a = run.estimate().metrics["error_rate"].anytime
    draws = run.labelled_draws()
    g, G, _ = run._sampler.controls("zero_one")
    K = draws.k
    L = (T[draws.rows].argmax(axis=1) != truth[draws.rows]).astype(float)
    ex = exact_cs(L, draws.q, N, loss_high=1.0, alpha=0.05, q_min=_share_q_min(run),
                  control=g[:K], control_rest=G[:K], control_low=0.0, control_high=1.0)
    assert (a.exact_low, a.exact_high) == pytest.approx(
        (float(ex.low[-1]), float(ex.high[-1])), abs=1e-12)
    run._config = dataclasses.replace(run._config, exact_least=None)  # an old file's rule
    old = run.estimate().metrics["error_rate"].anytime
    assert old.exact_high - old.exact_low > 1.4 * (a.exact_high - a.exact_low), (old, a)


def test_a_least_proposal_above_a_drawn_items_probability_is_not_used() -> None:
    """The least proposals bound the exact CS's bets only where every labelled draw was
    made with at least that probability (the replay is the run's); a draw below it (a
    file whose stored scores are not the ones it drew with) keeps the share's bound."""
    from activetest.session.estimate_base import LabelledDraws, exact_proposal_bound

    N, K = 50, 4
    rows = np.arange(K)
    draws = LabelledDraws(N, tuple(f"i{r}" for r in rows), tuple(range(1, K + 1)), rows,
                          np.full(K, 0.03), np.zeros(K, dtype=np.int64), K,
                          q_share=np.full(K, 0.5))
    share = 0.5 / (N - np.arange(K))
    ok = exact_proposal_bound(dataclasses.replace(draws, q_least=np.full(K, 0.025)), 0.1)
    np.testing.assert_array_equal(ok["q_min"], np.maximum(share, 0.025 * (1 - 1e-9)))
    above = exact_proposal_bound(dataclasses.replace(draws, q_least=np.full(K, 0.04)), 0.1)
    np.testing.assert_array_equal(above["q_min"], share)


def test_each_counts_exact_cs_is_its_own_where_a_later_draw_is_below_its_least_proposal(
) -> None:
    """An adaptive design's exact CS bounds each draw by its least proposal only where
    every labelled draw was made with at least that probability (:func:`exact_proposal_bound`).
    That check ran over all the labels: one later draw below its least proposal (a file
    whose recorded probability was edited, or whose scores are not the ones it drew with)
    put the share's bound on every count of the error rate's curve (the report's), so an
    early count's exact CS differed from the estimate's with that count's labels alone.
    Each count is now the estimate's at that count (:func:`few_errors_inputs` of those
    draws), for the error rate and for a paired difference (the floor's branch)."""
    from activetest.session.estimate import LabelledDraws, difference_few_inputs

    N, K = 50, 30
    rows = np.arange(K)
    q = np.full(K, 0.05)
    L = np.zeros(K)
    L[[2, 9, 17]] = 1.0
    least = np.full(K, 0.04)  # far above the share's 0.1 / (N - m)
    q[15] = 0.03  # draw 16 was made below its least proposal
    floor = 0.1

    def draws(k: int, with_least: bool = True) -> LabelledDraws:
        return LabelledDraws(N, tuple(f"i{r}" for r in rows[:k]), tuple(range(1, k + 1)),
                             rows[:k], q[:k], np.zeros(k, dtype=np.int64), k,
                             q_least=least[:k] if with_least else None)

    def risk(k: int, with_least: bool = True) -> Any:
        return est.few_errors_inputs(L[:k], draws(k, with_least), 5, q_floor=floor)

    def difference(k: int, with_least: bool = True) -> Any:
        return difference_few_inputs(L[:k], np.zeros(k), draws(k, with_least), 5,
                                     q_floor=floor)

    for of in (risk, difference):
        whole, share_only = of(K), of(K, False)
        for k in (5, 10, 15, 16, 30):
            part = of(k)
            assert whole.exact_low[k - 1] == part.exact_low[-1], (of.__name__, k)
            assert whole.exact_high[k - 1] == part.exact_high[-1], (of.__name__, k)
        # before the draw below it the least proposal narrows the CS; from it on, the
        # share's bound (the estimate's at those counts, as before)
        assert whole.exact_high[14] < share_only.exact_high[14] - 0.05, (
            of.__name__, whole.exact_high[14], share_only.exact_high[14])
        np.testing.assert_array_equal(whole.exact_high[15:], share_only.exact_high[15:])
        np.testing.assert_array_equal(whole.exact_low[15:], share_only.exact_low[15:])


def test_a_reports_error_rate_point_is_the_estimate_at_its_count_by_the_least_proposal(
        tmp_path: Path) -> None:
    """A new adaptive session (``exact_least``): its report's error rate point at 60 of
    100 labels (few errors: the exact anytime CS stands in, each draw bounded by its
    least proposal, here up to 8 times the share's) is what ``estimate`` said with those
    60 labels, to 1e-12, and its last point the estimate's now. (A later draw below its
    least proposal, which would put the share's bound on every count of a curve made
    all-or-none, cannot be made from a session file: a draw's recorded probability
    edited is refused, the design no longer replays, and the report replays every
    draw's least proposal from the first; :func:`exact_by_own_draws` keeps each count
    the estimate's where it happens.)"""
    from activetest.session import draw

    pool, sur, tgt = _write_binary_pool(tmp_path / "data", 400, seed=1, mean=6.0)
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{sur}",
        "--target", f"table:{tgt}", "--id-column", "id", "--metric", "error_rate",
        "--seed", "3", "--no-progress")
    for _ in range(3):  # rounds: the pass's state stored by each estimate, as a user has it
        run("select", db, "--n", 20)
        run("label", db, "--from-data")
        then = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]
    run("select", db, "--n", 40)
    run("label", db, "--from-data")
    with Session.open(db) as s:
        draws = s.labelled_draws()
        sampler = draw.replayed(s.store)
        least = _least_q(sampler, draws.k)
        lam = np.maximum(np.asarray(sampler.lam[:draws.k], dtype=float), 0.1)
        data = s.report_data(n_points=100, progress=False)
    share = lam / (draws.n_pool - np.arange(draws.k))
    assert draws.k == 100 and np.max(least[:60] / share[:60]) > 4  # the least matters
    (row,) = [r for r in data.history["error rate"] if r.n_labels == 60]
    p, a = row.active, then["anytime"]
    assert p.basis == a["basis"] == "exact", (p.basis, a["basis"])

    def close(x: float, y: float) -> bool:
        return abs(x - y) <= 1e-12 * max(1.0, abs(y))

    assert close(p.value, then["active"]["estimate"])
    assert close(p.fixed.low, a["fixed_low"]) and close(p.fixed.high, a["fixed_high"]), (
        p.fixed, a["fixed_low"], a["fixed_high"])
    assert close(p.anytime.low, a["cs_low"]) and close(p.anytime.high, a["cs_high"])
    last = data.history["error rate"][-1].active
    now = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]["anytime"]
    assert last.basis == now["basis"]
    assert close(last.fixed.low, now["fixed_low"]) and close(last.fixed.high,
                                                              now["fixed_high"])


def test_a_least_proposal_edited_in_the_stored_state_changes_no_number(
        tmp_path: Path) -> None:
    """The blind spot's stored state is a cache: it keeps each draw's least proposal
    (``least_q``), which bounds the exact CS's bets. Edited in the session file (here
    doubled: the draws then look below their own least proposal and the CS falls back
    to the share's bound, 0.177 where the labels give 0.136), the state is not used:
    ``estimate`` gives the numbers it gave before the edit and the report's, to 1e-12,
    and stores the state again with the replayed least proposals."""
    import io
    import sqlite3

    pool, sur, tgt = _write_binary_pool(tmp_path / "data", 400, seed=1, mean=6.0)
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool, "--task", "demo", "--surrogate", f"table:{sur}",
        "--target", f"table:{tgt}", "--id-column", "id", "--metric", "error_rate",
        "--seed", "3", "--no-progress")
    for _ in range(3):  # the pass's state stored by each estimate, as a user has it
        run("select", db, "--n", 20)
        run("label", db, "--from-data")
        before = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]

    def stored() -> dict[str, np.ndarray]:
        with sqlite3.connect(db) as c:
            blob = c.execute("SELECT state FROM blind_spot_checkpoint").fetchone()[0]
        c.close()
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            return {name: z[name] for name in z.files}

    arrays = stored()
    least = arrays["least_q"].copy()
    assert least.shape == (60,)
    arrays["least_q"] = 2 * least  # an edit: the blob rewritten, a valid npz
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)
    with sqlite3.connect(db) as c:
        c.execute("UPDATE blind_spot_checkpoint SET state = ?", (buf.getvalue(),))
    c.close()
    after = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]
    a, b = before["anytime"], after["anytime"]
    assert a["basis"] == b["basis"] == "exact"
    names = ("fixed_low", "fixed_high", "cs_low", "cs_high", "exact_low", "exact_high")
    assert [b[n] for n in names] == pytest.approx([a[n] for n in names], abs=1e-12)
    assert after["active"]["estimate"] == pytest.approx(before["active"]["estimate"],
                                                        abs=1e-12)
    with Session.open(db) as s:
        last = s.report_data(n_points=100, progress=False).history["error rate"][-1]
    p = last.active
    assert p.basis == "exact" and last.n_labels == 60
    assert [p.fixed.low, p.fixed.high, p.anytime.low, p.anytime.high] == pytest.approx(
        [b["fixed_low"], b["fixed_high"], b["cs_low"], b["cs_high"]], abs=1e-12)
    np.testing.assert_array_equal(stored()["least_q"], least)  # stored again, replayed
