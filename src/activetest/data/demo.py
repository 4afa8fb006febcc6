"""A generated product-review sentiment task that the project ships itself.

Every review is composed from hand-written phrase banks (no third-party text),
and its label is defined exactly by a rule:

* a **clause** says that a product or aspect ``is`` an adjective phrase with a
  polarity (+1 positive, -1 negative); a **negator** (``not``, ``hardly``, ``far
  from``, ...) in front of the phrase flips it: "not bad" is positive, "hardly
  great" negative;
* a review is one clause (``simple``), one negated clause (``negated``), or two
  clauses of opposite polarity joined by a contrast (``contrast``: "X, but Y",
  "Although X, Y", "Y, even though X"), where the **main clause** Y decides;
* neutral filler sentences ("I bought it last month.") may come before or after
  and never change the label.

The label is ``positive`` (1) if the deciding clause's polarity is +1, else
``negative`` (0). Simple reviews are easy even for tiny models; negations and
contrasts are where they err, which gives active testing something to find.
The mix of kinds (:data:`DEFAULT_MIX`) was tuned so that the bundled tiny
models get roughly 10-40 % wrong with 8-16 in-context examples. Measured with
llama.cpp on ``demo_items(200, seed=0)``, examples drawn by
``select_examples(demo_items(500, seed=12345), n, seed=s)``, s = 0, 1, 2:

=====================  ================  ================  ======================
model                  n = 8             n = 16            error by kind (mean)
=====================  ================  ================  ======================
SmolLM2-135M-Instruct  21.5, 42.5, 37 %  43, 25, 27.5 %    simple 20, negated 49,
                                                           contrast 42 %
Gemma-3-270M (base)    14.5, 18, 20 %    25, 14.5, 15 %    simple 2, negated 28,
                                                           contrast 41 %
=====================  ================  ================  ======================

SmolLM2's error depends mostly on the example set: it leans to "negative" with
some sets (13-60 % of its answers are "positive"), as tiny models do.

``demo_items(n, seed)`` is deterministic, and a prefix-stable sequence: the first
``k`` items of ``demo_items(n, seed)`` equal ``demo_items(k, seed)``. Each item's
``fields`` are ``text`` (the review) and ``kind`` (simple/negated/contrast).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from activetest.data.task import Item, Task

__all__ = ["DEFAULT_MIX", "KINDS", "demo_items", "demo_task", "label_of"]

#: The kinds of review, in the order used by the mix.
KINDS = ("simple", "negated", "contrast")

#: Probability of each kind of review.
DEFAULT_MIX: Mapping[str, float] = {"simple": 0.5, "negated": 0.25, "contrast": 0.25}

_PRODUCTS = (
    "blender", "backpack", "desk lamp", "coffee maker", "keyboard", "water bottle", "tent",
    "vacuum cleaner", "phone case", "toaster", "office chair", "rice cooker", "umbrella",
    "kettle", "mouse", "suitcase", "air fryer", "flashlight", "yoga mat", "alarm clock",
)
_ASPECTS = (
    "the battery", "the build quality", "the design", "the setup", "the handle", "the material",
    "the finish", "the lid", "the cable", "the customer service", "the manual", "the packaging",
    "the motor", "the sound", "the display", "the warranty",
)
# Adjective phrases that read naturally after "is" and after a negator.
_POSITIVE = (
    "great", "excellent", "reliable", "sturdy", "comfortable", "fantastic", "well made",
    "a joy to use", "worth the price", "impressive", "solid", "easy to use", "superb", "durable",
    "wonderful", "a pleasure to use", "good value", "lovely",
)
_NEGATIVE = (
    "terrible", "flimsy", "useless", "awful", "cheaply made", "disappointing", "poorly made",
    "a waste of money", "unreliable", "fragile", "overpriced", "frustrating", "uncomfortable",
    "a letdown", "junk", "bad", "horrible", "a pain to use",
)
# General evaluative words that fit any aspect ("the battery is superb").
_ASPECT_POSITIVE = ("great", "excellent", "fantastic", "impressive", "superb", "wonderful",
                    "lovely", "solid")
_ASPECT_NEGATIVE = ("terrible", "awful", "disappointing", "horrible", "bad", "a letdown",
                    "frustrating", "poor")
_NEGATORS = ("not", "hardly", "far from", "anything but", "by no means", "not at all",
             "never")
_FILLERS = (
    "I bought it last month.", "It arrived on a Tuesday.", "I use it every day.",
    "It was a gift for my sister.", "I ordered the blue one.", "We keep it in the kitchen.",
    "I have had it for two weeks.", "It came in a brown box.", "My neighbour has the same one.",
    "I got it during a sale.",
)


def demo_task() -> Task:
    """The demo task: product-review sentiment, labels ``negative``/``positive``."""
    return Task(
        name="demo",
        instruction='Classify the sentiment of the following product review as "positive" or '
                    '"negative". Respond with "positive" or "negative".\n',
        classes=("negative", "positive"),
        item_template="Sentence: '{text}' \n{answer_key}:",
        example_template="Sentence: '{text}' \n{answer_key}: {label}\n\n",
        answer_key="Label",
        columns={"text": "text", "label": "label"},
    )


def _pick(rng: np.random.Generator, bank: tuple[str, ...]) -> str:
    return bank[int(rng.integers(len(bank)))]


def _clause(rng: np.random.Generator, polarity: int, negated: bool, *, subject: str,
            aspect: bool = False) -> str:
    """A clause whose polarity (after any negation) is ``polarity``."""
    base = polarity if not negated else -polarity
    if aspect:
        adj = _pick(rng, _ASPECT_POSITIVE if base > 0 else _ASPECT_NEGATIVE)
    else:
        adj = _pick(rng, _POSITIVE if base > 0 else _NEGATIVE)
    if negated:
        neg = _pick(rng, _NEGATORS)
        if neg == "never":
            return f"{subject} was never {adj}"
        if neg == "not at all":
            return f"{subject} is not {adj} at all"
        return f"{subject} is {neg} {adj}"
    return f"{subject} is {adj}"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _review(rng: np.random.Generator, kind: str, label: int) -> str:
    product = _pick(rng, _PRODUCTS)
    pol = 1 if label == 1 else -1
    if kind == "simple":
        body = _cap(_clause(rng, pol, False, subject=f"the {product}")) + "."
    elif kind == "negated":
        body = _cap(_clause(rng, pol, True, subject=f"the {product}")) + "."
    else:
        # Two distinct aspects, or the product and an aspect; the other clause has the
        # opposite polarity; each clause is negated with probability 0.3.
        first, second = (int(j) for j in rng.choice(len(_ASPECTS), size=2, replace=False))
        subjects = [_ASPECTS[first], _ASPECTS[second]]
        if rng.random() < 0.5:
            subjects[int(rng.integers(2))] = f"the {product}"
        main = _clause(rng, pol, rng.random() < 0.3, subject=subjects[0], aspect=True)
        other = _clause(rng, -pol, rng.random() < 0.3, subject=subjects[1], aspect=True)
        form = int(rng.integers(3))
        if form == 0:
            body = f"{_cap(other)}, but {main}."
        elif form == 1:
            body = f"Although {other}, {main}."
        else:
            body = f"{_cap(main)}, even though {other}."
    r = rng.random()
    if r < 0.2:
        body = f"{_pick(rng, _FILLERS)} {body}"
    elif r < 0.4:
        body = f"{body} {_pick(rng, _FILLERS)}"
    return body


def label_of(text: str) -> int:
    """Recompute the label of a generated review from its text (the rule, as code).

    Used by the tests to check that every generated label follows the rule.
    """
    sentences = [s for s in text.split(".") if s.strip()]
    core = [s.strip() for s in sentences if s.strip() + "." not in _FILLERS]
    if len(core) != 1:
        raise ValueError(f"not a generated review: {text!r}")
    s = core[0]
    if ", but " in s:
        main = s.split(", but ", 1)[1]
    elif s.startswith("Although "):
        main = s.split(", ", 1)[1]
    elif ", even though " in s:
        main = s.split(", even though ", 1)[0]
    else:
        main = s
    return 1 if _clause_polarity(main) > 0 else 0


def _clause_polarity(clause: str) -> int:
    words = clause.lower()
    adj = None
    for phrase in sorted(set(_POSITIVE + _NEGATIVE + _ASPECT_POSITIVE + _ASPECT_NEGATIVE),
                         key=len, reverse=True):
        if words.endswith(" " + phrase) or words.endswith(" " + phrase + " at all"):
            adj = phrase
            break
    if adj is None:
        raise ValueError(f"no adjective phrase in clause {clause!r}")
    pol = 1 if adj in _POSITIVE + _ASPECT_POSITIVE else -1
    head = words[: words.rindex(" " + adj)]
    negated = head.endswith((" not", " hardly", " far from", " anything but", " by no means",
                             " never"))
    return -pol if negated else pol


def demo_items(n: int = 2000, seed: int = 0,
               mix: Mapping[str, float] | None = None) -> list[Item]:
    """``n`` labelled demo reviews (ids ``"0"``..``str(n-1)``), balanced classes in expectation.

    Args:
        n: number of items (>= 0).
        seed: the random seed; the same seed gives the same items.
        mix: probability of each kind in :data:`KINDS` (default :data:`DEFAULT_MIX`).

    Raises:
        ValueError: negative ``n`` or a bad ``mix``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    mix = dict(DEFAULT_MIX if mix is None else mix)
    unknown = set(mix) - set(KINDS)
    if unknown or any(p < 0 for p in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError(f"mix must give non-negative weights to kinds {KINDS}, got {mix}")
    probs = np.array([mix.get(k, 0.0) for k in KINDS], dtype=np.float64)
    probs /= probs.sum()
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        kind = KINDS[int(rng.choice(len(KINDS), p=probs))]
        label = int(rng.integers(2))
        text = _review(rng, kind, label)
        items.append(Item(id=str(i), fields={"text": text, "kind": kind}, label=label))
    return items
