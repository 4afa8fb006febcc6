"""A model's variance of each draw, the floor of an interval's variance, for any proposal
(:mod:`activetest.stats.model_floor`).

Checked exactly: the moments against a loop over the classes; each draw's variance
against the enumeration of every (item, label) the draw can give under the model, for
uniform sampling, a fixed floored proposal and an adaptive design (its proposals
replayed and checked against the draws the run made). The floor's effect on coverage is
tested through the public API in ``tests/session/test_difference_floor.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import zero_one_loss
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.blindspot_replay import design_proposals
from activetest.stats.losses import log_softmax
from activetest.stats.model_floor import (
    class_losses,
    design_model_var,
    difference_moments,
    labelled_mean_floor,
    uniform_model_var,
)
from activetest.stats.proposal import floored_model_var, floored_model_vars, proposal


def _pool(N: int = 60, C: int = 3, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    T = log_softmax(rng.normal(0, 2, (N, C)))
    Ot = log_softmax(rng.normal(0, 2, (N, C)))
    S = log_softmax(rng.normal(0, 1, (N, C))) + 3.0  # unnormalised on purpose (+3)
    y = rng.integers(0, C, N)
    return T, Ot, S, y


def _enumerated_var(q: np.ndarray, p: np.ndarray, d: np.ndarray) -> float:
    """``Var(d_i(c) / q_i)`` with i ~ q and c ~ p_i, over every (i, c) with q_i > 0:
    the variance of ``N theta_m``'s new term given the past."""
    live = q > 0
    w = (q[live, None] * p[live]).ravel()
    v = (d[live] / q[live, None]).ravel()
    mean = float(np.sum(w * v))
    return float(np.sum(w * (v - mean) ** 2))


