"""The labelling page: screenshots of its three layouts, and the time per label of a
scripted run in headless Chromium against the terminal flow (`activetest label`, driven
through a pseudo-terminal with single key presses), on the same session.

    python benchmarks/label_page.py --screenshots docs/labelling   # the PNGs of docs/labelling.md
    python benchmarks/label_page.py --timing --labels 40 --repeats 3

Time per label is the wall time from a key press to the next item on screen,
averaged over the labels of a run (the page shows the next item it holds at hand; at
the end of a batch it waits for the answer and the draw of the next). The terminal's
is the interval between its prompts, and also with each batch's start (the next
`activetest label --n 10` started, the batch drawn, its first prompt) added to the
label before it. The page's server runs as its own process (`activetest serve`). The
page also reports, per label, the key press to "saved" (the answer committed), and each
answer call's round trip and time in the server (Server-Timing). Both flows run the
adaptive design on the same 60-item pool (prediction tables), batches of 10, one after
the other, repeated; medians reported, with CPU seconds. The machine is shared: the
ratio of the two, measured side by side, is the number to read.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _cells import printed_ratio, ratio_cell

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.web import browser_support as bs  # noqa: E402
from tests.web.web_support import (  # noqa: E402
    classification,
    graded,
    kill9,
    running,
    start_child,
)

from activetest.session.workflow import Session  # noqa: E402

#: The window the screenshots are taken in: tall enough that the paired layout (two
#: answers, the "judging answer B" line, the buttons and the last "saved" line) ends
#: above the sticky progress footer (QA: at 1100 x 820 its last lines were under it).
SHOT_WINDOW = (1100, 960)

#: The texts of the page that lie under the sticky footer or below the window.
_HIDDEN = """
const foot = document.getElementById('progress').getBoundingClientRect().top;
const out = [];
for (const id of ['meta', 'fields', 'answers', 'choices', 'picked', 'actions', 'message']) {
  const el = document.getElementById(id);
  if (!el || el.hidden || !el.innerText.trim()) continue;
  if (el.getBoundingClientRect().bottom > Math.min(foot, window.innerHeight) + 0.5)
    out.push(id + ': ' + el.innerText.trim().slice(0, 80));
}
return out;
"""


def hidden_texts(driver: Any) -> list[str]:
    """The item's texts (fields, answers, buttons, the message line) that the sticky
    progress footer covers or that lie below the window: a screenshot must have none."""
    return list(driver.execute_script(_HIDDEN))


def _progress_line(driver: Any, seconds: float = 30.0) -> str:
    """The footer's progress line once it shows the estimate and its intervals (QA: a
    fixed half-second wait under load took classification.png with an empty footer);
    ``RuntimeError`` if it does not within ``seconds``."""
    end = time.monotonic() + seconds
    while True:
        text = driver.execute_script("return document.getElementById('progress').innerText")
        if "fixed-budget" in text:
            time.sleep(0.3)  # the rest of the line, drawn in the same update
            return str(driver.execute_script(
                "return document.getElementById('progress').innerText"))
        if time.monotonic() > end:
            raise RuntimeError(f"no estimate in the progress line after {seconds:.0f} s: "
                               f"{text!r}")
        time.sleep(0.2)


def screenshots(out: Path) -> list[Path]:
    """One PNG per layout (classification, graded, paired), after a few answers, once the
    progress footer shows the estimate and its intervals; every text of the item shown
    above that footer (:func:`hidden_texts`), else ``RuntimeError``. The paired layout
    judges both answers alike, so no two answers of the same text get different levels
    (QA: its screenshot showed the page's warning about such a pair, cut off under the
    footer)."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="activetest-shots-"))
    made = {"classification": classification(tmp / "c"), "graded": graded(tmp / "g"),
            "paired": graded(tmp / "p", compare=True)}
    paths = []
    driver = bs.chromium()
    try:
        for layout, m in made.items():
            try:
                paths.append(_screenshot(driver, layout, m, out))
            except Exception as exc:
                if not bs.stalled(exc):
                    raise
                # the browser stalled (a CI run: a page load past selenium's 120 s): a
                # fresh one, once; the session goes on from the answers it has
                driver.quit()
                driver = bs.chromium()
                paths.append(_screenshot(driver, layout, m, out))
    finally:
        driver.quit()
    return paths


