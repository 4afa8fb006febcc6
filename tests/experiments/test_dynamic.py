"""The dynamic-surrogate ablation (experiments/dynamic.py).

* With a prompt-independent scorer (a real prediction table), the dynamic run must
  be the static run draw for draw (same generators), and the report's dynamic /
  static ratio 1: fast, no models.
* With the bundled models, a pass after one appended example equals scoring from
  scratch with that prompt (the kept prefix cache must not leak the old prompt),
  and the scores did change (the label reached the prompt).
* A run interrupted after its first pass resumes there: the model is called only
  for the passes left, and the result equals an uninterrupted run.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments import dynamic
from activetest.experiments.dynamic import (
    PAIRS,
    SeedSetup,
    load_seed,
    run_seed,
    static_run,
    summarise,
)
from activetest.experiments.outputs import DatasetOutputs
from activetest.models.table import TableScorer
from tests.models.conftest import EXAMPLES, SENTIMENT, TEST_ITEMS

OUTPUTS = Path(__file__).resolve().parents[2] / "experiments" / "outputs"


def _setup(n: int, n_shots: int) -> SeedSetup:
    return SeedSetup(7, np.arange(n), tuple(e.id for e in EXAMPLES[:n_shots]))


def _target(n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    p = rng.dirichlet([1.0, 1.0], size=n)
    return np.log(p)


def test_dynamic_with_a_prompt_independent_scorer_is_the_static_run(tmp_path: Path) -> None:
    items = list(TEST_ITEMS)
    n = len(items)
    rng = np.random.default_rng(0)
    lp = np.log(rng.dirichlet([0.5, 0.5], size=n))
    table = tmp_path / "preds.csv"
    with table.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "negative", "positive"])
        for it, row in zip(items, lp, strict=True):
            w.writerow([it.id, repr(float(row[0])), repr(float(row[1]))])
    scorer = TableScorer(table)
    tgt = _target(n)
    res = run_seed(scorer, SENTIMENT, items, EXAMPLES[:2], tgt, _setup(n, 2), budget=6,
                   path=tmp_path / "seed.npz")
    picks, q = static_run(res.scores[0], tgt, 7, 6)
    np.testing.assert_array_equal(res.picks, picks)
    np.testing.assert_allclose(res.q, q, rtol=0, atol=0)
    # every pass scored exactly the items not yet acquired
    for m in range(6):
        assert np.isnan(res.scores[m, res.picks[:m], 0]).all()
        assert (~np.isnan(res.scores[m, :, 0])).sum() == n - m
    np.testing.assert_allclose(res.scores[0], lp, atol=1e-12)


def test_summary_of_identical_runs_has_ratio_one(tmp_path: Path) -> None:
    outputs = DatasetOutputs.load(OUTPUTS / "sst2.npz")
    pair = PAIRS["gemma-smollm2"]
    sur = outputs.outputs["gemma3-270m/few"].pool
    tgt = outputs.outputs[pair.target].pool
    results = []
    for seed in range(3):
        idx = np.sort(np.random.default_rng(seed).choice(len(sur), 60, replace=False))
        setup = SeedSetup(seed, idx, ("0",))
        picks, q = static_run(sur[idx], tgt[idx], seed, 10)
        scores = np.repeat(sur[idx][None], 10, axis=0)
        results.append(dynamic.SeedResult(setup, 10, scores, picks, q, np.ones(10)))
    sm = summarise(pair, results, outputs, budgets=(5, 10), n_runs=200)
    assert sm.mse_dynamic == sm.mse_static
    assert sm.dynamic_wins == (0.0, 0.0)
    assert all(np.isfinite(sm.mse_uniform_many)) and all(np.isfinite(sm.mse_static_many))


class _Counting:
    """A real scorer that counts its calls and can stop the run at a given call."""

    def __init__(self, scorer: object, fail_at: int | None = None) -> None:
        self.scorer = scorer
        self.calls = 0
        self.fail_at = fail_at

    def score(self, *args: object, **kw: object) -> np.ndarray:
        self.calls += 1
        if self.fail_at is not None and self.calls >= self.fail_at:
            raise KeyboardInterrupt("interrupted")
        return self.scorer.score(*args, **kw)  # type: ignore[attr-defined]


def _bundled(name: str, backend: str) -> object:
    from activetest.models.bundled import ModelNotFoundError, bundled_model_path

    if backend == "llamacpp" and importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    if backend == "hf" and (importlib.util.find_spec("torch") is None
                            or importlib.util.find_spec("transformers") is None):
        pytest.skip("torch/transformers are not installed")
    try:
        bundled_model_path(name)
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    from activetest.models.registry import get_scorer

    return get_scorer(name, backend, n_threads=1)


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize(("name", "backend"), [
    ("smollm2-135m", "llamacpp"),
    pytest.param("smollm2-135m", "hf", marks=pytest.mark.hf),
    ("gemma3-270m", "llamacpp"),
])
def test_rescore_after_one_appended_label_equals_scoring_from_scratch(
        name: str, backend: str, tmp_path: Path) -> None:
    items = list(TEST_ITEMS[:8])
    n = len(items)
    warm = _bundled(name, backend)
    res = run_seed(warm, SENTIMENT, items, EXAMPLES[:4], _target(n), _setup(n, 4), budget=2,
                   path=tmp_path / "seed.npz")
    rest = np.setdiff1d(np.arange(n), res.picks[:1])
    prompt = [*list(EXAMPLES[:4]), items[res.picks[0]]]
    fresh = _bundled(name, backend)  # a new scorer: no prefix state from earlier prompts
    scratch = fresh.score(SENTIMENT, [items[i] for i in rest], prompt,  # type: ignore[attr-defined]
                          progress=False)
    np.testing.assert_allclose(res.scores[1, rest], scratch, rtol=0, atol=1e-5)
    # the appended label reached the prompt: the pass differs from the first one
    assert np.abs(res.scores[1, rest] - res.scores[0, rest]).max() > 1e-3


@pytest.mark.models
@pytest.mark.slow
def test_an_interrupted_run_resumes_from_its_cache(tmp_path: Path) -> None:
    items = list(TEST_ITEMS[:8])
    n = len(items)
    scorer = _bundled("smollm2-135m", "llamacpp")
    tgt = _target(n)
    setup = _setup(n, 3)
    whole = run_seed(scorer, SENTIMENT, items, EXAMPLES[:3], tgt, setup, budget=3,
                     path=tmp_path / "a.npz")
    path = tmp_path / "b.npz"
    with pytest.raises(KeyboardInterrupt):
        run_seed(_Counting(scorer, fail_at=2), SENTIMENT, items, EXAMPLES[:3], tgt, setup,
                 budget=3, path=path)
    part = load_seed(path)
    assert (len(part.scores), len(part.picks), part.complete) == (1, 1, False)
    counting = _Counting(scorer)
    resumed = run_seed(counting, SENTIMENT, items, EXAMPLES[:3], tgt, setup, budget=3,
                       path=path)
    assert counting.calls == 2  # the passes left, not the stored one
    np.testing.assert_array_equal(resumed.picks, whole.picks)
    np.testing.assert_array_equal(resumed.q, whole.q)
    np.testing.assert_allclose(resumed.scores, whole.scores, rtol=0, atol=1e-9)
    assert load_seed(path).complete
    again = _Counting(scorer)
    run_seed(again, SENTIMENT, items, EXAMPLES[:3], tgt, setup, budget=3, path=path)
    assert again.calls == 0
    with pytest.raises(ValueError, match="another pool"):
        run_seed(scorer, SENTIMENT, items, EXAMPLES[:3], tgt, _setup(n, 2), budget=3,
                 path=path)


def test_run_skips_cleanly_without_the_datasets(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rc = dynamic.main(["run", "--pair", "gemma-smollm2", "--seeds", "1",
                       "--datasets", str(tmp_path / "absent"), "--cache-dir", str(tmp_path)])
    assert rc == 0
    assert "skipped" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_report_needs_no_model_and_names_unfinished_seeds(tmp_path: Path) -> None:
    outputs = DatasetOutputs.load(OUTPUTS / "sst2.npz")
    tgt = outputs.outputs["smollm2-135m/few"].pool
    sur = outputs.outputs["gemma3-270m/few"].pool
    idx = np.arange(50)
    setup = SeedSetup(4, idx, ("0",))
    picks, q = static_run(sur[idx], tgt[idx], 4, 3)
    second = sur[idx].copy()
    second[picks[0]] = np.nan
    scores = np.stack([sur[idx], second])  # a pass that the appended label did not change
    dynamic._save(tmp_path / "gemma-smollm2" / "seed-004.npz",
                  dynamic.SeedResult(setup, 40, scores, picks[:2], q[:2], np.ones(2)))
    text = dynamic.report(tmp_path, OUTPUTS, pairs=["gemma-smollm2"])
    assert "No finished seed yet (in progress: seed 4 at 2/40 labels)" in text
    assert "on the 49 items left" in text
    assert "mean |change| of a class log-prob 0.000; the first 2 of 2 draws equal" in text
