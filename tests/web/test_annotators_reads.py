"""The labelling page reads only the item it works on (activetest.session.annotators):
an answer's settling, the same-text check, the item shown and the label checks read
that item's rows by the tables' keys, not every answer, label and judgment of the
session; an undo with nothing to undo writes nothing. On real session files, against
the whole-table computation they replace."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from activetest.session import store as store_module
from activetest.session.annotators import Annotators
from activetest.session.compare_graded import (
    AlikeConflict,
    JudgedAnswers,
    alike_conflict,
    compare_role,
    same_answer,
)
from activetest.session.store_marks import read_mark
from activetest.session.workflow import Session
from tests.web.web_support import classification, graded


def _whole_alike_conflict(store: Any, rows: list[int]) -> AlikeConflict | None:
    """:func:`alike_conflict` as it was: every answer and judgment of the session read
    (:class:`JudgedAnswers` of the whole store), then ``rows`` looked up in it."""
    judged = JudgedAnswers(store)
    roles = ["target", *[r for r in judged.answers if r != "target"]]
    for row in sorted(set(rows)):
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


def _check_rows_read_as_whole(s: Session, rows: list[int]) -> None:
    """Each read of some rows equals the whole-table read filtered to them: one row at a
    time, a few, ``rows``, and every row of the pool (undrawn and unlabelled rows among
    them)."""
    store = s.store
    spec = s.compared_targets()[0]
    role = compare_role(spec)
    whole_labels = store.labels()
    whole_judged = store.judgments(role)
    whole_answers = {r: store.answers(r) for r in ("target", role)}
    steps = {a.index: a.step for a in store.acquisitions()}
    every = list(range(store.n_items()))
    for some in [[r] for r in rows] + [rows[:5], rows, every]:
        assert store.labels_at(some) == {r: whole_labels[r] for r in some if r in whole_labels}
        assert store.judgments_at(role, some) == {
            r: whole_judged[r] for r in some if r in whole_judged}
        for r in ("target", role):
            assert store.answers_at(r, some) == {
                x: whole_answers[r][x] for x in some if x in whole_answers[r]}
        assert store.acquisition_steps(some) == {r: steps[r] for r in some if r in steps}
        assert alike_conflict(store, some) == _whole_alike_conflict(store, some)
        part, full = JudgedAnswers(store, some), JudgedAnswers(store)
        for r in some:
            for who in ("target", spec):
                assert part.answer(who, r) == full.answer(who, r)
            assert part.level(spec, r) == full.level(spec, r)
        for r in ("target", role):  # the item shown: its prompt fields and answers
            shown = s._display_items(some, r)
            refs = whole_answers["target"]
            ids = store.ids_at(some)
            assert [(x.id, x.fields["answer"], x.fields["references"]) for x in shown] == [
                (ids[x], whole_answers[r].get(x, ("",))[0],
                 " | ".join(refs.get(x, ("", ()))[1])) for x in some]


def test_per_item_reads_equal_the_whole_table_on_a_paired_session_of_many_annotators(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three annotators on a paired session (overlap: two asked for half the items),
    answers that disagree, answers undone and answered again, an adjudicator, a
    compared answer judged elsewhere (the API), and a same-text pair judged apart by a
    write past the checks: after each step every read of some rows (one row, all rows;
    a few, all drawn rows, in chunks of 3; past 20 rows, every row of the pool: the
    whole table filtered) equals the whole-table
    computation, and the settled labels are what the page's rules give."""
    monkeypatch.setattr(store_module, "_CHUNK", 3)  # chunked, and past 20: the fallback
    monkeypatch.setattr(store_module, "_AT_MOST", 20)
    made = graded(tmp_path, n=24, compare=True)
    with Session.open(made.db) as s:
        a = Annotators(s, overlap=0.5, reviews=2, batch=6, budget=12, resolve="skip")
        spec = s.compared_targets()[0]
        answered: dict[str, list[str]] = {}
        for turn in range(40):  # alice and bob answer the truth, carol the opposite
            who = ("alice", "bob", "carol")[turn % 3]
            it = a.next_item(who)
            if it is None:
                continue
            level = made.truth[it.item_id] if who != "carol" else 1 - made.truth[it.item_id]
            levels = [level] * len(it.answers)
            if it.answers[0] != it.answers[1]:  # the second answer: its own truth
                levels[1] = 1 - level if turn % 2 else level
            a.answer(who, it.item_id, levels)
            answered.setdefault(who, []).append(it.item_id)
            if turn % 7 == 6:  # an answer undone, then answered again
                back = a.undo(who)
                assert back is not None
                a.answer(who, back.item_id, levels)
            if turn % 11 == 10:
                assert a.undo(who) is not None  # undone, left undone
        rows = sorted(a.index for a in s.store.acquisitions())
        assert len(rows) == 12
        undone = [r for r in a.annotations(include_undone=True) if r.undone]
        assert undone  # answers undone are kept
        for d in a.disagreements()[:2]:  # an adjudicator settles two disagreements
            a.answer("dana", d.item_id, [0, 0], adjudicate=True)
        assert any(r.kind == "adjudication" for r in a.annotations())
        _check_rows_read_as_whole(s, rows + [r for r in range(24) if r not in rows][:3])
        assert len(rows) + 3 <= 20 < s.store.n_items()  # chunks of 3, and the fallback
        # a compared answer judged elsewhere (the API), then a same-text pair judged
        # apart past the checks (the store's own write): found alike by both
        apart = [r for r in rows if not same_answer(s.store.answers("target")[r][0],
                                                   s.store.answers(compare_role(spec))[r][0])]
        assert apart, "the session holds an item whose two answers differ"
        row = apart[0]
        was = s.store.judgments_at(compare_role(spec), [row]).get(row)
        s.judge(s.store.ids_at([row])[row], 1 if was is None else 1 - was.label,
                target=spec, overwrite=True)
        assert s.store.judgments_at(compare_role(spec), [row])[row].source == "api"
        same = [r for r in rows
                if same_answer(s.store.answers("target")[r][0],
                               s.store.answers(compare_role(spec))[r][0])]
        assert same, "the session holds an item whose two answers are the same text"
        row = same[0]
        s.store.set_labels([(row, 1)], "test", overwrite=True)
        s.store.set_judgments(compare_role(spec), [(row, 0)], "test", overwrite=True)
        assert alike_conflict(s.store, [row]) is not None
        _check_rows_read_as_whole(s, rows)


