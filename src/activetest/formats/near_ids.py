"""Ids that look alike without being equal: said where a join by id is refused, never
joined by (joins never guess).

:func:`loose_id` leaves out what often differs between two writings of one id (case,
blanks, leading zeros, a whole number's ``.0``, control and invisible characters);
:func:`near_misses` finds the first id of one side that equals one of the other's so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["NEAR_MISS_WHY", "loose_id", "near_misses"]

#: What two ids that :func:`loose_id` makes equal may differ in (named in messages).
NEAR_MISS_WHY = ("case, blanks, leading zeros, a number's '.0' or control and invisible "
                 "characters")


def loose_id(s: str) -> str:
    """An id with case, blanks, leading zeros, a whole number's ``.0`` and control and
    invisible characters (Unicode categories Cc, Cf) left out: only to say why ids that
    look alike did not join (they are never joined by it)."""
    import unicodedata

    t = "".join(ch for ch in str(s) if unicodedata.category(ch) not in ("Cc", "Cf"))
    t = t.strip().casefold()
    try:
        v = float(t)
    except ValueError:
        return t
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else t


def near_misses(cols: Sequence[str], ids: Sequence[str], pos: Mapping[str, int]
                ) -> tuple[str, str] | None:
    """The first of ``cols`` that is not an id of ``pos`` but equals one of ``ids``
    loosely (:func:`loose_id`), with that id; None if there is none."""
    loose: dict[str, str] = {}
    for i in ids:
        loose.setdefault(loose_id(i), i)
    for c in cols:
        if c not in pos and loose_id(c) in loose:
            return c, loose[loose_id(c)]
    return None
