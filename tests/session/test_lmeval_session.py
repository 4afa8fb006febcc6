"""Sessions on lm-eval's own --log_samples files, through the CLI: joins that cannot lie.

The files come from a real lm-eval run (tests/lmeval_harness.py, the session-wide
``lmeval_files`` fixture in tests/conftest.py).
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from session_support import run_cli
from tests.lmeval_harness import HarnessFiles

from activetest.data.pool import load_pool
from activetest.models.lmeval import read_lmeval_samples
from activetest.session.workflow import Session

pytestmark = pytest.mark.slow  # the fixture runs lm-eval once (about 5 CPU-s)



run = run_cli


def init(db: Path, pool: object, target: str, *extra: object, surrogate: str | None = None,
         task: str = "sst2", code: int = 0) -> str:
    return run("init", db, "--pool", pool, "--task", task, "--surrogate",
               surrogate or target, "--target", target, "--seed", "1", "--no-progress",
               "--no-cache", *extra, code=code)


def _target_lp(db: Path) -> np.ndarray:
    with Session.open(db) as s:
        stored = s.store.scores("target")
        assert stored is not None
        return stored.logprobs


def test_the_samples_file_is_the_pool(lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    path = lmeval_files.samples("at_sst2")
    pool = load_pool(path, task="sst2")
    assert pool.format == "lmeval" and pool.ids == tuple(str(i) for i in range(40))
    assert [it.fields["text"] for it in pool] == [d["sentence"] for d in lmeval_files.docs]
    # labels: the gold choice, mapped to the class by its label word
    assert list(pool.labels) == [d["label"] for d in lmeval_files.docs]
    db = tmp_path / "s.db"
    out = init(db, path, f"table:{path}")
    assert "40 items" in out
    np.testing.assert_allclose(_target_lp(db), read_lmeval_samples(path)[1], atol=1e-12)


def test_a_pool_in_another_row_order_is_refused(lmeval_files: HarnessFiles,
                                                tmp_path: Path) -> None:
    order = np.random.default_rng(1).permutation(40)
    pool = tmp_path / "pool.csv"
    with pool.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sentence", "label"])
        for i in order:
            d = lmeval_files.docs[i]
            w.writerow([d["sentence"], ("negative", "positive")[d["label"]]])
    target = f"table:{lmeval_files.samples('at_sst2')}"
    first = next(r for r, i in enumerate(order) if i != r)
    out = init(tmp_path / "s.db", pool, target, code=2)
    assert f"line {first + 1}: pool item '{first}' is not this record's document" in out
    assert "--pool FILE" in out and "--id-column" in out
    assert not (tmp_path / "s.db").exists()
    # with the pool's own id column holding lm-eval's doc_id, the join is right
    with pool.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["doc", "sentence"])
        for i in order:
            w.writerow([int(i), lmeval_files.docs[i]["sentence"]])
    init(tmp_path / "t.db", pool, target, "--id-column", "doc")
    want = read_lmeval_samples(lmeval_files.samples("at_sst2"))[1][order]
    np.testing.assert_allclose(_target_lp(tmp_path / "t.db"), want, atol=1e-12)


def test_records_without_their_document_are_refused(lmeval_files: HarnessFiles,
                                                     tmp_path: Path) -> None:
    """A samples file whose records lack lm-eval's ``doc`` cannot confirm a join by
    doc_id: refused, naming the file and the way to join by id alone (mutation check:
    skipping that refusal passed every test before)."""
    import json

    src = lmeval_files.samples("at_sst2")
    bare = tmp_path / src.name
    with src.open(encoding="utf-8") as f, bare.open("w", encoding="utf-8") as out:
        for line in f:
            rec = json.loads(line)
            rec.pop("doc", None)
            out.write(json.dumps(rec) + "\n")
    pool = tmp_path / "pool.csv"
    with pool.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["sentence", "label"])
        for d in lmeval_files.docs:  # the file's own order: only the check can tell
            w.writerow([d["sentence"], ("negative", "positive")[d["label"]]])
    out = init(tmp_path / "s.db", pool, f"table:{bare}", code=2)
    assert "has no 'doc', so its text cannot be checked" in out and "?match=id" in out
    assert not (tmp_path / "s.db").exists()


def test_reordered_choices_in_a_session(lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    rev, unl = lmeval_files.samples("at_sst2_rev"), lmeval_files.samples("at_sst2_unl")
    init(tmp_path / "rev.db", rev, f"table:{rev}")
    init(tmp_path / "unl.db", unl, f"table:{unl}")
    np.testing.assert_allclose(_target_lp(tmp_path / "rev.db"), _target_lp(tmp_path / "unl.db"),
                               atol=1e-12)
    # a task whose label words are not the file's choices is refused, both orders shown
    task = tmp_path / "t.toml"
    task.write_text('name = "t"\ninstruction = "x"\nclasses = ["bad", "good"]\n'
                    '[columns]\ntext = "sentence"\n', encoding="utf-8")
    out = init(tmp_path / "x.db", rev, f"table:{rev}", task=str(task), code=2)
    assert "['positive', 'negative'] (in the file's order)" in out
    assert "['bad', 'good'] (in class order)" in out and "?choices=positional" in out


def test_unlabelled_multifilter_gz_and_old_files(lmeval_files: HarnessFiles,
                                                 tmp_path: Path) -> None:
    unl = lmeval_files.samples("at_sst2_unl")
    init(tmp_path / "u.db", unl, f"table:{unl}")
    with Session.open(tmp_path / "u.db") as s:
        assert all(it.label is None for it in s.items())  # "-1": no data labels
    filt = lmeval_files.samples("at_sst2_filt")
    out = init(tmp_path / "f.db", filt, f"table:{filt}", code=2)
    assert "several lm-eval filters ['again', 'first']" in out and "?filter=NAME" in out
    assert "filter_name" not in out.split("(filter_name= in Python)")[0]
    init(tmp_path / "f.db", filt, f"table:{filt}?filter=first")
    np.testing.assert_allclose(_target_lp(tmp_path / "f.db"), _target_lp(tmp_path / "u.db"))
    gz = tmp_path / (lmeval_files.samples("at_sst2").name + ".gz")
    gz.write_bytes(gzip.compress(lmeval_files.samples("at_sst2").read_bytes()))
    init(tmp_path / "g.db", gz, f"table:{gz}")
    init(tmp_path / "o.db", lmeval_files.old, f"table:{lmeval_files.old}")
    np.testing.assert_allclose(_target_lp(tmp_path / "g.db"), _target_lp(tmp_path / "o.db"))


def test_per_subject_files_as_pool_and_target(lmeval_files: HarnessFiles,
                                              tmp_path: Path) -> None:
    folder = tmp_path / "mmlu"
    folder.mkdir()
    for f in lmeval_files.run.glob("samples_at_mmlu_*.jsonl"):
        shutil.copy(f, folder / f.name)
    db = tmp_path / "m.db"
    out = init(db, folder, f"table:{folder}", task="mmlu")
    n = sum(len(f.read_text().splitlines()) for f in folder.iterdir())
    assert f"{n} items" in out
    with Session.open(db) as s:
        ids = [it.id for it in s.items()]
    assert ids[0] == "at_mmlu_algebra/0" and len(set(ids)) == n
    # a glob names the same target
    glob = str(lmeval_files.run / "samples_at_mmlu_*.jsonl")
    init(tmp_path / "g.db", glob, f"table:{glob}", task="mmlu")
    np.testing.assert_allclose(_target_lp(tmp_path / "g.db"), _target_lp(db))


def test_provenance_is_the_files_not_the_sessions(lmeval_files: HarnessFiles,
                                                  tmp_path: Path) -> None:
    three, zero = lmeval_files.samples("at_sst2"), lmeval_files.samples("at_sst2_rev")
    examples = tmp_path / "ex.csv"
    examples.write_text("text,label\nA fine kettle.,positive\nA dull lamp.,negative\n"
                        "Great tent.,positive\nBad mouse.,negative\n", encoding="utf-8")
    for target, want in ((three, 3), (zero, 0)):
        db = tmp_path / f"{want}.db"
        out = init(db, three, f"table:{target}", "--examples", examples, "--shots", "4")
        assert (f"target: predictions read from the file (lm-eval samples); in-context "
                f"examples: {want}") in " ".join(out.split())
        with Session.open(db) as s:
            s.select(3)
            s.label_from_data()
            prov = s.store.scores("target").provenance  # type: ignore[union-attr]
            assert prov["n_examples"] == want and prov["example_ids"] is None
            data = s.report_data(progress=False)
        assert data.info["Target in-context examples"] == want
        assert data.info["In-context examples"] == want  # the surrogate is this table too
    alone = tmp_path / "alone" / three.name
    alone.parent.mkdir()
    shutil.copy(three, alone)
    init(tmp_path / "u.db", three, f"table:{alone}")
    with Session.open(tmp_path / "u.db") as s:
        assert s.store.scores("target").provenance["n_examples"] == "unknown"  # type: ignore[union-attr]


def test_spec_paths_are_stored_by_name_with_options(lmeval_files: HarnessFiles,
                                                    tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A samples file given by a relative path: the session file names it by its name and
    keeps its SHA-256 (no local path in a file users share: session/spec_files.py), the
    options kept; later commands work from any folder."""
    filt = lmeval_files.samples("at_sst2_filt")
    shutil.copy(filt, tmp_path / filt.name)
    monkeypatch.chdir(tmp_path)
    init(tmp_path / "s.db", filt.name, f"table:{filt.name}?filter=again")
    with Session.open(tmp_path / "s.db") as s:
        spec = f"table:{filt.name}?filter=again"
        assert s.config["target"] == spec
        assert str(tmp_path) not in json.dumps(s.config)
        assert s.session_config.model_files.get(spec), s.session_config.model_files
    monkeypatch.chdir(tmp_path.parent)  # later commands work from any folder
    assert "40 items" in run("status", tmp_path / "s.db")


def test_init_help_explains_the_join() -> None:
    out = run("init", "--help")
    for needle in ("doc_id", "label word", "samples file itself", "is not this record's",
                   "?filter=NAME", "--id-column"):
        assert needle in " ".join(out.split()), needle
