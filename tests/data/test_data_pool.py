"""load_pool on real files written in tmp_path: every format, ids, labels, encodings, errors."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from activetest.data import Item, Pool, PoolFormatError, Task, get_task, load_hub_pool, load_pool
from activetest.data.pool import MissingDependencyError, detect_format, read_records

SST2 = get_task("sst2")
FPB = get_task("fpb")
MMLU = get_task("mmlu")


def write(tmp_path: Path, name: str, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_csv_with_quotes_newlines_and_label_words(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", 'text,label\n"a, quoted ""word""",positive\n'
                                    '"two\nlines",negative\n\nplain ,1\n')
    pool = load_pool(path, task=SST2)
    assert isinstance(pool, Pool) and pool.format == "csv" and pool.source == str(path)
    assert [it.fields["text"] for it in pool] == ['a, quoted "word"', "two\nlines", "plain "]
    assert [it.label for it in pool] == [1, 0, 1]
    assert pool.ids == ("0", "1", "2")  # row numbers, header and blank line not counted
    assert len(pool.sha256) == 64
    assert pool.by_id("1").fields["text"] == "two\nlines"


def test_tsv_keeps_quotes_and_trailing_spaces(tmp_path: Path) -> None:
    path = write(tmp_path, "t.tsv", "sentence\tlabel\n\"it 's\" fine \t1\r\nbad \t0\n")
    pool = load_pool(path, task=SST2)
    assert [(it.fields["text"], it.label) for it in pool] == [('"it \'s" fine ', 1), ("bad ", 0)]


def test_jsonl_ids_labels_and_unlabelled_rows(tmp_path: Path) -> None:
    rows = [{"uid": "a", "text": "x", "label": 1}, {"uid": "b", "text": "y", "label": None},
            {"uid": "c", "text": "z"}, {"uid": 7, "text": 3.5, "label": "0"}]
    path = write(tmp_path, "p.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    pool = load_pool(path, id_column="uid", task=SST2)
    assert pool.ids == ("a", "b", "c", "7")
    assert [it.label for it in pool] == [1, None, None, 0]
    assert pool[3].fields == {"text": "3.5"}
    assert pool.n_labelled() == 2 and pool.labels == (1, None, None, 0)
    assert pool[1:3] == (pool[1], pool[2]) and pool[-1].id == "7" and pool[0] in pool


def test_ids_are_stable_row_numbers_across_reloads(tmp_path: Path) -> None:
    path = write(tmp_path, "p.jsonl", '{"text": "a"}\n\n{"text": "b"}\n{"text": "c"}\n')
    first, second = load_pool(path), load_pool(path)
    assert first.ids == second.ids == ("0", "1", "2")
    assert list(first) == list(second)


def test_json_array(tmp_path: Path) -> None:
    path = write(tmp_path, "p.json", json.dumps([{"text": "a", "label": 0}, {"text": "b"}]))
    assert [it.label for it in load_pool(path, label_base=0)] == [0, None]
    with pytest.raises(PoolFormatError, match=r"p2\.json, record 1: expected a JSON object"):
        load_pool(write(tmp_path, "p2.json", '[{"text": "a"}, 3]'))
    with pytest.raises(PoolFormatError, match=r"p3\.json: expected a JSON array"):
        load_pool(write(tmp_path, "p3.json", '{"text": "a"}'))


def test_fpb_format_splits_on_the_last_at_and_reads_latin1(tmp_path: Path) -> None:
    text = ("Profit rose 5 % @ Nokia .@positive\nSales fell to EUR 3 mn .@negative\n"
            "Caf\u00e9 chain opens in Espoo .@neutral\n")
    path = write(tmp_path, "Sentences_AllAgree.txt", text, encoding="iso-8859-1")
    assert detect_format(path) == "fpb"
    pool = load_pool(path, task=FPB)
    assert [it.fields["text"] for it in pool] == ["Profit rose 5 % @ Nokia .",
                                                  "Sales fell to EUR 3 mn .",
                                                  "Caf\u00e9 chain opens in Espoo ."]
    assert [it.label for it in pool] == [2, 0, 1]
    assert pool.ids == ("0", "1", "2")
    other = write(tmp_path, "fpb.txt", "no label here\n")
    with pytest.raises(PoolFormatError, match=r"fpb\.txt, line 1: expected 'sentence@label'"):
        load_pool(other, format="fpb", task=FPB)
    with pytest.raises(PoolFormatError, match=r"fpb2\.txt, line 2: empty label"):
        load_pool(write(tmp_path, "fpb2.txt", "a@neutral\nb@ \n"), format="fpb", task=FPB)
    with pytest.raises(PoolFormatError, match=r"fpb3\.txt, line 1: unknown label 'up'"):
        load_pool(write(tmp_path, "fpb3.txt", "a@up\n"), format="fpb")


def test_parquet_and_list_columns(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"question": ["1+1?", "2+2?"], "choices": [["1", "2", "3", "4"]] * 2,
                      "answer": [1, 3], "subject": ["math", "math"]})
    path = tmp_path / "mmlu.parquet"
    pq.write_table(table, path)
    pool = load_pool(path, task=MMLU)  # MMLU's columns map A-D to choices[0..3], label=answer
    assert pool.format == "parquet"
    assert pool[0].fields == {"A": "1", "B": "2", "C": "3", "D": "4", "question": "1+1?"}
    assert [it.label for it in pool] == [1, 3]
    assert MMLU.prompt(pool[0]).endswith("Question: 1+1? \nA. 1\nB. 2\nC. 3\nD. 4\nAnswer:")
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(PoolFormatError, match=r"broken\.parquet: not a readable Parquet") as e:
        load_pool(tmp_path / "broken.parquet")
    assert "<Buffer>" not in str(e.value)  # pyarrow's name for the bytes, read as a file's
    from activetest.formats.history import HistoryFormatError, read_response_matrix

    (tmp_path / "broken_history.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(HistoryFormatError, match=r"broken_history\.parquet: not a readable") as e:
        read_response_matrix(tmp_path / "broken_history.parquet")
    assert "<Buffer>" not in str(e.value)


def test_gzip_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"text": "a", "label": 1}\n'))
    assert [it.label for it in load_pool(path, label_base=0)] == [1]
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufefftext,label\nhi,0\n".encode())
    assert load_pool(bom, label_base=0)[0].fields == {"text": "hi"}
    (tmp_path / "bad.csv.gz").write_bytes(b"not gzip")
    with pytest.raises(PoolFormatError, match=r"bad\.csv\.gz: not a valid gzip"):
        load_pool(tmp_path / "bad.csv.gz")


