"""Creating and opening a session file when the world is hostile: another command
creates the same file meanwhile, another process has the file open when it is to be
replaced, a path too long for SQLite, damaged bytes, a read-only disk, odd paths.

Real parts throughout: the competing commands are real ``activetest`` processes (or
the Python API in a child process), synchronised by a hook of ``create`` (in this
process, or in a real ``activetest init`` that waits for a file), never by sleeping and
hoping; the session is a real SQLite file; the read-only disk is a real tmpfs mount
(skipped where the test cannot mount). One fake: a file system without hard links (none
can be mounted here).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from session_support import PoolFiles, cli_command, cli_env, run_cli_process, tmpfs

from activetest.data.task import Item
from activetest.session.store import (
    DamagedSessionError,
    SessionError,
    SessionExistsError,
    SessionInUseError,
    SessionStore,
)
from activetest.session.store_errors import (
    CREATING_EXTRA,
    SQLITE_PATH_LIMIT,
    claim_for_overwrite,
    release_claim,
)

ITEMS = [Item(f"i{k}", {"text": f"text {k}"}, k % 2) for k in range(10)]
CONFIG = {"metric": "log_loss", "seed": 3}

#: A child that opens the session, draws and labels ``argv[2]`` items from the pool's
#: data, prints how many labels the session has, and keeps the session open (idle, its
#: labels in the WAL, not folded into the file) until its stdin closes. (A store folds its
#: WAL into the file as each write commits; this child does not, as a writer stopped
#: between its commit and that fold, or an older activetest, leaves the WAL.)
HOLD = """
import sys
from activetest.session.store import SessionStore
from activetest.session.workflow import Session
SessionStore._fold_journal = lambda self: None
s = Session.open(sys.argv[1])
if int(sys.argv[2]):
    s.select(int(sys.argv[2]))
    s.label_from_data()
print(len(s.labels()), flush=True)
sys.stdin.readline()
s.close()
"""


def init_args(pf: PoolFiles, db: Path | str, *extra: str, pool: Path | None = None) -> list[str]:
    return ["init", str(db), "--pool", str(pool or pf.pool), "--task", "demo", "--surrogate",
            f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
            "--seed", "5", "--no-progress", *extra]


def one_error(out: str) -> None:
    assert "Traceback" not in out, out
    assert out.count("error:") == 1, out


def n_labels(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return int(con.execute("SELECT count(*) FROM labels").fetchone()[0])


def creating(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".creating-" in p.name)


def label_some(db: Path, tmp_path: Path, n: int) -> None:
    """Draw ``n`` items and import a label for each, by real ``activetest`` commands."""
    run_cli_process("select", db, "--n", n)
    with contextlib.closing(sqlite3.connect(db)) as con:
        ids = [r[0] for r in con.execute("SELECT i.item_id FROM acquisitions a JOIN items i "
                                         "ON i.idx = a.idx ORDER BY a.step")]
    sheet = tmp_path / "answers.csv"
    sheet.write_text("item_id,label\n" + "".join(f"{i},positive\n" for i in ids))
    run_cli_process("import", db, sheet)


@contextlib.contextmanager
def holding(db: Path, tmp_path: Path, n: int = 0) -> Iterator[subprocess.Popen[str]]:
    """A child process with the session open (see :data:`HOLD`), ready when yielded."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db), str(n)], env=cli_env(tmp_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip().isdigit(), proc.communicate()
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(60)
        proc.stdout.close()


