"""Similarity-weighted neighbours: a per-item feature learnt in-run from the target's labels.

History's difficulty and item factors (:mod:`activetest.stats.feature_design`) are
label-free and fixed. This module adds one column that is recomputed at every refit of
the feature design from the labels drawn so far: the prediction of the history models
that agree with the target on the labelled items.

The model (a mixture of the history models with flip noise ``eps``): the target answers
like one history model ``h`` (prior uniform over the H models), each item's result
flipped with probability ``eps``, so ``P_h(correct on i) = eps + (1 - 2 eps) y_hi``
(``y_hi`` the model's score; a missing cell is the item's shrunk mean correctness
``p_i``, which carries no preference between models). After the labelled items ``J``
(the target's correctness ``c_j = 1 - L_j``, 0/1 or graded), the posterior weight of h is

    pi_h  propto  prod_{j in J} P_hj^c_j (1 - P_hj)^(1 - c_j)

and the neighbours' prediction ``P_i = sum_h pi_h P_hi``. The column is the shift of its
log-odds of a wrong answer from the population's (uniform weights, before any label):

    x_i = logit(1 - P_i) - logit(1 - P0_i)     (0 before the first label)

so that with weight 1 on it the design's model is "difficulty + what the neighbours
add", and with weight 0 the design without neighbours. For a labelled item j the column
is computed leave-one-out (weights without j's own factor): the design's logistic model
is fitted on the labelled items, and an in-sample column (weights chosen to agree with j
itself) would make the neighbours look better than they predict unlabelled items.

``eps`` is chosen on the history alone (:func:`choose_eps`): held-out history models,
predicted from 25 and 100 of their items by the other half of the rows, scored by the
log-likelihood of the rest.

**Exactly unbiased**: the column used at draw m is a function of the labels of draws
before m only (it is updated just before a refit, from the labels the refit sees), so the
design remains a predictable process and adaptive LURE stays unbiased
(``tests/stats/test_neighbours.py`` enumerates every draw order with a refit before every
draw). The weights (and the column) are updated at every refit of the design's schedule,
or, with ``neighbour_design(..., update_until=K)``, only at the refits that know at most K
labels, after which the column is kept (``after="freeze"``) or set to 0 (``"drop"``): still
a function of earlier labels only (docs/harness.md, "Toward 0.6x: the neighbours' column
only early", measures both; not used by sessions).

Cost per refit: ``O(H)`` per new label (the log-weights are accumulated), then
``O((N + k) H')`` where ``H'`` counts the models whose weight is not negligible (below
``exp(-PRUNE)`` of the largest, after the leave-one-out's largest change, they are
skipped): early all models count, later few.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.stats import _adaptive_kernels as ak
from activetest.stats import _design_models as dm
from activetest.stats._response_matrix import _as_matrix, _difficulty
from activetest.stats.adaptive import PRIOR_CLIP, AdaptiveDesign
from activetest.stats.kernels import njit
from activetest.stats.validate import rng_of

__all__ = ["AFTER_MODES", "EPS_CANDIDATES", "NeighbourDesign", "NeighbourHistory", "choose_eps",
           "column_kernel", "neighbour_column", "neighbour_design", "neighbour_history"]

#: Flip probabilities tried by :func:`choose_eps`.
EPS_CANDIDATES = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
#: Labels per held-out history model when eps is chosen.
EPS_FIT_LABELS = (25, 100)
#: History rows held out when eps is chosen (at most).
EPS_ROWS = 80
#: Models whose log-weight is more than this below the largest (after allowing for the
#: leave-one-out's largest change) are skipped: their weights are below exp(-PRUNE).
PRUNE = 30.0


@dataclass(frozen=True)
class NeighbourHistory:
    """What the neighbour column needs of a response matrix (label-free, computed once).

    Attributes:
        PT: ``(H, N)`` per history model and item ``eps + (1 - 2 eps) y`` (missing
            cells at the item's shrunk mean correctness).
        base: ``(N,)`` the population's log-odds of a wrong answer ``logit(1 - P0_i)``,
            ``P0_i`` the unweighted mean of ``P[i]``.
        eps: the flip probability.
        log_p, log_1mp: ``(N, H)`` ``log P`` and ``log(1 - P)`` (each label's
            log-likelihood; item-major, contiguous per item).
        eps_scores: ``(eps, mean held-out log-likelihood per item)`` per eps tried (empty
            when eps was given).
    """

    PT: np.ndarray
    base: np.ndarray
    eps: float
    log_p: np.ndarray
    log_1mp: np.ndarray
    eps_scores: tuple[tuple[float, float], ...] = ()

    @property
    def n_models(self) -> int:
        """History models."""
        return int(self.PT.shape[0])


def _filled(Y: np.ndarray, p: np.ndarray | None) -> np.ndarray:
    """Missing cells at ``p`` (default the item's mean correctness shrunk towards the
    matrix mean with 2 pseudo-models, as the feature design's difficulty)."""
    Y = _as_matrix(Y)
    if p is None:
        p = _difficulty(Y)[0]
    return np.where(np.isnan(Y), np.asarray(p, dtype=np.float64)[None, :], Y)


def _logit_wrong(P: np.ndarray) -> np.ndarray:
    q = np.clip(1.0 - P, *PRIOR_CLIP)
    return np.log(q / (1.0 - q))


def _make(Yf: np.ndarray, eps: float, scores: tuple[tuple[float, float], ...] = ()
          ) -> NeighbourHistory:
    PT = np.ascontiguousarray(eps + (1.0 - 2.0 * eps) * Yf)
    P = np.ascontiguousarray(PT.T)
    P0 = np.array([dm.total(P[i]) for i in range(P.shape[0])]) / P.shape[1]
    return NeighbourHistory(PT, _logit_wrong(P0), float(eps), np.log(P), np.log1p(-P), scores)


@njit(cache=True)
def _prepare(YN, p, eps, P, P0):  # pragma: no cover - compiled
    """One pass over the item-major ``(N, H)`` matrix ``YN``: ``P = eps + (1 - 2 eps) y``
    (a missing cell's ``y`` is ``p[i]``) and ``P0[i]`` its row's sum in index order over
    H (the same operations, in the same order, as :func:`_filled` and :func:`_make`).
    Returns False where a cell is infinite or outside [0, 1] (nothing else is valid)."""
    N, H = YN.shape
    c = 1.0 - 2.0 * eps
    for i in range(N):
        tot = 0.0
        for h in range(H):
            y = YN[i, h]
            if np.isnan(y):
                y = p[i]
            elif not (0.0 <= y <= 1.0):  # also +-inf
                return False
            v = eps + c * y
            P[i, h] = v
            tot += v
        P0[i] = tot / H
    return True


def _make_items(YN: np.ndarray, p: np.ndarray, eps: float,
                scores: tuple[tuple[float, float], ...] = ()) -> NeighbourHistory:
    """:func:`_make` of ``_filled(YN.T, p)`` bit for bit, from the item-major matrix (a
    session's stored layout) in one compiled pass: no checked copy, no filled copy, no
    transposed copy of the input (:func:`neighbour_history`)."""
    N, H = YN.shape
    P = np.empty((N, H))
    P0 = np.empty(N)
    if not _prepare(YN, np.ascontiguousarray(p, dtype=np.float64), float(eps), P, P0):
        raise ValueError("response-matrix cells must be scores in [0, 1] (or missing)")
    return NeighbourHistory(np.ascontiguousarray(P.T), _logit_wrong(P0), float(eps),
                            np.log(P), np.log1p(-P), scores)


def choose_eps(matrix: object, *, candidates: tuple[float, ...] = EPS_CANDIDATES,
               n_fit: tuple[int, ...] = EPS_FIT_LABELS, max_rows: int = EPS_ROWS,
               random_state: int = 0) -> tuple[float, tuple[tuple[float, float], ...]]:
    """The flip probability, chosen on the history alone (module docstring): rows split
    at random in half; each of up to ``max_rows`` models of one half is predicted by the
    other half's neighbours from each ``n_fit`` count of its observed items (seeded) and
    scored on the rest by the mean log-likelihood per item. Returns the best eps (ties:
    the larger, the smoother) and every eps's score."""
    Y = _as_matrix(matrix)
    H, N = Y.shape
    rng = rng_of(random_state)
    perm = rng.permutation(H)
    A, B = perm[: H // 2], perm[H // 2:][:max_rows]
    n_fit = tuple(k for k in n_fit if k + 10 <= N)
    if len(A) < 2 or len(B) < 1 or not n_fit or len(candidates) < 2:
        return float(max(candidates)), ()
    Yf = _filled(Y[A], None)
    splits = []
    for h in B:
        obs = np.flatnonzero(~np.isnan(Y[h]))
        sel = rng.permutation(obs)
        for k in n_fit:
            if obs.size >= k + 10:
                splits.append((1.0 - Y[h], sel[:k], sel[k:]))
    scores = []
    for eps in candidates:
        nh = _make(Yf, eps)
        ll = 0.0
        for L, fit, test in splits:
            x = neighbour_column(nh, fit, L[fit])
            q = 1.0 / (1.0 + np.exp(-(x[test] + nh.base[test])))  # P(wrong)
            q = np.clip(q, 1e-9, 1 - 1e-9)
            t = L[test]
            ll += float((t * np.log(q) + (1 - t) * np.log(1 - q)).mean())
        scores.append((float(eps), ll / max(len(splits), 1)))
    best = max(scores, key=lambda es: (es[1], es[0]))[0]
    return best, tuple(scores)


def neighbour_history(matrix: object, *, p_correct: np.ndarray | None = None,
                      eps: float | None = None, random_state: int = 0) -> NeighbourHistory:
    """The neighbour column's data from a response matrix (rows = other models, columns =
    the pool's items; scores in [0, 1], NaN missing; never the target's own row).

    Args:
        p_correct: ``(N,)`` the items' shrunk mean correctness (missing cells' value;
            default :func:`activetest.stats.feature_design.history_features`' own).
        eps: the flip probability; None: :func:`choose_eps` on the matrix.
        random_state: seed of the eps choice.
    """
    scores: tuple[tuple[float, float], ...] = ()
    if eps is None:
        eps, scores = choose_eps(matrix, random_state=random_state)
    if not 0.0 < float(eps) < 0.5:
        raise ValueError(f"eps must lie in (0, 0.5), got {eps!r}")
    Y = np.asarray(matrix, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] < 1 or Y.shape[1] < 1:
        raise ValueError(f"the response matrix must be (models, items), got shape {Y.shape}")
    if p_correct is None:
        p_correct = _difficulty(_as_matrix(Y))[0]
    p = np.asarray(p_correct, dtype=np.float64)
    if p.shape != (Y.shape[1],):
        raise ValueError(f"p_correct has shape {p.shape}; the matrix has {Y.shape[1]} items")
    # item-major, as the kernel reads it: free for a session's stored (N, H) matrix (its
    # transpose is passed here), one copy for a models-major one
    return _make_items(np.ascontiguousarray(Y.T), p, float(eps), scores)


@njit(cache=True)
def _accumulate(LP, L1P, hidx, hL, k, lw, cnt):  # pragma: no cover - compiled
    """Add the log-likelihood of labels ``cnt[0]..k-1`` to every model's ``lw``."""
    H = LP.shape[1]
    for j in range(cnt[0], k):
        i = hidx[j]
        c = 1.0 - hL[j]
        if c == 1.0:
            for h in range(H):
                lw[h] += LP[i, h]
        elif c == 0.0:
            for h in range(H):
                lw[h] += L1P[i, h]
        else:
            for h in range(H):
                lw[h] += c * LP[i, h] + (1.0 - c) * L1P[i, h]
    if k > cnt[0]:
        cnt[0] = k


@njit(cache=True)
def _lik(p, c):  # pragma: no cover - compiled
    if c == 1.0:
        return p
    if c == 0.0:
        return 1.0 - p
    return math.exp(c * math.log(p) + (1.0 - c) * math.log(1.0 - p))


@njit(cache=True)
def column_kernel(PT, LP, L1P, base, eps, hidx, hL, k, lw, cnt, keep, wv, acc, out
                  ):  # pragma: no cover - compiled
    """The neighbour column (module docstring) into ``out`` from the first ``k`` labels;
    ``lw``/``cnt`` the accumulated log-weights (updated here), ``keep``/``wv``/``acc``
    scratch."""
    H, N = PT.shape
    if k == 0:
        for i in range(N):
            out[i] = 0.0
        return
    _accumulate(LP, L1P, hidx, hL, k, lw, cnt)
    mx = -np.inf
    for h in range(H):
        if lw[h] > mx:
            mx = lw[h]
    cut = mx - PRUNE + math.log(eps)  # the leave-one-out can raise a weight by 1/eps
    nk = 0
    tot = 0.0
    for h in range(H):
        if lw[h] > cut:
            keep[nk] = h
            wv[nk] = math.exp(lw[h] - mx)
            tot += wv[nk]
            nk += 1
    lo = PRIOR_CLIP[0]
    hi = PRIOR_CLIP[1]
    for i in range(N):
        acc[i] = 0.0
    for t in range(nk):  # model by model: a contiguous axpy over the items (vectorised)
        h = keep[t]
        w = wv[t]
        for i in range(N):
            acc[i] += w * PT[h, i]
    for i in range(N):
        q = min(max(1.0 - acc[i] / tot, lo), hi)
        out[i] = math.log(q / (1.0 - q)) - base[i]
    for j in range(k):  # labelled items: leave-one-out weights
        i = hidx[j]
        c = 1.0 - hL[j]
        s = 0.0
        tw = 0.0
        for t in range(nk):
            p = PT[keep[t], i]
            w = wv[t] / _lik(p, c)
            s += w * p
            tw += w
        q = min(max(1.0 - s / tw, lo), hi)
        out[i] = math.log(q / (1.0 - q)) - base[i]


def neighbour_column(nh: NeighbourHistory, idx: Any, losses: Any) -> np.ndarray:
    """``(N,)`` the neighbour column after the labelled items ``idx`` with ``losses``
    (``1 - score``), in draw order (module docstring)."""
    hidx = np.ascontiguousarray(idx, dtype=np.int64)
    hL = np.ascontiguousarray(losses, dtype=np.float64)
    H, N = nh.PT.shape
    out = np.empty(N)
    column_kernel(nh.PT, nh.log_p, nh.log_1mp, nh.base, nh.eps, hidx, hL, hidx.shape[0],
                  np.zeros(H), np.zeros(1, dtype=np.int64), np.empty(H, dtype=np.int64),
                  np.empty(H), np.empty(N), out)
    return out


@njit(cache=True)
def _due(sched, ist, k):  # pragma: no cover - compiled
    """True when :func:`activetest.stats._adaptive_kernels.prepare` will refit before the
    draw that knows ``k`` labels."""
    return ist[0] < sched.shape[0] and sched[ist[0]] <= k + 1


@njit(cache=True)
def _moves(until, k):  # pragma: no cover - compiled
    """True when the column is recomputed at a refit that knows ``k`` labels (``until``:
    the last label count it is recomputed at; negative: no limit)."""
    return until < 0 or k <= until


@njit(cache=True)
def _simulate(kind, F, ltab, Phi, col, PT, LP, L1P, base, eps, until, drop, w0, rhos, lambdas,
              lam_fixed, rule, sched, s0, g0, fitted0, lam0, losses, labels, U, out_idx, out_q,
              out_g, out_G, out_lam, out_refits, out_V):  # pragma: no cover - compiled
    """:func:`activetest.stats._adaptive_kernels.simulate_runs` with the neighbour column
    ``col`` of a per-run copy of ``Phi`` updated before every refit (up to ``until``
    labels; after that kept, or set to 0 with ``drop``)."""
    R, M = U.shape
    N = s0.shape[0]
    H = PT.shape[0]
    nr = rhos.shape[0]
    X = Phi.copy()
    K = ak.warm_width(F, X)
    W = np.empty((max(nr, 2), K))
    s = np.empty(N)
    g = np.empty(N)
    rem = np.empty(N, dtype=np.bool_)
    hidx = np.empty(M, dtype=np.int64)
    hy = np.empty(M, dtype=np.int64)
    hL = np.empty(M)
    hq = np.empty(M)
    hg = np.empty(M)
    hG = np.empty(M)
    hlam = np.empty(M)
    want_V = out_V.shape[0] > 0
    hV = np.empty(M if want_V else 0)
    absres = np.empty(M)
    ist = np.zeros(4, dtype=np.int64)
    fst = np.zeros(1)
    aux0 = np.zeros((0, 0))
    aux = np.zeros((0, 0))
    haux = np.zeros((0, 0))
    lw = np.empty(H)
    cnt = np.zeros(1, dtype=np.int64)
    keep = np.empty(H, dtype=np.int64)
    wv = np.empty(H)
    acc = np.empty(N)
    xc = np.empty(N)
    for r in range(R):
        ak.reset(w0, s0, g0, fitted0, lam0, ist, fst, W, s, g, rem, aux0, aux)
        for h in range(H):
            lw[h] = 0.0
        cnt[0] = 0
        for i in range(N):
            X[i, col] = Phi[i, col]
        for m in range(M):
            if _due(sched, ist, m):
                if _moves(until, m):
                    column_kernel(PT, LP, L1P, base, eps, hidx, hL, m, lw, cnt, keep, wv, acc, xc)
                    for i in range(N):
                        X[i, col] = xc[i]
                elif drop:
                    for i in range(N):
                        X[i, col] = 0.0
            i = ak.step(kind, F, ltab, X, w0, rhos, lambdas, lam_fixed, rule, sched, ist, fst,
                        W, s, g, rem, hidx, hy, hL, hq, hg, hG, hlam, hV, m, m, U[r, m], -1,
                        absres, aux, haux)
            hy[m] = labels[i]
            hL[m] = losses[i]
        for m in range(M):
            out_idx[r, m] = hidx[m]
            out_q[r, m] = hq[m]
            out_g[r, m] = hg[m]
            out_G[r, m] = hG[m]
            out_lam[r, m] = hlam[m]
            if want_V:
                out_V[r, m] = hV[m]
        out_refits[r] = ist[1]


class NeighbourDesign(AdaptiveDesign):
    """The feature design with the neighbour column (its last model-matrix column)
    recomputed from the labels before every refit (module docstring). Runs and replays
    exactly as any :class:`~activetest.stats.adaptive.AdaptiveDesign` (sessions,
    :class:`~activetest.stats.adaptive.AdaptiveSampler`, ``plan``,
    :func:`~activetest.stats.adaptive.simulate_design`)."""

    neighbours: NeighbourHistory
    #: The last label count at which the column is recomputed (None: every refit; the
    #: module's design): from the first refit after it the column is kept as it was
    #: (``after = "freeze"``) or set to 0 (``"drop"``: the design without neighbours).
    update_until: int | None = None
    #: What the column does after ``update_until`` (:data:`AFTER_MODES`).
    after: str = "freeze"

    def _until(self) -> int:
        return -1 if self.update_until is None else int(self.update_until)

    def _new_state(self, M: int) -> dict[str, np.ndarray]:
        st = super()._new_state(M)
        H = self.neighbours.n_models
        st.update(X=self._Phi.copy(), nlw=np.zeros(H), ncnt=np.zeros(1, dtype=np.int64),
                  nkeep=np.empty(H, dtype=np.int64), nwv=np.empty(H), nacc=np.empty(self.n),
                  ncol=np.empty(self.n))
        return st

    def _phi(self, st: dict[str, np.ndarray]) -> np.ndarray:
        return st["X"]  # the features with the column as the last refit computed it

    def _update(self, st: dict[str, np.ndarray], k: int) -> None:
        if _due(self.schedule, st["ist"], k):
            if _moves(self._until(), k):
                nh = self.neighbours
                column_kernel(nh.PT, nh.log_p, nh.log_1mp, nh.base, nh.eps, st["hidx"], st["hL"], k,
                              st["nlw"], st["ncnt"], st["nkeep"], st["nwv"], st["nacc"], st["ncol"])
                st["X"][:, -1] = st["ncol"]
            elif self.after == "drop":
                st["X"][:, -1] = 0.0

    def _step(self, st: dict[str, np.ndarray], m: int, k: int, u: float, forced: int) -> int:
        self._update(st, k)
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        return int(ak.step(self.kind, self._F, self._ktab, st["X"], self._w0, self.rhos,
                          self.lambdas, lam_fixed, self._rule, self.schedule, st["ist"],
                          st["fst"], st["W"], st["s"], st["g"], st["rem"], st["hidx"],
                          st["hy"], st["hL"], st["hq"], st["hg"], st["hG"], st["hlam"],
                          st["hV"], m, k, u, forced, st["absres"], st["aux"], st["haux"]))

    def _mixture(self, st: dict[str, np.ndarray], m: int, k: int) -> tuple[float, float, float]:
        self._update(st, k)
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        return ak.prepare(self.kind, self._F, self._ktab, st["X"], self._w0, self.rhos,
                          self.lambdas, lam_fixed, self._rule, self.schedule, st["ist"],
                          st["fst"], st["W"], st["s"], st["g"], st["rem"], st["hidx"],
                          st["hy"], st["hL"], st["hq"], m, k, st["absres"], st["aux"])

    def _simulate_runs(self, L: np.ndarray, y: np.ndarray, U: np.ndarray, out: Any,
                       V: np.ndarray) -> None:
        """The compiled simulation (:func:`activetest.stats.adaptive.simulate_design`)."""
        nh = self.neighbours
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        _simulate(self.kind, self._F, self._ktab, self._Phi, self._Phi.shape[1] - 1, nh.PT,
                  nh.log_p, nh.log_1mp, nh.base, nh.eps, self._until(), self.after == "drop",
                  self._w0, self.rhos, self.lambdas,
                  lam_fixed, self._rule,
                  self.schedule, self._s0, self._g0, self._fitted0, self._lam0, L, y, U,
                  out.indices, out.q, out.control, out.control_rest, out.lam, out.refits, V)


#: Prior mean of the neighbour column's weight: 1, the neighbours' posterior predictive
#: taken as it is (the column is a calibrated log-odds shift by construction; the ridge
#: shrinks towards trusting it). Measured in docs/history.md against 0.
PRIOR_WEIGHT = 1.0


#: What the column does after ``update_until`` labels: kept as last computed, or 0.
AFTER_MODES = ("freeze", "drop")


def neighbour_design(base: AdaptiveDesign, neighbours: NeighbourHistory, *,
                     prior_weight: float = PRIOR_WEIGHT, update_until: int | None = None,
                     after: str = "freeze") -> NeighbourDesign:
    """``base`` (a feature design, :func:`activetest.stats.feature_design.feature_design`)
    with the neighbour column appended to its model matrix (prior mean ``prior_weight``
    of its weight; the column is 0 on every item before the first label, so the start is
    ``base``'s). Its name gets ``+neighbours``.

    ``update_until``: recompute the column only at refits that know at most this many
    labels (None: at every refit); from the next refit on it is kept as it was
    (``after="freeze"``, name ``+neighbours-freezeK``) or set to 0 on every item
    (``"drop"``, ``+neighbours-dropK``: from then on ``base``'s model with a zero
    column). Either way the column at a draw depends only on earlier labels, so the
    design stays predictable and adaptive LURE exactly unbiased."""
    if base.kind != ak.KIND_GRADED:
        raise ValueError("the neighbour column needs a feature (logistic) design")
    if after not in AFTER_MODES:
        raise ValueError(f"after must be one of {AFTER_MODES}, got {after!r}")
    if update_until is not None and (isinstance(update_until, bool)
                                     or int(update_until) != update_until or update_until < 0):
        raise ValueError(f"update_until must be a count of labels >= 0, got {update_until!r}")
    if neighbours.PT.shape[1] != base.n:
        raise ValueError(f"the neighbours cover {neighbours.PT.shape[1]} items, the pool "
                         f"{base.n}")
    X = np.hstack([base._Phi, np.zeros((base.n, 1))])
    tail = "" if update_until is None else f"-{after}{int(update_until)}"
    d = NeighbourDesign(base.kind, f"{base.name}+neighbours{tail}", base.loss, base.n, F=base._F,
                        ltab=None, Phi=X, w0=np.append(base._w0, float(prior_weight)), s0=base._s0,
                        g0=base._g0, fitted0=base._fitted0, lam0=base._lam0, lam=base.lam,
                        schedule=base.schedule, rhos=base.rhos, lambdas=base.lambdas,
                        rule=base.rule, rule_params=base._rule)
    d.neighbours = neighbours
    d.update_until = None if update_until is None else int(update_until)
    d.after = after
    cols = getattr(base, "columns", ())
    d.columns = (*cols, "neighbours") if cols else ()  # type: ignore[attr-defined]
    return d
