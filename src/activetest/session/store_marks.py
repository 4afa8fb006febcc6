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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from activetest.session.store_errors import SessionFileReplacedError
from activetest.session.store_rows import LabelChange

__all__ = ["WriteMark", "advance_mark", "check_mark", "put_back_error", "read_mark",
           "unsaved_changes"]

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
    if now.created != seen.created:
        return now, "another session's content (made at another time)"
    if now.count < seen.count:
        return now, (f"an older state of this session (a backup: its content is "
                     f"{seen.count - now.count} write(s) behind what this command saw)")
    if now.count == seen.count and now.token != seen.token:
        return now, "a copy of this session that was written to elsewhere"
    if written and not _history_holds(conn, written[-1]):
        return now, "a copy of this session that was written to elsewhere"
    return now, ""


def _sheet_name(p: Path) -> Path:
    """A free name beside ``p``: ``<stem>.unsaved-<UTC time>.csv``."""
    from datetime import datetime, timezone

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for k in range(1000):
        cand = p.with_name(f"{p.stem}.unsaved-{stamp}{'' if k == 0 else f'-{k}'}.csv")
        if not cand.exists():
            return cand
    return p.with_name(f"{p.stem}.unsaved-{stamp}-{secrets.token_hex(4)}.csv")


def put_back_error(p: Path, why: str, unsaved: Sequence[LabelChange]
                   ) -> SessionFileReplacedError:
    """The refusal to write into a session file whose content was put back (``why``).

    The label changes this process wrote that the file no longer holds (``unsaved``)
    are written beside it as a sheet ``<stem>.unsaved-<time>.csv`` (``item_id``,
    ``label`` as a class number counted from 0, ``source``, ``time``; ``answer_of``:
    the compared answer a judgment is of, empty for the session's labels), which
    ``activetest import S.db SHEET --label-base 0`` reads back."""
    kept = "no label this command saved is missing from it"
    if unsaved:
        sheet = _sheet_name(p)
        try:
            with sheet.open("w", newline="", encoding="utf-8") as f:
                w = csv.writer(f)
                w.writerow(["item_id", "label", "source", "time", "answer_of"])
                for c in unsaved:
                    w.writerow([c.item_id, "" if c.new is None else int(c.new), c.source,
                                c.at, "" if c.role == "target" else
                                c.role.removeprefix("compare:")])
            kept = (f"the {len(unsaved)} label change(s) this command saved that it no "
                    f"longer holds are kept in {sheet} (`activetest import {p} {sheet} "
                    f"--label-base 0` puts the labels back)")
        except OSError as exc:
            with contextlib.suppress(OSError):
                sheet.unlink()
            kept = (f"the {len(unsaved)} label change(s) this command saved that it no "
                    f"longer holds could not be kept in {sheet} ({exc}): "
                    + "; ".join(f"{c.item_id}={c.new}" for c in unsaved[:50]))
    return SessionFileReplacedError(
        f"{p}: the session file's content was replaced while this command had it open "
        f"(a file copied over it: {why}); what it was saving was not saved; {kept}")
