"""The active-testing workflow over a persistent session: create, select, label, estimate.

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

Beyond the paper: a label-noise alarm (items whose label the target or the
surrogate finds very unlikely, NLL > 5 by default; the paper's SST-2 failure had
75 % of such items mislabelled), a projection of the labels needed for a
requested interval width, and the paired comparison of two targets on the same
labels (LURE of the per-item loss difference is unbiased for the difference).
"""

from __future__ import annotations

import functools
import math
import os
import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session.store import (
    Acquisition,
    EstimateRow,
    LabelChange,
    SessionError,
    SessionStore,
    StoredScores,
)
from activetest.stats import (
    ActiveSampler,
    BootstrapResult,
    SamplerState,
    acquisition_scores,
    bootstrap,
    labels_for_width,
    log_loss,
    lure_terms,
    zero_one_loss,
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

#: Metrics a session estimates: mean log loss and error rate (mean 0-1 loss).
METRICS = ("log_loss", "error_rate")
#: Values of ``metric=``: one metric or ``both``.
METRIC_CHOICES = ("log_loss", "error_rate", "both")
#: Acquisitions a session can use (label-free ones; ``nll``/oracles need the labels).
ACQUISITION_CHOICES = ("ce", "pe", "zero_one", "uniform")
#: Formats :meth:`Session.export` writes.
EXPORT_FORMATS = ("csv", "tsv", "jsonl", "json", "labelstudio")

_NOISE_RULES = ("any", "all")


class LabelError(SessionError):
    """Labels that cannot be accepted: unknown item or class, not selected, conflicting."""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class FlaggedItem:
    """A labelled item whose label both or either model finds very unlikely.

    Attributes:
        item_id: the item.
        step: its draw step.
        label: the class index it was given.
        target_nll: ``-log p_target(label | x)``.
        surrogate_nll: ``-log pi_surrogate(label | x)``.
    """

    item_id: str
    step: int
    label: int
    target_nll: float
    surrogate_nll: float


@dataclass(frozen=True)
class MetricEstimate:
    """The estimate of one metric.

    Attributes:
        metric: ``log_loss`` or ``error_rate``.
        active: LURE estimate with its bootstrap interval (unbiased under the
            session's sampling).
        uniform: the plain mean of the labelled items' losses with its bootstrap
            interval: what uniform sampling would report with as many labels, but
            BIASED here (the items were not drawn uniformly); shown for contrast.
        curve: the LURE estimate after each of the first K labels.
        uniform_curve: the running plain mean after each label.
        without_flagged: LURE mean with the flagged items' terms dropped (None if
            nothing was flagged). Dropping items breaks unbiasedness.
        labels_needed: total labels projected for ``target_width`` (or None).
        cv: control-variate LURE, ``mean_pool(h) + LURE(loss - h)`` with ``h`` the
            surrogate's expected loss of the target on every pool item (for PE
            sessions, whose target is not scored on the pool: of itself), and its
            bootstrap interval. Unbiased like LURE (beta = 1, fixed ``h``); narrower
            when the surrogate's expectation tracks the real losses. None when no
            control can be formed.
        control_mean: the pool mean of ``h`` (the ASE estimate, which needs no labels).
    """

    metric: str
    active: BootstrapResult
    uniform: BootstrapResult
    curve: tuple[float, ...] = ()
    uniform_curve: tuple[float, ...] = ()
    without_flagged: float | None = None
    labels_needed: int | None = None
    cv: BootstrapResult | None = None
    control_mean: float | None = None


@dataclass(frozen=True)
class Comparison:
    """Two targets on the same labels.

    Attributes:
        spec: the second target's model spec.
        metric: the metric compared.
        other: LURE estimate of the second target's risk.
        difference: LURE estimate of ``risk(target) - risk(other)`` with its
            bootstrap interval (unbiased: LURE of the per-item difference).
    """

    spec: str
    metric: str
    other: BootstrapResult
    difference: BootstrapResult


@dataclass(frozen=True)
class EstimateReport:
    """Everything :meth:`Session.estimate` computes.

    Attributes:
        n_pool: N.
        n_labels: K, the labels used (the labelled prefix of the draw order).
        n_selected: draws so far.
        n_waiting: labels of later draws that wait for an earlier unlabelled draw.
        metrics: per metric, the estimates.
        flagged: items flagged by the label-noise alarm (among the K used).
        noise_thresholds: ``(target NLL, surrogate NLL, rule)`` of the alarm.
        comparisons: paired comparisons (``compare=``).
        target_width: the interval width asked for, or None.
        level: interval coverage.
        warnings: things the user should know (few labels, waiting labels, ...).
    """

    n_pool: int
    n_labels: int
    n_selected: int
    n_waiting: int
    metrics: dict[str, MetricEstimate]
    flagged: list[FlaggedItem] = field(default_factory=list)
    noise_thresholds: tuple[float, float, str] = (5.0, 5.0, "any")
    comparisons: list[Comparison] = field(default_factory=list)
    target_width: float | None = None
    level: float = 0.95
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable data."""
        out = asdict(self)
        for m in out["metrics"].values():
            m["curve"] = list(m["curve"])
            m["uniform_curve"] = list(m["uniform_curve"])
        out["noise_thresholds"] = list(self.noise_thresholds)
        return out


@dataclass(frozen=True)
class LabelImport:
    """What :meth:`Session.add_labels` did.

    Attributes:
        added: items labelled for the first time.
        changed: items whose label was overwritten.
        unchanged: records that repeated an existing label.
        changes: the history rows written.
    """

    added: int
    changed: int
    unchanged: int
    changes: list[LabelChange]


@dataclass(frozen=True)
class SessionStatus:
    """Where a session stands.

    Attributes:
        path: the session file.
        n_items: pool size N.
        n_selected: draws so far.
        n_labelled: labelled items (all drawn).
        n_pending: drawn items still waiting for a label.
        n_usable: labels usable by the estimate (the labelled prefix of the draws).
        metric, acquisition, surrogate, target, seed, alpha: the configuration.
        last_estimates: the most recent recorded estimate per (metric, method).
        created: when the session was created.
    """

    path: str
    n_items: int
    n_selected: int
    n_labelled: int
    n_pending: int
    n_usable: int
    metric: str
    acquisition: str
    surrogate: str
    target: str
    seed: int
    alpha: float
    last_estimates: list[EstimateRow]
    created: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable data."""
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def _resolve_task(task: Task | str | os.PathLike[str]) -> Task:
    if isinstance(task, Task):
        return task
    from activetest.data.taskfile import load_task

    return load_task(task if isinstance(task, str) else Path(task))


def _load_items(src: Sequence[Item] | str | os.PathLike[str], task: Task, what: str,
                options: Mapping[str, Any] | None) -> tuple[list[Item], dict[str, Any]]:
    if isinstance(src, (str, os.PathLike)):
        from activetest.data.pool import load_pool

        pool = load_pool(src, task=task, **dict(options or {}))
        info = {"source": str(Path(src).resolve()), "format": pool.format, "sha256": pool.sha256}
        return list(pool), info
    items = list(src)
    for it in items:
        if not isinstance(it, Item):
            raise TypeError(f"{what} must be a file path or a sequence of Item, got "
                            f"{type(it).__name__}")
    return items, {"source": getattr(src, "source", "") or "<items>",
                   "format": getattr(src, "format", ""), "sha256": getattr(src, "sha256", "")}


def _normalise_spec(spec: str) -> str:
    """Make file paths in a model spec absolute, so later commands work from any folder."""
    from activetest.models.registry import BACKENDS, CALIBRATED

    if spec.startswith(CALIBRATED):
        return CALIBRATED + _normalise_spec(spec[len(CALIBRATED):])
    head, sep, rest = spec.partition(":")
    if sep and head in BACKENDS:
        if head != "openai" and rest and Path(rest).expanduser().exists():
            return f"{head}:{Path(rest).expanduser().resolve()}"
        return spec
    p = Path(spec).expanduser()
    if p.exists() and not sep:
        return str(p.resolve())
    return spec


def _bootstrap_rng(seed: int, k: int, name: str) -> np.random.Generator:
    # Deterministic per (session seed, labels, quantity): the same call gives the same interval.
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, k,
                                                         zlib.crc32(name.encode())]))


