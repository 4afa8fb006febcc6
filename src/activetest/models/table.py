"""A scorer that reads predictions computed elsewhere from a file.

Use it when the model ran somewhere else (a cluster job, a vendor API, a
classifier that is not a language model) and wrote one row per item::

    id,negative,positive
    sst2-0001,-0.105,-2.303
    sst2-0002,-1.609,-0.223

Formats: CSV (``.csv``; ``.tsv`` is tab-separated), JSON Lines (``.jsonl``,
``.ndjson``), a JSON array of row objects (``.json``), Parquet (``.parquet``,
needs ``pyarrow``: ``pip install activetest[parquet]``), any of the text formats
gzipped (``.gz``), and lm-evaluation-harness ``--log_samples`` files
(``format="lmeval"``; detected from the content of ``.jsonl``/``.json`` files, and
for folders and glob patterns of samples files), see :mod:`activetest.formats.lmeval`.

Rows are matched to items by id (``Item.id`` against the ``id_column`` value,
compared as strings), so the file may hold more rows than the pool and in any
order. The class columns are ``columns`` (in class order) or, by default, the
task's label words. ``kind`` says what the numbers are:

- ``"logprobs"``: class log-probabilities; each row's ``logsumexp`` must be 0
  within ``tolerance`` (it is then renormalised exactly);
- ``"probs"``: probabilities in [0, 1] summing to 1 within ``tolerance``;
  stored as their logs (a probability of exactly 0 becomes ``-inf``);
- ``"logits"``: any finite scores, turned into log-probs by ``log_softmax``.

lm-eval files are joined more carefully, because their ids are positions: the
choices of every record are matched to the task's classes by label word, and
every item's text is checked against the record's document (both refuse a
mismatch, see :mod:`activetest.formats.lmeval`).

Options in a model spec: ``table:FILE?key=value&key=value`` with keys ``filter``
(lm-eval filter), ``format``, ``kind``, ``id`` (id column), ``columns`` (comma-
separated), ``tolerance``, ``choices=positional`` and ``match=id`` (see
:class:`TableScorer`), e.g. ``table:samples_sst2.jsonl?filter=maj@8``.

NaN, infinite or non-numeric values are errors that name the file, the row
(the line for CSV/JSONL) and the column. A JSONL line or JSON-array record whose
object repeats a key (``"positive": -0.1, "positive": -2.3``: which is meant?) is
refused naming the file, the line or record and the key, as the pool reader
refuses it (until 2026-12-07 the last value was kept without a word).

A Parquet table with a ``content_check`` column (what
:mod:`activetest.models.ray_score` writes: the fingerprint of each item's fields,
:func:`~activetest.formats.label_records.content_check`) is joined by id AND
content: a row whose fingerprint is not that of the item with its id is refused,
naming the file, the item and both fingerprints.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Container, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.choices import CHOICE_RULES, ChoiceAlignment, class_logprobs
from activetest.data.task import Item, Task
from activetest.formats.lmeval import (
    LmEvalSamples,
    check_documents,
    lmeval_files,
    load_lmeval_samples,
)
from activetest.models.table_read import (
    FORMATS,
    KINDS,
    Format,
    Kind,
    duplicate_message,
    gzip_size,
    infer_format,
    looks_like_probs,
    no_row_hint,
    read_table,
    row_values,
    stream_rows,
    to_log_softmax_rows,
)
from activetest.models.table_stream import id_blocks, read_ids, read_wanted, streams

__all__ = ["TableScorer", "confirm_content", "duplicate_message", "looks_like_probs",
           "no_row_hint", "normalise_table_spec", "parse_table_spec", "read_table", "row_values",
           "stream_rows", "to_log_softmax_rows"]

#: A CSV, TSV, JSONL, JSON-array or Parquet table larger than this (bytes; a gzipped
#: one's text, as its gzip trailer says) is read row by row when
#: items are scored, keeping only their rows (``estimate --compare table:FILE`` needs
#: the labelled items' rows alone: the whole of a 1e6-row table read into memory was
#: 0.9 GB); a smaller one is read whole once and kept, for the next items. 4 MiB: read
#: whole, a table costs 0.6-0.7 KB a row (at 1e6 rows), and a 4 MiB file is ~80,000
#: CSV rows or ~200,000 Parquet rows (which compress ~2.4x better): 50-140 MB. Read as
#: ``table.STREAM_BYTES`` where used, so a test can set it.
STREAM_BYTES = 4 << 20
#: How files join to items: ``text`` (lm-eval: check each item's text against the
#: record's document) or ``id`` (by id alone).
MATCH_RULES = ("text", "id")
#: ``table:FILE?key=value`` option -> TableScorer argument.
_SPEC_KEYS = {"filter": "filter_name", "format": "format", "kind": "kind", "id": "id_column",
              "id_column": "id_column", "columns": "columns", "tolerance": "tolerance",
              "choices": "choices", "match": "match"}


def parse_table_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``FILE?key=value&...`` into the path and :class:`TableScorer` arguments.

    A ``?`` is read as the start of options only when the whole text is not an
    existing file.

    Raises:
        ValueError: an unknown option or a malformed value.
    """
    if "?" not in text or Path(text).expanduser().exists():
        return text, {}
    path, _, query = text.rpartition("?")
    options: dict[str, Any] = {}
    for part in query.split("&"):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in _SPEC_KEYS:
            raise ValueError(f"table spec {text!r}: unknown option {part!r}; options are "
                             f"filter=NAME, format=csv|tsv|jsonl|json|parquet|lmeval, "
                             f"kind=logprobs|probs|logits, id=COLUMN, columns=A,B,..., "
                             f"tolerance=X, choices=positional, match=id")
        arg = _SPEC_KEYS[key]
        if arg == "columns":
            options[arg] = tuple(c.strip() for c in value.split(","))
        elif arg == "tolerance":
            try:
                options[arg] = float(value)
            except ValueError:
                raise ValueError(f"table spec {text!r}: tolerance={value!r} is not a "
                                 f"number") from None
        else:
            options[arg] = value
    return path, options


