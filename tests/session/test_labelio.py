"""Label files: Label Studio, CSV, TSV, JSONL and JSON, both ways."""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from activetest.data import Item, Task, get_task
from activetest.session.labelio import (
    LabelFileError,
    LabelRecord,
    content_check,
    export_items,
    export_labelstudio,
    import_labels,
    import_labelstudio,
    labelstudio_config,
    parse_time,
)

DATA = Path(__file__).resolve().parent / "data"

SST2 = get_task("sst2")
HS = get_task("hs")  # label words no/yes, class names noHate/hate
MMLU = get_task("mmlu")

ODD_IDS = ["plain-1", "comma,id", 'quote"d', "tab\tid", "new\nline", " lead space ", "ünïcødé-✓",
           "=1+2", "semi;colon", "back\\slash", "42"]


def _items(ids: list[str] = ODD_IDS) -> list[Item]:
    texts = ["fine film", 'a "quoted", comma text', "tab\there", "two\nlines", "", "ü ✓ 😀",
             "=SUM(A1)", "a;b", "back\\slash", "plain", "x" * 300]
    return [Item(i, {"text": texts[k % len(texts)]}) for k, i in enumerate(ids)]


def _labelstudio_export(tasks: list[dict], labels: dict[str, list[str]], from_name: str = "label",
                        to_name: str = "text") -> list[dict]:
    """What the Label Studio server exports after people annotated ``tasks``.

    The server drops the imported predictions (keeps their ids), gives each task and
    annotation its own id, and returns ``data`` unchanged.
    """
    out = []
    for k, t in enumerate(tasks):
        chosen = labels.get(t["data"]["item_id"], [])
        if not chosen:
            continue  # the default export holds annotated tasks only
        anns = [{
            "id": 100 * k + j, "completed_by": j + 1,
            "result": [{"value": {"choices": [c]}, "id": f"r{k}x{j}", "from_name": from_name,
                        "to_name": to_name, "type": "choices", "origin": "manual"}],
            "was_cancelled": False, "ground_truth": False,
            "created_at": "2025-01-02T03:04:05.000001Z", "updated_at": "2025-01-02T03:04:06.5Z",
            "draft_created_at": None, "lead_time": 2.5, "prediction": {}, "result_count": 0,
            "unique_id": f"u{k}-{j}", "import_id": None, "last_action": None,
            "bulk_created": False, "task": 500 + k, "project": 1, "updated_by": j + 1,
            "parent_prediction": None, "parent_annotation": None, "last_created_by": None,
        } for j, c in enumerate(chosen)]
        out.append({
            "id": 500 + k, "annotations": anns, "file_upload": "abc-tasks.json", "drafts": [],
            "predictions": [900 + k] if "predictions" in t else [],
            "data": json.loads(json.dumps(t["data"])), "meta": {},
            "created_at": "2025-01-02T03:00:00Z", "updated_at": "2025-01-02T03:04:06Z",
            "inner_id": k + 1, "total_annotations": len(anns), "cancelled_annotations": 0,
            "total_predictions": 1 if "predictions" in t else 0, "comment_count": 0,
            "unresolved_comment_count": 0, "last_comment_updated_at": None, "project": 1,
            "updated_by": 1, "comment_authors": [],
        })
    return out


# --------------------------------------------------------------------------- Label Studio


def test_labelstudio_round_trip_with_predictions(tmp_path: Path) -> None:
    items = _items()
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(len(items), 2)) * 3
    lp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    path = export_labelstudio(items, SST2, tmp_path / "sub" / "tasks.json", predictions=lp,
                              model_version="smollm2-icl")
    tasks = json.loads(path.read_text(encoding="utf-8"))
    assert [t["data"]["item_id"] for t in tasks] == ODD_IDS
    assert all("id" not in t for t in tasks)
    for t, item, row in zip(tasks, items, lp, strict=True):
        assert t["data"]["text"] == item.fields["text"]
        (pred,) = t["predictions"]
        assert pred["model_version"] == "smollm2-icl"
        assert pred["score"] == pytest.approx(np.exp(row.max()))
        (res,) = pred["result"]
        assert res == {"from_name": "label", "to_name": "text", "type": "choices",
                       "value": {"choices": [SST2.class_names[int(np.argmax(row))]]}}

    # People accept some pre-annotations, change others; one item gets two opinions.
    given = {i: [SST2.class_names[k % 2]] for k, i in enumerate(ODD_IDS[:-2])}
    given["comma,id"] = ["positive", "negative"]
    export = tmp_path / "project-1-at-2025-01-02.json"
    export.write_text(json.dumps(_labelstudio_export(tasks, given), indent=2), encoding="utf-8")
    records = import_labelstudio(export, SST2)
    expected = [(i, c) for i in ODD_IDS[:-2] for c in given[i]]
    assert [(r.item_id, SST2.class_names[r.label]) for r in records] == expected
    r0 = records[0]
    assert r0 == LabelRecord("plain-1", 0, f"labelstudio:{export.name}", "user 1",
                             "2025-01-02T03:04:06.500000+00:00", "negative")
    assert {r.annotator for r in records if r.item_id == "comma,id"} == {"user 1", "user 2"}
    # import_labels recognises a full Label Studio export by its shape.
    assert import_labels(export, SST2) == records


def test_labelstudio_fixture_export(tmp_path: Path) -> None:
    records = import_labelstudio(DATA / "labelstudio_export_sst2.json", SST2)
    assert [(r.item_id, r.label, r.annotator, r.raw) for r in records] == [
        ("sst2-000017", 1, "user 1", "positive"),
        ("sst2-000042", 0, "user 1", "negative"),
        ("sst2-000042", 1, "user 2", "positive"),
        # the cancelled (skipped) annotation is dropped; case-insensitive class name
        ('sst2/odd id, "quoted" #3', 0, "reviewer@example.org", "Negative"),
    ]
    assert records[1].time == "2025-03-04T10:16:03.004871+00:00"  # updated_at, not created_at
    assert {r.source for r in records} == {"labelstudio:labelstudio_export_sst2.json"}


def test_labelstudio_min_and_csv_exports_are_sheets() -> None:
    """Their ``annotator`` cell is Label Studio's user id, named as the JSON export
    names it (``completed_by: 1`` is "user 1" there): one person, one name."""
    mini = import_labels(DATA / "labelstudio_export_sst2_min.json", SST2)
    assert [(r.item_id, r.label, r.annotator) for r in mini] == [
        ("sst2-000017", 1, "user 1"), ("sst2-000042", 0, "user 1")]
    assert mini[0].time == "2025-03-04T10:15:02.118401+00:00"
    sheet = import_labels(DATA / "labelstudio_export_sst2.csv", SST2)
    assert [(r.item_id, r.label, r.annotator) for r in sheet] == [
        ("sst2-000017", 1, "user 1"), ("sst2-000042", 0, "user 1"),
        ('sst2/odd id, "quoted" #3', 0, "user 2")]


