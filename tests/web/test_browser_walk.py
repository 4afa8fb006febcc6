"""The labelling page walked as a labeller would, in a real headless Chromium: texts
right to left and of other scripts, long items, a phone-wide window, touch only (QA)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from activetest.session.workflow import Session
from tests.session.session_support import make_pool_files
from tests.web import browser_support as bs
from tests.web.web_support import running

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))

HEBREW = "עברית: המוצר הגיע שבור. 123 ABC"
ARABIC = "هذا المنتج رائع جدا ولكن التوصيل كان بطيئا. سأشتريه مرة أخرى؟ (2)"
OTHER = "Très bien ! Größe passt, 日本語のレビューです。👍🏽"
LONG = "a long review, " * 600


def _texts(root: Path, texts: list[str], n: int = 20) -> Path:
    """A classification session whose items' texts cycle through ``texts``."""
    pf = make_pool_files(root / "data", n=n)
    rows = list(csv.reader(pf.pool.open(encoding="utf-8")))
    for i in range(1, len(rows)):
        rows[i][1] = texts[(i - 1) % len(texts)]
    with pf.pool.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    db = root / "t.db"
    Session.create(db, pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                   target=f"table:{pf.target}", seed=3, progress=False,
                   pool_options={"id_column": "id"}).close()
    return db


def _text_of(driver: Any) -> tuple[str, str]:
    """The item's text as shown, and the direction it is laid out in."""
    return tuple(driver.execute_script(  # type: ignore[return-value]
        "const d = document.querySelector('#fields dd.text'); "
        "return [d.textContent, getComputedStyle(d).direction]"))


def test_right_to_left_texts_read_right_to_left_and_others_left_to_right(
        driver: Any, tmp_path: Path) -> None:
    """A Hebrew or Arabic item is laid out right to left (its full stop, question mark
    and numbers where a reader expects them), a French/Japanese one left to right, and a
    right-to-left name keeps its place in the header (QA: every text was laid out left
    to right, "123" at the wrong end)."""
    db = _texts(tmp_path, [HEBREW, OTHER, ARABIC])
    with running(db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "מרים 2")
        seen = {}
        for _ in range(6):
            text, direction = _text_of(driver)
            seen[text] = direction
            bs.press(driver, "1")
            item = bs.wait_for(driver, "ready", not_item=item)
        assert seen == {HEBREW: "rtl", OTHER: "ltr", ARABIC: "rtl"}, seen
        name = driver.execute_script("return document.querySelector('#who bdi').textContent")
        assert name == "מרים 2"


def _rtl_ids(root: Path, n: int = 6) -> Path:
    """A graded session (the pool's answers judged, a uniform surrogate) whose item ids
    are Hebrew words with a number: ``שאלה-0`` ..."""
    root.mkdir(parents=True, exist_ok=True)
    pool = root / "pool.jsonl"
    pool.write_text("".join(json.dumps(
        {"id": f"שאלה-{i}", "question": "Which river flows through Cairo?",
         "context": f"context {i}", "references": ["Nile"], "answer": "Nile"}) + "\n"
        for i in range(n)), encoding="utf-8")
    db = root / "rtl.db"
    Session.create(db, pool=pool, task="squad", target="pool", surrogate="uniform", seed=1,
                   progress=False).close()
    return db


def test_a_right_to_left_name_and_item_id_keep_the_lines_order(
        driver: Any, tmp_path: Path) -> None:
    """The name field takes the direction of what is typed in it (``dir=auto``: a Hebrew
    name is edited right to left), and a right-to-left item id is isolated in the line
    over the item (a ``<bdi>``), so the line reads "item <id> · draw N" in that order,
    and in the status messages ("saved item <id>: ...", "undone: item <id> ...") (QA:
    neither was isolated; the id's direction spilled into " · draw N")."""
    db = _rtl_ids(tmp_path)
    with running(db, batch=2) as server:
        bs.fresh(driver)
        driver.get(server.url)
        bs.wait_for(driver, "name")
        field = driver.find_element("id", "name")
        assert field.get_attribute("dir") == "auto"
        field.send_keys("Ann")
        assert driver.execute_script("return document.getElementById('name')"
                                     ".matches(':dir(ltr)')")
        field.clear()
        field.send_keys("מרים 2")
        assert driver.execute_script("return document.getElementById('name')"
                                     ".matches(':dir(rtl)')")
        bs.press(driver, "\n")
        item = bs.wait_for(driver, ("ready", "done"))
        assert item is not None and item.startswith("שאלה-"), item
        nodes = driver.execute_script(
            "const line = document.querySelector('#meta > span'); "
            "return Array.from(line.childNodes, (n) => [n.nodeName, n.textContent]);")
        s = Session.open(db)
        try:
            step = next(a.step for a in s.acquisitions() if a.item_id == item)
        finally:
            s.close()
        assert nodes == [["#text", "item "], ["BDI", item], ["#text", f" \u00b7 draw {step}"]], \
            nodes
        # the status messages isolate the id too (a <bdi>, not invisible characters in
        # the text: QA: "saved item <id>: ..." let the id's direction take the words
        # after it): "saved item", "undone: item", "set aside item"
        from selenium.webdriver.support.ui import WebDriverWait

        for key, first, after in (("1", "saved item ", ": "),
                                  ("u", "undone: item ", " is unanswered again"),
                                  ("s", "set aside item ", " (it comes back after the others)")):
            bs.press(driver, key)
            WebDriverWait(driver, bs.WAIT_SECONDS).until(
                lambda d, w=first: bs.message(d)[0].startswith(w))
            got = driver.execute_script(
                "return Array.from(document.getElementById('message').childNodes, "
                "(n) => [n.nodeName, n.textContent]);")
            assert got[:2] == [["#text", first], ["BDI", item]], got
            assert len(got) == 3 and got[2][0] == "#text" and got[2][1].startswith(after), got
            assert not set("\u2066\u2067\u2068\u2069\u200e\u200f") & set(str(got))  # no marks
            if key == "u":  # the undone item is shown again, and set aside next
                assert bs.page_state(driver) == ("ready", item)


