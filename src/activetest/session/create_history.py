"""``init --history``: other models' results on the same items, joined to a new session's pool.

Each ``--history`` path is a response matrix (a file:
:func:`activetest.formats.history.read_response_matrix`) or a folder of other models'
harness logs on the same task, one model per file
(:func:`activetest.formats.history.read_history_folder`: lm-eval ``--log_samples``
files, inspect_ai logs, Every Eval Ever instance files; each file's own per-item
judgment is its row). Both are joined to the pool by item id
(:func:`activetest.data.history.join_history`); a log whose ids may be mere positions
(lm-eval's ``doc_id``, inspect_ai's numbering, their Every Eval Ever copies) joins only
where every shared item's content confirms it (:func:`~activetest.formats.lmeval.check_documents`
for lm-eval multiple-choice files, :func:`~activetest.models.answer_files.confirm_join`
for the others), and a refused join names the file, the item and both sides. A log
judged against another gold answer than the pool's or another log's on an item (another
revision of the dataset) is refused, naming the file, the item and both golds
(:func:`_check_golds`). Logs of lm-eval tasks other than the pool's are passed over,
said: the target's files' task, or where they name none the one task whose logs join the
pool by content (:func:`_pool_task`). The target's own run is never used: a log that IS
the target's file (same path or same bytes; a folder or glob target's samples files
each), or whose own record names the target's model (a re-run of it), is dropped and
said, and so, in an inspect session, is a log an eval with ActiveStopping wrote
(:func:`_active_stopping_log`), as are rows named by ``--history-exclude`` and rows
identical to the target's own results (graded sessions with the harness's judgment: its
scores; classification sessions: an lm-eval target's ``acc``, or a ``table:`` target's top
class against the pool's labels); where there are none (``--target pool``) a
:class:`HistoryTargetNotice` says that its run under another name cannot be recognised.

Classification sessions (:class:`HistorySetup`): the design is the feature design of
:mod:`activetest.stats.feature_design` on the history's features and the surrogate's
class probabilities (no target predictions on the pool: the acquisition is
``pe_adaptive``, the target runs only on the labelled items), fitted to the error
rate; the config records ``"design": "features"``, the ``history`` record (with
``"features": ["surrogate"]``) and no ``design_rule`` (the original in-run rule), so a
replay rebuilds the same design (:func:`activetest.session.design.stored_design`).

Both kinds add, unless ``--no-history-neighbours``, the similarity-weighted neighbours'
column learnt in-run (:mod:`activetest.session.history_neighbours`): the joined response
matrix is stored and the ``history`` record gets ``"neighbours"`` (:func:`with_neighbours`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.formats.globs import is_pattern
from activetest.formats.tables import missing_file
from activetest.session.config import SessionConfig
from activetest.session.history_neighbours import NeighbourUpdate
from activetest.session.history_positions import PoolColumns
from activetest.session.history_sources import (
    HistoryFile,
    LocalPaths,
    Published,
    publish,
    with_local,
)
from activetest.session.store import SessionError, SessionStore

__all__ = ["HistorySetup", "HistoryTargetNotice", "PoolSignal", "check_history_options",
           "classification_history", "join_pool_history", "settings_are_own", "target_files",
           "with_neighbours"]

#: What a missing ``--history`` path was given as (:func:`missing_file`'s words).
HISTORY_GIVEN_AS = "other models' results, --history"


class HistoryTargetNotice(UserWarning):
    """The target's own run in the history cannot be recognised by its results: the target
    has no scores before labelling (e.g. ``--target pool``), so a run of it under another
    name would be used as another model's; ``--history-exclude NAME`` leaves it out."""


@dataclass(frozen=True)
class PoolSignal:
    """A harness session's own label-free signal, read by the history design beside the
    history's features (``--surrogate pool-run --history`` in an lm-eval session: the pool
    run's choice features; ``--surrogate column:NAME --history`` in an inspect session: the
    column's P(correct) as log-odds). Standardised by the feature design; stored with role
    ``features`` (:meth:`put`), and the config's ``history`` record lists
    :data:`~activetest.session.design.POOL_SIGNAL` in its ``features`` (:meth:`record`).

    Attributes:
        columns: ``(N, D)`` the signal's columns.
        names: a name per column (the fitted weights' names).
        label: what ``init``, ``status`` and reports call it.
        column: the pool column it is read from (``--surrogate column:NAME``; None: the
            signal is no pool column), recorded as ``"pool_column"``: the surrogate
            ``init``, ``status`` and reports name
            (:func:`activetest.session.history_neighbours.surrogate_label`).
    """

    columns: np.ndarray
    names: tuple[str, ...]
    label: str
    column: str | None = None

    def record(self, info: Mapping[str, Any]) -> dict[str, Any]:
        """The ``history`` record ``info`` with the signal listed."""
        from activetest.session.design import POOL_SIGNAL

        return {**info, "features": [*info.get("features", []), POOL_SIGNAL],
                "pool_signal": self.label,
                **({"pool_column": self.column} if self.column is not None else {})}

    def put(self, store: SessionStore) -> None:
        """Store the columns the design is rebuilt from (role ``features``)."""
        store.put_scores("features", "pool-signal", np.asarray(self.columns, dtype=np.float64),
                         {"names": list(self.names), "label": self.label,
                          "meaning": "the pool's own signal beside the history's features "
                                     "(the feature design standardises them)"},
                         predictions=False)


@dataclass(frozen=True)
class PoolItem:
    """A pool item as the history join compares it with a log's record.

    Attributes:
        item_id: the pool's id.
        fields: its prompt fields (texts).
        references: its references (graded items; may be empty).
        extra: its other columns.
        gold: the texts of its gold answer where it is not ``references`` (a
            classification item's label word and class name; empty: unknown), compared
            with the gold a log was judged against (:func:`_check_golds`).
    """

    item_id: str
    fields: Mapping[str, str]
    references: Sequence[str] = ()
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    gold: Sequence[str] = ()


