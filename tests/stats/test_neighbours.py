"""The similarity-weighted neighbours' column of the feature design (stats/neighbours.py)."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.stats import adaptive_lure, importance_sampling
from activetest.stats.adaptive import AdaptiveSampler, refit_schedule, simulate_design
from activetest.stats.feature_design import feature_design, history_features
from activetest.stats.neighbours import (
    choose_eps,
    neighbour_column,
    neighbour_design,
    neighbour_history,
)
from tests.stats.conftest import enumerate_design
from tests.stats.test_feature_design import _matrix

EVERY = refit_schedule(10, first=1, growth=1.0)  # refit (and re-choose lambda) before every draw


def _designs(n: int, seed: int, graded: bool):
    hist, L = _matrix(12, n, 2, seed, missing=0.2)
    hist[:, 0] = np.nan  # one item without any history
    hf = history_features(hist, rank=2)
    nh = neighbour_history(hist, p_correct=hf.p_correct, eps=0.2)
    hf0 = history_features(hist, rank=0)
    rng = np.random.default_rng(seed + 100)
    if graded:
        L = np.clip(L * rng.uniform(0.4, 1.0, n) + (1 - L) * rng.uniform(0, 0.3, n), 0, 1)
    return {
        "history+neighbours": feature_design(history=hf, schedule=EVERY, neighbours=nh),
        "difficulty+neighbours_lam0.3": feature_design(history=hf0, schedule=EVERY, lam=0.3,
                                                       neighbours=nh),
        "neighbours_late": feature_design(history=hf, schedule=EVERY[2:], neighbours=nh),
        "neighbours_earned": feature_design(history=hf, schedule=EVERY, rule="earned",
                                            neighbours=nh),
        # the column recomputed only up to 2 labels, then kept or set to 0
        "neighbours_freeze2": neighbour_design(feature_design(history=hf, schedule=EVERY), nh,
                                               update_until=2),
        "neighbours_drop2": neighbour_design(feature_design(history=hf, schedule=EVERY), nh,
                                             update_until=2, after="drop"),
    }, L


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize(("n", "seed"), [(5, 1), (6, 0), (4, 3)])
def test_exactly_unbiased_with_a_refit_before_every_draw(graded: bool, n: int,
                                                         seed: int) -> None:
    """Every ordered draw sequence, the neighbours' weights and column recomputed, the
    model refitted and lambda re-chosen before every draw: the expectation of adaptive
    LURE is the pool mean to 1e-12 at every budget; importance sampling on the same
    draws is visibly biased (the check has power) and the column really moves the
    proposal."""
    designs, losses = _designs(n, seed, graded)
    truth = losses.mean()
    assert np.ptp(losses) > 0
    for name, design in designs.items():
        is_bias = 0.0
        for M in range(1, n + 1):
            e = e_is = total = 0.0
            for seq, p, q, g, G in enumerate_design(design, losses, M):
                L = losses[list(seq)]
                e += p * float(adaptive_lure(L, q, n, g, G))
                e_is += p * float(importance_sampling(L, q, n))
                total += p
            assert total == pytest.approx(1.0, abs=1e-12), (name, M)
            assert e == pytest.approx(truth, abs=1e-12), (name, graded, M)
            is_bias = max(is_bias, abs(e_is - truth))
        assert is_bias > 1e-3, name


def test_the_column_changes_the_plan_after_labels_only() -> None:
    """Before any label the column is 0 (the plan is the design's without neighbours);
    after labels it moves the plan, and differently for different labels."""
    hist, L = _matrix(40, 30, 2, 4)
    hf = history_features(hist, rank=0)
    nh = neighbour_history(hist, p_correct=hf.p_correct, eps=0.2)
    with_nb = feature_design(history=hf, schedule=EVERY, neighbours=nh)
    without = feature_design(history=hf, schedule=EVERY)
    np.testing.assert_array_equal(with_nb.plan([]).q, without.plan([]).q)
    seen = [3, 7, 11, 20, 25]
    a = with_nb.plan(seen, losses=L[seen])
    assert not np.allclose(a.q, without.plan(seen, losses=L[seen]).q)
    assert not np.allclose(a.q, with_nb.plan(seen, losses=1 - L[seen]).q)


def _column_after(design, seen, losses) -> np.ndarray:
    """The neighbours' column the design uses at the draw after ``seen`` (labelled)."""
    st = design._new_state(len(seen) + 1)
    st["hL"][: len(seen)] = losses
    for m, i in enumerate(seen):
        design._step(st, m, m, 0.0, i)
    design._update(st, len(seen))
    return st["X"][:, -1].copy()


def test_a_limited_update_freezes_or_drops_the_column() -> None:
    """With ``update_until=K`` (refit before every draw) the column after 5 labels is the
    one of the first K labels (freeze) or 0 (drop); unlimited it is the one of all 5; the
    names and specs tell the designs apart, and after K the three plan differently."""
    hist, L = _matrix(40, 30, 2, 4)
    hf = history_features(hist, rank=0)
    nh = neighbour_history(hist, p_correct=hf.p_correct, eps=0.2)
    base = feature_design(history=hf, schedule=EVERY)
    seen = [3, 7, 11, 20, 25]
    Ls = L[seen]
    full = neighbour_design(base, nh)
    np.testing.assert_allclose(_column_after(full, seen, Ls), neighbour_column(nh, seen, Ls))
    for K in (0, 2, 4):
        frz = neighbour_design(base, nh, update_until=K)
        np.testing.assert_allclose(_column_after(frz, seen, Ls),
                                   neighbour_column(nh, seen[:K], Ls[:K]))
        drp = neighbour_design(base, nh, update_until=K, after="drop")
        np.testing.assert_array_equal(_column_after(drp, seen, Ls), np.zeros(30))
        assert frz.name.endswith(f"+neighbours-freeze{K}")
        assert drp.spec()["name"].endswith(f"+neighbours-drop{K}")
    assert not np.allclose(neighbour_column(nh, seen[:2], Ls[:2]), neighbour_column(nh, seen, Ls))
    frz5 = neighbour_design(base, nh, update_until=5)  # K at or above the labels: unlimited
    np.testing.assert_array_equal(frz5.plan(seen, losses=Ls).q, full.plan(seen, losses=Ls).q)
    qs = [neighbour_design(base, nh, update_until=2, after=a).plan(seen, losses=Ls).q
          for a in ("freeze", "drop")] + [full.plan(seen, losses=Ls).q]
    assert not np.allclose(qs[0], qs[1]) and not np.allclose(qs[0], qs[2])
    assert not np.allclose(qs[1], qs[2])
    for bad in ({"update_until": -1}, {"update_until": 2.5}, {"after": "fade"}):
        with pytest.raises(ValueError):
            neighbour_design(base, nh, **bad)


def test_column_is_the_posterior_mixture_with_leave_one_out() -> None:
    """The column against a direct computation: weights prod_j P_hj^c (1 - P_hj)^(1-c),
    the shift of the weighted prediction's log-odds of a wrong answer from the
    unweighted one; labelled items without their own factor."""
    Y = np.array([[1, 0, 1, 1], [1, 1, 0, 0], [0, 1, 1, np.nan], [0, 0, 0, 1]], float)
    p = np.nanmean(Y, axis=0)
    eps = 0.2
    nh = neighbour_history(Y, p_correct=p, eps=eps)
    Yf = np.where(np.isnan(Y), p[None, :], Y)
    P = eps + (1 - 2 * eps) * Yf  # (H, N)

    def lo(x: np.ndarray) -> np.ndarray:
        return np.log((1 - x) / x)

    idx, losses = np.array([0, 2]), np.array([0.0, 1.0])  # right on item 0, wrong on 2
    c = 1 - losses
    lik = np.prod(P[:, idx] ** c * (1 - P[:, idx]) ** (1 - c), axis=1)
    want = lo((lik[:, None] * P).sum(0) / lik.sum()) - lo(P.mean(0))
    for j, i in enumerate(idx):
        w = lik / (P[:, i] ** c[j] * (1 - P[:, i]) ** (1 - c[j]))
        want[i] = lo((w * P[:, i]).sum() / w.sum()) - lo(P[:, i].mean())
    np.testing.assert_allclose(neighbour_column(nh, idx, losses), want, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(neighbour_column(nh, [], []), np.zeros(4))


@pytest.mark.parametrize(("until", "after"), [(None, "freeze"), (15, "freeze"), (15, "drop")])
def test_sampler_and_simulation_draw_the_same(until: int | None, after: str) -> None:
    """A session's sampler (observing each loss before the next draw) and the compiled
    simulation make the same draws, q and controls; a saved state replays (the column
    updated at every refit, or only up to 15 labels, then kept or set to 0)."""
    hist, L = _matrix(50, 80, 2, 6, missing=0.1)
    hf = history_features(hist, rank=2)
    d = neighbour_design(feature_design(history=hf),
                         neighbour_history(hist, p_correct=hf.p_correct),
                         update_until=until, after=after)
    runs = simulate_design(d, losses=L, labels=None, budget=40, n_runs=2, random_state=3,
                           model_var=True)
    U = np.random.default_rng(3).random((2, 40))
    for r in range(2):
        s = AdaptiveSampler(d, seed=0)
        for m in range(40):
            s._advance(float(U[r, m]))
            s.observe(losses=[L[s.acquired[-1]]])
        assert s.acquired == runs.indices[r].tolist()
        np.testing.assert_array_equal(s.q, runs.q[r])
        np.testing.assert_array_equal(s.control, runs.control[r])
        np.testing.assert_array_equal(s.model_var, runs.model_var[r])
    back = AdaptiveSampler.from_state(d, s.state())
    assert back.acquired == s.acquired
    np.testing.assert_array_equal(back.plan().q, s.plan().q)


def test_neighbours_find_the_target_among_near_copies() -> None:
    """History of noisy copies of a few 'families': the target is a family member, so
    the models agreeing with its labels predict its other items. With the column the
    design's error is well below the design's without it (1,000 runs of 40 draws), and
    the estimate stays unbiased (within 4 SE); eps is chosen on the history alone and
    is neither extreme."""
    rng = np.random.default_rng(12)
    N, F = 300, 6
    fam = (rng.random((F, N)) < rng.uniform(0.3, 0.7, (F, 1))).astype(float)
    flip = lambda x: np.where(rng.random(x.shape) < 0.1, 1 - x, x)  # noqa: E731
    hist = flip(np.repeat(fam, 30, axis=0))
    L = 1 - flip(fam[2])
    hf = history_features(hist, rank=0)
    eps, scores = choose_eps(hist)
    assert 0.05 < eps < 0.4 and len(scores) > 2
    nh = neighbour_history(hist, p_correct=hf.p_correct, eps=eps)
    res = {}
    for name, d in (("plain", feature_design(history=hf)),
                    ("nb", feature_design(history=hf, neighbours=nh))):
        est = simulate_design(d, losses=L, labels=None, budget=40, n_runs=1000,
                              random_state=1).curve(L)[:, -1]
        res[name] = ((est - L.mean()) ** 2).mean()
        if name == "nb":
            assert abs(est.mean() - L.mean()) < 4 * est.std(ddof=1) / np.sqrt(est.size)
    assert res["nb"] < 0.8 * res["plain"], res


def test_bad_inputs_are_refused() -> None:
    hist, _ = _matrix(10, 8, 1, 0)
    with pytest.raises(ValueError, match="eps"):
        neighbour_history(hist, eps=0.5)
    nh = neighbour_history(hist, eps=0.2)
    with pytest.raises(ValueError, match="cover"):
        feature_design(history=history_features(np.vstack([hist.T, hist.T[:2]]).T, rank=0),
                       neighbours=nh)


@pytest.mark.parametrize("graded", [False, True])
def test_the_one_pass_build_is_the_numpy_one_bit_for_bit(graded: bool) -> None:
    """neighbour_history's compiled one-pass build (item-major, as a session stores the
    matrix) against the numpy steps it replaced (``_make(_filled(Y, p), eps)``): the
    same bytes in every array, from either layout, with and without ``p_correct``."""
    from activetest.stats.neighbours import _filled, _make

    rng = np.random.default_rng(7 + graded)
    for _ in range(12):
        H, N = int(rng.integers(1, 40)), int(rng.integers(1, 60))
        Y = rng.uniform(size=(H, N))
        if not graded:
            Y = (Y > 0.4).astype(float)
        Y[rng.uniform(size=Y.shape) < 0.25] = np.nan
        eps = float(rng.uniform(0.01, 0.49))
        p = rng.uniform(size=N)
        for pc in (p, None):
            for M in (Y, np.ascontiguousarray(Y.T).T):  # models-major, item-major
                ref = _make(_filled(M, pc), eps)  # (p's default sums by M's layout)
                got = neighbour_history(M, p_correct=pc, eps=eps)
                for k in ("PT", "base", "log_p", "log_1mp"):
                    a, b = getattr(got, k), getattr(ref, k)
                    assert a.shape == b.shape and a.tobytes() == b.tobytes(), k
                assert got.PT.flags.c_contiguous and got.log_p.flags.c_contiguous
                assert got.eps == eps


@pytest.mark.parametrize("bad", [np.inf, -np.inf, 1.5, -0.1])
def test_a_bad_cell_is_refused_in_either_layout(bad: float) -> None:
    hist, _ = _matrix(6, 9, 1, 0)
    hist[2, 5] = bad
    for M in (hist, np.ascontiguousarray(hist.T).T):
        with pytest.raises(ValueError, match=r"scores in \[0, 1\]"):
            neighbour_history(M, p_correct=np.full(9, 0.5), eps=0.2)
    with pytest.raises(ValueError, match="p_correct"):
        neighbour_history(np.zeros((3, 4)), p_correct=np.zeros(5), eps=0.2)
    with pytest.raises(ValueError, match="models, items"):
        neighbour_history(np.zeros(4), eps=0.2)
