"""A harness file's choices put on the task's classes (:mod:`activetest.data.choices`),
on hand-made parsed samples: every document's own order, exact values."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.data.choices import class_logprobs, gold_classes
from activetest.formats.lmeval import LmEvalSamples

LP = np.log(np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4]]))


def samples(doc_choices, labels=(0, 1, -1)) -> LmEvalSamples:
    return LmEvalSamples(item_ids=("0", "1", "2"), logprobs=LP.copy(),
                         labels=np.asarray(labels, dtype=np.int64),
                         choices=doc_choices[0] or (), filter="none",
                         doc_choices=tuple(doc_choices), where=("f: line 1", "f: line 2",
                                                                "f: line 3"))


def test_each_documents_choices_land_on_their_classes() -> None:
    s = samples([("negative", "positive"), (" Positive", "negative "), ("negative", "positive")])
    got = class_logprobs(s, ["negative", "positive"])
    # document 1 lists positive first: its columns are swapped, its gold (choice 1,
    # "negative") is class 0; the unlabelled document stays -1
    np.testing.assert_array_equal(got.logprobs, np.array([LP[0], LP[1, ::-1], LP[2]]))
    assert got.labels.tolist() == [0, 0, -1]
    assert (got.rule, got.reordered, got.file_order) == ("labels", 1, ("negative", "positive"))
    # class names match too
    by_name = class_logprobs(samples([("bad", "good")] * 3), ["0", "1"], ["bad", "good"])
    np.testing.assert_array_equal(by_name.logprobs, LP)


def test_choices_that_are_not_label_words_are_refused_unless_declared_positional() -> None:
    s = samples([("A", "B")] * 3)
    with pytest.raises(ValueError, match=r"f: line 1: the file's choices are \['A', 'B'\].*"
                                         r"choices=positional"):
        class_logprobs(s, ["negative", "positive"])
    pos = class_logprobs(s, ["negative", "positive"], choices="positional")
    np.testing.assert_array_equal(pos.logprobs, LP)
    assert pos.labels.tolist() == [0, 1, -1] and pos.rule == "positional"
    with pytest.raises(ValueError, match="documents have 2 choices"):
        class_logprobs(s, ["a", "b", "c"])
    with pytest.raises(ValueError, match="choices must be one of labels, positional"):
        class_logprobs(s, ["negative", "positive"], choices="guess")


def test_gold_classes_through_the_gold_choices_label_word() -> None:
    choices = [("positive", "negative"), None, ("negative", "positive"), ("maybe", "no")]
    assert gold_classes(choices, [0, 0, -1, 0], ["negative", "positive"]) == [1, None, None,
                                                                              None]
    # a word naming two classes names neither
    assert gold_classes([("x", "y")], [0], ["x", "y"], ["y", "x"]) == [None]
