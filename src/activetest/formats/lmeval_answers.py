"""lm-eval ``--log_samples`` files as answers: ``generate_until`` records (and loglikelihood ones).

The reader :mod:`.answers` dispatches to for the ``lmeval`` format; the
class-log-probability reading of ``multiple_choice`` samples is :mod:`.lmeval`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from activetest.formats.answer_records import (
    AnswerFile,
    AnswerRecord,
    _as_unit_score,
    _choose_score,
    _Collector,
    _fail,
    _json_safe,
    _references,
    _short,
    _sidecar,
    _text_id,
    own_input,
)

# --------------------------------------------------------------------------- lm-eval


_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+)"
                           r"\.jsonl(?:\.gz)?$")


def _is_ll_pair(entry: Any) -> bool:
    """Whether ``entry`` looks like lm-eval's ``[loglikelihood, is_greedy]`` pair."""
    if not isinstance(entry, (list, tuple)) or len(entry) != 2:
        return False
    ll, greedy = entry
    if greedy not in (True, False, "True", "False"):
        return False
    try:
        float(ll)
    except (TypeError, ValueError):
        return False
    return True


_ABSENT = object()


def _lmeval_answer(rec: Mapping[str, Any], where: str, fname: str) -> str | None:
    """The generated text of one generate_until sample (None: no response recorded)."""
    args = rec.get("arguments")
    second: Any = None
    if isinstance(args, Mapping) and args:
        first_arg = args.get("gen_args_0")
        if isinstance(first_arg, Mapping):
            second = first_arg.get("arg_1", _ABSENT)
    elif isinstance(args, list) and args and isinstance(args[0], (list, tuple)):
        second = args[0][1] if len(args[0]) >= 2 else _ABSENT
    if isinstance(second, str):
        raise _fail(where, "a loglikelihood (multiple-choice) sample: its arguments are "
                           "(context, continuation) pairs, not a generation; read such "
                           "files with activetest.models.lmeval")
    if second is _ABSENT:
        raise _fail(where, "not a generate_until sample: its arguments carry no generation "
                           "settings (a loglikelihood_rolling / perplexity task?)")
    if "filtered_resps" not in rec:
        raise _fail(where, "missing key 'filtered_resps'; expected an lm-eval --log_samples "
                           "record")
    fr = rec["filtered_resps"]
    if fr is None:
        return None
    if isinstance(fr, str):
        return fr
    if not isinstance(fr, list):
        raise _fail(where, f"filtered_resps must be a list, got {_short(fr)}")
    if not fr:
        return None
    if len(fr) > 1 or _is_ll_pair(fr[0]):
        if all(_is_ll_pair(e) for e in fr):
            raise _fail(where, "filtered_resps holds [loglikelihood, is_greedy] pairs: a "
                               "multiple-choice task; read such files with "
                               "activetest.models.lmeval")
        raise _fail(where, f"filtered_resps holds {len(fr)} responses; a generate_until "
                           f"sample has one")
    entry = fr[0]
    if isinstance(entry, str):
        return entry
    if isinstance(entry, list):
        if len(entry) == 1 and isinstance(entry[0], str):
            return entry[0]
        if entry and all(isinstance(e, str) for e in entry):
            raise _fail(where, f"filter {fname!r} left {len(entry)} generations for this "
                               f"document (repeats); choose a filter that reduces them to "
                               f"one (take_first, majority_vote) with filter_name=")
        if not entry:
            return None
    raise _fail(where, f"filtered_resps[0] = {_short(entry)} is not generated text")


#: The ``model_args`` keys lm-eval takes a run's ``model_name`` from
#: (``GeneralConfigTracker._get_model_name``, in its order).
_LMEVAL_NAME_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def _lmeval_names_model(model_args: Any) -> bool:
    """Whether lm-eval's ``model_name`` of a run with these ``model_args`` (a string or a
    mapping, as its results file's ``config`` holds them) names the model: lm-eval takes
    it from the first of :data:`_LMEVAL_NAME_KEYS` in them and, where there is none,
    writes ``random_name_id()``, an 8-character id drawn anew for every run, which names
    no model (earlier versions: an empty name)."""
    if isinstance(model_args, Mapping):
        return any(k in model_args for k in _LMEVAL_NAME_KEYS)
    return isinstance(model_args, str) and any(f"{k}=" in model_args
                                               for k in _LMEVAL_NAME_KEYS)


def _lmeval_sidecar(path: Path, date: str | None, task: str | None) -> dict[str, Any]:
    """Model, n-shot and version from the ``results_<date>.json`` beside a samples file."""
    if date is None:
        return {}
    side = path.with_name(f"results_{date}.json")
    doc, out = _sidecar(side, "results_file")
    if doc is None:
        return out
    cfg = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    for key in ("model_name", "lm_eval_version", "transformers_version", "git_hash"):
        if isinstance(doc.get(key), str):
            out[key] = doc[key]
    if "model_name" in out and cfg.get("model_args") is not None \
            and not _lmeval_names_model(cfg["model_args"]):
        # no model in model_args: lm-eval wrote a random run id there (QA: taken as the
        # model, round 2 of one model was refused as another model's). Without
        # model_args (a model object passed in Python) the name is the caller's: kept
        del out["model_name"]
    if isinstance(cfg.get("model"), str):
        out["model_type"] = cfg["model"]
    if cfg.get("model_args") not in (None, "", {}):
        out["model_args"] = _json_safe(cfg["model_args"])
    nshot = doc.get("n-shot")
    if task is not None and isinstance(nshot, dict) and isinstance(nshot.get(task), int) \
            and not isinstance(nshot.get(task), bool):
        out["n_shot"] = nshot[task]
    return out


