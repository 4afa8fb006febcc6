"""Fixtures of the labelling page's browser tests; the failure report of a test that
started children (``activetest serve``) shows each one's last lines (stdout and stderr)."""

from __future__ import annotations

from collections.abc import Generator, Iterator
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
