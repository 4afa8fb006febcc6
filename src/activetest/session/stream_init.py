"""``init`` in chunks: a pool file and ``table:`` predictions streamed into the session.

The general path (:func:`activetest.session.create.create_session`) reads the whole
pool as Python objects and each prediction table whole (2.5 GB and 62 CPU-s per
million items). When a session is made of files alone -- a CSV, TSV, JSONL, JSON-array
or Parquet pool (gzipped or not: a gzipped Parquet pool read from a gunzipped copy
beside the session file, :func:`_readable_pool`), and ``table:`` predictions in CSV, TSV, JSONL,
a JSON array of row objects (gzipped or not) or Parquet for both models, no
in-context examples (predictions made elsewhere do not use them) -- :func:`try_stream`
reads the pool in blocks of :data:`BLOCK` records and writes each block's items into
the new file at once, and reads the tables in blocks with pyarrow (vectorised, no
Python object per number), joining them to the pool block by block. Memory is then
the model outputs as numpy arrays (``N x C`` float64 per model) plus one block.

A table that lists exactly the pool's items in the pool's order (as a scoring job that
reads the pool writes them) is joined block by block as the pool is read, a Parquet
table's ``content_check`` column (where it has one) confirming each row's item. A table
in another order, with fewer rows or with rows of items the pool does not have is joined
by id once the pool is written (:func:`join_by_id`: a second pass over the table, each
block's ids looked up in the session file's items). Anything else -- a pool numbered by
its rows (no id column) with such a table, a value the fast reader does not take, a
malformed file -- falls back to the general path, which joins by id in memory and names
the file, line and column of any problem. So the streaming path never changes what a
session holds or which input is refused; it only changes what a good input costs. A
problem it can name exactly as the general path names it (a table's value that is not
a finite number, an empty or missing id, a row that does not normalise, a row repeating
an earlier row's id, a content check for other content, a pool's record the pool reader
refuses or whose id an earlier record has) is refused here with that message
(:class:`StreamRefusedError`), not by reading everything into memory to say the same. A
CSV, TSV or JSONL table's rows are named by their lines, which pyarrow does not tell: the
stream finds the line by reading the table's rows again, one at a time, with the general
path's rules, from the start of the block holding the row (:func:`read_again`,
:mod:`.stream_marks`), and where those rules refuse no row, falls back. A
text pool is read with the general path's own reader, one line at a time, so its records
have their lines; a block with a bad record is read again one record at a time
(:func:`refuse_pool_block`), an id repeated from an earlier block found in the session
file. The pool is read and its block written before the tables' rows for it are joined,
as the general path reads the whole pool first; a table's refusal is said once the pool
and every table given before it are read (:class:`~.stream_base.TableRefusals`: where
the files have several problems, the general path's first is named).

The parts have their rooms: :mod:`.stream_base` (the block size, the signals and
refusals), :mod:`.stream_pool` (the pool's blocks), :mod:`.stream_tables` (the tables'
blocks, and their rows read again by the general path's rules), :mod:`.stream_marks`
(where a table's blocks start, to read it again from there), :mod:`.stream_join`
(a table joined by id); this module decides whether an input streams and writes the
session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sqlite3
import zlib
from collections.abc import Container, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session.store import SessionError
from activetest.session.stream_base import (
    BLOCK,
    CONTENT_RANK,
    READ_ERRORS,
    LateRefusalError,
    NotStreamable,
    StreamRefusedError,
    StreamRefusedPoolError,
    TableRefusals,
)
from activetest.session.stream_join import (
    join_by_id,
    refuse_a_repeat_among,
    refuse_a_repeated_id,
)
from activetest.session.stream_pool import (
    BadRecord,
    gzipped_pool,
    open_pool_bytes,
    pool_records,
    pool_size,
    refuse_pool_block,
    refuse_record,
)
from activetest.session.stream_tables import (
    Table,
    TableEnds,
    TableRows,
    converted_rows,
    streamable_table,
    table_blocks,
)

__all__ = ["BLOCK", "NotStreamable", "PoolSize", "StreamRefusedError", "StreamRefusedPoolError",
           "try_stream", "writing_text"]

_POOL_FORMATS = ("csv", "tsv", "jsonl", "json", "parquet")
_POOL_OPTIONS = {"id_column", "text_column", "label_column", "format", "encoding",
                 "label_base"}


def try_stream(path: Path, *, pool: Any, task: Task, surrogate: Any, target: Any,
               examples: Any, shots: int | None, target_shots: int | None,
               pool_options: Mapping[str, Any] | None, config_of: Any, options: Any,
               compare: Sequence[Any] = (), progress: bool = False,
               ids_are_positions: bool = False) -> Any:
    """Create the session at ``path`` by streaming, or return None when this input
    takes the general path (see the module docstring).

    ``config_of(pool_info, specs, raw_specs)`` builds the session's config (the pool's
    ``n_items`` is set here); ``options`` carries ``overwrite`` and ``busy_timeout``.
    ``compare``: the models compared at creation (``init --compare``), streamed like the
    target when each is a ``table:`` in the pool's order (stored as ``compare:<spec>``,
    named in the config; the ``compare`` acquisition's scores from them); anything else,
    or one that is the target, takes the general path (which names the problem).
    ``progress``: a bar of the pool's items read and written (its total from a Parquet
    pool's metadata; a count for CSV, TSV and JSONL), then a row while the scores are
    written (:func:`writing_text`). ``ids_are_positions``: a table's
    join by ids that look like positions is confirmed
    (:mod:`activetest.session.table_positions`; refused otherwise).
    Returns ``(store, N, pool_info, specs, raw_specs)``.
    """
    from activetest.data.generative import GenTask

    opts = dict(pool_options or {})
    if (isinstance(task, GenTask) or examples is not None or shots or target_shots
            or not isinstance(pool, (str, os.PathLike)) or set(opts) - _POOL_OPTIONS
            or str(opts.get("encoding") or "utf-8").lower().replace("_", "-")
            not in ("utf-8", "utf8")):
        return None
    p = Path(pool)
    if not p.is_file():
        return None
    from activetest.data.pool import detect_format, is_lmeval_source

    try:
        fmt = (opts.get("format") or detect_format(p)).lower()
    except ValueError:
        return None
    if fmt not in _POOL_FORMATS or is_lmeval_source(p, opts.get("format")):
        return None
    sur = streamable_table(surrogate, task)
    tgt = streamable_table(target, task)
    if sur is None or tgt is None:
        return None
    cmp: list[Table] = []
    for raw in compare:
        t = streamable_table(raw, task)
        if t is None or t.spec == tgt.spec:
            return None
        if t.spec not in [c.spec for c in cmp]:
            cmp.append(t)
    from activetest.session.spec_files import rename

    # each file by its name, never its local path (said at init; session/spec_files.py)
    names = rename([sur.spec, tgt.spec, *(c.spec for c in cmp)])
    sur, tgt = (dataclasses.replace(t, spec=names.get(t.spec, t.spec)) for t in (sur, tgt))
    cmp = [dataclasses.replace(t, spec=names.get(t.spec, t.spec)) for t in cmp]
    try:
        with _readable_pool(path, p, fmt) as (src, digest):
            return _stream(path, p, src, digest, fmt, task, sur, tgt, opts, config_of,
                           options, cmp, progress, ids_are_positions)
    except NotStreamable as exc:
        _refuse_a_join_too_big_for_memory(exc)
        return None


@contextlib.contextmanager
def _readable_pool(path: Path, p: Path, fmt: str) -> Iterator[tuple[Path, str]]:
    """The pool file as the stream reads it and the ``sha256`` of its bytes, gunzipped
    (the general path's): ``p`` itself, or for a gzipped Parquet pool (``pool.parquet.gz``,
    which the general path gunzips whole into memory and reads as Parquet) a gunzipped
    copy beside the session file ``path`` (Parquet is read by its footer first, which a
    gzip stream cannot seek to), removed once ``init`` is done: memory stays a block of
    rows, the disk holds the pool's Parquet bytes meanwhile (since 2026-12-07; such a
    pool took the general path, every record a Python object). The copy names this
    process and is locked while in use (:mod:`.pool_copies`): one that a killed ``init``
    left is removed, and said, by the next ``init`` or open of a session in the folder.
    A broken gzip stream, or no room for the copy: NotStreamable (the general path names
    it, or reads it whole)."""
    from activetest.session.pool_copies import pool_copy, sweep_pool_copies

    digest = hashlib.sha256()
    copy = fmt == "parquet" and gzipped_pool(p)
    out: Path | None = None
    with contextlib.ExitStack() as stack:  # the copy: removed when init ends
        try:
            sink = None
            if copy:  # (a copy a killed init left here first: the disk's room for this)
                sweep_pool_copies(path.parent)
                out, sink = stack.enter_context(pool_copy(path))
            with open_pool_bytes(p) as f:
                for data in iter(lambda: f.read(16 << 20), b""):
                    digest.update(data)
                    if sink is not None:
                        sink.write(data)
            if sink is not None:
                sink.flush()
        except (OSError, EOFError, zlib.error):  # a broken gzip stream (the general
            raise NotStreamable("gzip") from None  # path names it), a full disk (it reads
            # the pool whole)
        yield (out if out is not None else p), digest.hexdigest()


#: What the general path holds per pool item, at least (the pool's records and each
#: table's rows as Python objects; measured 1.6-1.8 KB with short texts at 1e6-3e6).
GENERAL_PATH_BYTES_PER_ITEM = 1_000


def available_memory() -> int | None:
    """The bytes of memory this machine has available now (``MemAvailable``), or None
    where that cannot be told."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _refuse_a_join_too_big_for_memory(exc: NotStreamable) -> None:
    """A table that is not in the order of a pool numbered by its rows (no id column:
    the stream joins no such table by id) takes the general path, which joins in memory;
    refuse it, naming the row, where that needs more memory than there is (else the
    process is killed for memory, after minutes, with no message)."""
    if len(exc.args) < 3 or exc.args[0] != "order":
        return
    where, n_items = exc.args[1], int(exc.args[2])
    need = n_items * GENERAL_PATH_BYTES_PER_ITEM
    free = available_memory()
    if free is None or need <= free:
        return
    raise StreamRefusedError(
        f"{where}: the table is not in the pool's order, and joining it by id in memory "
        f"needs at least {need / 1e9:.1f} GB for {n_items} items, more than the "
        f"{free / 1e9:.1f} GB available; write the table with one row per pool item in "
        f"the pool's order (as `activetest score` writes it), which `init` streams in "
        f"blocks (docs/pool-scale.md)")


