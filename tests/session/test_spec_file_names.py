"""The session file names the answer logs and prediction tables of its model specs
without their local paths.

QA: ``init --target answers:/home/me/runs/samples.jsonl`` (graded) and ``--target
table:/home/me/runs/target.csv`` (classification) stored the absolute path in a file
users share: as the config's target and compared specs, as the store's roles
(``compare:<spec>``), in each answer's provenance and in the scores' provenance. New
sessions store each file by its name (two of one name by their shortest distinguishing
suffix) and, for a table a later command reads again (a PE target), its SHA-256; the
path is said on the terminal only. A session copied to another folder (or machine)
finds its table beside it or by ``$ACTIVETEST_FILES``, else refuses naming the file and
its digest; old session files keep their specs (tests/session/test_old_sessions.py).

The pool's and the examples' files (config ``pool.source``/``examples.source``, never read
again) are checked in tests/session/test_pool_source_names.py, not here: the sessions
made here name their pools too, but the assertions on the model specs' files are these.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from session_support import make_pool_files
from typer.testing import CliRunner

from activetest import Session
from activetest.cli import app
from activetest.session.store import SessionError

DATA = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"
LMEVAL = next((DATA / "lmeval").glob("samples_*.jsonl"))


def _run(*args: object, code: int = 0) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == code, (res.exit_code, res.output, res.exception)
    assert "Traceback" not in res.output
    return res.output


def _dump(db: Path) -> str:
    """Every text the session file holds (read with sqlite3, not the library)."""
    con = sqlite3.connect(db)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def _config(db: Path) -> dict:
    con = sqlite3.connect(db)
    try:
        (doc,) = con.execute("SELECT json FROM config").fetchone()
    finally:
        con.close()
    return json.loads(doc)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _estimates(db: Path) -> dict[str, float]:
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    out = {k: m.active.estimate for k, m in r.metrics.items()}
    for c in r.comparisons:
        out[f"{c.spec}/{c.metric}"] = c.other.estimate
    return out


def test_a_graded_sessions_answer_logs_are_named_by_their_names(tmp_path: Path) -> None:
    """The target's and two compared answer logs of one file name in two private folders:
    stored as ``answers:<distinguishing suffix>?options`` everywhere (config, roles,
    answers' provenance), said with their paths at init; the session copied to another
    folder (the logs left behind) labels and estimates as the original does."""
    private = tmp_path / "home" / "me"
    logs = []
    for run in ("run1", "run2", "run3"):
        (private / run).mkdir(parents=True)
        logs.append(shutil.copy(LMEVAL, private / run / LMEVAL.name))
    logs = [Path(p) for p in logs]
    db = tmp_path / "s.db"
    out = _run("init", db, "--task", "answers", "--pool", logs[0], "--target",
               f"answers:{logs[0]}?filter=none", "--compare", f"answers:{logs[1]}?filter=none",
               "--compare", f"answers:{logs[2]}?filter=none", "--surrogate", "uniform",
               "--seed", "2", "--no-progress")
    text = _dump(db)
    assert str(private) not in text and "home/me" not in text, text[:2000]
    cfg = _config(db)
    names = [f"answers:{r}/{LMEVAL.name}?filter=none" for r in ("run1", "run2", "run3")]
    assert cfg["target"] == names[0] and cfg["compare"] == names[1:]
    assert set(cfg["answer_files"]) == {"target", *(f"compare:{n}" for n in names[1:])}
    assert all(f["sha256"] == _sha(LMEVAL) for f in cfg["answer_files"].values())
    for log in logs:  # the paths: said, not stored
        assert str(log) in " ".join(out.split())
    with Session.open(db) as s:
        assert s.compared_targets() == names[1:]
        # a compared log named by its path, as given at init, is the stored one
        assert s.compared_answer(s.items()[0].id, f"answers:{logs[1]}?filter=none") == \
            s.compared_answer(s.items()[0].id, names[1])
    moved = tmp_path / "elsewhere" / "s.db"
    moved.parent.mkdir()
    shutil.copy(db, moved)
    shutil.rmtree(private)  # another machine: the logs are not there
    results = []
    for path in (db, moved):
        with Session.open(path) as s:
            s.select(s.n_items)
            s.label_from_data()  # (the compared answers are the target's: judged so)
        results.append(_estimates(path))
    assert results[0] == pytest.approx(results[1], abs=1e-12)
    assert set(results[0]) >= {f"{n}/error_rate" for n in names[1:]}


def _pe_session(root: Path, db: Path, *, streamed: bool) -> tuple[Path, Path, Path]:
    """A PE session (the target read on the labelled items only) over a private folder's
    tables, created by the streaming path or the general one (--examples); returns the
    target's and the compared model's tables, and the folder."""
    files = make_pool_files(root / "home" / "me" / "preds")
    extra = () if streamed else ("--examples", files.examples, "--shots", "2")
    out = _run("init", db, "--pool", files.pool, "--task", "sst2", "--surrogate",
               f"table:{files.surrogate}", "--target", f"table:{files.target}?kind=logprobs",
               "--compare", f"table:{files.target2}", "--id-column", "id", "--acquisition",
               "pe", "--seed", "3", *extra, "--no-progress")
    assert str(files.target) in " ".join(out.split())  # said with its path
    return files.target, files.target2, files.dir


def _made_pe_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
                     streamed: bool = True) -> tuple[Path, Path, Path, Path]:
    """On the machine that makes it (its cache in ``tmp_path/cache``, no
    ``$ACTIVETEST_FILES``): :func:`_pe_session` at ``tmp_path/made/s.db``; returns the
    session file, the target's and the compared model's tables, and their folder."""
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("ACTIVETEST_FILES", raising=False)
    db = tmp_path / "made" / "s.db"
    db.parent.mkdir()
    return (db, *_pe_session(tmp_path, db, streamed=streamed))


def _compared_only_at_estimate(tmp_path: Path, target2: Path) -> Path:
    """The compared model's table copied to another private folder as ``new.csv`` (a
    table first compared at ``estimate``): the copy (``home/me/other/new.csv``)."""
    other = tmp_path / "home" / "me" / "other"
    other.mkdir()
    return Path(shutil.copy(target2, other / "new.csv"))


@pytest.mark.parametrize("streamed", [True, False])
def test_a_pe_targets_table_is_named_by_its_name_and_found_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool) -> None:
    """A PE session's tables are stored by name with their digests; on the machine that
    made it the target is read where it was (the session moved to another folder); on
    another machine (no record of it) it is refused by name and digest, found beside the
    session file or by $ACTIVETEST_FILES, and a file of that name with other content is
    refused; every way gives the numbers the original gives."""
    db, target, target2, folder = _made_pe_session(tmp_path, monkeypatch, streamed=streamed)
    text = _dump(db)
    assert str(folder) not in text and "home/me" not in text and "preds/" not in text
    cfg = _config(db)
    assert cfg["target"] == "table:target.csv?kind=logprobs"
    assert cfg["compare"] == ["table:target2.csv"]
    assert cfg["model_files"]["table:target.csv?kind=logprobs"] == _sha(target)
    assert cfg["model_files"]["table:target2.csv"] == _sha(target2)
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
    copies = {}
    for name in ("moved", "no_file", "beside", "by_env", "other"):
        copies[name] = tmp_path / name / "s.db"
        copies[name].parent.mkdir()
        shutil.copy(db, copies[name])
    for path in copies.values():  # the next labels: the target is read again for them
        with Session.open(path) as s:
            s.select(10)
            s.label_from_data()
    want = _estimates(copies["moved"])  # this machine: found where it was
    assert "home/me" not in _dump(copies["moved"])
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "another-machine"))
    with Session.open(copies["no_file"]) as s, pytest.raises(SessionError) as err:
        s.estimate(record=False, progress=False)
    msg = str(err.value)
    assert "'target.csv'" in msg and _sha(target) in msg and "ACTIVETEST_FILES" in msg
    assert str(copies["no_file"].parent) in msg
    out = _run("estimate", copies["no_file"], "--no-progress", code=2)
    assert "target.csv" in out and _sha(target) in " ".join(out.split())
    shutil.copy(target, copies["beside"].parent / "target.csv")
    assert _estimates(copies["beside"]) == pytest.approx(want, abs=1e-12)
    monkeypatch.setenv("ACTIVETEST_FILES", str(folder))
    assert _estimates(copies["by_env"]) == pytest.approx(want, abs=1e-12)
    monkeypatch.delenv("ACTIVETEST_FILES")
    shutil.copy(target2, copies["other"].parent / "target.csv")  # other content
    out = " ".join(_run("estimate", copies["other"], "--no-progress", code=2).split())
    assert "has other content" in out and _sha(target2) in out
    for path in copies.values():
        assert "home/me" not in _dump(path) and str(folder) not in _dump(path)


def test_a_compared_table_named_by_its_path_is_the_stored_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``estimate --compare table:/its/path`` of a model compared at init is that model
    (named by its name and digest), not a second one stored under its path."""
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "s.db"
    _, target2, folder = _pe_session(tmp_path, db, streamed=True)
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
        r = s.estimate(compare=[f"table:{target2}"], record=False, progress=False)
    assert {c.spec for c in r.comparisons} == {"table:target2.csv"}
    assert str(folder) not in _dump(db)


