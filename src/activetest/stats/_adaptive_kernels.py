"""Compiled steps of the adaptive designs (numba), shared by single runs and simulations.

The models a refit fits and predicts from (the calibrated logit, the graded logistic
model, the ridge regressions, the lazy per-item tables) are in
:mod:`activetest.stats._design_models`; this module is the design loop around them:
the mixture weight lambda, when to refit, each draw, and the per-run state.

One run is a state machine over plain arrays, advanced one draw at a time by
:func:`step`. :class:`activetest.stats.adaptive.AdaptiveSampler` calls it from
Python per draw; :func:`simulate_runs` calls the same function in a compiled
loop over runs, so both make bit-identical draws from the same uniforms.

Design kinds (``kind``):

* ``KIND_FIXED``: fixed score ``s`` and control ``g``; a refit only re-chooses lambda.
* ``KIND_LOGIT``: the calibrated-residual design (multinomial logit on label-free
  features, MAP by Newton, ridge by Laplace evidence).
* ``KIND_RIDGE``: the surrogate-only (PE) design: Bayesian ridge regressions of
  the observed loss, and of its absolute residual, on surrogate features.
* ``KIND_GRADED``: the graded design: a binary logistic model of the observed
  loss in [0, 1] (``1 - score`` of a judgment) on label-free features ``Phi``
  (MAP by Newton, ridge by Laplace evidence; soft targets allowed).
* ``KIND_BOTH``: the calibrated design serving two metrics (log loss and error
  rate) at once: the same logit, ``ltab`` of shape ``(N, 2C)`` holding both
  per-class loss tables; the score is the combined standardised residual sd
  (:func:`both_predict`) and the second metric's control, score and history
  live in ``aux``/``haux``.

State arrays (one run): ``ist`` int64 ``[next schedule index, refits, chosen ridge,
fitted]``; ``fst`` float64 ``[lambda]``; ``W`` ``(n_rho, K)`` warm starts per
ridge; ``s``, ``g`` ``(N,)`` the current score and control; ``rem`` ``(N,)``
bool, items not yet drawn; history ``(M_max,)`` arrays ``hidx, hy, hL, hq, hg,
hG, hlam``, where draw m's q, g at the drawn item and G = sum of g over the
remaining set (the drawn item included) are recorded when it is drawn, and its
label/loss when observed. ``KIND_BOTH`` only: ``aux`` ``(3, N)`` the first
metric's sd, the second metric's control and sd; ``haux`` ``(3, M_max)`` the
second metric's g at the drawn item, G and model variance per draw (other kinds
pass empty arrays).
"""

from __future__ import annotations

import math

import numpy as np

from activetest.stats._design_models import (
    LAZY_BOTH,
    LAZY_LOG,
    _argmax_row,
    _best_map,
    _fdim,
    _lazy_loss,
    _lget,
    _lwidth,
    _ridge,
    _ridge_predict,
    both_predict,
    graded_predict,
    logit_predict,
    rest_sum,
)
from activetest.stats._guard_kernels import GUARD_ROWS, guard_choose, guard_record
from activetest.stats.kernels import njit

KIND_FIXED = 0
KIND_LOGIT = 1
KIND_RIDGE = 2
KIND_GRADED = 3
KIND_BOTH = 4


@njit(cache=True)
def _choose_lambda_both(s, g, aux, w1, w2, ltab, rem, n_rem, hidx, hy, hq, k,
                        lambdas, lam_min):  # pragma: no cover - compiled
    """lambda minimising the combined standardised importance-weighted variance
    ``sum_{j<k} (w1 (L1_j - g1_{i_j})^2 + w2 (L2_j - g2_{i_j})^2) / (q_lambda(i_j) q_j)``
    (both losses from the labels through ``ltab``)."""
    C = _lwidth(ltab) // 2
    r2w = np.empty(k)
    for j in range(k):
        i = hidx[j]
        r1 = _lget(ltab, i, hy[j]) - g[i]
        r2 = _lget(ltab, i, C + hy[j]) - aux[1, i]
        r2w[j] = w1 * r1 * r1 + w2 * r2 * r2
    return _best_lambda(s, rem, n_rem, hidx, r2w, hq, k, lambdas, lam_min)


