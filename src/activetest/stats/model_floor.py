"""A model's variance of each draw, the floor of an interval's variance, for any proposal.

The fixed-budget interval and the anytime CS (asymptotic) estimate the variance of each draw's
term from the labels. Where the proposal rarely draws the items that carry a quantity's
large values, a run that has not met one has a low estimate and a low observed variance
at once, and both intervals miss (docs/robustness.md, "Known coverage gaps"). A model of
each item's value that knows those items exist supplies the variance the labels have
not shown: with item i's value of mean ``mean_i`` and second moment ``second_i`` under
the model, drawn with probability ``q_m(i)`` from the remaining set ``S_m``, plain
LURE's term at draw m has

    N^2 Var(theta_m | past) = sum_{S_m} second_i / q_m(i) - (sum_{S_m} mean_i)^2,

and the intervals take it as a floor (:func:`activetest.stats.intervals.moment_curves`,
``model_var``; the SE is ``max(SE_obs, SE_model)``), as they take an adaptive design's
own prediction of its variance. The floor changes no estimate; it only widens an
interval whose labels look calmer than the model says the pool is.

Here for the three kinds of proposal a run draws from: uniform sampling
(:func:`uniform_model_var`, closed form), a fixed floored proposal
(:func:`activetest.stats.proposal.floored_model_var`) and an adaptive design, replayed
from its stored history (:func:`design_model_var`: one compiled pass over the pool per
draw, for several quantities at once). And the moments of a paired difference of two
targets' log losses under a label model (:func:`difference_moments`), the quantity
whose gap this floor closes (a second model's rare confident misses, which the design
drawing for the target's own loss seldom draws: coverage 0.77-0.90).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from activetest.stats.kernels import njit

__all__ = ["class_losses", "design_model_var", "design_second_sums", "difference_moments",
           "labelled_mean_floor", "uniform_model_var"]


def class_losses(metric: str, logprobs: np.ndarray) -> np.ndarray:
    """``(N, C)`` the loss a model's ``(N, C)`` class log-probs take if item i's label is
    c: ``-log p(c | x_i)`` (``log_loss``) or ``1[argmax_c' p(c' | x_i) != c]`` (the
    error rate; ties to the lowest class, as :func:`activetest.stats.zero_one_loss`)."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.ndim != 2:
        raise ValueError(f"logprobs must be an (N, C) array, got shape {lp.shape}")
    if metric == "log_loss":
        return -lp
    if metric == "error_rate":
        out = np.ones(lp.shape)
        out[np.arange(lp.shape[0]), lp.argmax(axis=1)] = 0.0
        return out
    raise ValueError(f"metric must be 'log_loss' or 'error_rate', got {metric!r}")