def _roles(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r for (r,) in con.execute("SELECT role FROM scores")}
    finally:
        con.close()


def test_a_table_compared_only_at_estimate_is_named_by_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: ``estimate --compare table:/home/me/other/new.csv`` of a new session stored the
    role ``compare:table:/home/me/other/new.csv`` and the path in its provenance. It is
    now stored by name (a name another stored table has: by a longer suffix) with its
    digest; the same file given by its path or by its stored name is the same role, and
    a copy of the session on another machine finds it beside the session file."""
    db, target, target2, _ = _made_pe_session(tmp_path, monkeypatch)
    new = _compared_only_at_estimate(tmp_path, target2)
    other = new.parent
    clash = Path(shutil.copy(target, other / "target2.csv"))  # a stored name, other content
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
    out = " ".join(_run("estimate", db, "--compare", f"table:{new}", "--compare",
                        f"table:{clash}", "--no-progress").split())
    assert "table:new.csv" in out and "table:other/target2.csv" in out
    text = _dump(db)
    assert "home/me" not in text and str(other) not in text, text[-3000:]
    assert {"compare:table:new.csv", "compare:table:other/target2.csv"} <= _roles(db)
    files = _config(db)["model_files"]
    assert files["table:new.csv"] == _sha(new)
    assert files["table:other/target2.csv"] == _sha(clash)
    monkeypatch.chdir(tmp_path)  # (no new.csv here)
    with Session.open(db) as s:
        s.select(5)
        s.label_from_data()  # (the compared tables: read again for the new labels)
        by_path = s.estimate(compare=[f"table:{new}"], record=False, progress=False)
        by_name = s.estimate(compare=["table:new.csv"], record=False, progress=False)
    # (init's compared table:target2.csv is compared at every estimate besides)
    assert {c.spec for c in by_path.comparisons} == {"table:target2.csv", "table:new.csv"}
    assert [(c.spec, c.other.estimate) for c in by_path.comparisons] == \
        [(c.spec, c.other.estimate) for c in by_name.comparisons]
    assert "home/me" not in _dump(db)
    moved = tmp_path / "another" / "s.db"
    moved.parent.mkdir()
    shutil.copy(db, moved)
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "another-machine"))
    shutil.copy(target, moved.parent / "target.csv")
    shutil.copy(target2, moved.parent / "target2.csv")
    with Session.open(moved) as s, pytest.raises(SessionError) as err:
        s.select(5)
        s.label_from_data()
        s.estimate(compare=["table:new.csv"], record=False, progress=False)
    assert "'new.csv'" in str(err.value) and _sha(new) in str(err.value)
    shutil.copy(new, moved.parent / "new.csv")
    with Session.open(moved) as s:
        s.label_from_data()
        r = s.estimate(compare=["table:new.csv"], record=False, progress=False)
    assert {c.spec for c in r.comparisons} == {"table:target2.csv", "table:new.csv"}
    assert "home/me" not in _dump(moved)


def test_a_table_scorer_passed_in_is_named_by_its_name_in_the_provenance(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: ``Session.open(db, scorers={'table:target.csv?kind=logprobs': TableScorer(path)})``
    (the way a refusal points to) wrote the path into the provenance of the target's rows
    it scored, as did a TableScorer compared as an object; both are named by name."""
    from activetest.models.table import TableScorer

    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    db = tmp_path / "s.db"
    target, target2, folder = _pe_session(tmp_path, db, streamed=True)
    spec = "table:target.csv?kind=logprobs"
    with Session.open(db, scorers={spec: TableScorer(target, kind="logprobs")}) as s:
        s.select(10)
        s.label_from_data()
        s.estimate(compare=[TableScorer(target2)], progress=False)
    text = _dump(db)
    assert str(folder) not in text and "home/me" not in text, text[-3000:]


