"""The labelling page in a real headless Chromium: 30 items labelled by keyboard alone,
an undo, a reload half-way, and the session holds exactly the answers given; hostile
item text shows as text and runs nothing; the graded and paired layouts. Skipped,
with the reason, where chromium or chromedriver is absent (CI installs both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from activetest.session.annotators import Annotators
from activetest.session.workflow import Session
from tests.web import browser_support as bs
from tests.web.web_support import HOSTILE, classification, graded, running

pytestmark = pytest.mark.skipif(bs.missing() is not None, reason=str(bs.missing()))


def _nothing_ran(driver: Any) -> None:
    assert driver.execute_script("return window.__pwned === undefined")
    assert driver.execute_script(
        "return document.querySelectorAll('#card script, #card img, #card iframe, "
        "#card svg, #card a, #evil').length") == 0


def _alice_sees(driver: Any, db: Path, *, batch: int, used: int,
               script: str | None = None) -> Any:
    """alice signed in to a labelling server on ``db`` (``batch``, budget 40), once the
    progress line says ``used`` label(s) used: the line's text, or what ``script``
    returns on the page then."""
    with running(db, batch=batch, budget=40) as server:
        bs.fresh(driver)
        bs.sign_in(driver, server.url, "alice")
        line = bs.wait_for_used(driver, used)
        return line if script is None else driver.execute_script(script)


def test_thirty_labels_by_keyboard_with_an_undo_and_a_reload(driver: Any,
                                                             tmp_path: Path) -> None:
    made = classification(tmp_path, hostile=True, n=50)
    given: dict[str, int] = {}
    with running(made.db, batch=10, budget=40, target_width=100.0) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "alice")
        assert driver.find_element("id", "who").text == "annotator: alice"
        seen_hostile = 0
        n = 0
        undone = reloaded = False
        while len(given) < 30:
            text = driver.find_element("id", "fields").text
            seen_hostile += any(h in text for h in HOSTILE)
            _nothing_ran(driver)
            y = made.truth[item] if n % 4 else 1 - made.truth[item]  # some "wrong" answers
            bs.press(driver, str(y + 1))
            nxt = bs.wait_for(driver, "ready", not_item=item)
            given[item] = y
            n += 1
            if len(given) == 12 and not undone:  # undo the last answer: it comes back
                bs.press(driver, "u")
                back = bs.wait_for(driver, "ready", not_item=nxt)
                assert back == item
                assert "undone" in driver.find_element("id", "message").text
                del given[item]
                undone = True
                nxt = back
            if len(given) == 20 and not reloaded:  # a reload: the same item, same person
                driver.refresh()
                again = bs.wait_for(driver, "ready")
                assert again == nxt
                assert driver.find_element("id", "who").text == "annotator: alice"
                reloaded = True
            item = nxt
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: "30 label(s)" in d.find_element("id", "progress").text)
        progress = driver.find_element("id", "progress").text
        assert "fixed-budget 95% interval" in progress
        assert "anytime 95% confidence sequence" in progress and "of the budget's 40" in progress
        assert "you may stop now" in progress  # 30 labels, and a very wide width asked for
        assert seen_hostile >= 10
        _nothing_ran(driver)
    with Session.open(made.db) as s:
        assert s.labels() == given
        rows = Annotators(s).annotations(include_undone=True)
        assert sum(r.undone is not None for r in rows) == 1
        assert {r.item_id: r.label for r in rows if r.undone is None} == given
        assert {r.annotator for r in rows} == {"alice"}


def _said_or_moved(driver: Any, shown: str | None) -> str:
    """Wait until the page says something (its message line) or leaves ``shown`` (an
    item answered, skipped or undone); returns the message."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, bs.WAIT_SECONDS, poll_frequency=0.02).until(
        lambda d: d.find_element("id", "message").text
        or bs.page_state(d) != ("ready", shown))
    return str(driver.find_element("id", "message").text)


