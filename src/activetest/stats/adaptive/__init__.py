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
exact anytime CS's floor 0.1) and instead raises q where a surprise would be costly; what it
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

The package: :mod:`.features` (the label-free inputs), :mod:`.design` (the designs, their
knobs and the compiled whole-run loop), :mod:`.sampler` (one real run, draw by draw,
persisted and resumed), :mod:`.runs` (many simulated runs); every public name is
importable from here.
"""

from __future__ import annotations

from activetest.stats.adaptive.design import (
    DEFAULT_RULE,
    DESIGNS,
    LAMBDA_START,
    LAMBDAS,
    PE_RIDGES,
    RIDGES,
    RULE_PARAMS,
    RULES,
    SCHEDULE_FIRST,
    SCHEDULE_GROWTH,
    AdaptiveDesign,
    DesignPlan,
    refit_schedule,
)
from activetest.stats.adaptive.features import (
    LAZY_MIN_ROWS,
    PRIOR_CLIP,
    LazyLossTable,
    calibration_features,
    graded_matrix,
    loss_table,
    mixture_score_control,
    pe_features,
)
from activetest.stats.adaptive.runs import DesignRuns, simulate_design
from activetest.stats.adaptive.sampler import AdaptiveEstimate, AdaptiveSampler, AdaptiveState

__all__ = [
    "DEFAULT_RULE",
    "DESIGNS",
    "LAMBDAS",
    "LAMBDA_START",
    "LAZY_MIN_ROWS",
    "PE_RIDGES",
    "PRIOR_CLIP",
    "RIDGES",
    "RULES",
    "RULE_PARAMS",
    "SCHEDULE_FIRST",
    "SCHEDULE_GROWTH",
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
