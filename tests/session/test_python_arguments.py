"""The session's Python API names a bad argument (a ValueError, nothing stored), on a real
session file made through the real CLI."""

from __future__ import annotations

from pathlib import Path

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
    iterable" (a string was already named); nothing is stored."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        for bad in (None, 5):
            with pytest.raises(TypeError, match=r"labels must be \(item_id, label\) pairs or "
                                                r"a mapping item_id -> label, got "):
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
