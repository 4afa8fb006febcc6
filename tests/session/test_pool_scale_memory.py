"""Sessions at pool scale, memory (issue 19: 1e8 items from Parquet on one machine).

On a large pool the calibrated designs keep their features and loss tables lazy
(computed entry by entry from the model outputs instead of (N, C, C + 1) and (N, C)
arrays), ``init`` computes the first proposal and the sampler's start without a run's
state arrays, log-probs are checked in blocks, and the design's checkpoint keeps its
per-item arrays in chunked columns. None of it may change a stored number, a draw or
an estimate: each is compared here, to the last bit, with the in-memory path, on a
small pool with tiny blocks and chunks.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from session_support import spy_on_stream

from activetest.session import columns, stream_base, stream_tables
from activetest.session.store import SessionStore
from activetest.session.workflow import Session
from activetest.stats import ActiveSampler, validate
from activetest.stats import _design_models as dm
from activetest.stats import adaptive as ad
from activetest.stats.adaptive.features import _sequential_sum


def _lsm(z: np.ndarray) -> np.ndarray:
    return z - np.logaddexp.reduce(z, axis=1)[:, None]


def _outputs(n: int, c: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = _lsm(rng.normal(0, 1, (n, c)))
    z = rng.normal(0, 1.5, (n, c))
    z[::17, 0] = z[::17, 1] = 9.0  # ties in the target's argmax: the first class wins
    t = _lsm(z)
    return s, t, rng.integers(0, c, n)


def test_a_lazy_loss_table_is_the_array() -> None:
    _, t, _ = _outputs(50, 3)
    rows = np.array([0, 17, 34, 5, 5, 49])
    for mode, table in ((dm.LAZY_LOG, ad.loss_table(t, "log")),
                        (dm.LAZY_ZERO_ONE, ad.loss_table(t, "zero_one")),
                        (dm.LAZY_BOTH, np.hstack([ad.loss_table(t, "log"),
                                                  ad.loss_table(t, "zero_one")]))):
        lazy = ad.LazyLossTable(t, mode)
        assert lazy.shape == table.shape
        for col in range(table.shape[1]):
            cols = np.full(len(rows), col)
            assert lazy[rows, cols].tobytes() == table[rows, cols].tobytes()
        assert lazy[3, table.shape[1] - 1] == table[3, -1]
        with pytest.raises(IndexError):
            lazy[rows, np.full(len(rows), table.shape[1])]


@pytest.mark.parametrize("C", [2, 3, 5])
def test_the_lazy_models_moments_are_the_arrays(C: int) -> None:
    """A refit's model moments over the pool (``g_i``, ``s_i``) from the lazy features
    and loss table (their own loop, the tuples unpacked once) are those from the
    arrays, to the bit, for every loss table (log, 0/1 with ties in the argmax, both)."""
    s, t, _ = _outputs(400, C, seed=C)
    mean = (s.mean(axis=0), t.mean(axis=0))
    F = ad.calibration_features(s, t)
    rng = np.random.default_rng(C)
    for mode, table in ((dm.LAZY_LOG, ad.loss_table(t, "log")),
                        (dm.LAZY_ZERO_ONE, ad.loss_table(t, "zero_one")),
                        (dm.LAZY_BOTH, np.hstack([ad.loss_table(t, "log"),
                                                  ad.loss_table(t, "zero_one")]))):
        for off in ((0, C) if mode == dm.LAZY_BOTH else (0,)):
            w = rng.normal(0, 2, C + 1)
            got = np.empty((2, 400))
            want = np.empty((2, 400))
            dm._logit_moments((s, t, mean[0], mean[1]), (t, mode), off, w, got[0], got[1])
            dm._logit_moments(F, table, off, w, want[0], want[1])
            assert got.tobytes() == want.tobytes(), (mode, off)


@pytest.mark.parametrize("name", ["calibrated", "calibrated-uniform", "calibrated-both",
                                  "calibrated-both-uniform"])
@pytest.mark.parametrize("rule", ["original", "earned"])
@pytest.mark.parametrize("loss", ["log", "zero_one"])
def test_lazy_tables_make_the_same_runs_to_the_last_bit(name: str, rule: str,
                                                        loss: str) -> None:
    s, t, y = _outputs(120, 3)
    a = ad.AdaptiveDesign.from_name(name, surrogate_logprobs=s, target_logprobs=t, loss=loss,
                                    rule=rule, lazy=False)
    b = ad.AdaptiveDesign.from_name(name, surrogate_logprobs=s, target_logprobs=t, loss=loss,
                                    rule=rule, lazy=True)
    assert isinstance(b._F, tuple) and not isinstance(a._F, tuple)
    for x, z in ((a._s0, b._s0), (a._g0, b._g0), (a._aux0, b._aux0)):
        assert x.tobytes() == z.tobytes()
    L = a.losses_of(np.arange(120), y)
    assert L.tobytes() == b.losses_of(np.arange(120), y).tobytes()
    for extra in a.losses[1:]:
        assert (a.losses_of(np.arange(120), y, extra).tobytes()
                == b.losses_of(np.arange(120), y, extra).tobytes())
    ra = ad.simulate_design(a, losses=L, labels=y, budget=40, n_runs=2, random_state=5,
                            model_var=True)
    rb = ad.simulate_design(b, losses=L, labels=y, budget=40, n_runs=2, random_state=5,
                            model_var=True)
    for f in ra.__dataclass_fields__:
        va, vb = getattr(ra, f), getattr(rb, f)
        if isinstance(va, np.ndarray):
            assert va.tobytes() == vb.tobytes(), f
    # one real run, batch draws and observes: the same sampler state
    sa, sb = ad.AdaptiveSampler(a, seed=3), ad.AdaptiveSampler(b, seed=3)
    for k in (5, 7, 3):
        ia, qa = sa.draw(k)
        ib, qb = sb.draw(k)
        assert ia.tolist() == ib.tolist() and qa.tobytes() == qb.tobytes()
        sa.observe(labels=y[ia].tolist())
        sb.observe(labels=y[ib].tolist())
    for key, v in sa._st.items():
        assert v.tobytes() == sb._st[key].tobytes(), key
    assert sa.info() == sb.info()
    assert repr(sa.estimate()) == repr(sb.estimate())


def _designs() -> list[ad.AdaptiveDesign]:
    s, t, _ = _outputs(90, 2)
    out = [ad.AdaptiveDesign.from_name(n, surrogate_logprobs=s, target_logprobs=t, rule=r)
           for n in ("calibrated", "calibrated-both", "fixed_mix")
           for r in ("original", "earned")]
    out.append(ad.AdaptiveDesign.pe(s))
    out.append(ad.AdaptiveDesign.calibrated(t, s, schedule=np.array([1, 4])))  # refit at 1
    out.append(ad.AdaptiveDesign.fixed(np.zeros(90)))  # no positive score
    return out


def test_the_first_proposal_is_the_plans() -> None:
    for d in _designs():
        assert d.first_proposal().tobytes() == d.plan([]).q.tobytes(), d.name


def test_a_fresh_samplers_state_without_its_pool() -> None:
    scores = np.random.default_rng(0).random(500)
    for floor, seed in ((None, 0), (0.3, 12345), (1.0, None)):
        want = ActiveSampler(scores, proposal_floor=floor, seed=seed).state()
        got = ActiveSampler.fresh_state(scores, proposal_floor=floor, seed=seed)
        if seed is None:  # a fresh entropy seed: only the rest can match
            assert got.proposal_floor == want.proposal_floor and got.acquired == []
            continue
        assert got == want
    with pytest.raises(ValueError, match="negative"):
        ActiveSampler.fresh_state(-scores)


def test_log_probs_are_checked_in_blocks_as_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    s, _, _ = _outputs(40, 3)
    monkeypatch.setattr(validate, "_CHECK_ROWS", 7)
    assert validate.as_logprobs(s, "x") is not None
    bad = s.copy()
    bad[23, 2] = np.nan
    with pytest.raises(ValueError, match="at row 23, class 2"):
        validate.as_logprobs(bad, "x")
    bad = s.copy()
    bad[30] += 0.5
    with pytest.raises(ValueError, match="row 30 is not normalised"):
        validate.as_logprobs(bad, "x")


# ------------------------------------------------------------------ whole sessions


def _pool(folder: Path, n: int) -> tuple[Path, Path, Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    ids = [f"it{i}" for i in range(n)]
    y = rng.integers(0, 2, n)
    paths = [folder / "pool.parquet"]
    pq.write_table(pa.table({"id": ids, "sentence": [f"review {i}" for i in range(n)],
                             "label": [("negative", "positive")[k] for k in y]}), paths[0])
    for k, name in enumerate(("surrogate", "target")):
        z = rng.normal(0, 1, (n, 2))
        z[np.arange(n), y] += 1.0 + k
        lp = _lsm(z)
        paths.append(folder / f"{name}.parquet")
        pq.write_table(pa.table({"id": ids, "negative": lp[:, 0], "positive": lp[:, 1]}),
                       paths[-1])
    return paths[0], paths[1], paths[2]


class _Tiny:
    """Tiny blocks and chunks, lazy designs and block checks (on), or the defaults with
    the designs' arrays (off): switched around each call to its session."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.mp = monkeypatch
        self.defaults = (stream_base.BLOCK, columns.CHUNK_BYTES, validate._CHECK_ROWS)

    def __call__(self, on: bool) -> None:
        block, chunk, check = self.defaults
        self.mp.setattr(stream_base, "BLOCK", 7 if on else block)
        self.mp.setattr(columns, "CHUNK_BYTES", 40 if on else chunk)
        self.mp.setattr(validate, "_CHECK_ROWS", 5 if on else check)
        self.mp.setattr(ad, "LAZY_MIN_ROWS", 1 if on else 10**12)