@njit(cache=True)
def _choose_lambda(s, g, rem, n_rem, hidx, hL, hq, k, lambdas,
                   lam_min):  # pragma: no cover - compiled
    """lambda minimising ``sum_{j<k} (L_j - g_{i_j})^2 / (q_lambda(i_j) q_j)``, and that sum."""
    r2 = np.empty(k)
    for j in range(k):
        r = hL[j] - g[hidx[j]]
        r2[j] = r * r
    return _best_lambda(s, rem, n_rem, hidx, r2, hq, k, lambdas, lam_min)


@njit(cache=True)
def _best_lambda(s, rem, n_rem, hidx, r2, hq, k, lambdas,
                 lam_min):  # pragma: no cover - compiled
    """The lambda of ``lambdas`` (those >= ``lam_min``) minimising ``sum_{j<k} r2_j /
    (q_lambda(i_j) q_j)``, ``r2_j`` the draw's squared (or weighted sum of squared)
    residuals, ``q_lambda`` the mixture ``lambda / n_rem + (1 - lambda) s_i / S`` over the
    remaining items (the last lambda on ties with infinity); returns ``(lambda, sum)``."""
    S = rest_sum(s, rem)
    best = np.inf
    lam = lambdas[lambdas.shape[0] - 1]
    for a in range(lambdas.shape[0]):
        la = lambdas[a]
        if la < lam_min and a < lambdas.shape[0] - 1:
            continue
        cost = 0.0
        for j in range(k):
            i = hidx[j]
            ql = la / n_rem
            if S > 0.0:
                ql += (1.0 - la) * s[i] / S
            else:
                ql = 1.0 / n_rem
            cost += r2[j] / (ql * hq[j])
        if cost < best:
            best = cost
            lam = la
    return lam, best


@njit(cache=True)
def refit(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, ist, fst, W, s, g, rem,
          n_rem, hidx, hy, hL, hq, k, absres, aux):  # pragma: no cover - compiled
    """Refit the design on the first ``k`` observed draws, then choose lambda."""
    N = s.shape[0]
    w1 = 0.0
    w2 = 0.0
    if kind == KIND_RIDGE:
        D = Phi.shape[1]
        beta = W[0, : D + 1]
        ist[2] = _ridge(Phi, hidx, hL, k, rhos, beta)
        _ridge_predict(Phi, beta, g)
        lo = _lget(ltab, 0, 0)  # the loss's range [lo, hi], stored in ltab for this kind
        hi = _lget(ltab, 0, 1)
        for i in range(N):
            g[i] = min(max(g[i], lo), hi)
        for j in range(k):
            absres[j] = abs(hL[j] - g[hidx[j]])
        beta2 = W[1, : D + 1]
        _ridge(Phi, hidx, absres, k, rhos, beta2)
        _ridge_predict(Phi, beta2, s)
        for i in range(N):
            s[i] = max(s[i], 0.0)
    elif kind != KIND_FIXED:  # the logit, two-metric and graded designs
        best_r = _best_map(kind == KIND_GRADED, F, Phi, hidx, hy, hL, k, W, w0, rhos)
        ist[2] = best_r
        if kind == KIND_BOTH:
            w1, w2 = both_predict(F, ltab, W[best_r], s, g, aux)
        elif kind == KIND_LOGIT:
            logit_predict(F, ltab, W[best_r], s, g)
        else:
            graded_predict(Phi, W[best_r], s, g)
    earned = rule[0] > 0.0
    if earned and rule[1] > 0.0 and kind != KIND_FIXED and kind != KIND_RIDGE:
        _smooth_scores(kind, ltab, s, g, aux, w1, w2, rule[1] / (rule[1] + k))
    ist[1] += 1
    ist[3] = 1
    lam_min = _lambda_floor(rule, k) if earned else 0.0
    cost = np.inf
    if lam_fixed >= 0.0:
        fst[0] = lam_fixed
    elif kind == KIND_BOTH:
        fst[0], cost = _choose_lambda_both(s, g, aux, w1, w2, ltab, rem, n_rem, hidx, hy, hq,
                                           k, lambdas, lam_min)
    else:
        fst[0], cost = _choose_lambda(s, g, rem, n_rem, hidx, hL, hq, k, lambdas, lam_min)
    if earned and rule[2] > 0.0 and lam_fixed < 0.0 and kind != KIND_FIXED:
        _uniform_fallback(kind, ltab, s, g, aux, w1, w2, n_rem, hidx, hy, hL, hq, k, cost,
                          rule[2], fst)
    if (rule.shape[0] > 4 and rule[4] > 0.0 and kind != KIND_BOTH
            and aux.shape[0] == GUARD_ROWS):  # the out-of-sample guard (_guard_kernels)
        guard_choose(s, g, aux, hL, hq, k, rule, lambdas, lam_fixed, fst)


