"""Start and stop a real llama-cpp-python OpenAI-compatible server for tests.

``llama_server(model_path)`` is a context manager: it picks a free port on
127.0.0.1, starts ``python -m activetest.models.llama_server`` (llama_cpp.server
with activetest's CPU workaround) as a child process in its own process group,
waits until ``GET /v1/models`` answers (or the process dies, or a deadline
passes), yields the base URL (``http://127.0.0.1:PORT/v1``), and on exit
terminates the whole process group (SIGTERM, then SIGKILL). An ``atexit`` hook
kills it too, so no server outlives the test session even if teardown is skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import numpy as np

__all__ = ["FAULT_MODES", "QUOTED_SECRET", "FaultServer", "ServerStartError", "WordTokenizer",
           "fault_server",
           "free_port", "llama_server", "llama_server_process", "proxy_wanting_credentials",
           "reference_completions_server", "serve_process"]


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
                 startup_timeout: float = 120.0, extra_args: tuple[str, ...] = (),
                 port: int | None = None) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on ``model_path``; yield its ``/v1`` base URL.

    ``port``: the port to listen on (default: a free one).

    Raises:
        RuntimeError: the server exited or did not answer within ``startup_timeout``
            (the end of its log is included).
    """
    with llama_server_process(model_path, n_ctx=n_ctx, n_threads=n_threads,
                              startup_timeout=startup_timeout, extra_args=extra_args,
                              port=port) as (_, base):
        yield base


