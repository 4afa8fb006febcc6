"""Every command line the README and docs/ show names options that exist.

A figure is reproducible only by a command that runs: an option renamed or never built
(`status --target-width`, which docs/projection.md named until 2026-12-04) makes the
command beside it fail. Checked: ``activetest <command> --option`` (and a backticked
``<command> --option``) against the CLI's own parameters; ``python -m activetest.X``
and ``python benchmarks/X.py`` / ``scripts/X.py`` (argparse ones) against what their
``--help`` prints, in one subprocess. Lines continued with a backslash are joined.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import typer

from activetest.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
PYTHON = re.compile(r"python(?:3)? (?:-m (activetest(?:\.[a-z_]+)+)( [a-z_]+)?|"
                    r"((?:benchmarks|scripts)/[a-z_0-9]+\.py))([^`\n|#]*)")


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").replace("\\\n", " ").splitlines(),
                          1))


def _cli_options() -> dict[str, set[str]]:
    group = typer.main.get_command(app)
    out = {}
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        opts = {"--help"}
        for p in cmd.params:
            opts.update(p.opts)
            opts.update(getattr(p, "secondary_opts", ()))
        out[name] = opts
    return out


def test_activetest_commands_in_the_docs_name_real_options() -> None:
    cli = _cli_options()
    # `score` passes its other options to python -m activetest.models.ray_score (checked
    # with the python commands below)
    names = "|".join(sorted((c for c in cli if c != "score"), key=len, reverse=True))
    patterns = [re.compile(rf"activetest ({names})\b([^`\n|#]*)"),
                re.compile(rf"`({names})( --[^`]*)`")]
    bad, seen = [], 0
    for path in DOCS:
        for ln, line in _lines(path):
            for pat in patterns:
                for m in pat.finditer(line):
                    seen += 1
                    bad += [f"{path.name}:{ln}: activetest {m.group(1)} has no {o}"
                            for o in OPTION.findall(m.group(2)) if o not in cli[m.group(1)]]
    assert seen > 50, seen  # the scan reads what it should
    assert not bad, "\n".join(bad)


_HELP = r'''
import contextlib, io, json, re, runpy, sys
out = {}
for mod, sub, path in json.loads(sys.argv[1]):
    sys.argv = ["x", *([sub] if sub else []), "--help"]
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            if mod:
                runpy.run_module(mod, run_name="__main__", alter_sys=True)
            else:
                runpy.run_path(path, run_name="__main__")
    except SystemExit:
        pass
    out["|".join([mod or "", sub, path or ""])] = sorted(
        set(re.findall(r"--[a-z][a-z0-9_-]*", buf.getvalue())))
print(json.dumps(out))
'''


def test_python_commands_in_the_docs_name_real_options() -> None:
    uses: dict[tuple[str, str, str], list[tuple[str, int, list[str]]]] = {}
    for path in DOCS:
        for ln, line in _lines(path):
            for m in PYTHON.finditer(line):
                script = m.group(3)
                if script and "argparse" not in (ROOT / script).read_text(encoding="utf-8"):
                    continue  # positional arguments only
                key = (m.group(1) or "", (m.group(2) or "").strip(), script or "")
                opts = re.findall(r"(?<![\w-])(--[a-z][a-z0-9_-]*)", m.group(4))
                uses.setdefault(key, []).append((path.name, ln, opts))
    assert len(uses) > 20, uses
    for mod, _, script in uses:
        assert mod or (ROOT / script).is_file(), script
    keys = [[k[0] or None, k[1], k[2] or None] for k in uses]
    p = subprocess.run([sys.executable, "-c", _HELP, json.dumps(keys)], cwd=ROOT,
                       capture_output=True, text=True, timeout=600,
                       env={"PYTHONPATH": str(ROOT / "src"), "PATH": "",
                            "NUMBA_DISABLE_JIT": "0"})
    assert p.returncode == 0, p.stderr[-3000:]
    helps = json.loads(p.stdout.strip().splitlines()[-1])
    bad = []
    for (mod, sub, script), found in uses.items():
        h = set(helps["|".join([mod, sub, script])])
        assert h, f"{mod or script} {sub}: --help printed no option"
        bad += [f"{f}:{ln}: {mod or script} {sub} has no {o}"
                for f, ln, opts in found for o in opts if o not in h]
    assert not bad, "\n".join(bad)
