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


def test_a_pe_targets_table_edited_only_in_a_late_stored_row_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the changed-model check scored again only the first 20 stored rows, so a table
    edited only in a later stored row (here the last of 30, its two classes swapped)
    passed and mixed two models. The rows scored again now reach the last stored ones."""
    import csv

    import numpy as np

    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    pf = make_pool_files(tmp_path / "d", n=60)
    db = tmp_path / "pe.db"
    Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                   target=f"table:{pf.target}", acquisition="pe", seed=3, progress=False,
                   pool_options={"id_column": "id"}).close()
    with Session.open(db) as s:
        s.select(30)
        s.label_from_data()
        s.estimate(record=False, progress=False)  # the target's 30 rows scored and stored
        stored = s.store.scores("target")
        assert stored is not None
        done = np.flatnonzero(np.isfinite(stored.logprobs).all(axis=1))
    assert done.size == 30
    late = pf.ids[int(done[-1])]  # past the first 20 stored rows
    rows = list(csv.reader(pf.target.open(newline="", encoding="utf-8")))
    for r in rows:
        if r[0] == late:
            r[1], r[2] = r[2], r[1]
    with pf.target.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    with Session.open(db) as s:
        s.select(5)
        s.label_from_data()
        with pytest.raises(SessionError, match=rf"is not the one that scored this session's "
                                               rf"earlier items: scored again now, item "
                                               rf"'{late}'"):
            s.estimate(record=False, progress=False)


def test_the_rows_scored_again_reach_every_part_of_the_stored_ones() -> None:
    """:func:`recheck_rows`: every stored row up to 20; beyond, 20 of them: the first and
    last five and a seeded sample between, the same each time, each row once."""
    import numpy as np

    from activetest.session.scoring import RECHECK_ROWS, recheck_rows

    assert recheck_rows(np.arange(7) * 3).tolist() == (np.arange(7) * 3).tolist()
    for n in (21, 100, 100_000):
        done = np.arange(n) * 2 + 1
        got = recheck_rows(done)
        assert got.size == RECHECK_ROWS == np.unique(got).size
        assert set(got) <= set(done.tolist()) and list(got) == sorted(got)
        assert got[:5].tolist() == done[:5].tolist() and got[-5:].tolist() == done[-5:].tolist()
        assert np.array_equal(got, recheck_rows(done))  # no random state: the same rows
        if n == 100_000:  # the sample between reaches every tenth of the stored rows
            assert len({int(k) * 10 // (2 * n) for k in got[5:-5]}) >= 6
