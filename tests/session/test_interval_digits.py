"""Intervals are printed with enough decimals that an interval of nonzero width shows two
different ends, and the estimate beside them with as many (QA: an interval 3e-5 wide
read ``[0.0012, 0.0012]``, a point it is not); the ordinary case keeps 4 decimals."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from session_support import PoolFiles, labelled_table_session

from activetest.cli._app import _cs, _decimals, _num
from activetest.cli._estimate import _estimate_rows, _interval_text
from activetest.session.interval_names import interval_decimals
from activetest.session.workflow import Session


def test_a_narrow_interval_prints_its_two_ends_apart_and_4_decimals_otherwise() -> None:
    assert _cs(0.00120, 0.00123) == "[0.00120, 0.00123]"
    assert _interval_text(0.0012, 0.00120004) == "[0.00120000, 0.00120004]"
    assert _cs(0.1234, 0.5678) == "[0.1234, 0.5678]"  # the ordinary case: 4 decimals
    assert _cs(0.25, 0.25) == "[0.2500, 0.2500]"  # a point stays a point
    # a point (at most 1e-9 wide, as a census's value -+ 1e-12): 4 decimals, not 12
    assert _cs(0.0012, 0.0012 + 1e-15) == "[0.0012, 0.0012]"
    assert _cs(-1 / 60 - 1e-12, -1 / 60 + 1e-12) == "[-0.0167, -0.0167]"  # a census's
    assert _interval_text(float("-inf"), 0.5) == "[-inf, 0.5000]"
    # several intervals of one estimate: the most any of them needs
    assert interval_decimals((0.1, 0.2), (0.00120, 0.00123), (None, 1.0)) == 5


def test_the_estimate_takes_the_decimals_of_its_intervals(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    """A real session's estimate, its fixed-budget interval narrowed to 3e-5 (what a
    large labelled share of a pool of near-equal losses gives): the table prints the
    interval's ends apart and the estimate with the same decimals; the other metric's
    column keeps 4."""
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=40)
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    m = r.metrics["error_rate"]
    e = m.active.estimate
    narrow = replace(m.anytime, fixed_low=e - 1e-5, fixed_high=e + 2e-5)
    r = replace(r, metrics={**r.metrics, "error_rate": replace(m, anytime=narrow)})
    rows = {what or kind: cells for kind, what, cells in _estimate_rows(r)}
    col = list(r.metrics).index("error_rate")
    fixed = rows["fixed_budget"][col]
    low, high = fixed.strip("[]").split(", ")
    assert low != high, fixed
    d = len(low.split(".")[1])
    assert d > 4 and _decimals(m.active, narrow) == d
    (cells,) = [v for k, v in rows.items() if k.endswith("LURE estimate")]
    est = cells[col]
    assert est == _num(e, d) and len(est.split(".")[1]) == d
    other = cells[1 - col]
    assert len(other.split(".")[1]) == 4  # the log loss: the ordinary case
    # the Python API's summary (str(report), the notebook table) by the same rule
    (row,) = [x for x in r.summary_rows() if x.metric == "error_rate" and x.of == "target"]
    assert row.decimals == d and dict(row.intervals)["fixed-budget 95% interval"] == fixed
    assert f"error_rate: LURE {_num(e, d)}; fixed-budget 95% interval {fixed}" in str(r)
    (ll,) = [x for x in r.summary_rows() if x.metric == "log_loss" and x.of == "target"]
    assert ll.decimals == 4


def test_the_report_prints_a_narrow_intervals_two_ends_apart() -> None:
    """The report's cells (4 significant digits) by the same rule."""
    from activetest.session.report.data import Interval
    from activetest.session.report.render import _interval

    assert _interval(Interval(0.1234, 0.12343)) == "[0.1234, 0.12343]"
    assert _interval(Interval(0.25, 0.5)) == "[0.25, 0.5]"  # the ordinary case
    assert _interval(Interval(-1 / 60 - 1e-12, -1 / 60 + 1e-12)) == "[-0.01667, -0.01667]"


def test_an_interval_end_near_zero_keeps_its_sign_where_the_other_end_shows_one(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The summary (``print(report)``, the notebook table) prints a lone value that rounds
    to zero as 0.0000 (QA: a difference of -1e-17 read "-0.0000"). An interval's end is not
    lone: [-0.0100, -0.00004] lies wholly below 0, which "[-0.0100, 0.0000]" hid; and an
    interval 5e-5 wide across 0 read "[0.0000, 0.0000]", a point it is not (its ends,
    "-0.0000" and "0.0000", counted as printed apart). A real session's report, its
    fixed-budget interval replaced by each case."""
    from activetest.session.interval_names import interval_text

    assert interval_text(-0.01, -0.00004) == "[-0.0100, -0.0000]"
    assert interval_text(-0.00004, 0.005) == "[0.0000, 0.0050]"  # no minus shown: 0.0000
    assert interval_text(-1e-13, 1e-13) == "[0.0000, 0.0000]"  # a census's point
    assert interval_decimals((-0.00002, 0.00003)) == 5
    assert _cs(-0.00002, 0.00003) == "[-0.00002, 0.00003]"  # the terminal, the same rule
    # the terminal prints the same as the summary and the page (it printed a lone -1e-17
    # as "-0.0000" and [-0.00004, 0.005] as "[-0.0000, 0.0050]")
    assert _num(-1e-17) == "0.0000" and _num(-0.25) == "-0.2500"
    assert _cs(-0.00004, 0.005) == "[0.0000, 0.0050]"
    assert _cs(-0.01, -0.00004) == "[-0.0100, -0.0000]"
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=40)
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    m = r.metrics["error_rate"]
    for (low, high), said in (((-0.01, -0.00004), "[-0.0100, -0.0000]"),
                              ((-0.00002, 0.00003), "[-0.00002, 0.00003]"),
                              ((-0.00004, 0.005), "[0.0000, 0.0050]")):
        r2 = replace(r, metrics={**r.metrics, "error_rate": replace(m, anytime=replace(
            m.anytime, fixed_low=low, fixed_high=high))})
        (row,) = [x for x in r2.summary_rows() if x.metric == "error_rate" and x.of == "target"]
        assert dict(row.intervals)["fixed-budget 95% interval"] == said, row
        assert f"fixed-budget 95% interval {said}" in str(r2)
