"""A ``table:`` compared with the target at ``estimate`` (``estimate --compare
table:FILE``), joined to the stored pool by ids that look like positions: told without
holding every id (:func:`compared_position_join`).

:func:`activetest.session.table_positions.check_table_ids` takes both sides' ids as lists:
at 1e7 items the pool's ids and the table's, with their numbers, were the largest thing
``estimate`` held (more than a GB). Here the pool's ids are read from the session file
and the table's row by row (a large table: :meth:`~activetest.models.table.TableScorer.
item_id_blocks`), each side's whole numbers counted block by block
(:class:`~activetest.data.history_ids.WholeIdsInBlocks`), the ids the table shares with
the pool looked up in the file's index: the same join as
:func:`~activetest.data.history_ids.positions_in_disguise` finds, refused or said with
the same message. Where one side writes a number otherwise (``007``, ``7.0``: perhaps
another spelling of a number counted), its numbers are counted again, 8 bytes an id.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from activetest.data.history_ids import NumberIds, PositionJoin, WholeIdsInBlocks, whole_value
from activetest.session.table_positions import excerpt, position_join

__all__ = ["BLOCK", "compared_position_join"]

#: Pool ids read from the session file at a time.
BLOCK = 16_384

#: The largest whole number counted in 8 bytes; a larger one: the ids are held whole.
_MAX = 2**63 - 1


class _TooLargeError(Exception):
    """A whole-number id above :data:`_MAX` (the caller holds the ids whole)."""


def compared_position_join(source: str, pool_blocks: Callable[[], Iterable[list[str]]],
                           table_blocks: Callable[[], Iterable[list[str]]],
                           pool_rows_of: Callable[[list[str]], tuple[int, int | None]],
                           id_at: Callable[[int], str],
                           fields_of: Mapping[str, Mapping[str, Any]] | Any, *,
                           confirmed: bool) -> str | None:
    """:func:`~activetest.session.table_positions.check_table_ids` of the table ``source``
    and the stored pool, without either side's ids held: None where the join is by id;
    else refused, or with ``confirmed`` said (the note returned).

    Args:
        source: the table's file.
        pool_blocks: the pool's ids in its order, in blocks (called again where counted
            again).
        table_blocks: the table's ids in file order, in blocks, every row checked.
        pool_rows_of: ids -> how many are pool items' and the first one's row.
        id_at: a pool row -> its id.
        fields_of: a pool id -> its item's fields (the first item joined is named).
        confirmed: the user confirmed such a join.

    Raises:
        SessionError: such a join, not confirmed (the general check's message).
        ValueError: the table refused as it is read.
    """
    try:
        pool = _numbers(pool_blocks, numbers_only=False)
        if pool is None or pool.n == 0:  # an id that is no number: the pool's own ids
            return None
        count = WholeIdsInBlocks()
        shared, first = 0, None
        for ids in table_blocks():
            count.add(ids, numbers_only=True)
            k, row = pool_rows_of(ids)
            shared += k
            if row is not None and (first is None or row < first):
                first = row
        table = (_numbers(table_blocks, numbers_only=True) if count.other_spelling
                 else count.result)
    except _TooLargeError:  # (no such pool in practice): every id held, as the general check
        from activetest.session.table_positions import check_table_ids

        pool_ids = [i for b in pool_blocks() for i in b]
        table_ids = [i for b in table_blocks() for i in b]
        return check_table_ids(source, table_ids, pool_ids, fields_of, confirmed=confirmed)
    if not shared or first is None or table is None:
        return None
    if pool.run_from is None and table.run_from is None:
        return None
    item_id = id_at(first).strip()
    d = PositionJoin(pool, table, item_id, shared)
    return position_join(source, d, excerpt(fields_of[item_id]), confirmed=confirmed)


def _numbers(blocks: Callable[[], Iterable[list[str]]], *, numbers_only: bool
             ) -> NumberIds | None:
    """:func:`~activetest.data.history_ids.number_ids` of the distinct ids ``blocks()``
    gives: counted in constant memory while each is written plainly, else again, 8 bytes
    an id (``numbers_only`` False: None unless every id is a whole number)."""
    count = WholeIdsInBlocks()
    for ids in blocks():
        count.add(ids, numbers_only=numbers_only)
        if ids and count.result is None and not count.other_spelling and not numbers_only:
            return None  # an id that is no whole number (WholeIdsInBlocks stopped)
    if not count.other_spelling:
        return count.result
    return _numbers_again(blocks(), numbers_only=numbers_only)


def _numbers_again(blocks: Iterable[list[str]], *, numbers_only: bool) -> NumberIds | None:
    """:func:`_numbers` where some id writes its number otherwise: every value kept (8
    bytes an id) to tell two spellings of one number."""
    values = array("q")
    lo: tuple[int, str] | None = None
    hi: tuple[int, str] | None = None
    for ids in blocks:
        for i in ids:
            t = str(i).strip()
            v = whole_value(t)
            if v is None:
                if numbers_only:
                    continue
                return None
            if v > _MAX:
                raise _TooLargeError
            values.append(v)
            lo = (v, t) if lo is None or (v, t) < lo else lo
            hi = (v, t) if hi is None or (v, t) > hi else hi
    if lo is None or hi is None:
        return None
    n = len(values)
    if np.unique(np.frombuffer(values, dtype=np.int64)).size != n:
        return None  # one number written twice
    run = lo[0] if lo[0] in (0, 1) and hi[0] - lo[0] + 1 == n else None
    return NumberIds(lo[1], hi[1], n, run)

