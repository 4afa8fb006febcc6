"""Checkpoints of the adaptive design's state, so that a command need not replay it.

Without a checkpoint, every ``select``, ``estimate`` and ``report`` of an adaptive
session rebuilds the sampler by replaying its whole history (each past draw a pass
over the pool: labels x N per command). After each draw batch the sampler's full
state (the design's arrays, its per-draw history and the RNG) is written here, in
the SAME transaction as the draws, keyed by the number of draws, the number of
labels the design has seen and a hash of the design's spec and seed. A command
loads it instead of replaying when the key matches the stored history and every
per-draw record in it equals the stored one (items, q, controls, lambda, labels
known, refits, the labels and losses the design saw, the RNG state): a stale or
foreign checkpoint is never used, and an absent or invalid one (files written before
checkpoints, a damaged blob) falls back to the full replay, which gives the same
sampler to the last bit (the replay forces the stored draws through the same steps).

Only the latest checkpoint is kept (older ones are deleted in the same transaction).

The design's per-item arrays (score ``s``, control ``g``, the two-metric design's
``aux``; ``N`` values each) are not in the blob, which SQLite refuses over 1e9 bytes
(62M items). Before the design's first refit they are its starting arrays and are not
stored at all. After it they are not stored either but recomputed on load: they are a
function of the last refit alone, so the blob keeps the weights before that refit
(``w_pre``) and :meth:`~activetest.stats.adaptive.AdaptiveSampler.redo_last_refit`
runs it again (the same compiled refit on the same inputs: the same arrays to the
last bit, checked against the stored weights, lambda and ridge; a mismatch replays).
That saves writing ``N`` values per array after every refit (at 1e6 items, most of a
``select``'s difference between a session with labels and one without). A ``select``
loads with ``defer_redo``: where its first draw refits (the usual case while the
refits are frequent), that refit replaces every per-item array before any is read, so
the last one is not run again at all
(:meth:`~activetest.stats.adaptive.AdaptiveSampler.settle_last_refit`). The
out-of-sample guard's ``aux`` also records each draw: for it they are chunked columns
``checkpoint:s``, ``checkpoint:g``, ``checkpoint:aux:0..6`` of the session file
(:mod:`activetest.session.columns`), written in the same transaction (``s`` and ``g``
kept rather than written again where the sampler continues the stored checkpoint
without a refit since: they change only at a refit), as every design's were before
(such checkpoints, all written before the digest below, are replayed once). The
remaining-items mask is the complement of the draws. (Checkpoints written before that
kept them in the blob; they too predate the digest.)
``ACTIVETEST_CHECKPOINTS=0`` in the environment makes every command replay (for
benchmarks and for the tests that compare both paths).

The key and the per-draw records above are checked against the stored draws, but the
blob holds more that feeds later draws and estimates: the design's small arrays
(``st_W``, the label and loss history ``st_hy``/``st_hL`` a refit reads, ...), each
draw's model variance and the second metric's controls (``l_model_var``,
``l_control2``, ``l_control_rest2``, ``l_model_var2``, recomputed only by a replay),
and the per-item columns. So each checkpoint also keeps a digest of what it holds
(SHA-256 of its key and every array of its blob, :func:`_content_digest`; each
per-item column's values have their own digest in the blob, checked where the column
is read), as the blind-spot state does (:mod:`activetest.session.blind_checkpoint`):
a checkpoint whose values were changed in the file (a sqlite3 UPDATE, a bad disk) is
not used, and the command replays the stored draws (the numbers of an untouched
session). A checkpoint written before the digest is not used either: one full replay
(the same numbers to the last bit), after which the command re-writes it with its
digests where the file can be written (:func:`renew`: ``estimate`` and ``report`` too,
which write no checkpoint otherwise, so a user who only estimates replays once, not at
every command), as the next ``select`` does. Where a ``select`` continues a loaded
checkpoint without a refit, the ``s`` and ``g`` digests checked at the load are the
new checkpoint's (the arrays are the same), not computed again; every column read
from the file is still hashed and checked.
Cost, measured 2026-12-07 at 1e6 items (2 shared cores, median of 5): a column's
digest is 5.5 ms (SHA-256 of 8 MB), paid once at the load and once at the save (not for
``s`` and ``g`` where the save continues the load without a refit); one save+load of a
checkpoint with its ``s`` and ``g`` columns took 142 ms with the
digests against 117-132 ms without (the guard's design, 9 columns: ~100 ms more). A
checkpoint without columns (every other design after a refit, and before one) hashes
its small arrays only (the draws' history: well under a millisecond).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import zipfile
import zlib
from contextlib import suppress
from typing import Any, NamedTuple

import numpy as np

from activetest.session.store import (
    SessionLockedError,
    SessionReadOnlyError,
    SessionStore,
    SessionWriteError,
)

#: What reading a damaged stored state raises (a changed byte in its npz blob: a bad
#: CRC or header is ``zipfile.BadZipFile``, bad compressed data ``zlib.error``; a
#: damaged page ``sqlite3.DatabaseError``): the state is then not used, and the design
#: (or the blind spot) is replayed from the stored draws instead.
DAMAGED = (ValueError, KeyError, OSError, EOFError, TypeError, IndexError,
           zipfile.BadZipFile, zlib.error, sqlite3.DatabaseError)

__all__ = ["arrays_digest", "enabled", "load", "renew", "save", "spec_hash"]

_SCHEMA = ("CREATE TABLE IF NOT EXISTS adaptive_checkpoints (draws INTEGER NOT NULL, "
           "labels INTEGER NOT NULL, spec_hash TEXT NOT NULL, state BLOB NOT NULL, "
           "PRIMARY KEY (draws, labels, spec_hash))")

#: the sampler's per-item state arrays (not in the blob: see the module docstring)
_PER_ITEM = ("s", "g", "aux", "rem")
_COLUMN = "checkpoint:"
#: the blob's member holding the checkpoint's digest (:func:`_content_digest`)
_DIGEST = "digest"
#: the blob's members holding each per-item column's digest: this prefix and the
#: column's name after ``checkpoint:``, without its ``:`` (``cd_s``, ``cd_aux0``, ...)
_COLUMN_DIGEST = "cd_"

#: the sampler's per-draw lists, stored as arrays (dtype: int64 or float64)
_INT_LISTS = ("acquired", "n_known", "labels", "refits")
_FLOAT_LISTS = ("q", "control", "control_rest", "lam", "losses", "model_var", "control2",
                "control_rest2", "model_var2")


class _KeptColumns(NamedTuple):
    """What :func:`save` needs to keep a sampler's stored ``s`` and ``g`` columns, and
    their digests, rather than write and hash them again (set by :func:`load` where it
    read them, and by :func:`save` where it wrote them)."""

    #: the key ``(draws, labels, spec hash)`` of the checkpoint the columns belong to
    key: tuple[int, int, str]
    #: the design's refit count then (``st["ist"][1]``): ``s`` and ``g`` change only at
    #: a refit
    refits: int
    #: the sampler's state dict then (the same object, or the columns are not kept)
    st: dict[str, np.ndarray]
    #: the ``s`` and ``g`` arrays then (the same objects) and the ``(32,)`` uint8 digests
    #: of their values, checked against the stored columns where :func:`load` read them
    s: np.ndarray
    g: np.ndarray
    s_digest: np.ndarray
    g_digest: np.ndarray


def _continues(sampler: Any) -> _KeptColumns | None:
    """The sampler's :class:`_KeptColumns` where its ``s`` and ``g`` are still the ones
    it records (the same state and arrays, no refit since), else None."""
    prev = getattr(sampler, "_columns_of", None)
    st = sampler._st
    if (isinstance(prev, _KeptColumns) and prev.st is st and prev.s is st["s"]
            and prev.g is st["g"] and prev.refits == int(st["ist"][1])):
        return prev
    return None


def enabled() -> bool:
    """Whether commands load checkpoints (``ACTIVETEST_CHECKPOINTS=0``: always replay)."""
    return os.environ.get("ACTIVETEST_CHECKPOINTS", "1") != "0"


def spec_hash(design: Any, seed: int | None) -> str:
    """SHA-256 of the design's spec and the run's seed (the checkpoint's key)."""
    text = json.dumps({"spec": design.spec(), "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _column_digest(values: np.ndarray) -> np.ndarray:
    """``(32,)`` uint8: SHA-256 of a per-item column's values as they are stored
    (``<f8``, :func:`activetest.session.columns.write_column`), with their shape."""
    a = np.ascontiguousarray(np.asarray(values, dtype="<f8"))
    h = hashlib.sha256(f"{a.shape}".encode())
    h.update(memoryview(a).cast("B"))  # its bytes, not a copy of them
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


def _column_member(name: str) -> str:
    """The blob's member holding the digest of the column ``checkpoint:name``."""
    return _COLUMN_DIGEST + name.replace(":", "")


def _content_digest(key: tuple[int, int, str], arrays: dict[str, np.ndarray]) -> np.ndarray:
    """``(32,)`` uint8: SHA-256 of a checkpoint's key ``(draws, labels, spec hash)`` and
    every array of its blob but the digest itself (each by its name, dtype, shape and
    bytes, in the order of the names), the per-item columns' digests included."""
    h = hashlib.sha256(json.dumps([int(key[0]), int(key[1]), str(key[2])]).encode())
    return arrays_digest(h, arrays, _DIGEST)


def arrays_digest(h: Any, arrays: dict[str, np.ndarray], skip: str) -> np.ndarray:
    """``(32,)`` uint8: the SHA-256 ``h`` (begun with what the caller keys it by) after
    every array of ``arrays`` but ``skip``, each by its name, dtype and shape (JSON) and
    then its bytes, in the order of the names: the one rule of the stored states' content
    digests (this module's checkpoint, the blind-spot state's)."""
    for name in sorted(arrays):
        if name == skip:
            continue
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


def save(store: SessionStore, sampler: Any) -> None:
    """Write ``sampler``'s state as the session's checkpoint (inside the caller's
    write transaction, replacing the previous one)."""
    sampler._check_settled()  # never the design's start arrays for a fitted state
    buf = io.BytesIO()
    st = sampler._st
    columns = store._has_columns()
    arrays = {f"st_{k}": v for k, v in st.items() if not (columns and k in _PER_ITEM)}
    fitted = int(st["ist"][1]) > 0  # refitted: s, g, aux are no longer the start's
    # after a refit: recomputed on load from the weights before it, else stored
    redo = fitted and sampler.w_pre is not None and sampler.design.redoable
    for name in _INT_LISTS:
        arrays[f"l_{name}"] = np.asarray(getattr(sampler, name), dtype=np.int64)
    for name in _FLOAT_LISTS:
        arrays[f"l_{name}"] = np.asarray(getattr(sampler, name), dtype=np.float64)
    rng = json.dumps(sampler._rng.bit_generator.state, default=int)
    arrays["rng"] = np.frombuffer(rng.encode(), dtype=np.uint8)
    if sampler.w_pre is not None:
        arrays["w_pre"] = np.asarray(sampler.w_pre, dtype=np.float64)
    if columns:
        arrays["per_item"] = np.array([3 if redo else 2 if fitted else 1], dtype=np.int64)
    # s and g change only at a refit: where this state continues the stored checkpoint
    # (loaded from it, its columns read and checked, no refit since, the same state and
    # arrays) their digests are the ones checked then, not computed again (SHA-256 of
    # 8 MB each per million items), and where that checkpoint is still the stored one
    # their columns are kept, not written again; aux may change at every draw (the
    # out-of-sample guard's record): always hashed and written
    prev = _continues(sampler) if columns and fitted and not redo else None
    if columns and fitted and not redo:  # the columns' digests (kept ones too: the same)
        for name, v in _per_item(st):
            arrays[_column_member(name)] = (
                prev.s_digest if prev is not None and name == "s"
                else prev.g_digest if prev is not None and name == "g"
                else _column_digest(v))
    key = (len(sampler.acquired), len(sampler.losses), spec_hash(sampler.design, sampler.seed))
    arrays[_DIGEST] = _content_digest(key, arrays)
    np.savez(buf, allow_pickle=False, **arrays)
    with store.transaction() as c:
        c.execute(_SCHEMA)
        keep = prev is not None and c.execute(
            "SELECT draws, labels, spec_hash FROM adaptive_checkpoints").fetchall() == [prev.key]
        c.execute("DELETE FROM adaptive_checkpoints")
        if columns:
            from activetest.session import columns as cols

            kept = {_COLUMN + "s", _COLUMN + "g"} if keep else set()
            for (name,) in c.execute("SELECT name FROM column_info WHERE name LIKE ?",
                                     (_COLUMN + "%",)).fetchall():
                if name not in kept:
                    cols.delete_column(c, name)
            if fitted and not redo:
                for name, v in _per_item(st):
                    if _COLUMN + name not in kept:
                        cols.write_column(c, _COLUMN + name, v)
        c.execute("INSERT INTO adaptive_checkpoints (draws, labels, spec_hash, state) "
                  "VALUES (?, ?, ?, ?)", (*key, buf.getvalue()))
    if columns and fitted and not redo:
        sampler._columns_of = _KeptColumns(key, int(st["ist"][1]), st, st["s"], st["g"],
                                           arrays[_column_member("s")],
                                           arrays[_column_member("g")])


def load(store: SessionStore, design: Any, seed: int | None, rng_state: Any,
         acq: list[Any], dd: list[Any], *, defer_redo: bool = False) -> Any:
    """The sampler from the session's checkpoint, or None when there is none that
    matches the stored history exactly (then the caller replays).

    ``defer_redo``: a checkpoint whose per-item arrays are recomputed by running its
    last refit again leaves that to the caller's
    :meth:`~activetest.stats.adaptive.AdaptiveSampler.settle_last_refit` (which skips it
    where the next draw refits anyway, and raises where it does not give the stored
    state: the caller then loads again without deferring, or replays)."""
    if not enabled():
        return None
    seen = [(d[5], d[6]) for d in dd if d[5] is not None]
    key = (len(acq), len(seen), spec_hash(design, seed))
    try:
        rows = store._read("SELECT state FROM adaptive_checkpoints WHERE draws = ? AND "
                           "labels = ? AND spec_hash = ?", key)
    except sqlite3.OperationalError:  # no such table: a file from before checkpoints
        return None
    if not rows:
        return None
    try:
        return _rebuild(store, design, seed, rng_state, acq, dd, seen, bytes(rows[0][0]),
                        defer_redo, key)
    except DAMAGED:  # damaged: replay
        return None


def renew(store: SessionStore, sampler: Any, rng_state: Any) -> bool:
    """Re-write a checkpoint written before the digests were kept (a "pre-digest" one,
    never loaded: every command replays the design from its first draw while it is
    there) as ``sampler``'s, with its digests, where ``sampler`` is the full replay of
    the stored history (``rng_state``: the stored RNG state it was replayed to).

    Called by the commands that replay without drawing (``estimate``, ``report``, the
    design's info): the next command loads the checkpoint instead of replaying. The
    replay's state is what a valid checkpoint holds to the last bit, so no number
    changes. Nothing is written (False) where checkpoints are off
    (``ACTIVETEST_CHECKPOINTS=0``), the file is read-only, locked, full or of a schema
    before the columns (never migrated by a read), the stored checkpoint is not a
    pre-digest one of this history (absent, damaged, edited or stale ones: the next
    ``select`` writes one), or another process drew or re-wrote it meanwhile (checked
    under the write lock)."""
    if (not enabled() or not store.writable or not store._has_columns()
            or (store._conn.in_transaction and not store._depth)):  # (inside a read's)
        return False
    key = (len(sampler.acquired), len(sampler.losses), spec_hash(sampler.design, sampler.seed))
    try:
        rows = store._read("SELECT draws, labels, spec_hash, state FROM adaptive_checkpoints")
    except sqlite3.OperationalError:  # no such table
        return False
    if len(rows) != 1 or tuple(rows[0][:3]) != key or not _predigest(bytes(rows[0][3])):
        return False
    with suppress(SessionWriteError, SessionReadOnlyError, SessionLockedError):
        with store.transaction() as c:
            row = store.sampler_row()
            if (c.execute("SELECT draws, labels, spec_hash, state FROM adaptive_checkpoints"
                          ).fetchall() != rows or store.n_acquired() != key[0]
                    or row is None or row[2] != rng_state):
                return False  # drawn or re-written meanwhile: left as it is
            save(store, sampler)
        return True
    return False


def _predigest(blob: bytes) -> bool:
    """Whether a checkpoint's blob is a readable npz without the digest member (written
    before the digests were kept); False for a damaged one."""
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as z:
            names = z.namelist()
    except DAMAGED:
        return False
    return _DIGEST + ".npy" not in names and "rng.npy" in names


def _per_item(st: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """The per-item arrays stored as columns: ``s``, ``g`` and each row of ``aux``."""
    return [("s", st["s"]), ("g", st["g"])] + [(f"aux:{r}", st["aux"][r])
                                               for r in range(st["aux"].shape[0])]


def _rebuild(store: SessionStore, design: Any, seed: int | None, rng_state: Any,
             acq: list[Any], dd: list[Any], seen: list[tuple[Any, Any]], blob: bytes,
             defer_redo: bool = False, key: tuple[int, int, str] | None = None) -> Any:
    from activetest.stats.adaptive import AdaptiveSampler

    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    # every value it holds must be the one written (QA: l_model_var, the second metric's
    # controls and the design's arrays, st_W, st_hL, ..., were not checked: an edit in
    # the file changed later estimates and draws with no word); none: written before
    # the digest was kept, replayed once (the same numbers)
    want_digest = data.get(_DIGEST)
    if (key is None or want_digest is None
            or not np.array_equal(want_digest, _content_digest(key, data))):
        raise ValueError("checkpoint without its digest, or its values were changed")
    lists: dict[str, list[Any]] = {name: data[f"l_{name}"].tolist()
                                   for name in _INT_LISTS + _FLOAT_LISTS}
    rng = json.loads(data["rng"].tobytes().decode())
    # every per-draw record must be the stored one: otherwise it is stale
    want = {"acquired": [a.index for a in acq], "q": [a.q for a in acq],
            "control": [d[0] for d in dd], "control_rest": [d[1] for d in dd],
            "lam": [d[2] for d in dd], "n_known": [d[3] for d in dd],
            "refits": [d[4] for d in dd], "labels": [int(y) for y, _ in seen],
            "losses": [float(L) for _, L in seen]}
    for name, values in want.items():
        if lists[name] != values:
            raise ValueError(f"checkpoint {name} differs from the stored history")
    if rng != rng_state:
        raise ValueError("checkpoint RNG state differs from the stored one")
    # the sampler's own fresh state: its per-item arrays are the design's start (one
    # state in memory, not two: 17 bytes per item)
    sampler = AdaptiveSampler(design, seed=seed)
    fresh = sampler._st
    st = {k[3:]: v for k, v in data.items() if k.startswith("st_")}
    columns_read: dict[str, np.ndarray] = {}  # name -> its checked digest
    mode = int(data["per_item"][0]) if "per_item" in data else 0
    if mode == 3 and "w_pre" not in data:
        raise ValueError("checkpoint lacks the weights before its last refit")
    if "per_item" in data:  # the per-item arrays: the start's, stored as columns, or
        # the start's until the last refit is run again (below)
        if set(st) & set(_PER_ITEM):
            raise ValueError("checkpoint holds per-item arrays twice")
        if mode == 2:
            from activetest.session import columns as cols

            conn = store._conn
            for name, out in _per_item(fresh):
                info = cols.column_info(conn, _COLUMN + name)
                want = data.get(_column_member(name))
                if (info is None or info.n_rows != out.shape[0] or info.width != 1
                        or want is None):
                    raise ValueError(f"checkpoint column {name} is missing")
                cols.read_column(conn, info, out)
                if not np.array_equal(want, _column_digest(out)):
                    raise ValueError(f"checkpoint column {name} was changed")
                columns_read[name] = want
        rem = fresh["rem"]
        rem[np.asarray([a.index for a in acq], dtype=np.int64)] = False
        for k in _PER_ITEM:
            st[k] = fresh[k]
    if set(st) != set(fresh) or any(st[k].dtype != fresh[k].dtype for k in st):
        raise ValueError("checkpoint arrays are not the design's")
    sampler._st = st
    sampler._cap = int(st["hidx"].shape[0])
    for name, values in lists.items():
        setattr(sampler, name, values)
    sampler._rng.bit_generator.state = rng
    if "w_pre" in data:
        sampler.w_pre = np.array(data["w_pre"], dtype=np.float64)
    if mode == 3 and defer_redo:
        sampler.defer_last_refit(data["w_pre"])
    elif mode == 3:
        sampler.redo_last_refit(data["w_pre"])
    if columns_read:  # what save() needs to keep the s and g columns and their checked
        # digests
        sampler._columns_of = _KeptColumns(key, int(st["ist"][1]), st, st["s"], st["g"],
                                           columns_read["s"], columns_read["g"])
    return sampler
