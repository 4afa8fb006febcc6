"""inspect_ai logs (``.eval`` zip archives and ``.json`` logs) as answers.

The reader :mod:`.answers` dispatches to for the ``inspect`` format.
"""

from __future__ import annotations

import io
import json
import re
import struct
import sys
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activetest.formats.answer_records import (
    _ZIP,
    AnswerFile,
    AnswerRecord,
    _choose_score,
    _Collector,
    _fail,
    _inspect_score,
    _json_safe,
    _logprobs,
    _references,
    _short,
    _text_id,
    own_input,
)
from activetest.formats.run_settings import inspect_settings

# --------------------------------------------------------------------------- inspect_ai


_ZSTD_METHOD = 93

#: The early-stopping manager name :class:`activetest.inspect.ActiveStopping` writes in
#: a log's ``results.early_stopping`` (its ``MANAGER``): such a log's scores are an
#: activetest session's labels (the provenance's ``early_stopping``).
ACTIVE_STOPPING = "activetest.ActiveStopping"


def _zstd_decompress(data: bytes, where: str) -> bytes:
    if sys.version_info >= (3, 14):  # pragma: no cover - the standard library has zstd
        from compression import zstd  # type: ignore[import-not-found]

        return bytes(zstd.decompress(data))
    try:
        import zstandard
    except ImportError:
        raise _fail(where, "is compressed with zstandard; reading it needs the 'zstandard' "
                           "package, a dependency of activetest before Python 3.14: "
                           "pip install zstandard") from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data),
                                                        read_across_frames=True) as r:
            return bytes(r.read())
    except zstandard.ZstdError as exc:
        raise _fail(where, f"corrupt zstandard data ({exc})") from None


def _zip_member(zf: zipfile.ZipFile, raw: bytes, info: zipfile.ZipInfo, where: str) -> bytes:
    if info.compress_type != _ZSTD_METHOD:
        try:
            return zf.read(info)
        except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError) as exc:
            raise _fail(where, f"cannot read zip member ({exc})") from None
    # zstandard: find the member's data after its local header, decompress, check the CRC
    off = info.header_offset
    head = raw[off: off + 30]
    if len(head) < 30 or head[:4] != _ZIP:
        raise _fail(where, "bad zip local header")
    name_len, extra_len = struct.unpack("<HH", head[26:30])
    start = off + 30 + name_len + extra_len
    data = raw[start: start + info.compress_size]
    if len(data) != info.compress_size:
        raise _fail(where, "zip member is cut short")
    out = _zstd_decompress(data, where)
    import zlib

    if zlib.crc32(out) & 0xFFFFFFFF != info.CRC:
        raise _fail(where, "CRC check failed (corrupt zip member)")
    return out


def _member_json(zf: zipfile.ZipFile, raw: bytes, name: str, path: Path) -> Any:
    where = f"{path}: {name}"
    data = _zip_member(zf, raw, zf.getinfo(name), where)
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _fail(where, f"not valid JSON ({str(exc)[:80]})") from None


_ATTACHMENT = "attachment://"


