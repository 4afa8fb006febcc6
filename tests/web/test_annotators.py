"""Several annotators on one session (activetest.session.annotators), on real session files:
the draws are the terminal flow's, claims keep two people off one item, overlap asks
for two, disagreements are settled by the import's rules or an adjudicator, a paired
comparison's order is seeded and stored, and agreement equals the field's code."""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.annotators import Annotators, agreement, progress
from activetest.session.records import LabelError
from activetest.session.store_errors import SessionError
from activetest.session.workflow import Session
from tests.web.web_support import classification, graded, same_text_item


def _label_all(a: Annotators, who: str, truth: dict[str, int], limit: int) -> list[str]:
    done = []
    while len(done) < limit:
        it = a.next_item(who)
        if it is None:
            break
        a.answer(who, it.item_id, [truth[it.item_id]])
        done.append(it.item_id)
    return done


@pytest.mark.parametrize("acquisition", ["adaptive", "ce"])
def test_one_annotator_draws_and_estimates_exactly_as_the_terminal_flow(
        tmp_path: Path, acquisition: str) -> None:
    made = classification(tmp_path / "web", acquisition=acquisition)
    ref = classification(tmp_path / "ref", acquisition=acquisition)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=10, budget=30)
        done = _label_all(a, "alice", made.truth, 100)
        assert len(done) == 30 and a.next_item("alice") is None  # the budget
        web_acq = [(x.item_id, x.q) for x in s.acquisitions()]
        web_est = s.estimate(record=False, progress=False, n_boot=50)
    with Session.open(ref.db) as s:  # `activetest label --n 10`, three times
        for _ in range(3):
            s.select(10)
            for p in s.pending():
                s.add_label(p.item_id, ref.truth[p.item_id], source="cli")
        ref_acq = [(x.item_id, x.q) for x in s.acquisitions()]
        ref_est = s.estimate(record=False, progress=False, n_boot=50)
    assert web_acq == ref_acq
    assert done == [i for i, _ in ref_acq]
    for m in ref_est.metrics:
        assert web_est.metrics[m].active.estimate == ref_est.metrics[m].active.estimate
        assert web_est.metrics[m].anytime == ref_est.metrics[m].anytime


def test_two_annotators_never_get_the_same_next_item(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=4, budget=20)
        seen: dict[str, str] = {}
        for _ in range(10):
            for who in ("alice", "bob"):
                it = a.next_item(who)
                assert it is not None
                assert it.item_id not in seen or seen[it.item_id] == who
                seen.setdefault(it.item_id, who)
                if len(seen) % 3:  # some held, some answered
                    a.answer(who, it.item_id, [made.truth[it.item_id]])
        rows = a.annotations()
        per_item: dict[str, set[str]] = {}
        for r in rows:
            per_item.setdefault(r.item_id, set()).add(r.annotator)
        assert all(len(v) == 1 for v in per_item.values())
        assert {r.item_id: r.label for r in rows} == {
            k: v for k, v in s.labels().items()}


def test_items_held_ahead_keep_the_terminal_draws_and_are_nobody_elses(tmp_path: Path) -> None:
    """The page holds the item after the one shown (``ahead``): one annotator still makes
    exactly the draws of `activetest label --n 10` run three times (a batch is drawn
    only once every item of the last one is answered), and what one holds ahead is
    never another's next item."""
    made = classification(tmp_path / "web")
    ref = classification(tmp_path / "ref")
    with Session.open(made.db) as s:
        a = Annotators(s, batch=10, budget=30)
        held = a.held("alice", ahead=1)
        assert len(held) == 2 and held[0].step < held[1].step
        assert a.held("alice", ahead=1) == held  # a reload: the same two, renewed
        b = a.next_item("bob")  # bob never gets what alice holds
        assert b is not None and b.step == held[1].step + 1
        a.release("bob")
        done, drawn_at = [], []
        while held:
            it = held[0]
            n_before = s.store.n_acquired()
            _, held = a.answer_and_held("alice", it.item_id, [made.truth[it.item_id]], 1)
            done.append(it.item_id)
            if s.store.n_acquired() > n_before:
                drawn_at.append(len(done))
        assert drawn_at == [10, 20]  # each batch drawn after the last label of the one before
        web_acq = [(x.item_id, x.q) for x in s.acquisitions()]
    with Session.open(ref.db) as s:
        for _ in range(3):
            s.select(10)
            for p in s.pending():
                s.add_label(p.item_id, ref.truth[p.item_id], source="cli")
        ref_acq = [(x.item_id, x.q) for x in s.acquisitions()]
    assert web_acq == ref_acq and done == [i for i, _ in ref_acq]


