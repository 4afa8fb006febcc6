"""Read lm-evaluation-harness ``--log_samples`` files as class log-probabilities.

``lm_eval --log_samples --output_path DIR`` writes one ``samples_<task>_<date>.jsonl``
per task, one JSON object per document::

    {"doc_id": 0, "doc": {...}, "target": "1",
     "arguments": {"gen_args_0": {"arg_0": "<context>", "arg_1": " negative"},
                   "gen_args_1": {"arg_0": "<context>", "arg_1": " positive"}},
     "resps": [[["-2.31", "False"]], [["-0.12", "True"]]],
     "filtered_resps": [["-2.31", "False"], ["-0.12", "True"]],
     "filter": "none", "metrics": ["acc"],
     "doc_hash": "...", "prompt_hash": "...", "target_hash": "...", "acc": 1.0}

For a ``multiple_choice`` task ``filtered_resps`` holds one ``[loglikelihood,
is_greedy]`` pair per choice. Recent versions write every value as a string
(``sanitize_list``); older ones wrote numbers and booleans; both are read. Older
versions also wrote ``arguments`` as a list of ``[context, continuation]`` pairs.

What the numbers mean: each loglikelihood is the log-probability of the choice's
WHOLE continuation (all of its tokens) after the context, so the class
log-probabilities here are ``log_softmax`` over the choices' full-continuation
loglikelihoods. That equals the paper's first-token scoring only when every
choice is a single token (e.g. `` A``/`` B``/`` C``/`` D``); for multi-token
choices it is full-sequence scoring (no length normalisation, unlike ``acc_norm``).

``target`` is the gold choice's index (as a string) for most tasks; a target that
is the text of a choice is matched to the choices' continuations.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.models._util import log_softmax

__all__ = ["LmEvalSamples", "load_lmeval_samples", "looks_like_lmeval", "read_lmeval_samples"]


@dataclass(frozen=True)
class LmEvalSamples:
    """The parsed content of one lm-eval samples file.

    Attributes:
        item_ids: ``str(doc_id)`` per document, in file order.
        logprobs: ``(N, C)`` float64 class log-probs (log-softmax over the choices'
            loglikelihoods).
        labels: ``(N,)`` int64 gold choice index per document.
        choices: the choices' continuations (stripped) from the first document's
            ``arguments``, or ``()`` if the file does not record them.
        filter: the lm-eval filter whose responses were read (``"none"`` if unnamed).
    """

    item_ids: tuple[str, ...]
    logprobs: np.ndarray
    labels: np.ndarray
    choices: tuple[str, ...]
    filter: str


def _err(path: Path, line: int, msg: str) -> ValueError:
    return ValueError(f"{path}: line {line}: {msg}")


def _parse_float(value: Any) -> float | None:
    """A loglikelihood written as a number or as a string; None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _loglikelihood(entry: Any) -> float | None:
    """The loglikelihood of one choice from its ``filtered_resps`` entry."""
    if isinstance(entry, (list, tuple)):
        return _parse_float(entry[0]) if entry else None
    if isinstance(entry, str) and entry.strip().startswith("("):
        # a stringified tuple, "(-1.23, False)", as some writers produce
        try:
            parsed = ast.literal_eval(entry.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(parsed, tuple) and parsed:
            return _parse_float(parsed[0])
        return None
    return _parse_float(entry)


def _continuations(arguments: Any) -> list[str] | None:
    """The choices' continuations from ``arguments`` (dict or legacy list form)."""
    pairs: list[Any]
    if isinstance(arguments, Mapping):
        pairs = []
        for key in sorted(arguments, key=lambda k: (len(str(k)), str(k))):
            arg = arguments[key]
            if not isinstance(arg, Mapping):
                return None
            pairs.append([arg.get("arg_0"), arg.get("arg_1")])
    elif isinstance(arguments, list):
        pairs = arguments
    else:
        return None
    out: list[str] = []
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) < 2 or not isinstance(pair[1], str):
            return None
        out.append(pair[1].strip())
    return out


def _target_index(target: Any, choices: Sequence[str] | None, n: int) -> int | None:
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target if 0 <= target < n else None
    if isinstance(target, str):
        text = target.strip()
        if re.fullmatch(r"-?[0-9]{1,18}", text):
            idx = int(text)
            return idx if 0 <= idx < n else None
        if choices:
            matches = [i for i, c in enumerate(choices) if c == text]
            if len(matches) == 1:
                return matches[0]
    return None


def looks_like_lmeval(path: str | Path) -> bool:
    """Whether ``path`` is a JSONL file whose first record has lm-eval sample keys."""
    p = Path(path)
    try:
        with p.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    rec = json.loads(line)
                    return isinstance(rec, dict) and "doc_id" in rec and "filtered_resps" in rec
    except (OSError, ValueError, RecursionError):
        return False
    return False


