"""The neighbours study (experiments/history_neighbours.py): its cache key is keyed on
behaviour, and each variant's numbers are in it."""

from __future__ import annotations

import numpy as np

from activetest.experiments import history_neighbours as hn
from tests.experiments.conftest import shift_keyword


def test_probe_is_deterministic_and_moves_with_each_variant(monkeypatch) -> None:
    import activetest.stats.feature_design as fd
    import activetest.stats.neighbours as nb

    base = hn.behaviour_probe()
    assert hn.behaviour_probe() == base
    with monkeypatch.context() as mp:  # the original design only
        shift_keyword(mp, fd, "feature_design", lambda a, k: k.get("neighbours") is None, lam=0.3)
        assert hn.behaviour_probe() != base
    with monkeypatch.context() as mp:  # the neighbours' design (prior weight 1) only
        shift_keyword(mp, nb, "neighbour_design", lambda a, k: "prior_weight" not in k,
               prior_weight=0.5)
        assert hn.behaviour_probe() != base
    with monkeypatch.context() as mp:  # the prior-weight-0 variant only
        shift_keyword(mp, nb, "neighbour_design", lambda a, k: k.get("prior_weight") == 0.0,
               prior_weight=0.5)
        assert hn.behaviour_probe() != base
    assert hn.behaviour_probe() == base


def test_study_and_render_on_a_tiny_matrix(tmp_path) -> None:
    from activetest.experiments.history import MATRICES
    from activetest.experiments.probe import tiny_matrix

    tiny_matrix(tmp_path / MATRICES["bbh"])
    res = hn.neighbour_study(tmp_path, "bbh", "random", n_targets=3, n_runs=4,
                             budgets=(5, 10, 20), seed=2, log=False)
    for v in hn.VARIANTS:
        assert res[v].shape == (3, 3) and np.all(np.isfinite(res[v])) and np.all(res[v] > 0)
    assert not np.array_equal(res["original"], res["neighbours"])
    text = hn.render("bbh", "random", res)
    assert "| neighbours |" in text and "neighbours / original" in text
