"""A history's files as a session file names them: never by a local path.

A session file is shared; the folders a history was read from are the user's own
(``/home/me/runs/h1``). ``init --history PATH`` says the paths on the terminal (its
lines, :attr:`Published.said`); the ``history`` record stored in the session file
(:attr:`Published.record`) names each path by its last component (where two given paths
share it, by their shortest distinguishing suffix), a file found in a given folder by
that name and the file's path below the folder (``runs/model-2/samples.jsonl``), and
lists each file read with its name, its content's SHA-256 and the model rows it gave
(``files``). Every text of the record (its ``sources``, ``messages``, ``excluded``
reasons, ``by_position``) is written so. Sessions made before keep their record as
stored (paths, no ``files``); nothing computed from it changes.

While a session is made, the record carries the paths in :data:`LOCAL_KEY`
(a :class:`LocalPaths`, not JSON: a record stored without :func:`publish` fails loudly).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from activetest.formats.globs import has_glob_chars, is_pattern

__all__ = ["LOCAL_KEY", "HistoryFile", "LocalPaths", "Published", "publish", "with_local"]

#: The record's key holding the :class:`LocalPaths` until :func:`publish`.
LOCAL_KEY = "_local_paths"


@dataclass(frozen=True)
class HistoryFile:
    """One file a history was read from.

    Attributes:
        path: the file as read (said on the terminal, never stored).
        models: the model rows it gave.
    """

    path: str
    models: tuple[str, ...]


@dataclass(frozen=True)
class LocalPaths:
    """What ``init --history`` read, as given: the ``--history`` paths and the files.

    Attributes:
        given: the ``--history`` paths as given (folders, files, glob patterns).
        files: each file read, with the rows it gave.
        also: other paths the messages may name that are above the given ones (a
            model's files in two given folders, named by their common folder).
    """

    given: tuple[str, ...]
    files: tuple[HistoryFile, ...]
    also: tuple[str, ...] = ()


@dataclass(frozen=True)
class Published:
    """A history record made fit to store, and what ``init`` says of it.

    Attributes:
        record: the ``history`` record as stored (no local path).
        said: the record's messages with the paths as given, for the terminal.
    """

    record: dict[str, Any]
    said: tuple[str, ...]


def with_local(info: Mapping[str, Any], local: LocalPaths) -> dict[str, Any]:
    """``info`` carrying ``local`` until :func:`publish`."""
    return {**info, LOCAL_KEY: local}


def _base(given: str) -> str:
    """The part of a ``--history`` path before its first glob component (the path
    itself where it is no pattern), without a trailing separator. A pattern is told as
    every reader tells it (:func:`activetest.formats.globs.is_pattern`: an existing file
    of the exact name, ``runs/h[1].csv``, is that file)."""
    parts = Path(given).parts
    if not is_pattern(given):
        return str(Path(*parts)) if parts else "."
    k = next((k for k, p in enumerate(parts) if has_glob_chars(p)), len(parts))
    return str(Path(*parts[:k])) if k else "."


def _names(bases: Sequence[str]) -> dict[str, str]:
    """Each base -> its last component, or where another base shares it, its shortest
    suffix of components no other base ends with."""
    parts = {b: tuple(p for p in Path(os.path.abspath(b)).parts if p != os.sep) or (b,)
             for b in bases}
    out = {}
    for b, p in parts.items():
        others = [q for c, q in parts.items() if q != p]
        k = next((k for k in range(1, len(p) + 1)
                  if not any(q[len(q) - k:] == p[len(p) - k:] for q in others)), len(p))
        out[b] = "/".join(p[len(p) - k:])
    return out


def _forms(path: str) -> set[str]:
    """The spellings of a path a message may hold: as given, absolute, resolved."""
    out = {path.rstrip("/\\") or path}
    with contextlib.suppress(OSError, ValueError, RuntimeError):
        out |= {os.path.abspath(path), str(Path(path).resolve())}
    return {f for f in out if f and f != "."}


def _rewriter(local: LocalPaths) -> Any:
    """A function text -> the text with every path of ``local`` named as stored."""
    bases = list(dict.fromkeys(_base(g) for g in local.given))
    names = _names(bases)
    swap: dict[str, str] = {}
    for b in bases:
        for f in _forms(b):
            swap[f] = names[b]
    for a in local.also:
        for f in _forms(a):
            swap.setdefault(f, Path(a).name or a)
    if not swap:
        return lambda text: text
    # longest first; a path ends at a separator, the end, or what follows a path in a
    # message (": line", ", ", ")", a quote)
    alts = sorted(swap, key=len, reverse=True)
    rx = re.compile(r"(?<![\w.\-/\\])(" + "|".join(re.escape(a) for a in alts)
                    + r")(?=$|[/\\\s:,;)'\"\]])")
    return lambda text: rx.sub(lambda m: swap[m.group(1)], text)


def _rewrite(value: Any, fix: Any) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, list):
        return [_rewrite(v, fix) for v in value]
    if isinstance(value, tuple):
        return tuple(_rewrite(v, fix) for v in value)
    if isinstance(value, dict):
        return {k: _rewrite(v, fix) for k, v in value.items()}
    return value


def publish(info: Mapping[str, Any]) -> Published:
    """The record ``info`` as stored (module docstring) and the lines ``init`` says; a
    record without :data:`LOCAL_KEY` (nothing read from files) is stored as it is."""
    from activetest.formats.history import file_sha256

    rec = dict(info)
    local = rec.pop(LOCAL_KEY, None)
    said = tuple(str(m) for m in rec.get("messages") or ())
    if not isinstance(local, LocalPaths):
        return Published(rec, said)
    fix = _rewriter(local)
    out = {k: (v if k in ("models", "model_paths") else _rewrite(v, fix))
           for k, v in rec.items()}
    files = []
    for f in local.files:
        try:
            digest = file_sha256(f.path) if Path(f.path).is_file() else None
        except OSError:
            digest = None
        files.append({"name": fix(f.path), "sha256": digest, "models": list(f.models)})
    out["files"] = files
    return Published(out, said)