def test_help_skip_and_the_progress_line(driver: Any, tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db, batch=3) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "bob")
        bs.press(driver, "?")
        help_box = driver.find_element("id", "help")
        assert help_box.is_displayed() and "undo" in help_box.text
        # the help covers the item: no key answers, skips or undoes it unseen (QA: 1
        # answered the item behind the help), and the page says why
        for key in "1su":  # each key: the page's answer to it, whatever the machine's speed
            driver.execute_script("document.getElementById('message').textContent = ''")
            bs.press(driver, key)
            said = _said_or_moved(driver, first)
            assert bs.page_state(driver) == ("ready", first), (key, said)
            assert "help covers the item" in said, (key, said)
        assert help_box.is_displayed()
        with Session.open(made.db) as s:
            assert not Annotators(s).annotations(include_undone=True)
        bs.press(driver, "?")
        assert not help_box.is_displayed()
        bs.press(driver, "s")  # set aside: another item, then it comes back last
        second = bs.wait_for(driver, "ready", not_item=first)
        bs.press(driver, "1")
        third = bs.wait_for(driver, "ready", not_item=second)
        bs.press(driver, "2")
        back = bs.wait_for(driver, "ready", not_item=third)
        assert back == first
        assert "second look" in driver.find_element("id", "meta").text
        bs.press(driver, "1")
        bs.wait_for(driver, "ready", not_item=first)
        # the set-aside first draw held the other labels back; answered, all 3 count
        progress = bs.wait_for_used(driver, 3)
        assert "fixed-budget 95% interval" in progress
        # no budget: the draws so far are not a total (QA: "draw 4 of 6", pool 60)
        assert "drawn so far; no budget: up to the pool's 60)" in progress, progress


def test_the_progress_line_shows_estimates_notes(driver: Any, tmp_path: Path) -> None:
    """The page says what its intervals rest on, as `estimate` does (QA: it said none):
    here the widening for the items a CE design drew far below the uniform rate."""
    from activetest.session.annotator_agreement import progress

    made = classification(tmp_path, acquisition="ce")
    with Session.open(made.db) as s:
        a = Annotators(s, batch=10, budget=40)
        for _ in range(20):
            it = a.next_item("alice")
            assert it is not None
            a.answer("alice", it.item_id, [made.truth[it.item_id]])
        notes = progress(s).notes
    assert notes and any("widened" in n for n in notes), notes
    shown = " ".join(_alice_sees(driver, made.db, batch=10, used=20).split())
    for n in notes:
        assert "note: " + " ".join(n.split()) in shown, (n, shown)


def test_the_progress_lines_waiting_note_isolates_the_items_id(driver: Any,
                                                               tmp_path: Path) -> None:
    """QA: the note of labels waiting for an earlier unlabelled draw put the item's id in
    its plain text, where a right-to-left id takes the words after it into its direction;
    the page's every other status line isolates an id in a ``<bdi>``. This one does too,
    and reads as the note the server gives."""

    from activetest.session.annotator_agreement import progress

    made = classification(tmp_path, acquisition="ce")
    with Session.open(made.db) as s:
        drawn = s.select(20)
        for k, it in enumerate(drawn):
            if k != 12:  # draw 13 left unlabelled: 7 later labels wait for it
                s.add_label(it.item_id, made.truth[it.item_id])
        waiting = progress(s).waiting
    held = drawn[12]
    assert waiting is not None and waiting.item_id == held.item_id
    notes = _alice_sees(
        driver, made.db, batch=10, used=12, script=(
            "return Array.from(document.querySelectorAll('#progress > span.note'), (e) => "
            "[e.textContent, Array.from(e.childNodes, (n) => [n.nodeName, n.textContent])])"))
    (text, nodes), *_ = [n for n in notes if "later draws wait" in n[0]]
    assert " ".join(text.split()) == "note: " + waiting.text().replace(
        repr(held.item_id), held.item_id), text
    assert ["BDI", held.item_id] in nodes, nodes  # the id isolated, alone in its <bdi>
    assert [n for n in nodes if n[0] == "BDI"] == [["BDI", held.item_id]], nodes


