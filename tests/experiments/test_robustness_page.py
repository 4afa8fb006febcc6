"""docs/robustness.md shows the hostile suite's tables as the suite writes them, from the
results it cached (``python -m activetest.experiments.robustness --from-json``), and
names the intervals as the product does."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from activetest.experiments.coverage import ASYMPTOTIC_CS, EXACT_CS
from activetest.experiments.robustness import PoolResult, tables

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "robustness.md"
CACHE = ROOT / "experiments" / "cache" / "robustness.json"


def test_the_page_s_tables_are_what_the_suite_writes_from_its_cache() -> None:
    """Every paragraph and table :func:`tables` writes from the cached 800-run suite is
    on the page, word for word and number for number. QA: the tables' captions and headers
    said "anytime (asymptotic CS) and exact CS", "fixed at 50", "exact" where the product
    says anytime CS (asymptotic) / exact anytime CS / fixed-budget; and the cache the page
    points to had been overwritten by a 3-run toy suite (``--runs 3 --no-exact``), so
    ``--from-json`` printed none of the page's numbers."""
    stored = json.loads(CACHE.read_text(encoding="utf-8"))
    assert stored["command"] == ("python -m activetest.experiments.robustness --runs 800 "
                                 "--seed 0 --widened")
    lines = tables([PoolResult(**r) for r in stored["results"]], stored["command"])
    page = PAGE.read_text(encoding="utf-8")
    blocks = "\n".join(lines).split("\n\n")
    assert len(blocks) == 9  # the command, four captions and their tables
    missing = [b.splitlines()[0][:120] for b in blocks if b not in page]
    assert not missing, missing
    assert f"{ASYMPTOTIC_CS} and {EXACT_CS}: share of runs" in page
    assert f"| {ASYMPTOTIC_CS} | {EXACT_CS} |" in page


def test_the_page_names_the_confidence_sequences_as_the_product_does() -> None:
    """No "asymptotic CS" / "exact CS" shorthand on the page (QA: 28 lines), also not
    across a line break; the product's own mark ``"(exact CS)"`` would stay quoted."""
    page = PAGE.read_text(encoding="utf-8").replace('"(exact CS)"', "")
    old = re.findall(r"(?<!anytime )\basymptotic\s+CS\b|\bexact\s+CS\b|\bCLT\s+CS\b", page)
    assert not old, old


def test_a_run_leaves_the_committed_cache_alone_unless_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """QA (commit 30de35a): ``--json`` defaulted to the committed cache, so a 3-run toy
    suite overwrote the 800-run results this page is written from. A run now writes
    ``runs/robustness.json`` (git-ignored) unless ``--json`` names a file; ``--from-json``
    still reads the cache (or ``--json``). Run from a copy of the repository's layout."""
    from activetest.experiments import robustness

    cache = tmp_path / robustness.CACHE_JSON
    cache.parent.mkdir(parents=True)
    cache.write_bytes(CACHE.read_bytes())
    monkeypatch.chdir(tmp_path)
    robustness.main(["--runs", "2", "--pools", "constant", "--losses", "zero_one",
                     "--no-exact"])
    assert cache.read_bytes() == CACHE.read_bytes()  # the committed results untouched
    toy = json.loads((tmp_path / robustness.RUN_JSON).read_text(encoding="utf-8"))
    assert toy["runs"] == 2 and toy["command"].endswith("--runs 2 --seed 0 --no-exact")
    assert f"results written to {robustness.RUN_JSON}" in capsys.readouterr().out
    robustness.main(["--from-json"])
    assert "Command: `python -m activetest.experiments.robustness --runs 800 --seed 0 " \
           "--widened`" in capsys.readouterr().out
    robustness.main(["--from-json", "--json", robustness.RUN_JSON])
    assert "--runs 2 --seed 0 --no-exact`" in capsys.readouterr().out