def _stream(path: Path, p: Path, src: Path, sha256: str, fmt: str, task: Task, sur: Table,
            tgt: Table, opts: dict[str, Any], config_of: Any, options: Any,
            cmp: Sequence[Table] = (), progress: bool = False,
            ids_are_positions: bool = False) -> Any:
    """The session at ``path`` of the pool ``p`` (read from ``src``, its bytes'
    ``sha256``: :func:`_readable_pool`) and the tables, streamed (:func:`try_stream`)."""
    from activetest.data.pool import column_plan, records_to_items
    from activetest.formats.label_records import content_check
    from activetest.session import spec_files
    from activetest.session.design import initial_scores
    from activetest.session.store import SessionStore, now
    from activetest.stats import ActiveSampler

    info = {"source": str(p.resolve()), "format": fmt, "sha256": sha256}
    specs = {"surrogate": sur.spec, "target": tgt.spec}
    raw_specs = {sur.spec: sur.raw, tgt.spec: tgt.raw, **{c.spec: c.raw for c in cmp}}
    config0 = config_of(info, specs, raw_specs)
    if cmp:
        config0 = dataclasses.replace(config0, compare=tuple(c.spec for c in cmp))
    config0 = spec_files.with_model_files(config0, raw_specs)
    local = spec_files.local_names(raw_specs)  # the provenance names the files so too
    need_target = config0.needs_target
    got = _Got()

    sources = [sur, *([tgt] if need_target else []), *cmp]

    def write_items(conn: Any) -> None:
        from activetest.models import progress_bar

        size = pool_size(src, fmt)
        with progress_bar(size, "reading the pool", progress) as advance:
            parts, by_id = write_blocks(conn, size, advance)
        n = got.n
        got.index = {t.spec: k for k, t in enumerate(sources)}
        for k in sorted(by_id):  # the tables in another order: joined by id, a second
            # pass, in the order given: a table in the pool's order refused (pending) is
            # named before a table given after it (the general path's order)
            if got.pending is not None and got.pending[0] < k:
                raise got.pending[1]
            with progress_bar(None, f"joining {sources[k].scorer.path.name} by id",
                              progress) as advance:
                parts[k] = join_by_id(conn, sources[k], n, task.n_classes, advance,
                                      on_ids=_position_join_by_id(conn, sources[k], got,
                                                                  ids_are_positions))
        if got.pending is not None:
            raise got.pending[1]
        got.lp = [part.array() if isinstance(part, _Parts) else part for part in parts]
        # the steps after have no count: a row says them, until the file is in place
        writing.enter_context(_writing_row(n, progress))

    def write_blocks(conn: Any, size: int | None, advance: Any
                     ) -> tuple[list[Any], list[int]]:
        """Write the pool's items; read each table in the pool's order alongside. A table
        found in another order (or shorter) is left for :func:`join_by_id`: returns
        ``(the tables' parts, which tables to join by id)``."""
        tables = [TableRows(table_blocks(t), t, _repeated_in_order(conn, t)) for t in sources]
        parts: list[Any] = [_Parts(size, task.n_classes) for _ in tables]
        by_id: list[int] = []
        numbers = _WholeIds()  # the pool's ids while each is a whole number
        checked = [_has_checks(t) for t in sources]  # rows confirmed by content checks
        n = 0
        keys: list[str] | None = None
        by_row = False
        refusals = TableRefusals()  # the tables' refusals, said in the general path's order
        for k, t in enumerate(sources):  # no Parquet file at all (cut short): named now,
            cut = _unreadable_parquet(t, task)  # said in that order (not the general
            if cut is not None:  # path, which read the whole pool first to say it)
                refusals.add(k, cut)

        def table_block(k: int, t: TableRows, items: Sequence[Item], ids: np.ndarray, n: int,
                        mine: list[np.ndarray]) -> None:
            """Table ``k``'s rows for the pool's block of ``items`` (from item ``n``):
            joined, or the table left for :func:`join_by_id`; StreamRefusedError where
            it is refused."""
            try:
                t_ids, vals, checks = _guarded_take(t, len(items))
            except TableEnds:
                if by_row:  # positions: the general path decides
                    raise NotStreamable("table ends before the pool") from None
                by_id.append(k)  # fewer rows than the pool: which are missing?
                parts[k] = None  # (the rows so far: read again, by id)
                refusals.forget(k)
                return
            if not np.array_equal(t_ids, ids):
                j = int(np.flatnonzero(t_ids != ids)[0])
                refuse_a_repeated_id(conn, sources[k], t_ids[j], ids, n, j)
                if not by_row:  # by id, once the pool is written
                    by_id.append(k)
                    parts[k] = None  # (the rows so far: read again, by id)
                    refusals.forget(k)
                    return
                raise NotStreamable(
                    "order", f"{sources[k].scorer.path}: row {n + j + 1} is for item "
                    f"{t_ids[j]!r}, where item {n + j + 1} of the pool is {ids[j]!r}",
                    max(n + len(items), size or 0))
            if by_row and checks is None:  # positions alone: the general path refuses
                raise NotStreamable("row ids")
            if refusals.open_to(k, 0):  # (else only a row's own problem can be named:
                # the table is refused late already, by the first check of the rule)
                parts[k].append(converted_rows(vals, t_ids, sources[k], n))  # row by row:
                # per block; before the content checks, as the general path reads the
                # table whole before it confirms any row's content
            if checks is not None and refusals.open_to(k, CONTENT_RANK):  # written for
                # these items' content? (else the general path refuses, naming the row:
                # joins never guess)
                if not mine:
                    mine.append(np.array([content_check(it.fields) for it in items],
                                         dtype=object))
                if not np.array_equal(checks, mine[0]):  # the first item, as the table
                    from activetest.models.table import confirm_content  # reader does

                    try:
                        confirm_content(sources[k].scorer.path,
                                         dict(zip(t_ids, checks, strict=True)), items)
                    except ValueError as exc:  # (once every row is read: a later row's
                        raise LateRefusalError(str(exc), CONTENT_RANK) from None  # problem
                        # first, and a row that does not normalise)
                    raise NotStreamable("content check")  # pragma: no cover

        pool = _guarded(pool_records(src, fmt))
        while True:
            try:
                block = next(pool, None)
            except BadRecord as exc:  # the records before it were read (and good)
                refuse_record(p, fmt, str(exc))
            if block is None:
                break
            if keys is None:  # the first record's, for every block (the general path's)
                keys = list(block[0][1])
                plan = column_plan(keys, task, opts.get("text_column"),
                                   opts.get("label_column"), opts.get("id_column"), None)
                by_row = plan.id is None  # ids are the rows' numbers in the file
            try:
                items = records_to_items(
                    block, str(p), task=task, text_column=opts.get("text_column"),
                    label_column=opts.get("label_column"), id_column=opts.get("id_column"),
                    label_base=opts.get("label_base"), keys=keys,
                    ids=[str(n + j) for j in range(len(block))] if by_row else None)
            except ValueError:  # named as the general path names it
                refuse_pool_block(conn, p, fmt, block, n, keys, by_row, task, opts)
            if len(items) != len(block):
                raise NotStreamable("dropped rows")
            # the first table read refused for a row's own problem (said once the pool is
            # read, whose later records are named first): no table is read on or joined,
            # so no item's fields are read again; its ids are written still (an id of an
            # earlier block is the pool's refusal, named before the table's)
            first = refusals.first()
            blank = (first is not None and first[0] == 0
                     and not isinstance(first[1], LateRefusalError))
            try:
                conn.executemany(
                    "INSERT INTO items (idx, item_id, fields, data_label) VALUES (?, ?, ?, ?)",
                    ((n + j, it.id, "{}" if blank else _dumps(dict(it.fields)), it.label)
                     for j, it in enumerate(items)))
            except sqlite3.IntegrityError:  # an id of an earlier block: named as there
                # (before any table: the general path reads the whole pool first)
                refuse_pool_block(conn, p, fmt, block, n, keys, by_row, task, opts)
            ids = np.array([it.id for it in items], dtype=object)
            numbers.add(items)
            mine: list[np.ndarray] = []  # the items' content checks, made once
            for k, t in enumerate(tables):
                if k in by_id or not refusals.reads(k):
                    continue
                try:
                    table_block(k, t, items, ids, n, mine)
                except StreamRefusedError as exc:  # said in the general path's order
                    refusals.add(k, exc)
            n += len(items)
            advance(len(items))
        if n == 0:
            raise NotStreamable("empty")
        for k, t in enumerate(tables):  # rows after the pool's last item: a repeated id
            if k in by_id or not refusals.reads(k):  # (refused, naming both rows), or
                continue  # items of another pool: joined by id (which checks every row)
            try:
                extra = t.next_id()
                if extra is not None:
                    refuse_a_repeated_id(conn, sources[k], extra, [], n, 0)
            except StreamRefusedError as exc:
                refusals.add(k, exc)
                continue
            if extra is not None:
                if by_row:  # positions: the general path decides
                    raise NotStreamable("table rows after the pool")
                by_id.append(k)
                parts[k] = None
                refusals.forget(k)
        refused = refusals.first()
        # the pool's whole-number ids, for the tables compared with them: none given from
        # the first refused one on (never joined; since 2026-12-07 not counted for them: a
        # pool's ids spelled ``007`` were counted in the session file, every item read
        # again, once the first table was refused, and an id too large for SQLite then
        # failed the init with no word of the table's refusal)
        upto = len(sources) if refused is None else refused[0]
        got.pool_numbers = None if by_row else _pool_numbers(conn, numbers, checked[:upto])
        # ids that look like positions on both sides: said, or a refusal kept (raised in
        # the order the tables were given, after each table's own refusal: write_items)
        skip = {*by_id, *(range(refused[0], len(sources)) if refused else ())}
        got.by_position, got.pending = _position_joins(
            got.pool_numbers, numbers.first, sources, skip, checked, ids_are_positions)
        if refused is not None and (got.pending is None or refused[0] < got.pending[0]):
            got.pending = refused
        got.numbers, got.checked = numbers, checked
        got.n = n
        config1 = config_of(info, specs, raw_specs, n)  # the planned budget needs N
        config = dataclasses.replace(config1, pool={**config1.pool, "n_items": n},
                                     compare=config0.compare,
                                     model_files=config0.model_files)
        got.config = config
        conn.execute("UPDATE config SET json = ? WHERE id = 1", (_dumps(config.to_dict()),))
        return parts, by_id

    def init(store: SessionStore) -> None:
        from activetest.models.cache import scorer_identity

        config = got.config
        n = got.n
        lps = got.lp
        s_lp = lps[0]
        t_lp = lps[1] if need_target else None
        c_lps = lps[2 if need_target else 1:]
        scores = initial_scores(config, s_lp, t_lp, n,
                                other_logprobs=c_lps[0] if c_lps else None)

        def prov(role: str, t: Table) -> dict[str, Any]:
            from activetest.session.scoring import jsonable

            try:
                ident: Any = scorer_identity(t.scorer)
            except Exception:  # identity is provenance only
                ident = {"name": getattr(t.scorer, "name", "?")}
            out = {"role": role, "spec": t.spec, "scorer": ident, "n_examples": 0,
                   "example_ids": None, "scored_at": now(), "n_items": n,
                   **t.scorer.prompt_provenance()}
            if t.spec in got.by_position:  # as confirmed (table_positions)
                from activetest.session.table_positions import PROVENANCE_KEY

                out[PROVENANCE_KEY] = got.by_position[t.spec]
            return jsonable(spec_files.publish_provenance(out, local))  # type: ignore[no-any-return]

        store.put_scores("surrogate", sur.spec, s_lp, prov("surrogate", sur))
        if t_lp is not None:
            store.put_scores("target", tgt.spec, t_lp, prov("target", tgt))
        else:
            store.put_scores("target", tgt.spec, np.full((n, task.n_classes), np.nan),
                             {"spec": tgt.spec, "note": "scored on labelled items only "
                              "(PE acquisition)"})
        for t, lp in zip(cmp, c_lps, strict=True):  # what estimate compares with
            store.put_scores(f"compare:{t.spec}", t.spec, lp, prov(f"compare:{t.spec}", t))
        store.put_scores("acquisition", config.acquisition, scores[:, None],
                         {"acquisition": config.acquisition, "alpha": config.proposal_floor},
                         predictions=False)
        state = ActiveSampler.fresh_state(scores, proposal_floor=config.proposal_floor,
                                          seed=config.seed)
        store.init_sampler(state.proposal_floor, config.seed, state.rng_state)

    with contextlib.ExitStack() as writing:  # (the row of writing the scores: closed
        # once the file is in place, or refused)
        store = SessionStore.create(path, config=config0, items=[], examples=[],
                                    overwrite=options["overwrite"],
                                    busy_timeout=options["busy_timeout"], init=init,
                                    items_writer=write_items)
    return store, got.n, info, specs, raw_specs


