"""The models an adaptive design fits between draws (numba), and the tables they read.

:mod:`activetest.stats._adaptive_kernels` runs a design one draw at a time and refits
it on the labels so far; this module holds what a refit fits and predicts:

* the per-item tables the calibrated designs read, arrays or "lazy" tuples computed
  entry by entry on large pools (the accessors below);
* the calibrated logit (a multinomial logit on label-free features, MAP by Newton,
  ridge by Laplace evidence: :func:`logit_map`) and its predictions of each item's
  expected loss and spread (:func:`logit_predict`, :func:`both_predict` for two
  metrics at once);
* the graded design's binary logistic model of a loss in [0, 1] (:func:`graded_map`,
  :func:`graded_predict`);
* the surrogate-only design's Bayesian ridge regressions (:func:`_ridge`);
* sums over the pool and over the remaining items (:func:`total`, :func:`rest_sum`).

Every function is a lazy compiled kernel (:mod:`activetest.stats.kernels`); the design
loop calls them from compiled code, by name.
"""

from __future__ import annotations

import math

import numpy as np

from activetest.stats.kernels import njit
from activetest.stats.numeric_kernels import (
    chol_solve,
    cholesky,
    linear,
    log1pexp,
    penalty,
    sigmoid,
)

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
