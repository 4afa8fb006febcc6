"""The lm-eval loop: select -> lm_eval --samples -> import, with lm-eval's own command line.

Every samples file here is written by lm-eval (``tests/lmeval_cli.py`` is ``lm_eval run``
with a local deterministic model registered; ``tests/lmeval_harness.py`` wrote the full
run). The pool is a cheaper model's full run (another ``skill``); the target's full
run is the ``lmeval_files`` fixture's (the same rule as ``at-hash`` with its defaults).
Tasks are 0-shot (``at_sst2_rev`` and the ``at_mmlu`` group), so an item's prompt, and
so its result, is the same in a run of a subset as in the full run.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from session_support import run_cli
from tests.lmeval_harness import HarnessFiles, run_lm_eval, run_lm_evals, subset_of

from activetest.formats.lmeval_results import read_results, samples_json
from activetest.session.harness import runs_summary, uniform_runs_for_width
from activetest.session.workflow import Session

#: the tests that run lm-eval (about 5 CPU-s a process) are slow; the others run everywhere
slow = pytest.mark.slow

CLI = Path(__file__).resolve().parents[1] / "lmeval_cli.py"
TASKS = "at_sst2_rev,at_mmlu"


run = run_cli


def lm_eval(files: HarnessFiles, out: Path, tasks: str, *extra: str) -> list[Path]:
    """Run lm-eval's command line; the samples files it wrote."""
    return run_lm_eval(files, out, tasks, *extra)