@pytest.mark.parametrize("kw", [{}, {"metric": "error_rate"}, {"metric": "both"}],
                         ids=["earned", "error-rate", "two-metric"])
def test_a_session_in_tiny_chunks_stores_draws_and_estimates_the_same_bits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kw: dict[str, object]) -> None:
    pool, sur, tgt = _pool(tmp_path, 150)
    tiny = _Tiny(monkeypatch)
    made = {}
    for on in (False, True):
        tiny(on)
        db = tmp_path / f"{'tiny' if on else 'whole'}.db"
        made[on] = Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}",
                                  target=f"table:{tgt}", seed=3, progress=False,
                                  pool_options={"id_column": "id"}, **kw)
    with sqlite3.connect(tmp_path / "tiny.db") as c:  # streamed, in many chunks
        assert c.execute("SELECT MAX(chunk) FROM columns").fetchone()[0] > 20
    sa, sb = SessionStore.open(tmp_path / "whole.db"), SessionStore.open(tmp_path / "tiny.db")
    try:
        assert sa.config() == sb.config() and sa.items() == sb.items()
        for role in ("surrogate", "target", "acquisition"):
            x, y = sa.scores(role), sb.scores(role)
            assert x is not None and y is not None
            assert x.logprobs.tobytes() == y.logprobs.tobytes(), role
        assert sa.sampler_row() == sb.sampler_row()
    finally:
        sa.close()
        sb.close()
    a, b = made[False], made[True]
    with a, b:
        for step, n in enumerate([3, 4, 5, 1, 6, 2, 8]):
            got = {}
            for on, s in ((False, a), (True, b)):
                tiny(on)
                got[on] = [(x.index, x.q) for x in s.select(n)]
                if step % 3 != 1:
                    s.label_from_data()
            assert got[False] == got[True], step
            if step >= 2:
                est = {}
                for on, s in ((False, a), (True, b)):
                    tiny(on)
                    est[on] = repr(s.estimate(record=False, progress=False))
                assert est[False] == est[True]
    with sqlite3.connect(tmp_path / "tiny.db") as c:
        names = {r[0] for r in c.execute("SELECT name FROM column_info")}
    # refitted: the design's per-item arrays are recomputed on load, not stored; the
    # blind spot's state is stored as (tiny) chunked columns
    assert not {n for n in names if n.startswith("checkpoint:")}
    assert {n for n in names if n.startswith("blindspot:")}


