"""Creating a session: read the inputs, score the pool, write the file (in that order).

:func:`create_session` is what ``Session.create`` and ``activetest init`` run. The
pool is scored BEFORE the file exists, so a failed, interrupted or crashed scoring
leaves no half-made session behind (the score cache keeps the finished chunks), and
the file is built under a temporary name and renamed into place
(:meth:`SessionStore.create`).

Steps, one function each: :func:`check_options` (argument validation),
:func:`load_inputs` (task, pool, in-context examples), :func:`build_config` (the
JSON stored in the file), :func:`score_pool` (surrogate and target, side by side
where they can), then the store is written with the acquisition scores and the
sampler's initial state.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session.config import ACQUISITIONS, NoiseConfig, SessionConfig
from activetest.session.design import design_variant, initial_scores, new_design_rule
from activetest.session.history_neighbours import NeighbourUpdate
from activetest.session.options import (
    as_integer,
    check_classification_targets,
    check_count,
    check_label_scoring,
    check_level,
    check_n_boot,
    compare_specs,
)
from activetest.session.records import ACQUISITION_CHOICES, METRIC_CHOICES, NOISE_RULES
from activetest.session.scoring import Scoring, register_model
from activetest.session.store import SessionError, SessionStore
from activetest.stats import ActiveSampler
from activetest.stats.blindspot import new_blind_ratio
from activetest.stats.fewerrors import MIN_ERRORS
from activetest.stats.validate import check_seed

#: Acquisitions that need no target predictions on the pool (derived from
#: :data:`~activetest.session.config.ACQUISITIONS`).
PE_ACQUISITIONS = tuple(a.name for a in ACQUISITIONS.values() if not a.needs_target)

__all__ = ["Inputs", "build_config", "check_floor_applies", "check_options",
           "create_session", "load_inputs", "load_items", "resolve_proposal_floor",
           "resolve_task", "score_pool"]


def resolve_task(task: Task | str | os.PathLike[str]) -> Task:
    """A Task (or graded GenTask) from itself, a built-in task name or a task file."""
    from activetest.data.generative import GenTask

    if isinstance(task, (Task, GenTask)):
        return task  # type: ignore[return-value]
    from activetest.data.taskfile import load_task

    return load_task(task if isinstance(task, str) else Path(task))


def _pool_file(src: str | os.PathLike[str], task: Task, options: Mapping[str, Any] | None
               ) -> tuple[Any, dict[str, Any]]:
    """The :class:`~activetest.data.pool.Pool` of a file and its provenance."""
    from activetest.data.pool import load_pool

    pool = load_pool(src, task=task, **dict(options or {}))
    return pool, {"source": str(Path(src).resolve()), "format": pool.format,
                  "sha256": pool.sha256}


def load_items(src: Sequence[Item] | str | os.PathLike[str], task: Task, what: str,
               options: Mapping[str, Any] | None) -> tuple[list[Item], dict[str, Any]]:
    """Items from a file (any format ``load_pool`` reads) or a sequence, with provenance."""
    if isinstance(src, (str, os.PathLike)):
        pool, info = _pool_file(src, task, options)
        return list(pool), info
    items = list(src)
    for it in items:
        if not isinstance(it, Item):
            raise TypeError(f"{what} must be a file path or a sequence of Item, got "
                            f"{type(it).__name__}")
    # a hub snapshot's shard count: its digest is of their bytes, said so (shown_source)
    shards = getattr(src, "shards", 0)
    return items, {"source": getattr(src, "source", "") or "<items>",
                   "format": getattr(src, "format", ""), "sha256": getattr(src, "sha256", ""),
                   **({"shards": shards} if isinstance(shards, int) and shards > 0 else {})}


def _load_examples(src: Sequence[Item] | str | os.PathLike[str], task: Task,
                   options: Mapping[str, Any] | None) -> tuple[list[Item], dict[str, Any]]:
    """The in-context examples, read with the pool's options; a file without the pool's
    id column (``--id-column``) gets row numbers as ids: an example's id only names it
    (examples join nothing; their overlap with the pool is found by content). The
    README's first recipe gives a ``text,label`` file with ``--id-column id`` (QA)."""
    from activetest.data.pool import is_lmeval_source
    from activetest.formats.tables import MissingIdColumnError

    if options and isinstance(src, (str, os.PathLike)) and is_lmeval_source(
            Path(src), options.get("format")):
        # lm-eval samples carry their own ids and gold labels: the pool's --id-column and
        # --label-column are the pool's (QA: "an lm-eval samples pool takes no
        # --id-column" of examples, beside a CSV pool that needs it)
        options = {k: v for k, v in options.items() if k not in ("id_column", "label_column")}
    try:
        return load_items(src, task, "examples", options)
    except FileNotFoundError:  # named as what it was for, not a pool file (QA)
        from activetest.formats.tables import missing_file

        raise FileNotFoundError(missing_file(str(src), "in-context examples file, "
                                                        "--examples")) from None
    except MissingIdColumnError as e:
        if e.row != 0 or not options or options.get("id_column") is None:
            raise
        return load_items(src, task, "examples", {**options, "id_column": None})


