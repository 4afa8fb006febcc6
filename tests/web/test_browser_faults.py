"""The labelling page in a real headless Chromium when things go wrong (QA): a server
killed and restarted, a session locked by another process, a task of more than nine
levels typed by keyboard, an adjudicator's progress line. No answer the page holds is
dropped; no key labels an item the person has not seen."""

from __future__ import annotations

import linecache
import resource
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.session.annotators import Annotators
from activetest.session.workflow import Session
from tests.web import browser_support as bs
from tests.web.web_support import (
    claims,
    classification,
    fail_once,
    kill9,
    running,
    start_child,
)

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))

TOKEN = "kept-address-0123456789"


def _answers(db: Path) -> dict[str, int]:
    with Session.open(db) as s:
        return {a.item_id: a.label for a in Annotators(s).annotations()}  # 0-based


def _until(check: Any, timeout: float = 60.0) -> Any:
    """Wait until ``check()`` is true; returns what it returned. Past ``timeout`` s it
    says which wait ran out, by its line (QA: a failure under load said only "timed out
    waiting for <function ...<lambda>>", and a test with several waits could not be told
    which one, nor its output read again)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    code = getattr(check, "__code__", None)
    where = (f"{Path(code.co_filename).name}:{code.co_firstlineno}: "
             f"{linecache.getline(code.co_filename, code.co_firstlineno).strip()}"
             if code is not None else repr(check))
    raise AssertionError(f"waited {timeout:g} s in vain for {where}")


def _saving(driver: Any) -> int:
    return int(driver.execute_script("return document.body.dataset.saving || '0'"))


def _message(driver: Any) -> str:
    return bs.message(driver)[0]  # textContent: an id's <bdi> keeps it


def _resent(driver: Any, status: int) -> None:
    """Wait until the page, its answer kept (``saving`` 1), has sent ``api/answers`` again
    after one answered ``status`` (0: the server did not answer) from now on: evidence
    that it had the chance to drop the answer, or to store it, not a fixed time (QA: a
    fixed sleep, on a loaded machine, passed before the page had tried again). Returns
    early should the page stop keeping it: the caller's check then says so."""
    bs.record_calls(driver)

    def again() -> bool:
        made = bs.calls_made(driver, "answers")
        return _saving(driver) != 1 or status in made[:-1]

    _until(again)


def _free_port() -> int:
    """A free port below the system's ephemeral range: a port the kernel hands out for
    ``bind(0)`` or an outgoing connection could, once its server is killed, be taken by
    a test beside this one (another worker) and answer this test's page (QA: a restart
    test timed out under ``-n 2``)."""
    import random

    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = random.randrange(20000, max(20001, min(low, 32768)))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port found below the ephemeral range")


def _one_saved_one_kept(driver: Any, db: Path, tmp_path: Path, args: tuple[str, ...],
                        token: str) -> tuple[dict[str, int], str]:
    """Serve ``db`` at ``args`` with ``token``, answer one item (stored), kill the server
    (-9) and answer the next (kept in the tab: sent to a dead server); returns the answers
    given (0-based) and the kept one's item."""
    proc, url = start_child(db, tmp_path, *args, "--token", token)
    assert f"/s/{token}/" in url
    given: dict[str, int] = {}
    try:
        bs.fresh(driver)
        item = bs.sign_in(driver, url, "alice")
        assert item is not None
        bs.press(driver, "1")
        given[item] = 0
        _until(lambda: _answers(db) == given)
        # and the page has the server's reply: stored is not yet confirmed (QA: under
        # load the server was killed between its commit and its reply, so the page kept
        # both answers, 2 not 1, and this waited for ever)
        _until(lambda: _saving(driver) == 0)
        item = bs.wait_for(driver, "ready", not_item=item)
    finally:
        kill9(proc)
    assert item is not None
    bs.press(driver, "2")  # sent to a dead server: kept in the tab
    given[item] = 1
    _until(lambda: _saving(driver) == 1 and "does not answer" in _message(driver))
    return given, item


def test_answers_kept_through_a_restart_reach_the_server_serving_the_same_address(
        driver: Any, tmp_path: Path) -> None:
    """Killed (-9) with answers still to send, restarted first with a new token (the page
    is told its address is gone and keeps them: they were dropped on the 404, QA), then
    with ``--token`` and ``--port`` of the first run: the page sends them, stored once."""
    made = classification(tmp_path, n=40)
    port = str(_free_port())
    args = ("--port", port, "--batch", "5")
    given, item = _one_saved_one_kept(driver, made.db, tmp_path, args, TOKEN)
    other, _ = start_child(made.db, tmp_path, *args)  # a new random token
    try:
        _until(lambda: "no longer served" in _message(driver))
        assert f"--token {TOKEN}" in _message(driver) and f"--port {port}" in _message(driver)
        _resent(driver, 404)  # refused again, sent again: still kept, nothing stored
        assert _saving(driver) == 1 and _answers(made.db) == {k: v for k, v in given.items()
                                                             if k != item}
    finally:
        kill9(other)
    again, _ = start_child(made.db, tmp_path, *args, "--token", TOKEN)
    try:
        _until(lambda: _saving(driver) == 0)
        assert _answers(made.db) == given
    finally:
        kill9(again)


