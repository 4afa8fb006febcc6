"""Bad input raises ValueError naming the argument and what was expected."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from activetest.stats import ActiveSampler, log_loss, proposal, sample, simulate

T = np.log(np.array([[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]))
Y = np.array([0, 1, 0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"target_logprobs": T[:, :1]}, "at least 2 classes"),
        ({"target_logprobs": T.ravel()}, "2-D"),
        ({"target_logprobs": np.where(T[0, 0] == T, np.nan, T)}, "non-finite.*row 0"),
        ({"target_logprobs": np.where(T[1, 0] == T, -np.inf, T)}, "non-finite.*row 1"),
        ({"target_logprobs": T + 0.1}, "row 0 is not normalised.*through .*log_softmax"),
        # probabilities where log-probabilities go: said so (QA: logits only were named)
        ({"target_logprobs": np.exp(T)}, "row 0 is not normalised.* these are "
                                         "probabilities; pass np.log of them"),
        ({"target_logprobs": np.empty((0, 2))}, "empty"),
        ({"labels": np.array([0, 2, 0])}, r"labels\[1\] = 2 is outside"),
        ({"labels": np.array([0, 1])}, "length 3"),
        ({"labels": np.array([0.5, 1, 0])}, "integer class indices"),
        ({"budget": 4}, "exceeds the pool size N = 3"),
        ({"budget": 0}, "budget must be >= 1"),
        ({"proposal_floor": 0.0}, r"proposal floor must be in \(0, 1\]"),
        ({"proposal_floor": 1.5}, r"proposal floor must be in \(0, 1\]"),
        ({"surrogate_logprobs": T[:2]}, "surrogate_logprobs has 2 rows"),
        ({"surrogate_logprobs": np.log(np.full((3, 3), 1 / 3))}, "3 classes, expected 2"),
        ({"methods": ["ce"]}, "ACQUISITION\\+ESTIMATOR"),
        ({"methods": ["ce+magic"]}, "unknown estimator"),
        ({"methods": []}, "methods is empty"),
        ({"loss": "hinge"}, "loss must be"),
        ({"methods": ["uniform+cv_lure"], "surrogate_logprobs": None}, "need surrogate_logprobs"),
        ({"random_state": 1.5}, "random_state"),
    ],
)
def test_simulate_rejects(kwargs: dict, match: str) -> None:
    args = {"target_logprobs": T, "labels": Y, "surrogate_logprobs": T, "budget": 2,
            "n_runs": 2, "methods": ["ce+lure"]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        simulate(**args)


def test_sampler_inputs() -> None:
    with pytest.raises(ValueError, match=r"scores\[1\] = -1.0 is negative"):
        sample(np.array([1.0, -1.0]), 1)
    with pytest.raises(ValueError, match="not finite"):
        sample(np.array([1.0, np.inf]), 1)
    with pytest.raises(ValueError, match="empty"):
        sample(np.array([]), 1)
    with pytest.raises(ValueError, match="1-D"):
        sample(np.ones((2, 2)), 1)
    with pytest.raises(ValueError, match="n_runs"):
        sample(np.ones(3), 1, n_runs=0)
    with pytest.raises(ValueError, match="only 3 remain"):
        ActiveSampler(np.ones(3)).draw(4)
    with pytest.raises(ValueError, match="remaining must have shape"):
        proposal(np.ones(3), np.ones(2, dtype=bool))
    with pytest.raises(ValueError, match="every item has been acquired"):
        proposal(np.ones(3), np.zeros(3, dtype=bool))
    with pytest.raises(ValueError, match="target_logprobs row 3"):
        log_loss(np.vstack([T, [[0.0, 0.0]]]), np.array([0, 1, 0, 1]))


def test_normalisation_check_matches_scipy_for_any_class_count() -> None:
    """The log-prob check's logsumexp (column by column for a few classes) is scipy's,
    and it names the first row that is off, for 2 to 12 classes."""
    from scipy.special import logsumexp

    from activetest.stats.validate import _logsumexp, as_logprobs

    rng = np.random.default_rng(3)
    for C in range(2, 13):
        z = rng.normal(0, 30, (500, C))
        np.testing.assert_allclose(_logsumexp(z), logsumexp(z, axis=1), rtol=1e-14, atol=1e-12)
        lp = z - logsumexp(z, axis=1)[:, None]
        assert as_logprobs(lp, "x") is not None
        bad = lp.copy()
        bad[17] += 1e-4  # the whole row: logsumexp 1e-4 off
        with pytest.raises(ValueError, match="row 17 is not normalised"):
            as_logprobs(bad, "x")


@pytest.mark.parametrize("seed", [1.5, "1", -1, 2**63, True, np.random.default_rng(0)])
def test_a_samplers_seed_is_an_integer_or_none(seed: object) -> None:
    """QA: ``ActiveSampler(scores, seed=1.5)`` (the README's sampler) failed inside numpy
    with a TypeError about SeedSequence entropy; ``seed=True`` ran as seed 1. Both
    samplers now say what a seed is, naming the value given."""
    from activetest.stats import AdaptiveDesign, AdaptiveSampler

    shown = repr(seed)
    with pytest.raises(ValueError, match=r"seed must be an integer in 0\.\.2\*\*63-1, or "
                                         r"None \(left out\) for fresh entropy; got "
                                         + re.escape(shown)):
        ActiveSampler(np.ones(5), seed=seed)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed must be an integer"):
        ActiveSampler.fresh_state(np.ones(5), seed=seed)  # type: ignore[arg-type]
    S = np.log(np.full((5, 2), 0.5))
    with pytest.raises(ValueError, match="seed must be an integer"):
        AdaptiveSampler(AdaptiveDesign.calibrated(S, S), seed=seed)  # type: ignore[arg-type]


def test_a_numpy_integer_seed_is_the_same_seed() -> None:
    a = ActiveSampler(np.arange(1.0, 30.0), seed=np.int64(4))
    b = ActiveSampler(np.arange(1.0, 30.0), seed=4)
    assert a.draw(5)[0].tolist() == b.draw(5)[0].tolist()
    assert type(a.seed) is int and a.state().seed == 4


def test_exact_cs_names_the_loss_outside_its_bounds() -> None:
    """QA: ``exact_cs`` said "losses must lie in [0.0, 0.5]" without naming which (a
    log loss given ``loss_high=1`` as for the error rate), and a NaN loss passed the
    check (every comparison with NaN is false) into a NaN sequence."""
    from activetest.stats import exact_cs

    q = np.full(3, 0.01)
    with pytest.raises(ValueError, match=r"losses\[1\] = 0\.7 is outside \[0\.0, 0\.5\]: "
                                         r"loss_low and loss_high must bound every loss"):
        exact_cs(np.array([0.2, 0.7, 0.1]), q, 100, loss_high=0.5, q_floor=0.1 / 1.1)
    with pytest.raises(ValueError, match=r"losses\[1, 2\] = nan is outside"):
        exact_cs(np.array([[0.2, 0.3, 0.1], [0.2, 0.3, np.nan]]), np.vstack([q, q]), 100,
                 loss_high=0.5, q_floor=0.1 / 1.1)


@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.log_softmax("a"), "logits must be a numeric array, got str 'a'"),
    (lambda st: st.log_softmax(None), "logits must be a numeric array, got NoneType"),
    (lambda st: st.ActiveSampler("abc"), r"scores must be a numeric 1-D array \(one score per "
                                         r"pool item\), got str 'abc'"),
    (lambda st: st.acquisition_scores("ce", surrogate_logprobs=[["a", "b"]],
                                      target_logprobs=np.log([[0.5, 0.5]])),
     r"surrogate_logprobs must be a numeric \(N, C\) array of class log-probabilities, got "
     r"an array of dtype <U1"),
    (lambda st: st.log_loss(np.log(np.full((2, 2), 0.5)), ["a", "b"]),
     r"labels must hold integer class indices \(0\.\.1\), got dtype <U1"),
])
def test_no_numbers_where_numbers_are_wanted_names_the_argument(call: Any, message: str
                                                                ) -> None:
    """QA: numpy's "could not convert string to float: 'a'" named no argument, string
    labels raised numpy's TypeError of isfinite, and None logits were "not finite"."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)


@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.lure("a", np.ones(1), N=10), "losses must be a numeric array, got str 'a'"),
    (lambda st: st.lure_terms(None, None, N=10), "losses must be a numeric array, got NoneType"),
    (lambda st: st.bootstrap("abc"), "terms must be a numeric array, got str 'abc'"),
    (lambda st: st.fixed_interval("abc", 10), "theta must be a numeric array, got str 'abc'"),
    (lambda st: st.asymptotic_cs(["a"], 10), r"theta must be a numeric array, got list"),
    (lambda st: st.lure(np.ones(3), np.full(3, 0.1), N=None),
     "N must be an integer pool size, got None"),
    (lambda st: st.fixed_interval(np.ones(3), float("nan")),
     "N must be a positive integer pool size, got nan"),
    (lambda st: st.asymptotic_cs(np.ones(3), float("inf")),
     "N must be a positive integer pool size, got inf"),
])
def test_the_estimators_name_a_bad_argument(call: Any, message: str) -> None:
    """QA: the estimators and intervals converted with numpy ("could not convert string
    to float: 'a'", no argument named) and ``int(N)`` (None: a TypeError; NaN: "cannot
    convert float NaN to integer"; infinity: an OverflowError)."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)


def test_a_whole_float_or_numpy_pool_size_is_still_a_pool_size() -> None:
    from activetest.stats import lure

    L, q = np.ones(3), np.full(3, 0.1)
    assert lure(L, q, N=10) == lure(L, q, N=10.0) == lure(L, q, N=np.int64(10)) \
        == lure(L, q, N=np.array(10))


@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.logsumexp("a"), r"a must be a numeric array, got "
                                   r"str 'a'"),
    (lambda st: st.logsumexp(object()), "a must be a numeric array, got object"),
    (lambda st: st.logsumexp(None), "a must be a numeric array, got NoneType"),
    (lambda st: st.logsumexp(np.zeros((2, 3)), axis=2),
     r"axis must be an integer in -2\.\.1 for a of shape \(2, 3\), got 2"),
    (lambda st: st.log_softmax(3.0), r"logits must be an array of at least one dimension "
                                     r"\(the classes along axis\), got the scalar float 3\.0"),
    (lambda st: st.log_softmax(np.zeros((2, 0))), r"logits has no classes along axis -1"),
    (lambda st: st.paired_difference_cs(["a", "b"], np.ones(2), 10),
     "theta_a must be a numeric array, got list"),
    (lambda st: st.paired_difference_cs(np.ones(2), None, 10),
     "theta_b must be a numeric array, got NoneType"),
    (lambda st: st.exact_cs("abc", np.full(3, 0.1), 10, loss_high=1.0, q_floor=0.09),
     "losses must be a numeric array, got str 'abc'"),
    (lambda st: st.exact_cs(np.array([object()] * 3), np.full(3, 0.1), 10, loss_high=1.0,
                            q_floor=0.09), "losses must be a numeric array, got an array of "
                                           "dtype object"),
    (lambda st: st.exact_cs(np.ones(3), None, 10, loss_high=1.0, q_floor=0.09),
     "q must be a numeric array, got NoneType"),
    (lambda st: st.exact_cs(np.ones(3), np.full(3, 0.1), None, loss_high=1.0, q_floor=0.09),
     "N must be a positive integer pool size, got None"),
    (lambda st: st.exact_cs(np.ones(3), np.full(3, 0.1), 10, loss_high="1", q_floor=0.09),
     "loss_high must be a real number, got str '1'"),
    (lambda st: st.exact_cs(np.ones(3), np.full(3, 0.1), 10, loss_high=1.0, q_floor="x"),
     "q_floor must be a real number, got str 'x'"),
    (lambda st: st.paired_difference_exact_cs(np.ones(3), "abc", np.full(3, 0.1), 10,
                                              bound_a=1.0, bound_b=1.0, q_floor=0.09),
     "losses_b must be a numeric array, got str 'abc'"),
    (lambda st: st.paired_difference_exact_cs(np.ones(3), np.ones(3), np.full(3, 0.1), 10,
                                              bound_a=None, bound_b=1.0, q_floor=0.09),
     "bound_a must be a real number, got NoneType"),
    (lambda st: st.betting_cs(np.ones(3), "a", 2.0, value_low=0.0, value_high=1.0),
     "theta_low must be a numeric array, got str 'a'"),
    (lambda st: st.betting_cs(np.ones(3), 0.0, 2.0, value_low=None, value_high=1.0),
     "value_low must be a real number, got NoneType"),
    (lambda st: st.uniform_mean("abc"), "losses must be a numeric array, got str 'abc'"),
    (lambda st: st.uniform_mean_curve(None), "losses must be a numeric array, got NoneType"),
    (lambda st: st.ase(["a"]), "expected_loss must be a numeric array, got list"),
    (lambda st: st.lure_weights(object(), 10), "q must be a numeric array, got object"),
    (lambda st: st.tuned_beta(np.ones(3), "abc", np.full(3, 0.1), 10),
     "control must be a numeric array, got str 'abc'"),
    (lambda st: st.cv_lure(None, np.full(3, 0.1), 10, np.ones(3), 0.5),
     "losses must be a numeric array, got NoneType"),
    (lambda st: st.cv_lure(np.ones(3), np.full(3, 0.1), 10, np.ones(3), "0.5"),
     "control_pool_mean must be a real number, got str '0.5'"),
    (lambda st: st.cv_lure_curve(np.ones(3), np.full(3, 0.1), 10, ["a"] * 3, 0.5),
     "control must be a numeric array, got list"),
    (lambda st: st.adaptive_lure(np.ones(3), np.full(3, 0.1), 10, ["a"] * 3, np.ones(3)),
     "control must be a numeric array, got list"),
    (lambda st: st.adaptive_lure_weights("10", 3), r"N \(pool size\) and M \(budget\) must "
                                                   r"be integers with 1 <= M <= N"),
    (lambda st: st.fixed_control_rest(np.ones(5), ["a"]),
     "indices must be integer pool rows, got dtype <U1"),
    (lambda st: st.anytime_summary("abc", 100), "theta must be a numeric array, got str"),
    (lambda st: st.labels_for_cs_width(np.ones(40), 100, None),
     "width must be a number > 0, got NoneType"),
    (lambda st: st.uniform_labels_for_width(np.ones(3), "q", 10, 0.1),
     "q must be a numeric array, got str 'q'"),
    (lambda st: st.uniform_labels_for_width(np.ones(3), np.full(3, 0.1), None, 0.1),
     "N must be an integer pool size >= the 3 draws, got None"),
    (lambda st: st.difference_bounds("log_loss", "abc", np.zeros((2, 2))),
     r"target_pool must be a numeric \(N, C\) array of log-probabilities, got str 'abc'"),
    (lambda st: st.difference_bounds("hinge", np.zeros((2, 2)), np.zeros((2, 2))),
     "metric must be 'error_rate' or 'log_loss', got 'hinge'"),
    (lambda st: st.log_loss_bound(None), r"target_logprobs must be a numeric \(N, C\) array"),
    (lambda st: st.pool_variance_curve("abc", np.ones(3), 10),
     "theta_sq must be a numeric array, got str 'abc'"),
    (lambda st: st.expected_difference(np.log([[0.5, 0.5]]), np.log([[0.5, 0.5]]), "abc"),
     r"other_logprobs must be a numeric \(N, C\) array"),
    (lambda st: st.uniform_score(None), r"n must be a whole number >= 1 \(the pool size\), "
                                        r"got None"),
    (lambda st: st.sample(np.ones(3), None), "budget must be an integer, got None"),
    (lambda st: st.reference_sample(np.ones(3), [2]), r"budget must be an integer, got \[2\]"),
])
def test_every_public_statistic_names_a_non_numeric_argument(call: Any, message: str) -> None:
    """QA: these gave numpy's own TypeError/ValueError from deep inside ("could not convert
    string to float: 'a'", "float() argument must be ... not 'object'", "unsupported operand
    type(s)"), naming no argument; ``log_softmax(3.0)`` returned shape (1,) for a scalar
    (there are no classes to normalise over: now refused)."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)


