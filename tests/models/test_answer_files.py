"""Answers read from the files harnesses write: lm-eval samples, inspect_ai logs, EEE, tables.

Every harness file here is written by the harness itself: live runs
(``answer_writers``: inspect_ai with its mock model, lm-eval's command line with
a registered model class, and both answered by the bundled SmolLM2 through
llama.cpp's server) and the committed real-run files in ``data/answers`` (with
the Every Eval Ever converters' output; see its README). Hostile variants are
edits of those real files.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import importlib.util
import json
import os
import random
import subprocess
import sys
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.models.answer_writers import FAILING, ITEMS, answer_for

from activetest.models.answer_files import (
    AnswerFile,
    AnswerRecord,
    JoinItem,
    confirm_join,
    detect_format,
    ids_may_be_positions,
    read_answers,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "answers"
(REAL_EVAL,) = sorted((DATA / "inspect").glob("*.eval"))
(REAL_SAMPLES,) = sorted((DATA / "lmeval").glob("samples_toyqa_*.jsonl"))
(EEE_INSPECT,) = sorted((DATA / "eee" / "data" / "toyqa" / "llama-cpp-python").glob(
    "*/*_samples.jsonl"))
(EEE_LMEVAL,) = sorted((DATA / "eee" / "data" / "toyqa" / "HuggingFaceTB").glob(
    "*/*_samples.jsonl"))
SST2 = Path(__file__).parent / "data" / "samples_sst2_2026-11-30T12-00-00.jsonl"

IDS = [it[0] for it in ITEMS]
REFS = {it[0]: it[3] for it in ITEMS}
QUESTION = {it[0]: it[2] for it in ITEMS}
_HC = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # (a loaded CI machine)


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


needs_inspect = pytest.mark.skipif(not _have("inspect_ai"), reason="inspect-ai not installed")
needs_lmeval = pytest.mark.skipif(not _have("lm_eval"), reason="lm-eval not installed")
#: the committed .eval was written by inspect_ai 0.3.285: zstandard-compressed members
needs_zstd = pytest.mark.skipif(sys.version_info < (3, 14) and not _have("zstandard"),
                                reason="reading zstd .eval members needs zstandard")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT),
                                         env.get("PYTHONPATH", "")])
    env.update(HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", INSPECT_LOG_LEVEL="warning")
    return env


def _write(tool: str, out: Path, *args: str) -> Path:
    """Run a real harness through ``answer_writers``; the path of the file it wrote."""
    proc = subprocess.run([sys.executable, "-m", "tests.models.answer_writers", tool, str(out),
                           *args], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=900)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("WROTE ")]
    if proc.returncode != 0 or not lines:
        raise AssertionError(f"{tool} writer failed ({proc.returncode}):\n"
                             f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return Path(lines[-1][len("WROTE "):])


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=300)


def _dump(f: AnswerFile) -> list[dict[str, Any]]:
    return [asdict(r) for r in f.records]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _put(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def mock_eval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """inspect_ai's own run: mock model, 2 epochs, one failing sample, 4 scorers."""
    if not _have("inspect_ai"):
        pytest.skip("inspect-ai not installed")
    return _write("inspect", tmp_path_factory.mktemp("inspect"), "--epochs", "2")


@pytest.fixture(scope="module")
def lmeval_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm-eval's own command line: a local generate_until task, two filters, three metrics."""
    if not _have("lm_eval"):
        pytest.skip("lm-eval not installed")
    return _write("lmeval", tmp_path_factory.mktemp("lmeval"))


def _smollm2_available() -> bool:
    if not (_have("llama_cpp") and _have("llama_cpp.server")):
        return False
    try:
        from activetest.models.bundled import bundled_model_path
        bundled_model_path("smollm2-135m")
    except Exception:
        return False
    return True


# --------------------------------------------------------------------------- inspect_ai


@needs_inspect
def test_inspect_log_from_a_real_run(mock_eval: Path) -> None:
    f = read_answers(mock_eval, epoch=1, skip_missing=True)
    assert f.format == "inspect" and detect_format(mock_eval) == "inspect"
    assert f.model == "mockllm/model" and f.task == "toyqa"
    assert f.skipped == (FAILING,)
    assert sorted(f.ids) == sorted(i for i in IDS if i != FAILING)
    # the first scorer (answer_length: a count of characters) is no judgment: includes is
    assert f.score_name == "includes"
    assert f.provenance["scorers"] == ["answer_length", "includes", "match", "f1"]
    assert f.provenance["epochs"] == [1, 2] and f.provenance["status"] == "success"
    for r in f.records:
        expected = answer_for(QUESTION[r.item_id])
        assert r.answer == expected
        assert r.references == REFS[r.item_id]
        assert QUESTION[r.item_id] in r.prompt["input"]
        n = len(expected.split(" ")) if expected else 0
        assert r.token_logprobs == tuple(-0.25 * (k + 1) for k in range(n))
        assert r.meta["epoch"] == 1 and r.meta["metadata"]["position"] == IDS.index(r.item_id)
        included = any(ref.lower() in expected.lower() for ref in REFS[r.item_id])
        assert r.score == float(included)
    owl = f.by_id()["q-owl"]  # the chat sample: its system message is in the full prompt
    assert list(owl.prompt) == ["input"] and "You answer" not in owl.prompt["input"]
    assert owl.meta["prompt_text"] == ("system: You answer reading questions.\n\nuser: "
                                       + owl.prompt["input"])


@needs_inspect
def test_inspect_reader_agrees_with_inspect_ai(mock_eval: Path) -> None:
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    to_float = value_to_float()
    log = read_eval_log(str(mock_eval))
    assert log.samples is not None
    for epoch in (1, 2):
        f = read_answers(mock_eval, epoch=epoch, skip_missing=True, score_name="f1")
        ours = f.by_id()
        theirs = {str(s.id): s for s in log.samples if s.epoch == epoch}
        assert set(theirs) == set(ours) | set(f.skipped)
        for sid, r in ours.items():
            s = theirs[sid]
            assert r.answer == s.output.completion.strip()
            assert list(r.references) == (s.target if isinstance(s.target, list)
                                          else [s.target])
            assert s.scores is not None
            assert r.score == pytest.approx(to_float(s.scores["f1"].value))
            assert r.meta["scores"]["match"] == s.scores["match"].value
            assert r.meta["uuid"] == s.uuid
        assert log.eval.model == f.model


