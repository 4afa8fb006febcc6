"""The coverage figures of docs/intervals.md: the intervals by the product's names, the
method and the lines explained, readable, and redrawn from the curves the study saved."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from activetest.experiments.coverage import coverage_study
from activetest.experiments.coverage_figures import (
    BAND_FILE,
    FILE,
    BandCurves,
    CoverageCurves,
    coverage_figure,
    peeking_figure,
)
from activetest.experiments.coverage_runs import STOP_FROM, run_setting_coverage
from activetest.experiments.paper import settings_for
from tests.experiments.figure_checks import inside, small_texts
from tests.experiments.test_paper import _outputs

ROOT = Path(__file__).resolve().parents[2]


def _curves() -> CoverageCurves:
    """The study's CE + LURE, log-loss rows of two small synthetic datasets, pooled as the
    study pools them for its figures."""
    rows = []
    for name, seed in (("toy", 0), ("other", 1)):
        o = _outputs(n_pool=300, n_test=300, seed=seed)
        o.dataset = name
        for s in settings_for(o)[:2]:
            rows += run_setting_coverage(o, s, loss="log", n_runs=60, budget=50,
                                         exact_runs=20, seed=0, methods=("ce+lure",))
    return CoverageCurves.pool(rows, 50, STOP_FROM)


def test_the_coverage_figure_names_its_intervals_method_and_lines() -> None:
    """QA of coverage_by_budget.png: the curves were "martingale" / "martingale (plain z)"
    where the page and the CLI say fixed-budget interval, no title named the method, the
    dashed 0.94 line was unexplained and the legend was 6.5 pt."""
    curves = _curves()
    fig = coverage_figure(curves)
    try:
        fig.canvas.draw()
        title = fig._suptitle.get_text()
        assert title == ("Fixed-budget coverage of the pool risk, 95% intervals\nCE "
                         "acquisition + LURE, log loss, 60 runs per setting, pooled over each "
                         "dataset's settings")
        assert [a.get_title() for a in fig.axes] == ["toy (2 settings)", "other (2 settings)"]
        names = [t.get_text() for t in fig.legends[0].get_texts()]
        assert names == ["bootstrap 95% interval (the paper's, ±1.96 sd)",
                         "fixed-budget 95% interval",
                         "fixed-budget 95% interval, plain z (±1.96 SE, no skewness "
                         "correction)", "nominal level 0.95",
                         "goal: at least 0.94 from 30 labels (intervals.md)"]
        assert not any("martingale" in n for n in names)
        assert not small_texts(fig), small_texts(fig)
        assert inside(fig, fig._suptitle) and inside(fig, fig.legends[0])
    finally:
        plt.close(fig)


def test_the_peeking_figure_names_its_intervals_and_method() -> None:
    curves = _curves()
    fig = peeking_figure(curves)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        assert ax.get_title() == ("Checking after every label: CE acquisition + LURE, log "
                                  "loss, 95%, all 4 settings,\n60 runs per setting")
        names = [t.get_text() for t in fig.legends[0].get_texts()]
        assert names == ["bootstrap 95% interval (the paper's, ±1.96 sd)",
                         "fixed-budget 95% interval",
                         "anytime 95% confidence sequence (asymptotic)",
                         "exact anytime 95% confidence sequence (first 20 runs of each setting)",
                         "0.05 = 1 - level: what a CS may not exceed"]
        assert not small_texts(fig), small_texts(fig)
        assert inside(fig, ax.title) and inside(fig, fig.legends[0])
    finally:
        plt.close(fig)


def test_replot_redraws_the_coverage_figures_from_the_saved_curves(tmp_path: Path) -> None:
    """The study saves the curves it drew beside its figures (no pickle) and says so under
    each figure; ``replot`` redraws both from them, with the same curves."""
    o = _outputs(n_pool=300, n_test=300)
    o.dataset = "toy"
    o.save(tmp_path / "toy.npz")
    docs = tmp_path / "docs"
    md = coverage_study(tmp_path, docs, n_runs=60, budget=50, exact_runs=20, progress=False,
                        losses=("log",), methods=("ce+lure",)).read_text()
    assert md.count("`python -m activetest.experiments replot` redraws it") == 3
    assert "*The figure: the table's rows at every budget 10..50 (CE + LURE" in md
    img = docs / "intervals"
    saved = CoverageCurves.load(img / FILE)
    assert saved.datasets == ("toy",) and saved.n_runs == 60 and saved.n_exact == 20
    assert saved.fixed.shape == (1, 3, 50) and saved.peeking.shape == (4, 50)
    assert np.isfinite(saved.fixed[:, :, 9:]).all()
    # QA: replot did not redraw cs_band.png (only the study did); the run is saved too
    band = BandCurves.load(img / BAND_FILE)
    assert (band.dataset, band.seed, band.budget, band.claimed_from) == ("toy", 0, 50, 30)
    assert band.test_truth is not None and np.isfinite(band.exact_high).all()
    drawn = plt.imread(img / "cs_band.png")
    pngs = ("coverage_by_budget.png", "peeking.png", "cs_band.png")
    for png in pngs:
        (img / png).unlink()
    p = subprocess.run([sys.executable, "-m", "activetest.experiments", "replot", "--out",
                        str(docs)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    for png in pngs:
        assert (img / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"wrote {img / png}" in p.stdout
    again = CoverageCurves.load(img / FILE)
    np.testing.assert_array_equal(again.fixed, saved.fixed)
    np.testing.assert_array_equal(again.peeking, saved.peeking)
    # the run redrawn from what was saved is the figure the study drew, pixel for pixel
    np.testing.assert_array_equal(plt.imread(img / "cs_band.png"), drawn)
    for k in ("estimate", "fixed_low", "anytime_high", "exact_low"):
        np.testing.assert_array_equal(getattr(BandCurves.load(img / BAND_FILE), k),
                                      getattr(band, k))


def test_replot_redraws_the_one_run_alone_and_says_what_is_missing(tmp_path: Path) -> None:
    """A folder with only the run saved (no coverage curves) gets its cs_band.png; one
    with neither is refused by name (exit 2), nothing written."""
    o = _outputs(n_pool=300, n_test=300)
    from activetest.experiments.coverage import band_curves
    from activetest.experiments.coverage_figures import plot_band, replot_coverage

    band = band_curves(o, settings_for(o)[0], 40, 0)
    plot_band(band, tmp_path)
    (tmp_path / "cs_band.png").unlink()
    assert replot_coverage(tmp_path) == [tmp_path / "cs_band.png"]
    empty = tmp_path / "empty"
    (empty / "intervals").mkdir(parents=True)
    p = subprocess.run([sys.executable, "-m", "activetest.experiments", "replot", "--out",
                        str(empty)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert str(empty / "intervals" / BAND_FILE) in p.stderr, p.stderr
