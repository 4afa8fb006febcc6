"""The gunzipped copy of a ``.parquet.gz`` pool that a streamed ``init`` reads, left by a
``kill -9``: removed (and said) by the next ``init`` or command in that folder, never
while its ``init`` lives (:mod:`activetest.session.pool_copies`).

QA: an ``init`` of a ``.parquet.gz`` pool killed by SIGKILL left its hidden
``.<session>.pool-*.parquet`` copy (as large as the pool's Parquet bytes) beside the
session file for good; nothing removed it.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_support import (
    cli_command,
    cli_env,
    create_from_tables,
    same_session,
    write_pool_tables,
)

from activetest.session.pool_copies import pool_copy, sweep_pool_copies

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL and flock")

N = 40_000  # an init of a few seconds: the copy is there for most of them

_INIT = r"""
import sys
from activetest.session.workflow import Session
Session.create(sys.argv[1], pool=sys.argv[2], task="sst2", surrogate="table:" + sys.argv[3],
               target="table:" + sys.argv[4], seed=3, pool_options={"id_column": "id"},
               progress=False).close()
"""


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """An sst2 pool of N items as ``pool.parquet.gz`` and its two Parquet tables."""
    src = tmp_path / "src"
    src.mkdir()
    parquet, sur, tgt = write_pool_tables(src, N, "parquet")
    pool = src / "pool.parquet.gz"
    pool.write_bytes(gzip.compress(parquet.read_bytes(), compresslevel=1, mtime=0))
    return pool, sur, tgt


def _copies(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".pool-pid" in p.name)


def _wait_for_copy(proc: subprocess.Popen[bytes], folder: Path, whole: bool = False) -> Path:
    """The copy ``proc`` writes in ``folder``, once it is there (``whole``: once it is
    written whole, as the session file is begun, and read by the stream)."""
    deadline = time.monotonic() + 120
    while not _copies(folder) or (whole and not any(".creating-" in p.name
                                                    for p in folder.iterdir())):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.002)
    return _copies(folder)[0]


def _killed_init(files: tuple[Path, Path, Path], db: Path, *, live_check: bool = False) -> Path:
    """Start ``init`` of ``db`` in a real child process, SIGKILL it while it reads the pool's
    copy (written whole), and return the copy it left. ``live_check``: first, while the
    child lives, a sweep of the folder must keep its copy."""
    proc = subprocess.Popen([sys.executable, "-c", _INIT, str(db), *map(str, files)],
                            env=cli_env(db.parent), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        copy = _wait_for_copy(proc, db.parent, whole=True)
        if live_check:
            assert sweep_pool_copies(db.parent) == []  # in use by a live init: kept
            assert copy.exists()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert copy.exists(), "the init ended before it was killed: make N larger"
    assert re.search(rf"^\.{db.name}\.pool-pid{proc.pid}\.\w+\.parquet$", copy.name), copy
    return copy


def test_a_copy_left_by_an_init_killed_by_sigkill_is_removed_by_the_next_init(
        tmp_path: Path) -> None:
    files = _files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    db = out / "s.db"
    copy = _killed_init(files, db, live_check=True)
    size = copy.stat().st_size
    assert size > 100_000 and not db.exists()
    pid = copy.name.split(".pool-pid")[1].split(".")[0]
    with pytest.warns(UserWarning) as said:
        create_from_tables(db, files).close()
    notes = [str(w.message) for w in said if "gunzipped copy" in str(w.message)]
    assert notes == [f"removed {copy}, a {size / 1e6:.1f} MB gunzipped copy of a .parquet.gz "
                     f"pool that an `init` (process {pid}, no longer running) left when it "
                     f"was stopped"], notes
    assert sorted(p.name for p in out.iterdir()) == ["s.db"]
    create_from_tables(out / "again.db", files).close()  # the same session as before
    same_session(db, out / "again.db")


def test_a_copy_left_by_a_killed_cli_init_is_removed_by_any_command_in_its_folder(
        tmp_path: Path) -> None:
    """``kill -9`` of the whole ``activetest init`` (the supervising parent and its
    child: no one left to clean): ``status`` of another session in that folder removes
    the copy and says so on one ``note:`` line."""
    files = _files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    create_from_tables(out / "other.db", files).close()
    proc = subprocess.Popen(cli_command("init", str(out / "s.db"), "--pool", str(files[0]),
                                        "--task", "sst2", "--surrogate", f"table:{files[1]}",
                                        "--target", f"table:{files[2]}", "--id-column", "id",
                                        "--no-progress"),
                            env=cli_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        copy = _wait_for_copy(proc, out)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30  # the child dies with its group
        while time.monotonic() < deadline:
            pid = int(copy.name.split(".pool-pid")[1].split(".")[0])
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert copy.exists()
    result = subprocess.run(cli_command("status", str(out / "other.db")), env=cli_env(tmp_path),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"note: removed {copy}, a " in result.stderr, result.stderr
    assert f"(process {pid}, no longer running)" in result.stderr
    assert not copy.exists() and not _copies(out)


def test_a_copy_whose_pid_is_gone_but_whose_lock_is_held_is_kept(tmp_path: Path) -> None:
    """The pid alone does not decide: a writer in another pid namespace (a container
    sharing the folder) shows no process here but holds the copy's lock; kept until the
    lock is free. A file of another name is never touched."""
    import fcntl

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    copy = tmp_path / f".s.db.pool-pid{dead.pid}.abc_123.parquet"
    copy.write_bytes(b"PAR1" * 10)
    other = tmp_path / ".s.db.pool-abc.parquet"  # not a name with a pid: not ours
    other.write_bytes(b"x")
    fd = os.open(copy, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert sweep_pool_copies(tmp_path) == []
        assert copy.exists()
    finally:
        os.close(fd)
    with pytest.warns(UserWarning, match=rf"removed {re.escape(str(copy))}, a 40-byte "
                      rf"gunzipped copy .* \(process {dead.pid}, no longer running\)"):
        assert sweep_pool_copies(tmp_path) == [(copy, 40, dead.pid)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]


def test_a_live_copy_is_locked_and_removed_when_its_init_ends(tmp_path: Path) -> None:
    """While :func:`pool_copy`'s block runs its file is locked (another open file cannot
    take the lock) and named by this pid; it is gone after, by an error too."""
    import fcntl

    db = tmp_path / "s.db"
    with pytest.raises(RuntimeError), pool_copy(db) as (path, sink):
        sink.write(b"abc")
        assert path.name.startswith(f".s.db.pool-pid{os.getpid()}.")
        fd = os.open(path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_copies_named_the_old_way_are_removed_only_where_no_init_can_read_them(
        tmp_path: Path) -> None:
    """Copies named before the pid was (``.<session>.pool-<random>.parquet``, made by the
    activetest of 2026-12-07 09:44 to 10:07 UTC) were never removed: nothing told whose
    they were. Now ``status`` of a session in that folder removes one that no ``init``
    can be reading: not written to for ten minutes, no ``.<session>.creating-*`` file
    beside it, open in no process; the copies an ``init`` may still read are kept (one
    just written; one beside its session's ``creating`` file; one a live process has
    open)."""
    out = tmp_path / "out"
    out.mkdir()
    create_from_tables(out / "other.db", write_pool_tables(tmp_path, 30)).close()
    hour_ago = time.time() - 3600
    copies = {name: out / f".{name}.db.pool-{tag}.parquet" for name, tag in
              (("gone", "k2_x9abc"), ("fresh", "q8w1e2r3"), ("creating", "a1b2c3d4"),
               ("open", "z9y8x7w6"))}
    for name, copy in copies.items():
        copy.write_bytes(b"PAR1" + bytes(200_000) + b"PAR1")
        if name != "fresh":
            os.utime(copy, (hour_ago, hour_ago))
    (out / ".creating.db.creating-99999999").write_bytes(b"")  # an init of creating.db
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nf = open(sys.argv[1], 'rb')\n"
         "print('open', flush=True)\ntime.sleep(600)\n", str(copies["open"])],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        result = subprocess.run(cli_command("status", str(out / "other.db")),
                                env=cli_env(tmp_path), capture_output=True, text=True,
                                timeout=300)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 0, result.stderr
    gone = copies.pop("gone")
    assert f"note: removed {gone}, a 0.2 MB gunzipped copy" in result.stderr, \
        result.stderr
    assert "an earlier activetest" in result.stderr and result.stderr.count("note:") == 1
    assert not gone.exists()
    assert all(copy.exists() for copy in copies.values()), sorted(os.listdir(out))
