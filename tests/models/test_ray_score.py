"""Scoring a pool on a local Ray cluster (2 CPUs) with the bundled SmolLM2, a worker killed.

The scores written are compared item by item with in-process LlamaCppScorer scores
of the same items, and read back into a session through ``table:``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from tests.session.session_support import cli_command, cli_env, make_pool_files

from activetest.data.pool import load_pool
from activetest.data.taskfile import load_task

pytestmark = [pytest.mark.slow, pytest.mark.models]

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")
#: How long scoring the 24 items on 2 CPUs may go on after a worker is killed (its shard
#: retried): the join returns as soon as scoring ends; the cap only ends a hung run.
SCORE_SECONDS = 600.0
TOL = 1e-4  # same model and prompt ids; llama.cpp thread counts may differ in the last bits


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _shard_workers() -> list[int]:
    """Pids of Ray worker processes running a scoring shard now (Ray names the process
    after the task it runs: ``ray::_score_shard``)."""
    pids = []
    for p in psutil.process_iter(["cmdline", "pid"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if cmd.startswith("ray::_score_shard"):
            pids.append(int(p.info["pid"]))
    return pids


def test_killed_worker_is_retried_and_the_table_round_trips(cluster, tmp_path: Path) -> None:
    from activetest.models.bundled import bundled_model_path
    from activetest.models.llamacpp import LlamaCppScorer
    from activetest.models.ray_score import score_with_ray
    from activetest.session import Session

    try:
        gguf = bundled_model_path("smollm2-135m")
    except Exception as exc:  # not installed here
        pytest.skip(f"bundled SmolLM2 not available: {exc}")
    pf = make_pool_files(tmp_path / "data", n=24)
    task = load_task("demo")
    pool = load_pool(pf.pool, task=task, id_column="id")
    out = tmp_path / "preds.parquet"
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["result"] = score_with_ray(pool, task, "smollm2-135m", out, shards=4,
                                           max_retries=3)
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    # a daemon: should scoring hang, the test fails with its message below and pytest
    # still exits (a live non-daemon thread would keep the run waiting for ever)
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and worker.is_alive() and time.monotonic() < deadline:
        running = _shard_workers()
        if running:
            killed = running[0]
            os.kill(killed, signal.SIGKILL)  # a real worker process, mid-shard
        time.sleep(0.05)
    worker.join(timeout=SCORE_SECONDS)  # returns as soon as scoring ends (or fails)
    assert not worker.is_alive(), (
        f"score_with_ray had not returned {SCORE_SECONDS:g} s after the kill loop ended "
        f"(worker killed: {killed}; a shard's retry hung?); shard workers running now: "
        f"{_shard_workers()}")
    assert "error" not in box, box.get("error")
    assert killed is not None, "no scoring worker was seen running"
    assert not psutil.pid_exists(killed) or psutil.Process(killed).status() == "zombie"
    res = box["result"]
    assert f":{killed}" not in " ".join(res.workers)  # its shard finished elsewhere

    import pyarrow.parquet as pq
    table = pq.read_table(out).to_pylist()
    assert [r["id"] for r in table] == [it.id for it in pool]  # none lost, none twice
    local = LlamaCppScorer(gguf, n_ctx=512, n_threads=1)
    try:
        want = local.score(task, list(pool), progress=False)
    finally:
        local.close()
    got = np.array([[r[w] for w in task.classes] for r in table])
    print(f"ray vs in-process: max |diff| = {np.abs(got - want).max():.2e}")
    np.testing.assert_allclose(got, want, atol=TOL)

    db = tmp_path / "s.db"
    proc = subprocess.run(cli_command(
        "init", str(db), "--pool", str(pf.pool), "--task", "demo", "--surrogate",
        f"table:{out}", "--target", f"table:{out}", "--id-column", "id", "--seed", "1",
        "--no-progress"), env=cli_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with Session.open(db) as s:
        ids = [it.id for it in s.items()]
        stored = s.store.scores("surrogate").logprobs
    by_id = {r["id"]: [r[w] for w in task.classes] for r in table}
    assert sorted(ids) == sorted(by_id)
    for i, item_id in enumerate(ids):  # item by item
        np.testing.assert_allclose(stored[i], by_id[item_id], atol=1e-9)


def _nli_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A task whose first label word is two tokens for SmolLM2 (" entailment"), a
    two-item pool, and where the table goes; skips without pyarrow or the bundled model."""
    pytest.importorskip("pyarrow")
    from activetest.models.bundled import bundled_model_path

    try:
        bundled_model_path("smollm2-135m")
    except Exception as exc:  # not installed here
        pytest.skip(f"bundled SmolLM2 not available: {exc}")
    task = tmp_path / "nli.toml"
    task.write_text('name = "nli"\ninstruction = "Does the first sentence entail the second?"\n'
                    'classes = ["entailment", "contradiction", "neutral"]\n')
    pool = tmp_path / "pool.csv"
    pool.write_text("id,text\na,A man sleeps. / A person rests.\nb,A dog runs. / It sleeps.\n")
    return task, pool, tmp_path / "p.parquet"


