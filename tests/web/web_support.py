"""Sessions, servers and clients for the labelling page's tests: real session files
(prediction tables, a graded pool with a second target's answers), the real server
(in a thread, or as a child process killed with SIGKILL), plain HTTP clients."""

from __future__ import annotations

import csv
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activetest.session.workflow import Session
from activetest.web.server import LabelServer
from tests.session.session_support import PoolFiles, cli_env, make_pool_files

#: Item texts that would run script if a page put them in as HTML.
HOSTILE = ("<script>window.__pwned = 1</script>",
           '<img src="x" onerror="window.__pwned = 1">',
           '<a href="javascript:window.__pwned = 1" id="evil">click me</a>',
           '"><svg onload="window.__pwned = 1">',
           "</dd></dl><iframe src=\"javascript:parent.__pwned = 1\"></iframe>")


@dataclass(frozen=True)
class Made:
    """A session file and the truth its simulated annotators answer with."""

    db: Path
    truth: dict[str, int]  # item id -> 0-based class (judgment level)
    files: PoolFiles | None = None


def classification(root: Path, *, n: int = 60, seed: int = 3, hostile: bool = False,
                   acquisition: str = "adaptive", **kw: Any) -> Made:
    """A classification session over ``n`` demo reviews (table predictions); with
    ``hostile`` the first items' texts are :data:`HOSTILE`."""
    pf = make_pool_files(root / "data", n=n)
    if hostile:
        rows = list(csv.reader(pf.pool.open(encoding="utf-8")))
        for i, text in enumerate(HOSTILE * (n // len(HOSTILE))):
            rows[1 + i][1] = f"{text} (review {i})"
        with pf.pool.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(rows)
    db = root / "c.db"
    Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                   target=f"table:{pf.target}", seed=seed, progress=False,
                   pool_options={"id_column": "id"}, acquisition=acquisition, **kw).close()
    return Made(db, {i: int(y) for i, y in zip(pf.ids, pf.labels, strict=True)}, pf)


QUESTIONS = [("Which river flows through Cairo?", "Nile"),
             ("What is the capital of Japan?", "Tokyo"),
             ("Which planet is the largest?", "Jupiter"),
             ("Who wrote <b>Hamlet</b>? <script>window.__pwned = 1</script>", "Shakespeare")]


def graded(root: Path, *, n: int = 40, compare: bool = False, seed: int = 1) -> Made:
    """A graded session (the target's answers in the pool, a uniform surrogate); with
    ``compare`` a second target's answers are compared (the paired layout)."""
    root.mkdir(parents=True, exist_ok=True)
    pool, other = [], []
    truth = {}
    for i in range(n):
        q, ref = QUESTIONS[i % len(QUESTIONS)]
        a = ref if i % 3 else "banana"
        pool.append({"id": f"q{i}", "question": q, "context": f"context {i}",
                     "references": [ref], "answer": a})
        other.append({"id": f"q{i}", "answer": ref if i % 2 else "<i>cherry</i>",
                      "question": q})
        truth[f"q{i}"] = int(a == ref)
    p, b = root / "pool.jsonl", root / "b.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    b.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    db = root / ("paired.db" if compare else "graded.db")
    Session.create(db, pool=p, task="squad", target="pool", surrogate="uniform", seed=seed,
                   progress=False, **({"compare": [f"answers:{b}"]} if compare else {})
                   ).close()
    return Made(db, truth)


def same_text_item(a: Any, who: str) -> str:
    """The id of the first item of a paired session (``a``: its
    :class:`~activetest.session.annotators.Annotators`) whose two answers are the same
    text, claimed for ``who``; the items before it answered "correct" by ``who``."""
    for _ in range(40):
        it = a.next_item(who)
        assert it is not None
        if it.answers[0] == it.answers[1]:
            return str(it.item_id)
        a.answer(who, it.item_id, [1, 1])
    raise AssertionError("no item with two identical answers")


#: What the page waits before it sends again a call answered 503 (app.js ``patiently`` and
#: ``flush``: ``sleep(2000)``) when the server names no ``Retry-After``.
PAGE_RETRY_SECONDS = 2.0
#: How long :class:`Client` goes on sending again a call answered 503 (the page: for ever).
RETRY_SECONDS = 120.0


class Client:
    """A JSON client of the page's API (what app.js calls). A call answered 503 (another
    process holds the session's write lock, the file cannot be written now, the server is
    stopping: nothing was stored) is sent again, as the page does, after the reply's
    ``Retry-After`` seconds or the page's 2 s, for up to ``retry_seconds`` (then its 503
    is returned); each such reply is noted in :attr:`retried`. Every other status is
    returned as it came."""

    def __init__(self, url: str, annotator: str = "alice", *,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        self.url = url
        self.annotator = annotator
        self.retry_seconds = retry_seconds
        #: (call, error) of each 503 answered to this client, sent again after it
        self.retried: list[tuple[str, str]] = []

    def call(self, method: str, name: str, body: dict[str, Any] | None = None,
             timeout: float = 30.0) -> tuple[int, Any]:
        """``method api/name`` with ``body`` (and this client's annotator); returns the
        status and the JSON reply (a 503 sent again first, see the class)."""
        deadline = time.monotonic() + self.retry_seconds
        while True:
            status, data, after = self._once(method, name, body, timeout)
            pause = PAGE_RETRY_SECONDS if after is None else after
            if status != 503 or time.monotonic() + pause > deadline:
                return status, data
            error = data.get("error") if isinstance(data, dict) else data
            self.retried.append((name, str(error)))
            time.sleep(pause)  # the page's wait before it sends the call again

    def _once(self, method: str, name: str, body: dict[str, Any] | None, timeout: float,
              ) -> tuple[int, Any, float | None]:
        data = None
        if body is not None or method == "POST":
            data = json.dumps({"annotator": self.annotator, **(body or {})}).encode()
        req = urllib.request.Request(self.url + "api/" + name, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read()), None
        except urllib.error.HTTPError as e:
            after = e.headers.get("Retry-After", "")
            return (e.code, json.loads(e.read() or b"{}"),
                    float(after) if re.fullmatch(r"[0-9]+(\.[0-9]+)?", after.strip())
                    else None)

    def ok(self, method: str, name: str, body: dict[str, Any] | None = None) -> Any:
        status, data = self.call(method, name, body)
        assert status == 200, (status, data)
        return data

    def next(self) -> dict[str, Any] | None:
        r = self.ok("POST", "next")
        return None if r.get("done") else r["item"]

    def answer(self, item_id: str, *levels: int) -> Any:
        return self.ok("POST", "answer", {"item_id": item_id, "levels": list(levels)})


@contextmanager
def running(db: Path, **options: Any) -> Iterator[LabelServer]:
    """The real server over ``db`` in a thread of this process."""
    server = LabelServer(db, **options)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield server
    finally:
        server.shutdown()
        t.join(10)


@dataclass(frozen=True)
class Call:
    """One call the server handled, as :class:`CallLog` saw it (``time.monotonic()``)."""

    name: str  # the API call ("wait", "alive", "next", "release", ...), or "silent": the
    #            server's own giving back of a silent page's items
    who: str | None  # the annotator named (a wait: the browser's id)
    started: float
    ended: float
    changed: bool | None = None  # a wait: answered because something changed (True), or
    #                              its seconds ran out or its caller left (False); silent:
    #                              whether the items it held went back (its page had not
    #                              spoken again meanwhile)
    crowded: bool = False  # a wait answered at once: its browser holds two open already
    item: str | None = None  # next: the item given
    seconds: float | None = None  # a wait: the longest it was asked to be held

    @property
    def left_early(self) -> bool:
        """A wait that ended, nothing changed, well (1 s) before its seconds ran out: its
        caller left (the tab was closed), or the server stopped."""
        return (self.name == "wait" and self.changed is False and not self.crowded
                and self.seconds is not None and self.ended - self.started < self.seconds - 1)


class CallLog:
    """What a real :class:`LabelServer` handled, call by call, for tests that tell apart
    which mechanism brought something to a page (a wait woken by a change, or one that ran
    out) by the calls made, not by how long it took. It wraps the server's own methods on
    this one instance; every call still runs the server's code, unchanged."""

    def __init__(self, server: LabelServer) -> None:
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._probes: dict[str | None, int] = {}
        wait, alive, checked = server._wait, server._alive, server._checked_api
        silent = server._release_silent

        def logged_wait(since: int, seconds: float, browser: str | None,
                        gone: Any = None) -> dict[str, Any]:
            t0 = time.monotonic()

            def probed() -> bool:
                left = bool(gone())
                if not left:
                    with self._lock:
                        self._probes[browser] = self._probes.get(browser, 0) + 1
                return left

            out = wait(since, seconds, browser, gone=None if gone is None else probed)
            self._add(Call("wait", browser, t0, time.monotonic(), changed=bool(out["changed"]),
                           crowded=bool(out.get("crowded")), seconds=seconds))
            return out

        def logged_alive(body: dict[str, Any]) -> dict[str, Any]:
            t0 = time.monotonic()
            out = alive(body)
            self._add(Call("alive", body.get("annotator"), t0, time.monotonic()))
            return out

        def logged_api(method: str, name: str, body: dict[str, Any]) -> Any:
            t0 = time.monotonic()
            out = checked(method, name, body)
            given = out.get("item") if isinstance(out, dict) else None
            self._add(Call(name, body.get("annotator") if isinstance(body, dict) else None,
                           t0, time.monotonic(),
                           item=given.get("item_id") if isinstance(given, dict) else None))
            return out

        def logged_silent(who: str) -> None:  # on the session's thread, as every write
            t0, held = time.monotonic(), claims(server.path).get(who, 0)
            silent(who)
            self._add(Call("silent", who, t0, time.monotonic(),
                           changed=bool(held) and not claims(server.path).get(who)))

        server._wait = logged_wait  # type: ignore[method-assign]
        server._alive = logged_alive  # type: ignore[method-assign]
        server._checked_api = logged_api  # type: ignore[method-assign]
        server._release_silent = logged_silent  # type: ignore[method-assign]

    def _add(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)

    def calls(self, name: str | None = None, who: str | None = None) -> list[Call]:
        """The calls handled so far (of ``name``, naming ``who``), in the order they ended."""
        with self._lock:
            return [c for c in self._calls
                    if (name is None or c.name == name) and (who is None or c.who == who)]

    def probes(self, browser: str) -> int:
        """How many times a held wait of ``browser`` checked whether its caller had left
        and found it still there (every ``GONE_POLL`` s while it is held)."""
        with self._lock:
            return self._probes.get(browser, 0)

    def released(self, who: str) -> list[Call]:
        """The server's giving back of ``who``'s items for their pages' silence."""
        return [c for c in self.calls("silent", who) if c.changed]

    def last_wait(self, browser: str) -> Call | None:
        """The last ``api/wait`` of ``browser`` that was held (not answered ``crowded``)."""
        held = [c for c in self.calls("wait", browser) if not c.crowded]
        return held[-1] if held else None


URL = re.compile(r"(http://\S+/s/\S+/)")
#: How many of a child's last lines (stdout and stderr together) are kept for the failure
#: report of the test that started it.
KEEP_LINES = 200


class ChildOutput:
    """What a child process writes to its stdout and stderr, read as it writes it, to the
    end, by one daemon thread for each stream: a child that writes more than a pipe holds
    (64 KiB) while nobody reads blocks on that write for good (before, a served child's
    output was read only up to its URL line: a server that then wrote a page of warnings
    hung, and the test with it). Kept: the last ``keep`` lines of the two streams, in the
    order read, each with its stream's name; how many characters each stream gave; and the
    first line of stdout that ``watch`` finds (the URL)."""

    def __init__(self, proc: subprocess.Popen[str], *, keep: int = KEEP_LINES,
                 watch: re.Pattern[str] | None = None) -> None:
        self._changed = threading.Condition()
        self._lines: deque[tuple[str, str]] = deque(maxlen=keep)
        self._chars = {"stdout": 0, "stderr": 0}
        self._open = {"stdout", "stderr"}
        self._watch = watch
        self._found: re.Match[str] | None = None
        self._threads: list[threading.Thread] = []
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            assert stream is not None, f"the child's {name} is not a pipe"
            t = threading.Thread(target=self._drain, args=(name, stream), daemon=True,
                                 name=f"{name} of pid {proc.pid}")
            t.start()
            self._threads.append(t)

    def _drain(self, name: str, stream: Any) -> None:
        try:
            for line in stream:
                with self._changed:
                    self._lines.append((name, line.rstrip("\n")))
                    self._chars[name] += len(line)
                    if (self._found is None and self._watch is not None
                            and name == "stdout"):
                        self._found = self._watch.search(line)
                    self._changed.notify_all()
        except (OSError, ValueError):  # the stream was closed under the read
            pass
        finally:
            with self._changed:
                self._open.discard(name)
                self._changed.notify_all()
            stream.close()

    def until(self, check: Any, seconds: float) -> bool:
        """Wait (up to ``seconds``) until ``check(self)`` is true, or both streams have
        ended; returns ``check(self)`` then."""
        with self._changed:
            self._changed.wait_for(lambda: check(self) or not self._open, seconds)
            return bool(check(self))

    @property
    def found(self) -> re.Match[str] | None:
        """The ``watch`` pattern's match in the first stdout line it matched (None: not yet)."""
        with self._changed:
            return self._found

    @property
    def ended(self) -> bool:
        """Whether both streams have ended (the child and all that shared them exited)."""
        with self._changed:
            return not self._open

    def chars(self, stream: str) -> int:
        """How many characters ``stream`` ("stdout" or "stderr") has given so far."""
        with self._changed:
            return self._chars[stream]

    def lines(self, stream: str | None = None) -> list[str]:
        """The kept lines (the last :data:`KEEP_LINES`) of ``stream``, or of both."""
        with self._changed:
            return [text for name, text in self._lines if stream in (None, name)]

    def tail(self) -> str:
        """The kept lines of both streams, in the order read, each marked with its stream
        (for a failure message)."""
        with self._changed:
            return "\n".join(f"[{name}] {text}" for name, text in self._lines)

    def join(self, seconds: float = 30.0) -> None:
        """Wait (up to ``seconds`` in all) for both streams to end (after the child exits)."""
        deadline = time.monotonic() + seconds
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))


