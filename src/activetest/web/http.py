"""The labelling page's HTTP transport (``http.server``, standard library).

Everything lives under ``/s/<token>/``: the page (``index.html``, ``app.js``,
``app.css``) and the API (``api/...``, :mod:`activetest.web.api`); any other path
answers 404, so a page on another site cannot reach the API. Replies carry a strict
Content-Security-Policy and ``Cache-Control: no-store``; API replies carry
``Server-Timing: app;dur=MS`` (the call's time in the server, for the page's timings).

Every request's body is read whole (Content-Length, at most 64 KiB) before the reply, so
that a kept-alive connection stays in step; a refused request, a body that cannot be
read (chunked: 411, a bad or too large Content-Length) close the connection after the
reply, and what the client still sends is read and dropped for a moment first, so that
the reply is not lost to a reset.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import json
import re
import select
import socket
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from activetest.web.api import OtherSessionError, ServerStoppingError, SessionReplacedError

__all__ = ["MAX_BODY", "PROBE", "ClientWatch", "client_gone", "listen", "make_handler",
           "static_file"]

_STATIC = {"": ("index.html", "text/html; charset=utf-8"),
           "index.html": ("index.html", "text/html; charset=utf-8"),
           "app.js": ("app.js", "text/javascript; charset=utf-8"),
           "app.css": ("app.css", "text/css; charset=utf-8")}
MAX_BODY = 1 << 16
_DIGITS = re.compile(r"[0-9]+")
#: No script but our own file, no style but our own, nothing loaded from elsewhere.
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def static_file(name: str) -> bytes:
    """A file of the page, from the installed package."""
    return resources.files("activetest.web").joinpath("static", name).read_bytes()


class _HTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a listen queue for bursts: with the default's 5,
    a burst of answers (several people, retries) got connections reset."""

    daemon_threads = True
    request_queue_size = 128


class _HTTPServer6(_HTTPServer):
    """:class:`_HTTPServer` on an IPv6 address (``::`` takes IPv4 too, where the system
    lets one socket take both)."""

    address_family = socket.AF_INET6


