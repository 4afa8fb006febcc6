"""The rows a session file hands out: draws, labels, label changes, scores, estimates.

Plain frozen records read from (and written through) :class:`activetest.session.store.SessionStore`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from activetest.models.labels import LabelScoring

__all__ = ["Acquisition", "Annotation", "DrawRow", "EstimateRow", "LabelChange",
           "StoredLabel", "StoredScores", "dumps", "now"]


def now() -> str:
    """The current UTC time, ISO 8601 with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def dumps(obj: Any) -> str:
    """JSON as a session stores it: sorted keys, UTF-8 kept, no NaN."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class Acquisition:
    """One draw of the sampler.

    Attributes:
        step: 1 for the first draw, 2 for the second, ...
        index: the item's row in the pool (0-based).
        item_id: the item's id.
        q: the proposal probability the item was drawn with.
        created: when it was drawn (UTC, ISO 8601).
    """

    step: int
    index: int
    item_id: str
    q: float
    created: str


class DrawRow(NamedTuple):
    """One draw without its item id or time (:meth:`SessionStore.draw_rows`): what the
    adaptive design's replay and checkpoint need, read without a join on the items."""

    step: int
    index: int
    q: float


@dataclass(frozen=True)
class StoredLabel:
    """The current label of one item."""

    index: int
    item_id: str
    label: int
    source: str
    created: str
    updated: str


@dataclass(frozen=True)
class Annotation:
    """One answer given on the labelling page (or an imported file's annotator's label),
    a row of the ``annotations`` table (:mod:`activetest.session.annotators`).

    Attributes:
        id: its row.
        index: the item's pool row; item_id: its id.
        role: ``"target"`` (the session's label) or ``"compare:<spec>"`` (the judgment
            of a compared answer).
        annotator: who gave it.
        label: the class (judgment level) given.
        kind: ``"answer"`` or ``"adjudication"`` (given on the page), ``"import"``
            (an annotator's label read from an imported file, kept for agreement) or
            ``"ground truth"`` (one a Label Studio export marks as the reference
            answer: it settled the item, and is not a vote).
        at: when (UTC, ISO 8601).
        undone: when it was undone, or None.
    """

    id: int
    index: int
    item_id: str
    role: str
    annotator: str
    label: int
    kind: str
    at: str
    undone: str | None = None


@dataclass(frozen=True)
class LabelChange:
    """One row of the label history.

    ``action`` is ``"add"`` (first label), ``"change"`` (overwritten with another
    class), ``"confirm"`` (the same class given again by another source, an import,
    which now owns the label: ``old == new``) or ``"undo"`` (reverted to ``new``, which
    is None when the item became unlabelled again). ``role`` is ``"target"`` for the
    session's labels, else the compared answer's role (``compare:<spec>``) whose
    judgment changed.
    """

    id: int
    index: int
    item_id: str
    old: int | None
    new: int | None
    action: str
    source: str
    at: str
    role: str = "target"


@dataclass(frozen=True)
class StoredScores:
    """A model's class log-probabilities over the pool.

    Attributes:
        role: ``"surrogate"``, ``"target"`` or ``"compare:<spec>"``.
        spec: the model spec the scores came from.
        logprobs: ``(N, C)`` float64; rows of items never scored are NaN.
        provenance: where they came from (model identity, prompt, examples, time).
        updated: when they were last written.
    """

    role: str
    spec: str
    logprobs: np.ndarray
    provenance: dict[str, Any]
    updated: str

    @property
    def scored(self) -> np.ndarray:
        """``(N,)`` bool: which rows hold scores."""
        return ~np.isnan(self.logprobs).any(axis=1)

    @property
    def label_scoring(self) -> LabelScoring | None:
        """How the scores were read from the label words (first token or whole word, each
        word's token count), as recorded when they were scored; None where it was not
        (scores stored before it was kept, a table of predictions): unknown."""
        from activetest.models.labels import LabelScoring

        return LabelScoring.from_provenance(self.provenance.get("label_scoring"))


@dataclass(frozen=True)
class EstimateRow:
    """One recorded estimate."""

    id: int
    at: str
    n_labels: int
    metric: str
    method: str
    estimate: float
    std: float | None
    low: float | None
    high: float | None
    level: float | None
    details: dict[str, Any] = field(default_factory=dict)
