"""The coverage study's measurements (:mod:`activetest.experiments.coverage` writes them up).

A method is a function ``Context -> Terms`` (per-run, per-draw theta_m and the inputs of
the bootstrap and of the exact anytime CS); :func:`evaluate` measures one method's fixed-budget,
time-uniform and optional-stopping coverage and widths on one setting;
:func:`run_setting_coverage` runs every method of :data:`METHODS`; :func:`run_paired`
the paired difference of two targets on the same draws.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import Setting
from activetest.stats import (
    acquisition_scores,
    expected_log_loss,
    expected_zero_one_loss,
    log_loss,
    sample,
    zero_one_loss,
)
from activetest.stats.betting import exact_cs, log_loss_bound, paired_difference_exact_cs
from activetest.stats.confseq import (
    MIN_LABELS,
    asymptotic_cs_from_curves,
    paired_difference_cs,
)
from activetest.stats.estimators import adaptive_lure_theta, fixed_control_rest
from activetest.stats.intervals import (
    interval_from_curves,
    moment_curves,
    pool_variance_curve,
)

__all__ = ["FLOOR", "METHODS", "STOP_FROM", "Z95", "Context", "PairedCoverage",
           "SettingCoverage", "Terms", "adaptive_cv_lure", "ce_cv_lure", "ce_lure", "evaluate",
           "lure_bootstrap_sd", "run_paired", "run_setting_coverage", "theta_bootstrap_sd"]

FLOOR = 0.1  # the paper's proposal floor (its alpha)
Z95 = 1.959963984540054
STOP_FROM = MIN_LABELS  # optional stopping is checked from here on


# ---------------------------------------------------------------- per-method terms


@dataclass
class Context:
    """One setting's pool, the loss, and the run sizes; draws are cached per acquisition."""

    target: np.ndarray  # (N, C) target class log-probs on the pool
    surrogate: np.ndarray  # (N, C)
    labels: np.ndarray
    loss: str  # "log" or "zero_one"
    n_runs: int
    budget: int
    seed: int
    _draws: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def N(self) -> int:  # noqa: N802 - the pool size is N throughout the package
        """Pool size."""
        return len(self.labels)

    @property
    def per_item(self) -> np.ndarray:
        """Each pool item's loss."""
        f = log_loss if self.loss == "log" else zero_one_loss
        return f(self.target, self.labels)

    @property
    def loss_bound(self) -> float:
        """The a priori bound on any item's loss (label-free)."""
        return log_loss_bound(self.target) if self.loss == "log" else 1.0

    def control(self) -> np.ndarray:
        """The surrogate's expected loss of the target (the CE score for log loss)."""
        f = expected_log_loss if self.loss == "log" else expected_zero_one_loss
        return f(self.surrogate, self.target)

    def draws(self, acquisition: str) -> tuple[np.ndarray, np.ndarray]:
        """``(idx, q)`` of R runs with the paper's floored proposal (seed per acquisition)."""
        if acquisition not in self._draws:
            scores = acquisition_scores(acquisition, surrogate_logprobs=self.surrogate,
                                        target_logprobs=self.target, labels=self.labels)
            seq = np.random.SeedSequence([self.seed, zlib.crc32(acquisition.encode())])
            self._draws[acquisition] = sample(scores, self.budget, n_runs=self.n_runs,
                                              proposal_floor=FLOOR,
                                              random_state=np.random.default_rng(seq))
        return self._draws[acquisition]


@dataclass
class Terms:
    """What the interval methods need from one method's runs.

    Attributes:
        theta: ``(R, K)`` per-draw estimates theta_m (unbiased for the pool risk given the past).
        theta_sq: ``(R, K)`` the same for the squared loss (pool-variance estimate).
        boot_sd: ``(R, K)`` the paper's bootstrap sd at every budget.
        exact: keyword arguments of :func:`exact_cs` (None: no exact anytime CS for this method).
        model_var: ``(R, K)`` an adaptive design's own prediction of ``N^2 Var(theta_m |
            past)`` (None: the SE is the observed one alone).
    """

    theta: np.ndarray
    theta_sq: np.ndarray
    boot_sd: np.ndarray
    exact: dict | None = None
    model_var: np.ndarray | None = None