class Child(subprocess.Popen[str]):
    """A child process whose stdout and stderr are read as it writes them
    (:class:`ChildOutput`, its ``output``); each one made is listed for the failure report
    of the test that made it (:func:`children_started`, tests/web/conftest.py)."""

    def __init__(self, args: list[str], *, env: dict[str, str],
                 watch: re.Pattern[str] | None = None) -> None:
        super().__init__(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         encoding="utf-8", errors="replace", env=env)
        self.output = ChildOutput(self, watch=watch)
        _started.append(self)

    def report(self) -> str:
        """Its command, its state and its last lines, for a failure message."""
        state = "running" if self.poll() is None else f"exited {self.returncode}"
        return (f"{' '.join(map(str, self.args))} (pid {self.pid}, {state}); its last "
                f"{len(self.output.lines())} lines:\n{self.output.tail()}")


_started: list[Child] = []


def children_started(forget: bool = False) -> list[Child]:
    """The children made by :class:`Child` since this was last called with ``forget``
    (the current test's); with ``forget``, the list starts again empty after."""
    out = list(_started)
    if forget:
        _started.clear()
    return out


def start_child(db: Path, tmp: Path, *args: str) -> tuple[Child, str]:
    """``python -m activetest serve DB ARGS`` as a child process; returns it and its URL.
    Its output is read to the end as it writes it (:class:`ChildOutput`)."""
    proc = Child([sys.executable, "-m", "activetest", "serve", str(db), *args],
                 env=cli_env(tmp), watch=URL)
    seconds = 120  # generous: a loaded machine starts it slowly
    if proc.output.until(lambda out: out.found is not None, seconds):
        assert proc.output.found is not None
        return proc, proc.output.found.group(1)
    proc.kill()
    proc.wait(30)
    proc.output.join()
    raise AssertionError(f"the server did not print its URL (waited up to {seconds} s): "
                         f"{proc.report()}")


