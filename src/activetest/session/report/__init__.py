"""The session report: Markdown (and self-contained HTML) with PNG figures.

Fill a :class:`ReportData` (or let :func:`report_data` fill it from a session's
plain :class:`ReportInputs`) and call :func:`write_report`::

    data = ReportData(title="SST-2, round 3", task="sst2", target="gemma3-270m",
                      surrogate="smollm2-135m", metrics=["log loss", "error rate"],
                      history={"log loss": [(10, (0.71, (0.52, 0.90)), (0.69, (0.44, 0.94))), ...],
                               "error rate": [...]},
                      scores=pool_scores, acquired_idx=idx, acquired_q=q)
    write_report(data, "session/report")   # -> session/report/report.md

``out_dir`` then holds ``report.md``, ``report.html`` (images inlined as base64,
so the one file can be mailed), ``estimates.png`` and, when pool scores are
given, ``acquisition.png``. Nothing depends on the clock or on randomness: the
same data give byte-identical Markdown.

The data flow is one way: :mod:`.data` (records) <- :mod:`.plots` (figures) <-
:mod:`.render` (documents); :mod:`.build` makes the records from a session's
:class:`ReportInputs` (no session object: :meth:`Session.report_data` fills them);
:mod:`.files` writes each file whole (beside its place, then renamed), naming it on failure.
"""

from __future__ import annotations

from activetest.session.report.build import ReportInputs, report_data
from activetest.session.report.data import (
    Comparison,
    Estimate,
    FlaggedItem,
    HistoryRow,
    Interval,
    LabelsNeeded,
    ReportData,
)
from activetest.session.report.render import (
    ACQUISITION_PNG,
    ESTIMATES_PNG,
    HTML,
    MARKDOWN,
    MIN_RELIABLE_LABELS,
    write_report,
)

__all__ = ["ACQUISITION_PNG", "ESTIMATES_PNG", "HTML", "MARKDOWN", "MIN_RELIABLE_LABELS",
           "Comparison", "Estimate", "FlaggedItem", "HistoryRow", "Interval", "LabelsNeeded",
           "ReportData",
           "ReportInputs", "report_data", "write_report"]