def test_answers_of_one_session_never_go_into_another_served_at_its_address(
        driver: Any, tmp_path: Path) -> None:
    """Killed (-9) with an answer still to send, then another session of the same pool
    served with the first's ``--port`` and ``--token`` (the page's own advice after a
    restart): the answer is not stored there (QA: unsent answers went into whatever
    session served the page's address; the item ids were that session's too), the page
    says so and keeps it; served again, the first session gets it with the next answer,
    stored once."""
    a = classification(tmp_path / "a", n=40)
    b = classification(tmp_path / "b", n=40)
    token = "one-address-two-sessions-01"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, _ = _one_saved_one_kept(driver, a.db, tmp_path, args, token)
    other, _ = start_child(b.db, tmp_path, *args, "--token", token)
    try:
        _until(lambda: "another session" in _message(driver))
        assert "kept in this tab" in _message(driver) and _saving(driver) == 0
        # (the same seed draws the same first batch there: without the check, stored)
        assert _answers(b.db) == {}
    finally:
        kill9(other)
    again, _ = start_child(a.db, tmp_path, *args, "--token", token)
    try:
        last = bs.wait_for(driver, "ready")
        assert last is not None
        bs.press(driver, "1")
        given[last] = 0
        _until(lambda: _answers(a.db) == given and _saving(driver) == 0)
    finally:
        kill9(again)
    assert _answers(b.db) == {}


def test_an_answer_stored_when_no_next_item_could_be_drawn_is_said_saved(
        driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's answer is committed, then the next item cannot be drawn (a fault made
    on purpose: ``Annotators.held`` fails once): the page says it was saved and why no
    next item came, keeps nothing to resend, and goes on (QA: "not saved", and the
    answer dropped from the tab, of an answer the session held)."""
    from activetest.session import annotators

    made = classification(tmp_path, n=40)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "erin")
        assert item is not None
        fail_once(monkeypatch, annotators.Annotators, "held",
                  ValueError("no item could be drawn just now"))
        bs.press(driver, "1")
        _until(lambda: "could not be drawn" in _message(driver))
        assert "1 answer(s) saved" in _message(driver) and "not saved" not in _message(driver)
        assert _saving(driver) == 0 and _answers(made.db) == {item: 0}
        nxt = bs.wait_for(driver, "ready", not_item=item)
        assert nxt is not None
        bs.press(driver, "2")
        _until(lambda: _answers(made.db) == {item: 0, nxt: 1})


def test_an_answer_the_server_failed_on_is_kept_and_sent_again(
        driver: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault in the server before it stores an answer (made on purpose: reading the
    answer's levels raises once, outside any transaction: HTTP 500): the page keeps the
    answer, says the server failed and sends it again, stored once (QA: it was dropped
    from the tab, "not saved"). (A fault inside the store's transaction is undone and
    answered 503, which the page already sent again.)"""
    from activetest.web import server as web_server

    made = classification(tmp_path, n=40)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "fay")
        assert item is not None
        fail_once(monkeypatch, web_server, "levels_of", RuntimeError("a fault in the server"))
        bs.press(driver, "2")
        _until(lambda: "the server failed" in _message(driver))
        assert "stopping" not in _message(driver)  # (a RuntimeError was said so: QA)
        assert _saving(driver) == 1 and _answers(made.db) == {}
        _until(lambda: _saving(driver) == 0 and _answers(made.db) == {item: 1})


