"""Scoring jobs side by side: :func:`run_parallel` (two models on two cores, one progress
display; the implementation shares its progress state with the backends' progress bars
in :mod:`activetest.models._util`)."""

from __future__ import annotations

from activetest.models._util import run_parallel

__all__ = ["run_parallel"]
