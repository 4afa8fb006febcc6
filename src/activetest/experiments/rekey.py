"""Move cached results made under the old (source-keyed) rule to today's behaviour keys.

``python -m activetest.experiments.rekey [--apply]`` (from the repository root, in a
git checkout). For every cached file of the history experiment and the guard study
whose name is not today's key, and for the reproduction's ``designs.npz``:

1. find the commit that produced it: among the commits that touched the file (and
   their parents), one whose code, checked out in a temporary folder
   (``git archive``), gives the file's own key under the old rule (the source
   fingerprint in its name or, for ``designs.npz``, in its entries' keys); the run
   parameters are read from the file;
2. run today's behaviour probe (:mod:`activetest.experiments.probe`) against that
   checkout and here;
3. probes that match (:meth:`~activetest.experiments.probe.Probe.matches`): the file was
   made by code that behaves as today's, so (``--apply``) it is renamed to today's key;
   for ``designs.npz`` the command that moves its entries is printed. Probes that differ,
   or no producing commit found: the file is left as it is (stale: recomputed on the next
   run) and said.

``--store-digested [--apply]``: the keys made until 2026-12-05 hashed each probe's numbers
rounded to 10 digits; store today's probes under those digests (``probes/`` of the cache
folder, only where no stored probe matches), so the entries keyed by them are found by
today's rule (:mod:`activetest.experiments.probe`).
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

from activetest.experiments.probe import Probe, probe_id

__all__ = ["main", "store_digested", "todays_probes"]

_PROBE = Path(__file__).with_name("probe.py")
_SRC = Path(__file__).resolve().parents[2]
_BUDGETS = (25, 50, 100, 200, 400)


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def _checkout(commit: str, into: Path) -> Path:
    """``src/`` of ``commit`` in ``into`` (no git state is touched)."""
    into.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(["git", "archive", commit, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=arch.stdout, check=True)
    return into / "src"


def _py(src: Path, code: str) -> str:
    """Run ``code`` with the package from ``src``; its stdout, stripped."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(src)})
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr else "failed")
    return r.stdout.strip()


def _probe_at(src: Path, name: str) -> Probe:
    """Today's probe ``name`` (``history``, ``history_guard``, ``designs``) run against
    the package in ``src``: today's :mod:`activetest.experiments.probe` is put in as that
    package's ``probe`` module, and the experiment's ``behaviour_probe`` (self-contained:
    its imports inside) is run from today's source, calling that checkout's code."""
    body = "print(m.designs_probe().to_json())\n"
    if name != "designs":
        from activetest.experiments import history, history_guard
        mod = {"history": history, "history_guard": history_guard}[name]
        source = ("from __future__ import annotations\n"
                  + textwrap.dedent(inspect.getsource(mod.behaviour_probe)))
        body = f"ns = {{}}\nexec({source!r}, ns)\nprint(ns['behaviour_probe']().to_json())\n"
    out = _py(src, "import importlib.util, sys\nimport activetest.experiments\n"
                    "spec = importlib.util.spec_from_file_location("
                    f"'activetest.experiments.probe', {str(_PROBE)!r})\n"
                    "m = importlib.util.module_from_spec(spec)\n"
                    "sys.modules[spec.name] = m\nspec.loader.exec_module(m)\n" + body)
    return Probe.from_json(out)


def _today(name: str) -> Probe:
    return _probe_at(_SRC, name)


def _candidates(path: Path) -> list[str]:
    """Commits that touched the file (as named, following renames), then their parents."""
    out = _git("log", "--format=%H", "--follow", "--", str(path)).split()
    return out + [p for c in out for p in _git("log", "-1", "--format=%P", c).split()]


def _old_key_code(kind: str, name: str, sc: str, z: dict, root: str) -> str:
    """Python run in an old checkout that prints the file's key under the old rule."""
    if kind == "history":
        runs, base = int(z["nums"][0]), int(z["nums"][1])
        T = z["rel"].shape[1]
        return ("from pathlib import Path\n"
                "from activetest.experiments.history import MATRICES, _key\n"
                f"p = Path({root!r}) / MATRICES[{name!r}]\n"
                f"for nr in [({runs}, {base}), ({runs}, 0)]:\n"
                f"    print(_key(p, {sc!r}, {T}, nr, {_BUDGETS!r}, 0))\n")
    T, runs = z["original"].shape[0], int(z["meta"][2])
    return ("import hashlib\n"
            "import activetest.experiments.history_guard as g\n"
            "from activetest.experiments.cache import code_fingerprint\n"
            "from activetest.stats import _adaptive_kernels, adaptive, feature_design\n"
            f"h = hashlib.sha256('{name}:{sc}:{T}:{runs}:{list(_BUDGETS)}:0'.encode())\n"
            "h.update(code_fingerprint(feature_design, adaptive, _adaptive_kernels, g)"
            ".encode())\nprint(h.hexdigest()[:20])\n")


