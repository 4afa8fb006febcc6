"""A real headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by
selenium, for the labelling page's browser tests and the screenshot script."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: ``--disable-dev-shm-usage``: Chromium's shared memory in /tmp, not /dev/shm, which a
#: container may size at 64 MB (a renderer short of it stalls: a CI run's page load hung
#: until selenium's 120 s read timeout).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-dev-shm-usage", "--window-size=1100,820")
#: A page load that takes longer is a stalled browser: chromedriver says so (selenium's
#: ``TimeoutException``) before selenium's own 120 s wait for chromedriver runs out.
PAGE_LOAD_SECONDS = 60
#: How long a test waits for the page to reach a state: generous (it costs nothing when
#: the page is quick), so that a loaded machine does not fail a test that checks no speed.
WAIT_SECONDS = 60.0


def missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e '.[dev]')"
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(path):
            return (f"{path} is absent: the browser tests need Debian's {pkg} "
                    f"(scripts/install.sh installs it; apt-get install chromium chromium-driver)")
    return None


def chromium() -> Any:
    """A fresh headless Chromium (its own profile folder) under chromedriver. Its
    ``quit()`` also removes the profile folder (about 7 MB each: a CI run left 79 of them
    in /tmp before)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    class _Chrome(webdriver.Chrome):  # type: ignore[misc]
        profile = ""

        def quit(self) -> None:
            try:
                super().quit()
            finally:
                shutil.rmtree(self.profile, ignore_errors=True)

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS:
        opts.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="activetest-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    try:
        driver = _Chrome(options=opts, service=Service(CHROMEDRIVER))
    except BaseException:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    driver.profile = profile
    driver.set_page_load_timeout(PAGE_LOAD_SECONDS)
    return driver


def stalled(exc: BaseException) -> bool:
    """Whether ``exc`` is the browser not answering in time (a page load past
    :data:`PAGE_LOAD_SECONDS`, or chromedriver silent past selenium's wait), not a wrong
    page: a script may start a fresh browser and try once more."""
    from selenium.common.exceptions import TimeoutException
    from urllib3.exceptions import ReadTimeoutError

    return isinstance(exc, (TimeoutException, ReadTimeoutError))


def fresh(driver: Any) -> None:
    """Forget the previous test's name (each test is another person)."""
    driver.get("about:blank")
    driver.delete_all_cookies()


def page_state(driver: Any) -> tuple[str | None, str | None]:
    """``(body data-state, body data-item)``."""
    return tuple(driver.execute_script(  # type: ignore[return-value]
        "return [document.body.dataset.state || null, document.body.dataset.item || null]"))


def wait_for(driver: Any, state: str | tuple[str, ...], not_item: str | None = None,
             timeout: float = WAIT_SECONDS) -> str | None:
    """Wait until the page is in ``state`` (and shows another item than ``not_item``);
    returns the item shown. Past ``timeout`` s, selenium's ``TimeoutException`` says what
    was waited for and where the page is."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    states = (state,) if isinstance(state, str) else state

    def ready(d: Any) -> Any:
        s, item = page_state(d)
        return s in states and (not_item is None or item != not_item) and (s, item)

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.02).until(ready)[1]
    except TimeoutException:
        try:
            now: Any = page_state(driver)
        except Exception as e:  # the browser itself may be what stalled
            now = f"unknown ({type(e).__name__})"
        raise TimeoutException(
            f"waited {timeout:g} s for the page's state {' or '.join(states)}"
            + (f" with another item than {not_item!r}" if not_item is not None else "")
            + f"; (state, item) is {now}") from None


def wait_for_used(driver: Any, n: int, timeout: float = WAIT_SECONDS) -> str:
    """Wait until the progress line says ``n label(s) used``; returns the line's text."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(
        lambda d: f"{n} label(s) used" in d.find_element("id", "progress").text)
    return str(driver.find_element("id", "progress").text)


