"""benchmarks/harness_runs.py's cache: keyed by the pool's rows and the run, never the bits
of the SVD features (which differ between CPUs, BLAS builds and thread counts), and valid
while the behaviour probe it was computed under matches today's within a tolerance (its
last digits differ between CPUs too), so the committed cache
(experiments/cache/harness-runs) is found on any machine."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hr():
    spec = importlib.util.spec_from_file_location("harness_runs_under_test",
                                                  ROOT / "benchmarks" / "harness_runs.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def _matrix(seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    M = (rng.random((12, 20)) < 0.6).astype(float)
    return M


def test_the_key_ignores_the_features_bits_and_sees_the_rows(hr) -> None:
    p = hr.history_pool("m 0", _matrix(), 0)
    key = hr.cache_key(p, 100, 0, "features", ("mixture",))
    # the same rows with the SVD's signs flipped and the last bits moved: the same key
    flipped = hr.Pool(p.name, p.surrogate, p.loss, -p.features * (1 + 1e-15), p.prior,
                      p.others)
    assert hr.cache_key(flipped, 100, 0, "features", ("mixture",)) == key
    # any change of the rows, the held-out losses, the name or the run: another key
    others = p.others.copy()
    others[0, 0] = 1.0 - others[0, 0]
    changed = [hr.Pool(p.name, p.surrogate, p.loss, p.features, p.prior, others),
               hr.Pool(p.name, p.surrogate, 1.0 - p.loss, p.features, p.prior, p.others),
               hr.Pool("m 1", p.surrogate, p.loss, p.features, p.prior, p.others)]
    keys = {hr.cache_key(q, 100, 0, "features", ("mixture",)) for q in changed}
    keys |= {hr.cache_key(p, 50, 0, "features", ("mixture",)),
             hr.cache_key(p, 100, 1, "features", ("mixture",)),
             hr.cache_key(p, 100, 0, "features+neighbours", ("mixture",)),
             hr.cache_key(p, 100, 0, "features", ("mixture", "planned"))}
    assert key not in keys and len(keys) == 7



def _rows(name: str, design: str = "svd8") -> list[dict]:
    """Rows as measure() stores them (numbers that no measurement gives: a read, not a
    measurement, is seen)."""
    return [dict(pool=name, surrogate="history", N=20, acc=0.5, h=h, plan="", cs="mixture",
                 runs=2, design=design, active=-1.0, active_mean=-1.0, uniform=-1.0,
                 uniform_mean=-1.0, wilson=-1, a_cov=-1.0, u_cov=-1.0, cpu=0.0)
            for h in (0.03, 0.02)]


def _with_values(probe, values):
    return type(probe)(probe.name, probe.sizes, tuple(values))


def test_a_probe_that_differs_in_its_last_digits_finds_the_entries(hr, tmp_path,
                                                                   monkeypatch) -> None:
    """QA (2026-12-05): the probe's numbers differ between CPUs in the 8th-10th digit, and
    a key hashing them rounded (10 digits, then 6) missed the committed cache on another
    CPU. Compared with a tolerance: a probe perturbed in its 8th digit, or with a number
    moved across a 6-digit rounding edge, finds the entry (the pool is read, not
    measured); one changed in its 3rd digit (a change of behaviour) misses."""
    from activetest.experiments.probe import digest

    p = hr.history_pool("m 0", _matrix(), 0)
    today = hr.behaviour_probe("svd8")
    v = np.array(today.values)
    assert v.size > 100 and np.count_nonzero(v) > 100
    k = int(np.flatnonzero(np.abs(v) > 0.01)[0])
    below, above = v.copy(), v.copy()
    below[k], above[k] = 0.1234565 - 1e-10, 0.1234565 + 1e-10
    assert digest(below, digits=6) != digest(above, digits=6)  # the former rule missed

    def probe(values):
        monkeypatch.setattr(hr, "behaviour_probe", lambda hist: _with_values(today, values))

    probe(below)  # the entry computed under ``below``
    f = (tmp_path / f"{hr._slug(p.name)}-{hr.cache_key(p, 2, 0, 'svd8', ('mixture',))}-"
                    f"{hr.probe_id(tmp_path, 'svd8')}.json")
    f.write_text(json.dumps(_rows(p.name)))
    for near in (above, below * (1 + 4e-8), below * (1 - 4e-8)):
        probe(near)
        assert hr.cached_entry(tmp_path, p, 2, 0, "svd8", ("mixture",)) == f
        assert hr.measure([p], 2, 0, "svd8", "mixture", tmp_path) == _rows(p.name)
    changed = below.copy()
    changed[k] *= 1.003  # its 3rd digit
    probe(changed)
    assert hr.cached_entry(tmp_path, p, 2, 0, "svd8", ("mixture",)) is None
    # a probe of another shape or design never matches
    assert not today.matches(type(today)(today.name, (*today.sizes[:-1], 0),
                                         today.values[:-1]))
    assert not today.matches(type(today)("features", today.sizes, today.values))


def test_a_cpu_adds_entries_under_the_stored_probe_it_matches(hr, tmp_path,
                                                              monkeypatch) -> None:
    """Entries a CPU whose probe differs in the last digits computes join the stored probe
    (one probe file per behaviour, not one per CPU); a changed behaviour gets its own."""
    today = hr.behaviour_probe("svd8")
    first = hr.probe_id(tmp_path, "svd8")
    v = np.array(today.values)
    monkeypatch.setattr(hr, "behaviour_probe",
                        lambda hist: _with_values(today, v * (1 + 4e-8)))
    assert hr.probe_id(tmp_path, "svd8") == first
    monkeypatch.setattr(hr, "behaviour_probe", lambda hist: _with_values(today, v * 1.003))
    assert hr.probe_id(tmp_path, "svd8") != first
    assert len(list((tmp_path / "probes").glob("*.json"))) == 2


def test_rekey_moves_an_entry_of_the_former_rule_after_checking_its_key(hr, tmp_path,
                                                                        monkeypatch) -> None:
    """The entries keyed by the former rule (the probe's numbers rounded to 6 digits and
    hashed into the key) move to today's names, each only if today's code gives its key
    from its own rows; the moved entry is then found."""
    M = _matrix()
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "tiny.csv").write_text(
        "model," + ",".join(f"i{j}" for j in range(M.shape[1])) + "\n"
        + "".join(f"m{i}," + ",".join(f"{x:g}" for x in r) + "\n" for i, r in enumerate(M)))
    monkeypatch.setattr(hr, "HISTORY", tmp_path / "history")
    cache = tmp_path / "cache"
    cache.mkdir()
    p = hr.history_pool("tiny model 3", M, 3)
    good = cache / f"{hr._slug(p.name)}-{hr._legacy_key(p, 2, 0, 'svd8', ('mixture',))}.json"
    good.write_text(json.dumps(_rows(p.name)))
    stale = cache / f"{hr._slug(p.name)}-{'0' * 16}.json"
    stale.write_text(json.dumps(_rows(p.name)))
    moved, left = hr.rekey_cache(cache)
    assert moved == 1 and len(left) == 1 and stale.name in left[0]
    found = hr.cached_entry(cache, p, 2, 0, "svd8", ("mixture",))
    assert found is not None and json.loads(found.read_text()) == _rows(p.name)
    assert not good.exists() and stale.exists()


def test_every_committed_entry_names_a_stored_probe_of_its_design(hr) -> None:
    """The committed cache's layout: ``{slug}-{key}-{probe id}.json``, the probe stored in
    ``probes/`` for the entry's design (no entry is keyed by the former rule)."""
    cache = ROOT / "experiments" / "cache" / "harness-runs"
    entries = sorted(cache.glob("*.json"))
    assert len(entries) >= 290
    bad = []
    for f in entries:
        m = re.fullmatch(r".+-[0-9a-f]{16}-([0-9a-f]{16})\.json", f.name)
        probe = None if m is None else hr.stored_probe(cache / "probes" / f"{m.group(1)}.json")
        design = {r["design"] for r in json.loads(f.read_text())}
        if probe is None or design != {probe.name}:
            bad.append(f.name)
    assert not bad, bad