def check_history_options(metric: str, acquisition: str | None) -> str:
    """The acquisition of a classification session with ``--history``: ``pe_adaptive``.

    Raises:
        SessionError: a metric other than the error rate, or another acquisition.
    """
    if metric != "error_rate":
        raise SessionError("--history in a classification session estimates the error rate: "
                           "add --metric error_rate (other models' results say which items "
                           "they got wrong, not the target's log loss); docs/history.md")
    if acquisition not in (None, "pe_adaptive"):
        raise SessionError(f"--history draws by its own design (the feature design, no "
                           f"target predictions on the pool): leave --acquisition out (it is "
                           f"{acquisition!r})")
    return "pe_adaptive"


def target_files(*specs: str) -> list[Path]:
    """The files of ``table:FILE`` / ``answers:FILE`` target specs (options dropped); a
    folder or a glob pattern of lm-eval samples files (``table:runs/new/``,
    ``table:runs/new/samples_*.jsonl``) as the samples files it names
    (:func:`activetest.formats.lmeval.lmeval_files`; QA: the pattern itself was kept, so
    the target's own file in a --history folder was used as another model's run, and its
    task was unknown)."""
    from activetest.formats.lmeval import lmeval_files

    out = []
    for spec in specs:
        head, sep, rest = str(spec).partition(":")
        if sep and head in ("table", "answers") and rest:
            path = Path(rest.partition("?")[0])
            if path.is_dir() or is_pattern(path):
                try:
                    out.extend(lmeval_files(path))
                    continue
                except ValueError:
                    pass  # the target's own scoring names it
            out.append(path)
    return out


def _fold(text: str) -> str:
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _number(value: Any) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def _confirm_inputs(run: Any, items: Sequence[PoolItem], hits: Sequence[tuple[int, int]]
                    ) -> None:
    """An inspect_ai session's rule for an inspect_ai log in its history, as the eval's
    own samples are joined (:class:`activetest.inspect.ActiveStopping`): every prompt field
    of a pool item occurs in the input of the log's sample of its id (Unicode-normalised,
    case and whitespace ignored), whatever the ids look like. QA: a log of another task
    whose samples share the pool's ids (``sum-1``, ...) was joined by id alone and steered
    the draws as this task's results.

    Raises:
        ValueError: naming the first item that differs, both texts and how many differ
            (:func:`_confirm` names the log).
    """
    recs = run.answers.records
    differ: list[tuple[int, int, list[str]]] = []
    for k, r in hits:
        own = {name: _fold(v) for name, v in items[r].fields.items()
               if isinstance(v, str) and _fold(v)}
        shown = recs[k].meta.get("prompt_text")
        if not own or not isinstance(shown, str):
            continue  # nothing to confirm by (the manager's rule: unchecked)
        folded = _fold(shown)
        missing = [name for name, f in own.items() if f not in folded]
        if missing:
            differ.append((k, r, missing))
    if differ:
        k, r, missing = differ[0]
        text = " ".join(" ".join(str(v).split()) for v in items[r].fields.values())
        inp = " ".join(str(recs[k].meta.get("prompt_text", "")).split())
        fields = {name for _, _, m in differ for name in m}
        # a column of numbers no sample shows (QA: the README's p_correct with --surrogate
        # history was a text field, and the log was called another task's)
        column = (f"; the pool's column {next(iter(fields))!r} holds numbers no sample's input "
                  f"shows, while its other text is: a column that is not the samples' text (a "
                  f"surrogate's? name it with --surrogate column:{next(iter(fields))}, or "
                  f"drop it from the pool; the eval's own samples are joined the same way)"
                  if len(fields) == 1 and len(items[r].fields) > 1
                  and all(len(m) == 1 and _number(items[i].fields[m[0]])
                          for _, i, m in differ) else
                  ": a run of another task or dataset with the same sample ids? Every log in "
                  "a --history folder must be a run on the pool's samples (joined by id and "
                  "confirmed by content, as the eval's own samples are): move it out")
        raise ValueError(
            f"pool item {items[r].item_id!r} is not the log's sample "
            f"{recs[k].item_id!r}: the item reads {text[:80]!r} ({', '.join(missing)} not in "
            f"the sample's input), the sample's input {inp[:80]!r} ({len(differ)} of "
            f"{len(hits)} shared item(s) differ){column}")


def _confirm(run: Any, items: Sequence[PoolItem], pos: Mapping[str, int], *,
             inputs: bool = False) -> None:
    """Refuse a log whose shared items' content does not confirm its ids (module
    docstring); names the file, the item and both sides. ``inputs``: also an inspect_ai
    session's rule for inspect_ai logs, whatever their ids (:func:`_confirm_inputs`)."""
    from activetest.formats.lmeval import check_documents
    from activetest.models.answer_files import JoinItem, confirm_join

    hits = [(k, pos[i.strip()]) for k, i in enumerate(run.item_ids) if i.strip() in pos]
    if not hits and run.item_ids and items:
        # a log, not a matrix (QA: told to "rename its columns", "never by position")
        from activetest.data.history import near_misses

        miss = near_misses([i.strip() for i in run.item_ids],
                            [it.item_id.strip() for it in items], pos)
        raise SessionError(
            f"--history {run.source}: none of the log's {len(run.item_ids)} item ids is a "
            f"pool item id (e.g. {run.item_ids[0]!r} in the log, {items[0].item_id!r} in the "
            f"pool): "
            + (f"{miss[0]!r} in the log is {miss[1]!r} in the pool but for case, blanks, "
               f"leading zeros, a number's '.0' or control and invisible characters: ids "
               f"are matched exactly, never guessed"
               if miss is not None else
               "a run of another task or dataset? every log in a --history folder must be a "
               "run on the pool's items: move it out"))
    if not hits:
        return  # join_history refuses it, naming an id of each side
    try:
        if run.samples is not None:
            check_documents(run.samples, [k for k, _ in hits],
                            [(items[r].item_id, items[r].fields) for _, r in hits],
                            remedy="so either this log is a run of another task or "
                                   "dataset (every log in a --history folder must be a "
                                   "run on the pool's documents: move it out), or the "
                                   "pool lists the documents in another order than the "
                                   "log's (name an id column holding lm-eval's doc_id, "
                                   "--id-column, or use a samples file of the task as the "
                                   "pool)")
        elif run.answers is not None:
            recs = run.answers.records
            confirm_join(run.answers, [JoinItem(items[r].item_id, items[r].fields,
                                                items[r].references, items[r].extra)
                                       for _, r in hits], [recs[k] for k, _ in hits])
            if inputs and run.answers.format == "inspect":
                _confirm_inputs(run, items, hits)
    except ValueError as exc:
        raise SessionError(f"--history {run.source}: the log's item ids do not join this "
                           f"pool: {exc}") from None