def writing_text(n: int) -> str:
    """What the row after the pool's bar says (:func:`_writing_row`)."""
    return f"writing the scores and the first proposal of {n} items"


@contextlib.contextmanager
def _writing_row(n: int, progress: bool) -> Iterator[None]:
    """A row of no count (it pulses; :func:`~activetest.models.phased_progress_bar`'s
    phase) that says the steps after the pool and the tables are read: the first
    proposal computed over the ``n`` items, each model's ``(N, C)`` scores and the
    sampler's start written, the file folded and put in place. QA: at 1e7 items they
    took ~12 s under the pool's bar, full, and the terminal looked hung (about 2 s at
    2e6). Shown where ``progress`` and on a terminal, as the pool's bar."""
    from activetest.models import phased_progress_bar

    text = writing_text(n)
    with phased_progress_bar(None, text, progress) as bar:
        bar.phase(text)
        yield


def _unreadable_parquet(t: Table, task: Task) -> StreamRefusedError | None:
    """The general path's refusal of a Parquet table whose footer cannot be read (a file
    cut short, or no Parquet file), else None.

    The stream read such a table's first block, failed, and fell back to the general
    path, which read the whole pool into memory only to say that the table is no Parquet
    file (QA, 2026-12-07: 8.8 GB and 9 minutes at 1e7 items). The message is the table
    reader's own (:meth:`~activetest.models.table.TableScorer.confirms_content`, what the
    general path calls first on a table), which fails at the footer, before any row."""
    if t.scorer.format != "parquet":
        return None
    import pyarrow.parquet as pq

    try:
        pq.read_schema(t.scorer.path)  # the footer only
        return None
    except Exception:  # pyarrow raises many types
        pass
    try:
        t.scorer.confirms_content(task)
    except ValueError as exc:
        return StreamRefusedError(str(exc))
    return None  # (read after all: the stream reads it as any table)


