"""The relative-error figures of docs/reproduction.md: what they say they show, readable,
and redrawn from the curves the study saved (no simulation)."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments.paper import run_setting, settings_for
from activetest.experiments.reproduce import _curves
from activetest.experiments.reproduce_figures import (
    RelativeErrorCurves,
    log_ticks,
    relative_error_figure,
    replot_reproduction,
)
from tests.experiments.figure_checks import inside, small_texts
from tests.experiments.test_paper import _outputs

ROOT = Path(__file__).resolve().parents[2]


def _toy_curves() -> RelativeErrorCurves:
    """A real (small) run of the paper's protocol on synthetic outputs, as the study makes
    the curves of a dataset's figure."""
    o = _outputs(500, 300)
    o.dataset = "sst2"
    results = [run_setting(o, s, n_runs=40, budget=50,
                           methods=("uniform+mean", "ce+lure", "adaptive+cv_lure"))
               for s in settings_for(o)[:3]]
    return _curves(o, results, "a held-out test set of 300")


def test_the_figure_names_the_quantity_the_data_and_the_conditions() -> None:
    """QA: the y axis said "relative error" (of what?), the title only the dataset's key,
    the legend was 6.5 pt. It now names the ratio of median squared errors, the dataset,
    the pool, the truth, the runs and the budgets; every text is at least 7.5 pt and
    lies inside the figure."""
    curves = _toy_curves()
    fig = relative_error_figure(curves)
    fig.canvas.draw()
    title = fig._suptitle.get_text()
    assert title.startswith("SST-2: median squared error of the risk estimate (log loss), "
                            "active / uniform, at 1-50 labels, 40 runs per setting"), title
    assert "pool 500 items, truth from a held-out test set of 300" in title
    assert "uniform is charged the 8 in-context labels of the zero-shot targets" in title
    axes = fig.axes
    assert axes[0].get_ylabel() == "median squared error, active / uniform (log scale)"
    assert [a.get_title() for a in axes] == [
        "CE acquisition + LURE", "adaptive design (original in-run rule) + adaptive LURE"]
    legend = fig.legends[0]
    assert legend.get_title().get_text().startswith("target <- surrogate")
    assert [t.get_text() for t in legend.get_texts()] == [
        *curves.settings, "1: no gain over uniform"]
    assert not small_texts(fig), small_texts(fig)
    # the log axis reads in plain numbers (it read 10^0 and 4x10^0)
    ticks = [t.get_text() for t in axes[0].get_yticklabels(which="both") if t.get_text()]
    assert ticks and not any("^" in t or "times" in t for t in ticks), ticks
    for artist in (fig._suptitle, legend, *(a.xaxis.label for a in axes)):
        assert inside(fig, artist), artist
    # QA: below 1 the axes had no labelled tick, so a ratio of 0.3 or 0.7 (the gain the
    # figure is about) could not be read; labels now run across the whole axis
    low, high = axes[0].get_ylim()  # the panels share it
    assert all(a.get_ylim() == (low, high) for a in axes)
    shown = sorted(float(t.get_text()) for t in axes[0].get_yticklabels() if t.get_text())
    assert shown == log_ticks(low, high), shown
    assert shown[0] <= 2 * low and shown[-1] >= high / 2, (shown, low, high)
    assert all(b / a <= 2.5 for a, b in pairwise(shown)), shown


def test_log_ticks_label_both_sides_of_one() -> None:
    """The ranges of docs/reproduction.md's figures: FPB's (0.13 to 130: three decades),
    HS's (0.48 to 28) and MMLU's (0.65 to 5.8: a decade) get labels below 1, in plain
    numbers, never further apart than a factor 2.5, and reaching both ends (within 2x)."""
    assert log_ticks(0.13, 130) == [0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]
    assert log_ticks(0.48, 28) == [0.5, 1, 2, 5, 10, 20]
    assert log_ticks(0.55, 25) == [0.6, 1, 2, 5, 10, 20]  # the nearest multiple at the end
    assert log_ticks(0.65, 5.8) == [0.7, 0.8, 0.9, 1, 2, 3, 4, 5]
    for low, high in ((0.011, 3.0), (0.3, 0.9), (1.5, 700.0), (0.05, 0.5)):
        t = log_ticks(low, high)
        assert t[0] <= 2 * low and t[-1] >= high / 2, (low, high, t)
        assert all(b / a <= 2.5 for a, b in pairwise(t)), t
    with pytest.raises(ValueError, match="0 < low < high"):
        log_ticks(1.0, 0.5)


def test_replot_redraws_from_the_saved_curves(tmp_path: Path) -> None:
    """The curves saved beside a figure load back unchanged (no pickle), and ``replot``
    redraws the PNG from them; without saved curves it exits 2 with one message."""
    curves = _toy_curves()
    path = curves.save(tmp_path / "sst2_relative_error.npz")
    back = RelativeErrorCurves.load(path)
    assert (back.dataset, back.name, back.n_pool, back.truth, back.n_runs, back.settings,
            back.offsets, back.methods) == (curves.dataset, curves.name, curves.n_pool,
                                            curves.truth, curves.n_runs, curves.settings,
                                            curves.offsets, curves.methods)
    np.testing.assert_array_equal(back.relative, curves.relative)  # NaNs in place too
    assert replot_reproduction(tmp_path) == [tmp_path / "sst2_relative_error.png"]
    png = tmp_path / "sst2_relative_error.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    docs = tmp_path / "docs"
    (docs / "reproduction").mkdir(parents=True)
    path.rename(docs / "reproduction" / path.name)
    cmd = [sys.executable, "-m", "activetest.experiments", "replot", "--out", str(docs)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert (docs / "reproduction" / "sst2_relative_error.png").exists()
    (docs / "reproduction" / path.name).unlink()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "no saved curves" in p.stderr and len(p.stderr.strip().splitlines()) == 1
