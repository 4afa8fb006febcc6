"""Compiled steps of the adaptive designs (numba), shared by single runs and simulations.

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

from activetest.stats._guard_kernels import GUARD_ROWS, guard_choose, guard_record
from activetest.stats.kernels import njit
from activetest.stats.numeric_kernels import (
    chol_solve,
    cholesky,
    linear,
    log1pexp,
    penalty,
    sigmoid,
)

KIND_FIXED = 0
KIND_LOGIT = 1
KIND_RIDGE = 2
KIND_GRADED = 3
KIND_BOTH = 4

# ------------------------------------------------------------------ lazy tables
# The calibrated designs' features ``F`` (N, C, C + 1) and loss tables (N, C) or
# (N, 2C) are either arrays, or -- on large pools, where they would be several
# copies of the model outputs -- "lazy" tuples computed entry by entry from the
# model outputs: ``F = (s, t, ms, mt)`` means ``F[i, c, 0] = s[i, c] - ms[c]``,
# ``F[i, c, 1] = t[i, c] - mt[c]``, ``F[i, c, 1 + d] = 1[c == d]`` (d >= 1), the
# same float operations numpy does to build the array (so the same bits); and
# ``ltab = (t, mode)``: mode 0 ``-t`` (log loss), 1 ``1[c != argmax t_i]`` (error
# rate), 2 both side by side. Every kernel reads them through these accessors.

LAZY_LOG = 0
LAZY_ZERO_ONE = 1
LAZY_BOTH = 2


@njit(cache=True)
def _fget(F, i, c, a):  # pragma: no cover - compiled
    """``F[i, c, a]`` of an array or a lazy feature tuple (the branch is chosen by the
    argument's type when the caller compiles)."""
    if isinstance(F, tuple):
        if a == 0:
            return F[0][i, c] - F[2][c]
        if a == 1:
            return F[1][i, c] - F[3][c]
        return 1.0 if c == a - 1 else 0.0
    return F[i, c, a]


@njit(cache=True)
def _fdim(F, d):  # pragma: no cover - compiled
    """``F.shape[d]`` of an array or a lazy feature tuple."""
    if isinstance(F, tuple):
        if d == 0:
            return F[0].shape[0]
        if d == 1:
            return F[0].shape[1]
        return F[0].shape[1] + 1
    return F.shape[d]


@njit(cache=True)
def _argmax_row(t, i):  # pragma: no cover - compiled
    """``argmax_c t[i, c]`` (the first of ties, as numpy's)."""
    best = 0
    for c in range(1, t.shape[1]):
        if t[i, c] > t[i, best]:
            best = c
    return best


@njit(cache=True)
def _lget(ltab, i, j):  # pragma: no cover - compiled
    """``ltab[i, j]`` of an array or a lazy loss tuple."""
    if isinstance(ltab, tuple):
        t = ltab[0]
        mode = ltab[1]
        log_entry = mode == LAZY_LOG or (mode == LAZY_BOTH and j < t.shape[1])
        return _lazy_loss(t, mode, i, j, 0 if log_entry else _argmax_row(t, i))
    return ltab[i, j]


@njit(cache=True)
def _lazy_loss(t, mode, i, j, best):  # pragma: no cover - compiled
    """:func:`_lget` of the lazy table ``(t, mode)`` with row ``i``'s argmax ``best``
    already found (:func:`_argmax_row`; any value for ``LAZY_LOG``): for loops over an
    item's classes that find it once, not per class."""
    C = t.shape[1]
    if mode == LAZY_LOG or (mode == LAZY_BOTH and j < C):
        return -t[i, j]
    jj = j if mode == LAZY_ZERO_ONE else j - C
    return 1.0 if jj != best else 0.0


@njit(cache=True)
def _lwidth(ltab):  # pragma: no cover - compiled
    """``ltab.shape[1]`` of an array or a lazy loss tuple."""
    if isinstance(ltab, tuple):
        return ltab[0].shape[1] * (2 if ltab[1] == LAZY_BOTH else 1)
    return ltab.shape[1]





@njit(cache=True)
def _logits(F, i, w, z):  # pragma: no cover - compiled
    """``z_c = F_i(c) . w`` for every class c; returns their maximum."""
    mx = -np.inf
    for c in range(_fdim(F, 1)):
        v = 0.0
        for a in range(_fdim(F, 2)):
            v += _fget(F, i, c, a) * w[a]
        z[c] = v
        if v > mx:
            mx = v
    return mx


@njit(cache=True)
def _exp_shifted(d):  # pragma: no cover - compiled
    """``exp(d)`` for ``d = z_c - max_c z_c``: the class at the maximum has ``d = 0``
    and weight exactly 1 (``exp(0) = 1`` in every libm), so it costs no ``exp`` call
    (half the calls of a two-class softmax; the same bits)."""
    return 1.0 if d == 0.0 else math.exp(d)


@njit(cache=True)
def _softmax_weights(F, i, w, z):  # pragma: no cover - compiled
    """``z_c = exp(F_i(c) . w - max)``, unnormalised softmax weights; returns their sum."""
    mx = _logits(F, i, w, z)
    tot = 0.0
    for c in range(_fdim(F, 1)):
        z[c] = _exp_shifted(z[c] - mx)
        tot += z[c]
    return tot



@njit(cache=True)
def _prior_grad_hess(w, w0, rho, grad, H):  # pragma: no cover - compiled
    """Start ``grad``, ``H`` (K weights) at the Gaussian prior's ``rho (w - w0)``, ``rho I``."""
    K = grad.shape[0]
    for a in range(K):
        grad[a] = rho * (w[a] - w0[a])
        for b in range(K):
            H[a, b] = 0.0
        H[a, a] = rho


@njit(cache=True)
def _symmetrise(H):  # pragma: no cover - compiled
    """Copy the lower triangle of ``H`` onto the upper one."""
    for a in range(H.shape[0]):
        for b in range(a):
            H[b, a] = H[a, b]


@njit(cache=True)
def _logit_objective(F, hidx, hy, k, w, w0, rho):  # pragma: no cover - compiled
    """Negative log posterior (up to a constant) and the log-likelihood."""
    C = _fdim(F, 1)
    ll = 0.0
    z = np.empty(C)
    for j in range(k):
        mx = _logits(F, hidx[j], w, z)
        tot = 0.0
        for c in range(C):
            tot += math.exp(z[c] - mx)
        ll += z[hy[j]] - mx - math.log(tot)
    return -ll + 0.5 * rho * penalty(w, w0, _fdim(F, 2)), ll


@njit(cache=True)
def _logit_grad_hess(F, hidx, hy, k, w, w0, rho, grad, H):  # pragma: no cover - compiled
    C = _fdim(F, 1)
    K = _fdim(F, 2)
    z = np.empty(C)
    mu = np.empty(K)
    _prior_grad_hess(w, w0, rho, grad, H)
    for j in range(k):
        i = hidx[j]
        tot = _softmax_weights(F, i, w, z)
        for a in range(K):
            mu[a] = 0.0
        for c in range(C):
            p = z[c] / tot
            z[c] = p
            for a in range(K):
                mu[a] += p * _fget(F, i, c, a)
        for a in range(K):
            grad[a] -= _fget(F, i, hy[j], a) - mu[a]
        for c in range(C):
            p = z[c]
            for a in range(K):
                fa = _fget(F, i, c, a) - mu[a]
                for b in range(a + 1):
                    H[a, b] += p * fa * (_fget(F, i, c, b) - mu[b])
    _symmetrise(H)


@njit(cache=True)
def _objective(binary, F, X, hidx, hy, hL, k, w, w0, rho):  # pragma: no cover - compiled
    """The logit's (``binary`` False: softmax on ``F``, labels ``hy``) or the graded
    model's (``binary`` True: logistic on ``X``, soft targets ``hL``) objective."""
    if binary:
        return _graded_objective(X, hidx, hL, k, w, w0, rho)
    return _logit_objective(F, hidx, hy, k, w, w0, rho)


@njit(cache=True)
def _grad_hess(binary, F, X, hidx, hy, hL, k, w, w0, rho, grad, H):  # pragma: no cover
    if binary:
        _graded_grad_hess(X, hidx, hL, k, w, w0, rho, grad, H)
    else:
        _logit_grad_hess(F, hidx, hy, k, w, w0, rho, grad, H)


@njit(cache=True)
def _newton_map(binary, F, X, hidx, hy, hL, k, w, w0, rho):  # pragma: no cover - compiled
    """MAP by damped Newton from ``w`` (updated in place; a warm-start row, possibly
    longer than the model's K weights) of the model :func:`_objective` names; returns
    the log Laplace evidence ``loglik - rho/2 |w - w0|^2 + K/2 log rho - 1/2 log det H``."""
    K = X.shape[1] if binary else _fdim(F, 2)
    grad = np.empty(K)
    H = np.empty((K, K))
    Lo = np.empty((K, K))
    d = np.empty(K)
    wt = np.empty(K)
    f, ll = _objective(binary, F, X, hidx, hy, hL, k, w, w0, rho)
    for _ in range(60):
        _grad_hess(binary, F, X, hidx, hy, hL, k, w, w0, rho, grad, H)
        cholesky(H, Lo)
        chol_solve(Lo, grad, d)
        dec = 0.0
        for a in range(K):
            dec += grad[a] * d[a]
        if dec < 1e-12:  # Newton decrement^2: the objective is within ~1e-12 of its minimum
            break
        t = 1.0
        ok = False
        for _ls in range(40):
            for a in range(K):
                wt[a] = w[a] - t * d[a]
            ft, llt = _objective(binary, F, X, hidx, hy, hL, k, wt, w0, rho)
            if ft <= f - 1e-4 * t * dec:
                ok = True
                break
            t *= 0.5
        if not ok:
            break
        for a in range(K):
            w[a] = wt[a]
        f, ll = ft, llt
    _grad_hess(binary, F, X, hidx, hy, hL, k, w, w0, rho, grad, H)
    logdet = cholesky(H, Lo)
    return ll - 0.5 * rho * penalty(w, w0, K) + 0.5 * K * math.log(rho) - 0.5 * logdet


@njit(cache=True)
def logit_map(F, hidx, hy, k, w, w0, rho):  # pragma: no cover - compiled
    """MAP of the logit from ``w`` (updated in place); the log Laplace evidence
    (:func:`_newton_map`). ``w`` has ``F.shape[2]`` entries."""
    return _newton_map(False, F, np.zeros((1, 1)), hidx, hy, np.zeros(1), k, w, w0, rho)


@njit(cache=True)
def _logit_moments(F, ltab, off, w, s, g):  # pragma: no cover - compiled
    """``g_i = E_P[l_i]``, ``s_i = sd_P[l_i]`` under ``P = softmax_c(F_i(c) . w)``, the
    per-class losses ``l_i(c) = ltab[i, off + c]``."""
    # nested: numba prunes a branch on one isinstance at a time (types fixed at compile)
    if isinstance(F, tuple):  # noqa: SIM102
        if isinstance(ltab, tuple):  # lazy (large pools): the same loop, unpacked once
            _lazy_logit_moments(F[0], F[1], F[2], F[3], ltab[0], ltab[1], off, w, s, g)
            return
    N, C = _fdim(F, 0), _fdim(F, 1)
    z = np.empty(C)
    for i in range(N):
        tot = _softmax_weights(F, i, w, z)
        m1 = 0.0
        m2 = 0.0
        for c in range(C):
            p = z[c] / tot
            m1 += p * _lget(ltab, i, off + c)
            m2 += p * _lget(ltab, i, off + c) * _lget(ltab, i, off + c)
        g[i] = m1
        v = m2 - m1 * m1
        s[i] = math.sqrt(v) if v > 0.0 else 0.0


@njit(cache=True)
def _lazy_logit_moments(sl, tl, ms, mt, lt, mode, off, w, s, g):  # pragma: no cover
    """:func:`_logit_moments` of the lazy features ``(sl, tl, ms, mt)`` (:func:`_fget`)
    and loss table ``(lt, mode)`` (:func:`_lget`): the same float operations in the
    same order (:func:`_logits`, :func:`_softmax_weights`), written out in one loop on
    the arrays unpacked once. Reading them through the tuples in a call per item and
    class costs ~7x the arithmetic (each call holds and releases every array: ~0.13
    CPU-s of a refit at 1e6 items)."""
    N, C = sl.shape[0], sl.shape[1]
    K = C + 1
    z = np.empty(C)
    for i in range(N):
        mx = -np.inf
        for c in range(C):
            v = 0.0
            for a in range(K):
                if a == 0:
                    f = sl[i, c] - ms[c]
                elif a == 1:
                    f = tl[i, c] - mt[c]
                else:
                    f = 1.0 if c == a - 1 else 0.0
                v += f * w[a]
            z[c] = v
            if v > mx:
                mx = v
        tot = 0.0
        for c in range(C):
            z[c] = _exp_shifted(z[c] - mx)
            tot += z[c]
        best = 0 if mode == LAZY_LOG else _argmax_row(lt, i)
        m1 = 0.0
        m2 = 0.0
        for c in range(C):
            p = z[c] / tot
            L = _lazy_loss(lt, mode, i, off + c, best)
            m1 += p * L
            m2 += p * L * L
        g[i] = m1
        v = m2 - m1 * m1
        s[i] = math.sqrt(v) if v > 0.0 else 0.0


@njit(cache=True)
def logit_predict(F, ltab, w, s, g):  # pragma: no cover - compiled
    """``g_i = E_P[l_i]`` and ``s_i = sd_P[l_i]`` under ``P = softmax_c(F_i(c) . w)``."""
    _logit_moments(F, ltab, 0, w, s, g)


@njit(cache=True)
def both_predict(F, ltab, w, s, g, aux):  # pragma: no cover - compiled
    """The two-metric design's predictions under ``P = softmax_c(F_i(c) . w)``.

    ``ltab`` is ``(N, 2C)``: the first metric's per-class losses, then the second's.
    Fills ``g`` and ``aux[0]`` with the first metric's ``E_P[l]`` and ``sd_P[l]``,
    ``aux[1]``, ``aux[2]`` with the second's, and ``s`` with the combined score
    ``sqrt(w1 sd1^2 + w2 sd2^2)``, ``w_k = 1 / V_k``, ``V_k = sum_i sd_k,i^2 +
    sum_i (g_k,i - mean g_k)^2`` the model's prediction of ``N`` times the pool
    variance of metric k's loss (what uniform sampling pays per label). Returns
    ``(w1, w2)`` (0 for a metric the model predicts constant).
    """
    N = _fdim(F, 0)
    _logit_moments(F, ltab, 0, w, aux[0], g)
    _logit_moments(F, ltab, _fdim(F, 1), w, aux[2], aux[1])
    m1 = 0.0
    m2 = 0.0
    for i in range(N):
        m1 += g[i]
        m2 += aux[1, i]
    m1 /= N
    m2 /= N
    v1 = 0.0
    v2 = 0.0
    for i in range(N):
        v1 += aux[0, i] * aux[0, i] + (g[i] - m1) * (g[i] - m1)
        v2 += aux[2, i] * aux[2, i] + (aux[1, i] - m2) * (aux[1, i] - m2)
    w1 = 1.0 / v1 if v1 > 0.0 else 0.0
    w2 = 1.0 / v2 if v2 > 0.0 else 0.0
    for i in range(N):
        s[i] = math.sqrt(w1 * aux[0, i] * aux[0, i] + w2 * aux[2, i] * aux[2, i])
    return w1, w2


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
def total(v):  # pragma: no cover - compiled
    """``sum of v`` in index order (:func:`prepare`'s sums when every item remains)."""
    tot = 0.0
    for i in range(v.shape[0]):
        tot += v[i]
    return tot


@njit(cache=True)
def rest_sum(v, rem):  # pragma: no cover - compiled
    """``sum of v`` over the remaining items (in index order, as the draws sum)."""
    tot = 0.0
    for i in range(v.shape[0]):
        if rem[i]:
            tot += v[i]
    return tot





@njit(cache=True)
def _graded_objective(X, hidx, hL, k, w, w0, rho):  # pragma: no cover - compiled
    """Negative log posterior (up to a constant) and the (quasi-)log-likelihood
    ``sum_j y_j eta_j - log(1 + e^eta_j)``, ``eta_j = X_{i_j} . w``, ``y_j = clip(L_j, 0, 1)``."""
    ll = 0.0
    for j in range(k):
        eta = linear(X, hidx[j], w)
        y = min(max(hL[j], 0.0), 1.0)
        ll += y * eta - log1pexp(eta)
    return -ll + 0.5 * rho * penalty(w, w0, X.shape[1]), ll


@njit(cache=True)
def _graded_grad_hess(X, hidx, hL, k, w, w0, rho, grad, H):  # pragma: no cover - compiled
    K = X.shape[1]
    _prior_grad_hess(w, w0, rho, grad, H)
    for j in range(k):
        i = hidx[j]
        p = sigmoid(linear(X, i, w))
        y = min(max(hL[j], 0.0), 1.0)
        v = p * (1.0 - p)
        for a in range(K):
            grad[a] -= (y - p) * X[i, a]
            for b in range(a + 1):
                H[a, b] += v * X[i, a] * X[i, b]
    _symmetrise(H)


@njit(cache=True)
def graded_map(X, hidx, hL, k, w, w0, rho):  # pragma: no cover - compiled
    """MAP of the binary logistic model from ``w`` (updated in place); the log Laplace
    evidence (:func:`_newton_map`; exact for 0/1 losses, a quasi-evidence for graded ones)."""
    return _newton_map(True, np.zeros((1, 1, 1)), X, hidx, np.zeros(1, dtype=np.int64), hL,
                       k, w, w0, rho)


@njit(cache=True)
def graded_predict(X, w, s, g):  # pragma: no cover - compiled
    """``g_i = P_w(wrong | x_i) = sigmoid(X_i . w)`` and ``s_i = sqrt(g_i (1 - g_i))``."""
    for i in range(X.shape[0]):
        p = sigmoid(linear(X, i, w))
        g[i] = p
        v = p * (1.0 - p)
        s[i] = math.sqrt(v) if v > 0.0 else 0.0


@njit(cache=True)
def _ridge(Phi, hidx, yv, k, rhos, beta):  # pragma: no cover - compiled
    """Bayesian ridge of ``yv[:k]`` on ``Phi[hidx[:k]]`` with an unpenalised intercept.

    Prior ``beta ~ N(0, sigma^2 / rho I)``, sigma^2 profiled out; rho from ``rhos``
    by the marginal likelihood ``-(k-1)/2 log sigma_hat^2 - 1/2 log det(I + X'X/rho)``
    (X, y centred on the labelled mean). ``beta[0]`` is the intercept (in the
    parametrisation ``y = beta0 + (Phi - xbar) . beta[1:]``, reported back as
    ``y = beta0' + Phi . beta[1:]``). Returns the chosen rho's index.
    """
    D = Phi.shape[1]
    for a in range(D + 1):
        beta[a] = 0.0
    if k == 0:
        return 0
    xbar = np.zeros(D)
    ybar = 0.0
    for j in range(k):
        ybar += yv[j]
        for a in range(D):
            xbar[a] += Phi[hidx[j], a]
    ybar /= k
    for a in range(D):
        xbar[a] /= k
    beta[0] = ybar
    if k < 2:
        return 0
    XtX = np.zeros((D, D))
    Xty = np.zeros(D)
    yy = 0.0
    for j in range(k):
        yc = yv[j] - ybar
        yy += yc * yc
        for a in range(D):
            xa = Phi[hidx[j], a] - xbar[a]
            Xty[a] += xa * yc
            for b in range(a + 1):
                XtX[a, b] += xa * (Phi[hidx[j], b] - xbar[b])
    _symmetrise(XtX)
    A = np.empty((D, D))
    Lo = np.empty((D, D))
    bt = np.empty(D)
    best = -np.inf
    best_r = 0
    for r in range(rhos.shape[0]):
        rho = rhos[r]
        for a in range(D):
            for b in range(D):
                A[a, b] = XtX[a, b]
            A[a, a] += rho
        logdet = cholesky(A, Lo)
        chol_solve(Lo, Xty, bt)
        rss = yy
        for a in range(D):
            rss -= Xty[a] * bt[a]  # y'(I + X X'/rho)^{-1} y = y'y - y'X (X'X + rho I)^{-1} X'y
        sig2 = max(rss, 1e-300) / k
        # log det(I + X'X/rho) = log det(X'X + rho I) - D log rho
        ev = -0.5 * (k - 1) * math.log(sig2) - 0.5 * (logdet - D * math.log(rho))
        if ev > best:
            best = ev
            best_r = r
            for a in range(D):
                beta[a + 1] = bt[a]
    b0 = ybar
    for a in range(D):
        b0 -= xbar[a] * beta[a + 1]
    beta[0] = b0
    return best_r


@njit(cache=True)
def _ridge_predict(Phi, beta, out):  # pragma: no cover - compiled
    N, D = Phi.shape
    for i in range(N):
        v = beta[0]
        for a in range(D):
            v += Phi[i, a] * beta[a + 1]
        out[i] = v


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
def _best_map(binary, F, X, hidx, hy, hL, k, W, w0, rhos):  # pragma: no cover - compiled
    """The MAP of the model :func:`_newton_map` names at every ridge ``rhos[r]``, from
    (and into) the warm start ``W[r]``; returns the index of the largest evidence."""
    best = -np.inf
    best_r = 0
    for r in range(rhos.shape[0]):
        ev = _newton_map(binary, F, X, hidx, hy, hL, k, W[r], w0, rhos[r])
        if ev > best:
            best = ev
            best_r = r
    return best_r


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