def _has_checks(t: Table) -> bool:
    """Whether the table has a ``content_check`` column (Parquet, as ``activetest score``
    writes it): each row is confirmed by its item's content."""
    if t.scorer.format != "parquet":
        return False
    import pyarrow.parquet as pq

    from activetest.formats.label_records import CHECK_COLUMN

    try:
        return CHECK_COLUMN in pq.read_schema(t.scorer.path).names
    except (OSError, ValueError):
        return False


class _WholeIds:
    """The pool's ids counted block by block while each is a plain whole number
    (:class:`~activetest.data.history_ids.WholeIdsInBlocks`: a join by ids that look
    like positions is possible only then), the first id and its item's fields."""

    def __init__(self) -> None:
        from activetest.data.history_ids import WholeIdsInBlocks

        self.count = WholeIdsInBlocks()
        self.first: tuple[str, Mapping[str, Any]] | None = None

    def add(self, items: Sequence[Item]) -> None:
        if items and self.first is None:
            self.first = (items[0].id.strip(), dict(items[0].fields))
        self.count.add([it.id for it in items])


@dataclasses.dataclass
class _Got:
    """What the streamed ``init`` learns as it writes the session file, for the steps after
    (the tables joined by id, the scores written in ``init``).

    Attributes:
        n: the pool's items written.
        config: the session's config, with the pool's ``n_items``.
        index: a table's spec -> its place among the tables read (surrogate, target where
            needed, compared).
        numbers: the pool's ids while each is a whole number (:class:`_WholeIds`).
        checked: per table, whether its rows are confirmed by content checks.
        pool_numbers: the pool's whole-number ids (:func:`_pool_numbers`).
        by_position: a table's spec -> the note of its join by ids that look like
            positions, as confirmed (:mod:`activetest.session.table_positions`).
        pending: the refusal of the first table given of those refused while the pool
            was read (:class:`~activetest.session.stream_base.TableRefusals`) or in the
            pool's order joined by such ids unconfirmed, with its place among the tables
            (raised once every table given before it is checked: :func:`_position_joins`).
        lp: each table's ``(N, C)`` log-probs, in the order of the tables read.
    """

    n: int = 0
    config: Any = None
    index: dict[str, int] = dataclasses.field(default_factory=dict)
    numbers: _WholeIds = dataclasses.field(default_factory=lambda: _WholeIds())
    checked: list[bool] = dataclasses.field(default_factory=list)
    pool_numbers: Any = None
    by_position: dict[str, str] = dataclasses.field(default_factory=dict)
    pending: tuple[int, Exception] | None = None
    lp: list[np.ndarray] = dataclasses.field(default_factory=list)