def test_log_softmax_keeps_the_shape_of_its_logits() -> None:
    from activetest.stats import log_softmax, logsumexp

    z = np.array([[1.0, 2.0, 3.0], [1e3, 0.0, -1e3]])
    for axis in (0, 1, -1, np.int64(1)):
        out = log_softmax(z, axis=axis)
        assert out.shape == z.shape
        np.testing.assert_allclose(logsumexp(out, axis=axis), 0.0, atol=1e-12)
    assert log_softmax([1.0, 2.0]).shape == (2,)


@pytest.mark.parametrize("loss", ["log_loss", "error_rate", None, ["log"]])
def test_control_values_refuses_a_loss_it_does_not_know(loss: object) -> None:
    """QA: any loss but "log" (the metric's name "log_loss" included) silently gave the
    0-1 loss's control."""
    from activetest.stats import control_values

    with pytest.raises(ValueError, match=r"loss must be 'log' or 'zero_one', got "):
        control_values(loss, surrogate_logprobs=T, target_logprobs=T)  # type: ignore[arg-type]


@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.ActiveSampler(np.ones(5), seed=1).draw(None),
     "k must be a non-negative integer, got None"),
    (lambda st: st.ActiveSampler(np.ones(5), proposal_floor="0.1"),
     r"the proposal floor must be in \(0, 1\], got '0\.1'"),
    (lambda st: st.sample(np.ones(5), 2, n_runs=None), "n_runs must be a positive integer, "
                                                       "got None"),
    (lambda st: st.bootstrap(np.ones(5), n_boot=None), "n_boot must be an integer >= 2, "
                                                       "got None"),
    (lambda st: st.bootstrap(np.ones(5), level="0.95"), r"level must be in \(0, 1\), got "
                                                        r"'0\.95'"),
    (lambda st: st.fixed_interval(np.ones(40), 100, level=None),
     r"level must be in \(0, 1\), got None"),
    (lambda st: st.asymptotic_cs(np.ones(40), 100, alpha="0.05"),
     r"alpha must be in \(0, 1\), got '0\.05'"),
    (lambda st: st.acquisition_scores(np.array(["ce", "pe"]), surrogate_logprobs=T,
                                      target_logprobs=T),
     "name must be an acquisition's name .*got ndarray"),
    (lambda st: st.labels_for_width("abc", 0.1), "result must be a BootstrapResult .*got str"),
    (lambda st: _adaptive_sampler(st).observe(1), r"labels must be a sequence \(one per "
                                                  r"pending drawn item, in draw order\), got int"),
])
def test_scalar_arguments_are_named_too(call: Any, message: str) -> None:
    """QA: these raised Python's own errors ("int() argument must be ... not 'NoneType'",
    "'<' not supported between instances of 'float' and 'str'", "could not convert string
    to float", "object of type 'int' has no len()", numpy's "truth value of an array ...
    is ambiguous", an AttributeError), naming no argument."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)

@pytest.mark.parametrize(("losses", "message"), [
    ([None], r"^losses\[0\] is None: losses must all be finite numbers$"),
    ((0.5, None), r"^losses\[1\] is None: "),
    ([float("nan")], r"^losses\[0\] = nan is not finite$"),
])
def test_an_observed_loss_given_as_none_is_named_by_position(losses: Any,
                                                              message: str) -> None:
    """QA: observe(losses=[None]) said "losses[0] = nan is not finite" (numpy reads None
    as NaN): the None is named, with its position; nothing is observed."""
    import activetest.stats as st

    s = st.AdaptiveSampler(st.AdaptiveDesign.fixed(np.ones(6), lam=0.5), seed=1)
    s.draw(2)
    with pytest.raises(ValueError, match=message):
        s.observe(losses=losses)
    assert s.losses == [] and s.n_pending == 2
    with pytest.raises(ValueError, match=r"^scores\[2\] is None: "):
        st.ActiveSampler([1.0, 2.0, None, 1.0], seed=1)


_TH = np.full(40, 0.5)


@pytest.mark.parametrize(("kw", "message"), [
    ({"theta_high": True}, r"theta_high must be a number or an array of numbers \(a bound\), "
                           r"got True"),
    ({"theta_low": np.zeros(40, dtype=bool)}, r"theta_low must be a number or an array of "
                                              r"numbers \(a bound\), got a bool array"),
    ({"known_high": np.True_}, r"known_high must be a number .*got True"),
    ({"known_low": "a"}, "known_low must be a numeric array, got str 'a'"),
    ({"trunc": "0.5"}, r"trunc must be in \(0, 1\), got '0\.5'"),
    ({"trunc": True}, r"trunc must be in \(0, 1\), got True"),
    ({"N": True}, "N must be a positive integer pool size, or None, got True"),
    ({"N": "100"}, "N must be a positive integer pool size, or None, got '100'"),
    ({"grid_size": 10.5}, r"grid_size must be a whole number of grid points >= 2, or None, "
                          r"got 10\.5"),
    ({"grid_size": "a"}, "grid_size must be a whole number of grid points"),
    ({"running_intersection": "no"}, "running_intersection must be True or False, got 'no'"),
])
def test_betting_cs_names_a_bound_or_knob_of_another_type(kw: dict[str, Any],
                                                          message: str) -> None:
    """QA: betting_cs(theta_high=True) took True as the bound 1 (and known_high=True, a
    bool array likewise); trunc="0.5" raised Python's "'<' not supported", N=True was a
    pool of 1, grid_size=10.5 was 10 points and running_intersection="no" was yes."""
    from activetest.stats import betting_cs

    args = {"theta_low": 0.0, "theta_high": 1.0, **kw}
    with pytest.raises(ValueError, match=message):
        betting_cs(_TH, args.pop("theta_low"), args.pop("theta_high"), value_low=0.0,
                   value_high=1.0, **args)


@pytest.mark.parametrize(("kw", "message"), [
    ({"theta_high": True}, r"theta_high must be a number or an array of numbers \(a bound\), "
                           r"got True"),
    ({"theta_low": "a"}, "theta_low must be a numeric array, got str 'a'"),
    ({"theta": 0.5}, r"theta must be \(K,\) or \(R, K\) with K >= 1, got shape \(\)"),
    ({"theta": None}, "theta must be a numeric array, got NoneType"),
    ({"theta_high": 0.2}, r"theta lies outside \[theta_low, theta_high\]"),
    ({"r": True}, "r must be a number or one number per run .*got True"),
    ({"r": np.True_}, "r must be a number or one number per run .*got True"),
    ({"r": "0.5"}, "r must be a number or one number per run .*got str '0.5'"),
    ({"r": [0.1, 0.2]}, r"r must be a number \(theta is one run, shape \(40,\)\), got shape "
                        r"\(2,\)"),
    ({"r": np.nan}, "r must be finite"),
    ({"value_low": "0"}, "value_low must be a real number, got str '0'"),
    ({"value_high": True}, "value_high must be a real number, got bool True"),
    ({"value_low": 1.0}, "value_low must be below value_high, got 1.0 and 1.0"),
    ({"trunc": "0.5"}, r"trunc must be in \(0, 1\), got '0\.5'"),
    ({"trunc": True}, r"trunc must be in \(0, 1\), got True"),
    ({"alpha": None}, r"alpha must be in \(0, 1\), got None"),
])
def test_betting_capital_names_an_argument_of_another_type(kw: dict[str, Any],
                                                           message: str) -> None:
    """QA: betting_capital checked nothing: theta_high=True was the bound 1, r=True the
    null 1 and r="0.5" 0.5, trunc=True a cap of 1; value_low="0" raised Python's "can
    only concatenate str", a scalar theta an IndexError."""
    from activetest.stats.betting import betting_capital

    args = {"theta": _TH, "theta_low": 0.0, "theta_high": 1.0, "r": 0.5, "value_low": 0.0,
            "value_high": 1.0, **kw}
    with pytest.raises(ValueError, match=message):
        betting_capital(args.pop("theta"), args.pop("theta_low"), args.pop("theta_high"),
                        args.pop("r"), **args)


