"""Several annotators on one session: who answered what and when, claims, overlap,
agreement, and the session's label settled from their answers.

The labelling page (:mod:`activetest.web`) talks to a :class:`Annotators` over one
:class:`~activetest.session.workflow.Session`. Everything here is stored in the
session file, in tables of this module's own (made with ``CREATE TABLE IF NOT
EXISTS`` the first time the page, or an import that names annotators
(:func:`keep_votes`), writes; the session schema and its version are
unchanged, older activetest versions ignore them)::

    annotations        every answer: item row, role (``target`` or a compared
                       answer's ``compare:<spec>``), annotator, level, kind
                       (``answer`` or ``adjudication``; an imported file's
                       annotators ``import`` or ``ground truth``), time; undone
                       answers are kept with the time of the undo
    annotation_items   per drawn item the page has shown: its draw step, how many
                       annotators it asks for (2+ for the ``overlap`` share, chosen
                       by a seeded draw per step) and the order in which a paired
                       comparison shows the answers (a seeded permutation)
    annotation_claims  which annotator holds which item, until when (a claim lapses
                       after ``claim_seconds``; a reload gets the same item back)
    annotation_skips   items an annotator set aside for a second look (``s``)

Guarantees, the terminal's:

* every answer is one transaction: the answer row and the session label it settles
  (through :meth:`Session.add_labels` / :meth:`Session.judge_many`, so only drawn
  items and classes of the task are accepted) commit together, or not at all;
* items are drawn only by :meth:`Session.select`, one batch when no drawn item is
  open for the annotator asking: the adaptive design refits between batches, as
  ``activetest label --n`` does, and never inside one, so the estimate stays
  exactly unbiased; draws are the session's, so a server killed at any moment
  resumes with the same future draws;
* the next item, the claim and the draw are one write transaction (``BEGIN
  IMMEDIATE``): two browsers (or two servers) never get the same item as "next"
  unless it asks for more annotators than it has.

The session's label of an item is settled from its answers: one answer, or several
that agree, is the label; annotators who disagree are settled by an adjudicator's
answer if there is one, else by the rule ``resolve`` (the import's rules,
:func:`activetest.session.labels.settle`: ``latest``, ``majority``; ``skip``
leaves the item unlabelled, listed among the disagreements until an adjudicator
settles it).

The page's records live in :mod:`.annotator_records`, its agreement statistics and
progress line in :mod:`.annotator_agreement`; every name is importable from here.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from activetest.session.annotator_agreement import (
    MetricProgress,
    Progress,
    WaitingNote,
    agreement,
    agreement_json,
    agreement_lines,
    describe_agreement,
    progress,
)
from activetest.session.annotator_records import (
    ANNOTATION_SOURCE,
    GROUND_TRUTH_KIND,
    IMPORT_KIND,
    AgreementReport,
    AgreementStat,
    Annotation,
    Assignment,
    Disagreement,
    ItemState,
    check_name,
    has_annotations,
    names_no_one,
    read_annotations,
)
from activetest.session.compare_graded import (
    AlikeConflict,
    alike_conflict,
    same_answer,
    shown_order,
)
from activetest.session.records import RESOLVE_RULES, LabelError
from activetest.session.store import LabelChange, now

__all__ = ["AgreementReport", "AgreementStat", "Annotation", "Annotators", "Assignment",
           "Disagreement", "ItemState", "MetricProgress", "Progress", "WaitingNote",
           "agreement", "agreement_json", "agreement_lines", "check_name",
           "describe_agreement", "has_annotations", "keep_undone", "keep_votes", "progress",
           "shown_order"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS annotations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    annotator TEXT NOT NULL,
    label INTEGER NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    undone TEXT
);
CREATE INDEX IF NOT EXISTS annotations_idx ON annotations (idx);
CREATE TABLE IF NOT EXISTS annotation_items (
    idx INTEGER PRIMARY KEY,
    step INTEGER NOT NULL,
    need INTEGER NOT NULL,
    shown_order TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS annotation_claims (
    idx INTEGER NOT NULL,
    annotator TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (idx, annotator)
);
CREATE TABLE IF NOT EXISTS annotation_skips (
    idx INTEGER NOT NULL,
    annotator TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (idx, annotator)
);
"""

#: The tables and index :data:`SCHEMA` makes.
_SCHEMA_NAMES = frozenset(re.findall(r"IF NOT EXISTS (\w+)", SCHEMA))


