"""The session report's figures (PNG, matplotlib's Agg canvas; no pyplot global state).

* :func:`plot_estimates`: the estimate and its interval against the number of labels,
  active vs the uniform-equivalent, one panel per metric, with the truth if known.
* :func:`plot_differences`: a compared session's paired difference ``R_A - R_B`` (LURE)
  and its intervals against the number of labels, one panel per comparison.
* :func:`plot_acquisition`: the pool's acquisition scores (histogram, log counts)
  with the acquired items marked, and the acquisition probability ``q_m`` of each
  acquired item against the step, beside the uniform ``1/(N - m + 1)``.

Figures have a fixed size in pixels (:data:`ESTIMATES_SIZE`, :data:`ACQUISITION_SIZE`).
"""

from __future__ import annotations

import contextlib
import textwrap
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from activetest.session.interval_names import (
    ANYTIME,
    BOOTSTRAP,
    FIXED_BUDGET,
    OUTSIDE_POINT,
    few_errors_name,
    interval_name,
)
from activetest.session.report.text import for_matplotlib

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from activetest.session.report.data import DifferenceCurve, Estimate, Interval, ReportData

__all__ = ["ACQUISITION_SIZE", "DIFFERENCES_SIZE", "DPI", "ESTIMATES_SIZE", "adaptive_design",
           "differences_figure", "estimates_figure", "figure_fonts", "plot_acquisition",
           "plot_differences", "plot_estimates"]

#: Resolution of the saved PNGs (dots per inch).
DPI = 100
#: Width and height in pixels of :func:`plot_estimates`'s PNG.
ESTIMATES_SIZE = (1000, 450)
#: Width and height in pixels of :func:`plot_acquisition`'s PNG.
ACQUISITION_SIZE = (1000, 400)
#: Width and height in pixels of :func:`plot_differences`'s PNG.
DIFFERENCES_SIZE = (1000, 450)

#: A metric's axis label with its unit (QA: "log loss" left the unit to guess; the
#: losses are natural-log NLLs). The error rate is a share, its axis says so by its range.
_UNITS = {"log loss": "log loss (nats)"}

#: What a fixed acquisition's pool score is, for the scores panel's axis.
_SCORE_MEANING = {
    "ce": "the target's expected loss under the surrogate",
    "zero_one": "the target's expected 0-1 loss under the surrogate",
    "pe": "the surrogate's predictive entropy",
    "compare": "the expected size of the two targets' loss difference",
    "expected_loss": "the target's expected loss under the surrogate",
    "uniform": "the same for every item",
}

_ACTIVE = "#1f77b4"
_UNIFORM = "#ff7f0e"
_MARK = "#d62728"


