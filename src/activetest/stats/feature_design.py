"""One calibrated design over any per-item features; features from other models' results.

The calibrated-residual idea of :mod:`activetest.stats.adaptive` (predict each
item's loss distribution from label-free features, refit the prediction on the
labels as they arrive, draw by its spread mixed with the uniform, use its mean
as the control) needs no target predictions on the pool when the model is a
binary (or soft-target) logistic model of the observed loss itself:

    P_w(wrong | x_i) = sigmoid(w . x_i),   x_i = [logit p0_i, 1, z_i]

``p0_i`` a label-free prior probability that the target gets item i wrong (for
history: one minus the item's shrunk mean correctness over other models), ``z_i``
any label-free per-item features (history's low-rank item factors, surrogates'
probabilities, the target's confidence where it exists, a judge, a column of
the pool file). Prior ``N(w0, I/rho)`` with ``w0 = (1, 0, ..., 0)``: the prior
probability itself. Refits, ridge by Laplace evidence, in-run lambda and the
uniform floor are exactly those of the graded design
(:meth:`activetest.stats.adaptive.AdaptiveDesign.graded`; the kernels of
:mod:`activetest.stats._adaptive_kernels`), so the estimate (adaptive LURE with
the control ``g = P(wrong)``) is exactly unbiased whatever the model learns:
the design at draw m is a function of the labels before draw m only.

History features (:func:`history_features`), computed once from a response
matrix (rows = other models, columns = the pool's items; 0/1 or scores in
[0, 1]; NaN = missing), never from the target's labels:

* difficulty: ``p_i = (sum_obs y + k0 ybar) / (n_obs + k0)``, the item's mean
  correctness shrunk towards the matrix mean ``ybar`` with ``k0 = 2`` pseudo-models;
* low-rank item factors: the SVD of the matrix centred per item (missing cells
  at the item mean), ``f_ik = s_k V_ik / sqrt(H)``, all factors scaled by one
  common constant (the first factor's sd): a new model's row is
  ``a . f`` with coefficients of about unit variance, so one ridge prior suits all
  factors and weaker factors are shrunk more;
* the rank: chosen on the history alone, by predicting held-out history models
  (models of a random half of the rows, factors from the other half) from
  ``RANK_FIT_LABELS`` of their items with this very model, scored by the log
  likelihood of the rest (:func:`choose_rank`);
* items without any history get ``p_i = ybar``, zero factors, and an indicator
  column (they still work; the design learns their offset).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from activetest.stats import _design_models as dm
from activetest.stats._response_matrix import SHRINK, _as_matrix, _difficulty
from activetest.stats.adaptive import (
    DEFAULT_RULE,
    PRIOR_CLIP,
    RIDGES,
    AdaptiveDesign,
    refit_schedule,
)
from activetest.stats.validate import rng_of

if TYPE_CHECKING:
    from activetest.stats.neighbours import NeighbourHistory

__all__ = ["RANK_CANDIDATES", "RANK_FIT_LABELS", "SCHEDULE", "HistoryFeatures", "choose_rank",
           "design_matrix", "feature_design", "fit_predict", "history_features",
           "surrogate_feature_names", "surrogate_features"]

#: Ranks tried by :func:`choose_rank` (capped by the matrix's size).
RANK_CANDIDATES = (0, 1, 2, 3, 5, 8, 12, 16, 24, 32, 48, 64)
#: Labels per held-out history model when the rank is chosen: a run's model is fitted on
#: few labels early and more later, so the rank is scored at both.
RANK_FIT_LABELS = (25, 100)
#: History models held out when the rank is chosen (at most).
RANK_ROWS = 80
#: Refit schedule of the feature design: before draw 2, then whenever m has grown by 1.15
#: (2, 3, 4, 5, 6, 8, 9, 10, 12, 14, ...: 37 refits up to 400 labels). Earlier and denser than
#: the classification design's (10, 1.25): the label-free prior (history's difficulty) is a
#: sound start and the ridge evidence keeps a fit on 2 labels near it; measured on held-out
#: models of the shared response matrices (docs/history.md) it lowers the error at 100
#: labels by about a sixth.
SCHEDULE = (2, 1.15)


@dataclass(frozen=True)
class HistoryFeatures:
    """Label-free per-item features from a response matrix of other models.

    Attributes:
        p_correct: ``(N,)`` shrunk mean correctness per item.
        factors: ``(N, r)`` scaled low-rank item factors (r = ``rank``).
        covered: ``(N,)`` True where the item has at least one history cell.
        n_models: history rows used.
        rank: the rank in use.
        rank_scores: ``(rank, mean held-out log-likelihood per item)`` per rank tried
            (empty when the rank was given).
    """

    p_correct: np.ndarray
    factors: np.ndarray
    covered: np.ndarray
    n_models: int
    rank: int
    rank_scores: tuple[tuple[int, float], ...] = ()

    @property
    def prior_wrong(self) -> np.ndarray:
        """``(N,)`` the label-free prior probability of a wrong answer, ``1 - p_correct``."""
        return 1.0 - self.p_correct

    def columns(self) -> np.ndarray:
        """``(N, r [+ 1])`` the factor columns, and the no-history indicator if some item
        lacks history."""
        cols = [self.factors]
        if not self.covered.all():
            cols.append((~self.covered).astype(np.float64)[:, None])
        return np.hstack(cols) if cols else np.zeros((self.p_correct.shape[0], 0))


def _factors(Y: np.ndarray, p: np.ndarray, rank: int) -> np.ndarray:
    """``(N, rank)`` item factors ``s_k V_ik / sqrt(H)`` of the item-centred matrix, signs
    fixed (largest entry positive), scaled by the first factor's sd."""
    H, N = Y.shape
    r = min(rank, H - 1, N - 1)
    if r <= 0:
        return np.zeros((N, 0))
    Yc = np.where(np.isnan(Y), 0.0, Y - p[None, :])
    _, s, Vt = np.linalg.svd(Yc, full_matrices=False)
    V = Vt[:r].T * (s[:r] / np.sqrt(H))
    sign = np.sign(V[np.abs(V).argmax(axis=0), np.arange(r)])
    V = V * np.where(sign == 0, 1.0, sign)
    sd = V[:, 0].std()
    return V / sd if sd > 0 else V