@njit(cache=True)
def _lambda_floor(rule, k):  # pragma: no cover - compiled
    """The least lambda the earned rule allows with ``k`` labels: ``min(1, b / sqrt(k))``
    (``b = rule[3]``; 0: no floor beyond the grid's)."""
    if rule[3] <= 0.0 or k <= 0:
        return 0.0
    return min(1.0, rule[3] / math.sqrt(k))


@njit(cache=True)
def _smooth_scores(kind, ltab, s, g, aux, w1, w2, eps):  # pragma: no cover - compiled
    """The earned rule's score: the rms of the residual ``l - g`` under the model's
    label distribution mixed with the uniform over the classes by ``eps``,
    ``sqrt((1 - eps) s_i^2 + eps mean_c (l_i(c) - g_i)^2)``, for the residual of the
    model's own control ``g`` (unchanged). Graded: the two ends 0 and 1 of the loss
    stand for the classes. Two metrics: each metric's sd, then the combined score."""
    N = s.shape[0]
    # nested: numba prunes a branch on one isinstance at a time (types fixed at compile)
    if isinstance(ltab, tuple):  # noqa: SIM102
        if kind != KIND_BOTH and kind != KIND_GRADED:  # lazy (large pools): unpacked once
            _lazy_smooth(ltab[0], ltab[1], s, g, eps)
            return
    if kind == KIND_BOTH:
        C = _lwidth(ltab) // 2
        for i in range(N):
            m1 = 0.0
            m2 = 0.0
            for c in range(C):
                d1 = _lget(ltab, i, c) - g[i]
                d2 = _lget(ltab, i, C + c) - aux[1, i]
                m1 += d1 * d1
                m2 += d2 * d2
            v1 = (1.0 - eps) * aux[0, i] * aux[0, i] + eps * m1 / C
            v2 = (1.0 - eps) * aux[2, i] * aux[2, i] + eps * m2 / C
            aux[0, i] = math.sqrt(v1)
            aux[2, i] = math.sqrt(v2)
            s[i] = math.sqrt(w1 * v1 + w2 * v2)
        return
    for i in range(N):
        if kind == KIND_GRADED:
            m = 0.5 * (g[i] * g[i] + (1.0 - g[i]) * (1.0 - g[i]))
        else:
            C = _lwidth(ltab)
            m = 0.0
            for c in range(C):
                d = _lget(ltab, i, c) - g[i]
                m += d * d
            m /= C
        s[i] = math.sqrt((1.0 - eps) * s[i] * s[i] + eps * m)