def press(driver: Any, keys: str) -> None:
    """Type ``keys`` as a person would (to the focused element: the page)."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def sign_in(driver: Any, url: str, name: str) -> str | None:
    """Open the page, type a name and Enter; returns the first item shown."""
    driver.get(url)
    wait_for(driver, "name")
    press(driver, name + "\n")
    return wait_for(driver, ("ready", "done"))


def message(driver: Any) -> tuple[str, list[str]]:
    """The message line as read (its ``textContent``, which an isolating ``<bdi>``
    keeps) and the texts of its ``<bdi>`` elements (item ids and names, each isolated
    in its own direction)."""
    text, isolated = driver.execute_script(
        "const m = document.getElementById('message'); "
        "return [m.textContent, Array.from(m.querySelectorAll('bdi'), (b) => b.textContent)]")
    return str(text), list(isolated)


#: Run by Chromium in each document loaded while :func:`recording_messages` is on, before
#: the page's own scripts: each text the message line takes, in the order shown (the
#: observer runs once the page's change is complete: a text cleared, then written, is one).
_MESSAGES = """
const shown = window.__messages = [];
new MutationObserver((changes) => {
  const m = document.getElementById("message");
  if (!m || !changes.some((c) => m.contains(c.target))) { return; }
  shown.push([m.textContent, Array.from(m.querySelectorAll("bdi"), (b) => b.textContent)]);
}).observe(document, {childList: true, characterData: true, subtree: true});
"""


@contextmanager
def recording_messages(driver: Any) -> Iterator[None]:
    """While on, each page loaded (a reload included) records every text its message
    line shows (see :func:`messages_shown`). For a test that checks a message the page
    replaces a moment later (a refusal retried every 2 s): the test reads what was shown,
    not the line at the moment it looks, which a loaded machine may make too late."""
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": _MESSAGES})

    def remove() -> None:
        driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument",
                               {"identifier": added["identifier"]})

    try:
        yield
    except BaseException as failure:
        # the block's own failure is the one reported: a browser that died with it
        # cannot remove the script either, and that error hid the real one (QA)
        try:
            remove()
        except Exception as also:  # any: the driver's, the connection's
            note = getattr(failure, "add_note", None)  # Python 3.11+
            if note is not None:
                note(f"(and the message recording could not be removed: "
                     f"{type(also).__name__}: {str(also).splitlines()[0] if str(also) else ''})")
        raise
    remove()


def messages_shown(driver: Any) -> list[tuple[str, list[str]]]:
    """The texts the message line has shown since this page was loaded under
    :func:`recording_messages`, in order, each as :func:`message` reads it."""
    shown = driver.execute_script("return window.__messages || []")
    return [(str(text), list(isolated)) for text, isolated in shown]


#: Installed in a page by :func:`record_calls`: each ``api/...`` call the page makes from
#: then on, in the order made, with the HTTP status of its answer (null: not answered
#: yet; 0: no answer, the server did not answer).
_RECORD = """
if (!window.__calls) {
  const calls = window.__calls = [];
  const real = window.fetch;
  window.fetch = function (url) {
    const c = {name: String(url).replace(/^.*api\\//, ""), status: null};
    calls.push(c);
    return real.apply(this, arguments).then(
      (r) => { c.status = r.status; return r; }, (e) => { c.status = 0; throw e; });
  };
}
"""


def record_calls(driver: Any) -> None:
    """Record the ``api/...`` calls the page makes from now on (see :func:`calls_made`);
    a reload ends it. For a test that checks that nothing was sent or kept wrongly: it
    waits for the page's own calls (a resend, refused again) as the evidence that the
    page had the chance to do the wrong thing, not for a fixed time."""
    driver.execute_script(_RECORD)


def calls_made(driver: Any, name: str) -> list[int | None]:
    """The HTTP statuses of the page's calls to ``api/name`` since :func:`record_calls`,
    in the order made (None: not answered yet; 0: no answer)."""
    return list(driver.execute_script(
        "return (window.__calls || []).filter((c) => c.name === arguments[0])"
        ".map((c) => c.status)", name))


#: Installed in a page by :func:`watch`: the times (the page's ``performance.now()``, ms)
#: its event loop ran a 100 ms timer, and those it sent ``api/alive``.
_WATCH = """
if (!window.__watch) {
  const w = window.__watch = {since: performance.now(), ticks: [], alive: []};
  setInterval(() => w.ticks.push(performance.now()), 100);
  const real = window.fetch;
  window.fetch = function (url, opts) {
    if (String(url).endsWith("api/alive")) { w.alive.push(performance.now()); }
    return real.apply(this, arguments);
  };
}
"""


@dataclass(frozen=True)
class Watched:
    """What a page did since :func:`watch`, in seconds of its own clock: the longest time
    its event loop did not run (the browser stalled: a loaded machine) and the longest
    time it sent no ``api/alive`` (its heartbeat stopped, or the browser stalled)."""

    seconds: float
    longest_stall: float
    longest_silence: float

    def __str__(self) -> str:
        return (f"over {self.seconds:.1f} s its event loop stalled at most "
                f"{self.longest_stall:.2f} s, and it sent no api/alive for at most "
                f"{self.longest_silence:.2f} s")


def watch(driver: Any) -> None:
    """Start watching the page (see :class:`Watched`); a reload ends it."""
    driver.execute_script(_WATCH)


def watched(driver: Any) -> Watched:
    """What the page did since :func:`watch`."""
    now, since, ticks, alive = driver.execute_script(
        "const w = window.__watch; return [performance.now(), w.since, w.ticks, w.alive]")

    def longest(times: list[float]) -> float:
        edges = [since, *times, now]
        return max(b - a for a, b in pairwise(edges)) / 1000

    return Watched((now - since) / 1000, longest(ticks), longest(alive))
