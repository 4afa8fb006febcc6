"""Label sheets: CSV, TSV, JSONL and JSON files of rows, written for people and read back.

:func:`write_sheet` writes rows (an ``item_id``, the row's ``content_check``, the
fields to show, an empty ``label`` column to fill in) as a sheet; in CSV and TSV a
cell a spreadsheet would run as a formula is escaped with a reversible ``'``
(:func:`defuse`, undone by :func:`undefuse` when read). :func:`read_labels` reads a
sheet back (and Label Studio's CSV, TSV and JSON-MIN exports, whose label column is
named after the ``<Choices>`` tag; a ``.json`` file that is a full Label Studio
export goes to :func:`activetest.formats.labelstudio.read_tasks`), one
:class:`~activetest.formats.label_records.LabelRecord` per labelled row.

Which class a label cell names is the caller's rule (``label_rule``): this module
knows no task. The session's :mod:`activetest.session.labelio` builds the rows
from items and passes the task's rule.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from activetest.formats import _json, labelstudio
from activetest.formats.label_records import (
    CHECK_COLUMN,
    LabelFileError,
    LabelRecord,
    ParseLabel,
    answer_of_cell,
    id_cell,
    iso_time,
    optional_text,
    read_text,
    short,
    shown_cells,
)
from activetest.formats.tables import read_jsonl, repeated

__all__ = ["DRAW_COLUMN", "FORMATS", "KIND_COLUMN", "PREDICTED_COLUMN", "PROBABILITY_COLUMN",
           "PUT_BACK_COLUMNS", "PUT_BACK_HEADERS", "UNDONE_COLUMN", "UNDONE_LABEL_COLUMN",
           "defuse", "filled_labels", "format_for", "looks_like_sheet",
           "read_labels", "sheet_records", "undefuse", "write_sheet"]

#: Formats of :func:`export_items` / :func:`import_labels` (``labelstudio``: import only).
FORMATS = ("csv", "tsv", "jsonl", "json", "labelstudio")

_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
             ".json": "json"}
#: Column names (besides ``time``) that may carry when a label was given; the
#: last two are what Label Studio's CSV/TSV/JSON-MIN exports use.
TIME_COLUMNS = ("time", "updated_at", "created_at")
#: A column of Label Studio's JSON-MIN, CSV and TSV exports (the annotation's id): a
#: row that has it is one annotation, its ``annotator`` cell Label Studio's user.
LS_ANNOTATION_COLUMN = "annotation_id"
#: A column that marks a row's label as its item's reference (``true``; empty or
#: ``false``: not): it settles the item over the other rows' labels of it, as a Label
#: Studio ground-truth annotation does (the sheet a session file put back leaves,
#: :func:`activetest.session.store_marks.put_back_error`, marks its labels so).
GROUND_TRUTH_COLUMN = "ground_truth"
#: Columns of the sheet a session file put back leaves
#: (:func:`activetest.session.store_marks.put_back_error`): the kind of an annotator's
#: answer as the session kept it (``answer``, ``adjudication``, ...), and when a label or
#: an answer was taken back (an undo; empty: it stands). Read into
#: :attr:`LabelRecord.kind` and :attr:`LabelRecord.undone`.
KIND_COLUMN = "annotation_kind"
UNDONE_COLUMN = "undone"
#: That sheet's column of the label an undone row took back (its ``label`` cell empty).
UNDONE_LABEL_COLUMN = "undone_label"
#: The header of that sheet, as it is written now. An undone row (a label or an answer
#: taken back) leaves ``label`` empty and carries the label in ``undone_label``: an
#: activetest from before the ``undone`` column skips it as a row not labelled yet (one
#: with the label in ``label`` added it as a label).
PUT_BACK_COLUMNS = ("item_id", "label", "source", "time", "answer_of", "annotator",
                    "ground_truth", KIND_COLUMN, UNDONE_COLUMN, UNDONE_LABEL_COLUMN)
#: The headers read as that sheet, each as a whole (every column, in order): every layout
#: a release of ours wrote beside a session file put back, newest first: the one written
#: now; the one before ``undone_label`` (an undone row's label in ``label``); the one
#: before ``annotation_kind`` and ``undone`` (each annotator's answer a row, each item's
#: label as the command's last change left it: a label it took back a row whose
#: ``label`` cell is empty); and the first, of the label changes alone, one row each, in
#: the order made (no ``annotator`` nor ``ground_truth``; a change that took a label
#: back a row whose ``label`` cell is empty).
#: Only a file with one of them is that sheet: its ``annotation_kind``, ``undone`` and
#: ``undone_label`` cells are read as such, each label's ``source`` cell is kept as the
#: label's own, and an empty ``label`` cell of a layout without ``undone`` (naming no
#: annotator) is a label taken back that the row does not name
#: (:attr:`LabelRecord.unnamed_undo`). In any other file (a pool or a sheet with
#: columns of its own of those names) they are cells like any other, compared with the
#: item's fields as shown.
#:
#: That sheet's ``source``, ``time`` and ``annotator`` cells are NOT compared with
#: fields of the item of those names (a pool with a ``source`` or ``time`` column), as
#: an activetest before :data:`PUT_BACK_HEADERS` did (it read every put-back sheet as a
#: person's): they are the label's (who gave it, when), never text the row showed, so
#: the two differ on every row of such a pool and that comparison refused the whole
#: sheet (every label it kept) while protecting none; the sheet shows no item text, and
#: what keeps its labels from going to other items is the import's own checks (each id
#: a drawn item of the session; a label held otherwise refused unless ``--overwrite``).
PUT_BACK_HEADERS = (PUT_BACK_COLUMNS, PUT_BACK_COLUMNS[:-1], PUT_BACK_COLUMNS[:7],
                    PUT_BACK_COLUMNS[:5])
#: Name of the prediction columns in :func:`export_items` sheets.
PREDICTED_COLUMN = "predicted"
PROBABILITY_COLUMN = "predicted_prob"
#: Name of the draw-step column in :func:`export_items` sheets.
DRAW_COLUMN = "draw"


def format_for(path: Path, format: str | None) -> str:
    """The sheet format: ``format`` (``ndjson`` read as ``jsonl``) or the suffix's."""
    if format is not None:
        if not isinstance(format, str):  # (QA: format=5 raised "'int' object has no
            # attribute 'lower'")
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, or None (from "
                             f"the suffix), got {type(format).__name__} {format!r}")
        fmt = format.lower().lstrip(".")
        if fmt == "ndjson":
            fmt = "jsonl"
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        return fmt
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        _refuse_damaged_gzip(path)
        from activetest.formats.tables import refuse_sqlite

        refuse_sqlite(path, "a label file: import reads labels from a sheet (CSV, TSV, "
                            "JSONL, JSON) or a Label Studio export; the session is its first "
                            "argument")
        raise ValueError(f"{path}: cannot tell the format from the suffix {suffix!r}; name it "
                         f"with --format (format= in Python), one of {', '.join(FORMATS)}")
    return _SUFFIXES[suffix]


