"""Label files in and out: Label Studio, CSV, TSV, JSONL and JSON.

A labelling round sends the acquired items to people and reads their labels back:

* :func:`export_labelstudio` writes a Label Studio task-import JSON file (with the
  surrogate's guesses as pre-annotations if given) and :func:`labelstudio_config`
  the matching labelling configuration (XML); :func:`import_labelstudio` reads
  Label Studio's standard JSON export.
* :func:`export_items` writes a CSV/TSV/JSONL/JSON sheet with an empty ``label``
  column to fill in; :func:`import_labels` reads it back (and also Label Studio's
  CSV, TSV and JSON-MIN exports, whose label column is named after the
  ``<Choices>`` tag; and, for a ``.json`` file that looks like a full Label Studio
  export, dispatches to :func:`import_labelstudio`).

Every export carries a ``content_check`` per row (:func:`content_check`: a short hash
of what the row shows) that the session's import compares with the item the row's id
names; in CSV and TSV, cells a spreadsheet would run as formulas are escaped with a
reversible ``'`` (:func:`export_items`).

Every importer returns a list of :class:`LabelRecord` (one per label given, in file
order; several labels for one item are all returned, the caller decides about
conflicts) or raises :class:`LabelFileError` naming the file, the line (or task
index) and what was expected. Importers do not know the pool: whether an
``item_id`` exists is for the caller to check.

Label values (in sheets and in Label Studio choices) follow the one rule of
:mod:`activetest.data.classes`: a label word or class name (exact, then ignoring
case and surrounding blanks) or a key of the task's ``label_map``; a class NUMBER
only when the file's numbering is declared (``label_base=`` 0 or 1, the CLI's
``import --label-base``), never guessed (the terminal counts from 1, datasets from
0). The server does not validate choices, so a typo in an edited configuration
reaches the export and is an error here. Exports write class names.

The formats themselves are read and written in :mod:`activetest.formats.sheets` and
:mod:`activetest.formats.labelstudio` (the record and the cell rules in
:mod:`activetest.formats.label_records`); this module adds what needs the task: the
rows an item shows, the surrogate's guesses, and the label rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.classes import LabelReader
from activetest.data.task import Item, Task
from activetest.formats import labelstudio as _ls
from activetest.formats.label_records import (
    CHECK_COLUMN,
    LabelFileError,
    LabelRecord,
    content_check,
    parse_time,
    shown_fields,
)
from activetest.formats.sheets import (
    DRAW_COLUMN,
    FORMATS,
    PREDICTED_COLUMN,
    PROBABILITY_COLUMN,
    format_for,
    write_sheet,
)
from activetest.formats.sheets import read_labels as _read_labels

__all__ = [
    "CHECK_COLUMN",
    "DRAW_COLUMN",
    "FORMATS",
    "PREDICTED_COLUMN",
    "PROBABILITY_COLUMN",
    "LabelFileError",
    "LabelRecord",
    "content_check",
    "export_items",
    "export_labelstudio",
    "import_labels",
    "import_labelstudio",
    "labelstudio_config",
    "parse_time",
    "shown_fields",
]

#: How a label file declares its class numbering (shown when a number is refused).
_FILE_NUMBERING = "pass --label-base 0 or 1 to import (label_base= in Python)"


def _reader(task: Task, label_base: int | None) -> LabelReader:
    return LabelReader(task, base=label_base, error=LabelFileError,
                       number_hint=_FILE_NUMBERING)


def _predicted(predictions: Any, n: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Argmax class and its probability per row of ``(n, C)`` class log-probs; -1
    where there is no guess to show: a row of NaN (not scored), or a most likely
    class that is not unique (a tie, e.g. the ``uniform`` surrogate's 0.5/0.5)."""
    lp = np.asarray(predictions, dtype=np.float64)
    if lp.shape != (n, n_classes):
        raise ValueError(f"predictions must have shape (items, classes) = ({n}, {n_classes}), "
                         f"got {lp.shape}")
    unscored = np.isnan(lp).all(axis=1) if n_classes else np.zeros(n, dtype=bool)
    lp = np.where(unscored[:, None], 0.0, lp)
    if np.isnan(lp).any() or np.isposinf(lp).any() or (n and (lp.max(axis=1) == -np.inf).any()):
        raise ValueError("predictions must be class log-probabilities: no NaN (but in a whole "
                         "row: no guess) or +inf, and each row needs a finite entry")
    best = np.argmax(lp, axis=1)
    top = lp[np.arange(n), best]
    # Renormalise in log space so that unnormalised log-probs still give a probability.
    norm = top[:, None] if n else np.zeros((0, 1))
    prob = 1.0 / np.sum(np.exp(lp - norm), axis=1) if n else np.zeros(0)
    if n:
        tied = np.sum(np.isclose(lp, norm, rtol=0.0, atol=1e-9), axis=1) > 1
        best = np.where(tied | unscored, -1, best)
    return best, prob


