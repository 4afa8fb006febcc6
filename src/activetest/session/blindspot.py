"""A session's blind spot: the items its draws hardly looked at, and what they could hide.

Sessions created with a ``blind_ratio`` in their config (every new one) widen their
fixed-budget interval and anytime CS by what never-drawn items drawn at below that
share of the uniform rate could carry under the loss bound
(:mod:`activetest.stats.blindspot` has the math and the proof). The proposals of every
draw are replayed from what the session stored: the fixed acquisitions' floored
proposal from the acquisition scores, an adaptive design's from its history; both
continue the running state stored in the session (:mod:`activetest.session.
blind_checkpoint`), which an adaptive session's ``select`` advances over its own draws
(:func:`advance_design_state`). Sessions written before the key have none, and keep
every number they had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from activetest.session.blind_memory import MemoryCurves
from activetest.session.config import SessionConfig
from activetest.stats.acquisition import difference_bounds
from activetest.stats.blindspot import BlindSpotCurve
from activetest.stats.blindspot_replay import (
    CurveSpec,
    CurveState,
    RunDraws,
    design_blind_spot_curves,
    design_proposals,
    design_weight_bounds,
    fixed_blind_spot_curves,
    floored_proposals,
)

__all__ = ["BlindSpotPass", "ComparedBounds", "Proposals", "SessionBlindSpot",
           "advance_design_state", "blind_spot_pass",
           "compared_bounds", "compared_pools", "design_difference_weight_bounds",
           "difference_bounds",
           "item_loss_bounds", "other_loss_bounds", "session_blind_spots",
           "stored_differences"]

#: ``select`` advances the state with its own draws' mixtures and design state
#: (:class:`activetest.stats.blindspot.RunDraws`) instead of replaying them (False: it
#: replays them, as an ``estimate`` does; the same numbers, tests/session/
#: test_blind_checkpoint.py compares both)
REUSE_RUN = True

#: A fresh iterator over ``(q_m, g_m)`` before each labelled draw (``g`` None: no control).
Proposals = Callable[[], Iterator[tuple[np.ndarray, np.ndarray | None]]]


@dataclass(frozen=True)
class SessionBlindSpot:
    """One metric's blind spot at every budget 1..K.

    Attributes:
        estimate: of the session's headline estimate (LURE, or the design's own).
        cv: of control-variate LURE (None: no control).
        bounded: a loss bound is known; False: the curves count the unexplored items
            but widen by nothing (the output says the intervals assume no rare large
            losses among them).
        differences: compared target's spec -> the blind spot of the paired difference
            (LURE, no control) with per-item bounds from both targets' predictions on the
            pool (:func:`difference_bounds`): a compared model scored on the whole pool
            at creation. Absent: the difference takes the target's curve, every
            unexplored item bounded by the loss's range.
        others: compared target's spec -> the blind spot of its own log loss (LURE),
            each item bounded by its largest ``-log p`` (a model scored on the pool).
    """

    estimate: BlindSpotCurve
    cv: BlindSpotCurve | None
    bounded: bool
    differences: Mapping[str, BlindSpotCurve] = field(default_factory=dict)
    others: Mapping[str, BlindSpotCurve] = field(default_factory=dict)


@dataclass(frozen=True)
class ComparedBounds:
    """What a model compared at creation lets a session bound, item by item.

    Attributes:
        difference: metric -> ``(N,)`` the largest ``|L_target - L_other|`` per item
            (:func:`difference_bounds`).
        other: metric -> ``(N,)`` the largest loss of the compared model per item, where
            the target's own bound does not already serve (its log loss:
            ``max_c -log p_other(c)``; its error rate is bounded by 1 like the target's).
    """

    difference: Mapping[str, np.ndarray]
    other: Mapping[str, np.ndarray]


def item_loss_bounds(metric: str, target_pool: np.ndarray | None,
                     loss_bound: float | None = None) -> np.ndarray | float | None:
    """``B_i``, the largest loss each pool item can have: 1 for the error rate (and a
    graded ``1 - score``); for the log loss ``max_c -log p_target(c | x_i)`` where the
    target is known on the pool (never above the pool-wide cap ``loss_bound`` the report
    applies, :func:`activetest.stats.log_loss_bound`, which is their maximum), else that
    cap, else None (no bound: nothing to widen by)."""
    if metric != "log_loss":
        return 1.0
    if target_pool is not None and np.all(np.isfinite(target_pool)):
        t = np.asarray(target_pool, dtype=np.float64)
        # the smallest over the classes, a column at a time (``min(axis=1)`` walks the
        # rows one by one: ~30 ms at 1e6 items); a minimum is exact, so the same values
        low = t[:, 0].copy()
        for c in range(1, t.shape[1]):
            np.minimum(low, t[:, c], out=low)
        return np.negative(low, out=low)
    return None if loss_bound is None else float(loss_bound)


def compared_pools(config: SessionConfig, store: Any) -> dict[str, np.ndarray]:
    """compared spec -> the ``(N, C)`` log-probs a classification session stored for the
    models it compared at creation (role ``compare:<spec>``), read once per estimate."""
    if config.kind != "classification" or not config.compare:
        return {}
    return {spec: sc.logprobs for spec in config.compare
            if (sc := store.scores(f"compare:{spec}")) is not None}


def stored_differences(config: SessionConfig, store: Any, metrics: Sequence[str],
                       target_pool: np.ndarray | None,
                       pools: Mapping[str, np.ndarray] | None = None
                       ) -> dict[str, ComparedBounds]:
    """compared spec -> its :class:`ComparedBounds`, for the models a classification
    session compared at creation (``config.compare``), whose predictions it stored for
    the whole pool (role ``compare:<spec>``; ``pools``: as :func:`compared_pools` read
    them, else read here); empty where the target or the compared model is not known on
    every item."""
    if config.kind != "classification" or not config.compare or target_pool is None \
            or not np.all(np.isfinite(target_pool)):
        return {}
    if pools is None:
        pools = compared_pools(config, store)
    out = {}
    for spec, lp in pools.items():
        got = compared_bounds(metrics, target_pool, lp)
        if got is not None:
            out[spec] = got
    return out


def compared_bounds(metrics: Sequence[str], target_pool: np.ndarray, other_pool: np.ndarray
                    ) -> ComparedBounds | None:
    """The :class:`ComparedBounds` of a compared model from both targets' ``(N, C)``
    log-probs on the whole pool; None where either is not known on every item."""
    t, o = np.asarray(target_pool), np.asarray(other_pool)
    if o.shape != t.shape or not np.all(np.isfinite(o)) or not np.all(np.isfinite(t)):
        return None
    return ComparedBounds({m: difference_bounds(m, t, o) for m in metrics},
                          {m: item_loss_bounds(m, o) for m in metrics if m == "log_loss"})


def other_loss_bounds(compared: Mapping[str, ComparedBounds]
                      ) -> dict[str, dict[str, float]]:
    """compared spec -> metric -> the largest loss any pool item can have for that
    model (its log loss: ``max_i max_c -log p_other(c | x_i)``), from its
    :class:`ComparedBounds`: the range its risk's intervals are kept within."""
    return {spec: {m: float(np.max(b)) for m, b in cb.other.items() if np.size(b)}
            for spec, cb in compared.items()}


