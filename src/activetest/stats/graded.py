"""Surrogates of a judgment of free-form answers, and the graded design built from them.

The target answers each pool item; a judge (a person, or exact match against
references) gives a score in [0, 1]; the loss is ``L_i = 1 - score_i`` (binary
exact match: 1 if the answer is wrong). A surrogate here is a label-free
per-item probability ``p_i`` that the answer is judged wrong; the paper's
acquisition uses it as the expected loss (``q`` proportional to ``p``, floored
at ``floor / R_m``, the proposal floor) and control-variate LURE uses it as the control.

Label-free transforms (fixed a priori, nothing fitted):

* the target's own confidence: a log-prob summary ``lp <= 0`` of its answer
  (mean, minimum or sum over the answer's tokens) read as the probability
  of being right, ``p = 1 - exp(lp)`` (for the sum: one minus the target's
  probability of its whole answer);
* agreement: ``p = 1 - F1(answer, other model's answer)``;
* an in-context judge with class log-probs ``[log P(no), log P(yes)]``:
  ``p = P(no)`` after normalising over the two classes.

:func:`graded_design` combines them through
:meth:`activetest.stats.adaptive.AdaptiveDesign.graded`: a logistic model of
P(wrong) on the standardised features ``[mean lp, min lp, sum lp, agreement F1
for each other model, judge log-odds log P(no) - log P(yes) for each judge]``,
prior-centred on the target's own sequence probability ``p0 = 1 - exp(sum lp)``
(the one summary that is itself a probability of the whole answer), refitted on
the labels as they arrive; exactly unbiased with adaptive LURE whatever it learns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from activetest.stats.adaptive import AdaptiveDesign

__all__ = ["graded_design", "graded_features", "judge_log_odds", "p_wrong_agreement",
           "p_wrong_judge", "p_wrong_logprob"]


def _vec(x: object, name: str, n: int | None = None) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"{name} must be 1-D" + (f" of length {n}" if n is not None else "")
                         + f", got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite")
    return a


def p_wrong_logprob(logprob: np.ndarray) -> np.ndarray:
    """``1 - exp(lp)``: a log-prob summary of the answer read as P(right); values > 0 clip to 0."""
    lp = _vec(logprob, "logprob")
    return -np.expm1(np.minimum(lp, 0.0))


def p_wrong_agreement(agreement: np.ndarray) -> np.ndarray:
    """``1 - F1`` of the target's answer against another model's answer (F1 in [0, 1])."""
    a = _vec(agreement, "agreement")
    if np.any((a < 0) | (a > 1)):
        raise ValueError("agreement must be an F1 in [0, 1]")
    return 1.0 - a


def _judge(judge_logprobs: np.ndarray) -> np.ndarray:
    j = np.asarray(judge_logprobs, dtype=np.float64)
    if j.ndim != 2 or j.shape[1] != 2:
        raise ValueError(f"judge_logprobs must be (N, 2) [log P(no), log P(yes)], got {j.shape}")
    if not np.all(np.isfinite(j)):
        raise ValueError("judge_logprobs must be finite")
    return j


def judge_log_odds(judge_logprobs: np.ndarray) -> np.ndarray:
    """``log P(no) - log P(yes)``: the judge's log-odds that the answer is wrong."""
    j = _judge(judge_logprobs)
    return j[:, 0] - j[:, 1]


def p_wrong_judge(judge_logprobs: np.ndarray) -> np.ndarray:
    """``P(no) = sigmoid(log P(no) - log P(yes))`` (normalised over the two classes)."""
    z = judge_log_odds(judge_logprobs)
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # a sigmoid without overflow


def graded_features(*, mean_lp: np.ndarray | None = None, min_lp: np.ndarray | None = None,
                    sum_lp: np.ndarray | None = None,
                    agreement: Sequence[np.ndarray] = (),
                    judges: Sequence[np.ndarray] = ()) -> tuple[np.ndarray, list[str]]:
    """``(N, D)`` raw label-free features and their names (standardised by the design).

    Columns, for what is given: ``mean_lp``, ``min_lp``, ``sum_lp`` (the target's
    answer-token log-prob summaries), ``agree:k`` (F1 with the k-th other model's
    answer), ``judge:k`` (the k-th judge's log-odds of wrong, from its ``(N, 2)``
    log-probs [no, yes]).
    """
    cols: list[np.ndarray] = []
    names: list[str] = []
    for name, x in (("mean_lp", mean_lp), ("min_lp", min_lp), ("sum_lp", sum_lp)):
        if x is not None:
            cols.append(_vec(x, name))
            names.append(name)
    for k, a in enumerate(agreement):
        cols.append(_vec(a, f"agreement[{k}]"))
        names.append(f"agree:{k}")
    for k, j in enumerate(judges):
        cols.append(judge_log_odds(j))
        names.append(f"judge:{k}")
    if not cols:
        raise ValueError("give at least one feature")
    n = cols[0].shape[0]
    if any(c.shape[0] != n for c in cols):
        raise ValueError("every feature must have one value per pool item")
    return np.column_stack(cols), names


def graded_design(*, mean_lp: np.ndarray | None = None, min_lp: np.ndarray | None = None,
                  sum_lp: np.ndarray | None = None, agreement: Sequence[np.ndarray] = (),
                  judges: Sequence[np.ndarray] = (), prior: np.ndarray | str | None = "auto",
                  lam: float | None = None,
                  schedule: np.ndarray | None = None) -> AdaptiveDesign:
    """The graded design over a pool of judged answers, from whatever surrogates exist.

    Args:
        mean_lp, min_lp, sum_lp: ``(N,)`` the target's answer-token log-prob
            summaries on the pool (any subset).
        agreement: ``(N,)`` arrays, token F1 of the target's answer with each other
            model's answer.
        judges: ``(N, 2)`` arrays, each judge's log-probs [no, yes] ("is the answer
            correct?"). A judge prompted with judged examples spent those labels:
            charge them when comparing with uniform sampling.
        prior: ``"auto"``: ``1 - exp(sum_lp)`` when ``sum_lp`` is given (else
            ``1 - exp(mean_lp)``, else none); an ``(N,)`` array of label-free
            P(wrong); or None (uniform start).
        lam, schedule: as :meth:`AdaptiveDesign.graded` (None: in-run lambda,
            the default schedule).

    A run observes losses: ``AdaptiveSampler(design, seed=s)``, ``draw()``, then
    ``observe(losses=[1 - score])``.
    """
    X, _ = graded_features(mean_lp=mean_lp, min_lp=min_lp, sum_lp=sum_lp,
                           agreement=agreement, judges=judges)
    if isinstance(prior, str):
        if prior != "auto":
            raise ValueError(f"prior must be 'auto', an array or None, got {prior!r}")
        base = sum_lp if sum_lp is not None else mean_lp
        p0 = None if base is None else p_wrong_logprob(base)
    else:
        p0 = None if prior is None else _vec(prior, "prior", X.shape[0])
    return AdaptiveDesign.graded(X, prior=p0, lam=lam, schedule=schedule)
