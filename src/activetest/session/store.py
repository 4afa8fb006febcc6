"""One SQLite file per active-testing session: everything needed to resume it exactly.

Tables (schema version :data:`SCHEMA_VERSION`, kept in ``PRAGMA user_version``)::

    meta           key/value: app marker, schema version, creating activetest version, time
    config         one JSON document: task, models, metric, acquisition, alpha, seed, ...
    items          idx (0..N-1), item id, fields (JSON), the label found in the pool file
    examples       the in-context examples, in prompt order
    scores         per role ("surrogate", "target", "compare:<spec>"): (N, C) float64
                   log-probs as a little-endian blob (NaN rows = not scored), provenance
    predictions    the target's predicted class and its probability, per scored item
    sampler        the single-run sampler's alpha, seed and PCG64 state (after the last draw)
    acquisitions   one row per draw: step (1, 2, ...), item idx, q_m
    labels         the current label of each labelled item, its source and times
    label_history  every change to a label (add, change, undo), never deleted
    estimates      estimates over time (labels used, metric, method, value, interval)
    answers        graded sessions: per role and item, the model's answer text, the
                   references (JSON) and details (token log-probs, source; JSON)
    design_draws   adaptive designs: per draw the control g at the drawn item, the sum
                   of g over the remaining items, lambda, the labels known when drawn,
                   the refits so far, and the label (and loss) the design first saw
    judgments      graded sessions that compare targets: the judgment of a compared
                   target's answer ("compare:<spec>"), per item; the session target's
                   own judgments are the ``labels``
    judgment_history  every change to those, never deleted

Schema 2 added ``answers`` and ``design_draws``, schema 3 ``judgments`` and
``judgment_history``; older files are read as they are (they have no graded
sessions, adaptive designs or compared answers).

Schema 4 stores each model's scores in chunked columns (``column_info`` and
``columns``, see :mod:`activetest.session.columns`) instead of one blob (whose
``logprobs`` is then empty), derives the target's predictions from its scores (the
``predictions`` table stays empty). A schema-3 file is migrated to schema 4 by its
first write, in the same transaction (the scores' bytes are moved, never recomputed);
files of schemas 1 and 2 are read and written as they are.

Durability: WAL journal, folded into the file as each write commits (so the commit
is on the disk when the write returns: ``synchronous=NORMAL``, see :data:`SYNCHRONOUS`);
every write is one transaction (``BEGIN IMMEDIATE``). The sampler state is written in
the SAME transaction as the acquisitions it produced, so a process killed at any
moment leaves either both or neither, and a resumed session makes exactly the draws an
uninterrupted one would. Each label answered is its own transaction. A journal that a
process killed between a commit and its fold left is folded in by the next open, before
anything reads; a file copied over an open session (a backup put back) is refused at the
next write (:mod:`~activetest.session.store_marks`), or, where a reader kept the last
fold from completing, at the next read or write, the old journal set aside
(:mod:`~activetest.session.store_journal`).

The module's neighbours: :mod:`~activetest.session.store_schema` (the SQL),
:mod:`~activetest.session.store_rows` (the records it hands out) and
:mod:`~activetest.session.store_errors` (the errors and the damage checks); every name
they export is importable from here too. The store's methods live by what they keep:
this module opens, creates, migrates and guards the file (transactions, meta, config,
items); :mod:`~activetest.session.store_scores`, :mod:`~activetest.session.store_draws`
and :mod:`~activetest.session.store_labels` hold the rest, as mixins of the one
:class:`SessionStore`.

Errors for the user (all :class:`SessionError`, a ``ValueError``): a file that is
not a session, one written by a newer activetest (:class:`SchemaVersionError`), a
database locked by another process beyond the busy timeout
(:class:`SessionLockedError`), a session file created meanwhile by another command
where this one was creating one (:class:`SessionExistsError`), a session that another
process has open when it is to be replaced (:class:`SessionInUseError`), a path too
long for SQLite.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item
from activetest.session import columns as cols
from activetest.session.config import ConfigError, SessionConfig
from activetest.session.store_draws import DrawsMixin
from activetest.session.store_errors import (
    DamagedSessionError,
    NotASessionError,
    SchemaVersionError,
    SessionError,
    SessionExistsError,
    SessionFileReplacedError,
    SessionInUseError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionWriteError,
    check_busy_timeout,
    check_config,
    check_new_session_path,
    claim_for_overwrite,
    create_error,
    damaged,
    describe_damage,
    disk_full,
    file_identity,
    is_decode_error,
    is_lock_error,
    open_error,
    path_too_long,
    release_claim,
    replaced_error,
    symlink_loop,
    write_error,
)
from activetest.session.store_journal import (
    MainFileState,
    hold_wal_index,
    journal_put_back,
    main_file_state,
    main_only,
    release_wal_index,
    set_aside_journal,
)
from activetest.session.store_labels import LabelsMixin
from activetest.session.store_marks import (
    KeptAnswers,
    WriteMark,
    advance_mark,
    check_mark,
    put_back_error,
    read_mark,
    unsaved_annotations,
    unsaved_changes,
)
from activetest.session.store_rows import (
    Acquisition,
    Annotation,
    DrawRow,
    EstimateRow,
    LabelChange,
    StoredLabel,
    StoredScores,
    now,
)
from activetest.session.store_rows import dumps as _dumps
from activetest.session.store_schema import APP_ID, READABLE_VERSIONS, SCHEMA_VERSION
from activetest.session.store_schema import SCHEMA as _SCHEMA
from activetest.session.store_scores import ScoresMixin
from activetest.session.store_scores import score_column as _score_column

__all__ = [
    "APP_ID",
    "SCHEMA_VERSION",
    "Acquisition",
    "DamagedSessionError",
    "DrawRow",
    "EstimateRow",
    "LabelChange",
    "NotASessionError",
    "SchemaVersionError",
    "SessionError",
    "SessionExistsError",
    "SessionFileReplacedError",
    "SessionInUseError",
    "SessionLockedError",
    "SessionStore",
    "StoredLabel",
    "StoredScores",
    "check_config",
    "check_new_session_path",
    "describe_damage",
]


#: Session files up to this size are checked page by page at open (``PRAGMA
#: quick_check``: a damaged page that SQLite would still read, silently short, is found
#: before any command uses it; a few milliseconds for a pool of thousands of items).
#: Larger files (pools at scale) are not: the check reads every page.
QUICK_CHECK_BYTES = 64 << 20


def _quick_check(conn: sqlite3.Connection, p: Path) -> None:
    """Raise :class:`DamagedSessionError` if SQLite's structural check of a session file
    of at most :data:`QUICK_CHECK_BYTES` finds a damaged page."""
    try:
        size = p.stat().st_size
    except OSError:
        return
    if size > QUICK_CHECK_BYTES:
        return
    row = conn.execute("PRAGMA quick_check(1)").fetchone()
    if row is None or row[0] != "ok":
        raise damaged(p, sqlite3.DatabaseError(
            f"SQLite's check of its pages: {str(row[0] if row else 'no answer')[:200]}"))


#: ``PRAGMA synchronous`` of a session's writer. ``NORMAL``, not ``FULL``: every write
#: transaction is folded into the file as it commits (:meth:`SessionStore._fold_journal`),
#: and the fold syncs the journal and then the file, so the commit's own sync (FULL's)
#: was a second sync of the same bytes; where the fold does not complete, the journal is
#: synced by hand. A ``kill -9`` loses nothing either way (the operating system holds
#: the written pages); a power loss loses no label said to be saved.
SYNCHRONOUS = "NORMAL"


def _fold(conn: sqlite3.Connection, busy_timeout: float) -> bool:
    """Fold the WAL of ``conn``'s database into the file and empty it, without waiting
    for another connection; whether it was folded whole (False: a reader holding an old
    snapshot, a full disk, an error; the journal keeps what it holds)."""
    wait_ms = int(busy_timeout * 1000)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error:
        return False
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
    return row is not None and int(row[0]) == 0 and int(row[1]) <= 0


def _sync_journal(p: Path) -> None:
    """``fsync`` the ``-wal`` of the session file ``p`` (where there is one)."""
    try:
        fd = os.open(f"{p}-wal", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fold_left_journal(conn: sqlite3.Connection, p: Path, busy_timeout: float) -> None:
    """At open, before anything reads: fold in a ``-wal`` that holds pages (what a
    writer killed between its commit and its fold left), so that a file copied over
    this one later is not read with it. Nothing is done where there is none (the usual
    case), or where another process's reader or writer holds it (that process folds it
    at its next write)."""
    try:
        if os.path.getsize(f"{p}-wal") == 0:
            return
    except OSError:
        return
    _fold(conn, busy_timeout)


#: Rows asked of in one ``IN (...)`` query by the reads of some rows
#: (:meth:`SessionStore._rows_at`: SQLite's limit of bound variables is 999 in older
#: versions); past :data:`_AT_MOST` rows the whole table is read and filtered instead.
_CHUNK = 500
_AT_MOST = 20 * _CHUNK


class SessionStore(ScoresMixin, DrawsMixin, LabelsMixin):
    """Low-level access to one session file (see the module docstring).

    Use :meth:`create` or :meth:`open`; :class:`activetest.session.workflow.Session`
    builds the workflow on top. Not thread-safe: one store per thread/process.

    Args:
        path: the session file.
        busy_timeout: seconds to wait for another process's lock before
            :class:`SessionLockedError`.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0,
                 _conn: sqlite3.Connection | None = None, _writable: bool = True) -> None:
        self.path = Path(path)
        self.busy_timeout = float(busy_timeout)
        if _conn is None:
            raise TypeError("use SessionStore.open(path) or SessionStore.create(path, ...)")
        self._depth = 0
        #: the file as it was without its journal after this store's last commit, where
        #: that commit's fold was incomplete (None: folded): a file put back under the
        #: journal is told from it (:mod:`~activetest.session.store_journal`)
        self._unfolded: MainFileState | None = None
        #: this store's hold of the file's wal-index descriptor (None: released):
        #: :func:`~activetest.session.store_journal.hold_wal_index`
        self._wal_key: str | None = None
        self._conn = _conn
        #: the file opened (device, inode): a write into another is refused
        self._identity = file_identity(self.path)
        #: the file's write mark as this store last saw it (at open, or its own last
        #: write): a write into content put back over the file is refused
        #: (:mod:`~activetest.session.store_marks`)
        self._mark: WriteMark | None = read_mark(_conn)
        #: the label changes this store committed, and those of the open transaction;
        #: kept whole (a backup put back may predate any of them: only the file's
        #: content, read when a put-back is seen, tells which it no longer holds)
        self._written: list[LabelChange] = []
        self._writing: list[LabelChange] = []
        #: the ``annotations`` rows (each annotator's answer, an undone one as a row
        #: marked undone) written alike (:meth:`note_annotations`)
        self._annotated = KeptAnswers()
        self._annotating: list[Annotation] = []
        #: False when the file was opened read-only (it, its folder or its disk cannot
        #: be written): reads work, :meth:`transaction` raises SessionReadOnlyError.
        self.writable = _writable
        self._readonly_why = ""
        #: C, when known (a :class:`~activetest.session.workflow.Session` sets it from
        #: the task): :meth:`labels` and :meth:`judgments` then refuse a stored label
        #: outside ``0..C-1`` (a file changed outside activetest) with a message.
        self.label_classes: int | None = None
        self._config: SessionConfig | None = None  # read once (it never changes)
        #: the file's schema (4 after the first write of a schema-3 file)
        self._version = int(_conn.execute("PRAGMA user_version").fetchone()[0])
        #: role -> its scores read once, inside :meth:`shared_scores` (None: outside)
        self._shared: dict[str, StoredScores] | None = None
        #: role -> ((key, the role's stored row), value): :meth:`derived`
        self._derived: dict[str, tuple[tuple[Any, ...], Any]] = {}
        #: set by :meth:`create` with ``overwrite``: where the replaced session file was
        #: kept because it held labels (None: none replaced, or it held none)
        self.replaced: ReplacedSession | None = None
        #: set by the command that made the file: what ``init`` says that the file does
        #: not keep (the history's messages with its local paths:
        #: :mod:`activetest.session.history_sources`); empty otherwise
        self.said_at_init: tuple[str, ...] = ()

    # ------------------------------------------------------------------ open / create

    @staticmethod
    def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; we issue BEGIN IMMEDIATE ourselves.
        conn = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        return conn

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> SessionStore:
        """Open an existing session (read-only when it cannot be written). A writable
        one's folder loses the gunzipped pool copies that killed ``init`` runs left
        there (:func:`~activetest.session.pool_copies.sweep_pool_copies`, said).

        Raises:
            FileNotFoundError: no such file.
            NotASessionError: not an activetest session (or not SQLite at all).
            SchemaVersionError: written by a newer activetest.
            SessionLockedError: another process holds the database locked.
            SessionReadOnlyError: a read-only session whose journal was never folded
                into the file (it cannot be read without writing).
        """
        busy_timeout = check_busy_timeout(busy_timeout)
        p = Path(path)
        if (loop := symlink_loop(p)) is not None:
            raise loop
        if p.is_dir():
            raise SessionError(f"{p} is a folder, not a session file (a session is one file, "
                               f"made by `activetest init`)")
        if not p.is_file():
            if p.is_symlink():
                raise FileNotFoundError(f"no session file {p}: it is a symbolic link to "
                                        f"{os.readlink(p)}, which does not exist")
            raise FileNotFoundError(f"no session file {p} (create one with `activetest init`)")
        writable = os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)
        why = "" if writable else "read-only"
        try:
            conn = cls._connect(p, busy_timeout) if writable else cls._connect_ro(p, busy_timeout)
        except sqlite3.Error as exc:
            if (too_long := path_too_long(p)) is not None:
                raise too_long from None
            raise NotASessionError(f"{p}: cannot open as a SQLite database ({exc})") from None
        if writable:  # before anything reads: what a killed writer left in the journal
            _fold_left_journal(conn, p, busy_timeout)
        try:
            version = cls._check(conn, p)
            _quick_check(conn, p)
        except UnicodeError as exc:  # SQLite's message quotes damaged bytes (not UTF-8)
            conn.close()
            raise damaged(p, exc) from None
        except sqlite3.OperationalError as exc:
            conn.close()
            if is_lock_error(exc):
                raise SessionLockedError(
                    f"{p}: the session database is locked by another process (waited "
                    f"{busy_timeout:g} s); close the other `activetest` command and retry"
                ) from None
            if is_decode_error(exc):
                raise damaged(p, exc) from None
            if not (writable and disk_full(p)):
                raise open_error(p, exc) from None
            # A full disk cannot hold the journal's index file: read without it, so that
            # everything that only reads still works; writes say the disk is full.
            writable, why = False, "full"
            conn = cls._connect_ro(p, busy_timeout)
            version = cls._check(conn, p)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if "malformed" in str(exc).lower():
                raise damaged(p, exc) from None
            raise NotASessionError(f"{p}: not an activetest session: {describe_damage(p)} "
                                   f"({exc})") from None
        except BaseException:
            conn.close()
            raise
        if version not in READABLE_VERSIONS:  # pragma: no cover - no such file exists yet
            conn.close()
            raise SchemaVersionError(f"{p}: schema version {version} cannot be read")
        if writable:
            conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
            conn.execute("PRAGMA foreign_keys = ON")
            from activetest.session.pool_copies import sweep_pool_copies

            sweep_pool_copies(p.parent)  # a pool's copy a killed `init` here left
        store = cls(p, busy_timeout=busy_timeout, _conn=conn, _writable=writable)
        store._readonly_why = why
        return store

    @staticmethod
    def _connect_ro(path: Path, busy_timeout: float) -> sqlite3.Connection:
        """A read-only connection to a file (or in a folder) that cannot be written.

        A WAL database needs its ``-shm`` file even to read; where that cannot be
        made, the file is read as immutable, which is exact only when no journal
        is pending, so that is checked first.
        """
        from urllib.parse import quote

        uri = f"file:{quote(str(path.resolve()))}"
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=busy_timeout,
                               isolation_level=None)
        try:
            conn.execute("PRAGMA user_version").fetchone()
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            conn.close()
        wal = Path(str(path) + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise SessionReadOnlyError(
                f"{path}: the session file is read-only and holds changes not yet folded in "
                f"({wal.name}); make the file and its folder writable once (any activetest "
                f"command then folds them in), or copy the three files somewhere writable")
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=busy_timeout,
                               isolation_level=None)

    @staticmethod
    def _check(conn: sqlite3.Connection, p: Path) -> int:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{p}: session schema version {version} was written by a newer activetest; this "
                f"version reads schema versions up to {SCHEMA_VERSION}. Upgrade activetest "
                f"(pip install -U activetest) to open it")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        app = None
        if "meta" in tables:
            row = conn.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
            app = row[0] if row else None
        if version == 0 or app != APP_ID:
            raise NotASessionError(f"{p}: not an activetest session database (no session "
                                   f"schema found)")
        return version

    @classmethod
    def create(cls, path: str | os.PathLike[str], *, config: SessionConfig | Mapping[str, Any],
               items: Sequence[Item], examples: Sequence[Item] = (), overwrite: bool = False,
               busy_timeout: float = 5.0,
               init: Callable[[SessionStore], None] | None = None,
               items_writer: Callable[[sqlite3.Connection], None] | None = None,
               ) -> SessionStore:
        """Create a new session file holding ``config``, the pool ``items`` and ``examples``.

        ``config``: a :class:`SessionConfig` (stored as :meth:`SessionConfig.to_dict`),
        or the stored document itself.

        The file is built under a temporary name, ``init(store)`` (if given) fills
        in the rest (scores, sampler), and only then is it renamed into place, so a
        failed creation leaves nothing behind. Without ``overwrite`` that last step never
        replaces a file: one that another command created at ``path`` meanwhile (and may
        be labelling already) is kept, and this one's is discarded. With ``overwrite``
        the file there is replaced only when no other process has it open (see
        :func:`~activetest.session.store_errors.claim_for_overwrite`).

        ``items_writer(conn)``: instead of ``items``, writes the pool's rows into the
        ``items`` table itself (a pool streamed in chunks); a duplicate id is then
        refused by the table's UNIQUE constraint (``sqlite3.IntegrityError``).

        Raises:
            SessionExistsError: ``path`` exists and ``overwrite`` is False, at the start
                or, created by another command meanwhile, at the end.
            SessionInUseError: ``overwrite``, and another process has the session file at
                ``path`` open.
            SessionError: duplicate item ids, or an empty pool; a path that cannot take a
                session file (see :func:`check_new_session_path`).
        """
        busy_timeout = check_busy_timeout(busy_timeout)
        p = check_new_session_path(path, overwrite, busy_timeout=min(busy_timeout, 2.0))
        if not items and items_writer is None:
            raise SessionError("the pool is empty: nothing to evaluate")
        seen: dict[str, int] = {}
        for i, it in enumerate(items):
            if it.id in seen:
                raise SessionError(f"the pool has duplicate item id {it.id!r} (rows {seen[it.id]} "
                                   f"and {i}); item ids must be unique")
            seen[it.id] = i
        from activetest._tmpfiles import sweep_creating
        from activetest.session.pool_copies import sweep_pool_copies
        from activetest.supervise import Terminated, note, parent_gone

        tmp = p.with_name(f".{p.name}.creating-{os.getpid()}")
        tmp_files = [Path(str(tmp) + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            sweep_creating(p)  # what an earlier, killed `init` of this file left
            sweep_pool_copies(p.parent)  # a pool's copy a killed `init` here left
            for f in tmp_files:
                f.unlink(missing_ok=True)
        except OSError as exc:  # a read-only file system, a folder that cannot be written
            raise create_error(p, exc) from None
        # a supervising parent removes them should this process die by a signal
        note(event="creating", tmp_files=[str(f) for f in tmp_files])
        conn: sqlite3.Connection | None = None
        try:
            conn = cls._connect(tmp, busy_timeout)
            # 8 KiB pages: the schema's table of contents stays on the first page (a
            # damaged table is then named, not an unreadable schema), fewer pages per pool
            conn.execute("PRAGMA page_size = 8192")
            # While it is made, the file is private (its temporary name; a killed `init`
            # leaves it to the next one's sweep, never in place): the pages go straight
            # into it, with the rollback journal in memory (a failed step still rolls
            # back), not through a WAL that would hold every page once more until the
            # last checkpoint (twice the session's size on the disk: 22 GB for an 11 GB
            # session at 1e8 items). Switched to WAL below, once all is written.
            conn.execute("PRAGMA journal_mode = MEMORY")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("BEGIN IMMEDIATE")
            for stmt in (_SCHEMA + cols.COLUMNS_SCHEMA).split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            created = now()
            from activetest import __version__

            meta = {"app": APP_ID, "schema_version": str(SCHEMA_VERSION),
                    "activetest_version": __version__, "created": created,
                    "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version}
            conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta.items())
            doc = config.to_dict() if isinstance(config, SessionConfig) else dict(config)
            conn.execute("INSERT INTO config (id, json) VALUES (1, ?)", (_dumps(doc),))
            if items_writer is not None:
                items_writer(conn)
                _check_streamed_items(conn)
            conn.executemany(
                "INSERT INTO items (idx, item_id, fields, data_label) VALUES (?, ?, ?, ?)",
                ((i, it.id, _dumps(dict(it.fields)), it.label) for i, it in enumerate(items)))
            conn.executemany(
                "INSERT INTO examples (pos, item_id, fields, label) VALUES (?, ?, ?, ?)",
                ((i, e.id, _dumps(dict(e.fields)), e.label) for i, e in enumerate(examples)))
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
            if init is not None:
                conn.execute("PRAGMA foreign_keys = ON")
                # named by the final path: its messages are about the file being made
                init(cls(p, busy_timeout=busy_timeout, _conn=conn))
            # The session's journal mode (kept in the file): readers beside a writer.
            # (of the main database: a streamed init's join by id made temporary tables,
            # and a checkpoint of every database then fails, "database table is locked")
            mode = conn.execute("PRAGMA main.journal_mode = WAL").fetchall()[0][0]
            if str(mode).lower() != "wal":  # pragma: no cover - SQLite always can here
                raise sqlite3.OperationalError(f"cannot set the WAL journal mode ({mode})")
            # Fold the WAL into the main file so that the rename moves everything.
            conn.execute("PRAGMA main.wal_checkpoint(TRUNCATE)")
            if parent_gone():  # the command the user started was killed: make nothing
                raise Terminated("the supervising activetest process is gone")
        except BaseException as exc:
            if conn is not None:
                conn.close()
            for f in tmp_files:
                f.unlink(missing_ok=True)
            if isinstance(exc, (sqlite3.OperationalError, SessionWriteError,
                                SessionReadOnlyError)):
                raise create_error(p, exc) from None
            raise
        conn.close()
        try:
            for suffix in ("-wal", "-shm"):
                Path(str(tmp) + suffix).unlink(missing_ok=True)
            kept = _put_in_place(tmp, p, overwrite=overwrite,
                                 busy_timeout=min(busy_timeout, 2.0))
        except BaseException as exc:
            for f in tmp_files:
                f.unlink(missing_ok=True)
            if isinstance(exc, OSError):
                raise create_error(p, exc) from None
            raise
        store = cls.open(p, busy_timeout=busy_timeout)
        store.replaced = kept
        return store

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with contextlib.suppress(sqlite3.Error):
            self._sqlite.close()
        if self._wal_key is not None:  # (after the connection: its locks are gone)
            release_wal_index(self._wal_key)
            self._wal_key = None

    @property
    def _conn(self) -> sqlite3.Connection:
        """The store's connection; outside a write transaction, while the journal holds a
        commit of this store that was not folded into the file, only once the file is
        found not put back under it (:meth:`_check_journal`): every read goes through
        here, and a read of the journal's pages over a copy's is a mix of both."""
        if self._unfolded is not None and not self._depth:
            self._check_journal()
        return self._sqlite

    @_conn.setter
    def _conn(self, conn: sqlite3.Connection) -> None:
        self._sqlite = conn
        if self._wal_key is None:  # (this process's SQLite locks on it stay held)
            self._wal_key = hold_wal_index(self.path)

    def _check_journal(self) -> None:
        """Refuse (:meth:`_put_back_under_journal`) where the file was put back under the
        journal since this store's last commit (:func:`journal_put_back`), before anything
        reads the mix (QA: a read of it raised "the session file is damaged", and the
        answer saved before the copy was in no sheet); else note the file as it is now.

        Raises:
            SessionFileReplacedError: it was.
        """
        before, self._unfolded = self._unfolded, None  # (no check inside the check)
        if before is None:
            return
        why, now = journal_put_back(self.path, before, self._mark)
        if not why:
            self._unfolded = now
            return
        with contextlib.suppress(sqlite3.Error):  # the write lock: no writer appends to
            self._sqlite.execute("BEGIN IMMEDIATE")  # the journal as it is set aside
        raise self._put_back_under_journal(why)

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ transactions

    def _locked(self, exc: sqlite3.OperationalError) -> SessionLockedError:
        return SessionLockedError(
            f"{self.path}: the session database is locked by another process (waited "
            f"{self.busy_timeout:g} s): is another `activetest` command (label, select, import) "
            f"running on it? Finish it and retry ({exc})")

    def check_writable(self) -> None:
        """Refuse, before any work, a command that will write a session opened read-only
        (QA: ``select`` at 1e7 items drew for 27 s and 500 MB, refused only at its first
        write); nothing is done where it can be written.

        Raises:
            SessionReadOnlyError: the file, its folder or its disk cannot be written,
                saying what still works and how to make it writable.
            SessionWriteError: the disk was found full.
        """
        if not self.writable and self._readonly_why == "full":
            raise SessionWriteError(
                f"{self.path}: cannot write the session file: the disk is full; nothing was "
                f"changed and nothing collected is lost; free some space and retry")
        if not self.writable:
            raise SessionReadOnlyError(
                f"{self.path}: the session file is read-only (the file, its folder or its "
                f"disk cannot be written); status, estimate, report and export work, but "
                f"drawing and labelling need a writable session: copy it somewhere "
                f"writable, or make it writable (its permissions, a read-only disk or "
                f"mount, or an immutable file: `lsattr`)")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested uses join the outer one.

        Everything inside commits together or not at all.

        Raises:
            SessionLockedError: the write lock was not obtained within the busy timeout.
            SessionFileReplacedError: the session's path names another file (or none)
                than the one opened; the opened one is kept beside it.
        """
        self.check_writable()
        if self._depth:
            self._depth += 1
            try:
                yield self._conn
            finally:
                self._depth -= 1
            return
        if self._identity is not None and file_identity(self.path) != self._identity:
            raise replaced_error(self.path, self._conn, _backup_name(self.path))
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_lock_error(exc):
                raise self._locked(exc) from None
            raise write_error(self.path, exc) from None
        self._depth = 1
        self._writing, self._annotating = [], []
        try:
            if self._unfolded is not None:  # (a copy since the check before BEGIN)
                why, self._unfolded = journal_put_back(self.path, self._unfolded,
                                                       self._mark)
                if why:
                    raise self._put_back_under_journal(why)
            mark, why = check_mark(self._conn, self._mark, self._written)
            if why:  # a file copied over this one (the same inode): refused, as moved
                raise put_back_error(self.path, why,
                                     unsaved_changes(self._conn, self._written),
                                     unsaved_annotations(self._conn, self._annotated.rows()))
            if self._version == 3:  # the first write of a schema-3 file migrates it
                self._migrate_to_columns()
            yield self._conn
            if mark is not None:
                mark = advance_mark(self._conn, mark)
        except sqlite3.OperationalError as exc:
            self._depth = 0
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            self._reread_version()
            if is_lock_error(exc):
                raise self._locked(exc) from None
            raise write_error(self.path, exc) from None
        except BaseException:
            self._depth = 0
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            self._reread_version()
            raise
        self._depth = 0
        try:
            self._conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            self._reread_version()
            if is_lock_error(exc):
                raise self._locked(exc) from None
            raise write_error(self.path, exc) from None
        self._mark = mark
        self._written += self._writing  # (O(this commit's): the list is extended)
        self._annotated.commit(self._annotating)
        self._fold_journal()

    def note_annotations(self, rows: Iterable[Annotation]) -> None:
        """Remember ``rows`` of the ``annotations`` table (each annotator's answer: the
        labelling page's, an import's annotators' labels) written in the open write
        transaction; kept once it commits, so that a file whose content is put back has
        those it no longer holds written beside it with the labels
        (:func:`~activetest.session.store_marks.put_back_error`)."""
        self._annotating.extend(rows)

    @contextlib.contextmanager
    def savepoint(self, name: str) -> Iterator[sqlite3.Connection]:
        """A savepoint ``name`` inside the open write transaction (:meth:`transaction`):
        should its body raise, what it wrote is rolled back to the savepoint, and so is
        what the store noted of it (the label changes and the annotators' answers, undone
        ones too, kept for a file put back, :meth:`note_annotations`); the error is
        raised on.

        Without the second half, a part refused after a label change (the page's answer
        whose settled label the same-text check refused, in a batch of answers) left
        that change among this store's own once the rest committed: the next write
        found it missing from the file's history and refused the file as put back (a
        false alarm, with a sheet of "unsaved" labels that were never saved).

        Args:
            name: the savepoint's SQL name (an identifier).

        Raises:
            RuntimeError: no write transaction is open (a savepoint needs one).
            ValueError: ``name`` is no identifier.
        """
        if not self._depth:
            raise RuntimeError("a savepoint needs an open write transaction")
        if not name.isidentifier():
            raise ValueError(f"savepoint name must be an identifier, got {name!r}")
        kept = len(self._writing), len(self._annotating)
        self._conn.execute(f"SAVEPOINT {name}")
        try:
            yield self._conn
        except BaseException as exc:
            del self._writing[kept[0]:]
            del self._annotating[kept[1]:]
            try:
                self._conn.execute(f"ROLLBACK TO {name}")
                self._conn.execute(f"RELEASE {name}")
            except sqlite3.Error:
                # SQLite ends the whole transaction itself on some write errors (a full
                # disk, a file size limit): the savepoint is gone with it. The write's
                # own error is then what the transaction says (QA: "no such savepoint"
                # replaced "cannot write the session file", and the page never said
                # why); any other error with the rollback failed is the rollback's, so
                # that a refused part is never committed with the rest
                if not isinstance(exc, sqlite3.Error):
                    raise
            raise
        self._conn.execute(f"RELEASE {name}")

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read transaction (``BEGIN``, deferred): the reads inside see one state of the
        file, take no write lock, write nothing and leave the file's write mark where it
        was (a question that only reads, asked often: the labelling page's poll, where
        each :meth:`transaction` was a commit that waited for the lock). Inside an open
        write transaction, that one. Nothing inside may write (a write needs
        :meth:`transaction`, after this one ends)."""
        conn = self._conn
        if self._depth or conn.in_transaction:  # (a write's, or a read's around it)
            yield conn
            return
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("COMMIT")

    def _fold_journal(self) -> None:
        """Fold the WAL into the file after a commit and empty it, without waiting.

        SQLite folds the ``-wal`` file in only when the last connection closes, so a
        labelling run killed with ``kill -9`` left every answer of the run there; a
        file copied over the session afterwards (a backup put back, another session)
        was then read with that journal's pages over its own (QA: "0 selected, 87
        labelled, -87 pending"). Emptied here as each write commits, a killed run
        leaves no journal behind. A reader holding an old snapshot (the labelling page,
        another command) makes the fold wait for the next commit, never this one; a
        fold that fails (a full disk) leaves the committed journal as it was.

        The fold writes the commit to the disk (SQLite syncs the journal, then the file),
        which is why the store writes with ``synchronous = NORMAL``
        (:data:`SYNCHRONOUS`: the commit itself does not sync; measured, one ``fdatasync``
        fewer of four per label, ``benchmarks/label_throughput.py``); where the fold
        does not complete, the journal is synced here instead, so a label said to be
        saved is on the disk either way.
        """
        if _fold(self._conn, self.busy_timeout):
            self._unfolded = None
            return
        # Not folded (or not all): with ``synchronous = NORMAL`` the commit is in the
        # journal but not yet on the disk; it is made so here, as FULL would have.
        _sync_journal(self.path)
        # and the file as it is without the journal is kept: a copy put over it before
        # the next write would be read with this journal (the next write tells it)
        self._unfolded = main_file_state(self.path)

    def _put_back_under_journal(self, why: str) -> SessionFileReplacedError:
        """The refusal to write into a file whose content was put back while the journal
        still held this store's commits (``why``: how, :func:`journal_put_back`), called
        inside the write transaction (its lock held).

        What the file no longer holds is read from the file alone (read through the
        journal it would seem held: the journal's pages are this store's), and written
        beside it (:func:`put_back_error`); the journal is set aside
        (:func:`set_aside_journal`: emptied, so that no connection folds the old file's
        pages into the new content), and the store reads the file anew (its connection
        held the journal's pages), so that its next write is refused as any put back."""
        with main_only(self.path) as conn:
            err = put_back_error(self.path, why, unsaved_changes(conn, self._written),
                                 unsaved_annotations(conn, self._annotated.rows()))
        kept = set_aside_journal(self.path)
        self._unfolded = None
        with contextlib.suppress(sqlite3.Error):
            self._sqlite.execute("ROLLBACK")
        self.close()
        self._conn = self._connect(self.path, self.busy_timeout)
        with contextlib.suppress(sqlite3.DatabaseError):  # content that does not read (a
            # copy cut short: QA, this refusal became "the session file is damaged ...
            # nothing was changed", its sheet unsaid): the store's next use says so
            self._conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS}")
            self._conn.execute("PRAGMA foreign_keys = ON")
        aside = (f"; the journal it was read with (this command's writes before the copy) "
                 f"is kept as {kept}, not folded into it" if kept is not None else "")
        return SessionFileReplacedError(f"{err}{aside}")

    def _has_columns(self) -> bool:
        """Whether the file has the chunked-column tables (schema 4, or a file made
        from one)."""
        return bool(self._read("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                               "name = 'column_info'"))

    def _reread_version(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate_to_columns(self) -> None:
        """Schema 3 -> 4, inside the first write transaction: the scores' blobs moved
        byte for byte into chunked columns, the per-item predictions rows dropped (they
        are derived from the target's scores)."""
        c = self._conn
        if int(c.execute("PRAGMA user_version").fetchone()[0]) != 3:
            self._reread_version()  # another process migrated it meanwhile
            return
        for stmt in cols.COLUMNS_SCHEMA.split(";"):
            if stmt.strip():
                c.execute(stmt)
        for role, n, k in c.execute("SELECT role, n_rows, n_classes FROM scores").fetchall():
            blob = c.execute("SELECT logprobs FROM scores WHERE role = ?", (role,)).fetchone()[0]
            lp = np.frombuffer(blob, dtype="<f8").reshape(int(n), int(k))
            cols.write_column(c, _score_column(role), lp)
            c.execute("UPDATE scores SET logprobs = ? WHERE role = ?", (b"", role))
        c.execute("DELETE FROM predictions")
        c.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        c.execute("PRAGMA user_version = 4")
        self._version = 4

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if is_lock_error(exc):
                raise self._locked(exc) from None
            if is_decode_error(exc):  # stored text that is not UTF-8: damaged pages
                raise damaged(self.path, exc) from None
            raise
        except sqlite3.ProgrammingError as exc:  # QA: a raw "closed database" error
            if "closed" in str(exc).lower():
                raise SessionError(f"{self.path}: this session was closed; open it again "
                                   f"(Session.open)") from None
            raise
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc).lower():
                raise damaged(self.path, exc) from None
            raise
        except UnicodeError as exc:  # SQLite's message quotes damaged bytes (not UTF-8)
            raise damaged(self.path, exc) from None

    def _rows_at(self, sql: str, params: tuple[Any, ...], rows: Iterable[int]
                 ) -> list[tuple[Any, ...]] | None:
        """``sql`` (ending in ``idx IN``) with ``params`` over the distinct pool ``rows``
        (ascending), :data:`_CHUNK` rows a query; None past :data:`_AT_MOST` rows (the
        caller reads its whole table then: fewer queries for as many rows)."""
        want = sorted({int(r) for r in rows})
        if len(want) > _AT_MOST:
            return None
        out: list[tuple[Any, ...]] = []
        for k in range(0, len(want), _CHUNK):
            part = want[k:k + _CHUNK]
            out += self._read(f"{sql} ({', '.join('?' * len(part))})", (*params, *part))
        return out

    # ------------------------------------------------------------------ meta and config

    def meta(self) -> dict[str, str]:
        """The ``meta`` table as a dict."""
        return dict(self._read("SELECT key, value FROM meta"))

    @property
    def schema_version(self) -> int:
        """``PRAGMA user_version`` of the file."""
        self._version = int(self._read("PRAGMA user_version")[0][0])
        return self._version

    def config(self) -> SessionConfig:
        """The session's configuration, checked (:func:`check_config`) and typed; read
        from the file once per store.

        Raises:
            DamagedSessionError: no configuration, not a JSON document, or one that
                does not hold a session's configuration (the message names the key).
        """
        if self._config is None:
            where = str(self.path)
            raw = check_config(self._config_document(), where)
            try:
                self._config = SessionConfig.from_dict(raw)
            except ConfigError as exc:
                raise DamagedSessionError(
                    f"{where}: the stored configuration (table config) is damaged: {exc}; "
                    f"it was changed outside activetest. Restore the file from a "
                    f"backup") from None
        return self._config

    def _config_document(self) -> dict[str, Any]:
        """The stored configuration document as it is (for :meth:`config` and migration).

        Raises:
            DamagedSessionError: no configuration, or not a JSON document.
        """
        rows = self._read("SELECT json FROM config WHERE id = 1")
        where = str(self.path)
        if not rows:
            raise DamagedSessionError(f"{where}: the stored configuration (table config) is "
                                      f"missing; restore the file from a backup")
        try:
            cfg = json.loads(rows[0][0])
        except (TypeError, ValueError) as exc:
            raise DamagedSessionError(f"{where}: the stored configuration (table config) is "
                                      f"not valid JSON ({exc}); restore the file from a "
                                      f"backup") from None
        return cfg  # type: ignore[no-any-return]

    def _is_class(self, y: Any) -> bool:
        """Whether a stored label ``y`` is a class of the task (anything is, while
        :attr:`label_classes` is not known)."""
        C = self.label_classes
        return C is None or (isinstance(y, int) and 0 <= y < C)

    def _checked(self, rows: list[tuple[Any, ...]], what: str) -> dict[int, StoredLabel]:
        """Labels (or judgments) rows as :class:`StoredLabel`; each a class of the task
        when :attr:`label_classes` is known."""
        C = self.label_classes
        out = {}
        for i, iid, y, src, cr, up in rows:
            if not self._is_class(y):
                raise DamagedSessionError(
                    f"{self.path}: item {iid!r} has the stored {what} {y!r}, but the task has "
                    f"{C} classes (0..{C - 1}); the file was changed outside activetest. "
                    f"Replace it with `activetest import {self.path} FILE --overwrite` (a "
                    f"sheet with item_id and label), or restore the file from a backup")
            out[int(i)] = StoredLabel(int(i), iid, int(y), src, cr, up)
        return out

    def update_config(self, changes: Mapping[str, Any] | Callable[[dict[str, Any]],
                                                                   Mapping[str, Any]]
                      ) -> dict[str, Any]:
        """Merge ``changes`` into the stored configuration document (one transaction);
        returns the document (for migrations, provenance and tests: a session's config is
        otherwise never changed). ``changes`` may be a function of the stored document,
        called inside the transaction (read, check and write at once: it may raise to
        change nothing)."""
        with self.transaction() as c:
            doc = json.loads(c.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
            doc.update(changes(dict(doc)) if callable(changes) else changes)
            c.execute("UPDATE config SET json = ? WHERE id = 1", (_dumps(doc),))
        self._config = None
        return doc

    # ------------------------------------------------------------------ items

    def n_items(self) -> int:
        """N, the pool size (rows are 0..N-1: the largest row + 1, read from the key)."""
        return int(self._read("SELECT COALESCE(MAX(idx) + 1, 0) FROM items")[0][0])

    def items_at(self, rows: Iterable[int]) -> dict[int, Item]:
        """The items at pool ``rows`` (only those rows are read and decoded)."""
        want = sorted({int(r) for r in rows})
        out: dict[int, Item] = {}
        for start in range(0, len(want), 500):
            part = want[start:start + 500]
            for i, iid, f, y in self._read(
                    f"SELECT idx, item_id, fields, data_label FROM items WHERE idx IN "
                    f"({', '.join('?' * len(part))})", part):
                out[int(i)] = Item(id=iid, fields=json.loads(f), label=y)
        missing = [r for r in want if r not in out]
        if missing:
            raise IndexError(f"{self.path}: no pool item at row(s) {missing[:5]}")
        return out

    def ids_at(self, rows: Iterable[int]) -> dict[int, str]:
        """The item ids at pool ``rows``."""
        want = sorted({int(r) for r in rows})
        out: dict[int, str] = {}
        for start in range(0, len(want), 500):
            part = want[start:start + 500]
            out.update((int(i), iid) for i, iid in self._read(
                f"SELECT idx, item_id FROM items WHERE idx IN ({', '.join('?' * len(part))})",
                part))
        return out

    def rows_of(self, item_ids: Iterable[str]) -> dict[str, int]:
        """Item id -> pool row, for those of ``item_ids`` that are in the pool."""
        want = list(dict.fromkeys(str(i) for i in item_ids))
        out: dict[str, int] = {}
        for start in range(0, len(want), 500):
            part = want[start:start + 500]
            out.update((iid, int(i)) for iid, i in self._read(
                f"SELECT item_id, idx FROM items WHERE item_id IN "
                f"({', '.join('?' * len(part))})", part))
        return out

    def items(self) -> list[Item]:
        """The pool, in row order, with the labels found in the pool file (if any)."""
        return [Item(id=r[0], fields=json.loads(r[1]), label=r[2])
                for r in self._read("SELECT item_id, fields, data_label FROM items ORDER BY idx")]

    def item_ids(self) -> list[str]:
        """The item ids in row order."""
        return [r[0] for r in self._read("SELECT item_id FROM items ORDER BY idx")]

    def ids_with_a_non_digit(self, limit: int) -> list[str]:
        """Up to ``limit`` item ids that hold a character other than ``0-9`` (no other
        id read: a pool whose ids are no row numbers is told without reading them all)."""
        return [r[0] for r in self._read("SELECT item_id FROM items WHERE item_id GLOB "
                                         "'*[^0-9]*' LIMIT ?", (int(limit),))]

    def item_id_blocks(self, size: int) -> Iterator[list[str]]:
        """The item ids in row order, ``size`` at a time (no list of every id: at 1e7 items
        that was the largest thing a compared table's check held)."""
        last = -1
        while True:
            rows = self._read("SELECT idx, item_id FROM items WHERE idx > ? ORDER BY idx "
                              "LIMIT ?", (last, int(size)))
            if not rows:
                return
            last = int(rows[-1][0])
            yield [r[1] for r in rows]

    def pool_rows_of(self, ids: Sequence[str]) -> tuple[int, int | None]:
        """How many of the distinct ``ids`` are pool items', and the first row (pool order)
        of one of them (None: none is)."""
        n, first = self._read("SELECT COUNT(*), MIN(idx) FROM items WHERE item_id IN "
                              "(SELECT value FROM json_each(?))",
                              (json.dumps(list(ids)),))[0]
        return int(n), None if first is None else int(first)

    def index_of(self, item_id: str) -> int | None:
        """The row of ``item_id``, or None when the pool has no such item."""
        rows = self._read("SELECT idx FROM items WHERE item_id = ?", (str(item_id),))
        return int(rows[0][0]) if rows else None

    def examples(self) -> list[Item]:
        """The in-context examples in prompt order."""
        return [Item(id=r[0], fields=json.loads(r[1]), label=int(r[2]))
                for r in self._read("SELECT item_id, fields, label FROM examples ORDER BY pos")]


#: What ``link`` fails with on a file system without hard links (FAT, some network and
#: FUSE mounts).
_NO_HARD_LINKS = frozenset(getattr(errno, name) for name in
                           ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK")
                           if hasattr(errno, name))


def _created_meanwhile(p: Path) -> SessionExistsError:
    return SessionExistsError(
        f"{p} was created by another command while this one was creating it; nothing was "
        f"overwritten (the session made here was discarded): choose another file name, or "
        f"pass --overwrite to replace that one")


def _remove_orphan_sidecars(p: Path) -> None:
    """Remove a ``-wal``/``-shm`` with no session file beside them (what a session file
    removed by hand left): SQLite would read them as the new file's. Called only when
    ``p`` does not exist, just before the new file is put there."""
    if not os.path.lexists(p):
        for suffix in ("-wal", "-shm"):
            Path(str(p) + suffix).unlink(missing_ok=True)


def _put_in_place(tmp: Path, p: Path, *, overwrite: bool, busy_timeout: float
                  ) -> ReplacedSession | None:
    """The last step of :meth:`SessionStore.create`: the finished file ``tmp`` becomes ``p``.
    Returns where a replaced session file holding labels was kept (None: nothing kept).

    Without ``overwrite``, atomically only where nothing is at ``p`` (a hard link, which
    fails when the name exists, then the temporary name removed): another command may
    have created ``p`` since this one started, and may be labelling it; neither it nor
    its ``-wal`` (committed labels not yet folded into the file) is touched.

    With ``overwrite``, the file at ``p`` is replaced while :func:`claim_for_overwrite`
    holds it: no other process has it open (else :class:`SessionInUseError`), its WAL is
    folded in and its ``-shm`` is stale, so removing it loses nothing another process uses.
    A replaced file that holds labels (people's, judgments, annotations) is not removed
    but renamed beside the new one (:func:`_backup_name`; QA: ``init --overwrite`` of a
    labelled session dropped its 60 labels without a word).

    Raises:
        SessionExistsError: without ``overwrite``, ``p`` exists now.
        SessionInUseError: with ``overwrite``, another process has ``p`` open.
    """
    if overwrite:
        claim = claim_for_overwrite(p, busy_timeout, hold=True) if p.is_file() else None
        link = p.is_symlink()  # the link is replaced, the file it points to stays
        replaced = False
        kept = None
        try:
            # Held: its -wal is folded in and gone, its -shm is nobody's. Not held: no
            # file, or not one SQLite can lock: whatever -wal/-shm is there would be read
            # as the new file's journal.
            for suffix in ("-wal", "-shm"):
                Path(str(p) + suffix).unlink(missing_ok=True)
            n = 0 if claim is None or link else collected_labels(claim[0])
            if n:  # never drop a collected label: the replaced file is kept beside it
                kept = ReplacedSession(_backup_name(p), n)
                os.replace(p, kept.path)
            os.replace(tmp, p)
            replaced = not link
        finally:
            release_claim(claim, replaced=replaced)
        return kept
    if os.path.lexists(p):
        raise _created_meanwhile(p)
    # A -wal/-shm with no file is a removed session's (SQLite would read it as the new
    # file's). Left open: the instant between the check and the unlink, in which another
    # command could put its file at p and open it (its -wal, just made, would be removed);
    # the link below then fails and says so.
    _remove_orphan_sidecars(p)
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise _created_meanwhile(p) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # No hard links on this file system: check, then rename. A file another command
        # puts at p in the instant between the two would be replaced (the only window).
        if os.path.lexists(p):
            raise _created_meanwhile(p) from None
        os.replace(tmp, p)
        return
    with contextlib.suppress(OSError):  # else removed by the next `init` of p (sweep_creating)
        tmp.unlink()


@dataclass(frozen=True)
class ReplacedSession:
    """A session file ``init --overwrite`` replaced that held labels: kept at ``path``.

    Attributes:
        path: where the replaced file now is (beside the new one).
        n_labels: the labels it held (labels, judgments and annotations, counted).
    """

    path: Path
    n_labels: int


#: Label sources of simulated labellers (``label --from-data``, the demo): labels made
#: again from the pool file, not collected; a file holding only these is not kept.
SIMULATED_SOURCES = ("data", "simulated")


def collected_labels(conn: sqlite3.Connection) -> int:
    """The collected labels a session file holds (labels and judgments of compared
    answers from anything but a simulated labeller, the labelling page's annotations):
    what replacing it would drop. 0 for a file that is not a session or cannot be read
    (nothing of ours to keep)."""
    sim = ", ".join("?" * len(SIMULATED_SOURCES))
    total = 0
    for query, args in ((f"SELECT COUNT(*) FROM labels WHERE source NOT IN ({sim})",
                         SIMULATED_SOURCES),
                        (f"SELECT COUNT(*) FROM judgments WHERE source NOT IN ({sim})",
                         SIMULATED_SOURCES),
                        ("SELECT COUNT(*) FROM annotations", ())):
        try:
            total += int(conn.execute(query, args).fetchone()[0])
        except sqlite3.Error:
            continue  # an older schema without the table, or not a session file
    return total


def _backup_name(p: Path) -> Path:
    """A free name beside ``p`` for the session file it replaces:
    ``<stem>.replaced-<UTC time><suffix>`` (a counter added where taken)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    for k in range(1000):
        cand = p.with_name(f"{p.stem}.replaced-{stamp}{'' if k == 0 else f'-{k}'}{p.suffix}")
        if not os.path.lexists(cand):
            return cand
    raise SessionError(f"{p}: no free name to keep the replaced session file under")


def _check_streamed_items(conn: sqlite3.Connection) -> None:
    """Refuse a streamed pool that is empty."""
    if conn.execute("SELECT idx FROM items LIMIT 1").fetchone() is None:
        raise SessionError("the pool is empty: nothing to evaluate")

