"""The write mark of a session file: telling a file whose content was put back (a copy
written over it in place) from one that other processes wrote to.

A file moved over an open session is a new file (another inode), which
:func:`~activetest.session.store_errors.file_identity` tells. A file COPIED over it
(``cp backup.db s.db`` while ``label`` runs: the same inode, its content replaced) is
not: the open connection reads the copy's pages as its own, and the answers given after
it went into the restored content without a word (QA). So every write transaction of
:class:`~activetest.session.store.SessionStore` advances a mark kept in the file itself,
``meta`` row ``writes`` = ``"<count> <token>"`` (the count of writes since the mark was
first written, and a random token of the last one), and each store remembers the mark it
last saw (when it opened the file, or wrote it). Inside the next write transaction (the
write lock held, so no other writer moves it meanwhile) the file's mark must be where
this store left it, or later (other processes' writes: the labelling server and a
``label`` run on one file are legal), and the label changes this store wrote must all
still be in the file's history; otherwise the content was put back
(:func:`check_mark`): an older state of this session (a backup), another session, or a
copy of this session that went its own way.

Not seen: a copy of the same state (nothing is lost then), and writers that do not
advance the mark (an older activetest; ``sqlite3`` by hand), whose writes are taken as
the file's own. A copy written over the file WHILE a write transaction runs (between its
check and its commit) is not seen either: ``cp`` takes no SQLite lock.
"""

from __future__ import annotations

import contextlib
import csv
import secrets
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from activetest.formats.sheets import PUT_BACK_COLUMNS
from activetest.session.store_errors import SessionFileReplacedError
from activetest.session.store_rows import Annotation, LabelChange

__all__ = ["SHEET_COLUMNS", "KeptAnswers", "WriteMark", "advance_mark", "check_mark",
           "mark_gap", "put_back_error", "read_mark", "unsaved_annotations", "unsaved_changes"]

#: the ``meta`` key of the mark
MARK_KEY = "writes"


@dataclass(frozen=True)
class WriteMark:
    """Where a session file's writes stand.

    Attributes:
        created: the file's ``meta`` ``created`` (the session's creation instant: the
            same in every copy of one session, different for another session).
        count: writes made since the mark was first written (0: none yet; -1: a mark
            that does not read as one).
        token: the last write's random token ("" before any).
    """

    created: str | None
    count: int
    token: str


class KeptAnswers:
    """The ``annotations`` rows (each annotator's answer; an answer undone since as its
    row marked undone, :attr:`Annotation.undone`) a store committed, in the order
    written: what :func:`unsaved_annotations` looks for in a file put back.

    Each commit costs what it wrote, not what was kept before it (a long labelling
    page kept thousands: rebuilding the list of all of them at each commit made an
    answer cost O(all answers before it)). An undo adds its undone rows, never drops
    any: the sheet beside a file put back carries both, so that ``import`` takes back
    an answer the file still holds standing.

    Kept whole, as the label changes are: a file can be put back with any older content
    (a backup made before this process opened it), and only the file's content, read
    when a put-back is seen, tells which of them it no longer holds.
    """

    def __init__(self) -> None:
        self._rows: list[Annotation] = []

    def commit(self, rows: Iterable[Annotation]) -> None:
        """Keep ``rows`` (written by a transaction that committed)."""
        self._rows.extend(rows)

    def rows(self) -> list[Annotation]:
        """The rows kept, in the order written."""
        return list(self._rows)


def read_mark(conn: sqlite3.Connection) -> WriteMark | None:
    """The file's mark as ``conn`` reads it now (None: no ``meta`` table to read)."""
    try:
        rows = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('created', ?)",
                                 (MARK_KEY,)).fetchall())
    except sqlite3.Error:
        return None
    count, _, token = str(rows.get(MARK_KEY) or "0 ").partition(" ")
    return WriteMark(rows.get("created"), int(count) if count.isdigit() else -1, token)


def advance_mark(conn: sqlite3.Connection, mark: WriteMark) -> WriteMark:
    """Write the mark after ``mark`` (inside the write transaction); returns it."""
    new = WriteMark(mark.created, max(mark.count, 0) + 1, secrets.token_hex(8))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                 (MARK_KEY, f"{new.count} {new.token}"))
    return new


def _history_holds(conn: sqlite3.Connection, change: LabelChange) -> bool:
    """Whether the file's history still holds ``change`` (its row, item and time)."""
    table = "label_history" if change.role == "target" else "judgment_history"
    try:
        row = conn.execute(f"SELECT idx, at FROM {table} WHERE id = ?",
                           (int(change.id),)).fetchone()
    except sqlite3.Error:  # no such table: not this session's history
        return False
    return row is not None and int(row[0]) == change.index and row[1] == change.at


