"""Native crashes never take a command down silently.

The scoring backends run native code (llama.cpp, torch) that can die by a signal
(a segfault in a CPU kernel, an illegal instruction on a CPU the build was not
made for, an abort). Python cannot catch that, so the CLI runs each command that
may score in a child process (:func:`run_supervised`): if the child dies by a
signal, the parent prints ONE message naming the model, the backend, the signal
and what to try, removes the temporary files the child left, and exits 2. The
session file is safe by construction (SQLite commits are atomic; a dead writer
leaves the last committed state), and the score cache writes whole files by
rename, so neither needs repair.

The child tells the parent what it is doing through :func:`note`: one JSON line
per event (a model being loaded or scoring) appended to the file named by
``$ACTIVETEST_CRASH_NOTES``; outside a supervised child :func:`note` does nothing.

Temporary files carry their writer's pid (:mod:`activetest._tmpfiles`), so the
parent removes those its dead child left; a session file being created is noted
(``tmp_files``) and removed the same way.

The child dies with its parent: a parent killed by SIGKILL cannot forward anything,
so the child watches it (:func:`watch_parent`): on Linux the kernel sends it SIGTERM
(``prctl(PR_SET_PDEATHSIG)``), and everywhere a pipe the parent holds open reaches
end of file. SIGTERM unwinds the child like Ctrl-C (:class:`Terminated`), so its
temporary files are removed, and a child whose parent is gone never puts a new
session file in place (:func:`parent_gone`).
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from activetest._tmpfiles import default_cache_dir, sweep_tmp

__all__ = [
    "CRASH_ENV",
    "NOTES_ENV",
    "Terminated",
    "crash_message",
    "handle_sigterm",
    "maybe_crash",
    "note",
    "parent_gone",
    "run_supervised",
    "wants_supervisor",
    "watch_parent",
]

NOTES_ENV = "ACTIVETEST_CRASH_NOTES"
#: Set in a supervised child; also lets a user turn supervision off (``=0``).
SUPERVISED_ENV = "ACTIVETEST_SUPERVISED"
#: For tests only: makes a native backend die by this signal where it loads a model
#: (``segv``, ``abort``, ``ill``), to exercise the crash path with a real signal.
CRASH_ENV = "ACTIVETEST_TEST_NATIVE_CRASH"
#: The supervising parent's pid, and the read end of a pipe whose write end only the
#: parent holds (end of file: the parent is gone). Read once by :func:`watch_parent`.
PARENT_PID_ENV = "ACTIVETEST_SUPERVISOR_PID"
PARENT_FD_ENV = "ACTIVETEST_SUPERVISOR_FD"

#: Commands that may run a native scoring backend: they run in a supervised child
#: process, so that a crash in native code becomes one message and exit 2 instead of
#: a bare "Segmentation fault".
SCORING_COMMANDS = frozenset({"init", "estimate", "report", "demo"})

_parent_pid: int | None = None


def wants_supervisor(args: Sequence[str]) -> bool:
    """Whether the command line ``args`` runs in a supervised child (a scoring command,
    not its ``--help``, not already in the child, supervision not turned off with
    ``ACTIVETEST_SUPERVISED=0``)."""
    if os.environ.get(SUPERVISED_ENV, "").strip() in ("1", "0"):
        return False  # already the child, or the user turned it off
    command = next((a for a in args if not a.startswith("-")), None)
    return command in SCORING_COMMANDS and not any(a in ("--help", "-h") for a in args)


class Terminated(KeyboardInterrupt):
    """SIGTERM (or the supervising parent's death) in a command: it unwinds like Ctrl-C,
    so every ``finally`` and cleanup runs; the CLI exits with ``128 + SIGTERM``."""


_terminating = False


def _on_sigterm(signum: int, _frame: Any) -> None:
    global _terminating
    if _terminating:  # a second SIGTERM (the kernel's and the pipe watcher's) must not
        return        # interrupt the cleanup the first one started
    _terminating = True
    raise Terminated(signum)


_interrupted = False


def _on_sigint(signum: int, _frame: Any) -> None:
    global _interrupted
    if _interrupted:  # a second SIGINT (the terminal's Ctrl-C and the one the parent
        return        # passes on) must not interrupt the cleanup the first one started
    _interrupted = True
    raise KeyboardInterrupt


def handle_sigterm() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (no-op elsewhere)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


def _die_with_parent() -> None:
    with contextlib.suppress(OSError):
        os.kill(os.getpid(), signal.SIGTERM)


def _set_pdeathsig(signum: int) -> bool:
    """Ask Linux to send ``signum`` when the parent dies (``prctl(PR_SET_PDEATHSIG)``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(1, int(signum), 0, 0, 0)) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _watch_pipe(fd: int) -> None:
    while True:
        try:
            data = os.read(fd, 1)
        except InterruptedError:
            continue
        except OSError:
            return  # not our pipe after all: nothing to watch
        if not data:  # end of file: the parent's end is closed, it is gone
            _die_with_parent()
            return


def watch_parent() -> None:
    """In a supervised child: SIGTERM to itself when the supervising parent dies.

    Linux: ``prctl(PR_SET_PDEATHSIG, SIGTERM)``; everywhere: a thread reading the
    pipe the parent holds open. Both are idempotent; a child whose parent died
    before it started watching terminates at once. SIGINT raises KeyboardInterrupt
    once: a Ctrl-C reaches the child from the terminal and again from the parent,
    which passes on a SIGINT sent to it alone. Outside a supervised child this
    does nothing.
    """
    global _parent_pid
    pid = os.environ.pop(PARENT_PID_ENV, None)
    fd = os.environ.pop(PARENT_FD_ENV, None)
    if pid is None or not pid.isdigit():
        return
    _parent_pid = int(pid)
    handle_sigterm()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)  # Ctrl-C once, though it comes twice
    _set_pdeathsig(signal.SIGTERM)
    if fd is not None and fd.isdigit():
        threading.Thread(target=_watch_pipe, args=(int(fd),), name="activetest-parent-watch",
                         daemon=True).start()
    if os.getppid() != _parent_pid:  # it died before the watch began
        _die_with_parent()


