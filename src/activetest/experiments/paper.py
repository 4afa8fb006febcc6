"""The paper's experimental protocol on cached model outputs (statistics only).

For every dataset, target (each model zero-shot and few-shot) and surrogate
(each model few-shot: the other model, and the same model, the paper's "self"
case), run R independent active-testing runs per method at every budget 1..M
and summarise as the paper does:

* error at budget M = median over runs of ``(R_hat - R)^2``, where R is the
  target's mean log loss on the held-out test set (FPB: on the pool itself);
* relative error = active / uniform at the same budget; for zero-shot targets
  the surrogate's n in-context labels are charged to active testing (active
  with k labels against uniform with n + k);
* diagnostics for failures: the Pearson correlation of each acquisition score
  with the target's loss on the pool, accuracies, and the share of pool items
  with target NLL above 3 and 5 (label-noise suspects).

Nothing is tuned on the truth: methods, the proposal floor and seeds are fixed up front.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from activetest.experiments.outputs import DatasetOutputs
from activetest.stats import (
    acquisition_scores,
    adaptive_lure_se,
    adaptive_lure_terms,
    bootstrap_std_many,
    log_loss,
    lure_terms,
    sample,
    simulate,
    zero_one_loss,
)
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.simulate import DESIGN_ACQUISITIONS, Method

__all__ = [
    "DEFAULT_METHODS",
    "DESIGN_METHODS",
    "PAPER_BUDGETS",
    "CoverageResult",
    "Setting",
    "SettingResult",
    "bootstrap_coverage",
    "calibrated_settings",
    "design_for",
    "filter_noisy",
    "load_paper_table",
    "run_setting",
    "settings_for",
]

PAPER_BUDGETS = (50, 100, 200, 300, 400)
#: ``nll+lure`` acquires by the surrogate's NLL of the true label: the paper's score for
#: curating a fixed subset of an already-labelled set (label-aware, so not for a pool).
DEFAULT_METHODS = ("uniform+mean", "ce+lure", "ce+cv_lure", "ce+is", "ce+ase", "pe+lure",
                   "pe+cv_lure", "nll+lure")
#: Beyond the paper: the adaptive designs (stats.adaptive), each with adaptive LURE and
#: its own control: the calibrated-residual design, its fixed-score fallback, and the
#: surrogate-only design for sessions without target predictions on the pool.
DESIGN_METHODS = ("adaptive+cv_lure", "fixed_mix+cv_lure", "pe_adaptive+cv_lure")


@dataclass(frozen=True)
class Setting:
    """One (dataset, target, surrogate) combination; models as ``"name/mode"``."""

    dataset: str
    target: str
    surrogate: str

    @property
    def zero_shot(self) -> bool:
        """The target is prompted without in-context examples."""
        return self.target.endswith("/zero")

    @property
    def self_surrogate(self) -> bool:
        """The surrogate is the target's own model (few-shot)."""
        return self.target.split("/")[0] == self.surrogate.split("/")[0]

    @property
    def label(self) -> str:
        """Short display name."""
        return f"{self.target} <- {self.surrogate}"


@dataclass
class SettingResult:
    """Summaries of one setting.

    Attributes:
        offset: labels charged to active testing (n shots for zero-shot targets).
        truth: the target's true risk (test set; FPB: pool).
        mse: method -> ``(M,)`` median squared error at budgets 1..M.
        relative: method -> ``(M,)`` relative error at k = 1..M active labels
            (NaN where k + offset exceeds the simulated uniform budget).
        diagnostics: correlations and accuracies (see module docstring).
    """

    setting: Setting
    offset: int
    truth: float
    pool_risk: float
    n_runs: int
    mse: dict[str, np.ndarray] = field(default_factory=dict)
    relative: dict[str, np.ndarray] = field(default_factory=dict)
    diagnostics: dict[str, float] = field(default_factory=dict)

    def at(self, method: str, budgets: Sequence[int] = PAPER_BUDGETS, *,
           relative: bool = False) -> list[float]:
        """Values at the given budgets (1-based label counts)."""
        arr = self.relative[method] if relative else self.mse[method]
        return [float(arr[b - 1]) if b <= len(arr) else float("nan") for b in budgets]


def settings_for(outputs: DatasetOutputs) -> list[Setting]:
    """The paper's settings: every target (model zero-/few-shot) with every few-shot surrogate.

    Calibrated outputs (``"<model>/few-cal"``) are not among them: they go beyond
    the paper (see :func:`calibrated_settings`).
    """
    keys = sorted(k for k in outputs.outputs if k.endswith(("/zero", "/few")))
    surrogates = [k for k in keys if k.endswith("/few")]
    return [Setting(outputs.dataset, t, s) for t in keys for s in surrogates]