def design_difference_weight_bounds(config: SessionConfig, sampler: Any, *, k: int,
                                    differences: Mapping[str, ComparedBounds],
                                    losses: Mapping[str, np.ndarray],
                                    compare: Mapping[str, Mapping[str, np.ndarray]]
                                    ) -> dict[str, dict[str, np.ndarray]]:
    """compared spec -> metric -> ``(J,)``: an adaptive design's weight bound
    (:func:`~activetest.stats.blindspot_replay.design_weight_bounds`, the difference's
    per-item bounds) over its first J draws, J the labelled budgets at which the
    few-errors rule (:func:`~activetest.stats.fewerrors.few_differences`) keeps the exact anytime
    CS of the paired difference in use (a prefix: the count of labels away from the
    usual difference never falls); the exact anytime CS bounds each of those draws by it
    instead of the floor. Empty for a fixed acquisition, a session without the rule,
    or where no compared model is known on the pool (``differences``). ``losses`` and
    ``compare``: the target's and each compared model's losses at the K labelled draws."""
    from activetest.stats.fewerrors import few_differences

    min_errors = config.clt_min_errors
    if not config.adaptive or sampler is None or min_errors is None or k < 1:
        return {}
    st = sampler.state()
    rows = [int(i) for i in st.acquired[:k]]
    out: dict[str, dict[str, np.ndarray]] = {}
    wanted: list[tuple[str, str, int, np.ndarray]] = []  # (spec, metric, J, bounds)
    for spec, cb in differences.items():
        for metric, B in cb.difference.items():
            other = compare.get(spec, {}).get(metric)
            mine = losses.get(metric)
            if other is None or mine is None:
                continue
            d = (np.asarray(mine, dtype=np.float64)[:k]
                 - np.asarray(other, dtype=np.float64)[:k])
            few = few_differences(d, int(min_errors))
            J = int(np.argmin(few)) if not few.all() else k  # the prefix where it is in use
            if J > 0:
                wanted.append((spec, metric, J, np.asarray(B, dtype=np.float64)))
    if not wanted:
        return out
    J = max(w[2] for w in wanted)  # one replay serves every difference
    W = design_weight_bounds(sampler.design, rows[:J], np.stack([w[3] for w in wanted]),
                             labels=st.labels[:J], losses=st.losses[:J],
                             n_known=st.n_known[:J])
    for (spec, metric, j, _), w in zip(wanted, W, strict=True):
        out.setdefault(spec, {})[metric] = w[:j]
    return out


