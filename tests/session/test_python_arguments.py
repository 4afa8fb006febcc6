"""The session's Python API names a bad argument (a ValueError, nothing stored), on a real
session file made through the real CLI."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from session_support import make_pool_files, run_cli

from activetest.session.workflow import Session


def _session(tmp_path: Path) -> Path:
    files = make_pool_files(tmp_path / "data", n=40)
    db = tmp_path / "p.db"
    run_cli("init", db, "--pool", files.pool, "--id-column", "id", "--task", "demo",
            "--surrogate", f"table:{files.surrogate}", "--target", f"table:{files.target}",
            "--seed", 0, "--no-progress")
    run_cli("select", db, "--n", 5)
    return db


def test_label_from_data_and_compare_name_a_bad_argument(tmp_path: Path) -> None:
    """QA: label_from_data(limit=-1) labelled nothing, silently, and limit="a" went
    unchecked until an item was pending (then Python's "'>=' not supported");
    estimate(compare=5) raised "'int' object has no attribute 'score'"."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        for bad in (-1, "a", 2.5):
            with pytest.raises(ValueError, match=r"limit must be a whole number of labels "
                                                 r">= 0, or None .*got "):
                s.label_from_data(bad)  # type: ignore[arg-type]
        assert s.labels() == {}
        assert s.label_from_data(2) == 2
        s.label_from_data()
        for bad in (5, [5], ["table:x.csv", 2.5], 0, False):
            with pytest.raises(ValueError, match=r"compare(\[\d\])?: .* is neither a model "
                                                 r"spec \(a string, e\.g\. "
                                                 r"'table:other\.csv'\) nor a model object"):
                s.estimate(compare=bad, record=False, progress=False)
        with pytest.raises(ValueError, match=r"compare: '' is an empty model spec"):
            s.estimate(compare="", progress=False)
        for kw in ({"record": "no"}, {"progress": None}):
            with pytest.raises(ValueError, match=rf"{next(iter(kw))} must be True or False, "):
                s.estimate(**kw)  # type: ignore[arg-type]
        assert s.estimates_history() == []


def test_add_labels_names_records_that_are_no_collection(tmp_path: Path) -> None:
    """QA: add_labels(None) and add_labels(5) raised Python's "'NoneType' object is not
    iterable" (a string was already named); nothing is stored. The argument is named as
    it is called, ``records`` (QA: "labels must be ...")."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        for bad in (None, 5):
            with pytest.raises(TypeError, match=r"^records must be \(item_id, label\) pairs "
                                                r"or a mapping item_id -> label, got "):
                s.add_labels(bad)  # type: ignore[arg-type]
        assert s.labels() == {}


def test_a_label_source_that_is_no_string_is_named(tmp_path: Path) -> None:
    """QA: add_label(..., source=5) or source=None stored the label with a non-string
    source (history() then showed 5 / None); refused by name, nothing stored."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        item = s.pending()[0].item_id
        for bad in (5, None, "", b"api"):
            with pytest.raises(ValueError, match=r"source must be a non-empty string naming "
                                                 r"where the labels come from .*got "):
                s.add_label(item, 0, source=bad)  # type: ignore[arg-type]
        assert s.labels() == {}
        s.add_label(item, 0, source="api")
        assert s.labels() == {item: 0}


@pytest.mark.parametrize(("kw", "message"), [
    ({"predictions": "no"}, "predictions must be True or False, got str 'no'"),
    ({"predictions": None}, "predictions must be True or False, got NoneType None"),
    ({"overwrite": "no"}, "overwrite must be True or False, got str 'no'"),
    ({"acquisitions": 5}, "acquisitions must be a list of this session's draws .*got int 5"),
    ({"acquisitions": [1, 2]}, r"acquisitions\[0\] = 1 is no Acquisition \(a int\)"),
    ({"format": 5}, "format must be one of csv, tsv, jsonl, json, labelstudio, got 5"),
    ({"path": None}, r"path must be a path naming a file \(a string or a pathlib\.Path\), got "
                     r"NoneType None"),
    ({"path": 5}, "path must be a path naming a file .*got int 5"),
    ({"path": ""}, "path must name a file, got ''"),
])
def test_export_names_a_bad_argument_and_writes_nothing(tmp_path: Path, kw: dict[str, Any],
                                                        message: str) -> None:
    """QA: export(predictions="no") wrote the surrogate's guesses and overwrite="no" wrote
    over a filled sheet (both read as yes), acquisitions=5 raised "'int' object is not
    iterable" and [1, 2] "'int' object has no attribute 'index'", path=None Python's
    "expected str, bytes or os.PathLike object"."""
    db = _session(tmp_path)
    out = tmp_path / "sheet.csv"
    with Session.open(db) as s, pytest.raises(ValueError, match=message):
        s.export(kw.pop("path", out), **kw)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "p.db"]


