"""Seeded, disjoint splits into in-context examples, pool and held-out test set.

The paper's surrogate is prompted with ``n`` labelled examples "chosen at random
but stratified by class frequency, in one fixed random order, drawn from data
disjoint from the pool and the test set"; the same examples, in the same order,
serve every model (target and surrogate). The pool and the test set are drawn
uniformly at random from what remains.

Algorithm of :func:`split_items` (all randomness from ``seed``)::

    ss_examples, ss_split = SeedSequence(seed).spawn(2)     # independent streams
    examples = select_examples(candidates, n_examples, Generator(PCG64(ss_examples)))
    rest     = items without the examples (by id), in input order
    perm     = Generator(PCG64(ss_split)).permutation(len(rest))
    pool     = rest[perm[:pool_size]]                 (in permuted order)
    test     = rest[perm[pool_size:pool_size + test_size]]

``candidates`` is ``items`` itself, or a separate ``example_source`` (Subj uses its
test file, MMLU its dev file); in that case the pool and test draw does not
depend on the examples at all.

Algorithm of :func:`select_examples` with generator ``rng``::

    counts_k = number of labelled candidates of class k (k = 0..C-1)
    quota    = stratified_counts(counts, n)          # largest remainder, sums to n
    for k in 0..C-1:                                 # in class order
        chosen_k = rng.choice(indices of class k in input order, quota_k, replace=False)
    order    = rng.permutation(n)                    # ONE fixed random order
    examples = (chosen_0 + ... + chosen_{C-1})[order]

Unlabelled candidates are never chosen. Same seed, same input order: same output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from activetest.data.task import Item

__all__ = ["Split", "SplitError", "select_examples", "split_items", "stratified_counts"]

SeedLike = int | np.random.SeedSequence | np.random.Generator


class SplitError(ValueError):
    """Sizes that do not fit the items, or items unfit for a split."""


@dataclass(frozen=True)
class Split:
    """The three disjoint parts of a dataset for one experiment.

    Attributes:
        examples: in-context examples, in their one fixed prompt order.
        pool: the pool to evaluate on (the items active testing acquires from).
        test: held-out test set for the true risk (empty where the pool is the truth).
    """

    examples: tuple[Item, ...]
    pool: tuple[Item, ...]
    test: tuple[Item, ...]


def stratified_counts(class_counts: Sequence[int] | np.ndarray, n: int) -> np.ndarray:
    """How many of ``n`` examples each class gets, proportional to ``class_counts``.

    Largest-remainder (Hamilton) allocation: class ``k`` gets
    ``floor(n * c_k / total)``; the ``n - sum(floors)`` leftover slots go one each
    to the classes with the largest fractional parts ``n * c_k / total - floor``,
    ties broken by larger ``c_k``, then by smaller class index. No class gets
    more than it has. The result sums to exactly ``n``. Exact integer arithmetic.

    Raises:
        SplitError: ``n`` is negative or larger than the total count.
    """
    counts = np.asarray(class_counts, dtype=np.int64)
    if counts.ndim != 1 or (counts < 0).any():
        raise SplitError(f"class_counts must be a 1-d array of counts >= 0, got {counts!r}")
    total = int(counts.sum())
    if n < 0 or n > total:
        raise SplitError(f"cannot take {n} examples from {total} labelled candidates")
    if n == 0:
        return np.zeros_like(counts)
    quota = (n * counts) // total
    remainders = (n * counts) % total  # fractional part, scaled by total: exact
    left = n - int(quota.sum())
    order = sorted(range(len(counts)), key=lambda k: (-remainders[k], -counts[k], k))
    for k in order:
        if left == 0:
            break
        if quota[k] < counts[k]:
            quota[k] += 1
            left -= 1
    return quota


def _rng(seed: SeedLike) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def select_examples(candidates: Sequence[Item], n: int, seed: SeedLike, *,
                    n_classes: int | None = None, stratify: bool = True) -> tuple[Item, ...]:
    """``n`` labelled in-context examples, stratified by class frequency, in one random order.

    See the module docstring for the exact algorithm. With ``stratify=False`` the
    ``n`` examples are a uniform sample (``rng.choice`` over the labelled
    candidates), then shuffled the same way.

    Args:
        candidates: items to draw from; unlabelled ones are skipped.
        n: how many examples.
        seed: an int, ``SeedSequence`` or ``Generator``.
        n_classes: number of classes (default: ``1 + max label``).

    Raises:
        SplitError: fewer than ``n`` labelled candidates, duplicate ids, or a label
            outside ``0..n_classes - 1``.
    """
    _check_unique(candidates, "candidates")
    labelled = [i for i, it in enumerate(candidates) if it.label is not None]
    if n > len(labelled) or n < 0:
        raise SplitError(f"cannot take {n} in-context examples from {len(labelled)} labelled "
                         f"candidates")
    rng = _rng(seed)
    if n == 0:
        return ()
    labels = np.array([candidates[i].label for i in labelled], dtype=np.int64)
    c = int(labels.max()) + 1 if n_classes is None else n_classes
    if labels.min() < 0 or labels.max() >= c:
        raise SplitError(f"labels must lie in 0..{c - 1}, got {labels.min()}..{labels.max()}")
    if stratify:
        quota = stratified_counts(np.bincount(labels, minlength=c), n)
        chosen: list[int] = []
        idx = np.asarray(labelled)
        for k in range(c):
            members = idx[labels == k]
            if quota[k]:
                chosen.extend(int(j) for j in rng.choice(members, size=int(quota[k]),
                                                         replace=False))
    else:
        chosen = [int(j) for j in rng.choice(np.asarray(labelled), size=n, replace=False)]
    order = rng.permutation(len(chosen))
    return tuple(candidates[chosen[j]] for j in order)


def _check_unique(items: Sequence[Item], what: str) -> None:
    seen: set[str] = set()
    for it in items:
        if it.id in seen:
            raise SplitError(f"{what}: duplicate item id {it.id!r}")
        seen.add(it.id)


def split_items(items: Sequence[Item], *, n_examples: int, pool_size: int,
                test_size: int | None = 0, seed: int | np.random.SeedSequence,
                example_source: Sequence[Item] | None = None, n_classes: int | None = None,
                stratify: bool = True) -> Split:
    """Split ``items`` into in-context examples, a pool and a held-out test set.

    See the module docstring for the exact algorithm.

    Args:
        items: the dataset (e.g. a :class:`~activetest.data.pool.Pool`).
        n_examples: number of in-context examples (0 for zero-shot).
        pool_size: pool size.
        test_size: test-set size; ``None`` takes all items that remain; ``0`` (the
            default) where the pool is its own ground truth (FPB).
        seed: int or ``SeedSequence`` (a ``Generator`` is not accepted here, since
            two independent streams are derived from the seed).
        example_source: draw the examples from these items instead of ``items``.
            Its ids must not occur in ``items``.
        n_classes: number of classes, for the stratification.
        stratify: stratify the examples by class frequency (the paper does).

    Raises:
        SplitError: sizes that do not fit, duplicate ids, or an ``example_source``
            that shares ids with ``items``.
    """
    if isinstance(seed, np.random.Generator):
        raise SplitError("split_items needs an int or SeedSequence seed, not a Generator")
    for name, value in (("n_examples", n_examples), ("pool_size", pool_size),
                        ("test_size", test_size)):
        if value is not None and value < 0:
            raise SplitError(f"{name} must be >= 0, got {value}")
    _check_unique(items, "items")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    ss_examples, ss_split = ss.spawn(2)
    if example_source is not None:
        shared = {it.id for it in items} & {it.id for it in example_source}
        if shared:
            raise SplitError(f"example_source shares {len(shared)} id(s) with items, e.g. "
                             f"{sorted(shared)[0]!r}; give its items distinct ids")
    candidates = items if example_source is None else example_source
    examples = select_examples(candidates, n_examples, np.random.default_rng(ss_examples),
                               n_classes=n_classes, stratify=stratify)
    taken = {it.id for it in examples}
    rest = [it for it in items if it.id not in taken]
    need = pool_size + (test_size or 0)
    if need > len(rest):
        raise SplitError(f"pool_size {pool_size} + test_size {test_size or 0} = {need} exceeds "
                         f"the {len(rest)} items left after {len(examples)} in-context examples")
    perm = np.random.default_rng(ss_split).permutation(len(rest))
    end = len(rest) if test_size is None else pool_size + test_size
    return Split(examples=examples, pool=tuple(rest[j] for j in perm[:pool_size]),
                 test=tuple(rest[j] for j in perm[pool_size:end]))
