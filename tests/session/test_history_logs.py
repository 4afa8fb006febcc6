"""``init --history DIR``: a folder of other models' real lm-eval runs on the same task,
one model per file, joined to the pool by item id with the content check of every other
join; the target's own run is found and left out (real lm-eval files, real CLI)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from session_support import run_cli_process
from tests.history_logs import history_logs  # noqa: F401  (a fixture)
from tests.lmeval_harness import HarnessFiles

from activetest.session.workflow import Session


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=300)


def _file(run: Path, model: str) -> Path:
    (f,) = sorted((run / model).glob("samples_*.jsonl"))
    return f


def test_history_folder_of_lmeval_runs(history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    db = tmp_path / "s.db"
    out = cli("init", db, "--task", "sst2", "--pool", new, "--target", f"table:{new}",
              "--surrogate", f"table:{small}", "--metric", "error_rate", "--history",
              history_logs, "--history-exclude", "model-5", "--seed", "2", "--no-progress")
    assert "history: 4 model(s)" in out and "40 of 40 pool items have history" in out
    assert f"row 'new-model' not used ({new} is the target's own run" in out
    assert "row 'model-5' not used (named by --history-exclude)" in out
    with Session.open(db) as s:
        cfg = s.config
        assert cfg["design"] == "features" and cfg["acquisition"] == "pe_adaptive"
        assert sorted(Path(p).parent.name for p in cfg["history"]["sources"]) == [
            "model-2", "model-3", "model-4", "model-5", "small-model"]
        s.select(15)
        s.label_from_data()
        s.select(s.n_items - 15)
        s.label_from_data()
        est = s.estimate().metrics["error_rate"].active.estimate
    recs = [json.loads(line) for line in new.read_text().splitlines()]
    truth = 1 - np.mean([r["acc"] for r in recs])  # lm-eval's own accuracy of the target
    assert abs(est - truth) < 1e-9


def test_history_folder_join_is_checked_by_content(history_logs: Path,  # noqa: F811
                                                   tmp_path: Path) -> None:
    """A pool that lists the same documents in another order under ids 0..39 (lm-eval's
    doc_ids are positions) is refused, naming the log, the item and both texts."""
    new = _file(history_logs, "new-model")
    recs = [json.loads(line) for line in new.read_text().splitlines()]
    pool = tmp_path / "pool.csv"
    with pool.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "sentence"])
        for k, r in enumerate(reversed(recs)):
            w.writerow([k, r["doc"]["sentence"]])
    other = _file(history_logs, "model-2")
    out = cli("init", tmp_path / "x.db", "--task", "sst2", "--pool", pool, "--id-column",
              "id", "--text-column", "sentence", "--target", f"table:{new}?match=id",
              "--surrogate", f"table:{new}?match=id", "--metric", "error_rate",
              "--history", other.parent, "--no-progress", code=2)
    assert f"--history {other}" in out and "is not this record's document" in out
    assert "pool item '0'" in out and recs[-1]["doc"]["sentence"][:30] in out
    assert "or the pool lists the documents in another order than the log's" in out
    assert not (tmp_path / "x.db").exists()


def test_an_lmeval_log_of_another_dataset_in_the_folder_is_to_be_moved_out(
        history_logs: Path, lmeval_files: HarnessFiles, tmp_path: Path) -> None:  # noqa: F811
    """QA: a real lm-eval run of another task in the --history folder (doc_ids 0..N like
    the pool's, other documents) was refused with the
    pool's advice only: "Simplest: use the samples file itself as the pool (--pool FILE)",
    while the pool was that samples file. The refusal says the log may be a run of
    another task or dataset, to be moved out; one message, nothing written. A log whose
    file names another task than the target's samples file is passed over, said (QA,
    2026-12-07: refused, though ``lm_eval --tasks a,b`` writes both in one folder); under
    the target's task name, another dataset's log is still refused."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs / "model-2", runs / "model-2")
    (runs / "other-task").mkdir()
    other = lmeval_files.samples("at_mmlu_algebra")
    shutil.copy(other, runs / "other-task")
    args = ("--task", "sst2", "--pool", new, "--target", f"table:{new}", "--surrogate",
            f"table:{small}", "--metric", "error_rate", "--history", runs, "--no-progress")
    out = " ".join(cli("init", tmp_path / "b.db", *args).split())
    assert "history: 1 lm-eval log(s) of other tasks than the target's (at_sst2) passed " \
           f"over: {runs / 'other-task' / other.name}" in out, out
    (runs / "other-task" / other.name).rename(
        runs / "other-task" / other.name.replace("samples_at_mmlu_algebra_", "samples_at_sst2_"))
    out = cli("init", tmp_path / "a.db", *args, code=2)
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert "is not this record's document" in out and "other-task/samples_at_sst2_" in out, out
    assert "this log is a run of another task or dataset" in out and "move it out" in out
    assert "Simplest: use the samples file itself as the pool" not in out
    assert not (tmp_path / "a.db").exists()


ANSWERS = Path(__file__).resolve().parents[1] / "models" / "data" / "answers"


def _graded_pool(tmp_path: Path, skip: str = "") -> Path:
    from tests.models.answer_writers import ITEMS

    pool = tmp_path / f"pool{skip}.jsonl"
    pool.write_text("".join(json.dumps({"id": i, "context": c, "question": q, "answer": a,
                                        "references": list(r)}) + "\n"
                            for i, c, q, r, a in ITEMS if i != skip))
    return pool


def test_graded_history_folder_of_inspect_and_eee_logs(tmp_path: Path) -> None:
    """A graded session's history from a folder holding a real inspect_ai log (ids are the
    samples' own); an Every Eval Ever file of several evaluations and the same model twice
    are refused; the target's own log in the folder is found and left out."""
    (log,) = (ANSWERS / "inspect").glob("*.eval")
    (eee,) = (ANSWERS / "eee" / "data" / "toyqa" / "llama-cpp-python").glob("*/*_samples.jsonl")
    pool = _graded_pool(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / log.name)
    base = ("init", "--task", "answers", "--pool", pool, "--target", "pool", "--surrogate",
            "history", "--no-progress")
    out = cli(*base[:1], tmp_path / "g.db", *base[1:], "--history", runs)
    assert "history: 1 model(s)" in out and "5 of 6 pool items have history" in out
    with Session.open(tmp_path / "g.db") as s:
        assert s.config["design"] == "features"
        assert s.config["history"]["sources"] == [f"runs/{log.name}"]  # no local path
    shutil.copy(eee, runs / eee.name)  # several evaluations: which one is not guessed
    out = cli(*base[:1], tmp_path / "h.db", *base[1:], "--history", runs, code=2)
    assert f"{runs / eee.name}: holds records of several evaluations" in out
    assert "is not guessed at" in out
    (runs / eee.name).unlink()
    shutil.copy(log, runs / "again.eval")  # the same log twice counts once, said
    out = cli(*base[:1], tmp_path / "i.db", *base[1:], "--history", runs)
    assert f"history: {runs / 'again.eval'} is a copy of {runs / log.name}" in out
    assert "history: 1 model(s)" in out
    (runs / "again.eval").unlink()
    out = cli("init", tmp_path / "t.db", "--task", "answers", "--pool",
              _graded_pool(tmp_path, "q-bus"), "--target",
              f"answers:{runs / log.name}", "--surrogate", "history", "--history", runs,
              "--no-progress", code=2)
    assert "no history is left once the target's own run is dropped" in out