def check_unique(items: Sequence[Item], what: str) -> None:
    """Refuse duplicate item ids (a join by id would be ambiguous)."""
    seen: dict[str, int] = {}
    for i, it in enumerate(items):
        if it.id in seen:
            raise SessionError(f"{what} has duplicate item id {it.id!r} (rows {seen[it.id]} and "
                               f"{i}); item ids must be unique")
        seen[it.id] = i


def noise_threshold(value: float | None, flag: str) -> float | None:
    """A label-noise threshold (an NLL in nats) as stored: ``inf`` (never flag by that
    model) is stored as None (that model is not asked: the same), as JSON has no
    infinity.

    Raises:
        ValueError: NaN or negative, naming the flag.
    """
    if value is None:
        return None
    v = float(value)
    if math.isnan(v) or v < 0:
        raise ValueError(f"{flag} must be an NLL threshold in nats, 0 or more (inf: never "
                         f"flag by that model), got {value!r}")
    return None if math.isinf(v) else v


def check_options(*, metric: str, acquisition: str | None, proposal_floor: float,
                  noise_rule: str, level: float, n_boot: int, seed: int | None
                  ) -> tuple[str, int]:
    """Validate the scalar options; returns ``(acquisition, seed)`` with defaults filled in.

    Raises:
        ValueError: an option of the wrong type or outside its range (the message says
            which and what to pass).
    """
    if metric not in METRIC_CHOICES:
        raise ValueError(f"metric must be one of {', '.join(METRIC_CHOICES)}, got {metric!r}")
    if acquisition is None:
        # The calibrated-residual design: exactly unbiased like the paper's CE + LURE,
        # and measured ahead of it on the shared datasets (docs/reproduction.md).
        acquisition = "adaptive"
    if acquisition not in ACQUISITION_CHOICES:
        why = (" (graded_fixed is for graded tasks, whose answers people judge)"
               if acquisition == "graded_fixed" else "")
        raise ValueError(f"acquisition must be one of {', '.join(ACQUISITION_CHOICES)}, "
                         f"got {acquisition!r}{why}")
    if not (isinstance(proposal_floor, (int, float)) and 0 < proposal_floor <= 1):
        raise ValueError(f"the proposal floor (alpha) must be in (0, 1], got "
                         f"{proposal_floor!r}")
    if noise_rule not in NOISE_RULES:
        raise ValueError(f"noise_rule must be 'any' or 'all', got {noise_rule!r}")
    check_level(level)  # the type first: a string is refused, not compared
    check_n_boot(n_boot)  # a float or a string is refused, not truncated
    seed = check_seed(seed)  # a float or a string is refused, not truncated
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] % 2**63)
    return acquisition, seed


def check_floor_applies(acquisition: str, explicit: bool, *, design: bool | None = None
                        ) -> None:
    """Refuse a proposal floor given for an acquisition whose draws it does not shape: an
    adaptive design (``adaptive``, ``pe_adaptive``, ``fixed_mix``, the graded designs)
    chooses its uniform share lambda in-run (at least 10 %,
    :data:`activetest.stats.adaptive.LAMBDAS`), so a floor given to it changed nothing
    while ``status`` showed it as the session's (QA). ``design``: whether the session is
    drawn by a design, where ``acquisition`` alone does not say (graded sessions).

    Raises:
        SessionError: ``explicit`` and a design draws the session.
    """
    if not explicit:
        return
    if design is None:
        info = ACQUISITIONS.get(acquisition)
        design = info is not None and info.design is not None
    if design:
        raise SessionError(
            f"--proposal-floor (proposal_floor=) sets the uniform share of a fixed "
            f"acquisition's proposal (ce, pe, zero_one, compare); the {acquisition} design "
            f"chooses its own uniform share (lambda, at least 0.1) from the labels, so a "
            f"floor would change nothing: leave it out, or choose a fixed acquisition "
            f"(--acquisition ce)")


