"""``activetest.inspect``: active testing inside inspect_ai (an early-stopping manager).

The implementation lives in :mod:`activetest.inspect_stopping` (this module's name is
the standard library's ``inspect`` too; absolute imports keep them apart). inspect_ai
is imported only when the manager needs it.
"""

from __future__ import annotations

from activetest.inspect_stopping import (
    MANAGER,
    ActiveStopping,
    PrefixIntervals,
    StopSummary,
    prefix_intervals,
)

__all__ = ["MANAGER", "ActiveStopping", "PrefixIntervals", "StopSummary", "prefix_intervals"]
