"""Label Studio: the labelling configuration, task-import files, and JSON exports read back.

:func:`config_xml` writes the labelling configuration (one single-choice
``<Choices>`` over the classes, one ``<Text>`` per shown field), :func:`task_entry`
one task of an import file (the row's fields, ``item_id`` and ``content_check`` in
``data``, the surrogate's guess as a pre-annotation) and :func:`write_tasks` the file;
:func:`read_tasks` reads Label Studio's standard JSON export back as
:class:`~activetest.formats.label_records.LabelRecord` s (with who, when, and whether
the annotation is marked ground truth: only this export carries that mark; Label
Studio's JSON-MIN, CSV and TSV exports drop it, and are read as sheets, their
``annotator`` cell named as here by :func:`export_row_annotator`). Which class a choice names
is the caller's rule (``label_rule``): this module knows no task; the session's
:mod:`activetest.session.labelio` passes the task's fields, class names and rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from activetest.formats import _json
from activetest.formats import label_records as lr

__all__ = ["annotator", "check_tag_names", "config_xml", "export_row_annotator",
           "looks_like_export", "looks_like_tasks", "read_export", "read_tasks", "task_entry",
           "write_tasks"]


def check_tag_names(from_name: str, to_name: str) -> None:
    """Refuse ``<Choices>``/``<Text>`` tag names that are not simple names, or equal."""
    for name, value in (("from_name", from_name), ("to_name", to_name)):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", value):
            raise ValueError(f"{name} must be a simple tag name (letters, digits, _ or -), "
                             f"got {value!r}")
    if from_name == to_name:
        raise ValueError(f"from_name and to_name must differ, both are {from_name!r}")


def config_xml(fields: Sequence[str], class_names: Sequence[str], header: str,
               from_name: str = "label", to_name: str = "text") -> str:
    """The labelling configuration (XML): a ``<Text>`` per field (the first the object
    ``to_name``, the others under a header with their name), the ``header`` and one
    ``<Choices name=from_name toName=to_name>`` with a ``<Choice>`` per class name."""
    check_tag_names(from_name, to_name)
    lines = ["<View>"]
    first, *others = fields
    lines.append(f'  <Text name={quoteattr(to_name)} value={quoteattr("$" + first)}/>')
    for name in others:
        lines.append(f"  <Header value={quoteattr(name + ':')} size=\"6\"/>")
        lines.append(f'  <Text name={quoteattr(to_name + "_" + name)} '
                     f'value={quoteattr("$" + name)}/>')
    lines.append(f"  <Header value={quoteattr(header)}/>")
    lines.append(f'  <Choices name={quoteattr(from_name)} toName={quoteattr(to_name)} '
                 f'choice="single" showInline="true" required="true">')
    for cname in class_names:
        lines.append(f"    <Choice value={quoteattr(cname)}/>")
    lines.append("  </Choices>")
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def task_entry(fields: Mapping[str, Any], item_id: str, check: str, *,
               guess: str | None = None, score: float = 0.0, model_version: str = "surrogate",
               from_name: str = "label", to_name: str = "text") -> dict[str, Any]:
    """One task of an import file: ``{"data": {**fields (as text), "item_id", "content_check"}}``
    and, with a ``guess`` (a class name), one pre-annotation choosing it with ``score``."""
    entry: dict[str, Any] = {"data": {**{k: str(v) for k, v in fields.items()},
                                      "item_id": item_id, lr.CHECK_COLUMN: check}}
    if guess is not None:
        entry["predictions"] = [{
            "model_version": model_version,
            "score": score,
            "result": [{"from_name": from_name, "to_name": to_name, "type": "choices",
                        "value": {"choices": [guess]}}],
        }]
    return entry


def write_tasks(path: str | Path, tasks: Sequence[Mapping[str, Any]]) -> Path:
    """Write a task-import JSON list (UTF-8, parent folders created); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(list(tasks), ensure_ascii=False, indent=1) + "\n",
                   encoding="utf-8")
    return out


