"""Unit tests of the report room: :func:`activetest.session.report.build.report_data`
on plain, hand-made :class:`ReportInputs` (no session, no model, no file)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from activetest.session import estimate as est
from activetest.session.config import SessionConfig
from activetest.session.report import ReportInputs, report_data
from activetest.session.report.build import examples_used

REPORT = Path(__file__).resolve().parents[2] / "src" / "activetest" / "session" / "report"
LOSS = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0])  # error rate 3/8


def config(**kw: object) -> SessionConfig:
    base = {"task": {}, "surrogate": "s.csv", "target": "t.csv", "metric": "error_rate",
            "acquisition": "uniform", "seed": 5, "n_boot": 50, "shots": 2,
            "target_shots": 0}
    return SessionConfig(**{**base, **kw})  # type: ignore[arg-type]


def inputs(*, target_width: float | None = None, compare: bool = False,
           **kw: object) -> ReportInputs:
    """8 uniform draws of a pool of 20; item i2 has a label the target finds unlikely."""
    k, n = len(LOSS), 20
    draws = est.LabelledDraws(n_pool=n, item_ids=tuple(f"i{j}" for j in range(k)),
                              steps=tuple(range(k)), rows=np.arange(k, dtype=np.int64),
                              q=1.0 / (n - np.arange(k)), y=np.array([0, 1] * 4),
                              n_selected=k + 1)
    t_nll = np.where(np.arange(k) == 2, 9.0, 0.1)
    cfg = config()
    rep = est.estimate_report(draws, losses={"error_rate": LOSS}, surrogate_nll=np.zeros(k),
                              target_nll=t_nll, pool_controls={}, seed=cfg.seed,
                              n_boot=cfg.n_boot, level=cfg.level, target_width=target_width,
                              compare={"u.csv": {"error_rate": np.zeros(k)}} if compare
                              else None)
    base = dict(estimate=rep, draws=draws, losses={"error_rate": LOSS}, config=cfg,
                task_name="sst2", class_names=("negative", "positive"),
                scores=np.full(n, 0.05), acquired_idx=np.arange(k + 1),
                acquired_q=np.r_[draws.q, 1 / 12],
                item_fields={"i2": {"text": "a fine kettle", "note": "x"}},
                session="run.db")
    return ReportInputs(**{**base, **kw})  # type: ignore[arg-type]


def test_history_and_header_from_plain_inputs() -> None:
    given = inputs()
    data = report_data(given, n_points=4)
    assert data.title == "Active testing: t.csv on sst2"
    assert (data.task, data.target, data.surrogate, data.acquisition) == (
        "sst2", "t.csv", "s.csv", "uniform")
    assert data.metrics == ["error rate"] and data.pool_size == 20 and data.level == 0.95
    rows = data.history["error rate"]
    # budgets 1..K spread over 4 points, those below 2 dropped; uniform q: LURE = the mean
    assert [r.n_labels for r in rows] == [3, 6, 8]
    assert [r.active.value for r in rows] == pytest.approx([1 / 3, 0.5, 0.375], abs=1e-12)
    assert [r.uniform.value for r in rows] == pytest.approx([1 / 3, 0.5, 0.375], abs=1e-12)
    final = given.estimate.metrics["error_rate"]  # the last row is the estimate itself
    last = rows[-1].active
    assert (last.bootstrap.low, last.bootstrap.high) == (final.active.low, final.active.high)
    assert final.anytime is not None
    assert (last.fixed.low, last.fixed.high) == pytest.approx(
        (final.anytime.fixed_low, final.anytime.fixed_high), abs=1e-12)
    # 8 labels: the asymptotic CS is not claimed yet (the estimate's is the value's range,
    # which `estimate` prints as "(from 30 labels)"): no value, no band
    assert (final.anytime.cs_low, final.anytime.cs_high) == (0.0, 1.0)
    assert last.anytime is None
    assert data.info == {"Session": "run.db", "Seed": 5, "Proposal floor": 0.1,
                         "In-context examples": 2, "Target in-context examples": 0}
    assert data.value_range == {"error rate": (0.0, 1.0)}
    assert data.acquired_idx.tolist() == list(range(9))
    assert data.acquired_q[-1] == pytest.approx(1 / 12)


def test_flagged_item_with_its_text_and_shift() -> None:
    data = report_data(inputs())
    (f,) = data.flagged
    assert (f.item_id, f.text, f.label, f.target_nll) == ("i2", "a fine kettle | x",
                                                           "negative", 9.0)
    # dropping i2 (loss 0) from 3/8: 3/7 - 3/8
    assert f.shift == pytest.approx(3 / 7 - 3 / 8, abs=1e-12)
    assert data.notes[-1].startswith("Flagged items: dropping items breaks")


def test_labels_needed_and_comparison(tmp_path: Path) -> None:
    data = report_data(inputs(target_width=0.1, compare=True), truth={"error_rate": 0.4},
                       title="T", notes=["mine"])
    assert data.title == "T" and data.truth == {"error rate": 0.4} and "mine" in data.notes
    (need,) = data.labels_needed
    assert (need.metric, need.width) == ("error rate", 0.1) and need.n_labels > 8
    # uniform sampling's: from the pool variance estimated on the draws (not capped at
    # N = 20: the bootstrap does not reach that width within the pool, which the report
    # says instead of calling 20 enough: QA)
    from activetest.session.report.render import write_report
    from activetest.stats import uniform_labels_for_width

    q = 1.0 / (20 - np.arange(len(LOSS)))
    assert need.uniform_n_labels == uniform_labels_for_width(LOSS, q, 20, 0.1) > 20
    md = write_report(data, tmp_path / "rep", html=False).read_text()
    assert f"not within the pool (20 items; about {need.uniform_n_labels} projected)" in md
    wide = report_data(inputs(target_width=0.9)).labels_needed[0]
    assert wide.uniform_n_labels == uniform_labels_for_width(LOSS, q, 20, 0.9) < 20
    # the anytime CS's projection, as the estimate has it (8 labels: a projection)
    a = inputs(target_width=0.1).estimate.metrics["error_rate"].anytime
    assert a is not None and not a.may_stop and a.labels_needed is not None
    assert need.anytime_n_labels == a.labels_needed > 8
    # and not the bootstrap's projection, where the two differ (width 0.5: 14 against 20)
    mid = report_data(inputs(target_width=0.5)).labels_needed[0]
    a5 = inputs(target_width=0.5).estimate.metrics["error_rate"]
    assert mid.anytime_n_labels == a5.anytime.labels_needed != mid.n_labels == a5.labels_needed
    (c,) = data.comparison
    assert (c.metric, c.target_a, c.target_b, c.n_labels) == ("error rate", "t.csv",
                                                              "u.csv", 8)
    assert c.difference.value == pytest.approx(0.375, abs=1e-12)
    assert c.other.value == 0.0


def test_design_state_in_the_header() -> None:
    base = inputs()
    rep = dataclasses.replace(base.estimate, design={
        "design": "adaptive", "refits": 2, "lam": 0.3, "weights": {"surrogate": 0.5}})
    data = report_data(dataclasses.replace(base, estimate=rep))
    assert data.info["Design"] == "adaptive, 2 refit(s), lambda 0.3"
    assert data.info["Fitted calibration"] == "surrogate 0.5"


def test_design_controls_give_the_designs_estimate() -> None:
    # g = G = 0 and V = NaN: the design's estimate is LURE on its q
    k = len(LOSS)
    zero = (np.zeros(k), np.zeros(k), np.full(k, np.nan))
    with_design = report_data(dataclasses.replace(inputs(), design_controls={
        "error_rate": zero}))
    plain = report_data(inputs())
    assert [r.active.value for r in with_design.history["error rate"]] == pytest.approx(
        [r.active.value for r in plain.history["error rate"]], abs=1e-12)


def test_examples_used_says_what_the_file_says() -> None:
    cfg = config(shots=4, target_shots=1)
    assert examples_used(cfg, {"n_examples": "unknown"}, "target") == "unknown"
    assert examples_used(cfg, {}, "target") == 1  # scored here on the labelled items (pe)
    assert examples_used(cfg, {}, "surrogate") == 4
    # a target the harness ran (nothing of its scores stored here): not the session's
    harness = dataclasses.replace(cfg, target="lm-eval")
    assert examples_used(harness, {}, "target") == "unknown"
    assert examples_used(dataclasses.replace(cfg, target="inspect"), {}, "target") == "unknown"


def test_report_imports_no_session_workflow() -> None:
    for path in REPORT.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any("workflow" in n for n in names), path.name


@pytest.mark.parametrize(("acquisition", "name"), [
    ("adaptive", "adaptive LURE estimate"), ("graded_fixed", "adaptive LURE estimate"),
    ("ce", "LURE estimate"), (None, "LURE estimate")])
def test_the_estimate_is_named_by_its_estimator(acquisition: str | None, name: str) -> None:
    from activetest.session.report.data import ReportData

    data = ReportData(title="t", task="sst2", target="a", surrogate="b", metrics=["log loss"],
                      history={"log loss": [(10, (0.5, (0.4, 0.6)))]}, acquisition=acquisition)
    assert data.estimator_name == name
