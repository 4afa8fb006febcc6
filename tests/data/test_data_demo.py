"""The generated demo task: deterministic, labels follow the rule exactly."""

from __future__ import annotations

from collections import Counter

import pytest

from activetest.data import demo_items, demo_task, get_task
from activetest.data.demo import KINDS, label_of


def test_demo_items_are_deterministic_and_prefix_stable() -> None:
    a = demo_items(1200, seed=5)
    assert len(a) == 1200 and [it.id for it in a[:3]] == ["0", "1", "2"]
    assert demo_items(1200, seed=5) == a
    assert demo_items(300, seed=5) == a[:300]
    assert demo_items(300, seed=6) != a[:300]


def test_labels_follow_the_rule_exactly() -> None:
    items = demo_items(3000, seed=0)
    assert all(label_of(it.fields["text"]) == it.label for it in items)
    kinds = Counter(it.fields["kind"] for it in items)
    assert set(kinds) == set(KINDS) and kinds["simple"] > kinds["negated"] > 0
    labels = Counter(it.label for it in items)
    assert 0.45 < labels[1] / len(items) < 0.55


@pytest.mark.parametrize(("text", "label"), [
    ("The kettle is not bad.", 1),
    ("The kettle is hardly great.", 0),
    ("The kettle is not awful at all.", 1),
    ("The lid is great, but the motor is terrible.", 0),
    ("Although the lid is not great, the motor is superb.", 1),
    ("The lid is far from lovely, even though the motor is superb.", 0),
    ("I bought it last month. The kettle was never flimsy.", 1),
])
def test_rule_on_hand_written_reviews(text: str, label: int) -> None:
    assert label_of(text) == label


def test_demo_task_renders_and_is_registered() -> None:
    task = demo_task()
    assert get_task("demo") == task and task.classes == ("negative", "positive")
    items = demo_items(3, seed=0)
    prompt = task.prompt(items[2], items[:2])
    assert prompt.startswith('Classify the sentiment of the following product review')
    assert prompt.endswith(f"Sentence: '{items[2].fields['text']}' \nLabel:")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="n must be >= 0"):
        demo_items(-1)
    with pytest.raises(ValueError, match="mix must give"):
        demo_items(5, mix={"sarcastic": 1.0})
    only = demo_items(50, seed=1, mix={"negated": 1.0})
    assert {it.fields["kind"] for it in only} == {"negated"}
    with pytest.raises(ValueError, match="no adjective phrase"):
        label_of("Nothing here")
    with pytest.raises(ValueError, match="not a generated review"):
        label_of("The lid is bad. The kettle is great.")


@pytest.mark.slow
@pytest.mark.models
def test_demo_is_hard_but_learnable_for_a_bundled_model() -> None:
    """Gemma-3-270M with 8 examples errs on some reviews, mostly negations and contrasts."""
    pytest.importorskip("llama_cpp")
    from activetest.data import select_examples
    from activetest.models.bundled import ModelNotFoundError
    from activetest.models.llamacpp import LlamaCppScorer

    try:
        scorer = LlamaCppScorer("gemma3-270m", n_ctx=1024)
    except ModelNotFoundError as exc:
        pytest.skip(f"bundled model unavailable: {exc}")
    items = demo_items(100, seed=0)
    examples = select_examples(demo_items(500, seed=12345), 8, seed=1, n_classes=2)
    try:
        logprobs = scorer.score(demo_task(), items, examples, progress=False)
    finally:
        scorer.close()
    wrong = [int(lp.argmax()) != it.label for lp, it in zip(logprobs, items, strict=True)]
    assert 0.05 <= sum(wrong) / len(items) <= 0.40
    simple = [w for w, it in zip(wrong, items, strict=True) if it.fields["kind"] == "simple"]
    hard = [w for w, it in zip(wrong, items, strict=True) if it.fields["kind"] != "simple"]
    assert sum(simple) / len(simple) < sum(hard) / len(hard)
