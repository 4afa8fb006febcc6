"""The blind-spot curves' running state, kept in the session between estimates.

An adaptive session's fixed-budget interval and anytime CS are widened by the blind
spot at every budget from 30 labels to K (:mod:`activetest.session.blindspot`), which
needs every past draw's proposal: without a stored state each ``estimate`` and
``report`` replays the design draw by draw (one pass over the pool per draw, K in all).
After an ``estimate`` that records, the curves' running state
(:class:`activetest.stats.blindspot_replay.CurveState`: the exposures, the control sums, the
replayed design's state and each curve's values at budgets 1..K) is written here, in
one transaction; the next ``estimate`` or ``report`` continues from it over the draws
labelled since, so it costs the new labels, not all of them. Each ``select`` of an
adaptive session advances it over the draws it made (labelled or not): an estimate of
fewer labels than the state holds reads the curves' values at its budgets
(:func:`load_curves`), which depend on the draws up to each budget only. The paper's
fixed acquisitions keep the same table with their own key and state
(:func:`fixed_key`, :class:`activetest.stats.blindspot_replay.FixedCurveState`: the
exposures and the curves), written by ``estimate``.

The state is used only when its key equals the one computed from the session as it
stands: a SHA-256 of the design's spec, the pool size, the level, the blind ratio, the
first budget computed, each curve's loss bounds and fixed control, the first K draws,
the number of labels the design knew at each and those labels and losses (the design
sees a round's labels at the next ``select``, so an estimate right after labelling
has a state that the next one, after that ``select``, continues). A relabelled item, another
level, a target scored on more items (other loss bounds) or a damaged state: the
curves are computed from the first draw, which gives the same numbers to the last bit
(the state only skips float operations already done, in the same order; tested on
every step of a session and after ``kill -9``). Only the latest state is kept; its
per-item arrays are chunked columns ``blindspot:*`` (:mod:`activetest.session.columns`)
of files that have them (schema 4); older files are never written here. The replayed
design's per-item arrays (``s``, ``g``, ``aux``) are not written where they are the
session's sampler's at the same refit (``shared``, :func:`save`): the next command's
sampler, restored from the design's checkpoint, has them again; their digests are kept
all the same, and a sampler's arrays are taken only where they are those (a sampler
restored from a checkpoint edited in the file is not at a state's refit for its count
alone: the state's own columns are read, or a shared state is not used).
A session compared at creation keeps in the same state each draw's second-moment sums
of the paired differences (their variance floor, ``second_sums`` in the blob; the
moments' digest in the key), so its floor continues with the curves. Every state keeps
each draw's least proposal over the items it could draw (``least_q``, the exact anytime CS's
bound on a draw's weight); a state without them is continued only by sessions that
do not use them (:attr:`activetest.session.config.SessionConfig.exact_least`; one
written before they were kept is also one from before the digest below: not continued).
A state is a cache: it must never change a number. Its key covers the inputs, not the
state's own values, so each state also keeps a digest of what it holds (SHA-256 of its
key, its number of draws and every array of its blob; each of its per-item columns'
values has its own digest in the blob, checked where the column is read): a state whose
values were edited in the file (a least proposal, a curve's values, a sum, an exposure)
is not used, and the curves are computed from the first draw, with the numbers of the
report. A state written before the digest is not used either (computed from the first
draw once: the same numbers; the state stored then has it).
``ACTIVETEST_CHECKPOINTS=0`` turns it off with the design's checkpoint.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from activetest.session import checkpoint
from activetest.session.store import (
    SessionLockedError,
    SessionReadOnlyError,
    SessionStore,
    SessionWriteError,
)
from activetest.stats.blindspot import BlindSpotCurve
from activetest.stats.blindspot_replay import CurveSpec, CurveState, FixedCurveState

__all__ = ["bounds_digest", "curve_key", "fixed_key", "load", "load_curves", "load_fixed",
           "load_served", "save", "save_fixed", "stored_k"]

#: In every state's key: 2 since the knapsack is found by selection
#: (:func:`activetest.stats.blindspot.hidden_mass`), whose sums add in another order than
#: the sort's did (the same value to ~1e-14): a state written with version 1 is not
#: continued (the next estimate computes the curves from the first draw, once), so a
#: state's numbers are always those of a run from the first draw to the last bit. (An
#: adaptive state's key also hashes its bounds' digest since, not their bytes.)
_KEY_VERSION = 2

_SCHEMA = ("CREATE TABLE IF NOT EXISTS blind_spot_checkpoint (k INTEGER NOT NULL, "
           "key TEXT NOT NULL, state BLOB NOT NULL)")
_COLUMN = "blindspot:"
#: the design state's per-item arrays (columns, not in the blob; ``rem`` is rebuilt)
_PER_ITEM = ("s", "g", "aux", "rem")
#: the blob's member holding the state's digest (:func:`_content_digest`)
_DIGEST = "digest"
#: the blob's members holding each per-item column's digest (:func:`_column_digest`):
#: this prefix and the column's name after ``blindspot:``, without its ``:``
_COLUMN_DIGEST = "cd_"


def _digest(h: Any, v: Any, dtype: str) -> None:
    a = np.ascontiguousarray(np.asarray(v, dtype=dtype))
    h.update(f"{a.shape}".encode())
    h.update(memoryview(a).cast("B"))  # its bytes, not a copy of them


def _digest_bounds(h: Any, specs: Sequence[CurveSpec]) -> None:
    """Each curve's per-item loss bound and fixed control (where it has one)."""
    for s in specs:
        _digest(h, s.loss_high, "<f8")
        if s.fixed_control is not None:
            _digest(h, s.fixed_control, "<f8")