def _screenshot(driver: Any, layout: str, m: Any, out: Path) -> Path:
    """``out/LAYOUT.png`` of session ``m``'s page after a few answers (see
    :func:`screenshots`)."""
    driver.set_window_size(*SHOT_WINDOW)
    width = 0.5 if layout == "classification" else None
    with running(m.db, batch=10, overlap=0.2, target_width=width) as server:
        driver.get("about:blank")
        item = bs.sign_in(driver, server.url, "alice")
        for _ in range(3):  # a few answers: the progress line has numbers
            keys = "22" if layout == "paired" else str(m.truth[item] + 1)
            bs.press(driver, keys)
            item = bs.wait_for(driver, "ready", not_item=item)
        if layout == "paired":
            bs.press(driver, "2")  # answer A judged: the page asks for B
        _progress_line(driver)
        hidden = hidden_texts(driver)
        if hidden:
            raise RuntimeError(f"{layout}: under the footer: {hidden}")
        path = out / f"{layout}.png"
        driver.save_screenshot(str(path))
    return path


def web_run(root: Path, n: int) -> tuple[list[float], list[float], list[float], list[float],
                                        list[float]]:
    """Seconds per label in headless Chromium: from each key press to the next item
    shown, as the page measures it (``performance.now()`` at the key and after the next
    item is drawn); from the key press to the answer confirmed saved (the server's
    reply: committed); each answer call's round trip and the server's time in it
    (``Server-Timing``); and key to next item as the driving script sees it (with
    selenium's own round trips)."""
    m = classification(root)
    driver = bs.chromium()
    # the server as people run it: its own process (`activetest serve`), as the terminal
    # labeller is its own process, not threads sharing this script's interpreter
    proc, url = start_child(m.db, root, "--batch", "10")
    try:
        item = bs.sign_in(driver, url, "alice")
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            bs.press(driver, str(m.truth[item] + 1))
            item = bs.wait_for(driver, ("ready", "done"), not_item=item)
            times.append(time.perf_counter() - t0)
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(driver, 30, poll_frequency=0.02).until(  # every answer confirmed
            lambda d: d.execute_script("return window.activetestSaveTimings.length") >= n)
        page = [x / 1000 for x in driver.execute_script("return window.activetestTimings")]
        saved = [x / 1000 for x in driver.execute_script(
            "return window.activetestSaveTimings")]
        calls = driver.execute_script(
            "return performance.getEntriesByType('resource')"
            ".filter((e) => /\\/api\\/answers?$/.test(e.name))"
            ".map((e) => [e.responseEnd - e.startTime,"
            " e.serverTiming.length ? e.serverTiming[0].duration : null])")
    finally:
        driver.quit()
        proc.terminate()  # SIGTERM: it stops as on Ctrl-C
        proc.wait(timeout=60)  # (its output is read as it writes it)
        kill9(proc)
    with Session.open(m.db) as s:
        assert len(s.labels()) == n
    trip = [x[0] / 1000 for x in calls]
    server = [x[1] / 1000 for x in calls if x[1] is not None]
    return page[-n:], saved[-n:], trip[-n:], server[-n:], times


def _read_until(fd: int, marker: bytes, timeout: float = 60.0) -> bytes:
    buf = b""
    deadline = time.monotonic() + timeout
    while marker not in buf:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no {marker!r} from the terminal labeller: {buf[-300:]!r}")
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return buf
            if not chunk:
                return buf
            buf += chunk
    return buf


