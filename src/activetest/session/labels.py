"""Labels in and out of a session: parsing, checking, importing, exporting.

Only drawn items can be labelled (a label for any other item could not be
weighted), a batch of labels is checked whole before anything is written
(:func:`check_labels`), and an existing different label is replaced only when
asked (the history keeps the old one). Records that disagree about one item
(two annotators) leave that item out, reported, unless a resolution rule settles
it (:func:`settle`); they never block the rest of the import. A row that carries
a content check, or any of the item's text, must show the item its id names
(:func:`check_shown`). File
formats live in :mod:`activetest.session.labelio`; this module joins them to the
session.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.classes import LabelReader
from activetest.data.task import Item, Task
from activetest.session.annotator_records import check_name, names_no_one
from activetest.session.options import check_flag
from activetest.session.records import (
    EXPORT_FORMATS,
    RESOLVE_RULES,
    LabelConflict,
    LabelError,
    LabelImport,
)
from activetest.session.store import Acquisition, LabelChange, SessionError, SessionStore

__all__ = ["GROUND_TRUTH", "GROUND_TRUTHS_DIFFER", "Vote", "add_labels", "check_labels",
           "check_shown", "check_source", "export_draws", "export_format", "label_from_data",
           "last_answer", "parse_label", "records_rows", "settle", "settle_rule"]


def last_answer(store: SessionStore, source: str = "cli",
                undo_source: str = "cli:undo") -> LabelChange | None:
    """The latest answer written with ``source`` (a label, or a compared answer's
    judgment) that no later change with ``undo_source`` undid; None if there is none.

    The two histories are read in time order; each undo written with ``undo_source``
    takes back the latest such answer of its item and role, so repeated undos walk back
    through the answers one at a time (``activetest label --undo``).
    """
    events = sorted([*store.label_history(), *store.judgment_history()],
                    key=lambda c: (c.at, c.role != "target", c.id))
    stack: list[LabelChange] = []
    for change in events:
        if change.source == source and change.action in ("add", "change"):
            stack.append(change)
        elif change.source == undo_source and change.action == "undo":
            for k in range(len(stack) - 1, -1, -1):
                if (stack[k].index, stack[k].role) == (change.index, change.role):
                    del stack[k]
                    break
    return stack[-1] if stack else None


def parse_label(task: Task, value: int | str) -> int:
    """A class index from a Python int (0-based index) or a label word, class name or
    label-map key (the rule of :mod:`activetest.data.classes`; a string of digits
    is a class number of no declared base, and refused).

    Raises:
        LabelError: not a class of the task.
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if 0 <= int(value) < task.n_classes:
            return int(value)
        raise LabelError(f"class index {int(value)} is outside 0..{task.n_classes - 1} (Python "
                         f"counts classes from 0: {', '.join(map(repr, task.classes))})")
    y = LabelReader(task, error=LabelError,
                    number_hint="give a class name, or a Python int (counted from 0)"
                    )(value, "")
    if y is None:
        raise LabelError(f"empty label; expected one of {', '.join(map(repr, task.classes))}")
    return y


@dataclass
class Vote:
    """One record's label for an item, as the conflict rules see it.

    Attributes:
        label: the class (or judgment level) given.
        loc: where in the file (for messages).
        source: the source recorded with the label if it is chosen.
        who: how messages name the voter (the annotator, else the place).
        time: when, as written (ISO 8601), or None.
        order: place in the file (1, 2, ...).
        annotator: the annotator if the file names one ("" if not: each such
            record then counts as its own voter).
        ground_truth: the file marks it as the reference answer (Label Studio's
            ``"ground_truth": true``): it settles a disagreement, as an adjudication.
    """

    label: int
    loc: str
    source: str
    who: str
    time: str | None
    order: int
    annotator: str = ""
    ground_truth: bool = False


def _order_key(votes: Sequence[Vote]) -> Any:
    """How votes are ordered in time: by the instant of their timestamps (zones
    honoured) when every vote has a timestamp that says its zone, or every one has a
    timestamp without a zone (one clock); otherwise (a vote without a time, or zoned
    and unzoned times mixed: their order is unknown) by place in the file. Never by
    the timestamps' text; equal times keep the file's order."""
    from activetest.session.labelio import parse_time

    times = [parse_time(v.time) for v in votes]
    zoned = {t.tzinfo is not None for t in times if t is not None}
    if all(t is not None for t in times) and len(zoned) == 1:
        when = {id(v): t for v, t in zip(votes, times, strict=True)}
        return lambda v: (when[id(v)], v.order)
    return lambda v: (v.order,)


