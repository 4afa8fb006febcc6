"""lm-evaluation-harness as the place where the target runs: ``--samples`` out, results in.

``lm_eval ... --samples samples.json --log_samples`` (lm-eval >= 0.4.13) runs a task
on the listed documents only: ``samples.json`` maps each task to the indices of its
documents in the task's evaluation split, ``{"task": [3, 17, 40]}``. Two facts of
lm-eval 0.4.13's evaluator (``lm_eval/evaluator.py``, ``api/task.py``) shape what is
written here:

* the documents run in split order, and the ``doc_id`` logged for the k-th of them is
  ``samples[task][k]``: an unsorted list would log wrong ``doc_id`` s, so every list
  is written sorted and without repeats (:func:`samples_json`);
* a task named in ``--tasks`` but absent from the mapping (or with an empty list)
  runs in full: run exactly the tasks the file names (:func:`tasks_argument`; for
  an MMLU-style group, its subtasks that have draws, not the group).

Results come back as ``samples_<task>_<date>.jsonl`` files (``--log_samples``), one
record per document and filter: ``doc_id``, ``doc`` (the dataset row), the per-item
metrics (``acc``, ``exact_match``, ...) named in ``metrics``. :func:`read_results`
reads each record's metric value and its document; the session joins a record to a
drawn item by ``(task, doc_id)`` and accepts it only where the document is the one
the item was built from (:func:`doc_fingerprint`: a position joins nothing until
the content confirms it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from activetest.formats.lmeval import (
    _parse_record,
    _records,
    _results_nshot,
    _results_prompt,
    lmeval_files,
    task_of_file,
)

__all__ = ["HarnessRecord", "doc_fingerprint", "doc_snippet", "read_results", "samples_json",
           "tasks_argument", "write_samples_json"]

#: Record keys that are not per-item metrics.
_NOT_METRICS = frozenset({"doc_id", "doc", "target", "arguments", "resps", "filtered_resps",
                          "filter", "metrics", "doc_hash", "prompt_hash", "target_hash"})


def doc_fingerprint(doc: Any) -> str:
    """A hash of a document's content (canonical JSON: sorted keys), for the join check."""
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def _strings(value: Any, out: list[str], depth: int = 0) -> None:
    if depth > 20:
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            _strings(v, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out, depth + 1)


def doc_snippet(doc: Any, width: int = 70) -> str:
    """A short readable view of a document (its longest text), for messages."""
    texts: list[str] = []
    _strings(doc, texts)
    texts.sort(key=len, reverse=True)
    text = " ".join((texts[0] if texts else json.dumps(doc, default=str)).split())
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class HarnessRecord:
    """One document's result in an lm-eval samples file.

    Attributes:
        task: the task (from the file name).
        doc_id: the document's index in the task's evaluation split.
        doc: the document as logged (None if the record has none).
        fingerprint: :func:`doc_fingerprint` of ``doc`` ("" without one).
        filter: the lm-eval filter of this record (``"none"`` if unnamed).
        metrics: metric name -> per-item value, in the record's order.
        choice_loglikelihoods: a multiple-choice record's loglikelihood per choice
            (None for other tasks or unreadable ones).
        gold: the gold choice's index for a multiple-choice record (-1: none; None:
            not multiple choice).
        response: the model's response as logged (its choice, or generated text).
        prompt: the first request's context (what the model was shown).
        where: ``"<file>: line <n>"``.
        unread: metric name -> its value as written, for metrics whose value is not a
            finite number (``"acc": "yes"``; not in ``metrics``).
        n_shot: the in-context examples of the run (lm-eval's ``n-shot`` for the task in
            the ``results_<date>.json`` beside the samples file); None where none says.
        prompt_config: a digest of each prompt key of the task's config in that results
            file (:func:`activetest.formats.lmeval._results_prompt`); None where none says.
    """

    task: str
    doc_id: int
    doc: Any
    fingerprint: str
    filter: str
    metrics: Mapping[str, float]
    choice_loglikelihoods: tuple[float, ...] | None
    gold: int | None
    response: str
    prompt: str
    where: str
    unread: Mapping[str, str] = field(default_factory=dict)
    n_shot: int | None = None
    prompt_config: Mapping[str, str] | None = None

    @property
    def key(self) -> str:
        """``<task>/<doc_id>``: the item id of a harness session."""
        return f"{self.task}/{self.doc_id}"


def _metric_values(rec: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, str]]:
    """The record's per-item metrics that are finite numbers, and those that are not (name
    -> the value as written, shown where one is asked for: QA, ``"acc": "yes"`` was said
    to be no metric at all, ``it has none``)."""
    names = rec.get("metrics")
    names = list(names) if isinstance(names, list) else [k for k in rec if k not in _NOT_METRICS]
    out: dict[str, float] = {}
    unread: dict[str, str] = {}
    for name in names:
        v = rec.get(name)
        if isinstance(v, bool):
            v = float(v)
        if isinstance(v, str):
            with contextlib.suppress(ValueError):
                v = float(v)
        if isinstance(v, (int, float)) and math.isfinite(float(v)):
            out[str(name)] = float(v)
        elif name in rec:
            unread[str(name)] = json.dumps(rec.get(name), default=str)[:40]
    return out, unread


