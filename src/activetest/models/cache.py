"""On-disk, resumable cache of class log-probabilities.

Scoring a pool of thousands of items with a surrogate takes minutes to hours;
the scores depend only on the model, the backend settings, the task's prompt
and the in-context examples, and each item's id and fields. :class:`CachedScorer`
wraps any :class:`~activetest.models.base.Scorer` and stores its scores under

    <cache_dir>/scores/<entry key>/meta.json       what the key was made of (readable)
    <cache_dir>/scores/<entry key>/chunk-<k>.npz   item keys + (n, C) float64 rows + checksum
    <cache_dir>/scores/<entry key>/labels.json     how the label words were scored

The **entry key** is a sha256 of the scorer's identity (its ``cache_identity()``
dict: backend, model file path/size/mtime, settings; or class and name when the
scorer has none), the task (instruction, templates, label words) and the
in-context examples (ids, fields, labels, in order). Each **item key** is a
sha256 of the item's id and fields, so any subset or order of a scored pool hits
the cache.

Missing items are scored in chunks and every chunk is written as soon as it is
done (temporary file + ``os.replace``, so a reader never sees half a file): an
interrupted run keeps its finished chunks and the next run scores only the rest.
A chunk whose checksum does not match (or that cannot be read) is reported with
a warning, deleted and its items recomputed.

``labels.json`` is the scorer's :class:`~activetest.models.labels.LabelScoring`
(first-token or full-sequence scoring, each label word's token count), written when
the scorer scores items of the entry. A run served wholly from the cache loads no
model: it reads the fact from there, gives the scorer's
:class:`~activetest.models.labels.MultiTokenLabelNotice` from it where due, and hands
it on (:meth:`CachedScorer.label_scoring`). Entries written before it was kept have
no such file: the fact is then unknown (None).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest._tmpfiles import tmp_prefix
from activetest.data.task import Item, Task
from activetest.models.base import Scorer
from activetest.models.bundled import default_cache_dir
from activetest.models.labels import (
    FULL_SEQUENCE_REMEDY,
    LabelScoring,
    LabelScoringLog,
)
from activetest.redaction import redact
from activetest.supervise import note

__all__ = [
    "CacheCorruptionWarning",
    "CachedScorer",
    "ScoreCache",
    "entry_key",
    "item_key",
    "scorer_identity",
]

CACHE_FORMAT = 1


class CacheCorruptionWarning(UserWarning):
    """A cache file was unreadable or failed its checksum and will be recomputed."""


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def scorer_identity(scorer: Scorer) -> dict[str, Any]:
    """What identifies a scorer's outputs: its ``cache_identity()`` plus its class.

    Backends should define ``cache_identity() -> dict`` (JSON-serialisable) naming
    the backend, the model (file path, size and mtime, or a hash) and every setting
    that changes the scores. Without it only the class and ``name`` are used, so a
    changed model file under the same name would not be noticed.
    """
    cls = type(scorer)
    ident: dict[str, Any] = {"class": f"{cls.__module__}.{cls.__qualname__}"}
    fn = getattr(scorer, "cache_identity", None)
    if callable(fn):
        ident["identity"] = fn()
    else:
        ident["name"] = getattr(scorer, "name", cls.__name__)
    return ident


_PROMPT_FIELDS = ("instruction", "classes", "item_template", "example_template", "answer_key")


def _task_identity(task: Task) -> dict[str, Any]:
    # Only what shapes the prompt and the label tokens: renaming a task or changing
    # its display names or data columns does not change the scores.
    return {f: getattr(task, f) for f in _PROMPT_FIELDS}


def entry_key(scorer: Scorer, task: Task, examples: Sequence[Item]) -> tuple[str, dict[str, Any]]:
    """The cache entry key and the (JSON-serialisable) record it hashes."""
    record = {
        "format": CACHE_FORMAT,
        "scorer": scorer_identity(scorer),
        "task": _task_identity(task),
        "examples": [{"id": e.id, "fields": dict(e.fields), "label": e.label} for e in examples],
    }
    return _sha(_json(record)), record


def item_key(item: Item) -> str:
    """sha256 of an item's id and fields (its label does not change its scores)."""
    return _sha(_json([item.id, dict(item.fields)]))