def listen(host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> _HTTPServer:
    """The server listening on ``host:port`` (an IPv6 address: on IPv6; QA: ``--host ::``
    was refused, "Address family for hostname not supported").

    Raises:
        ValueError: the port is taken (the message says to choose another, or 0 for a
            free one), is not 0..65535, or the address cannot be listened on.
    """
    try:
        server = _HTTPServer6 if ":" in host else _HTTPServer
        return server((host, port), handler)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", None)):
            raise ValueError(f"port {port} on {host} is already in use (another program, or "
                             f"another `activetest serve`, listens there); choose another "
                             f"port, or --port 0 for a free one") from None
        raise ValueError(f"cannot listen on {host} port {port}: "
                         f"{exc.strerror or exc}") from None
    except OverflowError:  # a port outside 0..65535 (QA: a traceback)
        raise ValueError(f"port must be 0..65535 (0: a free one), got {port}") from None


def _linger(sock: socket.socket, limit: int = MAX_BODY * 16, seconds: float = 2.0) -> None:
    """End a connection whose request was not read whole: the reply is sent; say so
    (FIN), then read and drop what the client still sends (up to ``limit`` bytes or
    ``seconds``), since closing with unread data sends a reset that can destroy the
    reply before the client reads it."""
    with contextlib.suppress(OSError):  # incl. the timeout: the server closes it then
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + seconds
        got = 0
        while got < limit and (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            got += len(chunk)


def client_gone(sock: socket.socket) -> bool:
    """Whether the client's end of ``sock`` has sent all it will send (the end of the
    stream is there to read: closed, or half-closed with ``shutdown(SHUT_WR)``) or the
    socket failed (a reset). A browser sends nothing else on a connection whose request
    is unanswered, so for a browser this is a tab closed or crashed; a script may have
    only half-closed it and still wait for the reply: :class:`ClientWatch` tells the
    two apart."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):  # reset, or closed already
        return True


#: The interim reply :class:`ClientWatch` sends to a client whose stream ended: an
#: HTTP/1.1 client must read and skip any 1xx before the reply (RFC 9110 15.2), and
#: ``100 Continue`` is the one every client library skips (Python's http.client skips
#: no other).
PROBE = b"HTTP/1.1 100 Continue\r\n\r\n"


class ClientWatch:
    """``watch()``: whether the client of one request has left while its reply is
    prepared (a long ``api/wait``), telling a client gone from one that only
    half-closed its sending side and still reads (``shutdown(SHUT_WR)``: scripts, not
    browsers).

    Once the client's stream has ended (:func:`client_gone`), the two look the same on
    this side of the connection; they differ in what the client's system does with
    data sent to it: a socket the client closed answers it with a reset, one it only
    half-closed takes it. So the first time, the watch sends :data:`PROBE` (an interim
    ``100 Continue``, part of the HTTP/1.1 reply, no data of its own) and says the
    client is still there; from then on the client is gone once a write would fail
    (an empty send: it fails once the reset has come back, one round trip later, and
    puts nothing on the wire). An HTTP/1.0 request (no 1xx replies allowed) or a
    failed probe is taken for a client gone, as before.

    Limits: a half-closed client that closes later is found when the wait ends (the
    reset needs data sent to it, and one probe is sent per request); where the reset
    never comes back (a firewall that drops it, a machine gone from the network) the
    wait runs to its ``seconds``, as it did before this watch.

    Args:
        sock: the request's connection.
        interim: whether a 1xx interim reply may be sent (the request is HTTP/1.1).
    """

    def __init__(self, sock: socket.socket, interim: bool) -> None:
        self.sock = sock
        self.interim = interim
        #: whether the probe was sent (the client's stream had ended by then)
        self.probed = False
        #: whether the probe was sent only in part (the reply after it is garbled)
        self.cut = False

    def __call__(self) -> bool:
        """Whether the client is gone (see the class)."""
        if self.probed:
            try:
                self.sock.send(b"", _DONTWAIT)
            except (OSError, ValueError):  # the reset came back: closed, not half-closed
                return True
            return False
        if not client_gone(self.sock):
            return False
        if not self.interim:
            return True
        try:
            sent = self.sock.send(PROBE, _DONTWAIT)
        except (OSError, ValueError):
            return True
        self.probed = True
        # a probe cut short (a full send buffer: cannot happen before any reply) garbles
        # the reply: the client is treated as gone and the connection closed after it
        self.cut = sent != len(PROBE)
        return self.cut


#: A send that never blocks (the watch runs while the waits' lock is held).
_DONTWAIT = getattr(socket, "MSG_DONTWAIT", 0)


def make_handler(token: str,
                 api: Callable[[str, str, dict[str, Any], Callable[[], bool]], Any],
                 ) -> type[BaseHTTPRequestHandler]:
    """The request handler of the page at ``/s/<token>/``: the page's files, and
    ``api/<name>`` calls answered by ``api(method, name, body, gone)`` (``gone()``: whether
    the client has closed the connection meanwhile, see :class:`ClientWatch`), whose errors become
    replies (KeyError 404, :class:`SessionReplacedError` 409, a locked session, one
    that cannot be written now (a full disk, a write error) or a server stopping
    (nothing was stored) 503 with ``retry``, ValueError 400, anything else 500)."""
    from activetest.session.store_errors import (
        SessionLockedError,
        SessionReadOnlyError,
        SessionWriteError,
    )

    #: nothing was stored, and the same call may succeed later: the page keeps what it
    #: sent and sends it again (QA: a full disk's answers were dropped, "retry" unheeded)
    retry_later = (SessionLockedError, SessionWriteError, SessionReadOnlyError,
                   ServerStoppingError)

    prefix = f"/s/{token}/"

    class Handler(BaseHTTPRequestHandler):
        server_version = "activetest"
        sys_version = ""
        protocol_version = "HTTP/1.1"
        # a reply is headers then body: without TCP_NODELAY the body waits for the
        # browser's delayed ACK of the headers (~40 ms a reply on a kept-alive connection)
        disable_nagle_algorithm = True
        #: a request's body was left unread: the connection ends after the reply (_linger)
        _unread = False

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the terminal shows the URL, not every request

        def send_error(self, code: int, message: str | None = None,
                       explain: str | None = None) -> None:
            # http.server's own refusals (a bad request line, an unknown method): they
            # close the connection without reading any body
            self._unread = True
            super().send_error(code, message, explain)

        def finish(self) -> None:
            super().finish()
            if self._unread:
                _linger(self.connection)

        def _send(self, status: int, body: bytes, ctype: str, took: float | None = None,
                  ) -> None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the page left
                self._reply(status, body, ctype, took)

        def _reply(self, status: int, body: bytes, ctype: str, took: float | None) -> None:
            if status >= 400:  # refused: whatever follows on this connection is suspect
                self.close_connection = True
            self.send_response(status)
            if took is not None:  # the call's time in the server (the page's timings)
                self.send_header("Server-Timing", f"app;dur={1000 * took:.2f}")
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Content-Security-Policy", _CSP)
            self.send_header("X-Frame-Options", "DENY")
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any, took: float | None = None) -> None:
            self._send(status, json.dumps(data, allow_nan=False, default=str).encode(),
                       "application/json; charset=utf-8", took)

        def _route(self) -> str | None:
            path = urlsplit(self.path).path
            if not path.startswith("/s/"):
                return None
            sent, _, rest = path[3:].partition("/")
            # the whole token, compared in constant time (QA: it compared the token sent
            # with itself, and /s/TOKENxyz/ was served)
            if not hmac.compare_digest(sent.encode(), token.encode()):
                return None
            return rest

        def do_GET(self) -> None:
            self._handle("GET")

        def do_POST(self) -> None:
            self._handle("POST")

        def _handle(self, method: str) -> None:
            if "Transfer-Encoding" in self.headers:  # a chunked body: not read, refused
                self._leave_unread()
                self._json(411, {"error": "a request body needs a Content-Length (chunked "
                                          "bodies are not accepted)"})
                return
            # read first, whatever the reply: an unread body would be taken for the
            # connection's next request
            raw, problem = self._read()
            if urlsplit(self.path).path == prefix[:-1]:  # relative URLs need the slash
                self.send_response(301)
                self.send_header("Location", prefix)
                self.send_header("Content-Length", "0")
                if self.close_connection:
                    self.send_header("Connection", "close")
                self.end_headers()
                return
            rest = self._route()
            if rest is None:
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            if method == "GET" and rest in _STATIC:
                name, ctype = _STATIC[rest]
                self._send(200, static_file(name), ctype)
                return
            if not rest.startswith("api/"):
                self._send(404, b"not found\n", "text/plain; charset=utf-8")
                return
            t0 = time.perf_counter()
            try:
                if problem is not None:
                    raise ValueError(problem)
                body = self._body(raw) if method == "POST" else {}
                watch = ClientWatch(self.connection, self.request_version >= "HTTP/1.1")
                data = api(method, rest[4:], body, watch)
                if watch.cut:  # the reply would follow half a probe: not kept alive
                    self.close_connection = True
            except KeyError:
                self._json(404, {"error": f"no such call: {method} {rest}"})
                return
            except SessionReplacedError as exc:  # nothing more is stored: restart
                self._json(409, {"error": str(exc)})
                return
            except OtherSessionError as exc:  # a page of another session: it keeps them
                self._json(421, {"error": str(exc)})
                return
            except retry_later as exc:  # nothing stored: the page sends it again
                self._json(503, {"error": str(exc), "retry": True})
                return
            except ValueError as exc:  # incl. LabelError, SessionError
                self._json(400, {"error": str(exc)})
                return
            except Exception as exc:  # an answer is never half-written: transactions
                print(f"activetest serve: {type(exc).__name__}: {exc}", file=sys.stderr)
                self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
                return
            self._json(200, data, time.perf_counter() - t0)

        def _leave_unread(self) -> None:
            """The body is not read: the connection ends after the reply (what is left
            would be parsed as the next request)."""
            self.close_connection = True
            self._unread = True

        def _read(self) -> tuple[bytes, str | None]:
            """The request's body, read whole (b"" without one), and None; or b"" and
            why it cannot be read (a Content-Length that is not one number of bytes, or
            too large): then it is left unread and the connection closes after the
            reply."""
            lengths = self.headers.get_all("Content-Length") or ["0"]
            raw = lengths[0].strip()
            if len(lengths) > 1 or not _DIGITS.fullmatch(raw):
                self._leave_unread()
                return b"", "bad Content-Length: a number of bytes is expected"
            n = int(raw)
            if n > MAX_BODY:
                self._leave_unread()
                return b"", "request too large"
            data = self.rfile.read(n) if n else b""
            if len(data) < n:  # the client stopped before the end: nothing more comes
                self.close_connection = True
            return data, None

        def _body(self, raw: bytes) -> dict[str, Any]:
            if "json" not in (self.headers.get("Content-Type") or ""):
                raise ValueError("requests must be JSON (Content-Type: application/json)")
            try:
                data = json.loads(raw or b"{}")
            except RecursionError:  # a small body of [[[[...: as the import words it
                raise ValueError("the request: JSON nested too deeply") from None
            except ValueError:  # incl. not UTF-8, a number beyond int()'s digit limit
                raise ValueError("the request is not valid JSON") from None
            if not isinstance(data, dict):
                raise ValueError("the request must be a JSON object")
            return data

    return Handler