def _pool_numbers(conn: Any, numbers: _WholeIds, checked: Sequence[bool]) -> Any:
    """The pool's whole-number ids (:class:`~activetest.data.history_ids.NumberIds`;
    None: not all whole numbers, or each table of ``checked``, those compared with them,
    is confirmed by content, or none is given, and none is needed): as counted block by
    block, or where one is written otherwise (``007``, ``7.0``) in the session file
    (:func:`~activetest.session.stream_number_ids.sql_number_ids`: QA, such a pool took
    the general path, every id in memory)."""
    if not numbers.count.other_spelling or all(checked):
        return numbers.count.result
    from activetest.session.stream_number_ids import sql_number_ids

    return sql_number_ids(conn, "SELECT item_id AS x FROM items", numbers_only=False)


def _position_joins(pool: Any, first: tuple[str, Mapping[str, Any]] | None,
                    sources: Sequence[Table], by_id: Container[int], checked: Sequence[bool],
                    confirmed: bool) -> tuple[dict[str, str], tuple[int, Exception] | None]:
    """Each table in the pool's order joined by ids that look like positions, as
    ``confirmed`` (spec -> the note), and the refusal of the first such table not
    confirmed, with its index among ``sources`` (the general path's rule and message,
    :mod:`activetest.session.table_positions`): raised by :func:`_stream` once every
    table given before it is checked too, so that the streamed path names the same
    table first as the general path (the first given). A table in the pool's order has
    the pool's ids (both sides alike: a join by positions where they are a run from 0
    or 1); one joined by id (its ids another set) is compared with the pool as it is
    joined (:func:`_position_join_by_id`). ``pool``: :func:`_pool_numbers`; ``first``:
    the pool's first id and its item's fields; ``by_id``: the tables passed over (joined
    by id, refused, or given after one refused)."""
    from activetest.data.history_ids import PositionJoin
    from activetest.session.table_positions import excerpt, position_join

    out: dict[str, str] = {}
    if pool is None or first is None or pool.run_from is None:  # own ids, or no run
        return out, None
    for k, t in enumerate(sources):
        if checked[k] or k in by_id:  # (by id: compared as it is joined)
            continue
        d = PositionJoin(pool, pool, first[0], pool.n)
        try:
            out[t.spec] = position_join(str(t.scorer.path), d, excerpt(first[1]),
                                        confirmed=confirmed)
        except SessionError as exc:
            return out, (k, exc)
    return out, None


