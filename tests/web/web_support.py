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
