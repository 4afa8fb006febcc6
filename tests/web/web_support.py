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
from collections.abc import Iterator
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


class Client:
    """A JSON client of the page's API (what app.js calls)."""

    def __init__(self, url: str, annotator: str = "alice") -> None:
        self.url = url
        self.annotator = annotator

    def call(self, method: str, name: str, body: dict[str, Any] | None = None,
             timeout: float = 30.0) -> tuple[int, Any]:
        data = None
        if body is not None or method == "POST":
            data = json.dumps({"annotator": self.annotator, **(body or {})}).encode()
        req = urllib.request.Request(self.url + "api/" + name, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

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
        wait, alive, checked = server._wait, server._alive, server._checked_api
        silent = server._release_silent

        def logged_wait(since: int, seconds: float, browser: str | None,
                        gone: Any = None) -> dict[str, Any]:
            t0 = time.monotonic()
            out = wait(since, seconds, browser, gone=gone)
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

    def released(self, who: str) -> list[Call]:
        """The server's giving back of ``who``'s items for their pages' silence."""
        return [c for c in self.calls("silent", who) if c.changed]

    def last_wait(self, browser: str) -> Call | None:
        """The last ``api/wait`` of ``browser`` that was held (not answered ``crowded``)."""
        held = [c for c in self.calls("wait", browser) if not c.crowded]
        return held[-1] if held else None


URL = re.compile(r"(http://\S+/s/\S+/)")


def start_child(db: Path, tmp: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """``python -m activetest serve DB ARGS`` as a child process; returns it and its URL."""
    env = cli_env(tmp)
    proc = subprocess.Popen([sys.executable, "-m", "activetest", "serve", str(db), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout is not None
    deadline = time.monotonic() + 120  # generous: a loaded machine starts it slowly
    line = ""
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        m = URL.search(line)
        if m:
            return proc, m.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the server did not print its URL (waited up to 120 s): {line!r} "
                         f"{proc.stderr.read() if proc.stderr else ''}")


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
    """SIGKILL the child (no handler runs) and reap it."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(30)
    for f in (proc.stdout, proc.stderr):
        if f is not None:
            f.close()


def environ_has_display_tools() -> bool:
    """Whether chromium and chromedriver are installed (the browser tests need both)."""
    return all(os.path.exists(p) for p in ("/usr/bin/chromium", "/usr/bin/chromedriver"))
