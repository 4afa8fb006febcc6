"""activetest: label-efficient evaluation of language models by active testing.

``import activetest as at`` gives the few names a user needs (each imported on first
use, so ``import activetest`` stays fast):

* :class:`ActiveTest`: a run in memory, on arrays: ``next(k)`` draws the items to
  label, ``label(i, y)`` records a label, ``estimate()`` returns the estimate with its
  fixed-budget, anytime and bootstrap intervals. It runs the default method, the
  adaptive design.
* :class:`Session`: the same run persisted in a file, with a task, a pool of items and
  models that score it (what the ``activetest`` command works on).
* :class:`EstimateReport`: what ``estimate()`` returns (and ``activetest estimate``
  prints); per metric a :class:`MetricEstimate`, whose ``anytime`` is an
  :class:`AnytimeInterval`.
* :class:`SessionError`: a session refuses an input or an action (a ``ValueError``).

The statistics themselves (acquisition, samplers, estimators, intervals) are plain
functions of arrays in :mod:`activetest.stats`.
"""

from __future__ import annotations

from activetest import _lazy

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported on first use).
_EXPORTS = {
    "ActiveTest": "activetest.api",
    "AnytimeInterval": "activetest.session.records",
    "EstimateReport": "activetest.session.records",
    "MetricEstimate": "activetest.session.records",
    "Session": "activetest.session.workflow",
    "SessionError": "activetest.session.store",
}

__all__ = ["ActiveTest", "AnytimeInterval", "EstimateReport", "MetricEstimate", "Session",
           "SessionError", "__version__"]

TYPE_CHECKING = False  # not typing's: importing typing would double the import time
if TYPE_CHECKING:
    from activetest.api import ActiveTest
    from activetest.session.records import AnytimeInterval, EstimateReport, MetricEstimate
    from activetest.session.store import SessionError
    from activetest.session.workflow import Session


__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS, globals())
