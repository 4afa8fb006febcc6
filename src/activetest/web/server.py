"""The labelling page's server: ``http.server`` (standard library) and a JSON API.

Everything lives under ``/s/<token>/``: the page (``index.html``, ``app.js``,
``app.css``) and the API (``api/...``); the token is random per run
(:func:`secrets.token_urlsafe`), printed in the URL, and any other path answers 404,
so a page on another site cannot reach the API. Bound to 127.0.0.1 by default (a
free port with ``port=0``); ``host`` shares it on a network.

API (JSON in, JSON out; errors: ``{"error": "..."}`` with status 400, or 409 once the
session file was replaced under the server, e.g. by ``init --overwrite``: nothing more
is stored, the server must be restarted):

* ``GET api/state``: the layout (classification, graded, paired), the levels, the
  task, whether the surrogate's guess is shown.
* ``POST api/next {annotator, ahead}``: the next item for that annotator (claimed)
  and up to ``ahead`` (0..5) more they hold at hand (``{"item": ..., "ahead": [...]}``,
  all claimed; see :meth:`Annotators.held`), or ``{"done": true}``.
* ``POST api/answer {annotator, item_id, levels, next, ahead}``: levels 1..C, one per
  answer shown, in the order shown; committed before the reply; with ``next`` the
  reply carries what ``api/next`` would (the same commit).
* ``POST api/answers {annotator, answers: [{item_id, levels}], ahead}``: answers that
  waited behind a slow reply, in one commit, each stored or refused on its own
  (``results``: ``saved`` or ``error`` per answer), then what ``api/next`` would.
* ``POST api/undo {annotator}``: undo their last answer; the item comes back.
* ``POST api/skip {annotator, item_id, next, ahead}``: set it aside for a second look.
* ``GET api/progress``: draws, labels, the estimate with its fixed-budget and
  anytime intervals, "you may stop now".
* ``GET api/disagreements`` and ``POST api/adjudicate {annotator, item_id, levels}``:
  for the adjudicators named at start.

API replies carry ``Server-Timing: app;dur=MS`` (the call's time in the server, for
the page's timings). Every session call runs on ONE worker thread that owns the session file's
connection (SQLite connections belong to their thread); request threads wait for
it, so answers are written one after another, each its own transaction.

HTTP: every request's body is read whole (Content-Length, at most 64 KiB) before the
reply, so that a kept-alive connection stays in step; a refused request, a body that
cannot be read (chunked: 411, a bad or too large Content-Length) close the connection
after the reply, and what the client still sends is read and dropped for a moment
first, so that the reply is not lost to a reset.
"""

from __future__ import annotations

import contextlib
import errno
import hmac
import json
import os
import re
import secrets
import socket
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = ["LabelServer", "SessionReplacedError", "serve"]

_STATIC = {"": ("index.html", "text/html; charset=utf-8"),
           "index.html": ("index.html", "text/html; charset=utf-8"),
           "app.js": ("app.js", "text/javascript; charset=utf-8"),
           "app.css": ("app.css", "text/css; charset=utf-8")}
_MAX_BODY = 1 << 16
_DIGITS = re.compile(r"[0-9]+")
#: No script but our own file, no style but our own, nothing loaded from elsewhere.
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def static_file(name: str) -> bytes:
    """A file of the page, from the installed package."""
    return resources.files("activetest.web").joinpath("static", name).read_bytes()


#: A token given by the caller (``--token``): URL-safe, long enough to stay a secret.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")