def _check_items(items: Sequence[Item], task: Task) -> None:
    seen: set[tuple[str, str]] = set()
    for item in items:
        if not isinstance(item.id, str) or item.id == "":
            raise ValueError(f"item ids must be non-empty strings, got {item.id!r}")
        key = (item.id, str(item.fields.get("answer_of", "")))  # one row per judged answer
        if key in seen:
            raise ValueError(f"item id {item.id!r} appears twice; ids must be unique")
        seen.add(key)
        if "item_id" in item.fields and item.fields["item_id"] != item.id:
            raise ValueError(f"item {item.id!r} has a field named 'item_id' with another value "
                             f"({item.fields['item_id']!r}); rename that field")
        if CHECK_COLUMN in item.fields:
            raise ValueError(f"item {item.id!r} has a field named {CHECK_COLUMN!r}, the "
                             f"exports' own column; rename that field")
        missing = task.template_fields() - set(item.fields)
        if missing:
            raise ValueError(f"task {task.name!r}: item {item.id!r} has no field(s) "
                             f"{sorted(missing)} (has {sorted(item.fields)})")


def _field_order(task: Task, items: Sequence[Item]) -> list[str]:
    """Template fields in the order the item template uses them, then any other fields."""
    order: list[str] = []
    for tpl in (task.item_template, task.example_template):
        for name in re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)", tpl):
            if name not in ("answer_key", "label") and name not in order:
                order.append(name)
    for item in items:
        for name in item.fields:
            if name not in order and name != "item_id":
                order.append(name)
    return order


# --------------------------------------------------------------------------- Label Studio


def labelstudio_config(task: Task, from_name: str = "label", to_name: str = "text") -> str:
    """The Label Studio labelling configuration (XML) for ``task``.

    One ``<Choices name=from_name toName=to_name>`` with a ``<Choice>`` per class
    (its value the class name, which :func:`import_labelstudio` maps back), and one
    ``<Text>`` per template field: the first field (``text``, or ``question`` for
    multiple choice) is the object ``to_name``; the others (the options A-D) are
    shown below it under a header with their name.
    """
    _ls.check_tag_names(from_name, to_name)
    fields = _field_order(task, ()) or ["text"]
    fields += [f for f in getattr(task, "display_extra", ()) if f not in fields]
    # The instruction speaks of the label words; show it only if people see those words.
    same = tuple(task.class_names) == tuple(task.classes)
    header = task.instruction.strip() if same and task.instruction.strip() else "Label"
    header = getattr(task, "judge_prompt", None) or header  # graded: the question to judge
    return _ls.config_xml(fields, task.class_names, header, from_name, to_name)


def export_labelstudio(items: Sequence[Item], task: Task, path: str | Path, *,
                       predictions: Any = None, model_version: str = "surrogate",
                       from_name: str = "label", to_name: str = "text") -> Path:
    """Write the items as a Label Studio task-import JSON list; returns the path.

    Each task is ``{"data": {**item.fields, "item_id": item.id, "content_check":
    ...}}``. Label Studio assigns its own task ids on import but returns ``data``
    unchanged in its exports, so :func:`import_labelstudio` finds the item by
    ``data.item_id``, and the session's import checks with ``data.content_check``
    (:func:`content_check`) that the task showed that item.

    Args:
        items: the items to label (unique, non-empty string ids).
        task: gives the class names and fields.
        path: where to write (UTF-8 JSON, parent folders created).
        predictions: optional ``(len(items), C)`` class log-probs (the surrogate's);
            each task then gets one pre-annotation choosing the argmax class, with
            ``score`` its probability and ``model_version`` as given (none where
            the classes tie or the row is all NaN: no guess).
        from_name, to_name: the ``<Choices>`` and ``<Text>`` tag names, as in
            :func:`labelstudio_config`.

    Raises:
        ValueError: duplicate or empty ids, missing fields, a field called
            ``item_id`` with another value, a field called ``content_check``, or
            predictions of the wrong shape.
    """
    items = list(items)
    _check_items(items, task)
    labelstudio_config(task, from_name, to_name)  # validates the tag names
    pred = _predicted(predictions, len(items), task.n_classes) if predictions is not None \
        else None
    tasks = []
    for i, item in enumerate(items):
        guess = pred is not None and pred[0][i] >= 0
        tasks.append(_ls.task_entry(
            item.fields, item.id, content_check(item.fields),
            guess=task.class_names[int(pred[0][i])] if pred is not None and guess else None,
            score=float(pred[1][i]) if pred is not None and guess else 0.0,
            model_version=model_version, from_name=from_name, to_name=to_name))
    return _ls.write_tasks(path, tasks)


