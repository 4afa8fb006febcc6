"""The history experiment's fast baselines compute what the per-run loop computed.

:func:`activetest.experiments.history_baselines.baselines` (compiled fits with a BLAS
Hessian, PPI++ batched over runs through ppi_py's per-coordinate lambda) against
:func:`~activetest.experiments.history_baselines.baselines_reference` (the loop the
experiment ran before: one ``fit_predict`` and one ppi_py call per run, budget and fold)
on the same uniform orders of a small response matrix with item structure.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from activetest.experiments.history_baselines import baselines, baselines_reference
from activetest.experiments.probe import tiny_matrix
from activetest.formats.history import read_response_matrix
from activetest.stats.feature_design import design_matrix, history_features


@pytest.mark.parametrize("chunk", [2, 50])
def test_fast_baselines_equal_the_per_run_loop(tmp_path: Path, chunk: int) -> None:
    pytest.importorskip("ppi_py")
    S = read_response_matrix(tiny_matrix(tmp_path / "m.csv")).scores
    hf = history_features(S[4:], rank=2)
    X = design_matrix(hf.prior_wrong, hf.columns())
    budgets = (5, 10, 20, 30)
    for row in (0, 2):
        L = 1.0 - S[row]
        fast = baselines(X, L, budgets, 5, np.random.default_rng(row), chunk=chunk)
        ref = baselines_reference(X, L, budgets, 5, np.random.default_rng(row))
        for name in ("ppi", "cross", "irt"):
            a, b = getattr(fast, name), getattr(ref, name)
            assert a.shape == (5, len(budgets))
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-9, err_msg=name)
        np.testing.assert_array_equal(fast.cov_ppi, ref.cov_ppi)
        np.testing.assert_array_equal(fast.cov_irt, ref.cov_irt)
        # the runs differ (else a batch mixing up columns could pass), and PPI++ is not
        # the IRT-style or the cross-fitted estimate
        assert np.ptp(fast.ppi[:, 0]) > 1e-3
        assert np.abs(fast.ppi - fast.irt).max() > 1e-3
        assert np.abs(fast.ppi - fast.cross).max() > 1e-3


def test_fast_baselines_use_each_runs_own_lambda(tmp_path: Path) -> None:
    """A batch's PPI++ estimate per run equals ppi_py on that run alone (power-tuned
    lambda per run, not one lambda shared by the batch)."""
    ppi = pytest.importorskip("ppi_py")
    S = read_response_matrix(tiny_matrix(tmp_path / "m.csv")).scores
    hf = history_features(S[4:], rank=2)
    X = design_matrix(hf.prior_wrong, hf.columns())
    L = 1.0 - S[0]
    fast = baselines(X, L, (10,), 4, np.random.default_rng(3))
    shared = []
    rng = np.random.default_rng(3)
    from activetest.stats.feature_design import fit_predict
    for _ in range(4):
        lab = rng.permutation(L.size)[:10]
        g = fit_predict(X, lab, L[lab])
        shared.append((L[lab], g[lab], g))
        assert float(np.asarray(ppi.ppi_mean_pointestimate(L[lab], g[lab], g)).ravel()[0]) \
            == pytest.approx(fast.ppi[len(shared) - 1, 0], abs=1e-9)
    # one lambda for all four (ppi_py's "overall" mode on the batch) gives other numbers
    Y, Yh, Yu = (np.column_stack(z) for z in zip(*shared, strict=True))
    joint = np.asarray(ppi.ppi_mean_pointestimate(Y, Yh, Yu)).ravel()
    assert np.abs(joint - fast.ppi[:, 0]).max() > 1e-6
