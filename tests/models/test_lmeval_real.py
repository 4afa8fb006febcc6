"""lm-eval sample files written by lm-eval itself (tests/lmeval_harness.py): read right.

Every file here comes from a real ``lm_eval.simple_evaluate(..., log_samples=True)``
run whose files were written by lm-eval's ``EvaluationTracker`` (the old JSON array:
lm-eval's own records, serialised as 0.4.0-0.4.2 did). The harness's model gives
the same loglikelihood to the same (context, continuation) in every task, so the
zero-shot tasks must all give the same class log-probs once read correctly.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.lmeval_harness import HarnessFiles

from activetest.data.task import Item, Task
from activetest.models.lmeval import (
    class_logprobs,
    load_lmeval_samples,
    looks_like_lmeval,
    read_lmeval_samples,
)
from activetest.models.registry import get_scorer
from activetest.models.table import TableScorer

pytestmark = pytest.mark.slow  # the first test runs lm-eval (about 15 s)

SST2 = Task(name="sst2", instruction="Classify.\n", classes=("negative", "positive"))
MMLU = Task(name="mmlu", instruction="Answer.\n", classes=("A", "B", "C", "D"),
            item_template="{question}\n{answer_key}:",
            example_template="{question}\n{answer_key}: {label}\n\n")


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _items(files: HarnessFiles, order: list[int] | None = None) -> list[Item]:
    order = list(range(len(files.docs))) if order is None else order
    return [Item(id=str(i), fields={"text": files.docs[i]["sentence"]}) for i in order]


def _class_lp(path: Path | str, **kw: object) -> np.ndarray:
    return class_logprobs(load_lmeval_samples(path, **kw), SST2.classes).logprobs  # type: ignore[arg-type]


def test_reads_lmeval_own_file(lmeval_files: HarnessFiles) -> None:
    path = lmeval_files.samples("at_sst2")
    ids, lp, labels = read_lmeval_samples(path)
    recs = _records(path)
    assert ids == [str(i) for i in range(40)]
    for row, rec in zip(lp, recs, strict=True):
        lls = np.array([float(e[0]) for e in rec["filtered_resps"]])
        np.testing.assert_allclose(row, lls - np.logaddexp.reduce(lls), atol=1e-12)
    assert labels.tolist() == [d["label"] for d in lmeval_files.docs]
    # lm-eval's own accuracy agrees with the argmax of what we read
    assert np.mean(lp.argmax(1) == labels) == pytest.approx(np.mean([r["acc"] for r in recs]))


def test_reordered_choices_land_on_the_right_classes(lmeval_files: HarnessFiles) -> None:
    rev = load_lmeval_samples(lmeval_files.samples("at_sst2_rev"))
    assert rev.choices == ("positive", "negative")
    plain = _class_lp(lmeval_files.samples("at_sst2_unl"))  # same prompts, choices in order
    aligned = class_logprobs(rev, SST2.classes)
    assert aligned.reordered == 40
    np.testing.assert_allclose(aligned.logprobs, plain, atol=1e-12)
    # the file's own order is the other way round: reading it positionally would be wrong
    assert not np.allclose(rev.logprobs, plain)
    labels = np.array([d["label"] for d in lmeval_files.docs])
    assert aligned.labels.tolist() == labels.tolist()  # the gold class, not the choice index
    # and through the scorer, with the pool's texts checked
    out = TableScorer(lmeval_files.samples("at_sst2_rev")).score(SST2, _items(lmeval_files))
    np.testing.assert_allclose(out, plain, atol=1e-12)


def test_choices_that_are_not_label_words_are_refused(lmeval_files: HarnessFiles) -> None:
    other = Task(name="t", instruction="x\n", classes=("bad", "good"))
    path = lmeval_files.samples("at_sst2")
    with pytest.raises(ValueError, match=r"choices are \['negative', 'positive'\] \(in the "
                                         r"file's order\) and the task's classes are \['bad', "
                                         r"'good'\].*\?choices=positional"):
        TableScorer(path).score(other, _items(lmeval_files))
    out = TableScorer(path, choices="positional").score(other, _items(lmeval_files))
    np.testing.assert_allclose(out, read_lmeval_samples(path)[1], atol=1e-12)
    # the spec option says the same from the CLI
    scorer = get_scorer(f"table:{path}?choices=positional")
    np.testing.assert_allclose(scorer.score(other, _items(lmeval_files)), out)


def test_unlabelled_targets_are_accepted(lmeval_files: HarnessFiles) -> None:
    path = lmeval_files.samples("at_sst2_unl")
    assert {r["target"] for r in _records(path)} == {"-1"}
    _, lp, labels = read_lmeval_samples(path)
    assert (labels == -1).all() and lp.shape == (40, 2)
    scorer = TableScorer(path)
    assert scorer.labels() == {}
    assert scorer.score(SST2, _items(lmeval_files)).shape == (40, 2)


def test_several_filters_from_the_cli_spec(lmeval_files: HarnessFiles) -> None:
    path = lmeval_files.samples("at_sst2_filt")
    assert {r["filter"] for r in _records(path)} == {"first", "again"}
    with pytest.raises(ValueError, match=r"several lm-eval filters \['again', 'first'\]; "
                                         r"choose one by adding \?filter=NAME"):
        TableScorer(path).score(SST2, _items(lmeval_files))
    plain = _class_lp(lmeval_files.samples("at_sst2_unl"))
    for name in ("first", "again"):
        scorer = get_scorer(f"table:{path}?filter={name}")
        np.testing.assert_allclose(scorer.score(SST2, _items(lmeval_files)), plain, atol=1e-12)
    with pytest.raises(ValueError, match="no samples for filter 'x'"):
        get_scorer(f"table:{path}?filter=x").score(SST2, _items(lmeval_files))
    with pytest.raises(ValueError, match="unknown option 'filtr=x'"):
        get_scorer(f"table:{path}?filtr=x")


def test_gzipped_and_json_named_files(lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    path = lmeval_files.samples("at_sst2")
    gz = tmp_path / (path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    renamed = tmp_path / "samples_at_sst2.json"
    shutil.copy(path, renamed)
    want = read_lmeval_samples(path)[1]
    for p in (gz, renamed):
        assert looks_like_lmeval(p)
        scorer = get_scorer(f"table:{p}")
        assert scorer.format == "lmeval"
        np.testing.assert_allclose(scorer.score(SST2, _items(lmeval_files)),
                                   _class_lp(path), atol=1e-12)
    np.testing.assert_allclose(read_lmeval_samples(gz)[1], want)


def test_old_single_json_array_files(lmeval_files: HarnessFiles) -> None:
    old = lmeval_files.old
    data = json.loads(old.read_text(encoding="utf-8"))
    assert isinstance(data, list) and "filter" not in data[0]
    assert isinstance(data[0]["arguments"][0], list)  # [context, continuation] pairs
    assert looks_like_lmeval(old)
    ids, lp, labels = read_lmeval_samples(old)
    ids0, lp0, labels0 = read_lmeval_samples(lmeval_files.samples("at_sst2"))
    assert ids == ids0 and labels.tolist() == labels0.tolist()
    np.testing.assert_allclose(lp, lp0, atol=1e-12)
    out = TableScorer(old).score(SST2, _items(lmeval_files))
    np.testing.assert_allclose(out, _class_lp(lmeval_files.samples("at_sst2")), atol=1e-12)


def test_mutual_info_files_read_their_conditional_half(lmeval_files: HarnessFiles) -> None:
    path = lmeval_files.samples("at_sst2_mi")
    assert len(_records(path)[0]["filtered_resps"]) == 4  # 2C entries
    s = load_lmeval_samples(path)
    assert s.mutual_info and s.logprobs.shape == (40, 2)
    np.testing.assert_allclose(class_logprobs(s, SST2.classes).logprobs,
                               _class_lp(lmeval_files.samples("at_sst2_unl")), atol=1e-12)


def test_mutual_info_without_arguments_is_refused(lmeval_files: HarnessFiles,
                                                  tmp_path: Path) -> None:
    recs = _records(lmeval_files.samples("at_sst2_mi"))
    for r in recs:
        del r["arguments"]
    bad = tmp_path / "samples_mi_2026-01-01T00-00-00.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1: an acc_mutual_info record with 4 "
                                         r"loglikelihoods whose 'arguments' do not show"):
        read_lmeval_samples(bad)


def test_generate_until_files_are_refused(lmeval_files: HarnessFiles) -> None:
    with pytest.raises(ValueError, match=r"only multiple-choice.*not generate_until"):
        read_lmeval_samples(lmeval_files.samples("at_gen"))


def test_per_subject_files_are_one_target(lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    files = sorted(lmeval_files.run.glob("samples_at_mmlu_*.jsonl"))
    assert len(files) == 3
    assert all(_records(f)[0]["doc_id"] == 0 for f in files)  # doc_id restarts per subject
    folder = tmp_path / "mmlu"
    folder.mkdir()
    for f in files:
        shutil.copy(f, folder / f.name)
    by_glob = load_lmeval_samples(str(lmeval_files.run / "samples_at_mmlu_*.jsonl"))
    by_dir = load_lmeval_samples(folder)
    assert by_glob.item_ids == by_dir.item_ids
    assert by_glob.item_ids[0] == "at_mmlu_algebra/0"
    assert len(set(by_glob.item_ids)) == sum(len(_records(f)) for f in files)
    recs = {f"at_mmlu_{f.name.split('_')[3]}/{r['doc_id']}": r for f in files
            for r in _records(f)}
    items = [Item(id=k, fields={"question": recs[k]["doc"]["question"]})
             for k in reversed(by_glob.item_ids)]
    out = get_scorer(f"table:{folder}").score(MMLU, items)
    for item, row in zip(items, out, strict=True):
        lls = np.array([float(e[0]) for e in recs[item.id]["filtered_resps"]])
        np.testing.assert_allclose(row, lls - np.logaddexp.reduce(lls), atol=1e-12)
    with pytest.raises(ValueError, match=r"no row for 1 of 1 item id\(s\): '0'; the files' "
                                         r"keys look like 'at_mmlu_algebra/0'"):
        TableScorer(folder).score(MMLU, [Item(id="0", fields={"question": "q"})])


def test_a_folder_with_two_runs_of_one_task_is_refused(lmeval_files: HarnessFiles,
                                                       tmp_path: Path) -> None:
    path = lmeval_files.samples("at_mmlu_algebra")
    shutil.copy(path, tmp_path / path.name)
    shutil.copy(path, tmp_path / "samples_at_mmlu_algebra_2099-01-01T00-00-00.000000.jsonl")
    with pytest.raises(ValueError, match="holds task 'at_mmlu_algebra' like"):
        load_lmeval_samples(tmp_path)


def test_detection_past_a_bom_and_a_bad_first_line(lmeval_files: HarnessFiles,
                                                   tmp_path: Path) -> None:
    text = lmeval_files.samples("at_sst2").read_text(encoding="utf-8")
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert looks_like_lmeval(bom) and TableScorer(bom).format == "lmeval"
    np.testing.assert_allclose(read_lmeval_samples(bom)[1],
                               read_lmeval_samples(lmeval_files.samples("at_sst2"))[1])
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text.split("\n", 1)[0][:50] + "\n" + text.split("\n", 1)[1], "utf-8")
    assert looks_like_lmeval(cut)  # not mistaken for a plain table ("missing column 'id'")
    with pytest.raises(ValueError, match=r"cut.jsonl: line 1: not valid JSON"):
        TableScorer(cut).score(SST2, _items(lmeval_files))


def test_provenance_says_what_the_file_says(lmeval_files: HarnessFiles,
                                            tmp_path: Path) -> None:
    few = TableScorer(lmeval_files.samples("at_sst2"))
    few.score(SST2, _items(lmeval_files))
    prov = few.prompt_provenance()
    assert prov["n_examples"] == 3 and prov["n_shot"] == {"at_sst2": 3}
    assert prov["join"] == "id and document text" and prov["choices"] == ["negative",
                                                                          "positive"]
    zero = TableScorer(lmeval_files.samples("at_sst2_rev"))
    zero.score(SST2, _items(lmeval_files))
    assert zero.prompt_provenance()["n_examples"] == 0
    assert zero.prompt_provenance()["reordered_documents"] == 40
    alone = tmp_path / lmeval_files.samples("at_sst2").name  # no results file beside it
    shutil.copy(lmeval_files.samples("at_sst2"), alone)
    assert TableScorer(alone).prompt_provenance()["n_examples"] == "unknown"
    assert TableScorer(lmeval_files.old).prompt_provenance()["n_examples"] == "unknown"


def test_a_pool_in_another_order_is_refused(lmeval_files: HarnessFiles) -> None:
    path = lmeval_files.samples("at_sst2")
    rng = np.random.default_rng(0)
    order = rng.permutation(40).tolist()
    # the pool's ids are its row numbers, its texts those of another order
    items = [Item(id=str(r), fields={"text": lmeval_files.docs[i]["sentence"]})
             for r, i in enumerate(order)]
    first = next(r for r, i in enumerate(order) if lmeval_files.docs[i]["sentence"]
                 != lmeval_files.docs[r]["sentence"])
    n_bad = sum(lmeval_files.docs[i]["sentence"] != lmeval_files.docs[r]["sentence"]
                for r, i in enumerate(order))
    with pytest.raises(ValueError, match=rf"line {first + 1}: pool item '{first}' is not "
                                         rf"this record's document.*\({n_bad} of 40 items "
                                         rf"differ\).*--pool FILE"):
        TableScorer(path).score(SST2, items)
    # the right order (whitespace and case aside) joins
    same = [Item(id=str(i), fields={"text": "  " + d["sentence"].upper()})
            for i, d in enumerate(lmeval_files.docs)]
    TableScorer(path).score(SST2, same)
    # match=id trusts the ids (only for files that lack documents)
    TableScorer(path, match="id").score(SST2, items)