def serving(db: Path, tmp_path: Path) -> subprocess.Popen[str]:
    """``activetest serve DB`` in a child process, once it has printed its address."""
    proc = subprocess.Popen(cli_command("serve", str(db)), env=cli_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "http://" in line:
            return proc
    proc.kill()
    raise AssertionError(f"the server did not start: {proc.communicate()}")


# --------------------------------------------------------------------------- two inits


def test_create_keeps_a_session_another_command_made_meanwhile(pool_files: PoolFiles,
                                                               tmp_path: Path) -> None:
    """Another command creates the file while ``create`` runs (in its ``init`` hook),
    and a third labels it and keeps it open, its labels still in the WAL: ``create``
    refuses at its end, and that session, its WAL and every label are untouched (the
    old last step deleted the -wal and renamed over the file: the labels were gone)."""
    db = tmp_path / "s.db"
    with contextlib.ExitStack() as stack:
        held: list[subprocess.Popen[str]] = []

        def meanwhile(store: SessionStore) -> None:
            run_cli_process(*init_args(pool_files, db))
            held.append(stack.enter_context(holding(db, tmp_path, 4)))

        with pytest.raises(SessionExistsError) as err:
            SessionStore.create(db, config=CONFIG, items=ITEMS, init=meanwhile)
        assert str(db) in str(err.value) and "created by another command" in str(err.value)
        assert "nothing was overwritten" in str(err.value)
        assert held, "the hook did not run"
        wal = Path(f"{db}-wal")
        assert wal.exists() and wal.stat().st_size > 0  # the holder's labels, not folded in
        assert n_labels(db) == 4  # read through that WAL, while the holder has it open
    assert n_labels(db) == 4
    out = run_cli_process("status", db)
    assert "60 items" in out and "4 labelled" in out, out
    assert creating(tmp_path) == []


#: ``activetest init ARGS`` (argv[3:]) run in this process, its ``SessionStore.create``
#: paused at the end of its ``init`` step (the file is made, not yet in place): it
#: writes the file argv[1] and waits until the file argv[2] exists.
PAUSED_INIT = """
import os, sys, time
from activetest.session.store import SessionStore
create = SessionStore.create.__func__
def paused(cls, path, **kw):
    inner = kw.get("init")
    def init(store):
        if inner is not None:
            inner(store)
        open(sys.argv[1], "w").close()
        while not os.path.exists(sys.argv[2]):
            time.sleep(0.01)
    return create(cls, path, **{**kw, "init": init})
SessionStore.create = classmethod(paused)
from activetest.cli import main
main(sys.argv[3:])
"""


def wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    """Until ``path`` exists (``proc`` made it), failing if ``proc`` ends first."""
    deadline = time.monotonic() + 300
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} was never made"
        time.sleep(0.01)


