"""Persistent active-testing sessions: the SQLite store, the workflow, label files, reports.

* :mod:`~activetest.session.store`: one SQLite file per session (``SessionStore``).
* :mod:`~activetest.session.workflow`: the ``Session`` API (create/open, select,
  add_labels, estimate, status, export/import, write_report).
* :mod:`~activetest.session.labelio`: Label Studio and sheet files in and out.
* :mod:`~activetest.session.report`: Markdown/HTML reports with PNG plots.
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
    "EstimateReport": "workflow", "LabelError": "workflow", "Session": "workflow",
    "SessionStatus": "workflow", "NotASessionError": "store", "SchemaVersionError": "store",
    "SessionError": "store", "SessionLockedError": "store", "SessionStore": "store",
    "run_demo": "demo",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        module = importlib.import_module(f"activetest.session.{_WHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'activetest.session' has no attribute {name!r}")
