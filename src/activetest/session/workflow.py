"""The active-testing workflow over a persistent session: the ``Session`` facade.

A :class:`Session` wraps one SQLite session file (:mod:`activetest.session.store`)::

    s = Session.create("run.db", pool="pool.csv", task="sst2",
                       surrogate="smollm2-135m", target="gemma3-270m",
                       examples="examples.csv", shots=8, seed=0)
    for a in s.select(10):               # the next 10 items to label, in draw order
        print(a.item_id, s.item(a.item_id).fields["text"])
    s.add_label("17", "positive")        # committed at once
    report = s.estimate()                # LURE + bootstrap interval, per metric
    s.close()

Unbiasedness rules the design:

* Items are drawn one at a time from the stored single-run sampler
  (:class:`activetest.stats.ActiveSampler`); its RNG state is persisted in the same
  transaction as the draws, so stopping and resuming never changes future draws.
* LURE needs the labels of the FIRST K draws. If draw s is still unlabelled,
  labels of later draws wait (they are kept, and counted as "waiting").
* Only drawn items can be labelled: a label for any other item could not be
  weighted and is refused.

Each job has its own module; this class only joins them to one session file:
:mod:`~activetest.session.create` (read inputs, score, write the file),
:mod:`~activetest.session.draw` (the sampler; an adaptive design's draws with the blind
spot kept in step: :mod:`~activetest.session.adaptive_select`),
:mod:`~activetest.session.labels` (labels in and out; the records as given, checked
and written: :mod:`~activetest.session.labels_in`), :mod:`~activetest.session.kinds`
(what differs between a classification and a graded session),
:mod:`~activetest.session.target_model` (who answered for a harness target),
:mod:`~activetest.session.compared_join` (a compared table joined by positions),
:mod:`~activetest.session.assemble` (an estimate over the stored session),
:mod:`~activetest.session.estimate` (pure estimates),
:mod:`~activetest.session.session_report` and :mod:`~activetest.session.report`
(documents), :mod:`~activetest.session.session_status` (where it stands),
:mod:`~activetest.session.session_checks` (checks before a file is opened or made),
:mod:`~activetest.session.exchange` (files to label elsewhere, and back),
:mod:`~activetest.session.records` (what they return).

Beyond the paper: a label-noise alarm (items whose label the target or the
surrogate finds very unlikely, NLL > 5 by default; the paper's SST-2 failure had
75 % of such items mislabelled), a projection of the labels needed for a
requested interval width, and the paired comparison of two targets on the same
labels (LURE of the per-item loss difference is unbiased for the difference).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session import compare_graded, draw, labels, labels_in
from activetest.session import estimate as est
from activetest.session.assemble import EstimateParts, estimate_parts
from activetest.session.config import SessionConfig
from activetest.session.kinds import SessionKind, kind_for, kind_for_task
from activetest.session.pool_view import PoolView, RowIndex
from activetest.session.records import (
    ACQUISITION_CHOICES,
    EXPORT_FORMATS,
    METRIC_CHOICES,
    METRICS,
    Comparison,
    EstimateReport,
    FlaggedItem,
    LabelError,
    LabelImport,
    MetricEstimate,
    SessionStatus,
    Waiting,
)
from activetest.session.scoring import (
    Scoring,
    register_model,
    score_rows,
)
from activetest.session.session_checks import check_pool_keywords, check_pool_size
from activetest.session.store import (
    Acquisition,
    EstimateRow,
    LabelChange,
    SessionStore,
)
from activetest.session.store import (
    SessionError as SessionError,  # importable from here, as before the split
)

__all__ = [
    "ACQUISITION_CHOICES",
    "EXPORT_FORMATS",
    "METRICS",
    "METRIC_CHOICES",
    "Comparison",
    "EstimateReport",
    "FlaggedItem",
    "LabelError",
    "LabelImport",
    "MetricEstimate",
    "Session",
    "SessionStatus",
]


class Session:
    """One active-testing session, persisted in a SQLite file (see the module docstring).

    Use :meth:`create` or :meth:`open`; close with :meth:`close` (or a ``with`` block).

    Args:
        store: the opened session store.
        scorers: model spec -> scorer objects to use instead of building them
            from the spec (e.g. a scorer passed to :meth:`create` as an object).
        cache_dir: score-cache root for models built from specs; default the
            session's configured cache, else the user cache.
        threads: CPU threads per llama.cpp model built from specs (default: half
            the cores, llama.cpp's convention, so that surrogate and target can
            score side by side; 1 is much faster on a machine busy with other
            work). Does not change the scores.
        raw_specs: stored spec -> the spec as given (with credentials), for the
            process that created the session.
    """

    def __init__(self, store: SessionStore, *, scorers: Mapping[str, Any] | None = None,
                 cache_dir: str | os.PathLike[str] | None = None,
                 threads: int | None = None, raw_specs: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.threads = threads
        self._cfg = store.config()  # checked and typed
        check_pool_size(store, self._cfg)
        self._task: Task | None = None
        self._scorers: dict[str, Any] = dict(scorers or {})
        self._raw_specs = dict(raw_specs or {})
        self._cache_dir = (str(cache_dir) if cache_dir is not None
                           else self._cfg.cache_dir)
        self._items: list[Item] | None = None
        # the pool read where it is needed (a command touches few items)
        self._pool = PoolView(store)
        self._ids_are_positions = False  # estimate(ids_are_positions=): a new join confirmed
        self._index = RowIndex(store)
        store.label_classes = self.task.n_classes  # a stored label outside is refused
        #: what differs between kinds of session (:mod:`activetest.session.kinds`)
        self.kind: SessionKind = kind_for(self._cfg, self.task)

    # ------------------------------------------------------------------ creation

    @classmethod
    def create(cls, path: str | os.PathLike[str], *,
               pool: Sequence[Item] | str | os.PathLike[str],
               task: Task | str | os.PathLike[str],
               surrogate: Any, target: Any, **options: Any) -> Session:
        """Create a session: load the pool, score it, store everything.

        Args:
            path: the new session file.
            pool: a pool file (any format :func:`activetest.data.load_pool` reads) or
                items. Labels found in the file are kept apart as "data labels" (for
                simulation with :meth:`label_from_data`); they are never used as answers.
            task: a Task, a built-in task name or a task file.
            surrogate, target: model specs (``"smollm2-135m"``, ``"table:preds.csv"``, ...,
                see :func:`activetest.models.get_scorer`) or Scorer objects. Credentials
                in a URL are used but never stored (see :func:`stored_spec`).
            **options: ``metric`` (``log_loss``, ``error_rate`` or ``both``);
                ``acquisition`` (``adaptive``, the default: the calibrated-residual
                adaptive design; ``pe_adaptive``, ``fixed_mix``; the paper's ``ce``,
                ``pe`` (surrogate only, the target is then scored only on labelled
                items), ``zero_one``; ``uniform``; ``compare``, the paired difference
                with the one ``compare`` model: see
                :data:`activetest.session.config.ACQUISITIONS`); ``compare`` (other
                targets, scored on the pool now and compared at every estimate; graded
                tasks: targets whose answers are judged too); ``proposal_floor``
                (the share of the uniform mixed into a fixed proposal, 0.1; ``alpha``
                is its deprecated name); ``seed`` (default: fresh entropy, stored); ``shots`` and
                ``examples`` (in-context examples drawn stratified from a labelled
                file or items, disjoint from the pool); ``target_shots`` (0 =
                zero-shot; default as the surrogate); ``noise_target_nll``,
                ``noise_surrogate_nll``, ``noise_rule`` (the label-noise alarm);
                ``n_boot``, ``level`` (bootstrap); ``pool_options`` (``load_pool``
                keywords); ``cache_dir``, ``use_cache``; ``overwrite`` (a replaced
                file holding labels is kept beside the new one:
                ``session.store.replaced`` says where); ``progress``;
                ``busy_timeout``; ``threads``; ``label_scoring`` (``first-token``, the
                default and the paper's choice, or ``full-sequence``: each class the
                summed log-prob of its whole label word, for the llama.cpp and
                transformers models given as specs; refused for ``openai:``; stored, so
                every later command scores the same way). See
                :func:`activetest.session.create.create_session`.

        Raises:
            ValueError: (incl. :class:`SessionError`) bad arguments or input files.
        """
        from activetest.session.create import resolve_proposal_floor, resolve_task

        check_pool_keywords(options)
        if "alpha" in options:  # the proposal floor's deprecated name (warns)
            options["proposal_floor"] = resolve_proposal_floor(
                options.pop("proposal_floor", None), options.pop("alpha"))
        resolved = resolve_task(task)
        store, scorers, raw_specs = kind_for_task(resolved).create(
            path, pool=pool, task=resolved, surrogate=surrogate, target=target,
            options=options)
        return cls(store, scorers=scorers, cache_dir=options.get("cache_dir"),
                   threads=options.get("threads"), raw_specs=raw_specs)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = 5.0,
             scorers: Mapping[str, Any] | None = None,
             cache_dir: str | os.PathLike[str] | None = None,
             threads: int | None = None) -> Session:
        """Open an existing session (see :meth:`SessionStore.open` for the errors).

        A session file that cannot be written (read-only file, folder or disk) opens
        read-only: everything that only reads (status, estimate, report, export)
        works; drawing and labelling say why they cannot.
        """
        return cls(SessionStore.open(path, busy_timeout=busy_timeout), scorers=scorers,
                   cache_dir=cache_dir, threads=threads)

    def close(self) -> None:
        """Close the session file."""
        self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        """What the session is, and how far it is (QA: ``<...Session object at 0x...>``)."""
        cfg = self._cfg
        head = (f"Session(path={str(self.path)!r}, kind={cfg.kind!r}, "
                f"task={cfg.task_ref!r}, target={cfg.target!r}, "
                f"surrogate={cfg.surrogate!r}, metric={cfg.metric!r}, "
                f"acquisition={cfg.acquisition!r}, seed={cfg.seed}, N={self.n_items}")
        try:
            return (f"{head}, selected={self.store.n_acquired()}, "
                    f"labelled={self.store.n_labelled()})")
        except (sqlite3.Error, ValueError):  # a closed file: what it is, no counts
            return f"{head}, closed)"

    # ------------------------------------------------------------------ basics

    @property
    def path(self) -> Path:
        """The session file."""
        return self.store.path

    @property
    def config(self) -> dict[str, Any]:
        """The configuration as stored (a copy of the JSON document; typed:
        :attr:`session_config`)."""
        return self._cfg.to_dict()

    @property
    def session_config(self) -> SessionConfig:
        """The configuration, typed (:class:`~activetest.session.config.SessionConfig`)."""
        return self._cfg

    def record_target_model(self, model: str | None, tool: str, tasks: Iterable[str] = (),
                            n_shot: Mapping[str, int] | None = None,
                            row_names: Iterable[str] = (),
                            variant: Mapping[str, str] | None = None,
                            prompts: Mapping[str, Mapping[str, str]] | None = None,
                            stated: str | None = None) -> None:
        """Keep who answered for a harness target (``answer_files["target"]``: the model
        lm-eval's results or inspect's eval name), checked against the model stored and
        written in one transaction: two runs of different models cannot both pass.
        ``tasks``: the harness tasks the runs were of (an inspect eval's ``eval.task``),
        kept among the session's ``tasks`` (named by ``status``; not checked: labels join
        by the sample's content). ``n_shot``: task -> the in-context examples the runs
        were made with (lm-eval's ``n-shot``), checked against those stored for the task
        and kept: the target is the model and its prompt. ``model`` None: the runs do not
        name their model (only ``n_shot`` and ``tasks`` are checked and kept).
        ``row_names``: the names a history folder gives runs of the target's local model
        (:func:`activetest.formats.history.lmeval_local_row_name`), kept for ``status``.
        ``variant``: which weights of the named model ran (lm-eval's ``gguf_file``,
        ``revision``, ...: :func:`activetest.formats.history.lmeval_model_variant`; None:
        not known), checked against the variant stored (sessions whose results were
        imported before it was kept have none: the first import that has one keeps it).
        ``prompts``: task -> a digest of each prompt key of the task's lm-eval config
        (:data:`activetest.formats.lmeval.PROMPT_KEYS`), checked against those stored for
        the task and kept (the same rule as ``n_shot``; sessions imported before keep
        none until their next import).
        ``stated``: ``model`` as the results write it (lm-eval's ``pretrained=`` path),
        kept as the digests of a local path (``model_path``,
        :func:`activetest.formats.model_ids.path_digests`; empty: no local path), never as
        the path: two local checkpoints of one last name (``/a/checkpoint-1000``,
        ``/b/checkpoint-1000``) are one ``model`` name but two models (QA: their rounds
        were imported as one target's). Sessions whose results were imported before it
        was kept have none: the first import that states one keeps it.

        Raises:
            SessionError: the session's results so far are of another model (another
                local path of the same last name too), or of the same task with another
                number of in-context examples (one estimate cannot mix two).
        """
        from activetest.session.target_model import record_target_model

        record_target_model(self.store, model, tool, tasks, n_shot, row_names, variant,
                            prompts, stated)
        self._cfg = self.store.config()

    @property
    def task(self) -> Task:
        """The session's task."""
        if self._task is None:
            from activetest.data.taskfile import task_from_dict

            self._task = task_from_dict(self._cfg.task, f"{self.path}: config.task",
                                        index_values=True)
        return self._task

    @property
    def graded(self) -> bool:
        """Whether the task is graded (free-form answers judged by people)."""
        return self._cfg.graded

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics estimated."""
        return self._cfg.metrics

    @property
    def n_items(self) -> int:
        """Pool size N."""
        return len(self._pool)

    def items(self) -> list[Item]:
        """The pool (labels are the pool file's data labels, not answers); reads and
        keeps every item (the commands read only the items they touch)."""
        if self._items is None:
            self._items = self.store.items()
        return self._items

    def _row_index(self) -> RowIndex:
        return self._index

    def item(self, item_id: str) -> Item:
        """The pool item with this id.

        Raises:
            LabelError: no such item.
        """
        row = self._row_index().get(str(item_id))
        if row is None:
            raise LabelError(f"item {item_id!r} is not in the pool")
        return self._pool[row]

    def examples(self) -> list[Item]:
        """The in-context examples, in prompt order."""
        return self.store.examples()

    def answers(self) -> dict[int, tuple[str, tuple[str, ...], dict[str, Any]]]:
        """Graded sessions: pool row -> (the target's answer, references, details)."""
        return self.store.answers("target")

    def display_item(self, item_id: str) -> Item:
        """The item as a person judging it sees it: for a graded task its prompt
        fields, the target's answer and the references; else the item itself."""
        return self._display_items([self._row_index()[self.item(item_id).id]])[0]

    def _display_items(self, rows: Sequence[int], role: str = "target") -> list[Item]:
        """:meth:`display_item` of pool ``rows`` (answers read once), with the answer
        of ``role`` (``"target"`` or ``compare:<spec>``)."""
        self._pool.prefetch(rows)
        return self.kind.display_items(self.store, self._pool, rows, role)

    def display(self, item_id: str, *, target: str | None = None) -> str:
        """The text a person labelling the item reads (graded: the answer of the
        session's target, or of the compared ``target``)."""
        item = self.item(item_id)
        return self.kind.display(self.store, item, self._row_index()[item.id], target)

    def provenance(self, role: str) -> dict[str, Any]:
        """Where a model's stored scores came from (``surrogate`` or ``target``); ``{}``
        if none are stored. Predictions read from a file say what the file says
        (``n_examples``: lm-eval's ``n-shot`` or ``"unknown"``)."""
        stored = self.store.scores(role)
        return dict(stored.provenance) if stored is not None else {}

    def acquisition_scores(self) -> np.ndarray:
        """The ``(N,)`` acquisition scores stored at creation: what a fixed proposal draws
        by; an adaptive design refits its proposal from the labels (the probability each
        draw was made with is :attr:`Acquisition.q` of :meth:`acquisitions`)."""
        return draw.acquisition_scores_of(self.store)

    # ------------------------------------------------------------------ selection

    def select(self, n: int, *, progress: Callable[[int], object] | None = None,
               phase: Callable[[str], object] | None = None) -> list[Acquisition]:
        """Draw the next ``n`` items (sequentially; persisted with the sampler state).
        ``progress(1)`` is called after each draw (the command line's progress bar: an
        adaptive design's draw is a pass over the pool); ``phase(description)`` when a
        step after the draws begins (the blind spot's stored state advanced over them:
        at 3,000 draws of 1e5 items, 2.4 s of 6.4 s), so a bar does not sit full.

        Raises:
            ValueError: ``n`` is not a positive integer or exceeds the items left.
        """
        if self._cfg.adaptive:
            from activetest.session.adaptive_select import select_adaptive

            return select_adaptive(self, n, progress=progress, phase=phase)
        return draw.select(self.store, n, progress=progress)

    def acquisitions(self) -> list[Acquisition]:
        """Every draw so far, in order."""
        return self.store.acquisitions()

    def pending(self) -> list[Acquisition]:
        """Drawn items without a label, in draw order."""
        return draw.pending(self.store)

    def n_pending(self) -> int:
        """How many drawn items have no label (``len(pending())`` without reading them)."""
        return self.store.n_pending()

    # ------------------------------------------------------------------ labels

    def parse_label(self, value: int | str) -> int:
        """A class index from a label word, class name, label-map key or 0-based index.

        Raises:
            LabelError: not a class of the task.
        """
        return labels.parse_label(self.task, value)

    def labels(self) -> dict[str, int]:
        """Current labels: item id -> class index."""
        return {lab.item_id: lab.label for lab in self.store.labels().values()}

    def add_label(self, item_id: str, label: int | str, *, source: str = "api",
                  overwrite: bool = False, trust_people: bool = False) -> LabelChange | None:
        """Label one drawn item (committed at once); returns the change, or None if unchanged.

        ``trust_people``: as :meth:`add_labels`.

        Raises:
            LabelError: unknown item or class, item never selected, or a different
                existing label without ``overwrite``.
            SessionError: a person's label for an item an lm-eval session's target has
                not run, without ``trust_people``.
        """
        result = self.add_labels([(item_id, label)], source=source, overwrite=overwrite,
                                 trust_people=trust_people)
        return result.changes[0] if result.changes else None

    def add_labels(self, records: Iterable[Any], *, source: str = "import",
                   overwrite: bool = False, where: str = "",
                   resolve: str = "skip", trust_people: bool = False) -> LabelImport:
        """Add many labels in one transaction, after checking all of them.

        Args:
            records: ``(item_id, label)`` pairs (tuples or lists), a mapping
                ``item_id -> label``, or objects with ``item_id`` and ``label``
                attributes (and optionally ``where``, e.g. "labels.csv, line 4", used in
                error messages, ``annotator`` and ``time``).
            source: recorded with each label (``cli``, ``import:labels.csv``, ...).
            overwrite: replace existing different labels (history kept).
            where: names the input in error messages when records carry no ``where``.
            resolve: items the records label differently (annotators who disagree):
                ``skip`` leaves them out, ``latest`` takes the label given last,
                ``majority`` the most frequent, one vote per annotator (ties stay
                out; see :data:`activetest.session.records.RESOLVE_RULES`).
                Reported in ``LabelImport.conflicts`` either way.
            trust_people: an lm-eval session (``--target lm-eval``) takes labels from
                people (a ``source`` that is no target run's) for drawn items its target
                has not run only with this; refused otherwise
                (:func:`activetest.session.harness.check_people_labels` says why).

        Records read from a file (:mod:`activetest.session.labelio`) that carry a
        ``content_check``, or cells holding the item's fields (a hand-made sheet's
        ``text``), must show the item their id names
        (:func:`activetest.session.labels.check_shown`).

        Raises:
            LabelError: listing every bad record (file and line where known);
                nothing is written then.
            SessionError: people's labels for items an lm-eval session's target has
                not run, without ``trust_people`` (nothing written).
        """
        return labels_in.add_labels(self, records, source=source, overwrite=overwrite,
                                    where=where, resolve=resolve, trust_people=trust_people)

    def _keep_votes(self, result: LabelImport, records: Sequence[Any]) -> LabelImport:
        """:func:`activetest.session.labels_in.keep_votes` (the imports of
        :mod:`activetest.session.exchange` call it)."""
        return labels_in.keep_votes(self, result, records)

    def _add_roles(self, item_id: str, levels: Sequence[tuple[str, int, str]],
                   ) -> list[LabelChange]:
        """:func:`activetest.session.labels_in.add_roles` (the labelling page's settled
        answer: every role written, the caller checks them alike once)."""
        return labels_in.add_roles(self, item_id, levels)

    def _check_alike(self, rows: Sequence[int]) -> None:
        """:func:`activetest.session.labels_in.check_alike`."""
        labels_in.check_alike(self, rows)

    def _check_shown(self, records: Sequence[Any]) -> None:
        """:func:`activetest.session.labels_in.check_shown`."""
        labels_in.check_shown(self, records)

    def undo(self, change: LabelChange, *, source: str = "undo") -> LabelChange:
        """Revert one label change, or one judgment of a compared answer (committed at once).

        Raises:
            SessionError: the label changed since (``change`` is no longer the latest).
            ValueError: ``source`` is no non-empty string (stored with the revert).
        """
        return self.store.revert(change, labels.check_source(source), self.task.class_names)

    # ------------------------------------------------- compared answers (graded)

    def compared_targets(self) -> list[str]:
        """Graded sessions: the targets whose answers are compared with the target's."""
        return list(self.kind.compared_targets)

    def compared_answer(self, item_id: str, spec: str) -> str:
        """A compared target's answer to an item.

        Raises:
            LabelError: unknown item, or ``spec`` is not a compared target.
        """
        item = self.item(item_id)
        return self.kind.compared_answer(self.store, self._row_index()[item.id], spec)

    def judge(self, item_id: str, level: int | str, *, target: str, source: str = "api",
              overwrite: bool = False) -> LabelChange | None:
        """Judge a compared target's answer to a drawn item (committed at once); returns
        the change, or None if unchanged. The session target's own judgment is its
        label (:meth:`add_label`).

        Raises:
            LabelError: unknown item, target or level, or an item never drawn.
            SessionError: a different existing judgment without ``overwrite``.
        """
        changes = self.judge_many(target, [(item_id, level)], source=source,
                                  overwrite=overwrite)
        return changes[0] if changes else None

    def judge_many(self, target: str, records: Iterable[tuple[str, Any]], *,
                   source: str = "import", overwrite: bool = False) -> list[LabelChange]:
        """Judge many of ``target``'s answers in one transaction, after checking all
        (``records`` as :meth:`add_labels` takes them)."""
        return compare_graded.add_judgments(self.store, self.task, self._row_index(),  # type: ignore[arg-type]
                                            target, labels_in.label_records(records, "record"),
                                            source=source, overwrite=overwrite)

    def pending_judgments(self) -> list[compare_graded.PendingJudgment]:
        """Drawn items whose compared answers still need a judgment, in draw order (none
        in a classification session)."""
        return self.kind.pending_judgments(self.store)

    def full_prompt(self, item_id: str) -> str | None:
        """The full prompt the target read for an item (a harness log's in-context
        examples and all; graded sessions of a log) where it is kept apart from what
        :meth:`display` shows; else None.

        Raises:
            LabelError: no such item.
        """
        return self.kind.full_prompt(self.item(item_id))

    def label_from_data(self, limit: int | None = None, *, source: str = "data") -> int:
        """Simulated labeller: answer pending items with the pool file's labels.

        Each answer is its own transaction, as in interactive labelling. Returns the
        number labelled.

        Raises:
            LabelError: a pending item has no label in the pool file.
            ValueError: ``limit`` is not None or a whole number >= 0.
        """
        from activetest.stats.validate import is_whole

        if limit is not None and (not is_whole(limit) or limit < 0):  # type: ignore[operator]
            # (QA: limit="a" went unchecked until an item was pending, then Python's
            # "'>=' not supported"; -1 labelled nothing, silently)
            raise ValueError(f"limit must be a whole number of labels >= 0, or None (every "
                             f"pending item); got {limit!r}")
        pending = self.pending()
        self._pool.prefetch(a.index for a in pending)
        return labels.label_from_data(self.store, self._pool, pending, limit,
                                      source=source)

    def history(self, item_id: str | None = None) -> list[LabelChange]:
        """The label history (of one item, or all), oldest first."""
        row = None if item_id is None else self._row_index().get(str(item_id))
        return self.store.label_history(row)

    # ------------------------------------------------------------------ scoring

    def _scoring(self) -> Scoring:
        shots = int(self._cfg.shots)
        return Scoring(self.task, self.examples()[:shots], self._scorers, self._cache_dir,
                       bool(self._cfg.use_cache), self.threads,
                       self._raw_specs, self._cfg.label_scoring_mode)

    def _target_shots(self) -> int:
        return self._cfg.target_examples

    def _logprobs(self, role: str, spec: str, rows: np.ndarray, progress: bool) -> np.ndarray:
        return score_rows(self.store, self._scoring(), role, spec, self._pool, rows,
                          self._target_shots(), progress)

    def _target_score(self, progress: bool) -> Any:
        """``rows -> (N, C)`` the target's log-probs on the pool, scored at ``rows``."""
        return lambda rows: self._logprobs("target", self._cfg.target, rows, progress)

    def _score_other(self, rows: np.ndarray, progress: bool) -> Any:
        """``other -> (stored spec, its (len(rows), C) log-probs at rows)`` for a compared
        model given as a spec or a Scorer object (scored now where not stored)."""
        def other_lp(other: Any) -> tuple[str, np.ndarray]:
            spec = register_model(other, self._raw_specs, self._scorers,
                                   self.store.config().model_files)  # (as now)
            if self.store.scores(f"compare:{spec}") is None:  # joined now: never by
                self._check_compared_join(spec)  # positions alone, unconfirmed
            return spec, self._logprobs(f"compare:{spec}", spec, rows, progress)[rows]
        return other_lp

    def _check_compared_join(self, spec: str) -> None:
        """Refuse a ``table:`` compared now (``estimate --compare``) whose ids and the
        pool's both look like row numbers, unless ``estimate(ids_are_positions=True)``
        confirms it (:mod:`activetest.session.table_positions`, as ``init`` refuses it)."""
        from activetest.session.compared_join import check_compared_join

        check_compared_join(self, spec, confirmed=self._ids_are_positions)

    def labelled_draws(self) -> est.LabelledDraws:
        """The usable labelled prefix of the draws (what every estimate is computed from)."""
        used, answers, waiting = draw.usable_prefix(self.store)
        first = None
        if waiting:
            a = next(a for a in self.store.acquisitions()[len(used):]
                     if a.index not in answers)
            first = (a.item_id, a.step)
        rows = np.array([a.index for a in used], dtype=np.int64)
        return est.LabelledDraws(
            n_pool=len(self._pool), item_ids=tuple(a.item_id for a in used),
            steps=tuple(a.step for a in used), rows=rows,
            q=np.array([a.q for a in used], dtype=np.float64),
            y=np.array([answers[i] for i in rows], dtype=np.int64),
            n_selected=self.store.n_acquired(), n_waiting=waiting, first_unlabelled=first)

    def target_logprobs(self, draws: est.LabelledDraws, *, progress: bool = True) -> np.ndarray:
        """``(K, C)`` target log-probs at the labelled draws (scored now if not stored).

        Raises:
            SessionError: a graded session (its target gives answers).
        """
        lp = self.kind.target_logprobs(draws, self._target_score(progress), required=True)
        assert lp is not None
        return lp

    def item_losses(self, draws: est.LabelledDraws, *, progress: bool = True,
                    ) -> dict[str, np.ndarray]:
        """Metric -> ``(K,)`` the target's loss at each labelled draw.

        Classification: log loss / 0-1 loss of the target's class log-probs against
        the label. Graded: ``1 - score`` of the judgment level given.
        """
        t_lp = self.kind.target_logprobs(draws, self._target_score(progress))
        return self.kind.losses(draws, self.metrics, t_lp)  # scored once, then stored

    # ------------------------------------------------------------------ estimates

    def estimate(self, *, compare: Sequence[Any] | Any = (), n_boot: int | None = None,
                 level: float | None = None, target_width: float | None = None,
                 record: bool = True, progress: bool = True,
                 ids_are_positions: bool = False) -> EstimateReport:
        """Estimate every metric from the labels so far.

        Args:
            compare: other target model spec(s) (or Scorer objects) to compare with
                the session's target on the same labels.
            n_boot, level: bootstrap resamples and coverage (default: the session's).
            target_width: also project the labels needed for this interval width.
            record: store the estimates in the session's history (skipped, without
                an error, when the session file is read-only).
            progress: progress bars while scoring targets on labelled items.
            ids_are_positions: confirm a compared ``table:``'s join by ids that look
                like positions (refused otherwise, as at ``init``; docs/history.md).

        Raises:
            SessionError: no usable labels yet; a compared table joined by ids that look
                like positions, unconfirmed.
            ValueError: ``n_boot``, ``level`` or ``target_width`` of the wrong type or
                out of range (:mod:`activetest.session.options`).
        """
        self._ids_are_positions = ids_are_positions
        try:
            return self._estimate(compare=compare, n_boot=n_boot, level=level,
                                  target_width=target_width, record=record,
                                  progress=progress).report
        finally:
            self._ids_are_positions = False

    def _estimate(self, *, compare: Sequence[Any] | Any, n_boot: int | None,
                  level: float | None, target_width: float | None, record: bool,
                  progress: bool, curves_from: int | None = None) -> EstimateParts:
        """:meth:`estimate`, with what it was computed from (:class:`EstimateParts`). The
        pool's log-probs are read once for all its parts. ``curves_from``: the first
        budget the blind spots are computed at (None: where the anytime CS starts; the
        report's curves need every budget, as each budget's estimate widens them)."""
        with self.store.shared_scores():
            return estimate_parts(self, compare=compare, n_boot=n_boot, level=level,
                                  curves_from=curves_from, target_width=target_width,
                                  record=record, progress=progress)

    def estimates_history(self) -> list[EstimateRow]:
        """Every recorded estimate, oldest first."""
        return self.store.estimates()

    # ------------------------------------------------------------------ report

    def report_data(self, *, compare: Sequence[Any] | Any = (),
                    target_width: float | None = None, truth: Mapping[str, float] | None = None,
                    n_points: int = 40, title: str | None = None, notes: Sequence[str] = (),
                    progress: bool = True) -> Any:
        """The :class:`activetest.session.report.ReportData` of the session as it stands.

        ``compare``, ``target_width`` and ``progress`` are those of :meth:`estimate`
        (computed once, not recorded); ``truth``, ``n_points``, ``title`` and ``notes``
        those of :func:`activetest.session.report.build.report_data`.
        """
        from activetest.session.session_report import report_data

        return report_data(self, compare=compare, target_width=target_width, truth=truth,
                           n_points=n_points, title=title, notes=notes, progress=progress)

    def write_report(self, out_dir: str | os.PathLike[str], *, html: bool = True,
                     **kwargs: Any) -> Path:
        """Write ``report.md``, ``report.html`` and PNG figures into ``out_dir``.

        ``html``: also write ``report.html`` (the figures inlined; False: the Markdown
        and the figures only, as :func:`activetest.session.report.write_report` takes
        it). The other keyword arguments are those of :meth:`report_data`. Returns the
        Markdown path.

        Raises:
            TypeError: a keyword neither this method nor :meth:`report_data` takes,
                named with those they do (QA: Python's "Session.report_data() got an
                unexpected keyword argument", naming the method not called).
            ValueError: ``html`` is not True or False, or another option of the wrong
                type or range (before anything is estimated or written).
        """
        from activetest.session.session_report import write_report

        return write_report(self, out_dir, html=html, kwargs=kwargs)

    # ------------------------------------------------------------------ status

    def status(self) -> SessionStatus:
        """Where the session stands."""
        from activetest.session.session_status import session_status

        return session_status(self)

    def waiting(self) -> Waiting | None:
        """The first unlabelled draw and the later labels that wait for it (or None)."""
        return draw.waiting(self.store)

    # ------------------------------------------------------------------ files

    def export(self, path: str | os.PathLike[str], *, format: str | None = None,
               which: str = "pending", predictions: bool = True,
               acquisitions: Sequence[Acquisition] | None = None,
               overwrite: bool = False) -> int:
        """Write drawn items to a file for labelling elsewhere; returns how many.

        Args:
            path: the file.
            format: ``csv``, ``tsv``, ``jsonl``, ``json`` (a sheet) or ``labelstudio``
                (Label Studio task import); default from the suffix, with ``.json``
                meaning Label Studio.
            which: ``pending`` (drawn, unlabelled), ``selected`` (all drawn) or
                ``labelled`` (with their labels, by class name).
            predictions: include the surrogate's guess (Label Studio pre-annotation;
                none where it has no single guess, e.g. ``uniform``, nor in a sheet of
                compared answers, which is blind: the surrogate judged the target's
                answers only, so a guess would say which answer is the target's); False
                hides it from the people labelling (a guess can sway them). A sheet of
                compared answers lists each item's answers in their shown order, marked
                ``answer_of`` A, B, ... (the page's letters), no model named.
            Sheets carry each item's ``draw`` step: labels count in draw order.
            acquisitions: export exactly these draws instead (``which`` is ignored).
            overwrite: replace an existing file that holds labels filled in. Without it
                such a file is written over only where the session stores every answer
                in it (imported: the same label, an annotator's kept vote, a compared
                answer's judgment); one answer not stored refuses it.

        Raises:
            ValueError: ``path`` is the session file, a folder, in a missing folder, or
                (without ``overwrite``) an existing file with an answer the session does
                not store (named) or one that cannot be read as a sheet; nothing is
                written.
        """
        from activetest.session.exchange import export_session

        return export_session(self, path, format=format, which=which,
                              predictions=predictions, acquisitions=acquisitions,
                              overwrite=overwrite)

    def import_file(self, path: str | os.PathLike[str], *, format: str | None = None,
                    overwrite: bool = False, resolve: str = "skip",
                    trust_people: bool = False, ids_are_positions: bool = False,
                    **options: Any) -> LabelImport:
        """Import labels from a sheet or a Label Studio export.

        All or nothing: every record is checked, and labels and compared answers'
        judgments are written in ONE transaction (a failure half-way changes
        nothing). Items that annotators label differently are left out (or settled
        by ``resolve``, or by a Label Studio ground-truth annotation) and reported, the
        rest imported (see :meth:`add_labels`); each annotator's label is kept for
        agreement (:func:`activetest.session.annotators.keep_votes`);
        so are compared answers that are the same text as another answer to the
        item and judged differently (:func:`compare_graded.settle_same_answers`).
        A row carrying a ``content_check`` (every export writes one) must show the
        item its id names; a row without one, the item's text in whatever of its
        fields the row carries (:func:`labels.check_shown`). ``options`` go to
        :func:`activetest.session.labelio.import_labels` (``id_column``,
        ``label_column``, ``from_name``, ``label_base``); ``trust_people``: as
        :meth:`add_labels` (an lm-eval session's items its target has not run).
        A sheet whose rows carry neither (a hand-made ``item_id,label`` file) keyed by
        ids that look like row numbers, on a pool whose ids look so too, is refused
        unless ``ids_are_positions`` (``--ids-are-positions``) or the session's ``init``
        confirmed such a join (:mod:`activetest.session.sheet_positions`).

        Raises:
            LabelFileError: a malformed file (file and line named).
            LabelError: unknown items, items never selected, a row whose shown
                content is not its item's, a stored label that differs without
                ``overwrite`` (nothing written).
            SessionError: labels for items an lm-eval session's target has not run,
                without ``trust_people``; a join by ids that look like positions, not
                confirmed (nothing written).
        """
        from activetest.session.exchange import import_session_file

        return import_session_file(self, path, format=format, overwrite=overwrite,
                                   resolve=resolve, trust_people=trust_people,
                                   ids_are_positions=ids_are_positions, **options)
