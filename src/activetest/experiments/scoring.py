"""Score the shared datasets with the bundled models (the expensive, resumable half).

For each dataset: split as the paper does (seeded; in-context examples
stratified, disjoint, shared by surrogate and target), then score the pool and
the test set with every model zero-shot and few-shot. Every model call goes
through the on-disk score cache, so an interrupted run resumes where it
stopped, and the result is written as a :class:`DatasetOutputs` file holding
only row numbers and log-probabilities (no dataset text).

Sizes are reduced from the paper's to fit a 2-core CPU machine (see
:data:`REDUCED_SIZES`); the write-up says so.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from activetest.data.datasets import load_shared
from activetest.experiments.outputs import DatasetOutputs, ModelOutputs
from activetest.models.calibration import CalibratedScorer, contextual_calibration

__all__ = ["CALIBRATED_MODE", "MODELS", "REDUCED_SIZES", "score_dataset"]

#: Mode name of the contextually calibrated few-shot outputs (``"<model>/few-cal"``).
CALIBRATED_MODE = "few-cal"

MODELS = ("smollm2-135m", "gemma3-270m")

#: (pool, test) sizes used here: at least 2,000 and 2,000 where the data allow.
#: FPB (2,264 rows): pool of 2,200 after 50 examples; the pool is the truth.
REDUCED_SIZES: dict[str, tuple[int, int]] = {
    "sst2": (2000, 2000), "subj": (2000, 2000), "fpb": (2200, 0), "hs": (2000, 2000),
    "mmlu": (2000, 2000),
}


def score_dataset(name: str, out_dir: str | os.PathLike[str], *, root: str | None = None,
                  seed: int = 0, models: Sequence[str] = MODELS, backend: str = "llamacpp",
                  sizes: tuple[int, int] | None = None, n_shots: int | None = None,
                  cache_dir: str | None = None, progress: bool = True,
                  parallel: bool = True) -> Path:
    """Score one shared dataset and write ``<out_dir>/<name>.npz``; returns its path.

    With ``parallel`` (the default) the models score side by side, one thread each
    (llama.cpp takes half the cores per model), as sessions do. Every chunk lands in
    the score cache as soon as it is done, so an interrupted run loses at most one
    chunk per model; the ``.npz`` is written when all models are done.
    """
    from activetest.models.cache import CachedScorer
    from activetest.models.parallel import run_parallel
    from activetest.models.registry import get_scorer

    ds = load_shared(name, root)
    pool_size, test_size = sizes or REDUCED_SIZES[ds.name]
    split = ds.split(seed, pool_size=pool_size, test_size=test_size, n_examples=n_shots)
    out = DatasetOutputs(
        ds.name, np.array([it.id for it in split.pool]), np.array([it.id for it in split.test]),
        np.array([it.id for it in split.examples]),
        np.array([it.label for it in split.pool], dtype=np.int64),
        np.array([it.label for it in split.test], dtype=np.int64), len(split.examples),
        meta={"seed": str(seed), "backend": backend, "pool_size": str(pool_size),
              "test_size": str(test_size)})
    path = Path(out_dir) / f"{ds.name}.npz"
    if path.exists():  # resume across machines: keep what an earlier run already scored
        old = DatasetOutputs.load(path)
        if all(np.array_equal(np.asarray(a, dtype=str), np.asarray(b, dtype=str)) for a, b in
               ((old.pool_rows, out.pool_rows), (old.test_rows, out.test_rows),
                (old.example_rows, out.example_rows))):
            out.outputs.update(old.outputs)
    have = dict(out.outputs)

    def score_model(model: str) -> dict[str, ModelOutputs]:
        scorer = CachedScorer(get_scorer(model, backend), cache_dir)
        res: dict[str, ModelOutputs] = {}
        try:
            for mode, examples in (("zero", ()), ("few", split.examples)):
                if f"{model}/{mode}" in have:
                    continue
                pool = scorer.score(ds.task, split.pool, examples, progress=progress)
                test = (scorer.score(ds.task, split.test, examples, progress=progress)
                        if split.test else np.zeros((0, ds.task.n_classes)))
                res[f"{model}/{mode}"] = ModelOutputs(pool, test)
            # Beyond the paper: the few-shot surrogate with contextual calibration. Its
            # content-free inputs are 3 extra prompts; the rest is arithmetic on the scores.
            few = res.get(f"{model}/few") or have[f"{model}/few"]
            if f"{model}/{CALIBRATED_MODE}" not in have:
                cf = CalibratedScorer(scorer).content_free_logprobs(ds.task, split.examples)
                res[f"{model}/{CALIBRATED_MODE}"] = ModelOutputs(
                    contextual_calibration(few.pool, cf),
                    contextual_calibration(few.test, cf) if len(few.test) else few.test)
        finally:
            close = getattr(scorer.scorer, "close", None)
            if callable(close):
                close()
        return res

    todo = [m for m in models
            if any(f"{m}/{mode}" not in have for mode in ("zero", "few", CALIBRATED_MODE))]
    jobs = [functools.partial(score_model, m) for m in todo]
    results = run_parallel(jobs, progress=progress) if parallel else [job() for job in jobs]
    for res in results:
        out.outputs.update(res)
    if results or not path.exists():
        out.save(path)
    return path