#: How :func:`settle_rule` says a ground-truth vote settled an item, and that
#: ground-truth votes that differ left it unsettled (whatever ``resolve`` says).
GROUND_TRUTH = "ground truth"
GROUND_TRUTHS_DIFFER = "ground truths differ"


def settle_rule(votes: Sequence[Vote], resolve: str) -> tuple[Vote | None, str]:
    """:func:`settle`, and the rule that decided: :data:`GROUND_TRUTH`,
    :data:`GROUND_TRUTHS_DIFFER` or ``resolve``."""
    truths = [v for v in votes if v.ground_truth]
    if truths:
        if len({v.label for v in truths}) > 1:
            return None, GROUND_TRUTHS_DIFFER  # two references disagree: never guessed
        return max(truths, key=_order_key(truths)), GROUND_TRUTH
    return settle(votes, resolve), resolve


def settle(votes: Sequence[Vote], resolve: str) -> Vote | None:
    """The vote a resolution rule picks among disagreeing ones (None: unsettled).

    A ground-truth vote (Label Studio's ``"ground_truth": true``) settles the item
    whatever the rule, as an adjudication does on the labelling page; ground-truth
    votes that differ settle nothing, whatever the rule (which reference is right is
    never guessed). Otherwise:
    ``latest``: the last given (see :func:`_order_key` for how time is read).
    ``majority``: the most frequent label, one vote per annotator (their latest
    answer; records that name no annotator count one each); a tie settles nothing.
    ``skip``: None.
    """
    if not votes:
        return None
    if any(v.ground_truth for v in votes):
        return settle_rule(votes, resolve)[0]
    key = _order_key(votes)
    if resolve == "latest":
        return max(votes, key=key)
    if resolve == "majority":
        last: dict[Any, Vote] = {}
        for v in sorted(votes, key=key):
            last[v.annotator or ("record", v.order)] = v  # an annotator's latest answer
        counts = Counter(v.label for v in last.values())
        (top, n), *rest = counts.most_common()
        if rest and rest[0][1] == n:
            return None
        return max((v for v in last.values() if v.label == top), key=key)
    return None


def _class_name(task: Task, k: int) -> str:
    """The name of class ``k``, or a note that it is none (a damaged stored label)."""
    names = task.class_names
    return names[k] if 0 <= k < len(names) else f"{k} (not a class of the task)"

def check_source(source: object) -> str:
    """A label's ``source`` (recorded with it: ``api``, ``import:labels.csv``, ...): a
    non-empty string.

    Raises:
        ValueError: anything else, with its type and value (QA: ``source=5`` or None
            was stored with each label or judgment as it was, ``""`` as an empty source).
    """
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"source must be a non-empty string naming where the labels "
                         f"come from (e.g. 'api', 'import:labels.csv'), got "
                         f"{type(source).__name__} {source!r}")
    return source


def records_rows(index: Mapping[str, int], records: Sequence[Any]) -> set[int]:
    """The pool rows of the items ``records`` name (``(item_id, ...)`` tuples or
    objects with ``item_id``; ids not in ``index`` left out): the rows whose stored
    labels and draws :func:`check_labels` compares them with."""
    out = set()
    for rec in records:
        item_id = rec[0] if isinstance(rec, tuple) else getattr(rec, "item_id", None)
        row = index.get(str(item_id))
        if row is not None:
            out.add(int(row))
    return out


