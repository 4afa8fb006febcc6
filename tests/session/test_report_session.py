"""The report of real (``table:``) sessions against ``estimate`` of the same session: the
same intervals under the same names (QA of ``activetest report``)."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from session_support import PoolFiles, labelled_table_session, run_cli

from activetest.session.report.render import DIFFERENCES_PNG, _interval
from activetest.session.workflow import Session


def test_one_label_has_no_fixed_budget_interval_as_estimate_has_none(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: with one label `estimate` shows no fixed-budget interval (no spread to estimate
    yet), while the report showed the clipped range [0, bound] under that name, with its
    width, and drew it as the headline band."""
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=1)
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
        md = s.write_report(tmp_path / "rep", progress=False).read_text(encoding="utf-8")
    assert all(m.anytime is None for m in r.metrics.values())
    for metric, rows in data.history.items():
        assert [row.n_labels for row in rows] == [1]
        assert rows[-1].active.fixed is None, (metric, rows[-1].active.fixed)
        assert f"| {metric} | 1 | {rows[-1].active.value:.4g} | — | — | — |" in md
    # one label, not "1 labels"
    assert "Only 1 label: bootstrap" in md and "with 1 label (unbiased too" in md


def test_the_exact_cs_is_shown_as_estimate_shows_it_and_named_where_it_stands_in(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: `estimate` shows the exact anytime CS (the one interval valid at any count
    without asymptotics) for both metrics; the report left it out, while its footnote
    pointed at it ("the exact one not"). And where the labels show too few errors, the
    cells named fixed-budget and anytime held the exact CS with only a note saying so."""
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=4)
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
        data = s.report_data(progress=False)
        md = s.write_report(tmp_path / "rep", progress=False).read_text(encoding="utf-8")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "| exact anytime 95% confidence sequence |" in md
    assert "<th>exact anytime 95% confidence sequence</th>" in html
    for metric, m in r.metrics.items():
        name = {"log_loss": "log loss", "error_rate": "error rate"}[metric]
        a = m.anytime
        assert a is not None and a.exact_low is not None
        last = data.history[name][-1].active
        assert last.exact is not None
        assert (last.exact.low, last.exact.high) == (a.exact_low, a.exact_high)
        row = next(line for line in md.splitlines() if line.startswith(f"| {name} | 4 |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[6] == _interval(last.exact)
        exact_here = a.basis == "exact"
        assert cells[3].endswith("(exact anytime CS)") == exact_here
        assert ("(exact anytime CS)" in cells[5]) == (exact_here and last.anytime is not None)
    assert r.metrics["error_rate"].anytime.basis == "exact"  # 4 labels: fewer than 5 errors
    assert "Cells marked (exact anytime CS): for error rate" in md


def test_a_full_disk_names_the_report_file_and_keeps_the_old_one_whole(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: `report --out` onto a full file system said "cannot write the output: no space
    left where it goes (standard output redirected to a full disk?)": the error from
    writing a figure carried no file name. It now names the file, and an earlier report's
    files there stay whole (each is written beside its place and renamed over it)."""
    from session_support import run_cli_process, tmpfs

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=40)
    with tmpfs(64) as mnt:  # room for the filler and report.md, not for a figure
        (mnt / "filler").write_bytes(b"\0" * 40_000)
        old = b"# an earlier report\n" * 10
        (mnt / "report.md").write_bytes(old)
        out = run_cli_process("report", db, "--out", mnt, "--no-progress", code=2)
        assert "standard output" not in out
        assert f"{mnt}/" in out and "no space left on the disk" in out, out
        assert (mnt / "report.md").read_bytes() == old
        assert not [p.name for p in mnt.iterdir() if p.name.endswith(".tmp")]


