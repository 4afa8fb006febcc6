"""The blind-spot curves' running state kept between estimates (issue 19, no replay):
an estimate that continues the stored state must give the numbers of one computed
from the first draw, to the last bit, on every step of a session (labels arriving
late, a relabel, another level) and after a ``kill -9`` at a random point; a stale
or damaged state is never used."""

from __future__ import annotations

import io
import random
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import (
    PoolFiles,
    cli_env,
    damage_stored_array,
    make_pool_files,
    run_select_label_loop,
)

from activetest.session import blind_checkpoint
from activetest.session.workflow import Session

_ARRAYS = ("n_unexplored", "unexplored_bound", "widen_high", "widen_low")


def _create(pf: PoolFiles, path: Path, **kw: object) -> Session:
    args: dict[str, object] = dict(pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=5, progress=False,
                                   pool_options={"id_column": "id"})
    args.update(kw)
    with Session.create(path, **args) as s:  # type: ignore[arg-type]
        # every item drawn at below the uniform rate counts as unexplored: many items,
        # a widening at every budget (the recorded 1/5 leaves none on this small pool)
        s.store.update_config({"blind_ratio": 1.0})
    return Session.open(path)


@pytest.fixture
def pool200(tmp_path: Path) -> PoolFiles:
    return make_pool_files(tmp_path / "data", n=200)


def _estimate(s: Session, monkeypatch: pytest.MonkeyPatch, stored: bool,
              **kw: Any) -> tuple[str, dict[str, Any]]:
    """(the estimate's text, metric -> blind spot), with the stored state or without."""
    monkeypatch.setenv("ACTIVETEST_CHECKPOINTS", "1" if stored else "0")
    try:
        parts = s._estimate(compare=(), n_boot=None, target_width=None, progress=False,
                            **{"record": True, "level": None, **kw})
    finally:
        monkeypatch.delenv("ACTIVETEST_CHECKPOINTS")
    return repr(parts.report), parts.blind_spots


def _same(x: tuple[str, dict[str, Any]], y: tuple[str, dict[str, Any]]) -> None:
    assert x[0] == y[0]
    _assert_same(x[1], y[1])


def _assert_same(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a.keys() == b.keys() and a
    for metric in a:
        for which in ("estimate", "cv"):
            x, y = getattr(a[metric], which), getattr(b[metric], which)
            assert (x is None) == (y is None)
            if x is None:
                continue
            for name in _ARRAYS:
                assert getattr(x, name).tobytes() == getattr(y, name).tobytes(), (metric, name)
            assert (x.delta, x.loss_cap) == (y.delta, y.loss_cap)


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}],
                         ids=["earned", "two-metric"])