def _guard_key(name: str, sc: str, z: dict, root: str, cache: Path) -> str:
    """Today's key of a guard study file's parameters (in the cache folder ``cache``)."""
    from activetest.experiments.history_guard import cache_key
    variants = [k for k in z if k not in ("budgets", "accuracy", "meta")]  # in file order
    a = argparse.Namespace(matrix=name, scenario=sc, targets=z[variants[0]].shape[0],
                           runs=int(z["meta"][2]), budgets=list(_BUDGETS), seed=0, root=root,
                           variants=variants, cache=cache)
    return cache_key(a)


def _today_keys(kind: str, name: str, sc: str, z: dict, root: str, cache: Path) -> list[str]:
    if kind == "guard":
        return [_guard_key(name, sc, z, root, cache)]
    from activetest.experiments.history import MATRICES, _key
    runs, base = int(z["nums"][0]), int(z["nums"][1])
    # the budgets asked for: the main tables' (BBH stores only those below its 250 items),
    # or those stored (the small-budget study's 25-100)
    buds = dict.fromkeys((_BUDGETS, tuple(int(b) for b in z["budgets"])))
    return [_key(Path(root) / MATRICES[name], sc, z["rel"].shape[1], nr, bud, 0, cache)
            for bud in buds for nr in ((runs, base), (runs, 0))]


def _check_probe_keyed(f: Path, m: re.Match[str], root: str) -> str:
    """Whether a PE, neighbours, design-against-PPI++ or its cross-PPI study's file (keyed on the
    behaviour probe since it was first written: nothing to move) is at today's key, from
    the parameters stored in it."""
    if m.group(1) in ("vsppi-", "crossppi-"):
        from activetest.experiments.history_vs_ppi import cache_key as vs_key
        from activetest.experiments.history_vs_ppi import cross_cache_key
        key_of, table = ((vs_key, "sse_design") if m.group(1) == "vsppi-" else
                         (cross_cache_key, "sse_cross_nb"))
        with np.load(f, allow_pickle=False) as z:
            a = argparse.Namespace(matrix=m.group(2), scenario=m.group(3),
                                   targets=z[table].shape[0], runs=int(z["meta"][2]),
                                   budgets=[int(b) for b in z["budgets"]], seed=0, root=root,
                                   cache=f.parent)
            key = key_of(a, int(z["meta"][4]))
        return (f"{f.name}: already today's key" if key == m.group(4) else
                f"{f.name}: not today's key (made by other code or parameters): stale")
    if m.group(1) == "pe-":
        from activetest.experiments.history_pe import cache_key
        table, runs_at = "rel", 1
    else:
        from activetest.experiments.history_neighbours import cache_key
        table, runs_at = "original", 2
    with np.load(f, allow_pickle=False) as z:
        a = argparse.Namespace(matrix=m.group(2), scenario=m.group(3),
                               targets=z[table].shape[0], runs=int(z["meta"][runs_at]),
                               budgets=list(_BUDGETS), seed=0, root=root, cache=f.parent)
    return (f"{f.name}: already today's key" if cache_key(a) == m.group(4) else
            f"{f.name}: not today's key (made by other code or parameters): stale")


def _rekey_file(f: Path, root: str, apply: bool, tmp: Path) -> str:
    m = re.fullmatch(r"history-(guard-|pe-|neighbours-|vsppi-|crossppi-)?(.+)-(random|cross)-"
                     r"([0-9a-f]{20})\.npz", f.name)
    if m is None:
        return f"{f.name}: not a history cache file, passed over"
    if m.group(1) in ("pe-", "neighbours-", "vsppi-", "crossppi-"):  # keyed on behaviour
        return _check_probe_keyed(f, m, root)
    kind = "guard" if m.group(1) else "history"
    name, sc, key = m.group(2), m.group(3), m.group(4)
    with np.load(f, allow_pickle=False) as z:
        z = {k: z[k] for k in z.files}
        if key in _today_keys(kind, name, sc, z, root, f.parent):
            return f"{f.name}: already today's key"
        for commit in _candidates(f):
            src = _checkout(commit, tmp / commit[:10])
            code = _old_key_code(kind, name, sc, z, root)
            try:
                olds = _py(src, code).split()
            except RuntimeError:
                continue
            if key not in olds:
                continue
            pname = "history" if kind == "history" else "history_guard"
            then, now = _probe_at(src, pname), _today(pname)
            if not then.matches(now):
                return (f"{f.name}: made by {commit[:10]}, whose behaviour differs from "
                        f"today's (its probe {then.id} does not match today's {now.id}): "
                        "left stale")
            if kind == "history":
                from activetest.experiments.history import MATRICES, _key
                runs, base = int(z["nums"][0]), int(z["nums"][1])
                nr = (runs, base) if olds.index(key) == 0 else (runs, 0)
                new = _key(Path(root) / MATRICES[name], sc, z["rel"].shape[1], nr,
                           _BUDGETS, 0, f.parent)
            else:
                new = _guard_key(name, sc, z, root, f.parent)
            target = f.with_name(f"history-{m.group(1) or ''}{name}-{sc}-{new}.npz")
            if target == f:
                return f"{f.name}: already today's key"
            if apply:
                f.rename(target)
            return (f"{f.name}: made by {commit[:10]}, probe {then.id} matches today's -> "
                    f"{target.name}{'' if apply else ' (dry run)'}")
    return f"{f.name}: no commit found whose code gives this key: left stale"


