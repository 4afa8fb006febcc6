"""A session's estimate as Every Eval Ever aggregate records (``estimate --format eee``).

One record per metric: the LURE estimate with its fixed-budget interval (martingale
CLT, the interval with a justification; docs/intervals.md) and standard error, the
method named in the record (the interval by its name in
:mod:`activetest.session.interval_names`: "fixed-budget 95% interval: valid if ..."), the
labels used as the sample count, and the pool size in the details. See
:func:`activetest.session.eee.eee_aggregate` for the record itself.

The model is named as its answers' source names it (:func:`target_identity`): an
``answers:`` target by the model name its log states (kept in the session's
``answer_files`` when it was created; ``developer`` from Every Eval Ever's
``model_info`` or the ``org`` of ``org/model``, else ``unknown``; the log's n-shot
as ``generation_config.additional_details.num_fewshot``), a model spec by its model
(a bundled name, a Hugging Face id, the file name of a local model, the model after
an ``openai:`` URL's ``#``). No local path is ever written into a record: a path in
a model name or a spec becomes its last component.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from activetest.formats.eee import eee_aggregate
from activetest.session.interval_names import (
    ANYTIME,
    BOOTSTRAP,
    EXACT_ANYTIME,
    FIXED_BUDGET,
    interval_guarantee,
    interval_name,
)
from activetest.session.records import EstimateReport
from activetest.stats.confseq import cs_claimed

if TYPE_CHECKING:
    from activetest.session.workflow import Session

__all__ = ["ADAPTIVE_METHOD", "METHOD", "SE_METHOD", "dataset_name", "eee_records",
           "estimator_method", "public_spec", "target_identity"]

METHOD = "LURE (active testing, Berrada, Kossen et al. 2025)"
#: The estimate of an adaptive design (``adaptive``, ``pe_adaptive``, the history design):
#: not the paper's LURE but LURE with the design's own controls, learnt in-run (QA: the
#: record credited its number to the paper's LURE).
ADAPTIVE_METHOD = ("adaptive LURE with the design's own controls, learnt from the labels "
                   "between draws (exactly unbiased; activetest, after active testing, "
                   "Berrada, Kossen et al. 2025)")
#: The standard error of the fixed-budget interval (martingale CLT).
SE_METHOD = ("martingale central limit theorem over the draws (finite-population factor; "
             "the fixed-budget interval's standard error)")


def estimator_method(acquisition: str | None) -> str:
    """What a session's headline estimate is, for the record: :data:`ADAPTIVE_METHOD`
    for an adaptive design's acquisition, :data:`METHOD` (the paper's LURE) otherwise."""
    from activetest.session.config import ACQUISITIONS

    acq = ACQUISITIONS.get(acquisition or "")
    return ADAPTIVE_METHOD if acq is not None and acq.adaptive else METHOD


def _named(kind: str, level: float) -> str:
    """An interval's name and guarantee (:mod:`activetest.session.interval_names`)."""
    return f"{interval_name(kind, level)}: {interval_guarantee(kind)}"


#: A local path inside a spec: what follows ``answers:``, or one that is absolute
#: (POSIX, a drive letter, UNC), home-relative or ``file:``; up to the next ``?``,
#: ``#`` or ``&``.
_PATH = re.compile(r"(?:(?<=answers:)|file:(?://)?|~(?=[\\/])|(?<![\w./\\])(?=[\\/])"
                   r"|\b[A-Za-z]:(?=[\\/]))[^?#&]+")
#: A URL (kept: its path is on a server; credentials are never stored).
_URL = re.compile(r"\b(?!file:)[A-Za-z][\w+.-]*://[^\s#]*")


def _last_component(path: str) -> str:
    text = path.removeprefix("file://").removeprefix("file:").rstrip("/\\")
    name = PureWindowsPath(text).name if "\\" in text or re.match(r"^[A-Za-z]:", text) \
        else PurePosixPath(text).name
    return name if name not in ("", "~", ".", "..") else "unknown"