def test_betting_capital_takes_one_null_per_run() -> None:
    """A null per run (R,) is each run's own; a numpy number is its value."""
    from activetest.stats.betting import betting_capital

    th = np.array([[0.2, 0.6, 0.4], [0.9, 0.1, 0.5]])
    both = betting_capital(th, 0.0, 1.0, np.array([0.3, 0.7]), value_low=0.0,
                           value_high=1.0)
    for i, r in enumerate((0.3, np.float64(0.7))):
        one = betting_capital(th[i], 0.0, 1.0, r, value_low=0, value_high=1)
        np.testing.assert_array_equal(both[0][i], one[0])
        np.testing.assert_array_equal(both[1][i], one[1])


def test_betting_cs_takes_a_small_grid_for_many_runs() -> None:
    """A grid of fewer than 16 points for many runs was numpy's "Number of samples, -6,
    must be non-negative"; it is the whole range's coarse grid, and still covers."""
    from activetest.stats import betting_cs

    cs = betting_cs(np.tile(_TH, (2, 1)), 0.0, 1.0, value_low=0.0, value_high=1.0,
                    grid_size=10, N=40)
    assert np.all(cs.low <= 0.5) and np.all(cs.high >= 0.5)


@pytest.mark.parametrize(("labels", "message"), [
    ([None], r"labels\[0\] = None is not a class index \(0\.\.2\)"),
    ([0, 5], r"labels\[1\] = 5 is not a class index \(0\.\.2\)"),
    (np.array([0, -1]), r"labels\[1\] = -1 is not a class index \(0\.\.2\)"),
    ([1.5], r"labels\[0\] = 1\.5 is not a class index"),
    (["1"], r"labels\[0\] = '1' is not a class index"),
    ([True], r"labels\[0\] = True is not a class index"),
])
def test_observed_labels_are_named_by_position_and_value(labels: Any, message: str) -> None:
    """QA: ``observe(labels=[None])`` raised Python's "int() argument must be ...", and
    ``[5]`` said "labels must be class indices in 0..2" naming neither the value nor its
    place; ``[1.5]`` was taken as 1, ``["1"]`` and ``[True]`` as 1. Nothing is recorded."""
    import activetest.stats as st

    s = st.AdaptiveSampler(st.AdaptiveDesign.calibrated(T3, T3), seed=1)
    s.draw(2)
    with pytest.raises(ValueError, match=message):
        s.observe(labels)
    assert s.labels == [] and s.losses == [] and s.n_pending == 2
    s.observe([0, 2.0])
    assert s.labels == [0, 2]


