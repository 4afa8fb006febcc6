"""lm-evaluation-harness in a session: the drawn items as lm-eval's ``--samples`` file
(:func:`emit_lmeval`) and each drawn item's result read back as its label
(:func:`import_lmeval`: all or nothing, joined by task, ``doc_id`` and the document's
content). The loop and the join rules: :mod:`activetest.session.harness`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activetest.session.harness_base import HARNESS_SOURCE, harness_config
from activetest.session.store import SessionError

__all__ = ["HarnessImport", "emit_lmeval", "import_lmeval"]


def _require(session: Any) -> Mapping[str, Any]:
    h = harness_config(session)
    if h is None or h.get("tool") != "lm-eval":
        raise SessionError(f"{session.path}: not an lm-eval session (create one with "
                           f"`activetest init ... --task answers --target lm-eval`)")
    return h


def emit_lmeval(session: Any, acquisitions: Sequence[Any], out: str | os.PathLike[str]
                ) -> dict[str, list[int]]:
    """Write lm-eval's ``--samples`` file for these draws; returns the mapping written."""
    from activetest.formats.lmeval_results import samples_json, write_samples_json
    from activetest.session.labels import refuse_session_file

    _require(session)
    refuse_session_file(out, session.store.path)
    answers = session.store.answers("target")
    pairs = [(answers[a.index][2]["lm_eval_task"], int(answers[a.index][2]["doc_id"]))
             for a in acquisitions]
    mapping = samples_json(pairs)
    write_samples_json(out, mapping)
    return mapping


@dataclass(frozen=True)
class HarnessImport:
    """What an import of lm-eval results did.

    Attributes:
        added: new labels (target runs) stored.
        unchanged: results already stored with the same value.
        metric: the metric read as the label, and where its choice came from.
        files: the files read.
        cut: ``"<file>: line <n>"`` of each unfinished last record skipped (a run killed
            while writing its file; its item stays pending).
        filter: the lm-eval filter the session reads (None: the files hold one).
        other_filters: (filter, records) of each other filter whose records were
            skipped (not this session's results).
        history_note: where the session's history holds the target's own run, what to
            say (:func:`activetest.session.harness_history.target_in_history`), else None.
    """

    added: int
    unchanged: int
    metric: str
    metric_from: str
    files: tuple[str, ...]
    cut: tuple[str, ...] = ()
    filter: str | None = None
    other_filters: tuple[tuple[str, int], ...] = ()
    history_note: str | None = None


def _one_target_model(files: set[str]
                      ) -> tuple[str | None, dict[str, str] | None, str | None]:
    """The model the results files are of (lm-eval's ``results_*.json`` beside each), or
    None where none says, which of its weights ran
    (:func:`activetest.formats.history.lmeval_model_variant`: ``gguf_file``, ``revision``,
    ...; None where no file says), and the name as the results write it (a local path
    too, never stored: :meth:`~activetest.session.workflow.Session.record_target_model`
    keeps its digests). Refused: files of two models (two local paths of one last name
    that are not one folder, :func:`activetest.formats.model_ids.distinct_names`, are two),
    or of one named model with other weights (one import, one target); another model than
    the session's is refused where it is recorded
    (:meth:`~activetest.session.workflow.Session.record_target_model`)."""
    from activetest.formats.history import (
        lmeval_model_name,
        lmeval_model_variant,
        lmeval_stated_model,
        lmeval_variant_text,
    )
    from activetest.formats.model_ids import distinct_names

    names = {f: lmeval_model_name(f) for f in sorted(files)}
    stated = {f: lmeval_stated_model(f) for f in sorted(files) if names[f]}
    ids = distinct_names(stated.values())
    known = {n for n in names.values() if n}
    if len({ids.get(str(n), n) for n in stated.values()}) > 1:
        which = "; ".join(f"{Path(f).name}: {n}" for f, n in stated.items())
        raise SessionError(f"these results are of {len(set(ids.values()))} models ({which}); "
                           f"a session estimates one target: import one model's results")
    variants = {f: v for f in sorted(files)
                if names[f] and (v := lmeval_model_variant(f)) is not None}
    shown = {json.dumps(v, sort_keys=True) for v in variants.values()}
    if len(shown) > 1:
        which = "; ".join(f"{Path(f).name}: {lmeval_variant_text(v)}"
                          for f, v in variants.items())
        raise SessionError(f"these results are of {next(iter(known))} with other weights "
                           f"({which}); a session estimates one target: import one model's "
                           f"results")
    return (next(iter(known), None), next(iter(variants.values()), None),
            next(iter(stated.values()), None))



