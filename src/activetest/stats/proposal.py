"""The paper's proposal distribution, stated directly (the reference definition).

At step m, over the ``R_m = N - m + 1`` items not yet acquired:

1. normalise the scores over the remaining items: ``p_i = s_i / sum_rem s``;
2. floor each probability at ``floor / R_m``, then renormalise;
3. draw one item and record ``q_m``, its probability under this distribution.

Equivalently ``q_i = max(s_i, t) / sum_rem max(s_j, t)`` with threshold
``t = floor * sum_rem s / R_m``. When every remaining score is 0 the proposal is
uniform (the limit of the floor as the scores shrink to 0).

The floor (the paper's alpha, 0.1 by default) is the share of the uniform mixed into the
proposal; the API calls it ``proposal_floor`` (``alpha=`` still works, deprecated: alpha
names 1 - the confidence level elsewhere).

:mod:`activetest.stats.sampler` draws from exactly this distribution without
the O(N) per-step cost; this module is the straightforward version it is tested
against, and the per-step reference loop that the benchmark compares with.
"""

from __future__ import annotations

import numpy as np

from activetest.stats.validate import as_scores, check_budget, floor_arg

__all__ = ["proposal", "reference_sample"]


def proposal(scores: np.ndarray, remaining: np.ndarray, proposal_floor: float | None = None,
             *, alpha: float | None = None) -> np.ndarray:
    """The floored proposal over the remaining items.

    Args:
        scores: ``(N,)`` non-negative acquisition scores.
        remaining: ``(N,)`` bool mask of items not yet acquired (at least one).
        proposal_floor: the share of the uniform in ``(0, 1]`` (None: 0.1, the paper's).
        alpha: deprecated name of ``proposal_floor``.

    Returns:
        ``(N,)`` probabilities, 0 on acquired items, summing to 1 over the rest.
    """
    s = as_scores(scores)
    floor = floor_arg(proposal_floor, alpha, "proposal")
    return _proposal(s, remaining, floor)


def _proposal(s: np.ndarray, remaining: np.ndarray, floor: float) -> np.ndarray:
    """:func:`proposal` of checked scores and floor."""
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
    p = np.maximum(sr / total, floor / n_rem)
    out[rem] = p / p.sum()
    return out


def reference_sample(scores: np.ndarray, budget: int, *, proposal_floor: float | None = None,
                     random_state: int | np.random.Generator | None = None,
                     alpha: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One run of sequential sampling without replacement, the slow direct way.

    Per step: recompute :func:`proposal` over the whole pool (O(N)), then draw by
    inverting its CDF with one uniform, visiting items in ascending score order
    (stable), exactly as :func:`activetest.stats.sampler.sample` does, so both
    give the same draws from the same seed. This is the research code's loop;
    it exists for tests and as the benchmark's baseline. ``proposal_floor``: as in
    :func:`proposal` (``alpha=``: its deprecated name).

    Returns:
        ``(indices, q)``: the ``budget`` acquired item indices in order, and q_m.
    """
    s = as_scores(scores)
    n = s.shape[0]
    budget = check_budget(budget, n)
    floor = floor_arg(proposal_floor, alpha, "reference_sample")
    rng = np.random.default_rng(random_state)
    order = np.argsort(s, kind="stable")
    remaining = np.ones(n, dtype=bool)
    idx = np.empty(budget, dtype=np.int64)
    qs = np.empty(budget)
    for m in range(budget):
        u = rng.random()
        q = _proposal(s, remaining, floor)[order]
        cdf = np.cumsum(q)
        k = int(np.searchsorted(cdf, u * cdf[-1], side="right"))
        k = min(k, n - 1)
        while not remaining[order[k]]:  # u at the very top of the CDF: step back
            k -= 1
        i = int(order[k])
        idx[m], qs[m] = i, q[k]
        remaining[i] = False
    return idx, qs
