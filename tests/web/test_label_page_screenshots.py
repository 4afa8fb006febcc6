"""The screenshots of docs/labelling.md (``benchmarks/label_page.py --screenshots``): every
text of the item shows above the page's sticky progress footer, and the paired layout
shows no warning the script provoked."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tests.web import browser_support as bs

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))

ROOT = Path(__file__).resolve().parents[2]


def _label_page():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # its own `_cells` import
    spec = importlib.util.spec_from_file_location("label_page", ROOT / "benchmarks" /
                                                  "label_page.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_screenshots_show_every_text_above_the_footer(tmp_path: Path) -> None:
    """QA: paired.png's last lines (the page's warning about two same-text answers judged
    differently, which the script's keys provoked) lay under the progress footer."""
    from PIL import Image

    paths = _label_page().screenshots(tmp_path)  # raises where a text is hidden
    assert [p.name for p in paths] == ["classification.png", "graded.png", "paired.png"]
    for p in paths:
        assert Image.open(p).size[1] > 800  # the taller window, not 1100 x 820's viewport


def test_a_stalled_page_load_is_said_by_chromedriver_and_known_as_a_stall() -> None:
    """A CI run's page load hung until selenium's own 120 s read timeout: the drivers now
    set a page-load limit, so chromedriver says a stall (a server that takes the
    connection and never answers, for real) and ``stalled`` knows it, for a script's one
    retry with a fresh browser; a wrong page is not a stall."""
    import socket

    from selenium.common.exceptions import TimeoutException

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    driver = bs.chromium()
    try:
        assert bs.PAGE_LOAD_SECONDS < 120  # below selenium's wait for chromedriver
        driver.set_page_load_timeout(2)
        with pytest.raises(TimeoutException) as caught:
            driver.get(f"http://127.0.0.1:{silent.getsockname()[1]}/")
        assert bs.stalled(caught.value)
        assert not bs.stalled(RuntimeError("classification: under the footer: ..."))
    finally:
        driver.quit()
        silent.close()
