"""The history experiment, reduced (CI): held-out BBH models, every method, the doc's tables.

The full study is ``python -m activetest.experiments history`` (docs/history.md); this
runs it on 3 held-out models, 6 runs, budgets 25 and 50 of the shared BBH matrix (every
ninth of its 4,027 models, so that the rank choice stays within CI's budget) and skips
cleanly without ../shared/datasets.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments.coverage import ASYMPTOTIC_CS
from activetest.experiments.history import MATRICES, METHODS, render, run_scenario
from activetest.formats.history import read_response_matrix

ROOT = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "history"


def test_reduced_study_on_bbh() -> None:
    path = ROOT / MATRICES["bbh"]
    if not path.exists():
        pytest.skip("../shared/datasets/history is absent")
    pytest.importorskip("ppi_py")
    M = read_response_matrix(path)
    M = M.without(np.arange(len(M.models)) % 9 != 0)  # 448 of the models
    r = run_scenario(M, "random", n_targets=3, n_runs=6, budgets=(25, 50), seed=1)
    assert r.rel.shape == (len(METHODS), 3, 2) and np.all(np.isfinite(r.rel))
    assert np.all(r.rel > 0)
    assert r.rank >= 3  # BBH's item factors explain far more than difficulty (README)
    assert r.n_history == M.scores.shape[0] - 3
    for c in (r.cov_fixed, r.cov_ppi, r.cov_irt, r.cov_anytime):
        assert np.all((c >= 0) & (c <= 1))
    text = render([r], "reduced")
    assert "| design |" in text and "cross-PPI" in text and "anytime" in text
    assert f"\nDesign, {ASYMPTOTIC_CS} over M = 30..50 at once: " in text


def test_the_page_names_the_anytime_cs_as_the_write_ups_do() -> None:
    """docs/history.md's blocks are what the history and history_vs_ppi studies write
    (from their caches: re-rendered, the blocks are the page's): each block's coverage line
    names the anytime CS as the product does (QA: "Design, anytime (asymptotic CS over
    M = 30..100 at once)" on 16 lines, "exact CS" in the prose)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "history.md").read_text()
    design = [x for x in page.splitlines() if x.startswith("Design, ")]
    assert len(design) == 16
    shape = re.compile(rf"Design, {re.escape(ASYMPTOTIC_CS)} over M = 30\.\.\d+ at once: ")
    assert all(shape.match(x) for x in design), [x[:80] for x in design if not shape.match(x)]
    assert not re.findall(r"(?<!anytime )\basymptotic\s+CS\b|\bexact\s+CS\b", page)
