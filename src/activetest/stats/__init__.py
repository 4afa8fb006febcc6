"""Statistics: pure numpy, no I/O.

acquisition scores -> proposal and sampler (draws with q_m) -> estimators ->
bootstrap errors -> many-run simulation. Arrays in, arrays out. The adaptive
designs (``adaptive``: proposal and control refitted as labels arrive, exactly
unbiased with ``adaptive_lure``) have their own resumable sampler.
"""

from __future__ import annotations

import sys
import types

from activetest import _lazy

#: Public name -> the module that defines it, imported on first use (PEP 562): a
#: command that needs one record type (``status``) does not import every statistic.
_EXPORTS = {
    "ACQUISITIONS": "activetest.stats.acquisition",
    "acquisition_scores": "activetest.stats.acquisition",
    "difference_bounds": "activetest.stats.acquisition",
    "expected_difference": "activetest.stats.acquisition",
    "expected_log_loss": "activetest.stats.acquisition",
    "expected_zero_one_loss": "activetest.stats.acquisition",
    "nll_score": "activetest.stats.acquisition",
    "predictive_entropy": "activetest.stats.acquisition",
    "uniform_score": "activetest.stats.acquisition",
    "AdaptiveDesign": "activetest.stats.adaptive",
    "AdaptiveEstimate": "activetest.stats.adaptive",
    "AdaptiveSampler": "activetest.stats.adaptive",
    "AdaptiveState": "activetest.stats.adaptive",
    "DesignPlan": "activetest.stats.adaptive",
    "DesignRuns": "activetest.stats.adaptive",
    "simulate_design": "activetest.stats.adaptive",
    "BootstrapResult": "activetest.stats.bootstrap",
    "bootstrap": "activetest.stats.bootstrap",
    "bootstrap_means": "activetest.stats.bootstrap",
    "bootstrap_std_many": "activetest.stats.bootstrap",
    "labels_for_width": "activetest.stats.projection",
    "uniform_labels_for_width": "activetest.stats.projection",
    "AnytimeSummary": "activetest.stats.projection",
    "ConfidenceSequence": "activetest.stats.confseq",
    "anytime_summary": "activetest.stats.projection",
    "asymptotic_cs": "activetest.stats.confseq",
    "betting_capital": "activetest.stats.betting",
    "betting_cs": "activetest.stats.betting",
    "exact_cs": "activetest.stats.betting",
    "labels_for_cs_width": "activetest.stats.projection",
    "log_loss_bound": "activetest.stats.betting",
    "paired_difference_cs": "activetest.stats.confseq",
    "paired_difference_exact_cs": "activetest.stats.betting",
    "adaptive_lure": "activetest.stats.estimators",
    "adaptive_lure_curve": "activetest.stats.estimators",
    "adaptive_lure_se": "activetest.stats.estimators",
    "adaptive_lure_terms": "activetest.stats.estimators",
    "adaptive_lure_theta": "activetest.stats.estimators",
    "adaptive_lure_weights": "activetest.stats.estimators",
    "ase": "activetest.stats.estimators",
    "cv_lure": "activetest.stats.estimators",
    "cv_lure_curve": "activetest.stats.estimators",
    "fixed_control_rest": "activetest.stats.estimators",
    "importance_sampling": "activetest.stats.estimators",
    "importance_sampling_curve": "activetest.stats.estimators",
    "lure": "activetest.stats.estimators",
    "lure_curve": "activetest.stats.estimators",
    "lure_terms": "activetest.stats.estimators",
    "lure_weights": "activetest.stats.estimators",
    "tuned_beta": "activetest.stats.estimators",
    "uniform_mean": "activetest.stats.estimators",
    "uniform_mean_curve": "activetest.stats.estimators",
    "FixedInterval": "activetest.stats.intervals",
    "IntervalCurve": "activetest.stats.intervals",
    "fixed_interval": "activetest.stats.intervals",
    "fixed_interval_curve": "activetest.stats.intervals",
    "pool_variance_curve": "activetest.stats.intervals",
    "log_loss": "activetest.stats.losses",
    "log_softmax": "activetest.stats.losses",
    "logsumexp": "activetest.stats.losses",
    "zero_one_loss": "activetest.stats.losses",
    "proposal": "activetest.stats.proposal",
    "reference_sample": "activetest.stats.proposal",
    "ActiveSampler": "activetest.stats.sampler",
    "SamplerState": "activetest.stats.sampler",
    "sample": "activetest.stats.sampler",
    "DESIGN_ACQUISITIONS": "activetest.stats.simulate",
    "ESTIMATORS": "activetest.stats.simulate",
    "Method": "activetest.stats.simulate",
    "SimulationResult": "activetest.stats.simulate",
    "control_values": "activetest.stats.simulate",
    "simulate": "activetest.stats.simulate",
}

