"""Pools built to be hard for active testing (issue 20): where a design that trusts its
surrogate, or a LURE estimate with a learnt control, can lose to uniform sampling.

Every pool is N items, C classes (default 2,000 and 4, as in the issue), made from a
seed: the target's and the surrogate's class log-probs and the true labels. Each is
used for the log loss and for the error rate (the target's 0-1 loss); the pool's
own mean loss is the truth (these are pools, not samples of a population).

The benign base (:func:`benign`): world logits ``z ~ N(0, 2^2)`` per class, the
label drawn from ``softmax(z)``; the target sees ``z`` with noise of sd 0.5 (nearly
calibrated, log loss about 0.77, error rate about 0.3), the surrogate with noise of
sd 1 (informative, weaker). The hostile pools change one thing each:

``rare_miss``
    1 % of the items (20 of 2,000): the target is confidently wrong (``p(true) =
    1e-6``: loss 13.8 nats, and the true class is one it gives 1e-6) and the
    surrogate copies the target's row, so neither model hints at the surprise.
    These items carry about 0.14 of the pool's mean log loss of about 0.9.
``near_constant``
    The target gives the true class ``exp(-(0.917 + 0.034 e))``, ``e ~ N(0, 1)``
    (log loss 0.917 +- 0.034, nearly constant) and spreads the rest over the other
    classes (Dirichlet(5), so the true class stays its argmax: error rate near 0);
    the surrogate is confident and unrelated (random logits of sd 2), so a design
    that trusts it expects losses to vary where they do not.
``constant``
    The target gives the true class exactly 0.2 and one wrong class 0.4 (the
    others 0.2): log loss exactly log 5 and error rate exactly 1 on every item;
    uniform sampling is exact, a LURE estimate only if its proposal is uniform or
    its control exact. Surrogate as in ``near_constant``.
``anti_correlated``
    The benign target; the surrogate agrees confidently with the target's pick
    where the target is wrong and bets on another class where it is right, so
    its expected loss of the target is anti-correlated with the true loss (the
    paper's CE acquisition samples the wrong places).
``label_noise``
    The benign pool with 1 % of the labels replaced by a uniformly drawn other
    class (neither model knows).
``wrong_class``
    The benign target; the surrogate is confident (0.97) and wrong on every item
    of one class (true class 0: it says class 1), informative elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from activetest.stats.losses import log_loss, log_softmax, zero_one_loss

__all__ = ["POOLS", "HostilePool", "hostile_pool"]

#: Default pool size and number of classes (the issue's).
N_ITEMS = 2000
N_CLASSES = 4


@dataclass(frozen=True)
class HostilePool:
    """One generated pool.

    Attributes:
        name: the generator's name (:data:`POOLS`).
        target, surrogate: ``(N, C)`` class log-probs.
        labels: ``(N,)`` true classes.
        seed: the seed it was made from.
    """

    name: str
    target: np.ndarray
    surrogate: np.ndarray
    labels: np.ndarray
    seed: int

    def losses(self, loss: str) -> np.ndarray:
        """``(N,)`` the target's loss per item: ``"log"`` or ``"zero_one"``."""
        if loss == "log":
            return log_loss(self.target, self.labels)
        if loss == "zero_one":
            return zero_one_loss(self.target, self.labels)
        raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")


def _log_rows(p: np.ndarray) -> np.ndarray:
    return np.log(p / p.sum(axis=1, keepdims=True))


def _draw_labels(rng: np.random.Generator, lp: np.ndarray) -> np.ndarray:
    p = np.exp(lp)
    u = rng.random((lp.shape[0], 1))
    return np.minimum((u > np.cumsum(p, axis=1)).sum(axis=1), lp.shape[1] - 1)


