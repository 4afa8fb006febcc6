"""The session report: Markdown, HTML and PNG figures from a simulated session."""

from __future__ import annotations

import base64
import dataclasses
import functools
import itertools
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from activetest.session.report import (
    Comparison,
    Estimate,
    FlaggedItem,
    HistoryRow,
    Interval,
    LabelsNeeded,
    ReportData,
    plots,
    write_report,
)
from activetest.stats import (
    adaptive_lure_theta,
    asymptotic_cs,
    bootstrap,
    fixed_interval_curve,
    lure_terms,
    sample,
)

N = 2000


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


@functools.cache
def _session(metrics: tuple[str, ...], budget: int = 150, seed: int = 0) -> dict:
    """A simulated active-testing session, built with the real statistics code."""
    rng = np.random.default_rng(seed)
    scores = rng.gamma(0.6, 1.0, size=N) + 1e-3
    losses = {m: np.clip(scores * rng.uniform(0.5, 1.5, size=N) * (1 + k), 0, None)
              for k, m in enumerate(metrics)}
    idx, q = sample(scores, budget, random_state=seed)
    idx, q = idx[0], q[0]
    uidx = rng.permutation(N)[:budget]
    history = {}
    for m in metrics:
        rows = []
        theta = adaptive_lure_theta(losses[m][idx], q, N)
        fixed = fixed_interval_curve(theta, N)
        cs = asymptotic_cs(theta, N)
        for k in range(10, budget + 1, 10):
            a = bootstrap(lure_terms(losses[m][idx[:k]], q[:k], N), random_state=k)
            u = bootstrap(losses[m][uidx[:k]], random_state=k)
            started = bool(np.isfinite(cs.low[k - 1]))
            rows.append(HistoryRow(
                k, Estimate(a.estimate, Interval(a.low, a.high),
                            Interval(float(fixed.low[k - 1]), float(fixed.high[k - 1])),
                            Interval(float(cs.low[k - 1]), float(cs.high[k - 1]))
                            if started else None),
                Estimate(u.estimate, Interval(u.low, u.high))))
        history[m] = rows
    truth = {m: float(losses[m].mean()) for m in metrics}
    return {"scores": scores, "acquired_idx": idx, "acquired_q": q, "history": history,
            "truth": truth}


def _data(metrics: tuple[str, ...] = ("log loss",), *, truth: bool = True, flagged: bool = True,
          comparison: bool = True, **kw) -> ReportData:
    s = _session(metrics)
    return ReportData(
        title="SST-2 | round 3", task="sst2", target="gemma3-270m", surrogate="smollm2-135m",
        metrics=list(metrics), history=s["history"], scores=s["scores"],
        acquired_idx=s["acquired_idx"], acquired_q=s["acquired_q"],
        truth=s["truth"] if truth else None,
        flagged=[{"item_id": "sst2_017|x", "text": "a *gorgeous*,\nwitty movie " + "x" * 200,
                  "label": "negative", "target_nll": 7.25, "surrogate_nll": 5.5,
                  "shift": -0.0123},
                 FlaggedItem("sst2-42", "plain", "positive", 5.125, None, 0.004)]
        if flagged else [],
        comparison=Comparison(metrics[0], "gemma3-270m", "smollm2-135m",
                              Estimate(-0.125, Interval(-0.25, -0.0625), Interval(-0.2, -0.05),
                                       Interval(-0.3, 0.02)), 150,
                              Estimate(0.75, Interval(0.65, 0.85), Interval(0.7, 0.8)))
        if comparison else None,
        **{"acquisition": "ce", "labels_needed": [LabelsNeeded(metrics[0], 0.05, 812, 1430, 640)],
           "info": {"seed": 0, "alpha": 0.1}, **kw})


