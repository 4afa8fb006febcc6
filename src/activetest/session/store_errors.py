"""A session file's errors for the user, and the checks that name what is wrong.

Every error is a :class:`SessionError` (a ``ValueError``; exit code 2 in the CLI) whose
message names the file and what to do: not a session, written by a newer activetest,
locked, read-only, a full disk, damaged (which tables SQLite cannot read), a stored
configuration changed outside activetest, a path SQLite cannot open (too long, a
symbolic link loop), a file another process has open when it is to be replaced.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import re
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
    "SessionFileReplacedError",
    "SessionInUseError",
    "SessionLockedError",
    "SessionReadOnlyError",
    "SessionWriteError",
    "check_busy_timeout",
    "check_config",
    "check_new_session_path",
    "claim_for_overwrite",
    "create_error",
    "damaged",
    "describe_damage",
    "disk_full",
    "file_identity",
    "in_use_error",
    "is_decode_error",
    "is_lock_error",
    "open_error",
    "path_too_long",
    "release_claim",
    "replaced_error",
    "symlink_loop",
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


class SessionInUseError(SessionError):
    """Replacing a session file (``overwrite``) that another process has open: what that
    process saved next would go into the replaced file, which nobody reads."""


class SessionFileReplacedError(SessionError):
    """The session file's name now names another file (one moved or renamed over it, or
    none) than the one this process opened: nothing more is written to either."""


class DamagedSessionError(NotASessionError):
    """A session file whose content SQLite (or activetest) cannot read: the message
    names the file and what is damaged."""


def is_decode_error(exc: BaseException) -> bool:
    """Whether reading the file met bytes that are not UTF-8 where text is kept (damaged
    pages): a stored value (SQLite's driver says "Could not decode to UTF-8 column"), or
    SQLite's own message quoting them (a :class:`UnicodeDecodeError`)."""
    return isinstance(exc, UnicodeError) or (isinstance(exc, sqlite3.OperationalError)
                                            and "could not decode" in str(exc).lower())


def is_lock_error(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite's error says another connection holds the lock."""
    msg = str(exc).lower()
    return "locked" in msg or "busy" in msg


#: The longest full path SQLite opens, in bytes: its unix file layer's ``MAX_PATHNAME``
#: (512), less the 8 of the ``-journal`` name SQLite must be able to make beside the file.
SQLITE_PATH_LIMIT = 504
#: How much longer the temporary name of a file being created (``.NAME.creating-PID``)
#: is than the file's (a pid has at most 7 digits on Linux).
CREATING_EXTRA = len(".") + len(".creating-") + max(7, len(str(os.getpid())))


def path_too_long(p: Path, extra: int = 0) -> SessionError | None:
    """The error for a session path whose full form (symbolic links resolved, as SQLite
    resolves them) is too long for SQLite, ``extra`` bytes added (the temporary name of a
    file being created); None when it is short enough or this is not a unix system."""
    if os.name != "posix":
        return None
    try:
        full = os.path.join(os.path.realpath(p.parent), p.name)
    except (OSError, ValueError):
        return None
    chars, size = len(full), len(os.fsencode(full))
    if size + extra <= SQLITE_PATH_LIMIT:
        return None
    n = f"{chars} characters" + (f" ({size} bytes)" if size != chars else "")
    tmp = (f"; `init` first writes the file under a temporary name {extra} characters longer, "
           f"so a new session's full path can have at most {SQLITE_PATH_LIMIT - extra} bytes"
           if extra else "")
    return SessionError(f"{p}: the path is too long for SQLite: its full path has {n}, and "
                        f"SQLite opens only files whose full path has at most "
                        f"{SQLITE_PATH_LIMIT} bytes{tmp}. Use a shorter path (a shorter "
                        f"file name, or a folder nearer the root)")


def symlink_loop(p: Path) -> SessionError | None:
    """The error for a path that is (or goes through) a symbolic link loop; None when it
    is not one."""
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return SessionError(f"{p}: a symbolic link loop (a link that points, directly or "
                                f"through other links, back to itself), not a session file; "
                                f"point the link at the session file, or remove it")
    except ValueError:
        pass
    return None


def open_error(p: Path, exc: sqlite3.OperationalError) -> SessionError:
    """A clear error for a session file SQLite could not open (full disk, permissions,
    a path too long for SQLite, not a database)."""
    msg = str(exc).lower()
    if "unable to open" in msg and (too_long := path_too_long(p)) is not None:
        return too_long
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
    """A clear error for a session file that could not be created (nothing was).

    It names ``p``, never the temporary file the failure happened on."""
    # an OSError's text names the file it failed on (the temporary ``.NAME.creating-PID``)
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    msg = detail.lower()
    if "unable to open" in msg and (too_long := path_too_long(p, CREATING_EXTRA)) is not None:
        return too_long
    if "full" in msg or (isinstance(exc, OSError) and exc.errno == errno.ENOSPC):
        return SessionWriteError(f"{p}: cannot create the session file: no space left on the "
                                 f"disk (it is full); nothing was created; free some space and "
                                 f"run `init` again (the score cache keeps the model scores)")
    if "readonly" in msg or "read-only" in msg:
        return SessionReadOnlyError(f"{p}: cannot create the session file: its folder or disk "
                                    f"is read-only")
    if "unable to open" in msg or (isinstance(exc, OSError) and exc.errno in (errno.EACCES,
                                                                             errno.EPERM)):
        return SessionWriteError(f"{p}: cannot create the session file: its folder cannot be "
                                 f"written ({detail}); check the folder's permissions")
    return SessionWriteError(f"{p}: cannot create the session file ({detail}); nothing was "
                             f"created")


def check_busy_timeout(seconds: Any) -> float:
    """How long to wait for another process's lock, checked: a number of seconds, 0 or
    more (QA: ``--busy-timeout inf`` ended in a traceback, ``nan`` in "cannot convert
    float NaN to integer").

    Raises:
        SessionError: not a finite number from 0 up.
    """
    try:  # (a string such as "0.5" was read as a number, True as 1 second)
        value = (float("nan") if isinstance(seconds, (str, bytes, bool)) else
                 float(seconds))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = float("nan")
    if not (math.isfinite(value) and value >= 0):
        raise SessionError(f"--busy-timeout (busy_timeout) must be a number of seconds, 0 or "
                           f"more (how long to wait for another process's lock on the "
                           f"session file), got {seconds!r}")
    return value


def _names_a_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` was given as text ending in a separator (``newdir/``): a folder's
    name. (A :class:`~pathlib.Path` has dropped it already: the command line passes
    ``init``'s path on as typed, ``cli._app.NewSessionArg``.)"""
    seps = tuple(sep for sep in (os.sep, os.altsep) if sep)
    raw = os.fspath(path)
    return isinstance(raw, str) and raw.endswith(seps)


def check_new_session_path(path: str | os.PathLike[str], overwrite: bool, *,
                           busy_timeout: float = 2.0) -> Path:
    """Refuse a path a new session file cannot take (before any scoring is spent).

    Raises:
        SessionError: the path is a folder, names one (ends in a separator), is a
            symbolic link loop, is too long for SQLite, or its parent is a file.
        SessionExistsError: a file (or a symbolic link) is there and ``overwrite`` is False.
        SessionInUseError: ``overwrite``, and another process has the session file there
            open (see :func:`claim_for_overwrite`).
    """
    p = Path(path)
    if p.is_dir():
        raise SessionError(f"{p} is a folder; a session is one file: give a file name, e.g. "
                           f"{p / 'session.db'}")
    if _names_a_folder(path):
        raise SessionError(f"{p}{os.sep}: ends in {os.sep!r}, so it names a folder; a "
                           f"session is one file: give a file name, e.g. {p / 'session.db'}")
    if (loop := symlink_loop(p)) is not None:
        raise loop
    parent = next((a for a in p.parents if a.exists()), None)
    if parent is not None and not parent.is_dir():
        raise SessionError(f"{p}: {parent} is a file, not a folder; give the session file a "
                           f"path in a folder")
    if (too_long := path_too_long(p, CREATING_EXTRA)) is not None:
        raise too_long
    if os.path.lexists(p) and not overwrite:
        if not p.exists():  # a symbolic link to nothing: the new file would not go there
            raise SessionExistsError(f"{p} is a symbolic link to {os.readlink(p)}, which does "
                                     f"not exist; remove the link, choose another file name, "
                                     f"or pass --overwrite to replace the link")
        raise SessionExistsError(f"{p} already exists; choose another file name or pass "
                                 f"--overwrite to replace it")
    if overwrite and p.is_file() and not _may_be_session(p):
        # (QA: `init pool.csv --pool pool.csv --overwrite` replaced the pool itself, and
        # any other file named, with a session, without a word)
        raise SessionExistsError(
            f"{p} exists and is not a session file (it does not start with SQLite's "
            f"header: a pool, a prediction table, a sheet?): --overwrite replaces only a "
            f"session file; choose another file name for the session (nothing was changed)")
    if overwrite and p.is_file():  # refused now, before the scoring, not after it
        claim_for_overwrite(p, busy_timeout)
    return p


def _may_be_session(p: Path) -> bool:
    """Whether the file at ``p`` may be a session ``--overwrite`` replaces: empty, or
    starting with SQLite's header (its content is checked no further: a damaged session
    may be replaced). Unreadable: left to the replacement to report."""
    try:
        with p.open("rb") as f:
            head = f.read(16)
    except OSError:
        return True
    return not head or head == b"SQLite format 3\x00"


def in_use_error(p: Path) -> SessionInUseError:
    """The error for replacing a session file another process has open."""
    return SessionInUseError(
        f"{p} is open in another process (e.g. `activetest serve` or `activetest label` on "
        f"it, or a program using it; or in this one: a Session not closed yet): replacing "
        f"it now would send what that process saves next into the replaced file, which "
        f"nobody reads. Stop that process (or close the session there), then run this "
        f"again; nothing was overwritten")


def claim_for_overwrite(p: Path, busy_timeout: float, *,
                        hold: bool = False) -> tuple[sqlite3.Connection, str] | None:
    """Make sure no other process has the SQLite file ``p`` open before it is replaced.

    Every connection to a WAL database (a session file) holds a shared lock on the file
    from its first read until it is closed, idle or not: ``activetest serve``, ``label``
    and every command hold one while they run. This takes SQLite's exclusive lock on the
    file (``locking_mode = EXCLUSIVE``), which no such lock allows, waiting at most
    ``busy_timeout`` s. Not seen: a connection opened that has not read yet (it reads the
    new file), and idle connections to a file in rollback-journal mode (activetest never
    makes one; they hold no lock between transactions).

    Without ``hold`` the lock is released at once (a check) and None returned. With
    ``hold``, the file's WAL is folded into it and the file is switched to an in-memory
    journal (the switch deletes its ``-wal``), so that while the returned connection
    holds the lock nobody opens the old file, and closing the connection after the file
    was replaced touches no file by name (a WAL connection deletes its ``-wal`` by name
    on close, which would then be the new file's). :func:`release_claim` gives it back.

    Returns:
        (the connection holding the lock, the file's journal mode before), or None: not
        held, or not a file SQLite can lock (not a database, read-only, damaged): nothing
        has it open as a session then, or it cannot be told.

    Raises:
        SessionInUseError: another connection holds a lock on the file.
    """
    try:
        conn = sqlite3.connect(str(p), timeout=busy_timeout, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        if hold:
            conn.execute("PRAGMA journal_mode = MEMORY")
        conn.execute("BEGIN EXCLUSIVE")  # with an exclusive locking mode: kept after COMMIT
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        conn.close()
        if is_lock_error(exc):
            raise in_use_error(p) from None
        return None
    except (sqlite3.Error, ValueError):  # not a database, damaged: no session to disturb
        conn.close()
        return None
    if not hold:
        conn.close()  # a WAL file: its -wal is folded in and deleted (nobody else had it)
        return None
    return conn, mode


def release_claim(claim: tuple[sqlite3.Connection, str] | None, *,
                  replaced: bool = False) -> None:
    """Give back what :func:`claim_for_overwrite` holds: the file's journal mode is set
    back first when it was not ``replaced``."""
    if claim is None:
        return
    conn, mode = claim
    try:
        if not replaced and mode.lower() != "memory":
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA journal_mode = {mode}")
    finally:
        conn.close()


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
        except UnicodeError:  # damaged bytes where a table's name is kept
            return ("its table of contents (the SQLite schema) cannot be read: it holds bytes "
                    "that are not text")
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc):
                return ("its first bytes are not a SQLite header (not a session file, or one "
                        "whose header was overwritten)")
            return "its table of contents (the SQLite schema) cannot be read"
        bad, labels = [], None
        for t in tables:
            try:
                n = sum(1 for _ in conn.execute(f'SELECT * FROM "{t}"'))
            except (sqlite3.DatabaseError, UnicodeError):  # or text that is no longer text
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
                except (sqlite3.DatabaseError, TypeError, UnicodeError):
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
    """The error for a session file SQLite reports as damaged (or in which stored text
    does not decode: see :func:`is_decode_error`)."""
    why = str(exc)
    if isinstance(exc, UnicodeDecodeError):
        why = f"it holds bytes that are not UTF-8 text: byte {exc.object[exc.start]:#04x}"
    elif m := re.search(r"could not decode to UTF-8 column '([^']*)'", why, re.IGNORECASE):
        why = f"text stored in it is not UTF-8 (column {m.group(1)!r})"
    return DamagedSessionError(f"{p}: the session file is damaged ({why}): "
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


def file_identity(p: Path) -> tuple[int, int] | None:
    """The file ``p`` names now (device, inode), or None where it names none."""
    try:
        st = os.stat(p)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def replaced_error(p: Path, conn: sqlite3.Connection, keep_as: Path) -> SessionFileReplacedError:
    """The refusal to write into a session file that ``p`` no longer names.

    The file this process has open (``conn``) is reachable by no name once another was
    moved over ``p``: it is copied to ``keep_as`` (SQLite's backup, every label it holds)
    before the refusal names both files (QA: ``label`` went on saying "saved:" into it,
    and it vanished with every label when the run ended)."""
    try:
        with contextlib.closing(sqlite3.connect(str(keep_as))) as dest:
            conn.backup(dest)
        kept = f"the session this command was writing is kept as {keep_as}, with every label " \
               f"it holds"
    except (sqlite3.Error, OSError) as exc:
        kept = f"the session this command was writing could not be kept as {keep_as} ({exc})"
    return SessionFileReplacedError(
        f"{p} was replaced by another file while this command had the session open (a file "
        f"moved or renamed over it, or it was removed); what it was saving was not saved, in "
        f"either file; {kept}")
