"""Two people on the labelling page at once, each in a real headless Chromium of its own:
what one does with the items it holds reaches the other's page promptly."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from activetest.web.api import WAITS_PER_BROWSER
from tests.web import browser_support as bs
from tests.web.web_support import CallLog, claims, classification, running

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))


def _browser(driver: Any) -> str:
    """The page's id of its browser (``api/wait`` is held per browser)."""
    return str(driver.execute_script("return localStorage.getItem('activetest-browser')"))


def _woken(log: CallLog, browser: str, what: str) -> None:
    """Assert that the last ``api/wait`` of ``browser`` held before now ended because
    something changed, not because its seconds ran out: the page was told at once (QA:
    it learnt only when its own wait, up to 25-30 s, was over). Told apart by the wait's
    answer, not by the time it took, so a loaded machine does not fail it."""
    last = log.last_wait(browser)
    assert last is not None, f"{what}: the page never waited on api/wait " \
        f"(its calls: {[c.name for c in log.calls(who=browser)]})"
    assert last.changed, (
        f"{what}: the page's last wait ran its seconds out ({last.ended - last.started:.1f} s, "
        f"no change seen) instead of being woken by the change")


@pytest.fixture(scope="module")
def second() -> Iterator[Any]:
    """A second headless Chromium: the other person."""
    d = bs.chromium()
    try:
        yield d
    finally:
        d.quit()


def _done_text(driver: Any) -> str:
    return str(driver.find_element("id", "done").text)


def _answer_all(driver: Any, item: str | None) -> set[str]:
    """Answer (key 1) every item the page shows until it shows none; returns them."""
    seen: set[str] = set()
    while item is not None and bs.page_state(driver)[0] == "ready":
        seen.add(item)
        bs.press(driver, "1")
        item = bs.wait_for(driver, ("ready", "done"), not_item=item)
    return seen


def test_items_given_back_or_answered_by_another_reach_a_waiting_page_promptly(
        driver: Any, second: Any, tmp_path: Path) -> None:
    """Every drawn item of the budget is answered or held by another person (claims of
    10 min): the page says nothing is there for now. The other closes their page (its
    items go back): the waiting page shows them within seconds; and once the last item
    is answered on one page, the other, waiting, says so within seconds (QA: the page
    asked again only every 30 s, whatever the others did)."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, budget=5) as server:
        log = CallLog(server)
        bs.fresh(driver)
        bs.fresh(second)
        first = bs.sign_in(driver, server.url, "ann")  # ann holds 3 (shown + 2 ahead)
        assert first is not None
        mine = _answer_all(second, bs.sign_in(second, server.url, "bob"))
        assert len(mine) == 2
        bs.wait_for(second, "done")
        assert "held by other annotators" in _done_text(second), _done_text(second)
        bob = _browser(second)
        assert _until(lambda: server.waits_held(bob) == 1, 60), \
            "bob's page, with nothing to label, never waited on api/wait"
        driver.get("about:blank")  # ann leaves: her items go back
        item = bs.wait_for(second, "ready")
        assert item not in mine
        assert log.calls("release", "ann"), "ann's page gave nothing back as it went"
        _woken(log, bob, "ann's items given back")
        # ann comes back (her name remembered): nothing for her while bob holds the rest
        driver.get(server.url)
        bs.wait_for(driver, "done")
        assert "held by other annotators" in _done_text(driver), _done_text(driver)
        ann = _browser(driver)
        assert _until(lambda: server.waits_held(ann) == 1, 60), \
            "ann's page, with nothing to label, never waited on api/wait"
        mine |= _answer_all(second, item)
        assert len(mine) == 5
        bs.wait_for(second, "done")
        for page in (second, driver):  # both told the budget's items have their answers
            assert _until(lambda page=page: "every drawn item has its answers" in
                          _done_text(page), bs.WAIT_SECONDS), _done_text(page)
        _woken(log, ann, "the last item answered on bob's page")


def test_a_second_tab_of_one_person_is_said_in_both_and_closing_it_keeps_the_items(
        driver: Any, tmp_path: Path) -> None:
    """The page opened in a second tab of one browser (the name remembered: the same
    person) shows the same items as the first; both tabs say so, and closing one gives
    back nothing the other shows (QA: nothing said that two tabs showed one person's
    items, an answer in the second to an item answered in the first was refused, and
    closing either gave the other's items back to everyone)."""
    made = classification(tmp_path, n=40)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "ann")
        one = driver.current_window_handle
        warning = "open in another tab of this browser"
        assert warning not in driver.find_element("tag name", "header").text
        driver.switch_to.new_window("tab")
        driver.get(server.url)
        assert bs.wait_for(driver, "ready") == first  # the same person: the same item
        for tab in (driver.current_window_handle, one):
            driver.switch_to.window(tab)
            deadline = time.monotonic() + 60
            while warning not in driver.find_element("tag name", "header").text and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            assert warning in driver.find_element("tag name", "header").text
        held = claims(made.db)["ann"]
        driver.switch_to.window(next(h for h in driver.window_handles if h != one))
        # what the second tab does as it goes, kept where the first reads it: a call to
        # api/release, and the end of its pagehide (a listener added after the page's)
        driver.execute_script(
            "localStorage.removeItem('__released'); localStorage.removeItem('__gone'); "
            "const real = window.fetch; window.fetch = function (url) { "
            "if (String(url).endsWith('api/release')) { localStorage.setItem('__released', "
            "'1'); } return real.apply(this, arguments); }; "
            "addEventListener('pagehide', () => localStorage.setItem('__gone', '1'));")
        driver.close()  # the second tab goes: the first still shows ann's items
        driver.switch_to.window(one)
        deadline = time.monotonic() + 60
        while warning in driver.find_element("tag name", "header").text and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        assert warning not in driver.find_element("tag name", "header").text
        # its page went (its pagehide done) without a call to api/release (a fixed 1 s
        # wait, on a loaded machine, could end before a release reached the server)
        gone = "return [localStorage.getItem('__gone'), localStorage.getItem('__released')]"
        assert _until(lambda: driver.execute_script(gone)[0], bs.WAIT_SECONDS), \
            "the second tab's pagehide never ended"
        assert driver.execute_script(gone) == ["1", None], "the closed tab sent api/release"
        assert claims(made.db).get("ann") == held
        driver.get("about:blank")  # the last tab goes: its items go back
        deadline = time.monotonic() + 60
        while claims(made.db).get("ann") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not claims(made.db).get("ann")


