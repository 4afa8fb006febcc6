"""The history experiment's uniform-draw baselines, fast: PPI++, cross-PPI, IRT-style.

Same computation as the per-run loop this replaced (kept as :func:`baselines_reference`
for the test that compares them): per run a uniform random order of the pool; at each
budget ``m`` the design's model (MAP of the ridge-logistic model on the labelled losses,
ridge by Laplace evidence over :data:`~activetest.stats.adaptive.RIDGES`, prior mean
``w0``) is fitted on the first ``m`` items and on each cross-fitting fold of them, and

* PPI++: ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` (the package itself,
  power-tuned lambda) with the full fit predicting every pool item;
* cross-PPI: ``ppi_py.crossppi_mean_pointestimate`` with the fold fits;
* IRT-style: labelled losses plus the full fit's predictions of the rest, and its
  Bernoulli plug-in interval.

What is faster, and only that: the model fitting is one compiled loop per run
(:func:`_run_fits`: every budget, the full fit and the folds, every ridge, warm-started
from the previous budget's weights), whose Newton steps build the Hessian from the
labelled rows gathered into one block by BLAS (``np.dot``) instead of a row-at-a-time
triangle; and the PPI++ calls take every run of a chunk at once as the columns of a
d-dimensional mean with ``lam_optim_mode="element"`` (a lambda per column, which is
each run's own power-tuned lambda: ppi_py's per-coordinate formula). The MAP is the
same (the Newton stopping rule is the design kernel's, squared decrement < 1e-12);
the numbers agree with the reference loop to the fit's precision (about 1e-7 in a
prediction; ``tests/experiments/test_history_baselines.py``).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from activetest.stats.adaptive import RIDGES
from activetest.stats.feature_design import fit_predict
from activetest.stats.kernels import njit
from activetest.stats.numeric_kernels import (
    chol_solve,
    cholesky,
    linear,
    log1pexp,
    penalty,
    sigmoid,
)

__all__ = ["BaselineRuns", "baselines", "baselines_reference"]

#: Runs whose fits are held in memory at once (predictions ``runs x budgets x 3 x N``).
CHUNK = 50


@dataclass(frozen=True)
class BaselineRuns:
    """Per run (rows) and budget (columns): the estimates and interval coverages.

    Attributes:
        ppi, cross, irt: PPI++, cross-PPI and IRT-style estimates.
        cov_ppi, cov_irt: whether PPI++'s (ppi_py) and the IRT-style interval cover the
            truth.
    """

    ppi: np.ndarray
    cross: np.ndarray
    irt: np.ndarray
    cov_ppi: np.ndarray
    cov_irt: np.ndarray


@njit(cache=True)
def _objective(Xl, y, w, w0, rho):  # pragma: no cover - compiled
    """Negative log posterior and log likelihood (as ``ak._graded_objective``)."""
    eta = np.dot(Xl, w)
    ll = 0.0
    for j in range(Xl.shape[0]):
        ll += y[j] * eta[j] - log1pexp(eta[j])
    return -ll + 0.5 * rho * penalty(w, w0, Xl.shape[1]), ll


@njit(cache=True)
def _grad_hess(Xl, y, w, w0, rho, grad, H):  # pragma: no cover - compiled
    """Gradient and Hessian of :func:`_objective`; the Hessian by one BLAS product."""
    K = Xl.shape[1]
    eta = np.dot(Xl, w)
    k = Xl.shape[0]
    r = np.empty(k)
    Xv = np.empty((k, K))
    for j in range(k):
        p = sigmoid(eta[j])
        r[j] = y[j] - p
        v = p * (1.0 - p)
        for a in range(K):
            Xv[j, a] = v * Xl[j, a]
    gl = np.dot(Xl.T, r)
    Hl = np.dot(Xl.T, Xv)
    for a in range(K):
        grad[a] = rho * (w[a] - w0[a]) - gl[a]
        for b in range(K):
            H[a, b] = Hl[a, b]
        H[a, a] += rho


@njit(cache=True)
def _map(Xl, y, w, w0, rho):  # pragma: no cover - compiled
    """MAP by damped Newton from ``w`` (in place), the stopping rule and the log Laplace
    evidence of ``ak._newton_map``."""
    K = Xl.shape[1]
    grad = np.empty(K)
    H = np.empty((K, K))
    Lo = np.empty((K, K))
    d = np.empty(K)
    wt = np.empty(K)
    f, ll = _objective(Xl, y, w, w0, rho)
    for _ in range(60):
        _grad_hess(Xl, y, w, w0, rho, grad, H)
        cholesky(H, Lo)
        chol_solve(Lo, grad, d)
        dec = 0.0
        for a in range(K):
            dec += grad[a] * d[a]
        if dec < 1e-12:
            break
        t = 1.0
        ok = False
        for _ls in range(40):
            for a in range(K):
                wt[a] = w[a] - t * d[a]
            ft, llt = _objective(Xl, y, wt, w0, rho)
            if ft <= f - 1e-4 * t * dec:
                ok = True
                break
            t *= 0.5
        if not ok:
            break
        for a in range(K):
            w[a] = wt[a]
        f, ll = ft, llt
    _grad_hess(Xl, y, w, w0, rho, grad, H)
    logdet = cholesky(H, Lo)
    return ll - 0.5 * rho * penalty(w, w0, K) + 0.5 * K * math.log(rho) - 0.5 * logdet


@njit(cache=True)
def _fit(X, rows, L, w0, rhos, warm, out):  # pragma: no cover - compiled
    """Fit on ``rows`` for every ridge (``warm[r]`` updated), predict with the best
    evidence's weights into ``out``."""
    k = rows.shape[0]
    K = X.shape[1]
    Xl = np.empty((k, K))
    y = np.empty(k)
    for j in range(k):
        for a in range(K):
            Xl[j, a] = X[rows[j], a]
        y[j] = min(max(L[rows[j]], 0.0), 1.0)
    best = -np.inf
    rb = 0
    for r in range(rhos.shape[0]):
        ev = _map(Xl, y, warm[r], w0, rhos[r])
        if ev > best:
            best = ev
            rb = r
    for i in range(X.shape[0]):
        out[i] = sigmoid(linear(X, i, warm[rb]))