@needs_inspect
def test_inspect_epochs_must_be_chosen(mock_eval: Path) -> None:
    with pytest.raises(ValueError, match=r"holds 2 epochs \[1, 2\].*epoch=") as info:
        read_answers(mock_eval, skip_missing=True)
    assert str(mock_eval) in str(info.value)
    with pytest.raises(ValueError, match=r"no samples for epoch 3 \(has \[1, 2\]\)"):
        read_answers(mock_eval, epoch=3)
    two = read_answers(mock_eval, epoch=2, skip_missing=True)
    assert all(r.meta["epoch"] == 2 for r in two.records)


@needs_inspect
def test_inspect_failed_sample_is_a_missing_answer(mock_eval: Path) -> None:
    with pytest.raises(ValueError, match=rf"samples/{FAILING}_epoch_1\.json: item '{FAILING}' "
                                         r"has no answer \(the sample failed: .*refuses"):
        read_answers(mock_eval, epoch=1)
    f = read_answers(mock_eval, epoch=1, skip_missing=True)
    with pytest.raises(ValueError, match=rf"no answer for 1 of 2 .*'{FAILING}'.*skipped"):
        f.align(["q-lake", FAILING])


@needs_inspect
def test_inspect_scorer_choice(mock_eval: Path) -> None:
    f1 = read_answers(mock_eval, epoch=1, skip_missing=True, score_name="f1")
    assert f1.score_name == "f1"
    assert f1.by_id()["q-bread"].score == pytest.approx(2 / 3, abs=0.01)
    match = read_answers(mock_eval, epoch=1, skip_missing=True, score_name="match")
    assert match.by_id()["q-bread"].score == 0.0  # "rye bread and cakes" does not end right
    none = read_answers(mock_eval, epoch=1, skip_missing=True, score_name="")
    assert none.score_name is None and all(r.score is None for r in none.records)
    with pytest.raises(ValueError, match=r"scorer 'answer_length' = 13\.0 is not a judgment"):
        read_answers(mock_eval, epoch=1, skip_missing=True, score_name="answer_length")
    with pytest.raises(ValueError, match=r"no scorer 'judge' \(score_name=\); the file has "
                                         r"\['answer_length', 'includes', 'match', 'f1'\]"):
        read_answers(mock_eval, epoch=1, skip_missing=True, score_name="judge")


@needs_inspect
def test_inspect_reader_needs_no_inspect_ai(mock_eval: Path) -> None:
    code = f"""
import json, sys
from dataclasses import asdict
sys.modules["inspect_ai"] = None  # any import of it fails
from activetest.models.answer_files import read_answers
f = read_answers({str(mock_eval)!r}, epoch=2, skip_missing=True)
assert "inspect_ai" not in [m for m in sys.modules if sys.modules[m] is not None]
print(json.dumps([asdict(r) for r in f.records]))
"""
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    expected = _dump(read_answers(mock_eval, epoch=2, skip_missing=True))
    assert json.loads(proc.stdout.splitlines()[-1]) == json.loads(json.dumps(expected))


@needs_inspect
@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14 reads zstd itself")
def test_zstd_members_without_zstandard_say_so(mock_eval: Path) -> None:
    proc = _python(f"""
import sys
sys.modules["zstandard"] = None
from activetest.models.answer_files import read_answers
try:
    read_answers({str(mock_eval)!r}, epoch=1)
except ValueError as exc:
    print("ERR", exc)
""")
    assert proc.returncode == 0, proc.stderr
    assert "ERR" in proc.stdout and "needs the 'zstandard' package" in proc.stdout
    assert "header.json" in proc.stdout or "samples/" in proc.stdout


def test_zstandard_is_installed_with_activetest() -> None:
    """inspect_ai writes every .eval member with zstandard (method 93); before Python 3.14
    only the zstandard package reads them, so the base install brings it."""
    tomllib = pytest.importorskip("tomllib")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (zstd,) = [d for d in deps if d.split(">")[0].split(";")[0].strip() == "zstandard"]
    assert "python_version < '3.14'" in zstd
    with zipfile.ZipFile(REAL_EVAL) as zf:
        assert {i.compress_type for i in zf.infolist()} == {93}


def _rezip(src: Path, dst: Path, *, reverse: bool = False) -> Path:
    """The same log as older inspect_ai wrote it: DEFLATE members (optionally reordered)."""
    import zipfile_zstd  # noqa: F401  (installed with inspect_ai: lets zipfile read zstd)

    with zipfile.ZipFile(src) as zin:
        members = [(i.filename, zin.read(i)) for i in zin.infolist()]
    if reverse:
        members.reverse()
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for name, data in members:
            zout.writestr(name, data)
    return dst


@needs_inspect
def test_deflate_and_reordered_logs_read_the_same(mock_eval: Path, tmp_path: Path) -> None:
    base = read_answers(mock_eval, epoch=1, skip_missing=True)
    flat = _rezip(mock_eval, tmp_path / "deflate.eval", reverse=True)
    proc = _python(f"""
import json, sys
from dataclasses import asdict
sys.modules["zstandard"] = None; sys.modules["inspect_ai"] = None
from activetest.models.answer_files import read_answers
f = read_answers({str(flat)!r}, epoch=1, skip_missing=True)
print(json.dumps({{r.item_id: asdict(r) for r in f.records}}))
""")
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.splitlines()[-1])
    assert got == json.loads(json.dumps({r.item_id: asdict(r) for r in base.records}))
    assert list(got) != list(base.ids)  # the order follows the file


@needs_inspect
def test_chunked_and_json_logs_read_the_same(mock_eval: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    # inspect's converter to its chunked sample layout is internal: skip where it moved
    chunked_mod = pytest.importorskip("inspect_ai.log._recorders.chunked")
    convert_eval_logs_to_chunked = chunked_mod.convert_eval_logs_to_chunked
    base = read_answers(mock_eval, epoch=2, skip_missing=True).by_id()
    convert_eval_logs_to_chunked(str(mock_eval), str(tmp_path / "chunked"))
    (chunked,) = (tmp_path / "chunked").glob("*.eval")
    with zipfile.ZipFile(chunked) as z:
        assert any(n.endswith("/sample.json") for n in z.namelist())
    assert read_answers(chunked, epoch=2, skip_missing=True).by_id() == base
    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(mock_eval)), str(as_json), format="json")
    assert detect_format(as_json) == "inspect"
    f = read_answers(as_json, epoch=2, skip_missing=True)
    assert f.by_id() == base and f.model == "mockllm/model"