def test_history_folder_finds_the_targets_run_by_its_results(history_logs: Path,  # noqa: F811
                                                             tmp_path: Path) -> None:
    """The target's run copied into the folder under another name and written anew (other
    bytes: the records' keys in another order) is found by its results: the row identical
    to the target's own right/wrong on every item is left out, and said."""
    new = _file(history_logs, "new-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    shutil.rmtree(runs / "new-model")
    copy = runs / "renamed" / new.name
    copy.parent.mkdir()
    copy.write_text("".join(json.dumps(dict(reversed(json.loads(line).items()))) + "\n"
                            for line in new.read_text().splitlines()))
    out = cli("init", tmp_path / "s.db", "--task", "sst2", "--pool", new, "--target",
              f"table:{new}", "--surrogate", f"table:{_file(history_logs, 'small-model')}",
              "--metric", "error_rate", "--history", runs, "--no-progress")
    assert "row 'renamed' not used (identical to the target's own scores on 40 items" in out
    assert "history: 5 model(s)" in out


def test_history_folder_drops_a_rerun_of_the_targets_own_model(history_logs: Path,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """A re-run of the target's model (its log says the same model; one result differs, so
    no row is identical) was used as history (QA): dropped by the model its log states."""
    new = _file(history_logs, "new-model")

    target = _as_model(new, tmp_path / "target", "org/new-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    shutil.rmtree(runs / "new-model")
    _as_model(new, runs / "rerun", "org/new-model", flip=0)
    out = " ".join(cli("init", tmp_path / "s.db", "--task", "sst2", "--pool", target,
                       "--target", f"table:{target}", "--surrogate",
                       f"table:{_file(history_logs, 'small-model')}", "--metric",
                       "error_rate", "--history", runs, "--no-progress").split())
    assert "is a run of the target's own model (org/new-model, as its log says)" in out, out
    assert "history: 5 model(s)" in out


def test_the_targets_model_at_other_settings_is_another_system(history_logs: Path,  # noqa: F811
                                                               tmp_path: Path) -> None:
    """A run of the target's own model at another setting (lm-eval's n-shot, as its
    results file states) is another evaluated system, as the history's runs of one model
    at other settings are: kept, named apart by the setting and said (QA: a 0-shot run
    beside a 3-shot ``table:`` target was dropped as "a run of the target's own model");
    a run at the target's settings is dropped, and so is one whose settings cannot be
    compared (its results state none), each with the reason."""
    new = _file(history_logs, "new-model")
    target = _as_model(new, tmp_path / "target", "org/new-model", nshot=3)
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    shutil.rmtree(runs / "new-model")
    zero = _as_model(new, runs / "zero", "org/new-model", flip=0, nshot=0)
    same = _as_model(new, runs / "same", "org/new-model", flip=1, nshot=3)
    bare = _as_model(new, runs / "bare", "org/new-model", flip=2, nshot=-1)
    base = ("--task", "sst2", "--pool", target, "--target", f"table:{target}",
            "--surrogate", f"table:{_file(history_logs, 'small-model')}", "--metric",
            "error_rate", "--no-progress")
    out = " ".join(cli("init", tmp_path / "s.db", *base, "--history", runs).split())
    assert (f"history: 1 run(s) of the target's own model at other settings than the "
            f"target's kept as other systems: 'org/new-model [n-shot=0]' ({zero}: n-shot=0, "
            f"the target's n-shot=3)") in out, out
    assert (f"{same} is a run of the target's own model (org/new-model, as its log says) "
            f"at the same settings (n-shot=3)") in out, out
    assert (f"{bare} is a run of the target's own model (org/new-model, as its log says) "
            f"(its settings cannot be compared: its log states none") in out, out
    assert "history: 6 model(s)" in out, out
    with Session.open(tmp_path / "s.db") as s:
        rec = s.config["history"]
        assert rec["n_models"] == 6 and [e[0] for e in rec["excluded"]] == [
            "org/new-model", "org/new-model"]  # the runs at the target's settings
    # the model named by --history-exclude leaves its kept row out too (it was skipped as
    # satisfied by the dropped runs, so the 0-shot row was used against the user's word)
    out = " ".join(cli("init", tmp_path / "x.db", *base, "--history", runs,
                       "--history-exclude", "org/new-model").split())
    assert ("row 'org/new-model [n-shot=0]' not used (named by --history-exclude)" in out
            and "history: 5 model(s)" in out), out
    # every row dropped: the refusal names each, with its reason (QA: only the first)
    shutil.rmtree(runs)
    _as_model(new, runs / "same", "org/new-model", flip=1, nshot=3)
    _as_model(new, runs / "bare", "org/new-model", flip=2, nshot=-1)
    err = " ".join(cli("init", tmp_path / "t.db", *base, "--history", runs, code=2).split())
    assert "no history is left once the target's own run is dropped (2 rows dropped: " \
           "row 'org/new-model': " in err, err
    assert f"{same} is a run of the target's own model" in err, err
    assert f"{bare} is a run of the target's own model" in err, err
    assert err.count("error:") == 1 and "Traceback" not in err, err


def test_a_glob_target_of_several_tasks_compares_a_run_with_its_own_tasks_settings(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """A glob ``--target`` over one lm-eval run's samples files of two tasks, each run
    with its own n-shot (the results file states them per task: at_sst2 3-shot,
    other_task 0-shot): a history run of the target's model on at_sst2 is compared with
    the target's at_sst2 file, not with any of its files (QA: a 0-shot at_sst2 run was
    dropped as "the target's own model at the same settings (n-shot=0)", matched by the
    other task's 0-shot); at the target's at_sst2 n-shot it is its own, dropped."""
    new = _file(history_logs, "new-model")
    target = _as_model(new, tmp_path / "target", "org/new-model", nshot=3)
    recs = [json.loads(line) for line in target.read_text().splitlines()]
    for r in recs:
        r["doc"]["sentence"] = "Other: " + r["doc"]["sentence"]
    target.with_name(target.name.replace("samples_at_sst2_", "samples_other_task_")
                     ).write_text("".join(json.dumps(r) + "\n" for r in recs))
    (side,) = target.parent.glob("results_*.json")
    doc = json.loads(side.read_text())
    doc["configs"]["other_task"] = {**doc["configs"]["at_sst2"], "task": "other_task"}
    doc["n-shot"] = {"at_sst2": 3, "other_task": 0}
    side.write_text(json.dumps(doc))
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    shutil.rmtree(runs / "new-model")
    zero = _as_model(new, runs / "zero", "org/new-model", flip=0, nshot=0)
    same = _as_model(new, runs / "same", "org/new-model", flip=1, nshot=3)
    glob = str(target.parent / "samples_*.jsonl")
    out = " ".join(cli("init", tmp_path / "s.db", "--task", "sst2", "--pool", target,
                       "--target", f"table:{glob}", "--surrogate",
                       f"table:{_file(history_logs, 'small-model')}", "--metric",
                       "error_rate", "--history", runs, "--no-progress").split())
    assert (f"history: 1 run(s) of the target's own model at other settings than the "
            f"target's kept as other systems: 'org/new-model [n-shot=0]' ({zero}: n-shot=0, "
            f"the target's n-shot=3)") in out, out
    assert (f"{same} is a run of the target's own model (org/new-model, as its log says) "
            f"at the same settings (n-shot=3)") in out, out
    assert "history: 6 model(s)" in out, out  # the 0-shot run is one of them


def test_a_table_targets_own_run_in_the_folder_is_found_by_its_results(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """QA: the target given as ``table:FILE.csv`` (its class log-probs, what a run made
    elsewhere writes) and its own lm-eval run in the ``--history`` folder: the run was used
    as history, since only an lm-eval target's right/wrong was compared with the rows. The
    table's top class against the pool's labels is the target's right/wrong (lm-eval's
    ``acc``), so the identical row is left out, and said, as for the other kinds."""
    from activetest.data.choices import class_logprobs
    from activetest.formats.lmeval import load_lmeval_samples
    from activetest.session.create import resolve_task

    new = _file(history_logs, "new-model")
    task = resolve_task("sst2")
    s = load_lmeval_samples([new])
    lp = class_logprobs(s, task.classes, task.class_names).logprobs
    docs = {str(json.loads(line)["doc_id"]): json.loads(line)["doc"]
            for line in new.read_text().splitlines()}
    pool, target = tmp_path / "pool.csv", tmp_path / "target.csv"
    with pool.open("w", newline="") as f, target.open("w", newline="") as g:
        w, t = csv.writer(f), csv.writer(g)
        w.writerow(["id", "sentence", "label"])
        t.writerow(["id", *task.classes])
        for k, i in enumerate(s.item_ids):
            w.writerow([i, docs[i]["sentence"], task.classes[int(s.labels[k])]])
            t.writerow([i, *(repr(float(v)) for v in lp[k])])
    out = cli("init", tmp_path / "s.db", "--task", "sst2", "--pool", pool, "--id-column", "id",
              "--text-column", "sentence", "--target", f"table:{target}", "--surrogate",
              f"table:{target}", "--metric", "error_rate", "--history", history_logs,
              "--seed", "2", "--no-progress",
              # the pool and the table are keyed by lm-eval's doc_id 0..39 (positions),
              # written from the same run: confirmed (docs/history.md)
              "--ids-are-positions")
    assert "row 'new-model' not used (identical to the target's own scores on 40 items" in out
    assert "history: 5 model(s)" in out


def test_excluding_the_target_whose_own_log_is_already_dropped_is_accepted(
        tmp_path: Path) -> None:
    """``--history-exclude`` naming the target whose own log in the folder is dropped as
    the target's file is satisfied, not refused as "a name matching no row" (QA: the
    careful user naming the target was refused); a name matching nothing still is."""
    (log,) = (ANSWERS / "inspect").glob("*.eval")
    pool = _graded_pool(tmp_path, "q-bus")
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / log.name)
    ids = [json.loads(line)["id"] for line in pool.read_text().splitlines()]
    hist = tmp_path / "other.csv"
    hist.write_text("model," + ",".join(ids) + "\nother-model,"
                    + ",".join(str(k % 2) for k in range(len(ids))) + "\n")
    base = ("--task", "answers", "--pool", pool, "--target", f"answers:{runs / log.name}",
            "--surrogate", "history", "--history", runs, "--history", hist, "--no-progress")
    out = cli("init", tmp_path / "s.db", *base, "--history-exclude",
              "llama-cpp-python/smollm2-135m")
    assert "history: 1 model(s)" in out and "is the target's own run" in out
    out = cli("init", tmp_path / "t.db", *base, "--history-exclude", "nobody", code=2)
    assert "'nobody' matches no history row" in out


def _relabel(src: Path, dst: Path, line: int) -> str:
    """Copy lm-eval's samples file ``src`` to ``dst`` with the gold of one record changed
    (its doc's label, its ``target`` and so its ``acc``): another revision of the dataset
    whose item was relabelled. Returns the record's doc_id."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    lines = src.read_text().splitlines()
    rec = json.loads(lines[line])
    gold = 1 - rec["doc"]["label"]
    rec["doc"]["label"], rec["target"], rec["acc"] = gold, str(gold), 1.0 - rec["acc"]
    lines[line] = json.dumps(rec)
    dst.write_text("\n".join(lines) + "\n")
    return str(rec["doc_id"])


def test_a_log_of_a_relabelled_revision_is_refused(history_logs: Path,  # noqa: F811
                                                    tmp_path: Path) -> None:
    """QA: a log with the pool's doc_ids and texts but another gold on one item (another
    revision of the dataset) passed the content check, and its right/wrong fed the design
    as if comparable. Refused (which gold is right is not guessed), naming the file, the
    item and both golds."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    bad = _file(runs, "model-2")
    item = _relabel(bad, bad, 5)
    gold = json.loads(new.read_text().splitlines()[5])["doc"]["label"]
    words = ("negative", "positive")
    out = cli("init", tmp_path / "s.db", "--task", "sst2", "--pool", new, "--target",
              f"table:{new}", "--surrogate", f"table:{small}", "--metric", "error_rate",
              "--history", runs, "--no-progress", code=2)
    assert f"--history {bad}: pool item {item!r} has the gold answer {words[gold]!r} in " \
           f"the pool but {words[1 - gold]!r} in this log ({bad}: line 6; 1 of 40" in out, out
    assert "another revision of the dataset" in out
    assert not (tmp_path / "s.db").exists()


def test_two_logs_with_different_golds_are_refused(history_logs: Path,  # noqa: F811
                                                   tmp_path: Path) -> None:
    """A pool without labels: two logs judged against different golds on one item (two
    revisions of the dataset) are refused, naming both files, the item and both golds."""
    from activetest.session.create_history import (
        HistoryTargetNotice,
        PoolItem,
        join_pool_history,
    )
    from activetest.session.store import SessionError

    new = _file(history_logs, "new-model")
    recs = [json.loads(line) for line in new.read_text().splitlines()]
    pool = [PoolItem(str(r["doc_id"]), {"sentence": r["doc"]["sentence"]}) for r in recs]
    runs = tmp_path / "runs"
    (runs / "a").mkdir(parents=True)
    shutil.copy(new, runs / "a" / new.name)
    other = _file(history_logs, "small-model")
    item = _relabel(other, runs / "b" / other.name, 7)
    gold = recs[7]["doc"]["label"]
    words = ("negative", "positive")
    for one in ("a", "b"):  # each log alone joins
        with pytest.warns(HistoryTargetNotice):
            assert join_pool_history([runs / one], pool)[0].models
    with pytest.raises(SessionError) as exc:
        join_pool_history([runs], pool)
    msg = " ".join(str(exc.value).split())
    assert f"--history {runs / 'b' / other.name}: pool item {item!r} has the gold answer " \
           f"{words[1 - gold]!r} in this log" in msg, msg
    assert f"but {words[gold]!r} in {runs / 'a' / new.name}: line 8" in msg, msg


def test_a_graded_pool_whose_gold_differs_from_a_log_is_refused(tmp_path: Path) -> None:
    """An inspect_ai log (its ids are its own, so no content check ran) whose target for an
    item is not the pool's reference: refused, naming the log, the item and both golds."""
    (log,) = (ANSWERS / "inspect").glob("*.eval")
    pool = _graded_pool(tmp_path)
    rows = [json.loads(line) for line in pool.read_text().splitlines()]
    rows[0]["references"] = ["every June"]  # the pool's revision relabelled q-lake
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / log.name)
    out = cli("init", tmp_path / "g.db", "--task", "answers", "--pool", pool, "--target",
              "pool", "--surrogate", "history", "--history", runs, "--no-progress", code=2)
    assert f"--history {runs / log.name}: pool item 'q-lake' has the gold answer " \
           f"'every June' in the pool but ['every January', 'January'] in this log" in out, out


def test_a_pool_target_with_history_says_its_own_run_cannot_be_recognised(
        tmp_path: Path) -> None:
    """QA: with ``--target pool`` (no target scores before labelling) the target's own run
    under another name cannot be recognised in the history, and nothing said so: one note
    says it, and how to leave it out; none once ``--history-exclude`` is given, or where the
    target has scores (an answers:FILE target the harness judged)."""
    import os
    import subprocess
    import sys

    (log,) = (ANSWERS / "inspect").glob("*.eval")
    pool = _graded_pool(tmp_path)
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / log.name)
    hist = tmp_path / "other.csv"
    ids = [json.loads(line)["id"] for line in pool.read_text().splitlines()]
    hist.write_text("model," + ",".join(ids) + "\nother-model,"
                    + ",".join(str(k % 2) for k in range(len(ids))) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
           "NO_COLOR": "1", "COLUMNS": "300"}

    def notes(db: str, *args: object) -> list[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "activetest", "init", str(tmp_path / db), "--task",
             "answers", "--pool", str(pool), "--surrogate", "history", "--history",
             str(runs), "--no-progress", *map(str, args)], capture_output=True, text=True,
            cwd=tmp_path, env=env, timeout=600)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return [line for line in proc.stderr.splitlines() if "cannot be recognised" in line]

    (note,) = notes("a.db", "--target", "pool")
    assert note.startswith("note: the target's own results cannot be recognised in the "
                           "history without its scores (--target pool has none before "
                           "labelling)") and "--history-exclude NAME leaves it out" in note
    assert notes("b.db", "--target", "pool", "--history-exclude",
                 "llama-cpp-python/smollm2-135m", "--history", hist) == []
    scored = _graded_pool(tmp_path, "q-bus")
    pool.write_text(scored.read_text())
    assert notes("c.db", "--target", f"answers:{runs / log.name}", "--history", hist) == []


