"""The README's "with your own past eval logs" recipe runs from the README alone.

The ```bash block of that section is run as it stands, with bash (``set -e``), the
venv's ``activetest`` first on PATH, in a folder whose ``runs/`` holds six models' real
lm-eval ``--log_samples`` runs of one task (:mod:`tests.history_logs`), and 20 answers on
stdin for ``activetest label``: it must make the history session (the target's own run
found and left out) and print an estimate of the error rate.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from activetest.session.workflow import Session
from tests.history_logs import history_logs  # noqa: F401  (a fixture)

ROOT = Path(__file__).resolve().parents[1]
HEADING = "### With your own past eval logs"


def recipe() -> str:
    """The bash block of the README's past-eval-logs section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    m = re.search(r"^```bash\n(.*?)^```", section, re.S | re.M)
    assert m, "no bash block in the README's past-eval-logs section"
    return m.group(1)


def test_the_readme_history_recipe_runs(history_logs: Path, tmp_path: Path) -> None:  # noqa: F811
    shutil.copytree(history_logs, tmp_path / "runs")
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run(["bash", "-e", "-c", recipe()], cwd=tmp_path, env=env,
                          input="2\n1\n" * 10, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out
    assert "is the target's own run" in out and "history: 5 model(s)" in out
    assert "labelled 20 item(s)" in out and re.search(r"error.rate", out), out[-2000:]
    with Session.open(tmp_path / "past.db") as s:
        assert s.config["design"] == "features" and len(s.labels()) == 20
        assert s.estimate().metrics["error_rate"].active.estimate is not None