@needs_inspect
def test_log_of_a_run_that_stopped_early(mock_eval: Path, tmp_path: Path) -> None:
    """No header.json yet (the run died): the journal's start record and the samples written."""
    import zipfile_zstd  # noqa: F401  (installed with inspect_ai: lets zipfile read zstd)

    part = tmp_path / "crashed.eval"
    with zipfile.ZipFile(mock_eval) as zin, zipfile.ZipFile(part, "w") as zout:
        for info in zin.infolist():
            keep = info.filename.startswith(("_journal/start", "samples/q-lake", "samples/q-owl"))
            if keep:
                zout.writestr(info.filename, zin.read(info))
    f = read_answers(part, epoch=1)
    assert f.provenance["status"] == "started" and f.model == "mockllm/model"
    assert sorted(f.ids) == ["q-lake", "q-owl"]


@needs_inspect
def test_attachments_are_resolved(mock_eval: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(mock_eval)), str(as_json), format="json")
    doc = json.loads(as_json.read_text(encoding="utf-8"))
    sample = next(s for s in doc["samples"] if s["id"] == "q-lake" and s["epoch"] == 1)
    text = sample["output"]["choices"][0]["message"]["content"]
    sample.setdefault("attachments", {})["0123abcd"] = text  # as inspect condenses long text
    sample["output"]["choices"][0]["message"]["content"] = "attachment://0123abcd"
    sample["output"]["completion"] = ""
    as_json.write_text(json.dumps(doc), encoding="utf-8")
    assert read_answers(as_json, epoch=1, skip_missing=True).by_id()["q-lake"].answer == text
    sample["output"]["choices"][0]["message"]["content"] = "attachment://ffff"
    as_json.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"samples\[\d+\]: refers to 'attachment://ffff', "
                                         r"which the log does not hold"):
        read_answers(as_json, epoch=1, skip_missing=True)


@needs_zstd
def test_committed_real_inspect_log() -> None:
    f = read_answers(REAL_EVAL)
    assert f.format == "inspect" and f.model == "llama-cpp-python/smollm2-135m"
    assert f.task == "toyqa" and f.score_name == "includes"
    assert sorted(f.ids) == sorted(i for i in IDS if i != FAILING)
    assert all(r.answer and r.references == REFS[r.item_id] for r in f.records)
    assert f.provenance["inspect_ai_version"]


@needs_zstd
def test_broken_eval_archives(tmp_path: Path) -> None:
    raw = REAL_EVAL.read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"cut\.eval: not a valid zip archive"):
        read_answers(cut)
    not_zip = tmp_path / "text.eval"
    not_zip.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"text\.eval: an \.eval file must be a zip"):
        read_answers(not_zip)
    other = tmp_path / "other.eval"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "not a log")
    with pytest.raises(ValueError, match=r"not an inspect_ai \.eval log \(no header\.json"):
        read_answers(other)
    # a sample member whose bytes were damaged: named, never read as something else
    with zipfile.ZipFile(REAL_EVAL) as z:
        info = next(i for i in z.infolist() if i.filename.startswith("samples/"))
    bad = bytearray(raw)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for k in range(start + 8, start + 40):
        bad[k] ^= 0x5A
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(bytes(bad))
    with pytest.raises(ValueError, match=rf"damaged\.eval: {info.filename}"):
        read_answers(damaged)
    with pytest.raises(ValueError, match=r"a zip archive .*, not lmeval text"):
        read_answers(REAL_EVAL, format="lmeval")


@pytest.mark.skipif(not (_have("inspect_ai") and _smollm2_available()),
                    reason="needs inspect-ai, llama-cpp-python[server] and the bundled model")
@pytest.mark.slow
def test_live_inspect_run_with_the_bundled_model(tmp_path: Path) -> None:
    path = _write("inspect", tmp_path, "--model", "smollm2")
    f = read_answers(path)
    assert f.model == "llama-cpp-python/smollm2-135m" and len(f) == len(IDS) - 1
    assert all(isinstance(r.score, float) for r in f.records)


# --------------------------------------------------------------------------- lm-eval


@needs_lmeval
@pytest.mark.slow
def test_lmeval_samples_from_a_real_run(lmeval_run: Path) -> None:
    assert detect_format(lmeval_run) == "lmeval"
    f = read_answers(lmeval_run, filter_name="none")
    assert f.format == "lmeval" and f.task == "toyqa" and f.n_shot == 1
    assert f.model == "toy/fixed-answers"
    assert f.provenance["lm_eval_version"] and f.provenance["filters"] == ["lower", "none"]
    assert f.ids == tuple(str(i) for i in range(len(ITEMS)))
    # answer_chars (a character count) is skipped: exact match is the first judgment
    assert f.score_name == "exact_match"
    recs = {r["doc_id"]: r for r in _lines(lmeval_run) if r["filter"] == "none"}
    for r, (sid, ctx, q, refs, ans) in zip(f.records, ITEMS, strict=True):
        assert r.answer == ans  # the model's answer, cut at the stop string, stripped
        assert r.references == refs  # lm-eval wrote str(list): read back as the list
        assert r.prompt == {"id": sid, "context": ctx, "question": q}
        assert q in r.meta["prompt_text"] and r.meta["prompt_text"].count("Question:") == 2
        assert r.score == recs[int(r.item_id)]["exact_match"]
        assert set(r.meta["metrics"]) == {"answer_chars", "exact_match", "f1"}
        assert r.meta["gen_kwargs"]["until"] == ["\n"] and r.token_logprobs is None
    lower = read_answers(lmeval_run, filter_name="lower")
    assert [r.answer for r in lower.records] == [it[4].lower() for it in ITEMS]


@needs_lmeval
@pytest.mark.slow
def test_lmeval_filters_metrics_and_ids(lmeval_run: Path) -> None:
    with pytest.raises(ValueError, match=r"several lm-eval filters \['lower', 'none'\]; "
                                         r"choose one with filter_name="):
        read_answers(lmeval_run)
    with pytest.raises(ValueError, match=r"no samples for filter 'strict'"):
        read_answers(lmeval_run, filter_name="strict")
    f1 = read_answers(lmeval_run, filter_name="none", score_name="f1")
    assert f1.by_id()["3"].score == pytest.approx(2 / 3)  # "rye bread and cakes" vs "rye bread"
    with pytest.raises(ValueError, match=r"line 1: metric 'answer_chars' = 14\.0 is not a "
                                         r"judgment in \[0, 1\]"):
        read_answers(lmeval_run, filter_name="none", score_name="answer_chars")
    with pytest.raises(ValueError, match=r"line 1: no metric 'bleu'"):
        read_answers(lmeval_run, filter_name="none", score_name="bleu")
    by_id = read_answers(lmeval_run, filter_name="none", id_field="id")
    assert by_id.ids == tuple(IDS)
    assert "id" not in by_id.records[0].prompt
    picked = by_id.align(["q-owl", "q-lake"])
    assert [r.answer for r in picked] == ["in the cellar", "every January"]
    positions = read_answers(lmeval_run, filter_name="none")
    with pytest.raises(ValueError, match=r"no answer for 1 of 1 item id\(s\): 'q-owl'.*"
                                         r"id_field="):
        positions.align(["q-owl"])
    with pytest.raises(ValueError, match=r"line 1: doc has no field 'qid'"):
        read_answers(lmeval_run, filter_name="none", id_field="qid")


