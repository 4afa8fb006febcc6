"""The session report: Markdown (and self-contained HTML) with PNG figures.

Fill a :class:`ReportData` from a session and call :func:`write_report`::

    data = ReportData(title="SST-2, round 3", task="sst2", target="gemma3-270m",
                      surrogate="smollm2-135m", metrics=["log loss", "error rate"],
                      history={"log loss": [(10, 0.71, 0.52, 0.90, 0.69, 0.44, 0.94), ...],
                               "error rate": [...]},
                      scores=pool_scores, acquired_idx=idx, acquired_q=q)
    write_report(data, "session/report")   # -> session/report/report.md

``out_dir`` then holds ``report.md``, ``report.html`` (images inlined as base64,
so the one file can be mailed), ``estimates.png`` and, when pool scores are
given, ``acquisition.png``. Nothing depends on the clock or on randomness: the
same data give byte-identical Markdown.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from activetest.session import plots

__all__ = ["Comparison", "FlaggedItem", "HistoryRow", "LabelsNeeded", "ReportData",
           "write_report"]

#: File names written by :func:`write_report`.
MARKDOWN, HTML, ESTIMATES_PNG, ACQUISITION_PNG = ("report.md", "report.html", "estimates.png",
                                                  "acquisition.png")
#: Below this many labels the bootstrap interval is unreliable (see METHOD.md).
MIN_RELIABLE_LABELS = 100
_SNIPPET = 80


@dataclass(frozen=True)
class HistoryRow:
    """One metric's estimate after ``n_labels`` labels.

    Attributes:
        n_labels: labels used so far (K).
        estimate, low, high: the active-testing estimate (LURE) and its bootstrap
            interval at ``ReportData.level``.
        uniform_estimate, uniform_low, uniform_high: the uniform-equivalent
            estimate and interval for the same number of labels (what the
            workflow computes as the baseline; ``None`` if not available).
    """

    n_labels: int
    estimate: float
    low: float
    high: float
    uniform_estimate: float | None = None
    uniform_low: float | None = None
    uniform_high: float | None = None


@dataclass(frozen=True)
class FlaggedItem:
    """An item worth a second look (e.g. a possibly wrong label).

    Attributes:
        item_id: the item's id.
        text: the item's text (shortened to 80 characters in the report).
        label: the label it was given, as a label word or class name.
        target_nll: the target's ``-log p(label | x)``.
        surrogate_nll: the surrogate's ``-log pi(label | x)`` (``None`` if unknown).
        shift: how much the estimate moves if the item is dropped
            (estimate without it minus estimate with it; first metric).
    """

    item_id: str
    text: str
    label: str
    target_nll: float
    surrogate_nll: float | None
    shift: float


@dataclass(frozen=True)
class Comparison:
    """Paired difference ``target_a - target_b`` of one metric on the same labels.

    Attributes:
        metric: which metric.
        target_a, target_b: the two models.
        difference, low, high: the estimate of the difference and its interval.
        n_labels: labels used.
    """

    metric: str
    target_a: str
    target_b: str
    difference: float
    low: float
    high: float
    n_labels: int


@dataclass(frozen=True)
class LabelsNeeded:
    """Projected total labels to reach an interval of width ``width``.

    Attributes:
        metric: which metric.
        width: requested interval width (``high - low``).
        n_labels: projected labels with active testing.
        uniform_n_labels: the same for uniform sampling (``None`` if unknown).
    """

    metric: str
    width: float
    n_labels: int
    uniform_n_labels: int | None = None


def _finite(x: Any, what: str, optional: bool = False) -> float | None:
    if x is None and optional:
        return None
    if isinstance(x, (str, bytes)):
        raise ValueError(f"{what} must be a number, got {x!r}")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number, got {x!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return v


def _count(x: Any, what: str, optional: bool = False) -> int | None:
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {x!r}")
    return int(x)


def _coerce(cls: type, value: Any, what: str) -> Any:
    """A record from itself, a mapping of its fields, or a tuple in field order.

    Values are checked and converted by the fields' annotations: ``int`` ->
    non-negative int, ``float`` -> finite float, ``str`` -> str (``| None``: optional).
    """
    names = [f.name for f in fields(cls)]
    if not isinstance(value, cls):
        try:
            if isinstance(value, Mapping):
                unknown = set(value) - set(names)
                if unknown:
                    raise TypeError(f"unknown key(s) {sorted(unknown)}")
                value = cls(**value)
            elif isinstance(value, (str, bytes)):
                raise TypeError("a string is not a record")
            else:
                value = cls(*value)
        except TypeError as exc:
            raise ValueError(f"{what}: expected a {cls.__name__} (fields {names}), a mapping "
                             f"or a tuple of them; got {value!r} ({exc})") from None
    clean = {}
    for f in fields(cls):
        v = getattr(value, f.name)
        kind = str(f.type)
        optional = kind.endswith("| None")
        where = f"{what}.{f.name}"
        if kind.startswith("int"):
            clean[f.name] = _count(v, where, optional)
        elif kind.startswith("float"):
            clean[f.name] = _finite(v, where, optional)
        else:
            clean[f.name] = None if v is None and optional else str(v)
    return cls(**clean)


@dataclass
class ReportData:
    """Everything the report shows. Tuples and dicts are accepted for the records.

    Attributes:
        title: the report's heading.
        task, target, surrogate: names shown in the header.
        metrics: metric names in display order, e.g. ``["log loss", "error rate"]``.
        history: for each metric, :class:`HistoryRow` s (or tuples
            ``(n_labels, estimate, low, high[, uniform_estimate, uniform_low,
            uniform_high])``) in increasing ``n_labels``; may be empty before the
            first label.
        scores: the pool's acquisition scores, ``(N,)``; ``None``: no acquisition figure.
        acquired_idx: pool indices (into ``scores``) of the acquired items, in order.
        acquired_q: ``q_m`` of each acquired item, in order.
        flagged: :class:`FlaggedItem` s (or dicts with its fields).
        comparison: :class:`Comparison` s of two targets (one or a list).
        labels_needed: :class:`LabelsNeeded` projections.
        truth: known true value per metric (e.g. in the demo).
        level: the intervals' nominal coverage.
        acquisition: name of the acquisition function, e.g. ``"ce"``.
        pool_size: N (default ``len(scores)``).
        uniform_label: what the baseline is called in tables and legends.
        info: extra ``key: value`` lines for the header (seed, alpha, session file).
        notes: extra paragraphs at the end.
    """

    title: str
    task: str
    target: str
    surrogate: str
    metrics: Sequence[str]
    history: Mapping[str, Sequence[Any]]
    scores: Any = None
    acquired_idx: Any = None
    acquired_q: Any = None
    flagged: Sequence[Any] = field(default_factory=list)
    comparison: Any = None
    labels_needed: Sequence[Any] = field(default_factory=list)
    truth: Mapping[str, float] | None = None
    level: float = 0.95
    acquisition: str | None = None
    pool_size: int | None = None
    uniform_label: str = "uniform-equivalent"
    info: Mapping[str, Any] = field(default_factory=dict)
    notes: Sequence[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.metrics = [str(m) for m in self.metrics]
        if not self.metrics:
            raise ValueError("metrics must name at least one metric")
        if len(set(self.metrics)) != len(self.metrics):
            raise ValueError(f"metrics must be distinct, got {self.metrics}")
        unknown = set(self.history) - set(self.metrics)
        if unknown:
            raise ValueError(f"history has metric(s) {sorted(unknown)} not in metrics "
                             f"{self.metrics}")
        history: dict[str, list[HistoryRow]] = {}
        for m in self.metrics:
            rows = [_coerce(HistoryRow, r, f"history[{m!r}][{i}]")
                    for i, r in enumerate(self.history.get(m, []))]
            for i, r in enumerate(rows):
                where = f"history[{m!r}][{i}]"
                if not r.low <= r.estimate <= r.high:
                    raise ValueError(f"{where}: expected low <= estimate <= high, got "
                                     f"{r.low}, {r.estimate}, {r.high}")
                if i and r.n_labels <= rows[i - 1].n_labels:
                    raise ValueError(f"{where}: n_labels must increase, got "
                                     f"{rows[i - 1].n_labels} then {r.n_labels}")
            history[m] = rows
        self.history = history
        if not 0 < self.level < 1:
            raise ValueError(f"level must be in (0, 1), got {self.level!r}")
        if self.scores is not None:
            s = np.asarray(self.scores, dtype=np.float64)
            if s.ndim != 1 or not np.all(np.isfinite(s)):
                raise ValueError(f"scores must be a finite 1-D array, got shape {s.shape}")
            self.scores = s
            if self.pool_size is None:
                self.pool_size = int(s.size)
        if self.acquired_idx is not None:
            idx = np.asarray(self.acquired_idx)
            if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
                raise ValueError("acquired_idx must be a 1-D array of integer pool indices")
            if self.scores is not None and idx.size and (idx.min() < 0
                                                         or idx.max() >= self.scores.size):
                raise ValueError(f"acquired_idx must lie in 0..{self.scores.size - 1}")
            self.acquired_idx = idx.astype(np.int64)
        if self.acquired_q is not None:
            q = np.asarray(self.acquired_q, dtype=np.float64)
            if q.ndim != 1 or not np.all((q >= 0) & (q <= 1)):
                raise ValueError("acquired_q must be a 1-D array of probabilities in [0, 1]")
            if self.acquired_idx is not None and q.size != self.acquired_idx.size:
                raise ValueError(f"acquired_q has {q.size} entries, acquired_idx "
                                 f"{self.acquired_idx.size}")
            self.acquired_q = q
        self.flagged = [_coerce(FlaggedItem, f, f"flagged[{i}]")
                        for i, f in enumerate(self.flagged)]
        comp = self.comparison
        if comp is None:
            comp = []
        elif isinstance(comp, (Comparison, Mapping)):
            comp = [comp]
        self.comparison = [_coerce(Comparison, c, f"comparison[{i}]") for i, c in enumerate(comp)]
        self.labels_needed = [_coerce(LabelsNeeded, p, f"labels_needed[{i}]")
                              for i, p in enumerate(self.labels_needed)]
        truth = {} if self.truth is None else dict(self.truth)
        bad = set(truth) - set(self.metrics)
        if bad:
            raise ValueError(f"truth has metric(s) {sorted(bad)} not in metrics {self.metrics}")
        self.truth = {k: float(_finite(v, f"truth[{k!r}]")) for k, v in truth.items()}

    @property
    def n_labels(self) -> int:
        """Labels used in the latest estimate (max over metrics; 0 before the first)."""
        return max((rows[-1].n_labels for rows in self.history.values() if rows), default=0)


# --------------------------------------------------------------------------- document model
# The report is built once as blocks, then rendered to Markdown and to HTML.

_Block = tuple[Any, ...]


def _num(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.4g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}"


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    return f"[{_num(low)}, {_num(high)}]"


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _blocks(data: ReportData, images: Mapping[str, str]) -> list[_Block]:
    pct = f"{100 * data.level:g}%"
    out: list[_Block] = [("h1", data.title)]
    meta = [f"Task: {data.task}", f"Target: {data.target}", f"Surrogate: {data.surrogate}"]
    if data.acquisition:
        meta.append(f"Acquisition: {data.acquisition}")
    if data.pool_size is not None:
        meta.append(f"Pool: {data.pool_size} items")
    meta.append(f"Labels used: {data.n_labels}")
    meta += [f"{k}: {v}" for k, v in data.info.items()]
    out.append(("list", meta))

    out.append(("h2", "Estimates"))
    header = ["metric", "labels", "estimate", f"{pct} interval", "width",
              data.uniform_label, f"{pct} interval", "width"]
    has_truth = bool(data.truth)
    if has_truth:
        header.append("truth")
    rows = []
    for m in data.metrics:
        if not data.history[m]:
            rows.append([m, "0"] + ["—"] * (len(header) - 2))
            continue
        r = data.history[m][-1]
        uw = (r.uniform_high - r.uniform_low if r.uniform_low is not None
              and r.uniform_high is not None else None)
        row = [m, str(r.n_labels), _num(r.estimate), _interval(r.low, r.high),
               _num(r.high - r.low), _num(r.uniform_estimate),
               _interval(r.uniform_low, r.uniform_high), _num(uw)]
        if has_truth:
            row.append(_num(data.truth.get(m)))
        rows.append(row)
    out.append(("table", header, rows))
    warnings = []
    if data.n_labels < MIN_RELIABLE_LABELS:
        warnings.append(f"Only {data.n_labels} labels: bootstrap intervals are unreliable "
                        f"below about {MIN_RELIABLE_LABELS} labels; treat them as rough.")
    for m in data.metrics:
        t = data.truth.get(m)
        if t is not None and data.history[m]:
            r = data.history[m][-1]
            if not r.low <= t <= r.high:
                warnings.append(f"The truth for {m} ({_num(t)}) lies outside the active "
                                f"interval {_interval(r.low, r.high)}.")
    out += [("warn", w) for w in warnings]

    if data.comparison:
        out.append(("h2", "Comparison of targets"))
        rows = []
        for c in data.comparison:
            if c.low > 0:
                verdict = f"{c.target_b} lower"
            elif c.high < 0:
                verdict = f"{c.target_a} lower"
            else:
                verdict = "no clear difference (interval contains 0)"
            rows.append([c.metric, f"{c.target_a} − {c.target_b}", _num(c.difference),
                         _interval(c.low, c.high), str(c.n_labels), verdict])
        out.append(("table", ["metric", "difference", "estimate", f"{pct} interval", "labels",
                              "verdict"], rows))

    if data.labels_needed:
        out.append(("h2", "Labels needed"))
        out.append(("p", "Projected total labels for the requested interval width, assuming "
                         "the interval shrinks as 1/sqrt(labels)."))
        out.append(("table", ["metric", "requested width", "labels (active)",
                              f"labels ({data.uniform_label})"],
                    [[p.metric, _num(p.width), str(p.n_labels),
                      "—" if p.uniform_n_labels is None else str(p.uniform_n_labels)]
                     for p in data.labels_needed]))

    out.append(("h2", "Figures"))
    out.append(("img", images[ESTIMATES_PNG],
                f"Estimate and {pct} interval against labels used, active vs "
                f"{data.uniform_label}"))
    if ACQUISITION_PNG in images:
        out.append(("img", images[ACQUISITION_PNG],
                    "Pool acquisition scores with the acquired items, and q_m per step"))

    out.append(("h2", "Flagged items"))
    if data.flagged:
        out.append(("p", "Items with a high target loss on their given label; check these "
                         "labels first. 'Change if dropped' is how much the estimate of "
                         f"{data.metrics[0]} moves without the item."))
        out.append(("table", ["item", "text", "given label", "target NLL", "surrogate NLL",
                              "change if dropped"],
                    [[f.item_id, _snippet(f.text), f.label, _num(f.target_nll),
                      _num(f.surrogate_nll), f"{f.shift:+.4g}"] for f in data.flagged]))
    else:
        out.append(("p", "No items flagged."))

    if data.notes:
        out.append(("h2", "Notes"))
        out += [("p", n) for n in data.notes]
    return out


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_<>|"})


def _md(text: str) -> str:
    return " ".join(str(text).split()).translate(_MD_SPECIAL)


def _markdown(blocks: list[_Block]) -> str:
    lines: list[str] = []
    for kind, *args in blocks:
        if kind == "h1":
            lines += [f"# {_md(args[0])}", ""]
        elif kind == "h2":
            lines += [f"## {_md(args[0])}", ""]
        elif kind == "p":
            lines += [_md(args[0]), ""]
        elif kind == "warn":
            lines += [f"> **Warning:** {_md(args[0])}", ""]
        elif kind == "list":
            lines += [f"- {_md(x)}" for x in args[0]] + [""]
        elif kind == "table":
            header, rows = args
            lines.append("| " + " | ".join(_md(h) for h in header) + " |")
            lines.append("|" + "|".join("---" for _ in header) + "|")
            lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
            lines.append("")
        elif kind == "img":
            src, alt = args
            lines += [f"![{_md(alt)}]({src})", ""]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1060px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:.5em 0 1em}th,td{border:1px solid #ccc;
padding:.25em .6em;text-align:left}th{background:#f3f3f3}td{font-variant-numeric:tabular-nums}
img{max-width:100%}.warn{background:#fff4e0;border-left:4px solid #f0a020;padding:.4em .8em}"""


