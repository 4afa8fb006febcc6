"""What an estimate with a target width says per metric about stopping.

``activetest estimate --target-width W`` prints, per metric, whether the anytime CS is
within W (you may stop), the labels it needs (a projection, or certain where the sure
bounds alone get there), or why there is no projection; ``str(report)`` of an estimate
with ``target_width=`` (:meth:`activetest.ActiveTest.estimate`) says the same lines
(:meth:`activetest.session.records.EstimateReport.summary`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from activetest.session.interval_names import ANYTIME, EXACT_ANYTIME, interval_name

__all__ = ["StopLine", "stop_lines"]


@dataclass(frozen=True)
class StopLine:
    """One metric's line about stopping.

    Attributes:
        metric: the metric it is about.
        text: the line, plain text (the metric first).
        may_stop: the CS is within the width: the line begins ``"<metric>: you may stop
            now"`` (the terminal shows that part in bold).
    """

    metric: str
    text: str
    may_stop: bool = False


def stop_lines(report: Any) -> list[StopLine]:
    """Per metric of ``report`` (an :class:`~activetest.session.records.EstimateReport`)
    estimated with a target width, its :class:`StopLine`; none for a metric without one
    or where nothing is to be said."""
    cs_name = interval_name(ANYTIME, report.level)
    out = []
    for m in report.metrics.values():
        a = m.anytime
        if a is None or a.target_width is None:
            continue
        more = None if a.labels_needed is None else max(0, a.labels_needed - report.n_labels)
        if a.may_stop:
            line = (f"{m.metric}: you may stop now: the {cs_name} is "
                    f"{a.cs_high - a.cs_low:.4g} wide, within {a.target_width:g}")
        elif a.labels_needed is not None and a.labels_needed_sure:
            # not a projection: the sure bounds alone get there (QA: "(a projection)"
            # beside a count the labels make certain)
            line = (f"{m.metric}: the {cs_name} is within width {a.target_width:g} by "
                    f"{a.labels_needed} labels at the latest ({more} more): certain, the "
                    f"bounds that hold surely then cut it within the width, whatever the "
                    f"labels are")
        elif a.labels_needed is not None:
            line = (f"{m.metric}: the {cs_name} reaches width {a.target_width:g} at about "
                    f"{a.labels_needed} labels ({more} more; a projection)")
        elif a.basis == "exact":
            line = (f"{m.metric}: no projection while the "
                    f"{interval_name(EXACT_ANYTIME, report.level)} stands in "
                    f"({a.basis_note or 'few errors labelled'}): its width follows the "
                    f"errors labelled, not a formula; stop on it as observed")
        elif a.basis != "sure" and not a.se > 0 and report.n_labels < report.n_pool:
            line = (f"{m.metric}: no projection while every labelled term is the same: "
                    f"there is no spread to project the {cs_name}'s width from (see the "
                    f"note); label more")
        elif a.estimate_outside_cs:
            line = (f"{m.metric}: the {cs_name} is {a.cs_high - a.cs_low:.4g} wide, within "
                    f"{a.target_width:g}, but no longer holds its estimate: no basis to "
                    f"stop (see the note); label more")
        else:
            continue
        out.append(StopLine(m.metric, line, bool(a.may_stop)))
    return out
