"""The HTTP half of the OpenAI-compatible backend: one endpoint, requests with a deadline.

:class:`EndpointClient` holds what every request to one server needs (the URL with its
credentials kept out of everything shown or stored, the API key, basic auth, extra
query parameters, retries with back-off, a wall-clock deadline over all attempts,
cancellation) and nothing about scoring: :class:`activetest.models.openai.OpenAIScorer`
builds its requests on it. Errors are :class:`EndpointError` (a
:class:`~activetest.errors.UserFacingError`: one message, credentials removed).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from activetest.errors import UserFacingError
from activetest.models._util import ScoringCancelledError
from activetest.redaction import (
    credential_params,
    redact,
    redact_url,
    register_secret,
    split_url,
)

__all__ = ["DEADLINE_ENV", "PARAMS_ENV", "USERINFO_ENV", "EndpointClient", "EndpointError",
           "EndpointTimeoutError", "ServerFailedError", "ServerGoneError", "began"]

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_MAX_DELAY = 30.0


class EndpointError(UserFacingError, RuntimeError):
    """The endpoint failed, refused, or answered without usable log-probs.

    Attributes:
        endpoint: the URL that was called (credentials removed).
        status: the HTTP status that refused the request (200 for an answer that is
            not JSON), else None.
    """

    def __init__(self, endpoint: str, message: str, *, status: int | None = None) -> None:
        self.endpoint = endpoint
        self.status = status
        super().__init__(f"{endpoint}: {message}")


class EndpointTimeoutError(EndpointError):
    """Every attempt to reach the endpoint ran past the timeout."""


class ServerFailedError(EndpointError):
    """The server answered the last attempt of a request with a status that is retried
    (a 5xx, 429, 408, ...), after every retry the deadline allowed: it failed the request
    (overloaded, restarting, rate-limiting), which says nothing of what it supports.

    QA: a 503 through every retry of the echo check's request was taken as "this server
    does not echo prompt log-probs" for the scorer's life.

    Attributes:
        status: the last attempt's HTTP status (as :class:`EndpointError`).
    """


class ServerGoneError(EndpointError):
    """A server that had answered this client refused its connection, or cut it, later
    on, through every retry: it went away mid-run.

    QA: the stock ``python -m llama_cpp.server`` died during scoring (on Intel AMX, by a
    crash signal), and the client said "could not connect ... is a server running at
    this address?", as for a wrong address, and nothing of what became of the items.

    Attributes:
        cause: what the last attempt met and the retries made (credentials removed).
        answered: the requests the server had answered this client before.
        scored, of: the items of the scoring call that were scored before it went
            away, and the call's items (None: not a scoring call).
        kept: the items a score cache keeps of the call (None: no cache said so);
            ``where`` the cache's folder.
    """

    def __init__(self, endpoint: str, cause: str, *, answered: int,
                 scored: int | None = None, of: int | None = None,
                 kept: int | None = None, where: str = "") -> None:
        self.cause, self.answered = cause, answered
        self.scored, self.of, self.kept, self.where = scored, of, kept, where
        super().__init__(endpoint, self._said())

    def _said(self) -> str:
        text = (f"the server went away{' during scoring' if self.of is not None else ''}: "
                f"it had answered {self.answered} request(s), then {self.cause}")
        if self.of is not None and self.kept == 0:
            text += (f". None of the {self.of} item(s) is kept in the score cache "
                     f"({self.where}) yet (it keeps each chunk of items once all of it is "
                     f"scored): once the server is back, the same command scores them all")
        elif self.of is not None and self.kept is not None:
            text += (f". {self.kept} of the {self.of} item(s) are scored and kept in the "
                     f"score cache ({self.where}): once the server is back, the same "
                     f"command scores only the other {self.of - self.kept}")
        elif self.of is not None:
            text += (f". {self.scored} of the {self.of} item(s) were scored before it went; "
                     f"none is kept (no score cache): a new run scores them all again")
        return text + (". Is the server still running? Its log says why it stopped (a "
                       "crash, or killed for memory)")

    def during_scoring(self, scored: int, of: int) -> ServerGoneError:
        """This error, said of a scoring call of ``of`` items, ``scored`` of them scored."""
        return ServerGoneError(self.endpoint, self.cause, answered=self.answered,
                               scored=scored, of=of)

    def kept_in(self, kept: int, of: int, where: str) -> ServerGoneError:
        """This error, said of a cached scoring call of ``of`` items of which the cache
        at ``where`` keeps ``kept`` (scored before, or in this call's finished chunks)."""
        return ServerGoneError(self.endpoint, self.cause, answered=self.answered,
                               scored=self.scored, of=of, kept=kept, where=where)


def _lost_connection(exc: BaseException) -> str | None:
    """How ``exc`` lost the connection to a server (refused, or cut without a whole
    answer: a server gone), else None (a timeout, another failure)."""
    if isinstance(exc, httpx.ConnectError):
        return "refused the connection"
    if isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
        return "cut the connection without an answer"
    return None


#: Total seconds per request (all attempts), when ``deadline=`` is not given.
DEADLINE_ENV = "ACTIVETEST_OPENAI_DEADLINE"
#: ``user:password`` for HTTP basic auth when the URL carries none (kept out of files).
USERINFO_ENV = "ACTIVETEST_OPENAI_USERINFO"
#: ``name=value&...`` query parameters added to every request (a key a server wants in
#: its query string, which is never stored with the URL).
PARAMS_ENV = "ACTIVETEST_OPENAI_PARAMS"
#: An answer larger than this is refused (a completions answer is a few kB).
_MAX_BODY = 64 << 20

def _env_deadline() -> float:
    raw = os.environ.get(DEADLINE_ENV, "").strip()
    if not raw:
        return 120.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${DEADLINE_ENV}={raw!r}: expected seconds, e.g. 120") from None
    if not value > 0:
        raise ValueError(f"${DEADLINE_ENV}={raw!r}: must be > 0")
    return value


def _status_hint(status: int) -> str:
    if status in (401, 403):
        return (f" (the server wants credentials: set ${{OPENAI_API_KEY}} or the variable "
                f"named by api_key_env, or ${USERINFO_ENV} for basic auth)")
    if status == 407:  # a proxy's, not the server's: its key cannot help
        return (" (a proxy between activetest and the server asked for credentials: give "
                "them in the proxy's URL, $HTTP_PROXY or $HTTPS_PROXY (the user name and "
                "password before an '@' ahead of the proxy's host), or list the server's "
                "host in $NO_PROXY to reach it without the proxy)")
    if status == 404:
        return " (is the URL the API root, e.g. http://host:8000/v1?)"
    if 300 <= status < 400:
        return " (a redirect: give the URL it points to; redirects are not followed)"
    return ""


#: How to name the served model, from the command line and from Python.
_NAME_IT = "; name the model: openai:URL#name (Python: OpenAIScorer(url, model=name))"

#: What a ``/models`` entry says about the weights behind a name (not ``created``, which
#: some servers set to the time of the request).
_SERVED_FIELDS = ("id", "root", "parent", "max_model_len", "owned_by", "meta")


def _served_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``/models`` entry that identify the served weights."""
    return {k: entry[k] for k in _SERVED_FIELDS if entry.get(k) is not None}


def _shown_bad(value: object) -> str:
    """A repr of something that should have been a URL, safe to show."""
    if not isinstance(value, str):
        return type(value).__name__
    if split_url(value) is None and "@" in value:  # "user:password@host" without a scheme
        value = "***@" + value.rpartition("@")[2]
    return repr(redact(value))


def _text(body: bytes, n: int) -> str:
    """The first ``n`` characters of an answer's body, as text."""
    return body[:4 * n].decode("utf-8", errors="replace")[:n]


def _non_json(body: bytes) -> str:
    """What is said of a 200 whose body is not JSON: its first 200 characters."""
    return (f"answered 200 with non-JSON content {_text(body, 200)!r}; is this an "
            f"OpenAI-compatible /completions endpoint?")


def began(data: object, n: int = 200) -> str:
    """``"; the answer began: ..."``: the first ``n`` characters of a JSON answer as the
    server sent it (re-serialised), for a message about an answer of the wrong shape.

    Credentials in it are masked where the message is made (:meth:`EndpointClient._error`,
    ``_scrub``). QA, 2026-12-07: "response has no choices[0].logprobs" and the like said
    nothing of what the server did send.
    """
    try:
        text = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(data)
    return f"; the answer began: {text[:n]}{'...' if len(text) > n else ''}"


class _Reply(NamedTuple):
    """A server's answer, read whole."""

    status: int
    headers: httpx.Headers
    body: bytes


class _DeadlineError(Exception):
    """The request's deadline passed before its answer was complete."""

    def __init__(self, started: bool) -> None:
        super().__init__("deadline passed")
        self.started = started


class _TooBigError(Exception):
    """The answer was larger than any completions answer can be."""


@dataclasses.dataclass(frozen=True)
class _Attempt:
    """What one attempt of a request came to (:meth:`EndpointClient._retried`).

    Attributes:
        reply: the server's answer, if any (its ``Retry-After`` sets the back-off).
        done: give ``reply`` back now: no more attempts.
        give_up: no more attempts, no answer to give (the deadline passed).
        shared: no more attempts: another request to the server retried meanwhile and
            the server failed it through every retry (:class:`_RetryTurn`).
    """

    reply: _Reply | None = None
    done: bool = False
    give_up: bool = False
    shared: bool = False


class _RetryTurn:
    """Whose turn it is to retry, among the requests of one client (one server).

    A request that failed and would retry takes the turn, and keeps it until it ends;
    another that failed meanwhile waits for that end instead of retrying on its own
    schedule: where the server answered the request with the turn (or it ended
    otherwise than by its retries running out), the waiting one tries again at once;
    where the server failed it through every retry, the waiting one gives up too,
    without another attempt. A server failing every request of ``concurrency`` at once
    thus gets ``concurrency`` first attempts and one request's ``max_retries`` retries,
    not ``concurrency * max_retries`` (QA: a retry storm on a failing server).
    """

    MINE, ANSWERED, SPENT, LATE = "mine", "answered", "spent", "late"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held = False
        self.ended = 0  # the turns ended so far
        self._spent = False  # whether the last turn ended with its retries run out

    def take(self, since: int, end: float, cancel: threading.Event) -> str:
        """Wait for a turn for a request that failed when :attr:`ended` was ``since``.

        Returns:
            :attr:`MINE` (the turn is this request's: release it with :meth:`release`),
            :attr:`ANSWERED` (a turn ended since without running out: try again now),
            :attr:`SPENT` (a turn ended since with its retries run out: give up),
            :attr:`LATE` (``end``, ``time.monotonic``, passed while waiting).

        Raises:
            ScoringCancelledError: ``cancel`` was set while waiting.
        """
        with self._cond:
            while True:
                if self.ended > since:
                    return self.SPENT if self._spent else self.ANSWERED
                if not self._held:
                    self._held = True
                    return self.MINE
                if cancel.is_set():
                    raise ScoringCancelledError("scoring cancelled")
                left = end - time.monotonic()
                if left <= 0:
                    return self.LATE
                self._cond.wait(min(left, 0.05))  # (and sees a cancellation at once)

    def release(self, spent: bool) -> None:
        """End the turn taken by :meth:`take`; ``spent``: its retries ran out."""
        with self._cond:
            self._held = False
            self.ended += 1
            self._spent = spent
            self._cond.notify_all()


def _shared(outcome: _Attempt) -> str:
    """What is said of a request that gave up with another's retries (``shared``)."""
    return ("; another request to the server retried meanwhile (one retries at a time) "
            "and the server failed it through every retry" if outcome.shared else "")


#: How long past the deadline the caller waits for the request's own timeout to fire.
_GRACE = 0.25


class _Hidden:
    """A value that never shows in a repr (a request URL or userinfo, which hold keys)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<hidden>"


class EndpointClient:
    """Requests to one OpenAI-compatible server: ``{base_url}/completions`` and its
    other paths (``/models``, a tokenizer, SGLang's ``/generate``).

    Args:
        base_url: the API root, e.g. ``"http://127.0.0.1:8000/v1"`` (``/completions``
            is appended unless already there); userinfo and credential query
            parameters are used but never shown or stored.
        model: the served model's name (None: asked from ``{base}/models`` by
            :meth:`_resolve_model`).
        api_key_env, concurrency, timeout, deadline, max_retries, backoff, extra_body:
            as :class:`activetest.models.openai.OpenAIScorer` documents them.
    """

    def __init__(self, base_url: str, model: str | None = None, *,
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 8,
                 timeout: float = 60.0, deadline: float | None = None,
                 max_retries: int = 4, backoff: float = 0.5,
                 extra_body: Mapping[str, Any] | None = None) -> None:
        parts = split_url(base_url.strip()) if isinstance(base_url, str) else None
        if parts is None or parts.scheme not in ("http", "https"):
            raise ValueError(f"base_url must be an http(s) URL such as "
                             f"http://127.0.0.1:8000/v1, got {_shown_bad(base_url)}")
        if model is not None and not model:
            raise ValueError("model must name the served model (or be None to ask the server)")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        if deadline is None:
            deadline = _env_deadline()
        if not deadline > 0:
            raise ValueError(f"deadline must be > 0 seconds, got {deadline}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if backoff < 0:
            raise ValueError(f"backoff must be >= 0, got {backoff}")
        # user:password in the URL become HTTP basic auth, and credential query
        # parameters stay in the request URL only: both are kept out of everything
        # stored or shown (endpoint, name, cache identity, messages; see
        # activetest.redaction). Without them in the URL they are read from
        # $ACTIVETEST_OPENAI_USERINFO ("user:password") and $ACTIVETEST_OPENAI_PARAMS.
        self._userinfo = _Hidden(parts.userinfo or "")
        register_secret(parts.userinfo, parts.password)
        split = urlsplit(parts.without_userinfo())
        if not split.hostname:
            raise ValueError(f"base_url {redact_url(base_url)!r} names no host")
        register_secret(*(v for _, v in credential_params(split.query)))
        path = split.path.rstrip("/")
        path = path if path.endswith("/completions") else path + "/completions"
        url = urlunsplit((split.scheme, split.netloc, path, split.query, ""))
        self._url = _Hidden(url)  # what requests go to
        self.endpoint = redact_url(url)  # what is shown
        self.model = model
        self.api_key_env = api_key_env
        self.concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.deadline = float(deadline)
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.extra_body = dict(extra_body or {})
        self._host = split.hostname
        self.name = f"openai:{model or 'default'}@{self._host}"
        self._shown = self.endpoint
        self._cancel = threading.Event()  # set when a call using the client is interrupted
        # the answers the server gave this client: a connection lost after one is a
        # server gone away (ServerGoneError), not a wrong address
        self._answered = 0
        self._answered_lock = threading.Lock()
        self._turn = _RetryTurn()  # one request retries at a time (no retry storm)

    def _key(self) -> str | None:
        key = os.environ.get(self.api_key_env)
        register_secret(key)
        return key or None

    def _auth(self) -> tuple[str, str] | None:
        info = self._userinfo.value or os.environ.get(USERINFO_ENV) or None
        if not info:
            return None
        user, _, password = info.partition(":")
        user, password = unquote(user), unquote(password)
        basic = base64.b64encode(f"{user}:{password}".encode()).decode()  # as sent
        register_secret(info, password, basic)
        return user, password

    def _target(self, url: str) -> str:
        """``url`` with the query parameters of ``$ACTIVETEST_OPENAI_PARAMS`` added."""
        extra = os.environ.get(PARAMS_ENV, "").strip().lstrip("?&")
        if not extra:
            return url
        register_secret(*(v for p in re.split(r"[&;]", extra)
                          for v in [p.partition("=")[2]] if v))
        return url + ("&" if "?" in url else "?") + extra

    def _scrub(self, text: str) -> str:
        """``text`` without any credential (see :mod:`activetest.redaction`)."""
        self._key()
        self._auth()
        return redact(text)

    def _error(self, message: str, cls: type[EndpointError] = EndpointError, *,
               status: int | None = None, shown: str | None = None) -> EndpointError:
        return cls(shown or self._shown, self._scrub(message), status=status)

    def _client(self) -> httpx.Client:
        headers = {"Content-Type": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        limits = httpx.Limits(max_connections=self.concurrency,
                              max_keepalive_connections=self.concurrency)
        return httpx.Client(headers=headers, timeout=httpx.Timeout(self.timeout),
                            limits=limits, follow_redirects=False, auth=self._auth())

    def _delay(self, attempt: int, reply: _Reply | None) -> float:
        delay = self.backoff * (2.0 ** attempt)
        if reply is not None:
            ra = reply.headers.get("retry-after")
            if ra is not None:
                with suppress(ValueError):
                    delay = max(delay, float(ra))
        return min(delay, _MAX_DELAY)

    def _exchange(self, client: httpx.Client, method: str, url: str, end: float,
                  limit: float, payload: dict[str, Any] | None = None) -> _Reply:
        """One HTTP exchange, its answer read whole, over by ``end`` (``time.monotonic``).

        httpx's timeouts bound each network operation, not the exchange: a server that
        sends its answer a byte at a time never trips them. So the exchange runs in a
        daemon thread that stops reading at ``end``, and the caller waits for it only
        until ``end`` (plus a moment for the thread's own timeout to be the one
        reported) or a cancellation, whatever the server does.

        Raises:
            httpx.HTTPError: as httpx raises them (``limit`` bounds each operation).
            _DeadlineError: the answer was not complete at ``end``.
            ScoringCancelledError: the scoring was cancelled meanwhile.
        """
        box: dict[str, Any] = {}
        done = threading.Event()
        given_up = threading.Event()

        def run() -> None:
            try:
                with client.stream(method, url, json=payload,
                                   timeout=httpx.Timeout(limit)) as response:
                    box["started"] = True
                    chunks: list[bytes] = []
                    size = 0
                    for chunk in response.iter_bytes():
                        if given_up.is_set() or time.monotonic() > end:
                            raise _DeadlineError(started=True)
                        size += len(chunk)
                        if size > _MAX_BODY:
                            raise _TooBigError
                        chunks.append(chunk)
                    box["reply"] = _Reply(response.status_code, response.headers,
                                          b"".join(chunks))
            except BaseException as exc:  # handed to the caller
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=run, name="activetest-openai-request", daemon=True).start()
        try:
            while not done.wait(0.05):
                if self._cancel.is_set():
                    raise ScoringCancelledError("scoring cancelled")
                if time.monotonic() > end + _GRACE:
                    raise _DeadlineError(started=bool(box.get("started")))
        finally:
            given_up.set()
        if "error" in box:
            raise box["error"]
        with self._answered_lock:
            self._answered += 1
        return box["reply"]  # type: ignore[no-any-return]

    def _gone(self, exc: BaseException | None, tries: str, shown: str | None
              ) -> ServerGoneError | None:
        """The :class:`ServerGoneError` of a request whose last attempt met ``exc``
        (``tries``: the attempts said) where that lost the connection to a server that
        had answered this client before; else None."""
        how = None if exc is None else _lost_connection(exc)
        if how is None or not self._answered:
            return None
        return ServerGoneError(shown or self._shown, self._scrub(
            f"{how} ({type(exc).__name__}: {exc}){tries}"), answered=self._answered)

    def _post(self, client: httpx.Client, body: dict[str, Any], *,
              url: str | None = None) -> dict[str, Any]:
        """POST with retries within :attr:`deadline`; the JSON object, or an EndpointError.

        The deadline bounds the whole request in wall-clock time: every attempt, every
        back-off, and an answer that trickles in. ``url`` (another path of the same
        server: its tokenizer, SGLang's ``/generate``) gets ``body`` as it is;
        ``/completions`` gets the model, ``temperature=0`` and ``extra_body`` added.
        A connection refused or cut through every attempt, where the server answered
        this client before, raises :class:`ServerGoneError` (it went away mid-run); a
        status to retry (5xx, 429, ...) on the last attempt, :class:`ServerFailedError`.
        A 200 whose body is not JSON (a proxy's page, a body cut short) is tried again as
        a 5xx is (at ``/completions``; on another path ``url``, asked once: a gateway's
        page for a route it lacks); on the last attempt it is an :class:`EndpointError`
        with status 200 (a refusal, :func:`~activetest.models.openai_paths.refused`)
        that quotes the start of that last body once.
        """
        if url is None:
            payload = {"model": self.model, "temperature": 0.0, **self.extra_body, **body}
        else:
            payload = body
        target = url if url is not None else self._url.value
        shown = redact_url(target) if url is not None else None
        last = ""
        timed_out = False
        lost: BaseException | None = None  # the last attempt's lost connection
        parsed: list[Any] = []  # the JSON of the 200 given back

        def once(limit: float) -> _Attempt:
            nonlocal last, timed_out, lost
            lost = None
            try:
                reply = self._exchange(client, "POST", self._target(target), end,
                                       limit, payload)
            except _DeadlineError as exc:
                timed_out = True
                last = ("timed out: the answer was still arriving when the deadline passed "
                        "(a server sending it very slowly?)" if exc.started else
                        "timed out: no answer within the deadline")
                return _Attempt(give_up=True)
            except _TooBigError:
                raise self._error(f"answered with more than {_MAX_BODY >> 20} MiB; is this "
                                  f"an OpenAI-compatible /completions endpoint?",
                                  shown=shown) from None
            except httpx.TimeoutException as exc:
                timed_out, last = True, f"timed out after {limit:.3g} s ({type(exc).__name__})"
            except httpx.ConnectError as exc:
                timed_out, last = False, f"could not connect ({type(exc).__name__}: {exc})"
                lost = exc
            except httpx.TransportError as exc:
                timed_out, last = False, f"request failed ({type(exc).__name__}: {exc})"
                lost = exc
            except RuntimeError:  # the client was closed by an interruption
                if self._cancel.is_set():
                    raise ScoringCancelledError("scoring cancelled") from None
                raise
            else:
                if reply.status == 200:
                    try:
                        parsed.append(json.loads(reply.body))
                    except ValueError:  # (UnicodeDecodeError included) a proxy's page, a
                        # body cut short: often a passing fault, tried again as a 5xx is
                        # (QA: one such answer failed the whole run, the probe or the echo
                        # check taking it for the server's refusal)
                        timed_out, last = False, _non_json(reply.body)
                        # but not on another path (a tokenizer, /generate): a web page
                        # there is a gateway's answer for a route it lacks, asked once
                        # (each probe's retries cost seconds: ~7.5 s a route by default)
                        return _Attempt(reply, give_up=url is not None)
                    return _Attempt(reply, done=True)
                detail = _text(reply.body, 300)
                if reply.status not in _RETRY_STATUS:
                    # a 404 of another path (SGLang's /generate, a tokenizer) is a route the
                    # server lacks, not a wrong API root (QA: the probe's summary said "is
                    # the URL the API root?" of a right URL)
                    hint = "" if url is not None and reply.status == 404 else \
                        _status_hint(reply.status)
                    raise self._error(f"HTTP {reply.status}: {detail}{hint}",
                                      status=reply.status, shown=shown)
                timed_out, last = False, f"HTTP {reply.status}: {detail}"
                return _Attempt(reply)
            return _Attempt()

        start = time.monotonic()
        end = start + self.deadline
        tries, outcome = self._retried(self.max_retries + 1, end, once)
        if outcome.done and outcome.reply is not None:
            return self._object(parsed[-1], shown)
        said = (f"; gave up after {tries} attempt(s) in {time.monotonic() - start:.1f} s "
                f"(deadline {self.deadline:g} s, ${DEADLINE_ENV}; "
                f"max_retries={self.max_retries}){_shared(outcome)}")
        gone = self._gone(lost, said, shown)
        if gone is not None:  # (QA: "could not connect" of a server that died mid-run)
            raise gone
        if outcome.reply is not None and outcome.reply.status == 200:  # not JSON, to the
            # last: a refusal (openai_paths.refused), said with the last body's start once
            raise self._error(f"{last}{said}", status=200, shown=shown)
        if outcome.reply is not None and not timed_out:  # a status to retry, to the last
            raise self._error(f"{last}{said}", ServerFailedError,
                              status=outcome.reply.status, shown=shown)
        cls = EndpointTimeoutError if timed_out else EndpointError
        raise self._error(f"{last}{said}", cls, shown=shown)

    def _retried(self, attempts: int, end: float, once: Callable[[float], _Attempt]
                 ) -> tuple[int, _Attempt]:
        """The one retry loop of every request (:meth:`_post`, :meth:`_get_with_retries`).

        ``once(limit)`` makes one attempt, each network operation bounded by ``limit``
        seconds (``timeout``, or less where the deadline ``end``, ``time.monotonic``, is
        nearer; at least 0.01), and says what came of it (:class:`_Attempt`: an answer to
        give back now, no more attempts, or one more try); it raises what ends the
        request. Between attempts the back-off is ``backoff * 2**attempt`` seconds, at
        least a reply's ``Retry-After``, at most :data:`_MAX_DELAY`; where it would end
        past ``end`` no attempt is made. A cancellation (:meth:`cancel`) is checked before
        each attempt and ends a back-off at once. The retries of the client's requests
        take turns (:class:`_RetryTurn`): one request retries at a time, and where the
        server failed it through every retry, the others that failed meanwhile give up
        without retrying (their outcome says ``shared``).

        Returns:
            ``(the attempts made, the last attempt's outcome)``.

        Raises:
            ScoringCancelledError: the scoring was cancelled.
        """
        attempt = 0
        outcome = _Attempt()
        holding = False  # this request has the turn to retry
        try:
            for attempt in range(attempts):
                if self._cancel.is_set():
                    raise ScoringCancelledError("scoring cancelled")
                limit = max(0.01, min(self.timeout, end - time.monotonic()))
                outcome = once(limit)
                if outcome.done or outcome.give_up or attempt + 1 >= attempts:
                    break
                if not holding:
                    turn = self._turn.take(self._turn.ended, end, self._cancel)
                    if turn == _RetryTurn.ANSWERED:  # the server answered another: now
                        continue
                    if turn == _RetryTurn.SPENT:
                        outcome = dataclasses.replace(outcome, shared=True)
                        break
                    if turn == _RetryTurn.LATE:
                        break
                    holding = True
                delay = self._delay(attempt, outcome.reply)
                if time.monotonic() + delay >= end:
                    break
                if self._cancel.wait(delay):
                    raise ScoringCancelledError("scoring cancelled")
        except BaseException:
            if holding:
                self._turn.release(spent=False)
            raise
        if holding:
            self._turn.release(spent=not outcome.done)
        return attempt + 1, outcome

    def _object(self, data: object, shown: str | None = None) -> dict[str, Any]:
        """``data``, a 200's JSON, if it is an object; else an :class:`EndpointError`."""
        if not isinstance(data, dict):
            raise self._error(f"answered with JSON {type(data).__name__}, expected an "
                              f"object{began(data)}", status=200, shown=shown)
        return data

    def _models_url(self) -> str:
        parts = urlsplit(self._url.value)
        return urlunsplit(parts._replace(path=parts.path.removesuffix("/completions")
                                         + "/models"))

    def _get_with_retries(self, client: httpx.Client, url: str,
                          fail: Callable[[str], EndpointError], retry: bool = True) -> _Reply:
        """``GET url``, retried as :meth:`_post` retries (``max_retries``, the same back-off,
        all within :attr:`deadline`): a server restarting for a moment is waited for.

        A refused connection, a transport error and a status in ``_RETRY_STATUS`` are
        tried again; the last answer is returned as it is (any status), and a connection
        still refused after the last attempt says "could not connect" (where the server
        answered this client before: :class:`ServerGoneError`). ``retry=False``: one
        attempt (where a failure has a fallback, waiting would only delay it).

        Raises:
            EndpointError: no answer (``fail(why)``, or "could not connect").
            ServerGoneError: the connection was lost after the server had answered.
        """
        shown = redact_url(url)
        error: Exception | None = None

        def once(limit: float) -> _Attempt:
            nonlocal error
            error = None
            try:
                reply = self._exchange(client, "GET", self._target(url), end, limit)
            except _DeadlineError:
                raise fail(f"timed out: no complete answer within the deadline of "
                           f"{self.deadline:g} s, ${DEADLINE_ENV}") from None
            except _TooBigError:
                raise fail(f"answered with more than {_MAX_BODY >> 20} MiB") from None
            except httpx.TransportError as exc:  # refused, reset, timed out: tried again
                error = exc
                return _Attempt()
            except httpx.HTTPError as exc:
                raise fail(f"{type(exc).__name__}: {exc}") from None
            return _Attempt(reply, done=reply.status not in _RETRY_STATUS)

        start = time.monotonic()
        end = start + self.deadline
        attempts, outcome = self._retried(self.max_retries + 1 if retry else 1, end, once)
        if outcome.reply is not None:  # any status (one to retry: still given after the
            return outcome.reply  # last attempt)
        tries = (f"; gave up after {attempts} attempt(s) in "
                 f"{time.monotonic() - start:.1f} s (max_retries={self.max_retries})"
                 f"{_shared(outcome)}")
        gone = self._gone(error, tries, shown)
        if gone is not None:  # it answered before: gone away, not a wrong address
            raise gone from None
        if isinstance(error, httpx.ConnectError):  # no server there: naming the model
            # cannot help (QA: a dead llama.cpp server was refused with "name the model",
            # which only led to "could not connect" once it was named)
            raise EndpointError(shown, self._scrub(
                f"could not connect ({type(error).__name__}: {error}): is a server running "
                f"at this address?{tries}")) from None
        raise fail(f"{type(error).__name__}: {error}{tries}") from None

    def _list_models(self, client: httpx.Client, then: str = "",
                     retry: bool = True) -> list[dict[str, Any]]:
        """The entries of ``GET {base}/models`` (each with a string ``id``), asked with
        retries as completions are (``retry=False``: once; see :meth:`_get_with_retries`).

        Raises:
            EndpointError: the server did not answer with a model list (says why, then
                ``then``).
        """
        url = self._models_url()
        shown = redact_url(url)

        def fail(why: str) -> EndpointError:
            return EndpointError(shown, self._scrub(f"cannot list the served models ({why})"
                                                    f"{then}"))

        reply = self._get_with_retries(client, url, fail, retry)
        if reply.status != 200:
            raise fail(f"HTTP {reply.status}: {_text(reply.body, 300)}"
                       f"{_status_hint(reply.status)}")
        try:
            listing = json.loads(reply.body)
        except ValueError:
            raise fail(f"answered 200 with non-JSON content {_text(reply.body, 200)!r}"
                       ) from None
        try:
            entries = [dict(m, id=str(m["id"])) for m in listing["data"]]
        except (KeyError, TypeError, ValueError):
            raise fail(f"unexpected answer: no data[].id{began(listing)}") from None
        return entries

    def _resolve_model(self, client: httpx.Client) -> None:
        """Ask ``{base}/models`` for the served model when none was given."""
        if self.model is not None:
            return
        self._take_one(self._list_models(client, _NAME_IT))

    def _take_one(self, entries: list[dict[str, Any]]) -> dict[str, Any]:
        """The one listed model, made this client's model (refused when there are several)."""
        ids = [m["id"] for m in entries]
        if len(ids) != 1:
            raise EndpointError(redact_url(self._models_url()), self._scrub(
                f"serves {len(ids)} models {ids[:10]}; choose one: openai:URL#name "
                f"(Python: OpenAIScorer(url, model=name))"))
        self.model = ids[0]
        self.name = f"openai:{self.model}@{self._host}"
        return entries[0]

    def served_model(self) -> dict[str, Any]:
        """Which model the server serves under this client's model name, as it says.

        ``GET {base}/models`` is asked every time (a server restarted with other
        weights on the same port is noticed): the listed entry's ``id`` and those of
        ``root``, ``parent``, ``max_model_len``, ``owned_by`` and llama.cpp's ``meta``
        (parameter count, file size, ...) it reports. With a model name given and a
        server that lists other names only (llama-cpp-python answers every name with
        its one model), the one listed model is recorded under ``served``. Where the
        list cannot be had, a given name is all there is (``{"id": name}``); a name
        that stays the same while the weights behind it change (vLLM's
        ``--served-model-name``, an alias) cannot be told apart by a client.

        Raises:
            EndpointError: no model name was given and the server does not say which
                one model it serves.
        """
        with self._client() as client:
            try:
                entries = self._list_models(client, ", so its scores cannot be told apart "
                                            "from another model's (the score cache is keyed "
                                            "by the model)" + _NAME_IT,
                                            # a given name is the fallback: not waited for
                                            retry=self.model is None)
            except EndpointError:
                if self.model is not None:
                    return {"id": self.model}
                raise
        if self.model is None:
            return _served_fields(self._take_one(entries))
        for entry in entries:
            if entry["id"] == self.model:
                return _served_fields(entry)
        if len(entries) == 1:
            return {"id": self.model, "served": _served_fields(entries[0])}
        return {"id": self.model}

    def _root(self, path: str) -> str:
        """``path`` at the server's root (the base URL without ``/v1``), query kept."""
        parts = urlsplit(self._url.value)
        base = parts.path.removesuffix("/completions").rstrip("/")
        base = base.removesuffix("/v1")
        return urlunsplit(parts._replace(path=base + path))