def lure_bootstrap_sd(e: np.ndarray, q: np.ndarray, N: int) -> np.ndarray:
    """The paper's bootstrap sd of LURE on ``e`` (loss, or loss - control) at every budget.

    The bootstrap of the mean of the K terms ``v_m e_m`` has variance
    ``var0(v e) / M`` in the limit B -> inf (B = 1000 adds ~2% noise to the sd);
    ``v_m = 1 + (N - M) a_m`` with ``a_m = (1/((N-m+1) q_m) - 1)/(N - m)``, so the
    sums over m <= M are cumulative sums (O(K) per run).
    """
    K = e.shape[-1]
    m = np.arange(1, K + 1, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(m < N, (1.0 / ((N - m + 1) * q) - 1.0) / (N - m), 0.0)
    rest = N - m
    s1 = np.cumsum(e, axis=-1) + rest * np.cumsum(a * e, axis=-1)
    s2 = (np.cumsum(e * e, axis=-1) + 2 * rest * np.cumsum(a * e * e, axis=-1)
          + rest**2 * np.cumsum(a * a * e * e, axis=-1))
    return np.sqrt(np.maximum(s2 / m - (s1 / m) ** 2, 0.0) / m)


def theta_bootstrap_sd(theta: np.ndarray, N: int) -> np.ndarray:
    """Bootstrap sd over the terms ``t_m = M c_m theta_m`` (ADAPTIVE.md's recipe), every budget."""
    K = theta.shape[-1]
    m = np.arange(1, K + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        w = np.where(m < N, N / ((N - m) * (N - m + 1.0)), 0.0)
        W = m / (N - m)
    s1 = np.cumsum(w * theta, axis=-1) * m / W  # sum_m t_m
    s2 = np.cumsum(w * w * theta * theta, axis=-1) * (m / W) ** 2
    return np.sqrt(np.maximum(s2 / m - (s1 / m) ** 2, 0.0) / m)


def _exact_kwargs(ctx: Context, L: np.ndarray, q: np.ndarray, **control: object) -> dict:
    return {"losses": L, "q": q, "N": ctx.N, "loss_high": ctx.loss_bound, "loss_low": 0.0,
            "q_floor": FLOOR / (1 + FLOOR), **control}


def ce_lure(ctx: Context) -> Terms:
    """The paper's CE acquisition (zero-one: its expected 0-1 loss) with LURE (g = 0)."""
    idx, q = ctx.draws("ce" if ctx.loss == "log" else "zero_one")
    L = ctx.per_item[idx]
    return Terms(adaptive_lure_theta(L, q, ctx.N), adaptive_lure_theta(L * L, q, ctx.N),
                 lure_bootstrap_sd(L, q, ctx.N), _exact_kwargs(ctx, L, q))


def ce_cv_lure(ctx: Context) -> Terms:
    """The same draws with control-variate LURE (g = the surrogate's expected loss)."""
    idx, q = ctx.draws("ce" if ctx.loss == "log" else "zero_one")
    L = ctx.per_item[idx]
    h = ctx.control()
    g, G = h[idx], fixed_control_rest(h, idx)
    # No exact anytime CS here: with a control its lower theta bound is (a - max g)/q_min, so it
    # is valid (tests/stats/test_confseq.py) but wide, and it would double the run time.
    return Terms(adaptive_lure_theta(L, q, ctx.N, g, G), adaptive_lure_theta(L * L, q, ctx.N),
                 lure_bootstrap_sd(L - g, q, ctx.N))


def adaptive_cv_lure(ctx: Context) -> Terms:
    """ADAPTIVE.md's calibrated-residual design with its learnt control.

    Its proposal mixes with the uniform at weight lambda >= 0.1, so every remaining
    item has ``q >= 0.1 / (N - m + 1)``; the bootstrap resamples its terms
    ``t_m = M c_m theta_m`` as ADAPTIVE.md prescribes.
    """
    from activetest.stats.adaptive import AdaptiveDesign, simulate_design

    design = AdaptiveDesign.from_name("calibrated", surrogate_logprobs=ctx.surrogate,
                                      loss=ctx.loss, target_logprobs=ctx.target)
    seq = np.random.SeedSequence([ctx.seed, zlib.crc32(b"adaptive")])
    runs = simulate_design(design, losses=ctx.per_item, labels=ctx.labels, budget=ctx.budget,
                           model_var=True,
                           n_runs=ctx.n_runs, random_state=np.random.default_rng(seq))
    L = ctx.per_item[runs.indices]
    th = adaptive_lure_theta(L, runs.q, ctx.N, runs.control, runs.control_rest)
    ex = _exact_kwargs(ctx, L, runs.q, control=runs.control, control_rest=runs.control_rest,
                       control_low=0.0, control_high=ctx.loss_bound)
    ex["q_floor"] = 0.1
    return Terms(th, adaptive_lure_theta(L * L, runs.q, ctx.N), theta_bootstrap_sd(th, ctx.N), ex,
                 runs.model_var)


TermsFn = Callable[[Context], Terms]

#: Methods measured: the paper's CE proposal with LURE and CV-LURE, and the session
#: default, ADAPTIVE.md's calibrated-residual design.
METHODS: dict[str, TermsFn] = {
    "ce+lure": ce_lure,
    "ce+cv_lure": ce_cv_lure,
    "adaptive+cv_lure": adaptive_cv_lure,
}


# ---------------------------------------------------------------- measurements


@dataclass
class SettingCoverage:
    """Everything measured for one (setting, method, loss); curves are over budgets 1..K."""

    setting: Setting
    method: str
    loss: str
    n_runs: int
    n_exact: int
    pool_risk: float
    test_truth: float | None
    fixed: dict[str, np.ndarray]  # name -> (K,) coverage of the pool risk per budget
    fixed_test: dict[str, np.ndarray]  # name -> (K,) coverage of the test truth
    uniform: dict[str, float]  # name -> share of runs covering at every budget in its window
    peeking: dict[str, np.ndarray]  # name -> (K,) P(excluded at some budget in [30, M])
    stopping: dict[str, tuple[float, float]]  # name -> (coverage at stop, mean stop budget)
    widths: dict[str, tuple[float, float]]  # name -> median width at (100, K)
    ratios: dict[str, tuple[float, float]]  # name -> median width ratio at (100, K)
    threshold: float = float("nan")
    gap_sd: float = float("nan")  # (test truth - pool risk) / sqrt(S_pool^2/N + S_test^2/N_test)


def _cov(lo: np.ndarray, hi: np.ndarray, v: float) -> np.ndarray:
    return (lo <= v) & (hi >= v)


def _stop(lo: np.ndarray, hi: np.ndarray, width: float, v: float, start: int
          ) -> tuple[float, float]:
    """Stop at the first budget >= start with width <= W (else the last); cover at the stop?"""
    K = lo.shape[1]
    ok = (hi - lo)[:, start - 1:] <= width
    first = np.where(ok.any(1), np.argmax(ok, axis=1) + start - 1, K - 1)
    rows = np.arange(lo.shape[0])
    hit = _cov(lo[rows, first], hi[rows, first], v)
    return float(hit.mean()), float(first.mean() + 1)


def _peek(lo: np.ndarray, hi: np.ndarray, v: float, start: int) -> np.ndarray:
    out = np.zeros(lo.shape[1])
    miss = ~_cov(lo, hi, v)
    miss[:, : start - 1] = False
    out[:] = np.logical_or.accumulate(miss, axis=1).mean(0)
    return out


def evaluate(terms: Terms, ctx: Context, setting: Setting, method: str, *, pool_risk: float,
             test_truth: float | None, n_test: int, exact_runs: int) -> SettingCoverage:
    """All measurements of one method in one setting (see the module docstring)."""
    N, K = ctx.N, terms.theta.shape[1]
    R = pool_risk
    th = terms.theta
    curves = moment_curves(th, N, terms.model_var)  # one pass; every interval below uses them
    mart = interval_from_curves(*curves, N)
    plain = interval_from_curves(*curves, N, skew=False)
    est = mart.estimate
    b_lo, b_hi = est - Z95 * terms.boot_sd, est + Z95 * terms.boot_sd
    b_lo[:, 0], b_hi[:, 0] = -np.inf, np.inf  # one term: no spread, no interval
    asym = asymptotic_cs_from_curves(*curves[:3], N)
    asym10 = asymptotic_cs_from_curves(*curves[:3], N, min_labels=10)
    fixed = {"bootstrap": _cov(b_lo, b_hi, R).mean(0), "martingale": _cov(mart.low, mart.high,
                                                                           R).mean(0),
             "martingale (plain z)": _cov(plain.low, plain.high, R).mean(0)}
    fixed_test: dict[str, np.ndarray] = {}
    if test_truth is not None:
        T = test_truth
        pv = pool_variance_curve(terms.theta_sq, th, N)
        pop = interval_from_curves(*curves, N, pool_variance=pv)
        both = interval_from_curves(*curves, N, pool_variance=pv * (1 + N / n_test))
        fixed_test = {"bootstrap": _cov(b_lo, b_hi, T).mean(0),
                      "martingale (pool)": _cov(mart.low, mart.high, T).mean(0),
                      "+ pool sampling S2/N": _cov(pop.low, pop.high, T).mean(0),
                      "+ S2/N + S2/N_test": _cov(both.low, both.high, T).mean(0)}
    s = STOP_FROM
    uniform = {
        "bootstrap, every budget >= 30": float(_cov(b_lo, b_hi, R)[:, s - 1:].all(1).mean()),
        "martingale, every budget >= 30": float(_cov(mart.low, mart.high,
                                                     R)[:, s - 1:].all(1).mean()),
        "asymptotic CS (from 30)": float(asym.covers(R, s).mean()),
        "asymptotic CS started at 10": float(asym10.covers(R, 10).mean()),
    }
    peeking = {"bootstrap": _peek(b_lo, b_hi, R, s), "martingale": _peek(mart.low, mart.high, R, s),
               "asymptotic CS": _peek(asym.low, asym.high, R, s)}
    j100 = min(100, K) - 1
    W = float(np.median(b_hi[:, j100] - b_lo[:, j100]))
    stopping = {"bootstrap": _stop(b_lo, b_hi, W, R, s),
                "bootstrap, checked from 10": _stop(b_lo, b_hi, W, R, 10),
                "martingale": _stop(mart.low, mart.high, W, R, s),
                "asymptotic CS": _stop(asym.low, asym.high, W, R, s)}
    if terms.model_var is not None:  # what the design's variance floor buys
        c_obs = moment_curves(th, N)
        m_obs = interval_from_curves(*c_obs, N)
        a_obs = asymptotic_cs_from_curves(*c_obs[:3], N)
        fixed["martingale (observed SE only)"] = _cov(m_obs.low, m_obs.high, R).mean(0)
        uniform["asymptotic CS, observed SE only (from 30)"] = float(a_obs.covers(R, s).mean())
    widths = {"bootstrap": (float(np.median(b_hi[:, j100] - b_lo[:, j100])),
                            float(np.median(b_hi[:, -1] - b_lo[:, -1]))),
              "martingale": (float(np.median(mart.width[:, j100])),
                             float(np.median(mart.width[:, -1]))),
              "asymptotic CS": (float(np.median(asym.width[:, j100])),
                                float(np.median(asym.width[:, -1])))}

    def ratio(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        return float(np.median(a[:, j100] / b[:, j100])), float(np.median(a[:, -1] / b[:, -1]))

    ratios = {"asymptotic CS / martingale": ratio(asym.width, mart.width),
              "asymptotic CS / bootstrap": ratio(asym.width, b_hi - b_lo)}
    n_ex = 0
    if terms.exact is not None and exact_runs > 0:
        n_ex = min(exact_runs, th.shape[0])
        kw = {k: (v[:n_ex] if isinstance(v, np.ndarray) and v.ndim == 2 else v)
              for k, v in terms.exact.items()}
        ex = exact_cs(grid_size=512, **kw)
        uniform["exact CS (from 1)"] = float(ex.covers(R, 1).mean())
        peeking["exact CS"] = _peek(ex.low, ex.high, R, s)
        stopping["exact CS"] = _stop(ex.low, ex.high, W, R, s)
        widths["exact CS"] = (float(np.median(ex.width[:, j100])),
                              float(np.median(ex.width[:, -1])))
        ratios["exact CS / martingale"] = ratio(ex.width, mart.width[:n_ex])
    return SettingCoverage(setting, method, ctx.loss, th.shape[0], n_ex, R, test_truth, fixed,
                           fixed_test, uniform, peeking, stopping, widths, ratios, W)


def run_setting_coverage(data: DatasetOutputs, setting: Setting, *, loss: str, n_runs: int,
                         budget: int, exact_runs: int, seed: int,
                         methods: Sequence[str]) -> list[SettingCoverage]:
    """Every method of one setting on shared draws."""
    tgt, sur = data.outputs[setting.target], data.outputs[setting.surrogate]
    ctx = Context(tgt.pool, sur.pool, data.pool_labels, loss, n_runs, min(budget, len(
        data.pool_labels)), seed)
    pool_risk = float(ctx.per_item.mean())
    test_truth, n_test = None, 0
    if not data.pool_is_truth:
        f = log_loss if loss == "log" else zero_one_loss
        test_truth = float(f(tgt.test, data.test_labels).mean())
        n_test = len(data.test_labels)
    return [evaluate(METHODS[m](ctx), ctx, setting, m, pool_risk=pool_risk,
                     test_truth=test_truth, n_test=n_test, exact_runs=exact_runs)
            for m in methods]


def gap_sd(data: DatasetOutputs, setting: Setting, loss: str) -> float:
    """How far the test truth is from the pool risk, in sds of the difference of two means."""
    if data.pool_is_truth:
        return float("nan")
    f = log_loss if loss == "log" else zero_one_loss
    tgt = data.outputs[setting.target]
    a, b = f(tgt.pool, data.pool_labels), f(tgt.test, data.test_labels)
    sd = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return float((b.mean() - a.mean()) / sd) if sd > 0 else float("nan")


@dataclass
class PairedCoverage:
    """The paired CS of ``R_a - R_b`` (two targets, the same draws) in one dataset."""

    dataset: str
    a: str
    b: str
    surrogate: str
    n_runs: int
    n_exact: int
    diff: float  # pool risk of a minus that of b
    uniform: dict[str, float]  # name -> share covering the difference at every budget
    decided: dict[str, tuple[float, float, float]]  # -> (decided by K, wrong sign, when)
    widths: dict[str, float]  # name -> median width at K


def _decisions(lo: np.ndarray, hi: np.ndarray, diff: float, start: int
               ) -> tuple[float, float, float]:
    """Share of runs whose CS excludes 0 by the last budget, with the wrong sign, and when."""
    neg, pos = hi[:, start - 1:] < 0, lo[:, start - 1:] > 0
    any_ = neg | pos
    hit = any_.any(1)
    first = np.argmax(any_, axis=1)
    rows = np.arange(lo.shape[0])
    said_neg = neg[rows, first] & hit
    wrong = np.where(diff < 0, hit & ~said_neg, hit & said_neg) if diff != 0 else hit
    mean_t = float((first[hit] + start).mean()) if hit.any() else float("nan")
    return float(hit.mean()), float(wrong.mean()), mean_t


def run_paired(data: DatasetOutputs, a: str, b: str, surrogate: str, *, n_runs: int,
               budget: int, exact_runs: int, seed: int) -> PairedCoverage:
    """Targets ``a`` and ``b`` evaluated on the same draws (log loss), acquired by the sum
    of the surrogate's expected losses of both (label-free)."""
    y = data.pool_labels
    ta, tb, sur = (data.outputs[k].pool for k in (a, b, surrogate))
    La, Lb = log_loss(ta, y), log_loss(tb, y)
    N = len(y)
    scores = expected_log_loss(sur, ta) + expected_log_loss(sur, tb)
    seq = np.random.SeedSequence([seed, zlib.crc32(f"paired|{a}|{b}".encode())])
    idx, q = sample(scores, min(budget, N), n_runs=n_runs, proposal_floor=FLOOR,
                    random_state=np.random.default_rng(seq))
    d = float(La.mean() - Lb.mean())
    cs = paired_difference_cs(adaptive_lure_theta(La[idx], q, N),
                              adaptive_lure_theta(Lb[idx], q, N), N)
    s = STOP_FROM
    out = PairedCoverage(data.dataset, a, b, surrogate, n_runs, 0, d,
                         {"asymptotic CS (from 30)": float(cs.covers(d, s).mean())},
                         {"asymptotic CS": _decisions(cs.low, cs.high, d, s)},
                         {"asymptotic CS": float(np.median(cs.width[:, -1]))})
    if exact_runs > 0:
        n = min(exact_runs, n_runs)
        ex = paired_difference_exact_cs(La[idx[:n]], Lb[idx[:n]], q[:n], N,
                                        bound_a=log_loss_bound(ta), bound_b=log_loss_bound(tb),
                                        q_floor=FLOOR / (1 + FLOOR), grid_size=512)
        out.n_exact = n
        out.uniform["exact CS (from 1)"] = float(ex.covers(d, 1).mean())
        out.decided["exact CS"] = _decisions(ex.low, ex.high, d, 1)
        out.widths["exact CS"] = float(np.median(ex.width[:, -1]))
    return out


def paired_pairs(data: DatasetOutputs) -> list[tuple[str, str, str]]:
    """Each model zero-shot against itself few-shot, surrogate: the other model few-shot."""
    models = sorted({k.split("/")[0] for k in data.outputs})
    out = []
    for m in models:
        other = [o for o in models if o != m]
        a, b = f"{m}/zero", f"{m}/few"
        if a in data.outputs and b in data.outputs and other and f"{other[0]}/few" in data.outputs:
            out.append((a, b, f"{other[0]}/few"))
    return out
