"""The README's inspect_ai recipe runs from the README alone (bundled model, offline).

The ```bash block under "Inside inspect_ai" is run as it stands in an empty folder with
bash (``set -e``), the venv's ``python`` and ``activetest`` first on PATH; its eval must
end with an estimate in the log, drawn in batches refitted inside the eval; ``status``
must count the target runs and project uniform's; and the session read back from the
log must hold the same draws and labels as the session the eval wrote.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from activetest.session.workflow import Session

ROOT = Path(__file__).resolve().parents[1]
HEADING = "### Inside inspect_ai"


def recipe() -> str:
    """The bash block of the README's inspect_ai section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    m = re.search(r"^```bash\n(.*?)^```", section, re.S | re.M)
    assert m, "no bash block in the README's inspect_ai section"
    return m.group(1)


def test_the_recipe_names_what_the_code_provides() -> None:
    block = recipe()
    assert "from activetest.inspect import ActiveStopping" in block
    assert "--from-inspect" in block and "early_stopping=stop" in block
    # the target-free session kind: no answers on the pool, no task file to write
    assert "--target inspect" in block and "--target pool" not in block
    assert '"answer"' not in block and "batch=" in block
    # a free port picked at run time, and a server that died is said, not waited for (a
    # fixed port answered from another server beside a CI run)
    assert "--port $PORT" in block and "s.bind((\"127.0.0.1\", 0))" in block
    assert "kill -0 $SERVER" in block and not re.search(r"--port \d", block)


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None
                    or importlib.util.find_spec("llama_cpp") is None,
                    reason="needs inspect_ai and llama-cpp-python[server]")
def test_the_readme_inspect_recipe_runs(tmp_path: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(["bash", "-e", "-c", recipe()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the labels the estimate stands on, apart from this eval's runs (QA: the recipe printed
    # "width reached after 3 runs" for an eval that continued a 41-label session)
    # the estimate named by its method, the interval by its guarantee (QA: "error rate 0.886
    # anytime 95% CS ...", the estimator unnamed)
    # (and "ran N samples", not "N of them": the samples of the stop's batch beyond it ran
    # and were labelled too)
    stop = re.search(r"(width reached|budget spent) at (\d+) labels \(this eval ran (\d+) "
                     r"samples\): error_rate by adaptive LURE over the draw order's longest "
                     r"completed prefix 0\.\d+ \| anytime 95% confidence sequence 0\.\d+ "
                     r"[01]\.\d+", proc.stdout)
    assert stop, proc.stdout[-3000:]
    runs = re.search(r"target runs spent: (\d+) \(results read from inspect_ai evals as "
                     r"labels\); 0 label\(s\) from people", proc.stdout)
    assert runs, proc.stdout[-3000:]
    assert re.search(r"a uniform sample would need about \d+ target runs for the same anytime "
                     r"interval width 0\.\d+ \(a projection", proc.stdout), proc.stdout[-3000:]
    with Session.open(tmp_path / "arith.db") as s, Session.open(tmp_path / "copy.db") as c:
        assert s.session_config.target == c.session_config.target == "inspect"
        assert s.labels() and c.labels() == s.labels() and int(runs[1]) == len(s.labels())
        assert int(stop[2]) <= len(s.labels()) and int(stop[3]) == len(s.labels())  # one eval
        assert [a.item_id for a in c.acquisitions()] == [a.item_id for a in s.acquisitions()]
        known = [d[3] for d in s.store.design_draws()]
        assert known[:6] == [0, 0, 2, 2, 4, 4]  # batches of 2, refitted between them
