"""Score a pool on a Ray cluster and write the ``table:`` Parquet file a session reads.

::

    python -m activetest.models.ray_score --pool pool.csv --task sst2 \\
        --model smollm2-135m --out preds.parquet --shards 8
    activetest init s.db --pool pool.csv --task sst2 \\
        --surrogate table:preds.parquet --target ...

The pool is cut into ``shards`` contiguous shards; each is one Ray task that builds
the scorer from its spec (the bundled model on the worker's CPU, a GGUF path, or an
``openai:`` server URL, see :mod:`activetest.models.registry`) and scores its items
with the session's prompt (task, in-context examples). Ray runs the tasks wherever
the cluster has CPUs (``--address auto`` joins a running cluster; without it a local
one is started) and retries a task whose worker process died (``max_retries``, Ray's
own task retries): a retried shard is scored again whole and its first, unfinished
attempt returns nothing, so no item is lost or counted twice. Before anything is
written the driver checks that the shards' ids are the pool's ids, each once, in
pool order; the file is written atomically (a temporary file, then a rename).

The file has one row per item: ``id``, ``content_check`` (the fingerprint of the
item's fields, :func:`~activetest.formats.label_records.content_check`, so the rows
can be checked against the items a session has under the same ids) and one column of
class log-probs per label word, in class order (the ``table:`` defaults). The
Parquet metadata key ``activetest`` holds the provenance: model spec, task, shots,
example ids, shards, for ``openai:`` models the scoring path
(:mod:`activetest.models.openai_paths`), and how the classes were read from their label
words (``label_scoring``, :class:`~activetest.models.labels.LabelScoring`); where a label
word of several tokens was scored by its first token, the driver says so once
(:class:`~activetest.models.labels.MultiTokenLabelNotice`; the workers' own notices are
not shown). ``--label-scoring full-sequence`` (``label_scoring=``) scores each class by
its whole label word instead, as ``activetest init --label-scoring`` does (llama.cpp and
transformers models; refused for ``openai:`` before Ray starts).

Needs ``ray`` (``pip install 'activetest[ray]'``) and ``pyarrow``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.errors import UserFacingError
from activetest.models.labels import LabelScoring, MultiTokenLabelNotice, multi_token_notice

__all__ = ["RayScoreError", "RayScoreResult", "ShardResult", "check_arguments", "main",
           "prompt_examples", "score_with_ray"]


class RayScoreError(UserFacingError, RuntimeError):
    """Ray scoring could not run, or its shards did not add up to the pool."""


@dataclass(frozen=True)
class ShardResult:
    """One shard as a Ray task returns it.

    Attributes:
        shard: the shard's number.
        ids: its item ids, in pool order.
        logprobs: ``(len(ids), C)`` class log-probs.
        host, pid: where it was scored (the attempt that finished).
        scoring_path: an ``openai:`` model's scoring path record (JSON-ready), else None.
        label_scoring: how the shard's scorer read the classes from their label words
            (first token or whole word, each word's token count), where it says.
    """

    shard: int
    ids: tuple[str, ...]
    logprobs: np.ndarray
    host: str
    pid: int
    scoring_path: dict[str, Any] | None
    label_scoring: LabelScoring | None = None


@dataclass(frozen=True)
class RayScoreResult:
    """What :func:`score_with_ray` wrote.

    Attributes:
        path: the Parquet file.
        n_items, n_shards: how many items and shards.
        seconds: wall-clock time of the scoring (Ray start excluded).
        workers: ``host:pid`` of each shard's finishing attempt, in shard order.
    """

    path: Path
    n_items: int
    n_shards: int
    seconds: float
    workers: tuple[str, ...]


#: What the :class:`~activetest.models.labels.MultiTokenLabelNotice` of a Ray run of a
#: llama.cpp or transformers model advises (the workers build it from its spec).
RAY_REMEDY = ("score whole words with --label-scoring full-sequence (activetest score; in "
              "Python, score_with_ray(..., label_scoring='full-sequence')); label words of "
              "one token each (a task file's classes) avoid the question")


def _remedy(model: str) -> str:
    """What the driver's notice advises for ``model`` (an ``openai:`` server cannot score
    whole words: its own advice)."""
    from activetest.models.registry import FULL_SEQUENCE_BACKENDS, parse_spec

    try:
        backend, _ = parse_spec(model)
    except (ValueError, OSError):
        return RAY_REMEDY
    if backend in FULL_SEQUENCE_BACKENDS:
        return RAY_REMEDY
    from activetest.models.openai import OpenAIScorer

    return str(OpenAIScorer.multi_token_remedy)


def _score_shard(shard: int, model: str, task: Task, items: Sequence[Item],
                 examples: Sequence[Item], threads: int | None,
                 label_scoring: str = "first-token") -> ShardResult:
    """Run on a Ray worker: build the scorer and score one shard."""
    from activetest.models.registry import get_scorer, label_scoring_options, parse_spec

    backend, _ = parse_spec(model)
    options = {"n_threads": threads} if threads and backend == "llamacpp" else {}
    scorer = get_scorer(model, **options, **label_scoring_options(model, label_scoring))
    try:
        lp = np.asarray(scorer.score(task, list(items), list(examples), progress=False),
                        dtype=np.float64)
    finally:
        close = getattr(scorer, "close", None)
        if callable(close):
            close()
    path_of = getattr(scorer, "scoring_path", None)
    recorded = path_of() if callable(path_of) else None
    how = getattr(scorer, "label_scoring", None)
    return ShardResult(shard, tuple(it.id for it in items), lp, socket.gethostname(),
                       os.getpid(), recorded.as_provenance() if recorded else None,
                       how(task) if callable(how) else None)


def _shards(n: int, k: int) -> list[tuple[int, int]]:
    """``k`` contiguous ``(start, stop)`` ranges covering ``range(n)``, sizes within one."""
    bounds = np.linspace(0, n, k + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in itertools.pairwise(bounds) if b > a]


def _check_complete(items: Sequence[Item], results: Sequence[ShardResult],
                    n_classes: int) -> np.ndarray:
    """The pool's ``(N, C)`` log-probs; refuses a lost, repeated or misplaced item."""
    got = [i for r in sorted(results, key=lambda r: r.shard) for i in r.ids]
    want = [it.id for it in items]
    if got != want:
        seen: set[str] = set()
        twice = [i for i in got if i in seen or seen.add(i)]  # type: ignore[func-returns-value]
        lost = sorted(set(want) - set(got))
        raise RayScoreError(f"the shards returned {len(got)} ids for a pool of {len(want)}: "
                            f"{len(lost)} lost {lost[:5]}, {len(twice)} repeated {twice[:5]}; "
                            f"nothing was written")
    lp = np.concatenate([r.logprobs for r in sorted(results, key=lambda r: r.shard)])
    if lp.shape != (len(items), n_classes) or not np.isfinite(lp).all():
        raise RayScoreError(f"the shards returned scores of shape {lp.shape} (finite: "
                            f"{bool(np.isfinite(lp).all())}) for {len(items)} items and "
                            f"{n_classes} classes; nothing was written")
    return lp


