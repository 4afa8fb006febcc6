"""Which model a log is of, across one command's files: local paths told apart.

A model a log names by a local path is published by its last component
(:func:`activetest.formats.answers.public_model_name`): no local path is ever stored. Two
local checkpoints of one last name (``/a/checkpoint-1000``, ``/b/checkpoint-1000``) would
then be one model. Within one command's set of files (the ``--history`` logs and the
target's own), :func:`distinct_names` names such models by their shortest distinguishing
suffix of path components (``a/checkpoint-1000``, ``b/checkpoint-1000``); a path whose
components end another's (``/runs/ckpt`` and ``/data/runs/ckpt``: the same folder mounted
elsewhere) or equal them (one path on two machines) is the same model, never told apart
by the rest of a path. A drive letter, ``file:``, ``~``, ``.`` and ``..`` are not components.

:func:`variant_name` adds which weights of the named model ran (lm-eval's ``gguf_file``,
``revision``, ... of ``--model_args``; Every Eval Ever's ``model_info.additional_details``
as activetest writes them): two quantisations of one repository are two models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["VARIANT_ARGS", "distinct_names", "local_parts", "model_variant", "names_the_path",
           "path_digests", "public_model_name", "same_local_model", "variant_name"]

#: ``model_args`` of an lm-eval run that pick which weights of the named model ran (lm-eval's
#: ``model_name`` leaves them out: ``pretrained=DIR,gguf_file=A.gguf`` and ``...,gguf_file=
#: B.gguf`` are both named ``DIR``).
VARIANT_ARGS = ("gguf_file", "revision", "subfolder", "peft", "delta")


def _looks_like_path(name: str) -> bool:
    """A model name that is a local path (absolute, home-relative, dotted, with a
    drive letter or backslashes, ``file:``, or naming something on this machine),
    not an ``org/model`` id or a provider's ``provider/org/model``."""
    text = name.strip()
    if text.startswith(("/", "~", "./", "../", "file:")) or "\\" in text \
            or re.match(r"^[A-Za-z]:[\\/]", text):
        return True
    try:
        return "/" in text and Path(text).exists()
    except (OSError, ValueError):
        return False


def public_model_name(name: str | None) -> str | None:
    """A model name fit to publish: the name as a log states it, except that a local
    path (``/home/me/models/smollm2``, ``file:...``, ``C:\\models\\x``) becomes its
    last component. None stays None; an empty name becomes None."""
    if name is None or not str(name).strip():
        return None
    text = str(name).strip()
    if not _looks_like_path(text):
        return text
    text = text.removeprefix("file://").removeprefix("file:")
    parts = [p for p in re.split(r"[\\/]", text) if p and p not in (".", "..", "~")]
    return parts[-1] if parts else None


def local_parts(name: str | None) -> tuple[str, ...] | None:
    """The path components of a model name that is a local path (no drive letter,
    ``file:``, ``~``, ``.`` or ``..``); None where the name is no local path (an
    ``org/model`` id, a provider's name) or has no component."""
    if name is None or not str(name).strip() or not _looks_like_path(str(name)):
        return None
    text = str(name).strip().removeprefix("file://").removeprefix("file:")
    parts = tuple(p for p in re.split(r"[\\/]", text)
                  if p and p not in (".", "..", "~") and not re.fullmatch(r"[A-Za-z]:", p))
    return parts or None


def _ends_with(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    return len(longer) >= len(shorter) and longer[len(longer) - len(shorter):] == shorter


def distinct_names(names: Iterable[str | None]) -> dict[str, str]:
    """Each name of one command's set -> the name it is published by (module docstring):
    a name that is no local path as written (stripped); a local path by its last
    component, or, where another path of the set shares it, by its shortest suffix of
    components no other path of the set ends with; paths whose components end another's
    are the same model, named alike. None and empty names are left out."""
    out: dict[str, str] = {}
    parts: dict[str, tuple[str, ...]] = {}
    for n in names:
        if n is None or not str(n).strip() or n in out or n in parts:
            continue
        p = local_parts(n)
        if p is None:
            out[n] = str(n).strip()
        else:
            parts[n] = p
    kept: list[tuple[str, ...]] = []  # the distinct models: none ends another
    same: dict[tuple[str, ...], tuple[str, ...]] = {}
    for p in sorted(set(parts.values()), key=len):
        base = next((k for k in kept if _ends_with(p, k)), None)
        same[p] = p if base is None else base
        if base is None:
            kept.append(p)
    short: dict[tuple[str, ...], str] = {}
    for p in kept:
        others = [q for q in kept if q != p and q[-1] == p[-1]]
        k = next(k for k in range(1, len(p) + 1)
                 if not any(_ends_with(q, p[len(p) - k:]) for q in others))
        short[p] = "/".join(p[len(p) - k:])
    for n, p in parts.items():
        out[n] = short[same[p]]
    return out


def path_digests(name: str | None) -> tuple[str, ...]:
    """What may be stored of a model at a local path to tell it from another of its last
    name across commands (an lm-eval session's rounds, its history and its target), never
    the path itself: a digest of each suffix of its components, shortest first (the last
    one: the whole path's); empty where the name is no local path
    (:func:`local_parts`). Compared by :func:`same_local_model`."""
    import hashlib

    p = local_parts(name)
    if p is None:
        return ()
    return tuple(hashlib.sha256("/".join(p[len(p) - k:]).encode("utf-8")).hexdigest()[:16]
                 for k in range(1, len(p) + 1))


def same_local_model(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two local paths, by their :func:`path_digests`, are one model by the rule
    of :func:`distinct_names`: one path's components end the other's (the same folder
    mounted elsewhere, or one path on two machines); False where either is empty."""
    return bool(a) and bool(b) and (a[-1] in b or b[-1] in a)


def names_the_path(name: str, path: str | None) -> bool:
    """Whether a published model name (:func:`distinct_names`) names the local path
    ``path``: its components end the path's (``a/checkpoint-1000`` names
    ``/runs/a/checkpoint-1000``); False where ``path`` is no local path."""
    p = local_parts(path)
    mine = tuple(x for x in str(name).split("/") if x)
    return p is not None and bool(mine) and _ends_with(p, mine)


def variant_name(name: str, variant: Mapping[str, str] | None) -> str:
    """A model's name with which of its weights ran, where stated: ``smollm2
    (gguf_file=A.gguf)``; the name alone where there is no variant, or where the name
    states it already (an id activetest wrote, read back)."""
    if not variant:
        return name
    suffix = f" ({', '.join(f'{k}={v}' for k, v in sorted(variant.items()))})"
    return name if name.endswith(suffix) else name + suffix


def model_variant(args: Any) -> dict[str, str] | None:
    """Which weights of the named model a run used, from its ``model_args`` (lm-eval's
    ``key=value,...`` text or a mapping): the :data:`VARIANT_ARGS` it gives, a local path
    reduced to its last component (:func:`public_model_name`); empty where none is given,
    None where ``args`` is neither."""
    if isinstance(args, str):
        args = dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv)
    if not isinstance(args, Mapping):
        return None
    out: dict[str, str] = {}
    for key in VARIANT_ARGS:
        v = args.get(key)
        if v is not None and not isinstance(v, bool) and str(v).strip():
            out[key] = public_model_name(str(v)) or str(v).strip()
    return out
