"""The rows of the sheet a session file put back leaves that are no labels to add: an
answer's kind, and a label or an answer taken back (``annotation_kind``, ``undone``;
:mod:`activetest.session.put_back_rows`), read by ``import``: a graded comparison's
judgment taken back, and the refusals (another label held, an unknown kind), each
named with the file's line, the item and both sides. Real files, real sessions."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from session_support import PoolFiles, cli_command, cli_env, cli_session
from test_graded_compare import create, write_files

from activetest.session.workflow import Session


def test_a_compared_answers_judgment_taken_back_stays_taken_back(tmp_path: Path) -> None:
    """A graded comparison: a compared answer's judgment that the backup holds, undone,
    then the backup copied over the file: the sheet's row of that judgment is marked
    undone (its ``answer_of`` the compared target) and ``import`` takes it back."""
    pool, other, _, _ = write_files(tmp_path)
    db, backup = create(tmp_path, pool, other), tmp_path / "backup.db"
    spec = f"answers:{other.name}"
    with Session.open(db) as s:
        s.select(8)
        for a in s.acquisitions():
            s.add_label(a.item_id, "correct", source="api")
    s = Session.open(db)
    try:
        (first, second, *_) = (p.acquisition.item_id for p in s.pending_judgments())
        change = s.judge(first, "correct", target=spec, source="api")
        s.judge(second, "incorrect", target=spec, source="api")
        shutil.copyfile(db, backup)
        assert change is not None
        s.undo(change)
        judged = dict(s.store.judgments(f"compare:{spec}"))
        subprocess.run(["cp", str(backup), str(db)], check=True)
        try:
            s.judge(first, "incorrect", target=spec, source="api")
        except Exception as exc:
            assert type(exc).__name__ == "SessionFileReplacedError", str(exc)
        else:
            raise AssertionError("a write into a backup put back was not refused")
    finally:
        s.close()
    (sheet,) = tmp_path.glob("s.unsaved-*.csv")
    with Session.open(db) as s:
        assert len(s.store.judgments(f"compare:{spec}")) == 2  # the backup's
        got = s.import_file(sheet, label_base=0)
        assert got.taken_back == 1
        after = s.store.judgments(f"compare:{spec}")
        assert {i: j.label for i, j in after.items()} == {i: j.label for i, j in judged.items()}


def _sheet(path: Path, rows: list[str]) -> Path:
    path.write_text("item_id,label,source,time,answer_of,annotator,ground_truth,"
                    "annotation_kind,undone\n" + "".join(r + "\n" for r in rows),
                    encoding="utf-8")
    return path


def test_a_label_taken_back_that_the_session_holds_otherwise_is_refused(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A row that takes back label 1 of an item the session holds as 0: refused (exit 2,
    nothing imported), the file's line, the item and both labels named; with
    ``--overwrite`` the session's label is taken back (the history keeps it). An
    unknown ``annotation_kind``, or one on a row naming no annotator: refused alike."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 2)
    with Session.open(db) as s:
        first, second = (a.item_id for a in s.pending())
        s.add_label(first, 0, source="api")
        names = s.task.class_names
    when = "2026-12-07T10:00:00+00:00"

    def imp(sheet: Path, *more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0",
                                          *more), env=env, capture_output=True, text=True,
                              timeout=120)

    sheet = _sheet(tmp_path / "back.csv", [f"{second},1,api,{when},,,,,",
                                           f"{first},1,undo,{when},,,,,{when}"])
    got = imp(sheet)
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    err = " ".join(got.stderr.split())
    assert "back.csv, line 3" in err and repr(first) in err, err
    assert f"takes back label {names[1]!r}" in err and f"holds {names[0]!r}" in err, err
    with Session.open(db) as s:
        assert s.labels() == {first: 0}  # nothing imported
    got = imp(sheet, "--overwrite")
    assert got.returncode == 0, got.stderr
    assert "took back 1 label(s)" in " ".join(got.stdout.split()), got.stdout
    with Session.open(db) as s:
        assert s.labels() == {second: 1}
        hist = s.store.label_history(s.store.index_of(first))
        assert [(c.action, c.old, c.new) for c in hist] == [("add", None, 0),
                                                           ("undo", 0, None)]
    for row, words in ((f"{second},1,x,{when},,alice,,vote,", "'vote' is none of answer"),
                       (f"{second},1,x,{when},,,,answer,", "but no annotator")):
        got = imp(_sheet(tmp_path / "kind.csv", [row]))
        assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
        err = " ".join(got.stderr.split())
        assert "kind.csv, line 2" in err and words in err, err


def test_a_put_back_sheet_of_undone_rows_alone_is_not_written_over(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a put-back sheet holding only an undone row (its label in ``undone_label``, the
    ``label`` cell empty) counted 0 answers, so ``select --out`` replaced it. It is
    refused now (exit 2, the file, line and item named, nothing drawn), while the session
    still holds the label the row takes back; once taken back, it may be written over."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 2)
    with Session.open(db) as s:
        first, _ = (a.item_id for a in s.pending())
        s.add_label(first, 0, source="api")
        names = s.task.class_names
        drawn = len(s.acquisitions())
    when = "2026-12-07T10:00:00+00:00"
    sheet = tmp_path / "s.unsaved-20261207T100000.csv"
    sheet.write_text("item_id,label,source,time,answer_of,annotator,ground_truth,"
                     "annotation_kind,undone,undone_label\n"
                     f"{first},,api,{when},,,,,{when},{names[0]}\n", encoding="utf-8")
    before = sheet.read_bytes()

    def select() -> subprocess.CompletedProcess[str]:
        return subprocess.run(cli_command("select", str(db), "--n", "1", "--out", str(sheet)),
                              env=env, capture_output=True, text=True, timeout=120)

    got = select()
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    err = " ".join(got.stderr.split())
    assert f"{sheet.name}, line 2: item {first!r} {names[0]!r} taken back" in err, err
    assert sheet.read_bytes() == before
    with Session.open(db) as s:
        assert len(s.acquisitions()) == drawn  # nothing drawn
        s.import_file(sheet, label_base=0, overwrite=True)  # the take-back applied
        assert first not in s.labels()
    assert select().returncode == 0  # nothing left to lose


def test_a_put_back_sheets_own_labels_get_no_note_of_naming_no_annotator(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: importing a put-back sheet (a label row and an annotator's answer) said "1
    label(s) name no annotator ... each counts as a voter of its own" of the sheet's own
    label row, the session's label as it was. It is not said there; a sheet of people's
    own (no put-back header) with the same rows still gets the note."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 2)
    with Session.open(db) as s:
        first, second = (a.item_id for a in s.pending())
    when = "2026-12-07T10:00:00+00:00"
    back = tmp_path / "s.unsaved-20261207T100000.csv"
    back.write_text("item_id,label,source,time,answer_of,annotator,ground_truth,"
                    "annotation_kind,undone,undone_label\n"
                    f"{first},1,api,{when},,,,,,\n"
                    f"{second},0,import,{when},,alice,,import,,\n", encoding="utf-8")
    own = tmp_path / "mine.csv"
    own.write_text(f"item_id,label,annotator\n{first},1,\n{second},0,bob\n",
                   encoding="utf-8")
    for sheet, said in ((back, False), (own, True)):
        got = subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0"),
                             env=env, capture_output=True, text=True, timeout=120)
        assert got.returncode == 0, got.stderr
        out = " ".join(got.stdout.split())
        assert "kept 1 annotator label(s)" in out or not said, out
        assert ("1 label(s) name no annotator" in out) == said, (sheet, out)


def _session_with_label_named_fields(pool_files: PoolFiles, db: Path, env: dict[str, str],
                                     n: int) -> None:
    """A session at ``db`` (``n`` draws) whose items have fields named as the put-back
    sheet's label columns: a news ``source`` and a ``time`` of their own (a task whose
    template shows them, a pool with those columns)."""
    import csv

    for path in (pool_files.pool, pool_files.examples):
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow([*rows[0], "source", "time"])
            for k, row in enumerate(rows[1:]):
                w.writerow([*row, f"wire {k % 3}", f"2020-01-0{1 + k % 9}T00:00:00+00:00"])
    task = pool_files.dir / "news.toml"
    task.write_text('name = "news"\ninstruction = "Classify the review."\n'
                    'classes = ["negative", "positive"]\n[templates]\n'
                    'item = "From {source} at {time}: {text}\\n{answer_key}:"\n'
                    'example = "From {source} at {time}: {text}\\n{answer_key}: {label}\\n\\n"\n',
                    encoding="utf-8")
    for args in (["init", str(db), "--pool", str(pool_files.pool), "--id-column", "id",
                  "--task", str(task), "--examples", str(pool_files.examples),
                  "--surrogate", f"table:{pool_files.surrogate}",
                  "--target", f"table:{pool_files.target}", "--seed", "0", "--no-progress"],
                 ["select", str(db), "--n", str(n)]):
        got = subprocess.run(cli_command(*args), env=env, capture_output=True, text=True,
                             timeout=300)
        assert got.returncode == 0, got.stderr


def _import(db: Path, sheet: Path, env: dict[str, str], *more: str
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_command("import", str(db), str(sheet), "--label-base", "0", *more),
                          env=env, capture_output=True, text=True, timeout=120)


def test_put_back_sheets_of_every_layout_a_release_wrote_are_read_as_such(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a put-back sheet of the layouts before ``annotation_kind`` and ``undone`` (7
    columns, and the first, 5) was read as a person's sheet: each label came back as the
    import's (not the labelling page's own), and in a pool whose items have fields named
    ``source``, ``time`` or ``annotator`` its label cells were compared with them, and the
    whole sheet refused. Each layout is read as that sheet now (the label's cells are
    the label's, never item text; written by hand as those releases wrote them)."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    _session_with_label_named_fields(pool_files, db, env, 3)
    shutil.copyfile(db, tmp_path / "fresh.db")
    with Session.open(db) as s:
        one, two, three = (a.item_id for a in s.pending())
        assert s.items()[s.store.index_of(one)].fields["source"].startswith("wire")
    at = ("2026-12-07T10:00:00+00:00", "2026-12-07T10:00:01+00:00")
    layouts = {  # the writer of 6c014b1e (a row per label change), then of 05f55a3c
        "item_id,label,source,time,answer_of": [f"{one},1,web (alice),{at[0]},",
                                                f"{two},0,api,{at[1]},"],
        "item_id,label,source,time,answer_of,annotator,ground_truth": [
            f"{one},1,web (alice),{at[0]},,,true", f"{two},0,api,{at[1]},,,",
            f"{one},1,answer (alice),{at[0]},,alice,"]}
    for header, rows in layouts.items():
        shutil.copyfile(tmp_path / "fresh.db", db)
        sheet = tmp_path / "s.unsaved-20261207T100000Z.csv"
        sheet.write_text(header + "\n" + "".join(r + "\n" for r in rows), encoding="utf-8")
        got = _import(db, sheet, env)
        assert got.returncode == 0, (header, got.stderr)
        with Session.open(db) as s:
            held = s.store.labels(check=False)
            ids = s.store.item_ids()
            assert {ids[i]: (c.label, c.source) for i, c in held.items()} == {
                one: (1, "web (alice)"), two: (0, "api")}, header
            assert three not in s.labels()
    # a person's sheet of its own columns (not that header) still has its cells
    # compared with the item's fields of those names: one from another pool is refused
    mine = tmp_path / "mine.csv"
    mine.write_text(f"item_id,label,source\n{three},1,elsewhere\n", encoding="utf-8")
    got = _import(db, mine, env)
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    assert "source" in got.stderr and "elsewhere" in got.stderr, got.stderr


def test_labels_taken_back_in_the_older_layouts_are_taken_back_or_refused_never_skipped(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a label taken back was skipped unsaid by ``import`` in a put-back sheet of the
    layouts before ``undone_label`` where its row names no label (7 columns: a removed
    label was a row with an empty ``label`` cell), so the label the file put back held
    stayed. Written by hand as those releases wrote them: the 9-column sheet's undone
    rows (the label in ``label``, 7f3ecf4b) are taken back; a 7-column sheet's empty row
    (05f55a3c) is refused where the session holds a label for its item (which one the
    command took back is not said: exit 2, the line, item and label held named; nor is
    the sheet written over by ``select --out`` while so), taken back with
    ``--overwrite`` (the history keeps it), and takes nothing where the session holds
    none."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 4)
    with Session.open(db) as s:
        one, two, three, four = (a.item_id for a in s.pending())
        s.add_label(one, 1, source="api")
        s.add_label(two, 0, source="api")
        s.add_label(four, 1, source="api")
        names = s.task.class_names
    t0, t1 = "2026-12-07T10:00:00+00:00", "2026-12-07T10:00:05+00:00"
    nine = tmp_path / "s.unsaved-20261207T100000Z.csv"  # a label and an answer undone
    nine.write_text("item_id,label,source,time,answer_of,annotator,ground_truth,"
                    "annotation_kind,undone\n"
                    f"{one},1,undo,{t1},,,,,{t1}\n"
                    f"{one},1,answer (alice),{t0},,alice,,answer,{t1}\n", encoding="utf-8")
    got = _import(db, nine, env)
    assert got.returncode == 0, got.stderr
    assert "took back 1 label(s) and kept 1 annotator answer(s) undone" in " ".join(
        got.stdout.split()), got.stdout
    with Session.open(db) as s:
        assert s.labels() == {two: 0, four: 1}
    seven = tmp_path / "s.unsaved-20261207T100001Z.csv"
    seven.write_text("item_id,label,source,time,answer_of,annotator,ground_truth\n"
                     f"{two},,undo,{t1},,,\n{three},,undo,{t1},,,\n", encoding="utf-8")
    got = _import(db, seven, env)
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr
    err = " ".join(got.stderr.split())
    assert "1 label problem(s)" in err and f"{seven.name}, line 2: item {two!r}" in err, err
    assert f"holds {names[0]!r}" in err and "--overwrite" in err, err
    with Session.open(db) as s:
        assert s.labels() == {two: 0, four: 1}  # nothing imported
    # nor written over by the next round while its take-back is not applied
    sel = subprocess.run(cli_command("select", str(db), "--n", "1", "--out", str(seven)),
                         env=env, capture_output=True, text=True, timeout=120)
    said = " ".join(sel.stderr.split())
    assert sel.returncode == 2 and f"line 2: item {two!r}" in said, sel.stderr
    assert "taken back" in said and f"item {three!r}" not in said, said
    got = _import(db, seven, env, "--overwrite")
    assert got.returncode == 0, got.stderr
    with Session.open(db) as s:
        assert s.labels() == {four: 1}
        hist = s.store.label_history(s.store.index_of(two))
        assert [(c.action, c.old, c.new) for c in hist][-1] == ("undo", 0, None)
    # a 9-column row marked undone whose label cell is empty (no release wrote one, a
    # sheet edited so): a label taken back that it does not name, refused alike
    nine.write_text("item_id,label,source,time,answer_of,annotator,ground_truth,"
                    f"annotation_kind,undone\n{four},,undo,{t1},,,,,{t1}\n", encoding="utf-8")
    got = _import(db, nine, env)
    err = " ".join(got.stderr.split())
    assert got.returncode == 2 and f"line 2: item {four!r}" in err, got.stderr
    assert f"holds {names[1]!r}" in err, err