def test_a_closed_page_gives_its_items_back_and_unsent_answers_hold_it_open(
        driver: Any, tmp_path: Path) -> None:
    """Leaving the page gives back the items it held at once (QA: closed, it kept them
    from the other annotators until the claims lapsed, 10 min by default); while an
    answer is not confirmed, leaving is asked about first (``beforeunload``: the tab
    holds the only copy; QA: a tab closed while the server was down lost it)."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "gus")
        assert item is not None
        _until(lambda: claims(made.db).get("gus", 0) >= 2)  # the one shown and ahead
        leave = ("const e = new Event('beforeunload', {cancelable: true}); "
                 "window.dispatchEvent(e); return e.defaultPrevented;")
        assert driver.execute_script(leave) is False  # nothing unsent: no question
        driver.get("about:blank")
        _until(lambda: "gus" not in claims(made.db))
        with Session.open(made.db) as s:  # nothing stored by leaving
            assert s.labels() == {} and not Annotators(s).annotations()
        driver.get(server.url)  # back (its name remembered): its items again
        item = bs.wait_for(driver, "ready")
        assert item is not None
        server.shutdown()  # the answer cannot be confirmed now
        bs.press(driver, "1")
        _until(lambda: _saving(driver) == 1)
        assert driver.execute_script(leave) is True


def test_a_locked_session_keeps_the_answer_and_sends_it_again(driver: Any,
                                                              tmp_path: Path) -> None:
    """Another process holds the session's write lock past the busy timeout: the server
    answers 503 and the page keeps the answer, sending it again once the lock is gone
    (QA: it was dropped although the message said "retry")."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, busy_timeout=0.3) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "carol")
        assert item is not None
        con = sqlite3.connect(made.db, timeout=5, isolation_level=None, check_same_thread=False)
        con.execute("BEGIN IMMEDIATE")
        release = threading.Timer(4.0, lambda: con.execute("COMMIT"))
        try:
            bs.press(driver, "2")
            _until(lambda: "locked by another process" in _message(driver))
            assert _saving(driver) == 1 and "kept in this tab" in _message(driver)
            release.start()
            release.join()
        finally:
            release.cancel()
        _until(lambda: _saving(driver) == 0)
        con.close()
        assert _answers(made.db) == {item: 1}


def test_the_last_answers_sent_together_end_on_done_not_busy(driver: Any,
                                                             tmp_path: Path) -> None:
    """The budget's three items answered while the first answer waits behind a locked
    session (503, sent again every 2 s): the second call then sends the second and third
    answers together, and its reply finds the third answer's call still queued, so it
    shows nothing; that call has nothing left to send. The page said nothing more and
    stayed busy for ever (QA: a browser test timed out waiting under load); now the call
    with nothing to send asks what is next, and the page says that every drawn item has
    its answers."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=3, budget=3, busy_timeout=0.3) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "dora")
        con = sqlite3.connect(made.db, timeout=5, isolation_level=None, check_same_thread=False)
        con.execute("BEGIN IMMEDIATE")
        try:
            bs.press(driver, "1")
            second = bs.wait_for(driver, "ready", not_item=first)  # held ahead
            _until(lambda: "locked by another process" in _message(driver))
            bs.press(driver, "2")  # its call waits behind the first, which retries
            third = bs.wait_for(driver, "ready", not_item=second)
            bs.press(driver, "1")
            _until(lambda: _saving(driver) == 3)
        finally:
            con.execute("COMMIT")
            con.close()
        _until(lambda: _saving(driver) == 0)
        bs.wait_for(driver, "done")
        assert "every drawn item has its answers" in driver.find_element("id", "done").text
    assert _answers(made.db) == {first: 0, second: 1, third: 0}


def _twelve_levels(root: Path) -> Path:
    """A 12-class task over 40 items (prediction tables), as a user's TOML file."""
    root.mkdir(parents=True, exist_ok=True)
    classes = [chr(97 + k) for k in range(12)]
    (root / "task.toml").write_text(
        'name = "twelve"\ninstruction = "Which topic?"\nclasses = ['
        + ", ".join(f'"{c}"' for c in classes) + "]\n", encoding="utf-8")
    rng = np.random.default_rng(0)
    (root / "pool.csv").write_text("id,text\n" + "".join(f"x{i},item number {i}\n"
                                                         for i in range(40)))
    for name in ("sur", "tgt"):
        p = rng.dirichlet(np.ones(12), size=40)
        (root / f"{name}.csv").write_text(
            "id," + ",".join(classes) + "\n"
            + "".join(f"x{i}," + ",".join(f"{v:.6f}" for v in p[i]) + "\n" for i in range(40)))
    db = root / "k.db"
    Session.create(db, pool=root / "pool.csv", task=root / "task.toml",
                   surrogate=f"table:{root / 'sur.csv'}?kind=probs",
                   target=f"table:{root / 'tgt.csv'}?kind=probs", seed=1, progress=False,
                   pool_options={"id_column": "id"}).close()
    return db