@needs_lmeval
@pytest.mark.slow
def test_lmeval_gzip_and_reordered_lines(lmeval_run: Path, tmp_path: Path) -> None:
    base = read_answers(lmeval_run, filter_name="none").by_id()
    gz = tmp_path / lmeval_run.with_suffix(".jsonl.gz").name
    gz.write_bytes(gzip.compress(lmeval_run.read_bytes()))
    g = read_answers(gz, filter_name="none")
    assert g.by_id() == base and g.task == "toyqa" and detect_format(gz) == "lmeval"
    lines = lmeval_run.read_text(encoding="utf-8").splitlines()
    random.Random(3).shuffle(lines)
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("\n".join(lines) + "\n", encoding="utf-8")
    s = read_answers(shuffled, filter_name="none")
    assert s.by_id() == {k: AnswerRecord(**{**asdict(v), "meta": {**v.meta, "task": None}})
                         for k, v in base.items()}  # no samples_<task>_ name: no task
    assert s.ids != tuple(base) and sorted(s.ids) == sorted(base)


def test_lmeval_hostile_lines(tmp_path: Path) -> None:
    recs = _lines(REAL_SAMPLES)
    dup = [*recs, dict(recs[2])]
    with pytest.raises(ValueError, match=r"line 13: duplicate doc_id '2' \(first at .*line 3\)"):
        read_answers(_put(tmp_path / "dup.jsonl", dup), filter_name="none")
    text = REAL_SAMPLES.read_text(encoding="utf-8").splitlines()
    text[4] = text[4][:50]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl: line 5: not valid JSON"):
        read_answers(bad)
    (tmp_path / "arr.jsonl").write_text(json.dumps(recs[0]) + "\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: expected a JSON object, got list"):
        read_answers(tmp_path / "arr.jsonl")
    gone = [dict(r) for r in recs]
    gone[1]["filtered_resps"] = []
    path = _put(tmp_path / "gone.jsonl", gone)
    with pytest.raises(ValueError, match=r"line 2: item '1' has no answer \(no filtered "
                                         r"response\); to leave such items out add "
                                         r"\?skip_missing=1 to the answers: spec"):
        read_answers(path, filter_name="none")
    assert read_answers(path, filter_name="none", skip_missing=True).skipped == ("1",)
    # the option that message names works in a spec; a bad value and options another
    # format reads are refused (an id_field on a table was silently ignored)
    from activetest.session.create_graded import read_answer_spec
    from activetest.session.store import SessionError

    assert read_answer_spec(f"answers:{path}?filter=none&skip_missing=1").skipped == ("1",)
    with pytest.raises(SessionError, match="skip_missing='maybe'"):
        read_answer_spec(f"answers:{path}?skip_missing=maybe")
    with pytest.raises(SessionError, match="epoch='abc'; expected an epoch number"):
        read_answer_spec(f"answers:{path}?epoch=abc")
    with pytest.raises(ValueError, match="epoch= applies to inspect files"):
        read_answers(path, filter_name="none", epoch=1)
    table = tmp_path / "t.csv"
    table.write_text("id,answer\na,x\n")
    with pytest.raises(ValueError, match="id_field= applies to lmeval files; this one reads "
                                         "as csv"):
        read_answers(table, id_field="x")
    many = [dict(r) for r in recs]
    many[0]["filtered_resps"] = [[" a", " b"]]
    with pytest.raises(ValueError, match=r"line 1: filter 'none' left 2 generations .*repeats"):
        read_answers(_put(tmp_path / "many.jsonl", many), filter_name="none")
    nokey = [dict(r) for r in recs]
    del nokey[3]["filtered_resps"]
    with pytest.raises(ValueError, match=r"line 4: missing key 'filtered_resps'"):
        read_answers(_put(tmp_path / "nokey.jsonl", nokey), format="lmeval")
    with pytest.raises(ValueError, match=r"line 1: a loglikelihood \(multiple-choice\) sample.*"
                                         r"activetest\.models\.lmeval"):
        read_answers(SST2)
    rolling = [{**r, "arguments": {"gen_args_0": {"arg_0": "some text"}},
                "resps": [["-123.5"]], "filtered_resps": ["-123.5"]} for r in recs[:2]]
    with pytest.raises(ValueError, match=r"line 1: not a generate_until sample.*rolling"):
        read_answers(_put(tmp_path / "rolling.jsonl", rolling), filter_name="none")


def test_committed_real_lmeval_samples() -> None:
    f = read_answers(REAL_SAMPLES, filter_name="none")
    assert f.task == "toyqa" and f.model is None and f.n_shot is None  # no results file
    assert len(f) == len(ITEMS) and f.score_name == "exact_match"
    assert [r.references for r in f.records] == [it[3] for it in ITEMS]
    raw = {r["doc_id"]: r for r in _lines(REAL_SAMPLES) if r["filter"] == "none"}
    for r in f.records:
        assert r.answer == raw[int(r.item_id)]["filtered_resps"][0].strip()


@pytest.mark.skipif(not (_have("lm_eval") and _smollm2_available()),
                    reason="needs lm-eval, llama-cpp-python[server] and the bundled model")
@pytest.mark.slow
def test_live_lmeval_run_with_the_bundled_model(tmp_path: Path) -> None:
    path = _write("lmeval", tmp_path, "--model", "smollm2")
    f = read_answers(path, filter_name="lower", id_field="id")
    assert f.model == "HuggingFaceTB/SmolLM2-135M-Instruct" and f.n_shot == 1
    assert f.ids == tuple(IDS) and all(r.answer == r.answer.lower() for r in f.records)


# --------------------------------------------------------------------------- Every Eval Ever