@dataclass
class Inputs:
    """What a session is made of, read and checked."""

    task: Task
    items: list[Item]
    pool_info: dict[str, Any]
    examples: list[Item]
    examples_info: dict[str, Any]
    target_shots: int
    specs: dict[str, str]  # role -> stored spec
    raw_specs: dict[str, str] = field(default_factory=dict)  # stored spec -> as given
    scorers: dict[str, Any] = field(default_factory=dict)  # "object:..." spec -> object
    #: the pool file's columns where its ids are the rows' numbers (positions), else None
    row_ids: tuple[str, ...] | None = None


def load_inputs(*, pool: Sequence[Item] | str | os.PathLike[str],
                task: Task | str | os.PathLike[str], surrogate: Any, target: Any,
                seed: int, shots: int | None,
                examples: Sequence[Item] | str | os.PathLike[str] | None,
                target_shots: int | None, pool_options: Mapping[str, Any] | None) -> Inputs:
    """Read the task, the pool and the in-context examples; name the two models.

    Raises:
        ValueError: (incl. :class:`SessionError`) an empty pool, duplicate ids,
            shots without examples, a ``target_shots`` out of range, bad files.
    """
    t = resolve_task(task)
    row_ids = None
    if isinstance(pool, (str, os.PathLike)):
        loaded, pool_info = _pool_file(pool, t, pool_options)
        items = list(loaded)
        if loaded.id_column is None and loaded.format != "lmeval":
            row_ids = loaded.columns  # positions: joins need content (check_position_joins)
    else:
        items, pool_info = load_items(pool, t, "pool", pool_options)
    check_unique(items, "the pool")
    if not items:
        raise SessionError("the pool is empty: nothing to evaluate")
    ex_info: dict[str, Any] = {}
    chosen: list[Item] = []
    if examples is not None:
        ex_items, ex_info = _load_examples(examples, t, pool_options)
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
                          stacklevel=3)
    elif shots:
        raise SessionError(f"shots={shots} needs labelled in-context examples: pass "
                           f"examples= (--examples FILE), disjoint from the pool")
    if target_shots is None:
        target_shots = len(chosen)
    if not 0 <= target_shots <= len(chosen):
        raise ValueError(f"target_shots must be in 0..{len(chosen)} (the number of "
                         f"examples), got {target_shots}")
    inputs = Inputs(t, items, pool_info, chosen, ex_info, int(target_shots), {},
                    row_ids=row_ids)
    for role, m in (("surrogate", surrogate), ("target", target)):
        inputs.specs[role] = register_model(m, inputs.raw_specs, inputs.scorers)
    return inputs


def _column_ids(pool: Any, task: Task, options: Mapping[str, Any] | None, name: str
                ) -> list[str] | None:
    """The ids the pool file ``pool`` would have with ``--id-column name`` (None: it would
    refuse them, or ``pool`` is no file)."""
    if not isinstance(pool, (str, os.PathLike)):
        return None
    try:
        loaded, _ = _pool_file(pool, task, {**dict(options or {}), "id_column": name})
    except (ValueError, OSError):
        return None
    return [it.id for it in loaded]


