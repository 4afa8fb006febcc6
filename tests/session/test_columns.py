"""Sessions at pool scale: chunked columns, the schema-4 migration, streamed ``init``,
commands that read only the items they touch, and ``init`` killed by ``kill -9``."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import create_from_tables as _create
from session_support import init_from_tables, spy_on_stream, tmpfs
from session_support import same_session as _same_session
from session_support import tsv_tables as _tsv_tables
from session_support import write_pool_tables as _write_pool

from activetest.session import columns as cols
from activetest.session import stream_base, stream_init, stream_tables
from activetest.session.store import SCHEMA_VERSION, SessionStore
from activetest.session.workflow import Session

OLD = Path(__file__).parent / "data" / "old"


def _conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for stmt in cols.COLUMNS_SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    return conn


@pytest.mark.parametrize("n,width,chunk_bytes", [(1, 1, 8), (1000, 3, 24 * 7), (1000, 2, 16000),
                                                 (999, 4, 1 << 20)])
def test_a_column_round_trips_bit_exact_in_chunks(n: int, width: int, chunk_bytes: int) -> None:
    rng = np.random.default_rng(n + width)
    a = rng.normal(size=(n, width))
    a[rng.random(n) < 0.2] = np.nan  # rows never scored
    a[0, 0] = -np.inf
    conn = _conn()
    info = cols.write_column(conn, "x", a, chunk_bytes=chunk_bytes)
    assert info.chunk_rows == max(1, chunk_bytes // (8 * width))
    assert conn.execute("SELECT COUNT(*) FROM columns").fetchone()[0] == info.n_chunks
    assert max(len(r[0]) for r in conn.execute("SELECT data FROM columns")) <= max(
        chunk_bytes, 8 * width)
    back = cols.read_column(conn, cols.column_info(conn, "x"))  # type: ignore[arg-type]
    assert back.tobytes() == a.tobytes()
    rows = rng.integers(0, n, 17)
    assert cols.read_rows(conn, info, rows).tobytes() == a[rows].tobytes()
    new = rng.normal(size=(len(set(rows.tolist())), width))
    uniq = np.array(sorted(set(rows.tolist())))
    cols.update_rows(conn, info, uniq, new)
    a[uniq] = new
    assert cols.read_column(conn, info).tobytes() == a.tobytes()


def test_a_missing_chunk_is_named() -> None:
    conn = _conn()
    info = cols.write_column(conn, "x", np.zeros((100, 2)), chunk_bytes=160)
    conn.execute("DELETE FROM columns WHERE chunk = 3")
    with pytest.raises(ValueError, match="chunk"):
        cols.read_column(conn, info)
    with pytest.raises(ValueError, match="chunk 3 is missing"):
        cols.read_rows(conn, info, np.array([35]))



@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "tsv"])
def test_streamed_init_writes_the_session_the_general_path_writes(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streamed init writes the session the general path writes (TSV: tables of a
    CSV pool; they took the general path before 2026-12-05)."""
    files = _write_pool(tmp_path, 300, "csv" if fmt == "tsv" else fmt)
    if fmt == "tsv":
        files = _tsv_tables(files)
    monkeypatch.setattr(stream_base, "BLOCK", 64)  # several blocks
    ran = spy_on_stream(monkeypatch)
    _create(tmp_path / "streamed.db", files).close()
    assert ran  # the streamed path ran (and did not fall back)
    with sqlite3.connect(tmp_path / "streamed.db") as c:  # the streamed path ran
        assert c.execute("SELECT COUNT(*) FROM column_info").fetchone()[0] == 3
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "general.db", files).close()
    _same_session(tmp_path / "streamed.db", tmp_path / "general.db")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("acquisition", ["compare", "adaptive"])
def test_a_compare_session_streams_too(fmt: str, acquisition: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """``init --compare table:...``: the compared model's table is streamed like the
    target's, and the session is the one the general path writes (its stored scores,
    the compare acquisition's scores from them, the config naming it)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    files = _write_pool(tmp_path, 300, fmt)
    tgt = pq.read_table(files[2]) if fmt == "parquet" else pcsv.read_csv(files[2])
    neg, pos = tgt.column("negative").to_numpy(), tgt.column("positive").to_numpy()
    flip = np.arange(300) % 7 == 0  # the other model predicts the other class there
    other = pa.table({"id": tgt.column("id"), "negative": np.where(flip, pos, neg),
                      "positive": np.where(flip, neg, pos)})
    path = tmp_path / f"other.{fmt}"
    pq.write_table(other, path) if fmt == "parquet" else pcsv.write_csv(other, path)
    kw = {"compare": [f"table:{path}"], "acquisition": acquisition, "metric": "error_rate"}
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    ran = spy_on_stream(monkeypatch)
    _create(tmp_path / "streamed.db", files, **kw).close()
    assert ran  # the streamed path ran (and did not fall back)
    with sqlite3.connect(tmp_path / "streamed.db") as c:
        assert c.execute("SELECT COUNT(*) FROM column_info").fetchone()[0] == 4
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "general.db", files, **kw).close()
    _same_session(tmp_path / "streamed.db", tmp_path / "general.db")
    with Session.open(tmp_path / "streamed.db") as s:
        (spec,) = s.session_config.compare
        a, b = s.store.scores(f"compare:{spec}"), None
    with Session.open(tmp_path / "general.db") as g:
        b = g.store.scores(f"compare:{spec}")
    assert a is not None and b is not None and a.logprobs.tobytes() == b.logprobs.tobytes()
    pa_, pb = dict(a.provenance), dict(b.provenance)
    pa_.pop("scored_at", None)
    pb.pop("scored_at", None)
    assert pa_ == pb


def test_a_table_in_another_order_is_joined_by_id_while_streaming(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shuffled table: the stream joins it by id (no fall back to the general path), and
    the session is the general path's."""
    order = np.random.default_rng(0).permutation(200)
    files = _write_pool(tmp_path, 200, "csv", order=order)
    ran = spy_on_stream(monkeypatch)
    _create(tmp_path / "a.db", files).close()
    assert ran
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "b.db", files).close()
    _same_session(tmp_path / "a.db", tmp_path / "b.db")
    assert not list(tmp_path.glob(".*creating*"))