def test_more_than_nine_levels_take_two_keys_for_one_item(driver: Any, tmp_path: Path) -> None:
    """"12" labels the item shown with level 12 (QA: level 1, then the next, unseen item
    level 2); "3" cannot start another level and counts at once; "1" then Enter is 1."""
    db = _twelve_levels(tmp_path)
    with running(db, batch=5) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "dana")
        bs.press(driver, "12")
        second = bs.wait_for(driver, "ready", not_item=first)
        _until(lambda: _answers(db) == {first: 11})
        bs.press(driver, "3")
        third = bs.wait_for(driver, "ready", not_item=second)
        # held, not taken at once: "1" may start 10, 11 or 12; seen by an observer in the
        # page (under load the test's own look came after the 1.2 s pause had taken it)
        driver.execute_script(
            "window.__typed = false; const p = document.getElementById('picked'); "
            "new MutationObserver(() => { if (p.textContent.includes('typed 1') && "
            "document.body.dataset.item === arguments[0]) { window.__typed = true; } })"
            ".observe(p, {childList: true, characterData: true, subtree: true});", third)
        bs.press(driver, "1")
        _until(lambda: driver.execute_script("return window.__typed"), 10)
        bs.press(driver, "\n")  # (or the pause took it first: the same answer)
        bs.wait_for(driver, "ready", not_item=third)
        _until(lambda: _answers(db) == {first: 11, second: 2, third: 0})
        shown = bs.page_state(driver)
        bs.press(driver, "15")  # no level 15: said, nothing stored
        _until(lambda: "no level 15" in _message(driver))
        # the page's pause for a second digit (1.2 s) run out by its own clock (a timer
        # set after it fires after it): a digit still held would have been taken, the
        # answer kept to send and the next item shown (a fixed 0.5 s look came before)
        driver.execute_script(
            "window.__paused = null; setTimeout(() => { window.__paused = ["
            "document.body.dataset.state, document.body.dataset.item, "
            "document.body.dataset.saving]; }, 1300)")
        paused = _until(lambda: driver.execute_script("return window.__paused"), 10)
        assert paused == [*shown, "0"], paused
        assert len(_answers(db)) == 3



@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs prlimit (Linux)")
def test_a_write_error_keeps_the_answer_and_sends_it_again(driver: Any, tmp_path: Path) -> None:
    """The session file cannot grow while a person labels (a real write error of a real
    `activetest serve` child: its file size limit, RLIMIT_FSIZE, set to the journal's size,
    as a full disk stops them): the page keeps the answer, says why and that it is sent
    again, and sends it until it is stored (QA: it was dropped, "1 answer(s) not saved",
    although the server's message said nothing was changed and to retry)."""
    made = classification(tmp_path, n=40)
    proc, url = start_child(made.db, tmp_path, "--batch", "5")
    try:
        bs.fresh(driver)
        first = bs.sign_in(driver, url, "erin")
        bs.press(driver, "1")
        # the page has the server's reply: the journal's fold after the commit is over
        # (QA: read once the commit showed in the file, the journal's size was taken
        # before the fold emptied it, the limit let the next answer be stored, and the
        # page never said it could not write); no reader of this test's meanwhile, which
        # the fold would not wait for
        _until(lambda: _saving(driver) == 0)
        item = bs.wait_for(driver, "ready", not_item=first)
        # the next write appends to the journal (-wal), which each commit folds into the
        # file and empties (store._fold_journal): the limit is the journal's size now, so
        # it cannot grow by a byte (its size, not the file's: that one is larger)
        wal = tmp_path / "c.db-wal"
        size = wal.stat().st_size if wal.exists() else 0
        hard = resource.prlimit(proc.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (size, hard))  # no byte more
        assert _answers(made.db) == {first: 0}
        bs.press(driver, "2")
        _until(lambda: "cannot write the session file" in _message(driver))
        assert _saving(driver) == 1 and "kept in this tab" in _message(driver)
        _resent(driver, 503)  # refused again, sent again: still kept, nothing stored
        assert _saving(driver) == 1 and _answers(made.db) == {first: 0}
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (hard, hard))  # space again
        _until(lambda: _saving(driver) == 0)
        assert _answers(made.db) == {first: 0, item: 1}
    finally:
        kill9(proc)


def test_a_stopped_server_keeps_the_answer_for_the_next_one_at_the_same_address(
        driver: Any, tmp_path: Path) -> None:
    """A server stopped (``LabelServer.shutdown``) while its page stays open: the page's
    next answer reaches the old server's kept-alive connection, which says it is stopping;
    the page keeps the answer and sends it to the server started next at the same address
    (QA: it was dropped, "the labelling server is stopping (1 answer(s) not saved)")."""
    made = classification(tmp_path, n=40)
    port = _free_port()
    with running(made.db, batch=5, port=port, token=TOKEN) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "fay")
        url = server.url
        bs.press(driver, "1")
        _until(lambda: _answers(made.db) == {first: 0})
        item = bs.wait_for(driver, "ready", not_item=first)
    bs.press(driver, "2")
    _until(lambda: "not saved yet" in _message(driver))
    assert _saving(driver) == 1 and "kept in this tab" in _message(driver)
    with running(made.db, batch=5, port=port, token=TOKEN) as again:
        assert again.url == url
        _until(lambda: _saving(driver) == 0)
        assert _answers(made.db) == {first: 0, item: 1}