def _write_parquet(path: Path, items: Sequence[Item], task: Task, lp: np.ndarray,
                   meta: dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from activetest.formats.label_records import content_check

    columns: dict[str, Any] = {"id": pa.array([it.id for it in items], pa.string()),
                               "content_check": pa.array([content_check(it.fields)
                                                          for it in items], pa.string())}
    for c, word in enumerate(task.classes):
        if word in columns:
            raise RayScoreError(f"label word {word!r} is also the name of the table's "
                                f"{word!r} column")
        columns[word] = pa.array(lp[:, c], pa.float64())
    table = pa.table(columns).replace_schema_metadata(
        {"activetest": json.dumps(meta, sort_keys=True)})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_arguments(out: str | Path, *, shards: int | None = None, max_retries: int = 3,
                    inputs: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Refuse, before Ray starts, an ``out`` that is not a ``.parquet`` file or is one of
    the files read (``inputs``: the pool, the examples; by name, a link or another name
    of the same file), ``shards`` below 1 and ``max_retries`` below 0.

    Raises:
        RayScoreError: one of these, naming it (nothing is written).
    """
    if not str(out).strip():  # Path("") is the current folder: "--out ." said (QA)
        raise RayScoreError("--out is empty: name a file ending .parquet (nothing was "
                            "written)")
    path = Path(out)
    for src in inputs:
        if src is None:
            continue
        same = os.path.realpath(path) == os.path.realpath(src)
        if not same and path.exists() and Path(src).exists():
            try:
                same = os.path.samefile(path, src)
            except OSError:
                same = False
        if same:
            raise RayScoreError(f"--out {path} is the file read ({src}); name another "
                                f"file, ending .parquet (nothing was written)")
    if path.suffix.lower() != ".parquet":
        raise RayScoreError(f"--out {path}: the table is written as Parquet; name a file "
                            f"ending .parquet (nothing was written)")
    if path.is_dir():
        raise RayScoreError(f"--out {path} is a folder; name a file ending .parquet")
    if shards is not None and shards < 1:
        raise RayScoreError(f"--shards must be >= 1, got {shards}")
    if max_retries < 0:
        raise RayScoreError(f"--max-retries must be >= 0, got {max_retries}")


def score_with_ray(items: Sequence[Item], task: Task, model: str, out: str | Path, *,
                   examples: Sequence[Item] = (), shards: int | None = None,
                   max_retries: int = 3, num_cpus: float = 1.0, threads: int | None = 1,
                   address: str | None = None,
                   label_scoring: str = "first-token") -> RayScoreResult:
    """Score ``items`` with ``model`` on a Ray cluster; write the ``table:`` Parquet ``out``.

    Args:
        items: the pool (ids unique).
        task: the task (prompt and label words).
        model: a model spec as a session takes it (``smollm2-135m``, a GGUF path,
            ``openai:http://host:8000/v1#name``); built on each worker.
        out: the Parquet file to write (replaced atomically; its name ends ``.parquet``).
        examples: the in-context examples, in order.
        shards: how many Ray tasks (default: twice the cluster's CPUs, at most N).
        max_retries: Ray retries of a shard whose worker died.
        num_cpus: CPUs Ray reserves per shard.
        threads: llama.cpp threads per shard (local models).
        address: a Ray cluster to join (``"auto"``); default: the running one, else a
            new local one.
        label_scoring: how each class is read from its label word: ``first-token`` (the
            paper's choice) or ``full-sequence`` (the whole word; llama.cpp and
            transformers models; refused for ``openai:``), as ``activetest init
            --label-scoring`` does; recorded in the table's metadata (``label_scoring``).

    Raises:
        RayScoreError: ``out`` does not end ``.parquet``, ``shards`` < 1 or
            ``max_retries`` < 0 (:func:`check_arguments`, before Ray starts), ray is not
            installed, a shard failed after its retries, or the shards do not add up to
            the pool (nothing is written then).
        ValueError: a ``label_scoring`` the model cannot score by (before Ray starts).
    """
    check_arguments(out, shards=shards, max_retries=max_retries)
    from activetest.models.registry import label_scoring_options

    label_scoring_options(model, label_scoring)  # refused before Ray starts
    try:
        import ray
    except ImportError as exc:
        raise RayScoreError(f"scoring on Ray needs ray ({exc}); pip install "
                            f"'activetest[ray]'") from None
    items = list(items)
    if not items:
        raise RayScoreError("the pool is empty")
    if len({it.id for it in items}) != len(items):
        raise RayScoreError("the pool's item ids are not unique")
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, include_dashboard=False)
    if shards is None:
        shards = 2 * int(ray.cluster_resources().get("CPU", 1))
    if shards < 1:
        raise RayScoreError(f"shards must be >= 1, got {shards}")
    remote = ray.remote(_score_shard).options(max_retries=max_retries, num_cpus=num_cpus,
                                              retry_exceptions=False)
    task_ref, ex_ref = ray.put(task), ray.put(list(examples))
    start = time.monotonic()
    refs = [remote.remote(k, model, task_ref, items[a:b], ex_ref, threads, label_scoring)
            for k, (a, b) in enumerate(_shards(len(items), shards))]
    try:
        results: list[ShardResult] = ray.get(refs)
    except ray.exceptions.RayError as exc:
        for ref in refs:
            ray.cancel(ref, force=True)
        raise RayScoreError(f"a shard failed after {max_retries} retries: "
                            f"{str(exc).strip().splitlines()[-1][:500]}") from None
    seconds = time.monotonic() - start
    lp = _check_complete(items, results, task.n_classes)
    paths = [r.scoring_path for r in results if r.scoring_path is not None]
    labels = next((r.label_scoring for r in results if r.label_scoring is not None), None)
    meta = {"model": model, "task": task.name, "classes": list(task.classes),
            "n_examples": len(examples), "example_ids": [e.id for e in examples],
            "shards": len(refs), "engine": "ray", "scoring_path": paths[0] if paths else None,
            "label_scoring": labels.as_provenance() if labels is not None else None}
    if labels is not None and labels.on_prefix:  # the workers' own notices stay on them
        warnings.warn(multi_token_notice(labels, model=repr(model), task=task.name,
                                         remedy=_remedy(model)), MultiTokenLabelNotice,
                      stacklevel=2)
    out = Path(out)
    _write_parquet(out, items, task, lp, meta)
    return RayScoreResult(out, len(items), len(refs), seconds,
                          tuple(f"{r.host}:{r.pid}" for r in sorted(results,
                                                                    key=lambda r: r.shard)))


def prompt_examples(path: str | Path, task: Task, shots: int, seed: int | None
                    ) -> list[Item]:
    """The in-context examples of the prompt: the file's first ``shots``, or with a
    ``seed`` the ones (and their order) ``activetest init --examples FILE --shots K
    --seed S`` draws (:func:`activetest.data.split.select_examples` over the labelled
    examples, the generator seeded with the session's seed)."""
    from activetest.data.pool import load_pool
    from activetest.data.split import select_examples

    candidates = list(load_pool(path, task=task))
    if seed is None:
        return candidates[:shots]
    return list(select_examples([e for e in candidates if e.label is not None], shots,
                                np.random.default_rng(seed), n_classes=task.n_classes))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m activetest.models.ray_score``: see the module docstring."""
    ap = argparse.ArgumentParser(prog="python -m activetest.models.ray_score",
                                 description="Score a pool on a Ray cluster; write the "
                                             "table: Parquet file a session reads.")
    ap.add_argument("--pool", required=True, help="pool file (as for activetest init)")
    ap.add_argument("--task", required=True, help="built-in task name or task file")
    ap.add_argument("--model", required=True, help="model spec (bundled name, GGUF, openai:)")
    ap.add_argument("--out", required=True,
                    help="Parquet file to write (ending .parquet; not the pool)")
    ap.add_argument("--examples", help="file of in-context examples")
    ap.add_argument("--shots", type=int, default=0, help="in-context examples (default 0)")
    ap.add_argument("--seed", type=int,
                    help="the session's seed: the --shots examples, in the order, that "
                         "`activetest init --examples FILE --shots K --seed S` draws "
                         "(stratified by class); without it the file's first --shots")
    ap.add_argument("--id-column", help="the pool's id column")
    ap.add_argument("--text-column", help="the pool's text column")
    ap.add_argument("--shards", type=int, help="Ray tasks (default: 2 x the cluster's CPUs)")
    ap.add_argument("--max-retries", type=int, default=3, help="retries of a dead shard")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads per shard")
    ap.add_argument("--address", help="Ray cluster to join, e.g. auto (default: local)")
    ap.add_argument("--label-scoring", choices=("first-token", "full-sequence"),
                    default="first-token",
                    help="how each class is read from its label word: first-token (the "
                         "paper's choice) or full-sequence (the summed log-prob of the "
                         "whole word; llama.cpp and transformers models, not openai:)")
    args = ap.parse_args(argv)
    from activetest.data.pool import load_pool
    from activetest.data.taskfile import load_task

    try:
        check_arguments(args.out, shards=args.shards, max_retries=args.max_retries,
                        inputs=(args.pool, args.examples))
        from activetest.models.registry import label_scoring_options

        label_scoring_options(args.model, args.label_scoring)  # before the pool is read
        task = load_task(args.task)
        pool = load_pool(args.pool, task=task, id_column=args.id_column,
                         text_column=args.text_column)
        examples: list[Item] = []
        if args.shots:
            if not args.examples:
                raise RayScoreError("--shots needs --examples FILE")
            examples = prompt_examples(args.examples, task, args.shots, args.seed)
        res = score_with_ray(pool, task, args.model, args.out, examples=examples,
                             shards=args.shards, max_retries=args.max_retries,
                             threads=args.threads, address=args.address,
                             label_scoring=args.label_scoring)
    except (UserFacingError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {res.path}: {res.n_items} items in {res.n_shards} shards, "
          f"{res.seconds:.1f} s on Ray (use it as table:{res.path})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