def _column_digest(values: np.ndarray) -> np.ndarray:
    """``(32,)`` uint8: SHA-256 of a per-item column's values as they are stored
    (``<f8``, :func:`activetest.session.columns.write_column`)."""
    h = hashlib.sha256()
    _digest(h, values, "<f8")
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


def _column_member(name: str) -> str:
    """The blob's member holding the digest of the column ``blindspot:name``."""
    return _COLUMN_DIGEST + name.replace(":", "")


def _content_digest(key: str, k: int, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """``(32,)`` uint8: SHA-256 of a state's key, its number of draws ``k`` and every
    array of its blob but the digest itself (each by its name, dtype, shape and bytes,
    in the order of the names), the per-item columns' digests included."""
    h = hashlib.sha256()
    h.update(json.dumps([str(key), int(k)]).encode())
    return checkpoint.arrays_digest(h, arrays, _DIGEST)


def _verified(z: Any, key: str, k: int) -> dict[str, np.ndarray] | None:
    """The arrays of the open blob ``z`` of the state stored with ``key`` and ``k``
    draws where its digest is theirs (None: no digest, a state written before it was
    kept, or another one: its values were changed after it was written)."""
    data = {name: z[name] for name in z.files}
    want = data.get(_DIGEST)
    if want is None or not np.array_equal(want, _content_digest(key, k, data)):
        return None
    return data


def bounds_digest(specs: Sequence[CurveSpec], second: np.ndarray | None = None) -> bytes:
    """SHA-256 of each curve's per-item loss bound and fixed control: the part of a
    :func:`curve_key` that reads the pool (8 bytes an item per array), computed once
    for the keys of one command. ``second``: the ``(R, N)`` second moments whose sums
    the pass also keeps (a paired difference's variance floor), hashed after them
    (without: the digest of a state written before there were any)."""
    h = hashlib.sha256()
    _digest_bounds(h, specs)
    if second is not None:
        h.update(b"second")
        _digest(h, second, "<f8")
    return h.digest()


def curve_key(design: Any, specs: Sequence[CurveSpec], *, k: int, N: int, level: float,
              ratio: float, start: int, rows: Sequence[int], labels: Sequence[int],
              losses: Sequence[float], n_known: Sequence[int],
              bounds: bytes | None = None) -> str:
    """The key of the curves' state after the first ``k`` draws (module docstring).
    ``bounds``: :func:`bounds_digest` of ``specs``, if computed already."""
    h = hashlib.sha256()
    head = {"v": _KEY_VERSION, "spec": design.spec(), "k": int(k), "N": int(N),
            "level": float(level), "ratio": float(ratio), "start": int(start),
            "curves": [[bool(s.second), bool(s.with_control), s.fixed_control is None]
                       for s in specs]}
    h.update(json.dumps(head, sort_keys=True).encode())
    h.update(bounds_digest(specs) if bounds is None else bounds)
    known = [int(x) for x in list(n_known)[:k]]
    seen = max(known, default=0)  # the labels the first k draws' design knew
    _digest(h, list(rows)[:k], "<i8")
    _digest(h, known, "<i8")
    _digest(h, list(labels)[:seen], "<i8")
    _digest(h, list(losses)[:seen], "<f8")
    return h.hexdigest()


def stored_k(store: SessionStore) -> int | None:
    """The number of draws of the stored state (None: none stored)."""
    if not checkpoint.enabled():
        return None
    try:
        rows = store._read("SELECT k FROM blind_spot_checkpoint")
    except sqlite3.OperationalError:  # no such table: no state written yet
        return None
    return int(rows[0][0]) if len(rows) == 1 else None


def _stored_row(store: SessionStore, key: str) -> tuple[int, bytes] | None:
    """``(k, blob)`` of the stored state if its key is ``key`` (None: checkpoints off,
    no state written yet, or another key's)."""
    if not checkpoint.enabled():
        return None
    try:
        found = store._read("SELECT k, state FROM blind_spot_checkpoint WHERE key = ?",
                            (key,))
    except sqlite3.OperationalError:  # no such table: no state written yet
        return None
    return (int(found[0][0]), bytes(found[0][1])) if len(found) == 1 else None


def load(store: SessionStore, key: str, rows: Sequence[int], N: int,
         design_now: Sequence[dict[str, np.ndarray]] | dict[str, np.ndarray] | None = None,
         *, per_item: bool = True) -> CurveState | None:
    """The stored state if its key is ``key`` (else None: the caller starts from the
    first draw). ``rows``: the session's draws (at least the state's). ``design_now``:
    the session's sampler state (the same history, later), or several
    (:meth:`activetest.stats.adaptive.AdaptiveSampler.design_states`: the live one and
    the one before the sampler's refit); where one has the stored state's refit count,
    its per-item arrays are those (shared, not read: the same refit of the same labels
    gave both) where they have the digests the state keeps of its own (else its own
    columns are read; a state that did not write them is not used). A state saved
    without its design's per-item arrays (:func:`save`, ``shared``) loads only so.
    ``per_item=False``: the design's per-item arrays (``s``, ``g``, ``aux``) are not
    read (None): the caller continues with a live run's state
    (:class:`activetest.stats.blindspot_replay.RunDraws`)."""
    found = _stored_row(store, key)
    if found is None:
        return None
    try:
        state = _decode(store, key, found[0], found[1], rows, N, design_now, per_item)
    except checkpoint.DAMAGED:  # damaged or changed: start from the first draw
        return None
    return state if state is not None and _still(store, key) else None


def _still(store: SessionStore, key: str) -> bool:
    """Whether the stored state is still the one of ``key`` (another process's
    ``select`` or ``estimate`` may have replaced it while its columns were read: the
    columns are then not all of the state read first)."""
    try:
        return store._read("SELECT key FROM blind_spot_checkpoint") == [(key,)]
    except sqlite3.OperationalError:
        return False


def load_curves(store: SessionStore, key: str, k: int, n_curves: int, ratio: float
                ) -> list[BlindSpotCurve] | None:
    """The curves at budgets 1..``k`` from the stored state if its key is ``key`` and it
    holds at least ``k`` draws (``select`` stores it over draws not labelled yet; a
    budget's values depend on the draws up to it only), else None. Only the state's
    small arrays are read, not its per-item columns."""
    found = _stored_row(store, key)
    if found is None or found[0] < k:
        return None
    try:
        with np.load(io.BytesIO(found[1]), allow_pickle=False) as z:
            data = _verified(z, key, found[0])
    except checkpoint.DAMAGED:
        return None  # damaged: computed from the first draw
    return None if data is None else _curves_in(data, found[0], k, n_curves, ratio)


def load_served(store: SessionStore, key: str, k: int, n_curves: int, ratio: float,
                second_rows: int | None = None
                ) -> tuple[list[BlindSpotCurve], np.ndarray | None, np.ndarray | None] | None:
    """What an adaptive design's estimate takes from the stored state as it is, read
    and decoded once (QA: three reads and decodes of one blob): ``(curves, second sums,
    least proposals)`` at budgets 1..``k``: the curves as :func:`load_curves`; the
    ``(second_rows, k)`` second-moment sums
    (:attr:`activetest.stats.blindspot_replay.CurveState.second_sums`; None without
    ``second_rows``) and the ``(k,)`` least proposals
    (:attr:`~activetest.stats.blindspot_replay.CurveState.least_q`), each None where the
    state did not keep it. None where there are no curves (another key's state, fewer
    draws than ``k``, damaged)."""
    found = _stored_row(store, key)
    if found is None or found[0] < k:
        return None
    k0 = found[0]
    try:
        with np.load(io.BytesIO(found[1]), allow_pickle=False) as z:
            data = _verified(z, key, k0)  # changed values: not served
    except checkpoint.DAMAGED:
        return None
    if data is None:
        return None
    curves = _curves_in(data, k0, k, n_curves, ratio)
    if curves is None:
        return None
    sums = (None if second_rows is None
            else _per_draw_in(data, k0, k, "second_sums", (second_rows,)))
    return curves, sums, _per_draw_in(data, k0, k, "least_q", ())


def _curves_in(z: dict[str, np.ndarray], k0: int, k: int, n_curves: int, ratio: float
               ) -> list[BlindSpotCurve] | None:
    """The curves at budgets 1..``k`` in the arrays ``z`` of a state of ``k0`` draws
    (None: another number of curves, other shapes, or damaged)."""
    try:
        if int(z["n_curves"][0]) != n_curves:
            return None
        out = [z[f"out_{j}"] for j in range(n_curves)]
        delta, cap = z["delta"], z["cap"]
    except checkpoint.DAMAGED:
        return None  # damaged: computed from the first draw
    if any(o.shape != (4, k0) for o in out) or len(delta) != n_curves or len(cap) != n_curves:
        return None
    return [BlindSpotCurve(o[0, :k].astype(np.int64), o[1, :k].copy(), o[2, :k].copy(),
                           o[3, :k].copy(), float(ratio), float(d), float(c))
            for o, d, c in zip(out, delta, cap, strict=True)]


def _per_draw_in(z: dict[str, np.ndarray], k0: int, k: int, name: str,
                 lead: tuple[int, ...]) -> np.ndarray | None:
    """The per-draw array ``name`` (shape ``lead + (k0,)``: the second sums, the least
    proposals) of the arrays ``z`` of a state of ``k0`` draws, cut to its first ``k``
    draws (None: the state did not keep it)."""
    got = z.get(name)
    if got is None:
        return None
    if got.shape != (*lead, k0):
        return None
    return np.ascontiguousarray(got[..., :k])


def _same_refit(states: Sequence[dict[str, np.ndarray]] | dict[str, np.ndarray] | None,
                refits: int, N: int, naux: int) -> dict[str, np.ndarray] | None:
    """The first of ``states`` at ``refits`` refits with per-item arrays of this pool."""
    if states is None:
        return None
    for st in [states] if isinstance(states, dict) else states:
        if (int(st["ist"][1]) == refits and st["s"].shape == (N,)
                and st["aux"].shape[0] == naux):
            return st
    return None


def _read_verified(store: SessionStore, data: dict[str, np.ndarray], name: str,
                   N: int) -> np.ndarray:
    """The state's per-item column ``blindspot:name`` (``(N,)``), checked against its
    digest in the state's verified arrays ``data`` (ValueError: missing, of another
    length, without a digest or another one's values: the state is not used)."""
    from activetest.session import columns as cols

    conn = store._conn
    info = cols.column_info(conn, _COLUMN + name)
    want = data.get(_column_member(name))
    if info is None or info.n_rows != N or info.width != 1 or want is None:
        raise ValueError(f"blind-spot state column {name} is missing")
    out = np.empty(N)
    cols.read_column(conn, info, out)  # in place (it returns an (N, 1) view)
    if not np.array_equal(want, _column_digest(out)):
        raise ValueError(f"blind-spot state column {name} was changed")
    return out


def _design_columns(st: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray]]:
    """A design state's per-item arrays by their column names: ``s``, ``g`` and each
    row of ``aux`` (``aux:0``, ...)."""
    return [("s", st["s"]), ("g", st["g"])] + [(f"aux:{r}", st["aux"][r])
                                               for r in range(st["aux"].shape[0])]


