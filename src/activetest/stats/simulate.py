"""Many independent active-testing runs on one pool, and their error summaries.

This is the paper's evaluation protocol in one call: for each method (an
acquisition paired with an estimator), draw R independent runs of M labels,
record the estimate after every label, and compare with the truth. Runs that
share an acquisition share their draws (so estimators are compared on the same
labels), and each acquisition's draws come from a seed derived from
``(random_state, acquisition name)``: adding a method never changes another's.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from activetest.stats import estimators as est
from activetest.stats.acquisition import (
    ACQUISITIONS,
    acquisition_scores,
    expected_log_loss,
    expected_zero_one_loss,
    predictive_entropy,
)
from activetest.stats.adaptive import AdaptiveDesign, DesignRuns, simulate_design
from activetest.stats.losses import log_loss, zero_one_loss
from activetest.stats.sampler import sample
from activetest.stats.validate import as_labels, as_logprobs, check_budget, floor_arg

__all__ = ["DESIGN_ACQUISITIONS", "DESIGN_FIXED_LOSS", "DESIGN_RULES", "ESTIMATORS", "Method",
           "SimulationResult", "control_values", "simulate"]

#: Estimator names: ``mean`` (plain running mean), ``lure``, ``is``, ``ase``,
#: ``cv_lure`` (control variate, beta = 1, unbiased), ``cv_lure_tuned`` (beta
#: fitted on the labels at each budget; asymptotically unbiased only).
ESTIMATORS = ("mean", "lure", "is", "ase", "cv_lure", "cv_lure_tuned")

#: Acquisitions that are adaptive designs (name -> :meth:`AdaptiveDesign.from_name` name).
#: ``adaptive_both``: the design serving log loss and the error rate at once (what a
#: session with ``--metric both`` runs), estimated with the simulated loss's own
#: control; ``adaptive_log``: the calibrated design fitted to log loss whatever loss is
#: simulated (what sessions with both metrics ran before ``adaptive_both``; for the
#: error rate only ``+lure``/``+is`` apply, its control being the log loss's).
DESIGN_ACQUISITIONS = {"adaptive": "calibrated", "adaptive_uniform": "calibrated-uniform",
                       "adaptive_both": "calibrated-both", "adaptive_log": "calibrated",
                       "fixed_mix": "fixed_mix", "pe_adaptive": "pe",
                       "adaptive_earned": "calibrated", "adaptive_both_earned": "calibrated-both"}
#: Adaptive acquisitions that run the earned in-run rule (what new sessions record); the
#: others run the original rule (:data:`activetest.stats.adaptive.RULES`).
DESIGN_RULES = {"adaptive_earned": "earned", "adaptive_both_earned": "earned"}
#: Adaptive acquisitions whose design is fitted to one loss whatever loss is simulated.
DESIGN_FIXED_LOSS = {"adaptive_log": "log"}
#: Estimators defined for the adaptive designs.
DESIGN_ESTIMATORS = ("cv_lure", "lure", "is")


@dataclass(frozen=True)
class Method:
    """An acquisition paired with an estimator, e.g. ``Method("ce", "lure")``."""

    acquisition: str
    estimator: str

    def __post_init__(self) -> None:
        if self.acquisition in DESIGN_ACQUISITIONS:
            if self.estimator not in DESIGN_ESTIMATORS:
                raise ValueError(f"acquisition {self.acquisition!r} is an adaptive design; its "
                                 f"estimators are {', '.join(DESIGN_ESTIMATORS)}")
            return
        if self.acquisition not in ACQUISITIONS:
            raise ValueError(f"unknown acquisition {self.acquisition!r}; expected one of "
                             f"{', '.join((*ACQUISITIONS, *DESIGN_ACQUISITIONS))}")
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}; expected one of "
                             f"{', '.join(ESTIMATORS)}")

    @property
    def name(self) -> str:
        """``"acquisition+estimator"``."""
        return f"{self.acquisition}+{self.estimator}"

    @classmethod
    def parse(cls, spec: str | Method) -> Method:
        """Parse ``"ce+lure"`` (or pass a Method through)."""
        if isinstance(spec, Method):
            return spec
        acq, sep, estim = str(spec).partition("+")
        if not sep:
            raise ValueError(f"method {spec!r} must look like 'ACQUISITION+ESTIMATOR', "
                             "e.g. 'uniform+mean' or 'ce+lure'")
        return cls(acq.strip(), estim.strip())


def control_values(loss: str, *, surrogate_logprobs: np.ndarray,
                   target_logprobs: np.ndarray | None = None,
                   kind: str = "auto") -> np.ndarray:
    """Per-item control variate ``h`` for control-variate LURE (and ASE).

    Args:
        loss: ``"log"`` or ``"zero_one"``.
        kind: ``"expected"``: the surrogate's expected loss of the target
            (CE score / expected 0-1 loss; needs target predictions on the pool);
            ``"surrogate"``: the surrogate's expected loss of *itself* (its entropy,
            or ``1 - max pi``), built from the surrogate alone, for PE acquisition;
            ``"auto"``: expected if target predictions are given, else surrogate.
    """
    if not isinstance(loss, str) or loss not in ("log", "zero_one"):  # (QA: any other
        # name, "log_loss" included, silently gave the 0-1 loss's control)
        raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")
    if kind == "auto":
        kind = "expected" if target_logprobs is not None else "surrogate"
    if kind == "expected":
        if target_logprobs is None:
            raise ValueError("control 'expected' needs target_logprobs on the pool")
        if loss == "log":
            return expected_log_loss(surrogate_logprobs, target_logprobs)
        return expected_zero_one_loss(surrogate_logprobs, target_logprobs)
    if kind == "surrogate":
        if loss == "log":
            return predictive_entropy(surrogate_logprobs)
        s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
        return 1.0 - np.exp(s.max(axis=1))
    raise ValueError(f"control kind must be 'auto', 'expected' or 'surrogate', got {kind!r}")


@dataclass
class SimulationResult:
    """Estimates of R runs at budgets 1..M for each method, and the truth.

    Attributes:
        estimates: method name -> ``(R, M)`` float64 estimates after each label.
        truth: the risk the estimates are compared with.
        pool_risk: the pool's mean loss (equal to ``truth`` unless a test-set truth was given).
        n_pool: N.
        loss: ``"log"`` or ``"zero_one"``.
        acquired: acquisition name -> ``(R, M)`` item indices (kept for diagnostics).
        q: acquisition name -> ``(R, M)`` proposal probabilities.
        designs: adaptive acquisition name -> its runs (controls, lambda, refits).
    """

    estimates: dict[str, np.ndarray]
    truth: float
    pool_risk: float
    n_pool: int
    loss: str
    acquired: dict[str, np.ndarray] = field(default_factory=dict)
    q: dict[str, np.ndarray] = field(default_factory=dict)
    designs: dict[str, DesignRuns] = field(default_factory=dict)

    @property
    def budget(self) -> int:
        """M, the largest budget simulated."""
        return next(iter(self.estimates.values())).shape[1]

    @property
    def n_runs(self) -> int:
        """R."""
        return next(iter(self.estimates.values())).shape[0]

    def squared_error(self, method: str) -> np.ndarray:
        """``(R, M)`` squared errors against the truth."""
        return (self.estimates[method] - self.truth) ** 2

    def median_squared_error(self, method: str) -> np.ndarray:
        """``(M,)`` median over runs of the squared error (the paper's measure)."""
        return np.median(self.squared_error(method), axis=0)

    def mean_squared_error(self, method: str) -> np.ndarray:
        """``(M,)`` mean over runs of the squared error."""
        return self.squared_error(method).mean(axis=0)

    def relative_error(self, method: str, baseline: str = "uniform+mean", *, offset: int = 0,
                       statistic: str = "median") -> np.ndarray:
        """Error of ``method`` at k labels over ``baseline`` at ``k + offset`` labels.

        ``offset`` charges labels spent elsewhere to the method (the paper charges
        the n in-context labels of a zero-shot target's surrogate). Returns an
        array over k = 1..M - offset (lower is better; 1 means no gain).
        """
        f = self.median_squared_error if statistic == "median" else self.mean_squared_error
        if not 0 <= offset < self.budget:
            raise ValueError(f"offset must be in 0..{self.budget - 1}, got {offset}")
        a = f(method)[: self.budget - offset]
        b = f(baseline)[offset:]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def seed_for(random_state: int | None, name: str) -> np.random.Generator:
    """A generator seeded by ``(random_state, crc32(name))``: one independent stream per
    named use of a run's seed (None: fresh entropy, still distinct by name)."""
    entropy = [zlib.crc32(name.encode())]
    if random_state is not None:
        entropy.insert(0, int(random_state))
    return np.random.default_rng(np.random.SeedSequence(entropy))


def simulate(*, target_logprobs: np.ndarray, labels: np.ndarray,
             methods: Iterable[str | Method], budget: int, n_runs: int,
             surrogate_logprobs: np.ndarray | None = None, loss: str = "log",
             proposal_floor: float | None = None, truth: float | None = None,
             control: str = "auto", random_state: int | None = 0, progress: bool = False,
             alpha: float | None = None) -> SimulationResult:
    """Run ``n_runs`` active-testing runs per method and record every estimate.

    Args:
        target_logprobs: ``(N, C)`` target class log-probabilities on the pool.
        labels: ``(N,)`` true classes of the pool (the simulation reveals them).
        methods: e.g. ``["uniform+mean", "ce+lure", "ce+cv_lure", "pe+lure",
            "adaptive+cv_lure"]``.
        budget: M (estimates are recorded at every budget 1..M).
        n_runs: R.
        surrogate_logprobs: ``(N, C)``; needed by every acquisition but uniform/oracle.
        loss: ``"log"`` (log loss) or ``"zero_one"`` (error rate).
        proposal_floor: the share of the uniform in the paper's acquisitions' proposals
            (None: 0.1, the paper's alpha; the adaptive designs mix with the uniform
            instead, lambda >= 0.1).
        truth: the risk to compare with; default the pool's mean loss.
        control: control variate kind for cv_lure/ase (see :func:`control_values`);
            ``"auto"`` uses the surrogate-only control for PE acquisition (which
            promises no target predictions on the pool) and the surrogate's
            expected loss of the target otherwise (and always for ASE).
        random_state: integer seed (None: fresh entropy, not reproducible).
        alpha: deprecated name of ``proposal_floor``.
    """
    t = as_logprobs(target_logprobs, "target_logprobs")
    n = t.shape[0]
    y = as_labels(labels, n, t.shape[1])
    s = None if surrogate_logprobs is None else as_logprobs(surrogate_logprobs,
                                                           "surrogate_logprobs", t.shape[1])
    if s is not None and s.shape[0] != n:
        raise ValueError(f"surrogate_logprobs has {s.shape[0]} rows, target_logprobs has {n}")
    budget = check_budget(budget, n)
    floor = floor_arg(proposal_floor, alpha, "simulate")
    if loss not in ("log", "zero_one"):
        raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")
    if random_state is not None and (isinstance(random_state, bool) or
                                     int(random_state) != random_state):
        raise ValueError(f"random_state must be an integer seed or None, got {random_state!r}")
    if isinstance(methods, (str, bytes, Method)):  # (QA: "ce+lure" was read letter by
        # letter: "method 'c' must look like 'ACQUISITION+ESTIMATOR'")
        raise ValueError(f"methods must be a sequence of methods, e.g. [{methods!r}], got "
                         f"{type(methods).__name__} {methods!r}")
    ms: Sequence[Method] = [Method.parse(m) for m in methods]
    if not ms:
        raise ValueError("methods is empty: give at least one, e.g. 'uniform+mean'")
    per_item = log_loss(t, y) if loss == "log" else zero_one_loss(t, y)
    pool_risk = float(per_item.mean())
    if any(m.estimator in ("ase", "cv_lure", "cv_lure_tuned") for m in ms) and s is None:
        raise ValueError("estimators ase/cv_lure need surrogate_logprobs")
    controls: dict[str, np.ndarray] = {}

    def control_for(acq: str, estimator: str) -> np.ndarray | None:
        if estimator not in ("ase", "cv_lure", "cv_lure_tuned"):
            return None
        # "auto": PE acquisition promises no target predictions on the pool, so its
        # control variate is built from the surrogate alone; ASE always estimates
        # the target's risk, so it uses the expected loss of the target.
        kind = control
        if control == "auto":
            kind = "surrogate" if acq == "pe" and estimator != "ase" else "expected"
        if kind not in controls:
            assert s is not None
            controls[kind] = control_values(loss, surrogate_logprobs=s, target_logprobs=t,
                                            kind=kind)
        return controls[kind]

    if any(m.acquisition in DESIGN_ACQUISITIONS for m in ms) and s is None:
        raise ValueError("the adaptive designs need surrogate_logprobs")
    out = SimulationResult({}, pool_risk if truth is None else float(truth), pool_risk, n, loss)
    for acq in dict.fromkeys(m.acquisition for m in ms):
        if acq in DESIGN_ACQUISITIONS:
            assert s is not None
            name = DESIGN_ACQUISITIONS[acq]
            d_loss = DESIGN_FIXED_LOSS.get(acq, loss)
            design = AdaptiveDesign.from_name(name, surrogate_logprobs=s, loss=d_loss,
                                              target_logprobs=None if name == "pe" else t,
                                              rule=DESIGN_RULES.get(acq, "original"))
            if loss not in design.losses and any(
                    m.acquisition == acq and m.estimator == "cv_lure" for m in ms):
                raise ValueError(f"acquisition {acq!r} is fitted to {d_loss!r}; its control "
                                 f"does not estimate the {loss!r} loss: use {acq}+lure")
            d_losses = per_item if d_loss == loss else (
                log_loss(t, y) if d_loss == "log" else zero_one_loss(t, y))
            runs = simulate_design(design, losses=d_losses, labels=y, budget=budget,
                                   n_runs=n_runs, random_state=seed_for(random_state, acq))
            out.acquired[acq], out.q[acq], out.designs[acq] = runs.indices, runs.q, runs
            for m in (m for m in ms if m.acquisition == acq):
                if m.estimator == "is":
                    out.estimates[m.name] = est.importance_sampling_curve(
                        per_item[runs.indices], runs.q, n)
                else:
                    out.estimates[m.name] = runs.curve(
                        per_item, use_control=m.estimator == "cv_lure",
                        loss=loss if loss in design.losses else None)
            continue
        # label-aware scores (nll, oracle) are allowed here: a simulation knows the labels
        scores = acquisition_scores(acq, surrogate_logprobs=s, target_logprobs=t, labels=y, n=n)
        idx, q = sample(scores, budget, n_runs=n_runs, proposal_floor=floor,
                        random_state=seed_for(random_state, acq), progress=progress)
        out.acquired[acq], out.q[acq] = idx, q
        L = per_item[idx]
        for m in (m for m in ms if m.acquisition == acq):
            out.estimates[m.name] = _curve(m.estimator, L, q, n, control_for(acq, m.estimator),
                                           idx)
    return out


def _curve(estimator: str, L: np.ndarray, q: np.ndarray, n: int, h: np.ndarray | None,
           idx: np.ndarray) -> np.ndarray:
    if estimator == "mean":
        return est.uniform_mean_curve(L)
    if estimator == "lure":
        return est.lure_curve(L, q, n)
    if estimator == "is":
        return est.importance_sampling_curve(L, q, n)
    assert h is not None
    if estimator == "ase":
        return np.full(L.shape, est.ase(h))
    if estimator == "cv_lure":
        return est.cv_lure_curve(L, q, n, h[idx], float(h.mean()))
    # cv_lure_tuned: refit beta at each budget (O(M^2) per run; fine for M <= ~1000)
    H = h[idx]
    out = np.empty(L.shape)
    for k in range(1, L.shape[1] + 1):
        beta = est.tuned_beta(L[:, :k], H[:, :k], q[:, :k], n)
        out[:, k - 1] = est.cv_lure(L[:, :k], q[:, :k], n, H[:, :k], float(h.mean()), beta)
    return out