def test_answers_sent_together_are_one_commit_each_stored_or_refused_alone(
        tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s, Session.open(made.db) as terminal:
        a = Annotators(s, batch=5, budget=5)
        held = a.held("alice", ahead=2)
        x, y, z = (it.item_id for it in held)
        terminal.add_label(y, 0, source="cli")  # labelled elsewhere meanwhile
        results, nxt = a.answers_and_held(
            "alice", [(x, [made.truth[x]]), (y, [1]), (z, [made.truth[z]])], ahead=2)
        assert [len(r) if isinstance(r, list) else "refused" for r in results] == [
            1, "refused", 1]
        assert "meanwhile" in str(results[1])
        assert [it.item_id for it in nxt] == [a_.item_id for a_ in s.acquisitions()][3:5]
        # committed: the other connection sees both answers and the terminal's label
        assert terminal.labels() == {x: made.truth[x], y: 0, z: made.truth[z]}
        again, _ = a.answers_and_held("alice", [(x, [made.truth[x]])])  # a resend
        assert again == [[]]  # stored once


def test_an_answer_refused_after_its_label_was_written_leaves_no_change_behind(
        tmp_path: Path) -> None:
    """An answer of a batch (``answers_and_held``, what the page sends) refused after it
    wrote its label: the target's answer settled "correct", then refused as the same
    text as the compared answer an import judged "incorrect". Its savepoint rolled the
    file back, but the store still counted the label change as its own once the batch
    committed: the next answer was refused as a backup copied over the session (a false
    alarm, with a sheet of a label never saved). Now the next answer is stored, and a
    backup really copied over the file later keeps only the labels that were saved."""
    made = graded(tmp_path, compare=True)
    backup = tmp_path / "backup.db"
    with Session.open(made.db) as s:
        spec = s.compared_targets()[0]
        a = Annotators(s, batch=40, budget=40)
        same = same_text_item(a, "alice")
        s.judge(same, 0, target=spec, source="import:j.csv")  # its compared answer
        shutil.copyfile(made.db, backup)
        (other,) = (it for it in a.held("alice", ahead=1) if it.item_id != same)
        results, _ = a.answers_and_held("alice", [(other.item_id, [0, 0]), (same, [1, 1])])
        assert isinstance(results[0], list) and len(results[0]) == 2
        assert isinstance(results[1], LabelError), results
        assert "judged 'incorrect' elsewhere" in str(results[1])
        assert s.store.label_history(s.store.index_of(same)) == [] and same not in s.labels()
        nxt = a.next_item("alice")  # the next write: not refused as a file put back
        assert nxt is not None and nxt.item_id == same  # the refused item comes back
        a.answer("alice", same, [0, 0])  # as the import judged it: stored
        assert not list(tmp_path.glob("*.unsaved-*.csv"))
        shutil.copyfile(backup, made.db)  # a real put-back (the same file, cp's way)
        with pytest.raises(SessionError, match="content was replaced") as exc:
            a.next_item("alice")
    (sheet,) = tmp_path.glob("*.unsaved-*.csv")
    assert str(sheet) in str(exc.value)
    with sheet.open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if not r["answer_of"] and not r["annotator"]]
    # the labels saved since the backup, as saved (not the refused "correct" of `same`)
    assert sorted((r["item_id"], r["label"]) for r in rows) == sorted(
        [(other.item_id, "0"), (same, "0")]), rows