def test_export_refuses_a_draw_that_is_not_this_sessions(tmp_path: Path) -> None:
    """A draw whose row is another item's (another session's, or one edited) would export
    the wrong item: refused, naming it; the session's own draws export."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        a = s.acquisitions()[0]
        foreign = dataclasses.replace(a, index=(a.index + 1) % s.n_items)
        with pytest.raises(ValueError, match=r"acquisitions\[1\] = Acquisition\(.* is no draw "
                                             r"of this session"):
            s.export(tmp_path / "x.csv", acquisitions=[a, foreign])
        assert not (tmp_path / "x.csv").exists()
        assert s.export(tmp_path / "x.csv", acquisitions=s.acquisitions()[:2]) == 2


@pytest.mark.parametrize(("kw", "message", "error"), [
    ({"overwrite": "no"}, "overwrite must be True or False, got str 'no'", ValueError),
    ({"trust_people": "yes"}, "trust_people must be True or False, got str 'yes'", ValueError),
    ({"ids_are_positions": None}, "ids_are_positions must be True or False, got NoneType",
     ValueError),
    ({"format": 5}, r"format must be one of csv, tsv, jsonl, json, labelstudio, or None \(from "
                    r"the suffix\), got int 5", ValueError),
    ({"id_column": 5}, r"id_column must be a column name \(a non-empty string\), got int 5",
     ValueError),
    ({"label_column": None}, "label_column must be a column name .*got NoneType None",
     ValueError),
    ({"from_name": 3}, r"from_name must be a column name \(a non-empty string\), or None, got "
                       r"int 3", ValueError),
    ({"bogus": 1}, r"import_file\(\) got an unknown option 'bogus'; its options are "
                   r"id_column, label_column, from_name, label_base", TypeError),
    ({"path": None}, "path must be a path naming a file .*got NoneType None", ValueError),
    ({"path": ""}, "path must name a file, got ''", ValueError),
])
def test_import_file_names_a_bad_argument_and_stores_nothing(
        tmp_path: Path, kw: dict[str, Any], message: str, error: type[Exception]) -> None:
    """QA: import_file(overwrite="no"), trust_people="yes" and ids_are_positions="no" were
    read as yes; format=5 raised "'int' object has no attribute 'lower'", id_column=5 was
    looked up as a column named 5, an unknown option was Python's "import_labels() got an
    unexpected keyword argument", path=None Python's TypeError."""
    db = _session(tmp_path)
    sheet = tmp_path / "sheet.csv"
    with Session.open(db) as s:
        s.export(sheet)
        rows = sheet.read_text().splitlines()
        sheet.write_text("\n".join([rows[0]] + [r + "positive" for r in rows[1:]]) + "\n")
        with pytest.raises(error, match=message):
            s.import_file(kw.pop("path", sheet), **kw)
        assert s.labels() == {} and s.history() == []
        assert s.import_file(sheet).added == len(rows) - 1  # the sheet itself is good


