"""The shared datasets with the paper's preprocessing (skipped without ../shared/datasets)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from activetest.data import load_shared
from activetest.data.datasets import PAPER_SETUPS, find_shared_root

ROOT = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"
pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason="../shared/datasets is absent")


def test_sst2_rows_labels_and_quirks() -> None:
    d = load_shared("sst2", ROOT)
    assert len(d.items) == 67_349
    assert Counter(it.label for it in d.items) == {0: 29_780, 1: 37_569}
    first = d.items[0]
    assert first.id == "0"
    assert first.fields["text"] == "hide new secretions from the parental units "
    assert d.task.prompt(first).endswith("Sentence: 'hide new secretions from the parental "
                                          "units ' \nLabel:")
    assert d.example_source is None


def test_subj_examples_come_from_test() -> None:
    d = load_shared("subj", ROOT)
    assert len(d.items) == 8_000 and Counter(it.label for it in d.items) == {0: 3_967, 1: 4_033}
    assert d.example_source is not None and len(d.example_source) == 2_000
    assert d.example_source[5].id == "test:5"
    s = d.split(seed=0)
    assert len(s.examples) == 50 and all(e.id.startswith("test:") for e in s.examples)
    assert len(s.pool) == 6_000 and len(s.test) == 2_000


def test_fpb_allagree() -> None:
    d = load_shared("fpb", ROOT)
    assert len(d.items) == 2_264
    assert Counter(it.label for it in d.items) == {0: 303, 1: 1_391, 2: 570}
    assert not any(it.fields["text"].endswith("@") for it in d.items)
    s = d.split(seed=0)
    assert len(s.pool) == 2_200 and s.test == ()
    assert Counter(e.label for e in s.examples) == {0: 7, 1: 31, 2: 12}
    assert len(load_shared("fpb", ROOT, fpb_variant="50Agree").items) == 4_846


def test_hs_keeps_labels_0_and_1_with_original_row_ids() -> None:
    d = load_shared("hatespeech", ROOT)
    assert d.name == "hs" and len(d.items) == 10_703
    counts = Counter(it.label for it in d.items)
    assert counts == {0: 9_507, 1: 1_196}
    assert round(counts[1] / len(d.items), 3) == 0.112
    ids = [int(i) for i in d.items.ids]
    assert ids == sorted(ids) and ids[-1] <= 10_943 and len(set(ids)) == 10_703
    s = d.split(seed=1)
    assert (len(s.examples), len(s.pool), len(s.test)) == (50, 6_000, 4_000)


def test_mmlu_fields_and_dev_examples() -> None:
    d = load_shared("mmlu", ROOT)
    assert len(d.items) == 14_042 and d.example_source is not None
    assert len(d.example_source) == 285 and d.example_source[0].id == "dev:0"
    q = d.items[0]
    assert q.fields["question"].startswith("Find the degree for the given field extension")
    assert (q.fields["A"], q.fields["B"], q.fields["C"], q.fields["D"], q.label) == (
        "0", "4", "2", "6", 1)
    assert q.fields["subject"] == "abstract_algebra"
    s = d.split(seed=0)
    assert (len(s.examples), len(s.pool), len(s.test)) == (5, 7_000, 7_000)
    assert d.task.prompt(q, s.examples).count("\nAnswer: ") == 5


def test_errors_and_root_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="unknown shared dataset 'imdb'"):
        load_shared("imdb", ROOT)
    with pytest.raises(FileNotFoundError, match=r"dataset file missing: .*sst2/train\.tsv"):
        load_shared("sst2", tmp_path)
    monkeypatch.setenv("ACTIVETEST_DATASETS", str(ROOT))
    assert find_shared_root() == ROOT
    monkeypatch.setenv("ACTIVETEST_DATASETS", str(tmp_path / "nowhere"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no datasets folder"):
        find_shared_root()
    assert set(PAPER_SETUPS) == {"sst2", "subj", "fpb", "hs", "mmlu"}