@njit(cache=True)
def _run_fits(X, L, perms, budgets, rhos, folds, w0, G, GF):  # pragma: no cover - compiled
    """For each run (a row of ``perms``) and budget: the full fit's predictions into
    ``G[run, b]`` and fold k's (fitted on the first m items whose position mod ``folds``
    is not k) into ``GF[run, b, k]``; warm starts carried from budget to budget."""
    R = perms.shape[0]
    K = X.shape[1]
    nr = rhos.shape[0]
    for run in range(R):
        warm = np.empty((folds + 1, nr, K))
        for f in range(folds + 1):
            for r in range(nr):
                warm[f, r] = w0
        for b in range(budgets.shape[0]):
            m = budgets[b]
            lab = perms[run, :m]
            _fit(X, lab, L, w0, rhos, warm[folds], G[run, b])
            for f in range(folds):
                rows = np.empty(m - (m - f + folds - 1) // folds, dtype=np.int64)
                n = 0
                for j in range(m):
                    if j % folds != f:
                        rows[n] = lab[j]
                        n += 1
                _fit(X, rows[:n], L, w0, rhos, warm[f], GF[run, b, f])


def _one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """One BLAS thread for the compiled fits (numba's ``np.dot`` calls scipy's BLAS;
    several threads on matrices this small only wait on each other on a shared machine)."""
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (loaded before the limit is set)
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scipy/threadpoolctl come with ppi-python
        return contextlib.nullcontext()
    return threadpool_limits(1)


def _one(x: object) -> float:
    return float(np.asarray(x).reshape(-1)[0])


def baselines(X: np.ndarray, L: np.ndarray, budgets: tuple[int, ...], n_runs: int,
              rng: np.random.Generator, *, folds: int = 2, w0: np.ndarray | None = None,
              chunk: int = CHUNK) -> BaselineRuns:
    """PPI++, cross-PPI and IRT-style on ``n_runs`` uniform orders (``rng.permutation(N)``
    each, in turn) at each budget (module docstring).

    Args:
        X: ``(N, K)`` the design's model matrix; L: ``(N,)`` the target's losses.
        budgets: increasing label counts; folds: cross-fitting folds of cross-PPI.
        w0: the prior mean (default ``(1, 0, ...)``: the offset column's weight 1).
    """
    from ppi_py import crossppi_mean_pointestimate, ppi_mean_ci, ppi_mean_pointestimate

    X = np.ascontiguousarray(X, dtype=np.float64)
    L = np.ascontiguousarray(L, dtype=np.float64)
    N, K = X.shape
    if w0 is None:
        w0 = np.zeros(K)
        w0[0] = 1.0
    truth = L.mean()
    B = len(budgets)
    bud = np.asarray(budgets, dtype=np.int64)
    rhos = np.asarray(RIDGES, dtype=np.float64)
    out = {k: np.empty((n_runs, B)) for k in ("ppi", "cross", "irt")}
    cov_ppi = np.empty((n_runs, B), dtype=bool)
    cov_irt = np.empty((n_runs, B), dtype=bool)
    for c0 in range(0, n_runs, chunk):
        R = min(chunk, n_runs - c0)
        perms = np.stack([rng.permutation(N) for _ in range(R)]).astype(np.int64)
        G = np.empty((R, B, N))
        GF = np.empty((R, B, folds, N))
        with _one_blas_thread():
            _run_fits(X, L, perms, bud, rhos, folds, np.asarray(w0, dtype=np.float64), G, GF)
        rr = slice(c0, c0 + R)
        ar = np.arange(R)[:, None]
        for b, m in enumerate(budgets):
            lab = perms[:, :m]
            g = G[:, b]
            Y, Yh, Yu = L[lab].T, g[ar, lab].T, g.T
            out["ppi"][rr, b] = ppi_mean_pointestimate(Y, Yh, Yu, lam_optim_mode="element")
            lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam_optim_mode="element")
            cov_ppi[rr, b] = (np.asarray(lo).reshape(-1) <= truth) & (
                truth <= np.asarray(hi).reshape(-1))
            fold = np.arange(m) % folds
            for i in range(R):
                yh = np.empty(m)
                for k in range(folds):
                    yh[fold == k] = GF[i, b, k, lab[i, fold == k]]
                out["cross"][c0 + i, b] = _one(crossppi_mean_pointestimate(
                    L[lab[i]], yh, GF[i, b].T))
            unl = np.ones((R, N), dtype=bool)
            unl[ar, lab] = False
            e = (L[lab].sum(axis=1) + np.where(unl, g, 0.0).sum(axis=1)) / N
            half = 1.96 * np.sqrt(np.where(unl, g * (1 - g), 0.0).sum(axis=1)) / N
            out["irt"][rr, b] = e
            cov_irt[rr, b] = np.abs(e - truth) <= half
    return BaselineRuns(out["ppi"], out["cross"], out["irt"], cov_ppi, cov_irt)


