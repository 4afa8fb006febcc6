"""Several models' real lm-evaluation-harness ``--log_samples`` runs on one task: a folder
of other models' harness logs, as ``init --history DIR`` reads it.

``python tests/history_logs.py OUT_DIR K`` runs lm-eval itself (``simple_evaluate`` with
``log_samples=True``, then its ``EvaluationTracker``, exactly as ``lm_eval --log_samples
--output_path OUT_DIR/run`` writes) on the ``at_sst2`` task of :mod:`tests.lmeval_harness`
(2 choices, 40 documents, local YAML and JSONL, offline) for K deterministic models
``new-model``, ``small-model``, ``model-2`` .. ``model-{K-1}``: each favours the right
label word by an amount that
shrinks on items that are hard for every model (a shared difficulty from a hash of the
sentence) and varies by model, plus noise hashed with the model's name. lm-eval writes
``OUT_DIR/run/model-k/samples_at_sst2_<date>.jsonl`` and ``results_<date>.json`` per model.
Only the models are ours; the task, requests, metrics and writers are lm-eval's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: The first models' names (the README's recipe names them); then ``model-<j>``.
NAMES = ("new-model", "small-model")


def _h(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def _model(docs: list[dict], name: str, skill: float) -> object:
    from lm_eval.api.model import LM

    truth = {d["sentence"]: ("negative", "positive")[d["label"]] for d in docs}

    class HashLM(LM):
        """Deterministic: the right word gets ``skill - 2.5 * hardness`` nats more, plus
        noise hashed with the model's name."""

        def loglikelihood(self, requests):
            out = []
            for req in requests:
                context, continuation = req.args
                last = context.rsplit("Review: ", 1)[-1].removesuffix("\nSentiment:")
                ll = -0.5 - 1.5 * _h(f"{name}|{context}|{continuation}")
                if truth.get(last) == continuation.strip():
                    ll += skill - 2.5 * _h(f"hard|{last}")
                out.append((ll, False))
            return out

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

        def generate_until(self, requests):
            raise NotImplementedError

    return HashLM()


def run(out: Path, k: int) -> None:
    """Write K models' runs of ``at_sst2`` under ``out/run`` (module docstring)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.lmeval_harness import _docs, _write_tasks

    out.mkdir(parents=True, exist_ok=True)
    os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
                      HF_HOME=str(out / "hf"), HF_DATASETS_CACHE=str(out / "hf" / "datasets"),
                      TOKENIZERS_PARALLELISM="false")
    docs = _docs()
    _write_tasks(out, docs)
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=str(out / "tasks"))
    for j in range(k):
        name = NAMES[j] if j < len(NAMES) else f"model-{j}"
        results = lm_eval.simple_evaluate(model=_model(docs, name, 1.0 + 0.25 * j),
                                          tasks=["at_sst2"], task_manager=tm, log_samples=True,
                                          random_seed=0, numpy_random_seed=0,
                                          torch_random_seed=0, fewshot_random_seed=0)
        tracker = EvaluationTracker(output_path=str(out / "run"))
        tracker.general_config_tracker.log_experiment_args(
            model_source="hash", model_args=f"pretrained={name}", system_instruction=None,
            chat_template=None, fewshot_as_multiturn=False)
        tracker.save_results_aggregated(results=results, samples=results["samples"])
        tracker.save_results_samples(task_name="at_sst2", samples=results["samples"]["at_sst2"])


_made: list[Path] = []  # one run per test session


@pytest.fixture(scope="session")
def history_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder lm-eval wrote 6 models' runs in (``<root>/run``); lm-eval runs once per
    test session in a subprocess (about 15 s of CPU); skipped without lm-eval."""
    if importlib.util.find_spec("lm_eval") is None:
        pytest.skip("lm-eval is not installed (pip install -e '.[dev]')")
    if not _made:
        root = tmp_path_factory.mktemp("history_logs")
        proc = subprocess.run([sys.executable, __file__, str(root), "6"], cwd=root,
                              capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-4000:]
        _made.append(root / "run")
    return _made[0]


if __name__ == "__main__":
    run(Path(sys.argv[1]), int(sys.argv[2]))
