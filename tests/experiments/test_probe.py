"""The experiments' caches are keyed on behaviour: a refactor keeps the key, a change of
any number used (in any variant the experiment runs) changes it."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest

from activetest.experiments import probe as pr


def _fresh(name: str) -> str:
    from activetest.experiments import history, history_guard, history_pe
    return {"history": history.behaviour_probe, "history_guard": history_guard.behaviour_probe,
            "history_pe": history_pe.behaviour_probe,
            "designs": pr.designs_probe.__wrapped__}[name]()


@pytest.mark.parametrize("name", ["history", "history_guard", "history_pe", "designs"])
def test_probe_is_deterministic_cheap_and_blind_to_a_refactor(name: str, monkeypatch) -> None:
    import activetest.experiments.history as hist
    import activetest.stats.adaptive as adap

    _fresh(name)  # imports (ppi_py's is slow) out of the timing
    t0 = time.process_time()
    base = _fresh(name)
    assert time.process_time() - t0 < 5.0  # ~0.1-0.4 s alone; generous for a loaded CI
    assert _fresh(name) == base
    # a refactor: the same functions behind a wrapper change no number, keep the key
    for mod, fn in ((hist, "simulate_design"), (adap, "simulate_design")):
        orig = getattr(mod, fn)
        monkeypatch.setattr(mod, fn, functools.wraps(orig)(lambda *a, _o=orig, **k: _o(*a, **k)))
    assert _fresh(name) == base


def _shift(mod, fn, monkeypatch, *, when=lambda a, k: True, **over) -> None:
    orig = getattr(mod, fn)

    def wrapped(*a, **k):
        if when(a, k):
            k = {**k, **over}
        return orig(*a, **k)
    monkeypatch.setattr(mod, fn, wrapped)


def _history_features_rank(k) -> int:
    return k["history"].rank


# every variant of every experiment: a changed parameter of that variant alone moves its key
CHANGES = {
    "history": [
        ("design", lambda mp: _shift(__import__("activetest.experiments.history", fromlist=["x"]),
                                     "feature_design", mp, lam=0.3,
                                     when=lambda a, k: _history_features_rank(k) > 0)),
        ("design (difficulty only)", lambda mp: _shift(
            __import__("activetest.experiments.history", fromlist=["x"]), "feature_design", mp,
            lam=0.3, when=lambda a, k: _history_features_rank(k) == 0)),
        ("fixed-budget interval", lambda mp: _shift(
            __import__("activetest.experiments.history", fromlist=["x"]),
            "fixed_interval_curve", mp, level=0.9)),
        ("anytime CS", lambda mp: _shift(
            __import__("activetest.experiments.history", fromlist=["x"]), "asymptotic_cs", mp,
            alpha=0.1)),
        ("PPI++ estimate", lambda mp: _scale("ppi_mean_pointestimate", mp)),
        ("cross-PPI", lambda mp: _scale("crossppi_mean_pointestimate", mp)),
        # the baselines' model fit (experiments/history_baselines.py): one ridge, not four
        ("model fit (PPI++, IRT-style)", lambda mp: mp.setattr(
            __import__("activetest.experiments.history_baselines", fromlist=["x"]), "RIDGES",
            (1.0,))),
    ],
    "history_guard": [
        (v, lambda mp, v=v: mp.setitem(
            __import__("activetest.experiments.history_guard", fromlist=["x"]).VARIANTS, v,
            {**__import__("activetest.experiments.history_guard", fromlist=["x"]).VARIANTS[v],
             "lam": 0.3}))
        for v in ("original", "earned", "fallback")
    ],
    "history_pe": [
        ("proposal floor", lambda mp: _shift(
            __import__("activetest.stats.sampler", fromlist=["x"]), "sample", mp,
            proposal_floor=0.2)),
        ("estimator", lambda mp: _scale_fn("activetest.stats.estimators", "lure_curve", mp)),
    ],
    "designs": [
        *((m, lambda mp, m=m: _design_lam(m, mp))
          for m in ("adaptive+cv_lure", "fixed_mix+cv_lure", "pe_adaptive+cv_lure")),
        ("error-rate rows (0-1 loss)", lambda mp: _design_lam("adaptive+cv_lure", mp,
                                                              loss="zero_one")),
        ("uniform+mean (the divisor)", lambda mp: _paper_method("uniform+mean", mp)),
    ],
}


def _scale_fn(module: str, fn: str, mp) -> None:
    mod = __import__(module, fromlist=["x"])
    orig = getattr(mod, fn)
    mp.setattr(mod, fn, lambda *a, **k: np.asarray(orig(*a, **k)) * (1 + 1e-6))


def _scale(fn: str, mp) -> None:
    import ppi_py
    orig = getattr(ppi_py, fn)
    mp.setattr(ppi_py, fn, lambda *a, **k: np.asarray(orig(*a, **k)) * (1 + 1e-6))


def _design_lam(method: str, mp, loss: str | None = None) -> None:
    """The design behind one method (optionally for one loss only) with another lambda."""
    from activetest.experiments.paper import DESIGN_ACQUISITIONS, Method
    from activetest.stats.adaptive import AdaptiveDesign

    name = DESIGN_ACQUISITIONS[Method.parse(method).acquisition]
    orig = AdaptiveDesign.from_name.__func__

    def wrapped(cls, n, **k):
        if n == name and (loss is None or k.get("loss") == loss):
            k = {**k, "lam": 0.3}
        return orig(cls, n, **k)
    mp.setattr(AdaptiveDesign, "from_name", classmethod(wrapped))


def _paper_method(method: str, mp) -> None:
    """Perturb one method's estimates only (every method's rows are probed)."""
    import activetest.experiments.paper as paper
    orig = paper.run_setting

    def wrapped(*a, **k):
        r = orig(*a, **k)
        if method in r.relative:
            r.relative[method] = r.relative[method] * (1 + 1e-6)
        return r
    mp.setattr(paper, "run_setting", wrapped)


@pytest.mark.parametrize(("name", "variant", "change"),
                         [(n, v, c) for n, cs in CHANGES.items() for v, c in cs],
                         ids=[f"{n}:{v}" for n, cs in CHANGES.items() for v, _ in cs])
def test_a_change_in_any_variant_changes_the_key(name, variant, change, monkeypatch) -> None:
    base = _fresh(name)
    change(monkeypatch)
    assert _fresh(name) != base, f"{name}: a change in {variant} kept the key"


def test_rounding_ignores_the_last_bits_only() -> None:
    x = np.array([0.1234567890123, 3.0, np.nan])
    assert pr.digest(x) == pr.digest(x * (1 + 1e-14))
    assert pr.digest(x) != pr.digest(x * (1 + 1e-8))


def test_the_committed_history_caches_are_at_todays_keys() -> None:
    """The re-keyed files (docs/history.md) render without recomputing: each file's name
    is today's key for the parameters stored in it."""
    from pathlib import Path

    from activetest.experiments.rekey import _rekey_file

    root = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "history"
    files = sorted((Path(__file__).resolve().parents[2] / "experiments" / "cache")
                   .glob("history-*.npz"))
    if not root.is_dir() or not files:
        pytest.skip("no shared history matrices or no cached files")
    for f in files:
        assert _rekey_file(f, str(root), False, Path("/nonexistent")).endswith(
            "already today's key"), f.name