@needs_zstd
def test_eee_from_the_inspect_converter_matches_the_inspect_log() -> None:
    assert detect_format(EEE_INSPECT) == "eee"
    with pytest.raises(ValueError, match=r"several evaluations \['includes:accuracy', "
                                         r"'match:accuracy'\]; choose one with "
                                         r"evaluation_name="):
        read_answers(EEE_INSPECT)
    log = read_answers(REAL_EVAL).by_id()
    for scorer in ("match", "includes"):
        f = read_answers(EEE_INSPECT, evaluation_name=f"{scorer}:accuracy")
        assert f.format == "eee" and f.model == "llama-cpp-python/smollm2-135m"
        assert f.task == "toyqa" and f.score_name == "score"
        assert set(f.ids) == set(log)
        for r in f.records:
            src = log[r.item_id]
            # the converter keeps each scorer's own extracted answer (includes lower-cases)
            assert r.answer == src.meta["score_answers"][scorer].strip()
            assert r.references == src.references
            assert r.prompt["input"] == src.prompt["input"]
            assert r.score == {"C": 1.0, "I": 0.0}[src.meta["scores"][scorer]]
            assert r.meta["is_correct"] is (r.score == 1.0)
    assert f.provenance["model_id"] == "llama-cpp-python/smollm2-135m"


def test_eee_from_the_lmeval_converter_matches_the_samples() -> None:
    with pytest.raises(ValueError, match=r"evaluation 'toyqa/lower' has several results "
                                         r"\['answer_chars:lower', 'exact_match:lower', "
                                         r"'f1:lower'\]"):
        read_answers(EEE_LMEVAL, evaluation_name="toyqa/lower")
    for filt, result in (("none", "exact_match"), ("lower", "exact_match:lower"),
                         ("none", "f1")):
        src = read_answers(REAL_SAMPLES, filter_name=filt,
                           score_name=result.split(":")[0]).by_id()
        f = read_answers(EEE_LMEVAL, evaluation_name=result)
        assert f.model == "HuggingFaceTB/SmolLM2-135M-Instruct" and f.n_shot == 1
        assert f.provenance["eval_library"].startswith("lm_eval")
        assert set(f.ids) == set(src)
        for r in f.records:
            assert r.answer == src[r.item_id].answer
            assert r.references == src[r.item_id].references  # str(list) read back as list
            assert r.score == pytest.approx(src[r.item_id].score)
    chars = read_answers(EEE_LMEVAL, evaluation_name="answer_chars")
    assert chars.score_name == "is_correct"  # scores are character counts: not judgments
    with pytest.raises(ValueError, match=r"evaluation field 'score' = 1[0-9]\.0 is not a "
                                         r"judgment"):
        read_answers(EEE_LMEVAL, evaluation_name="answer_chars", score_name="score")


def test_eee_hostile_records(tmp_path: Path) -> None:
    recs = [r for r in _lines(EEE_INSPECT) if r["evaluation_result_id"] == "match:accuracy"]
    assert read_answers(_put(tmp_path / "ok.jsonl", recs)).ids
    with pytest.raises(ValueError, match=r"line 6: duplicate sample_id '.*' \(first at .*"
                                         r"line 1\)"):
        read_answers(_put(tmp_path / "dup.jsonl", [*recs, dict(recs[0])]))
    other = [dict(r) for r in recs]
    other[2] = {**other[2], "model_id": "someone/else"}
    with pytest.raises(ValueError, match=r"several models \['llama-cpp-python/smollm2-135m', "
                                         r"'someone/else'\]"):
        read_answers(_put(tmp_path / "models.jsonl", other))
    empty = [dict(r) for r in recs]
    empty[1] = {**empty[1], "output": {"raw": []}, "answer_attribution": []}
    with pytest.raises(ValueError, match=r"line 2: item '.*' has no answer"):
        read_answers(_put(tmp_path / "empty.jsonl", empty))
    two = [dict(r) for r in recs]
    two[0] = {**two[0], "output": {"raw": ["a", "b"]}}
    with pytest.raises(ValueError, match=r"line 1: output.raw holds 2 responses"):
        read_answers(_put(tmp_path / "two.jsonl", two))
    nokey = [dict(r) for r in recs]
    del nokey[3]["evaluation"]
    with pytest.raises(ValueError, match=r"line 4: missing key 'evaluation'"):
        read_answers(_put(tmp_path / "nokey.jsonl", nokey), format="eee")
    mixed = [*recs, _lines(REAL_SAMPLES)[0]]
    with pytest.raises(ValueError, match=r"line 6: looks like an lm-eval sample, but .*line 1 "
                                         r"looks like an Every Eval Ever instance record"):
        read_answers(_put(tmp_path / "mixed.jsonl", mixed))
    with pytest.raises(ValueError, match=r"score_name for Every Eval Ever files is 'score', "
                                         r"'is_correct' or ''"):
        read_answers(tmp_path / "ok.jsonl", score_name="exact_match")


def test_eee_schema_0_2_shapes_and_attribution(tmp_path: Path) -> None:
    recs = [r for r in _lines(EEE_INSPECT) if r["evaluation_result_id"] == "match:accuracy"]
    old = []
    for r in recs:  # 0.2.0: output.raw and input.reference were strings
        o = {**r, "schema_version": "0.2.0", "output": {"raw": r["output"]["raw"][0]},
             "input": {**r["input"], "reference": r["input"]["reference"][0]}}
        old.append(o)
    f = read_answers(_put(tmp_path / "old.jsonl", old))
    new = read_answers(_put(tmp_path / "new.jsonl", recs)).by_id()
    for r in f.records:
        assert r.answer == new[r.item_id].answer
        assert r.references == new[r.item_id].references[:1]
    agentic = [{**r, "interaction_type": "multi_turn", "output": None,
                "messages": [{"turn_idx": 0, "role": "user", "content": "q"},
                             {"turn_idx": 1, "role": "assistant", "content": "first"},
                             {"turn_idx": 2, "role": "assistant", "content": "final"}]}
               for r in recs]
    assert {r.answer for r in read_answers(_put(tmp_path / "mt.jsonl", agentic))} == {"final"}
    attributed = [{**r, "answer_attribution": [
        {"turn_idx": 0, "source": "output.raw", "extracted_value": "X", "extraction_method":
         "regex", "is_terminal": False},
        {"turn_idx": 0, "source": "output.raw", "extracted_value": "half past seven",
         "extraction_method": "regex", "is_terminal": True}]} for r in recs]
    got = read_answers(_put(tmp_path / "attr.jsonl", attributed))
    assert {r.answer for r in got} == {"half past seven"}
    assert all(r.meta["raw_output"] == [x["output"]["raw"][0]] for r, x in
               zip(got.records, recs, strict=True))


# --------------------------------------------------------------------------- joins


