"""Agreement statistics against the field's implementations: scikit-learn's
``cohen_kappa_score`` and the ``krippendorff`` package's ``alpha``, to 1e-9."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from activetest.stats.agreement import (
    bootstrap_agreement,
    cohen_kappa,
    krippendorff_alpha,
    pairable_units,
)

krippendorff = pytest.importorskip("krippendorff")
sk_metrics = pytest.importorskip("sklearn.metrics")


def _random_data(rng: np.random.Generator, raters: int, units: int, cats: int,
                 missing: float, agree: float) -> np.ndarray:
    truth = rng.integers(0, cats, units)
    x = np.where(rng.random((raters, units)) < agree, truth,
                 rng.integers(0, cats, (raters, units))).astype(float)
    x[rng.random((raters, units)) < missing] = np.nan
    return x


@pytest.mark.parametrize("seed", range(12))
def test_kappa_equals_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cats = int(rng.integers(2, 6))
    x = _random_data(rng, 2, int(rng.integers(5, 80)), cats, 0.0, float(rng.random()))
    ours = cohen_kappa(x[0], x[1])
    ref = sk_metrics.cohen_kappa_score(x[0].astype(int), x[1].astype(int))
    assert ours == pytest.approx(ref, abs=1e-9, rel=0)


def test_kappa_leaves_out_units_missing_in_either_and_is_nan_when_undefined() -> None:
    a = np.array([0, 1, 1, np.nan, 0, 2])
    b = np.array([0, 1, 0, 1, np.nan, 2])
    ref = sk_metrics.cohen_kappa_score([0, 1, 1, 2], [0, 1, 0, 2])
    assert cohen_kappa(a, b) == pytest.approx(ref, abs=1e-9)
    assert np.isnan(cohen_kappa(np.array([1, 1]), np.array([1, 1])))
    assert np.isnan(cohen_kappa(np.array([np.nan]), np.array([1.0])))
    assert cohen_kappa(np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0])) == pytest.approx(-1.0)


@pytest.mark.parametrize("level", ["nominal", "interval"])
@pytest.mark.parametrize("seed", range(12))
def test_alpha_equals_krippendorff(seed: int, level: str) -> None:
    rng = np.random.default_rng(100 + seed)
    raters = int(rng.integers(2, 6))
    x = _random_data(rng, raters, int(rng.integers(4, 60)), int(rng.integers(2, 6)),
                     float(rng.random()) * 0.5, float(rng.random()))
    if pairable_units(x).sum() == 0 or len(np.unique(x[:, pairable_units(x)][
            ~np.isnan(x[:, pairable_units(x)])])) < 2:
        pytest.skip("no pairable disagreement possible in this draw")
    ours = krippendorff_alpha(x, level)
    ref = krippendorff.alpha(reliability_data=x, level_of_measurement=level)
    assert ours == pytest.approx(ref, abs=1e-9, rel=0)


def test_alpha_interval_on_graded_scores_and_known_value() -> None:
    # graded levels scored 0, 0.5, 1 (interval), three raters, one missing value
    x = np.array([[0.0, 0.5, 1.0, 1.0, np.nan], [0.0, 1.0, 1.0, 0.5, 0.0],
                  [0.5, 0.5, 1.0, np.nan, 0.0]])
    ref = krippendorff.alpha(reliability_data=x, level_of_measurement="interval")
    assert krippendorff_alpha(x, "interval") == pytest.approx(ref, abs=1e-9)
    # perfect agreement is 1; one value throughout is undefined
    assert krippendorff_alpha(np.array([[0, 1, 2.0], [0, 1, 2.0]])) == pytest.approx(1.0)
    assert np.isnan(krippendorff_alpha(np.array([[1, 1.0], [1, 1.0]])))
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(x, "ratio")


def test_two_raters_alpha_and_kappa_differ_only_by_the_marginals() -> None:
    """With two raters and no missing value, nominal alpha is Scott's pi corrected for
    small samples; checked against the reference, and close to kappa on balanced data."""
    rng = np.random.default_rng(7)
    x = _random_data(rng, 2, 400, 3, 0.0, 0.7)
    a = krippendorff_alpha(x)
    assert a == pytest.approx(krippendorff.alpha(reliability_data=x,
                                                 level_of_measurement="nominal"), abs=1e-9)
    assert abs(a - cohen_kappa(x[0], x[1])) < 0.01


def test_bootstrap_is_seeded_covers_and_can_fail() -> None:
    rng = np.random.default_rng(3)
    x = _random_data(rng, 3, 120, 3, 0.2, 0.6)
    r1 = bootstrap_agreement(x, krippendorff_alpha, n_boot=300, seed=5)
    r2 = bootstrap_agreement(x, krippendorff_alpha, n_boot=300, seed=5)
    r3 = bootstrap_agreement(x, krippendorff_alpha, n_boot=300, seed=6)
    assert r1 == r2 and r1 != r3
    assert r1.low < r1.estimate < r1.high
    assert r1.n_units == int(pairable_units(x).sum())
    assert r1.estimate == pytest.approx(
        krippendorff.alpha(reliability_data=x, level_of_measurement="nominal"), abs=1e-9)
    # kappa through the same bootstrap
    k = bootstrap_agreement(x[:2], lambda d: cohen_kappa(d[0], d[1]), n_boot=200, seed=0)
    assert k.low <= k.estimate <= k.high
    # no pairable unit: nothing to say
    empty = bootstrap_agreement(np.array([[1.0, np.nan], [np.nan, 0.0]]), krippendorff_alpha)
    assert empty.n_units == 0 and np.isnan(empty.estimate)


def test_bootstrap_interval_covers_in_seeded_monte_carlo() -> None:
    """Raters who agree with probability p on 3 balanced categories: the population
    alpha is about (p + (1-p)/3 - 1/3)/(1 - 1/3) = p; the 90% interval covers it in most
    of 40 seeded replicates (a loose bound: the percentile bootstrap is approximate)."""
    p, hits = 0.6, 0
    for rep in range(40):
        rng = np.random.default_rng(1000 + rep)
        truth = rng.integers(0, 3, 150)
        x = np.where(rng.random((2, 150)) < np.sqrt(p), truth, rng.integers(0, 3, (2, 150)))
        # two raters each right with prob sqrt(p): they agree beyond chance with weight p
        r = bootstrap_agreement(x.astype(float), krippendorff_alpha, n_boot=200,
                                level=0.9, seed=rep)
        hits += r.low <= p <= r.high
    assert hits >= 30


def test_the_bootstrap_resamples_whole_items_when_an_item_has_several_units() -> None:
    """QA: in a paired session each item has two judged answers (two units); resampled
    one by one, the interval treated them as independent and was too narrow. By item,
    every answer of a drawn item comes along: with each item's two units the same, the
    interval is exactly the one-unit-per-item interval, and the unit bootstrap's is
    narrower."""
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 40)
    a = np.where(rng.random(40) < 0.8, truth, rng.integers(0, 3, 40))
    b = np.where(rng.random(40) < 0.8, truth, rng.integers(0, 3, 40))
    data = np.vstack([a, b]).astype(float)
    twice = np.hstack([data, data])
    items = np.r_[np.arange(40), np.arange(40)]

    def kappa(d: np.ndarray) -> float:
        return cohen_kappa(d[0], d[1])

    one = bootstrap_agreement(data, kappa, n_boot=400, seed=3)
    by_item = bootstrap_agreement(twice, kappa, n_boot=400, seed=3, clusters=items)
    by_unit = bootstrap_agreement(twice, kappa, n_boot=400, seed=3)
    assert by_item.estimate == pytest.approx(one.estimate)
    assert (by_item.low, by_item.high) == pytest.approx((one.low, one.high), abs=1e-12)
    assert (by_unit.high - by_unit.low) < 0.85 * (by_item.high - by_item.low)
    # singletons: the unit bootstrap's draws exactly
    same = bootstrap_agreement(data, kappa, n_boot=400, seed=3, clusters=np.arange(40))
    assert (same.low, same.high) == (one.low, one.high)
    with pytest.raises(ValueError, match="clusters has shape"):
        bootstrap_agreement(data, kappa, clusters=np.arange(3))


def test_one_item_gives_no_bootstrap_interval() -> None:
    """QA: one item answered by two annotators gave "bootstrap 95% interval [0.000,
    0.000]": every resample is that item again, a point that claims nothing. The
    statistic stays (kappa 0 here: p_o = 0, p_e = 0); the interval is nan, with one item
    alone and with one item of two units (two answers judged)."""
    one = np.array([[0.0], [1.0]])
    k = bootstrap_agreement(one, lambda d: cohen_kappa(d[0], d[1]), n_boot=50, seed=0)
    assert k.estimate == 0.0 and k.n_units == 1
    assert np.isnan(k.low) and np.isnan(k.high)
    two_units = np.array([[0.0, 1.0], [1.0, 1.0]])
    a = bootstrap_agreement(two_units, krippendorff_alpha, n_boot=50, seed=0,
                            clusters=np.array([7, 7]))
    assert np.isnan(a.low) and np.isnan(a.high)
    # two items: a real resample, an interval
    b = bootstrap_agreement(two_units, krippendorff_alpha, n_boot=50, seed=0)
    assert not np.isnan(b.low) and b.low <= b.high


_D = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 1]], dtype=np.float64)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: bootstrap_agreement(_D, krippendorff_alpha, level="a"),
     r"level must be in \(0, 1\), got 'a'"),
    (lambda: bootstrap_agreement(_D, krippendorff_alpha, n_boot=None),
     "n_boot must be an integer >= 2, got None"),
    (lambda: bootstrap_agreement(_D, krippendorff_alpha, seed="x"),
     "seed must be a non-negative integer .*got 'x'"),
    (lambda: bootstrap_agreement(_D, "krippendorff_alpha"),
     "statistic must be a function .*got str"),
    (lambda: bootstrap_agreement(_D.tolist(), krippendorff_alpha, clusters=[0, 1, 2, 3, 4]),
     None),
    (lambda: krippendorff_alpha([["a", "b"], ["a", "b"]]),
     r"reliability data must be a numeric \(raters, units\) array"),
    (lambda: krippendorff_alpha(_D, level=np.array(["nominal"])),
     "level must be one of nominal, interval"),
    (lambda: cohen_kappa("ab", "ab"), r"a \(the first rater's labels\) must be a numeric"),
])
def test_bad_arguments_are_named(call: Any, message: str | None) -> None:
    """QA: level="a", n_boot=None gave Python's "'<' not supported between instances",
    a string seed numpy's SeedSequence error, a string statistic "'str' object is not
    callable", list data with clusters an AttributeError ('list' has no 'shape'),
    string ratings numpy's "could not convert string to float", and a one-element
    array level was taken as "nominal". Each is named now (list data with clusters
    works)."""
    if message is None:
        assert call().n_units == 5
        return
    with pytest.raises(ValueError, match=message):
        call()
