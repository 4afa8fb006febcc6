"""Writing one benchmark's section of ``docs/benchmarks.md``, keeping the others."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(text: str, section: str, path: Path = DOC) -> None:
    """Replace (or append) the ``## <section>`` part of ``path`` with ``text``."""
    doc = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {re.escape(section)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(doc):
        doc = pattern.sub(lambda _m: text.rstrip("\n") + "\n\n", doc, count=1)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc.rstrip("\n") + "\n")
