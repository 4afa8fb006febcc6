"""The experiments' caches are keyed on behaviour: a refactor keeps the key, a change of
any number used (in any variant the experiment runs) changes it, and the last digits that
differ between CPUs never do (the probe is stored and compared with a tolerance)."""

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
    mp.setattr(mod, fn, lambda *a, **k: np.asarray(orig(*a, **k)) * (1 + 1e-4))


def _scale(fn: str, mp) -> None:
    import ppi_py
    orig = getattr(ppi_py, fn)
    mp.setattr(ppi_py, fn, lambda *a, **k: np.asarray(orig(*a, **k)) * (1 + 1e-4))


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
            r.relative[method] = r.relative[method] * (1 + 1e-4)
        return r
    mp.setattr(paper, "run_setting", wrapped)


@pytest.mark.parametrize(("name", "variant", "change"),
                         [(n, v, c) for n, cs in CHANGES.items() for v, c in cs],
                         ids=[f"{n}:{v}" for n, cs in CHANGES.items() for v, _ in cs])
def test_a_change_in_any_variant_changes_the_key(name, variant, change, monkeypatch) -> None:
    base = _fresh(name)
    change(monkeypatch)
    assert not _fresh(name).matches(base), f"{name}: a change in {variant} kept the key"


def test_rounding_ignores_the_last_bits_only() -> None:
    x = np.array([0.1234567890123, 3.0, np.nan])
    assert pr.digest(x) == pr.digest(x * (1 + 1e-14))
    assert pr.digest(x) != pr.digest(x * (1 + 1e-8))


def _with(probe: pr.Probe, values: np.ndarray) -> pr.Probe:
    return pr.Probe(probe.name, probe.sizes, tuple(float(v) for v in values))


def test_a_probe_off_in_its_last_digits_keeps_the_key_and_a_changed_one_moves_it(
        tmp_path) -> None:
    """The experiments' probes agree only to 12-13 digits between BLAS kernels (another
    CPU), and some of their numbers lie within 2e-14 of a 10-digit rounding edge: hashed
    rounded (the former rule), another CPU's key could differ. Compared with a tolerance:
    a probe perturbed in its 8th digit, or with a number moved across a 10-digit rounding
    edge, gets the stored probe's id (the same key); one changed in its 3rd digit (a change
    of behaviour) gets its own."""
    from activetest.experiments import history

    today = history.behaviour_probe()
    v = np.array(today.values)
    stored = pr.probe_id(tmp_path, today, store=True)
    assert stored == today.id and (tmp_path / "probes" / f"{stored}.json").exists()
    k = int(np.flatnonzero(np.abs(v) > 0.01)[0])
    below, above = v.copy(), v.copy()
    below[k], above[k] = 0.12345678905 - 1e-13, 0.12345678905 + 1e-13
    assert _with(today, below).digest() != _with(today, above).digest()  # the former rule
    pr.probe_id(tmp_path / "edge", _with(today, below), store=True)
    assert pr.probe_id(tmp_path / "edge", _with(today, above)) == _with(today, below).id
    for near in (v * (1 + 4e-8), v * (1 - 4e-8)):
        assert pr.probe_id(tmp_path, _with(today, near)) == stored
    changed = v.copy()
    changed[k] *= 1.003
    assert pr.probe_id(tmp_path, _with(today, changed)) != stored
    # a probe of another experiment or shape never matches; none stored: today's own id
    assert not today.matches(pr.Probe("history_pe", today.sizes, today.values))
    assert not today.matches(pr.Probe(today.name, (*today.sizes[:-1], 0), today.values[:-1]))
    assert pr.probe_id(tmp_path / "none", today) == today.id
    assert not (tmp_path / "none").exists()  # a lookup writes nothing
    assert pr.Probe.from_json(today.to_json()) == today  # every number kept exactly