def test_a_table_given_by_its_bare_path_is_named_by_its_name(tmp_path: Path) -> None:
    """QA: ``init --surrogate /home/me/preds/surrogate.csv --target .../target.csv`` (a
    table's path without ``table:``, which the registry reads as a table) stored both
    paths. They are stored as ``table:<name>`` with their digests, and the session gives
    the numbers the same session made with ``table:`` gives."""
    files = make_pool_files(tmp_path / "home" / "me" / "preds")
    dbs = {}
    for how in ("bare", "prefixed"):
        pre = "" if how == "bare" else "table:"
        dbs[how] = tmp_path / f"{how}.db"
        _run("init", dbs[how], "--pool", files.pool, "--task", "sst2", "--surrogate",
             f"{pre}{files.surrogate}", "--target", f"{pre}{files.target}", "--compare",
             f"{pre}{files.target2}", "--id-column", "id", "--seed", "3", "--no-progress")
        with Session.open(dbs[how]) as s:
            s.select(15)
            s.label_from_data()
    text = _dump(dbs["bare"])
    assert "home/me" not in text and str(files.dir) not in text, text[:3000]
    cfg = _config(dbs["bare"])
    assert (cfg["surrogate"], cfg["target"], cfg["compare"]) == \
        ("table:surrogate.csv", "table:target.csv", ["table:target2.csv"])
    assert cfg["model_files"] == _config(dbs["prefixed"])["model_files"]
    assert _estimates(dbs["bare"]) == pytest.approx(_estimates(dbs["prefixed"]), abs=1e-12)