def _per_item_loss(metric: str, logprobs: np.ndarray, labels: np.ndarray) -> np.ndarray:
    if metric == "log_loss":
        return log_loss(logprobs, labels)
    return zero_one_loss(logprobs, labels)


# --------------------------------------------------------------------------- session


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
    """

    def __init__(self, store: SessionStore, *, scorers: Mapping[str, Any] | None = None,
                 cache_dir: str | os.PathLike[str] | None = None,
                 threads: int | None = None) -> None:
        self.store = store
        self.threads = threads
        self._config = store.config()
        self._task: Task | None = None
        self._scorers: dict[str, Any] = dict(scorers or {})
        self._cache_dir = (str(cache_dir) if cache_dir is not None
                           else self._config.get("cache_dir"))
        self._items: list[Item] | None = None
        self._index: dict[str, int] | None = None

    # ------------------------------------------------------------------ creation

    @classmethod
    def create(cls, path: str | os.PathLike[str], *,
               pool: Sequence[Item] | str | os.PathLike[str],
               task: Task | str | os.PathLike[str],
               surrogate: Any, target: Any,
               metric: str = "log_loss", acquisition: str | None = None, alpha: float = 0.1,
               seed: int | None = None, shots: int | None = None,
               examples: Sequence[Item] | str | os.PathLike[str] | None = None,
               target_shots: int | None = None, noise_target_nll: float = 5.0,
               noise_surrogate_nll: float = 5.0, noise_rule: str = "any",
               n_boot: int = 1000, level: float = 0.95,
               pool_options: Mapping[str, Any] | None = None,
               cache_dir: str | os.PathLike[str] | None = None, use_cache: bool = True,
               overwrite: bool = False, progress: bool = True,
               busy_timeout: float = 5.0, threads: int | None = None) -> Session:
        """Create a session: load the pool, score it, store everything.

        Args:
            path: the new session file.
            pool: a pool file (any format :func:`activetest.data.load_pool` reads) or
                items. Labels found in the file are kept apart as "data labels" (for
                simulation with :meth:`label_from_data`); they are never used as answers.
            task: a Task, a built-in task name or a task file.
            surrogate, target: model specs (``"smollm2-135m"``, ``"table:preds.csv"``, ...,
                see :func:`activetest.models.get_scorer`) or Scorer objects.
            metric: ``log_loss``, ``error_rate`` or ``both``.
            acquisition: ``ce`` (default for log loss), ``pe`` (surrogate only; the
                target is then scored only on labelled items), ``zero_one`` (default
                for error rate) or ``uniform``.
            alpha: the proposal floor (0.1 in the paper).
            seed: the sampler's seed (default: fresh entropy, stored).
            shots: in-context examples to use; drawn stratified from ``examples``
                with ``seed``. Default: all of ``examples`` in their order.
            examples: labelled in-context examples (file or items), disjoint from the pool.
            target_shots: how many of the examples the target sees (0 = zero-shot;
                default: the same as the surrogate).
            noise_target_nll, noise_surrogate_nll, noise_rule: the label-noise alarm
                flags an item when its target NLL exceeds the first threshold or
                (``"any"``; ``"all"``: and) its surrogate NLL exceeds the second.
            n_boot, level: bootstrap resamples and interval coverage.
            pool_options: extra keyword arguments for ``load_pool`` (columns, ...), for
                the pool file and the examples file alike.
            cache_dir, use_cache: the score cache (makes a re-run instant).
            overwrite: replace an existing file at ``path``.
            progress: show progress bars while scoring.
            threads: CPU threads for llama.cpp models (see :class:`Session`).

        Raises:
            ValueError: (incl. :class:`SessionError`) bad arguments or input files.
        """
        if metric not in METRIC_CHOICES:
            raise ValueError(f"metric must be one of {', '.join(METRIC_CHOICES)}, got {metric!r}")
        if acquisition is None:
            acquisition = "zero_one" if metric == "error_rate" else "ce"
        if acquisition not in ACQUISITION_CHOICES:
            raise ValueError(f"acquisition must be one of {', '.join(ACQUISITION_CHOICES)}, "
                             f"got {acquisition!r}")
        if not (isinstance(alpha, (int, float)) and 0 < alpha <= 1):
            raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
        if noise_rule not in _NOISE_RULES:
            raise ValueError(f"noise_rule must be 'any' or 'all', got {noise_rule!r}")
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        if n_boot < 2:
            raise ValueError(f"n_boot must be >= 2, got {n_boot!r}")
        p = Path(path)
        if p.exists() and not overwrite:
            from activetest.session.store import SessionExistsError

            raise SessionExistsError(f"{p} already exists; choose another file name or pass "
                                     f"--overwrite to replace it")
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] % 2**63)
        seed = int(seed)
        t = _resolve_task(task)
        items, pool_info = _load_items(pool, t, "pool", pool_options)
        _check_unique(items, "the pool")
        if not items:
            raise SessionError("the pool is empty: nothing to evaluate")
        ex_info: dict[str, Any] = {}
        chosen: list[Item] = []
        if examples is not None:
            ex_items, ex_info = _load_items(examples, t, "examples", pool_options)
            ex_items = [e for e in ex_items if e.label is not None]
            if shots is None:
                chosen = ex_items
            else:
                from activetest.data.split import select_examples

                chosen = list(select_examples(ex_items, shots, np.random.default_rng(seed),
                                              n_classes=t.n_classes))
            pool_texts = {tuple(sorted(it.fields.items())) for it in items}
            dup = [e.id for e in chosen if tuple(sorted(e.fields.items())) in pool_texts]
            if dup:
                warnings.warn(f"{len(dup)} in-context example(s) also occur in the pool (e.g. "
                              f"{dup[0]!r}); examples should be disjoint from the pool",
                              stacklevel=2)
        elif shots:
            raise SessionError(f"shots={shots} needs labelled in-context examples: pass "
                               f"examples= (--examples FILE), disjoint from the pool")
        if target_shots is None:
            target_shots = len(chosen)
        if not 0 <= target_shots <= len(chosen):
            raise ValueError(f"target_shots must be in 0..{len(chosen)} (the number of "
                             f"examples), got {target_shots}")
        scorers: dict[str, Any] = {}
        specs: dict[str, str] = {}
        for role, m in (("surrogate", surrogate), ("target", target)):
            if isinstance(m, (str, os.PathLike)):
                specs[role] = _normalise_spec(os.fspath(m))
            else:
                specs[role] = f"object:{getattr(m, 'name', type(m).__name__)}"
                scorers[specs[role]] = m
        from activetest import __version__
        from activetest.data.taskfile import task_to_dict

        config: dict[str, Any] = {
            "task": task_to_dict(t), "task_ref": task if isinstance(task, str) else t.name,
            "pool": {**pool_info, "n_items": len(items)},
            "examples": {**ex_info, "n": len(chosen)},
            "surrogate": specs["surrogate"], "target": specs["target"],
            "metric": metric, "acquisition": acquisition, "alpha": float(alpha), "seed": seed,
            "shots": len(chosen), "target_shots": int(target_shots),
            "noise": {"target_nll": float(noise_target_nll),
                      "surrogate_nll": float(noise_surrogate_nll), "rule": noise_rule},
            "n_boot": int(n_boot), "level": float(level),
            "cache_dir": None if cache_dir is None else str(Path(cache_dir).resolve()),
            "use_cache": bool(use_cache), "activetest_version": __version__,
        }
        # Score before creating the file: a failed or interrupted scoring leaves no
        # half-made session (and the score cache keeps the finished chunks).
        helper = _Scoring(t, chosen, scorers, config["cache_dir"], use_cache, threads)
        jobs = [functools.partial(helper.score, "surrogate", specs["surrogate"], items,
                                  len(chosen), progress)]
        if acquisition != "pe":  # PE needs no target predictions on the pool
            jobs.append(functools.partial(helper.score, "target", specs["target"], items,
                                          int(target_shots), progress))
        if len(jobs) > 1 and helper.can_run_side_by_side(specs.values()):
            # Surrogate and target side by side: each llama.cpp model defaults to half
            # the cores, so two 1-thread models fill a 2-core machine (measured: the
            # pair takes as long as the slower model alone, not the sum).
            from activetest.models._util import run_parallel

            results = run_parallel(jobs, progress=progress)
        else:
            results = [job() for job in jobs]
        s_lp, s_prov = results[0]
        t_lp = results[1][0] if len(results) > 1 else None
        if len(results) > 1:
            t_prov = results[1][1]
        scores = acquisition_scores(acquisition, surrogate_logprobs=s_lp, target_logprobs=t_lp,
                                    n=len(items))
        sampler = ActiveSampler(scores, alpha=float(alpha), seed=seed)

        def init(store: SessionStore) -> None:
            store.put_scores("surrogate", specs["surrogate"], s_lp, s_prov)
            if t_lp is not None:
                store.put_scores("target", specs["target"], t_lp, t_prov)
            else:
                store.put_scores("target", specs["target"],
                                 np.full((len(items), t.n_classes), np.nan),
                                 {"spec": specs["target"], "note": "scored on labelled items "
                                  "only (PE acquisition)"})
            store.put_scores("acquisition", acquisition, scores[:, None],
                             {"acquisition": acquisition, "alpha": float(alpha)},
                             predictions=False)
            state = sampler.state()
            store.init_sampler(state.alpha, seed, state.rng_state)

        store = SessionStore.create(p, config=config, items=items, examples=chosen,
                                    overwrite=overwrite, busy_timeout=busy_timeout, init=init)
        return cls(store, scorers=scorers, cache_dir=cache_dir, threads=threads)

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = 5.0,
             scorers: Mapping[str, Any] | None = None,
             cache_dir: str | os.PathLike[str] | None = None,
             threads: int | None = None) -> Session:
        """Open an existing session (see :meth:`SessionStore.open` for the errors)."""
        return cls(SessionStore.open(path, busy_timeout=busy_timeout), scorers=scorers,
                   cache_dir=cache_dir, threads=threads)

    def close(self) -> None:
        """Close the session file."""
        self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ basics

    @property
    def path(self) -> Path:
        """The session file."""
        return self.store.path

    @property
    def config(self) -> dict[str, Any]:
        """The configuration (a copy)."""
        return dict(self._config)

    @property
    def task(self) -> Task:
        """The session's task."""
        if self._task is None:
            from activetest.data.taskfile import task_from_dict

            self._task = task_from_dict(self._config["task"], f"{self.path}: config.task")
        return self._task

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics estimated."""
        m = self._config["metric"]
        return METRICS if m == "both" else (m,)

    @property
    def n_items(self) -> int:
        """Pool size N."""
        return len(self.items())

    def items(self) -> list[Item]:
        """The pool (labels are the pool file's data labels, not answers)."""
        if self._items is None:
            self._items = self.store.items()
            self._index = {it.id: i for i, it in enumerate(self._items)}
        return self._items

    def _row(self, item_id: str) -> int | None:
        self.items()
        assert self._index is not None
        return self._index.get(str(item_id))

    def item(self, item_id: str) -> Item:
        """The pool item with this id.

        Raises:
            LabelError: no such item.
        """
        row = self._row(item_id)
        if row is None:
            raise LabelError(f"item {item_id!r} is not in the pool")
        return self.items()[row]

    def examples(self) -> list[Item]:
        """The in-context examples, in prompt order."""
        return self.store.examples()

    # ------------------------------------------------------------------ selection

    def _acq_scores(self) -> np.ndarray:
        stored = self.store.scores("acquisition")
        if stored is None:
            raise SessionError(f"{self.path}: the session has no acquisition scores")
        return stored.logprobs[:, 0]

    def select(self, n: int) -> list[Acquisition]:
        """Draw the next ``n`` items (sequentially; persisted with the sampler state).

        Raises:
            ValueError: ``n`` is not a positive integer or exceeds the items left.
        """
        if isinstance(n, bool) or int(n) != n or n < 1:
            raise ValueError(f"the number of items to select must be a positive integer, "
                             f"got {n!r}")
        scores = self._acq_scores()
        with self.store.transaction():
            # Read the state inside the write transaction: no other process can draw between.
            row = self.store.sampler_row()
            if row is None:
                raise SessionError(f"{self.path}: the session has no sampler state")
            alpha, seed, rng_state = row
            acq = self.store.acquisitions()
            left = len(scores) - len(acq)
            if n > left:
                raise ValueError(f"cannot select {n} items: only {left} of {len(scores)} "
                                 f"remain undrawn")
            state = SamplerState(alpha=alpha, seed=seed, rng_state=rng_state,
                                 acquired=[a.index for a in acq], q=[a.q for a in acq])
            sampler = ActiveSampler.from_state(scores, state)
            idx, q = sampler.draw(int(n))
            return self.store.record_draws(idx.tolist(), q.tolist(),
                                           sampler.state().rng_state, expected_steps=len(acq))

    def acquisitions(self) -> list[Acquisition]:
        """Every draw so far, in order."""
        return self.store.acquisitions()

    def pending(self) -> list[Acquisition]:
        """Drawn items without a label, in draw order."""
        labelled = self.store.labels()
        return [a for a in self.store.acquisitions() if a.index not in labelled]

    # ------------------------------------------------------------------ labels

    def parse_label(self, value: int | str) -> int:
        """A class index from a label word, class name, label-map key or 0-based index.

        Raises:
            LabelError: not a class of the task.
        """
        t = self.task
        if isinstance(value, bool):
            raise LabelError(f"label {value!r} is a boolean; expected a class")
        if isinstance(value, (int, np.integer)):
            if 0 <= int(value) < t.n_classes:
                return int(value)
        else:
            s = str(value).strip()
            for names in (t.classes, t.class_names):
                if s in names:
                    return names.index(s)
            if s in t.label_map:
                return t.label_map[s]
            folded = s.casefold()
            for names in (t.classes, t.class_names):
                for i, w in enumerate(names):
                    if w.strip().casefold() == folded:
                        return i
            if s.lstrip("+").isdigit() and int(s) < t.n_classes:
                return int(s)
        raise LabelError(f"unknown label {value!r}; expected one of "
                         f"{', '.join(map(repr, t.classes))} or a class index 0..{t.n_classes - 1}")

    def labels(self) -> dict[str, int]:
        """Current labels: item id -> class index."""
        return {lab.item_id: lab.label for lab in self.store.labels().values()}

    def add_label(self, item_id: str, label: int | str, *, source: str = "api",
                  overwrite: bool = False) -> LabelChange | None:
        """Label one drawn item (committed at once); returns the change, or None if unchanged.

        Raises:
            LabelError: unknown item or class, item never selected, or a different
                existing label without ``overwrite``.
        """
        result = self.add_labels([(item_id, label)], source=source, overwrite=overwrite)
        return result.changes[0] if result.changes else None

    def add_labels(self, records: Iterable[Any], *, source: str = "import",
                   overwrite: bool = False, where: str = "") -> LabelImport:
        """Add many labels in one transaction, after checking all of them.

        Args:
            records: ``(item_id, label)`` pairs or objects with ``item_id`` and
                ``label`` attributes (and optionally ``where``, e.g. "labels.csv,
                line 4", used in error messages).
            source: recorded with each label (``cli``, ``import:labels.csv``, ...).
            overwrite: replace existing different labels (history kept).
            where: names the input in error messages when records carry no ``where``.

        Raises:
            LabelError: listing every bad record (file and line where known);
                nothing is written then.
        """
        problems: list[str] = []
        seen: dict[int, tuple[int, str]] = {}
        answers: list[tuple[int, int, str]] = []
        current = self.store.labels()
        drawn = {a.index for a in self.store.acquisitions()}
        unchanged = 0
        for n, rec in enumerate(records, start=1):
            rec_source = source
            if isinstance(rec, tuple):
                item_id, raw = rec[0], rec[1]
                loc = rec[2] if len(rec) > 2 else (f"{where}, record {n}" if where else "")
            else:
                item_id, raw = rec.item_id, rec.label
                loc = getattr(rec, "where", None) or (f"{where}, record {n}" if where else "")
                rec_source = getattr(rec, "source", None) or source
                if getattr(rec, "annotator", None):
                    rec_source = f"{rec_source} ({rec.annotator})"
            prefix = f"{loc}: " if loc else ""
            row = self._row(str(item_id))
            if row is None:
                problems.append(f"{prefix}item {item_id!r} is not in the pool")
                continue
            try:
                y = self.parse_label(raw)
            except LabelError as exc:
                problems.append(f"{prefix}item {item_id!r}: {exc}")
                continue
            if row not in drawn:
                problems.append(f"{prefix}item {item_id!r} was never selected; only selected "
                                f"items can be labelled (their labels are weighted by the "
                                f"probability they were drawn with)")
                continue
            if row in seen:
                y0, loc0 = seen[row]
                if y0 != y:
                    problems.append(f"{prefix}item {item_id!r} is labelled {y} here but {y0} at "
                                    f"{loc0 or 'an earlier record'}")
                continue
            seen[row] = (y, loc)
            old = current.get(row)
            if old is not None and old.label != y and not overwrite:
                problems.append(f"{prefix}item {item_id!r} already has label "
                                f"{self.task.classes[old.label]!r} (from {old.source}); this "
                                f"gives {self.task.classes[y]!r}: pass --overwrite "
                                f"(overwrite=True) to replace it (the old label stays in the "
                                f"history)")
                continue
            if old is not None and old.label == y:
                unchanged += 1
                continue
            answers.append((row, y, rec_source))
        if problems:
            shown = problems[:20]
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise LabelError(f"{len(problems)} label problem(s); nothing was imported:\n  "
                             + "\n  ".join(shown) + more)
        changes = self.store.set_labels(answers, source, overwrite=overwrite)
        added = sum(c.action == "add" for c in changes)
        return LabelImport(added, len(changes) - added, unchanged, changes)

    def undo(self, change: LabelChange, *, source: str = "undo") -> LabelChange:
        """Revert one label change (committed at once)."""
        return self.store.revert(change, source)

    def label_from_data(self, limit: int | None = None, *, source: str = "data") -> int:
        """Simulated labeller: answer pending items with the pool file's labels.

        Each answer is its own transaction, as in interactive labelling. Returns the
        number labelled.

        Raises:
            LabelError: a pending item has no label in the pool file.
        """
        items = self.items()
        done = 0
        for a in self.pending():
            if limit is not None and done >= limit:
                break
            y = items[a.index].label
            if y is None:
                raise LabelError(f"item {a.item_id!r} has no label in the pool file; the "
                                 f"simulated labeller needs labelled pool data")
            self.store.set_labels([(a.index, int(y))], source)
            done += 1
        return done

    def history(self, item_id: str | None = None) -> list[LabelChange]:
        """The label history (of one item, or all), oldest first."""
        return self.store.label_history(None if item_id is None else self._row(item_id))

    # ------------------------------------------------------------------ scoring

    def _scoring(self) -> _Scoring:
        shots = int(self._config.get("shots", 0))
        return _Scoring(self.task, self.examples()[:shots], self._scorers, self._cache_dir,
                        bool(self._config.get("use_cache", True)), self.threads)

    def _ensure_rows(self, role: str, spec: str, rows: np.ndarray, shots: int,
                     progress: bool) -> StoredScores:
        stored = self.store.scores(role)
        if stored is None:
            n, c = len(self.items()), self.task.n_classes
            self.store.put_scores(role, spec, np.full((n, c), np.nan), {"spec": spec})
            stored = self.store.scores(role)
            assert stored is not None
        missing = rows[~stored.scored[rows]]
        if missing.size == 0:
            return stored
        items = self.items()
        lp, prov = self._scoring().score(role, spec, [items[i] for i in missing], shots, progress)
        return self.store.update_score_rows(role, missing.tolist(), lp, prov)

    # ------------------------------------------------------------------ estimates

    def _usable(self) -> tuple[list[Acquisition], dict[int, int], int]:
        acq = self.store.acquisitions()
        labels = {i: lab.label for i, lab in self.store.labels().items()}
        k = 0
        while k < len(acq) and acq[k].index in labels:
            k += 1
        waiting = sum(1 for a in acq[k:] if a.index in labels)
        return acq[:k], labels, waiting

    def estimate(self, *, compare: Sequence[Any] | Any = (), n_boot: int | None = None,
                 level: float | None = None, target_width: float | None = None,
                 record: bool = True, progress: bool = True) -> EstimateReport:
        """Estimate every metric from the labels so far.

        Args:
            compare: other target model spec(s) (or Scorer objects) to compare with
                the session's target on the same labels.
            n_boot, level: bootstrap resamples and coverage (default: the session's).
            target_width: also project the labels needed for this interval width.
            record: store the estimates in the session's history.
            progress: progress bars while scoring targets on labelled items.

        Raises:
            SessionError: no usable labels yet.
        """
        cfg = self._config
        n_boot = int(n_boot if n_boot is not None else cfg.get("n_boot", 1000))
        level = float(level if level is not None else cfg.get("level", 0.95))
        if target_width is not None and not target_width > 0:
            raise ValueError(f"target width must be > 0, got {target_width!r}")
        used, labels, waiting = self._usable()
        n_selected = self.store.n_acquired()
        K = len(used)
        if K == 0:
            if n_selected == 0:
                raise SessionError("no labels yet: select items (`activetest select`) and label "
                                   "them first")
            raise SessionError(f"no usable labels yet: the first selected item "
                               f"({self.store.acquisitions()[0].item_id!r}) has no label; LURE "
                               f"uses the labels of the first K draws")
        N = len(self.items())
        rows = np.array([a.index for a in used], dtype=np.int64)
        q = np.array([a.q for a in used])
        y = np.array([labels[i] for i in rows], dtype=np.int64)
        seed = int(cfg["seed"])
        t_scores = self._ensure_rows("target", cfg["target"], rows, int(cfg.get("target_shots",
                                     cfg.get("shots", 0))), progress)
        t_lp = t_scores.logprobs[rows]
        s_stored = self.store.scores("surrogate")
        assert s_stored is not None
        s_lp = s_stored.logprobs[rows]
        # Label-noise alarm.
        noise = cfg.get("noise", {})
        thr_t = float(noise.get("target_nll", 5.0))
        thr_s = float(noise.get("surrogate_nll", 5.0))
        rule = noise.get("rule", "any")
        t_nll = log_loss(t_lp, y)
        s_nll = log_loss(s_lp, y)
        hit = (t_nll > thr_t) | (s_nll > thr_s) if rule == "any" else (t_nll > thr_t) & (
            s_nll > thr_s)
        flagged = [FlaggedItem(used[j].item_id, used[j].step, int(y[j]), float(t_nll[j]),
                               float(s_nll[j])) for j in np.flatnonzero(hit)]
        notes: list[str] = []
        if K < 100:
            notes.append(f"only {K} labels: the bootstrap interval is unreliable below ~100 "
                         f"labels")
        if waiting:
            first = next(a for a in self.store.acquisitions()[K:] if a.index not in labels)
            notes.append(f"{waiting} label(s) of later draws wait for item {first.item_id!r} "
                         f"(draw {first.step}) to be labelled; LURE uses the first {K} draws")
        metrics: dict[str, MetricEstimate] = {}
        losses_by_metric: dict[str, np.ndarray] = {}
        controls = self._controls()
        for metric in self.metrics:
            losses = _per_item_loss(metric, t_lp, y)
            losses_by_metric[metric] = losses
            terms = lure_terms(losses, q, N)
            active = bootstrap(terms, n_boot=n_boot, level=level,
                               random_state=_bootstrap_rng(seed, K, f"lure:{metric}"))
            uniform = bootstrap(losses, n_boot=n_boot, level=level,
                                random_state=_bootstrap_rng(seed, K, f"mean:{metric}"))
            from activetest.stats import lure_curve, uniform_mean_curve

            curve = tuple(float(x) for x in lure_curve(losses, q, N))
            ucurve = tuple(float(x) for x in uniform_mean_curve(losses))
            without = float(terms[~hit].mean()) if hit.any() and (~hit).any() else None
            needed = labels_for_width(active, target_width) if target_width else None
            cv = control_mean = None
            if metric in controls:
                h = controls[metric]
                control_mean = float(h.mean())
                cv = bootstrap(control_mean + lure_terms(losses - h[rows], q, N), n_boot=n_boot,
                               level=level, random_state=_bootstrap_rng(seed, K, f"cv:{metric}"))
            metrics[metric] = MetricEstimate(metric, active, uniform, curve, ucurve, without,
                                             needed, cv, control_mean)
        comparisons: list[Comparison] = []
        others = [compare] if isinstance(compare, (str, os.PathLike)) or (
            compare and not isinstance(compare, (list, tuple))) else list(compare or ())
        for other in others:
            if isinstance(other, (str, os.PathLike)):
                spec = _normalise_spec(os.fspath(other))
            else:
                spec = f"object:{getattr(other, 'name', type(other).__name__)}"
                self._scorers[spec] = other
            o_scores = self._ensure_rows(f"compare:{spec}", spec, rows,
                                         int(cfg.get("target_shots", cfg.get("shots", 0))),
                                         progress)
            o_lp = o_scores.logprobs[rows]
            for metric in self.metrics:
                o_loss = _per_item_loss(metric, o_lp, y)
                other_res = bootstrap(lure_terms(o_loss, q, N), n_boot=n_boot, level=level,
                                      random_state=_bootstrap_rng(seed, K, f"other:{spec}:"
                                                                           f"{metric}"))
                d_terms = lure_terms(losses_by_metric[metric] - o_loss, q, N)
                diff = bootstrap(d_terms, n_boot=n_boot, level=level,
                                 random_state=_bootstrap_rng(seed, K, f"diff:{spec}:{metric}"))
                comparisons.append(Comparison(spec, metric, other_res, diff))
        report = EstimateReport(N, K, n_selected, waiting, metrics, flagged,
                                (thr_t, thr_s, rule), comparisons, target_width, level, notes)
        if record:
            self._record(report)
        return report

    def _controls(self) -> dict[str, np.ndarray]:
        """Per metric, the control variate ``h`` over the whole pool (see MetricEstimate.cv)."""
        from activetest.stats import control_values

        s_stored = self.store.scores("surrogate")
        t_stored = self.store.scores("target")
        if s_stored is None:
            return {}
        t_lp = t_stored.logprobs if t_stored is not None else None
        if t_lp is not None and not np.all(np.isfinite(t_lp)):
            t_lp = None  # PE: the target is scored on labelled items only
        out = {}
        for metric in self.metrics:
            loss = "log" if metric == "log_loss" else "zero_one"
            out[metric] = control_values(loss, surrogate_logprobs=s_stored.logprobs,
                                         target_logprobs=t_lp)
        return out

    def _record(self, report: EstimateReport) -> None:
        def put(metric: str, method: str, r: BootstrapResult, **details: Any) -> None:
            self.store.add_estimate(n_labels=report.n_labels, metric=metric, method=method,
                                    estimate=r.estimate, std=r.std, low=r.low, high=r.high,
                                    level=r.level, details=details)

        with self.store.transaction():
            for m in report.metrics.values():
                put(m.metric, "lure", m.active, n_flagged=len(report.flagged),
                    without_flagged=m.without_flagged, labels_needed=m.labels_needed)
                put(m.metric, "mean", m.uniform, note="plain mean; biased under active sampling")
                if m.cv is not None:
                    put(m.metric, "cv_lure", m.cv, control_pool_mean=m.control_mean)
            for c in report.comparisons:
                put(c.metric, f"lure:{c.spec}", c.other)
                put(c.metric, f"difference:{c.spec}", c.difference)

    def estimates_history(self) -> list[EstimateRow]:
        """Every recorded estimate, oldest first."""
        return self.store.estimates()

    # ------------------------------------------------------------------ report

    def report_data(self, *, compare: Sequence[Any] | Any = (),
                    target_width: float | None = None, truth: Mapping[str, float] | None = None,
                    n_points: int = 40, title: str | None = None,
                    notes: Sequence[str] = (), progress: bool = True) -> Any:
        """The :class:`activetest.session.report.ReportData` of the session as it stands.

        The history holds the LURE and uniform-equivalent estimates with bootstrap
        intervals at up to ``n_points`` label counts (always including the last).
        ``truth`` (metric -> value) is shown when known, e.g. in simulations.
        """
        from activetest.session import report as rp

        final = self.estimate(compare=compare, target_width=target_width, record=False,
                              progress=progress)
        cfg = self._config
        used, labels, _ = self._usable()
        K = len(used)
        N = len(self.items())
        rows = np.array([a.index for a in used], dtype=np.int64)
        q = np.array([a.q for a in used])
        y = np.array([labels[i] for i in rows], dtype=np.int64)
        t_stored = self.store.scores("target")
        assert t_stored is not None
        t_lp = t_stored.logprobs[rows]
        n_boot = int(cfg.get("n_boot", 1000))
        level = float(cfg.get("level", 0.95))
        budgets = sorted({round(float(x)) for x in np.linspace(1, K, min(n_points, K))} | {K})
        budgets = [b for b in budgets if b >= 2] or [K]
        names = {"log_loss": "log loss", "error_rate": "error rate"}
        history: dict[str, list[rp.HistoryRow]] = {}
        seed = int(cfg["seed"])
        for metric in self.metrics:
            losses = _per_item_loss(metric, t_lp, y)
            out_rows = []
            for b in budgets:
                if b == K:
                    m = final.metrics[metric]
                    a, u = m.active, m.uniform
                else:
                    a = bootstrap(lure_terms(losses[:b], q[:b], N), n_boot=n_boot, level=level,
                                  random_state=_bootstrap_rng(seed, b, f"lure:{metric}"))
                    u = bootstrap(losses[:b], n_boot=n_boot, level=level,
                                  random_state=_bootstrap_rng(seed, b, f"mean:{metric}"))
                out_rows.append(rp.HistoryRow(b, a.estimate, a.low, a.high, u.estimate, u.low,
                                              u.high))
            history[names[metric]] = out_rows
        first = self.metrics[0]
        terms = lure_terms(_per_item_loss(first, t_lp, y), q, N)
        step_pos = {a.step: j for j, a in enumerate(used)}
        flagged = []
        for f in final.flagged:
            j = step_pos[f.step]
            shift = float(np.delete(terms, j).mean() - terms.mean()) if K > 1 else 0.0
            flagged.append(rp.FlaggedItem(f.item_id, _snippet(self.item(f.item_id)),
                                          self.task.class_names[f.label], f.target_nll,
                                          f.surrogate_nll, shift))
        comparisons = [rp.Comparison(names[c.metric], cfg["target"], c.spec,
                                     c.difference.estimate, c.difference.low, c.difference.high,
                                     final.n_labels) for c in final.comparisons]
        needed = []
        if target_width is not None:
            for m in final.metrics.values():
                needed.append(rp.LabelsNeeded(names[m.metric], float(target_width),
                                              int(m.labels_needed or K),
                                              labels_for_width(m.uniform, target_width)))
        acq_scores = self._acq_scores()
        all_acq = self.store.acquisitions()
        info = {"Session": str(self.path), "Seed": cfg["seed"], "Alpha": cfg["alpha"],
                "In-context examples": cfg.get("shots", 0),
                "Target in-context examples": cfg.get("target_shots", cfg.get("shots", 0))}
        # The report states the few-labels warning itself.
        all_notes = [*(w for w in final.warnings if not w.startswith("only ")),
                     "The uniform-equivalent column is the plain mean of the labelled items' "
                     "losses: what uniform sampling would report with as many labels. Under "
                     "active sampling it is biased; it is shown for contrast only.",
                     *_cv_notes(final, names), *notes]
        if final.flagged:
            all_notes.append("Flagged items: dropping items breaks the estimator's "
                             "unbiasedness; the shift column is a sensitivity check only.")
        return rp.ReportData(
            title=title or f"Active testing: {cfg['target']} on {self.task.name}",
            task=self.task.name, target=cfg["target"], surrogate=cfg["surrogate"],
            metrics=[names[m] for m in self.metrics], history=history, scores=acq_scores,
            acquired_idx=np.array([a.index for a in all_acq], dtype=np.int64),
            acquired_q=np.array([a.q for a in all_acq]), flagged=flagged,
            comparison=comparisons, labels_needed=needed,
            truth=None if truth is None else {names.get(k, k): v for k, v in truth.items()},
            level=level, acquisition=cfg["acquisition"], pool_size=N, info=info,
            notes=all_notes)

    def write_report(self, out_dir: str | os.PathLike[str], **kwargs: Any) -> Path:
        """Write ``report.md``, ``report.html`` and PNG figures into ``out_dir``.

        Keyword arguments are those of :meth:`report_data`. Returns the Markdown path.
        """
        from activetest.session.report import write_report

        return write_report(self.report_data(**kwargs), out_dir)

    # ------------------------------------------------------------------ status

    def status(self) -> SessionStatus:
        """Where the session stands."""
        cfg = self._config
        used, labels, _ = self._usable()
        n_sel = self.store.n_acquired()
        n_lab = len(labels)
        last: dict[tuple[str, str], EstimateRow] = {}
        for row in self.store.estimates():
            last[(row.metric, row.method)] = row
        meta = self.store.meta()
        return SessionStatus(str(self.path), len(self.items()), n_sel, n_lab, n_sel - n_lab,
                             len(used), cfg["metric"], cfg["acquisition"], cfg["surrogate"],
                             cfg["target"], int(cfg["seed"]), float(cfg["alpha"]),
                             list(last.values()), meta.get("created", ""))

    # ------------------------------------------------------------------ files

    def export(self, path: str | os.PathLike[str], *, format: str | None = None,
               which: str = "pending", predictions: bool = True,
               acquisitions: Sequence[Acquisition] | None = None) -> int:
        """Write drawn items to a file for labelling elsewhere; returns how many.

        Args:
            path: the file.
            format: ``csv``, ``tsv``, ``jsonl``, ``json`` (a sheet) or ``labelstudio``
                (Label Studio task import); default from the suffix, with ``.json``
                meaning Label Studio.
            which: ``pending`` (drawn, unlabelled), ``selected`` (all drawn) or
                ``labelled``.
            predictions: include the surrogate's guess (Label Studio pre-annotation).
            acquisitions: export exactly these draws instead (``which`` is ignored).
        """
        from activetest.session import labelio

        if which not in ("pending", "selected", "labelled"):
            raise ValueError(f"which must be pending, selected or labelled, got {which!r}")
        acq = self.pending() if which == "pending" else self.acquisitions()
        if which == "labelled":
            labels = self.store.labels()
            acq = [a for a in acq if a.index in labels]
        if acquisitions is not None:
            acq = list(acquisitions)
        fmt = _export_format(path, format)
        items = self.items()
        rows = [items[a.index] for a in acq]
        pred = None
        if predictions:
            stored = self.store.scores("surrogate")
            if stored is not None and rows:
                pred = stored.logprobs[[a.index for a in acq]]
        if fmt == "labelstudio":
            labelio.export_labelstudio(rows, self.task, path, predictions=pred)
        else:
            labelio.export_items(rows, self.task, path, format=fmt, predictions=pred)
        return len(rows)

    def import_file(self, path: str | os.PathLike[str], *, format: str | None = None,
                    overwrite: bool = False) -> LabelImport:
        """Import labels from a sheet or a Label Studio export (all or nothing).

        Raises:
            LabelFileError: a malformed file (file and line named).
            LabelError: unknown items, items never selected, conflicts (nothing written).
        """
        from activetest.session import labelio

        fmt = None if format is None else ("labelstudio" if format == "labelstudio" else format)
        records = labelio.import_labels(path, self.task, format=fmt)
        return self.add_labels(records, source=f"import:{Path(path).name}", overwrite=overwrite,
                               where=str(path))


def _export_format(path: str | os.PathLike[str], format: str | None) -> str:
    if format is not None:
        if format not in EXPORT_FORMATS:
            raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}, got "
                             f"{format!r}")
        return format
    suffix = Path(path).suffix.lower()
    fmt = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".json": "labelstudio"}.get(suffix)
    if fmt is None:
        raise ValueError(f"{path}: cannot tell the format from the suffix {suffix!r}; use .csv, "
                         f".tsv, .jsonl or .json (Label Studio), or pass --format")
    return fmt


