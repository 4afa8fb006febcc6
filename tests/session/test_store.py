"""The session file: schema, durability rules, locking, version checks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from activetest.data.task import Item
from activetest.session.store import (
    APP_ID,
    SCHEMA_VERSION,
    DamagedSessionError,
    NotASessionError,
    SchemaVersionError,
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionStore,
)

ITEMS = [Item(f"i{k}", {"text": f"text {k}"}, k % 2 if k % 3 else None) for k in range(10)]
EXAMPLES = [Item("e0", {"text": "good"}, 1), Item("e1", {"text": "bad"}, 0)]


def _store(tmp_path: Path, **kw: object) -> SessionStore:
    return SessionStore.create(tmp_path / "s.db", config={"metric": "log_loss", "seed": 3},
                               items=ITEMS, examples=EXAMPLES, **kw)  # type: ignore[arg-type]


def test_create_and_reopen_round_trip(tmp_path: Path) -> None:
    with _store(tmp_path) as st:
        assert st.schema_version == SCHEMA_VERSION
        assert st.meta()["app"] == APP_ID
    with SessionStore.open(tmp_path / "s.db") as st:
        assert st._config_document() == {"metric": "log_loss", "seed": 3}
        assert st.items() == ITEMS
        assert st.examples() == EXAMPLES
        assert st.n_items() == 10
        assert st.index_of("i7") == 7 and st.index_of("nope") is None
        mode = st._conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
    # No temporary files left beside it.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")) == []


def test_scores_are_stored_bit_exact_with_unscored_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lp = np.log(rng.dirichlet([1, 1], size=10))
    lp[3] = np.nan
    with _store(tmp_path) as st:
        st.put_scores("target", "table:x.csv", lp, {"model": "x"})
        got = st.scores("target")
        assert got is not None
        assert got.logprobs.tobytes() == lp.tobytes()
        assert got.scored.tolist() == [k != 3 for k in range(10)]
        assert got.provenance == {"model": "x"}
        preds = st.predictions("target")
        assert 3 not in preds and preds[0][0] == int(np.argmax(lp[0]))
        st.update_score_rows("target", [3], np.log([[0.25, 0.75]]))
        got = st.scores("target")
        assert got is not None and got.scored.all()
        assert st.predictions("target")[3] == (1, pytest.approx(0.75))


def test_draws_and_sampler_state_commit_together(tmp_path: Path) -> None:
    with _store(tmp_path) as st:
        st.init_sampler(0.1, 3, {"s": 0})
        st.record_draws([4, 2], [0.1, 0.2], {"s": 2}, expected_steps=0)
        # A writer that believes fewer draws exist is refused; nothing is written.
        with pytest.raises(SessionError, match="another process drew"):
            st.record_draws([5], [0.3], {"s": 3}, expected_steps=1)
        # A failure inside a transaction rolls back draws and state alike.
        with pytest.raises(RuntimeError), st.transaction():
            st.record_draws([5], [0.3], {"s": 3}, expected_steps=2)
            raise RuntimeError("killed")
        assert [(a.step, a.index, a.q) for a in st.acquisitions()] == [(1, 4, 0.1), (2, 2, 0.2)]
        assert st.sampler_row() == (0.1, 3, {"s": 2})


def test_labels_history_conflicts_and_undo(tmp_path: Path) -> None:
    with _store(tmp_path) as st:
        (c1,) = st.set_labels([(2, 1)], "cli")
        assert c1.action == "add" and c1.old is None and c1.new == 1
        assert st.set_labels([(2, 1)], "cli") == []  # same label: no change
        with pytest.raises(SessionError, match="already has label 1"):
            st.set_labels([(5, 0), (2, 0)], "import")
        assert set(st.labels()) == {2}  # the whole call was rolled back, item 5 included
        (c2,) = st.set_labels([(2, 0)], "import", overwrite=True)
        assert (c2.action, c2.old, c2.new) == ("change", 1, 0)
        st.revert(c2, "undo")
        assert st.labels()[2].label == 1
        st.revert(c1, "undo")
        assert st.labels() == {}
        hist = st.label_history(2)
        assert [(h.action, h.old, h.new) for h in hist] == [
            ("add", None, 1), ("change", 1, 0), ("undo", 0, 1), ("undo", 1, None)]
        with pytest.raises(SessionError, match="cannot undo"):
            st.revert(c1, "undo")
        # the refusal says "no label", and the class names where given (QA: "now has
        # label None, not 1")
        with pytest.raises(SessionError, match=r"^cannot undo: item '.*' now has no label, "
                                               r"where this change left label 'positive' "
                                               r"\(changed since\)$"):
            st.revert(c1, "undo", ("negative", "positive"))
        st.set_labels([(2, 0)], "cli")
        with pytest.raises(SessionError, match=r"now has label 0, where this change left "
                                               r"label 1 "):
            st.revert(c1, "undo")


def test_estimates_are_recorded(tmp_path: Path) -> None:
    with _store(tmp_path) as st:
        st.add_estimate(n_labels=5, metric="log_loss", method="lure", estimate=0.5, std=0.1,
                        low=0.3, high=0.7, level=0.95, details={"x": 1})
        (row,) = st.estimates()
        assert (row.n_labels, row.metric, row.estimate, row.details) == (5, "log_loss", 0.5,
                                                                         {"x": 1})


def test_refuses_a_newer_schema_version(tmp_path: Path) -> None:
    _store(tmp_path).close()
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(SchemaVersionError, match="newer activetest") as exc:
        SessionStore.open(tmp_path / "s.db")
    assert f"version {SCHEMA_VERSION + 1}" in str(exc.value)


def test_refuses_files_that_are_not_sessions(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("hello, this is not SQLite\n" * 100)
    with pytest.raises(NotASessionError, match="not"):
        SessionStore.open(text)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    with pytest.raises(NotASessionError, match="not an activetest session"):
        SessionStore.open(other)
    with pytest.raises(FileNotFoundError, match="activetest init"):
        SessionStore.open(tmp_path / "missing.db")


def test_locked_database_gives_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    st = _store(tmp_path, busy_timeout=0.3)
    st.set_labels([(1, 0)], "cli")
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        with pytest.raises(SessionLockedError, match="locked by another process"):
            st.set_labels([(2, 1)], "cli")
        # it waited the 0.3 s asked for, not SQLite's default (a setting, not a clock:
        # a wall-clock bound fails on a loaded machine)
        assert st._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 300
        assert set(st.labels()) == {1}  # reads still work under WAL
    finally:
        other.execute("ROLLBACK")
        other.close()
    st.set_labels([(2, 1)], "cli")
    assert set(st.labels()) == {1, 2}
    st.close()


def test_create_refuses_existing_files_and_duplicate_ids(tmp_path: Path) -> None:
    _store(tmp_path).close()
    with pytest.raises(SessionExistsError, match="--overwrite"):
        _store(tmp_path)
    _store(tmp_path, overwrite=True).close()
    dup = [*ITEMS, Item("i3", {"text": "again"})]
    with pytest.raises(SessionError, match="duplicate item id 'i3'"):
        SessionStore.create(tmp_path / "d.db", config={}, items=dup)
    assert not (tmp_path / "d.db").exists()


def test_failed_initialisation_leaves_no_file(tmp_path: Path) -> None:
    def init(st: SessionStore) -> None:
        st.put_scores("surrogate", "x", np.zeros((10, 2)), {})
        raise RuntimeError("scoring failed")

    with pytest.raises(RuntimeError):
        SessionStore.create(tmp_path / "f.db", config={}, items=ITEMS, init=init)
    assert list(tmp_path.iterdir()) == []


def test_lean_reads_equal_the_full_ones(tmp_path: Path) -> None:
    """``draw_rows`` and ``label_values`` (no join on the items) give what
    ``acquisitions`` and ``labels`` give, and check a label's class as ``labels`` does."""
    with _store(tmp_path) as st:
        assert st.draw_rows() == [] and st.label_values() == {}
        st.init_sampler(0.1, 3, {"s": 0})
        st.record_draws([4, 2, 9], [0.1, 0.2, 0.3], {"s": 3}, expected_steps=0)
        st.set_labels([(4, 1), (9, 0)], "cli")
        assert st.draw_rows() == [(a.step, a.index, a.q) for a in st.acquisitions()]
        assert [r.index for r in st.draw_rows()] == [4, 2, 9]
        assert st.label_values() == {i: lab.label for i, lab in st.labels().items()}
        st.label_classes = 2
        st._conn.execute("UPDATE labels SET label = 7 WHERE idx = 9")
        with pytest.raises(DamagedSessionError, match="'i9' has the stored label 7"):
            st.label_values()


