"""The one place a session's design is built: when the session is created, and when a
stored session replays its draws.

A design is a deterministic function of the session's configuration
(:class:`~activetest.session.config.SessionConfig`) and the model outputs stored with
it, so building it here from the same inputs at creation and on every replay gives the
same proposal, the same controls and so the same draws from the same seed.

- Classification sessions with an adaptive acquisition (``adaptive``, ``pe_adaptive``,
  ``fixed_mix``): :meth:`activetest.stats.adaptive.AdaptiveDesign.from_name` on the
  surrogate's and (unless PE) the target's log-probs, fitted to
  :attr:`~activetest.session.config.SessionConfig.design_metric`; with both metrics
  under ``adaptive``, the two-metric design ``calibrated-both`` (recorded in the config
  as ``"design"``: :func:`design_variant`).
- The in-run rule (:func:`design_rule`): the config's ``design_rule``; new classification
  sessions with an adaptive design record ``"earned"`` (:data:`NEW_SESSION_RULE`), a
  config without the key ran, and replays, the ``"original"`` rule (docs/robustness.md).
- Graded sessions: the fixed design on the surrogate's judgment log-probs
  (:func:`graded_fixed_design`) or the graded adaptive design on the target's
  confidence features (:func:`graded_adaptive_design`).
- Graded sessions with other models' results (``init --history``; config ``"design":
  "features"``): the feature design
  (:func:`activetest.stats.feature_design.feature_design`) on the stored history
  features (:func:`history_design`); where the config's ``history`` record has
  ``"neighbours"``, with the neighbours' column learnt in-run from the stored response
  matrix (:mod:`activetest.session.history_neighbours`).
- Fixed acquisitions (``ce``, ``pe``, ``zero_one``, ``uniform``, ``expected_loss``)
  have no design: their scores are the proposal of a plain
  :class:`~activetest.stats.ActiveSampler` (:func:`initial_scores`).

This module imports nothing from the session's other rooms but the store and the
config, so ``create``, ``create_graded`` and ``draw`` all import it without a circle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from activetest.session.config import (
    ACQUISITIONS,
    BOTH_DESIGNS,
    DESIGN_METRICS,
    POOL_SIGNAL,
    SessionConfig,
)
from activetest.session.store import SessionError, SessionStore

__all__ = ["HISTORY_DESIGN", "NEW_SESSION_RULE", "POOL_SIGNAL", "design_name", "design_rule",
           "design_variant",
           "expected_loss", "graded_adaptive_design", "graded_fixed_design", "history_columns",
           "history_design", "initial_scores", "new_design_rule", "pool_design", "stored_design"]

#: The design variant (config ``"design"``) of a session built on other models' results.
HISTORY_DESIGN = "features"


#: The in-run rule new classification sessions with an adaptive design record (config
#: ``design_rule``); a config without the key ran the ``"original"`` rule.
NEW_SESSION_RULE = "earned"


def new_design_rule(acquisition: str | None) -> str | None:
    """The ``design_rule`` to record in a new classification session's config: the
    earned rule for an adaptive acquisition, None (no key) for a fixed one."""
    acq = ACQUISITIONS.get(acquisition or "")
    return NEW_SESSION_RULE if acq is not None and acq.adaptive else None


def design_rule(cfg: SessionConfig) -> str:
    """The in-run rule of a session's adaptive design: the recorded ``design_rule``, or
    ``"original"`` where the config has none (files written before the key).

    Raises:
        SessionError: the recorded rule is not one this activetest knows.
    """
    from activetest.stats.adaptive import RULES

    rule = cfg.design_rule
    if rule is None:
        return "original"
    if not isinstance(rule, str) or rule not in RULES:
        raise SessionError(f"config.design_rule is {rule!r}; this activetest knows "
                           f"{', '.join(map(repr, RULES))}")
    return rule


def design_variant(metric: str, acquisition: str | None) -> str | None:
    """The design variant to record in a new session's config (None: the acquisition's
    own design, fitted to the session's metric or, with both, to log loss)."""
    return BOTH_DESIGNS.get(acquisition or "") if metric == "both" else None


