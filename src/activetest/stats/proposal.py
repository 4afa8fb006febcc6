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

from collections.abc import Sequence

import numpy as np

from activetest.stats.kernels import njit
from activetest.stats.validate import as_scores, check_budget, floor_arg, rng_of

__all__ = ["explored_scores", "floored_model_var", "floored_model_vars", "floored_weight_bound",
           "proposal", "reference_sample"]


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


def floored_model_var(scores: np.ndarray, proposal_floor: float, rows: Sequence[int],
                      mean: np.ndarray, second: np.ndarray | None = None) -> np.ndarray:
    """``(K,)`` a model's ``N^2 Var(theta_m | past)`` of plain LURE at each draw ``rows``
    of the fixed floored proposal (:func:`proposal` over the items not yet drawn).

    With item i's loss of mean ``mean_i`` and second moment ``second_i`` (default
    ``mean``: a 0/1 loss), drawn with ``q_m(i)`` from the remaining set ``S_m``::

        N^2 Var(theta_m | past) = sum_{S_m} second_i / q_m(i) - (sum_{S_m} mean_i)^2

    The intervals take it as a floor for their variance
    (:func:`activetest.stats.intervals.moment_curves`, ``model_var``), as they take an
    adaptive design's own prediction: a run that has not yet drawn one of the items the
    proposal rarely draws has a low estimate and a low observed SE at once, and the model
    knows what those items' rare, heavy terms add. O(N log N + K^2)
    (:func:`_floored_sums`).
    """
    s = as_scores(scores)
    f = floor_arg(proposal_floor, None, "proposal")
    h = np.asarray(mean, dtype=np.float64)
    x = h if second is None else np.asarray(second, dtype=np.float64)
    if h.shape != s.shape or x.shape != s.shape:
        raise ValueError(f"mean and second must have shape {s.shape}")
    return _floored_sums(s, f, [int(i) for i in rows], h[None], x[None])[0]