class _Clock:
    """The claims' clock (``time.time`` as annotators.py reads it), moved by the test: a
    claim's lapse is a step of this clock, not of the machine's (with claims of 0.3 s,
    calls slowed by 0.35 s, as on a loaded machine, let alice's claim lapse before bob
    asked, and bob got her item)."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now


def test_a_held_item_comes_back_on_reload_and_a_lapsed_claim_goes_to_another(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import activetest.session.annotators as annotators

    made = classification(tmp_path)
    clock = _Clock()
    monkeypatch.setattr(annotators, "time", clock)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5, claim_seconds=60)
        x = a.next_item("alice")
        clock.now += 59  # a reload within the claim's 60 s
        assert a.next_item("alice") == x  # a reload
        clock.now += 59  # the reload renewed it: still hers
        y = a.next_item("bob")
        assert y is not None and y.item_id != x.item_id
        clock.now += 0.5  # 59.5 s since the reload
        z = a.next_item("dora")
        assert z is not None and z.item_id not in (x.item_id, y.item_id)
        clock.now += 1  # 60.5 s since the reload: lapsed
        assert a.next_item("carol").item_id == x.item_id  # alice's claim lapsed
        a.answer("carol", x.item_id, [0])
        with pytest.raises(LabelError, match="meanwhile"):
            a.answer("alice", x.item_id, [1])  # too late: nothing written
        assert [r.annotator for r in a.annotations()] == ["carol"]


def test_overlap_share_is_seeded_and_those_items_get_two_annotators(tmp_path: Path) -> None:
    needs = []
    for run in ("one", "two"):
        made = classification(tmp_path / run)
        with Session.open(made.db) as s:
            a = Annotators(s, batch=8, budget=40, overlap=0.5)
            for _ in range(200):
                progressed = False
                for who in ("alice", "bob"):
                    it = a.next_item(who)
                    if it is not None:
                        a.answer(who, it.item_id, [made.truth[it.item_id]])
                        progressed = True
                if not progressed:
                    break
            con = sqlite3.connect(made.db)
            need = dict(con.execute("SELECT step, need FROM annotation_items").fetchall())
            con.close()
            count: dict[str, int] = {}
            for r in a.annotations():
                count[r.item_id] = count.get(r.item_id, 0) + 1
            steps = {x.item_id: x.step for x in s.acquisitions()}
            assert len(steps) == 40
            for iid, step in steps.items():
                assert count.get(iid, 0) == need[step], iid
            needs.append(need)
            rep = agreement(s, n_boot=20)
            assert rep.n_overlap == sum(v == 2 for v in need.values())
            assert rep.disagreements == ()  # both answered the truth
    assert needs[0] == needs[1]  # seeded by the session's seed and the draw step
    share = np.mean([v == 2 for v in needs[0].values()])
    assert 0.25 < share < 0.75


def test_undo_gives_the_item_back_and_removes_its_label(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        first = a.next_item("alice")
        a.answer("alice", first.item_id, [1])
        second = a.next_item("alice")
        a.answer("alice", second.item_id, [0])
        back = a.undo("alice")
        assert back.item_id == second.item_id
        assert s.labels() == {first.item_id: 1}
        assert a.next_item("alice").item_id == second.item_id
        a.answer("alice", second.item_id, [1])
        assert s.labels() == {first.item_id: 1, second.item_id: 1}
        undone = [r for r in a.annotations(include_undone=True) if r.undone]
        assert [(r.item_id, r.label) for r in undone] == [(second.item_id, 0)]
        hist = s.history(second.item_id)
        assert [h.action for h in hist] == ["add", "undo", "add"]
        assert a.undo("nobody") is None


def test_undo_never_takes_back_a_label_an_import_set_since(tmp_path: Path) -> None:
    """QA: alice answered on the page, ``import --overwrite`` replaced that label, and
    alice's undo then settled the item again from the page's answers: the imported label
    was removed without a word. Now the undo is refused, naming the import, and both the
    label and alice's answer stay."""
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        it = a.next_item("alice")
        a.answer("alice", it.item_id, [1])
        level0 = a.levels[0]
    sheet = tmp_path / "fix.csv"
    sheet.write_text(f"item_id,label\n{it.item_id},{level0}\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["import", str(made.db), str(sheet), "--overwrite"])
    assert res.exit_code == 0, res.output
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        with pytest.raises(LabelError, match=r"fix\.csv after your answer; nothing was undone"):
            a.undo("alice")
        assert s.labels() == {it.item_id: 0}
        assert [r.undone for r in a.annotations(include_undone=True)] == [None]


def test_an_import_agreeing_with_the_page_owns_the_label_a_later_answer_cannot_unsettle(
        tmp_path: Path) -> None:
    """QA: alice answered on the page (two answers asked), an import gave the same label
    ("1 already present": nothing recorded), then bob disagreed and the page removed the
    label as unsettled: the import's label was lost. Now the import confirms the label
    (history action "confirm", its source the import's), and the page refuses a later
    answer as it does after an import that came first; re-importing the same file
    changes nothing."""
    made = classification(tmp_path, acquisition="uniform")
    with Session.open(made.db) as s:
        a = Annotators(s, overlap=1.0, reviews=2, batch=4)
        x = a.next_item("alice").item_id
        a.answer("alice", x, [1])  # 0-based levels in Python
        assert s.labels() == {x: 1}
        name = a.levels[1]
    sheet = tmp_path / "imp.csv"
    sheet.write_text(f"item_id,label\n{x},{name}\n", encoding="utf-8")
    for _ in range(2):  # the second import: already the import's, nothing written
        res = CliRunner().invoke(app, ["import", str(made.db), str(sheet)])
        assert res.exit_code == 0, res.output
        assert "1 already present" in " ".join(res.output.split()), res.output
    with Session.open(made.db) as s:
        hist = [(h.action, h.source) for h in s.history(x)]
        assert [h[0] for h in hist] == ["add", "confirm"], hist
        assert "imp.csv" in hist[1][1]  # the import owns it
        a = Annotators(s, overlap=1.0, reviews=2, batch=4)
        a.next_item("bob")
        # as when the import comes first: the page's answer is refused, the label stays
        with pytest.raises(LabelError, match=r"labelled '.+' meanwhile \(csv:imp\.csv\)"):
            a.answer("bob", x, [0])  # disagrees with alice
        assert s.labels() == {x: 1}


def test_answers_are_checked_whole_and_retries_are_idempotent(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        it = a.next_item("alice")
        for bad in ([2], [-1], [0, 1]):
            with pytest.raises(LabelError):
                a.answer("alice", it.item_id, bad)
        with pytest.raises(LabelError, match="not a drawn item"):
            a.answer("alice", "nope", [0])
        assert a.annotations() == [] and s.labels() == {}
        assert len(a.answer("alice", it.item_id, [1])) == 1
        assert a.answer("alice", it.item_id, [1]) == []  # a retry after a lost reply
        with pytest.raises(LabelError, match="undo"):
            a.answer("alice", it.item_id, [0])
        with pytest.raises(LabelError, match="name"):
            a.next_item("  ")
        with pytest.raises(LabelError, match="name"):
            a.next_item("x\x1b[2J")


def test_a_name_that_is_no_text_is_refused_by_name_everywhere_names_enter(
        tmp_path: Path) -> None:
    """QA: ``Annotators.answer(5, ...)`` stored the annotator "5", and an imported record
    with ``annotator=5`` was kept for agreement as "5"; each way in refuses it, naming
    the argument and the value, and nothing is drawn or stored for it."""
    from activetest.formats.label_records import LabelRecord
    from activetest.session.annotators import check_name, keep_votes

    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        for bad in (5, 1.5, True, None, b"alice", ["alice"]):
            for call in (lambda w: a.next_item(w), lambda w: a.held(w),
                         lambda w: a.wanting_others(w), lambda w: a.held_by_others(w),
                         lambda w: a.undo(w), lambda w: a.release(w),
                         lambda w: a.skip(w, "x"), lambda w: a.reclaim(w, ["x"]),
                         lambda w: a.answer(w, "x", [1]),
                         lambda w: a.answer(w, "x", [1], adjudicate=True)):
                with pytest.raises(LabelError) as err:
                    call(bad)
                assert f"annotator={bad!r}" in str(err.value), err.value
                assert f"got {type(bad).__name__}" in str(err.value), err.value
        assert s.store.n_acquired() == 0 and a.annotations() == []
        with pytest.raises(LabelError, match=r"annotator=5: the adjudicator's name must be "
                                             r"text \(a str\), got int 5"):
            check_name(5, "adjudicator")
        assert check_name("  alice ") == "alice" and check_name("5") == "5"  # text stays
        # an API caller's records (the import path): listed with the others, nothing kept
        item = s.select(1)[0].item_id
        with pytest.raises(LabelError, match=rf"item {item!r}: annotator=5: an annotator's "
                                             r"name must be text \(a str\), got int"):
            s.add_labels([LabelRecord(item, 1, "api", 5),
                          LabelRecord(item, 1, "api", "bob")])
        assert s.labels() == {} and a.annotations(include_undone=True) == []
        with pytest.raises(LabelError, match="annotator=7"):  # its own callers too
            keep_votes(s, [LabelRecord(item, 1, "api", "bob"), LabelRecord(item, 1, "api", 7)])
        assert a.annotations(include_undone=True) == []
        # text names still go in, from both paths
        result = s.add_labels([LabelRecord(item, 1, "api", "bob")])
        assert result.votes_kept == 1 and s.labels() == {item: 1}
        assert [x.annotator for x in a.annotations()] == ["bob"]


def test_a_name_read_from_a_file_is_held_to_the_pages_rule(tmp_path: Path) -> None:
    """QA: the page refuses an annotator's name of more than 64 characters or with
    control characters, but a labels file's ``annotator`` cell was kept for agreement
    whatever it held (a 300-character name, a name with a newline). An import now applies
    the same rule with the same message, naming the file's line and the item; nothing is
    written; a blank cell names no one; a name with blanks around it is the page's name."""
    from activetest.formats.label_records import LabelRecord
    from activetest.session.annotators import check_name, keep_votes

    made = classification(tmp_path)
    with Session.open(made.db) as s:
        first, second = (a.item_id for a in s.select(2))
        level = Annotators(s, batch=5).levels[1]
    long = "x" * 65
    with pytest.raises(LabelError) as page:  # the page's own message
        check_name(long)
    rule = "the annotator's name must be 1 to 64 characters without control characters"
    assert rule in str(page.value)
    sheet = tmp_path / "named.csv"
    sheet.write_text(f"item_id,label,annotator\n{first},{level},bob\n"
                     f"{second},{level},{long}\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["import", str(made.db), str(sheet)])
    out = " ".join(res.output.split())
    assert res.exit_code == 2 and "Traceback" not in out, res.output
    assert f"line 3: item {second!r}: {rule}, got {long!r}" in out, out
    with Session.open(made.db) as s:  # nothing written
        a = Annotators(s, batch=5)
        assert s.labels() == {} and a.annotations(include_undone=True) == []
        with pytest.raises(LabelError, match=r"item .*: the annotator's name must be 1 to "
                                             r"64 characters without control characters, "
                                             r"got 'al\\nice'"):
            s.add_labels([LabelRecord(first, 1, "api", "al\nice")])
        with pytest.raises(LabelError, match=rf"{rule}, got {long!r}; nothing was kept"):
            keep_votes(s, [LabelRecord(first, 1, "api", long)])  # its own callers too
        assert s.labels() == {} and a.annotations(include_undone=True) == []
        result = s.add_labels([LabelRecord(first, 1, "api", "  alice "),
                               LabelRecord(second, 1, "api", "   ")])
        assert result.votes_kept == 1 and s.labels() == {first: 1, second: 1}
        assert [x.annotator for x in a.annotations()] == ["alice"]  # as the page stores it


def test_keep_votes_holds_the_imports_rule_of_who_names_no_one(tmp_path: Path) -> None:
    """QA: ``keep_votes`` spelt the blank-name rule inline, by truth value: an API
    caller's record with ``annotator=0`` (or False) was dropped without a word where the
    import refuses it as a name that is no text. It now holds
    :func:`~activetest.session.annotator_records.names_no_one`: None and whitespace-only
    text (tabs, an ideographic space) name no one; anything else is a name, checked."""
    from activetest.formats.label_records import LabelRecord
    from activetest.session.annotator_records import names_no_one
    from activetest.session.annotators import keep_votes

    made = classification(tmp_path)
    with Session.open(made.db) as s:
        first, second = (a.item_id for a in s.select(2))
        a = Annotators(s, batch=5)
        blanks = ["   ", "\t", " \u3000 ", "", None]
        assert all(names_no_one(b) for b in blanks)
        assert keep_votes(s, [LabelRecord(first, 1, "api", b) for b in blanks]) == 0
        assert a.annotations(include_undone=True) == []
        for bad in (0, False):
            with pytest.raises(LabelError, match=rf"annotator={bad!r}: an annotator's name "
                                                 rf"must be text \(a str\), got "
                                                 rf"{type(bad).__name__}; nothing was kept"):
                keep_votes(s, [LabelRecord(first, 1, "api", "bob"),
                               LabelRecord(second, 1, "api", bad)])
        assert a.annotations(include_undone=True) == []
        assert keep_votes(s, [LabelRecord(first, 1, "api", " bob "),
                              LabelRecord(second, 1, "api", "\t")]) == 1
        assert [x.annotator for x in a.annotations()] == ["bob"]


def test_an_item_labelled_in_the_terminal_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s, Session.open(made.db) as terminal:
        a = Annotators(s, batch=5)
        it = a.next_item("alice")
        terminal.add_label(it.item_id, 0, source="cli")
        with pytest.raises(LabelError, match="meanwhile"):
            a.answer("alice", it.item_id, [1])
        assert s.labels() == {it.item_id: 0} and a.annotations() == []
        assert a.next_item("alice").item_id != it.item_id  # not offered again


@pytest.mark.parametrize("resolve", ["skip", "latest", "majority"])
def test_disagreements_are_settled_by_the_rules_or_an_adjudicator(
        tmp_path: Path, resolve: str) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=3, overlap=1.0, reviews=3, resolve=resolve)
        it = a.next_item("alice")
        a.answer("alice", it.item_id, [1])
        assert s.labels()[it.item_id] == 1
        assert a.next_item("bob").item_id == it.item_id  # asked of three
        a.answer("bob", it.item_id, [0])
        held = s.labels().get(it.item_id)
        assert held == {"skip": None, "latest": 0, "majority": None}[resolve]
        a.answer("carol", a.next_item("carol").item_id, [0])
        held = s.labels().get(it.item_id)
        assert held == {"skip": None, "latest": 0, "majority": 0}[resolve]
        rep = agreement(s, n_boot=0)
        (d,) = rep.disagreements
        assert d.item_id == it.item_id and len(d.votes) == 3
        assert (d.settled is None) == (resolve == "skip")
        a.answer("dora", it.item_id, [1], adjudicate=True)
        assert s.labels()[it.item_id] == 1
        (d,) = agreement(s, n_boot=0).disagreements
        assert d.how == "adjudicated by dora" and d.settled == "positive"


def test_imported_ground_truths_that_differ_are_settled_on_the_page_only_by_an_adjudicator(
        tmp_path: Path) -> None:
    """An item an import left out because two ground-truth annotations differ: a page
    answer joins the imported votes but never picks between the references (not even
    with --resolve latest); an adjudicator settles it."""
    from activetest.formats.label_records import LabelRecord

    made = classification(tmp_path)
    with Session.open(made.db) as s:
        item = s.select(1)[0].item_id
        result = s.add_labels([
            LabelRecord(item, 1, "labelstudio:e.json", "user 1", "2025-01-02T03:04:05+00:00",
                        ground_truth=True),
            LabelRecord(item, 0, "labelstudio:e.json", "user 2", "2025-01-02T03:04:06+00:00",
                        ground_truth=True)], resolve="latest")
        assert result.left_out and result.votes_kept == 2 and item not in s.labels()
        a = Annotators(s, resolve="latest")
        a.answer("carol", item, [0])
        assert item not in s.labels()  # latest would say carol's: the references differ
        a.answer("dora", item, [1], adjudicate=True)
        assert s.labels()[item] == 1


def test_paired_order_is_seeded_stored_and_blind(tmp_path: Path) -> None:
    made = graded(tmp_path / "a", compare=True)
    again = graded(tmp_path / "b", compare=True)
    orders = []
    for m in (made, again):
        with Session.open(m.db) as s:
            a = Annotators(s, batch=20, budget=20)
            assert a.layout == "paired" and len(a.roles) == 2
            spec = s.compared_targets()[0]
            shown = []
            for _ in range(20):
                it = a.next_item("alice")
                text = json.dumps(asdict(it))
                assert spec not in text and "b.jsonl" not in text and "pool" not in text
                assert len(it.answers) == 2
                # A incorrect, B correct (the same text: one answer, one level)
                same = it.answers[0] == it.answers[1]
                a.answer("alice", it.item_id, [0, 0] if same else [0, 1])
                shown.append(it)
            con = sqlite3.connect(m.db)
            order = dict(con.execute("SELECT idx, shown_order FROM annotation_items"))
            con.close()
            orders.append({k: json.loads(v)[0] == "target" for k, v in order.items()})
            judged = s.store.judgments(f"compare:{spec}")
            labels = s.store.labels()
            flips = 0
            for it in shown:
                row = s.store.index_of(it.item_id)
                roles = json.loads(order[row])
                flips += roles[0] != "target"
                want = {roles[0]: 0, roles[1]: 0 if it.answers[0] == it.answers[1] else 1}
                assert labels[row].label == want["target"]
                assert judged[row].label == want[f"compare:{spec}"]
                # the answer shown as A is that role's answer
                answer_a = (s.display_item(it.item_id).fields["answer"] if roles[0] == "target"
                            else s.compared_answer(it.item_id, spec))
                assert it.answers[0] == answer_a
            assert 3 <= flips <= 17  # both orders occur
    assert orders[0] == orders[1]


def test_two_answers_with_the_same_text_get_the_same_level(tmp_path: Path) -> None:
    """Two targets that answered an item alike: the page shows both texts, and an answer
    giving them different levels is refused (it stored conflicting judgments of one
    answer, QA); the same level is stored for both."""
    made = graded(tmp_path, compare=True)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=40, budget=40)
        for _ in range(40):
            it = a.next_item("alice")
            if it.answers[0] == it.answers[1]:
                break
            a.answer("alice", it.item_id, [1, 1])
        else:
            raise AssertionError("no item with two identical answers")
        spec = s.compared_targets()[0]
        # the page's own refusal: blind (no model named; the store's check names them)
        with pytest.raises(LabelError, match="two of its answers are the same text") as exc:
            a.answer("alice", it.item_id, [0, 1])
        assert spec not in str(exc.value) and "target" not in str(exc.value)
        a.answer("alice", it.item_id, [1, 1])
        row = s.store.index_of(it.item_id)
        assert s.store.labels()[row].label == s.store.judgments(f"compare:{spec}")[row].label


def test_answers_alike_but_for_spacing_are_one_answer_on_the_page_too(
        tmp_path: Path) -> None:
    """"Tokyo" and "Tokyo  " are the same text to the store's check (whitespace
    collapsed: compare_graded.same_answer) but were two to the page's: levels that
    differ got past it, and the store refused them as judged "elsewhere" (QA: no one
    had). Now the page refuses them itself, as for identical texts."""
    pool = [{"id": f"q{i}", "question": "Capital of Japan?", "context": f"c {i}",
             "references": ["Tokyo"], "answer": "Tokyo"} for i in range(4)]
    other = [{"id": f"q{i}", "question": "Capital of Japan?", "answer": "Tokyo  "}
             for i in range(4)]
    for name, rows in (("pool.jsonl", pool), ("b.jsonl", other)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows),
                                     encoding="utf-8")
    db = tmp_path / "p.db"
    Session.create(db, pool=tmp_path / "pool.jsonl", task="squad", target="pool",
                   surrogate="uniform", seed=1, progress=False,
                   compare=[f"answers:{tmp_path / 'b.jsonl'}"]).close()
    with Session.open(db) as s:
        a = Annotators(s, batch=4, budget=4)
        it = a.next_item("alice")
        assert sorted(it.answers) == ["Tokyo", "Tokyo  "]
        with pytest.raises(LabelError, match="two of its answers are the same text"):
            a.answer("alice", it.item_id, [0, 1])
        assert a.answer("alice", it.item_id, [1, 1])
        assert s.labels()[it.item_id] == 1


