"""The relative-error figures of ``docs/reproduction.md``, and the numbers they show.

``python -m activetest.experiments run`` draws one figure per dataset and saves the
curves it drew beside it (``<dataset>_relative_error.npz``: no pickle), so that
:func:`replot_reproduction` (``python -m activetest.experiments replot``) redraws the
figures without the ~15 minutes of simulation; the numbers are the study's, never
recomputed or made up.

The quantity drawn is the paper's relative error: the median over runs of the squared
error of the risk estimate of active testing with k labels, divided by that of uniform
sampling charged the in-context labels (k + n_shots labels for a zero-shot target),
at k = 1..M (:func:`activetest.experiments.paper.run_setting`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PANEL_TITLES", "RelativeErrorCurves", "log_ticks", "plot_relative_error",
           "relative_error_figure", "replot_reproduction"]

#: The panel of each method the figure draws (the rule of the adaptive rows is named: the
#: report's rows run the original in-run rule, not the one new sessions run).
PANEL_TITLES = {"ce+lure": "CE acquisition + LURE",
                "adaptive+cv_lure": "adaptive design (original in-run rule) + adaptive LURE"}
#: The y axis: what is divided by what (QA: "relative error" did not say which error).
Y_LABEL = "median squared error, active / uniform"
X_LABEL = "labels acquired by active testing"
#: The smallest text in the figure, in points (legends were 6.5 pt: QA).
MIN_FONT = 8.0
SUFFIX = "_relative_error"


def log_ticks(low: float, high: float) -> list[float]:
    """The labelled ticks of a log axis from ``low`` to ``high`` (both > 0): every
    integer multiple of a power of ten (0.6, 0.7, ..., 2, 3) where the axis spans at most
    1.2 decades, else the 1-2-5 ones (0.2, 0.5, 1, 2, 5, 10); and at each end the nearest
    integer multiple inside the axis where the next label is at least 1.4 times off, so
    the lowest label is at most twice ``low`` and the highest at least half ``high``
    (QA: below 1 the axes had no label at all, so a ratio of 0.3 or 0.7 could not be read).

    Raises:
        ValueError: ``low`` not below ``high``, or either not positive.
    """
    if not 0 < low < high:
        raise ValueError(f"a log axis needs 0 < low < high, got {low!r}, {high!r}")
    exps = range(int(np.floor(np.log10(low))), int(np.ceil(np.log10(high))) + 1)
    nice = (float(f"{c}e{e}") for e in exps for c in range(1, 10))  # 0.6, not 0.6000000000000001
    every = sorted(v for v in nice if low <= v <= high)
    if not every:
        return []
    if np.log10(high / low) <= 1.2:
        return every
    ticks = [v for v in every if round(v / 10.0 ** np.floor(np.log10(v) + 1e-9)) in (1, 2, 5)]
    if not ticks or ticks[0] / every[0] >= 1.4:
        ticks.insert(0, every[0])
    if ticks[-1] < every[-1] and every[-1] / ticks[-1] >= 1.4:
        ticks.append(every[-1])
    return ticks


@dataclass(frozen=True)
class RelativeErrorCurves:
    """The curves of one dataset's figure.

    Attributes:
        dataset: the dataset's key (``sst2``), which names the files.
        name: its display name (``SST-2``).
        n_pool: pool items.
        truth: where the true risk comes from (``"a held-out test set of 1,000"``).
        n_runs: seeded runs per setting.
        settings: each setting's ``"target <- surrogate"``.
        offsets: labels charged to active testing per setting (the in-context examples of
            a zero-shot target; 0 otherwise).
        methods: the methods drawn, one panel each (keys of :data:`PANEL_TITLES`).
        relative: ``(methods, settings, M)`` relative error at k = 1..M active labels
            (NaN where the charged uniform budget passes the simulated one).
    """

    dataset: str
    name: str
    n_pool: int
    truth: str
    n_runs: int
    settings: tuple[str, ...]
    offsets: tuple[int, ...]
    methods: tuple[str, ...]
    relative: np.ndarray

    @property
    def budget(self) -> int:
        """The largest label count drawn (M)."""
        return int(self.relative.shape[-1])

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the curves to ``path`` (an ``.npz`` without pickled objects)."""
        path = Path(path)
        np.savez_compressed(path, dataset=np.array(self.dataset), name=np.array(self.name),
                            n_pool=np.array(self.n_pool), truth=np.array(self.truth),
                            n_runs=np.array(self.n_runs), settings=np.array(self.settings),
                            offsets=np.array(self.offsets, dtype=np.int64),
                            methods=np.array(self.methods),
                            relative=np.asarray(self.relative, dtype=np.float64))
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> RelativeErrorCurves:
        """The curves :meth:`save` wrote."""
        with np.load(path, allow_pickle=False) as z:
            return cls(dataset=str(z["dataset"]), name=str(z["name"]), n_pool=int(z["n_pool"]),
                       truth=str(z["truth"]), n_runs=int(z["n_runs"]),
                       settings=tuple(str(s) for s in z["settings"]),
                       offsets=tuple(int(o) for o in z["offsets"]),
                       methods=tuple(str(m) for m in z["methods"]),
                       relative=np.array(z["relative"], dtype=np.float64))


