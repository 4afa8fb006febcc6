"""Labels read from a file: the record, the error, and the cell rules every label file shares.

A label file (a sheet, :mod:`.sheets`, or a Label Studio export, :mod:`.labelstudio`)
gives :class:`LabelRecord` s, one per label given, or raises :class:`LabelFileError`
naming the file, where and what was expected. This module holds what both read the
same way: the item id cell, the time cell (:func:`parse_time`), optional text, the
``answer_of`` cell and the row's ``content_check`` (:func:`content_check`).

The class a label names is the caller's to decide (a ``parse_label(raw, where)``
callable: the task's label rule); this package knows no task.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from activetest.formats.tables import read_file

__all__ = ["CHECK_COLUMN", "LabelFileError", "LabelRecord", "ParseLabel", "answer_of_cell",
           "content_check", "id_cell", "iso_time", "optional_text", "parse_time", "read_text",
           "short", "shown_cells", "shown_fields"]

#: The task's label rule: a label cell (as written) and where it was read -> the class
#: index, or None for an empty label; raises :class:`LabelFileError` for a bad one.
ParseLabel = Callable[[Any, str], "int | None"]

#: Name of the content check column of sheets (and task field of Label Studio
#: tasks): a short fingerprint of what the row shows (:func:`content_check`).
CHECK_COLUMN = "content_check"
#: Item fields that say which row it is, not what it shows (not in the check).
_NOT_SHOWN = ("item_id", "answer_of", CHECK_COLUMN)


def shown_fields(fields: Mapping[str, Any]) -> dict[str, str]:
    """An item's fields that a row shows (all but ``item_id``, ``answer_of`` and the
    check), as the text the exports write."""
    return {str(k): str(v) for k, v in fields.items() if k not in _NOT_SHOWN}


def content_check(fields: Mapping[str, Any]) -> str:
    """A short fingerprint of what a row shows: the item's fields (for a graded item
    the question, the answer and the references) except ``item_id`` and
    ``answer_of``, as text.

    Every export writes it (column ``content_check``, Label Studio ``data.content_check``)
    and the session's import compares it with the item the row's id names, so that a
    row whose id was changed (swapped ``item_id`` cells) is refused instead of labelling
    another item. Starts with a letter, so that no spreadsheet reads it as a number.
    """
    shown = sorted(shown_fields(fields).items())
    digest = hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode("utf-8")).hexdigest()
    return "c" + digest[:12]


class LabelFileError(ValueError):
    """A label file is malformed; the message names the file, where, and what was expected."""


@dataclass(frozen=True)
class LabelRecord:
    """One label given by a person (or tool) to one item.

    Attributes:
        item_id: the item's id as written in the file (a string).
        label: class index into ``Task.classes``.
        source: where the label came from, e.g. ``"csv:round1.csv"`` or
            ``"labelstudio:export.json"`` (the ``source=`` argument if given).
        annotator: who labelled it, if the file says (Label Studio: the user's
            e-mail if exported, else ``"user <id>"``, the same name from its JSON,
            JSON-MIN, CSV and TSV exports; sheets: an ``annotator`` column).
        time: when, ISO 8601 (Label Studio: the annotation's ``updated_at``;
            sheets: a ``time``, ``updated_at`` or ``created_at`` column).
        raw: the label exactly as written in the file (JSON numbers as text).
        where: where in the file it was read, e.g. ``"labels.csv, line 4"`` or
            ``"export.json, task 3, annotation 0"``, for error messages about it.
        answer_of: graded sessions that compare targets: the compared target whose
            answer this judges (an ``answer_of`` column or task field); None, empty or
            ``"target"``: the session target's (the item's label).
        answer_of_given: the ``answer_of`` cell as the file wrote it where a blind
            sheet's letter (A, B, ...) was replaced by whose answer it is (None: the
            cell is ``answer_of`` as read), for messages about the cell.
        check: the row's ``content_check`` (None: the file has none), to compare with
            :func:`content_check` of the item the id names.
        shown: the row's other cells (Label Studio: the task's data), ``(column,
            text)``, to compare with the item's fields: what the person saw.
        ground_truth: Label Studio's JSON export marks the annotation as the
            reference answer (``"ground_truth": true``): it settles the item's label
            over the other annotations (see :func:`activetest.session.labels.settle`).
        kind: the kind of an annotator's answer as the session's ``annotations`` table
            keeps it (``answer``, ``adjudication``, ``import``, ``ground truth``), where
            the file says (the sheet a session file put back leaves: an
            ``annotation_kind`` column); None: an imported annotator's label.
        undone: when the label (or the annotator's answer) was taken back, ISO 8601
            (that sheet's ``undone`` column); None: it stands. A record with it is no
            label to add: the import takes it back (see
            :mod:`activetest.session.put_back_rows`).
        own_source: ``source`` is the label's own as the session kept it (the sheet a
            session file put back leaves: its ``source`` cell, e.g. ``web (alice)``),
            stored as it is, not tagged as an import's (the label comes back as the one
            it was: the labelling page settles and undoes its own labels only).
        unnamed_undo: a label taken back (``undone`` set) whose row does not say which
            label (that sheet's layouts before the ``undone`` column wrote a label taken
            back as a row with an empty ``label`` cell): ``label`` is then -1, no class;
            the import takes back whatever label the session holds for the item only
            where told to (see :mod:`activetest.session.put_back_rows`).
    """

    item_id: str
    label: int
    source: str
    annotator: str | None = None
    time: str | None = None
    raw: str | None = None
    where: str | None = field(default=None, compare=False)  # location, not content
    answer_of: str | None = None  # graded comparisons: whose answer (None: the target's)
    answer_of_given: str | None = field(default=None, compare=False)  # a blind letter
    check: str | None = field(default=None, compare=False)  # what the row showed, not its label
    shown: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    ground_truth: bool = False
    kind: str | None = None
    undone: str | None = None
    own_source: bool = False
    unnamed_undo: bool = False


def shown_cells(row: Mapping[str, Any], skip: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """A row's cells other than ``skip`` and the check, as text (other values left out)."""
    return tuple((str(k), str(v)) for k, v in row.items()
                 if k not in skip and k != CHECK_COLUMN and isinstance(v, (str, int, float))
                 and not isinstance(v, bool))


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a byte-order mark skipped); bad bytes name the line."""
    data = read_file(path, "label file", "a sheet: CSV, TSV, JSONL, JSON; or a Label Studio "
                     "export")
    try:
        text = codecs.decode(data, "utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LabelFileError(f"{path}, line {line}: byte {data[exc.start:exc.start + 1]!r} is "
                             f"not valid UTF-8 (save the file as UTF-8)") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise LabelFileError(f"{path}, line {line}: NUL character (a binary file?)")
    return text


def short(value: Any, n: int = 60) -> str:
    """``repr(value)``, cut to ``n`` characters with ``...`` (for messages)."""
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."


def id_cell(value: Any, where: str, column: str) -> str:
    """An item id cell as a string (a JSON integer as its digits); an empty or other cell
    raises :class:`LabelFileError`."""
    if isinstance(value, str) and value != "":
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None or value == "":
        raise LabelFileError(f"{where}: empty {column!r}; every labelled row needs an item id")
    raise LabelFileError(f"{where}: {column!r} is a {type(value).__name__} "
                         f"({short(value)}); expected a string item id")


_TIME_SHAPE = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:[.,](\d+))?"
                         r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?")


def parse_time(value: Any) -> datetime | None:
    """A timestamp as a :class:`datetime`, or None if it is not one.

    Reads ISO 8601 as Label Studio, spreadsheets and Python write it: ``T`` or a
    blank between date and time, any number of fractional digits, and a zone as
    ``Z``, ``UTC``, ``+HH:MM``, ``+HHMM`` or ``+HH`` (a time without a zone is
    returned naive: its instant is unknown). A date alone is midnight, naive.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    m = _TIME_SHAPE.fullmatch(text)
    if m is None:  # other ISO 8601 forms this Python reads (a date alone, ...)
        try:
            return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            return None
    date, clock, frac, zone = m.groups()
    if clock.count(":") == 1:
        clock += ":00"
    frac = ("." + (frac + "000000")[:6]) if frac else ""
    if zone in (None, ""):
        tz = ""
    elif zone in ("Z", "z", "UTC"):
        tz = "+00:00"
    else:
        digits = zone[1:].replace(":", "")
        tz = f"{zone[0]}{digits[:2]}:{(digits[2:] or '00')}"
    try:
        return datetime.fromisoformat(f"{date}T{clock}{frac}{tz}")
    except ValueError:
        return None


def iso_time(value: Any, where: str, column: str) -> str | None:
    """Normalise a timestamp to ISO 8601 (its zone kept); ``None`` for an empty one."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise LabelFileError(f"{where}: {column!r} is a {type(value).__name__}; expected an "
                             f"ISO 8601 time such as '2025-01-31T12:00:00Z'")
    parsed = parse_time(value)
    if parsed is None:
        raise LabelFileError(f"{where}: {column!r} is {short(value)}; expected an ISO 8601 "
                             f"time such as '2025-01-31T12:00:00Z'")
    return parsed.isoformat()


def optional_text(value: Any, where: str, column: str) -> str | None:
    """An optional text cell (a number as its text); None when empty."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise LabelFileError(f"{where}: {column!r} is a {type(value).__name__}; expected text")
    return str(value)


def answer_of_cell(value: Any, where: str) -> str | None:
    """A compared target's spec from an ``answer_of`` column (None: the session target)."""
    text = optional_text(value, where, "answer_of")
    return None if text in (None, "", "target") else text