def test_encodings(tmp_path: Path) -> None:
    path = write(tmp_path, "latin.csv", "text,label\nok,0\nna\u00efve,1\n", encoding="latin-1")
    with pytest.raises(PoolFormatError, match=r"latin\.csv, line 3: byte b'\\xef' is not valid"):
        load_pool(path)
    assert load_pool(path, encoding="latin-1", label_base=0)[1].fields["text"] == "na\u00efve"
    with pytest.raises(PoolFormatError, match=r"unknown encoding 'klingon'"):
        load_pool(path, encoding="klingon")
    utf16 = write(tmp_path, "u16.tsv", "text\tlabel\nhi\t1\n", encoding="utf-16")
    assert load_pool(utf16, encoding="utf-16", label_base=0)[0].label == 1


def test_label_map_and_label_words(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "text,label\na,pos\nb,NEG\nc,Positive\n")
    pool = load_pool(path, task=SST2, label_map={"pos": "positive", "NEG": 0})
    assert [it.label for it in pool] == [1, 0, 1]  # "Positive": case-insensitive label word
    no_task = load_pool(path, label_map={"pos": 1, "NEG": 0, "Positive": 1})
    assert [it.label for it in no_task] == [1, 0, 1]
    hs = get_task("hs")
    names = write(tmp_path, "names.csv", "text,label\na,hate\nb,noHate\n")
    assert [it.label for it in load_pool(names, task=hs)] == [1, 0]  # class names work too
    with pytest.raises(ValueError, match=r"label_map\['x'\] = 'maybe' is not a label word"):
        load_pool(path, task=SST2, label_map={"x": "maybe"})


