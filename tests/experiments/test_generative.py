"""The SQuAD report, reduced: it runs on the committed npz, has its structure, and is seeded."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments import generative_report as gr

ROOT = Path(__file__).resolve().parents[2]
NPZ = ROOT / "experiments" / "outputs" / "generative" / "squad.npz"

pytestmark = pytest.mark.skipif(not NPZ.exists(),
                                reason="experiments/outputs/generative/squad.npz missing")


def _numbers(text: str) -> str:
    """The document without its timing, plot links and their captions (all else must be
    reproduced)."""
    text = re.sub(r"in \d+ s \([\d.]+ min\)", "in T", text)
    text = re.sub(r"about \d+ min", "about T", text)
    return "\n".join(ln for ln in text.splitlines() if ln.strip()
                     and not ln.startswith(("![", "*The figure:")))


def test_load_reads_both_targets_and_charges_the_judges() -> None:
    pools = gr.load(NPZ)
    assert set(pools) == {"smollm2-135m", "gemma3-270m"}
    for p in pools.values():
        assert p.n_pool == 2000 and p.n_judge == 8
        assert p.score["em"].shape == (3000,)
        assert set(p.surrogates) == {"conf:mean", "conf:min", "conf:sum", "agree",
                                     "judge:smollm2-135m", "judge:gemma3-270m"}
        for name, q in p.surrogates.items():
            assert q.shape == (2000,) and np.all((q >= 0) & (q <= 1)), name
            assert p.charged[name] == (8 if name.startswith("judge") else 0)


def test_run_target_summaries() -> None:
    pool = gr.load(NPZ)["smollm2-135m"]
    r = gr.run_target(pool, "em", n_runs=30, budget=60, seed=0)
    np.testing.assert_allclose(r.rel["uniform"], 1.0)
    em = pool.score["em"]
    assert r.truth == pytest.approx(1 - em[2000:].mean())
    assert r.pool_risk == pytest.approx(1 - em[:2000].mean())
    # charged methods are compared with uniform on 8 more labels: defined up to 60 - 8 only
    # when uniform was simulated to 60 + 8 (it is), so every budget has a value
    assert np.all(np.isfinite(r.rel["graded"])) and r.charged["graded"] == 8
    assert r.charged["graded-free"] == 0 and r.charged["conf:sum+LURE"] == 0
    for d in ("graded", "graded-free"):
        cov = r.coverage[d]["pool"]
        assert cov.shape == (1,) and 0 <= cov[0] <= 1
    assert 0.5 < r.auroc["conf:sum"] < 1


def test_reduced_report_structure_and_determinism(tmp_path: Path) -> None:
    args = ["--npz", str(NPZ), "--runs", "20", "--budget", "120", "--jobs", "1"]
    assert gr.main([*args, "--out", str(tmp_path / "a")]) == 0
    assert gr.main([*args, "--out", str(tmp_path / "b"), "--no-plots", "--jobs", "2"]) == 0
    a = (tmp_path / "a" / "generative.md").read_text()
    b = (tmp_path / "b" / "generative.md").read_text()
    for heading in ("# Active testing of generative answers", "## Setup", "## Headline",
                    "## SmolLM2-135M: relative error by budget", "## Gemma-3-270M: relative "
                    "error by budget", "## Single-run intervals", "## Secondary: loss 1 - "
                    "token F1", "## Reading", "## Re-running"):
        assert heading in a, heading
    assert "--runs 20 --budget 120" in a
    for m in ("graded", "graded-free", "conf:sum+LURE", "conf:sum+CV", "conf:sum fixed",
              "judge:gemma3-270m+LURE", "agree fixed"):
        assert f"| {m} |" in a, m
    assert re.search(r"best method \*\*[^*]+: \d\.\d\d\*\*", a)
    for t in ("smollm2-135m", "gemma3-270m"):
        png = tmp_path / "a" / "generative" / f"{t}-em.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # seeded: the same numbers again (here with two worker processes and no plots)
    assert _numbers(a) == _numbers(b)
    c = tmp_path / "c"
    assert gr.main([*args, "--out", str(c), "--seed", "1", "--no-plots"]) == 0
    assert _numbers((c / "generative.md").read_text()) != _numbers(a)


def test_the_relative_error_figure_names_its_data_runs_and_uniform_line(tmp_path: Path) -> None:
    """QA of docs/generative/*.png: the title named neither the data nor the runs, the
    legends were 7 pt, the grey line at 1 (uniform sampling) was in no legend, and
    nothing beside the figure said which command makes it."""
    import matplotlib.pyplot as plt

    from tests.experiments.figure_checks import inside, small_texts

    r = gr.run_target(gr.load(NPZ)["gemma3-270m"], "em", n_runs=20, budget=60, seed=0)
    fig = gr.relative_error_figure(r)
    try:
        fig.canvas.draw()
        title = fig._suptitle.get_text()
        assert "SQuAD v1.1 dev" in title and "20 runs per method" in title
        assert "test-set truth" in title and "1 - exact match" in title
        assert small_texts(fig) == []
        for ax in fig.axes:
            names = [t.get_text() for t in ax.get_legend().get_texts()]
            assert "uniform sampling + the mean (= 1)" in names
            assert inside(fig, ax.get_legend()) and inside(fig, ax.xaxis.label)
            leg = ax.get_legend().get_window_extent()
            assert not leg.overlaps(ax.get_window_extent())  # hides no curve
            assert not leg.overlaps(ax.xaxis.label.get_window_extent())
        assert inside(fig, fig._suptitle)
    finally:
        plt.close(fig)
    lines = gr.write_report([r], tmp_path, elapsed=1.0,
                            command="python -m activetest.experiments.generative_report"
                            ).read_text().splitlines()
    at = lines.index("![relative error, gemma3-270m](generative/gemma3-270m-em.png)")
    assert "Made by `python -m activetest.experiments.generative_report`" in lines[at + 2]
