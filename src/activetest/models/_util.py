"""Small helpers shared by the scoring backends."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["log_softmax", "progress_bar"]


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 via log-sum-exp (no overflow for large logits)."""
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    z = x - m
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


@contextlib.contextmanager
def progress_bar(total: int, description: str, enabled: bool) -> Iterator[Any]:
    """A transient rich progress bar; yields ``advance(n=1)``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn(), disable=not enabled, transient=True)
    with bar:
        tid = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(tid, n)