def test_unknown_label_strings_and_out_of_range(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "text,label\na,positive\nb,meh\n")
    with pytest.raises(PoolFormatError, match=r"p\.csv, line 3: unknown label 'meh'; expected "
                                              r"one of 'negative', 'positive'"):
        load_pool(path, task=SST2)
    rng = write(tmp_path, "r.jsonl", '{"text": "a", "label": 1}\n{"text": "b", "label": 2}\n')
    with pytest.raises(PoolFormatError, match=r"r\.jsonl, line 2: label 2 is not a "
                                              r"class number 0\.\.1"):
        load_pool(rng, task=SST2)
    neg = write(tmp_path, "n.jsonl", '{"text": "a", "label": -1}\n')
    with pytest.raises(PoolFormatError, match=r"n\.jsonl, line 1: label -1 is not a class "):
        load_pool(neg, label_base=0)
    frac = write(tmp_path, "f.jsonl", '{"text": "a", "label": 0.5}\n')
    with pytest.raises(PoolFormatError, match=r"f\.jsonl, line 1: label 0.5 is not a whole"):
        load_pool(frac)
    boolean = write(tmp_path, "b.jsonl", '{"text": "a", "label": true}\n')
    with pytest.raises(PoolFormatError, match=r"b\.jsonl, line 1: label True is a boolean"):
        load_pool(boolean)
    whole = write(tmp_path, "w.jsonl", '{"text": "a", "label": 1.0}\n')
    assert load_pool(whole, label_base=0)[0].label == 1


def test_drop_labels_keeps_row_numbers(tmp_path: Path) -> None:
    rows = [{"text": t, "label": y} for t, y in [("a", 0), ("b", 2), ("c", 1), ("d", 3)]]
    path = write(tmp_path, "hs.jsonl", "\n".join(map(json.dumps, rows)))
    pool = load_pool(path, drop_labels=(2, 3), task=get_task("hs"))
    assert pool.ids == ("0", "2") and [it.label for it in pool] == [0, 1]


def test_duplicate_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "d.csv", "id,text\nx,a\ny,b\nx,c\n")
    with pytest.raises(PoolFormatError, match=r"d\.csv, line 4: duplicate id 'x' \(first at "
                                              r"line 2\)"):
        load_pool(path, id_column="id")
    with pytest.raises(PoolFormatError, match="duplicate item id 'a'"):
        Pool((Item("a", {}), Item("a", {})))
    empty = write(tmp_path, "e.csv", "id,text\n ,a\n")
    with pytest.raises(PoolFormatError, match=r"e\.csv, line 2: empty id"):
        load_pool(empty, id_column="id")


def test_malformed_rows_name_file_and_line(tmp_path: Path) -> None:
    cases = {
        "short.csv": ("text,label\na,1\nb\n", r"short\.csv, line 3: expected 2 comma-separated"),
        "long.tsv": ("text\tlabel\na\t1\t9\n", r"long\.tsv, line 2: expected 2 tab-separated"),
        "json.jsonl": ('{"text": "a"}\n{"text": \n', r"json\.jsonl, line 2: invalid JSON"),
        "doc.json": ('[{"text": "a"},\n {"text" "b"}]\n',
                     r"doc\.json, file: invalid JSON: .* \(line 2, column 10\)"),
        "list.jsonl": ('{"text": "a"}\n[1, 2]\n', r"list\.jsonl, line 2: expected a JSON object"),
        "quote.csv": ('text,label\n"a,1\n', r"quote\.csv, line \d+: malformed CSV"),
        "nul.csv": ("text,label\na\x00b,1\n", r"nul\.csv, line 2: NUL character"),
        "empty.csv": ("", r"empty\.csv: empty file"),
        "header.tsv": ("text\t\nx\t1\n", r"header\.tsv, line 1: header has an empty column"),
        "dupe.csv": ("text,text\nx,y\n", r"dupe\.csv, line 1: header repeats column"),
        "nested.jsonl": ('{"text": ["a"]}\n', r"nested\.jsonl, line 1: column 'text' holds a list"),
        "null.jsonl": ('{"text": null}\n', r"null\.jsonl, line 1: column 'text' is null"),
        "deep.jsonl": ("[" * 100_000 + "\n", r"deep\.jsonl, line 1: JSON nested too deeply"),
    }
    for name, (text, pattern) in cases.items():
        with pytest.raises(PoolFormatError, match=pattern):
            load_pool(write(tmp_path, name, text), label_base=0)


def test_missing_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "body,label\nx,1\n")
    with pytest.raises(PoolFormatError, match=r"p\.csv, line 2: no column 'text' for field "
                                              r"'text' \(columns: 'body', 'label'\)"):
        load_pool(path)
    assert load_pool(path, text_column="body", label_base=0)[0].fields == {"text": "x"}
    with pytest.raises(PoolFormatError, match=r"line 2: no label column 'gold'"):
        load_pool(path, text_column="body", label_column="gold")
    with pytest.raises(PoolFormatError, match=r"line 2: no id column 'uid'"):
        load_pool(path, text_column="body", id_column="uid")
    sentence = write(tmp_path, "s.csv", "sentence\nhello\n")
    assert load_pool(sentence)[0].fields == {"text": "hello"}  # 'sentence' fallback
    with pytest.raises(PoolFormatError, match=r"line 2: no column 'choices\[0\]' for field 'A'"):
        load_pool(write(tmp_path, "m.jsonl", '\n{"question": "q", "choices": []}\n'), task=MMLU)


