"""Rendering a :class:`~activetest.session.report.data.ReportData`: Markdown and HTML.

The report is built once as a list of blocks, then rendered to Markdown and to a
self-contained HTML file (figures inlined as base64). Text that came from the
pool (item snippets) is made inert in both: control and bidi-override characters
are replaced (:func:`.text.clean`), Markdown link and image syntax, character
references and HTML are escaped, and bare URLs and e-mail addresses become code,
so an item cannot inject a live link, a remote image or a terminal escape.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from activetest.session.interval_names import (
    ANYTIME,
    BOOTSTRAP,
    EXACT_ANYTIME,
    FIXED_BUDGET,
    OUTSIDE_MARK,
    SURE_BOUNDS,
    basis_mark,
    interval_guarantee,
    interval_name,
    outside_sure_line,
    outside_sure_mark,
    plain_mean_mark,
)
from activetest.session.report import plots
from activetest.session.report.data import Interval, ReportData
from activetest.session.report.files import write_file
from activetest.session.report.text import clean
from activetest.session.source_names import of_file
from activetest.session.spec_files import absent_note

__all__ = ["ACQUISITION_PNG", "DIFFERENCES_PNG", "ESTIMATES_PNG", "HTML", "MARKDOWN",
           "check_report_dir",
           "write_report"]

#: File names written by :func:`write_report`.
MARKDOWN, HTML, ESTIMATES_PNG, ACQUISITION_PNG = ("report.md", "report.html", "estimates.png",
                                                  "acquisition.png")
#: The figure of a compared session's paired difference over labels.
DIFFERENCES_PNG = "differences.png"
#: Below this many labels the bootstrap interval is unreliable (see METHOD.md).
MIN_RELIABLE_LABELS = 100
_SNIPPET = 80


# --------------------------------------------------------------------------- document model
# The report is built once as blocks, then rendered to Markdown and to HTML.

_Block = tuple[Any, ...]


def _num(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if x == 0:
        return "0"  # also -0.0
    # 4 significant digits; scientific only below what they round to 0.001 from
    # (0.000999999999999 is 0.001, not 1.000e-03)
    return f"{x:.4g}" if abs(x) >= 9.9995e-4 else f"{x:.3e}"


def _interval(iv: Interval | None) -> str:
    """``[low, high]`` with 4 significant digits, or as many more (up to 12) as its two
    ends need to differ where it is wider than a point (1e-9; QA: the terminal printed an
    interval 3e-5 wide as ``[0.0012, 0.0012]``)."""
    if iv is None:
        return "—"
    low, high = _num(iv.low), _num(iv.high)
    if low == high and abs(iv.high - iv.low) > 1e-9 and math.isfinite(iv.high - iv.low):
        for g in range(5, 13):
            low, high = f"{iv.low:.{g}g}", f"{iv.high:.{g}g}"
            if low != high:
                break
    return f"[{low}, {high}]"


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def _verdict(c: Any, level: float) -> str:
    """Which target is lower, by the interval that decides it, named. Where the
    difference has an anytime CS, the verdict is that CS's, as ``estimate`` gives it (it
    holds however the labelling stopped; QA: the report said "lower by the fixed-budget
    interval" where ``estimate`` said "not decided yet"); what the fixed-budget interval
    would say is added, named with its condition. Without a CS (before 30 labels,
    hand-made data): the fixed-budget interval, then the bootstrap."""
    d = c.difference

    def lower(iv: Any) -> str | None:
        if iv is None or not (iv.low > 0 or iv.high < 0):
            return None
        return str(c.target_b if iv.low > 0 else c.target_a)

    if d.anytime is not None and d.basis == "sure":  # the sure bounds decide (QA: named
        # the anytime CS they stand in for)
        who = lower(d.anytime)
        if who is None and d.anytime.high - d.anytime.low <= 1e-9:  # the difference is 0
            return f"no difference (known exactly: the {SURE_BOUNDS} are a point)"
        return (f"not decided by the {SURE_BOUNDS}" if who is None else
                f"{who} lower by the {SURE_BOUNDS}")
    if d.anytime is not None:
        who = lower(d.anytime)
        if who is not None:
            # the exact anytime CS (few differences) holds at any count; the asymptotic one only
            # asymptotically, as its footnote says (QA: "holds however you stop" alone)
            how = ("holds however you stop" if d.basis == "exact" else
                   "valid however you stop, asymptotically")
            return f"{who} lower by the {interval_name(ANYTIME, level)} ({how})"
        fixed = lower(d.fixed)
        also = ("" if fixed is None else
                f"; the {interval_name(FIXED_BUDGET, level)} has {fixed} lower, valid only if "
                f"the number of labels was fixed in advance")
        return f"not decided yet by the {interval_name(ANYTIME, level)}{also}"
    for iv, kind, why in (
            (d.fixed, FIXED_BUDGET, "if the number of labels was fixed in advance"),
            (d.bootstrap, BOOTSTRAP, "no guarantee")):
        who = lower(iv)
        if who is not None:
            return f"{who} lower by the {interval_name(kind, level)} ({why})"
    return "no clear difference (the intervals contain 0)"


def _blocks(data: ReportData, images: Mapping[str, str]) -> list[_Block]:
    out: list[_Block] = [("h1", data.title)]
    # a recorded local path that names nothing here is said so, as `status` says it
    meta = [f"Task: {data.task}", f"Target: {absent_note(data.target, data.absent_paths)}",
            f"Surrogate: {absent_note(data.surrogate, data.absent_paths)}"]
    if data.acquisition:
        meta.append(f"Acquisition: {data.acquisition}")
    if data.pool_size is not None:
        meta.append(f"Pool: {data.pool_size} items{of_file(data.pool_file)}")
    meta.append(f"Labels used: {data.n_labels}")
    meta += [f"{k}: {v}" for k, v in data.info.items()]
    out.append(("list", meta))

    out.append(("h2", "Estimates"))
    fixed_name, cs_name = interval_name(FIXED_BUDGET, data.level), interval_name(ANYTIME,
                                                                                  data.level)
    boot_name = interval_name(BOOTSTRAP, data.level)
    exact_name = interval_name(EXACT_ANYTIME, data.level)
    # the exact anytime CS where the session has one, as `estimate` shows it (QA: left out)
    has_exact = any(rows[-1].active.exact is not None for rows in data.history.values() if rows)
    # the width is the fixed-budget interval's, said (QA: a bare "width" beside four intervals)
    header = ["metric", "labels", data.estimator_name, fixed_name, f"{fixed_name}: width", cs_name,
              *([exact_name] if has_exact else []), boot_name,
              data.uniform_label + plain_mean_mark(census=data.census,
                                                   uniform_draws=not data.uniform_biased),
              f"{data.uniform_label}: {boot_name}"]
    has_truth = bool(data.truth)
    if has_truth:
        header.append("truth")
    rows = []
    stands_in = []
    outside = []  # a latest estimate outside its sure bounds: marked, said under the table
    for m in data.metrics:
        if not data.history[m]:
            rows.append([m, "0"] + ["—"] * (len(header) - 2))
            continue
        r = data.history[m][-1]
        a, u = r.active, r.uniform
        fw = None if a.fixed is None else a.fixed.width
        if fw is not None and fw <= 1e-9 * max(1.0, abs(a.value)):
            fw = 0.0  # every item labelled: the exact value (up to the rounding of a sum)
        # where the exact anytime CS stands in for both (few errors), each cell says so (QA: the
        # cells were named fixed-budget and anytime, only a note said they were exact)
        exact_mark = basis_mark("exact") if a.basis == "exact" else ""
        if exact_mark:
            stands_in.append(m)
        if a.outside_sure is not None:
            outside.append(outside_sure_line(m, _num(a.value), a.outside_sure.low,
                                             a.outside_sure.high, "{:.4g}"))
        row = [m, str(r.n_labels),
               _num(a.value) + ("" if a.outside_sure is None else OUTSIDE_MARK),
               _interval(a.fixed) + ("" if a.fixed is None else exact_mark), _num(fw),
               _interval(a.anytime) + ("" if a.anytime is None else exact_mark),
               *([_interval(a.exact)] if has_exact else []), _interval(a.bootstrap),
               _num(None if u is None else u.value),
               # at a census the plain mean is the pool's value: no interval around it, as
               # estimate and status show none (QA: [0.2471, 0.3529] around 0.3000)
               _interval(None if u is None or data.census else u.bootstrap)]
        if has_truth:
            row.append(_num(data.truth.get(m)))
        rows.append(row)
    out.append(("table", header, rows))
    out += [("p", line) for line in outside]  # as `estimate` says it under its table
    kinds = (FIXED_BUDGET, ANYTIME, *((EXACT_ANYTIME,) if has_exact else ()), BOOTSTRAP)
    out.append(("p", "; ".join(f"{interval_name(k, data.level)}"
                               + (" (the headline)" if k == FIXED_BUDGET else "")
                               + f": {interval_guarantee(k)}"
                               for k in kinds) + "."))
    if stands_in:
        # what the labels show too few of, per metric (QA: "too few errors" at an error
        # rate of 0.88, where the labels without an error were the few)
        whys = "; ".join(f"for {m} the labels show too few {data.few_what.get(m, 'errors')}"
                         for m in stands_in)
        out.append(("p", f"Cells marked {basis_mark('exact').strip()}: {whys} for the CLT "
                         f"intervals, so the "
                         f"{exact_name} stands in for the {fixed_name} and the {cs_name} "
                         f"(see the notes)."))
    warnings = []
    if data.n_labels < MIN_RELIABLE_LABELS:
        warnings.append(f"Only {data.n_labels} label{'' if data.n_labels == 1 else 's'}: "
                        f"bootstrap intervals are unreliable below about "
                        f"{MIN_RELIABLE_LABELS} labels; treat them as rough.")
    for m in data.metrics:
        t = data.truth.get(m)
        if t is not None and data.history[m]:
            a = data.history[m][-1].active
            iv, name = ((a.fixed, fixed_name) if a.fixed is not None
                        else (a.bootstrap, boot_name))
            if not iv.low <= t <= iv.high:
                warnings.append(f"The truth for {m} ({_num(t)}) lies outside the {name} "
                                f"{_interval(iv)}.")
    out += [("warn", w) for w in warnings]

    if data.comparison:
        out.append(("h2", "Comparison of targets"))
        # one row for the paired difference and one for the second target's own risk,
        # each with the intervals `estimate` shows for it (QA: the second target's
        # fixed-budget interval alone)
        # (QA: its estimates were headed "estimate", and its exact anytime CS cells unmarked;
        # then its sure bounds cells unmarked)
        rows = []
        marked: dict[str, list[str]] = {"exact": [], "sure": []}

        def stood_in(e: Any, what: str) -> str:
            if e.basis in marked:
                marked[e.basis].append(what)
            return basis_mark(e.basis)

        for c in data.comparison:
            d, o = c.difference, c.other
            dm = stood_in(d, f"the difference's {c.metric}")
            # an estimate outside the bounds that hold surely: kept (unbiased), said there
            value = _num(d.value) + ("" if d.outside_sure is None else " (" + outside_sure_mark(
                d.outside_sure.low, d.outside_sure.high, "{:.4g}") + ")")
            rows.append([c.metric, f"difference {c.target_a} − {c.target_b}", value,
                         _interval(d.fixed) + ("" if d.fixed is None else dm),
                         _interval(d.anytime) + ("" if d.anytime is None else dm),
                         _interval(d.bootstrap), str(c.n_labels), _verdict(c, data.level)])
            if o is not None:
                om = stood_in(o, f"{c.target_b}'s {c.metric}")
                rows.append([c.metric, f"second target {c.target_b}", _num(o.value),
                             _interval(o.fixed) + ("" if o.fixed is None else om),
                             _interval(o.anytime) + ("" if o.anytime is None else om),
                             _interval(o.bootstrap), str(c.n_labels), "—"])
        out.append(("table", ["metric", "quantity", "LURE estimate (paired, same labels)",
                              fixed_name, cs_name, boot_name, "labels", "verdict"], rows))
        gone = [b for b in dict.fromkeys(c.target_b for c in data.comparison)
                if b in data.absent_paths]
        if gone:
            out.append(("p", " ".join(f"Second target {absent_note(b, gone)}." for b in gone)))
        if marked["exact"]:
            out.append(("p", f"Cells marked {basis_mark('exact').strip()}: for "
                             f"{', '.join(marked['exact'])} the "
                             f"labels show too few errors (or differences) for the CLT "
                             f"intervals, so the {exact_name} stands in for the {fixed_name} "
                             f"and the {cs_name} (see the notes)."))
        if marked["sure"]:
            out.append(("p", f"Cells marked (sure bounds): for {', '.join(marked['sure'])} "
                             f"both cells are the {SURE_BOUNDS}: the labelled differences "
                             f"plus the most the unlabelled items could add, from both "
                             f"targets' predictions on the pool; they stand in for the "
                             f"{fixed_name} and the {cs_name} (see the notes)."))

    if data.labels_needed:
        out.append(("h2", "Labels needed"))
        census = data.pool_size is not None and data.n_labels >= data.pool_size
        out.append(("p", f"Projected total labels for an interval of the requested width "
                         f"(projections, not guarantees: stop on the {cs_name} as observed"
                         + ("; a count marked certain is where the bounds that hold surely, "
                            "the labelled losses plus the most the unlabelled items could "
                            f"add, cut the {cs_name} within the width whatever the labels are"
                            if any(p.anytime_sure for p in data.labels_needed) else "")
                         + "). "
                         f"{cs_name}: the confidence sequence's own formula at later label "
                         f"counts (docs/projection.md); {boot_name}, active: from this "
                         f"session's {boot_name}, shrinking as 1/sqrt(labels) (with an "
                         f"adaptive design: its later draws varying as its model has them "
                         f"now); "
                         f"{boot_name}, uniform sampling: (2 z S / width)^2 with S^2 the "
                         f"pool's variance of the loss estimated on these draws (LURE on the "
                         f"loss and its square; not the spread of the drawn items, which the "
                         f"design chose)."))
        out.append(("table", ["metric", "requested width", f"labels (active, {cs_name})",
                              f"labels (active, {boot_name})",
                              f"labels (uniform sampling, {boot_name})"],
                    [[p.metric, _num(p.width),
                      "—" if p.anytime_n_labels is None else
                      f"at most {p.anytime_n_labels} (certain: sure bounds)"
                      if p.anytime_sure and p.anytime_n_labels > data.n_labels else
                      _needed(p.anytime_n_labels, data.n_labels),
                      # a census: the pool's value, no projection, as `estimate` says it
                      # (QA: "not within the pool (300 items; about 6146 projected)")
                      "every item labelled: the pool's exact value" if census else
                      _needed(p.n_labels, data.n_labels, data.pool_size),
                      "—" if p.uniform_n_labels is None else
                      _needed(p.uniform_n_labels, 0, data.pool_size)]
                     for p in data.labels_needed]))

    out.append(("h2", "Figures"))
    few = [m for m in data.metrics if any(r.active.basis == "exact" for r in data.history[m])]
    stood = "; ".join(f"{m}: the {exact_name} stands in for both while the labels show "
                      f"few {data.few_what.get(m, 'errors')}" for m in few)
    # a ringed point: an estimate outside its sure bounds, as the table marks it (QA: the
    # table's † point was drawn unringed)
    ringed = "; ".join(f"{m}: a ringed point ({OUTSIDE_MARK}) is an estimate outside the bounds "
                       f"that hold surely at that count, unbiased, not moved" for m in data.metrics
                       if any(r.active.outside_sure is not None for r in data.history[m]))
    said = "; ".join(x for x in (stood, ringed) if x)
    out.append(("img", images[ESTIMATES_PNG],
                f"{data.estimator_name} with its {interval_name(FIXED_BUDGET, data.level)} and "
                f"{interval_name(ANYTIME, data.level)} against labels used, beside the "
                f"{data.uniform_label}" + (f" ({said})" if said else "")))
    if DIFFERENCES_PNG in images:
        c = data.differences[0]
        others = ", ".join(dict.fromkeys(d.target_b for d in data.differences))
        late = "; ".join(f"{d.metric} − {d.target_b}: the last count's intervals are "
                         f"`estimate`'s, {d.last_as_estimate}" for d in data.differences
                         if d.last_as_estimate)
        # where the sure bounds stand in at some counts, and estimates outside them
        sure = [f"{d.metric} − {d.target_b}" for d in data.differences
                if any(r.active.basis == "sure" for r in d.rows)]
        outside = [f"{d.metric} − {d.target_b}" for d in data.differences
                   if any(r.active.outside_sure is not None for r in d.rows)]
        if sure:
            late = "; ".join(x for x in (late, (
                f"{', '.join(sure)}: at the counts where they stand in, the intervals are "
                f"the {SURE_BOUNDS}, as `estimate` shows them at that count")) if x)
        if outside:
            late = "; ".join(x for x in (late, (
                f"{', '.join(outside)}: a ringed point is an estimate outside the bounds "
                f"that hold surely at that count, kept as it is (unbiased; moving it would "
                f"bias it)")) if x)
        out.append(("img", images[DIFFERENCES_PNG],
                    f"The paired difference R_A − R_B (A = {c.target_a}, B = {others}) by "
                    f"LURE on the same labels, with its "
                    f"{interval_name(FIXED_BUDGET, data.level)} and "
                    f"{interval_name(ANYTIME, data.level)} against labels used, computed "
                    f"from the labels prefix by prefix (figure {DIFFERENCES_PNG}; below "
                    f"zero: A's risk is lower)" + (f" ({late})" if late else "")))
    if ACQUISITION_PNG in images:
        from activetest.session.report.plots import adaptive_design, fixed_model_design

        m = 0 if data.acquired_idx is None else int(data.acquired_idx.size)
        out.append(("img", images[ACQUISITION_PNG],
                    f"The design's proposal for draw {m + 1} over the items not drawn, as "
                    f"a multiple of the uniform rate ("
                    + ("its fixed scores, their share against the uniform re-chosen from the "
                       "labels so far" if fixed_model_design(data.acquisition) else
                       "refitted from the labels so far")
                    + "), and the probability q_m each draw was made with, per step"
                    if data.next_proposal is not None else
                    "The pool's acquisition scores with the acquired items (the design "
                    "draws by them mixed with the uniform, the share re-chosen from the "
                    "labels: the probabilities it drew with are q_m, right), and q_m per "
                    "step" if fixed_model_design(data.acquisition) else
                    "The pool's acquisition scores at creation with the acquired items (an "
                    "adaptive design refits its proposal from the labels: the probabilities "
                    "it drew with are q_m, right), and q_m per step"
                    if adaptive_design(data.acquisition) else
                    "Pool acquisition scores with the acquired items, and q_m per step"))

    out.append(("h2", "Flagged items"))
    if data.flagged:
        out.append(("p", "Items whose given label the target or the surrogate finds very "
                         "unlikely (the session's label-noise alarm: by default a negative "
                         "log-likelihood above 5 for either model); check these labels "
                         "first. 'Change if dropped' is how much the estimate of "
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


# Markdown's active characters, each escaped only where it can act, so that the raw file
# reads as the rendered one (QA: "[0.225, 0.3\]:", "q\_m", "\~100" and a session path
# "test\_a\_b" read with backslashes in report.md). Always: "\\", "`", "<", ">", "|",
# "#", "$". "*" and "_" unless their run is the text's only one of that character and
# does not start it (emphasis pairs two runs; a run at the start may be a bullet or a
# rule: "samples_*.jsonl"), "_" also where its run lies inside a word (letters or digits
# on both sides: by CommonMark's rule it can neither open nor close emphasis: "q_m", a
# path). "~" where the text holds two or more (one alone cannot strike through, nor
# fence). "&" where it starts a character reference ("&#x202e;" would bring back a
# character clean() removed; "Q&A" cannot). Links and images need "](", "][" or "]:" (a
# reference definition) and images "![": "](", "][" and "![" are broken everywhere, "]:"
# where the text starts with "[" (a definition starts its line; the text is one line,
# and a heading or a table cell holds none), so no link or image can form, while an
# interval such as "[0.52, 0.61]" stays readable, followed by ":" or not.
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`<>|#$"})
_LINK = re.compile(r"\](?=[(\[])|!(?=\[)")
_DEFINITION = re.compile(r"\](?=:)")
_RUNS = {c: re.compile(re.escape(c) + "+") for c in "*_"}
_REFERENCE = re.compile(r"&(?=(?:\\#)?[0-9A-Za-z]+;)")  # "#" escaped by then
# Bare URLs and e-mail addresses are auto-linked by GitHub-flavoured Markdown; inside a
# code span they stay text. ("|" ends them: in a table a code span does not protect it.)
_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.|(?:mailto|xmpp):)[^\s|]+"
                  r"|[^\s|@<>()\[\]`]+@[^\s|@<>()\[\]`]+")
# What ends a sentence after a URL, not the URL (as GitHub's autolinks leave it out)
_URL_TAIL = ",.;:!?"
_URL_CLOSE = {")": "(", "]": "[", "}": "{"}
# A possessive the sentence puts after a name ("table:www.other.csv's error rate"): the
# sentence's, not the name's
_URL_POSSESSIVE = ("'s", "\u2019s")


def _url_end(url: str) -> int:
    """The length of ``url`` (a :data:`_URL` match) without its trailing sentence
    punctuation (``,.;:!?``) and closing brackets that have no opening one in it: those
    stay outside its code span (QA: "www.x.csv," read as code with its comma inside),
    and then one possessive ``'s`` (or ``’s``) the sentence put after the name (QA: "for
    table:`www.other.csv's` error rate": the name read as one that ends in "'s"; now
    "table:`www.other.csv`'s error rate"). A name that itself ends in "'s" is shown the
    same, its "'s" after the span: the text reads the same, only the span is shorter.
    It stops where the rest would no longer be a URL ("www." keeps its dot)."""
    end = len(url)
    while end > 0:
        c = url[end - 1]
        if not (c in _URL_TAIL or (c in _URL_CLOSE and url.count(_URL_CLOSE[c], 0, end)
                                   < url.count(c, 0, end))):
            break
        if not _URL.fullmatch(url[:end - 1]):
            break
        end -= 1
    if url[:end].endswith(_URL_POSSESSIVE) and _URL.fullmatch(url[:end - 2]):
        end -= 2
    return end


def _lone(flat: str, c: str) -> bool:
    """Whether ``flat`` holds one run of ``c`` ("*" or "_"), not at its start: it cannot
    pair into emphasis, nor begin a bullet or a rule."""
    runs = list(_RUNS[c].finditer(flat))
    return len(runs) == 1 and runs[0].start() > 0


def _runs(text: str, c: str, lone: bool) -> str:
    """``text`` with each run of ``c`` escaped, but where it cannot act (``lone``; an
    "_" run inside a word)."""
    def one(m: re.Match[str]) -> str:
        s, i, j = m.string, m.start(), m.end()
        inside = c == "_" and i > 0 and j < len(s) and s[i - 1].isalnum() and s[j].isalnum()
        return m.group(0) if lone or inside else ("\\" + c) * len(m.group(0))

    return _RUNS[c].sub(one, text)


def _inert(text: str, *, tildes: bool, definition: bool, lone: str, brackets: bool) -> str:
    out = text.translate(_MD_SPECIAL)
    for c in "*_":
        out = _runs(out, c, c in lone)
    out = _REFERENCE.sub("\\\\&", out)
    if tildes:
        out = out.replace("~", "\\~")
    if brackets:  # every "[" and "]": an image's alt text (see _md)
        return out.replace("[", "\\[").replace("]", "\\]")
    if definition:
        out = _DEFINITION.sub("\\\\]", out)
    return _LINK.sub(lambda m: "\\" + m.group(0), out)


_BACKTICKS = re.compile("`+")


def _code(text: str) -> str:
    """``text`` as a Markdown code span that shows it whole, backticks too: delimited by
    one backtick more than its longest run of them (CommonMark: a span ends at a run of
    its delimiter's length only), and padded by a space on each side where it starts or
    ends with a backtick (the parser strips one such space from each side). QA: a URL's
    backticks became "'" (a file "www.ta``rget.csv" read "www.ta''rget.csv")."""
    fence = "`" * (max((len(r) for r in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md(text: str, *, alt: bool = False) -> str:
    """Text as inert Markdown: one line, active characters escaped where they can act
    (and only there, so the raw file reads as the rendered one), no link, URLs as code
    (:func:`_code`). ``alt``: the text is an image's alt text, inside ``![...]``: every
    ``[`` and ``]`` outside a code span is escaped, as one unmatched ``]`` (a task's or
    a model's name) would end the alt text there and leave the image syntax as text (QA);
    a code span binds before the brackets, so its own stay as they are."""
    flat = " ".join(clean(text).split())
    how = {"tildes": flat.count("~") > 1, "definition": flat.startswith("["),
           "lone": "".join(c for c in "*_" if _lone(flat, c)), "brackets": alt}
    out, pos = [], 0
    for m in _URL.finditer(flat):
        out.append(_inert(flat[pos:m.start()], **how))
        end = m.start() + _url_end(m.group(0))
        out.append(_code(flat[m.start():end]))
        pos = end
    out.append(_inert(flat[pos:], **how))
    return "".join(out)


# What makes a line (a paragraph, a list item's text) a list or a rule where it starts
# it, and only there: "1. " or "1) " (an ordered list: up to nine digits), "- " or "+ "
# (a bullet; "*" is escaped as a run above), each followed by a space or the end, and
# "---" (a rule: three or more "-", spaces between). Its marker is escaped ("1\.",
# "\-"), and nothing else: "1. " inside a line, or in a heading or a table cell, where
# no list can start, is left as written (QA: an item id or a file name "1. intro.txt"
# or "- draft" starting a note made report.md a list).
_LIST_START = re.compile(r"^(\d{1,9})([.)])(?=\s|$)|^([-+])(?=\s|$)|^(-)(?=[ -]*-[ -]*-[ -]*$)")


def _md_line(text: str) -> str:
    """:func:`_md` for text that starts a Markdown line or list item: also its leading
    list marker or rule escaped (:data:`_LIST_START`)."""
    return _LIST_START.sub(lambda m: (f"{m.group(1)}\\{m.group(2)}" if m.group(1)
                                      else "\\" + (m.group(3) or m.group(4))), _md(text),
                           count=1)


def _markdown(blocks: list[_Block]) -> str:
    lines: list[str] = []
    for kind, *args in blocks:
        if kind == "h1":
            lines += [f"# {_md(args[0])}", ""]
        elif kind == "h2":
            lines += [f"## {_md(args[0])}", ""]
        elif kind == "p":
            lines += [_md_line(args[0]), ""]
        elif kind == "warn":
            lines += [f"> **Warning:** {_md(args[0])}", ""]
        elif kind == "list":
            lines += [f"- {_md_line(x)}" for x in args[0]] + [""]
        elif kind == "table":
            header, rows = args
            lines.append("| " + " | ".join(_md(h) for h in header) + " |")
            lines.append("|" + "|".join("---" for _ in header) + "|")
            lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
            lines.append("")
        elif kind == "img":
            src, alt = args
            lines += [f"![{_md(alt, alt=True)}]({src})", ""]
    return "\n".join(lines)


# Long names (a model's path, a spec) may break after their separators (<wbr>, see
# _breakable), a heading or line without any at its edge, so that nothing runs off the
# page (QA: a table: path pushed the title and the comparison's verdict out of view); a
# table still too wide scrolls inside its own box. Numbers never break.
_CSS = """body{font-family:system-ui,sans-serif;max-width:1060px;margin:2em auto;padding:0 1em;
color:#222;overflow-wrap:break-word}.table{overflow-x:auto}table{border-collapse:collapse;
margin:.5em 0 1em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td{font-variant-numeric:tabular-nums}
img{max-width:100%}.warn{background:#fff4e0;border-left:4px solid #f0a020;padding:.4em .8em}"""


_LONG = re.compile(r"\S{24,}")
_SEPARATOR = re.compile(r"([/_\-:])(?=\S)")


# An interval "[low, high]" (either end a number, "—" or an infinity) is one unit: in a
# narrow table column it broke after its comma, "[0.05," over "0.9]" (QA).
_INTERVAL = re.compile(r"\[([^\[\]\s,]+), ([^\[\]\s,]+)\]")


def _breakable(escaped: str) -> str:
    """Escaped HTML text whose long words (paths, specs) may break after a separator, and
    whose intervals never break."""
    text = _LONG.sub(lambda m: _SEPARATOR.sub(r"\1<wbr>", m.group(0)), escaped)
    return _INTERVAL.sub(r"[\1,&nbsp;\2]", text)


def _html(blocks: list[_Block], title: str, inline: Mapping[str, str]) -> str:
    def e(text: object) -> str:
        return _breakable(html.escape(clean(text)))

    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f"<title>{html.escape(clean(title))}</title>", f"<style>{_CSS}</style>",
             "</head>", "<body>"]
    for kind, *args in blocks:
        if kind in ("h1", "h2", "p"):
            parts.append(f"<{kind}>{e(args[0])}</{kind}>")
        elif kind == "warn":
            parts.append(f'<p class="warn"><strong>Warning:</strong> {e(args[0])}</p>')
        elif kind == "list":
            parts.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in args[0]) + "</ul>")
        elif kind == "table":
            header, rows = args
            parts.append('<div class="table"><table><thead><tr>'
                         + "".join(f"<th>{e(h)}</th>" for h in header)
                         + "</tr></thead><tbody>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>"
                      for row in rows]
            parts.append("</tbody></table></div>")
        elif kind == "img":
            src, alt = args
            attr = html.escape(clean(alt))  # an attribute: no <wbr>
            parts.append(f'<p><img src="{inline.get(src, html.escape(clean(src)))}" '
                         f'alt="{attr}"></p>')
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def check_report_dir(out_dir: Any) -> Path:
    """The report's folder ``out_dir`` as a Path: a string or a Path naming a new or
    existing folder (checked before anything is estimated or written).

    Raises:
        ValueError: not a path, an empty string (QA: ``""`` wrote the report into the
            working folder; None raised Python's "expected str, bytes or os.PathLike
            object"), or an existing file.
    """
    from activetest.session.options import check_path

    out = Path(check_path(out_dir, "out_dir", "a folder for the report"))
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file; the report needs a folder (it writes report.md, "
                         f"report.html and PNG figures): name a new or existing folder")
    return out


