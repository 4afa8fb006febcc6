"""Two targets' answers on the same items, judged: the paired comparison of a graded task.

In a classification session one label serves every model, so comparing targets
needs only their predictions. In a graded session a judgment belongs to one
answer: a second target (declared at creation, ``compare=[...]``; its answers are
stored as role ``compare:<spec>``) needs its own answers judged on the drawn items.

How a compared target's loss at a drawn item is found, in this order:

1. its own judgment (table ``judgments``);
2. else, if its answer is the same text as the session target's (after collapsing
   whitespace; nothing else: "the Broncos" and "Broncos" may deserve different
   judgments), the target's judgment -- derived when read, never copied, so a
   later change of that label carries over. The same text is one answer: an own
   judgment of it (rule 1) that differs from another role's is refused when written
   (:func:`check_alike`), however the two arrive (one sheet, two sheets, the API);
3. else the same for another compared target whose identical answer was judged;
4. else it is missing: the comparison waits for it (the labeller asks for it).

The draws follow the session target's design only; LURE weights each judged item
by the probability it was drawn with, so the estimate of ``R_target - R_other``
stays unbiased (:func:`activetest.session.estimate.estimate_report`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.data.generative import GenTask
from activetest.session.annotator_records import names_no_one
from activetest.session.config import SessionConfig
from activetest.session.records import LabelConflict, LabelError
from activetest.session.store import Acquisition, LabelChange, SessionStore

__all__ = [
    "AlikeConflict",
    "JudgedAnswers",
    "PendingJudgment",
    "add_judgments",
    "alike_conflict",
    "answer_letter",
    "check_alike",
    "check_judgments",
    "compare_role",
    "compared_losses",
    "compared_specs",
    "letters_to_targets",
    "pending_judgments",
    "same_answer",
    "settle_same_answers",
    "shown_order",
    "stored_compared",
]


def compare_role(spec: str) -> str:
    """The store role of a compared target's answers and judgments."""
    return f"compare:{spec}"


def compared_specs(config: SessionConfig) -> list[str]:
    """The compared targets a graded session was created with (stored specs)."""
    return [str(s) for s in config.compare or ()]


def stored_compared(config: SessionConfig, spec: str) -> str:
    """The compared target's spec as stored that ``spec`` names: itself, or, for an
    ``answers:`` file named by a path (as given at ``init``), the stored spec that names
    that file by its name (same options, same SHA-256:
    :func:`activetest.session.spec_files.known_spec`); else ``spec`` unchanged."""
    specs = compared_specs(config)
    if spec in specs or not str(spec).startswith("answers:"):
        return spec
    from activetest.session.spec_files import known_spec

    files = config.answer_files or {}
    digests = {s: str((files.get(compare_role(s)) or {}).get("sha256") or "") for s in specs}
    return known_spec(spec, {s: d for s, d in digests.items() if d}) or spec


#: The stream of the seeded per-step permutation of a paired item's answers, apart from
#: the design's draws.
_ORDER_STREAM = 0x0BDE


def shown_order(seed: int, step: int, roles: Sequence[str]) -> tuple[str, ...]:
    """The order in which a paired comparison shows the answers of the item drawn at
    ``step``: a permutation of ``roles`` (``target``, then ``compare:<spec>`` ...) drawn
    from ``(seed, step)`` alone, so the page, the terminal and a sheet show an item's
    answers in the same order, as answers A, B, ..., and none of them says whose answer
    comes first."""
    order = list(roles)
    if len(order) > 1:
        perm = np.random.default_rng([int(seed), int(step), _ORDER_STREAM]).permutation(
            len(order))
        order = [order[int(i)] for i in perm]
    return tuple(order)


def session_roles(config: SessionConfig) -> tuple[str, ...]:
    """A paired session's answer roles in their stored order: the target's, then each
    compared target's (``compare:<spec>``)."""
    return ("target", *(compare_role(s) for s in compared_specs(config)))


def answer_letter(config: SessionConfig, step: int, role: str) -> str:
    """The letter (A, B, ...) under which the answer ``role`` of the item drawn at
    ``step`` is shown (:func:`shown_order`)."""
    return chr(ord("A") + shown_order(config.seed, step, session_roles(config)).index(role))