def test_one_label_says_what_the_fixed_budget_interval_waits_for(driver: Any,
                                                                 tmp_path: Path) -> None:
    """QA: with one label the progress line showed the fixed-budget interval as "[—, —]";
    one label has no spread, and the line now says what it waits for, "(from 2 labels)",
    as it says "(from 30 labels)" of the anytime CS; at two labels the interval is shown."""
    made = classification(tmp_path)
    with running(made.db, batch=3) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "eve")
        bs.press(driver, "1")
        second = bs.wait_for(driver, "ready", not_item=first)
        line = " ".join(bs.wait_for_used(driver, 1).split())
        assert "fixed-budget 95% interval (from 2 labels)" in line, line
        assert "anytime 95% confidence sequence (from 30 labels)" in line, line
        assert "\u2014" not in line, line
        bs.press(driver, "2")
        bs.wait_for(driver, "ready", not_item=second)
        line = " ".join(bs.wait_for_used(driver, 2).split())
        assert "fixed-budget 95% interval [" in line and "(from 2 labels)" not in line, line


def test_the_progress_line_names_the_exact_cs_where_it_stands_in_and_has_one_format(
        driver: Any, tmp_path: Path) -> None:
    """No error labelled yet: the exact anytime CS stands in for the error rate's
    fixed-budget interval and anytime CS, and the line names it so, with what it stands
    in for (QA: its bounds were shown under the CLT intervals' names and only a note at
    the end said so); every number has 4 decimals, as `estimate` prints them (QA:
    "[0.000, 4.879]" beside "[0.06278, 4.321]")."""
    import csv
    import re

    from activetest.session.annotator_agreement import progress

    made = classification(tmp_path, metric="both")
    assert made.files is not None
    said = {r["id"]: int(float(r["positive"]) > float(r["negative"]))  # the target's
            for r in csv.DictReader(made.files.target.open(encoding="utf-8"))}
    with Session.open(made.db) as s:
        a = Annotators(s, batch=5, budget=40)
        for _ in range(12):  # each labelled as the target says: no error
            it = a.next_item("alice")
            assert it is not None
            a.answer("alice", it.item_id, [said[it.item_id]])
        p = {m.metric: m for m in progress(s).metrics}
    err, loss = p["error_rate"], p["log_loss"]
    assert err.basis == "exact" and err.basis_note and loss.basis != "exact", (err, loss)
    spans = _alice_sees(driver, made.db, batch=5, used=12, script=(
        "return Array.from(document.querySelectorAll('#progress > span'), "
        "(e) => e.textContent)"))
    (shown,) = [t for t in spans if t.startswith("error rate")]
    assert (f"error rate: adaptive LURE {err.estimate:.4f} \u00b7 exact anytime 95% "
            f"confidence sequence [{err.fixed_low:.4f}, {err.fixed_high:.4f}] (stands in "
            f"for the fixed-budget 95% interval and the anytime 95% confidence sequence) "
            f"\u00b7 {err.basis_note}") == shown, shown
    assert (err.fixed_low, err.fixed_high) == (err.cs_low, err.cs_high)
    (line,) = [t for t in spans if t.startswith("log loss")]
    assert line.startswith(
        f"log loss: adaptive LURE {loss.estimate:.4f} \u00b7 fixed-budget 95% interval "
        f"[{loss.fixed_low:.4f}, {loss.fixed_high:.4f}] \u00b7 anytime 95% confidence "
        f"sequence (from 30 labels) \u00b7 exact anytime 95% confidence sequence "
        f"[{loss.exact_low:.4f}, {loss.exact_high:.4f}]"), line
    numbers = re.findall(r"\d+\.\d+", shown + line)
    assert len(numbers) == 8 and all(re.fullmatch(r"\d+\.\d{4}", x) for x in numbers), numbers


