"""A session file's errors for the user, and the checks that name what is wrong.

Every error is a :class:`SessionError` (a ``ValueError``; exit code 2 in the CLI) whose
message names the file and what to do: not a session, written by a newer activetest,
locked, read-only, a full disk, damaged (which tables SQLite cannot read), a stored
configuration changed outside activetest.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from activetest.session.config import ACQUISITIONS, METRICS

__all__ = [
    "DamagedSessionError",
    "NotASessionError",
    "SchemaVersionError",
    "SessionError",
    "SessionExistsError",
    "SessionLockedError",
    "SessionReadOnlyError",
    "SessionWriteError",
    "check_config",
    "check_new_session_path",
    "create_error",
    "damaged",
    "describe_damage",
    "disk_full",
    "is_lock_error",
    "open_error",
    "write_error",
]


class SessionError(ValueError):
    """A session file that cannot be used as asked (a user error, exit code 2 in the CLI)."""


class NotASessionError(SessionError):
    """The file exists but is not an activetest session database."""


class SchemaVersionError(SessionError):
    """The session was written by a newer activetest with a schema this one cannot read."""


class SessionLockedError(SessionError):
    """Another process holds the database's write lock longer than the busy timeout."""


class SessionReadOnlyError(SessionError):
    """The session file cannot be written (read-only file, folder or file system)."""


class SessionWriteError(SessionError):
    """The session file could not be written (full disk, I/O error); nothing was changed."""


class SessionExistsError(SessionError):
    """Creating a session where a file already exists (without ``overwrite``)."""


class DamagedSessionError(NotASessionError):
    """A session file whose content SQLite (or activetest) cannot read: the message
    names the file and what is damaged."""