def import_labelstudio(path: str | Path, task: Task, *, from_name: str | None = None,
                       label_base: int | None = None) -> list[LabelRecord]:
    """Read the labels from a Label Studio JSON export (Export -> JSON).

    The file is a list of tasks, each with ``data`` (holding ``item_id``, as written
    by :func:`export_labelstudio`) and ``annotations``. For each annotation that was
    not cancelled (skipped), the ``choices`` result whose ``from_name`` is
    ``from_name`` (if None: the only ``choices`` result) gives one
    :class:`LabelRecord`: the class from ``value.choices[0]``, ``annotator`` from
    ``completed_by``, ``time`` from ``updated_at`` (else ``created_at``). Tasks
    without annotations and annotations without a choice are skipped; several
    annotations of one task give several records. Predictions are ignored.

    Raises:
        LabelFileError: not a Label Studio export, a task without ``data.item_id``,
            a choice that is not a class of ``task``, several chosen classes, or
            several ``choices`` results when ``from_name`` is None; the message
            names the file, the task index and the item id.
        FileNotFoundError: no such file.
    """
    p = Path(path)
    return _ls.read_export(p, f"labelstudio:{p.name}", from_name,
                           lambda: _reader(task, label_base))


# --------------------------------------------------------------------------- sheets


def export_items(items: Sequence[Item], task: Task, path: str | Path, *,
                 format: str | None = None, predictions: Any = None,
                 labels: Sequence[int | None] | None = None,
                 draws: Sequence[int] | None = None) -> Path:
    """Write the items as a sheet for people to label; returns the path.

    Columns: ``item_id``, with ``draws`` the ``draw`` (each item's draw step: the
    estimate uses labels in draw order, so an item left empty holds back the
    labels of every later draw), ``content_check`` (:func:`content_check` of the
    row's fields: the session's import refuses a row whose id names an item that
    does not show this content), the item's fields (template fields first, in
    template order), then -- with ``predictions`` (``(len(items), C)`` class log-probs) --
    ``predicted`` (the surrogate's most likely class, by class name, as in Label
    Studio) and ``predicted_prob`` (its probability, 6 decimals; both empty where
    the classes tie, and left out when every row ties, as for the ``uniform``
    surrogate), and last the ``label`` column: empty, to fill in with a label word,
    class name or class index (see :func:`import_labels`), or with ``labels``
    (class indices, None for none) the class names already given.

    In CSV and TSV, a cell that a spreadsheet would run as a formula (one that
    starts with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or a line
    feed) is written with a leading ``'``; so is a cell that starts with ``'``
    itself, so that the rule is reversible: :func:`import_labels` removes one ``'``
    before any of these characters, and every string comes back as it was. A row
    with a carriage return in a cell is quoted whole (a bare CR ends a row).

    Formats (``format=`` or the suffix): ``csv`` (RFC 4180 quoting), ``tsv``
    (tab-separated, quoted where a value holds a tab, newline or quote), ``jsonl``
    (one object per line, ``"label": null``), ``json`` (a list of such objects).
    UTF-8 without a byte-order mark.

    Raises:
        ValueError: duplicate or empty ids, missing fields, a field called
            ``item_id``/``label``/``predicted``/``predicted_prob``/``content_check``,
            bad predictions or an unknown format.
    """
    items = list(items)
    out = Path(path)
    fmt = format_for(out, format)
    if fmt == "labelstudio":
        raise ValueError("use export_labelstudio for Label Studio")
    _check_items(items, task)
    fields = _field_order(task, items)
    reserved = {"label", PREDICTED_COLUMN, PROBABILITY_COLUMN, CHECK_COLUMN,
                *((DRAW_COLUMN,) if draws is not None else ())} & set(fields)
    if reserved:
        raise ValueError(f"item fields {sorted(reserved)} clash with the sheet's own columns")
    pred = _predicted(predictions, len(items), task.n_classes) if predictions is not None \
        else None
    if pred is not None and not (pred[0] >= 0).any():
        pred = None  # no row has a guess (a uniform surrogate): no columns saying nothing
    if labels is not None and len(labels) != len(items):
        raise ValueError(f"labels has {len(labels)} entries for {len(items)} items")
    if draws is not None and len(draws) != len(items):
        raise ValueError(f"draws has {len(draws)} entries for {len(items)} items")
    rows: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        row: dict[str, Any] = {"item_id": item.id}
        if draws is not None:
            row[DRAW_COLUMN] = int(draws[i])
        row[CHECK_COLUMN] = content_check(item.fields)
        row.update({f: str(item.fields.get(f, "")) for f in fields})
        if pred is not None:
            guess = int(pred[0][i]) >= 0
            row[PREDICTED_COLUMN] = task.class_names[int(pred[0][i])] if guess else None
            row[PROBABILITY_COLUMN] = round(float(pred[1][i]), 6) if guess else None
        y = None if labels is None else labels[i]
        row["label"] = None if y is None else task.class_names[int(y)]
        rows.append(row)
    header = ["item_id", *([DRAW_COLUMN] if draws is not None else []), CHECK_COLUMN, *fields]
    if pred is not None:
        header += [PREDICTED_COLUMN, PROBABILITY_COLUMN]
    header.append("label")
    return write_sheet(out, fmt, header, rows)