def test_class_losses_are_each_labels_loss() -> None:
    T, _, _, _ = _pool()
    N, C = T.shape
    for c in range(C):
        y = np.full(N, c)
        np.testing.assert_array_equal(class_losses("log_loss", T)[:, c], -T[:, c])
        np.testing.assert_array_equal(class_losses("error_rate", T)[:, c],
                                      zero_one_loss(T, y))
    tie = np.log(np.full((1, 3), 1 / 3))  # ties: the lowest class is the prediction
    np.testing.assert_array_equal(class_losses("error_rate", tie), [[0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match="metric"):
        class_losses("brier", T)


def test_difference_moments_against_a_loop() -> None:
    T, Ot, S, _ = _pool()
    for metric in ("log_loss", "error_rate"):
        h, x = difference_moments(S, class_losses(metric, T), class_losses(metric, Ot))
        p = np.exp(S) / np.exp(S).sum(1, keepdims=True)
        d = class_losses(metric, T) - class_losses(metric, Ot)
        for i in range(T.shape[0]):
            assert h[i] == pytest.approx(sum(p[i, c] * d[i, c] for c in range(3)))
            assert x[i] == pytest.approx(sum(p[i, c] * d[i, c] ** 2 for c in range(3)))
    with pytest.raises(ValueError, match="shape"):
        difference_moments(S[:5], T, Ot)
    with pytest.raises(ValueError, match="finite"):
        difference_moments(S, np.full_like(T, np.inf), Ot)


def _moments(metric: str = "log_loss") -> tuple[np.ndarray, ...]:
    T, Ot, S, y = _pool()
    dT, dO = class_losses(metric, T), class_losses(metric, Ot)
    h, x = difference_moments(S, dT, dO)
    p = np.exp(S) / np.exp(S).sum(1, keepdims=True)
    return T, S, y, h, x, p, dT - dO


def test_uniform_model_var_is_each_draws_exact_variance() -> None:
    _, _, _, h, x, p, d = _moments()
    N = h.size
    rows = np.random.default_rng(1).permutation(N)[:25]
    got = uniform_model_var(N, rows, h, x)
    rem = np.ones(N, dtype=bool)
    for m, i in enumerate(rows):
        q = np.where(rem, 1.0 / rem.sum(), 0.0)
        assert got[m] == pytest.approx(_enumerated_var(q, p, d), rel=1e-9)
        rem[i] = False
    # the floored proposal of constant scores is uniform sampling: the same floor
    np.testing.assert_allclose(floored_model_var(np.ones(N), 0.1, rows, h, x), got,
                               rtol=1e-9)
    assert uniform_model_var(N, [], h, x).shape == (0,)
    with pytest.raises(ValueError, match="shape"):
        uniform_model_var(N + 1, rows, h, x)


def test_floored_model_var_is_each_draws_exact_variance() -> None:
    _, _, _, h, x, p, d = _moments("error_rate")
    N = h.size
    s = np.random.default_rng(2).gamma(0.5, 1.0, N)
    rows = np.random.default_rng(3).permutation(N)[:20]
    got = floored_model_var(s, 0.1, rows, h, x)
    rem = np.ones(N, dtype=bool)
    for m, i in enumerate(rows):
        assert got[m] == pytest.approx(_enumerated_var(proposal(s, rem, 0.1), p, d),
                                       rel=1e-9)
        rem[i] = False


def _floored_var_by_passes(s: np.ndarray, floor: float, rows: np.ndarray, h: np.ndarray,
                           x: np.ndarray) -> np.ndarray:
    """The definition, one pass over the remaining items per draw."""
    rem = np.ones(s.size, dtype=bool)
    out = np.empty(len(rows))
    for m, i in enumerate(rows):
        q = proposal(s, rem, floor)[rem]
        out[m] = max(float(np.sum(x[rem] / q) - np.sum(h[rem]) ** 2), 0.0)
        rem[int(i)] = False
    return out


@pytest.mark.parametrize("case", ["spread", "zeros", "two-positive", "ties", "huge-drawn"])
def test_floored_model_var_from_sorted_sums_is_the_pass_per_draw(case: str) -> None:
    """The sums from the pool sorted once (prefix and suffix sums, the drawn items taken
    out) are the pass over the remaining items at every draw, to rounding: scores with
    zeros (the floor holds most items), only two positive scores (the proposal turns
    uniform once both are drawn: a difference of sums would leave rounding, not 0), tied
    scores at the threshold, and drawn scores that dwarf the rest (the difference of
    sums is then rounding: computed directly). Several rows at once match one by one."""
    rng = np.random.default_rng(["spread", "zeros", "two-positive", "ties",
                                 "huge-drawn"].index(case))
    for trial in range(40):
        N = int(rng.integers(2, 50))
        s = rng.gamma(0.5, 1.0, N)
        if case == "zeros":
            s[rng.random(N) < 0.6] = 0.0
        elif case == "two-positive":
            s = np.zeros(N)
            s[rng.choice(N, size=min(2, N), replace=False)] = rng.random(min(2, N))
        elif case == "ties":
            s = np.round(s, 1)
        rows = rng.permutation(N)[:int(rng.integers(1, N + 1))]
        if case == "huge-drawn":
            s[rows[: max(1, len(rows) // 2)]] = 1e12
        floor = float(rng.choice([0.01, 0.1, 0.5, 1.0]))
        h = rng.random(N)
        x = h * rng.random(N) * 2
        want = _floored_var_by_passes(s, floor, rows, h, x)
        got = floored_model_var(s, floor, rows, h, x)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, want.max()),
                                   err_msg=f"{case} trial {trial}")
        H = np.stack([h, 0 * h, h ** 2])
        X = np.stack([x, x, h])
        both = floored_model_vars(s, floor, rows, H, X)
        for r in range(3):
            np.testing.assert_allclose(both[r], floored_model_var(s, floor, rows, H[r], X[r]),
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["calibrated", "pe"])
def test_design_model_var_is_each_draws_exact_variance(name: str) -> None:
    """An adaptive design that refits between draws (and one without the target's
    predictions): the floor at each draw is the enumerated variance under the proposal
    it drew from, replayed (checked against the run's own q at the drawn items)."""
    T, S, y, h, x, p, d = _moments()
    L = -T[np.arange(T.shape[0]), y]
    design = AdaptiveDesign.from_name(name, surrogate_logprobs=log_softmax(S),
                                      target_logprobs=T,
                                      loss="log", rule="earned")
    runs = simulate_design(design, losses=L, labels=y, budget=30, n_runs=2, random_state=4)
    for r in range(2):
        acq = runs.indices[r]
        got = design_model_var(design, acq, h, x, labels=y[acq], losses=L[acq])
        plans = list(design_proposals(design, acq, labels=y[acq], losses=L[acq]))
        np.testing.assert_allclose([q[i] for (q, _), i in zip(plans, acq, strict=True)],
                                   runs.q[r], rtol=1e-12)
        want = [_enumerated_var(q, p, d) for q, _ in plans]
        np.testing.assert_allclose(got, want, rtol=1e-8)
        both = design_model_var(design, acq, np.stack([h, 2 * h]), np.stack([x, 4 * x]),
                                labels=y[acq], losses=L[acq])
        np.testing.assert_allclose(both, [got, 4 * got], rtol=1e-9)
    assert design_model_var(design, [], h, x).shape == (0,)
    with pytest.raises(ValueError, match="items"):
        design_model_var(design, acq, h[:10], x[:10])
    with pytest.raises(ValueError, match="shape"):
        design_model_var(design, acq, h, x[:10])


def test_labelled_mean_floor_takes_the_remaining_total_from_the_labels() -> None:
    """Before the first label the model's remaining total; after m labels ``N R_m`` less
    the labelled values (``R_m`` LURE after m labels); never below 0. Where the model's
    mean is wrong but its second moments right (a surrogate that cannot tell which of two
    targets is right), the floor is the exact variance given the true total, while the
    model's own ``second - rest^2`` is far above it."""
    from activetest.stats import lure_curve

    rng = np.random.default_rng(5)
    N, K = 50, 12
    second = rng.uniform(5, 9, K) * 100
    rest = rng.normal(0, 3, K)
    v = rng.choice([-1.0, 1.0], K)
    q = rng.uniform(0.01, 0.05, K)
    got = labelled_mean_floor(second, rest, v, q, N)
    R = lure_curve(v, q, N)
    want = np.empty(K)
    want[0] = second[0] - rest[0] ** 2
    for m in range(1, K):
        want[m] = second[m] - (N * R[m - 1] - v[:m].sum()) ** 2
    np.testing.assert_allclose(got, np.maximum(want, 0.0), rtol=1e-12)
    assert np.all(got >= 0)
    assert labelled_mean_floor(second[:1], rest[:1], v[:1], q[:1], N)[0] == pytest.approx(
        max(second[0] - rest[0] ** 2, 0.0))
    # a pool of +-1 differences, -1 on 90% of the items (one target right on most items
    # where the two differ): uniform draws; the model has the second moments (1) but a mean
    # of 0; the labels' total, noisy at first, is nearer the truth than the model's
    d = np.where(np.arange(N) < 45, -1.0, 1.0)
    rows = np.random.default_rng(6).permutation(N)[:40]
    second_u = uniform_model_var(N, rows, np.zeros(N), np.ones(N))
    model_rest = np.zeros(40)
    qs = 1.0 / (N - np.arange(40))
    floor = labelled_mean_floor(second_u, model_rest, d[rows], qs, N)
    true_var = uniform_model_var(N, rows, d, np.ones(N))
    model_var = np.maximum(second_u - model_rest ** 2, 0.0)
    assert np.median(floor / model_var) < 0.5  # the model's own mean: far above
    assert np.median(np.abs(floor - true_var)) < 0.5 * np.median(np.abs(model_var - true_var))
    with pytest.raises(ValueError, match="shape"):
        labelled_mean_floor(second, rest[:3], v, q, N)


def test_the_second_moments_are_scaled_by_what_the_labels_showed() -> None:
    """``drawn_second``: before draw m the model's second moments are scaled by
    ``(sum_{j<m} v_j^2 + prior * mean) / (sum_{j<m} e_j + prior * mean)`` (``e`` the
    model's second moment at the labelled draws), never above 1: a surrogate that
    expects larger squared values than the labels show is taken down to them, one that
    expects smaller ones is not raised (the observed variance shows those)."""
    rng = np.random.default_rng(8)
    K, N = 15, 80
    second = rng.uniform(50, 90, K)
    rest = np.zeros(K)
    v = rng.normal(0, 0.5, K)
    q = np.full(K, 1.0 / N)
    e = np.full(K, 1.0)  # the model expects v^2 = 1; the labels show about 0.25
    got = labelled_mean_floor(second, rest, v, q, N, drawn_second=e, prior_second=1.0,
                              prior=5.0)
    plain = labelled_mean_floor(second, rest, v, q, N)
    pad = 5.0
    for m in range(K):
        rho = min(1.0, (np.sum(v[:m] ** 2) + pad) / (m + pad))
        T = plain[m] - second[m]  # -rest^2, the labels' total as without scaling
        assert got[m] == pytest.approx(max(second[m] * rho + T, 0.0), rel=1e-12)
    assert got[0] == pytest.approx(plain[0])  # nothing labelled: not scaled
    assert got[-1] < 0.6 * plain[-1]
    big = labelled_mean_floor(second, rest, 3 * v, q, N, drawn_second=np.full(K, 0.01),
                              prior_second=0.01)
    np.testing.assert_allclose(big, labelled_mean_floor(second, rest, 3 * v, q, N))
    with pytest.raises(ValueError, match="drawn_second"):
        labelled_mean_floor(second, rest, v, q, N, drawn_second=e[:3], prior_second=1.0)
    with pytest.raises(ValueError, match="prior_second"):
        labelled_mean_floor(second, rest, v, q, N, drawn_second=e)
    # the prior is the pool's mean, not the labelled draws': the floor at draw m does not
    # change with what is drawn after m (predictable)
    later = e.copy()
    later[8:] = 40.0
    moved = labelled_mean_floor(second, rest, v, q, N, drawn_second=later, prior_second=1.0)
    np.testing.assert_array_equal(moved[:9], got[:9])


def test_design_second_sums_is_the_model_var_of_a_zero_mean_bit_for_bit() -> None:
    """``design_second_sums`` was a near-copy of ``design_model_var`` (its own loop, its
    own compiled kernel) and took ``(R, N)`` moments only; it is now that function with a
    zero mean: the same numbers (==), for ``(N,)`` moments too (``(K,)`` back), and each
    is ``sum_{S_m} second_i / q_m(i)`` under the proposal the design drew from."""
    from activetest.stats.model_floor import design_second_sums

    T, S, y, _h, x, _p, _d = _moments()
    L = -T[np.arange(T.shape[0]), y]
    design = AdaptiveDesign.from_name("calibrated", surrogate_logprobs=log_softmax(S),
                                      target_logprobs=T, loss="log", rule="earned")
    acq = simulate_design(design, losses=L, labels=y, budget=30, n_runs=1,
                          random_state=4).indices[0]
    X = np.stack([x, np.where(np.arange(x.size) % 3 == 0, 0.0, 2.5 * x)])
    kw = {"labels": y[acq], "losses": L[acq]}
    rows = design_second_sums(design, acq, X, **kw)
    assert rows.shape == (2, 30)
    assert np.array_equal(rows, design_model_var(design, acq, np.zeros_like(X), X, **kw))
    one = design_second_sums(design, acq, x, **kw)
    assert one.shape == (30,) and np.array_equal(one, rows[0])
    want = [float(np.sum(x[q > 0] / q[q > 0])) for q, _ in
            design_proposals(design, acq, **kw)]
    np.testing.assert_allclose(one, want, rtol=1e-12)