@pytest.mark.parametrize("random_state", ["a", "0", 2.5, float("nan"), -1, True, [1, "x"], {}])
@pytest.mark.parametrize("call", [
    lambda st, r: st.bootstrap(np.ones(5), random_state=r),
    lambda st, r: st.bootstrap_means(np.ones(5), random_state=r),
    lambda st, r: st.bootstrap_std_many(np.ones((2, 5)), random_state=r),
    lambda st, r: st.sample(np.ones(5), 2, random_state=r),
    lambda st, r: st.reference_sample(np.ones(5), 2, random_state=r),
    lambda st, r: st.simulate_design(st.AdaptiveDesign.calibrated(T3, T3), losses=np.ones(20),
                                     labels=np.zeros(20, dtype=int), budget=2, n_runs=1,
                                     random_state=r),
])
def test_a_bad_random_state_is_named(call: Any, random_state: object) -> None:
    """QA: a string, a float or NaN gave numpy's "SeedSequence expects int or sequence of
    ints for entropy not a", -1 "expected non-negative integer", naming no argument; True
    was taken as the seed 1."""
    import activetest.stats as st

    with pytest.raises(ValueError, match="random_state must be a non-negative integer seed"):
        call(st, random_state)


def test_a_good_random_state_is_taken_as_before() -> None:
    import activetest.stats as st

    a = st.bootstrap_means(np.arange(5.0), n_boot=50, random_state=3)
    for r in (np.int64(3), np.random.default_rng(3), np.random.SeedSequence(3)):
        np.testing.assert_array_equal(a, st.bootstrap_means(np.arange(5.0), n_boot=50,
                                                            random_state=r))
    assert st.bootstrap_means(np.arange(5.0), n_boot=50, random_state=[1, 2]).shape == (50,)