@contextmanager
def _most_waits_held(server: Any, browser: str) -> Iterator[list[int]]:
    """The most ``api/wait`` calls of ``browser`` the server held open at once while the
    block ran (looked at every 10 ms from a thread of its own): ``[n]``, set at the end."""
    most = [server.waits_held(browser)]
    stop = threading.Event()

    def look() -> None:
        while not stop.wait(0.01):
            most[0] = max(most[0], server.waits_held(browser))

    watcher = threading.Thread(target=look, daemon=True)
    watcher.start()
    try:
        yield most
    finally:
        stop.set()
        watcher.join(10)


def _answers(db: Path) -> dict[str, int]:
    from activetest.session.annotators import Annotators
    from activetest.session.workflow import Session

    with Session.open(db) as s:
        return {a.item_id: a.label for a in Annotators(s).annotations()}


def test_six_tabs_waiting_leave_a_seventh_tab_free_to_load_and_answer(
        driver: Any, tmp_path: Path) -> None:
    """Six tabs of one browser wait for items others hold (each asking ``api/wait``), and
    a seventh tab of that browser, signed in as the person holding them, loads and
    answers: its page shows and its answer is stored, the server never holding more than
    two of the browser's waits meanwhile, so its calls never queue behind them (QA: a
    browser opens 6 connections to one address, each waiting tab held one for up to
    25 s, so the seventh tab's calls queued behind them)."""
    from tests.web.web_support import Client

    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, budget=5) as server:
        Client(server.url, "ann").ok("POST", "next", {"ahead": 4})  # ann holds all five
        bs.fresh(driver)
        one = driver.current_window_handle
        tabs = [one]
        try:
            assert bs.sign_in(driver, server.url, "bob") is None  # nothing for bob
            for _ in range(5):
                driver.switch_to.new_window("tab")
                tabs.append(driver.current_window_handle)
                driver.get(server.url)  # bob (the name remembered)
                bs.wait_for(driver, "done", timeout=60)
                assert "held by other annotators" in _done_text(driver)
            browser = _browser(driver)
            # every tab waits on api/wait now (two held, the others answered "crowded")
            assert _until(lambda: server.waits_held(browser) >= 2, 60), \
                "the waiting tabs' api/wait were never held"
            driver.execute_script("localStorage.setItem('activetest-annotator:' + "
                                  "location.pathname, 'ann')")
            with _most_waits_held(server, browser) as most:
                driver.switch_to.new_window("tab")
                tabs.append(driver.current_window_handle)
                driver.get(server.url)
                item = bs.wait_for(driver, "ready")
                assert "annotator: ann" in driver.find_element("id", "who").text
                bs.press(driver, "2")
                assert _until(lambda: _answers(made.db) == {item: 1}, bs.WAIT_SECONDS)
            # the seventh tab was never queued behind the others' waits: at most two of
            # them held a connection at any time (told by the server's count, not by how
            # long the tab took, so a loaded machine does not fail it)
            assert most[0] <= WAITS_PER_BROWSER, (
                f"{most[0]} waits of one browser were held at once: its 6 connections "
                f"to the server were taken by the waiting tabs")
        finally:
            for tab in tabs[1:]:
                driver.switch_to.window(tab)
                driver.close()
            driver.switch_to.window(one)
            driver.get("about:blank")


