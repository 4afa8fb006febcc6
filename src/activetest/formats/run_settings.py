"""How a logged run was run (its settings), to tell two runs of one model apart.

Two harness logs of one model may be two different evaluated systems: lm-eval runs of
one checkpoint with another ``--num_fewshot``, inspect_ai evals of one model with another
solver plan (a system message) or generation config. Their per-item results differ, and
as runs of "one model" a history refused them ("which run is meant is not guessed"),
though the logs say how they differ. :func:`name_apart` names such runs apart by the
settings their logs state that differ (``smollm2 [n-shot=1]``, ``smollm2 [n-shot=3]``);
runs of one model whose stated settings agree (a partial run and the rest, one file per
subject) keep the model's name, and are merged or refused as before.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

__all__ = ["inspect_settings", "name_apart", "row_settings", "settings_base"]

K = TypeVar("K", bound=Hashable)

#: inspect_ai generation settings that change what a model answers (not how it is called)
_GENERATE = ("temperature", "max_tokens", "top_p", "top_k", "seed", "system_message",
             "stop_seqs", "num_choices", "reasoning_effort")

#: longest setting value written whole into a row's name (longer: cut, with a digest)
_LONGEST = 48


def _short(value: str) -> str:
    if len(value) <= _LONGEST:
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:6]
    return f"{value[:_LONGEST - 12]}...#{digest}"


def inspect_settings(header: Mapping[str, Any]) -> dict[str, str]:
    """What an inspect_ai log's header says about how the eval ran: its solver plan
    (``plan``: each step's solver with the parameters passed to it), the generation
    settings of the plan's config that change answers (``temperature``, ``max_tokens``,
    ...) and its task's arguments (``task_args``); keys absent where not stated."""
    out: dict[str, str] = {}
    plan = header.get("plan") if isinstance(header.get("plan"), Mapping) else {}
    steps = plan.get("steps") if isinstance(plan.get("steps"), list) else []
    parts = []
    for s in steps:
        if not isinstance(s, Mapping) or not isinstance(s.get("solver"), str):
            continue
        passed = s.get("params_passed") if isinstance(s.get("params_passed"), Mapping) else {}
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(passed.items()))
        parts.append(f"{s['solver']}({args})")
    if parts:
        out["plan"] = " > ".join(parts)
    config = plan.get("config") if isinstance(plan.get("config"), Mapping) else {}
    for key in _GENERATE:
        if config.get(key) is not None:
            out[key] = str(config[key])
    spec = header.get("eval") if isinstance(header.get("eval"), Mapping) else {}
    task_args = spec.get("task_args")
    if isinstance(task_args, Mapping) and task_args:
        out["task_args"] = ", ".join(f"{k}={v!r}" for k, v in sorted(task_args.items()))
    return out


def name_apart(names: Mapping[K, str], settings: Mapping[K, Mapping[str, str]]
               ) -> tuple[dict[K, str], list[str]]:
    """Each run's row name (module docstring): a model's runs whose stated settings
    differ are named ``<model> [<key>=<value>, ...]`` by the settings that differ among
    them; every other run keeps its name. Returns the names and one note per model so
    named apart."""
    out = dict(names)
    notes: list[str] = []
    groups: dict[str, list[K]] = {}
    for k, name in names.items():
        groups.setdefault(name, []).append(k)
    for name, keys in groups.items():
        stated = {k: dict(settings.get(k) or {}) for k in keys}
        if len({tuple(sorted(s.items())) for s in stated.values()}) < 2:
            continue
        fields = sorted({f for s in stated.values() for f in s})
        differ = [f for f in fields if len({s.get(f) for s in stated.values()}) > 1]
        for k in keys:
            text = ", ".join(f"{f}={_short(stated[k].get(f, 'not stated'))}" for f in differ)
            out[k] = f"{name} [{text}]"
        named = sorted({out[k] for k in keys})
        notes.append(f"history: model {name!r} ran with other settings in {len(keys)} logs "
                     f"(their {', '.join(differ)}, as the logs state): one row per setting, "
                     f"{', '.join(repr(n) for n in named[:3])}"
                     f"{', ...' if len(named) > 3 else ''}")
    return out, notes


def settings_base(name: str) -> str:
    """A row's model name without the settings :func:`name_apart` added (the name as it
    is where it has none)."""
    if name.endswith("]") and " [" in name:
        return name[:name.index(" [")]
    return name


_KEY = re.compile(r"[^\s=,()\[\]{}]+=")


def _split_settings(text: str) -> list[str]:
    """``"a=1, plan=f(x=1, y=2)"`` -> ``["a=1", "plan=f(x=1, y=2)"]``: split at each
    ``", "`` outside brackets that a ``key=`` follows."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and text.startswith(", ", i) and _KEY.match(text, i + 2):
            parts.append(text[start:i])
            start = i + 2
    return [*parts, text[start:]]


def row_settings(name: str) -> dict[str, str]:
    """The settings a row's name states, as :func:`name_apart` (or ``init --history``, for
    a run of the target's model at other settings) wrote them: ``"m [n-shot=0]"`` ->
    ``{"n-shot": "0"}``; a setting written ``not stated`` is left out (the log states
    none), and a name without settings gives ``{}``. Only the settings that told the
    row apart are in its name."""
    base = settings_base(name)
    if base == name:
        return {}
    out: dict[str, str] = {}
    for part in _split_settings(name[len(base) + 2:-1]):
        key, sep, value = part.partition("=")
        if sep and value != "not stated":
            out[key] = value
    return out
