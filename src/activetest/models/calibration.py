"""Contextual calibration of in-context class probabilities (Zhao et al., 2021).

A few-shot prompt biases a small model towards some label words (the majority
or the most recent label of the examples, or a word the model likes anyway):
SmolLM2-135M with 50 SST-2 examples says "positive" to almost everything. The
bias can be measured without labels by asking the model about *content-free*
inputs (``"N/A"``, ``""``, ``"[MASK]"``) in the same prompt: whatever it prefers
there is the prompt's bias. Contextual calibration divides it out::

    p_cf      = mean over content-free inputs of p(. | prefix, input)   (renormalised)
    p_cal(c)  ∝ p(c | prefix, x) / p_cf(c)
    log p_cal = log_softmax(log p(. | x) - log p_cf)

It uses no labels, so it is fair game for a surrogate (and leaves the active
testing estimate unbiased: the surrogate only shapes the proposal). A calibrated
*target* is a different model; evaluate it as such.

Use it with the spec prefix ``calibrated:`` anywhere a model is accepted
(``calibrated:smollm2-135m``), or wrap a scorer in :class:`CalibratedScorer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.models._util import log_softmax
from activetest.models.base import Scorer

__all__ = ["CONTENT_FREE", "CalibratedScorer", "content_free_items", "contextual_calibration"]

#: The content-free inputs of Zhao et al. (2021).
CONTENT_FREE: tuple[str, ...] = ("N/A", "", "[MASK]")


def contextual_calibration(logprobs: np.ndarray, content_free_logprobs: np.ndarray) -> np.ndarray:
    """Calibrated class log-probabilities.

    Args:
        logprobs: ``(N, C)`` class log-probabilities of the items.
        content_free_logprobs: ``(K, C)`` class log-probabilities of K content-free
            inputs under the same prompt prefix.

    Returns:
        ``(N, C)``: ``log_softmax(logprobs - log p_cf)`` with ``p_cf`` the mean of the
        content-free probability vectors, renormalised. A content-free mean that is
        uniform leaves the scores unchanged.
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    cf = np.asarray(content_free_logprobs, dtype=np.float64)
    if lp.ndim != 2 or cf.ndim != 2 or cf.shape[1] != lp.shape[1] or cf.shape[0] == 0:
        raise ValueError(f"need (N, C) item and (K >= 1, C) content-free log-probs, got "
                         f"{lp.shape} and {cf.shape}")
    if not (np.all(np.isfinite(lp)) and np.all(np.isfinite(cf))):
        raise ValueError("log-probabilities must be finite")
    # Mean of probability vectors, in log space without underflow.
    m = cf.max(axis=0)
    log_pcf = m + np.log(np.exp(cf - m).mean(axis=0))
    return log_softmax(lp - log_softmax(log_pcf))


def content_free_items(task: Task, texts: Sequence[str] = CONTENT_FREE) -> list[Item]:
    """One item per content-free text, with that text in every template field."""
    fields = sorted(task.template_fields())
    return [Item(f"__content_free_{k}__", {f: t for f in fields}) for k, t in enumerate(texts)]


class CalibratedScorer:
    """Wrap a scorer with contextual calibration (see the module docstring).

    Args:
        scorer: any scorer. It scores the items and, with the same in-context
            examples, the content-free inputs (a few extra items per call).
        texts: the content-free inputs.
    """

    def __init__(self, scorer: Scorer, texts: Sequence[str] = CONTENT_FREE) -> None:
        if not texts:
            raise ValueError("contextual calibration needs at least one content-free input")
        self.scorer = scorer
        self.texts = tuple(texts)
        self.name = f"calibrated:{scorer.name}"
        self.backend = getattr(scorer, "backend", None)

    def cache_identity(self) -> dict[str, Any]:
        """The wrapped scorer's identity plus the calibration (for the score cache)."""
        from activetest.models.cache import scorer_identity

        return {"calibration": "contextual", "content_free": list(self.texts),
                "scorer": scorer_identity(self.scorer)}

    def content_free_logprobs(self, task: Task, examples: Sequence[Item] = ()) -> np.ndarray:
        """``(K, C)`` class log-probabilities of the content-free inputs."""
        return np.asarray(self.scorer.score(task, content_free_items(task, self.texts),
                                            examples, progress=False), dtype=np.float64)

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """Calibrated ``(len(items), C)`` class log-probabilities."""
        raw = np.asarray(self.scorer.score(task, items, examples, progress=progress),
                         dtype=np.float64)
        if len(items) == 0:
            return raw
        return contextual_calibration(raw, self.content_free_logprobs(task, examples))

    def label_scoring(self, task: Task) -> Any:
        """The wrapped scorer's ``label_scoring(task)`` (None when it has none; calibration
        changes the class scores, not how they are read from the label words)."""
        fn = getattr(self.scorer, "label_scoring", None)
        return fn(task) if callable(fn) else None

    @property
    def multi_token_remedy(self) -> str | None:
        """The wrapped scorer's advice on multi-token label words (None when it has none)."""
        return getattr(self.scorer, "multi_token_remedy", None)

    def close(self) -> None:
        """Close the wrapped scorer if it can be closed."""
        close = getattr(self.scorer, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"CalibratedScorer({self.scorer!r})"