def _read_lmeval(path: Path, recs: list[tuple[str, dict[str, Any]]], *, filter_name: str | None,
                 score_name: str | None, id_field: str | None, skip_missing: bool) -> AnswerFile:
    for where, rec in recs:
        for key in ("doc_id", "filtered_resps"):
            if key not in rec:
                raise _fail(where, f"missing key {key!r}; expected an lm-eval --log_samples "
                                   f"record")
    filters = sorted({str(rec.get("filter", "none")) for _, rec in recs})
    if filter_name is None:
        if len(filters) > 1:
            raise ValueError(f"{path}: holds responses for several lm-eval filters {filters}; "
                             f"choose one with filter_name= (in an answers: spec, ?filter=NAME)")
        chosen = filters[0]
    elif filter_name not in filters:
        raise ValueError(f"{path}: no samples for filter {filter_name!r} (has {filters})")
    else:
        chosen = filter_name
    picked = [(w, r) for w, r in recs if str(r.get("filter", "none")) == chosen]

    m = _SAMPLES_NAME.match(path.name)
    task = m.group("task") if m else None
    side = _lmeval_sidecar(path, m.group("date") if m else None, task)

    metrics: list[str] = []
    for _, rec in picked:
        names = rec.get("metrics")
        if isinstance(names, list):
            for name in names:
                if isinstance(name, str) and name not in metrics:
                    metrics.append(name)
    score_key = _choose_score(path, picked, metrics, score_name,
                              lambda rec, k: rec.get(k), _as_unit_score, "metric")

    out = _Collector(path, skip_missing)
    for where, rec in picked:
        doc = rec.get("doc")
        if id_field is not None:
            if not isinstance(doc, Mapping) or id_field not in doc:
                raise _fail(where, f"doc has no field {id_field!r} (id_field=); has "
                                   f"{sorted(doc)[:12] if isinstance(doc, Mapping) else 'no doc'}")
            item_id = _text_id(doc[id_field], where, f"doc[{id_field!r}]")
            out.claim(item_id, where, f"doc[{id_field!r}]")
        else:
            item_id = _text_id(rec["doc_id"], where, "doc_id")
            out.claim(item_id, where, "doc_id")
        text = _lmeval_answer(rec, where, chosen)
        if text is None:
            out.missing(item_id, where, "no filtered response")
            continue
        prompt: dict[str, str] = {}
        if isinstance(doc, Mapping):
            prompt = {str(k): v for k, v in doc.items() if isinstance(v, str) and k != id_field}
        args = rec.get("arguments")
        prompt_text: str | None = None
        if isinstance(args, Mapping) and isinstance(args.get("gen_args_0"), Mapping):
            a0 = args["gen_args_0"].get("arg_0")
            prompt_text = a0 if isinstance(a0, str) else None
            gen_kwargs = args["gen_args_0"].get("arg_1")
        elif isinstance(args, list) and args and isinstance(args[0], (list, tuple)) and args[0]:
            prompt_text = args[0][0] if isinstance(args[0][0], str) else None
            gen_kwargs = args[0][1] if len(args[0]) > 1 else None
        else:
            gen_kwargs = None
        if not prompt and prompt_text is not None:
            prompt = {"input": own_input(prompt_text, side.get("n_shot"))}
        raw_resp: Any = rec.get("resps")
        if isinstance(raw_resp, list) and raw_resp and isinstance(raw_resp[0], list) \
                and raw_resp[0] and isinstance(raw_resp[0][0], str):
            raw_resp = raw_resp[0][0] if len(raw_resp[0]) == 1 else raw_resp[0]
        meta: dict[str, Any] = {
            "task": task, "doc_id": rec["doc_id"], "filter": chosen,
            "metrics": {k: _json_safe(rec.get(k)) for k in metrics if k in rec},
            "response": text, "raw_response": _json_safe(raw_resp),
            "prompt_text": prompt_text,
        }
        if gen_kwargs is not None:
            meta["gen_kwargs"] = _json_safe(gen_kwargs)
        for key in ("doc_hash", "prompt_hash", "target_hash"):
            if key in rec:
                meta[key] = rec[key]
        score = _as_unit_score(rec.get(score_key)) if score_key else None
        out.add(AnswerRecord(item_id=item_id, answer=text.strip(), prompt=prompt,
                             references=_references(rec.get("target"), where), score=score,
                             meta=meta))
    if not out.records and not out.skipped:
        raise ValueError(f"{path}: no samples")
    prov = {"filter": chosen, "filters": filters, "id_field": id_field,
            "metrics": metrics, **side}
    model = side.get("model_name")
    return AnswerFile(path=path, format="lmeval", records=tuple(out.records), model=model,
                      task=task, n_shot=side.get("n_shot"), score_name=score_key,
                      skipped=tuple(out.skipped), provenance=prov)
