"""Reading evals run with :class:`~activetest.inspect.manager.ActiveStopping` back into a session.

``activetest init --from-inspect LOG [--from-inspect LOG ...]`` makes the session again and
calls :func:`restore` with what :func:`read_logs` found: the newest log's early-stopping
metadata is the session's state (its draws, its labels and where each came from), and
every label an inspect eval recorded is confirmed by the sample input in that eval's own
log among those given (docs/harness_inspect.md, "Reading logs back").
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from activetest.inspect.log_sessions import OtherSession, other_sessions, sessions_hint
from activetest.inspect.manager import MANAGER

__all__ = ["LOG_SUFFIXES", "LogRecord", "LogSamples", "read_log", "read_logs", "restore"]

#: The suffixes of inspect_ai log files (those read from a folder given to :func:`read_logs`).
LOG_SUFFIXES = (".eval", ".json")


@dataclass(frozen=True)
class LogRecord:
    """What an inspect log written with :class:`ActiveStopping` says about its session.

    Attributes:
        path: the log.
        eval_id: inspect's id of the eval.
        n_pool, acquisition, seed: the session's pool size, design and sampler seed.
        draws, q: every draw of the session when the eval ended (item ids, in order)
            and the probability each was drawn with.
        labels: item id -> the score recorded as its label.
        n_known: per draw, the labels its design had seen (empty: a design that does
            not refit).
        model: the model the eval ran (inspect's ``eval.model``), or None.
        inputs: sample id -> its input as text, for the samples that have a label (what
            :func:`restore` confirms each item's content by).
        planned_budget, level: the session's planned budget (its anytime confidence
            sequence is tuned there) and the intervals' confidence level; None where
            the log does not say (written before they were recorded).
        sources: item id -> its label's source in the session (``inspect:<eval_id>`` or
            ``inspect-log:<eval_id>``: that eval's score; else a person's or an
            import's); empty for a log written before sources were recorded.
        recorded: sample id -> the score this eval recorded.
        created: when inspect started the eval (its ``eval.created``), or "".
        scores: sample id -> {scorer: value as the log holds it} of the labelled samples
            the log holds (an empty dict: the sample has no score); each label is checked
            against its sample's score by :func:`restore` (``scorer`` and ``value_key``).
        scorer, value_key: the scorer whose value the eval recorded as the label, and the
            key read from that scorer's dict value (None: the value is not a dict, or the
            log does not say: written before activetest recorded them).
        task: the inspect task the eval ran (``eval.task``), or "". Not checked: a
            label is joined to its item by the sample's content, as the manager joins
            them (an eval of a renamed task on the same samples is the same session's);
            ``init --from-inspect`` names it, and notes evals of several tasks.
        other_sessions: the logs given beside it that are other sessions' (their draws
            part from its draws: :func:`~activetest.inspect.log_sessions.other_sessions`),
            named where the session made again is refused (:func:`restore`).
    """

    path: str
    eval_id: str
    n_pool: int
    acquisition: str
    seed: int | None
    draws: tuple[str, ...]
    q: tuple[float, ...]
    labels: dict[str, float]
    n_known: tuple[int, ...] = ()
    model: str | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    planned_budget: int | None = None
    level: float | None = None
    sources: dict[str, str] = field(default_factory=dict)
    recorded: dict[str, float] = field(default_factory=dict)
    created: str = ""
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    scorer: str | None = None
    value_key: str | None = None
    task: str = ""
    other_sessions: tuple[OtherSession, ...] = ()


@dataclass(frozen=True)
class LogSamples:
    """One more log given to ``--from-inspect``: the samples that confirm the labels its
    eval recorded (by the sample's input, as :class:`ActiveStopping` joins them).

    Attributes:
        path: the log.
        eval_id: inspect's id of the eval.
        inputs: sample id -> its input as text (the samples the log holds).
        recorded: sample id -> the score the eval recorded; None for a log that wrote no
            early-stopping record (killed, cancelled or failed: its samples still show
            what ran).
        created: when inspect started the eval, or "".
        scores: sample id -> {scorer: value} as :class:`LogRecord`'s.
        scorer, value_key: as :class:`LogRecord`'s (None for a log that wrote no record).
        task: the inspect task the eval ran, or "" (as :class:`LogRecord`'s).
    """

    path: str
    eval_id: str
    inputs: dict[str, str]
    recorded: dict[str, float] | None = None
    created: str = ""
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    scorer: str | None = None
    value_key: str | None = None
    task: str = ""


class _DamagedLogError(ValueError):
    """An ``.eval`` file inspect_ai cannot read (empty, cut short, not a zip): a damaged
    log, never passed over in a folder (it may be the session's latest eval's)."""


class _NoRecordError(ValueError):
    """An inspect log of an eval that wrote no early-stopping record (killed, cancelled,
    errored, or no sample ran); the message says which."""


def _header(p: Path) -> Any:
    """The log's header (inspect's ``read_eval_log(header_only=True)``).

    Raises:
        ValueError: no such file, not an inspect_ai log, or inspect_ai not installed.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ValueError("reading an inspect_ai log needs inspect_ai (pip install "
                         "inspect-ai)") from None
    if not p.exists():  # said as every command says a missing input (QA)
        from activetest.formats.tables import missing_file

        raise ValueError(missing_file(p, "inspect_ai log to read"))
    if not p.is_file():
        raise ValueError(f"{p}: no such log file")
    try:
        return read_eval_log(str(p), header_only=True)
    except Exception as exc:  # inspect raises many kinds for a file it cannot read
        if p.suffix == ".eval":  # inspect's own log format: a damaged log, not another file
            raise _DamagedLogError(f"{p}: a damaged inspect_ai log, which inspect_ai cannot "
                                   f"read ({type(exc).__name__}: {exc}; empty, cut short, "
                                   f"or not a zip)") from None
        raise ValueError(f"{p}: not an inspect_ai log ({type(exc).__name__}: {exc})") from None


def _sample_inputs(p: Path, keep: Any = None
                   ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """Sample id -> input text of the samples the log holds (``keep``: only those ids);
    and sample id -> {scorer: value} of each of them (empty: a sample without a score).
    Each label is checked against its sample's score (:func:`_check_score`; QA: a log
    re-scored or edited after the eval gave its old labels without a word).

    Raises:
        ValueError: the samples cannot be read (naming the file).
    """
    try:
        from inspect_ai.log import read_eval_log

        from activetest.inspect.manager import _sample_text

        full = read_eval_log(str(p))
        inputs: dict[str, str] = {}
        scores: dict[str, dict[str, Any]] = {}
        for smp in full.samples or ():
            sid = str(smp.id)
            if keep is not None and sid not in keep:
                continue
            inputs[sid] = _sample_text(smp)
            scores[sid] = {str(name): getattr(score, "value", None)
                           for name, score in dict(getattr(smp, "scores", None) or {}).items()}
        return inputs, scores
    except Exception as exc:  # inspect raises many kinds for a file it cannot read
        raise ValueError(f"{p}: cannot read the log's samples ({type(exc).__name__}: "
                         f"{exc})") from None


def read_log(path: str | os.PathLike[str]) -> LogRecord:
    """Read the early-stopping metadata of an eval run with :class:`ActiveStopping`.

    Raises:
        ValueError: not such a log (naming the file), or inspect_ai is not installed.
    """
    p = Path(path)
    log = _header(p)
    status = str(getattr(log, "status", "success"))
    if status == "error":
        err = getattr(getattr(log, "error", None), "message", "") or "not stated"
        raise _NoRecordError(f"{p}: this eval ended with an error, so it wrote no early-stopping "
                        f"record to read (its error: {str(err)[:300]})")
    if status != "success":  # started (killed) or cancelled
        raise _NoRecordError(f"{p}: this eval did not finish (status {status!r}: killed or "
                        f"cancelled), so it wrote no early-stopping record to read. The "
                        f"labels of the samples that completed are in the session file "
                        f"its ActiveStopping wrote to; running the eval again with that "
                        f"manager continues from them")
    if log.results is None:  # inspect writes no results when no sample completed
        raise _NoRecordError(f"{p}: no samples ran in this eval, so inspect wrote no results and "
                        f"no early-stopping record to read; with ActiveStopping that is an "
                        f"eval that found nothing left to run (the anytime interval already "
                        f"narrow enough, or every pool item drawn and labelled): read the "
                        f"newest log in which samples ran")
    es = log.results.early_stopping
    md = es.metadata if es is not None else None
    if es is None or es.manager != MANAGER or not isinstance(md, dict) or "draws" not in md:
        raise ValueError(f"{p}: not an eval run with activetest.inspect.ActiveStopping (its "
                         f"early-stopping metadata is not ours)")
    design = md.get("design") or {}
    # the samples' inputs: every labelled item's content is confirmed by them
    inputs, scores = _sample_inputs(p, {str(k) for k in dict(md.get("labels") or {})})
    try:
        rec = LogRecord(str(p), str(md.get("eval_id") or log.eval.eval_id),
                         int(md["n_pool"]), str(design["acquisition"]),
                         None if design.get("seed") is None else int(design["seed"]),
                         tuple(str(i) for i in md["draws"]),
                         tuple(float(x) for x in md["q"]),
                         {str(k): float(v) for k, v in dict(md["labels"]).items()},
                         tuple(int(x) for x in md.get("n_known") or ()),
                         str(getattr(log.eval, "model", "") or "") or None, inputs,
                         None if md.get("planned_budget") is None
                         else int(md["planned_budget"]),
                         None if md.get("level") is None else float(md["level"]),
                         {str(k): str(v) for k, v in dict(md.get("sources") or {}).items()},
                         {str(k): float(v) for k, v in dict(md.get("recorded") or {}).items()},
                         str(getattr(log.eval, "created", "") or ""), scores,
                         None if md.get("scorer") is None else str(md["scorer"]),
                         None if md.get("value_key") is None else str(md["value_key"]),
                         str(getattr(log.eval, "task", "") or ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{p}: damaged ActiveStopping metadata ({exc!r})") from None
    if len(rec.q) != len(rec.draws):  # (QA: an IndexError's traceback in the replay)
        raise ValueError(f"{p}: damaged ActiveStopping metadata ({len(rec.draws)} draws but "
                         f"{len(rec.q)} draw probabilities q): not a log the manager wrote "
                         f"whole; nothing was recorded")
    drawn = set(rec.draws)
    undrawn = [i for i in rec.labels if i not in drawn]
    if undrawn:  # (QA: never recorded, the count said 10 of the log's 11 without a word)
        raise ValueError(f"{p}: damaged ActiveStopping metadata ({len(undrawn)} label(s) of "
                         f"items no draw holds, e.g. {undrawn[0]!r}: a session labels only "
                         f"drawn items): not a log the manager wrote whole; nothing was "
                         f"recorded")
    return rec


def _when(created: str) -> datetime:
    """An eval's start time, for ordering logs (an unreadable one sorts first)."""
    try:
        t = datetime.fromisoformat(created)
    except ValueError:
        return datetime.min
    return t.astimezone(timezone.utc).replace(tzinfo=None) if t.tzinfo else t


def eval_tasks(logs: Iterable[LogRecord | LogSamples], eval_ids: Iterable[str]
               ) -> dict[str, list[str]]:
    """Inspect task -> the ids of the evals in ``eval_ids`` that ran it (oldest eval
    first), as ``logs`` name them (an eval without a task name, or without a log among
    ``logs``, is left out). ``init --from-inspect`` names the tasks of the evals whose
    labels it read: not checked, since labels join by the sample's content as the
    manager joins them, but evals of several tasks are noted (QA)."""
    by_id = {o.eval_id: o for o in logs}
    tasks: dict[str, list[str]] = {}
    for eid in sorted((e for e in set(eval_ids) if e in by_id),
                      key=lambda e: (_when(by_id[e].created), e)):
        if by_id[eid].task:
            tasks.setdefault(by_id[eid].task, []).append(eid)
    return tasks


def read_logs(paths: Iterable[str | os.PathLike[str]]
              ) -> tuple[LogRecord, list[LogSamples], list[str]]:
    """Read the logs given to ``init --from-inspect`` (files, or folders of logs).

    The newest eval (inspect's ``eval.created``) whose log holds an early-stopping record
    is the session's state; every log given (that one included) confirms the labels its
    own eval recorded (:func:`restore`). A log of an eval that wrote no record (killed,
    cancelled or failed) serves only that way, where it holds samples. In a folder, a
    file that is not a log of an eval run with :class:`ActiveStopping` is passed over
    (and named in the notes); a file given by name must be one.

    Returns:
        The state, the logs that confirm labels (by eval id, the state's own included),
        and notes to print (the logs passed over).

    Raises:
        ValueError: a file given by name that is not such a log, a folder without logs,
            or no log with an early-stopping record (the newest one's reason).
    """
    files: list[tuple[Path, bool]] = []
    notes: list[str] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found = sorted(f for f in p.iterdir() if f.is_file() and f.suffix in LOG_SUFFIXES)
            # a log that is a broken link is refused, named (QA: passed over unsaid, so an
            # older eval's log was read as the session's state, its later labels lost)
            broken = sorted(f for f in p.iterdir() if f.suffix in LOG_SUFFIXES
                            and not f.is_file() and not f.is_dir())
            if broken:
                raise ValueError(f"{broken[0]}: not a readable file (a broken link, a link "
                                 f"loop, a device or a pipe) in a folder of inspect_ai logs: "
                                 f"it may be the log of the session's latest eval; restore it "
                                 f"or move it out")
            if not found:
                raise ValueError(f"{p}: a folder without inspect_ai logs "
                                 f"({', '.join('*' + x for x in LOG_SUFFIXES)})")
            files += [(f, True) for f in found]
        else:
            files.append((p, False))
    states: list[LogRecord] = []
    others: list[LogSamples] = []
    unread: list[tuple[datetime, _NoRecordError]] = []
    seen: set[Path] = set()
    for f, in_folder in files:
        if f.resolve() in seen:
            continue
        seen.add(f.resolve())
        try:
            states.append(read_log(f))
            continue
        except _NoRecordError as exc:
            header = _header(f)
            created = str(getattr(header.eval, "created", "") or "")
            unread.append((_when(created), exc))
            if str(getattr(header, "status", "")) in ("started", "cancelled", "error"):
                try:  # a killed or failed eval's log may hold the samples that completed
                    inputs, scores = _sample_inputs(f)
                except ValueError:
                    inputs, scores = {}, {}
                # kept even without samples (a kill before inspect wrote any): its eval's
                # labels are then named as that log's, not as of a log not given (QA)
                others.append(LogSamples(str(f), str(header.eval.eval_id), inputs, None,
                                         created, scores, task=str(getattr(
                                             header.eval, "task", "") or "")))
                if inputs:
                    continue
            notes.append(f"{f}: passed over ({str(exc).split(', so ')[0].split(': ', 1)[-1]})")
        except _DamagedLogError as exc:
            if not in_folder:
                raise
            # (QA: passed over with a note, an older eval's log read as the session's
            # state, as a broken link was)
            raise ValueError(f"{exc}, in a folder of inspect_ai logs: it may be the log of "
                             f"the session's latest eval, so nothing was read; restore it, or "
                             f"move it out to read the session as of the other logs") from None
        except ValueError as exc:
            if not in_folder:
                raise
            notes.append(f"{f}: passed over ({str(exc).split(': ', 1)[-1]})")
    if not states:
        if unread:
            raise max(unread, key=lambda u: u[0])[1]
        raise ValueError(f"{', '.join(str(Path(p)) for p in paths)}: no log of an eval run "
                         f"with activetest.inspect.ActiveStopping")
    # inspect's start time is to the second: two evals of one session started in the same
    # second (a fast machine) tie, and the one that holds more draws and labels is the
    # later state (a session only grows)
    states.sort(key=lambda r: (_when(r.created), len(r.draws), len(r.labels)))
    newest = states[-1]
    # a session only grows: each of its logs holds a prefix of the newest one's draws. A
    # log whose draws part from them is another session's (QA: a folder of two sessions'
    # logs was refused at the draw check, "made from another pool, surrogate or seed",
    # with nothing pointing at the folder's other session)
    for r in states[:-1]:
        j = next((j for j, (a, b) in enumerate(zip(r.draws, newest.draws, strict=False))
                  if a != b),
                 None if len(r.draws) <= len(newest.draws) else len(newest.draws))
        if j is not None:
            theirs = repr(r.draws[j])
            ours = repr(newest.draws[j]) if j < len(newest.draws) else "no such draw"
            notes.append(f"{r.path}: the log of another session than the newest log's "
                         f"({newest.path}): its draw {j + 1} is {theirs}, the newest's "
                         f"{ours}; only the newest log's session is read. Give the logs of "
                         f"one session (a folder each, or the newest log of the session "
                         f"by name)")
    for o in others:  # a later eval that wrote no record: its labels are not in any log
        if _when(o.created) > _when(newest.created):
            notes.append(f"{o.path}: an eval later than {newest.path} that wrote no "
                         f"early-stopping record (killed, cancelled or failed): the session "
                         f"is read as of {newest.path}; the labels the later eval recorded "
                         f"are in the session file and in the log of the eval that "
                         f"continued it")
    newest = dataclasses.replace(newest, other_sessions=other_sessions(states[:-1], newest))
    confirm = [LogSamples(r.path, r.eval_id, dict(r.inputs), dict(r.recorded), r.created,
                          dict(r.scores), r.scorer, r.value_key, r.task) for r in states]
    confirm += others
    return newest, confirm, notes


def restore(session: Any, record: LogRecord, others: Sequence[LogSamples] = (), *,
            trust_people: bool = False) -> int:
    """Replay ``record``'s draws in ``session`` and record its scores as labels.

    Each label is first confirmed to be this pool's item by content (:func:`_confirm_inputs`):
    a label an inspect eval recorded by the sample's input in that eval's log (``record``
    itself or one of ``others``, by eval id); a label from a person or an import, which
    no sample shows, only with ``trust_people`` (taken by item id, source ``<its source>
    (via inspect-log:<eval_id>)``); so is a label of an eval without an id, which no log
    names (source ``inspect:unknown (via inspect-log:<eval_id>)``). A log written before
    labels' sources were recorded confirms each label by the sample of that id in any log
    given.

    The session must be the one the eval ran on, made again (``activetest init`` with the
    same pool, task, surrogate and seed): its sampler then draws the same items with the
    same probabilities, which is checked draw by draw. A design that refits on the labels
    (graded_fixed's in-run mixing, the adaptive designs) is replayed batch by batch: each
    batch is drawn once the labels it was drawn with (the first ``n_known`` draws') are
    back in, as when it was drawn. Labels go in through the usual checks. Returns the
    number of labels recorded.

    Raises:
        ValueError: another session (naming the first draw that differs, both sides), a
            session whose anytime intervals are tuned otherwise (another planned budget
            or level: the same draws and labels would report other intervals), a label
            not confirmed (naming the item, and the eval whose log is missing), or a
            label that contradicts one already given.
    """
    cfg = session.session_config
    where = record.path
    mine = (session.n_items, cfg.acquisition, cfg.seed)
    theirs = (record.n_pool, record.acquisition, record.seed)

    def hint(drawn: Sequence[str]) -> str:
        """The other sessions the logs given hold, and which matches this one's."""
        return sessions_hint(where, record.other_sessions, *mine, drawn)

    if mine != theirs:
        raise ValueError(f"{where}: the log's session has {record.n_pool} items, acquisition "
                         f"{record.acquisition}, seed {record.seed}; this one {mine[0]} items, "
                         f"acquisition {mine[1]}, seed {mine[2]}: make it with the same "
                         f"pool, task, surrogate and --seed" + hint(()))
    _confirm_tuning(session, record)
    source = _confirm_inputs(session, record, others, trust_people)
    from activetest.formats.answers import public_model_name

    # who answered: kept, so that an eval of another model is refused; with the inspect
    # tasks of the evals whose labels are read, kept too where the log names no model
    # (QA: such a session's status named no task)
    name = public_model_name(record.model)
    ids = {e for e in (_eval_of(str(src)) for src in record.sources.values()) if e}
    tasks = [t for t in (record.task, *(o.task for o in others if o.eval_id in ids)) if t]
    if name or tasks:
        session.record_target_model(name, "inspect", tasks)
    scores = session.task.judgment.scores
    levels: dict[str, int] = {}
    for item_id, value in record.labels.items():
        hit = [k for k, sc in enumerate(scores) if abs(sc - value) < 1e-9]
        if not hit:
            raise ValueError(f"{where}: item {item_id!r} has score {value:g}, not a judgment "
                             f"level's of this session ({list(scores)})")
        levels[item_id] = hit[0]
    n = len(record.draws)
    known = list(record.n_known) if len(record.n_known) == n else [0] * n
    recorded = 0

    def label(ids: Sequence[str]) -> int:
        have = session.labels()
        todo = [i for i in ids if i in levels and i not in have]
        done = 0
        for src in dict.fromkeys(source.get(i, f"inspect-log:{record.eval_id}") for i in todo):
            batch = [(i, levels[i]) for i in todo
                     if source.get(i, f"inspect-log:{record.eval_id}") == src]
            # people's labels reach here only where --trust-labels-from-people took them
            done += len(session.add_labels(batch, source=src, where=where,
                                           trust_people=True).changes)
        return done

    # a history session's draws follow its history and its options too (QA: a replay
    # with another --history or --no-history-neighbours named only pool, surrogate, seed)
    inputs = ("pool, surrogate, history (the --history files and options) or seed"
              if cfg.extra.get("history") else "pool, surrogate or seed")

    def check(upto: int) -> None:
        acq = session.acquisitions()
        for j in range(upto):
            a, rid, rq = acq[j], record.draws[j], record.q[j]
            if a.item_id != rid or abs(a.q - rq) > 1e-12 * max(1.0, abs(rq)):
                raise ValueError(f"{where}: draw {j + 1} of the log is {rid!r} (q = {rq:.6g}); "
                                 f"this session's is {a.item_id!r} (q = {a.q:.6g}): the log "
                                 f"was made from another {inputs}"
                                 + hint([x.item_id for x in acq[:j + 1]]))

    j = session.store.n_acquired()
    check(min(j, n))
    while j < n:
        k = known[j]
        missing = [i for i in record.draws[:k] if i not in levels]
        if missing:
            raise ValueError(f"{where}: draw {j + 1} was made knowing the labels of the first "
                             f"{k} draws, but the log has no score for {missing[0]!r}")
        recorded += label(record.draws[:k])
        end = j
        while end < n and known[end] == k:
            end += 1
        session.select(end - j)
        check(end)
        j = end
    return recorded + label(record.draws)


def _confirm_tuning(session: Any, record: LogRecord) -> None:
    """Refuse a session whose planned budget or level is not the log's (QA: a copy made
    with another ``--budget`` reported other anytime intervals for the same draws and
    labels, its confidence sequence tuned elsewhere). A log that does not record them
    is not checked.

    Raises:
        ValueError: naming both values.
    """
    cfg = session.session_config
    if record.planned_budget is not None and cfg.planned_budget != record.planned_budget:
        raise ValueError(f"{record.path}: the log's session planned a budget of "
                         f"{record.planned_budget} labels, this one {cfg.planned_budget}: the "
                         f"anytime confidence sequence is tuned to the planned budget, so "
                         f"the same draws and labels would report other intervals; make it "
                         f"with --budget {record.planned_budget} (or leave --budget out: "
                         f"`init --from-inspect` then takes the log's)")
    if record.level is not None and abs(float(cfg.level) - record.level) > 1e-12:
        raise ValueError(f"{record.path}: the log's intervals are at level {record.level:g}, "
                         f"this session's at {float(cfg.level):g}: make it with the log's "
                         f"level")


#: The source a label of an eval without an id is recorded with when taken on trust
#: (``--trust-labels-from-people``), followed by `` (via inspect-log:<eval_id>)``.
NO_EVAL_ID = "inspect:unknown"


def _eval_of(source: str) -> str | None:
    """The eval id a label's source names (``inspect:<id>``, ``inspect-log:<id>``): "" for
    an eval without an id (``inspect:unknown``, ``inspect``, and such a label a copy took
    on trust, ``inspect:unknown (via inspect-log:<id>)``), None for a label that is no
    inspect eval's score (a person's, an import's, taken on trust or not)."""
    if source.startswith(f"{NO_EVAL_ID} (via inspect-log:"):
        return ""
    for prefix in ("inspect:", "inspect-log:"):
        if source.startswith(prefix):
            eid = source[len(prefix):]
            return "" if eid == "unknown" else eid
    return "" if source == "inspect" else None


def _logs_beside(paths: Iterable[str], eval_ids: Iterable[str]) -> dict[str, str]:
    """Eval id -> a log file of that eval found in the folders of ``paths`` (read by its
    header's eval id, so the file named is that eval's log, not a guess)."""
    want, found = set(eval_ids), {}
    for folder in dict.fromkeys(Path(p).parent for p in paths):
        try:
            files = sorted(f for f in folder.iterdir() if f.suffix in LOG_SUFFIXES)
        except OSError:
            continue
        for f in files:
            if not want - set(found):
                return found
            try:
                eid = str(_header(f).eval.eval_id)
            except (ValueError, AttributeError):
                continue
            if eid in want:
                found.setdefault(eid, str(f))
    return found


def _check_score(item_id: str, label: float, log: LogSamples, where: str,
                 its_label: bool) -> None:
    """Refuse a label its sample in ``log`` was not scored (QA: a labelled sample with no
    score, with several scorers or with a dict value was taken unchecked).

    The rule, as :class:`ActiveStopping` takes a label: the value of the scorer the log
    names (``scorer``; the task's one scorer), read at ``value_key`` where that value is a
    dict. A sample without that scorer's score, a dict value without that key, or a value
    that is not the label is refused. A log that does not name its scorer (written before
    activetest recorded it, or an eval that wrote no record: killed, cancelled, failed)
    is checked as far as it can be: the label must be one of the sample's values (each
    scorer's, each key of a dict value); which one was the label is not guessed, but a
    label none of them is was never this sample's score. A sample with no score at all
    is refused where the label is that eval's (``its_label``: the eval that recorded it
    recorded only scored samples); under a log without sources the label may be a
    person's, and is not checked.

    Raises:
        ValueError: naming the log, the item, the sample's score(s) and the label.
    """
    from activetest.inspect.manager import _value_to_float

    given = log.scores.get(item_id)
    if given is None:
        return  # no sample: _confirm_inputs refuses that
    said = f"but its label is {label:g} ({where}'s early-stopping record)"
    end = ("the log was re-scored or edited after the eval; which score is right is not "
           "guessed; nothing was recorded")
    if not given:
        if its_label:
            raise ValueError(f"{log.path}: item {item_id!r}: the log's sample has no score, "
                             f"{said}, recorded by eval {log.eval_id}, which records only "
                             f"scored samples: the log was edited after the eval, or is "
                             f"another run's; nothing was recorded")
        return
    if log.scorer is not None:
        if log.scorer not in given:
            raise ValueError(f"{log.path}: item {item_id!r}: the log's sample has no score "
                             f"from scorer {log.scorer!r}, whose value the eval recorded as "
                             f"the label (the sample's scorers: {sorted(given)}), {said}; "
                             f"{end}")
        value, what = given[log.scorer], f"scorer {log.scorer!r}"
        if isinstance(value, dict):
            if log.value_key is None or log.value_key not in value:
                raise ValueError(f"{log.path}: item {item_id!r}: the log's sample's scorer "
                                 f"{log.scorer!r} gave a dict without the key the eval read "
                                 f"as the label (value_key {log.value_key!r}; its keys: "
                                 f"{sorted(map(str, value))}), {said}; {end}")
            value, what = value[log.value_key], f"{what}, key {log.value_key!r}"
        candidates = [(what, value)]
    else:
        candidates = []
        for name, value in given.items():
            if isinstance(value, dict):
                candidates += [(f"scorer {name!r}, key {k!r}", v) for k, v in value.items()]
            else:
                candidates.append((f"scorer {name!r}", value))
    floats = [_value_to_float(v) for _, v in candidates]
    if any(x is not None and abs(x - label) <= 1e-9 for x in floats):
        return
    shown = ", ".join(f"{v!r} ({w})" if x is None else f"{x:g} ({w})" for (w, v), x
                      in zip(candidates, floats, strict=True))
    which = ("" if log.scorer is not None or len(candidates) == 1 else
             "; the log does not name the scorer whose value is the label (written before "
             "activetest recorded it, or an eval that wrote no record), and none of them "
             "is the label")
    raise ValueError(f"{log.path}: item {item_id!r}: the log's sample was scored {shown}, "
                     f"{said}{which}; {end}")


def _confirm_inputs(session: Any, record: LogRecord, others: Sequence[LogSamples] = (),
                    trust_people: bool = False) -> dict[str, str]:
    """Refuse a log whose labelled samples are not this pool's items by content: every
    prompt field of the item occurs in the sample's input (as :class:`ActiveStopping`
    joins them; QA: a pool with the same ids and the questions moved one row along took
    the log's scores, 12 of them, without a word). The sample is the one in the log of
    the eval that recorded the label (the log's ``sources``; QA: the newest log of a
    session that ran two evals was refused, its first eval's labels having no sample in
    it); a log without ``sources`` (written earlier) is confirmed by the sample of that
    id in any log given. A labelled item whose sample no log given holds, or with no
    text to compare, is refused too: joins never guess. A person's or an import's label
    is shown by no sample, and a label of an eval without an id (``inspect:unknown``)
    is in no log that can be named: both refused unless ``trust_people``.

    Returns:
        item id -> the source to record its label with (``inspect-log:<eval_id>`` of the
        eval that recorded it; a person's: ``<source> (via inspect-log:<eval_id>)``; an
        eval's without an id: ``inspect:unknown (via inspect-log:<eval_id>)``).

    Raises:
        ValueError: naming the item, its text and the sample's input; or the evals whose
            logs are missing (with the file, where one is found beside the logs given);
            or the people's labels and how to take them.
    """
    from activetest.inspect.manager import _excerpt, _fold

    own = LogSamples(record.path, record.eval_id, record.inputs, record.recorded,
                     record.created, record.scores, record.scorer, record.value_key,
                     record.task)
    logs = [own, *(o for o in others if o.eval_id != record.eval_id)]
    by_eval = {o.eval_id: o for o in reversed(logs)}  # the first given of an id wins
    out: dict[str, str] = {}
    missing: dict[str, list[str]] = {}
    people: dict[str, str] = {}
    no_id: dict[str, str] = {}
    checks: list[tuple[str, LogSamples | None, bool]] = []  # (item, log, its eval's label)
    for item_id in record.labels:
        src = record.sources.get(item_id)
        eid = None if src is None else _eval_of(src)
        if src is None:  # an older log: the sample of that id in any log given
            log = next((o for o in logs if item_id in o.inputs), None)
            checks.append((item_id, log, False))
        elif eid is None:
            people[item_id] = src
        elif not eid:
            no_id[item_id] = src
        elif eid not in by_eval:
            missing.setdefault(eid, []).append(item_id)
        else:
            checks.append((item_id, by_eval[eid], True))
    where = record.path
    if missing:
        beside = _logs_beside([o.path for o in logs], missing)
        parts = [f"eval {eid} ({len(ids)} label(s), e.g. item {ids[0]!r}"
                 + (f"; its log is {beside[eid]}" if eid in beside else "") + ")"
                 for eid, ids in missing.items()]
        raise ValueError(f"{where}: {sum(map(len, missing.values()))} of the log's labels "
                         f"were recorded by inspect evals whose logs are not among those "
                         f"given: {'; '.join(parts)}. Their content cannot be confirmed "
                         f"without those logs' samples, so nothing was recorded: add them "
                         f"(--from-inspect can be repeated, oldest first, or name the folder "
                         f"of logs, inspect's log_dir)")
    if (people or no_id) and not trust_people:
        # labels no sample can confirm: a person's or an import's (no sample shows them),
        # and an eval's without an id (ActiveStopping driven outside inspect, or inspect
        # gave none: no log names that eval). Both are taken only when the user says so
        # (QA: the latter were refused without saying how to take them)
        found = []
        if people:
            i, src = next(iter(people.items()))
            kinds = sorted(set(people.values()))
            found.append(f"{len(people)} of the log's labels are not an inspect eval's "
                         f"scores but labels from people or imports (e.g. item {i!r}, source "
                         f"{src!r}; sources: {', '.join(map(repr, kinds[:5]))}"
                         f"{', ...' if len(kinds) > 5 else ''}): no log holds a sample for "
                         f"them")
        if no_id:
            i, src = next(iter(no_id.items()))
            found.append(f"{len(no_id)} of the log's labels were recorded by ActiveStopping "
                         f"driven without an eval id (e.g. item {i!r}, source {src!r}: its "
                         f"protocol called outside inspect, or inspect gave no eval id): no "
                         f"log names that eval, so no sample of it can be read")
        raise ValueError(f"{where}: {'; and '.join(found)}. They cannot be confirmed to be "
                         f"this pool's items; nothing was recorded. Give "
                         f"--trust-labels-from-people to take them as the log records them, "
                         f"by item id (the draws are still checked against this session's)")
    for item_id, src in people.items():
        out[item_id] = f"{src} (via inspect-log:{record.eval_id})"
    for item_id in no_id:  # still the target's scores (status counts them as target runs)
        out[item_id] = f"{NO_EVAL_ID} (via inspect-log:{record.eval_id})"
    for item_id, log, its_label in checks:
        try:
            item = session.item(item_id)
        except (KeyError, ValueError):
            continue  # not a pool item: the replay's draw check names it
        own_fields = [_fold(v) for k, v in item.fields.items() if k != "full_prompt"
                      and isinstance(v, str) and _fold(v)]
        at = where if log is None else log.path
        shown = None if log is None else log.inputs.get(item_id)
        if shown is None and log is not None and log is not own and log.recorded is None:
            # QA: a killed eval's label whose sample inspect had not yet written to that
            # eval's log was refused as "has a score in the log", naming the killed log,
            # which has no score for it, and saying nothing of why or what is left
            gone = [i for i, lg, _ in checks if lg is log and i not in log.inputs]
            raise ValueError(
                f"{where}: item {item_id!r} was scored by eval {log.eval_id}, which did not "
                f"finish (killed or cancelled): its log {log.path} holds "
                f"{len(log.inputs)} of its samples, not this one (inspect had not written it "
                f"to the log when the eval stopped; {len(gone)} such label(s) of that eval), "
                f"so no log confirms it and nothing was recorded. The label is in the "
                f"session file that eval's ActiveStopping wrote to: keep that file (a copy "
                f"of it is the session)")
        if shown is None or not own_fields:
            why = ("the log holds no sample for it" if shown is None else
                   "the item has no text to compare")
            hint = ("; a log written before activetest recorded where each label came "
                    "from: give the logs of the session's earlier evals too "
                    "(--from-inspect can be repeated, or name the folder of logs)"
                    if log is None and not record.sources else "")
            raise ValueError(f"{at}: item {item_id!r} has a score in the log but "
                             f"cannot be confirmed to be the log's sample {item_id!r} "
                             f"({why}); nothing was recorded{hint}")
        if not all(f in _fold(shown) for f in own_fields):
            text = " ".join(str(v) for v in item.fields.values())
            raise ValueError(f"{at}: pool item {item_id!r} is not the log's sample "
                             f"{item_id!r}: the item reads {_excerpt(text)}, the sample's "
                             f"input {_excerpt(shown)}; the session was made from another "
                             f"pool than the eval ran on (same ids, other content)")
        ran = None if log is None or log.recorded is None else log.recorded.get(item_id)
        if ran is not None and abs(ran - record.labels[item_id]) > 1e-9:
            raise ValueError(f"{where}: item {item_id!r} has score {record.labels[item_id]:g} "
                             f"in this log, recorded by eval {log.eval_id}, whose own log "
                             f"{log.path} recorded {ran:g}; nothing was recorded")
        if log is not None:
            _check_score(item_id, record.labels[item_id], log, where, its_label)
        out[item_id] = f"inspect-log:{log.eval_id}"
    return out