def test_a_judges_table_is_named_by_its_name(tmp_path: Path) -> None:
    """QA: a graded session's ``--surrogate judge:table:/home/me/j/judge.csv`` (a judge's
    yes/no scores read from a table at init) stored the path as the surrogate's spec; it
    is stored as ``judge:table:judge.csv``, said with its path at init; a copy of the
    file in another folder gives the same surrogate, to the bit."""
    private = tmp_path / "home" / "me" / "j"
    private.mkdir(parents=True)
    ids = []
    for line in LMEVAL.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        ids.append(str(rec["doc_id"]))
    judge = private / "judge.csv"
    rng = random.Random(5)
    rows = ["id,no,yes"]
    for i in dict.fromkeys(ids):  # (one record per filter)
        p = rng.uniform(0.05, 0.95)
        rows.append(f"{i},{math.log1p(-p)!r},{math.log(p)!r}")
    judge.write_text("\n".join(rows) + "\n", encoding="utf-8")
    judged = private / "judged.csv"
    judged.write_text("question,answer,judgment\nWhat is 2+2?,4,correct\n"
                      "What is 3+3?,7,incorrect\n", encoding="utf-8")
    db = tmp_path / "s.db"
    out = _run("init", db, "--task", "answers", "--pool", LMEVAL, "--target",
               f"answers:{LMEVAL}?filter=none", "--surrogate", f"judge:table:{judge}",
               "--judge-examples", judged, "--seed", "2", "--no-progress")
    assert str(judge) in " ".join(out.split())
    text = _dump(db)
    assert "home/me" not in text and str(private) not in text, text[:3000]
    assert _config(db)["surrogate"] == "judge:table:judge.csv"
    copy = tmp_path / "other" / "judge.csv"
    copy.parent.mkdir()
    shutil.copy(judge, copy)
    db2 = tmp_path / "s2.db"
    _run("init", db2, "--task", "answers", "--pool", LMEVAL, "--target",
         f"answers:{LMEVAL}?filter=none", "--surrogate", f"judge:table:{copy}",
         "--judge-examples", judged, "--seed", "2", "--no-progress")
    stored = []
    for path in (db, db2):
        with Session.open(path) as s:
            sur = s.store.scores("surrogate")
            assert sur is not None and sur.spec == "judge:table:judge.csv"
            stored.append(sur.logprobs)
    assert (stored[0] == stored[1]).all()