def _charmap(path: str) -> set[int]:
    """The code points the font file at ``path`` has glyphs for (empty if unreadable)."""
    from matplotlib.ft2font import FT2Font

    try:
        return set(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return set()


def _cjk(ch: str) -> bool:
    """Whether ``ch`` is Chinese, Japanese or Korean script (or their punctuation)."""
    c = ord(ch)
    return (0x2E80 <= c <= 0x9FFF or 0xAC00 <= c <= 0xD7AF or 0xF900 <= c <= 0xFAFF
            or 0xFF00 <= c <= 0xFFEF or 0x20000 <= c <= 0x3FFFF)


def _fallback_fonts(missing: set[int]) -> tuple[list[str], set[int]]:
    """Installed font families (matplotlib's list) that cover ``missing``, in turn, and
    the code points none covers."""
    from matplotlib import font_manager

    names: list[str] = []
    left = set(missing)
    seen: set[str] = set()
    for entry in font_manager.fontManager.ttflist:
        if not left:
            break
        # "Last Resort" (bundled with matplotlib) maps every character to a box naming
        # its block: a placeholder, not the character
        if entry.name in seen or entry.style != "normal" or "last resort" in entry.name.lower():
            continue
        has = _charmap(entry.fname) & left
        if has:
            seen.add(entry.name)
            names.append(entry.name)
            left -= has
    return names, left


@contextlib.contextmanager
def figure_fonts(texts: Sequence[str]) -> Iterator[None]:
    """Figures drawn inside see the characters of ``texts`` (task, model and metric
    names): where matplotlib's default font lacks some, an installed font that has
    them is added as a fallback (matplotlib >= 3.6 falls back per glyph through a
    ``font.family`` list); where no installed font has them, ONE note says which the
    figures cannot show and which font package to install, in place of matplotlib's
    warning per glyph (QA: three "Glyph ... missing from font(s) DejaVu Sans" notes and
    empty boxes for a task named in Chinese). No font is bundled."""
    import matplotlib
    from matplotlib import font_manager

    wanted = {ord(ch) for text in texts for ch in str(text) if ord(ch) > 0x7F
              and ch.isprintable() and not ch.isspace()}
    if not wanted:
        yield
        return
    family = list(matplotlib.rcParams["font.family"])
    default = font_manager.findfont(font_manager.FontProperties(family=family))
    missing = wanted - _charmap(default)
    if not missing:
        yield
        return
    names, left = _fallback_fonts(missing)
    with contextlib.ExitStack() as stack:
        if names:
            stack.enter_context(matplotlib.rc_context(
                {"font.family": [*font_manager.FontProperties(family=family).get_family(),
                                 *names]}))
        if left:
            chars = "".join(sorted(chr(c) for c in left))
            package = ("fonts-noto-cjk" if any(_cjk(chr(c)) for c in left)
                       else "fonts-noto-core")
            warnings.warn(f"the figures cannot show {len(left)} character(s) of the task, "
                          f"model or metric names ({chars[:20]}"
                          f"{'…' if len(chars) > 20 else ''}): no installed font has them, "
                          f"so they are drawn as empty boxes (report.md and report.html "
                          f"show them); install a font that has them (e.g. Debian/Ubuntu: "
                          f"apt install {package}) and write the report again",
                          UserWarning, stacklevel=3)
            stack.enter_context(warnings.catch_warnings())
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from font")
        yield


def _figure(size: tuple[int, int]) -> Figure:
    fig = Figure(figsize=(size[0] / DPI, size[1] / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: str | Path) -> Path:
    import io

    from activetest.session.report.files import write_file

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    png = io.BytesIO()
    fig.savefig(png, dpi=DPI, format="png")  # no bbox="tight": keep the exact pixel size
    return write_file(out, png.getvalue())  # whole or not at all, a failure names it


def _plain_mark(data: ReportData) -> str:
    """What the plain mean's legend entry adds: at a census, whose line is biased at the
    earlier label counts and the pool's exact value at the last, both."""
    if data.census and data.uniform_biased:
        return " (biased; every item labelled: the pool's value)"
    return " (biased)" if data.uniform_biased else ""


def _values(ests: list[Estimate | None]) -> np.ndarray:
    """The estimates' values (NaN: none)."""
    return np.array([np.nan if e is None else e.value for e in ests], dtype=np.float64)


def _band(ivs: list[Interval | None]) -> tuple[np.ndarray, np.ndarray]:
    """The intervals' ``(low, high)`` columns (NaN: none)."""
    return (np.array([np.nan if iv is None else iv.low for iv in ivs], dtype=np.float64),
            np.array([np.nan if iv is None else iv.high for iv in ivs], dtype=np.float64))


def _clipped(values: np.ndarray, bounds: tuple[float | None, float | None]) -> np.ndarray:
    lo, hi = bounds
    return np.clip(values, -np.inf if lo is None else lo, np.inf if hi is None else hi)


def _fill(ax: Axes, x: np.ndarray, low: np.ndarray, high: np.ndarray, **kw: Any) -> None:
    """A band over ``x``; one label count gets a short bar of its width (a band over a
    single x draws nothing, while the legend still named it: QA, 2 labels). The band's
    ends are kept on the axes (``_bands``) for :func:`_readable_window`."""
    bands = ax.__dict__.setdefault("_bands", [])
    bands.append((np.asarray(x, dtype=np.float64), np.asarray(low, dtype=np.float64),
                  np.asarray(high, dtype=np.float64)))
    if x.size == 1:
        x = np.array([x[0] - 0.25, x[0] + 0.25])
        low, high = np.repeat(low, 2), np.repeat(high, 2)
    ax.fill_between(x, low, high, **kw)


def _band_name(kind: str, level: float, active: list[Estimate], band: str,
               what: str = "errors") -> str:
    """The legend's name of the active estimate's ``band`` (``"fixed"`` or ``"anytime"``)
    of ``kind``: the exact anytime CS's where it stands in at the counts drawn, while few
    errors (``what``: :attr:`ReportData.few_what`) are labelled (:attr:`Estimate.basis`;
    QA: the legend called it "anytime")."""
    exact = [a.basis == "exact" for a in active if getattr(a, band) is not None]
    if not any(exact):
        return interval_name(kind, level)
    return few_errors_name(kind, level, everywhere=all(exact), what=what)


def _band_style(kind: str, active: list[Estimate], band: str) -> dict[str, Any]:
    """How the active estimate's ``band`` of ``kind`` is drawn: a band the exact anytime CS
    stands in for (few errors) gets its own pattern, so that its legend entry differs from
    the plain interval's beside it (QA: in a two-metric figure "fixed-budget 95% interval"
    and "... (exact anytime CS while few errors)" had one symbol)."""
    exact = any(a.basis == "exact" for a in active if getattr(a, band) is not None)
    if kind == ANYTIME:  # the wider band, drawn beneath: a hatch only
        return {"facecolor": "none", "edgecolor": _ACTIVE, "linewidth": 0.0, "alpha": 0.5,
                "hatch": "xx" if exact else "///"}
    if exact:  # a lighter fill, dotted
        return {"facecolor": (*to_rgb(_ACTIVE), 0.15), "edgecolor": _ACTIVE, "linewidth": 0.0,
                "hatch": "..."}
    return {"color": _ACTIVE, "alpha": 0.3, "linewidth": 0}


def _ring_outside(ax: Axes, x: np.ndarray, active: list[Estimate]) -> None:
    """Ring the estimates that lie outside the bounds that hold surely at their count
    (:attr:`Estimate.outside_sure`), kept as they are (unbiased), named in the legend as
    the table marks them (:data:`OUTSIDE_POINT`; QA: a single risk's, marked † in the
    report's table, was drawn unringed)."""
    out = np.array([a.outside_sure is not None for a in active], dtype=bool)
    if out.any():
        ax.plot(x[out], _values(active)[out], linestyle="none", marker="o", markersize=7,
                markerfacecolor="none", markeredgecolor=_MARK, clip_on=False,
                label=for_matplotlib(OUTSIDE_POINT))


def _plot_metric(ax: Axes, data: ReportData, metric: str) -> None:
    rows = data.history.get(metric, [])
    bounds = data.value_range.get(metric, (None, None))
    ax.set_title(for_matplotlib(metric))
    ax.set_xlabel("labels used")
    ax.set_ylabel(for_matplotlib(_UNITS.get(metric, metric)))
    ax.grid(True, alpha=0.3)
    uniform = for_matplotlib(data.uniform_label)
    if not rows:
        ax.text(0.5, 0.5, "no labels yet", ha="center", va="center", transform=ax.transAxes)
    else:
        x = np.array([r.n_labels for r in rows], dtype=np.float64)
        marker = "o" if len(rows) <= 25 else None
        active, baseline = [r.active for r in rows], [r.uniform for r in rows]
        what = data.few_what.get(metric, "errors")
        ue = _values(baseline)
        if np.isfinite(ue).any():  # drawn first, so that the active band stays on top
            u_lo, u_hi = _band([None if u is None else u.bootstrap for u in baseline])
            _fill(ax, x, _clipped(u_lo, bounds), _clipped(u_hi, bounds),
                            color=_UNIFORM, alpha=0.15, linewidth=0,
                            label=f"{uniform}: {interval_name(BOOTSTRAP, data.level)}")
            # dashed, over the active line: where the two coincide (every draw at the
            # uniform rate, as an adaptive design's first batch) the active line hid it
            # whole while the legend named it (QA)
            ax.plot(x, ue, color=_UNIFORM, linestyle="--", marker=marker, markersize=3,
                    label=uniform + _plain_mark(data), clip_on=False, zorder=2.5)
        cs_lo, cs_hi = _band([a.anytime for a in active])
        if np.isfinite(cs_lo).any():  # the anytime band is the wider one: drawn beneath
            _fill(ax, x, _clipped(cs_lo, bounds), _clipped(cs_hi, bounds),
                  label=_band_name(ANYTIME, data.level, active, "anytime", what),
                  **_band_style(ANYTIME, active, "anytime"))
        f_lo, f_hi = _band([a.fixed for a in active])
        if np.isfinite(f_lo).any():  # the headline
            band, name = (f_lo, f_hi), _band_name(FIXED_BUDGET, data.level, active, "fixed",
                                                  what)
            style = _band_style(FIXED_BUDGET, active, "fixed")
        else:  # hand-made data without it: the bootstrap, named as such
            band, name = (_band([a.bootstrap for a in active]),
                          f"LURE: {interval_name(BOOTSTRAP, data.level)}")
            style = {"color": _ACTIVE, "alpha": 0.3, "linewidth": 0}
        _fill(ax, x, _clipped(band[0], bounds), _clipped(band[1], bounds), label=name,
              **style)
        # the lines are not clipped at the axes: the y axis stops at the metric's range
        # (and takes in every value), so a value at its edge (an error rate of 0 over the
        # first labels) showed half a marker (QA); nothing can reach beyond the axes
        ax.plot(x, _values(active), color=_ACTIVE, marker=marker, markersize=3,
                label=data.estimator_name, clip_on=False)
        _ring_outside(ax, x, active)
        if len(rows) == 1:
            ax.set_xlim(x[0] - 1, x[0] + 1)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # label counts: whole numbers
    truth = data.truth.get(metric)
    if truth is not None:
        ax.axhline(truth, color="black", linestyle=":", linewidth=1.5, label="truth")
    low, high = ax.get_ylim()  # the axis stays within the values the metric can take
    lo, hi = bounds
    low = low if lo is None else max(low, lo)
    high = high if hi is None else min(high, hi)
    # ... but shows every estimate: an unbiased estimate may leave that range with few
    # labels (it is not clipped), and the curve ran off the axis there (QA: an error rate
    # of 1.04 at 4 labels was hidden above the axis' 1)
    values = _values([r.active for r in rows]) if rows else np.zeros(0)
    values = values[np.isfinite(values)]
    if values.size and high > low:
        pad = 0.03 * (high - low)
        if values.min() < low:
            low = float(values.min()) - pad
        if values.max() > high:
            high = float(values.max()) + pad
    if high > low:
        ax.set_ylim(low, high)
    if rows and hi is None:  # every line stays in sight: the estimate, the mean, the truth
        shown = np.concatenate([values, _values([r.uniform for r in rows]),
                                [np.nan if truth is None else truth]])
        _readable_window(ax, np.array([r.n_labels for r in rows], dtype=np.float64), shown)


#: The first label counts whose intervals do not set an unbounded metric's axis: those
#: below this share of the labels (and below :data:`_FEW_LABELS`).
_EARLY_SHARE = 0.2
_FEW_LABELS = 5


def _readable_window(ax: Axes, x: np.ndarray, values: np.ndarray, both: bool = False) -> None:
    """Keep an unbounded metric's y axis (the log loss) readable: the first labels'
    fixed-budget interval can reach 25 nats and flattened the whole curve (QA, a PE
    session). The axis spans every estimate and the intervals after the first labels
    (from ``max(5, 0.2 K)``); an interval that leaves it is marked at the axis' edge by
    an arrow, with a legend entry naming how far it reaches, so nothing is hidden
    silently. ``both``: the lower end too (a difference, unbounded either way)."""
    bands = ax.__dict__.get("_bands", [])
    if not bands or x.size < 2:
        return
    start = max(_FEW_LABELS, _EARLY_SHARE * float(x.max()))
    if not (x >= start).any():
        return
    # each band by its own label counts (a difference's stops before a last count drawn
    # apart)
    ends = [values] + [arr[bx >= start] for bx, lo, hi in bands for arr in (lo, hi)]
    span = np.concatenate([e[np.isfinite(e)] for e in ends])
    if span.size == 0:
        return
    low, high = ax.get_ylim()
    top, bottom = float(span.max()), float(span.min())
    w_high = top + 0.05 * (top - (bottom if both else low))
    w_low = bottom - 0.05 * (top - bottom) if both else low
    if both and w_low > 0.0 >= low:  # the zero line stays in sight
        w_low = min(0.0, low)
    if both and w_high < 0.0 <= high:
        w_high = 0.0 + 0.05 * (top - bottom)
    gain = (high - w_high) + (w_low - low)
    if not gain > 0.25 * (high - low):  # little to gain: the axis as it was
        return
    ax.set_ylim(w_low, w_high)
    for edge, sign in ((w_high, 1.0), (w_low, -1.0)):
        beyond: set[float] = set()
        reach = -np.inf
        for bx, lo, hi in bands:
            end = hi if sign > 0 else lo
            over = np.isfinite(end) & (sign * (end - edge) > 0)
            beyond.update(float(v) for v in bx[over])
            if over.any():
                reach = max(reach, float(np.max(sign * end[over])))
        if beyond:
            at = np.array(sorted(beyond))
            ax.plot(at, np.full(at.size, edge), linestyle="none",
                    marker="^" if sign > 0 else "v", color=_MARK, markersize=5,
                    clip_on=False, zorder=3,
                    label=f"interval beyond the axis (cut off; reaches {sign * reach:.3g})")


def _inside(fig: Figure, artist: Any) -> bool:
    """Whether ``artist``'s drawn extent lies within the figure (after a draw)."""
    box = artist.get_window_extent(fig.canvas.get_renderer())
    f = fig.bbox
    tol = 0.5  # pixels
    return (box.x0 >= f.x0 - tol and box.y0 >= f.y0 - tol and box.x1 <= f.x1 + tol
            and box.y1 <= f.y1 + tol)


def _fit_title(fig: Figure, text: str) -> None:
    """A suptitle wrapped (and if need be made smaller) until it lies inside the figure."""
    width = max(20, int(fig.bbox.width / 9))  # characters per line at the large size
    size = 12.0
    title = fig.suptitle(for_matplotlib(text), fontsize=size)
    for _ in range(12):
        fig.canvas.draw()
        if _inside(fig, title):
            return
        width = max(10, int(width * 0.8))
        size = max(6.0, size * 0.9)
        lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False,
                              max_lines=3, placeholder=" …")
        title.set_text(for_matplotlib("\n".join(lines)))
        title.set_fontsize(size)


def _fit_legend(fig: Figure, handles: dict[str, Any]) -> None:
    """One legend for all panels, below them, with as many columns as fit the width."""
    ncol = min(len(handles), 3)
    while True:
        legend = fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                            ncol=ncol, fontsize="small")
        fig.canvas.draw()
        if ncol == 1 or _inside(fig, legend):
            return
        legend.remove()
        ncol -= 1