def test_label_from_data_and_judgments_name_a_source_that_is_no_string(
        tmp_path: Path) -> None:
    """QA: label_from_data(source=5) stored each label's source as '5', source="" as an
    empty one (add_label refused both), and undo(source=5) stored the revert's as 5."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        for bad in (5, "", None):
            with pytest.raises(ValueError, match=r"source must be a non-empty string naming "
                                                 r"where the labels come from .*got "):
                s.label_from_data(1, source=bad)  # type: ignore[arg-type]
        assert s.labels() == {} and s.history() == []
        item = s.pending()[0].item_id
        with pytest.raises(ValueError, match="overwrite must be True or False, got str 'no'"):
            s.add_label(item, 0, overwrite="no")  # type: ignore[arg-type]
        assert s.labels() == {}
        change = s.add_label(item, 0)
        assert change is not None
        with pytest.raises(ValueError, match=r"source must be a non-empty string .*got int 5"):
            s.undo(change, source=5)  # type: ignore[arg-type]  # (QA: stored as 5)
        assert s.labels() == {item: 0} and len(s.history()) == 1


@pytest.mark.parametrize(("kw", "message"), [
    ({"n_points": 0}, r"n_points must be a whole number of label counts >= 2 .*got int 0"),
    ({"n_points": True}, "n_points must be .*got bool True"),
    ({"n_points": "a"}, "n_points must be .*got str 'a'"),
    ({"title": 5}, r"title must be a non-empty string, or None \(the default title\), got int 5"),
    ({"notes": "abc"}, r"notes must be a list or tuple of strings \(one per note\), got str "
                       r"'abc'"),
    ({"notes": ["ok", 5]}, "notes must be .*got int 5 in it"),
    ({"truth": 5}, r"truth must be a mapping metric -> true value .*got int 5"),
    ({"truth": {"log_loss": "a"}}, "truth must map metric names to numbers, got 'log_loss': "
                                   "str 'a'"),
    ({"progress": "no"}, "progress must be True or False, got str 'no'"),
    ({"compare": 0}, "compare: 0 is neither a model spec"),
])
def test_report_data_and_write_report_name_a_bad_option_before_estimating(
        tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    """QA: report_data(truth=5) raised "'int' object has no attribute 'items'",
    n_points="a" Python's "'<' not supported", n_points=0 or True drew one point,
    title=5 was the title 5, notes="abc" three notes "a", "b", "c"; nothing is scored,
    recorded or written."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        s.label_from_data()
        roles = s.store.score_roles()
        with pytest.raises(ValueError, match=message):
            s.report_data(**kw)
        with pytest.raises(ValueError, match=message):
            s.write_report(tmp_path / "report", **kw)
        assert s.store.score_roles() == roles and s.estimates_history() == []
    assert not (tmp_path / "report").exists()


def test_write_report_names_itself_and_its_keywords_for_an_unknown_one(
        tmp_path: Path) -> None:
    """QA: write_report(out, level=0.9) raised Python's "Session.report_data() got an
    unexpected keyword argument", naming a method not called and not saying what
    write_report takes; nothing is estimated, recorded or written."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        s.label_from_data()
        roles = s.store.score_roles()
        with pytest.raises(TypeError) as e:
            s.write_report(tmp_path / "report", html=False, level=0.9,  # type: ignore[call-arg]
                           seed=1)
        assert str(e.value) == (
            "Session.write_report() got unexpected keyword arguments 'level', 'seed'; it "
            "takes out_dir and the keywords html, compare, target_width, truth, n_points, "
            "title, notes, progress")
        with pytest.raises(TypeError, match=r"^Session\.write_report\(\) got an unexpected "
                                            r"keyword argument 'level'; it takes out_dir "):
            s.write_report(tmp_path / "report", level=0.9)  # type: ignore[call-arg]
        assert s.store.score_roles() == roles and s.estimates_history() == []
    assert not (tmp_path / "report").exists()


def test_write_report_passes_html_on_and_names_a_bad_one(tmp_path: Path) -> None:
    """QA: ``write_report(out, html=False)`` (the renderer's own option: the Markdown and
    the figures, no HTML page) was refused as an unknown keyword. It is passed on; a
    value that is not True or False is named before anything is estimated or written."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        s.label_from_data()
        roles = s.store.score_roles()
        for bad in ("no", None, 0):
            with pytest.raises(ValueError, match=r"^html must be True or False, got "):
                s.write_report(tmp_path / "bad", html=bad)  # type: ignore[arg-type]
        assert s.store.score_roles() == roles and s.estimates_history() == []
        assert not (tmp_path / "bad").exists()
        md = s.write_report(tmp_path / "md", html=False, progress=False)
        assert md == tmp_path / "md" / "report.md" and md.is_file()
        assert not (tmp_path / "md" / "report.html").exists()
        assert (tmp_path / "md" / "estimates.png").is_file()
        both = s.write_report(tmp_path / "both", progress=False)
        assert (tmp_path / "both" / "report.html").is_file()
        assert both.read_text(encoding="utf-8") == md.read_text(encoding="utf-8")


@pytest.mark.parametrize(("out", "message"), [
    (None, r"out_dir must be a path naming a folder for the report \(a string or a "
           r"pathlib\.Path\), got NoneType None"),
    (5, "out_dir must be a path naming a folder .*got int 5"),
    ("", "out_dir must name a folder for the report, got ''"),
])
def test_write_report_names_an_out_dir_that_is_no_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: Any, message: str) -> None:
    """QA: write_report("") wrote report.md, report.html and the figures into the working
    folder; None raised Python's "expected str, bytes or os.PathLike object"."""
    db = _session(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with Session.open(db) as s:
        s.label_from_data()
        with pytest.raises(ValueError, match=message):
            s.write_report(out)
    assert list(work.iterdir()) == []
