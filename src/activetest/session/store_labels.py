"""The labels part of :class:`activetest.session.store.SessionStore`: each item's current
label and every change to it (never deleted), compared targets' judgments, graded
sessions' answers, and the estimates recorded over time.

A mixin: its methods use the store's connection, reads and transactions
(:mod:`activetest.session.store`), and are the store's own methods to every caller.
Each label answered is its own transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from activetest.session.store_errors import SessionError
from activetest.session.store_rows import EstimateRow, LabelChange, StoredLabel, now
from activetest.session.store_rows import dumps as _dumps

__all__ = ["LabelsMixin"]


def _opt(x: float | None) -> float | None:
    return None if x is None else float(x)


class LabelsMixin:
    """:class:`~activetest.session.store.SessionStore`'s labels (module docstring)."""

    # ------------------------------------------------------------------ labels

    def labels(self, *, check: bool = True) -> dict[int, StoredLabel]:
        """Current labels by item row.

        Raises:
            DamagedSessionError: (with ``check``) a stored label that is not a class
                of the task; ``check=False`` reads it as it is (to replace it).
        """
        rows = self._read("SELECT l.idx, i.item_id, l.label, l.source, l.created, l.updated "
                          "FROM labels l CROSS JOIN items i ON i.idx = l.idx")
        if check:
            return self._checked(rows, "label")
        return {int(i): StoredLabel(int(i), iid, int(y), src, cr, up)
                for i, iid, y, src, cr, up in rows}

    def labels_at(self, rows: Iterable[int], *, check: bool = True) -> dict[int, StoredLabel]:
        """:meth:`labels` of pool ``rows`` only (those labelled), read by the labels'
        key: what one item's question needs (the labelling page's answer), without
        reading every label (``check``: :meth:`labels`'s, of these rows).

        Raises:
            DamagedSessionError: (with ``check``) a stored label of these rows that is
                not a class of the task.
        """
        rows = list(rows)
        got = self._rows_at("SELECT l.idx, i.item_id, l.label, l.source, l.created, "
                            "l.updated FROM labels l CROSS JOIN items i ON i.idx = l.idx "
                            "WHERE l.idx IN", (), rows)
        if got is None:
            want = {int(r) for r in rows}
            return {i: v for i, v in self.labels(check=check).items() if i in want}
        if check:
            return self._checked(got, "label")
        return {int(i): StoredLabel(int(i), iid, int(y), src, cr, up)
                for i, iid, y, src, cr, up in got}

    def label_values(self) -> dict[int, int]:
        """Current labels as ``{item row: class}`` (:meth:`labels` without the item
        ids, sources and times: no join on the items), each checked to be a class of
        the task as :meth:`labels` checks them.

        Raises:
            DamagedSessionError: a stored label that is not a class of the task (the
                message names the item, as :meth:`labels`'s does).
        """
        rows = self._read("SELECT idx, label FROM labels")
        if not all(self._is_class(y) for _, y in rows):
            self.labels()  # raises, naming the item
        return {int(i): int(y) for i, y in rows}

    def n_labelled(self) -> int:
        """Number of labelled items."""
        return int(self._read("SELECT COUNT(*) FROM labels")[0][0])

    def set_labels(self, answers: Iterable[tuple[int, int] | tuple[int, int, str]], source: str,
                   *, overwrite: bool = False, confirm: bool = False) -> list[LabelChange]:
        """Write labels ``(row, class)`` in ONE transaction; returns the changes made.

        An answer may carry its own source as a third element (default ``source``).

        An identical existing label is left alone (no change recorded), unless
        ``confirm`` and it came from another source: that source then owns it (a
        ``"confirm"`` change; an import agreeing with a label given on the labelling
        page, which the page could otherwise take back when its annotators disagree
        later: QA). A different existing label is replaced only with ``overwrite``
        (the old value stays in the history); otherwise nothing at all is written.

        Raises:
            SessionError: a conflicting label without ``overwrite``.
        """
        return self._set("target", answers, source, overwrite, confirm)

    @staticmethod
    def _slot(role: str) -> tuple[str, str, tuple[str, ...], tuple[Any, ...]]:
        """Where ``role``'s labels live: (table, history table, key columns before
        ``idx``, their values). The session target's are the ``labels``; a compared
        answer's judgments are the ``judgments`` of its role."""
        if role == "target":
            return "labels", "label_history", (), ()
        return "judgments", "judgment_history", ("role",), (role,)

    def _set(self, role: str, answers: Iterable[tuple[int, int] | tuple[int, int, str]],
             source: str, overwrite: bool, confirm: bool = False) -> list[LabelChange]:
        table, _, keys, vals = self._slot(role)
        where = " AND ".join(f"{k} = ?" for k in (*keys, "idx"))
        cols = ", ".join((*keys, "idx"))
        at = now()
        changes: list[LabelChange] = []
        with self.transaction() as c:
            for answer in answers:
                idx, label = int(answer[0]), int(answer[1])
                src = str(answer[2]) if len(answer) > 2 else source  # type: ignore[misc]
                row = c.execute(f"SELECT label, source FROM {table} WHERE {where}",
                                (*vals, idx)).fetchone()
                old = None if row is None else int(row[0])
                if old == label:
                    if confirm and str(row[1]) != src:
                        c.execute(f"UPDATE {table} SET source = ?, updated = ? WHERE {where}",
                                  (src, at, *vals, idx))
                        changes.append(self._history(c, role, idx, old, label, "confirm", src,
                                                     at))
                    continue
                if old is not None and not overwrite:
                    iid = c.execute("SELECT item_id FROM items WHERE idx = ?",
                                    (idx,)).fetchone()[0]
                    what = ("" if role == "target" else
                            f": the answer of {role.removeprefix('compare:')}")
                    raise SessionError(f"item {iid!r}{what} already has label {old}, not "
                                       f"{label}; to replace it, import it with --overwrite "
                                       f"(`activetest import`; overwrite=True in Python); the "
                                       f"old label is kept in the history")
                if old is None:
                    c.execute(f"INSERT INTO {table} ({cols}, label, source, created, updated) "
                              f"VALUES ({', '.join('?' * (len(keys) + 5))})",
                              (*vals, idx, label, src, at, at))
                else:
                    c.execute(f"UPDATE {table} SET label = ?, source = ?, updated = ? "
                              f"WHERE {where}", (label, src, at, *vals, idx))
                action = "add" if old is None else "change"
                changes.append(self._history(c, role, idx, old, label, action, src, at))
        return changes

    def _history(self, c: sqlite3.Connection, role: str, idx: int, old: int | None,
                 new: int | None, action: str, source: str, at: str) -> LabelChange:
        _, hist, keys, vals = self._slot(role)
        cols = ", ".join((*keys, "idx"))
        cur = c.execute(f"INSERT INTO {hist} ({cols}, old_label, new_label, action, source, at) "
                        f"VALUES ({', '.join('?' * (len(keys) + 6))})",
                        (*vals, idx, old, new, action, source, at))
        iid = c.execute("SELECT item_id FROM items WHERE idx = ?", (idx,)).fetchone()[0]
        change = LabelChange(int(cur.lastrowid or 0), idx, iid, old, new, action, source, at,
                             role)
        self._writing.append(change)  # (the store's: kept once committed)
        return change

    def revert(self, change: LabelChange, source: str,
               class_names: Sequence[str] = ()) -> LabelChange:
        """Undo one change: restore ``change.old`` (None: remove the label). One transaction.
        A change of a compared answer's judgment (``change.role``) is undone in its table.
        ``class_names`` name the labels in the refusal (else their indices).

        Raises:
            SessionError: the item's label is no longer ``change.new`` (changed since).
        """
        table, _, keys, vals = self._slot(change.role)
        where = " AND ".join(f"{k} = ?" for k in (*keys, "idx"))
        key = (*vals, change.index)
        at = now()
        with self.transaction() as c:
            row = c.execute(f"SELECT label FROM {table} WHERE {where}", key).fetchone()
            cur = None if row is None else int(row[0])
            if cur != change.new:
                def named(y: int | None) -> str:  # QA: "now has label None, not 1"
                    if y is None:
                        return "no label"
                    shown = class_names[y] if 0 <= y < len(class_names) else y
                    return f"label {shown!r}"

                raise SessionError(f"cannot undo: item {change.item_id!r} now has "
                                   f"{named(cur)}, where this change left {named(change.new)} "
                                   f"(changed since)")
            if change.old is None:
                c.execute(f"DELETE FROM {table} WHERE {where}", key)
            else:
                c.execute(f"UPDATE {table} SET label = ?, source = ?, updated = ? WHERE {where}",
                          (change.old, source, at, *key))
            return self._history(c, change.role, change.index, cur, change.old, "undo", source,
                                 at)

    def label_history(self, index: int | None = None) -> list[LabelChange]:
        """Every label change (of one item row, or all), oldest first."""
        sql = ("SELECT h.id, h.idx, i.item_id, h.old_label, h.new_label, h.action, h.source, h.at "
               "FROM label_history h CROSS JOIN items i ON i.idx = h.idx")
        params: tuple[Any, ...] = ()
        if index is not None:
            sql += " WHERE h.idx = ?"
            params = (int(index),)
        return [LabelChange(int(a), int(b), c, d, e, f, g, h)
                for a, b, c, d, e, f, g, h in self._read(sql + " ORDER BY h.id", params)]

    def last_label_change(self) -> int:
        """A counter that grows with every label change and every judgment of a
        compared answer (the latest ids of both histories, summed; 0 before any)."""
        row = self._read("SELECT MAX(id) FROM label_history")
        n = int(row[0][0] or 0) if row else 0
        if self.schema_version >= 3:
            row = self._read("SELECT MAX(id) FROM judgment_history")
            n += int(row[0][0] or 0) if row else 0
        return n

    # ------------------------------------------------- judgments of compared answers

    def judgments(self, role: str) -> dict[int, StoredLabel]:
        """Pool row -> the judgment of ``role``'s answer (``compare:<spec>``); empty
        for files before schema 3."""
        if self.schema_version < 3:
            return {}
        return self._checked(
            self._read("SELECT j.idx, i.item_id, j.label, j.source, j.created, j.updated "
                       "FROM judgments j CROSS JOIN items i ON i.idx = j.idx WHERE j.role = ?",
                       (role,)), f"judgment of {role.removeprefix('compare:')}'s answer")

    def judgments_at(self, role: str, rows: Iterable[int]) -> dict[int, StoredLabel]:
        """:meth:`judgments` of ``role`` at pool ``rows`` only (those judged), read by the
        judgments' key (role, row)."""
        rows = list(rows)
        if self.schema_version < 3:
            return {}
        got = self._rows_at("SELECT j.idx, i.item_id, j.label, j.source, j.created, "
                            "j.updated FROM judgments j CROSS JOIN items i ON i.idx = j.idx "
                            "WHERE j.role = ? AND j.idx IN", (role,), rows)
        if got is None:
            want = {int(r) for r in rows}
            return {i: v for i, v in self.judgments(role).items() if i in want}
        return self._checked(got, f"judgment of {role.removeprefix('compare:')}'s answer")

    def set_judgments(self, role: str, answers: Iterable[tuple[int, int] | tuple[int, int, str]],
                      source: str, *, overwrite: bool = False,
                      confirm: bool = False) -> list[LabelChange]:
        """Write judgments ``(row, level)`` of ``role``'s answers in ONE transaction.

        The same rules as :meth:`set_labels` (``confirm`` too): an identical judgment is
        left alone, a
        different one is replaced only with ``overwrite`` (the old one stays in the
        history); the changes carry ``role`` (:meth:`revert` undoes them).

        Raises:
            SessionError: a conflicting judgment without ``overwrite``, or a file
                before schema 3 (it has no compared answers).
        """
        if self.schema_version < 3:
            raise SessionError("this session file predates compared answers (schema "
                               f"{self.schema_version}); create a new session to compare")
        return self._set(role, answers, source, overwrite, confirm)

    def judgment_history(self, role: str | None = None) -> list[LabelChange]:
        """Every change to compared answers' judgments (of one role, or all), oldest first."""
        if self.schema_version < 3:
            return []
        sql = ("SELECT h.id, h.idx, i.item_id, h.old_label, h.new_label, h.action, h.source, h.at,"
               " h.role FROM judgment_history h CROSS JOIN items i ON i.idx = h.idx")
        params: tuple[Any, ...] = ()
        if role is not None:
            sql += " WHERE h.role = ?"
            params = (role,)
        return [LabelChange(int(a), int(b), c, d, e, f, g, h, r)
                for a, b, c, d, e, f, g, h, r in self._read(sql + " ORDER BY h.id", params)]

    # ------------------------------------------------------------------ estimates

    def put_answers(self, role: str, rows: Sequence[int], answers: Sequence[str],
                    references: Sequence[Sequence[str]], info: Sequence[Mapping[str, Any]],
                    ) -> None:
        """Store (or replace) answers of ``role`` for pool rows (one transaction)."""
        if not len(rows) == len(answers) == len(references) == len(info):
            raise ValueError("rows, answers, references and info must have the same length")
        with self.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO answers (role, idx, answer, refs, info) "
                "VALUES (?, ?, ?, ?, ?)",
                ((role, int(i), str(a), _dumps(list(r)), _dumps(dict(x)))
                 for i, a, r, x in zip(rows, answers, references, info, strict=True)))

    def answers(self, role: str = "target") -> dict[int, tuple[str, tuple[str, ...],
                                                               dict[str, Any]]]:
        """Pool row -> (answer, references, details) of ``role`` (empty for schema 1)."""
        if self.schema_version < 2:
            return {}
        rows = self._read("SELECT idx, answer, refs, info FROM answers WHERE role = ?", (role,))
        return {int(i): (str(a), tuple(json.loads(r)), json.loads(x)) for i, a, r, x in rows}

    def answers_at(self, role: str, rows: Iterable[int]) -> dict[int, tuple[
            str, tuple[str, ...], dict[str, Any]]]:
        """:meth:`answers` of ``role`` at pool ``rows`` only (those with an answer), read
        by the answers' key (role, row): one item shown reads its own answers, not every
        item's (a paired session of 20,000 items decoded 40,000 answers a shown item)."""
        rows = list(rows)
        if self.schema_version < 2:
            return {}
        got = self._rows_at("SELECT idx, answer, refs, info FROM answers WHERE role = ? AND "
                            "idx IN", (role,), rows)
        if got is None:
            want = {int(r) for r in rows}
            return {i: v for i, v in self.answers(role).items() if i in want}
        return {int(i): (str(a), tuple(json.loads(r)), json.loads(x)) for i, a, r, x in got}

    def add_estimate(self, *, n_labels: int, metric: str, method: str, estimate: float,
                     std: float | None = None, low: float | None = None,
                     high: float | None = None, level: float | None = None,
                     details: Mapping[str, Any] | None = None) -> None:
        """Record one estimate (one transaction)."""
        with self.transaction() as c:
            c.execute("INSERT INTO estimates (at, n_labels, metric, method, estimate, std, low, "
                      "high, level, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (now(), int(n_labels), metric, method, float(estimate),
                       _opt(std), _opt(low), _opt(high), _opt(level),
                       _dumps(dict(details or {}))))

    def estimates(self) -> list[EstimateRow]:
        """All recorded estimates, oldest first."""
        return [EstimateRow(int(r[0]), r[1], int(r[2]), r[3], r[4], float(r[5]), r[6], r[7], r[8],
                            r[9], json.loads(r[10]))
                for r in self._read("SELECT id, at, n_labels, metric, method, estimate, std, low, "
                                    "high, level, details FROM estimates ORDER BY id")]
