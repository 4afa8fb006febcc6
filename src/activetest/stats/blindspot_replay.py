"""The proposals a run drew from, replayed for its blind spot (:mod:`activetest.stats.blindspot`).

The blind spot of a run at every budget needs each draw's proposal over the pool:
a fixed acquisition's floored proposal follows from its scores and the draws
(:func:`floored_proposals`, :func:`fixed_blind_spot_curves`); an adaptive design's is
replayed from its stored history, labels and losses (:func:`design_proposals`,
:func:`design_blind_spot_curves`: one compiled pass over the pool per draw for every
curve at once). Both return their running state (:class:`FixedCurveState`,
:class:`CurveState`) so that a session continues from a checkpoint with the same
numbers, to the last bit, as a replay from the first draw; a live run's own draws
(:class:`RunDraws`) can stand in for their replay.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.stats.blindspot import (
    BLIND_RATIO,
    BlindSpotCurve,
    RunningCurve,
    unexplored_items,
    uniform_exposure,
)
from activetest.stats.kernels import njit

#: :data:`activetest.stats._adaptive_kernels.KIND_BOTH` (the two-metric design), whose
#: run records a second model variance that a replay does not compute
_KIND_BOTH = 4
#: the compiled pass's ``least`` where no least proposals are kept (never written)
_NO_LEAST = np.zeros(1)

__all__ = [
    "CurveSpec",
    "CurveState",
    "FixedCurveState",
    "RunDraws",
    "design_blind_spot_curve",
    "design_blind_spot_curves",
    "design_mixtures",
    "design_proposals",
    "design_weight_bounds",
    "fixed_blind_spot_curves",
    "floored_proposals",
]


def floored_proposals(scores: np.ndarray, acquired: Sequence[int], floor: float
                      ) -> Iterator[tuple[np.ndarray, None]]:
    """The paper's floored proposal (:func:`activetest.stats.proposal.proposal`) over the
    pool before each draw of ``acquired``, as ``(q, None)`` (no control)."""
    from activetest.stats.proposal import proposal

    rem = np.ones(np.asarray(scores).shape[0], dtype=bool)
    for i in acquired:
        yield proposal(scores, rem, floor), None
        rem[int(i)] = False


def _history(design: Any, acq: list[int], labels: Sequence[int] | None,
             losses: Sequence[float] | None, n_known: Sequence[int] | None
             ) -> tuple[list[int], list[float], list[int]]:
    """The history's labels, losses and the labels known at each draw."""
    M = len(acq)
    ys = [] if labels is None else [int(y) for y in labels]
    if losses is None:
        Ls = (design.losses_of(np.array(acq[:len(ys)], dtype=np.int64),
                               np.array(ys, dtype=np.int64)).tolist() if ys else [])
    else:
        Ls = [float(x) for x in losses]
    known = list(range(M)) if n_known is None else [int(x) for x in n_known]
    return ys, Ls, known


def _replay_state(design: Any, acq: list[int], labels: Sequence[int] | None,
                  losses: Sequence[float] | None, n_known: Sequence[int] | None
                  ) -> tuple[dict[str, np.ndarray], list[int]]:
    """A fresh design state holding the history's labels and losses (the draw's model
    variance left out: not needed), and the labels known at each draw."""
    ys, Ls, known = _history(design, acq, labels, losses, n_known)
    st = design._new_state(max(len(acq), 1))
    st["hV"] = np.zeros(0)  # the draws' model variance is not needed here: not computed
    if ys:
        st["hy"][: len(ys)] = ys
    st["hL"][: len(Ls)] = Ls
    return st, known


def design_proposals(design: Any, acquired: Sequence[int], *,
                     labels: Sequence[int] | None = None,
                     losses: Sequence[float] | None = None,
                     n_known: Sequence[int] | None = None,
                     second: bool = False) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """An adaptive design's (:class:`activetest.stats.adaptive.AdaptiveDesign`) proposal
    and control over the pool before each draw, ``(q, g)``, replayed from its history:
    the items drawn in order, the labels (and losses) in draw order, the labels known
    at each draw (default sequential). They are exactly what the run drew from (the
    tests check q at the drawn items). ``second``: the two-metric design's second
    control."""
    acq = [int(i) for i in acquired]
    st, known = _replay_state(design, acq, labels, losses, n_known)
    for m, i in enumerate(acq):
        plan = design._prepare(st, m, known[m])
        g = plan.control2 if second else plan.control
        yield plan.q, g
        design._step(st, m, known[m], 0.0, i)