@contextmanager
def _holding(url: str, who: str, ahead: int) -> Iterator[set[str]]:
    """``who`` takes the next ``1 + ahead`` items (returned) and keeps them while the block
    runs, as a page open on them would: a reload every 0.5 s renews their claims, so they
    lapse only after the block, however long a loaded machine takes to run it (before:
    claims of 4 or 6 s and no renewal, which a slow browser's part could outlast)."""
    from tests.web.web_support import Client

    client = Client(url, who)

    def held() -> set[str]:
        r = client.ok("POST", "next", {"ahead": ahead})
        return {r["item"]["item_id"], *(x["item_id"] for x in r["ahead"])}

    items = held()
    stop = threading.Event()
    renewed: list[set[str]] = []

    def renew() -> None:
        while not stop.wait(0.5):
            renewed.append(held())

    t = threading.Thread(target=renew, daemon=True)
    t.start()
    try:
        yield items
    finally:
        stop.set()
        t.join(60)
    assert all(r == items for r in renewed), (items, renewed)  # the same items, kept


def test_nothing_left_while_others_hold_items_says_so_and_asks_again(driver: Any,
                                                                     tmp_path: Path) -> None:
    """Every draw of the budget is answered or held by another annotator: the page says
    that others hold items, not that every drawn item has its answers, and asks again, so
    the items come to this person once the other's claims lapse (QA: "Nothing left to
    label for you: every drawn item has its answers", with 3 draws unanswered, and the
    page never asked again)."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, budget=10, claim_seconds=4) as server:
        with _holding(server.url, "ann", 2) as theirs:  # ann's page is open on them
            bs.fresh(driver)
            item = bs.sign_in(driver, server.url, "bob")
            mine = set()
            while bs.page_state(driver)[0] == "ready" and len(mine) < 7:
                mine.add(item)
                bs.press(driver, "1")
                item = bs.wait_for(driver, ("ready", "done"), not_item=item)
            assert len(mine) == 7 and not mine & theirs
            bs.wait_for(driver, "done")
            text = driver.find_element("id", "done").text
            assert "held by other annotators" in text and "3 drawn item(s)" in text, text
            assert "every drawn item has its answers" not in text
        # ann's page goes, her claims lapse (4 s): the page asks again and gets them
        item = bs.wait_for(driver, "ready")
        assert item in theirs
        while bs.page_state(driver)[0] == "ready":
            bs.press(driver, "2")
            item = bs.wait_for(driver, ("ready", "done"), not_item=item)
        _until(lambda: _saving(driver) == 0)
        _until(lambda: "every drawn item has its answers" in driver.find_element(
            "id", "done").text)
    answers = _answers(made.db)
    assert set(answers) == mine | theirs and all(answers[i] == 1 for i in theirs)


def test_a_page_waiting_for_others_items_asks_again_through_a_restart(driver: Any,
                                                                      tmp_path: Path) -> None:
    """The page says others hold every drawn item and asks again later; the server is
    stopped meanwhile, so that ask finds no server: the page says so and asks again until
    the server at the same address answers, then shows the items whose claims lapsed
    (QA: it stayed busy for ever, "the server does not answer (Failed to fetch)")."""
    made = classification(tmp_path, n=40)
    # a token of its own: a test beside it (another worker) may serve TOKEN on a port
    # this one freed, and its page would send answers there
    opts: dict[str, Any] = {"batch": 5, "budget": 5, "claim_seconds": 6,
                            "port": _free_port(), "token": "asks-again-0123456789"}
    # ann's page is open on her items while bob's page signs in
    with running(made.db, **opts) as server, _holding(server.url, "ann", 4) as theirs:
        bs.fresh(driver)
        assert bs.sign_in(driver, server.url, "bob") is None
        assert "held by other annotators" in driver.find_element("id", "done").text
    _until(lambda: "does not answer" in _message(driver) or "stopping" in _message(driver))
    with running(made.db, **opts):
        item = bs.wait_for(driver, "ready")  # ann's claims lapsed meanwhile
        assert item in theirs


def test_nothing_left_while_items_wait_for_a_second_annotator_says_so(driver: Any,
                                                                      tmp_path: Path) -> None:
    """Every draw asks for two annotators (``overlap=1``); another annotator holds them all
    and has answered none when this one has answered them: the page says that they ask for
    another annotator's answer, not that every drawn item has its answers, nor that they
    are held by others and come to this person when the claims lapse (QA: both were said,
    and the page asked again for items it could never get)."""
    from tests.web.web_support import Client

    made = classification(tmp_path, n=40)
    with running(made.db, batch=3, budget=3, overlap=1.0) as server:
        Client(server.url, "ann").ok("POST", "next", {"ahead": 2})  # holds all three
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "bob")
        mine = set()
        while bs.page_state(driver)[0] == "ready":
            mine.add(item)
            bs.press(driver, "1")
            item = bs.wait_for(driver, ("ready", "done"), not_item=item)
        _until(lambda: _saving(driver) == 0 and bs.page_state(driver)[0] == "done")
        text = driver.find_element("id", "done").text
        assert "3 of them ask for another annotator's answer" in text, text
        assert "every drawn item has its answers" not in text and "held by" not in text
    assert set(_answers(made.db)) == mine and len(mine) == 3


def test_waiting_for_the_server_shows_no_answered_item(driver: Any, tmp_path: Path) -> None:
    """Every item at hand answered while the server cannot store (a locked session): the
    page says it waits for the server and shows no item (QA: the last item answered stayed
    on screen with its buttons, as if still to answer); once stored, the next one shows."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, busy_timeout=0.3) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "lena")
        con = sqlite3.connect(made.db, timeout=5, isolation_level=None, check_same_thread=False)
        con.execute("BEGIN IMMEDIATE")
        try:
            answered = []
            while bs.page_state(driver)[0] == "ready":  # the item shown and those held
                answered.append(item)
                bs.press(driver, "1")
                item = bs.wait_for(driver, ("ready", "busy"), not_item=item)
            assert bs.page_state(driver) == ("busy", None) and len(answered) == 3
            assert not driver.find_element("id", "card").is_displayed()
            assert "Waiting for the server" in driver.find_element("id", "done").text
        finally:
            con.execute("COMMIT")
            con.close()
        item = bs.wait_for(driver, "ready")
        assert item not in answered
        _until(lambda: _saving(driver) == 0)
    assert _answers(made.db) == dict.fromkeys(answered, 0)