def _paired_of(tmp_path: Path, target: str, other: str, n: int = 4) -> Path:
    """A paired session of ``n`` items whose target answered ``target`` and whose
    compared target answered ``other`` on each (the stored texts, as written)."""
    pool = [{"id": f"q{i}", "question": "Capital of Japan?", "context": f"c {i}",
             "references": ["Tokyo"], "answer": target} for i in range(n)]
    rows = [{"id": f"q{i}", "question": "Capital of Japan?", "answer": other}
            for i in range(n)]
    for name, recs in (("pool.jsonl", pool), ("b.jsonl", rows)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in recs),
                                     encoding="utf-8")
    db = tmp_path / "p.db"
    Session.create(db, pool=tmp_path / "pool.jsonl", task="squad", target="pool",
                   surrogate="uniform", seed=1, progress=False,
                   compare=[f"answers:{tmp_path / 'b.jsonl'}"]).close()
    return db


def test_answers_that_look_alike_but_differ_as_stored_are_two_answers_as_the_store_reads(
        tmp_path: Path) -> None:
    """The page's same-text check follows the store's rule (compare_graded.same_answer:
    whitespace collapsed, nothing else) on the stored texts: "café" in its composed and
    its decomposed form look the same on the page but are two stored answers, judged
    on their own by the store, an import and the terminal; the page takes them judged
    apart too (refusing them would refuse what every other way of labelling keeps),
    and the store keeps both judgments."""
    import unicodedata

    composed = unicodedata.normalize("NFC", "Café de Tokyo")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    db = _paired_of(tmp_path, composed, decomposed)
    with Session.open(db) as s:
        a = Annotators(s, batch=4, budget=4)
        it = a.next_item("alice")
        spec = s.compared_targets()[0]
        order = a._item_row(s.store._conn, a._item_state(
            s.store._conn, s.store.index_of(it.item_id)))[1]
        levels = [0 if role == "target" else 1 for role in order]
        assert a.answer("alice", it.item_id, levels)
        row = s.store.index_of(it.item_id)
        assert s.store.labels()[row].label == 0
        assert s.store.judgments(f"compare:{spec}")[row].label == 1


