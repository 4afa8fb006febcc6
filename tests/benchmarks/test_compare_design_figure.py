"""docs/compare/*.png (``benchmarks/compare_design.py --plot``): the figure names what is
estimated and by what, the data and the runs, and the dashed line at 1."""

from __future__ import annotations

import matplotlib.pyplot as plt

from tests.benchmarks.test_printed_ratios import _module
from tests.experiments.figure_checks import inside, small_texts


def test_the_ratio_figure_names_its_estimate_data_and_the_line_at_1() -> None:
    """QA: the title said "Difference of two error rates, bundled models" (estimated by
    what? on which data?), the x axis "squared error" (mean or median?), and the dashed
    line at 1 was in no legend."""
    rows = [("sst2: Gemma few vs Gemma zero", 1.57, 0.74),
            ("fpb: SmolLM2 few vs SmolLM2 zero", 3.93, 0.001),
            *((f"mmlu: pair {i}", 1.0 + i / 10, 0.3 + i / 10) for i in range(6))]
    fig = _module("compare_design").ratio_figure(rows, "error_rate", 1000)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        title = fig.get_suptitle()
        for part in ("error rates", "R_A - R_B", "LURE", "five datasets' pools",
                     "1,000 runs per point", "drawn at 0.005"):
            assert part in title, part
        assert ax.get_xlabel().startswith("mean squared error")
        names = [t.get_text() for t in fig.legends[0].get_texts()]
        assert names == ["first target's own acquisition", "compare acquisition",
                         "uniform sampling (= 1)"]
        assert small_texts(fig) == []
        for t in (fig._suptitle, ax.xaxis.label, fig.legends[0], *ax.get_yticklabels()):
            assert inside(fig, t)
    finally:
        plt.close(fig)