class LabelServer:
    """The labelling page over one session file (see the module docstring).

    Args:
        path: the session file.
        host, port: where to listen (port 0: a free one).
        token: the URL's secret (default: a fresh random one); give the one a previous
            run printed to serve the same address again (a page still open there then
            sends the answers it kept).
        adjudicators: names that may settle disagreements on the page.
        target_width: the anytime interval width that says "you may stop now".
        busy_timeout: seconds to wait for another process's lock on the file.
        **options: :class:`~activetest.session.annotators.Annotators` options
            (``overlap``, ``reviews``, ``batch``, ``budget``, ``resolve``,
            ``claim_seconds``, ``show_guess``).
    """

    def __init__(self, path: str | Path, *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, adjudicators: Sequence[str] = (),
                 target_width: float | None = None, busy_timeout: float = 5.0,
                 **options: Any) -> None:
        from activetest.session.annotators import check_name

        self.path = Path(path)
        if token is not None and not _TOKEN.fullmatch(token):
            raise ValueError(f"token {token!r}: expected at least 16 characters of A-Z, a-z, "
                             f"0-9, '-' and '_' (the secret in the page's address, e.g. the "
                             f"one a previous `activetest serve` printed)")
        self.token = token or secrets.token_urlsafe(18)
        self.adjudicators = frozenset(check_name(a, "adjudicator") for a in adjudicators)
        self.target_width = target_width
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session")
        # the progress line's estimate: its own thread and connection, so that computing
        # it never delays an answer (WAL: reads do not block the writer)
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="progress")
        self._session: Any = None
        self._annotators: Any = None
        self._progress_session: Any = None
        self._progress: tuple[Any, Any] = (None, None)
        self._busy_timeout = busy_timeout
        self._identity: tuple[int, int] | None = None
        try:
            self._call(self._open, busy_timeout, options)
        except BaseException:
            self._pool.shutdown(wait=False)
            self._reader.shutdown(wait=False)
            raise
        try:
            self.httpd = _listen(host, int(port), _handler(self))
        except BaseException:
            self._close_session()
            raise

    def _open(self, busy_timeout: float, options: dict[str, Any]) -> None:
        from activetest.session.annotators import Annotators
        from activetest.session.workflow import Session

        self._session = Session.open(self.path, busy_timeout=busy_timeout)
        # the file opened: every call checks that the path still names it (see _check_file)
        self._identity = _identity(self.path)
        if not self._session.store.writable:
            why = _why_not_writable(self._session.store)
            self._session.close()
            raise why
        try:
            self._annotators = Annotators(self._session, **options)
        except BaseException:  # e.g. a harness session (no answers to judge): refused
            self._session.close()
            raise

    def _check_file(self, after: bool = False) -> None:
        """Refuse to go on when the session file's path no longer names the file this
        server opened (replaced by ``init --overwrite``, removed): the answers would go
        into a file nobody reads.

        Raises:
            SessionReplacedError: the path names another file, or none.
        """
        if self._identity is not None and _identity(self.path) == self._identity:
            return
        what = ("what this call stored went into the old file, not the new one" if after
                else "nothing was stored")
        raise SessionReplacedError(
            f"{self.path}: the session file was replaced or removed by another command "
            f"(e.g. `activetest init --overwrite`) while the labelling page was serving it; "
            f"{what}. Restart `activetest serve` to label the file now there")

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return self._pool.submit(fn, *args).result()
        except RuntimeError:  # the pool is shut down: the server is stopping
            raise ValueError("the labelling server is stopping") from None

    @property
    def url(self) -> str:
        """The page's address (with the token)."""
        host, port = self.httpd.server_address[:2]
        shown = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        if ":" in str(shown):
            shown = f"[{shown}]"
        return f"http://{shown}:{port}/s/{self.token}/"

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or Ctrl-C)."""
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop serving and close the session file."""
        self.httpd.shutdown()
        self.close()

    def close(self) -> None:
        """Close the socket and the session file."""
        self.httpd.server_close()
        self._close_session()

    def _close_session(self) -> None:
        for pool, name in ((self._pool, "_session"), (self._reader, "_progress_session")):
            def shut(name: str = name) -> None:
                if getattr(self, name) is not None:
                    getattr(self, name).close()
                    setattr(self, name, None)

            with contextlib.suppress(RuntimeError):  # closed already
                pool.submit(shut).result()
            pool.shutdown(wait=True)

    def progress(self) -> dict[str, Any]:
        """The progress line's data, computed on its own thread (cached until the labels
        or the draws change)."""
        try:
            return self._reader.submit(self._compute_progress).result()  # type: ignore[no-any-return]
        except RuntimeError:  # the pool is shut down: the server is stopping
            raise ValueError("the labelling server is stopping") from None

    def _compute_progress(self) -> dict[str, Any]:
        from activetest.session.annotators import progress
        from activetest.session.workflow import Session

        if self._progress_session is None:
            self._progress_session = Session.open(self.path, busy_timeout=self._busy_timeout)
        s = self._progress_session
        key = (s.store.n_acquired(), s.store.last_label_change())
        if self._progress[0] != key:
            self._progress = (key, asdict(progress(s, target_width=self.target_width,
                                                   budget=self._annotators.budget)))
        return self._progress[1]  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ API

    def api(self, method: str, name: str, body: dict[str, Any]) -> Any:
        """One API call (run on the session's thread); returns JSON-able data.

        Raises:
            ValueError: a bad request (its message goes back to the page).
            SessionReplacedError: the session file was replaced under the server.
            KeyError: no such call.
        """
        if (method, name) not in _CALLS:
            raise KeyError(name)
        if (method, name) == ("GET", "progress"):
            self._check_file()
            return self.progress()
        return self._call(self._checked_api, method, name, body)

    def _checked_api(self, method: str, name: str, body: dict[str, Any]) -> Any:
        """:meth:`_api` on the file this server opened: checked before (nothing is
        stored in a replaced file) and, for the calls that write, after."""
        self._check_file()
        out = self._api(method, name, body)
        if method == "POST":
            self._check_file(after=True)
        return out

    def _api(self, method: str, name: str, body: dict[str, Any]) -> Any:
        from activetest.session.annotators import agreement

        a = self._annotators
        s = self._session
        if (method, name) not in _CALLS:
            raise KeyError(name)
        if (method, name) == ("GET", "state"):
            return {"layout": a.layout, "levels": list(a.levels), "task": s.task.name,
                    "session": self.path.name, "guess_shown": a.show_guess,
                    "n_answers": len(a.roles), "adjudication": bool(self.adjudicators)}
        who = _annotator(body)
        if (method, name) == ("POST", "hello"):
            return {"annotator": who, "adjudicator": who in self.adjudicators}
        if (method, name) == ("POST", "next"):
            return _held(a.held(who, _ahead(body)))
        if (method, name) == ("POST", "answer"):
            if not body.get("next"):
                rows = a.answer(who, str(body.get("item_id")), _levels(body))  # committed
                return {"saved": len(rows), "again": not rows}
            # the next item(s) in the same reply and the same commit: one round trip
            # and one write to disk a label
            rows, held = a.answer_and_held(who, str(body.get("item_id")), _levels(body),
                                           _ahead(body))
            return {"saved": len(rows), "again": not rows, **_held(held)}
        if (method, name) == ("POST", "answers"):
            raw = body.get("answers")
            if not isinstance(raw, list) or not 1 <= len(raw) <= 100 or not all(
                    isinstance(x, dict) for x in raw):
                raise ValueError("answers must be a list of 1 to 100 {item_id, levels}")
            given = [(str(x.get("item_id")), _levels(x)) for x in raw]
            results, held = a.answers_and_held(who, given, _ahead(body))
            return {"results": [
                {"item_id": iid, "error": str(r)} if isinstance(r, Exception) else
                {"item_id": iid, "saved": len(r), "again": not r}
                for (iid, _), r in zip(given, results, strict=True)], **_held(held)}
        if (method, name) == ("POST", "undo"):
            item = a.undo(who)
            return {"item": None if item is None else asdict(item)}
        if (method, name) == ("POST", "skip"):
            a.skip(who, str(body.get("item_id")))
            return {"ok": True, **(_held(a.held(who, _ahead(body))) if body.get("next")
                                   else {})}
        if who not in self.adjudicators:
            raise ValueError(f"{who!r} is not an adjudicator of this page (start it with "
                             f"--adjudicator NAME)")
        if (method, name) == ("POST", "disagreements"):
            report = agreement(s, n_boot=0)
            return {"disagreements": [asdict(d) for d in report.disagreements],
                    "order": self._orders([d.item_id for d in report.disagreements])}
        if (method, name) == ("POST", "adjudicate"):
            rows = a.answer(who, str(body.get("item_id")), _levels(body), adjudicate=True)
            return {"saved": len(rows)}
        raise KeyError(name)

    def _orders(self, item_ids: Sequence[str]) -> dict[str, Any]:
        """item -> the item as shown (fields, answers in the stored order)."""
        a = self._annotators
        out = {}
        for iid in dict.fromkeys(item_ids):
            acq = next(x for x in a.s.acquisitions() if x.item_id == iid)
            with a.s.store.transaction() as c:
                from activetest.session.annotators import ItemState

                st = ItemState(acq.step, acq.index, iid)
                need, order = a._item_row(c, st)
                out[iid] = {**asdict(a._assignment(st, need, order)),
                            "roles_hidden": len(order)}
        return out