def _proposals(config: SessionConfig, rows: list[int], scores: np.ndarray | None, k: int,
               sampler: Any, second: bool) -> Proposals | None:
    """The proposals of the draws ``rows``, replayable (None: uniform sampling, where
    nothing is unexplored)."""
    if config.adaptive:
        if sampler is None:
            return None
        st = sampler.state()
        design = sampler.design
        return lambda: design_proposals(design, rows, labels=st.labels[:k],
                                        losses=st.losses[:k], n_known=st.n_known[:k],
                                        second=second)
    if config.acquisition == "uniform" or scores is None:
        return None
    floor = float(config.proposal_floor)
    return lambda: floored_proposals(scores, rows, floor)


@dataclass(frozen=True)
class BlindSpotPass:
    """What one pass of :func:`blind_spot_pass` gives.

    Attributes:
        spots: metric -> :class:`SessionBlindSpot` (:func:`session_blind_spots`).
        second_sums: ``(R, k)`` each draw's ``sum_{S_m} second_i / q_m(i)`` of the
            second moments given (an adaptive design's, the same numbers as
            :func:`activetest.stats.model_floor.design_second_sums`), continued from the
            session's stored state as the curves are; None where none were given or no
            pass over the design's draws was made (uniform sampling, a fixed
            acquisition, a session without ``blind_ratio``).
        least_q: ``(k,)`` each labelled draw's least proposal over the items it could
            draw (:attr:`activetest.stats.blindspot_replay.CurveState.least_q`), from
            the same pass: the exact anytime CS's per-draw weight bound
            (:attr:`activetest.session.estimate_base.LabelledDraws.q_least`); None where
            no pass over the design's draws was made.
    """

    spots: dict[str, SessionBlindSpot]
    second_sums: np.ndarray | None = None
    least_q: np.ndarray | None = None


def session_blind_spots(config: SessionConfig, store: Any, **kw: Any
                        ) -> dict[str, SessionBlindSpot]:
    """metric -> :class:`SessionBlindSpot`: :func:`blind_spot_pass`'s ``spots`` (the
    same keyword arguments)."""
    return blind_spot_pass(config, store, **kw).spots


