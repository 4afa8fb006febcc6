"""Start and stop a real llama-cpp-python OpenAI-compatible server for tests.

``llama_server(model_path)`` is a context manager: it picks a free port on
127.0.0.1, starts ``python -m llama_cpp.server`` as a child process in its own
process group, waits until ``GET /v1/models`` answers (or the process dies, or a
deadline passes), yields the base URL (``http://127.0.0.1:PORT/v1``), and on exit
terminates the whole process group (SIGTERM, then SIGKILL). An ``atexit`` hook
kills it too, so no server outlives the test session even if teardown is skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["free_port", "llama_server"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def llama_server(model_path: str | Path, *, n_ctx: int = 2048, n_threads: int = 2,
                 startup_timeout: float = 120.0, extra_args: tuple[str, ...] = ()
                 ) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on ``model_path``; yield its ``/v1`` base URL.

    Raises:
        RuntimeError: the server exited or did not answer within ``startup_timeout``
            (the end of its log is included).
    """
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="llama_server_", suffix=".log", delete=False)  # noqa: SIM115
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path),
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
           "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads),
           "--seed", "0", *extra_args]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    killer = functools.partial(_kill_group, proc)
    atexit.register(killer)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while not _ready(f"{base}/models"):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = Path(log.name).read_text(errors="replace")[-3000:]
                why = (f"exited with {proc.returncode}" if proc.poll() is not None
                       else f"did not answer within {startup_timeout:.0f} s")
                raise RuntimeError(f"llama_cpp.server {why}; command {cmd}; log tail:\n{tail}")
            time.sleep(0.25)
        yield base
    finally:
        _kill_group(proc)
        atexit.unregister(killer)
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)