@dataclass(frozen=True)
class _Gold:
    """The gold answer a log's record was judged against, for :func:`_check_golds`.

    Attributes:
        kind: ``choice`` (an lm-eval multiple-choice gold choice's text) or ``answer``
            (an answer file's references: inspect's target, EEE's reference, lm-eval's
            generative target); golds are compared within a kind only.
        texts: the gold's texts (any one is the gold).
        where: the record (file and line or id).
    """

    kind: str
    texts: tuple[str, ...]
    where: str

    def key(self, texts: Sequence[str] | None = None) -> frozenset[str]:
        """The normalised texts (``texts``: others, normalised as this kind's): a choice
        as its text, blanks and case ignored; answers SQuAD-normalised, as
        :func:`~activetest.models.answer_files.confirm_join` compares references."""
        from activetest.data.generative import normalize_answer
        from activetest.formats.lmeval import normalise_text

        norm = normalise_text if self.kind == "choice" else (
            lambda t: normalize_answer(t) or normalise_text(t))
        return frozenset(x for x in (norm(str(t)) for t in (
            self.texts if texts is None else texts)) if x)


def _run_golds(run: Any, pos: Mapping[str, int]) -> dict[int, _Gold]:
    """Pool row -> the gold the log's record of that item was judged against, where the
    log states it (an lm-eval record's ``target``, an answer file's references)."""
    out: dict[int, _Gold] = {}
    if run.samples is not None:
        s = run.samples
        for k, i in enumerate(s.item_ids):
            lab = int(s.labels[k])
            conts = (s.doc_choices[k] if s.doc_choices and s.doc_choices[k] else s.choices)
            if i.strip() in pos and 0 <= lab < len(conts):
                out[pos[i.strip()]] = _Gold("choice", (conts[lab],),
                                            s.where[k] if s.where else run.source)
    elif run.answers is not None:
        for r in run.answers.records:
            if r.item_id.strip() in pos and r.references:
                out[pos[r.item_id.strip()]] = _Gold("answer", tuple(r.references),
                                                    f"{run.source}: record {r.item_id!r}")
    return out


def _shown(texts: Sequence[str]) -> str:
    t = list(dict.fromkeys(str(x) for x in texts))
    return repr(t[0]) if len(t) == 1 else repr(t[:3])[:-1] + (", ...]" if len(t) > 3 else "]")


def _label_words(items: Sequence[PoolItem]) -> dict[str, frozenset[str]]:
    """The pool's label words (its items' ``gold``), normalised as each kind of gold
    (:func:`_check_golds`)."""
    texts = tuple(dict.fromkeys(str(t) for it in items for t in it.gold))
    return {kind: _Gold(kind, texts, "").key() for kind in ("choice", "answer")}


def _check_golds(run: Any, items: Sequence[PoolItem], pos: Mapping[str, int],
                 seen: dict[tuple[str, int], _Gold], words: Mapping[str, frozenset[str]]
                 ) -> None:
    """Refuse a log judged against another gold answer than the pool's, or than an
    earlier log's, on an item (another revision of the dataset: a relabelled item). Its
    right/wrong would feed the design as if comparable; which gold is right is not
    guessed (the pool may be the stale one), so the log is refused, not dropped: the
    message names the file, the item and both golds. ``seen``: (kind, pool row) -> the
    first log's gold, filled in. A gold is compared with a classification pool's label
    only where it is one of the pool's label ``words`` (:func:`_label_words`; choices or
    targets that are answer texts or letters, not label words, are compared across logs
    only); with a graded pool's references always."""
    golds = _run_golds(run, pos)
    pool_bad: list[tuple[int, _Gold]] = []
    log_bad: list[tuple[int, _Gold, _Gold]] = []
    for r, g in golds.items():
        mine = g.key()
        if not mine:
            continue
        theirs = g.key(items[r].gold or items[r].references)
        comparable = not items[r].gold or bool(mine & words[g.kind])
        if theirs and comparable and not mine & theirs:
            pool_bad.append((r, g))
        first = seen.setdefault((g.kind, r), g)
        if first is not g and first.key() and not mine & first.key():
            log_bad.append((r, g, first))
    if pool_bad:
        r, g = pool_bad[0]
        it = items[r]
        raise SessionError(
            f"--history {run.source}: pool item {it.item_id!r} has the gold answer "
            f"{_shown(it.gold or it.references)} in the pool but {_shown(g.texts)} in this "
            f"log ({g.where}; {len(pool_bad)} of {len(golds)} items differ): the log was "
            f"judged against another revision of the dataset (a relabelled item), so its "
            f"right/wrong is not comparable with the target's; which gold is right is not "
            f"guessed: move the log out of the folder, or re-run it on the pool's revision")
    if log_bad:
        r, g, first = log_bad[0]
        raise SessionError(
            f"--history {run.source}: pool item {items[r].item_id!r} has the gold answer "
            f"{_shown(g.texts)} in this log ({g.where}) but {_shown(first.texts)} in "
            f"{first.where} ({len(log_bad)} item(s) differ): the logs were judged against "
            f"different revisions of the dataset (a relabelled item), so their right/wrong "
            f"is not comparable; which gold is right is not guessed: keep only the logs of "
            f"the pool's revision in the folder")


