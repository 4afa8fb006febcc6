"""The out-of-sample guard of the logistic designs (``rule="guard"``), compiled (numba).

Why: the feature design's model can do worse than uniform draws with a constant control
where history says little about the target (docs/history.md: a cross-population BBH model
at 1.43x uniform's squared error at 200 labels). The earned rule's fallback compares the
two on the labels the model was just fitted to (in-sample), which is noisy early and hides
the model's overfit; this guard compares them by their *out-of-sample* record, keeps the
prior start (the history's difficulty model before the first refit) and falls back only
when the record says the model is worse. Every choice is a function of the labels before
the draw, so adaptive LURE stays exactly unbiased (tests/stats/test_guard.py enumerates
every draw order with a refit before every draw).

The guard keeps two tracks side by side in the design's ``aux`` state (``(GUARD_ROWS,
max(N, 3))``; only the guard gives a non-two-metric design an ``aux``):

* row 0, 1: the fitted model's score ``s`` and control ``g`` (kept while the fallback is
  in force, so the model's record continues);
* row 2: scalars ``[model's lambda, the fallback's constant c, fallback in force]``;
* rows 3-6, indexed by the draw number m: the model's control at the drawn item
  ``g_M(i_m)``, its normalised score there ``u_m = s_M(i_m) / sum_S s_M`` (-1 when the
  model's score is all 0: uniform), the fallback's constant ``c_m`` and the model's
  lambda ``lambda_m``, all as in force at draw m (the model's proposal at the item is
  ``q_M = (1 - lambda) u_m + lambda / n_m``).

:func:`guard_record` writes rows 3-6 at every draw (before the item leaves the remaining
set); :func:`guard_choose` runs at every refit, after the model was fitted and its lambda
chosen, and decides between the model and the fallback by their out-of-sample record:
the draws made before, each scored under the control and proposal in force when it was
drawn, so no label is scored by a model fitted on it. Optionally (``rule[8] > 0``) the
model's lambda is chosen by the same record (each lambda of the grid scored with the
earlier models' controls and scores) instead of in-sample.
"""

from __future__ import annotations

import math

import numpy as np

from activetest.stats.kernels import njit

#: Rows of the guard's ``aux`` state (module docstring).
GUARD_ROWS = 7
#: The guard's kernel parameters (``rule[4:9]`` of the design's rule vector): on, the
#: evidence threshold z, the window (share of the latest labels scored), the least number
#: of records before the fallback (or an out-of-sample lambda) may be chosen, lambda by
#: the out-of-sample record (1) or in-sample as the original rule (0). The values: the
#: variant that kept every held-out model of the shared matrices at or below 1.05x
#: uniform's squared error at the largest budget (docs/history.md, "guard oos-lambda
#: recent"): z = 1 over the later half of the labels, lambda out-of-sample.
GUARD_PARAMS = (1.0, 1.0, 0.5, 5.0, 1.0)


def guard_aux0(n: int, s0: np.ndarray, g0: np.ndarray, lam0: float) -> np.ndarray:
    """The guard's ``aux`` before draw 1: the start model (``s0``, ``g0``, ``lam0``) as the
    model track, the fallback's constant the start model's pool mean, no record yet."""
    aux = np.full((GUARD_ROWS, max(n, 3)), np.nan)
    aux[0, :n] = s0
    aux[1, :n] = g0
    aux[2, :3] = (lam0, float(np.mean(g0)) if n else 0.0, 0.0)
    return aux


@njit(cache=True)
def guard_record(aux, rem, pick, m, n_rem):  # pragma: no cover - compiled
    """Record draw m (0-based; ``n_rem`` items remain, the drawn one included): the model
    track's control, normalised score and lambda at the drawn item and the fallback's
    constant."""
    N = rem.shape[0]
    S = 0.0
    for i in range(N):
        if rem[i]:
            S += aux[0, i]
    aux[3, m] = aux[1, pick]
    aux[4, m] = aux[0, pick] / S if S > 0.0 and n_rem > 1 else -1.0
    aux[5, m] = aux[2, 1]
    aux[6, m] = aux[2, 0]