def _join_items(order: list[int], first: int = 0, *, refs: bool = True) -> list[JoinItem]:
    """ITEMS in ``order``, ids by position, fields named unlike any log's."""
    return [JoinItem(str(first + k), {"passage": ITEMS[j][1], "query": ITEMS[j][2]},
                     ITEMS[j][3] if refs else ()) for k, j in enumerate(order)]


@needs_zstd
def test_which_ids_may_be_positions() -> None:
    assert ids_may_be_positions(read_answers(EEE_LMEVAL, evaluation_name="exact_match"))
    assert ids_may_be_positions(read_answers(REAL_SAMPLES, filter_name="none"))
    assert not ids_may_be_positions(read_answers(REAL_SAMPLES, filter_name="none",
                                                 id_field="id"))
    assert not ids_may_be_positions(read_answers(REAL_EVAL))
    assert not ids_may_be_positions(read_answers(EEE_INSPECT,
                                                 evaluation_name="match:accuracy"))


def test_the_own_input_leaves_the_in_context_examples_out() -> None:
    # lm-eval's 1-shot prompts as Every Eval Ever keeps them (input.raw)
    f = read_answers(EEE_LMEVAL, evaluation_name="exact_match")
    for r in f.records:
        own = r.prompt["input"]
        assert own.count("Question:") == 1 and r.meta["prompt_text"].endswith(own)
        assert r.meta["prompt_text"].count("Question:") == 2
        assert QUESTION[IDS[int(r.item_id)]] in own


def test_confirm_join_in_the_files_order_and_out_of_it() -> None:
    f = read_answers(EEE_LMEVAL, evaluation_name="exact_match")
    same = _join_items(list(range(6)))
    confirm_join(f, same, f.align([g.item_id for g in same]))
    # the file's own fields, under the same names: confirmed as well
    confirm_join(f, [JoinItem(r.item_id, dict(r.prompt)) for r in f.records], list(f.records))
    for refs in (True, False):
        rev = _join_items(list(reversed(range(6))), refs=refs)
        with pytest.raises(ValueError, match=r"the record of id '0' is not shown to be the "
                                             r"pool's item '0'.*\(6 of 6 items unconfirmed\)"):
            confirm_join(f, rev, f.align([g.item_id for g in rev]))
    # references in common with the pool's, but not equal, confirm nothing by themselves
    swap = [JoinItem(g.item_id, {}, (*g.references, "other")) for g in same]
    with pytest.raises(ValueError, match=r"nothing confirms it"):
        confirm_join(f, swap, list(f.records))
    # ids that are not positions: nothing to confirm
    g = read_answers(EEE_INSPECT, evaluation_name="match:accuracy")
    confirm_join(g, [JoinItem(i, {"query": "unrelated"}) for i in g.ids], list(g.records))


def test_an_item_that_is_only_an_in_context_example_is_not_confirmed() -> None:
    f = read_answers(EEE_LMEVAL, evaluation_name="exact_match")
    # a reader that could not tell the example from the question: the whole prompt as input
    whole = [AnswerRecord(r.item_id, r.answer, {"input": r.meta["prompt_text"]})
             for r in f.records]
    raw = AnswerFile(f.path, "eee", whole)
    confirm_join(raw, _join_items(list(range(6))), whole)
    # each record joined to the item of its in-context example: that item's text occurs in
    # the prompt, but the record's own question (another pool item) comes after it
    shots = [next(j for j, it in enumerate(ITEMS) if it[2] in r.meta["prompt_text"]
                  and it[2] not in r.prompt["input"]) for r in f.records]
    with pytest.raises(ValueError, match=r"the record of id '0' .* its input asks pool item "
                                         r"'1''s question"):
        confirm_join(raw, _join_items(shots), whole)


def test_a_file_judgment_against_the_pool_references_counts_against() -> None:
    f = read_answers(EEE_LMEVAL, evaluation_name="exact_match")
    # a file without references of its own: only its judgments speak for it
    bare = [AnswerRecord(r.item_id, r.answer, {"input": r.prompt["input"]}, score=r.score)
            for r in f.records]
    rf = AnswerFile(f.path, "eee", bare)
    same = _join_items(list(range(6)))
    confirm_join(rf, same, bare)
    rev = _join_items(list(reversed(range(6))))
    owl = f.by_id()["1"]
    assert owl.score == 1.0  # judged right; the pool's item '1' is the kite
    with pytest.raises(ValueError, match=rf"the file judged its answer {owl.answer!r} right, "
                                         rf"but it shares no word with the pool's references"):
        confirm_join(rf, rev, bare)


# --------------------------------------------------------------------------- tables


def _csv(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=delimiter)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_csv_and_tsv_tables(tmp_path: Path) -> None:
    header = ["id", "question", "context", "answer", "score", "references", "meta.judge"]
    rows = [["a1", "Who?", "Ann wrote it.", "Ann", "1", '["Ann", "Ann Lee"]', "alice"],
            ["a2", "When?", "In May, 2001.", "in May", "0.5", "May 2001", ""],
            ["a3", "Where?", "By the sea.", "the sea, I think", "", "", "bob"]]
    for delim, suffix in ((",", "csv"), ("\t", "tsv")):
        path = _csv(tmp_path / f"answers.{suffix}", header, rows, delim)
        assert detect_format(path) == suffix
        f = read_answers(path)
        assert f.format == suffix and f.ids == ("a1", "a2", "a3") and f.score_name == "score"
        a1, a2, a3 = f.records
        assert a1 == AnswerRecord("a1", "Ann", {"question": "Who?", "context": "Ann wrote it."},
                                  ("Ann", "Ann Lee"), 1.0, None, {"judge": "alice"})
        assert a2.references == ("May 2001",) and a2.score == 0.5 and a2.meta == {}
        assert a3.score is None and a3.references == () and a3.answer == "the sea, I think"
        assert [r.answer for r in f.align(["a3", "a1"])] == ["the sea, I think", "Ann"]
    ignored = read_answers(tmp_path / "answers.csv", score_name="")
    assert ignored.score_name is None and all(r.score is None for r in ignored.records)
    assert "score" not in ignored.records[0].prompt