def _stated_model(path: Path) -> tuple[str, dict[str, str], dict[str, str]] | None:
    """The model a harness log says it is of (lm-eval's results file beside samples, an
    inspect_ai or Every Eval Ever log's own record), as written (a local path too: named
    with the history's by :func:`activetest.formats.model_ids.distinct_names`, never
    stored), never a name guessed from a folder or file name, with which of its weights
    ran where stated (:attr:`activetest.formats.history.HistoryRun.variant`) and how it
    was run (:attr:`activetest.formats.history.HistoryRun.settings`: lm-eval's n-shot, an
    inspect_ai eval's plan and generation settings; empty where not stated); None where
    the file is no such log or says nothing.

    Raises:
        SessionError: an lm-eval results file beside it that cannot be read (named: the
            target's re-runs in the history would not be recognised by their model).
    """
    from activetest.formats.answers import read_answers
    from activetest.formats.history import (
        ResultsFileError,
        answers_model,
        lmeval_model_variant,
        lmeval_settings,
        lmeval_stated_model,
    )

    try:
        name = lmeval_stated_model(path)
        if name is not None:
            return name, lmeval_model_variant(path) or {}, lmeval_settings(path)
        af = read_answers(path, skip_missing=True)
        stated, variant = answers_model(af)
        ran = (lmeval_settings(path) if af.format == "lmeval"
               else af.provenance.get("settings") or {})
    except ResultsFileError as exc:
        raise SessionError(f"--target: {exc}") from None
    except (ValueError, OSError, KeyError, TypeError):
        return None
    return None if not stated else (stated, variant,
                                    {str(k): str(v) for k, v in dict(ran).items()})


def _settings_text(settings: Mapping[str, str]) -> str:
    """``n-shot=3, temperature=0.5`` (``no settings stated`` for none)."""
    return (", ".join(f"{k}={v}" for k, v in sorted(settings.items())) if settings
            else "no settings stated")


def settings_are_own(ran: Mapping[str, str],
                     own: Sequence[tuple[str | None, Mapping[str, str]]],
                     task: str | None = None) -> tuple[bool, str]:
    """Whether a history log of the target's own model, run with settings ``ran``
    (:attr:`activetest.formats.history.HistoryRun.settings`), is the target's own run: its
    settings equal those of one of the target's logs ``own`` (each ``(its lm-eval task or
    None, its settings)``). A run of an lm-eval ``task`` is compared with the target's logs
    of that task where it has any (lm-eval's n-shot is a task's: a glob ``--target`` over
    the logs of several tasks holds several, and a 0-shot run of one task is not the
    target's own because the target ran another task 0-shot; QA); else with all of them.
    A run whose settings differ from each of them (lm-eval's n-shot, an inspect_ai eval's
    plan, generation settings or task arguments) is another system, as runs of one model
    at other settings are in a history (:func:`activetest.formats.run_settings.name_apart`);
    where either side states no settings, they cannot be compared and the run is taken
    for the target's (not guessed to be another system). ``init --history`` decides by
    it, and lm-eval's ``import`` for a history row of the target's model named apart by
    its settings (:func:`activetest.session.harness_history.target_in_history`). Returns
    the answer and what was found, said (``at the same settings (n-shot=3)``,
    ``n-shot=0, the target's n-shot=3``)."""
    ran = dict(ran)
    mine = ([dict(o) for t, o in own if task is not None and t == task]
            or [dict(o) for _, o in own])
    if not mine:
        return True, "(the target's log states no settings to compare)"
    if any(o == ran for o in mine):
        return True, f"at the same settings ({_settings_text(ran)})"
    if not ran or not all(mine):
        side = "its log" if not ran else "the target's log"
        return True, (f"(its settings cannot be compared: {side} states none; "
                      f"its {_settings_text(ran)}, the target's "
                      f"{' or '.join(_settings_text(o) for o in mine)})")
    theirs = " or ".join(_settings_text(o) for o in mine)
    return False, f"{_settings_text(ran)}, the target's {theirs}"


def _active_stopping_log(run: Any) -> str | None:
    """Why an inspect session's history leaves out ``run``, a log written by an eval with
    :class:`activetest.inspect.ActiveStopping` (None: no such log).

    Such a log's scores are an activetest session's labels: its target's own results on the
    items that session drew. An inspect session's target is named only by the eval that
    runs it, never at ``init``, so a log of this target's earlier run (the README's loop
    run again, a session remade with ``--from-inspect``) cannot be told from another
    model's by its model name or its results; and the target's own results are never
    history (issue 21). It is dropped, said, rather than the session refused: the log
    states what it is (its manager), so nothing is guessed, and leaving a row out of the
    history only changes which items the design favours (every estimate stays unbiased);
    the rest of the history is used. Another model's run on these samples is history as
    a full eval (without ActiveStopping)."""
    from activetest.formats.inspect import ACTIVE_STOPPING

    stop = (getattr(run.answers, "provenance", None) or {}).get("early_stopping")
    if not isinstance(stop, Mapping) or stop.get("manager") != ACTIVE_STOPPING:
        return None
    session = stop.get("session")
    return (f"{run.source} is an eval run with activetest.inspect.ActiveStopping"
            + (f" (session {session})" if isinstance(session, str) else "")
            + ": its scores are an inspect session's labels of its target, which cannot be "
              "told from this session's target's own earlier run; another model's run on "
              "these samples is history as a full eval, without ActiveStopping")


def _pool_task(runs: Sequence[Any], items: Sequence[PoolItem], pos: Mapping[str, int], *,
               inputs: bool, target_spec: str) -> set[str]:
    """The pool's lm-eval task where the target names none (a CSV pool and target) and the
    history holds lm-eval logs of several tasks (``lm_eval --tasks a,b`` writes both in
    one folder; doc_ids are positions in each task's split, so every task's log shares the
    pool's ids): the one task some log of which joins the pool by content
    (:func:`_confirm`: each shared item's text is its record's document). Nothing is
    guessed: with logs of one task, or none confirmed, the empty set (each log is then
    checked and refused by its own content check, as before); several confirmed are
    refused, naming them.

    Raises:
        SessionError: logs of two or more tasks join the pool by content.
    """
    from activetest.formats.history import HistoryRun, lmeval_task

    tasks: dict[str, list[Any]] = {}
    for run in runs:
        if isinstance(run, HistoryRun) and run.format == "lmeval":
            task = lmeval_task(run.source)
            if task is not None:
                tasks.setdefault(task, []).append(run)
    if len(tasks) < 2:
        return set()
    joined: dict[str, str] = {}
    for task, logs in sorted(tasks.items()):
        for run in logs:
            if not any(i.strip() in pos for i in run.item_ids):
                continue
            try:
                _confirm(run, items, pos, inputs=inputs)
            except SessionError:
                continue
            joined[task] = run.source
            break
    if len(joined) > 1:
        raise SessionError(
            f"--history: lm-eval logs of {len(joined)} tasks join the pool's items by "
            f"content ({'; '.join(f'{t}: {f}' for t, f in joined.items())}), and the target "
            f"({target_spec or 'given'}) names no task: which one the pool's items are is "
            f"not guessed. Give the target as that task's samples file "
            f"(table:.../samples_<task>_<date>.jsonl), or keep one task's logs in the "
            f"--history folder")
    return set(joined)