@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.asymptotic_cs(np.ones(40), 100, planned_labels="200"),
     "planned_labels must be a number of labels > 0, got str '200'"),
    (lambda st: st.anytime_summary(np.ones(40), 100, planned_labels=None),
     "planned_labels must be a number of labels > 0, got NoneType"),
    (lambda st: st.labels_for_cs_width(np.ones(40), 100, 0.1, planned_labels=[1, 2]),
     "planned_labels must be a number of labels > 0, got list"),
    (lambda st: st.paired_difference_cs(np.ones(40), np.ones(40), 100, planned_labels=True),
     "planned_labels must be a number of labels > 0, got bool True"),
    (lambda st: st.asymptotic_cs(np.ones(40), 100, min_labels=None),
     "min_labels must be an integer >= 2, got None"),
    (lambda st: st.asymptotic_cs(np.ones(40), 100, min_labels="a"),
     "min_labels must be an integer >= 2, got 'a'"),
    (lambda st: st.anytime_summary(np.ones(40), 100, target_width="0.1"),
     "target_width must be a number > 0, or None, got str '0.1'"),
    (lambda st: st.anytime_summary(np.ones(40), 100, target_width=0),
     "target_width must be > 0, got 0"),
    (lambda st: st.bootstrap(np.ones(5), offset=None), "offset must be a real number, got "
                                                       "NoneType"),
    (lambda st: st.bootstrap(np.ones(5), offset="0.5"), "offset must be a real number, got "
                                                        "str '0.5'"),
    (lambda st: st.bootstrap(np.ones(5), offset=float("nan")), "offset must be finite"),
    (lambda st: st.bootstrap(np.ones(5), method=np.array(["normal"])),
     "method must be 'normal' or 'percentile'"),
    (lambda st: st.fixed_interval(np.ones(40), 100, pool_variance="0.5"),
     "pool_variance must be a number or array >= 0, got str '0.5'"),
    (lambda st: st.fixed_interval(np.ones(40), 100, pool_variance=True),
     "pool_variance must be a number or array >= 0, got True"),
    (lambda st: st.fixed_interval_curve(np.ones(40), 100, pool_variance=np.ones(2)),
     r"pool_variance has shape \(2,\): it must be a number or broadcast to the curve's "
     r"shape \(40,\)"),
])
def test_interval_arguments_are_named(call: Any, message: str) -> None:
    """QA: planned_labels and target_width given as a string or None raised Python's "'>'
    not supported between instances", min_labels int()'s errors, bootstrap's offset
    numpy's "ufunc 'add' did not contain a loop" (NaN gave a NaN estimate), a
    one-element array method numpy's "truth value ... ambiguous", and pool_variance="0.5"
    was read as 0.5, True as 1, one of the wrong length numpy's broadcast error."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)

_L40, _Q40 = np.linspace(0.1, 1.0, 40), np.full(40, 0.01)


@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.cv_lure(_L40, _Q40, 100, np.ones(2), 0.5),
     r"control \(2,\) must have the shape of losses \(40,\)"),
    (lambda st: st.cv_lure(_L40, _Q40, 100, 0.5, 0.5),
     r"control \(\) must have the shape of losses \(40,\)"),
    (lambda st: st.cv_lure(_L40, _Q40, 100, np.full(40, np.nan), 0.5),
     "control must be finite, got nan"),
    (lambda st: st.cv_lure(_L40, _Q40, 100, _L40, float("nan")),
     "control_pool_mean must be finite"),
    (lambda st: st.cv_lure(np.tile(_L40, (3, 1)), np.tile(_Q40, (3, 1)), 100,
                           np.tile(_L40, (3, 1)), 0.5, beta=np.ones(2)),
     r"beta has shape \(2,\): give a number or one per run \(3,\)"),
    (lambda st: st.cv_lure_curve(_L40, _Q40, 100, np.ones(3), 0.5),
     r"control \(3,\) must have the shape of losses \(40,\)"),
    (lambda st: st.tuned_beta(_L40, np.ones(2), _Q40, 100),
     r"control \(2,\) must have the shape of losses \(40,\)"),
    (lambda st: st.tuned_beta(np.ones(2), np.ones(2), _Q40, 100),
     r"losses \(2,\) and q \(40,\) must have the same shape"),
    (lambda st: st.betting_cs(0.5, np.zeros(40), np.ones(40), value_low=0.0, value_high=1.0),
     r"theta must be \(K,\) or \(R, K\), got shape \(\)"),
    (lambda st: st.pool_variance_curve(0.5, _L40, 100),
     r"theta_sq \(\) must have the shape of theta \(40,\)"),
    (lambda st: st.pool_variance_curve(_L40, np.ones(2), 100),
     r"theta_sq \(40,\) must have the shape of theta \(2,\)"),
])
def test_array_arguments_of_another_shape_are_named(call: Any, message: str) -> None:
    """QA: a control, beta or theta of another length gave numpy's "operands could not be
    broadcast together", a scalar control was taken for every item, a NaN control was
    refused as "losses must be finite", a scalar theta in betting_cs gave numpy's "cannot
    broadcast a non-scalar to a scalar array", and a scalar theta_sq was called
    "theta"."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)