@njit(cache=True)
def _q_model(u, lam, nj):  # pragma: no cover - compiled
    """The model track's proposal at a recorded draw: ``(1 - lam) u + lam / nj``."""
    if u < 0.0:
        return 1.0 / nj
    return (1.0 - lam) * u + lam / nj


@njit(cache=True)
def guard_choose(s, g, aux, hL, hq, k, rule, lambdas, lam_fixed,
                 fst):  # pragma: no cover - compiled
    """At a refit with ``k`` labels (``s``, ``g``, ``fst[0]`` the freshly fitted model and
    its lambda): keep them as the model track, update the fallback's constant ``c`` (the
    self-normalised importance-weighted mean of the labels), and put the fallback
    (uniform draws, ``g = c``) in force when the out-of-sample record says the model is
    worse.

    Record of draw j (labelled, recorded), ``n_j = N - j`` items remaining then, ``q_j``
    its actual proposal: ``a_j = (L_j - g_M,j)^2 / (q_M,j q_j n_j^2)`` (unbiased, over the
    draw, for the model track's ``sum_S r^2 / q_M`` divided by ``n_j^2``) and ``b_j = (L_j -
    c_j)^2 / (q_j n_j)`` (the same for uniform draws with control ``c_j``). With ``d_j = a_j
    - b_j`` over the last ``ceil(rule[6] k)`` labels (at least ``rule[7]`` of them), the
    fallback is chosen when ``mean d > rule[5] sd(d) / sqrt(count)``. ``q_M,j`` is the
    model's proposal in force at draw j; with ``rule[8] > 0`` (and in-run lambda) the
    lambda of ``lambdas`` whose ``sum a_j`` is least is the model's (ties: the larger), and
    ``a_j`` is scored with it.
    """
    N = s.shape[0]
    first = k - math.ceil(rule[6] * k)
    if first < 0:
        first = 0
    cnt = 0
    for j in range(first, k):
        if not math.isnan(aux[3, j]):
            cnt += 1
    enough = cnt >= max(rule[7], 2.0)
    oos_lam = rule.shape[0] > 8 and rule[8] > 0.0 and lam_fixed < 0.0 and enough
    if oos_lam:
        best = np.inf
        for a in range(lambdas.shape[0]):
            la = lambdas[a]
            cost = 0.0
            for j in range(first, k):
                if math.isnan(aux[3, j]):
                    continue
                nj = N - j
                ra = hL[j] - aux[3, j]
                cost += ra * ra / (_q_model(aux[4, j], la, nj) * hq[j] * nj * nj)
            if cost <= best:
                best = cost
                fst[0] = la
    for i in range(N):
        aux[0, i] = s[i]
        aux[1, i] = g[i]
    aux[2, 0] = fst[0]
    if k >= 1:
        sw = 0.0
        c = 0.0
        for j in range(k):
            sw += 1.0 / hq[j]
            c += hL[j] / hq[j]
        aux[2, 1] = c / sw
    sd = 0.0
    sd2 = 0.0
    for j in range(first, k):
        if math.isnan(aux[3, j]):
            continue
        nj = N - j
        ra = hL[j] - aux[3, j]
        rb = hL[j] - aux[5, j]
        lam = fst[0] if oos_lam else aux[6, j]
        d = ra * ra / (_q_model(aux[4, j], lam, nj) * hq[j] * nj * nj) - rb * rb / (hq[j] * nj)
        sd += d
        sd2 += d * d
    fall = False
    if enough:
        mean = sd / cnt
        var = max(sd2 / cnt - mean * mean, 0.0) * cnt / (cnt - 1)
        fall = mean > 0.0 and mean > rule[5] * math.sqrt(var / cnt)
    if fall:
        c = aux[2, 1]
        for i in range(N):
            s[i] = 0.0
            g[i] = c
        fst[0] = 1.0
        aux[2, 2] = 1.0
    else:
        aux[2, 2] = 0.0
