"""Numbers the code quotes to a person (in an error's advice) are the docs' measured ones.

``create_graded`` advises a surrogate with what docs/generative.md measured; a re-run of
that experiment rewrites the docs, and the quoted numbers must follow, or the advice
names a number no table holds.
"""

from __future__ import annotations

import re
from pathlib import Path

from activetest.session.create_graded import AGREE_JUDGE_MEASURED, SCORE_MEASURED

DOC = Path(__file__).resolve().parents[2] / "docs" / "generative.md"


def _rows(text: str, pattern: str) -> list[str]:
    """The median-error cell (the table's second column) of every row whose method matches."""
    return [m.group(2) for m in re.finditer(r"^\| (" + pattern + r") \| ([0-9.]+) \|", text,
                                            flags=re.M)]


def test_the_advice_quotes_the_measured_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    headline = text[text.index("| method | median rel. error |"):]
    headline = headline[:headline.index("\n\n")]
    fixed = _rows(headline, r"(?:judge:[\w.-]+|agree) fixed")
    assert len(fixed) == 3, fixed  # judge: with each bundled model, agree
    values = sorted(float(v) for v in fixed)
    assert f"{values[0]:.2f}-{values[-1]:.2f}" == AGREE_JUDGE_MEASURED
    (score,) = _rows(text, r"score:em fixed")
    assert score == SCORE_MEASURED