def test_field_columns_and_extra_fields(tmp_path: Path) -> None:
    task = Task(name="pair", instruction="Same?\n", classes=("no", "yes"),
                item_template="{left} | {right}\n{answer_key}:",
                example_template="{left} | {right}\n{answer_key}: {label}\n\n")
    path = write(tmp_path, "pairs.tsv", "l\tr\tsrc\tlabel\na\tb\tweb\tyes\n")
    pool = load_pool(path, task=task, field_columns={"left": "l", "right": "r", "source": "src"})
    assert pool[0].fields == {"left": "a", "right": "b", "source": "web"}
    assert pool[0].label == 1


def test_format_detection_and_missing_file(tmp_path: Path) -> None:
    assert detect_format("x.TSV") == "tsv" and detect_format("x.jsonl.gz") == "jsonl"
    assert detect_format("a/b.pq") == "parquet" and detect_format("d.ndjson") == "jsonl"
    with pytest.raises(PoolFormatError, match=r"x\.xlsx: cannot tell the format"):
        detect_format("x.xlsx")
    with pytest.raises(PoolFormatError, match=r"unknown format 'xml'"):
        load_pool(write(tmp_path, "a.csv", "text\nx\n"), format="xml")
    with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
        load_pool(tmp_path / "nope.csv")
    assert read_records(write(tmp_path, "r.csv", "text\nx\n")) == [("line 2", {"text": "x"})]


def test_hub_snapshot_folder_reads_shards_in_order(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    data = tmp_path / "snap" / "data"
    data.mkdir(parents=True)
    pq.write_table(pa.table({"sentence": ["a", "b"], "label": [0, 1]}),
                   data / "train-00000-of-00002.parquet")
    pq.write_table(pa.table({"sentence": ["c"], "label": [1]}),
                   data / "train-00001-of-00002.parquet")
    (data / "test.jsonl").write_text('{"sentence": "t", "label": 0}\n')
    (tmp_path / "snap" / ".cache").mkdir()
    (tmp_path / "snap" / ".cache" / "train-x.jsonl").write_text("garbage\n")
    train = load_hub_pool(tmp_path / "snap", "train", task=SST2)
    assert [it.fields["text"] for it in train] == ["a", "b", "c"]
    assert train.ids == ("0", "1", "2") and [it.label for it in train] == [0, 1, 1]
    assert train.format == "parquet" and len(train.sha256) == 64
    test = load_hub_pool(tmp_path / "snap", "test", task=SST2)
    assert [it.fields["text"] for it in test] == ["t"] and test.format == "jsonl"
    with pytest.raises(PoolFormatError, match="no data files for split 'validation'"):
        load_hub_pool(tmp_path / "snap", "validation")
    (data / "test-bad.jsonl").write_text('{"sentence": "u", "label": 5}\n')
    with pytest.raises(PoolFormatError, match=r"test-bad\.jsonl, line 1: label 5 is "
                                              r"not a class number"):
        load_hub_pool(tmp_path / "snap", "test", task=SST2)


def test_hub_by_name_without_datasets_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # datasets comes with the dev extra (lm-eval needs it): hide it, as on a plain install
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingDependencyError, match="needs the 'datasets' package"):
        load_hub_pool("stanfordnlp/sst2", "train")


def test_a_missing_column_lists_twenty_columns_and_counts_the_rest(tmp_path) -> None:
    """QA: a 251-column response matrix given as a pool listed all 251 columns in one
    message; now the first 20 and how many more."""
    from activetest.data.pool import load_pool

    path = tmp_path / "wide.csv"
    cols = [f"X{i}" for i in range(251)]
    path.write_text(",".join(cols) + "\n" + ",".join("1" for _ in cols) + "\n")
    with pytest.raises(ValueError) as err:
        load_pool(path, task="sst2", id_column="id")
    msg = str(err.value)
    assert "'X0', 'X1'" in msg and "... and 231 more (251 columns)" in msg, msg
    assert "'X250'" not in msg
