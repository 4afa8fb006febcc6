"""The report of a :class:`~activetest.session.workflow.Session` as it stands: one
estimate (not recorded) with what it was computed from, gathered into
:class:`~activetest.session.report.build.ReportInputs`, and the files written from it
(:meth:`~activetest.session.workflow.Session.report_data`,
:meth:`~activetest.session.workflow.Session.write_report`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["next_proposal", "report_data", "write_report"]


def report_data(s: Any, *, compare: Sequence[Any] | Any, target_width: float | None,
                truth: Mapping[str, float] | None, n_points: int, title: str | None,
                notes: Sequence[str], progress: bool) -> Any:
    """The :class:`activetest.session.report.ReportData` of the open session ``s`` as it
    stands (:meth:`activetest.session.workflow.Session.report_data`: its arguments)."""
    from activetest.session import estimate as est
    from activetest.session.harness import labels_from
    from activetest.session.report.build import (
        ReportInputs,
        check_report_options,
    )
    from activetest.session.report.build import report_data as build_report_data

    # before the estimate (which may score and store): a bad option named
    check_report_options(truth=truth, n_points=n_points, title=title, notes=notes)
    # every budget's blind spot: the curves before 30 labels are widened as the
    # estimate at that budget was (QA: they showed the unwidened interval there)
    parts = s._estimate(compare=compare, n_boot=None, level=None,
                        target_width=target_width, record=False, progress=progress,
                        curves_from=1)
    report = parts.report
    acq = s.acquisitions()
    given = parts.inputs  # the kind's inputs: the differences' bounds, the proposal
    inputs = ReportInputs(
        estimate=report, draws=parts.draws, losses=parts.losses,
        config=s.session_config, task_name=s.task.name,
        class_names=tuple(s.task.class_names), scores=s.acquisition_scores(),
        acquired_idx=np.array([a.index for a in acq], dtype=np.int64),
        acquired_q=np.array([a.q for a in acq], dtype=np.float64),
        design_controls=parts.design_controls,
        item_fields={f.item_id: s.item(f.item_id).fields for f in report.flagged},
        provenance={r: s.provenance(r) for r in ("surrogate", "target")},
        session=str(s.path), blind_spots=parts.blind_spots,
        loss_bounds=parts.loss_bounds,
        variance_floors=dict(parts.variance_floors.metrics), labels_from=labels_from(s),
        compare_losses=parts.compare, other_loss_bounds=parts.other_loss_bounds,
        difference_floors=parts.variance_floors.differences,
        difference_bounds={} if given is None else given.difference_bounds,
        difference_proposal=None if given is None else est.fixed_proposal(
            s.session_config, given, bool(parts.design_controls)),
        difference_weight_bounds=given.difference_weight_bounds
        if given is not None and parts.design_controls else {},
        next_proposal=next_proposal(s, parts.sampler))
    return build_report_data(inputs, truth=truth, n_points=n_points, title=title, notes=notes)


def next_proposal(s: Any, sampler: Any) -> np.ndarray | None:
    """An adaptive design's ``(N,)`` proposal for the session's next draw (None: a fixed
    proposal, every item drawn, or a state the design cannot plan from)."""
    if sampler is None or s.store.n_acquired() >= s.n_items:
        return None
    try:
        return np.asarray(sampler.plan().q, dtype=np.float64)
    except (RuntimeError, ValueError):  # e.g. a refit left unsettled: no figure of it
        return None


def write_report(s: Any, out_dir: str | os.PathLike[str], *, html: bool,
                 kwargs: Mapping[str, Any]) -> Path:
    """Write ``report.md`` (and ``report.html`` where ``html``) and the figures of the
    open session ``s`` into ``out_dir`` (:meth:`activetest.session.workflow.Session.
    write_report`: the keywords ``kwargs`` are those of ``report_data``); returns the
    Markdown path. Every option is checked before anything is estimated or written.

    Raises:
        TypeError: a keyword neither takes, named with those they do.
        ValueError: ``html`` is not True or False, or another option of the wrong
            type or range; ``out_dir`` is no folder.
    """
    import inspect

    from activetest.session.options import check_flag
    from activetest.session.report import write_report as write_files
    from activetest.session.report.render import check_report_dir

    known = [k for k, p in inspect.signature(s.report_data).parameters.items()
             if p.kind is p.KEYWORD_ONLY]
    unknown = [k for k in kwargs if k not in known]
    if unknown:
        what = ("an unexpected keyword argument" if len(unknown) == 1
                else "unexpected keyword arguments")
        raise TypeError(f"Session.write_report() got {what} "
                        f"{', '.join(map(repr, unknown))}; it takes out_dir and the "
                        f"keywords html, {', '.join(known)}")
    # before the estimate: a bad flag or folder named (QA: html= was refused)
    html = check_flag(html, "html")
    check_report_dir(out_dir)
    return write_files(s.report_data(**kwargs), out_dir, html=html)
