"""Adaptive designs: the proposal and control may change between draws (exactly unbiased).

The estimator is :func:`activetest.stats.estimators.adaptive_lure`: at draw m
(1-based) the item ``i_m`` is drawn from the remaining set ``S_m``
(``|S_m| = N - m + 1``) with probability ``q_m(i_m)`` and the control is
``g^(m)``; both are functions of the pool's model outputs and of the labels
observed before draw m only. Then::

    N theta_m = sum_{j<m} L_{i_j} + sum_{i in S_m} g^(m)_i + (L_{i_m} - g^(m)_{i_m}) / q_m(i_m)

has ``E[theta_m | past] = R`` (the pool's mean loss) whatever the design, and
``R_M = sum_m c_m theta_m`` with ``c_m = N (N - M) / (M (N - m)(N - m + 1))``
is exactly unbiased. The design only has to keep ``q_m > 0`` on ``S_m``
wherever the loss can differ from the control: every design here mixes its
score with the uniform, ``q_m(i) = (1 - lambda) s_i / sum_{S_m} s + lambda / (N - m + 1)``
with ``lambda >= 0.1``, which also caps ``1 / ((N - m + 1) q)`` at 10, the paper's floor.

The variance-optimal proposal for a control g is ``q`` proportional to the
conditional standard deviation of the residual ``L - g`` (not to the expected
loss, which is what CE acquisition approximates), so the designs predict the
loss distribution of each item and use its mean as g and its sd as the score.

Designs (:class:`AdaptiveDesign`):

``calibrated`` (the calibrated-residual design; needs target predictions on the pool)
    Per-class loss ``l_i(c) = -log p_f(c|x_i)`` (log loss) or
    ``1[c != argmax_c p_f(c|x_i)]`` (error rate). Label-free features
    ``f_i(c) = [log pi_i(c) - mean_j log pi_j(c), log p_f,i(c) - mean_j log p_f,j(c), e_c]``
    (centred per class over the pool; ``e_c`` one-hot for c = 2..C), a
    multinomial logit ``P_w(c|x_i) = softmax_c(w . f_i(c))`` with prior
    ``N(w0, I/rho)``, ``w0 = (1, 0, ..., 0)``: the surrogate (with its pool-average
    class bias divided out). Refits before draws 10, then whenever m has grown by
    1.25 (``floor(10 * 1.25^j)``: 10, 12, 15, 19, 24, 30, 38, 47, ...): the MAP
    ``w`` by damped Newton (warm start from the previous refit) for every rho in
    {0.01, 0.1, 1, 10}, keeping the rho of largest Laplace evidence
    ``loglik(w) - rho/2 |w - w0|^2 + K/2 log rho - 1/2 log det H``. Then
    ``g_i = sum_c P(c|x_i) l_i(c)``, ``s_i = sd_P(l_i)``. Before the first refit
    (draws 1..9) the design uses the prior model ``w0`` with lambda = 0.5: no
    residual has been seen yet, so it hedges halfway between the label-free
    calibrated surrogate and the uniform (``start="uniform"``: q uniform and g = 0
    there, as ADAPTIVE.md states it; measured slightly worse, see
    docs/reproduction.md).
``calibrated-both`` (log loss AND error rate from one run; :meth:`AdaptiveDesign.calibrated_both`)
    The calibrated design's model ``P_w(c|x)`` is fitted on the class labels, so
    it does not depend on the loss: one fit gives each metric k its own control
    ``g_k = E_P[l_k]`` and residual sd ``s_k = sd_P(l_k)``. A proposal serving
    both minimises ``sum_k Var_k(q) / U_k``, the sum of each metric's variance
    relative to what uniform sampling pays for it; with ``Var_k(q) ~ sum_i
    s_k,i^2 / q_i`` that is ``q_i`` proportional to
    ``s_i = sqrt(s_log,i^2 / U_log + s_err,i^2 / U_err)``, the combined
    standardised residual spread. ``U_k = sum_i s_k,i^2 + sum_i (g_k,i - mean
    g_k)^2`` is the model's own prediction of N times metric k's pool variance
    (computed at each refit from the fit, so from past labels only). In-run
    lambda minimises the same combination of the two importance-weighted
    variance estimates. Each metric's estimate is adaptive LURE with its own
    control (``control`` for log loss, ``control2`` for the error rate), and its
    intervals take its own model variance as floor. Why not the single-metric
    design fitted to log loss with the error rate by plain LURE on its draws:
    that proposal ignores where the error rate is uncertain, and without a
    control the error rate pays the full importance-weighting variance (in the
    demo its interval was 2.6x uniform's); a design per metric would be two
    runs, i.e. twice the labels. Everything is a function of the labels seen
    before each draw, so both estimates are exactly unbiased (tests/stats:
    exact enumeration).
``fixed`` (any fixed score and control)
    ``s`` and ``g`` given; lambda fixed, or chosen in-run (below). The
    fixed-score fallback (``fixed_mix``) takes ``P = (pi + p_f)/2`` (no learning):
    ``g = E_P[l]``, ``s = sd_P(l)``.
``pe`` (no target predictions on the pool)
    Only the surrogate is known on unlabelled items, and the loss only on the
    labelled ones (the target is run there). So g and s must be functions of the
    surrogate alone plus the observed losses: a Bayesian ridge regression of the
    observed loss on standardised surrogate features
    ``phi_i = [pi_i(c) for c = 2..C, H(pi_i), max_c pi_i(c)]`` gives ``g``
    (clipped to the loss's range), a second one of the absolute residual
    ``|L - g|`` gives ``s`` (the residual's scale); ridge by evidence from the
    same grid. ``sum_{S_m} g`` stays computable, so the estimate is exactly
    unbiased. (A per-class label model cannot help without the target's
    prediction for each class.)

``graded`` (free-form answers judged right/wrong or scored in [0, 1]; :meth:`AdaptiveDesign.graded`)
    The loss is ``L = 1 - score`` of the judgment (binary exact match: 1 if
    wrong). A binary logistic model ``P_w(wrong | x_i) = sigmoid(w . x_i)`` on
    label-free features ``x_i = [o_i, 1, z_i]``: ``o_i = logit(p0_i)`` the
    log-odds of a label-free prior probability of a wrong answer (clipped to
    [0.01, 0.99]; e.g. ``1 - exp(sum log-prob)`` of the target's own answer),
    an intercept, and the features ``z_i`` (confidence summaries, agreement
    with another model, judges' log-odds) standardised over the pool. Prior
    ``N(w0, I/rho)`` with ``w0 = (1, 0, ..., 0)``: the label-free prior itself
    (without ``p0``: ``w0 = 0`` and the draws stay uniform with g = 0 until the
    first refit). Fitted on the observed losses (soft targets when graded)
    with the calibrated design's schedule, ridge grid and evidence, then
    ``g_i = P(wrong)`` (the expected loss) and ``s_i = sqrt(g_i (1 - g_i))``
    (the sd of a 0/1 loss; an upper bound for a graded one of that mean).

In-run lambda (any design; the default): at each refit choose lambda in
{0.1, 0.2, 0.3, 0.5, 0.7, 1} minimising
``sum_{j<m} (L_j - g_{i_j})^2 / (q_lambda(i_j) q_j)``, an importance-weighted
estimate of the next draw's variance ``sum_{S_m} (L - g)^2 / q_lambda`` (up to a
constant). It uses labels seen before the draw only, so unbiasedness holds.

The earned rule (``rule="earned"``; what new sessions run, recorded in their config as
``design_rule``; ``"original"`` is everything above and this module's default). The
in-run lambda above can fall to 0.1 however few labels support it: on a pool where 1 %
of the items are confidently wrong and the surrogate copies the target (docs/
robustness.md, ``rare_miss``) the model sees no surprise, draws those items at a tenth
of the uniform rate, and its median squared error is 8.5x uniform's at 400 labels.
The earned rule changes three things, each a function of the labels seen before the
draw (so the estimate stays exactly unbiased; tests/stats enumerate every draw order):

1. *Uniform until labels arrive*: before the first refit the draws are uniform with
   g = 0 (a label-free model cannot be trusted with the proposal or the control: on a
   pool of near-constant losses the prior model's control alone made the error 17x
   uniform's at 50 labels).
2. *Confidence is earned*: the score is the residual's rms under the model's label
   distribution mixed with the uniform over the classes by ``eps_k = a / (a + k)``
   (``a = 4`` pseudo-labels, k labels seen): ``s_i = sqrt((1 - eps_k) sd_P(l_i)^2 +
   eps_k mean_c (l_i(c) - g_i)^2)``. With k labels the model cannot have shown that a
   class it gives less than about 1/k will not occur, so an item where a surprise would
   cost much (``l_i(c)`` far from ``g_i``) keeps a share of the proposal that shrinks
   only as labels accumulate; the control ``g = E_P[l]`` is unchanged. (Graded: the
   loss's two ends 0 and 1 stand for the classes. The fixed designs have no model to
   smooth and are unchanged.)
3. *The model must beat uniform sampling*: at each refit, uniform draws with a
   constant control (the self-normalised importance-weighted mean of the past losses)
   are a candidate beside the lambda grid, with the same importance-weighted estimate
   of the next draw's variance ``sum_j (L_j - c)^2 (N - m + 1) / q_j``; ties go to the
   uniform. On exactly constant losses this makes the estimate exact (to rounding).

The guarantee a proposal's uniform share gives (any design, any pool): one draw from
the remaining set S (``n = |S|``) with ``q_i >= lambda / n`` and residuals ``r_i = L_i -
g_i`` has ``N^2 Var(theta | past) = sum_S r^2 / q - (sum_S r)^2 <= (n / lambda) sum_S r^2
- (sum_S r)^2 = (1/lambda) V_u + (1/lambda - 1) (sum_S r)^2``, where ``V_u = n sum_S (r -
rbar)^2`` is what uniform draws with the same control pay. So the variance ratio to
uniform sampling is at most ``1/lambda`` when the control's residuals have mean 0
(``1/lambda + (1/lambda - 1) rbar^2 / var(r)`` otherwise): 10x at the grid's floor 0.1,
2x only at lambda = 0.5. The earned rule keeps the grid (and so the bound 10x, and the
exact CS's floor 0.1) and instead raises q where a surprise would be costly; what it
achieves on hostile pools is measured, not bounded (docs/robustness.md, 200 runs: at
most 1.74x uniform's median squared error at any budget from 50 to 400 labels on every
pool there, where the original rule reaches 18x; the 40 paper settings keep a median
of 0.77).

Batch mode: the design at draw m is fitted on the labels *known* when draw m is
made (a prefix of the draws). A refit fires at the first draw at which the known
labels reach a schedule point not yet used; within a batch nothing is refitted
but the draws stay sequential without replacement over the remaining items.
The design is thus a deterministic function of (the pool's model outputs, the
labels in draw order, how many were known at each draw); the seed only drives
the draws (one uniform per draw), so a run resumes exactly from its history.

The knobs are fixed in code, not tuned on any truth: the schedule's first refit
at 10 labels (fewer cannot pin down K = C + 1 weights) and its growth 1.25 (the
fit changes little between geometrically spaced refits, and 17 refits up to 400
labels keep one simulated run near 15 ms); the ridge grid spans strong to weak
shrinkage towards the surrogate, and the evidence (not the truth) picks one;
the lambda grid's floor 0.1 equals the paper's alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from activetest.stats import _adaptive_kernels as ak
from activetest.stats._guard_kernels import GUARD_PARAMS, guard_aux0
from activetest.stats._validate import as_logprobs, as_vector, check_budget
from activetest.stats.estimators import (
    adaptive_lure,
    adaptive_lure_curve,
    adaptive_lure_se,
    adaptive_lure_terms,
)

__all__ = [
    "DESIGNS",
    "LAMBDAS",
    "RIDGES",
    "AdaptiveDesign",
    "AdaptiveEstimate",
    "AdaptiveSampler",
    "AdaptiveState",
    "DesignPlan",
    "DesignRuns",
    "LazyLossTable",
    "calibration_features",
    "graded_matrix",
    "loss_table",
    "mixture_score_control",
    "pe_features",
    "refit_schedule",
    "simulate_design",
]

#: Ridge (prior precision) grid; the Laplace evidence picks one at each refit.
RIDGES = (0.01, 0.1, 1.0, 10.0)
#: Ridge grid of the surrogate-only (PE) regressions, reaching near-infinite shrinkage:
#: there the surrogate's features often do not predict the target's loss at all, and the
#: evidence must be able to choose the null model (a constant control, a constant score).
PE_RIDGES = (0.1, 1.0, 10.0, 100.0, 1e3, 1e5)
#: Uniform-mixture weights for in-run lambda; 0.1 is the paper's floor alpha.
LAMBDAS = (0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
#: Lambda before the first in-run choice (no residual seen yet: halfway to the uniform).
LAMBDA_START = 0.5
#: First refit (1-based draw number) and growth of the geometric schedule.
SCHEDULE_FIRST = 10
SCHEDULE_GROWTH = 1.25
#: From this many pool items on, the calibrated designs keep their features and loss
#: tables lazy (:class:`LazyLossTable`; computed entry by entry from the model outputs
#: with the same float operations, so the same bits) instead of as ``(N, C, C + 1)``
#: and ``(N, C)`` arrays (48 + 16 bytes per item with two classes).
LAZY_MIN_ROWS = 1 << 18
#: In-run rules (module docstring, "The earned rule"): ``"original"`` (what every session
#: before ``design_rule`` ran, and this module's default, so that a design built without a
#: rule is the one it always was) and ``"earned"`` (what new sessions run).
RULES = ("original", "earned", "guard")
#: The rule of a design built without one.
DEFAULT_RULE = "original"
#: Kernel parameters of each rule: ``[on, smoothing pseudo-labels a, fallback margin,
#: lambda floor b]`` (see :mod:`._adaptive_kernels`).
RULE_PARAMS = {"original": (0.0, 0.0, 0.0, 0.0), "earned": (1.0, 4.0, 1.0, 0.0),
               # the out-of-sample guard (:mod:`._guard_kernels`; logistic designs only):
               # [.., .., .., .., on, z, window, least records, out-of-sample lambda]
               "guard": (0.0, 0.0, 0.0, 0.0, *GUARD_PARAMS)}
#: Design names accepted by :meth:`AdaptiveDesign.from_name`.
DESIGNS = ("calibrated", "calibrated-uniform", "calibrated-both", "calibrated-both-uniform",
           "fixed_mix", "pe")


def refit_schedule(n: int, first: int = SCHEDULE_FIRST, growth: float = SCHEDULE_GROWTH
                   ) -> np.ndarray:
    """Draw numbers (1-based) before which the design refits: ``floor(first * growth^j) <= n``.

    ``first=1, growth=1`` (any growth <= 1) refits before every draw (used by the
    exact tests). Duplicates are dropped.
    """
    if first < 1:
        raise ValueError(f"first must be >= 1, got {first}")
    if growth <= 1.0:
        return np.arange(first, n + 1, dtype=np.int64)
    out: list[int] = []
    x = float(first)
    while int(x) <= n:
        if not out or int(x) > out[-1]:
            out.append(int(x))
        x *= growth
    return np.array(out, dtype=np.int64)


def loss_table(target_logprobs: np.ndarray, loss: str = "log") -> np.ndarray:
    """``(N, C)`` loss of the target if the label were c: ``-log p_f(c|x)`` or ``1[c != pred]``."""
    t = as_logprobs(target_logprobs, "target_logprobs")
    if loss == "log":
        return -t
    if loss == "zero_one":
        return (np.arange(t.shape[1])[None, :] != t.argmax(axis=1)[:, None]).astype(np.float64)
    raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")


class LazyLossTable:
    """A loss table computed from the target's log-probs ``t`` on demand (the
    kernel's lazy ``(t, mode)``, :mod:`._adaptive_kernels`): ``mode`` 0 ``-t``
    (:func:`loss_table` ``"log"``), 1 ``1[c != argmax t_i]`` (``"zero_one"``), 2 both
    side by side (the two-metric design's table). Indexed like the array with
    ``[rows, columns]`` (integer arrays or integers)."""

    def __init__(self, t: np.ndarray, mode: int) -> None:
        self.t = t
        self.mode = int(mode)
        C = t.shape[1]
        self.shape = (t.shape[0], 2 * C if self.mode == ak.LAZY_BOTH else C)
        #: what the kernels take
        self.kernel = (t, self.mode)

    def __getitem__(self, key: tuple[Any, Any]) -> Any:
        rows, cols = key
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        r, c = np.broadcast_arrays(r, c)
        C = self.t.shape[1]
        if np.any((c < 0) | (c >= self.shape[1])):
            raise IndexError(f"column outside 0..{self.shape[1] - 1}")
        log = self.mode == ak.LAZY_LOG or self.mode == ak.LAZY_BOTH
        out = np.empty(r.shape, dtype=np.float64)
        first = c < C if log else np.zeros(r.shape, dtype=bool)
        out[first] = -self.t[r[first], c[first]]
        rest = ~first
        cc = c[rest] - (C if self.mode == ak.LAZY_BOTH else 0)
        out[rest] = (cc != np.argmax(self.t[r[rest]], axis=1)).astype(np.float64)
        return out if out.ndim else float(out)


def _lazy_features(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's lazy :func:`calibration_features`: ``(s, t, mean s, mean t)``."""
    s = np.ascontiguousarray(as_logprobs(surrogate_logprobs, "surrogate_logprobs"))
    t = np.ascontiguousarray(as_logprobs(target_logprobs, "target_logprobs", s.shape[1]))
    if s.shape != t.shape:
        raise ValueError(f"surrogate_logprobs {s.shape} and target_logprobs {t.shape} must have "
                         "the same (N, C) shape")
    return s, t, s.mean(axis=0), t.mean(axis=0)


def _sequential_sum(v: np.ndarray, block: int = 1 << 20) -> float:
    """``0.0 + v[0] + v[1] + ...`` in index order, as the kernels sum (numpy's ``sum`` is
    pairwise): a running sum in blocks, without compiling a kernel."""
    tot = 0.0
    for start in range(0, v.shape[0], block):
        part = np.array(v[start:start + block], dtype=np.float64)
        part[0] = tot + part[0]
        tot = float(np.cumsum(part)[-1])
    return tot


def _use_lazy(lazy: bool | None, n: int) -> bool:
    return n >= LAZY_MIN_ROWS if lazy is None else bool(lazy)


def calibration_features(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray
                         ) -> np.ndarray:
    """``(N, C, C + 1)`` label-free features ``[lpi - mean lpi, lpf - mean lpf, e_2..e_C]``."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    t = as_logprobs(target_logprobs, "target_logprobs", s.shape[1])
    if s.shape != t.shape:
        raise ValueError(f"surrogate_logprobs {s.shape} and target_logprobs {t.shape} must have "
                         "the same (N, C) shape")
    N, C = s.shape
    F = np.zeros((N, C, C + 1))
    F[:, :, 0] = s - s.mean(axis=0)
    F[:, :, 1] = t - t.mean(axis=0)
    for c in range(1, C):
        F[:, c, 1 + c] = 1.0
    return F


def mixture_score_control(surrogate_logprobs: np.ndarray, target_logprobs: np.ndarray,
                          loss: str = "log") -> tuple[np.ndarray, np.ndarray]:
    """Score ``sd_P(l)`` and control ``E_P[l]`` under the mixture ``P = (pi + p_f) / 2``."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    t = as_logprobs(target_logprobs, "target_logprobs", s.shape[1])
    P = 0.5 * (np.exp(s) + np.exp(t))
    lt = loss_table(t, loss)
    g = (P * lt).sum(axis=1)
    v = (P * lt**2).sum(axis=1) - g**2
    return np.sqrt(np.maximum(v, 0.0)), g


def _check_start(start: str) -> None:
    if start not in ("prior", "uniform"):
        raise ValueError(f"start must be 'prior' or 'uniform', got {start!r}")


def _uniform_start(rule: str, rule_params: Sequence[float] | None, lam: float | None) -> bool:
    """The earned rule draws uniformly with g = 0 before its first refit (in-run lambda)."""
    params = RULE_PARAMS.get(rule, (0.0,)) if rule_params is None else rule_params
    return lam is None and float(params[0]) > 0.0


#: Clip of the graded design's label-free prior probability before its log-odds.
PRIOR_CLIP = (0.01, 0.99)


def graded_matrix(features: np.ndarray, prior: np.ndarray | None = None) -> np.ndarray:
    """``(N, K)`` matrix ``[logit(clip(p0)), 1, standardised features]`` of the graded design.

    ``features``: ``(N, D)`` label-free per-item features (``D >= 0``); each column
    is centred and scaled to unit sd over the pool (constant columns are dropped).
    ``prior``: ``(N,)`` a label-free probability that the answer is wrong, or None
    (no offset column).
    """
    Z = np.asarray(features, dtype=np.float64)
    if Z.ndim == 1:
        Z = Z[:, None]
    if Z.ndim != 2 or Z.shape[0] < 1:
        raise ValueError(f"features must be (N, D), got shape {Z.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("features must be finite")
    n = Z.shape[0]
    sd = Z.std(axis=0)
    keep = sd > 0
    Z = (Z[:, keep] - Z[:, keep].mean(axis=0)) / sd[keep]
    cols = [np.ones((n, 1)), Z]
    if prior is not None:
        p = as_vector(prior, "prior", n)
        if np.any((p < 0) | (p > 1)):
            raise ValueError("prior must hold probabilities in [0, 1]")
        p = np.clip(p, *PRIOR_CLIP)
        cols.insert(0, np.log(p / (1 - p))[:, None])
    return np.ascontiguousarray(np.hstack(cols))


def pe_features(surrogate_logprobs: np.ndarray) -> np.ndarray:
    """``(N, C + 1)`` surrogate-only features ``[pi(2..C), H(pi), max pi]``, standardised."""
    s = as_logprobs(surrogate_logprobs, "surrogate_logprobs")
    p = np.exp(s)
    X = np.column_stack([p[:, 1:], -(p * s).sum(axis=1), p.max(axis=1)])
    X = X - X.mean(axis=0)
    sd = X.std(axis=0)
    return X / np.where(sd > 0, sd, 1.0)


@dataclass(frozen=True)
class DesignPlan:
    """What the design does at the next draw.

    Attributes:
        q: ``(N,)`` proposal over the pool (0 on drawn items, sums to 1).
        control: ``(N,)`` the control ``g`` (its values on drawn items are unused).
        control_rest: ``sum of g`` over the remaining items.
        lam: the uniform-mixture weight in force (1 while the design is uniform).
        refits: refits done so far.
        control2, control_rest2: the second metric's control and its sum over the
            remaining items (the two-metric design; None otherwise).
    """

    q: np.ndarray
    control: np.ndarray
    control_rest: float
    lam: float
    refits: int
    control2: np.ndarray | None = None
    control_rest2: float | None = None


class AdaptiveDesign:
    """A design over one pool: the model outputs, the loss and the fixed knobs.

    Construct with :meth:`calibrated`, :meth:`fixed`, :meth:`fixed_mix` or
    :meth:`pe` (or :meth:`from_name`). The object is immutable; runs keep their
    own state (:class:`AdaptiveSampler`, :func:`simulate_design`).
    """

    def __init__(self, kind: int, name: str, loss: str, n: int, *, F: np.ndarray,
                 ltab: np.ndarray | None, Phi: np.ndarray, w0: np.ndarray, s0: np.ndarray,
                 g0: np.ndarray, fitted0: int, lam0: float, lam: float | None,
                 schedule: np.ndarray, rhos: Sequence[float] = RIDGES,
                 lambdas: Sequence[float] = LAMBDAS, ktab: np.ndarray | None = None,
                 aux0: np.ndarray | None = None,
                 losses: tuple[str, ...] | None = None, rule: str = DEFAULT_RULE,
                 rule_params: Sequence[float] | None = None) -> None:
        self.kind = kind
        if rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
        #: the in-run rule (:data:`RULES`)
        self.rule = rule
        self._rule = np.array(RULE_PARAMS[rule] if rule_params is None else rule_params,
                              dtype=np.float64)
        self.name = name
        self.loss = loss
        #: the losses the design serves, each with its own control (first: ``loss``)
        self.losses = (loss,) if losses is None else tuple(losses)
        self.n = n
        #: the features: an array, or the kernel's lazy tuple (:class:`LazyLossTable`)
        self._F = F if isinstance(F, tuple) else np.ascontiguousarray(F, dtype=np.float64)
        self._fk = int(F[0].shape[1] + 1 if isinstance(F, tuple) else self._F.shape[2])
        # the kernel's table: per-class losses (logit), [lo, hi] of the loss (ridge)
        self.loss_table = ltab
        self._Phi = np.ascontiguousarray(Phi, dtype=np.float64)
        self._w0 = np.ascontiguousarray(w0, dtype=np.float64)
        self._s0 = np.ascontiguousarray(s0, dtype=np.float64)
        self._g0 = np.ascontiguousarray(g0, dtype=np.float64)
        self._fitted0 = int(fitted0)
        self._lam0 = float(lam0)
        self.lam = lam
        self.schedule = np.ascontiguousarray(schedule, dtype=np.int64)
        self.rhos = np.array(rhos, dtype=np.float64)
        self.lambdas = np.array(lambdas, dtype=np.float64)
        #: the two-metric table as Python indexes it (:meth:`losses_of`)
        self._ktab_table: Any = ktab
        if isinstance(ktab, LazyLossTable):
            self._ktab = ktab.kernel
        elif ktab is not None:
            self._ktab = np.ascontiguousarray(ktab, dtype=np.float64)
        elif kind == ak.KIND_RIDGE:
            hi = 1.0 if loss == "zero_one" else 1e300
            self._ktab = np.array([[0.0, hi]])
        else:
            self._ktab = (np.zeros((1, 2)) if ltab is None else ltab.kernel
                          if isinstance(ltab, LazyLossTable)
                          else np.ascontiguousarray(ltab, dtype=np.float64))
        if self._rule.shape[0] > 4 and self._rule[4] > 0:  # the out-of-sample guard
            if kind != ak.KIND_GRADED:
                raise ValueError("the out-of-sample guard (rule 'guard') serves the logistic "
                                 "designs (graded, features) only")
            aux0 = guard_aux0(n, s0, g0, lam0)
        self._aux0 = (np.zeros((0, 0)) if aux0 is None
                      else np.ascontiguousarray(aux0, dtype=np.float64))
        if lam is not None and not 0.0 < lam <= 1.0:
            raise ValueError(f"lam must be in (0, 1] (or None for in-run), got {lam!r}")
        if not np.all((self.lambdas > 0) & (self.lambdas <= 1)):
            raise ValueError("lambdas must lie in (0, 1]")

    # ----------------------------------------------------------------- constructors
    @classmethod
    def calibrated(cls, target_logprobs: np.ndarray, surrogate_logprobs: np.ndarray, *,
                   loss: str = "log", lam: float | None = None,
                   schedule: np.ndarray | None = None, start: str = "prior",
                   rule: str = DEFAULT_RULE,
                   rule_params: Sequence[float] | None = None,
                   lazy: bool | None = None) -> AdaptiveDesign:
        """The calibrated-residual design (module docstring); ``lam=None``: in-run lambda.

        ``start``: before the first refit, ``"prior"`` draws from the prior model's
        score and control with lambda = 0.5 (the default), ``"uniform"`` uniformly
        with g = 0 (ADAPTIVE.md's statement of the design). ``lazy``: keep the
        features and loss table lazy (None: from :data:`LAZY_MIN_ROWS` items on);
        the same draws and numbers either way, to the last bit.
        """
        F: Any
        ltab: Any
        if _use_lazy(lazy, np.shape(surrogate_logprobs)[0]):
            F = _lazy_features(surrogate_logprobs, target_logprobs)
            n, C = F[0].shape
            if loss not in ("log", "zero_one"):
                raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")
            ltab = LazyLossTable(F[1], ak.LAZY_LOG if loss == "log" else ak.LAZY_ZERO_ONE)
        else:
            F = calibration_features(surrogate_logprobs, target_logprobs)
            n, C = F.shape[0], F.shape[1]
            ltab = loss_table(target_logprobs, loss)
        w0 = np.zeros(C + 1)
        w0[0] = 1.0
        sched = refit_schedule(n) if schedule is None else np.asarray(schedule, dtype=np.int64)
        s0, g0 = np.zeros(n), np.zeros(n)
        _check_start(start)
        if _uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            ak.logit_predict(F, ltab.kernel if isinstance(ltab, LazyLossTable) else ltab, w0,
                             s0, g0)
            lam0 = LAMBDA_START if lam is None else float(lam)
        elif start == "uniform":
            lam0 = 1.0
        else:
            raise ValueError(f"start must be 'prior' or 'uniform', got {start!r}")
        return cls(ak.KIND_LOGIT, "calibrated" if start == "prior" else "calibrated-uniform",
                   loss, n, F=F, ltab=ltab, Phi=np.zeros((n, 1)), w0=w0, s0=s0, g0=g0,
                   fitted0=int(lam0 < 1.0), lam0=lam0, lam=lam, schedule=sched, rule=rule,
                   rule_params=rule_params)

    @classmethod
    def calibrated_both(cls, target_logprobs: np.ndarray, surrogate_logprobs: np.ndarray, *,
                        lam: float | None = None, schedule: np.ndarray | None = None,
                        start: str = "prior", rule: str = DEFAULT_RULE,
                        rule_params: Sequence[float] | None = None,
                        lazy: bool | None = None) -> AdaptiveDesign:
        """The calibrated design serving log loss AND the error rate (module docstring,
        ``calibrated-both``): one proposal, each metric's own control.

        The draws record the log loss's control (``control``, ``control_rest``) and the
        error rate's (``control2``, ``control_rest2``); :class:`AdaptiveSampler` observes
        labels (the losses come from the target's predictions).
        """
        F: Any
        ltab: Any
        ktab: Any
        if _use_lazy(lazy, np.shape(surrogate_logprobs)[0]):
            F = _lazy_features(surrogate_logprobs, target_logprobs)
            n, C = F[0].shape
            ltab = LazyLossTable(F[1], ak.LAZY_LOG)
            ktab = LazyLossTable(F[1], ak.LAZY_BOTH)
        else:
            F = calibration_features(surrogate_logprobs, target_logprobs)
            n, C = F.shape[0], F.shape[1]
            ltab = loss_table(target_logprobs, "log")
            ktab = np.hstack([ltab, loss_table(target_logprobs, "zero_one")])
        w0 = np.zeros(C + 1)
        w0[0] = 1.0
        sched = refit_schedule(n) if schedule is None else np.asarray(schedule, dtype=np.int64)
        s0, g0, aux0 = np.zeros(n), np.zeros(n), np.zeros((3, n))
        _check_start(start)
        if _uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            ak.both_predict(F, ktab.kernel if isinstance(ktab, LazyLossTable) else ktab, w0,
                            s0, g0, aux0)
            lam0 = LAMBDA_START if lam is None else float(lam)
        elif start == "uniform":
            lam0 = 1.0
        else:
            raise ValueError(f"start must be 'prior' or 'uniform', got {start!r}")
        return cls(ak.KIND_BOTH, "calibrated-both" if start == "prior"
                   else "calibrated-both-uniform", "log", n, F=F, ltab=ltab,
                   Phi=np.zeros((n, 1)), w0=w0, s0=s0, g0=g0, fitted0=int(lam0 < 1.0),
                   lam0=lam0, lam=lam, schedule=sched, ktab=ktab, aux0=aux0,
                   losses=("log", "zero_one"), rule=rule, rule_params=rule_params)

    @classmethod
    def fixed(cls, scores: np.ndarray, control: np.ndarray | None = None, *,
              lam: float | None = 0.1, target_logprobs: np.ndarray | None = None,
              loss: str = "log", schedule: np.ndarray | None = None,
              name: str = "fixed", rule: str = DEFAULT_RULE,
              rule_params: Sequence[float] | None = None) -> AdaptiveDesign:
        """Fixed score and control, with a fixed lambda or (``lam=None``) in-run lambda.

        With in-run lambda, lambda = 0.5 before the first choice (draw 10): no
        residual has been seen yet that could speak for or against the score. ``target_logprobs``
        (optional) lets :class:`AdaptiveSampler` turn labels into losses.

        The proposal only needs ``scores`` up to a factor, but the variance the design
        predicts (:attr:`AdaptiveSampler.model_var`, a floor for the intervals) reads
        them as each loss's sd and ``control`` as its mean: pass them in loss units.
        """
        s = as_vector(scores, "scores")
        if np.any(s < 0):
            raise ValueError("scores must be >= 0")
        n = s.shape[0]
        g = np.zeros(n) if control is None else as_vector(control, "control", n)
        ltab = None if target_logprobs is None else loss_table(target_logprobs, loss)
        if ltab is not None and ltab.shape[0] != n:
            raise ValueError(f"target_logprobs has {ltab.shape[0]} rows, scores has {n}")
        if lam is None:
            sched = refit_schedule(n) if schedule is None else np.asarray(schedule,
                                                                          dtype=np.int64)
            lam0 = LAMBDA_START
        else:
            sched, lam0 = np.zeros(0, dtype=np.int64), float(lam)
        return cls(ak.KIND_FIXED, name, loss, n, F=np.zeros((n, 1, 1)), ltab=ltab,
                   Phi=np.zeros((n, 1)), w0=np.zeros(2), s0=s, g0=g, fitted0=1, lam0=lam0,
                   lam=lam, schedule=sched, rule=rule, rule_params=rule_params)

    @classmethod
    def fixed_mix(cls, target_logprobs: np.ndarray, surrogate_logprobs: np.ndarray, *,
                  loss: str = "log", lam: float | None = None, rule: str = DEFAULT_RULE,
                  rule_params: Sequence[float] | None = None) -> AdaptiveDesign:
        """The fixed-score fallback: score ``sd_P(l)``, control ``E_P[l]``, ``P = (pi + p_f)/2``.

        In-run lambda by default (``lam=None``): measured on the 40 paper settings it
        beats the fixed lambda = 0.1 (median relative error 0.89 against about 0.91).
        """
        s, g = mixture_score_control(surrogate_logprobs, target_logprobs, loss)
        return cls.fixed(s, g, lam=lam, target_logprobs=target_logprobs, loss=loss,
                         name="fixed_mix", rule=rule, rule_params=rule_params)

    @classmethod
    def pe(cls, surrogate_logprobs: np.ndarray, *, loss: str = "log", lam: float | None = None,
           schedule: np.ndarray | None = None, rule: str = DEFAULT_RULE,
           rule_params: Sequence[float] | None = None) -> AdaptiveDesign:
        """The surrogate-only design (no target predictions on the pool; losses observed)."""
        if loss not in ("log", "zero_one"):
            raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")
        Phi = pe_features(surrogate_logprobs)
        n = Phi.shape[0]
        sched = refit_schedule(n) if schedule is None else np.asarray(schedule, dtype=np.int64)
        return cls(ak.KIND_RIDGE, "pe", loss, n, F=np.zeros((n, 1, 1)), ltab=None, Phi=Phi,
                   w0=np.zeros(Phi.shape[1] + 1), s0=np.zeros(n), g0=np.zeros(n), fitted0=0,
                   lam0=1.0, lam=lam, schedule=sched, rhos=PE_RIDGES, rule=rule,
                   rule_params=rule_params)

    @classmethod
    def graded(cls, features: np.ndarray, *, prior: np.ndarray | None = None,
               lam: float | None = None, schedule: np.ndarray | None = None,
               start: str = "auto", rule: str = DEFAULT_RULE,
               rule_params: Sequence[float] | None = None) -> AdaptiveDesign:
        """The graded design (module docstring) for losses ``1 - score`` in [0, 1].

        Args:
            features: ``(N, D)`` label-free features of the pool's answers
                (standardised here; see :func:`graded_matrix` and
                :func:`activetest.stats.graded.graded_design` for the usual ones).
            prior: ``(N,)`` a label-free probability that each answer is wrong, the
                prior mean of the model (weight 1 on its log-odds); None: none.
            lam: fixed uniform-mixture weight, or None for in-run lambda.
            start: before the first refit, ``"prior"`` draws from the prior model
                (lambda = 0.5), ``"uniform"`` uniformly with g = 0; ``"auto"``:
                prior when ``prior`` is given.

        Runs observe *losses* (``AdaptiveSampler.observe(losses=1 - scores)``).
        """
        return cls.logistic(graded_matrix(features, prior), offset=prior is not None,
                            name="graded", lam=lam, schedule=schedule, start=start, rule=rule,
                            rule_params=rule_params)

    @classmethod
    def logistic(cls, X: np.ndarray, *, offset: bool, name: str, lam: float | None = None,
                 schedule: np.ndarray | None = None, start: str = "auto",
                 rule: str = DEFAULT_RULE, rule_params: Sequence[float] | None = None
                 ) -> AdaptiveDesign:
        """The binary-logistic design of losses in [0, 1] on a model matrix ``X``: the one
        constructor (and start logic) of :meth:`graded` and
        :func:`activetest.stats.feature_design.feature_design`, so the two cannot drift.

        Args:
            X: ``(N, K)`` label-free model matrix; with ``offset`` its first column is the
                log-odds of a label-free prior P(wrong) (prior weight 1), else ``w0 = 0``.
            name: the design's name with a prior start (``"<name>-uniform"`` otherwise).
            lam: fixed uniform-mixture weight, or None for in-run lambda.
            schedule: refit draw numbers (default :func:`refit_schedule`).
            start: before the first refit, ``"prior"`` draws from the prior model
                (lambda = 0.5), ``"uniform"`` uniformly with g = 0; ``"auto"``: prior when
                there is an offset. A rule that starts uniformly (the earned rule with
                in-run lambda, :func:`_uniform_start`) draws uniformly with g = 0 before
                its first refit whatever ``start`` says.
            rule, rule_params: the in-run rule and its kernel parameters.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        n, K = X.shape
        w0 = np.zeros(K)
        if offset:
            w0[0] = 1.0
        if start == "auto":
            start = "prior" if offset else "uniform"
        sched = refit_schedule(n) if schedule is None else np.asarray(schedule, dtype=np.int64)
        s0, g0 = np.zeros(n), np.zeros(n)
        if start in ("prior", "uniform") and _uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            ak.graded_predict(X, w0, s0, g0)
            lam0 = LAMBDA_START if lam is None else float(lam)
        elif start == "uniform":
            lam0 = 1.0
        else:
            raise ValueError(f"start must be 'auto', 'prior' or 'uniform', got {start!r}")
        return cls(ak.KIND_GRADED, name if start == "prior" else f"{name}-uniform", "graded",
                   n, F=np.zeros((n, 1, 1)), ltab=None, Phi=X, w0=w0, s0=s0, g0=g0,
                   fitted0=int(lam0 < 1.0), lam0=lam0, lam=lam, schedule=sched, rule=rule,
                   rule_params=rule_params)

    @classmethod
    def from_name(cls, name: str, *, surrogate_logprobs: np.ndarray,
                  target_logprobs: np.ndarray | None = None, loss: str = "log",
                  lam: float | None = None, rule: str = DEFAULT_RULE,
                  rule_params: Sequence[float] | None = None,
                  lazy: bool | None = None) -> AdaptiveDesign:
        """A design of :data:`DESIGNS` by name (``lam=None``: the design's default;
        ``loss`` is ignored by the two-metric ``calibrated-both``; ``rule``: the
        in-run rule, :data:`RULES`; ``lazy``: the calibrated designs' lazy tables,
        see :meth:`calibrated`)."""
        kw: dict[str, Any] = {"rule": rule, "rule_params": rule_params}
        lz: dict[str, Any] = {"lazy": lazy}
        if name in ("calibrated-both", "calibrated-both-uniform"):
            if target_logprobs is None:
                raise ValueError(f"design {name!r} needs target_logprobs on the pool")
            return cls.calibrated_both(target_logprobs, surrogate_logprobs, lam=lam,
                                       start="prior" if name == "calibrated-both"
                                       else "uniform", **kw, **lz)
        if name in ("calibrated", "calibrated-uniform"):
            if target_logprobs is None:
                raise ValueError(f"design {name!r} needs target_logprobs on the pool "
                                 "(use 'pe' without them)")
            return cls.calibrated(target_logprobs, surrogate_logprobs, loss=loss, lam=lam,
                                  start="prior" if name == "calibrated" else "uniform", **kw,
                                  **lz)
        if name == "fixed_mix":
            if target_logprobs is None:
                raise ValueError("design 'fixed_mix' needs target_logprobs on the pool")
            return cls.fixed_mix(target_logprobs, surrogate_logprobs, loss=loss, lam=lam, **kw)
        if name == "pe":
            return cls.pe(surrogate_logprobs, loss=loss, lam=lam, **kw)
        raise ValueError(f"unknown design {name!r}; expected one of {', '.join(DESIGNS)}")

    # -------------------------------------------------------------------- helpers
    @property
    def needs_losses(self) -> bool:
        """True when labels alone cannot give the loss (no target predictions on the pool)."""
        return self.loss_table is None

    def spec(self) -> dict[str, Any]:
        """JSON-able description (checked when a state is resumed)."""
        out = {"name": self.name, "loss": self.loss, "n": self.n, "lam": self.lam,
               "schedule": self.schedule.tolist()}
        if len(self.losses) > 1:
            out["losses"] = list(self.losses)
        if self.rule != "original":  # the original rule's spec is what it always was
            out["rule"] = self.rule
        return out

    def losses_of(self, indices: np.ndarray, labels: np.ndarray, loss: str | None = None
                  ) -> np.ndarray:
        """Losses of the items ``indices`` with the given labels (from the loss table);
        ``loss``: one of :attr:`losses` (default the first)."""
        if self.loss_table is None:
            raise ValueError(f"design {self.name!r} has no target predictions on the pool: "
                             "give the observed losses")
        idx = np.asarray(indices, dtype=np.int64)
        ys = np.asarray(labels, dtype=np.int64)
        if loss is None or loss == self.losses[0]:
            return self.loss_table[idx, ys]
        if loss not in self.losses:
            raise ValueError(f"design {self.name!r} serves {', '.join(self.losses)}, not "
                             f"{loss!r}")
        C = self.loss_table.shape[1]
        table = self._ktab if self._ktab_table is None else self._ktab_table
        return table[idx, C * self.losses.index(loss) + ys]

    def _new_state(self, M: int) -> dict[str, np.ndarray]:
        nr = self.rhos.shape[0]
        width = max(self._fk, self._Phi.shape[1] + 1)
        st = {"ist": np.zeros(4, dtype=np.int64), "fst": np.zeros(1),
              "W": np.empty((max(nr, 2), width)), "s": np.empty(self.n), "g": np.empty(self.n),
              "rem": np.empty(self.n, dtype=np.bool_), "hidx": np.zeros(M, dtype=np.int64),
              "hy": np.zeros(M, dtype=np.int64), "hL": np.zeros(M), "hq": np.zeros(M),
              "hg": np.zeros(M), "hG": np.zeros(M), "hlam": np.zeros(M),
              "hV": np.zeros(M), "absres": np.zeros(M),
              "aux": np.empty(self._aux0.shape),
              "haux": np.full((self._aux0.shape[0], M), np.nan)}
        # the state before draw 1, as the compiled ``ak.reset`` writes it (the same
        # values: copies), by numpy: a command that only loads a checkpoint or replays
        # loads no kernel for it
        st["ist"][3] = self._fitted0
        st["fst"][0] = self._lam0
        W = st["W"]
        W[:] = 0.0
        n0 = min(int(self._w0.shape[0]), W.shape[1])
        W[:, :n0] = self._w0[:n0]
        st["s"][:] = self._s0
        st["g"][:] = self._g0
        st["rem"][:] = True
        st["aux"][...] = self._aux0
        return st

    def _step(self, st: dict[str, np.ndarray], m: int, k: int, u: float, forced: int) -> int:
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        return int(ak.step(self.kind, self._F, self._ktab, self._Phi, self._w0, self.rhos,
                          self.lambdas, lam_fixed, self._rule, self.schedule, st["ist"],
                          st["fst"], st["W"], st["s"], st["g"], st["rem"], st["hidx"],
                          st["hy"], st["hL"], st["hq"], st["hg"], st["hG"], st["hlam"],
                          st["hV"], m, k, u, forced, st["absres"], st["aux"], st["haux"]))

    def _finish(self, st: dict[str, np.ndarray], m: int, mix: tuple[float, float, float],
                forced: int, u: float = 0.0) -> int:
        """:meth:`_step` after :meth:`_mixture` gave ``mix`` (its refit done): the same
        draw (by ``u``, or the ``forced`` item) and record, without summing the pool
        again (``_step`` is ``_mixture`` then ``_finish``: the same compiled code)."""
        a, b, G = mix
        return int(ak.finish(self.kind, st["ist"], st["fst"], st["s"], st["g"], st["rem"],
                             st["hidx"], st["hq"], st["hg"], st["hG"], st["hlam"], st["hV"], m,
                             u, forced, st["aux"], st["haux"], a, b, G))

    @property
    def redoable(self) -> bool:
        """Whether a state's per-item arrays are a function of its last refit alone
        (:meth:`AdaptiveSampler.redo_last_refit`): every design but the out-of-sample
        guard's, whose ``aux`` also records each draw."""
        return not (self._rule.shape[0] > 4 and self._rule[4] > 0)

    def _phi(self, st: dict[str, np.ndarray]) -> np.ndarray:
        """The per-item design matrix a refit of ``st`` uses (a subclass may keep it in
        the state)."""
        return self._Phi

    def _refit_due(self, st: dict[str, np.ndarray], k: int) -> bool:
        """Whether the next draw, knowing ``k`` labels, starts with a refit (the check
        of :func:`activetest.stats._adaptive_kernels.prepare`)."""
        i = int(st["ist"][0])
        return i < self.schedule.shape[0] and int(self.schedule[i]) <= k + 1

    def _redo_refit(self, st: dict[str, np.ndarray], w_pre: np.ndarray, rem: np.ndarray,
                    k: int) -> None:
        """Recompute the per-item arrays ``s``, ``g``, ``aux`` of ``st`` (a state after
        a refit that knew ``k`` labels, its per-item arrays the design's start) by
        running that refit again: from the weights before it (``w_pre``) with the
        remaining-items mask it saw (``rem``). The same compiled refit on the same
        inputs: the same arrays to the last bit. Checked: the refit must give the
        state's weights, lambda, chosen ridge and refit count exactly.

        Raises:
            ValueError: the refit does not give the state's (not the state of this
                design's refits: the caller replays instead).
        """
        ist = st["ist"].copy()
        ist[0] = 0  # the schedule from its start: its points up to k + 1 fire the refit
        ist[1] -= 1
        fst = st["fst"].copy()
        W = np.array(w_pre, dtype=np.float64, copy=True)
        if W.shape != st["W"].shape or ist[1] < 0:
            raise ValueError("the weights before the last refit do not fit the design")
        absres = st["absres"].copy()
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        # the refit through ``prepare``, the kernel every draw loads anyway (not a kernel
        # of its own to load): with the draw's m = N - |rem| and k it refits as it did
        ak.prepare(self.kind, self._F, self._ktab, self._phi(st), self._w0, self.rhos,
                   self.lambdas, lam_fixed, self._rule, self.schedule, ist, fst, W, st["s"],
                   st["g"], rem, st["hidx"], st["hy"], st["hL"], st["hq"],
                   self.n - int(rem.sum()), k, absres, st["aux"])
        same = (np.array_equal(ist, st["ist"]) and np.array_equal(fst, st["fst"])
                and np.array_equal(W, st["W"]) and np.array_equal(absres[:k], st["absres"][:k]))
        if not same:
            raise ValueError("the last refit, run again, does not give the stored state")

    def _mixture(self, st: dict[str, np.ndarray], m: int, k: int) -> tuple[float, float, float]:
        """Before draw m knowing k labels (refit if due): ``(a, b, G)``, the proposal
        being ``q_i = a s_i + b`` on the remaining items (``st["s"]``, ``st["rem"]``)."""
        lam_fixed = -1.0 if self.lam is None else float(self.lam)
        return ak.prepare(self.kind, self._F, self._ktab, self._Phi, self._w0, self.rhos,
                          self.lambdas, lam_fixed, self._rule, self.schedule, st["ist"],
                          st["fst"], st["W"], st["s"], st["g"], st["rem"], st["hidx"],
                          st["hy"], st["hL"], st["hq"], m, k, st["absres"], st["aux"])

    def _prepare(self, st: dict[str, np.ndarray], m: int, k: int) -> DesignPlan:
        a, b, G = self._mixture(st, m, k)
        q = np.where(st["rem"], a * st["s"] + b, 0.0)
        g2 = G2 = None
        if self.kind == ak.KIND_BOTH:
            g2 = st["aux"][1].copy()
            G2 = float(ak.rest_sum(st["aux"][1], st["rem"]))
        return DesignPlan(q, st["g"].copy(), float(G), float(st["fst"][0]) if a > 0 else 1.0,
                          int(st["ist"][1]), g2, G2)

    def first_proposal(self) -> np.ndarray:
        """``plan([]).q``, the proposal of the first draw, without a run's state arrays
        (the same numbers to the last bit: the sums and the mixture of :func:`prepare`
        over the whole pool)."""
        if self.schedule.shape[0] and self.schedule[0] <= 1:  # a refit before draw 1
            return self.plan([]).q
        n = self.n
        S = _sequential_sum(self._s0)
        lam = self._lam0
        if S <= 0.0 or n == 1:
            a, b = 0.0, 1.0 / n
        else:
            a, b = (1.0 - lam) / S, lam / n
        q = np.multiply(self._s0, a)
        q += b
        return q

    def plan(self, acquired: Sequence[int], *, labels: Sequence[int] | None = None,
             losses: Sequence[float] | None = None,
             n_known: Sequence[int] | None = None) -> DesignPlan:
        """The proposal and control for the next draw, as a pure function of the history.

        Args:
            acquired: items drawn so far, in draw order.
            labels: labels of the first ``len(labels)`` drawn items (a prefix).
            losses: their losses (required when the design has no loss table).
            n_known: labels known when each draw was made (default: all earlier
                ones, i.e. sequential ``n_known[m] = m``); the next draw knows
                every label given.
        """
        acq = [int(i) for i in acquired]
        M = len(acq)
        if self.n <= M:
            raise ValueError("every item has been drawn")
        ys = [] if labels is None else [int(y) for y in labels]
        if losses is None:
            Ls = self.losses_of(np.array(acq[:len(ys)], dtype=np.int64),
                                np.array(ys, dtype=np.int64)).tolist() if ys else []
        else:
            Ls = [float(x) for x in losses]
        nk_final = max(len(ys), len(Ls))
        if len(ys) > M or len(Ls) > M:
            raise ValueError("more labels than drawn items")
        known = list(range(M)) if n_known is None else [int(x) for x in n_known]
        st = self._new_state(M + 1)
        if ys:
            st["hy"][: len(ys)] = ys
        st["hL"][: len(Ls)] = Ls
        for m, i in enumerate(acq):
            if known[m] > min(m, nk_final):
                raise ValueError(f"n_known[{m}] = {known[m]} exceeds the labels available")
            self._step(st, m, known[m], 0.0, i)
        return self._prepare(st, M, nk_final)


@dataclass
class AdaptiveState:
    """Everything needed to resume one run (JSON-serialisable).

    Attributes:
        design: :meth:`AdaptiveDesign.spec` of the design (checked on resume).
        seed: the seed the run started from.
        rng_state: ``numpy.random.PCG64`` state after the last draw.
        acquired, q, control, control_rest, lam: per draw: the item, ``q_m(i_m)``,
            ``g^(m)_{i_m}``, ``G_m = sum_{S_m} g^(m)`` and lambda in force.
        n_known: labels known when each draw was made.
        labels, losses: observed so far, in draw order (a prefix of ``acquired``).
        refits: refits done before each draw.
    """

    design: dict[str, Any]
    seed: int | None
    rng_state: dict[str, Any]
    acquired: list[int] = field(default_factory=list)
    q: list[float] = field(default_factory=list)
    control: list[float] = field(default_factory=list)
    control_rest: list[float] = field(default_factory=list)
    lam: list[float] = field(default_factory=list)
    n_known: list[int] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    refits: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class AdaptiveEstimate:
    """The estimate from the labelled draws of one run.

    Attributes:
        estimate: ``R_K = sum_m c_m theta_m`` over the K labelled draws.
        terms: ``(K,)`` ``t_m = K c_m theta_m`` (mean = estimate), for the bootstrap.
        se: ``sqrt(sum c_m^2 (theta_m - R_K)^2)`` (see :func:`adaptive_lure_se`).
        n_labels: K.
    """

    estimate: float
    terms: np.ndarray
    se: float
    n_labels: int


class AdaptiveSampler:
    """One real run of an adaptive design: draw, observe, persist, resume.

    Each draw consumes exactly one uniform from a PCG64 generator, and the design
    is a deterministic function of the history, so a sampler rebuilt with
    :meth:`from_state` continues with the same future draws; and
    ``AdaptiveSampler(design, seed=s)`` drawing sequentially (observing each label
    before the next draw) makes the draws of ``simulate_design(design, ...,
    n_runs=1, random_state=s)``.

    Example::

        design = AdaptiveDesign.calibrated(target_lp, surrogate_lp, loss="log")
        sampler = AdaptiveSampler(design, seed=0)
        (i,), _ = sampler.draw()       # or draw(20): a batch, refitted only between batches
        sampler.observe([label])        # labels in draw order
        state = sampler.state()         # persist (JSON via dataclasses.asdict)
        sampler = AdaptiveSampler.from_state(design, state)
        est = sampler.estimate()        # estimate, terms, se
    """

    def __init__(self, design: AdaptiveDesign, *, seed: int | None = None) -> None:
        self.design = design
        self.seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        self._cap = 16
        self._st = design._new_state(self._cap)
        self.acquired: list[int] = []
        self.q: list[float] = []
        self.control: list[float] = []
        self.control_rest: list[float] = []
        self.lam: list[float] = []
        self.n_known: list[int] = []
        self.labels: list[int] = []
        self.losses: list[float] = []
        self.refits: list[int] = []
        #: per draw, ``N^2 Var(theta_m | past)`` as the design's model predicts it
        #: (NaN before a learnt design's first fit); see :func:`activetest.stats.
        #: intervals.fixed_interval_curve` (``model_var=``). Recomputed on replay.
        self.model_var: list[float] = []
        #: the two-metric design only (else empty): the second metric's control at
        #: the drawn item, its sum over the remaining items and its model variance.
        self.control2: list[float] = []
        self.control_rest2: list[float] = []
        self.model_var2: list[float] = []
        #: None, or a list to which each draw appends its mixture ``(a, b, G)`` (the
        #: proposal ``q_i = a s_i + b`` on the remaining items, ``G = sum_rem g``): set
        #: by a caller that reuses them (``select`` advancing the blind spot's state,
        #: :class:`activetest.stats.blindspot.RunDraws`); not part of the state.
        self.mixtures: list[tuple[float, float, float]] | None = None
        #: the design's weights before its last refit (None before the first): what
        #: :meth:`redo_last_refit` starts from; not part of the replayed state
        self.w_pre: np.ndarray | None = None
        #: set True by a caller that wants the per-item arrays as they were before
        #: this sampler's first refit (``select`` advancing the blind spot's state,
        #: whose stored state may share them): :attr:`arrays_before_refit` is then
        #: that copy (``{"ist", "s", "g", "aux"}``, None while no refit ran); not part
        #: of the state
        self.keep_arrays_before_refit = False
        self.arrays_before_refit: dict[str, np.ndarray] | None = None
        #: the weights of a :meth:`defer_last_refit` not yet settled (None: the
        #: per-item arrays are the state's own)
        self._redo_pending: np.ndarray | None = None

    @property
    def n_remaining(self) -> int:
        """Items not yet drawn."""
        return self.design.n - len(self.acquired)

    @property
    def n_pending(self) -> int:
        """Drawn items whose label has not been observed yet."""
        return len(self.acquired) - len(self.losses)

    def _grow(self, need: int) -> None:
        if need <= self._cap:
            return
        cap = max(need, 2 * self._cap)
        for key in ("hidx", "hy", "hL", "hq", "hg", "hG", "hlam", "hV", "absres"):
            old = self._st[key]
            new = np.zeros(cap, dtype=old.dtype)
            new[: old.shape[0]] = old
            self._st[key] = new
        old = self._st["haux"]
        new2 = np.full((old.shape[0], cap), np.nan)
        new2[:, : old.shape[1]] = old
        self._st["haux"] = new2
        self._cap = cap

    def _advance(self, u: float, forced: int = -1) -> int:
        self._check_settled()
        m = len(self.acquired)
        k = len(self.losses)
        self._grow(m + 1)
        if self.design._refit_due(self._st, k):
            self.w_pre = self._st["W"].copy()
            if self.keep_arrays_before_refit and self.arrays_before_refit is None:
                self.arrays_before_refit = {name: self._st[name].copy()
                                            for name in ("ist", "s", "g", "aux")}
        if self.mixtures is None:
            i = self.design._step(self._st, m, k, u, forced)
        else:  # the same compiled steps, the mixture kept
            mix = self.design._mixture(self._st, m, k)
            i = self.design._finish(self._st, m, mix, forced, u)
            self.mixtures.append((float(mix[0]), float(mix[1]), float(mix[2])))
        self.acquired.append(i)
        self.q.append(float(self._st["hq"][m]))
        self.control.append(float(self._st["hg"][m]))
        self.control_rest.append(float(self._st["hG"][m]))
        self.lam.append(float(self._st["hlam"][m]))
        self.model_var.append(float(self._st["hV"][m]))
        if self.design.kind == ak.KIND_BOTH:
            self.control2.append(float(self._st["haux"][0, m]))
            self.control_rest2.append(float(self._st["haux"][1, m]))
            self.model_var2.append(float(self._st["haux"][2, m]))
        self.n_known.append(k)
        self.refits.append(int(self._st["ist"][1]))
        return i

    def draw(self, k: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Draw the next ``k`` items (sequentially, without replacement); ``(indices, q)``.

        The design uses the labels observed so far; with ``k > 1`` (a batch) it is
        not refitted within the batch.
        """
        if isinstance(k, bool) or int(k) != k or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        if k > self.n_remaining:
            raise ValueError(f"cannot draw {k} items: only {self.n_remaining} remain")
        start = len(self.acquired)
        for _ in range(int(k)):
            self._advance(float(self._rng.random()))
        return (np.array(self.acquired[start:], dtype=np.int64),
                np.array(self.q[start:], dtype=np.float64))

    def observe(self, labels: Sequence[int] | None = None,
                losses: Sequence[float] | None = None) -> None:
        """Record the labels (and/or losses) of the next pending drawn items, in draw order."""
        if labels is None and losses is None:
            raise ValueError("give labels, losses or both")
        n_new = len(labels) if labels is not None else len(losses)  # type: ignore[arg-type]
        if labels is not None and losses is not None and len(losses) != len(labels):
            raise ValueError("labels and losses must have the same length")
        if n_new > self.n_pending:
            raise ValueError(f"{n_new} labels given but only {self.n_pending} drawn items "
                             "await one")
        start = len(self.losses)
        idx = np.array(self.acquired[start:start + n_new], dtype=np.int64)
        if losses is None:
            if self.design.needs_losses:
                raise ValueError(f"design {self.design.name!r} has no loss table: give the "
                                 "observed losses")
            ys = np.asarray(labels, dtype=np.int64)
            C = self.design.loss_table.shape[1] if self.design.loss_table is not None else 0
            if np.any((ys < 0) | (ys >= max(C, 1))):
                raise ValueError(f"labels must be class indices in 0..{C - 1}")
            Ls = self.design.losses_of(idx, ys)
        else:
            Ls = as_vector(losses, "losses", n_new)
        if self.design.kind in (ak.KIND_LOGIT, ak.KIND_BOTH) and labels is None:
            raise ValueError("the calibrated design learns from the labels: give labels")
        ys_list = ([int(y) for y in labels] if labels is not None else [-1] * n_new)
        for j in range(n_new):
            self._st["hy"][start + j] = max(ys_list[j], 0)
            self._st["hL"][start + j] = float(Ls[j])
        self.labels.extend(ys_list)
        self.losses.extend(float(x) for x in Ls)

    def redo_last_refit(self, w_pre: np.ndarray) -> None:
        """Recompute the per-item arrays (``s``, ``g``, ``aux``) of a state whose
        history, small arrays and RNG were restored but whose per-item arrays are still
        the design's start (a checkpoint that did not store them): the last refit run
        again from the weights before it (``w_pre``, :attr:`w_pre`), the labels it knew
        and the items that remained then. Nothing to do before the first refit.

        Raises:
            ValueError: the refit run again does not give the restored state.
        """
        st = self._st
        refits = int(st["ist"][1])
        if refits == 0:
            return
        if refits not in self.refits:
            raise ValueError("the last refit is not in the draws' history")
        m = self.refits.index(refits)  # the draw before which it ran
        rem = np.ones(self.design.n, dtype=np.bool_)
        rem[np.asarray(self.acquired[:m], dtype=np.int64)] = False
        self.design._redo_refit(st, w_pre, rem, int(self.n_known[m]))
        self.w_pre = np.array(w_pre, dtype=np.float64, copy=True)

    def defer_last_refit(self, w_pre: np.ndarray) -> None:
        """:meth:`redo_last_refit` postponed to :meth:`settle_last_refit`, which skips
        it where the next draw starts with a refit: that refit replaces every per-item
        array (``s``, ``g``, ``aux``) before any is read, so the last one's need not be
        computed (a pass over the pool, ~0.03 CPU-s at 1e6 items, saved in every
        ``select`` that refits at its first draw). Until then the sampler refuses to
        draw or to hand out its arrays."""
        self._redo_pending = np.array(w_pre, dtype=np.float64, copy=True)

    def settle_last_refit(self) -> None:
        """Settle a :meth:`defer_last_refit`: the last refit run again, unless the next
        draw (knowing the labels observed so far) starts with a refit that replaces
        every per-item array and :attr:`keep_arrays_before_refit` does not ask for the
        arrays before it (a fixed design's refit keeps its arrays: always run). Call it
        after :meth:`observe` and after setting :attr:`keep_arrays_before_refit`.

        Raises:
            ValueError: the refit run again does not give the restored state
                (:meth:`redo_last_refit`; the caller replays instead).
        """
        w = self._redo_pending
        if w is None:
            return
        self._redo_pending = None
        if (self.design._refit_due(self._st, len(self.losses))
                and not self.keep_arrays_before_refit and self.design.kind != ak.KIND_FIXED):
            self.w_pre = w  # as the redo would leave it; the refit replaces it first
            return
        self.redo_last_refit(w)

    def _check_settled(self) -> None:
        if self._redo_pending is not None:
            raise RuntimeError("the sampler's last refit was deferred: call "
                               "settle_last_refit() before drawing or reading its arrays")

    def design_states(self) -> list[dict[str, np.ndarray]]:
        """The design's states whose per-item arrays this sampler holds: the live one
        and, where :attr:`arrays_before_refit` was kept, the one before its first
        refit (each a dict with ``ist``, ``s``, ``g``, ``aux``; the live one is
        :attr:`_st` itself, not a copy)."""
        self._check_settled()
        out = [self._st]
        if self.arrays_before_refit is not None:
            out.append(self.arrays_before_refit)
        return out

    def plan(self) -> DesignPlan:
        """The proposal and control the next draw would use (does not draw)."""
        self._grow(len(self.acquired) + 1)
        st = {k: v.copy() for k, v in self._st.items()}
        return self.design._prepare(st, len(self.acquired), len(self.losses))

    def controls(self, loss: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(g_m, G_m, V_m)`` per draw for one of the design's :attr:`AdaptiveDesign.losses`
        (default the first): the control at the drawn item, its sum over the remaining
        items and the model's variance prediction."""
        if loss is None or loss == self.design.losses[0]:
            g, G, V = self.control, self.control_rest, self.model_var
        elif loss in self.design.losses:
            g, G, V = self.control2, self.control_rest2, self.model_var2
        else:
            raise ValueError(f"design {self.design.name!r} serves "
                             f"{', '.join(self.design.losses)}, not {loss!r}")
        return (np.array(g, dtype=np.float64), np.array(G, dtype=np.float64),
                np.array(V, dtype=np.float64))

    def estimate(self, loss: str | None = None) -> AdaptiveEstimate:
        """``R_K`` over the K labelled draws, its terms and plug-in standard error;
        ``loss``: which of the design's losses (default the first; a second one is
        computed from the labels)."""
        K_ = len(self.losses)
        if K_ == 0:
            raise ValueError("no labels observed yet")
        g, G, _ = self.controls(loss)
        L = np.array(self.losses)
        if loss is not None and loss != self.design.losses[0]:
            L = self.design.losses_of(np.array(self.acquired[:K_]), np.array(self.labels[:K_]),
                                      loss)
        args = (L, np.array(self.q[:K_]), self.design.n, g[:K_], G[:K_])
        return AdaptiveEstimate(float(adaptive_lure(*args)), adaptive_lure_terms(*args),
                                float(adaptive_lure_se(*args)), K_)

    def info(self) -> dict[str, Any]:
        """The design's state: refits, lambda, chosen ridge and fitted weights."""
        st = self._st
        out: dict[str, Any] = {"design": self.design.name, "refits": int(st["ist"][1]),
                               "lam": float(st["fst"][0]), "draws": len(self.acquired),
                               "labels": len(self.losses)}
        if self.design.rule != "original":  # the original rule's record is what it was
            out["rule"] = self.design.rule
        if self.design.kind in (ak.KIND_LOGIT, ak.KIND_BOTH) and st["ist"][1] > 0:
            r = int(st["ist"][2])
            out["ridge"] = float(self.design.rhos[r])
            out["weights"] = st["W"][r, : self.design._fk].tolist()
        elif self.design.kind == ak.KIND_GRADED and st["ist"][1] > 0:
            r = int(st["ist"][2])
            out["ridge"] = float(self.design.rhos[r])
            out["weights"] = st["W"][r, : self.design._Phi.shape[1]].tolist()
        elif self.design.kind == ak.KIND_RIDGE and st["ist"][1] > 0:
            D = self.design._Phi.shape[1]
            out["ridge"] = float(self.design.rhos[int(st["ist"][2])])
            out["loss_coef"] = st["W"][0, : D + 1].tolist()
            out["scale_coef"] = st["W"][1, : D + 1].tolist()
        return out

    def state(self) -> AdaptiveState:
        """A snapshot to persist (copies; later draws do not change it)."""
        return AdaptiveState(self.design.spec(), self.seed,
                             _jsonable(self._rng.bit_generator.state), list(self.acquired),
                             list(self.q), list(self.control), list(self.control_rest),
                             list(self.lam), list(self.n_known), list(self.labels),
                             list(self.losses), list(self.refits))

    @classmethod
    def from_state(cls, design: AdaptiveDesign, state: AdaptiveState) -> AdaptiveSampler:
        """Rebuild a run from its history; the future draws are the uninterrupted run's.

        The history is replayed through the design (same refits, same lambda), and
        the replayed q and controls must match the stored ones: a changed pool or
        design is an error, not a silent change of the run.
        """
        if state.design != design.spec():
            raise ValueError(f"the state was made by design {state.design}, not "
                             f"{design.spec()}")
        acq = [int(i) for i in state.acquired]
        if len(set(acq)) != len(acq) or any(not 0 <= i < design.n for i in acq):
            raise ValueError("state.acquired must hold distinct items of the pool")
        if not (len(state.q) == len(state.n_known) == len(acq)):
            raise ValueError("state.q, state.n_known and state.acquired differ in length")
        if len(state.losses) > len(acq):
            raise ValueError("more losses than drawn items")
        self = cls(design, seed=state.seed)
        self._grow(len(acq) + 1)
        n_lab = len(state.losses)
        ys = list(state.labels) + [-1] * (n_lab - len(state.labels))
        for j in range(n_lab):
            self._st["hy"][j] = max(int(ys[j]), 0)
            self._st["hL"][j] = float(state.losses[j])
        losses_pending = [float(x) for x in state.losses]
        for m, i in enumerate(acq):
            k = int(state.n_known[m])
            if k > min(m, n_lab):
                raise ValueError(f"n_known[{m}] = {k} exceeds the labels available")
            self.losses = losses_pending[:k]  # what was known at draw m
            self._advance(0.0, i)
            if not np.isclose(self.q[m], state.q[m], rtol=1e-9, atol=0.0):
                raise ValueError(f"replaying draw {m} gives q = {self.q[m]!r}, the state says "
                                 f"{state.q[m]!r}: the pool's outputs or the design changed")
        self.losses = losses_pending
        self.labels = [int(y) for y in ys]
        self._rng.bit_generator.state = state.rng_state
        return self


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


@dataclass
class DesignRuns:
    """R simulated sequential runs of one design.

    Attributes:
        indices, q, control, control_rest, lam: ``(R, M)`` per draw.
        refits: ``(R,)`` refits per run.
        model_var: ``(R, M)`` ``N^2 Var(theta_m | past)`` as the design's model
            predicts it (NaN before a learnt design's first fit); None unless asked
            for (``simulate_design(..., model_var=True)``).
        control2, control_rest2, model_var2: the same for the second metric of a
            two-metric design (None otherwise; ``model_var2`` only when asked for).
        losses: the losses the design serves, in that order.
    """

    indices: np.ndarray
    q: np.ndarray
    control: np.ndarray
    control_rest: np.ndarray
    lam: np.ndarray
    refits: np.ndarray
    model_var: np.ndarray | None = None
    control2: np.ndarray | None = None
    control_rest2: np.ndarray | None = None
    model_var2: np.ndarray | None = None
    losses: tuple[str, ...] = ()

    def controls(self, loss: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``(g, G, V)`` of one of the design's losses (default the first), ``(R, M)`` each."""
        if loss is None or not self.losses or loss == self.losses[0]:
            return self.control, self.control_rest, self.model_var
        if loss not in self.losses or self.control2 is None or self.control_rest2 is None:
            raise ValueError(f"the design serves {', '.join(self.losses)}, not {loss!r}")
        return self.control2, self.control_rest2, self.model_var2

    def curve(self, losses: np.ndarray, *, use_control: bool = True,
              loss: str | None = None) -> np.ndarray:
        """``(R, M)`` adaptive-LURE estimates after every label (``use_control=False``:
        the same draws with g = 0); ``loss``: whose control (a two-metric design's
        second loss; ``losses`` must then be that loss per item)."""
        L = np.asarray(losses, dtype=np.float64)[self.indices]
        n = int(np.asarray(losses).shape[0])
        if use_control:
            g, G, _ = self.controls(loss)
            return adaptive_lure_curve(L, self.q, n, g, G)
        return adaptive_lure_curve(L, self.q, n)


def simulate_design(design: AdaptiveDesign, *, losses: np.ndarray,
                    labels: np.ndarray | None, budget: int, n_runs: int,
                    random_state: int | np.random.Generator | None = 0,
                    model_var: bool = False) -> DesignRuns:
    """R independent sequential runs of ``design`` on a pool whose labels are known.

    Args:
        losses: ``(N,)`` the target's true per-item loss (what each label reveals).
        labels: ``(N,)`` true classes (needed by the calibrated design; else may be None).
        random_state: seed or Generator; the uniforms are drawn up front as an
            ``(R, M)`` array, row r for run r (as :func:`activetest.stats.sample` does).
        model_var: also record the design's variance prediction per draw
            (:attr:`DesignRuns.model_var`, for intervals); it costs one more pass over
            the pool per draw (up to 2x for the fixed designs), so studies of the
            error alone leave it off. The draws are the same either way.
    """
    n = design.n
    budget = check_budget(budget, n)
    L = as_vector(losses, "losses", n)
    if labels is None:
        if design.kind in (ak.KIND_LOGIT, ak.KIND_BOTH):
            raise ValueError("the calibrated design needs the labels")
        y = np.zeros(n, dtype=np.int64)
    else:
        y = np.asarray(labels, dtype=np.int64)
        if y.shape != (n,):
            raise ValueError(f"labels must have shape ({n},), got {y.shape}")
    if isinstance(n_runs, bool) or int(n_runs) != n_runs or n_runs < 1:
        raise ValueError(f"n_runs must be a positive integer, got {n_runs!r}")
    rng = np.random.default_rng(random_state)
    U = rng.random((int(n_runs), budget))
    R = int(n_runs)
    out = DesignRuns(np.empty((R, budget), dtype=np.int64), np.empty((R, budget)),
                     np.empty((R, budget)), np.empty((R, budget)), np.empty((R, budget)),
                     np.empty(R, dtype=np.int64),
                     np.empty((R, budget)) if model_var else None, losses=design.losses)
    own = getattr(design, "_simulate_runs", None)  # a design with its own kernel
    if own is not None:
        own(L, y, U, out, np.empty((0, 0)) if out.model_var is None else out.model_var)
        return out
    aux = np.empty((design._aux0.shape[0], R, budget))
    lam_fixed = -1.0 if design.lam is None else float(design.lam)
    ak.simulate_runs(design.kind, design._F, design._ktab, design._Phi, design._w0,
                    design.rhos, design.lambdas, lam_fixed, design._rule, design.schedule,
                    design._s0, design._g0, design._fitted0, design._lam0, L, y, U, out.indices,
                    out.q, out.control, out.control_rest, out.lam, out.refits,
                    np.empty((0, 0)) if out.model_var is None else out.model_var,
                    design._aux0, aux)
    if aux.shape[0] and design.kind == ak.KIND_BOTH:
        out.control2, out.control_rest2 = aux[0], aux[1]
        out.model_var2 = aux[2] if model_var else None
    return out
