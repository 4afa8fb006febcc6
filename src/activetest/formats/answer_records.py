"""The records every answer reader returns, and the small helpers the readers share.

:class:`AnswerRecord` (one item's answer, prompt fields, references, judgment,
log-probs) and :class:`AnswerFile` (the records with the file's provenance); the
byte-level reading (gzip, zip, UTF-8) and the value checks every format uses.
The formats themselves are :mod:`.lmeval_answers`, :mod:`.inspect`, :mod:`.eee`
and the tables of :mod:`.answers`, which also detects the format and dispatches.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from activetest.formats.near_ids import NEAR_MISS_WHY, near_misses
from activetest.formats.tables import decode_utf8, gunzip_if_gzip, json_lines

__all__ = ["AnswerFile", "AnswerRecord", "AnswersLeftOutNotice"]


# --------------------------------------------------------------------------- records


class AnswersLeftOutNotice(UserWarning):
    """An answer file holds answers for items that are not in the pool: they are left out
    (a pool may be a sample of a larger harness run), and the command says how many."""


@dataclass(frozen=True)
class AnswerRecord:
    """One item's answer as a harness recorded it.

    Attributes:
        item_id: the item's id in the file (a string).
        answer: the model's final answer text.
        prompt: the input fields a judge is shown (``question``, ``context``,
            ``input``, ...), as the file has them.
        references: reference answers / targets, if the file has them.
        score: the file's own judgment of the answer in [0, 1] (exact match,
            ``is_correct``, a scorer's value), or None.
        token_logprobs: log-probabilities of the answer's tokens, if recorded.
        meta: everything else worth keeping (task, epoch, filter, model, all
            scorer values, the raw response, ...; JSON-serialisable).
    """

    item_id: str
    answer: str
    prompt: dict[str, str] = field(default_factory=dict)
    references: tuple[str, ...] = ()
    score: float | None = None
    token_logprobs: tuple[float, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.item_id, str) or not self.item_id:
            raise ValueError(f"item_id must be a non-empty string, got {self.item_id!r}")
        if not isinstance(self.answer, str):
            raise ValueError(f"item {self.item_id!r}: answer must be a string, "
                             f"got {type(self.answer).__name__}")
        if self.score is not None and not (0.0 <= self.score <= 1.0):
            raise ValueError(f"item {self.item_id!r}: score {self.score!r} is not in [0, 1]")
        object.__setattr__(self, "references", tuple(self.references))
        if self.token_logprobs is not None:
            object.__setattr__(self, "token_logprobs", tuple(self.token_logprobs))


@dataclass(frozen=True)
class AnswerFile:
    """The answers read from one file, and where they came from.

    Attributes:
        path: the file read.
        format: ``lmeval``, ``inspect``, ``eee``, ``csv``, ``tsv`` or ``jsonl``.
        records: one per item, in file order; ids are unique.
        model: the model that answered, where the file (or its sidecar) says.
        task: the task / evaluation name, where known.
        n_shot: the number of in-context examples, where known.
        score_name: which of the file's judgments filled ``score`` (None: none).
        skipped: ids of records without an answer, dropped by ``skip_missing``.
        provenance: everything else known about the run (tool version, filter,
            epoch, dates, ...; JSON-serialisable).
    """

    path: Path
    format: str
    records: tuple[AnswerRecord, ...]
    model: str | None = None
    task: str | None = None
    n_shot: int | None = None
    score_name: str | None = None
    skipped: tuple[str, ...] = ()
    provenance: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", tuple(self.records))
        seen: set[str] = set()
        for r in self.records:
            if r.item_id in seen:
                raise ValueError(f"{self.path}: duplicate item id {r.item_id!r}")
            seen.add(r.item_id)

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[AnswerRecord]:
        return iter(self.records)

    @property
    def ids(self) -> tuple[str, ...]:
        """The item ids, in file order."""
        return tuple(r.item_id for r in self.records)

    def by_id(self) -> dict[str, AnswerRecord]:
        """``{item_id: record}``."""
        return {r.item_id: r for r in self.records}

    def align(self, item_ids: Sequence[str]) -> list[AnswerRecord]:
        """The records of ``item_ids``, in that order.

        Raises:
            ValueError: some ids have no answer in the file (the first ten are
                named, with a note when the file's ids look like positions or
                when the ids were skipped for having no answer).
        """
        index = self.by_id()
        missing = [i for i in item_ids if str(i) not in index]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            hint = ""
            skipped = set(self.skipped) & {str(m) for m in missing}
            if skipped:
                hint += f"; {len(skipped)} of them had no answer in the file (skipped)"
            if self.format == "lmeval" and all(i.isdigit() for i in self.ids):
                hint += ("; lm-eval ids are doc_id positions unless id_field= names a doc "
                         "field (e.g. id_field='id')")
            # both sides of the refused join (QA: only the pool's ids were named)
            theirs = [i for i in index if i not in {str(x) for x in item_ids}]
            side = ("" if not theirs else
                    f" (the file's ids not in the pool: "
                    f"{', '.join(repr(t) for t in theirs[:3])}"
                    f"{', ...' if len(theirs) > 3 else ''}; {len(index)} ids in all)")
            miss = near_misses(theirs, [str(m) for m in missing], {})
            if miss is not None:
                hint += (f"; e.g. {miss[0]!r} in the file is {miss[1]!r} in the pool but for "
                         f"{NEAR_MISS_WHY}: ids are matched exactly, never guessed")
            raise ValueError(f"{self.path}: no answer for {len(missing)} of {len(item_ids)} "
                             f"item id(s): {shown}{more}{side}{hint}")
        wanted = {str(i) for i in item_ids}
        extra = [i for i in index if i not in wanted]
        if extra:  # a pool that samples a larger run is fine, but said (QA: silent)
            shown = ", ".join(repr(e) for e in extra[:3])
            more = f" and {len(extra) - 3} more" if len(extra) > 3 else ""
            warnings.warn(f"{self.path}: {len(extra)} answer(s) for items not in the pool "
                          f"left out ({shown}{more}); the pool's {len(wanted)} item(s) "
                          f"each have theirs", AnswersLeftOutNotice, stacklevel=2)
        return [index[str(i)] for i in item_ids]


# --------------------------------------------------------------------------- helpers


def _fail(where: str, msg: str) -> ValueError:
    return ValueError(f"{where}: {msg}")


def _short(value: Any, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."


def _as_unit_score(value: Any) -> float | None:
    """A judgment as a float in [0, 1]: a number, a boolean or a numeric/boolean string."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        x = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "yes"):
            return 1.0
        if text in ("false", "no"):
            return 0.0
        try:
            x = float(text)
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(x) or not 0.0 <= x <= 1.0:
        return None
    return x