def test_a_multi_token_label_word_is_said_and_kept_in_the_table(tmp_path: Path) -> None:
    """``activetest score``: the workers' notices stay on them, so the driver says it (one
    ``note:`` line) and the Parquet provenance keeps how the label words were scored."""
    task, pool, out = _nli_files(tmp_path)
    proc = subprocess.run(cli_command(
        "score", "--engine", "ray", "--pool", str(pool), "--id-column", "id", "--task",
        str(task), "--model", "smollm2-135m", "--out", str(out), "--shards", "2"),
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert ("note: model 'smollm2-135m', task 'nli': label words of more than one token, "
            "'entailment' (class 0): 2 tokens") in proc.stderr, proc.stderr
    assert proc.stderr.count("label words of more than one token") == 1
    assert "--label-scoring full-sequence (activetest score" in proc.stderr, proc.stderr

    import json

    import pyarrow.parquet as pq
    meta = json.loads(pq.read_schema(out).metadata[b"activetest"])
    assert meta["label_scoring"] == {"mode": "first-token", "exact": True, "n_tokens": [2, 1, 1],
                                     "words": ["entailment", "contradiction", "neutral"]}


def test_full_sequence_scores_whole_words_on_the_workers(tmp_path: Path) -> None:
    """``activetest score --label-scoring full-sequence``: the workers build the model with
    ``full_sequence=True``, so the table holds the same numbers as an in-process scorer
    built so, item by item; no note, and the metadata says so."""
    from activetest.models.registry import get_scorer

    task_file, pool_file, out = _nli_files(tmp_path)
    proc = subprocess.run(cli_command(
        "score", "--engine", "ray", "--pool", str(pool_file), "--id-column", "id", "--task",
        str(task_file), "--model", "smollm2-135m", "--out", str(out), "--shards", "2",
        "--label-scoring", "full-sequence"),
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "label words of more than one token" not in proc.stderr, proc.stderr

    import json

    import pyarrow.parquet as pq
    meta = json.loads(pq.read_schema(out).metadata[b"activetest"])
    assert meta["label_scoring"] == {"mode": "full-sequence", "exact": True,
                                     "n_tokens": [2, 1, 1],
                                     "words": ["entailment", "contradiction", "neutral"]}
    task = load_task(str(task_file))
    items = list(load_pool(pool_file, task=task, id_column="id"))
    table = pq.read_table(out).to_pylist()
    got = np.array([[r[w] for w in task.classes] for r in table])
    want = {}
    for full in (True, False):
        scorer = get_scorer("smollm2-135m", n_threads=1, full_sequence=full)
        try:
            want[full] = scorer.score(task, items, progress=False)
        finally:
            scorer.close()
    assert [r["id"] for r in table] == [it.id for it in items]
    np.testing.assert_allclose(got, want[True], atol=TOL)
    assert np.abs(got[:, 0] - want[False][:, 0]).min() > 1e-2  # not the first token's
