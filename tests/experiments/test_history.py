"""The history experiment, reduced (CI): held-out BBH models, every method, the doc's tables.

The full study is ``python -m activetest.experiments history`` (docs/history.md); this
runs it on 3 held-out models, 6 runs, budgets 25 and 50 of the shared BBH matrix (every
ninth of its 4,027 models, so that the rank choice stays within CI's budget) and skips
cleanly without ../shared/datasets.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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