@dataclass(frozen=True)
class FixedCurveState:
    """The running state of :func:`fixed_blind_spot_curves` after its first ``k``
    draws (a fixed acquisition's proposal needs nothing more than the draws).

    Attributes:
        k: draws done.
        exposure: ``(N,)`` ``Q_i`` after the k draws.
        out, delta, loss_cap: per curve, as in :class:`CurveState`.
    """

    k: int
    exposure: np.ndarray
    out: tuple[np.ndarray, ...]
    delta: tuple[float, ...]
    loss_cap: tuple[float, ...]


def fixed_blind_spot_curves(scores: np.ndarray, acquired: Sequence[int], floor: float,
                            specs: Sequence[CurveSpec], *, N: int, level: float = 0.95,
                            ratio: float = BLIND_RATIO, start: int = 1,
                            resume: FixedCurveState | None = None
                            ) -> tuple[list[BlindSpotCurve], FixedCurveState]:
    """``blind_spot_curve(floored_proposals(scores, acquired, floor), acquired, ...)`` of
    each spec (LURE's, without a control: ``with_control`` and ``second`` are not read),
    the same numbers to the last bit, each draw's proposal, exposure and unexplored
    items computed once for every curve; and the running state at the end. ``resume``:
    the state after the first ``resume.k`` draws of the same run (the caller checks),
    continued from there (its exposure is changed in place)."""
    from activetest.stats.proposal import proposal

    acq = [int(i) for i in acquired]
    K = len(acq)
    curves = [RunningCurve(acq, sp.loss_high, N=N, level=level, fixed_control=sp.fixed_control,
                     ratio=ratio, start=start, at=None, shared=True) for sp in specs]
    first = 0 if resume is None else resume.k
    if resume is not None and (resume.k > K or len(resume.out) != len(specs)):
        raise ValueError("the resumed state is not one of this run")
    Q = np.zeros(N) if resume is None else resume.exposure
    undrawn = np.ones(N, dtype=bool)
    undrawn[np.asarray(acq[:first], dtype=np.int64)] = False
    for j, cv in enumerate(curves):
        cv.Q, cv.undrawn = Q, undrawn
        if resume is not None:
            cv.out[:, :first] = resume.out[j][:, :first]
            cv.delta, cv.cap = resume.delta[j], resume.loss_cap[j]
    for m in range(first, K):
        Q += proposal(scores, undrawn, floor)  # the remaining items: the undrawn ones
        undrawn[acq[m]] = False
        k = m + 1
        at = unexplored_items(Q, undrawn, N=N, K=k, ratio=ratio) if k >= start else None
        for cv in curves:
            cv.after(m, False, at)
    state = FixedCurveState(K, Q, tuple(cv.out for cv in curves),
                            tuple(cv.delta for cv in curves), tuple(cv.cap for cv in curves))
    return [cv.result() for cv in curves], state


def design_blind_spot_curve(design: Any, acquired: Sequence[int],
                            loss_high: np.ndarray | float, *, N: int,
                            labels: Sequence[int] | None = None,
                            losses: Sequence[float] | None = None,
                            n_known: Sequence[int] | None = None, second: bool = False,
                            with_control: bool = True, level: float = 0.95,
                            fixed_control: np.ndarray | None = None,
                            ratio: float = BLIND_RATIO, start: int = 1) -> BlindSpotCurve:
    """``blind_spot_curve(design_proposals(design, acquired, ...), acquired, ...)``, the
    same numbers to the last bit, without making each draw's proposal and control
    arrays: each draw's exposure (``q_i = a s_i + b`` on the remaining items) and
    control are added in one compiled pass over the pool. ``with_control=False``: the
    proposals without the design's control (LURE; CV-LURE with ``fixed_control``)."""
    spec = CurveSpec(loss_high, second=second, with_control=with_control,
                     fixed_control=fixed_control)
    curves, _ = design_blind_spot_curves(design, acquired, [spec], N=N, labels=labels,
                                         losses=losses, n_known=n_known, level=level,
                                         ratio=ratio, start=start)
    return curves[0]


@dataclass(frozen=True)
class CurveSpec:
    """One curve of :func:`design_blind_spot_curves`: the loss bounds ``B_i`` and the
    control the estimate gives never-drawn items (the design's own, its second one, a
    fixed ``h``, or none); the arguments of :func:`design_blind_spot_curve`."""

    loss_high: np.ndarray | float
    second: bool = False
    with_control: bool = True
    fixed_control: np.ndarray | None = None