def load_lmeval_samples(path: str | Path, *, filter_name: str | None = None) -> LmEvalSamples:
    """Parse an lm-eval samples file into class log-probs, labels and choices.

    Args:
        path: a ``samples_<task>_<date>.jsonl`` file written by ``--log_samples``.
        filter_name: which lm-eval filter's responses to read when the file holds
            several per document (the ``filter`` key); default: the only one.

    Raises:
        ValueError: unreadable file, malformed line (the file and line are named),
            a duplicate ``doc_id``, a non-loglikelihood task, or inconsistent
            numbers of choices.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"{p}: cannot read lm-eval samples file: {exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    records: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise _err(p, lineno, f"not valid JSON ({str(exc)[:80]})") from None
        if not isinstance(rec, dict):
            raise _err(p, lineno, f"expected a JSON object, got {type(rec).__name__}")
        for key in ("doc_id", "filtered_resps", "target"):
            if key not in rec:
                raise _err(p, lineno, f"missing key {key!r}; is this an lm-eval "
                                      f"--log_samples file?")
        records.append((lineno, rec))
    if not records:
        raise ValueError(f"{p}: no samples (empty file)")

    filters = sorted({str(rec.get("filter", "none")) for _, rec in records})
    if filter_name is None:
        if len(filters) > 1:
            raise ValueError(f"{p}: holds responses for several lm-eval filters {filters}; "
                             f"choose one with filter_name=")
        chosen = filters[0]
    else:
        if filter_name not in filters:
            raise ValueError(f"{p}: no samples for filter {filter_name!r} (has {filters})")
        chosen = filter_name

    ids: list[str] = []
    rows: list[list[float]] = []
    labels: list[int] = []
    first_line: dict[str, int] = {}
    choices_out: tuple[str, ...] = ()
    n_choices: int | None = None
    for lineno, rec in records:
        if str(rec.get("filter", "none")) != chosen:
            continue
        doc_id = rec["doc_id"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
            raise _err(p, lineno, f"doc_id must be an integer or string, got {doc_id!r:.60}")
        item_id = str(doc_id)
        if item_id in first_line:
            raise _err(p, lineno, f"duplicate doc_id {item_id!r} (first on line "
                                  f"{first_line[item_id]})")
        resps = rec["filtered_resps"]
        if not isinstance(resps, list) or len(resps) < 2:
            raise _err(p, lineno, "filtered_resps must list one [loglikelihood, is_greedy] "
                                  "pair per choice (at least 2): only multiple-choice "
                                  "(loglikelihood) tasks can be read")
        lls: list[float] = []
        for j, entry in enumerate(resps):
            ll = _loglikelihood(entry)
            if ll is None:
                raise _err(p, lineno, f"filtered_resps[{j}] = {entry!r:.60} is not a "
                                      f"loglikelihood; only multiple-choice tasks can be read")
            if not math.isfinite(ll):
                raise _err(p, lineno, f"filtered_resps[{j}] loglikelihood is {ll} (not finite)")
            lls.append(ll)
        if n_choices is None:
            n_choices = len(lls)
        elif len(lls) != n_choices:
            raise _err(p, lineno, f"{len(lls)} choices, but earlier documents have {n_choices}")
        conts = _continuations(rec.get("arguments"))
        if conts is not None and len(conts) != len(lls):
            conts = None
        if not ids and conts is not None:
            choices_out = tuple(conts)
        label = _target_index(rec["target"], conts, len(lls))
        if label is None:
            raise _err(p, lineno, f"target {rec['target']!r:.60} is neither a choice index in "
                                  f"0..{len(lls) - 1} nor the text of one choice")
        first_line[item_id] = lineno
        ids.append(item_id)
        rows.append(lls)
        labels.append(label)

    lp = log_softmax(np.asarray(rows, dtype=np.float64))
    return LmEvalSamples(item_ids=tuple(ids), logprobs=lp,
                         labels=np.asarray(labels, dtype=np.int64), choices=choices_out,
                         filter=chosen)


def read_lmeval_samples(path: str | Path, *, filter_name: str | None = None,
                        ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Read an lm-eval ``--log_samples`` file.

    Returns:
        ``(item_ids, logprobs, labels)``: ``str(doc_id)`` per document in file
        order, ``(N, C)`` float64 class log-probs (log-softmax over the choices'
        loglikelihoods), and ``(N,)`` int64 gold choice indices.

    Raises:
        ValueError: see :func:`load_lmeval_samples`.
    """
    s = load_lmeval_samples(path, filter_name=filter_name)
    return list(s.item_ids), s.logprobs, s.labels
