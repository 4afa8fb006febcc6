"""The packages ``activetest.stats`` and ``activetest.data`` import each public name's
module on its first use (PEP 562): importing the package imports no submodule, every
name of ``__all__`` is the object its module defines, and importing a submodule named
like its function (``stats.bootstrap``, ``proposal``, ``simulate``) leaves the package's
name the function, as when the package imported every name at once. Checked in fresh
interpreters, since this process has imported the modules already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_CHECK = """
import importlib, json, sys, types
pkg_name, first, unhooked = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3] == "1"
pkg = importlib.import_module(pkg_name)
if unhooked:  # the package as a plain module: a submodule's import binds its name
    pkg.__class__ = types.ModuleType
loaded = sorted(m for m in sys.modules if m.startswith(pkg_name + "."))
for sub in first:  # a submodule imported before the names are asked for
    importlib.import_module(f"{pkg_name}.{sub}")
wrong = []
for name in pkg.__all__:
    value = getattr(pkg, name)
    defined = getattr(importlib.import_module(pkg._EXPORTS[name]), name)
    if value is not defined:
        wrong.append(name)
star = {}
exec(f"from {pkg_name} import *", star)
wrong += [n for n in pkg.__all__ if star.get(n) is not getattr(pkg, n)]
missing = sorted(set(pkg.__all__) - set(dir(pkg)))
print(json.dumps({"loaded": loaded, "wrong": wrong, "dir": missing}))
"""


def _check(pkg: str, first: list[str], unhooked: bool = False) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHECK, pkg, json.dumps(first),
                          "1" if unhooked else "0"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize(("pkg", "first"), [
    ("activetest.stats", []),
    ("activetest.stats", ["bootstrap", "proposal", "simulate"]),
    ("activetest.data", []),
    ("activetest.data", ["pool", "task"]),
])
def test_a_package_imports_its_names_on_first_use(pkg: str, first: list[str]) -> None:
    res = _check(pkg, first)
    assert res["loaded"] == []  # importing the package imports none of its modules
    assert res["wrong"] == []
    assert res["dir"] == []


def test_the_check_sees_a_name_shadowed_by_its_module() -> None:
    """Without the package's hook, importing ``stats.bootstrap`` binds the module where
    the function was: the check above reports those names."""
    res = _check("activetest.stats", ["bootstrap", "proposal", "simulate"], unhooked=True)
    assert sorted(set(res["wrong"])) == ["bootstrap", "proposal", "simulate"]


def test_the_betting_statistics_are_exported_together() -> None:
    """QA: ``betting_cs`` was importable from ``activetest.stats`` but the capital
    processes behind it, ``betting_capital`` (its documented test martingales), were not
    (neither in ``__all__`` nor for a type checker): ``from activetest.stats import
    betting_capital`` raised ImportError. Each of the betting module's public confidence
    sequences and capital processes is exported beside the others, typed too."""
    from pathlib import Path

    import activetest.stats as stats
    from activetest.stats import betting

    names = ("betting_capital", "betting_cs", "exact_cs", "paired_difference_exact_cs")
    typed = Path(stats.__file__).read_text(encoding="utf-8").split("if TYPE_CHECKING:")[1]
    for name in names:
        assert name in betting.__all__, name
        assert name in stats.__all__ and stats._EXPORTS[name] == "activetest.stats.betting"
        assert getattr(stats, name) is getattr(betting, name), name
        assert f"        {name},\n" in typed.split("activetest.stats.bootstrap")[0], name