def surrogate_feature_names(n_classes: int) -> list[str]:
    """The names of :func:`surrogate_features`' columns."""
    return [f"surrogate P(class {c})" for c in range(2, n_classes + 1)] + [
        "surrogate entropy", "surrogate max P"]


def surrogate_features(logprobs: np.ndarray) -> np.ndarray:
    """``(N, C + 1)`` a surrogate's label-free features for the feature design: its class
    probabilities ``pi(c)`` for c = 2..C, their entropy and the largest one (the
    columns of :func:`activetest.stats.adaptive.pe_features`, unstandardised:
    :func:`design_matrix` standardises them). Needs no target prediction.

    Args:
        logprobs: ``(N, C)`` the surrogate's class log-probabilities on the pool.
    """
    s = np.asarray(logprobs, dtype=np.float64)
    if s.ndim != 2 or s.shape[1] < 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"surrogate log-probs must be a finite (N, C >= 2) array, got "
                         f"shape {s.shape}")
    p = np.exp(s)
    return np.column_stack([p[:, 1:], -(p * s).sum(axis=1), p.max(axis=1)])


def design_matrix(prior_wrong: np.ndarray | None = None, columns: np.ndarray | None = None,
                  features: np.ndarray | None = None) -> np.ndarray:
    """``(N, K)`` the design's model matrix ``[logit p0, 1, columns, standardised features]``.

    Args:
        prior_wrong: ``(N,)`` label-free P(wrong) (clipped to [0.01, 0.99]); None: no
            offset column (the model then starts at P = 0.5 everywhere).
        columns: ``(N, r)`` columns used as given (history factors: already on one
            common scale, see the module docstring).
        features: ``(N, D)`` other label-free features, each centred and scaled to unit
            sd over the pool (constant ones dropped).
    """
    n = None
    for a in (prior_wrong, columns, features):
        if a is not None:
            n = np.asarray(a).shape[0]
            break
    if n is None:
        raise ValueError("give a prior, columns or features")
    cols = [np.ones((n, 1))]
    if prior_wrong is not None:
        p = np.asarray(prior_wrong, dtype=np.float64).reshape(-1)
        if p.shape != (n,) or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
            raise ValueError(f"prior_wrong must hold {n} probabilities in [0, 1]")
        p = np.clip(p, *PRIOR_CLIP)
        cols.insert(0, np.log(p / (1 - p))[:, None])
    for name, a, std in (("columns", columns, False), ("features", features, True)):
        if a is None:
            continue
        Z = np.asarray(a, dtype=np.float64)
        if Z.ndim == 1:
            Z = Z[:, None]
        if Z.ndim != 2 or Z.shape[0] != n or not np.all(np.isfinite(Z)):
            raise ValueError(f"{name} must be a finite ({n}, D) array, got shape {Z.shape}")
        if std:
            sd = Z.std(axis=0)
            Z = (Z[:, sd > 0] - Z[:, sd > 0].mean(axis=0)) / sd[sd > 0]
        cols.append(Z)
    return np.ascontiguousarray(np.hstack(cols))