def parent_gone() -> bool:
    """Whether this is a supervised child whose parent has died (never outside one)."""
    return _parent_pid is not None and os.getppid() != _parent_pid


def note(**event: Any) -> None:
    """Record what the supervised child is doing (no-op when not supervised)."""
    path = os.environ.get(NOTES_ENV)
    if not path:
        return
    event.setdefault("time", time.time())
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(event, default=str) + "\n")


def maybe_crash(where: str) -> None:
    """Die by the signal ``$ACTIVETEST_TEST_NATIVE_CRASH`` names (tests only)."""
    how = os.environ.get(CRASH_ENV, "").strip().lower()
    if not how:
        return
    note(event="test-crash", where=where, signal=how)
    faulthandler.disable()  # the parent explains the crash; no dump on the terminal
    if how == "segv":
        faulthandler._sigsegv()  # a real SIGSEGV from C code
    elif how == "abort":
        os.abort()
    elif how == "ill":
        signal.raise_signal(signal.SIGILL)
    raise ValueError(f"${CRASH_ENV}={how!r}: expected segv, abort or ill")


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


_WHAT = {"SIGSEGV": "a segmentation fault", "SIGILL": "an illegal instruction",
         "SIGABRT": "an abort", "SIGBUS": "a bus error", "SIGFPE": "a floating-point trap",
         "SIGKILL": "a kill from outside (often the out-of-memory killer)"}

#: What a command killed from outside (SIGKILL: no native crash, nothing to see with
#: ``ACTIVETEST_SUPERVISED=0``) was most likely short of, and where it is said.
_KILLED = ("If memory ran out (`dmesg` says so), docs/pool-scale.md says what each command "
           "holds per pool item; run it where more is free.")


