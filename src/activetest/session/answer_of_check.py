"""Rows of a paired sheet whose ``answer_of`` cell names another answer of the item
than the one the row shows.

A sheet exported for a graded comparison has one row per answer of an item, each
marked ``answer_of`` (A, B, ... on a blind sheet) and carrying that answer's
``content_check``. A row whose check is not the named answer's but another answer's
of the same item had its ``answer_of`` cell changed, most often swapped with the
item's other row (QA: such a sheet was asked whether it was another session's).
:func:`misnamed_answers` finds those rows; :func:`misnamed_message` says what the
cell says, what the session holds, and that the cells look swapped when they do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from activetest.data.task import Item

__all__ = ["MisnamedAnswer", "misnamed_answers", "misnamed_message"]


@dataclass(frozen=True)
class MisnamedAnswer:
    """A row whose ``answer_of`` cell names answer ``named`` of the item at pool row
    ``row``, while its ``content_check`` is answer ``shown``'s (roles: ``"target"`` or
    a compared target's spec)."""

    position: int  # the record's position in the records checked
    row: int
    named: str
    shown: str


def misnamed_answers(records: Sequence[Any], index: Mapping[str, int],
                     display: Callable[[str], Mapping[int, Item] | None],
                     roles: Sequence[str],
                     check_of: Callable[[Mapping[str, Any]], str]) -> dict[int, MisnamedAnswer]:
    """The records whose ``content_check`` is not the answer their ``answer_of`` names
    but another answer (of ``roles``) of the same item, by position in ``records``.

    Args:
        records: label records (``item_id``, ``answer_of``, ``check``).
        index: item id -> pool row.
        display: role -> pool row -> the item as exported, or None (an unknown role).
        roles: every answer role of the session (``"target"`` and the compared specs).
        check_of: an item's fields -> their content check.
    """
    found: dict[int, MisnamedAnswer] = {}
    if len(roles) < 2:  # one answer per item: no other answer a row could show
        return found
    for k, rec in enumerate(records):
        check = (getattr(rec, "check", None) or "").strip().lower()
        row = index.get(str(rec.item_id))
        named = getattr(rec, "answer_of", None) or "target"
        if not check or row is None:
            continue
        own = display(named)
        if own is None or row not in own or check_of(own[row].fields) == check:
            continue
        for role in roles:
            items = display(role) if role != named else None
            if items is not None and row in items and check_of(items[row].fields) == check:
                found[k] = MisnamedAnswer(k, row, named, role)
                break
    return found


def _whose(role: str) -> str:
    return "the target's" if role == "target" else f"{role}'s"


def misnamed_message(rec: Any, bad: MisnamedAnswer, records: Sequence[Any],
                     found: Mapping[int, MisnamedAnswer],
                     display: Callable[[str], Mapping[int, Item] | None],
                     letter: Callable[[int, str], str] | None,
                     text: Callable[[str], str]) -> str:
    """One line for a row :func:`misnamed_answers` found: the file and line, the item,
    what its ``answer_of`` cell says and whose answer the session holds under it, the
    answer the row shows and whose that is; and, where another row of the item names
    this row's answer while showing this row's named one, that the cells look swapped.

    Args:
        letter: (pool row, role) -> the letter a blind sheet shows that answer under;
            None: the sheet names the targets.
        text: a cell's text as messages quote it.
    """
    loc = getattr(rec, "where", None) or ""
    prefix = f"{loc}: " if loc else ""
    given = getattr(rec, "answer_of_given", None)

    def name(role: str) -> str:
        if given is not None and letter is not None:
            return f"answer {letter(bad.row, role)} ({_whose(role)})"
        return f"{_whose(role)} answer"

    cell = given if given is not None else (getattr(rec, "answer_of", None) or "")
    named_items, shown_items = display(bad.named), display(bad.shown)
    assert named_items is not None and shown_items is not None  # found by misnamed_answers
    held = named_items[bad.row].fields.get("answer", "")
    shows = shown_items[bad.row].fields.get("answer", "")
    line = (f"{prefix}item {rec.item_id!r}: the answer_of cell {cell!r} does not match the "
            f"row: it names {name(bad.named)}, which the session holds as {text(str(held))}, "
            f"but the row shows {text(str(shows))}, {name(bad.shown)} (its content_check is "
            f"that answer's)")
    partner = next((o for o in found.values() if o.position != bad.position
                    and o.row == bad.row and (o.named, o.shown) == (bad.shown, bad.named)),
                   None)
    if partner is not None:
        other = records[partner.position]
        at = getattr(other, "where", None) or f"another row of item {rec.item_id!r}"
        return (f"{line}; the answer_of cells of this item's rows look swapped ({at} names "
                f"{name(bad.shown)} and shows {name(bad.named)}): swap them back; the "
                f"label would judge an answer the person did not see")
    return (f"{line}: set the cell to the answer the row shows, or export the item "
            f"again; the label would judge an answer the person did not see")