def test_an_edited_or_another_same_named_compared_table_is_checked_or_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a table compared at estimate (stored as ``table:new.csv`` with its digest),
    edited in place and given again by its path, became another model under a longer
    name (``table:other/new.csv``) and the changed-model check, which guards an edited
    target or compared file, never ran for it: the same model's numbers came out twice,
    from two files. It is now the stored spec, and the check refuses the edit that
    changed its earlier rows. And ``--compare table:new.csv`` run in a folder holding
    another ``new.csv`` used the stored file without a word: it is refused, naming both
    files and digests; the local file given by its path is another model, as before."""
    db, target, target2, _ = _made_pe_session(tmp_path, monkeypatch)
    new = _compared_only_at_estimate(tmp_path, target2)
    stored = _sha(new)
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
        s.estimate(compare=[f"table:{new}"], record=False, progress=False)
    assert _config(db)["model_files"]["table:new.csv"] == stored
    # another file of that name where the command runs: refused, both named
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    local = Path(shutil.copy(target, elsewhere / "new.csv"))
    monkeypatch.chdir(elsewhere)
    out = " ".join(_run("estimate", db, "--compare", "table:new.csv", "--no-progress",
                        code=2).split())
    assert f"'table:new.csv' names {local} here (sha256 {_sha(local)})" in out, out
    assert f"the session's file of that name is {new} (sha256 {stored})" in out, out
    assert f"give its path (table:{local})" in out, out
    by_path = _run("estimate", db, "--compare", f"table:{local}", "--no-progress")
    assert "table:elsewhere/new.csv" in by_path  # another model, by its own name
    monkeypatch.chdir(tmp_path)
    # the stored file edited in place, given again by its path: the stored spec, checked
    shutil.copy(target, new)  # another model's predictions in the same file
    with Session.open(db) as s:
        s.select(5)
        s.label_from_data()  # new labelled rows: the compared table is read for them
        with pytest.raises(SessionError, match=r"model 'table:new\.csv' \(compare:table:"
                                               r"new\.csv\) is not the one that scored"):
            s.estimate(compare=[f"table:{new}"], record=False, progress=False)
    assert "compare:table:other/new.csv" not in _roles(db)
    shutil.copy(target2, new)  # restored: the same model again
    with Session.open(db) as s:
        r = s.estimate(compare=[f"table:{new}"], record=False, progress=False)
    assert {c.spec for c in r.comparisons} == {"table:target2.csv", "table:new.csv"}
    assert "compare:table:other/new.csv" not in _roles(db)


def _swap_classes(src: Path, dst: Path) -> None:
    """``src``'s table with its two class columns' values swapped (same ids, same size),
    written to ``dst``: another model's predictions under the same name."""
    lines = src.read_bytes().split(b"\r\n")  # (as csv writes it)
    out = [lines[0]]
    for line in lines[1:]:
        i, a, b = line.split(b",") if line else (b"", b"", b"")
        out.append(b",".join((i, b, a)) if line else b"")
    dst.write_bytes(b"\r\n".join(out))