def check_labels(store: SessionStore, task: Task, index: Mapping[str, int],
                 records: Iterable[Any], *, source: str, overwrite: bool, where: str = "",
                 resolve: str = "skip", current: Mapping[int, Any] | None = None,
                 answer_of: str = "",
                 ) -> tuple[list[tuple[int, int, str]], int, list[LabelConflict]]:
    """Check label records against the session.

    Records are ``(item_id, label[, where])`` tuples or objects with ``item_id``,
    ``label`` and optionally ``where``, ``source``, ``annotator``, ``time``.

    Records that label one item differently (two annotators who disagree) are not
    an error: the item is a :class:`LabelConflict`, left out unless ``resolve``
    (``latest`` or ``majority``, see :data:`RESOLVE_RULES`) settles it; the other
    items are imported. A label that differs from the one already stored needs
    ``overwrite``.

    ``current``: the stored values to check against (default the session's labels;
    a graded comparison passes a compared target's judgments); ``answer_of``: that
    compared target's spec, named beside the item in every problem (a judgment of its
    answer, not the target's label: QA).

    Returns:
        ``(answers to write, unchanged count, conflicts)``.

    Raises:
        LabelError: listing every bad record (file and line where known): unknown
            items or classes, items never selected, stored labels that differ
            without ``overwrite``. Nothing may be written then.
    """
    if resolve not in RESOLVE_RULES:
        raise ValueError(f"resolve must be one of {', '.join(RESOLVE_RULES)}, got {resolve!r}")
    check_source(source)
    overwrite = check_flag(overwrite, "overwrite")  # (QA: overwrite="no" overwrote)
    problems: list[str] = []
    votes: dict[int, list[Vote]] = {}
    records = list(records)
    named = records_rows(index, records)  # (the rows read: not every label and draw)
    # unchecked: a stored label that is not a class (a damaged file) can be replaced
    current = store.labels_at(named, check=False) if current is None else current
    drawn = store.acquisition_steps(named)
    loose: dict[str, str] | None = None  # a drawn item's id, by its loose form (once)
    item_ids: dict[int, str] = {}  # row -> the id the records name it by
    whose = f" (answer of {answer_of})" if answer_of else ""
    for n, rec in enumerate(records, start=1):
        rec_source = source
        who = ""
        time = None
        truth = False
        named: Any = None  # the record's annotator as given
        if isinstance(rec, tuple):
            item_id, raw = rec[0], rec[1]
            loc = rec[2] if len(rec) > 2 else (f"{where}, record {n}" if where else "")
        else:
            item_id, raw = rec.item_id, rec.label
            loc = getattr(rec, "where", None) or (f"{where}, record {n}" if where else "")
            rec_source = getattr(rec, "source", None) or source
            named = getattr(rec, "annotator", None)
            if names_no_one(named):
                named = None  # a blank cell names no one (as an empty one)
            elif isinstance(named, str):  # the page's rule (QA: a file's 300-character
                # or multi-line name was kept for agreement, which the page refuses)
                try:
                    named = check_name(named)
                except LabelError as e:
                    problems.append(f"{loc + ': ' if loc else ''}item {item_id!r}{whose}: "
                                    f"{e}")
                    continue
            who = named if isinstance(named, str) else ""
            truth = getattr(rec, "ground_truth", False) is True
            tags = [t for t in (who, GROUND_TRUTH if truth else "") if t]
            if tags and getattr(rec, "own_source", False) is not True:
                # "import:export.json (user 1, ground truth)"; a label put back keeps
                # the source it had (the sheet beside a file put back: QA, the page's
                # label came back as an import's, which the page would not undo)
                rec_source = f"{rec_source} ({', '.join(tags)})"
            time = getattr(rec, "time", None)
        prefix = f"{loc}: " if loc else ""
        if named is not None and not isinstance(named, str):
            # (QA: annotator=5 was kept for agreement as the name "5")
            problems.append(f"{prefix}item {item_id!r}{whose}: annotator={named!r}: an "
                            f"annotator's name must be text (a str), got "
                            f"{type(named).__name__}")
            continue
        row = index.get(str(item_id))
        if row is None:
            near = str(item_id).strip()
            hint = (f"; {near!r} is (remove the blanks around the id in the file: ids are "
                    f"matched exactly)" if near != str(item_id) and index.get(near) is not None
                    else "")
            if not hint:  # the drawn item it nearly is (QA: the file's side alone)
                from activetest.formats.near_ids import NEAR_MISS_WHY, loose_id

                if loose is None:
                    loose = {}
                    for a in store.acquisitions():
                        loose.setdefault(loose_id(a.item_id), a.item_id)
                hit = loose.get(loose_id(str(item_id)))
                hint = ("" if hit is None else
                        f"; the drawn item {hit!r} is it but for {NEAR_MISS_WHY} (ids are "
                        f"matched exactly, never guessed: write the pool's id)")
            problems.append(f"{prefix}item {item_id!r} is not in the pool{hint}")
            continue
        item_ids.setdefault(row, str(item_id))
        try:
            y = parse_label(task, raw)
        except LabelError as exc:
            problems.append(f"{prefix}item {item_id!r}{whose}: {exc}")
            continue
        if row not in drawn:
            problems.append(f"{prefix}item {item_id!r} was never selected; only selected "
                            f"items can be labelled (their labels are weighted by the "
                            f"probability they were drawn with)")
            continue
        name = who or loc or rec_source
        votes.setdefault(row, []).append(Vote(y, loc, rec_source,
                                              f"{name}, {GROUND_TRUTH}" if truth else name,
                                              time, n, who, truth))
    answers: list[tuple[int, int, str]] = []
    conflicts: list[LabelConflict] = []
    unchanged = 0
    for row, given in votes.items():
        chosen: Vote | None = given[0]
        if len({v.label for v in given}) > 1:
            chosen, rule = settle_rule(given, resolve)
            conflicts.append(LabelConflict(
                item_ids[row], drawn[row],
                tuple((task.class_names[v.label], v.who, v.loc) for v in given),
                None if chosen is None else task.class_names[chosen.label], rule))
            if chosen is None:
                continue
        elif any(v.ground_truth for v in given):  # agreeing: the reference's source
            chosen = max((v for v in given if v.ground_truth), key=_order_key(given))
        assert chosen is not None
        y = chosen.label
        old = current.get(row)
        if old is not None and old.label != y and not overwrite:
            prefix = f"{chosen.loc}: " if chosen.loc else ""
            problems.append(f"{prefix}item {item_ids[row]!r}{whose} already has label "
                            f"{_class_name(task, old.label)!r} (from "
                            f"{_stored_source(old.source, where)}); this "
                            f"gives {task.class_names[y]!r}: pass --overwrite "
                            f"(overwrite=True) to replace it (the old label stays in the "
                            f"history)")
            continue
        if old is not None and old.label == y:
            unchanged += 1
            if old.source != chosen.source:  # the import confirms it (written with
                answers.append((row, y, chosen.source))  # confirm=True: it owns it)
            continue
        answers.append((row, y, chosen.source))
    if problems:
        shown = problems[:20]
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise LabelError(f"{len(problems)} label problem(s); nothing was imported:\n  "
                         + "\n  ".join(shown) + more)
    return answers, unchanged, conflicts


