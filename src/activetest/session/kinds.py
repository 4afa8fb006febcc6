"""Session kinds: what differs between a classification and a graded session.

A :class:`~activetest.session.workflow.Session` holds one kind (:func:`kind_for`,
picked once from ``SessionConfig.kind``) and asks it, instead of branching on the
kind itself:

* how a labelled draw's loss is computed (:meth:`SessionKind.losses`): the
  target's class log-probs against the class label (classification), or
  ``1 - score`` of the judgment level given to the target's answer (graded);
* what a person is shown of an item (:meth:`SessionKind.display_items`,
  :meth:`SessionKind.display`): the item, or its question, the target's answer
  and the references;
* what the estimate is computed from (:meth:`SessionKind.estimate_inputs`): the
  losses, the label-noise alarm's inputs, the control-variate controls and the
  loss bounds (:class:`activetest.session.estimate.KindInputs`);
* which targets are compared and how (:meth:`SessionKind.comparisons`):
  classification scores any model on the same labels; graded compares the answers
  of the targets it was created with, each judged
  (:mod:`activetest.session.compare_graded`);
* what ``status`` counts as waiting (compared answers to judge) and which extra
  rows an export carries (one per compared answer).

A new kind (the other issues' history or harness sessions) is one more subclass,
named in :data:`activetest.session.config.KINDS` and picked by :func:`kind_for`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session import compare_graded
from activetest.session import estimate as est
from activetest.session.config import SessionConfig
from activetest.session.records import LabelError
from activetest.session.store import Acquisition, SessionError, SessionStore

__all__ = ["Classification", "Graded", "SessionKind", "kind_for", "kind_for_task"]

#: ``rows -> (len(rows), C)`` the target's class log-probs at pool rows (scored now
#: where not stored).
Score = Callable[[np.ndarray], np.ndarray]
#: a compared model (spec or object) -> ``(stored spec, (K, C) log-probs at the draws)``.
ScoreOther = Callable[[Any], tuple[str, np.ndarray]]

Losses = dict[str, np.ndarray]
Compared = dict[str, dict[str, np.ndarray]]


class SessionKind:
    """What a kind of session decides; see the module docstring.

    Args:
        task: the session's task (None where only losses of class log-probs are
            asked, e.g. by :class:`activetest.ActiveTest`).
        compared: the compared targets' stored specs (graded: given at creation).
    """

    name = ""

    def __init__(self, task: Task | None = None, compared: Sequence[str] = ()) -> None:
        self.task = task
        self.compared_targets: list[str] = [str(s) for s in compared]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(compared={self.compared_targets!r})"

    # ---------------------------------------------------------------- creation

    @staticmethod
    def create(path: str | os.PathLike[str], *, pool: Any, task: Task, surrogate: Any,
               target: Any, options: dict[str, Any],
               ) -> tuple[SessionStore, Mapping[str, Any] | None, Mapping[str, str]]:
        """Write a new session file of this kind: ``(store, scorers, raw specs)``."""
        raise NotImplementedError

    # ---------------------------------------------------------------- losses

    def target_logprobs(self, draws: est.LabelledDraws, score: Score, *,
                        required: bool = False) -> np.ndarray | None:
        """``(K, C)`` the target's class log-probs at the labelled draws, or None where
        the kind has none (``required``: raise :class:`SessionError` instead)."""
        raise NotImplementedError

    def losses(self, draws: est.LabelledDraws, metrics: Sequence[str],
               logprobs: np.ndarray | None) -> Losses:
        """Metric -> ``(K,)`` the loss at each labelled draw of the model whose
        ``(K, C)`` class log-probs at the draws are ``logprobs`` (graded: None)."""
        raise NotImplementedError

    def draw_losses(self, metric: str, rows: np.ndarray, ys: np.ndarray,
                    score: Score) -> np.ndarray:
        """``(len(rows),)`` the losses an adaptive design learns from (of ``metric``)."""
        raise NotImplementedError

    def estimate_inputs(self, draws: est.LabelledDraws, metrics: Sequence[str], *,
                        surrogate_pool: np.ndarray, target_pool: np.ndarray | None,
                        target_lp: np.ndarray | None,
                        compare: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                        ) -> est.KindInputs:
        """What the estimate is computed from (:class:`est.KindInputs`).

        Args:
            draws: the labelled draws.
            metrics: the metrics estimated.
            surrogate_pool: ``(N, C)`` the surrogate's log-probs on the pool.
            target_pool: ``(N, C)`` the target's on the pool (rows of NaN: not scored),
                or None.
            target_lp: :meth:`target_logprobs` at the draws.
            compare: compared target -> metric -> its losses at the draws.
        """
        raise NotImplementedError

    def pool_inputs(self, metrics: Sequence[str], surrogate_pool: np.ndarray,
                    target_pool: np.ndarray | None
                    ) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """The parts of :meth:`estimate_inputs` known without labels: metric -> the
        ``(N,)`` control over the pool, and metric -> the largest loss any item can
        have (``select`` reads them to advance the blind spot's state)."""
        raise NotImplementedError

    def comparisons(self, store: SessionStore, asked: Sequence[Any],
                    draws: est.LabelledDraws, metrics: Sequence[str],
                    score_other: ScoreOther) -> tuple[Compared, list[str]]:
        """Compared targets' losses at the labelled draws, and warnings."""
        raise NotImplementedError

    # ---------------------------------------------------------------- display

    def display_items(self, store: SessionStore, items: Sequence[Item], rows: Sequence[int],
                      role: str = "target") -> list[Item]:
        """The pool ``rows`` as a person labelling them sees them (``role``: whose
        answer, ``"target"`` or ``compare:<spec>``)."""
        return [items[r] for r in rows]

    def display(self, store: SessionStore, item: Item, row: int,
                target: str | None = None) -> str:
        """The text a person labelling ``item`` (pool ``row``) reads (``target``: a
        compared target whose answer is shown; a classification item has none)."""
        assert self.task is not None
        return self.task.render_item(item)

    def compared_answer(self, store: SessionStore, row: int, spec: str) -> str:
        """A compared target's answer at pool ``row``.

        Raises:
            LabelError: ``spec`` is not a compared target.
        """
        spec = compare_graded.stored_compared(store.config(), spec)  # or named by a path
        if spec not in self.compared_targets:
            raise LabelError(f"{spec!r} is not a compared target of this session")
        return store.answers(compare_graded.compare_role(spec)).get(row, ("",))[0]  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- labelling

    def pending_judgments(self, store: SessionStore) -> list[compare_graded.PendingJudgment]:
        """Drawn items whose compared answers still need a judgment, in draw order (a
        classification session compares no answers: none)."""
        return []

    def full_prompt(self, item: Item) -> str | None:
        """The full prompt the target read for ``item`` (a harness log's in-context
        examples and all) where the kind keeps one apart from what is shown; else None."""
        return None

    # ---------------------------------------------------------------- status, export

    def compared_waiting(self, store: SessionStore) -> dict[str, int]:
        """Compared target -> its answers still to judge (``status``)."""
        return {}

    def export_rows(self, store: SessionStore, items: Sequence[Item], rows: list[Item],
                    given: list[int | None], steps: list[int], which: str,
                    acquisitions: Sequence[Acquisition] | None,
                    ) -> tuple[list[Item], list[int | None], list[int]]:
        """The rows of an export sheet: ``rows`` (the draws), plus any the kind adds."""
        return rows, given, steps


class Classification(SessionKind):
    """Class labels: every model's loss is read from its class log-probs."""

    name = "classification"

    @staticmethod
    def create(path: str | os.PathLike[str], *, pool: Any, task: Task, surrogate: Any,
               target: Any, options: dict[str, Any],
               ) -> tuple[SessionStore, Mapping[str, Any] | None, Mapping[str, str]]:
        """:func:`activetest.session.create.create_session` (``compare=``: models scored
        on the pool now, compared at every estimate; the ``compare`` acquisition draws
        for the difference with one of them)."""
        from activetest.session.create import create_session

        store, inputs = create_session(path, pool=pool, task=task, surrogate=surrogate,
                                       target=target, **options)
        return store, inputs.scorers, inputs.raw_specs

    def target_logprobs(self, draws: est.LabelledDraws, score: Score, *,
                        required: bool = False) -> np.ndarray | None:
        """The target scored (or read) at the labelled draws."""
        return score(draws.rows)[draws.rows]

    def losses(self, draws: est.LabelledDraws, metrics: Sequence[str],
               logprobs: np.ndarray | None) -> Losses:
        """Log loss / 0-1 loss of ``logprobs`` against each label."""
        assert logprobs is not None
        return {m: est.per_item_loss(m, logprobs, draws.y) for m in metrics}

    def draw_losses(self, metric: str, rows: np.ndarray, ys: np.ndarray,
                    score: Score) -> np.ndarray:
        """The target's loss of ``metric`` at ``rows`` (scored now where not stored)."""
        return est.per_item_loss(metric, score(rows)[rows], ys)

    def estimate_inputs(self, draws: est.LabelledDraws, metrics: Sequence[str], *,
                        surrogate_pool: np.ndarray, target_pool: np.ndarray | None,
                        target_lp: np.ndarray | None,
                        compare: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                        ) -> est.KindInputs:
        """Losses and both NLLs from class log-probs; controls: the surrogate's expected
        loss of the target (:func:`est.controls`); the log loss's bound where the target
        is known on the whole pool."""
        assert target_lp is not None
        controls, bounds = self.pool_inputs(metrics, surrogate_pool, target_pool)
        return est.KindInputs(
            losses=self.losses(draws, metrics, target_lp),
            surrogate_nll=-surrogate_pool[draws.rows, draws.y],
            target_nll=-target_lp[np.arange(draws.k), draws.y],
            pool_controls=controls, loss_bounds=bounds, compare=dict(compare or {}))

    def pool_inputs(self, metrics: Sequence[str], surrogate_pool: np.ndarray,
                    target_pool: np.ndarray | None
                    ) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Controls: the surrogate's expected loss of the target (:func:`est.controls`);
        the log loss's bound where the target is known on the whole pool."""
        bounds: dict[str, float] = {}
        if target_pool is not None and np.all(np.isfinite(target_pool)):
            from activetest.stats import log_loss_bound

            bounds["log_loss"] = log_loss_bound(target_pool)  # known without labels
        return est.controls(metrics, surrogate_pool, target_pool), bounds

    def comparisons(self, store: SessionStore, asked: Sequence[Any],
                    draws: est.LabelledDraws, metrics: Sequence[str],
                    score_other: ScoreOther) -> tuple[Compared, list[str]]:
        """Any model, scored on the labelled items: its losses on the same labels."""
        out: Compared = {}
        for other in asked:
            spec, o_lp = score_other(other)
            out[spec] = self.losses(draws, metrics, o_lp)
        return out, []


class Graded(SessionKind):
    """Free-form answers judged by people: a label is the judgment level of the target's
    answer, its loss ``1 - score``; compared targets' answers are judged too."""

    name = "graded"

    @property
    def _scores(self) -> np.ndarray:
        assert self.task is not None
        return np.asarray(self.task.judgment.scores)  # type: ignore[attr-defined]

    @staticmethod
    def create(path: str | os.PathLike[str], *, pool: Any, task: Task, surrogate: Any,
               target: Any, options: dict[str, Any],
               ) -> tuple[SessionStore, Mapping[str, Any] | None, Mapping[str, str]]:
        """:func:`activetest.session.create_graded.create_graded_session`; a ``lm-eval``
        target: :func:`activetest.session.harness.create_lmeval_session`."""
        from activetest.session.create_graded import create_graded_session
        from activetest.session.harness import (
            create_inspect_session,
            create_lmeval_session,
            is_inspect_target,
            is_lmeval_target,
        )

        options = dict(options)
        if options.pop("label_scoring", "first-token") != "first-token":
            raise SessionError(f"label_scoring (--label-scoring) is how a classification "
                               f"task's label words are scored; task {task.name!r} is "
                               f"graded (answers judged, no label words)")

        if is_lmeval_target(target):  # the target runs inside lm-eval, on drawn items only
            store, _ = create_lmeval_session(path, pool=pool, task=task, target=target,
                                             surrogate=surrogate, **options)
            return store, None, {}
        if is_inspect_target(target):  # ... or inside an inspect_ai eval
            store, _ = create_inspect_session(path, pool=pool, task=task, target=target,
                                              surrogate=surrogate, **options)
            return store, None, {}

        store, graded = create_graded_session(path, pool=pool, task=task,  # type: ignore[arg-type]
                                              target=target, surrogate=surrogate, **options)
        return store, None, graded.raw_specs

    def target_logprobs(self, draws: est.LabelledDraws, score: Score, *,
                        required: bool = False) -> np.ndarray | None:
        """None: the target gives answers (raises with ``required``)."""
        if required:
            raise SessionError("a graded session's target gives answers, not class "
                               "log-probs")
        return None

    def losses(self, draws: est.LabelledDraws, metrics: Sequence[str],
               logprobs: np.ndarray | None) -> Losses:
        """``1 - score`` of the judgment level given (the error rate)."""
        return {"error_rate": 1.0 - self._scores[draws.y]}

    def draw_losses(self, metric: str, rows: np.ndarray, ys: np.ndarray,
                    score: Score) -> np.ndarray:
        """``1 - score`` of the judgment levels ``ys``."""
        return 1.0 - self._scores[ys]

    def estimate_inputs(self, draws: est.LabelledDraws, metrics: Sequence[str], *,
                        surrogate_pool: np.ndarray, target_pool: np.ndarray | None,
                        target_lp: np.ndarray | None,
                        compare: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                        ) -> est.KindInputs:
        """Losses from the judgments; the noise alarm asks the surrogate (the judge)
        only; control: the surrogate's expected loss of the judgment; no loss bound
        beyond the error rate's."""
        return est.KindInputs(
            losses=self.losses(draws, metrics, None),
            surrogate_nll=_modelled_nll(surrogate_pool, draws.rows, draws.y), target_nll=None,
            pool_controls=self.pool_inputs(metrics, surrogate_pool, target_pool)[0],
            compare=dict(compare or {}))

    def pool_inputs(self, metrics: Sequence[str], surrogate_pool: np.ndarray,
                    target_pool: np.ndarray | None
                    ) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Control: the surrogate's expected loss of the judgment; no loss bound beyond
        the error rate's."""
        from activetest.session.design import expected_loss

        return {"error_rate": expected_loss(surrogate_pool, self.task)}, {}

    def comparisons(self, store: SessionStore, asked: Sequence[Any],
                    draws: est.LabelledDraws, metrics: Sequence[str],
                    score_other: ScoreOther) -> tuple[Compared, list[str]]:
        """The compared targets' judged answers at the labelled draws.

        Default: every compared target whose answers are judged on all labelled
        draws (the others are named in a warning). Asked for by name: that target,
        and an error while judgments are missing.
        """
        known = self.compared_targets
        names = [os.fspath(o) if isinstance(o, (str, os.PathLike)) else o for o in asked]
        bad = [n for n in names if not isinstance(n, str) or n not in known]
        if bad:
            raise SessionError(f"a graded session compares the targets it was created with "
                               f"(--compare at init: {', '.join(map(repr, known)) or 'none'}); "
                               f"{bad[0]!r} is not one of them, because judging its answers "
                               f"needs them stored before labelling")
        out: Compared = {}
        warnings = []
        for spec in names or known:
            loss, missing = compare_graded.compared_losses(store, self.task,  # type: ignore[arg-type]
                                                           spec, draws.rows)
            if missing:
                first = draws.item_ids[missing[0]]
                msg = (f"{spec}: {len(missing)} of {draws.k} labelled item(s) have its answer "
                       f"not yet judged (first: item {first!r}); `activetest label` asks for "
                       f"them (or judge(..., target={spec!r}))")
                if names:
                    raise SessionError(f"cannot compare with {msg}")
                warnings.append(f"no comparison with {msg}")
                continue
            out[spec] = {"error_rate": loss}
        return out, warnings

    def display_items(self, store: SessionStore, items: Sequence[Item], rows: Sequence[int],
                      role: str = "target") -> list[Item]:
        """Each item's prompt fields with ``role``'s answer and the references (the
        answers of ``rows`` read, not every answer: one item shown read them all)."""
        answers = store.answers_at(role, rows)
        refs = store.answers_at("target", rows) if role != "target" else answers
        out = []
        for r in rows:
            answer = answers.get(r, ("",))[0]
            ref = refs.get(r, ("", ()))[1]
            out.append(Item(items[r].id, {**items[r].fields, "answer": answer,
                                          "references": " | ".join(ref)}, items[r].label))
        return out

    def display(self, store: SessionStore, item: Item, row: int,
                target: str | None = None) -> str:
        """The question, the target's answer (or the compared ``target``'s) and the
        references."""
        answer, refs, _ = store.answers("target").get(row, ("", (), {}))
        if target is not None:
            answer = self.compared_answer(store, row, target)
        return self.task.display(item, answer, refs)  # type: ignore[union-attr]

    def pending_judgments(self, store: SessionStore) -> list[compare_graded.PendingJudgment]:
        """:func:`activetest.session.compare_graded.pending_judgments`."""
        return compare_graded.pending_judgments(store)

    def full_prompt(self, item: Item) -> str | None:
        """The item's :data:`~activetest.data.generative.FULL_PROMPT` field, if any."""
        from activetest.data.generative import FULL_PROMPT

        full = item.fields.get(FULL_PROMPT)
        return str(full) if full else None

    def compared_waiting(self, store: SessionStore) -> dict[str, int]:
        """Compared target -> its answers on drawn items still to judge."""
        waiting = {spec: 0 for spec in self.compared_targets}
        for p in self.pending_judgments(store):
            waiting[p.spec] += 1
        return waiting

    def export_rows(self, store: SessionStore, items: Sequence[Item], rows: list[Item],
                    given: list[int | None], steps: list[int], which: str,
                    acquisitions: Sequence[Acquisition] | None,
                    ) -> tuple[list[Item], list[int | None], list[int]]:
        """With compared targets: one row per answer to judge, blind: item by item in draw
        order, each item's answers in their shown order (the page's and the terminal's,
        :func:`~activetest.session.compare_graded.shown_order`) and marked ``answer_of``
        A, B, ... in it, no model named (import reads the letters back:
        :func:`~activetest.session.compare_graded.letters_to_targets`)."""
        if not self.compared_targets:
            return rows, given, steps
        config = store.config()
        entries = [(st, "target", r, g) for r, g, st in zip(rows, given, steps, strict=True)]
        if which == "pending" and acquisitions is None:
            extra = [(p.acquisition, p.spec) for p in self.pending_judgments(store)]
        else:
            extra = [(a, spec) for a in (acquisitions or store.acquisitions())
                     for spec in self.compared_targets]
        for spec in self.compared_targets:
            role = compare_graded.compare_role(spec)
            own = store.judgments(role)
            mine = [a for a, sp in extra if sp == spec and not (
                which == "labelled" and acquisitions is None and a.index not in own)]
            shown = self.display_items(store, items, [a.index for a in mine], role)
            for a, item in zip(mine, shown, strict=True):
                entries.append((a.step, role, item,
                                own[a.index].label if a.index in own else None))
        lettered = sorted(((st, compare_graded.answer_letter(config, st, role), item, g)
                           for st, role, item, g in entries), key=lambda e: (e[0], e[1]))
        return ([Item(item.id, {**item.fields, "answer_of": letter}, item.label)
                 for _, letter, item, _ in lettered],
                [g for *_, g in lettered], [st for st, *_ in lettered])


_KINDS: dict[str, type[SessionKind]] = {"classification": Classification, "graded": Graded}


def kind_for(config: SessionConfig, task: Task | None = None) -> SessionKind:
    """The kind of a session with this config (``SessionConfig.kind``)."""
    return _KINDS[config.kind](task, compare_graded.compared_specs(config))


def kind_for_task(task: Task) -> type[SessionKind]:
    """The kind of session a new session of ``task`` is: graded for a generative task."""
    from activetest.data.generative import GenTask

    return Graded if isinstance(task, GenTask) else Classification


#: A level no pool item gets more than this probability from a surrogate: one it does not
#: model (a two-level surrogate over three levels gives the middle one 1e-6:
#: :func:`activetest.models.judges.binary_to_levels`).
UNMODELLED = 1e-5


def _modelled_nll(surrogate_pool: np.ndarray, rows: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``-log pi(y)`` of each labelled judgment level, NaN at a level the surrogate does
    not model (no item above :data:`UNMODELLED`): the noise alarm cannot judge those (QA:
    every "partial" judgment under a correct/incorrect surrogate was flagged, NLL 13.8)."""
    lp = np.asarray(surrogate_pool, dtype=np.float64)
    nll = -lp[rows, y]
    unmodelled = np.exp(lp.max(axis=0)) <= UNMODELLED
    return np.where(unmodelled[np.asarray(y, dtype=np.int64)], np.nan, nll)

