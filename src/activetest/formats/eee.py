"""Every Eval Ever: instance files read as answers, aggregate records written and checked.

Instance files (``<uuid>_samples.jsonl``) are the reader :mod:`.answers` dispatches to
for the ``eee`` format (:func:`_read_eee`). An estimate is written as an aggregate
record (``estimate --format eee``; built from a session by
:mod:`activetest.session.eee_report`).

Every Eval Ever (https://github.com/evaleval/every_eval_ever) is a shared schema
for evaluation results. :func:`eee_aggregate` turns one estimate, given as plain
numbers, into a record of its aggregate schema (``eval.schema.json``, version
0.3.0): the run's source and library (activetest), the model, and one
``evaluation_results`` entry whose ``score_details.uncertainty`` names how the
uncertainty was computed::

    "score_details": {
      "score": 0.231,
      "details": {"estimator": "LURE + bootstrap", "labels": "200", "pool_size": "2000", ...},
      "uncertainty": {
        "standard_error": {"value": 0.027, "method": "LURE + bootstrap"},
        "confidence_interval": {"lower": 0.18, "upper": 0.29, "confidence_level": 0.95,
                                "method": "LURE + bootstrap"},
        "num_samples": 200, "num_bootstrap_samples": 2000}}

``num_samples`` is the number of labels the estimate used (not the pool size,
which is in ``details`` and ``source_data``). Timestamps are Unix epoch seconds
written as strings, as the schema asks for ``retrieved_timestamp`` and as EEE's
own converters write ``evaluation_timestamp``.

:func:`check_eee_aggregate` is our own check of what the schema requires (the
required fields, their types and enumerations, no unknown top-level fields);
:func:`eee_datastore_path` is where EEE's datastore expects the file
(``data/<benchmark>/<developer>/<model>/<uuid4>.json``).
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from activetest import __version__
from activetest.formats.answer_records import (
    AnswerFile,
    AnswerRecord,
    _as_unit_score,
    _choose_score,
    _Collector,
    _fail,
    _json_safe,
    _references,
    _sidecar,
    _text_id,
    own_input,
)
from activetest.formats.model_ids import model_variant

# --------------------------------------------------------------------------- Every Eval Ever


_EEE_REQUIRED = ("sample_id", "evaluation", "input")
_UUID_SAMPLES = re.compile(r"^(?P<uuid>[0-9A-Fa-f-]{36})_samples\.jsonl(?:\.gz)?$")


def _eee_answer(rec: Mapping[str, Any], where: str) -> str | None:
    attrib = rec.get("answer_attribution")
    if isinstance(attrib, list):
        terminal = [a for a in attrib if isinstance(a, Mapping) and a.get("is_terminal") is True
                    and isinstance(a.get("extracted_value"), str)]
        if terminal and terminal[-1]["extracted_value"] != "":
            return str(terminal[-1]["extracted_value"])
    out = rec.get("output")
    if isinstance(out, Mapping) and "raw" in out:
        raw = out["raw"]
        if isinstance(raw, str):
            return raw
        if isinstance(raw, list):
            if len(raw) == 1 and isinstance(raw[0], str):
                return raw[0]
            if len(raw) > 1:
                raise _fail(where, f"output.raw holds {len(raw)} responses and no terminal "
                                   f"answer_attribution says which is the answer")
    msgs = rec.get("messages") if rec.get("messages") is not None else rec.get("interactions")
    if isinstance(msgs, list):
        said = [m.get("content") for m in msgs if isinstance(m, Mapping)
                and m.get("role") == "assistant" and isinstance(m.get("content"), str)]
        if said:
            return str(said[-1])
    if isinstance(attrib, list) and any(isinstance(a, Mapping) and a.get("is_terminal") is True
                                        and a.get("extracted_value") == "" for a in attrib):
        return ""
    return None


def _eee_sidecar(path: Path, evaluation: str | None) -> dict[str, Any]:
    m = _UUID_SAMPLES.match(path.name)
    if not m:
        return {}
    side = path.with_name(f"{m.group('uuid')}.json")
    doc, out = _sidecar(side, "aggregate_file")
    if doc is None:
        return out
    mi = doc.get("model_info") if isinstance(doc.get("model_info"), Mapping) else {}
    for k in ("id", "name", "developer"):
        if isinstance(mi.get(k), str):
            out[f"model_{k}"] = mi[k]
    variant = model_variant(mi.get("additional_details"))  # as activetest writes it
    if variant:
        out["model_variant"] = variant
    lib = doc.get("eval_library") if isinstance(doc.get("eval_library"), Mapping) else {}
    if isinstance(lib.get("name"), str):
        out["eval_library"] = f"{lib.get('name')} {lib.get('version', '')}".strip()
    for res in doc.get("evaluation_results") or []:
        if not isinstance(res, Mapping):
            continue
        if evaluation is not None and evaluation not in (res.get("evaluation_name"),
                                                         res.get("evaluation_result_id")):
            continue
        gen = res.get("generation_config")
        add = gen.get("additional_details") if isinstance(gen, Mapping) else None
        if isinstance(add, Mapping) and str(add.get("num_fewshot", "")).isdigit():
            out["n_shot"] = int(add["num_fewshot"])
            break
    return out


def _read_eee(path: Path, recs: list[tuple[str, dict[str, Any]]], *,
              evaluation_name: str | None, score_name: str | None,
              skip_missing: bool) -> AnswerFile:
    for where, rec in recs:
        for key in _EEE_REQUIRED:
            if key not in rec:
                raise _fail(where, f"missing key {key!r}; expected an Every Eval Ever "
                                   f"instance-level record")
        if not isinstance(rec["evaluation"], Mapping):
            raise _fail(where, "'evaluation' must be an object with score and is_correct")
        if not isinstance(rec["input"], Mapping):
            raise _fail(where, "'input' must be an object with raw and reference")

    def group(rec: Mapping[str, Any]) -> str:
        return str(rec.get("evaluation_result_id") or rec.get("evaluation_name") or "")

    groups = sorted({group(r) for _, r in recs})
    if evaluation_name is None:
        if len(groups) > 1:
            raise ValueError(f"{path}: holds records of several evaluations {groups}; choose "
                             f"one with evaluation_name= (in an answers: spec, ?evaluation=NAME)")
        picked = recs
    else:
        picked = [(w, r) for w, r in recs
                  if evaluation_name in (r.get("evaluation_result_id"), r.get("evaluation_name"))]
        if not picked:
            names = sorted({str(r.get("evaluation_name")) for _, r in recs} | set(groups))
            raise ValueError(f"{path}: no records for evaluation {evaluation_name!r} "
                             f"(has {names})")
        results = sorted({group(r) for _, r in picked})
        if len(results) > 1:
            raise ValueError(f"{path}: evaluation {evaluation_name!r} has several results "
                             f"{results} (one record per sample each); choose one of them "
                             f"with evaluation_name= (in an answers: spec, ?evaluation=NAME)")
    models = sorted({str(r.get("model_id")) for _, r in picked})
    if len(models) > 1:
        raise ValueError(f"{path}: holds answers of several models {models}; one file "
                         f"must hold one model's answers")

    def get(rec: Any, name: str) -> Any:
        ev = rec.get("evaluation")
        return ev.get(name) if isinstance(ev, Mapping) else None

    def conv(value: Any) -> float | None:
        return None if isinstance(value, str) else _as_unit_score(value)

    def conv_correct(value: Any) -> float | None:
        return float(value) if isinstance(value, bool) else None

    if score_name not in (None, "", "score", "is_correct"):
        raise ValueError(f"{path}: score_name for Every Eval Ever files is 'score', "
                         f"'is_correct' or '' (none), got {score_name!r}")
    if score_name is None:
        score_key = _choose_score(path, picked, ["score"], None, get, conv, "evaluation field")
        if score_key is None:
            score_key = _choose_score(path, picked, ["is_correct"], None, get, conv_correct,
                                      "evaluation field")
    elif score_name == "is_correct":
        score_key = _choose_score(path, picked, ["is_correct"], score_name, get, conv_correct,
                                  "evaluation field")
    else:
        score_key = _choose_score(path, picked, ["score", "is_correct"], score_name, get, conv,
                                  "evaluation field")

    evals = sorted({str(r.get("evaluation_name")) for _, r in picked})
    task = evals[0] if len(evals) == 1 else None
    side = _eee_sidecar(path, evaluation_name or task)
    out = _Collector(path, skip_missing)
    for where, rec in picked:
        item_id = _text_id(rec["sample_id"], where, "sample_id")
        out.claim(item_id, where, "sample_id")
        answer = _eee_answer(rec, where)
        if answer is None:
            out.missing(item_id, where, "no terminal answer_attribution, output.raw or "
                                        "assistant message")
            continue
        inp = rec["input"]
        raw_in = inp.get("raw")
        prompt = {"input": own_input(raw_in, side.get("n_shot"))} \
            if isinstance(raw_in, str) else {}
        ev = rec["evaluation"]
        if score_key == "is_correct":
            score = conv_correct(ev.get("is_correct"))
        elif score_key == "score":
            score = conv(ev.get("score"))
        else:
            score = None
        out_raw = rec.get("output").get("raw") if isinstance(rec.get("output"), Mapping) \
            else None
        meta: dict[str, Any] = {
            "evaluation_name": rec.get("evaluation_name"),
            "evaluation_id": rec.get("evaluation_id"), "model_id": rec.get("model_id"),
            "schema_version": rec.get("schema_version"),
            "interaction_type": rec.get("interaction_type"),
            "eee_score": _json_safe(ev.get("score")), "is_correct": ev.get("is_correct"),
            "raw_output": _json_safe(out_raw),
        }
        for key in ("evaluation_result_id", "sample_hash", "metadata", "error"):
            if rec.get(key) is not None:
                meta[key] = _json_safe(rec[key])
        if isinstance(raw_in, str):
            meta["prompt_text"] = raw_in
        if inp.get("formatted") is not None:
            meta["formatted_input"] = inp["formatted"]
        if inp.get("choices") is not None:
            meta["choices"] = _json_safe(inp["choices"])
        out.add(AnswerRecord(item_id=item_id, answer=answer.strip(), prompt=prompt,
                             references=_references(inp.get("reference"), where),
                             score=score, meta=meta))
    prov = {"evaluations": groups, "evaluation_name": evaluation_name,
            "schema_versions": sorted({str(r.get("schema_version")) for _, r in picked}),
            "evaluation_ids": sorted({str(r.get("evaluation_id")) for _, r in picked}), **side}
    return AnswerFile(path=path, format="eee", records=tuple(out.records),
                      model=models[0] if models and models[0] != "None" else None, task=task,
                      n_shot=side.get("n_shot"), score_name=score_key,
                      skipped=tuple(out.skipped), provenance=prov)


# --------------------------------------------------------------------------- aggregate records


__all__ = ["EEE_SCHEMA_VERSION", "KNOWN_METRICS", "check_eee_aggregate", "eee_aggregate",
           "eee_datastore_path"]

EEE_SCHEMA_VERSION = "0.3.0"

#: metric -> (lower_is_better, min_score, max_score, unit, description)
KNOWN_METRICS: dict[str, tuple[bool, float | str, float | str, str, str]] = {
    "error_rate": (True, 0.0, 1.0, "proportion", "share of items the target gets wrong"),
    "log_loss": (True, 0.0, "Infinity", "nats",
                 "mean negative log-probability of the correct class"),
    "risk": (True, 0.0, 1.0, "proportion", "mean judged loss, 1 - score of each answer"),
    "accuracy": (False, 0.0, 1.0, "proportion", "share of items the target gets right"),
    "mean_score": (False, 0.0, 1.0, "proportion", "mean judged score of the answers"),
}

_RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
_DEPLOYMENT = ("self_deployed", "externally_managed", "unknown")
_AVAILABILITY = ("open_weights", "closed_weights", "unknown")
_TOP_LEVEL = ("schema_version", "evaluation_id", "evaluation_timestamp", "retrieved_timestamp",
              "source_metadata", "eval_library", "model_info", "evaluation_results",
              "detailed_evaluation_results")
_REQUIRED = ("schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata",
             "model_info", "eval_library", "evaluation_results")


def _epoch(value: float | int | str | datetime | None, what: str) -> str:
    """A timestamp as Unix epoch seconds, written as a string."""
    if value is None:
        return repr(float(time.time()))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{what}: a datetime needs a time zone (got a naive one)")
        return repr(float(value.timestamp()))
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected a time, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{what}: {value!r} is not a Unix time")
        return repr(float(value))
    if isinstance(value, str):
        text = value.strip()
        try:
            return repr(float(text))
        except ValueError:
            pass
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{what}: {value!r} is neither Unix seconds nor an ISO 8601 "
                             f"time") from None
        return _epoch(parsed, what)
    raise ValueError(f"{what}: expected a time, got {type(value).__name__}")


def _number(value: Any, what: str, *, low: float | None = None,
            high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {value!r}")
    if (low is not None and x < low) or (high is not None and x > high):
        raise ValueError(f"{what} must lie in [{low}, {high}], got {value!r}")
    return x


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{what} must be an integer >= {low}, got {value!r}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value.strip()


def _choice(value: str, what: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise ValueError(f"{what} must be one of {list(options)}, got {value!r}")
    return value


def _bound(value: float | str, what: str) -> float | str:
    if value in ("Infinity", "-Infinity"):
        return value
    return _number(value, what)


def eee_aggregate(*, metric: str, estimate: float, method: str, n_labels: int,
                  pool_size: int, model: str, dataset: str,
                  ci_low: float | None = None, ci_high: float | None = None,
                  level: float | None = None, standard_error: float | None = None,
                  interval_method: str | None = None, n_bootstrap: int | None = None,
                  evaluated_at: float | str | datetime | None = None,
                  retrieved_at: float | str | datetime | None = None,
                  model_id: str | None = None, developer: str | None = None,
                  lower_is_better: bool | None = None, min_score: float | str | None = None,
                  max_score: float | str | None = None, metric_unit: str | None = None,
                  description: str | None = None, source_organization: str = "unknown",
                  evaluator_relationship: str = "other", deployment_type: str = "unknown",
                  model_availability: str = "unknown", dataset_url: str | None = None,
                  hf_repo: str | None = None, hf_split: str | None = None,
                  details: Mapping[str, Any] | None = None,
                  evaluation_id: str | None = None,
                  n_shot: int | None = None,
                  standard_error_method: str | None = None,
                  model_details: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One estimate as an Every Eval Ever aggregate record (a JSON-serialisable dict).

    Args:
        metric: what was estimated, e.g. ``error_rate``, ``log_loss``, ``risk``
            (:data:`KNOWN_METRICS` know their direction and range; others need
            ``lower_is_better``, ``min_score`` and ``max_score``).
        estimate: the point estimate.
        method: how it was estimated and its uncertainty computed, e.g.
            ``"LURE + bootstrap"``; named in ``standard_error.method`` and in
            ``details["estimator"]``.
        n_labels: labels the estimate used (``uncertainty.num_samples``).
        pool_size: items in the evaluated pool.
        model: the target's name as the user knows it (``model_info.name``).
        dataset: the pool / benchmark name (``evaluation_name`` and
            ``source_data.dataset_name``).
        ci_low, ci_high, level: the confidence interval and its level (e.g. 0.95);
            both bounds or neither.
        standard_error: the estimate's standard error.
        interval_method: how the interval was computed (default: ``method``).
        standard_error_method: how the standard error was computed (default:
            ``method``), e.g. the martingale CLT of an adaptive design's estimate.
        n_bootstrap: bootstrap resamples, if a bootstrap was used.
        evaluated_at: when the evaluation ran (default: now); Unix seconds, an
            aware datetime or an ISO 8601 string.
        retrieved_at: when this record was made (default: now).
        model_id: ``model_info.id`` in Hugging Face form (``org/name``; default:
            ``model``); ``developer`` defaults to its ``org`` part.
        lower_is_better, min_score, max_score, metric_unit, description: the
            metric's config (defaults from :data:`KNOWN_METRICS`).
        source_organization: who provides the result
            (``source_metadata.source_organization_name``).
        evaluator_relationship: ``first_party``, ``third_party``,
            ``collaborative`` or ``other``.
        deployment_type, model_availability: ``model_info.additional_details``
            (``self_deployed``/``externally_managed``/``unknown``;
            ``open_weights``/``closed_weights``/``unknown``).
        dataset_url: the dataset's URL (``source_data`` of type ``url``), or
        hf_repo, hf_split: a Hugging Face dataset (type ``hf_dataset``); neither:
            type ``other``.
        details: more ``score_details.details`` (values written as strings).
        evaluation_id: default ``<dataset>/<model_id>/<retrieved timestamp>``.
        n_shot: the in-context examples the model's answers were made with, where
            known (``generation_config.additional_details.num_fewshot``, as Every
            Eval Ever's converters write it).
        model_details: more ``model_info.additional_details`` (strings): which weights of
            the named model ran (``gguf_file``, ``revision``, ...:
            :data:`activetest.formats.model_ids.VARIANT_ARGS`), read back by the instance
            reader as the model's variant.

    Raises:
        ValueError: a missing or out-of-range value (names which), an unknown
            metric without its direction and range, or an enumeration outside the
            schema's.
    """
    metric = _text(metric, "metric")
    method = _text(method, "method")
    model = _text(model, "model")
    dataset = _text(dataset, "dataset")
    score = _number(estimate, "estimate")
    n_labels = _count(n_labels, "n_labels", 1)
    pool_size = _count(pool_size, "pool_size", 1)
    if n_labels > pool_size:
        raise ValueError(f"n_labels {n_labels} exceeds pool_size {pool_size} (labels are "
                         f"items drawn from the pool)")
    known = KNOWN_METRICS.get(metric)
    if known is None and (lower_is_better is None or min_score is None or max_score is None):
        raise ValueError(f"metric {metric!r} is not one of {sorted(KNOWN_METRICS)}; give "
                         f"lower_is_better, min_score and max_score")
    lib = lower_is_better if lower_is_better is not None else known[0]  # type: ignore[index]
    if not isinstance(lib, bool):
        raise ValueError(f"lower_is_better must be True or False, got {lib!r}")
    lo = _bound(min_score if min_score is not None else known[1],  # type: ignore[index]
                "min_score")
    hi = _bound(max_score if max_score is not None else known[2],  # type: ignore[index]
                "max_score")
    unit = metric_unit or (known[3] if known else "")
    what = description or (known[4] if known else metric)
    mid = _text(model_id, "model_id") if model_id is not None else model
    dev = _text(developer, "developer") if developer is not None else (
        mid.split("/", 1)[0] if "/" in mid else "unknown")
    _choice(evaluator_relationship, "evaluator_relationship", _RELATIONSHIPS)
    _choice(deployment_type, "deployment_type", _DEPLOYMENT)
    _choice(model_availability, "model_availability", _AVAILABILITY)

    uncertainty: dict[str, Any] = {"num_samples": n_labels}
    if standard_error is not None:
        uncertainty["standard_error"] = {"value": _number(standard_error, "standard_error",
                                                          low=0.0),
                                         "method": method if standard_error_method is None
                                         else _text(standard_error_method,
                                                    "standard_error_method")}
    if (ci_low is None) != (ci_high is None):
        raise ValueError("give both ci_low and ci_high, or neither")
    if ci_low is not None and ci_high is not None:
        a, b = _number(ci_low, "ci_low"), _number(ci_high, "ci_high")
        if a > b:
            raise ValueError(f"ci_low {a} is above ci_high {b}")
        ci: dict[str, Any] = {"lower": a, "upper": b,
                              "method": _text(interval_method, "interval_method")
                              if interval_method is not None else method}
        if level is not None:
            ci["confidence_level"] = _number(level, "level", low=0.0, high=1.0)
            if not 0.0 < ci["confidence_level"] < 1.0:
                raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
        uncertainty["confidence_interval"] = ci
    elif level is not None:
        raise ValueError("level given without ci_low and ci_high")
    if n_bootstrap is not None:
        uncertainty["num_bootstrap_samples"] = _count(n_bootstrap, "n_bootstrap", 1)

    extra = {"estimator": method, "labels": str(n_labels), "pool_size": str(pool_size),
             "labelled_fraction": f"{n_labels / pool_size:.6g}", "metric": metric}
    for k, v in (details or {}).items():
        extra[str(k)] = v if isinstance(v, str) else str(v)

    if dataset_url is not None:
        source_data: dict[str, Any] = {"dataset_name": dataset, "source_type": "url",
                                       "url": [_text(dataset_url, "dataset_url")]}
    elif hf_repo is not None:
        source_data = {"dataset_name": dataset, "source_type": "hf_dataset",
                       "hf_repo": _text(hf_repo, "hf_repo"), "samples_number": pool_size}
        if hf_split is not None:
            source_data["hf_split"] = _text(hf_split, "hf_split")
    else:
        source_data = {"dataset_name": dataset, "source_type": "other"}
    source_data.setdefault("additional_details", {})["pool_size"] = str(pool_size)

    retrieved = _epoch(retrieved_at, "retrieved_at")
    evaluated = _epoch(evaluated_at, "evaluated_at") if evaluated_at is not None else retrieved
    metric_config: dict[str, Any] = {
        "evaluation_description": what, "metric_id": metric, "metric_name": metric,
        "metric_kind": metric, "lower_is_better": lib, "score_type": "continuous",
        "min_score": lo, "max_score": hi,
        "additional_details": {"estimator": method},
    }
    if unit:
        metric_config["metric_unit"] = unit
    record: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": _text(evaluation_id, "evaluation_id") if evaluation_id is not None
        else f"{dataset}/{mid}/{retrieved}",
        "evaluation_timestamp": evaluated,
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "activetest", "source_type": "evaluation_run",
            "source_organization_name": _text(source_organization, "source_organization"),
            "evaluator_relationship": evaluator_relationship,
        },
        "eval_library": {"name": "activetest", "version": __version__,
                         "additional_details": {"method": method}},
        "model_info": {
            "name": model, "id": mid, "developer": dev,
            "additional_details": {**{str(k): str(v) for k, v in (model_details or {}).items()},
                                   "deployment_type": deployment_type,
                                   "model_availability": model_availability},
        },
        "evaluation_results": [{
            "evaluation_result_id": f"{metric}:{method}",
            "evaluation_name": dataset,
            "source_data": source_data,
            "evaluation_timestamp": evaluated,
            "metric_config": metric_config,
            "score_details": {"score": score, "details": extra, "uncertainty": uncertainty},
        }],
    }
    if n_shot is not None:
        record["evaluation_results"][0]["generation_config"] = {
            "additional_details": {"num_fewshot": str(_count(n_shot, "n_shot", 0))}}
    problems = check_eee_aggregate(record)
    if problems:  # pragma: no cover - a bug here, not bad input
        raise AssertionError(f"built an invalid EEE record: {problems}")
    return record