#: the design state's per-draw history arrays (length = the run's capacity) and their
#: fill value in a fresh state (:meth:`AdaptiveDesign._new_state`)
_HISTORY_FILL = {"hidx": 0, "hy": 0, "hL": 0.0, "hq": 0.0, "hg": 0.0, "hG": 0.0,
                 "hlam": 0.0, "absres": 0.0, "haux": math.nan}


@dataclass(frozen=True)
class CurveState:
    """The running state of :func:`design_blind_spot_curves` after its first ``k``
    draws: enough to continue it over later draws with the same numbers, to the last
    bit, as a run from the first draw.

    Attributes:
        k: draws done.
        design: the replayed design's state arrays (:meth:`AdaptiveDesign._new_state`;
            its per-draw history holds the first ``k`` draws).
        exposure: ``(N,)`` ``Q_i`` after the k draws (zero on drawn items).
        control_sums: ``(N,)`` the running sums ``wg`` of the design's first and second
            control (None: no curve reads it).
        out: per curve, ``(4, k)``: unexplored count, their bound, widen high, widen low
            at budgets 1..k.
        delta, loss_cap: per curve, as in :class:`BlindSpotCurve`.
        second_sums: ``(R, k)``, where the pass was given second moments (``second=``):
            each draw's ``sum_{S_m} second_i / q_m(i)``
            (:func:`activetest.stats.model_floor.design_second_sums`); None otherwise.
        least_q: ``(k,)`` each draw's least proposal over the items it could draw,
            ``min_{S_m} q_m(i)`` (``q_m(i) = a_m s_i + b_m``), known before the draw: the
            exact anytime CS's bound on one draw's weight
            (:func:`activetest.stats.betting.exact_cs`, ``q_min``). None: continued
            from a state from before they were kept.
    """

    k: int
    design: dict[str, np.ndarray]
    exposure: np.ndarray
    control_sums: tuple[np.ndarray | None, np.ndarray | None]
    out: tuple[np.ndarray, ...]
    delta: tuple[float, ...]
    loss_cap: tuple[float, ...]
    second_sums: np.ndarray | None = None
    least_q: np.ndarray | None = None


def _resumed_design(st0: dict[str, np.ndarray], M: int, labels: list[int],
                    losses: list[float]) -> dict[str, np.ndarray]:
    """``st0`` with its per-draw history grown to ``M`` draws (a fresh state's values
    after its own) and the history's labels and losses written (as
    :func:`_replay_state`); its other arrays are used as they are (and changed)."""
    st = {}
    for key, v in st0.items():
        if key in _HISTORY_FILL:
            cap = max(M, 1)
            new = np.full((*v.shape[:-1], cap), _HISTORY_FILL[key], dtype=v.dtype)
            n = min(cap, v.shape[-1])
            new[..., :n] = v[..., :n]
            st[key] = new
        else:
            st[key] = v
    st["hy"][: len(labels)] = labels
    st["hL"][: len(losses)] = losses
    return st


@dataclass(frozen=True)
class RunDraws:
    """The last draws of a live run of an adaptive design (``select`` advancing the
    blind spot's state over its own batch): what a replay of them would recompute.

    Attributes:
        first: the first of them (0-based): the run's draws before it are in the
            resumed state (or there are none).
        mixtures: per draw from ``first``, the ``(a, b, G)`` its design's ``_mixture``
            returned (:attr:`activetest.stats.adaptive.AdaptiveSampler.mixtures`).
        state: the run's design state after its last draw (``AdaptiveSampler._st``).
            A batch refits (if at all) before its first draw only, so its per-item
            score and controls are those every draw from ``first`` used.
    """

    first: int
    mixtures: Sequence[tuple[float, float, float]]
    state: dict[str, np.ndarray]