def crash_message(signum: int, events: Sequence[dict[str, Any]]) -> str:
    """The one message printed when a supervised command died by ``signum``."""
    name = _signal_name(signum)
    what = _WHAT.get(name, name)
    last = next((e for e in reversed(events) if e.get("model")), None)
    if last is None and name == "SIGKILL":
        # (QA: a `kill -9` of `init` at 1e6 items said "died by SIGKILL (killed from
        # outside, ...) (SIGKILL) in native code ... ACTIVETEST_SUPERVISED=0 to see where
        # it stops": no native code crashed, and that run would only be killed again)
        return (f"activetest was stopped by {what} ({name}). Nothing collected is lost: the "
                f"session file keeps every committed label (an `init` leaves no session: "
                f"run it again). {_KILLED}")
    if last is None:
        return (f"activetest died by {what} ({name}) in native code. Nothing collected is "
                f"lost: the session file keeps every committed label. Run the command again "
                f"with ACTIVETEST_SUPERVISED=0 to see where it stops.")
    model, backend = last.get("model"), last.get("backend", "?")
    doing = last.get("event", "running")
    lines = [f"the {backend} backend died by {what} ({name}) while {doing} the model "
             f"{model!r}. Nothing collected is lost: the session file keeps every committed "
             f"label and the score cache keeps every finished chunk."]
    if name == "SIGKILL":  # no crash of the backend's code: a CPU build is not the cause
        lines.append(_KILLED)
    elif backend == "llamacpp":
        lines.append(
            "What to try: the transformers backend (spec 'hf:" + str(model) + "', needs the "
            "'hf' extra); or ACTIVETEST_LLAMA_EXTRA_BUFTS=off (llama.cpp's AMX/repacked "
            "weight layouts off); or rebuild llama-cpp-python for a generic x86-64 CPU: "
            "CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON' "
            "pip install --force-reinstall --no-cache-dir llama-cpp-python. See the README, "
            "'Troubleshooting'.")
    elif backend == "hf":
        lines.append("What to try: the llama.cpp backend for GGUF models, or a torch build "
                     "made for this CPU.")
    return "\n".join(lines)


def _read_notes(path: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as f:
        for line in f:
            with contextlib.suppress(ValueError):
                obj = json.loads(line)
                if isinstance(obj, dict):
                    events.append(obj)
    return events


def run_supervised(argv: Sequence[str], *, module: str = "activetest") -> int:
    """Run ``python -m <module> <argv>`` as a child; return the exit code to use.

    Ctrl-C reaches the child from the terminal (same process group); the parent
    passes a SIGINT on too (one sent to the parent alone, ``kill -INT PID``, stops
    the child as well; the child acts on the first) and returns the child's code
    (130). SIGTERM is passed on (the child
    removes its temporary files and exits ``128 + SIGTERM``). A child killed by any
    other signal gives :func:`crash_message` on stderr and 2. If the parent itself
    is killed, the child terminates too (:func:`watch_parent`).
    """
    fd, notes = tempfile.mkstemp(prefix="activetest-crash-notes-", suffix=".jsonl")
    os.close(fd)
    env = {**os.environ, SUPERVISED_ENV: "1", NOTES_ENV: notes, PARENT_PID_ENV: str(os.getpid())}
    watch_r, watch_w = os.pipe()  # only the parent holds the write end (not inherited)
    env[PARENT_FD_ENV] = str(watch_r)
    try:
        proc = subprocess.Popen([sys.executable, "-m", module, *argv], env=env,
                                pass_fds=(watch_r,))
    except BaseException:
        os.close(watch_w)
        raise
    finally:
        os.close(watch_r)
    try:
        return _wait(proc, notes)
    finally:
        os.close(watch_w)


def _wait(proc: subprocess.Popen[bytes], notes: str) -> int:
    """Wait for the supervised child; its exit code, or 2 after explaining a crash."""
    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    old_int = signal.signal(signal.SIGINT, forward)
    old_term = signal.signal(signal.SIGTERM, forward)
    try:
        rc = proc.wait()
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    try:
        if rc >= 0:
            return rc
        signum = -rc
        events = _read_notes(notes)
        for path in {str(f) for e in events for f in e.get("tmp_files", ())}:
            with contextlib.suppress(OSError):  # a session file it was creating
                os.unlink(path)
        if signum == signal.SIGINT:
            print("interrupted; everything answered so far is saved", file=sys.stderr)
            return 130
        if signum == signal.SIGTERM:
            return 128 + signum
        folders = {str(f) for e in events for f in e.get("tmp_dirs", ())}
        root = default_cache_dir()
        folders |= {str(root / "models"), str(root / "scores"), str(root / "hf")}
        sweep_tmp(folders, pid=proc.pid, depth=1)
        print(f"error: {crash_message(signum, events)}", file=sys.stderr)
        return 2
    finally:
        with contextlib.suppress(OSError):
            os.unlink(notes)