def check_position_joins(inputs: Inputs, scoring: Scoring, specs: Sequence[str], *,
                         confirmed: bool = False,
                         column_ids: Callable[[str], Sequence[str] | None] | None = None
                         ) -> dict[str, str]:
    """Refuse a ``table:`` of predictions joined to the pool by ids that are only
    positions, unless the table confirms each item's content (:meth:`~activetest.models.
    table.TableScorer.confirms_content`) or the user does (``confirmed``:
    ``--ids-are-positions``): a pool whose ids are its rows' numbers (no id column), or
    a pool and a table whose ids both look like row numbers
    (:mod:`activetest.session.table_positions`). A join by position alone would pair
    the wrong rows, silently, once either file is re-sorted or filtered (QA). Joins
    never guess. ``column_ids``: a pool column -> its values as the pool's ids (None:
    they are not such ids), where a pool without an id column has one the refusal names
    (``--id-column id``): where those too look like row numbers beside the table's, the
    refusal says at once that the column alone meets the same rule, and how to confirm
    (QA: two refusals, one after the other).

    Returns:
        spec -> the note of its join by positions, as confirmed (none: every join by id).

    Raises:
        SessionError: naming the pool, the table and what to do.
    """
    from activetest.data.history_ids import pool_numbers, positions_in_disguise
    from activetest.models.table import TableScorer
    from activetest.session.history_positions import FLAG
    from activetest.session.table_positions import check_table_ids

    notes: dict[str, str] = {}
    pool_ids = [it.id for it in inputs.items]
    fields = {it.id.strip(): it.fields for it in inputs.items}
    # a pool id that is no whole number: the pool's ids are its own, and no table's ids
    # are read here (a large table's were read a second time, after its rows' check)
    numbered = inputs.row_ids is None and pool_numbers([i.strip() for i in pool_ids]) is not None
    for spec in dict.fromkeys(specs):
        scorer = scoring.scorer(spec)
        if not isinstance(scorer, TableScorer):
            continue
        table_ids = None
        if numbered and scorer.format != "lmeval" and not scorer.has_check_column():
            # (no content check, so its ids are needed: they and its rows' check in one
            # pass; a Parquet table's were read a second time, 2026-12-07)
            table_ids = scorer.item_ids(inputs.task)
        if scorer.confirms_content(inputs.task):
            continue
        if inputs.row_ids is None:  # the pool's own ids: both sides row numbers?
            if not numbered:
                continue
            said = check_table_ids(str(scorer.path), table_ids if table_ids is not None
                                   else scorer.item_ids(inputs.task), pool_ids,
                                   fields, confirmed=confirmed)
            if said is not None:
                notes[spec] = said
            continue
        if confirmed:
            notes[spec] = (f"{scorer.path}: joined to the pool's item ids, which are its "
                           f"rows' numbers, as {FLAG} confirms: nothing checked that its "
                           f"row '0' was written for the pool's first row")
            continue
        src = inputs.pool_info.get("source", "the pool")
        named = [c for c in inputs.row_ids if c.strip().lower() in (
            "id", "item_id", "doc_id", "uid", "guid", scorer.id_column.lower())]
        hint = (f"the pool has a column {named[0]!r}: pass --id-column {named[0]} "
                f"(pool_options={{'id_column': {named[0]!r}}})" if named else
                f"give the pool an id column, the same ids as the table's "
                f"{scorer.id_column!r} column, and pass --id-column NAME")
        ids = column_ids(named[0]) if named and column_ids is not None else None
        d = None if ids is None else positions_in_disguise(ids, scorer.item_ids(inputs.task))
        if d is not None:  # the column's ids would be refused next: say both at once
            raise SessionError(
                f"{src}: the pool's item ids are its rows' numbers (no id column given or "
                f"named by the task), so {scorer.path} would be joined to it by position "
                f"alone; the pool has a column {named[0]!r}, but its values and the "
                f"table's ids look like row numbers too (the pool's: "
                f"{d.pool.describe('ids')}; the table's: {d.matrix.describe('ids')}), so "
                f"--id-column {named[0]} alone would join them by the numbers as well "
                f"(nothing confirms that the table's row for item {d.first!r} was made for "
                f"the pool's item {d.first!r}; a re-sorted or filtered file joins the "
                f"wrong rows silently): give both files the dataset's own ids (the pool: "
                f"--id-column NAME; the table: the same ids in its id column), or use a "
                f"table with a content_check column (`activetest score` writes one); if "
                f"the table's ids are the pool's {named[0]!r} values (written from this very "
                f"pool, its ids travelling with its rows), --id-column {named[0]} {FLAG} "
                f"confirms the join")
        raise SessionError(
            f"{src}: the pool's item ids are its rows' numbers (no id column given or named "
            f"by the task), so {scorer.path} would be joined to it by position alone "
            f"(nothing confirms that its row for item '0' was made for the pool's first "
            f"row; a re-sorted or filtered file joins the wrong rows silently): {hint}, or "
            f"use a table with a content_check column (`activetest score` writes one); if "
            f"the table was written from this very pool in this order, {FLAG} confirms "
            f"the join")
    return notes