def normalise_table_spec(text: str) -> str:
    """The spec's path made absolute (globs too), its options kept."""
    path, options = parse_table_spec(text)
    query = text[len(path):] if options else ""
    p = Path(path).expanduser()
    p = p.resolve() if p.exists() else Path(os.path.abspath(p))
    return f"{p}{query}"


def _content_checks(path: Path, id_column: str,
                    wanted: Container[str] | None = None) -> dict[str, str] | None:
    """``id -> content_check`` of a Parquet table that has the column (of the ids in
    ``wanted`` only, read a row group at a time; None: of every row), else None."""
    import pyarrow.parquet as pq

    from activetest.formats.label_records import CHECK_COLUMN

    out: dict[str, str] = {}
    try:
        if CHECK_COLUMN not in pq.read_schema(path).names:
            return None
        pf = pq.ParquetFile(path, memory_map=False, pre_buffer=False, buffer_size=1 << 20)
        for batch in pf.iter_batches(columns=[id_column, CHECK_COLUMN], use_threads=False):
            cols = batch.to_pydict()
            # keyed by the id as the rows are read (:func:`_cell_id`: a string stripped),
            # so a row whose id has spaces around it is checked too (QA: it was passed over)
            for i, c in zip(cols[id_column], cols[CHECK_COLUMN], strict=True):
                key = i.strip() if isinstance(i, str) else str(i)
                if wanted is None or key in wanted:
                    out[key] = str(c)
    except Exception as exc:  # pyarrow raises many types
        raise ValueError(f"{path}: cannot read the {CHECK_COLUMN} column: "
                         f"{str(exc)[:200]}") from None
    return out


def _has_content_checks(path: Path) -> bool:
    """Whether the Parquet table ``path`` has the ``content_check`` column (its schema
    read, no row)."""
    import pyarrow.parquet as pq

    from activetest.formats.label_records import CHECK_COLUMN

    try:
        return CHECK_COLUMN in pq.read_schema(path).names
    except Exception as exc:  # pyarrow raises many types
        raise ValueError(f"{path}: cannot read as Parquet: {str(exc)[:200]}") from None


def confirm_content(path: Path, checks: dict[str, str], items: Sequence[Item]) -> None:
    """Refuse a row whose content fingerprint is not that of the item with its id."""
    from activetest.formats.label_records import CHECK_COLUMN, content_check

    for it in items:
        mine = content_check(it.fields)
        if checks.get(it.id, mine) != mine:
            raise ValueError(f"{path}: the row for item {it.id!r} was written for other "
                             f"content ({CHECK_COLUMN} {checks[it.id]} in the file, {mine} "
                             f"for this item's fields): the pool changed since the file was "
                             f"written, or its ids are positions in another order; score "
                             f"this pool again")


