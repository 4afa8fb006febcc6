"""Real lm-evaluation-harness ``--log_samples`` files, written by lm-eval itself.

``python tests/lmeval_harness.py OUT_DIR`` runs lm-eval (``lm_eval.simple_evaluate``
with ``log_samples=True``, then its ``EvaluationTracker`` writes the files exactly
as ``lm_eval --log_samples --output_path OUT_DIR`` does) on small local tasks
defined here as lm-eval YAML task files over local JSONL data, offline. The model
is a deterministic ``lm_eval.api.model.LM`` subclass (no weights to download):
its loglikelihood favours the right label word, with noise from a hash of the
request, so the files hold realistic, reproducible numbers. Only the model is
ours; the task loading, the requests, the filters, the metrics and the writers
are lm-eval's.

Tasks (``<OUT_DIR>/run/<model>/samples_<task>_<date>.jsonl``, one file each):

``at_sst2``       2 choices " negative"/" positive", 3-shot, 40 documents
``at_sst2_rev``   the same documents with the choices in the other order
``at_sst2_unl``   the same documents without labels (``"target": "-1"``)
``at_sst2_filt``  two filter pipelines (``first`` and ``again``): 2 records per doc
``at_sst2_mi``    ``acc_mutual_info``: 2C loglikelihoods per document
``at_mmlu_<s>``   an MMLU-like group of 3 subjects (``doc_id`` restarts at 0 per file)
``at_gen``        a ``generate_until`` task (not class scores)

Beside them: ``<OUT_DIR>/old/pretrained__fake_at_sst2.jsonl``, the ``at_sst2``
records as lm-eval 0.4.0-0.4.2 wrote them (one indented JSON array, numbers not
strings, ``arguments`` as pairs, no ``filter`` key), serialised with lm-eval's own
``handle_non_serializable`` the way those versions' ``__main__`` did; and
``<OUT_DIR>/docs.json``, the documents with their labels.

For the tests, :func:`lmeval_files` is a session-scoped fixture (imported by the
``conftest.py`` of each test folder that uses it) that runs this script once per
test session in a subprocess, and skips where lm-eval is not installed.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

N_DOCS = 40
SUBJECTS = ("algebra", "anatomy", "astronomy")


def _docs() -> list[dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from activetest.data.demo import demo_items

    return [{"sentence": it.fields["text"], "label": int(it.label), "idx": i}
            for i, it in enumerate(demo_items(N_DOCS, seed=3))]


def _mmlu_docs(subject: str) -> list[dict]:
    return [{"question": f"In {subject}, which option is number {k % 4 + 1} of item {k}?",
             "subject": subject,
             "choices": [f"{subject} option {k}-{j}" for j in range(4)],
             "answer": k % 4} for k in range(6 + len(subject) % 3)]


_SENT = """\
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Review: {{{{sentence}}}}\\nSentiment:"
doc_to_target: {target}
doc_to_choice: {choices}
metric_list:
{metrics}"""


def _write_tasks(root: Path, docs: list[dict]) -> None:
    data = root / "data"
    tasks = root / "tasks"
    data.mkdir(parents=True, exist_ok=True)
    tasks.mkdir(parents=True, exist_ok=True)
    (data / "sst2.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (data / "sst2_unl.jsonl").write_text(
        "".join(json.dumps({**d, "label": -1}) + "\n" for d in docs))
    acc = "  - metric: acc\n"
    plain = dict(data=data / "sst2.jsonl", target="label",
                 choices='["negative", "positive"]', metrics=acc)
    specs = {
        "at_sst2": _SENT.format(**plain) + "num_fewshot: 3\nfewshot_split: test\n",
        "at_sst2_rev": _SENT.format(**{**plain, "target": '"{{1 - label}}"',
                                       "choices": '["positive", "negative"]'}),
        "at_sst2_unl": _SENT.format(**{**plain, "data": data / "sst2_unl.jsonl"}),
        "at_sst2_mi": _SENT.format(**{**plain,
                                      "metrics": acc + "  - metric: acc_mutual_info\n"}),
        "at_sst2_filt": _SENT.format(**plain) + (
            "filter_list:\n  - name: first\n    filter:\n      - function: take_first\n"
            "  - name: again\n    filter:\n      - function: take_first\n"),
        "at_gen": (f"dataset_path: json\ndataset_kwargs:\n  data_files:\n"
                   f"    test: {data / 'sst2.jsonl'}\ntest_split: test\n"
                   "output_type: generate_until\n"
                   "doc_to_text: \"Review: {{sentence}}\\nSentiment:\"\n"
                   "doc_to_target: \"{{['negative', 'positive'][label]}}\"\n"
                   "generation_kwargs:\n  until: [\"\\n\"]\n"
                   "metric_list:\n  - metric: exact_match\n"),
    }
    for s in SUBJECTS:
        path = data / f"mmlu_{s}.jsonl"
        path.write_text("".join(json.dumps(d) + "\n" for d in _mmlu_docs(s)))
        specs[f"at_mmlu_{s}"] = (
            f"dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {path}\n"
            "test_split: test\noutput_type: multiple_choice\n"
            "doc_to_text: \"{{question.strip()}}\\nA. {{choices[0]}}\\nB. {{choices[1]}}\\n"
            "C. {{choices[2]}}\\nD. {{choices[3]}}\\nAnswer:\"\n"
            "doc_to_target: answer\ndoc_to_choice: [\"A\", \"B\", \"C\", \"D\"]\n"
            "metric_list:\n  - metric: acc\n")
    for name, body in specs.items():
        (tasks / f"{name}.yaml").write_text(f"task: {name}\n{body}")
    (tasks / "at_mmlu.yaml").write_text(
        "group: at_mmlu\ntask:\n" + "".join(f"  - at_mmlu_{s}\n" for s in SUBJECTS)
        + "aggregate_metric_list:\n  - metric: acc\n    weight_by_size: true\n")


def _model(docs: list[dict]) -> object:
    from lm_eval.api.model import LM

    truth = {d["sentence"]: ("negative", "positive")[d["label"]] for d in docs}

    class HashLM(LM):
        """Deterministic: the right label word gets about 1 nat more, plus hashed noise."""

        def loglikelihood(self, requests):
            out = []
            for req in requests:
                context, continuation = req.args
                h = int(hashlib.sha256(f"{context}|{continuation}".encode()).hexdigest()[:8],
                        16)
                ll = -0.5 - (h % 1000) / 400.0
                last = context.rsplit("Review: ", 1)[-1].removesuffix("\nSentiment:")
                if truth.get(last) == continuation.strip():
                    ll += 1.0
                out.append((ll, False))
            return out

        def loglikelihood_rolling(self, requests):
            raise NotImplementedError

        def generate_until(self, requests):
            return [" positive" for _ in requests]

    return HashLM()


def _old_format(samples: list[dict], path: Path) -> None:
    """lm-eval 0.4.0-0.4.2: ``json.dumps(samples[task], indent=2, default=...)``."""
    from lm_eval.utils import handle_non_serializable

    old = []
    for s in samples:
        rec = {k: s[k] for k in ("doc_id", "doc", "target", "arguments", "resps",
                                 "filtered_resps")}
        rec.update({m: s[m] for m in s.get("metrics", ())})
        old.append(rec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(old, indent=2, default=handle_non_serializable,
                               ensure_ascii=False), encoding="utf-8")


def run(out: Path) -> None:
    """Write the files described in the module docstring under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    os.environ.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
                      HF_HOME=str(out / "hf"), HF_DATASETS_CACHE=str(out / "hf" / "datasets"),
                      TOKENIZERS_PARALLELISM="false")
    docs = _docs()
    _write_tasks(out, docs)
    import lm_eval
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    names = ["at_sst2", "at_sst2_rev", "at_sst2_unl", "at_sst2_mi", "at_sst2_filt", "at_mmlu",
             "at_gen"]
    # only the tasks written here are indexed (lm-eval's ~14,000 built-in task files are
    # read on every TaskManager otherwise: most of the run's time; tests/lmeval_cli.py)
    tasks = TaskManager(include_path=str(out / "tasks"), include_defaults=False)
    results = lm_eval.simple_evaluate(model=_model(docs), tasks=names, task_manager=tasks,
                                      log_samples=True, random_seed=0, numpy_random_seed=0,
                                      torch_random_seed=0, fewshot_random_seed=0)
    samples = results["samples"]
    _old_format(copy.deepcopy(samples["at_sst2"]), out / "old" / "pretrained__fake_at_sst2.jsonl")
    tracker = EvaluationTracker(output_path=str(out / "run"))
    tracker.general_config_tracker.log_experiment_args(
        model_source="hash", model_args="pretrained=fake", system_instruction=None,
        chat_template=None, fewshot_as_multiturn=False)
    tracker.save_results_aggregated(results=results, samples=samples)
    for task_name in results["configs"]:
        tracker.save_results_samples(task_name=task_name, samples=samples[task_name])
    (out / "docs.json").write_text(json.dumps(docs))