def test_labelstudio_export_rows_name_users_as_the_json_export_does(tmp_path: Path) -> None:
    """What Label Studio's converter writes in the annotator cell: the id (a number in
    JSON-MIN, digits in CSV), an e-mail when users are expanded, ``None`` when the user
    has neither (no identity: no name is invented). A sheet that is not Label Studio's
    (no ``annotation_id`` column) keeps its annotator cells as written."""
    rows = [{"item_id": "a", "label": "positive", "annotator": 7, "annotation_id": 1},
            {"item_id": "b", "label": "positive", "annotator": "x@example.org",
             "annotation_id": 2},
            {"item_id": "c", "label": "positive", "annotator": "None", "annotation_id": 3},
            {"item_id": "d", "label": "positive", "annotator": None, "annotation_id": 4}]
    (tmp_path / "min.json").write_text(json.dumps(rows), encoding="utf-8")
    got = [r.annotator for r in import_labels(tmp_path / "min.json", SST2)]
    assert got == ["user 7", "x@example.org", None, None]
    (tmp_path / "e.csv").write_text("item_id,label,annotator,annotation_id\n"
                                    "a,positive,7,1\nb,positive,x@example.org,2\n"
                                    "c,positive,None,3\n", encoding="utf-8")
    got = [r.annotator for r in import_labels(tmp_path / "e.csv", SST2)]
    assert got == ["user 7", "x@example.org", None]
    (tmp_path / "own.csv").write_text("item_id,label,annotator\na,positive,7\n",
                                      encoding="utf-8")
    assert [r.annotator for r in import_labels(tmp_path / "own.csv", SST2)] == ["7"]


def test_labelstudio_unknown_class_names_task_and_item(tmp_path: Path) -> None:
    tasks = json.loads(export_labelstudio(_items(["a", "b/β"]), SST2,
                                          tmp_path / "t.json").read_text(encoding="utf-8"))
    path = tmp_path / "export.json"
    path.write_text(json.dumps(_labelstudio_export(tasks, {"a": ["positive"],
                                                           "b/β": ["neutral"]})))
    with pytest.raises(LabelFileError) as err:
        import_labelstudio(path, SST2)
    msg = str(err.value)
    assert str(path) in msg and "task 1" in msg and "'b/β'" in msg
    assert "'neutral'" in msg and "'negative'" in msg and "'positive'" in msg
    # A class index is not a Label Studio choice.
    path.write_text(json.dumps(_labelstudio_export(tasks, {"a": ["1"]})))
    with pytest.raises(LabelFileError, match=r"label '1' is a number, but this file declares no "
                                             r"class numbering.*--label-base"):
        import_labelstudio(path, SST2)
    assert [r.label for r in import_labelstudio(path, SST2, label_base=1)] == [0]


def test_labelstudio_class_names_differ_from_label_words(tmp_path: Path) -> None:
    items = _items(["h1", "h2", "h3"])
    lp = np.log(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]))
    tasks = json.loads(export_labelstudio(items, HS, tmp_path / "t.json", predictions=lp)
                       .read_text(encoding="utf-8"))
    assert [t["predictions"][0]["result"][0]["value"]["choices"] for t in tasks[:2]] == [
        ["noHate"], ["hate"]]
    assert "predictions" not in tasks[2]  # a tie is no guess: no pre-annotation
    path = tmp_path / "e.json"
    path.write_text(json.dumps(_labelstudio_export(tasks, {"h1": ["hate"], "h2": ["noHate"],
                                                           "h3": ["yes"]})))
    assert [r.label for r in import_labelstudio(path, HS)] == [1, 0, 1]


def test_labelstudio_from_name_selects_result(tmp_path: Path) -> None:
    tasks = json.loads(export_labelstudio(_items(["a"]), SST2, tmp_path / "t.json")
                       .read_text(encoding="utf-8"))
    export = _labelstudio_export(tasks, {"a": ["positive"]}, from_name="sentiment")
    extra = {"value": {"choices": ["negative"]}, "id": "z", "from_name": "other",
             "to_name": "text", "type": "choices", "origin": "manual"}
    text_area = {"value": {"text": ["note"]}, "id": "y", "from_name": "comment",
                 "to_name": "text", "type": "textarea", "origin": "manual"}
    export[0]["annotations"][0]["result"] += [extra, text_area]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(export))
    with pytest.raises(LabelFileError, match=r"2 'choices' results.*from_name"):
        import_labelstudio(path, SST2)
    assert [r.label for r in import_labelstudio(path, SST2, from_name="sentiment")] == [1]
    assert [r.label for r in import_labelstudio(path, SST2, from_name="other")] == [0]
    # an answer under another name is never dropped silently: the import stops, naming them
    with pytest.raises(LabelFileError, match=r"choices \(sentiment\), choices \(other\).*"
                                             r"named 'nothing'"):
        import_labelstudio(path, SST2, from_name="nothing")


@pytest.mark.parametrize(("mutate", "pattern"), [
    (lambda e: e[0].pop("data"), r"task 0: no 'data' object"),
    (lambda e: e[0]["data"].pop("item_id"), r"task 0: data has no 'item_id'"),
    (lambda e: e[0]["data"].update(item_id=None), r"task 0: empty 'data.item_id'"),
    (lambda e: e[0].update(annotations={"a": 1}), r"'annotations' is a dict"),
    (lambda e: e[0]["annotations"][0]["result"][0]["value"].update(choices="positive"),
     r"task 0 \(item_id 'a'\), annotation 0, result 0: expected value.choices to be a list"),
    (lambda e: e[0]["annotations"][0]["result"][0]["value"].update(
        choices=["positive", "negative"]), r"expected exactly one chosen class"),
    (lambda e: e[0]["annotations"][0].update(updated_at="yesterday"), r"ISO 8601"),
])
def test_labelstudio_malformed(tmp_path: Path, mutate, pattern: str) -> None:
    tasks = [{"data": {"text": "t", "item_id": "a"}}]
    export = _labelstudio_export(tasks, {"a": ["positive"]})
    mutate(export)
    path = tmp_path / "e.json"
    path.write_text(json.dumps(export))
    with pytest.raises(LabelFileError, match=pattern) as err:
        import_labelstudio(path, SST2)
    assert str(path) in str(err.value)