def _refuse_damaged_gzip(path: Path) -> None:
    """A gzip file that does not decompress (cut short, damaged) is said to be one, not
    a format the suffix does not name (QA: a truncated ``.jsonl.gz`` of lm-eval results
    was "cannot tell the format from the suffix '.gz'"); only on that failure path."""
    from activetest.formats.tables import gunzip_if_gzip

    try:
        with path.open("rb") as fh:
            if fh.read(2) != b"\x1f\x8b":
                return
        raw = path.read_bytes()
    except OSError:
        return
    gunzip_if_gzip(raw, path)  # raises "not a valid gzip file: ..."


#: First characters that make a spreadsheet cell a formula (OWASP "CSV injection"):
#: ``= + - @``, a tab, a carriage return or a line feed (a cell of several lines
#: whose first line is empty).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
#: The escape character: a cell that starts with a formula character, or with the
#: escape itself, is written with one more in front; reading removes one.
_ESCAPE = "'"


def defuse(value: Any) -> Any:
    """A text cell that a spreadsheet would evaluate, made inert with a leading ``'``.

    Reversible for every string (:func:`undefuse` undoes it): a cell that starts
    with a formula character OR with ``'`` gets one more ``'`` in front, so that an
    id ``'-5`` (written ``''-5``) is not read back as ``-5``.
    """
    if isinstance(value, str) and value.startswith((*_FORMULA_START, _ESCAPE)):
        return _ESCAPE + value
    return value