def letters_to_targets(store: SessionStore, index: Mapping[str, int],
                       records: Sequence[Any]) -> list[Any]:
    """Records whose ``answer_of`` is a letter of a blind sheet (A, B, ...: the item's
    answers in their shown order, :func:`answer_letter`) with the letter replaced by whose
    answer it is (None: the session target's; a compared target's spec). Other records
    are returned as they are (a sheet that names the targets is read as before).

    Raises:
        LabelError: a letter beyond the item's answers, or of an item not drawn (its
            answers have no shown order), naming the record.
    """
    config = store.config()
    specs = compared_specs(config)
    roles = session_roles(config)
    letters = [chr(ord("A") + k) for k in range(len(roles))]
    if not specs or not any(_is_letter(getattr(r, "answer_of", None), specs)
                            for r in records):
        return list(records)
    steps = {a.index: a.step for a in store.acquisitions()}
    out = []
    for rec in records:
        given = getattr(rec, "answer_of", None)
        if not _is_letter(given, specs):
            out.append(rec)
            continue
        where = getattr(rec, "where", None) or f"item {rec.item_id!r}"
        if given not in letters:
            raise LabelError(f"{where}: answer_of {given!r}: item {rec.item_id!r} has "
                             f"{len(roles)} answers, {', '.join(letters)}")
        row = index.get(str(rec.item_id))
        step = None if row is None else steps.get(row)
        if step is None:
            what = "no item of this session" if row is None else "an item not drawn"
            raise LabelError(f"{where}: answer {given} of {rec.item_id!r}, {what}: only a "
                             f"drawn item's answers are shown as A, B, ...")
        role = shown_order(config.seed, step, roles)[letters.index(given)]
        out.append(dataclasses.replace(
            rec, answer_of=None if role == "target" else role.split(":", 1)[1],
            answer_of_given=given))
    return out


def _is_letter(value: Any, specs: Sequence[str]) -> bool:
    """Whether an ``answer_of`` cell is a blind sheet's letter (one capital letter that
    names no compared target)."""
    return (isinstance(value, str) and len(value) == 1 and "A" <= value <= "Z"
            and value not in specs)


def same_answer(a: str, b: str) -> bool:
    """Whether two answers are the same text (whitespace collapsed; case kept)."""
    return " ".join(a.split()) == " ".join(b.split())


@dataclass(frozen=True)
class PendingJudgment:
    """A drawn, labelled-or-not item whose compared answer still needs a judgment."""

    acquisition: Acquisition
    spec: str
    answer: str


class JudgedAnswers:
    """A snapshot of every role's answers and judgments: which judgment applies to a
    compared answer (rules 1-3 of the module docstring). Build once per question
    asked of many items (it reads the store when built).

    Args:
        store: the session's store.
        rows: read only these pool rows (by the tables' keys: what a question about a
            few items needs; every other row reads as unanswered and unjudged); None:
            every row.
    """

    def __init__(self, store: SessionStore, rows: Iterable[int] | None = None) -> None:
        specs = compared_specs(store.config())
        if rows is None:
            self.answers: dict[str, dict[int, Any]] = {
                "target": store.answers("target"),
                **{s: store.answers(compare_role(s)) for s in specs}}
            self.judged: dict[str, dict[int, Any]] = {
                "target": store.labels(), **{s: store.judgments(compare_role(s)) for s in specs}}
            return
        rows = sorted({int(r) for r in rows})
        self.answers = {"target": store.answers_at("target", rows),
                        **{s: store.answers_at(compare_role(s), rows) for s in specs}}
        self.judged = {"target": store.labels_at(rows),
                       **{s: store.judgments_at(compare_role(s), rows) for s in specs}}

    def answer(self, role: str, row: int) -> str:
        """``role``'s answer at pool ``row`` (``"target"`` or a compared spec)."""
        return str(self.answers.get(role, {}).get(row, ("",))[0])

    def level(self, spec: str, row: int) -> int | None:
        """The judgment level that applies to ``spec``'s answer at ``row``, or None."""
        own = self.judged.get(spec, {}).get(row)
        if own is not None:
            return int(own.label)
        text = self.answer(spec, row)
        for other in ("target", *[s for s in self.answers if s not in ("target", spec)]):
            j = self.judged.get(other, {}).get(row)
            if j is not None and same_answer(self.answer(other, row), text):
                return int(j.label)
        return None


@dataclass(frozen=True)
class AlikeConflict:
    """Two judgments of one answer text on one item that differ (what :func:`check_alike`
    refuses): the roles (``"target"`` or a compared spec), the text, and each one's level
    and source; each caller words it for its reader (the labelling page is blind: it
    names no compared target)."""

    item_id: str
    text: str
    roles: tuple[str, str]
    levels: tuple[int, int]
    sources: tuple[str, str]


