"""Persistent active-testing sessions, one job a module, in the order data flows:

* :mod:`~activetest.session.store`: one SQLite file per session (``SessionStore``).
* :mod:`~activetest.session.create`: read the inputs, score the pool, write the file.
* :mod:`~activetest.session.scoring`: model specs as stored, scorers, scores on demand.
* :mod:`~activetest.session.draw`: the stored sampler, resumed exactly.
* :mod:`~activetest.session.labels`: labels checked, imported, exported
  (:mod:`~activetest.session.labelio`: the file formats, Label Studio and sheets).
* :mod:`~activetest.session.estimate`: pure functions from stored state to estimates.
* :mod:`~activetest.session.records`: the dataclasses they return.
* :mod:`~activetest.session.report`: Markdown/HTML reports with PNG plots.
* :mod:`~activetest.session.workflow`: the thin ``Session`` facade the CLI calls; what
  its methods do beyond joining the rooms above lives in one module a job:
  :mod:`~activetest.session.session_checks`, :mod:`~activetest.session.target_model`,
  :mod:`~activetest.session.adaptive_select`, :mod:`~activetest.session.labels_in`,
  :mod:`~activetest.session.compared_join`, :mod:`~activetest.session.session_report`,
  :mod:`~activetest.session.session_status`.
* :mod:`~activetest.session.demo`: the offline demo (``run_demo``).

Submodules are imported lazily so that ``import activetest.session`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "EstimateReport",
    "LabelError",
    "NotASessionError",
    "SchemaVersionError",
    "Session",
    "SessionError",
    "SessionLockedError",
    "SessionStatus",
    "SessionStore",
    "run_demo",
]

_WHERE = {
    "EstimateReport": "records", "LabelError": "records", "Session": "workflow",
    "SessionStatus": "records", "NotASessionError": "store", "SchemaVersionError": "store",
    "SessionError": "store", "SessionLockedError": "store", "SessionStore": "store",
    "run_demo": "demo",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        module = importlib.import_module(f"activetest.session.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'activetest.session' has no attribute {name!r}")