_INSPECT_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def _inspect_score(value: Any) -> float | None:
    """An inspect_ai score value as inspect's ``value_to_float`` reads it, if in [0, 1]."""
    if isinstance(value, str) and value.strip() in _INSPECT_LETTERS:
        return _INSPECT_LETTERS[value.strip()]
    return _as_unit_score(value)


def _text_id(value: Any, where: str, what: str) -> str:
    if isinstance(value, bool) or value is None:
        raise _fail(where, f"{what} must be a string or an integer, got {_short(value)}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if not value.strip():
            raise _fail(where, f"{what} is empty")
        return value.strip()
    raise _fail(where, f"{what} must be a string or an integer, got {_short(value)}")


def _json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as strings (so that meta stays strict JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _logprobs(values: Any, where: str, what: str) -> tuple[float, ...]:
    if not isinstance(values, (list, tuple)):
        raise _fail(where, f"{what} must be a list of numbers, got {_short(values)}")
    out: list[float] = []
    for j, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v > 0:
            raise _fail(where, f"{what}[{j}] = {_short(v)} is not a log-probability "
                               f"(a finite number <= 0)")
        out.append(float(v))
    return tuple(out)


class _Collector:
    """Records in file order with unique ids; answers that are missing are errors or skipped."""

    def __init__(self, path: Path, skip_missing: bool) -> None:
        self.path = path
        self.skip_missing = skip_missing
        self.records: list[AnswerRecord] = []
        self.skipped: list[str] = []
        self._first: dict[str, str] = {}

    def claim(self, item_id: str, where: str, key: str = "id") -> None:
        if item_id in self._first:
            raise _fail(where, f"duplicate {key} {item_id!r} (first at {self._first[item_id]})")
        self._first[item_id] = where

    def missing(self, item_id: str, where: str, why: str) -> None:
        if not self.skip_missing:
            raise _fail(where, f"item {item_id!r} has no answer ({why}); to leave such "
                               f"items out add ?skip_missing=1 to the answers: spec "
                               f"(skip_missing=True in Python)")
        self.skipped.append(item_id)

    def add(self, record: AnswerRecord) -> None:
        self.records.append(record)


def own_input(text: str, n_shot: int | None = None) -> str:
    """The sample's own input: ``text`` without the in-context examples before it.

    A rendered few-shot prompt repeats one template per example, and the template's
    last line (the answer cue, e.g. ``Answer:``) starts a line in every example
    (``Answer: Paris``). When that cue starts earlier lines (exactly ``n_shot`` of
    them where the file says how many examples it used), the input is what follows
    the last example: after the first blank line (lm-eval's default example
    delimiter) below its cue, else the next line. Anything else is returned whole:
    too much text, never a wrong one.
    """
    if n_shot == 0:
        return text
    body = text.rstrip()
    nl = body.rfind("\n")
    cue = body[nl + 1:].strip()
    if nl < 0 or not cue or len(cue) > 80:
        return text
    starts = [m.start() for m in re.finditer(r"(?m)^[ \t]*" + re.escape(cue), body[:nl])]
    if not starts or (n_shot is not None and len(starts) != n_shot):
        return text
    last = starts[-1]
    gap = body.find("\n\n", last, nl)
    start = gap if gap >= 0 else body.find("\n", last, nl + 1)
    own = body[start:].strip()
    return own if own and own != cue else text


# --------------------------------------------------------------------------- bytes


_ZIP = b"PK\x03\x04"


def _read_bytes(path: Path) -> bytes:
    if path.is_dir():
        raise ValueError(f"{path}: is a directory; name one answers file (e.g. an lm-eval "
                         f"samples_<task>_<date>.jsonl or an inspect .eval log)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc}") from None
    return gunzip_if_gzip(raw, path)


def _decode(path: Path, raw: bytes) -> str:
    text = decode_utf8(raw, path)
    if "\x00" in text:
        raise ValueError(f"{path}: contains NUL bytes; not a text file")
    return text


def _jsonl(path: Path, text: str) -> list[tuple[str, dict[str, Any]]]:
    out = [(f"{path}: {line}", rec) for line, rec in json_lines(text, str(path))]
    if not out:
        raise ValueError(f"{path}: no records (empty file)")
    return out


def _base_suffix(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).suffix


def _listed(text: str) -> list[str] | None:
    """The strings of ``text`` if it is a Python/JSON list literal of strings, else None."""
    t = text.strip()
    if not (t.startswith("[") and t.endswith("]")):
        return None
    try:
        parsed = ast.literal_eval(t)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
        return parsed
    return None


def _references(target: Any, where: str) -> tuple[str, ...]:
    """References from a target: a string, a list, or a list's repr (as lm-eval writes it)."""
    if target is None:
        return ()
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        return (str(target),)
    if isinstance(target, str):
        target = [target]
    if not isinstance(target, list):
        raise _fail(where, f"target {_short(target)} is not text or a list of texts")
    out: list[str] = []
    for t in target:
        if isinstance(t, str):
            listed = _listed(t)
            out.extend(listed if listed is not None else ([t] if t != "" else []))
        elif isinstance(t, (int, float)) and not isinstance(t, bool):
            out.append(str(t))
        else:
            raise _fail(where, f"reference {_short(t)} is not text")
    return tuple(out)


def _choose_score(path: Path, recs: Sequence[tuple[str, Any]], candidates: Sequence[str],
                  score_name: str | None, get: Callable[[Any, str], Any],
                  convert: Callable[[Any], float | None], what: str) -> str | None:
    """The judgment that fills ``score``: named, or the first candidate valid everywhere."""
    if score_name == "":
        return None
    if score_name is not None:
        for where, rec in recs:
            value = get(rec, score_name)
            if value is None:
                raise _fail(where, f"no {what} {score_name!r} (score_name=); the file has "
                                   f"{list(candidates)}")
            if convert(value) is None:
                raise _fail(where, f"{what} {score_name!r} = {_short(value)} is not a "
                                   f"judgment in [0, 1]")
        return score_name
    for name in candidates:
        if recs and all(convert(get(rec, name)) is not None for _, rec in recs):
            return name
    return None


def _sidecar(side: Path, what: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The JSON object of the file ``side`` beside an answer file, and the provenance so far:
    ``{what: name}``; ``(None, {})`` if absent or not an object, ``(None, {what_error: ...})``
    if unreadable."""
    if not side.is_file():
        return None, {}
    try:
        doc = json.loads(side.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None, {f"{what}_error": f"{side.name}: unreadable"}
    if not isinstance(doc, dict):
        return None, {}
    return doc, {what: side.name}