def test_graded_layout(driver: Any, tmp_path: Path) -> None:
    made = graded(tmp_path)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "carol")
        fields = driver.find_element("id", "fields").text.lower()
        assert "question" in fields and "context" in fields and "references" in fields
        answers = driver.find_elements("css selector", ".answer")
        assert len(answers) == 1 and "Answer to judge" in answers[0].text
        _nothing_ran(driver)
        y = made.truth[item]
        bs.press(driver, str(y + 1))
        bs.wait_for(driver, "ready", not_item=item)
    with Session.open(made.db) as s:
        assert s.labels() == {item: y}


def test_paired_layout_two_keys_and_hidden_names(driver: Any, tmp_path: Path) -> None:
    made = graded(tmp_path, compare=True)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "dan")
        page = driver.find_element("tag name", "body").text
        assert "b.jsonl" not in page and "answers:" not in page and "target" not in page
        answers = driver.find_elements("css selector", ".answer")
        assert [a.find_element("tag name", "h3").text.split("\n")[0] for a in answers] == [
            "Answer A", "Answer B"]
        shown = [a.find_element("class name", "body").text for a in answers]
        bs.press(driver, "1")  # A: incorrect
        assert bs.page_state(driver)[1] == item  # waiting for B
        bs.press(driver, "2")  # B: correct
        bs.wait_for(driver, "ready", not_item=item)
    with Session.open(made.db) as s:
        spec = s.compared_targets()[0]
        target_answer = s.display_item(item).fields["answer"]
        row = s.store.index_of(item)
        target_first = shown[0] == target_answer and shown[1] != target_answer
        if shown[0] == shown[1]:
            pytest.skip("both answers are the same text on this item")
        assert s.labels()[item] == (0 if target_first else 1)
        assert s.store.judgments(f"compare:{spec}")[row].label == (1 if target_first else 0)


def test_a_paired_pages_progress_line_says_whose_estimate_and_stays_blind(
        driver: Any, tmp_path: Path) -> None:
    """The paired page is blind on purpose (answers A and B without model names): its
    progress line says the error rate is the model under evaluation's, whose answer is A
    or B, not which, and names neither model (QA: "error rate: LURE ..." said nothing of
    whose); a page with one answer to judge has one model and says nothing of A or B."""
    said = " of the model under evaluation (its answer is A or B, not said which: blind): "
    for compare in (True, False):
        made = graded(tmp_path / str(compare), compare=compare)
        with running(made.db, batch=5) as server:
            bs.fresh(driver)
            item = bs.sign_in(driver, server.url, "dan")
            bs.press(driver, "22" if compare else "2")
            bs.wait_for(driver, "ready", not_item=item)
            line = bs.wait_for_used(driver, 1)
            page = driver.find_element("tag name", "body").text
        if compare:
            assert "error rate" + said + "LURE" in line, line
            assert "b.jsonl" not in page and "answers:" not in page and "target" not in page
        else:
            assert "error rate: LURE" in line and "A or B" not in line, line


def test_adjudicator_settles_a_disagreement_in_the_page(driver: Any, tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db, batch=2, overlap=1.0, adjudicators=["judge"]) as server:
        from tests.web.web_support import Client

        a, b = Client(server.url, "alice"), Client(server.url, "bob")
        it = a.next()
        a.answer(it["item_id"], 1)
        assert b.next()["item_id"] == it["item_id"]
        b.answer(it["item_id"], 2)
        bs.fresh(driver)
        bs.sign_in(driver, server.url, "judge")
        bs.press(driver, "a")
        shown = bs.wait_for(driver, "ready", not_item=None)
        assert shown == it["item_id"]
        votes = driver.find_element("id", "votes").text
        assert "alice: negative" in votes and "bob: positive" in votes
        bs.press(driver, "2")
        bs.wait_for(driver, "done")
    with Session.open(made.db) as s:
        assert s.labels()[it["item_id"]] == 1


