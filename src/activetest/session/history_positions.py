"""A response matrix joined by ids that are only positions: refused unless confirmed.

"An id that is only a position joins nothing until the content confirms it; a refused
join names the file, the item and both sides." A response matrix holds no item content,
so where the pool's ids are positions (no id column: its rows' numbers; an lm-eval log's
``doc_id`` used as the pool) or where both sides' ids look like row numbers
(:func:`activetest.data.history_ids.positions_in_disguise`: a pool whose ``id`` column
is pandas' index and a matrix whose columns are ``0..N-1``) the join is refused, unless
the user confirms it with ``--ids-are-positions`` (Python:
``ids_are_positions=True``): then it is made, said at ``init`` and recorded
(the ``history`` record's ``by_position``: the report names it). Folders of harness
logs are confirmed by their documents' content instead and never come here.
docs/history.md ("Ids that are only positions").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from activetest.data.history_ids import PositionJoin, positions_in_disguise
from activetest.session.store import SessionError

__all__ = ["FLAG", "PoolColumns", "check_matrix_ids", "unneeded_note"]

#: The most pool columns read again to find one that holds a matrix's ids.
MAX_COLUMNS = 12


@dataclass(frozen=True)
class PoolColumns:
    """A pool read without an id column (its ids its rows' numbers): its columns, and
    the ids it would have with ``--id-column NAME`` (None: that column cannot be ids,
    e.g. a value repeats), to name the columns that could join a response matrix.

    Attributes:
        names: the pool's columns.
        ids_of: a column -> the pool's ids with it as the id column, or None.
    """

    names: tuple[str, ...]
    ids_of: Callable[[str], Sequence[str] | None]


def _serving(columns: Sequence[str], pool: PoolColumns | None) -> str:
    """What the refusal says of the pool's id columns: those whose values are ids of the
    matrix's columns (most shared first), or that none is, naming the pool's columns
    (QA: "--id-column NAME" alone); the general advice where the columns are not known."""
    generic = ("give the pool ids of its own that the matrix uses (a pool column: "
               "--id-column NAME; an lm-eval log as the pool: answers:FILE?id_field=NAME, "
               "a doc field)")
    if pool is None or not pool.names:
        return generic
    cols = {str(c).strip() for c in columns}
    found = []
    numbers: list[tuple[int, str, PositionJoin]] = []  # would be refused next (QA)
    for name in pool.names[:MAX_COLUMNS]:
        ids = pool.ids_of(name)
        n = 0 if ids is None else sum(str(i).strip() in cols for i in ids)
        if not n or ids is None:
            continue
        d = positions_in_disguise(ids, columns)
        if d is None:
            found.append((-n, name))
        else:
            numbers.append((-n, name, d))
    shown = ", ".join(repr(c) for c in pool.names[:MAX_COLUMNS]) + (
        ", ..." if len(pool.names) > MAX_COLUMNS else "")
    if not found and numbers:  # suggesting it would only move the refusal to the next run
        _, name, d = min(numbers, key=lambda x: (x[0], x[1]))
        return (f"the pool's column {name!r} holds the matrix's column ids, but its values "
                f"and the matrix's columns look like row numbers too (the pool's: "
                f"{d.pool.describe('ids')}; its columns: {d.matrix.describe('columns')}), "
                f"so --id-column {name} alone would join them by the numbers as well: give "
                f"both sides the dataset's own ids (the pool: --id-column NAME; the matrix: "
                f"those ids as its columns)")
    if not found:
        return (f"no column of the pool ({shown}) holds the matrix's column ids: give the "
                f"pool a column of the ids the matrix uses and pass --id-column NAME")
    best = [name for _, name in sorted(found)]
    n = -min(found)[0]
    also = "" if len(best) == 1 else f" (also {', '.join(map(repr, best[1:3]))})"
    return (f"the pool's column {best[0]!r} holds the ids of {n} of the matrix's "
            f"{len(cols)} columns{also}: pass --id-column {best[0]}")

#: The option that confirms a join by ids that look like positions.
FLAG = "--ids-are-positions"


def _confirm_hint() -> str:
    return (f"if the matrix was written from this very pool in this order (or both carry "
            f"the dataset's own numbering), {FLAG} confirms the join")


def check_matrix_ids(source: str, columns: Sequence[str], pool_ids: Sequence[str],
                     describe: Callable[[str], str], *, positional: str | None,
                     confirmed: bool, pool_columns: PoolColumns | None = None) -> str | None:
    """Refuse, or with ``confirmed`` say, a response matrix's join by positions.

    Args:
        source: the matrix's file.
        columns: its item ids.
        pool_ids: the pool's ids, in pool order.
        describe: a pool id -> a short text of its item (named in the messages).
        positional: where the pool's ids are only positions, what they are (e.g. "its
            rows' numbers"), else None.
        confirmed: the user confirmed the join (:data:`FLAG`).
        pool_columns: where the pool's ids are its rows' numbers, its columns (the
            refusal names those that hold the matrix's ids, or that none does).

    Returns:
        The note to show where a join by positions is made as confirmed, else None.

    Raises:
        SessionError: a join by positions, not confirmed (the message names the file,
            the first item and both sides).
    """
    cols = {str(c).strip() for c in columns}
    first = next((t for i in pool_ids if (t := str(i).strip()) in cols), None)
    if positional is not None:  # joins never guess (QA: joined by position)
        if confirmed:
            return (f"history: {source} joined to the pool's item ids, which are "
                    f"{positional}, as {FLAG} confirms: nothing checked that pool item "
                    f"{first!r} is the item of its column {first!r}")
        raise SessionError(
            f"{source}: a response matrix holds no item content, and the pool's item ids "
            f"are {positional}: nothing would confirm that its column '0' is the pool's "
            f"first item (a re-sorted pool joins the wrong items); "
            f"{_serving(columns, pool_columns)}, or use a folder of the models' harness "
            f"logs, whose documents are checked against the pool; " + _confirm_hint())
    d = positions_in_disguise(pool_ids, columns)
    if d is None:
        return None
    sides = (f"the pool's: {d.pool.describe('ids')}; its columns: "
             f"{d.matrix.describe('columns')}")
    if confirmed:
        return (f"history: {source} joined by ids that look like row numbers ({sides}), "
                f"as {FLAG} confirms: nothing checked that pool item {d.first!r} is the "
                f"item of its column {d.first!r}")
    raise SessionError(
        f"{source}: its item ids and the pool's look like row numbers (positions), not "
        f"ids ({sides}): "
        f"pool item {d.first!r} ({describe(d.first)}) would get the results of column "
        f"{d.first!r} by the number alone, and a response matrix holds no item content to "
        f"confirm it is the same item; if either side was shuffled, filtered or is of "
        f"another split, every item gets another item's history, silently. Give both "
        f"sides the dataset's own ids (the pool: --id-column NAME; the matrix: those ids "
        f"as its columns), or use a folder of the models' harness logs (checked against "
        f"the pool's texts); " + _confirm_hint())


def unneeded_note(confirmed: bool, used: bool) -> list[str]:
    """The note where :data:`FLAG` was given and no matrix needed it (empty otherwise)."""
    if not confirmed or used:
        return []
    return [f"history: {FLAG}: no response matrix here is joined by ids that look like "
            f"positions (nothing to confirm; the join is by id)"]
