"""``$ACTIVETEST_OPENAI_MAX_TOP_K``: how a command line raises ``max_top_k``.

QA, 2026-12-07: ``activetest init --target openai:URL`` against llama-cpp-python's
server (whose echoed prompt log-probs cannot stand in) on 40 SST-2 dev sentences,
zero-shot, SmolLM2: the label word of one item was not among the top 200 next tokens,
and the refusal said "raise max_top_k", which no option of the command line and no part
of an ``openai:`` spec can do. The server gives thousands; the variable asks for them,
and the scores are then the in-process model's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from activetest.data.builtin import get_task
from activetest.data.task import Item
from activetest.models.openai import MAX_TOP_K_ENV, OpenAIScorer, env_max_top_k

# SST-2 dev, line 4: zero-shot, SmolLM2's ' negative' is outside its top 200 next tokens
HARD = ("allows us to hope that nolan is poised to embark a major career as a commercial "
        "yet inventive filmmaker . ")
ITEMS = [Item(id="d1", fields={"text": "it 's a charming and often affecting journey . "},
              label=1),
         Item(id="d3", fields={"text": HARD}, label=1)]
ROOT = Path(__file__).resolve().parents[2]


def test_the_variable_sets_the_default_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAX_TOP_K_ENV, raising=False)
    assert env_max_top_k(20) == 200 and OpenAIScorer("http://127.0.0.1:1/v1", "m").max_top_k == 200
    monkeypatch.setenv(MAX_TOP_K_ENV, " 5000 ")
    assert OpenAIScorer("http://127.0.0.1:1/v1", "m").max_top_k == 5000
    assert OpenAIScorer("http://127.0.0.1:1/v1", "m", max_top_k=300).max_top_k == 300
    for bad, words in (("lots", "expected a whole number"), ("5", "must be >= top_k=20")):
        monkeypatch.setenv(MAX_TOP_K_ENV, bad)
        with pytest.raises(ValueError, match=rf"\${MAX_TOP_K_ENV}='{bad}': {words}"):
            OpenAIScorer("http://127.0.0.1:1/v1", "m")


def _init(tmp_path: Path, url: str, name: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    pool = tmp_path / "pool.csv"
    pool.write_text("id,sentence\n" + "".join(f"{it.id},{it.fields['text']}\n"
                                              for it in ITEMS))
    sur = tmp_path / "sur.csv"
    sur.write_text("id,negative,positive\n" + "".join(f"{it.id},-0.6931471805599453,"
                                                      f"-0.6931471805599453\n" for it in ITEMS))
    e = {k: v for k, v in os.environ.items() if k != MAX_TOP_K_ENV}
    e.update(PYTHONPATH=str(ROOT / "src"), ACTIVETEST_CACHE=str(tmp_path / "cache"), **env)
    return subprocess.run([sys.executable, "-m", "activetest", "init", str(tmp_path / name),
                           "--pool", str(pool), "--id-column", "id", "--task", "sst2",
                           "--surrogate", f"table:{sur}", "--target", f"openai:{url}#smol",
                           "--no-progress"], capture_output=True, text=True, env=e,
                          timeout=600, check=False)


def test_a_command_line_raises_max_top_k_by_the_variable(
        server: str, gguf: Path, tmp_path: Path) -> None:
    """Refused at 200, naming the variable; with it, the session is made and its target
    scores are the in-process model's (the top-k path's values are exact)."""
    refused = _init(tmp_path, server, "a.db", {})
    assert refused.returncode == 2, refused.stderr
    assert "item 'd3'" in refused.stderr and f"${MAX_TOP_K_ENV}=1000" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "a.db").exists()
    made = _init(tmp_path, server, "b.db", {MAX_TOP_K_ENV: "5000"})
    assert made.returncode == 0, made.stderr
    from activetest.models.llamacpp import LlamaCppScorer
    from activetest.session.workflow import Session

    local = LlamaCppScorer(gguf, n_ctx=512, n_threads=1)
    try:
        want = local.score(get_task("sst2"), ITEMS, progress=False)
    finally:
        local.close()
    got = Session.open(tmp_path / "b.db").store.scores("target").logprobs
    np.testing.assert_allclose(got, want, atol=1e-4)
