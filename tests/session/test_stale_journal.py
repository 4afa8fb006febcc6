"""A labelling run killed with ``kill -9`` leaves no journal that another file would read.

QA (an Intel Xeon walk, 2026-12-07): `activetest label` was killed with ``kill -9`` after
two answers; the session's ``-wal`` file still held them (SQLite folds it into the file
only when the last connection closes). The user then copied a backup of the session over
the file; the next command read the killed run's ``-wal`` into the backup's pages:
``status`` printed "0 selected, 87 labelled, -87 pending" with exit 0, and folded that
mix into the file for good. Each write transaction now folds the journal into the file
as it commits, so a killed run leaves none behind; a run killed between a commit and its
fold leaves one, which the next open folds in before anything reads.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from session_support import (
    PoolFiles,
    cli_command,
    cli_env,
    cli_session,
    count_rows,
    wait_for_labels,
)

from activetest.session.store import SessionStore


def test_a_backup_copied_over_a_killed_labelling_run_is_read_as_it_is(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env, 6)
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)  # the user's copy: 6 draws, no label

    proc = subprocess.Popen(cli_command("label", str(db)), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdin is not None
        proc.stdin.write("1\n2\n")  # two answers; the run waits for the third
        proc.stdin.flush()
        wait_for_labels(db, 2, proc)
        time.sleep(0.3)  # the run sits at its next question, as a person would leave it
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert count_rows(db, "labels") == 2  # both answers kept (nothing lost by the kill)

    shutil.copyfile(backup, db)  # the backup put back in place (`cp backup.db s.db`)
    out = subprocess.run(cli_command("status", str(db)), env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "6 selected, 0 labelled, 6 pending" in out.stdout, out.stdout  # the backup's own
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 6
    with contextlib.closing(sqlite3.connect(db)) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_session_file_replaced_during_labelling_loses_no_answer(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: another session moved over the file while `label` ran (``mv other.db s.db``, a
    sync tool's rename): the run went on saying "saved:" while it wrote into the replaced
    file, which no name reached any more and which vanished when the run ended, with every
    label of it. Now the next answer is refused, with exit 2 and one message, the replaced
    session is kept beside the file with every label it holds, and the other file is
    left as it was."""
    env = cli_env(tmp_path)
    db, other = tmp_path / "s.db", tmp_path / "other.db"
    cli_session(pool_files, db, env, 4)
    cli_session(pool_files, other, env, 3)
    proc = subprocess.Popen(cli_command("label", str(db)), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None
    proc.stdin.write("1\n")
    proc.stdin.flush()
    wait_for_labels(db, 1, proc)
    other.replace(db)  # another session moved over the file while the run waits
    out, err = proc.communicate("2\n", timeout=60)
    assert proc.returncode == 2, (out, err)
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert "was replaced" in err and str(db) in err and "was not saved" in err, err
    kept = list(tmp_path.glob("s.replaced-*.db"))
    assert len(kept) == 1 and str(kept[0]) in err, (kept, err)
    assert count_rows(kept[0], "labels") == 1 and count_rows(kept[0], "acquisitions") == 4
    assert count_rows(db, "labels") == 0 and count_rows(db, "acquisitions") == 3  # the other's own


def test_a_journal_left_by_a_writer_killed_before_its_fold_is_folded_in_at_open(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A `label` run killed with ``kill -9`` after a commit whose fold had not happened
    left its answer only in the ``-wal``. The run is made to stop there for real: another
    process holds a read snapshot (as the labelling page's progress reader does), which
    makes the fold wait for a later commit; both are then killed with ``kill -9`` (no
    hook in the store: the window between a commit and its fold is too short to hit).
    The next open folds the journal in before anything reads it."""
    env = cli_env(tmp_path)
    db = tmp_path / "s.db"
    cli_session(pool_files, db, env)
    reader = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
         "c.execute('BEGIN'); c.execute('SELECT COUNT(*) FROM labels').fetchall()\n"
         "print('reading', flush=True); time.sleep(600)\n"],
        stdout=subprocess.PIPE, text=True)
    label = None
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "reading\n"
        label = subprocess.Popen(cli_command("label", str(db)), env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, text=True)
        assert label.stdin is not None
        label.stdin.write("1\n")
        label.stdin.flush()
        wait_for_labels(db, 1, label)
        time.sleep(0.3)
    finally:
        for proc in (label, reader):
            if proc is not None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
    wal = Path(f"{db}-wal")
    assert wal.stat().st_size > 0  # the answer only in the journal (what the kill left)
    alone = tmp_path / "alone.db"
    shutil.copyfile(db, alone)
    assert count_rows(alone, "labels") == 0  # the file without its journal: no answer yet

    store = SessionStore.open(db)
    try:
        assert wal.stat().st_size == 0  # folded in by the open, before any read
        shutil.copyfile(db, alone)
        Path(f"{alone}-wal").unlink(missing_ok=True)
        assert count_rows(alone, "labels") == 1  # the file alone holds the answer
        assert store.n_labelled() == 1
    finally:
        store.close()