# --------------------------------------------------------------------------- our own check


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _strings(obj: Any, where: str, out: list[str]) -> None:
    if obj is None:
        return
    if not isinstance(obj, Mapping):
        out.append(f"{where}: must be an object")
        return
    for k, v in obj.items():
        if not isinstance(v, str):
            out.append(f"{where}.{k}: must be a string (all additional_details values are)")


def _need(obj: Mapping[str, Any], keys: tuple[str, ...], where: str, out: list[str]) -> None:
    for k in keys:
        if k not in obj:
            out.append(f"{where}: missing required {k!r}")


def check_eee_aggregate(record: Any) -> list[str]:
    """What an aggregate record lacks against Every Eval Ever's schema 0.3.0 (empty: none).

    Checks the schema's required fields at every level, their JSON types, the
    enumerations (source type, evaluator relationship, deployment, availability,
    score type), the ``source_data`` variants, the ``continuous``/``levels``
    requirements, that ``additional_details``/``details`` values are strings, that
    numbers are finite, and that no unknown top-level field is present.
    """
    out: list[str] = []
    if not isinstance(record, Mapping):
        return ["record: must be an object"]
    _need(record, _REQUIRED, "record", out)
    for k in record:
        if k not in _TOP_LEVEL:
            out.append(f"record: unknown top-level field {k!r} (the schema allows no others)")
    for k in ("schema_version", "evaluation_id", "retrieved_timestamp", "evaluation_timestamp"):
        if k in record and not isinstance(record[k], str):
            out.append(f"{k}: must be a string")
    sm = record.get("source_metadata")
    if isinstance(sm, Mapping):
        _need(sm, ("source_type", "source_organization_name", "evaluator_relationship"),
              "source_metadata", out)
        if "source_type" in sm and sm["source_type"] not in ("documentation", "evaluation_run"):
            out.append("source_metadata.source_type: must be documentation or evaluation_run")
        if "evaluator_relationship" in sm and sm["evaluator_relationship"] not in _RELATIONSHIPS:
            out.append(f"source_metadata.evaluator_relationship: must be one of "
                       f"{list(_RELATIONSHIPS)}")
        _strings(sm.get("additional_details"), "source_metadata.additional_details", out)
    elif "source_metadata" in record:
        out.append("source_metadata: must be an object")
    lib = record.get("eval_library")
    if isinstance(lib, Mapping):
        _need(lib, ("name", "version"), "eval_library", out)
        for k in ("name", "version"):
            if k in lib and not isinstance(lib[k], str):
                out.append(f"eval_library.{k}: must be a string")
        _strings(lib.get("additional_details"), "eval_library.additional_details", out)
    elif "eval_library" in record:
        out.append("eval_library: must be an object")
    mi = record.get("model_info")
    if isinstance(mi, Mapping):
        _need(mi, ("name", "id", "additional_details"), "model_info", out)
        for k in ("name", "id", "developer"):
            if k in mi and not isinstance(mi[k], str):
                out.append(f"model_info.{k}: must be a string")
        ad = mi.get("additional_details")
        if isinstance(ad, Mapping):
            _need(ad, ("deployment_type", "model_availability"), "model_info.additional_details",
                  out)
            if "deployment_type" in ad and ad["deployment_type"] not in _DEPLOYMENT:
                out.append(f"model_info.additional_details.deployment_type: must be one of "
                           f"{list(_DEPLOYMENT)}")
            if "model_availability" in ad and ad["model_availability"] not in _AVAILABILITY:
                out.append(f"model_info.additional_details.model_availability: must be one of "
                           f"{list(_AVAILABILITY)}")
            _strings(ad, "model_info.additional_details", out)
        elif "additional_details" in mi:
            out.append("model_info.additional_details: must be an object")
    elif "model_info" in record:
        out.append("model_info: must be an object")
    results = record.get("evaluation_results")
    if "evaluation_results" in record and not isinstance(results, list):
        out.append("evaluation_results: must be an array")
    for i, res in enumerate(results if isinstance(results, list) else []):
        _check_result(res, f"evaluation_results[{i}]", out)
    return out