def _run_design(design: Any, run: dict[str, np.ndarray], M: int, labels: list[int],
                losses: list[float], rem: np.ndarray | None) -> dict[str, np.ndarray]:
    """The replayed design's state after ``M`` draws as a replay would hold it, from the
    run's (the same history: the same arrays), its remaining-items mask being ``rem``
    (the replay's before the run's draws; None: all) while the draws are added: the
    per-draw history cut to ``M`` draws (as :func:`_resumed_design` and
    :func:`_replay_state` size it), the labels and losses written as they write them,
    and what a replay does not compute left as a fresh state has it (each draw's model
    variance: not kept; the two-metric design's second one: NaN)."""
    st: dict[str, np.ndarray] = {}
    for key, v in run.items():
        if key in _HISTORY_FILL:
            cap = max(M, 1)
            new = np.full((*v.shape[:-1], cap), _HISTORY_FILL[key], dtype=v.dtype)
            new[..., :M] = v[..., :M]
            st[key] = new
        else:
            st[key] = v
    st["hV"] = np.zeros(0)
    st["hy"][:] = 0
    st["hL"][:] = 0.0
    st["hy"][: len(labels)] = labels
    st["hL"][: len(losses)] = losses
    if getattr(design, "kind", None) == _KIND_BOTH:  # written by the run's variance pass
        st["haux"][2] = math.nan
    if rem is None:
        rem = np.ones(run["rem"].shape[0], dtype=np.bool_)
    st["rem"] = rem
    return st


def design_blind_spot_curves(design: Any, acquired: Sequence[int], specs: Sequence[CurveSpec],
                             *, N: int, labels: Sequence[int] | None = None,
                             losses: Sequence[float] | None = None,
                             n_known: Sequence[int] | None = None, level: float = 0.95,
                             ratio: float = BLIND_RATIO, start: int = 1,
                             resume: CurveState | None = None,
                             run: RunDraws | None = None,
                             second: np.ndarray | None = None
                             ) -> tuple[list[BlindSpotCurve], CurveState]:
    """:func:`design_blind_spot_curve` of each spec, the design replayed once for all
    (each draw: one pass adding the exposure, the controls the curves read and finding
    the unexplored items; then each curve's knapsack), and the running state at the
    end. ``resume``: the state after the first ``resume.k`` draws of the same history
    (the same design, draws, labels, specs, level, ratio and start: the caller checks),
    continued from there (its arrays are used and changed); the numbers are those of a
    run from the first draw, to the last bit (the same float operations in the same
    order). ``run``: the draws from ``resume.k`` (0 without) to the last were made by a
    live run of this history (:class:`RunDraws`), whose mixtures and design state are
    taken instead of replaying the design (the same numbers: the replay repeats the
    run's float operations; its state arrays are the run's). ``second``: ``(R, N)``
    second moments whose sums under each draw's proposal the same pass computes
    (:attr:`CurveState.second_sums`, as
    :func:`activetest.stats.model_floor.design_second_sums` has them, to the last bit: a
    paired difference's variance floor, continued from the checkpoint with the curves;
    ``resume`` must then hold the sums of its draws). Each draw's least proposal over the
    items it could draw (:attr:`CurveState.least_q`) comes from the same pass too
    (None where ``resume`` holds none: a state from before they were kept)."""
    acq = [int(i) for i in acquired]
    K = len(acq)
    X = None if second is None else np.ascontiguousarray(second, dtype=np.float64)
    if X is not None and (X.ndim != 2 or X.shape[1] != N):
        raise ValueError(f"second must be an (R, {N}) array, got shape {X.shape}")
    sums_out = None if X is None else np.zeros((X.shape[0], K))
    least: np.ndarray | None = np.zeros(K)
    curves = [RunningCurve(acq, sp.loss_high, N=N, level=level, fixed_control=sp.fixed_control,
                     ratio=ratio, start=start, at=None, shared=True) for sp in specs]
    if run is not None and (run.first != (0 if resume is None else resume.k)
                            or len(run.mixtures) != K - run.first
                            or int(run.state["hidx"].shape[0]) < K):
        raise ValueError("the run's draws are not the ones left to compute")
    if resume is not None:
        if resume.k > K or len(resume.out) != len(specs) or (X is not None and (
                resume.second_sums is None
                or resume.second_sums.shape != (X.shape[0], resume.k))) or (
                resume.least_q is not None and resume.least_q.shape != (resume.k,)):
            raise ValueError("the resumed state is not one of this history")
        if sums_out is not None and resume.second_sums is not None:
            sums_out[:, :resume.k] = resume.second_sums
        if resume.least_q is None:  # a state from before they were kept: none at the end
            least = None
        else:
            least[:resume.k] = resume.least_q
        ys, Ls, known = _history(design, acq, labels, losses, n_known)
        st = (_resumed_design(resume.design, K, ys, Ls) if run is None
              else _run_design(design, run.state, K, ys, Ls, resume.design["rem"]))
    elif run is not None:
        ys, Ls, known = _history(design, acq, labels, losses, n_known)
        st = _run_design(design, run.state, K, ys, Ls, None)
    else:
        st, known = _replay_state(design, acq, labels, losses, n_known)
    two = st["aux"].shape[0] >= 2  # a one-metric design has no second control
    # a one-metric design's "second" curve has no control (as LURE)
    uses = [(sp.with_control and (two or not sp.second), sp.second and two) for sp in specs]
    need = (any(w and not s2 for w, s2 in uses), any(w and s2 for w, s2 in uses))
    first = 0
    if resume is not None:
        first = resume.k
        Q = resume.exposure  # used and changed in place (no second copy at large N)
        sums = list(resume.control_sums)
    else:
        Q = np.zeros(N)
        sums = [np.zeros(N) if need[0] else None, np.zeros(N) if need[1] else None]
    zero = np.zeros(0)
    wg0 = sums[0] if sums[0] is not None else zero
    wg1 = sums[1] if sums[1] is not None else zero
    for j, cv in enumerate(curves):
        cv.Q = Q
        w, s2 = uses[j]
        cv.wg = (wg1 if s2 else wg0) if w else zero
        cv.undrawn = np.zeros(0, dtype=bool)  # not read: each draw finds its items
        if resume is not None:
            cv.out[:, :first] = resume.out[j][:, :first]
            cv.delta, cv.cap = resume.delta[j], resume.loss_cap[j]
    found = np.empty(N, dtype=np.int32 if N < 2**31 else np.int64)  # 4 bytes an item
    rem = st["rem"]
    for m in range(first, K):
        i = acq[m]
        mix = design._mixture(st, m, known[m]) if run is None else run.mixtures[m - first]
        a, b = mix[0], mix[1]
        k = m + 1
        c = N / ((N - k) * (N - k + 1.0)) if k < N else 0.0
        # the unexplored items at budget k, found in the same pass (none before start)
        thr = ratio * uniform_exposure(N, k) if k >= start else -math.inf
        g1 = st["aux"][1] if two else zero
        if X is not None:  # before the draw, on the same remaining items
            _second_sums(float(a), float(b), st["s"], rem, X, sums_out, m)
        n = _expose_all(float(a), float(b), st["s"], st["g"], g1, rem, Q, wg0, wg1,
                        c, need[0] and k < N, need[1] and k < N, i, thr, found,
                        _NO_LEAST if least is None else least, -1 if least is None else m)
        for j, cv in enumerate(curves):
            cv.after(m, uses[j][0], found[:n])
        if run is None:
            design._finish(st, m, mix, i)
        else:
            rem[i] = False  # (the run's record of the draw is in its state already)
    state = CurveState(K, st, Q, (sums[0], sums[1]), tuple(cv.out for cv in curves),
                       tuple(cv.delta for cv in curves), tuple(cv.cap for cv in curves),
                       sums_out, least)
    return [cv.result() for cv in curves], state


