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

Durability: WAL journal, ``synchronous=FULL``; every write is one transaction
(``BEGIN IMMEDIATE``). The sampler state is written in the SAME transaction as the
acquisitions it produced, so a process killed at any moment leaves either both or
neither, and a resumed session makes exactly the draws an uninterrupted one would.
Each label answered is its own transaction.

The module's neighbours: :mod:`~activetest.session.store_schema` (the SQL),
:mod:`~activetest.session.store_rows` (the records it hands out) and
:mod:`~activetest.session.store_errors` (the errors and the damage checks); every name
they export is importable from here too.

Errors for the user (all :class:`SessionError`, a ``ValueError``): a file that is
not a session, one written by a newer activetest (:class:`SchemaVersionError`), a
database locked by another process beyond the busy timeout
(:class:`SessionLockedError`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item
from activetest.session import columns as cols
from activetest.session.config import ConfigError, SessionConfig
from activetest.session.store_errors import (
    DamagedSessionError,
    NotASessionError,
    SchemaVersionError,
    SessionError,
    SessionExistsError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionWriteError,
    check_config,
    check_new_session_path,
    create_error,
    damaged,
    describe_damage,
    disk_full,
    is_lock_error,
    open_error,
    write_error,
)
from activetest.session.store_rows import (
    Acquisition,
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
    "SessionLockedError",
    "SessionStore",
    "StoredLabel",
    "StoredScores",
    "check_config",
    "check_new_session_path",
    "describe_damage",
]

class SessionStore:
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
        self._conn = _conn
        self._depth = 0
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

    # ------------------------------------------------------------------ open / create

    @staticmethod
    def _connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; we issue BEGIN IMMEDIATE ourselves.
        conn = sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        return conn

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> SessionStore:
        """Open an existing session (read-only when it cannot be written).

        Raises:
            FileNotFoundError: no such file.
            NotASessionError: not an activetest session (or not SQLite at all).
            SchemaVersionError: written by a newer activetest.
            SessionLockedError: another process holds the database locked.
            SessionReadOnlyError: a read-only session whose journal was never folded
                into the file (it cannot be read without writing).
        """
        p = Path(path)
        if p.is_dir():
            raise SessionError(f"{p} is a folder, not a session file (a session is one file, "
                               f"made by `activetest init`)")
        if not p.is_file():
            raise FileNotFoundError(f"no session file {p} (create one with `activetest init`)")
        writable = os.access(p, os.W_OK) and os.access(p.parent, os.W_OK)
        why = "" if writable else "read-only"
        try:
            conn = cls._connect(p, busy_timeout) if writable else cls._connect_ro(p, busy_timeout)
        except sqlite3.Error as exc:
            raise NotASessionError(f"{p}: cannot open as a SQLite database ({exc})") from None
        try:
            version = cls._check(conn, p)
        except sqlite3.OperationalError as exc:
            conn.close()
            if is_lock_error(exc):
                raise SessionLockedError(
                    f"{p}: the session database is locked by another process (waited "
                    f"{busy_timeout:g} s); close the other `activetest` command and retry"
                ) from None
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
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
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
        failed creation leaves nothing behind.

        ``items_writer(conn)``: instead of ``items``, writes the pool's rows into the
        ``items`` table itself (a pool streamed in chunks); a duplicate id is then
        refused by the table's UNIQUE constraint (``sqlite3.IntegrityError``).

        Raises:
            SessionExistsError: ``path`` exists and ``overwrite`` is False.
            SessionError: duplicate item ids, or an empty pool.
        """
        p = check_new_session_path(path, overwrite)
        if not items and items_writer is None:
            raise SessionError("the pool is empty: nothing to evaluate")
        seen: dict[str, int] = {}
        for i, it in enumerate(items):
            if it.id in seen:
                raise SessionError(f"the pool has duplicate item id {it.id!r} (rows {seen[it.id]} "
                                   f"and {i}); item ids must be unique")
            seen[it.id] = i
        from activetest._tmpfiles import sweep_creating
        from activetest.supervise import Terminated, note, parent_gone

        p.parent.mkdir(parents=True, exist_ok=True)
        sweep_creating(p)  # what an earlier, killed `init` of this file left
        tmp = p.with_name(f".{p.name}.creating-{os.getpid()}")
        tmp_files = [Path(str(tmp) + suffix) for suffix in ("", "-wal", "-shm", "-journal")]
        for f in tmp_files:
            f.unlink(missing_ok=True)
        # a supervising parent removes them should this process die by a signal
        note(event="creating", tmp_files=[str(f) for f in tmp_files])
        conn: sqlite3.Connection | None = None
        try:
            conn = cls._connect(tmp, busy_timeout)
            # 8 KiB pages: the schema's table of contents stays on the first page (a
            # damaged table is then named, not an unreadable schema), fewer pages per pool
            conn.execute("PRAGMA page_size = 8192")
            conn.execute("PRAGMA journal_mode = WAL")
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
            # Fold the WAL into the main file so that the rename moves everything.
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
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
        for suffix in ("-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
            Path(str(p) + suffix).unlink(missing_ok=True)
        os.replace(tmp, p)
        return cls.open(p, busy_timeout=busy_timeout)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()

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

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``); nested uses join the outer one.

        Everything inside commits together or not at all.

        Raises:
            SessionLockedError: the write lock was not obtained within the busy timeout.
        """
        if not self.writable and self._readonly_why == "full":
            raise SessionWriteError(
                f"{self.path}: cannot write the session file: the disk is full; nothing was "
                f"changed and nothing collected is lost; free some space and retry")
        if not self.writable:
            raise SessionReadOnlyError(
                f"{self.path}: the session file is read-only (the file, its folder or its "
                f"disk cannot be written); status, estimate, report and export work, but "
                f"drawing and labelling need a writable session: copy it or change its "
                f"permissions")
        if self._depth:
            self._depth += 1
            try:
                yield self._conn
            finally:
                self._depth -= 1
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_lock_error(exc):
                raise self._locked(exc) from None
            raise write_error(self.path, exc) from None
        self._depth = 1
        try:
            if self._version == 3:  # the first write of a schema-3 file migrates it
                self._migrate_to_columns()
            yield self._conn
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
            raise
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc).lower():
                raise damaged(self.path, exc) from None
            raise

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

    def update_config(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``changes`` into the stored configuration document (one transaction);
        returns the document (for migrations and tests: a session's config is otherwise
        never changed)."""
        with self.transaction() as c:
            doc = json.loads(c.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
            doc.update(changes)
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

    def index_of(self, item_id: str) -> int | None:
        """The row of ``item_id``, or None when the pool has no such item."""
        rows = self._read("SELECT idx FROM items WHERE item_id = ?", (str(item_id),))
        return int(rows[0][0]) if rows else None

    def examples(self) -> list[Item]:
        """The in-context examples in prompt order."""
        return [Item(id=r[0], fields=json.loads(r[1]), label=int(r[2]))
                for r in self._read("SELECT item_id, fields, label FROM examples ORDER BY pos")]

    # ------------------------------------------------------------------ scores

    @contextlib.contextmanager
    def shared_scores(self) -> Iterator[None]:
        """Inside: :meth:`scores` reads each role's log-probs once and returns the same
        read-only array to every caller (an estimate's pool arrays, its design and its
        blind spot read them from one copy, not three); a write of a role's scores
        drops its copy."""
        outer = self._shared is not None
        if not outer:
            self._shared = {}
        try:
            yield
        finally:
            if not outer:
                self._shared = None

    def derived(self, role: str, key: Any, compute: Callable[[], Any]) -> Any:
        """A value computed from ``role``'s stored scores (by ``compute``), kept while this
        store is open: the next call with the same hashable ``key`` returns the same
        object, not computed again, as long as the role's stored row (spec, shape and
        write time) is the one it was computed from. One value per role (a new key
        replaces it); a write of the role's scores through this store drops it. The
        caller must not change the value (it is shared by every later call)."""
        rows = self._read("SELECT spec, n_rows, n_classes, updated FROM scores WHERE role = ?",
                          (role,))
        stamp = (key, *rows[0]) if rows else None
        got = self._derived.get(role)
        if stamp is not None and got is not None and got[0] == stamp:
            return got[1]
        value = compute()
        if stamp is not None:
            self._derived[role] = (stamp, value)
        return value

    def put_scores(self, role: str, spec: str, logprobs: np.ndarray,
                   provenance: Mapping[str, Any], *, predictions: bool | None = None) -> None:
        """Store (replace) a model's ``(N, C)`` log-probs; NaN rows mean "not scored".

        ``predictions`` (default: for every role but the surrogate) also records
        the model's predicted class and its probability per scored item.
        """
        self._derived.pop(role, None)
        if self._shared is not None:
            self._shared.pop(role, None)
        lp = np.ascontiguousarray(logprobs, dtype="<f8")
        n = self.n_items()
        if lp.ndim != 2 or lp.shape[0] != n:
            raise ValueError(f"scores for {role!r} must have shape (N={n}, C), got {lp.shape}")
        with self.transaction() as c:
            if self._version >= 4:  # chunked columns; predictions derived from the scores
                cols.write_column(c, _score_column(role), lp)
                c.execute("INSERT OR REPLACE INTO scores (role, spec, n_rows, n_classes, "
                          "logprobs, provenance, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (role, spec, lp.shape[0], lp.shape[1], b"",
                           _dumps(dict(provenance)), now()))
                return
            c.execute("INSERT OR REPLACE INTO scores (role, spec, n_rows, n_classes, logprobs, "
                      "provenance, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (role, spec, lp.shape[0], lp.shape[1], lp.tobytes(),
                       _dumps(dict(provenance)), now()))
            if predictions if predictions is not None else role != "surrogate":
                c.execute("DELETE FROM predictions WHERE role = ?", (role,))
                ok = ~np.isnan(lp).any(axis=1)
                pred = np.argmax(np.where(ok[:, None], lp, 0.0), axis=1)
                prob = np.exp(lp[np.arange(n), pred])
                c.executemany("INSERT INTO predictions (role, idx, predicted, probability) "
                              "VALUES (?, ?, ?, ?)",
                              ((role, int(i), int(pred[i]), float(prob[i]))
                               for i in np.flatnonzero(ok)))

    def update_score_rows(self, role: str, rows: Sequence[int], logprobs: np.ndarray,
                          provenance: Mapping[str, Any] | None = None) -> StoredScores:
        """Fill in the rows ``rows`` of a stored role (one transaction); returns the result."""
        self._derived.pop(role, None)
        if self._shared is not None:
            self._shared.pop(role, None)
        with self.transaction() as c:
            info = cols.column_info(c, _score_column(role)) if self._version >= 4 else None
            if info is not None:  # only the chunks holding the rows are rewritten
                r = np.asarray(rows, dtype=np.int64)
                cols.update_rows(c, info, r, np.asarray(logprobs, dtype=np.float64))
                prov_text = c.execute("SELECT provenance FROM scores WHERE role = ?",
                                      (role,)).fetchone()[0]
                prov = json.loads(prov_text)
                prov.update(provenance or {})
                c.execute("UPDATE scores SET provenance = ?, updated = ? WHERE role = ?",
                          (_dumps(prov), now(), role))
        if info is not None:
            out = self.scores(role)
            assert out is not None
            return out
        with self.transaction():
            cur = self.scores(role)
            if cur is None:
                raise KeyError(f"no scores stored for {role!r}")
            lp = cur.logprobs.copy()
            lp[np.asarray(rows, dtype=np.int64)] = np.asarray(logprobs, dtype=np.float64)
            prov = dict(cur.provenance)
            if provenance:
                prov.update(provenance)
            self.put_scores(role, cur.spec, lp, prov)
        out = self.scores(role)
        assert out is not None
        return out

    def scores(self, role: str) -> StoredScores | None:
        """The stored scores of ``role``, or None (inside :meth:`shared_scores`: one
        read-only copy)."""
        if self._shared is not None:
            if role not in self._shared:
                got = self._read_scores(role)
                if got is None:
                    return None
                got.logprobs.flags.writeable = False
                self._shared[role] = got
            return self._shared[role]
        return self._read_scores(role)

    def _read_scores(self, role: str) -> StoredScores | None:
        rows = self._read("SELECT spec, n_rows, n_classes, logprobs, provenance, updated "
                          "FROM scores WHERE role = ?", (role,))
        if not rows:
            return None
        spec, n, c, blob, prov, updated = rows[0]
        if len(blob) == 0 and int(n) * int(c) > 0:  # schema 4: in chunked columns
            lp = self.score_rows_of(role)
        else:
            lp = np.frombuffer(blob, dtype="<f8").reshape(int(n), int(c)).astype(np.float64)
        return StoredScores(role, spec, lp, json.loads(prov), updated)

    def score_rows_of(self, role: str, rows: np.ndarray | None = None) -> np.ndarray:
        """``role``'s stored log-probs at pool ``rows`` (all rows: None), reading only
        the chunks that hold them (schema 4; older files read the blob).

        Raises:
            KeyError: no scores stored for ``role``.
            DamagedSessionError: a column whose chunks are missing or of the wrong size.
        """
        info = cols.column_info(self._conn, _score_column(role)) if self._has_columns() \
            else None
        if info is None:
            stored = self.scores(role)
            if stored is None:
                raise KeyError(f"no scores stored for {role!r}")
            return stored.logprobs if rows is None else stored.logprobs[rows]
        try:
            if rows is None:
                return cols.read_column(self._conn, info)
            return cols.read_rows(self._conn, info, rows)
        except ValueError as exc:
            raise DamagedSessionError(f"{self.path}: the stored scores of {role} are "
                                      f"damaged ({exc}); restore the file from a "
                                      f"backup") from None

    def score_roles(self) -> list[str]:
        """The roles with stored scores."""
        return [r[0] for r in self._read("SELECT role FROM scores ORDER BY role")]

    def predictions(self, role: str = "target") -> dict[int, tuple[int, float]]:
        """``idx -> (predicted class, its probability)`` for ``role``."""
        if self._version >= 4:  # derived from the stored scores
            stored = self.scores(role)
            if stored is None:
                return {}
            lp = stored.logprobs
            ok = np.flatnonzero(~np.isnan(lp).any(axis=1))
            pred = np.argmax(lp[ok], axis=1)
            prob = np.exp(lp[ok, pred])
            return {int(i): (int(p), float(pr)) for i, p, pr in zip(ok, pred, prob, strict=True)}
        return {int(i): (int(p), float(pr)) for i, p, pr in self._read(
            "SELECT idx, predicted, probability FROM predictions WHERE role = ?", (role,))}

    # ------------------------------------------------------------------ sampler

    def init_sampler(self, alpha: float, seed: int | None, rng_state: Mapping[str, Any]) -> None:
        """Store the sampler's starting state (once, at creation)."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO sampler (id, alpha, seed, rng_state, updated) "
                      "VALUES (1, ?, ?, ?, ?)", (float(alpha), seed, _dumps(dict(rng_state)),
                                                 now()))

    def sampler_row(self) -> tuple[float, int | None, dict[str, Any]] | None:
        """``(alpha, seed, rng_state)`` after the last draw, or None before init."""
        rows = self._read("SELECT alpha, seed, rng_state FROM sampler WHERE id = 1")
        if not rows:
            return None
        alpha, seed, state = rows[0]
        return float(alpha), (None if seed is None else int(seed)), json.loads(state)

    def record_draws(self, indices: Sequence[int], q: Sequence[float],
                     rng_state: Mapping[str, Any], *, expected_steps: int) -> list[Acquisition]:
        """Append draws and the sampler state after them, in ONE transaction.

        Args:
            indices, q: the new draws, in order.
            rng_state: the generator state after the last of them.
            expected_steps: how many draws the caller's sampler was restored from;
                if another process drew meanwhile the write is refused.

        Raises:
            SessionError: the stored acquisitions changed since the caller read them.
        """
        at = now()
        with self.transaction() as c:
            have = int(c.execute("SELECT COUNT(*) FROM acquisitions").fetchone()[0])
            if have != expected_steps:
                raise SessionError(f"{self.path}: another process drew items meanwhile "
                                   f"({have} draws stored, expected {expected_steps}); retry")
            rows = [(have + k + 1, int(i), float(qq), at)
                    for k, (i, qq) in enumerate(zip(indices, q, strict=True))]
            c.executemany("INSERT INTO acquisitions (step, idx, q, created) VALUES (?, ?, ?, ?)",
                          rows)
            c.execute("UPDATE sampler SET rng_state = ?, updated = ? WHERE id = 1",
                      (_dumps(dict(rng_state)), at))
        ids = self.ids_at(r[1] for r in rows)
        return [Acquisition(s, i, ids[i], qq, a) for s, i, qq, a in rows]

    def record_design_draws(self, indices: Sequence[int], q: Sequence[float],
                            rng_state: Mapping[str, Any], design: Sequence[Sequence[float]],
                            seen: Sequence[tuple[int, int, float]], *,
                            expected_steps: int) -> list[Acquisition]:
        """Like :meth:`record_draws`, with each draw's design row, in ONE transaction.

        Args:
            design: per new draw ``(control, control_rest, lam, n_known, refits)``.
            seen: ``(step, label, loss)`` of earlier draws whose label the design
                used for the first time now (kept, so that a resumed design replays
                exactly what it saw even if a label is changed later).
        """
        with self.transaction() as c:
            acq = self.record_draws(indices, q, rng_state, expected_steps=expected_steps)
            c.executemany(
                "INSERT INTO design_draws (step, control, control_rest, lam, n_known, refits) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                ((a.step, float(d[0]), float(d[1]), float(d[2]), int(d[3]), int(d[4]))
                 for a, d in zip(acq, design, strict=True)))
            c.executemany("UPDATE design_draws SET seen_label = ?, seen_loss = ? WHERE step = ? "
                          "AND seen_label IS NULL",
                          ((int(y), float(L), int(s)) for s, y, L in seen))
        return acq

    def design_draws(self) -> list[tuple[float, float, float, int, int, int | None,
                                         float | None]]:
        """Per draw, in order: ``(control, control_rest, lam, n_known, refits, seen_label,
        seen_loss)`` (empty for sessions without an adaptive design)."""
        if self.schema_version < 2:
            return []
        rows = self._read("SELECT control, control_rest, lam, n_known, refits, seen_label, "
                          "seen_loss FROM design_draws ORDER BY step")
        return [(float(a), float(b), float(c), int(d), int(e),
                 None if f is None else int(f), None if g is None else float(g))
                for a, b, c, d, e, f, g in rows]

    def acquisitions(self) -> list[Acquisition]:
        """Every draw, in step order."""
        return [Acquisition(int(s), int(i), iid, float(q), created) for s, i, iid, q, created in
                self._read("SELECT a.step, a.idx, i.item_id, a.q, a.created FROM acquisitions a "
                           "CROSS JOIN items i ON i.idx = a.idx ORDER BY a.step")]

    def draw_rows(self) -> list[DrawRow]:
        """Every draw's step, item row and q, in step order (:meth:`acquisitions`
        without the item ids and times: no join on the items, about a seventh of its
        cost; for the design's replay, which needs no more)."""
        return [DrawRow(int(s), int(i), float(q)) for s, i, q in
                self._read("SELECT step, idx, q FROM acquisitions ORDER BY step")]

    def n_pending(self) -> int:
        """Number of draws without a label (:meth:`acquisitions` less those in
        :meth:`labels`, counted in SQL: no row read into Python)."""
        return int(self._read("SELECT COUNT(*) FROM acquisitions a WHERE NOT EXISTS "
                              "(SELECT 1 FROM labels l WHERE l.idx = a.idx)")[0][0])

    def n_acquired(self) -> int:
        """Number of draws so far."""
        return int(self._read("SELECT COUNT(*) FROM acquisitions")[0][0])

    def acquisition_step(self, index: int) -> int | None:
        """The step at which row ``index`` was drawn, or None."""
        rows = self._read("SELECT step FROM acquisitions WHERE idx = ?", (int(index),))
        return int(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ labels

    def labels(self, *, check: bool = True) -> dict[int, StoredLabel]:
        """Current labels by item row.

        Raises:
            DamagedSessionError: (with ``check``) a stored label that is not a class
                of the task; ``check=False`` reads it as it is (to replace it).
        """
        rows = self._read("SELECT l.idx, i.item_id, l.label, l.source, l.created, l.updated "
                          "FROM labels l CROSS JOIN items i ON i.idx = l.idx")
        if check:
            return self._checked(rows, "label")
        return {int(i): StoredLabel(int(i), iid, int(y), src, cr, up)
                for i, iid, y, src, cr, up in rows}

    def label_values(self) -> dict[int, int]:
        """Current labels as ``{item row: class}`` (:meth:`labels` without the item
        ids, sources and times: no join on the items), each checked to be a class of
        the task as :meth:`labels` checks them.

        Raises:
            DamagedSessionError: a stored label that is not a class of the task (the
                message names the item, as :meth:`labels`'s does).
        """
        rows = self._read("SELECT idx, label FROM labels")
        if not all(self._is_class(y) for _, y in rows):
            self.labels()  # raises, naming the item
        return {int(i): int(y) for i, y in rows}

    def n_labelled(self) -> int:
        """Number of labelled items."""
        return int(self._read("SELECT COUNT(*) FROM labels")[0][0])

    def set_labels(self, answers: Iterable[tuple[int, int] | tuple[int, int, str]], source: str,
                   *, overwrite: bool = False) -> list[LabelChange]:
        """Write labels ``(row, class)`` in ONE transaction; returns the changes made.

        An answer may carry its own source as a third element (default ``source``).

        An identical existing label is left alone (no change recorded). A
        different existing label is replaced only with ``overwrite`` (the old value
        stays in the history); otherwise nothing at all is written.

        Raises:
            SessionError: a conflicting label without ``overwrite``.
        """
        return self._set("target", answers, source, overwrite)

    @staticmethod
    def _slot(role: str) -> tuple[str, str, tuple[str, ...], tuple[Any, ...]]:
        """Where ``role``'s labels live: (table, history table, key columns before
        ``idx``, their values). The session target's are the ``labels``; a compared
        answer's judgments are the ``judgments`` of its role."""
        if role == "target":
            return "labels", "label_history", (), ()
        return "judgments", "judgment_history", ("role",), (role,)

    def _set(self, role: str, answers: Iterable[tuple[int, int] | tuple[int, int, str]],
             source: str, overwrite: bool) -> list[LabelChange]:
        table, _, keys, vals = self._slot(role)
        where = " AND ".join(f"{k} = ?" for k in (*keys, "idx"))
        cols = ", ".join((*keys, "idx"))
        at = now()
        changes: list[LabelChange] = []
        with self.transaction() as c:
            for answer in answers:
                idx, label = int(answer[0]), int(answer[1])
                src = str(answer[2]) if len(answer) > 2 else source  # type: ignore[misc]
                row = c.execute(f"SELECT label FROM {table} WHERE {where}",
                                (*vals, idx)).fetchone()
                old = None if row is None else int(row[0])
                if old == label:
                    continue
                if old is not None and not overwrite:
                    iid = c.execute("SELECT item_id FROM items WHERE idx = ?",
                                    (idx,)).fetchone()[0]
                    what = ("" if role == "target" else
                            f": the answer of {role.removeprefix('compare:')}")
                    raise SessionError(f"item {iid!r}{what} already has label {old}, not "
                                       f"{label}; to replace it, import it with --overwrite "
                                       f"(`activetest import`; overwrite=True in Python); the "
                                       f"old label is kept in the history")
                if old is None:
                    c.execute(f"INSERT INTO {table} ({cols}, label, source, created, updated) "
                              f"VALUES ({', '.join('?' * (len(keys) + 5))})",
                              (*vals, idx, label, src, at, at))
                else:
                    c.execute(f"UPDATE {table} SET label = ?, source = ?, updated = ? "
                              f"WHERE {where}", (label, src, at, *vals, idx))
                action = "add" if old is None else "change"
                changes.append(self._history(c, role, idx, old, label, action, src, at))
        return changes

    def _history(self, c: sqlite3.Connection, role: str, idx: int, old: int | None,
                 new: int | None, action: str, source: str, at: str) -> LabelChange:
        _, hist, keys, vals = self._slot(role)
        cols = ", ".join((*keys, "idx"))
        cur = c.execute(f"INSERT INTO {hist} ({cols}, old_label, new_label, action, source, at) "
                        f"VALUES ({', '.join('?' * (len(keys) + 6))})",
                        (*vals, idx, old, new, action, source, at))
        iid = c.execute("SELECT item_id FROM items WHERE idx = ?", (idx,)).fetchone()[0]
        return LabelChange(int(cur.lastrowid or 0), idx, iid, old, new, action, source, at, role)

    def revert(self, change: LabelChange, source: str) -> LabelChange:
        """Undo one change: restore ``change.old`` (None: remove the label). One transaction.
        A change of a compared answer's judgment (``change.role``) is undone in its table.

        Raises:
            SessionError: the item's label is no longer ``change.new`` (changed since).
        """
        table, _, keys, vals = self._slot(change.role)
        where = " AND ".join(f"{k} = ?" for k in (*keys, "idx"))
        key = (*vals, change.index)
        at = now()
        with self.transaction() as c:
            row = c.execute(f"SELECT label FROM {table} WHERE {where}", key).fetchone()
            cur = None if row is None else int(row[0])
            if cur != change.new:
                raise SessionError(f"cannot undo: item {change.item_id!r} now has label {cur}, "
                                   f"not {change.new} (changed since)")
            if change.old is None:
                c.execute(f"DELETE FROM {table} WHERE {where}", key)
            else:
                c.execute(f"UPDATE {table} SET label = ?, source = ?, updated = ? WHERE {where}",
                          (change.old, source, at, *key))
            return self._history(c, change.role, change.index, cur, change.old, "undo", source,
                                 at)

    def label_history(self, index: int | None = None) -> list[LabelChange]:
        """Every label change (of one item row, or all), oldest first."""
        sql = ("SELECT h.id, h.idx, i.item_id, h.old_label, h.new_label, h.action, h.source, h.at "
               "FROM label_history h CROSS JOIN items i ON i.idx = h.idx")
        params: tuple[Any, ...] = ()
        if index is not None:
            sql += " WHERE h.idx = ?"
            params = (int(index),)
        return [LabelChange(int(a), int(b), c, d, e, f, g, h)
                for a, b, c, d, e, f, g, h in self._read(sql + " ORDER BY h.id", params)]

    def last_label_change(self) -> int:
        """A counter that grows with every label change and every judgment of a
        compared answer (the latest ids of both histories, summed; 0 before any)."""
        row = self._read("SELECT MAX(id) FROM label_history")
        n = int(row[0][0] or 0) if row else 0
        if self.schema_version >= 3:
            row = self._read("SELECT MAX(id) FROM judgment_history")
            n += int(row[0][0] or 0) if row else 0
        return n

    # ------------------------------------------------- judgments of compared answers

    def judgments(self, role: str) -> dict[int, StoredLabel]:
        """Pool row -> the judgment of ``role``'s answer (``compare:<spec>``); empty
        for files before schema 3."""
        if self.schema_version < 3:
            return {}
        return self._checked(
            self._read("SELECT j.idx, i.item_id, j.label, j.source, j.created, j.updated "
                       "FROM judgments j CROSS JOIN items i ON i.idx = j.idx WHERE j.role = ?",
                       (role,)), f"judgment of {role.removeprefix('compare:')}'s answer")

    def set_judgments(self, role: str, answers: Iterable[tuple[int, int] | tuple[int, int, str]],
                      source: str, *, overwrite: bool = False) -> list[LabelChange]:
        """Write judgments ``(row, level)`` of ``role``'s answers in ONE transaction.

        The same rules as :meth:`set_labels`: an identical judgment is left alone, a
        different one is replaced only with ``overwrite`` (the old one stays in the
        history); the changes carry ``role`` (:meth:`revert` undoes them).

        Raises:
            SessionError: a conflicting judgment without ``overwrite``, or a file
                before schema 3 (it has no compared answers).
        """
        if self.schema_version < 3:
            raise SessionError("this session file predates compared answers (schema "
                               f"{self.schema_version}); create a new session to compare")
        return self._set(role, answers, source, overwrite)

    def judgment_history(self, role: str | None = None) -> list[LabelChange]:
        """Every change to compared answers' judgments (of one role, or all), oldest first."""
        if self.schema_version < 3:
            return []
        sql = ("SELECT h.id, h.idx, i.item_id, h.old_label, h.new_label, h.action, h.source, h.at,"
               " h.role FROM judgment_history h CROSS JOIN items i ON i.idx = h.idx")
        params: tuple[Any, ...] = ()
        if role is not None:
            sql += " WHERE h.role = ?"
            params = (role,)
        return [LabelChange(int(a), int(b), c, d, e, f, g, h, r)
                for a, b, c, d, e, f, g, h, r in self._read(sql + " ORDER BY h.id", params)]

    # ------------------------------------------------------------------ estimates

    def put_answers(self, role: str, rows: Sequence[int], answers: Sequence[str],
                    references: Sequence[Sequence[str]], info: Sequence[Mapping[str, Any]],
                    ) -> None:
        """Store (or replace) answers of ``role`` for pool rows (one transaction)."""
        if not len(rows) == len(answers) == len(references) == len(info):
            raise ValueError("rows, answers, references and info must have the same length")
        with self.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO answers (role, idx, answer, refs, info) "
                "VALUES (?, ?, ?, ?, ?)",
                ((role, int(i), str(a), _dumps(list(r)), _dumps(dict(x)))
                 for i, a, r, x in zip(rows, answers, references, info, strict=True)))

    def answers(self, role: str = "target") -> dict[int, tuple[str, tuple[str, ...],
                                                               dict[str, Any]]]:
        """Pool row -> (answer, references, details) of ``role`` (empty for schema 1)."""
        if self.schema_version < 2:
            return {}
        rows = self._read("SELECT idx, answer, refs, info FROM answers WHERE role = ?", (role,))
        return {int(i): (str(a), tuple(json.loads(r)), json.loads(x)) for i, a, r, x in rows}

    def add_estimate(self, *, n_labels: int, metric: str, method: str, estimate: float,
                     std: float | None = None, low: float | None = None,
                     high: float | None = None, level: float | None = None,
                     details: Mapping[str, Any] | None = None) -> None:
        """Record one estimate (one transaction)."""
        with self.transaction() as c:
            c.execute("INSERT INTO estimates (at, n_labels, metric, method, estimate, std, low, "
                      "high, level, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      (now(), int(n_labels), metric, method, float(estimate),
                       _opt(std), _opt(low), _opt(high), _opt(level),
                       _dumps(dict(details or {}))))

    def estimates(self) -> list[EstimateRow]:
        """All recorded estimates, oldest first."""
        return [EstimateRow(int(r[0]), r[1], int(r[2]), r[3], r[4], float(r[5]), r[6], r[7], r[8],
                            r[9], json.loads(r[10]))
                for r in self._read("SELECT id, at, n_labels, metric, method, estimate, std, low, "
                                    "high, level, details FROM estimates ORDER BY id")]


def _check_streamed_items(conn: sqlite3.Connection) -> None:
    """Refuse a streamed pool that is empty."""
    if conn.execute("SELECT idx FROM items LIMIT 1").fetchone() is None:
        raise SessionError("the pool is empty: nothing to evaluate")


def _score_column(role: str) -> str:
    """The column holding ``role``'s scores (schema 4)."""
    return f"scores:{role}"


def _opt(x: float | None) -> float | None:
    return None if x is None else float(x)