def test_jsonl_table(tmp_path: Path) -> None:
    recs = [{"id": 7, "input": "2+2?", "answer": "4", "score": True, "references": ["4"],
             "token_logprobs": [-0.1, -0.02], "meta": {"run": 3}},
            {"id": "x", "input": "Capital of Peru?", "answer": "", "reference": "Lima",
             "judge": 0}]
    path = _put(tmp_path / "answers.jsonl", recs)
    assert detect_format(path) == "jsonl"
    f = read_answers(path, score_name="judge")
    assert f.ids == ("7", "x") and f.score_name == "judge"
    assert f.records[0].score is None and f.records[0].meta == {"run": 3}
    assert f.records[0].token_logprobs == (-0.1, -0.02)
    assert f.records[0].prompt == {"input": "2+2?"}  # "score" is never a prompt field
    assert f.records[1].answer == "" and f.records[1].score == 0.0
    assert f.records[1].references == ("Lima",)
    default = read_answers(path)
    assert default.records[0].score == 1.0 and default.records[1].prompt["judge"] == "0"


def test_table_hostile_rows(tmp_path: Path) -> None:
    header = ["id", "answer", "score"]
    cases = [
        ([["a", "x", "1"], ["a", "y", "0"]], r"line 3: duplicate id 'a' \(first at .*line 2\)"),
        ([["a", "", "1"]], r"line 2: item 'a' has no answer \(column 'answer' is empty\)"),
        ([["a", "x", "maybe"]], r"line 2: column 'score': 'maybe' is not a judgment"),
        ([["a", "x", "1.5"]], r"line 2: column 'score': '1.5' is not a judgment"),
        ([["a", "x", "nan"]], r"column 'score': 'nan' is not a judgment"),
        ([["", "x", "1"]], r"line 2: id column 'id' is empty"),
        ([["a", "x"]], r"line 2: 2 fields, the header has 3"),
    ]
    for k, (rows, message) in enumerate(cases):
        with pytest.raises(ValueError, match=message):
            read_answers(_csv(tmp_path / f"c{k}.csv", header, rows))
    with pytest.raises(ValueError, match=r"missing column 'answer'; the file has \['id', 'ans'\]"):
        read_answers(_csv(tmp_path / "cols.csv", ["id", "ans"], [["a", "x"]]))
    with pytest.raises(ValueError, match=r"column 'references': '\[a' is not a JSON list"):
        read_answers(_csv(tmp_path / "refs.csv", ["id", "answer", "references"],
                          [["a", "x", "[a"]]))
    with pytest.raises(ValueError, match=r"token_logprobs\[1\] = 0\.5 is not a log-probability"):
        read_answers(_put(tmp_path / "lp.jsonl", [{"id": "a", "answer": "x",
                                                   "token_logprobs": [-1, 0.5]}]))
    with pytest.raises(ValueError, match=r"line 1: column 'answer' must be text, got 3"):
        read_answers(_put(tmp_path / "num.jsonl", [{"id": "a", "answer": 3}]))
    with pytest.raises(ValueError, match=r"prompt column 'ctx' must be text"):
        read_answers(_put(tmp_path / "ctx.jsonl", [{"id": "a", "answer": "x", "ctx": [1]}]))
    with pytest.raises(ValueError, match=r"line 2: item 'b' has no answer"):
        read_answers(_put(tmp_path / "null.jsonl", [{"id": "a", "answer": "x"},
                                                    {"id": "b", "answer": None}]))
    bom = tmp_path / "bom.csv"
    bom.write_bytes("\ufeffid,answer\nz,ok\n".encode())
    assert read_answers(bom).ids == ("z",)


def test_detection_errors(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"e\.jsonl: no records \(empty file\)"):
        read_answers(tmp_path / "e.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_answers(tmp_path / "b.jsonl")
    _put(tmp_path / "u.jsonl", [{"id": "a", "answer": "x"}, {"question": "q", "text": "t"}])
    with pytest.raises(ValueError, match=r"u\.jsonl: line 2: not a record of a known answers "
                                         r"format: expected an lm-eval sample .*has keys "
                                         r"\['question', 'text'\]"):
        read_answers(tmp_path / "u.jsonl")
    with pytest.raises(ValueError, match=r"absent\.jsonl: no such file"):
        read_answers(tmp_path / "absent.jsonl")
    with pytest.raises(ValueError, match=r"is a directory"):
        read_answers(tmp_path)
    with pytest.raises(ValueError, match=r"format must be one of"):
        read_answers(REAL_SAMPLES, format="helm")
    with pytest.raises(ValueError, match=r"not an inspect_ai log"):
        read_answers(REAL_SAMPLES, format="inspect")
    (tmp_path / "g.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match=r"not a valid gzip file"):
        read_answers(tmp_path / "g.jsonl.gz")
    (agg,) = EEE_INSPECT.parent.glob("*[0-9a-f].json")
    with pytest.raises(ValueError, match=r"one JSON document, not JSON lines.*Every Eval Ever "
                                         r"aggregate record: the answers are in"):
        read_answers(agg)
    lm_results = tmp_path / "results_2026-01-01T00-00-00.json"
    lm_results.write_text(json.dumps({"results": {"t": {}}, "n-shot": {"t": 0}}, indent=2),
                          encoding="utf-8")
    with pytest.raises(ValueError, match=r"an lm-eval results file: the answers are in"):
        detect_format(lm_results)
    # a format named explicitly is checked record by record
    with pytest.raises(ValueError, match=r"line 1: missing key 'doc_id'"):
        read_answers(EEE_INSPECT, format="lmeval")
    with pytest.raises(ValueError, match=r"missing column 'id'"):
        read_answers(REAL_SAMPLES, format="jsonl")


@needs_zstd
def test_records_are_checked() -> None:
    with pytest.raises(ValueError, match=r"score 1\.5 is not in"):
        AnswerRecord("a", "x", score=1.5)
    with pytest.raises(ValueError, match="item_id must be a non-empty string"):
        AnswerRecord("", "x")
    r = AnswerRecord("a", "x")
    with pytest.raises(ValueError, match="duplicate item id 'a'"):
        AnswerFile(Path("f"), "csv", (r, r))
    json.dumps([asdict(x) for x in read_answers(REAL_EVAL).records])  # meta is JSON


# --------------------------------------------------------------------------- fuzz


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                     st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8))
_values = st.recursive(_scalars, lambda c: st.one_of(
    st.lists(c, max_size=3), st.dictionaries(st.text(max_size=6), c, max_size=3)), max_leaves=10)
_keys = st.sampled_from(["doc_id", "filtered_resps", "resps", "arguments", "target", "filter",
                         "metrics", "exact_match", "sample_id", "evaluation", "input", "output",
                         "answer_attribution", "schema_version", "model_id", "id", "answer",
                         "score", "references", "doc", "messages"])


@settings(max_examples=200, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(st.dictionaries(_keys, _values, max_size=8), min_size=1, max_size=5),
       fmt=st.sampled_from([None, "lmeval", "eee", "jsonl"]))
