"""Reading an eval run with :class:`~activetest.inspect.manager.ActiveStopping` back into a session.

``activetest init --from-inspect LOG`` makes the session again and calls :func:`restore`
with what :func:`read_log` found in the log's early-stopping metadata.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from activetest.inspect.manager import MANAGER

__all__ = ["LogRecord", "read_log", "restore"]

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


def read_log(path: str | os.PathLike[str]) -> LogRecord:
    """Read the early-stopping metadata of an eval run with :class:`ActiveStopping`.

    Raises:
        ValueError: not such a log (naming the file), or inspect_ai is not installed.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ValueError("reading an inspect_ai log needs inspect_ai (pip install "
                         "inspect-ai)") from None
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{p}: no such log file")
    try:
        log = read_eval_log(str(p), header_only=True)
    except Exception as exc:  # inspect raises many kinds for a file it cannot read
        raise ValueError(f"{p}: not an inspect_ai log ({type(exc).__name__}: {exc})") from None
    status = str(getattr(log, "status", "success"))
    if status == "error":
        err = getattr(getattr(log, "error", None), "message", "") or "not stated"
        raise ValueError(f"{p}: this eval ended with an error, so it wrote no early-stopping "
                         f"record to read (its error: {str(err)[:300]})")
    if status != "success":  # started (killed) or cancelled
        raise ValueError(f"{p}: this eval did not finish (status {status!r}: killed or "
                         f"cancelled), so it wrote no early-stopping record to read. The "
                         f"labels of the samples that completed are in the session file "
                         f"its ActiveStopping wrote to; running the eval again with that "
                         f"manager continues from them")
    if log.results is None:  # inspect writes no results when no sample completed
        raise ValueError(f"{p}: no samples ran in this eval, so inspect wrote no results and "
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
    labelled = {str(k) for k in dict(md.get("labels") or {})}
    try:  # the samples' inputs: every labelled item's content is confirmed by them
        from activetest.inspect.manager import _sample_text

        full = read_eval_log(str(p))
        inputs = {str(smp.id): _sample_text(smp) for smp in (full.samples or ())
                  if str(smp.id) in labelled}
    except Exception as exc:  # inspect raises many kinds for a file it cannot read
        raise ValueError(f"{p}: cannot read the log's samples ({type(exc).__name__}: "
                         f"{exc})") from None
    try:
        return LogRecord(str(p), str(md.get("eval_id") or log.eval.eval_id),
                         int(md["n_pool"]), str(design["acquisition"]),
                         None if design.get("seed") is None else int(design["seed"]),
                         tuple(str(i) for i in md["draws"]),
                         tuple(float(x) for x in md["q"]),
                         {str(k): float(v) for k, v in dict(md["labels"]).items()},
                         tuple(int(x) for x in md.get("n_known") or ()),
                         str(getattr(log.eval, "model", "") or "") or None, inputs,
                         None if md.get("planned_budget") is None
                         else int(md["planned_budget"]),
                         None if md.get("level") is None else float(md["level"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{p}: damaged ActiveStopping metadata ({exc!r})") from None


def restore(session: Any, record: LogRecord) -> int:
    """Replay ``record``'s draws in ``session`` and record its scores as labels.

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
            or level: the same draws and labels would report other intervals), or a
            label that contradicts one already given.
    """
    cfg = session.session_config
    where = record.path
    mine = (session.n_items, cfg.acquisition, cfg.seed)
    theirs = (record.n_pool, record.acquisition, record.seed)
    if mine != theirs:
        raise ValueError(f"{where}: the log's session has {record.n_pool} items, acquisition "
                         f"{record.acquisition}, seed {record.seed}; this one {mine[0]} items, "
                         f"acquisition {mine[1]}, seed {mine[2]}: make it with the same "
                         f"pool, task, surrogate and --seed")
    _confirm_tuning(session, record)
    _confirm_inputs(session, record)
    if record.model:  # who answered: kept, so that an eval of another model is refused
        from activetest.formats.answers import public_model_name

        name = public_model_name(record.model)
        if name:
            session.record_target_model(name, "inspect")
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
        todo = [(i, levels[i]) for i in ids if i in levels and i not in have]
        if not todo:
            return 0
        return len(session.add_labels(todo, source=f"inspect-log:{record.eval_id}",
                                      where=where).changes)

    def check(upto: int) -> None:
        acq = session.acquisitions()
        for j in range(upto):
            a, rid, rq = acq[j], record.draws[j], record.q[j]
            if a.item_id != rid or abs(a.q - rq) > 1e-12 * max(1.0, abs(rq)):
                raise ValueError(f"{where}: draw {j + 1} of the log is {rid!r} (q = {rq:.6g}); "
                                 f"this session's is {a.item_id!r} (q = {a.q:.6g}): the log "
                                 f"was made from another pool, surrogate or seed")

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


def _confirm_inputs(session: Any, record: LogRecord) -> None:
    """Refuse a log whose labelled samples are not this pool's items by content: every
    prompt field of the item occurs in the sample's input (as :class:`ActiveStopping`
    joins them; QA: a pool with the same ids and the questions moved one row along took
    the log's scores, 12 of them, without a word). A labelled item whose sample the log
    does not hold, or with no text to compare, is refused too: joins never guess.

    Raises:
        ValueError: naming the item, its text and the sample's input.
    """
    from activetest.inspect.manager import _excerpt, _fold

    for item_id in record.labels:
        try:
            item = session.item(item_id)
        except (KeyError, ValueError):
            continue  # not a pool item: the replay's draw check names it
        own = [_fold(v) for k, v in item.fields.items() if k != "full_prompt"
               and isinstance(v, str) and _fold(v)]
        shown = record.inputs.get(item_id)
        if shown is None or not own:
            why = ("the log holds no sample for it" if shown is None else
                   "the item has no text to compare")
            raise ValueError(f"{record.path}: item {item_id!r} has a score in the log but "
                             f"cannot be confirmed to be the log's sample {item_id!r} "
                             f"({why}); nothing was recorded")
        if not all(f in _fold(shown) for f in own):
            text = " ".join(str(v) for v in item.fields.values())
            raise ValueError(f"{record.path}: pool item {item_id!r} is not the log's sample "
                             f"{item_id!r}: the item reads {_excerpt(text)}, the sample's "
                             f"input {_excerpt(shown)}; the session was made from another "
                             f"pool than the eval ran on (same ids, other content)")