def calibrated_settings(outputs: DatasetOutputs) -> list[tuple[Setting, Setting]]:
    """Pairs (raw few-shot surrogate, the same surrogate calibrated) for every target."""
    pairs = []
    for setting in settings_for(outputs):
        cal = setting.surrogate[:-len("/few")] + "/few-cal"
        if cal in outputs.outputs:
            pairs.append((setting, Setting(outputs.dataset, setting.target, cal)))
    return pairs


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def run_setting(outputs: DatasetOutputs, setting: Setting, *, n_runs: int = 3000,
                budget: int = 400, methods: Iterable[str] = DEFAULT_METHODS,
                proposal_floor: float = 0.1,
                random_state: int = 0, charge_shots: bool = True,
                loss: str = "log") -> SettingResult:
    """Simulate one setting and summarise it.

    The uniform baseline is simulated up to ``budget + offset`` labels so that
    the charged comparison covers every active budget 1..budget. ``loss``:
    ``"log"`` (the paper's) or ``"zero_one"`` (the error rate; truth and every
    estimate then measure the error rate).
    """
    tgt = outputs.outputs[setting.target]
    sur = outputs.outputs[setting.surrogate]
    y = outputs.pool_labels
    offset = outputs.n_shots if (setting.zero_shot and charge_shots) else 0
    lossf = log_loss if loss == "log" else zero_one_loss
    if outputs.pool_is_truth:
        truth = float(lossf(tgt.pool, y).mean())
    else:
        truth = float(lossf(tgt.test, outputs.test_labels).mean())
    n = len(y)
    total = min(budget + offset, n)
    methods = list(methods)
    sim = simulate(target_logprobs=tgt.pool, labels=y, surrogate_logprobs=sur.pool,
                   methods=methods, budget=total, n_runs=n_runs, proposal_floor=proposal_floor,
                   truth=truth,
                   random_state=random_state, loss=loss)
    res = SettingResult(setting, offset, truth, sim.pool_risk, n_runs)
    base = sim.median_squared_error("uniform+mean")
    for m in methods:
        mse = sim.median_squared_error(m)
        res.mse[m] = mse[:budget]
        rel = np.full(budget, np.nan)
        k = np.arange(1, budget + 1)
        ok = k + offset <= total
        rel[ok] = mse[k[ok] - 1] / base[k[ok] + offset - 1]
        res.relative[m] = rel
    loss = log_loss(tgt.pool, y)
    for acq in ("ce", "pe"):
        sc = acquisition_scores(acq, surrogate_logprobs=sur.pool, target_logprobs=tgt.pool)
        res.diagnostics[f"corr_{acq}_loss"] = _pearson(sc, loss)
    res.diagnostics["target_acc"] = float((tgt.pool.argmax(1) == y).mean())
    res.diagnostics["surrogate_acc"] = float((sur.pool.argmax(1) == y).mean())
    res.diagnostics["frac_nll_gt3"] = float((loss > 3).mean())
    res.diagnostics["frac_nll_gt5"] = float((loss > 5).mean())
    return res


@dataclass
class CoverageResult:
    """Single-run error bars of one setting: share of runs with |R_hat - R| <= z * sd.

    Attributes:
        budgets: the budgets checked.
        covered: ``(runs, len(budgets))`` bool, bootstrap sd over the run's terms.
        covered_pool: the same against the pool risk (what the estimators are unbiased for).
        covered_se, covered_se_pool: with the plug-in martingale standard error
            ``sqrt(sum c_m^2 (theta_m - R_M)^2)`` instead (adaptive designs only).
    """

    setting: Setting
    budgets: np.ndarray
    covered: np.ndarray
    covered_pool: np.ndarray
    covered_se: np.ndarray | None = None
    covered_se_pool: np.ndarray | None = None

    def rate(self, min_budget: int = 1, *, pool: bool = False, se: bool = False) -> float:
        """Coverage pooled over runs and budgets >= ``min_budget``."""
        if se:
            arr = self.covered_se_pool if pool else self.covered_se
            if arr is None:
                return float("nan")
        else:
            arr = self.covered_pool if pool else self.covered
        cov = arr[:, self.budgets >= min_budget]
        return float(cov.mean()) if cov.size else float("nan")


def design_for(method: str, outputs: DatasetOutputs, setting: Setting,
               loss: str = "log") -> AdaptiveDesign:
    """The adaptive design behind a method such as ``"adaptive+cv_lure"``."""
    name = DESIGN_ACQUISITIONS[Method.parse(method).acquisition]
    tgt = outputs.outputs[setting.target]
    sur = outputs.outputs[setting.surrogate]
    return AdaptiveDesign.from_name(name, surrogate_logprobs=sur.pool, loss=loss,
                                    target_logprobs=None if name == "pe" else tgt.pool)


