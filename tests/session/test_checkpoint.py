"""Checkpoints of the adaptive design (issue 19, no replay): a command that loads
the checkpoint must have the sampler of a full replay to the last bit, draw the
same items and give the same estimate, on every step of a session and after a
``kill -9`` at a random point; a stale, damaged or absent checkpoint is replayed."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, cli_env, damage_stored_array, run_select_label_loop

from activetest.session import checkpoint, draw
from activetest.session.design import stored_design
from activetest.session.workflow import Session


def _create(pf: PoolFiles, path: Path, **kw: object) -> Session:
    args: dict[str, object] = dict(pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=11, progress=False,
                                   pool_options={"id_column": "id"})
    args.update(kw)
    return Session.create(path, **args)  # type: ignore[arg-type]


def _both_paths(s: Session) -> tuple[object, object]:
    """(sampler from the checkpoint, sampler from a full replay) of the stored history."""
    store = s.store
    row = store.sampler_row()
    assert row is not None
    design = stored_design(store)
    acq, dd = store.acquisitions(), store.design_draws()
    ck = checkpoint.load(store, design, row[1], row[2], acq, dd)
    full = draw._full_replay(store, design, row[1], row[2], acq, dd)
    return ck, full


def _assert_same_bits(a: object, b: object) -> None:
    m, k = len(b.acquired), len(b.losses)  # type: ignore[attr-defined]
    for name in ("acquired", "q", "control", "control_rest", "lam", "n_known", "labels",
                 "losses", "refits", "model_var", "control2", "control_rest2", "model_var2"):
        x = np.asarray(getattr(a, name), dtype=np.float64)
        y = np.asarray(getattr(b, name), dtype=np.float64)
        assert x.tobytes() == y.tobytes(), name
    for key, y in b._st.items():  # type: ignore[attr-defined]
        x = a._st[key]  # type: ignore[attr-defined]
        if key in ("hy", "hL"):
            x, y = x[:k], y[:k]
        elif key.startswith("h") or key == "absres":  # capacity differs: the history
            x, y = x[..., :m], y[..., :m]
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), key
    assert a._rng.bit_generator.state == b._rng.bit_generator.state  # type: ignore[attr-defined]


def _estimate_text(s: Session, monkeypatch: pytest.MonkeyPatch, use: bool) -> str:
    monkeypatch.setenv("ACTIVETEST_CHECKPOINTS", "1" if use else "0")
    try:
        return repr(s.estimate(record=False, progress=False))
    finally:
        monkeypatch.delenv("ACTIVETEST_CHECKPOINTS")


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}, {"acquisition": "pe_adaptive"},
                                {"acquisition": "fixed_mix"}],
                         ids=["earned", "two-metric", "pe_adaptive", "fixed_mix"])
def test_every_step_matches_the_full_replay(pool_files: PoolFiles, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch,
                                           kw: dict[str, object]) -> None:
    """Two sessions side by side, one loading checkpoints and one replaying: the same
    draws and estimates on every step, and the loaded sampler = the replayed one."""
    a = _create(pool_files, tmp_path / "a.db", **kw)
    b = _create(pool_files, tmp_path / "b.db", **kw)
    with a, b:
        for step, n in enumerate([1] * 12 + [4, 1, 3, 1, 1]):
            got_a = a.select(n)
            monkeypatch.setenv("ACTIVETEST_CHECKPOINTS", "0")
            got_b = b.select(n)
            monkeypatch.delenv("ACTIVETEST_CHECKPOINTS")
            assert [(x.index, x.q) for x in got_a] == [(x.index, x.q) for x in got_b]
            ck, full = _both_paths(a)
            assert ck is not None, step  # the checkpoint is there and valid
            _assert_same_bits(ck, full)
            if step % 3 != 2:  # sometimes a draw waits for its label over a select
                a.label_from_data()
                b.label_from_data()
            if step > 1:
                assert (_estimate_text(a, monkeypatch, True)
                        == _estimate_text(b, monkeypatch, False))
        assert max(full.refits) >= 2  # type: ignore[attr-defined]


def test_a_stale_or_damaged_checkpoint_is_replayed(pool_files: PoolFiles,
                                                    tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        for _ in range(12):
            s.select(1)
            s.label_from_data()
        assert _both_paths(s)[0] is not None
        con = sqlite3.connect(tmp_path / "a.db")
        # a checkpoint of another history (its key made to match): never used
        con.execute("UPDATE adaptive_checkpoints SET draws = draws + 1")
        con.commit()
        assert _both_paths(s)[0] is None
        con.execute("UPDATE adaptive_checkpoints SET draws = draws - 1")
        con.commit()
        assert _both_paths(s)[0] is not None
        # one byte changed inside a stored array (a bad CRC: zipfile.BadZipFile, which
        # made `estimate` end in a traceback)
        damage_stored_array(con, "adaptive_checkpoints", "control.npy", 200)
        assert _both_paths(s)[0] is None
        assert s.estimate(record=False, progress=False).n_labels == 12
        con.execute("UPDATE adaptive_checkpoints SET state = ?", (b"junk",))
        con.commit()
        assert _both_paths(s)[0] is None
        con.execute("DROP TABLE adaptive_checkpoints")  # a file from before checkpoints
        con.commit()
        con.close()
        assert _both_paths(s)[0] is None
        more = s.select(2)  # replayed, and checkpointed again
        assert len(more) == 2 and _both_paths(s)[0] is not None




@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow),
                                  pytest.param(2, marks=pytest.mark.slow)])
def test_after_kill_9_at_a_random_point_the_checkpoint_is_the_replay(
        pool_files: PoolFiles, tmp_path: Path, seed: int) -> None:
    """A real child process drawing and labelling, killed at a random moment: the
    file's checkpoint (if any is valid) equals a full replay, and the session goes on
    with the draws of one never interrupted."""
    n = 30
    ref_path = tmp_path / "ref.db"
    _create(pool_files, ref_path).close()
    env = cli_env(tmp_path)
    run_select_label_loop(ref_path, n, env)
    with Session.open(ref_path) as s:
        ref = [(x.index, x.q) for x in s.acquisitions()]
    db = tmp_path / "k.db"
    _create(pool_files, db).close()
    run_select_label_loop(db, n, env, kill_at=random.Random(seed).randint(3, 20))
    with Session.open(db) as s:
        ck, full = _both_paths(s)
        if ck is not None:
            _assert_same_bits(ck, full)
        s.label_from_data()
        while len(s.acquisitions()) < n:
            s.select(1 + len(s.acquisitions()) % 3)
            s.label_from_data()
            ck, full = _both_paths(s)
            assert ck is not None
            _assert_same_bits(ck, full)
        got = [(x.index, x.q) for x in s.acquisitions()]
    assert got == ref


def _column_rowids(s: Session, name: str) -> list[int]:
    return [r[0] for r in s.store._conn.execute(
        "SELECT rowid FROM columns WHERE name = ? ORDER BY chunk", (name,))]


def _checkpoint_columns(s: Session) -> list[str]:
    return [r[0] for r in s.store._conn.execute(
        "SELECT name FROM column_info WHERE name LIKE 'checkpoint:%'")]


def _blob(s: Session) -> dict[str, np.ndarray]:
    import io

    (raw,), = s.store._conn.execute("SELECT state FROM adaptive_checkpoints").fetchall()
    with np.load(io.BytesIO(bytes(raw)), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _store_blob(s: Session, blob: dict[str, np.ndarray], *, sign: bool = True) -> None:
    """Write ``blob`` as the stored checkpoint (``sign``: with the digest of its values,
    as a checkpoint written so would have; else as it is), with sqlite3's UPDATE."""
    import io

    blob = dict(blob)
    if sign:
        (d, k, h), = s.store._conn.execute(
            "SELECT draws, labels, spec_hash FROM adaptive_checkpoints").fetchall()
        blob["digest"] = checkpoint._content_digest((d, k, h), blob)
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **blob)
    s.store._conn.execute("UPDATE adaptive_checkpoints SET state = ?", (buf.getvalue(),))
    s.store._conn.commit()


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_per_item_arrays_are_recomputed_from_the_last_refit_not_stored(
        pool_files: PoolFiles, tmp_path: Path, kw: dict[str, object]) -> None:
    """After a refit the checkpoint stores no per-item column, only the weights before
    the refit; the loaded sampler (its ``s``, ``g``, ``aux`` recomputed by running that
    refit again) is the full replay's to the last bit at every step, refits or not."""
    s = _create(pool_files, tmp_path / "a.db", **kw)
    modes = set()
    with s:
        for _ in range(40):
            s.select(1)
            ck, full = _both_paths(s)
            assert ck is not None
            _assert_same_bits(ck, full)
            assert _checkpoint_columns(s) == []
            blob = _blob(s)
            modes.add(int(blob["per_item"][0]))
            if int(blob["per_item"][0]) == 3:
                assert blob["w_pre"].tobytes() == full.w_pre.tobytes()
                assert int(full._st["ist"][1]) > 0
            s.label_from_data()
        assert int(full._st["ist"][1]) >= 3  # several refits were run again
    assert modes == {1, 3}


