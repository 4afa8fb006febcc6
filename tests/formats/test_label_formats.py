"""Unit tests of the label file formats (formats/sheets, formats/labelstudio), without a task:
the caller's label rule is a plain function."""

from __future__ import annotations

import json

import pytest

from activetest.formats import labelstudio, sheets
from activetest.formats.label_records import LabelFileError, content_check, parse_time

CLASSES = ("neg", "pos")


def _rule():
    def parse(raw, where):
        if raw not in CLASSES:
            raise LabelFileError(f"{where}: unknown label {raw!r}")
        return CLASSES.index(raw)
    return parse


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json"])
def test_sheet_round_trip_keeps_formula_cells(tmp_path, fmt):
    rows = [{"item_id": "=1+2", "content_check": content_check({"text": "-a"}), "text": "-a",
             "label": "pos"},
            {"item_id": "'x", "content_check": "c0", "text": "b\rc", "label": None}]
    header = ["item_id", "content_check", "text", "label"]
    path = sheets.write_sheet(tmp_path / f"s.{fmt}", fmt, header, rows)
    if fmt == "csv":
        assert path.read_text(encoding="utf-8").splitlines()[1].startswith("'=1+2,")
    records = sheets.read_labels(path, fmt, _rule)
    assert [(r.item_id, r.label, r.check, r.source) for r in records] == [
        ("=1+2", 1, rows[0]["content_check"], f"{fmt}:s.{fmt}")]
    assert dict(records[0].shown) == {"text": "-a"}


def test_defuse_is_reversible():
    for cell in ["=x", "'=x", "''", "'", "plain", "-1", "\tx", ""]:
        assert sheets.undefuse(sheets.defuse(cell)) == cell


def test_sheet_errors_name_file_and_line(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("item_id,label\na,maybe\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"s\.csv, line 2: unknown label 'maybe'"):
        sheets.read_labels(path, "csv", _rule)
    path.write_text("id,label\na,pos\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match="no column 'item_id'"):
        sheets.read_labels(path, "csv", _rule)


def test_labelstudio_tasks_round_trip(tmp_path):
    entry = labelstudio.task_entry({"text": "hi"}, "7", "cabc", guess="pos", score=0.9)
    assert entry["data"] == {"text": "hi", "item_id": "7", "content_check": "cabc"}
    assert entry["predictions"][0]["result"][0]["value"] == {"choices": ["pos"]}
    entry["annotations"] = [{"completed_by": {"email": "a@b"}, "updated_at": "2025-01-31 12:00Z",
                             "result": [{"type": "choices", "from_name": "label",
                                         "value": {"choices": ["neg"]}}]}]
    path = labelstudio.write_tasks(tmp_path / "ls.json", [entry])
    assert labelstudio.looks_like_export(json.loads(path.read_text(encoding="utf-8")))
    (record,) = labelstudio.read_export(path, "labelstudio:ls.json", None, _rule)
    assert (record.item_id, record.label, record.annotator, record.check) == \
        ("7", 0, "a@b", "cabc")
    assert record.time == parse_time("2025-01-31T12:00:00+00:00").isoformat()
    # A .json sheet that is a full export goes to the Label Studio reader.
    assert sheets.read_labels(path, "json", _rule)[0].source == "labelstudio:ls.json"


def test_config_xml_one_choice_per_class():
    xml = labelstudio.config_xml(["text", "A"], CLASSES, "Sentiment?")
    assert '<Choice value="pos"/>' in xml and '<Text name="text_A" value="$A"/>' in xml
    with pytest.raises(ValueError, match="must differ"):
        labelstudio.config_xml(["text"], CLASSES, "h", "x", "x")


def test_a_sheets_ground_truth_column_marks_a_reference_label(tmp_path):
    """A ``ground_truth`` cell (the sheet a session file put back leaves writes one) marks
    the row's label as its item's reference; empty or false does not; anything else is
    refused, named with its line."""
    path = tmp_path / "s.csv"
    path.write_text("item_id,label,annotator,ground_truth\na,pos,,true\na,neg,ann,\n"
                    "b,neg,,FALSE\nc,pos,,1\n", encoding="utf-8")
    records = sheets.read_labels(path, "csv", _rule)
    assert [(r.item_id, r.annotator, r.ground_truth) for r in records] == [
        ("a", None, True), ("a", "ann", False), ("b", None, False), ("c", None, True)]
    assert all("ground_truth" not in dict(r.shown) for r in records)
    path.write_text("item_id,label,ground_truth\na,pos,maybe\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"s\.csv, line 2: ground_truth 'maybe'"):
        sheets.read_labels(path, "csv", _rule)


def test_put_back_rows_taken_back_with_no_label_are_read_or_refused_never_skipped(
        tmp_path) -> None:
    """The put-back sheet's rows whose label cells are empty: in the layouts without
    ``undone`` (7 and 5 columns), a row naming no annotator with a time is a label taken
    back that it does not name (``unnamed_undo``, the time its ``undone``); in the
    layouts with it, a row marked undone alike. An annotator's answer marked undone with
    no label is refused, naming the line (it cannot be kept undone without it); a row
    with no time (none of our releases wrote one) is not labelled yet."""
    at = "2026-12-07T10:00:00+00:00"
    seven = tmp_path / "seven.csv"
    seven.write_text("item_id,label,source,time,answer_of,annotator,ground_truth\n"
                     f"a,,undo,{at},,,\nb,,,,,,\nc,pos,api,{at},,,\n", encoding="utf-8")
    got = sheets.read_labels(seven, "csv", _rule)
    assert [(r.item_id, r.undone, r.unnamed_undo, r.source) for r in got] == [
        ("a", at, True, "undo"), ("c", None, False, "api")]
    ten = tmp_path / "ten.csv"
    ten.write_text(",".join(sheets.PUT_BACK_COLUMNS) + "\n"
                   f"a,,undo,{at},,,,,{at},\n", encoding="utf-8")
    (got,) = sheets.read_labels(ten, "csv", _rule)
    assert got.unnamed_undo and got.undone == at
    ten.write_text(",".join(sheets.PUT_BACK_COLUMNS) + "\n"
                   f"a,,answer (alice),{at},,alice,,answer,{at},\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"ten.csv, line 2: 'alice'.s answer is marked "
                                             r"undone .* names no label"):
        sheets.read_labels(ten, "csv", _rule)
