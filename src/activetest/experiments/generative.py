"""SQuAD with the bundled models: answers, automatic judgments and surrogates of the judgment.

The expensive, resumable half of the generative experiment (the statistics are
in :mod:`activetest.experiments.generative_report`). For the SQuAD v1.1 dev file:

1. a seeded split of the questions into 3 generation examples, ``n_judge`` judge
   examples, a pool and a disjoint test set;
2. greedy answers of every model to every pool, test and judge-example question
   (few-shot, 3 examples, at most 16 tokens, stop at a newline), through the
   answer cache (:mod:`activetest.models.answers`: an interrupted run resumes);
3. the automatic judge: the official exact match and token F1 against the
   references (the "labels" the protocol reveals one at a time);
4. surrogates of the judgment, each a per-item probability that the target's
   answer is judged wrong:
   - the target's own confidence: mean, minimum and summed token log-prob;
   - an in-context judge: each bundled model prompted with ``n_judge`` judged
     answers of the target (question, answer, "Correct: yes/no", judged by exact
     match; these labels are charged to the method), its P(yes) read like a class
     probability (no context in the judge's prompt, to keep it cheap);
   - agreement: the token F1 between the target's answer and another model's.

Written to ``experiments/outputs/generative/squad.npz``: question ids and numbers only (no
dataset text and no answer text; the answers stay in the local answer cache).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from activetest.data.generative import SQUAD, QAItem, exact_match, load_squad, token_f1
from activetest.data.task import Item
from activetest.models.judges import JUDGE_TASK, judge_items

__all__ = ["MODELS", "SIZES", "GenSplit", "score_squad", "split_squad"]

MODELS = ("smollm2-135m", "gemma3-270m")
#: (pool, test): the pool is the evaluation set; the test set gives the "true" risk.
SIZES = (2000, 1000)
N_SHOTS = 3
N_JUDGE = 8

@dataclass(frozen=True)
class GenSplit:
    """Disjoint question sets (positions in :func:`load_squad`'s order)."""

    shots: np.ndarray
    judge: np.ndarray
    pool: np.ndarray
    test: np.ndarray


def split_squad(n_questions: int, *, seed: int = 0, sizes: tuple[int, int] = SIZES,
                n_shots: int = N_SHOTS, n_judge: int = N_JUDGE) -> GenSplit:
    """A seeded random split of the questions (shots, judge examples, pool, test)."""
    need = n_shots + n_judge + sizes[0] + sizes[1]
    if need > n_questions:
        raise ValueError(f"the split needs {need} questions, the file has {n_questions}")
    perm = np.random.default_rng(seed).permutation(n_questions)
    a, b, c = n_shots, n_shots + n_judge, n_shots + n_judge + sizes[0]
    return GenSplit(perm[:a], perm[a:b], perm[b:c], perm[c:need])


def _answers(model: str, qs: Sequence[QAItem], shots: Sequence[Item], *,
             cache_dir: str | None, threads: int | None, progress: bool) -> list:
    from activetest.models.answers import CachedGenerator
    from activetest.models.llamacpp import LlamaCppScorer

    gen = CachedGenerator(LlamaCppScorer(model, n_threads=threads), cache_dir)
    try:
        return gen.generate(SQUAD, [q.item() for q in qs], shots, progress=progress)
    finally:
        gen.generator.close()


def _judge(model: str, items: Sequence[Item], examples: Sequence[Item], *,
           cache_dir: str | None, threads: int | None, progress: bool) -> np.ndarray:
    from activetest.models.cache import CachedScorer
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = CachedScorer(LlamaCppScorer(model, n_threads=threads), cache_dir)
    try:
        return scorer.score(JUDGE_TASK, items, examples, progress=progress)
    finally:
        scorer.scorer.close()


def score_squad(path: str | os.PathLike[str], out: str | os.PathLike[str], *, seed: int = 0,
                sizes: tuple[int, int] = SIZES, models: Sequence[str] = MODELS,
                cache_dir: str | None = None, progress: bool = True,
                parallel: bool = True) -> Path:
    """Answer, judge and write ``out`` (an ``.npz`` of ids and numbers); returns its path."""
    from activetest.models.parallel import run_parallel

    qs = load_squad(path)
    split = split_squad(len(qs), seed=seed, sizes=sizes)
    shots = [qs[i].item(qs[i].references[0]) for i in split.shots]
    evaluated = [qs[i] for i in np.concatenate([split.judge, split.pool, split.test])]
    threads = 1 if parallel and len(models) > 1 else None
    jobs = [functools.partial(_answers, m, evaluated, shots, cache_dir=cache_dir,
                              threads=threads, progress=progress) for m in models]
    gens = run_parallel(jobs, progress=progress) if parallel else [job() for job in jobs]
    by_model = dict(zip(models, gens, strict=True))
    nj = len(split.judge)
    arrays: dict[str, np.ndarray] = {
        "ids": np.array([q.id for q in evaluated]), "n_judge": np.array(nj),
        "n_pool": np.array(len(split.pool)), "n_test": np.array(len(split.test)),
        "shot_ids": np.array([qs[i].id for i in split.shots]), "seed": np.array(seed),
    }
    for m, g in by_model.items():
        lp = [np.array(x.answer_logprobs() or x.token_logprobs[:1] or (0.0,)) for x in g]
        arrays[f"{m}/em"] = np.array([exact_match(x.text, q.references)
                                      for x, q in zip(g, evaluated, strict=True)])
        arrays[f"{m}/f1"] = np.array([token_f1(x.text, q.references)
                                      for x, q in zip(g, evaluated, strict=True)])
        arrays[f"{m}/mean_lp"] = np.array([a.mean() for a in lp])
        arrays[f"{m}/min_lp"] = np.array([a.min() for a in lp])
        arrays[f"{m}/sum_lp"] = np.array([a.sum() for a in lp])
        arrays[f"{m}/n_tokens"] = np.array([x.n_answer_tokens for x in g])
        arrays[f"{m}/finished"] = np.array([x.finish == "stop" for x in g])
    for t in models:  # agreement of each target with every other model's answer
        for o in models:
            if o != t:
                arrays[f"{t}/agree:{o}"] = np.array([
                    token_f1(a.text, [b.text]) for a, b in zip(by_model[t], by_model[o],
                                                                strict=True)])
    judge_jobs = []
    keys = []
    for t in models:
        texts = [x.text for x in by_model[t]]
        items = judge_items([q.item() for q in evaluated], texts)
        em = arrays[f"{t}/em"]
        examples = [Item(it.id, it.fields, int(y)) for it, y in
                    zip(items[:nj], em[:nj], strict=True)]
        for j in models:
            keys.append(f"{t}/judge:{j}")
            judge_jobs.append(functools.partial(_judge, j, items[nj:], examples,
                                                cache_dir=cache_dir, threads=threads,
                                                progress=progress))
    results = []
    for start in range(0, len(judge_jobs), 2):  # two models at a time on two cores
        batch = judge_jobs[start:start + 2]
        results += run_parallel(batch, progress=progress) if parallel else [j() for j in batch]
    for k, lp in zip(keys, results, strict=True):
        arrays[k] = np.asarray(lp, dtype=np.float32)
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out_path, **{k: (v.astype(np.float32) if v.dtype == np.float64 else v)
                                     for k, v in arrays.items()})
    return out_path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m activetest.experiments.generative [--sizes P T] [--out FILE]``."""
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--squad", default="../shared/datasets/squad/dev-v1.1.json")
    p.add_argument("--out", default="experiments/outputs/generative/squad.npz")
    p.add_argument("--sizes", type=int, nargs=2, default=SIZES, metavar=("POOL", "TEST"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sequential", action="store_true", help="one model at a time")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    path = score_squad(args.squad, args.out, seed=args.seed, sizes=tuple(args.sizes),
                       progress=not args.no_progress, parallel=not args.sequential)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
