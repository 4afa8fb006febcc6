"""kill -9 of the labelling page's server (a real child process, `activetest serve`) at
random moments: no answer the page was told is saved is ever lost, and the resumed
session makes exactly the draws of a run never killed (the adaptive design's, in
batches). The client makes the page's calls (the answer with the next items in its
reply, two held at hand). One test kills it 10 times, the slow-marked one 50 times;
CI runs both (the suite's `slow` mark says a test takes more than a few seconds, it
skips nothing)."""

from __future__ import annotations

import http.client
import threading
from pathlib import Path

import numpy as np
import pytest

from activetest.session.annotators import Annotators
from activetest.session.workflow import Session
from tests.web.web_support import Client, classification, kill9, start_child

BATCH = 5


def _reference(root: Path, n_pool: int, n_labels: int) -> list[str]:
    made = classification(root, n=n_pool)
    with Session.open(made.db) as s:
        a = Annotators(s, batch=BATCH, budget=n_labels)
        while (it := a.next_item("alice")) is not None:
            a.answer("alice", it.item_id, [made.truth[it.item_id]])
        return [x.item_id for x in s.acquisitions()]


def _kill_run(tmp: Path, kills: int, seed: int, n_labels: int = 30, most_before: int = 3,
              n_pool: int = 60) -> None:
    """Label ``n_labels`` items through a child server killed ``kills`` times, each time
    after 0..``most_before`` answers and a few milliseconds more."""
    made = classification(tmp / "killed", n=n_pool)
    expected = _reference(tmp / "reference", n_pool, n_labels)
    rng = np.random.default_rng(seed)
    acked: dict[str, int] = {}
    killed = 0
    for _ in range(3 * kills + 20):
        proc, url = start_child(made.db, tmp, "--batch", str(BATCH), "--n", str(n_labels))
        c = Client(url, "alice")
        timer = None
        # the kill: after a random number of answers, a random few milliseconds into
        # the next requests (inside a draw, an answer's transaction, a reply, ...)
        after = int(rng.integers(0, most_before + 1)) if killed < kills else -1
        finished = False
        try:
            # the page's calls: the next item and two more held at hand, then each answer
            # with the next items in its reply (the same commit; a batch drawn in it)
            r = c.ok("POST", "next", {"ahead": 2})
            for n in range(10**6):
                if n == after:
                    timer = threading.Timer(float(rng.uniform(0.0, 0.05)), proc.kill)
                    timer.start()
                elif timer is not None and n > after + 1:
                    # at most two requests race the kill, however slow the machine: then
                    # wait for it, so every kill costs a bounded number of answers
                    timer.join()
                if r.get("done"):
                    finished = True
                    break
                it = r["item"]
                y = made.truth[it["item_id"]]
                status, r = c.call("POST", "answers", {"answers": [
                    {"item_id": it["item_id"], "levels": [y + 1]}], "ahead": 2})
                assert status == 200 and r["results"][0].get("saved") == 1, r
                acked[it["item_id"]] = y
        except (OSError, http.client.HTTPException):  # the server died under the request
            pass  # (connection reset or refused, a reply cut short)
        finally:
            if timer is not None:
                timer.cancel()
            killed += timer is not None and not finished
            kill9(proc)
        with Session.open(made.db) as s:  # after every kill: nothing acknowledged is lost
            labels = s.labels()
            for item_id, y in acked.items():
                assert labels.get(item_id) == y, (item_id, killed)
            drawn = [x.item_id for x in s.acquisitions()]
            assert drawn == expected[:len(drawn)], killed  # the same draws, so far
        if finished and killed >= kills:
            break
    assert killed == kills
    with Session.open(made.db) as s:
        assert [x.item_id for x in s.acquisitions()] == expected
        assert s.labels() == {i: made.truth[i] for i in expected}
        assert len(Annotators(s).annotations()) == n_labels  # one answer per item, no double


def test_kill_9_loses_no_answer_and_keeps_the_draws(tmp_path: Path) -> None:
    # up to 3 + 2 answers per kill: 60 labels leave room for all 10 kills
    _kill_run(tmp_path, kills=10, seed=0, n_labels=60, n_pool=100)


@pytest.mark.slow
def test_kill_9_fifty_times(tmp_path: Path) -> None:
    _kill_run(tmp_path, kills=50, seed=1, n_labels=200, most_before=1, n_pool=240)