@njit(cache=True)
def _second_sums(a, b, s, rem, X, out, m):  # pragma: no cover - compiled
    """``out[r, m] = sum_rem X[r] / q`` with ``q_i = a s_i + b`` (inf where a remaining
    item with a positive ``X`` has probability 0): the model floor's ``_model_var``
    with ``H = 0`` (:mod:`activetest.stats.model_floor`), its sums in the same order
    (``v - 0.0 * 0.0`` is ``v``)."""
    for r in range(X.shape[0]):
        sx = 0.0
        for i in range(s.shape[0]):
            if rem[i] and X[r, i] > 0.0:
                q = a * s[i] + b
                sx += X[r, i] / q if q > 0.0 else np.inf
        out[r, m] = sx if sx > 0.0 else 0.0


@njit(cache=True)
def _expose_all(a, b, s, g, g1, rem, Q, wg0, wg1, c, with_g0, with_g1, pick, thr,
                found, least, m):  # pragma: no cover
    """``Q_i += a s_i + b`` and (``with_g0``, ``with_g1``) ``wg0_i += c g_i``,
    ``wg1_i += c g1_i`` on the remaining items: what :func:`blind_spot_curve` adds of a
    design proposal (zero on the drawn items) and its controls (whose values on drawn
    items are never read); then the remaining items but ``pick`` (being drawn) with
    ``thr > Q_i`` are written to ``found`` in index order; returns their number.
    ``least[m]``: the least ``a s_i + b`` over the remaining items (``pick`` included;
    not written where ``m < 0``)."""
    n = 0
    lo = np.inf
    for i in range(s.shape[0]):
        if rem[i]:
            qi = a * s[i] + b
            Q[i] += qi
            if qi < lo:
                lo = qi
            if with_g0:
                wg0[i] += c * g[i]
            if with_g1:
                wg1[i] += c * g1[i]
            if i != pick and thr > Q[i]:
                found[n] = i
                n += 1
    if m >= 0:
        least[m] = lo
    return n