def test_every_step_matches_the_curves_from_the_first_draw(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, object]) -> None:
    """Two sessions side by side, one continuing the stored state and one computing
    from the first draw: the same blind spots and estimates on every step; the state
    is stored at each estimate's budget and continued by the next."""
    a = _create(pool200, tmp_path / "a.db", **kw)
    b = _create(pool200, tmp_path / "b.db", **kw)
    loaded: list[int] = []
    continued: list[int] = []  # every state continued (by a select or an estimate)
    real_load = blind_checkpoint.load

    def load(*args: Any, **kw: Any) -> Any:
        got = real_load(*args, **kw)
        if got is not None:
            loaded.append(got.k)
            continued.append(got.k)
        return got

    monkeypatch.setattr(blind_checkpoint, "load", load)
    served: list[int] = []  # estimates read from a state of at least their draws
    real_served = blind_checkpoint.load_served

    def load_served(*args: Any) -> Any:
        got = real_served(*args)
        if got is not None:
            served.append(args[2])
        return got

    monkeypatch.setattr(blind_checkpoint, "load_served", load_served)
    kept: list[bool] = []  # the design's per-item arrays kept (no refit since) or written
    real_save = blind_checkpoint.save

    def save(*args: Any, design_of: str | None = None, live: Any = None) -> bool:
        kept.append(design_of is not None)
        return real_save(*args, design_of=design_of, live=live)

    monkeypatch.setattr(blind_checkpoint, "save", save)
    widened = 0
    with a, b:
        # (draws, labelled at once, estimated): the design refits at a select when the
        # labels known + 1 pass 10, 12, 15, 19, 24, 30, 38, 47, 59, ...; after the
        # estimate at 33, rounds 4-6 draw 33..45, refitting only in the last (known
        # 41): the next estimate continues from 33 through draws made with the design
        # of 33 and then with the refitted one
        rounds = [(10, 1, 1), (10, 1, 1), (10, 1, 1), (3, 1, 1), (3, 1, 0), (5, 1, 0),
                  (5, 1, 1), (1, 0, 1), (7, 1, 1), (1, 1, 1), (12, 0, 1), (4, 1, 1),
                  (9, 1, 1), (2, 1, 0), (3, 1, 1)]
        for step, (n, labelled, estimated) in enumerate(rounds):
            for s in (a, b):
                s.select(n)
                if labelled:  # else the labels arrive after the next select
                    s.label_from_data()
            k = a.labelled_draws().k
            if k == 0 or not estimated:
                continue
            before = blind_checkpoint.stored_k(a.store)
            loaded.clear()
            if step == 8:  # a relabel: the stored state is another history's
                item = a.acquisitions()[3].item_id
                for s in (a, b):
                    s.add_label(item, 1 - s.labels()[item], overwrite=True)
            got_a, blind_a = _estimate(a, monkeypatch, True)
            got_b, blind_b = _estimate(b, monkeypatch, False)
            assert got_a == got_b, step
            _assert_same(blind_a, blind_b)
            # stored for the next one: by this estimate, or by the select before it
            # over every draw (labelled or not), from the CS's start on
            stored = blind_checkpoint.stored_k(a.store)
            assert stored == (len(a.acquisitions()) if k >= 30 else before)
            widened += any(x.estimate.n_unexplored.max() > 0 for x in blind_a.values())
            if step == 10:  # another level: not the stored state's, computed afresh
                _assert_same(_estimate(a, monkeypatch, True, level=0.8, record=False)[1],
                             _estimate(b, monkeypatch, False, level=0.8, record=False)[1])
    # the estimates read the state the selects stored; a state continued (by a select)
    assert len(served) >= 8 and widened >= 4
    assert len(continued) >= 8 and True in kept and False in kept