def design_name(cfg: SessionConfig) -> str:
    """The :class:`~activetest.stats.adaptive.AdaptiveDesign` name of an adaptive session:
    the recorded variant (``"design"``), else its acquisition's design.

    Raises:
        SessionError: the recorded variant is not one this activetest knows, or the
            acquisition is not an adaptive design.
    """
    variant = cfg.design_variant
    if variant is not None:
        if not isinstance(variant, str) or variant not in DESIGN_METRICS:
            raise SessionError(f"config.design is {variant!r}; this activetest knows "
                               f"{', '.join(map(repr, DESIGN_METRICS))}")
        return variant
    if cfg.design is None:
        raise SessionError(f"acquisition {cfg.acquisition!r} is not an adaptive design")
    return cfg.design


def pool_design(cfg: SessionConfig, surrogate_logprobs: np.ndarray,
                target_logprobs: np.ndarray | None) -> Any:
    """The adaptive design of a classification session (``adaptive``, ``pe_adaptive``,
    ``fixed_mix``) on the pool's model outputs (``target_logprobs`` None: PE)."""
    from activetest.stats.adaptive import AdaptiveDesign

    rule = design_rule(cfg)
    if rule == "guard":  # the guard's two tracks exist in the logistic designs only
        raise SessionError(f"config.design_rule is 'guard', which serves the history "
                           f"(feature) and graded designs only; this session's design is "
                           f"{design_name(cfg)!r}: use 'original' or 'earned'")
    return AdaptiveDesign.from_name(design_name(cfg), surrogate_logprobs=surrogate_logprobs,
                                    target_logprobs=target_logprobs, loss=cfg.design_loss,
                                    rule=rule)


def expected_loss(logprobs: np.ndarray, task: Any) -> np.ndarray:
    """``(N,)`` expected loss ``sum_l pi_l (1 - score_l)`` under judgment log-probs of a
    graded ``task``."""
    loss = 1.0 - np.asarray(task.judgment.scores, dtype=np.float64)
    return np.exp(np.asarray(logprobs, dtype=np.float64)) @ loss


def graded_fixed_design(logprobs: np.ndarray, task: Any, loss_name: str = "log") -> Any:
    """The graded sessions' fixed design from the surrogate's judgment log-probs:
    score = the loss's sd under the surrogate, control = its expected loss, in-run
    lambda (:meth:`activetest.stats.adaptive.AdaptiveDesign.fixed`).

    ``loss_name``: the name the design records for its loss (1 - score), the session's
    :attr:`~activetest.session.config.SessionConfig.fixed_design_loss`: ``graded`` in
    new sessions, ``log`` in those made before (so their checkpoints still match); the
    name changes no number."""
    from activetest.stats.adaptive import AdaptiveDesign

    loss = 1.0 - np.asarray(task.judgment.scores, dtype=np.float64)
    mean = expected_loss(logprobs, task)
    sd = np.sqrt(np.maximum(np.exp(np.asarray(logprobs, dtype=np.float64)) @ (loss * loss)
                            - mean * mean, 0.0))
    return AdaptiveDesign.fixed(sd, mean, lam=None, name="graded_fixed", loss=loss_name)


def graded_adaptive_design(features: np.ndarray) -> Any:
    """The graded adaptive design (:func:`activetest.stats.graded.graded_design`) on the
    stored ``features`` (columns mean, min and sum of the answer's token log-probs, then
    any agreement columns)."""
    from activetest.stats.graded import graded_design

    X = np.asarray(features, dtype=np.float64)
    return graded_design(mean_lp=X[:, 0], min_lp=X[:, 1], sum_lp=X[:, 2],
                         agreement=[X[:, k] for k in range(3, X.shape[1])])


def history_columns(features: Any) -> np.ndarray:
    """``(N, 2 + r)`` what a history session stores (role ``history``): the shrunk mean
    correctness, 1 where the item has history, then the r item factors."""
    return np.column_stack([features.p_correct, features.covered.astype(np.float64),
                            features.factors])