def test_labelstudio_not_json(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text('[{"data": {"item_id": "a"},\n "annotations": [}]')
    with pytest.raises(LabelFileError, match=r"e\.json: invalid JSON.*line 2"):
        import_labelstudio(path, SST2)
    path.write_text('{"data": {}}')
    with pytest.raises(LabelFileError, match="expected a JSON list of Label Studio tasks"):
        import_labelstudio(path, SST2)
    with pytest.raises(FileNotFoundError, match=r"nope\.json"):
        import_labelstudio(tmp_path / "nope.json", SST2)


def test_labelstudio_config_is_valid_xml() -> None:
    root = ET.fromstring(labelstudio_config(SST2))
    assert root.tag == "View"
    (text,) = root.findall("Text")
    assert text.attrib == {"name": "text", "value": "$text"}
    choices = root.find("Choices")
    assert choices is not None and choices.attrib["name"] == "label"
    assert choices.attrib["toName"] == "text" and choices.attrib["choice"] == "single"
    assert [c.attrib["value"] for c in choices] == ["negative", "positive"]

    root = ET.fromstring(labelstudio_config(MMLU, "answer", "question"))
    texts = [t.attrib for t in root.findall("Text")]
    assert texts[0] == {"name": "question", "value": "$question"}
    assert [t["value"] for t in texts[1:]] == ["$A", "$B", "$C", "$D"]
    assert len({t["name"] for t in texts}) == 5
    assert [c.attrib["value"] for c in root.find("Choices")] == ["A", "B", "C", "D"]

    odd = Task(name="odd", instruction='Say "<a>" or \'b&c\'.\n', classes=("<a>", "b&c"))
    root = ET.fromstring(labelstudio_config(odd))
    assert [c.attrib["value"] for c in root.find("Choices")] == ["<a>", "b&c"]
    with pytest.raises(ValueError, match="from_name"):
        labelstudio_config(SST2, "bad name", "text")


def test_labelstudio_mmlu_export_keeps_options(tmp_path: Path) -> None:
    item = Item("q1", {"question": "2+2?", "A": "3", "B": "4", "C": "5", "D": "22"})
    (task,) = json.loads(export_labelstudio([item], MMLU, tmp_path / "m.json",
                                            to_name="question").read_text(encoding="utf-8"))
    assert task["data"] == {"question": "2+2?", "A": "3", "B": "4", "C": "5", "D": "22",
                            "item_id": "q1", "content_check": content_check(item.fields)}


def test_export_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="appears twice"):
        export_labelstudio([Item("a", {"text": "x"})] * 2, SST2, tmp_path / "t.json")
    with pytest.raises(ValueError, match="has no field"):
        export_items([Item("a", {"sentence": "x"})], SST2, tmp_path / "t.csv")
    with pytest.raises(ValueError, match=r"shape \(items, classes\) = \(1, 2\)"):
        export_labelstudio([Item("a", {"text": "x"})], SST2, tmp_path / "t.json",
                           predictions=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        export_items([Item("a", {"text": "x"})], SST2, tmp_path / "t.csv",
                     predictions=np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="cannot tell the format"):
        export_items([Item("a", {"text": "x"})], SST2, tmp_path / "t.xlsx")


# --------------------------------------------------------------------------- sheets


def _fill_sheet(path: Path, fmt: str, labels: dict[str, str]) -> None:
    """Simulate a person filling in the ``label`` column."""
    if fmt in ("csv", "tsv"):
        dialect = "excel" if fmt == "csv" else "excel-tab"
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, dialect=dialect))
        for row in rows:
            # what the person sees: a spreadsheet hides the ' that makes a formula inert
            shown = row["item_id"][1:] if row["item_id"].startswith("'=") else row["item_id"]
            row["label"] = labels.get(shown, "")
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]), dialect=dialect)
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row["label"] = labels.get(row["item_id"])
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        rows = json.loads(path.read_text(encoding="utf-8"))
        for row in rows:
            row["label"] = labels.get(row["item_id"])
        path.write_text(json.dumps(rows), encoding="utf-8")


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json"])
def test_sheet_round_trip(tmp_path: Path, fmt: str) -> None:
    items = _items()
    lp = np.log(np.array([[0.7, 0.3], [0.1, 0.9]] * 6))[: len(items)]
    path = export_items(items, SST2, tmp_path / f"round1.{fmt}", predictions=lp)
    if fmt in ("csv", "tsv"):
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, dialect="excel" if fmt == "csv" else "excel-tab"))
        assert list(rows[0]) == ["item_id", "content_check", "text", "predicted",
                                 "predicted_prob", "label"]
        # cells a spreadsheet would run as formulas are written inert, with a leading '
        inert = {"=1+2": "'=1+2", "=SUM(A1)": "'=SUM(A1)", "tab\there": "tab\there"}
        assert [r["item_id"] for r in rows] == [inert.get(i, i) for i in ODD_IDS]
        assert [r["text"] for r in rows] == [inert.get(i.fields["text"], i.fields["text"])
                                             for i in items]
        assert rows[0]["predicted"] == "negative" and float(rows[0]["predicted_prob"]) == 0.7
        assert all(r["label"] == "" for r in rows)
    # Words in any case, class indices, blanks (skipped) and an unlabelled tail.
    given = {"plain-1": "Positive", "comma,id": "negative", 'quote"d': "1", "tab\tid": " 0 ",
             "new\nline": "POSITIVE", " lead space ": "", "ünïcødé-✓": "negative",
             "=1+2": "positive"}
    _fill_sheet(path, fmt, given)
    records = import_labels(path, SST2, label_base=0)  # "1" and " 0 " are numbers
    assert [(r.item_id, r.label, r.raw) for r in records] == [
        ("plain-1", 1, "Positive"), ("comma,id", 0, "negative"), ('quote"d', 1, "1"),
        ("tab\tid", 0, " 0 "), ("new\nline", 1, "POSITIVE"), ("ünïcødé-✓", 0, "negative"),
        ("=1+2", 1, "positive")]
    assert {r.source for r in records} == {f"{fmt}:round1.{fmt}"}
    assert all(r.annotator is None and r.time is None for r in records)


def test_sheet_without_predictions_and_explicit_format(tmp_path: Path) -> None:
    path = export_items(_items(["a", "b"]), SST2, tmp_path / "sheet.txt", format="csv")
    assert path.read_text(encoding="utf-8").splitlines()[0] == \
        "item_id,content_check,text,label"
    path.write_text("item_id,text,label\na,x,positive\nb,y,\n", encoding="utf-8")
    assert [r.item_id for r in import_labels(path, SST2, format="csv", source="me")] == ["a"]
    assert import_labels(path, SST2, format="csv", source="me")[0].source == "me"