def test_a_stale_or_damaged_state_is_not_used(pool200: PoolFiles, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with _create(pool200, tmp_path / "a.db") as s:
        s.select(40)
        s.label_from_data()
        _estimate(s, monkeypatch, True)
        s.select(10)
        s.label_from_data()
        want = _estimate(s, monkeypatch, False, record=False)
        con = sqlite3.connect(tmp_path / "a.db")
        damage_stored_array(con, "blind_spot_checkpoint", "out_0.npy", 120)  # a bad CRC
        _same(_estimate(s, monkeypatch, True, record=False), want)
        con.execute("UPDATE blind_spot_checkpoint SET state = ?", (b"junk",))
        con.commit()
        _same(_estimate(s, monkeypatch, True), want)
        con.execute("UPDATE columns SET data = substr(data, 9) WHERE name = 'blindspot:Q'")
        con.commit()
        _same(_estimate(s, monkeypatch, True, record=False), want)
        con.execute("DROP TABLE blind_spot_checkpoint")
        con.commit()
        con.close()
        _same(_estimate(s, monkeypatch, True), want)
        assert blind_checkpoint.stored_k(s.store) == 50




def test_an_estimate_served_by_the_stored_state_reads_its_blob_once(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The curves, the second sums and the least proposals an estimate takes from the
    stored state as it is come from one read and one decode of its blob (QA: three of
    each), and give the numbers of the estimate computed from the first draw."""
    with _create(pool200, tmp_path / "a.db", compare=[f"table:{pool200.surrogate}"],
                 metric="error_rate") as s:
        s.select(40)
        s.label_from_data()
        want = _estimate(s, monkeypatch, False, record=False)
        _estimate(s, monkeypatch, True)  # stores the state at 40
        reads: list[str] = []
        blobs: list[bytes] = []
        real_row, real_np_load = blind_checkpoint._stored_row, np.load

        def stored_row(store: Any, key: str) -> Any:
            reads.append("row")
            found = real_row(store, key)
            blobs.extend([] if found is None else [found[1]])
            return found

        def np_load(file: Any, *args: Any, **kw: Any) -> Any:
            if isinstance(file, io.BytesIO) and file.getvalue() in blobs:
                reads.append("decode")
            return real_np_load(file, *args, **kw)

        monkeypatch.setattr(blind_checkpoint, "_stored_row", stored_row)
        monkeypatch.setattr(blind_checkpoint.np, "load", np_load)
        got = _estimate(s, monkeypatch, True, record=False)
        monkeypatch.undo()
        _same(got, want)
        assert reads == ["row", "decode"]


@pytest.mark.parametrize(("seed", "mode"), [
    (0, "estimate"), (2, "select"), pytest.param(1, "estimate", marks=pytest.mark.slow),
    pytest.param(3, "select", marks=pytest.mark.slow)])
def test_after_kill_9_at_a_random_point_the_state_gives_the_same_numbers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, mode: str) -> None:
    """A real child process drawing, labelling and estimating (``select``: only drawing
    and labelling, the state advanced by each select), killed at a random moment
    (mid-estimate, mid-select, mid-write of the state): the next estimates equal those
    computed from the first draw, and the state is stored again."""
    pf = make_pool_files(tmp_path / "data", n=200)
    db = tmp_path / "k.db"
    _create(pf, db).close()
    run_select_label_loop(db, 120, cli_env(tmp_path), batch=(3, 5), mode=mode,
                          kill_at=random.Random(seed).randint(40, 90))
    with Session.open(db) as s:
        s.label_from_data()
        for _ in range(3):
            want = _estimate(s, monkeypatch, False, record=False)
            _same(_estimate(s, monkeypatch, True), want)
            assert blind_checkpoint.stored_k(s.store) >= s.labelled_draws().k
            s.select(4)
            assert blind_checkpoint.stored_k(s.store) == len(s.acquisitions())
            s.label_from_data()


def test_a_session_labelled_by_select_and_import_only_never_replays(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ``select`` advances the state over its own draws: the first estimate of a
    session that was never estimated reads it (no draw computed), with the numbers
    of the curves from the first draw; a select with no state and more than its batch
    to replay leaves it to the estimate, which stores it for the selects after it."""
    import activetest.session.blindspot as sb

    computed: list[int] = []  # draws computed by each curves call (continued or not)
    real = sb.design_blind_spot_curves

    def curves(design: Any, acquired: Any, specs: Any, **kw: Any) -> Any:
        resume = kw.get("resume")
        computed.append(len(acquired) - (0 if resume is None else resume.k))
        return real(design, acquired, specs, **kw)

    monkeypatch.setattr(sb, "design_blind_spot_curves", curves)
    a = _create(pool200, tmp_path / "a.db")
    with a:
        for n in (20, 15, 10, 10):
            computed.clear()
            a.select(n)
            assert computed == [n]  # this select's draws only
            assert blind_checkpoint.stored_k(a.store) == len(a.acquisitions())
            a.label_from_data()
        a.select(5)  # five more, not labelled: the estimate reads 55 of the 60
        computed.clear()
        got = _estimate(a, monkeypatch, True, record=True)
        assert computed == [] and a.labelled_draws().k == 55
        _same(got, _estimate(a, monkeypatch, False, record=False))
        assert blind_checkpoint.stored_k(a.store) == 60  # not replaced by the estimate's
        con = sqlite3.connect(tmp_path / "a.db")
        con.execute("DROP TABLE blind_spot_checkpoint")  # (a file written before)
        con.commit()
        con.close()
        computed.clear()
        a.select(5)  # 65 draws to replay: more than twice its batch, left
        assert computed == [] and blind_checkpoint.stored_k(a.store) is None
        a.label_from_data()
        _same(_estimate(a, monkeypatch, True), _estimate(a, monkeypatch, False, record=False))
        assert blind_checkpoint.stored_k(a.store) == 65
        computed.clear()
        a.select(5)
        assert computed == [5] and blind_checkpoint.stored_k(a.store) == 70


def _stored(s: Session) -> tuple[list[Any], list[Any]]:
    """The stored blind-spot state: its row (k, key, blob) and its columns' chunks."""
    return (s.store._read("SELECT k, key, state FROM blind_spot_checkpoint"),
            s.store._read("SELECT name, chunk, data FROM columns WHERE name LIKE "
                          "'blindspot:%' ORDER BY name, chunk"))


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}, {"acquisition": "pe_adaptive"}],
                         ids=["earned", "two-metric", "pe-adaptive"])