def build_config(inputs: Inputs, *, task_ref: Any, metric: str, acquisition: str,
                 proposal_floor: float, seed: int, noise: NoiseConfig, n_boot: int,
                 level: float, cache_dir: str | os.PathLike[str] | None,
                 use_cache: bool, budget: int | None = None,
                 n_items: int | None = None,
                 label_scoring: str = "first-token") -> SessionConfig:
    """The configuration stored in the session file (no credentials); stored as its
    :meth:`~SessionConfig.to_dict`. ``budget``: the planned labels (default
    :func:`planned_budget`'s rule), recorded for the anytime CS; ``n_items``: the pool's
    size where ``inputs`` does not hold the items (a streamed pool); ``label_scoring``:
    how the models built from specs read the label words (recorded in every new
    session)."""
    from activetest import __version__
    from activetest.data.taskfile import task_to_dict
    from activetest.session.source_names import published_source

    return SessionConfig(
        design_variant=design_variant(metric, acquisition),  # the two-metric design
        task=task_to_dict(inputs.task),
        task_ref=task_ref if isinstance(task_ref, str) else inputs.task.name,
        # the files' names and digests, never their local paths (said at init); the
        # items are stored: no later command re-opens these (session/source_names.py)
        pool={**published_source(inputs.pool_info), "n_items": len(inputs.items)},
        examples={**published_source(inputs.examples_info), "n": len(inputs.examples)},
        surrogate=inputs.specs["surrogate"], target=inputs.specs["target"],
        metric=metric, acquisition=acquisition, proposal_floor=float(proposal_floor),
        seed=seed, shots=len(inputs.examples), target_shots=inputs.target_shots,
        noise=noise, n_boot=int(n_boot), level=float(level),
        cache_dir=None if cache_dir is None else str(Path(cache_dir).resolve()),
        use_cache=bool(use_cache), version=__version__,
        planned_budget=planned_budget(budget, len(inputs.items) if n_items is None
                                      else n_items),
        blind_ratio=new_blind_ratio(new_design_rule(acquisition)),  # rule-dependent
        design_rule=new_design_rule(acquisition),  # the in-run rule of new sessions
        clt_min_errors=MIN_ERRORS,  # the error rate's exact interval until 5 errors
        sure_bounds=True,  # intervals cut to what the labels make sure
        exact_share=True,  # the exact anytime CS bounds each draw by its own uniform share
        exact_least=True,  # ... or by its least proposal, where that is more
        shared_resamples=True,  # the plain mean bootstrapped on LURE's resamples
        label_scoring=label_scoring,  # every later command builds its models this way
    )


def planned_budget(budget: int | None, n_items: int) -> int:
    """The planned budget a new session records (the budget its CS is tuned to):
    ``budget`` if given (1..N) but at most :func:`activetest.stats.confseq.max_budget`
    (two thirds of the pool), else :func:`activetest.stats.confseq.default_budget`
    (400 labels, at most half the pool). A CS tuned to nearly the whole pool is useless
    before it (tens of standard errors wide); labelling past the planned budget stays
    valid (the CS continues as a normal mixture).

    Raises:
        ValueError: a budget that is not an integer in 1..N.
    """
    from activetest.stats.confseq import default_budget, max_budget

    if budget is None:
        return default_budget(n_items)
    n = as_integer(budget)  # numpy integers too; a bool, float or string is refused
    if n is None or not 1 <= n <= n_items:
        raise ValueError(f"the planned budget must be a whole number of labels from 1 to "
                         f"the pool's {n_items} items, got {budget!r}")
    return min(n, max_budget(n_items))


def score_pool(inputs: Inputs, scoring: Scoring, *, need_target: bool, progress: bool,
               ) -> tuple[tuple[np.ndarray, dict[str, Any]],
                          tuple[np.ndarray, dict[str, Any]] | None]:
    """Surrogate (and, unless PE, target) log-probs on the whole pool, with provenance."""
    jobs = [functools.partial(scoring.score, "surrogate", inputs.specs["surrogate"],
                              inputs.items, len(inputs.examples), progress)]
    if need_target:  # PE needs no target predictions on the pool
        jobs.append(functools.partial(scoring.score, "target", inputs.specs["target"],
                                      inputs.items, inputs.target_shots, progress))
    if len(jobs) > 1 and scoring.can_run_side_by_side(inputs.specs.values()):
        # Surrogate and target side by side: each llama.cpp model defaults to half the
        # cores, so two 1-thread models fill a 2-core machine (measured: the pair takes
        # as long as the slower model alone, not the sum).
        from activetest.models.parallel import run_parallel

        results = run_parallel(jobs, progress=progress)
    else:
        results = [job() for job in jobs]
    return results[0], (results[1] if len(results) > 1 else None)


