"""Start and stop a real vLLM OpenAI-compatible server (the CPU build) for tests.

vLLM lives in a virtual environment of its own (``scripts/install_vllm.sh`` makes
``.venv-vllm``; ``ACTIVETEST_VLLM_PYTHON`` names another interpreter): the tests
reach it over HTTP only, as a user's scorer would. :func:`vllm_python` finds that
interpreter (``None`` when there is none). :func:`vllm_server` runs
``python -m vllm.entrypoints.openai.api_server`` on a local Hugging Face model folder
in its own process group (:func:`server.serve_process`), waits for ``GET /health``,
yields the running server and kills the whole group on exit.

A server that exits before it answers raises :class:`VLLMStartError` with the end of
its log: on a CPU whose instructions this vLLM build cannot run, the tests skip with
that log (a platform limit, not a fault of ours); every check after a successful
start can fail.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from server import ServerStartError, free_port, serve_process  # tests/models (on sys.path)

__all__ = ["VLLMServer", "VLLMStartError", "prefix_cache_counts", "vllm_python", "vllm_server"]

ROOT = Path(__file__).resolve().parents[2]


class VLLMStartError(RuntimeError):
    """The vLLM server exited, or did not answer, before it was ready."""


class VLLMServer:
    """A running server: its ``/v1`` base URL, whether it still runs, its log's end."""

    def __init__(self, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.url = url
        self._proc = proc
        self._log = log

    def alive(self) -> bool:
        """True while the server process runs."""
        return self._proc.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        """The last ``chars`` characters of the server's output."""
        return self._log.read_text(errors="replace")[-chars:]


def vllm_python() -> Path | None:
    """The interpreter that has vLLM: ``$ACTIVETEST_VLLM_PYTHON`` or ``.venv-vllm``."""
    named = os.environ.get("ACTIVETEST_VLLM_PYTHON")
    path = Path(named) if named else ROOT / ".venv-vllm" / "bin" / "python"
    return path if path.is_file() else None


@contextlib.contextmanager
def vllm_server(model_dir: str | Path, *, name: str = "m", dtype: str = "float32",
                max_model_len: int = 2048, startup_timeout: float = 600.0
                ) -> Iterator[VLLMServer]:
    """Serve ``model_dir`` with vLLM on 127.0.0.1; yield it (``.url``:
    ``http://127.0.0.1:PORT/v1``).

    ``dtype="float32"`` so that its numbers can be compared with an in-process
    transformers model on the same weights; ``--enforce-eager`` skips graph
    compilation (minutes on two cores); 1 GiB of KV cache; OpenMP threads not
    pinned to cores (a shared CI machine).

    Raises:
        VLLMStartError: no vLLM interpreter, or the server exited or did not answer
            within ``startup_timeout`` (the end of its log is included).
    """
    python = vllm_python()
    if python is None:
        raise VLLMStartError("no vLLM interpreter: run scripts/install_vllm.sh "
                             "or set ACTIVETEST_VLLM_PYTHON")
    port = free_port()
    cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
           "--served-model-name", name, "--host", "127.0.0.1", "--port", str(port),
           "--dtype", dtype, "--max-model-len", str(max_model_len), "--enforce-eager",
           "--seed", "0"]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind",
           "VLLM_NO_USAGE_STATS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)  # vLLM's own environment, not the project's
    root = f"http://127.0.0.1:{port}"
    try:
        with serve_process(cmd, f"{root}/health", "vLLM server", startup_timeout,
                           env) as (proc, log):
            yield VLLMServer(f"{root}/v1", proc, log)
    except ServerStartError as exc:
        raise VLLMStartError(str(exc)) from exc


def prefix_cache_counts(base_url: str) -> tuple[float, float]:
    """vLLM's prefix-cache counters from ``/metrics``: (tokens hit, tokens queried)."""
    root = base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=30) as r:
        text = r.read().decode()

    def counter(name: str) -> float:
        m = re.search(rf"^vllm:{name}_total\{{[^}}]*\}} (\S+)$", text, re.M)
        if m is None:
            raise AssertionError(f"vLLM's /metrics has no vllm:{name}_total")
        return float(m.group(1))

    return counter("prefix_cache_hits"), counter("prefix_cache_queries")