def _full_run_hint(records: Sequence[Any], index: Mapping[str, int],
                   drawn: Container[int]) -> str:
    """What to add to the refusal of a result for an item not drawn where the files hold
    more results not drawn than drawn: lm-eval was run without ``--samples`` (every
    document of the task), so nothing was imported and the run's own mean is the error
    rate over the documents it ran (QA: a round run without --samples was refused naming
    one item, as if one record had strayed in)."""
    rows = [index.get(r.key) for r in records]
    not_drawn = sum(1 for row in rows if row is not None and row not in drawn)
    if not_drawn <= len(rows) - not_drawn:
        return ""
    return (f". These files hold {len(rows)} result(s), {not_drawn} of them for items not "
            f"drawn: lm-eval ran without --samples (it then runs every document of the "
            f"task); nothing was imported. Such a run of the target on the whole pool needs "
            f"no estimate: 1 - its mean metric is the error rate over the documents it ran")


def import_lmeval(session: Any, paths: Sequence[str | os.PathLike[str]], *,
                  metric_key: str | None = None, overwrite: bool = False) -> HarnessImport:
    """Read lm-eval results of drawn items as their labels (all or nothing).

    Refused (:class:`SessionError`, nothing stored) when a record names no item of the
    pool or an item not drawn, when its document differs from the item's, when it
    lacks the metric or the metric is not 0/1, when the same item gets two values, when
    the metric is not the one the session's earlier results were read with (one
    estimate cannot mix two metrics), or when a result differs from the stored one
    without ``overwrite`` (a re-run that came out otherwise: the new one replaces it,
    the old kept in the label history).

    A result already stored with the same value is counted as ``unchanged``: importing
    a partial file, then the whole file, counts each run once.
    """
    from activetest.formats.history import lmeval_local_row_name, lmeval_stated_model
    from activetest.formats.lmeval_results import doc_snippet, read_results
    from activetest.session.harness_history import rows_of_local_model

    h = _require(session)
    metric = metric_key or str(h["metric"])
    metric_from = "--metric-key" if metric_key else f"the session's metric ({h['metric_from']})"
    cut: list[str] = []
    try:
        records = read_results([os.fspath(p) for p in paths], cut=cut)
    except ValueError as exc:
        raise SessionError(str(exc)) from None
    flt = h.get("filter")
    filters = sorted({r.filter for r in records})
    if flt is None and len(filters) > 1:
        raise SessionError(f"the results hold several lm-eval filters {filters}; the session "
                           f"reads one: create it with --target 'lm-eval?filter=NAME'")
    other_filters: tuple[tuple[str, int], ...] = ()
    if flt is not None:
        records, other_filters = _of_filter(records, str(flt))
    answers = session.store.answers("target")
    index = {f"{info['lm_eval_task']}/{info['doc_id']}": row
             for row, (_, _, info) in answers.items()}
    items = session.items()
    drawn = {a.index for a in session.acquisitions()}
    judgment = session.task.judgment
    values: dict[int, tuple[int, Any]] = {}
    for r in records:
        row = index.get(r.key)
        if row is None:
            tasks = list(h.get("tasks", []))
            hint = ("" if r.task in tasks else "; the task is read from the file's name, "
                    "lm-eval's samples_<task>_<date>.jsonl: a renamed file names another task")
            raise SessionError(f"{r.where}: task {r.task!r} document {r.doc_id} is not in the "
                               f"session's pool (its tasks: {', '.join(tasks)}){hint}")
        item_id = items[row].id
        if row not in drawn:
            raise SessionError(f"{r.where}: item {item_id!r} was not drawn: only drawn items' "
                               f"results are labels (run lm-eval with the --samples file that "
                               f"`activetest select --emit lm-eval` wrote)"
                               + _full_run_hint(records, index, drawn))
        want = answers[row][2].get("doc")
        if not r.fingerprint or r.fingerprint != want:
            # the prompt ends with the item itself, after its in-context examples (lm-eval
            # joins them with a blank line; QA: the message quoted the first example)
            last = str(items[row].fields.get("input", "")).strip().split("\n\n")[-1]
            pool_doc = doc_snippet({"input": last})
            text = doc_snippet(r.doc, 2000) if r.doc is not None else ""
            same = bool(text.strip()) and _fold(text) in _fold(last)
            # QA: a relabelled item (or a task of the same sentences under other field
            # names) showed the same text on both sides, as if nothing differed
            also = (f"; its text is the item's, so the documents differ elsewhere (the "
                    f"record's doc: {_json_excerpt(r.doc)}): another revision of the dataset "
                    f"(a changed answer key), or another task's document of the same text"
                    if same else "")
            raise SessionError(
                f"{r.where}: item {item_id!r} is not this record's document: the session's "
                f"item shows {pool_doc!r}, the record's doc is "
                f"{doc_snippet(r.doc) if r.doc is not None else 'missing'!r}{also} (a doc_id "
                f"is a position: the dataset or its order differs from the pool run's)")
        key = {k: answers[row][2].get(k) for k in ("gold", "n_choices")}
        theirs = {"gold": r.gold, "n_choices": None if r.choice_loglikelihoods is None
                  else len(r.choice_loglikelihoods)}
        for k, v in key.items():
            if v is not None and theirs[k] is not None and int(v) != int(theirs[k]):
                what = "answer key (gold choice)" if k == "gold" else "number of choices"
                raise SessionError(
                    f"{r.where}: item {item_id!r}: the record's {what} is {theirs[k]}, the "
                    f"pool run's {v}: a result of another task or prompt (a file renamed "
                    f"from another task's?), not this item's")
        if metric in r.unread:  # present, but not a number (QA: said to be missing)
            raise SessionError(f"{r.where}: item {item_id!r}: {metric} = {r.unread[metric]}, "
                               f"not a number; a label is 0 or 1 (a per-item metric such as "
                               f"acc or exact_match): import the file lm-eval wrote")
        if metric not in r.metrics:
            raise SessionError(f"{r.where}: item {item_id!r} has no metric {metric!r} (it has "
                               f"{', '.join(r.metrics) or 'none'}); choose one with "
                               f"--metric-key")
        v = r.metrics[metric]
        if v not in judgment.scores:
            raise SessionError(f"{r.where}: item {item_id!r}: {metric} = {v:g}; a label is "
                               f"0 or 1 (a per-item metric such as acc or exact_match)")
        if metric == "acc" and r.choice_loglikelihoods and r.gold is not None \
                and 0 <= r.gold < len(r.choice_loglikelihoods):
            # lm-eval's acc is whether the choice of largest loglikelihood is the gold one:
            # a record whose acc says otherwise was edited or mixed up (QA)
            picked = max(range(len(r.choice_loglikelihoods)),
                         key=lambda j: r.choice_loglikelihoods[j])
            if (picked == r.gold) != (v == 1.0):
                raise SessionError(
                    f"{r.where}: item {item_id!r}: acc = {v:g}, but the record's own "
                    f"log-likelihoods pick choice {picked} and the gold choice is {r.gold}; "
                    f"the record was edited or mixed up: import the file lm-eval wrote")
        level = judgment.scores.index(v)
        if row in values and values[row][0] != level:
            raise SessionError(f"{r.where}: item {item_id!r} has {metric} = {v:g} here and "
                               f"another value at {values[row][1].where}")
        values[row] = (level, r)
    used = sorted({str(answers[row][2]["metric"]) for row in drawn
                   if row in answers and "metric" in answers[row][2]} - {metric})
    if used:
        raise SessionError(f"this session's results so far were read as {', '.join(used)}; "
                           f"these would be read as {metric} ({metric_from}): one estimate "
                           f"cannot mix two metrics. Import them with --metric-key "
                           f"{used[0]}, or create another session for {metric}")
    model, variant, stated_model = _one_target_model(
        {r.where.rsplit(": ", 1)[0] for r in records})
    stored = session.labels()
    new = [(row, lv, r) for row, (lv, r) in values.items() if stored.get(items[row].id) != lv]
    with session.store.transaction():
        by_file: dict[str, list[tuple[str, int, str]]] = {}
        for row, lv, r in new:  # each label names the file its result came from; a
            # refusal names the file as given, with its line (QA: by its name only, the
            # same as the stored label's when a re-run's file of that name was imported)
            by_file.setdefault(r.where.rsplit(": ", 1)[0], []).append(
                (items[row].id, lv, r.where))
        for path, triples in by_file.items():
            session.add_labels(triples, source=f"{HARNESS_SOURCE}{Path(path).name}",
                               where=path, overwrite=overwrite)
        if new:
            rows = [row for row, _, _ in new]
            session.store.put_answers(
                "target", rows, [r.response for _, _, r in new], [()] * len(rows),
                [{**answers[row][2], "source": Path(r.where.rsplit(": ", 1)[0]).name,
                  "metric": metric, "value": r.metrics[metric]} for row, _, r in new])
        shots = {r.task: r.n_shot for r in records if r.n_shot is not None}
        prompts = {r.task: dict(r.prompt_config) for r in records
                   if r.prompt_config is not None}
        ran = {r.where.rsplit(": ", 1)[0] for r in records}
        local = sorted({n for f in ran if (n := lmeval_local_row_name(f)) is not None}
                       | set(rows_of_local_model(session, [lmeval_stated_model(f)
                                                           for f in sorted(ran)])))
        if model is not None or shots or prompts:  # checked and kept last: a refusal
            # writes nothing
            session.record_target_model(model, "lm-eval", n_shot=shots, row_names=local,
                                        variant=variant, prompts=prompts,
                                        stated=stated_model)
    files = tuple(sorted({Path(r.where.rsplit(": ", 1)[0]).name for r in records}))
    from activetest.formats.model_ids import path_digests, variant_name
    from activetest.session.harness_history import lmeval_target_settings, target_in_history

    return HarnessImport(len(new), len(values) - len(new), metric, metric_from, files,
                         tuple(cut), None if flt is None else str(flt), other_filters,
                         target_in_history(session, None if model is None else
                                           variant_name(model, variant), local,
                                           path_digests(stated_model),
                                           settings=lmeval_target_settings(shots)))


