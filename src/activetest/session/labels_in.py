"""Labels into a :class:`~activetest.session.workflow.Session`: the records as given
(pairs, a mapping, records with ``item_id`` and ``label``) read one way, checked against
the items as they were shown, written in one transaction with the annotators' votes
(:meth:`~activetest.session.workflow.Session.add_labels`,
:meth:`~activetest.session.workflow.Session.judge_many`, and the imports of
:mod:`activetest.session.exchange`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from activetest.data.task import Item
from activetest.session import compare_graded, labels, put_back_rows
from activetest.session.annotator_records import names_no_one
from activetest.session.records import LabelImport
from activetest.session.store import LabelChange

__all__ = ["add_labels", "add_roles", "check_alike", "check_shown", "keep_votes", "label_records"]


def label_records(records: Iterable[Any] | Mapping[Any, Any], what: str = "label",
                  ) -> list[Any]:
    """Labels as the checks read them: a mapping ``item_id -> label`` as its pairs, a
    list ``[item_id, label]`` as a tuple (QA: ``add_labels({"r3": "positive"})`` failed
    with "'str' object has no attribute 'item_id'"). ``what`` names one record in the
    messages: ``"label 2 is ..."`` (:meth:`~activetest.session.workflow.Session.add_labels`),
    ``"record 2 is ..."`` (:meth:`~activetest.session.workflow.Session.judge_many`, whose
    records are judgments: QA, they were "label 2").

    Raises:
        TypeError: a record that is neither a pair nor has ``item_id`` and ``label``.
    """
    if isinstance(records, Mapping):
        return list(records.items())
    if isinstance(records, (str, bytes)):
        raise TypeError(f"records must be (item_id, label) pairs or a mapping item_id -> "
                        f"label, got the string {records!r}")
    if not isinstance(records, Iterable):  # (QA: None: "'NoneType' object is not iterable")
        raise TypeError(f"records must be (item_id, label) pairs or a mapping item_id -> "
                        f"label, got {type(records).__name__} {records!r}")
    out = []
    for n, rec in enumerate(records, start=1):
        if isinstance(rec, list) and len(rec) in (2, 3):
            rec = tuple(rec)
        if not isinstance(rec, tuple) and not (hasattr(rec, "item_id") and
                                               hasattr(rec, "label")):
            raise TypeError(f"{what} {n} is {rec!r}: give (item_id, label) pairs, a mapping "
                            f"item_id -> label, or records with item_id and label")
        if isinstance(rec, tuple) and len(rec) not in (2, 3):
            raise TypeError(f"{what} {n} is {rec!r}: a pair is (item_id, label)")
        out.append(rec)
    return out


def add_labels(s: Any, records: Iterable[Any] | Mapping[Any, Any], *, source: str,
               overwrite: bool, where: str, resolve: str,
               trust_people: bool, alike: bool = True) -> LabelImport:
    """:meth:`activetest.session.workflow.Session.add_labels` of the open session ``s``
    (its arguments and errors): every record checked, then written in one transaction;
    ``alike`` False leaves the one-judgment-per-answer-text check (:func:`check_alike`)
    to a caller that writes the compared judgments of the same items next, in the same
    transaction (:func:`add_roles`)."""
    from activetest.session.harness import check_people_labels

    labels.check_source(source)  # (QA: source=5 or None was stored as it was)
    records = label_records(records)
    put_back_rows.check_kinds(records, where)
    given = put_back_rows.standing(records)  # (undone: taken back, not given)
    with s.store.transaction():  # checks and writes: no other writer between
        check_shown(s, records)
        todo = put_back_rows.check_taken_back(s, put_back_rows.undone_labels(records), given,
                                              overwrite=overwrite, where=where)
        index = s._row_index()
        result = labels.add_labels(s.store, s.task, index, given,
                                   source=source, overwrite=overwrite, where=where,
                                   resolve=resolve)
        # after the usual checks (an unknown or undrawn item is named as such); a
        # refusal rolls the transaction back
        check_people_labels(s, result.changes, source, trust=trust_people)
        if alike:
            check_alike(s, [c.index for c in result.changes])
        taken = put_back_rows.take_back(s, todo, source)
        result = dataclasses.replace(result, changes=[*result.changes, *taken],
                                     taken_back=len(taken))
        return keep_votes(s, result, records)


def add_roles(s: Any, item_id: str, levels: Sequence[tuple[str, int, str]],
              ) -> list[LabelChange]:
    """One item's label and compared answers' judgments, ``(role, level, source)`` each
    (role ``target`` or ``compare:<spec>``), written in order in ONE transaction (the open
    one, if any), each replacing what is stored (history kept), with
    :meth:`~activetest.session.workflow.Session.add_labels`' and
    :meth:`~activetest.session.workflow.Session.judge_many`'s checks but WITHOUT the
    one-judgment-per-answer-text check: the caller makes it once all are written
    (:func:`activetest.session.compare_graded.alike_conflict`), in the same transaction.
    Written one by one with the check after each, a settled answer that changes the
    judgment of a same-text pair was refused after its first role (the pair differed for
    a moment): the labelling page's second annotator, QA.

    Raises:
        LabelError: from those checks (unknown or undrawn item, level out of range).
    """
    out: list[LabelChange] = []
    with s.store.transaction():
        for role, level, source in levels:
            if role == "target":
                out += add_labels(s, [(item_id, level)], source=source, overwrite=True,
                                  where="", resolve="skip", trust_people=False,
                                  alike=False).changes
            else:
                out += compare_graded.add_judgments(
                    s.store, s.task, s._row_index(), role.removeprefix("compare:"),
                    [(item_id, level)], source=source, overwrite=True, alike=False)
    return out


def keep_votes(s: Any, result: LabelImport, records: Sequence[Any]) -> LabelImport:
    """``result`` with the annotators' labels of ``records`` kept for agreement
    (:func:`activetest.session.annotators.keep_votes`, in the open transaction), and
    those the records mark undone kept undone
    (:func:`~activetest.session.annotators.keep_undone`)."""
    from activetest.session.annotators import keep_undone
    from activetest.session.annotators import keep_votes as keep_annotator_votes

    named = [r for r in records if not isinstance(r, tuple)]
    if not named:
        return result  # (item_id, label) pairs: nobody to name
    # a whitespace-only name is no name, as everywhere else (QA: it was counted named);
    # a put-back sheet's label rows (their source the session's own) are the session's
    # labels as they were, not voters (QA: "N label(s) name no annotator" said of them)
    unnamed = sum(1 for r in put_back_rows.standing(named)
                  if names_no_one(getattr(r, "annotator", None))
                  and not getattr(r, "own_source", False))
    return dataclasses.replace(result, votes_kept=keep_annotator_votes(s, named),
                               unnamed=unnamed, answers_undone=keep_undone(s, named))


def check_alike(s: Any, rows: Sequence[int]) -> None:
    """A graded comparison's one judgment per answer text
    (:func:`activetest.session.compare_graded.check_alike`), after a write, inside its
    transaction."""
    if rows and s.compared_targets():  # graded sessions only have them
        compare_graded.check_alike(s.store, s.task, rows)  # type: ignore[arg-type]


def check_shown(s: Any, records: Sequence[Any]) -> None:
    """:func:`activetest.session.labels.check_shown` against the drawn items of ``s`` as
    its exports show them."""
    if not any(getattr(r, "check", None) or getattr(r, "shown", None) for r in records):
        return  # no row carries a check or any other cell to compare
    drawn = sorted({a.index for a in s.acquisitions()})
    specs = s.compared_targets()
    cache: dict[str, dict[int, Item]] = {}

    def display(role: str) -> dict[int, Item] | None:
        if role != "target" and role not in specs:
            return None
        if role not in cache:
            store_role = ("target" if role == "target"
                          else compare_graded.compare_role(role))
            cache[role] = dict(zip(drawn, s._display_items(drawn, store_role),
                                   strict=True))
        return cache[role]

    steps = {a.index: a.step for a in s.acquisitions()}
    cfg = s.session_config

    def letter(row: int, role: str) -> str:
        store_role = "target" if role == "target" else compare_graded.compare_role(role)
        return compare_graded.answer_letter(cfg, steps[row], store_role)

    labels.check_shown(records, s._row_index(), display,
                       roles=("target", *specs) if specs else (), letter=letter)