def join_pool_history(paths: Sequence[str | os.PathLike[str]], items: Sequence[PoolItem], *,
                      exclude: Sequence[str] = (), target_scores: np.ndarray | None = None,
                      targets: Sequence[str | os.PathLike[str]] = (),
                      positional: str | None = None, target_spec: str = "",
                      ids_are_positions: bool = False,
                      confirm_inputs: bool = False,
                      pool_columns: PoolColumns | None = None) -> Any:
    """Join response matrices and folders of harness logs to the pool (module docstring).

    Args:
        paths: response-matrix files and folders of logs.
        items: the pool, in pool order.
        exclude: model names never to use.
        target_scores: the target's own scores per pool item (NaN: unknown), to drop an
            identical row.
        targets: the target's own files (a log with the same path or bytes is dropped).
        positional: where the pool's ids are only positions, what they are (e.g. "its
            rows' numbers"): a response matrix, which holds no item content to confirm a
            join by, is then refused (folders of logs are confirmed by content), and so
            is a matrix whose ids and the pool's look like row numbers
            (:func:`activetest.session.history_positions.check_matrix_ids`).
        target_spec: the target as given, named in the :class:`HistoryTargetNotice`
            warned where ``target_scores`` has no score (its own run cannot be recognised
            by its results) and no ``exclude`` name is given.
        ids_are_positions: the user confirms those joins by positions
            (``--ids-are-positions``): made, said and listed in ``by_position``.
        confirm_inputs: an inspect_ai session's pool (``--target inspect``): inspect_ai
            logs are also confirmed by every item's text occurring in its sample's input,
            whatever their ids (:func:`_confirm_inputs`), and a log written by an eval with
            ActiveStopping is dropped, said (:func:`_active_stopping_log`).
        pool_columns: where the pool's ids are its rows' numbers, its columns
            (:class:`~activetest.session.history_positions.PoolColumns`: a refused
            matrix's message names those that hold its ids).

    Returns:
        A :class:`activetest.data.history.PoolHistory` whose ``excluded`` also lists the
        target's own logs, and whose messages (:func:`history_messages`) say what was
        passed over.

    Raises:
        SessionError: a file or folder that cannot be read or joined (named).
    """
    from activetest.data.history import join_history
    from activetest.formats.history import (
        HISTORY_LOG_SUFFIXES,
        HistoryFormatError,
        HistoryRun,
        file_sha256,
        is_sidecar,
        lmeval_task,
        read_history_folder,
        read_history_run,
        read_response_matrix,
    )
    from activetest.formats.model_ids import distinct_names, local_parts, variant_name
    from activetest.formats.run_settings import name_apart, settings_base
    from activetest.session.history_positions import check_matrix_ids, unneeded_note

    pos = {it.item_id.strip(): k for k, it in enumerate(items)}
    own: dict[str, str] = {}
    own_models: set[str] = set()
    # the target's model, its weights, how it ran (its settings), its lm-eval task
    own_stated: list[tuple[str, dict[str, str], dict[str, str], str | None]] = []
    for t in targets:
        try:
            own[Path(t).resolve().as_posix()] = file_sha256(t)
        except OSError:
            continue
        if (stated := _stated_model(Path(t))) is not None:
            own_stated.append((*stated, lmeval_task(t)))
    # the target's lm-eval task(s), from its samples files' names: a log of another task
    # in a run's folder (lm_eval --tasks a,b writes both) is passed over, said (QA: the
    # folder was refused, "move it out", though lm-eval wrote it so)
    own_tasks = {t for t in map(lmeval_task, targets) if t}
    other_tasks: list[str] = []
    other_models: set[str] = set()  # the models of the logs of other tasks passed over
    mats: list[Any] = []
    dropped: list[tuple[str, str]] = []
    notes: list[str] = []
    by_position: list[str] = []

    def describe(item_id: str) -> str:
        """A pool item's first text, short (named where a join is refused)."""
        it = items[pos[item_id.strip()]]
        text = next((str(v) for v in it.fields.values() if str(v).strip()), "")
        return repr(text if len(text) <= 60 else text[:57] + "...") if text else "no text"

    golds: dict[tuple[str, int], _Gold] = {}
    words = _label_words(items)
    try:
        given: dict[str, str] = {}
        read: list[Any] = []  # response matrices and runs, in the order given
        for p in paths:
            key = Path(p).resolve().as_posix()
            if key in given:  # read once, said (QA: "model 'm0' is also in h.csv", of h.csv
                # itself; then refused)
                also = "" if given[key] == str(p) else f" (also as {given[key]})"
                notes.append(f"history: --history {p} is given twice{also}: read once")
                continue
            given[key] = str(p)
            if not os.path.lexists(p):  # QA: "no such file or folder (given as the
                # response matrix)", not naming the option; a missing log, "--history: no
                # such harness log file"
                raise FileNotFoundError(missing_file(p, HISTORY_GIVEN_AS))
            one_log = not Path(p).is_dir() and str(p).lower().endswith(HISTORY_LOG_SUFFIXES)
            if not Path(p).is_dir() and not one_log:
                M = read_response_matrix(p)
                said = check_matrix_ids(str(p), M.item_ids, [it.item_id for it in items],
                                        describe,
                                        positional=positional, confirmed=ids_are_positions,
                                        pool_columns=pool_columns)
                if said is not None:
                    notes.append(said)
                    by_position.append(str(p))
                read.append(M)
                continue
            if one_log:  # one model's log given by name, read as in a folder (QA: it was
                # taken for a response matrix: "holds no item content", "its column '0'")
                if not Path(p).is_file():
                    raise FileNotFoundError(missing_file(p, HISTORY_GIVEN_AS))
                if is_sidecar(Path(p)):
                    raise SessionError(f"--history {p}: a harness's summary or listing, not a "
                                       f"log of a model's run on the items: give the "
                                       f"samples log beside it, or the folder")
                runs, skipped = [read_history_run(p)], []
            else:
                runs, skipped = read_history_folder(p)
            if skipped:
                notes.append(f"history: {len(skipped)} file(s) in {p} are not logs of a "
                             f"model's run (passed over: {', '.join(skipped[:3])}"
                             f"{', ...' if len(skipped) > 3 else ''})")
            for run in runs:  # a log in two folders given (or twice by name): read once
                same = next((r for r in read if isinstance(r, HistoryRun) and (
                    r.sha256 == run.sha256 or Path(r.source).resolve()
                    == Path(run.source).resolve())), None)
                if same is None:
                    read.append(run)
                    continue
                what = ("given twice" if Path(same.source).resolve()
                        == Path(run.source).resolve() else f"a copy of {same.source} (the "
                        f"same bytes)")
                notes.append(f"history: {run.source} is {what}: read once")
        # one identity across the command's files: local models of one last name are named
        # by their shortest distinguishing suffix, the target's own too (QA: two local
        # checkpoint-1000 were one model; a run of another was taken for the target's)
        names = distinct_names([*(n for n, *_ in own_stated), *(r.stated for r in read
                                               if isinstance(r, HistoryRun)),
                                *(x for x in exclude if local_parts(x) is not None)])
        own_settings: dict[str, list[tuple[str | None, dict[str, str]]]] = {}
        for n, v, ran_as, task in own_stated:
            if n in names:
                own_settings.setdefault(variant_name(names[n], v), []).append((task, ran_as))
        own_models |= set(own_settings)
        apart_from_own: dict[int, tuple[str, str]] = {}  # mats index: (its settings, said)
        # no task named by the target (a CSV pool and target): with logs of several tasks,
        # the pool's is the one whose logs' documents are its items (QA: the whole folder
        # lm_eval --tasks a,b wrote was refused, "move it out")
        whose = "the target's"
        if not own_tasks:
            own_tasks = _pool_task(read, items, pos, inputs=confirm_inputs,
                                   target_spec=target_spec)
            whose = "the pool's"
        exclude = [names.get(x, x) if local_parts(x) is not None else x for x in exclude]
        for run in read:
            if not isinstance(run, HistoryRun):
                mats.append(run)
                continue
            if run.stated in names:
                run = dataclasses.replace(run, model=variant_name(names[run.stated],
                                                                  dict(run.variant)))
            if (Path(run.source).resolve().as_posix() in own
                    or run.sha256 in own.values()):
                dropped.append((run.model, f"{run.source} is the target's own run (the "
                                            f"same file as --target)"))
                continue
            if own_tasks and run.format == "lmeval" and lmeval_task(run.source) not in \
                    own_tasks | {None}:  # before the model's checks: the target's model's
                # log of another task is passed over as such (QA: with a glob target it was
                # dropped as "a run of the target's own model", the wrong reason)
                other_tasks.append(run.source)
                other_models.add(run.model)
                continue
            stopped = _active_stopping_log(run) if confirm_inputs else None
            if stopped is not None:  # the target's own labels, maybe (QA: only warned)
                dropped.append((run.model, stopped))
                continue
            if run.model in own_models:  # a re-run of the target's model (QA: used)
                same, said = settings_are_own(
                    dict(run.settings), own_settings.get(run.model, []),
                    lmeval_task(run.source) if run.format == "lmeval" else None)
                if same:
                    dropped.append((run.model, f"{run.source} is a run of the target's own "
                                                f"model ({run.model}, as its log says) "
                                                f"{said}"))
                    continue
                # the same model at other settings is another system (QA: a 0-shot run
                # beside a 3-shot target was dropped as the target's own)
                apart_from_own[len(mats)] = (_settings_text(dict(run.settings)), said)
            _confirm(run, items, pos, inputs=confirm_inputs)
            _check_golds(run, items, pos, golds, words)
            unscored = getattr(run.answers, "provenance", {}).get("unscored") or []
            if unscored:  # answered, never scored: no result from this run (QA)
                notes.append(f"history: {len(unscored)} sample(s) of {run.source} have "
                             f"no score (e.g. {unscored[0]!r}: its scorer failed?): "
                             f"model {run.model!r} has no result on them")
            if run.cut is not None:  # (QA: refused here, skipped by `import`)
                notes.append(f"history: skipped the unfinished last record at {run.cut} "
                             f"(a run killed while writing?): model {run.model!r} has "
                             f"no result on that item; its other results are used")
            mats.append(run)
        if other_tasks:
            how = "" if whose == "the target's" else (
                ", the task whose logs' documents are the pool's items")
            notes.append(f"history: {len(other_tasks)} lm-eval log(s) of other tasks than "
                         f"{whose} ({', '.join(sorted(own_tasks))}{how}) passed over: "
                         f"{', '.join(other_tasks[:3])}{', ...' if len(other_tasks) > 3 else ''}")
        # one model's runs with other stated settings (n-shot, a solver plan) are two
        # systems: named apart, not refused as two runs of one model (QA: the same
        # SmolLM2 at 1 and 3 shots, or with and without a system message)
        ran = {k: m for k, m in enumerate(mats) if isinstance(m, HistoryRun)}
        apart, said = name_apart({k: m.model for k, m in ran.items()},
                                 {k: dict(m.settings) for k, m in ran.items()})
        notes += said
        for k, (text, _) in apart_from_own.items():
            if apart[k] == ran[k].model:  # named apart from the target's row too
                apart[k] = f"{ran[k].model} [{text}]"
        if apart_from_own:
            kept = [f"{apart[k]!r} ({ran[k].source}: {why})"
                    for k, (_, why) in apart_from_own.items()]
            notes.append(f"history: {len(kept)} run(s) of the target's own model at other "
                         f"settings than the target's kept as other systems: "
                         f"{'; '.join(kept[:5])}{'; ...' if len(kept) > 5 else ''}")
        mats = [dataclasses.replace(m, model=apart[k]).matrix() if k in ran else m
                for k, m in enumerate(mats)]
        if not mats:
            rows = [f"row {m!r}: {why}" for m, why in dropped]
            raise SessionError(
                "no history is left once the target's own run is dropped" + (
                    f" ({rows[0]})" if len(rows) == 1 else
                    f" ({len(rows)} rows dropped: {'; '.join(rows[:5])}"
                    f"{f'; and {len(rows) - 5} more' if len(rows) > 5 else ''})"
                    if dropped else "") + (
                    f" and the logs of other tasks than {whose} "
                    f"({', '.join(sorted(own_tasks))}) are passed over (e.g. "
                    f"{other_tasks[0]})" if other_tasks else ""))
        # a name given with --history-exclude whose log is already dropped as the target's
        # own run is satisfied, not "a name matching no row" (QA: refused); so is the
        # target's model whose only log here is of another task (its runs of the pool's
        # task are all dropped, so nothing it names is used; another model's name stays
        # in the exclusion: its run of the pool's task may be here)
        gone = {m for m, _ in dropped} | (other_models & own_models)
        # ... unless a row still bears it: the model's runs at other settings than the
        # target's, kept as other systems, are left out by it as named
        gone -= {n for k in ran for n in (apart[k], settings_base(apart[k]))}
        joined = join_history(mats, [it.item_id for it in items],
                              exclude=[x for x in exclude if x.strip() not in gone],
                              target_scores=target_scores,
                              # each file checked here: a matrix by check_matrix_ids
                              # (refused, or confirmed), a folder of logs by content
                              ids_are_positions=True)
    except (HistoryFormatError, FileNotFoundError, ValueError) as exc:
        if isinstance(exc, SessionError):
            raise
        raise SessionError(str(exc)) from None
    if not exclude and (target_scores is None
                        or not np.isfinite(np.asarray(target_scores, dtype=float)).any()):
        import warnings

        given = f"--target {target_spec}" if target_spec else "the target"
        warnings.warn(f"the target's own results cannot be recognised in the history without "
                      f"its scores ({given} has none before labelling): a run of the target "
                      f"in the history under another name would be used as another model's; "
                      f"--history-exclude NAME leaves it out", HistoryTargetNotice,
                      stacklevel=2)
    notes += unneeded_note(ids_are_positions, bool(by_position))
    return dataclasses.replace(joined, excluded=(*dropped, *joined.excluded),
                               by_position=tuple(by_position)), notes