def test_a_cached_history_file_is_read_on_a_cpu_whose_probe_differs_in_its_8th_digit(
        tmp_path, monkeypatch) -> None:
    """The history experiment's cache (history-*.npz) computed under one probe is read,
    not recomputed, when today's probe differs only in its 8th digit (as another CPU's can
    in its last ones): the matrix is not read again."""
    from activetest.experiments import history

    def forget() -> None:  # the module's memoised probe
        for f in list(vars(history).values()):
            if callable(getattr(f, "cache_clear", None)):
                f.cache_clear()

    root = tmp_path / "data"
    root.mkdir()
    pr.tiny_matrix(root / history.MATRICES["bbh"])
    kw = dict(matrices=("bbh",), scenarios=("random",), n_targets=3, n_runs=2,
              budgets=pr.BUDGETS, cache=tmp_path / "cache", log=False)
    forget()
    first = history.study(root, **kw)
    orig = history.adaptive_lure_theta
    monkeypatch.setattr(history, "adaptive_lure_theta",
                        lambda *a, **k: orig(*a, **k) * (1 + 4e-8))
    monkeypatch.setattr(history, "read_response_matrix",  # study() reads it to compute
                        lambda *a, **k: pytest.fail("recomputed: the cache missed"))
    forget()
    try:
        again = history.study(root, **kw)
    finally:
        forget()
    np.testing.assert_array_equal(again[0].rel, first[0].rel)
    assert len(list((tmp_path / "cache").glob("history-*.npz"))) == 1


#: Today's probe of each name stored in experiments/cache/probes.
def _probe_named(name: str) -> pr.Probe:
    from activetest.experiments import (
        history,
        history_guard,
        history_neighbours,
        history_pe,
        history_vs_ppi,
        signals,
    )
    if name.startswith("history_guard:"):
        return history_guard.behaviour_probe(tuple(name.split(":", 1)[1].split(",")))
    return {"designs": pr.designs_probe, "signals": signals.behaviour_probe,
            "history": history.behaviour_probe, "history_guard": history_guard.behaviour_probe,
            "history_neighbours": history_neighbours.behaviour_probe,
            "history_pe": history_pe.behaviour_probe,
            "history_vs_ppi": history_vs_ppi.behaviour_probe,
            "history_vs_ppi:cross": history_vs_ppi.cross_behaviour_probe}[name]()


def test_every_committed_probe_matches_todays_and_is_the_one_its_name_keys_on() -> None:
    """experiments/cache/probes: one stored probe per behaviour, each matching today's
    probe of its name and chosen for it (so the committed entries keyed by it are found on
    any CPU whose probe matches)."""
    from pathlib import Path

    cache = Path(__file__).resolve().parents[2] / "experiments" / "cache"
    files = sorted((cache / "probes").glob("*.json"))
    assert len(files) >= 9
    names = []
    for f in files:
        stored = pr.stored_probe(f)
        assert stored is not None, f.name
        today = _probe_named(stored.name)
        assert stored.matches(today), f.name
        assert pr.probe_id(cache, today) == f.stem, f.name
        names.append(stored.name)
    assert len(set(names)) == len(names)


def test_the_committed_design_rows_are_at_todays_keys() -> None:
    """docs/reproduction.md's design rows render without simulating: every setting's
    adaptive designs' rows (3,000 runs, budget 400) are in experiments/cache/designs.npz
    under today's keys."""
    from pathlib import Path

    from activetest.experiments.cache import ResultCache
    from activetest.experiments.outputs import DatasetOutputs
    from activetest.experiments.paper import settings_for
    from activetest.experiments.reproduce import DEFAULT_CACHE
    from activetest.experiments.signals import _reproduction_row

    root = Path(__file__).resolve().parents[2]
    outputs = sorted((root / "experiments" / "outputs").glob("*.npz"))
    if not outputs or not (root / DEFAULT_CACHE).exists():
        pytest.skip("no cached model outputs or designs cache in this checkout")
    store = ResultCache(root / DEFAULT_CACHE)
    n = 0
    for f in outputs:
        data = DatasetOutputs.load(f)
        for s in settings_for(data):
            assert _reproduction_row(data, s, 3000, 400, 0, store) is not None, s.label
            n += 1
    assert n == 40


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
        assert not hg.behaviour_probe(names).matches(guard), v
        assert hg.behaviour_probe() == base, v
        monkeypatch.undo()


def test_store_digested_files_a_probe_under_its_former_digest_once(tmp_path) -> None:
    """rekey --store-digested: today's probe stored under the 10-digit digest the former
    rule keyed entries by (so they are found), and not again once a stored probe matches."""
    from activetest.experiments.rekey import store_digested

    today = pr.designs_probe()
    (line,) = store_digested(tmp_path, [today])
    assert today.digest() in line
    assert pr.probe_id(tmp_path, today) == today.digest()
    assert "already" in store_digested(tmp_path, [today])[0]
    assert len(list((tmp_path / "probes").glob("*.json"))) == 1