def _shared_legend(fig: Figure, axes: Any) -> None:
    """One legend for all panels (each label once), below them, where it hides no data."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        _fit_legend(fig, handles)


def estimates_figure(data: ReportData) -> Figure:
    """The figure of :func:`plot_estimates` (drawn, with its title and legend fitted)."""
    fig = _figure(ESTIMATES_SIZE)
    axes = fig.subplots(1, len(data.metrics), squeeze=False)[0]
    for ax, metric in zip(axes, data.metrics, strict=True):
        _plot_metric(ax, data, metric)
    _shared_legend(fig, axes)
    _fit_title(fig, f"{data.target} on {data.task}: estimate vs labels")
    return fig


def plot_estimates(data: ReportData, path: str | Path) -> Path:
    """Estimate and interval against labels used, one panel per metric; returns the path."""
    return _save(estimates_figure(data), path)


def _plot_difference(ax: Axes, curve: DifferenceCurve, level: float, n_b: int = 1) -> None:
    """One paired difference over labels: LURE of ``L_A - L_B`` with its fixed-budget
    interval and anytime CS, and the zero line (no difference)."""
    rows = list(curve.rows)
    metric = for_matplotlib(curve.metric)
    # the models are named in the title above (a path as spec overran the panel)
    ax.set_title(for_matplotlib(curve.metric if n_b == 1 else
                                f"{curve.metric}: A − {Path(curve.target_b).name}"))
    ax.set_xlabel("labels used")
    ax.set_ylabel(f"difference of {metric}" + (" (nats)" if curve.metric == "log loss"
                                               else ""))
    ax.grid(True, alpha=0.3)
    ax.axhline(0.0, color="black", linestyle=":", linewidth=1.2,
               label="zero: no difference")
    if not rows:
        ax.text(0.5, 0.5, "too few labels", ha="center", va="center", transform=ax.transAxes)
        return
    x = np.array([r.n_labels for r in rows], dtype=np.float64)
    marker = "o" if len(rows) <= 25 else None
    active = [r.active for r in rows]
    # the bands are the curve's own: a last count by estimate's other rule is drawn apart
    # (below), or a band finite there alone was named in the legend and drew nothing
    n_own = len(rows) - 1 if curve.last_as_estimate else len(rows)
    own, xo = active[:n_own], x[:n_own]
    cs_lo, cs_hi = _band([a.anytime for a in own])
    what = "labelled differences"  # the few-errors rule of a difference

    def sure(band: str) -> str:  # the counts where the sure bounds stand in, said
        return (" (the sure bounds where they stand in)" if any(
            a.basis == "sure" for a in own if getattr(a, band) is not None) else "")

    if np.isfinite(cs_lo).any():
        _fill(ax, xo, cs_lo, cs_hi, label=_band_name(ANYTIME, level, own, "anytime", what)
              + sure("anytime"), **_band_style(ANYTIME, own, "anytime"))
    f_lo, f_hi = _band([a.fixed for a in own])
    if np.isfinite(f_lo).any():
        _fill(ax, xo, f_lo, f_hi, label=_band_name(FIXED_BUDGET, level, own, "fixed", what)
              + sure("fixed"), **_band_style(FIXED_BUDGET, own, "fixed"))
    at = np.array([a.basis == "sure" for a in own], dtype=bool)
    if at.any() and np.isfinite(f_lo).any():  # the fixed-budget band's ends where the sure
        # bounds stand in: a band a point wide (known exactly) draws nothing of its own
        for end in (f_lo, f_hi):
            ax.plot(xo, np.where(at, end, np.nan), color=_ACTIVE, linewidth=1.0, alpha=0.8)
    ax.plot(x, _values(active), color=_ACTIVE, marker=marker, markersize=3,
            label="LURE estimate of the difference", clip_on=False)
    _ring_outside(ax, x, active)
    if curve.last_as_estimate:  # the last count's intervals by estimate's other rule
        last = active[-1]
        for iv in (last.fixed, last.anytime):
            if iv is not None:
                # a bar from end to end (the estimate may lie outside it: an errorbar
                # around the value cannot draw that)
                ax.plot([x[-1], x[-1]], [iv.low, iv.high], color=_MARK, marker="_",
                        markersize=10, linewidth=1.5, clip_on=False,
                        label=for_matplotlib(f"last count as `estimate` shows it "
                                             f"({curve.last_as_estimate})"))
    if len(rows) == 1:
        ax.set_xlim(x[0] - 1, x[0] + 1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    last = active[-1]
    bars = [e for iv in ((last.fixed, last.anytime) if curve.last_as_estimate else ())
            if iv is not None for e in (iv.low, iv.high)]
    _readable_window(ax, x, np.append(_values(active), bars), both=True)


def differences_figure(data: ReportData) -> Figure:
    """The figure of :func:`plot_differences` (drawn, with its title and legend fitted)."""
    fig = _figure(DIFFERENCES_SIZE)
    curves = list(data.differences)
    axes = fig.subplots(1, len(curves), squeeze=False)[0]
    n_b = len({c.target_b for c in curves})
    for ax, curve in zip(axes, curves, strict=True):
        _plot_difference(ax, curve, data.level, n_b)
    _shared_legend(fig, axes)
    first = curves[0]
    others = ", ".join(dict.fromkeys(c.target_b for c in curves))
    pool = f"pool {first.pool}, " if first.pool else ""
    _fit_title(fig, f"paired difference R_A − R_B by LURE on the same labels: A = "
                    f"{first.target_a}, B = {others}; {pool}task {data.task}; "
                    f"{100 * float(data.level):g}% level")
    return fig


def plot_differences(data: ReportData, path: str | Path) -> Path:
    """Each compared target's paired difference against labels used, with its fixed-budget
    interval and anytime CS, one panel per comparison; returns the path. Needs
    ``data.differences``."""
    if not data.differences:
        raise ValueError("plot_differences needs data.differences (a compared session's "
                         "curves of the paired difference)")
    return _save(differences_figure(data), path)


def plot_acquisition(data: ReportData, path: str | Path) -> Path:
    """Pool score histogram with the acquired items marked, and ``q_m`` per step.

    Needs ``data.scores``. Scores spanning more than a factor 20 (all positive)
    get logarithmic bins; counts are on a log axis either way.
    """
    if data.scores is None:
        raise ValueError("plot_acquisition needs data.scores (the pool's acquisition scores)")
    fig = _figure(ACQUISITION_SIZE)
    left, right = fig.subplots(1, 2)
    if data.next_proposal is not None:  # an adaptive design: what it draws by now
        _next_proposal_panel(left, data)
    else:
        _scores_panel(left, data)
    _q_panel(right, data)
    # uniform sampling draws by no model: "surrogate X" over its panels said it did (QA)
    _fit_title(fig, "acquisition: where the target and the compared model may differ "
                    "(compare design)" if data.acquisition == "compare"
               else "acquisition: uniform sampling (no model chooses the draws)"
               if data.acquisition == "uniform"
               else f"acquisition: surrogate {data.surrogate}")
    return _save(fig, path)


def _next_proposal_panel(left: Any, data: ReportData) -> None:
    """The adaptive design's proposal for the next draw over the items not drawn, as a
    multiple of the uniform rate (QA: the scores stored at creation, all equal for a
    design that starts uniform, showed one bar at 0)."""
    nq = data.next_proposal
    left_items = nq > 0
    n_left = int(left_items.sum())
    r = nq[left_items] * n_left  # 1 = the uniform rate over the items left
    m = 0 if data.acquired_idx is None else int(data.acquired_idx.size)
    if r.size == 0 or r.max() - r.min() <= 1e-9 * max(1.0, float(r.max())):
        centre = float(r[0]) if r.size else 1.0
        bins = np.linspace(centre - 0.55, centre + 0.55, 12)
        log_x = False
    else:
        log_x = bool(r.max() / r.min() > 20)
        bins = (np.geomspace(r.min(), r.max(), 41) if log_x
                else np.linspace(r.min(), r.max(), 41))
    left.hist(r, bins=bins, color=_ACTIVE, alpha=0.6, label=f"items not drawn ({r.size})")
    left.axvline(1.0, color="black", linestyle=":", label="the uniform rate")
    left.set_yscale("log")
    left.set_ylim(bottom=0.7)
    if log_x:
        left.set_xscale("log")
        left.xaxis.set_minor_formatter(NullFormatter())
        if r.max() / r.min() <= 100:  # as the scores' panel: 1, 2, 5 times each decade
            left.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            left.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    left.set_xlabel("probability of the next draw / uniform rate")
    left.set_ylabel("items (log scale)")
    left.set_title(f"the design's proposal for draw {m + 1}")
    left.legend(loc="best", fontsize="small")
    left.grid(True, alpha=0.3)


def _scores_panel(left: Any, data: ReportData) -> None:
    """The pool's acquisition scores with the acquired items marked."""
    s = data.scores
    acquired = s[data.acquired_idx] if data.acquired_idx is not None else np.zeros(0)
    positive = s.size > 0 and np.all(s > 0)
    log_x = bool(positive and s.max() / s.min() > 20)
    if s.size == 0 or s.min() == s.max():
        # one bin centred on the one score (QA: with it on a bin edge, the bar stood
        # beside the value, from -0.1 to 0 for scores of 0)
        centre = float(s[0]) if s.size else 0.0
        bins = np.linspace(centre - 0.55, centre + 0.55, 12)
    elif log_x:
        bins = np.geomspace(s.min(), s.max(), 41)
    else:
        bins = np.linspace(s.min(), s.max(), 41)
    left.hist(s, bins=bins, color=_ACTIVE, alpha=0.6, label=f"pool ({s.size} items)")
    if acquired.size:
        left.hist(acquired, bins=bins, color=_MARK, alpha=0.8,
                  label=f"acquired ({acquired.size})")
        # A rug, so that single acquired items stay visible under the log count axis.
        left.plot(acquired, np.full(acquired.size, 0.8), "|", color=_MARK, markersize=12)
    left.set_yscale("log")
    left.set_ylim(bottom=0.7)
    if log_x:
        left.set_xscale("log")
        # decades only: over 1-2 decades matplotlib labels the minor ticks too, and they
        # ran into each other (QA: "3×10⁻²4×10⁻²6×10⁻²"); a ratio above 20 spans a decade
        left.xaxis.set_minor_formatter(NullFormatter())
        if s.max() / s.min() <= 100:
            # within two decades a decade tick or two is all a reader got (QA: one label,
            # "10⁰", under scores from 0.18 to 5): 1, 2 and 5 times each power of ten,
            # written as plain numbers
            left.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            left.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    # what the score is, not only the acquisition's name (QA: "acquisition score
    # (compare)" under scores of 0 and 1 left a reader to guess)
    meaning = _SCORE_MEANING.get(str(data.acquisition))
    name = f" ({data.acquisition})" if data.acquisition else ""
    left.set_xlabel(for_matplotlib(f"acquisition score{name}"
                                   + (f"\n{meaning}" if meaning else "")))
    left.set_ylabel("items (log scale)")
    # an adaptive design refits its proposal from the labels: the scores stored at
    # creation are not what it draws by (QA: one bar beside q from 0.66x to 1.33x uniform)
    # (graded_fixed, fixed_mix: the scores are the proposal's; only their uniform share
    # is re-chosen from the labels; QA: "refits since" said more)
    left.set_title("pool scores (uniform share re-chosen from the labels)"
                   if fixed_model_design(data.acquisition) else
                   "pool scores at creation (the design refits since)" if adaptive_design(
                       data.acquisition) else "pool scores")
    left.legend(loc="best", fontsize="small")
    left.grid(True, alpha=0.3)


