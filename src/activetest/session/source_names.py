"""The pool file (and the in-context examples' file) as a session file names them:
never by a local path.

A session file is shared; the folder a pool was read from is the user's own
(``/home/me/data/pool.csv``). The config's ``pool.source`` and ``examples.source`` are
names for people only: no later command re-opens them (the items are copied into the
session file at ``init``). New sessions store the file's last component (``pool.csv``)
and the SHA-256 of its bytes (``sha256``: a file given again can be confirmed to be the
same one); ``init`` still says the path as given. Sessions made before keep their
stored path; nothing computed from it changes (no number reads it).

Model specs (``table:/abs/t.csv``, ``answers:/abs/a.jsonl``) are named by
:mod:`activetest.session.spec_files` (a table a later command reads again is found by its
digest); the score cache folder keeps its path (later commands read it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SHORT_DIGEST", "SourceName", "distinguishing_names", "file_sha256", "of_file",
           "pool_source", "published_source", "shown_source", "source_name"]

#: Hex digits of a file's SHA-256 shown beside its name (enough to tell files apart).
SHORT_DIGEST = 12

#: ``source`` values that name no file (items given in Python).
_NO_FILE = ("", "<items>")
#: How a pool read from the hub by name starts its ``source``
#: (:func:`activetest.data.pool.load_hub_pool`): a name, not a local path.
_HUB = "hf://"


@dataclass(frozen=True)
class SourceName:
    """A file as the session file names it.

    Attributes:
        source: its last path component (a glob's last pattern component).
        sha256: SHA-256 of its bytes; empty where it is no regular file (a folder,
            a glob) and no digest was given.
        unzipped: ``sha256`` is of the file's decompressed text, not of its bytes: a
            classification session's ``.gz`` pool (the pool reader digests the text it
            reads, :func:`activetest.data.pool.load_pool`), where ``sha256sum pool.csv.gz``
            gives another digest and ``gzip -dc pool.csv.gz | sha256sum`` this one.
        shards: ``source`` is a hub snapshot folder, not a file, and ``sha256`` is of
            the bytes of this many shard files of its split, in name order
            (:func:`activetest.data.pool.load_hub_pool`); 0: not a snapshot.
        hub: ``source`` is a hub name (``hf://NAME/CONFIG/SPLIT``) the ``datasets``
            library read: no file was read here, and no digest is stored.
    """

    source: str
    sha256: str = ""
    unzipped: bool = False
    shards: int = 0
    hub: bool = False


#: (real path, size, mtime) -> SHA-256: a file is read once per process while unchanged
_DIGESTS: dict[tuple[str, int, int], str] = {}


def _digest(path: Path) -> str:
    """SHA-256 of a regular file's bytes; empty for anything else or unreadable."""
    try:
        if not path.is_file():
            return ""
        st = path.stat()
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
        if key in _DIGESTS:
            return _DIGESTS[key]
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        _DIGESTS[key] = digest.hexdigest()
        return _DIGESTS[key]
    except OSError:
        return ""


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the bytes of the regular file ``path`` (hex); empty for anything else
    or a file that cannot be read. Read once per process while its size and mtime stay."""
    return _digest(Path(path))


def source_name(given: str | os.PathLike[str], sha256: str = "") -> SourceName:
    """``given``'s name: its last component, with ``sha256`` (computed from the file
    where not given and ``given`` is a regular file)."""
    text = os.fspath(given)
    parts = [p for p in Path(text).parts if p not in (os.sep, "/", "\\")]
    name = parts[-1] if parts else text
    return SourceName(name, sha256 or _digest(Path(text)))


def distinguishing_names(paths: Sequence[str]) -> list[str]:
    """Each path's last component, or where another path shares it, its shortest suffix
    of components no other path ends with (``a/preds.csv``, ``b/preds.csv``)."""
    parts = [tuple(p for p in Path(os.path.abspath(x)).parts if p != os.sep) or (x,)
             for x in paths]
    out = []
    for p in parts:
        others = [q for q in parts if q != p]
        k = next((k for k in range(1, len(p) + 1)
                  if not any(q[len(q) - k:] == p[len(p) - k:] for q in others)), len(p))
        out.append("/".join(p[len(p) - k:]))
    return out


def pool_source(pool: Any) -> dict[str, Any]:
    """The ``source`` (and ``sha256``) a harness session stores of its ``--pool``: a
    file, folder or glob by :func:`source_name`; several (lm-eval's samples files) by
    their names joined with ", " (two of one name by their shortest distinguishing
    suffix), without a digest."""
    if isinstance(pool, (list, tuple)):
        given = [os.fspath(p) for p in pool]
        return {"source": ", ".join(distinguishing_names(given))}
    return published_source({"source": os.fspath(pool)})


def published_source(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` (a pool's or the examples' provenance: ``source``, ``format``,
    ``sha256``, ...) as stored: its ``source`` replaced by :func:`source_name`'s name
    and its ``sha256`` kept or computed; items given in Python (``<items>``) unchanged."""
    out = dict(info)
    src = out.get("source")
    if not isinstance(src, (str, os.PathLike)) or os.fspath(src) in _NO_FILE:
        return out
    if os.fspath(src).startswith(_HUB):  # a hub name, kept whole (its last part, the
        return out  # split, named no dataset)
    given = out.get("sha256")
    named = source_name(src, given if isinstance(given, str) else "")
    out["source"] = named.source
    if named.sha256:
        out["sha256"] = named.sha256
    return out


def shown_source(info: Any, kind: str) -> SourceName | None:
    """The file(s) a session's config names for its pool (``info``: the config's
    ``pool`` mapping; ``kind``: the session's kind) as a report shows them: by name,
    never a local path, with the SHA-256 the session stores (empty where it stores none:
    a folder, a glob, several files, graded sessions made before), and what that digest
    is of (:attr:`SourceName.unzipped`): a classification session's ``.gz`` pool stores
    the digest of the unzipped text (the pool reader's), a graded or harness session's
    that of the file's bytes (:func:`published_source`, :func:`pool_source`); what is
    stored is not changed (QA: "pool.csv.gz (sha256 ...)" matched no ``sha256sum`` of
    the file, unsaid). New sessions store names already
    (:func:`published_source`, :func:`pool_source`: kept as stored, ``a/preds.csv,
    b/preds.csv`` too); a session made before stored the path, read here as its last
    component (several paths joined by ", ": each by its shortest distinguishing
    suffix, :func:`distinguishing_names`). None: no file (items given in Python, or
    nothing stored)."""
    if not isinstance(info, Mapping):
        return None
    src = info.get("source") or info.get("path")
    if not isinstance(src, str) or src.strip() in _NO_FILE:
        return None
    parts = src.split(", ")
    if any(os.path.isabs(p) for p in parts):  # a session made before: its path
        src = ", ".join(distinguishing_names(parts))
    digest = info.get("sha256") if isinstance(info.get("sha256"), str) else ""
    shards = info.get("shards")
    return SourceName(src, digest, bool(digest) and kind == "classification"
                      and src.lower().endswith(".gz"),
                      shards if isinstance(shards, int) and shards > 0 else 0,
                      src.startswith(_HUB))


def of_file(f: SourceName | None) -> str:
    """What follows a pool's size where a report's header or ``status`` says it: ``" of
    pool.csv (sha256 2077bd67c0a6…)"``, the files by name (:func:`shown_source`) and the
    first :data:`SHORT_DIGEST` hex digits of the SHA-256 the session stores (QA: "Pool: N
    items" named no file: which pool the number is of), said to be of the unzipped text
    where it is (:attr:`SourceName.unzipped`: ``" of pool.csv.gz (sha256 of the unzipped
    text 2077bd67c0a6…)"``); a hub snapshot folder's as of its shard files
    (:attr:`SourceName.shards`: ``" of imdb (a hub snapshot folder, not a file: sha256 of
    the bytes of its 2 shard files in name order 2077bd67c0a6…)"``), a pool the
    ``datasets`` library read from the hub by its name, with no digest, as read on no
    file (:attr:`SourceName.hub`); "" where no file is known."""
    if f is None or not f.source:
        return ""
    if f.hub:  # QA: "of train" (the split), as if a file of that name had been read
        return (f" of {f.source} (read from the hub by the datasets library: no file was "
                f"read on this machine, so no digest)")
    if f.shards and f.sha256:  # QA: a folder's digest, said as if of a file of its name
        files = "its shard file's bytes" if f.shards == 1 else \
            f"the bytes of its {f.shards} shard files in name order"
        return (f" of {f.source} (a hub snapshot folder, not a file: sha256 of {files} "
                f"{f.sha256[:SHORT_DIGEST]}…)")
    of = "of the unzipped text " if f.unzipped else ""
    digest = f" (sha256 {of}{f.sha256[:SHORT_DIGEST]}…)" if f.sha256 else ""
    return f" of {f.source}{digest}"