def _fold(text: str) -> str:
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _json_excerpt(doc: Any, width: int = 160) -> str:
    text = json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def _of_filter(records: Sequence[Any], flt: str
               ) -> tuple[list[Any], tuple[tuple[str, int], ...]]:
    """The records of the session's filter, and (filter, count) of the others skipped.
    A file whose records are all of other filters is refused (QA: it imported nothing
    and exited 0, "5 drawn item(s) still wait for a run", without saying why).

    Raises:
        SessionError: naming the file, its filters and the session's.
    """
    from collections import Counter

    by_file: dict[str, Counter[str]] = {}
    for r in records:
        by_file.setdefault(r.where.rsplit(": ", 1)[0], Counter())[str(r.filter)] += 1
    for path, counts in by_file.items():
        if flt not in counts:
            theirs = ", ".join(f"{n} of filter {f!r}" for f, n in sorted(counts.items()))
            raise SessionError(f"{path}: its {sum(counts.values())} record(s) are of other "
                               f"lm-eval filters ({theirs}), none of the session's filter "
                               f"{flt!r} (--target 'lm-eval?filter={flt}'); nothing was "
                               f"imported: import the results of a run with that filter, or "
                               f"read these in a session made for their filter")
    other: Counter[str] = Counter()
    for counts in by_file.values():
        other.update({f: n for f, n in counts.items() if f != flt})
    return [r for r in records if r.filter == flt], tuple(sorted(other.items()))
