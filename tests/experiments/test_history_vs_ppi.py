"""The neighbours design against PPI++ (experiments/history_vs_ppi.py): the PPI++ fits are
the history experiment's (today's features) and the neighbours' column exactly as the
design computes it (with the column); the cache key moves with each method; the blocks
add up; a reduced run renders."""

from __future__ import annotations

import numpy as np
import pytest

from activetest.experiments import history_vs_ppi as vp
from activetest.experiments.coverage import ASYMPTOTIC_CS
from tests.experiments.conftest import shift_keyword


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):  # type: ignore[no-untyped-def]
    from activetest.experiments.history import MATRICES
    from activetest.experiments.probe import tiny_matrix
    from activetest.formats.history import read_response_matrix
    from activetest.stats.feature_design import feature_design

    d = tmp_path_factory.mktemp("m")
    M = read_response_matrix(tiny_matrix(d / MATRICES["bbh"]))
    S = M.scores
    hf, nh = vp._features(S[2:], 1)
    return d, S, feature_design(history=hf, neighbours=nh), nh


def test_todays_features_are_the_history_experiments_ppi_and_irt(tiny) -> None:
    """Without the column: the same estimates as history_baselines.baselines (the PPI++
    and IRT-style rows of docs/history.md) on the same uniform orders."""
    from activetest.experiments.history_baselines import baselines

    _, S, d, _ = tiny
    L = 1.0 - S[0]
    N = L.size
    bud = (5, 10, 20)
    ref = baselines(d._Phi[:, :-1], L, bud, 7, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    perms = np.stack([rng.permutation(N) for _ in range(7)])
    r = vp.uniform_methods(vp.uniform_fits(d._Phi[:, :-1], d._w0[:-1], L, perms, bud), L,
                           perms, bud)
    np.testing.assert_allclose(r["ppi"], ref.ppi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r["irt"], ref.irt, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(r["cov_ppi"].astype(bool), ref.cov_ppi)
    np.testing.assert_array_equal(r["cov_irt"].astype(bool), ref.cov_irt)


def test_the_column_is_the_designs_and_the_fit_and_ppi_are_the_packages(tiny) -> None:
    """With the column: per run and budget the column is neighbour_column on those labels
    (leave-one-out on the labelled items), the fit is fit_predict's MAP on [features,
    column] (the design's kernel, the column's prior weight 1) and PPI++ is ppi_py's
    on one run."""
    from ppi_py import ppi_mean_pointestimate

    from activetest.stats.adaptive import RIDGES
    from activetest.stats.neighbours import neighbour_column

    _, S, d, nh = tiny
    L = 1.0 - S[1]
    N = L.size
    bud = (5, 10, 20)
    rng = np.random.default_rng(5)
    perms = np.stack([rng.permutation(N) for _ in range(4)])
    G = vp.uniform_fits(d._Phi, d._w0, L, perms, bud, neighbours=nh)
    r = vp.uniform_methods(G, L, perms, bud)
    assert d._w0[-1] == 1.0 and d._w0[0] == 1.0 and not d._w0[1:-1].any()
    for run in range(4):
        warm = np.tile(d._w0, (len(RIDGES), 1))
        for b, m in enumerate(bud):
            lab = perms[run, :m]
            X = d._Phi.copy()
            X[:, -1] = neighbour_column(nh, lab, L[lab])
            g = _fit_with_prior(X, lab, L[lab], d._w0, warm)
            np.testing.assert_allclose(G[run, b], g, rtol=0, atol=1e-9)
            ref = float(np.ravel(ppi_mean_pointestimate(L[lab], g[lab], g))[0])
            assert abs(r["ppi"][run, b] - ref) < 1e-8
    # the column matters (a different model from today's features)
    G0 = vp.uniform_fits(d._Phi[:, :-1], d._w0[:-1], L, perms, bud)
    assert np.abs(G - G0).max() > 1e-3


def _fit_with_prior(X, lab, losses, w0, warm):  # type: ignore[no-untyped-def]
    """The design's own kernel (``graded_map``, not the baselines' BLAS one): MAP at every
    ridge from ``warm`` with prior mean ``w0``, the best evidence's prediction."""
    from activetest.stats import _design_models as dm
    from activetest.stats.adaptive import RIDGES

    X = np.ascontiguousarray(X)
    hidx = np.ascontiguousarray(lab, dtype=np.int64)
    hL = np.ascontiguousarray(losses, dtype=np.float64)
    best, wb = -np.inf, None
    for k, rho in enumerate(RIDGES):
        ev = dm.graded_map(X, hidx, hL, len(lab), warm[k], w0, float(rho))
        if ev > best:
            best, wb = ev, warm[k]
    s, g = np.empty(X.shape[0]), np.empty(X.shape[0])
    dm.graded_predict(X, wb, s, g)
    return g


def test_probe_is_deterministic_and_moves_with_each_method(monkeypatch) -> None:
    """The cache key's probe sees the design, its two intervals, each PPI++ fit (with and
    without the column) and ppi_py's estimate and interval."""
    import ppi_py

    base = vp.behaviour_probe()
    assert vp.behaviour_probe() == base
    changes = {
        "design": lambda mp: shift_keyword(mp, vp, "simulate_design", lambda a, k: True,
                                    random_state=np.random.default_rng(99)),
        "fixed-budget interval": lambda mp: shift_keyword(mp, vp, "fixed_interval_curve",
                                                   lambda a, k: True, level=0.9),
        "anytime CS": lambda mp: shift_keyword(mp, vp, "asymptotic_cs", lambda a, k: True,
                                        alpha=0.1),
        "PPI++ (neighbours) fit": lambda mp: _fits(mp, with_column=True),
        "PPI++ (today's features) fit": lambda mp: _fits(mp, with_column=False),
        "ppi_py estimate": lambda mp: mp.setattr(
            ppi_py, "ppi_mean_pointestimate",
            lambda *a, _o=ppi_py.ppi_mean_pointestimate, **k: np.asarray(_o(*a, **k)) * 1.01),
        "ppi_py interval": lambda mp: mp.setattr(
            ppi_py, "ppi_mean_ci",
            lambda *a, _o=ppi_py.ppi_mean_ci, **k: tuple(np.asarray(x) * 1.2
                                                         for x in _o(*a, **k))),
    }
    for name, change in changes.items():
        with monkeypatch.context() as mp:
            change(mp)
            assert vp.behaviour_probe() != base, name
    assert vp.behaviour_probe() == base


def _fits(mp, with_column: bool) -> None:  # type: ignore[no-untyped-def]
    """The fits of one feature set slightly changed (the other's untouched)."""
    orig = vp.uniform_fits

    def wrapped(X, w0, L, perms, budgets, neighbours=None):  # type: ignore[no-untyped-def]
        G = orig(X, w0, L, perms, budgets, neighbours=neighbours)
        return G * 0.99 if (neighbours is not None) == with_column else G
    mp.setattr(vp, "uniform_fits", wrapped)


def test_blocks_add_up_and_a_reduced_run_renders_from_its_cache(tiny, tmp_path, capsys,
                                                                 monkeypatch) -> None:
    """CI's reduced run: two blocks on the tiny matrix, cached; combine adds their sums
    (relative error = total squared error / total runs / uniform's); the second call
    reads both blocks from the cache (no block computed) and prints the same tables."""
    d = tiny[0]
    argv = ["--root", str(d), "--matrix", "bbh", "--scenario", "cross", "--targets", "3",
            "--runs", "4", "--blocks", "2", "--budgets", "5", "10", "20", "--cache",
            str(tmp_path)]
    vp.main(argv)
    first = capsys.readouterr().out
    files = sorted(tmp_path.glob("history-vsppi-bbh-cross-*.npz"))
    assert len(files) == 2
    blocks = [dict(np.load(f)) for f in files]
    res = vp.combine(blocks)
    assert int(res["runs"]) == 8
    sse = blocks[0]["sse_design"] + blocks[1]["sse_design"]
    np.testing.assert_allclose(res["rel_design"], sse / 8 / blocks[0]["uvar"])
    np.testing.assert_allclose(res["cov_fixed"], (blocks[0]["cov_fixed"]
                                                  + blocks[1]["cov_fixed"]) / 8)
    assert not np.array_equal(blocks[0]["sse_design"], blocks[1]["sse_design"])  # own seeds
    for k in ("rel_design", "rel_ppi_nb", "rel_ppi", "rel_irt_nb", "rel_irt"):
        assert np.all(np.isfinite(res[k])) and np.all(res[k] > 0), k
    assert np.all((res["cov_fixed"] >= 0) & (res["cov_fixed"] <= 1))
    assert "8 runs of the design" in first and "| PPI++ (neighbours) |" in first
    # the anytime CS by the product's name (QA: "Design, anytime (asymptotic CS over ...")
    assert f"\nDesign, {ASYMPTOTIC_CS} over M = 30..20 at once: " in first
    monkeypatch.setattr(vp, "block", lambda *a, **k: pytest.fail("recomputed"))
    vp.main(argv)
    second = capsys.readouterr().out  # the tables only (no progress lines)
    assert second.startswith("#### bbh, cross") and first.endswith(second)
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- history-vsppi-bbh-cross:begin -->\nold\n"
                   "<!-- history-vsppi-bbh-cross:end -->\nrest\n", encoding="utf-8")
    vp.main([*argv, "--out", str(doc)])
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("intro\n") and text.endswith("rest\n") and "old" not in text
    assert second.strip() in text


def test_the_committed_blocks_are_at_todays_keys() -> None:
    """Every committed block of the study (docs/history.md) is found under today's key for
    the parameters stored in it (experiments/rekey.py's check)."""
    from pathlib import Path

    from activetest.experiments.rekey import _rekey_file

    repo = Path(__file__).resolve().parents[2]
    root = repo / ".." / "shared" / "datasets" / "history"
    files = sorted([*(repo / "experiments" / "cache").glob("history-vsppi-*.npz"),
                    *(repo / "experiments" / "cache").glob("history-crossppi-*.npz")])
    if not root.is_dir() or not files:
        pytest.skip("no shared history matrices or no cached blocks")
    for f in files:
        assert _rekey_file(f, str(root), False, Path("/nonexistent")).endswith(
            "already today's key"), f.name


def test_cached_npz_computes_once_and_writes_whole_files(tmp_path) -> None:
    """The studies' shared cache helper (experiments/cache.py): computed and written on the
    first call, read (not computed) on the second, no temporary file left; the shared
    parser's defaults are each study's own."""
    from activetest.experiments.cache import cached_npz, study_parser

    calls = []
    f = tmp_path / "sub" / "x.npz"

    def compute() -> dict[str, np.ndarray]:
        calls.append(1)
        return {"a": np.arange(3.0), "meta": np.array([1.0, 2.0])}
    first = cached_npz(f, compute)
    second = cached_npz(f, compute)
    assert calls == [1] and sorted(p.name for p in f.parent.iterdir()) == ["x.npz"]
    for k in first:
        np.testing.assert_array_equal(first[k], second[k])
    a = study_parser("p", scenario="cross", runs=7).parse_args([])
    assert (a.scenario, a.runs, a.budgets, a.targets) == ("cross", 7, [25, 50, 100, 200, 400], 30)


def test_cross_ppi_without_the_column_is_the_history_experiments(tiny) -> None:
    """Without the column: the fold fits and cross-PPI estimates of
    history_baselines.baselines (the history experiment's cross-PPI row) on the same
    uniform orders."""
    from activetest.experiments.history_baselines import baselines

    _, S, d, _ = tiny
    L = 1.0 - S[0]
    N = L.size
    bud = (5, 10, 20)
    ref = baselines(d._Phi[:, :-1], L, bud, 7, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    perms = np.stack([rng.permutation(N) for _ in range(7)])
    r = vp.cross_methods(vp.cross_fits(d._Phi[:, :-1], d._w0[:-1], L, perms, bud), L, perms,
                         bud)
    np.testing.assert_allclose(r["cross"], ref.cross, rtol=0, atol=1e-12)
    assert np.all(r["low"] < r["cross"]) and np.all(r["cross"] < r["high"])


def test_cross_ppi_folds_see_only_their_labels_and_ppi_is_the_packages(tiny) -> None:
    """With the column: fold f's model at budget m is the design kernel's MAP (prior
    weight 1 on the column) on the first m items of the order whose position mod 2 is not
    f, its column neighbour_column from those items' labels alone; the estimate and
    interval are ppi_py's crossppi on each run (each labelled item predicted by the fold
    model not fitted on it)."""
    from ppi_py import crossppi_mean_ci, crossppi_mean_pointestimate

    from activetest.stats.adaptive import RIDGES
    from activetest.stats.neighbours import neighbour_column

    _, S, d, nh = tiny
    L = 1.0 - S[1]
    N = L.size
    bud = (6, 11, 20)
    rng = np.random.default_rng(8)
    perms = np.stack([rng.permutation(N) for _ in range(3)])
    GF = vp.cross_fits(d._Phi, d._w0, L, perms, bud, neighbours=nh)
    r = vp.cross_methods(GF, L, perms, bud)
    truth = L.mean()
    for run in range(3):
        warm = [np.tile(d._w0, (len(RIDGES), 1)) for _ in range(2)]
        for b, m in enumerate(bud):
            lab = perms[run, :m]
            yh = np.empty(m)
            for f in range(2):
                train = lab[np.arange(m) % 2 != f]
                X = d._Phi.copy()
                X[:, -1] = neighbour_column(nh, train, L[train])
                g = _fit_with_prior(X, train, L[train], d._w0, warm[f])
                np.testing.assert_allclose(GF[run, b, f], g, rtol=0, atol=1e-9)
                yh[np.arange(m) % 2 == f] = GF[run, b, f, lab[np.arange(m) % 2 == f]]
            yu = GF[run, b].T
            est = float(np.ravel(crossppi_mean_pointestimate(L[lab], yh, yu))[0])
            lo, hi = (float(np.ravel(x)[0]) for x in crossppi_mean_ci(L[lab], yh, yu,
                                                                      alpha=0.05))
            assert abs(r["cross"][run, b] - est) < 1e-12
            assert (r["low"][run, b], r["high"][run, b]) == (lo, hi)
            assert r["cov_cross"][run, b] == float(lo <= truth <= hi)
    # each fold's column is its own labels' (not all m): the folds differ from the full fit
    G = vp.uniform_fits(d._Phi, d._w0, L, perms, bud, neighbours=nh)
    assert np.abs(GF[:, :, 0] - G).max() > 1e-3 and np.abs(GF[:, :, 0] - GF[:, :, 1]).max() > 1e-3


def test_cross_blocks_use_the_blocks_uniform_draws(tiny, monkeypatch) -> None:
    """cross_block's uniform orders are block()'s, order for order (PPI++, IRT-style and
    cross-PPI pair run for run), and the same held-out models and history."""
    d = tiny[0]
    seen: dict[str, list[np.ndarray]] = {"block": [], "cross": []}
    uf, cf = vp.uniform_fits, vp.cross_fits

    def rec_u(X, w0, L, perms, budgets, neighbours=None):  # type: ignore[no-untyped-def]
        if neighbours is not None:
            seen["block"].append((L.copy(), perms.copy()))
        return uf(X, w0, L, perms, budgets, neighbours=neighbours)

    def rec_c(X, w0, L, perms, budgets, neighbours=None):  # type: ignore[no-untyped-def]
        seen["cross"].append((L.copy(), perms.copy()))
        return cf(X, w0, L, perms, budgets, neighbours=neighbours)
    monkeypatch.setattr(vp, "uniform_fits", rec_u)
    monkeypatch.setattr(vp, "cross_fits", rec_c)
    kw = {"n_targets": 3, "n_runs": 5, "block_index": 2, "budgets": (5, 10), "seed": 4,
          "log": False}
    b = vp.block(d, "bbh", "random", **kw)
    c = vp.cross_block(d, "bbh", "random", **kw)
    assert len(seen["block"]) == len(seen["cross"]) == 3
    for (Lb, pb), (Lc, pc) in zip(seen["block"], seen["cross"], strict=True):
        np.testing.assert_array_equal(Lb, Lc)
        np.testing.assert_array_equal(pb, pc)
    np.testing.assert_array_equal(b["meta"][:5], c["meta"][:5])
    res = vp.combine([b], [c])
    assert res["rel_cross_nb"].shape == res["rel_ppi_nb"].shape
    np.testing.assert_allclose(res["rel_cross_nb"], c["sse_cross_nb"] / 5 / b["uvar"])
    c2 = dict(c, meta=c["meta"] + np.array([0, 0, 1, 0, 0, 0]))
    with pytest.raises(ValueError, match="pair"):
        vp.combine([b], [c2])


def test_cross_probe_is_deterministic_and_moves_with_the_fits_and_ppi(monkeypatch) -> None:
    """The cross-PPI blocks' key sees the fold fits, ppi_py's crossppi estimate and
    interval; the other blocks' probe does not see cross-PPI (their cached blocks keep
    their keys)."""
    import ppi_py

    base = vp.cross_behaviour_probe()
    assert vp.cross_behaviour_probe() == base
    other = vp.behaviour_probe()
    changes = {
        "fold fits": lambda mp: mp.setattr(
            vp, "cross_fits", lambda *a, _o=vp.cross_fits, **k: _o(*a, **k) * 0.99),
        "crossppi estimate": lambda mp: mp.setattr(
            ppi_py, "crossppi_mean_pointestimate",
            lambda *a, _o=ppi_py.crossppi_mean_pointestimate, **k:
                np.asarray(_o(*a, **k)) * 1.01),
        "crossppi interval": lambda mp: mp.setattr(
            ppi_py, "crossppi_mean_ci",
            lambda *a, _o=ppi_py.crossppi_mean_ci, **k: tuple(np.asarray(x) * 1.2
                                                              for x in _o(*a, **k))),
    }
    for name, change in changes.items():
        with monkeypatch.context() as mp:
            change(mp)
            assert vp.cross_behaviour_probe() != base, name
            assert vp.behaviour_probe() == other, name
    assert vp.cross_behaviour_probe() == base


def test_a_reduced_cross_run_renders_from_its_cache(tiny, tmp_path, capsys,
                                                    monkeypatch) -> None:
    """--cross: the cross-PPI blocks cached beside the blocks (their own files), the rows
    rendered (relative error, design / cross-PPI, coverage); a second call computes
    nothing; the tables without --cross are those of the blocks alone."""
    d = tiny[0]
    argv = ["--root", str(d), "--matrix", "bbh", "--scenario", "random", "--targets", "3",
            "--runs", "3", "--blocks", "2", "--budgets", "5", "10", "--cache",
            str(tmp_path)]
    vp.main([*argv, "--compute", "0", "1", "--cross"])
    assert "####" not in capsys.readouterr().out  # progress lines only
    assert len(sorted(tmp_path.glob("history-vsppi-bbh-random-*.npz"))) == 2
    assert len(sorted(tmp_path.glob("history-crossppi-bbh-random-*.npz"))) == 2
    monkeypatch.setattr(vp, "block", lambda *a, **k: pytest.fail("recomputed"))
    monkeypatch.setattr(vp, "cross_block", lambda *a, **k: pytest.fail("recomputed"))
    vp.main([*argv, "--cross"])
    out = capsys.readouterr().out
    for row in ("| cross-PPI (neighbours, 2-fold) |",
                "| cross-PPI (neighbours, 2-fold), ppi_py crossppi_mean_ci |",
                "cross-PPI (2-fold, neighbours)", "--budgets 5 10 --cross`",
                "Cross-PPI mean error: M = 5:", "the goal, <= 0.85, is against PPI++"):
        assert row in out, row
    assert out.count("| cross-PPI (neighbours, 2-fold) |") == 2  # error and ratio tables
    vp.main(argv)
    plain = capsys.readouterr().out
    assert "cross-PPI" not in plain and "| PPI++ (neighbours) |" in plain
