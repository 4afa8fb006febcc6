"""Item ids that may be only positions: a history join by row numbers in disguise.

A pool whose ids are its rows' numbers (``0..N-1`` or ``1..N``: pandas' index written
as an ``id`` column, a harness's document index) joined to a response matrix whose
columns are whole numbers too joins item ``k`` to column ``k`` by position alone: if
either side was shuffled, filtered or is of another split, every item silently gets
another item's history. A matrix holds no item content to confirm such a join by, so
the session refuses it unless the user confirms it
(:func:`activetest.session.create_history.join_pool_history`, docs/history.md).

:func:`positions_in_disguise` tells such a join: every pool id is a whole number, the
matrix shares at least one id with the pool, every shared id is a whole number, and one
side's whole-number ids are exactly a run from 0 or from 1 (its row numbers). Whole
numbers that are no such run on either side (MMLU-Pro's ``question_id`` 7504..8854 on
both) are a dataset's own ids and join as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["NumberIds", "PositionJoin", "WholeIdsInBlocks", "number_ids",
           "positions_in_disguise", "whole_value"]

#: A whole number as an id's text: digits (leading zeros allowed: ``007`` is row 7
#: zero-padded), optionally a float's ``.0`` (pandas writes a float column so).
_WHOLE = re.compile(r"[0-9]+(?:\.0+)?", re.ASCII)


@dataclass(frozen=True)
class NumberIds:
    """The whole-number ids of one side of a join.

    Attributes:
        first: the smallest, as written.
        last: the largest, as written.
        n: how many.
        run_from: 0 or 1 where the values are exactly ``run_from .. run_from + n - 1``
            (the side's row numbers), else None.
    """

    first: str
    last: str
    n: int
    run_from: int | None

    def describe(self, noun: str) -> str:
        """``'0'..'59', 60 ids, every whole number from 0`` with ``noun`` for "ids"."""
        what = (f"every whole number from {self.run_from}" if self.run_from is not None
                else "whole numbers")
        return f"{self.first!r}..{self.last!r}, {self.n} {noun}, {what}"


def whole_value(text: str) -> int | None:
    """The whole number an id's text is (``7``, ``007``, ``7.0``: 7), stripped; None where
    it is none."""
    t = text.strip()
    return int(float(t)) if _WHOLE.fullmatch(t) else None


def number_ids(ids: Sequence[str]) -> NumberIds | None:
    """The whole-number ids among ``ids`` (None: there is none, or two of them are the same
    number written twice)."""
    vals = [(v, str(i).strip()) for i in ids if (v := whole_value(str(i))) is not None]
    if not vals:
        return None
    seen = {v for v, _ in vals}
    if len(seen) != len(vals):
        return None
    lo, hi = min(vals), max(vals)
    run = lo[0] if lo[0] in (0, 1) and hi[0] - lo[0] + 1 == len(vals) else None
    return NumberIds(lo[1], hi[1], len(vals), run)


@dataclass(frozen=True)
class PositionJoin:
    """A join by ids that look like positions on at least one side (module docstring).

    Attributes:
        pool: the pool's ids.
        matrix: the matrix's whole-number columns.
        first: the first pool id (pool order) the matrix has a column for.
        shared: how many pool ids the matrix has a column for.
    """

    pool: NumberIds
    matrix: NumberIds
    first: str
    shared: int


def pool_numbers(pool_ids: Sequence[str]) -> NumberIds | None:
    """:func:`number_ids` of a pool's ids where every one is a whole number (no two the
    same number), else None: the pool's ids are its own, and no join to it is by
    positions in disguise, whatever the other side's ids (:func:`positions_in_disguise`,
    which need not read them then)."""
    pool = number_ids(pool_ids)
    return None if pool is None or pool.n != len(pool_ids) else pool


def positions_in_disguise(pool_ids: Sequence[str], columns: Sequence[str]
                          ) -> PositionJoin | None:
    """The join of a matrix with ``columns`` to a pool with ``pool_ids`` where it would be
    by position in disguise (module docstring), else None."""
    ids = [str(i).strip() for i in pool_ids]
    pool = pool_numbers(ids)
    if pool is None:  # a pool id that is no number: its own ids
        return None
    cols = {str(c).strip() for c in columns}
    shared = [i for i in ids if i in cols]
    matrix = number_ids(sorted(cols))
    if not shared or matrix is None:
        return None
    if pool.run_from is None and matrix.run_from is None:
        return None
    return PositionJoin(pool, matrix, shared[0], len(shared))


class WholeIdsInBlocks:
    """:func:`number_ids` of distinct ids given block by block, in constant memory (a pool
    streamed in blocks: the session file's unique index keeps its ids distinct). Only ids
    written as plain whole numbers (``7``, not ``007`` or ``7.0``) are counted so: one
    written otherwise (or no whole number at all) ends the count (:attr:`result` None),
    as two spellings of one number would need every value kept to tell;
    :attr:`other_spelling` says which ended it."""

    def __init__(self) -> None:
        self._lo: int | None = None
        self._hi = -1
        self._n = 0
        self._ok = True
        #: a whole number written otherwise (``007``, ``7.0``) ended the count
        self.other_spelling = False

    def add(self, ids: Sequence[str], *, numbers_only: bool = False) -> None:
        """Count a block of ids; ``numbers_only``: pass over ids that are no whole number
        at all (``abc``: :func:`number_ids` counts only the whole numbers of a side that
        is not the pool)."""
        if not self._ok:
            return
        for i in ids:
            t = str(i).strip()
            if not t.isascii() or not t.isdigit() or (len(t) > 1 and t[0] == "0"):
                whole = _WHOLE.fullmatch(t) is not None
                if numbers_only and not whole:
                    continue
                self._ok = False
                self.other_spelling = whole
                return
            v = int(t)
            self._lo = v if self._lo is None else min(self._lo, v)
            self._hi = max(self._hi, v)
            self._n += 1

    @property
    def result(self) -> NumberIds | None:
        """The ids counted, as :func:`number_ids` gives them (None: not all plain whole
        numbers, or none)."""
        if not self._ok or self._lo is None:
            return None
        lo = self._lo
        run = lo if lo in (0, 1) and self._hi - lo + 1 == self._n else None
        return NumberIds(str(lo), str(self._hi), self._n, run)