def test_design_rows_move_from_a_proven_old_key_and_only_then(tmp_path, monkeypatch) -> None:
    """--migrate-cache-from: an entry stored under the old code part is found, stored
    under today's key (same values) and counted as one hit; without it, a miss."""
    from activetest.experiments.cache import ResultCache
    from activetest.experiments.paper import Setting, run_setting
    from activetest.experiments.reproduce import _Designs

    data = pr._tiny_outputs()
    s = Setting("probe", "a/few", "b/few")
    res = run_setting(data, s, n_runs=2, budget=10, methods=("uniform+mean",))
    tgt, sur = data.outputs[s.target], data.outputs[s.surrogate]
    methods = ("adaptive+cv_lure",)
    old = ResultCache.key("0ld", tgt.pool, sur.pool, data.pool_labels, res.truth, res.offset,
                          2, 10, 0, methods)
    stored = {"rel:adaptive+cv_lure": np.linspace(0.5, 1.0, 10), "seconds": np.array([3.0])}
    cache = ResultCache(tmp_path / "d.npz")
    cache.put(old, stored)
    dz = _Designs(cache, 2, 10, 0, migrate_from="0ld")
    dz.add(data, s, res, methods=methods)
    assert (dz.migrated, cache.hits, cache.misses) == (1, 1, 0)
    np.testing.assert_array_equal(res.relative["adaptive+cv_lure"],
                                  stored["rel:adaptive+cv_lure"].astype(np.float32))
    assert dz.used - {old} == dz.used  # today's key, not the old one, is kept by prune
    fresh = ResultCache(None)
    fresh.put(old, stored)
    calls = []
    import activetest.experiments.reproduce as rep
    orig = rep.run_setting
    monkeypatch.setattr(rep, "run_setting", lambda *a, **k: calls.append(1) or orig(*a, **k))
    _Designs(fresh, 2, 10, 0).add(data, s, run_setting(data, s, n_runs=2, budget=10,
                                                       methods=("uniform+mean",)),
                                  methods=methods)
    assert calls == [1]  # no migration asked: recomputed


def test_guard_variants_are_probed_apart_from_the_default_ones(monkeypatch) -> None:
    """The out-of-sample guard's variants (``--variants``) have their own probe: a change
    in any of them moves it, and leaves the default variants' key (the committed tables)."""
    from activetest.experiments import history_guard as hg

    base = hg.behaviour_probe()
    names = tuple(hg.GUARD_VARIANTS)
    guard = hg.behaviour_probe(names)
    assert guard != base
    for v in names:
        monkeypatch.setitem(hg.GUARD_VARIANTS, v, {**hg.GUARD_VARIANTS[v], "lam": 0.3})
        assert hg.behaviour_probe(names) != guard, v
        assert hg.behaviour_probe() == base, v
        monkeypatch.undo()