def test_sheet_columns_and_extras(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("\ufeffID,gold,annotator,time\r\n"
                    "x1,noHate,ann@example.org,2025-02-03T04:05:06Z\r\n"
                    "x2,YES,,\r\n"
                    ",,,\r\n"
                    "\r\n"
                    "x3,1\r\n", encoding="utf-8")  # a spreadsheet drops trailing empty cells
    records = import_labels(path, HS, id_column="ID", label_column="gold", label_base=0)
    assert [(r.item_id, r.label, r.annotator, r.time) for r in records] == [
        ("x1", 0, "ann@example.org", "2025-02-03T04:05:06+00:00"),
        ("x2", 1, None, None), ("x3", 1, None, None)]


def test_semicolon_csv(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text('item_id;text;label\na;"x; y";positive\nb;z;0\n', encoding="utf-8")
    assert [(r.item_id, r.label) for r in import_labels(path, SST2, label_base=0)] == [
        ("a", 1), ("b", 0)]
    path.write_text('"item_id";"label"\n"a";"negative"\n', encoding="utf-8")
    assert [(r.item_id, r.label) for r in import_labels(path, SST2)] == [("a", 0)]


def test_semicolon_csv_with_cr_only_line_ends(tmp_path: Path) -> None:
    """Excel's "CSV (Macintosh)": semicolons and lines ended by \\r alone (QA: the whole
    file was taken for the header line, read as comma-separated and refused)."""
    path = tmp_path / "mac.csv"
    path.write_bytes(b'item_id;text;label\ra;x;positive\rb;y;negative\r')
    assert [(r.item_id, r.label) for r in import_labels(path, SST2)] == [("a", 1), ("b", 0)]


def test_json_records_without_the_label_key_are_not_labelled_yet(tmp_path: Path) -> None:
    """Label Studio's JSON-MIN export of a partly labelled project leaves the label key
    out of the unlabelled tasks (QA: the file was refused whole, "no column 'label'");
    a file in which no record has the key still names the column to give."""
    path = tmp_path / "min.json"
    path.write_text(json.dumps([{"item_id": "a", "text": "x"},
                                {"item_id": "b", "text": "y", "label": "positive"}]),
                    encoding="utf-8")
    assert [(r.item_id, r.label) for r in import_labels(path, SST2)] == [("b", 1)]
    path.write_text(json.dumps([{"item_id": "a", "gold": "negative"}]), encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"no column 'label'.*--label-column"):
        import_labels(path, SST2)


def test_sheet_predictions_use_class_names(tmp_path: Path) -> None:
    lp = np.log(np.array([[0.25, 0.75]]))
    path = export_items([Item("h", {"text": "x"})], HS, tmp_path / "h.jsonl", predictions=lp)
    row = json.loads(path.read_text(encoding="utf-8"))
    assert row == {"item_id": "h", "content_check": content_check({"text": "x"}), "text": "x",
                   "predicted": "hate", "predicted_prob": 0.75, "label": None}


def test_jsonl_values(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text('{"item_id": "a", "label": 1}\n\n{"item_id": 7, "label": "negative"}\n'
                    '{"item_id": "c", "label": null}\n{"item_id": "d", "label": 1.0}\n',
                    encoding="utf-8")
    assert [(r.item_id, r.label, r.raw) for r in import_labels(path, SST2, label_base=0)] == [
        ("a", 1, "1"), ("7", 0, "negative"), ("d", 1, "1.0")]


@pytest.mark.parametrize(("name", "text", "pattern"), [
    ("a.csv", "item_id,label\na,positive\nb,neutral\n",
     r"a\.csv, line 3: unknown label 'neutral'; expected one of 'negative', 'positive' or a "
     r"class number 0\.\.1"),
    ("a.csv", "item_id,label\na,2\n", r"line 2: label '2' is not a class number 0\.\.1"),
    # a graded session's sheet (a judgment of each answer) in a classification session
    ("g.csv", "item_id,answer,label\na,Paris,incorrect\n",
     r"g\.csv, line 2: unknown label 'incorrect'; expected one of .*\. The sheet's rows "
     r"carry an 'answer' column, as a graded session's sheets do .*another session\?"),
    ("a.csv", "item_id,label\na,positive\nb,0,extra\n",
     r"a\.csv, line 3: expected 2 comma-separated fields"),
    ("a.csv", 'item_id,label\na,"positive\n', r"a\.csv, line 2: malformed comma-separated"),
    ("a.csv", "id,label\na,positive\n", r"a\.csv, line 2: no column 'item_id'.*id_column="),
    ("a.csv", "item_id,lbl\na,positive\n", r"line 2: no column 'label'.*label_column="),
    ("a.csv", "item_id,label\n,positive\n", r"line 2: empty 'item_id'"),
    ("a.csv", "", r"a\.csv: empty file"),
    ("a.csv", "item_id,label,label\na,1,1\n", r"line 1: header repeats column\(s\) \['label'\]"),
    ("a.csv", "item_id,label,time\na,1,3pm\n", r"line 2: 'time' is '3pm'; expected an ISO 8601"),
    ("a.tsv", "item_id\tlabel\na\tpositive\tx\n", r"a\.tsv, line 2: expected 2 tab-separated"),
    ("a.jsonl", '{"item_id": "a", "label": 1}\n{"item_id": "b", "label": 1\n',
     r"a\.jsonl, line 2: invalid JSON"),
    ("a.jsonl", '{"item_id": "a", "label": 1}\n[1, 2]\n', r"line 2: expected a JSON object"),
    ("a.jsonl", '{"item_id": "a", "label": true}\n', r"line 1: label True is a bool"),
    ("a.jsonl", '{"item_id": "a", "label": 0.5}\n', r"line 1: label 0\.5 is not a whole number"),
    ("a.jsonl", '{"item_id": "a", "label": ["positive"]}\n', r"line 1: label \['positive'\] is a"),
    ("a.jsonl", '{"item_id": 1.5, "label": 1}\n', r"line 1: 'item_id' is a float"),
    ("a.jsonl", '{"item_id": "a"}\n', r"a\.jsonl, line 1: no column 'label'"),
    ("a.json", '[{"item_id": "a", "label": 1}, 3]', r"a\.json, record 1: expected a JSON object"),
    ("a.json", '{"item_id": "a", "label": 1}', r"a\.json: expected a JSON list of objects"),
    ("a.csv", b"item_id,label\na,positive\nb,n\xe9gative\n", r"a\.csv, line 3: byte .*UTF-8"),
    ("a.csv", "item_id,label\na,\x00\n", r"a\.csv, line 2: NUL character"),
    # cut while written or copied: the last row short of the header, no line end (QA:
    # its whole rows were imported and the cut one said nothing)
    ("a.csv", "item_id,label,note\na,positive,x\nb,negat", r"a\.csv, line 3: the file "
     r"ends inside this row \(2 of 3 comma-separated fields and no line end\)"),
    ("a.tsv", "item_id\tlabel\tnote\na\tpositive\tx\nb", r"a\.tsv, line 3: the file ends "
     r"inside this row \(1 of 3 tab-separated fields.*Nothing was imported"),
])
def test_malformed_sheets_name_file_and_line(tmp_path: Path, name: str, text: str | bytes,
                                             pattern: str) -> None:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(LabelFileError, match=pattern):
        import_labels(path, SST2, label_base=0)


def test_a_short_row_is_a_spreadsheets_not_a_cut_where_its_line_ends(tmp_path: Path) -> None:
    """Spreadsheets drop trailing empty cells: a short row that ends its line (the last
    one included) is read with empty cells; so is a whole last row without a line end."""
    for text in ("item_id,label,note\na,positive\nb,negative\n",
                 "item_id,label,note\na,positive\nb,negative,x",
                 "item_id,label,note\r\na,positive\r\nb,negative\r"):
        path = tmp_path / "a.csv"
        path.write_text(text, encoding="utf-8", newline="")
        got = import_labels(path, SST2, label_base=0)
        assert {r.item_id: r.label for r in got} == {"a": 1, "b": 0}, text


#: Ids and texts a spreadsheet would run or misread, and ones that start with the
#: escape itself: every one must come back as it was.
FORMULA_IDS = ["=A1", "-5", "'-5", "+1", "@SUM(A1)", "\t=1", "\r=1+2", "\n=2+3", "'", "''",
               "'=A1", "''-5", "'plain", "-", "=", "x\r=y", "a\rb", "\r", "'\r=9"]


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_every_string_survives_the_formula_escape(tmp_path: Path, fmt: str) -> None:
    """export -> fill (a spreadsheet that keeps the cells' text) -> import gives every
    id back with its own label; no cell reads as a live formula; a CR in a cell does
    not break the row."""
    ids = FORMULA_IDS + [f"plain-{k}" for k in range(32 - len(FORMULA_IDS))]
    texts = ["\r=HYPERLINK(\"http://evil.example\")", "-1+1", "'quoted", "\n@x", "fine"]
    items = [Item(i, {"text": texts[k % len(texts)]}) for k, i in enumerate(ids)]
    path = export_items(items, SST2, tmp_path / f"s.{fmt}")
    dialect = "excel" if fmt == "csv" else "excel-tab"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, dialect=dialect))
    assert len(rows) == 32  # a bare CR used to end the row: 31 came back
    formula = ("=", "+", "-", "@", "\t", "\r", "\n")
    assert not any(c.startswith(formula) for r in rows for c in r.values())
    given = {i: SST2.class_names[k % 2] for k, i in enumerate(ids)}
    for r, i in zip(rows, ids, strict=True):
        r["label"] = given[i]
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), dialect=dialect)
        writer.writeheader()
        writer.writerows(rows)
    records = import_labels(path, SST2, format=fmt)
    assert [(r.item_id, SST2.class_names[r.label]) for r in records] == list(given.items())
    assert [dict(r.shown)["text"] for r in records] == [it.fields["text"] for it in items]