def test_undo_with_nothing_to_undo_writes_nothing(tmp_path: Path) -> None:
    """QA: ``u`` on the page with nothing to undo (a fresh annotator, or their answers
    all undone) committed a write transaction: it waited for the write lock and moved
    the file's write mark. Now it only reads: the mark, as this store and another
    connection read it, and the file's changes stay where they were."""
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=4)
        it = a.next_item("alice")
        assert it is not None
        a.answer("alice", it.item_id, [made.truth[it.item_id]])
        assert a.undo("alice") is not None  # the one answer undone: a write
        before = read_mark(s.store._conn)
        changes = s.store._conn.total_changes
        for who in ("alice", "nobody"):
            assert a.undo(who) is None
        assert read_mark(s.store._conn) == before
        assert s.store._conn.total_changes == changes
        other = sqlite3.connect(made.db)
        try:
            assert read_mark(other) == before
        finally:
            other.close()
        a.answer("alice", it.item_id, [made.truth[it.item_id]])  # a write still writes
        assert read_mark(s.store._conn) != before


def test_an_items_answers_are_read_by_the_index_made_where_a_file_lacks_it(
        tmp_path: Path) -> None:
    """The page reads one item's answers by ``annotations_idx`` (the item's row): a file
    whose page tables lack it (dropped here) gets it back when the page opens it for
    writing, and SQLite's plan for the item's answers then searches that index."""
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=4)
        it = a.next_item("alice")
        assert it is not None
        a.answer("alice", it.item_id, [made.truth[it.item_id]])
    con = sqlite3.connect(made.db)
    try:
        con.execute("DROP INDEX annotations_idx")
        con.commit()
    finally:
        con.close()

    def plan(db: Path) -> str:
        c = sqlite3.connect(db)
        try:
            return " ".join(str(r[-1]) for r in c.execute(
                "EXPLAIN QUERY PLAN SELECT id FROM annotations WHERE idx = ? AND undone IS "
                "NULL ORDER BY id", (0,)))
        finally:
            c.close()

    assert "annotations_idx" not in plan(made.db)
    with Session.open(made.db) as s:  # opened for writing: the index made again
        assert [r.item_id for r in Annotators(s).annotations()] == [it.item_id]
    assert "USING INDEX annotations_idx (idx=?)" in plan(made.db)
