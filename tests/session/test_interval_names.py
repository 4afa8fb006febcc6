"""Intervals named by what they guarantee, everywhere a person reads them (issue 24.4),
the second target's and the paired difference's intervals with the finite-population
factor and within the loss's range, the terminal table at 80 columns and the
figures' text inside the figure (24.9), and hostile item text made inert (24.14).
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from session_support import PoolFiles, labelled_table_session, texts_inside
from typer.testing import CliRunner

from activetest import cli
from activetest.cli import _estimate as estimate_command
from activetest.session import estimate as est
from activetest.session.interval_names import (
    ANYTIME,
    BOOTSTRAP,
    FIXED_BUDGET,
    interval_name,
)
from activetest.session.report import ReportData, plots, write_report
from activetest.session.report.text import REPLACEMENT
from activetest.session.workflow import Session
from activetest.stats import log_loss, sample, zero_one_loss

runner = CliRunner()
FIXED, CS, BOOT = (interval_name(k) for k in (FIXED_BUDGET, ANYTIME, BOOTSTRAP))
# what the report must never contain: C0 but tab/newline, DEL, C1, bidi controls
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def run(*args: object, code: int = 0) -> str:
    result = runner.invoke(cli.app, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


def _draws(rows: np.ndarray, q: np.ndarray, n_pool: int) -> est.LabelledDraws:
    k = rows.size
    return est.LabelledDraws(n_pool, tuple(f"i{j}" for j in rows), tuple(range(1, k + 1)),
                             rows, q, np.zeros(k, dtype=np.int64), k)


def _compare(la: np.ndarray, lb: np.ndarray, rows: np.ndarray, q: np.ndarray, *,
             seed: int = 0, n_boot: int = 200) -> est.Comparison:
    report = est.estimate_report(_draws(rows, q, la.size), losses={"error_rate": la[rows]},
                                 surrogate_nll=np.zeros(rows.size), pool_controls={},
                                 compare={"b": {"error_rate": lb[rows]}}, seed=seed,
                                 n_boot=n_boot)
    (c,) = report.comparisons
    return c


# ------------------------------------------------------------ census and coverage


def test_census_gives_the_exact_second_risk_and_difference_with_zero_width() -> None:
    N = 24
    rng = np.random.default_rng(3)
    la = (rng.random(N) < 0.3).astype(float)
    lb = np.ones(N)
    lb[:2] = 0.0  # an error rate of 22/24 = 0.917: its bootstrap ran past 1
    idx, q = sample(0.2 + rng.random(N), N, random_state=5)
    c = _compare(la, lb, idx[0], q[0])
    d, o = c.difference_anytime, c.other_anytime
    assert d is not None and o is not None
    for a, truth in ((o, lb.mean()), (d, la.mean() - lb.mean())):
        assert a.fixed_low == pytest.approx(truth, abs=1e-9)
        assert a.fixed_high == pytest.approx(truth, abs=1e-9)
        assert a.cs_low == pytest.approx(truth, abs=1e-9)
        assert a.cs_high == pytest.approx(truth, abs=1e-9)
    # the bootstrap (no finite-population factor) stays wide, but within the loss's range
    assert c.other.high - c.other.low > 0.01
    assert 0.0 <= c.other.low <= c.other.estimate <= c.other.high <= 1.0
    assert -1.0 <= c.difference.low <= c.difference.high <= 1.0


def test_fixed_budget_interval_of_the_difference_covers_at_its_level() -> None:
    """Seeded Monte Carlo on a small pool (K/N = 0.75, where the finite-population
    factor halves the width): coverage within 3 SE of 95%; the bootstrap, which lacks
    the factor, is not the interval that is checked here."""
    N, K, R = 40, 30, 500
    rng = np.random.default_rng(0)
    la = (rng.random(N) < 0.3).astype(float)
    lb = (rng.random(N) < 0.5).astype(float)
    idx, q = sample(0.2 + rng.random(N), K, n_runs=R, random_state=1)
    hits = {"difference": 0, "other": 0}
    for r in range(R):
        c = _compare(la, lb, idx[r], q[r], seed=r, n_boot=2)
        d, o = c.difference_anytime, c.other_anytime
        assert d is not None and o is not None
        hits["difference"] += d.fixed_low <= la.mean() - lb.mean() <= d.fixed_high
        hits["other"] += o.fixed_low <= lb.mean() <= o.fixed_high
        assert 0.0 <= o.fixed_low <= o.fixed_high <= 1.0
        assert -1.0 <= d.fixed_low <= d.fixed_high <= 1.0
    se = np.sqrt(0.95 * 0.05 / R)
    for what, n in hits.items():
        assert abs(n / R - 0.95) <= 3 * se, (what, n / R)


# ------------------------------------------------------------ sessions: CLI and report


@pytest.fixture
def census(pool_files: PoolFiles, tmp_path: Path) -> Path:
    """A session whose 60 pool items are all labelled, with a second target."""
    return labelled_table_session(pool_files, tmp_path / "s.db", seed=2, n=60)


def _table(path: Path) -> np.ndarray:
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    return np.array([[float(a), float(b)] for _, a, b in rows])


def _truths(pool_files: PoolFiles) -> dict[str, tuple[float, float]]:
    """metric -> (second target's risk, target - second) on the whole pool."""
    y = pool_files.labels
    ta, tb = _table(pool_files.target), _table(pool_files.target2)
    out = {}
    for m, f in (("log_loss", log_loss), ("error_rate", zero_one_loss)):
        a, b = float(f(ta, y).mean()), float(f(tb, y).mean())
        out[m] = (b, a - b)
    return out


def test_census_comparison_through_the_cli_and_report(census: Path, pool_files: PoolFiles,
                                                      tmp_path: Path) -> None:
    other = f"table:{pool_files.target2}"
    data = json.loads(run("estimate", census, "--compare", other, "--json"))
    truths = _truths(pool_files)
    for c in data["comparisons"]:
        risk, diff = truths[c["metric"]]
        for key, truth in (("other_anytime", risk), ("difference_anytime", diff)):
            a = c[key]
            assert a["fixed_low"] == pytest.approx(truth, abs=1e-9)
            assert a["fixed_high"] == pytest.approx(truth, abs=1e-9)
    text = run("estimate", census, "--compare", other)
    err_diff = truths["error_rate"][1]
    assert f"{FIXED} [{err_diff:.4f}, {err_diff:.4f}]" in text
    run("report", census, "--out", tmp_path / "rep", "--compare", other)
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert f"| {err_diff:.4g} | [{err_diff:.4g}, {err_diff:.4g}] |" in md


@pytest.fixture
def session(pool_files: PoolFiles, tmp_path: Path) -> Path:
    return labelled_table_session(pool_files, tmp_path / "s.db", seed=4, n=40)


def _only_named(text: str) -> None:
    """Every "95% interval" a person reads says which one it is."""
    for m in re.finditer(r"95% interval", text):
        before = text[max(0, m.start() - 13):m.start()]
        assert before.endswith(("fixed-budget ", "bootstrap ")), text[m.start() - 60:m.end()]


def test_status_report_and_html_name_every_interval_with_the_fixed_budget_first(
        session: Path, tmp_path: Path, pool_files: PoolFiles) -> None:
    data = json.loads(run("estimate", session, "--json"))
    status = run("status", session)
    _only_named(status)
    for e in data["metrics"].values():
        a = e["anytime"]
        fixed = f"{FIXED} [{a['fixed_low']:.4f}, {a['fixed_high']:.4f}]"
        boot = f"{BOOT} [{e['active']['low']:.4f}, {e['active']['high']:.4f}]"
        assert fixed in status and boot in status
        assert status.index(fixed) < status.index(boot)  # the headline first
        assert f"{CS} [{a['cs_low']:.4f}, {a['cs_high']:.4f}]" in status
    run("report", session, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    _only_named(md)
    _only_named(page)
    header = next(line for line in md.splitlines() if line.startswith("| metric | labels"))
    assert header.index(FIXED) < header.index(CS) < header.index(BOOT)
    for m, name in (("log_loss", "log loss"), ("error_rate", "error rate")):
        a = data["metrics"][m]["anytime"]
        row = next(line for line in md.splitlines() if line.startswith(f"| {name} |"))
        assert f"| [{a['fixed_low']:.4g}, {a['fixed_high']:.4g}] |" in row
    records = json.loads(run("estimate", session, "--format", "eee"))
    assert len(records) == len(data["metrics"])
    for rec in records:
        unc = rec["evaluation_results"][0]["score_details"]
        assert unc["uncertainty"]["confidence_interval"]["method"].startswith(FIXED)
        assert unc["details"]["bootstrap_method"].startswith(BOOT)
        # each named interval carries its own numbers (mutation check: the record's
        # interval and its details' anytime interval swapped passed every test)
        e = data["metrics"][unc["details"]["metric"]]
        a, ci, d = e["anytime"], unc["uncertainty"]["confidence_interval"], unc["details"]
        assert (float(ci["lower"]), float(ci["upper"])) == pytest.approx(
            (a["fixed_low"], a["fixed_high"]), rel=1e-6)
        assert (float(d["anytime_low"]), float(d["anytime_high"])) == pytest.approx(
            (a["cs_low"], a["cs_high"]), rel=1e-6)
        assert (float(d["bootstrap_low"]), float(d["bootstrap_high"])) == pytest.approx(
            (e["active"]["low"], e["active"]["high"]), rel=1e-6)
        assert d["anytime_method"].startswith(CS)


def test_the_reports_comparison_carries_each_intervals_own_numbers(
        session: Path, pool_files: PoolFiles) -> None:
    """The report's paired comparison: the difference's fixed-budget interval and CS, and
    the other target's fixed-budget interval, are the estimate's (mutation check:
    swapping them in the report passed every test)."""
    spec = f"table:{pool_files.target2}"
    with Session.open(session) as s:
        r = s.estimate(record=False, progress=False, compare=[spec])
        data = s.report_data(compare=[spec], progress=False)
    assert r.n_labels >= 30 and len(data.comparison) == len(r.comparisons) == 2
    for c, rc in zip(data.comparison, r.comparisons, strict=True):
        d, o = rc.difference_anytime, rc.other_anytime
        # (a new session names the compared table by its name: never a local path)
        assert c.target_b == "table:target2.csv" and d is not None and o is not None
        assert (c.difference.fixed.low, c.difference.fixed.high) == pytest.approx(
            (d.fixed_low, d.fixed_high), rel=1e-12)
        assert (c.difference.anytime.low, c.difference.anytime.high) == pytest.approx(
            (d.cs_low, d.cs_high), rel=1e-12)
        assert (c.other.fixed.low, c.other.fixed.high) == pytest.approx(
            (o.fixed_low, o.fixed_high), rel=1e-12)


def test_the_reports_comparison_shows_no_asymptotic_cs_before_30_labels(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """As `estimate` ("(from 30 labels)"): the report showed the difference's asymptotic CS
    at 10 labels ([-1.78, 1.765]) and its verdict could rest on it (QA); the exact CS or
    sure bounds, valid at any count, are still shown where they stand in. (Seed 10: both
    metrics' differences on the CLT basis at 10 labels; seed 1's log loss difference is
    cut to its sure bounds since the difference's skewness correction may only widen.)"""
    db = tmp_path / "few.db"
    spec = f"table:{pool_files.target2}"
    res = runner.invoke(cli.app, [str(a) for a in (
        "init", db, "--pool", pool_files.pool, "--task", "demo", "--id-column", "id",
        "--surrogate", f"table:{pool_files.surrogate}", "--target",
        f"table:{pool_files.target}", "--compare", spec, "--acquisition", "compare",
        "--metric", "both", "--seed", "10", "--no-progress")])
    assert res.exit_code == 0, res.output
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
        r = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
    assert r.n_labels == 10
    shown = 0
    for c, rc in zip(data.comparison, r.comparisons, strict=True):
        d = rc.difference_anytime
        if d.basis in ("exact", "sure"):
            assert (c.difference.anytime.low, c.difference.anytime.high) == pytest.approx(
                (d.cs_low, d.cs_high), rel=1e-12)
        else:
            # compared at creation: the difference's range is bounded, so its CS before
            # 30 labels is that (finite) range, not a CS the tool claims
            assert np.isfinite(d.cs_low) and c.difference.anytime is None
            shown += 1
    assert shown  # the case that was wrong is here


def test_the_estimate_table_fits_80_columns(session: Path, pool_files: PoolFiles,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(run("estimate", session, "--json", "--compare",
                          f"table:{pool_files.target2}"))
    buf = io.StringIO()
    monkeypatch.setattr(estimate_command, "_out", Console(file=buf, width=80, highlight=False,
                                                          soft_wrap=True, color_system=None))
    run("estimate", session, "--compare", f"table:{pool_files.target2}", "--target-width",
        "0.1")
    text = buf.getvalue()
    assert "…" not in text
    table = text.split("\n¹")[0].split("\n", 1)[1]  # after the (soft-wrapped) first line
    assert all(len(line) <= 80 for line in table.splitlines()), table
    for e in data["metrics"].values():
        a = e["anytime"]
        for low, high in ((a["fixed_low"], a["fixed_high"]), (a["cs_low"], a["cs_high"]),
                          (a["exact_low"], a["exact_high"]),
                          (e["active"]["low"], e["active"]["high"])):
            assert f"[{low:.4f}, {high:.4f}]" in table
    for name in (FIXED, BOOT, CS):  # may wrap inside its cell, never cut
        assert name.split()[0] in table
    _only_named(text)


# ------------------------------------------------------------ figures


def _hand_made(**kw) -> ReportData:
    rows = [(k, (0.9, (0.6, 1.2), (0.7, 1.0), (0.4, 1.0)), (0.85, (0.5, 1.3)))
            for k in (30, 40, 50)]
    base = dict(title="t", task="demo $x^{2$ task", surrogate="s", metrics=["error rate"],
                target="answers:/a/very/long/folder/name/with/$\\frac{1}{$/and/more/"
                       "components/of/a/model/output/file/path/target_answers_final.jsonl",
                history={"error rate": rows}, truth={"error rate": 0.8},
                value_range={"error rate": (0.0, 1.0)})
    return ReportData(**{**base, **kw})


def test_estimates_png_keeps_its_text_inside_and_the_error_rate_within_0_and_1(
        tmp_path: Path) -> None:
    data = _hand_made()
    fig = plots.estimates_figure(data)
    texts_inside(fig)
    (ax,) = fig.axes
    low, high = ax.get_ylim()
    assert 0.0 <= low < high <= 1.0
    write_report(data, tmp_path / "r")  # mathtext in the names: no parse error
    assert (tmp_path / "r" / "estimates.png").stat().st_size > 0


def test_report_of_a_session_whose_target_path_holds_dollars(session: Path,
                                                             pool_files: PoolFiles,
                                                             tmp_path: Path) -> None:
    odd = tmp_path / "models $\\frac{1}{$" / "target $x^$.csv"
    odd.parent.mkdir()
    shutil.copy(pool_files.target, odd)
    db = tmp_path / "odd.db"
    run("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{odd}", "--id-column", "id",
        "--metric", "error_rate", "--acquisition", "ce", "--seed", "1", "--no-progress")
    run("select", db, "--n", "12")
    with Session.open(db) as s:
        s.label_from_data()
        data = s.report_data(progress=False)
    assert data.value_range["error rate"] == (0.0, 1.0)
    run("report", db, "--out", tmp_path / "rep")
    fig = plots.estimates_figure(data)
    texts_inside(fig)
    assert 0.0 <= fig.axes[0].get_ylim()[0] < fig.axes[0].get_ylim()[1] <= 1.0


# ------------------------------------------------------------ hostile text


HOSTILE = ("\x1b[31mred\x1b[0m \x9b2J bell\x07 \u202egnp.exe &#x202e; &#27; "
           "mail mallory@evil.example now, www.evil.example/x and $\\frac{1}{$ [a](b)")


def test_hostile_item_text_is_inert_in_markdown_and_html(tmp_path: Path) -> None:
    data = _hand_made(title=HOSTILE, flagged=[{"item_id": "x\u202ey", "text": HOSTILE,
                                               "label": "pos\x1b", "target_nll": 6.0,
                                               "surrogate_nll": 6.0, "shift": 0.0}])
    write_report(data, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    for doc in (md, page):
        assert not UNSAFE.search(doc)
        assert REPLACEMENT in doc
    assert "`mallory@evil.example`" in md  # a code span: no mailto link
    assert "`www.evil.example/x`" in md
    assert "\\&\\#x202e;" in md and "\\&\\#27;" in md  # no character reference
    assert "\\$\\\\frac{1}{\\$" in md  # no math
    assert "\\](b)" in md
    assert "&amp;#x202e;" in page


def test_markdown_escapes_only_where_a_character_can_act(tmp_path: Path) -> None:
    """QA: report.md read "[0.225, 0.3\\]:", "q\\_m", "\\~100", "samples\\_\\*.jsonl" and a
    session path with "\\_" between words: escapes no renderer needed, seen by whoever
    reads the raw file. Each is now escaped only where it can act, so the raw line reads
    as the rendered one, and hostile text stays inert (a Markdown parser finds no link,
    reference definition, emphasis, strike-through, bullet or rule). QA: a line starting
    "1. ", "- " or "+ " (an item id, a file name) became a list: its marker is escaped at
    the line's start only, never inside a line."""
    markdown_it = pytest.importorskip("markdown_it")
    plain = ["q_m per step, at /tmp/test_a_b0/out.db, below ~100 labels, Q&A",
             "Pool: 60 items of samples_*.jsonl",
             "† error rate: 0.2222 outside the bounds that hold surely, [0.225, 0.3]: "
             "unbiased, not moved; see the note",
             "items 1. and 2. - both - were + fine, 3) too", "1.5 labels per item", "-x.csv"]
    hostile = ["[evil]: https://evil.example/x", "_em_ and __strong__ and ~~gone~~ or ~s~",
               "[a](b) ![i](j) [c][evil] &amp; &#x202e; *e*", "* a bullet", "___",
               "1. intro.txt", "2) an item", "- draft.csv", "+ plus", "---", "- - -", "-"]
    data = _hand_made(title="t", notes=plain + hostile)
    write_report(data, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    for line in plain:  # as written: no backslash
        assert f"\n{line}\n" in md, md
    assert "\\]" not in md.split("[evil")[0], md
    parser = markdown_it.MarkdownIt("gfm-like", {"linkify": False})
    env: dict = {}
    rendered = parser.render(md, env).split("<h2>Notes</h2>")[1]
    assert not env.get("references"), env  # no reference definition formed
    for line in plain:
        assert f"<p>{line.replace('&', '&amp;')}</p>" in rendered, rendered
    for tag in ("<a ", "<img src=\"j", "<em>", "<strong>", "<s>", "<del>", "<li>", "<hr"):
        assert tag not in rendered, (tag, rendered)
    assert "&amp;amp;" in rendered and "&amp;#x202e;" in rendered  # no character reference
    assert "<p>[evil]: <code>https://evil.example/x</code></p>" in rendered, rendered
    for line, shown in (("1\\. intro.txt", "1. intro.txt"), ("2\\) an item", "2) an item"),
                        ("\\- draft.csv", "- draft.csv"), ("\\+ plus", "+ plus"),
                        ("\\---", "---"), ("\\- - -", "- - -"), ("\\-", "-")):
        assert f"\n{line}\n" in md, (line, md)  # the marker alone escaped
        assert f"<p>{shown}</p>" in rendered, (shown, rendered)
    for tag in ("<ol", "<ul"):
        assert tag not in rendered, (tag, rendered)


@pytest.mark.parametrize(("acquisition", "name"), [("adaptive", "adaptive LURE"),
                                                   ("ce", "LURE")])
def test_status_and_estimate_name_the_estimator(pool_files: PoolFiles, tmp_path: Path,
                                                acquisition: str, name: str) -> None:
    """The adaptive design's estimate is adaptive LURE (learnt controls), the paper's LURE."""
    db = tmp_path / "s.db"
    run("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--metric", "log_loss", "--acquisition", acquisition,
        "--seed", "4", "--no-progress")
    run("select", db, "--n", "30")
    with Session.open(db) as s:
        s.label_from_data()
    est = run("estimate", db, "--no-progress")
    assert f" {name} estimate " in f" {' '.join(est.split())} "
    status = " ".join(run("status", db).split())
    assert f"log_loss {name} " in status
    if name == "LURE":
        assert "adaptive LURE" not in est + status


def test_the_json_estimate_names_each_estimator(session: Path, pool_files: PoolFiles,
                                                tmp_path: Path) -> None:
    """`estimate --json` says what estimated each number, as the text and `status --json`
    do (QA: "active" was named by its interval only): LURE here (CE), the plain mean,
    control-variate LURE, the compared target's LURE and the paired difference; an
    adaptive design's headline is adaptive LURE."""
    spec = f"table:{pool_files.target2}"
    got = json.loads(run("estimate", session, "--json", "--compare", spec))
    for m in got["metrics"].values():
        assert m["active"]["estimator"] == m["curve_estimator"] == "LURE"
        assert m["uniform"]["estimator"] == "plain mean"
        assert m["cv"]["estimator"] == "control-variate LURE"
    assert {(c["other"]["estimator"], c["difference"]["estimator"])
            for c in got["comparisons"]} == {("LURE", "paired LURE difference")}
    db = tmp_path / "adaptive.db"
    run("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--metric", "error_rate", "--seed", 0, "--no-progress")
    run("select", db, "--n", 5)
    with Session.open(db) as s:
        s.label_from_data()
    got = json.loads(run("estimate", db, "--json"))
    assert got["metrics"]["error_rate"]["active"]["estimator"] == "adaptive LURE"


def test_str_of_an_estimate_names_the_estimator_and_every_interval(
        session: Path, pool_files: PoolFiles) -> None:
    """``print(report)`` in Python: the estimator and each interval by what it guarantees,
    the paired difference, the notes; numbers as the records hold them (QA: the dataclass
    dump, curves and all, named no estimator)."""
    spec = f"table:{pool_files.target2}"
    with Session.open(session) as s:
        r = s.estimate(record=False, progress=False, compare=[spec])
    text = str(r)
    assert text == r.summary() and text.startswith(f"{r.n_labels} label(s) used of 60")
    for m in r.metrics.values():
        a = m.anytime
        assert (f"{m.metric}: LURE {m.active.estimate:.4f}; fixed-budget 95% interval "
                f"[{a.fixed_low:.4f}, {a.fixed_high:.4f}]") in text
        assert f"bootstrap 95% interval [{m.active.low:.4f}, {m.active.high:.4f}]" in text
    for c in r.comparisons:
        assert (f"target - table:target2.csv: paired LURE difference "  # (by its name)
                f"{c.difference.estimate:.4f}") in text
    assert "anytime 95% confidence sequence [" in text and repr(r).startswith("EstimateReport(")


def test_a_notebook_shows_an_estimate_as_a_table_of_named_intervals(
        session: Path, pool_files: PoolFiles) -> None:
    """Jupyter shows ``_repr_html_``: one row per estimate (the target's, the compared
    model's, the paired difference), one column per interval headed by what it
    guarantees, the same numbers as ``str(report)``, the notes below, text escaped."""
    from html.parser import HTMLParser

    spec = f"table:{pool_files.target2}"
    with Session.open(session) as s:
        r = s.estimate(record=False, progress=False, compare=[spec])
    r.warnings.append("a <b>note</b> & more")  # escaped, not markup

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[list[str]] = []
            self.items: list[str] = []
            self.tag = ""

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.tag = tag
            if tag == "tr":
                self.rows.append([])
            if tag in ("td", "th"):
                self.rows[-1].append("")
            if tag == "li":
                self.items.append("")

        def handle_data(self, data: str) -> None:
            if self.tag in ("td", "th", "small") and self.rows and self.rows[-1]:
                self.rows[-1][-1] += data
            elif self.tag == "li":
                self.items[-1] += data

    p = Cells()
    p.feed(r._repr_html_())
    head, *body = p.rows
    assert head[:4] == ["metric", "of", "estimator", "estimate"]
    assert "fixed-budget 95% interval" in head and "bootstrap 95% interval" in head
    assert "anytime 95% confidence sequence" in head
    rows = r.summary_rows()
    assert len(body) == len(rows) == len(r.metrics) + 2 * len(r.comparisons)
    for cells, row in zip(body, rows, strict=True):
        assert cells[:3] == [row.metric, row.of, row.estimator]
        assert cells[3].startswith(f"{row.estimate:.4f}")
        for name, value in row.intervals:
            assert cells[head.index(name)] == value
            assert f"{name} {value}" in str(r)  # the same numbers as the text
    shown = "table:target2.csv"  # (a new session: by its name)
    assert {c[1] for c in body} == {"target", shown, f"target - {shown}"}
    assert p.items[-1] == "a <b>note</b> & more" and "<b>note</b>" not in r._repr_html_()


def test_a_difference_that_rounds_to_zero_reads_0_0000() -> None:
    """QA: a paired difference of -1e-17 (two targets' equal losses, summed in another
    order) read "-0.0000" in ``print(report)``; values that round to zero read 0.0000,
    others keep their sign."""
    from activetest.session.records import _fixed4

    assert [_fixed4(x) for x in (-1e-17, -0.00004, 0.0, -0.00006, 0.25)] == [
        "0.0000", "0.0000", "0.0000", "-0.0001", "0.2500"]