def create_session(path: str | os.PathLike[str], *,
                   pool: Sequence[Item] | str | os.PathLike[str],
                   task: Task | str | os.PathLike[str], surrogate: Any, target: Any,
                   metric: str = "log_loss", acquisition: str | None = None,
                   proposal_floor: float | None = None, seed: int | None = None,
                   shots: int | None = None,
                   examples: Sequence[Item] | str | os.PathLike[str] | None = None,
                   target_shots: int | None = None, noise_target_nll: float = 5.0,
                   noise_surrogate_nll: float = 5.0, noise_rule: str = "any",
                   n_boot: int = 1000, level: float = 0.95,
                   pool_options: Mapping[str, Any] | None = None,
                   cache_dir: str | os.PathLike[str] | None = None, use_cache: bool = True,
                   overwrite: bool = False, progress: bool = True, busy_timeout: float = 5.0,
                   threads: int | None = None, alpha: float | None = None,
                   budget: int | None = None,
                   history: Sequence[Any] = (), history_exclude: Sequence[str] = (),
                   history_neighbours: bool | NeighbourUpdate = True,
                   history_ids_are_positions: bool = False,
                   ids_are_positions: bool = False,
                   compare: Sequence[Any] | Any = (),
                   label_scoring: str = "first-token",
                   ) -> tuple[SessionStore, Inputs]:
    """Build a session file; returns the open store and the inputs (see ``Session.create``).

    ``proposal_floor`` (default 0.1) is the share of the uniform distribution mixed into
    a fixed proposal; ``alpha=`` is its old, deprecated name. ``budget``: the labels
    planned (the anytime CS is tuned to it; default :func:`planned_budget`'s rule).
    ``history``: other models' results (response matrices or folders of harness logs),
    the design then the feature design over them and the surrogate
    (:mod:`activetest.session.create_history`, docs/history.md); ``history_exclude``:
    row names never used (the target); ``history_neighbours``: add the neighbours' column
    learnt in-run (:mod:`activetest.session.history_neighbours`; False: without it);
    ``ids_are_positions`` (``--ids-are-positions``; ``history_ids_are_positions`` is its
    older name): confirm a join by ids that look like positions, of a response matrix
    (:mod:`activetest.session.history_positions`) or a ``table:`` of predictions
    (:mod:`activetest.session.table_positions`); refused otherwise.
    ``compare``: other targets (specs or Scorer objects; one spec or object alone is one
    target, :func:`~activetest.session.options.compare_specs`) scored on the whole pool now
    (stored as ``compare:<spec>``, named in the config), compared with the target at
    every estimate; the ``compare`` acquisition (exactly one of them) draws where the two
    targets' losses may differ (:func:`activetest.stats.expected_difference`).
    ``label_scoring``: how the models given as specs read each class from its label word,
    ``first-token`` (the paper's choice) or ``full-sequence`` (the summed log-prob of the
    whole word; llama.cpp and transformers models, refused for ``openai:``), stored in the
    config so every later command scores the same way (:class:`Scoring`).
    """
    if isinstance(surrogate, str) and surrogate == "history":
        # QA: it was looked up as a model ("'history' is not a bundled model"), with
        # --history too, after the history was read and joined
        raise SessionError("--surrogate history is for graded tasks and the harness loops "
                           "(--target lm-eval, --target inspect); a classification session "
                           "learns from other models' results with a surrogate model beside "
                           "them: --surrogate MODEL --history FILE|DIR --metric error_rate "
                           "(docs/history.md)")
    ids_are_positions = ids_are_positions or history_ids_are_positions
    if history or history_exclude:
        from activetest.session.create_history import check_history_options

        if not history:
            raise SessionError("--history-exclude names a row of --history: give --history")
        acquisition = check_history_options(metric, acquisition)
    compare = compare_specs(compare)  # a spec (str) or one Scorer is one target
    check_classification_targets([target, *compare], resolve_task(task).name)
    label_scoring = check_label_scoring(label_scoring, [surrogate, target, *compare])
    shots = check_count(shots, "shots", "in-context examples")
    target_shots = check_count(target_shots, "target_shots", "in-context examples")
    check_compare_options(acquisition, compare, bool(history))
    explicit_floor = proposal_floor is not None or alpha is not None
    proposal_floor = resolve_proposal_floor(proposal_floor, alpha)
    acquisition, seed = check_options(metric=metric, acquisition=acquisition,
                                      proposal_floor=proposal_floor, noise_rule=noise_rule,
                                      level=level, n_boot=n_boot, seed=seed)
    check_floor_applies(acquisition, explicit_floor)
    from activetest.session.store import check_new_session_path
    from activetest.session.store_errors import check_busy_timeout

    busy_timeout = check_busy_timeout(busy_timeout)  # before any scoring is spent too
    p = check_new_session_path(path, overwrite)  # before any scoring is spent
    noise = NoiseConfig(noise_threshold(noise_target_nll, "--noise-target-nll"),
                        noise_threshold(noise_surrogate_nll, "--noise-surrogate-nll"),
                        noise_rule)
    from activetest.session.stream_init import PoolSize, try_stream

    resolved = resolve_task(task)

    def config_of(pool_info: dict[str, Any], specs: dict[str, str],
                  raw_specs: dict[str, str], n_items: int | None = None) -> SessionConfig:
        return build_config(Inputs(resolved, [], pool_info, [], {}, 0, specs, raw_specs),
                            task_ref=task, metric=metric, acquisition=acquisition,
                            proposal_floor=proposal_floor, seed=seed, noise=noise,
                            n_boot=n_boot, level=level, cache_dir=cache_dir,
                            use_cache=use_cache, budget=budget if n_items else None,
                            n_items=n_items or 2, label_scoring=label_scoring)

    # files alone: the pool and table: predictions in blocks (a history needs the items)
    streamed = None if history else try_stream(
        p, pool=pool, task=resolved, surrogate=surrogate, target=target, examples=examples,
        shots=shots, target_shots=target_shots, pool_options=pool_options,
        config_of=config_of, options={"overwrite": overwrite, "busy_timeout": busy_timeout},
        compare=compare, progress=progress, ids_are_positions=ids_are_positions)
    if streamed is not None:
        store, n, pool_info, specs, raw_specs = streamed
        from activetest.session import spec_files

        store.said_at_init = spec_files.said(raw_specs)  # the files' paths: not stored
        spec_files.remember(raw_specs)
        return store, Inputs(resolved, PoolSize(n), pool_info, [], {}, 0,  # type: ignore[arg-type]
                             specs, raw_specs)
    inputs = load_inputs(pool=pool, task=task, surrogate=surrogate, target=target, seed=seed,
                         shots=shots, examples=examples, target_shots=target_shots,
                         pool_options=pool_options)
    config = build_config(inputs, task_ref=task, metric=metric, acquisition=acquisition,
                          proposal_floor=proposal_floor, seed=seed, noise=noise,
                          n_boot=n_boot, level=level, cache_dir=cache_dir,
                          use_cache=use_cache, budget=budget, label_scoring=label_scoring)
    hist = None
    if history:  # joined and checked before any scoring is spent
        from activetest.session.create_history import classification_history
        from activetest.session.history_positions import PoolColumns

        hist = classification_history(inputs.items, history, history_exclude,
                                      inputs.raw_specs.get(inputs.specs["target"], ""),
                                      neighbours=history_neighbours,
                                      positional="its rows' numbers" if inputs.row_ids
                                      is not None else "lm-eval's doc_id (positions)" if
                                      inputs.pool_info.get("format") == "lmeval" else None,
                                      task=inputs.task,
                                      target=inputs.scorers.get(inputs.specs["target"]),
                                      ids_are_positions=ids_are_positions,
                                      pool_columns=None if inputs.row_ids is None else
                                      PoolColumns(tuple(inputs.row_ids), lambda name:
                                                  _column_ids(pool, inputs.task,
                                                              pool_options, name)))
        config = hist.config(config)
    from activetest.session import spec_files

    # every table: file by its name and digest, never its local path (said at init)
    compared = name_files(inputs, name_compared(inputs, compare))
    config = spec_files.with_model_files(dataclasses.replace(
        config, surrogate=inputs.specs["surrogate"], target=inputs.specs["target"],
        **({"compare": tuple(compared)} if compared else {})), inputs.raw_specs)
    scoring = Scoring(inputs.task, inputs.examples, inputs.scorers, config.cache_dir,
                      use_cache, threads, inputs.raw_specs, label_scoring)
    by_position = check_position_joins(
        inputs, scoring, [inputs.specs["surrogate"], inputs.specs["target"], *compared],
        confirmed=ids_are_positions,
        column_ids=lambda name: _column_ids(pool, inputs.task, pool_options, name))
    (s_lp, s_prov), target_scores = score_pool(inputs, scoring,
                                               need_target=config.needs_target,
                                               progress=progress)
    t_lp = None if target_scores is None else target_scores[0]
    compared_scores = {spec: scoring.score(f"compare:{spec}", spec, inputs.items,
                                           inputs.target_shots, progress)
                       for spec in compared}
    if by_position:  # joins by positions, as confirmed: recorded where the scores are
        from activetest.session.table_positions import PROVENANCE_KEY

        def said(spec: str, prov: dict[str, Any]) -> dict[str, Any]:
            return {**prov, PROVENANCE_KEY: by_position[spec]} if spec in by_position \
                else prov

        s_prov = said(inputs.specs["surrogate"], s_prov)
        if target_scores is not None:
            target_scores = (target_scores[0], said(inputs.specs["target"], target_scores[1]))
        compared_scores = {spec: (lp, said(spec, prov))
                           for spec, (lp, prov) in compared_scores.items()}
    local = spec_files.local_names(inputs.raw_specs)  # their provenance names them too
    s_prov = spec_files.publish_provenance(s_prov, local)
    if target_scores is not None:
        target_scores = (target_scores[0],
                         spec_files.publish_provenance(target_scores[1], local))
    compared_scores = {spec: (lp, spec_files.publish_provenance(prov, local))
                       for spec, (lp, prov) in compared_scores.items()}
    scores = (initial_scores(config, s_lp, t_lp, len(inputs.items),
                             other_logprobs=compared_scores[compared[0]][0] if compared
                             else None) if hist is None else hist.first_proposal(s_lp))
    floor = config.proposal_floor
    sampler = ActiveSampler(scores, proposal_floor=floor, seed=seed)  # its fresh RNG state
    n_classes = inputs.task.n_classes

    def init(store: SessionStore) -> None:
        store.put_scores("surrogate", inputs.specs["surrogate"], s_lp, s_prov)
        if target_scores is not None:
            store.put_scores("target", inputs.specs["target"], *target_scores)
        else:
            store.put_scores("target", inputs.specs["target"],
                             np.full((len(inputs.items), n_classes), np.nan),
                             {"spec": inputs.specs["target"], "note": "scored on labelled "
                              "items only (PE acquisition)"})
        for spec, (lp, prov) in compared_scores.items():  # what estimate compares with
            store.put_scores(f"compare:{spec}", spec, lp, prov)
        store.put_scores("acquisition", acquisition, scores[:, None],
                         {"acquisition": acquisition, "alpha": floor},
                         predictions=False)
        if hist is not None:  # what the history design is rebuilt from
            hist.put(store)
        state = sampler.state()
        store.init_sampler(state.proposal_floor, seed, state.rng_state)

    store = SessionStore.create(p, config=config, items=inputs.items, examples=inputs.examples,
                                overwrite=overwrite, busy_timeout=busy_timeout, init=init)
    # the history's messages with its paths, the table: files' paths: said, not stored
    store.said_at_init = (*(hist.published.said if hist is not None else ()),
                          *spec_files.said(inputs.raw_specs))
    spec_files.remember(inputs.raw_specs)  # where they are, for this machine's commands
    return store, inputs