def test_history_pool_drops_rows_identical_to_the_target_as_sessions_do(hr) -> None:
    """A re-submission of the held-out model (a row identical to its own) would hand its
    answers to the features and the neighbours' column: sessions drop such rows
    (``data/history.py``), so ``history_pool`` does; a row differing in one item is
    history and stays."""
    M = _matrix()
    r = 4
    twin = M[r].copy()
    near = M[r].copy()
    near[7] = 1.0 - near[7]
    assert not any(np.array_equal(row, twin) for k, row in enumerate(M) if k != r)
    M = np.vstack([M, twin, near, twin])
    p = hr.history_pool("m 4", M, r)
    assert p.others.shape == (len(M) - 3, M.shape[1])  # the target and its two twins
    assert not np.all(p.others == M[r][None, :], axis=1).any()
    assert np.all(p.others == near[None, :], axis=1).sum() == 1
    np.testing.assert_array_equal(p.loss, 1.0 - M[r])
    # the features and prior come from the kept rows only
    np.testing.assert_allclose(p.features[:, 0], p.others.mean(0))
    np.testing.assert_allclose(p.prior, np.clip(1.0 - p.others.mean(0), 0.02, 0.98))


def test_todays_probe_of_every_cached_design_finds_its_committed_entries(hr) -> None:
    """The committed cache is used only while today's :func:`behaviour_probe` of a design
    matches the probe its entries were computed under (within ``PROBE_RTOL``, so not the
    last digits of a CPU). A change outside what the probe is meant to check (e.g. which
    rows a pool's history keeps, which each entry's key already holds) must not move it,
    or every committed entry misses and the tables of docs/harness.md recompute."""
    probes = ROOT / "experiments" / "cache" / "harness-runs" / "probes"
    stored = [hr.stored_probe(f) for f in sorted(probes.glob("*.json"))]
    designs = sorted({s.name for s in stored if s is not None})
    assert "features" in designs
    missed = [d for d in designs
              if not any(s is not None and s.name == d and s.matches(hr.behaviour_probe(d))
                         for s in stored)]
    assert not missed, missed


