"""A ``table:`` of predictions joined by ids that are only positions: refused unless
confirmed.

"An id that is only a position joins nothing until the content confirms it; a refused
join names the file, the item and both sides." A pool whose ``id`` column holds its row
numbers (pandas' index written with the file) and a prediction table keyed ``0..N-1``
share every id: joined by the numbers alone, a table written from a shuffled, filtered
or other split's copy of the pool gives every item another item's predictions, and the
target's estimated risk is wrong, silently. Where both sides' ids look like row numbers
(:func:`activetest.data.history_ids.positions_in_disguise`, the rule the history's
response matrices take) and nothing in the table confirms each item's content (a
Parquet ``content_check`` column, an lm-eval file read with its documents checked), the
join is refused unless the user confirms it with ``--ids-are-positions`` (Python:
``ids_are_positions=True``): then it is made, said at ``init`` and recorded in the
scores' provenance (``joined_by_position``). The check is made where the join is made
(``init``: the general path, :func:`activetest.session.create.check_position_joins`,
and the streamed one, :mod:`activetest.session.stream_init`); a stored session is read
as it was made. docs/history.md ("Ids that are only positions").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from activetest.data.history_ids import PositionJoin, positions_in_disguise
from activetest.session.history_positions import FLAG
from activetest.session.store import SessionError

__all__ = ["PROVENANCE_KEY", "check_table_ids", "excerpt", "position_join"]

#: The scores' provenance key naming a join by ids that look like positions, confirmed.
PROVENANCE_KEY = "joined_by_position"


def excerpt(fields: Mapping[str, Any]) -> str:
    """An item's first non-empty text, short and quoted (``'no text'`` where it has none)."""
    text = next((str(v) for v in fields.values() if str(v).strip()), "")
    return repr(text if len(text) <= 60 else text[:57] + "...") if text else "no text"


def position_join(source: str, d: PositionJoin, text: str, *, confirmed: bool) -> str:
    """The note of the table ``source``'s join ``d`` by ids that look like positions where
    ``confirmed`` (:data:`FLAG`); else refuse it.

    Args:
        source: the table's file.
        d: the join (both sides' ids, the first pool item joined).
        text: the first pool item's text (:func:`excerpt`), named in the refusal.
        confirmed: the user confirmed the join.

    Raises:
        SessionError: not confirmed (the message names the file, the first item and both
            sides, why, and how to confirm or fix).
    """
    sides = (f"the pool's: {d.pool.describe('ids')}; the table's: "
             f"{d.matrix.describe('ids')}")
    if confirmed:
        return (f"{source}: joined by ids that look like row numbers ({sides}), as {FLAG} "
                f"confirms: nothing checked that its row {d.first!r} was written for pool "
                f"item {d.first!r}")
    raise SessionError(
        f"{source}: its item ids and the pool's look like row numbers (positions), not ids "
        f"({sides}): pool item {d.first!r} ({text}) would get the predictions of the "
        f"table's row {d.first!r} by the number alone, and nothing in the table confirms "
        f"that row was written for that item; if either file was shuffled, filtered or is "
        f"of another split, every item gets another item's predictions and the estimate is "
        f"wrong, silently. Give both files the dataset's own ids (the pool: --id-column "
        f"NAME; the table: the same ids in its id column), or use a table with a "
        f"content_check column (`activetest score` writes one); if the table was written "
        f"from this very pool in this order, {FLAG} confirms the join")


def check_table_ids(source: str, table_ids: Sequence[str], pool_ids: Sequence[str],
                    fields_of: Mapping[str, Mapping[str, Any]] | Any, *,
                    confirmed: bool) -> str | None:
    """Refuse, or with ``confirmed`` say (the returned note), the join of a table with
    ``table_ids`` to a pool with ``pool_ids`` (pool order) where it is by positions in
    disguise; None where it is by id. ``fields_of``: a pool id -> its item's fields
    (the first item is named)."""
    d = positions_in_disguise(pool_ids, table_ids)
    if d is None:
        return None
    return position_join(source, d, excerpt(fields_of[d.first]), confirmed=confirmed)