def check_compare_options(acquisition: str | None, compare: Sequence[Any],
                          history: bool) -> None:
    """The ``compare=`` targets of a new classification session, checked before anything
    is read or scored.

    Raises:
        SessionError: the ``compare`` acquisition without exactly one compared target,
            or compared targets with a history (whose design draws for the target alone).
    """
    if acquisition == "compare" and len(compare) != 1:
        raise SessionError(f"the compare acquisition draws for the difference between the "
                           f"target and ONE compared model: give one --compare SPEC (got "
                           f"{len(compare)})")
    if compare and history:
        raise SessionError("--compare with --history is not supported: the history design "
                           "draws for the target alone; compare at estimate time "
                           "(estimate --compare SPEC)")


def name_compared(inputs: Inputs, compare: Sequence[Any]) -> list[str]:
    """The stored specs of the compared targets (recorded in ``inputs`` like the target's:
    raw spec or Scorer object), in the order given, each once.

    Raises:
        SessionError: a compared target that is the session's target.
    """
    out: list[str] = []
    for m in compare:
        spec = register_model(m, inputs.raw_specs, inputs.scorers)
        if spec == inputs.specs["target"]:
            raise SessionError(f"--compare {spec} is the session's target: compare it with "
                               f"another model")
        if spec not in out:
            out.append(spec)
    return out