def _designs(cache: Path, tmp: Path) -> str:
    f = cache / "designs.npz"
    if not f.exists():
        return "designs.npz: none"
    commit = _git("log", "-1", "--format=%H", "--", str(f)).strip()
    src = _checkout(commit, tmp / f"d-{commit[:10]}")
    from activetest.experiments.reproduce import _code

    # the code part then: a source fingerprint (until 2026-12-02), a probe's digest (until
    # 2026-12-05), or the id of the stored probe it matches (today's rule)
    old = _py(src, "import inspect\nfrom pathlib import Path\n"
                   "from activetest.experiments.reproduce import _code\n"
                   f"print(_code(Path({str(f.resolve())!r})) if "
                   "inspect.signature(_code).parameters else _code())")
    if old == _code(f):
        return f"designs.npz: made by {commit[:10]} under today's keys"
    then, now = _probe_at(src, "designs"), _today("designs")
    if not then.matches(now):
        return (f"designs.npz: made by {commit[:10]} (code part {old}), whose behaviour "
                f"differs from today's (its probe {then.id} does not match today's "
                f"{now.id}): left stale")
    return (f"designs.npz: made by {commit[:10]} (code part {old}), probe {then.id} matches "
            "today's; "
            "move its entries with: python -m activetest.experiments run "
            f"--migrate-cache-from {old} (reports how many moved)")


def todays_probes(cache: Path) -> list[Probe]:
    """Today's behaviour probe of every experiment whose results are cached in ``cache``
    (the guard study's: one per set of variants its files hold)."""
    from activetest.experiments import (
        history,
        history_guard,
        history_neighbours,
        history_pe,
        history_vs_ppi,
        signals,
    )
    from activetest.experiments.probe import designs_probe

    sets: dict[tuple[str, ...] | None, None] = {None: None}
    for f in sorted(cache.glob("history-guard-*.npz")):
        with np.load(f, allow_pickle=False) as z:
            v = tuple(k for k in z.files if k not in ("budgets", "accuracy", "meta"))
        sets[None if v == tuple(history_guard.VARIANTS) else v] = None
    return [designs_probe(), signals.behaviour_probe(), history.behaviour_probe(),
            *(history_guard.behaviour_probe(v) for v in sets),
            history_neighbours.behaviour_probe(), history_pe.behaviour_probe(),
            history_vs_ppi.behaviour_probe(), history_vs_ppi.cross_behaviour_probe()]


def store_digested(cache: Path, probes: list[Probe], apply: bool = True) -> list[str]:
    """Until 2026-12-05 the keys hashed a probe's numbers rounded to
    :data:`~activetest.experiments.probe.DIGITS` significant digits (its
    :meth:`~activetest.experiments.probe.Probe.digest`): store each of ``probes`` under
    that digest (``cache/probes/{digest}.json``), so the entries keyed by it are found by
    today's rule, unless a stored probe matches it already (then nothing is written: one
    stored probe per behaviour); one line said per probe."""
    out = []
    for probe in probes:
        part = probe_id(cache, probe)
        if part != probe.id:
            out.append(f"{probe.name}: stored as {part} already")
            continue
        d = probe.digest()
        if apply:
            folder = cache / "probes"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{d}.json").write_text(probe.to_json() + "\n")
        out.append(f"{probe.name}: stored under its former digest {d}"
                   + ("" if apply else " (dry run)"))
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line (module docstring)."""
    p = argparse.ArgumentParser(prog="python -m activetest.experiments.rekey")
    p.add_argument("--cache", default="experiments/cache")
    p.add_argument("--root", default="../shared/datasets/history")
    p.add_argument("--apply", action="store_true", help="rename (default: only say)")
    p.add_argument("--store-digested", action="store_true",
                   help="store today's probes under the digests the former rule keyed the "
                        "entries by (only where no stored probe matches), and stop")
    a = p.parse_args(argv)
    cache = Path(a.cache)
    if a.store_digested:
        print("\n".join(store_digested(cache, todays_probes(cache), a.apply)))
        return
    with tempfile.TemporaryDirectory() as d:
        for f in sorted(cache.glob("history-*.npz")):
            print(_rekey_file(f, a.root, a.apply, Path(d)), flush=True)
        print(_designs(cache, Path(d)), flush=True)


if __name__ == "__main__":
    main()