def _until(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    return check()


def test_a_closed_tab_frees_its_wait_for_a_third_tab_at_once(driver: Any,
                                                             tmp_path: Path) -> None:
    """Two tabs of one browser wait for items others hold (the two waits the server holds
    open per browser); one tab is closed: its wait ends as it goes (before its seconds
    run out), and a third tab opened then gets its wait held, not answered ``crowded``
    (QA: the closed tab's wait kept its slot for up to 25 s, the server not seeing the
    tab go)."""
    from tests.web.web_support import Client

    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, budget=5) as server:
        log = CallLog(server)
        Client(server.url, "ann").ok("POST", "next", {"ahead": 4})  # ann holds all five
        bs.fresh(driver)
        one = driver.current_window_handle
        tabs = [one]
        try:
            assert bs.sign_in(driver, server.url, "bob") is None  # nothing for bob
            browser = _browser(driver)
            driver.switch_to.new_window("tab")
            tabs.append(driver.current_window_handle)
            driver.get(server.url)
            bs.wait_for(driver, "done", timeout=60)
            assert _until(lambda: server.waits_held(browser) == 2) is True
            driver.close()  # the second tab goes
            tabs.pop()
            driver.switch_to.window(one)
            closed = time.monotonic()
            assert _until(lambda: server.waits_held(browser) == 1, bs.WAIT_SECONDS) is True
            # its wait ended as the tab went, not at the end of its 25 s (told by how the
            # wait ended, not by how long it took, so a loaded machine does not fail it)
            ended = [c for c in log.calls("wait", browser) if c.ended >= closed]
            assert any(c.left_early for c in ended), (
                f"the closed tab's wait was held until its seconds ran out: {ended}")
            opened = time.monotonic()
            driver.switch_to.new_window("tab")
            tabs.append(driver.current_window_handle)
            driver.get(server.url)
            bs.wait_for(driver, "done", timeout=60)
            assert _until(lambda: server.waits_held(browser) == 2, bs.WAIT_SECONDS) is True
            assert driver.execute_script("return document.body.dataset.wait") == "held"
            crowded = [c for c in log.calls("wait", browser) if c.started >= opened and c.crowded]
            assert not crowded, f"the third tab's wait was answered crowded: {crowded}"
        finally:
            for tab in tabs[1:]:
                driver.switch_to.window(tab)
                driver.close()
            driver.switch_to.window(one)
            driver.get("about:blank")


def test_a_crashed_page_gives_its_items_back_once_it_is_silent(
        driver: Any, second: Any, tmp_path: Path) -> None:
    """ann's page holds three items; bob, done, waits for them. While ann's page is open
    it says so (``api/alive``) and keeps them past ``silent_seconds``; its tab crashes
    (``chrome://crash``: no pagehide, no release): the server gives them back for its
    silence, and bob's waiting page is woken with them (QA: only when their claims
    lapsed, 10 min). A run in which the machine stalled ann's browser (or this process)
    past ``silent_seconds`` cannot tell a live page from a silent one: it is run again
    (at most 3 times); a page that itself stopped saying it is open fails."""
    why: list[str] = []
    for run in range(3):
        stalled = _crash_once(driver, second, tmp_path / f"run{run}")
        if stalled is None:
            break
        why.append(stalled)
    else:
        pytest.fail("every run was stalled past silent_seconds: " + "; ".join(why))
    bs.fresh(driver)  # the browser goes on (the next test's)