def undefuse(value: str) -> str:
    """Undo :func:`defuse`: one ``'`` before a formula character or before ``'``."""
    if value.startswith(_ESCAPE) and value[1:].startswith((*_FORMULA_START, _ESCAPE)):
        return value[1:]
    return value


def _check_delimiter(header: list[str], delimiter: str, where: str) -> None:
    """Refuse a one-column header that holds the other format's separator (a TSV file
    read as CSV, or the reverse), naming the flag that reads it."""
    other = {",": ("\t", "tsv", "tabs", "CSV"), "\t": (",", "csv", "commas", "TSV")}.get(delimiter)
    if header and header[0].lstrip().startswith(("{", "[")):  # QA: said "no column item_id"
        first = header[0].lstrip()[0]
        json_fmt, name = ("jsonl", "JSON Lines") if first == "{" else ("json", "JSON")
        raise LabelFileError(f"{where}: the first line starts with {first!r}: a {name} file "
                             f"read as {'CSV' if delimiter == ',' else 'TSV'}? Import it with "
                             f"--format {json_fmt} (format={json_fmt!r} in Python)")
    if other is not None and len(header) == 1 and other[0] in header[0]:
        raise LabelFileError(f"{where}: the header is one column that holds {other[2]} "
                             f"({short([header[0]], 60)}): a {other[1].upper()} file read as "
                             f"{other[3]}? Import it with --format {other[1]} "
                             f"(format={other[1]!r} in Python)")


def csv_rows(text: str, source: str, delimiter: str,
              id_column: str, *, whole: bool = False) -> Iterator[tuple[str, dict[str, str]]]:
    """A CSV (``delimiter`` ``,``) or TSV (``\\t``) sheet's rows: ``("<source>, line N",
    row)``, each cell :func:`undefuse` d; blank rows are skipped, a row short of the
    header is padded with empty cells (spreadsheets drop trailing ones). A ``,`` file
    whose first line names ``id_column`` only when split on ``;`` is read with ``;``
    (a spreadsheet's CSV in a comma-decimal locale). ``whole``: the labels are read
    (not a file looked at): a last row short of the header with no line end is the
    file cut inside it, refused (a whole last row, or one that ends its line, is not).

    Raises:
        LabelFileError: an empty file, a header that repeats a column or holds the
            other format's separator, a row with more non-empty cells than the header,
            a malformed quoted field (each naming the line), or with ``whole`` a file
            that ends inside its last row.
    """
    # A spreadsheet in a comma-decimal locale saves CSV with semicolons: accept that.
    # (the first line ends at \r too: Excel's "CSV (Macintosh)" ends lines with \r
    # alone, and the whole file was taken for its header: QA)
    first = re.split(r"\r\n|\r|\n", text, maxsplit=1)[0]
    if delimiter == "," and id_column in [c.strip().strip('"') for c in first.split(";")]:
        try:
            if id_column not in next(csv.reader([first]), []):
                delimiter = ";"
        except csv.Error:
            pass  # the strict reader below reports it with the line
    from activetest.formats.tables import allow_long_fields

    allow_long_fields()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    sep = {",": "comma", "\t": "tab", ";": "semicolon"}[delimiter]
    start = 1  # first line of the current record (a quoted cell may span lines)
    held: tuple[str, dict[str, str]] | None = None  # a row yielded once the next is read
    held_cells = 0
    try:
        for row in reader:
            where = f"{source}, line {start}"
            start = reader.line_num + 1
            if not row or all(c.strip() == "" for c in row):
                continue  # blank line (or an empty spreadsheet row: ",,,")
            if header is None:
                header = [undefuse(h.strip()) for h in row]
                _check_delimiter(header, delimiter, where)
                dupes = [h for h in repeated(header) if h]
                if dupes:
                    raise LabelFileError(f"{where}: header repeats column(s) {dupes}")
                continue
            cells = len(row)
            if len(row) != len(header):
                # Spreadsheets drop trailing empty cells; anything else is malformed.
                if len(row) < len(header):
                    row = row + [""] * (len(header) - len(row))
                elif all(c == "" for c in row[len(header):]):
                    row = row[: len(header)]
                else:
                    raise LabelFileError(f"{where}: expected {len(header)} {sep}-separated "
                                         f"fields (header {short(header, 120)}), got {len(row)}")
            if held is not None:
                yield held
            held = (where, dict(zip(header, map(undefuse, row), strict=True)))
            held_cells = cells
    except csv.Error as exc:
        raise LabelFileError(f"{source}, line {start}: malformed {sep}-separated file: "
                             f"{exc}") from None
    if header is None:
        raise LabelFileError(f"{source}: empty file (expected a header row with "
                             f"{id_column!r} and a label column)")
    if held is not None:
        if whole and held_cells < len(header) and not text.endswith(("\n", "\r")):
            # the file ends inside its last row (QA: a sheet cut while written or copied
            # imported its whole rows and said nothing of the cut one)
            raise LabelFileError(
                f"{held[0]}: the file ends inside this row ({held_cells} of {len(header)} "
                f"{sep}-separated fields and no line end): was it cut while being written "
                f"or copied? Nothing was imported; if the file is whole, end its last line "
                f"with a line break")
        yield held