def test_a_select_advancing_with_its_own_draws_stores_what_a_replay_stores(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, object]) -> None:
    """``select`` advances the state with its own draws' mixtures and design state
    (``RunDraws``) instead of replaying the design over them: the state it stores (key,
    blob and columns) is, byte for byte, the one the replay stores, round after round
    (batches that refit and batches that do not, labels arriving late, a state behind
    the draws after an estimate, which the next select continues by replaying)."""
    import activetest.session.blindspot as sb

    runs: list[bool] = []  # each curves call: with the run's draws, or replayed
    real = sb.design_blind_spot_curves

    def curves(*args: Any, **kw: Any) -> Any:
        runs.append(kw.get("run") is not None)
        return real(*args, **kw)

    monkeypatch.setattr(sb, "design_blind_spot_curves", curves)
    a = _create(pool200, tmp_path / "a.db", **kw)
    b = _create(pool200, tmp_path / "b.db", **kw)
    with a, b:
        # the design refits at a select when the labels known + 1 pass 10, 12, 15, 19,
        # 24, 30, 38, 47, 59, ...: the selects of rounds 1, 4, 6 and 8 refit. Round 3
        # drops the state (a file written before): its select leaves it (48 draws to
        # replay), its estimate stores it at the 35 labels; round 4's select continues
        # it from there, replaying 35..47 (not its own draws) and then its own.
        rounds = [(20, 1, 0, 0), (15, 1, 0, 0), (3, 0, 0, 0), (10, 0, 1, 1), (13, 1, 0, 0),
                  (1, 1, 0, 0), (6, 0, 1, 0), (8, 1, 0, 0), (2, 1, 0, 0)]
        with_run = [True, True, True, None, False, True, True, True, True]
        for step, (n, labelled, estimated, drop) in enumerate(rounds):
            for s, reuse in ((a, True), (b, False)):
                monkeypatch.setattr(sb, "REUSE_RUN", reuse)
                if drop:
                    s.store._conn.execute("DROP TABLE blind_spot_checkpoint")
                runs.clear()
                s.select(n)
                want = with_run[step]
                assert runs == ([] if want is None else [want and reuse]), (step, reuse)
                if labelled:
                    s.label_from_data()
                if estimated:
                    _estimate(s, monkeypatch, True)
            assert _stored(a) == _stored(b), step
            assert blind_checkpoint.stored_k(a.store) is not None
        _same(_estimate(a, monkeypatch, True, record=False),
              _estimate(b, monkeypatch, False, record=False))


@pytest.mark.parametrize("acquisition", ["ce", "zero_one"])
def test_a_fixed_acquisition_continues_its_state(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        acquisition: str) -> None:
    """The paper's fixed acquisitions keep the same state (their exposures and curves):
    each estimate computes only the draws labelled since the last one, with the numbers
    of the curves from the first draw, to the last bit; a damaged state is not used."""
    import activetest.session.blindspot as sb

    computed: list[int] = []
    real = sb.fixed_blind_spot_curves

    def curves(scores: Any, acquired: Any, floor: Any, specs: Any, **kw: Any) -> Any:
        resume = kw.get("resume")
        computed.append(len(acquired) - (0 if resume is None else resume.k))
        return real(scores, acquired, floor, specs, **kw)

    monkeypatch.setattr(sb, "fixed_blind_spot_curves", curves)
    a = _create(pool200, tmp_path / "a.db", acquisition=acquisition)
    with a:
        for step, n in enumerate((35, 10, 7, 1, 12)):
            a.select(n)
            a.label_from_data()
            before = blind_checkpoint.stored_k(a.store)
            computed.clear()
            got = _estimate(a, monkeypatch, True)
            assert computed[0] == (n if step else 35)  # the new draws only
            _same(got, _estimate(a, monkeypatch, False, record=False))
            assert blind_checkpoint.stored_k(a.store) == a.labelled_draws().k != before
            assert any(x.estimate.widen_high.max() > 0 for x in got[1].values())
        con = sqlite3.connect(tmp_path / "a.db")
        con.execute("UPDATE columns SET data = substr(data, 9) WHERE name = 'blindspot:Q'")
        con.commit()
        con.close()
        a.select(3)
        a.label_from_data()
        _same(_estimate(a, monkeypatch, True), _estimate(a, monkeypatch, False, record=False))