def test_a_duplicate_pool_id_is_refused_as_before(tmp_path: Path) -> None:
    pool, sur, tgt = _write_pool(tmp_path, 50, duplicate=True)
    with pytest.raises(ValueError, match="duplicate id 'it3'"):
        _create(tmp_path / "d.db", (pool, sur, tgt))
    assert not (tmp_path / "d.db").exists()


@pytest.mark.parametrize("tail", ["it3,-0.01,-4.6\n", "other9,-0.01,-4.6\n"])
def test_table_rows_after_the_pool_are_read_as_the_general_path_reads_them(
        tail: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table in the pool's order with more rows after the pool's last item: a
    repeated id is refused as the general path refuses it (the streamed path kept the
    first row and said nothing); an id of no pool item is passed over as the general
    path passes it (the stream joins such a table by id: the session is the same)."""
    pool, sur, tgt = _write_pool(tmp_path, 120, "csv")
    monkeypatch.setattr(stream_base, "BLOCK", 32)
    with tgt.open("a", encoding="utf-8") as f:
        f.write(tail)
    if tail.startswith("it3"):
        with pytest.raises(ValueError, match="duplicate id 'it3'"):
            _create(tmp_path / "d.db", (pool, sur, tgt))
        assert not (tmp_path / "d.db").exists()
        return
    ran = spy_on_stream(monkeypatch)
    _create(tmp_path / "a.db", (pool, sur, tgt)).close()
    assert ran
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "b.db", (pool, sur, tgt)).close()
    _same_session(tmp_path / "a.db", tmp_path / "b.db")


def test_commands_read_only_the_items_they_touch(tmp_path: Path) -> None:
    files = _write_pool(tmp_path, 400)
    db = tmp_path / "s.db"
    _create(db, files, acquisition="adaptive").close()
    with Session.open(db) as s:
        drawn = s.select(10)
    touched = {a.index for a in drawn}
    # every item never drawn: its stored text is not JSON, so reading it would fail
    with sqlite3.connect(db) as c:
        c.execute(f"UPDATE items SET fields = 'not json' WHERE idx NOT IN "
                  f"({', '.join(str(i) for i in touched)})")
    sheet = tmp_path / "labels.csv"
    with Session.open(db) as s:
        labels = {a.item_id: s.item(a.item_id).label for a in drawn}
        sheet.write_text("item_id,label\n" + "".join(
            f"{i},{('negative', 'positive')[y]}\n" for i, y in labels.items()))
        st = s.status()
        assert (st.n_items, st.n_selected) == (400, 10)
        assert s.import_file(sheet).added == 10
        r = s.estimate(progress=False)
        assert r.n_labels == 10
        s.export(tmp_path / "out.csv", which="selected")
        with pytest.raises(ValueError):  # the damage is real: the whole pool does not read
            s.items()


def test_a_schema_3_file_is_migrated_by_its_first_write(tmp_path: Path) -> None:
    src = OLD / "schema3_adaptive_log.db"
    db = tmp_path / src.name
    shutil.copyfile(src, db)
    with SessionStore.open(db) as st:
        assert st.schema_version == 3
        before = {r: st.scores(r).logprobs.tobytes() for r in st.score_roles()}  # type: ignore[union-attr]
        preds = st.predictions("target")
        est0 = Session(st).estimate(record=False, progress=False).to_dict()
        assert st.schema_version == 3  # reading writes nothing
    with SessionStore.open(db) as st:
        st.update_config({})  # the first write (it changes nothing else)
    with SessionStore.open(db) as st:
        assert st.schema_version == SCHEMA_VERSION == 4
        assert st.meta()["schema_version"] == "4"
        assert {r: st.scores(r).logprobs.tobytes() for r in st.score_roles()} == before  # type: ignore[union-attr]
        assert st.predictions("target") == preds
        blobs = st._read("SELECT length(logprobs) FROM scores")
        assert all(b[0] == 0 for b in blobs)
    with Session.open(db) as s:
        est1 = s.estimate(record=False, progress=False).to_dict()
    assert json.dumps(est0, default=str) == json.dumps(est1, default=str)


def test_a_read_only_old_file_opens_read_only_and_stays_schema_3(tmp_path: Path) -> None:
    """On a real read-only mount (a tmpfs remounted read-only; skipped where it cannot
    be mounted): the old file reads, is not migrated, and refuses writes."""
    src = OLD / "schema3_ce_both.db"
    with tmpfs(8192) as mnt:
        db = mnt / src.name
        shutil.copyfile(src, db)
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with Session.open(db) as s:
            assert not s.store.writable and s.store.schema_version == 3
            assert s.status().n_items > 0
            s.estimate(record=False, progress=False)
            with pytest.raises(ValueError, match="read-only"):
                s.select(1)
        assert db.read_bytes() == src.read_bytes()


def test_init_needs_about_the_sessions_size_on_the_disk_not_twice(tmp_path: Path) -> None:
    """On a real tmpfs (skipped where none can be mounted) with room for the session and
    a third more: `init` succeeds (its pages went through a WAL as large as the file,
    twice the session's size on the disk until the last checkpoint: 22 GiB for an 11 GiB
    session at 1e8 items), and the file made is the one made on a roomy disk, in WAL
    mode; with too little room it is refused as a full disk, leaving nothing."""
    files = _write_pool(tmp_path, 20_000, "parquet")
    _create(tmp_path / "roomy.db", files).close()
    size = (tmp_path / "roomy.db").stat().st_size
    with tmpfs((size * 4 // 3) // 1024 + 64) as mnt:
        _create(mnt / "s.db", files).close()
        assert sorted(p.name for p in mnt.iterdir()) == ["s.db"]
        _same_session(mnt / "s.db", tmp_path / "roomy.db")
        with sqlite3.connect(mnt / "s.db") as c:
            assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with tmpfs((size // 2) // 1024) as mnt:
        with pytest.raises(ValueError, match="no space left on the disk"):
            _create(mnt / "s.db", files)
        assert list(mnt.iterdir()) == []


_KILLED_INIT = r"""
import sys
from activetest.session.workflow import Session
Session.create(sys.argv[1], pool=sys.argv[2], task="sst2", surrogate="table:" + sys.argv[3],
               target="table:" + sys.argv[4], seed=1, pool_options={"id_column": "id"},
               progress=False).close()
print("done", flush=True)
"""


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.8])
def test_init_killed_by_kill_9_leaves_no_session_or_a_whole_one(delay: float,
                                                               tmp_path: Path) -> None:
    n = 40_000
    files = _write_pool(tmp_path, n)
    db = tmp_path / "s.db"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_INIT, str(db), *map(str, files)],
                             stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".s.db.creating-*")) and child.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    if db.exists():  # it finished before the kill: whole
        with Session.open(db) as s:
            assert s.n_items == n
            assert s.store.scores("target").scored.all()  # type: ignore[union-attr]
    # a new init of the same file works and removes what the dead one left
    _create(db, files, overwrite=True).close()
    assert not list(tmp_path.glob(".s.db.creating-*"))
    with Session.open(db) as s:
        assert s.n_items == n and len(s.select(3)) == 3


def test_a_column_is_overwritten_in_place_only_with_its_layout(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``overwrite_column`` rewrites a stored column's chunks in place (the same rows,
    bit-exact back, no chunk row deleted or added), refuses (False, nothing written) a
    column of another layout, and is undone with its transaction."""
    monkeypatch.setattr(cols, "CHUNK_BYTES", 8 * 64)  # 64 rows a chunk: 16 chunks
    rng = np.random.default_rng(5)
    conn = sqlite3.connect(tmp_path / "c.db", isolation_level=None)
    for stmt in cols.COLUMNS_SCHEMA.split(";"):
        if stmt.strip():
            conn.execute(stmt)
    a = rng.normal(size=1000)
    cols.write_column(conn, "x", a)
    before = conn.execute("SELECT chunk, rowid FROM columns ORDER BY chunk").fetchall()
    b = rng.normal(size=1000)
    b[3] = np.nan
    assert cols.overwrite_column(conn, "x", b)
    info = cols.column_info(conn, "x")
    assert info is not None and cols.read_column(conn, info)[:, 0].tobytes() == b.tobytes()
    assert conn.execute("SELECT chunk, rowid FROM columns ORDER BY chunk").fetchall() == before
    # another layout: refused, the stored column unchanged
    for other in (rng.normal(size=999), rng.normal(size=(1000, 2)), np.zeros(0)):
        assert not cols.overwrite_column(conn, "x", other)
    assert not cols.overwrite_column(conn, "missing", b)
    assert cols.read_column(conn, info)[:, 0].tobytes() == b.tobytes()
    # a chunk of the wrong size (a damaged file): refused
    conn.execute("UPDATE columns SET data = zeroblob(8) WHERE name = 'x' AND chunk = 15")
    assert not cols.overwrite_column(conn, "x", a)
    cols.write_column(conn, "x", b)
    # inside a transaction that fails: nothing of it stays
    with pytest.raises(RuntimeError):
        conn.execute("BEGIN IMMEDIATE")
        try:
            assert cols.overwrite_column(conn, "x", a)
            raise RuntimeError("killed")
        finally:
            conn.execute("ROLLBACK")
    assert cols.read_column(conn, info)[:, 0].tobytes() == b.tobytes()


def _with_checks(files: tuple[Path, Path, Path], shift: int) -> None:
    """Add the ``content_check`` column to both Parquet tables: each row's fingerprint of
    the pool item ``shift`` rows on (0: its own item, as a scoring job writes it)."""
    import pyarrow.parquet as pq

    from activetest.data.pool import load_pool
    from activetest.formats.label_records import CHECK_COLUMN, content_check

    items = load_pool(files[0], task="sst2", id_column="id").items
    fp = [content_check(it.fields) for it in items]
    for path in files[1:]:
        t = pq.read_table(path)
        pq.write_table(t.append_column(CHECK_COLUMN, [[fp[(i + shift) % len(fp)]
                                                       for i in range(t.num_rows)]]), path)


@pytest.mark.parametrize("shift", [0, 1])
def test_a_tables_content_check_is_confirmed_while_streaming(
        shift: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the streamed join read only a table's ids and values, so a table whose
    ``content_check`` column says its rows were written for other content (a scoring
    job's table of a pool re-sorted since) was joined silently, while the general path
    refuses it. Now the streamed join confirms every row by it: right, it streams (and
    writes the general path's session); wrong, it falls back, and the general path's
    message names the file and the item."""
    files = _write_pool(tmp_path, 200, "parquet")
    _with_checks(files, shift)
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    streamed = []
    real = stream_init._stream

    def spy(*a: object, **k: object) -> object:
        out = real(*a, **k)
        streamed.append(1)
        return out

    monkeypatch.setattr(stream_init, "_stream", spy)
    if shift:
        with pytest.raises(ValueError, match=r"(surrogate|target)\.parquet: the row for item .it0. "
                                             r"was written for other content"):
            _create(tmp_path / "s.db", files)
        assert not streamed and not (tmp_path / "s.db").exists()
        return
    _create(tmp_path / "s.db", files).close()
    assert streamed
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "g.db", files).close()
    _same_session(tmp_path / "s.db", tmp_path / "g.db")


def _positional(tmp_path: Path, *, id_in_pool: bool) -> tuple[Path, Path, Path]:
    """A CSV pool whose ids are its rows' numbers (with an unused ``id`` column if
    ``id_in_pool``) and two tables keyed 0..N-1, written for the pool in another order."""
    n = 30
    rng = np.random.default_rng(1)
    z = rng.normal(size=(n, 2))
    lp = z - np.logaddexp(z[:, :1], z[:, 1:])
    order = rng.permutation(n)
    head = "id,text,label\n" if id_in_pool else "text,label\n"
    (tmp_path / "pool.csv").write_text(head + "".join(
        (f"{k}," if id_in_pool else "") + f"review {k},{('negative', 'positive')[k % 2]}\n"
        for k in order), encoding="utf-8")
    for name in ("sur", "tgt"):
        (tmp_path / f"{name}.csv").write_text("id,negative,positive\n" + "".join(
            f"{k},{lp[k, 0]},{lp[k, 1]}\n" for k in range(n)), encoding="utf-8")
    return tmp_path / "pool.csv", tmp_path / "sur.csv", tmp_path / "tgt.csv"


@pytest.mark.parametrize("id_in_pool", [False, True])
@pytest.mark.parametrize("streamed", [True, False])
def test_a_table_is_never_joined_to_row_numbers_by_position_alone(
        id_in_pool: bool, streamed: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a pool without an id column (or with one, ``--id-column`` forgotten) has its
    rows' numbers as ids, and tables keyed 0..N-1 were joined to them by position: 26 of
    40 items held another item's predictions once the pool file was re-sorted, with no
    word. Now refused on both paths, naming the pool, the table and the fix (the pool's
    ``id`` column when it has one)."""
    pool, sur, tgt = _positional(tmp_path, id_in_pool=id_in_pool)
    if not streamed:
        monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    with pytest.raises(ValueError, match=r"pool\.csv: the pool's item ids are its rows' "
                                         r"numbers .*sur\.csv would be joined to it by "
                                         r"position alone") as e:
        Session.create(tmp_path / "s.db", pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", seed=3, progress=False)
    # the pool's id column and the tables' ids are both 0..N-1, which look like row
    # numbers: the message says at once that --id-column id alone meets the same rule,
    # and how to confirm that they are the ids that travelled with the rows (it said
    # "pass --id-column id", then the next init was refused again: two steps)
    assert ("--id-column id alone would join them by the numbers as well" in str(e.value)
            and str(e.value).endswith("--id-column id --ids-are-positions confirms the "
                                      "join")) == id_in_pool
    assert not (tmp_path / "s.db").exists()
    if id_in_pool:  # (tests/session/test_table_position_ids.py)
        kw = dict(pool=pool, task="sst2", surrogate=f"table:{sur}", target=f"table:{tgt}",
                  seed=3, progress=False, pool_options={"id_column": "id"})
        with pytest.raises(ValueError, match=r"sur\.csv: its item ids and the pool's look "
                                             r"like row numbers"):
            Session.create(tmp_path / "s.db", **kw)  # type: ignore[arg-type]
        Session.create(tmp_path / "s.db", ids_are_positions=True,
                       **kw).close()  # type: ignore[arg-type]


def test_row_numbers_join_a_table_that_confirms_each_items_content(
        tmp_path: Path) -> None:
    """A table with a ``content_check`` column (what ``activetest score`` writes for a
    pool without ids) joins row numbers: each row is confirmed by its item's content,
    and one written for the pool in another order is refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from activetest.data.pool import load_pool
    from activetest.formats.label_records import CHECK_COLUMN, content_check

    pool, sur, tgt = _positional(tmp_path, id_in_pool=False)
    items = load_pool(pool, task="sst2").items
    for path in (sur, tgt):
        rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
        pq.write_table(pa.table({"id": [r[0] for r in rows],
                                 "negative": [float(r[1]) for r in rows],
                                 "positive": [float(r[2]) for r in rows],
                                 CHECK_COLUMN: [content_check(it.fields) for it in items]}),
                       path.with_suffix(".parquet"))
    with Session.create(tmp_path / "s.db", pool=pool, task="sst2",
                        surrogate=f"table:{sur.with_suffix('.parquet')}",
                        target=f"table:{tgt.with_suffix('.parquet')}", seed=3,
                        progress=False) as s:
        assert len(s.store.items()) == 30


@pytest.mark.parametrize("streamed", [True, False])
def test_texts_longer_than_the_csv_modules_limit_are_read_and_round_trip(
        streamed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a valid CSV pool with a 200,000-character text was refused as "malformed
    CSV: field larger than field limit (131072)", and a label sheet the tool wrote for
    such an item could not be imported back."""
    import csv

    before = csv.field_size_limit(131_072)  # the module's default, whatever ran before
    try:
        _long_texts(streamed, tmp_path, monkeypatch)
    finally:
        csv.field_size_limit(before)


def _long_texts(streamed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import csv

    from activetest.formats.tables import allow_long_fields

    pool, sur, tgt = _write_pool(tmp_path, 40, "csv")
    rows = pool.read_text(encoding="utf-8").split("\n", 1)
    long_text = "word " * 40_000  # 200,000 characters
    pool.write_text(rows[0] + "\n" + rows[1].replace("text ", long_text, 1), encoding="utf-8")
    if not streamed:
        monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    with _create(tmp_path / "s.db", (pool, sur, tgt), acquisition="uniform") as s:
        assert max(len(it.fields["text"]) for it in s.items()) > 200_000
        s.select(40)
        sheet = tmp_path / "todo.csv"
        assert s.export(sheet) == 40
        allow_long_fields()  # as a user's own script would need to, to read it
        with sheet.open(encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
        assert any(long_text.strip() in cell for r in rows for cell in r)
        for r in rows[1:]:
            r[rows[0].index("label")] = "positive"
        with sheet.open("w", encoding="utf-8", newline="") as f:
            csv.writer(f).writerows(rows)
        assert s.import_file(sheet).added == 40


def test_a_damaged_parquet_pool_is_named_on_the_streamed_path(tmp_path: Path) -> None:
    """QA: the streamed init read a damaged Parquet pool's size outside its guard and
    failed with pyarrow's message alone ("Parquet magic bytes not found", no file named;
    an ArrowInvalid from Python); now the general path names the file."""
    pool, sur, tgt = _write_pool(tmp_path, 50, "parquet")
    bad = tmp_path / "trunc.parquet"
    bad.write_bytes(pool.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"trunc\.parquet: not a readable Parquet file") as e:
        _create(tmp_path / "s.db", (bad, sur, tgt))
    assert "<Buffer>" not in str(e.value)  # (pyarrow's name for the bytes read: QA)
    assert not (tmp_path / "s.db").exists()


def test_jsonl_lines_split_on_newlines_alone_on_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a JSONL table with a raw U+2028 inside a string (valid JSON) was refused by the
    general reader (Python's ``splitlines`` cut the string) and accepted streamed; a pool
    with CR-only line ends was accepted streamed and refused on the general path. Both
    paths now split JSON Lines on ``\\n`` alone: the first is read, the second refused,
    whichever path runs."""
    from activetest.formats.tables import json_lines

    assert [r["t"] for _, r in json_lines('{"t": "a\u2028b"}\n{"t": "c\x85d"}\r\n',
                                          "x")] == ["a\u2028b", "c\x85d"]
    pool, sur, tgt = _write_pool(tmp_path, 40, "jsonl")
    rows = [json.loads(x) for x in sur.read_text(encoding="utf-8").splitlines()]
    rows[3]["note"] = "line\u2028separator"
    sur.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows[::-1]),
                   encoding="utf-8")  # another order: the general path reads it
    _create(tmp_path / "a.db", (pool, sur, tgt)).close()
    cr = tmp_path / "cr.jsonl"
    cr.write_text(pool.read_text(encoding="utf-8").replace("\n", "\r"), encoding="utf-8")
    for streamed in (True, False):
        if not streamed:
            monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
        with pytest.raises(ValueError, match=r"cr\.jsonl, line 1: invalid JSON"):
            _create(tmp_path / f"cr{streamed}.db", (cr, sur, tgt))


def test_a_json_object_that_repeats_a_key_is_refused(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a JSONL label sheet giving ``"label"`` twice was imported with the last value;
    a CSV header that repeats a column is refused. Now a repeated key is refused too, in
    sheets and pools, on both init paths."""
    pool, sur, tgt = _write_pool(tmp_path, 40, "jsonl")
    with _create(tmp_path / "s.db", (pool, sur, tgt), acquisition="uniform") as s:
        s.select(3)
        ids = [a.item_id for a in s.acquisitions()]
        sheet = tmp_path / "labels.jsonl"
        sheet.write_text("".join(f'{{"item_id": "{i}", "label": "positive", '
                                 f'"label": "negative"}}\n' for i in ids), encoding="utf-8")
        with pytest.raises(ValueError, match=r"labels\.jsonl, line 1: an object repeats the "
                                             r"key 'label'"):
            s.import_file(sheet)
        assert s.labels() == {}
    dup = tmp_path / "dup.jsonl"
    dup.write_text(pool.read_text(encoding="utf-8").replace('"label":', '"id": "x", "label":', 1),
                   encoding="utf-8")
    for streamed in (True, False):
        if not streamed:
            monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
        with pytest.raises(ValueError, match=r"dup\.jsonl, line 1: an object repeats the key "
                                             r"'id'"):
            _create(tmp_path / f"d{streamed}.db", (dup, sur, tgt))


def _spoil(files: tuple[Path, Path, Path], case: str) -> str:
    """Write one defect into a Parquet pool or table (at a row of the third block of 64);
    returns the ``table:`` spec of the target to give."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tgt = files[2]
    if case in ("pool duplicate", "pool label"):  # (the tables list the pool's ids)
        col = "id" if case == "pool duplicate" else "label"
        for path in files if col == "id" else files[:1]:
            t = pq.read_table(path)
            vals = t.column(col).to_pylist()
            vals[150] = vals[5] if case == "pool duplicate" else "maybe"
            pq.write_table(t.set_column(t.schema.get_field_index(col), col, pa.array(vals)),
                           path)
        return f"table:{tgt}"
    if case in ("table duplicate", "table duplicate at the end"):
        t = pq.read_table(tgt)
        if case == "table duplicate":
            ids = t.column("id").to_pylist()
            ids[150] = ids[5]
            t = t.set_column(0, "id", pa.array(ids))
        else:
            t = pa.concat_tables([t, t.slice(3, 1)])
        pq.write_table(t, tgt)
        return f"table:{tgt}"
    if case == "content check":
        _with_checks(files, 0)
        t = pq.read_table(tgt)
        vals = t.column("content_check").to_pylist()
        vals[150] = vals[151]
        pq.write_table(t.set_column(t.schema.get_field_index("content_check"), "content_check",
                                    pa.array(vals)), tgt)
        return f"table:{tgt}"
    t = pq.read_table(tgt)
    neg = t.column("negative").to_numpy().copy()
    pos = t.column("positive").to_numpy().copy()
    spec = f"table:{tgt}"
    if case == "probs":
        neg, pos, spec = np.exp(neg), np.exp(pos), f"table:{tgt}?kind=probs"
    {"nan": lambda: neg.__setitem__(150, np.nan), "-inf": lambda: pos.__setitem__(150, -np.inf),
     "logprobs": lambda: neg.__setitem__(150, neg[150] + 0.5),
     "probs": lambda: neg.__setitem__(150, neg[150] + 0.2)}[case]()
    pq.write_table(pa.table({"id": t.column("id"), "negative": neg, "positive": pos}), tgt)
    return spec


def _refusals(make: Any, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """``make(db)``'s refusal on the general path (``g.db``), then on the stream
    (``s.db``) with the general path made to fail: ``(general, streamed)``."""
    from activetest.session import create

    real_try = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    general = make(tmp / "g.db")
    monkeypatch.setattr(stream_init, "try_stream", real_try)

    def no_general_path(*a: object, **k: object) -> object:
        raise AssertionError("the general path read the whole pool into memory")

    monkeypatch.setattr(create, "load_inputs", no_general_path)
    return general, make(tmp / "s.db")


@pytest.mark.parametrize("case", ["nan", "-inf", "logprobs", "probs", "content check",
                                  "pool duplicate", "pool label", "table duplicate",
                                  "table duplicate at the end"])
def test_a_defect_a_stream_can_name_is_refused_without_reading_all_into_memory(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA at pool scale: a Parquet pool or table with one bad row (a NaN or infinite
    log-prob, a row that does not normalise, another item's content check, a repeated
    pool id, a label the task has not) made the streamed `init` fall back to the general
    path, which reads the pool and every table into Python objects only to name the row
    (1.8 GB and 40 s at 1e6 items for a NaN in the last rows; killed for memory from
    ~1e7); so did a table's row that repeats an earlier row's id. Now the stream refuses
    it with the general path's own message, and the general path is never entered."""
    files = _write_pool(tmp_path, 300, "parquet")
    spec = _spoil(files, case)
    pool, sur, _ = files
    monkeypatch.setattr(stream_base, "BLOCK", 64)

    def make(db: Path) -> str:
        with pytest.raises(ValueError) as err:
            Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}", target=spec,
                           seed=3, pool_options={"id_column": "id"}, progress=False)
        assert not db.exists() and not list(tmp_path.glob(".*creating*"))
        return str(err.value)

    general, streamed = _refusals(make, tmp_path, monkeypatch)
    assert streamed == general
    # a Parquet pool's rows count from 1, as a table's do (QA: the same spoiled row 150
    # from 0 was "row 150" in the pool and "row 151" in a table)
    assert {"content check": "it150", "pool duplicate": "row 151", "pool label": "row 151",
            "table duplicate": "row 151: duplicate id 'it5' (first at row 6)",
            "table duplicate at the end": "row 301: duplicate id 'it3' (first at row 4)",
            }.get(case, "row 151") in general


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_streamed_init_shows_its_progress(fmt: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """QA at pool scale: the streamed `init` (53 minutes at 1e8 items) showed no progress
    at all; now it moves a bar by each block of items read and written (what the
    terminal's bar shows, recorded here), and none with ``progress=False``."""
    from activetest.models._util import forward_progress

    files = _write_pool(tmp_path, 300, fmt)
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    steps: list[int] = []
    with forward_progress(steps.append):  # stands in for the terminal's bar
        pool, sur, tgt = files
        Session.create(tmp_path / "s.db", pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", seed=3, pool_options={"id_column": "id"},
                       progress=True).close()
    with sqlite3.connect(tmp_path / "s.db") as c:  # the streamed path ran
        assert c.execute("SELECT COUNT(*) FROM column_info").fetchone()[0] == 3
    assert steps == [64, 64, 64, 64, 44]
    steps.clear()
    with forward_progress(steps.append):
        _create(tmp_path / "q.db", files).close()  # progress=False
    assert steps == []


def test_a_table_in_another_order_streams_where_memory_is_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA at pool scale: a table in another order than the pool (here two rows swapped)
    took the general path, which joins by id in memory (4.8 GB and 105 s at 3e6 items):
    from ~1e7 items the process was killed for memory, and then it was refused
    where the memory available was short. Since 2026-12-05 (later) the stream joins it
    by id itself, a second pass over the table against the items already written
    (memory: the result and one block), so even with the memory available faked small
    (it cannot be made short for real at a test's size) the session is made, the one the
    general path makes."""
    order = np.arange(200)
    order[[130, 131]] = order[[131, 130]]
    files = _write_pool(tmp_path, 200, "parquet", order=order)
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    monkeypatch.setattr(stream_init, "available_memory", lambda: 10_000, raising=False)
    ran = spy_on_stream(monkeypatch)
    _create(tmp_path / "s.db", files).close()
    assert ran and not list(tmp_path.glob(".*creating*"))
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "g.db", files).close()
    _same_session(tmp_path / "s.db", tmp_path / "g.db")


def _spoil_lines(files: tuple[Path, Path, Path], fmt: str, case: str) -> None:
    """Write one defect into a CSV or JSONL target table at its row 150 (of the third
    block of 64), or a row after the pool's last item that repeats an id."""
    import pyarrow.csv as pcsv

    tgt = files[2]
    sep = "\t" if fmt == "tsv" else ","
    t = None if fmt == "jsonl" else pcsv.read_csv(
        tgt, parse_options=pcsv.ParseOptions(delimiter=sep))
    rows: list[dict[str, object]] = (
        t.to_pylist() if t is not None  # type: ignore[assignment]
        else [json.loads(line) for line in tgt.read_text().splitlines()])
    row = rows[150]
    if case == "duplicate at the end":
        rows.append({**rows[3]})
    else:
        change = {"nan": ("negative", float("nan")), "text": ("positive", "abc"),
                  "empty value": ("negative", ""), "null value": ("positive", None),
                  "true": ("negative", True), "empty id": ("id", " "),
                  "null id": ("id", None), "number id": ("id", 150.5),
                  "duplicate": ("id", "it5"),
                  "unnormalised": ("negative", float(row["negative"]) + 0.5)}  # type: ignore[arg-type]
        if case == "missing id":
            del row["id"]
        else:
            col, value = change[case]
            row[col] = value
    if fmt == "jsonl":
        tgt.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return
    tgt.write_text(sep.join(("id", "negative", "positive")) + "\n" + "".join(
        sep.join((str(r["id"]), "nan" if r["negative"] != r["negative"] else str(r["negative"]),
                  str(r["positive"]))) + "\n" for r in rows))


_LINE_CASES = {  # case: what the message says (the line: CSV's from 2, JSONL's from 1)
    "nan": "line {l}: column 'negative': value {v} is not finite (NaN/inf are not allowed)",
    "text": "line {l}: column 'positive': expected a number, got 'abc'",
    "empty value": "line {l}: column 'negative': expected a number, got ''",
    "null value": "line {l}: column 'positive': expected a number, got None",
    "true": "line {l}: column 'negative': expected a number, got True",
    "empty id": "line {l}: id column 'id' is empty",
    "missing id": "line {l}: missing column 'id'",
    "null id": "line {l}: id column 'id' must be a string or integer, got None",
    "number id": "line {l}: id column 'id' must be a string or integer, got 150.5",
    "duplicate": "line {l}: duplicate id 'it5' (first at line {f})",
    "duplicate at the end": "line {e}: duplicate id 'it3' (first at line {t})",
    "unnormalised": "line {l}: log-probabilities do not normalise"}


@pytest.mark.parametrize("fmt,case", [
    *(("csv", c) for c in ("nan", "text", "empty value", "empty id", "duplicate",
                           "duplicate at the end", "unnormalised")),
    *(("tsv", c) for c in ("nan", "empty id", "duplicate")),
    *(("jsonl", c) for c in _LINE_CASES)])
def test_a_bad_row_of_a_csv_tsv_or_jsonl_table_is_refused_by_the_stream(
        fmt: str, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA at pool scale: a CSV, TSV or JSONL table with one bad row (a value that is not a
    finite number, an empty, missing or non-text id, a repeated id, a row that does not
    normalise) made the streamed `init` fall back to the general path, which reads the
    pool and every table into memory only to name the line (1.8 GB at 1e6 items; killed
    for memory from ~1e7). Now the stream refuses it with the general path's message,
    naming the file, the line and the column or item (the table's rows read again one
    at a time to find the line), leaves no file, and never enters the general path."""
    files = _write_pool(tmp_path, 300, "jsonl" if fmt == "jsonl" else "csv")
    if fmt == "tsv":
        files = _tsv_tables(files)
    _spoil_lines(files, fmt, case)
    tgt = files[2]
    monkeypatch.setattr(stream_base, "BLOCK", 64)

    def make(db: Path) -> str:
        with pytest.raises(ValueError) as err:
            _create(db, files)
        assert not db.exists() and not list(tmp_path.glob(".*creating*"))
        return str(err.value)

    general, streamed = _refusals(make, tmp_path, monkeypatch)
    first = 1 if fmt == "jsonl" else 2  # the line of the table's first row
    said = _LINE_CASES[case].format(l=150 + first, f=5 + first, e=300 + first, t=3 + first,
                                    v="nan" if fmt == "jsonl" else "'nan'")
    assert streamed == general == f"{tgt}: {said}" or (
        case == "unnormalised" and streamed == general and streamed.startswith(f"{tgt}: {said}"))


@pytest.mark.parametrize("case", ["underscore", "blank row"])
def test_a_csv_row_only_the_general_path_reads_still_takes_it(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV table's row the fast reader does not take but the general path reads (a
    value written ``-0.12_34``, Python's float syntax; a row of empty cells, which the
    general path skips) is not refused: its rows read again find no line to refuse, and
    the general path makes the session, as before."""
    files = _write_pool(tmp_path, 300, "csv")
    tgt = files[2]
    lines = tgt.read_text().splitlines(keepends=True)
    if case == "blank row":
        lines.insert(152, ",,\n")
    else:
        cells = lines[152].split(",")
        cut = cells[1].index(".") + 2  # between two digits: the same value
        cells[1] = cells[1][:cut] + "_" + cells[1][cut:]
        lines[152] = ",".join(cells)
    tgt.write_text("".join(lines))
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    read_again = []
    real = stream_tables.read_again

    def spy(*a: object, **k: object) -> str:
        read_again.append(1)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(stream_tables, "read_again", spy)
    _create(tmp_path / "a.db", files).close()
    assert read_again  # the stream read the rows again, and then fell back
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    _create(tmp_path / "b.db", files).close()
    _same_session(tmp_path / "a.db", tmp_path / "b.db")


def test_init_refuses_a_bad_table_line_with_exit_2_and_one_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line: a streamed `init` given a JSONL table with a repeated id exits 2
    with the one message naming the file, both lines and the item, no traceback."""

    from activetest.session import create

    files = _write_pool(tmp_path, 300, "jsonl")
    _spoil_lines(files, "jsonl", "duplicate")
    pool, sur, tgt = files
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    monkeypatch.setattr(create, "load_inputs", None)  # the general path is not entered
    db = tmp_path / "s.db"
    code, said = init_from_tables(db, pool, sur, tgt)
    assert code == 2, said
    assert f"{tgt}: line 151: duplicate id 'it5' (first at line 6)" in said
    assert said.count("duplicate id") == 1 and "Traceback" not in said
    assert not db.exists() and not list(tmp_path.glob(".*creating*"))
