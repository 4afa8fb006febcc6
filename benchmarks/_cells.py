"""Ratios as a reader gets them back from a printed table's cells."""
from __future__ import annotations


def printed_ratio(num: float, den: float, digits: int = 2,
                  den_digits: int | None = None) -> float | None:
    """``num / den`` of the two values rounded to ``digits`` decimals (``den`` to
    ``den_digits`` where its cell prints another number of them), as the table prints
    them (a ratio of the unrounded values can differ from the cells' in its last digit:
    0.4149 / 0.6350 is 0.65, the cells 0.41 / 0.64 give 0.64); None where ``den`` prints
    as 0."""
    num = round(num, digits)
    den = round(den, digits if den_digits is None else den_digits)
    return num / den if den > 0 else None


def ratio_cell(r: float | None, nd: int = 2) -> str:
    """A ratio as a table cell: ``nd`` decimals and an x; "-" where it is None (its
    denominator printed as 0)."""
    return "-" if r is None else f"{r:.{nd}f}x"
