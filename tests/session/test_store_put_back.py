"""A session file whose content is put back while a command has it open, and a journal
that a writer killed between its commit and its fold left.

QA (2026-12-07): a backup copied over the session file (``cp backup.db s.db``: the same
file, its content replaced) while ``label`` ran was not seen: the answers given after it
went into the backup's content without a word, and those given before it were gone.
Now the next write is refused as a file moved over the session is (exit 2, one
message), and the answers the run had saved that the file no longer holds are written
beside it as a sheet that ``import`` reads back. Two processes writing one file (the
labelling server and ``label``) go on as before.

All with real files and real processes (``cp``, ``kill -9``), no mock.
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from session_support import (
    PoolFiles,
    cli_command,
    cli_env,
    cli_session,
    count_rows,
    label_child,
    session_with_backup,
    wait_for_labels,
    wait_for_question,
)

from activetest.session.store_errors import SessionError
from activetest.session.store_marks import SHEET_COLUMNS
from activetest.session.workflow import Session


def test_a_backup_copied_over_the_session_while_label_runs_is_refused_and_nothing_lost(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    env, db, backup = session_with_backup(pool_files, tmp_path)  # 4 draws, no label
    inode = os.stat(db).st_ino
    proc = label_child(db, env)
    assert proc.stdin is not None
    proc.stdin.write("1\n")  # the first answer: saved
    proc.stdin.flush()
    wait_for_labels(db, 1, proc)
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        first = con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                            "ON i.idx = l.idx").fetchone()
    # the run waiting at its next question (its fold done or given up, the item read):
    # a copy written while the fold writes the file, or while the run reads it, is a
    # copy during a write or a read, which nothing sees
    wait_for_question(proc, "2/4")
    subprocess.run(["cp", str(backup), str(db)], check=True)  # the backup put back
    assert os.stat(db).st_ino == inode  # the same file, its content replaced
    out, err = proc.communicate("2\n", timeout=60)  # the next answer
    assert proc.returncode == 2, (out, err)
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "content was replaced" in err and "an older state of this session" in err, err
    assert "was not saved" in err and str(db) in err, err
    sheets = list(tmp_path.glob("s.unsaved-*.csv"))
    assert len(sheets) == 1 and str(sheets[0]) in err, (sheets, err)
    with sheets[0].open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["item_id"], int(r["label"])) for r in rows] == [first]
    # the backup's own content, unchanged (nothing of the run written into it)
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 4
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # the sheet puts the saved answer back
    got = subprocess.run(cli_command("import", str(db), str(sheets[0]), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        assert con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                           "ON i.idx = l.idx").fetchall() == [first]


def test_a_copy_that_labels_the_asked_item_is_refused_not_told_as_labelled_meanwhile(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A copy of the session in which the item now asked has another label (written
    elsewhere) copied over the file while ``label`` waits for its answer: the answer is
    refused as a file put back, and the refusal is what the run says (exit 2, one
    message naming the sheet that keeps the answer saved before the copy). QA: the
    label read again after the refusal found the copy's label, the run said "not saved:
    item ... was labelled 'negative' meanwhile (another labelling run or an import)",
    went on and ended with exit 0, and the sheet was named nowhere."""
    env = cli_env(tmp_path)
    db, copy = tmp_path / "s.db", tmp_path / "copy.db"
    cli_session(pool_files, db, env, 4)
    shutil.copyfile(db, copy)
    with Session.open(copy) as other:  # the copy's own write: the second item labelled
        second = other.pending()[1].item_id
        other.add_label(second, 0, source="api")
    proc = subprocess.Popen(cli_command("label", str(db)), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    try:
        proc.stdin.write("1\n")  # the first answer: saved
        proc.stdin.flush()
        wait_for_question(proc, "2/4")
        subprocess.run(["cp", str(copy), str(db)], check=True)  # the copy put over it
        out, err = proc.communicate("2\n", timeout=60)  # 'positive' for the second item
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, (out, err)
    assert "meanwhile" not in out + err and "not saved:" not in out, (out, err)
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "content was replaced" in err and "written to elsewhere" in err, err
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    assert str(sheet) in err, err
    with sheet.open(newline="", encoding="utf-8") as f:
        assert len(list(csv.DictReader(f))) == 1  # the first answer, kept
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        assert con.execute("SELECT i.item_id, l.label FROM labels l JOIN items i "
                           "ON i.idx = l.idx").fetchall() == [(second, 0)]  # the copy's


def _label_copy_over_and_refuse(db: Path, copy: Path, label: int, *, next_item: int,
                                words: str) -> None:
    """In process: label ``db``'s first pending item ``label``, copy ``copy`` over the
    file (``cp``: the same file, its content replaced), and check that the next write
    (a label of the ``next_item``-th pending item) is refused as a file put back
    (``SessionFileReplacedError`` whose message holds ``words``) and that the first
    label is in the sheet beside the file."""
    s = Session.open(db)
    try:
        first = s.pending()[0].item_id
        s.add_label(first, label, source="api")
        subprocess.run(["cp", str(copy), str(db)], check=True)
        try:
            s.add_label(s.pending()[next_item].item_id, 0, source="api")
        except Exception as exc:
            msg = str(exc)
            assert type(exc).__name__ == "SessionFileReplacedError", msg
        else:
            raise AssertionError(f"a write after {copy.name} was copied over {db.name} "
                                 f"was not refused")
        assert words in msg, msg
    finally:
        s.close()
    (sheet,) = db.parent.glob(f"{db.stem}.unsaved-*.csv")
    with sheet.open(newline="", encoding="utf-8") as f:
        assert [(r["item_id"], r["label"]) for r in csv.DictReader(f)] == [(first, str(label))]


def test_another_session_copied_over_an_open_one_is_refused_in_process(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The library's own refusal (the server's store is one): another session's
    content copied over the file, with a label saved before; the store refuses its
    next write and keeps that label in the sheet."""
    env = cli_env(tmp_path)
    db, other = tmp_path / "s.db", tmp_path / "other.db"
    cli_session(pool_files, db, env, 3)
    cli_session(pool_files, other, env, 2)
    _label_copy_over_and_refuse(db, other, 1, next_item=0, words="another session's content")
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 2  # the other's


def test_label_and_another_writer_on_one_file_both_keep_writing(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A `label` run and another process's store (as the labelling server holds one)
    write one file in turns: neither takes the other's writes for a file put back."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 6)
    s = Session.open(db)
    try:
        mine = [a.item_id for a in s.pending()][-2:]  # the run answers from the front
        proc = subprocess.Popen(cli_command("label", str(db)), env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None
        for k in range(2):
            proc.stdin.write("1\n")
            proc.stdin.flush()
            wait_for_labels(db, 2 * k + 1, proc)
            s.add_label(mine[k], 1, source="api")  # this process's write, in between
        out, err = proc.communicate("1\nq\n", timeout=60)
        assert proc.returncode == 0, (out, err)
        s.add_label(s.pending()[0].item_id, 0, source="api")  # after the run's last
    finally:
        s.close()
    assert not list(tmp_path.glob("*.unsaved-*")) and count_rows(db, "labels") == 6


def test_a_copy_of_the_session_written_to_elsewhere_and_copied_back_is_refused(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A copy of the session taken before this process's label, written to elsewhere
    (more writes than this process made), then copied over the file: its count is ahead,
    but this process's last label is not in it; refused, the label kept beside."""
    env = cli_env(tmp_path)
    db, elsewhere = tmp_path / "s.db", tmp_path / "elsewhere.db"
    cli_session(pool_files, db, env, 3)
    shutil.copyfile(db, elsewhere)
    for _ in range(3):  # another process's writes to the copy
        subprocess.run(cli_command("select", str(elsewhere), "--n", "1"), env=env,
                       check=True, capture_output=True)
    _label_copy_over_and_refuse(db, elsewhere, 0, next_item=-1,
                                words="a copy of this session that was written to elsewhere")
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 6  # the copy's own


def test_the_pages_answers_are_kept_beside_a_file_put_back_and_imported_whole(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The labelling page's answers (each annotator's, beside the label they settle)
    written before a backup was copied over the session: the sheet kept only the label
    changes, every one of them (an item answered twice, then adjudicated, had three rows
    that ``import`` read as a disagreement and left out), not who answered what. Now
    it holds each item's label as the page left it and each annotator's answer (an undone
    one marked undone), and ``import`` puts back every label and every answer: nothing
    is lost."""
    from activetest.session.annotators import Annotators

    env, db, backup = session_with_backup(pool_files, tmp_path)  # 4 draws, no answer yet
    s = Session.open(db)
    try:
        page = Annotators(s, overlap=1.0, reviews=2, resolve="latest")
        one, two, three, four = (a.item_id for a in page.held("alice", ahead=3))
        page.answer("alice", one, [1])
        page.answer("bob", one, [0])  # they differ: the latest settles it (bob's 0)
        page.answer("carol", one, [1], adjudicate=True)  # an adjudicator settles it: 1
        page.answer("alice", two, [1])
        page.answer("bob", two, [1])
        page.answer("alice", three, [0])
        page.undo("alice")  # taken back: its item unlabelled, the answer not to be kept
        labels = s.labels()
        sources = {i: lab.source for i, lab in s.store.labels().items()}
        answers = sorted((a.item_id, a.role, a.annotator, a.label)
                         for a in page.annotations())
        assert labels == {one: 1, two: 1} and len(answers) == 5
        subprocess.run(["cp", str(backup), str(db)], check=True)
        try:
            page.answer("bob", four, [0])
        except Exception as exc:
            msg = str(exc)
            assert type(exc).__name__ == "SessionFileReplacedError", msg
        else:
            raise AssertionError("a write into a backup put back was not refused")
        assert "5 annotator answer(s) and 1 undone answer(s)" in msg, msg
    finally:
        s.close()
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    assert str(sheet) in msg
    got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    with Session.open(db) as s:
        assert s.labels() == labels  # the labels as the page left them
        back = Annotators(s).annotations()
        assert sorted((a.item_id, a.role, a.annotator, a.label) for a in back) == answers
        # each label as the page's own, as it was (QA: stored as the import's, "csv:...
        # (ground truth)", which the page took for a label set elsewhere: bob's undo
        # was refused, "nothing was undone")
        assert {i: lab.source for i, lab in s.store.labels().items()} == sources
        assert sources[s.store.index_of(two)] == "web (alice)"
        page = Annotators(s, overlap=1.0, reviews=2, resolve="latest")
        again = page.undo("bob")  # bob's last answer (item two): settled again, alice's
        assert again is not None and again.item_id == two
        assert s.labels() == labels
    undone = [(i, w) for i, _, w, _, k, _, u in _annotation_rows(db) if u]
    assert sorted(undone) == sorted([(_row_of(db, three), "alice"), (_row_of(db, two), "bob")])


def _row_of(db: Path, item_id: str) -> int:
    """The pool row of ``item_id`` in the session file ``db`` (read-only)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return int(con.execute("SELECT idx FROM items WHERE item_id = ?",
                               (item_id,)).fetchone()[0])


def _note_answers(s: Session, rows: list[tuple[int, str, str, str, str]],
                  make: type) -> list:
    """One write transaction of the store of ``s`` that inserts ``rows`` (pool row, role,
    annotator, kind, time) into the ``annotations`` table, as the page and ``import`` do,
    and notes each as ``make`` (an :class:`Annotation`, or a subclass of it), label 1;
    returns them."""
    from activetest.session.annotators import SCHEMA

    noted = []
    with s.store.transaction() as c:
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                c.execute(stmt)
        for idx, role, who, kind, at in rows:
            cur = c.execute("INSERT INTO annotations (idx, role, annotator, label, kind, at) "
                            "VALUES (?, ?, ?, 1, ?, ?)", (idx, role, who, kind, at))
            item_id = c.execute("SELECT item_id FROM items WHERE idx = ?",
                                (idx,)).fetchone()[0]
            noted.append(make(int(cur.lastrowid or 0), idx, item_id, role, who, 1, kind, at))
        s.store.note_annotations(noted)
    return noted


def test_a_commit_reads_none_of_the_answers_kept_before_it(pool_files: PoolFiles,
                                                          tmp_path: Path) -> None:
    """The answers a store keeps for a file put back: each commit rebuilt the whole list
    of every answer kept so far (a long ``serve``: each answer cost O(all answers
    before it), quadratic in all). Counted, not timed: after 26 answers in 13 commits,
    the next commit reads no field of any answer kept before it; the answers are all
    still kept (the sheet beside a backup put back holds every one, in order: an undo
    adds its undone rows, ``test_undos_of_what_the_backup_holds_are_carried_by_the_sheet``)."""
    from activetest.session.store_rows import Annotation

    _, db, backup = session_with_backup(pool_files, tmp_path, 3)  # no answer yet
    reads: list[int] = []  # the id of each kept answer a field was read of

    class Probe(Annotation):
        """An answer that counts the reads of its fields."""

        def __getattribute__(self, name: str) -> object:
            if name in Annotation.__dataclass_fields__:
                reads.append(object.__getattribute__(self, "id"))
            return object.__getattribute__(self, name)

    s = Session.open(db)
    try:
        kept = []
        for k in range(12):
            kept += _note_answers(s, [(k % 3, "target", f"a{k}", "answer", f"t{k}"),
                                      (k % 3, "target", f"b{k}", "import", f"t{k}")], Probe)
        # a5's answer to a compared answer, and an import under a5's name at its time
        kept += _note_answers(s, [(2, "compare:m", "a5", "answer", "t5"),
                                  (2, "target", "a5", "import", "t5")], Probe)
        before = {a.id for a in kept}
        reads.clear()
        kept += _note_answers(s, [(0, "target", "c", "answer", "t12")], Probe)
        assert not before & set(reads), sorted(before & set(reads))
        subprocess.run(["cp", str(backup), str(db)], check=True)
        try:
            _note_answers(s, [(1, "target", "d", "answer", "t13")], Annotation)
        except Exception as exc:
            msg = str(exc)
            assert type(exc).__name__ == "SessionFileReplacedError", msg
        else:
            raise AssertionError("a write into a backup put back was not refused")
    finally:
        s.close()
    assert "27 annotator answer(s)" in msg, msg
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    with sheet.open(newline="", encoding="utf-8") as f:
        got = [(r["annotator"], r["source"], r["answer_of"]) for r in csv.DictReader(f)]
    whose = {"target": "", "compare:m": "m"}
    assert got == [(a.annotator, f"{a.kind} ({a.annotator})", whose[a.role]) for a in kept]
    assert ("a5", "import (a5)", "") in got and len(got) == 27


def test_what_a_savepoint_rolled_back_is_not_kept_as_saved(pool_files: PoolFiles,
                                                           tmp_path: Path) -> None:
    """A part of a write refused in its savepoint (``SessionStore.savepoint``: the
    page's answer of a batch) is rolled back in the file and in what the store keeps of
    its own writes: a label change and an answer noted in it are not kept. (A
    label change was: the next write then found it missing from the file's history and
    refused the file as put back.) The next write is taken, and a backup really put
    back afterwards has beside it what was saved, and only that."""
    from activetest.session.store_rows import Annotation

    _, db, backup = session_with_backup(pool_files, tmp_path, 3)  # no label, no answer yet
    s = Session.open(db)
    try:
        with pytest.raises(RuntimeError, match="open write transaction"), \
                s.store.savepoint("part"):
            pass
        (kept,) = _note_answers(s, [(0, "target", "ann", "answer", "t0")], Annotation)
        with s.store.transaction():
            s.store.set_labels([(0, 1)], "saved")
            with pytest.raises(ValueError, match="refused"), s.store.savepoint("part"):
                s.store.set_labels([(1, 1)], "refused")
                _note_answers(s, [(1, "target", "bob", "answer", "t1")], Annotation)
                raise ValueError("refused")
        assert {i: x.source for i, x in s.store.labels().items()} == {0: "saved"}
        s.store.set_labels([(2, 0)], "next")  # the next write: taken
        assert not list(tmp_path.glob("s.unsaved-*.csv"))
        subprocess.run(["cp", str(backup), str(db)], check=True)
        with pytest.raises(SessionError, match="content was replaced") as exc:
            s.store.set_labels([(1, 0)], "after")
    finally:
        s.close()
    msg = str(exc.value)
    assert "2 label change(s) and 1 annotator answer(s)" in msg, msg
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    with sheet.open(newline="", encoding="utf-8") as f:
        rows = [(r["item_id"], r["label"], r["source"]) for r in csv.DictReader(f)]
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        name = dict(con.execute("SELECT idx, item_id FROM items WHERE idx < 3").fetchall())
    assert rows == [(name[0], "1", "saved"), (name[2], "0", "next"),
                    (name[0], "1", f"answer ({kept.annotator})")], rows


def _status_json(db: Path, env: dict[str, str]) -> dict:
    """``activetest status --json`` of ``db`` (a child process), without its path."""
    import json

    got = subprocess.run(cli_command("status", str(db), "--json"), env=env,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    out.pop("path", None)
    return out


def _put_back_and_import(db: Path, backup: Path, env: dict[str, str], write: object) -> Path:
    """Copy ``backup`` over ``db`` (``cp``), call ``write`` (a write of the open
    session, which must be refused as a file put back), and import the sheet the
    refusal left beside ``db`` (``import --label-base 0``); returns the sheet."""
    subprocess.run(["cp", str(backup), str(db)], check=True)
    try:
        write()  # type: ignore[operator]
    except Exception as exc:
        assert type(exc).__name__ == "SessionFileReplacedError", str(exc)
    else:
        raise AssertionError("a write into a backup put back was not refused")
    (sheet,) = db.parent.glob(f"{db.stem}.unsaved-*.csv")
    got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    return sheet


def _annotation_rows(db: Path) -> list[tuple[object, ...]]:
    """Every row of ``db``'s ``annotations`` table, undone ones too, without its id and
    the time of an undo (whether it is undone kept)."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        return sorted((i, r, w, y, k, at, u is not None) for i, r, w, y, k, at, u in
                      con.execute("SELECT idx, role, annotator, label, kind, at, undone "
                                  "FROM annotations"))


def test_an_adjudication_put_back_comes_back_an_adjudication(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: the sheet beside a file put back had no column for an answer's kind, so an
    adjudication came back from ``import`` as an ordinary annotator's vote (and each
    page answer as an imported one): the agreement ``status`` shows counted the
    adjudicator among the voters. Now the sheet's ``annotation_kind`` column carries
    it, and the session after ``import`` is the one before the copy: its labels, its
    annotations (kind and time) and ``status``."""
    from activetest.session.annotators import Annotators

    env, db, backup = session_with_backup(pool_files, tmp_path)  # 4 draws, no answer yet
    s = Session.open(db)
    try:
        page = Annotators(s, overlap=1.0, reviews=2, resolve="skip")
        one, two, three, _ = (a.item_id for a in page.held("alice", ahead=3))
        page.answer("alice", one, [1])
        page.answer("bob", one, [0])  # they differ: unsettled ("skip")
        page.answer("carol", one, [0], adjudicate=True)  # the adjudicator settles it: 0
        page.answer("alice", two, [1])
        page.answer("bob", two, [0])  # unsettled, left so
        page.answer("alice", three, [1])
        labels, status = s.labels(), _status_json(db, env)
        before = _annotation_rows(db)
        assert labels == {one: 0, three: 1}
        assert "adjudication" in {k for *_, k, _, _ in before}
        sheet = _put_back_and_import(db, backup, env,
                                     lambda: page.answer("bob", three, [1]))
    finally:
        s.close()
    with sheet.open(newline="", encoding="utf-8") as f:
        kinds = {(r["item_id"], r["annotator"]): r["annotation_kind"]
                 for r in csv.DictReader(f) if r["annotator"]}
    assert kinds[(one, "carol")] == "adjudication" and kinds[(one, "alice")] == "answer"
    with Session.open(db) as s:
        assert s.labels() == labels
    assert _annotation_rows(db) == before
    assert _status_json(db, env) == status


def test_an_old_put_back_sheet_without_the_kind_column_imports_as_before(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A sheet written before the ``annotation_kind`` and ``undone`` columns: its
    annotators' answers come back as imported votes (kind ``import``), its labels as
    they were."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 2)
    with Session.open(db) as s:
        first, second = (a.item_id for a in s.pending())
    sheet = tmp_path / "s.unsaved-20261207T000000Z.csv"
    sheet.write_text("item_id,label,source,time,answer_of,annotator,ground_truth\n"
                     f"{first},1,labelling page (alice),2026-12-07T10:00:00+00:00,,,true\n"
                     f"{first},1,answer (alice),2026-12-07T10:00:00+00:00,,alice,\n"
                     f"{second},0,api,2026-12-07T10:00:01+00:00,,,\n", encoding="utf-8")
    got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    with Session.open(db) as s:
        assert s.labels() == {first: 1, second: 0}
    assert [r[2:5] for r in _annotation_rows(db)] == [("alice", 1, "import")]


def test_undos_of_what_the_backup_holds_are_carried_by_the_sheet(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: an undo of an answer the backup already held was not in the sheet beside the
    file put back (the undone answer was left out, the item's removed label was a row
    with an empty label, which ``import`` skips): after ``import`` the undone answer
    and its label were back. Now the sheet has a row for each, its ``undone`` cell
    the time of the undo, and ``import`` takes them back (the answer kept, marked
    undone; the label removed, in the history): the session is the one before the
    copy. Both undos: the page's (an annotator's answer) and the terminal's (a label,
    :meth:`Session.undo`)."""
    from activetest.session.annotators import Annotators

    env = cli_env(tmp_path)
    db, backup = tmp_path / "s.db", tmp_path / "backup.db"
    cli_session(pool_files, db, env, 4)
    s = Session.open(db)
    try:
        page = Annotators(s, overlap=0.0, resolve="skip")
        one, two, three, four = (a.item_id for a in s.pending())
        page.answer("alice", one, [1])  # the page's answer, held by the backup
        change = s.add_label(two, 0, source="api")  # the terminal's label, held alike
        s.add_label(three, 1, source="api")
        shutil.copyfile(db, backup)
        page.undo("alice")  # taken back after the backup: one unlabelled
        s.undo(change)  # and two
        page.answer("alice", four, [0])  # an answer the backup does not hold, undone
        page.undo("alice")
        labels, status = s.labels(), _status_json(db, env)
        before = _annotation_rows(db)
        assert labels == {three: 1} and sum(u for *_, u in before) == 2
        sheet = _put_back_and_import(db, backup, env,
                                     lambda: s.add_label(four, 1, source="api"))
    finally:
        s.close()
    with sheet.open(newline="", encoding="utf-8") as f:
        undone = sorted((r["item_id"], r["annotator"], r["label"], r["undone_label"])
                        for r in csv.DictReader(f) if r["undone"])
    # each undone row's label in undone_label, its label cell empty: an activetest from
    # before the undone column skips the row (it added the label back, QA)
    assert undone == sorted([(one, "", "", "1"), (one, "alice", "", "1"), (two, "", "", "0"),
                             (four, "", "", "0"), (four, "alice", "", "0")])
    with Session.open(db) as s:
        assert s.labels() == labels
        assert [(c.action, c.new) for c in s.store.label_history(s.store.index_of(one))][-1] \
            == ("undo", None)
    assert _annotation_rows(db) == before
    assert _status_json(db, env) == status


def test_a_sheets_own_undone_and_kind_columns_are_cells_like_any_other(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: the put-back sheet's ``undone`` and ``annotation_kind`` columns were read in
    any file: a sheet of a pool with its own ``undone`` column (a date) had its labels
    taken for labels taken back, left out without a word, and its own ``annotation_kind``
    cells refused the import. Only a file whose header is the put-back sheet's, as a
    whole, is read as that sheet; in any other those columns are the row's cells."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 3)
    with Session.open(db) as s:
        first, second, third = (a.item_id for a in s.pending())
    sheet = tmp_path / "mine.csv"
    sheet.write_text("item_id,label,undone,annotation_kind\n"
                     f"{first},1,2026-11-01,sentiment\n{second},0,,\n{third},1,no,x\n",
                     encoding="utf-8")
    got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert "imported 3 new label(s)" in got.stdout, got.stdout
    with Session.open(db) as s:
        assert s.labels() == {first: 1, second: 0, third: 1}
        # the put-back sheet's header, whole: its undone row (label in undone_label) is
        # a label taken back, not one given
        back = tmp_path / "s.unsaved-20261207T000000Z.csv"
        back.write_text(",".join(SHEET_COLUMNS) + "\n"
                        f"{first},,api,2026-12-07T10:00:00+00:00,,,,,"
                        f"2026-12-07T10:00:01+00:00,1\n", encoding="utf-8")
        assert s.import_file(back, label_base=0).taken_back == 1
        assert s.labels() == {second: 0, third: 1}