def test_a_state_replaced_while_its_columns_are_read_is_not_used(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's ``select`` may store a new state between the reading of the
    state and of its columns (``select`` writes it outside the draws' lock): the mixed
    state is not continued; the estimate then gives the numbers from the first draw."""
    from activetest.session import columns as cols
    from activetest.session.draw import replayed

    with _create(pool200, tmp_path / "a.db") as s:
        s.select(40)
        s.label_from_data()
        con = sqlite3.connect(tmp_path / "a.db")
        con.execute("DELETE FROM blind_spot_checkpoint")  # the estimate stores one at 40
        con.commit()
        _estimate(s, monkeypatch, True)
        s.select(10)  # ... and this select continues it to 50
        s.label_from_data()
        key = s.store._read("SELECT key FROM blind_spot_checkpoint")[0][0]
        real = cols.read_column
        replaced: list[bool] = []

        def read_column(*args: Any, **kw: Any) -> Any:
            if not replaced:  # another process stores a state in between
                con.execute("UPDATE blind_spot_checkpoint SET key = 'other'")
                con.commit()
                replaced.append(True)
            return real(*args, **kw)

        # (the state's design arrays are the session's sampler's: given, as commands do)
        states = replayed(s.store).design_states()
        rows = [a.index for a in s.acquisitions()]
        assert blind_checkpoint.load(s.store, key, rows, 200) is None  # not without them
        assert blind_checkpoint.load(s.store, key, rows, 200, states) is not None
        monkeypatch.setattr(cols, "read_column", read_column)
        assert blind_checkpoint.load(s.store, key, rows, 200, states) is None
        assert replaced
        con.close()


def _shared_flag(s: Session) -> int:
    """The stored state's ``shared`` flag (its design arrays are the sampler's)."""
    import io

    import numpy as np

    blob = s.store._read("SELECT state FROM blind_spot_checkpoint")[0][0]
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as z:
        return int(z["shared"][0])


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_a_select_stores_no_design_arrays_the_next_sampler_has(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, object]) -> None:
    """After a ``select`` the stored state's design arrays are those of the session's
    sampler at the same refit: no ``s``, ``g`` or ``aux`` column is written (16 MB per
    million items each), the next command's sampler (restored from the design's
    checkpoint) gives them back, including the arrays from before a select's refit,
    and every estimate equals the curves from the first draw (without the sampler's
    arrays such a state is not used: the test below)."""
    a = _create(pool200, tmp_path / "a.db", **kw)
    with a:
        # rounds 1, 4 and 6 refit at their select (the test above): the state stored
        # ends at the new arrays, the sampler's after its refit
        from activetest.session import columns as cols

        written: list[str] = []
        real_write = cols.write_column

        def write(conn: object, name: str, *args: object, **k: object) -> object:
            written.append(name)
            return real_write(conn, name, *args, **k)  # type: ignore[arg-type]

        monkeypatch.setattr(cols, "write_column", write)
        chunks = None
        for n in (20, 15, 3, 10, 13, 1, 6):
            written.clear()
            a.select(n)
            names = {r[0] for r in a.store._read(
                "SELECT name FROM column_info WHERE name LIKE 'blindspot:%'")}
            assert _shared_flag(a) == 1
            # the running exposure is overwritten in place, not deleted and written
            now = a.store._read("SELECT rowid FROM columns WHERE name = 'blindspot:Q'")
            assert chunks is None or (now == chunks and "blindspot:Q" not in written)
            chunks = now
            assert names == {"blindspot:Q"} | {f"blindspot:wg{j}" for j in range(2)
                                               if f"blindspot:wg{j}" in names}, names
            a.label_from_data()
            _same(_estimate(a, monkeypatch, True, record=False),
                  _estimate(a, monkeypatch, False, record=False))


def test_a_compared_sessions_difference_floor_continues_with_the_state(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model compared at creation floors the paired difference's variance by the
    surrogate's model of it, which sums each draw's second moments under its proposal
    (one pass over the pool per draw: from the first draw at every estimate before, 2.7
    ns an item and draw). The blind spot's pass now computes the sums and keeps them in
    its state: each estimate computes the draws new since the last, none replayed for
    the floor, and its numbers are those of an estimate computed from the first draw
    (no checkpoint), to the last bit, at every step."""
    import activetest.session.blindspot as sb
    import activetest.stats.model_floor as mf

    computed: list[int] = []
    real = sb.design_blind_spot_curves

    def curves(design: Any, acquired: Any, specs: Any, **kw: Any) -> Any:
        resume = kw.get("resume")
        assert kw.get("second") is not None  # the floor's moments ride along
        computed.append(len(acquired) - (0 if resume is None else resume.k))
        return real(design, acquired, specs, **kw)

    replays: list[int] = []
    real_sums = mf.design_second_sums

    def sums(design: Any, acquired: Any, *a: Any, **kw: Any) -> Any:
        replays.append(len(acquired))
        return real_sums(design, acquired, *a, **kw)

    monkeypatch.setattr(sb, "design_blind_spot_curves", curves)
    monkeypatch.setattr(mf, "design_second_sums", sums)
    a = _create(pool200, tmp_path / "a.db", compare=[f"table:{pool200.target2}"],
                metric="log_loss")
    b = _create(pool200, tmp_path / "b.db", compare=[f"table:{pool200.target2}"],
                metric="log_loss")
    with a, b:
        k = 0
        for n in (30, 12, 9, 20):
            for s in (a, b):
                s.select(n)
                s.label_from_data()
            k += n
            computed.clear()
            replays.clear()
            got = _estimate(a, monkeypatch, True)
            assert replays == []  # the floor took the pass's sums
            assert computed == []  # the selects advanced the state over their draws
            (blob,), = a.store._read("SELECT state FROM blind_spot_checkpoint")
            with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as z:
                assert z["second_sums"].shape == (1, k)  # one difference, log loss
            want = _estimate(b, monkeypatch, False, record=False)  # from the first draw
            _same(got, want)
            assert "difference" in got[0] and got[0] == want[0]
            assert blind_checkpoint.stored_k(a.store) == k