def _crash_once(driver: Any, second: Any, root: Path) -> str | None:
    """One run of the crash test above: None once all was checked, or why this run could
    not tell (the machine stalled ann's page, or this process, past ``silent_seconds``)."""
    from selenium.common.exceptions import WebDriverException

    silent = 3.0
    made = classification(root, n=40)
    with running(made.db, batch=5, budget=5, silent_seconds=silent) as server:
        log = CallLog(server)
        bs.fresh(driver)
        bs.fresh(second)
        one = driver.current_window_handle
        driver.switch_to.new_window("tab")  # ann's tab, to crash
        try:
            assert bs.sign_in(driver, server.url, "ann") is not None  # holds 3
            bs.watch(driver)
            try:
                mine = _while_ann_is_open(driver, second, server, log, silent)
            except Exception:  # her items went to bob meanwhile: why?
                if not log.released("ann"):
                    raise
                return _stall(log, bs.watched(driver), silent)
            if log.released("ann") or claims(made.db).get("ann") != 3:
                return _stall(log, bs.watched(driver), silent)
            with pytest.raises(WebDriverException):
                driver.get("chrome://crash")
            item = bs.wait_for(second, "ready")
            assert item not in mine and not claims(made.db).get("ann")
            assert log.released("ann"), "ann's items came back, not for her silence"
            _woken(log, _browser(second), "the crashed page's items given back")
        finally:
            driver.close()
            driver.switch_to.window(one)
            second.get("about:blank")
    return None


def _while_ann_is_open(driver: Any, second: Any, server: Any, log: CallLog,
                       silent: float) -> set[str]:
    """bob answers the two items ann does not hold and waits; ann's page, open, says so
    for twice ``silent`` s as the server hears it (her items stay hers: checked by the
    caller). Returns bob's items."""
    mine = _answer_all(second, bs.sign_in(second, server.url, "bob"))
    assert len(mine) == 2
    bs.wait_for(second, "done")
    assert "held by other annotators" in _done_text(second), _done_text(second)
    help_text = driver.execute_script(
        "return document.getElementById('help-claims').textContent")
    assert "has not heard from for 3 s" in help_text, help_text  # the rule, said
    t0 = time.monotonic()
    assert _until(lambda: any(c.started > t0 + 2 * silent
                              for c in log.calls("alive", "ann")), 60), (
        f"ann's open page stopped saying so: no api/alive heard from it more than "
        f"{2 * silent:g} s after bob was done (waited {time.monotonic() - t0:.0f} s; the "
        f"page: {bs.watched(driver)})")
    assert bs.page_state(second)[0] == "done"
    return mine


def _stall(log: CallLog, page: bs.Watched, silent: float) -> str:
    """Why ann's open page lost its items: the machine stalled it, or this process, past
    ``silent`` s (returned, said); else the test fails here (the page stopped saying it
    is open, or the server gave back the items of a page it kept hearing)."""
    gone = [c.started for c in log.released("ann")]
    assert gone, "ann's items went back while her page was open, not for its silence " \
        f"(the calls: {[(c.name, c.who) for c in log.calls()]})"
    heard = [c.started for c in log.calls("alive", "ann") if c.started <= gone[0]]
    quiet = gone[0] - heard[-1] if heard else float("inf")
    assert quiet >= silent, (
        f"the server gave back the items of ann's open page, having heard it {quiet:.1f} s "
        f"before (silent_seconds {silent:g})")
    if page.longest_stall >= silent / 2:  # enough, with a missed beat, to explain it
        return f"ann's browser stalled {page.longest_stall:.1f} s"
    assert page.longest_silence < silent, (
        f"ann's page, running ({page}), stopped saying it is open for "
        f"{page.longest_silence:.1f} s: its items went back (silent_seconds {silent:g})")
    return f"the page's api/alive reached the server {quiet:.1f} s apart ({page})"


def test_a_page_silent_a_while_gets_back_what_nobody_took(driver: Any,
                                                          tmp_path: Path) -> None:
    """ann's page is frozen (as a browser freezes a background tab, or a computer sleeps)
    past ``silent_seconds``: her items go back, and bob takes the first; the page wakes:
    the items nobody took are hers again, and the page says the one it shows went to
    another annotator (QA: after a sleep the page showed items that were nobody's)."""
    from tests.web.web_support import Client

    made = classification(tmp_path, n=40)
    with running(made.db, batch=5, budget=5, silent_seconds=3) as server:
        bs.fresh(driver)
        shown = bs.sign_in(driver, server.url, "ann")
        assert _until(lambda: claims(made.db).get("ann") == 3) is True
        driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "frozen"})
        try:
            assert _until(lambda: not claims(made.db).get("ann"), 30) is True
            took = Client(server.url, "bob").next()
            assert took is not None and took["item_id"] == shown  # the first drawn
        finally:
            driver.execute_cdp_cmd("Page.setWebLifecycleState", {"state": "active"})
        assert _until(lambda: claims(made.db).get("ann") == 2, 15) is True
        assert _until(lambda: "went to another annotator" in driver.find_element(
            "id", "message").text, 10)
        driver.get("about:blank")