def test_nothing_left_says_how_many_items_wait_for_an_adjudicator(driver: Any,
                                                                   tmp_path: Path) -> None:
    """Two annotators gave a drawn item differing answers and ``--resolve skip`` settles
    no label: the page with nothing left says so, and who settles it (QA: it said only
    that every drawn item has its answers, while the estimate waited at that item)."""
    from tests.web.web_support import Client

    made = classification(tmp_path, n=40)
    with running(made.db, batch=2, budget=2, overlap=1.0) as server:
        ann, cat = Client(server.url, "ann"), Client(server.url, "cat")
        for _ in range(2):
            ann.answer(ann.next()["item_id"], 1)
        first = cat.next()
        cat.answer(first["item_id"], 2)  # differs from ann's
        cat.answer(cat.next()["item_id"], 1)
        bs.fresh(driver)
        assert bs.sign_in(driver, server.url, "bob") is None
        text = driver.find_element("id", "done").text
        assert "1 drawn item(s) have differing answers and no label" in text, text
        assert "--adjudicator NAME" in text
    assert len(_answers(made.db)) == 2  # one label settled, the other not


def test_answers_the_server_has_not_taken_are_counted_at_the_top_and_the_help_says_so(
        driver: Any, tmp_path: Path) -> None:
    """The server killed: the answer kept in the tab is counted at the top of the page,
    whatever the message line says next (an undo's, a skip's), and the help says what
    happens to answers while the server cannot be reached; once sent, the count goes
    (QA: the help said every answer was saved in the session file as soon as it was
    given, and only the message line, soon overwritten, said otherwise)."""
    made = classification(tmp_path, n=40)
    token = "counted-at-top-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, _ = _one_saved_one_kept(driver, made.db, tmp_path, args, token)
    unsent = driver.find_element("id", "unsent")
    assert unsent.is_displayed() and "1 answer(s) not saved yet" in unsent.text, unsent.text
    bs.press(driver, "s")  # another message: the count stays
    _until(lambda: "set aside" in _message(driver))
    assert unsent.is_displayed() and "kept in this tab" in unsent.text
    bs.press(driver, "?")
    help_text = driver.find_element("id", "help").text
    assert "cannot be reached" in help_text and "kept in this browser tab" in help_text
    assert "as soon as it is given" not in help_text
    bs.press(driver, "?")
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        _until(lambda: _saving(driver) == 0)
        _until(lambda: not unsent.is_displayed())
        assert _answers(made.db) == given
    finally:
        kill9(again)


def test_an_undo_behind_answers_not_sent_says_it_waits_and_is_done_once_they_are(
        driver: Any, tmp_path: Path) -> None:
    """The server killed with an answer kept in the tab: ``u`` says at once that the undo
    waits for that answer to be sent (on its button and at the top of the page, which the
    resend messages do not hide), a second ``u`` queues no second undo, and once a server
    at the same address takes the answer the undo is done: that answer is undone and its
    item shown again (QA: ``u`` said nothing until the answers were sent)."""
    made = classification(tmp_path, n=40)
    token = "undo-waits-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, kept = _one_saved_one_kept(driver, made.db, tmp_path, args, token)
    shown = bs.page_state(driver)[1]
    assert shown not in (None, kept)
    undo = driver.find_element("id", "undo-button")
    bs.press(driver, "u")
    _until(lambda: "undo waits for 1 answer(s) to be sent" in undo.text)
    assert "undo" in driver.find_element("id", "unsent").text
    bs.press(driver, "u")
    _until(lambda: "already waits" in _message(driver))
    _resent(driver, 0)  # resent meanwhile: still waiting, the item shown unchanged
    assert "undo waits for 1 answer(s)" in undo.text and bs.page_state(driver) == ("ready", shown)
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        assert bs.wait_for(driver, "ready", not_item=shown) == kept
        _until(lambda: "undone: item " + kept in _message(driver))
        assert bs.message(driver)[1] == [kept]  # the id isolated (a <bdi>)
        assert undo.text.endswith("undo my last answer")
        assert _answers(made.db) == {k: v for k, v in given.items() if k != kept}
        assert _saving(driver) == 0
    finally:
        kill9(again)
    with Session.open(made.db) as s:  # one undo: the answer stored, then marked undone
        rows = Annotators(s).annotations(include_undone=True)
        assert sorted((a.item_id, a.undone is not None) for a in rows) == sorted(
            [(i, i == kept) for i in given])