def test_at_a_census_the_plain_mean_is_named_the_pools_value_not_biased(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: with every pool item labelled the plain mean of the labels IS the pool's exact
    value, but `estimate`, `status` and the report called it "uniform-equivalent
    (biased)"."""
    from session_support import run_cli_process

    from activetest.session.interval_names import CENSUS_MARK
    from activetest.session.report.plots import estimates_figure

    plain = "uniform-equivalent" + CENSUS_MARK
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=len(pool_files.ids))
    out = run_cli_process("estimate", db)
    assert plain in out and "uniform-equivalent (biased)" not in out, out
    out = run_cli_process("status", db)
    assert plain in out and "uniform-equivalent (biased)" not in out, out
    with Session.open(db) as s:
        data = s.report_data(progress=False)
        md = s.write_report(tmp_path / "rep", progress=False).read_text(encoding="utf-8")
    assert f"| {plain} |" in md and "(biased)" not in md
    assert "so it is the pool's exact value" in md
    # the figure's line is biased at the earlier counts and the pool's value at the last
    legend = [t.get_text() for t in estimates_figure(data).legends[0].get_texts()]
    assert "uniform-equivalent (biased; every item labelled: the pool's value)" in legend
    # one label short of the census: biased (drawn actively), as before
    db = labelled_table_session(pool_files, tmp_path / "t.db", seed=0,
                                n=len(pool_files.ids) - 1)
    out = run_cli_process("estimate", db)
    assert "uniform-equivalent (biased)" in out and CENSUS_MARK not in out


def test_a_compared_target_is_shown_with_the_intervals_estimate_shows(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: for a session with `--compare`, `estimate` shows the second target's
    fixed-budget interval, anytime CS and bootstrap interval, and the difference's; the
    report showed the second target's fixed-budget interval only. Each now has a row,
    its intervals named as `estimate` names them."""
    from session_support import run_cli_process

    from activetest.session.interval_names import (
        ANYTIME,
        BOOTSTRAP,
        FIXED_BUDGET,
        interval_name,
    )
    from activetest.session.report.render import _num

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=40)
    other = f"table:{pool_files.target2}"
    text = run_cli_process("estimate", db, "--compare", other)
    with Session.open(db) as s:
        r = s.estimate(compare=[other], record=False, progress=False)
    run_cli_process("report", db, "--out", tmp_path / "rep", "--compare", other,
                    "--no-progress")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8").replace("\\_", "_")
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    names = [interval_name(k) for k in (FIXED_BUDGET, ANYTIME, BOOTSTRAP)]
    assert (f"| LURE estimate (paired, same labels) | {names[0]} | {names[1]} | {names[2]} "
            f"| labels | verdict |") in md
    assert all(f"<th>{n}</th>" in html for n in names)
    assert len(r.comparisons) == 2
    for c in r.comparisons:
        name = {"log_loss": "log loss", "error_rate": "error rate"}[c.metric]
        assert c.spec == "table:target2.csv"  # (by name: the session file is shared)
        for what, boot, a in ((f"second target {c.spec}", c.other, c.other_anytime),
                              ("difference table:", c.difference, c.difference_anytime)):
            assert a is not None
            cells = [f"[{_num(a.fixed_low)}, {_num(a.fixed_high)}]",
                     f"[{_num(a.cs_low)}, {_num(a.cs_high)}]",
                     f"[{_num(boot.low)}, {_num(boot.high)}]"]
            row = next(line for line in md.splitlines()
                       if line.startswith(f"| {name} | {what}")
                       and f"| {_num(boot.estimate)} |" in line)
            assert f"| {_num(boot.estimate)} | {' | '.join(cells)} | 40 |" in row, row
            # estimate shows the same three intervals (4 decimals there)
            for kind, (low, high) in zip(names, ((a.fixed_low, a.fixed_high),
                                                 (a.cs_low, a.cs_high),
                                                 (boot.low, boot.high)), strict=True):
                assert f"{kind} [{low:.4f}, {high:.4f}]" in text


def test_estimates_at_the_edge_of_the_metrics_range_keep_whole_markers(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: the estimates' y axis stops at the values a metric can take; with no error among
    the first labels the error rate's estimate (and the plain mean) sat on the axis' 0 and
    each marker was cut in half by it. Every marker is now drawn whole."""
    from matplotlib.lines import Line2D

    from activetest.session.report.plots import estimates_figure

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=4)
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    assert [r.active.value for r in data.history["error rate"]] == [0.0, 0.0, 0.0]
    fig = estimates_figure(data)
    renderer = fig.canvas.get_renderer()
    checked = 0
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        assert ax.get_ylim()[0] == 0.0 or ax.get_title() != "error rate"
        for line in ax.get_lines():
            if line.get_marker() in (None, "None", "", " ") or not isinstance(line, Line2D):
                continue
            r = line.get_markersize() * fig.dpi / 72 / 2  # marker radius in pixels
            for px, py in ax.transData.transform(line.get_xydata()):
                checked += 1
                inside = (box.x0 + r <= px <= box.x1 - r) and (box.y0 + r <= py <= box.y1 - r)
                # a clipped marker beyond the axes' edge is drawn in part only
                assert inside or not line.get_clip_on(), (ax.get_title(), line.get_label(),
                                                          (px, py), box)
                assert fig.bbox.x0 <= px - r and px + r <= fig.bbox.x1
                assert fig.bbox.y0 <= py - r and py + r <= fig.bbox.y1
    assert checked >= 12  # two metrics, estimate and plain mean, three counts