@njit(cache=True)
def _lazy_smooth(lt, mode, s, g, eps):  # pragma: no cover - compiled
    """:func:`_smooth_scores` of a one-metric design on the lazy loss table ``(lt,
    mode)`` (:func:`_lget`): the same float operations in the same order, the table
    unpacked once and the zero-one loss's argmax found once per item, not per class
    (through :func:`_lget` the smoothing cost as much as the refit's predictions: 0.023
    CPU-s at 1e6 items)."""
    N, CL = lt.shape[0], lt.shape[1]
    C = CL * (2 if mode == LAZY_BOTH else 1)
    for i in range(N):
        best = 0 if mode == LAZY_LOG else _argmax_row(lt, i)
        m = 0.0
        for c in range(C):
            d = _lazy_loss(lt, mode, i, c, best) - g[i]
            m += d * d
        m /= C
        s[i] = math.sqrt((1.0 - eps) * s[i] * s[i] + eps * m)


@njit(cache=True)
def _uniform_fallback(kind, ltab, s, g, aux, w1, w2, n_rem, hidx, hy, hL, hq, k, cost,
                      margin, fst):  # pragma: no cover - compiled
    """The earned rule's fallback: uniform draws with a constant control (the
    self-normalised importance-weighted mean of the past losses), when its estimated
    variance ``sum_j (L_j - c)^2 n_rem / q_j`` is at most ``margin`` times the model's
    best (``cost``): then ``s = 0`` (uniform), ``g = c`` and lambda = 1."""
    if k < 2:
        return
    C = _lwidth(ltab) // 2 if kind == KIND_BOTH else 0
    sw = 0.0
    c1 = 0.0
    c2 = 0.0
    for j in range(k):
        sw += 1.0 / hq[j]
        if kind == KIND_BOTH:
            c1 += _lget(ltab, hidx[j], hy[j]) / hq[j]
            c2 += _lget(ltab, hidx[j], C + hy[j]) / hq[j]
        else:
            c1 += hL[j] / hq[j]
    c1 /= sw
    c2 /= sw
    fb = 0.0
    for j in range(k):
        if kind == KIND_BOTH:
            d1 = _lget(ltab, hidx[j], hy[j]) - c1
            d2 = _lget(ltab, hidx[j], C + hy[j]) - c2
            fb += (w1 * d1 * d1 + w2 * d2 * d2) * n_rem / hq[j]
        else:
            d1 = hL[j] - c1
            fb += d1 * d1 * n_rem / hq[j]
    if fb <= margin * cost:
        for i in range(s.shape[0]):
            s[i] = 0.0
            g[i] = c1
        if kind == KIND_BOTH:
            for i in range(s.shape[0]):
                aux[0, i] = 0.0
                aux[1, i] = c2
                aux[2, i] = 0.0
        fst[0] = 1.0


@njit(cache=True)
def prepare(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, sched, ist, fst, W, s, g,
            rem, hidx, hy, hL, hq, m, k, absres, aux):  # pragma: no cover - compiled
    """Before draw m (0-based) knowing the first ``k`` labels: refit if due.

    A refit fires when the known labels reach a schedule point not yet used
    (``sched[ist[0]] <= k + 1``, 1-based draw numbers); sequentially (k = m) that
    is exactly "before draw sched[j]". Returns the mixture ``(a, b)`` with
    ``q_i = a s_i + b`` on the remaining items, and ``G = sum_rem g``.
    """
    N = s.shape[0]
    n_rem = N - m
    fire = False
    while ist[0] < sched.shape[0] and sched[ist[0]] <= k + 1:
        ist[0] += 1
        fire = True
    if fire:
        refit(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, ist, fst, W, s, g, rem,
              n_rem, hidx, hy, hL, hq, k, absres, aux)
    lam = fst[0]
    S = 0.0
    G = 0.0
    for i in range(N):
        if rem[i]:
            S += s[i]
            G += g[i]
    if S <= 0.0 or n_rem == 1:  # no positive score, or one item left (q = 1 exactly)
        return 0.0, 1.0 / n_rem, G
    return (1.0 - lam) / S, lam / n_rem, G


