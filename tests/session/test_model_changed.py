"""A model that scores a session's items as they are labelled (a PE target, a compared
model scored on the labelled items) must stay the model that scored the earlier ones."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from session_support import make_pool_files
from typer.testing import CliRunner

from activetest import Session
from activetest.cli import app
from activetest.session.store import SessionError


def test_a_pe_targets_table_replaced_between_labels_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a PE session reads its ``table:`` target for each newly labelled item; the file
    replaced by another model's predictions between two imports gave an estimate mixing
    the two (30 items each), without a word. Now the earlier items are scored again when
    the file's identity changed, and another model's predictions are refused, naming the
    item and both values; the labels stay, and the same bytes back (a new mtime) go on."""
    # this machine's record of the session's files: the test's own (another copy of the
    # same bytes recorded by another session would be found, rightly, in place of the
    # edited file: spec_files.locate)
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    pf = make_pool_files(tmp_path / "d", n=60)
    keep = tmp_path / "target_as_scored.csv"
    shutil.copy(pf.target, keep)
    db = tmp_path / "pe.db"
    Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                   target=f"table:{pf.target}", acquisition="pe", seed=3, progress=False,
                   pool_options={"id_column": "id"}).close()
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
        first = s.estimate(record=False, progress=False)
    shutil.copy(pf.surrogate, pf.target)  # another model's predictions, same file name
    with Session.open(db) as s:
        s.select(10)
        s.label_from_data()
        with pytest.raises(SessionError, match=r"is not the one that scored this session's "
                                               r"earlier items: scored again now, item 'r"):
            s.estimate(record=False, progress=False)
        assert len(s.labels()) == 20  # nothing collected is lost
    res = CliRunner().invoke(app, ["estimate", str(db)])
    assert res.exit_code == 2 and "would mix two models" in res.output
    assert "Traceback" not in res.output
    shutil.copy(keep, pf.target)  # the same predictions back: a new mtime, same values
    with Session.open(db) as s:
        again = s.estimate(record=False, progress=False)
    assert again.n_labels == 20 and first.n_labels == 10
