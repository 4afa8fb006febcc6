"""The labelling page's HTTP server: everything behind the token, the page's files from
the installed package, strict headers, clear errors, the `serve` command."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

import pytest

from activetest.session.annotators import Annotators
from activetest.session.workflow import Session
from tests.web.web_support import (
    HOSTILE,
    CallLog,
    Client,
    classification,
    fail_once,
    graded,
    kill9,
    running,
    same_text_item,
    start_child,
    until,
)


def _get(url: str, data: bytes | None = None, ctype: str = "application/json",
         ) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_the_page_ships_in_the_package_with_no_outside_reference() -> None:
    root = resources.files("activetest.web").joinpath("static")
    html = root.joinpath("index.html").read_text(encoding="utf-8")
    js = root.joinpath("app.js").read_text(encoding="utf-8")
    css = root.joinpath("app.css").read_text(encoding="utf-8")
    for text in (html, js, css):
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
    assert 'src="app.js"' in html and 'href="app.css"' in html
    # item text only ever goes in as text
    assert "innerHTML" not in js and "outerHTML" not in js and "insertAdjacentHTML" not in js
    assert "document.write" not in js and "eval(" not in js
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"web/static/*"' in pyproject  # installed as package data


def test_everything_is_behind_the_token(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db) as server:
        url = server.url
        assert url.startswith("http://127.0.0.1:") and f"/s/{server.token}/" in url
        assert len(server.token) >= 20
        status, headers, body = _get(url)
        assert status == 200 and b"<script src=\"app.js\"" in body
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        for name, ctype in (("app.js", "text/javascript"), ("app.css", "text/css")):
            status, headers, _ = _get(url + name)
            assert status == 200 and headers["Content-Type"].startswith(ctype)
        wrong = url.replace(server.token, "A" * len(server.token))
        root = url.split("/s/")[0] + "/"
        for bad in (wrong, wrong + "api/state", root, root + "api/state",
                    url.replace(server.token, server.token[:-1]) + "api/state",
                    # the token with more after it (QA: served, the check compared the
                    # token sent with itself and the path's start with the token)
                    url.replace(server.token, server.token + "x"),
                    url.replace(server.token, server.token + "x") + "api/state"):
            assert _get(bad)[0] == 404, bad
        assert _get(wrong + "api/next", b'{"annotator": "x"}')[0] == 404
        # the token without its slash: sent to the page's address
        status, _, body = _get(url[:-1])
        assert status == 200 and b"<!doctype html>" in body


def test_a_call_for_another_session_stores_nothing(tmp_path: Path) -> None:
    """A call naming another session than the one served (a page loaded for it, whose
    address now serves this one): 421, naming both, nothing stored; the state names the
    session's id, which a copy of the file shares and a session made again from the same
    pool does not; a call naming none (a page from before) is taken."""
    from activetest.web.server import session_id

    made = classification(tmp_path / "a")
    again = classification(tmp_path / "b")
    copy = tmp_path / "copy.db"
    shutil.copyfile(made.db, copy)
    with Session.open(made.db) as s, Session.open(again.db) as t, Session.open(copy) as u:
        assert session_id(s) == session_id(u) != session_id(t)
    with running(made.db) as server:
        c = Client(server.url)
        state = c.call("GET", "state")[1]
        assert state["session_id"] == server.session_id
        it = c.next()
        for name, body in (("answers", {"answers": [{"item_id": it["item_id"], "levels": [1]}]}),
                           ("answer", {"item_id": it["item_id"], "levels": [1]}),
                           ("next", {}), ("skip", {"item_id": it["item_id"]})):
            status, data = c.call("POST", name, {**body, "session_id": "0123456789abcdef"})
            assert status == 421 and "another session" in data["error"], (name, data)
            assert "0123456789abcdef" in data["error"] and server.session_id in data["error"]
        with Session.open(made.db) as s:
            assert s.labels() == {} and not Annotators(s).annotations()
        status, data = c.call("POST", "answer", {"item_id": it["item_id"], "levels": [1],
                                                 "session_id": state["session_id"]})
        assert status == 200 and data["saved"] == 1
        it = c.next()
        status, data = c.call("POST", "answer", {"item_id": it["item_id"], "levels": [2]})
        assert status == 200 and data["saved"] == 1  # a page from before names none


def test_api_errors_are_one_clear_message(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db) as server:
        c = Client(server.url)
        assert c.call("GET", "nope")[0] == 404
        status, data = c.call("POST", "next", {"annotator": ""})
        assert status == 400 and "name" in data["error"]
        it = c.next()
        for levels in ([3], ["1"], [], None, [True]):
            status, data = c.call("POST", "answer", {"item_id": it["item_id"],
                                                     "levels": levels})
            assert status == 400 and data["error"], levels
        for body in ({"answers": None}, {"answers": []}, {"answers": [1]},
                     {"answers": [{"item_id": it["item_id"], "levels": [9]}], "ahead": 9},
                     {"answers": [{"item_id": it["item_id"]}]}):
            status, data = c.call("POST", "answers", body)
            assert status == 400 and data["error"], body
        # an item's id missing or not text is named as such (QA: read as the item 'None',
        # "item 'None' is not a drawn item", which a pool may hold; a list as "['r3']")
        for name, extra in (("answer", {"levels": [1]}), ("skip", {}),
                            ("answer", {"item_id": [it["item_id"]], "levels": [1]}),
                            ("answers", {"answers": [{"levels": [1]}]})):
            status, data = c.call("POST", name, extra)
            assert status == 400 and "item_id" in data["error"], (name, extra, data)
        status, data = c.call("POST", "answers", {"answers": [
            {"item_id": it["item_id"], "levels": [9]}]})  # refused alone, with the reason
        assert status == 200 and "expected 1 level" in data["results"][0]["error"]
        status, _, body = _get(server.url + "api/next", b"not json")
        assert status == 400 and b"JSON" in body
        status, _, body = _get(server.url + "api/next", b'{"annotator": "a"}', "text/plain")
        assert status == 400
        status, data = c.call("POST", "disagreements")
        assert status == 400 and "adjudicator" in data["error"]
        # a Content-Length that is not a number: a clean reply (the connection then
        # closes), off the token and under it (it dropped the connection with a
        # traceback on the server's terminal)
        import socket
        from urllib.parse import urlsplit

        u = urlsplit(server.url)
        for path, want in (("/nope", b" 404 "), (u.path + "api/next", b" 400 ")):
            with socket.create_connection((u.hostname, u.port), timeout=30) as sock:
                sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             f"application/json\r\nContent-Length: abc\r\n\r\n".encode())
                reply = b""
                while chunk := sock.recv(4096):
                    reply += chunk
            assert reply.startswith(b"HTTP/1.1") and want in reply.split(b"\r\n")[0], reply
            if want == b" 400 ":
                assert b"bad Content-Length" in reply
        # setting aside an item that was never drawn is refused, as answering it is
        with Session.open(made.db) as s:
            drawn = {a.item_id for a in s.acquisitions()}
        undrawn = next(i for i in made.truth if i not in drawn)
        status, data = c.call("POST", "skip", {"item_id": undrawn})
        assert status == 400 and "not a drawn item" in data["error"]
    with Session.open(made.db) as s:
        assert s.labels() == {}


def test_item_text_comes_back_as_text(tmp_path: Path) -> None:
    made = classification(tmp_path, hostile=True, acquisition="uniform", n=40)
    with running(made.db, batch=40) as server:
        c = Client(server.url)
        texts = []
        for _ in range(40):
            it = c.next()
            texts.append(dict(it["fields"])["text"])
            c.answer(it["item_id"], 1)
        assert sum(any(h in t for h in HOSTILE) for t in texts) == 40


def test_serve_prints_its_url_and_shares_with_a_token(tmp_path: Path) -> None:
    made = classification(tmp_path)
    proc, url = start_child(made.db, tmp_path, "--host", "0.0.0.0", "--batch", "3")
    try:
        assert "/s/" in url
        c = Client(url.replace("0.0.0.0", "127.0.0.1"))
        state = c.ok("GET", "state")
        assert state["layout"] == "classification" and state["levels"] == ["negative",
                                                                            "positive"]
        it = c.next()
        c.answer(it["item_id"], 2)
    finally:
        kill9(proc)  # and the rest of what it printed (flushed with the URL) read
    rest = "\n".join(proc.output.lines("stdout")) + "\n"
    with Session.open(made.db) as s:
        assert s.labels() == {it["item_id"]: 1}
    # listening on every interface: the address to send to others too (QA: only
    # http://127.0.0.1:PORT/... was printed, which reaches nobody else)
    import socket
    from urllib.parse import urlsplit

    shared = url.replace(urlsplit(url).hostname or "", socket.gethostname(), 1)
    assert f"from other machines: {shared}  " in rest, rest



def test_a_served_child_that_writes_a_lot_after_its_url_is_read_to_the_end(
        tmp_path: Path) -> None:
    """A real `activetest serve` child writes far more than a pipe holds (64 KiB) after
    its URL line: connections reset under their requests, each a traceback on its stderr
    (http.server's own report). All of it is read as it is written, so the server goes
    on, and the last lines are kept for the test's failure report (QA: the child's output
    was read only up to its URL line; past a pipe's worth the server blocked on the write
    and the test hung until its time ran out)."""
    import struct
    from urllib.parse import urlsplit

    from tests.web.web_support import KEEP_LINES

    made = classification(tmp_path)
    proc, url = start_child(made.db, tmp_path, "--batch", "3")
    try:
        u = urlsplit(url)
        for _ in range(400):  # ~1.4 KB of traceback each (a few may end quietly)
            with socket.create_connection((u.hostname, u.port), timeout=30) as sock:
                sock.sendall(f"POST {u.path}api/next HTTP/1.1\r\nHost: x\r\nContent-Type: "
                             "application/json\r\nContent-Length: 100\r\n\r\n".encode())
                # closed with a reset (linger 0) before the body the server waits for
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        much = 4 * 65536  # four pipes' worth
        assert proc.output.until(lambda out: out.chars("stderr") > much, 120), (
            f"waited 120 s for the served child's stderr to pass {much} characters: read "
            f"{proc.output.chars('stderr')}; {proc.report()}")
        assert Client(url).ok("GET", "state")["layout"] == "classification"  # still serving
    finally:
        kill9(proc)
    # the last lines are kept, as many as asked: its tracebacks' (the URL line is gone)
    assert len(proc.output.lines()) == KEEP_LINES and proc.output.ended
    assert "ConnectionResetError" in proc.report() and url not in proc.report()


def test_a_failed_test_reports_the_last_lines_of_the_children_it_started(
        tmp_path: Path) -> None:
    """A test that fails after starting a child (:class:`Child`, as ``start_child``
    does) has the child's last lines, stdout and stderr, in its failure report beside its
    own failure (tests/web/conftest.py): what the server said before it went wrong (QA:
    lost with the pipe, read only up to the URL line)."""
    import os
    import subprocess
    import sys
    import textwrap

    root = Path(__file__).resolve().parents[2]
    inner = tmp_path / "test_inner.py"
    inner.write_text(textwrap.dedent("""\
        import os, sys
        from tests.web.web_support import Child

        def test_fails():
            code = 'import sys; print("said on stdout"); print("warned on stderr", file=sys.stderr)'
            child = Child([sys.executable, "-c", code], env=dict(os.environ))
            child.wait(60)
            child.output.join()
            assert False, "the inner test fails"
        """), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "tests.web.conftest", "--rootdir", str(tmp_path), str(inner)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "the inner test fails" in out, out
    assert "child pid" in out and "its last 2 lines" in out, out
    assert "[stdout] said on stdout" in out and "[stderr] warned on stderr" in out, out


def _ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_serve_listens_on_an_ipv6_address(tmp_path: Path) -> None:
    """``--host ::`` (every interface, IPv6 and IPv4) and ``--host ::1`` (QA: "cannot
    listen on :: port 0: Address family for hostname not supported", exit 2, while the
    URL and the announcement were written for them)."""
    made = classification(tmp_path)
    with running(made.db, host="::1", batch=3) as server:
        assert server.url.startswith("http://[::1]:"), server.url
        assert Client(server.url).ok("GET", "state")["layout"] == "classification"
    proc, url = start_child(made.db, tmp_path, "--host", "::", "--batch", "3")
    try:
        port = url.split("/s/")[0].rsplit(":", 1)[1]
        for host in ("127.0.0.1", "[::1]"):
            c = Client(f"http://{host}:{port}/s/" + url.split("/s/")[1])
            assert c.ok("GET", "state")["layout"] == "classification"
    finally:
        kill9(proc)


def test_claim_seconds_a_lapsed_claim_goes_to_the_next_person_and_late_answers_are_kept(
        tmp_path: Path) -> None:
    """`serve --claim-seconds`: while a claim is live nobody else gets the item; once it
    lapses the next person does; an answer to a lapsed claim is still stored."""
    import time

    made = classification(tmp_path)
    claim = 5.0  # alice's claim outlives the calls before the sleep, slow ones too (was 2 s)
    proc, url = start_child(made.db, tmp_path, "--batch", "5", "--claim-seconds", str(claim))
    try:
        alice, bob, carol = (Client(url, who) for who in ("alice", "bob", "carol"))
        t0 = time.monotonic()
        x = alice.next()
        y = bob.next()
        if time.monotonic() - t0 < claim:  # alice's claim was live when bob asked
            assert y["item_id"] != x["item_id"]
        assert alice.next()["item_id"] == x["item_id"]  # a reload renews it
        until(lambda: not _claimed_until(made.db, "alice") > time.time(),
              f"alice's claim to lapse (--claim-seconds {claim:g})")
        assert carol.next()["item_id"] == x["item_id"]  # lapsed: the next person gets it
        level = made.truth[x["item_id"]] + 1
        assert alice.answer(x["item_id"], level)["saved"] == 1  # late, still stored
        assert carol.answer(x["item_id"], level)["saved"] == 1  # hers too: both kept
        assert bob.answer(y["item_id"], 1)["saved"] == 1  # lapsed, nobody took it: stored
    finally:
        kill9(proc)
    with Session.open(made.db) as s:
        assert s.labels() == {x["item_id"]: level - 1, y["item_id"]: 0}
        from activetest.session.annotators import Annotators

        who = sorted((r.item_id, r.annotator) for r in Annotators(s).annotations())
        assert who == sorted([(x["item_id"], "alice"), (x["item_id"], "carol"),
                              (y["item_id"], "bob")])


def _claimed_until(db: Path, who: str) -> float:
    """When the last of ``who``'s claims in the session file lapses (``time.time()``; 0:
    none held)."""
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT MAX(expires) FROM annotation_claims WHERE annotator = ?",
                          (who,)).fetchone()
    finally:
        con.close()
    return float(row[0] or 0.0)


def test_serve_refuses_bad_options_with_one_message(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from activetest.cli import app

    made = classification(tmp_path)
    runner = CliRunner()
    for args, what in ((["--overlap", "1.5"], "--overlap"), (["--reviews", "1"], "--reviews"),
                       (["--batch", "0"], "--batch"), (["--target-width", "-1"],
                                                       "--target-width"),
                       (["--claim-seconds", "0"], "--claim-seconds"),
                       (["--claim-seconds", "nan"], "--claim-seconds"),
                       (["--silent-seconds", "0"], "--silent-seconds"),
                       (["--silent-seconds", "nan"], "--silent-seconds")):
        out = runner.invoke(app, ["serve", str(made.db), *args])
        assert out.exit_code == 2 and what in out.output, out.output
        assert "Traceback" not in out.output
    out = runner.invoke(app, ["serve", str(tmp_path / "none.db")])
    assert out.exit_code == 2 and "no session file" in out.output


def test_a_read_only_session_is_refused(tmp_path: Path) -> None:
    made = classification(tmp_path)
    made.db.chmod(0o444)
    try:
        import os

        if os.access(made.db, os.W_OK):
            pytest.skip("running as a user who can write read-only files")
        from activetest.web.server import LabelServer

        with pytest.raises(ValueError, match="read-only"):
            LabelServer(made.db)
    finally:
        made.db.chmod(0o644)


def test_the_test_client_sends_a_503_again_as_the_page_does(tmp_path: Path) -> None:
    """The page sends a call answered 503 (another process holds the session's write
    lock: nothing stored) again every 2 s; the tests' :class:`Client` does the same, so a
    test of several writers checks what people get, not a lock wait of a loaded machine
    (QA: the two-servers test failed on a 503 the page would have sent again). Past its
    ``retry_seconds`` the 503 is returned; every other refusal is returned at once."""
    import threading

    from tests.web.web_support import PAGE_RETRY_SECONDS

    made = classification(tmp_path)
    with running(made.db, batch=5, busy_timeout=0.3) as server:
        ann = Client(server.url, "ann")
        it = ann.next()
        con = sqlite3.connect(made.db, timeout=5, isolation_level=None,
                              check_same_thread=False)
        got: list[tuple[int, object]] = []
        con.execute("BEGIN IMMEDIATE")  # another process writing
        try:
            sender = threading.Thread(target=lambda: got.append(ann.call(
                "POST", "answer", {"item_id": it["item_id"], "levels": [2]})))
            sender.start()
            until(lambda: len(ann.retried) >= 2,
                  "ann's answer to be refused 503 twice while the file is locked")
            assert not got  # refused, sent again: nothing returned to the caller yet
        finally:
            con.execute("COMMIT")
        sender.join(60 + PAGE_RETRY_SECONDS)
        assert got and got[0][0] == 200 and got[0][1]["saved"] == 1, got  # type: ignore[index]
        assert all(name == "answer" and "locked" in error for name, error in ann.retried), (
            ann.retried)
        with Session.open(made.db) as s:  # stored once: the refused sends stored nothing
            assert s.labels() == {it["item_id"]: 1}
            assert len(Annotators(s).annotations(include_undone=True)) == 1
        # bounded: with no time left to send it again, the 503 is what the caller gets
        once = Client(server.url, "bob", retry_seconds=0)
        con.execute("BEGIN IMMEDIATE")
        try:
            status, data = once.call("POST", "next")
        finally:
            con.execute("COMMIT")
        assert status == 503 and data["retry"] and "locked" in data["error"], data
        assert len(once.retried) == 0
        con.close()
        # every other status is the caller's at once: not sent again
        before = list(ann.retried)
        status, data = ann.call("POST", "answer", {"item_id": it["item_id"], "levels": [9]})
        assert status == 400 and ann.retried == before, data


def test_json_of_an_assignment_is_plain(tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db, show_guess=True) as server:
        it = Client(server.url).next()
        assert set(it) == {"item_id", "step", "fields", "answers", "need", "answered_by",
                           "guess", "again"}
        json.dumps(it)


def test_two_servers_on_one_file_and_two_people_at_once_never_share_an_item(
        tmp_path: Path) -> None:
    """Two `serve` processes on the same session file, a person on each, labelling at
    the same time: every item is answered by exactly one of them, every answer is the
    session's label, and the draws are whole batches.

    A call answered 503 "retry" (nothing stored: the other server held the session's
    write lock past this one's busy timeout) is sent again, as the page does
    (:class:`Client`); any other refusal fails the test. QA (a stress run on a loaded
    2-core machine): a server's first draw, which loads numba's kernels inside its write
    transaction, held the lock past the other's 5 s busy timeout; the person, unlike the
    page, took the 503 for a failure. Every run passes through that refusal here (the
    lock held until both were told); whatever was said "retry" must have stored nothing:
    the counts below check it."""
    import threading
    import time

    from activetest.session.annotators import Annotators

    made = classification(tmp_path)
    procs = [start_child(made.db, tmp_path, "--batch", "4", "--n", "24") for _ in range(2)]
    answered: dict[str, list[str]] = {"alice": [], "bob": []}
    errors: list[str] = []
    clients = {name: Client(url, name)
               for (_, url), name in zip(procs, ("alice", "bob"), strict=True)}

    ready = threading.Barrier(2)

    def person(c: Client, name: str) -> None:
        try:
            it = c.next()  # each holds a claimed item before either answers, so both
            ready.wait(120)  # take part however differently fast the two servers start
            while it is not None:
                status, data = c.call("POST", "answer", {"item_id": it["item_id"],
                                                         "levels": [1]})
                if status == 200:
                    answered[name].append(it["item_id"])
                else:
                    errors.append(f"{name}: {data}")
                it = c.next()
        except Exception as exc:  # reported below
            errors.append(f"{name}: {exc!r}")

    # the session's write lock held (as a server's first draw can hold it past the
    # other's busy timeout) until both persons were told 503 "retry": every run passes
    # through the refusal, not only a loaded one
    holder = sqlite3.connect(made.db, timeout=5, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        threads = [threading.Thread(target=person, args=(c, name))
                   for name, c in clients.items()]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while not all(c.retried for c in clients.values()):
            assert time.monotonic() < deadline and not errors, (
                "waited 120 s in vain for both persons' first `next` to be answered 503 "
                "retry under the held lock", errors)
            time.sleep(0.05)
        holder.execute("COMMIT")
        for t in threads:
            t.join(300)
    finally:
        holder.close()
        for proc, _ in procs:
            kill9(proc)
    retried = [r for c in clients.values() for r in c.retried]
    assert not errors, (errors, retried)
    assert any("locked" in why for _, why in retried), retried
    both = set(answered["alice"]) & set(answered["bob"])
    assert not both
    assert len(answered["alice"]) + len(answered["bob"]) == 24
    assert answered["alice"] and answered["bob"]  # both took part
    with Session.open(made.db) as s:
        assert set(s.labels()) == set(answered["alice"]) | set(answered["bob"])
        assert s.store.n_acquired() == 24
        assert len(Annotators(s).annotations()) == 24


def _exchange(url: str, data: bytes, timeout: float = 30.0) -> list[bytes]:
    """Send raw bytes on one connection and read until the server closes it; returns
    the status lines of the replies read (a reset while reading fails the test)."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    statuses = []
    while reply:  # each reply: its head, then Content-Length bytes of body
        head, _, reply = reply.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        statuses.append(lines[0])
        length = next((int(x.split(b":")[1]) for x in lines
                       if x.lower().startswith(b"content-length:")), 0)
        reply = reply[length:]
    return statuses


def _request(method: str, path: str, body: bytes = b"", *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in (f"{method} {path} HTTP/1.1", "Host: x", *headers))
    return head.encode() + b"\r\n" + body


def _answer_request(path: str, item_id: str) -> bytes:
    body = json.dumps({"annotator": "smuggled", "item_id": item_id, "levels": [1]}).encode()
    return _request("POST", path + "api/answer", body, "Content-Type: application/json",
                    f"Content-Length: {len(body)}", "Connection: close")


def test_a_body_is_never_taken_for_the_next_request(tmp_path: Path) -> None:
    """A request's body on a kept-alive connection is never run as a request of its own
    (QA: a POST refused as not JSON whose body was a whole `POST api/answer` got 400,
    then 200 saved: the body was read as the next request): whatever the refusal, the
    body is read or the connection ends; a chunked body is refused (411)."""
    from urllib.parse import urlsplit

    from activetest.session.annotators import Annotators

    made = classification(tmp_path)
    with running(made.db) as server:
        path = urlsplit(server.url).path
        item = Client(server.url).next()["item_id"]  # drawn, alice holds it
        inner = _answer_request(path, item)
        # refused as not JSON (text/plain), its body a whole request
        replies = _exchange(server.url, _request(
            "POST", path + "api/next", inner, "Content-Type: text/plain",
            f"Content-Length: {len(inner)}"))
        assert len(replies) == 1 and b" 400 " in replies[0], replies
        # refused by the API (no annotator): the same
        replies = _exchange(server.url, _request(
            "POST", path + "api/next", b"{}" + inner, "Content-Type: application/json",
            "Content-Length: 2"))
        assert len(replies) == 1 and b" 400 " in replies[0], replies
        # a chunked body (no Content-Length): refused, never read as a request
        replies = _exchange(server.url, _request(
            "POST", path + "api/answer", inner, "Content-Type: application/json",
            "Transfer-Encoding: chunked"))
        assert len(replies) == 1 and b" 411 " in replies[0], replies
        # a GET with a body: the body is read and dropped, the connection goes on
        replies = _exchange(server.url, _request(
            "GET", path + "api/state", inner, f"Content-Length: {len(inner)}")
            + _request("GET", path + "app.css", b"", "Connection: close"))
        assert len(replies) == 2 and all(b" 200 " in r for r in replies), replies
        # off the token too
        replies = _exchange(server.url, _request(
            "POST", "/nope", inner, f"Content-Length: {len(inner)}"))
        assert len(replies) == 1 and b" 404 " in replies[0], replies
        assert Client(server.url).ok("GET", "state")["layout"] == "classification"
    with Session.open(made.db) as s:
        assert s.labels() == {}
        assert Annotators(s).annotations() == []


def test_a_session_file_replaced_under_the_server_takes_no_answer(tmp_path: Path) -> None:
    """`init --overwrite` (or anything) replaces the session file while the page serves
    it: the page refuses to store (409, restart `serve`) instead of answering "saved"
    into the replaced file nobody reads any more (QA)."""
    import os

    made = classification(tmp_path / "served")
    other = classification(tmp_path / "other")
    with running(made.db) as server:
        c = Client(server.url)
        it = c.next()
        # what `init --overwrite` does: a new file renamed over the path
        for suffix in ("-wal", "-shm"):
            Path(f"{made.db}{suffix}").unlink(missing_ok=True)
        os.replace(other.db, made.db)
        for name, body in (("answer", {"item_id": it["item_id"], "levels": [1]}),
                           ("next", {}), ("skip", {"item_id": it["item_id"]})):
            status, data = c.call("POST", name, body)
            assert status == 409, (name, status, data)
            assert "replaced" in data["error"] and "activetest serve" in data["error"]
        status, data = c.call("GET", "progress")
        assert status == 409 and "replaced" in data["error"]
    with Session.open(made.db) as s:  # the new file: untouched
        assert s.labels() == {} and s.store.n_acquired() == 0


def test_a_file_copied_over_the_session_is_answered_as_a_moved_one(tmp_path: Path) -> None:
    """A backup copied over the session file while the page serves it (``cp``: the same
    inode, its content put back), which the store refuses to write into: the page gets
    the 409 (restart ``serve``) a file moved over it gets, for that call and every later
    one, not a 400 (a bad request: QA); the answer saved before is kept in the sheet the
    message names."""
    import os
    import subprocess

    made = classification(tmp_path / "served")
    backup = tmp_path / "backup.db"
    shutil.copyfile(made.db, backup)  # no label yet
    inode = os.stat(made.db).st_ino
    with running(made.db) as server:
        c = Client(server.url)
        first = c.next()["item_id"]
        status, data = c.call("POST", "answer", {"item_id": first, "levels": [2]})
        assert status == 200 and data["saved"] == 1, (status, data)
        it = c.next()
        subprocess.run(["cp", str(backup), str(made.db)], check=True)
        assert os.stat(made.db).st_ino == inode  # the same file, its content replaced
        status, data = c.call("POST", "answer", {"item_id": it["item_id"], "levels": [1]})
        assert status == 409, (status, data)
        msg = data["error"]
        assert "content was replaced" in msg and "activetest serve" in msg, msg
        (sheet,) = tmp_path.glob("served/c.unsaved-*.csv")
        assert str(sheet) in msg, msg
        for method, name, body in (("POST", "next", {}), ("GET", "progress", None),
                                   ("POST", "skip", {"item_id": it["item_id"]}),
                                   ("POST", "answers", {"answers": [
                                       {"item_id": it["item_id"], "levels": [1]}]})):
            status, data = c.call(method, name, body)
            assert status == 409, (name, status, data)
            assert "copied over it" in data["error"] and "activetest serve" in data["error"]
            assert "write(s) behind what this command saw)" in data["error"], data
    with sheet.open(encoding="utf-8") as f:
        assert f"{first},1," in f.read()  # the answer saved before: kept (class 1 from 0)
    with Session.open(made.db) as s:  # the backup's content: nothing written into it
        assert s.labels() == {}


def test_a_burst_of_answers_gets_a_reply_each(tmp_path: Path) -> None:
    """30 people answer one item at the same moment: every request gets an HTTP reply
    (QA: some got their connection reset, the listen queue was 5 long), exactly one
    answer is stored."""
    import threading

    made = classification(tmp_path)
    n = 30
    with running(made.db) as server:
        item = Client(server.url).next()["item_id"]
        statuses: list[int] = []
        errors: list[str] = []
        start = threading.Barrier(n)

        def answer(k: int) -> None:
            c = Client(server.url, f"person{k}")
            try:
                start.wait(60)
                statuses.append(c.call("POST", "answer", {"item_id": item,
                                                          "levels": [1]})[0])
            except Exception as exc:  # reported below
                errors.append(repr(exc))

        threads = [threading.Thread(target=answer, args=(k,)) for k in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not errors, errors
    assert len(statuses) == n and statuses.count(200) == 1 and set(statuses) <= {200, 400}
    with Session.open(made.db) as s:
        from activetest.session.annotators import Annotators

        assert s.labels() == {item: 0}
        assert len(Annotators(s).annotations()) == 1


def test_a_deeply_nested_request_is_refused_as_bad(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A small body nested 20000 deep: 400 with one clear message (it was a 500 with
    a RecursionError, printed on the server's terminal)."""
    made = classification(tmp_path)
    with running(made.db) as server:
        body = b'{"annotator": "alice", "a": ' + b"[" * 20000 + b"]" * 20000 + b"}"
        status, _, reply = _get(server.url + "api/answer", body)
        assert status == 400
        assert "nested too deeply" in json.loads(reply)["error"]
        assert Client(server.url).ok("GET", "state")  # the server goes on
    assert "RecursionError" not in capsys.readouterr().err


def test_serve_on_a_full_disk_says_the_disk_is_full(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`serve` on a session whose disk is full says so (it said "read-only"). A full
    disk cannot be made in CI: SQLite's own error on opening the file ("database or
    disk is full") is raised instead, and the disk is reported full, so the store takes
    its real path (opened read-only, knowing why)."""
    import sqlite3

    from typer.testing import CliRunner

    from activetest.cli import app
    from activetest.session import store
    from activetest.web.server import LabelServer

    made = classification(tmp_path)
    real = store._quick_check
    calls = []

    def full_once(conn: sqlite3.Connection, p: Path) -> None:
        calls.append(p)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        real(conn, p)

    monkeypatch.setattr(store, "disk_full", lambda p, margin=0: True)
    monkeypatch.setattr(store, "_quick_check", full_once)
    with pytest.raises(ValueError, match="disk is full") as err:
        LabelServer(made.db)
    assert "read-only" not in str(err.value) and str(made.db) in str(err.value)
    calls.clear()
    out = CliRunner().invoke(app, ["serve", str(made.db)])
    assert out.exit_code == 2 and "disk is full" in out.output, out.output
    assert "read-only" not in out.output and "Traceback" not in out.output


def test_answers_stored_before_the_next_item_fails_are_said_saved(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers sent together are committed, then the next item cannot be drawn (a fault
    that cannot be caused on demand: ``Annotators.held`` made to fail once): the reply
    says each answer saved and why no next item came (it was a 400, which the page read
    as "not saved" and dropped the answers from the tab; QA); the next call draws."""
    from activetest.session import annotators

    made = classification(tmp_path)
    with running(made.db) as server:
        c = Client(server.url)
        first = c.next()
        fail_once(monkeypatch, annotators.Annotators, "held",
                  ValueError("no item could be drawn just now"))
        status, data = c.call("POST", "answers", {"answers": [
            {"item_id": first["item_id"], "levels": [1]}], "ahead": 0})
        assert status == 200, data
        assert data["results"] == [{"item_id": first["item_id"], "saved": 1, "again": False}]
        assert data["next_error"] == "no item could be drawn just now"
        with Session.open(made.db) as s:
            assert [a.item_id for a in Annotators(s).annotations()] == [first["item_id"]]
        assert c.next() is not None


def test_an_annotator_must_be_named_with_text(tmp_path: Path) -> None:
    """`"annotator": 5` (or true, a list) is refused with one message; nothing is drawn
    or stored for it (it was taken as the name "5")."""
    made = classification(tmp_path)
    with running(made.db) as server:
        c = Client(server.url)
        for who in (5, 1.5, True, ["alice"], {"n": "alice"}):
            for name in ("next", "hello", "answer"):
                status, data = c.call("POST", name, {"annotator": who, "item_id": "x",
                                                     "levels": [1]})
                assert status == 400 and "must be text" in data["error"], (who, data)
    with Session.open(made.db) as s:
        assert s.store.n_acquired() == 0 and s.labels() == {}


def test_a_port_in_use_is_named_with_a_way_out(tmp_path: Path) -> None:
    """`serve --port N` where N is taken: one message naming the port and `--port 0`
    (it said only "Address already in use"); the session file is let go."""
    import socket

    from typer.testing import CliRunner

    from activetest.cli import app
    from activetest.web.server import LabelServer

    made = classification(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ValueError, match=f"port {port} .*already in use") as err:
            LabelServer(made.db, port=port)
        assert "--port 0" in str(err.value)
        out = CliRunner().invoke(app, ["serve", str(made.db), "--port", str(port)])
        assert out.exit_code == 2, out.output
        assert f"port {port}" in out.output and "--port 0" in out.output
        assert "Traceback" not in out.output
    with running(made.db, port=port) as server:  # free again: it serves there
        assert f":{port}/" in server.url
        assert Client(server.url).ok("GET", "state")


def test_a_port_outside_the_range_is_one_message(tmp_path: Path) -> None:
    """`serve --port 70000` (or -1): exit 2 with one message, no traceback (QA: it ended
    in `OverflowError: bind(): port must be 0-65535`, exit 1); in Python a ValueError."""
    import subprocess

    from activetest.web.server import LabelServer
    from tests.session.session_support import cli_command, cli_env

    made = classification(tmp_path)
    for port in ("70000", "-1"):
        proc = subprocess.run(cli_command("serve", str(made.db), "--port", port),
                              env=cli_env(tmp_path), capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("error:") == 1 and "0..65535" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and port in proc.stderr
    with pytest.raises(ValueError, match=r"0\.\.65535"):
        LabelServer(made.db, port=70000)


def test_a_refused_body_left_unread_does_not_cost_the_reply(tmp_path: Path) -> None:
    """A body too large to read (or chunked) is refused and left unread; the reply still
    reaches the client (closing a connection with unread data resets it, which can
    destroy the reply before it is read): the server reads and drops the rest first."""
    import socket
    from urllib.parse import urlsplit

    made = classification(tmp_path)
    with running(made.db) as server:
        u = urlsplit(server.url)
        body = b" " * (1 << 19)  # 512 KiB: over the limit, sent whole before reading
        for head in (f"Content-Length: {len(body)}", "Transfer-Encoding: chunked"):
            data = _request("POST", u.path + "api/answer", body,
                            "Content-Type: application/json", head)
            with socket.create_connection((u.hostname, u.port), timeout=30) as sock:
                sock.sendall(data)
                reply = b""
                while chunk := sock.recv(65536):
                    reply += chunk
            status = reply.split(b"\r\n", 1)[0]
            assert b" 400 " in status or b" 411 " in status, reply[:200]
            assert b"Connection: close" in reply


def test_wait_answers_when_another_gives_an_item_back_or_after_its_seconds(
        tmp_path: Path) -> None:
    """``api/wait``: a person with nothing to label waits for the others, not on a timer:
    the call answers as soon as another person gives items back (or answers, skips), after
    ``seconds`` when nothing happens, at once for a count of changes not current, and as
    soon as the server stops; bad values are one 400 each (QA: the page asked every 30 s)."""
    import threading
    import time

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5) as server:
        ann, bob = Client(server.url, "ann"), Client(server.url, "bob")
        ann.ok("POST", "next", {"ahead": 4})  # ann holds the budget's five
        done = bob.ok("POST", "next")
        assert done["done"] and done["others_hold"] == 5 and isinstance(done["changes"], int)
        for body in ({}, {"since": "1"}, {"since": True}, {"since": 1, "seconds": 26},
                     {"since": 1, "seconds": -1}, {"since": 1, "seconds": "2"}):
            status, data = bob.call("POST", "wait", body)
            assert status == 400 and data["error"], body
        t0 = time.monotonic()  # nothing happens: after its seconds, unchanged
        assert bob.ok("POST", "wait", {"since": done["changes"], "seconds": 0.5}) == {
            "changed": False, "changes": done["changes"]}
        assert time.monotonic() - t0 >= 0.5
        # a count not current (another run's, or a change since): at once
        assert bob.ok("POST", "wait", {"since": done["changes"] - 1, "seconds": 20})["changed"]
        timer = threading.Timer(1.0, lambda: ann.ok("POST", "release"))
        t0 = time.monotonic()
        timer.start()
        try:
            woke = bob.ok("POST", "wait", {"since": done["changes"], "seconds": 20})
        finally:
            timer.join()
        assert woke["changed"] and woke["changes"] != done["changes"]
        assert time.monotonic() - t0 < 10
        item = bob.next()  # the items ann gave back
        assert item is not None
        # the reply to one's own last answer counts that answer: no wake for it
        held = bob.ok("POST", "next", {"ahead": 4})
        for it in [held["item"], *held["ahead"]][:-1]:
            bob.answer(it["item_id"], 1)
        last = bob.ok("POST", "answer", {"item_id": held["ahead"][-1]["item_id"],
                                         "levels": [1], "next": True})
        assert last["done"] and not bob.ok("POST", "wait", {"since": last["changes"],
                                                            "seconds": 0.2})["changed"]
        stopped: list[float] = []

        def wait_then_note() -> None:
            ann.call("POST", "wait", {"since": last["changes"], "seconds": 20,
                                      "browser": "ann-page"})
            stopped.append(time.monotonic())

        waiter = threading.Thread(target=wait_then_note)
        waiter.start()
        until(lambda: server.waits_held("ann-page") == 1,
              "ann's wait to be held by the server before it stops")
        t0 = time.monotonic()
    waiter.join(20)  # the server stopped: the wait answered then
    assert stopped and stopped[0] - t0 < 10


def test_a_second_answer_to_an_item_says_what_u_would_undo(tmp_path: Path) -> None:
    """Two tabs of one person: item X answered in one, then the next item too; the other
    tab answers X differently and is refused. The refusal names what u undoes, the last
    answer (the later item, not X), and how X's answer is changed (QA: "press u to undo
    your last answer first" said, and u undid the other item); with X the last answer it
    says that u undoes X."""
    made = classification(tmp_path)
    with running(made.db, batch=5) as server:
        alice = Client(server.url, "alice")
        x = alice.next()["item_id"]
        alice.answer(x, 1)
        y = alice.next()["item_id"]
        status, r = alice.call("POST", "answer", {"item_id": x, "levels": [2]})
        assert status == 400 and "u undoes it" in r["error"], r
        alice.answer(y, 2)
        status, r = alice.call("POST", "answer", {"item_id": x, "levels": [2]})
        assert status == 400, r
        msg = r["error"]
        assert f"you answered item {x!r} already" in msg and "your answer stands" in msg
        assert f"last answer, which is item {y!r}, not this one" in msg, msg
        assert "press u 2 times" in msg and "first" not in msg
        status, r = alice.call("POST", "answers", {"answers": [
            {"item_id": x, "levels": [2]}]})
        assert status == 200 and f"item {y!r}" in r["results"][0]["error"], r
        assert alice.ok("POST", "undo")["item"]["item_id"] == y  # what it said
    with Session.open(made.db) as s:
        assert {a.item_id: a.label for a in Annotators(s).annotations()} == {x: 0}


def test_an_answer_the_page_sent_that_was_refused_does_not_stop_the_next(
        tmp_path: Path) -> None:
    """The page's answers (``api/answers``), one refused after it wrote its label (the
    target's answer "correct", the same text as the compared answer an import judged
    "incorrect"): the next answer was refused with a 409, "the session file's content
    was replaced" (a backup copied over it: none was), and a sheet of a label never
    saved was left beside the file. Now the refusal is that item's alone and the next
    answer is stored."""
    made = graded(tmp_path, compare=True)
    with Session.open(made.db) as s:
        same = same_text_item(Annotators(s, batch=40, budget=40), "alice")
        s.judge(same, 0, target=s.compared_targets()[0], source="import:j.csv")
    with running(made.db, batch=40, budget=40) as server:
        c = Client(server.url, "alice")
        status, r = c.call("POST", "answers", {"answers": [  # (the page counts from 1)
            {"item_id": same, "levels": [2, 2]}]})
        assert status == 200 and "judged 'incorrect' elsewhere" in r["results"][0].get(
            "error", ""), r
        status, r = c.call("POST", "answers", {"answers": [
            {"item_id": same, "levels": [1, 1]}]})
        assert status == 200 and r["results"] == [
            {"item_id": same, "saved": 2, "again": False}], (status, r)
    assert not list(tmp_path.glob("*.unsaved-*.csv"))
    with Session.open(made.db) as s:
        assert s.labels()[same] == 0


def test_a_second_annotators_answer_on_a_same_text_item_is_stored_through_the_page(
        tmp_path: Path) -> None:
    """Two annotators on an item whose two answers are the same text (overlap, --resolve
    latest): alice's "correct, correct", then bob's "incorrect, incorrect" sent by the
    page (``api/answers``) was refused (after the target's label was written, the compared
    judgment still alice's differed) with "--overwrite" and the hidden target's file in
    the message. Now it is saved, and the item settled as bob's, for both answers."""
    made = graded(tmp_path, compare=True)
    with Session.open(made.db) as s:
        spec = s.compared_targets()[0]
        a = Annotators(s, batch=40, budget=40, overlap=1.0, resolve="latest")
        same = same_text_item(a, "alice")
        a.answer("alice", same, [1, 1])
    with running(made.db, batch=40, budget=40, overlap=1.0, resolve="latest") as server:
        bob = Client(server.url, "bob")
        for _ in range(40):
            it = bob.next()
            assert it is not None
            if it["item_id"] == same:
                break
            bob.ok("POST", "answers", {"answers": [{"item_id": it["item_id"],
                                                    "levels": [2, 2]}]})
        status, r = bob.call("POST", "answers", {"answers": [  # (the page counts from 1)
            {"item_id": same, "levels": [1, 1]}]})
        assert status == 200 and r["results"] == [
            {"item_id": same, "saved": 2, "again": False}], (status, r)
    with Session.open(made.db) as s:
        row = s.store.index_of(same)
        got = (s.store.labels()[row], s.store.judgments(f"compare:{spec}")[row])
        assert [(x.label, x.source) for x in got] == [(0, "web (latest: bob)")] * 2


def test_waits_of_one_browser_beyond_two_are_answered_at_once(tmp_path: Path) -> None:
    """A browser opens 6 connections to one address: two ``api/wait`` calls of one
    ``browser`` are held open, a third is answered at once (``crowded``), another
    browser's is held as before; once one of the two ends, a wait is held again; a bad
    ``browser`` is one 400 (QA: with 6 tabs waiting, a 7th tab's calls queued)."""
    import threading
    import time

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5) as server:
        bob = Client(server.url, "bob")
        since = bob.ok("POST", "wait", {"since": -1, "seconds": 0})["changes"]
        held: list[dict[str, object]] = []

        def hold(seconds: float) -> None:
            held.append(bob.ok("POST", "wait", {"since": since, "seconds": seconds,
                                                 "browser": "b-1"}))

        # held 6 and 9 s, and waited for: the calls below come while both are held, on a
        # loaded machine too (before: held 3 s, and a sleep of 1 s taken for both being
        # held; a slow start of the threads could leave one not yet held)
        threads = [threading.Thread(target=hold, args=(s,)) for s in (6.0, 9.0)]
        for t in threads:
            t.start()
        until(lambda: server.waits_held("b-1") == 2, "the two waits of b-1 to be held")
        t0 = time.monotonic()
        crowded = bob.ok("POST", "wait", {"since": since, "seconds": 20, "browser": "b-1"})
        assert crowded == {"changed": False, "changes": since, "crowded": True}
        # answered at once: before its 20 s, and while the two waits are still held
        assert time.monotonic() - t0 < 10 and server.waits_held("b-1") == 2
        t0 = time.monotonic()  # another browser: held
        assert bob.ok("POST", "wait", {"since": since, "seconds": 1, "browser": "b-2"}) == {
            "changed": False, "changes": since}
        assert time.monotonic() - t0 >= 1
        threads[0].join(60)  # one of the two ended: a wait is held again
        t0 = time.monotonic()
        assert "crowded" not in bob.ok("POST", "wait", {"since": since, "seconds": 1,
                                                         "browser": "b-1"})
        assert time.monotonic() - t0 >= 1
        threads[1].join(60)
        assert held == [{"changed": False, "changes": since}] * 2
        for bad in ("", "x" * 65, "a b", 3):
            status, data = bob.call("POST", "wait", {"since": since, "browser": bad})
            assert status == 400 and "browser" in data["error"], bad


def _raw_wait(url: str, since: int, browser: str) -> socket.socket:
    """An ``api/wait`` sent on a socket of its own (left open: the caller closes it, as a
    browser does when the tab goes)."""
    from urllib.parse import urlsplit

    u = urlsplit(url)
    body = json.dumps({"since": since, "seconds": 20, "browser": browser}).encode()
    sock = socket.create_connection((u.hostname, u.port), timeout=30)
    sock.sendall(f"POST {u.path}api/wait HTTP/1.1\r\nHost: {u.netloc}\r\n"
                 f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
                 .encode() + body)
    return sock


def test_a_wait_whose_caller_left_frees_its_slot_at_once(tmp_path: Path) -> None:
    """Two waits of one browser held open; the caller of one closes its connection (the
    tab was closed, or crashed): that wait ends within a second or two, and a third wait
    of the browser is held, not ``crowded`` (QA: the closed tab's wait held its slot for
    up to 25 s)."""
    import time

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5) as server:
        bob = Client(server.url, "bob")
        since = bob.ok("POST", "wait", {"since": -1, "seconds": 0})["changes"]
        socks = [_raw_wait(server.url, since, "b-1") for _ in range(2)]
        try:
            until(lambda: server.waits_held("b-1") == 2, "the two waits of b-1 to be held")
            socks.pop().close()  # the tab goes
            t0 = time.monotonic()
            while server.waits_held("b-1") > 1 and time.monotonic() - t0 < 30:
                time.sleep(0.05)
            # within seconds (GONE_POLL), long before the wait's own 20 s (the 10 s: room
            # for a loaded machine)
            assert server.waits_held("b-1") == 1 and time.monotonic() - t0 < 10
            t0 = time.monotonic()
            assert bob.ok("POST", "wait", {"since": since, "seconds": 1, "browser": "b-1"}
                          ) == {"changed": False, "changes": since}  # held, not crowded
            assert time.monotonic() - t0 >= 1
        finally:
            for s in socks:
                s.close()


def _reply_of(sock: socket.socket) -> bytes:
    """Everything the server sends on ``sock`` until it closes it or 30 s pass."""
    sock.settimeout(30)
    got = b""
    while b"\r\n\r\n{" not in got or not got.rstrip().endswith(b"}"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            break
        got += chunk
    return got


def test_a_wait_whose_caller_half_closed_is_held_and_answered(tmp_path: Path) -> None:
    """A caller that only half-closes its connection after its request (``shutdown
    (SHUT_WR)``, as a script may; browsers do not) still reads the reply: its wait is
    held, not ended as if it had left, and answered when another answers (after an
    interim ``100 Continue``, the probe that told it from a caller gone); a caller
    that closes its connection still frees its slot within a second or two, and an
    HTTP/1.0 caller (no interim replies) that half-closes is taken as gone, as before
    (QA: a half-closed caller's wait was answered at once, ``changed: false``)."""
    import threading
    import time

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5) as server:
        log = CallLog(server)
        bob = Client(server.url, "bob")
        since = bob.ok("POST", "wait", {"since": -1, "seconds": 0})["changes"]
        half = _raw_wait(server.url, since, "b-half")
        half.shutdown(socket.SHUT_WR)
        gone = _raw_wait(server.url, since, "b-gone")
        until(lambda: (server.waits_held("b-half"), server.waits_held("b-gone")) == (1, 1),
              "the waits of b-half and b-gone to be held")
        gone.close()
        t0 = time.monotonic()
        while server.waits_held("b-gone") and time.monotonic() - t0 < 30:
            time.sleep(0.05)
        # within seconds, long before its 20 s (the 10 s: room for a loaded machine)
        assert server.waits_held("b-gone") == 0 and time.monotonic() - t0 < 10
        # checked four times (GONE_POLL apart) whether its caller left: still held
        until(lambda: log.probes("b-half") >= 4,
              "four checks of whether b-half's half-closed caller had left")
        assert server.waits_held("b-half") == 1
        reply: list[bytes] = []
        reader = threading.Thread(target=lambda: reply.append(_reply_of(half)))
        reader.start()
        item = bob.next()
        bob.answer(item["item_id"], 1)
        reader.join(30)
        half.close()
        head, _, body = reply[0].partition(b"HTTP/1.1 200 OK\r\n")
        assert head == b"HTTP/1.1 100 Continue\r\n\r\n", reply
        got = json.loads(body.split(b"\r\n\r\n", 1)[1])
        assert got["changed"] is True and got["changes"] != since, got
        # HTTP/1.0: no interim reply may be sent; its half-close ends the wait at once
        from urllib.parse import urlsplit

        u = urlsplit(server.url)
        data = json.dumps({"since": got["changes"], "seconds": 20, "browser": "b-10"})
        old = socket.create_connection((u.hostname, u.port), timeout=30)
        try:
            old.sendall(f"POST {u.path}api/wait HTTP/1.0\r\nHost: {u.netloc}\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(data)}"
                        f"\r\n\r\n{data}".encode())
            old.shutdown(socket.SHUT_WR)
            t0 = time.monotonic()
            answer = _reply_of(old)
            # at once: long before its 20 s (the 10 s: room for a loaded machine)
            assert time.monotonic() - t0 < 10 and b"100 Continue" not in answer, answer
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["changed"] is False
        finally:
            old.close()


def test_items_of_a_page_gone_silent_go_back_and_a_live_page_keeps_them(
        tmp_path: Path) -> None:
    """An annotator whose page said it is open (``api/alive``) and then went silent (a
    crashed tab) loses their items after ``silent_seconds``, and a wait of another ends
    then; while the page keeps saying so, and for an annotator whose page never said so,
    the items stay theirs (the claims' own lapse, QA: 10 min for a crashed tab)."""
    import threading
    import time

    from tests.web.web_support import claims

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5, silent_seconds=2) as server:
        log = CallLog(server)
        ann, cat, bob = (Client(server.url, n) for n in ("ann", "cat", "bob"))
        state = ann.ok("GET", "state")
        assert state["silent_seconds"] == 2 and 0 < state["heartbeat_seconds"] <= 0.5
        sent = [time.monotonic()]  # the server hears her after this
        assert ann.ok("POST", "alive") == {"ok": True, "silent_seconds": 2}
        # ann's page is open: it says so every 0.3 s, as a page does, beside the other
        # calls (before, the calls between her first two heartbeats made a gap of more
        # than 2 s when each was slow, as on a loaded machine)
        stop = threading.Event()

        def heartbeat() -> None:
            while not stop.wait(0.3):
                sent.append(time.monotonic())  # the server hears her after this
                ann.ok("POST", "alive")

        beat = threading.Thread(target=heartbeat, daemon=True)
        beat.start()
        try:
            held = ann.ok("POST", "next", {"ahead": 2})
            mine = [held["item"]["item_id"], *(x["item_id"] for x in held["ahead"])]
            cat.ok("POST", "next", {"ahead": 1})  # cat never says it is open
            # dan's page says so once, after ann's first word, then goes silent: once the
            # server has found him silent, its check ran more than silent_seconds after
            # ann's first word, and found her page live
            Client(server.url, "dan").ok("POST", "alive")
            until(lambda: log.calls("silent", "dan"),
                  "the server to find dan's page silent (silent_seconds after its word)")
            assert claims(made.db) == {"ann": 3, "cat": 2} and not log.calls("silent", "ann")
            since = bob.ok("POST", "next")["changes"]  # nothing for bob: all held
        finally:
            stop.set()  # ann's page goes silent
            beat.join(60)
        woken = bob.ok("POST", "wait", {"since": since, "seconds": 20})
        # her items went back silent_seconds after the server last heard her, not before
        # (timed from when her last heartbeat was sent: timed from after bob's calls, as
        # before, a slow call made it look early), long before their claims' 10 min
        assert woken["changed"] and 2 < time.monotonic() - sent[-1] < 2 + 10
        assert claims(made.db) == {"cat": 2}
        took = bob.next()
        assert took is not None and took["item_id"] in mine
        # ann's page speaks again (a frozen tab, a computer woken): what it holds and
        # nobody took meanwhile is hers again
        back = ann.ok("POST", "alive", {"holding": mine})
        assert back["released"] and back["reclaimed"] == [i for i in mine if i != took["item_id"]]
        assert claims(made.db) == {"ann": 2, "bob": 1, "cat": 2}
        assert "released" not in ann.ok("POST", "alive", {"holding": mine})
        for bad in ("q1", [1], ["x"] * 11):
            status, data = ann.call("POST", "alive", {"holding": bad})
            assert status == 400 and "holding" in data["error"], bad
        status, data = ann.call("POST", "alive", {"session_id": "another"})
        assert status == 421 and "another session" in data["error"]
    for bad in (0, -1, "3", float("inf"), True):
        with pytest.raises(ValueError, match="--silent-seconds"):
            running(made.db, silent_seconds=bad).__enter__()


def test_a_page_heard_while_its_items_are_given_back_claims_them_again(
        tmp_path: Path) -> None:
    """A page that speaks (``api/alive``) just after the server found it silent, while its
    items are being given back, is told so and gets them back at once (they were given
    back unmarked, so the page kept showing items no longer claimed until its next
    heartbeat)."""
    import threading
    import time

    from tests.web.web_support import claims

    made = classification(tmp_path)
    with running(made.db, batch=5, budget=5, silent_seconds=1) as server:
        ann = Client(server.url, "ann")
        ann.ok("POST", "alive")
        held = ann.ok("POST", "next", {"ahead": 2})
        mine = [held["item"]["item_id"], *(x["item_id"] for x in held["ahead"])]
        real = server._annotators.release
        said: dict[str, object] = {}
        speaking: list[threading.Thread] = []

        def release(who: str) -> None:  # the page speaks between the check and this
            t = threading.Thread(target=lambda: said.update(
                ann.ok("POST", "alive", {"holding": mine})))
            t.start()
            speaking.append(t)
            t0 = time.monotonic()
            while who not in server._heard and time.monotonic() - t0 < 10:
                time.sleep(0.01)
            real(who)

        server._annotators.release = release
        t0 = time.monotonic()
        while not speaking and time.monotonic() - t0 < 20:
            time.sleep(0.05)
        assert speaking, "the silent page's items were never given back"
        speaking[0].join(20)
        server._annotators.release = real
        assert said.get("released") and sorted(said["reclaimed"]) == sorted(mine), said
        assert claims(made.db) == {"ann": 3}


@pytest.mark.parametrize(("option", "message"), [
    ({"port": None}, r"port must be an integer 0\.\.65535 \(0: a free one\), got NoneType"),
    ({"port": "8080"}, r"port must be an integer 0\.\.65535 .*got str '8080'"),
    ({"port": True}, r"port must be an integer 0\.\.65535 .*got bool True"),
    ({"host": None}, "host must be an address to listen on .*got NoneType"),
    ({"token": 12345678901234567890}, "token 12345678901234567890: expected at least 16"),
    ({"adjudicators": "ann"}, r"adjudicators must be a sequence of names, got str 'ann' "
                              r"\(one: adjudicators=\['ann'\]\)"),
    ({"adjudicators": None}, "adjudicators must be a sequence of names, got NoneType"),
    ({"adjudicators": [1, 2]}, r"adjudicators must be names \(text\), got int 1 in \[1, 2\] "
                               r"\(as text: adjudicators=\['1', '2'\]\)"),
    ({"adjudicators": ["judge", None]}, r"adjudicators must be names \(text\), got NoneType "
                                        r"None in \['judge', None\]$"),
    ({"target_width": "0.1"}, "target width must be a number from 1e-06 .*got '0.1'"),
    ({"target_width": -1}, "target width must be a number from 1e-06 .*got -1"),
])
def test_label_server_names_a_bad_argument(tmp_path: Path, option: dict[str, object],
                                           message: str) -> None:
    """QA: LabelServer(port=None) raised int()'s TypeError, host=None "argument of type
    'NoneType' is not iterable", token=<int> re's "expected string", adjudicators=None
    "'NoneType' object is not iterable"; adjudicators="ann" was read as the names "a",
    "n", "n", adjudicators=[1, 2] as the names "1" and "2", port=True as port 1, and
    target_width="0.1" or -1 was kept for the progress line. Each is a ValueError naming
    it now, before the session is opened."""
    from activetest.web.server import LabelServer

    made = classification(tmp_path)
    with pytest.raises(ValueError, match=message):
        LabelServer(made.db, **option)  # type: ignore[arg-type]


def test_server_options_are_one_checked_frozen_record(tmp_path: Path) -> None:
    """The server's own options are checked in one place (``ServerOptions.check``) and kept
    as a frozen record: names stripped as stored, the port an int, the defaults as the
    signature's; LabelServer keeps it (``server_options``) and serves what it says."""
    import dataclasses

    from activetest.web.server_options import SILENT_SECONDS, ServerOptions

    o = ServerOptions.check(adjudicators=[" judge ", "ann"], target_width=0.1,
                            silent_seconds=30)
    assert o == ServerOptions(adjudicators=frozenset({"judge", "ann"}), target_width=0.1,
                              silent_seconds=30.0)
    assert ServerOptions.check() == ServerOptions() and o.silent_seconds == 30.0
    assert ServerOptions().silent_seconds == SILENT_SECONDS
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.port = 1  # type: ignore[misc]
    made = classification(tmp_path)
    with running(made.db, adjudicators=["judge "], silent_seconds=40) as server:
        assert server.server_options.adjudicators == {"judge"} == server.adjudicators
        assert server.silent_seconds == 40.0 and server.server_options.token is None
        assert Client(server.url, "judge").ok("POST", "hello")["adjudicator"] is True


def test_pages_that_only_ask_write_nothing_and_wait_for_no_lock(tmp_path: Path) -> None:
    """A page with nothing to label asks ``api/next`` again after each ``api/wait`` (every
    page at once, at each change), an adjudicator's page lists the disagreements, a page
    closed with nothing at hand gives its items back: each was a commit (two for a
    ``done`` reply: the next item's transaction and the count of items waiting for
    others), the file's write mark moved and the call waited for the write lock, so the
    waiting pages contended with the one labelling. Now the asks after a first "nothing
    for you" only read: answered while another process holds the write lock, the mark
    where it was, the replies the same."""
    made = classification(tmp_path, n=20)
    with running(made.db, batch=4, budget=4, overlap=1.0, busy_timeout=1.0,
                 adjudicators=["adj"]) as server:
        # a 503 here is the failure this checks: returned at once, not sent again
        ann, bob, carol, adj = (Client(server.url, w, retry_seconds=0)
                                for w in ("ann", "bob", "carol", "adj"))
        for _ in range(4):  # every item asks for two annotators
            ann.answer(ann.next()["item_id"], 1)
        held = bob.ok("POST", "next", {"ahead": 3})
        for it in [held["item"], held["ahead"][0]]:
            bob.answer(it["item_id"], 2)  # two differ; bob holds the other two
        for page in (carol, ann):  # each told "nothing for you" once: they wait, then ask
            assert page.ok("POST", "next")["done"]
        con = sqlite3.connect(made.db, timeout=0, isolation_level=None)
        before = con.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
        con.execute("BEGIN IMMEDIATE")  # another process writing
        try:
            waiting = carol.ok("POST", "next")  # nothing for carol: bob holds two
            assert waiting["done"] and waiting["others_hold"] == 2
            mine = ann.ok("POST", "next")  # ann answered all four: two wait for bob
            assert mine["done"] and mine["others_needed"] == 2 and mine["unsettled"] == 2
            listed = adj.ok("POST", "disagreements")
            assert len({d["item_id"] for d in listed["disagreements"]}) == 2
            assert set(listed["order"]) == {d["item_id"] for d in listed["disagreements"]}
            assert carol.ok("POST", "release") == {"ok": True}  # she held nothing
        finally:
            con.execute("COMMIT")
        assert con.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone() == before
        con.close()
        # and a page that has something to do still writes: bob's two come back to him
        again = bob.ok("POST", "next", {"ahead": 3})
        assert again["item"] and len(again["ahead"]) == 1


def test_a_page_closed_with_nothing_at_hand_wakes_no_waiting_page(tmp_path: Path) -> None:
    """A page closed (``api/release``) while it held no item changed nothing: the pages
    waiting for an item (``api/wait``) are not woken by it (each was, and asked for its
    next item for nothing); a release of items held still wakes them."""
    made = classification(tmp_path)
    with running(made.db, batch=2, budget=2) as server:
        ann, bob, carol = (Client(server.url, w) for w in ("ann", "bob", "carol"))
        ann.ok("POST", "next", {"ahead": 1})  # ann holds both
        done = bob.ok("POST", "next")
        assert done["done"] and done["others_hold"] == 2
        assert carol.ok("POST", "release") == {"ok": True}  # carol held nothing
        assert bob.ok("POST", "wait", {"since": done["changes"], "seconds": 0.3}) == {
            "changed": False, "changes": done["changes"]}
        ann.ok("POST", "release")  # ann's two go back: a change
        assert bob.ok("POST", "wait", {"since": done["changes"], "seconds": 5})["changed"]