def jsonl_rows(text: str, source: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """A JSONL sheet's rows: ``("<source>, line N", row)``."""
    for where, record in read_jsonl(text, source, LabelFileError):
        yield f"{source}, {where}", record


def json_rows(data: Any, source: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """A parsed JSON sheet's rows (a list of objects): ``("<source>, record I", row)``.

    Raises:
        LabelFileError: ``data`` is not a list, or one of its records is not an object.
    """
    if not isinstance(data, list):
        raise LabelFileError(f"{source}: expected a JSON list of objects, got "
                             f"{type(data).__name__} (for one object per line use .jsonl)")
    for i, record in enumerate(data):
        where = f"{source}, record {i}"
        if not isinstance(record, dict):
            raise LabelFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
        yield where, record


def write_sheet(out: Path, fmt: str, header: Sequence[str], rows: Sequence[Mapping[str, Any]],
                ) -> Path:
    """Write ``rows`` as a sheet of format ``fmt`` (``csv``, ``tsv``, ``jsonl`` or ``json``).

    CSV and TSV have the columns ``header`` (a None cell written empty, every cell
    :func:`defuse` d; a row with a carriage return in a cell is quoted whole, as a bare
    CR ends a row); JSONL is one object per line, JSON a list of objects (None as
    ``null``). UTF-8 without a byte-order mark; parent folders are created.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("csv", "tsv"):
        buf = io.StringIO(newline="")
        dialect = "excel" if fmt == "csv" else "excel-tab"
        writer = csv.writer(buf, dialect=dialect, lineterminator="\n")
        # The csv module quotes a cell with the line terminator's characters only: a
        # bare CR would end the row in every reader, so such rows are quoted whole.
        quoted = csv.writer(buf, dialect=dialect, lineterminator="\n", quoting=csv.QUOTE_ALL)
        for cells in [list(header), *(["" if row[h] is None else row[h] for h in header]
                                      for row in rows)]:
            out_cells = [defuse(c) for c in cells]
            (quoted if any(isinstance(c, str) and "\r" in c for c in out_cells)
             else writer).writerow(out_cells)
        out.write_text(buf.getvalue(), encoding="utf-8", newline="")
    elif fmt == "jsonl":
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                       encoding="utf-8")
    else:
        out.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return out


def filled_labels(p: Path, fmt: str, *, label_column: str = "label") -> int:
    """How many answers a sheet (or Label Studio file) ``p`` of format ``fmt`` holds: rows
    whose ``label_column`` cell is filled in (in a sheet a session file put back, whose
    header is one of :data:`PUT_BACK_HEADERS`, also an undone row's ``undone_label``, and
    a label taken back whose row names none), or
    a Label Studio export's annotations with a result that were not cancelled (a tasks
    file's predictions are no answers).
    Any cell counts, a class or not: this asks whether writing over ``p`` would lose
    what someone typed.

    Raises:
        LabelFileError: the file cannot be read as a sheet (not UTF-8 text, malformed
            CSV or JSON).
    """
    text = read_text(p)
    if not text.strip():
        return 0
    src = str(p)

    def filled(value: Any) -> bool:
        return value is not None and not (isinstance(value, str) and value.strip() == "")

    if fmt in ("json", "labelstudio"):
        data = _json.loads(text, src, LabelFileError)
        if labelstudio.looks_like_tasks(data):
            return sum(1 for t in data if isinstance(t, dict)
                       for a in (t.get("annotations") or [])
                       if isinstance(a, dict) and a.get("result")
                       and not a.get("was_cancelled"))
        rows: Iterator[tuple[str, Mapping[str, Any]]] = json_rows(data, src)
    elif fmt == "jsonl":
        rows = jsonl_rows(text, src)
    else:
        rows = csv_rows(text, src, "," if fmt == "csv" else "\t", "item_id")
    put_back: bool | None = None  # the sheet a session file put back leaves (its header)
    n = 0
    for _, row in rows:
        if put_back is None:
            put_back = tuple(row) in PUT_BACK_HEADERS
        # an undone row of that sheet keeps its label in undone_label, its label cell
        # empty (QA: a sheet of undone rows alone counted 0, so select --out replaced it)
        if filled(row.get(label_column)) or (put_back and filled(row.get(UNDONE_LABEL_COLUMN))):
            n += 1
        elif put_back and not filled(row.get("annotator")) and (
                filled(row.get(UNDONE_COLUMN)) if UNDONE_COLUMN in row
                else filled(row.get("time"))):  # a label taken back, the row naming
            n += 1  # none (the layouts before undone_label: LabelRecord.unnamed_undo)
    return n


def looks_like_sheet(p: Path, fmt: str, *, id_column: str = "item_id") -> bool:
    """Whether ``p`` (of format ``fmt``) is a label file as ``select --out`` and
    ``export`` write them, or as people make them: empty, a Label Studio tasks file or
    export, or rows whose first names an ``id_column``. A pool, a prediction table or a
    harness log has no such column (QA: ``select --out pool.csv`` replaced an unlabelled
    pool, ``export --out preds.csv`` a prediction table, both having no label filled in).

    Raises:
        LabelFileError: as :func:`filled_labels`.
    """
    text = read_text(p)
    if not text.strip():
        return True
    src = str(p)
    if fmt in ("json", "labelstudio"):
        data = _json.loads(text, src, LabelFileError)
        if labelstudio.looks_like_tasks(data):
            return True
        rows: Iterator[tuple[str, Mapping[str, Any]]] = json_rows(data, src)
    elif fmt == "jsonl":
        rows = jsonl_rows(text, src)
    else:
        rows = csv_rows(text, src, "," if fmt == "csv" else "\t", id_column)
    first = next(rows, None)
    return first is None or id_column in first[1]


def read_labels(p: Path, fmt: str, label_rule: Callable[[], ParseLabel], *,
                id_column: str = "item_id", label_column: str = "label",
                source: str | None = None, from_name: str | None = None) -> list[LabelRecord]:
    """Read labels from a sheet of format ``fmt`` (one of :data:`FORMATS`), one record per
    labelled row, in file order.

    A ``json`` file that is a full Label Studio export (or ``fmt`` ``labelstudio``) is
    read by :func:`activetest.formats.labelstudio.read_tasks`. ``label_rule()`` gives
    the function that turns a label cell into a class index (called once, after the
    file was read). See :func:`activetest.session.labelio.import_labels` for the
    columns and rules.

    Raises:
        LabelFileError: malformed file, a missing id or label column, an empty id, an
            unknown label, or a bad time; names the file and line (record index for
            ``.json``).
        FileNotFoundError: no such file.
    """
    text = read_text(p)
    src = str(p)
    if fmt in ("json", "labelstudio"):
        data = _json.loads(text, src, LabelFileError)
        if fmt == "labelstudio" or labelstudio.looks_like_export(data):
            return labelstudio.read_tasks(data, src, source or f"labelstudio:{p.name}",
                                          from_name, label_rule)
        if labelstudio.looks_like_tasks(data) and id_column not in data[0]:
            raise LabelFileError(f"{src}: a Label Studio tasks file (what `select --out "
                                 f"tasks.json` and `export` write for Label Studio to import): "
                                 f"it holds no answers. Label the tasks in Label Studio and "
                                 f"import its export (Export -> JSON), or export a sheet "
                                 f"(.csv, .tsv, .jsonl) to label elsewhere")
        rows: Iterator[tuple[str, Mapping[str, Any]]] = json_rows(data, src)
    elif fmt == "jsonl":
        rows = jsonl_rows(text, src)
    else:
        rows = csv_rows(text, src, "," if fmt == "csv" else "\t", id_column, whole=True)
    return sheet_records(rows, fmt, label_rule(), id_column=id_column,
                         label_column=label_column, source=source or f"{fmt}:{p.name}")


def _truth_cell(value: Any, where: str) -> bool:
    """A :data:`GROUND_TRUTH_COLUMN` cell: ``true``/``1``/``yes`` (a JSON ``true``), or
    empty, absent, ``false``/``0``/``no``.

    Raises:
        LabelFileError: anything else, named with where it is.
    """
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("", "false", "0", "no"):
        return False
    if text in ("true", "1", "yes"):
        return True
    raise LabelFileError(f"{where}: {GROUND_TRUTH_COLUMN} {short(value, 40)}: write "
                         f"true for the item's reference label, or leave it empty")


def _unnamed_undo(row: Mapping[str, Any], undone: str | None, where: str, id_column: str,
                  source: str) -> LabelRecord | None:
    """A row of the sheet a session file put back whose label cells are empty, as the
    label taken back it is (:attr:`LabelRecord.unnamed_undo`: the row does not say
    which label), or None where it is no such row.

    A layout without the ``undone`` column wrote a label the command took back as a row
    naming no annotator with an empty ``label`` cell, the undo's time in ``time``; a
    layout with it, a row whose ``undone`` cell is filled. A row naming an annotator
    (an answer) with an empty ``label`` cell, or one with neither a time nor
    ``undone``, is no undo (none of our releases wrote one): a row not labelled yet.

    Raises:
        LabelFileError: an annotator's answer marked undone that names no label (the
            answer undone cannot be kept so without it), naming the row.
    """
    who = (optional_text(row.get("annotator"), where, "annotator") or "").strip()
    if who:
        if undone is not None:
            raise LabelFileError(f"{where}: {who!r}'s answer is marked undone ({undone}) "
                                 f"but names no label: write the answer taken back in "
                                 f"{UNDONE_LABEL_COLUMN} (or delete the row)")
        return None
    if undone is None and UNDONE_COLUMN not in row:  # the older layouts: the undo's time
        undone = iso_time(row.get("time"), where, "time")
    if undone is None:
        return None
    own = (optional_text(row.get("source"), where, "source") or "").strip() or None
    return LabelRecord(item_id=id_cell(row[id_column], where, id_column), label=-1,
                       source=own or source, time=iso_time(row.get("time"), where, "time"),
                       raw="", where=where, answer_of=answer_of_cell(row.get("answer_of"),
                                                                     where),
                       undone=undone, own_source=own is not None, unnamed_undo=True)


def sheet_records(rows: Iterator[tuple[str, Mapping[str, Any]]], fmt: str, labels: ParseLabel,
                  *, id_column: str, label_column: str, source: str) -> list[LabelRecord]:
    """The labelled rows of a sheet (``(where, row)`` pairs) as records; rows whose label
    is empty or null are skipped (not labelled yet), and so are JSON records without the
    label key (Label Studio's JSON-MIN export of a partly labelled project), unless no
    record has it (then the column is misnamed: refused).

    A sheet whose header is one of :data:`PUT_BACK_HEADERS` as a whole (the sheet a
    session file put back leaves) has its ``annotation_kind`` and ``undone`` cells read
    into :attr:`LabelRecord.kind` and :attr:`LabelRecord.undone` (an undone row's label
    from ``undone_label`` where its ``label`` cell is empty), and each label's (a row
    naming no annotator) ``source`` cell as its own (:attr:`LabelRecord.own_source`:
    the label comes back as the one it was, the labelling page's its own). Any other
    sheet's columns of those names are cells of the row like the others."""
    records: list[LabelRecord] = []
    checked = False
    put_back: bool | None = None  # the sheet a session file put back leaves (its header)
    json_like = fmt in ("json", "jsonl")
    unlabelled: tuple[str, Mapping[str, Any]] | None = None  # a JSON record without a label
    has_label = False

    def missing(where: str, row: Mapping[str, Any], column: str) -> LabelFileError:
        what = "id" if column == id_column else "label"
        return LabelFileError(f"{where}: no column {column!r} (columns: "
                              f"{short(sorted(map(str, row)), 160)}); name the column with "
                              f"--{what}-column ({what}_column= in Python)")

    for where, row in rows:
        if put_back is None:  # (QA: a pool's own 'undone' column took its labels back)
            put_back = tuple(row) in PUT_BACK_HEADERS
        if not checked or json_like:  # JSON records may differ in keys
            if id_column not in row:
                raise missing(where, row, id_column)
            if label_column not in row and not json_like:
                raise missing(where, row, label_column)
            checked = True
        if label_column not in row:  # a JSON record not labelled yet: Label Studio's
            unlabelled = unlabelled or (where, row)  # JSON-MIN export leaves the key out
            continue  # (QA: a partly labelled project was refused whole)
        has_label = True
        raw = row[label_column]
        undone = iso_time(row.get(UNDONE_COLUMN), where, UNDONE_COLUMN) if put_back else None
        if undone is not None and (raw is None or str(raw).strip() == ""):
            raw = row.get(UNDONE_LABEL_COLUMN)  # taken back: its label (an old reader
            # skips the row, its label cell empty)
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            back = (_unnamed_undo(row, undone, where, id_column, source) if put_back
                    else None)  # (a label taken back was skipped unsaid: the backup's
            if back is not None:  # label stayed after import)
                records.append(back)
            continue
        item_id = id_cell(row[id_column], where, id_column)
        try:
            y = labels(raw, where)
        except LabelFileError as e:
            if "answer" not in row or label_column == "answer":
                raise
            # (QA: a graded session's sheet imported into a classification session said
            # only "unknown label 'incorrect'")
            raise LabelFileError(f"{e}. The sheet's rows carry an 'answer' column, as a "
                                 f"graded session's sheets do (a judgment of each model "
                                 f"answer): was it exported from another session? This "
                                 f"session's labels are its classes") from None
        if y is None:
            continue
        time = None
        for column in TIME_COLUMNS:
            if column in row and row[column] not in (None, ""):
                time = iso_time(row[column], where, column)
                break
        annotator = optional_text(row.get("annotator"), where, "annotator")
        if LS_ANNOTATION_COLUMN in row:  # Label Studio's JSON-MIN/CSV/TSV export: its
            # user ids named as its JSON export names them (the same person, one name)
            annotator = labelstudio.export_row_annotator(row.get("annotator"))
        own = ((optional_text(row.get("source"), where, "source") or "").strip() or None
               if put_back and annotator is None else None)  # the label's own source
        records.append(LabelRecord(item_id=item_id, label=y, source=own or source,
                                   annotator=annotator,
                                   time=time, raw=raw if isinstance(raw, str) else str(raw),
                                   where=where, answer_of=answer_of_cell(row.get("answer_of"),
                                                                         where),
                                   check=optional_text(row.get(CHECK_COLUMN), where,
                                                       CHECK_COLUMN),
                                   shown=shown_cells(row, (id_column, label_column,
                                                           "answer_of", GROUND_TRUTH_COLUMN)
                                                     + (PUT_BACK_COLUMNS if put_back else ())),
                                   ground_truth=_truth_cell(row.get(GROUND_TRUTH_COLUMN),
                                                            where),
                                   kind=optional_text(row.get(KIND_COLUMN), where,
                                                      KIND_COLUMN) if put_back else None,
                                   undone=undone, own_source=own is not None))
    if unlabelled is not None and not has_label:  # no record has the column: misnamed
        raise missing(*unlabelled, label_column)
    return records