def name_files(inputs: Inputs, compared: Sequence[str]) -> list[str]:
    """Rename the models' specs that name a file (``table:``) to name it by its name, not
    its local path (:func:`activetest.session.spec_files.rename`), in ``inputs`` (its
    specs and raw specs); returns ``compared`` so renamed."""
    from activetest.session.spec_files import rename

    names = rename([inputs.specs["surrogate"], inputs.specs["target"], *compared])
    for old, new in names.items():
        if old in inputs.raw_specs:
            inputs.raw_specs[new] = inputs.raw_specs.pop(old)
    inputs.specs = {role: names.get(s, s) for role, s in inputs.specs.items()}
    return [names.get(s, s) for s in compared]


def resolve_proposal_floor(proposal_floor: float | None, alpha: float | None,
                           default: float = 0.1) -> float:
    """The proposal floor from ``proposal_floor=`` or its deprecated name ``alpha=``
    (a :class:`DeprecationWarning`); ``default`` when neither is given.

    Raises:
        TypeError: both are given.
    """
    if alpha is not None:
        if proposal_floor is not None:
            raise TypeError("give proposal_floor= only (alpha= is its deprecated name)")
        warnings.warn("alpha= is deprecated: it is the proposal floor, now "
                      "proposal_floor= (not 1 - the confidence level, which is level=)",
                      DeprecationWarning, stacklevel=3)
        return alpha
    return default if proposal_floor is None else proposal_floor