@dataclass(frozen=True)
class HarnessFiles:
    """The files lm-eval wrote (see the module docstring)."""

    root: Path
    run: Path  # the folder lm-eval wrote: samples_<task>_<date>.jsonl + results_<date>.json
    old: Path  # at_sst2 as lm-eval 0.4.0-0.4.2 wrote it (one JSON array)
    docs: list[dict]  # the at_sst2 documents, in dataset order

    def samples(self, task: str) -> Path:
        """The samples file of one task."""
        found = sorted(self.run.glob(f"samples_{task}_2*.jsonl"))
        assert len(found) == 1, found
        return found[0]


_made: list[HarnessFiles] = []  # one run per test session, whichever folder asks first


@pytest.fixture(scope="session")
def lmeval_files(tmp_path_factory: pytest.TempPathFactory) -> HarnessFiles:
    """Run lm-eval once per test session (about 5 CPU-s); skip where it is not installed."""
    if importlib.util.find_spec("lm_eval") is None:
        pytest.skip("lm-eval is not installed (pip install -e '.[dev]')")
    if not _made:
        root = tmp_path_factory.mktemp("lmeval")
        proc = subprocess.run([sys.executable, __file__, str(root)], cwd=root,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        (run_dir,) = [p.parent for p in (root / "run").glob("*/results_*.json")]
        _made.append(HarnessFiles(root, run_dir, root / "old" / "pretrained__fake_at_sst2.jsonl",
                                  json.loads((root / "docs.json").read_text())))
    return _made[0]


def run_lm_eval(files: HarnessFiles, out: Path, tasks: str, *extra: str) -> list[Path]:
    """Run lm-eval's own command line (``tests/lmeval_cli.py``: ``at-hash`` on the
    fixture's local tasks, offline, ``--log_samples``); the samples files it wrote.
    ``extra``: more arguments (a second ``--model_args`` replaces the first)."""
    return run_lm_evals(files, [(out, tasks, *extra)])[0]


def run_lm_evals(files: HarnessFiles, runs: list[tuple[str | Path, ...]]) -> list[list[Path]]:
    """Several runs of lm-eval's own command line (as :func:`run_lm_eval`, each
    ``(out, tasks, *extra)``), one after another in one process (``tests/lmeval_cli.py``'s
    ``---``: lm-eval and torch are imported once); each run's samples files, in order."""
    env = {**os.environ, "HF_HOME": str(files.root / "hf"),
           "HF_DATASETS_CACHE": str(files.root / "hf" / "datasets"),
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    cli = Path(__file__).resolve().parent / "lmeval_cli.py"
    args: list[str] = []
    for out, tasks, *extra in runs:
        if args:
            args.append("---")
        args += ["run", "--model", "at-hash", "--model_args", f"docs={files.root / 'docs.json'}",
                 "--tasks", str(tasks), "--include_path", str(files.root / "tasks"),
                 "--log_samples", "--output_path", str(out), *map(str, extra)]
    proc = subprocess.run([sys.executable, str(cli), *args],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [sorted(Path(out).glob("*/samples_*.jsonl")) for out, *_ in runs]


def subset_of(full: list[Path], mapping: dict[str, list[int]], out: Path) -> list[Path]:
    """The full run's records of the emitted documents (``mapping``: a ``--samples``
    file's task -> doc ids), one file per task: the records a ``--samples`` run writes
    for a 0-shot task (tests/session/test_lmeval_loop.py checks that equality)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in full:
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        keep = set(mapping.get(task, ()))
        lines = [ln for ln in path.read_text().splitlines()
                 if ln.strip() and json.loads(ln)["doc_id"] in keep]
        if lines:
            dest = out / path.name
            dest.write_text("\n".join(lines) + "\n")
            written.append(dest)
    return written


if __name__ == "__main__":
    run(Path(sys.argv[1]))