@pytest.fixture(scope="module")
def pool_run(lmeval_files: HarnessFiles, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A cheaper model's full run: the pool and the surrogate."""
    out = tmp_path_factory.mktemp("pool_run")
    env_args = f"docs={lmeval_files.root / 'docs.json'},skill=0.6,salt=cheap"
    files = lm_eval(lmeval_files, out, TASKS, "--model_args", env_args)
    assert len(files) == 4
    return files


def full_results(files: HarnessFiles) -> dict[str, float]:
    """The target's full run: ``<task>/<doc_id>`` -> acc."""
    paths = [files.samples("at_sst2_rev"), *sorted(files.run.glob("samples_at_mmlu_*.jsonl"))]
    return {r.key: r.metrics["acc"] for r in read_results(paths)}


def new_session(tmp_path: Path, pool_run: list[Path], seed: int = 1) -> Path:
    db = tmp_path / "eval.db"
    out = run("init", db, "--pool", pool_run[0].parent / "samples_*.jsonl", "--task", "answers",
              "--target", "lm-eval", "--surrogate", "pool-run", "--seed", seed, "--no-progress")
    assert "60 items" in out or "items" in out
    # the target runs with lm-eval's prompts (QA: "0 in-context example(s)" for a target
    # the README's loop runs 3-shot)
    assert "the target's prompts are lm-eval's" in " ".join(out.split()), out
    assert "in-context example" not in out, out
    return db


def other_result(rec: dict) -> None:
    """A multiple-choice record as a re-run that came out otherwise would log it: acc
    flipped and its log-likelihoods agreeing (the gold choice's raised above the others',
    or lowered below them). An acc flipped alone is refused as an edited record."""
    pairs = rec["filtered_resps"]
    lls = [float(p[0]) for p in pairs]
    gold = int(rec["target"]) if str(rec.get("target", "")).lstrip("-").isdigit() else None
    if gold is None or not 0 <= gold < len(lls):
        gold = max(range(len(lls)), key=lambda j: lls[j]) if rec["acc"] == 1.0 else 0
    rec["acc"] = 1.0 - rec["acc"]
    new = max(lls) + 1.0 if rec["acc"] == 1.0 else min(lls) - 1.0
    for key in ("filtered_resps", "resps"):
        entry = rec.get(key)
        if not isinstance(entry, list) or len(entry) != len(lls):
            continue
        e = entry[gold]
        while isinstance(e, list) and e and isinstance(e[0], list):  # resps: [[ll, greedy]]
            e = e[0]
        e[0] = type(e[0])(new) if not isinstance(e[0], str) else str(new)


def emit(db: Path, n: int, out: Path) -> dict[str, list[int]]:
    text = run("select", db, "--n", n, "--emit", "lm-eval", "--out", out)
    assert "--samples" in text
    return json.loads(out.read_text())


@slow
def test_lm_eval_runs_only_the_drawn_items_and_each_result_is_the_full_runs(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    db = new_session(tmp_path, pool_run)
    mapping = emit(db, 14, tmp_path / "samples.json")
    assert all(v == sorted(set(v)) for v in mapping.values())  # lm-eval logs doc_id by position
    assert sum(map(len, mapping.values())) == 14
    text = run("select", db, "--n", 1, "--emit", "lm-eval", "--out", tmp_path / "s2.json")
    tasks = text.split("--tasks ")[1].split()[0]
    mapping = json.loads((tmp_path / "s2.json").read_text())  # the 14 pending + 1 new
    assert sum(map(len, mapping.values())) == 15
    assert set(tasks.split(",")) == set(mapping)  # subtasks, never the whole group
    got = lm_eval(lmeval_files, tmp_path / "out", tasks, "--samples", str(tmp_path / "s2.json"))
    records = read_results(got)
    assert sorted(r.key for r in records) == sorted(f"{t}/{d}" for t, ds in mapping.items()
                                                   for d in ds)
    full = full_results(lmeval_files)
    assert {r.key: r.metrics["acc"] for r in records} == {r.key: full[r.key] for r in records}
    out = run("import", db, *got)
    assert "imported 15 target run(s)" in out and "acc" in out
    with Session.open(db) as s:
        labels = s.labels()
        assert {k: float(v) for k, v in labels.items()} == {k: full[k] for k in labels}
        assert all(lab.source.startswith("lm-eval:") for lab in s.store.labels().values())
    # every output names what the labels are: the metric read and its tasks (QA: none did)
    est = " ".join(run("estimate", db).split())
    what = f"lm-eval's per-item acc (task{'s' if len(mapping) > 1 else ''} "
    assert f"labels: {what}" in est and "the error rate is 1 - its mean" in est, est
    assert json.loads(run("estimate", db, "--json"))["labels_from"].startswith(what)
    status = run("status", db)
    assert "target runs spent: 15" in status and f"labels: {what}" in " ".join(status.split())
    assert json.loads(run("status", db, "--json"))["target_runs"]["labels_from"].startswith(
        what)
    with Session.open(db) as s:
        assert s.report_data(progress=False).info["Labels"].startswith(what)
    # a re-run whose result came out otherwise replaces the stored one with --overwrite
    # (which the message asks for; it was not passed on, QA), and a second metric is
    # refused: one estimate cannot mix two (it mixed them silently, QA)
    redo = tmp_path / "redo"
    redo.mkdir()
    src = got[0]
    recs = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    other_result(recs[0])
    for r in recs:
        r["acc_alt"] = r["acc"]
        r["metrics"] = [*r.get("metrics", []), "acc_alt"]
    (redo / src.name).write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = run("import", db, redo / src.name, code=2)
    assert "--overwrite" in out and out.count("error:") == 1
    out = run("import", db, redo / src.name, "--metric-key", "acc_alt", code=2)
    assert "cannot mix two metrics" in out and "--metric-key acc" in out
    renamed = redo / (src.name.split("_20")[0] + ".jsonl")  # its date cut off
    renamed.write_text(src.read_text())
    out = " ".join(run("import", db, renamed, code=2).split())
    assert "a renamed file names another task" in out, out
    run("import", db, redo / src.name, "--overwrite")
    with Session.open(db) as s:
        changed = [k for k, v in s.labels().items() if float(v) != full[k]]
    assert len(changed) == 1
    with Session.open(db) as s:  # what every new graded session records
        cfg = s.session_config
        n = cfg.pool["n_items"]
        assert cfg.planned_budget == min(400, n // 2) and cfg.clt_min_errors == 5
        assert cfg.blind_ratio is not None
        # the harness ran the target with whatever examples its command said: the report
        # shows the n-shot its results said, kept with the first round (it printed the
        # session's own setting, 0, QA; then "unknown" though the n-shot was kept)
        info = s.report_data(progress=False).info
        kept = cfg.answer_files["target"]["n_shot"]
        assert kept and set(kept.values()) == {info["Target in-context examples"]}
    # round 2 by lm-eval's command line again: model_args names no model (no pretrained=
    # ...), so lm-eval wrote a random run id as each run's model_name; it is no model
    # (QA: round 2 was refused, "one estimate cannot mix two models")
    text = run("select", db, "--n", 2, "--emit", "lm-eval", "--out", tmp_path / "s3.json")
    tasks = text.split("--tasks ")[1].split()[0]
    got2 = lm_eval(lmeval_files, tmp_path / "out2", tasks, "--samples",
                   str(tmp_path / "s3.json"))
    side = [json.loads(p.read_text()) for p in (tmp_path / "out2").glob("*/results_*.json")]
    assert side and side[0]["model_name"] not in {"at-hash", "", None}  # lm-eval's random id
    assert "imported 2 target run(s)" in run("import", db, *got2)
    with Session.open(db) as s:
        assert "model" not in (s.session_config.answer_files or {}).get("target", {})


@slow
def test_import_refuses_results_not_drawn_or_of_another_document(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    db = new_session(tmp_path, pool_run, seed=2)
    with sqlite3.connect(db) as c:  # as a few-shot run's prompts: an example first (QA)
        for idx, fields in c.execute("SELECT idx, fields FROM items").fetchall():
            f = json.loads(fields)
            f["input"] = ("An earlier example question, long enough to fill the start of "
                          "the prompt shown?\nAnswer: B\n\n" + f["input"])
            c.execute("UPDATE items SET fields = ? WHERE idx = ?", (json.dumps(f), idx))
    mapping = emit(db, 6, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    out = run("import", db, *full, code=2)  # the whole run: items that were not drawn
    assert "was not drawn" in out and "samples_at_" in out
    # said to be a run without --samples, not one stray record (QA)
    n_full = sum(len(f.read_text().splitlines()) for f in full)
    flat = " ".join(out.split())
    assert f"These files hold {n_full} result(s), {n_full - 6} of them for items not drawn: " \
           f"lm-eval ran without --samples" in flat, flat
    assert "nothing was imported" in flat and flat.count("error:") == 1, flat
    files = subset_of(full, mapping, tmp_path / "sub")
    bad = files[-1]
    lines = bad.read_text().splitlines()
    rec = json.loads(lines[0])
    key = next(k for k, v in rec["doc"].items() if isinstance(v, str) and len(v) > 10)
    rec["doc"][key] = "A different document altogether, swapped in."
    bad.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    out = run("import", db, *files, code=2)
    assert "is not this record's document" in out and bad.name in out
    assert "swapped in" in out and f"/{rec['doc_id']}" in out  # both sides, the item
    # the session's side is the item's own text, not the prompt's first example (QA)
    original = json.loads(lines[0])["doc"][key]
    assert " ".join(original.split())[:30] in " ".join(out.split()), out
    with Session.open(db) as s:
        assert s.labels() == {}  # all or nothing
    out = run("import", db, *files[:-1], "--metric-key", "nope", code=2)
    assert "has no metric 'nope'" in out
    # another task's results (the same documents, the choices in the other order) under
    # this task's file name: the documents match, the answer key does not (QA: imported)
    rev = next(f for f in files if "at_sst2_rev" in f.name)
    keep = set(mapping["at_sst2_rev"])
    plain = [ln for ln in lmeval_files.samples("at_sst2").read_text().splitlines()
             if ln.strip() and json.loads(ln)["doc_id"] in keep]
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    (renamed / rev.name).write_text("\n".join(plain) + "\n")
    out = " ".join(run("import", db, renamed / rev.name, code=2).split())
    assert "answer key (gold choice) is" in out and "the pool run's" in out, out
    # acc edited against the record's own log-likelihoods (QA: stored as given)
    edited = tmp_path / "edited"
    edited.mkdir()
    lines = files[0].read_text().splitlines()
    rec = json.loads(lines[0])
    rec["acc"] = 1.0 - rec["acc"]
    (edited / files[0].name).write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    out = " ".join(run("import", db, edited / files[0].name, code=2).split())
    assert f"acc = {rec['acc']:g}, but the record's own log-likelihoods pick choice" in out
    # two runs of one task are refused; so is one file that gives an item two results
    again = tmp_path / "again"
    again.mkdir()
    lines = files[0].read_text().splitlines()
    rec = json.loads(lines[0])
    other_result(rec)
    (again / files[0].name).write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    out = " ".join(run("import", db, files[0], again / files[0].name, code=2).split())
    assert "two runs of one task?" in out
    (again / files[0].name).write_text("\n".join([*lines, json.dumps(rec)]) + "\n")
    out = " ".join(run("import", db, again / files[0].name, code=2).split())
    # (mutation check: accepting the conflict passed every test)
    assert f"has acc = {rec['acc']:g} here and another value at" in out, out
    with Session.open(db) as s:
        assert s.labels() == {}
    # a person's judgment is a label too, with its own source; the target's differing
    # result does not replace it (nothing is stored from that file)
    good = files[:-1]
    rec = json.loads(good[0].read_text().splitlines()[0])
    task = good[0].name.removeprefix("samples_").rsplit("_", 1)[0]
    item = f"{task}/{rec['doc_id']}"
    with Session.open(db) as s:  # taken on trust: the target has not run it (imported)
        s.add_label(item, "incorrect" if rec["acc"] == 1.0 else "correct", source="cli",
                    trust_people=True)
    out = run("import", db, *good, code=2)
    assert item in out
    with Session.open(db) as s:
        assert [lab.source for lab in s.store.labels().values()] == ["cli"]
        r = runs_summary(s)
        assert r is not None and (r.target_runs, r.person_labels) == (0, 1)


def test_a_document_of_the_same_text_is_said_to_differ_elsewhere(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: a result whose document has the item's text but differs elsewhere (another
    revision of the dataset with a changed answer key; another task of the same sentences
    under other field names) was refused showing the same text on both sides, as if
    nothing differed. The refusal now says the text is the item's and shows the record's
    whole document; nothing is stored."""
    db = new_session(tmp_path, pool_run, seed=6)
    mapping = emit(db, 6, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    files = subset_of(full, mapping, tmp_path / "sub")
    lines = files[0].read_text().splitlines()
    rec = json.loads(lines[0])
    rec["doc"]["revision"] = 2
    files[0].write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    out = " ".join(run("import", db, files[0], code=2).split())
    assert "is not this record's document" in out and out.count("error:") == 1, out
    assert "its text is the item's, so the documents differ elsewhere" in out, out
    assert '"revision": 2' in out, out
    with Session.open(db) as s:
        assert s.labels() == {}


def test_the_report_names_the_pool_runs_in_context_examples(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: the report of an lm-eval session gave the surrogate (the pool run, prompted by
    lm-eval) the session's own 0 in-context examples, whatever the pool run's n-shot was.
    It now says what the pool run's ``results_<date>.json`` says (here edited to 5)."""
    pool = tmp_path / "pool"
    pool.mkdir()
    for f in pool_run[0].parent.iterdir():
        if f.name.startswith("results_"):
            doc = json.loads(f.read_text())
            doc["n-shot"] = {task: 5 for task in doc.get("n-shot") or {}}
            (pool / f.name).write_text(json.dumps(doc))
        elif f.is_file():
            (pool / f.name).write_bytes(f.read_bytes())
    db = tmp_path / "eval.db"
    run("init", db, "--pool", pool / "samples_*.jsonl", "--task", "answers", "--target",
        "lm-eval", "--surrogate", "pool-run", "--seed", 7, "--no-progress")
    mapping = emit(db, 4, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    run("import", db, *subset_of(full, mapping, tmp_path / "r1"))
    run("report", db, "--out", tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "- In-context examples: 5\n" in md, md[:1500]


@slow
def test_a_metric_that_is_not_a_number_is_shown_not_called_missing(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: a record whose acc is written but is no number ("yes", null, a list, "nan") was
    refused as having no metric at all (``has no metric 'acc' (it has none); choose one
    with --metric-key``), sending the user after another metric: the value is shown."""
    db = new_session(tmp_path, pool_run, seed=4)
    mapping = emit(db, 4, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    files = subset_of(full, mapping, tmp_path / "sub")
    lines = files[0].read_text().splitlines()
    for value, shown in (("yes", '"yes"'), (None, "null"), ([1], "[1]"), ("nan", '"nan"')):
        rec = json.loads(lines[0])
        rec["acc"] = value
        files[0].write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
        out = " ".join(run("import", db, *files, code=2).split())
        assert out.count("error:") == 1 and f"acc = {shown}, not a number" in out, out
        assert "has no metric" not in out and files[0].name in out
    with Session.open(db) as s:
        assert s.labels() == {}


@slow
def test_the_results_model_is_kept_and_another_models_results_are_refused(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """Who answered: the model lm-eval's ``results_<date>.json`` beside the samples names
    is kept in the session and named by the EEE record (it said ``"lm-eval"``, QA);
    results of another model are refused, as are files of two models in one import."""
    db = new_session(tmp_path, pool_run, seed=3)
    mapping = emit(db, 8, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]

    def results_of(model: str, folder: str) -> list[Path]:
        files = subset_of(full, mapping, tmp_path / folder)
        for f in files:
            date = f.stem.rsplit("_", 1)[1]
            f.with_name(f"results_{date}.json").write_text(json.dumps(
                {"model_name": model, "config": {"model": "hf"}}))
        return files

    a = results_of("org/model-a", "a")
    b = results_of("org/model-b", "b")
    out = " ".join(run("import", db, a[0], *b[1:], code=2).split())
    assert "of 2 models" in out and "org/model-a" in out and "org/model-b" in out
    run("import", db, *a[:1])
    out = " ".join(run("import", db, *b[1:], code=2).split())
    assert "of org/model-b (lm-eval)" in out and "earlier results are of org/model-a" in out, out
    run("import", db, *a[1:])
    rec = json.loads(run("estimate", db, "--format", "eee"))
    assert rec["model_info"]["id"] == "org/model-a"
    assert rec["model_info"]["developer"] == "org"


def test_a_round_of_other_weights_of_the_named_model_is_refused(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: lm-eval names a run of ``--model_args pretrained=DIR,gguf_file=A.gguf`` by DIR
    alone (the README's loop runs the bundled SmolLM2 so), so a round of ``gguf_file=B.gguf``
    (another quantisation in the same folder) was imported beside the rounds of A as the
    same target: one estimate of two models, without a word. The weights ``model_args``
    pick (``gguf_file``, ``revision``, ...) are kept with the first results and a round of
    others is refused, one message naming both, nothing stored; within one import too."""
    db = new_session(tmp_path, pool_run, seed=5)
    mapping = emit(db, 8, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]

    def results_of(gguf: str, folder: str) -> list[Path]:
        files = subset_of(full, mapping, tmp_path / folder)
        for f in files:
            date = f.stem.rsplit("_", 1)[1]
            f.with_name(f"results_{date}.json").write_text(json.dumps(
                {"model_name": "/models/smollm2", "config": {
                    "model": "hf", "model_args": f"pretrained=/models/smollm2,gguf_file={gguf}"}}))
        return files

    a = results_of("SmolLM2.Q4_1.gguf", "a")
    b = results_of("SmolLM2.Q8_0.gguf", "b")
    assert len(a) >= 2
    out = " ".join(run("import", db, a[0], *b[1:], code=2).split())
    assert "of smollm2 with other weights" in out and "gguf_file=SmolLM2.Q8_0.gguf" in out, out
    run("import", db, *a[:1])
    with Session.open(db) as s:
        before = s.labels()
    out = " ".join(run("import", db, *b[1:], code=2).split())
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert ("these results are of smollm2 (lm-eval) with gguf_file=SmolLM2.Q8_0.gguf; the "
            "session's earlier results with gguf_file=SmolLM2.Q4_1.gguf") in out, out
    with Session.open(db) as s:
        assert s.labels() == before
    run("import", db, *a[1:])
    with Session.open(db) as s:
        assert len(s.labels()) == 8 and not s.pending()


def test_a_round_run_with_another_prompt_is_refused(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: a round run with an edited task YAML (another ``doc_to_text``: another prompt)
    was imported beside the first round's results of the task, one estimate of two
    prompts, without a word (only lm-eval's n-shot was compared). The prompt keys of the
    task's config in lm-eval's ``results_<date>.json`` are kept with the first results and
    a round with others is refused, naming the keys; nothing stored. The same config is
    imported."""
    db = new_session(tmp_path, pool_run, seed=8)
    mapping = emit(db, 8, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    f = max(subset_of(full, mapping, tmp_path / "all"),
            key=lambda x: len(x.read_text().splitlines()))
    lines = f.read_text().splitlines()
    assert len(lines) >= 2
    task = f.name.removeprefix("samples_").rsplit("_", 1)[0]
    date = f.stem.rsplit("_", 1)[1]

    def round_of(folder: str, part: list[str], prompt: str) -> Path:
        d = tmp_path / folder
        d.mkdir()
        (d / f.name).write_text("\n".join(part) + "\n")
        (d / f"results_{date}.json").write_text(json.dumps({"configs": {task: {
            "task": task, "doc_to_text": prompt, "doc_to_choice": ["A", "B"]}}}))
        return d / f.name

    run("import", db, round_of("r1", lines[:1], "Q: {{question}}\nA:"))
    with Session.open(db) as s:
        before = s.labels()
    out = " ".join(run("import", db, round_of("r2", lines[1:], "Question: {{question}}"),
                       code=2).split())
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert (f"these results of task {task!r} were run with another prompt than the session's "
            f"earlier results of it (lm-eval's task config differs in doc_to_text)") in out, out
    with Session.open(db) as s:
        assert s.labels() == before
    run("import", db, round_of("r3", lines[1:], "Q: {{question}}\nA:"))
    with Session.open(db) as s:
        assert len(s.labels()) == len(lines)


@slow
def test_results_of_another_filter_are_not_labels(lmeval_files: HarnessFiles,
                                                   pool_run: list[Path], tmp_path: Path) -> None:
    """A session reads one lm-eval filter: with several in the results it asks which,
    and given one (``lm-eval?filter=NAME``) it reads that filter's results only, however
    the other filters judged the items (mutation check: reading every filter passed)."""
    db = tmp_path / "eval.db"
    run("init", db, "--pool", pool_run[0].parent / "samples_*.jsonl", "--task", "answers",
        "--target", "lm-eval?filter=none", "--surrogate", "pool-run", "--seed", 4,
        "--no-progress")
    mapping = emit(db, 6, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    files = subset_of(full, mapping, tmp_path / "sub")
    want = {}
    for f in files:  # each record again under another filter, judged the other way
        recs = [json.loads(ln) for ln in f.read_text().splitlines()]
        for r in recs:
            task = f.name.removeprefix("samples_").rsplit("_", 1)[0]
            want[f"{task}/{r['doc_id']}"] = "correct" if r["acc"] == 1.0 else "incorrect"
        other = [{**r, "filter": "other", "acc": 1.0 - r["acc"]} for r in recs]
        f.write_text("\n".join(json.dumps(r) for r in [*recs, *other]) + "\n")
    # a file of another filter only is refused, naming it and both filters (QA: it
    # imported nothing, exit 0, without saying why)
    only = tmp_path / "only" / files[0].name
    only.parent.mkdir()
    theirs = [ln for ln in files[0].read_text().splitlines() if '"filter": "other"' in ln]
    only.write_text("\n".join(theirs) + "\n")
    out = " ".join(run("import", db, only, code=2).split())
    assert (f"its {len(theirs)} record(s) are of other lm-eval filters ({len(theirs)} of "
            f"filter 'other'), none of the session's filter 'none'") in out, out
    assert only.name in out and out.count("error:") == 1
    with Session.open(db) as s:
        assert s.labels() == {}
    out = " ".join(run("import", db, *files).split())
    assert ("skipped 6 record(s) of other lm-eval filters (6 of filter 'other'): the "
            "session reads filter 'none'") in out, out
    with Session.open(db) as s:
        names = s.task.class_names
        assert {k: names[v] for k, v in s.labels().items()} == want
    db2 = new_session(tmp_path / "plain", pool_run, seed=4)
    emit(db2, 6, tmp_path / "samples2.json")
    out = " ".join(run("import", db2, *files, code=2).split())
    assert "several lm-eval filters ['none', 'other']" in out and "?filter=NAME" in out


@slow
def test_a_killed_run_resumes_and_nothing_is_counted_twice(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    db = new_session(tmp_path, pool_run, seed=3)
    mapping = emit(db, 10, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    files = subset_of(full, mapping, tmp_path / "round1")
    # the run was killed: only part of its records reached the files
    partial = tmp_path / "partial"
    partial.mkdir()
    first = files[0]
    lines = first.read_text().splitlines()
    done = len(lines) // 2  # complete records, then one cut off while being written
    (partial / first.name).write_text("\n".join(lines[:done]) + "\n"
                                      + lines[done][: len(lines[done]) // 2])
    out = run("import", db, partial / first.name)
    assert f"imported {done} target run(s)" in out
    assert f"line {done + 1}" in out and "unfinished" in out
    with Session.open(db) as s:
        assert len(s.pending()) == 10 - done
    # the run is simply re-run: --n 0 writes the drawn items still waiting, draws none
    # (QA: "must be a positive integer"; and once the pool was drawn, no way to rewrite)
    out = run("select", db, "--n", 0, "--emit", "lm-eval", "--out", tmp_path / "s0.json")
    waiting = json.loads((tmp_path / "s0.json").read_text())
    with Session.open(db) as s:
        assert s.store.n_acquired() == 10
        assert sorted(f"{t}/{d}" for t, ds in waiting.items() for d in ds) == sorted(
            a.item_id for a in s.pending())
    assert f"wrote the {10 - done} drawn item(s) that still wait for a run" in out
    # the next emission lists what still waits, plus the new draws
    again = emit(db, 4, tmp_path / "samples2.json")
    assert sum(map(len, again.values())) == 10 - done + 4
    files2 = subset_of(full, again, tmp_path / "round2")
    run("import", db, *files)  # the whole first round, again: its first half is not new
    out = run("import", db, *files2)
    with Session.open(db) as s:
        assert len(s.labels()) == 14 and not s.pending()
        r = runs_summary(s)
        assert r is not None and r.target_runs == 14 and r.drawn == 14
        assert len(s.history()) == 14  # one change per item: nothing counted twice
    out = " ".join(run("select", db, "--n", 0, "--emit", "lm-eval", "--out",
                       tmp_path / "none.json", code=2).split())
    assert "no drawn item waits for a run" in out and not (tmp_path / "none.json").exists()
    with Session.open(db) as s:  # the whole pool drawn: --n 0 still writes what waits
        s.select(s.n_items - s.store.n_acquired())
        left = len(s.pending())
    out = " ".join(run("select", db, "--n", 1, "--emit", "lm-eval", "--out",
                       tmp_path / "more.json", code=2).split())
    assert f"--n 0 writes the {left} drawn item(s) still waiting" in out, out
    run("select", db, "--n", 0, "--emit", "lm-eval", "--out", tmp_path / "rest.json")
    rest = json.loads((tmp_path / "rest.json").read_text())
    assert sum(map(len, rest.values())) == left


@slow
def test_the_loop_stops_once_the_anytime_interval_is_narrow_enough(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    db = new_session(tmp_path, pool_run, seed=4)
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    width, rounds, stopped = 0.75, 0, False
    with Session.open(db) as s:
        n_pool = s.n_items
    while not stopped:
        rounds += 1
        mapping = emit(db, 8, tmp_path / f"s{rounds}.json")
        run("import", db, *subset_of(full, mapping, tmp_path / f"r{rounds}"))
        out = run("estimate", db, "--target-width", width)
        stopped = "you may stop now" in out
        with Session.open(db) as s:
            a = s.estimate(n_boot=200, target_width=width).metrics["error_rate"].anytime
            n = len(s.labels())
        assert a is not None and stopped == (a.cs_high - a.cs_low <= width)
    assert 30 <= n < n_pool  # stopped before the pool ran out
    status = run("status", db)
    assert f"target runs spent: {n}" in status and "a projection" in status


@slow
def test_people_are_not_asked_to_judge_an_answer_lm_eval_has_not_given(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """A drawn item of an lm-eval session has no answer until lm-eval runs it: label,
    select --out, the export of unlabelled items and serve refuse (exit 2, one message
    naming the first such item and how its label is made: lm-eval's result), nothing is
    stored; an item whose result was imported still exports (the inspect side:
    tests/session/test_inspect_session.py)."""
    from activetest.session.store import SessionError
    from activetest.web.server import LabelServer

    db = new_session(tmp_path, pool_run, seed=5)
    with Session.open(db) as s:
        drawn = [a.item_id for a in s.select(3)]
    task, doc = drawn[0].rsplit("/", 1)
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    assert "imported 1 target run(s)" in run(
        "import", db, *subset_of(full, {task: [int(doc)]}, tmp_path / "one"))
    first = f"item {drawn[1]!r} (and 1 more) has"
    whole = "the items of a harness session have"
    sheet = tmp_path / "sheet.csv"
    for args, who in ((["label", db], f"label: {first}"),
                      (["label", db, "--n", 5], f"label: {whole}"),
                      (["select", db, "--n", 2, "--out", sheet], f"select --out: {whole}"),
                      (["export", db, "--out", sheet], f"export: {first}")):
        out = " ".join(run(*args, code=2).split())
        said = "no answer from the target yet, so there is nothing for a person to judge"
        assert f"{who} {said}" in out and out.count(said) == 1, (args, out)
        assert "in an lm-eval session (--target lm-eval)" in out and "--samples" in out, out
        assert "ActiveStopping" not in out, out
    assert not sheet.exists()
    with pytest.raises(SessionError, match=r"serve: the items of a harness session have no "
                                           r"answer from the target yet.*--target lm-eval"):
        LabelServer(db, port=0)
    with Session.open(db) as s:  # nothing stored, nothing drawn
        assert list(s.labels()) == [drawn[0]] and s.store.n_acquired() == 3
    out = run("export", db, "--out", tmp_path / "done.csv", "--which", "labelled")
    with (tmp_path / "done.csv").open(newline="", encoding="utf-8") as f:
        assert [r["item_id"] for r in csv.DictReader(f)] == [drawn[0]], out


@slow
def test_a_persons_label_for_an_item_the_target_has_not_run_is_refused_unless_trusted(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: a person's label (``import`` of a sheet, the API) for a drawn item lm-eval had
    not run was taken; ``select --emit lm-eval`` then never wrote that item (it was
    labelled), so the target never ran it and the estimate of its error rate mixed in a
    person's judgment. Now refused (exit 2, nothing stored, naming how many, the item and
    the ways on) unless ``--trust-labels-from-people`` (the API: ``trust_people=True``);
    a person may still correct a result lm-eval gave (``--overwrite``)."""
    from activetest.session.store import SessionError

    db = new_session(tmp_path, pool_run, seed=6)
    text = run("select", db, "--n", 3, "--emit", "lm-eval", "--out", tmp_path / "s.json")
    tasks = text.split("--tasks ")[1].split()[0]
    with Session.open(db) as s:
        drawn = [a.item_id for a in s.acquisitions()]
    sheet = tmp_path / "person.csv"
    sheet.write_text(f"item_id,label\n{drawn[0]},correct\n{drawn[1]},incorrect\n")
    out = " ".join(run("import", db, sheet, code=2).split())
    assert ("2 label(s) from people (csv:person.csv) are for drawn items the target has "
            f"not run: item {drawn[0]!r} (and 1 more)" in out), out
    assert "--trust-labels-from-people" in out and "select --emit lm-eval --n 0" in out, out
    assert out.count("error:") == 1
    with Session.open(db) as s:
        assert s.labels() == {}
        with pytest.raises(SessionError, match="trust_people=True"):
            s.add_label(drawn[2], "correct")
        assert s.labels() == {} and s.n_pending() == 3
    # so the target runs all three (lm-eval's command line, the --samples file as written)
    got = lm_eval(lmeval_files, tmp_path / "out", tasks, "--samples", str(tmp_path / "s.json"))
    # a sheet's flag given to lm-eval's results: said, not accepted and ignored (QA)
    out = " ".join(run("import", db, *got, "--ids-are-positions", code=2).split())
    assert "--ids-are-positions is about label sheets" in out and out.count("error:") == 1
    assert "imported 3 target run(s)" in run("import", db, *got)
    full = full_results(lmeval_files)
    # a person's correction of a result lm-eval gave: the item was run, so no trust asked
    flipped = "incorrect" if full[drawn[0]] == 1.0 else "correct"
    sheet.write_text(f"item_id,label\n{drawn[0]},{flipped}\n")
    assert "changed 1" in run("import", db, sheet, "--overwrite")
    # a new draw labelled by a person on trust: taken, counted as a person's, not emitted
    emit(db, 1, tmp_path / "s2.json")
    with Session.open(db) as s:
        new = s.pending()[0].item_id
    sheet.write_text(f"item_id,label\n{new},correct\n")
    run("import", db, sheet, code=2)
    out = run("import", db, sheet, "--trust-labels-from-people")
    assert "imported 1 new label(s)" in out and "0 selected item(s) still pending" in out
    with Session.open(db) as s:
        r = runs_summary(s)
        assert r is not None and (r.target_runs, r.person_labels) == (2, 2)
        assert s.store.labels()[s.store.index_of(new)].source == "csv:person.csv"
    out = run("import", db, *got, "--trust-labels-from-people", code=2)
    assert "lm-eval's results are the target's own" in out


def test_samples_json_is_sorted_and_unique() -> None:
    assert samples_json([("b", 5), ("a", 3), ("b", 1), ("b", 5)]) == {"a": [3], "b": [1, 5]}


@pytest.mark.parametrize(("p", "N", "width", "budget", "analytic_off"),
                         [(0.3, 1500, 0.1, None, False), (0.3, 1500, 0.15, 400, True),
                          (0.3, 1500, 0.12, 400, True), (0.886, 300, 0.2938, 60, True)])
def test_uniform_projection_matches_simulated_uniform_stops(p: float, N: int, width: float,
                                                            budget: int | None,
                                                            analytic_off: bool) -> None:
    """The projection is what uniform sampling with the session's own CS (Hall's skewness
    correction, clipped to [0, 1]; the normal mixture, or tuned to the planned budget as
    new sessions' CSs are) needs: against the median stop of 200 seeded uniform runs
    simulated here (whole permutations, another stream than the projection's), within 3
    Monte Carlo SEs of the difference of the two medians (bootstrap over each's runs).
    The deterministic projection from p (1 - p) that `status` printed until 2026-12-04 is
    measurably off (beyond 3 SEs) where marked: 7-10% high near a planned budget (the tuned CS is
    flat there and random runs cross it early) and, for skewed results (p = 0.886, the
    README's inspect recipe), 37% low (33 runs against 52: it had no skewness correction,
    while the session's CS has)."""
    from activetest.session.harness_runs import _analytic_runs
    from activetest.stats.confseq import asymptotic_cs
    from activetest.stats.estimators import adaptive_lure_theta

    R = 200
    rng = np.random.default_rng(7)
    losses = (np.arange(N) < round(p * N)).astype(float)
    L = rng.permuted(np.broadcast_to(losses, (R, N)), axis=1)
    th = adaptive_lure_theta(L, np.broadcast_to(1.0 / (N - np.arange(N)), L.shape), N)
    cs = asymptotic_cs(th, N, value_range=(0.0, 1.0), budget=budget)
    ok = (cs.high - cs.low <= width) & (np.arange(1, N + 1) >= 30)
    assert ok.any(axis=1).all()
    s = ok.argmax(axis=1) + 1.0
    med = float(np.median(s))
    boot = np.random.default_rng(1).integers(0, R, (2000, R))
    se = float(np.median(s[boot], axis=1).std(ddof=1))
    se_proj = se * np.sqrt(R / 100)  # the projection's median is of 100 runs
    proj = uniform_runs_for_width(p, N, width, budget=budget)
    tol = 3 * np.hypot(se, se_proj)
    assert abs(proj - med) <= tol, (proj, med, se)
    assert uniform_runs_for_width(p, N, width, budget=budget) == proj  # seeded
    S2 = p * (1 - p) * N / (N - 1)
    old = _analytic_runs(S2, N, width, 0.05, budget)
    assert (abs(old - med) > tol) == analytic_off, (old, med, tol)  # beyond 3 SEs


def test_uniform_runs_projection_with_no_error_seen_yet_is_not_thirty() -> None:
    """A session whose labels show no error (estimate 0) or no success (1) has seen no
    spread, not none: the projection of uniform sampling's runs gives the pool Laplace's
    rate (labels p + 1) / (labels + 2) instead of saying "about 30 runs" whatever the
    width; without a label count it keeps the old answer."""
    N, width = 2000, 0.1
    assert uniform_runs_for_width(0.0, N, width, budget=400) == 30
    for p, labels in ((0.0, 40), (1.0, 40), (0.0, 100)):
        got = uniform_runs_for_width(p, N, width, budget=400, labels=labels)
        rate = (labels * p + 1) / (labels + 2)
        assert got == uniform_runs_for_width(rate, N, width, budget=400)
        assert got > 60, (p, labels, got)
    # fewer runs for a narrower pseudo-rate: more labels without an error
    assert (uniform_runs_for_width(0.0, N, width, budget=400, labels=100)
            < uniform_runs_for_width(0.0, N, width, budget=400, labels=40))


def test_a_pool_run_without_answer_keys_or_with_another_metric_is_refused(
        lmeval_files: HarnessFiles, tmp_path: Path) -> None:
    """A pool run on an unlabelled split (gold -1: lm-eval scores every item 0) made a
    session whose imports gave an error rate of 1.0, said nowhere; a metric the pool
    run does not have was refused only at import, after the target had run (QA). Both
    are refused at ``init``, nothing created."""
    db = tmp_path / "x.db"
    base = ("--task", "answers", "--surrogate", "pool-run", "--no-progress")
    out = run("init", db, "--pool", lmeval_files.samples("at_sst2_unl"), "--target", "lm-eval",
              *base, code=2)
    assert "has no answer key (gold -1" in out and out.count("error:") == 1
    mi = lmeval_files.samples("at_sst2_mi")
    out = run("init", db, "--pool", mi, "--target", "lm-eval?metric=nope", *base, code=2)
    assert "no metric 'nope'" in out and "acc_mutual_info" in out
    assert not db.exists()
    out = run("init", db, "--pool", mi, "--target", "lm-eval?metric=acc_mutual_info", *base)
    # the next step draws for lm-eval's --samples (QA: a bare `select`)
    assert f"next: activetest select {db} --n 10 --emit lm-eval --out samples.json" in out
    out = " ".join(run("estimate", db, code=2).split())  # nothing ran: lm-eval, not labels
    assert f"no labels yet: draw items for lm-eval (`activetest select {db} --n 10 --emit " \
           f"lm-eval --out samples.json`)" in out, out


@slow
def test_a_conflict_names_the_new_file_by_its_path_and_the_stored_one_as_earlier(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: importing a re-run's ``samples_X.jsonl`` (another folder, the same file name
    as lm-eval gives every run) whose result differs from the stored one named both sides
    ``samples_X.jsonl``. The new file is named by its path as given, with its line; the
    stored label's source, which keeps the file's name only, is said to be an earlier
    import of a file of that name."""
    db = new_session(tmp_path, pool_run)
    mapping = emit(db, 4, tmp_path / "samples.json")
    got = lm_eval(lmeval_files, tmp_path / "out", ",".join(mapping), "--samples",
                  str(tmp_path / "samples.json"))
    run("import", db, *got)
    src = got[0]
    redo = tmp_path / "rerun" / src.parent.name
    redo.mkdir(parents=True)
    recs = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    other_result(recs[0])
    (redo / src.name).write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = " ".join(run("import", db, redo / src.name, code=2).split())
    assert out.count("error:") == 1, out
    assert (f"{redo / src.name}: line 1: item " in out and f"(from lm-eval:{src.name}: an "
            f"earlier import of a file named {src.name}; the session keeps the file's name, "
            f"not its folder); this gives" in out), out
    run("import", db, redo / src.name, "--overwrite")


@slow
def test_a_round_run_with_another_number_of_shots_is_refused(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """The target is a model and its prompt. QA: the README's loop runs the target 3-shot;
    a round run by mistake with lm-eval's default 0 shots was imported beside the 3-shot
    rounds without a word, one estimate of two prompts. lm-eval's ``n-shot`` (its
    ``results_<date>.json``) is kept with the first round's results; a round with another
    is refused, one message, nothing stored; the same round run as the first was is
    imported."""
    db = new_session(tmp_path, pool_run, seed=4)
    first = emit(db, 4, tmp_path / "s1.json")
    got = lm_eval(lmeval_files, tmp_path / "r1", ",".join(first), "--samples",
                  str(tmp_path / "s1.json"), "--num_fewshot", "1")
    run("import", db, *got)
    with Session.open(db) as s:
        before = s.labels()
    second = emit(db, 4, tmp_path / "s2.json")
    # the round run by mistake with 0 shots, and again as the first was (one lm-eval process)
    zero, again = run_lm_evals(lmeval_files, [
        (tmp_path / "r2", ",".join(second), "--samples", tmp_path / "s2.json"),
        (tmp_path / "r2b", ",".join(second), "--samples", tmp_path / "s2.json",
         "--num_fewshot", "1")])
    out = " ".join(run("import", db, *zero, code=2).split())
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert "were run with 0 in-context example(s) (lm-eval's n-shot)" in out, out
    assert "earlier results of it with 1: one estimate cannot mix two prompts" in out, out
    assert "--num_fewshot 1" in out, out
    with Session.open(db) as s:
        assert s.labels() == before and len(s.pending()) == 4
    run("import", db, *again)
    with Session.open(db) as s:
        assert len(s.labels()) == 8 and not s.pending()


def test_a_file_that_is_no_lm_eval_results_is_said_to_be_so(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: the task's own data file (``text``, ``label``: what lm-eval read, not what it
    wrote) given to ``import`` of an lm-eval session was refused as a labels sheet only,
    "no column 'item_id'", not said to be no lm-eval results file; one message, exit 2,
    nothing stored."""
    db = new_session(tmp_path, pool_run)
    emit(db, 4, tmp_path / "samples.json")
    data = tmp_path / "reviews.jsonl"
    docs = json.loads((lmeval_files.root / "docs.json").read_text())  # the task's data
    data.write_text("".join(json.dumps({"text": d["sentence"], "label": d["label"]}) + "\n"
                            for d in docs[:5]))
    out = " ".join(run("import", db, data, code=2).split())
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert "no column 'item_id'" in out and "this session's target runs in lm-eval" in out
    assert "samples_<task>_<date>.jsonl" in out and "which reviews.jsonl is not" in out, out
    with Session.open(db) as s:
        assert not s.labels()
    # a folder with --format: said to be read without it (QA: "cannot tell the format
    # from the suffix ''" for a folder)
    out = " ".join(run("import", db, tmp_path, "--format", "csv", code=2).split())
    assert out.count("error:") == 1 and f"{tmp_path} is a folder" in out, out
    assert "a folder of its samples files" in out and "is read without --format" in out
    with Session.open(db) as s:
        assert not s.labels()


def test_a_round_a_killed_run_never_wrote_is_said_to_be_missing(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: lm_eval writes its samples files (and their folder) only when its run ends, so
    a round killed half way leaves nothing, and the README's `import eval.db
    round2/*/samples_*.jsonl` passes the pattern on as it is: that was "label file not
    found" (this session reads no label file), and the round's folder "cannot tell the
    format from the suffix ''". Now: the path does not exist, why, and how to re-run the
    round; exit 2, one message, nothing stored."""
    db = new_session(tmp_path, pool_run)
    emit(db, 4, tmp_path / "samples.json")
    for missing in (tmp_path / "round2" / "*" / "samples_*.jsonl", tmp_path / "round2"):
        out = " ".join(run("import", db, missing, code=2).split())
        assert out.count("error:") == 1 and "Traceback" not in out, out
        assert f"{missing}: no such file or folder" in out, out
        assert ("no file matches this pattern" in out) == ("*" in str(missing)), out
        assert "only when its run ends" in out and "--n 0 --emit lm-eval" in out, out
        assert "label file" not in out and "suffix" not in out, out
    with Session.open(db) as s:
        assert not s.labels() and len(s.pending()) == 4


def _named(files: list[Path], model: str) -> list[Path]:
    """Write lm-eval's ``results_<date>.json`` beside the samples files, naming ``model``
    (``pretrained=`` a local path, as lm-eval writes a local checkpoint's run)."""
    for f in files:
        date = f.stem.rsplit("_", 1)[1]
        f.with_name(f"results_{date}.json").write_text(json.dumps(
            {"model_name": model, "config": {"model": "hf",
                                             "model_args": f"pretrained={model}"}}))
    return files


@slow
def test_two_local_checkpoints_of_one_last_name_are_two_targets(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: rounds of ``pretrained=/a/checkpoint-1000`` and ``/b/checkpoint-1000`` were both
    of ``checkpoint-1000`` and imported as one target's, two models mixed in one estimate.
    A round of another local path of the same last name is refused, naming both, nothing
    stored (within one import too); the same folder mounted elsewhere is the same model;
    the session keeps digests of the path, never the path."""
    db = new_session(tmp_path, pool_run, seed=7)
    mapping = emit(db, 8, tmp_path / "samples.json")
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]
    a = _named(subset_of(full, mapping, tmp_path / "a"), "/runs/a/checkpoint-1000")
    b = _named(subset_of(full, mapping, tmp_path / "b"), "/runs/b/checkpoint-1000")
    mounted = _named(subset_of(full, mapping, tmp_path / "m"), "/data/runs/a/checkpoint-1000")
    assert len(a) >= 2
    out = " ".join(run("import", db, a[0], *b[1:], code=2).split())
    assert "of 2 models" in out and "/runs/a/checkpoint-1000" in out \
        and "/runs/b/checkpoint-1000" in out, out
    run("import", db, *a[:1])
    with Session.open(db) as s:
        before = s.labels()
    out = " ".join(run("import", db, *b[1:], code=2).split())
    assert out.count("error:") == 1 and "Traceback" not in out, out
    assert ("these results are of checkpoint-1000 at the local path /runs/b/checkpoint-1000 "
            "(lm-eval); the session's earlier results are of a checkpoint-1000 at another "
            "local path") in out, out
    with Session.open(db) as s:
        assert s.labels() == before
    run("import", db, *mounted[1:])  # /data/runs/a/...: /runs/a/... mounted elsewhere
    with Session.open(db) as s:
        assert len(s.labels()) == 8 and not s.pending()
        target = s.session_config.answer_files["target"]
    assert target["model"] == "checkpoint-1000" and "/runs" not in json.dumps(target)
    assert len(target["model_path"]) == 3  # digests of checkpoint-1000, a/..., runs/a/...


@slow
def test_a_history_run_of_another_local_path_of_the_targets_last_name_is_not_its_own(
        lmeval_files: HarnessFiles, pool_run: list[Path], tmp_path: Path) -> None:
    """QA: the history's only ``/b/checkpoint-1000`` (its row ``checkpoint-1000``) was said
    to be a run of the target ``/a/checkpoint-1000``'s own model at import and status. It
    is another model by the house's identity: nothing is said; a run of the target's own
    path is said as before; a row of the public name ``checkpoint-1000`` cannot be told
    from the target's local model, and is said as such."""
    full = [lmeval_files.samples("at_sst2_rev"), *sorted(lmeval_files.run.glob(
        "samples_at_mmlu_*.jsonl"))]

    def session(k: int, history_model: str, target_model: str) -> tuple[str, str]:
        d = tmp_path / f"s{k}"
        hist = d / "hist" / "h"
        hist.mkdir(parents=True)
        for f in full:
            shutil.copy(f, hist / f.name)
        _named(sorted(hist.glob("samples_*.jsonl")), history_model)
        db = d / "eval.db"
        run("init", db, "--pool", pool_run[0].parent / "samples_*.jsonl", "--task",
            "answers", "--target", "lm-eval", "--surrogate", "pool-run", "--seed", 3,
            "--history", d / "hist", "--no-progress")
        mapping = emit(db, 6, d / "samples.json")
        got = _named(subset_of(full, mapping, d / "round"), target_model)
        return (" ".join(run("import", db, *got).split()),
                " ".join(run("status", db).split()))

    for said in session(0, "/runs/b/checkpoint-1000", "/runs/a/checkpoint-1000"):
        assert "own model" not in said and "cannot be told" not in said, said
    for said in session(1, "/runs/b/checkpoint-1000", "/data/runs/b/checkpoint-1000"):
        assert "the history holds a run of the target's own model ('checkpoint-1000')" \
            in said, said
    for said in session(2, "checkpoint-1000", "/runs/a/checkpoint-1000"):
        assert ("history row 'checkpoint-1000' has the name of the target's model, and "
                "whether it is the same model cannot be told (the row is of a model of that "
                "public name, the target's results of a model at a local path of that last "
                "name)") in said, said