def _phone(driver: Any) -> dict[str, int]:
    """Make the window phone-sized (360 px wide); returns the size to restore."""
    size: dict[str, int] = driver.get_window_size()
    driver.set_window_size(360, 740)
    return size


def test_in_a_phone_wide_window_the_progress_line_stays_off_the_item(
        driver: Any, tmp_path: Path) -> None:
    """360 px wide, with the estimate and its notes on the progress line: the line
    follows the item, it does not sit over it (QA: sticky at the bottom it took half of
    the screen, over the item's text and its buttons)."""
    db = _texts(tmp_path, [LONG])
    size = _phone(driver)
    try:
        with running(db, batch=5) as server:
            bs.fresh(driver)
            item = bs.sign_in(driver, server.url, "pia")
            for _ in range(4):
                bs.press(driver, "1")
                item = bs.wait_for(driver, "ready", not_item=item)
            bs.wait_for(driver, "ready")
            from selenium.webdriver.support.ui import WebDriverWait

            WebDriverWait(driver, bs.WAIT_SECONDS).until(
                lambda d: "label(s) used" in d.find_element("id", "progress").text)
            driver.execute_script("window.scrollTo(0, 0)")
            top, height, page, shown = driver.execute_script(
                "const f = document.getElementById('progress').getBoundingClientRect(); "
                "return [f.top, window.innerHeight, "
                "document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            assert top >= height, (top, height)  # below the screen, not over the item
            assert page <= shown, (page, shown)
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_the_next_item_shows_from_its_start_after_a_long_one_read_to_its_end(
        driver: Any, tmp_path: Path) -> None:
    """A long item read to its end and answered with the button under it: the next item
    shows from its first line (QA: the page stayed scrolled down, the next item showed
    from its middle)."""
    db = _texts(tmp_path, [LONG])
    size = _phone(driver)
    try:
        with running(db, batch=5) as server:
            bs.fresh(driver)
            item = bs.sign_in(driver, server.url, "ola")
            for _ in range(2):
                driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
                button = driver.find_element("css selector", "#choices button")
                assert driver.execute_script(
                    "return document.getElementById('card').getBoundingClientRect().top"
                ) < 0
                button.click()
                item = bs.wait_for(driver, "ready", not_item=item)
                top = driver.execute_script(
                    "return document.getElementById('card').getBoundingClientRect().top")
                assert -1 <= top < 200, top
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_the_help_opens_and_closes_without_a_keyboard(driver: Any, tmp_path: Path) -> None:
    """On a touch screen: the "?" in the header is a button that opens the help, and the
    help's "close" button closes it; the item is answered by its buttons then (QA: only
    the ? key opened the help, and nothing but Esc or ? closed it)."""
    db = _texts(tmp_path, [OTHER])
    size = _phone(driver)
    try:
        with running(db, batch=5) as server:
            bs.fresh(driver)
            driver.get(server.url)
            bs.wait_for(driver, "name")  # before the name: the help shows the keys too
            driver.find_element("id", "help-button").click()
            assert "undo your last answer" in driver.find_element("id", "help").text
            driver.find_element("id", "help-close").click()
            item = bs.sign_in(driver, server.url, "uma")
            help_box = driver.find_element("id", "help")
            driver.find_element("id", "help-button").click()
            assert help_box.is_displayed()
            assert "kept for you while this page is open" in help_box.text
            driver.find_element("id", "help-close").click()
            assert not help_box.is_displayed()
            driver.find_element("css selector", "#choices button").click()
            assert bs.wait_for(driver, "ready", not_item=item) != item
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_a_long_answer_judged_brings_the_next_answer_into_view(driver: Any,
                                                               tmp_path: Path) -> None:
    """A paired item whose answers are long, in a phone-wide window: once answer A is
    judged (a key), answer B is scrolled into view, and Backspace brings A back (QA: B
    stayed pages below, and nothing in view said the key had counted)."""
    pool = [{"id": f"q{i}", "question": "Which river?", "context": "c", "references": ["Nile"],
             "answer": "The Nile, a long river. " * 250} for i in range(6)]
    other = [{"id": f"q{i}", "question": "Which river?",
              "answer": "Another long answer. " * 250} for i in range(6)]
    p, b = tmp_path / "pool.jsonl", tmp_path / "b.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in pool), encoding="utf-8")
    b.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    db = tmp_path / "paired.db"
    Session.create(db, pool=p, task="squad", target="pool", surrogate="uniform", seed=1,
                   progress=False, compare=[f"answers:{b}"]).close()
    size = _phone(driver)
    tops = ("return [window.innerHeight].concat([...document.querySelectorAll('.answer')]"
            ".map(a => a.getBoundingClientRect().top))")
    try:
        with running(db, batch=4) as server:
            bs.fresh(driver)
            item = bs.sign_in(driver, server.url, "kim")
            height, _, b_top = driver.execute_script(tops)
            assert b_top > height  # B starts below the screen
            bs.press(driver, "1")  # A judged
            height, a_top, b_top = driver.execute_script(tops)
            assert -1 <= b_top < height, (b_top, height)
            bs.press(driver, "\ue003")  # Backspace: back to A
            height, a_top, b_top = driver.execute_script(tops)
            assert -1 <= a_top < height, (a_top, height)
            bs.press(driver, "12")
            assert bs.wait_for(driver, "ready", not_item=item) != item
    finally:
        driver.set_window_size(size["width"], size["height"])