def test_a_history_folder_follows_linked_folders_and_names_a_log_it_cannot_read(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """QA: a folder of runs assembled with links (``runs/model-3 -> /data/model-3``) lost
    the linked runs without a word (``Path.rglob`` does not follow a linked folder); a log
    that is a broken link or a link loop was passed over unsaid; a read error said
    ``error: Input/output error`` naming no file. Linked folders are read (once each: a
    link back up is not followed again); a log that cannot be read is refused, named."""
    import os

    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copytree(history_logs / "model-2", runs / "model-2")
    os.symlink(history_logs / "model-3", runs / "model-3")
    os.symlink("..", runs / "model-2" / "up")  # a loop: read once
    base = ("init", "--task", "sst2", "--pool", new, "--target", f"table:{new}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--history", runs,
            "--no-progress")
    out = cli(*base[:1], tmp_path / "a.db", *base[1:])
    assert "history: 2 model(s)" in out and str(runs / "model-3" / _file(
        history_logs, "model-3").name) in out
    broken = runs / "model-4" / "samples_at_sst2_2026-01-01T00-00-00.jsonl"
    broken.parent.mkdir()
    os.symlink(tmp_path / "gone" / broken.name, broken)  # a run on a disk not mounted
    out = cli(*base[:1], tmp_path / "b.db", *base[1:], code=2)
    assert out.count("error:") == 1 and f"{broken}: not a readable file" in out, out
    assert not (tmp_path / "b.db").exists()
    broken.unlink()
    if Path("/proc/self/mem").exists():  # reading it fails: EIO, as a failing disk
        os.symlink("/proc/self/mem", broken)
        out = cli(*base[:1], tmp_path / "c.db", *base[1:], code=2)
        assert out.count("error:") == 1 and f"{broken}: a --history folder's log cannot be " \
            f"read (Input/output error)" in out, out
        assert not (tmp_path / "c.db").exists()


def test_a_log_of_another_task_in_the_folder_is_named_as_such(history_logs: Path,  # noqa: F811
                                                             tmp_path: Path) -> None:
    """QA: a log of another task in a --history folder (an inspect_ai log beside lm-eval
    runs) was refused with the response matrix's advice: "never by position (it has no
    item content to confirm one): rename its columns to the pool's ids". A log has
    content and no columns: it is named as a run on other items, with an id of each side."""
    (log,) = (ANSWERS / "inspect").glob("*.eval")
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs / "model-2", runs / "model-2")
    shutil.copy(log, runs / log.name)
    out = cli("init", tmp_path / "a.db", "--task", "sst2", "--pool", new, "--target",
              f"table:{new}", "--surrogate", f"table:{small}", "--metric", "error_rate",
              "--history", runs, "--no-progress", code=2)
    assert out.count("error:") == 1 and f"--history {runs / log.name}: none of the log's" in out
    assert "in the log, '0' in the pool" in out and "a run of another task or dataset?" in out
    assert "columns" not in out and "position" not in out
    assert not (tmp_path / "a.db").exists()


