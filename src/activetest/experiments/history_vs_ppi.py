"""The neighbours design against PPI++ with the same features, the same model and labels.

``python -m activetest.experiments.history_vs_ppi --matrix bbh --scenario random
--targets 30 --runs 250 --blocks 4``

Held-out models, history, rank and eps choice exactly as in
:mod:`activetest.experiments.history_neighbours`. Per held-out model:

* ``design``: the feature design with the similarity-weighted neighbours' column
  (:mod:`activetest.stats.neighbours`, prior weight 1), adaptive LURE; its fixed-budget
  interval at each budget and its anytime confidence sequence over 30..max (both 95%,
  as :mod:`activetest.experiments.history`);
* ``PPI++ (neighbours)``: uniform draws; at each budget the neighbours' column computed
  from those uniform labels exactly as the design computes it (the history models
  weighted by their agreement with the labels, leave-one-out on each labelled item),
  appended to the same history features, the same ridge-logistic model (MAP, ridge by
  Laplace evidence, prior mean 1 on the offset and on the column) fitted on the labels
  and predicting every pool item; the estimate and interval by ``ppi_py`` itself
  (``ppi_mean_pointestimate`` / ``ppi_mean_ci``, power-tuned lambda), as in
  :mod:`activetest.experiments.history_baselines`;
* ``PPI++ (today's features)``: the same labels (the same uniform draws), the model
  without the column (difficulty and factors: the history experiment's PPI++);
* ``IRT-style`` with either feature set: the labelled losses plus the fitted model's
  predictions of the rest, no correction, and its Bernoulli plug-in interval;
* with ``--cross``, ``cross-PPI (neighbours)``: the same uniform draws (run for run), 2-fold
  cross-fitting (:data:`FOLDS`, the history experiment's cross-PPI): fold ``f``'s model
  is the same model fitted on the labelled items of the other fold, its neighbours'
  column computed from those labels only (leave-one-out on them, as the design does);
  the estimate and interval by ``ppi_py`` itself (``crossppi_mean_pointestimate`` /
  ``crossppi_mean_ci``): each labelled item predicted by the model not fitted on it.
  Its blocks are cached on their own (``history-crossppi-<matrix>-<scenario>-<key>.npz``,
  keyed by the same parameters and block and the cross-PPI behaviour probe), so adding
  it leaves every cached block of the other methods as it is.

Runs come in blocks (``--runs`` each, seeded by block), each block cached on its own
(``experiments/cache/history-vsppi-<matrix>-<scenario>-<key>.npz``, the key of the data
file, the parameters, the block and the behaviour probe); the tables add the blocks
``0..--blocks-1`` (sums of squared errors, coverage counts), so the run count grows by
running more blocks and the tables always say how many runs they hold.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from activetest.experiments.coverage import ASYMPTOTIC_CS
from activetest.experiments.history_baselines import CHUNK, _fit, _one_blas_thread
from activetest.experiments.probe import Probe, probe_id
from activetest.stats.adaptive import RIDGES, simulate_design
from activetest.stats.confseq import MIN_LABELS, asymptotic_cs
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.intervals import fixed_interval_curve
from activetest.stats.kernels import njit
from activetest.stats.neighbours import NeighbourHistory, column_kernel

__all__ = ["BUDGETS", "CROSS_SUMS", "FOLDS", "SUMS", "behaviour_probe", "block", "cache_key",
           "combine", "cross_behaviour_probe", "cross_block", "cross_cache_key", "cross_fits",
           "cross_methods", "main", "render", "uniform_fits", "uniform_methods"]

#: Budgets of the comparison (the goal's 100 labels and below).
BUDGETS = (25, 50, 100)
#: Folds of the cross-fitted PPI (``--cross``), as the history experiment's cross-PPI.
FOLDS = 2
#: Per held-out model and budget: sums over a block's runs (squared errors, errors,
#: interval coverage counts). ``sse_*`` squared errors, ``err_*`` errors, ``cov_*`` counts.
SUMS = ("sse_design", "sse_ppi_nb", "sse_ppi", "sse_irt_nb", "sse_irt", "err_irt_nb",
        "err_irt", "cov_fixed", "cov_ppi_nb", "cov_ppi", "cov_irt_nb", "cov_irt")
#: Per held-out model and budget: sums over a cross-PPI block's runs (``--cross``,
#: :func:`cross_block`): squared errors, errors, ppi_py interval coverage counts.
CROSS_SUMS = ("sse_cross_nb", "err_cross_nb", "cov_cross_nb")


@njit(cache=True)
def _uniform_fits(X, L, perms, budgets, rhos, w0, col, PT, LP, L1P, base, eps, G
                  ):  # pragma: no cover - compiled
    """Per run (a row of ``perms``, a uniform order of the pool) and budget ``m``: with
    ``col >= 0`` the neighbours' column after the first ``m`` labels (as the design
    computes it before a refit, leave-one-out on the labelled items) into column ``col``
    of a copy of ``X``; then the model fitted on the first ``m`` items (every ridge,
    warm-started from the previous budget) predicting every item into ``G[run, b]``."""
    R = perms.shape[0]
    N = X.shape[0]
    K = X.shape[1]
    nr = rhos.shape[0]
    H = PT.shape[0]
    Xr = X.copy()
    lw = np.empty(H)
    cnt = np.zeros(1, dtype=np.int64)
    keep = np.empty(H, dtype=np.int64)
    wv = np.empty(H)
    acc = np.empty(N)
    xc = np.empty(N)
    hL = np.empty(N)
    for run in range(R):
        warm = np.empty((nr, K))
        for r in range(nr):
            warm[r] = w0
        for h in range(H):
            lw[h] = 0.0
        cnt[0] = 0
        order = perms[run]
        for j in range(N):
            hL[j] = L[order[j]]
        for b in range(budgets.shape[0]):
            m = budgets[b]
            if col >= 0:
                column_kernel(PT, LP, L1P, base, eps, order, hL, m, lw, cnt, keep, wv, acc, xc)
                for i in range(N):
                    Xr[i, col] = xc[i]
            _fit(Xr, order[:m], L, w0, rhos, warm, G[run, b])


def uniform_fits(X: np.ndarray, w0: np.ndarray, L: np.ndarray, perms: np.ndarray,
                 budgets: tuple[int, ...], neighbours: NeighbourHistory | None = None
                 ) -> np.ndarray:
    """``(R, B, N)`` P(wrong) of the model ``X`` (prior mean ``w0``) fitted on the first
    ``budgets[b]`` items of each order ``perms[r]``; with ``neighbours`` ``X``'s last
    column is replaced by the neighbours' column from those labels (module docstring)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    L = np.ascontiguousarray(L, dtype=np.float64)
    perms = np.ascontiguousarray(perms, dtype=np.int64)
    R, N = perms.shape[0], X.shape[0]
    G = np.empty((R, len(budgets), N))
    if neighbours is None:
        col, PT, LP, L1P = -1, np.zeros((0, N)), np.zeros((N, 0)), np.zeros((N, 0))
        base, eps = np.zeros(N), 0.1
    else:
        nh = neighbours
        col, PT, LP, L1P, base, eps = X.shape[1] - 1, nh.PT, nh.log_p, nh.log_1mp, nh.base, nh.eps
    with _one_blas_thread():
        _uniform_fits(X, L, perms, np.asarray(budgets, dtype=np.int64),
                      np.asarray(RIDGES, dtype=np.float64), np.asarray(w0, dtype=np.float64),
                      col, PT, LP, L1P, base, float(eps), G)
    return G


