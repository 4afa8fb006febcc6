"""A label sheet joined by ids that are only positions: refused unless confirmed.

"An id that is only a position joins nothing until the content confirms it; a refused
join names the file, the item and both sides." A sheet written by hand (``item_id`` and
``label``, no ``content_check``) keyed ``0..N-1`` on a pool whose ids are its row
numbers too labels item ``k`` by the number alone: made from a shuffled, filtered or
other split's copy of the pool, every label silently goes to another item, and labels
are the data a session cannot make again. Where a row of the sheet carries nothing that
confirms the item it shows (no ``content_check``, no cell of the item's fields, such as
its ``text``: :func:`activetest.session.labels.check_shown` compares those) and both
sides' ids look like row numbers (:func:`activetest.data.history_ids.
positions_in_disguise`, the rule of the prediction tables and response matrices), the
import is refused before anything is written, unless it is confirmed: by ``import
--ids-are-positions`` (Python: ``import_file(ids_are_positions=True)``), or by the
session's ``init``, which recorded a join by such ids as ``--ids-are-positions``
confirmed it (:func:`recorded_confirmation`). A confirmed import is said. A sheet keyed
by the dataset's own ids (text, or whole numbers that are no run from 0 or 1 on either
side) joins by id as before. docs/history.md ("Ids that are only positions").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from activetest.data.history_ids import number_ids, positions_in_disguise
from activetest.formats.label_records import LabelRecord, shown_fields
from activetest.session.history_positions import FLAG
from activetest.session.store import SessionError
from activetest.session.table_positions import PROVENANCE_KEY, excerpt

__all__ = ["check_sheet_ids", "recorded_confirmation"]


def recorded_confirmation(roles: Sequence[str], provenance: Callable[[str], Mapping[str, Any]],
                          history: Mapping[str, Any] | None) -> str | None:
    """What the session's ``init`` recorded confirming a join by ids that look like
    positions (``--ids-are-positions``): a prediction table's (the scores' provenance
    :data:`~activetest.session.table_positions.PROVENANCE_KEY` of one of ``roles``) or a
    response matrix's (``history``: the config's ``history`` record, its
    ``by_position``); None where it recorded none."""
    for role in roles:
        if provenance(role).get(PROVENANCE_KEY):
            return f"the session's init ({FLAG}, for its {role} predictions)"
    if history and history.get("by_position"):
        return f"the session's init ({FLAG}, for its history)"
    return None


def _confirms(rec: LabelRecord, fields_of: Callable[[str], Mapping[str, Any] | None]
              ) -> bool:
    """Whether the row ``rec`` carries what confirms its item (a check, or a cell of the
    item's fields, compared by :func:`~activetest.session.labels.check_shown`); a row of
    an item the pool does not have is refused by the label checks, not here."""
    if rec.check:
        return True
    if not rec.shown:
        return False
    fields = fields_of(str(rec.item_id))
    if fields is None:
        return True
    shown = shown_fields(fields)
    return any(k in shown for k, _ in rec.shown)


def check_sheet_ids(source: str, records: Sequence[LabelRecord],
                    pool_ids: Callable[[], Sequence[str]],
                    fields_of: Callable[[str], Mapping[str, Any] | None], *,
                    confirmed: str | None) -> str | None:
    """Refuse, or where ``confirmed`` say, a label sheet's join by ids that look like
    positions (module docstring).

    Args:
        source: the sheet's file.
        records: its labels, in file order.
        pool_ids: the pool's ids in pool order (read only where the sheet's ids are
            whole numbers that nothing confirms).
        fields_of: a pool id -> its item's fields (None: no such item).
        confirmed: what confirms the join (:data:`FLAG`, or
            :func:`recorded_confirmation`'s text), else None.

    Returns:
        The note of a join by positions made as confirmed, else None (a join by id, or
        every row confirmed by its content).

    Raises:
        SessionError: a join by positions, not confirmed (the message names the file,
            the row, the item and both sides); nothing is written then.
    """
    bare = [r for r in records if not r.check and not r.shown]  # (no look-ups) ...
    bare = bare or [r for r in records if not _confirms(r, fields_of)]
    if not bare or number_ids(sorted({str(r.item_id).strip() for r in bare})) is None:
        return None  # confirmed by content, or no whole-number id to join by position
    d = positions_in_disguise(pool_ids(), [str(r.item_id) for r in records])
    if d is None:
        return None
    row = next((r for r in bare if fields_of(str(r.item_id).strip()) is not None), bare[0])
    item = str(row.item_id).strip()
    sides = (f"the pool's: {d.pool.describe('ids')}; the sheet's: "
             f"{d.matrix.describe('ids')}")
    if confirmed is not None:
        return (f"{source}: labels joined by ids that look like row numbers ({sides}), as "
                f"{confirmed} confirms: nothing checked that its row for {item!r} showed "
                f"pool item {item!r}")
    fields = fields_of(item)
    text = excerpt(fields) if fields is not None else "not in the pool"
    raise SessionError(
        f"{row.where or source}: its item ids and the pool's look like row numbers "
        f"(positions), not ids ({sides}), and the row carries nothing that confirms the "
        f"item it showed (no content_check column, no cell of the item's text): its label "
        f"would go to pool item {item!r} ({text}) by the number alone; if the sheet was "
        f"made from a shuffled, filtered or other split's copy of the pool, every label "
        f"goes to another item, silently. Nothing was imported. Fill in a sheet that "
        f"`activetest select --out FILE` or `activetest export` writes (its content_check "
        f"confirms each row), or give the sheet the items' text column (compared with the "
        f"pool's); if the sheet's ids are this pool's own ids (its rows' numbers, in this "
        f"order), {FLAG} confirms the join")
