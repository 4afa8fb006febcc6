"""Backend-agnostic label tokens and the canonical tokenisation.

Every backend (llama.cpp, transformers, ...) turns a task's label words into
token ids the same way, through a plain ``tokenize(text) -> list[int]`` function
that adds no BOS token and no other special tokens.

**Which token is "the label".** A prompt's item suffix ends with
``"{answer_key}:"`` (no trailing space) and the in-context examples continue it
with ``": {label}"``, so the model emits the label as *a space followed by the
word*. We therefore tokenise the answer context followed by ``" " + word`` and
take the ids that come after the context's own ids::

    tokenize("Answer: positive")  ->  ids("Answer:") + ids(" positive")

This gives the word with the leading-space marker exactly where the tokenizer
puts one (GPT-2 style ``Ġpositive``, SentencePiece ``▁positive``; both bundled
models do this). A tokenizer that emits the space as a token of its own gives
every class the same first token, which is reported as a collision rather than
silently scoring the space. If the context's
ids are not a prefix of the combined ids (the tokenizer merged across the
colon), we fall back to ``tokenize(" " + word)``. Scoring uses the FIRST of these
ids per class (the paper's softmax over label-token logits); two classes with the
same first id cannot be told apart and raise :class:`LabelTokenCollision`. For
multi-token label words the full id sequences are also returned, for optional
full-sequence scoring.

**Canonical tokenisation.** A prompt is ``prefix + suffix`` (instruction and
in-context examples, then the item). Tokenising the whole string at once is not
stable at the boundary: with SmolLM2's GPT-2-style tokenizer, the prefix alone
ends in the single token ``"\\n\\n"``, but in the whole prompt the pre-tokenizer
splits that separator into ``"\\n"``, ``"\\n"`` because a word follows it, so the
prefix's ids would differ between the prefix-reuse path and a full-prompt pass
(and could depend on how the item starts). Every path (prefix reuse, naive full
prompt, every backend) therefore uses :func:`canonical_ids`:
``[bos] + tokenize(prefix) + tokenize(suffix)``. The model then sees the
separator as one ``"\\n\\n"`` token, the same token it emits after a label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from activetest.data.task import Task

__all__ = [
    "LabelTokenCollision",
    "LabelTokens",
    "Tokenize",
    "canonical_ids",
    "label_sequences",
    "label_token_ids",
    "select_label_tokens",
    "task_label_tokens",
]

Tokenize = Callable[[str], list[int]]
"""``text -> token ids``, with no BOS/EOS or other special tokens added."""


class LabelTokenCollision(ValueError):  # noqa: N818 (name fixed by the API)
    """Two classes' label words start with the same token, so they cannot be told apart."""

    #: What a Python caller of a scorer can do (the session layer says what a command-line
    #: user can do instead).
    ADVICE = ("choose label words that differ in their first token, or build the scorer with "
              "full_sequence=True (LlamaCppScorer, HFScorer)")

    def __init__(self, word_a: str, word_b: str, token_id: int, *, index_a: int,
                 index_b: int, model: str | None = None, advice: str | None = None) -> None:
        self.word_a, self.word_b, self.token_id = word_a, word_b, token_id
        self.index_a, self.index_b = index_a, index_b
        self.model = model
        head = f"model {model}: " if model else ""
        super().__init__(
            f"{head}label words {word_a!r} (class {index_a}) and {word_b!r} (class {index_b}) "
            f"share their first token (id {token_id}), so first-token scoring cannot tell "
            f"them apart; {advice or self.ADVICE}")


@dataclass(frozen=True)
class LabelTokens:
    """The token ids of a task's label words, as the model emits them after the answer key.

    Attributes:
        words: the label words, in class order.
        sequences: the full id sequence of each word (with its leading-space marker).
        first_ids: the first id of each sequence (what first-token scoring reads).
    """

    words: tuple[str, ...]
    sequences: tuple[tuple[int, ...], ...]

    @property
    def first_ids(self) -> tuple[int, ...]:
        """The first token id of each class's label word."""
        return tuple(seq[0] for seq in self.sequences)

    @property
    def multi_token(self) -> bool:
        """Whether any label word needs more than one token."""
        return any(len(seq) > 1 for seq in self.sequences)