def unsaved_changes(conn: sqlite3.Connection, written: Sequence[LabelChange]
                    ) -> list[LabelChange]:
    """Those of the label changes ``written`` (committed by this process) that the file's
    history no longer holds."""
    return [c for c in written if not _history_holds(conn, c)]


def _latest(written: Sequence[Annotation]) -> list[Annotation]:
    """Each ``annotations`` row of ``written`` once, as the last record of it left it
    (an answer, then the same row undone: the undone one), in the order of those."""
    last: dict[int, Annotation] = {}
    for a in written:
        last.pop(a.id, None)
        last[a.id] = a
    return list(last.values())


def unsaved_annotations(conn: sqlite3.Connection, written: Sequence[Annotation]
                        ) -> list[Annotation]:
    """Those of the ``annotations`` rows ``written`` (committed by this process: each
    annotator's answer, and each answer undone, :attr:`Annotation.undone`; the last
    record of a row counts) that the file no longer holds so: its row, with the same
    item, annotator, level and time, and undone where the record is (an answer this
    process gave may have been undone since by another: still held)."""
    out = []
    for a in _latest(written):
        try:
            row = conn.execute("SELECT idx, annotator, label, at, undone FROM annotations "
                               "WHERE id = ?", (int(a.id),)).fetchone()
        except sqlite3.Error:  # no such table: none of the page's answers is held
            row = None
        if row is None or (int(row[0]), row[1], int(row[2]), row[3]) != (
                a.index, a.annotator, a.label, a.at) or (a.undone is not None
                                                         and row[4] is None):
            out.append(a)
    return out


def check_mark(conn: sqlite3.Connection, seen: WriteMark | None,
               written: Sequence[LabelChange]) -> tuple[WriteMark | None, str]:
    """Compare the file's mark (read inside the write transaction) with the one this
    store last saw, ``seen``, and its own committed label changes ``written``.

    Returns:
        (the file's mark, "") where the file is the one this store wrote to (or none can
        be told: no mark seen), else (the file's mark, why it is not: a phrase).
    """
    # SQLite keeps a connection's pages between transactions and trusts them for as long
    # as no SQLite writer changed the journal's index, which a copy over the file does
    # not: the pages it holds would be read as the file's (the old mark, found "as left")
    # and written back over the copy. Dropped here (they are all clean between writes).
    conn.execute("PRAGMA shrink_memory")
    now = read_mark(conn)
    if seen is None or now is None:
        return now, ""
    if why := mark_gap(now, seen):
        return now, why
    if written and not _history_holds(conn, written[-1]):
        return now, "a copy of this session that was written to elsewhere"
    return now, ""


def mark_gap(now: WriteMark, seen: WriteMark | None) -> str:
    """Why a file whose mark is ``now`` is not the one whose mark this store last saw,
    ``seen``, as far as the two marks tell ("" where they do not: the same mark, or a
    later one of the same session; :func:`check_mark` then also reads the history)."""
    if seen is None:
        return ""
    if now.created != seen.created:
        return "another session's content (made at another time)"
    if now.count < seen.count:
        return (f"an older state of this session (a backup: its content is "
                f"{seen.count - now.count} write(s) behind what this command saw)")
    if now.count == seen.count and now.token != seen.token:
        return "a copy of this session that was written to elsewhere"
    return ""


def _sheet_name(p: Path) -> Path:
    """A free name beside ``p``: ``<stem>.unsaved-<UTC time>.csv``."""
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for k in range(1000):
        cand = p.with_name(f"{p.stem}.unsaved-{stamp}{'' if k == 0 else f'-{k}'}.csv")
        if not cand.exists():
            return cand
    return p.with_name(f"{p.stem}.unsaved-{stamp}-{secrets.token_hex(4)}.csv")


#: The columns of the sheet of what a command saved that the file no longer holds
#: (:func:`put_back_error`), as ``activetest import`` reads them (a file with this
#: header, as a whole, is read as that sheet: :data:`activetest.formats.sheets.PUT_BACK_HEADERS`).
SHEET_COLUMNS = PUT_BACK_COLUMNS