def test_a_tie_is_no_guess(tmp_path: Path) -> None:
    """A uniform surrogate (every row 0.5/0.5) writes no 'predicted' columns; a tie or
    an unscored (NaN) row among guesses leaves its cells empty, and its Label Studio
    task without a pre-annotation."""
    items = _items(["a", "b", "c"])
    flat = np.log(np.full((3, 2), 0.5))
    path = export_items(items, SST2, tmp_path / "u.csv", predictions=flat)
    header = next(csv.reader(path.open(newline="", encoding="utf-8")))
    assert "predicted" not in header and "predicted_prob" not in header
    tasks = json.loads(export_labelstudio(items, SST2, tmp_path / "u.json", predictions=flat)
                       .read_text(encoding="utf-8"))
    assert all("predictions" not in t for t in tasks)
    mixed = np.log(np.array([[0.2, 0.8], [0.5, 0.5], [np.nan, np.nan]]))
    path = export_items(items, SST2, tmp_path / "m.jsonl", predictions=mixed)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [(r["predicted"], r["predicted_prob"]) for r in rows] == [
        ("positive", 0.8), (None, None), (None, None)]
    tasks = json.loads(export_labelstudio(items, SST2, tmp_path / "m.json", predictions=mixed)
                       .read_text(encoding="utf-8"))
    assert ["predictions" in t for t in tasks] == [True, False, False]


def test_exports_carry_a_content_check_that_import_reads(tmp_path: Path) -> None:
    items = [Item("a", {"text": "fine film"}), Item("b", {"text": "dull"})]
    for path in (export_items(items, SST2, tmp_path / "s.csv"),
                 export_items(items, SST2, tmp_path / "s.jsonl")):
        text = path.read_text(encoding="utf-8").replace('"label": null', '"label": "positive"')
        path.write_text(text.replace(",\n", ",positive\n"), encoding="utf-8")
        records = import_labels(path, SST2)
        assert [(r.item_id, r.check) for r in records] == [
            (it.id, content_check(it.fields)) for it in items]
        assert dict(records[1].shown)["text"] == "dull"
    assert content_check({"text": "dull"}) != content_check({"text": "dull!"})
    # the id and whose answer it is are not content; a check never reads as a number
    assert content_check({"text": "x", "item_id": "1", "answer_of": "b"}) == \
        content_check({"text": "x"})
    assert content_check({"text": "x"})[0].isalpha()
    tasks = json.loads(export_labelstudio(items, SST2, tmp_path / "t.json")
                       .read_text(encoding="utf-8"))
    export = tmp_path / "e.json"
    export.write_text(json.dumps(_labelstudio_export(tasks, {"a": ["positive"]})))
    (record,) = import_labelstudio(export, SST2)
    assert record.check == content_check(items[0].fields)
    assert dict(record.shown) == {"text": "fine film"}


