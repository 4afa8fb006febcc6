"""Whether a path given as input is a glob pattern: one rule for every reader.

A pool, a ``table:`` spec, a ``--history`` path or a target's files may be given as a
glob pattern (``'run/samples_*.jsonl'``, ``'run/samples_[ab]*.jsonl'``); every reader
tells a pattern from a path by :func:`is_pattern`, so one string is never read as a
pattern in one place and as a file name in another (QA: the pool reader counted only
``*`` and ``?``, the lm-eval reader ``[`` too: ``--pool 'run/samples_sst2_0[0-9].jsonl'``
was "no such file" where ``--target 'table:...'`` of the same pattern read its file).

The glob characters are Python's :mod:`glob`'s: ``*``, ``?`` and ``[`` (a ``[...]``
class). A file or folder that exists under the exact name given wins over the pattern:
``data[1].csv`` is that file where it exists, and a pattern only where it does not
(then it matches ``data1.csv``); to match a literal ``[`` in a pattern, write ``[[]``.

This module imports nothing but the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["GLOB_CHARS", "has_glob_chars", "is_pattern"]

#: The characters that make a path a glob pattern (:func:`glob.has_magic`'s).
GLOB_CHARS = "*?["


def has_glob_chars(text: str | os.PathLike[str]) -> bool:
    """Whether ``text`` holds a glob character (:data:`GLOB_CHARS`: ``*``, ``?``, ``[``),
    whatever exists on disk (a missing path's message says the shell passed a pattern
    on unexpanded; the folder a pattern is looked for in ends before its first such
    component)."""
    return any(c in str(text) for c in GLOB_CHARS)


def is_pattern(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is read as a glob pattern: it holds a glob character
    (:func:`has_glob_chars`) and no file or folder of that exact name exists (``~``
    expanded). An existing file whose name holds ``[``, ``*`` or ``?`` is that file,
    never a pattern; a broken link of that name is not a file, so the name is a pattern.
    """
    return has_glob_chars(path) and not Path(str(path)).expanduser().exists()
