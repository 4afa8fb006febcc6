"""A harness file's choices put on the task's classes, by label word.

An lm-eval ``--log_samples`` record (read by :mod:`activetest.formats.lmeval`) lists its
choices in the file's order, per document. They are matched to the task's classes by
label word or class name (case and surrounding blanks ignored), per document, so a file
listing ``" positive", " negative"`` still puts every probability on the right class
(:func:`class_logprobs`), and a record's gold choice names its class
(:func:`gold_classes`). Choices that are not the task's label words are refused,
showing both orders, unless the caller declares that choice j is class j
(``choices="positional"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from activetest.formats.lmeval import LmEvalSamples, normalise_text

__all__ = ["CHOICE_RULES", "ChoiceAlignment", "class_logprobs", "gold_classes"]

#: How the caller says what a file's choice j means.
CHOICE_RULES = ("labels", "positional")


@dataclass(frozen=True)
class ChoiceAlignment:
    """The file's predictions put on the task's classes.

    Attributes:
        logprobs: ``(N, C)`` class log-probs in CLASS order.
        labels: ``(N,)`` gold class per document (-1 where none).
        rule: ``"labels"`` (matched by label word) or ``"positional"`` (declared).
        reordered: how many documents listed their choices in another order than
            the task's classes.
        file_order: the first document's choices, in the file's order.
    """

    logprobs: np.ndarray
    labels: np.ndarray
    rule: str
    reordered: int
    file_order: tuple[str, ...]


def _class_words(classes: Sequence[str], class_names: Sequence[str]) -> dict[str, int]:
    """Normalised label word / class name -> class; words that name two classes dropped."""
    index: dict[str, int] = {}
    clash: set[str] = set()
    for names in (classes, class_names):
        for i, w in enumerate(names):
            key = normalise_text(w)
            if key in index and index[key] != i:
                clash.add(key)
            index.setdefault(key, i)
    return {k: v for k, v in index.items() if k not in clash}


def class_logprobs(samples: LmEvalSamples, classes: Sequence[str],
                   class_names: Sequence[str] = (), *, choices: str = "labels",
                   ) -> ChoiceAlignment:
    """Reorder each document's log-probs into the task's class order.

    Args:
        samples: the parsed files.
        classes, class_names: the task's label words and class names, in class order.
        choices: ``"labels"``: match each document's choices to the classes by
            label word or class name (case and blanks ignored), refusing choices
            that do not match one-to-one; ``"positional"``: the caller declares that
            choice j is class j (for choices that are not label words).

    Raises:
        ValueError: a different number of choices than classes, or choices that do
            not match the classes (the message shows both orders and the fixes).
    """
    if choices not in CHOICE_RULES:
        raise ValueError(f"choices must be one of {', '.join(CHOICE_RULES)}, got {choices!r}")
    n, c = samples.logprobs.shape if samples.logprobs.ndim == 2 else (0, 0)
    first = samples.where[0] if samples.where else "the samples file"
    if c != len(classes):
        raise ValueError(f"{first}: documents have {c} choices {list(samples.choices)}, the "
                         f"task has {len(classes)} classes {list(classes)}")
    if choices == "positional":
        return ChoiceAlignment(samples.logprobs.copy(), samples.labels.copy(), choices, 0,
                               samples.choices)
    words = _class_words(classes, class_names)
    order = np.empty((n, c), dtype=np.int64)  # order[r, k]: file column of class k
    cache: dict[tuple[str, ...], np.ndarray | None] = {}
    for r in range(n):
        conts = samples.doc_choices[r] if samples.doc_choices else None
        perm = None
        if conts is not None:
            if conts not in cache:
                idx = [words.get(normalise_text(x)) for x in conts]
                ok = None not in idx and sorted(idx) == list(range(c))  # type: ignore[type-var]
                cache[conts] = np.argsort(np.asarray(idx)) if ok else None
            perm = cache[conts]
        if perm is None:
            where = samples.where[r] if samples.where else first
            shown = list(conts) if conts is not None else "not recorded (no 'arguments')"
            names = ("" if tuple(class_names) in ((), tuple(classes))
                     else f" (class names {list(class_names)})")
            raise ValueError(
                f"{where}: the file's choices are {shown} (in the file's order) and the "
                f"task's classes are {list(classes)}{names} (in class order): they cannot be "
                f"matched by label word, so the predictions cannot be put on the right "
                f"classes. Make the task's label words the file's choices, or, if choice j "
                f"is class j in every document, add ?choices=positional to the table: spec "
                f"(choices='positional' in Python)")
        order[r] = perm
    rows = np.arange(n)[:, None]
    lp = samples.logprobs[rows, order]
    inverse = np.argsort(order, axis=1)  # inverse[r, j]: class of file column j
    labels = np.where(samples.labels >= 0,
                      inverse[np.arange(n), np.maximum(samples.labels, 0)], -1)
    reordered = int((order != np.arange(c)).any(axis=1).sum())
    return ChoiceAlignment(lp, labels.astype(np.int64), choices, reordered, samples.choices)


def gold_classes(doc_choices: Sequence[tuple[str, ...] | None], targets: Sequence[int],
                 classes: Sequence[str], class_names: Sequence[str] = ()) -> list[int | None]:
    """Each document's gold class, found through its gold choice's label word.

    None where the file gives no gold choice (``-1``), records no choices, or the
    gold choice is not one of the task's label words or class names.
    """
    words = _class_words(classes, class_names)
    out: list[int | None] = []
    for conts, t in zip(doc_choices, targets, strict=True):
        if conts is None or not 0 <= t < len(conts):
            out.append(None)
        else:
            out.append(words.get(normalise_text(conts[t])))
    return out
