"""Sessions whose labels are the target's own results, run inside lm-evaluation-harness.

A benchmark item carries its answer key, so the expensive part of evaluating a model
on it is the model's run, not a person's label. Such a session never holds the
target's predictions on the pool: it draws items, lm-eval runs the target on the
drawn ones only (``--samples``), and each run's per-item result (the task's metric:
``acc``, ``exact_match``, ...) comes back as that item's label. The loop::

    activetest init eval.db --pool 'SURR/samples_*.jsonl' --task answers \\
        --target lm-eval --surrogate pool-run
    activetest select eval.db --n 20 --emit lm-eval --out samples.json
    lm_eval --model ... --tasks <printed> --samples samples.json --log_samples --output_path OUT
    activetest import eval.db OUT/*/samples_*.jsonl
    activetest status eval.db          # estimate, anytime interval, target runs spent

**The pool** is a previous lm-eval run's samples files over the whole task (a cheap
model's run: the bundled SmolLM2 through lm-eval's ``hf`` model, or any): every
record names its task (file name) and document index (``doc_id``), and carries the
document. Items are ``<task>/<doc_id>``; each keeps the task, the index and a
fingerprint of the document (:func:`activetest.formats.lmeval_results.doc_fingerprint`).
**Results join only where the content confirms them**: a record is accepted for a
drawn item when its task and ``doc_id`` name the item AND its document is the item's
document; otherwise the whole import is refused, naming the file, the item and both
documents (a ``doc_id`` is a position, and a shuffled or edited dataset moves it).

**The surrogate** ``pool-run`` is the pool run's model: for multiple-choice tasks its
probabilities over the choices with the answer key known (log-probability of the
key, of its top choice, its entropy, whether it was right), read by the graded
adaptive design (:func:`activetest.session.design.graded_adaptive_design`: a logistic
model of P(target wrong) refitted on the results as they arrive, prior P(wrong) = 1 -
its probability of the key); for other tasks its own metric value. ``uniform`` draws
uniformly. ``history`` (with ``--history``, other models' lm-eval runs on the same tasks:
:mod:`activetest.session.harness_history`) draws by the feature design on their results;
``pool-run`` with ``--history`` by the same design with the pool run's choice features
beside them (both). The estimate is the target's error rate (1 - metric), exactly unbiased
with adaptive LURE whatever the surrogate predicts.

**Labels** record their source: ``lm-eval:<file>`` for a target run, anything else
(``cli``, ``import:...``) for a person's judgment; :func:`runs_summary` counts the
target runs spent and projects how many a uniform sample would need for the same
anytime width.

**inspect_ai** (``--target inspect``, :func:`create_inspect_session`): the same kind of
session for :class:`activetest.inspect.ActiveStopping`, from a plain pool file (an id,
the samples' text fields, a surrogate column): no answers on the pool, the target
runs inside an inspect eval on the drawn samples only and each one's score comes back
as its label (source ``inspect:<eval_id>``, or ``inspect-log:<eval_id>`` read back from
a log).

**People do not judge answers that do not exist** (:func:`check_person_labelling`): a
drawn item of a harness session has no answer from the target until the harness has run
it, and then its result is already its label (lm-eval's import stores the response and
the label together; an inspect eval records the score, never the answer). So the places
where a person judges the target's answer (``label`` in the terminal, a sheet or Label
Studio file from ``export``, the browser of ``serve``) refuse such items, saying where
their labels come from, instead of showing a question with an empty answer. A person's
label given another way (``import`` of a hand-made sheet, the API) for an item the
target has not run (an lm-eval item without a result, an inspect item no eval scored) is
refused unless trusted (:func:`check_people_labels`: such an item would never be run).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.session.harness_base import (
    HARNESS_SOURCE,
    TARGET_RUN_SOURCES,
    harness_config,
    harness_tool,
    is_target_run,
)
from activetest.session.harness_lmeval import HarnessImport, emit_lmeval, import_lmeval
from activetest.session.harness_runs import (
    UNIFORM_RUNS_METHOD,
    RunsSummary,
    labels_from,
    runs_summary,
    uniform_runs_for_width,
)
from activetest.session.source_names import pool_source
from activetest.session.store import SessionError

__all__ = ["HARNESS_SOURCE", "TARGET_RUN_SOURCES", "UNIFORM_RUNS_METHOD", "HarnessImport",
           "RunsSummary", "check_people_labels", "check_person_labelling", "choice_features",
           "create_inspect_session", "create_lmeval_session", "emit_lmeval", "harness_config",
           "harness_tool", "import_lmeval", "is_inspect_target", "is_lmeval_target",
           "is_target_run", "labels_from", "lmeval_feature_names", "lmeval_features",
           "runs_summary", "unanswered_rows", "uniform_runs_for_width"]

#: ``--surrogate`` values of an lm-eval session (``history``: with ``--history``, the
#: other models' runs alone; ``pool-run`` with ``--history``: both).
SURROGATES = ("pool-run", "uniform", "history")
_TARGET_OPTIONS = ("metric", "filter")


def is_inspect_target(target: Any) -> bool:
    """Whether a target spec names inspect_ai evals on the drawn items (``inspect``)."""
    return target == "inspect"


def create_inspect_session(path: str | os.PathLike[str], *, pool: Any, task: Any,
                           target: str, surrogate: str = "uniform", **options: Any
                           ) -> tuple[Any, Any]:
    """Create a session whose target runs inside inspect_ai (module docstring).

    The pool is a table (CSV, TSV, JSONL, JSON, Parquet) with an ``id`` per sample (the
    inspect sample's id), the sample's text fields (the task's template fields; with
    ``--task answers`` every other column), and the surrogate's column
    (``--surrogate column:NAME``, P(correct); not a text field) or ``--surrogate
    uniform``. The task gives the judgment levels, whose scores are the scorer's values
    (``answers``: incorrect/correct = 0/1). No answers: a pool with a non-empty
    ``answer`` column is refused (that is ``--target pool``). The design, estimate and
    intervals are a graded session's; the config records ``target = "inspect"`` and
    ``extra.harness = {"tool": "inspect"}`` (``status`` counts the target runs).

    Returns:
        ``(store, GradedInputs)``, as :func:`create_lmeval_session`.
    """
    from dataclasses import replace

    from activetest.data.generative import GenTask, load_graded_pool
    from activetest.session.create import resolve_task
    from activetest.session.create_graded import create_graded_session

    if not is_inspect_target(target):
        raise SessionError(f"create_inspect_session: target {target!r} is not 'inspect'")
    unused = sorted(k for k in ("examples", "shots", "compare", "judge_examples",
                                "target_shots") if options.get(k))
    if unused:
        raise SessionError(f"option(s) {', '.join(unused)} do not apply to --target inspect "
                           f"(the target runs in the inspect eval with its own prompts)")
    t = resolve_task(task)
    if not isinstance(t, GenTask):
        raise SessionError("--target inspect needs a graded task (its judgment levels are "
                           "the scorer's values): --task answers, or a task file with "
                           "kind = \"graded\"")
    column = surrogate.partition(":")[2] if surrogate.startswith("column:") else None
    if surrogate not in ("uniform", "history") and column is None:
        raise SessionError(f"--target inspect: the surrogate is a pool column of P(correct) "
                           f"(--surrogate column:NAME), other models' results (--surrogate "
                           f"history with --history), or none (--surrogate uniform), not "
                           f"{surrogate!r}")
    history = options.get("history") or ()
    if history and surrogate == "uniform":
        raise SessionError("--surrogate uniform draws uniformly and learns nothing from "
                           "--history: use --surrogate history (the other models' results "
                           "alone) or --surrogate column:NAME (both: the column beside the "
                           "history's features)")
    pool_options = dict(options.pop("pool_options", None) or {})
    if isinstance(pool, (list, tuple)):
        raise SessionError("--target inspect: the pool is one table file")
    try:
        loaded = load_graded_pool(pool, t, **pool_options)
    except (OSError, ValueError) as exc:
        raise SessionError(f"--pool: {exc}") from None
    items = []
    for g in loaded:
        if g.answer not in (None, ""):
            raise SessionError(f"--target inspect: item {g.item.id!r} has an answer in the "
                               f"pool file; the target's answers come from the inspect eval "
                               f"(drop the 'answer' column, or use --target pool to judge "
                               f"these answers)")
        fields, extra = dict(g.item.fields), dict(g.extra)
        if column is not None and column in fields:  # the surrogate is not a text field
            extra[column] = fields.pop(column)
        items.append(replace(g, item=replace(g.item, fields=fields), references=(),
                             answer="", extra=extra))
    if history:  # the history design; with a column, the column beside it (both)
        from activetest.session.create_graded import column_probabilities
        from activetest.session.create_history import PoolSignal

        if column is not None:
            p = np.clip(column_probabilities(items, column), 0.01, 0.99)
            options["pool_signal"] = PoolSignal(np.log(p / (1.0 - p))[:, None],
                                                (f"pool column {column} (log-odds)",),
                                                f"pool column {column}", column)
        surrogate = "history"
        options["target_label"] = "inspect"
    store, inputs = create_graded_session(path, pool=items, task=task, target="pool",
                                          surrogate=surrogate, **options)
    try:
        # unknown keys of the document are the config's ``extra`` (kept as written)
        store.update_config({"target": target, "harness": {"tool": "inspect"},
                             "pool": {**pool_source(pool), "n_items": len(items)}})
    except BaseException:
        store.close()
        Path(path).unlink(missing_ok=True)
        raise
    return store, inputs


def is_lmeval_target(target: Any) -> bool:
    """Whether a target spec names lm-eval runs on the drawn items (``lm-eval[?...]``)."""
    return isinstance(target, str) and (target == "lm-eval" or target.startswith("lm-eval?"))


def _target_options(spec: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, spec.partition("?")[2].split("&")):
        key, _, value = part.partition("=")
        if key not in _TARGET_OPTIONS or not value:
            raise SessionError(f"target {spec!r}: unknown option {part!r} (known: "
                               f"metric=NAME, filter=NAME)")
        out[key] = value
    return out


def lmeval_features(records: Sequence[Any], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Label-free features of the pool run's records (:func:`choice_features`) and
    ``(N,)`` the pool run's P(correct).

    Multiple-choice records with a gold choice: from the choices' probabilities.
    Otherwise every record needs ``metric`` in [0, 1]: the key's "log-prob" is the log
    of the metric clipped to [0.05, 0.95], the other model columns constant (dropped).
    """
    mc = all(r.choice_loglikelihoods is not None and r.gold is not None and r.gold >= 0
             for r in records)
    if mc:
        rows = [np.asarray(r.choice_loglikelihoods, dtype=np.float64) for r in records]
        return choice_features([ll - np.logaddexp.reduce(ll) for ll in rows],
                               np.asarray([r.gold for r in records], dtype=np.int64))
    vals = []
    for r in records:
        v = r.metrics.get(metric)
        if v is None or not 0.0 <= v <= 1.0:
            raise SessionError(f"{r.where}: the pool run has no {metric!r} in [0, 1] for "
                               f"document {r.doc_id} and no choice probabilities: "
                               f"--surrogate pool-run cannot read it (use --surrogate uniform)")
        vals.append(v)
    m = np.asarray(vals, dtype=np.float64)
    c = np.clip(m, 0.05, 0.95)
    return np.column_stack([np.zeros_like(m), np.zeros_like(m), np.log(c), m]), c


def _check_history_surrogate(surrogate: str, history: Sequence[Any],
                             exclude: Sequence[str]) -> None:
    """Refuse ``--surrogate`` and ``--history`` options that do not go together in an
    lm-eval session."""
    if exclude and not history:
        raise SessionError("--history-exclude names a row of --history: give --history")
    if surrogate == "history" and not history:
        raise SessionError("--surrogate history learns from other models' runs: give their "
                           "lm-eval output folders with --history DIR (docs/harness.md)")
    if history and surrogate == "uniform":
        raise SessionError("--surrogate uniform draws uniformly and learns nothing from "
                           "--history: use --surrogate history (the other models' runs "
                           "alone) or --surrogate pool-run (both, the pool run's choice "
                           "features beside the history's)")


def lmeval_feature_names(n_columns: int) -> list[str]:
    """The names of :func:`choice_features`' columns (``n_columns`` of them)."""
    head = ["pool run top log-prob", "pool run minus entropy", "pool run log-prob of the key",
            "pool run correct"]
    return (head + [f"key is choice {j + 1}" for j in range(1, n_columns - 3)])[:n_columns]


def _history_start(hist: Any, records: Sequence[Any], metric: str, surrogate: str
                   ) -> tuple[Any, Any, np.ndarray]:
    """The history (its record listing the signal), the pool signal (``pool-run``: the pool
    run's choice features, a :class:`~activetest.session.create_history.PoolSignal`; else
    None) and the first draw's proposal of the history design, as a replay rebuilds it."""
    from activetest.session.create_history import PoolSignal
    from activetest.session.design import history_design
    from activetest.session.history_neighbours import settings_of

    signal = None
    if surrogate == "pool-run":
        features, _ = lmeval_features(records, metric)
        signal = PoolSignal(features, tuple(lmeval_feature_names(features.shape[1])),
                            "the pool run's choice features")
        hist = dataclasses.replace(hist, info=signal.record(hist.info))
        from activetest.session.harness_history import pool_run_note

        twice = pool_run_note(hist, records)
        if twice is not None:  # said at init, kept with the record's messages
            hist.info["messages"] = [*hist.info.get("messages", []), twice]
    design = history_design(hist.columns, "original", None, hist.responses,
                            settings_of(hist.info), features=None if signal is None
                            else signal.columns, feature_names=None if signal is None
                            else signal.names)
    return hist, signal, design.plan([]).q


def choice_features(logprobs: Sequence[np.ndarray] | np.ndarray, key: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(N, 3 + C)`` graded-design features of a surrogate's choice log-probs with the
    answer ``key`` known, and ``(N,)`` its probability of the key (P(correct)).

    Columns (in the graded design's slots: mean, min, sum, then [0, 1] columns): its
    top log-prob, minus its entropy, its log-prob of the key (the prior: P(wrong) = 1 -
    its probability), whether its top choice is the key, and which choice the key is
    (``C - 1`` indicators, C the most choices of any row): a target's errors follow its
    bias towards some choices, and the key is known before any target run (on the
    bundled models' pools it is most of what the design learns; docs/harness.md).
    Rows may have different numbers of choices.
    """
    rows = [np.asarray(lp, dtype=np.float64) for lp in logprobs]
    key = np.asarray(key, dtype=np.int64)
    C = max((r.size for r in rows), default=2)
    feats, p = [], []
    for lp, k in zip(rows, key, strict=True):
        which = [float(k == j) for j in range(1, C)]
        feats.append([lp.max(), float((np.exp(lp) * lp).sum()), lp[k],
                      float(np.argmax(lp) == k), *which])
        p.append(float(np.exp(lp[k])))
    return np.asarray(feats), np.asarray(p)


def _pick_filter(records: Sequence[Any], wanted: str | None, what: str) -> list[Any]:
    filters = sorted({r.filter for r in records})
    if wanted is None:
        if len(filters) > 1:
            raise SessionError(f"{what}: records of several lm-eval filters {filters}; choose "
                               f"one with --target 'lm-eval?filter={filters[0]}'")
        return list(records)
    chosen = [r for r in records if r.filter == wanted]
    if not chosen:
        raise SessionError(f"{what}: no records for filter {wanted!r} (has {filters})")
    return chosen


def _first_metric(records: Sequence[Any], what: str) -> str:
    for r in records:
        if r.metrics:
            return next(iter(r.metrics))
    raise SessionError(f"{what}: the records hold no per-item metric (acc, exact_match, ...)")


def create_lmeval_session(path: str | os.PathLike[str], *, pool: Any, task: Any, target: str,
                          surrogate: str = "pool-run", seed: int | None = None,
                          proposal_floor: float | None = None, n_boot: int = 1000,
                          level: float = 0.95, overwrite: bool = False,
                          busy_timeout: float = 5.0, budget: int | None = None,
                          history: Sequence[str | os.PathLike[str]] = (),
                          history_exclude: Sequence[str] = (),
                          history_neighbours: Any = True,
                          **_ignored: Any) -> tuple[Any, Any]:
    """Create an lm-eval session (module docstring) from a pool run's samples files.

    Args:
        pool: the pool run's samples file(s): a file, folder, glob or list.
        task: a graded task whose judgment is incorrect/correct (``answers``).
        target: ``lm-eval``, options ``?metric=NAME`` (default: the records' first
            metric, stated in the config) and ``?filter=NAME``.
        surrogate: ``pool-run``, ``uniform`` or ``history``.
        history: folders of other models' lm-eval runs on the same tasks
            (:mod:`activetest.session.harness_history`): the design is the feature design
            on their difficulty and item factors (``surrogate="history"``), with the pool
            run's choice features beside them (``surrogate="pool-run"``);
            ``history_exclude``: their model names never used (the target);
            ``history_neighbours``: the neighbours' column learnt in-run (False: without).
        budget: the target runs planned (the anytime CS is tuned to it; default
            :func:`activetest.session.create.planned_budget`'s rule). Recorded with the
            keys every new graded session records (blind ratio, the error rate's exact
            interval until 5 errors).

    Returns:
        ``(store, GradedInputs)``, as
        :func:`~activetest.session.create_graded.create_graded_session` does.
    """
    from activetest import __version__
    from activetest.data.generative import GenTask
    from activetest.data.task import Item
    from activetest.data.taskfile import task_to_dict
    from activetest.formats.lmeval_results import doc_snippet, read_results
    from activetest.models import judges
    from activetest.session.config import NoiseConfig, SessionConfig
    from activetest.session.create import (
        check_options,
        planned_budget,
        resolve_proposal_floor,
        resolve_task,
    )
    from activetest.session.create_graded import FEATURE_COLUMNS, GradedInputs
    from activetest.session.design import HISTORY_DESIGN, graded_adaptive_design
    from activetest.session.store import SessionStore, check_new_session_path
    from activetest.stats import ActiveSampler
    from activetest.stats.blindspot import BLIND_RATIO
    from activetest.stats.fewerrors import MIN_ERRORS

    opts = _target_options(target)
    unused = sorted(k for k in ("examples", "shots", "compare", "judge_examples",
                                "acquisition", "target_shots") if _ignored.get(k))
    if unused:
        raise SessionError(f"option(s) {', '.join(unused)} do not apply to --target lm-eval "
                           f"(the target runs in lm-eval with its own prompts; the design is "
                           f"--surrogate pool-run, history or uniform)")
    if _ignored.get("history_ids_are_positions") or _ignored.get("ids_are_positions"):
        raise SessionError("--ids-are-positions confirms a response matrix's join "
                           "by ids that look like positions; --target lm-eval's --history "
                           "is other models' lm-eval runs, joined by task and doc_id and "
                           "checked against the pool run's documents: leave it out")
    if surrogate not in SURROGATES:
        raise SessionError(f"--target lm-eval: the surrogate is the pool run's model "
                           f"(--surrogate pool-run), other models' runs (--surrogate history "
                           f"with --history DIR) or none (--surrogate uniform), not "
                           f"{surrogate!r}")
    _check_history_surrogate(surrogate, history, history_exclude)
    t = resolve_task(task)
    if not isinstance(t, GenTask) or sorted(t.judgment.scores) != [0.0, 1.0] \
            or len(t.judgment.scores) != 2:
        raise SessionError("--target lm-eval needs a graded task judged incorrect/correct: "
                           "--task answers")
    floor = resolve_proposal_floor(proposal_floor, None)
    _, seed = check_options(metric="error_rate", acquisition="zero_one", proposal_floor=floor,
                            noise_rule="any", level=level, n_boot=n_boot, seed=seed)
    p = check_new_session_path(path, overwrite)
    what = "the pool run"
    try:
        records = read_results(pool if isinstance(pool, (list, tuple)) else str(pool))
    except ValueError as exc:
        raise SessionError(f"--pool: {exc}") from None
    records = _pick_filter(records, opts.get("filter"), what)
    if not records:
        raise SessionError("the pool is empty: nothing to evaluate")
    metric = opts.get("metric") or _first_metric(records, what)
    if "metric" in opts and not any(metric in r.metrics for r in records):
        have = sorted({m for r in records for m in r.metrics})
        raise SessionError(f"--target 'lm-eval?metric={metric}': the pool run has no metric "
                           f"{metric!r} (it has {', '.join(have) or 'none'}); the target's "
                           f"results are read with it")
    keyless = [r for r in records if r.gold is not None and r.gold < 0]
    if keyless:  # lm-eval scores an item without an answer key 0: that is not a label
        r = keyless[0]
        raise SessionError(f"{r.where}: document {r.key!r} has no answer key (gold -1; "
                           f"{len(keyless)} of {len(records)} records): an unlabelled split, "
                           f"whose per-item results are not labels. Run the pool on a "
                           f"labelled split (e.g. validation)")
    seen: dict[str, str] = {}
    for r in records:
        if r.key in seen:
            raise SessionError(f"{r.where}: document {r.key!r} again (first: {seen[r.key]})")
        if r.doc is None:
            raise SessionError(f"{r.where}: the record has no 'doc': results could not be "
                               f"checked against it (run lm-eval with --log_samples)")
        seen[r.key] = r.where
    hist = signal = None
    if history:  # joined and checked before anything is written
        from activetest.session.harness_history import lmeval_history

        hist = lmeval_history(history, records, metric=metric, exclude=history_exclude,
                              neighbours=history_neighbours)
    if hist is not None:
        hist, signal, scores = _history_start(hist, records, metric, surrogate)
        features, p_correct = None, hist.p_correct
        acquisition = "graded_adaptive"
    elif surrogate == "pool-run":
        features, p_correct = lmeval_features(records, metric)
        design = graded_adaptive_design(features)
        scores = design.plan([]).q
        acquisition = "graded_adaptive"
    else:
        features, p_correct = None, np.full(len(records), 0.5)
        scores = np.ones(len(records))
        acquisition = "expected_loss"
    s_lp = judges.binary_to_levels(p_correct, t.judgment)
    sampler = ActiveSampler(scores, proposal_floor=float(floor), seed=seed)
    items = [Item(r.key, {"input": r.prompt or doc_snippet(r.doc, 2000)}) for r in records]
    harness = {"tool": "lm-eval", "metric": metric, "metric_from": "target option" if
               "metric" in opts else "the pool run's first metric",
               "filter": opts.get("filter"),
               "pool_files": sorted({Path(r.where.rsplit(": ", 1)[0]).name for r in records}),
               "tasks": sorted({r.task for r in records}),
               # the pool run's prompts (lm-eval's n-shot), named by the report (QA: it
               # gave the session's own 0 for a surrogate run by lm-eval)
               "pool_n_shot": {r.task: int(r.n_shot) for r in records
                               if r.n_shot is not None}}
    from activetest.session.history_sources import publish

    # stored without the local paths read (said at init: store.said_at_init)
    pub = None if hist is None else publish(hist.info)
    config = SessionConfig(
        kind="graded", task=task_to_dict(t), task_ref=task if isinstance(task, str) else t.name,
        pool={**pool_source(pool), "n_items": len(items)},
        examples={"n": 0},
        surrogate=surrogate, target=target, metric="error_rate", acquisition=acquisition,
        proposal_floor=float(floor), seed=seed, shots=0, target_shots=0,
        noise=NoiseConfig(None, 5.0, "any"), n_boot=int(n_boot), level=float(level),
        cache_dir=None, use_cache=False, version=__version__, compare=(),
        answer_files={}, extra={"harness": harness,
                                **({} if pub is None else {"history": pub.record})},
        design_variant=None if hist is None else HISTORY_DESIGN,
        planned_budget=planned_budget(budget, len(items)), blind_ratio=BLIND_RATIO,
        clt_min_errors=MIN_ERRORS, sure_bounds=True, exact_share=True,
        exact_least=True, shared_resamples=True)
    # the pool run's answer key and number of choices per item: a result is checked
    # against them (a file of another task under this one's name has the same documents
    # but may order the choices otherwise: QA)
    info = [{"lm_eval_task": r.task, "doc_id": r.doc_id, "doc": r.fingerprint,
             "source": "not run yet", **({} if r.gold is None else {"gold": int(r.gold)}),
             **({} if r.choice_loglikelihoods is None else
                {"n_choices": len(r.choice_loglikelihoods)})} for r in records]

    def init(store: Any) -> None:
        store.put_answers("target", range(len(items)), [""] * len(items),
                          [()] * len(items), info)
        store.put_scores("surrogate", surrogate, s_lp,
                         {"spec": surrogate, "kind": "judgment log-probs"})
        store.put_scores("acquisition", acquisition, scores[:, None],
                         {"acquisition": acquisition, "alpha": float(floor)},
                         predictions=False)
        if hist is not None:  # what the history design is rebuilt from
            store.put_scores("history", "history", hist.columns,
                             {"columns": ["p_correct", "has_history", "factor..."]},
                             predictions=False)
            if hist.responses is not None:
                from activetest.session.history_neighbours import put_responses

                put_responses(store, hist.responses, hist.models)
        if signal is not None:  # the pool signal beside it
            signal.put(store)
        if features is not None:
            store.put_scores("features", "graded", features,
                             {"columns": [*FEATURE_COLUMNS,
                                          *["agreement"] * (features.shape[1] - 3)],
                              "meaning": ["top choice log-prob", "minus entropy",
                                          "log-prob of the key", "pool run correct",
                                          "key is choice 2, 3, ..."][:features.shape[1]]},
                             predictions=False)
        state = sampler.state()
        store.init_sampler(state.proposal_floor, seed, state.rng_state)

    store = SessionStore.create(p, config=config, items=items, overwrite=overwrite,
                                busy_timeout=busy_timeout, init=init)
    if pub is not None:
        store.said_at_init = pub.said
    return store, GradedInputs(t, [], [], target, surrogate, {target: target})


def unanswered_rows(session: Any, acquisitions: Sequence[Any]) -> list[Any]:
    """The draws (:class:`~activetest.session.store.Acquisition`) of a harness session
    whose items are unlabelled and have no answer from the target (empty: not a harness
    session, or every item answered or labelled)."""
    if harness_config(session) is None or not acquisitions:
        return []
    answers = session.store.answers("target")
    labelled = session.store.labels()
    return [a for a in acquisitions
            if a.index not in labelled and not answers.get(a.index, ("",))[0].strip()]


def check_person_labelling(session: Any, acquisitions: Sequence[Any] | None,
                           what: str) -> None:
    """Refuse a person's labelling (``what``: ``label``, ``export``, ``serve``) of harness
    items the target has not answered (module docstring). ``acquisitions`` None: the
    session as a whole, for a place that draws new items itself (``serve``: a harness
    session's new draws never have an answer).

    Raises:
        SessionError: naming the first such item, how many there are, and how the item's
            label is made instead (the inspect eval's score, or lm-eval's result).
    """
    h = harness_config(session)
    if h is None:
        return
    if acquisitions is None:
        subject = "the items of a harness session have"
    else:
        missing = unanswered_rows(session, acquisitions)
        if not missing:
            return
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        subject = f"item {missing[0].item_id!r}{more} has"
    if h.get("tool") == "inspect":
        how = ("in an inspect_ai session (--target inspect) an item's label is the eval's "
               "score of the target's answer, recorded by activetest.inspect.ActiveStopping "
               "while the eval runs (or read from its log with `init --from-inspect`); the "
               "answer itself stays in the eval's log")
    else:
        how = ("in an lm-eval session (--target lm-eval) an item's label is the target's "
               "result: `select --emit lm-eval --out samples.json`, run lm_eval with "
               "--samples samples.json --log_samples, then `import` the samples files")
    raise SessionError(f"{what}: {subject} no answer from the target yet, so there is "
                       f"nothing for a person to judge: {how} (docs/harness.md, "
                       f"docs/harness_inspect.md)")


def check_people_labels(session: Any, changes: Sequence[Any], source: str, *,
                        trust: bool = False) -> None:
    """Refuse people's labels (a source that is not a target run's: each change's own,
    else ``source``) for drawn items of an lm-eval session that the target has not run,
    unless ``trust``.

    Why refused: in such a session every label is meant to be the target's lm-eval
    result. A person's label for an item lm-eval has not run makes the item labelled, so
    ``select --emit lm-eval`` (which writes the unlabelled draws) never emits it again,
    the target never runs it, and the estimate of the target's error rate mixes in a
    person's judgment without a word (QA). Why not keep the label and still emit the
    item: its result would then disagree with the label or duplicate it, and an import of
    it would have to pick one; the label is the user's decision to state. ``trust``
    (``import --trust-labels-from-people``, the API's ``trust_people=True``) takes such
    labels as the target's results (a judgment of its answer made elsewhere); ``status``
    counts them as labels from people. An item whose result was imported may still be
    relabelled by a person (``--overwrite``: a correction of the metric; its history
    keeps the result). inspect_ai sessions (``--target inspect``) follow the same rule:
    an item's label is the eval's score of the target's answer, and
    :class:`activetest.inspect.ActiveStopping` skips a labelled item, so a person's label
    for an item no eval has scored (it has no label yet) would keep the target from ever
    running it (QA: accepted by ``import`` and the API while ``label`` refused it).

    Args:
        changes: the label changes about to be committed, inside their transaction
            (:class:`~activetest.session.store.LabelChange`: ``index``, ``item_id``,
            ``new``, ``source``, ``role``).

    Raises:
        SessionError: naming how many, the first item, and the two ways on.
    """
    tool = harness_tool(session)
    if trust or tool not in ("lm-eval", "inspect"):
        return
    # each change's own source: a file's records may carry theirs (``csv:<file>``)
    rows = [c for c in changes if c.role == "target" and c.new is not None
            and not is_target_run(c.source or source)]
    if not rows:
        return
    if tool == "inspect":  # an item's only result is its label: none yet, no eval ran it
        unrun = [c for c in rows if c.old is None]
    else:
        answers = session.store.answers("target")
        unrun = [c for c in rows if "metric" not in answers.get(c.index, ("", (), {}))[2]]
    if not unrun:
        return
    more = f" (and {len(unrun) - 1} more)" if len(unrun) > 1 else ""
    sources = ", ".join(dict.fromkeys(c.source or source for c in unrun))
    if tool == "inspect":
        raise SessionError(
            f"{len(unrun)} label(s) from people ({sources}) are for drawn items no inspect_ai "
            f"eval has scored: item {unrun[0].item_id!r}{more}. In an inspect_ai session "
            f"(--target inspect) an item's label is the eval's score of the target's answer; "
            f"activetest.inspect.ActiveStopping skips an item that is labelled, so the target "
            f"would never run it and the estimate of its error rate would mix in a person's "
            f"judgment. Nothing was stored. Run the eval with ActiveStopping (it runs the "
            f"drawn items that have no label), or give --trust-labels-from-people (the API: "
            f"trust_people=True) to take these labels as the eval's scores (counted as "
            f"labels from people)")
    raise SessionError(
        f"{len(unrun)} label(s) from people ({sources}) are for drawn items the target has not "
        f"run: item {unrun[0].item_id!r}{more}. In an lm-eval session (--target lm-eval) an "
        f"item's label is the target's lm-eval result; an item labelled by a person is never "
        f"emitted again (`select --emit lm-eval` writes the unlabelled draws), so the target "
        f"would never run it and the estimate of its error rate would mix in a person's "
        f"judgment. Nothing was stored. Run the target on them (`select --emit lm-eval --n 0 "
        f"--out samples.json`, lm_eval --samples samples.json --log_samples, then `import` "
        f"its samples files), or give --trust-labels-from-people (the API: "
        f"trust_people=True) to take these labels as the target's results (counted as "
        f"labels from people)")