@contextlib.contextmanager
def llama_server_process(model_path: str | Path, *, n_ctx: int = 2048, n_threads: int = 2,
                         startup_timeout: float = 120.0, extra_args: tuple[str, ...] = (),
                         port: int | None = None
                         ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """:func:`llama_server`, yielding its process too (its own process group, which a
    test may kill as a crash would): ``(process, base URL)``."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "activetest.models.llama_server", "--model", str(model_path),
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
           "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads),
           "--seed", "0", *extra_args]
    base = f"http://127.0.0.1:{port}/v1"
    with serve_process(cmd, f"{base}/models", "llama_cpp.server", startup_timeout) as (proc, _):
        yield proc, base


class ServerStartError(RuntimeError):
    """A server process exited, or did not answer, before it was ready."""


@contextlib.contextmanager
def serve_process(cmd: list[str], ready_url: str, what: str, startup_timeout: float,
                  env: dict[str, str] | None = None
                  ) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """Run ``cmd`` in its own process group until ``GET ready_url`` answers 200; yield
    the process and its log file; on exit kill the group (an ``atexit`` hook too).

    Raises:
        ServerStartError: the process exited or did not answer within
            ``startup_timeout`` (``what``, the command and the end of its log included).
    """
    log = tempfile.NamedTemporaryFile(prefix="server_", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    killer = functools.partial(_kill_group, proc)
    atexit.register(killer)
    try:
        deadline = time.monotonic() + startup_timeout
        while not _ready(ready_url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = Path(log.name).read_text(errors="replace")[-3000:]
                why = (f"exited with {proc.returncode}" if proc.poll() is not None
                       else f"did not answer within {startup_timeout:.0f} s")
                raise ServerStartError(f"{what} {why}; command {cmd}; log tail:\n{tail}")
            time.sleep(0.25)
        yield proc, Path(log.name)
    finally:
        _kill_group(proc)
        atexit.unregister(killer)
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


class _ReferenceHandler(http.server.BaseHTTPRequestHandler):
    """``POST /v1/completions`` with vLLM's semantics, computed by llama_cpp in process."""

    llm: Any = None
    lock = threading.Lock()
    closed = False  # set, under the lock, once the model is closed
    max_logprobs = 20

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.path.split("?")[0].endswith("/completions"):  # e.g. /tokenize
            self._send(404, {"detail": "Not Found"})
            return
        prompt, k, echo = str(req["prompt"]), req.get("logprobs"), bool(req.get("echo"))
        if k is not None and k > self.max_logprobs:  # vLLM's --max-logprobs check
            self._send(400, {"error": {"message": f"Requested sample logprobs of {k}, which "
                                                  f"is greater than max allowed: "
                                                  f"{self.max_logprobs}"}})
            return
        llm = type(self).llm
        with type(self).lock:
            if type(self).closed:  # a late request on a server being torn down
                raise ConnectionAbortedError("the model is closed")
            ids = llm.tokenize(prompt.encode(), add_bos=True)
            llm.reset()
            llm.eval(ids)
            rows = np.asarray(llm.scores[:len(ids)], dtype=np.float64)
        logp = rows - np.logaddexp.reduce(rows, axis=1, keepdims=True)
        nxt = logp[-1]
        gen = int(np.argmax(nxt))

        def piece(t: int) -> str:
            with type(self).lock:  # the model may be closed meanwhile (a late request)
                if type(self).closed:
                    return ""
                return llm.detokenize([t]).decode("utf-8", errors="ignore")

        def top(row: np.ndarray) -> dict[str, float]:
            best = np.argsort(-row)[: max(int(k or 0), 1)]
            return {piece(int(t)): float(row[t]) for t in best}

        if echo:
            shown = [t for t in ids if piece(t)]  # BOS and other empty pieces are not shown
            tokens = [piece(t) for t in shown] + [piece(gen)]
            offsets, pos = [], 0
            for t in tokens:
                offsets.append(pos)
                pos += len(t)
            # correct semantics: prompt token i is scored by the distribution BEFORE it
            first = ids.index(shown[0])
            values: list[float | None] = [None]
            for i in range(first + 1, len(ids)):
                values.append(float(logp[i - 1][ids[i]]))
            values.append(float(nxt[gen]))
            tops = [None] + [top(logp[i - 1]) for i in range(first + 1, len(ids))] + [top(nxt)]
            text = prompt + piece(gen)
        else:
            tokens, offsets, values = [piece(gen)], [len(prompt)], [float(nxt[gen])]
            tops, text = [top(nxt)], piece(gen)
        self._send(200, {"object": "text_completion", "model": "reference", "choices": [
            {"index": 0, "text": text, "finish_reason": "length",
             "logprobs": {"tokens": tokens, "text_offset": offsets, "token_logprobs": values,
                          "top_logprobs": tops}}]})

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_in_thread(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve ``handler`` on a free local port in a thread (request threads daemonic);
    yields the port; shut down and closed on exit."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextlib.contextmanager
def reference_completions_server(model_path: str | Path, *, max_logprobs: int = 20
                                 ) -> Iterator[str]:
    """A minimal completions server with vLLM's semantics, for paths llama_cpp.server lacks.

    It answers ``POST /v1/completions`` like vLLM does: correct ``echo`` prompt
    log-probs (token i scored by the distribution before it; the first is null)
    and HTTP 400 for ``logprobs`` above ``max_logprobs``. The numbers come from a
    real ``llama_cpp.Llama`` (``logits_all=True``) on ``model_path``, evaluated
    afresh for every request. Yields the ``/v1`` base URL.
    """
    from activetest.models.llama_cpu import load_llama

    handler = type("Handler", (_ReferenceHandler,), {
        "llm": load_llama(model_path=str(model_path), n_ctx=512, n_threads=1,
                          n_threads_batch=1, logits_all=True, verbose=False),
        "lock": threading.Lock(), "max_logprobs": max_logprobs})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        # a handler thread may still be in a request (the server does not join them):
        # never free the model under a decode (llama.cpp aborts the whole process)
        with handler.lock:
            handler.closed = True
            handler.llm.close()


#: What :func:`fault_server` can do (see there).
FAULT_MODES = ("ok", "drip", "drip-all", "positive", "reflect-200", "reflect-302",
               "reflect-401", "reflect-500", "gone-at-echo", "hang-at-echo", "refuse-at-echo",
               "garble-at-echo", "fail-at-echo", "deny-at-echo", "throttle-wide",
               "garble-wide", "refuse-wide", "deny-wide", "refuse-topk", "fail-topk",
               "garble-topk", "refuse-ids", "garble-wide-once", "odd-json", "two-faults",
               "garble-once", "fail-all", "spa")

#: A credential a careless gateway or server quotes in its error pages (said masked).
QUOTED_SECRET = "gw-5e1c9a7d3b2f"
#: The HTML page ``garble-topk`` answers a top-k request with (HTTP 200).
_GATEWAY_PAGE = (f"<html><body>upstream timed out (retry via http://ops:{QUOTED_SECRET}"
                 f"@gateway.internal/retry)</body></html>").encode()
#: What ``refuse-ids`` answers a label-id request with: ``{path: (status, body)}``.
_REFUSED_IDS = {
    "/completions": (400, json.dumps({"error": {
        "message": "unknown field: logprob_token_ids (strict schema; see "
                   f"http://admin:{QUOTED_SECRET}@docs.internal/api)",
        "type": "BadRequestError"}}).encode()),
    "/generate": (404, b"<html><body>404: no route /generate on this gateway</body></html>"),
}

#: The modes whose echo requests of anything but a label word fail: ``{mode: (status,
#: body)}``; their top-k is :data:`_CHECKED_TOP` (see :func:`fault_server`).
_FAILED_ECHO = {
    "refuse-at-echo": (400, json.dumps({"error": {
        "message": "echo=True is not supported with logprobs for this prompt",
        "type": "BadRequestError"}}).encode()),
    "garble-at-echo": (200, b"<html><body>502 Bad Gateway (nginx)</body></html>"),
    "fail-at-echo": (503, json.dumps({"error": {
        "message": "the server is overloaded, try again later"}}).encode()),
    "deny-at-echo": (403, json.dumps({"error": {
        "message": "this key may not use echo"}}).encode()),
}
#: The modes whose requests for more than 20 log-probs (the wider top-k) get one answer
#: (besides ``throttle-wide`` and ``garble-wide``): ``{mode: (status, body)}``.
_WIDE = {
    "refuse-wide": (400, json.dumps({"error": {
        "message": "Requested logprobs of 200, which is greater than max allowed: 20",
        "type": "BadRequestError"}}).encode()),
    "deny-wide": (403, json.dumps({"error": {
        "message": "this key may ask for at most 20 logprobs"}}).encode()),
}
#: The top-k of the modes of :data:`_FAILED_ECHO`: no label word is in it, so a scorer
#: needs the echo check, whose one candidate token is ``" neutral"``.
_CHECKED_TOP = {" neutral": -0.3}


class _QuietHandler(http.server.BaseHTTPRequestHandler):
    """A handler whose GET and POST both go to ``_handle`` and that logs nothing."""

    def _handle(self) -> None:
        raise NotImplementedError

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def log_message(self, *args: object) -> None:
        pass


class _FaultHandler(_QuietHandler):
    """A completions server for a two-class task whose words are " negative"/" positive"."""

    mode: ClassVar[str] = "ok"
    interval: ClassVar[float] = 0.2
    garbled: ClassVar[bool] = False  # garble-wide-once, garble-once: its one page was sent
    released: ClassVar[threading.Event]  # two-faults: the SLOW-FAULT answer was read
    seen: ClassVar[list[str]] = []
    crowd: ClassVar[int] = 1  # fail-all: the first requests, answered together
    together: ClassVar[threading.Event]  # fail-all: the first crowd requests arrived

    def _reflected(self) -> str:
        """What the request carried that may be secret: its path and query, its auth."""
        return f"path={self.path} authorization={self.headers.get('Authorization', '')}"

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        note = f"logprobs are off here (see http://ops:{QUOTED_SECRET}@wiki.internal)"
        if self.path.split("?")[0].endswith("/models"):
            if self.mode == "odd-json":  # not the OpenAI list's shape
                return {"models": ["fake-model"], "note": note}
            return {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
        prompt = str(body.get("prompt", ""))
        if self.mode == "odd-json":
            return {"note": note, "choices": [{"text": " positive", "logprobs": (
                None if body.get("echo") else {"tokens": [" positive"]})}]}
        if self.mode == "refuse-ids" and self.path.split("?")[0].endswith("/tokenize"):
            # a word-level tokenizer: each piece's id is its CRC-32
            return {"tokens": [zlib.crc32(p.encode()) for p in re.findall(r"\s*\S+|\s+",
                                                                          prompt)]}
        if body.get("echo"):  # the label word comes back as one token after the prompt
            for word in (" negative", " positive"):
                if prompt.endswith(word):
                    head = prompt[:-len(word)]
                    return {"choices": [{"text": "", "logprobs": {
                        "tokens": [head, word], "token_logprobs": [None, -0.7],
                        "text_offset": [0, len(head)]}}]}
        good = {" negative": -0.9, " positive": -0.5}
        top = {" negative": 2.5, " positive": -0.2} if self.mode == "positive" else good
        if self.mode in _FAILED_ECHO or self.mode in _WIDE or self.mode in (
                "throttle-wide", "garble-wide"):
            top = _CHECKED_TOP
        if self.mode == "garble-wide-once":
            top = (_CHECKED_TOP if int(body.get("logprobs") or 0) <= 20
                   else {**_CHECKED_TOP, " negative": -1.9, " positive": -2.3})
        word = max(top, key=lambda w: top[w])
        return {"choices": [{"text": word, "finish_reason": "length", "logprobs": {
            "tokens": [word], "token_logprobs": [top[word]], "top_logprobs": [top]}}]}

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        type(self).seen.append(self._reflected())
        arrived = len(type(self).seen)
        mode = type(self).mode
        request = json.loads(raw or b"{}")
        echo = request.get("echo") is True
        if mode == "spa" and not self.path.split("?")[0].endswith(("/completions",
                                                                    "/models")):
            self._send_raw(200, [("Content-Type", "text/html"), ("Connection", "close")],
                           b"<!doctype html><html><body><div id=app></div></body></html>")
            return
        if mode in ("gone-at-echo", "hang-at-echo") and echo:
            if mode == "gone-at-echo":  # the server stops: no answer, no more connections
                self.server.shutdown()
                self.server.server_close()
            else:  # no answer within any short deadline, then the connection cut
                time.sleep(type(self).interval)
            self.close_connection = True
            return
        if (mode in _FAILED_ECHO and echo  # a label word's echo is answered
                and not str(request.get("prompt", "")).endswith((" negative", " positive"))):
            status, data = _FAILED_ECHO[mode]
            self._send_raw(status, [("Content-Type", "application/json"),
                                    ("Connection", "close")], data)
            return
        if mode == "throttle-wide" and int(request.get("logprobs") or 0) > 20:
            self._send_raw(429, [("Content-Type", "application/json"), ("Connection", "close"),
                                 ("Retry-After", "0")],
                           json.dumps({"error": {"message": "rate limit reached"}}).encode())
            return
        if mode == "garble-wide" and int(request.get("logprobs") or 0) > 20:
            self._send_raw(200, [("Content-Type", "text/html"), ("Connection", "close")],
                           b"<html><body>gateway: the upstream answered HTTP 413 Request "
                           b"Entity Too Large; please retry</body></html>")
            return
        if (mode == "garble-wide-once" and int(request.get("logprobs") or 0) > 20
                and not type(self).garbled):
            type(self).garbled = True
            self._send_raw(200, [("Content-Type", "text/html"), ("Connection", "close")],
                           b"<html><body>502 Bad Gateway: the upstream did not answer in "
                           b"time</body></html>")
            return
        if (mode == "garble-once" and self.path.split("?")[0].endswith("/completions")
                and not type(self).garbled):  # a body cut short, as a whole HTTP answer
            type(self).garbled = True
            self._send_raw(200, [("Content-Type", "application/json"), ("Connection", "close")],
                           json.dumps(self._answer(request)).encode()[:12])
            return
        if (mode == "garble-topk" and not echo and request.get("logprobs") is not None
                and self.path.split("?")[0].endswith("/completions")):
            self._send_raw(200, [("Content-Type", "text/html"), ("Connection", "close")],
                           _GATEWAY_PAGE)
            return
        if mode == "fail-all":  # the first crowd requests: once all of them arrived
            if arrived >= type(self).crowd:
                type(self).together.set()
            type(self).together.wait(60)
            self._send_raw(503, [("Content-Type", "application/json"),
                                 ("Connection", "close"), ("Retry-After", "0")],
                           json.dumps({"error": {"message": "the server is overloaded, "
                                                            "try again later"}}).encode())
            return
        if mode == "two-faults" and "SLOW-FAULT" in str(request.get("prompt", "")):
            self._slow_fault(request)
            return
        if mode == "two-faults" and "FAST-FAULT" in str(request.get("prompt", "")):
            type(self).released.wait(30)  # once the SLOW-FAULT answer is read whole
            self._send_raw(400, [("Content-Type", "application/json"),
                                 ("Connection", "close")],
                           json.dumps({"error": {"message": "FAST-FAULT: this prompt is "
                                                            "too long for the model",
                                                 "type": "BadRequestError"}}).encode())
            return
        route = "/" + self.path.split("?")[0].rpartition("/")[2]
        if mode == "refuse-ids" and ("logprob_token_ids" in request or route == "/generate"):
            status, data = _REFUSED_IDS[route]
            self._send_raw(status, [("Content-Type", "application/json"),
                                    ("Connection", "close")], data)
            return
        if mode in _WIDE and int(request.get("logprobs") or 0) > 20:
            status, data = _WIDE[mode]
            self._send_raw(status, [("Content-Type", "application/json"),
                                    ("Connection", "close")], data)
            return
        if (mode == "fail-topk" and not echo and request.get("logprobs") is not None
                and self.path.split("?")[0].endswith("/completions")):
            self._send_raw(503, [("Content-Type", "application/json"), ("Connection", "close"),
                                 ("Retry-After", "0")],
                           json.dumps({"error": {"message": "the server is overloaded, "
                                                            "try again later"}}).encode())
            return
        if (mode == "refuse-topk" and not echo and request.get("logprobs") is not None
                and self.path.split("?")[0].endswith("/completions")):
            self._send_raw(400, [("Content-Type", "application/json"), ("Connection", "close")],
                           json.dumps({"error": {"message": "logprobs are not supported "
                                                            "without echo by this model",
                                                 "type": "BadRequestError"}}).encode())
            return
        # this server closes every connection after one answer, and says so: without
        # the header a client may send its next request on the closed connection
        status, headers = 200, [("Content-Type", "application/json"), ("Connection", "close"),
                                ("X-Echo", self._reflected().replace("\n", " "))]
        if mode.startswith("reflect-"):
            status = int(mode.removeprefix("reflect-"))
            text = (f"<html>you sent {self._reflected()} and {self.headers.as_string()!r}"
                    f"</html>")
            data = text.encode() if status == 200 else json.dumps({"error": {
                "message": f"refused: {self._reflected()}",
                "headers": dict(self.headers)}}).encode()
            if status == 302:
                headers.append(("Location", f"http://elsewhere.invalid{self.path}"
                                            f"&auth={self.headers.get('Authorization', '')}"))
        else:
            data = json.dumps(self._answer(request)).encode()
        self._send_raw(status, headers, data)

    def _slow_fault(self, request: dict[str, Any]) -> None:
        """``two-faults``' SLOW-FAULT answer: 200 with a top-k of logits (above 0), padded
        to be slow to read (9 MB of JSON); once the client has it whole (it closed the
        connection), the FAST-FAULT request is let through."""
        top = {" negative": 2.5, " positive": -0.2}
        data = json.dumps({"choices": [{"text": " negative", "finish_reason": "length",
                                        "logprobs": {"tokens": [" negative"],
                                                     "token_logprobs": [2.5],
                                                     "top_logprobs": [top]}}],
                           "pad": [0] * 3_000_000}).encode()
        self._send_raw(200, [("Content-Type", "application/json"),
                             ("Connection", "close")], data)
        self.wfile.flush()
        self.connection.settimeout(30)
        with contextlib.suppress(OSError):
            while self.connection.recv(1 << 16):
                pass
        type(self).released.set()

    def _send_raw(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        """Answer ``status`` with ``headers`` and ``data``, as the mode sends (dripped)."""
        mode = type(self).mode
        head = f"HTTP/1.1 {status} X\r\n".encode()
        for name, value in [*headers, ("Content-Length", str(len(data)))]:
            head += f"{name}: {value}\r\n".encode("latin-1", errors="replace")
        head += b"\r\n"
        try:
            if mode == "drip-all":
                self._drip(head + data)
            elif mode == "drip":
                self.wfile.write(head)
                self.wfile.flush()
                self._drip(data)
            else:
                self.wfile.write(head + data)
        except OSError:  # the client gave up: what this server is for
            pass
        self.close_connection = True

    def _drip(self, data: bytes) -> None:
        for i in range(len(data)):
            self.wfile.write(data[i:i + 1])
            self.wfile.flush()
            time.sleep(type(self).interval)


class WordTokenizer:
    """A word-level tokenizer (each piece's CRC-32), enough for label first tokens: a
    scorer's ``tokenizer=`` for :func:`fault_server`, whose ``refuse-ids`` ids agree."""

    def __init__(self) -> None:
        self.pieces: dict[int, str] = {}

    def tokenize(self, text: str) -> list[int]:
        """Each piece's CRC-32 (a piece: a word with the blanks before it)."""
        ids = []
        for piece in re.findall(r"\s*\S+|\s+", text):
            self.pieces[zlib.crc32(piece.encode())] = piece
            ids.append(zlib.crc32(piece.encode()))
        return ids

    def detokenize(self, ids: Sequence[int]) -> str:
        """The pieces of ``ids`` (each tokenized before), joined."""
        return "".join(self.pieces[i] for i in ids)


class FaultServer(NamedTuple):
    """A running :func:`fault_server`: its ``/v1`` URL and what each request carried."""

    url: str
    seen: list[str]


@contextlib.contextmanager
def fault_server(mode: str, *, interval: float = 0.2, crowd: int = 1
                 ) -> Iterator[FaultServer]:
    """A real HTTP server on 127.0.0.1 that misbehaves as ``mode`` says (``interval``:
    the drip's and the hang's seconds; ``crowd``: ``fail-all``'s first requests).

    Yields a :class:`FaultServer`: the ``/v1`` base URL and, per request, its path,
    query and ``Authorization`` header (to check that credentials were sent).

    It serves a two-class task whose label words are ``" negative"`` and ``" positive"``
    (``GET /v1/models`` lists one model, ``fake-model``). Every answer carries the
    request's path, query and ``Authorization`` header in an ``X-Echo`` header (as a
    careless proxy might). Modes:

    - ``ok``: correct completions answers (echo and top-k log-probs);
    - ``drip``: the status line and headers at once, then the body one byte every
      ``interval`` seconds;
    - ``drip-all``: the whole answer, status line and headers included, a byte at a time;
    - ``positive``: top-k log-probs above 0 (logits, not log-probabilities);
    - ``gone-at-echo``: as ``ok`` until the first request with ``echo: true``; then
      the server stops (that connection closed without an answer, later ones refused);
    - ``hang-at-echo``: as ``ok``, but a request with ``echo: true`` gets no answer:
      its connection is closed after ``interval`` seconds;
    - ``refuse-at-echo``, ``garble-at-echo``, ``fail-at-echo``, ``deny-at-echo``: the top-k lists
      ``" neutral"`` (-0.3) only, no label word, so a scorer needs its echo check
      (which echoes ``" neutral"``); an echo request of a label word
      (the first-token texts) is answered as ``ok`` does, any other gets HTTP 400 with a
      JSON error body (``refuse``), 200 with an HTML page (``garble``: a proxy's), or
      HTTP 503 with a JSON error body, every time (``fail``: an overloaded server), or
      HTTP 403 with a JSON error body (``deny``: a key not allowed to echo);
    - ``throttle-wide``: the top-k of ``refuse-at-echo``; a request for more than 20
      log-probs gets HTTP 429 (``Retry-After: 0``), every time (a rate limit);
    - ``garble-wide``: the top-k of ``refuse-at-echo``; a request for more than 20
      log-probs gets 200 with an HTML page that says "HTTP 413" (a gateway's), every time;
    - ``refuse-wide``, ``deny-wide``: the top-k of ``refuse-at-echo``; a request for more
      than 20 log-probs gets HTTP 400 (vLLM's ``--max-logprobs`` refusal) or HTTP 403 (a
      key limited to 20), with a JSON error body; the echo of anything but a label word
      comes back as one token, which fails the echo check;
    - ``fail-topk``: every completions request for log-probs without ``echo: true`` gets
      HTTP 503 (``Retry-After: 0``), every time; echo requests are answered as ``ok``;
    - ``refuse-topk``: every completions request for log-probs without ``echo: true``
      (a top-k request) gets HTTP 400 with a JSON error body; echo requests are answered
      as ``ok`` (a server that gives prompt log-probs only);
    - ``garble-topk``: every completions request for log-probs without ``echo: true``
      gets 200 with an HTML page (a gateway's) quoting a URL with a credential
      (:data:`QUOTED_SECRET`); echo requests are answered as ``ok``;
    - ``refuse-ids``: ``POST /tokenize`` answers word-level token ids (each piece's
      CRC-32); a completions request with ``logprob_token_ids`` gets HTTP 400 with a JSON
      error quoting a URL with :data:`QUOTED_SECRET` (a strict schema), and ``/generate``
      HTTP 404 with an HTML page; the rest as ``ok``;
    - ``garble-wide-once``: the top-k of ``refuse-at-echo``; the FIRST request for more
      than 20 log-probs gets 200 with an HTML page (a gateway's "502 Bad Gateway", once),
      later ones a top-k holding both label words (" negative" -1.9, " positive" -2.3);
    - ``garble-once``: as ``ok``, but the FIRST completions request gets 200 with its
      JSON answer cut short after 12 bytes (a whole HTTP answer whose body is not JSON);
    - ``fail-all``: every request gets HTTP 503 (``Retry-After: 0``), the first
      ``crowd`` of them only once all of them have arrived (within 60 s): a server that
      fails a crowd of requests at once;
    - ``spa``: as ``ok`` for ``/completions`` and ``/models``; any other path (a
      tokenizer, ``/generate``) gets 200 with an HTML page (a web app's catch-all page,
      as some gateways serve for a route they lack);
    - ``odd-json``: JSON answers of the wrong shape, each with a ``note`` quoting a URL
      with :data:`QUOTED_SECRET`: ``GET /v1/models`` ``{"models": [...]}`` (no
      ``data``), an echo request ``"logprobs": null``, any other completions request
      log-probs without ``top_logprobs``;
    - ``two-faults``: as ``ok``, but a completions request whose prompt holds
      ``SLOW-FAULT`` gets 200 with a top-k of logits (" negative" 2.5), padded with 9 MB
      of JSON (slow to read), and one whose prompt holds ``FAST-FAULT`` gets HTTP 400
      ("FAST-FAULT: this prompt is too long ...") at once, but only after the client has
      read the SLOW-FAULT answer whole: the first fails later in time, for a reason of
      its own that no cancellation stops (it is read already);
    - ``reflect-STATUS`` (200, 302, 401, 500): that status, with the request's path,
      query, headers and ``Authorization`` in the body (non-JSON for 200), and for 302
      in the ``Location`` header too.
    """
    if mode not in FAULT_MODES:
        raise ValueError(f"unknown fault mode {mode!r}; expected one of {FAULT_MODES}")
    handler = type("Handler", (_FaultHandler,), {"mode": mode, "interval": interval,
                                                 "seen": [], "garbled": False,
                                                 "released": threading.Event(),
                                                 "crowd": crowd,
                                                 "together": threading.Event()})
    with serve_in_thread(handler) as port:
        yield FaultServer(f"http://127.0.0.1:{port}/v1", handler.seen)


class _ProxyAuthHandler(_QuietHandler):
    """An HTTP proxy that wants credentials: every request gets 407 and a challenge."""

    seen: ClassVar[list[str]] = []

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        type(self).seen.append(self.path)  # a proxy is sent the whole URL
        data = b"<html><body>407 Proxy Authentication Required (squid)</body></html>"
        self.send_response(407)
        self.send_header("Proxy-Authenticate", 'Basic realm="corporate proxy"')
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


@contextlib.contextmanager
def proxy_wanting_credentials() -> Iterator[FaultServer]:
    """A real HTTP proxy on 127.0.0.1 that answers every request 407 (Proxy
    Authentication Required) with a ``Proxy-Authenticate`` challenge, as a corporate
    proxy does for a client without its credentials. Yields a :class:`FaultServer`: the
    proxy's URL (``http://127.0.0.1:PORT``) and the URLs it was asked for."""
    handler = type("Handler", (_ProxyAuthHandler,), {"seen": []})
    with serve_in_thread(handler) as port:
        yield FaultServer(f"http://127.0.0.1:{port}", handler.seen)