def _check_result(res: Any, where: str, out: list[str]) -> None:
    if not isinstance(res, Mapping):
        out.append(f"{where}: must be an object")
        return
    _need(res, ("evaluation_name", "source_data", "metric_config", "score_details"), where, out)
    if "evaluation_name" in res and not isinstance(res["evaluation_name"], str):
        out.append(f"{where}.evaluation_name: must be a string")
    sd = res.get("source_data")
    if isinstance(sd, Mapping):
        kind = sd.get("source_type")
        need = {"url": ("dataset_name", "source_type", "url"),
                "hf_dataset": ("dataset_name", "source_type"),
                "other": ("dataset_name", "source_type")}.get(kind)  # type: ignore[arg-type]
        if need is None:
            out.append(f"{where}.source_data.source_type: must be url, hf_dataset or other")
        else:
            _need(sd, need, f"{where}.source_data", out)
        if kind == "url" and not (isinstance(sd.get("url"), list) and sd["url"]
                                  and all(isinstance(u, str) for u in sd["url"])):
            out.append(f"{where}.source_data.url: must be a non-empty array of strings")
        _strings(sd.get("additional_details"), f"{where}.source_data.additional_details", out)
    elif "source_data" in res:
        out.append(f"{where}.source_data: must be an object")
    mc = res.get("metric_config")
    if isinstance(mc, Mapping):
        _need(mc, ("lower_is_better",), f"{where}.metric_config", out)
        if "lower_is_better" in mc and not isinstance(mc["lower_is_better"], bool):
            out.append(f"{where}.metric_config.lower_is_better: must be a boolean")
        st = mc.get("score_type")
        if st is not None and st not in ("binary", "continuous", "levels"):
            out.append(f"{where}.metric_config.score_type: must be binary, continuous or levels")
        if st == "levels":
            _need(mc, ("level_names", "has_unknown_level"), f"{where}.metric_config", out)
        if st == "continuous":
            _need(mc, ("min_score", "max_score"), f"{where}.metric_config", out)
        for k in ("min_score", "max_score"):
            v = mc.get(k)
            if k in mc and v is not None and not _is_num(v) and v not in ("Infinity",
                                                                           "-Infinity"):
                out.append(f"{where}.metric_config.{k}: must be a number, 'Infinity', "
                           f"'-Infinity' or null")
        _strings(mc.get("additional_details"), f"{where}.metric_config.additional_details", out)
    elif "metric_config" in res:
        out.append(f"{where}.metric_config: must be an object")
    gc = res.get("generation_config")
    if isinstance(gc, Mapping):
        _strings(gc.get("additional_details"), f"{where}.generation_config.additional_details",
                 out)
    elif gc is not None:
        out.append(f"{where}.generation_config: must be an object")
    sc = res.get("score_details")
    if isinstance(sc, Mapping):
        _need(sc, ("score",), f"{where}.score_details", out)
        if "score" in sc and not _is_num(sc["score"]):
            out.append(f"{where}.score_details.score: must be a finite number")
        _strings(sc.get("details"), f"{where}.score_details.details", out)
        unc = sc.get("uncertainty")
        if isinstance(unc, Mapping):
            _check_uncertainty(unc, f"{where}.score_details.uncertainty", out)
        elif unc is not None:
            out.append(f"{where}.score_details.uncertainty: must be an object")
    elif "score_details" in res:
        out.append(f"{where}.score_details: must be an object")