def _has_schema(store: Any) -> bool:
    """Whether the session file holds every table and index of :data:`SCHEMA` (read, so
    that a page or a command that only reads takes no write lock and writes nothing: each
    ``Annotators`` made was a write, a commit that moved the file's mark)."""
    rows = store._read("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
    return {str(r[0]) for r in rows} >= _SCHEMA_NAMES


def keep_votes(session: Any, records: Sequence[Any]) -> int:
    """Keep each annotator's label of an imported file (records that name an annotator,
    on drawn items) in the ``annotations`` table, so that agreement is computed on them
    as on the page's answers; returns how many were stored.

    A record's kind is the one it names (``kind``: the sheet a session file put back
    leaves, ``answer``, ``adjudication``, ...: the row comes back as it was, with its
    time, once), else ``import`` (a vote), or ``ground truth`` when Label Studio marks it
    so (it settled the item: not a vote). The same label from the same annotator again
    (the file imported twice) is not stored again; a different one is (their latest
    answer counts). Records marked undone are :func:`keep_undone`'s. Records naming no
    annotator (None, or text of whitespace only:
    :func:`~activetest.session.annotator_records.names_no_one`, the import's rule) carry
    no identity to compare, and are not kept. Call it inside the import's transaction,
    after its checks: the records are those it accepted (a classification's labels and a
    graded session's judgments alike: ``answer_of`` names the compared target).

    Raises:
        LabelError: a record whose annotator is not text, or whose name breaks the page's
            rule (:func:`check_name`: 1 to 64 characters, no control characters; the same
            message), nothing kept.
    """
    # the house's one rule of who names no one (QA: spelt here inline, by truth value, so
    # an API caller's annotator=0 was dropped unsaid where the import refuses it)
    named = [r for r in records if not names_no_one(getattr(r, "annotator", None))
             and getattr(r, "undone", None) is None]  # (undone: keep_undone's)
    if not named:
        return 0
    names = {}
    for r in named:  # (the import's checks refuse these first; QA: 5 was kept as "5")
        if not isinstance(r.annotator, str):
            raise LabelError(f"{getattr(r, 'where', None) or 'a record'}: annotator="
                             f"{r.annotator!r}: an annotator's name must be text (a str), "
                             f"got {type(r.annotator).__name__}; nothing was kept")
        try:  # the page's rule (QA: a file's 300-character name was kept)
            names[id(r)] = check_name(r.annotator)
        except LabelError as e:
            raise LabelError(f"{getattr(r, 'where', None) or 'a record'}: {e}; nothing was "
                             f"kept") from None
    store, accept = session.store, _acceptor(session)
    kept: list[Annotation] = []
    with store.transaction() as c:
        for r, row, role, kind, at in _accepted_rows(c, named, accept):
            who, label = names[id(r)], r.label
            if getattr(r, "kind", None) is not None:  # the session's own row, put back:
                if _held(c, row, role, who, int(label), kind, at) is not None:  # kept as it
                    continue  # was (its kind and time), once
            else:
                last = c.execute("SELECT label FROM annotations WHERE idx = ? AND role = ? "
                                 "AND annotator = ? AND kind = ? AND undone IS NULL ORDER BY "
                                 "id DESC LIMIT 1", (row, role, who, kind)).fetchone()
                if last is not None and int(last[0]) == int(label):
                    continue  # kept already (the same file imported again)
            cur = c.execute("INSERT INTO annotations (idx, role, annotator, label, kind, at) "
                            "VALUES (?, ?, ?, ?, ?, ?)", (row, role, who, int(label), kind, at))
            kept.append(Annotation(int(cur.lastrowid or 0), row, str(r.item_id), role, who,
                                   int(label), kind, at))
        store.note_annotations(kept)  # (kept beside a file put back: store_marks)
    return len(kept)


def _acceptor(session: Any) -> Callable[[Any], int | None]:
    """:func:`_accepted` over the open ``session``'s items, draws, compared targets and
    levels, read once (before the import's write transaction, not inside it)."""
    index = {it.id: i for i, it in enumerate(session.items())}
    drawn = {a.index for a in session.store.acquisitions()}
    specs = set(session.compared_targets()) if session.graded else set()
    n_levels = len(session.task.class_names)
    return lambda r: _accepted(r, index, drawn, specs, n_levels)


def _accepted_rows(c: Any, records: Sequence[Any], accept: Callable[[Any], int | None]
                   ) -> Iterator[tuple[Any, int, str, str, str]]:
    """The ``annotations`` table made where the file has none (``c``: the open write
    transaction), then each of ``records`` whose label the import accepted (``accept``:
    :func:`_acceptor`'s), as ``(record, pool row, role, kind, time)``: the role
    ``target`` or ``compare:<spec>``, the kind :func:`_kind_of`'s, the time the
    record's own (a row put back) or now."""
    for stmt in SCHEMA.split(";"):
        if stmt.strip():
            c.execute(stmt)
    for r in records:
        row = accept(r)
        if row is None:
            continue  # not a label the import accepted
        spec = getattr(r, "answer_of", None)
        yield (r, row, f"compare:{spec}" if spec else "target", _kind_of(r),
               getattr(r, "time", None) or now())


def _accepted(r: Any, index: Mapping[str, int], drawn: set[int], specs: set[str],
              n_levels: int) -> int | None:
    """The pool row of an imported record's item where the import accepted its label (a
    drawn item, a compared target of the session, a level in range), else None."""
    row = index.get(str(r.item_id))
    spec = getattr(r, "answer_of", None)
    label = r.label
    if (row is None or row not in drawn or (spec and spec not in specs)
            or not isinstance(label, (int, np.integer)) or isinstance(label, bool)
            or not 0 <= int(label) < n_levels):
        return None
    return row


def _kind_of(r: Any) -> str:
    """The ``annotations`` kind of an imported record: the one it names (the sheet a
    file put back leaves: :mod:`activetest.session.put_back_rows`), else ``ground
    truth`` where the file marks it so, else ``import`` (a vote)."""
    named = getattr(r, "kind", None)
    if named is not None:
        return str(named)
    return GROUND_TRUTH_KIND if getattr(r, "ground_truth", False) else IMPORT_KIND


def _held(c: Any, row: int, role: str, who: str, label: int, kind: str, at: str
          ) -> tuple[int, str | None] | None:
    """``(id, undone)`` of the ``annotations`` row of this very answer (item, role,
    annotator, level, kind and time), the latest; None where there is none."""
    got = c.execute("SELECT id, undone FROM annotations WHERE idx = ? AND role = ? AND "
                    "annotator = ? AND label = ? AND kind = ? AND at = ? ORDER BY id DESC "
                    "LIMIT 1", (row, role, who, label, kind, at)).fetchone()
    return None if got is None else (int(got[0]), got[1])


def keep_undone(session: Any, records: Sequence[Any]) -> int:
    """Keep each annotator's answer that an imported file marks undone (``undone``: when;
    the sheet a session file put back leaves, :mod:`activetest.session.put_back_rows`)
    as undone: the ``annotations`` row of that answer (its item, role, annotator,
    level, kind and time) marked undone where the session holds it standing, or added
    marked undone where it holds none (kept, as every undone answer is; no vote).
    Returns how many rows were marked or added. Call it inside the import's
    transaction, after its checks (:func:`keep_votes`'s rules for names and items:
    records it would not keep are not kept here either).
    """
    named = [r for r in records if not isinstance(r, tuple)
             and getattr(r, "undone", None) is not None
             and isinstance(getattr(r, "annotator", None), str)
             and not names_no_one(r.annotator)]
    if not named:
        return 0
    store, accept = session.store, _acceptor(session)
    kept: list[Annotation] = []
    with store.transaction() as c:
        for r, row, role, kind, at in _accepted_rows(c, named, accept):
            who, label = check_name(r.annotator), r.label
            held = _held(c, row, role, who, int(label), kind, at)
            if held is not None and held[1] is not None:
                continue  # undone already
            if held is not None:
                c.execute("UPDATE annotations SET undone = ? WHERE id = ?", (r.undone, held[0]))
                rid = held[0]
            else:
                rid = int(c.execute(
                    "INSERT INTO annotations (idx, role, annotator, label, kind, at, undone) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (row, role, who, int(label), kind, at, r.undone)).lastrowid or 0)
            kept.append(Annotation(rid, row, str(r.item_id), role, who, int(label), kind, at,
                                   r.undone))
        store.note_annotations(kept)  # (kept beside a file put back: store_marks)
    return len(kept)


#: An annotator's last answer standing (not undone): its item row and time.
_LAST_ANSWER = ("SELECT idx, at FROM annotations WHERE annotator = ? AND kind = 'answer' "
                "AND undone IS NULL ORDER BY id DESC LIMIT 1")

#: The stream of the seeded per-step draw of the overlap, apart from the design's (the
#: paired order's: :func:`activetest.session.compare_graded.shown_order`).
_OVERLAP_STREAM = 0x0A11
_SOURCE = ANNOTATION_SOURCE


class Annotators:
    """The page's view of a session (see the module docstring).

    Args:
        session: the open :class:`~activetest.session.workflow.Session` (used from one
            thread only: the server runs every call on one worker thread).
        overlap: the share of drawn items asked of ``reviews`` annotators (0..1).
        reviews: annotators asked for on an overlap item (2 or more).
        batch: items drawn at once when none is open (the design refits between batches).
        budget: the most items drawn in all (None: the pool).
        resolve: how disagreeing annotators are settled without an adjudicator
            (``skip``, ``latest``, ``majority``).
        claim_seconds: how long an item given to an annotator stays theirs (renewed
            whenever they ask for items); then it may go to the next person. An answer
            to a lapsed claim is still stored unless others have given the answers the
            item asks for meanwhile (then it is refused with that reason).
        show_guess: show the surrogate's guess (default hidden: it can sway people).
    """

    def __init__(self, session: Any, *, overlap: float = 0.0, reviews: int = 2,
                 batch: int = 10, budget: int | None = None, resolve: str = "skip",
                 claim_seconds: float = 600.0, show_guess: bool = False) -> None:
        if not 0.0 <= float(overlap) <= 1.0:
            raise ValueError(f"--overlap must be a share between 0 and 1, got {overlap!r}")
        if int(reviews) < 2:
            raise ValueError(f"--reviews must be 2 or more annotators, got {reviews!r}")
        if int(batch) < 1:
            raise ValueError(f"--batch must be a positive number of items, got {batch!r}")
        if budget is not None and int(budget) < 1:
            raise ValueError(f"--n must be a positive number of items, got {budget!r}")
        if resolve not in RESOLVE_RULES:
            raise ValueError(f"--resolve must be one of {', '.join(RESOLVE_RULES)}, got "
                             f"{resolve!r}")
        if not (isinstance(claim_seconds, (int, float)) and 0 < claim_seconds < float("inf")):
            raise ValueError(f"--claim-seconds must be a positive number of seconds, got "
                             f"{claim_seconds!r}")
        from activetest.session.harness import check_person_labelling

        check_person_labelling(session, None, "serve")  # harness draws have no answer
        self.s = session
        self.overlap = float(overlap)
        self.reviews = int(reviews)
        self.batch = int(batch)
        self.budget = min(int(budget), session.n_items) if budget is not None else None
        self.resolve = resolve
        self.claim_seconds = float(claim_seconds)
        self.show_guess = bool(show_guess)
        specs = session.compared_targets() if session.graded else []
        #: the roles each item's answer covers: the target's, then compared answers'
        self.roles: tuple[str, ...] = ("target", *(f"compare:{s}" for s in specs))
        self._ids = [it.id for it in session.items()]
        self._acq: list[Any] = []  # the draws read so far (see _acquisitions)
        #: the annotators whose last ask found nothing for them (:meth:`held`)
        self._idle: set[str] = set()
        if session.store.writable and not _has_schema(session.store):
            with session.store.transaction() as c:
                for stmt in SCHEMA.split(";"):
                    if stmt.strip():
                        c.execute(stmt)

    # ------------------------------------------------------------------ layout

    @property
    def layout(self) -> str:
        """``classification``, ``graded`` or ``paired`` (graded with compared answers)."""
        if not self.s.graded:
            return "classification"
        return "paired" if len(self.roles) > 1 else "graded"

    @property
    def levels(self) -> tuple[str, ...]:
        """The class names (judgment levels), key 1 first."""
        return tuple(self.s.task.class_names)

    # ------------------------------------------------------------------ reading

    def _rows(self, c: Any, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(c.execute(sql, params).fetchall())

    def annotations(self, *, include_undone: bool = False) -> list[Annotation]:
        """Every answer given on the page, oldest first."""
        if not has_annotations(self.s.store):
            return []
        return read_annotations(self.s.store, self._ids, include_undone)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[Any]:
        """The store's write transaction; should it roll back, the draws read in it are
        forgotten (they may be undone)."""
        try:
            with self.s.store.transaction() as c:
                yield c
        except BaseException:
            self._acq = []
            raise

    def _acquisitions(self, c: Any) -> list[Any]:
        """The draws, in step order: the ones read before (draws are only ever appended)
        and those added since, so that an answer does not re-read every draw."""
        from activetest.session.store import Acquisition

        n = int(c.execute("SELECT COUNT(*) FROM acquisitions").fetchone()[0])
        if n == len(self._acq):
            return self._acq
        last = self._acq[-1].step if self._acq else 0
        new = [Acquisition(int(st), int(i), iid, float(q), created)
               for st, i, iid, q, created in c.execute(
                   "SELECT a.step, a.idx, i.item_id, a.q, a.created FROM acquisitions a "
                   "CROSS JOIN items i ON i.idx = a.idx WHERE a.step > ? ORDER BY a.step",
                   (last,)).fetchall()]
        if len(self._acq) + len(new) == n:
            self._acq = self._acq + new
        else:  # not what appending gives (cannot happen): read them all
            self._acq = self.s.store.acquisitions()
        return self._acq

    def _state(self, c: Any) -> list[ItemState]:
        """Every drawn item with who answered it (the names only: what finding the next
        item needs)."""
        states = [ItemState(a.step, a.index, a.item_id, who=set())
                  for a in self._acquisitions(c)]
        by_row = {st.index: st for st in states}
        for idx, name in c.execute("SELECT idx, annotator FROM annotations WHERE undone IS "
                                   "NULL AND kind = 'answer'"):
            st = by_row.get(int(idx))
            if st is not None and st.who is not None:
                st.who.add(name)
        return states

    def _item_state(self, c: Any, row: int | None) -> ItemState | None:
        """One drawn item with its answers (None: not a drawn item)."""
        if row is None:
            return None
        step = c.execute("SELECT step FROM acquisitions WHERE idx = ?", (row,)).fetchone()
        if step is None:
            return None
        st = ItemState(int(step[0]), row, self._ids[row])
        for r in self._rows(c, "SELECT id, idx, role, annotator, label, kind, at FROM "
                               "annotations WHERE idx = ? AND undone IS NULL ORDER BY id",
                            (row,)):
            st.answers.setdefault(r[2], []).append(Annotation(
                int(r[0]), int(r[1]), st.item_id, r[2], r[3], int(r[4]), r[5], r[6]))
        return st

    def _item_row(self, c: Any, st: ItemState, keep: bool = True
                  ) -> tuple[int, tuple[str, ...]]:
        """``(need, shown order of the roles)`` of a drawn item: stored the first time
        (``keep``; else, for a question that only reads, drawn as it would be stored: the
        same seeded draws, nothing written)."""
        row = c.execute("SELECT need, shown_order FROM annotation_items WHERE idx = ?",
                        (st.index,)).fetchone()
        if row is not None:
            return int(row[0]), tuple(json.loads(row[1]))
        seed = int(self.s.session_config.seed)
        u = np.random.default_rng([seed, st.step, _OVERLAP_STREAM]).random()
        need = self.reviews if u < self.overlap else 1
        order = list(shown_order(seed, st.step, self.roles))
        if not keep:
            return need, tuple(order)
        c.execute("INSERT INTO annotation_items (idx, step, need, shown_order, at) VALUES "
                  "(?, ?, ?, ?, ?)", (st.index, st.step, need, json.dumps(order), now()))
        return need, tuple(order)

    @staticmethod
    def _needs(c: Any) -> dict[int, int]:
        """Item row -> how many annotators it asks for, of every item stored in
        ``annotation_items`` (one read: asked item by item, finding the next item read
        one row per drawn item, 20,000 reads an answer at 20,000 drawn items). A stored
        need never changes, so it holds for a whole search."""
        return {int(i): int(n) for i, n in c.execute("SELECT idx, need FROM annotation_items")}

    @staticmethod
    def _who(st: ItemState) -> set[str]:
        """Annotators with an answer (not an adjudication) on the item."""
        if st.who is not None:
            return st.who
        return {a.annotator for rows in st.answers.values() for a in rows
                if a.kind == "answer"}

    # ------------------------------------------------------------------ next item

    def next_item(self, annotator: str) -> Assignment | None:
        """The next item for ``annotator``, claimed for them (None: nothing left).

        In draw order: an item they hold already (a reload), else the first drawn
        item that asks for more annotators than it has answers and live claims of
        others, that they have not answered or set aside; else one they set aside;
        else a new batch is drawn (:meth:`Session.select`) within the budget.
        """
        held = self.held(annotator)
        return held[0] if held else None

    def held(self, annotator: str, ahead: int = 0) -> list[Assignment]:
        """:meth:`next_item`, then up to ``ahead`` more items for ``annotator`` (the
        ones they hold, then the next open ones), all claimed in ONE transaction (their
        claims renewed); empty: nothing left.

        The page shows the first and keeps the others at hand, so that the item after
        an answer is on screen without waiting for the server. A batch is drawn only
        when the annotator holds no item and none is open (as :meth:`next_item`): the
        items held ahead never make the design draw before the labels of its batch are
        in, so one annotator makes exactly the terminal flow's draws.
        """
        who = check_name(annotator)
        if int(ahead) < 0:
            raise ValueError(f"ahead must be 0 or more items, got {ahead!r}")
        store = self.s.store
        # a page told "nothing for you" asks again and again (api/next after each
        # api/wait, every page at each change): each ask was a commit that waited for the
        # write lock; asked again, it is read first (only the asks after a "nothing":
        # the labelling flow's own asks go as they went)
        if who in self._idle and self._nothing_for(who):  # read: nothing for them still
            return []
        with self._transaction() as c:
            c.execute("DELETE FROM annotation_claims WHERE expires < ?", (time.time(),))
            for _ in range(2):  # the drawn items, then (once) those of a new batch
                out = self._pick(c, who, 1 + int(ahead))
                if out:
                    self._idle.discard(who)
                    return out
                left = (self.budget if self.budget is not None else self.s.n_items) - \
                    store.n_acquired()
                if left <= 0:
                    self._idle.add(who)
                    return []
                self.s.select(min(self.batch, left))  # joins this transaction
            return []  # pragma: no cover - a new batch always holds an open item

    def _nothing_for(self, who: str) -> bool:
        """Whether :meth:`held` would give ``who`` nothing, found by reading only (one
        snapshot of the file, no write lock, nothing written): no drawn item is theirs
        or open to them (:meth:`_open`, with the claims that have not lapsed, as
        :meth:`held` sees them once it has removed the lapsed ones) and the budget is
        drawn (no batch to draw). False where the tables are not made yet (a file only
        read: :meth:`held` says why it cannot write)."""
        store = self.s.store
        if not _has_schema(store):
            return False
        with store.reading() as c:
            left = (self.budget if self.budget is not None else self.s.n_items) - \
                int(c.execute("SELECT COUNT(*) FROM acquisitions").fetchone()[0])
            if left > 0:
                return False  # a batch may be drawn: held's to do
            labels = {int(i): str(src) for i, src in c.execute("SELECT idx, source FROM labels")}
            claims: dict[int, set[str]] = {}
            for idx, name in c.execute("SELECT idx, annotator FROM annotation_claims WHERE "
                                       "expires >= ?", (time.time(),)):
                claims.setdefault(int(idx), set()).add(name)
            needs = self._needs(c)
            return not any(self._open(c, st, who, labels, claims,
                                      own_claim=who in claims.get(st.index, ()), keep=False,
                                      needs=needs)
                           for st in self._state(c))

    def held_by_others(self, annotator: str) -> tuple[int, float | None]:
        """How many drawn items other annotators hold (claimed, not yet answered by them),
        and the seconds until the first of those claims lapses (None: none held): what
        a person told "nothing left" waits for (QA: the page said every drawn item had
        its answers while others held some, and never asked again)."""
        who = check_name(annotator)
        if not has_annotations(self.s.store):
            return 0, None
        # the items they answered never come to them again, whoever holds them (QA: "one
        # comes to you if its claim lapses" of an overlap item they had answered)
        n, first = self.s.store._read(
            "SELECT COUNT(DISTINCT idx), MIN(expires) FROM annotation_claims WHERE "
            "annotator != ? AND expires >= ? AND idx NOT IN (SELECT idx FROM annotations "
            "WHERE annotator = ? AND kind = 'answer' AND undone IS NULL)",
            (who, time.time(), who))[0]
        if not n:
            return 0, None
        return int(n), max(0.0, float(first) - time.time())

    def unsettled(self) -> int:
        """How many drawn items have answers on the page and no label: answers that
        differ, which ``--resolve skip`` leaves to an adjudicator (the estimate waits at
        the first of them; QA: every page said "every drawn item has its answers")."""
        if not has_annotations(self.s.store):
            return 0
        return int(self.s.store._read(
            "SELECT COUNT(DISTINCT idx) FROM annotations WHERE undone IS NULL AND role = "
            "'target' AND idx NOT IN (SELECT idx FROM labels)")[0][0])

    def wanting_others(self, annotator: str) -> int:
        """How many drawn items ``annotator`` answered that ask for more annotators than
        have answered (an overlap item): what a person with nothing left is told, instead
        of "every drawn item has its answers" (QA: said while every item of an overlap
        session waited for a second annotator)."""
        who = check_name(annotator)
        if not has_annotations(self.s.store):
            return 0
        # read only (a page with nothing to label asks it at each ask: it was a commit,
        # which waited for the write lock; an item's need not stored yet is drawn as it
        # would be stored, the same seeded draw)
        with self.s.store.reading() as c:
            labels = {int(i): str(src) for i, src in c.execute("SELECT idx, source FROM labels")}
            n = 0
            needs = self._needs(c)
            for st in self._state(c):
                lab = labels.get(st.index)
                answered = self._who(st)
                if who not in answered or (lab is not None and not lab.startswith(_SOURCE)):
                    continue  # not theirs to wait on, or labelled elsewhere (settled)
                need = needs.get(st.index)
                n += len(answered) < (need if need is not None else
                                      self._item_row(c, st, keep=False)[0])
            return n

    def _pick(self, c: Any, who: str, k: int) -> list[Assignment]:
        """Up to ``k`` drawn items for ``who`` (claimed): those they hold, then the open
        ones in draw order, then the ones they set aside; never draws."""
        states = self._state(c)
        # whose label each labelled row holds (its source): the page's or another's
        labels = {int(i): str(src) for i, src in c.execute("SELECT idx, source FROM labels")}
        claims: dict[int, set[str]] = {}
        for idx, name in self._rows(c, "SELECT idx, annotator FROM annotation_claims"):
            claims.setdefault(int(idx), set()).add(name)
        skipped = {int(r[0]) for r in self._rows(
            c, "SELECT idx FROM annotation_skips WHERE annotator = ?", (who,))}
        needs = self._needs(c)
        out: list[Assignment] = []
        taken: set[int] = set()
        for st in states:  # held already (a reload, or items kept at hand)
            if len(out) < k and who in claims.get(st.index, set()) and \
                    self._open(c, st, who, labels, claims, own_claim=True, needs=needs):
                out.append(self._claim(c, st, who, again=st.index in skipped))
                taken.add(st.index)
        aside = []
        for st in states:
            if len(out) >= k:
                break
            if st.index in taken or not self._open(c, st, who, labels, claims, needs=needs):
                continue
            if st.index in skipped:
                aside.append(st)
                continue
            out.append(self._claim(c, st, who))
        for st in aside[:k - len(out)]:
            out.append(self._claim(c, st, who, again=True))
        return out

    def _open(self, c: Any, st: ItemState, who: str, labels: Mapping[int, str],
              claims: Mapping[int, set[str]], own_claim: bool = False,
              keep: bool = True, needs: Mapping[int, int] | None = None) -> bool:
        """Whether the drawn item ``st`` may go to ``who`` (``own_claim``: they hold
        it); ``keep``: :meth:`_item_row`'s (False: only read); ``needs``: the stored
        needs (:meth:`_needs`, read once for many items; an item not in it is
        :meth:`_item_row`'s)."""
        lab = labels.get(st.index)  # the label's source
        if lab is not None and not lab.startswith(_SOURCE):
            return False  # labelled elsewhere (the terminal, an import)
        answered = self._who(st)
        if who in answered:
            return False
        if lab is not None and not answered:
            return False  # a web label whose answers were all undone? keep it
        stored = None if needs is None else needs.get(st.index)
        need = stored if stored is not None else self._item_row(c, st, keep)[0]
        others = claims.get(st.index, set()) - {who}
        if own_claim:
            return len(answered) < need
        return len(answered) + len(others) < need

    def _claim(self, c: Any, st: ItemState, who: str, again: bool = False) -> Assignment:
        c.execute("INSERT OR REPLACE INTO annotation_claims (idx, annotator, expires) VALUES "
                  "(?, ?, ?)", (st.index, who, time.time() + self.claim_seconds))
        need, order = self._item_row(c, st)
        return self._assignment(st, need, order, again)

    def _assignment(self, st: ItemState, need: int, order: Sequence[str],
                    again: bool = False) -> Assignment:
        s = self.s
        from activetest.data.generative import FULL_PROMPT

        answers: tuple[str, ...] = ()
        if s.graded:
            shown = {role: s._display_items([st.index], role)[0] for role in order}
            base = shown[order[0]].fields
            fields = tuple((k, str(v)) for k, v in base.items()
                           if k not in ("answer", FULL_PROMPT))
            answers = tuple(str(shown[role].fields.get("answer", "")) for role in order)
        else:
            fields = tuple((k, str(v)) for k, v in s.display_item(st.item_id).fields.items())
        guess = None
        if self.show_guess and not s.graded:
            stored = s.store.scores("surrogate")
            if stored is not None:
                lp = stored.logprobs[st.index]
                if np.isfinite(lp).all() and np.ptp(lp) > 1e-12:
                    k = int(np.argmax(lp))
                    guess = (self.levels[k], float(np.exp(lp[k])))
        return Assignment(st.item_id, st.step, fields, answers, need,
                          len(self._who(st)), guess, again)

    # ------------------------------------------------------------------ answers

    def answer(self, annotator: str, item_id: str, levels: Sequence[int], *,
               adjudicate: bool = False) -> list[Annotation]:
        """Store ``annotator``'s answer to a drawn item and settle its label, in ONE
        transaction; returns the rows written (empty: the same answer was stored
        already, e.g. a retry after a lost reply).

        Args:
            levels: one level per answer shown, in the order shown (a classification
                or graded item: one).
            adjudicate: an adjudicator's answer, which settles a disagreement.

        Raises:
            LabelError: unknown or undrawn item, a level out of range, an item
                labelled elsewhere or by enough others meanwhile (the claim lapsed),
                or a different answer already given by the same annotator.
        """
        who = check_name(annotator, "adjudicator" if adjudicate else "annotator")
        C = len(self.levels)
        levels = [int(v) for v in levels]
        with self._transaction() as c:
            st = self._item_state(c, self.s.store.index_of(item_id))
            if st is None:
                raise LabelError(f"item {item_id!r} is not a drawn item of this session")
            need, order = self._item_row(c, st)
            if len(levels) != len(order) or not all(0 <= v < C for v in levels):
                raise LabelError(f"item {item_id!r}: expected {len(order)} level(s) in "
                                 f"1..{C}, got {[v + 1 for v in levels]}")
            given = dict(zip(order, levels, strict=True))
            self._check_same_texts(c, st, order, given, item_id)
            lab = self._label_of(c, st.index)
            if lab is not None and not lab[1].startswith(_SOURCE):
                raise LabelError(f"item {item_id!r} was labelled "
                                 f"{self.levels[lab[0]]!r} meanwhile ({lab[1]}); "
                                 f"your answer was not saved")
            kind = "adjudication" if adjudicate else "answer"
            if not adjudicate:
                mine = {a.role: a.label for rows in st.answers.values() for a in rows
                        if a.annotator == who and a.kind == "answer"}
                if mine:
                    if mine == given:
                        return []
                    raise self._answered_already(c, st, who, mine, order)
                others = self._who(st) - {who}
                claimed = c.execute("SELECT 1 FROM annotation_claims WHERE idx = ? AND "
                                    "annotator = ?", (st.index, who)).fetchone()
                if len(others) >= need and not claimed:
                    raise LabelError(f"item {item_id!r} was answered by {len(others)} other "
                                     f"annotator(s) meanwhile (your claim lapsed); your "
                                     f"answer was not saved")
            at = now()
            out = []
            for role in order:
                cur = c.execute("INSERT INTO annotations (idx, role, annotator, label, kind, at) "
                                "VALUES (?, ?, ?, ?, ?, ?)",
                                (st.index, role, who, given[role], kind, at))
                out.append(Annotation(int(cur.lastrowid or 0), st.index, st.item_id, role, who,
                                      given[role], kind, at))
            c.execute("DELETE FROM annotation_claims WHERE idx = ? AND annotator = ?",
                      (st.index, who))
            c.execute("DELETE FROM annotation_skips WHERE idx = ? AND annotator = ?",
                      (st.index, who))
            self._settle(c, st.index, st.item_id)
            self.s.store.note_annotations(out)  # (kept beside a file put back: store_marks)
        return out

    def _answered_already(self, c: Any, st: ItemState, who: str,
                          mine: Mapping[str, int], order: Sequence[str]) -> LabelError:
        """Why another answer of ``who`` to an item they answered is refused, and what
        ``u`` (undo their last answer) would undo: that item, or a later one (QA: "press
        u to undo your last answer first", said in a second tab, undid another item)."""
        given = ", ".join(repr(self.levels[mine[r]]) for r in order if r in mine)  # as shown
        head = f"you answered item {st.item_id!r} already ({given}); your answer stands"
        first = c.execute("SELECT MIN(id) FROM annotations WHERE idx = ? AND annotator = ? "
                          "AND kind = 'answer' AND undone IS NULL",
                          (st.index, who)).fetchone()[0]
        later = [int(r[0]) for r in c.execute(
            "SELECT idx FROM annotations WHERE annotator = ? AND kind = 'answer' AND "
            "undone IS NULL AND id > ? GROUP BY idx, at ORDER BY MAX(id) DESC",
            (who, first)).fetchall() if int(r[0]) != st.index]
        if not later:
            return LabelError(f"{head}: it is your last answer, so u undoes it (the item "
                              f"comes back); then answer it again")
        return LabelError(
            f"{head}. u undoes your last answer, which is item {self._ids[later[0]]!r}, not "
            f"this one; to change item {st.item_id!r}, press u {len(later) + 1} times (the "
            f"{len(later)} item(s) you answered after it come back to be answered again)")

    def _check_same_texts(self, c: Any, st: ItemState, order: Sequence[str],
                          given: Mapping[str, int], item_id: str) -> None:
        """Two answers of one item with the same text (two targets that answered alike)
        are one answer: they must get the same level (as an import counts identical
        answers judged differently as a disagreement).

        The same text is the store's rule, :func:`~activetest.session.compare_graded.same_answer`
        (whitespace collapsed, case and Unicode form kept), on the stored texts, read
        for this row only (``c``: the open transaction): what the store's one-judgment
        check (:func:`~activetest.session.compare_graded.alike_conflict`), the terminal
        and an import compare. (Read through the page's display, every answer of every
        role was read to check one item: 0.33 CPU s an answer of a paired session of 20,000
        items.)"""
        if not self.s.graded or len(order) < 2:
            return
        stored = {role: "" for role in order}  # no answer stored: "", as displayed
        for role, text in c.execute(
                f"SELECT role, answer FROM answers WHERE idx = ? AND role IN "
                f"({', '.join('?' * len(order))})", (st.index, *order)):
            stored[str(role)] = str(text)
        for k, role in enumerate(order):
            same = next((r for r in order[:k] if same_answer(stored[r], stored[role])), None)
            if same is not None and given[same] != given[role]:
                raise LabelError(
                    f"item {item_id!r}: two of its answers are the same text "
                    f"({stored[role][:60]!r}) but were given different levels "
                    f"({self.levels[given[same]]!r} and {self.levels[given[role]]!r}); give "
                    f"the same answer the same level")

    def answer_and_next(self, annotator: str, item_id: str, levels: Sequence[int],
                        ) -> tuple[list[Annotation], Assignment | None]:
        """:meth:`answer`, then :meth:`next_item`, in ONE transaction (one write to disk
        a label): the answer commits with the claim of the next item, before the reply.
        Should finding the next item fail, only that part is rolled back (a savepoint)
        and the answer still commits; the error is raised after the commit.
        """
        rows, held = self.answer_and_held(annotator, item_id, levels)
        return rows, (held[0] if held else None)

    def answer_and_held(self, annotator: str, item_id: str, levels: Sequence[int],
                        ahead: int = 0) -> tuple[list[Annotation], list[Assignment]]:
        """:meth:`answer`, then :meth:`held` (``ahead`` items beyond the next), in ONE
        transaction, as :meth:`answer_and_next`."""
        with self._transaction():
            rows = self.answer(annotator, item_id, levels)
            items, failed = self._held_after_answers(annotator, ahead)
        if failed is not None:
            raise failed
        return rows, items

    def answers_and_held(self, annotator: str,
                         answers: Sequence[tuple[str, Sequence[int]]], ahead: int = 0,
                         ) -> tuple[list[list[Annotation] | LabelError], list[Assignment]]:
        """Several answers of one annotator (``(item_id, levels)``, in the order given),
        then :meth:`held`, in ONE transaction: what the page sends when answers waited
        behind a slow reply (one commit for them all). Each answer is :meth:`answer`'s,
        in a savepoint of its own: one refused (a :class:`LabelError`, given back in its
        place) leaves the others stored. Where :meth:`held` then fails, the answers stay
        committed and its error is raised carrying them (``answers_saved``: the results).
        """
        results: list[list[Annotation] | LabelError] = []
        with self._transaction():
            for item_id, levels in answers:
                try:  # (the store's savepoint: what it noted of a refusal is undone too)
                    with self.s.store.savepoint("one_answer"):
                        rows = self.answer(annotator, item_id, levels)
                except LabelError as exc:
                    results.append(exc)
                else:
                    results.append(rows)
            items, failed = self._held_after_answers(annotator, ahead)
        if failed is not None:
            # the answers are committed: the caller can say so (QA: the page was told
            # "not saved" of answers that were, when the next item could not be drawn)
            failed.answers_saved = results  # type: ignore[attr-defined]
            raise failed
        return results, items

    def _held_after_answers(self, annotator: str, ahead: int
                            ) -> tuple[list[Assignment], Exception | None]:
        """:meth:`held` in a savepoint of the open write transaction (the store's: held
        joins it, as every write of the store does, so it reads and claims through the
        transaction's connection): if it fails, only it is undone (the answers before it
        stand; a draw in it is forgotten) and the error is given back for the caller to
        raise after the commit."""
        try:
            with self.s.store.savepoint("next_item"):
                items, failed = self.held(annotator, ahead), None
        except Exception as exc:  # the answers stand; the next item is asked again
            self._acq = []  # a draw in it is undone
            items, failed = [], exc
        return items, failed

    def undo(self, annotator: str) -> Assignment | None:
        """Undo ``annotator``'s last answer (kept, marked undone), settle the item again
        and give it back to them; None when they have nothing to undo."""
        who = check_name(annotator)
        if not self._answered_any(who):  # read: nothing to undo, nothing written
            return None
        with self._transaction() as c:
            row = c.execute(_LAST_ANSWER, (who,)).fetchone()
            if row is None:
                return None  # undone meanwhile (another page of theirs)
            idx, at = int(row[0]), row[1]
            # a label set elsewhere since (an import with --overwrite, the terminal) is not
            # the page's to take back: settling again would replace or remove it (QA)
            for role in self.roles:
                cur = self._current(c, idx, role)
                if cur is not None and not cur[1].startswith(_SOURCE):
                    what = ("" if role == "target" else
                            f" ({role.removeprefix('compare:')}'s answer)")
                    raise LabelError(
                        f"item {self._ids[idx]!r}{what} was labelled {self.levels[cur[0]]!r} "
                        f"by {cur[1]} after your answer; nothing was undone (the page does "
                        f"not replace a label set elsewhere)")
            when = now()
            taken = [Annotation(int(r[0]), idx, self._ids[idx], r[1], who, int(r[2]),
                                "answer", at, when) for r in c.execute(
                "SELECT id, role, label FROM annotations WHERE idx = ? AND annotator = ? AND "
                "at = ? AND kind = 'answer' AND undone IS NULL ORDER BY id", (idx, who, at))]
            c.execute("UPDATE annotations SET undone = ? WHERE idx = ? AND annotator = ? AND "
                      "at = ? AND kind = 'answer' AND undone IS NULL", (when, idx, who, at))
            # kept as undone beside a file put back (store_marks), not left out: an
            # import of that sheet takes back the answer where the file holds it
            self.s.store.note_annotations(taken)
            self._settle(c, idx, self._ids[idx])
            st = self._item_state(c, idx)
            assert st is not None  # an answered item is a drawn one
            return self._claim(c, st, who)

    def _answered_any(self, who: str) -> bool:
        """Whether ``who`` has an answer standing (not undone), read without the write
        lock (QA: an undo with nothing to undo was a commit, which moved the file's
        write mark and waited for the lock)."""
        store = self.s.store
        return has_annotations(store) and bool(store._read(_LAST_ANSWER, (who,)))

    def skip(self, annotator: str, item_id: str) -> None:
        """Set an item aside for a second look (offered again after the others)."""
        who = check_name(annotator)
        with self._transaction() as c:
            row = self.s.store.index_of(item_id)
            if row is None:
                raise LabelError(f"item {item_id!r} is not in the pool")
            if self._item_state(c, row) is None:  # as answer refuses it
                raise LabelError(f"item {item_id!r} is not a drawn item of this session")
            c.execute("INSERT OR REPLACE INTO annotation_skips (idx, annotator, at) VALUES "
                      "(?, ?, ?)", (row, who, now()))
            c.execute("DELETE FROM annotation_claims WHERE idx = ? AND annotator = ?",
                      (row, who))

    def reclaim(self, annotator: str, item_ids: Sequence[str]) -> list[str]:
        """Claim again for ``annotator`` the items their page still shows or holds at
        hand, after their claims were given back (the page went silent a while: a
        frozen tab, a computer asleep), those still open to them (not answered by enough
        others, not held by another, not labelled elsewhere), in ONE transaction;
        returns their ids."""
        who = check_name(annotator)
        out: list[str] = []
        with self._transaction() as c:
            c.execute("DELETE FROM annotation_claims WHERE expires < ?", (time.time(),))
            labels = {int(i): str(src) for i, src in c.execute("SELECT idx, source FROM labels")}
            claims: dict[int, set[str]] = {}
            for idx, name in self._rows(c, "SELECT idx, annotator FROM annotation_claims"):
                claims.setdefault(int(idx), set()).add(name)
            for item_id in dict.fromkeys(item_ids):
                st = self._item_state(c, self.s.store.index_of(item_id))
                if st is None or not self._open(c, st, who, labels, claims,
                                                own_claim=who in claims.get(st.index, ())):
                    continue
                self._claim(c, st, who)
                claims.setdefault(st.index, set()).add(who)
                out.append(item_id)
        return out

    def release(self, annotator: str) -> bool:
        """Give back every item ``annotator`` holds (they leave the page); whether they
        held any (False: nothing written)."""
        who = check_name(annotator)
        if _has_schema(self.s.store) and not self.s.store._read(
                "SELECT 1 FROM annotation_claims WHERE annotator = ? LIMIT 1", (who,)):
            return False  # nothing held: nothing written (a page closed with none at hand)
        with self._transaction() as c:
            return c.execute("DELETE FROM annotation_claims WHERE annotator = ?",
                             (who,)).rowcount > 0

    # ------------------------------------------------------------------ settling

    def _settle(self, c: Any, idx: int, item_id: str) -> None:
        """Write the session label (and compared judgments) the item's answers settle:
        every role first, then the one-judgment-per-answer-text check once (QA: checked
        after each role, a second annotator's answer that changed the settled judgment of
        an item whose two answers are the same text was refused after its first role,
        the pair differing for a moment, and could never be stored).

        Raises:
            LabelError: the item's two same-text answers would be judged differently (one
                judged elsewhere: an import, the terminal, the API), worded for the page
                (:meth:`_alike_refusal`); nothing written then.
        """
        from activetest.session.labels import Vote, settle

        adds: list[tuple[str, int, str]] = []
        rows = self._rows(c, "SELECT role, annotator, label, kind, at, id FROM annotations "
                             "WHERE idx = ? AND undone IS NULL ORDER BY id", (idx,))
        for role in self.roles:
            mine = [r for r in rows if r[0] == role]
            adj = [r for r in mine if r[3] == "adjudication"]
            # an imported ground truth settles as an adjudication does; two that differ
            # settle nothing (never guessed), unless an adjudicator settles it
            truths = [r for r in mine if r[3] == GROUND_TRUTH_KIND]
            value: int | None
            if adj:
                value, source = int(adj[-1][2]), f"{_SOURCE} (adjudicated by {adj[-1][1]})"
            elif truths:
                agree = len({int(r[2]) for r in truths}) == 1
                value = int(truths[-1][2]) if agree else None
                source = f"{_SOURCE} ({GROUND_TRUTH_KIND}: {truths[-1][1]})" if agree else ""
            else:
                latest: dict[str, Any] = {}
                for r in mine:
                    latest[r[1]] = r
                if not latest:
                    value, source = None, ""
                elif len({int(r[2]) for r in latest.values()}) == 1:
                    names = ", ".join(sorted(latest))
                    value, source = int(next(iter(latest.values()))[2]), f"{_SOURCE} ({names})"
                else:
                    votes = [Vote(int(r[2]), "", f"{_SOURCE} ({r[1]})", r[1], r[4], n, r[1])
                             for n, r in enumerate(mine, start=1)]
                    chosen = settle(votes, self.resolve)
                    value = None if chosen is None else chosen.label
                    source = f"{_SOURCE} ({self.resolve}: {chosen.annotator})" if chosen else ""
            if self._write(c, idx, item_id, role, value, source) and value is not None:
                adds.append((role, value, source))
        if not adds:
            return  # nothing written (a removal makes no two judgments differ)
        self.s._add_roles(item_id, adds)
        if len(self.roles) > 1:
            found = alike_conflict(self.s.store, [idx])
            if found is not None:
                raise self._alike_refusal(c, idx, found)

    def _alike_refusal(self, c: Any, idx: int, found: AlikeConflict) -> LabelError:
        """Why the page refuses an answer whose settled judgment differs from the stored
        judgment of the same text (set elsewhere: an import, the terminal, the API). The
        page is blind: the answers are named by the letters shown (A, B), never by whose
        they are, nor the compared target's file, nor the judgment's source (which may name
        it); and it has no ``--overwrite``."""
        names = self.levels
        st = self._item_state(c, idx)
        order = self._item_row(c, st)[1] if st is not None else self.roles
        roles = [r if r == "target" else f"compare:{r}" for r in found.roles]
        letters = " and ".join(sorted(chr(ord("A") + order.index(r)) for r in roles
                                      if r in order))
        # the judgment made elsewhere (the page writes all roles of its own together)
        stored = names[next((lv for lv, src in zip(found.levels, found.sources, strict=True)
                             if not src.startswith(_SOURCE)), found.levels[0])]
        return LabelError(
            f"item {found.item_id!r}: answers {letters} are the same text "
            f"({found.text[:60]!r}), one answer with one judgment, and it was judged "
            f"{stored!r} elsewhere (an import, the terminal or the API): give it "
            f"{stored!r}, or ask whoever runs the session to change that judgment; "
            f"your answer was not saved")

    @staticmethod
    def _label_of(c: Any, idx: int) -> tuple[int, str] | None:
        """``(label, source)`` of one row's session label, or None."""
        row = c.execute("SELECT label, source FROM labels WHERE idx = ?", (idx,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def _current(self, c: Any, idx: int, role: str) -> tuple[int, str] | None:
        """``(label, source)`` of one row's stored label for ``role`` (the target's, or a
        compared target's judgment), or None."""
        if role == "target":
            return self._label_of(c, idx)
        j = self.s.store.judgments_at(role, [idx]).get(idx)  # (this item's: not all)
        return None if j is None else (j.label, j.source)

    def _write(self, c: Any, idx: int, item_id: str, role: str, value: int | None,
               source: str) -> bool:
        """Remove ``role``'s label of the item where its answers settle none; True where
        ``value`` is to be written (:meth:`_settle` writes every role's together)."""
        cur = self._current(c, idx, role)
        if cur is not None and not cur[1].startswith(_SOURCE):
            return False  # set elsewhere (an import, the terminal): never the page's to change
        if value is None:
            if cur is not None:
                self.s.undo(LabelChange(0, idx, item_id, None, cur[0], "remove", cur[1],
                                        "", role), source=f"{_SOURCE} (unsettled)")
            return False
        return cur is None or cur[0] != value

    # ------------------------------------------------------------------ adjudication

    def disagreements(self) -> list[Disagreement]:
        """Items whose annotators disagree, in draw order (settled or not)."""
        return agreement(self.s, n_boot=0).disagreements  # type: ignore[return-value]
