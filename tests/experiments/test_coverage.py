"""The coverage study on synthetic cached outputs (statistics only, fast)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments import coverage
from activetest.experiments.coverage import (
    METHODS,
    Context,
    Terms,
    coverage_study,
    lure_bootstrap_sd,
    theta_bootstrap_sd,
)
from activetest.experiments.coverage_figures import band_figure
from activetest.experiments.paper import settings_for
from activetest.stats import bootstrap_std_many, lure_terms, sample
from activetest.stats.intervals import _theta
from tests.experiments.figure_checks import inside, small_texts
from tests.experiments.test_paper import _outputs


def _draws(N: int = 300, K: int = 80, runs: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    L = rng.gamma(1.0, 1.0, size=N)
    idx, q = sample(L + 0.2, K, n_runs=runs, random_state=seed)
    return L, idx, q, N, K


def test_closed_form_bootstrap_is_the_resampling_limit() -> None:
    L, idx, q, N, _ = _draws()
    sd = lure_bootstrap_sd(L[idx], q, N)
    for M in (2, 10, 80):
        t = lure_terms(L[idx[:, :M]], q[:, :M], N)
        np.testing.assert_allclose(sd[:, M - 1], t.std(axis=1) / np.sqrt(M), rtol=1e-10)
    # ... and B = 20,000 resamples agree within their Monte Carlo error (sd of an sd ~ 1/sqrt(2B))
    t = lure_terms(L[idx], q, N)
    boot = bootstrap_std_many(t, 20000, np.random.default_rng(1))
    np.testing.assert_allclose(boot, sd[:, -1], rtol=4 / np.sqrt(2 * 20000))


def test_theta_bootstrap_matches_the_terms_t_m() -> None:
    L, idx, q, N, _ = _draws()
    th = _theta(L[idx], q, N)
    sd = theta_bootstrap_sd(th, N)
    for M in (5, 40, 80):
        m = np.arange(1, M + 1)
        c = N * (N - M) / (M * (N - m) * (N - m + 1.0))
        t = M * c * th[:, :M]
        np.testing.assert_allclose(sd[:, M - 1], t.std(axis=1) / np.sqrt(M), rtol=1e-9)


def test_adding_a_method_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A method is a function Context -> Terms; the study runs whatever METHODS holds."""
    o = _outputs(n_pool=300, n_test=300)
    calls: list[int] = []

    def uniform_mean(ctx: Context) -> Terms:
        idx, q = ctx.draws("uniform")
        L = ctx.per_item[idx]
        calls.append(ctx.N)
        th = _theta(L, q, ctx.N)
        return Terms(th, _theta(L * L, q, ctx.N), theta_bootstrap_sd(th, ctx.N))

    monkeypatch.setitem(METHODS, "uniform+mean", uniform_mean)
    setting = settings_for(o)[0]
    rows = coverage.run_setting_coverage(o, setting, loss="log", n_runs=50, budget=60,
                                         exact_runs=0, seed=0,
                                         methods=["ce+lure", "uniform+mean"])
    assert calls == [300] and [r.method for r in rows] == ["ce+lure", "uniform+mean"]
    assert "exact CS (from 1)" not in rows[1].uniform  # no exact inputs: skipped
    for r in rows:
        assert r.fixed["martingale"].shape == (60,)
        assert 0 <= r.uniform["asymptotic CS (from 30)"] <= 1