def _base(rng: np.random.Generator, n: int, C: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = rng.normal(size=(n, C)) * 2.0
    y = _draw_labels(rng, log_softmax(z))
    target = log_softmax(z + rng.normal(size=(n, C)) * 0.5)
    surrogate = log_softmax(z + rng.normal(size=(n, C)) * 1.0)
    return target, surrogate, y


def benign(rng: np.random.Generator, n: int, C: int) -> tuple[np.ndarray, ...]:
    """The benign base pool (module docstring)."""
    return _base(rng, n, C)


def rare_miss(rng: np.random.Generator, n: int, C: int, share: float = 0.01,
              p_true: float = 1e-6) -> tuple[np.ndarray, ...]:
    """1 % confidently wrong items that the surrogate copies (module docstring)."""
    t, s, y = _base(rng, n, C)
    rare = rng.choice(n, size=max(1, round(share * n)), replace=False)
    for i in rare:
        pick = int(rng.integers(C))
        row = np.full(C, p_true)
        row[pick] = 1.0 - (C - 1) * p_true
        t[i] = s[i] = np.log(row)
        y[i] = (pick + 1 + int(rng.integers(C - 1))) % C
    return t, s, y


def _unrelated_surrogate(rng: np.random.Generator, n: int, C: int) -> np.ndarray:
    return log_softmax(rng.normal(size=(n, C)) * 2.0)


def near_constant(rng: np.random.Generator, n: int, C: int, mean: float = 0.917,
                  sd: float = 0.034) -> tuple[np.ndarray, ...]:
    """Log loss 0.917 +- 0.034 on every item (module docstring)."""
    y = rng.integers(C, size=n)
    p_true = np.exp(-(mean + sd * rng.normal(size=n)))
    rest = rng.dirichlet(np.full(C - 1, 5.0), size=n) * (1.0 - p_true)[:, None]
    p = np.empty((n, C))
    for i in range(n):
        p[i, y[i]] = p_true[i]
        p[i, np.arange(C) != y[i]] = rest[i]
    return np.log(p), _unrelated_surrogate(rng, n, C), y


def constant(rng: np.random.Generator, n: int, C: int) -> tuple[np.ndarray, ...]:
    """Log loss exactly log 5 and error rate exactly 1 on every item (module docstring)."""
    if C < 3:
        raise ValueError("the constant pool needs C >= 3")
    y = rng.integers(C, size=n)
    wrong = (y + 1 + rng.integers(C - 1, size=n)) % C
    p = np.full((n, C), 0.4 / (C - 2))  # the other classes share 0.4 equally
    p[np.arange(n), wrong] = 0.4
    lp = np.log(p)
    lp[np.arange(n), y] = np.log(0.2)  # the same float on every row
    return lp, _unrelated_surrogate(rng, n, C), y


def anti_correlated(rng: np.random.Generator, n: int, C: int) -> tuple[np.ndarray, ...]:
    """A surrogate whose expected loss is anti-correlated with the true loss."""
    t, _, y = _base(rng, n, C)
    pick = t.argmax(axis=1)
    wrong = pick != y
    other = (pick + 1 + rng.integers(C - 1, size=n)) % C
    bet = np.where(wrong, pick, other)
    p = np.full((n, C), 0.03 / (C - 1))
    p[np.arange(n), bet] = 0.97
    return t, _log_rows(p), y


def label_noise(rng: np.random.Generator, n: int, C: int, share: float = 0.01
                ) -> tuple[np.ndarray, ...]:
    """The benign pool with 1 % of the labels flipped to another class."""
    t, s, y = _base(rng, n, C)
    flip = rng.choice(n, size=max(1, round(share * n)), replace=False)
    y = y.copy()
    y[flip] = (y[flip] + 1 + rng.integers(C - 1, size=flip.size)) % C
    return t, s, y


def wrong_class(rng: np.random.Generator, n: int, C: int) -> tuple[np.ndarray, ...]:
    """A surrogate confident and wrong on every item of class 0 (it says class 1)."""
    t, s, y = _base(rng, n, C)
    p = np.full((n, C), 0.03 / (C - 1))
    p[:, 1] = 0.97
    s = s.copy()
    s[y == 0] = _log_rows(p)[y == 0]
    return t, s, y


#: Every generator, by name: ``f(rng, n, C) -> (target, surrogate, labels)``.
POOLS: dict[str, Callable[..., tuple[np.ndarray, ...]]] = {
    "benign": benign, "rare_miss": rare_miss, "near_constant": near_constant,
    "constant": constant, "anti_correlated": anti_correlated, "label_noise": label_noise,
    "wrong_class": wrong_class,
}


def hostile_pool(name: str, *, seed: int = 0, n: int = N_ITEMS, C: int = N_CLASSES
                 ) -> HostilePool:
    """The pool ``name`` (:data:`POOLS`) made from ``seed``."""
    if name not in POOLS:
        raise ValueError(f"unknown pool {name!r}; expected one of {', '.join(POOLS)}")
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), len(name), *name.encode()]))
    t, s, y = POOLS[name](rng, n, C)
    return HostilePool(name, np.ascontiguousarray(t, dtype=np.float64),
                       np.ascontiguousarray(s, dtype=np.float64), np.asarray(y, dtype=np.int64),
                       int(seed))