def public_spec(spec: str) -> str:
    """A spec as a record may show it: every local path in it reduced to its last
    component (``answers:/home/me/run/samples.jsonl?filter=none`` ->
    ``answers:samples.jsonl?filter=none``,
    ``agree:llamacpp:/models/x.gguf`` -> ``agree:llamacpp:x.gguf``); URLs are kept
    (their credentials are never stored)."""
    out, pos = [], 0
    for url in [*_URL.finditer(spec), None]:
        end = url.start() if url is not None else len(spec)
        out.append(_PATH.sub(lambda m: _last_component(m.group()), spec[pos:end]))
        if url is not None:
            out.append(url.group())
            pos = url.end()
    return "".join(out)


def _developer(model_id: str, stated: Any) -> str:
    if isinstance(stated, str) and stated.strip():
        return stated.strip()
    bare = model_id.split(" (", 1)[0]  # without the weights it ran: _with_variant
    return bare.split("/", 1)[0] if "/" in bare else "unknown"


def _with_variant(model: str, variant: Any) -> tuple[str, dict[str, str]]:
    """A model's name with which of its weights ran (:func:`activetest.formats.model_ids.
    variant_name`: ``smollm2 (gguf_file=A.gguf)``), and the variant; the name alone where
    the model or the variant is not known (QA: two quantisations of one repository were
    one model in the records)."""
    from activetest.formats.model_ids import variant_name

    if model == "unknown" or not isinstance(variant, Mapping) or not variant:
        return model, {}
    kept = {str(k): str(v) for k, v in variant.items()}
    return variant_name(model, kept), kept


def target_identity(target: str, *, answer_files: Mapping[str, Any] | None = None,
                    target_shots: int | None = None, read_files: bool = True
                    ) -> dict[str, Any]:
    """Who answered, as an Every Eval Ever record names it: ``name``, ``id``,
    ``developer``, ``n_shot`` (None: not known), ``variant`` (which weights of the named
    model ran, where stated: ``{"gguf_file": "A.gguf"}``, also in ``name`` and ``id``,
    ``smollm2 (gguf_file=A.gguf)``; empty where not) and ``details`` (the answer file's
    name, sha256, format, harness and judgment; strings), from a session's target spec,
    the answer files' provenance and the target's shots as stored
    (:class:`~activetest.session.config.SessionConfig`). Never a local path (see the
    module docstring). ``read_files=False``: a ``table:`` target's file is not on this
    machine (its stored name is no path here): no lm-eval results are looked for, and
    its model is unknown."""
    from activetest.models.answer_files import public_model_name
    from activetest.models.registry import BUNDLED_MODELS, CALIBRATED

    target = str(target)
    details: dict[str, str] = {}
    if target.startswith("answers:"):
        prov = (answer_files or {}).get("target") or {}
        for key in ("file", "sha256", "format", "tool", "score_name", "task"):
            if prov.get(key) not in (None, ""):
                details[f"answers_{key}"] = str(prov[key])
        if "answers_file" not in details:  # a session made before provenance was kept
            details["answers_file"] = _last_component(target[len("answers:"):]
                                                      .partition("?")[0])
        model = public_model_name(prov.get("model")) or "unknown"
        n_shot = prov.get("n_shot")
        model, variant = _with_variant(model, prov.get("model_variant"))
        return {"name": model, "id": model, "variant": variant,
                "developer": _developer(model, prov.get("developer")) if model != "unknown"
                else "unknown",
                "n_shot": n_shot if isinstance(n_shot, int) and not isinstance(n_shot, bool)
                else None, "details": details}
    spec = target.removeprefix(CALIBRATED)
    head, sep, rest = spec.partition(":")
    prov = (answer_files or {}).get("target") or {}
    harness = spec.partition("?")[0]
    variant: dict[str, str] = {}
    if harness in ("lm-eval", "inspect") or prov.get("tool") in ("lm-eval", "inspect"):
        # the harness ran the target: the model its results were recorded as
        model = public_model_name(prov.get("model")) or "unknown"
        details["harness"] = str(prov.get("tool") or harness)
        model, variant = _with_variant(model, prov.get("model_variant"))
        return {"name": model, "id": model, "variant": variant,
                "developer": _developer(model, None) if model != "unknown" else "unknown",
                "n_shot": None, "details": details}
    if sep and head == "openai":
        model = rest.partition("#")[2].strip() or "unknown"
    elif spec == "pool":
        model = "unknown"
        details["answers_file"] = "the pool file's answer column"
    elif sep and head == "table":
        # predictions read from a file: the model is the one its harness's record names
        # (an lm-eval samples file's results_*.json), else not known; never the file's
        # name with its options (QA: 'tgt_preds.csv?kind=logits' as the model)
        from activetest.formats.history import lmeval_model_name, lmeval_model_variant

        path = rest.partition("?")[0]
        try:
            model, variant = (_with_variant(lmeval_model_name(path) or "unknown",
                                            lmeval_model_variant(path)) if read_files
                              else ("unknown", {}))
        except (OSError, ValueError):
            model = "unknown"
        details["predictions_file"] = _last_component(path)
    else:
        arg = rest if sep and head in ("llamacpp", "hf") else spec
        model = arg if arg in BUNDLED_MODELS else public_model_name(arg) or "unknown"
    shots = target_shots
    # a prediction table's (or the pool's) in-context examples are whatever made the
    # file: not --shots, which it ignores (init says "unknown (as the file says)")
    known = spec != "pool" and not (sep and head == "table")
    return {"name": model, "id": model, "variant": variant,
            "developer": _developer(model, None) if model != "unknown" else "unknown",
            "n_shot": shots if isinstance(shots, int) and not isinstance(shots, bool)
            and known else None, "details": details}


