"""Unit tests of the format modules (formats/): tables, lm-eval samples, answer readers."""

from __future__ import annotations

import gzip
import json

import pytest

from activetest.formats import answers, tables
from activetest.formats.answer_records import AnswerFile
from activetest.formats.lmeval import looks_like_lmeval


def test_csv_quotes_and_tsv_does_not(tmp_path):
    csv_file = tmp_path / "a.csv"
    csv_file.write_text('id,text\n1,"a, ""b"""\n', encoding="utf-8")
    assert tables.read_records(csv_file) == [("line 2", {"id": "1", "text": 'a, "b"'})]
    tsv_file = tmp_path / "a.tsv"
    tsv_file.write_text('id\ttext\n1\t"a"\n', encoding="utf-8")
    assert tables.read_records(tsv_file) == [("line 2", {"id": "1", "text": '"a"'})]


def test_jsonl_gz_and_json(tmp_path):
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"x": 1}\n\n{"x": 2}\n'))
    assert tables.read_records(gz) == [("line 1", {"x": 1}), ("line 3", {"x": 2})]
    js = tmp_path / "a.json"
    js.write_text('[{"x": 1}]', encoding="utf-8")
    assert tables.read_records(js) == [("record 0", {"x": 1})]


def test_table_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"x": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(tables.PoolFormatError, match=r"bad\.jsonl, line 2: expected a JSON object"):
        tables.read_records(bad)
    with pytest.raises(tables.PoolFormatError, match="cannot tell the format"):
        tables.detect_format(tmp_path / "x.xyz")
    assert tables.detect_format("Sentences_AllAgree.txt") == "fpb"


def test_pool_errors_are_the_table_errors():
    from activetest.data import pool

    assert pool.PoolFormatError is tables.PoolFormatError
    assert pool.read_records is tables.read_records


def test_lmeval_detected_by_content(tmp_path):
    rec = {"doc_id": 0, "doc": {"q": "x"}, "target": "a", "arguments": [["c", " a"]],
           "resps": [[["-1.0", "True"]]], "filtered_resps": [["-1.0", "True"]]}
    f = tmp_path / "samples_t_2024-01-01T00-00-00.jsonl"
    f.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    assert looks_like_lmeval(f)
    other = tmp_path / "other.jsonl"
    other.write_text('{"id": 1, "answer": "x"}\n', encoding="utf-8")
    assert not looks_like_lmeval(other)


def test_every_answer_format_has_a_reader():
    assert set(answers._READERS) | {"inspect"} == set(answers.FORMATS)


def test_answer_table_through_the_registry(tmp_path):
    f = tmp_path / "answers.csv"
    f.write_text("id,answer,score\na,Paris,1\nb,Rome,0\n", encoding="utf-8")
    af = answers.read_answers(f)
    assert isinstance(af, AnswerFile) and af.format == "csv"
    assert [(r.item_id, r.answer, r.score) for r in af.records] == [("a", "Paris", 1.0),
                                                              ("b", "Rome", 0.0)]
    from activetest.models.answer_files import read_answers

    assert read_answers is answers.read_answers


def test_header_table_and_json_lines_name_the_line():
    header, rows = tables.header_table('a,b\n"x, y",1\n\n2,3\n', "t.csv", ",")
    assert header == ["a", "b"] and rows == [("line 2", {"a": "x, y", "b": "1"}),
                                             ("line 4", {"a": "2", "b": "3"})]
    with pytest.raises(ValueError, match=r"^t\.csv: line 2: 1 fields, the header has 2$"):
        tables.header_table("a,b\n1\n", "t.csv", ",",
                            width="{cells} fields, the header has {header}")
    assert tables.json_lines('{"a": 1}\n\n{"a": 2}\n', "t.jsonl") == [
        ("line 1", {"a": 1}), ("line 3", {"a": 2})]
    with pytest.raises(ValueError, match=r"^t\.jsonl: line 1: expected a JSON object, got list"):
        tables.json_lines("[1]\n", "t.jsonl")


def test_eee_aggregate_lives_in_formats():
    from activetest.formats import eee
    from activetest.session import eee as session_eee

    assert session_eee.eee_aggregate is eee.eee_aggregate
    assert session_eee.check_eee_aggregate is eee.check_eee_aggregate


def test_a_killed_runs_last_line_cut_inside_a_character_is_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """lm-eval writes non-ASCII text as is: a run killed while writing can cut its last
    line inside a multi-byte character. That line is the unfinished record (skipped and
    named), not a file that "is not valid UTF-8" (QA); bad bytes elsewhere still are."""
    from activetest.formats.lmeval_results import read_results

    def rec(i: int) -> dict:
        return {"doc_id": i, "doc": {"sentence": f"s{i} é"}, "target": 0, "arguments": [],
                "resps": [[["-1.0", True]], [["-2.0", False]]],
                "filtered_resps": [["-1.0", True], ["-2.0", False]], "filter": "none",
                "metrics": ["acc"], "acc": 1.0, "doc_hash": "h", "prompt_hash": "p",
                "target_hash": "t"}

    p = tmp_path / "samples_at_x_2026-01-01T00-00-00.000.jsonl"
    whole = "".join(json.dumps(rec(i), ensure_ascii=False) + "\n" for i in range(3)) + \
        json.dumps({**rec(3), "x": "éééé"}, ensure_ascii=False)
    raw = whole.encode("utf-8")
    p.write_bytes(raw[: raw.rfind("é".encode()) + 1])  # inside the last é
    assert looks_like_lmeval(p)
    cut: list[str] = []
    got = read_results([p], cut=cut)
    assert [r.doc_id for r in got] == [0, 1, 2] and cut == [f"{p}: line 4"]
    bad = tmp_path / "samples_at_y_2026-01-01T00-00-00.000.jsonl"
    bad.write_bytes(raw.replace(b"s1 \xc3\xa9", b"s1 \xc3") + b"\n")
    with pytest.raises(ValueError, match="line 2: not UTF-8 text"):
        read_results([bad], cut=[])


def test_a_folder_of_samples_files_follows_linked_folders(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """QA: ``import DB runs/`` and ``--pool runs/`` passed over a linked model folder
    without a word (``Path.rglob`` does not follow it: a round's results went unimported,
    a pool's tasks missing); a link back up is read once, and a samples file that is a
    broken link is refused, named."""
    import os

    from activetest.formats.lmeval import lmeval_files

    outside = tmp_path / "outside" / "model-b"
    outside.mkdir(parents=True)
    (outside / "samples_t2_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    runs = tmp_path / "runs"
    (runs / "model-a").mkdir(parents=True)
    (runs / "model-a" / "samples_t1_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    os.symlink(outside, runs / "model-b")
    os.symlink("..", runs / "model-a" / "up")  # a loop: each folder is read once
    assert [f.relative_to(runs).as_posix() for f in lmeval_files(runs)] == [
        "model-a/samples_t1_2026-01-01T00-00-00.jsonl",
        "model-b/samples_t2_2026-01-01T00-00-00.jsonl"]
    broken = runs / "model-a" / "samples_t3_2026-01-01T00-00-00.jsonl"
    os.symlink(tmp_path / "gone.jsonl", broken)
    with pytest.raises(ValueError, match="not a readable file") as e:
        lmeval_files(runs)
    assert str(broken) in str(e.value)