def test_an_undo_behind_an_answer_then_refused_undoes_nothing(driver: Any,
                                                              tmp_path: Path) -> None:
    """``u`` pressed while the last answer waits for the server; the terminal labels that
    item meanwhile, so the server refuses the answer once it is sent: the undo undoes
    nothing, and says so, instead of the answer before it, which the person did not mean
    (QA: the undo waited and then took back the earlier, stored answer)."""
    made = classification(tmp_path, n=40)
    token = "undo-refused-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, kept = _one_saved_one_kept(driver, made.db, tmp_path, args, token)
    bs.press(driver, "u")
    _until(lambda: "undo waits" in driver.find_element("id", "undo-button").text)
    with Session.open(made.db) as terminal:  # the terminal labels it meanwhile
        terminal.add_label(kept, 0, source="cli")
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        _until(lambda: "nothing undone" in _message(driver))
        assert f"item {kept}" in _message(driver) and bs.message(driver)[1] == [kept]
        assert _answers(made.db) == {k: v for k, v in given.items() if k != kept}
    finally:
        kill9(again)
    with Session.open(made.db) as s:
        assert s.labels() == {**{k: v for k, v in given.items() if k != kept}, kept: 0}


def test_answers_kept_for_another_name_are_kept_not_dropped_nor_sent_as_this_one(
        driver: Any, tmp_path: Path) -> None:
    """An answer of walker waits in the tab (the session locked); another tab of the
    browser signs in as zoe meanwhile (the remembered name is the browser's), and this
    tab is reloaded: it is zoe's now, and walker's answer stays kept in the tab, said,
    never sent as zoe's; signed in as walker again, the tab sends it as walker's (QA: it
    was dropped from the tab at the reload, without a word)."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, busy_timeout=0.3) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "walker")
        assert item is not None
        con = sqlite3.connect(made.db, timeout=5, isolation_level=None)
        con.execute("BEGIN IMMEDIATE")
        try:
            bs.press(driver, "2")
            _until(lambda: "locked by another process" in _message(driver))
            name_key = "'activetest-annotator:' + location.pathname"
            driver.execute_script(f"localStorage.setItem({name_key}, 'zoe')")  # tab two
            # the page says it once, and 0.3 s later its ask for zoe's next item, refused
            # (the file locked), replaces it: what it showed is read, not the line at the
            # moment this looks (QA: on a loaded machine a later read saw the refusal)
            with bs.recording_messages(driver):
                driver.refresh()
                _until(lambda: "annotator: zoe" in driver.find_element("id", "who").text)
                said = _until(lambda: [m for m in bs.messages_shown(driver)
                                       if "walker" in m[0]])[0]
            assert "kept" in said[0]
            # each name in a <bdi>: as walker, not sent as zoe's, sign in as walker
            assert said[1] == ["walker", "zoe", "walker"], said
            kept = driver.execute_script(
                "return JSON.parse(sessionStorage.getItem('activetest-outbox:' + "
                "location.pathname) || '[]')")
            assert [(x["annotator"], x["item_id"]) for x in kept] == [("walker", item)]
        finally:
            con.execute("COMMIT")
            con.close()
        # zoe's page goes on: it shows her an item (its calls queued before it answered)
        # with nothing of hers left to send; walker's answer is not sent as hers
        _until(lambda: bs.page_state(driver)[0] == "ready" and _saving(driver) == 0)
        with Session.open(made.db) as s:
            assert not Annotators(s).annotations(include_undone=True)
        driver.execute_script(f"localStorage.setItem({name_key}, 'walker')")
        driver.refresh()
        _until(lambda: _answers(made.db) == {item: 1})
        with Session.open(made.db) as s:
            assert [a.annotator for a in Annotators(s).annotations()] == ["walker"]


def _skips(db: Path) -> list[tuple[str, int]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT annotator, idx FROM annotation_skips").fetchall()
    finally:
        con.close()


def test_a_failure_while_recording_messages_is_reported_when_the_browser_died() -> None:
    """:func:`bs.recording_messages` takes its script out of the browser when its block
    ends; a browser that died in the block cannot do that, and the error of trying (the
    driver's) was raised in place of the block's own failure, the one to read (QA). The
    block's failure is raised, the other noted with it; a block that ends well still
    takes the script out (the next page loaded records nothing)."""
    browser = bs.chromium()
    quit_ = [browser.quit]
    try:
        with bs.recording_messages(browser):
            pass
        browser.get("data:text/html,<p id=message>x</p>")
        assert browser.execute_script("return window.__messages === undefined")
        with (pytest.raises(AssertionError, match="the block's own failure") as failed,
              bs.recording_messages(browser)):
            quit_.pop()()  # the browser dies, its driver with it
            raise AssertionError("the block's own failure")
        notes = getattr(failed.value, "__notes__", None)
        assert notes is None or "could not be removed" in notes[0], notes
    finally:
        for q in quit_:
            q()


def test_a_skip_made_while_the_server_is_down_survives_a_reload(driver: Any,
                                                                tmp_path: Path) -> None:
    """The server killed (-9), ``s`` pressed: the page says the item is set aside and
    keeps the skip in the tab, as it keeps answers; reloaded while the server is down
    (the browser's own error page), then again once a server at the same address is
    back: the skip is sent and the item stays aside (QA: the skip lived only in the
    page, and a reload before the server was back lost it)."""
    made = classification(tmp_path, n=40)
    token = "skip-kept-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    proc, url = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        bs.fresh(driver)
        item = bs.sign_in(driver, url, "sam")
        assert item is not None
        _until(lambda: claims(made.db).get("sam", 0) >= 3)  # shown and two at hand
    finally:
        kill9(proc)
    bs.press(driver, "s")
    _until(lambda: "does not answer" in _message(driver))
    assert bs.page_state(driver)[1] not in (None, item)
    assert "1 skip(s) not taken" in driver.find_element("id", "unsent").text
    driver.refresh()  # the server is down: the browser's error page
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        driver.get(url)
        shown = bs.wait_for(driver, "ready")
        with Session.open(made.db) as s:
            idx = s.store.index_of(item)
        _until(lambda: _skips(made.db) == [("sam", idx)])
        assert shown != item and _answers(made.db) == {}
        _until(lambda: not driver.find_element("id", "unsent").is_displayed())
    finally:
        kill9(again)


def test_an_undo_waiting_for_answers_when_the_page_is_reloaded_is_said_not_done(
        driver: Any, tmp_path: Path) -> None:
    """The server killed with an answer kept in the tab, ``u`` pressed (the undo waits for
    that answer), then the page reloaded while the server is down and again once a
    server at the same address is back: the kept answer is sent and stored, and the page
    says that the undo pressed before the reload was not done (QA: the undo was lost
    without a word, the person believing the answer taken back)."""
    made = classification(tmp_path, n=40)
    token = "undo-reloaded-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, kept = _one_saved_one_kept(driver, made.db, tmp_path, args, token)
    bs.press(driver, "u")
    _until(lambda: "undo waits" in driver.find_element("id", "undo-button").text)
    url = driver.current_url
    driver.refresh()  # the server is down: the browser's error page
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        driver.get(url)
        _until(lambda: _answers(made.db) == given and _saving(driver) == 0)
        _until(lambda: "was not done" in _message(driver))
        assert f"of item {kept}" in _message(driver) and bs.message(driver)[1] == [kept]
        driver.refresh()  # said once
        # its first item is shown by the last call its start queues, after the one that
        # says an undo was not done (in that order): shown, that word would be said by now
        bs.wait_for(driver, "ready")
        assert "was not done" not in _message(driver)
    finally:
        kill9(again)
    assert _answers(made.db) == given


def test_answers_kept_through_a_reload_on_the_browser_error_page_are_sent_once_back(
        driver: Any, tmp_path: Path) -> None:
    """The server killed with an answer kept in the tab, the page reloaded: the browser
    shows its own error page (nothing of the page says the answer is kept: the page's
    help does, beforehand), then, reloaded once a server at the same address is back,
    the page sends the kept answer, stored once (QA: nothing said that a reload while
    the server was down keeps the answers)."""
    made = classification(tmp_path, n=40)
    token = "reload-down-0123456789"
    args = ("--port", str(_free_port()), "--batch", "5")
    given, _ = _one_saved_one_kept(driver, made.db, tmp_path, args, token)
    bs.press(driver, "?")
    help_text = driver.find_element("id", "help").text
    assert "reload while the server is down" in help_text, help_text
    assert "reload again once the server is back" in help_text
    bs.press(driver, "?")
    url = driver.current_url
    driver.refresh()  # the browser's own error page: no element of the page
    assert not driver.find_elements("id", "unsent")
    again, _ = start_child(made.db, tmp_path, *args, "--token", token)
    try:
        driver.get(url)
        _until(lambda: _answers(made.db) == given and _saving(driver) == 0)
    finally:
        kill9(again)
    with Session.open(made.db) as s:  # each answer stored once
        assert len(Annotators(s).annotations(include_undone=True)) == len(given)