def dataset_name(task: str, config: Mapping[str, Any]) -> str:
    """What an Every Eval Ever record names the dataset: the harness's own task names
    where the answers came from one (lm-eval's tasks of a ``--target lm-eval`` session,
    the inspect tasks whose scores are labels, an answer log's task), else the session's
    ``task`` (QA: an lm-eval session's records named the dataset ``answers``, the
    built-in task that reads answers from a file, not the benchmark run)."""
    harness = config.get("harness")
    files = config.get("answer_files")
    target = files.get("target") if isinstance(files, Mapping) else None
    found: list[Any] = []
    if isinstance(harness, Mapping) and isinstance(harness.get("tasks"), list):
        found = list(harness["tasks"])
    elif isinstance(target, Mapping) and isinstance(target.get("tasks"), list):
        found = list(target["tasks"])
    elif isinstance(target, Mapping) and target.get("task") not in (None, ""):
        found = [target["task"]]
    names = [str(t) for t in found if isinstance(t, str) and t.strip()]
    return ", ".join(sorted(set(names))) if names else task


def _target_file(spec: str, sha256: str, session: Any) -> tuple[str, bool]:
    """``(spec, found)``: the stored table target ``spec`` with the path of its file on
    this machine (:func:`activetest.session.spec_files.locate`: of the stored SHA-256),
    whose lm-eval results name the model; or the stored spec and False where no file of
    that digest is here (the model is then unknown: the stored name is never looked for
    in the folder the command runs in, which may hold another run's file of that name).

    Raises:
        SessionError: only the file recorded for it is here, edited since (its SHA-256
            another): the results beside it may be another run's, and no stored score
            checks a model's name (:func:`~activetest.session.spec_files.edited_refusal`;
            as every command that reads the file refuses it where nothing checks it).
    """
    from activetest.session.source_names import file_sha256
    from activetest.session.spec_files import edited_refusal, locate, spec_file
    from activetest.session.store import SessionError

    try:  # (checkable: the edited file is given back, and refused here, by name)
        here = locate(spec, sha256, session, "target", checkable=True)
    except SessionError:  # not on this machine
        return spec, False
    f = spec_file(here)
    if f is not None and file_sha256(f.path) != sha256:
        raise edited_refusal(spec, sha256, f.path, session, "target",
                             read_for="the Every Eval Ever record names the target's model "
                                      "from the lm-eval results file beside it")
    return here, True