def _check_uncertainty(unc: Mapping[str, Any], where: str, out: list[str]) -> None:
    se = unc.get("standard_error")
    if se is not None:
        if not isinstance(se, Mapping) or not _is_num(se.get("value")):
            out.append(f"{where}.standard_error: needs a numeric 'value'")
        elif "method" in se and not isinstance(se["method"], str):
            out.append(f"{where}.standard_error.method: must be a string")
    ci = unc.get("confidence_interval")
    if ci is not None:
        if not isinstance(ci, Mapping) or not (_is_num(ci.get("lower"))
                                               and _is_num(ci.get("upper"))):
            out.append(f"{where}.confidence_interval: needs numeric 'lower' and 'upper'")
        else:
            lvl = ci.get("confidence_level")
            if lvl is not None and not (_is_num(lvl) and 0 <= lvl <= 1):
                out.append(f"{where}.confidence_interval.confidence_level: must lie in [0, 1]")
            if "method" in ci and not isinstance(ci["method"], str):
                out.append(f"{where}.confidence_interval.method: must be a string")
    for k in ("num_samples", "num_bootstrap_samples"):
        v = unc.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            out.append(f"{where}.{k}: must be an integer")
    v = unc.get("standard_deviation")
    if v is not None and not _is_num(v):
        out.append(f"{where}.standard_deviation: must be a number")


