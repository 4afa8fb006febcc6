"""Ratios as a reader gets them back from a printed table's cells."""
from __future__ import annotations


def printed_ratio(num: float, den: float, digits: int = 2) -> float | None:
    """``num / den`` of the two values rounded to ``digits`` decimals, as the table prints
    them (a ratio of the unrounded values can differ from the cells' in its last digit:
    0.4149 / 0.6350 is 0.65, the cells 0.41 / 0.64 give 0.64); None where ``den`` prints
    as 0."""
    num, den = round(num, digits), round(den, digits)
    return num / den if den > 0 else None