def _q_panel(right: Any, data: ReportData) -> None:
    """``q_m`` of each acquired item per step, beside the uniform ``1/(N-m+1)``."""
    right.set_title("acquisition probability per step")
    right.set_xlabel("step m (label number)")
    right.set_ylabel("q_m (log scale)")
    right.grid(True, alpha=0.3)
    q = data.acquired_q
    if q is None or q.size == 0:
        right.text(0.5, 0.5, "no labels yet", ha="center", va="center",
                   transform=right.transAxes)
    else:
        m = np.arange(1, q.size + 1)
        marker = "o" if q.size <= 200 else "."
        right.plot(m, q, marker, color=_MARK, markersize=3, label="q_m of the acquired item")
        n = data.pool_size
        if n is not None and n >= q.size:
            # one step: a line through one point draws nothing while the legend names it
            # (QA, 1 label); a short bar marks it there
            right.plot(m, 1.0 / (n - m + 1), color="black", linestyle=":",
                       marker="_" if q.size == 1 else None, markersize=14,
                       label="uniform 1/(N-m+1)")
        if np.all(q > 0):
            right.set_yscale("log")
        right.margins(y=0.1)  # the markers of the extreme q_m stay whole
        if q.size == 1:
            right.set_xlim(0, 2)
        # steps are whole numbers (QA: 1.0, 1.5, 2.0, ... at 5 labels)
        right.xaxis.set_major_locator(MaxNLocator(integer=True))
        right.legend(loc="best", fontsize="small")


def fixed_model_design(acquisition: str | None) -> bool:
    """Whether ``acquisition`` draws by its pool scores as they are, mixed with the
    uniform by a share re-chosen from the labels (no model fitted: ``graded_fixed``,
    ``fixed_mix``)."""
    from activetest.session.draw import FIXED_MODEL

    return acquisition in FIXED_MODEL


def adaptive_design(acquisition: str | None) -> bool:
    """Whether sessions of ``acquisition`` draw by a design refitted from the labels."""
    from activetest.session.config import ACQUISITIONS

    return acquisition in ACQUISITIONS and ACQUISITIONS[str(acquisition)].adaptive