def _lmeval_target_scores(files: Sequence[Path], pool: Sequence[PoolItem]
                          ) -> np.ndarray | None:
    """The target's own right/wrong per pool item where its predictions are an lm-eval
    multiple-choice samples file with gold choices (lm-eval's ``acc``), aligned by id;
    used only to recognise the target's row in the history (NaN where unknown)."""
    from activetest.formats.lmeval import load_lmeval_samples, looks_like_lmeval

    for f in files:
        try:
            if not looks_like_lmeval(f):
                continue
            s = load_lmeval_samples([f])
        except (OSError, ValueError):
            continue
        right = {i: float(p == y) for i, p, y in zip(s.item_ids, s.logprobs.argmax(axis=1),
                                                     s.labels, strict=True) if y >= 0}
        out = np.array([right.get(it.item_id.strip(), np.nan) for it in pool])
        return out if np.isfinite(out).any() else None
    return None


def _table_target_scores(target: Any, pool: Sequence[Any], task: Any) -> np.ndarray | None:
    """The target's own right/wrong per pool item where its predictions are a ``table:``
    file of class scores (an lm-eval samples file: :func:`_lmeval_target_scores`) and the
    pool's items carry their labels: 1 where the table's top class is the item's label, as
    a harness's ``acc`` and a response matrix's row have it (NaN where the item has none);
    used only to recognise the target's row in the history. ``target``: the target's spec
    as given, or its scorer object. None: no such target, no labelled item, or a table that
    does not cover the pool (its scoring names that later)."""
    from activetest.models.table import TableScorer

    if isinstance(target, str):
        from activetest.models.registry import get_scorer, parse_spec

        try:
            target = get_scorer(target) if parse_spec(target)[0] == "table" else None
        except (ValueError, OSError, ImportError):
            return None
    if (not isinstance(target, TableScorer) or target.format == "lmeval" or task is None
            or not any(getattr(it, "label", None) is not None for it in pool)):
        return None
    try:
        lp = target.score(task, pool)
    except (ValueError, OSError, ImportError):
        return None
    top = lp.argmax(axis=1)
    return np.array([np.nan if it.label is None else float(top[k] == it.label)
                     for k, it in enumerate(pool)])