def _edit_member(db: Path, member: str) -> None:
    """Change the values of the stored state's blob member ``member`` (times 1.5, plus
    0.001) as an editor of the file would: the blob rewritten, a valid npz."""
    con = sqlite3.connect(db)
    with con:
        blob = con.execute("SELECT state FROM blind_spot_checkpoint").fetchone()[0]
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
        arrays[member] = arrays[member] * 1.5 + 1e-3
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, **arrays)
        con.execute("UPDATE blind_spot_checkpoint SET state = ?", (buf.getvalue(),))
    con.close()


def _edit_column(db: Path, name: str) -> None:
    """Change the values of the stored state's per-item column ``blindspot:name``
    (times 1.5, plus 0.001), written in place with its layout."""
    from activetest.session import columns as cols

    con = sqlite3.connect(db)
    with con:
        info = cols.column_info(con, "blindspot:" + name)
        assert info is not None
        values = cols.read_column(con, info)[:, 0] * 1.5 + 1e-3
        assert cols.overwrite_column(con, "blindspot:" + name, values)
    con.close()


@pytest.mark.parametrize(("kw", "edit", "more"), [
    ({}, "out_0", 0),  # a curve's values: the estimate at 40 takes them as they are
    ({}, "cap", 0),  # a curve's loss cap
    ({"metric": "log_loss", "compare": True}, "second_sums", 0),  # the floor's sums
    ({"metric": "error_rate", "compare": True}, "column Q", 10),  # the exposures...
    ({"metric": "error_rate", "compare": True}, "column wg0", 10),  # ... control sums:
    # continued by the next select
    ({"acquisition": "ce"}, "out_0", 0),  # a fixed acquisition's curves
    ({"acquisition": "ce"}, "column Q", 10),  # and exposures, continued by the estimate
], ids=["curve", "cap", "second-sums", "exposure", "control-sums", "fixed-curve",
        "fixed-exposure"])
def test_a_state_whose_values_were_edited_is_not_used(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, Any], edit: str, more: int) -> None:
    """The stored state is a cache, which must never change a number; its key covers
    the session's inputs, not the state's own values. One of them edited in the file
    (a valid npz, a column of the same layout; no CRC fails): the state is not used
    (nor continued by ``select``), and the estimate is the one computed from the first
    draw, to the last bit."""
    if kw.pop("compare", False):
        kw["compare"] = [f"table:{pool200.target2}"]
    db = tmp_path / "a.db"
    with _create(pool200, db, **kw) as s:
        s.select(40)
        s.label_from_data()
        _estimate(s, monkeypatch, True)  # stores the state at 40
        if edit.startswith("column "):
            _edit_column(db, edit.split()[1])
        else:
            _edit_member(db, edit)
        if more:
            s.select(more)
            s.label_from_data()
        got = _estimate(s, monkeypatch, True, record=False)
        _same(got, _estimate(s, monkeypatch, False, record=False))


