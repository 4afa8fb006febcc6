"""The whole-number ids of a streamed pool or table, counted in the session file.

:class:`~activetest.data.history_ids.WholeIdsInBlocks` counts ids block by block in
constant memory only while each is written as a plain whole number (``7``): one written
otherwise (``007``, ``7.0``) may be another spelling of an id already counted, which only
every value kept can tell. At pool scale these values are in the session file already
(the pool's ids in ``items``, a table's other ids in a temporary table), so
:func:`sql_number_ids` tells them there, by SQLite's own aggregates (its temporary
B-trees spill to disk), with :func:`activetest.data.history_ids.number_ids`'s result: a
table of 1e7 rows spelled ``0000007`` takes the streamed path, not the general path's
1e7 Python objects (QA).
"""

from __future__ import annotations

from typing import Any

from activetest.data.history_ids import NumberIds, whole_value
from activetest.session.stream_base import NotStreamable

__all__ = ["sql_number_ids"]

#: SQLite's largest integer: a whole number above it is not counted here.
_MAX = 2**63 - 1


def _strip(text: Any) -> str | None:
    return None if text is None else str(text).strip()


def _whole(text: Any, too_large: list[str]) -> int | None:
    """``text``'s whole number (None: none); one SQLite cannot hold noted in
    ``too_large`` (an exception raised in SQLite's call of a function reaches its caller
    as "user-defined function raised exception": the init failed with that, 2026-12-07)."""
    v = None if text is None else whole_value(str(text))
    if v is not None and v > _MAX:
        too_large.append(str(text))
        return None
    return v


def sql_number_ids(conn: Any, ids: str, *, numbers_only: bool) -> NumberIds | None:
    """:func:`~activetest.data.history_ids.number_ids` of the distinct ids (stripped) that
    the SQL query ``ids`` selects (one column, named ``x``), computed in the session file.
    ``numbers_only`` False: None unless every id is a whole number (a pool, whose ids are
    its own where one is not); True: the whole numbers among them (a table's).

    Raises:
        NotStreamable: a whole number too large for SQLite (the general path counts it).
    """
    conn.create_function("at_strip", 1, _strip, deterministic=True)
    too_large: list[str] = []
    conn.create_function("at_whole", 1, lambda t: _whole(t, too_large), deterministic=True)
    # each distinct id and its number once (one call of each function an id), then
    # SQLite's aggregates; the table is emptied, not dropped (a DROP fails while any
    # statement of the connection is open)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS _at_numbers (t TEXT, v INTEGER)")
    conn.execute("DELETE FROM _at_numbers")
    try:
        conn.execute(f"INSERT INTO _at_numbers (t, v) SELECT t, at_whole(t) FROM "
                     f"(SELECT DISTINCT at_strip(x) AS t FROM ({ids}))")
        if too_large:  # SQLite cannot hold it: the general path counts it
            raise NotStreamable("position ids")
        # (SQLite: the bare column t of a query with min() or max() is of the row picked)
        n_all, n, distinct, lo, lo_text = conn.execute(
            "SELECT COUNT(*), COUNT(v), COUNT(DISTINCT v), MIN(v), t FROM _at_numbers"
        ).fetchone()
        if not n or n != distinct or (not numbers_only and n != n_all):
            return None  # none; one number written twice; a pool id that is no number
        hi, hi_text = conn.execute("SELECT MAX(v), t FROM _at_numbers").fetchone()
    finally:
        conn.execute("DELETE FROM _at_numbers")
    run = lo if lo in (0, 1) and hi - lo + 1 == n else None
    return NumberIds(str(lo_text), str(hi_text), n, run)