@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.AdaptiveSampler("calibrated", seed=1),
     "design must be an AdaptiveDesign .*got str"),
    (lambda st: st.AdaptiveSampler(st.AdaptiveDesign.calibrated(T3, T3), seed=1).draw(None),
     "k must be a non-negative integer, got None"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, 0.5), "surrogate_logprobs must be a 2-D"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, lam="0.5"),
     r"lam must be a number in \(0, 1\], or None \(in-run\), got str '0\.5'"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, lam=True), "lam must be .*got bool True"),
    (lambda st: st.AdaptiveDesign.pe(T3, lam=[1, 2]), "lam must be .*got list"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), lam="a"), "lam must be .*got str 'a'"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, rule=["earned"]),
     r"rule must be one of original, earned, guard, got \['earned'\]"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, rule_params=1),
     "rule_params must be a sequence of at least 4 numbers"),
    (lambda st: st.AdaptiveDesign.pe(T3, rule_params="0.5"),
     "rule_params must be a sequence of at least 4 numbers"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, schedule="a"),
     r"schedule must be a 1-D sequence of draw numbers .*got 'a'"),
    (lambda st: st.AdaptiveDesign.pe(T3, schedule=2.5), "schedule must be a 1-D sequence"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, schedule=[1, 2.5]),
     "schedule must be a 1-D sequence"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), schedule=[0, 5]),
     "schedule must be a 1-D sequence"),
    (lambda st: st.AdaptiveDesign.calibrated(T3, T3, lazy="no"),
     "lazy must be True, False or None .*got 'no'"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), name=None),
     r"name must be a non-empty string naming the design \(e\.g\. 'fixed'\), got NoneType "
     r"None"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), name=5), "name must be .*got int 5"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), name=""), "name must be .*got str ''"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), loss="foo"),
     "loss must be 'log', 'zero_one' or 'graded', got 'foo'"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(20), loss=None),
     "loss must be 'log', 'zero_one' or 'graded', got None"),
    (lambda st: st.AdaptiveDesign.fixed(np.ones(3), loss="graded", target_logprobs=T3[:3]),
     r"loss 'graded' \(1 - a judged score\) is observed, not read from target_logprobs"),
    (lambda st: st.AdaptiveDesign.logistic(np.zeros((20, 2)), offset=False, name=None),
     "name must be .*got NoneType None"),
    (lambda st: st.AdaptiveDesign.from_name(None, surrogate_logprobs=T3),
     r"unknown design None; expected one of "),
])
def test_adaptive_design_arguments_are_named(call: Any, message: str) -> None:
    """QA: AdaptiveSampler("calibrated") raised an AttributeError, draw(None) int()'s
    TypeError, calibrated(T, 0.5) an IndexError ("tuple index out of range"); lam="0.5"
    Python's "'<' not supported", lam=[1, 2] float()'s TypeError and lam=True was taken
    as 1; a list rule "unhashable type"; rule_params=1 "'int' object is not
    subscriptable"; schedule="a" int()'s "invalid literal", 2.5 and [0, 5] were taken;
    lazy="no" was taken as True; fixed(loss="foo") without target_logprobs was taken
    (and stored in the design's spec)."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)


def test_a_design_schedule_given_is_taken_as_before() -> None:
    import activetest.stats as st

    d = st.AdaptiveDesign.calibrated(T3, T3, schedule=np.array([2, 5]))
    assert d.schedule.tolist() == [2, 5]
    assert st.AdaptiveDesign.pe(T3, schedule=[3.0]).schedule.tolist() == [3]

@pytest.mark.parametrize(("call", "message"), [
    (lambda st: st.simulate(target_logprobs=T3, labels=np.zeros(20, dtype=int),
                            methods="ce+lure", budget=5, n_runs=1, surrogate_logprobs=T3,
                            random_state=0),
     r"methods must be a sequence of methods, e\.g\. \['ce\+lure'\], got str 'ce\+lure'"),
    (lambda st: st.ActiveSampler.from_state(np.ones(5), "state"),
     r"state must be a SamplerState \(ActiveSampler\.state\(\)\), got str"),
    (lambda st: st.AdaptiveSampler.from_state(st.AdaptiveDesign.calibrated(T3, T3), {}),
     "from_state takes an AdaptiveDesign and an AdaptiveState .*got AdaptiveDesign and dict"),
])
def test_a_string_or_record_of_another_kind_is_named(call: Any, message: str) -> None:
    """QA: simulate(methods="ce+lure") read the string letter by letter ("method 'c' must
    look like 'ACQUISITION+ESTIMATOR'"); from_state with anything but a state raised an
    AttributeError."""
    import activetest.stats as st

    with pytest.raises(ValueError, match=message):
        call(st)

T3 = np.log(np.full((20, 3), 1 / 3))


def _adaptive_sampler(st: Any) -> Any:
    s = st.AdaptiveSampler(st.AdaptiveDesign.calibrated(T, T), seed=1)
    s.draw()
    return s