def test_the_log_loss_axis_states_its_unit(pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: the estimates' log-loss panel's axis read "log loss", its unit left to guess."""
    from activetest.session.report.plots import estimates_figure

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=4)
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    labels = {ax.get_title(): ax.get_ylabel() for ax in estimates_figure(data).axes}
    assert labels == {"log loss": "log loss (nats)", "error rate": "error rate"}


def test_the_scores_panel_says_what_the_acquisition_score_is(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: Any) -> None:
    """QA: the acquisition figure's scores axis read "acquisition score (ce)" (or
    "(compare)" under scores of 0 and 1), leaving what the score is to guess; it now says
    it on a second line, inside the figure."""
    from activetest.session.report import plots

    figures: list[Any] = []
    save = plots._save

    def keep(fig: Any, path: Any) -> Path:
        figures.append(fig)
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=20)
    with Session.open(db) as s:
        s.write_report(tmp_path / "rep", progress=False)
    acquisition = figures[-1]
    acquisition.canvas.draw()
    label = acquisition.axes[0].xaxis.label
    assert label.get_text() == ("acquisition score (ce)\nthe target's expected loss under "
                                "the surrogate")
    box, fig = label.get_window_extent(acquisition.canvas.get_renderer()), acquisition.bbox
    assert fig.x0 <= box.x0 and box.x1 <= fig.x1 and fig.y0 <= box.y0


def test_a_uniform_sessions_acquisition_figure_names_no_surrogate(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: Any) -> None:
    """QA: the acquisition figure of a uniform-sampling session was titled "acquisition:
    surrogate table:…/surrogate.csv", as if the surrogate chose the draws."""
    from session_support import run_cli_process

    from activetest.session.report import plots

    titles: list[str] = []
    save = plots._save

    def keep(fig: Any, path: Any) -> Path:
        titles.append(fig.get_suptitle())
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    db = tmp_path / "u.db"
    run_cli_process("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
                    f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
                    "--id-column", "id", "--acquisition", "uniform", "--seed", "0",
                    "--no-progress")
    with Session.open(db) as s:
        s.select(12)
        s.label_from_data()
        s.write_report(tmp_path / "rep", progress=False)
    assert titles[-1] == "acquisition: uniform sampling (no model chooses the draws)"
    assert "surrogate" not in titles[-1]