def test_an_answer_not_saved_says_why_and_moves_on(driver: Any, tmp_path: Path) -> None:
    made = classification(tmp_path)
    with running(made.db, batch=4) as server:
        bs.fresh(driver)
        item = bs.sign_in(driver, server.url, "erin")
        with Session.open(made.db) as terminal:  # the terminal labels it meanwhile
            terminal.add_label(item, 0, source="cli")
        bs.press(driver, "2")
        nxt = bs.wait_for(driver, "ready", not_item=item)
        from selenium.webdriver.support.ui import WebDriverWait

        # the next item shows at once; the refusal follows, with the reason
        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: "not saved" in d.find_element("id", "message").text)
        message = driver.find_element("id", "message").text
        assert "meanwhile" in message and "not saved" in message
        assert nxt != item and bs.page_state(driver)[1] == nxt
        assert driver.execute_script("return document.body.dataset.saving") == "0"
    with Session.open(made.db) as s:
        assert s.labels() == {item: 0}


def test_the_next_item_shows_at_once_and_an_unsent_answer_survives_a_reload(
        driver: Any, tmp_path: Path) -> None:
    """The item after an answer is on screen before the server confirms the answer
    ("saved" comes after); an answer still waiting to be sent when the page is reloaded
    is sent again from the tab's storage, and stored once."""
    import sqlite3

    from selenium.webdriver.support.ui import WebDriverWait

    made = classification(tmp_path)
    with running(made.db, batch=5, busy_timeout=60.0) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "frank")
        lock = sqlite3.connect(made.db, timeout=30)  # another writer holds the file:
        lock.execute("BEGIN IMMEDIATE")               # no answer can commit meanwhile
        try:
            bs.press(driver, str(made.truth[first] + 1))
            second = bs.wait_for(driver, "ready", not_item=first)  # shown, not yet saved
            assert "saving" in driver.find_element("id", "message").text
            bs.press(driver, str(made.truth[second] + 1))  # waits behind the first
            WebDriverWait(driver, bs.WAIT_SECONDS).until(
                lambda d: d.execute_script("return document.body.dataset.saving") == "2")
            driver.refresh()  # the second answer was never sent: only the tab has it
        finally:
            lock.rollback()
            lock.close()
        third = bs.wait_for(driver, "ready")
        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: d.execute_script("return document.body.dataset.saving") == "0")
        assert third not in (first, second)
    with Session.open(made.db) as s:
        assert s.labels() == {first: made.truth[first], second: made.truth[second]}
        rows = Annotators(s).annotations(include_undone=True)
        assert sorted(r.item_id for r in rows) == sorted([first, second])  # once each


def test_a_key_held_down_answers_one_item(driver: Any, tmp_path: Path) -> None:
    """A key held down sends repeats (the browser's own input, through the DevTools
    protocol): only the first press answers; the repeats answer nothing the person has
    not seen (QA: holding 1 labelled an item per repeat)."""
    made = classification(tmp_path)
    with running(made.db, batch=10) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "hana")

        def key(kind: str, repeat: bool = False) -> None:
            driver.execute_cdp_cmd("Input.dispatchKeyEvent", {
                "type": kind, "key": "1", "code": "Digit1", "text": "1" if kind != "keyUp"
                else "", "windowsVirtualKeyCode": 49, "autoRepeat": repeat})

        key("keyDown")
        second = bs.wait_for(driver, "ready", not_item=first)
        for _ in range(5):
            key("keyDown", repeat=True)
        key("keyUp")
        bs.press(driver, "2")  # a new press answers the item shown
        bs.wait_for(driver, "ready", not_item=second)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: d.execute_script("return document.body.dataset.saving") == "0")
    with Session.open(made.db) as s:
        assert s.labels() == {first: 0, second: 1}