def _class_words(task: Any, label: Any) -> tuple[str, ...]:
    """A classification item's gold as texts: its class's label word and name (empty
    where the item or the task does not say)."""
    classes = tuple(getattr(task, "classes", ()) or ())
    if label is None or not isinstance(label, (int, np.integer)) \
            or not 0 <= int(label) < len(classes):
        return ()
    names = tuple(getattr(task, "class_names", ()) or ())
    return (str(classes[int(label)]),
            *((str(names[int(label)]),) if len(names) == len(classes) else ()))


def history_record(joined: Any, features: Any, notes: Sequence[str],
                   extra_features: Sequence[str] = (), *,
                   given: Sequence[str | os.PathLike[str]] = (),
                   local: LocalPaths | None = None) -> dict[str, Any]:
    """The config's ``history`` record: files, models, coverage, rank, dropped rows, the
    messages shown at ``init`` and (classification) the other features the design uses;
    carrying the local paths read (``local``; default: the ``--history`` paths ``given``
    and the files ``joined`` read) until it is stored
    (:func:`activetest.session.history_sources.publish`: never a local path)."""
    if local is None:
        models = joined.source_models or ((),) * len(joined.sources)
        local = LocalPaths(tuple(str(g) for g in given),
                           tuple(HistoryFile(str(f), tuple(m))
                                 for f, m in zip(joined.sources, models, strict=True)))
    info: dict[str, Any] = {
        "sources": list(joined.sources), "n_models": len(joined.models),
        "n_covered": joined.n_covered, "rank": features.rank,
        "excluded": [list(e) for e in joined.excluded],
        "messages": [*joined.messages(), *notes]}
    if joined.by_position:  # joined by ids that look like positions, as confirmed
        info["by_position"] = list(joined.by_position)
    if extra_features:
        info["features"] = list(extra_features)
    return with_local(info, local)


