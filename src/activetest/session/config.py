"""The session's configuration as one typed, frozen record, and the list of acquisitions.

A session file stores its configuration as JSON (table ``config``). Every version of
activetest wrote a dict of the same few keys, and later versions added some:
``kind`` and ``compare`` (graded sessions, schema 2 and 3); files before those keys
mean a classification session with nothing compared. :meth:`SessionConfig.from_dict`
reads every shape ever written, with defaults for the keys a version did not write,
and :meth:`SessionConfig.to_dict` writes back the same dict (unknown keys, written by a
newer version, are kept in ``extra`` and written back unchanged), so a config read and
written again is byte-for-byte the same JSON.

Names: the stored key ``alpha`` is the **proposal floor** (the share of the uniform
distribution mixed into the proposal, the paper's alpha); it is
``SessionConfig.proposal_floor`` here, ``proposal_floor=`` in ``Session.create`` and
``--proposal-floor`` on the command line, and ``proposal_floor=`` in the sampler
(:class:`~activetest.stats.ActiveSampler`, :func:`~activetest.stats.sample`,
:mod:`activetest.stats.proposal`, :func:`~activetest.stats.simulate`); ``alpha=`` and
``--alpha`` still work there, deprecated. The **confidence level** of the intervals is
``level`` (0.95); the only ``alpha`` left is the miscoverage ``1 - level`` of
:mod:`activetest.stats.confseq` (the confidence-sequence papers' name).

:data:`ACQUISITIONS` is the one list of acquisitions a session can use, with the
properties every other module asks about (is it an adaptive design, which design,
does it need the target's predictions on the pool, which session kinds take it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["ACQUISITIONS", "BOTH_DESIGNS", "DESIGN_METRICS", "GRADED_LOSSES", "KINDS",
           "LABEL_SCORING", "METRICS",
           "POOL_SIGNAL", "Acquisition",
           "ConfigError", "NoiseConfig", "SessionConfig", "acquisition"]

#: In a history session's ``history`` record's ``features``: the design also reads the
#: pool's own label-free signal stored with role ``features`` (a harness session's: the
#: lm-eval pool run's choice features, an inspect pool's surrogate column), standardised
#: as more features beside the history's
#: (:func:`activetest.session.design.history_design`).
POOL_SIGNAL = "pool"

#: Metrics a session estimates: the mean log loss and the error rate (mean 0-1 loss).
METRICS = ("log_loss", "error_rate")
#: Session kinds: class labels (classification) or judged free-form answers (graded).
KINDS = ("classification", "graded")


class ConfigError(ValueError):
    """A stored or given configuration that cannot be read; the message names the key."""


@dataclass(frozen=True)
class Acquisition:
    """One acquisition a session can draw by.

    Attributes:
        name: the name stored in the session file and given to ``--acquisition``.
        design: the :mod:`activetest.stats.adaptive` design name for adaptive designs
            (refitted on the labels between draws), None for a fixed proposal.
        needs_target: the target's predictions on the whole pool are scored when the
            session is created (False: the target runs only on the labelled items, as
            in the paper's PE).
        kinds: the session kinds that take it.
        summary: one line for ``--help``.
    """

    name: str
    design: str | None
    needs_target: bool
    kinds: tuple[str, ...]
    summary: str

    @property
    def adaptive(self) -> bool:
        """Whether the proposal and the control are refitted from the labels."""
        return self.design is not None


_C, _G, _CG = ("classification",), ("graded",), ("classification", "graded")

#: Every acquisition, by name, in the order ``--help`` lists them.
ACQUISITIONS: dict[str, Acquisition] = {a.name: a for a in (
    Acquisition("adaptive", "calibrated", True, _C,
                "the calibrated-residual adaptive design (default for classification)"),
    Acquisition("pe_adaptive", "pe", False, _C,
                "adaptive design on the surrogate alone; the target runs only on labelled items"),
    Acquisition("fixed_mix", "fixed_mix", True, _C,
                "fixed design on the average of surrogate and target (no learning)"),
    Acquisition("ce", None, True, _CG,
                "the paper's cross-entropy acquisition (expected loss of the target)"),
    Acquisition("pe", None, False, _C,
                "the paper's predictive entropy of the surrogate; target only on labelled items"),
    Acquisition("zero_one", None, True, _CG,
                "expected 0-1 loss of the target under the surrogate"),
    # the target is scored on the pool at creation (as every version did), so its
    # estimate needs no model at estimate time
    Acquisition("uniform", None, True, _C, "uniform sampling without replacement"),
    # a paired comparison: the compared target (--compare) is scored on the pool too
    Acquisition("compare", None, True, _C,
                "labels where the target and the compared model (--compare) may differ"),
    Acquisition("graded_adaptive", "graded", True, _G,
                "graded adaptive design on the target's confidence (--surrogate adaptive)"),
    Acquisition("graded_fixed", "graded_fixed", True, _G,
                "fixed design for a fixed surrogate of the judgment (default for graded)"),
    Acquisition("expected_loss", None, True, _G,
                "the surrogate's expected loss (graded sessions written before graded_fixed)"),
)}


#: acquisition -> the design a NEW session with both metrics runs (recorded in its config
#: as ``"design"``); acquisitions not listed fit their design to log loss as before.
BOTH_DESIGNS = {"adaptive": "calibrated-both"}
#: Two-metric designs: the metrics they give controls for, in their order.
DESIGN_METRICS = {"calibrated-both": ("log_loss", "error_rate")}


def acquisition(name: str) -> Acquisition:
    """The :class:`Acquisition` called ``name``.

    Raises:
        ConfigError: an unknown name (the message lists the known ones).
    """
    try:
        return ACQUISITIONS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown acquisition {name!r}; expected one of "
                          f"{', '.join(ACQUISITIONS)}") from None


@dataclass(frozen=True)
class NoiseConfig:
    """The label-noise alarm: flag a label whose NLL under the target (and/or the
    surrogate, by ``rule``) exceeds its threshold (None: that model is not used)."""

    target_nll: float | None = 5.0
    surrogate_nll: float | None = 5.0
    rule: str = "any"

    def to_dict(self) -> dict[str, Any]:
        """The stored shape."""
        return {"target_nll": self.target_nll, "surrogate_nll": self.surrogate_nll,
                "rule": self.rule}


_REQUIRED = ("task", "surrogate", "target", "metric", "acquisition", "seed")
# stored key -> attribute, for the keys whose names differ
_RENAMED = {"alpha": "proposal_floor", "activetest_version": "version",
            "design": "design_variant"}
# stored keys written only by some sessions: absent (None) is not written back
_OPTIONAL_KEYS = ("design", "answer_files", "model_files", "target_shots", "planned_budget",
                  "blind_ratio", "design_rule", "clt_min_errors", "label_scoring", "sure_bounds",
                  "exact_share", "exact_least", "shared_resamples", "graded_loss")
#: How a class's score is read from its label word (:data:`SessionConfig.label_scoring`;
#: the names of :data:`activetest.models.labels.LABEL_SCORING_MODES`).
LABEL_SCORING = ("first-token", "full-sequence")
#: The names a graded session's fixed design may record for its loss
#: (:attr:`SessionConfig.graded_loss`): ``graded`` (new sessions), ``log`` (the name
#: sessions before the key recorded).
GRADED_LOSSES = ("graded", "log")


@dataclass(frozen=True)
class SessionConfig:
    """What a session was created with (stored once, never changed).

    Attributes:
        kind: ``classification`` or ``graded``.
        task: the task as stored (:func:`activetest.data.taskfile.task_to_dict`).
        task_ref: the name the task was given by (a built-in name or a file).
        surrogate, target: the model specs as stored (credentials removed).
        metric: ``log_loss``, ``error_rate`` or ``both``.
        acquisition: a name in :data:`ACQUISITIONS`.
        proposal_floor: the share of the uniform distribution in a fixed proposal
            (stored as ``alpha``).
        seed: the seed of the draws and of every bootstrap.
        noise: the label-noise alarm.
        n_boot: bootstrap resamples.
        level: the intervals' confidence level.
        shots, target_shots: in-context examples of the surrogate and of the target
            (``target_shots`` None: not stored, by files from before it existed: the
            target saw as many as the surrogate; :attr:`target_examples` says so).
        compare: compared targets' specs: graded sessions, whose answers are judged
            beside the target's; classification sessions created with ``--compare``,
            whose model is scored on the pool at creation (role ``compare:<spec>``),
            compared at every estimate, and drawn for by the ``compare`` acquisition.
        pool, examples: what was loaded (source, format, hash, counts).
        cache_dir, use_cache: the score cache.
        version: the activetest version that created the session.
        design_variant: the two-metric design a session with both metrics runs (stored
            as ``design``, e.g. ``calibrated-both``; None: not stored, the acquisition's
            own design). Kept as stored: :func:`activetest.session.design.design_name`
            checks it when the design is built.
        answer_files: graded sessions: the provenance of every ``answers:`` file, by
            role (None: not stored, sessions written before it).
        model_files: classification sessions: each ``table:`` model spec stored with its
            file's name (not its local path) -> the SHA-256 of the file, by which a later
            command finds it (:mod:`activetest.session.spec_files`). None: not stored, by
            files from before it, whose specs keep their paths as given.
        planned_budget: the labels the session plans to collect, fixed at creation
            (``--budget``; default :func:`activetest.stats.confseq.default_budget`): the
            anytime confidence sequence is tuned to it
            (:func:`activetest.stats.asymptotic_cs`, ``budget=``). None: not stored, by
            files from before it: the CS keeps the normal mixture they were shown.
        blind_ratio: the intervals are widened by what never-drawn items drawn at below
            this share of the uniform rate could hide (:mod:`activetest.session.blindspot`;
            new sessions: :func:`activetest.stats.blindspot.new_blind_ratio`). None: not
            stored, by files from before it: no widening, the numbers they had.
        design_rule: the adaptive design's in-run rule
            (:data:`activetest.stats.adaptive.RULES`; None: not stored, the
            ``"original"`` rule every session ran before the key existed, so an old
            file replays its draws exactly). Kept as stored:
            :func:`activetest.session.design.design_rule` checks it.
        clt_min_errors: the error rate's fixed-budget interval and anytime CS are the CLT
            ones only once the labels show this many errors (and as many labels without
            one); before, the exact anytime CS stands in (:mod:`activetest.stats.fewerrors`; new
            sessions: :data:`activetest.stats.fewerrors.MIN_ERRORS`). None: not stored, by
            files from before it: the CLT intervals at every label count, as they were shown.
        label_scoring: how the models built from specs read each class from its label
            word (``--label-scoring``): ``first-token`` (the paper's choice) or
            ``full-sequence`` (the summed log-prob of the whole word); every later command
            (drawing, the target scored on labelled items, ``estimate --compare``) builds
            them the same way. None: not stored, by files from before it: first-token,
            the only way they were scored (:attr:`label_scoring_mode`).
        sure_bounds: the intervals are cut to the bounds the labels make sure (the
            labelled losses plus the most the unlabelled items could add:
            :func:`activetest.session.estimate_base.sure_risk_curve`; new sessions:
            True). None: not stored, by files from before it: not cut, the numbers they
            had.
        exact_share: an adaptive design's exact anytime CS bounds each draw's weight by the
            share of the uniform in the proposal it was drawn from (recorded at the draw:
            every remaining item then had probability at least that share over the items
            left), not by the least share any draw may have (10%), which bet as if each
            item could weigh 10 times what it could while the design was still uniform
            (:attr:`activetest.session.estimate_base.LabelledDraws.q_share`; new sessions:
            True). None: not stored, by files from before it: the least share, the
            numbers they had.
        exact_least: an adaptive design's exact anytime CS bounds each draw's weight by the
            least probability the draw's proposal gave any item it could draw (replayed
            in the blind spot's pass, :attr:`activetest.session.blindspot.BlindSpotPass.least_q`),
            where that is above the share's bound: after its uniform phase the design
            mixes in 10% of the uniform but draws every item at several times that
            (:attr:`activetest.session.estimate_base.LabelledDraws.q_least`; new sessions:
            True). None: not stored, by files from before it: the share's bound, the
            numbers they had.
        shared_resamples: the plain mean's bootstrap resamples the labelled items as
            LURE's does (the same generator, so the same resampled label sets): the two
            intervals then differ by the weights alone, and where every draw was at the
            uniform rate (weights 1) they are the same interval, as the estimate is the
            same number (:func:`activetest.session.estimate.paired_bootstraps`; new
            sessions: True). None: not stored, by files from before it: each from its own
            generator, the numbers they had.
        graded_loss: graded sessions: the name of the loss their fixed design
            (``graded_fixed``) records in its spec, the key of its checkpoints: ``graded``
            (a judged answer's ``1 - score``; new graded sessions). None: not stored, by
            files from before it, whose design recorded ``log`` (a misnomer: their losses
            were ``1 - score`` too); kept so, their checkpoints still match. The name
            changes no number (:attr:`fixed_design_loss`).
        extra: keys this version does not know (kept and written back).
    """

    task: Mapping[str, Any]
    surrogate: str
    target: str
    metric: str
    acquisition: str
    seed: int
    kind: str = "classification"
    task_ref: str | None = None
    proposal_floor: float = 0.1
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    n_boot: int = 1000
    level: float = 0.95
    shots: int = 0
    target_shots: int | None = None
    compare: tuple[str, ...] | None = None
    pool: Mapping[str, Any] = field(default_factory=dict)
    examples: Mapping[str, Any] = field(default_factory=dict)
    cache_dir: str | None = None
    use_cache: bool = True
    version: str | None = None
    design_variant: Any = None
    answer_files: Mapping[str, Any] | None = None
    model_files: Mapping[str, str] | None = None
    planned_budget: int | None = None
    blind_ratio: float | None = None
    design_rule: Any = None
    clt_min_errors: int | None = None
    label_scoring: str | None = None
    sure_bounds: bool | None = None
    exact_share: bool | None = None
    exact_least: bool | None = None
    shared_resamples: bool | None = None
    graded_loss: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.metric not in (*METRICS, "both"):
            raise ConfigError(f"metric must be one of {', '.join(METRICS)} or both, "
                              f"got {self.metric!r}")
        acquisition(self.acquisition)
        if not (isinstance(self.proposal_floor, (int, float))
                and 0 < self.proposal_floor <= 1):
            raise ConfigError(f"the proposal floor (alpha) must be in (0, 1], got "
                              f"{self.proposal_floor!r}")
        if not (isinstance(self.level, (int, float)) and 0 < self.level < 1):
            raise ConfigError(f"level must be in (0, 1), got {self.level!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {self.seed!r}")
        if isinstance(self.n_boot, bool) or not isinstance(self.n_boot, int) or self.n_boot < 2:
            raise ConfigError(f"n_boot must be an integer >= 2, got {self.n_boot!r}")
        pb = self.planned_budget
        if pb is not None and (isinstance(pb, bool) or not isinstance(pb, int) or pb < 1):
            raise ConfigError(f"planned_budget must be a positive integer (labels), "
                              f"got {pb!r}")
        br = self.blind_ratio
        if br is not None and (isinstance(br, bool) or not isinstance(br, (int, float))
                               or not 0 < br <= 1):
            raise ConfigError(f"blind_ratio must be in (0, 1], got {br!r}")
        ce = self.clt_min_errors
        if ce is not None and (isinstance(ce, bool) or not isinstance(ce, int) or ce < 1):
            raise ConfigError(f"clt_min_errors must be a positive integer (labels), got {ce!r}")
        if self.sure_bounds is not None and not isinstance(self.sure_bounds, bool):
            raise ConfigError(f"sure_bounds must be true or false, got {self.sure_bounds!r}")
        if self.exact_share is not None and not isinstance(self.exact_share, bool):
            raise ConfigError(f"exact_share must be true or false, got {self.exact_share!r}")
        if self.exact_least is not None and not isinstance(self.exact_least, bool):
            raise ConfigError(f"exact_least must be true or false, got {self.exact_least!r}")
        if self.shared_resamples is not None and not isinstance(self.shared_resamples, bool):
            raise ConfigError(f"shared_resamples must be true or false, got "
                              f"{self.shared_resamples!r}")
        if self.graded_loss is not None and self.graded_loss not in GRADED_LOSSES:
            raise ConfigError(f"graded_loss must be one of {', '.join(GRADED_LOSSES)}, "
                              f"got {self.graded_loss!r}")
        if self.label_scoring is not None and self.label_scoring not in LABEL_SCORING:
            raise ConfigError(f"label_scoring must be one of {', '.join(LABEL_SCORING)}, "
                              f"got {self.label_scoring!r}")
        if not isinstance(self.task, Mapping):
            raise ConfigError("task must be a stored task (a JSON object)")

    # -- reading and writing the stored shape ------------------------------------------

    @classmethod
    def from_dict(cls, d: Any) -> SessionConfig:
        """Read a stored config (any shape a version of activetest wrote).

        Raises:
            ConfigError: not a JSON object, a required key missing, or a value out of
                range; the message names the key and what was expected.
        """
        if not isinstance(d, Mapping):
            raise ConfigError(f"the configuration is not a JSON object (got "
                              f"{type(d).__name__})")
        missing = [k for k in _REQUIRED if k not in d]
        if missing:
            raise ConfigError(f"the configuration lacks {', '.join(map(repr, missing))}")
        known = {f.name for f in fields(cls)} - {"extra", "noise", "compare"}
        kw: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in d.items():
            attr = _RENAMED.get(key, key)
            if attr in known:
                kw[attr] = value
            elif key not in ("noise", "compare"):
                extra[key] = value
        noise = d.get("noise")
        if noise is not None:
            if not isinstance(noise, Mapping):
                raise ConfigError("noise must be a JSON object")
            kw["noise"] = NoiseConfig(noise.get("target_nll"), noise.get("surrogate_nll"),
                                      noise.get("rule", "any"))
        if "compare" in d:
            comp = d["compare"]
            if not isinstance(comp, (list, tuple)) or not all(isinstance(c, str) for c in comp):
                raise ConfigError("compare must be a list of model specs")
            kw["compare"] = tuple(comp)
        for key in ("pool", "examples", "answer_files"):
            if key in kw and not isinstance(kw[key], Mapping):
                raise ConfigError(f"{key} must be a JSON object")
        mf = kw.get("model_files")
        if mf is not None and not (isinstance(mf, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in mf.items())):
            raise ConfigError("model_files must be a JSON object of model specs and their "
                              "files' SHA-256")
        if "proposal_floor" in kw and isinstance(kw["proposal_floor"], int) \
                and not isinstance(kw["proposal_floor"], bool):
            kw["proposal_floor"] = float(kw["proposal_floor"])
        try:
            return cls(**kw, extra=extra)
        except TypeError as exc:  # a value of the wrong type where a dataclass check ran
            raise ConfigError(f"the configuration is damaged: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The stored shape: the keys :meth:`from_dict` read, nothing added."""
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name in ("extra", "noise", "compare"):
                continue
            key = next((k for k, a in _RENAMED.items() if a == f.name), f.name)
            out[key] = getattr(self, f.name)
        out["task"] = dict(self.task)
        out["pool"], out["examples"] = dict(self.pool), dict(self.examples)
        out["noise"] = self.noise.to_dict()
        if self.kind == "classification" and "kind" not in self.extra:
            # classification sessions never stored their kind: keep the old shape
            out.pop("kind")
        if self.compare is not None:
            out["compare"] = list(self.compare)
        for key in _OPTIONAL_KEYS:
            if out[key] is None:
                del out[key]
        if self.answer_files is not None:
            out["answer_files"] = dict(self.answer_files)
        if self.model_files is not None:
            out["model_files"] = dict(self.model_files)
        out.update(self.extra)
        return out

    # -- derived properties ------------------------------------------------------------

    @property
    def target_examples(self) -> int:
        """The in-context examples the target saw (``shots`` where not stored)."""
        return int(self.shots if self.target_shots is None else self.target_shots)

    @property
    def label_scoring_mode(self) -> str:
        """How models built from specs read the classes from their label words:
        ``label_scoring``, first-token where not stored (files from before it)."""
        return self.label_scoring or LABEL_SCORING[0]

    @property
    def graded(self) -> bool:
        """A graded (judged free-form answers) session."""
        return self.kind == "graded"

    @property
    def acquisition_info(self) -> Acquisition:
        """The :class:`Acquisition` the session draws by."""
        return ACQUISITIONS[self.acquisition]

    @property
    def adaptive(self) -> bool:
        """Drawn by an adaptive design (refitted on the labels between draws)."""
        return self.acquisition_info.adaptive

    @property
    def design(self) -> str | None:
        """The adaptive design's name in :mod:`activetest.stats.adaptive` (None: fixed):
        the recorded two-metric variant if any, else the acquisition's design. An
        unknown variant is returned as stored (:mod:`activetest.session.design` refuses
        it when it builds the design)."""
        if self.design_variant is not None:
            return self.design_variant  # type: ignore[no-any-return]
        return self.acquisition_info.design

    @property
    def design_metrics(self) -> tuple[str, ...]:
        """The metrics the adaptive design gives a control for (a two-metric design's
        two, else :attr:`design_metric`); any other metric is estimated by LURE."""
        if self.design_variant is not None and self.design_variant in DESIGN_METRICS:
            return DESIGN_METRICS[self.design_variant]
        return (self.design_metric,)

    @property
    def needs_target(self) -> bool:
        """The target's predictions on the whole pool are stored (not PE)."""
        return self.acquisition_info.needs_target

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics estimated: one, or both."""
        return METRICS if self.metric == "both" else (self.metric,)

    @property
    def design_metric(self) -> str:
        """The metric an adaptive design is fitted to: log loss unless the session's
        only metric is the error rate."""
        return "error_rate" if self.metric == "error_rate" else "log_loss"

    @property
    def design_loss(self) -> str:
        """The loss name (``log``/``zero_one``) of :attr:`design_metric`."""
        return "zero_one" if self.design_metric == "error_rate" else "log"

    @property
    def fixed_design_loss(self) -> str:
        """The loss name a graded session's fixed design records (:attr:`graded_loss`;
        ``log`` where not stored, as sessions before the key recorded it)."""
        return self.graded_loss or "log"

    @property
    def confidence_level(self) -> float:
        """The intervals' confidence level (``level``)."""
        return float(self.level)