def test_a_narrow_window_shows_the_help_whole(driver: Any, tmp_path: Path) -> None:
    """In a phone-wide window the help's text fits its box: nothing cut or scrolled
    sideways (QA: the box kept 60% of the width, "incorrect" showed as "incorrec")."""
    made = graded(tmp_path, compare=True, n=8)
    size = driver.get_window_size()
    try:
        with running(made.db, batch=4) as server:
            bs.fresh(driver)
            driver.set_window_size(360, 740)
            bs.sign_in(driver, server.url, "ines")
            bs.press(driver, "?")
            box = driver.find_element("id", "help")
            assert box.is_displayed()
            wide, shown = driver.execute_script(
                "const h = document.getElementById('help'); return [h.scrollWidth, "
                "h.clientWidth]")
            assert wide <= shown, (wide, shown)
            bs.press(driver, "?")
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_undo_and_skip_by_touch_and_a_clicked_level_is_not_pressed_again(
        driver: Any, tmp_path: Path) -> None:
    """Without a keyboard: a level's button answers, the undo button brings the item back,
    the skip button sets it aside (QA: a wrong tap could not be taken back); a clicked
    button keeps no focus, so a later Space does not answer the next item unseen."""
    made = classification(tmp_path)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "jo")
        driver.find_elements("css selector", "#choices button")[1].click()
        second = bs.wait_for(driver, "ready", not_item=first)
        bs.press(driver, " ")  # Space: nothing (the button let go of the focus)
        driver.find_element("id", "undo-button").click()
        assert bs.wait_for(driver, "ready", not_item=second) == first
        driver.find_element("id", "skip-button").click()
        assert bs.wait_for(driver, "ready", not_item=first) == second
        bs.press(driver, "1")
        bs.wait_for(driver, "ready", not_item=second)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: d.execute_script("return document.body.dataset.saving") == "0")
    with Session.open(made.db) as s:
        assert s.labels() == {second: 0}


def test_no_estimate_yet_says_which_draw_it_waits_for(driver: Any, tmp_path: Path) -> None:
    """The first draw set aside, the next answered: the progress line says there is no
    estimate yet and why, naming the first draw's item (QA: "no estimate yet" alone, also
    when that item had two differing answers and no label)."""
    made = classification(tmp_path)
    with running(made.db, batch=5) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "mia")
        bs.press(driver, "s")
        second = bs.wait_for(driver, "ready", not_item=first)
        bs.press(driver, "1")
        bs.wait_for(driver, "ready", not_item=second)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: f"the first selected item ('{first}') has no label" in d.find_element(
                "id", "progress").text)
        assert "no estimate yet" in driver.find_element("id", "progress").text