def test_the_same_text_check_reads_the_one_items_stored_answers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's same-text check reads the item's own stored answers: it read every
    answer of every role (through the page's display) to check one item, 0.33 CPU s an
    answer at 20,000 items (a paired session; measured on a shared 2-core machine); the
    whole-role read is counted here (a spy that reads through), and none is made."""
    from activetest.session.store import SessionStore

    db = _paired_of(tmp_path, "Tokyo", "Tokyo  ")
    whole: list[str] = []
    real = SessionStore.answers

    def counted(self: SessionStore, role: str = "target") -> dict[int, object]:
        whole.append(role)
        return real(self, role)

    with Session.open(db) as s:
        a = Annotators(s, batch=4, budget=4)
        it = a.next_item("alice")
        st = a._item_state(s.store._conn, s.store.index_of(it.item_id))
        order = a._item_row(s.store._conn, st)[1]
        monkeypatch.setattr(SessionStore, "answers", counted)
        c = s.store._conn
        with pytest.raises(LabelError, match="two of its answers are the same text"):
            a._check_same_texts(c, st, order, dict(zip(order, (0, 1), strict=True)), it.item_id)
        a._check_same_texts(c, st, order, dict(zip(order, (1, 1), strict=True)), it.item_id)
        assert whole == []


def _reach(a: Annotators, who: str, item_id: str) -> None:
    """``who`` answers "correct" to the items offered before ``item_id`` (an overlap
    session's: those another answered), until ``item_id`` is theirs."""
    for _ in range(40):
        it = a.next_item(who)
        assert it is not None
        if it.item_id == item_id:
            return
        a.answer(who, it.item_id, [1] * len(it.answers))
    raise AssertionError(f"{item_id!r} never came to {who}")


@pytest.mark.parametrize("resolve", ["latest", "majority"])
def test_a_second_answer_on_a_same_text_item_is_stored_and_settled_by_the_rule(
        tmp_path: Path, resolve: str) -> None:
    """QA: two annotators on an item whose two answers are the same text (overlap),
    alice "correct, correct", bob "incorrect, incorrect", --resolve latest: settling wrote
    the target's label, then checked it against the compared answer's judgment, still
    alice's "correct": bob's answer was refused ("judge them alike (--overwrite ...)",
    naming the hidden target's file) and could never be stored; so were bob's undo and
    an adjudicator's answer that changed the settled judgment. Now every role is written,
    then checked once: latest gives bob's, majority of two a tie that settles nothing
    (both unlabelled, waiting for an adjudicator: :func:`activetest.session.labels.settle`);
    the undo gives alice's back, the last adjudicator settles."""
    made = graded(tmp_path, compare=True)
    with Session.open(made.db) as s:
        spec = s.compared_targets()[0]
        a = Annotators(s, batch=40, budget=40, overlap=1.0, resolve=resolve)
        same = same_text_item(a, "alice")
        row = s.store.index_of(same)

        def settled() -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
            lab = s.store.labels().get(row)
            j = s.store.judgments(f"compare:{spec}").get(row)
            return (None if lab is None else (lab.label, lab.source),
                    None if j is None else (j.label, j.source))

        a.answer("alice", same, [1, 1])
        assert settled() == ((1, "web (alice)"),) * 2
        _reach(a, "bob", same)
        rows = a.answer("bob", same, [0, 0])
        assert [(r.annotator, r.label) for r in rows] == [("bob", 0), ("bob", 0)]
        assert settled() == {"latest": ((0, "web (latest: bob)"),) * 2,
                             "majority": (None, None)}[resolve]
        assert a.unsettled() == (resolve == "majority")
        assert a.undo("bob") is not None  # alice's answer alone again
        assert settled() == ((1, "web (alice)"),) * 2
        a.answer("bob", same, [0, 0])
        a.answer("dora", same, [1, 1], adjudicate=True)
        assert settled() == ((1, "web (adjudicated by dora)"),) * 2
        a.answer("erin", same, [0, 0], adjudicate=True)  # the last adjudication settles
        assert settled() == ((0, "web (adjudicated by erin)"),) * 2
        assert sorted((r.annotator, r.role, r.label) for r in a.annotations()
                      if r.item_id == same) == sorted(
            [(w, role, v) for w, v in (("alice", 1), ("bob", 0), ("dora", 1), ("erin", 0))
             for role in ("target", f"compare:{spec}")])


def test_an_answer_unlike_a_same_text_judgment_made_elsewhere_is_refused_blind(
        tmp_path: Path) -> None:
    """The refusal that stays: an item whose two answers are the same text, the compared
    answer judged "incorrect" by an import; a page answer "correct" would judge the one
    answer twice, differently. It is refused in the page's words: answers by their
    letters, no compared target or its file, no source (which may name it), no
    ``--overwrite`` (the page has none; QA: it said all three). Judged as the import did,
    it is stored; the API's refusal keeps its own words (both named, ``--overwrite``)."""
    made = graded(tmp_path, compare=True)
    with Session.open(made.db) as s:
        spec = s.compared_targets()[0]
        a = Annotators(s, batch=40, budget=40)
        same = same_text_item(a, "alice")
        s.judge(same, 0, target=spec, source="import:j.csv")
        with pytest.raises(LabelError) as exc:
            a.answer("alice", same, [1, 1])
        msg = str(exc.value)
        assert msg.startswith(f"item {same!r}: answers A and B are the same text ("), msg
        assert ("judged 'incorrect' elsewhere" in msg and "give it 'incorrect'" in msg
                and msg.endswith("your answer was not saved")), msg
        for hidden in (spec, "b.jsonl", "j.csv", "target", "--overwrite"):
            assert hidden not in msg, (hidden, msg)
        assert same not in s.labels() and not [r for r in a.annotations()
                                                if r.item_id == same]
        assert a.next_item("alice").item_id == same  # it comes back
        a.answer("alice", same, [0, 0])
        assert s.labels()[same] == 0
        with pytest.raises(LabelError, match=rf"{spec}'s answer are the same text .*"
                                             r"overwrite=True in Python, to change the one stored"):
            s.judge(same, 1, target=spec, overwrite=True)
        assert s.store.judgments(f"compare:{spec}")[s.store.index_of(same)].label == 0


def test_paired_agreement_resamples_items_and_says_so(tmp_path: Path) -> None:
    """QA: two annotators judged both answers of 20 items and the lines said "1000
    resamples of the 40 items" (the answers), resampled one by one. Now the bootstrap
    takes whole items and the line says "20 items (40 answers)"."""
    from activetest.session.annotators import describe_agreement

    made = graded(tmp_path, compare=True)
    rng = np.random.default_rng(2)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=20, budget=20, overlap=1.0)
        for who in ("alice", "bob"):
            for _ in range(20):
                it = a.next_item(who)
                if it is None:
                    break
                same = it.answers[0] == it.answers[1]
                k = int(rng.integers(0, 2))
                a.answer(who, it.item_id, [k, k] if same else list(rng.integers(0, 2, 2)))
        rep = agreement(s, n_boot=200)
    st = rep.stats[0]
    assert st.n_items is not None and st.n_units > st.n_items
    text = " ".join(describe_agreement(rep))
    assert f"resamples of the {st.n_items} items ({st.n_units} answers)" in text


def test_graded_layout_shows_question_context_answer_and_references(tmp_path: Path) -> None:
    made = graded(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5)
        assert a.layout == "graded"
        it = a.next_item("alice")
        names = [k for k, _ in it.fields]
        assert "question" in names and "context" in names and "references" in names
        assert "answer" not in names and len(it.answers) == 1
        assert it.answers[0] == s.display_item(it.item_id).fields["answer"]
        assert it.guess is None


def test_the_guess_is_hidden_unless_asked_for(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        assert Annotators(s, batch=2).next_item("alice").guess is None
        it = Annotators(s, batch=2, show_guess=True).next_item("bob")
        assert it.guess is not None and it.guess[0] in ("negative", "positive")


def test_agreement_equals_the_reference_implementations(tmp_path: Path) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    sk = pytest.importorskip("sklearn.metrics")
    made = classification(tmp_path)
    rng = np.random.default_rng(0)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=10, budget=30, overlap=1.0, resolve="latest")
        given: dict[str, dict[str, int]] = {"alice": {}, "bob": {}}
        for _ in range(30):
            for who in ("alice", "bob"):
                it = a.next_item(who)
                y = made.truth[it.item_id] if rng.random() < 0.8 else int(rng.integers(0, 2))
                a.answer(who, it.item_id, [y])
                given[who][it.item_id] = y
        rep = agreement(s, n_boot=200)
    ids = sorted(given["alice"])
    x = np.array([[given[w][i] for i in ids] for w in ("alice", "bob")], dtype=float)
    stats = {st.name: st for st in rep.stats}
    assert rep.n_overlap == 30
    assert stats["Cohen's kappa"].estimate == pytest.approx(
        sk.cohen_kappa_score(x[0], x[1]), abs=1e-9)
    assert stats["Krippendorff's alpha (nominal)"].estimate == pytest.approx(
        krippendorff.alpha(reliability_data=x, level_of_measurement="nominal"), abs=1e-9)
    k = stats["Cohen's kappa"]
    assert k.low <= k.estimate <= k.high and k.seed == 3 and k.n_boot == 200
    n_dis = int((x[0] != x[1]).sum())
    assert len(rep.disagreements) == n_dis


def test_status_estimate_and_report_show_agreement(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=10, budget=10, overlap=1.0, resolve="latest")
        for _ in range(10):
            for who in ("alice", "bob"):
                it = a.next_item(who)
                y = made.truth[it.item_id] if who == "alice" else 1
                a.answer(who, it.item_id, [y])
    runner = CliRunner()
    out = runner.invoke(app, ["status", str(made.db)])
    assert out.exit_code == 0, out.output
    assert "Cohen's kappa" in out.output and "Krippendorff's alpha (nominal)" in out.output
    assert "disagreement(s)" in out.output
    out = runner.invoke(app, ["estimate", str(made.db), "--json", "--no-progress"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["agreement"]["annotators"] == ["alice", "bob"]
    out = runner.invoke(app, ["report", str(made.db), "--out", str(tmp_path / "rep"),
                              "--no-progress"])
    assert out.exit_code == 0, out.output
    assert "Cohen's kappa" in (tmp_path / "rep" / "report.md").read_text()


def test_progress_names_its_intervals_and_says_when_to_stop(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        assert progress(s).note  # no labels yet
        a = Annotators(s, batch=10, budget=40)
        _label_all(a, "alice", made.truth, 40)
        p = progress(s, target_width=10.0)
        assert p.n_labels == 40 and p.n_selected == 40
        m = {x.metric: x for x in p.metrics}["log_loss"]
        assert m.fixed_name == "fixed-budget 95% interval"
        assert m.anytime_name == "anytime 95% confidence sequence"
        assert m.estimator == "adaptive LURE" and m.cs_low is not None and m.may_stop
        # each named interval carries the session's own numbers for it (mutation check:
        # the fixed-budget interval showing the CS's passed every test)
        r = s.estimate(record=False, progress=False, target_width=10.0)
        for x in p.metrics:
            e = r.metrics[x.metric]
            assert x.estimate == pytest.approx(e.active.estimate, rel=1e-12)
            assert (x.fixed_low, x.fixed_high) == pytest.approx(
                (e.anytime.fixed_low, e.anytime.fixed_high), rel=1e-12)
            assert (x.cs_low, x.cs_high) == pytest.approx((e.anytime.cs_low,
                                                           e.anytime.cs_high), rel=1e-12)
        assert not {x.metric: x for x in progress(s, target_width=1e-6).metrics}[
            "log_loss"].may_stop


def test_progress_before_30_labels_claims_no_asymptotic_cs_and_shows_the_exact_one(
        tmp_path: Path) -> None:
    """Before 30 labels the asymptotic CS is the whole range, which `estimate` shows as
    "(from 30 labels)": the page's line showed it as an interval (QA: "[0.000, 4.879]");
    the exact CS, which holds at any count, is passed on with its name."""
    made = classification(tmp_path)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5, budget=10)
        _label_all(a, "alice", made.truth, 5)
        r = s.estimate(record=False, progress=False)
        p = {x.metric: x for x in progress(s).metrics}
        for metric, x in p.items():
            e = r.metrics[metric].anytime
            assert e is not None and np.isfinite(e.cs_low)  # the whole range, finite
            assert x.cs_low is None and x.cs_high is None, (metric, x)
            assert x.basis == e.basis  # what stands in, for the page to name it
            if e.exact_low is not None:
                assert x.exact_name == "exact anytime 95% confidence sequence"
                assert (x.exact_low, x.exact_high) == pytest.approx((e.exact_low,
                                                                     e.exact_high))
        assert any(x.exact_low is not None for x in p.values())


def test_progress_says_what_its_intervals_rest_on(tmp_path: Path) -> None:
    """QA: the page showed the intervals but none of `estimate`'s notes about them: labels
    waiting for an earlier unlabelled draw (the estimate stops before them), the widening
    for what items drawn far below the uniform rate could hide."""
    made = classification(tmp_path, acquisition="ce")
    with Session.open(made.db) as s:
        drawn = s.select(20)
        for k, it in enumerate(drawn):
            if k != 12:  # draw 13 left unlabelled: 7 later labels wait for it
                s.add_label(it.item_id, made.truth[it.item_id])
        r = s.estimate(record=False, progress=False)
        p = progress(s)
        notes = p.notes
    assert r.n_waiting == 7 and r.n_labels == 12
    held = drawn[12]  # named, as `estimate` names it (QA: "an earlier draw")
    # its parts apart, for the page to isolate the id (a <bdi>: test_browser)
    assert p.waiting is not None and (p.waiting.item_id, p.waiting.step) == (held.item_id,
                                                                              held.step)
    assert p.waiting.text() == (f"7 label(s) of later draws wait for item "
                                f"{held.item_id!r} (draw {held.step}) to be labelled; the "
                                f"estimate uses the first 12 draws")
    assert not any("later draws wait" in n for n in notes), notes  # said once
    widened = [b.describe(r.level) for b in r.blind_spots if b.estimator == "estimate"]
    assert widened and all(w in notes for w in widened), (widened, notes)
    assert all("control-variate" not in n for n in notes)  # the page shows no CV estimate


def test_answer_and_next_commit_together(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with Session.open(made.db) as s, Session.open(made.db) as other:
        a = Annotators(s, batch=3, budget=3)
        it = a.next_item("alice")
        rows, nxt = a.answer_and_next("alice", it.item_id, [1])
        assert len(rows) == 1 and nxt is not None and nxt.item_id != it.item_id
        # committed: another connection sees the answer and the claim of the next item
        assert other.labels() == {it.item_id: 1}
        b = Annotators(other, batch=3, budget=3)
        third = b.next_item("bob")
        assert third.item_id not in (it.item_id, nxt.item_id)
        # bob holds the last item of the budget: the answer stands, nothing is next
        assert a.answer_and_next("alice", nxt.item_id, [0])[1] is None
        assert b.answer_and_next("bob", third.item_id, [0])[1] is None
        assert len(other.labels()) == 3


def test_a_hostile_annotator_name_is_text_in_the_report(tmp_path: Path) -> None:
    made = classification(tmp_path)
    evil = "<script>alert(1)</script>"
    with Session.open(made.db) as s:
        a = Annotators(s, batch=4, budget=4, overlap=1.0, resolve="latest")
        for _ in range(4):
            for who, y in ((evil, 0), ("bob", 1)):
                a.answer(who, a.next_item(who).item_id, [y])
    out = CliRunner().invoke(app, ["report", str(made.db), "--out", str(tmp_path / "r"),
                                   "--no-progress"])
    assert out.exit_code == 0, out.output
    html = (tmp_path / "r" / "report.html").read_text()
    assert "disagreement(s)" in html and evil not in html


def test_opening_the_page_on_a_file_that_has_its_tables_writes_nothing(
        tmp_path: Path) -> None:
    """The first ``Annotators`` makes the page's tables (a write); the next ones, on a
    file that has them, only read: no write lock taken, the file's write mark where it
    was (each one was a commit: under load, one of them, its fold held off by the page's
    reader, was then taken for a copy put back as the page's own fold ended)."""
    made = classification(tmp_path, n=20)
    with Session.open(made.db) as s:
        before = s.store._read("SELECT value FROM meta WHERE key = 'writes'")
        Annotators(s)
        made_tables = s.store._read("SELECT value FROM meta WHERE key = 'writes'")
        assert made_tables != before  # the tables were made: one write
        con = sqlite3.connect(made.db, timeout=0, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")  # another process writing: a write would wait
        try:
            Annotators(s)
            assert not Annotators(s).annotations()
        finally:
            con.execute("COMMIT")
            con.close()
        assert s.store._read("SELECT value FROM meta WHERE key = 'writes'") == made_tables
