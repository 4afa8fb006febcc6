"""Compiled kernel for many-run sampling (numba), with per-run O(M log N) cost.

Each run walks a segment tree over the sorted scores holding, per node, the raw
score mass and the count of remaining items below it. Removing an item zeroes
its leaf and recomputes its ancestors *from their children* (never by
subtraction), so every stored mass is an exact-as-floats sum of the remaining
scores: removing a huge score causes no cancellation. After a run the removed
leaves are restored the same way, so the tree is built once for all runs.

The draw convention (one uniform per step, CDF inverted in ascending score
order) matches :func:`activetest.stats.proposal.reference_sample`.
"""

from __future__ import annotations

import numpy as np

try:  # numba is a declared dependency; the numpy path remains if it is unusable
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only without numba
    HAVE_NUMBA = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        def wrap(f):
            return f
        return wrap if not args or not callable(args[0]) else args[0]


@njit(cache=True)
def _update(sm, ct, leaf, value, count):  # pragma: no cover - compiled
    sm[leaf] = value
    ct[leaf] = count
    j = leaf >> 1
    while j >= 1:
        sm[j] = sm[2 * j] + sm[2 * j + 1]
        ct[j] = ct[2 * j] + ct[2 * j + 1]
        j >>= 1


@njit(cache=True)
def _prefix(sm, ct, P, k):  # pragma: no cover - compiled
    """Remaining (count, raw mass) over sorted positions [0, k)."""
    lo = P
    hi = P + k
    s = 0.0
    c = 0
    while lo < hi:
        if lo & 1:
            s += sm[lo]
            c += ct[lo]
            lo += 1
        if hi & 1:
            hi -= 1
            s += sm[hi]
            c += ct[hi]
        lo >>= 1
        hi >>= 1
    return c, s


@njit(cache=True)
def _kth_remaining(ct, P, j):  # pragma: no cover - compiled
    node = 1
    while node < P:
        left = 2 * node
        if ct[left] > j:
            node = left
        else:
            j -= ct[left]
            node = left + 1
    return node - P


@njit(cache=True)
def _by_mass(sm, P, target):  # pragma: no cover - compiled
    node = 1
    while node < P:
        left = 2 * node
        if target < sm[left] or sm[left + 1] <= 0.0:
            node = left
        else:
            target -= sm[left]
            node = left + 1
    return node - P


@njit(cache=True)
def sample_sorted(s, U, floor, pos_out, q_out):  # pragma: no cover - compiled
    """Fill ``pos_out``/``q_out`` (R, M) with sorted positions and q_m for each run."""
    n = s.shape[0]
    R, M = U.shape
    P = 1
    while n > P:
        P *= 2
    sm = np.zeros(2 * P)
    ct = np.zeros(2 * P, dtype=np.int64)
    for i in range(n):
        sm[P + i] = s[i]
        ct[P + i] = 1
    for j in range(P - 1, 0, -1):
        sm[j] = sm[2 * j] + sm[2 * j + 1]
        ct[j] = ct[2 * j] + ct[2 * j + 1]
    for r in range(R):
        for m in range(M):
            n_rem = n - m
            rem_sum = sm[1]
            t = floor * rem_sum / n_rem if rem_sum > 0.0 else 1.0
            kt = np.searchsorted(s, t)  # positions < kt weigh t
            cb, sb = _prefix(sm, ct, P, kt)
            floor_mass = t * cb
            Z = floor_mass + (rem_sum - sb)
            x = U[r, m] * Z
            if x < floor_mass:
                j = int(x / t)
                if j >= cb:
                    j = cb - 1
                p = _kth_remaining(ct, P, j)
            else:
                p = _by_mass(sm, P, x - floor_mass + sb)
                if p < kt or p >= n or ct[P + p] == 0:  # floating-point edge
                    p = _kth_remaining(ct, P, min(cb, n_rem - 1))
            pos_out[r, m] = p
            q_out[r, m] = max(s[p], t) / Z
            _update(sm, ct, P + p, 0.0, 0)
        for m in range(M):
            p = pos_out[r, m]
            _update(sm, ct, P + p, s[p], 1)