def floored_model_vars(scores: np.ndarray, proposal_floor: float, rows: Sequence[int],
                       mean: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``(R, K)``: :func:`floored_model_var` of each row of ``mean`` and ``second``
    (``(R, N)`` each), the pool sorted once for all rows."""
    s = as_scores(scores)
    f = floor_arg(proposal_floor, None, "proposal")
    h = np.asarray(mean, dtype=np.float64)
    x = np.asarray(second, dtype=np.float64)
    if h.ndim != 2 or h.shape != x.shape or h.shape[1] != s.shape[0]:
        raise ValueError(f"mean and second must be (R, {s.shape[0]}) arrays of one shape")
    return _floored_sums(s, f, [int(i) for i in rows], h, x)


def _floored_sums(s: np.ndarray, f: float, rows: list[int], H: np.ndarray,
                  X: np.ndarray) -> np.ndarray:
    """:func:`floored_model_vars` of checked arguments, without a pass over the pool per
    draw. At draw m (remaining set ``S``, ``n = |S|``, ``T = sum_S s``) an item is
    floored (``p_i = f / n``) where ``s_i < c = f T / n``, else ``p_i = s_i / T``; with
    ``P = sum_S p`` (``q = p / P``)::

        sum_S x / q = P (T sum_{S, s >= c} x_i / s_i + (n / f) sum_{S, s < c} x_i)

    The pool is sorted by score once: the items below ``c`` are a prefix, whose sums of
    ``x`` are prefix sums; the sums above ``c`` (of ``s`` and ``x / s``) are suffix sums,
    accumulated from the largest score down (the tiny scores' huge ``x / s`` never enter
    them, so no cancellation); the drawn items are taken out of both by a sum over them.
    O(N log N + R K^2); the same numbers as the pass over the remaining items, up to
    the rounding of the sums. Where every remaining score is 0 the proposal is uniform:
    ``sum_S x / q = n sum_S x``."""
    N = s.shape[0]
    K = len(rows)
    out = np.zeros((X.shape[0], K))
    if K == 0:
        return out
    order = np.argsort(s, kind="stable")
    ss = s[order]
    where = np.empty(N, dtype=np.int64)
    where[order] = np.arange(N)
    suf_s = np.concatenate([np.cumsum(ss[::-1])[::-1], [0.0]])
    xs = X[:, order]
    ratio = np.divide(xs, ss, out=np.zeros_like(xs), where=ss > 0)
    pre_x = np.concatenate([np.zeros((X.shape[0], 1)), np.cumsum(xs, axis=1)], axis=1)
    suf_r = np.concatenate([np.cumsum(ratio[:, ::-1], axis=1)[:, ::-1],
                            np.zeros((X.shape[0], 1))], axis=1)
    tot_x, tot_h = X.sum(axis=1), H.sum(axis=1)
    r = np.asarray(rows, dtype=np.int64)
    pd = where[r]  # the drawn items' places in the sorted pool
    d_s, d_x, d_h = s[r], X[:, r], H[:, r]
    d_ratio = np.divide(d_x, d_s, out=np.zeros_like(d_x), where=d_s > 0)
    n_pos = int(np.count_nonzero(ss > 0)) - np.cumsum(np.concatenate([[0], d_s[:-1] > 0]))
    tiny = 1e-9  # a sum this small a share of what it was taken from: computed directly
    for m in range(K):
        n = N - m
        rest_h = tot_h - d_h[:, :m].sum(axis=1)
        if n_pos[m] == 0:  # every remaining score 0: the uniform
            out[:, m] = n * (tot_x - d_x[:, :m].sum(axis=1)) - rest_h ** 2
            continue
        tot_s = suf_s[0] - float(d_s[:m].sum())
        c = f * tot_s / n
        j = int(np.searchsorted(ss, c, side="left"))
        low = pd[:m] < j
        n_low = j - int(low.sum())
        high = ~low
        above_s = suf_s[j] - float(d_s[:m][high].sum())
        above_r = suf_r[:, j] - d_ratio[:, :m][:, high].sum(axis=1)
        below_x = pre_x[:, j] - d_x[:, :m][:, low].sum(axis=1)
        if (tot_s <= tiny * suf_s[0] or above_s <= tiny * suf_s[j]
                or np.any(above_r < tiny * suf_r[:, j])
                or np.any(below_x < tiny * pre_x[:, j])):
            # the drawn items held nearly all of a sum: its difference would be rounding
            # (QA: a pool of zero scores but for the drawn ones); the pass over the pool
            rem = np.ones(N, dtype=bool)
            rem[r[:m]] = False
            q = _proposal(s, rem, f)[rem]
            out[:, m] = (X[:, rem] / q).sum(axis=1) - H[:, rem].sum(axis=1) ** 2
            continue
        P = above_s / tot_s + n_low * f / n
        out[:, m] = P * (tot_s * above_r + (n / f) * below_x) - rest_h ** 2
    return np.maximum(out, 0.0)


def explored_scores(scores: np.ndarray, reachable: np.ndarray, rate: float, *,
                    proposal_floor: float = 0.1, tol: float = 1e-12) -> np.ndarray:
    """Scores raised so that the floored proposal draws every ``reachable`` item at
    ``rate`` times the uniform rate or more at the first draw.

    The floored proposal of scores ``s`` over ``n`` items draws item i with
    ``q_i = max(s_i, t) / sum_j max(s_j, t)``, ``t = floor * mean(s)``; its rate against
    the uniform's is ``n q_i = max(s_i, t) / mean(max(s, t))``. Raising the reachable
    items' scores to a common level ``u`` (``s'_i = max(s_i, u)`` for reachable i) with
    ``u = rate * mean(max(s', t(s')))`` puts each of them at ``rate`` or more; ``u`` is the
    fixed point of a map that is nondecreasing in ``u`` with slope at most ``rate < 1``,
    found by iterating from ``u = 0`` (it increases to the fixed point). Items that are
    not reachable (the design knows they carry no loss, e.g. the items where two targets
    predict the same class) keep their scores, and the floor's share.

    Why: a never-drawn item whose exposure stayed below the session's blind ratio times
    the uniform's widens the intervals by what it could hide
    (:mod:`activetest.stats.blindspot`); a design whose scores leave many items near the
    floor pays that in width. Sampling without replacement moves the rates as items are
    drawn, so ``rate`` should sit above the blind ratio by a margin.

    Args:
        scores: ``(N,)`` non-negative acquisition scores.
        reachable: ``(N,)`` bool, the items to keep above ``rate``.
        rate: in ``(proposal_floor, 1)``; at or below the floor nothing is raised (the
            floor alone gives every item that rate).
        proposal_floor: the proposal's floor (:func:`proposal`).
    """
    s = as_scores(scores).copy()
    reach = np.asarray(reachable, dtype=bool)
    if reach.shape != s.shape:
        raise ValueError(f"reachable must have shape {s.shape}, got {reach.shape}")
    if not 0.0 < rate < 1.0:
        raise ValueError(f"rate must be in (0, 1), got {rate!r}")
    floor = floor_arg(proposal_floor, None, "explored_scores")
    if rate <= floor or not reach.any() or s.sum() <= 0.0:
        return s
    u = 0.0
    for _ in range(10_000):
        r = np.where(reach, np.maximum(s, u), s)
        t = floor * r.mean()
        new = rate * np.maximum(r, t).mean()
        if new - u <= tol * max(new, 1e-300):
            u = new
            break
        u = new
    return np.where(reach, np.maximum(s, u), s)


def floored_weight_bound(scores: np.ndarray, item_bounds: np.ndarray, acquired: np.ndarray,
                         proposal_floor: float) -> np.ndarray:
    """``(K,)`` before each draw of ``acquired``, the largest weighted bound
    ``B_i / q_m(i)`` over the items ``i`` the floored proposal of ``scores`` could draw
    next (:func:`proposal` over the remaining items): what one draw can add to
    ``N theta_m`` at most, known before the draw. Scaled outward by ``1 + 1e-9`` for
    rounding; 0 where no remaining item has a positive bound.

    With ``S_m`` the remaining items, ``t_m = floor * sum_{S_m} s / |S_m|`` and
    ``Z_m = sum_{S_m} max(s_i, t_m)``, the proposal is ``q_m(i) = max(s_i, t_m) / Z_m``
    (uniform where every remaining score is 0), so the bound is ``Z_m * max(max_{S_m,
    s_i < t_m} B_i / t_m, max_{S_m, s_i >= t_m} B_i / s_i)``: with the items sorted by
    score, segment trees over the remaining ones (count, score sum, largest ``B``,
    largest ``B / s``) give each draw's in ``O(log N)`` (a compiled kernel), so the cost
    does not grow with the pool as the blind spot's replay does.

    Used by the exact anytime CS of a paired difference (:func:`activetest.stats.betting.
    paired_difference_exact_cs`, ``weight_bound=``): where the two targets agree on most
    items (``B_i = 0`` there) and the proposal puts its mass where they differ, this bound
    is far below the floor's ``max B / q_min``.

    Args:
        scores: ``(N,)`` the acquisition scores the draws were made with.
        item_bounds: ``(N,)`` non-negative ``B_i``.
        acquired: ``(K,)`` the drawn items, in order.
        proposal_floor: the proposal's floor.
    """
    s = as_scores(scores)
    B = np.asarray(item_bounds, dtype=np.float64)
    if B.shape != s.shape or np.any(B < 0) or not np.all(np.isfinite(B)):
        raise ValueError(f"item_bounds must be finite, non-negative, of shape {s.shape}")
    acq = np.asarray(acquired, dtype=np.int64)
    floor = floor_arg(proposal_floor, None, "floored_weight_bound")
    out = np.zeros(acq.shape[0])
    if acq.size == 0 or not np.any(B > 0):
        return out
    order = np.argsort(s, kind="stable")
    pos = np.empty(s.shape[0], dtype=np.int64)
    pos[order] = np.arange(s.shape[0])
    ss, bs = s[order], B[order]
    ratio = np.where((bs > 0) & (ss > 0), bs / np.where(ss > 0, ss, 1.0), 0.0)
    _weight_bound_kernel(ss, bs, ratio, pos, acq, float(floor), out)
    return out * (1.0 + 1e-9)


@njit(cache=True)
def _sum_max(sums, maxes, lo, hi):  # pragma: no cover - compiled
    """Over the leaves ``[lo, hi)`` (tree positions) of two segment trees of the same
    shape: the sum of ``sums`` and the largest of ``maxes`` (0 when empty)."""
    s = 0.0
    mx = 0.0
    while lo < hi:
        if lo & 1:
            s += sums[lo]
            mx = max(mx, maxes[lo])
            lo += 1
        if hi & 1:
            hi -= 1
            s += sums[hi]
            mx = max(mx, maxes[hi])
        lo >>= 1
        hi >>= 1
    return s, mx


@njit(cache=True)
def _weight_bound_kernel(ss, bs, ratio, pos, acq, floor, out):  # pragma: no cover - compiled
    """:func:`floored_weight_bound` over scores sorted ascending (``ss``, with their
    bounds ``bs`` and ``bs / ss``), ``pos`` each item's sorted position."""
    n = ss.shape[0]
    size = 1
    while size < n:
        size *= 2
    cnt = np.zeros(2 * size)
    sm = np.zeros(2 * size)
    mb = np.zeros(2 * size)
    mr = np.zeros(2 * size)
    for k in range(n):
        cnt[size + k] = 1.0
        sm[size + k] = ss[k]
        mb[size + k] = bs[k]
        mr[size + k] = ratio[k]
    for v in range(size - 1, 0, -1):
        cnt[v] = cnt[2 * v] + cnt[2 * v + 1]
        sm[v] = sm[2 * v] + sm[2 * v + 1]
        mb[v] = max(mb[2 * v], mb[2 * v + 1])
        mr[v] = max(mr[2 * v], mr[2 * v + 1])
    for m in range(acq.shape[0]):
        n_rem = n - m
        total = sm[1]
        if total <= 0.0:  # every remaining score 0: uniform
            out[m] = n_rem * mb[1]
        else:
            t = floor * total / n_rem
            j = np.searchsorted(ss, t)  # sorted positions < j have s < t
            # [0, j): remaining count and largest B; [j, n): score sum and largest B / s
            c_lo, b_lo = _sum_max(cnt, mb, size, size + j)
            s_hi, r_hi = _sum_max(sm, mr, size + j, 2 * size)
            out[m] = (t * c_lo + s_hi) * max(b_lo / t, r_hi)
        v = size + pos[acq[m]]  # the drawn item leaves the remaining set
        cnt[v] = 0.0
        sm[v] = 0.0
        mb[v] = 0.0
        mr[v] = 0.0
        v >>= 1
        while v >= 1:
            cnt[v] = cnt[2 * v] + cnt[2 * v + 1]
            sm[v] = sm[2 * v] + sm[2 * v + 1]
            mb[v] = max(mb[2 * v], mb[2 * v + 1])
            mr[v] = max(mr[2 * v], mr[2 * v + 1])
            v >>= 1


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
    rng = rng_of(random_state)
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
