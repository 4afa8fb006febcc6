"""The labelling page's server: ``http.server`` (standard library) and a JSON API.

Everything lives under ``/s/<token>/``: the page (``index.html``, ``app.js``,
``app.css``) and the API (``api/...``); the token is random per run
(:func:`secrets.token_urlsafe`), printed in the URL, and any other path answers 404,
so a page on another site cannot reach the API. Bound to 127.0.0.1 by default (a
free port with ``port=0``); ``host`` shares it on a network.

API (JSON in, JSON out; errors: ``{"error": "..."}`` with status 400, or 409 once the
session file was replaced under the server, e.g. by ``init --overwrite``: nothing more
is stored, the server must be restarted; 421 for a call that names another session than
the one served, ``session_id``, which the page sends with every call: a page loaded for
session A whose address now serves B, restarted with A's ``--port`` and ``--token``,
stores nothing in B):

* ``GET api/state``: the layout (classification, graded, paired), the levels, the
  task, whether the surrogate's guess is shown, the session's ``session_id``
  (:func:`session_id`).
* ``POST api/next {annotator, ahead}``: the next item for that annotator (claimed)
  and up to ``ahead`` (0..5) more they hold at hand (``{"item": ..., "ahead": [...]}``,
  all claimed; see :meth:`Annotators.held`), or ``{"done": true, "changes": N}`` (N:
  for ``api/wait``; with ``others_hold`` and ``lapse_seconds`` while others hold drawn
  items unanswered, and ``others_needed`` while items they answered ask for more
  annotators, ``unsettled`` while drawn items have differing answers and no label).
* ``POST api/answer {annotator, item_id, levels, next, ahead}``: levels 1..C, one per
  answer shown, in the order shown; committed before the reply; with ``next`` the
  reply carries what ``api/next`` would (the same commit).
* ``POST api/answers {annotator, answers: [{item_id, levels}], ahead}``: answers that
  waited behind a slow reply, in one commit, each stored or refused on its own
  (``results``: ``saved`` or ``error`` per answer), then what ``api/next`` would; or,
  where the answers were stored but no next item could be drawn, ``next_error`` with
  the results (the page says both and asks for the next item again).
* ``POST api/wait {since, seconds, browser}``: answers once a call that can give an item to
  another person or end their wait (an answer, an undo, a skip, a release, an
  adjudication: :data:`~activetest.web.api.WRITES`) was made on this server since the
  reply that said ``changes: since`` (``{"changed": true, "changes": N}``), or after
  ``seconds`` (at most 25; ``changed: false``); at once when the server stops. A
  ``done`` reply carries ``changes``: a page with nothing to label waits here, not on a
  timer, then asks ``api/next`` again (the page waits at most until the first claim of
  others lapses). Answered on the request's own thread: it never holds up the session's
  worker. A second server on the same file does not wake it: its changes are seen at
  the next ask. At most :data:`~activetest.web.api.WAITS_PER_BROWSER` waits of one
  ``browser`` (an id the page's tabs share) are held open; another is answered at once
  with ``crowded: true`` (the page then asks again on a timer, or when another of its
  tabs is woken): a browser opens only 6 connections to one address. A wait whose
  caller closed its connection (the tab was closed or crashed) ends within two
  :data:`GONE_POLL` s, freeing its slot; a caller that only half-closed it
  (``shutdown(SHUT_WR)``, a script) is waited for, its reply after an interim
  ``100 Continue`` (:class:`~activetest.web.http.ClientWatch`).
* ``POST api/alive {annotator, holding}``: the page is open (sent every
  ``heartbeat_seconds`` of ``api/state``); once an annotator's page has said so, their
  items go back to the others when no page of theirs has said so for ``silent_seconds``
  (a tab crashed or closed unheard), not only when the claims lapse. A page heard again
  after that (a frozen tab, a computer woken) gets ``released: true`` and the items of
  ``holding`` (the ids it shows and holds at hand) that nobody took meanwhile claimed
  again (``reclaimed``).
* ``POST api/undo {annotator}``: undo their last answer; the item comes back.
* ``POST api/release {annotator}``: give back every item they hold (the page is closed
  or left; a reload asks again).
* ``POST api/skip {annotator, item_id, next, ahead}``: set it aside for a second look.
* ``GET api/progress``: draws, labels, the estimate with its fixed-budget and
  anytime intervals, "you may stop now".
* ``GET api/disagreements`` and ``POST api/adjudicate {annotator, item_id, levels}``:
  for the adjudicators named at start.

API replies carry ``Server-Timing: app;dur=MS`` (the call's time in the server, for
the page's timings). Every session call runs on ONE worker thread that owns the session file's
connection (SQLite connections belong to their thread); request threads wait for
it, so answers are written one after another, each its own transaction.

HTTP (the transport, the token's check, reading bodies): :mod:`activetest.web.http`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from activetest.session.store_errors import SessionFileReplacedError
from activetest.web.api import (
    CALLS,
    WAITS_PER_BROWSER,
    WRITES,
    OtherSessionError,
    ServerStoppingError,
    SessionReplacedError,
    ahead_of,
    annotator_of,
    held_reply,
    holding_of,
    item_id_of,
    levels_of,
    wait_of,
)
from activetest.web.http import listen, make_handler
from activetest.web.server_options import SILENT_SECONDS, ServerOptions

__all__ = ["LabelServer", "SessionReplacedError", "serve", "session_id"]

#: The longest time between two ``api/alive`` of a page.
HEARTBEAT_SECONDS = 20.0

#: How often (seconds) a held ``api/wait`` looks whether its caller has left.
GONE_POLL = 0.5


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
        silent_seconds: (``--silent-seconds``) the items an annotator holds go back
            once no page of theirs has said it is open (``api/alive``, every
            :attr:`heartbeat_seconds`) for this long: a tab crashed or closed unheard
            (an annotator whose page never said so keeps the claims' own lapse,
            ``claim_seconds``).
        **options: :class:`~activetest.session.annotators.Annotators` options
            (``overlap``, ``reviews``, ``batch``, ``budget``, ``resolve``,
            ``claim_seconds``, ``show_guess``).

    Raises:
        ValueError: one of the server's own arguments is wrong, named
            (:meth:`~activetest.web.server_options.ServerOptions.check`, before the
            session file is opened), or the session cannot be served.
    """

    def __init__(self, path: str | Path, *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, adjudicators: Sequence[str] = (),
                 target_width: float | None = None, busy_timeout: float = 5.0,
                 silent_seconds: float = SILENT_SECONDS, **options: Any) -> None:
        self.path = Path(path)
        # each argument named when wrong, before the session is opened
        #: the server's own options, checked (:meth:`ServerOptions.check`)
        self.server_options = ServerOptions.check(
            host=host, port=port, token=token, adjudicators=adjudicators,
            target_width=target_width, busy_timeout=busy_timeout,
            silent_seconds=silent_seconds)
        self.token = self.server_options.token or secrets.token_urlsafe(18)
        self.adjudicators = self.server_options.adjudicators
        self.target_width = self.server_options.target_width
        self.silent_seconds = self.server_options.silent_seconds
        #: how often the page says it is open (api/alive): a few times per silent_seconds
        self.heartbeat_seconds = min(HEARTBEAT_SECONDS, self.silent_seconds / 4)
        self._heard: dict[str, float] = {}  # annotator -> their page's last api/alive
        self._released: set[str] = set()  # their items given back since (silent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session")
        # the progress line's estimate: its own thread and connection, so that computing
        # it never delays an answer (WAL: reads do not block the writer)
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="progress")
        self._session: Any = None
        self._annotators: Any = None
        self._progress_session: Any = None
        self._progress: tuple[Any, Any] = (None, None)
        self._busy_timeout = self.server_options.busy_timeout
        self._identity: tuple[int, int] | None = None
        # the store's refusal of a file copied over the session (same inode, content put
        # back): every call is refused from then on, as for a file moved over it
        self._put_back: str | None = None
        # api/wait: the count of calls that may have given someone an item (WRITES); a
        # random start, so that a count a page got from an earlier run is not taken for
        # this run's
        self._changed = threading.Condition()
        self._changes = secrets.randbelow(1 << 30)
        self._stopping = False
        self._waiting: dict[str, int] = {}  # browser -> its api/wait calls held open
        self._unchanged = False  # the session call running changed nothing (_checked_api)
        try:
            self._call(self._open, busy_timeout, options)
        except BaseException:
            self._pool.shutdown(wait=False)
            self._reader.shutdown(wait=False)
            raise
        try:
            self.httpd = listen(self.server_options.host, self.server_options.port,
                                make_handler(self.token, self.api))
        except BaseException:
            self._close_session()
            raise
        self._reaper = threading.Thread(target=self._reap, daemon=True,
                                        name="silent-pages")
        self._reaper.start()

    def _open(self, busy_timeout: float, options: dict[str, Any]) -> None:
        from activetest.session.annotators import Annotators
        from activetest.session.workflow import Session

        self._session = Session.open(self.path, busy_timeout=busy_timeout)
        # the file opened: every call checks that the path still names it (see _check_file)
        self._identity = _identity(self.path)
        self.session_id = session_id(self._session)
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
            SessionReplacedError: the path names another file, or none; or its content
                was replaced (a file copied over it: found by the store when it wrote,
                :meth:`_call`).
        """
        if self._put_back is not None:
            raise SessionReplacedError(
                f"{self.path}: the session file's content was replaced by a file copied "
                f"over it while the labelling page was serving it ({self._put_back}); "
                f"nothing was stored. Restart `activetest serve` to label the file now "
                f"there")
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
            done = self._pool.submit(fn, *args)
        except RuntimeError:  # the pool is shut down: the server is stopping
            raise ServerStoppingError() from None
        # (only the submit: a RuntimeError of the call itself, a fault in the server, was
        # answered "the labelling server is stopping", QA)
        try:
            return done.result()
        except SessionFileReplacedError as exc:  # the store's refusal of a file copied
            # (or moved) over the session: answered as a moved file is (409, restart
            # `serve`), not as a bad request (400, QA), and so every call from now on
            if self._put_back is None and _identity(self.path) == self._identity:
                self._put_back = _why_put_back(str(exc))  # (a moved file: _check_file)
            raise SessionReplacedError(f"{exc}. Restart `activetest serve` to label the "
                                       f"file now there") from None

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
        with self._changed:  # the pages waiting are answered: they ask again, and learn
            self._stopping = True
            self._changed.notify_all()
        reaper = getattr(self, "_reaper", None)
        if reaper is not None and reaper is not threading.current_thread():
            reaper.join(10)
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
            raise ServerStoppingError() from None

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

    def api(self, method: str, name: str, body: dict[str, Any],
            gone: Callable[[], bool] | None = None) -> Any:
        """One API call (run on the session's thread); returns JSON-able data. ``gone``:
        whether the caller has left meanwhile (its connection closed), which ends an
        ``api/wait`` at once.

        Raises:
            ValueError: a bad request (its message goes back to the page).
            SessionReplacedError: the session file was replaced under the server.
            KeyError: no such call.
        """
        if (method, name) not in CALLS:
            raise KeyError(name)
        if (method, name) == ("GET", "progress"):
            self._check_file()
            return self.progress()
        if (method, name) == ("POST", "wait"):
            return self._wait(*wait_of(body), gone=gone)
        if (method, name) == ("POST", "alive"):
            return self._alive(body)
        return self._call(self._checked_api, method, name, body)

    def _wait(self, since: int, seconds: float, browser: str | None,
              gone: Callable[[], bool] | None = None) -> dict[str, Any]:
        """``api/wait``: until the count of changes is not ``since`` any more, the server
        stops, ``seconds`` pass, or the caller leaves (``gone``: its tab was closed or
        crashed, checked every :data:`GONE_POLL` s; QA: a closed tab's wait held one of
        its browser's slots for up to 25 s) (on the caller's thread); at once
        (``crowded``) when ``browser`` holds :data:`WAITS_PER_BROWSER` waits open
        already."""
        with self._changed:
            if browser is not None:
                if self._waiting.get(browser, 0) >= WAITS_PER_BROWSER:
                    return {"changed": self._changes != since, "changes": self._changes,
                            "crowded": True}
                self._waiting[browser] = self._waiting.get(browser, 0) + 1
            try:
                deadline = time.monotonic() + seconds
                while self._changes == since and not self._stopping:
                    left = deadline - time.monotonic()
                    if left <= 0 or (gone is not None and gone()):
                        break
                    self._changed.wait(min(left, GONE_POLL))
                return {"changed": self._changes != since, "changes": self._changes}
            finally:
                if browser is not None:
                    self._waiting[browser] -= 1
                    if not self._waiting[browser]:
                        del self._waiting[browser]

    def _check_session(self, body: dict[str, Any]) -> None:
        """Refuse a call of a page loaded for another session than this address serves
        now (QA: its unsent answers went into whatever session was served at its port
        and token).

        Raises:
            OtherSessionError: the ``session_id`` sent is another session's.
        """
        sent = body.get("session_id") if isinstance(body, dict) else None
        if sent is not None and sent != self.session_id:
            raise OtherSessionError(
                f"this page was loaded for another session than the one this address "
                f"serves now ({self.path.name}, session {self.session_id}; the page's: "
                f"{str(sent)[:40]}); nothing was stored: reload the page to label "
                f"{self.path.name}, or serve the page's own session at this address")

    def _alive(self, body: dict[str, Any]) -> dict[str, Any]:
        """``api/alive {annotator}``: a page of ``annotator`` is open (the page says so
        every :attr:`heartbeat_seconds`); from the first, their items go back once no
        page of theirs has said so for :attr:`silent_seconds` (see :meth:`_reap`)."""
        self._check_session(body)
        who = annotator_of(body)
        holding = holding_of(body)
        with self._changed:
            self._heard[who] = time.monotonic()
            released = who in self._released
            self._released.discard(who)
        if not released:
            return {"ok": True, "silent_seconds": self.silent_seconds}
        # the page speaks again (a frozen tab, a computer woken): the items it shows and
        # holds at hand are claimed again, those nobody took meanwhile
        back = self._call(self._reclaim, who, holding) if holding else []
        return {"ok": True, "silent_seconds": self.silent_seconds, "released": True,
                "reclaimed": back}

    def _reclaim(self, who: str, holding: list[str]) -> list[str]:
        """:meth:`Annotators.reclaim` on the file this server opened (the session's
        thread)."""
        self._check_file()
        return self._annotators.reclaim(who, holding)  # type: ignore[no-any-return]

    def _reap(self) -> None:
        """The items of annotators whose pages have gone silent (no ``api/alive`` for
        :attr:`silent_seconds`: a tab crashed, or closed without a word) go back to
        the others, and the pages waiting for items are woken (QA: a crashed tab's items
        came back only when their claims lapsed, 10 min). Runs on its own thread until
        the server stops."""
        step = min(1.0, self.silent_seconds / 4)
        while True:
            with self._changed:
                if self._changed.wait_for(lambda: self._stopping, timeout=step):
                    return
                cut = time.monotonic() - self.silent_seconds
                silent = [who for who, at in self._heard.items() if at < cut]
                for who in silent:
                    del self._heard[who]
            for who in silent:
                try:
                    self._call(self._release_silent, who)
                except ServerStoppingError:
                    return
                except Exception as exc:  # e.g. the file replaced, locked: said, not fatal
                    print(f"activetest serve: the items of {who} (their page went silent) "
                          f"were not given back: {exc}", file=sys.stderr)

    def _release_silent(self, who: str) -> None:
        """Give back ``who``'s items (their pages went silent) and wake the waiting
        pages (on the session's thread)."""
        self._check_file()
        with self._changed:
            if who in self._heard:  # their page spoke again meanwhile
                return
            # marked before the release, in the check's lock: a page that speaks from
            # now on is told it was released and claims its items back (its reclaim
            # runs on this thread, after the release; QA: marked after, a page heard in
            # between kept showing items no longer claimed for one more heartbeat)
            self._released.add(who)
        if not self._annotators.release(who):
            return  # they held nothing: no change to wake the waiting pages for
        with self._changed:
            self._changes += 1
            self._changed.notify_all()

    def waits_held(self, browser: str) -> int:
        """How many ``api/wait`` calls of ``browser`` are held open now."""
        with self._changed:
            return self._waiting.get(browser, 0)

    def _checked_api(self, method: str, name: str, body: dict[str, Any]) -> Any:
        """:meth:`_api` on the file this server opened: checked before (nothing is
        stored in a replaced file) and, for the calls that write, after."""
        self._check_file()
        if method == "POST":
            self._check_session(body)
        out = None
        self._unchanged = False  # (set by a call found to have changed nothing)
        try:
            out = self._api(method, name, body)
        finally:
            if method == "POST" and name in WRITES and not self._unchanged:  # maybe
                # stored: the waiting pages ask
                with self._changed:
                    self._changes += 1
                    self._changed.notify_all()
                    if isinstance(out, dict) and "changes" in out:  # its own change: the
                        out["changes"] = self._changes  # reply has it, no wait for it
        if method == "POST":
            self._check_file(after=True)
        return out

    def _api(self, method: str, name: str, body: dict[str, Any]) -> Any:
        from activetest.session.annotators import agreement

        a = self._annotators
        s = self._session
        if (method, name) not in CALLS:
            raise KeyError(name)
        if (method, name) == ("GET", "state"):
            return {"layout": a.layout, "levels": list(a.levels), "task": s.task.name,
                    "session": self.path.name, "session_id": self.session_id,
                    "guess_shown": a.show_guess,
                    "n_answers": len(a.roles), "adjudication": bool(self.adjudicators),
                    "heartbeat_seconds": self.heartbeat_seconds,
                    "silent_seconds": self.silent_seconds}
        who = annotator_of(body)
        if (method, name) == ("POST", "hello"):
            return {"annotator": who, "adjudicator": who in self.adjudicators}
        if (method, name) == ("POST", "next"):
            return self._held_reply(who, a.held(who, ahead_of(body)))
        if (method, name) == ("POST", "answer"):
            if not body.get("next"):
                rows = a.answer(who, item_id_of(body), levels_of(body))  # committed
                return {"saved": len(rows), "again": not rows}
            # the next item(s) in the same reply and the same commit: one round trip
            # and one write to disk a label
            rows, held = a.answer_and_held(who, item_id_of(body), levels_of(body),
                                           ahead_of(body))
            return {"saved": len(rows), "again": not rows, **self._held_reply(who, held)}
        if (method, name) == ("POST", "answers"):
            raw = body.get("answers")
            if not isinstance(raw, list) or not 1 <= len(raw) <= 100 or not all(
                    isinstance(x, dict) for x in raw):
                raise ValueError("answers must be a list of 1 to 100 {item_id, levels}")
            given = [(item_id_of(x), levels_of(x)) for x in raw]
            try:
                results, held = a.answers_and_held(who, given, ahead_of(body))
            except Exception as exc:
                results = getattr(exc, "answers_saved", None)
                if results is None:  # nothing was stored
                    raise
                # stored, but no next item could be drawn: the page is told both (it was
                # told "not saved" of answers that were, and dropped them)
                return {"results": [
                    {"item_id": iid, "error": str(r)} if isinstance(r, Exception) else
                    {"item_id": iid, "saved": len(r), "again": not r}
                    for (iid, _), r in zip(given, results, strict=True)],
                    "next_error": f"{exc}" if isinstance(exc, ValueError)
                    else f"{type(exc).__name__}: {exc}"}
            return {"results": [
                {"item_id": iid, "error": str(r)} if isinstance(r, Exception) else
                {"item_id": iid, "saved": len(r), "again": not r}
                for (iid, _), r in zip(given, results, strict=True)], **self._held_reply(who, held)}
        if (method, name) == ("POST", "release"):  # the page goes: its items go back
            # nothing held: no change, the waiting pages are not woken (each asked for
            # its next item, for nothing, whenever a page with nothing at hand closed)
            self._unchanged = not a.release(who)
            return {"ok": True}
        if (method, name) == ("POST", "undo"):
            item = a.undo(who)
            return {"item": None if item is None else asdict(item)}
        if (method, name) == ("POST", "skip"):
            a.skip(who, item_id_of(body))
            return {"ok": True, **(self._held_reply(who, a.held(who, ahead_of(body)))
                                   if body.get("next")
                                   else {})}
        if who not in self.adjudicators:
            raise ValueError(f"{who!r} is not an adjudicator of this page (start it with "
                             f"--adjudicator NAME)")
        if (method, name) == ("POST", "disagreements"):
            report = agreement(s, n_boot=0)
            return {"disagreements": [asdict(d) for d in report.disagreements],
                    "order": self._orders([d.item_id for d in report.disagreements])}
        if (method, name) == ("POST", "adjudicate"):
            rows = a.answer(who, item_id_of(body), levels_of(body), adjudicate=True)
            return {"saved": len(rows)}
        raise KeyError(name)

    def _held_reply(self, who: str, items: Sequence[Any]) -> dict[str, Any]:
        """:func:`held_reply`; when nothing is left for ``who``, with how many drawn items
        others hold unanswered (``others_hold``) and the seconds until the first of their
        claims lapses (``lapse_seconds``): the page then says so and asks again (after
        ``api/wait``, with the ``changes`` count given here); and how
        many items ``who`` answered still ask for other annotators' answers
        (``others_needed``, an overlap item), and how many drawn items have differing
        answers and no label (``unsettled``): the page says so."""
        out = held_reply(items)
        if out.get("done"):
            out["changes"] = self._changes  # for api/wait
            n, lapse = self._annotators.held_by_others(who)
            if n:
                out.update(others_hold=n, lapse_seconds=lapse)
            wanting = self._annotators.wanting_others(who)
            if wanting:
                out.update(others_needed=wanting)
            unsettled = self._annotators.unsettled()
            if unsettled:
                out.update(unsettled=unsettled, adjudication=bool(self.adjudicators))
        return out

    def _orders(self, item_ids: Sequence[str]) -> dict[str, Any]:
        """item -> the item as shown (fields, answers in the stored order), read only (an
        item's order not stored yet, an imported vote's, drawn as it would be stored:
        the same seeded draw; each item was a commit, which waited for the write lock)."""
        from activetest.session.annotators import ItemState

        a = self._annotators
        out = {}
        drawn = {x.item_id: x for x in a.s.acquisitions()}
        with a.s.store.reading() as c:
            for iid in dict.fromkeys(item_ids):
                acq = drawn[iid]
                st = ItemState(acq.step, acq.index, iid)
                need, order = a._item_row(c, st, keep=False)
                out[iid] = {**asdict(a._assignment(st, need, order)),
                            "roles_hidden": len(order)}
        return out


def session_id(session: Any) -> str:
    """A short digest that tells one session from another (its creation instant and its
    config): the same in every copy of one session file, different for a session made
    again from the same pool. The page sends it with every call it makes."""
    import hashlib
    import json

    meta = session.store.meta()
    doc = json.dumps(session.store.config().to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(f"{meta.get('created', '')}\n{doc}".encode()).hexdigest()[:16]


def _why_put_back(message: str) -> str:
    """What the store's refusal ``message`` says the file now holds (the words in its
    parentheses: ``a file copied over it: ...``), or the whole message."""
    start = message.find("(")
    depth = 0
    for k in range(max(start, 0), len(message)):
        depth += {"(": 1, ")": -1}.get(message[k], 0)
        if start >= 0 and depth == 0:
            return message[start + 1:k]
    return message


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
