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

**Multi-token label words.** Where a class's label word is several tokens (SmolLM2
and Gemma 3 both split ``"entailment"`` in two), first-token scoring reads the
probability of the word's first piece, not of the word. A scorer says so once per
task with a :class:`MultiTokenLabelNotice` (:class:`LabelScoringLog`) and records
the fact, per class, as a :class:`LabelScoring` (a session keeps it in its score
provenance as ``label_scoring``).

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

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from activetest.data.task import Task
from activetest.models._util import QUIET_OUTPUT_LOCK

__all__ = [
    "FIRST_TOKEN",
    "FULL_SEQUENCE",
    "FULL_SEQUENCE_REMEDY",
    "LABEL_SCORING_MODES",
    "LabelScoring",
    "LabelScoringLog",
    "LabelTokenCollision",
    "LabelTokens",
    "MultiTokenLabelNotice",
    "Tokenize",
    "canonical_ids",
    "label_sequences",
    "label_token_ids",
    "multi_token_notice",
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


#: The two ways a class's label word becomes its score (:class:`LabelScoring`).
FIRST_TOKEN = "first-token"
FULL_SEQUENCE = "full-sequence"
_MODES = (FIRST_TOKEN, FULL_SEQUENCE)
#: The modes, as the command line's ``--label-scoring`` and a session's config name them.
LABEL_SCORING_MODES = _MODES


class MultiTokenLabelNotice(UserWarning):
    """First-token scoring of a task whose label words are not all one token: the scores
    rest on the first token of those words. Said once per scorer and task."""


@dataclass(frozen=True)
class LabelScoring:
    """How a model's class scores were read from its label words (stored with the scores).

    Attributes:
        mode: :data:`FIRST_TOKEN` (the log-prob of each word's first token, the paper's
            choice) or :data:`FULL_SEQUENCE` (the summed log-prob of all its tokens).
        words: the label words, in class order.
        n_tokens: each word's token count after the answer key (``" " + word``); None
            where it is not known.
        exact: whether the counts are exact (a tokenizer counted them); False where a
            server only showed that a word's first token is shorter than the word,
            then a count of 2 means "2 or more".
    """

    mode: str
    words: tuple[str, ...]
    n_tokens: tuple[int | None, ...]
    exact: bool = True

    def __post_init__(self) -> None:
        if self.mode not in _MODES:
            raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {self.mode!r}")
        if len(self.n_tokens) != len(self.words):
            raise ValueError(f"{len(self.n_tokens)} token counts for {len(self.words)} words")

    @classmethod
    def of(cls, labels: LabelTokens, *, full_sequence: bool) -> LabelScoring:
        """The record of label tokens a tokenizer gave (exact counts)."""
        return cls(FULL_SEQUENCE if full_sequence else FIRST_TOKEN, labels.words,
                   tuple(len(seq) for seq in labels.sequences))

    @property
    def multi_token(self) -> tuple[int, ...]:
        """The classes whose label word is known to have more than one token."""
        return tuple(c for c, n in enumerate(self.n_tokens) if n is not None and n > 1)

    @property
    def on_prefix(self) -> bool:
        """Whether some class's score rests on the first token of a longer word."""
        return self.mode == FIRST_TOKEN and bool(self.multi_token)

    def counts_text(self) -> str:
        """``'entailment' (class 0): 2 tokens, ...`` for the multi-token classes."""
        more = "" if self.exact else " or more"
        return ", ".join(f"{self.words[c]!r} (class {c}): {self.n_tokens[c]}{more} tokens"
                         for c in self.multi_token)

    def describe(self) -> str:
        """One sentence for people: what each class's score is (first-token or whole word)."""
        if self.mode == FULL_SEQUENCE:
            return "full-sequence scoring: each class is the summed log-prob of its whole word"
        if not self.multi_token:
            known = all(n is not None for n in self.n_tokens)
            return ("first-token scoring: every label word is one token" if known else
                    "first-token scoring (the label words' token counts are not known)")
        return (f"first-token scoring, the paper's choice: label words of more than one "
                f"token, {self.counts_text()}, are scored by their first token's log-prob, "
                f"not the whole word's")

    def as_provenance(self) -> dict[str, Any]:
        """The record as JSON-ready data (a session's score provenance, the score cache)."""
        return {"mode": self.mode, "words": list(self.words), "n_tokens": list(self.n_tokens),
                "exact": self.exact}

    @classmethod
    def from_provenance(cls, data: Any) -> LabelScoring | None:
        """The record from :meth:`as_provenance` data; None where it is absent (scores
        stored before it was recorded) or not readable as one: "unknown"."""
        if not isinstance(data, Mapping):
            return None
        words, counts = data.get("words"), data.get("n_tokens")
        if not isinstance(words, list) or not isinstance(counts, list):
            return None
        if not all(isinstance(w, str) for w in words) or not all(
                n is None or (isinstance(n, int) and not isinstance(n, bool) and n > 0)
                for n in counts):
            return None
        try:
            return cls(str(data.get("mode")), tuple(words), tuple(counts),
                       bool(data.get("exact", True)))
        except ValueError:
            return None


#: What a user of an in-process scorer (llama.cpp, transformers) can do to score whole
#: words: the command line's option (``init``, ``score``), a Python scorer's argument.
FULL_SEQUENCE_REMEDY = ("score whole words with --label-scoring full-sequence (activetest "
                        "init, activetest score; in Python, a scorer built with "
                        "full_sequence=True); label words of one token each (a task file's "
                        "classes) avoid the question")


class LabelScoringLog:
    """What a scorer learned about each task's label words while scoring it, and the
    :class:`MultiTokenLabelNotice` it gave (once per task).

    Args:
        remedy: what a caller can do to score whole words (named in the notice).
    """

    def __init__(self, remedy: str) -> None:
        self.remedy = remedy
        self._by_task: dict[tuple[str, ...], LabelScoring] = {}

    @staticmethod
    def key(task: Task) -> tuple[str, ...]:
        """What the label tokens depend on: the answer key and the label words."""
        return (task.answer_key, *task.classes)

    def get(self, task: Task) -> LabelScoring | None:
        """The record of ``task`` (None before the scorer scored it)."""
        return self._by_task.get(self.key(task))

    def record(self, task: Task, scoring: LabelScoring, *, model: str,
               stacklevel: int = 3) -> None:
        """Keep ``scoring`` for ``task``; the first time, give the notice if it is due
        (``stacklevel`` 3: the warning points at the caller of the scorer's ``score``)."""
        key = self.key(task)
        if key in self._by_task:
            return
        self._by_task[key] = scoring
        if scoring.on_prefix:
            # not while another thread's model load has the output pointed at /dev/null:
            # the command line keeps any note until then (activetest._quiet); the lock
            # does it for the library used from Python, which shows warnings its own way
            with QUIET_OUTPUT_LOCK:
                warnings.warn(multi_token_notice(scoring, model=model, task=task.name,
                                                 remedy=self.remedy),
                              MultiTokenLabelNotice, stacklevel=stacklevel)


def multi_token_notice(scoring: LabelScoring, *, model: str, task: str, remedy: str) -> str:
    """The text of a :class:`MultiTokenLabelNotice`."""
    return (f"model {model}, task {task!r}: label words of more than one token, "
            f"{scoring.counts_text()}; each class is scored by the first token's log-prob, "
            f"the paper's choice, so these classes' scores are those of the word's first "
            f"token, not of the whole word; {remedy}")


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