def relative_error_figure(curves: RelativeErrorCurves) -> Any:
    """The figure of :func:`plot_relative_error` (laid out, not saved): a panel per method,
    a line per setting, the title naming the data, the runs and the budgets."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    n = len(curves.methods)
    fig, axes = plt.subplots(1, n, figsize=(6.4 * n, 5.0), sharey=True, squeeze=False,
                             layout="constrained")
    k = np.arange(1, curves.budget + 1)
    for ax, method, rel in zip(axes[0], curves.methods, curves.relative, strict=True):
        for label, r in zip(curves.settings, rel, strict=True):
            ax.plot(k, r, lw=1.2, label=label)
        ax.axhline(1.0, color="k", lw=0.8, ls="--", label="1: no gain over uniform")
        ax.set_yscale("log")
        ax.set_xlabel(X_LABEL, fontsize=9)
        ax.set_title(PANEL_TITLES.get(method, method), fontsize=10)
        ax.tick_params(which="both", labelsize=MIN_FONT)
    # labels in plain numbers (1, 0.5; it read 10^0 and 4x10^0) on both sides of 1
    # (log_ticks), the other powers' multiples as unlabelled minor ticks
    low, high = axes[0][0].get_ylim()
    for ax in axes[0]:
        ax.set_ylim(low, high)
        ax.yaxis.set_major_locator(FixedLocator(log_ticks(low, high)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    axes[0][0].set_ylabel(f"{Y_LABEL} (log scale)", fontsize=9)
    charged = sorted({o for o in curves.offsets if o})
    charge = (f"; uniform is charged the {'/'.join(map(str, charged))} in-context labels of "
              "the zero-shot targets" if charged else "")
    fig.suptitle(f"{curves.name}: median squared error of the risk estimate (log loss), "
                 f"active / uniform, at 1-{curves.budget} labels, {curves.n_runs:,} runs per "
                 "setting\n"
                 f"pool {curves.n_pool:,} items, truth from {curves.truth}{charge}",
                 fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=MIN_FONT,
               title="target <- surrogate (bundled models; zero-/few-shot)",
               title_fontsize=MIN_FONT)
    return fig


def plot_relative_error(curves: RelativeErrorCurves, path: str | os.PathLike[str]) -> Path:
    """Draw ``curves`` to ``path`` (PNG) and save the numbers beside it (same stem,
    ``.npz``); returns the PNG's path."""
    import matplotlib.pyplot as plt

    path = Path(path)
    fig = relative_error_figure(curves)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    curves.save(path.with_suffix(".npz"))
    return path


def replot_reproduction(folder: str | os.PathLike[str]) -> list[Path]:
    """Redraw every ``*_relative_error.png`` in ``folder`` from the ``.npz`` saved beside
    it by the study (no simulation); returns the PNGs written.

    Raises:
        FileNotFoundError: no saved curves in ``folder``.
    """
    files = sorted(Path(folder).glob(f"*{SUFFIX}.npz"))
    if not files:
        raise FileNotFoundError(f"no saved curves (*{SUFFIX}.npz) in {folder}; "
                                "python -m activetest.experiments run writes them")
    return [plot_relative_error(RelativeErrorCurves.load(f), f.with_suffix(".png"))
            for f in files]