def design_mixtures(design: Any, acquired: Sequence[int], n_items: int, what: str, *,
                    labels: Sequence[int] | None = None,
                    losses: Sequence[float] | None = None,
                    n_known: Sequence[int] | None = None
                    ) -> Iterator[tuple[int, float, float, np.ndarray, np.ndarray]]:
    """Before each draw m of ``acquired``, ``(m, a_m, b_m, s, rem)``: an adaptive design's
    proposal ``q_m(i) = a_m s_i + b_m`` on the remaining items (``rem``), replayed from
    its history as :func:`design_proposals` does (the same arguments), without building
    ``q``; the replay moves past draw m when the next is asked for (``s`` and ``rem`` are
    the replay's own arrays: read them before). ``n_items``: the pool size of the
    caller's arrays, checked against the design's (``what`` names them)."""
    acq = [int(i) for i in acquired]
    st, known = _replay_state(design, acq, labels, losses, n_known)
    if st["s"].shape[0] != n_items:
        raise ValueError(f"{what} has {n_items} items, the design's pool "
                         f"{st['s'].shape[0]}")
    for m, i in enumerate(acq):
        mix = design._mixture(st, m, known[m])
        yield m, float(mix[0]), float(mix[1]), st["s"], st["rem"]
        design._finish(st, m, mix, i)


def design_weight_bounds(design: Any, acquired: Sequence[int], item_bounds: np.ndarray, *,
                         labels: Sequence[int] | None = None,
                         losses: Sequence[float] | None = None,
                         n_known: Sequence[int] | None = None) -> np.ndarray:
    """``(K,)`` before each draw of ``acquired``, the largest weighted bound
    ``B_i / q_m(i)`` over the items the adaptive design could draw next (its proposal
    ``q_m(i) = a_m s_i + b_m`` on the remaining items, replayed from its history as
    :func:`design_proposals` does): what one draw can add to ``N theta_m`` at most,
    known before the draw. The adaptive counterpart of
    :func:`activetest.stats.proposal.floored_weight_bound`, for the exact anytime CS of a paired
    difference (:func:`activetest.stats.betting.exact_cs`, ``weight_bound=``): where two
    targets agree (``B_i = 0``) nothing is weighted, so the bound is far below the
    floor's ``max B / q_min``. Scaled outward by ``1 + 1e-9`` for rounding; 0 where no
    remaining item has a positive bound. One replay and one compiled pass over the pool
    per draw, for every row of bounds at once.

    Args:
        design: the adaptive design (:class:`activetest.stats.adaptive.AdaptiveDesign`).
        acquired: ``(K,)`` the drawn items, in order.
        item_bounds: ``(N,)`` non-negative ``B_i``, or ``(R, N)`` (several differences:
            the result is then ``(R, K)``).
        labels, losses, n_known: the history, as for :func:`design_proposals`.
    """
    acq = [int(i) for i in acquired]
    B = np.ascontiguousarray(item_bounds, dtype=np.float64)
    if B.ndim not in (1, 2) or np.any(B < 0) or not np.all(np.isfinite(B)):
        raise ValueError("item_bounds must be a finite, non-negative (N,) or (R, N) array")
    rows = B.reshape(-1, B.shape[-1])
    out = np.zeros((rows.shape[0], len(acq)))
    if acq and np.any(rows > 0):
        for m, a, b, s, rem in design_mixtures(design, acq, rows.shape[1], "item_bounds",
                                               labels=labels, losses=losses,
                                               n_known=n_known):
            _largest_weights(a, b, s, rem, rows, out, m)
    out *= 1.0 + 1e-9
    return out if B.ndim == 2 else out[0]


@njit(cache=True)
def _largest_weights(a, b, s, rem, B, out, m):  # pragma: no cover - compiled
    """``out[r, m] = max B[r, i] / (a s_i + b)`` over the remaining items with
    ``B[r, i] > 0`` (0 if none; inf where such an item has probability 0)."""
    for i in range(s.shape[0]):
        if rem[i]:
            q = a * s[i] + b
            for r in range(B.shape[0]):
                if B[r, i] > 0.0:
                    w = B[r, i] / q if q > 0.0 else np.inf
                    if w > out[r, m]:
                        out[r, m] = w