def _label_sequence(tokenize: Tokenize, word: str, context: str) -> list[int]:
    if context:
        ctx = list(tokenize(context))
        full = list(tokenize(context + " " + word))
        if len(full) > len(ctx) and full[:len(ctx)] == ctx:
            return full[len(ctx):]
    return list(tokenize(" " + word))


def label_sequences(tokenize: Tokenize, words: Sequence[str], *,
                    context: str = "Answer:") -> list[list[int]]:
    """Full token-id sequence of each label word as emitted after ``context``.

    Args:
        tokenize: ``text -> ids`` without BOS or other special tokens.
        words: the label words, in class order.
        context: the text the label follows (the item suffix's end, e.g. ``"Label:"``);
            the label is ``" " + word`` after it. See the module docstring.

    Raises:
        ValueError: a label word is empty or tokenises to nothing.
    """
    out: list[list[int]] = []
    for i, word in enumerate(words):
        if not word or not word.strip():
            raise ValueError(f"label word for class {i} is empty ({word!r})")
        seq = _label_sequence(tokenize, word, context)
        if not seq:
            raise ValueError(f"label word {word!r} (class {i}) tokenises to no tokens")
        out.append(seq)
    return out


def _check_collisions(words: Sequence[str], first: Sequence[int]) -> None:
    seen: dict[int, int] = {}
    for j, tok in enumerate(first):
        if tok in seen:
            i = seen[tok]
            raise LabelTokenCollision(words[i], words[j], tok, index_a=i, index_b=j)
        seen[tok] = j


def select_label_tokens(tokenize: Tokenize, words: Sequence[str], *, context: str = "Answer:",
                        full_sequence: bool = False) -> LabelTokens:
    """Label tokens for a task: full sequences plus checked first tokens.

    Args:
        tokenize: ``text -> ids`` without BOS or other special tokens.
        words: the label words (``Task.classes``).
        context: the text the label follows, normally ``f"{task.answer_key}:"``.
        full_sequence: if True, only require the full sequences to differ (for
            full-sequence scoring of multi-token labels); first tokens may be shared.

    Raises:
        LabelTokenCollision: (first-token mode) two classes share their first token.
        ValueError: two classes have identical full sequences, or a word is empty.
    """
    seqs = label_sequences(tokenize, words, context=context)
    if full_sequence:
        seen: dict[tuple[int, ...], int] = {}
        for j, seq in enumerate(seqs):
            key = tuple(seq)
            if key in seen:
                i = seen[key]
                raise ValueError(f"label words {words[i]!r} (class {i}) and {words[j]!r} "
                                 f"(class {j}) tokenise to the same ids {list(key)}")
            seen[key] = j
    else:
        _check_collisions(words, [s[0] for s in seqs])
    return LabelTokens(words=tuple(words), sequences=tuple(tuple(s) for s in seqs))


def label_token_ids(tokenize: Tokenize, words: Sequence[str], *,
                    context: str = "Answer:") -> list[int]:
    """First token id of each label word (see the module docstring).

    Raises:
        LabelTokenCollision: two classes share their first token; names both.
    """
    return list(select_label_tokens(tokenize, words, context=context).first_ids)


def canonical_ids(tokenize: Tokenize, prefix: str, suffix: str, bos: int | None) -> list[int]:
    """The one canonical tokenisation: ``[bos] + tokenize(prefix) + tokenize(suffix)``.

    ``bos`` is omitted when ``None`` (models that use no BOS). The prefix and the
    suffix are tokenised separately so the prefix ids are the same for every item
    (see the module docstring); an empty prefix contributes no ids.
    """
    ids: list[int] = [] if bos is None else [int(bos)]
    if prefix:
        ids += list(tokenize(prefix))
    ids += list(tokenize(suffix))
    return ids


def task_label_tokens(tokenize: Tokenize, task: Task, *,
                      full_sequence: bool = False) -> LabelTokens:
    """:func:`select_label_tokens` for ``task.classes`` after ``"{task.answer_key}:"``."""
    return select_label_tokens(tokenize, task.classes, context=f"{task.answer_key}:",
                               full_sequence=full_sequence)
