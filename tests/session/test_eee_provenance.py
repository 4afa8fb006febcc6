"""Who answered, in ``estimate --format eee`` records: the log's model, never a local path.

Sessions over answer logs written by the real tools (lm-eval's command line run
live with a model whose name is a local path, as a local model's is; the
committed inspect_ai and Every Eval Ever files, copied under a temporary folder)
keep each file's provenance, and their records name the model as the log does,
with its n-shot, validated against the vendored Every Eval Ever 0.3.0 schema.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from session_support import REPO, SRC, PoolFiles
from tests.history_logs import history_logs  # noqa: F401  (a fixture)

from activetest.models.answer_files import read_answers
from activetest.session.eee import check_eee_aggregate
from activetest.session.eee_report import public_spec, target_identity
from activetest.session.workflow import Session

DATA = REPO / "tests" / "models" / "data" / "answers"
SCHEMA = json.loads((Path(__file__).parent / "data" / "eee" / "eval.schema.json")
                    .read_text(encoding="utf-8"))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(REPO), env.get("PYTHONPATH", "")])
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", NO_COLOR="1")
    return env


def cli(*args: object, code: int = 0) -> str:
    proc = subprocess.run([sys.executable, "-m", "activetest", *map(str, args)],
                          env=_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == code, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    return proc.stdout + proc.stderr


def _schema_ok(record: dict[str, Any]) -> None:
    assert check_eee_aggregate(record) == []
    jsonschema = pytest.importorskip("jsonschema")
    errors = [e.message for e in jsonschema.Draft7Validator(SCHEMA).iter_errors(record)]
    assert errors == []


def _no_local_path(text: str, *paths: Path) -> None:
    """No path (nor any folder of it below the root) of ``paths`` occurs in ``text``."""
    for p in paths:
        for part in [p, *p.parents]:
            if len(part.parts) > 2:  # '/tmp' alone is not a fragment worth refusing
                assert str(part) not in text, f"{part} is written into the record"
    assert "/tmp/" not in text and str(REPO) not in text


def _labelled_session(db: Path, log: Path, query: str, surrogate: str = "uniform") -> None:
    cli("init", db, "--task", "answers", "--pool", log, "--target", f"answers:{log}{query}",
        "--surrogate", surrogate, "--seed", "3", "--no-progress")
    with Session.open(db) as s:
        s.select(s.n_items)
        s.label_from_data()


def _records(db: Path, *args: str) -> tuple[list[dict[str, Any]], str]:
    text = cli("estimate", db, "--format", "eee", "--no-progress", *args)
    out = json.loads(text)
    return (out if isinstance(out, list) else [out]), text


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="lm-eval not installed")
def test_an_lmeval_log_of_a_local_model_names_it_without_its_path(tmp_path: Path) -> None:
    model_dir = tmp_path / "my models" / "SmolLM2-135M-local"
    model_dir.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "tests.models.answer_writers", "lmeval",
                           str(tmp_path / "run"), "--pretrained", str(model_dir)],
                          cwd=REPO, env=_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = Path([x for x in proc.stdout.splitlines() if x.startswith("WROTE ")][-1][6:])
    side = json.loads(next(log.parent.glob("results_*.json")).read_text())
    assert side["model_name"] == str(model_dir)  # lm-eval recorded the local path
    db = tmp_path / "s.db"
    _labelled_session(db, log, "?filter=none")
    with Session.open(db) as s:
        prov = s.config["answer_files"]["target"]
    assert prov["model"] == "SmolLM2-135M-local" and prov["n_shot"] == 1
    assert prov["format"] == "lmeval" and prov["file"] == log.name
    assert prov["score_name"] == "exact_match" and len(prov["sha256"]) == 64
    assert prov["tool"].startswith("lm-eval ")
    _no_local_path(json.dumps(prov), log, model_dir)
    records, text = _records(db)
    for rec in records:
        _schema_ok(rec)
        mi = rec["model_info"]
        assert (mi["name"], mi["id"], mi["developer"]) == ("SmolLM2-135M-local",) * 2 + (
            "unknown",)
        gc = rec["evaluation_results"][0]["generation_config"]
        assert gc["additional_details"]["num_fewshot"] == "1"
        details = rec["evaluation_results"][0]["score_details"]["details"]
        assert details["answers_file"] == log.name and details["answers_format"] == "lmeval"
    assert "answers:" not in text
    _no_local_path(text, log, model_dir)


def test_an_eee_conversion_names_the_model_and_n_shot_it_states(tmp_path: Path) -> None:
    src = next((DATA / "eee" / "data" / "toyqa" / "HuggingFaceTB").glob("*/*_samples.jsonl"))
    copy = tmp_path / "deep" / "folder" / src.parent.name
    shutil.copytree(src.parent, copy)
    log = copy / src.name
    db = tmp_path / "s.db"
    _labelled_session(db, log, "?evaluation=exact_match", surrogate="score")
    records, text = _records(db)
    for rec in records:
        _schema_ok(rec)
        mi = rec["model_info"]
        assert (mi["name"], mi["id"], mi["developer"]) == (
            "HuggingFaceTB/SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct",
            "HuggingFaceTB")
        res = rec["evaluation_results"][0]
        assert res["generation_config"]["additional_details"]["num_fewshot"] == "1"
        assert res["score_details"]["details"]["surrogate"] == "score"
        assert rec["evaluation_id"].split("/")[1:3] == ["HuggingFaceTB",
                                                       "SmolLM2-135M-Instruct"]
    _no_local_path(text, log, tmp_path)
    # an explicit --model-id still wins, with its own org as the developer
    records, _ = _records(db, "--model-id", "acme/renamed")
    assert records[0]["model_info"]["id"] == "acme/renamed"
    assert records[0]["model_info"]["developer"] == "acme"


def test_an_inspect_log_and_its_comparison_keep_their_provenance(tmp_path: Path) -> None:
    pytest.importorskip("zstandard")
    src = next((DATA / "inspect").glob("*.eval"))
    log = tmp_path / "logs" / src.name
    log.parent.mkdir()
    shutil.copy(src, log)
    other = tmp_path / "other.jsonl"  # a second target's answers, as a plain table
    db = tmp_path / "s.db"
    af = read_answers(log)
    other.write_text("".join(json.dumps({"id": r.item_id, "answer": r.answer.upper()}) + "\n"
                             for r in af))
    cli("init", db, "--task", "answers", "--pool", log, "--target", f"answers:{log}",
        "--compare", f"answers:{other}", "--surrogate", "uniform", "--no-progress")
    with Session.open(db) as s:
        files = s.config["answer_files"]
        s.select(s.n_items)
        s.label_from_data()
    assert files["target"]["model"] == "llama-cpp-python/smollm2-135m"
    assert files["target"]["format"] == "inspect" and files["target"]["n_shot"] is None
    (role,) = [k for k in files if k != "target"]
    assert files[role]["format"] == "jsonl" and files[role]["model"] is None
    assert files[role]["file"] == "other.jsonl"
    _no_local_path(json.dumps(list(files.values())), log, other)  # (keys: the roles)
    records, text = _records(db)
    for rec in records:
        _schema_ok(rec)
        mi = rec["model_info"]
        assert (mi["name"], mi["developer"]) == ("llama-cpp-python/smollm2-135m",
                                                 "llama-cpp-python")
        assert "generation_config" not in rec["evaluation_results"][0]  # n-shot not stated
        # the log's task, not the built-in 'answers' (QA: every harness session's
        # records named their dataset 'answers')
        assert rec["evaluation_results"][0]["source_data"]["dataset_name"] == "toyqa"
        assert rec["evaluation_id"].startswith("toyqa/")
    _no_local_path(text, log, other)


@pytest.mark.parametrize(("config", "name"), [
    ({"harness": {"tool": "lm-eval", "tasks": ["reviews"]},
      "answer_files": {"target": {"tool": "lm-eval", "model": "m"}}}, "reviews"),
    ({"harness": {"tool": "lm-eval", "tasks": ["mmlu_b", "mmlu_a"]}}, "mmlu_a, mmlu_b"),
    ({"harness": {"tool": "inspect"},
      "answer_files": {"target": {"tool": "inspect", "tasks": ["arith"]}}}, "arith"),
    ({"answer_files": {"target": {"format": "inspect", "task": "toyqa"}}}, "toyqa"),
    ({"answer_files": {"target": {"format": "jsonl", "task": None}}}, "answers"),
    ({}, "answers"),
])
def test_the_dataset_is_named_by_the_harness_task(config: dict[str, Any], name: str) -> None:
    """An EEE record names the benchmark the harness ran (lm-eval's tasks, the inspect
    tasks, an answer log's task), not activetest's built-in ``answers`` task."""
    from activetest.session.eee_report import dataset_name

    assert dataset_name("answers", config) == name


def test_a_prediction_tables_model_is_unknown_and_its_file_is_named(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """A ``table:`` target: the model is not known from a table (QA: the record named the
    file, with its ``?kind=...`` options, as the model); the file is named in the
    details (its name only, never the path)."""
    db = tmp_path / "c.db"
    cli("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--seed", "1", "--no-progress", "--metric", "both")
    with Session.open(db) as s:
        s.select(8)  # 3 errors: the error rate's exact CS stands in
        s.label_from_data()
    records, text = _records(db)
    exact = 0
    for rec in records:
        _schema_ok(rec)
        assert rec["model_info"]["name"] == "unknown"
        assert rec["model_info"]["developer"] == "unknown"
        assert pool_files.target.name in json.dumps(rec) and str(tmp_path) not in json.dumps(rec)
        # a table's in-context examples are whatever made it, not --shots: not stated
        assert "generation_config" not in rec["evaluation_results"][0]
        res = rec["evaluation_results"][0]["score_details"]
        with Session.open(db) as s:
            a = s.estimate(record=False, progress=False).metrics[
                rec["evaluation_results"][0]["metric_config"]["metric_id"]].anytime
        method = res["uncertainty"]["confidence_interval"]["method"]
        # the interval is named by what it is: the exact CS where it stands in (the
        # few-errors rule), and no anytime CS before 30 labels but the exact one
        assert method.startswith("exact anytime 95% confidence sequence") == (
            a.basis == "exact"), method
        assert ("anytime_method" in res["details"]) == (a.basis == "exact")
        # no CLT standard error beside the exact CS (QA: 0.0 beside [0, 0.87])
        assert ("standard_error" in res["uncertainty"]) == (a.basis != "exact")
        ci = res["uncertainty"]["confidence_interval"]
        for x in (ci["lower"], ci["upper"]):  # 12 digits (QA: 0.049999999999000004)
            assert x == float(f"{x:.12g}"), x
        exact += a.basis == "exact"
    assert exact == 1  # the error rate's (few errors in 10 labels), not the log loss's
    _no_local_path(text, pool_files.target, pool_files.surrogate)
    # the estimate is named by its method: the default adaptive design's own (QA: the
    # record credited it to the paper's LURE), the paper's LURE for CE; the standard error
    # by the martingale CLT it comes from
    from activetest.session.eee_report import ADAPTIVE_METHOD, METHOD, SE_METHOD

    with Session.open(db) as s:
        assert s.config["acquisition"] == "adaptive"
    for rec in records:
        res = rec["evaluation_results"][0]["score_details"]
        assert res["details"]["estimator"] == ADAPTIVE_METHOD, res["details"]
        se = res["uncertainty"].get("standard_error")
        assert se is None or se["method"] == SE_METHOD
    ce = tmp_path / "ce.db"
    cli("init", ce, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--seed", "1", "--no-progress", "--acquisition", "ce")
    with Session.open(ce) as s:
        s.select(8)
        s.label_from_data()
    (rec, *_), _ = _records(ce)
    assert rec["evaluation_results"][0]["score_details"]["details"]["estimator"] == METHOD


@pytest.mark.parametrize(("config", "name", "developer"), [
    ({"target": "smollm2-135m", "target_shots": 3}, "smollm2-135m", "unknown"),
    ({"target": "llamacpp:/home/me/models/qwen.gguf"}, "qwen.gguf", "unknown"),
    ({"target": "hf:HuggingFaceTB/SmolLM2-135M"}, "HuggingFaceTB/SmolLM2-135M",
     "HuggingFaceTB"),
    ({"target": "openai:http://127.0.0.1:8080/v1#meta-llama/Llama-3.1-8B"},
     "meta-llama/Llama-3.1-8B", "meta-llama"),
    ({"target": "openai:http://127.0.0.1:8080/v1"}, "unknown", "unknown"),
    ({"target": "answers:/home/me/runs/log.eval"}, "unknown", "unknown"),  # an old session
    ({"target": "answers:/x/log.eval", "answer_files": {"target": {
        "model": "/home/me/ckpt/final", "file": "log.eval"}}}, "final", "unknown"),
    ({"target": "pool"}, "unknown", "unknown"),
])
def test_target_identity(config: dict[str, Any], name: str, developer: str) -> None:
    who = target_identity(config["target"], answer_files=config.get("answer_files"),
                          target_shots=config.get("target_shots"))
    assert (who["name"], who["id"], who["developer"]) == (name, name, developer)
    assert "/home/" not in json.dumps(who)
    assert who["n_shot"] == (3 if config.get("target_shots") == 3 else None)


def test_public_spec_keeps_ids_and_urls_and_drops_local_folders() -> None:
    assert public_spec("answers:/home/me/run/s.jsonl?filter=none") == "answers:s.jsonl?filter=none"
    assert public_spec("answers:rel/dir/x.jsonl") == "answers:x.jsonl"
    assert public_spec("agree:llamacpp:/models/x.gguf") == "agree:llamacpp:x.gguf"
    assert public_spec("adaptive+agree:C:\\m\\x.gguf") == "adaptive+agree:x.gguf"
    assert public_spec("agree:hf:org/model") == "agree:hf:org/model"
    assert public_spec("judge:openai:http://h:1/v1#org/m") == "judge:openai:http://h:1/v1#org/m"
    assert public_spec("column:p_correct") == "column:p_correct"


def test_an_lmeval_samples_table_target_is_named_by_its_results_file(tmp_path: Path) -> None:
    """``table:samples_<task>_<date>.jsonl``: the model is the one lm-eval's
    ``results_<date>.json`` beside it names (QA: the samples file's name was the model);
    the options after ``?`` never reach the record."""
    from activetest.session.eee_report import target_identity

    date = "2026-01-02T03-04-05.678901"
    samples = tmp_path / f"samples_sst2_{date}.jsonl"
    samples.write_text("", encoding="utf-8")
    (tmp_path / f"results_{date}.json").write_text(json.dumps(
        {"model_name": "org/new-model", "config": {"model": "hf"}}), encoding="utf-8")
    who = target_identity(f"table:{samples}?filter=none")
    assert who["name"] == "org/new-model" and who["developer"] == "org"
    assert who["details"]["predictions_file"] == samples.name
    plain = target_identity(f"table:{tmp_path / 'preds.csv'}?kind=logits")
    assert plain["name"] == "unknown" and plain["details"]["predictions_file"] == "preds.csv"


def test_one_label_gives_no_standard_error(pool_files: PoolFiles, tmp_path: Path) -> None:
    """One label has no spread to estimate: no standard error in the record (QA: its
    bootstrap's 1e-17 was given, its method named by the estimator), the bootstrap
    interval named as what it is."""
    db = tmp_path / "one.db"
    cli("init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--seed", "1", "--no-progress", "--metric", "both")
    with Session.open(db) as s:
        s.select(1)
        s.label_from_data()
    records, _ = _records(db)
    assert len(records) == 2
    for rec in records:
        unc = rec["evaluation_results"][0]["score_details"]["uncertainty"]
        assert "standard_error" not in unc, unc
        assert unc["confidence_interval"]["method"].startswith("bootstrap 95% interval")


def _quantised(src: Path, folder: Path, gguf: str) -> Path:
    """A copy of a real lm-eval samples file whose results file says the run was of
    ``pretrained=<dir>/smollm2,gguf_file=<dir>/smollm2/<gguf>`` (as the README's loop
    runs a llama.cpp model: lm-eval names both quantisations ``smollm2``)."""
    folder.mkdir(parents=True)
    shutil.copy(src, folder / src.name)
    date = src.stem.rsplit("_", 1)[1]
    side = json.loads(next(src.parent.glob("results_*.json")).read_text())
    side["model_name"] = str(folder / "smollm2")
    side["config"]["model_args"] = f"pretrained={folder}/smollm2,gguf_file={folder}/smollm2/{gguf}"
    (folder / f"results_{date}.json").write_text(json.dumps(side))
    return folder / src.name


def test_two_quantisations_of_one_model_are_two_models_in_eee_records(
        history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    """``estimate --format eee`` names the model with the weights file it ran (lm-eval's
    ``gguf_file``, kept as ``import`` keeps it), in ``model_info.id``/``name`` and
    ``additional_details``; read back (the record as an Every Eval Ever instance file's
    aggregate), a history row of each quantisation is its own model (QA: both were
    ``smollm2``)."""
    new = next((history_logs / "new-model").glob("samples_*.jsonl"))
    small = next((history_logs / "small-model").glob("samples_*.jsonl"))
    got = {}
    for gguf in ("A.gguf", "B.gguf"):
        target = _quantised(new, tmp_path / gguf[0], gguf)
        db = tmp_path / f"{gguf[0]}.db"
        cli("init", db, "--task", "sst2", "--pool", target, "--target", f"table:{target}",
            "--surrogate", f"table:{small}", "--metric", "error_rate", "--seed", "1",
            "--no-progress")
        with Session.open(db) as s:
            s.select(12)
            s.label_from_data()
        (rec, *_), text = _records(db)
        _schema_ok(rec)
        _no_local_path(text, target)
        got[gguf] = rec
        mi = rec["model_info"]
        assert (mi["name"], mi["id"], mi["developer"]) == (
            f"smollm2 (gguf_file={gguf})", f"smollm2 (gguf_file={gguf})", "unknown")
        assert mi["additional_details"]["gguf_file"] == gguf
        from activetest.formats.history import read_history_run

        # the lm-eval log as a history row: its own model too
        assert read_history_run(target).model == f"smollm2 (gguf_file={gguf})"
    # read back: each record as the aggregate of an EEE instance file of its model
    eee = next((DATA / "eee" / "data" / "toyqa" / "HuggingFaceTB").glob("*/*_samples.jsonl"))
    recs = [json.loads(line) for line in eee.read_text().splitlines()]
    names = []
    for k, (gguf, rec) in enumerate(got.items()):
        uid = f"00000000-0000-4000-8000-00000000000{k}"
        one = tmp_path / "eee" / gguf[0]
        one.mkdir(parents=True)
        (one / f"{uid}.json").write_text(json.dumps(rec))
        log = one / f"{uid}_samples.jsonl"
        log.write_text("".join(json.dumps({**r, "model_id": "smollm2"}) + "\n" for r in recs
                               if r["evaluation_result_id"] == "exact_match"))
        assert read_answers(log).provenance["model_variant"] == {"gguf_file": gguf}
        from activetest.formats.answers import file_provenance

        assert file_provenance(read_answers(log))["model_variant"] == {"gguf_file": gguf}
        names.append(read_history_run(log).model)
    assert names == ["smollm2 (gguf_file=A.gguf)", "smollm2 (gguf_file=B.gguf)"]


def _table_target_session(history_logs: Path, tmp_path: Path,  # noqa: F811
                          monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A session whose target is a copy of a real lm-eval samples file (its results file
    beside it), named by its name in the session file; 12 labels. This machine's record
    of the session's files is the test's own."""
    from typer.testing import CliRunner

    from activetest.cli import app

    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "cache"))
    new = next((history_logs / "new-model").glob("samples_*.jsonl"))
    small = next((history_logs / "small-model").glob("samples_*.jsonl"))
    runs = tmp_path / "runs"
    runs.mkdir()
    target = runs / new.name
    shutil.copy(new, target)
    for side in new.parent.glob("results_*.json"):
        shutil.copy(side, runs / side.name)
    db = tmp_path / "s" / "s.db"
    db.parent.mkdir()
    res = CliRunner().invoke(app, ["init", str(db), "--task", "sst2", "--pool", str(target),
                                   "--target", f"table:{target}", "--surrogate",
                                   f"table:{small}", "--metric", "error_rate", "--seed", "1",
                                   "--no-progress"])
    assert res.exit_code == 0, res.output
    with Session.open(db) as s:
        assert s.session_config.target == f"table:{target.name}"  # by its name
        s.select(12)
        s.label_from_data()
    return db, target


def _eee(db: Path) -> Any:
    from typer.testing import CliRunner

    from activetest.cli import app

    return CliRunner().invoke(app, ["estimate", str(db), "--format", "eee", "--no-progress"])


def test_an_edited_table_target_is_refused_for_the_eee_record(
        history_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The record names a table target's model from the lm-eval results beside its file;
    that file edited since the session recorded it was passed over without a word (its
    refusal suppressed) and the record written. Now it is refused as every command that
    reads the file refuses it where no stored score checks it (exit 2, naming the file
    and both digests, nothing written); the file restored, the record is written again."""
    from activetest.formats.history import lmeval_model_name
    from activetest.session.source_names import file_sha256

    db, target = _table_target_session(history_logs, tmp_path, monkeypatch)
    res = _eee(db)
    assert res.exit_code == 0, res.output
    named = json.loads(res.output)["model_info"]["name"]
    assert named == lmeval_model_name(target) and named != "unknown"
    kept = target.read_bytes()
    recorded = file_sha256(str(target))
    lines = kept.decode("utf-8").splitlines(keepends=True)
    target.write_text("".join(reversed(lines)), encoding="utf-8")  # the same records, edited
    res = _eee(db)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "{" not in res.output, res.output
    out = " ".join(res.output.split())
    assert "has changed since the session recorded it" in out and str(target) in out, out
    assert recorded in out and file_sha256(str(target)) in out, out
    assert "Every Eval Ever record names the target's model" in out, out
    target.write_bytes(kept)
    res = _eee(db)
    assert res.exit_code == 0 and json.loads(res.output)["model_info"]["name"] == named


def test_a_table_target_not_on_this_machine_is_never_looked_for_where_the_command_runs(
        history_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Where no file of the stored digest is found, the record's model is unknown; the
    stored name was read as a path from the folder the command ran in, so another run's
    file of that name there (another model's results beside it) named the model."""
    db, target = _table_target_session(history_logs, tmp_path, monkeypatch)
    gone = tmp_path / "moved"
    (tmp_path / "runs").rename(gone)  # not where this machine recorded it, nor beside
    here = tmp_path / "here"
    here.mkdir()
    # another run's file of the stored name (other content: not the session's file)
    (here / target.name).write_text((gone / target.name).read_text(encoding="utf-8") + "\n",
                                    encoding="utf-8")
    for side in gone.glob("results_*.json"):
        doc = json.loads(side.read_text(encoding="utf-8"))
        doc["model_name"] = "other-org/another-model"
        doc.get("config", {}).pop("model_args", None)
        (here / side.name).write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.chdir(here)
    res = _eee(db)
    assert res.exit_code == 0, res.output
    info = json.loads(res.output)["model_info"]
    assert info["name"] == "unknown" and "another-model" not in res.output, info