def fit_predict(X: np.ndarray, idx: np.ndarray, losses: np.ndarray, *,
                has_offset: bool = True, rhos: tuple[float, ...] = RIDGES,
                warm: np.ndarray | None = None) -> np.ndarray:
    """``(N,)`` P(wrong) of the design's model fitted (MAP, ridge by evidence, the design's
    own kernel) on the losses of the items ``idx``; the prior model when ``idx`` is empty.

    ``warm``: ``(len(rhos), K)`` starting weights per ridge, updated in place (the MAP is
    the same from any start; a near one saves Newton steps)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    K = X.shape[1]
    w0 = np.zeros(K)
    if has_offset:
        w0[0] = 1.0
    hidx = np.ascontiguousarray(idx, dtype=np.int64)
    hL = np.ascontiguousarray(losses, dtype=np.float64)
    best, wb = -np.inf, w0
    for r, rho in enumerate(rhos):
        w = w0.copy() if warm is None else warm[r]
        ev = dm.graded_map(X, hidx, hL, hidx.shape[0], w, w0, float(rho))
        if ev > best:
            best, wb = ev, w
    s, g = np.empty(X.shape[0]), np.empty(X.shape[0])
    dm.graded_predict(X, wb, s, g)
    return g


def choose_rank(Y: np.ndarray, *, candidates: tuple[int, ...] = RANK_CANDIDATES,
                n_fit: tuple[int, ...] = RANK_FIT_LABELS, max_rows: int = RANK_ROWS,
                random_state: int = 0) -> tuple[int, tuple[tuple[int, float], ...]]:
    """The rank of the item factors, chosen on the history alone (module docstring).

    The rows are split at random in half: factors and difficulty from one half; each
    of up to ``max_rows`` models of the other half is predicted from each ``n_fit`` count
    of its observed items (random, seeded) by :func:`fit_predict` and scored on the rest
    by the mean log-likelihood per item (averaged over the counts). Returns the best
    rank (ties: the smaller) and every rank's score.
    """
    Y = _as_matrix(Y)
    H, N = Y.shape
    rng = rng_of(random_state)
    perm = rng.permutation(H)
    A, B = perm[: H // 2], perm[H // 2:][:max_rows]
    cands = tuple(r for r in candidates if r <= max(0, min(len(A) - 1, N - 1)))
    n_fit = tuple(k for k in n_fit if k + 10 <= N)
    if len(A) < 3 or len(B) < 1 or not n_fit or len(cands) < 2:
        return 0, ()
    p, _, _ = _difficulty(Y[A])
    Fall = _factors(Y[A], p, max(cands))
    splits = []
    for h in B:
        obs = np.flatnonzero(~np.isnan(Y[h]))
        sel = rng.permutation(obs)
        for k in n_fit:
            if obs.size >= k + 10:
                splits.append((Y[h], sel[:k], sel[k:]))
    scores = []
    for r in cands:
        X = design_matrix(1.0 - p, Fall[:, :r])
        ll = 0.0
        for y, fit, test in splits:
            g = np.clip(fit_predict(X, fit, 1.0 - y[fit]), 1e-9, 1 - 1e-9)
            t = 1.0 - y[test]
            ll += float((t * np.log(g[test]) + (1 - t) * np.log(1 - g[test])).mean())
        scores.append((r, ll / max(len(splits), 1)))
    best = max(scores, key=lambda rs: (rs[1], -rs[0]))[0]
    return best, tuple(scores)


def history_features(matrix: object, *, rank: int | None = None, shrink: float = SHRINK,
                     random_state: int = 0) -> HistoryFeatures:
    """Difficulty and low-rank item factors of a response matrix (module docstring).

    Args:
        matrix: ``(H, N)`` other models' scores on the pool's N items (rows = models),
            0/1 or in [0, 1], NaN where missing. The target's own row must not be in it.
        rank: the number of factors; None: :func:`choose_rank` on the matrix.
        shrink: pseudo-models of the difficulty's shrinkage.
        random_state: seed of the rank choice.
    """
    Y = _as_matrix(matrix)
    p, covered, _ = _difficulty(Y, shrink)
    scores: tuple[tuple[int, float], ...] = ()
    if rank is None:
        rank, scores = choose_rank(Y, random_state=random_state)
    if isinstance(rank, bool) or int(rank) != rank or rank < 0:
        raise ValueError(f"rank must be a non-negative integer, got {rank!r}")
    F = _factors(Y, p, int(rank))
    return HistoryFeatures(p, F, covered, Y.shape[0], F.shape[1], scores)


def feature_design(*, history: HistoryFeatures | None = None,
                   features: np.ndarray | None = None, prior: np.ndarray | None = None,
                   lam: float | None = None, schedule: np.ndarray | None = None,
                   start: str = "auto", rule: str = DEFAULT_RULE,
                   rule_params: Sequence[float] | None = None,
                   feature_names: Sequence[str] | None = None,
                   neighbours: NeighbourHistory | None = None) -> AdaptiveDesign:
    """The calibrated design over per-item features (module docstring); losses in [0, 1].

    Args:
        history: history features (their prior P(wrong) is the offset, their factors
            columns), or None.
        features: ``(N, D)`` other label-free features (standardised here).
        prior: ``(N,)`` a label-free P(wrong) offset; default the history's. Without
            either, no offset.
        lam: fixed uniform-mixture weight, or None for in-run lambda.
        schedule: refit draw numbers (default ``refit_schedule(N, *SCHEDULE)``).
        start: before the first refit: ``"prior"`` the prior model (lambda = 0.5),
            ``"uniform"`` uniform with g = 0; ``"auto"``: prior when there is an offset.
        rule: the in-run rule (:data:`activetest.stats.adaptive.RULES`); ``"earned"``:
            at every refit uniform draws with a constant control are a candidate the
            model must beat (the guard, module docstring), and (with in-run lambda) the
            draws before the first refit are uniform with g = 0, as in every design of
            :mod:`activetest.stats.adaptive` (one constructor,
            :meth:`~activetest.stats.adaptive.AdaptiveDesign.logistic`).
            ``"guard"``: the out-of-sample guard (:mod:`activetest.stats._guard_kernels`;
            the prior start kept, the uniform fallback chosen where the model's record on
            labels it was not fitted to is worse; docs/history.md).
        rule_params: the rule's kernel parameters (default ``RULE_PARAMS[rule]``).
        feature_names: a name per ``features`` column (default ``feature k``).
        neighbours: add the similarity-weighted neighbours' column, recomputed from the
            labels before every refit (:mod:`activetest.stats.neighbours`).

    The design's :attr:`columns` name its model matrix's columns (the fitted weights'
    names: offset, intercept, factors, the no-history indicator, the features kept).
    Runs observe losses (``AdaptiveSampler.observe(losses=...)``, ``1 - score``).
    The design's name is ``"features"`` (``"features-uniform"`` with a uniform start).
    """
    from_history = prior is None and history is not None
    if from_history:
        prior = history.prior_wrong  # type: ignore[union-attr]
    X = design_matrix(prior, None if history is None else history.columns(), features)
    sched = (refit_schedule(X.shape[0], *SCHEDULE) if schedule is None
             else np.asarray(schedule, dtype=np.int64))
    design = AdaptiveDesign.logistic(X, offset=prior is not None, name="features", lam=lam,
                                     schedule=sched, start=start, rule=rule,
                                     rule_params=rule_params)
    names = (["difficulty log-odds" if from_history else "prior log-odds"]
             if prior is not None else []) + ["intercept"]
    if history is not None:
        names += [f"factor {k + 1}" for k in range(history.factors.shape[1])]
        names += [] if history.covered.all() else ["no history"]
    if features is not None:
        Z = np.asarray(features, dtype=np.float64).reshape(X.shape[0], -1)
        given = list(feature_names or [f"feature {k + 1}" for k in range(Z.shape[1])])
        names += [n for n, sd in zip(given, Z.std(axis=0), strict=True) if sd > 0]
    design.columns = tuple(names) if len(names) == X.shape[1] else ()  # type: ignore[attr-defined]
    if neighbours is not None:
        from activetest.stats.neighbours import neighbour_design

        return neighbour_design(design, neighbours)
    return design
