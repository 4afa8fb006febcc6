"""The adaptive designs (:class:`AdaptiveDesign`): their knobs, refit schedule and plan,
and the compiled loop that makes a whole run. The mathematics is in
:mod:`activetest.stats.adaptive`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.stats import _adaptive_kernels as ak
from activetest.stats import _design_models as dm
from activetest.stats._guard_kernels import GUARD_PARAMS, guard_aux0
from activetest.stats.adaptive.features import (
    LazyLossTable,
    _lazy_features,
    _sequential_sum,
    _use_lazy,
    calibration_features,
    graded_matrix,
    loss_table,
    mixture_score_control,
    pe_features,
)
from activetest.stats.validate import as_logprobs, as_vector, float_array, is_whole, real_number

__all__ = [
    "DEFAULT_RULE",
    "DESIGNS",
    "LAMBDAS",
    "LAMBDA_START",
    "PE_RIDGES",
    "RIDGES",
    "RULES",
    "RULE_PARAMS",
    "SCHEDULE_FIRST",
    "SCHEDULE_GROWTH",
    "AdaptiveDesign",
    "DesignPlan",
    "refit_schedule",
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

def design_schedule(schedule: object, n: int) -> np.ndarray:
    """A design's refit schedule: :func:`refit_schedule` for None, else 1-D whole draw
    numbers (1-based) >= 1, as ``int64``.

    Raises:
        ValueError: anything else, named (QA: a string gave int()'s "invalid literal",
            NaN "cannot convert float NaN to integer", and 2.5, True or -1 were taken).
    """
    if schedule is None:
        return refit_schedule(n)
    a = np.asarray(schedule, dtype=object) if not isinstance(schedule, np.ndarray) \
        else schedule
    if isinstance(schedule, (str, bytes)) or a.ndim != 1 or not all(
            is_whole(x) and x >= 1 for x in a.tolist()):
        raise ValueError(f"schedule must be a 1-D sequence of draw numbers (whole, 1-based, "
                         f">= 1) before which the design refits, or None; got {schedule!r}")
    return np.asarray(a.tolist(), dtype=np.int64).reshape(-1)


def _n_rows(logprobs: object, name: str) -> int:
    """The rows of an ``(N, C)`` log-probability array, named where it is none (QA: a
    scalar gave Python's IndexError "tuple index out of range")."""
    if np.ndim(logprobs) != 2 or isinstance(logprobs, (str, bytes)):
        as_logprobs(logprobs, name)  # raises, naming it
    return int(np.shape(logprobs)[0])


def check_design_name(name: object) -> str:
    """A design's ``name`` (what its runs, checkpoints and reports call it): a non-empty
    string.

    Raises:
        ValueError: anything else, with its type and value (QA: ``fixed(name=None)`` built
            a design named None, and ``name=5`` one named 5).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string naming the design (e.g. "
                         f"'fixed'), got {type(name).__name__} {name!r}")
    return name


def check_start(start: str) -> None:
    """Refuse a design start other than ``"prior"`` or ``"uniform"``."""
    if start not in ("prior", "uniform"):
        raise ValueError(f"start must be 'prior' or 'uniform', got {start!r}")

def uniform_start(rule: str, rule_params: Sequence[float] | None, lam: float | None) -> bool:
    """The earned rule draws uniformly with g = 0 before its first refit (in-run lambda).

    Raises:
        ValueError: as :func:`check_rule_args`.
    """
    rule_params = check_rule_args(rule, rule_params, lam)
    params = RULE_PARAMS.get(rule, (0.0,)) if rule_params is None else rule_params
    return lam is None and float(params[0]) > 0.0


def check_rule_args(rule: object, rule_params: object, lam: object) -> list[float] | None:
    """``rule_params`` as floats (None: the rule's own); the design's knobs checked.

    Raises:
        ValueError: ``rule``, ``rule_params`` or ``lam`` is not one a design takes, named
            with its value (QA: a list rule gave "unhashable type", a number for
            rule_params "'int' object is not subscriptable", lam="0.5" "'<' not
            supported between instances"; lam=True was taken as 1).
    """
    if not isinstance(rule, str) or rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if rule_params is not None:
        if isinstance(rule_params, (str, bytes)) or np.ndim(rule_params) != 1 \
                or len(rule_params) < 4:
            raise ValueError(f"rule_params must be a sequence of at least 4 numbers (the "
                             f"rule's kernel parameters, as RULE_PARAMS), got {rule_params!r}")
        rule_params = [float(x) for x in float_array(rule_params, "rule_params")]
    if lam is not None and not 0.0 < real_number(lam, "lam", "a number in (0, 1], or None "
                                                 "(in-run)") <= 1.0:
        raise ValueError(f"lam must be in (0, 1] (or None for in-run), got {lam!r}")
    return rule_params  # type: ignore[return-value]

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
        rule_params = check_rule_args(rule, rule_params, lam)
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
        if _use_lazy(lazy, _n_rows(surrogate_logprobs, "surrogate_logprobs")):
            F = _lazy_features(surrogate_logprobs, target_logprobs)
            n, C = F[0].shape
            if loss not in ("log", "zero_one"):
                raise ValueError(f"loss must be 'log' or 'zero_one', got {loss!r}")
            ltab = LazyLossTable(F[1], dm.LAZY_LOG if loss == "log" else dm.LAZY_ZERO_ONE)
        else:
            F = calibration_features(surrogate_logprobs, target_logprobs)
            n, C = F.shape[0], F.shape[1]
            ltab = loss_table(target_logprobs, loss)
        w0 = np.zeros(C + 1)
        w0[0] = 1.0
        sched = design_schedule(schedule, n)
        s0, g0 = np.zeros(n), np.zeros(n)
        check_start(start)
        if uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            dm.logit_predict(F, ltab.kernel if isinstance(ltab, LazyLossTable) else ltab, w0,
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
        if _use_lazy(lazy, _n_rows(surrogate_logprobs, "surrogate_logprobs")):
            F = _lazy_features(surrogate_logprobs, target_logprobs)
            n, C = F[0].shape
            ltab = LazyLossTable(F[1], dm.LAZY_LOG)
            ktab = LazyLossTable(F[1], dm.LAZY_BOTH)
        else:
            F = calibration_features(surrogate_logprobs, target_logprobs)
            n, C = F.shape[0], F.shape[1]
            ltab = loss_table(target_logprobs, "log")
            ktab = np.hstack([ltab, loss_table(target_logprobs, "zero_one")])
        w0 = np.zeros(C + 1)
        w0[0] = 1.0
        sched = design_schedule(schedule, n)
        s0, g0, aux0 = np.zeros(n), np.zeros(n), np.zeros((3, n))
        check_start(start)
        if uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            dm.both_predict(F, ktab.kernel if isinstance(ktab, LazyLossTable) else ktab, w0,
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

        ``loss`` names the loss the runs observe (recorded in :meth:`spec`): ``log`` or
        ``zero_one`` (from ``target_logprobs`` where given), or ``graded``, a judged
        answer's ``1 - score`` in [0, 1] (observed only: no ``target_logprobs``), as
        :meth:`graded` names it. The name changes no number of a fixed design.
        """
        check_design_name(name)
        if not isinstance(loss, str) or loss not in ("log", "zero_one", "graded"):
            # (QA: checked only with target_logprobs; loss="foo" was taken and stored)
            raise ValueError(f"loss must be 'log', 'zero_one' or 'graded', got {loss!r}")
        if loss == "graded" and target_logprobs is not None:
            raise ValueError("loss 'graded' (1 - a judged score) is observed, not read from "
                             "target_logprobs: give no target_logprobs, or loss 'log' or "
                             "'zero_one'")
        s = as_vector(scores, "scores")
        if np.any(s < 0):
            raise ValueError("scores must be >= 0")
        n = s.shape[0]
        g = np.zeros(n) if control is None else as_vector(control, "control", n)
        ltab = None if target_logprobs is None else loss_table(target_logprobs, loss)
        if ltab is not None and ltab.shape[0] != n:
            raise ValueError(f"target_logprobs has {ltab.shape[0]} rows, scores has {n}")
        check_rule_args(rule, rule_params, lam)  # (lam="a": float()'s error before)
        sched = design_schedule(schedule, n)  # checked also where a fixed lam leaves it unused
        if lam is None:
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
        sched = design_schedule(schedule, n)
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
                in-run lambda, :func:`uniform_start`) draws uniformly with g = 0 before
                its first refit whatever ``start`` says.
            rule, rule_params: the in-run rule and its kernel parameters.
        """
        check_design_name(name)
        X = np.ascontiguousarray(X, dtype=np.float64)
        n, K = X.shape
        w0 = np.zeros(K)
        if offset:
            w0[0] = 1.0
        if start == "auto":
            start = "prior" if offset else "uniform"
        sched = design_schedule(schedule, n)
        s0, g0 = np.zeros(n), np.zeros(n)
        if start in ("prior", "uniform") and uniform_start(rule, rule_params, lam):
            lam0 = 1.0
        elif start == "prior":
            dm.graded_predict(X, w0, s0, g0)
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
            G2 = float(dm.rest_sum(st["aux"][1], st["rem"]))
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