def blind_spot_pass(config: SessionConfig, store: Any, *, k: int, n_pool: int,
                    metrics: tuple[str, ...], sampler: Any = None,
                    rows: list[int] | None = None,
                    target_pool: np.ndarray | None = None,
                    loss_bounds: Mapping[str, float] | None = None,
                    pool_controls: Mapping[str, np.ndarray] | None = None,
                    level: float | None = None, start: int | None = None,
                    save: bool = False, max_new: int | None = None,
                    differences: Mapping[str, ComparedBounds] | None = None,
                    scores: np.ndarray | None = None,
                    second_moments: np.ndarray | None = None,
                    memory: MemoryCurves | None = None) -> BlindSpotPass:
    """:class:`BlindSpotPass`: metric -> :class:`SessionBlindSpot`, the blind spot of the
    session's estimate (the design's own, with its control, for the metrics it serves;
    LURE otherwise) and of control-variate LURE, at every budget 1..k. Empty for sessions
    without ``blind_ratio`` (written before it) and for uniform sampling (nothing is
    unexplored). ``store``: the session's (its draws and acquisition scores); None with
    ``rows`` (the draws) and the adaptive ``sampler`` of an in-memory run. ``start``: the
    first budget computed (default: where the anytime CS starts, 30, or k if fewer; the
    fixed-budget interval needs only k). An adaptive session's curves continue from the
    running state stored in the session when it is the one of this history
    (:mod:`activetest.session.blind_checkpoint`, the same numbers to the last bit);
    ``save``: store the state at k for the next estimate (not over a state of more
    draws, nor one of budgets from below the CS's start: no later estimate continues
    it). ``max_new``: an adaptive design's curves only if at most that many draws are
    not in the stored state (else none: ``select`` advancing it, not replaying it).
    ``differences``: compared spec -> the per-item bounds of the paired difference and of
    the compared model's log loss (:class:`ComparedBounds`), each one more curve of the
    same draws (None: those of the models the session compared at creation,
    :func:`stored_differences`). ``scores``: a fixed acquisition's scores (an in-memory
    run's, or a session's already read; None: read from the store).
    ``second_moments``: ``(R, N)`` second moments whose sums under each draw of an
    adaptive design the same pass computes and keeps in the state (a paired difference's
    variance floor,
    :func:`activetest.session.estimate_differences.difference_floors`). ``memory``: an
    in-memory run's state kept between its estimates (no ``store``), continued and
    replaced as a session's stored one is."""
    ratio = config.blind_ratio
    if ratio is None or k < 1:
        return BlindSpotPass({})
    lvl = float(config.level if level is None else level)
    if start is None:
        from activetest.stats.confseq import MIN_LABELS

        start = min(MIN_LABELS, k)
    served = config.design_metrics if config.adaptive else ()
    if differences is None and store is not None:
        pools = compared_pools(config, store)
        differences = stored_differences(config, store, metrics, target_pool, pools)
        if second_moments is None and config.adaptive and differences:
            # as the estimate gives them (``select`` advancing the state: the same key)
            second_moments = _stored_second_moments(store, metrics, target_pool,
                                                    {s: pools[s] for s in differences})
    out: dict[str, SessionBlindSpot] = {}
    if rows is None:
        rows = [a.index for a in store.acquisitions()[:k]]
    rows = [int(i) for i in rows[:k]]
    if config.adaptive or config.acquisition == "uniform":
        scores = None
    elif scores is None and store is not None:
        from activetest.session.draw import acquisition_scores_of

        scores = acquisition_scores_of(store)
    adaptive: list[tuple[str, bool, CurveSpec, CurveSpec | None]] = []
    fixed: list[tuple[str, bool, CurveSpec, CurveSpec | None]] = []
    for metric in metrics:
        B = item_loss_bounds(metric, target_pool, (loss_bounds or {}).get(metric))
        second = metric in served and served.index(metric) == 1
        own = metric in served
        props = _proposals(config, rows, scores, k, sampler, second)
        if props is None:
            continue
        bounded = B is not None
        B = 0.0 if B is None else B
        h = (pool_controls or {}).get(metric)
        diff = {spec: np.asarray(cb.difference[metric], dtype=np.float64)
                for spec, cb in (differences or {}).items() if metric in cb.difference}
        oth = {spec: np.asarray(cb.other[metric], dtype=np.float64)
               for spec, cb in (differences or {}).items() if metric in cb.other}
        if config.adaptive:  # the design replayed once for every curve, below
            adaptive.append((metric, bounded, CurveSpec(B, second=second, with_control=own),
                             None if h is None or own else CurveSpec(
                                 B, second=second, with_control=False, fixed_control=h),
                             {s: CurveSpec(b, second=second, with_control=False)
                              for s, b in diff.items()},
                             {s: CurveSpec(b, second=second, with_control=False)
                              for s, b in oth.items()}))
            continue

        # the paper's fixed acquisitions: every curve from one pass per draw, below
        fixed.append((metric, bounded, CurveSpec(B, with_control=False), None if h is None
                      or own else CurveSpec(B, with_control=False, fixed_control=h),
                      {s: CurveSpec(b, with_control=False) for s, b in diff.items()},
                      {s: CurveSpec(b, with_control=False) for s, b in oth.items()}))
    if fixed:
        assert scores is not None
        got = _fixed_curves(store, config, scores, _all_specs(fixed), rows=rows, k=k,
                            N=n_pool, level=lvl, ratio=float(ratio), start=start, save=save,
                            memory=memory)
        out.update(_spots(fixed, got))
    sums = least = None
    if adaptive:
        pass_ = _design_curves(store, sampler, _all_specs(adaptive), rows=rows, k=k,
                               N=n_pool, level=lvl, ratio=float(ratio), start=start,
                               save=save, max_new=max_new, second=second_moments,
                               least=bool(config.exact_least), memory=memory)
        if pass_ is not None:
            out.update(_spots(adaptive, pass_[0]))
            sums, least = pass_[1], pass_[2]
    return BlindSpotPass(out, sums, least)