def test_a_checkpoint_whose_last_refit_does_not_rerun_is_replayed(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Weights before the last refit that do not give the stored state (here changed in
    the last bit): the checkpoint is not used, the command replays and draws what an
    untouched session draws."""

    paths = [tmp_path / "a.db", tmp_path / "b.db"]
    for path in paths:
        with _create(pool_files, path) as s:
            for n in (10, 10, 10, 10):
                s.select(n)
                s.label_from_data()
    with Session.open(paths[1]) as s:
        blob = _blob(s)
        assert int(blob["per_item"][0]) == 3
        blob["w_pre"] = np.nextafter(blob["w_pre"], np.inf)
        _store_blob(s, blob)  # its digest made to match: the refit's own check refuses
        ck, full = _both_paths(s)
        assert ck is None and full is not None
    got = []
    for path in paths:
        with Session.open(path) as s:
            s.select(4)
            got.append([(x.index, x.q) for x in s.acquisitions()])
    assert got[0] == got[1]


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_s_and_g_columns_are_kept_between_refits_and_the_checkpoint_stays_the_replay(
        pool_files: PoolFiles, tmp_path: Path, kw: dict[str, object],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the per-item arrays are stored as columns (the out-of-sample guard's design,
    whose ``aux`` records each draw; here any design made to store them): a select that
    continues the stored checkpoint without a refit keeps its ``s`` and ``g`` columns
    (the same rows, not written again; ``aux`` is written again); one that refits writes
    them anew; the loaded sampler is the full replay's either way."""
    from activetest.session import columns as cols
    from activetest.stats.adaptive import AdaptiveDesign

    monkeypatch.setattr(AdaptiveDesign, "redoable", property(lambda self: False))
    written: list[str] = []  # the columns written (rowids alone may be reused)
    real_write = cols.write_column

    def write(conn: object, name: str, *a: object, **k: object) -> object:
        written.append(name)
        return real_write(conn, name, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(cols, "write_column", write)
    s = _create(pool_files, tmp_path / "a.db", **kw)
    seen = {"kept": 0, "written": 0}
    with s:
        for _ in range(40):
            written.clear()
            before = {n: _column_rowids(s, f"checkpoint:{n}") for n in ("s", "g", "aux:0")}
            refits = int(s.store.design_draws()[-1][4]) if s.store.design_draws() else 0
            s.select(1)
            ck, full = _both_paths(s)
            assert ck is not None
            _assert_same_bits(ck, full)
            after = {n: _column_rowids(s, f"checkpoint:{n}") for n in before}
            if before["s"] and int(s.store.design_draws()[-1][4]) == refits:
                assert after["s"] == before["s"] and after["g"] == before["g"]
                assert "checkpoint:s" not in written and "checkpoint:g" not in written
                if kw:  # the two-metric design's aux rows: written again
                    assert after["aux:0"] and "checkpoint:aux:0" in written
                seen["kept"] += 1
            elif after["s"]:
                assert "checkpoint:s" in written and "checkpoint:g" in written
                seen["written"] += 1
            s.label_from_data()
    assert seen["kept"] >= 5 and seen["written"] >= 2, seen


def test_a_checkpoint_with_stored_columns_loads_and_the_next_save_recomputes(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session whose checkpoint holds the per-item columns (every file of the versions
    before 2026-12-03, without the weights before the last refit): it loads as the full
    replay; selects keep its columns until the design refits, then store those weights
    instead and delete the columns; the replay's sampler at every step."""

    from activetest.stats.adaptive import AdaptiveDesign

    s = _create(pool_files, tmp_path / "a.db")
    with s:
        with monkeypatch.context() as mp:  # written as the versions before did
            mp.setattr(AdaptiveDesign, "redoable", property(lambda self: False))
            for n in (10, 10, 10, 10):
                s.select(n)
                s.label_from_data()
            s.select(2)  # refits on the new labels; these two wait for theirs
            assert {"checkpoint:s", "checkpoint:g"} <= set(_checkpoint_columns(s))
            blob = _blob(s)
            assert int(blob["per_item"][0]) == 2
        del blob["w_pre"]  # as those versions wrote it: no weights before the refit
        _store_blob(s, blob)  # (with a digest: one without is replayed, test below)
        ck, full = _both_paths(s)
        assert ck is not None and ck.w_pre is None
        _assert_same_bits(ck, full)
        modes = []
        for step in range(12):  # no refit first: the columns kept; after one, the weights
            s.select(1)
            if step:
                s.label_from_data()
            modes.append(int(_blob(s)["per_item"][0]))
            assert (_checkpoint_columns(s) == []) == (modes[-1] == 3)
            ck, full = _both_paths(s)
            assert ck is not None
            _assert_same_bits(ck, full)
        assert modes[0] == 2 and modes[-1] == 3


def test_a_select_that_refits_first_skips_the_last_refit_run_again(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint's per-item arrays are recomputed by running its last refit again,
    except in a ``select`` whose first draw refits (which replaces them all first): there
    it is skipped, and the draws stay those of a full replay (the test above)."""
    from activetest.stats.adaptive import AdaptiveDesign

    runs: list[int] = []
    real = AdaptiveDesign._redo_refit

    def counted(self: AdaptiveDesign, *args: object, **kw: object) -> None:
        runs.append(1)
        real(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(AdaptiveDesign, "_redo_refit", counted)
    skipped = redone = 0
    with _create(pool_files, tmp_path / "a.db") as s:
        for _ in range(30):
            dd = s.store.design_draws()
            fitted = bool(dd) and dd[-1][4] > 0  # the stored state is after a refit
            before = len(runs)
            s.select(1)
            dd2 = s.store.design_draws()
            refit_first = dd2[-1][4] > (dd[-1][4] if dd else 0)
            if fitted and refit_first:
                assert len(runs) == before, "the redo ran though the first draw refits"
                skipped += 1
            elif fitted:
                assert len(runs) == before + 1
                redone += 1
            s.label_from_data()
    assert skipped >= 3 and redone >= 3, (skipped, redone)


def _edit_blob(db: Path, member: str) -> None:
    """Change one value of the stored checkpoint's ``member`` with a sqlite3 UPDATE (the
    npz rewritten whole: a clean edit, not a damaged zip)."""
    import io

    con = sqlite3.connect(db)
    (raw,), = con.execute("SELECT state FROM adaptive_checkpoints").fetchall()
    with np.load(io.BytesIO(bytes(raw)), allow_pickle=False) as z:
        blob = {k: z[k] for k in z.files}
    v = blob[member]
    if v.dtype.kind == "f":  # every finite value changed
        assert np.isfinite(v).any(), member
        blob[member] = np.where(np.isfinite(v), v * 1.5 + 0.01, v)
    else:  # the first class label or item number flipped
        v.reshape(-1)[0] = 1 - v.reshape(-1)[0]
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **blob)
    con.execute("UPDATE adaptive_checkpoints SET state = ?", (buf.getvalue(),))
    con.commit()
    con.close()


def _twins(pool_files: PoolFiles, tmp_path: Path, kw: dict[str, object],
           rounds: tuple[int, ...], pending: int = 0) -> tuple[Path, Path]:
    """Two copies of one session after ``rounds`` of select and label (and ``pending``
    draws more, not labelled: the next select does not refit first)."""
    import shutil

    a, b = tmp_path / "a.db", tmp_path / "b.db"
    with _create(pool_files, a, **kw) as s:
        for n in rounds:
            s.select(n)
            s.label_from_data()
        if pending:
            s.select(pending)
    shutil.copy(a, b)
    return a, b


def _go_on(path: Path) -> tuple[list[tuple[int, float]], str]:
    """Two more rounds of select and label, then the estimate: what a user reads."""
    with Session.open(path) as s:
        for n in (3, 3):
            s.select(n)  # (its first draw refits only if labels came since the last)
            s.label_from_data()
        return ([(x.index, x.q) for x in s.acquisitions()],
                repr(s.estimate(record=False, progress=False)))


@pytest.mark.parametrize(("member", "kw"), [
    ("l_model_var", {}), ("st_W", {}), ("st_hL", {}), ("st_hy", {}),
    ("l_control2", {"metric": "both"}), ("l_control_rest2", {"metric": "both"}),
    ("l_model_var2", {"metric": "both"}), ("st_haux", {"metric": "both"})])
def test_a_checkpoint_value_edited_in_the_file_is_not_used(
        pool_files: PoolFiles, tmp_path: Path, member: str, kw: dict[str, object]) -> None:
    """QA: the check covered the draws' records only; a sqlite3 UPDATE of the model
    variance (``l_model_var``: another interval), the second metric's controls, or the
    design's weights and label history (``st_W``, ``st_hL``, ``st_hy``: other draws)
    was loaded and changed the numbers with no word. Now the checkpoint's digest does
    not match, the stored draws are replayed, and the session draws and estimates as
    its untouched twin does."""
    import shutil

    a, b = _twins(pool_files, tmp_path, kw, (3, 3, 3, 3))
    _edit_blob(b, member)
    shutil.copy(b, tmp_path / "c.db")
    assert _go_on(b) == _go_on(a)
    with Session.open(tmp_path / "c.db") as s:
        assert _both_paths(s)[0] is None
    with Session.open(b) as s:  # the next select wrote a checkpoint with its digest
        assert _both_paths(s)[0] is not None


@pytest.mark.parametrize(("column", "kw"), [("s", {}), ("g", {}),
                                            ("aux:0", {"metric": "both"})])
def test_a_checkpoint_column_edited_in_the_file_is_not_used(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        column: str, kw: dict[str, object]) -> None:
    """QA: the per-item columns ``checkpoint:s``, ``checkpoint:g`` and
    ``checkpoint:aux:*`` (the out-of-sample guard's design; here any design made to
    store them) were read with no digest: a value changed by a sqlite3 UPDATE became
    the design's, and the next draws changed. Each column's digest is now in the
    checkpoint's blob: the changed one is not used, the draws are replayed."""
    import shutil

    from activetest.stats.adaptive import AdaptiveDesign

    monkeypatch.setattr(AdaptiveDesign, "redoable", property(lambda self: False))
    a, b = _twins(pool_files, tmp_path, kw, (10, 10, 10), pending=2)
    with Session.open(a) as s:
        assert column in [n.removeprefix("checkpoint:") for n in _checkpoint_columns(s)]
    con = sqlite3.connect(b)
    (data,), = con.execute("SELECT data FROM columns WHERE name = ? AND chunk = 0",
                           (f"checkpoint:{column}",)).fetchall()
    v = np.frombuffer(bytes(data), dtype="<f8").copy()
    v = v * 0.5 + 0.01  # every item's value changed, a clean edit (no damage)
    con.execute("UPDATE columns SET data = ? WHERE name = ? AND chunk = 0",
                (v.tobytes(), f"checkpoint:{column}"))
    con.commit()
    con.close()
    shutil.copy(b, tmp_path / "c.db")
    assert _go_on(b) == _go_on(a)
    with Session.open(tmp_path / "c.db") as s:
        assert _both_paths(s)[0] is None


def _predigest(s: Session) -> None:
    """The stored checkpoint made one written before the digests were kept (its blob as
    those versions wrote it: the same members, no ``digest`` and no column digests)."""
    blob = {k: v for k, v in _blob(s).items() if k != "digest" and not k.startswith("cd_")}
    _store_blob(s, blob, sign=False)


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_a_checkpoint_written_before_the_digest_replays_with_the_same_numbers(
        pool_files: PoolFiles, tmp_path: Path, kw: dict[str, object]) -> None:
    """A file whose checkpoint was written before the digests were kept (its blob as
    those versions wrote it: the same members, no ``digest``) still opens; its
    checkpoint is not used (one full replay), the draws and estimate are those of a
    session whose checkpoint has its digest, and the next select writes one."""
    a, b = _twins(pool_files, tmp_path, kw, (4, 4, 4))
    with Session.open(b) as s:
        _predigest(s)
        assert _both_paths(s)[0] is None
    assert _go_on(b) == _go_on(a)
    with Session.open(b) as s:
        assert "digest" in _blob(s) and _both_paths(s)[0] is not None


def _count_replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each full replay of an adaptive design's history (the real one, counted: one
    entry per :meth:`AdaptiveSampler.from_state`)."""
    from activetest.stats.adaptive import AdaptiveSampler

    replays: list[int] = []
    real = AdaptiveSampler.from_state.__func__  # type: ignore[attr-defined]

    def counted(cls: type, *args: object, **kw: object) -> object:
        replays.append(1)
        return real(cls, *args, **kw)

    monkeypatch.setattr(AdaptiveSampler, "from_state", classmethod(counted))
    return replays


def _estimate_of(path: Path) -> str:
    """One ``estimate`` of the session at ``path`` (opened for it, as a command does)."""
    with Session.open(path) as s:
        return repr(s.estimate(record=False, progress=False))


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_a_pre_digest_checkpoint_is_rewritten_by_the_first_estimate(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, object]) -> None:
    """A checkpoint written before the digests were kept is never loaded, and only a
    ``select`` wrote a new one: a user who only estimated replayed the whole design at
    every command. Now the first estimate that replays re-writes it with its digests
    (where the file can be written; not with ``ACTIVETEST_CHECKPOINTS=0``), the next one
    loads it and replays nothing, and every estimate and later draw is its twin's (whose
    checkpoint has its digest) to the bit."""
    a, b = _twins(pool_files, tmp_path, kw, (4, 4, 4))
    with Session.open(b) as s:
        _predigest(s)
    replays = _count_replays(monkeypatch)
    want = _estimate_of(a)
    assert replays == []  # the twin loads its checkpoint: the count is of replays
    monkeypatch.setenv("ACTIVETEST_CHECKPOINTS", "0")  # checkpoints off: nothing written
    assert _estimate_of(b) == want and len(replays) == 1
    monkeypatch.delenv("ACTIVETEST_CHECKPOINTS")
    with Session.open(b) as s:
        assert "digest" not in _blob(s)
    for command, replayed in enumerate((1, 0, 0)):
        replays.clear()
        assert _estimate_of(b) == want, command
        assert len(replays) == replayed, command
    with Session.open(b) as s:
        assert "digest" in _blob(s)
        ck, full = _both_paths(s)
        assert ck is not None
        _assert_same_bits(ck, full)
    assert _go_on(b) == _go_on(a)


def test_a_pre_digest_checkpoint_on_a_read_only_disk_is_left_and_replayed(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a real read-only mount (a tmpfs remounted read-only; skipped where none can be
    mounted) the estimate of a session with a pre-digest checkpoint replays every time,
    writes nothing (the file's bytes the same) and gives its twin's numbers."""
    import shutil
    import subprocess

    from session_support import tmpfs

    a, b = _twins(pool_files, tmp_path, {}, (4, 4, 4))
    with Session.open(b) as s:
        _predigest(s)
    want = _estimate_of(a)
    replays = _count_replays(monkeypatch)
    with tmpfs(4096) as mnt:
        ro = mnt / "b.db"
        shutil.copy(b, ro)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        before = ro.read_bytes()
        for command in range(2):
            replays.clear()
            assert _estimate_of(ro) == want, command
            assert len(replays) == 1, command
        assert ro.read_bytes() == before


def test_a_pre_digest_checkpoint_is_not_rewritten_by_a_replay_of_an_older_history(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A replay made before another command drew (and wrote its checkpoint) never
    replaces the stored one: :func:`checkpoint.renew` writes only a pre-digest
    checkpoint of the very history it replayed."""
    _, b = _twins(pool_files, tmp_path, {}, (4, 4, 4))
    with Session.open(b) as s:
        _predigest(s)
        row = s.store.sampler_row()
        assert row is not None
        _, old = _both_paths(s)
        with Session.open(b) as other:  # another command draws meanwhile
            other.select(2)
            _predigest(other)  # (its checkpoint pre-digest too: only the history differs)
        stored = _blob(s)
        assert not checkpoint.renew(s.store, old, row[2])
        assert set(_blob(s)) == set(stored) and "digest" not in stored
        assert len(_blob(s)["l_acquired"]) == len(old.acquired) + 2  # type: ignore[attr-defined]


def test_a_select_without_a_refit_does_not_hash_s_and_g_again(
        pool_files: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the checkpoint stores the per-item columns (the out-of-sample guard's
    design; here any design made to store them), a ``select`` that continues it without
    a refit keeps ``s`` and ``g``: their digests are the ones its load checked, not
    SHA-256 of N values each again (11 ms per command at 1e6 items). The checkpoint it
    writes loads as the full replay, and a column edited after it is still refused."""
    from activetest.stats.adaptive import AdaptiveDesign

    monkeypatch.setattr(AdaptiveDesign, "redoable", property(lambda self: False))
    a, b = _twins(pool_files, tmp_path, {}, (10, 10, 10), pending=2)
    hashed: list[bytes] = []
    real = checkpoint._column_digest

    def spy(values: np.ndarray) -> np.ndarray:
        d = real(values)
        hashed.append(d.tobytes())
        return d

    monkeypatch.setattr(checkpoint, "_column_digest", spy)
    for path in (a, b):
        with Session.open(path) as s:
            refits = s.store.design_draws()[-1][4]
            hashed.clear()
            s.select(1)  # no label came since the last select: no refit
            assert s.store.design_draws()[-1][4] == refits
            blob = _blob(s)
            for name in ("s", "g"):  # hashed where read from the file, not at the save
                assert hashed.count(blob[f"cd_{name}"].tobytes()) == 1, name
            ck, full = _both_paths(s)
            assert ck is not None
            _assert_same_bits(ck, full)
    con = sqlite3.connect(b)  # every value of b's s column changed, a clean edit
    (data,), = con.execute("SELECT data FROM columns WHERE name = 'checkpoint:s' "
                           "AND chunk = 0").fetchall()
    v = np.frombuffer(bytes(data), dtype="<f8") * 0.5 + 0.01
    con.execute("UPDATE columns SET data = ? WHERE name = 'checkpoint:s' AND chunk = 0",
                (v.tobytes(),))
    con.commit()
    con.close()
    with Session.open(b) as s:
        assert _both_paths(s)[0] is None
    assert _go_on(b) == _go_on(a)
