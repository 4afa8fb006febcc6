"""The one interface every scoring backend implements.

items in, ``(N, C)`` float64 class log-probabilities out, where the C classes are
the task's label words and each row is a log-softmax over those classes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from activetest.data.task import Item, Task

__all__ = ["Generation", "Scorer", "Scores"]


@dataclass(frozen=True)
class Generation:
    """One generated answer.

    Attributes:
        text: the answer (the continuation cut at the first stop string, stripped).
        raw: the whole decoded continuation.
        token_ids: the generated tokens (including the one that completed a stop
            string, if any).
        token_logprobs: log-probability (full-vocabulary softmax) of each of them.
        finish: ``stop``, ``eos`` (end-of-generation token) or ``length``.
        n_answer_tokens: how many leading tokens make up the answer (all of them
            unless a stop string ended it).
    """

    text: str
    raw: str
    token_ids: tuple[int, ...]
    token_logprobs: tuple[float, ...]
    finish: str
    n_answer_tokens: int

    def answer_logprobs(self) -> tuple[float, ...]:
        """Log-probs of the answer's own tokens (the stop token excluded)."""
        return self.token_logprobs[: self.n_answer_tokens]


@dataclass(frozen=True)
class Scores:
    """Class log-probabilities for a list of items, with where they came from.

    Attributes:
        item_ids: the N item ids, in row order.
        logprobs: ``(N, C)`` float64; ``logsumexp`` of each row is 0.
        classes: the C label words (column order).
        provenance: model, backend, settings, prompt hash, ... (JSON-serialisable).
    """

    item_ids: tuple[str, ...]
    logprobs: np.ndarray
    classes: tuple[str, ...]
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lp = np.asarray(self.logprobs, dtype=np.float64)
        if lp.ndim != 2 or lp.shape != (len(self.item_ids), len(self.classes)):
            raise ValueError(f"logprobs must have shape (N={len(self.item_ids)}, "
                             f"C={len(self.classes)}), got {lp.shape}")
        object.__setattr__(self, "logprobs", lp)


@runtime_checkable
class Scorer(Protocol):
    """A model that turns items into class log-probabilities."""

    name: str

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """Return ``(len(items), task.n_classes)`` float64 class log-probabilities.

        ``examples`` are the in-context examples (in order; empty for zero-shot).
        """
        ...