_PORTABLE = re.compile(r"[^A-Za-z0-9._+=-]+")


def eee_datastore_path(record: Mapping[str, Any], file_uuid: str | None = None) -> str:
    """Where Every Eval Ever's datastore keeps the record.

    The path is ``data/<benchmark>/<developer>/<model>/<uuid4>.json``, relative to
    the datastore's root.

    ``<benchmark>`` is the first result's ``evaluation_name``, ``<developer>``
    and ``<model>`` come from ``model_info`` (unsafe characters become ``_``);
    ``file_uuid`` (a UUID4; default: a new one) names the file.
    """
    def part(text: str) -> str:
        cleaned = _PORTABLE.sub("_", text).strip("._ ") or "unknown"
        return "_data" if cleaned == "data" else cleaned

    mi = record["model_info"]
    mid = str(mi["id"])
    developer = str(mi.get("developer") or (mid.split("/", 1)[0] if "/" in mid else "unknown"))
    model = mid.split("/", 1)[1] if "/" in mid else mid
    bench = str(record["evaluation_results"][0]["evaluation_name"])
    u = uuid.UUID(file_uuid) if file_uuid is not None else uuid.uuid4()
    if u.version != 4:
        raise ValueError(f"file_uuid must be a UUID4, got {file_uuid!r}")
    return f"data/{part(bench)}/{part(developer)}/{part(model)}/{u}.json"