def test_a_graded_report_of_the_pool_files_answers_says_so(tmp_path: Path) -> None:
    """QA: the report of a graded session judging the pool file's own answers (--target
    pool) was titled "Active testing: pool on squad", as if a model named "pool" were
    evaluated; it now names the pool file's answers, in the page and the figure."""
    from session_support import run_cli_process, write_squad_pool

    from activetest.session.report.plots import estimates_figure

    pool = write_squad_pool(tmp_path / "pool.jsonl", n=12)
    db = tmp_path / "g.db"
    run_cli_process("init", db, "--pool", pool, "--task", "squad", "--target", "pool",
                    "--surrogate", "column:conf", "--seed", "1", "--no-progress")
    run_cli_process("label", db, "--n", "6", "--from-data", "--no-progress")
    run_cli_process("report", db, "--out", tmp_path / "rep", "--no-progress")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    name = "the pool file's answers (--target pool)"
    assert md.startswith(f"# Active testing: {name} on squad\n"), md[:200]
    assert f"- Target: {name}\n" in md
    with Session.open(db) as s:
        data = s.report_data(progress=False)
    assert estimates_figure(data).get_suptitle() == f"{name} on squad: estimate vs labels"


def _pe_session(pool_files: PoolFiles, db: Path, n: int = 40) -> Any:
    """A PE session (both metrics, ``table:`` models) with ``n`` items labelled; its
    report data."""
    with Session.create(db, pool=pool_files.pool, task="demo",
                        surrogate=f"table:{pool_files.surrogate}",
                        target=f"table:{pool_files.target}", seed=0, progress=False,
                        metric="both", acquisition="pe",
                        pool_options={"id_column": "id"}) as s:
        s.select(n)
        s.label_from_data()
        return s.report_data(progress=False)