def _digested(data: dict[str, np.ndarray], st: dict[str, np.ndarray]) -> bool:
    """Whether the design state ``st``'s per-item arrays (a sampler's, at the stored
    state's refit) have the digests the state's verified arrays ``data`` keep of its
    own: they are those the state was computed with, checked as the columns it wrote
    are (:func:`_read_verified`). False where one differs, or the state keeps none (a
    state written before it kept them where it shared the sampler's arrays).

    QA: the arrays taken from the sampler were trusted for having its refit count, so a
    stored state changed in the file that still loaded (a sampler restored from an
    edited checkpoint) was continued with other arrays than its own, silently."""
    for name, values in _design_columns(st):
        want = data.get(_column_member(name))
        if want is None or not np.array_equal(want, _column_digest(values)):
            return False
    return True


def _decode(store: SessionStore, key: str, k: int, blob: bytes, rows: Sequence[int], N: int,
            design_now: Sequence[dict[str, np.ndarray]] | dict[str, np.ndarray] | None,
            per_item: bool = True) -> CurveState | None:
    """The stored state (the blob ``blob`` of ``k`` draws, stored with ``key``, and its
    columns) where its digests are its values (None: written before the digest was
    kept, or its blob changed; ValueError: damaged, or a column changed)."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        checked = _verified(z, key, k)
    if checked is None:
        return None
    data = checked

    def column(name: str) -> np.ndarray:
        return _read_verified(store, data, name, N)

    n_curves = int(data["n_curves"][0])
    naux = int(data["n_aux"][0])
    design = {name[3:]: v for name, v in data.items() if name.startswith("st_")}
    if set(design) & set(_PER_ITEM):
        raise ValueError("blind-spot state holds per-item arrays twice")
    shared = "shared" in data and int(data["shared"][0]) == 1
    same = _same_refit(design_now, int(design["ist"][1]), N, naux)
    if not per_item:
        design["s"] = design["g"] = design["aux"] = None  # type: ignore[assignment]
    elif same is not None and _digested(data, same):
        for name in ("s", "g", "aux"):  # the same refit: the same arrays
            design[name] = same[name]
    elif shared:
        raise ValueError("the blind-spot state's design arrays were the sampler's, and "
                         "no sampler state at its refit with their digests is given")
    else:
        design["s"] = column("s")
        design["g"] = column("g")
        aux = np.empty((naux, N))
        for r in range(naux):
            aux[r] = column(f"aux:{r}")  # one row at a time: the same bytes
        design["aux"] = aux
    rem = np.ones(N, dtype=np.bool_)
    rem[np.asarray(list(rows)[:k], dtype=np.int64)] = False
    design["rem"] = rem
    sums = tuple(column(f"wg{j}") if int(data["has_wg"][j]) else None for j in range(2))
    out = tuple(data[f"out_{j}"] for j in range(n_curves))
    if any(o.shape != (4, k) for o in out):
        raise ValueError("blind-spot state of another length")
    second = data.get("second_sums")
    if second is not None and (second.ndim != 2 or second.shape[1] != k):
        raise ValueError("blind-spot state's second-moment sums of another length")
    least = data.get("least_q")  # None: a state from before they were kept
    if least is not None and least.shape != (k,):
        raise ValueError("blind-spot state's least proposals of another length")
    return CurveState(k, design, column("Q"), (sums[0], sums[1]), out,
                      tuple(float(x) for x in data["delta"]),
                      tuple(float(x) for x in data["cap"]), second, least)


def _blob(key: str, arrays: dict[str, np.ndarray], out: Sequence[np.ndarray], k: int,
          delta: Sequence[float], cap: Sequence[float],
          columns: Sequence[tuple[str, np.ndarray]]) -> bytes:
    """The state's small arrays as one ``.npz`` blob: ``arrays``, the curves' first
    ``k`` outputs, confidence shares and loss caps, the digest of each of its per-item
    ``columns`` (name after ``blindspot:``, values) and the digest of all of them with
    the state's ``key`` and ``k`` (:func:`_content_digest`)."""
    for j, o in enumerate(out):
        arrays[f"out_{j}"] = np.ascontiguousarray(o[:, :k])
    arrays["delta"] = np.array(delta, dtype=np.float64)
    arrays["cap"] = np.array(cap, dtype=np.float64)
    for name, v in columns:
        arrays[_column_member(name)] = _column_digest(v)
    arrays[_DIGEST] = _content_digest(key, k, arrays)
    buf = io.BytesIO()
    np.savez(buf, allow_pickle=False, **arrays)
    return buf.getvalue()


