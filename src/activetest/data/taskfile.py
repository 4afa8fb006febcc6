"""Task files: define a task in TOML (or YAML, if PyYAML is installed) without Python.

Schema (only ``name``, ``instruction`` and ``classes`` are required)::

    name = "reviews"
    instruction = 'Classify the review as "negative" or "positive".'   # a final newline is added
    classes = ["negative", "positive"]          # label words, in class-index order
    class_names = ["bad", "good"]               # optional, human-readable
    answer_key = "Label"                        # default "Answer"

    [templates]                                 # optional; defaults are the paper's
    item = "Sentence: '{text}' \\n{answer_key}:"
    example = "Sentence: '{text}' \\n{answer_key}: {label}\\n\\n"

    [columns]                                   # optional: where pool files keep each field
    text = "review_body"
    label = "stars_binary"
    id = "review_id"

    label_base = 0                              # optional: pool/example files number
                                                # classes from 0 (or 1); else numbers
                                                # in them are refused
    [label_map]                                 # optional: raw label value -> label word
    pos = "positive"                            # (or class name; a number only with
    neg = "negative"                            # label_base, counted from it)

``load_task("sst2")`` returns a built-in task; ``load_task("my_task.toml")`` reads a
file. :func:`task_to_dict`/:func:`task_from_dict` and :func:`dump_task` round-trip
a task through plain data and TOML text. Every error is a :class:`TaskFileError`
naming the file and the key.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from activetest.data.builtin import get_task
from activetest.data.task import Task, TaskFileError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["TASK_FILE_SUFFIXES", "TaskFileError", "dump_task", "load_task", "task_from_dict",
           "task_to_dict"]

#: Suffixes :func:`load_task` treats as task files.
TASK_FILE_SUFFIXES = (".toml", ".yaml", ".yml")

_KEYS = {"kind", "name", "instruction", "classes", "class_names", "answer_key", "templates",
         "columns", "label_map", "label_base", "description"}
_TEMPLATE_KEYS = {"item", "example"}


def _fail(source: str, key: str, msg: str) -> TaskFileError:
    return TaskFileError(f"{source}: key {key!r}: {msg}")


def _str(data: Mapping[str, Any], key: str, source: str, *, required: bool,
         default: str = "") -> str:
    if key not in data:
        if required:
            raise _fail(source, key, "is required")
        return default
    value = data[key]
    if not isinstance(value, str):
        raise _fail(source, key, f"expected a string, got {type(value).__name__}")
    return value


def _words(data: Mapping[str, Any], key: str, source: str) -> tuple[str, ...]:
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(w, str) and w for w in value):
        hint = ""
        if isinstance(value, list) and any(isinstance(w, bool) for w in value):
            hint = " (YAML reads unquoted yes/no/on/off as booleans: quote them)"
        raise _fail(source, key, f"expected a list of non-empty strings, got {value!r}{hint}")
    return tuple(value)


def _table(data: Mapping[str, Any], key: str, source: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise _fail(source, key, f"expected a table, got {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def _template_fields(template: str, source: str, key: str) -> set[str]:
    names: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _fail(source, key, f"malformed template {template!r}: {exc}") from None
    for _, fname, _, _ in parsed:
        if fname is None:
            continue
        base = fname.split(".")[0].split("[")[0]
        if not base or base.isdigit():
            raise _fail(source, key, f"template {template!r} has a positional field "
                                     f"'{{{fname}}}'; name every field, e.g. '{{text}}'")
        names.add(base)
    return names


def task_from_dict(data: Mapping[str, Any], source: str = "task", *,
                   index_values: bool = False) -> Task:
    """Build and validate a :class:`Task` from plain data (a parsed task file).

    ``source`` names the file in error messages. The instruction gets a final
    newline if it lacks one (the paper's prompts put the instruction on its own line).
    A number as a ``label_map`` value is a class counted from ``label_base`` (and
    refused without one); ``index_values`` reads it as a 0-based class index
    instead (task dicts stored in session files before ``label_base`` existed).

    Raises:
        TaskFileError: a missing, unknown or ill-typed key, or templates that do not fit.
    """
    if not isinstance(data, Mapping):
        raise TaskFileError(f"{source}: expected a table of task keys, got {type(data).__name__}")
    if data.get("kind", "classification") == "graded":
        from activetest.data.generative import gen_task_from_dict

        return gen_task_from_dict(data, source)  # type: ignore[return-value]
    if data.get("kind", "classification") != "classification":
        raise _fail(source, "kind", f"expected 'classification' (default) or 'graded', got "
                                    f"{data['kind']!r}")
    unknown = sorted(set(map(str, data)) - _KEYS)
    if unknown:
        raise _fail(source, unknown[0], f"unknown key (known keys: {', '.join(sorted(_KEYS))})")
    name = _str(data, "name", source, required=True).strip()
    if not name:
        raise _fail(source, "name", "must not be empty")
    instruction = _str(data, "instruction", source, required=True)
    if not instruction.endswith("\n"):
        instruction += "\n"
    if "classes" not in data:
        raise _fail(source, "classes", "is required (the label words, e.g. "
                                       "[\"negative\", \"positive\"])")
    classes = _words(data, "classes", source)
    class_names = _words(data, "class_names", source) if "class_names" in data else ()
    answer_key = _str(data, "answer_key", source, required=False, default="Answer")
    _str(data, "description", source, required=False)

    templates = _table(data, "templates", source)
    bad = sorted(set(templates) - _TEMPLATE_KEYS)
    if bad:
        raise _fail(source, f"templates.{bad[0]}", "unknown key (known: item, example)")
    defaults = Task(name="_", instruction="", classes=("a", "b"))
    item_t = templates.get("item", defaults.item_template)
    example_t = templates.get("example", defaults.example_template)
    for key, tpl in (("templates.item", item_t), ("templates.example", example_t)):
        if not isinstance(tpl, str):
            raise _fail(source, key, f"expected a string, got {type(tpl).__name__}")
    item_fields = _template_fields(item_t, source, "templates.item")
    example_fields = _template_fields(example_t, source, "templates.example")
    if "label" in item_fields:
        raise _fail(source, "templates.item", "must not use {label} (the model must answer it)")
    if "label" not in example_fields:
        raise _fail(source, "templates.example", "must use {label} (the example's answer)")

    fields = (item_fields | example_fields) - {"answer_key", "label"}
    columns = _table(data, "columns", source)
    for key, value in columns.items():
        if key not in fields | {"label", "id"}:
            raise _fail(source, f"columns.{key}", f"is not a template field, 'label' or 'id' "
                                                  f"(fields: {', '.join(sorted(fields))})")
        if not isinstance(value, str) or not value:
            raise _fail(source, f"columns.{key}", f"expected a column name, got {value!r}")

    label_base = data.get("label_base")
    if label_base is not None and (isinstance(label_base, bool) or label_base not in (0, 1)):
        raise _fail(source, "label_base", f"must be 0 or 1 (the pool files count classes from "
                                          f"0 or from 1), got {label_base!r}")
    label_map: dict[str, int] = {}
    for key, value in _table(data, "label_map", source).items():
        if isinstance(value, str) and value in classes:
            label_map[key] = classes.index(value)
        elif isinstance(value, str) and value in class_names:
            label_map[key] = class_names.index(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            base = 0 if index_values else label_base
            if base is None:
                raise _fail(source, f"label_map.{key}", f"{value!r} is a number, but the task "
                                                        f"declares no label_base; write the "
                                                        f"label word ({', '.join(classes)})")
            if not 0 <= value - base < len(classes):
                raise _fail(source, f"label_map.{key}", f"{value!r} is not a class number "
                                                        f"{base}..{len(classes) - 1 + base}")
            label_map[key] = value - base
        else:
            raise _fail(source, f"label_map.{key}", f"{value!r} is neither a label word "
                                                    f"({', '.join(classes)}) nor a class number")
    try:
        task = Task(name=name, instruction=instruction, classes=classes,
                    item_template=item_t, example_template=example_t, answer_key=answer_key,
                    class_names=class_names, columns=columns, label_map=label_map,
                    label_base=label_base)
    except ValueError as exc:
        raise TaskFileError(f"{source}: {exc}") from None
    # Render once with dummy values, so that format specs such as {text:d} fail here.
    probe = {f: "x" for f in fields}
    for key, tpl, extra in (("templates.item", item_t, {}),
                            ("templates.example", example_t, {"label": classes[0]})):
        try:
            tpl.format(answer_key=answer_key, **probe, **extra)
        except (ValueError, KeyError, IndexError, AttributeError) as exc:
            raise _fail(source, key, f"template {tpl!r} does not render: {exc!r}") from None
    return task


def task_to_dict(task: Task) -> dict[str, Any]:
    """Plain data for ``task`` (the task-file schema); inverse of :func:`task_from_dict`."""
    from activetest.data.generative import GenTask, gen_task_to_dict

    if isinstance(task, GenTask):
        return gen_task_to_dict(task)
    out: dict[str, Any] = {"name": task.name, "instruction": task.instruction,
                           "classes": list(task.classes), "answer_key": task.answer_key}
    if tuple(task.class_names) != tuple(task.classes):
        out["class_names"] = list(task.class_names)
    out["templates"] = {"item": task.item_template, "example": task.example_template}
    if task.columns:
        out["columns"] = dict(task.columns)
    if task.label_base is not None:
        out["label_base"] = task.label_base
    if task.label_map:  # values as label words: unambiguous whatever the numbering
        out["label_map"] = {k: task.classes[v] for k, v in task.label_map.items()}
    return out


def _toml_str(s: str) -> str:
    out = []
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(v: Any) -> str:
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return str(int(v))


def dump_task(task: Task) -> str:
    """TOML text for ``task`` that :func:`load_task` reads back into an equal task."""
    data = task_to_dict(task)
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(f"\n[{k}]")
            lines.extend(f"{_toml_str(kk)} = {_toml_value(vv)}" for kk, vv in v.items())
    return "\n".join(lines) + "\n"


def _parse_file(path: Path) -> Any:
    source = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        from activetest.formats.tables import missing_file

        raise FileNotFoundError(missing_file(path, "task file, --task")) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TaskFileError(f"{source}, line {line}: not valid UTF-8") from None
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise TaskFileError(f"{source}: invalid TOML: {exc}") from None
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise TaskFileError(f"{source}: reading YAML task files needs PyYAML "
                            f"(pip install pyyaml); or write the task as TOML") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TaskFileError(f"{source}: invalid YAML: {exc}") from None


def load_task(path_or_name: str | Path) -> Task:
    """A task from a task file (``.toml``, ``.yaml``, ``.yml``) or a built-in/registered name.

    Raises:
        TaskFileError: an invalid task file (the message names file and key).
        FileNotFoundError: a task-file path that does not exist.
        UnknownTaskError: (a ``ValueError``) neither a file nor a known task name.
    """
    path = Path(path_or_name)
    is_file_like = isinstance(path_or_name, Path) or path.suffix.lower() in TASK_FILE_SUFFIXES
    if is_file_like or path.is_file():
        if path.suffix.lower() not in TASK_FILE_SUFFIXES:
            raise TaskFileError(f"{path}: task files end in {', '.join(TASK_FILE_SUFFIXES)}")
        return task_from_dict(_parse_file(path), str(path))
    return get_task(str(path_or_name))