def _stored_second_moments(store: Any, metrics: Sequence[str], target_pool: np.ndarray | None,
                           compared: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The paired differences' second moments under the session's stored surrogate
    (:func:`activetest.session.estimate_differences.difference_moments_of`), as the
    estimate computes them for its variance floor; None without a stored surrogate."""
    from activetest.session.estimate_differences import difference_moments_of

    sur = store.scores("surrogate")
    got = difference_moments_of(metrics, surrogate_pool=None if sur is None else sur.logprobs,
                                target_pool=target_pool, compared=compared)
    return None if got is None else got.second


_Planned = tuple[str, bool, CurveSpec, "CurveSpec | None", dict[str, CurveSpec],
                 dict[str, CurveSpec]]


def _all_specs(planned: list[_Planned]) -> list[CurveSpec]:
    """Every curve's spec, in the order :func:`_spots` reads the curves back."""
    return [sp for _, _, main_sp, cv_sp, diff, oth in planned
            for sp in (main_sp, cv_sp, *diff.values(), *oth.values()) if sp is not None]


def _spots(planned: list[_Planned], curves: list[BlindSpotCurve]
           ) -> dict[str, SessionBlindSpot]:
    """metric -> :class:`SessionBlindSpot` from the curves of :func:`_all_specs`."""
    it = iter(curves)
    out = {}
    for metric, bounded, _, cv_sp, diff, oth in planned:
        main = next(it)
        cv = None if cv_sp is None else next(it)
        d = {s: next(it) for s in diff}
        out[metric] = SessionBlindSpot(main, cv, bounded, d, {s: next(it) for s in oth})
    return out


def _design_curves(store: Any, sampler: Any, specs: list[CurveSpec], *, rows: list[int],
                   k: int, N: int, level: float, ratio: float, start: int, save: bool,
                   max_new: int | None = None, second: np.ndarray | None = None,
                   least: bool = False, memory: MemoryCurves | None = None
                   ) -> tuple[list[BlindSpotCurve], np.ndarray | None, np.ndarray | None] | None:
    """The adaptive design's curves (and, with ``second``, the sums of
    :attr:`BlindSpotPass.second_sums`; the draws' least proposals,
    :attr:`BlindSpotPass.least_q`), continued from the session's stored state where
    it is this history's (and the state at k stored if ``save``). A stored state of more
    draws than ``k`` (``select`` advances it over its own draws,
    :func:`advance_design_state`) gives the curves at budgets 1..k as they are: a
    budget's values depend on the draws up to it only. None: more than ``max_new``
    draws to compute. ``least``: the least proposals are wanted (a stored state from
    before they were kept is then not continued; otherwise they may be None). Without
    a store, ``memory``'s state is continued where its key is this history's (an
    in-memory run's, whose sampler lends no arrays to the replay: the state's are the
    replay's own), and the state at k kept there."""
    from activetest.session import blind_checkpoint as bc
    from activetest.stats.confseq import MIN_LABELS

    st = sampler.state()
    hist = {"labels": st.labels, "losses": st.losses, "n_known": st.n_known}
    kw: dict[str, Any] = {"N": N, "level": level, "ratio": ratio, "start": start}
    # a live run's own last draws (``select``): its mixtures and state, not replayed
    mixes = getattr(sampler, "mixtures", None) if REUSE_RUN else None
    run_first = (len(st.acquired) - len(mixes) if mixes and k == len(st.acquired)
                 and list(rows[:k]) == list(st.acquired) else -1)
    resume = key0 = k0 = None
    refits0 = -1
    keys = kw  # the keys' arguments: with the bounds' digest, hashed once for all
    if store is not None:
        keys = {**kw, "bounds": bc.bounds_digest(specs, second)}
        k0 = bc.stored_k(store)
        if k0 is not None and start <= k <= k0 <= len(st.acquired):
            key = bc.curve_key(sampler.design, specs, k=k0, rows=st.acquired, **hist, **keys)
            served = bc.load_served(store, key, k, len(specs), ratio,
                                    None if second is None else second.shape[0])
            if served is not None and (second is None or served[1] is not None) and (
                    served[2] is not None or not least):
                return served
        if k0 is not None and 1 <= k0 <= k:
            key0 = bc.curve_key(sampler.design, specs, k=k0, rows=rows, **hist, **keys)
            resume = bc.load(store, key0, rows, N, sampler.design_states(),
                             per_item=k0 != run_first)
            if resume is not None and second is not None and (
                    resume.second_sums is None
                    or resume.second_sums.shape != (second.shape[0], resume.k)):
                resume = None  # (the key says so too) a state without the floor's sums
            if resume is not None and least and resume.least_q is None:
                resume = None  # a state from before the least proposals were kept
            if resume is not None:
                refits0 = int(resume.design["ist"][1])  # (the state is changed in place)
    elif memory is not None:
        keys = {**kw, "bounds": bc.bounds_digest(specs, second)}
        if memory.k is not None and 1 <= memory.k <= k and run_first < 0:
            got = memory.take(bc.curve_key(sampler.design, specs, k=memory.k, rows=rows,
                                           **hist, **keys))
            resume = got if isinstance(got, CurveState) and (
                second is None or got.second_sums is not None) and (
                got.least_q is not None or not least) else None
    first = 0 if resume is None else resume.k
    if max_new is not None and k - first > max_new:
        return None
    run = None
    if first == run_first:
        assert mixes is not None
        run = RunDraws(first, mixes, sampler._st)
    curves, state = design_blind_spot_curves(
        sampler.design, rows[:k], specs, resume=resume, run=run, labels=st.labels[:k],
        losses=st.losses[:k], n_known=st.n_known[:k], second=second, **kw)
    if (save and store is not None and first < k and (k0 is None or k0 <= k)
            and start >= min(MIN_LABELS, N)):
        # the design's per-item arrays change only at a refit: kept if there was none
        same = refits0 == int(state.design["ist"][1])
        bc.save(store, bc.curve_key(sampler.design, specs, k=k, rows=rows, **hist, **keys),
                state, design_of=key0 if same else None,
                live=sampler.design_states() if sampler.design.redoable else None)
    if store is None and memory is not None and run is None:
        memory.keep(bc.curve_key(sampler.design, specs, k=k, rows=rows, **hist, **keys),
                    state)
    return curves, state.second_sums, state.least_q


def _fixed_curves(store: Any, config: SessionConfig, scores: np.ndarray,
                  specs: list[CurveSpec], *, rows: list[int], k: int, N: int, level: float,
                  ratio: float, start: int, save: bool, memory: MemoryCurves | None = None
                  ) -> list[BlindSpotCurve]:
    """A fixed acquisition's curves (:func:`fixed_blind_spot_curves`), continued from
    the session's stored state where it is this run's (and the state at k stored if
    ``save``, as the adaptive design's: :func:`_design_curves`); without a store, from
    ``memory``'s state where it is this run's (and the state at k kept there)."""
    from activetest.session import blind_checkpoint as bc
    from activetest.stats.confseq import MIN_LABELS

    floor = float(config.proposal_floor)
    kw: dict[str, Any] = {"N": N, "level": level, "ratio": ratio, "start": start}

    def key(at: int) -> str:
        return bc.fixed_key(str(config.acquisition), floor, scores, specs, k=at, rows=rows,
                            **kw)

    resume = k0 = None
    if store is not None:
        k0 = bc.stored_k(store)
        if k0 is not None and start <= k <= k0 <= len(rows):
            got = bc.load_curves(store, key(k0), k, len(specs), ratio)
            if got is not None:
                return got
        if k0 is not None and 1 <= k0 <= k:
            resume = bc.load_fixed(store, key(k0), N, len(specs))
    elif memory is not None and memory.k is not None and memory.k <= k:
        resume = memory.take(key(memory.k))
    first = 0 if resume is None else resume.k
    curves, state = fixed_blind_spot_curves(scores, rows[:k], floor, specs, resume=resume,
                                            **kw)
    if store is None and memory is not None:
        memory.keep(key(k), state)
    if (save and store is not None and first < k and (k0 is None or k0 <= k)
            and start >= min(MIN_LABELS, N)):
        bc.save_fixed(store, key(k), state)
    return curves


#: ``select`` advances the stored state over at most this many times its own draws
#: (a session without a state, or with one far behind, leaves it to ``estimate``)
ADVANCE_FACTOR = 2


def advance_design_state(config: SessionConfig, store: Any, sampler: Any, *, n_pool: int,
                         metrics: tuple[str, ...], batch: int,
                         pool_inputs: Callable[[], tuple[np.ndarray | None,
                                                         Mapping[str, float],
                                                         Mapping[str, np.ndarray]]],
                         announce: Callable[[int, int], object] | None = None) -> bool:
    """After ``select`` drew ``batch`` items with the adaptive ``sampler``: the stored
    blind-spot state advanced over every draw so far (the curves the next ``estimate``
    computes, from the budget the anytime CS starts at; their values at each budget
    depend on the draws up to it only, so an estimate of fewer labels reads them as
    they are). Only from a state at most ``ADVANCE_FACTOR * batch`` draws behind (or
    from the first draw, as far): the cost is that of the batch's own draws. True if
    the state was stored. ``pool_inputs()``: the target's log-probs on the pool (or
    None), the loss bounds and the pool controls, as the estimate reads them (called
    only when the state is advanced). ``announce(k0, k)``: called before the state of
    ``k0`` draws is advanced to ``k`` (a progress display's step line)."""
    from activetest.session import blind_checkpoint as bc
    from activetest.stats.confseq import MIN_LABELS

    k = len(sampler.acquired)
    if (config.blind_ratio is None or not config.adaptive or not store.writable
            or not bc.checkpoint.enabled()):
        return False
    k0 = bc.stored_k(store) or 0
    if k0 >= k or (k0 == 0 and k > ADVANCE_FACTOR * batch):
        return False  # nothing new; or no state, and more than the batch to replay
    if announce is not None:
        announce(k0, k)
    target_pool, loss_bounds, pool_controls = pool_inputs()
    session_blind_spots(config, store, k=k, n_pool=n_pool, metrics=metrics,
                        sampler=sampler, rows=list(sampler.acquired),
                        target_pool=target_pool, loss_bounds=loss_bounds,
                        pool_controls=pool_controls, start=MIN_LABELS, save=True,
                        max_new=ADVANCE_FACTOR * batch)
    return bc.stored_k(store) == k
