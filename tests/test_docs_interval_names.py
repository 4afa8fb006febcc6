"""The docs name the confidence sequences as the product does: "anytime CS (asymptotic)"
and "exact anytime CS" (:mod:`activetest.session.interval_names`; the write-ups take
them from :mod:`activetest.experiments.coverage`), never the shorthands "asymptotic CS"
/ "exact CS" (QA: about 70 lines in README.md, robustness, history, compare, projection
and five more pages). The product's own cell mark ``"(exact CS)"``, quoted where a page
shows what the report prints, is what the product prints and stays."""

from __future__ import annotations

import re
from pathlib import Path

from activetest.experiments.coverage import ASYMPTOTIC_CS, EXACT_CS
from activetest.session.interval_names import basis_mark

ROOT = Path(__file__).resolve().parents[1]
#: A shorthand, also across a line break ("the exact\nCS").
SHORTHAND = re.compile(r"(?<!anytime )\basymptotic\s+CS\b|\bexact\s+CS\b")


def test_no_page_uses_the_shorthands() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    mark = f'"{basis_mark("exact").strip()}"'
    assert mark == '"(exact CS)"'
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in pages
             for m in SHORTHAND.finditer(p.read_text(encoding="utf-8").replace(mark, ""))]
    assert not found, found
    assert not SHORTHAND.search(f"{ASYMPTOTIC_CS} {EXACT_CS}")
