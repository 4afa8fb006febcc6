"""Fixtures of the labelling page's tests: a real headless Chromium per browser test
module, and numba's compiled kernels made before the first test of a run; the failure
report of a test that started children (``activetest serve``) shows each one's last lines
(stdout and stderr)."""

from __future__ import annotations

import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import browser_support as bs
from tests.web.web_support import children_started


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """A real headless Chromium for one test module (each module its own)."""
    d = bs.chromium()
    try:
        yield d
    finally:
        d.quit()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None],
                              ) -> Generator[None, Any, None]:
    """A failed phase of a test gets a section per child server it started (see
    :class:`tests.web.web_support.Child`): what the server said before the failure (a
    warning, a traceback, a lock wait) is in the report, not lost with the pipe. After
    the test's teardown its children are forgotten."""
    outcome = yield
    report = outcome.get_result()
    children = children_started(forget=report.when == "teardown")
    if report.failed:
        for child in children:
            report.sections.append((f"child pid {child.pid}: its last lines",
                                    child.report()))


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels() -> None:
    """Draw, label and estimate once, in this process and before any test, with the
    kinds of session the page's tests serve (adaptive classification, graded), so that
    numba has compiled their kernels into its on-disk cache. On a fresh checkout the
    first draw compiles them: minutes on a loaded 2-core machine (measured here: 281 s at
    a load of 11), which the first test to draw paid inside an HTTP call with a 30 s
    read timeout or a browser wait of 60 s, and failed for no fault of the page (QA: a
    stress run of tests/web/test_server.py on a fresh clone, `next` timed out). With the
    cache warm this only loads them (about a second), as the first draw would anyway.
    Nothing is timed here: however long the compile takes, no test's wait includes it."""
    from activetest.session.workflow import Session
    from tests.web.web_support import classification, graded

    with tempfile.TemporaryDirectory(prefix="activetest-warm-") as tmp:
        for made in (classification(Path(tmp) / "c", n=20), graded(Path(tmp) / "g", n=8)):
            with Session.open(made.db) as s:
                for a in s.select(4):
                    s.add_label(a.item_id, made.truth[a.item_id], source="api")
                s.estimate(n_boot=50)