def alike_conflict(store: SessionStore, rows: Iterable[int]) -> AlikeConflict | None:
    """The first of ``rows`` (in pool order) where two roles' answers are the same text
    (:func:`same_answer`) and their stored judgments differ, or None: rule 2 of the
    module docstring (the same text is one answer, with one judgment). Reads ``rows``'
    answers and judgments only (the labelling page asks it of one item each answer: it
    read every answer and judgment of the session, ~1 CPU s an answer at 20,000 paired
    items)."""
    specs = compared_specs(store.config())
    if not specs:
        return None
    wanted = sorted({int(r) for r in rows})
    judged = JudgedAnswers(store, wanted)  # (these rows' own: not every answer and judgment)
    roles = ["target", *specs]
    for row in wanted:
        own = {r: judged.judged.get(r, {}).get(row) for r in roles}
        for i, a in enumerate(roles):
            for b in roles[i + 1:]:
                ja, jb = own[a], own[b]
                if ja is None or jb is None or int(ja.label) == int(jb.label):
                    continue
                if not same_answer(judged.answer(a, row), judged.answer(b, row)):
                    continue
                return AlikeConflict(str(ja.item_id), judged.answer(a, row), (a, b),
                                     (int(ja.label), int(jb.label)),
                                     (str(ja.source), str(jb.source)))
    return None


def check_alike(store: SessionStore, task: GenTask, rows: Iterable[int]) -> None:
    """Refuse two judgments of one answer text on one item (rule 2 of the module
    docstring: the same text is one answer; :func:`alike_conflict`). Called after
    writing labels or judgments, inside their transaction, so a refusal writes nothing:
    QA judged the target's answer "seven" correct in one file and the compared target's
    identical "seven" incorrect in another (or through the API), and both were kept, a
    difference that cannot exist counted in the paired estimate.

    Raises:
        LabelError: naming the item, both answers' judgments and who gave them.
    """
    found = alike_conflict(store, rows)
    if found is None:
        return
    names = task.class_names
    (a, b), (la, lb), (sa, sb) = found.roles, found.levels, found.sources

    def whose(r: str) -> str:
        return "the target's answer" if r == "target" else f"{r}'s answer"

    raise LabelError(
        f"item {found.item_id!r}: {whose(a)} and {whose(b)} are the same text "
        f"({found.text[:60]!r}) and would be judged differently: "
        f"{names[la]!r} ({sa}) and {names[lb]!r} ({sb}); the same answer gets one "
        f"judgment: judge them alike (pass --overwrite, overwrite=True in Python, to change "
        f"the one stored), nothing was written")