def baselines_reference(X: np.ndarray, L: np.ndarray, budgets: tuple[int, ...],
                        n_runs: int, rng: np.random.Generator, *, folds: int = 2
                        ) -> BaselineRuns:
    """The per-run loop of the history experiment before 2026-12-02 (one
    :func:`~activetest.stats.feature_design.fit_predict` and one ppi_py call per run,
    budget and fold), kept to check :func:`baselines` against."""
    from ppi_py import crossppi_mean_pointestimate, ppi_mean_ci, ppi_mean_pointestimate

    N, K = X.shape
    truth = L.mean()
    w0 = np.zeros(K)
    w0[0] = 1.0
    B = len(budgets)
    e_ppi, e_irt, e_cross = (np.empty((n_runs, B)) for _ in range(3))
    c_ppi = np.empty((n_runs, B), dtype=bool)
    c_irt = np.empty((n_runs, B), dtype=bool)
    nr = len(RIDGES)
    for r in range(n_runs):
        perm = rng.permutation(N)
        warm = np.tile(w0, (folds + 1, nr, 1))
        for b, m in enumerate(budgets):
            lab = perm[:m]
            g = fit_predict(X, lab, L[lab], warm=warm[folds])
            e_ppi[r, b] = _one(ppi_mean_pointestimate(L[lab], g[lab], g))
            lo, hi = ppi_mean_ci(L[lab], g[lab], g, alpha=0.05)
            c_ppi[r, b] = _one(lo) <= truth <= _one(hi)
            fold = np.arange(m) % folds
            yh = np.empty(m)
            yh_all = np.empty((N, folds))
            for k in range(folds):
                gk = fit_predict(X, lab[fold != k], L[lab[fold != k]], warm=warm[k])
                yh[fold == k] = gk[lab[fold == k]]
                yh_all[:, k] = gk
            e_cross[r, b] = _one(crossppi_mean_pointestimate(L[lab], yh, yh_all))
            unl = perm[m:]
            e_irt[r, b] = (L[lab].sum() + g[unl].sum()) / N
            half = 1.96 * np.sqrt((g[unl] * (1 - g[unl])).sum()) / N
            c_irt[r, b] = abs(e_irt[r, b] - truth) <= half
    return BaselineRuns(e_ppi, e_cross, e_irt, c_ppi, c_irt)