def import_labels(path: str | Path, task: Task, *, format: str | None = None,
                  id_column: str = "item_id", label_column: str = "label",
                  source: str | None = None, from_name: str | None = None,
                  label_base: int | None = None) -> list[LabelRecord]:
    """Read labels from a sheet (CSV, TSV, JSONL or JSON); one record per labelled row.

    The format is ``format=`` or the suffix (``.csv``, ``.tsv``/``.tab``,
    ``.jsonl``/``.ndjson``, ``.json``). A ``.json`` file that is a full Label Studio
    export is read with :func:`import_labelstudio` (``format="labelstudio"`` forces
    that). Label Studio's CSV, TSV and JSON-MIN exports are sheets: their label
    column is the ``<Choices>`` name (``label`` with the default configuration).

    Each row needs ``id_column``; rows whose label is empty or null are skipped (not
    labelled yet). A label is a label word, a class name (both case-insensitive)
    or a class index. Optional columns: ``annotator``, the time in ``time``,
    ``updated_at`` or ``created_at`` (ISO 8601), and ``content_check`` (kept with
    the row's other cells in the record, for the session to compare with the item:
    :meth:`activetest.session.workflow.Session.import_file`). In CSV and TSV one
    ``'`` before a formula character or before ``'`` is removed (see
    :func:`export_items`). Blank lines are skipped; a CSV
    with ``;`` separators (as some spreadsheets save it) is accepted. The file is
    UTF-8 (a byte-order mark is skipped).

    Args:
        source: the records' ``source`` (default ``"<format>:<file name>"``).
        from_name: for a Label Studio export, the ``<Choices>`` control to read.

    Raises:
        LabelFileError: malformed file, a missing id or label column, an empty id,
            an unknown label, or a bad time; names the file and line (record index
            for ``.json``).
        FileNotFoundError: no such file.
        ValueError: ``id_column``, ``label_column`` or ``from_name`` is no column name,
            or ``format`` no format's.
    """
    for name, col, none_ok in (("id_column", id_column, False),
                               ("label_column", label_column, False),
                               ("from_name", from_name, True)):
        if not (col is None and none_ok) and (not isinstance(col, str) or not col.strip()):
            # (QA: id_column=5 was looked up as a column named 5, label_column=None
            # as one named None)
            raise ValueError(f"{name} must be a column name (a non-empty string)"
                             f"{', or None' if none_ok else ''}, got {type(col).__name__} "
                             f"{col!r}")
    p = Path(path)
    return _read_labels(p, format_for(p, format), lambda: _reader(task, label_base),
                        id_column=id_column, label_column=label_column, source=source,
                        from_name=from_name)