def test_a_log_given_by_name_is_read_as_a_log(history_logs: Path,  # noqa: F811
                                              tmp_path: Path) -> None:
    """QA: ``--history runs/model-3/samples_....jsonl`` (one model's log, not its folder)
    was taken for a response matrix: "a response matrix holds no item content ... its
    column '0'". A log file is read as in a folder (its documents checked against the
    pool); lm-eval's results summary by name is refused; one path given twice is read
    once, said (it was refused)."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    m3, m4 = _file(history_logs, "model-3"), _file(history_logs, "model-4")
    base = ("init", "--task", "sst2", "--pool", new, "--target", f"table:{new}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--no-progress")
    out = cli(*base[:1], tmp_path / "a.db", *base[1:], "--history", m3, "--history", m4)
    assert f"history: 2 model(s) from {m3}, {m4}; 40 of 40 pool items have history" in out
    with Session.open(tmp_path / "a.db") as s:
        given = s.config["history"]["sources"]  # named, never by the local path
        assert [Path(p).name for p in given] == [m3.name, m4.name], given
        assert not any(str(tmp_path) in p or str(history_logs) in p for p in given), given
    summary = sorted((history_logs / "model-3").glob("results_*.json"))[0]
    out = cli(*base[:1], tmp_path / "b.db", *base[1:], "--history", summary, code=2)
    assert out.count("error:") == 1 and "summary or listing, not a log" in out
    out = cli(*base[:1], tmp_path / "c.db", *base[1:], "--history", m3, "--history", m3)
    assert f"history: --history {m3} is given twice: read once" in out
    assert "history: 1 model(s)" in out
    assert not (tmp_path / "b.db").exists()


def _cut_last_line(src: Path, dst: Path) -> int:
    """``dst``: ``src`` as a run killed while writing leaves it (its last record cut in
    the middle, no final newline); the cut line's number."""
    lines = src.read_bytes().rstrip(b"\n").split(b"\n")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(lines[:-1]) + b"\n" + lines[-1][: len(lines[-1]) // 2])
    return len(lines)


def test_a_history_log_a_killed_run_cut_is_read_without_its_last_record(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """QA: a --history log whose last line a killed run cut was refused, while `import`
    of an lm-eval samples file skips such a record. Made consistent: skipped and said
    (the file, the line, the model), its other results used; a history row missing one
    item is still that model's results, and no label is read from it. A bad line that is
    not the unfinished last one is still refused; so is a generated-text lm-eval log's."""
    from activetest.formats.history import HistoryFormatError, read_history_run

    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    cut = runs / "model-2" / _file(history_logs, "model-2").name
    n = _cut_last_line(_file(history_logs, "model-2"), cut)
    base = ("init", "--task", "sst2", "--pool", new, "--target", f"table:{new}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--history", runs,
            "--no-progress")
    out = " ".join(cli(base[0], tmp_path / "a.db", *base[1:]).split())
    assert (f"history: skipped the unfinished last record at {cut}: line {n} (a run killed "
            f"while writing?): model 'model-2' has no result on that item; its other "
            f"results are used") in out, out
    assert "40 of 40 pool items have history" in out
    with Session.open(tmp_path / "a.db") as s:
        assert f"runs/model-2/{cut.name}" in s.config["history"]["sources"]
    # a bad line elsewhere (the file finished): refused, named
    lines = _file(history_logs, "model-2").read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[:3]) + lines[3][:40] + "\n" + "".join(lines[4:]))
    out = cli(base[0], tmp_path / "b.db", *base[1:], code=2)
    assert out.count("error:") == 1 and f"{cut}: line 4" in out, out
    assert not (tmp_path / "b.db").exists()
    # a generated-text lm-eval log (read as answers) alike: the records of one filter
    (full,) = (ANSWERS / "lmeval").glob("samples_*.jsonl")
    gen = tmp_path / "one" / full.name
    gen.parent.mkdir()
    gen.write_text("".join(line for line in full.read_text().splitlines(keepends=True)
                           if json.loads(line)["filter"] == "none"))
    m = _cut_last_line(gen, tmp_path / "gen" / gen.name)
    run = read_history_run(tmp_path / "gen" / gen.name)
    assert run.cut == f"{tmp_path / 'gen' / gen.name}: line {m}"
    assert len(run.item_ids) == len(read_history_run(gen).item_ids) - 1
    assert read_history_run(gen).cut is None
    (tmp_path / "gen" / gen.name).write_text(gen.read_text().replace("}\n", "\n", 1))
    with pytest.raises(HistoryFormatError, match="line 1"):
        read_history_run(tmp_path / "gen" / gen.name)


