"""Statistics: pure numpy, no I/O.

acquisition scores -> proposal and sampler (draws with q_m) -> estimators ->
bootstrap errors -> many-run simulation. Arrays in, arrays out. The adaptive
designs (``adaptive``: proposal and control refitted as labels arrive, exactly
unbiased with ``adaptive_lure``) have their own resumable sampler.
"""

from activetest.stats.acquisition import (
    ACQUISITIONS,
    acquisition_scores,
    expected_log_loss,
    expected_zero_one_loss,
    nll_score,
    predictive_entropy,
    uniform_score,
)
from activetest.stats.adaptive import (
    AdaptiveDesign,
    AdaptiveEstimate,
    AdaptiveSampler,
    AdaptiveState,
    DesignPlan,
    DesignRuns,
    simulate_design,
)
from activetest.stats.bootstrap import (
    BootstrapResult,
    bootstrap,
    bootstrap_means,
    bootstrap_std_many,
    labels_for_width,
)
from activetest.stats.estimators import (
    adaptive_lure,
    adaptive_lure_curve,
    adaptive_lure_se,
    adaptive_lure_terms,
    adaptive_lure_theta,
    adaptive_lure_weights,
    ase,
    cv_lure,
    cv_lure_curve,
    fixed_control_rest,
    importance_sampling,
    importance_sampling_curve,
    lure,
    lure_curve,
    lure_terms,
    lure_weights,
    tuned_beta,
    uniform_mean,
    uniform_mean_curve,
)
from activetest.stats.losses import log_loss, log_softmax, logsumexp, zero_one_loss
from activetest.stats.proposal import proposal, reference_sample
from activetest.stats.sampler import ActiveSampler, SamplerState, sample
from activetest.stats.simulate import (
    DESIGN_ACQUISITIONS,
    ESTIMATORS,
    Method,
    SimulationResult,
    control_values,
    simulate,
)

__all__ = [
    "ACQUISITIONS", "DESIGN_ACQUISITIONS", "ESTIMATORS", "ActiveSampler", "AdaptiveDesign",
    "AdaptiveEstimate", "AdaptiveSampler", "AdaptiveState", "BootstrapResult", "DesignPlan",
    "DesignRuns", "Method", "SamplerState", "SimulationResult", "acquisition_scores",
    "adaptive_lure", "adaptive_lure_curve", "adaptive_lure_se", "adaptive_lure_terms",
    "adaptive_lure_theta", "adaptive_lure_weights", "ase", "bootstrap", "bootstrap_means",
    "bootstrap_std_many", "control_values", "cv_lure", "cv_lure_curve", "expected_log_loss",
    "expected_zero_one_loss", "fixed_control_rest", "importance_sampling",
    "importance_sampling_curve", "labels_for_width", "log_loss", "log_softmax", "logsumexp",
    "lure", "lure_curve", "lure_terms", "lure_weights", "nll_score", "predictive_entropy",
    "proposal", "reference_sample", "sample", "simulate", "simulate_design", "tuned_beta",
    "uniform_mean", "uniform_mean_curve", "uniform_score", "zero_one_loss",
]

# Intervals and confidence sequences from the per-draw estimates theta_m (issue 13).
from activetest.stats.confseq import (
    AnytimeSummary,
    ConfidenceSequence,
    anytime_summary,
    asymptotic_cs,
    betting_cs,
    exact_cs,
    labels_for_cs_width,
    log_loss_bound,
    paired_difference_cs,
    paired_difference_exact_cs,
)
from activetest.stats.intervals import (
    FixedInterval,
    IntervalCurve,
    fixed_interval,
    fixed_interval_curve,
    pool_variance_curve,
)

__all__ += [
    "AnytimeSummary", "ConfidenceSequence", "FixedInterval", "IntervalCurve", "anytime_summary",
    "asymptotic_cs", "betting_cs",
    "exact_cs", "fixed_interval", "fixed_interval_curve", "labels_for_cs_width",
    "log_loss_bound", "paired_difference_cs", "paired_difference_exact_cs",
    "pool_variance_curve",
]