def test_overwrite_keeps_a_replaced_file_that_holds_labels(tmp_path: Path) -> None:
    """QA: `init --overwrite` of a labelled session dropped its labels without a word. A
    replaced file holding labels is kept beside the new one (renamed), with its labels
    whole; one holding none is replaced as before (no clutter)."""
    _store(tmp_path, overwrite=True).close()  # nothing there: nothing kept
    with _store(tmp_path, overwrite=True) as st:  # simulated labels only (the demo's)
        st.set_labels([(0, 1), (1, 0)], "simulated")
        st.set_labels([(2, 1)], "data")
    with _store(tmp_path, overwrite=True) as st:  # made again from the pool: not kept
        assert st.replaced is None
    with _store(tmp_path, overwrite=True) as st:  # no labels: replaced, nothing kept
        assert st.replaced is None
        st.set_labels([(0, 1), (2, 0)], "cli")
    with _store(tmp_path, overwrite=True) as st:
        kept = st.replaced
        assert kept is not None and kept.n_labels == 2 and st.labels() == {}
    assert kept.path.parent == tmp_path and kept.path.name.startswith("s.replaced-")
    assert kept.path.suffix == ".db"
    with SessionStore.open(kept.path) as old:
        assert {i: lab.label for i, lab in old.labels().items()} == {0: 1, 2: 0}
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == sorted(
        ["s.db", kept.path.name])
