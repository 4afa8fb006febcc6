"""Real kill-and-resume: SIGKILL a labelling process mid-way, resume, lose nothing.

The processes are real (`activetest label` fed through stdin, and a Python
select-and-label loop); they are killed with SIGKILL, which no code can intercept.
After each kill the session must hold every answer acknowledged before it, and
draw exactly what an uninterrupted session with the same seed draws.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import IO

import pytest
from session_support import PoolFiles, cli_command, cli_env

from activetest.session.workflow import Session

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


def _create(pf: PoolFiles, path: Path) -> Session:
    # the fixed (paper's) sampler: its draws do not depend on the labels, so one batch
    # of 45 is the reference; the adaptive design's resume: test_adaptive_session.py
    return Session.create(path, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                          target=f"table:{pf.target}", seed=11, progress=False,
                          pool_options={"id_column": "id"}, acquisition="ce")


class Lines:
    """Read a pipe's lines in a thread, so that waiting for one can time out."""

    def __init__(self, pipe: IO[str]) -> None:
        self.q: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(pipe,), daemon=True).start()

    def _pump(self, pipe: IO[str]) -> None:
        for line in pipe:
            self.q.put(line)
        self.q.put(None)

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line with {needle!r} within {timeout} s")
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"process ended before printing {needle!r}")
            if needle in line:
                return line


def _kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_sigkill_during_interactive_labelling_loses_no_answer(pool_files: PoolFiles,
                                                              tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ref_db = tmp_path / "ref.db"
    with _create(pool_files, db) as s:
        drawn = [a.item_id for a in s.select(8)]
    answers = [1, 2, 2, 1, 2, 1, 1, 2]
    proc = subprocess.Popen(cli_command("label", str(db)), env=cli_env(tmp_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    lines = Lines(proc.stdout)
    try:
        for k in answers[:5]:
            proc.stdin.write(f"{k}\n")
            proc.stdin.flush()
            lines.wait_for("saved:")  # printed after the answer's transaction committed
        # A sixth answer sent, and the process killed at once: it may or may not land.
        proc.stdin.write(f"{answers[5]}\n")
        proc.stdin.flush()
    finally:
        _kill(proc)
    with Session.open(db) as s:
        got = s.labels()
        assert {i: got[i] for i in drawn[:5]} == {i: k - 1 for i, k in zip(drawn, answers[:5],
                                                                            strict=False)}
        assert set(got) <= set(drawn[:6])
        if drawn[5] in got:
            assert got[drawn[5]] == answers[5] - 1
        resume_from = len(got)
    # Resume: the same command carries on with the first unanswered item.
    rest = "".join(f"{k}\n" for k in answers[resume_from:]) + "q\n"
    proc2 = subprocess.run(cli_command("label", str(db)), env=cli_env(tmp_path), input=rest,
                           capture_output=True, text=True, timeout=120)
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    assert f"item {drawn[resume_from]}" in proc2.stdout
    with Session.open(db) as s:
        assert s.labels() == {i: k - 1 for i, k in zip(drawn, answers, strict=True)}
        later = [(a.index, a.q) for a in s.select(10)]
    with _create(pool_files, ref_db) as ref:
        expected = [(a.index, a.q) for a in ref.select(18)]
    assert [pool_files.ids[i] for i, _ in expected[:8]] == drawn
    assert later == expected[8:]


WORKER = textwrap.dedent("""
    import sys
    import time
    from activetest.session.workflow import Session

    path, total = sys.argv[1], int(sys.argv[2])
    with Session.open(path) as s:
        truth = {it.id: it.label for it in s.items()}
        while True:
            for a in s.pending():              # resume: answer what was drawn but not labelled
                s.add_label(a.item_id, truth[a.item_id], source="worker")
                print("labelled", a.step, flush=True)
                time.sleep(0.01)  # pace it, so that the test's kills land mid-run
            n = len(s.acquisitions())
            if n >= total:
                break
            (a,) = s.select(1)
            print("drawn", a.step, flush=True)
            time.sleep(0.01)
    print("finished", flush=True)
""")


@pytest.mark.slow
def test_sigkill_at_random_moments_keeps_labels_and_future_draws(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    total = 45
    db = tmp_path / "s.db"
    _create(pool_files, db).close()
    with _create(pool_files, tmp_path / "ref.db") as ref:
        expected = [(a.index, a.q) for a in ref.select(total)]
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER)
    rng = random.Random(1234)
    acknowledged: set[int] = set()
    kills = 0
    for _attempt in range(8):
        proc = subprocess.Popen([sys.executable, str(worker), str(db), str(total)],
                                env=cli_env(tmp_path), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        lines = Lines(proc.stdout)
        finished = False
        try:
            # Let it make a few steps, then kill it at a random moment.
            for _ in range(rng.randint(2, 8)):
                line = lines.wait_for("", timeout=120)
                if line.startswith("labelled"):
                    acknowledged.add(int(line.split()[1]))
                if line.startswith("finished"):
                    finished = True
                    break
            time.sleep(rng.uniform(0, 0.03))
        finally:
            if proc.poll() is None:
                _kill(proc)
                kills += 1
            else:
                proc.wait()
        with Session.open(db) as s:
            acq = [(a.index, a.q) for a in s.acquisitions()]
            labels = s.labels()
            steps_labelled = {a.step for a in s.acquisitions() if a.item_id in labels}
        assert acq == expected[: len(acq)]  # the same draws, q bit-identical
        assert acknowledged <= steps_labelled  # no acknowledged answer lost
        assert all(labels[pool_files.ids[i]] == pool_files.labels[i] for i, _ in acq
                   if pool_files.ids[i] in labels)
        if finished:
            break
    assert kills >= 3
    # Run to the end and compare with the uninterrupted session.
    proc2 = subprocess.run([sys.executable, str(worker), str(db), str(total)],
                           env=cli_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    with Session.open(db) as s:
        assert [(a.index, a.q) for a in s.acquisitions()] == expected
        assert len(s.labels()) == total
        assert s.estimate(record=False).n_labels == total
