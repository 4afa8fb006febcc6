"""REAL inspect_ai evals of a small arithmetic task, with and without ``ActiveStopping``.

Run as ``python -m tests.inspect_runs OUT_DIR POOL.jsonl RUN [RUN ...]`` (each RUN is
``full`` or ``active:SESSION.db:WIDTH:BUDGET[:BATCH]``; WIDTH ``-`` for none; with a
BATCH the manager draws that many at a time and refits between batches, and the eval
runs with ``max_samples`` = the number of samples, ``--max-samples`` bounding the
model's connections) with
``--model mock`` (inspect's own ``mockllm/model`` provider answering from a fixed
rule; ``--delay S`` makes every answer take S seconds; ``--model mock-other``: the same
rule under another model name, ``mockllm/other``; ``--scorers two``: the task scores
with ``match`` and a second scorer, ``length``, and the manager is told
``scorer="match"``; ``--scorers dict``: one scorer, ``graded``, whose value is a dict
``{"correct": 1/0, "length": n}``, read with ``value_key="correct"``) or ``--model smollm2`` (the
bundled SmolLM2-135M behind llama.cpp's OpenAI-compatible server, inspect's
``llama-cpp-python`` provider, greedy). It prints one JSON line per run: the log
path. The tests run it in a subprocess (inspect sets up logging and registries
process-wide) and read the logs back with ``inspect_ai.log.read_eval_log``.

The pool file (JSONL: ``id``, ``question``, ``answer`` (empty), ``p_correct``) is
also the session's pool (``activetest init --task arith.toml --target pool
--surrogate column:p_correct``); the samples' inputs contain the questions, so the
join is confirmed by content.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

#: The graded task file of the session (a question, a short answer, incorrect/correct).
TASK_TOML = """\
name = "arith"
kind = "graded"
instruction = "Answer with the number only."

[templates]
item = "Question: {question}\\nAnswer:"
example = "Question: {question}\\nAnswer: {answer}\\n\\n"
"""


def write_pool(path: Path, n: int) -> list[dict[str, Any]]:
    """``n`` sums ``a plus b`` with a made-up surrogate P(correct) (higher for small a)."""
    rows = []
    for i in range(n):
        a, b = (i * 7) % 23, (i * 5) % 9
        rows.append({"id": f"sum-{i:03d}", "question": f"What is {a} plus {b}?", "answer": "",
                     "p_correct": round(0.9 - 0.7 * a / 22, 3)})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def mock_answer(question: str) -> str:
    """The mock model: right, except for a in {5, 10, 15, 20} (one too many) and a > 20."""
    a, b = (int(x) for x in question.removeprefix("What is ").rstrip("?").split(" plus "))
    return str(a + b + (1 if (a % 5 == 0 and a > 0) or a > 20 else 0))


def _samples(pool: Path) -> list[Any]:
    from inspect_ai.dataset import Sample

    out = []
    for line in pool.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        a, b = (int(x) for x in r["question"].removeprefix("What is ").rstrip("?")
                .split(" plus "))
        out.append(Sample(id=r["id"], input=f"Answer with the number only.\n"
                                            f"Question: {r['question']}\nAnswer:",
                          target=str(a + b)))
    return out


def _mock(delay: float, name: str = "mockllm/model") -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def respond(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        text = messages[-1].text
        q = text.split("Question: ")[1].split("\n")[0]
        if delay:
            time.sleep(delay)  # inside inspect's worker thread: other samples go on
        out = ModelOutput.from_content(name, mock_answer(q))
        out.usage = ModelUsage(input_tokens=20, output_tokens=1, total_tokens=21)
        return out

    return get_model(name, custom_outputs=respond)


def _scorers(kind: str) -> tuple[list[Any], dict[str, Any]]:
    """The task's scorers (``--scorers``) and the manager's options that pick the label."""
    from inspect_ai.scorer import Score, Target, accuracy, match, mean, scorer
    from inspect_ai.solver import TaskState

    @scorer(metrics=[mean()])
    def length() -> Any:  # the answer's length: a second scorer, never the label
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(len(state.output.completion.strip())))
        return score

    @scorer(metrics=[{"correct": [accuracy()], "length": [mean()]}])
    def graded() -> Any:  # one scorer, a dict value: the label is its "correct" key
        async def score(state: TaskState, target: Target) -> Score:
            answer = state.output.completion.strip()
            return Score(value={"correct": float(answer == target.text),
                                "length": float(len(answer))}, answer=answer)
        return score

    if kind == "two":
        return [match(numeric=True), length()], {"scorer": "match"}
    if kind == "dict":
        return [graded()], {"value_key": "correct"}
    return [match(numeric=True)], {}


def run(out_dir: Path, pool: Path, runs: list[str], model: Any, max_samples: int,
        scorers: str = "match") -> None:
    """Each run's eval; one JSON line per run."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.solver import generate

    from activetest.inspect import ActiveStopping

    score_with, pick = _scorers(scorers)
    for spec in runs:
        samples = _samples(pool)
        most = max_samples
        if spec == "full":
            task = Task(dataset=MemoryDataset(samples, name="arith"), solver=generate(),
                        scorer=score_with, name="arith")
        else:
            _, db, width, budget, *batch = spec.split(":")
            stop = ActiveStopping(db, width=None if width == "-" else float(width),
                                  budget=None if budget == "-" else int(budget),
                                  batch=int(batch[0]) if batch else None, **pick)
            if batch:
                most = len(samples)  # every sample may wait for its batch
            task = Task(dataset=stop.dataset(samples, name="arith"), solver=generate(),
                        scorer=score_with, name="arith", early_stopping=stop)
        logs = inspect_eval(task, model=model, log_dir=str(out_dir), display="none",
                            max_samples=most, max_connections=max_samples)
        print(json.dumps({"run": spec, "log": str(logs[0].location),
                          "status": logs[0].status}), flush=True)


def main() -> None:
    """The command line (module docstring)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("pool", type=Path)
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--model", default="mock", choices=["mock", "mock-other", "smollm2"])
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--max-samples", type=int, default=4)
    ap.add_argument("--scorers", default="match", choices=["match", "two", "dict"])
    args = ap.parse_args()
    if args.model in ("mock", "mock-other"):  # mock-other: the same rule, another name
        name = "mockllm/model" if args.model == "mock" else "mockllm/other"
        run(args.out_dir, args.pool, args.runs, _mock(args.delay, name), args.max_samples,
            args.scorers)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from inspect_ai.model import GenerateConfig, get_model

    from activetest.models.bundled import bundled_model_path
    from tests.models.server import llama_server

    with llama_server(bundled_model_path("smollm2-135m"), n_ctx=512) as base:
        m = get_model("llama-cpp-python/smollm2-135m", base_url=base, api_key="none",
                      config=GenerateConfig(max_tokens=6, temperature=0.0, seed=0))
        run(args.out_dir, args.pool, args.runs, m, args.max_samples, args.scorers)


if __name__ == "__main__":
    main()