def test_a_garbage_results_file_beside_a_log_is_refused_named(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """QA: a ``results_*.json`` beside a history log that is not lm-eval's results (not
    JSON, or not an object) left the model's name to the folder's without a word, while
    that name leaves the target's own re-runs out of the history. Refused, naming the
    file and why; so is one of another run (its tasks not the samples file's); the
    target's own results file alike. Moved out, the folder names it."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    (side,) = (runs / "model-2").glob("results_*.json")
    base = ("init", "--task", "sst2", "--pool", new, "--target", f"table:{new}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--history", runs,
            "--no-progress")
    for k, (garbage, why) in enumerate((("{\"model_name\": \"org/m", "not valid JSON"),
                                        ("[1, 2]", "a JSON list, not an object"))):
        side.write_text(garbage)
        out = " ".join(cli(base[0], tmp_path / f"{k}.db", *base[1:], code=2).split())
        assert out.count("error:") == 1 and "Traceback" not in out, out
        assert (f"{side}: the lm-eval results file beside {_file(runs, 'model-2').name} "
                f"cannot be read as lm-eval's results ({why}" in out), out
        assert "is not guessed from the folder's name" in out, out
        assert not (tmp_path / f"{k}.db").exists()
    # another run's results (of another task), moved beside this run's samples
    other = json.loads(next((history_logs / "model-3").glob("results_*.json")).read_text())
    other["configs"] = {"at_other": other["configs"]["at_sst2"]}
    side.write_text(json.dumps(other))
    out = " ".join(cli(base[0], tmp_path / "o.db", *base[1:], code=2).split())
    assert out.count("error:") == 1 and (
        f"{side}: the lm-eval results file beside {_file(runs, 'model-2').name} is of a run "
        f"of task(s) 'at_other', not of 'at_sst2', the samples file's task" in out), out
    side.unlink()  # moved out: the folder names the model, as before
    out = cli(base[0], tmp_path / "ok.db", *base[1:])
    assert "history: 5 model(s)" in out
    # the target's own results file: its re-runs in the history are told by its model
    target = tmp_path / "target" / new.name
    shutil.copytree(new.parent, target.parent)
    (tside,) = target.parent.glob("results_*.json")
    tside.write_text("not json")
    out = " ".join(cli(base[0], tmp_path / "t.db", "--task", "sst2", "--pool", target,
                       "--target", f"table:{target}", "--surrogate", f"table:{small}",
                       "--metric", "error_rate", "--history", runs, "--no-progress",
                       code=2).split())
    assert out.count("error:") == 1 and f"--target: {tside}: the lm-eval results file" in out
    assert not (tmp_path / "t.db").exists()


def test_an_unscored_sample_keeps_the_other_samples_scores(tmp_path: Path) -> None:
    """QA: one answered but unscored sample in an inspect_ai log (its scorer failed) left
    the whole log without a score, without a word: as a --history log it was refused as
    having "no per-item judgment", as a target's answers its scores were gone. That
    sample has no score (listed in the provenance); the others keep theirs; the history
    says which model has no result on how many samples."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from activetest.formats.answers import read_answers
    from activetest.formats.history import read_history_run

    (src,) = (ANSWERS / "inspect").glob("*.eval")
    log = read_eval_log(str(src))
    log.samples[0].scores = {}
    runs = tmp_path / "runs"
    runs.mkdir()
    write_eval_log(log, str(runs / src.name))
    af = read_answers(runs / src.name, skip_missing=True)
    whole = read_answers(src, skip_missing=True)
    assert af.score_name == whole.score_name == "includes"
    assert [r.score for r in af.records] == [None, *[r.score for r in whole.records][1:]]
    assert af.provenance["unscored"] == [str(log.samples[0].id)]
    run = read_history_run(runs / src.name)
    assert np.isnan(run.scores[0]) and not np.isnan(run.scores[1:]).any()
    out = " ".join(cli("init", tmp_path / "g.db", "--task", "answers", "--pool",
                       _graded_pool(tmp_path), "--target", "pool", "--surrogate", "history",
                       "--history", runs, "--no-progress").split())
    assert (f"history: 1 sample(s) of {runs / src.name} have no score (e.g. "
            f"{str(log.samples[0].id)!r}: its scorer failed?): model "
            f"'llama-cpp-python/smollm2-135m' has no result on them") in out, out


def test_an_unscored_sample_of_a_judged_answer_file_gets_no_exact_match_judgment(
        tmp_path: Path) -> None:
    """QA: a target's inspect log whose one sample went unscored (its scorer failed) got
    the scorer's judgment on every other item and exact match's on that one (a mixed
    rule, unsaid): now that item has no judgment from data (a person judges it), the
    others keep the scorer's."""
    from inspect_ai.log import read_eval_log, write_eval_log

    from activetest.formats.answers import read_answers
    from activetest.session.workflow import Session

    (src,) = (ANSWERS / "inspect").glob("*.eval")
    log = read_eval_log(str(src))
    log.samples[0].scores = {}
    path = tmp_path / src.name
    write_eval_log(log, str(path))
    whole = {r.item_id: r.score for r in read_answers(src, skip_missing=True).records}
    db = tmp_path / "g.db"
    cli("init", db, "--task", "answers", "--pool", path, "--target", f"answers:{path}",
        "--surrogate", "uniform", "--no-progress")
    with Session.open(db) as s:
        items = s.store.items_at(range(s.n_items))
        scores = s.task.judgment.scores
        got = {it.id: None if it.label is None else scores[it.label] for it in items.values()}
    first = str(log.samples[0].id)
    assert got[first] is None, got
    assert {k: v for k, v in got.items() if k != first} == {
        k: v for k, v in whole.items() if k != first}


def test_an_inspect_sessions_history_log_of_another_task_with_the_same_ids_is_refused(
        tmp_path: Path) -> None:
    """QA: in a --target inspect session, an inspect_ai log of another task whose samples
    carry the pool's ids (``q-lake`` ...) was joined by id alone (its ids are not
    positions) and steered the draws as this task's results, while the eval's own samples
    are joined only where each item's text occurs in the sample's input. A history log is
    now confirmed the same way: the log of the pool's own samples joins; the same log
    against a pool of other questions under the same ids is refused, named, and no session
    is left."""
    from tests.models.answer_writers import ITEMS

    (log,) = (ANSWERS / "inspect").glob("*.eval")
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(log, runs / log.name)

    def pool(name: str, other: bool) -> Path:
        p = tmp_path / name
        p.write_text("".join(json.dumps({"id": i, "context": c, "question": (
            q.replace("When", "Since when") if other else q)}) + "\n"
            for i, c, q, _, _ in ITEMS))
        return p

    base = ("--task", "answers", "--target", "inspect", "--surrogate", "history",
            "--history", runs, "--no-progress")
    out = cli("init", tmp_path / "same.db", "--pool", pool("same.jsonl", False), *base)
    assert "history: 1 model(s)" in out, out
    out = " ".join(cli("init", tmp_path / "other.db", "--pool", pool("other.jsonl", True),
                       *base, code=2).split())
    assert f"--history {runs / log.name}: the log's item ids do not join this pool" in out
    assert "pool item 'q-lake' is not the log's sample 'q-lake'" in out, out
    assert "a run of another task or dataset with the same sample ids?" in out
    assert "Traceback" not in out and not (tmp_path / "other.db").exists()
    # a column of numbers no sample shows (a surrogate's P(correct) left in the pool with
    # --surrogate history): named, with what to do, not called another task's
    p = tmp_path / "scored.jsonl"
    p.write_text("".join(json.dumps({"id": i, "context": c, "question": q,
                                     "p_correct": 0.5}) + "\n" for i, c, q, _, _ in ITEMS))
    out = " ".join(cli("init", tmp_path / "scored.db", "--pool", p, *base, code=2).split())
    assert "(p_correct not in the sample's input)" in out, out
    assert "--surrogate column:p_correct, or drop it from the pool" in out, out
    assert "another task" not in out and not (tmp_path / "scored.db").exists()


def _as_model(src: Path, folder: Path, model: str, flip: int = -1,
              nshot: int | None = None) -> Path:
    """A copy of lm-eval's samples file ``src`` and its results file in ``folder``, the
    results naming ``model`` (``flip``: that line's answer turned the other way; ``nshot``:
    the n-shot the results state for every task; -1: they state none)."""
    folder.mkdir(parents=True)
    lines = src.read_text().splitlines()
    if flip >= 0:
        rec = json.loads(lines[flip])
        rec["acc"] = 1.0 - rec["acc"]
        rec["filtered_resps"], rec["resps"] = rec["filtered_resps"][::-1], rec["resps"][::-1]
        lines[flip] = json.dumps(rec)
    (folder / src.name).write_text("\n".join(lines) + "\n")
    date = src.stem.rsplit("_", 1)[1]
    side = json.loads(next(src.parent.glob("results_*.json")).read_text())
    side["model_name"] = model
    if nshot == -1:
        side.pop("n-shot", None)
    elif nshot is not None:
        side["n-shot"] = {k: nshot for k in [*side.get("n-shot", {}), "at_sst2"]}
    (folder / f"results_{date}.json").write_text(json.dumps(side))
    return folder / src.name


def test_two_local_checkpoints_of_one_name_are_two_models_and_the_targets_is_found(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """Models at local paths of one last name (``/a/checkpoint-1000``,
    ``/b/checkpoint-1000``) are two models named by their shortest distinguishing suffix,
    never a whole path; the target's own model among them is found by the same identity:
    a re-run of ``/a/checkpoint-1000`` (one answer differs) is dropped, ``/b``'s run kept
    (QA: both were ``checkpoint-1000``, the rows named by their folders, so the re-run was
    used as another model's)."""
    new = _file(history_logs, "new-model")
    target = _as_model(new, tmp_path / "target", "/a/checkpoint-1000")
    runs = tmp_path / "runs"
    _as_model(new, runs / "rerun", "/a/checkpoint-1000", flip=0)
    _as_model(_file(history_logs, "model-2"), runs / "other", "/b/checkpoint-1000")
    _as_model(_file(history_logs, "model-3"), runs / "third", "/c/d/model-3")
    db = tmp_path / "s.db"
    out = cli("init", db, "--task", "sst2", "--pool", target, "--target", f"table:{target}",
              "--surrogate", f"table:{_file(history_logs, 'small-model')}", "--metric",
              "error_rate", "--history", runs, "--no-progress")
    assert ("row 'a/checkpoint-1000' not used (" + str(runs / "rerun" / new.name)
            + " is a run of the target's own model (a/checkpoint-1000, as its log says)"
            ) in out, out
    assert "history: 2 model(s)" in out
    with Session.open(db) as s:
        rows = s.store.scores("history_responses").provenance["models"]
    assert sorted(rows) == ["b/checkpoint-1000", "model-3"]


def test_one_model_given_twice_is_one_row_where_its_results_agree(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """One local model's logs in two folders (two folders of logs of the same model and
    task, or a folder given twice) is one row where its results agree, said; refused,
    naming both files, the model and an item, where they differ (QA: two rows, the
    history's features biased toward it)."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    m3 = _file(history_logs, "model-3")
    one, two = tmp_path / "one", tmp_path / "two"
    a = _as_model(m3, one / "run", "/models/ckpt")
    b = _as_model(m3, two / "run", "/models/ckpt")
    with b.open("a") as fh:  # another byte: not a copy, the same results
        fh.write("\n")
    base = ("init", "--task", "sst2", "--pool", new, "--target", f"table:{new}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--no-progress")
    out = cli(*base[:1], tmp_path / "a.db", *base[1:], "--history", one, "--history", two,
              "--history", one)
    assert (f"history: model 'ckpt' is in {a} and in {b}, its results agreeing on the 40 "
            f"item(s) both have: one row") in out, out
    assert f"history: --history {one} is given twice: read once" in out
    assert "history: 1 model(s)" in out
    (b.parent / b.name).unlink()
    c = _as_model(m3, two / "again", "/models/ckpt", flip=5)
    out = cli(*base[:1], tmp_path / "b.db", *base[1:], "--history", one, "--history", two,
              code=2)
    assert out.count("error:") == 1
    assert f"model 'ckpt' is in {a} and in {c} with other results: item " in out, out
    assert not (tmp_path / "b.db").exists()


def test_two_local_checkpoints_of_one_name_in_eee_logs_are_two_models(tmp_path: Path) -> None:
    """Every Eval Ever logs of models at ``/a/checkpoint-1000`` and ``/b/checkpoint-1000``
    are two rows, ``a/checkpoint-1000`` and ``b/checkpoint-1000`` (QA: both were
    ``checkpoint-1000``, refused as the same model in two files)."""
    (eee,) = (ANSWERS / "eee" / "data" / "toyqa" / "llama-cpp-python").glob("*/*_samples.jsonl")
    recs = [json.loads(line) for line in eee.read_text().splitlines()]
    runs = tmp_path / "runs"
    for k, who in enumerate(("a", "b")):
        (runs / who).mkdir(parents=True)
        out = []
        for r in recs:
            if r["evaluation_result_id"] != "match:accuracy":
                continue
            r = {**r, "model_id": f"/{who}/checkpoint-1000"}
            if k and r["sample_id"] == "q-bread":  # another model: another result
                r["evaluation"] = {**r["evaluation"], "score": 1.0, "is_correct": True}
            out.append(json.dumps(r) + "\n")
        (runs / who / eee.name).write_text("".join(out))
    out = cli("init", tmp_path / "g.db", "--task", "answers", "--pool", _graded_pool(tmp_path),
              "--target", "pool", "--surrogate", "history", "--no-progress", "--history", runs)
    assert "history: 2 model(s)" in out, out
    with Session.open(tmp_path / "g.db") as s:
        rows = s.store.scores("history_responses").provenance["models"]
    assert sorted(rows) == ["a/checkpoint-1000", "b/checkpoint-1000"]


def test_one_models_runs_at_other_n_shots_are_two_rows(history_logs: Path,  # noqa: F811
                                                       tmp_path: Path) -> None:
    """A model's two lm-eval runs whose results state other n-shots (two systems: the
    same checkpoint at 1 and 3 shots) are two rows named by it, said (QA: refused as "two
    runs of one model"); at one n-shot, other results are still refused."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    for who, src, shots in (("one", "model-2", 1), ("three", "model-3", 3)):
        f = _as_model(_file(history_logs, src), runs / who, "org/m")
        side = next(f.parent.glob("results_*.json"))
        doc = json.loads(side.read_text())
        doc["n-shot"] = {k: shots for k in doc["n-shot"]}
        side.write_text(json.dumps(doc))
    base = ("--task", "sst2", "--pool", new, "--target", f"table:{new}", "--surrogate",
            f"table:{small}", "--metric", "error_rate", "--no-progress", "--history", runs)
    out = " ".join(cli("init", tmp_path / "a.db", *base).split())
    assert "history: 2 model(s)" in out, out
    assert "'org/m [n-shot=1]', 'org/m [n-shot=3]'" in out
    with Session.open(tmp_path / "a.db") as s:
        rows = s.store.scores("history_responses").provenance["models"]
    assert sorted(rows) == ["org/m [n-shot=1]", "org/m [n-shot=3]"]
    side = next((runs / "one").glob("results_*.json"))
    doc = json.loads(side.read_text())
    doc["n-shot"] = {k: 3 for k in doc["n-shot"]}
    side.write_text(json.dumps(doc))
    out = cli("init", tmp_path / "b.db", *base, code=2)
    assert "model 'org/m' is in " in out and "with other results" in out, out


def test_a_runs_log_of_another_task_is_passed_over(history_logs: Path,  # noqa: F811
                                                   tmp_path: Path) -> None:
    """``lm_eval --tasks a,b`` writes both tasks' samples files in one folder: with an
    lm-eval samples file as the target, a history log of another task is passed over,
    said (QA: the whole folder was refused, "move it out")."""
    new, small = _file(history_logs, "new-model"), _file(history_logs, "small-model")
    runs = tmp_path / "runs"
    shutil.copytree(history_logs, runs)
    src = _file(runs, "model-2")
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    for r in recs:
        r["doc"]["sentence"] = "Other: " + r["doc"]["sentence"]
    other = src.with_name(src.name.replace("samples_at_sst2_", "samples_other_task_"))
    other.write_text("".join(json.dumps(r) + "\n" for r in recs))
    side = next(src.parent.glob("results_*.json"))  # lm-eval's results name both tasks
    doc = json.loads(side.read_text())
    doc["configs"]["other_task"] = {**doc["configs"]["at_sst2"], "task": "other_task"}
    side.write_text(json.dumps(doc))
    base = ("--task", "sst2", "--pool", new, "--target", f"table:{new}", "--surrogate",
            f"table:{small}", "--metric", "error_rate", "--no-progress")
    out = " ".join(cli("init", tmp_path / "a.db", *base, "--history", runs).split())
    assert "history: 1 lm-eval log(s) of other tasks than the target's (at_sst2) passed " \
           f"over: {other}" in out, out
    assert "history: 5 model(s)" in out
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(other, alone / other.name)
    shutil.copy(side, alone / side.name)
    out = cli("init", tmp_path / "b.db", *base, "--history", alone, code=2)
    assert "other tasks than the target's (at_sst2)" in out and out.count("error:") == 1


def _two_task_runs(history_logs: Path, runs: Path) -> list[Path]:  # noqa: F811
    """``runs``: lm-eval's folder of every model's run as ``lm_eval --tasks at_sst2,other_task``
    writes it (each model's two samples files, its results file naming both tasks; the
    other task's documents are other texts under the same doc_ids); the other task's files."""
    shutil.copytree(history_logs, runs)
    others = []
    for folder in sorted(p for p in runs.iterdir() if p.is_dir()):
        (src,) = folder.glob("samples_at_sst2_*.jsonl")
        recs = [json.loads(line) for line in src.read_text().splitlines()]
        for r in recs:
            r["doc"]["sentence"] = "Other: " + r["doc"]["sentence"]
        other = src.with_name(src.name.replace("samples_at_sst2_", "samples_other_task_"))
        other.write_text("".join(json.dumps(r) + "\n" for r in recs))
        side = next(folder.glob("results_*.json"))
        doc = json.loads(side.read_text())
        doc["configs"]["other_task"] = {**doc["configs"]["at_sst2"], "task": "other_task"}
        side.write_text(json.dumps(doc))
        others.append(other)
    return others


def test_a_two_task_folder_joins_the_pools_task_whatever_the_target(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """QA: a --history folder of runs of two tasks (``lm_eval --tasks a,b``) was refused
    ("move it out") where the target named no task: a glob of samples files (the pattern
    was kept as a file name, so the target's own run in the folder was not recognised
    either) or a CSV pool and target. Each log now joins the pool's task only: the
    target's files' task, else the one task whose logs' documents are the pool's items
    (each log's content check); the other task's logs are passed over, said. Two tasks
    that both join are refused, naming them: never guessed."""
    runs = tmp_path / "runs"
    others = _two_task_runs(history_logs, runs)
    small = _file(history_logs, "small-model")
    glob = str(runs / "new-model" / "samples_at_sst2_*.jsonl")
    out = cli("init", tmp_path / "g.db", "--task", "sst2", "--pool", glob, "--target",
              f"table:{glob}", "--surrogate", f"table:{small}", "--metric", "error_rate",
              "--history", runs, "--no-progress")
    assert "history: 5 model(s)" in out and "40 of 40 pool items have history" in out, out
    new = next((runs / "new-model").glob("samples_at_sst2_*.jsonl"))
    assert f"row 'new-model' not used ({new} is the target's own run" in out, out
    # the target's model's log of the other task is passed over as another task's, every
    # model's counted, not dropped as "a run of the target's own model" (QA: wrong reason)
    assert (f"history: {len(others)} lm-eval log(s) of other tasks than the target's "
            f"(at_sst2) passed over") in out, out
    assert "a run of the target's own model" not in out, out
    # its model named by --history-exclude where that log is its only one here: satisfied
    # (nothing of it is used), not refused as a name matching no row
    alone = tmp_path / "alone"
    shutil.copytree(runs, alone)
    next((alone / "new-model").glob("samples_at_sst2_*.jsonl")).unlink()
    out = cli("init", tmp_path / "x.db", "--task", "sst2", "--pool", glob, "--target",
              f"table:{glob}", "--surrogate", f"table:{small}", "--metric", "error_rate",
              "--history", alone, "--history-exclude", "new-model", "--no-progress")
    assert "history: 5 model(s)" in out and "a run of the target's own model" not in out, out
    assert (f"history: {len(others)} lm-eval log(s) of other tasks than the target's "
            f"(at_sst2) passed over") in out, out
    # a CSV pool and a CSV target: no task named; the pool's is the one its documents tell
    recs = [json.loads(line) for line in new.read_text().splitlines()]
    pool, target = tmp_path / "pool.csv", tmp_path / "target.csv"
    with pool.open("w", newline="") as f, target.open("w", newline="") as g:
        w, t = csv.writer(f), csv.writer(g)
        w.writerow(["id", "sentence", "label"])
        t.writerow(["id", "negative", "positive"])
        for r in recs:
            w.writerow([r["doc_id"], r["doc"]["sentence"],
                        ("negative", "positive")[r["doc"]["label"]]])
            t.writerow([r["doc_id"], *(x[0][0] for x in r["resps"])])
    args = ("--task", "sst2", "--pool", pool, "--id-column", "id", "--text-column",
            "sentence", "--label-column", "label", "--target", f"table:{target}?kind=logits",
            "--surrogate", f"table:{target}?kind=logits", "--metric", "error_rate",
            "--ids-are-positions", "--no-progress")
    out = cli("init", tmp_path / "c.db", *args, "--history", runs)
    assert "history: 5 model(s)" in out, out
    assert "row 'new-model' not used (identical to the target's own scores" in out, out
    assert (f"history: {len(others)} lm-eval log(s) of other tasks than the pool's (at_sst2, "
            f"the task whose logs' documents are the pool's items) passed over") in out, out
    with Session.open(tmp_path / "c.db") as s:
        assert not any("other_task" in p for p in s.config["history"]["sources"])
    # a third task on the same documents: two tasks join by content, refused, named
    m2 = next((runs / "model-2").glob("samples_at_sst2_*.jsonl"))
    twin = m2.with_name(m2.name.replace("samples_at_sst2_", "samples_at_sst2_copy_"))
    twin.write_text("".join(json.dumps(json.loads(line), indent=None, separators=(",", ":"))
                            + "\n" for line in m2.read_text().splitlines()))
    side = next(m2.parent.glob("results_*.json"))
    doc = json.loads(side.read_text())
    doc["configs"]["at_sst2_copy"] = {**doc["configs"]["at_sst2"], "task": "at_sst2_copy"}
    side.write_text(json.dumps(doc))
    out = cli("init", tmp_path / "d.db", *args, "--history", runs, code=2)
    assert out.count("error:") == 1 and "lm-eval logs of 2 tasks join the pool's items by " \
        "content (at_sst2: " in out and f"at_sst2_copy: {twin}" in out, out
    assert "which one the pool's items are is not guessed" in out, out
    assert not (tmp_path / "d.db").exists()
