"""``report.html`` in a real headless Chromium: nothing runs off the page. Skipped, with
the reason, where chromium or chromedriver is absent (CI installs both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from activetest.session.report import Comparison, Estimate, Interval, ReportData, write_report
from tests.web import browser_support as bs

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))


def test_long_names_and_wide_tables_stay_within_the_page(driver: Any, tmp_path: Path) -> None:
    """QA: a ``table:`` target in a deep folder (one word of 170 characters) pushed the
    title, the header lines and the comparison table's verdict off the right of the page
    (a horizontal scroll bar, the verdict out of view)."""
    folder = "/data/" + "a_really_long_folder_name_for_predictions_" * 4
    target, other = f"table:{folder}target.csv", f"table:{folder}other.csv"
    rows = [(k, Estimate(0.3, Interval(0.2, 0.4), Interval(0.21, 0.39), Interval(0.1, 0.5)))
            for k in (30, 40)]
    data = ReportData(
        title=f"Active testing: {target} on a task", task="a task", target=target,
        surrogate=f"table:{folder}surrogate.csv", metrics=["error rate"],
        history={"error rate": rows}, value_range={"error rate": (0.0, 1.0)},
        comparison=Comparison("error rate", target, other,
                              Estimate(-0.1, Interval(-0.2, 0.0), Interval(-0.25, -0.01),
                                       Interval(-0.3, 0.1)), 40,
                              Estimate(0.4, Interval(0.3, 0.5), Interval(0.31, 0.49))))
    write_report(data, tmp_path / "r")
    driver.get((tmp_path / "r" / "report.html").as_uri())
    page = driver.execute_script("return [document.documentElement.scrollWidth, "
                                 "document.documentElement.clientWidth]")
    assert page[0] <= page[1], page
    # every cell and heading lies within the body's width (none clipped by a scroll box)
    right = driver.execute_script(
        "const b = document.body.getBoundingClientRect().right;"
        "return [...document.querySelectorAll('h1, li, td, th')]"
        ".filter(e => e.getBoundingClientRect().right > b + 1).map(e => e.textContent)")
    assert right == [], right


def test_long_words_break_only_after_separators_and_never_in_attributes() -> None:
    """The page's long names may break after ``/``, ``_``, ``-`` or ``:`` (a
    ``<wbr>``), numbers and short words never; text stays escaped."""
    from activetest.session.report.render import _breakable

    assert _breakable("table:/data/a_long_folder_name/x.csv") == (
        "table:<wbr>/<wbr>data/<wbr>a_<wbr>long_<wbr>folder_<wbr>name/<wbr>x.csv")
    assert _breakable("[-0.006123, 1.142]") == "[-0.006123,&nbsp;1.142]"  # one unit
    assert _breakable("&lt;script&gt;_is_escaped_and_long_enough") == (
        "&lt;script&gt;_<wbr>is_<wbr>escaped_<wbr>and_<wbr>long_<wbr>enough")


def test_an_interval_in_a_narrow_column_stays_on_one_line(driver: Any, tmp_path: Path) -> None:
    """QA: in the estimates table's narrow columns an interval broke after its comma,
    "[0.05," on one line and "0.9]" on the next; each interval now stays on one line
    (the cell wraps around it, as a whole)."""
    rows = [(k, Estimate(0.3115, Interval(0.2461, 0.3961), Interval(0.05, 0.9),
                         Interval(0.1737, 2.2795))) for k in (30, 60)]
    data = ReportData(title="Active testing: t on demo", task="demo", target="t",
                      surrogate="s", metrics=["error rate"], history={"error rate": rows},
                      value_range={"error rate": (0.0, 1.0)})
    write_report(data, tmp_path / "r")
    driver.set_window_size(640, 900)
    driver.get((tmp_path / "r" / "report.html").as_uri())
    lines = driver.execute_script(
        "return [...document.querySelectorAll('td')]"
        ".filter(td => td.textContent.startsWith('['))"
        ".map(td => { const r = document.createRange(); r.selectNodeContents(td);"
        " const tops = new Set([...r.getClientRects()].map(b => Math.round(b.top)));"
        " return [td.textContent, tops.size]; })")
    assert len(lines) >= 3, lines
    assert all(n == 1 for _, n in lines), lines
