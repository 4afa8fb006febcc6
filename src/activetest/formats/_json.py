"""One JSON parser for every file we read, turning each failure into the caller's error."""

from __future__ import annotations

import json
from typing import Any


class RepeatedKeyError(ValueError):
    """An object that repeats a key (:func:`object_without_repeats`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def repeated_key(key: str) -> str:
    """What a JSON object that repeats ``key`` is refused with (after where it is)."""
    return f"an object repeats the key {key!r} (which value is meant?)"


def object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s ``object_pairs_hook``: the object as a dict, or a ``ValueError``
    naming the first key it repeats."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise RepeatedKeyError(k)
            seen.add(k)
    return out


def loads(text: str, where: str, error: type[Exception]) -> Any:
    """Parse ``text`` as JSON; on failure raise ``error("<where>: <what was wrong>")``.

    ``where`` names the file (and line, for JSON Lines). Positions inside a
    multi-line document are given as line and column; a one-line text (a JSON
    Lines record) gets the column only, its line being in ``where``. An object that
    repeats a key is refused, as a CSV header that repeats a column is (Python's parser
    keeps the last value: QA imported ``"label": "positive", "label": "negative"`` as
    negative without a word).
    """
    try:
        return json.loads(text, object_pairs_hook=object_without_repeats)
    except RepeatedKeyError as exc:
        raise error(f"{where}: {repeated_key(exc.key)}") from None
    except json.JSONDecodeError as exc:
        pos = (f"line {exc.lineno}, column {exc.colno}" if "\n" in text.rstrip("\r\n")
               else f"column {exc.colno}")
        raise error(f"{where}: invalid JSON: {exc.msg} ({pos})") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal beyond int()'s digit limit
        raise error(f"{where}: invalid JSON: {exc}") from None


def unfinished_last_line(raw: bytes) -> tuple[bytes, int | None]:
    """JSON Lines bytes without their unfinished last record, and that record's line.

    A run killed while writing leaves a JSON Lines file whose last line is cut: no final
    newline, and that line is not valid JSON (it may end inside a multi-byte character).
    Such a file gives ``(the bytes before that line, its line number)``; anything else
    gives ``(raw, None)``: a finished file (a last record without a final newline that
    parses is finished), one line only, or a text that is not JSON Lines (its first
    non-blank line is not a JSON value by itself: a pretty-printed object or an array,
    whose damage the reader names). The caller says what was skipped; a bad line
    anywhere else is still the reader's error.
    """
    if not raw or raw.endswith(b"\n") or b"\n" not in raw:
        return raw, None
    head, _, tail = raw.rpartition(b"\n")
    if not tail.strip():
        return raw, None
    first = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
    try:
        json.loads(first.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return raw, None  # not JSON Lines
    try:
        json.loads(tail.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return head + b"\n", head.count(b"\n") + 2
    return raw, None