def _html(blocks: list[_Block], title: str, inline: Mapping[str, str]) -> str:
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>"]
    for kind, *args in blocks:
        if kind in ("h1", "h2", "p"):
            parts.append(f"<{kind}>{e(args[0])}</{kind}>")
        elif kind == "warn":
            parts.append(f'<p class="warn"><strong>Warning:</strong> {e(args[0])}</p>')
        elif kind == "list":
            parts.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in args[0]) + "</ul>")
        elif kind == "table":
            header, rows = args
            parts.append("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in header)
                         + "</tr></thead><tbody>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
                      for row in rows]
            parts.append("</tbody></table>")
        elif kind == "img":
            src, alt = args
            parts.append(f'<p><img src="{inline.get(src, e(src))}" alt="{e(alt)}"></p>')
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def write_report(data: ReportData, out_dir: str | Path, *, html: bool = True) -> Path:
    """Write ``report.md`` (and ``report.html``) and the figures into ``out_dir``.

    Figures: ``estimates.png`` always (see :func:`activetest.session.plots.plot_estimates`),
    ``acquisition.png`` when ``data.scores`` is given. The Markdown refers to them
    by relative path; the HTML inlines them (base64), so it stands alone.
    Existing files of those names are overwritten.

    Returns:
        The path of ``report.md``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images = {ESTIMATES_PNG: ESTIMATES_PNG}
    plots.plot_estimates(data, out / ESTIMATES_PNG)
    if data.scores is not None:
        plots.plot_acquisition(data, out / ACQUISITION_PNG)
        images[ACQUISITION_PNG] = ACQUISITION_PNG
    elif (out / ACQUISITION_PNG).exists():
        (out / ACQUISITION_PNG).unlink()  # stale from an earlier report in this folder
    blocks = _blocks(data, images)
    md_path = out / MARKDOWN
    md_path.write_text(_markdown(blocks), encoding="utf-8")
    if html:
        inline = {name: "data:image/png;base64,"
                  + base64.b64encode((out / name).read_bytes()).decode("ascii")
                  for name in images}
        (out / HTML).write_text(_html(blocks, data.title, inline), encoding="utf-8")
    return md_path