_CALLS = frozenset({("GET", "state"), ("GET", "progress"), ("POST", "hello"), ("POST", "next"),
                    ("POST", "answer"), ("POST", "answers"), ("POST", "undo"), ("POST", "skip"),
                    ("POST", "disagreements"), ("POST", "adjudicate")})


class SessionReplacedError(ValueError):
    """The session file was replaced (or removed) under a running server: nothing more
    is stored; restart ``activetest serve`` (HTTP 409)."""


class _HTTPServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a listen queue for bursts: with the default's 5,
    a burst of answers (several people, retries) got connections reset."""

    daemon_threads = True
    request_queue_size = 128


def _listen(host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> _HTTPServer:
    """The server listening on ``host:port``.

    Raises:
        ValueError: the port is taken (the message says to choose another, or 0 for a
            free one), is not 0..65535, or the address cannot be listened on.
    """
    try:
        return _HTTPServer((host, port), handler)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", None)):
            raise ValueError(f"port {port} on {host} is already in use (another program, or "
                             f"another `activetest serve`, listens there); choose another "
                             f"port, or --port 0 for a free one") from None
        raise ValueError(f"cannot listen on {host} port {port}: "
                         f"{exc.strerror or exc}") from None
    except OverflowError:  # a port outside 0..65535 (QA: a traceback)
        raise ValueError(f"port must be 0..65535 (0: a free one), got {port}") from None


def _identity(path: Path) -> tuple[int, int] | None:
    """The file a path names (device, inode), or None where it names none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _why_not_writable(store: Any) -> ValueError:
    """Why a session file opened read-only cannot take answers, in the store's own words
    (a full disk, a read-only file or folder): the store refuses a write with them."""
    suffix = " (the labelling page needs to store answers)"
    try:
        with store.transaction():
            pass
    except ValueError as exc:  # SessionWriteError (a full disk), SessionReadOnlyError
        return type(exc)(f"{exc}{suffix}")
    return ValueError(f"{store.path}: the session file cannot be written{suffix}")


