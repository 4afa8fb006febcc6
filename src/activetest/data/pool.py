"""Loading pools of items from files (CSV, TSV, JSONL, JSON, Parquet, FPB) and the hub.

:func:`load_pool` returns a :class:`Pool`: an immutable sequence of
:class:`~activetest.data.task.Item` that also records where the items came from
(path, format, SHA-256 of the file's bytes). A ``Pool`` can be passed wherever a
``Sequence[Item]`` is expected.

Formats (chosen by ``format=`` or by the file suffix; ``.gz`` is decompressed):

===========  ===================  ==========================================
format       suffixes             notes
===========  ===================  ==========================================
``csv``      .csv                 header row; RFC 4180 quoting
``tsv``      .tsv .tab            header row; no quoting (as GLUE writes it)
``jsonl``    .jsonl .ndjson       one JSON object per line; blank lines skipped
``json``     .json                one JSON array of objects
``parquet``  .parquet .pq         needs ``pyarrow``
``fpb``      Sentences_*.txt      ``sentence@label`` per line, split on the LAST
                                  ``@``; ISO-8859-1 by default
``lmeval``   samples_*.jsonl      lm-evaluation-harness ``--log_samples`` file(s),
                                  found by content (also ``.json``, ``.gz``, a
                                  folder or a glob): items from the ``doc`` fields
===========  ===================  ==========================================

An lm-eval samples file as the pool: each record's ``doc`` (the dataset row lm-eval
evaluated) is the item's record (columns found as for any format), its id the key
lm-eval's predictions are joined by (``doc_id``; ``<task>/<doc_id>`` for several
files), and its label the gold choice (``target``) mapped to a class by label
word (none for ``-1`` or a choice that is not a label word). The same file as the
target (``table:FILE``) then agrees with the pool by construction.

Item ids are the values of ``id_column`` when one is given (or named in the
task's ``columns``), otherwise the 0-based row number of the record in the file
(header and blank lines not counted), as a string, so the same file always
gives the same ids. Rows dropped by ``drop_labels`` keep their numbers' gaps.

Column lookup: a column spec is a column name, or ``name[i]`` for the i-th
element of a list-valued column (the hub's MMLU ``choices``). For each field
the task's templates use, the column is ``field_columns[field]`` (or
``text_column`` for ``text``), else ``task.columns[field]``, else the field's
own name (for ``text``: ``text`` or else ``sentence``).

Labels: an empty, null or missing label gives an unlabelled item (``label=None``).
Otherwise the one rule of :mod:`activetest.data.classes`: a label word or class
name (exact, then case-insensitive), or a key of ``label_map`` (raw value -> class
index or label word) or of the task's ``label_map``; a NUMBER only when the file's
numbering is declared, by ``label_base=`` (``--label-base``) or the task's
``label_base`` (the built-in tasks count from 0, as their datasets do). Anything
else is a :class:`PoolFormatError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from activetest.data.classes import LabelReader
from activetest.data.task import Item, Task
from activetest.formats.globs import is_pattern
from activetest.formats.tables import (
    FORMATS,
    MissingDependencyError,
    MissingIdColumnError,
    PoolFormatError,
    Record,
    column_names,
    detect_format,
    parse_bytes,
    read_bytes,
    read_records,
)

__all__ = [
    "FORMATS",
    "MissingDependencyError",
    "Pool",
    "PoolFormatError",
    "detect_format",
    "duplicate_id_message",
    "load_hub_pool",
    "load_pool",
    "read_records",
    "records_to_items",
]

_INDEXED = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)\]$")


@dataclass(frozen=True, eq=False)
class Pool(Sequence[Item]):
    """Items loaded from one source, in file order.

    Attributes:
        items: the items.
        source: the file path (or ``hf://name/config/split`` for the hub).
        format: the format it was read as.
        sha256: SHA-256 of the file's bytes (of all shard files, in order, for the
            hub's local snapshots; ``""`` where the bytes were not read directly).
        id_column: the column the ids were read from; None where they are the rows'
            numbers (or lm-eval's ``doc_id``), i.e. positions, which join nothing
            until content confirms it.
        columns: the file's columns (its first record's keys), for messages.
        shards: how many shard files of a hub snapshot folder were read
            (:func:`load_hub_pool`; ``sha256`` is of their bytes in name order, no one
            file's where there are several); 0: not a snapshot.
    """

    items: tuple[Item, ...]
    source: str = ""
    format: str = ""
    sha256: str = ""
    id_column: str | None = None
    columns: tuple[str, ...] = ()
    shards: int = 0
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))
        index: dict[str, int] = {}
        for i, item in enumerate(self.items):
            if item.id in index:
                raise PoolFormatError(f"{self.source or 'pool'}: duplicate item id {item.id!r}")
            index[item.id] = i
        object.__setattr__(self, "_index", index)

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> Item: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Item, ...]: ...
    def __getitem__(self, i: int | slice) -> Item | tuple[Item, ...]:
        return self.items[i]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    @property
    def ids(self) -> tuple[str, ...]:
        """The item ids, in order."""
        return tuple(item.id for item in self.items)

    @property
    def labels(self) -> tuple[int | None, ...]:
        """The items' labels (``None`` where unlabelled), in order."""
        return tuple(item.label for item in self.items)

    def by_id(self, item_id: str) -> Item:
        """The item with this id (``KeyError`` if absent)."""
        return self.items[self._index[item_id]]

    def n_labelled(self) -> int:
        """How many items carry a label."""
        return sum(item.label is not None for item in self.items)


# --------------------------------------------------------------------------- records to items


@dataclass(frozen=True)
class ColumnPlan:
    """Resolved column specs (see the module docstring): the record's column of each
    field, the label's (and whether it must be there) and the id's."""

    fields: dict[str, str]
    label: str | None
    label_required: bool
    id: str | None


def _lookup(record: Record, spec: str) -> tuple[bool, Any]:
    """(found, value) of column spec ``spec`` in ``record``."""
    if spec in record:
        return True, record[spec]
    m = _INDEXED.match(spec)
    if m and m["base"] in record:
        seq = record[m["base"]]
        i = int(m["index"])
        if isinstance(seq, (list, tuple)) and i < len(seq):
            return True, seq[i]
    return False, None


def _has(keys: Collection[str], spec: str) -> bool:
    m = _INDEXED.match(spec)
    return spec in keys or bool(m and m["base"] in keys)


def column_plan(keys: Collection[str], task: Task | None, text_column: str | None,
                label_column: str | None, id_column: str | None,
                field_columns: Mapping[str, str] | None) -> ColumnPlan:
    """The columns a pool's records are read by (module docstring): the fields, label and
    id columns from the explicit options, else the task's, else the usual names among
    ``keys`` (a record's keys or a file's header)."""
    explicit = dict(field_columns or {})
    if text_column is not None:
        explicit["text"] = text_column
    task_cols = dict(task.columns) if task is not None else {}
    wanted = sorted(task.template_fields()) if task is not None else ["text"]
    for extra in explicit:
        if extra not in wanted:
            wanted.append(extra)
    fields: dict[str, str] = {}
    for name in wanted:
        if name in explicit:
            fields[name] = explicit[name]
        elif name in task_cols and _has(keys, task_cols[name]):
            fields[name] = task_cols[name]
        elif _has(keys, name):
            fields[name] = name
        elif name == "text" and _has(keys, "sentence"):
            fields[name] = "sentence"
        else:  # absent: the first record reports the error
            fields[name] = task_cols.get(name, name)
    if label_column is not None:
        label, required = label_column, True
    else:  # optional: records without it are unlabelled
        label, required = task_cols.get("label", "label"), False
    ident = id_column if id_column is not None else task_cols.get("id")
    return ColumnPlan(fields, label, required, ident)


def _as_text(value: Any, source: str, where: str, column: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        raise PoolFormatError(f"{source}, {where}: column {column!r} is null")
    raise PoolFormatError(f"{source}, {where}: column {column!r} holds a "
                          f"{type(value).__name__}, expected text")


def _norm_label_key(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


#: How a pool or examples file declares its class numbering (shown when a number is refused).
_POOL_NUMBERING = ("pass --label-base 0 or 1 (label_base= in Python), or set label_base = 0 "
                   "(or 1) in the task file")


def duplicate_id_message(source: str, where: str, item_id: str, first: str) -> str:
    """How :func:`records_to_items` refuses a record (at ``where``) repeating the id of
    the record at ``first``."""
    return f"{source}, {where}: duplicate id {item_id!r} (first at {first})"


def records_to_items(records: Iterable[tuple[str, Record]], source: str, *,
                     task: Task | None = None, text_column: str | None = None,
                     label_column: str | None = None, id_column: str | None = None,
                     field_columns: Mapping[str, str] | None = None,
                     label_map: Mapping[Any, int | str] | None = None,
                     drop_labels: Collection[Any] = (),
                     label_base: int | None = None,
                     keys: Collection[str] | None = None,
                     ids: Sequence[str] | None = None,
                     labels: Sequence[int | None] | None = None) -> list[Item]:
    """Turn raw records into items (the part of :func:`load_pool` after parsing).

    Args:
        records: ``(where, record)`` pairs as :func:`read_records` gives them.
        source: the file name or hub name, for error messages.
        keys: the column names (a CSV header); default: the first record's keys.
        ids, labels: per record, its id and label, given instead of read from
            columns (lm-eval samples files carry both outside the ``doc``).
        Other arguments: as for :func:`load_pool`.

    Raises:
        PoolFormatError: a missing column, bad label or duplicate id, naming
            ``source`` and the record's ``where``.
    """
    base = label_base if label_base is not None else (task.label_base if task else None)
    try:
        parse = LabelReader(task, base=base, label_map=label_map, error=PoolFormatError,
                            number_hint=_POOL_NUMBERING)
    except ValueError as exc:
        raise PoolFormatError(f"{source}: {exc}") from None
    drop = {_norm_label_key(v) for v in drop_labels}
    items: list[Item] = []
    seen: dict[str, str] = {}
    plan: ColumnPlan | None = None
    for row, (where, record) in enumerate(records):
        if plan is None:
            plan = column_plan(keys if keys is not None else list(record), task, text_column,
                         label_column, id_column, field_columns)
        raw_label = None
        if plan.label is not None and labels is None:
            found, raw_label = _lookup(record, plan.label)
            if not found and plan.label_required:
                raise PoolFormatError(f"{source}, {where}: no label column {plan.label!r} "
                                      f"(columns: {column_names(record)})")
            if drop and raw_label is not None and _norm_label_key(raw_label) in drop:
                continue
        fields: dict[str, str] = {}
        for name, spec in plan.fields.items():
            found, value = _lookup(record, spec)
            if not found:
                raise PoolFormatError(f"{source}, {where}: no column {spec!r} for field "
                                      f"{name!r} (columns: {column_names(record)})")
            fields[name] = _as_text(value, source, where, spec)
        if ids is not None:
            item_id = ids[row]
        elif plan.id is not None:
            found, value = _lookup(record, plan.id)
            if not found:
                raise MissingIdColumnError(f"{source}, {where}: no id column {plan.id!r} "
                                      f"(columns: {column_names(record)})", row)
            item_id = _as_text(value, source, where, plan.id).strip()
            if not item_id:
                raise PoolFormatError(f"{source}, {where}: empty id in column {plan.id!r}")
        else:
            item_id = str(row)
        if item_id in seen:
            raise PoolFormatError(duplicate_id_message(source, where, item_id, seen[item_id]))
        seen[item_id] = where
        label = labels[row] if labels is not None else parse(raw_label, f"{source}, {where}")
        items.append(Item(id=item_id, fields=fields, label=label))
    return items


def _check_samples_folder(p: Path) -> None:
    """A folder as a pool must hold lm-eval samples files; say so plainly if it does not."""
    from activetest.formats.tables import files_under

    try:  # linked folders followed, as lmeval_files reads them
        found, _ = files_under(p)
    except OSError:
        found = []
    if any(f.name.lower().startswith("samples_") for f in found):
        return
    files = sorted(f.name for f in p.iterdir() if f.is_file())[:3]
    held = f" (it holds {', '.join(files)}, ...)" if files else " (it holds no files)"
    raise PoolFormatError(f"{p} is a folder{held}: a pool is a file (CSV, TSV, JSONL, JSON, "
                          f"Parquet, FPB) or a folder of lm-eval --log_samples files "
                          f"(samples_<task>_<date>.jsonl), and this folder has none; give the "
                          f"file itself, e.g. {p / (files[0] if files else 'pool.csv')}")


def _check_samples_pattern(p: Path) -> None:
    """A glob pattern as a pool is read as lm-eval samples files; a matched file that is
    not one (a CSV, TSV, Parquet or FPB file, a JSON Lines table, lm-eval's
    ``results_<date>.json``) is refused here, naming it, before it is read as samples
    (QA: ``--pool 'r3/*.csv'`` said "r3/a.csv: line 1: not valid JSON", and with
    --id-column "an lm-eval samples pool takes no --id-column"). A file is a samples file
    by its name (``samples_*`` and a JSON suffix, as in a folder) or, renamed, by its
    content (:func:`activetest.formats.lmeval.looks_like_lmeval`). A pattern that matches
    nothing is left to the samples reader, which says so."""
    from activetest.formats.lmeval import lmeval_files, looks_like_lmeval

    try:
        files = lmeval_files(p)
    except ValueError:
        return
    for f in files:
        name = f.name.lower().removesuffix(".gz")
        if name.endswith((".jsonl", ".json", ".ndjson")) and (
                name.startswith("samples_") or looks_like_lmeval(f)):
            continue
        several = f"of the {len(files)} files" if len(files) > 1 else "the one file"
        raise PoolFormatError(
            f"{p}: a pattern pool is read as lm-eval --log_samples files "
            f"(samples_<task>_<date>.jsonl), and {f} ({several} it matches) is not "
            f"one; a table pool (CSV, TSV, JSONL, JSON, Parquet, FPB) is one file: give the "
            f"file itself, e.g. {f}, or join the files into one")


def is_lmeval_source(p: Path, format: str | None) -> bool:
    """Whether ``p`` names lm-eval samples file(s): by name, folder, glob or content."""
    if format is not None:
        return format.lower() == "lmeval"
    if p.is_dir() or is_pattern(p):  # (formats.globs: `[` too, as every reader)
        return True
    from activetest.formats.lmeval import looks_like_lmeval

    name = p.name.lower().removesuffix(".gz")
    return name.endswith((".jsonl", ".json", ".ndjson")) and p.is_file() and looks_like_lmeval(p)


def _load_lmeval_pool(path: Path, task: Task | None, *, text_column: str | None,
                      label_column: str | None, id_column: str | None,
                      field_columns: Mapping[str, str] | None) -> Pool:
    """Items from the ``doc`` of every record of lm-eval samples file(s)."""
    # One parser (formats/lmeval.py) for
    # both sides of the join.
    from activetest.data.choices import gold_classes
    from activetest.formats.lmeval import lmeval_documents, lmeval_files

    source = str(path)
    try:  # first: a pattern that matches nothing is said as such, before any option
        files = lmeval_files(path)
    except ValueError as exc:
        raise PoolFormatError(str(exc)) from None
    for flag, value, why in (("--id-column", id_column, "the ids are lm-eval's doc_id "
                              "(<task>/<doc_id> for several files)"),
                             ("--label-column", label_column, "the labels are the records' "
                              "gold choices (target), mapped to classes by label word")):
        if value is not None:
            raise PoolFormatError(f"{source}: an lm-eval samples pool takes no {flag} "
                                  f"({flag.strip('-').replace('-', '_')}= in Python): {why}")
    try:
        keys, where, docs, choices, targets = lmeval_documents(path)
    except ValueError as exc:
        raise PoolFormatError(str(exc)) from None
    for w, doc in zip(where, docs, strict=True):
        if not isinstance(doc, dict):
            raise PoolFormatError(f"{w}: the record has no 'doc' object (got "
                                  f"{type(doc).__name__}); a pool needs lm-eval's documents")
    gold = (gold_classes(choices, targets, task.classes, task.class_names) if task is not None
            else [None] * len(keys))
    items = records_to_items(zip(where, docs, strict=True), source, task=task,
                             text_column=text_column, field_columns=field_columns,
                             ids=keys, labels=gold)
    digest = hashlib.sha256()
    for f in files:
        digest.update(read_bytes(f))
    return Pool(tuple(items), source=source, format="lmeval", sha256=digest.hexdigest())


def _resolve_task(task: Task | str | None) -> Task | None:
    if task is None or isinstance(task, Task):
        return task
    from activetest.data.taskfile import load_task

    return load_task(task)


def load_pool(path: str | Path, *, format: str | None = None,
              text_column: str | None = None, label_column: str | None = None,
              id_column: str | None = None, field_columns: Mapping[str, str] | None = None,
              label_map: Mapping[Any, int | str] | None = None,
              drop_labels: Collection[Any] = (), encoding: str | None = None,
              task: Task | str | None = None, label_base: int | None = None) -> Pool:
    """Load a pool (or test set, or example source) from a file.

    Args:
        path: the file. ``.gz`` files are decompressed.
        format: one of :data:`FORMATS`; default from the suffix (:func:`detect_format`).
        text_column: column of the ``text`` field (default: ``task.columns``, then
            ``text``, then ``sentence``).
        label_column: column of the labels; when given it must exist. Default:
            ``task.columns["label"]`` or ``label`` if present, else no labels.
        id_column: column of unique item ids; default ``task.columns["id"]``, else the
            0-based row number.
        field_columns: other template fields -> column spec, e.g. ``{"A": "choices[0]"}``.
        label_map: raw label value -> class index or label word (e.g. ``{"pos": 1}``).
        drop_labels: raw label values whose rows are skipped (e.g. HS's ``2`` and ``3``);
            the remaining rows keep their original row numbers as ids.
        encoding: text encoding; default UTF-8, or ISO-8859-1 for ``fpb``.
        task: the task (or its name / task file), which says which fields the
            templates need and which label words exist.
        label_base: the file's class numbering, 0 or 1, if its labels are numbers
            (default: the task's ``label_base``; without either, numbers are refused).

    Returns:
        A :class:`Pool` (a ``Sequence[Item]``) with source, format and SHA-256.

    Raises:
        PoolFormatError: (a ``ValueError``) malformed input, naming the file and line.
        MissingDependencyError: Parquet without pyarrow.
        FileNotFoundError: no such file.
    """
    p = Path(path)
    resolved = _resolve_task(task)
    if p.is_dir() and format is None:
        _check_samples_folder(p)
    elif format is None and is_pattern(p):
        _check_samples_pattern(p)
    if is_lmeval_source(p, format):
        return _load_lmeval_pool(p, resolved, text_column=text_column,
                                 label_column=label_column, id_column=id_column,
                                 field_columns=field_columns)
    fmt = (format or detect_format(p)).lower()
    data = read_bytes(p)
    first: list[str] = []

    def tapped(records: Iterable[tuple[str, Record]]) -> Iterator[tuple[str, Record]]:
        for where, record in records:
            if not first:
                first.extend(map(str, record))
            yield where, record

    items = records_to_items(tapped(parse_bytes(data, str(p), fmt, encoding)), str(p),
                             task=resolved, text_column=text_column,
                             label_column=label_column, id_column=id_column,
                             field_columns=field_columns, label_map=label_map,
                             drop_labels=drop_labels, label_base=label_base)
    plan = column_plan(first, resolved, text_column, label_column, id_column, field_columns)
    return Pool(tuple(items), source=str(p), format=fmt, sha256=hashlib.sha256(data).hexdigest(),
                id_column=plan.id, columns=tuple(first))


# --------------------------------------------------------------------------- hub


_SHARD_SUFFIXES = (".parquet", ".jsonl", ".jsonl.gz", ".json", ".csv", ".tsv", ".ndjson")


def _split_files(root: Path, split: str, config: str | None) -> list[Path]:
    base = root / config if config and (root / config).is_dir() else root
    pattern = re.compile(rf"^{re.escape(split)}([-_.].*)?$")
    files = [f for f in base.rglob("*") if f.is_file() and pattern.match(f.name)
             and f.name.lower().endswith(_SHARD_SUFFIXES) and not any(
                 part.startswith(".") for part in f.relative_to(base).parts)]
    return sorted(files, key=lambda f: f.relative_to(base).as_posix())


def load_hub_pool(name: str | Path, split: str = "train", *, config: str | None = None,
                  revision: str | None = None, text_column: str | None = None,
                  label_column: str | None = None, id_column: str | None = None,
                  field_columns: Mapping[str, str] | None = None,
                  label_map: Mapping[Any, int | str] | None = None,
                  drop_labels: Collection[Any] = (), task: Task | str | None = None,
                  label_base: int | None = None) -> Pool:
    """Load a Hugging Face hub dataset split as a pool.

    ``name`` may be a local folder holding a downloaded snapshot (files named
    like ``train-00000-of-00001.parquet`` or ``data/test.jsonl``, optionally
    under a ``config`` subfolder); its shards are read in sorted order by the
    same code as :func:`load_pool`, so ids are row numbers across the split.
    Otherwise the ``datasets`` library (optional, not a dependency) loads
    ``name``/``config``/``split``; the row index is the id unless ``id_column``
    says otherwise. The other arguments are as for :func:`load_pool`.

    Raises:
        MissingDependencyError: ``name`` is not a folder and ``datasets`` is not installed.
        PoolFormatError: malformed rows, or a snapshot folder without files for ``split``.
    """
    resolved = _resolve_task(task)
    kwargs: dict[str, Any] = dict(task=resolved, text_column=text_column,
                                  label_column=label_column, id_column=id_column,
                                  field_columns=field_columns, label_map=label_map,
                                  drop_labels=drop_labels, label_base=label_base)
    root = Path(name)
    if root.is_dir():
        files = _split_files(root, split, config)
        if not files:
            raise PoolFormatError(f"{root}: no data files for split {split!r}"
                                  f"{f' (config {config!r})' if config else ''}; expected "
                                  f"files named like '{split}-00000-of-00001.parquet'")
        digest = hashlib.sha256()
        records: list[tuple[str, Record]] = []
        formats: set[str] = set()
        for f in files:
            fmt = detect_format(f)
            formats.add(fmt)
            data = read_bytes(f)
            digest.update(data)
            records.extend((f"{f.name}, {where}", rec)
                           for where, rec in parse_bytes(data, str(f), fmt, None))
        items = records_to_items(records, str(root), **kwargs)
        return Pool(tuple(items), source=str(root), format="+".join(sorted(formats)),
                    sha256=digest.hexdigest(), shards=len(files))
    try:
        import datasets  # type: ignore[import-not-found]
    except ImportError:
        raise MissingDependencyError(
            f"loading {str(name)!r} from the hub needs the 'datasets' package "
            f"(pip install datasets), or pass the path of a downloaded snapshot folder"
        ) from None
    ds = datasets.load_dataset(str(name), config, split=split, revision=revision)
    source = f"hf://{name}/{config or 'default'}/{split}"
    items = records_to_items(((f"row {i}", row) for i, row in enumerate(ds, 1)), source,
                             **kwargs)
    return Pool(tuple(items), source=source, format="hub")