def test_the_running_sum_is_the_kernels() -> None:
    rng = np.random.default_rng(4)
    for v in (rng.lognormal(0, 3, 1001), np.zeros(5), -np.zeros(3), np.array([1e16, 1.0, -1e16])):
        for block in (1, 7, 1 << 20):
            got = _sequential_sum(v, block)
            want = dm.total(v)
            assert got == want and (got > 0) == (want > 0)


def test_a_parquet_table_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """pyarrow's pre-buffering kept every column chunk read so far (3 GB per table at
    1e8 items): the streamed reader holds about one row group whatever the file's size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from activetest.data.builtin import get_task

    n, groups = 400_000, 40
    rng = np.random.default_rng(0)
    lp = _lsm(rng.normal(0, 1, (n, 2)))
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"id": [f"i{i}" for i in range(n)], "negative": lp[:, 0],
                             "positive": lp[:, 1]}), path, row_group_size=n // groups)
    table = stream_tables.streamable_table(f"table:{path}", get_task("sst2"))
    assert table is not None
    base = pa.total_allocated_bytes()
    most = rows = 0
    for ids, vals, _ in stream_tables.table_blocks(table):
        rows += len(ids)
        assert vals.shape == (len(ids), 2)
        most = max(most, pa.total_allocated_bytes() - base)
    assert rows == n
    whole = n * (16 + 8 + 4)  # the values, the ids' bytes and offsets, decoded
    assert most < whole / 3, (most, whole)  # pre-buffered: all of it (11.8 of 11.2 MB)


def _stream_files(kind: str, n: int, d: Path) -> tuple[Path, Path, Path]:
    """A pool of ``n`` items and its surrogate's and target's tables in folder ``d``:
    ``csv.gz`` (a gzipped CSV pool, a JSON-array surrogate, a gzipped CSV target),
    ``json.gz`` (a gzipped JSON-array pool) or ``parquet.gz`` (a gzipped Parquet pool),
    the last two with Parquet tables."""
    import gzip
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    d.mkdir()
    lp = _lsm(np.random.default_rng(n).normal(size=(2 * n, 2))).reshape(2, n, 2)
    if kind == "csv.gz":
        pool = d / "pool.csv.gz"
        pool.write_bytes(gzip.compress(("id,sentence,label\n" + "".join(
            f"it{i},text {i} of the pool,{('negative', 'positive')[i % 2]}\n"
            for i in range(n))).encode(), mtime=0))
        sur = d / "sur.json"
        sur.write_text(json.dumps([{"id": f"it{i}", "negative": float(lp[0, i, 0]),
                                    "positive": float(lp[0, i, 1])} for i in range(n)]))
        tgt = d / "tgt.csv.gz"
        tgt.write_bytes(gzip.compress(("id,negative,positive\n" + "".join(
            f"it{i},{float(lp[1, i, 0])!r},{float(lp[1, i, 1])!r}\n"
            for i in range(n))).encode(), mtime=0))
        return pool, sur, tgt
    recs = [{"id": f"it{i}", "sentence": f"text {i} of the pool",
             "label": ("negative", "positive")[i % 2]} for i in range(n)]
    if kind == "json.gz":
        data = json.dumps(recs).encode()
    else:
        raw = d / "raw.parquet"
        pq.write_table(pa.Table.from_pylist(recs), raw, row_group_size=4096)
        data = raw.read_bytes()
        raw.unlink()
    pool = d / f"pool.{kind}"
    pool.write_bytes(gzip.compress(data, mtime=0))
    tables = []
    for k, name in enumerate(("sur", "tgt")):
        path = d / f"{name}.parquet"
        pq.write_table(pa.table({"id": [f"it{i}" for i in range(n)],
                                 "negative": lp[k, :, 0], "positive": lp[k, :, 1]}), path)
        tables.append(path)
    return pool, tables[0], tables[1]


@pytest.mark.parametrize("kind", ["csv.gz", "json.gz", "parquet.gz"])
def test_init_of_gzipped_and_json_array_files_streams_in_bounded_memory(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``init`` of a gzipped CSV pool with a JSON-array table and a gzipped CSV table
    (``csv.gz``), of a gzipped JSON-array pool (``json.gz``) or of a gzipped Parquet pool
    (``parquet.gz``), the last two with Parquet tables: they took the general path (every
    record a Python object: 1.6 KB per item for ``csv.gz``, by tracemalloc; 32.6 MB at
    2e4 items, 65.4 MB at 4e4; a JSON array parsed whole, a gzipped Parquet file
    gunzipped whole into memory and read whole), now the stream (the pool gunzipped as
    it is read, a JSON array a record at a time, a gzipped Parquet file gunzipped into a
    copy beside the session and read by blocks of rows): what it holds grows with the
    model outputs only (0.23 KB per item for ``csv.gz``), above a fixed 16 MiB (the
    reads' buffer) and a block."""
    import tracemalloc

    ran = spy_on_stream(monkeypatch)

    def create(db: Path, pool: Path, sur: Path, tgt: Path) -> None:
        Session.create(db, pool=pool, task="sst2", surrogate=f"table:{sur}",
                       target=f"table:{tgt}", seed=3, pool_options={"id_column": "id"},
                       progress=False).close()

    monkeypatch.setattr(stream_base, "BLOCK", 1024)
    create(tmp_path / "warm.db", *_stream_files(kind, 50, tmp_path / "warm"))  # imports
    n = 25_000
    big = _stream_files(kind, n, tmp_path / "big")
    tracemalloc.start()
    try:
        create(tmp_path / "s.db", *big)
        most = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert most < (16 << 20) + n * 500, most  # the general path (csv.gz): 41 MB (1.6 KB an item)
    assert len(ran) == 2
    with SessionStore.open(tmp_path / "s.db") as s:
        assert len(s.items()) == n