def test_the_later_init_says_the_file_was_made_meanwhile(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    """``activetest init`` A is paused between the start and the end of its ``create``;
    meanwhile init B makes the file, it is labelled and a process keeps it open; A then
    refuses: exit 2, one line, B's session and every label kept."""
    db = tmp_path / "s.db"
    ready, go = tmp_path / "ready", tmp_path / "go"
    env = {**cli_env(tmp_path), "ACTIVETEST_SUPERVISED": "0"}  # A's create in A's process
    slow = subprocess.Popen([sys.executable, "-c", PAUSED_INIT, str(ready), str(go),
                             *init_args(pool_files, db)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(ready, slow)
        assert not db.exists()
        run_cli_process(*init_args(pool_files, db))
        label_some(db, tmp_path, 5)
        with holding(db, tmp_path, 2):
            go.touch()
            out = slow.communicate(timeout=300)[0]
            assert n_labels(db) == 7
    finally:
        go.touch()
        if slow.poll() is None:
            slow.kill()
        slow.communicate()
    assert slow.returncode == 2, out
    one_error(out)
    assert f"{db} was created by another command" in out, out
    assert "nothing was overwritten" in out and "created session" not in out, out
    assert n_labels(db) == 7
    assert creating(tmp_path) == []


def killed_writer_session(tmp_path: Path) -> Path:
    """``tmp_path/s.db`` whose WAL holds two labels a writer committed before it was
    killed (``os._exit``: never folded into the file)."""
    db = tmp_path / "s.db"
    SessionStore.create(db, config=CONFIG, items=ITEMS).close()
    code = ("import os, sys\nfrom activetest.session.store import SessionStore\n"
            "SessionStore._fold_journal = lambda self: None\n"  # killed before the fold
            "st = SessionStore.open(sys.argv[1])\nst.set_labels([(1, 0), (2, 1)], 'cli')\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(db)], env=cli_env(tmp_path), check=True)
    assert Path(f"{db}-wal").stat().st_size > 0
    return db


def test_an_orphan_journal_is_not_read_into_a_new_file(tmp_path: Path) -> None:
    """A ``-wal`` left by a session file removed by hand (a writer killed before it was
    folded in) is removed, not read as the new file's journal."""
    db = killed_writer_session(tmp_path)
    db.unlink()
    other = [Item(f"o{k}", {"text": f"other {k}"}, 0) for k in range(7)]
    with SessionStore.create(db, config=CONFIG, items=other) as st:
        assert st.item_ids() == [it.id for it in other] and st.labels() == {}
        assert st._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_without_hard_links_it_falls_back_to_check_and_rename(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system without hard links (faked: none can be mounted here) the file is
    put in place by a rename after a check, which still refuses a file made meanwhile."""
    def no_link(src: object, dst: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    db = tmp_path / "s.db"
    SessionStore.create(db, config=CONFIG, items=ITEMS).close()
    with SessionStore.open(db) as st:
        assert st.item_ids() == [it.id for it in ITEMS]
    other = tmp_path / "t.db"

    def meanwhile(store: SessionStore) -> None:
        shutil.copy(db, other)

    with pytest.raises(SessionExistsError, match="created by another command"):
        SessionStore.create(other, config=CONFIG, items=ITEMS[:3], init=meanwhile)
    with SessionStore.open(other) as st:
        assert st.n_items() == len(ITEMS)
    assert creating(tmp_path) == []


# --------------------------------------------------------------------------- overwrite


def test_overwrite_replaces_a_session_file_only(pool_files: PoolFiles,
                                                tmp_path: Path) -> None:
    """``init --overwrite`` named the pool itself (or any other file): it replaced it with
    the session, the user's data gone without a word (QA: `init pool.csv --pool pool.csv
    ... --overwrite`). Now a file that does not start with SQLite's header is refused,
    exit 2, unchanged; an empty file and a session are still replaced."""
    pool = tmp_path / "pool.csv"
    shutil.copy(pool_files.pool, pool)
    before = pool.read_bytes()
    out = run_cli_process(*init_args(pool_files, pool, "--overwrite", pool=pool), code=2)
    one_error(out)
    assert "is not a session file" in out and "nothing was changed" in out, out
    assert pool.read_bytes() == before
    table = tmp_path / "target.csv"
    shutil.copy(pool_files.target, table)
    out = run_cli_process(*init_args(pool_files, table, "--overwrite"), code=2)
    assert "is not a session file" in out and table.read_bytes() == \
        Path(pool_files.target).read_bytes()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    run_cli_process(*init_args(pool_files, empty, "--overwrite"))
    run_cli_process(*init_args(pool_files, empty, "--overwrite"))  # a session: replaced
    assert n_labels(empty) == 0 and creating(tmp_path) == []


def test_overwrite_refuses_a_session_being_served(pool_files: PoolFiles,
                                                  tmp_path: Path) -> None:
    """``init --overwrite`` while ``activetest serve`` has the session open: exit 2, one
    line, the file untouched (the same file, every label); once the server stops, the
    overwrite works."""
    db = tmp_path / "s.db"
    run_cli_process(*init_args(pool_files, db))
    label_some(db, tmp_path, 3)
    before = db.stat().st_ino
    server = serving(db, tmp_path)
    try:
        out = run_cli_process(*init_args(pool_files, db, "--overwrite"), code=2)
        one_error(out)
        assert "open in another process" in out and "nothing was overwritten" in out, out
        assert server.poll() is None
        assert db.stat().st_ino == before and n_labels(db) == 3
    finally:
        server.terminate()
        server.communicate(timeout=60)
    assert n_labels(db) == 3
    run_cli_process(*init_args(pool_files, db, "--overwrite"))
    assert n_labels(db) == 0 and creating(tmp_path) == []


def test_overwrite_refuses_at_its_end_a_session_opened_meanwhile(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    """A process opens the session after ``create(overwrite=True)`` checked it and labels
    it (an idle connection, its labels in the WAL): the replacement is refused at the end,
    the file and its WAL are untouched and still a WAL session."""
    db = tmp_path / "s.db"
    run_cli_process(*init_args(pool_files, db))
    before = db.stat().st_ino
    with contextlib.ExitStack() as stack:
        def meanwhile(store: SessionStore) -> None:
            stack.enter_context(holding(db, tmp_path, 3))

        with pytest.raises(SessionInUseError, match="open in another process"):
            SessionStore.create(db, config=CONFIG, items=ITEMS, overwrite=True, init=meanwhile)
        assert Path(f"{db}-wal").stat().st_size > 0 and n_labels(db) == 3
    assert db.stat().st_ino == before and n_labels(db) == 3
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert creating(tmp_path) == []
    with SessionStore.create(db, config=CONFIG, items=ITEMS, overwrite=True) as st:
        assert st.item_ids() == [it.id for it in ITEMS] and st.labels() == {}


def test_overwrite_replaces_a_session_a_killed_writer_left(tmp_path: Path) -> None:
    """Nobody has it open, its WAL holds labels a killed writer committed: the new file
    replaces it whole, nothing of the old WAL read into it."""
    db = killed_writer_session(tmp_path)
    other = [Item(f"o{k}", {"text": f"other {k}"}, 0) for k in range(7)]
    with SessionStore.create(db, config=CONFIG, items=other, overwrite=True) as st:
        assert st.item_ids() == [it.id for it in other] and st.labels() == {}
        assert st._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert st._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_claim_given_back_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """What ``create(overwrite=True)`` holds while it replaces a file: the file's WAL is
    folded in, every label kept, and a claim given back without a replacement sets the
    journal back to WAL; while it is held, nobody else can open the file."""
    db = tmp_path / "s.db"
    with SessionStore.create(db, config=CONFIG, items=ITEMS) as st:
        st.set_labels([(1, 0), (2, 1)], "cli")
    claim = claim_for_overwrite(db, 0.2, hold=True)
    assert claim is not None
    try:
        assert not Path(f"{db}-wal").exists()
        with pytest.raises(SessionError):
            SessionStore.open(db, busy_timeout=0.2)
    finally:
        release_claim(claim)
    with SessionStore.open(db) as st:
        assert set(st.labels()) == {1, 2}
        assert st._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# --------------------------------------------------------------------------- long paths


def folder_of(root: Path, length: int) -> Path:
    """A new folder under ``root`` whose full path has ``length`` characters."""
    d = Path(os.path.realpath(root))
    while len(str(d)) < length:
        left = length - len(str(d)) - 1
        part = left if left <= 200 else min(200, left - 2)
        d = d / ("d" * part)
    assert len(str(d)) == length
    d.mkdir(parents=True)
    return d


def test_a_path_too_long_for_sqlite_is_said(pool_files: PoolFiles, tmp_path: Path) -> None:
    """A session path longer than SQLite opens: ``init`` and ``status`` say the path is
    too long, its length and the limit (not "its folder cannot be written" / "cannot
    open"); exactly at the limit the file is made and opens."""
    most = SQLITE_PATH_LIMIT - CREATING_EXTRA  # a new session's longest full path
    folder = folder_of(tmp_path / "a", most - 20)
    ok = folder / ("s" * 19)
    assert len(str(ok)) == most
    SessionStore.create(ok, config=CONFIG, items=ITEMS).close()
    with SessionStore.open(ok) as st:
        assert st.n_items() == len(ITEMS)
    too_long = folder / ("s" * 20)
    with pytest.raises(SessionError, match="too long for SQLite") as err:
        SessionStore.create(too_long, config=CONFIG, items=ITEMS)
    assert f"{most + 1} characters" in str(err.value)
    assert str(SQLITE_PATH_LIMIT) in str(err.value) and str(most) in str(err.value)
    assert not too_long.exists() and creating(folder) == []

    deep = folder_of(tmp_path / "b", SQLITE_PATH_LIMIT + 20)
    out = run_cli_process(*init_args(pool_files, deep / "s.db"), code=2)
    one_error(out)
    assert "too long for SQLite" in out and f"{SQLITE_PATH_LIMIT + 25} characters" in out, out
    assert "cannot be written" not in out and list(deep.iterdir()) == []
    shutil.copy(ok, deep / "copied.db")
    out = run_cli_process("status", deep / "copied.db", code=2)
    one_error(out)
    assert "too long for SQLite" in out and "cannot open" not in out, out
    with pytest.raises(SessionError, match="too long for SQLite"):
        SessionStore.open(deep / "copied.db")


# --------------------------------------------------------------------------- damaged bytes


def damage_bytes(db: Path, text: bytes, damaged: bytes) -> None:
    """Overwrite every ``text`` in the file with ``damaged`` (as long; a real damage of
    bytes that SQLite's page checks do not see)."""
    data = db.read_bytes()
    assert text in data and len(damaged) == len(text)
    db.write_bytes(data.replace(text, damaged))


@pytest.mark.parametrize(("text", "damaged"), [
    # a table's name no longer UTF-8 (SQLite reads the schema; the name does not decode)
    (b"label_history", b"\xffabel_history"),
    # the schema no longer parses, and SQLite's message quotes the bytes that are not UTF-8
    # (the case QA met: "'utf-8' codec can't decode byte 0xba in position 43", no file named)
    (b"CREATE TABLE label_history (", b"CREATE TABLE label_history \xff"),
])
def test_text_that_no_longer_decodes_is_a_damaged_file(pool_files: PoolFiles, tmp_path: Path,
                                                       text: bytes, damaged: bytes) -> None:
    """Every command says the file is damaged and names it."""
    db = tmp_path / "s.db"
    run_cli_process(*init_args(pool_files, db))
    damage_bytes(db, text, damaged)
    for args in (("status", db), ("select", db, "--n", "1"), ("export", db, "--out",
                                                               tmp_path / "x.csv")):
        out = run_cli_process(*args, code=2)
        one_error(out)
        assert f"{db}: the session file is damaged" in out and "UTF-8" in out, out
        assert "codec can't decode" not in out, out
    with pytest.raises(DamagedSessionError, match="damaged"):
        SessionStore.open(db)


def test_an_item_whose_text_no_longer_decodes_is_a_damaged_file(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    SessionStore.create(db, config=CONFIG, items=ITEMS).close()
    damage_bytes(db, b"text 7", b"\xffext 7")
    with SessionStore.open(db) as st, pytest.raises(DamagedSessionError) as err:
        st.items()
    assert f"{db}: the session file is damaged" in str(err.value), err.value
    assert "not UTF-8" in str(err.value) and "fields" in str(err.value), err.value


# --------------------------------------------------------------------------- odd paths


def test_init_on_a_read_only_disk_names_the_session_file(pool_files: PoolFiles) -> None:
    with tmpfs(4096) as mnt:
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        out = run_cli_process(*init_args(pool_files, mnt / "new.db"), code=2)
        one_error(out)
        assert f"{mnt / 'new.db'}: cannot create the session file" in out, out
        assert "read-only" in out and ".creating-" not in out, out


def test_a_path_ending_in_a_separator_is_refused(pool_files: PoolFiles,
                                                 tmp_path: Path) -> None:
    """``init newdir/`` made a FILE named newdir."""
    out = run_cli_process(*init_args(pool_files, f"{tmp_path / 'newdir'}{os.sep}"), code=2)
    one_error(out)
    assert "names a folder" in out, out
    assert not os.path.lexists(tmp_path / "newdir")
    with pytest.raises(SessionError, match="names a folder"):
        SessionStore.create(f"{tmp_path / 'other'}{os.sep}", config=CONFIG, items=ITEMS)
    assert not os.path.lexists(tmp_path / "other")


def test_symbolic_link_loops_and_dangling_links_are_said(pool_files: PoolFiles,
                                                         tmp_path: Path) -> None:
    loop1, loop2 = tmp_path / "loop1.db", tmp_path / "loop2.db"
    loop1.symlink_to(loop2.name)
    loop2.symlink_to(loop1.name)
    out = run_cli_process("status", loop1, code=2)
    one_error(out)
    assert "symbolic link loop" in out and "no session file" not in out, out
    for extra in ((), ("--overwrite",)):
        out = run_cli_process(*init_args(pool_files, loop1, *extra), code=2)
        one_error(out)
        assert "symbolic link loop" in out, out
    assert os.readlink(loop1) == loop2.name and os.readlink(loop2) == loop1.name
    dangling = tmp_path / "dangling.db"
    dangling.symlink_to(tmp_path / "nowhere" / "x.db")
    out = run_cli_process("status", dangling, code=2)
    one_error(out)
    assert "symbolic link to" in out and "does not exist" in out, out
    out = run_cli_process(*init_args(pool_files, dangling), code=2)
    one_error(out)
    assert "symbolic link to" in out and "--overwrite" in out, out
    assert dangling.is_symlink() and creating(tmp_path) == []


def test_a_closed_session_says_it_is_closed(pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: ``Session.status()`` after ``close()`` raised sqlite3's own "Cannot operate on a
    closed database"."""
    from activetest.session.workflow import Session

    db = tmp_path / "c.db"
    run_cli_process(*init_args(pool_files, db))
    s = Session.open(db)
    s.close()
    with pytest.raises(SessionError, match="this session was closed; open it again"):
        s.status()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_output_to_a_full_disk_is_not_called_a_full_session_disk(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    """`select > /dev/full`: the draws are stored, then printing them fails. It said "no
    space left on the disk ... nothing collected is lost" as if the session had not
    changed (QA); it says the output could not be written and the draws stand."""
    db = tmp_path / "s.db"
    run_cli_process(*init_args(pool_files, db))
    with open("/dev/full", "w") as full:
        proc = subprocess.run(cli_command("select", str(db), "--n", "3"), stdout=full,
                              stderr=subprocess.PIPE, text=True, env=cli_env(tmp_path),
                              timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "cannot write the output" in proc.stderr and "stands" in proc.stderr
    from activetest.session.workflow import Session

    with Session.open(db) as s:
        assert len(s.acquisitions()) == 3