def _snippet(item: Item) -> str:
    return " | ".join(str(v) for v in item.fields.values())


def _check_unique(items: Sequence[Item], what: str) -> None:
    seen: dict[str, int] = {}
    for i, it in enumerate(items):
        if it.id in seen:
            raise SessionError(f"{what} has duplicate item id {it.id!r} (rows {seen[it.id]} and "
                               f"{i}); item ids must be unique")
        seen[it.id] = i


def _cv_notes(report: EstimateReport, names: Mapping[str, str]) -> list[str]:
    parts = [f"{names[m.metric]} {m.cv.estimate:.4f} [{m.cv.low:.4f}, {m.cv.high:.4f}]"
             for m in report.metrics.values() if m.cv is not None]
    if not parts:
        return []
    return [f"Control-variate LURE with {report.n_labels} labels (unbiased too; it subtracts the "
            f"surrogate's expected loss, whose pool mean needs no labels): " + "; ".join(parts)
            + "."]


class _Scoring:
    """Builds scorers from specs (with the score cache) and scores items with provenance."""

    def __init__(self, task: Task, examples: Sequence[Item], scorers: Mapping[str, Any],
                 cache_dir: str | None, use_cache: bool, threads: int | None = None) -> None:
        self.task = task
        self.examples = list(examples)
        self.scorers = scorers
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.threads = threads

    def scorer(self, spec: str) -> Any:
        if spec in self.scorers:
            return self.scorers[spec]
        if spec.startswith("object:"):
            raise SessionError(f"model {spec!r} was given as an object when the session was "
                               f"created; pass it again: Session.open(..., scorers={{{spec!r}: "
                               f"scorer}})")
        from activetest.models.registry import get_scorer, parse_spec

        backend, _ = parse_spec(spec)
        options = {"n_threads": self.threads} if self.threads and backend == "llamacpp" else {}
        scorer = get_scorer(spec, **options)
        if self.use_cache and backend != "table":
            from activetest.models.cache import CachedScorer

            scorer = CachedScorer(scorer, self.cache_dir)
        return scorer

    def can_run_side_by_side(self, specs: Iterable[str]) -> bool:
        """Whether these models may score at the same time without fighting for cores.

        Not with a transformers model built from a spec: torch takes every core by
        default, so a second model beside it would only oversubscribe the CPU.
        Scorer objects passed in are the caller's to configure, but one object is
        never used by two threads at once (a llama.cpp context is not thread-safe).
        """
        from activetest.models.registry import parse_spec

        specs = list(specs)
        objects = [id(self.scorers[s]) for s in specs if s in self.scorers]
        if len(objects) != len(set(objects)):
            return False
        for spec in specs:
            if spec in self.scorers or spec.startswith("object:"):
                continue
            try:
                backend, _ = parse_spec(spec)
            except (ValueError, OSError):
                return False
            if backend == "hf":
                return False
        return True

    def score(self, role: str, spec: str, items: Sequence[Item], shots: int,
              progress: bool) -> tuple[np.ndarray, dict[str, Any]]:
        from activetest.models.cache import scorer_identity
        from activetest.session.store import now

        scorer = self.scorer(spec)
        examples = self.examples[:shots]
        lp = np.asarray(scorer.score(self.task, items, examples, progress=progress),
                        dtype=np.float64)
        if lp.shape != (len(items), self.task.n_classes):
            raise ValueError(f"model {spec!r} returned scores of shape {lp.shape} for "
                             f"{len(items)} items and {self.task.n_classes} classes")
        if not np.all(np.isfinite(lp)):
            bad = int(np.flatnonzero(~np.isfinite(lp).all(axis=1))[0])
            raise ValueError(f"model {spec!r} gave non-finite log-probs for item "
                             f"{items[bad].id!r}")
        try:
            ident: Any = scorer_identity(scorer)
        except Exception:  # identity is provenance only; never fail scoring for it
            ident = {"name": getattr(scorer, "name", "?")}
        prov = {"role": role, "spec": spec, "scorer": ident, "n_examples": len(examples),
                "example_ids": [e.id for e in examples], "scored_at": now(),
                "n_items": len(items)}
        return lp, _jsonable(prov)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else str(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    return str(obj)
