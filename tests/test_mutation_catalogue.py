"""The mutation catalogue (``scripts/mutations.json``) still applies to the code.

Running the mutations is not part of CI (``python scripts/mutations.py``, 25 minutes),
but an entry whose code moved or changed silently stops checking anything: its ``old``
text must occur exactly once in its file, its tests must exist, and ids are unique.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_mutation_entry_applies_once_and_names_existing_tests() -> None:
    entries = json.loads((ROOT / "scripts" / "mutations.json").read_text(encoding="utf-8"))
    assert len(entries) >= 90
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    bad = []
    for e in entries:
        path = ROOT / e["file"]
        if not path.is_file():
            bad.append(f"{e['id']}: no file {e['file']}")
            continue
        n = path.read_text(encoding="utf-8").count(e["old"])
        if n != 1:
            bad.append(f"{e['id']}: its old text occurs {n} times in {e['file']}")
        if e["old"] == e["new"]:
            bad.append(f"{e['id']}: changes nothing")
        for t in e["tests"]:
            if not (ROOT / t.split("::")[0]).exists():  # a file or a folder of tests
                bad.append(f"{e['id']}: no tests at {t}")
    assert not bad, "\n".join(bad)