__all__ = [
    "ACQUISITIONS",
    "DESIGN_ACQUISITIONS",
    "ESTIMATORS",
    "ActiveSampler",
    "AdaptiveDesign",
    "AdaptiveEstimate",
    "AdaptiveSampler",
    "AdaptiveState",
    "AnytimeSummary",
    "BootstrapResult",
    "ConfidenceSequence",
    "DesignPlan",
    "DesignRuns",
    "FixedInterval",
    "IntervalCurve",
    "Method",
    "SamplerState",
    "SimulationResult",
    "acquisition_scores",
    "adaptive_lure",
    "adaptive_lure_curve",
    "adaptive_lure_se",
    "adaptive_lure_terms",
    "adaptive_lure_theta",
    "adaptive_lure_weights",
    "anytime_summary",
    "ase",
    "asymptotic_cs",
    "betting_capital",
    "betting_cs",
    "bootstrap",
    "bootstrap_means",
    "bootstrap_std_many",
    "control_values",
    "cv_lure",
    "cv_lure_curve",
    "difference_bounds",
    "exact_cs",
    "expected_difference",
    "expected_log_loss",
    "expected_zero_one_loss",
    "fixed_control_rest",
    "fixed_interval",
    "fixed_interval_curve",
    "importance_sampling",
    "importance_sampling_curve",
    "labels_for_cs_width",
    "labels_for_width",
    "log_loss",
    "log_loss_bound",
    "log_softmax",
    "logsumexp",
    "lure",
    "lure_curve",
    "lure_terms",
    "lure_weights",
    "nll_score",
    "paired_difference_cs",
    "paired_difference_exact_cs",
    "pool_variance_curve",
    "predictive_entropy",
    "proposal",
    "reference_sample",
    "sample",
    "simulate",
    "simulate_design",
    "tuned_beta",
    "uniform_labels_for_width",
    "uniform_mean",
    "uniform_mean_curve",
    "uniform_score",
    "zero_one_loss"
]

TYPE_CHECKING = False  # not typing's: importing typing costs import time
if TYPE_CHECKING:
    from activetest.stats.acquisition import (
        ACQUISITIONS,
        acquisition_scores,
        difference_bounds,
        expected_difference,
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
    from activetest.stats.betting import (
        betting_capital,
        betting_cs,
        exact_cs,
        log_loss_bound,
        paired_difference_exact_cs,
    )
    from activetest.stats.bootstrap import (
        BootstrapResult,
        bootstrap,
        bootstrap_means,
        bootstrap_std_many,
    )
    from activetest.stats.confseq import (
        ConfidenceSequence,
        asymptotic_cs,
        paired_difference_cs,
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
    from activetest.stats.intervals import (
        FixedInterval,
        IntervalCurve,
        fixed_interval,
        fixed_interval_curve,
        pool_variance_curve,
    )
    from activetest.stats.losses import log_loss, log_softmax, logsumexp, zero_one_loss
    from activetest.stats.projection import (
        AnytimeSummary,
        anytime_summary,
        labels_for_cs_width,
        labels_for_width,
        uniform_labels_for_width,
    )
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


__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS, globals())


class _Package(types.ModuleType):
    """This package's module: importing the submodule ``bootstrap`` (``proposal``,
    ``simulate``) binds its name here, where the public name is the function of that
    name (as when this package imported every name at once)."""

    def __setattr__(self, name: str, value: object) -> None:
        if (name in _EXPORTS and isinstance(value, types.ModuleType)
                and value.__name__ == f"{__name__}.{name}"):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
