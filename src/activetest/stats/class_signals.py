"""The calibrated-residual design with more per-class signals (classification, target on the pool).

The calibrated design of :mod:`activetest.stats.adaptive` models each pool item's
label by a multinomial logit on two label-free per-class signals, the surrogate's
and the target's log-probabilities (centred per class over the pool), plus one-hot
class offsets. Where more label-free signals exist -- a second surrogate model, the
probabilities of a contextually calibrated surrogate, the target's own
probabilities -- they enter the same model as further per-class columns::

    P_w(c | x_i) = softmax_c(w . [f_i(c), a_i(c)])

``f_i(c)`` the calibrated design's features ``[log pi - mean, log p_f - mean, e_2..e_C]``
(:func:`activetest.stats.adaptive.calibration_features`, unchanged) and ``a_i(c)`` one
column per extra signal ``A`` (an ``(N, C)`` array): ``(A(i, c) - mean_j A(j, c)) / sd``,
centred per class over the pool (a constant per class would only duplicate the class
offsets) and divided by its pooled sd (one scale per signal, so the ridge prior
``N(w0, I/rho)`` treats every signal alike). The prior mean ``w0 = (1, 0, ...)`` is the
surrogate, as in the calibrated design: the extra signals start at weight 0 and earn a
weight only from the labels. The refit schedule, ridge grid and evidence, in-run lambda,
start and rules are the calibrated design's (the same kernel, ``KIND_LOGIT``), so the
estimate (adaptive LURE with the control ``g = E_P[l]``) is exactly unbiased whatever
the signals: the design at draw m is a function of the labels before draw m only.

Without extra signals the design *is* the calibrated design (the same features, the
same draws to the last bit; tests/stats/test_class_signals.py).

A log-probability signal that differs from one already in the model by a constant per
class and item-wise normaliser (contextual calibration: ``log_softmax(log pi - log
p_cf)``) is the same column after centring and adds nothing; its *probabilities*
``exp(log_softmax(...))`` do differ non-linearly, which is how calibration enters here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from activetest.stats import _adaptive_kernels as ak
from activetest.stats import _design_models as dm
from activetest.stats.adaptive import (
    DEFAULT_RULE,
    LAMBDA_START,
    AdaptiveDesign,
    calibration_features,
    loss_table,
    refit_schedule,
)
from activetest.stats.adaptive.design import check_start, uniform_start
from activetest.stats.validate import as_logprobs

__all__ = ["class_signal_design", "class_signal_features", "signal_column"]


def signal_column(signal: np.ndarray, n: int, n_classes: int) -> np.ndarray | None:
    """``(N, C)`` one extra signal as the design uses it: centred per class over the pool,
    divided by its pooled sd; None when it is constant per class (it adds nothing)."""
    A = np.asarray(signal, dtype=np.float64)
    if A.shape != (n, n_classes) or not np.all(np.isfinite(A)):
        raise ValueError(f"every signal must be a finite ({n}, {n_classes}) array, got "
                         f"shape {A.shape}")
    A = A - A.mean(axis=0)
    sd = float(A.std())
    if not sd > 1e-12:
        return None
    return A / sd


def class_signal_features(target_logprobs: np.ndarray, surrogate_logprobs: np.ndarray,
                          signals: Sequence[np.ndarray] = ()) -> np.ndarray:
    """``(N, C, C + 1 + D)`` the calibrated design's features and ``D`` extra per-class
    signals (module docstring; signals constant per class are dropped)."""
    F0 = calibration_features(surrogate_logprobs, target_logprobs)
    n, C = F0.shape[0], F0.shape[1]
    cols = [c for c in (signal_column(a, n, C) for a in signals) if c is not None]
    if not cols:
        return F0
    return np.ascontiguousarray(np.concatenate([F0, np.stack(cols, axis=2)], axis=2))


def class_signal_design(target_logprobs: np.ndarray, surrogate_logprobs: np.ndarray,
                        signals: Sequence[np.ndarray] = (), *, loss: str = "log",
                        lam: float | None = None, schedule: np.ndarray | None = None,
                        start: str = "prior", rule: str = DEFAULT_RULE,
                        rule_params: Sequence[float] | None = None,
                        name: str = "signals") -> AdaptiveDesign:
    """The calibrated design with extra per-class signals (module docstring).

    Args:
        target_logprobs, surrogate_logprobs: ``(N, C)`` class log-probabilities on the
            pool; the surrogate is the prior model (weight 1).
        signals: extra label-free ``(N, C)`` per-class signals (another model's
            log-probabilities or probabilities, a calibrated surrogate's probabilities).
        loss: ``"log"`` or ``"zero_one"`` (the loss table is the target's).
        lam, schedule, start, rule, rule_params: as
            :meth:`activetest.stats.adaptive.AdaptiveDesign.calibrated`.
        name: the design's name.
    """
    t = as_logprobs(target_logprobs, "target_logprobs")
    F = class_signal_features(t, surrogate_logprobs, signals)
    ltab = loss_table(t, loss)
    n, K = F.shape[0], F.shape[2]
    w0 = np.zeros(K)
    w0[0] = 1.0
    sched = refit_schedule(n) if schedule is None else np.asarray(schedule, dtype=np.int64)
    s0, g0 = np.zeros(n), np.zeros(n)
    check_start(start)
    if uniform_start(rule, rule_params, lam) or start == "uniform":
        lam0 = 1.0
    else:
        dm.logit_predict(F, ltab, w0, s0, g0)
        lam0 = LAMBDA_START if lam is None else float(lam)
    return AdaptiveDesign(ak.KIND_LOGIT, name, loss, n, F=F, ltab=ltab, Phi=np.zeros((n, 1)),
                          w0=w0, s0=s0, g0=g0, fitted0=int(lam0 < 1.0), lam0=lam0, lam=lam,
                          schedule=sched, rule=rule, rule_params=rule_params)