@pytest.mark.parametrize(("text", "instant"), [
    ("2025-01-02T03:04:06.5Z", "2025-01-02T03:04:06.500000+00:00"),  # Label Studio
    ("2025-01-02T03:04:06.123456Z", "2025-01-02T03:04:06.123456+00:00"),
    ("2025-01-02 05:04:06.1234567+02:00", "2025-01-02T05:04:06.123456+02:00"),
    ("2025-01-02T05:04:06+0200", "2025-01-02T05:04:06+02:00"),
    ("2025-01-02T05:04+02", "2025-01-02T05:04:00+02:00"),
    ("2025-01-02T03:04:06 UTC", "2025-01-02T03:04:06+00:00"),
    ("2025-01-02T03:04:06", "2025-01-02T03:04:06"),  # no zone: naive
    ("2025-01-02", "2025-01-02T00:00:00"),
])
def test_times_are_read_with_their_zone(text: str, instant: str) -> None:
    parsed = parse_time(text)
    assert parsed is not None and parsed.isoformat() == instant
    assert parse_time("3pm") is None and parse_time("2025-13-01T00:00:00Z") is None


def test_unknown_format(tmp_path: Path) -> None:
    path = tmp_path / "labels.xlsx"
    path.write_bytes(b"PK")
    with pytest.raises(ValueError, match="cannot tell the format"):
        import_labels(path, SST2)
    with pytest.raises(ValueError, match="format must be one of"):
        import_labels(path, SST2, format="xls")


# --------------------------------------------------------------------------- a real Label Studio
# Label Studio is a heavy Django application and not a dependency of activetest: this
# test runs only where its command is found (ACTIVETEST_LABEL_STUDIO=/path/to/label-studio,
# the repository's .venv-ls, which scripts/install_label_studio.sh makes and
# scripts/test.sh runs, or label-studio on PATH). A fresh server migrates its database
# first: under a minute to 3 minutes.


#: How long a fresh Label Studio may take to migrate its database and answer /health.
LABEL_STUDIO_START_SECONDS = 400.0


