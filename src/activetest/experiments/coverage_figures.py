"""The two coverage figures of ``docs/intervals.md``, and the numbers they show.

``python -m activetest.experiments coverage`` pools the CE + LURE, log-loss rows of its
study into :class:`CoverageCurves`, draws ``coverage_by_budget.png`` and ``peeking.png``
and saves the curves beside them (``coverage_curves.npz``: no pickle), so that
:func:`replot_coverage` (``python -m activetest.experiments replot``) redraws the figures
without the ~35 minutes of simulation; the numbers are the study's, never recomputed.

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

__all__ = ["FIXED_KEYS", "PEEKING_KEYS", "CoverageCurves", "coverage_figure", "display_name",
           "peeking_figure", "plot_coverage_figures", "replot_coverage"]

#: The study's rows drawn in ``coverage_by_budget.png`` and ``peeking.png``, in order.
FIXED_KEYS = ("bootstrap", "martingale", "martingale (plain z)")
PEEKING_KEYS = ("bootstrap", "martingale", "asymptotic CS", "exact CS")
#: The goal the fixed-budget interval is held to (issue 13; intervals.md's "Goals").
GOAL = 0.94
#: The smallest text in the figures, in points (the legend was 6.5 pt: QA).
MIN_FONT = 8.0
FILE = "coverage_curves.npz"
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
        n_exact: runs per setting the exact CS was computed on.
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
    """Redraw the two coverage figures in ``folder`` from the curves the study saved
    there (no simulation); returns the PNGs written.

    Raises:
        FileNotFoundError: no saved curves in ``folder``.
    """
    path = Path(folder) / FILE
    if not path.exists():
        raise FileNotFoundError(f"no saved curves ({path}); python -m activetest.experiments "
                                "coverage writes them")
    return plot_coverage_figures(CoverageCurves.load(path), folder)