def until(check: Callable[[], Any], what: str, seconds: float = 60.0) -> Any:
    """Poll ``check()`` every 0.05 s until it is true; returns what it returned. Past
    ``seconds`` (generous: a loaded machine is slow, and a quick one does not wait) an
    AssertionError says what was waited for in vain."""
    deadline = time.monotonic() + seconds
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s in vain for {what}")
        time.sleep(0.05)
    return got


def fail_once(monkeypatch: Any, owner: Any, name: str, error: BaseException) -> None:
    """Make ``owner.name`` (a function or method) raise ``error`` on its next call only,
    then behave as before: a fault that cannot be caused on demand."""
    real = getattr(owner, name)
    fails = [error]

    def once(*args: Any, **kwargs: Any) -> Any:
        if fails:
            raise fails.pop()
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, once)


def claims(db: Path) -> dict[str, int]:
    """Annotator -> how many items the session file says they hold (claims) now."""
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT annotator, COUNT(*) FROM annotation_claims "
                                "GROUP BY annotator").fetchall())
    finally:
        con.close()


def kill9(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the child (no handler runs), reap it and read its output to the end (a
    :class:`Child`: its streams then end; others': closed)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(30)
    if isinstance(proc, Child):
        proc.output.join()
        return
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()


def environ_has_display_tools() -> bool:
    """Whether chromium and chromedriver are installed (the browser tests need both)."""
    return all(os.path.exists(p) for p in ("/usr/bin/chromium", "/usr/bin/chromedriver"))