def _resolver(lookup: Callable[[str], str | None], where: str) -> Callable[[Any], Any]:
    def resolve(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(_ATTACHMENT):
            key = value[len(_ATTACHMENT):]
            text = lookup(key)
            if text is None:
                raise _fail(where, f"refers to {value[:60]!r}, which the log does not hold")
            return text
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value
    return resolve


def _content_text(content: Any) -> str:
    """The text of a message's ``content`` (a string, or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text", "") for c in content
                 if isinstance(c, Mapping) and c.get("type") == "text"
                 and isinstance(c.get("text"), str)]
        return "".join(parts)
    return ""


def _inspect_prompt(value: Any, where: str, n_shot: int | None) -> tuple[dict[str, str], str]:
    """(the prompt a judge is shown: the sample's own input, the full prompt as sent)."""
    if isinstance(value, str):
        return {"input": own_input(value, n_shot)}, value
    if not isinstance(value, list):
        raise _fail(where, f"input must be a string or a list of messages, got {_short(value)}")
    msgs = [(str(m.get("role", "")), _content_text(m.get("content")))
            for m in value if isinstance(m, Mapping)]
    users = [t for r, t in msgs if r == "user"]
    last = users[-1] if users else (msgs[-1][1] if msgs else "")
    full = last if len(msgs) == 1 else "\n\n".join(f"{r}: {t}" for r, t in msgs)
    # earlier turns (in-context examples as messages) and system messages stay in the full
    # prompt; the last user message may still hold inline examples
    return {"input": own_input(last, n_shot if len(users) == 1 else None)}, full


@dataclass
class _InspectLog:
    header: dict[str, Any]
    samples: list[tuple[str, dict[str, Any]]]  # (where, sample with attachments resolved)


def _load_inspect_zip(path: Path, raw: bytes) -> _InspectLog:
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{path}: not a valid zip archive ({exc}); an inspect_ai .eval log "
                         f"is a zip") from None
    with zf:
        names = zf.namelist()
        have = set(names)
        if "header.json" in have:
            header = _member_json(zf, raw, "header.json", path)
        elif "_journal/start.json" in have:
            header = _member_json(zf, raw, "_journal/start.json", path)
            header.setdefault("status", "started")
        else:
            header = None
        mono = [n for n in names if re.fullmatch(r"samples/[^/]+\.json", n)]
        shells = [n for n in names if re.fullmatch(r"samples/[^/]+/sample\.json", n)]
        if header is None and not mono and not shells:
            raise ValueError(f"{path}: a zip archive, but not an inspect_ai .eval log (no "
                             f"header.json, _journal/start.json or samples/)")
        if not isinstance(header, dict):
            header = {}
        samples: list[tuple[str, dict[str, Any]]] = []
        for name in mono:
            where = f"{path}: {name}"
            s = _member_json(zf, raw, name, path)
            if not isinstance(s, dict):
                raise _fail(where, f"expected a sample object, got {type(s).__name__}")
            att = s.get("attachments") if isinstance(s.get("attachments"), dict) else {}
            res = _resolver(lambda k, att=att: att.get(k) if isinstance(att.get(k), str)
                            else None, where)
            samples.append((where, _resolve_sample(s, res)))
        for name in shells:
            prefix = name[: -len("sample.json")]
            where = f"{path}: {name}"
            s = _member_json(zf, raw, name, path)
            if not isinstance(s, dict):
                raise _fail(where, f"expected a sample object, got {type(s).__name__}")
            if prefix + "metadata.json" in have:
                md = _member_json(zf, raw, prefix + "metadata.json", path)
                if isinstance(md, dict) and "metadata" in md and len(md) == 1:
                    md = md["metadata"]
                s["metadata"] = md
            chunks = sorted(
                ((int(m.group(1)), n) for n in names
                 if (m := re.fullmatch(re.escape(prefix) + r"attachments/(\d+)\.json", n))),
                key=lambda t: t[0])
            seq: list[Any] = []
            for _, cname in chunks:
                part = _member_json(zf, raw, cname, path)
                if isinstance(part, list):
                    seq.extend(part)
                elif isinstance(part, dict) and isinstance(part.get("attachments"), list):
                    seq.extend(part["attachments"])

            def look(k: str, seq: list[Any] = seq) -> str | None:
                if k.isdigit() and int(k) < len(seq) and isinstance(seq[int(k)], str):
                    return seq[int(k)]
                return None

            samples.append((where, _resolve_sample(s, _resolver(look, where))))
    return _InspectLog(header, samples)


_SAMPLE_FIELDS = ("input", "target", "output", "scores", "metadata", "error")


def _resolve_sample(s: dict[str, Any], resolve: Callable[[Any], Any]) -> dict[str, Any]:
    return {**s, **{k: resolve(s[k]) for k in _SAMPLE_FIELDS if k in s}}


def _load_inspect_json(path: Path, doc: dict[str, Any]) -> _InspectLog:
    header = {k: v for k, v in doc.items() if k != "samples"}
    samples = doc.get("samples") or []
    if not isinstance(samples, list):
        raise ValueError(f"{path}: 'samples' must be a list")
    out: list[tuple[str, dict[str, Any]]] = []
    for i, s in enumerate(samples):
        where = f"{path}: samples[{i}]"
        if not isinstance(s, dict):
            raise _fail(where, f"expected a sample object, got {type(s).__name__}")
        att = s.get("attachments") if isinstance(s.get("attachments"), dict) else {}
        res = _resolver(lambda k, att=att: att.get(k) if isinstance(att.get(k), str) else None,
                        where)
        out.append((where, _resolve_sample(s, res)))
    return _InspectLog(header, out)


def _inspect_answer(s: Mapping[str, Any], where: str) -> tuple[str | None, str]:
    """(answer or None, why it is missing)."""
    out = s.get("output")
    err = s.get("error")
    why = "no output"
    if isinstance(err, Mapping) and err.get("message"):
        why = f"the sample failed: {str(err['message'])[:80]}"
    if out is None:
        return None, why
    if not isinstance(out, Mapping):
        raise _fail(where, f"output must be an object, got {_short(out)}")
    choices = out.get("choices")
    completion = out.get("completion")
    if isinstance(completion, str) and completion:
        return completion, ""
    if isinstance(choices, list) and choices:
        first = choices[0]
        msg = first.get("message") if isinstance(first, Mapping) else None
        if isinstance(msg, Mapping):
            return _content_text(msg.get("content")), ""
        raise _fail(where, "output.choices[0] has no message")
    if isinstance(completion, str) and err is None and isinstance(choices, list):
        return None, "the model returned no choices"
    return None, why


def _inspect_logprobs(s: Mapping[str, Any], where: str) -> tuple[float, ...] | None:
    out = s.get("output")
    if not isinstance(out, Mapping) or not isinstance(out.get("choices"), list) \
            or not out["choices"]:
        return None
    lp = out["choices"][0].get("logprobs") if isinstance(out["choices"][0], Mapping) else None
    if not isinstance(lp, Mapping) or not isinstance(lp.get("content"), list):
        return None
    values = [t.get("logprob") if isinstance(t, Mapping) else t for t in lp["content"]]
    return _logprobs(values, where, "output.choices[0].logprobs.content")


class NoSampleRanError(ValueError):
    """An inspect_ai log of an eval in which no sample ran (status ``success``, no
    results, no samples: every sample skipped, as by an early-stopping manager with
    nothing left to run): no model's answers, as opposed to a log written without its
    samples (``log_samples=False``), which has results."""


def _read_inspect(path: Path, log: _InspectLog, *, epoch: int | None, score_name: str | None,
                  skip_missing: bool) -> AnswerFile:
    header = log.header
    spec = header.get("eval") if isinstance(header.get("eval"), dict) else {}
    if not log.samples:
        status = header.get("status")
        if status == "success" and header.get("results") is None:
            raise NoSampleRanError(f"{path}: no sample ran in this eval (status 'success', no "
                                   f"results: every sample was skipped, as by an "
                                   f"early-stopping manager with nothing left to run)")
        raise ValueError(f"{path}: the log holds no samples (status {status!r}; was the eval "
                         f"run with log_samples=False?)")
    for where, s in log.samples:
        if "id" not in s:
            raise _fail(where, "sample has no 'id'")
        ep = s.get("epoch", 1)
        if isinstance(ep, bool) or not isinstance(ep, int):
            raise _fail(where, f"epoch must be an integer, got {_short(ep)}")
    epochs = sorted({int(s.get("epoch", 1)) for _, s in log.samples})
    if epoch is None:
        if len(epochs) > 1:
            raise ValueError(f"{path}: holds {len(epochs)} epochs {epochs} (an answer per "
                             f"sample and epoch); choose one with epoch= (in an answers: "
                             f"spec, ?epoch=N)")
        chosen = epochs[0]
    elif epoch not in epochs:
        raise ValueError(f"{path}: no samples for epoch {epoch} (has {epochs})")
    else:
        chosen = epoch
    picked = [(w, s) for w, s in log.samples if int(s.get("epoch", 1)) == chosen]

    scorers: list[str] = []
    for sc in spec.get("scorers") or []:
        if isinstance(sc, Mapping) and isinstance(sc.get("name"), str):
            scorers.append(sc["name"])
    for _, s in picked:
        if isinstance(s.get("scores"), Mapping):
            for k in s["scores"]:
                if k not in scorers:
                    scorers.append(str(k))
    answered = [(w, s) for w, s in picked if _inspect_answer(s, w)[0] is not None]
    # a sample answered but never scored (its scorer failed, or the log was written
    # before scoring) has no score; it does not take the others' away (QA: one such
    # sample left the whole log without a score, without a word: a --history log was
    # refused as having "no per-item judgment", a target's labels came from elsewhere)
    scored = [(w, s) for w, s in answered
              if isinstance(s.get("scores"), Mapping) and s["scores"]]
    if score_name and answered and not scored:
        raise ValueError(f"{path}: no sample has a score (score_name={score_name!r}): the "
                         f"eval was run without scoring, or its scores were not written")

    def get(s: Any, name: str) -> Any:
        sc = s.get("scores")
        entry = sc.get(name) if isinstance(sc, Mapping) else None
        if entry is None and isinstance(sc, Mapping) and "/" in name and name not in scorers:
            # ``scorer/key``: one key of a scorer whose value is a dict (no key is guessed;
            # a scorer named with a "/" is read whole)
            scorer, key = name.split("/", 1)
            whole = sc.get(scorer)
            value = whole.get("value") if isinstance(whole, Mapping) else None
            return value.get(key) if isinstance(value, Mapping) else None
        return entry.get("value") if isinstance(entry, Mapping) else None

    score_key = _choose_score(path, scored, scorers, score_name, get, _inspect_score,
                              "scorer")
    has_score = {id(s) for _, s in scored}
    unscored = [str(s["id"]) for _, s in answered if id(s) not in has_score] \
        if score_key else []
    model = spec.get("model") if isinstance(spec.get("model"), str) else None
    task = spec.get("task") if isinstance(spec.get("task"), str) else None
    n_shot = None
    task_args = spec.get("task_args") if isinstance(spec.get("task_args"), Mapping) else {}
    for key in ("fewshot", "num_fewshot", "n_shot", "shots"):
        v = task_args.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            n_shot = v
            break
    out = _Collector(path, skip_missing)
    for where, s in picked:
        item_id = _text_id(s["id"], where, "sample id")
        out.claim(item_id, where, "sample id")
        answer, why = _inspect_answer(s, where)
        if answer is None:
            out.missing(item_id, where, why)
            continue
        scores = s.get("scores") if isinstance(s.get("scores"), Mapping) else {}
        o = s.get("output") if isinstance(s.get("output"), Mapping) else {}
        choice0 = (o.get("choices") or [{}])[0] if isinstance(o.get("choices"), list) else {}
        meta: dict[str, Any] = {
            "task": task, "sample_id": s["id"], "epoch": chosen,
            "model": o.get("model") or model,
            "scores": {k: _json_safe(v.get("value")) for k, v in scores.items()
                       if isinstance(v, Mapping)},
            "score_answers": {k: v.get("answer") for k, v in scores.items()
                              if isinstance(v, Mapping) and v.get("answer") is not None},
            "stop_reason": choice0.get("stop_reason") if isinstance(choice0, Mapping) else None,
        }
        if s.get("metadata"):
            meta["metadata"] = _json_safe(s["metadata"])
        if s.get("uuid"):
            meta["uuid"] = s["uuid"]
        score = _inspect_score(get(s, score_key)) if score_key else None
        prompt, meta["prompt_text"] = _inspect_prompt(s.get("input", ""), where, n_shot)
        out.add(AnswerRecord(item_id=item_id, answer=answer.strip(), prompt=prompt,
                             references=_references(s.get("target"), where), score=score,
                             token_logprobs=_inspect_logprobs(s, where), meta=meta))
    dataset = spec.get("dataset") if isinstance(spec.get("dataset"), Mapping) else {}
    packages = spec.get("packages") if isinstance(spec.get("packages"), Mapping) else {}
    prov = {"status": header.get("status"), "epoch": chosen, "epochs": epochs,
            "scorers": scorers, "created": spec.get("created"), "run_id": spec.get("run_id"),
            "eval_id": spec.get("eval_id"), "task_id": spec.get("task_id"),
            "dataset": dataset.get("name"), "inspect_ai_version": packages.get("inspect_ai"),
            "task_args": _json_safe(dict(task_args)),
            # how the eval ran (solver plan, generation settings): runs of one model
            # with other settings are two rows of a history (run_settings.name_apart)
            "settings": inspect_settings(header)}
    if unscored:  # answered, no score: their score is None (said by the reader's caller)
        prov["unscored"] = unscored
    results = header.get("results") if isinstance(header.get("results"), Mapping) else {}
    stop = results.get("early_stopping")
    if isinstance(stop, Mapping) and isinstance(stop.get("manager"), str):
        # an eval whose samples an early-stopping manager chose (ActiveStopping: the
        # draws of an activetest session, its scores that session's labels)
        md = stop.get("metadata") if isinstance(stop.get("metadata"), Mapping) else {}
        prov["early_stopping"] = {"manager": stop["manager"], **(
            {"session": md["session"]} if isinstance(md.get("session"), str) else {})}
    return AnswerFile(path=path, format="inspect", records=tuple(out.records), model=model,
                      task=task, n_shot=n_shot, score_name=score_key,
                      skipped=tuple(out.skipped), provenance=prov)