def compared_losses(store: SessionStore, task: GenTask, spec: str,
                    rows: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """``(K,)`` the compared target's loss ``1 - score`` at ``rows`` (NaN where its
    judgment is missing) and the positions that are missing."""
    scores = np.asarray(task.judgment.scores, dtype=np.float64)
    judged = JudgedAnswers(store)
    levels = [judged.level(spec, int(row)) for row in rows]
    out = np.array([np.nan if j is None else 1.0 - scores[j] for j in levels])
    return out, [k for k, j in enumerate(levels) if j is None]


def pending_judgments(store: SessionStore) -> list[PendingJudgment]:
    """Drawn items, in draw order, whose compared answers still need a judgment.

    An answer identical to one already judged (or to the target's, once the target's
    is judged) is not pending; the target's own judgment is the session's label,
    asked for first.
    """
    specs = compared_specs(store.config())
    if not specs:
        return []
    judged = JudgedAnswers(store)
    out = []
    for a in store.acquisitions():
        for spec in specs:
            if judged.level(spec, a.index) is not None:
                continue
            text = judged.answer(spec, a.index)
            if a.index not in judged.judged["target"] and same_answer(
                    judged.answer("target", a.index), text):
                continue  # judged with the target's answer
            out.append(PendingJudgment(a, spec, text))
    return out


def check_judgments(store: SessionStore, task: GenTask, index: Mapping[str, int], spec: str,
                    records: Iterable[Any], *, source: str, overwrite: bool = False,
                    where: str = "", resolve: str = "skip",
                    ) -> tuple[list[tuple[int, int, str]], int, list[LabelConflict]]:
    """Check judgments of ``spec``'s answers as :func:`activetest.session.labels.check_labels`
    checks labels (against the stored judgments of that answer, not the labels).

    Raises:
        LabelError: ``spec`` is not a compared target, or the records' problems.
    """
    from activetest.session.labels import check_labels, records_rows

    specs = compared_specs(store.config())
    spec = stored_compared(store.config(), spec)
    if spec not in specs:
        known = ", ".join(map(repr, specs)) or "none (pass --compare when creating the session)"
        raise LabelError(f"{where + ': ' if where else ''}{spec!r} is not a compared target "
                         f"of this session; compared targets: {known}")
    records = list(records)
    return check_labels(store, task, index, records, source=source, overwrite=overwrite,
                        where=where, resolve=resolve,
                        current=store.judgments_at(compare_role(spec),
                                                   records_rows(index, records)),
                        answer_of=spec)


def add_judgments(store: SessionStore, task: GenTask, index: Mapping[str, int], spec: str,
                  records: Iterable[Any], *, source: str, overwrite: bool = False,
                  alike: bool = True) -> list[LabelChange]:
    """Judge ``spec``'s answers (``(item_id, level)`` records): checked whole
    (:func:`check_judgments`), then written in one transaction, then checked alike
    (:func:`check_alike`) unless ``alike`` is False: a caller that writes another role
    of the same items in the same transaction checks once after both (the labelling
    page's settled answer: the target's label and this judgment, the same text, change
    together; checked after the first, the pair differed for a moment and was refused)."""
    spec = stored_compared(store.config(), spec)
    answers, _, _ = check_judgments(store, task, index, spec, records, source=source,
                                    overwrite=overwrite)
    with store.transaction():
        changes = store.set_judgments(compare_role(spec), answers, source, overwrite=overwrite)
        if alike:
            check_alike(store, task, [a[0] for a in answers])
    return changes


def settle_same_answers(store: SessionStore, task: GenTask, index: Mapping[str, int],
                        records: Sequence[Any], resolve: str,
                        ) -> tuple[list[Any], list[LabelConflict]]:
    """Records of one import that judge the same answer text differently on one item.

    On a drawn item, the target's answer and a compared target's answer that are the
    same text (:func:`same_answer`) are one answer: judging them differently in one
    file is a disagreement, handled by the annotator-conflict rules
    (:func:`activetest.session.labels.settle`): with ``resolve="skip"`` every record
    of that answer is left out and the item listed; ``latest`` / ``majority`` give
    them all the settled judgment. Records are ``LabelRecord`` objects
    (:mod:`activetest.session.labelio`); those of unknown items, undrawn items or
    unknown targets are kept as they are (the label checks report them).

    Returns:
        ``(records to check and write, conflicts)``.
    """
    from activetest.session.labels import GROUND_TRUTH, Vote, settle_rule

    specs = compared_specs(store.config())
    if not specs:
        return list(records), []
    judged = JudgedAnswers(store)
    drawn = {a.index: a.step for a in store.acquisitions()}
    groups: dict[tuple[int, str], list[int]] = {}
    item_ids: dict[int, str] = {}  # row -> the id the records name it by
    for n, rec in enumerate(records):
        row = index.get(str(rec.item_id))
        role = getattr(rec, "answer_of", None) or "target"
        if row is None or row not in drawn or (role != "target" and role not in specs):
            continue
        item_ids.setdefault(row, str(rec.item_id))
        if not isinstance(rec.label, (int, np.integer)) or isinstance(rec.label, bool):
            continue  # not a level yet: the label checks read and report it
        groups.setdefault((row, " ".join(judged.answer(role, row).split())), []).append(n)
    out = list(records)
    dropped: set[int] = set()
    conflicts: list[LabelConflict] = []
    for (row, _), members in groups.items():
        roles = {getattr(records[n], "answer_of", None) or "target" for n in members}
        if len(roles) < 2 or len({int(records[n].label) for n in members}) < 2:
            continue
        votes = []
        for n in members:
            rec = records[n]
            who = getattr(rec, "annotator", None)
            # a whitespace-only name is no name (each such record its own voter), a name
            # is stripped, as the label checks read them (QA: records of one blank name
            # were one voter here, two in the label checks)
            who = "" if names_no_one(who) else who.strip() if isinstance(who, str) else who
            loc = getattr(rec, "where", None) or ""
            whose = getattr(rec, "answer_of", None) or "target"
            truth = getattr(rec, "ground_truth", False) is True
            mark = f", {GROUND_TRUTH}" if truth else ""
            votes.append(Vote(int(rec.label), loc, getattr(rec, "source", None) or "",
                              f"{who or loc or 'record ' + str(n + 1)}, answer of {whose}"
                              f"{mark}", getattr(rec, "time", None), n + 1, who, truth))
        chosen, rule = settle_rule(votes, resolve)
        conflicts.append(LabelConflict(
            item_ids[row], drawn[row],
            tuple((task.class_names[v.label], v.who, v.loc) for v in votes),
            None if chosen is None else task.class_names[chosen.label], rule))
        for n in members:
            if chosen is None:
                dropped.add(n)
            else:
                out[n] = dataclasses.replace(records[n], label=chosen.label)
    return [r for n, r in enumerate(out) if n not in dropped], conflicts
