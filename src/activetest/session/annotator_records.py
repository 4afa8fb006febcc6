"""The labelling page's typed records: an answer, an assignment, a disagreement, the
agreement report, and an item's state as the page tracks it; the annotator-name rule.

Split from :mod:`activetest.session.annotators` (which re-exports every name), so that
the page's records, its agreement statistics (:mod:`.annotator_agreement`) and the
:class:`~activetest.session.annotators.Annotators` that writes them each have a module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from activetest.session.records import LabelError
from activetest.session.store_rows import Annotation  # (the store keeps those it wrote)

__all__ = ["ANNOTATION_SOURCE", "GROUND_TRUTH_KIND", "IMPORT_KIND", "VOTE_KINDS",
           "AgreementReport", "AgreementStat", "Annotation", "Assignment", "Disagreement",
           "ItemState", "check_name", "has_annotations", "names_no_one", "read_annotations"]

#: The label source of an answer given on the page (``web (<annotator>)``).
ANNOTATION_SOURCE = "web"
#: Kinds of stored answers that are votes (agreement is computed on them): one given
#: on the page, and an annotator's label read from an imported file.
VOTE_KINDS = ("answer", "import")
#: The kind of an imported label (a vote), and of one a Label Studio export marks as
#: ground truth (it settles the item, as an adjudication; not a vote).
IMPORT_KIND = "import"
GROUND_TRUTH_KIND = "ground truth"
_NAME = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,64}$")


def has_annotations(store: Any) -> bool:
    """Whether the session file holds this module's tables (the page, or an import that
    names annotators, has written)."""
    rows = store._read("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                       "name = 'annotations'")
    return bool(rows)


def check_name(name: Any, what: str = "annotator", argument: str = "annotator") -> str:
    """An annotator's name as stored: text (a ``str``), stripped, 1-64 characters, no
    control characters.

    Args:
        name: the name as the caller gave it.
        what: who it names in messages (``annotator``, ``adjudicator``).
        argument: the caller's argument that carried it, named when it is no text.

    Raises:
        LabelError: not a string (QA: ``5`` was stored as the name ``"5"`` and ``None``
            read as an empty name), empty, too long, or with control characters.
    """
    if not isinstance(name, str):
        raise LabelError(f"{argument}={name!r}: the {what}'s name must be text (a str), "
                         f"got {type(name).__name__} {name!r}")
    text = name.strip()
    if not _NAME.match(text):
        raise LabelError(f"the {what}'s name must be 1 to 64 characters without control "
                         f"characters, got {text[:80]!r}")
    return text


def names_no_one(annotator: Any) -> bool:
    """Whether a record's ``annotator`` names no one: None, or text that is empty or only
    whitespace (a blank cell, as an empty one: :func:`check_name` strips a name, so such
    text is no name). Every reader of an imported record's annotator (the label checks,
    the votes kept for agreement, their count, a graded comparison's settling of alike
    answers) holds it to this one rule; anything else is a name, checked by
    :func:`check_name` (a value that is no text is refused there).
    """
    return annotator is None or (isinstance(annotator, str) and not annotator.strip())


@dataclass(frozen=True)
class Assignment:
    """An item given to an annotator, as the page shows it.

    Attributes:
        item_id, step: the item and its draw step.
        fields: ``(name, text)`` of what to read (the item's fields; graded: the
            question, context and references), in order.
        answers: the answers to judge, in the order shown (graded: one; a paired
            comparison: one per target, in the item's stored random order; no model
            names); empty for a classification item.
        need: how many annotators the item asks for.
        answered_by: how many have answered it so far.
        guess: the surrogate's guess ``(class name, probability)`` when shown, else None.
        again: True when it is an item set aside earlier (``s``) and offered again.
    """

    item_id: str
    step: int
    fields: tuple[tuple[str, str], ...]
    answers: tuple[str, ...]
    need: int
    answered_by: int
    guess: tuple[str, float] | None = None
    again: bool = False


@dataclass(frozen=True)
class Disagreement:
    """An item (one answer of it) whose annotators gave different levels.

    Attributes:
        item_id, step: the item and its draw step.
        role: whose answer (``target`` or ``compare:<spec>``).
        votes: ``(annotator, class name, time)`` of each annotator's latest answer.
        settled: the class name the session now holds, or None (unlabelled).
        how: ``adjudicated by NAME``, the rule's name, or ``unsettled``.
    """

    item_id: str
    step: int
    role: str
    votes: tuple[tuple[str, str, str], ...]
    settled: str | None
    how: str


@dataclass(frozen=True)
class AgreementStat:
    """One agreement statistic with its seeded bootstrap interval (over items: each
    resample takes whole items, with every answer of theirs that was judged).

    ``n_units``: the answers (item x role) it uses; ``n_items``: the items they belong
    to (fewer where two targets' answers to one item were both judged)."""

    name: str
    estimate: float
    low: float
    high: float
    level: float
    n_units: int
    n_boot: int
    seed: int
    n_items: int | None = None


@dataclass(frozen=True)
class AgreementReport:
    """Agreement on the items two or more annotators answered.

    Attributes:
        annotators: everyone who answered, sorted.
        n_overlap: answers (item x role) with two or more annotators.
        stats: Cohen's kappa (when exactly two annotators share items), Krippendorff's
            alpha (nominal; and interval on the levels' scores for a graded task),
            each with its bootstrap interval.
        disagreements: the items where they differ.
        note: what was and was not computed, in words.
        sources: where the answers come from: ``"on the labelling page"``, ``"in
            imported files"`` or both.
    """

    annotators: tuple[str, ...]
    n_overlap: int
    stats: tuple[AgreementStat, ...] = ()
    disagreements: tuple[Disagreement, ...] = ()
    note: str = ""
    sources: str = "on the labelling page"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (NaN as None)."""
        from dataclasses import asdict

        def clean(x: Any) -> Any:
            if isinstance(x, float) and x != x:
                return None
            if isinstance(x, dict):
                return {k: clean(v) for k, v in x.items()}
            if isinstance(x, (list, tuple)):
                return [clean(v) for v in x]
            return x

        return clean(asdict(self))  # type: ignore[no-any-return]


@dataclass
class ItemState:
    """One drawn item as the page tracks it: its step, pool row, id and the answers
    given to it (role -> rows), or only who answered when read without rows."""

    step: int
    index: int
    item_id: str
    answers: dict[str, list[Annotation]] = field(default_factory=dict)  # role -> rows
    who: set[str] | None = None  # who answered (not adjudicated), when read without rows


def read_annotations(store: Any, ids: Sequence[str], include_undone: bool) -> list[Annotation]:
    """Every answer stored (``include_undone``: undone ones too), in the order given;
    ``ids`` the pool's item ids by row."""
    sql = "SELECT id, idx, role, annotator, label, kind, at, undone FROM annotations"
    if not include_undone:
        sql += " WHERE undone IS NULL"
    return [Annotation(int(r[0]), int(r[1]), ids[int(r[1])], r[2], r[3], int(r[4]), r[5], r[6],
                       r[7]) for r in store._read(sql + " ORDER BY id")]