def test_fuzz_records_read_or_value_error(tmp_path: Path, recs: list[dict[str, Any]],
                                          fmt: str | None) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    try:
        f = read_answers(path, format=fmt, skip_missing=True)
    except ValueError:
        return
    assert len(set(f.ids)) == len(f.ids) == len(f.records)
    for r in f.records:
        assert isinstance(r.answer, str) and all(isinstance(x, str) for x in r.references)
        assert r.score is None or 0.0 <= r.score <= 1.0
        assert all(isinstance(v, str) for v in r.prompt.values())


@settings(max_examples=150, deadline=None, suppress_health_check=_HC)
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".jsonl", ".csv", ".eval",
                                                              ".json", ".gz"]))
def test_fuzz_bytes_read_or_value_error(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    with contextlib.suppress(ValueError):
        read_answers(path)


@settings(max_examples=60, deadline=None, suppress_health_check=_HC)
@given(cut=st.integers(0, 10_000), flips=st.lists(st.integers(0, 10_000), max_size=4))
def test_fuzz_damaged_eval_read_or_value_error(tmp_path: Path, cut: int,
                                               flips: list[int]) -> None:
    raw = bytearray(REAL_EVAL.read_bytes())
    for k in flips:
        raw[k % len(raw)] ^= 0xFF
    path = tmp_path / "fuzz.eval"
    path.write_bytes(bytes(raw[: len(raw) - cut % len(raw)]))
    with contextlib.suppress(ValueError):
        read_answers(path)


# ------------------------------------------------ evidence that tells items apart


def _positional(records: list[AnswerRecord]) -> AnswerFile:
    return AnswerFile(Path("made.jsonl"), "jsonl", tuple(records))


def test_an_equal_field_shared_by_two_pool_items_confirms_neither() -> None:
    """Equal text confirms a join only where it tells the item apart from every other
    pool item: two items asking the same question (different references) cannot be
    told apart by it, and a file that has nothing else is refused, in either order
    (mutation check: counting the equal field without the uniqueness rule passed)."""
    pool = [JoinItem("0", {"question": "What is the capital?"}, ("Paris",)),
            JoinItem("1", {"question": "What is the capital?"}, ("Rome",)),
            JoinItem("2", {"question": "Who wrote it?"}, ("Ann",))]
    recs = [AnswerRecord(str(k), "x", {"question": it.fields["question"]})
            for k, it in enumerate(pool)]
    with pytest.raises(ValueError, match=r"record of id '0' is not shown to be the pool's "
                                         r"item '0'.*nothing confirms it"):
        confirm_join(_positional(recs), pool, recs)
    # the third item alone is told apart by its text: confirmed
    confirm_join(_positional(recs[2:]), pool[2:], recs[2:])
    # items alike in text and references are interchangeable: their texts confirm them
    twins = [JoinItem(str(k), {"question": "What is the capital?"}, ("Paris",))
             for k in range(2)] + pool[2:]
    confirm_join(_positional(recs), twins, recs)


def test_references_shared_by_two_pool_items_confirm_neither() -> None:
    """Equal references confirm a join only where no other pool item has the same ones
    (mutation check: counting shared references passed)."""
    pool = [JoinItem("0", {"q": "2 + 2?"}, ("4",)), JoinItem("1", {"q": "3 + 1?"}, ("4",)),
            JoinItem("2", {"q": "1 + 1?"}, ("2",))]
    recs = [AnswerRecord(str(k), "4", {"input": "..."}, it.references)
            for k, it in enumerate(pool)]
    with pytest.raises(ValueError, match=r"record of id '0'.*nothing confirms it"):
        confirm_join(_positional(recs), pool, recs)
    confirm_join(_positional(recs[2:]), pool[2:], recs[2:])  # '2' is told apart by them


def test_a_file_judging_a_reference_answer_wrong_counts_against() -> None:
    """A file without references of its own that judged wrong an answer that is one of
    the joined pool item's references contradicts the join (mutation check: that rule
    switched off passed; its mirror, an answer judged right sharing no word, is
    checked above)."""
    pool = [JoinItem("0", {"question": "Capital of France?"}, ("Paris",)),
            JoinItem("1", {"question": "Capital of Italy?"}, ("Rome",))]
    # the file's own input confirms the join; its judgment contradicts it
    recs = [AnswerRecord("0", "Paris", {"question": "Capital of France?"}, score=0.0),
            AnswerRecord("1", "Rome", {"question": "Capital of Italy?"}, score=1.0)]
    with pytest.raises(ValueError, match=r"the file judged its answer 'Paris' wrong, but it "
                                         r"is one of the pool's references"):
        confirm_join(_positional(recs), pool, recs)
    ok = [AnswerRecord("0", "Paris", {"question": "Capital of France?"}, score=1.0), recs[1]]
    confirm_join(_positional(ok), pool, ok)


@needs_inspect
def test_a_dict_valued_scorer_is_read_at_the_key_named(mock_eval: Path, tmp_path: Path) -> None:
    """A scorer whose value is a dict (several metrics in one score) is read only at the
    key named, ``score_name="scorer/key"`` (hostile-input QA: no way to name one); no key
    is guessed, and a key some sample lacks is refused naming it."""
    from inspect_ai.log import read_eval_log, write_eval_log

    as_json = tmp_path / "log.json"
    write_eval_log(read_eval_log(str(mock_eval)), str(as_json), format="json")
    doc = json.loads(as_json.read_text(encoding="utf-8"))
    want = {}
    for s in doc["samples"]:
        if s["epoch"] != 1 or not s.get("scores"):
            continue
        entry = next(iter(s["scores"].values()))
        ok = 1.0 if len(str(s["id"])) % 2 else 0.0
        want[s["id"]] = ok
        s["scores"] = {"multi": {**entry, "value": {"exact": ok, "length": 17.0}}}
    as_json.write_text(json.dumps(doc), encoding="utf-8")
    guessed = read_answers(as_json, epoch=1, skip_missing=True)
    assert guessed.score_name is None  # a dict is not read without a key
    f = read_answers(as_json, epoch=1, skip_missing=True, score_name="multi/exact")
    assert f.score_name == "multi/exact"
    assert {i: r.score for i, r in f.by_id().items() if i in want} == want
    with pytest.raises(ValueError, match=r"scorer 'multi/length' = 17\.0 is not a judgment"):
        read_answers(as_json, epoch=1, skip_missing=True, score_name="multi/length")
    with pytest.raises(ValueError, match=r"no scorer 'multi/nope'"):
        read_answers(as_json, epoch=1, skip_missing=True, score_name="multi/nope")