def _checksum(keys: Sequence[str], logprobs: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update("\n".join(keys).encode("utf-8"))
    h.update(np.ascontiguousarray(logprobs, dtype="<f8").tobytes())
    return h.hexdigest()


def _atomic_write(path: Path, write: Any) -> None:
    # the writer's pid in the name lets a later run (or the CLI's supervisor, after a
    # native crash) remove what a dead writer left (activetest._tmpfiles.sweep_tmp)
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(path.name), suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ScoreCache:
    """The chunk store under ``<root>/scores`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.scores_dir = self.root / "scores"
        note(event="cache", tmp_dirs=[str(self.scores_dir)])  # swept after a native crash

    def entry_dir(self, key: str) -> Path:
        """Folder holding one entry's chunks."""
        return self.scores_dir / key

    def write_meta(self, key: str, record: dict[str, Any]) -> None:
        """Write the entry's readable ``meta.json`` (once)."""
        d = self.entry_dir(key)
        d.mkdir(parents=True, exist_ok=True)
        meta = d / "meta.json"
        if not meta.exists():
            # no credential in any spelling (the identity holds none; this is the last guard)
            text = redact(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False))
            _atomic_write(meta, lambda f: f.write(text.encode("utf-8")))

    def write_label_scoring(self, key: str, scoring: LabelScoring) -> None:
        """Keep how the entry's label words were scored (``labels.json``, replaced)."""
        d = self.entry_dir(key)
        d.mkdir(parents=True, exist_ok=True)
        text = json.dumps(scoring.as_provenance(), indent=1, sort_keys=True, ensure_ascii=False)
        _atomic_write(d / "labels.json", lambda f: f.write(text.encode("utf-8")))

    def read_label_scoring(self, key: str) -> LabelScoring | None:
        """The entry's :class:`LabelScoring`; None where none was kept or it is unreadable."""
        try:
            data = json.loads((self.entry_dir(key) / "labels.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return LabelScoring.from_provenance(data)

    def load(self, key: str, n_classes: int) -> dict[str, np.ndarray]:
        """All valid rows of an entry, ``item key -> (C,) float64``.

        Corrupt or unreadable chunks are deleted with a :class:`CacheCorruptionWarning`.
        """
        rows: dict[str, np.ndarray] = {}
        d = self.entry_dir(key)
        if not d.is_dir():
            return rows
        for path in sorted(d.glob("chunk-*.npz")):
            try:
                with np.load(path, allow_pickle=False) as z:
                    keys = [str(k) for k in z["keys"]]
                    lp = np.asarray(z["logprobs"], dtype=np.float64)
                    stored = str(z["checksum"])
                if lp.shape != (len(keys), n_classes):
                    raise ValueError(f"shape {lp.shape}, expected ({len(keys)}, {n_classes})")
                if _checksum(keys, lp) != stored:
                    raise ValueError("checksum mismatch")
            except Exception as exc:  # any unreadable file is treated the same way
                warnings.warn(f"score cache file {path} is corrupt ({exc}); deleting it and "
                              f"recomputing its items", CacheCorruptionWarning, stacklevel=3)
                path.unlink(missing_ok=True)
                continue
            for k, row in zip(keys, lp, strict=True):
                rows[k] = row
        return rows

    def save_chunk(self, key: str, keys: Sequence[str], logprobs: np.ndarray) -> Path:
        """Persist one chunk of rows atomically; returns its path."""
        lp = np.ascontiguousarray(logprobs, dtype=np.float64)
        if lp.ndim != 2 or lp.shape[0] != len(keys):
            raise ValueError(f"chunk of {len(keys)} items has logprobs of shape {lp.shape}")
        d = self.entry_dir(key)
        d.mkdir(parents=True, exist_ok=True)
        keys = list(keys)
        path = d / f"chunk-{_sha(_json(keys))[:20]}.npz"
        checksum = _checksum(keys, lp)
        _atomic_write(path, lambda f: np.savez(f, keys=np.array(keys, dtype=np.str_),
                                                logprobs=lp, checksum=np.array(checksum)))
        return path


def _chunks(seq: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(seq), size):
        yield seq[start:start + size]


def _kept_of_gone_server(exc: Exception, kept: int, of: int, root: Path) -> Exception | None:
    """``exc`` said with the ``kept`` of ``of`` items the cache at ``root`` holds, where it
    is a server that went away mid-run
    (:class:`~activetest.models.openai_http.ServerGoneError`: the chunks scored before
    are kept, and the next run scores only the rest); else None."""
    from activetest.models.openai_http import ServerGoneError

    if not isinstance(exc, ServerGoneError):
        return None
    return exc.kept_in(kept, of, str(root))


class CachedScorer:
    """Wrap a :class:`Scorer` with the on-disk, resumable score cache.

    Args:
        scorer: any scorer; it is called only for items not in the cache.
        cache_dir: cache root (default :func:`~activetest.models.bundled.default_cache_dir`);
            scores go in ``<cache_dir>/scores``.
        chunk_size: items scored and persisted per inner call; smaller chunks lose
            less work on interruption, larger ones re-evaluate the prompt prefix less
            often (backends that keep their prefix state make this cheap).

    Attributes:
        hits, misses: item counts of the last :meth:`score` call.
    """

    def __init__(self, scorer: Scorer, cache_dir: str | os.PathLike[str] | None = None, *,
                 chunk_size: int = 256) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.scorer = scorer
        self.cache = ScoreCache(cache_dir)
        self.chunk_size = chunk_size
        self.name = scorer.name
        self.hits = 0
        self.misses = 0
        # the facts read from the cache (a run with no miss), and the notices they gave
        self._cached_labels = LabelScoringLog(getattr(scorer, "multi_token_remedy", None)
                                              or FULL_SEQUENCE_REMEDY)

    def cache_identity(self) -> dict[str, Any]:
        """The wrapped scorer's identity (caching does not change scores)."""
        return scorer_identity(self.scorer)

    def scoring_path(self) -> Any:
        """The wrapped scorer's ``scoring_path()`` (None when it has none or scored nothing)."""
        fn = getattr(self.scorer, "scoring_path", None)
        return fn() if callable(fn) else None

    def label_scoring(self, task: Task) -> LabelScoring | None:
        """How ``task``'s classes were read from their label words: the wrapped scorer's
        record where it scored the task, else the one kept with the cached scores (None:
        not known; see the module docstring)."""
        fn = getattr(self.scorer, "label_scoring", None)
        got = fn(task) if callable(fn) else None
        return got if got is not None else self._cached_labels.get(task)

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """Class log-probabilities, from the cache where present (see the module docstring)."""
        items = list(items)
        examples = list(examples)
        key, record = entry_key(self.scorer, task, examples)
        self.cache.write_meta(key, record)
        rows = self.cache.load(key, task.n_classes)
        keys = [item_key(it) for it in items]
        todo: dict[str, Item] = {}
        for k, it in zip(keys, items, strict=True):
            if k not in rows and k not in todo:
                todo[k] = it
        self.hits = len(items) - sum(1 for k in keys if k in todo)
        self.misses = len(items) - self.hits
        if todo:
            try:
                self._score_missing(task, list(todo.items()), examples, key, rows, progress)
            except Exception as exc:  # a server gone away: said with what is kept
                gone = _kept_of_gone_server(exc, sum(1 for k in keys if k in rows),
                                            len(items), self.cache.root)
                if gone is None:
                    raise
                raise gone from None
        elif self.label_scoring(task) is None:  # no model asked: the fact kept with the scores
            kept = self.cache.read_label_scoring(key)
            if kept is not None:
                self._cached_labels.record(task, kept, model=repr(self.name))
        out = np.empty((len(items), task.n_classes), dtype=np.float64)
        for i, k in enumerate(keys):
            out[i] = rows[k]
        return out

    def _score_missing(self, task: Task, todo: list[tuple[str, Item]], examples: list[Item],
                       key: str, rows: dict[str, np.ndarray], progress: bool) -> None:
        from activetest.models._util import forward_progress, progress_bar

        with progress_bar(len(todo), f"scoring {self.name} ({task.name})", progress) as advance:
            for chunk in _chunks(todo, self.chunk_size):
                chunk_keys = [k for k, _ in chunk]
                # the backend's own per-item steps move this bar (not one jump per chunk)
                with forward_progress(advance) as forwarded:
                    lp = np.asarray(self.scorer.score(task, [it for _, it in chunk], examples,
                                                      progress=progress), dtype=np.float64)
                done = min(forwarded(), len(chunk))
                if lp.shape != (len(chunk), task.n_classes):
                    raise ValueError(f"scorer {self.name!r} returned shape {lp.shape} for "
                                     f"{len(chunk)} items and {task.n_classes} classes")
                self.cache.save_chunk(key, chunk_keys, lp)
                fn = getattr(self.scorer, "label_scoring", None)
                scoring = fn(task) if callable(fn) else None
                if scoring is not None and self.cache.read_label_scoring(key) != scoring:
                    self.cache.write_label_scoring(key, scoring)
                for k, row in zip(chunk_keys, lp, strict=True):
                    rows[k] = row
                if done < len(chunk):  # a backend that reports no progress of its own
                    advance(len(chunk) - done)