def _sheet_rows(unsaved: Sequence[LabelChange], answers: Sequence[Annotation]
                ) -> list[list[object]]:
    """The sheet's rows: each item's label (and each compared answer's judgment) as the
    last of the ``unsaved`` changes left it (one row each: two rows of one item that
    differ would be a disagreement to ``import``), then each annotator's answer of
    ``answers`` with its kind (``answer``, ``adjudication``, ...). A label whose item has
    answers standing in the sheet is marked ``ground_truth``: it is what the command
    settled from them (an adjudication, ``--resolve``), and it settles the item again on
    ``import``, whatever the answers say.

    What was taken back is a row too, never left out (an undone label left out, or
    written with no label at all, was back after ``import`` where the file put back
    held it): a label the last change removed (an undo: ``new`` None) is written with
    the label it removed, and an answer undone with the answer, each with ``undone``
    the time of the undo; ``import`` takes them back where the file holds them. That
    label is in ``undone_label``, the ``label`` cell left empty: an activetest from
    before the ``undone`` column, which reads no ``undone``, skips the row as one not
    labelled yet (with the label in ``label`` it added it back as a label, QA)."""
    last: dict[tuple[str, str], LabelChange] = {}
    for c in unsaved:
        last.pop((c.item_id, c.role), None)  # (in the order of the last change)
        last[(c.item_id, c.role)] = c
    voted = {(a.item_id, a.role) for a in answers if a.undone is None}

    def whose(role: str) -> str:
        return "" if role == "target" else role.removeprefix("compare:")

    def label_row(key: tuple[str, str], c: LabelChange) -> list[object]:
        if c.new is None:  # taken back: the label it removed, and when
            return [c.item_id, "", c.source, c.at, whose(c.role), "", "", "",
                    "" if c.old is None else c.at, "" if c.old is None else int(c.old)]
        return [c.item_id, int(c.new), c.source, c.at, whose(c.role), "",
                "true" if key in voted else "", "", "", ""]

    rows = [label_row(key, c) for key, c in last.items()]
    rows += [[a.item_id, "" if a.undone else int(a.label), f"{a.kind} ({a.annotator})",
              a.at, whose(a.role), a.annotator, "", a.kind, a.undone or "",
              int(a.label) if a.undone else ""] for a in answers]
    return rows


def put_back_error(p: Path, why: str, unsaved: Sequence[LabelChange],
                   answers: Sequence[Annotation] = ()) -> SessionFileReplacedError:
    """The refusal to write into a session file whose content was put back (``why``).

    The label changes this process wrote that the file no longer holds (``unsaved``),
    and the annotators' answers likewise (``answers``: the labelling page's, an import's
    annotators' labels), are written beside it as a sheet
    ``<stem>.unsaved-<time>.csv`` (:data:`SHEET_COLUMNS`: ``item_id``, ``label`` as a
    class number counted from 0, ``source``, ``time``; ``answer_of``: the compared answer
    a judgment is of, empty for the session's labels; ``annotator``: whose answer, empty
    for a label; ``ground_truth``: ``true`` on a label whose item has answers in the
    sheet; ``annotation_kind``: an answer's kind as the ``annotations`` table keeps it,
    empty for a label; ``undone``: when a label or an answer was taken back, empty where
    it stands; ``undone_label``: the label taken back, whose ``label`` cell is then
    empty; :func:`_sheet_rows`), which ``activetest import S.db SHEET --label-base 0``
    reads back: the labels, each answer as it was kept (its kind and time), and each
    undo (:mod:`activetest.session.put_back_rows`)."""
    kept = "no label this command saved is missing from it"
    if unsaved or answers:
        sheet = _sheet_name(p)
        undone = sum(a.undone is not None for a in answers)
        what = f"{len(unsaved)} label change(s)" + (
            f" and {len(answers) - undone} annotator answer(s)" if len(answers) > undone
            else "") + (
            f" and {undone} undone answer(s)" if undone else "")
        try:
            with sheet.open("w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(SHEET_COLUMNS)
                w.writerows(_sheet_rows(unsaved, answers))
            kept = (f"the {what} this command saved that it no longer holds are kept in "
                    f"{sheet} (`activetest import {p} {sheet} --label-base 0` puts them "
                    f"back)")
        except OSError as exc:
            with contextlib.suppress(OSError):
                sheet.unlink()
            kept = (f"the {what} this command saved that it no longer holds could not be "
                    f"kept in {sheet} ({exc}): "
                    + "; ".join([*(f"{c.item_id}={c.new}" if c.new is not None else
                                   f"{c.item_id}={c.old} undone" for c in unsaved[:50]),
                                 *(f"{a.item_id}={a.label} ({a.kind} of {a.annotator}"
                                   f"{', undone' if a.undone else ''})"
                                   for a in answers[:50])]))
    return SessionFileReplacedError(
        f"{p}: the session file's content was replaced while this command had it open "
        f"(a file copied over it: {why}); what it was saving was not saved; {kept}")