def test_the_sure_rule_cuts_each_simulated_run_as_a_session_cuts_its_own(hr) -> None:
    """`--cs sure` (not covered by the behaviour probe): each run's CS, cut to what that
    run's labels make sure, is the CS a session with those draws would show cut
    (:func:`sure_risk_curve` and :func:`cut_to_sure_arrays`, run by run)."""
    from activetest.session.estimate_base import cut_to_sure_arrays, sure_risk_curve

    rng = np.random.default_rng(5)
    N, runs, H = 60, 7, 50
    L = (rng.random((runs, H)) < 0.3).astype(float)
    mid = rng.uniform(0.1, 0.5, (runs, H))
    half = rng.uniform(0.01, 0.4, (runs, H))
    lo, hi = hr._sure_cut(mid - half, mid + half, L, N)
    cut_any = False
    for r in range(runs):
        sure = sure_risk_curve(L[r], rng.permutation(N)[:H], N, 1.0)
        assert sure is not None
        want = cut_to_sure_arrays(mid[r] - half[r], mid[r] + half[r], *sure)
        np.testing.assert_allclose(lo[r], want[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(hi[r], want[1], rtol=0, atol=1e-12)
        cut_any |= bool(np.any(want[1] < mid[r] + half[r]))
    assert cut_any  # the runs end near a census: the bounds cut