def terminal_run(root: Path, n: int) -> tuple[list[float], list[float]]:
    """Seconds between the terminal labeller's prompts, one key press each
    (`activetest label S.db --n 10`, run n/10 times: a batch each); and the same with
    each batch's start added to the last label before it (from starting the next
    `activetest label` to its first prompt: the start-up and the draw), i.e. the key
    press to the next item on screen, as the page's time is measured."""
    m = classification(root)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "120",
           "TERM": "dumb"}
    times: list[float] = []
    with_starts: list[float] = []
    while len(times) < n:
        with Session.open(m.db) as s:
            k = min(10, n - len(times))
        t_start = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: the terminal labeller on a real terminal
            os.execvpe(sys.executable, [sys.executable, "-m", "activetest", "label",
                                        str(m.db), "--n", str(k)], env)
        try:
            _read_until(fd, b"> ")
            if with_starts:
                with_starts[-1] += time.perf_counter() - t_start
            with Session.open(m.db) as s:
                pending = [a.item_id for a in s.pending()]
            for item in pending:
                t0 = time.perf_counter()
                os.write(fd, str(m.truth[item] + 1).encode())
                _read_until(fd, b"> " if item != pending[-1] else b"still pending")
                times.append(time.perf_counter() - t0)
                with_starts.append(times[-1])
        finally:
            os.waitpid(pid, 0)
            os.close(fd)
    with Session.open(m.db) as s:
        assert len(s.labels()) == n
    return times, with_starts


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children so far (the browser and
    chromedriver are counted once they exit: each run quits its own)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--screenshots", type=Path, help="write the layouts' PNGs here")
    ap.add_argument("--timing", action="store_true", help="time per label, page vs terminal")
    ap.add_argument("--labels", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    why = bs.missing()
    if why:
        sys.exit(f"cannot run: {why}")
    if args.screenshots:
        for p in screenshots(args.screenshots):
            print(f"wrote {p}")
    if args.timing:
        runs: dict[str, list[list[float]]] = {k: [] for k in (
            "page", "saved", "trip", "server", "script", "terminal", "terminal+starts")}
        cpu: dict[str, float] = {"page": 0.0, "terminal": 0.0}
        for r in range(args.repeats):
            tmp = Path(tempfile.mkdtemp(prefix="activetest-timing-"))
            c0 = _cpu()
            page, saved, trip, server, script = web_run(tmp / f"w{r}", args.labels)
            c1 = _cpu()
            runs["page"].append(page)
            runs["saved"].append(saved)
            runs["trip"].append(trip)
            runs["server"].append(server)
            runs["script"].append(script)
            term, term_starts = terminal_run(tmp / f"t{r}", args.labels)
            runs["terminal"].append(term)
            runs["terminal+starts"].append(term_starts)
            cpu["page"] += c1 - c0
            cpu["terminal"] += _cpu() - c1
            print(f"repeat {r + 1}: " + ", ".join(
                f"{k} mean {1000 * statistics.mean(v[-1]):.1f} median "
                f"{1000 * statistics.median(v[-1]):.1f} ms" for k, v in runs.items()),
                flush=True)

        def cell(k: str) -> str:
            means = [statistics.mean(x) for x in runs[k]]
            medians = [statistics.median(x) for x in runs[k]]
            return (f"{1000 * statistics.median(means):.1f} | "
                    f"{1000 * statistics.median(medians):.1f}")

        def shown(k: str, of: Any) -> float:
            return 1000 * statistics.median(of(x) for x in runs[k])

        # of the ms cells as the table prints them (one decimal)
        ratio = ratio_cell(printed_ratio(shown("page", statistics.median),
                                         shown("terminal", statistics.median), digits=1))
        mean_ratio = ratio_cell(printed_ratio(shown("page", statistics.mean),
                                              shown("terminal", statistics.mean), digits=1))
        print(f"\n| flow ({args.repeats} runs of {args.labels} labels) | mean ms per label "
              f"(median of runs) | median ms per label (median of runs) |\n|---|---|---|\n"
              f"| page: key press to the next item on screen (as the page measures it) | "
              f"{cell('page')} |\n"
              f"| page: key press to the answer confirmed saved (committed) | "
              f"{cell('saved')} |\n"
              f"| page: the answer call's round trip (fetch, resource timing) | "
              f"{cell('trip')} |\n"
              f"| page: the server's time in it (Server-Timing: answer, commit, next items) | "
              f"{cell('server')} |\n"
              f"| page, key to next item as the selenium script sees it (its round trips) | "
              f"{cell('script')} |\n"
              f"| terminal (`activetest label`, pty, single keys, prompt to prompt) | "
              f"{cell('terminal')} |\n"
              f"| terminal, key press to the next item on screen (each batch's start-up "
              f"and draw included) | {cell('terminal+starts')} |\n\n"
              f"page / terminal, key to next item: means {mean_ratio}, medians {ratio}; "
              f"CPU seconds of the whole run (this process, its children, the browser): page "
              f"{cpu['page']:.1f}, terminal {cpu['terminal']:.1f}; load average at the end: "
              f"{os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    if not args.screenshots and not args.timing:
        ap.print_help()


if __name__ == "__main__":
    threading.current_thread().name = "label_page"
    main()