def uniform_methods(G: np.ndarray, L: np.ndarray, perms: np.ndarray, budgets: tuple[int, ...]
                    ) -> dict[str, np.ndarray]:
    """``(R, B)`` PPI++ (``ppi_py``: estimate, interval coverage) and IRT-style (estimate,
    Bernoulli plug-in coverage) from the fits ``G`` of :func:`uniform_fits`: keys
    ``ppi``, ``cov_ppi``, ``irt``, ``cov_irt``."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    R, B, N = G.shape
    truth = L.mean()
    out = {k: np.empty((R, B)) for k in ("ppi", "cov_ppi", "irt", "cov_irt")}
    ar = np.arange(R)[:, None]
    for b, m in enumerate(budgets):
        lab = perms[:, :m]
        g = G[:, b]
        Y, Yh, Yu = L[lab].T, g[ar, lab].T, g.T
        out["ppi"][:, b] = ppi_mean_pointestimate(Y, Yh, Yu, lam_optim_mode="element")
        lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam_optim_mode="element")
        out["cov_ppi"][:, b] = (np.asarray(lo).reshape(-1) <= truth) & (
            truth <= np.asarray(hi).reshape(-1))
        unl = np.ones((R, N), dtype=bool)
        unl[ar, lab] = False
        e = (L[lab].sum(axis=1) + np.where(unl, g, 0.0).sum(axis=1)) / N
        half = 1.96 * np.sqrt(np.where(unl, g * (1 - g), 0.0).sum(axis=1)) / N
        out["irt"][:, b] = e
        out["cov_irt"][:, b] = np.abs(e - truth) <= half
    return out


@njit(cache=True)
def _cross_fits(X, L, perms, budgets, rhos, w0, folds, col, PT, LP, L1P, base, eps, GF
                ):  # pragma: no cover - compiled
    """Per run (a row of ``perms``), budget ``m`` and fold ``f``: the model fitted on the
    first ``m`` items whose position mod ``folds`` is not ``f`` (every ridge, warm-started
    from the previous budget's fit of the same fold), with ``col >= 0`` its column ``col``
    the neighbours' column from those items' labels alone (leave-one-out on them, as the
    design computes it; the fold's own items get the column of labels they are not in),
    predicting every item into ``GF[run, b, f]``."""
    R = perms.shape[0]
    N = X.shape[0]
    K = X.shape[1]
    nr = rhos.shape[0]
    H = PT.shape[0]
    Xr = X.copy()
    lw = np.empty((folds, H))
    cnt = np.zeros((folds, 1), dtype=np.int64)
    keep = np.empty(H, dtype=np.int64)
    wv = np.empty(H)
    acc = np.empty(N)
    xc = np.empty(N)
    tr = np.empty((folds, N), dtype=np.int64)
    trL = np.empty((folds, N))
    for run in range(R):
        order = perms[run]
        warm = np.empty((folds, nr, K))
        for f in range(folds):
            for r in range(nr):
                warm[f, r] = w0
            for h in range(H):
                lw[f, h] = 0.0
            cnt[f, 0] = 0
            n = 0
            for j in range(N):
                if j % folds != f:
                    tr[f, n] = order[j]
                    trL[f, n] = L[order[j]]
                    n += 1
        for b in range(budgets.shape[0]):
            m = budgets[b]
            for f in range(folds):
                nf = m - (m - f + folds - 1) // folds  # positions j < m with j % folds != f
                if col >= 0:
                    column_kernel(PT, LP, L1P, base, eps, tr[f], trL[f], nf, lw[f], cnt[f], keep,
                                  wv, acc, xc)
                    for i in range(N):
                        Xr[i, col] = xc[i]
                _fit(Xr, tr[f, :nf], L, w0, rhos, warm[f], GF[run, b, f])


def cross_fits(X: np.ndarray, w0: np.ndarray, L: np.ndarray, perms: np.ndarray,
               budgets: tuple[int, ...], neighbours: NeighbourHistory | None = None,
               folds: int = FOLDS) -> np.ndarray:
    """``(R, B, folds, N)`` P(wrong) of the model ``X`` (prior mean ``w0``) fitted, for each
    fold ``f``, on the first ``budgets[b]`` items of ``perms[r]`` whose position mod
    ``folds`` is not ``f``; with ``neighbours`` ``X``'s last column is replaced by the
    neighbours' column from those labels only (:func:`_cross_fits`). Without it the fold
    fits of :func:`activetest.experiments.history_baselines.baselines` (the history
    experiment's cross-PPI)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    L = np.ascontiguousarray(L, dtype=np.float64)
    perms = np.ascontiguousarray(perms, dtype=np.int64)
    R, N = perms.shape[0], X.shape[0]
    GF = np.empty((R, len(budgets), folds, N))
    if neighbours is None:
        col, PT, LP, L1P = -1, np.zeros((0, N)), np.zeros((N, 0)), np.zeros((N, 0))
        base, eps = np.zeros(N), 0.1
    else:
        nh = neighbours
        col, PT, LP, L1P, base, eps = X.shape[1] - 1, nh.PT, nh.log_p, nh.log_1mp, nh.base, nh.eps
    with _one_blas_thread():
        _cross_fits(X, L, perms, np.asarray(budgets, dtype=np.int64),
                    np.asarray(RIDGES, dtype=np.float64), np.asarray(w0, dtype=np.float64),
                    int(folds), col, PT, LP, L1P, base, float(eps), GF)
    return GF


def cross_methods(GF: np.ndarray, L: np.ndarray, perms: np.ndarray, budgets: tuple[int, ...]
                  ) -> dict[str, np.ndarray]:
    """``(R, B)`` cross-PPI from the fold fits ``GF`` of :func:`cross_fits`, by ``ppi_py``
    itself, one call per run: ``cross`` (``crossppi_mean_pointestimate``: each labelled
    item predicted by the fold model not fitted on it, every pool item by the folds'
    mean), ``low``/``high`` (``crossppi_mean_ci`` at 95%) and ``cov_cross`` (1 where
    that interval covers the truth, the pool's mean loss)."""
    from ppi_py import crossppi_mean_ci, crossppi_mean_pointestimate

    R, B, folds, _ = GF.shape
    truth = L.mean()
    out = {k: np.empty((R, B)) for k in ("cross", "cov_cross", "low", "high")}
    for b, m in enumerate(budgets):
        fold = np.arange(m) % folds
        for r in range(R):
            lab = perms[r, :m]
            yh = GF[r, b, fold, lab]
            yu = GF[r, b].T
            out["cross"][r, b] = float(np.ravel(crossppi_mean_pointestimate(L[lab], yh, yu))[0])
            lo, hi = crossppi_mean_ci(L[lab], yh, yu, alpha=0.05)
            out["low"][r, b], out["high"][r, b] = float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
    out["cov_cross"] = ((out["low"] <= truth) & (truth <= out["high"])).astype(np.float64)
    return out


def _features(H: np.ndarray, seed: int, rank: int | None = None, eps: float | None = None
              ) -> tuple[object, object]:
    from activetest.stats.feature_design import history_features
    from activetest.stats.neighbours import neighbour_history

    hf = history_features(H, rank=rank, random_state=seed)
    return hf, neighbour_history(H, p_correct=hf.p_correct, eps=eps, random_state=seed)


@functools.lru_cache(maxsize=4)
def _setup(root: str, matrix: str, scenario: str, n_targets: int, seed: int,
           fingerprint: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, object, object, dict]:
    """The matrix, held-out rows, history mask and history features of a scenario,
    computed once per process (several blocks reuse them); the last item memoises the
    features of a target whose identical rows leave the history. ``fingerprint``: the
    file's content hash (part of the memo's key: a changed file is read again)."""
    from activetest.experiments.history import MATRICES, _targets
    from activetest.formats.history import read_response_matrix

    M = read_response_matrix(Path(root) / MATRICES[matrix])
    targets, hist = _targets(M, scenario, n_targets, seed)
    hf, nh = _features(M.scores[hist], seed)
    return M.scores, targets, hist, hf, nh, {}


def _seeds(seed: int, block_index: int, t: int) -> list[np.random.SeedSequence]:
    """The design's and the uniform draws' seeds of held-out model ``t`` in a block (a
    fresh sequence each call: :func:`block` and :func:`cross_block` get the same)."""
    return np.random.SeedSequence([seed, block_index, t]).spawn(2)


def _uniform_orders(s_uniform: np.random.SeedSequence, N: int, n_runs: int
                    ) -> Iterator[np.ndarray]:
    """The uniform orders of a held-out model's runs, :data:`CHUNK` runs at a time
    (``rng.permutation(N)`` each, in turn): PPI++, IRT-style and cross-PPI see the same
    draws."""
    rng = np.random.default_rng(s_uniform)
    for c0 in range(0, n_runs, CHUNK):
        yield np.stack([rng.permutation(N) for _ in range(min(CHUNK, n_runs - c0))])


def block(root: str | Path, matrix: str, scenario: str, *, n_targets: int = 30,
          n_runs: int = 250, block_index: int = 0, budgets: tuple[int, ...] = BUDGETS,
          seed: int = 0, log: bool = True) -> dict[str, np.ndarray]:
    """One block of runs (module docstring): ``{name: (T, B) sum over runs}`` for every
    name in :data:`SUMS`, ``cov_anytime`` ``(T,)`` counts, ``uvar`` ``(T, B)`` uniform
    sampling's exact squared error, ``budgets``, ``accuracy`` and ``meta`` (rank, history
    rows, runs, eps, block, seconds)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES
    from activetest.stats.feature_design import feature_design

    t0 = time.time()
    S, targets, hist, hf, nh, memo = _setup(
        str(root), matrix, scenario, n_targets, seed,
        file_fingerprint(Path(root) / MATRICES[matrix]))
    N = S.shape[1]
    bud = tuple(int(b) for b in budgets if b < N)
    bidx = np.array(bud) - 1
    H = S[hist]
    T, B = len(targets), len(bud)
    out = {k: np.zeros((T, B)) for k in SUMS}
    out["cov_anytime"] = np.zeros(T)
    out["uvar"] = np.zeros((T, B))
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        truth = L.mean()
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        h, n = hf, nh
        if same.any():  # rows identical to the target are dropped from its history
            if t not in memo:
                memo[t] = _features(H[~same], seed, rank=hf.rank, eps=nh.eps)
            h, n = memo[t]
        d = feature_design(history=h, neighbours=n)
        s_design, s_uniform = _seeds(seed, block_index, t)
        runs = simulate_design(d, losses=L, labels=None, budget=max(bud), n_runs=n_runs,
                               random_state=np.random.default_rng(s_design), model_var=True)
        th = adaptive_lure_theta(L[runs.indices], runs.q, N, runs.control, runs.control_rest)
        est = runs.curve(L)[:, bidx]
        out["sse_design"][t] = ((est - truth) ** 2).sum(axis=0)
        ci = fixed_interval_curve(th, N, model_var=runs.model_var)
        lo, hi = ci.low[:, bidx], ci.high[:, bidx]
        out["cov_fixed"][t] = ((lo <= truth) & (truth <= hi)).sum(axis=0)
        cs = asymptotic_cs(th, N, model_var=runs.model_var, value_range=(0.0, 1.0))
        out["cov_anytime"][t] = cs.covers(truth, start=MIN_LABELS).sum()
        Phi, w0 = d._Phi, d._w0
        for perms in _uniform_orders(s_uniform, N, n_runs):
            for tag, fits in (
                    ("_nb", uniform_fits(Phi, w0, L, perms, bud, neighbours=n)),
                    ("", uniform_fits(Phi[:, :-1], w0[:-1], L, perms, bud))):
                r = uniform_methods(fits, L, perms, bud)
                out[f"sse_ppi{tag}"][t] += ((r["ppi"] - truth) ** 2).sum(axis=0)
                out[f"sse_irt{tag}"][t] += ((r["irt"] - truth) ** 2).sum(axis=0)
                out[f"err_irt{tag}"][t] += (r["irt"] - truth).sum(axis=0)
                out[f"cov_ppi{tag}"][t] += r["cov_ppi"].sum(axis=0)
                out[f"cov_irt{tag}"][t] += r["cov_irt"].sum(axis=0)
        out["uvar"][t] = L.var() * N / (N - 1) / np.array(bud) * (N - np.array(bud)) / N
        if log:
            print(f"  {matrix} {scenario} block {block_index} target {t + 1}/{T} "
                  f"({time.time() - t0:.0f} s)", flush=True)
    out["budgets"] = np.array(bud)
    out["accuracy"] = S[targets].mean(axis=1)
    out["meta"] = np.array([hf.rank, int(hist.sum()), n_runs, nh.eps, block_index,
                            time.time() - t0])
    return out


def cross_block(root: str | Path, matrix: str, scenario: str, *, n_targets: int = 30,
                n_runs: int = 250, block_index: int = 0, budgets: tuple[int, ...] = BUDGETS,
                seed: int = 0, log: bool = True) -> dict[str, np.ndarray]:
    """Cross-PPI given the neighbours' column (``--cross``) on the uniform draws of
    :func:`block` with the same arguments (the same orders: :func:`_uniform_orders`
    from the same seeds), so its sums pair with that block's run for run:
    ``{name: (T, B) sum over runs}`` for every name in :data:`CROSS_SUMS`, ``budgets``
    and ``meta`` (rank, history rows, runs, eps, block, seconds)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES
    from activetest.stats.feature_design import feature_design

    t0 = time.time()
    S, targets, hist, hf, nh, memo = _setup(
        str(root), matrix, scenario, n_targets, seed,
        file_fingerprint(Path(root) / MATRICES[matrix]))
    N = S.shape[1]
    bud = tuple(int(b) for b in budgets if b < N)
    H = S[hist]
    out = {k: np.zeros((len(targets), len(bud))) for k in CROSS_SUMS}
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        truth = L.mean()
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        h, n = hf, nh
        if same.any():  # as block(): rows identical to the target leave its history
            if t not in memo:
                memo[t] = _features(H[~same], seed, rank=hf.rank, eps=nh.eps)
            h, n = memo[t]
        d = feature_design(history=h, neighbours=n)
        for perms in _uniform_orders(_seeds(seed, block_index, t)[1], N, n_runs):
            r = cross_methods(cross_fits(d._Phi, d._w0, L, perms, bud, neighbours=n), L,
                              perms, bud)
            out["sse_cross_nb"][t] += ((r["cross"] - truth) ** 2).sum(axis=0)
            out["err_cross_nb"][t] += (r["cross"] - truth).sum(axis=0)
            out["cov_cross_nb"][t] += r["cov_cross"].sum(axis=0)
        if log:
            print(f"  {matrix} {scenario} cross-PPI block {block_index} target {t + 1}/"
                  f"{len(targets)} ({time.time() - t0:.0f} s)", flush=True)
    out["budgets"] = np.array(bud)
    out["meta"] = np.array([hf.rank, int(hist.sum()), n_runs, nh.eps, block_index,
                            time.time() - t0])
    return out


def combine(blocks: list[dict[str, np.ndarray]],
            cross: list[dict[str, np.ndarray]] | None = None) -> dict[str, np.ndarray]:
    """The blocks' sums added: per held-out model and budget the relative squared error
    of each method (``rel_design``, ``rel_ppi_nb``, ...: mean squared error / uniform's),
    the coverages (``cov_*``, shares), the IRT-style mean errors (``bias_irt*``); plus
    ``runs`` (the total per model), ``seconds``, ``budgets``, ``accuracy``, ``meta``.
    ``cross``: the :func:`cross_block` of each block (same order, runs and budgets; their
    sums pair run for run): adds ``rel_cross_nb``, ``cov_cross_nb``, ``bias_cross_nb``
    and ``cross_seconds``.

    Raises:
        ValueError: a cross block that does not pair with its block."""
    R = sum(int(b["meta"][2]) for b in blocks)
    tot = {k: sum(b[k] for b in blocks) for k in (*SUMS, "cov_anytime")}
    uvar = blocks[0]["uvar"]
    out = {f"rel{k[3:]}": tot[k] / R / uvar for k in SUMS if k.startswith("sse_")}
    out.update({k: tot[k] / R for k in tot if k.startswith("cov_")})
    out.update({f"bias{k[3:]}": tot[k] / R for k in SUMS if k.startswith("err_")})
    out["runs"] = np.array(R)
    out["seconds"] = np.array(sum(float(b["meta"][5]) for b in blocks))
    for k in ("budgets", "accuracy", "meta"):
        out[k] = blocks[0][k]
    if cross is not None:
        if len(cross) != len(blocks) or any(
                not np.array_equal(c["meta"][:5], b["meta"][:5])
                or not np.array_equal(c["budgets"], b["budgets"])
                for c, b in zip(cross, blocks, strict=False)):
            raise ValueError("the cross-PPI blocks do not pair with the blocks (runs, "
                             "budgets, block or history differ)")
        ct = {k: sum(c[k] for c in cross) for k in CROSS_SUMS}
        out["rel_cross_nb"] = ct["sse_cross_nb"] / R / uvar
        out["cov_cross_nb"] = ct["cov_cross_nb"] / R
        out["bias_cross_nb"] = ct["err_cross_nb"] / R
        out["cross_seconds"] = np.array(sum(float(c["meta"][5]) for c in cross))
    return out


def _boot(ratio: np.ndarray, n: int = 2000, seed: int = 0) -> tuple[float, float]:
    """90% bootstrap interval (over held-out models) of the median of ``ratio``."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, ratio.size, (n, ratio.size))
    meds = np.median(ratio[idx], axis=1)
    return float(np.quantile(meds, 0.05)), float(np.quantile(meds, 0.95))


_ROWS = (("design (neighbours)", "rel_design"), ("PPI++ (neighbours)", "rel_ppi_nb"),
         ("PPI++ (today's features)", "rel_ppi"), ("IRT-style (neighbours)", "rel_irt_nb"),
         ("IRT-style (today's features)", "rel_irt"))


def render(matrix: str, scenario: str, res: dict[str, np.ndarray], command: str = "") -> str:
    """Markdown: the relative squared errors, design / PPI++ (both feature sets, with a
    90% bootstrap over held-out models), the coverages; every heading names the data,
    the held-out models and the runs."""
    bud = res["budgets"]
    T = res["rel_design"].shape[0]
    rank, n_hist, _, eps, _, _ = res["meta"]
    R = int(res["runs"])
    cross = "rel_cross_nb" in res
    shared = ("both PPI++, cross-PPI (2-fold, neighbours) and IRT-style fits" if cross
              else "both PPI++ and IRT-style fits")
    secs = (f"{float(res['seconds']):.0f} s of compute" + (
        f", cross-PPI {float(res['cross_seconds']):.0f} s" if cross else ""))
    head = (f"{matrix}, {scenario}: {T} held-out models, {int(n_hist)} history models, "
            f"factor rank {int(rank)}, eps {eps:g}; per held-out model {R} runs of the "
            f"design and {R} uniform draws shared by {shared}; budgets "
            + ", ".join(map(str, bud)) + f" ({secs})")
    rows = list(_ROWS)
    against = [("PPI++ (neighbours)", "rel_ppi_nb"), ("PPI++ (today's features)", "rel_ppi")]
    intervals = [("design, fixed-budget", "cov_fixed"),
                 ("PPI++ (neighbours), ppi_py", "cov_ppi_nb"),
                 ("PPI++ (today's features), ppi_py", "cov_ppi"),
                 ("IRT-style (neighbours), Bernoulli plug-in", "cov_irt_nb"),
                 ("IRT-style (today's features), Bernoulli plug-in", "cov_irt")]
    if cross:
        rows.insert(2, ("cross-PPI (neighbours, 2-fold)", "rel_cross_nb"))
        against.insert(1, ("cross-PPI (neighbours, 2-fold)", "rel_cross_nb"))
        intervals.insert(2, ("cross-PPI (neighbours, 2-fold), ppi_py crossppi_mean_ci",
                             "cov_cross_nb"))
    lines = [f"#### {head}", ""]
    if command:
        lines += [f"Command: `{command}`.", ""]
    lines += ["Median over held-out models of the relative squared error (mean squared error "
              "over runs / uniform sampling's exact one); in brackets the worst model and how "
              "many models are above 1.05.", "",
              "| method | " + " | ".join(f"M = {b}" for b in bud) + " |",
              "|---|" + "---|" * bud.size]
    for name, k in rows:
        r = res[k]
        lines.append(f"| {name} | " + " | ".join(
            f"{np.median(r[:, j]):.2f} ({r[:, j].max():.2f}; {(r[:, j] > 1.05).sum()})"
            for j in range(bud.size)) + " |")
    lines += ["", ("Median over held-out models of design / PPI++ (same labels count; in "
                   "brackets a 90% bootstrap over the held-out models; goal <= 0.85):")
              if not cross else
              ("Median over held-out models of design / each method (same labels count; in "
               "brackets a 90% bootstrap over the held-out models; the goal, <= 0.85, is "
               "against PPI++):"), "",
              "| against | " + " | ".join(f"M = {b}" for b in bud) + " |",
              "|---|" + "---|" * bud.size]
    for name, k in against:
        cells = []
        for j in range(bud.size):
            ratio = res["rel_design"][:, j] / res[k][:, j]
            lo, hi = _boot(ratio, seed=j)
            cells.append(f"{np.median(ratio):.2f} ({lo:.2f}-{hi:.2f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Coverage of 95% intervals (mean over held-out models; the worst model in "
              "brackets):", "", "| interval | " + " | ".join(f"M = {b}" for b in bud) + " |",
              "|---|" + "---|" * bud.size]
    for name, k in intervals:
        c = res[k]
        lines.append(f"| {name} | " + " | ".join(
            f"{c[:, j].mean():.3f} ({c[:, j].min():.2f})" for j in range(bud.size)) + " |")
    ca = res["cov_anytime"]
    lines += ["", f"Design, {ASYMPTOTIC_CS} over M = {MIN_LABELS}..{int(bud.max())} at "
              f"once: {ca.mean():.3f} (worst model {ca.min():.2f}). IRT-style mean error "
              "(estimate - truth), neighbours / today's features: " + ", ".join(
                  f"M = {b}: {res['bias_irt_nb'][:, j].mean():+.4f} / "
                  f"{res['bias_irt'][:, j].mean():+.4f} (largest |"
                  f"{np.abs(res['bias_irt_nb'][:, j]).max():.3f}| / |"
                  f"{np.abs(res['bias_irt'][:, j]).max():.3f}|)" for j, b in enumerate(bud))
              + (". Cross-PPI mean error: " + ", ".join(
                  f"M = {b}: {res['bias_cross_nb'][:, j].mean():+.4f} (largest |"
                  f"{np.abs(res['bias_cross_nb'][:, j]).max():.3f}|)"
                  for j, b in enumerate(bud)) if cross else "")
              + f". Held-out accuracy {res['accuracy'].min():.2f}-"
              f"{res['accuracy'].max():.2f}.", ""]
    return "\n".join(lines)


def behaviour_probe() -> Probe:
    """The comparison's behaviour probe (:mod:`activetest.experiments.probe`):
    :func:`block` (the design, its intervals, both PPI++ and IRT-style fits) on both
    scenarios of a tiny matrix, and the design's intervals themselves (a tiny run's
    coverage barely moves)."""
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import MATRICES
    from activetest.experiments.history_vs_ppi import (
        SUMS,
        _features,
        adaptive_lure_theta,
        asymptotic_cs,
        block,
        fixed_interval_curve,
        simulate_design,
    )
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix
    from activetest.formats.history import read_response_matrix
    from activetest.stats.feature_design import feature_design

    out = []
    with tempfile.TemporaryDirectory() as d:
        S = read_response_matrix(tiny_matrix(Path(d) / MATRICES["bbh"])).scores
        for sc in ("random", "cross"):
            res = block(d, "bbh", sc, n_targets=3, n_runs=3, budgets=BUDGETS, seed=1,
                        log=False)
            out += [res[k] for k in (*SUMS, "cov_anytime", "uvar", "budgets", "accuracy")]
            out.append(res["meta"][:5])  # not the seconds
    L, N = 1.0 - S[0], S.shape[1]
    hf, nh = _features(S[2:], 1)
    runs = simulate_design(feature_design(history=hf, neighbours=nh), losses=L, labels=None,
                           budget=36, n_runs=2, random_state=1, model_var=True)
    th = adaptive_lure_theta(L[runs.indices], runs.q, N, runs.control, runs.control_rest)
    ci = fixed_interval_curve(th, N, model_var=runs.model_var)
    cs = asymptotic_cs(th, N, model_var=runs.model_var, value_range=(0.0, 1.0))
    return Probe.of("history_vs_ppi", *out, runs.indices, th, ci.low, ci.high, cs.low, cs.high)


@functools.cache
def _probe() -> Probe:
    return behaviour_probe()


def cross_behaviour_probe() -> Probe:
    """The cross-PPI blocks' behaviour probe (:mod:`activetest.experiments.probe`):
    :func:`cross_block` on both scenarios of a tiny matrix, and one target's fold fits
    and ppi_py's cross-PPI estimate and interval bounds themselves."""
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import MATRICES
    from activetest.experiments.history_vs_ppi import (
        CROSS_SUMS,
        _features,
        cross_block,
        cross_fits,
        cross_methods,
    )
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix
    from activetest.formats.history import read_response_matrix
    from activetest.stats.feature_design import feature_design

    out = []
    with tempfile.TemporaryDirectory() as d:
        S = read_response_matrix(tiny_matrix(Path(d) / MATRICES["bbh"])).scores
        for sc in ("random", "cross"):
            res = cross_block(d, "bbh", sc, n_targets=3, n_runs=3, budgets=BUDGETS, seed=1,
                              log=False)
            out += [res[k] for k in (*CROSS_SUMS, "budgets")]
            out.append(res["meta"][:5])  # not the seconds
    L, N = 1.0 - S[0], S.shape[1]
    hf, nh = _features(S[2:], 1)
    d = feature_design(history=hf, neighbours=nh)
    perms = np.stack([np.random.default_rng(k).permutation(N) for k in range(2)])
    GF = cross_fits(d._Phi, d._w0, L, perms, BUDGETS, neighbours=nh)
    r = cross_methods(GF, L, perms, BUDGETS)
    return Probe.of("history_vs_ppi:cross", *out, GF, r["cross"], r["low"], r["high"])


@functools.cache
def _cross_probe() -> Probe:
    return cross_behaviour_probe()


def cache_key(a: argparse.Namespace, block_index: int) -> str:
    """A block's cache key: the matrix file's content, the run parameters, the block and
    the stored behaviour probe of ``a.cache`` that today's matches
    (:func:`activetest.experiments.probe.probe_id`; :mod:`activetest.experiments.cache`)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES

    h = hashlib.sha256(f"vsppi:{a.matrix}:{a.scenario}:{a.targets}:{a.runs}:{list(a.budgets)}:"
                       f"{a.seed}:{block_index}".encode())
    h.update(file_fingerprint(Path(a.root) / MATRICES[a.matrix]).encode())
    h.update(probe_id(a.cache, _probe()).encode())
    return h.hexdigest()[:20]


def block_file(a: argparse.Namespace, block_index: int) -> Path:
    """Where a block is cached."""
    return (Path(a.cache)
            / f"history-vsppi-{a.matrix}-{a.scenario}-{cache_key(a, block_index)}.npz")


def cross_cache_key(a: argparse.Namespace, block_index: int) -> str:
    """A cross-PPI block's cache key: the matrix file's content, the run parameters (those
    of the block it pairs with), the block and the stored cross-PPI behaviour probe of
    ``a.cache`` that today's matches (:func:`activetest.experiments.probe.probe_id`)."""
    from activetest.experiments.cache import file_fingerprint
    from activetest.experiments.history import MATRICES

    h = hashlib.sha256(f"crossppi:{a.matrix}:{a.scenario}:{a.targets}:{a.runs}:"
                       f"{list(a.budgets)}:{a.seed}:{block_index}".encode())
    h.update(file_fingerprint(Path(a.root) / MATRICES[a.matrix]).encode())
    h.update(probe_id(a.cache, _cross_probe()).encode())
    return h.hexdigest()[:20]


def cross_block_file(a: argparse.Namespace, block_index: int) -> Path:
    """Where a cross-PPI block is cached."""
    return (Path(a.cache) / f"history-crossppi-{a.matrix}-{a.scenario}-"
            f"{cross_cache_key(a, block_index)}.npz")


def parser() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    from activetest.experiments.cache import study_parser

    p = study_parser("python -m activetest.experiments.history_vs_ppi", scenario="random",
                     runs=250, budgets=BUDGETS)
    p.add_argument("--blocks", type=int, default=4, help="blocks 0..N-1 in the tables")
    p.add_argument("--compute", type=int, nargs="*", default=None, metavar="BLOCK",
                   help="compute (or read) these blocks only, in one process; print nothing")
    p.add_argument("--cross", action="store_true",
                   help="also cross-PPI (2-fold, ppi_py) given the neighbours' column, on "
                   "each block's uniform draws (its own cached blocks)")
    p.add_argument("--out", default=None,
                   help="write the tables into this markdown file (between the markers of "
                   "--section) instead of printing them")
    p.add_argument("--section", default=None,
                   help="the doc's section (default vsppi-MATRIX-SCENARIO): between "
                   "<!-- history-SECTION:begin/end -->")
    return p


def _get(a: argparse.Namespace, b: int) -> dict[str, np.ndarray]:
    from activetest.experiments.cache import cached_npz

    return cached_npz(block_file(a, b), lambda: block(
        a.root, a.matrix, a.scenario, n_targets=a.targets, n_runs=a.runs, block_index=b,
        budgets=tuple(a.budgets), seed=a.seed), probe=_probe())


def _get_cross(a: argparse.Namespace, b: int) -> dict[str, np.ndarray]:
    from activetest.experiments.cache import cached_npz

    return cached_npz(cross_block_file(a, b), lambda: cross_block(
        a.root, a.matrix, a.scenario, n_targets=a.targets, n_runs=a.runs, block_index=b,
        budgets=tuple(a.budgets), seed=a.seed), probe=_cross_probe())


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    a = parser().parse_args(argv)
    if a.compute is not None:
        for b in a.compute:
            _get(a, b)
            if a.cross:
                _get_cross(a, b)
        return
    res = combine([_get(a, b) for b in range(a.blocks)],
                  [_get_cross(a, b) for b in range(a.blocks)] if a.cross else None)
    cmd = (f"python -m activetest.experiments.history_vs_ppi --matrix {a.matrix} --scenario "
           f"{a.scenario} --targets {a.targets} --runs {a.runs} --blocks {a.blocks}"
           + ("" if list(a.budgets) == list(BUDGETS) else
              " --budgets " + " ".join(map(str, a.budgets)))
           + (" --cross" if a.cross else ""))
    text = render(a.matrix, a.scenario, res, cmd)
    if a.out is None:
        print(text)
        return
    from activetest.experiments.history import write_doc

    print(f"wrote {write_doc(a.out, text, a.section or f'vsppi-{a.matrix}-{a.scenario}')}")


if __name__ == "__main__":
    main()