def is_lock_error(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite's error says another connection holds the lock."""
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


def open_error(p: Path, exc: sqlite3.OperationalError) -> SessionError:
    """A clear error for a session file SQLite could not open (full disk, permissions,
    not a database)."""
    msg = str(exc).lower()
    if "disk" in msg and "full" in msg:
        return SessionWriteError(f"{p}: cannot open the session: the disk is full ({exc}); "
                                 f"free some space and retry (nothing collected is lost)")
    if "unable to open" in msg or "readonly" in msg or "read-only" in msg:
        return SessionError(f"{p}: cannot open the session file ({exc}); check the "
                            f"permissions of the file and of its folder")
    return NotASessionError(f"{p}: not an activetest session ({exc})")


def disk_full(p: Path, margin: int = 1 << 16) -> bool:
    """Whether the disk holding ``p`` has less than ``margin`` bytes free (False when
    that cannot be told)."""
    try:
        return shutil.disk_usage(p.parent).free < margin
    except OSError:
        return False


def write_error(p: Path, exc: sqlite3.OperationalError) -> SessionError | sqlite3.OperationalError:
    """A clear error for a failed write, or ``exc`` itself when it is none of the known kinds."""
    msg = str(exc).lower()
    if "full" in msg:
        return SessionWriteError(f"{p}: cannot write the session file: the disk is full; "
                                 f"nothing was changed by this command and nothing collected "
                                 f"before it is lost; free some space and retry")
    if "readonly" in msg or "read-only" in msg:
        return SessionReadOnlyError(f"{p}: cannot write the session file: it is read-only")
    if "disk i/o" in msg:
        return SessionWriteError(f"{p}: cannot write the session file (disk I/O error: {exc}); "
                                 f"nothing was changed by this command")
    return exc


def create_error(p: Path, exc: Exception) -> SessionError:
    """A clear error for a session file that could not be created (nothing was)."""
    msg = str(exc).lower()
    if "full" in msg:
        return SessionWriteError(f"{p}: cannot create the session file: no space left on the "
                                 f"disk (it is full); nothing was created; free some space and "
                                 f"run `init` again (the score cache keeps the model scores)")
    if "readonly" in msg or "read-only" in msg:
        return SessionReadOnlyError(f"{p}: cannot create the session file: its folder or disk "
                                    f"is read-only")
    if "unable to open" in msg:
        return SessionWriteError(f"{p}: cannot create the session file: its folder cannot be "
                                 f"written ({exc})")
    return SessionWriteError(f"{p}: cannot create the session file ({exc}); nothing was "
                             f"created")


def check_new_session_path(path: str | os.PathLike[str], overwrite: bool) -> Path:
    """Refuse a path a new session file cannot take (before any scoring is spent).

    Raises:
        SessionError: the path is a folder, or its parent is a file.
        SessionExistsError: a file is there and ``overwrite`` is False.
    """
    p = Path(path)
    if p.is_dir():
        raise SessionError(f"{p} is a folder; a session is one file: give a file name, e.g. "
                           f"{p / 'session.db'}")
    parent = next((a for a in p.parents if a.exists()), None)
    if parent is not None and not parent.is_dir():
        raise SessionError(f"{p}: {parent} is a file, not a folder; give the session file a "
                           f"path in a folder")
    if p.exists() and not overwrite:
        raise SessionExistsError(f"{p} already exists; choose another file name or pass "
                                 f"--overwrite to replace it")
    return p


#: What each table of a session holds, for messages about a damaged file.
_TABLES = {"meta": "the file's marker and versions", "config": "the configuration",
           "items": "the pool items", "examples": "the in-context examples",
           "scores": "the model scores", "predictions": "the target's predictions",
           "sampler": "the sampler state", "acquisitions": "the draws",
           "labels": "the labels", "label_history": "the label history",
           "design_draws": "the design's record", "answers": "the answers",
           "judgments": "the judgments of compared answers",
           "judgment_history": "their history", "estimates": "the recorded estimates",
           "column_info": "the layout of the per-item numbers",
           "columns": "the per-item numbers (model scores)"}


def describe_damage(path: str | os.PathLike[str]) -> str:
    """Which parts of a damaged session file SQLite cannot read (one sentence).

    Reads every table through a read-only connection; never writes.
    """
    from urllib.parse import quote

    p = Path(path)
    try:
        conn = sqlite3.connect(f"file:{quote(str(p.resolve()))}?mode=ro", uri=True,
                               isolation_level=None)
    except sqlite3.Error as exc:
        return f"SQLite cannot open it ({exc})"
    try:
        try:
            tables = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                return ("its first bytes are not a SQLite header (not a session file, or one "
                        "whose header was overwritten)")
            return "its table of contents (the SQLite schema) cannot be read"
        bad, labels = [], None
        for t in tables:
            try:
                n = sum(1 for _ in conn.execute(f'SELECT * FROM "{t}"'))
            except sqlite3.DatabaseError:
                bad.append(t)
                continue
            if t == "labels":
                labels = n
        if not bad:
            indexes = []
            for name, table in conn.execute("SELECT name, tbl_name FROM sqlite_master "
                                            "WHERE type = 'index'").fetchall():
                try:
                    col = conn.execute(f'PRAGMA index_info("{name}")').fetchone()[2]
                    for _ in conn.execute(f'SELECT "{col}" FROM "{table}" INDEXED BY "{name}" '
                                          f'ORDER BY "{col}"'):
                        pass
                except (sqlite3.DatabaseError, TypeError):
                    indexes.append(f"{name} (of table {table})")
            if indexes:
                return (f"every table reads, but the index(es) {', '.join(indexes)} cannot; "
                        f"`sqlite3 {p} .recover` salvages the tables")
            return "every table and index reads, but SQLite's page structure is damaged"
        parts = ", ".join(f"{t} ({_TABLES[t]})" if t in _TABLES else t for t in bad)
        kept = ("" if labels is None else
                f"; the labels still read ({labels} row(s): `sqlite3 {p} .recover` salvages "
                f"what can be read)")
        return f"table(s) {parts} cannot be read{kept}"
    finally:
        conn.close()


def damaged(p: Path, exc: Exception) -> DamagedSessionError:
    """The error for a session file SQLite reports as damaged."""
    return DamagedSessionError(f"{p}: the session file is damaged ({exc}): "
                               f"{describe_damage(p)}. Restore it from a backup; nothing was "
                               f"changed by this command")


def check_config(doc: Any, where: str) -> dict[str, Any]:
    """Validate a stored configuration; returns it.

    Raises:
        DamagedSessionError: not an object, a required key missing or of the wrong
            kind (the message names the file, the key and what was expected).
    """
    METRIC_CHOICES = (*METRICS, "both")

    def fail(what: str) -> DamagedSessionError:
        return DamagedSessionError(f"{where}: the stored configuration (table config) is "
                                   f"damaged: {what}; it was changed outside activetest. "
                                   f"Restore the file from a backup")

    if not isinstance(doc, dict):
        raise fail(f"expected a JSON object, got {type(doc).__name__}")
    acquisitions = tuple(ACQUISITIONS)

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    required: dict[str, tuple[str, Callable[[Any], bool]]] = {
        "task": ("a task (an object)", lambda v: isinstance(v, dict)),
        "metric": (f"one of {', '.join(METRIC_CHOICES)}", lambda v: v in METRIC_CHOICES),
        "acquisition": (f"one of {', '.join(dict.fromkeys(acquisitions))}",
                        lambda v: isinstance(v, str) and v in acquisitions),
        "surrogate": ("a model spec (text)", lambda v: isinstance(v, str)),
        "target": ("a model spec (text)", lambda v: isinstance(v, str)),
        "alpha": ("a number in (0, 1]", lambda v: number(v) and 0 < v <= 1),
        "seed": ("an integer in 0..2**63-1",
                 lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63),
    }
    missing = [k for k in required if k not in doc]
    if missing:
        raise fail(f"missing key(s) {', '.join(missing)} (expected an object with "
                   f"{', '.join(required)}, as `activetest init` writes)")
    for key, (expected, ok) in required.items():
        value = doc[key]
        if not ok(value):
            raise fail(f"{key} is {value!r}, expected {expected}")
    optional: dict[str, tuple[str, Callable[[Any], bool]]] = {
        "n_boot": ("an integer >= 2", lambda v: isinstance(v, int) and v >= 2),
        "level": ("a number in (0, 1)", lambda v: number(v) and 0 < v < 1),
        "noise": ("an object", lambda v: isinstance(v, dict)),
        "shots": ("an integer >= 0", lambda v: isinstance(v, int) and v >= 0),
        "target_shots": ("an integer >= 0", lambda v: isinstance(v, int) and v >= 0),
        "cache_dir": ("a folder (text) or null", lambda v: v is None or isinstance(v, str)),
    }
    for key, (expected, ok) in optional.items():
        if key in doc and not ok(value := doc[key]):
            raise fail(f"{key} is {value!r}, expected {expected}")
    from activetest.data.taskfile import task_from_dict

    try:
        task_from_dict(doc["task"], f"{where}: config.task", index_values=True)
    except ValueError as exc:
        raise fail(str(exc)) from None
    return doc