def write_report(data: ReportData, out_dir: str | Path, *, html: bool = True) -> Path:
    """Write ``report.md`` (and ``report.html``) and the figures into ``out_dir``.

    Figures: ``estimates.png`` always (see :func:`activetest.session.report.plots.plot_estimates`),
    ``acquisition.png`` when ``data.scores`` is given, ``differences.png`` when
    ``data.differences`` holds a compared target's curve. The Markdown refers to them
    by relative path; the HTML inlines them (base64), so it stands alone.
    Existing files of those names are overwritten.

    Returns:
        The path of ``report.md``.

    Raises:
        ValueError: ``out_dir`` is no path, or an existing file, not a folder
            (:func:`check_report_dir`).
    """
    out = check_report_dir(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    images = {ESTIMATES_PNG: ESTIMATES_PNG}
    # one font fallback (or one note) for both figures' names
    with plots.figure_fonts([data.task, data.target, data.surrogate, data.acquisition or "",
                             data.uniform_label, *data.metrics]):
        plots.plot_estimates(data, out / ESTIMATES_PNG)
        if data.scores is not None:
            plots.plot_acquisition(data, out / ACQUISITION_PNG)
        if data.differences:
            plots.plot_differences(data, out / DIFFERENCES_PNG)
            images[DIFFERENCES_PNG] = DIFFERENCES_PNG
    if not data.differences and (out / DIFFERENCES_PNG).exists():
        (out / DIFFERENCES_PNG).unlink()  # stale from an earlier report in this folder
    if data.scores is not None:
        images[ACQUISITION_PNG] = ACQUISITION_PNG
    elif (out / ACQUISITION_PNG).exists():
        (out / ACQUISITION_PNG).unlink()  # stale from an earlier report in this folder
    blocks = _blocks(data, images)
    md_path = out / MARKDOWN
    write_file(md_path, _markdown(blocks).encode("utf-8"))
    if html:
        inline = {name: "data:image/png;base64,"
                  + base64.b64encode((out / name).read_bytes()).decode("ascii")
                  for name in images}
        write_file(out / HTML, _html(blocks, data.title, inline).encode("utf-8"))
    return md_path


def _needed(n: int, n_labels: int, pool: int | None = None) -> str:
    """A projected total of active labels, or "reached" where the session's interval is
    already that narrow: the projection is then the labels used, not what would have
    sufficed, and beside uniform sampling's projection (never floored) it read as
    "uniform needs 3x fewer" (QA: 100 against 37). Beyond the pool (``pool``): not
    reached within it (a bootstrap interval has no finite-population factor; QA: capped
    at the pool, it read "reached" beside a 0.18-wide interval at a census)."""
    if pool is not None and n > pool:
        return f"not within the pool ({pool} items; about {n} projected)"
    return f"reached ({n_labels} used)" if n <= n_labels else str(n)

