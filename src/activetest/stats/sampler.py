"""Fast sequential sampling without replacement from the floored proposal.

The distribution at every step is exactly :func:`activetest.stats.proposal.proposal`:
``q_i = max(s_i, t) / Z`` over the remaining items, ``t = floor * S_rem / R_m`` (the
proposal floor: the paper's alpha, ``proposal_floor=`` in the API).
Recomputing it costs O(N) per step; here a step costs O(m log N) instead:

* The pool is sorted once by score (ascending, stable) and its cumulative sums
  ``C`` kept. A run is the sorted list of the positions it has removed.
* Items below the threshold (positions ``< kt``) all weigh ``t``; the j-th
  remaining one is found from the removed positions by "k-th missing element"
  counting. Items above weigh their own score; inversion walks the gaps between
  removed positions, whose masses ``C[end] - C[start]`` are differences of
  cumulative sums *within* a gap, so removing huge scores causes no cancellation.
* All runs advance together: every operation is a numpy op over a
  ``(runs, m)`` array, processed in chunks of runs that fit in cache.

Draws use one uniform per step, inverting the CDF in ascending score order, the
same convention as :func:`activetest.stats.proposal.reference_sample`, so both
give identical draws from one seed. A run whose arithmetic hits a floating-point
edge (a drawn position that is not remaining) is redone for that step with the
exact O(N) formula.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from activetest.stats import kernels
from activetest.stats.proposal import proposal
from activetest.stats.validate import (
    as_scores,
    check_budget,
    check_seed,
    floor_arg,
    is_whole,
    rng_of,
)

__all__ = ["ActiveSampler", "SamplerState", "sample"]


class _SortedPool:
    """The pool's scores in ascending order, with cumulative sums."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = scores
        self.n = scores.shape[0]
        self.order = np.argsort(scores, kind="stable")
        self.s = scores[self.order]
        self.C = np.concatenate(([0.0], np.cumsum(self.s)))

    def step(self, rs: np.ndarray, u: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """Draw one position per run.

        Args:
            rs: ``(R, k)`` sorted removed positions (same k for every run).
            u: ``(R,)`` uniforms in [0, 1).

        Returns:
            ``(positions, q)`` each ``(R,)``.
        """
        n, C, s = self.n, self.C, self.s
        R, k = rs.shape
        rows = np.arange(R)
        n_rem = n - k
        # Gap g spans sorted positions [starts[g], ends[g]); gap masses are exact-ish.
        starts = np.empty((R, k + 1), dtype=np.int64)
        starts[:, 0] = 0
        starts[:, 1:] = rs + 1
        ends = np.empty((R, k + 1), dtype=np.int64)
        ends[:, :k] = rs
        ends[:, k] = n
        cg = np.cumsum(C[ends] - C[starts], axis=1)  # remaining mass up to end of gap g
        rem_sum = cg[:, k]
        t = floor * rem_sum / n_rem
        t[rem_sum <= 0.0] = 1.0  # all remaining scores are 0: uniform
        kt = np.searchsorted(s, t, side="left")  # positions < kt weigh t
        nb = (rs < kt[:, None]).sum(axis=1)  # removed below kt; kt lies in gap nb
        before_nb = np.where(nb > 0, cg[rows, np.maximum(nb - 1, 0)], 0.0)
        mass_below = before_nb + (C[kt] - C[starts[rows, nb]])  # raw remaining mass < kt
        n_below = kt - nb
        floor_mass = t * n_below
        Z = floor_mass + (rem_sum - mass_below)
        x = u * Z
        below = x < floor_mass
        pos = np.empty(R, dtype=np.int64)
        if below.any():
            b = np.flatnonzero(below)
            j = np.minimum((x[b] / t[b]).astype(np.int64), n_below[b] - 1)
            # j-th remaining position: j + #{removed l : rs_l - l <= j}
            shifted = rs[b] - np.arange(k)
            pos[b] = j + (shifted <= j[:, None]).sum(axis=1)
        if not below.all():
            a = np.flatnonzero(~below)
            target = x[a] - floor_mass[a] + mass_below[a]  # raw remaining mass before the draw
            g = (cg[a, :k] <= target[:, None]).sum(axis=1)  # the gap holding the draw
            prev = np.where(g > 0, cg[a, np.maximum(g - 1, 0)], 0.0)
            st = starts[a, g]
            p = np.searchsorted(C, C[st] + (target - prev), side="right") - 1
            lo = np.maximum(st, kt[a])
            pos[a] = np.clip(p, lo, ends[a, g] - 1)
        # The drawn item's weight is measured like Z (a difference of cumulative sums),
        # not as s[pos]: the two differ in the last bit, and when one item remains
        # Z == C[p + 1] - C[p] exactly, so q is exactly 1 instead of 1 + 2e-16.
        pc = np.clip(pos, 0, n - 1)
        q = np.maximum(C[pc + 1] - C[pc], t) / Z
        # Floating-point edges: a position outside the pool or already removed.
        bad = (pos < 0) | (pos >= n)
        if k:
            ins = (rs < np.clip(pos, 0, n - 1)[:, None]).sum(axis=1)
            hit = rs[rows, np.minimum(ins, k - 1)] == pos
            bad |= hit & (ins < k)
        for r in np.flatnonzero(bad):
            pos[r], q[r] = self._exact_step(rs[r], float(u[r]), floor)
        return pos, q

    def _exact_step(self, removed: np.ndarray, u: float, floor: float) -> tuple[int, float]:
        remaining = np.ones(self.n, dtype=bool)
        remaining[removed] = False
        qs = proposal(self.s, remaining, floor)
        cdf = np.cumsum(qs)
        k = min(int(np.searchsorted(cdf, u * cdf[-1], side="right")), self.n - 1)
        while not remaining[k]:
            k -= 1
        return k, float(qs[k])


def _insert_sorted(rs: np.ndarray, pos: np.ndarray, out: np.ndarray) -> None:
    """Write ``rs`` with ``pos`` inserted (row-wise, keeping order) into ``out``."""
    k = rs.shape[1]
    ins = (rs < pos[:, None]).sum(axis=1)
    idx = np.arange(k + 1)
    src = np.clip(np.where(idx < ins[:, None], idx, idx - 1), 0, max(k - 1, 0))
    if k:
        out[:, : k + 1] = np.where(idx == ins[:, None], pos[:, None],
                                   np.take_along_axis(rs, src, axis=1))
    else:
        out[:, 0] = pos


def sample(scores: np.ndarray, budget: int, *, n_runs: int = 1,
           proposal_floor: float | None = None,
           random_state: int | np.random.Generator | None = None, chunk_size: int = 256,
           progress: bool = False, alpha: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n_runs`` independent acquisition sequences of length ``budget``.

    Each run samples sequentially without replacement from the floored proposal
    (see :mod:`activetest.stats.proposal`) over the same fixed scores.

    Args:
        scores: ``(N,)`` non-negative acquisition scores.
        budget: M, the number of items each run acquires (``1 <= M <= N``).
        n_runs: R, the number of independent runs.
        proposal_floor: the share of the uniform in ``(0, 1]`` (None: 0.1, the paper's
            alpha).
        random_state: seed or Generator. The uniforms are drawn up front as an
            ``(R, M)`` array, so results do not depend on ``chunk_size``; run r
            uses row r. One run with seed s equals :class:`ActiveSampler` with s.
        chunk_size: runs processed together (cache-sized; speed only).
        progress: show a progress bar over chunks.
        alpha: deprecated name of ``proposal_floor``.

    Returns:
        ``(indices, q)``: ``(R, M)`` int64 item indices in acquisition order and
        ``(R, M)`` float64 proposal probabilities q_m of the acquired items.
    """
    s = as_scores(scores)
    budget = check_budget(budget, s.shape[0])
    floor = floor_arg(proposal_floor, alpha, "sample")
    if not is_whole(n_runs) or n_runs < 1:  # type: ignore[operator]
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    rng = rng_of(random_state)
    U = rng.random((int(n_runs), budget))
    pool = _SortedPool(s)
    if kernels.HAVE_NUMBA and not progress:
        positions = np.empty((int(n_runs), budget), dtype=np.int64)
        qs = np.empty((int(n_runs), budget))
        kernels.sample_sorted(pool.s, U, floor, positions, qs)
        return pool.order[positions], qs
    positions = np.empty((int(n_runs), budget), dtype=np.int64)
    qs = np.empty((int(n_runs), budget))
    chunks = range(0, int(n_runs), max(1, int(chunk_size)))
    it: Any = chunks
    if progress:
        from rich.progress import track
        it = track(chunks, description="sampling runs")
    for c0 in it:
        c1 = min(c0 + int(chunk_size), int(n_runs))
        bufs = (np.empty((c1 - c0, budget), dtype=np.int64),
                np.empty((c1 - c0, budget), dtype=np.int64))
        for m in range(budget):
            rs = bufs[m % 2][:, :m]
            pos, q = pool.step(rs, U[c0:c1, m], floor)
            positions[c0:c1, m] = pos
            qs[c0:c1, m] = q
            _insert_sorted(rs, pos, bufs[(m + 1) % 2])
    return pool.order[positions], qs


@dataclass
class SamplerState:
    """Everything needed to resume a single-run sampler (JSON-serialisable).

    Attributes:
        proposal_floor: the share of the uniform in the proposal (the paper's alpha).
        seed: the seed the run started from (provenance).
        rng_state: ``numpy.random.PCG64`` state after the last draw.
        acquired: item indices in acquisition order.
        q: proposal probability of each acquired item when drawn.
    """

    proposal_floor: float
    seed: int | None
    rng_state: dict[str, Any]
    acquired: list[int] = field(default_factory=list)
    q: list[float] = field(default_factory=list)

    @property
    def alpha(self) -> float:
        """Deprecated name of :attr:`proposal_floor`."""
        warnings.warn("SamplerState.alpha is deprecated: it is the proposal floor, now "
                      "proposal_floor", DeprecationWarning, stacklevel=2)
        return self.proposal_floor


class ActiveSampler:
    """A single run that hands out the next item(s) on demand and can be resumed.

    Each draw consumes exactly one uniform from a PCG64 generator, so a sampler
    restored from its :class:`SamplerState` continues with the same future draws
    as one that was never stopped, and ``ActiveSampler(scores, seed=s)`` draws what
    ``sample(scores, M, n_runs=1, random_state=s)`` draws.

    Example::

        sampler = ActiveSampler(scores, proposal_floor=0.1, seed=0)
        idx, q = sampler.draw(5)          # five sequential draws
        state = sampler.state()           # persist
        sampler = ActiveSampler.from_state(scores, state)
    """

    def __init__(self, scores: np.ndarray, *, proposal_floor: float | None = None,
                 seed: int | None = None, alpha: float | None = None) -> None:
        """``proposal_floor``: the share of the uniform in ``(0, 1]`` (None: 0.1, the
        paper's alpha); ``alpha=``: its deprecated name."""
        self.scores = as_scores(scores)
        self.proposal_floor = floor_arg(proposal_floor, alpha, "ActiveSampler")
        self.seed = check_seed(seed)
        self._rng = np.random.Generator(np.random.PCG64(self.seed))
        self._pool = _SortedPool(self.scores)
        self._rank = np.empty(self._pool.n, dtype=np.int64)
        self._rank[self._pool.order] = np.arange(self._pool.n)
        self._rs = np.empty((1, 0), dtype=np.int64)
        self.acquired: list[int] = []
        self.q: list[float] = []

    @property
    def alpha(self) -> float:
        """Deprecated name of :attr:`proposal_floor`."""
        warnings.warn("ActiveSampler.alpha is deprecated: it is the proposal floor, now "
                      "proposal_floor", DeprecationWarning, stacklevel=2)
        return self.proposal_floor

    @property
    def n_remaining(self) -> int:
        """Items not yet acquired."""
        return self._pool.n - len(self.acquired)

    def draw(self, k: int = 1, progress: Callable[[int], object] | None = None,
             ) -> tuple[np.ndarray, np.ndarray]:
        """Draw the next ``k`` items sequentially; returns ``(indices, q)``.
        ``progress(1)`` is called after each draw (a progress bar's advance)."""
        if not is_whole(k) or k < 0:  # type: ignore[operator]
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        if k > self.n_remaining:
            raise ValueError(f"cannot draw {k} items: only {self.n_remaining} remain")
        out_i, out_q = [], []
        for _ in range(int(k)):
            u = self._rng.random(1)
            pos, q = self._pool.step(self._rs, u, self.proposal_floor)
            nxt = np.empty((1, self._rs.shape[1] + 1), dtype=np.int64)
            _insert_sorted(self._rs, pos, nxt)
            self._rs = nxt
            i = int(self._pool.order[pos[0]])
            self.acquired.append(i)
            self.q.append(float(q[0]))
            out_i.append(i)
            out_q.append(float(q[0]))
            if progress is not None:
                progress(1)
        return np.array(out_i, dtype=np.int64), np.array(out_q)

    def state(self) -> SamplerState:
        """A snapshot to persist (copies; later draws do not change it)."""
        return SamplerState(proposal_floor=self.proposal_floor, seed=self.seed,
                            rng_state=_jsonable(self._rng.bit_generator.state),
                            acquired=list(self.acquired), q=list(self.q))

    @staticmethod
    def fresh_state(scores: np.ndarray, *, proposal_floor: float | None = None,
                    seed: int | None = None) -> SamplerState:
        """``ActiveSampler(scores, ...).state()`` without building the sampler's sorted
        pool (a new session stores it; on a large pool the pool is GBs)."""
        as_scores(scores)
        floor = floor_arg(proposal_floor, None, "ActiveSampler")
        seed = check_seed(seed)
        rng = np.random.Generator(np.random.PCG64(seed))
        return SamplerState(proposal_floor=floor, seed=seed,
                            rng_state=_jsonable(rng.bit_generator.state), acquired=[], q=[])

    @classmethod
    def from_state(cls, scores: np.ndarray, state: SamplerState) -> ActiveSampler:
        """Rebuild a sampler exactly where ``state`` left it."""
        if not isinstance(state, SamplerState):  # (an AttributeError before)
            raise ValueError(f"state must be a SamplerState (ActiveSampler.state()), got "
                             f"{type(state).__name__}")
        self = cls(scores, proposal_floor=state.proposal_floor, seed=state.seed)
        acq = [int(i) for i in state.acquired]
        if len(set(acq)) != len(acq):
            raise ValueError("state.acquired holds an item twice")
        if any(not 0 <= i < self._pool.n for i in acq):
            raise ValueError(f"state.acquired has an index outside 0..{self._pool.n - 1}")
        if len(state.q) != len(acq):
            raise ValueError("state.q and state.acquired must have the same length")
        self._rng.bit_generator.state = state.rng_state
        self.acquired = acq
        self.q = [float(x) for x in state.q]
        self._rs = np.sort(self._rank[np.array(acq, dtype=np.int64)])[None, :]
        return self


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (np.integer,)):
        return int(obj)
    return obj


def as_runs(indices: Sequence[int] | np.ndarray) -> np.ndarray:
    """Coerce acquisition indices to a 2-D ``(R, M)`` array (a single run -> R = 1)."""
    a = np.asarray(indices)
    return a[None, :] if a.ndim == 1 else a