class TableScorer:
    """Scores items by looking up class log-probs in a file (predictions made elsewhere).

    Args:
        path: CSV/TSV/JSONL/JSON/Parquet table, or lm-eval ``--log_samples`` file(s):
            a file, a folder of them or a glob pattern (one target keyed by
            ``<task>/<doc_id>``).
        id_column: the column with item ids (ignored for lm-eval files, which use ``doc_id``).
        columns: the class columns in class order; default: the task's label words.
            Ignored for lm-eval files (their choices are matched to the classes).
        kind: what the numbers are: ``"logprobs"``, ``"probs"`` or ``"logits"``
            (ignored for lm-eval files, which hold loglikelihoods).
        format: ``"csv"``, ``"tsv"``, ``"jsonl"``, ``"json"``, ``"parquet"`` or
            ``"lmeval"``; default: from the suffix and content.
        tolerance: allowed deviation of a probability row's sum from 1 (or a
            log-prob row's ``logsumexp`` from 0).
        filter_name: for lm-eval files with several filters, which one to read.
        choices: lm-eval: ``"labels"`` (match each record's choices to the classes
            by label word; the default) or ``"positional"`` (choice j is class j).
        match: lm-eval: ``"text"`` (check every item's text against its record's
            document; the default) or ``"id"`` (join by id alone).

    The file is parsed when first needed and the parsed table is kept; errors name
    the file, row and column.
    """

    def __init__(self, path: str | Path, *, id_column: str = "id",
                 columns: Sequence[str] | None = None, kind: Kind = "logprobs",
                 format: Format | None = None, tolerance: float = 1e-3,
                 filter_name: str | None = None, choices: str = "labels",
                 match: str = "text") -> None:
        self.path = Path(path).expanduser()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if format is not None and format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        if choices not in CHOICE_RULES:
            raise ValueError(f"choices must be one of {', '.join(CHOICE_RULES)}, got "
                             f"{choices!r}")
        if match not in MATCH_RULES:
            raise ValueError(f"match must be one of {', '.join(MATCH_RULES)}, got {match!r}")
        self.format = format or infer_format(self.path)
        if self.format == "lmeval":
            self.files = lmeval_files(str(path))
        elif not self.path.exists():
            from activetest.formats.tables import missing_file

            raise ValueError(missing_file(self.path, "prediction table, table:FILE"))
        elif not self.path.is_file():
            raise ValueError(f"prediction table {self.path} does not exist or is not a file")
        else:
            self.files = [self.path]
        self.id_column = id_column
        self.columns = tuple(columns) if columns is not None else None
        self.kind = kind
        self.tolerance = tolerance
        self.filter_name = filter_name
        self.choices = choices
        self.match = match
        self.name = f"table:{self.path.name}"
        self._cache: dict[tuple[str, ...], tuple[dict[str, int], np.ndarray]] = {}
        self._lmeval: LmEvalSamples | None = None
        self._aligned: dict[tuple[tuple[str, ...], tuple[str, ...]], ChoiceAlignment] = {}
        self._last: ChoiceAlignment | None = None
        self._checks: dict[str, str] | None = None  # Parquet content_check column, by id
        self._rows_checked: set[tuple[str, ...]] = set()  # a large table's, row by row

    def __repr__(self) -> str:
        return (f"TableScorer({str(self.path)!r}, format={self.format!r}, kind={self.kind!r}, "
                f"id_column={self.id_column!r}, columns={self.columns!r})")

    def cache_identity(self) -> dict[str, Any]:
        """What determines this scorer's outputs: the file(s) (path, size, mtime) and settings."""
        files = []
        for f in self.files:
            st = f.resolve().stat()
            files.append([str(f.resolve()), st.st_size, st.st_mtime_ns])
        ident: dict[str, Any] = {
            "backend": "table", "path": str(self.path), "files": files,
            "format": self.format, "kind": self.kind, "id_column": self.id_column,
            "columns": self.columns, "tolerance": self.tolerance,
            "filter_name": self.filter_name}
        if self.format == "lmeval":
            ident.update(choices=self.choices, match=self.match)
        return ident

    @property
    def lmeval(self) -> LmEvalSamples | None:
        """The parsed lm-eval samples (choices, labels), for ``format="lmeval"``; else None."""
        if self.format != "lmeval":
            return None
        if self._lmeval is None:
            self._lmeval = load_lmeval_samples(list(self.files), filter_name=self.filter_name)
        return self._lmeval

    def labels(self) -> dict[str, int]:
        """Gold choices recorded in an lm-eval file (``target``, in the file's choice
        order; documents without one left out); empty for plain tables."""
        s = self.lmeval
        if s is None:
            return {}
        return {i: int(y) for i, y in zip(s.item_ids, s.labels, strict=True) if y >= 0}

    def _load(self, task: Task) -> tuple[dict[str, int], np.ndarray]:
        if self.format == "lmeval":
            s = self.lmeval
            assert s is not None
            key = (tuple(task.classes), tuple(task.class_names))
            if key not in self._aligned:
                self._aligned[key] = class_logprobs(s, task.classes, task.class_names,
                                                    choices=self.choices)
            self._last = self._aligned[key]
            return {i: r for r, i in enumerate(s.item_ids)}, self._last.logprobs
        cols = self._columns(task)
        if cols not in self._cache:
            ids, lp = read_table(self.path, columns=cols, id_column=self.id_column,
                                 kind=self.kind, format=self.format,  # type: ignore[arg-type]
                                 tolerance=self.tolerance)
            self._cache[cols] = ({i: r for r, i in enumerate(ids)}, lp)
            if self.format == "parquet" and self._checks is None:
                self._checks = _content_checks(self.path, self.id_column)
        return self._cache[cols]

    def _columns(self, task: Task) -> tuple[str, ...]:
        cols = self.columns if self.columns is not None else tuple(task.classes)
        if len(cols) != task.n_classes:
            raise ValueError(f"columns {list(cols)} has {len(cols)} entries, task {task.name!r} "
                             f"has {task.n_classes} classes {list(task.classes)}")
        return cols

    def _streamed(self, task: Task) -> bool:
        """Whether the table is read row by row, keeping only the rows asked for (a CSV,
        TSV, JSONL, JSON-array or Parquet file above :data:`STREAM_BYTES`, a gzipped one's
        size that of its text, not read whole before)."""
        if (self.format == "lmeval" or not streams(self.path, self.format)
                or self._columns(task) in self._cache):
            return False
        try:
            size = max(self.path.stat().st_size, gzip_size(self.path) or 0)
        except OSError:  # gone since: read whole, which names the file and the problem
            return False
        return size > STREAM_BYTES

    def item_ids(self, task: Task) -> list[str]:
        """The item ids the file has rows (lm-eval: records) for, in its order. A table
        read row by row has every row checked as it is read, as by
        :meth:`confirms_content`, which then reads it no more."""
        if self._streamed(task):
            cols = self._columns(task)
            ids = read_ids(self.path, columns=cols, id_column=self.id_column,
                           kind=self.kind, fmt=self.format, tolerance=self.tolerance)
            self._rows_checked.add(cols)
            return ids
        return list(self._load(task)[0])

    def item_id_blocks(self, task: Task) -> Iterator[list[str]]:
        """:meth:`item_ids` a block at a time: a table read row by row (see
        :meth:`score`) is never held whole, every row checked as it is read (once every
        block is read, :meth:`confirms_content` reads it no more); any other, one
        block."""
        if self._streamed(task):
            cols = self._columns(task)
            yield from id_blocks(self.path, columns=cols, id_column=self.id_column,
                                 kind=self.kind, fmt=self.format, tolerance=self.tolerance)
            self._rows_checked.add(cols)  # (every block read: as by confirms_content)
            return
        yield list(self._load(task)[0])

    def has_check_column(self) -> bool:
        """Whether the table is a Parquet file with a ``content_check`` column (its schema
        read, no row); False where its schema cannot be read (reading its rows names
        that, as :meth:`confirms_content` does)."""
        if self.format != "parquet":
            return False
        try:
            return _has_content_checks(self.path)
        except ValueError:
            return False

    def confirms_content(self, task: Task) -> bool:
        """Whether its join by id is confirmed by each item's content: lm-eval files read
        with ``match="text"`` (every record's document checked) and tables with a
        ``content_check`` column (Parquet, as ``activetest score`` writes them). Ids that
        are only positions join nothing else (:func:`activetest.session.create.
        check_position_joins`).

        Every row of a plain table is checked first (a problem refused with
        :func:`read_table`'s message), at any size: a small table is read whole, a large
        one (above :data:`STREAM_BYTES`) row by row, keeping nothing but 8 bytes a row
        while it is read (:func:`~activetest.models.table_stream.id_blocks`), once per
        scorer and columns. So the join checks that follow never name a table's join
        before its bad row because of its size (QA: a large table's join by position was
        refused, or another table's, where the same table read whole named its row).
        Cost of the large table's pass, measured on an Intel Xeon (2 cores shared with
        other work, 2026-12-07; ``table_stream.read_ids`` of a 2e5-row table, two class
        columns, ids ``it{i}``): 0.79 CPU-s for CSV, 0.44 for Parquet (the general path
        spends about 62 CPU-s per million items on the pool).
        """
        if self.format == "lmeval":
            return self.match == "text"
        if self._streamed(task):  # the rows are checked as they are read for items
            cols = self._columns(task)
            if cols not in self._rows_checked:
                for _ in id_blocks(self.path, columns=cols, id_column=self.id_column,
                                   kind=self.kind, fmt=self.format, tolerance=self.tolerance):
                    pass
                self._rows_checked.add(cols)
            return self.format == "parquet" and _has_content_checks(self.path)
        self._load(task)
        return bool(self._checks)

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """Look up the ``(len(items), C)`` class log-probs of ``items`` by id.

        ``examples`` and ``progress`` are accepted for the Scorer protocol and
        ignored: the predictions were made elsewhere, with whatever prompt was used there.

        Raises:
            ValueError: ids missing from the file (named), a malformed file, or (lm-eval)
                choices that are not the task's classes or items that are not the
                records' documents.
        """
        if self._streamed(task):  # only the items' rows kept (every row checked)
            got = read_wanted(self.path, columns=self._columns(task), id_column=self.id_column,
                              kind=self.kind, fmt=self.format, tolerance=self.tolerance,
                              wanted={it.id for it in items})
            index, lp, first = got.index, got.logprobs, list(got.first_ids)
            checks = (_content_checks(self.path, self.id_column, wanted=index)
                      if self.format == "parquet" else None)
        else:
            index, lp = self._load(task)
            first = list(itertools.islice(index, 3))
            checks = self._checks
        missing = [it.id for it in items if it.id not in index]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            hint = ""
            if self.format == "lmeval":
                example = next(iter(index), "0")
                hint = (f"; the files' keys look like {example!r} (doc_id, or <task>/<doc_id> "
                        f"for several files): use the samples file(s) as the pool (--pool) "
                        f"to get the same ids")
            elif len(missing) == len(items):
                hint = no_row_hint(first, [it.id for it in items[:3]])
            where = self.path if len(self.files) == 1 else f"{self.path} ({len(self.files)} files)"
            raise ValueError(f"{where}: no row for {len(missing)} of {len(items)} item id(s): "
                             f"{shown}{more}{hint}")
        rows = [index[it.id] for it in items]
        if checks:
            confirm_content(self.path, checks, items)
        if self.format == "lmeval" and self.match == "text":
            s = self.lmeval
            assert s is not None
            check_documents(s, rows, ((it.id, it.fields) for it in items))
        return np.array(lp[rows], dtype=np.float64).reshape(len(items), task.n_classes)

    def prompt_provenance(self) -> dict[str, Any]:
        """What the file says about how its predictions were made (for the session).

        ``n_examples`` is the in-context examples the predictions used: lm-eval's
        ``n-shot`` from the results file beside the samples file, else ``"unknown"``
        (never the session's own setting: the predictions were made elsewhere).
        """
        s = self.lmeval
        if s is None:
            return {"source": "table", "files": [str(f) for f in self.files],
                    "n_examples": "unknown", "kind": self.kind}
        shots = {t: ("unknown" if n is None else n) for t, n in (s.n_shot or {}).items()}
        values = set(shots.values())
        prov: dict[str, Any] = {
            "source": "lm-eval samples", "files": list(s.files), "filter": s.filter,
            "n_examples": values.pop() if len(values) == 1 else "unknown", "n_shot": shots,
            "join": "id and document text" if self.match == "text" else "id only",
            "mutual_info": s.mutual_info}
        if self._last is not None:
            prov.update(choices=list(self._last.file_order), choice_rule=self._last.rule,
                        reordered_documents=self._last.reordered)
        return prov