def test_an_edited_pe_target_is_refused_until_stored_scores_can_check_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a PE session's ``table:`` target, labelled (its rows not yet read), then
    overwritten with its class columns swapped (same ids): ``estimate`` printed another
    model's risk (2.51 where the truth was about 0.24) and stored those scores, so
    restoring the file did not undo it. The file recorded where it was is used whatever
    its SHA-256 only where the changed-model check can confirm it (stored rows of that
    role); with none it is refused, naming the file and both digests, nothing stored;
    the original named by $ACTIVETEST_FILES, or restored, gives the original's numbers.
    An edit that only adds rows (the scored ones unchanged) keeps working."""
    db, target, _, _ = _made_pe_session(tmp_path, monkeypatch)
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
    control = tmp_path / "control" / "s.db"
    control.parent.mkdir()
    shutil.copy(db, control)
    want = _estimates(control)  # (the original file: the truth of this session)
    original = tmp_path / "kept" / "target.csv"
    original.parent.mkdir()
    shutil.copy(target, original)
    stored = _sha(target)
    _swap_classes(original, target)
    edited = _sha(target)
    assert edited != stored
    out = " ".join(_run("estimate", db, "--no-progress", code=2).split())
    assert str(target) in out and stored in out and edited in out, out
    assert "ACTIVETEST_FILES" in out, out
    with Session.open(db) as s, pytest.raises(SessionError, match="changed since"):
        s.estimate(record=False, progress=False)
    with Session.open(db) as s:  # nothing of it stored
        t = s.store.scores("target")
        assert t is None or not np.isfinite(t.logprobs).any()
    from activetest.models.table import TableScorer

    spec = "table:target.csv?kind=logprobs"  # (in Python, the file passed in: the same)
    with Session.open(db, scorers={spec: TableScorer(target, kind="logprobs")}) as s, \
            pytest.raises(SessionError, match="changed since"):
        s.estimate(record=False, progress=False)
    monkeypatch.setenv("ACTIVETEST_FILES", str(original.parent))  # the original: found
    assert _estimates(db) == pytest.approx(want, abs=1e-12)
    monkeypatch.delenv("ACTIVETEST_FILES")
    # rows now stored: the edited file is checked against them, and refused
    with Session.open(db) as s, pytest.raises(SessionError, match="not the one that scored"):
        s.select(5)
        s.label_from_data()
        s.estimate(record=False, progress=False)
    shutil.copy(original, target)  # restored: the original's numbers
    with Session.open(control) as s:
        s.select(5)
        s.label_from_data()
    want = _estimates(control)
    assert _estimates(db) == pytest.approx(want, abs=1e-12)
    # an edit that keeps the file's size and mtime (its identity): checked all the same
    from activetest.session import source_names

    st = target.stat()
    _swap_classes(original, target)
    assert target.stat().st_size == st.st_size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    monkeypatch.setattr(source_names, "_DIGESTS", {})  # (as a new process reads it)
    with Session.open(db) as s, pytest.raises(SessionError, match="not the one that scored"):
        s.select(5)
        s.label_from_data()
        s.estimate(record=False, progress=False)
    shutil.copy(original, target)
    with Session.open(control) as s:
        s.select(5)
        s.label_from_data()
    # an edit that only adds rows: the stored rows confirm it
    with target.open("a", encoding="utf-8") as fh:
        fh.write(f"extra1,{math.log(0.4)!r},{math.log(0.6)!r}\n")
    assert _sha(target) != stored
    for path in (db, control):
        with Session.open(path) as s:
            s.select(5)
            s.label_from_data()
    assert _estimates(db) == pytest.approx(_estimates(control), abs=1e-12)


def test_status_says_when_a_kept_glob_path_matches_nothing_here(tmp_path: Path) -> None:
    """lm-eval globs keep their paths in the session file (module docstring): once the
    run folder is gone (moved, or the session read on another machine) ``status`` says
    beside the spec that it is the path recorded at init and that nothing is there,
    instead of printing it as files in use; while the files are there, nothing is said."""
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(samples, run / samples.name)
    pattern = run / "samples_*.jsonl"
    db = tmp_path / "s.db"
    _run("init", db, "--pool", pattern, "--task", "sst2", "--surrogate", f"table:{pattern}",
         "--target", f"table:{pattern}", "--seed", "3", "--no-progress")
    spec = _config(db)["target"]
    assert spec == f"table:{pattern}"  # kept, path and all
    said = "(the path recorded at init; nothing is there on this machine)"
    assert said not in " ".join(_run("status", db).split())
    run.rename(tmp_path / "moved")
    out = " ".join(_run("status", db).split())
    assert f"target {spec} {said}; surrogate {spec} {said};" in out, out
    with Session.open(db) as s:
        assert s.status().absent_paths == (spec,)
