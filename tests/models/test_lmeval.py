"""lm-evaluation-harness ``--log_samples`` files -> class log-probs and labels."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data.task import Item, Task
from activetest.models.lmeval import load_lmeval_samples, looks_like_lmeval, read_lmeval_samples
from activetest.models.table import TableScorer

_HC = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # (a loaded CI machine)

SAMPLES = Path(__file__).parent / "data" / "samples_sst2_2026-11-30T12-00-00.jsonl"
SST2 = Task(name="sst2", instruction="Classify.\n", classes=("negative", "positive"),
            answer_key="Label")


def _lines() -> list[dict]:
    return [json.loads(x) for x in SAMPLES.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def test_reads_the_sample_file() -> None:
    ids, lp, labels = read_lmeval_samples(SAMPLES)
    recs = _lines()
    assert ids == [str(r["doc_id"]) for r in recs]
    assert lp.shape == (20, 2) and lp.dtype == np.float64
    np.testing.assert_allclose(np.logaddexp(lp[:, 0], lp[:, 1]), 0.0, atol=1e-12)
    # log-softmax over the choices' loglikelihoods, computed by hand for every line
    for row, rec in zip(lp, recs, strict=True):
        a, b = (float(e[0]) for e in rec["filtered_resps"])
        np.testing.assert_allclose(row, [a - np.logaddexp(a, b), b - np.logaddexp(a, b)],
                                   atol=1e-12)
    assert labels.tolist() == [int(r["target"]) for r in recs]
    # the file's own accuracy agrees with argmax of our log-probs
    acc = np.mean(lp.argmax(1) == labels)
    assert acc == pytest.approx(np.mean([r["acc"] for r in recs]))


def test_choices_and_filter_recorded() -> None:
    s = load_lmeval_samples(SAMPLES)
    assert s.choices == ("negative", "positive")
    assert s.filter == "none"
    assert looks_like_lmeval(SAMPLES)


def test_legacy_numeric_values_and_list_arguments(tmp_path: Path) -> None:
    recs = _lines()[:3]
    for r in recs:
        r["filtered_resps"] = [[float(a), b == "True"] for a, b in r["filtered_resps"]]
        r["arguments"] = [[a["arg_0"], a["arg_1"]] for a in r["arguments"].values()]
        r["target"] = int(r["target"])
        del r["filter"]
    ids, lp, labels = read_lmeval_samples(_write(tmp_path / "s.jsonl", recs))
    ids0, lp0, labels0 = read_lmeval_samples(SAMPLES)
    assert ids == ids0[:3]
    np.testing.assert_allclose(lp, lp0[:3], atol=1e-12)
    assert labels.tolist() == labels0[:3].tolist()


def test_target_given_as_choice_text(tmp_path: Path) -> None:
    recs = _lines()[:4]
    for r in recs:
        r["target"] = ["negative", "positive"][int(r["target"])]
    _, _, labels = read_lmeval_samples(_write(tmp_path / "s.jsonl", recs))
    assert labels.tolist() == [int(r["doc"]["label"]) for r in recs]


def test_negative_target_is_no_label(tmp_path: Path) -> None:
    recs = _lines()[:3]
    recs[1]["target"] = "-1"
    recs[2]["target"] = -1
    _, _, labels = read_lmeval_samples(_write(tmp_path / "s.jsonl", recs))
    assert labels.tolist() == [int(recs[0]["target"]), -1, -1]


def test_four_choices(tmp_path: Path) -> None:
    rec = {"doc_id": 7, "target": "2", "filtered_resps": [["-3.0", "False"], ["-2.0", "False"],
                                                          ["-0.5", "True"], ["-4.0", "False"]]}
    ids, lp, labels = read_lmeval_samples(_write(tmp_path / "mmlu.jsonl", [rec]))
    x = np.array([-3.0, -2.0, -0.5, -4.0])
    np.testing.assert_allclose(lp[0], x - np.log(np.exp(x).sum()), atol=1e-12)
    assert ids == ["7"] and labels.tolist() == [2]


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda r: r.pop("filtered_resps"), "missing key 'filtered_resps'"),
    (lambda r: r.update(filtered_resps=[["-1.0", "True"]]), "at least 2"),
    (lambda r: r.update(filtered_resps=["a generated answer", "b"]), "generated text"),
    (lambda r: r.update(filtered_resps=[["x", "y"], ["-1", "True"]]), "not a loglikelihood"),
    (lambda r: r.update(filtered_resps=[["NaN", "False"], ["-1", "True"]]), "not finite"),
    (lambda r: r.update(target="7"), "target '7'"),
    (lambda r: r.update(target=[0, 1]), "neither a choice index"),
    (lambda r: r.update(target="[0, 1]"), "neither a choice index"),
    (lambda r: r.update(doc_id=1.5), "doc_id must be"),
])
def test_malformed_line_is_named(tmp_path: Path, mutate, message: str) -> None:
    recs = _lines()[:5]
    mutate(recs[3])
    path = _write(tmp_path / "bad.jsonl", recs)
    with pytest.raises(ValueError, match=message) as info:
        read_lmeval_samples(path)
    assert f"{path}: line 4:" in str(info.value)


def test_not_json_line_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    text = SAMPLES.read_text(encoding="utf-8").splitlines()
    text[5] = text[5][:40]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 6: not valid JSON"):
        read_lmeval_samples(path)


def test_duplicate_doc_id_and_inconsistent_choices(tmp_path: Path) -> None:
    recs = _lines()[:4]
    recs[2]["doc_id"] = recs[0]["doc_id"]
    with pytest.raises(ValueError, match=r"line 3: duplicate doc_id '0' \(first on line 1\)"):
        read_lmeval_samples(_write(tmp_path / "dup.jsonl", recs))
    recs = _lines()[:4]
    recs[1]["filtered_resps"].append(["-9.0", "False"])
    with pytest.raises(ValueError, match=r"line 2: 3 choices, but earlier documents have 2"):
        read_lmeval_samples(_write(tmp_path / "c.jsonl", recs))


def test_several_filters_need_a_choice(tmp_path: Path) -> None:
    recs = _lines()[:3]
    other = [dict(r, filter="maj@8") for r in recs]
    other[0]["filtered_resps"] = [["-0.1", "True"], ["-5.0", "False"]]
    path = _write(tmp_path / "f.jsonl", recs + other)
    with pytest.raises(ValueError, match=r"several lm-eval filters \['maj@8', 'none'\]"):
        read_lmeval_samples(path)
    ids, lp, _ = read_lmeval_samples(path, filter_name="maj@8")
    assert ids == ["0", "1", "2"]
    assert lp[0].argmax() == 0
    with pytest.raises(ValueError, match="no samples for filter 'x'"):
        read_lmeval_samples(path, filter_name="x")


def test_empty_and_binary_files(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no samples"):
        read_lmeval_samples(tmp_path / "e.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_lmeval_samples(tmp_path / "b.jsonl")
    with pytest.raises(ValueError, match="no such file or folder"):
        read_lmeval_samples(tmp_path / "absent.jsonl")


def test_table_scorer_reads_lmeval_by_id() -> None:
    scorer = TableScorer(SAMPLES)  # detected from content
    assert scorer.format == "lmeval"
    _, lp, labels = read_lmeval_samples(SAMPLES)
    texts = {str(r["doc_id"]): r["doc"]["sentence"] for r in _lines()}
    items = [Item(id=i, fields={"text": texts[i]}) for i in ("5", "0", "19")]
    out = scorer.score(SST2, items)
    np.testing.assert_array_equal(out, lp[[5, 0, 19]])
    assert scorer.labels()["5"] == labels[5]
    with pytest.raises(ValueError, match=r"no row for 1 of 2 item id\(s\): '20'"):
        scorer.score(SST2, [Item(id="0", fields={}), Item(id="20", fields={})])
    with pytest.raises(ValueError, match=r"line 6: pool item '5' is not this record's document"):
        scorer.score(SST2, [Item(id="5", fields={"text": texts["0"]})])
    three = Task(name="fpb", instruction="x\n", classes=("negative", "neutral", "positive"))
    with pytest.raises(ValueError, match="documents have 2 choices"):
        scorer.score(three, items)


_json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30),
                          st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
_json_values = st.recursive(_json_scalars, lambda c: st.one_of(
    st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)), max_leaves=12)
_record = st.fixed_dictionaries(
    {"doc_id": st.one_of(st.integers(0, 50), st.text(max_size=4), st.floats()),
     "target": _json_values,
     "filtered_resps": st.one_of(
         _json_values,
         st.lists(st.one_of(st.tuples(st.floats(-50, 0).map(str),
                                      st.sampled_from(["True", "False"])), _json_scalars),
                  min_size=0, max_size=5))},
    optional={"filter": st.sampled_from(["none", "x"]), "arguments": _json_values})


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(_record, max_size=6))
def test_fuzz_records_parse_or_value_error(tmp_path: Path, recs: list[dict]) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    try:
        ids, lp, labels = read_lmeval_samples(path)
    except ValueError:
        return
    assert len(ids) == len(set(ids)) == lp.shape[0] == labels.shape[0]
    assert np.isfinite(lp).all()
    np.testing.assert_allclose(np.log(np.exp(lp).sum(1)), 0.0, atol=1e-9)
    assert ((labels >= -1) & (labels < lp.shape[1])).all()


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(data=st.binary(max_size=300))
def test_fuzz_bytes_parse_or_value_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    with contextlib.suppress(ValueError):
        read_lmeval_samples(path)


def test_damaged_old_json_array_is_still_detected(tmp_path: Path) -> None:
    recs = _lines()[:3]
    text = json.dumps(recs, indent=2)
    path = tmp_path / "old.jsonl"
    path.write_text(text[: len(text) // 2], encoding="utf-8")  # cut short
    assert looks_like_lmeval(path)
    with pytest.raises(ValueError, match=r"old\.jsonl: line \d+: not valid JSON.*one JSON array"):
        read_lmeval_samples(path)
    path.write_text(text, encoding="utf-8")
    assert read_lmeval_samples(path)[0] == ["0", "1", "2"]