def _shares_arrays(st: dict[str, np.ndarray],
                   live: Sequence[dict[str, np.ndarray]] | None) -> bool:
    """Whether the design state ``st`` has the per-item arrays of a ``live`` sampler
    state at its refit count (checked, not assumed)."""
    N, naux = st["s"].shape[0], st["aux"].shape[0]
    same = _same_refit(live, int(st["ist"][1]), N, naux)
    return same is not None and all(
        same[name] is st[name] or np.array_equal(same[name], st[name])
        for name in ("s", "g", "aux"))


def save(store: SessionStore, key: str, state: CurveState, *,
         design_of: str | None = None,
         live: Sequence[dict[str, np.ndarray]] | None = None) -> bool:
    """Write ``state`` (with its ``key``) as the session's, replacing the previous one,
    in one transaction. False, writing nothing, where it cannot be written (a
    read-only, locked or full file, or one without columns): the estimate only reads.

    ``design_of``: the key of the stored state this one continued, if the design has
    not refitted since (its ``s`` and ``g`` are then the stored ones, which are kept
    rather than written again, if that state is still the one stored and has them;
    ``aux``, which the out-of-sample guard writes at every draw, is always written).

    ``live``: the session's sampler's design states
    (:meth:`activetest.stats.adaptive.AdaptiveSampler.design_states`) where its design
    is a function of its last refit (not the guard's): if the state's design arrays
    are one of those at the same refit count, none of them is written (``shared``: N
    floats each, 16 MB per million items; the next command's sampler, restored from
    the design's checkpoint, has them again and :func:`load` takes them from it)."""
    if not checkpoint.enabled() or not store.writable or not store._has_columns():
        return False
    from activetest.session import columns as cols

    st = state.design
    shared = live is not None and _shares_arrays(st, live)
    arrays: dict[str, np.ndarray] = {f"st_{name}": v for name, v in st.items()
                                     if name not in _PER_ITEM}
    arrays["shared"] = np.array([int(shared)], dtype=np.int64)
    arrays["n_curves"] = np.array([len(state.out)], dtype=np.int64)
    arrays["n_aux"] = np.array([st["aux"].shape[0]], dtype=np.int64)
    arrays["has_wg"] = np.array([x is not None for x in state.control_sums], dtype=np.int64)
    if state.second_sums is not None:  # a paired difference's floor: (R, k), small
        arrays["second_sums"] = np.ascontiguousarray(state.second_sums[:, :state.k])
    if state.least_q is not None:  # (k,): the exact anytime CS's per-draw weight bound
        arrays["least_q"] = np.ascontiguousarray(state.least_q[:state.k])
    running = [("Q", state.exposure)]
    running += [(f"wg{j}", x) for j, x in enumerate(state.control_sums) if x is not None]
    design = _design_columns(st)
    # each column's digest is of the state's values (kept ones too: a kept column that
    # is not these values fails its check at load, and the state is not used); the
    # design's also where they are the sampler's, not written (checked against the
    # sampler's arrays at load, :func:`_digested`)
    blob = _blob(key, arrays, state.out, state.k, state.delta, state.loss_cap,
                 running + design)
    with contextlib.suppress(SessionWriteError, SessionReadOnlyError, SessionLockedError):
        with store.transaction() as c:
            c.execute(_SCHEMA)
            keep = design_of is not None and c.execute(
                "SELECT key FROM blind_spot_checkpoint").fetchall() == [(design_of,)]
            c.execute("DELETE FROM blind_spot_checkpoint")
            # s and g change only at a refit; aux rows may change at every draw (the
            # out-of-sample guard's record), so they are always written
            stored = {name for (name,) in c.execute(
                "SELECT name FROM column_info WHERE name LIKE ?", (_COLUMN + "%",))}
            kept = {_COLUMN + "s", _COLUMN + "g"}
            if not keep or shared or not kept <= stored:
                kept = set()
            # a column stored with the same layout is overwritten in place (the running
            # sums, at every select), the rest deleted and written
            todo = [(_COLUMN + name, v) for name, v in running + ([] if shared else design)
                    if _COLUMN + name not in kept]
            done = {name for name, v in todo
                    if name in stored and cols.overwrite_column(c, name, v)}
            for name in sorted(stored - kept - done):
                cols.delete_column(c, name)
            for name, v in todo:
                if name not in done:
                    cols.write_column(c, name, v)
            c.execute("INSERT INTO blind_spot_checkpoint (k, key, state) VALUES (?, ?, ?)",
                      (int(state.k), key, blob))
        return True
    return False


