"""Splits: disjoint, seeded, stratified with exact largest-remainder counts, one fixed order."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from activetest.data import Item, SplitError, select_examples, split_items
from activetest.data.split import stratified_counts


def make(labels: list[int | None], prefix: str = "") -> list[Item]:
    return [Item(id=f"{prefix}{i}", fields={"text": f"t{i}"}, label=y)
            for i, y in enumerate(labels)]


def test_largest_remainder_exact_counts() -> None:
    # 50 of (29780, 37569): quotas 22.109, 27.890 -> floors 22, 27; remainder to class 1.
    assert stratified_counts([29780, 37569], 50).tolist() == [22, 28]
    # 50 of FPB AllAgree (303, 1391, 570): 6.69, 30.72, 12.59 -> 6, 30, 12 + 2 leftovers.
    assert stratified_counts([303, 1391, 570], 50).tolist() == [7, 31, 12]
    # 5 of four near-equal classes: 1 each, leftover to the largest fractional part.
    assert stratified_counts([3222, 3462, 3582, 3776], 5).tolist() == [1, 1, 1, 2]
    # Ties in the fraction go to the larger class, then the smaller index.
    assert stratified_counts([1, 1, 1], 2).tolist() == [1, 1, 0]
    assert stratified_counts([2, 4, 2], 2).tolist() == [1, 1, 0]
    assert stratified_counts([2, 5, 3], 2).tolist() == [0, 1, 1]
    assert stratified_counts([5, 0, 5], 10).tolist() == [5, 0, 5]
    assert stratified_counts([3, 1], 0).tolist() == [0, 0]
    with pytest.raises(SplitError, match="cannot take 5 examples from 4"):
        stratified_counts([3, 1], 5)


@given(st.lists(st.integers(0, 50), min_size=1, max_size=8), st.data())
@settings(max_examples=200, deadline=None)
def test_stratified_counts_properties(counts: list[int], data: st.DataObject) -> None:
    n = data.draw(st.integers(0, sum(counts)))
    quota = stratified_counts(counts, n)
    assert quota.sum() == n
    assert (quota >= 0).all() and (quota <= np.asarray(counts)).all()
    if sum(counts):
        exact = n * np.asarray(counts) / sum(counts)
        assert (np.abs(quota - exact) < 1 + 1e-9).all()


def test_select_examples_is_stratified_seeded_and_shuffled() -> None:
    items = make([0] * 30 + [1] * 60 + [2] * 10 + [None] * 20)
    ex = select_examples(items, 10, seed=3, n_classes=3)
    assert Counter(e.label for e in ex) == {0: 3, 1: 6, 2: 1}
    assert len({e.id for e in ex}) == 10
    assert select_examples(items, 10, seed=3, n_classes=3) == ex
    assert select_examples(items, 10, seed=np.random.default_rng(3), n_classes=3) == ex
    assert select_examples(items, 10, seed=4, n_classes=3) != ex
    # One random order, not grouped by class: over seeds, class 1 is not always first.
    firsts = {select_examples(items, 10, seed=s)[0].label for s in range(20)}
    assert len(firsts) > 1
    uniform = select_examples(items, 10, seed=3, stratify=False)
    assert len(uniform) == 10 and all(e.label is not None for e in uniform)
    with pytest.raises(SplitError, match="cannot take 200 in-context examples from 100"):
        select_examples(items, 200, seed=0)
    with pytest.raises(SplitError, match=r"labels must lie in 0\.\.1"):
        select_examples(items, 5, seed=0, n_classes=2)
    assert select_examples(items, 0, seed=0) == ()


def test_split_is_disjoint_seeded_and_sized() -> None:
    items = make([i % 3 for i in range(300)])
    s = split_items(items, n_examples=12, pool_size=150, test_size=100, seed=7, n_classes=3)
    ids = [{it.id for it in part} for part in (s.examples, s.pool, s.test)]
    assert [len(x) for x in ids] == [12, 150, 100]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    assert Counter(e.label for e in s.examples) == {0: 4, 1: 4, 2: 4}
    again = split_items(items, n_examples=12, pool_size=150, test_size=100, seed=7, n_classes=3)
    assert again == s
    other = split_items(items, n_examples=12, pool_size=150, test_size=100, seed=8, n_classes=3)
    assert other.pool != s.pool
    rest = split_items(items, n_examples=12, pool_size=150, test_size=None, seed=7)
    assert len(rest.test) == 300 - 12 - 150 and rest.pool == s.pool
    truth = split_items(items, n_examples=0, pool_size=300, seed=1)
    assert truth.examples == () and truth.test == () and len(truth.pool) == 300


def test_separate_example_source_does_not_move_the_pool() -> None:
    items = make([i % 2 for i in range(100)])
    source = make([0, 0, 0, 1, 1, 1, 1, 1, 1, 1], prefix="dev:")
    a = split_items(items, n_examples=5, pool_size=60, test_size=40, seed=2,
                    example_source=source)
    b = split_items(items, n_examples=3, pool_size=60, test_size=40, seed=2,
                    example_source=source)
    assert all(e.id.startswith("dev:") for e in a.examples)
    assert Counter(e.label for e in a.examples) == {0: 1, 1: 4}  # 1.5/3.5: tie to larger
    assert a.pool == b.pool and a.test == b.test
    with pytest.raises(SplitError, match="shares 10 id"):
        split_items(items, n_examples=1, pool_size=1, seed=0, example_source=make([0] * 10))


def test_split_errors() -> None:
    items = make([0, 1] * 10)
    with pytest.raises(SplitError, match=r"pool_size 15 \+ test_size 5 = 20 exceeds the 18"):
        split_items(items, n_examples=2, pool_size=15, test_size=5, seed=0)
    with pytest.raises(SplitError, match="pool_size must be >= 0"):
        split_items(items, n_examples=2, pool_size=-1, seed=0)
    with pytest.raises(SplitError, match="duplicate item id '0'"):
        split_items(items + make([0]), n_examples=2, pool_size=1, seed=0)
    with pytest.raises(SplitError, match="not a Generator"):
        split_items(items, n_examples=2, pool_size=1, seed=np.random.default_rng(0))  # type: ignore[arg-type]
