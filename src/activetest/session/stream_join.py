"""A streamed ``init``'s table in another order than the pool's, joined by id once the
pool is written (:func:`join_by_id`), and a row that repeats an earlier row's id refused
as the general path refuses it (:func:`refuse_a_repeated_id`) (part of
:mod:`activetest.session.stream_init`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from activetest.data.history_ids import NumberIds, WholeIdsInBlocks
from activetest.data.task import Item
from activetest.session import stream_tables
from activetest.session.stream_base import LateRefusalError, NotStreamable, StreamRefusedError
from activetest.session.stream_tables import Table, TableRows, converted_rows, table_blocks

__all__ = ["join_by_id", "refuse_a_repeat_among", "refuse_a_repeated_id"]


def refuse_a_repeated_id(conn: Any, t: Table, item_id: str, ids: Sequence[str], n: int,
                          j: int) -> None:
    """Row ``n + j`` of the table ``t`` is for ``item_id`` where the pool's item ``n + j``
    (``ids[j]``, of the block of items ``n``, ``n + 1``, ...; none after the pool's last)
    is another: where an earlier row of the table is for ``item_id`` (the rows before
    are for the pool's items, in its order: the pool's item of that number), refuse the
    row as the general path refuses a duplicate id, naming both rows; else return (the
    table is in another order: the general path joins it by id)."""
    if len(set(ids)) != len(ids):  # a pool that repeats an id: the general path names it
        return
    rows = conn.execute("SELECT idx FROM items WHERE item_id = ? AND idx < ?",
                        (item_id, n)).fetchall()  # (fetchall: no statement left open)
    row = rows[0] if rows else None
    before = [n + i for i in range(j) if ids[i] == item_id]
    if row is None and not before:
        return
    first = int(row[0]) if row is not None else before[0]
    if t.scorer.format == "parquet":  # rows named by number (from 1), as there
        from activetest.models.table import duplicate_message

        raise StreamRefusedError(duplicate_message(t.scorer.path, f"row {n + j + 1}", item_id,
                                                   f"row {first + 1}"))
    stream_tables.read_again(t, n + j, first=first, repeated=item_id)
    raise NotStreamable("repeated id")  # pragma: no cover - read_again raises


def refuse_a_repeat_among(t: Table, ids: Sequence[str | None], start: int,
                          earlier: Callable[[list[str]], dict[str, int]]) -> None:
    """Refuse the first of the table ``t``'s rows ``start``, ``start + 1``, ... (their
    ``ids``; None: an id the reader refuses, which repeats none) whose id an earlier row
    has, naming both rows as the general path does; return where none does.
    ``earlier(ids)``: of those ids, each one that a row before ``start`` has -> that
    row (from 0; the rows before ``start`` repeat no id). Memory: the ids given."""
    known = earlier(sorted({i for i in ids if i is not None}))
    seen: dict[str, int] = {}
    for j, item_id in enumerate(ids):
        if item_id is None:
            continue
        first = known.get(item_id, seen.get(item_id))
        if first is None:
            seen[item_id] = start + j
            continue
        if t.scorer.format == "parquet":  # rows named by number (from 1), as there
            from activetest.models.table import duplicate_message

            raise StreamRefusedError(duplicate_message(
                t.scorer.path, f"row {start + j + 1}", item_id, f"row {first + 1}"))
        stream_tables.read_again(t, start + j, first=first, repeated=item_id)
        raise NotStreamable("repeated id")  # pragma: no cover - read_again raises


def join_by_id(conn: Any, t: Table, n: int, width: int, advance: Any,
               on_ids: Callable[[NumberIds | None, int, int], None] | None = None
               ) -> np.ndarray:
    """The ``(n, width)`` log-probs of the table ``t``, joined by id to the ``n`` pool
    items already written to the session file: a table in another order than the pool's
    (a sharded scoring job's), with fewer rows (a pool item without one: named) or with
    rows of items the pool does not have (passed over, as the general path passes them).

    The table is read again in blocks; each block's ids are looked up in the file's
    items (their unique index) through a temporary table, so memory stays the result,
    the table's row of each pool item (8 bytes an item) and one block. Every row is
    checked by the general path's rules and refused with its message: a value (the row
    named), an id that an earlier row has (both rows named; the ids of rows the pool
    does not have are kept in a temporary table to tell), a pool item with no row (the
    first ten named, in the pool's order), a content check written for other content
    (the first such pool item in the pool's order). ``on_ids``: called once every row
    is read (none repeating an id) and before a missing pool item is named, as the
    general path reads the whole table before it joins, with the table's whole-number
    ids counted (:func:`~activetest.data.history_ids.number_ids`' result, ids that are no
    whole number passed over: counted block by block while each is written plainly,
    :class:`~activetest.data.history_ids.WholeIdsInBlocks`, else in the session file,
    :func:`~activetest.session.stream_number_ids.sql_number_ids`, never in memory), how
    many rows are for pool items and the pool row of
    the first such item (a join by ids that look like positions is refused or said
    there: :mod:`activetest.session.table_positions`)."""
    import json as _json

    from activetest.formats.label_records import content_check
    from activetest.models.table import confirm_content, duplicate_message, no_row_hint

    path = t.scorer.path
    out = np.full((n, width), np.nan)
    row_of = np.full(n, -1, dtype=np.int64)  # the table's row of each pool item
    bad: tuple[int, str, str, str] | None = None  # the first item whose check differs
    numbers = WholeIdsInBlocks()  # the table's whole-number ids, for on_ids
    shared, first_shared = 0, n
    late: LateRefusalError | None = None  # the first block's row that does not normalise
    # temporary tables (gone with the connection; emptied, not dropped, after: a DROP
    # fails while any statement of the connection is open)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_block (pos INTEGER PRIMARY KEY, "
                 "item_id TEXT)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_other (item_id TEXT PRIMARY KEY, "
                 "row INTEGER)")
    conn.execute("DELETE FROM _at_other")

    def earlier(want: list[str]) -> dict[str, int]:  # the rows read before: a pool
        out: dict[str, int] = {}  # item's, or one of an id the pool does not have
        for item_id in want:
            got = conn.execute("SELECT idx FROM items WHERE item_id = ?",
                               (item_id,)).fetchall()
            if got and row_of[int(got[0][0])] >= 0:
                out[item_id] = int(row_of[int(got[0][0])])
                continue
            got = conn.execute("SELECT row FROM _at_other WHERE item_id = ?",
                               (item_id,)).fetchall()
            if got:
                out[item_id] = int(got[0][0])
        return out

    def repeated(ids: Sequence[str | None], start: int) -> None:
        refuse_a_repeat_among(t, ids, start, earlier)

    try:
        start = 0
        for ids, vals, checks in TableRows(table_blocks(t), t, repeated).each():
            m = len(ids)
            conv = np.full((m, width), np.nan)
            if late is None or late.rank > 0:  # (else only a row's own problem is named)
                try:  # every row, as the general path reads it
                    conv = converted_rows(vals, ids, t, start)
                except LateRefusalError as exc:  # said once every row is read (a later
                    # row's bad value or repeated id first, as there; of the rule's
                    # checks, the first that refuses a row: the lowest rank)
                    if late is None or exc.rank < late.rank:
                        late = exc
            conn.execute("DELETE FROM _at_block")
            conn.executemany("INSERT INTO _at_block (pos, item_id) VALUES (?, ?)",
                             enumerate(ids.tolist()))
            found = conn.execute(
                "SELECT b.pos, i.idx" + (", i.fields" if checks is not None else "") +
                " FROM _at_block b JOIN items i ON i.item_id = b.item_id").fetchall()
            pos = np.fromiter((f[0] for f in found), dtype=np.int64, count=len(found))
            idx = np.fromiter((f[1] for f in found), dtype=np.int64, count=len(found))
            # an earlier row with this row's id: of an earlier block (a pool item's row,
            # or a row of an id the pool does not have, kept in _at_other), else the
            # first row of the id in this block
            first = np.full(m, -1, dtype=np.int64)
            first[pos] = row_of[idx]
            for j, row in conn.execute("SELECT b.pos, o.row FROM _at_block b JOIN _at_other "
                                       "o ON o.item_id = b.item_id").fetchall():
                first[j] = row
            _, lead, where = np.unique(ids, return_index=True, return_inverse=True)
            later = (lead[where] != np.arange(m)) & (first < 0)
            first[later] = start + lead[where][later]
            mine = np.zeros(m, dtype=bool)
            mine[pos] = True
            fresh = np.flatnonzero(~mine & (first < 0))  # a new id of no pool item
            conn.executemany("INSERT INTO _at_other (item_id, row) VALUES (?, ?)",
                             zip(ids[fresh].tolist(), (start + fresh).tolist(), strict=True))
            if (first >= 0).any():  # the first row that repeats an earlier row's id
                j = int(np.flatnonzero(first >= 0)[0])
                if t.scorer.format == "parquet":  # rows named by number (from 1)
                    raise StreamRefusedError(duplicate_message(
                        path, f"row {start + j + 1}", ids[j], f"row {int(first[j]) + 1}"))
                stream_tables.read_again(t, start + j, first=int(first[j]), repeated=ids[j])
                raise NotStreamable("repeated id")  # pragma: no cover - read_again raises
            out[idx] = conv[pos]
            row_of[idx] = start + pos
            if on_ids is not None:
                numbers.add(ids.tolist(), numbers_only=True)
                shared += len(idx)
                first_shared = min(first_shared, int(idx.min())) if len(idx) else first_shared
            if checks is not None and late is None:  # (a late one: named before these)
                for (p_, i_, fields), theirs in zip(found, checks[pos].tolist(), strict=True):
                    if bad is not None and i_ >= bad[0]:
                        continue
                    have = _json.loads(fields)
                    if content_check(have) != theirs:
                        bad = (i_, str(ids[p_]), theirs, fields)
            start += m
            advance(m)
        if start == 0:  # a header alone, an empty JSONL file: named as the table reader does
            raise StreamRefusedError(f"{path}: no data rows")
        if late is not None:  # a row that does not normalise
            raise late
        if on_ids is not None:
            on_ids(_table_numbers(conn, numbers, row_of), shared, first_shared)
        missing = np.flatnonzero(row_of < 0)
        if missing.size:  # the general path's message (the first ten, in the pool's order)
            shown = ", ".join(repr(conn.execute("SELECT item_id FROM items WHERE idx = ?",
                                                (int(i),)).fetchall()[0][0])
                              for i in missing[:10])
            more = f" and {missing.size - 10} more" if missing.size > 10 else ""
            hint = "" if missing.size < n else no_row_hint(
                [r[0] for r in conn.execute("SELECT item_id FROM _at_other ORDER BY row "
                                            "LIMIT 3").fetchall()],
                [r[0] for r in conn.execute("SELECT item_id FROM items ORDER BY idx "
                                            "LIMIT 3").fetchall()])
            raise StreamRefusedError(f"{path}: no row for {missing.size} of {n} item id(s): "
                                     f"{shown}{more}{hint}")
        if bad is not None:
            try:
                confirm_content(path, {bad[1]: bad[2]},
                                [Item(bad[1], _json.loads(bad[3]), None)])
            except ValueError as exc:
                raise StreamRefusedError(str(exc)) from None
    finally:
        conn.execute("DELETE FROM _at_block")
        conn.execute("DELETE FROM _at_other")
    return out


def _table_numbers(conn: Any, numbers: WholeIdsInBlocks, row_of: np.ndarray
                   ) -> NumberIds | None:
    """The table's whole-number ids (:func:`join_by_id`'s ``on_ids``): as counted block by
    block, or where one is written otherwise (``007``, ``7.0``: maybe another spelling of
    one counted) in the session file, from the pool items it has rows for and its other
    ids (``_at_other``), as the general path counts them (QA: such a table took the
    general path, every id in memory)."""
    if not numbers.other_spelling:
        return numbers.result
    from activetest.session.stream_number_ids import sql_number_ids

    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_joined (idx INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM _at_joined")
    try:
        joined = np.flatnonzero(row_of >= 0)
        for k in range(0, len(joined), 1 << 16):
            conn.executemany("INSERT INTO _at_joined (idx) VALUES (?)",
                             ((int(i),) for i in joined[k:k + (1 << 16)]))
        return sql_number_ids(conn, "SELECT i.item_id AS x FROM _at_joined j JOIN items i "
                                    "ON i.idx = j.idx UNION ALL SELECT item_id AS x FROM "
                                    "_at_other", numbers_only=True)
    finally:
        conn.execute("DELETE FROM _at_joined")