def history_design(stored: np.ndarray, rule: str = "original",
                   surrogate_logprobs: np.ndarray | None = None,
                   responses: np.ndarray | None = None, neighbours: Any = None, *,
                   neighbour_data: Any = None, features: np.ndarray | None = None,
                   feature_names: Any = None) -> Any:
    """The feature design on stored :func:`history_columns` (rebuilt the same at creation
    and on every replay) under the in-run ``rule`` (the config's ``design_rule``:
    :func:`design_rule`; sessions without the key ran ``"original"``), with the
    surrogate's class probabilities as more features where given (classification
    sessions, whose config's ``history`` record lists ``"surrogate"`` in ``features``),
    or with ``features``, any other ``(N, D)`` label-free columns (harness sessions whose
    record lists :data:`POOL_SIGNAL`: the pool's own signal; ``feature_names`` name them).

    ``neighbours`` (:class:`~activetest.session.history_neighbours.NeighbourSettings`,
    the config's ``history.neighbours``; None: none) adds the similarity-weighted
    neighbours' column learnt in-run from the ``(H, N)`` stored ``responses``
    (:func:`activetest.stats.neighbours.neighbour_design`; missing cells at the stored
    shrunk mean correctness), or from ``neighbour_data``, the
    :class:`~activetest.stats.neighbours.NeighbourHistory` already built from them
    (:func:`activetest.session.history_neighbours.stored_neighbour_history`)."""
    base = _feature_design(stored, rule, surrogate_logprobs, features, feature_names)
    if neighbours is None:
        return base
    from activetest.stats.neighbours import neighbour_design, neighbour_history

    nh = neighbour_data
    if nh is None:
        if responses is None:
            raise SessionError("the neighbours' column needs the history's response matrix")
        X = np.asarray(stored, dtype=np.float64)
        nh = neighbour_history(responses, p_correct=X[:, 0].copy(), eps=neighbours.eps)
    up = neighbours.update
    return neighbour_design(base, nh, prior_weight=neighbours.prior_weight,
                            update_until=None if up is None else up.until,
                            after="freeze" if up is None else up.after)


def _feature_design(stored: np.ndarray, rule: str, surrogate_logprobs: np.ndarray | None,
                    features: np.ndarray | None = None, feature_names: Any = None) -> Any:
    from activetest.stats.feature_design import (
        HistoryFeatures,
        feature_design,
        surrogate_feature_names,
        surrogate_features,
    )

    X = np.asarray(stored, dtype=np.float64)
    hf = HistoryFeatures(X[:, 0].copy(), np.ascontiguousarray(X[:, 2:]), X[:, 1] > 0, 0,
                         X.shape[1] - 2)
    if surrogate_logprobs is None:
        if features is not None:
            return feature_design(history=hf, features=features, rule=rule,
                                  feature_names=feature_names)
        return feature_design(history=hf, rule=rule)
    return feature_design(history=hf, features=surrogate_features(surrogate_logprobs), rule=rule,
                          feature_names=surrogate_feature_names(surrogate_logprobs.shape[1]))


def initial_scores(cfg: SessionConfig, surrogate_logprobs: np.ndarray,
                   target_logprobs: np.ndarray | None, n: int, *,
                   other_logprobs: np.ndarray | None = None) -> np.ndarray:
    """``(N,)`` the acquisition scores a new classification session stores: an adaptive
    design's first proposal (shown in reports), else the fixed acquisition's scores
    (``compare``: :func:`compare_scores` with ``other_logprobs``, the compared model's
    on the pool).

    Raises:
        SessionError: the ``compare`` acquisition without the target's or the compared
            model's predictions on the pool.
    """
    if cfg.adaptive:
        return pool_design(cfg, surrogate_logprobs, target_logprobs).first_proposal()
    if cfg.acquisition == "compare":
        if target_logprobs is None or other_logprobs is None:
            raise SessionError("the compare acquisition needs the target's and the compared "
                               "model's predictions on the whole pool")
        return compare_scores(cfg.metric, surrogate_logprobs, target_logprobs,
                              other_logprobs, blind_ratio=cfg.blind_ratio,
                              proposal_floor=cfg.proposal_floor)
    from activetest.stats import acquisition_scores

    return acquisition_scores(cfg.acquisition, surrogate_logprobs=surrogate_logprobs,
                              target_logprobs=target_logprobs, n=n)


#: the ``compare`` acquisition draws every item where the two targets can differ at this
#: multiple of the session's blind ratio times the uniform rate or more, so that none of
#: them stays unexplored (:func:`compare_scores`); the margin over 1 covers the drift of
#: the rates as items are drawn without replacement
EXPLORE_MARGIN = 1.2