def eee_records(session: Session, report: EstimateReport, *, model_id: str | None = None,
                source_organization: str = "unknown") -> list[dict[str, Any]]:
    """One EEE aggregate record per metric of ``report``; ``model_id`` (an ``org/model``
    id) replaces the id :func:`target_identity` finds."""
    cfg = session.session_config
    target, found = cfg.target, True
    if target in (cfg.model_files or {}):  # a table: named by its name: read where it is
        target, found = _target_file(target, cfg.model_files[target], session.path)
    who = target_identity(target, answer_files=cfg.answer_files,
                          target_shots=cfg.target_shots, read_files=found)
    from activetest.session.history_neighbours import surrogate_column, surrogate_label

    # what draws, as status and the report name it (QA: "history" for --surrogate
    # column:NAME --history, a pool column beside the history's features)
    history = cfg.extra.get("history")
    surrogate = {"surrogate": public_spec(surrogate_label(str(cfg.surrogate), history))}
    column = surrogate_column(str(cfg.surrogate), history)
    if column is not None:
        surrogate["surrogate_column"] = column
    out = []

    def tidy(x: float) -> float:
        """12 significant digits: an interval's 1e-12 guard (a point interval kept around
        its estimate) printed as 0.049999999999000004 (QA)."""
        return float(f"{x:.12g}") if math.isfinite(x) else x

    for m in report.metrics.values():
        a = m.anytime
        low, high, se = ((a.fixed_low, a.fixed_high, a.se) if a is not None
                         else (m.active.low, m.active.high, m.active.std))
        low, high = tidy(low), tidy(high)
        details = {"acquisition": cfg.acquisition,
                   **surrogate, **who["details"],
                   "proposal_floor": cfg.proposal_floor, "seed": cfg.seed,
                   "bootstrap_low": tidy(m.active.low), "bootstrap_high": tidy(m.active.high),
                   "bootstrap_method": _named(BOOTSTRAP, report.level)}
        exact = a is not None and a.basis == "exact"
        if a is not None and abs(a.cs_low) != float("inf") and (
                exact or cs_claimed(report.n_labels, report.n_pool)):  # from 30 labels
            details.update(anytime_low=tidy(a.cs_low), anytime_high=tidy(a.cs_high),
                           anytime_method=_named(EXACT_ANYTIME if exact else ANYTIME,
                                                 report.level))
        method = _named(FIXED_BUDGET if a is not None else BOOTSTRAP, report.level)
        if exact:  # the few-errors rule: the exact anytime CS stands in for the CLT interval
            method = (f"{_named(EXACT_ANYTIME, report.level)}; it stands in for the "
                      f"{interval_name(FIXED_BUDGET, report.level)} here ({a.basis_note})")
        out.append(eee_aggregate(
            metric=m.metric, estimate=m.active.estimate,
            method=estimator_method(cfg.acquisition),
            standard_error_method=None if a is None else SE_METHOD,
            n_labels=report.n_labels, pool_size=report.n_pool, model=who["name"],
            dataset=dataset_name(session.task.name, session.config), ci_low=low,
            ci_high=high, level=report.level,
            # where the exact anytime CS stands in, the CLT standard error is not the uncertainty
            # reported (few errors: often 0); a zero SE (every term equal) claims certainty;
            # one label has no spread to estimate (its bootstrap's 1e-17 was given as the
            # SE, named by the estimator's method: QA)
            standard_error=None if a is None or exact or not se > 0 else se,
            interval_method=method,
            n_bootstrap=int(cfg.n_boot), model_id=model_id or who["id"],
            developer=None if model_id else who["developer"], n_shot=who["n_shot"],
            model_details=who["variant"],
            source_organization=source_organization, details=details))
    return out
