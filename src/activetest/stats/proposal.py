"""The paper's proposal distribution, stated directly (the reference definition).

At step m, over the ``R_m = N - m + 1`` items not yet acquired:

1. normalise the scores over the remaining items: ``p_i = s_i / sum_rem s``;
2. floor each probability at ``alpha / R_m``, then renormalise;
3. draw one item and record ``q_m``, its probability under this distribution.

Equivalently ``q_i = max(s_i, t) / sum_rem max(s_j, t)`` with threshold
``t = alpha * sum_rem s / R_m``. When every remaining score is 0 the
proposal is uniform (the limit of the floor as the scores shrink to 0).

:mod:`activetest.stats.sampler` draws from exactly this distribution without
the O(N) per-step cost; this module is the straightforward version it is tested
against, and the per-step reference loop that the benchmark compares with.
"""

from __future__ import annotations

import numpy as np

from activetest.stats._validate import as_scores, check_alpha, check_budget

__all__ = ["proposal", "reference_sample"]


def proposal(scores: np.ndarray, remaining: np.ndarray, alpha: float = 0.1) -> np.ndarray:
    """The floored proposal over the remaining items.

    Args:
        scores: ``(N,)`` non-negative acquisition scores.
        remaining: ``(N,)`` bool mask of items not yet acquired (at least one).
        alpha: uniform floor in ``(0, 1]``.

    Returns:
        ``(N,)`` probabilities, 0 on acquired items, summing to 1 over the rest.
    """
    s = as_scores(scores)
    alpha = check_alpha(alpha)
    rem = np.asarray(remaining, dtype=bool)
    if rem.shape != s.shape:
        raise ValueError(f"remaining must have shape {s.shape}, got {rem.shape}")
    n_rem = int(rem.sum())
    if n_rem == 0:
        raise ValueError("remaining is empty: every item has been acquired")
    out = np.zeros_like(s)
    sr = s[rem]
    total = sr.sum()
    if total <= 0.0:
        out[rem] = 1.0 / n_rem
        return out
    p = np.maximum(sr / total, alpha / n_rem)
    out[rem] = p / p.sum()
    return out


def reference_sample(scores: np.ndarray, budget: int, *, alpha: float = 0.1,
                     random_state: int | np.random.Generator | None = None,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """One run of sequential sampling without replacement, the slow direct way.

    Per step: recompute :func:`proposal` over the whole pool (O(N)), then draw by
    inverting its CDF with one uniform, visiting items in ascending score order
    (stable), exactly as :func:`activetest.stats.sampler.sample` does, so both
    give the same draws from the same seed. This is the research code's loop;
    it exists for tests and as the benchmark's baseline.

    Returns:
        ``(indices, q)``: the ``budget`` acquired item indices in order, and q_m.
    """
    s = as_scores(scores)
    n = s.shape[0]
    budget = check_budget(budget, n)
    rng = np.random.default_rng(random_state)
    order = np.argsort(s, kind="stable")
    remaining = np.ones(n, dtype=bool)
    idx = np.empty(budget, dtype=np.int64)
    qs = np.empty(budget)
    for m in range(budget):
        u = rng.random()
        q = proposal(s, remaining, alpha)[order]
        cdf = np.cumsum(q)
        k = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
        k = min(k, n - 1)
        while not remaining[order[k]]:  # u at the very top of the CDF: step back
            k -= 1
        i = int(order[k])
        idx[m], qs[m] = i, q[k]
        remaining[i] = False
    return idx, qs