def bootstrap_coverage(outputs: DatasetOutputs, setting: Setting, *, n_runs: int = 100,
                       n_boot: int = 1000, budgets: Sequence[int] = tuple(range(10, 401, 10)),
                       z: float = 2.0, proposal_floor: float = 0.1, random_state: int = 0,
                       method: str = "ce+lure") -> CoverageResult:
    """The paper's bootstrap study: single runs, B resamples, coverage of R_hat +- z sd.

    ``method`` is ``"ce+lure"`` (the paper's) or an adaptive design's method (e.g.
    ``"adaptive+cv_lure"``), whose terms are ``t_m = M c_m theta_m``; for those the
    plug-in martingale standard error is checked as well.
    """
    tgt = outputs.outputs[setting.target]
    sur = outputs.outputs[setting.surrogate]
    y = outputs.pool_labels
    loss = log_loss(tgt.pool, y)
    truth = (float(loss.mean()) if outputs.pool_is_truth
             else float(log_loss(tgt.test, outputs.test_labels).mean()))
    bmax = min(max(budgets), len(y))
    b = np.array([x for x in budgets if x <= bmax])
    adaptive = Method.parse(method).acquisition in DESIGN_ACQUISITIONS
    if adaptive:
        runs = simulate_design(design_for(method, outputs, setting), losses=loss, labels=y,
                               budget=bmax, n_runs=n_runs, random_state=random_state)
        idx, q = runs.indices, runs.q
    else:
        if method != "ce+lure":
            raise ValueError(f"coverage is measured for ce+lure and the adaptive designs, "
                             f"not {method!r}")
        scores = acquisition_scores("ce", surrogate_logprobs=sur.pool, target_logprobs=tgt.pool)
        idx, q = sample(scores, bmax, n_runs=n_runs, proposal_floor=proposal_floor,
                        random_state=random_state)
    covered = np.zeros((n_runs, len(b)), dtype=bool)
    covered_pool = np.zeros_like(covered)
    covered_se = np.zeros_like(covered) if adaptive else None
    covered_se_pool = np.zeros_like(covered) if adaptive else None
    rng = np.random.default_rng(random_state + 1)
    for j, M in enumerate(b):
        if adaptive:
            args = (loss[idx[:, :M]], q[:, :M], len(y), runs.control[:, :M],
                    runs.control_rest[:, :M])
            terms = adaptive_lure_terms(*args)
            se = adaptive_lure_se(*args)
        else:
            terms = lure_terms(loss[idx[:, :M]], q[:, :M], len(y))
        est = terms.mean(axis=1)
        sd = bootstrap_std_many(terms, n_boot, rng)
        covered[:, j] = np.abs(est - truth) <= z * sd
        covered_pool[:, j] = np.abs(est - loss.mean()) <= z * sd
        if covered_se is not None and covered_se_pool is not None:
            covered_se[:, j] = np.abs(est - truth) <= z * se
            covered_se_pool[:, j] = np.abs(est - loss.mean()) <= z * se
    return CoverageResult(setting, b, covered, covered_pool, covered_se, covered_se_pool)


def filter_noisy(outputs: DatasetOutputs, target: str, threshold: float) -> DatasetOutputs:
    """Drop pool and test items whose ``target`` NLL of the given label exceeds ``threshold``.

    This is the paper's label-noise remedy (most SST-2 items with target NLL > 5
    were mislabelled). It uses the labels, so it is a diagnosis, not an
    unbiased estimator of the unfiltered risk.
    """
    tgt = outputs.outputs[target]
    keep_p = log_loss(tgt.pool, outputs.pool_labels) <= threshold
    keep_t = (log_loss(tgt.test, outputs.test_labels) <= threshold
              if len(outputs.test_labels) else np.zeros(0, dtype=bool))
    out = DatasetOutputs(outputs.dataset, outputs.pool_rows[keep_p], outputs.test_rows[keep_t],
                         outputs.example_rows, outputs.pool_labels[keep_p],
                         outputs.test_labels[keep_t], outputs.n_shots,
                         meta={**outputs.meta, "filtered": f"{target} NLL > {threshold}"})
    for key, mo in outputs.outputs.items():
        out.outputs[key] = type(mo)(mo.pool[keep_p], mo.test[keep_t] if mo.test.size else mo.test)
    return out


def load_paper_table(path: str | Path) -> dict[tuple[str, str, str, int], float]:
    """The paper's published errors: (dataset, target, method, labels) -> median sq. error."""
    out: dict[tuple[str, str, str, int], float] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["dataset"], row["target"], row["method"], int(row["labels"]))
            out[key] = float(row["median_squared_error"])
    return out