def _position_join_by_id(conn: Any, t: Table, got: _Got, confirmed: bool
                         ) -> Any:
    """The :func:`~activetest.session.stream_join.join_by_id` ``on_ids`` of the table
    ``t`` in another order than the pool's: where its ids and the pool's look like
    positions (:func:`~activetest.data.history_ids.positions_in_disguise`'s rule, counted
    in constant memory, ids written as another spelling of a whole number, ``007``,
    ``7.0``, too), refused with the general path's message or, as ``confirmed``, said
    (``got.by_position``): no fall back that reads the whole pool and table into
    memory to say the same (at 1e7 items, killed for memory first). Then a refusal of a
    table in the pool's order given after it (``got.pending``) is raised, before this
    table's missing rows are named: the general path checks every table's ids before it
    joins any."""
    from activetest.data.history_ids import PositionJoin
    from activetest.session.table_positions import excerpt, position_join

    def check(table: Any, shared: int, first: int) -> None:
        numbers: _WholeIds = got.numbers
        pool = got.pool_numbers
        if not (pool is None or numbers.first is None or got.checked[got.index[t.spec]]
                or table is None or not shared
                or (pool.run_from is None and table.run_from is None)):
            if first == 0:  # the pool's first item: its fields in the pool's order
                item_id, fields = numbers.first
            else:  # (the file keeps them sorted by name)
                item_id, text = conn.execute(
                    "SELECT item_id, fields FROM items WHERE idx = ?", (first,)).fetchall()[0]
                fields = json.loads(text)
            d = PositionJoin(pool, table, str(item_id).strip(), shared)
            got.by_position[t.spec] = position_join(
                str(t.scorer.path), d, excerpt(fields), confirmed=confirmed)
        if got.pending is not None:
            raise got.pending[1]

    return check


