"""Fuzzing the label-file parsers: any input gives records or a LabelFileError, nothing else."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data import Task, get_task
from activetest.session.labelio import (
    LabelFileError,
    LabelRecord,
    import_labels,
    import_labelstudio,
)

SST2 = get_task("sst2")
HS = get_task("hs")
TASKS = [SST2, HS, get_task("mmlu")]
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                      HealthCheck.too_slow])


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _check(result: list[LabelRecord], task: Task) -> None:
    assert isinstance(result, list)
    for r in result:
        assert isinstance(r, LabelRecord)
        assert isinstance(r.item_id, str) and r.item_id
        assert isinstance(r.label, int) and 0 <= r.label < task.n_classes
        assert r.annotator is None or isinstance(r.annotator, str)
        assert r.time is None or isinstance(r.time, str)


def _run(path: Path, data: bytes, task: Task, **kw: object) -> None:
    path.write_bytes(data)
    try:
        if kw.pop("labelstudio", False):
            result = import_labelstudio(path, task, **kw)  # type: ignore[arg-type]
        else:
            result = import_labels(path, task, **kw)  # type: ignore[arg-type]
    except LabelFileError as exc:
        assert str(path) in str(exc)  # every message names the file
        return
    _check(result, task)


# Bytes biased towards the parsers' structure characters.
_alphabet = st.sampled_from([*b',;\t\n\r"\\{}[]:0123456789abce-_ ', 0, 0xC3, 0xA9, 0xFF])
_bytes = st.one_of(st.binary(max_size=300), st.lists(_alphabet, max_size=300).map(bytes))


@FUZZ
@given(data=_bytes, suffix=st.sampled_from([".csv", ".tsv", ".jsonl", ".json"]),
       task=st.sampled_from(TASKS))
def test_random_bytes_sheets(work: Path, data: bytes, suffix: str, task: Task) -> None:
    _run(work / f"random{suffix}", data, task)
    _run(work / f"header{suffix}", b"item_id,label\n" + data, task)


@FUZZ
@given(data=_bytes)
def test_random_bytes_labelstudio(work: Path, data: bytes) -> None:
    _run(work / "export.json", data, SST2, labelstudio=True)


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                     st.text(max_size=12),
                     st.sampled_from(["positive", "Negative", " 1 ", "0", "hate", "A", "",
                                      "2025-01-02T03:04:05Z", "choices", "item_id"]))
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(["item_id", "label", "data", "annotations", "result",
                                     "value", "choices", "type", "from_name", "was_cancelled",
                                     "completed_by", "updated_at", "created_at", "annotator",
                                     "time", "text", "id"]) | st.text(max_size=5),
                    inner, max_size=5)), max_leaves=30)


def _ls_result() -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({
        "type": st.sampled_from(["choices", "textarea"]) | _scalars,
        "from_name": st.sampled_from(["label", "other"]) | _scalars,
        "value": st.one_of(st.fixed_dictionaries(
            {"choices": st.lists(st.sampled_from(["positive", "negative", "x"]) | _scalars,
                                 max_size=2) | _scalars}), _json),
    })


_ls_export = st.lists(st.fixed_dictionaries({
    "data": st.one_of(st.fixed_dictionaries({"item_id": _scalars, "text": _scalars}), _json),
    "annotations": st.one_of(st.lists(st.fixed_dictionaries({
        "result": st.lists(_ls_result(), max_size=3) | _json,
        "was_cancelled": st.booleans() | _scalars,
        "completed_by": _scalars | st.fixed_dictionaries({"email": _scalars}),
        "updated_at": _scalars,
    }), max_size=3), _json),
}), max_size=4)


@FUZZ
@given(doc=st.one_of(_json, _ls_export), from_name=st.sampled_from([None, "label"]))
def test_random_json_labelstudio(work: Path, doc: object, from_name: str | None) -> None:
    text = json.dumps(doc, allow_nan=True).encode()
    _run(work / "export.json", text, SST2, labelstudio=True, from_name=from_name)


_rows = st.lists(st.fixed_dictionaries({"item_id": _scalars, "label": _scalars}, optional={
    "time": _scalars, "annotator": _scalars, "extra": _json}), max_size=5)


@FUZZ
@given(doc=st.one_of(_json, _rows), task=st.sampled_from(TASKS))
def test_random_json_sheets(work: Path, doc: object, task: Task) -> None:
    _run(work / "sheet.json", json.dumps(doc).encode(), task)
    lines = doc if isinstance(doc, list) else [doc]
    _run(work / "sheet.jsonl", "\n".join(json.dumps(x) for x in lines).encode(), task)


_cell = st.one_of(st.text(max_size=10), st.sampled_from(
    ["positive", "NEGATIVE", "1", "-1", "7", "", " ", "noHate", "A", "2025-01-02", '"', "\n"]))


@FUZZ
@given(header=st.lists(st.sampled_from(["item_id", "label", "time", "annotator", "text", ""]),
                       max_size=5),
       rows=st.lists(st.lists(_cell, max_size=6), max_size=6),
       dialect=st.sampled_from(["excel", "excel-tab"]), task=st.sampled_from(TASKS))
def test_random_csv_rows(work: Path, header: list[str], rows: list[list[str]], dialect: str,
                         task: Task) -> None:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, dialect=dialect)
    writer.writerow(header)
    writer.writerows(rows)
    suffix = ".csv" if dialect == "excel" else ".tsv"
    _run(work / f"rows{suffix}", buf.getvalue().encode("utf-8", "surrogatepass"), task)


# Strings biased towards what spreadsheets and CSV readers treat specially.
_hostile = st.text(alphabet=st.sampled_from(list("'=+-@\t\r\n\",;ab1 ")), min_size=1,
                   max_size=8)


@FUZZ
@given(ids=st.lists(_hostile, min_size=1, max_size=6, unique=True),
       texts=st.lists(st.text(max_size=12), min_size=6, max_size=6),
       fmt=st.sampled_from(["csv", "tsv"]))
def test_every_id_and_text_round_trips_a_sheet(work: Path, ids: list[str], texts: list[str],
                                               fmt: str) -> None:
    """The formula escape is reversible: any ids and texts, exported and read back
    with every row labelled, come back as they were, with no cell that a
    spreadsheet would run as a formula."""
    from activetest.data import Item
    from activetest.session.labelio import export_items

    texts = [t.replace("\x00", "") for t in texts]  # NUL: not a text file
    items = [Item(i, {"text": texts[k]}) for k, i in enumerate(ids)]
    path = export_items(items, SST2, work / f"round.{fmt}")
    dialect = "excel" if fmt == "csv" else "excel-tab"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, dialect=dialect))
    assert len(rows) == len(ids) + 1
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r", "\n")) for r in rows
                   for c in r)
    for r in rows[1:]:
        r[-1] = "positive"
    buf = io.StringIO(newline="")
    csv.writer(buf, dialect=dialect).writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")
    records = import_labels(path, SST2, format=fmt)
    assert [r.item_id for r in records] == ids
    assert [dict(r.shown)["text"] for r in records] == texts[: len(ids)]