def _cell(value: Any) -> str:
    """A cell's text as compared with the item's (blanks collapsed and Unicode in NFC:
    spreadsheets, editors and line endings change those, never what a person reads)."""
    return unicodedata.normalize("NFC", " ".join(str(value).split()))


def _text(value: str, n: int = 70) -> str:
    """``repr`` of ``value``, cut to about ``n`` characters inside its quotes (QA: a cut
    text opened with ``"`` and closed with ``'``)."""
    text = repr(value)
    return text if len(text) <= n else text[: n - 4] + "..." + text[0]


def _sides(row: str, held: str, n: int = 70) -> tuple[str, str]:
    """A row's cell and the item's text as two excerpts around their first difference
    (blanks collapsed, as compared), so that a change late in a long text shows (QA:
    both sides printed as the same first 65 characters, an edit at the end unseen)."""
    a, b = _cell(row), _cell(held)
    k = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
             min(len(a), len(b)))
    start = max(0, k - n // 3) if max(len(a), len(b)) > n else 0

    def cut(text: str) -> str:
        piece = text[start:start + n]
        return repr(("..." if start else "") + piece + ("..." if start + n < len(text) else ""))

    return cut(a), cut(b)


def check_shown(records: Sequence[Any], index: Mapping[str, int],
                display: Callable[[str], Mapping[int, Item] | None],
                roles: Sequence[str] = (),
                letter: Callable[[int, str], str] | None = None) -> None:
    """Refuse records whose row did not show the item its id names.

    A row that carries a ``content_check`` (every sheet and Label Studio task this
    tool writes) must carry the check of the item its ``item_id`` names (for a
    graded comparison: of that item with the answer ``answer_of`` names), and each
    of the row's cells that is a field of that item (the text, the question, the
    answer, ...) must hold that field's text (blanks collapsed). Otherwise the
    label would go to an item, or judge an answer, that the person never saw: the
    ``item_id`` cells were swapped or edited, or a shown cell was. A row without a
    check (older sheets, hand-made files) is checked against whatever item text it
    carries: each of its cells that is a field of the item (``text``, the prompt's
    fields) must hold that field's text, so that a hand-made sheet whose ids come
    from another pool or row order is refused instead of labelling other items.

    Args:
        records: :class:`~activetest.session.labelio.LabelRecord` objects (``check``,
            ``shown``); other records are not checked.
        index: item id -> pool row.
        display: role (``"target"`` or a compared target's spec) -> pool row -> the
            item as exported (the drawn rows), or None for a role the session
            does not have (the label checks report it).
        roles: a graded comparison's answer roles (``"target"`` and the compared
            specs): a row whose check is another answer's of the same item is said to
            have a wrong ``answer_of`` cell (swapped, where the item's rows swap them;
            :mod:`activetest.session.answer_of_check`).
        letter: (pool row, role) -> the letter a blind sheet shows that answer under.

    Raises:
        LabelError: listing every such row (file, line, item, what the row shows and
            what the item holds); nothing may be written then.
    """
    from activetest.session.answer_of_check import misnamed_answers, misnamed_message
    from activetest.session.labelio import content_check, shown_fields

    problems: list[str] = []
    by_check: dict[str, dict[str, str]] = {}
    misnamed = misnamed_answers(records, index, display, roles, content_check)
    for k, rec in enumerate(records):
        if k in misnamed:  # (QA: a paired sheet with swapped answer_of cells was asked
            # whether it was another session's)
            problems.append(misnamed_message(rec, misnamed[k], records, misnamed, display,
                                             letter, _text))
            continue
        check = getattr(rec, "check", None)
        row = index.get(str(rec.item_id))
        if row is None or not (check or getattr(rec, "shown", ())):
            continue
        role = getattr(rec, "answer_of", None) or "target"
        items = display(role)
        if items is None or row not in items:
            continue  # an unknown target, or an item never drawn: check_labels says so
        item = items[row]
        loc = getattr(rec, "where", None) or ""
        prefix = f"{loc}: " if loc else ""
        what = f"item {rec.item_id!r}" + ("" if role == "target" else f" (answer of {role})")
        fields = shown_fields(item.fields)
        cells = [(k, v) for k, v in getattr(rec, "shown", ()) if k in fields]
        if not check:  # a hand-made row: its text is the only sign of what it showed
            differs = [(k, v) for k, v in cells if _cell(v) != _cell(fields[k])]
            if differs:
                k, v = differs[0]
                shows, has = _sides(v, fields[k])
                problems.append(f"{prefix}{what}: the row (no content_check) shows {k} "
                                f"{shows}, {what} in the session has {k} "
                                f"{has}; were the ids taken from another file "
                                f"or row order? the label would go to an item the person "
                                f"did not see: give each row the id of the text it shows, "
                                f"or export a sheet (`activetest export`) and fill that in")
            continue
        if check.strip().lower() != content_check(item.fields):
            if role not in by_check:
                by_check[role] = {content_check(it.fields): it.id for it in items.values()}
            owner = by_check[role].get(check.strip().lower())
            whose = f" (the check of item {owner!r})" if owner is not None else ""
            differs = [(k, v) for k, v in cells if _cell(v) != _cell(fields[k])]
            if differs:
                k, v = differs[0]
                shows, has = _sides(v, fields[k])
                sides = f"the row shows {k} {shows}, {what} in the session has {k} {has}"
            else:
                first = next(iter(fields), None)
                sides = ("the row carries no other content to compare" if first is None else
                         f"{what} in the session has {first} {_text(fields[first])}")
            # the check of another drawn item: ids moved between rows; of none: a sheet
            # of another session or task, or a paired sheet that lost its answer_of column
            # (QA: both were asked whether the item_id cell was changed)
            ask = ("was the item_id cell changed?" if owner is not None else
                   "is the sheet from another session or task (or a paired sheet without "
                   "its answer_of column)?")
            problems.append(f"{prefix}{what}: the row's content_check {check!r}{whose} is not "
                            f"this item's ({content_check(item.fields)!r}): {sides}; {ask} "
                            f"the label would go to an item the person did not see")
            continue
        for k, v in cells:
            if _cell(v) != _cell(fields[k]):
                shows, has = _sides(v, fields[k])
                problems.append(f"{prefix}{what}: the row shows {k} {shows}, the session's "
                                f"item has {k} {has}; was the cell edited (or "
                                f"reformatted by a spreadsheet)? the label would be for a text "
                                f"the session does not hold: restore the cell, or export the "
                                f"item again")
                break
    if problems:
        shown = problems[:20]
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        what = ("whose answer_of cell does not match the answer they show"
                if len(misnamed) == len(problems) else "do not show the item their id names")
        raise LabelError(f"{len(problems)} row(s) {what}; nothing was imported:\n  "
                         + "\n  ".join(shown) + more)


def _stored_source(source: str, where: str) -> str:
    """A stored label's source as a refusal names it: where it names a file of the same
    name as the one given (``where``), said to be an earlier import of a file of that
    name, since the session keeps a file's name, not its folder (QA: the two sides of a
    conflict were named alike, e.g. two ``samples_X.jsonl`` of two folders)."""
    name = Path(where).name if where else ""
    _, sep, rest = source.partition(":")
    if name and sep and rest.split(" (")[0] == name:
        return (f"{source}: an earlier import of a file named {name}; the session keeps "
                f"the file's name, not its folder")
    return source


def add_labels(store: SessionStore, task: Task, index: Mapping[str, int],
               records: Iterable[Any], *, source: str = "import", overwrite: bool = False,
               where: str = "", resolve: str = "skip") -> LabelImport:
    """Check ``records`` whole (see :func:`check_labels`), then write them in one transaction."""
    answers, unchanged, conflicts = check_labels(store, task, index, records, source=source,
                                                 overwrite=overwrite, where=where,
                                                 resolve=resolve)
    changes = store.set_labels(answers, source, overwrite=overwrite, confirm=True)
    return LabelImport(sum(c.action == "add" for c in changes),
                       sum(c.action == "change" for c in changes), unchanged, changes,
                       conflicts)


def label_from_data(store: SessionStore, items: Sequence[Item], pending: Sequence[Acquisition],
                    limit: int | None = None, *, source: str = "data") -> int:
    """Simulated labeller: answer pending items with the pool file's labels.

    Each answer is its own transaction, as in interactive labelling. Returns the
    number labelled.

    Raises:
        LabelError: a pending item has no label in the pool file.
        ValueError: ``source`` is no non-empty string (:func:`check_source`).
    """
    check_source(source)  # (QA: source=5 was stored as '5', "" as an empty source)
    done = 0
    for a in pending:
        if limit is not None and done >= limit:
            break
        y = items[a.index].label
        if y is None:
            raise LabelError(f"item {a.item_id!r} has no label in the pool file; the "
                             f"simulated labeller needs labelled pool data")
        try:
            store.set_labels([(a.index, int(y))], source)
        except SessionError:
            if a.index in store.labels(check=False):
                continue  # labelled meanwhile (another labelling run): keep that label
            raise
        done += 1
    return done


def export_format(path: str | os.PathLike[str], format: str | None) -> str:
    """The export format named, or the one the file's suffix implies.

    Raises:
        ValueError: an unknown format, or a suffix that names none (use ``--format``).
    """
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


def refuse_session_file(path: str | os.PathLike[str],
                        session: str | os.PathLike[str] | None) -> None:
    """Raise ValueError if writing ``path`` would overwrite the session file ``session``
    or one of SQLite's files beside it (``-wal``, ``-shm``, ``-journal``): by its name, a
    link to it or another name of the same file. None: nothing to protect."""
    if session is None:
        return
    out = Path(path)
    for suffix in ("", "-wal", "-shm", "-journal"):
        own = Path(os.fspath(session) + suffix)
        same = os.path.realpath(out) == os.path.realpath(own)
        if not same and out.exists() and own.exists():
            try:
                same = os.path.samefile(out, own)
            except OSError:
                same = False
        if same:
            what = "the session file" if not suffix else f"the session's SQLite {suffix[1:]} file"
            raise ValueError(f"{out} is {what} ({own}); name another file to write "
                             f"(nothing was drawn or written)")


#: How a caller that holds the session tells which answers of a filled sheet it does
#: not store (:func:`activetest.session.sheet_answers.unimported_answers` of the open
#: session): ``(path, format) -> ["<where>: item <id> <label>", ...]``, empty when all are.
Unimported = Callable[[Path, str], list[str]]


def refuse_filled_sheet(path: str | os.PathLike[str], fmt: str, *,
                        session: str | os.PathLike[str] | None = None,
                        unimported: Unimported | None = None) -> int:
    """Raise ValueError if the existing file ``path`` holds answers someone filled in
    (:func:`activetest.formats.sheets.filled_labels`: a label cell of any value) that
    are not stored in the session, or cannot be read as a sheet: writing over it could
    lose labels not imported yet; or that is not a label sheet at all
    (:func:`activetest.formats.sheets.looks_like_sheet`: a pool or a prediction table
    with no label column). A missing file, or a sheet with no label filled in, passes.

    ``unimported``: which answers the session does not hold (None: the session is not
    known here, so every filled answer counts as not stored). Where it says none (the
    sheet was imported: the select / fill / import loop's next round), the file passes.

    Returns:
        How many answers the file holds, all stored (0: none filled in, or no file).
    """
    from activetest.formats.label_records import LabelFileError
    from activetest.formats.sheets import filled_labels, looks_like_sheet

    p = Path(path)
    if not p.is_file():
        return 0
    how = (f"import it first (`activetest import {session or 'SESSION'} {p}`), name "
           f"another file, or pass --overwrite (overwrite=True in Python) to replace it "
           f"(nothing was drawn or written)")
    kind = "json" if fmt == "labelstudio" else fmt
    try:
        n = filled_labels(p, kind)
        sheet = looks_like_sheet(p, kind)
    except (LabelFileError, OSError) as exc:
        raise ValueError(f"{p} exists and cannot be read as a sheet ({exc}), so it may "
                         f"hold labels; {how}") from None
    if n:
        if unimported is None:
            raise ValueError(f"{p} exists and holds {n} label(s) filled in; writing over it "
                             f"would lose them: {how}")
        try:
            missing = unimported(p, fmt)
        except (LabelFileError, LabelError, SessionError, ValueError) as exc:
            first = str(exc).splitlines()[0]
            raise ValueError(f"{p} exists and holds {n} label(s) filled in that cannot be "
                             f"read as this session's labels ({first}); writing over it "
                             f"would lose them: {how}") from None
        if missing:
            shown = "; ".join(missing[:3]) + (f"; and {len(missing) - 3} more"
                                              if len(missing) > 3 else "")
            raise ValueError(f"{p} exists and holds {n} label(s) filled in, "
                             f"{len(missing)} of them not stored in the session ({shown}); "
                             f"writing over it would lose them: {how}")
        return n
    if not sheet:
        raise ValueError(f"{p} exists and is not a label sheet (no item_id column: a pool, "
                         f"a prediction table, a harness log?); writing over it would lose "
                         f"it: name another file, or pass --overwrite (overwrite=True in "
                         f"Python) to replace it (nothing was drawn or written)")
    return 0


def check_export_target(path: str | os.PathLike[str], format: str | None, *,
                        session: str | os.PathLike[str] | None = None,
                        overwrite: bool = False,
                        unimported: Unimported | None = None) -> str:
    """The format, after checking that ``path`` can be written (before anything is drawn),
    is not the session file ``session`` (:func:`refuse_session_file`) and, unless
    ``overwrite``, is not an existing sheet with labels filled in that the session does
    not store (:func:`refuse_filled_sheet`, ``unimported`` passed on).

    Raises:
        ValueError: an unknown format, a folder, a missing parent folder, the
            session's own file, or a file holding labels (without ``overwrite``).
        PermissionError: the folder cannot be written.
    """
    refuse_session_file(path, session)
    fmt = export_format(path, format)
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p} is a folder; name a file to write")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{p}: the folder {parent} does not exist (nothing was drawn or "
                         f"written)")
    if not os.access(parent, os.W_OK):
        raise PermissionError(f"{p}: the folder {parent} cannot be written")
    if not overwrite:
        refuse_filled_sheet(p, fmt, session=session, unimported=unimported)
    return fmt


def export_draws(path: str | os.PathLike[str], task: Task, rows: Sequence[Item],
                 fmt: str, *, predictions: np.ndarray | None,
                 labels: Sequence[int | None] | None = None,
                 draws: Sequence[int] | None = None) -> int:
    """Write items (with the surrogate's guess unless ``predictions`` is None, their
    labels and draw steps if given) to a file."""
    from activetest.session import labelio

    if fmt == "labelstudio":
        labelio.export_labelstudio(rows, task, path, predictions=predictions)
    else:
        labelio.export_items(rows, task, path, format=fmt, predictions=predictions,
                             labels=labels, draws=draws)
    return len(rows)