def _annotator(body: dict[str, Any]) -> str:
    """The annotator's name from a request: text (see ``check_name``)."""
    from activetest.session.annotators import check_name

    raw = body.get("annotator")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"the annotator's name must be text, got {_json_kind(raw)}")
    return check_name(raw)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    return "a list" if isinstance(value, list) else "an object"


def _linger(sock: socket.socket, limit: int = _MAX_BODY * 16, seconds: float = 2.0) -> None:
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


def _held(items: Sequence[Any]) -> dict[str, Any]:
    """``{"item": the next, "ahead": those after it}``, or ``{"done": true}``."""
    if not items:
        return {"done": True}
    return {"item": asdict(items[0]), "ahead": [asdict(x) for x in items[1:]]}


def _ahead(body: dict[str, Any]) -> int:
    raw = body.get("ahead", 0)
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 5:
        raise ValueError("ahead must be a number of items from 0 to 5")
    return raw


def _levels(body: dict[str, Any]) -> list[int]:
    raw = body.get("levels")
    if not isinstance(raw, list) or not raw or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in raw):
        raise ValueError("levels must be a list of level numbers (1, 2, ...)")
    return [v - 1 for v in raw]


def _handler(server: LabelServer) -> type[BaseHTTPRequestHandler]:
    from activetest.session.store_errors import SessionLockedError

    prefix = f"/s/{server.token}/"

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
            token, _, rest = path[3:].partition("/")
            if not hmac.compare_digest(token.encode(), server.token.encode()) or \
                    not path.startswith(prefix[:-1]):
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
                data = server.api(method, rest[4:], body)
            except KeyError:
                self._json(404, {"error": f"no such call: {method} {rest}"})
                return
            except SessionReplacedError as exc:  # nothing more is stored: restart
                self._json(409, {"error": str(exc)})
                return
            except SessionLockedError as exc:  # nothing stored: the page sends it again
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
            if n > _MAX_BODY:
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


def serve(path: str | Path, *, host: str = "127.0.0.1", port: int = 0,
          announce: Callable[[str], None] = print, **options: Any) -> None:
    """Serve the labelling page for a session until interrupted (Ctrl-C, SIGTERM).

    ``announce`` gets the page's URL (printed, then flushed, by default). Options:
    those of :class:`LabelServer`.
    """
    server = LabelServer(path, host=host, port=port, **options)
    try:
        announce(server.url)
        sys.stdout.flush()
        server.serve_forever()
    finally:
        server.httpd.server_close()
        server.close()