@njit(cache=True)
def step(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, sched, ist, fst, W, s, g,
         rem, hidx, hy, hL, hq, hg, hG, hlam, hV, m, k, u, forced,
         absres, aux, haux):  # pragma: no cover - compiled
    """Draw m (0-based) knowing the first ``k`` labels; returns the drawn item.

    After :func:`prepare`, the item is drawn by inverting the CDF of
    ``q_i = (1 - lam) s_i / S + lam / n_rem`` in index order with the uniform
    ``u`` (or, when ``forced >= 0``, that item is taken: a replay), and q, g at
    the item and ``G = sum_rem g`` are recorded, with the variance the design's
    own model predicts for the draw's term: ``hV = sum_rem s^2 / q - sum_rem s^2``
    (``N^2 Var(theta_m | past)`` if ``s`` is the sd and ``g`` the mean of each
    remaining loss; NaN before a learnt design's first fit, when ``s`` is no model;
    skipped when ``hV`` is empty). ``KIND_BOTH``: the same per metric with its own
    sd (``aux[0]``, ``aux[2]``) under the shared q, the second metric's into ``haux``.
    """
    a, b, G = prepare(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, sched, ist, fst,
                      W, s, g, rem, hidx, hy, hL, hq, m, k, absres, aux)
    return finish(kind, ist, fst, s, g, rem, hidx, hq, hg, hG, hlam, hV, m, u, forced, aux,
                  haux, a, b, G)


#: lanes of :func:`model_variance`'s sums (a constant: the order of the additions, hence
#: the sums' last bits, must not depend on the machine)
VAR_LANES = 64


@njit(cache=True, error_model="numpy")
def model_variance(sd, s, rem, a, b):  # pragma: no cover - compiled
    """``(sum_rem sd^2 / q, sum_rem sd^2)`` with ``q_i = a s_i + b`` (items with q = 0
    left out of the first sum): the two sums of the design's variance prediction
    (:func:`finish`'s ``hV``).

    The one pass over the pool a fitted design makes per draw beyond its draw, so it
    is summed in :data:`VAR_LANES` lanes: lane ``l`` adds the items ``i = l mod
    VAR_LANES`` in index order, then the lanes are added in order, then the last ``N mod
    VAR_LANES`` items. The order is fixed by the code (no reassociation is allowed), so
    the sums are the same on every machine and in every caller, and the compiler can
    still run the lanes as vector operations, branch-free on masks (about 7x faster at
    1e6 items than one sequential sum; ``error_model="numpy"``: a division by zero is
    masked, not raised).
    """
    N = sd.shape[0]
    n = N - N % VAR_LANES
    rows = n // VAR_LANES
    D = sd[:n].reshape((rows, VAR_LANES))
    Q = s[:n].reshape((rows, VAR_LANES))
    R = rem[:n].reshape((rows, VAR_LANES))
    acc1 = np.zeros(VAR_LANES)
    acc2 = np.zeros(VAR_LANES)
    for j in range(rows):
        for lane in range(VAR_LANES):
            t = D[j, lane] * D[j, lane]
            qi = a * Q[j, lane] + b
            ok = R[j, lane]
            acc1[lane] += t / qi if (ok and qi > 0.0) else 0.0
            acc2[lane] += t if ok else 0.0
    v1 = 0.0
    v2 = 0.0
    for lane in range(VAR_LANES):
        v1 += acc1[lane]
        v2 += acc2[lane]
    for i in range(n, N):
        if rem[i]:
            qi = a * s[i] + b
            if qi > 0.0:
                v1 += sd[i] * sd[i] / qi
            v2 += sd[i] * sd[i]
    return v1, v2