def annotator(value: Any) -> str | None:
    """Who made an annotation, from its ``completed_by`` (an id or a user object): the
    e-mail if the export has it, else ``"user <id>"`` (:func:`export_row_annotator`
    names the same person alike from the JSON-MIN, CSV and TSV exports)."""
    # Label Studio 1.x exports the user's id; some versions and options a user object.
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, str)) and value != "":
        return f"user {value}"
    if isinstance(value, dict):
        for key in ("email", "username", "id"):
            v = value.get(key)
            if isinstance(v, (int, str)) and not isinstance(v, bool) and v != "":
                return str(v) if key != "id" else f"user {v}"
    return None


def export_row_annotator(value: Any) -> str | None:
    """Who made an annotation, from the ``annotator`` cell of Label Studio's JSON-MIN,
    CSV or TSV export, named as :func:`annotator` names them in its JSON export.

    Label Studio's converter writes the user's id there (a JSON number in JSON-MIN, its
    digits in CSV and TSV) where the JSON export has ``"completed_by": <id>``, so both
    become ``"user <id>"``; an e-mail (an export with the users expanded) stays as
    written. ``None``, empty or ``"None"`` (what the converter writes for a user with
    neither, e.g. deleted) carries no identity: None, never an invented name.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return f"user {value}"
    if isinstance(value, float) and value.is_integer():  # a spreadsheet's 1.0
        return f"user {int(value)}"
    text = str(value).strip()
    if text in ("", "None", "null"):
        return None
    if text.isascii() and text.isdigit():
        return f"user {int(text)}"
    return text


def read_tasks(data: Any, source_path: str, source: str, from_name: str | None,
               label_rule: Callable[[], lr.ParseLabel]) -> list[lr.LabelRecord]:
    """The labels of a Label Studio JSON export (already parsed): see
    :func:`activetest.session.labelio.import_labelstudio`. ``label_rule()`` gives the
    function that turns a chosen class name into a class index."""
    if not isinstance(data, list):
        raise lr.LabelFileError(f"{source_path}: expected a JSON list of Label Studio tasks, got "
                             f"{type(data).__name__}")
    labels = label_rule()
    records: list[lr.LabelRecord] = []
    for t, entry in enumerate(data):
        where = f"{source_path}, task {t}"
        if not isinstance(entry, dict):
            raise lr.LabelFileError(f"{where}: expected a JSON object, got {type(entry).__name__}")
        tdata = entry.get("data")
        if not isinstance(tdata, dict):
            raise lr.LabelFileError(f"{where}: no 'data' object (is this a Label Studio JSON "
                                 f"export? JSON-MIN and CSV exports go through import_labels)")
        if "item_id" not in tdata:
            raise lr.LabelFileError(f"{where}: data has no 'item_id' (keys: "
                                 f"{lr.short(sorted(map(str, tdata)), 120)}); export the tasks "
                                 f"with export_labelstudio so that Label Studio keeps the id")
        item_id = lr.id_cell(tdata["item_id"], where, "data.item_id")
        where = f"{source_path}, task {t} (item_id {item_id!r})"
        annotations = entry.get("annotations", [])
        if annotations is None:
            continue
        if not isinstance(annotations, list):
            raise lr.LabelFileError(f"{where}: 'annotations' is a {type(annotations).__name__}, "
                                 f"expected a list")
        for k, ann in enumerate(annotations):
            at = f"{where}, annotation {k}"
            if not isinstance(ann, dict):
                raise lr.LabelFileError(f"{at}: expected a JSON object, got {type(ann).__name__}")
            if ann.get("was_cancelled") is True:
                continue  # skipped by the annotator
            result = ann.get("result", [])
            if result is None:
                result = []
            if not isinstance(result, list):
                raise lr.LabelFileError(f"{at}: 'result' is a {type(result).__name__}, "
                                     f"expected a list")
            choices = []
            others: list[str] = []
            for j, res in enumerate(result):
                if not isinstance(res, dict):
                    raise lr.LabelFileError(f"{at}, result {j}: expected a JSON object, got "
                                         f"{type(res).__name__}")
                if res.get("type") != "choices":
                    others.append(f"{res.get('type')!s} ({res.get('from_name')!s})")
                    continue
                if from_name is not None and res.get("from_name") != from_name:
                    others.append(f"choices ({res.get('from_name')!s})")
                    continue
                choices.append((j, res))
            if not choices and others:
                # An answer was given, but not as the single choice we read: dropping it
                # silently would lose a label, so the whole import stops.
                want = f"a 'choices' result named {from_name!r}" if from_name else \
                    "a 'choices' result"
                raise lr.LabelFileError(f"{at}: the annotation has {', '.join(others)} but not "
                                     f"{want}; activetest reads one class per item from a "
                                     f"<Choices choice=\"single\"> control: use the labelling "
                                     f"config that `activetest labelstudio-config` prints")
            if not choices:
                continue  # submitted without any answer: not labelled
            if len(choices) > 1:
                names = sorted({str(r.get("from_name")) for _, r in choices})
                raise lr.LabelFileError(f"{at}: {len(choices)} 'choices' results (from_name "
                                     f"{', '.join(names)}); pick one with --from-name "
                                     f"(from_name= in Python)")
            j, res = choices[0]
            value = res.get("value")
            chosen = value.get("choices") if isinstance(value, dict) else None
            if not isinstance(chosen, list):
                raise lr.LabelFileError(f"{at}, result {j}: expected value.choices to be a list, "
                                     f"got {lr.short(value)}")
            if len(chosen) != 1:
                raise lr.LabelFileError(f"{at}, result {j}: expected exactly one chosen class, got "
                                     f"{lr.short(chosen)}; use choice=\"single\" in the config")
            raw = chosen[0]
            if not isinstance(raw, str):
                raise lr.LabelFileError(f"{at}, result {j}: choice {lr.short(raw)} is a "
                                     f"{type(raw).__name__}; expected a class name")
            y = labels(raw, at)
            if y is None:
                raise lr.LabelFileError(f"{at}, result {j}: empty choice; expected a class name")
            when = ann.get("updated_at") or ann.get("created_at")
            records.append(lr.LabelRecord(
                item_id=item_id, label=y, source=source,
                annotator=annotator(ann.get("completed_by")),
                time=lr.iso_time(when, at, "updated_at"), raw=raw, where=at,
                ground_truth=ann.get("ground_truth") is True,
                answer_of=lr.answer_of_cell(tdata.get("answer_of"), at),
                check=lr.optional_text(tdata.get(lr.CHECK_COLUMN), where,
                                       f"data.{lr.CHECK_COLUMN}"),
                shown=lr.shown_cells(tdata, ("item_id", "answer_of"))))
    return records


def read_export(p: Path, source: str, from_name: str | None,
                label_rule: Callable[[], lr.ParseLabel]) -> list[lr.LabelRecord]:
    """Read a Label Studio JSON export file (:func:`read_tasks` on its parsed JSON)."""
    data = _json.loads(lr.read_text(p), str(p), lr.LabelFileError)
    return read_tasks(data, str(p), source, from_name, label_rule)


def looks_like_tasks(data: Any) -> bool:
    """Whether parsed JSON looks like Label Studio tasks (each a dict with a ``data``
    dict), with or without annotations."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and isinstance(data[0].get("data"), dict))


def looks_like_export(data: Any) -> bool:
    """Whether parsed JSON looks like a full Label Studio export (tasks with ``data``
    and ``annotations``), not a JSON sheet."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], dict)
            and isinstance(data[0].get("data"), dict) and "annotations" in data[0])
