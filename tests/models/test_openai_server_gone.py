"""A server that dies during scoring is said to have gone away, with what became of the
items; not "could not connect".

QA: the stock ``python -m llama_cpp.server`` may die during scoring (on Intel AMX, by a
crash signal), and the client then said "could not connect ... is a server running at
this address?", as for a wrong address. Here a real ``llama_cpp.server`` (the bundled
SmolLM2) is killed (``kill -9``, standing in for any crash) once a few items are
scored: the refusal says the server went away during scoring, how many items were
scored, and what is kept (a score cache keeps its finished chunks, and the same call,
once the server is back, scores only the rest)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from server import llama_server_process

from activetest.data.demo import demo_task
from activetest.data.task import Item
from activetest.models._util import forward_progress
from activetest.models.cache import CachedScorer
from activetest.models.openai import EndpointError, OpenAIScorer, ServerGoneError

TASK = demo_task()
ITEMS = [Item(id=f"g{i}", fields={"text": f"a fine film, scene {i}"}) for i in range(8)]


@pytest.fixture(scope="module")
def gguf() -> Path:
    pytest.importorskip("llama_cpp.server")
    bundled = pytest.importorskip("activetest.models.bundled")
    try:
        return Path(bundled.bundled_model_path("smollm2-135m"))
    except Exception as exc:  # not installed in this environment
        pytest.skip(f"bundled SmolLM2 not available: {exc}")


def _killed_after(gguf: Path, k: int, score: object, *, port: int | None = None
                  ) -> Iterator[tuple[str, Exception]]:
    """Start a server, give its URL to ``score`` (a function of the URL that scores),
    kill the server's process group once ``k`` items are scored (the bar's steps), and
    yield ``(url, the refusal)``."""
    with llama_server_process(gguf, n_ctx=512, n_threads=1, port=port) as (proc, url):
        done = [0]

        def step(n: int = 1) -> None:
            done[0] += n
            if done[0] == k:
                os.killpg(proc.pid, signal.SIGKILL)  # (kill -9: as any crash)

        with forward_progress(step), pytest.raises(EndpointError) as err:
            score(url)  # type: ignore[operator]
        yield url, err.value


def _scorer(url: str) -> OpenAIScorer:
    # (one quick retry: a server restarting for a moment is still waited for)
    return OpenAIScorer(url, "smollm2", concurrency=1, max_retries=1, backoff=0.05)


def test_a_server_killed_during_scoring_is_said_gone(gguf: Path) -> None:
    (_, err), = _killed_after(gguf, 3, lambda url: _scorer(url).score(TASK, ITEMS))
    msg = str(err)
    assert isinstance(err, ServerGoneError) and err.scored == 3, msg
    assert "the server went away during scoring" in msg, msg
    assert "3 of the 8 item(s) were scored before it went; none is kept" in msg, msg
    assert "could not connect" not in msg and "is a server running" not in msg, msg


def test_a_score_cache_keeps_the_chunks_scored_before_the_server_went(
        gguf: Path, tmp_path: Path) -> None:
    """Chunks of 2: item 5 scored, then the server killed: the chunks of items 0-3 are
    kept; the same call, the server back on its port, scores only the other 4."""
    cache = tmp_path / "cache"
    (url, err), = _killed_after(gguf, 5, lambda url: CachedScorer(
        _scorer(url), cache, chunk_size=2).score(TASK, ITEMS))
    msg = " ".join(str(err).split())
    assert isinstance(err, ServerGoneError) and err.kept == 4, msg
    assert "went away during scoring" in msg, msg
    assert (f"4 of the 8 item(s) are scored and kept in the score cache ({cache}): once "
            f"the server is back, the same command scores only the other 4") in msg, msg
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with llama_server_process(gguf, n_ctx=512, n_threads=1, port=port) as (_, again):
        assert again == url
        resumed = CachedScorer(_scorer(url), cache, chunk_size=2)
        out = resumed.score(TASK, ITEMS, progress=False)
    assert (resumed.hits, resumed.misses) == (4, 4) and out.shape == (8, 2)


def test_what_is_kept_is_said_as_it_is() -> None:
    """The three ends of a run the server left: no cache (none kept), a cache with no
    finished chunk (none kept yet: QA, "0 of the 30 item(s) are scored and kept ... scores
    only the other 30"), a cache with some."""
    gone = ServerGoneError("http://h/v1/completions", "refused the connection (...)",
                           answered=20)
    assert "could not connect" not in str(gone) and "answered 20 request(s)" in str(gone)
    assert "during scoring" not in str(gone)  # (a request outside a scoring call)
    run = gone.during_scoring(12, 30)
    assert "12 of the 30 item(s) were scored before it went; none is kept" in str(run)
    none = run.kept_in(0, 30, "/c")
    assert "None of the 30 item(s) is kept in the score cache (/c) yet" in str(none)
    assert "scores them all" in str(none) and "0 of the" not in str(none)
    some = run.kept_in(8, 30, "/c")
    assert "8 of the 30 item(s) are scored and kept" in str(some)
    assert "scores only the other 22" in str(some)