@pytest.fixture(scope="module")
def toy_study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The study on a synthetic dataset "toy" (60 runs of 50 labels): its folder (outputs,
    ``docs/``) and the cache of its measurements."""
    tmp = tmp_path_factory.mktemp("coverage")
    o = _outputs(n_pool=300, n_test=300)
    o.dataset = "toy"
    o.save(tmp / "toy.npz")
    cache = tmp / "cache.pkl"
    coverage_study(tmp, tmp / "docs", n_runs=60, budget=50, exact_runs=20, progress=False,
                   cache=cache)
    return tmp, cache


def test_study_writes_the_page_and_plots(toy_study: tuple[Path, Path]) -> None:
    tmp_path, cache = toy_study
    text = (tmp_path / "docs" / "intervals.md").read_text()
    for head in ("## What sessions should show", "## Goals of issue 13",
                 "## Fixed-budget coverage", "## Time-uniform coverage", "## Optional stopping",
                 "## The width cost", "## The test-set truth", "## Error rate",
                 "## Is A better than B, anytime?"):
        assert head in text, head
    for png in ("coverage_by_budget.png", "peeking.png", "cs_band.png"):
        assert (tmp_path / "docs" / "intervals" / png).stat().st_size > 1000
    # QA: the tables named the fixed-budget interval "martingale" (rows, "martingale
    # width", "martingale (pool)"); they now use the product's name, as the figures do
    tables = [x for x in text.splitlines() if x.startswith("|")]
    assert not [x for x in tables if "martingale" in x]
    for name in ("| toy | fixed-budget interval |", "| toy | fixed-budget interval (plain z) |",
                 "| toy | fixed-budget interval (observed SE only) |",
                 "fixed-budget interval (pool)", "fixed-budget interval width",
                 "anytime CS (asymptotic) / fixed-budget interval",
                 "fixed-budget interval, every budget", "anytime CS (asymptotic, from 30)",
                 "exact anytime CS (from 1)", "exact anytime CS time-uniform"):
        assert any(name in x for x in tables), name
    assert "the tables' `martingale`" not in text
    # QA: the page said "asymptotic CS" / "exact CS" (tables and prose) where status,
    # estimate and the figures say anytime (asymptotic) / exact anytime
    assert "asymptotic CS" not in text and "exact CS" not in text
    # the cache re-renders the same tables without re-running (the speed line is re-timed)
    again = coverage_study(tmp_path, tmp_path / "docs2", n_runs=60, budget=50, exact_runs=20,
                           progress=False, cache=cache).read_text()
    assert again.split("## Speed")[0] == text.split("## Speed")[0]


def test_paired_study_decides_a_clear_difference() -> None:
    """A target against a much worse copy of itself: the paired CS covers the true
    difference and decides its sign, never the wrong one."""
    o = _outputs(n_pool=600, n_test=600)
    from activetest.stats import log_softmax
    worse = o.outputs["a/few"].pool * 0.3  # flattened: higher log loss on every item
    o.outputs["a/zero"].pool = log_softmax(worse)
    p = coverage.run_paired(o, "a/zero", "a/few", "b/few", n_runs=200, budget=150,
                            exact_runs=50, seed=0)
    assert p.diff > 0.05
    assert p.uniform["asymptotic CS (from 30)"] > 0.85
    decided, wrong, _ = p.decided["asymptotic CS"]
    assert decided > 0.5 and wrong == 0.0
    assert p.uniform["exact CS (from 1)"] >= 0.9


def _row(dataset: str, target: str, cs: float) -> coverage.SettingCoverage:
    from activetest.experiments.paper import Setting

    return coverage.SettingCoverage(
        setting=Setting(dataset, target, "m/few"), method="ce+lure", loss="log", n_runs=3000,
        n_exact=0, pool_risk=0.5, test_truth=None, fixed={}, fixed_test={},
        uniform={"asymptotic CS (from 30)": cs}, peeking={}, stopping={}, widths={},
        ratios={})


def test_goals_name_every_setting_below_095() -> None:
    """intervals.md said '4 of 40 settings fall below 0.95, the worst' and named three (the
    three lowest, whatever their number): every setting below is named now, and only
    those."""
    rows = [_row("fpb", "a/few", 0.921), _row("fpb", "b/zero", 0.923),
            _row("fpb", "c/few", 0.940), _row("fpb", "d/zero", 0.946),
            _row("hs", "a/few", 0.967), _row("sst2", "a/few", 0.951)]
    assert coverage.settings_below(rows) == (
        "4 of 6 settings fall below 0.95: fpb a/few <- m/few 0.921, fpb b/zero <- m/few "
        "0.923, fpb c/few <- m/few 0.940, fpb d/zero <- m/few 0.946")
    assert coverage.settings_below(rows[3:]) == (
        "1 of 3 settings falls below 0.95: fpb d/zero <- m/few 0.946")
    assert coverage.settings_below(rows[4:]) == (
        "none of 2 settings falls below 0.95 (the lowest: sst2 a/few <- m/few 0.951)")


def test_the_one_run_figure_names_its_models_and_its_legend_hides_no_data() -> None:
    """QA of docs/intervals/cs_band.png: the legend sat inside the axes, over the exact
    CS's upper edge, and the title read "gemma3-270m/few <- gemma3-270m/few". The legend
    now lies below the axes, inside the figure, and the title names target, surrogate and
    method."""
    import matplotlib.pyplot as plt

    o = _outputs(n_pool=300, n_test=300)
    setting = settings_for(o)[0]
    fig = band_figure(coverage.band_curves(o, setting, 60, 0))
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        legend = ax.get_legend().get_window_extent(renderer)
        plot = ax.get_window_extent(renderer)
        assert legend.y1 <= plot.y0 or not legend.overlaps(plot), (legend, plot)
        assert fig.bbox.x0 <= legend.x0 and legend.x1 <= fig.bbox.x1
        assert fig.bbox.y0 <= legend.y0 and legend.y1 <= fig.bbox.y1
        title = ax.get_title()
        assert f"target {setting.target}" in title and f"surrogate {setting.surrogate}" in title
        assert "CE + LURE" in title and "<-" not in title
        # and the run: the pool's size and the seed (QA: neither was named)
        assert title.startswith(f"{setting.dataset} (N = 300): ") and title.endswith(
            "; CE + LURE, seed 0"), title
        assert inside(fig, ax.title), ax.title.get_window_extent(renderer)
        # the intervals by the product's names, legible (QA: 7 pt, "exact CS (95%, ...)")
        names = [t.get_text() for t in ax.get_legend().get_texts()]
        assert names[:3] == ["exact anytime 95% confidence sequence",
                             "anytime 95% confidence sequence (asymptotic, from 30 labels)",
                             "fixed-budget 95% interval"], names
        assert not small_texts(fig), small_texts(fig)
    finally:
        plt.close(fig)


def test_the_committed_one_run_figure_names_its_run_in_a_title_that_fits() -> None:
    """docs/intervals/cs_band.png as ``replot`` draws it from the saved run: the title
    names the pool's size and the seed (QA: neither was) and lies within the figure (a
    first try ran off its right edge)."""
    import matplotlib.pyplot as plt

    from activetest.experiments.coverage_figures import BandCurves

    band = BandCurves.load(Path(__file__).parents[2] / "docs" / "intervals" / "cs_band.npz")
    assert (band.dataset, band.pool_size, band.seed) == ("sst2", 2000, 0)
    fig = band_figure(band)
    try:
        fig.canvas.draw()
        title = fig.axes[0].title
        assert title.get_text() == ("sst2 (N = 2,000): target gemma3-270m/few, surrogate "
                                    "gemma3-270m/few; CE + LURE, seed 0")
        assert inside(fig, title), title.get_window_extent(fig.canvas.get_renderer())
    finally:
        plt.close(fig)


def test_a_saved_run_without_its_pool_size_is_refused_by_name(tmp_path: Path) -> None:
    """A run saved before the title named the pool (no ``pool_size``): replot says which
    file and what to re-run, not a KeyError."""
    from activetest.experiments.coverage_figures import BandCurves

    z = dict(np.load(Path(__file__).parents[2] / "docs" / "intervals" / "cs_band.npz"))
    del z["pool_size"]
    old = tmp_path / "cs_band.npz"
    np.savez_compressed(old, **z)
    with pytest.raises(ValueError, match=r"cs_band\.npz: no pool_size .* coverage"):
        BandCurves.load(old)


def test_the_page_s_tables_name_the_intervals_as_the_write_up_does() -> None:
    """docs/intervals.md is the study's write-up: its tables name the intervals with
    :func:`coverage.table_name` (the product's names), never the study's key
    "martingale" (QA: "martingale", "martingale (plain z)", "martingale width")."""
    page = (Path(__file__).parents[2] / "docs" / "intervals.md").read_text()
    tables = [x for x in page.splitlines() if x.startswith("|")]
    assert tables and not [x for x in tables if "martingale" in x]
    keys = ("bootstrap", "martingale", "martingale (observed SE only)", "martingale (plain z)")
    rows = {x.split("|")[2].strip() for x in tables
            if x.split("|")[1].strip() in ("fpb", "hs", "mmlu", "sst2", "subj", "all")}
    assert {coverage.table_name(k) for k in keys} <= rows
    assert "the tables' `martingale`" not in page
    # the confidence sequences too (QA: "asymptotic CS", "exact CS" ~20 times)
    assert "asymptotic CS" not in page and "exact CS" not in page
    # nor the shorthand headers (QA: "fixed min >= 30", "CS / fixed", "fixed width vs CE")
    assert not [x for x in ("fixed min", "fixed mean", "/ fixed at", "fixed width", "CS width")
                if x in page]
    assert coverage.table_name("asymptotic CS (from 30)") == "anytime CS (asymptotic, from 30)"
    assert coverage.table_name("exact CS / martingale") == \
        "exact anytime CS / fixed-budget interval"


PAGE = Path(__file__).parents[2] / "docs" / "intervals.md"
#: What names the real study's data (its datasets, models, folder): lines with these
#: differ from a toy study's by more than their numbers.
_REAL_DATA = re.compile(r"\b(fpb|hs|mmlu|sst2|subj|gemma|smollm)|^Generated by")
#: Lines worded by the numbers (a goal met or not, the settings that fall below it).
_WORDED = re.compile(r"\((\*\*not )?met(\*\*)?[);]| settings? (exceed|falls?) ")


def _shape(line: str) -> str:
    """A line with every number masked: what the write-up makes of it whatever the data."""
    return re.sub(r"[-+]?\d[\d,.]*", "#", line)


def test_the_page_is_the_write_up(toy_study: tuple[Path, Path]) -> None:
    """docs/intervals.md is what ``python -m activetest.experiments coverage`` writes,
    numbers aside: every prose line of the page is a line the write-up makes (but for
    those naming the real study's datasets and models), and its tables have the write-up's
    columns, in order. QA: the page had been edited by hand (the few-errors rule, a stop
    reads one CS, the sure bounds, the comparison note), so a re-run of the study dropped
    those paragraphs and the page's names drifted from the tables the code writes."""
    toy = (toy_study[0] / "docs" / "intervals.md").read_text().splitlines()
    page = PAGE.read_text().splitlines()
    made = {_shape(x) for x in toy if not x.startswith("|")}
    extra = [x[:120] for x in page if not x.startswith("|") and _shape(x) not in made
             and not _REAL_DATA.search(x)]
    assert not extra, extra
    shown = {_shape(x) for x in page if not x.startswith("|")}
    dropped = [x[:120] for x in toy if not x.startswith("|") and _shape(x) not in shown
               and "toy" not in x and not x.startswith("Generated by") and not _WORDED.search(x)]
    assert not dropped, dropped
    # and in the write-up's order (a paragraph moved by hand is not what a re-run writes;
    # the real study's numbers cannot be re-rendered: no cache of its 35 minutes is kept)

    def prose(lines: list[str], data: re.Pattern[str]) -> list[str]:
        return [_shape(x) for x in lines if not x.startswith("|") and not data.search(x)
                and not _WORDED.search(x)]

    assert prose(page, _REAL_DATA) == prose(toy, re.compile(r"toy|^Generated by"))

    def headers(lines: list[str]) -> list[list[str]]:  # the budget columns left out
        return [[c for c in _shape(x).split(" | ") if c != "#"] for x in lines
                if x.startswith(("| dataset |", "| method |"))]

    assert headers(page) == headers(toy)