def test_a_long_session_name_wraps_in_a_narrow_window(driver: Any, tmp_path: Path) -> None:
    """A session file with a long name, in a phone-wide window: the title wraps and the
    page is not wider than the window (QA: the name pushed it sideways)."""
    import shutil

    made = classification(tmp_path)
    db = tmp_path / ("evaluation_of_the_summariser_against_the_reference_" * 2 + "run.db")
    shutil.copy(made.db, db)
    size = driver.get_window_size()
    try:
        with running(db, batch=4) as server:
            bs.fresh(driver)
            driver.set_window_size(360, 740)
            bs.sign_in(driver, server.url, "nico")
            wide, shown = driver.execute_script(
                "return [document.documentElement.scrollWidth, "
                "document.documentElement.clientWidth]")
            assert wide <= shown, (wide, shown)
            assert db.name in driver.find_element("id", "title").text.replace("\n", "")
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_another_person_at_the_browser_signs_in_with_their_own_name(driver: Any,
                                                                    tmp_path: Path) -> None:
    """The name is remembered by the browser: the next person at it changes it with the
    button by the name (not while an answer waits to be sent, which is sent under the
    name it was given with), and their answers are stored under their own name (QA:
    there was no way to change it but clearing the browser's data: the next person's
    answers were stored under the first's name)."""
    import sqlite3

    from selenium.webdriver.support.ui import WebDriverWait

    made = classification(tmp_path)
    with running(made.db, batch=5, busy_timeout=0.3) as server:
        bs.fresh(driver)
        first = bs.sign_in(driver, server.url, "walker")
        button = driver.find_element("id", "rename")
        assert button.is_displayed() and "walker" in button.text
        lock = sqlite3.connect(made.db, timeout=5, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")
        try:
            bs.press(driver, "1")
            bs.wait_for(driver, "ready", not_item=first)
            bs.record_calls(driver)  # (a reload ends the record)
            said, isolated = driver.execute_script(  # walker's answer is not saved yet:
                "arguments[0].click(); const m = document.getElementById('message'); "
                "return [m.textContent, Array.from(m.querySelectorAll('bdi'), "
                "(b) => b.textContent)]", button)  # refused (read at once: a resend's follows)
            assert "walker are not saved yet" in said and "once they are" in said, said
            assert isolated == ["walker"], isolated  # the name in a <bdi>
            # the page goes on: walker's answer sent again, refused again (the file is
            # locked), by the same page, not reloaded (a fixed 0.5 s look passed a reload
            # a moment later)
            recorded = "return Boolean(window.__calls)"
            WebDriverWait(driver, bs.WAIT_SECONDS).until(
                lambda d: 503 in bs.calls_made(d, "answers")[:-1]
                or not d.execute_script(recorded))
            assert driver.execute_script(recorded), "the page was reloaded"
            assert bs.page_state(driver)[0] == "ready"  # not reloaded
        finally:
            lock.execute("COMMIT")
            lock.close()
        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: d.execute_script("return document.body.dataset.saving") == "0")
        driver.find_element("id", "rename").click()
        bs.wait_for(driver, "name")
        bs.press(driver, "zoe\n")
        item = bs.wait_for(driver, "ready")
        assert "annotator: zoe" in driver.find_element("id", "who").text
        bs.press(driver, "2")
        WebDriverWait(driver, bs.WAIT_SECONDS).until(
            lambda d: "saved item " + str(item) in bs.message(d)[0])
        assert bs.message(driver)[1] == [item]  # the id isolated (a <bdi>)
    with Session.open(made.db) as s:
        assert sorted((a.item_id, a.annotator) for a in Annotators(s).annotations()) == \
            sorted([(first, "walker"), (item, "zoe")])


def test_the_pages_intervals_keep_a_sign_near_zero_as_the_summary_does(driver: Any) -> None:
    """The page's number functions (app.js's unsignedZero, fmt, decimals, range, run in
    the browser as the page defines them) print an interval as the Python API's summary
    does (``interval_names.interval_text`` with ``interval_decimals``): an end that
    rounds to zero keeps its minus where the other end shows one (QA: [-0.0100, 0.0000]
    for an interval wholly below 0), and an interval 5e-5 wide across 0 is not printed
    "[0.0000, 0.0000]" (its ends "-0.0000" and "0.0000" counted as apart)."""
    import re

    from activetest.session.interval_names import interval_decimals, interval_text

    source = (Path(__file__).parents[2] / "src" / "activetest" / "web" / "static"
              / "app.js").read_text(encoding="utf-8")
    funcs = "".join(re.search(rf"\n  (function {name}\(.*?\n  }}\n)", source, re.S)[1]
                    for name in ("unsignedZero", "fmt", "decimals", "range"))
    cases = [(-0.01, -0.00004), (-0.00002, 0.00003), (-0.00004, 0.005), (-1e-13, 1e-13),
             (0.1234, 0.5678), (0.0012, 0.00123)]
    shown = driver.execute_script(funcs + "return arguments[0].map((c) => range(c[0], c[1]));",
                                  [list(c) for c in cases])
    assert shown == [interval_text(lo, hi, interval_decimals((lo, hi))) for lo, hi in cases]
    assert shown[:3] == ["[-0.0100, -0.0000]", "[-0.00002, 0.00003]", "[0.0000, 0.0050]"]
