"""The inspect_ai early-stopping manager :class:`ActiveStopping` (see :mod:`activetest.inspect`).

It joins the task's samples to the session's items, runs the session's draws (skipping
every other sample), records each completed sample's score as its label and stops once
the anytime interval is narrow enough; :class:`StopSummary` is what it writes into the
log's early-stopping metadata.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.inspect.intervals import PrefixIntervals, prefix_intervals

__all__ = ["MANAGER", "ActiveStopping", "StopSummary"]

#: The name inspect records as the early-stopping manager.
MANAGER = "activetest.ActiveStopping"

_WHOLE_NUMBER = re.compile(r"[+-]?\d+")
#: inspect_ai's letter values (``value_to_float``): correct, incorrect, partial, no answer.
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


@dataclass(frozen=True)
class StopSummary:
    """What one eval did, as written into the log's early-stopping metadata.

    Attributes:
        metric, level: the session's metric and the intervals' level.
        n_labels: the prefix length the estimate is at (the stop, else the longest
            completed prefix of the draw order).
        estimate, fixed_low, fixed_high, cs_low, cs_high: the estimate there with its
            fixed-budget interval and anytime confidence sequence (None below 2 labels;
            the CS None too where it claims nothing: before 30 labels, unless the exact anytime CS
            stood in for few errors, or a census).
        stopped_at: the prefix length at which the anytime interval was first at most
            ``width`` wide (None: not reached).
        reason: why the eval ended its draws (``width reached``, ``budget spent``,
            ``pool exhausted``, ``incomplete``).
        runs: samples this eval started (target runs spent).
        recorded: sample id -> the score recorded as its label, in completion order.
        unscored: drawn samples that completed without a usable score.
        conflicts: sample id -> its score, where the item already had another label
            (given by a person while the sample ran): that label is kept.
        order: this eval's draw order (sample ids).
        batches: the sizes of this eval's batches, in order (with ``batch``: the
            unrecorded draws, then each batch drawn after the one before completed;
            without: one batch, everything drawn at the start).
        exact_low, exact_high: the error rate's exact (betting) anytime CS there, valid at
            any number of labels (None: another metric, or below 2 labels).
    """

    metric: str
    level: float
    n_labels: int
    estimate: float | None
    fixed_low: float | None
    fixed_high: float | None
    cs_low: float | None
    cs_high: float | None
    stopped_at: int | None
    reason: str
    runs: int
    recorded: dict[str, float]
    unscored: tuple[str, ...]
    conflicts: dict[str, float]
    order: tuple[str, ...]
    batches: tuple[int, ...] = ()
    exact_low: float | None = None
    exact_high: float | None = None


def _fold(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _excerpt(text: str, n: int = 80) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= n else one[: n - 3] + "...")


def _sample_text(sample: Any) -> str:
    """A sample's input as text (a string, or its messages' texts joined)."""
    inp = sample.input
    if isinstance(inp, str):
        return inp
    parts = []
    for m in inp:
        text = getattr(m, "text", None)
        parts.append(text if isinstance(text, str) else str(getattr(m, "content", "")))
    return "\n".join(parts)


def _value_to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        v = value.strip()
        if v in _LETTERS:
            return _LETTERS[v]
        try:
            return float(v)
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(float(value)):
        return float(value)
    return None


class ActiveStopping:
    """An inspect_ai ``EarlyStopping`` manager that runs the session's draws (module docstring).

    Args:
        session: the session file (a graded session whose items are the task's
            samples), or an open :class:`activetest.Session`.
        width: stop once the anytime confidence sequence is at most this wide (full
            width, in the metric's units: 0.06 is +-0.03); None: never on width.
        budget: at most this many target runs in this eval (the unrecorded draws count
            first); None: the whole pool.
        scorer: the scorer whose value is the label (needed when the task has several).
        value_key: for a scorer whose value is a dict, the key to read.
        busy_timeout: seconds to wait for another writer of the session file.
        batch: draw this many at a time inside the eval and refit the design on the
            completed scores between batches (the unrecorded draws of an earlier eval
            run first, as one batch). Every sample waits in ``schedule_sample`` until
            it is drawn or the draws end, so run the eval with ``max_samples`` at
            least the number of samples (refused otherwise: the samples waiting would
            hold the slots the drawn ones need) and errors that end a sample without
            a score are refused (``fail_on_error=False`` without ``score_on_error``:
            the batch would wait for it). None: the whole budget is one batch, drawn
            when the eval starts.
    """

    def __init__(self, session: str | os.PathLike[str] | Any, *, width: float | None = None,
                 budget: int | None = None, scorer: str | None = None,
                 value_key: str | None = None, busy_timeout: float = 30.0,
                 batch: int | None = None) -> None:
        if width is not None and not (isinstance(width, (int, float))
                                      and math.isfinite(width) and width > 0):
            raise ValueError(f"width must be a number > 0, got {width!r}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int)
                                   or budget < 1):
            raise ValueError(f"budget must be a positive integer, got {budget!r}")
        if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int)
                                  or batch < 1):
            raise ValueError(f"batch must be a positive integer, got {batch!r}")
        self.batch = batch
        self.width = None if width is None else float(width)
        self.budget = budget
        self.scorer = scorer
        self.value_key = value_key
        self._busy_timeout = busy_timeout
        self._given = session
        self._session: Any = None
        self._order: list[str] | None = None
        self._pos: dict[str, int] = {}
        self._eval_id = ""
        self._started: set[str] = set()
        self._recorded: dict[str, float] = {}
        self._unscored: list[str] = []
        self._conflicts: dict[str, float] = {}
        self._checked = 0
        self._stopped_at: int | None = None
        self._exhausted = False
        self._joined = False
        # batch mode: the batch in flight, the samples waiting, whether the draws ended
        self._batches: list[int] = []
        self._inflight: set[str] = set()
        self._waiting: dict[str, Any] = {}
        self._ended = False
        self._labelled: frozenset[str] = frozenset()
        self._warned = False
        self._scorer_used: str | None = None  # the scorer whose value was the label

    # ------------------------------------------------------------ the session

    @property
    def session(self) -> Any:
        """The open session (opened on first use)."""
        if self._session is None:
            if isinstance(self._given, (str, os.PathLike)):
                from activetest.session.workflow import Session

                self._session = Session.open(self._given, busy_timeout=self._busy_timeout)
            else:
                self._session = self._given
            if not self._session.graded:
                raise ValueError(f"{self._name()}: ActiveStopping records the scorer's value "
                                 f"as the item's judgment, so it needs a graded session "
                                 f"(`activetest init --task <graded task>`); this one is a "
                                 f"classification session")
        return self._session

    def _name(self) -> str:
        s = self._given
        return str(s) if isinstance(s, (str, os.PathLike)) else str(getattr(s, "path", "session"))

    def order(self) -> list[str]:
        """This eval's draw order (item ids), drawn from the session's design on first call.

        The unrecorded draws come first, then new draws up to ``budget`` (committed to
        the session at once). Nothing is drawn when the session's anytime interval is
        already narrow enough. With ``batch``: the first batch (the unrecorded draws if
        any, else ``batch`` new ones); later batches are appended as they are drawn.
        inspect's ``start_task`` calls it once the eval is accepted (its model checked);
        :meth:`dataset` only looks ahead (:meth:`_preview_order`).
        """
        if self._order is None:
            order = self._take_order(self.session)
            self._order = order
            self._pos = {item_id: j for j, item_id in enumerate(order)}
            self._batches = [len(order)] if order else []
            self._warn_if_nothing_runs()
        return list(self._order)

    def _take_order(self, s: Any) -> list[str]:
        """The order :meth:`order` describes, its new draws made (and committed) in ``s``."""
        self._check_stop()
        pending = [a.item_id for a in s.pending()]
        labelled = set(s.labels())
        want = len(pending) if self._stopped_at is not None else (
            self.budget if self.budget is not None else s.n_items)
        if self.batch is not None and pending:
            want = min(want, len(pending))  # the unrecorded draws: the first batch
        elif self.batch is not None:
            want = min(want, self.batch)
        new = max(0, min(want - len(pending), s.n_items - s.store.n_acquired()))
        drawn = [a.item_id for a in s.select(new)] if new else []
        return [i for i in pending + drawn if i not in labelled][:max(want, 0)]

    def _preview_order(self) -> list[str]:
        """The order :meth:`order` would draw now, without drawing it: the draws are made
        in a second connection to the session file inside a write transaction that is
        rolled back (the sampler's state is the stored one, so :meth:`order` draws the
        same items unless the session changes meanwhile).

        Why: the task's dataset is built before inspect names the eval's model, and an
        eval of another model than the session's is refused at ``start_task``; drawing
        here left that refused eval's draws in the session (QA: 8 new unrecorded draws
        after a refused run of another model). Nothing is written before the eval is
        accepted.
        """
        if self._order is not None:
            return list(self._order)
        from activetest.session.workflow import Session

        order: list[str] = []
        with Session.open(self.session.path, busy_timeout=self._busy_timeout) as look:
            try:
                with look.store.transaction():
                    order = self._take_order(look)
                    raise _LookedAheadError
            except _LookedAheadError:
                pass
        return order

    def nothing_to_run(self) -> str | None:
        """Why this eval will run no sample (every one is skipped), or None when it
        runs some: the anytime interval was already narrow enough when the order was
        drawn, or every pool item is drawn and labelled. inspect writes no results for
        an eval in which no sample completed (``log.results`` is None: the early-stopping
        record is lost), so this is said when the order is drawn or first looked at
        (a warning). Asked before the order is drawn, it draws nothing (the order is
        looked ahead at)."""
        order = self._preview_order()
        self._warn_if_nothing_runs(order)
        return self._nothing_in(order)

    def _nothing_in(self, order: Sequence[str]) -> str | None:
        s = self.session
        k = s.labelled_draws().k
        if self._stopped_at is not None:
            return (f"{self._name()}: nothing left to run: the anytime interval was at most "
                    f"{self.width:g} wide at {self._stopped_at} labels (the session holds "
                    f"{k}); a smaller width= runs more")
        if not order:
            return (f"{self._name()}: nothing left to run: every one of the {s.n_items} pool "
                    f"items is drawn and labelled")
        return None

    def _warn_if_nothing_runs(self, order: Sequence[str] | None = None, *,
                              stacklevel: int = 3) -> None:
        if self._warned:
            return
        why = self._nothing_in(self._order if order is None else order)
        if why is not None:
            self._warned = True
            warnings.warn(f"{why}. Every sample is skipped, and inspect writes no results "
                          f"for an eval in which no sample ran (log.results is None); "
                          f"`activetest estimate` reports the session", stacklevel=stacklevel)

    def _next_batch(self) -> list[str]:
        """Batch mode: draw the next batch (the design refits on the labels now in), or
        [] when the draws end: the stop, the budget, the pool, or a drawn sample of this
        eval without a score (the prefix cannot pass it; the next eval runs it first)."""
        s = self.session
        order = self._order or []
        want = self.budget if self.budget is not None else s.n_items
        n = min(int(self.batch or 0), want - len(order), s.n_items - s.store.n_acquired())
        if self._stopped_at is not None or self._unscored or n < 1:
            return []
        drawn = [a.item_id for a in s.select(n)]
        for item_id in drawn:
            self._pos[item_id] = len(order)
            order.append(item_id)
        self._order = order
        self._batches.append(len(drawn))
        return drawn

    def _release(self, ids: Sequence[str]) -> None:
        """Batch mode: let these drawn samples run (those waiting wake up)."""
        self._inflight.update(ids)
        for item_id in ids:
            ev = self._waiting.pop(item_id, None)
            if ev is not None:
                ev.set()

    def _advance(self) -> None:
        """Batch mode: once the batch in flight has completed, draw and release the next;
        when there is none, end the draws and wake every waiting sample (skipped)."""
        if self._ended or (self._inflight and self._stopped_at is None):
            return
        nxt = self._next_batch()
        if nxt:
            self._release(nxt)
            return
        self._ended = True
        for ev in self._waiting.values():
            ev.set()
        self._waiting.clear()

    def dataset(self, samples: Sequence[Any], *, name: str | None = None) -> Any:
        """``samples`` (a list or an inspect ``Dataset``) as a ``MemoryDataset`` in draw
        order: this eval's draws first, then the rest (which are skipped). The join is
        checked here too (see the module docstring)."""
        from inspect_ai.dataset import MemoryDataset

        items = list(samples)
        self._join(items)
        order = self._preview_order()  # drawn at start_task, once the eval is accepted
        self._warn_if_nothing_runs(order)
        pos = {item_id: j for j, item_id in enumerate(order)}
        ranked = sorted(range(len(items)),
                        key=lambda j: (pos.get(str(items[j].id), len(pos)), j))
        return MemoryDataset([items[j] for j in ranked],
                             name=name or getattr(samples, "name", None))

    def _join(self, samples: Sequence[Any]) -> None:
        """Refuse unless the pool's items and the samples are the same, by id and content."""
        s = self.session
        by_id: dict[str, Any] = {}
        for smp in samples:
            if smp.id is None:
                raise ValueError("a sample without an id: inspect numbers such samples by "
                                 "position, which joins nothing; give every sample its "
                                 "pool item's id")
            by_id[str(smp.id)] = smp
        pool = {it.id: it for it in s.items()}
        where = self._name()
        missing = [i for i in pool if i not in by_id]
        extra = [i for i in by_id if i not in pool]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"{len(missing)} pool item(s) are not samples of the task "
                             f"(e.g. {missing[0]!r})")
            if extra:
                parts.append(f"{len(extra)} sample(s) are not items of the pool (e.g. "
                             f"{extra[0]!r})")
            raise ValueError(f"{where}: the task's samples and the session's pool differ: "
                             f"{'; '.join(parts)}; ids join by equality (as strings)")
        positional = all(_WHOLE_NUMBER.fullmatch(i) for i in pool)
        unchecked, differ = 0, []
        for item_id, item in pool.items():
            # every prompt field of the item occurs in the sample's input (which may add
            # an instruction, field names, in-context examples)
            own = [_fold(v) for k, v in item.fields.items() if k != "full_prompt"
                   and isinstance(v, str) and _fold(v)]
            if not own:
                unchecked += 1
                continue
            shown = _fold(_sample_text(by_id[item_id]))
            if not all(f in shown for f in own):
                differ.append(item_id)
        if differ:
            i = differ[0]
            item = pool[i]
            shown = " ".join(str(v) for v in item.fields.values())
            raise ValueError(f"{where}: pool item {i!r} is not sample {i!r} of the task: the "
                             f"item reads {_excerpt(shown)}, the sample's input "
                             f"{_excerpt(_sample_text(by_id[i]))} ({len(differ)} of "
                             f"{len(pool)} items differ)")
        if positional and unchecked:
            raise ValueError(f"{where}: the ids are whole numbers (they may be positions) "
                             f"and {unchecked} item(s) have no text to confirm them by; "
                             f"give the pool items their texts or the samples other ids")
        self._joined = True

    # ------------------------------------------------------------ the stop

    def _intervals(self) -> PrefixIntervals | None:
        if self.session.labelled_draws().k < 2:
            return None
        return prefix_intervals(self.session)

    def _check_stop(self) -> None:
        """Advance the checked prefix; set the stop at the first narrow-enough length."""
        if self._stopped_at is not None:
            return
        k = self.session.labelled_draws().k
        if k <= self._checked:
            return
        if self.width is not None and k >= 2:
            from activetest.stats.concurrent_stop import first_narrow

            pi = prefix_intervals(self.session)
            self._stopped_at = first_narrow(pi.cs_low, pi.cs_high, self.width,
                                            after=self._checked, upto=k)
        self._checked = k

    # ------------------------------------------------------------ inspect's protocol

    async def start_task(self, task: Any, samples: list[Any], epochs: int) -> str:
        """Join the samples to the pool and draw this eval's order (module docstring)."""
        if epochs != 1:
            raise ValueError(f"ActiveStopping runs each drawn sample once (epochs=1), got "
                             f"epochs={epochs}: an item's label is one score")
        self._eval_id = str(getattr(task, "eval_id", "") or "")
        self._check_model(getattr(task, "model", None), getattr(task, "task", None))
        self._join(samples)
        order = self.order()
        pos = [j for j, smp in enumerate(samples) if str(smp.id) in self._pos]
        ranks = [self._pos[str(samples[j].id)] for j in pos]
        if ranks != sorted(ranks) or (pos and pos[-1] != len(pos) - 1):
            warnings.warn("the task's samples are not in draw order: inspect runs them in "
                          "dataset order, so the completed prefix grows slowly and more "
                          "samples run before the stop is seen; build the task with "
                          "ActiveStopping.dataset(samples)", stacklevel=2)
        if not order:
            self._exhausted = True
        if self.batch is not None:
            self._labelled = frozenset(self.session.labels())
            self._check_batch_config(task, samples)
            self._release(order)
            self._advance()
        return MANAGER

    def _check_model(self, model: Any, task_name: Any = None) -> None:
        """Keep the eval's model in the session (who answered: the EEE record names it);
        an eval of another model than the session's earlier results is refused, checked
        where it is written (one transaction: two evals started together cannot both
        pass, QA)."""
        from activetest.formats.answers import public_model_name

        name = public_model_name(model) if isinstance(model, str) else None
        if name is not None:
            self.session.record_target_model(
                name, "inspect", [task_name] if isinstance(task_name, str) else ())
            from activetest.session.harness_history import target_in_history

            said = target_in_history(self.session, name)  # the history has its own run
            if said is not None:
                warnings.warn(said, stacklevel=3)

    def _check_batch_config(self, task: Any, samples: list[Any]) -> None:
        """Batch mode: refuse an eval in which a waiting sample could hold up the rest."""
        cfg = getattr(task, "config", None)
        if cfg is None:  # called outside inspect (tests): nothing to check
            return
        waiting = len(samples) - len(set(self.session.labels()))
        most = getattr(cfg, "max_samples", None)
        if most is None or most < waiting:
            raise ValueError(f"{self._name()}: ActiveStopping(batch={self.batch}) lets each "
                             f"sample wait until it is drawn, so all {waiting} unlabelled "
                             f"samples must be able to wait at once: run the eval with "
                             f"max_samples={len(samples)} (got {most}); max_connections "
                             f"bounds the target runs at once")
        foe = getattr(cfg, "fail_on_error", None)
        lenient = foe is False or (not isinstance(foe, bool) and foe is not None) or bool(
            getattr(cfg, "continue_on_fail", None))
        if lenient and not getattr(cfg, "score_on_error", None):
            raise ValueError(f"{self._name()}: ActiveStopping(batch={self.batch}) waits for "
                             f"every sample of a batch, and inspect does not report a sample "
                             f"that errors without a score (fail_on_error={foe!r}): use "
                             f"score_on_error=True, or leave fail_on_error at its default")

    async def schedule_sample(self, id: str | int, epoch: int) -> Any:
        """None (run it) for a drawn sample before the stop; else an ``EarlyStop``."""
        from inspect_ai.util import EarlyStop

        sid = str(id)
        if self.batch is not None and sid not in self._pos and not self._ended:
            if sid in self._labelled:
                return EarlyStop(id=id, epoch=epoch, reason="not drawn")
            import anyio

            # wait until it is drawn (in a later batch) or the draws end
            ev = self._waiting.setdefault(sid, anyio.Event())
            await ev.wait()
        if sid not in self._pos:
            return EarlyStop(id=id, epoch=epoch, reason="not drawn")
        if self._stopped_at is not None:
            return EarlyStop(id=id, epoch=epoch, reason="anytime interval narrow enough",
                             metadata={"stopped_at": self._stopped_at})
        self._started.add(sid)
        return None

    async def complete_sample(self, id: str | int, epoch: int, scores: Mapping[str, Any]
                              ) -> None:
        """Record the drawn sample's score as its label (committed at once), then check
        the stop."""
        sid = str(id)
        if sid not in self._pos:
            return
        try:
            self._record(sid, scores)
        finally:
            if self.batch is not None:
                self._inflight.discard(sid)
                self._advance()

    def _record(self, sid: str, scores: Mapping[str, Any]) -> None:
        level = self._level(sid, scores)
        if level is None:
            self._unscored.append(sid)
            return
        s = self.session
        have = s.labels().get(sid)
        if have is not None and have != level:
            # a person labelled it while it ran: their label stands (never overwritten)
            self._conflicts[sid] = float(s.task.judgment.scores[level])
        else:
            # always "inspect:...": status counts these sources as target runs (QA: a
            # bare "inspect", without an eval id, was counted as a person's label)
            s.add_label(sid, level, source=f"inspect:{self._eval_id or 'unknown'}")
            self._recorded[sid] = float(s.task.judgment.scores[level])
        self._check_stop()

    def _level(self, sid: str, scores: Mapping[str, Any]) -> int | None:
        if not scores:
            return None
        if self.scorer is not None:
            if self.scorer not in scores:
                raise ValueError(f"sample {sid!r}: no scorer {self.scorer!r} (the task's "
                                 f"scorers: {sorted(scores)})")
            name = self.scorer
        elif len(scores) == 1:
            name = next(iter(scores))
        else:
            raise ValueError(f"the task has {len(scores)} scorers {sorted(scores)}: name the "
                             f"one whose value is the label, ActiveStopping(..., scorer=NAME)")
        self._scorer_used = name
        sample_score = scores[name]
        value = getattr(getattr(sample_score, "score", sample_score), "value", None)
        if isinstance(value, dict):
            if self.value_key is None or self.value_key not in value:
                raise ValueError(f"sample {sid!r}: scorer {name!r} gives several values "
                                 f"{sorted(value)}; name one with value_key=")
            value = value[self.value_key]
        x = _value_to_float(value)
        judgment = self.session.task.judgment
        hits = [j for j, sc in enumerate(judgment.scores) if x is not None
                and abs(sc - x) < 1e-9]
        if not hits:
            levels = ", ".join(f"{lv}={sc:g}" for lv, sc in zip(judgment.levels,
                                                                  judgment.scores, strict=True))
            raise ValueError(f"sample {sid!r}: scorer {name!r} gave {value!r}, which is not "
                             f"the score of a judgment level of the session ({levels})")
        return hits[0]

    async def complete_task(self) -> dict[str, Any]:
        """The estimate, intervals, design and scores (see :class:`StopSummary`), as JSON."""
        summary = self.summary()
        s = self.session
        cfg = s.session_config
        from activetest.session import draw
        from activetest.session.history_neighbours import surrogate_column, surrogate_label
        from activetest.session.interval_names import (
            ANYTIME,
            EXACT_ANYTIME,
            FIXED_BUDGET,
            interval_name,
        )
        from activetest.stats.confseq import MIN_LABELS

        # what draws, as `status` names it (QA: "history" for --surrogate column:NAME
        # --history, a pool column beside the history's features), the column beside it
        history = cfg.extra.get("history")
        column = surrogate_column(str(cfg.surrogate), history)
        design: dict[str, Any] = {"acquisition": cfg.acquisition,
                                  "surrogate": surrogate_label(str(cfg.surrogate), history),
                                  **({} if column is None else {"surrogate_column": column}),
                                  "proposal_floor": cfg.proposal_floor, "seed": cfg.seed,
                                  "batch": "one eval (an adaptive design is refitted "
                                           "between evals)" if self.batch is None else
                                  f"{self.batch} draws (the design is refitted on the "
                                  f"completed scores between batches, inside the eval)"}
        if cfg.adaptive:
            info = draw.design_info(s.store)
            design["state"] = _jsonable(info)
        out = _jsonable(asdict(summary))
        out["names"] = {"fixed": interval_name(FIXED_BUDGET, summary.level),
                        "anytime": interval_name(ANYTIME, summary.level),
                        "exact": interval_name(EXACT_ANYTIME, summary.level)}
        if summary.estimate is not None and summary.cs_low is None:
            out["cs_note"] = (f"the anytime CS claims nothing before {MIN_LABELS} labels "
                              f"(it is the metric's whole range); "
                              + ("the exact anytime CS (exact_low, exact_high) holds at any "
                                 "number of labels" if summary.exact_low is not None else
                                 "only the fixed-budget interval is given"))
        out.update({"manager": MANAGER, "session": Path(self._name()).name,
                    "n_pool": s.n_items, "width": self.width, "budget": self.budget,
                    # the session's estimator, as `activetest estimate` names it: an
                    # adaptive design's own (LURE with its control; QA: called LURE)
                    "design": design, "method": f"{cfg.metric} by "
                                                f"{'adaptive LURE' if cfg.adaptive else 'LURE'} "
                                                f"over the draw order's longest completed "
                                                f"prefix"})
        # what `activetest init --from-inspect LOG` replays: every draw of the session
        # (item, probability) and every label it holds, as the item's score
        acq = s.acquisitions()
        scores = s.task.judgment.scores
        out["draws"] = [a.item_id for a in acq]
        out["q"] = [float(a.q) for a in acq]
        out["labels"] = {i: float(scores[v]) for i, v in s.labels().items()}
        # where each label came from (``inspect:<eval_id>``: that eval's score, confirmed
        # by its log's sample when read back; else a person's or an import's source):
        # `init --from-inspect` needs it to confirm labels of earlier evals (QA)
        out["sources"] = {lab.item_id: str(lab.source) for lab in s.store.labels().values()}
        out["n_known"] = [int(d[3]) for d in s.store.design_draws()]
        out["eval_id"] = self._eval_id
        # which scorer's value (and which key of a dict value) the labels are: read back,
        # each labelled sample's score in the log is checked against its label by them
        # (QA: a task with several scorers, or a dict value, left the labels unchecked)
        out["scorer"] = self.scorer or self._scorer_used
        out["value_key"] = self.value_key
        # the anytime CS is tuned to the planned budget: a copy made with another one
        # reports other intervals for the same draws and labels (QA)
        out["planned_budget"] = cfg.planned_budget
        # what uniform sampling would have needed for the same anytime width (a
        # projection: seeded simulated uniform runs with the session's CS family)
        out["uniform_runs"] = None
        from activetest.session.harness import UNIFORM_RUNS_METHOD

        out["uniform_runs_method"] = UNIFORM_RUNS_METHOD
        if summary.cs_low is not None and summary.cs_high is not None and \
                summary.estimate is not None and summary.n_labels >= 30:
            from activetest.session.harness import uniform_runs_for_width

            out["uniform_runs"] = uniform_runs_for_width(
                min(max(summary.estimate, 0.0), 1.0), s.n_items,
                summary.cs_high - summary.cs_low, alpha=1.0 - summary.level,
                budget=s.session_config.planned_budget, labels=summary.n_labels,
                sure=bool(s.session_config.sure_bounds))
        from activetest import __version__

        out["activetest_version"] = __version__
        self.close()
        return out

    def summary(self) -> StopSummary:
        """Where this eval stands: the estimate at the stop, else at the longest prefix."""
        s = self.session
        order = tuple(self._order or ())
        pi = self._intervals()
        k = s.labelled_draws().k
        m = self._stopped_at if self._stopped_at is not None else k
        if self._stopped_at is not None:
            reason = "width reached"
        elif all(i in s.labels() for i in order) and order:
            reason = ("pool exhausted" if s.store.n_acquired() >= s.n_items
                      else "budget spent")
        elif not order:
            reason = "nothing drawn"
        else:
            reason = "incomplete"
        vals: list[float | None] = [None] * 7
        if pi is not None and m >= 2:
            j = m - 1
            # the anytime CS (asymptotic) before 30 labels is the whole range: not a number to read
            # as an interval (QA: a stop at 12 labels recorded cs [0, 1] as if claimed)
            claims = pi.claims(m)
            vals = [float(pi.estimate[j]), float(pi.fixed_low[j]), float(pi.fixed_high[j]),
                    float(pi.cs_low[j]) if claims else None,
                    float(pi.cs_high[j]) if claims else None,
                    None if pi.exact_low is None else float(pi.exact_low[j]),
                    None if pi.exact_high is None else float(pi.exact_high[j])]
        cfg = s.session_config
        return StopSummary(s.metrics[0], float(cfg.level), int(m), vals[0], vals[1], vals[2],
                           vals[3], vals[4], self._stopped_at, reason, len(self._started),
                           dict(self._recorded), tuple(self._unscored),
                           dict(self._conflicts), order, tuple(self._batches), vals[5],
                           vals[6])

    def close(self) -> None:
        """Close the session file if this manager opened it."""
        if self._session is not None and isinstance(self._given, (str, os.PathLike)):
            self._session.close()
            self._session = None


class _LookedAheadError(Exception):
    """Raised inside :meth:`ActiveStopping._preview_order`'s transaction to roll it back."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.floating, float)):
        f = float(value)
        return f if math.isfinite(f) else str(f)
    if isinstance(value, (np.integer,)):
        return int(value)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)