def difference_moments(label_logprobs: np.ndarray, target_losses: np.ndarray,
                       other_losses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, second)``, ``(N,)`` each: the first two moments of the paired difference
    ``d_i(c) = L_t(i, c) - L_o(i, c)`` of two targets' losses (``(N, C)`` each, e.g.
    :func:`class_losses`) under a label model ``p(c | x_i)`` (``(N, C)`` log-probs,
    normalised here)::

        mean_i = sum_c p(c | x_i) d_i(c),    second_i = sum_c p(c | x_i) d_i(c)^2.
    """
    p = np.asarray(label_logprobs, dtype=np.float64)
    t = np.asarray(target_losses, dtype=np.float64)
    o = np.asarray(other_losses, dtype=np.float64)
    if p.ndim != 2 or not p.shape == t.shape == o.shape:
        raise ValueError(f"arrays of shapes {p.shape}, {t.shape}, {o.shape}: expected one "
                         f"(N, C) shape")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t)) and np.all(np.isfinite(o))):
        raise ValueError("the label model's log-probs and the losses must be finite")
    w = np.exp(p - np.logaddexp.reduce(p, axis=1, keepdims=True))
    d = t - o
    return np.einsum("ic,ic->i", w, d), np.einsum("ic,ic->i", w, d * d)


def uniform_model_var(n_pool: int, rows: Sequence[int], mean: np.ndarray,
                      second: np.ndarray) -> np.ndarray:
    """``(K,)`` the model's ``N^2 Var(theta_m | past)`` at each draw ``rows`` of uniform
    sampling without replacement (``q_m(i) = 1 / |S_m|``):
    ``|S_m| sum_{S_m} second - (sum_{S_m} mean)^2``."""
    h = np.asarray(mean, dtype=np.float64)
    x = np.asarray(second, dtype=np.float64)
    if h.shape != (n_pool,) or x.shape != (n_pool,):
        raise ValueError(f"mean and second must have shape ({n_pool},)")
    r = np.asarray(rows, dtype=np.int64)
    # the sums over the remaining set before each draw: the pool's less the drawn so far
    taken_h = np.concatenate([[0.0], np.cumsum(h[r])[:-1]]) if r.size else np.zeros(0)
    taken_x = np.concatenate([[0.0], np.cumsum(x[r])[:-1]]) if r.size else np.zeros(0)
    n = n_pool - np.arange(r.size, dtype=np.float64)
    out = n * (x.sum() - taken_x) - (h.sum() - taken_h) ** 2
    return np.maximum(out, 0.0)


def design_model_var(design: Any, acquired: Sequence[int], mean: np.ndarray,
                     second: np.ndarray, *, labels: Sequence[int] | None = None,
                     losses: Sequence[float] | None = None,
                     n_known: Sequence[int] | None = None) -> np.ndarray:
    """``(R, K)`` (``(K,)`` for ``(N,)`` moments) the model's ``N^2 Var(theta_m | past)`` of
    plain LURE at each draw of an adaptive design (:class:`activetest.stats.adaptive.
    AdaptiveDesign`), its proposal ``q_m(i) = a_m s_i + b_m`` on the remaining items
    replayed from its history as :func:`activetest.stats.blindspot_replay.
    design_proposals` does (the same arguments). ``mean`` and ``second``: ``(N,)`` or
    ``(R, N)``, one row per quantity (module docstring)."""
    from activetest.stats.blindspot_replay import design_mixtures

    h = np.ascontiguousarray(mean, dtype=np.float64)
    x = np.ascontiguousarray(second, dtype=np.float64)
    if h.shape != x.shape or h.ndim not in (1, 2):
        raise ValueError("mean and second must be (N,) or (R, N) arrays of one shape")
    H, X = h.reshape(-1, h.shape[-1]), x.reshape(-1, x.shape[-1])
    acq = [int(i) for i in acquired]
    out = np.zeros((H.shape[0], len(acq)))
    if acq:
        for m, a, b, s, rem in design_mixtures(design, acq, H.shape[1],
                                               "each row of mean and second",
                                               labels=labels, losses=losses,
                                               n_known=n_known):
            _model_var(a, b, s, rem, H, X, out, m)
    return out if h.ndim == 2 else out[0]


def design_second_sums(design: Any, acquired: Sequence[int], second: np.ndarray, *,
                       labels: Sequence[int] | None = None,
                       losses: Sequence[float] | None = None,
                       n_known: Sequence[int] | None = None) -> np.ndarray:
    """``(R, K)`` (``(K,)`` for ``(N,)`` moments): before each draw m of an adaptive
    design, ``sum_{S_m} second_i / q_m(i)`` for each row of ``second`` (``(R, N)``,
    non-negative): :func:`design_model_var` with a zero mean, which it is (one replay
    for every row). The blind spot's replay computes the same sums, to the last bit, in
    its own pass (:func:`activetest.stats.blindspot_replay.design_blind_spot_curves`,
    ``second=``, its compiled ``_second_sums``), which a session continues from its
    checkpoint."""
    x = np.asarray(second, dtype=np.float64)
    # (a zero mean adds 0.0 to the sum of the means and subtracts 0.0 * 0.0 = 0.0: the
    # second moments' sum, bit for bit)
    return design_model_var(design, acquired, np.zeros_like(x), x, labels=labels,
                            losses=losses, n_known=n_known)


@njit(cache=True)
def _model_var(a, b, s, rem, H, X, out, m):  # pragma: no cover - compiled
    """``out[r, m] = sum_rem X[r] / q - (sum_rem H[r])^2`` with ``q_i = a s_i + b``
    (inf where a remaining item with a positive second moment has probability 0)."""
    for r in range(H.shape[0]):
        sx = 0.0
        sh = 0.0
        for i in range(s.shape[0]):
            if rem[i]:
                q = a * s[i] + b
                sh += H[r, i]
                if X[r, i] > 0.0:
                    sx += X[r, i] / q if q > 0.0 else np.inf
        v = sx - sh * sh
        out[r, m] = v if v > 0.0 else 0.0


def labelled_mean_floor(second: np.ndarray, model_rest: np.ndarray, values: np.ndarray,
                        q: np.ndarray, N: int, *, drawn_second: np.ndarray | None = None,
                        prior_second: float | None = None, prior: float = 5.0) -> np.ndarray:
    """``(K,)`` the floor ``max(0, second_m - T_m^2)`` with the remaining items' total
    ``T_m`` estimated from the labels before draw m, not the model's.

    ``second``: ``(K,)`` the model's ``sum_{S_m} second_i / q_m(i)``; ``model_rest``:
    ``(K,)`` its ``sum_{S_m} mean_i`` (used before the first label); ``values`` and ``q``:
    ``(K,)`` the labelled draws' values and probabilities. ``T_m = N R_m - sum_{j<m}
    values_j``, ``R_m`` LURE after the first m labels (unbiased for the pool mean).
    ``drawn_second`` (``(K,)``, the model's second moment at each labelled draw): the
    second moments are scaled by ``min(1, (sum_{j<m} values_j^2 + prior * e) /
    (sum_{j<m} drawn_second_j + prior * e))``, ``e = prior_second`` the model's mean
    second moment over the whole pool (``prior`` items' worth of belief in the model;
    required with ``drawn_second``): a model that expects larger squared values than the
    labels show is taken down to them, never up. Every part of the floor at draw m is a
    function of the pool and the draws before m, so the floor is predictable (a pool-wide
    ``e``, not the mean over the labelled draws, which would look at later draws).

    Why: a weak surrogate can know where a quantity is spread (which items' values can be
    large) but not its mean: two targets' error rates differ by -1 or +1 wherever their
    predictions differ, and a surrogate that cannot tell which of the two is right puts the
    mean of the difference near 0, the model's variance near its second moment, and the
    floor far above the truth when one target is right on most of those items (on the
    bundled models' pairs, 1.3-1.6x the compare design's widths). The labels estimate the
    mean without bias; the model keeps what the labels may not have met, the second
    moments of the rarely drawn items.
    """
    from activetest.stats.estimators import lure_curve

    x = np.asarray(second, dtype=np.float64)
    rest = np.array(model_rest, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if not x.shape == rest.shape == v.shape == np.shape(q) or x.ndim != 1:
        raise ValueError("second, model_rest, values and q must be (K,) arrays of one shape")
    if v.size > 1:
        R = lure_curve(v, np.asarray(q, dtype=np.float64), N)
        rest[1:] = N * R[:-1] - np.cumsum(v)[:-1]
    if drawn_second is not None:
        e = np.asarray(drawn_second, dtype=np.float64)
        if e.shape != v.shape:
            raise ValueError("drawn_second must be a (K,) array like values")
        if prior_second is None or not math.isfinite(prior_second) or prior_second < 0:
            raise ValueError("drawn_second needs prior_second, the model's mean second "
                             f"moment over the pool (finite, >= 0), got {prior_second!r}")
        pad = prior * float(prior_second)
        seen = np.concatenate([[0.0], np.cumsum(v * v)[:-1]])
        expected = np.concatenate([[0.0], np.cumsum(e)[:-1]])
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.where(expected + pad > 0, (seen + pad) / (expected + pad), 1.0)
        x = x * np.minimum(rho, 1.0)
    return np.maximum(x - rest * rest, 0.0)