def _log_tail(path: Path, chars: int = 3000) -> str:
    """The last ``chars`` characters of the server's log (what it said before failing)."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(its log {path} cannot be read: {exc})"
    return text[-chars:] if text.strip() else f"(its log {path} is empty)"


def _label_studio_exe() -> str | None:
    local = Path(__file__).resolve().parents[2] / ".venv-ls" / "bin" / "label-studio"
    exe = (os.environ.get("ACTIVETEST_LABEL_STUDIO") or (str(local) if local.is_file() else None)
           or shutil.which("label-studio"))
    return exe if exe and Path(exe).is_file() else None


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    exe = _label_studio_exe()
    if exe is None:
        pytest.skip("label-studio not installed (scripts/install_label_studio.sh, or set "
                    "ACTIVETEST_LABEL_STUDIO to its command)")
    work = tmp_path_factory.mktemp("label_studio")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "activetest0123456789token"
    env = {**os.environ, "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
           "LABEL_STUDIO_COLLECT_ANALYTICS": "false", "LABEL_STUDIO_SENTRY_DSN": "",
           "LABEL_STUDIO_FRONTEND_SENTRY_DSN": ""}
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(
        [exe, "start", "--no-browser", "--internal-host", "127.0.0.1", "--port", str(port),
         "--data-dir", str(work / "data"), "--username", "labeller@example.org",
         "--password", "activetest-pass", "--user-token", token, "--enable-legacy-api-token"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60,
                          headers={"Authorization": f"Token {token}"})
    try:
        deadline = time.monotonic() + LABEL_STUDIO_START_SECONDS
        health = "no answer yet"
        while True:
            if proc.poll() is not None:
                pytest.fail(f"label-studio exited (code {proc.returncode}); the end of its "
                            f"log:\n{_log_tail(work / 'server.log')}")
            try:
                r = client.get("/health")
                health = f"{r.status_code} {r.text[:200]!r}"
                if r.json().get("status") == "UP":
                    break
            except (httpx.HTTPError, ValueError) as exc:
                health = f"{type(exc).__name__}: {exc}"
            if time.monotonic() > deadline:
                pytest.fail(f"label-studio did not come up in {LABEL_STUDIO_START_SECONDS:g} s "
                            f"(its /health last: {health}); the end of its log:\n"
                            f"{_log_tail(work / 'server.log')}")
            time.sleep(2)
        yield client
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _ls_project(client: httpx.Client, task: Task, **names: str) -> int:
    r = client.post("/api/projects", json={"title": f"activetest {task.name}",
                                           "label_config": labelstudio_config(task, **names)})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _ls_annotate(client: httpx.Client, task_id: int, choice: str | None, *,
                 from_name: str = "label", to_name: str = "text") -> None:
    if choice is None:  # the person skips the task
        body: dict = {"result": [], "was_cancelled": True}
    else:
        body = {"result": [{"from_name": from_name, "to_name": to_name, "type": "choices",
                            "value": {"choices": [choice]}}], "lead_time": 3.5}
    r = client.post(f"/api/tasks/{task_id}/annotations", json=body)
    assert r.status_code == 201, r.text


def _ls_export(client: httpx.Client, project: int, kind: str, path: Path) -> Path:
    r = client.get(f"/api/projects/{project}/export", params={"exportType": kind})
    assert r.status_code == 200, r.text
    path.write_bytes(r.content)
    return path


@pytest.mark.slow
def test_real_label_studio_round_trip(label_studio: httpx.Client, tmp_path: Path) -> None:
    client = label_studio
    ids = ODD_IDS[:7]
    items = _items(ids)
    lp = np.log(np.array([[0.2, 0.8], [0.9, 0.1], [0.4, 0.6], [0.7, 0.3]] * 2))[: len(ids)]
    tasks_file = export_labelstudio(items, SST2, tmp_path / "tasks.json", predictions=lp,
                                    model_version="smollm2-icl")
    project = _ls_project(client, SST2)
    r = client.post(f"/api/projects/{project}/import",
                    json=json.loads(tasks_file.read_text(encoding="utf-8")))
    assert r.status_code == 201, r.text
    assert (r.json()["task_count"], r.json()["prediction_count"]) == (len(ids), len(ids))

    tasks = client.get("/api/tasks", params={"project": project, "page_size": 100}).json()
    by_item = {t["data"]["item_id"]: t for t in tasks["tasks"]}
    assert set(by_item) == set(ids)  # data (and so the item id) comes back unchanged
    for item in items:
        assert by_item[item.id]["data"] == {"text": item.fields["text"], "item_id": item.id,
                                            "content_check": content_check(item.fields)}
    (pred,) = client.get("/api/predictions", params={"task": by_item[ids[0]]["id"]}).json()
    assert pred["model_version"] == "smollm2-icl" and pred["score"] == pytest.approx(0.8)
    assert pred["result"][0]["value"] == {"choices": ["positive"]}

    # Accept some pre-annotations, overrule others, two opinions on one, skip one.
    plan = {ids[0]: ["positive"], ids[1]: ["positive"], ids[2]: ["negative", "positive"],
            ids[3]: [None], ids[4]: ["NEGATIVE"]}
    for item_id, choices in plan.items():
        for choice in choices:
            _ls_annotate(client, by_item[item_id]["id"], choice)
    expected = sorted((i, SST2.classes.index(c.lower())) for i, cs in plan.items()
                      for c in cs if c is not None)

    records = import_labelstudio(_ls_export(client, project, "JSON", tmp_path / "e.json"), SST2)
    assert sorted((r.item_id, r.label) for r in records) == expected
    assert all(r.annotator == "user 1" and r.time and r.time.endswith("+00:00")
               for r in records)
    assert import_labels(tmp_path / "e.json", SST2) == records
    for kind, name, fmt in (("JSON_MIN", "min.json", None), ("CSV", "e.csv", None),
                            ("TSV", "e.tsv", None)):
        sheet = import_labels(_ls_export(client, project, kind, tmp_path / name), SST2,
                              format=fmt)
        assert sorted((r.item_id, r.label) for r in sheet) == expected, kind

    # The server accepts a class the configuration does not have; the import must not.
    _ls_annotate(client, by_item[ids[5]]["id"], "neutral")
    for kind, name in (("JSON", "bad.json"), ("JSON_MIN", "bad_min.json"), ("CSV", "bad.csv")):
        path = _ls_export(client, project, kind, tmp_path / name)
        with pytest.raises(LabelFileError, match="unknown label 'neutral'") as err:
            import_labels(path, SST2)
        if kind == "JSON":
            assert repr(ids[5]) in str(err.value)


@pytest.mark.slow
def test_real_label_studio_multiple_choice(label_studio: httpx.Client, tmp_path: Path) -> None:
    client = label_studio
    items = [Item(f"mmlu/{k}", {"question": f"{k} + 1 = ?", "A": str(k), "B": str(k + 1),
                                "C": str(k + 2), "D": "none"}) for k in range(3)]
    names = {"from_name": "answer", "to_name": "question"}
    project = _ls_project(client, MMLU, **names)
    tasks_file = export_labelstudio(items, MMLU, tmp_path / "mmlu.json", **names)
    r = client.post(f"/api/projects/{project}/import",
                    json=json.loads(tasks_file.read_text(encoding="utf-8")))
    assert r.status_code == 201, r.text
    tasks = client.get("/api/tasks", params={"project": project, "page_size": 100}).json()
    for t in tasks["tasks"]:
        _ls_annotate(client, t["id"], "B", **names)
    path = _ls_export(client, project, "JSON", tmp_path / "mmlu_export.json")
    records = import_labelstudio(path, MMLU, from_name="answer")
    assert sorted((r.item_id, r.label) for r in records) == [(i.id, 1) for i in items]


def _ls_user(client: httpx.Client, email: str) -> int:
    """A second Label Studio user (the admin's token may annotate on its behalf)."""
    users = client.get("/api/users").json()
    for u in users:
        if u["email"] == email:
            return int(u["id"])
    r = client.post("/api/users/", json={"email": email, "username": email.split("@")[0],
                                         "password": "second-annotator-pass"})
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


@pytest.mark.slow
def test_real_label_studio_two_annotators_in_a_session(label_studio: httpx.Client,
                                                       tmp_path: Path) -> None:
    from session_support import make_pool_files

    from activetest.session.workflow import Session

    client = label_studio
    pf = make_pool_files(tmp_path / "data")
    with Session.create(tmp_path / "s.db", pool=pf.pool, task="demo",
                        surrogate=f"table:{pf.surrogate}", target=f"table:{pf.target}",
                        pool_options={"id_column": "id"}, seed=2, progress=False) as s:
        drawn = [a.item_id for a in s.select(3)]
        s.export(tmp_path / "tasks.json")
        project = _ls_project(client, s.task)
        r = client.post(f"/api/projects/{project}/import",
                        json=json.loads((tmp_path / "tasks.json").read_text(encoding="utf-8")))
        assert r.status_code == 201, r.text
        tasks = client.get("/api/tasks", params={"project": project, "page_size": 100}).json()
        by_item = {t["data"]["item_id"]: t["id"] for t in tasks["tasks"]}
        second = _ls_user(client, "second@example.org")

        def annotate(item_id: str, choice: str, user: int | None = None) -> None:
            body: dict = {"result": [{"from_name": "label", "to_name": "text",
                                      "type": "choices", "value": {"choices": [choice]}}]}
            if user is not None:
                body["completed_by"] = user
            r = client.post(f"/api/tasks/{by_item[item_id]}/annotations", json=body)
            assert r.status_code == 201, r.text

        annotate(drawn[0], "positive")
        annotate(drawn[0], "negative", second)  # they disagree
        annotate(drawn[1], "positive")
        annotate(drawn[1], "positive", second)  # they agree
        annotate(drawn[2], "negative", second)
        export = _ls_export(client, project, "JSON", tmp_path / "export.json")
        result = s.import_file(export)
        assert (result.added, result.unchanged) == (2, 0)
        (conflict,) = result.left_out
        assert conflict.item_id == drawn[0] and conflict.step == 1
        assert [(name, who) for name, who, _ in conflict.votes] == [
            ("positive", "user 1"), ("negative", f"user {second}")]
        assert s.labels() == {drawn[1]: 1, drawn[2]: 0}  # the rest is in
        # the second annotator answered last: --resolve latest settles it their way
        result = s.import_file(export, resolve="latest")
        assert result.added == 1 and result.conflicts[0].settled == "negative"
        assert s.labels()[drawn[0]] == 0


@pytest.mark.slow
def test_real_label_studio_exports_name_one_annotator_alike_and_json_keeps_ground_truth(
        label_studio: httpx.Client, tmp_path: Path) -> None:
    """The same project exported as JSON, JSON-MIN, CSV and TSV by the real Label Studio:
    each annotator has ONE name in all four (JSON's ``completed_by`` id and the others'
    ``annotator`` cell are the same user), so agreement and conflicts see the same people
    whichever export is imported. Only the JSON export carries ``ground_truth``: Label
    Studio's converter drops it from the others (the docs say so)."""
    client = label_studio
    items = _items(["gt-a", "gt-b"])
    project = _ls_project(client, SST2)
    tasks_file = export_labelstudio(items, SST2, tmp_path / "tasks.json")
    r = client.post(f"/api/projects/{project}/import",
                    json=json.loads(tasks_file.read_text(encoding="utf-8")))
    assert r.status_code == 201, r.text
    tasks = client.get("/api/tasks", params={"project": project, "page_size": 100}).json()
    by_item = {t["data"]["item_id"]: t["id"] for t in tasks["tasks"]}
    second = _ls_user(client, "second@example.org")
    me = next(u["id"] for u in client.get("/api/users").json()
              if u["email"] == "labeller@example.org")

    def annotate(item_id: str, choice: str, user: int, truth: bool = False) -> None:
        body = {"result": [{"from_name": "label", "to_name": "text", "type": "choices",
                            "value": {"choices": [choice]}}],
                "completed_by": user, "ground_truth": truth}
        r = client.post(f"/api/tasks/{by_item[item_id]}/annotations", json=body)
        assert r.status_code == 201, r.text

    annotate("gt-a", "positive", me)
    annotate("gt-a", "negative", second, truth=True)
    annotate("gt-b", "negative", me)
    names = {}
    for kind, name in (("JSON", "e.json"), ("JSON_MIN", "min.json"), ("CSV", "e.csv"),
                       ("TSV", "e.tsv")):
        records = import_labels(_ls_export(client, project, kind, tmp_path / name), SST2)
        names[kind] = sorted((r.item_id, r.label, r.annotator) for r in records)
        truths = {(r.item_id, r.annotator) for r in records if r.ground_truth}
        assert truths == ({("gt-a", f"user {second}")} if kind == "JSON" else set()), kind
    assert names["JSON"] == [("gt-a", 0, f"user {second}"), ("gt-a", 1, f"user {me}"),
                             ("gt-b", 0, f"user {me}")]
    assert names["JSON_MIN"] == names["CSV"] == names["TSV"] == names["JSON"]
    rows = json.loads((tmp_path / "min.json").read_text(encoding="utf-8"))
    assert not any("ground_truth" in row for row in rows)  # Label Studio drops it there


def _cli(*args: object, code: int = 0) -> str:
    """``activetest ARGS`` in-process; its output with whitespace runs made one blank."""
    from typer.testing import CliRunner

    from activetest.cli import app

    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == code, res.output
    return " ".join(res.output.split())


def _table_session(tmp_path: Path) -> Path:
    """A uniform-draw session of 20 pool items with prediction tables, no draw yet."""
    from session_support import make_pool_files

    pf = make_pool_files(tmp_path / "data", n=20)
    db = tmp_path / "s.db"
    _cli("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
         "--target", f"table:{pf.target}", "--id-column", "id", "--acquisition", "uniform",
         "--no-progress")
    return db


def test_sheet_ids_are_read_as_pool_ids_are_and_an_unanswered_sheet_is_said(
        tmp_path: Path) -> None:
    """A spreadsheet's trailing blank (``it1 ``) is not the pool's ``it1`` (ids are
    matched exactly: a pool built in Python may hold ``' it1 '``), but the refusal names
    the id it nearly is (QA: "item 'it1 ' is not in the pool", nothing more); a blank id
    is refused. An imported sheet with no label filled in says so (QA: "imported 0 new
    label(s)" and nothing else)."""
    from activetest.session.workflow import Session

    db = _table_session(tmp_path)
    _cli("select", db, "--n", "3", "--out", tmp_path / "todo.csv")
    out = _cli("import", db, tmp_path / "todo.csv")
    assert "imported 0 new label(s)" in out and "no row has its label filled in" in out
    with Session.open(db) as s:
        ids = [a.item_id for a in s.acquisitions()]
        word = s.task.classes[0]
    (tmp_path / "done.csv").write_text(
        "item_id,label\n" + "".join(f"{i}  ,{word}\n" for i in ids), encoding="utf-8")
    out = _cli("import", db, tmp_path / "done.csv", code=2)
    assert "3 label problem(s)" in out and " ' is not in the pool; '" in out
    assert "is (remove the blanks around the id in the file" in out
    (tmp_path / "done.csv").write_text(
        "item_id,label\n" + "".join(f"{i},{word}\n" for i in ids), encoding="utf-8")
    out = _cli("import", db, tmp_path / "done.csv")
    assert "imported 3 new label(s)" in out and "filled in" not in out
    (tmp_path / "blank.csv").write_text(f"item_id,label\n   ,{word}\n", encoding="utf-8")
    out = _cli("import", db, tmp_path / "blank.csv", code=2)
    assert "is not in the pool" in out and "remove the blanks" not in out


def test_a_sheet_id_that_is_a_drawn_item_but_for_case_names_that_item(
        tmp_path: Path) -> None:
    """QA: a label file's id written in another case than the pool's (``R3`` for ``r3``)
    was refused naming the file's side only ("item 'R3' is not in the pool"); the refusal
    names the drawn item it nearly is (never joined by it: nothing is written)."""
    from activetest.session.workflow import Session

    db = _table_session(tmp_path)
    _cli("select", db, "--n", "3", "--out", tmp_path / "todo.csv")
    with Session.open(db) as s:
        ids = [a.item_id for a in s.acquisitions()]
        word = s.task.classes[0]
    (tmp_path / "done.csv").write_text(
        "item_id,label\n" + "".join(f"{i.upper()},{word}\n" for i in ids), encoding="utf-8")
    out = _cli("import", db, tmp_path / "done.csv", code=2)
    assert (f"item {ids[0].upper()!r} is not in the pool; the drawn item {ids[0]!r} is it but "
            f"for case, blanks, leading zeros, a number's '.0' or control and invisible "
            f"characters (ids are matched exactly, never guessed: write the pool's id)") in out
    with Session.open(db) as s:
        assert not s.labels()


def test_an_empty_file_and_a_gzip_file_cut_short_are_said_to_be_so(tmp_path: Path) -> None:
    """An empty file (a run that wrote nothing yet) was read as an unanswered sheet, a
    truncated ``.jsonl.gz`` got "cannot tell the format from the suffix '.gz'" (QA)."""
    import gzip

    db = _table_session(tmp_path)
    empty = tmp_path / "samples_x_2026-01-01T00-00-00.jsonl"
    empty.write_bytes(b"")
    assert "the file is empty" in _cli("import", db, empty, code=2)
    whole = gzip.compress(b"".join(b'{"item_id": "r%d", "label": "x"}\n' % i
                                   for i in range(200)))
    cut = tmp_path / "samples_x_2026-01-01T00-00-00.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    assert "not a valid gzip file" in _cli("import", db, cut, code=2)