def compare_scores(metric: str, surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray,
                   other_logprobs: np.ndarray, *, blind_ratio: float | None = None,
                   proposal_floor: float = 0.1) -> np.ndarray:
    """``(N,)`` the ``compare`` acquisition's scores: the surrogate's expected squared
    difference of the two targets' losses, square-rooted
    (:func:`activetest.stats.expected_difference`), for the session's metric; a session
    with both metrics draws for the error rate's difference (0 wherever the two
    predictions agree, so the labels go where they differ), and its log loss's
    difference stays unbiased, drawn with the floor's share elsewhere.

    With a ``blind_ratio`` (every new session) the scores of the items where the two
    can differ (``difference_bounds > 0``) are raised so that the floored proposal
    draws each at :data:`EXPLORE_MARGIN` times that ratio of the uniform rate or more
    (:func:`activetest.stats.proposal.explored_scores`): an item drawn more rarely that
    is never drawn widens the difference's intervals by what it could hide (its bound).
    Measured on the bundled models' log-loss differences (docs/compare.md): without
    it the intervals were wider than uniform sampling's on 13 of 15 pairs, with it
    narrower on all 15."""
    from activetest.stats.acquisition import difference_bounds, expected_difference
    from activetest.stats.proposal import explored_scores

    which = "log_loss" if metric == "log_loss" else "error_rate"
    scores = expected_difference(surrogate_logprobs, target_logprobs, other_logprobs,
                                 metric=which)
    if blind_ratio is None:
        return scores
    rate = min(EXPLORE_MARGIN * blind_ratio, 0.99)
    reach = difference_bounds(which, target_logprobs, other_logprobs) > 0
    return explored_scores(scores, reach, rate, proposal_floor=proposal_floor)


def stored_design(store: SessionStore, cfg: SessionConfig | None = None) -> Any:
    """The session's adaptive design, rebuilt from its stored model outputs (the same
    inputs it was built from at creation, so it replays the same draws).

    Raises:
        SessionError: model outputs the design needs are missing, or the config names
            no design this activetest knows.
    """
    cfg = store.config() if cfg is None else cfg
    name = cfg.design
    if name == "graded_fixed":
        from activetest.data.taskfile import task_from_dict

        s = store.scores("surrogate")
        if s is None:
            raise SessionError(f"{store.path}: the session has no surrogate scores")
        task = task_from_dict(cfg.task, f"{store.path}: config.task", index_values=True)
        return graded_fixed_design(s.logprobs, task, cfg.fixed_design_loss)
    if name == HISTORY_DESIGN:
        h = store.scores("history")
        if h is None:
            raise SessionError(f"{store.path}: the history features are missing")
        from activetest.session.history_neighbours import settings_of, stored_neighbour_history

        record = cfg.extra.get("history") or {}
        feats = record.get("features") or []
        nb = settings_of(record)  # absent: no neighbours' column (sessions before it)
        nh = None if nb is None else stored_neighbour_history(store, nb, h.logprobs[:, 0])
        s_lp = None
        if "surrogate" in feats:  # classification: the surrogate's probabilities too
            s = store.scores("surrogate")
            if s is None:
                raise SessionError(f"{store.path}: the session has no surrogate scores")
            s_lp = s.logprobs
        extra = names = None
        if POOL_SIGNAL in feats:  # a harness session's pool signal beside the history
            f = store.scores("features")
            if f is None:
                raise SessionError(f"{store.path}: the pool's features are missing")
            extra, names = f.logprobs, (f.provenance or {}).get("names")
        return history_design(h.logprobs, design_rule(cfg), s_lp, None, nb, neighbour_data=nh,
                              features=extra, feature_names=names)
    if name == "graded":
        f = store.scores("features")
        if f is None:
            raise SessionError(f"{store.path}: the graded design's features are missing")
        return graded_adaptive_design(f.logprobs)
    s = store.scores("surrogate")
    t = store.scores("target")
    if s is None:
        raise SessionError(f"{store.path}: the session has no surrogate scores")
    t_lp = t.logprobs if t is not None and np.all(np.isfinite(t.logprobs)) else None
    return pool_design(cfg, s.logprobs, t_lp)