def test_the_log_loss_axis_is_not_set_by_the_first_labels_huge_interval(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: in a PE session the fixed-budget interval after 2 labels reached 14 nats and
    set the log-loss axis, so the curve (0.75 to 2.3) was a flat line along its foot. The
    axis now spans the estimates and the intervals after the first labels; the
    intervals beyond it are marked at its edge and named with how far they reach."""
    import numpy as np

    from activetest.session.report.plots import estimates_figure

    data = _pe_session(pool_files, tmp_path / "s.db")
    rows = data.history["log loss"]
    values = np.array([r.active.value for r in rows])
    highest = max(r.active.fixed.high for r in rows if r.active.fixed is not None)
    assert highest > 5 * values.max()  # the real numbers: one huge early interval
    fig = estimates_figure(data)
    ax = next(a for a in fig.axes if a.get_title() == "log loss")
    low, high = ax.get_ylim()
    assert high < highest
    # the curve fills a readable share of the axis (it was a tenth)
    assert (values.max() - values.min()) / (high - low) > 0.4, (low, high, values)
    assert low <= values.min() and values.max() <= high
    plain = np.array([r.uniform.value for r in rows if r.uniform is not None])
    assert plain.size and low <= plain.min() and plain.max() <= high  # the mean's line too
    # what is cut off is marked where it leaves, and named with its reach
    marks = [line for line in ax.get_lines() if line.get_marker() == "^"]
    assert len(marks) == 1
    assert marks[0].get_label() == f"interval beyond the axis (cut off; reaches {highest:.3g})"
    cut = [r.n_labels for r in rows if max(
        iv.high for iv in (r.active.fixed, r.active.anytime, r.uniform.bootstrap)
        if iv is not None) > high]
    assert list(marks[0].get_xdata()) == cut and cut and min(cut) == rows[0].n_labels
    labels = fig.legends[0].get_texts()
    assert marks[0].get_label() in [t.get_text() for t in labels]
    assert min(t.get_fontsize() for t in labels) >= 8
    # a bounded metric's axis is as it was: the error rate keeps its range
    er = next(a for a in fig.axes if a.get_title() == "error rate")
    assert not [line for line in er.get_lines() if line.get_marker() == "^"]


def test_a_compared_session_draws_the_difference_over_labels_as_estimate_has_it(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a session with `--compare` had a table of the paired difference but no figure
    of it over labels (estimates.png shows the target's own risk). The report now draws
    R_A - R_B by LURE with its fixed-budget interval and anytime CS at each label count,
    from the labels prefix by prefix; its last point is `estimate --compare`'s, and the
    figure is written and named in the report's text (real files, real CLI)."""
    from session_support import run_cli_process

    from activetest.session.report.plots import differences_figure

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=40)
    other = f"table:{pool_files.target2}"
    with Session.open(db) as s:
        r = s.estimate(compare=[other], record=False, progress=False)
        data = s.report_data(compare=[other], progress=False)
    stored = "table:target2.csv"  # a compared table is named by its file (spec_files)
    assert [(c.metric, c.target_b) for c in data.differences] == [
        ("log loss", stored), ("error rate", stored)]
    for curve, c in zip(data.differences, r.comparisons, strict=True):
        last = curve.rows[-1]
        a = c.difference_anytime
        assert a is not None and last.n_labels == 40
        assert abs(last.active.value - c.difference.estimate) <= 1e-12
        assert abs(last.active.bootstrap.low - c.difference.low) <= 1e-12
        assert abs(last.active.bootstrap.high - c.difference.high) <= 1e-12
        assert last.active.fixed is not None and last.active.anytime is not None
        assert abs(last.active.fixed.low - a.fixed_low) <= 1e-12
        assert abs(last.active.fixed.high - a.fixed_high) <= 1e-12
        assert abs(last.active.anytime.low - a.cs_low) <= 1e-12
        assert abs(last.active.anytime.high - a.cs_high) <= 1e-12
        # the first point: the first two labels' paired difference
        assert curve.rows[0].n_labels == 2
    # the curves' own at the last count: the blind spot's widening (the error rate's)
    # and the few-errors rule applied prefix by prefix, as the estimate applies them
    assert [c.last_as_estimate for c in data.differences] == [None, None]
    assert {r.active.basis for r in data.differences[1].rows} == {"exact", "clt"}
    fig = differences_figure(data)
    title = fig.texts[0].get_text().replace("\n", " ")
    assert "R_A − R_B by LURE" in title and "pool.csv" in title and "95% level" in title
    assert "table:target.csv" in title and stored in title
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "zero: no difference" in texts and "LURE estimate of the difference" in texts
    assert min(t.get_fontsize() for t in fig.legends[0].get_texts()) >= 8
    run_cli_process("report", db, "--out", tmp_path / "rep", "--compare", other,
                    "--no-progress")
    png = tmp_path / "rep" / DIFFERENCES_PNG
    assert png.stat().st_size > 1000
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8").replace("\\_", "_")
    assert f"]({DIFFERENCES_PNG})" in md and "paired difference R_A − R_B" in md
    assert "the last count's intervals are" not in md  # the curves' own, every count
    # a report without a comparison has none (and a stale one is removed)
    run_cli_process("report", db, "--out", tmp_path / "rep", "--no-progress")
    assert not png.exists()
    assert DIFFERENCES_PNG not in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")