def test_a_state_written_before_the_digest_is_computed_again_once(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state from before the digest was kept (its blob without ``digest`` and the
    columns' ``cd_*``, as it was written then) is not continued: the next ``select``
    computes the curves from the first draw, the estimate has the numbers of one
    without any state, and the state stored again with its digest is continued."""
    import activetest.session.blindspot as sb

    computed: list[tuple[int, int]] = []  # (draws, the first one computed)
    real = sb.design_blind_spot_curves

    def curves(design: Any, acquired: Any, specs: Any, **kw: Any) -> Any:
        resume = kw.get("resume")
        computed.append((len(acquired), 0 if resume is None else resume.k))
        return real(design, acquired, specs, **kw)

    db = tmp_path / "a.db"
    with _create(pool200, db) as s:
        s.select(40)
        s.label_from_data()
        _estimate(s, monkeypatch, True)  # stores the state at 40
        con = sqlite3.connect(db)
        with con:
            blob = con.execute("SELECT state FROM blind_spot_checkpoint").fetchone()[0]
            with np.load(io.BytesIO(blob), allow_pickle=False) as z:
                old = {n: z[n] for n in z.files if n != "digest" and not n.startswith("cd_")}
            buf = io.BytesIO()
            np.savez(buf, allow_pickle=False, **old)
            con.execute("UPDATE blind_spot_checkpoint SET state = ?", (buf.getvalue(),))
        con.close()
        monkeypatch.setattr(sb, "design_blind_spot_curves", curves)
        s.select(10)
        s.label_from_data()
        got = _estimate(s, monkeypatch, True)
        assert computed[0] == (50, 0)  # from the first draw
        _same(got, _estimate(s, monkeypatch, False, record=False))
        computed.clear()
        s.select(10)
        s.label_from_data()
        _same(_estimate(s, monkeypatch, True), _estimate(s, monkeypatch, False, record=False))
        assert computed[0] == (60, 50)  # the state stored again: continued


@pytest.mark.parametrize("kw", [{}, {"metric": "both"}], ids=["earned", "two-metric"])
def test_a_sampler_restored_from_an_edited_checkpoint_lends_no_arrays_to_the_state(
        pool200: PoolFiles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        kw: dict[str, Any]) -> None:
    """The state continued by an estimate takes its design's per-item arrays (``s``,
    ``g``, ``aux``) from the session's sampler where that is at the state's refit; they
    were trusted for their refit count alone. The sampler here is restored from a
    design checkpoint whose ``s`` column was edited in the file (a checkpoint that
    stores its per-item columns, as every file before 2026-12-03 did): the state's
    digests of its own arrays tell them apart, its own columns are read instead, and
    the estimate is the one computed from the first draw, to the last bit (before: the
    edited arrays continued the curves, silently)."""
    from activetest.stats.adaptive import AdaptiveDesign

    monkeypatch.setattr(AdaptiveDesign, "redoable", property(lambda self: False))
    db = tmp_path / "a.db"
    with _create(pool200, db, **kw) as s:
        for n in (20, 15, 3, 10, 13, 1):  # each select refits, the next one does not
            s.select(n)
            s.label_from_data()
        _estimate(s, monkeypatch, True)  # stores the state at 62
        refits = int(s.store.design_draws()[-1][4])
        with monkeypatch.context() as mp:  # draws past the state, which stays at 62
            mp.setattr(blind_checkpoint, "save", lambda *a, **k: False)
            s.select(6)
        assert int(s.store.design_draws()[-1][4]) == refits  # the sampler at its refit
        s.label_from_data()
        assert blind_checkpoint.stored_k(s.store) == 62
    from activetest.session import columns as cols

    con = sqlite3.connect(db)
    with con:  # the design checkpoint's s, edited in place with its layout
        info = cols.column_info(con, "checkpoint:s")
        assert info is not None
        values = cols.read_column(con, info)[:, 0] * 1.5 + 1e-3
        assert cols.overwrite_column(con, "checkpoint:s", values)
    con.close()
    loaded: list[bool] = []
    real = blind_checkpoint.load

    def load(*args: Any, **k: Any) -> Any:
        got = real(*args, **k)
        loaded.append(got is not None)
        return got

    monkeypatch.setattr(blind_checkpoint, "load", load)
    with Session.open(db) as s:
        got = _estimate(s, monkeypatch, True, record=False)
        assert loaded and loaded[0]  # continued, with its own arrays
        _same(got, _estimate(s, monkeypatch, False, record=False))
