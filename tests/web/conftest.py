"""Fixtures of the labelling page's browser tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.web import browser_support as bs


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    """A real headless Chromium for one test module (each module its own)."""
    d = bs.chromium()
    try:
        yield d
    finally:
        d.quit()