def _report_md_with_files_named(pool_files: PoolFiles, tmp_path: Path,
                                names: dict[str, str]) -> str:
    """report.md of a session whose pool, target and compared target (``names``: role ->
    file name, roles ``pool``, ``target``, ``other``) are copies of the demo files under
    those names (20 draws labelled from the data, the CE design, seed 0)."""
    odd = tmp_path / "odd"
    odd.mkdir()
    for src, role in ((pool_files.pool, "pool"), (pool_files.target, "target"),
                      (pool_files.target2, "other")):
        shutil.copy(src, odd / names[role])
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", odd / names["pool"], "--task", "demo", "--surrogate",
            f"table:{pool_files.surrogate}", "--target", f"table:{odd / names['target']}",
            "--id-column", "id", "--metric", "error_rate", "--acquisition", "ce",
            "--seed", 0, "--no-progress")
    run_cli("select", db, "--n", 20)
    with Session.open(db) as s:
        s.label_from_data()
    run_cli("report", db, "--out", tmp_path / "rep", "--no-progress", "--compare",
            f"table:{odd / names['other']}")
    return (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")


def test_backticks_and_brackets_in_names_survive_report_md(pool_files: PoolFiles,
                                                           tmp_path: Path) -> None:
    """QA: a name shown as code (a file name read as a URL: "www.ta``r]get`.csv") had its
    backticks turned into "'"; a "]" in an image's alt text (a compared model's name)
    ended the alt there and left the differences figure as text. Parsed by markdown-it,
    the names survive whole: as the code spans' text, the alt text of each image."""
    markdown_it = pytest.importorskip("markdown_it")
    names = {"pool": "www.po`ol].csv", "target": "www.ta``r]get`.csv",
             "other": "tar]get2.csv"}
    md = _report_md_with_files_named(pool_files, tmp_path, names)

    class Page(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.code: list[str] = []
            self.alt: dict[str, str] = {}
            self.in_code = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.in_code = tag == "code"
            if tag == "img":
                a = dict(attrs)
                self.alt[str(a["src"])] = str(a["alt"])
            if tag == "code":
                self.code.append("")

        def handle_endtag(self, tag: str) -> None:
            self.in_code = False if tag == "code" else self.in_code

        def handle_data(self, data: str) -> None:
            if self.in_code:
                self.code[-1] += data

    page = Page()
    page.feed(markdown_it.MarkdownIt("gfm-like", {"linkify": False}).render(md))
    assert names["pool"] in page.code and names["target"] in page.code, (page.code, md)
    assert set(page.alt) == {"estimates.png", "acquisition.png", DIFFERENCES_PNG}, md
    alt = page.alt[DIFFERENCES_PNG]
    assert f"A = table:{names['target']}" in alt and f"B = table:{names['other']})" in alt


def test_punctuation_after_a_url_like_name_stays_outside_its_code_span(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a name read as a URL ("www.target.csv") took the punctuation after it into its
    code span: "(A = table:`www.target.csv,` B = table:`www.other.csv)`" in report.md,
    and the possessive the sentence puts after it too: "for table:`www.other.csv's`
    error rate" (the file read as one named "www.other.csv's"). Parsed by markdown-it,
    every code span is a name whole, no comma, bracket or "'s" in it, and the sentence's
    punctuation and possessive are text after it, reading as the sentence did."""
    markdown_it = pytest.importorskip("markdown_it")
    md = _report_md_with_files_named(pool_files, tmp_path, {
        "pool": "www.pool.csv", "target": "www.target.csv", "other": "www.other.csv"})
    code: list[str] = []
    alts: list[str] = []
    said: list[str] = []  # each paragraph's rendered text, code spans' text in it

    def walk(tokens: list[Any]) -> None:
        for t in tokens:
            if t.type == "code_inline":
                code.append(t.content)
            if t.type == "image":
                alts.append("".join(c.content for c in t.children or []))
            if t.type == "inline":
                said.append("".join(c.content for c in t.children or []))
            walk(t.children or [])

    walk(markdown_it.MarkdownIt("gfm-like", {"linkify": False}).parse(md))
    names = {"www.pool.csv", "www.target.csv", "www.other.csv"}
    assert {"www.target.csv", "www.other.csv"} <= set(code), (code, md)
    assert not [c for c in code if c.startswith("www.") and c not in names], (code, md)
    # the exact-interval stand-in's note names the compared target's error rate
    assert [s for s in said if "table:www.other.csv's error rate" in s], (said, md)
    assert "table:`www.other.csv`'s error rate" in md, md
    alt = next(a for a in alts if "R_A − R_B" in a)
    assert "(A = table:www.target.csv, B = table:www.other.csv)" in alt, alt