@pytest.mark.parametrize("metrics", [("log loss",), ("log loss", "error rate")])
@pytest.mark.parametrize("extras", [True, False])
def test_report_files(tmp_path: Path, metrics: tuple[str, ...], extras: bool) -> None:
    data = _data(metrics, truth=extras, flagged=extras, comparison=extras)
    md_path = write_report(data, tmp_path / "out")
    out = tmp_path / "out"
    assert md_path == out / "report.md"
    assert _png_size(out / "estimates.png") == plots.ESTIMATES_SIZE
    assert _png_size(out / "acquisition.png") == plots.ACQUISITION_SIZE
    img = imread(out / "estimates.png")
    assert img.shape[:2] == (plots.ESTIMATES_SIZE[1], plots.ESTIMATES_SIZE[0])
    assert img.std() > 0.05  # something is drawn

    md = md_path.read_text(encoding="utf-8")
    assert md.startswith("# SST-2 \\| round 3\n")
    assert "![LURE estimate" in md and "(estimates.png)" in md and "(acquisition.png)" in md
    assert ("| metric | labels | LURE estimate | fixed-budget 95% interval | fixed-budget 95% "
            "interval: width | anytime 95% confidence sequence | bootstrap 95% interval | "
            "uniform-equivalent (biased) | uniform-equivalent: bootstrap 95% interval |") in md
    for m in metrics:
        last = data.history[m][-1]
        assert last.n_labels == 150
        row = next(line for line in md.splitlines() if line.startswith(f"| {m} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        a, u = last.active, last.uniform
        assert cells[:9] == [m, "150", f"{a.value:.4g}",
                             f"[{a.fixed.low:.4g}, {a.fixed.high:.4g}]",
                             f"{a.fixed.high - a.fixed.low:.4g}",
                             f"[{a.anytime.low:.4g}, {a.anytime.high:.4g}]",
                             f"[{a.bootstrap.low:.4g}, {a.bootstrap.high:.4g}]",
                             f"{u.value:.4g}",
                             f"[{u.bootstrap.low:.4g}, {u.bootstrap.high:.4g}]"]
        if extras:
            assert cells[9] == f"{data.truth[m]:.4g}"
        else:
            assert len(cells) == 9
    assert ("| truth |" in md) == extras
    assert ("## Comparison of targets" in md) == extras
    assert ("no clear difference" in md) is False
    if extras:
        assert ("| log loss | difference gemma3-270m − smollm2-135m | -0.125 | [-0.2, -0.05] | "
                "[-0.3, 0.02] | [-0.25, -0.0625] | 150 | not decided yet by the anytime 95% "
                "confidence sequence; the fixed-budget 95% interval has gemma3-270m lower, "
                "valid only if the number of labels was fixed in advance |\n"
                "| log loss | second target smollm2-135m | 0.75 | [0.7, 0.8] | — | "
                "[0.65, 0.85] | 150 | — |") in md  # the CS's verdict, as `estimate` gives it (QA)
        assert "| sst2_017\\|x | a \\*gorgeous\\*, witty movie xxx" in md
        assert "| negative | 7.25 | 5.5 | -0.0123 |" in md
        assert "| sst2-42 | plain | positive | 5.125 | — | +0.004 |" in md
        # the alarm's rule, not "a high target loss" (QA: flagged at target NLL 0.0076)
        assert "Items whose given label the target or the surrogate finds very unlikely" in md
    else:
        assert "No items flagged." in md
    assert "| log loss | 0.05 | 640 | 812 | 1430 |" in md
    assert "- seed: 0" in md and "- Pool: 2000 items" in md and "- Labels used: 150" in md
    assert "Warning" not in md  # 150 labels, truth inside the intervals

    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<title>SST-2 | round 3</title>" in page
    assert "estimates.png" not in page  # inlined
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 2
    assert base64.b64decode(images[0]) == (out / "estimates.png").read_bytes()
    assert f"<td>{data.history[metrics[0]][-1].active.value:.4g}</td>" in page
    if extras:
        assert "<td>a *gorgeous*, witty movie" in page


def test_same_data_same_markdown(tmp_path: Path) -> None:
    a = write_report(_data(), tmp_path / "a", html=False).read_text(encoding="utf-8")
    b = write_report(_data(), tmp_path / "b", html=False).read_text(encoding="utf-8")
    assert a == b
    assert not (tmp_path / "a" / "report.html").exists()


def test_minimal_report_before_first_label(tmp_path: Path) -> None:
    data = ReportData(title="new session", task="demo", target="t", surrogate="s",
                      metrics=["accuracy"], history={})
    out = tmp_path / "r"
    (out).mkdir()
    (out / "acquisition.png").write_bytes(b"stale")
    md = write_report(data, out).read_text(encoding="utf-8")
    assert "| accuracy | 0 | — |" in md
    assert "Only 0 labels" in md
    assert not (out / "acquisition.png").exists()
    assert "acquisition.png" not in md
    assert _png_size(out / "estimates.png") == plots.ESTIMATES_SIZE


def test_warnings_and_tuples(tmp_path: Path) -> None:
    data = ReportData(
        title="t", task="demo", target="a", surrogate="b", metrics=["log loss"],
        history={"log loss": [(5, (0.9, (0.5, 1.3))), (20, (0.8, (0.7, 0.9)), (0.85, (0.6, 1.1)))]},
        truth={"log loss": 0.5}, scores=np.ones(50), acquired_idx=[3, 7],
        acquired_q=[0.02, 0.0204], comparison=[{"metric": "log loss", "target_a": "a",
                                                "target_b": "b", "difference": {
                                                    "value": 0.01,
                                                    "bootstrap": {"low": -0.1, "high": 0.12}},
                                                "n_labels": 20}])
    md = write_report(data, tmp_path).read_text(encoding="utf-8")
    assert "> **Warning:** Only 20 labels" in md
    assert "truth for log loss (0.5) lies outside the bootstrap 95% interval [0.7, 0.9]" in md
    assert "no clear difference (the intervals contain 0)" in md
    assert "| log loss | 20 | 0.8 | — | — | — | [0.7, 0.9] | 0.85 | [0.6, 1.1] | 0.5 |" in md
    assert _png_size(tmp_path / "acquisition.png") == plots.ACQUISITION_SIZE  # constant scores


@pytest.mark.parametrize(("kw", "pattern"), [
    ({"metrics": []}, "at least one metric"),
    ({"history": {"other": []}}, r"history has metric\(s\) \['other'\]"),
    ({"history": {"m": [(1, (0.5, (0.6, 0.7)))]}}, r"\.active: expected low <= estimate <= high"),
    ({"history": {"m": [(2, (0.5, (0.4, 0.7))), (2, (0.5, (0.4, 0.7)))]}},
     "n_labels must increase"),
    ({"history": {"m": [(2, (float("nan"), (0.4, 0.7)))]}}, r"active\.value must be finite"),
    ({"history": {"m": [(2, (0.5, (0.4, 0.7), None, (0.6, 0.5)))]}},
     r"history\['m'\]\[0\]\.active\.anytime: expected low <= high"),
    ({"history": {"m": [(2, (0.5, 0.4, 0.7))]}},
     r"history\['m'\]\[0\]\.active\.bootstrap: expected an Interval"),
    ({"history": {"m": [(2, 0.5, (0.4, 0.7))]}},
     r"history\['m'\]\[0\]\.active: expected an Estimate"),
    ({"history": {"m": [(2,)]}}, r"history\['m'\]\[0\]: expected a HistoryRow"),
    ({"history": {"m": ["abcd"]}}, r"history\['m'\]\[0\]: expected a HistoryRow"),
    ({"history": {"m": [(2.5, (0.5, (0.4, 0.7)))]}}, r"n_labels must be a non-negative integer"),
    ({"history": {"m": [(2, ("0.5", (0.4, 0.7)))]}}, r"\.value must be a number"),
    ({"comparison": {"metric": "m", "target_a": "a", "target_b": "b", "difference": None,
                     "n_labels": 3}}, r"comparison\[0\]\.difference"),
    ({"comparison": {"metric": "m", "target_a": "a", "target_b": "b", "n_labels": 3,
                     "difference": (0.5, (0, 1), (0.2, None))}},
     r"comparison\[0\]\.difference\.fixed\.high must be a number"),
    ({"labels_needed": [("m", 0.1, -5)]}, r"labels_needed\[0\]\.n_labels"),
    ({"labels_needed": [("m", 0.1, 5, None, 7, "False")]},
     r"labels_needed\[0\]\.anytime_sure: expected true or false"),
    ({"scores": np.ones(3), "acquired_idx": [5]}, r"acquired_idx must lie in 0\.\.2"),
    ({"acquired_idx": [0, 1], "acquired_q": [0.5]}, "acquired_q has 1 entries"),
    ({"acquired_q": [1.5]}, "probabilities"),
    ({"flagged": [{"item_id": "a", "oops": 1}]}, r"flagged\[0\].*unknown key"),
    ({"truth": {"x": 1.0}}, r"truth has metric\(s\) \['x'\]"),
    ({"level": 1.0}, "level must be in"),
])
def test_bad_report_data(kw: dict, pattern: str) -> None:
    base = {"title": "t", "task": "x", "target": "a", "surrogate": "b", "metrics": ["m"],
            "history": {}}
    with pytest.raises(ValueError, match=pattern):
        ReportData(**{**base, **kw})


def test_numbers_are_written_as_read() -> None:
    """An interval's end of 0.001 minus rounding (a clipped exact CS) was written
    ``1.000e-03`` and a negative zero ``-0`` (QA): four significant digits where they
    round to 0.001 or more, scientific below, and 0 without a sign."""
    from activetest.session.report.render import _num

    assert _num(0.000999999999) == "0.001" and _num(0.001) == "0.001"
    assert _num(-0.0) == "0" and _num(0.0) == "0"
    assert _num(0.0005) == "5.000e-04" and _num(-1e-12) == "-1.000e-12"
    assert _num(0.98851) == "0.9885" and _num(None) == "—" and _num(float("nan")) == "—"


def test_a_width_already_reached_is_said_not_floored_beside_uniform(tmp_path: Path) -> None:
    """Active projections are floored at the labels used; uniform sampling's are not, so
    "100" beside "37" read as "uniform needs 3x fewer" where the active interval was
    already narrower (QA). A reached width now says so."""
    data = _data(labels_needed=[LabelsNeeded("log loss", 0.3, 150, 37, 120)])
    md = write_report(data, tmp_path / "r", html=False).read_text(encoding="utf-8")
    assert "| log loss | 0.3 | reached (150 used) | reached (150 used) | 37 |" in md


def test_a_labels_needed_count_the_sure_bounds_make_certain_is_marked_so(
        tmp_path: Path) -> None:
    """A count where the bounds that hold surely cut the CS within the width is certain,
    not a projection (tests/session/test_sure_bounds.py has the session's count)."""
    data = _data(labels_needed=[LabelsNeeded("log loss", 0.3, 150, 370, 180, True)])
    md = write_report(data, tmp_path / "r", html=False).read_text(encoding="utf-8")
    assert "| log loss | 0.3 | at most 180 (certain: sure bounds) | reached (150 used) |" in md
    assert "a count marked certain is where the bounds that hold surely" in md
    data = _data(labels_needed=[LabelsNeeded("log loss", 0.3, 150, 370, 180)])
    md = write_report(data, tmp_path / "p", html=False).read_text(encoding="utf-8")
    assert "| log loss | 0.3 | 180 | reached (150 used) |" in md
    assert "marked certain" not in md


def test_an_adaptive_designs_acquisition_figure_says_its_scores_are_from_creation(
        tmp_path: Path) -> None:
    """An adaptive design refits its proposal: the stored pool scores are not what it drew
    by (QA: the caption said "Pool acquisition scores", one bar beside q from 0.66x to
    1.33x uniform)."""
    md = write_report(_data(acquisition="adaptive"), tmp_path / "a", html=False).read_text(
        encoding="utf-8")
    assert "acquisition scores at creation with the acquired items (an adaptive design" in md
    md = write_report(_data(), tmp_path / "c", html=False).read_text(encoding="utf-8")
    assert "Pool acquisition scores with the acquired items" in md
    # graded_fixed and fixed_mix fit no model: their scores are the proposal's, only the
    # uniform share is re-chosen (QA: "the design refits since" said more)
    for acq in ("graded_fixed", "fixed_mix"):
        md = write_report(_data(acquisition=acq), tmp_path / acq, html=False).read_text(
            encoding="utf-8")
        assert "the share re-chosen from the labels" in md and "refits its proposal" \
            not in md



def test_one_label_count_still_draws_its_intervals() -> None:
    """A band over a single label count drew nothing while the legend named it (QA, 2
    labels): each interval is a short bar there."""
    data = _data()
    one = ReportData(**{**{f.name: getattr(data, f.name) for f in
                           dataclasses.fields(ReportData)},
                        "history": {m: rows[:1] for m, rows in data.history.items()}})
    fig = plots.estimates_figure(one)
    ax = fig.axes[0]
    widths = [p.get_paths()[0].get_extents().width for p in ax.collections
              if p.get_paths()]
    assert widths and min(widths) > 0.1, widths
    assert all(float(t).is_integer() for t in ax.get_xticks())


def _spy(monkeypatch: pytest.MonkeyPatch, name: str, arg: int) -> list:
    """Wrap ``plots.<name>`` so that each call's positional argument ``arg`` is kept in
    the returned list (the call itself still runs)."""
    seen: list = []
    real = getattr(plots, name)

    def spy(*args):  # type: ignore[no-untyped-def]
        seen.append(args[arg])
        return real(*args)

    monkeypatch.setattr(plots, name, spy)
    return seen


def test_the_compare_designs_figure_says_what_it_draws_by(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compare design draws where the two targets may differ, not by the surrogate
    (QA: the title said "acquisition: surrogate ...")."""
    fig_title = _spy(monkeypatch, "_fit_title", 1)
    plots.plot_acquisition(_data(acquisition="compare"), tmp_path / "a.png")
    plots.plot_acquisition(_data(), tmp_path / "b.png")
    assert fig_title[0].startswith("acquisition: where the target and the compared model")
    assert fig_title[1] == "acquisition: surrogate smollm2-135m"


def test_a_log_score_axis_labels_its_decades_only(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: pool scores over 1-1.5 decades (a PE session's) got labelled minor ticks that
    ran into each other ("3×10⁻²4×10⁻²6×10⁻²"); only the decades are labelled now."""
    kept = _spy(monkeypatch, "_save", 0)
    rng = np.random.default_rng(0)
    base = _data()
    data = dataclasses.replace(base, scores=np.exp(rng.uniform(np.log(0.02), np.log(0.6),
                                                               len(base.scores))))
    plots.plot_acquisition(data, tmp_path / "a.png")
    fig = kept[0]
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_xscale() == "log"
    minor = [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_visible()]
    assert not any(minor), minor
    assert any(t.get_text() for t in ax.xaxis.get_majorticklabels())


def test_an_estimate_outside_the_metrics_range_stays_on_the_axis() -> None:
    """QA: the axis was cut to the values the metric can take, so an unbiased error-rate
    estimate above 1 (few labels; it is not clipped) ran off the top of the panel and the
    curve contradicted the table. The axis now reaches every estimate."""
    rows = [(2, (0.4, (0.1, 0.7), (0.0, 1.0))), (4, (1.25, (0.9, 1.4), (0.2, 1.0))),
            (6, (-0.08, (-0.2, 0.3), (0.0, 0.9)))]
    data = ReportData(title="t", task="demo", target="a", surrogate="b",
                      metrics=["error rate"], history={"error rate": rows},
                      value_range={"error rate": (0.0, 1.0)})
    ax = plots.estimates_figure(data).axes[0]
    low, high = ax.get_ylim()
    assert low < -0.08 and high > 1.25, (low, high)


def test_the_plain_mean_shows_where_it_equals_the_estimate() -> None:
    """QA: where every draw so far was made at the uniform rate (an adaptive design's first
    batch) the plain mean equals the estimate, and the estimate's line, drawn after it,
    hid it whole: no pixel of its colour in the panel while the legend named it. It is
    now drawn dashed over the estimate, so both show."""
    import io

    rows = [(k, ((0.3 + 0.01 * k), (0.1, 0.6), (0.0, 0.9)),
             ((0.3 + 0.01 * k), (0.1, 0.6))) for k in range(2, 12)]
    data = ReportData(title="t", task="demo", target="a", surrogate="b",
                      metrics=["error rate"], history={"error rate": rows},
                      value_range={"error rate": (0.0, 1.0)}, uniform_biased=False)
    fig = plots.estimates_figure(data)
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=plots.DPI)
    png.seek(0)
    img = imread(png)[..., :3]
    box = fig.axes[0].get_window_extent()  # the panel only: not the legend's sample line
    h = img.shape[0]
    panel = img[int(h - box.y1):int(h - box.y0), int(box.x0):int(box.x1)]
    for colour, what in ((plots._UNIFORM, "plain mean"), (plots._ACTIVE, "estimate")):
        rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
        seen = int((np.abs(panel - rgb).max(axis=-1) < 0.08).sum())
        assert seen > 50, (what, seen)


@pytest.mark.parametrize("k", [1, 5])
def test_the_acquisition_steps_are_whole_numbers_and_one_step_shows_uniforms_q(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """QA: the step axis of q_m read 0.96, 0.98, ... (1 label) and 1.0, 1.5, ... (5
    labels); and with one step the uniform rate, a dotted line through one point, drew
    nothing while the legend named it."""
    kept = _spy(monkeypatch, "_save", 0)
    base = _data()
    data = dataclasses.replace(base, acquired_idx=base.acquired_idx[:k],
                               acquired_q=base.acquired_q[:k])
    plots.plot_acquisition(data, tmp_path / "a.png")
    fig = kept[0]
    fig.canvas.draw()
    ax = fig.axes[1]
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    uniform = next(line for line in ax.get_lines() if line.get_label().startswith("uniform"))
    if k == 1:
        assert uniform.get_marker() not in (None, "None", "", " ")


def test_constant_scores_are_one_bar_on_the_value(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: an adaptive session's scores at creation are all 0; the bins had 0 as an edge, so
    the one bar stood beside the value (from -0.1 to 0)."""
    kept = _spy(monkeypatch, "_save", 0)
    base = _data()
    plots.plot_acquisition(dataclasses.replace(base, scores=np.zeros(len(base.scores))),
                           tmp_path / "a.png")
    ax = kept[0].axes[0]
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert bars
    for bar in bars:
        assert bar.get_x() < 0 < bar.get_x() + bar.get_width()


@pytest.mark.parametrize("span", [(0.18, 5.0), (0.02, 0.6), (0.001, 0.15)])
def test_a_log_score_axis_within_two_decades_reads_at_several_ticks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span: tuple[float, float]) -> None:
    """QA: scores from 0.18 to 5 (a CE session's) had one labelled tick, "10⁰": the
    reader could not tell the scores. Within two decades the axis is labelled at 1, 2 and
    5 times each power of ten, and the labels do not run into each other."""
    kept = _spy(monkeypatch, "_save", 0)
    rng = np.random.default_rng(0)
    base = _data()
    scores = np.exp(rng.uniform(np.log(span[0]), np.log(span[1]), len(base.scores)))
    plots.plot_acquisition(dataclasses.replace(base, scores=scores), tmp_path / "a.png")
    fig = kept[0]
    fig.canvas.draw()
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    shown = [t for t in ax.xaxis.get_majorticklabels()
             if t.get_visible() and t.get_text() and lo <= t.get_position()[0] <= hi]
    assert len(shown) >= 3, [t.get_text() for t in shown]
    boxes = sorted((t.get_window_extent() for t in shown), key=lambda b: b.x0)
    texts = [t.get_text() for t in shown]
    assert all(a.x1 <= b.x0 for a, b in itertools.pairwise(boxes)), texts


@pytest.mark.parametrize("task", ["情感分析", "ℊ-scores"])
def test_names_in_other_scripts_get_a_font_or_one_note(tmp_path: Path, task: str) -> None:
    """QA: a task named in Chinese gave three "Glyph ... missing from font(s) DejaVu Sans"
    notes and empty boxes. An installed font that has the characters is used as a
    fallback (matplotlib's own STIX fonts have U+210A "ℊ", DejaVu Sans not); where none
    has them, one note names the font package to install, and no glyph warning."""
    import dataclasses
    import warnings

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        write_report(dataclasses.replace(_data(), task=task), tmp_path / "out")
    texts = [str(w.message) for w in got]
    assert not [t for t in texts if t.startswith("Glyph")], texts
    notes = [t for t in texts if "the figures cannot show" in t]
    assert len(texts) == len(notes) <= 1, texts
    if task.startswith("ℊ"):
        assert notes == []  # a bundled font has it
    for note in notes:
        assert "fonts-noto-cjk" in note and all(ch in note for ch in task), note


def test_the_verdict_of_an_asymptotic_cs_says_asymptotically() -> None:
    """The report's verdict names what the deciding interval guarantees: the asymptotic
    anytime CS holds however you stop only asymptotically (QA: "holds however you stop"
    beside a CS whose footnote says "asymptotically"); the exact CS, where it stands in,
    holds at any count."""
    from types import SimpleNamespace

    from activetest.session.report.render import _verdict

    iv = SimpleNamespace(low=-0.3, high=-0.1)
    for basis, how in (("clt", "(valid however you stop, asymptotically)"),
                       (None, "(valid however you stop, asymptotically)"),
                       ("exact", "(holds however you stop)")):
        c = SimpleNamespace(target_a="A", target_b="B", difference=SimpleNamespace(
            anytime=iv, fixed=iv, bootstrap=iv, basis=basis))
        assert _verdict(c, 0.95) == f"A lower by the anytime 95% confidence sequence {how}"


def test_an_adaptive_sessions_acquisition_figure_shows_its_next_proposal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Walkthrough QA: the default design starts uniform, so the figure's left panel (the
    scores stored at creation) was one bar at 0. A session's report now shows the
    design's proposal for the next draw, as a multiple of the uniform rate over the items
    not drawn; it is the sampler's own plan."""
    from session_support import make_pool_files

    from activetest.session.workflow import Session

    files = make_pool_files(tmp_path / "data", n=80)
    db = tmp_path / "s.db"
    Session.create(db, pool=files.pool, task="demo", surrogate=f"table:{files.surrogate}",
                   target=f"table:{files.target}", seed=0, progress=False,
                   pool_options={"id_column": "id"}).close()
    with Session.open(db) as s:
        s.select(30)
        s.label_from_data()
        data = s.report_data(progress=False)
        from activetest.session import draw

        plan = draw.replayed(s.store).plan().q
    nq = data.next_proposal
    assert nq is not None and nq == pytest.approx(plan, abs=0)
    assert (nq[data.acquired_idx] == 0).all() and nq.sum() == pytest.approx(1.0)
    kept = _spy(monkeypatch, "_save", 0)
    plots.plot_acquisition(data, tmp_path / "a.png")
    left = kept[0].axes[0]
    assert left.get_title() == "the design's proposal for draw 31"
    assert left.get_xlabel() == "probability of the next draw / uniform rate"
    heights = [p.get_height() for p in left.patches]
    assert sum(heights) == 80 - 30  # every item not drawn, once
    md = write_report(data, tmp_path / "r", html=False).read_text(encoding="utf-8")
    assert ("The design's proposal for draw 31 over the items not drawn, as a multiple of "
            "the uniform rate (refitted from the labels so far)") in " ".join(md.split())

    def labelled(acquisition: str, n: int) -> Any:
        db = tmp_path / f"{acquisition}.db"
        Session.create(db, pool=files.pool, task="demo", surrogate=f"table:{files.surrogate}",
                       target=f"table:{files.target}", seed=0, progress=False,
                       pool_options={"id_column": "id"}, acquisition=acquisition).close()
        with Session.open(db) as s:
            s.select(n)
            s.label_from_data()
            return s.report_data(progress=False)

    # a fixed model's design (fixed_mix): its scores are fixed, their share re-chosen
    fm = labelled("fixed_mix", 12)
    assert fm.next_proposal is not None
    md = write_report(fm, tmp_path / "fm", html=False).read_text(encoding="utf-8")
    assert ("its fixed scores, their share against the uniform re-chosen from the "
            "labels so far") in " ".join(md.split())
    # a fixed acquisition: no proposal to show beyond its scores
    assert labelled("ce", 5).next_proposal is None


def test_a_compared_targets_absent_recorded_path_is_said_under_the_comparison(
        tmp_path: Path) -> None:
    """QA: an old session's compared target stored by the local path of the machine that
    made it was printed bare in the comparison, read as a file in use here. The report
    says under the comparison (HTML and Markdown), as ``status`` does, that it is the
    path recorded at init and that nothing is there; a spec not absent is not named so."""
    gone = "table:/gone/b.csv"
    base = _data()
    cmp = [dataclasses.replace(base.comparison[0], target_b=gone)]
    said = f"Second target {gone} (the path recorded at init; nothing is there on this machine)."
    for absent in ((gone,), ()):
        data = dataclasses.replace(base, comparison=cmp, absent_paths=absent)
        out = tmp_path / f"r{len(absent)}"
        md = write_report(data, out).read_text(encoding="utf-8")
        page = (out / "report.html").read_text(encoding="utf-8")
        assert (f"\n{said}\n" in md) == bool(absent), md
        assert (f"<p>{said}</p>" in page) == bool(absent), page
        assert "Target: gemma3-270m\n" in md and "the path recorded" not in md.split(
            "## Estimates")[0]  # the header's target and surrogate are not absent


def test_a_possessive_after_a_url_like_name_is_the_sentences_not_the_code_spans() -> None:
    """QA: "for table:`www.other.csv's` error rate": a name read as a URL took the
    possessive the sentence put after it into its code span. Now the span holds the name
    and the "'s" (or "’s") follows it, after any closing punctuation is also left out;
    "www.'s" is no URL without its "'s" and stays whole."""
    from activetest.session.report.render import _md

    assert _md("for table:www.other.csv's error rate") == \
        "for table:`www.other.csv`'s error rate"
    assert _md("for table:www.other.csv\u2019s error rate") == \
        "for table:`www.other.csv`\u2019s error rate"
    assert _md("(of table:www.other.csv's.)") == "(of table:`www.other.csv`'s.)"
    assert _md("see www.a's.csv here") == "see `www.a's.csv` here"  # not at its end
    assert _md("www.'s") == "`www.'s`"