@njit(cache=True)
def finish(kind, ist, fst, s, g, rem, hidx, hq, hg, hG, hlam, hV, m, u, forced, aux, haux,
           a, b, G):  # pragma: no cover - compiled
    """:func:`step` after its :func:`prepare` returned ``(a, b, G)``: the model variance,
    the draw (or the ``forced`` item) and its record; returns the drawn item."""
    N = s.shape[0]
    if hV.shape[0] == 0:  # not asked for (a simulation of the error alone)
        pass
    elif kind == KIND_BOTH and ist[3] > 0:
        v1, v2 = model_variance(aux[0], s, rem, a, b)
        u1, u2 = model_variance(aux[2], s, rem, a, b)
        hV[m] = max(v1 - v2, 0.0)
        haux[2, m] = max(u1 - u2, 0.0)
    elif kind == KIND_BOTH:  # no model yet: no prediction (and no pass over the pool)
        hV[m] = np.nan
        haux[2, m] = np.nan
    elif ist[3] > 0:
        v1, v2 = model_variance(s, s, rem, a, b)
        hV[m] = max(v1 - v2, 0.0)
    else:
        hV[m] = np.nan
    pick = -1
    if forced >= 0:
        pick = forced
    else:
        cum = 0.0
        last = -1
        for i in range(N):
            if rem[i]:
                last = i
                cum += a * s[i] + b
                if cum > u:
                    pick = i
                    break
        if pick < 0:  # u at the very top of the CDF (rounding): the last remaining item
            pick = last
    if kind != KIND_BOTH and aux.shape[0] == GUARD_ROWS:  # the out-of-sample guard's record
        guard_record(aux, rem, pick, m, N - m)
    hidx[m] = pick
    hq[m] = a * s[pick] + b
    hg[m] = g[pick]
    hG[m] = G
    if kind == KIND_BOTH:
        haux[0, m] = aux[1, pick]
        haux[1, m] = rest_sum(aux[1], rem)
    hlam[m] = fst[0] if a > 0.0 else 1.0
    rem[pick] = False
    return pick


@njit(cache=True)
def simulate_runs(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, sched, s0, g0,
                  fitted0, lam0, losses, labels, U, out_idx, out_q, out_g, out_G, out_lam,
                  out_refits, out_V, aux0, out_aux):  # pragma: no cover - compiled
    """R sequential runs (each label observed right after its draw); ``out_V`` of shape
    (0, 0) skips the variance prediction. ``KIND_BOTH``: ``aux0`` ``(3, N)`` the
    second metric's start (:func:`reset`) and ``out_aux`` ``(3, R, M)`` its g, G and
    (if ``out_V`` is asked for) model variance per draw; other kinds pass empty arrays."""
    R, M = U.shape
    N = s0.shape[0]
    nr = rhos.shape[0]
    K = warm_width(F, Phi)
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
    aux = np.empty((aux0.shape[0], aux0.shape[1]))
    haux = np.full((aux0.shape[0], M if aux0.shape[0] > 0 else 0), np.nan)
    for r in range(R):
        reset(w0, s0, g0, fitted0, lam0, ist, fst, W, s, g, rem, aux0, aux)
        for m in range(M):
            i = step(kind, F, ltab, Phi, w0, rhos, lambdas, lam_fixed, rule, sched, ist, fst, W,
                     s, g, rem, hidx, hy, hL, hq, hg, hG, hlam, hV, m, m, U[r, m], -1, absres,
                     aux, haux)
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
            for a in range(out_aux.shape[0]):
                out_aux[a, r, m] = haux[a, m]
        out_refits[r] = ist[1]


@njit(cache=True)
def warm_width(F, Phi):  # pragma: no cover - compiled
    """Columns of the warm-start array: K logit weights, or D + 1 ridge coefficients."""
    return max(_fdim(F, 2), Phi.shape[1] + 1)


@njit(cache=True)
def reset(w0, s0, g0, fitted0, lam0, ist, fst, W, s, g, rem, aux0,
          aux):  # pragma: no cover - compiled
    """The state before draw 1: ``s0``/``g0`` (uniform and 0 for learnt designs) and
    ``aux0`` (``KIND_BOTH``; empty for the other kinds)."""
    for a in range(ist.shape[0]):
        ist[a] = 0
    ist[3] = fitted0
    fst[0] = lam0
    for r in range(W.shape[0]):
        for a in range(W.shape[1]):
            W[r, a] = w0[a] if a < w0.shape[0] else 0.0
    for i in range(s.shape[0]):
        s[i] = s0[i]
        g[i] = g0[i]
        rem[i] = True
    for a in range(aux0.shape[0]):
        for i in range(aux0.shape[1]):
            aux[a, i] = aux0[a, i]