def _prompt(rec: Mapping[str, Any]) -> str:
    args = rec.get("arguments")
    first: Any = None
    if isinstance(args, Mapping) and args:
        first = next(iter(args.values()))
        first = first.get("arg_0") if isinstance(first, Mapping) else None
    elif isinstance(args, list) and args and isinstance(args[0], (list, tuple)) and args[0]:
        first = args[0][0]
    return first if isinstance(first, str) else ""


def _response(rec: Mapping[str, Any], lls: Sequence[float] | None,
              conts: Sequence[str] | None) -> str:
    if lls is not None:
        best = max(range(len(lls)), key=lambda j: lls[j])
        return conts[best] if conts else f"choice {best}"
    fr = rec.get("filtered_resps")
    while isinstance(fr, list) and fr:
        fr = fr[0]
    return fr if isinstance(fr, str) else json.dumps(fr, default=str)[:200]


def _file_records(path: Path, cut: list[str] | None) -> Any:
    """``(where, record)`` of one file; with ``cut``, a JSON Lines file whose last line
    is an unfinished record (no final newline: a run killed while writing) yields the
    records before it and appends ``"<file>: line <n>"`` to ``cut``
    (:func:`activetest.formats._json.unfinished_last_line`)."""
    yield from _records(path, cut)


def read_results(paths: str | Path | Sequence[str | Path], *,
                 cut: list[str] | None = None) -> list[HarnessRecord]:
    """Every record of lm-eval samples file(s) (files, folders or globs), in file order.

    ``cut``: a list to collect the unfinished last records of files a killed run left
    (skipped, not an error); without it such a line is refused like any bad line.

    Raises:
        ValueError: an unreadable file or record (named by file and line), a record
            without an integer ``doc_id``, two files of one task.
    """
    specs = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for spec in specs:
        for f in lmeval_files(spec):
            if f not in files:
                files.append(f)
    seen_task: dict[str, Path] = {}
    out: list[HarnessRecord] = []
    for path in files:
        task = task_of_file(path)
        if task in seen_task:
            raise ValueError(f"{path}: holds task {task!r} like {seen_task[task]} (two runs of "
                             f"one task?); give one samples file per task (the run to read)")
        seen_task[task] = path
        n_shot = _results_nshot(path, task)
        prompt_config = _results_prompt(path, task)
        for where, rec in _file_records(path, cut):
            if not isinstance(rec, dict) or "doc_id" not in rec:
                raise ValueError(f"{where}: not an lm-eval sample record (no doc_id)")
            doc_id = rec["doc_id"]
            if isinstance(doc_id, str) and doc_id.strip().isdigit():
                doc_id = int(doc_id)
            if isinstance(doc_id, bool) or not isinstance(doc_id, int) or doc_id < 0:
                raise ValueError(f"{where}: doc_id {doc_id!r:.40} is not a document index")
            lls: list[float] | None = None
            conts: tuple[str, ...] | None = None
            gold: int | None = None
            try:
                _, parsed, conts, gold, _ = _parse_record(rec, where)
                lls = parsed
            except ValueError:
                lls, conts, gold = None, None, None
            doc = rec.get("doc")
            values, unread = _metric_values(rec)
            out.append(HarnessRecord(task, doc_id, doc, "" if doc is None else
                                     doc_fingerprint(doc), str(rec.get("filter", "none")),
                                     values, None if lls is None else tuple(lls),
                                     gold, _response(rec, lls, conts), _prompt(rec), where,
                                     unread, n_shot, prompt_config))
    return out


def samples_json(items: Sequence[tuple[str, int]]) -> dict[str, list[int]]:
    """``{task: sorted unique doc indices}`` of ``(task, doc_id)`` pairs (lm-eval's
    ``--samples`` mapping; sorted because lm-eval logs ``doc_id`` by list position)."""
    out: dict[str, set[int]] = {}
    for task, doc_id in items:
        out.setdefault(task, set()).add(int(doc_id))
    return {t: sorted(v) for t, v in sorted(out.items())}


def tasks_argument(mapping: Mapping[str, Sequence[int]]) -> str:
    """The ``--tasks`` value that runs exactly the mapping's tasks (comma-separated)."""
    return ",".join(t for t, ids in mapping.items() if ids)


def write_samples_json(path: str | Path, mapping: Mapping[str, Sequence[int]]) -> None:
    """Write the ``--samples`` file (by rename: a reader never sees half a file)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(json.dumps(dict(mapping)) + "\n", encoding="utf-8")
    tmp.replace(p)
