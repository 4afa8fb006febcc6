"""The three figures of ``docs/intervals.md``, and the numbers they show.

``python -m activetest.experiments coverage`` pools the CE + LURE, log-loss rows of its
study into :class:`CoverageCurves`, draws ``coverage_by_budget.png`` and ``peeking.png``
and saves the curves beside them (``coverage_curves.npz``: no pickle); it draws one seeded
run's intervals (:class:`BandCurves`) into ``cs_band.png`` and saves them beside it
(``cs_band.npz``). :func:`replot_coverage` (``python -m activetest.experiments replot``)
redraws all three without the ~35 minutes of simulation; the numbers are the study's,
never recomputed.

The intervals go by the product's names (:mod:`activetest.session.interval_names`): the
study's ``martingale`` rows are the **fixed-budget interval** sessions show, its
``asymptotic CS`` / ``exact CS`` the **anytime** and **exact anytime** confidence sequences.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.session.interval_names import (
    ANYTIME,
    BOOTSTRAP,
    EXACT_ANYTIME,
    FIXED_BUDGET,
    interval_name,
)

__all__ = ["BAND_FILE", "FIXED_KEYS", "PEEKING_KEYS", "BandCurves", "CoverageCurves",
           "band_figure", "coverage_figure", "display_name", "peeking_figure", "plot_band",
           "plot_coverage_figures", "replot_coverage"]

#: The study's rows drawn in ``coverage_by_budget.png`` and ``peeking.png``, in order.
FIXED_KEYS = ("bootstrap", "martingale", "martingale (plain z)")
PEEKING_KEYS = ("bootstrap", "martingale", "asymptotic CS", "exact CS")
#: The goal the fixed-budget interval is held to (issue 13; intervals.md's "Goals").
GOAL = 0.94
#: The smallest text in the figures, in points (the legend was 6.5 pt: QA).
MIN_FONT = 8.0
FILE = "coverage_curves.npz"
#: The one run's intervals, saved beside ``cs_band.png``.
BAND_FILE = "cs_band.npz"
_STYLE = {"bootstrap": "C0-", "martingale": "C3-", "martingale (plain z)": "C3:",
          "asymptotic CS": "C2-", "exact CS": "C4-"}


def display_name(key: str, level: float = 0.95) -> str:
    """What a study row is called in the figures: the product's name of the interval
    (QA: the curves were "martingale" where the page and the CLI say "fixed-budget")."""
    names = {"bootstrap": f"{interval_name(BOOTSTRAP, level)} (the paper's, ±1.96 sd)",
             "martingale": interval_name(FIXED_BUDGET, level),
             "martingale (plain z)": f"{interval_name(FIXED_BUDGET, level)}, plain z "
                                     "(±1.96 SE, no skewness correction)",
             "asymptotic CS": interval_name(ANYTIME, level) + " (asymptotic)",
             "exact CS": interval_name(EXACT_ANYTIME, level)}
    return names.get(key, key)


@dataclass(frozen=True)
class CoverageCurves:
    """What the two figures draw: CE + LURE, log loss, pooled (mean) over settings.

    Attributes:
        n_runs: runs per setting.
        n_exact: runs per setting the exact anytime CS was computed on.
        datasets: the datasets, one panel each in ``coverage_by_budget.png``.
        n_settings: settings pooled per dataset.
        fixed: ``(datasets, FIXED_KEYS, K)`` share of runs whose interval at budget k
            (fixed in advance) contains the pool risk.
        peeking: ``(PEEKING_KEYS, K)`` share of runs whose interval excluded the pool
            risk at some budget in ``stop_from..k`` (all settings; NaN before).
        stop_from: the first budget checked in ``peeking``.
    """

    n_runs: int
    n_exact: int
    datasets: tuple[str, ...]
    n_settings: tuple[int, ...]
    fixed: np.ndarray
    peeking: np.ndarray
    stop_from: int

    @property
    def budget(self) -> int:
        """The largest budget drawn (K)."""
        return int(self.fixed.shape[-1])

    @classmethod
    def pool(cls, rows: Sequence[Any], budget: int, stop_from: int) -> CoverageCurves:
        """Pool the study's rows (:class:`~activetest.experiments.coverage_runs.
        SettingCoverage` of one method and loss) over settings, per dataset for the
        fixed-budget coverage and over all of them for peeking; curves cut at ``budget``."""
        datasets = tuple(dict.fromkeys(r.setting.dataset for r in rows))
        by_ds = [[r for r in rows if r.setting.dataset == ds] for ds in datasets]
        fixed = np.array([[np.mean([r.fixed[k][:budget] for r in rs if k in r.fixed], axis=0)
                           for k in FIXED_KEYS] for rs in by_ds])
        peek = np.full((len(PEEKING_KEYS), budget), np.nan)
        for i, k in enumerate(PEEKING_KEYS):
            have = [r.peeking[k][:budget] for r in rows if np.ndim(r.peeking.get(k))]
            if have:
                peek[i] = np.mean(have, axis=0)
        peek[:, : stop_from - 1] = np.nan
        return cls(n_runs=int(rows[0].n_runs), n_exact=int(rows[0].n_exact),
                   datasets=datasets, n_settings=tuple(len(rs) for rs in by_ds),
                   fixed=fixed, peeking=peek, stop_from=int(stop_from))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the curves to ``path`` (an ``.npz`` without pickled objects)."""
        path = Path(path)
        np.savez_compressed(path, n_runs=np.array(self.n_runs), n_exact=np.array(self.n_exact),
                            datasets=np.array(self.datasets),
                            n_settings=np.array(self.n_settings, dtype=np.int64),
                            fixed_keys=np.array(FIXED_KEYS), peeking_keys=np.array(PEEKING_KEYS),
                            fixed=np.asarray(self.fixed, dtype=np.float64),
                            peeking=np.asarray(self.peeking, dtype=np.float64),
                            stop_from=np.array(self.stop_from))
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CoverageCurves:
        """The curves :meth:`save` wrote.

        Raises:
            ValueError: curves of other rows than :data:`FIXED_KEYS` / :data:`PEEKING_KEYS`.
        """
        with np.load(path, allow_pickle=False) as z:
            if (tuple(map(str, z["fixed_keys"])) != FIXED_KEYS
                    or tuple(map(str, z["peeking_keys"])) != PEEKING_KEYS):
                raise ValueError(f"{path}: curves of other intervals than this code draws; "
                                 "rerun python -m activetest.experiments coverage")
            return cls(n_runs=int(z["n_runs"]), n_exact=int(z["n_exact"]),
                       datasets=tuple(str(d) for d in z["datasets"]),
                       n_settings=tuple(int(n) for n in z["n_settings"]),
                       fixed=np.array(z["fixed"], dtype=np.float64),
                       peeking=np.array(z["peeking"], dtype=np.float64),
                       stop_from=int(z["stop_from"]))


@dataclass(frozen=True)
class BandCurves:
    """What ``cs_band.png`` draws: one seeded run of CE + LURE (log loss) on one setting,
    its intervals at every label count ``1..K`` (each array ``(K,)``, float64, nats).

    Attributes:
        dataset, target, surrogate: the setting (the target's outputs are scored, the
            surrogate's drive the CE acquisition).
        seed: the run's seed.
        pool_size: N, the items of the pool the run draws from (and whose mean loss is the
            pool risk).
        estimate: the LURE estimate after k labels.
        fixed_low, fixed_high: the fixed-budget 95% interval (``fixed_interval_curve``).
        anytime_low, anytime_high: the anytime 95% CS, asymptotic (``asymptotic_cs``),
            drawn from ``claimed_from`` labels.
        exact_low, exact_high: the exact anytime 95% CS (``exact_cs``), from the first
            label.
        claimed_from: the label count the anytime CS (asymptotic) is claimed from.
        pool_risk: the pool's mean log loss (what the estimate is unbiased for).
        test_truth: the test set's mean log loss, or None (the pool is the truth).
    """

    dataset: str
    target: str
    surrogate: str
    seed: int
    pool_size: int
    estimate: np.ndarray
    fixed_low: np.ndarray
    fixed_high: np.ndarray
    anytime_low: np.ndarray
    anytime_high: np.ndarray
    exact_low: np.ndarray
    exact_high: np.ndarray
    claimed_from: int
    pool_risk: float
    test_truth: float | None

    _ARRAYS = ("estimate", "fixed_low", "fixed_high", "anytime_low", "anytime_high",
               "exact_low", "exact_high")

    @property
    def budget(self) -> int:
        """The number of labels drawn (K)."""
        return int(self.estimate.shape[0])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the run to ``path`` (an ``.npz`` without pickled objects; no test set:
        ``test_truth`` NaN)."""
        path = Path(path)
        np.savez_compressed(
            path, dataset=np.array(self.dataset), target=np.array(self.target),
            surrogate=np.array(self.surrogate), seed=np.array(self.seed),
            pool_size=np.array(self.pool_size), claimed_from=np.array(self.claimed_from),
            pool_risk=np.array(self.pool_risk),
            test_truth=np.array(np.nan if self.test_truth is None else self.test_truth),
            **{k: np.asarray(getattr(self, k), dtype=np.float64) for k in self._ARRAYS})
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> BandCurves:
        """The run :meth:`save` wrote.

        Raises:
            ValueError: a file without the pool size (written before the figure's title
                named it): the study re-draws it (``python -m activetest.experiments
                coverage``).
        """
        with np.load(path, allow_pickle=False) as z:
            if "pool_size" not in z.files:
                raise ValueError(f"{path}: no pool_size (saved before cs_band.png named "
                                 "its pool); re-run python -m activetest.experiments coverage")
            test = float(z["test_truth"])
            return cls(dataset=str(z["dataset"]), target=str(z["target"]),
                       surrogate=str(z["surrogate"]), seed=int(z["seed"]),
                       pool_size=int(z["pool_size"]),
                       claimed_from=int(z["claimed_from"]), pool_risk=float(z["pool_risk"]),
                       test_truth=None if np.isnan(test) else test,
                       **{k: np.array(z[k], dtype=np.float64) for k in cls._ARRAYS})


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def coverage_figure(curves: CoverageCurves) -> Any:
    """``coverage_by_budget.png`` (laid out, not saved): per dataset, the share of runs
    whose 95% interval at a budget fixed in advance contains the pool risk."""
    plt = _pyplot()
    n = len(curves.datasets)
    fig, axes = plt.subplots(1, n, figsize=(max(3.1 * n, 7.5), 4.2), sharey=True,
                             squeeze=False, layout="constrained")
    axes = axes[0]
    k = np.arange(1, curves.budget + 1)
    for ax, ds, n_set, cov in zip(axes, curves.datasets, curves.n_settings, curves.fixed,
                                  strict=True):
        for key, c in zip(FIXED_KEYS, cov, strict=True):
            ax.plot(k[9:], c[9:], _STYLE[key], lw=1.1, label=display_name(key))
        ax.axhline(0.95, color="k", lw=0.7, label="nominal level 0.95")
        ax.axhline(GOAL, color="k", lw=0.7, ls="--",
                   label=f"goal: at least {GOAL} from 30 labels (intervals.md)")
        ax.set_ylim(0.7, 1.0)
        ax.set_title(f"{ds} ({n_set} settings)", fontsize=9)
        ax.set_xlabel("labels (budget fixed in advance)", fontsize=MIN_FONT)
        ax.tick_params(labelsize=MIN_FONT)
    axes[0].set_ylabel("share of runs covering the pool risk", fontsize=MIN_FONT)
    fig.suptitle("Fixed-budget coverage of the pool risk, 95% intervals\nCE acquisition + "
                 f"LURE, log loss, {curves.n_runs:,} runs per setting, pooled over each "
                 "dataset's settings", fontsize=10)
    _legend_below(fig, *axes[0].get_legend_handles_labels())
    return fig


def _legend_below(fig: Any, handles: list[Any], labels: list[str]) -> None:
    """One legend below the panels, in as many columns (up to 3) as fit the width."""
    for ncol in (3, 2, 1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=ncol,
                            fontsize=MIN_FONT)
        fig.canvas.draw()
        box = legend.get_window_extent(fig.canvas.get_renderer())
        if ncol == 1 or (box.x0 >= fig.bbox.x0 and box.x1 <= fig.bbox.x1):
            return
        legend.remove()


def peeking_figure(curves: CoverageCurves) -> Any:
    """``peeking.png`` (laid out, not saved): the share of runs whose interval excluded
    the pool risk at some budget from ``stop_from`` to M, checked after every label."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 5.2), layout="constrained")
    k = np.arange(1, curves.budget + 1)
    s = curves.stop_from - 1
    for key, c in zip(PEEKING_KEYS, curves.peeking, strict=True):
        if np.isfinite(c[s:]).any():
            runs = f" (first {curves.n_exact:,} runs of each setting)" if key == "exact CS" \
                else ""
            ax.plot(k[s:], c[s:], _STYLE[key], lw=1.2, label=display_name(key) + runs)
    ax.axhline(0.05, color="k", lw=0.7, label="0.05 = 1 - level: what a CS may not exceed")
    ax.set_xlabel("labels M", fontsize=9)
    ax.set_ylabel(f"P(pool risk excluded at some budget in {curves.stop_from}..M)",
                  fontsize=9)
    ax.tick_params(labelsize=MIN_FONT)
    ax.set_title("Checking after every label: CE acquisition + LURE, log loss, 95%, "
                 f"all {sum(curves.n_settings)} settings,\n{curves.n_runs:,} runs per setting",
                 fontsize=9)
    _legend_below(fig, *ax.get_legend_handles_labels())
    return fig


def band_figure(band: BandCurves) -> Any:
    """``cs_band.png`` (laid out, not saved): the run's estimate, fixed-budget interval,
    both confidence sequences, the pool risk and (where there is one) the test-set truth,
    at every label count."""
    plt = _pyplot()
    k = np.arange(1, band.budget + 1)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(k, np.clip(band.exact_low, 0, None), band.exact_high, color="C4",
                    alpha=0.15, label=interval_name(EXACT_ANYTIME))
    s = band.claimed_from - 1
    ax.fill_between(k[s:], band.anytime_low[s:], band.anytime_high[s:], color="C2", alpha=0.3,
                    label=f"{interval_name(ANYTIME)} (asymptotic, from {band.claimed_from} "
                          "labels)")
    ax.plot(k[1:], band.fixed_low[1:], "C3-", lw=0.8, label=interval_name(FIXED_BUDGET))
    ax.plot(k[1:], band.fixed_high[1:], "C3-", lw=0.8)
    ax.plot(k, band.estimate, "k-", lw=1.0, label="estimate (LURE)")
    ax.axhline(band.pool_risk, color="k", ls="--", lw=0.8, label="pool risk")
    if band.test_truth is not None:
        ax.axhline(band.test_truth, color="C1", ls=":", lw=1.0, label="test-set truth")
    ax.set_ylim(max(0.0, band.pool_risk - 1.0), band.pool_risk + 1.0)
    ax.set_xlabel("labels")
    ax.set_ylabel("log loss (nats)")
    # the run named by its pool size and seed (QA: neither was); one line that fits the
    # figure (a second would move the axes)
    ax.set_title(f"{band.dataset} (N = {band.pool_size:,}): target {band.target}, surrogate "
                 f"{band.surrogate}; CE + LURE, seed {band.seed}", fontsize=9)
    # below the axes: inside, it hid the exact anytime CS's upper edge (QA)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.tight_layout()
    return fig


def plot_band(band: BandCurves, folder: str | os.PathLike[str]) -> Path:
    """Draw ``cs_band.png`` into ``folder`` and save the run beside it (:data:`BAND_FILE`);
    returns the PNG's path."""
    plt = _pyplot()
    path = Path(folder) / "cs_band.png"
    fig = band_figure(band)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    band.save(Path(folder) / BAND_FILE)
    return path


def plot_coverage_figures(curves: CoverageCurves, folder: str | os.PathLike[str]
                          ) -> list[Path]:
    """Draw ``coverage_by_budget.png`` and ``peeking.png`` into ``folder`` and save the
    curves beside them (:data:`FILE`); returns the PNGs' paths."""
    plt = _pyplot()
    folder = Path(folder)
    out = []
    for name, make in (("coverage_by_budget.png", coverage_figure),
                       ("peeking.png", peeking_figure)):
        fig = make(curves)
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        out.append(folder / name)
    curves.save(folder / FILE)
    return out


def replot_coverage(folder: str | os.PathLike[str]) -> list[Path]:
    """Redraw the three figures in ``folder`` from the curves the study saved there (no
    simulation): the two coverage figures and the one run's ``cs_band.png``; returns the
    PNGs written (QA: ``cs_band.png`` was not redrawn).

    Raises:
        FileNotFoundError: neither the curves nor the run saved in ``folder``.
    """
    folder = Path(folder)
    saved = [folder / f for f in (FILE, BAND_FILE) if (folder / f).exists()]
    if not saved:
        raise FileNotFoundError(f"no saved curves ({folder / FILE}, {folder / BAND_FILE}); "
                                "python -m activetest.experiments coverage writes them")
    out = []
    if folder / FILE in saved:
        out += plot_coverage_figures(CoverageCurves.load(folder / FILE), folder)
    if folder / BAND_FILE in saved:
        out.append(plot_band(BandCurves.load(folder / BAND_FILE), folder))
    return out