def fixed_key(acquisition: str, floor: float, scores: np.ndarray, specs: Sequence[CurveSpec],
              *, k: int, N: int, level: float, ratio: float, start: int,
              rows: Sequence[int]) -> str:
    """The key of a fixed acquisition's curves after the first ``k`` draws: its name,
    floor and scores, the curves' bounds and controls, the first k draws."""
    h = hashlib.sha256()
    head = {"v": _KEY_VERSION, "fixed": acquisition, "floor": float(floor), "k": int(k),
            "N": int(N), "level": float(level), "ratio": float(ratio), "start": int(start),
            "curves": [s.fixed_control is None for s in specs]}
    h.update(json.dumps(head, sort_keys=True).encode())
    _digest(h, scores, "<f8")
    _digest_bounds(h, specs)
    _digest(h, list(rows)[:k], "<i8")
    return h.hexdigest()


def load_fixed(store: SessionStore, key: str, N: int, n_curves: int) -> FixedCurveState | None:
    """A fixed acquisition's stored state if its key is ``key`` and its digests are its
    values (else None)."""
    found = _stored_row(store, key)
    if found is None:
        return None
    k = found[0]
    try:
        with np.load(io.BytesIO(found[1]), allow_pickle=False) as z:
            checked = _verified(z, key, k)  # None: changed, or from before the digest
        if checked is None or int(checked["n_curves"][0]) != n_curves:
            return None
        data = checked
        out = tuple(data[f"out_{j}"] for j in range(n_curves))
        if any(o.shape != (4, k) for o in out):
            return None
        Q = _read_verified(store, data, "Q", N)
        state = FixedCurveState(k, Q, out, tuple(float(x) for x in data["delta"]),
                                tuple(float(x) for x in data["cap"]))
    except checkpoint.DAMAGED:  # damaged or changed: start from the first draw
        return None
    return state if _still(store, key) else None


def save_fixed(store: SessionStore, key: str, state: FixedCurveState) -> bool:
    """Write a fixed acquisition's ``state`` (as :func:`save`: one transaction, the
    previous state replaced; False where it cannot be written)."""
    if not checkpoint.enabled() or not store.writable or not store._has_columns():
        return False
    from activetest.session import columns as cols

    arrays: dict[str, np.ndarray] = {"n_curves": np.array([len(state.out)], dtype=np.int64)}
    blob = _blob(key, arrays, state.out, state.k, state.delta, state.loss_cap,
                 [("Q", state.exposure)])
    with contextlib.suppress(SessionWriteError, SessionReadOnlyError, SessionLockedError):
        with store.transaction() as c:
            c.execute(_SCHEMA)
            c.execute("DELETE FROM blind_spot_checkpoint")
            for (name,) in c.execute("SELECT name FROM column_info WHERE name LIKE ?",
                                     (_COLUMN + "%",)).fetchall():
                cols.delete_column(c, name)
            cols.write_column(c, _COLUMN + "Q", state.exposure)
            c.execute("INSERT INTO blind_spot_checkpoint (k, key, state) VALUES (?, ?, ?)",
                      (int(state.k), key, blob))
        return True
    return False