def _repeated_in_order(conn: Any, t: Table) -> Any:
    """The :data:`~.stream_tables.Repeated` of the table ``t`` read in the pool's order:
    its rows handed out (before ``start``) are the pool's items of those numbers, each
    pool id once, so an earlier row with an id is the pool's item with it (in the
    session file)."""

    def repeated(ids: Sequence[str | None], start: int) -> None:
        def earlier(want: list[str]) -> dict[str, int]:
            out: dict[str, int] = {}
            for item_id in want:
                got = conn.execute("SELECT idx FROM items WHERE item_id = ? AND idx < ?",
                                   (item_id, start)).fetchall()
                if got:
                    out[item_id] = int(got[0][0])
            return out

        refuse_a_repeat_among(t, ids, start, earlier)

    return repeated


def _guarded(blocks: Iterator[Any]) -> Iterator[Any]:
    """``blocks``, with any read error turned into :class:`NotStreamable`."""
    import csv

    try:
        yield from blocks
    except StreamRefusedError:
        raise
    except (*READ_ERRORS, csv.Error):
        raise NotStreamable("read") from None


def _guarded_take(rows: TableRows, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    try:
        return rows.take(m)
    except StreamRefusedError:
        raise
    except READ_ERRORS:
        raise NotStreamable("read") from None



class _Parts:
    """Blocks of ``(m, C)`` rows into one array: written in place when the size is
    known (no second copy), else joined at the end."""

    def __init__(self, size: int | None, width: int) -> None:
        self.out = None if size is None else np.empty((size, width), dtype=np.float64)
        self.blocks: list[np.ndarray] = []
        self.n = 0

    def append(self, block: np.ndarray) -> None:
        if self.out is not None and self.n + len(block) <= len(self.out):
            self.out[self.n:self.n + len(block)] = block
        else:
            if self.out is not None:  # more records than the file said: join instead
                self.blocks, self.out = [self.out[:self.n]], None
            self.blocks.append(block)
        self.n += len(block)

    def array(self) -> np.ndarray:
        if self.out is not None:
            return self.out[:self.n]
        return np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]



class PoolSize(Sequence[Item]):
    """A streamed pool as a length (its items are in the session file)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise IndexError("the streamed pool is in the session file")


#: ``json.dumps(obj, sort_keys=True, ensure_ascii=False, allow_nan=False)``, the store's
#: rule, with one encoder for every item (``dumps`` makes one per call).
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False)


def _dumps(obj: Any) -> str:
    return _ENCODER.encode(obj)