@dataclass(frozen=True)
class HistorySetup:
    """A classification session's history, joined and turned into features (label-free).

    Attributes:
        columns: ``(N, 2 + r)`` the stored features
            (:func:`activetest.session.design.history_columns`).
        info: the config's ``history`` record (with ``"neighbours"`` where the design
            has the neighbours' column: :mod:`activetest.session.history_neighbours`).
        responses: ``(H, N)`` the joined response matrix the neighbours' column is
            learnt from (None: no column).
        models: its row names.
    """

    columns: np.ndarray
    info: Mapping[str, Any]
    responses: np.ndarray | None = None
    models: tuple[str, ...] = ()

    def config(self, cfg: SessionConfig) -> SessionConfig:
        """``cfg`` with the feature design recorded (module docstring)."""
        from activetest.session.design import HISTORY_DESIGN
        from activetest.stats.blindspot import new_blind_ratio

        return dataclasses.replace(cfg, design_variant=HISTORY_DESIGN, design_rule=None,
                                   blind_ratio=new_blind_ratio(None),
                                   extra={**cfg.extra, "history": self.published.record})

    @functools.cached_property
    def published(self) -> Published:
        """The record as stored and what ``init`` says of it
        (:func:`activetest.session.history_sources.publish`)."""
        return publish(self.info)

    def first_proposal(self, surrogate_logprobs: np.ndarray) -> np.ndarray:
        """``(N,)`` the first draw's proposal, from the design a replay rebuilds."""
        from activetest.session.design import history_design
        from activetest.session.history_neighbours import settings_of

        return history_design(self.columns, "original", surrogate_logprobs, self.responses,
                              settings_of(self.info)).plan([]).q

    def put(self, store: SessionStore) -> None:
        """Store the features the design is rebuilt from (role ``history``) and, with the
        neighbours' column, the response matrix (role ``history_responses``)."""
        store.put_scores("history", "history", self.columns,
                         {"columns": ["p_correct", "has_history", "factor..."]},
                         predictions=False)
        if self.responses is not None:
            from activetest.session.history_neighbours import put_responses

            put_responses(store, self.responses, self.models)


def with_neighbours(info: dict[str, Any], joined: Any, neighbours: bool | NeighbourUpdate
                    ) -> tuple[dict[str, Any], np.ndarray | None]:
    """The ``history`` record with the neighbours' settings (eps chosen on the joined
    history alone) and the response matrix to store, or both unchanged and None
    (``neighbours`` False: the design without the column, as before it existed; a
    :class:`~activetest.session.history_neighbours.NeighbourUpdate`: the column with that
    limited update)."""
    if not neighbours:
        return info, None
    from activetest.session import history_neighbours as hn

    R = np.asarray(joined.scores, dtype=np.float64)
    if R.size > hn.MAX_CELLS:  # every command would hold several copies: left out, said
        return {**info, "messages": [
            *info.get("messages", []), f"history: the neighbours' column is left out: "
            f"{R.shape[0]:,} models x {R.shape[1]:,} items is more than "
            f"{hn.MAX_CELLS:,} cells (each command would hold several copies); the design "
            f"uses the history's features only"]}, None
    update = neighbours if isinstance(neighbours, hn.NeighbourUpdate) else None
    return {**info, hn.KEY: hn.choose_settings(R, update=update).record()}, R


def classification_history(items: Sequence[Any], paths: Sequence[str | os.PathLike[str]],
                           exclude: Sequence[str], target_spec: str,
                           neighbours: bool | NeighbourUpdate = True,
                           positional: str | None = None, task: Any = None,
                           target: Any = None, ids_are_positions: bool = False,
                           pool_columns: PoolColumns | None = None) -> HistorySetup:
    """Join the history to a classification pool and compute its features once
    (``neighbours``: and the neighbours' column's settings, :func:`with_neighbours`;
    ``positional``, ``ids_are_positions``, ``pool_columns``: as for
    :func:`join_pool_history`). A row
    identical to the target's own right/wrong is dropped where that is known: an lm-eval
    target's own ``acc``, or (``task`` given) a ``table:`` target's top class against the
    pool's labels (``target``: its scorer object, else built from ``target_spec``).

    Raises:
        SessionError: the history cannot be read or joined (the message names it).
    """
    from activetest.session.design import history_columns
    from activetest.stats.feature_design import history_features

    pool = [PoolItem(it.id, {k: str(v) for k, v in it.fields.items()},
                     gold=_class_words(task, getattr(it, "label", None))) for it in items]
    own = target_files(target_spec)
    right = _lmeval_target_scores(own, pool)
    if right is None:  # a table of class scores: its top class against the pool's labels
        right = _table_target_scores(target if target is not None else target_spec, items,
                                     task)
    joined, notes = join_pool_history(paths, pool, exclude=exclude, targets=own,
                                      target_scores=right, positional=positional,
                                      target_spec=target_spec,
                                      ids_are_positions=ids_are_positions,
                                      pool_columns=pool_columns)
    hf = history_features(joined.scores)
    info, R = with_neighbours(history_record(joined, hf, notes, ("surrogate",), given=paths),
                              joined, neighbours)
    return HistorySetup(history_columns(hf), info, R, tuple(joined.models))
