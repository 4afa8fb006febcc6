"""Models for a session: specs as stored, scorers built from them, scores with provenance.

A session stores each model as a *spec* string (``smollm2-135m``, ``table:/abs/preds.csv``,
``openai:http://host/v1#model``). :func:`stored_spec` is the form written to the file
and shown to people: file paths made absolute (later commands work from any folder)
(a new session then names a ``table:`` file by its name and digest, never its local
path: :mod:`activetest.session.spec_files`, which finds it again for a later command)
and every credential removed from a URL, in any spelling (``user:password@``,
``?api_key=...``; see :mod:`activetest.redaction`): credentials never reach the file,
and a server that needs them gets them from the environment, see
:mod:`activetest.models.openai`. :class:`Scoring` builds scorers from specs (with the
score cache) and returns class log-probs with their provenance.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.task import Item, Task
from activetest.session.source_names import file_sha256
from activetest.session.store import (
    SessionError,
    SessionLockedError,
    SessionReadOnlyError,
    SessionStore,
    SessionWriteError,
)

__all__ = ["Scoring", "jsonable", "normalise_spec", "recheck_rows", "score_rows", "session_spec",
           "stored_spec"]


def normalise_spec(spec: str) -> str:
    """Make file paths in a model spec absolute, so later commands work from any folder."""
    from activetest.models.registry import BACKENDS, CALIBRATED

    if spec.startswith(CALIBRATED):
        return CALIBRATED + normalise_spec(spec[len(CALIBRATED):])
    head, sep, rest = spec.partition(":")
    if sep and head == "table" and rest:
        from activetest.models.table import normalise_table_spec

        return f"table:{normalise_table_spec(rest)}"
    if sep and head in BACKENDS:
        if head != "openai" and rest and Path(rest).expanduser().exists():
            return f"{head}:{Path(rest).expanduser().resolve()}"
        return spec
    p = Path(spec).expanduser()
    if p.exists() and not sep:
        return str(p.resolve())
    return spec


def stored_spec(spec: str) -> str:
    """The spec as written to the session file and shown: normalised, without credentials."""
    from activetest.models.openai import redact_spec

    return redact_spec(normalise_spec(spec))


def session_spec(given: str, known: Mapping[str, str] | None) -> str:
    """The spec ``given`` is in a session whose ``known`` specs (its ``model_files``)
    name their files by name: that stored spec where ``given`` is it or names its file by
    a path (:func:`activetest.session.spec_files.known_spec`), else :func:`stored_spec`."""
    if known:
        from activetest.session.spec_files import known_spec

        same = known_spec(given, known)
        if same is not None:
            return same
    return stored_spec(given)


def register_model(model: Any, raw_specs: dict[str, str], scorers: dict[str, Any],
                   known: Mapping[str, str] | None = None) -> str:
    """The stored spec of a model given as a spec (its raw form, credentials and all, kept
    in ``raw_specs`` under the stored one, the first given kept) or as a Scorer object
    (kept in ``scorers`` as ``object:<name>``). ``known``: the session's specs that name
    their file by name (its ``model_files``, spec -> SHA-256; None: a session made before
    them): such a spec given as stored, or naming that same file (same name, same digest)
    by a path, is that spec; another ``table:`` file is named by the shortest suffix of
    its path no other stored file has (:func:`activetest.session.spec_files.new_name`)."""
    if isinstance(model, (str, os.PathLike)):
        raw = os.fspath(model)
        if known is not None:
            from activetest.session.spec_files import known_spec, new_name

            same = known_spec(raw, known)
            if same is None:  # a table first compared now: by its name too (its digest
                # joins model_files where its rows are stored: _found_file)
                same = (new_name(normalise_spec(raw), known) or (None,))[0]
            if same is not None:
                if same != raw:
                    raw_specs.setdefault(same, raw)
                return same
        spec = stored_spec(raw)
        raw_specs.setdefault(spec, raw)
        return spec
    spec = f"object:{getattr(model, 'name', type(model).__name__)}"
    scorers[spec] = model
    return spec


#: What to do about a prompt too long for a model given as a spec (a spec names no
#: context size and no truncation: those are Python options of the scorer).
OVERFLOW_ADVICE = ("shorten the item's text in the pool, use fewer in-context examples "
                   "(--shots, --target-shots), or use a model with a longer context window "
                   "(in Python: pass a scorer built with a larger n_ctx, or truncate=True)")
#: What to do about two classes whose label words start with the same token.
COLLISION_ADVICE = ("give the classes label words that differ in their first token (a task "
                    "file's classes, --task FILE.toml), score whole words (--label-scoring "
                    "full-sequence, llama.cpp and transformers models), or use another model")


class Scoring:
    """Builds scorers from specs (with the score cache) and scores items with provenance.

    Args:
        task, examples: the prompt's task and in-context examples (all of them; a
            call uses the first ``shots``).
        scorers: spec -> scorer objects to use instead of building from the spec.
        cache_dir, use_cache: the score cache.
        threads: CPU threads per llama.cpp model built from a spec.
        raw_specs: stored spec -> the spec as the user gave it (with credentials),
            known only in the process that created the session.
        label_scoring: how a model built from a spec reads each class from its label
            word: ``first-token`` (the paper's choice) or ``full-sequence`` (the whole
            word; llama.cpp and transformers models, refused for ``openai:``; a
            ``table:`` file's scores are read as they are). One mode for every model of a
            session, stored in its config (``--label-scoring``): a per-model spec option
            would let the target and a compared model be read differently, and would
            change the stored spec, which names the role (``compare:<spec>``). Scorer
            objects are the caller's, used as built.
    """

    def __init__(self, task: Task, examples: Sequence[Item], scorers: Mapping[str, Any],
                 cache_dir: str | None, use_cache: bool, threads: int | None = None,
                 raw_specs: Mapping[str, str] | None = None,
                 label_scoring: str = "first-token") -> None:
        self.task = task
        self.examples = list(examples)
        self.scorers = scorers
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.threads = threads
        self.raw_specs = dict(raw_specs or {})
        self.label_scoring = label_scoring

    def label_options(self, spec: str) -> dict[str, Any]:
        """The scorer options of :attr:`label_scoring` for the stored spec ``spec``.

        Raises:
            ValueError: the model's backend cannot score that way (``openai:`` and
                full-sequence), naming the model.
        """
        from activetest.models.registry import label_scoring_options

        return label_scoring_options(self.raw_specs.get(spec, spec), self.label_scoring,
                                     name=repr(spec))

    def scorer(self, spec: str) -> Any:
        """The scorer for a stored spec (built once per :class:`Scoring`)."""
        if spec in self.scorers:
            return self.scorers[spec]
        if spec.startswith("object:"):
            raise SessionError(f"model {spec!r} was given as an object when the session was "
                               f"created; pass it again: Session.open(..., scorers={{{spec!r}: "
                               f"scorer}})")
        from activetest.models.registry import get_scorer, parse_spec

        raw = self.raw_specs.get(spec, spec)
        backend, _ = parse_spec(raw)
        options = {"n_threads": self.threads} if self.threads and backend == "llamacpp" else {}
        scorer = get_scorer(raw, **options, **self.label_options(spec))
        if self.use_cache and backend != "table":
            from activetest.models.cache import CachedScorer

            scorer = CachedScorer(scorer, self.cache_dir)
        return scorer

    def can_run_side_by_side(self, specs: Iterable[str]) -> bool:
        """Whether these models may score at the same time without fighting for cores.

        Not with a transformers model built from a spec: torch takes every core by
        default, so a second model beside it would only oversubscribe the CPU.
        Scorer objects passed in are the caller's to configure, but one object is
        never used by two threads at once (a llama.cpp context is not thread-safe).
        """
        from activetest.models.registry import parse_spec

        specs = list(specs)
        objects = [id(self.scorers[s]) for s in specs if s in self.scorers]
        if len(objects) != len(set(objects)):
            return False
        for spec in specs:
            if spec in self.scorers or spec.startswith("object:"):
                continue
            try:
                backend, _ = parse_spec(self.raw_specs.get(spec, spec))
            except (ValueError, OSError):
                return False
            if backend == "hf":
                return False
        return True

    def score(self, role: str, spec: str, items: Sequence[Item], shots: int,
              progress: bool) -> tuple[np.ndarray, dict[str, Any]]:
        """``(len(items), C)`` class log-probs of the model ``spec`` and their provenance.

        Raises:
            ValueError: the model returned the wrong shape or non-finite values.
        """
        from activetest.models import ContextOverflowError
        from activetest.models.cache import scorer_identity
        from activetest.models.labels import LabelTokenCollision
        from activetest.session.store import now

        scorer = self.scorer(spec)
        examples = self.examples[:shots]
        # the scorer's advice is for its Python caller (n_ctx=, truncate=, full_sequence=);
        # here the model is a spec, so say which one refused and what can be done with it
        try:
            lp = np.asarray(scorer.score(self.task, items, examples, progress=progress),
                            dtype=np.float64)
        except ContextOverflowError as exc:
            raise ContextOverflowError(exc.facts, OVERFLOW_ADVICE,
                                       model=f"{spec!r} ({role})") from None
        except LabelTokenCollision as exc:
            raise LabelTokenCollision(exc.word_a, exc.word_b, exc.token_id,
                                      index_a=exc.index_a, index_b=exc.index_b,
                                      model=f"{spec!r} ({role})",
                                      advice=COLLISION_ADVICE) from None
        if lp.shape != (len(items), self.task.n_classes):
            raise ValueError(f"model {spec!r} returned scores of shape {lp.shape} for "
                             f"{len(items)} items and {self.task.n_classes} classes")
        if not np.all(np.isfinite(lp)):
            bad = int(np.flatnonzero(~np.isfinite(lp).all(axis=1))[0])
            raise ValueError(f"model {spec!r} gave non-finite log-probs for item "
                             f"{items[bad].id!r}")
        try:
            ident: Any = scorer_identity(scorer)
        except Exception:  # identity is provenance only; never fail scoring for it
            ident = {"name": getattr(scorer, "name", "?")}
        prov = {"role": role, "spec": spec, "scorer": ident, "n_examples": len(examples),
                "example_ids": [e.id for e in examples], "scored_at": now(),
                "n_items": len(items)}
        path = getattr(scorer, "scoring_path", None)  # openai: which request shape scored
        recorded = path() if callable(path) else None
        if recorded is not None:
            prov["scoring_path"] = recorded.as_provenance()
        how = getattr(scorer, "label_scoring", None)  # first token or whole word, per class
        labels = how(self.task) if callable(how) else None
        if labels is not None:
            prov["label_scoring"] = labels.as_provenance()
        made_elsewhere = getattr(scorer, "prompt_provenance", None)
        if callable(made_elsewhere):
            # predictions read from a file: the session's prompt and examples were not
            # used; record what the file says (e.g. lm-eval's n-shot) or "unknown"
            prov.update(example_ids=None, **made_elsewhere())
        return lp, jsonable(prov)


def score_rows(store: SessionStore, scoring: Scoring, role: str, spec: str,
               items: Sequence[Item], rows: np.ndarray, shots: int, progress: bool,
               ) -> np.ndarray:
    """``(N, C)`` log-probs of ``role`` with at least ``rows`` scored (NaN elsewhere).

    Rows the session file lacks (PE targets, compared models) are scored now and
    stored, so the next call finds them; on a session file that cannot be written
    (read-only, a full disk, locked by another command) they are scored and used
    without storing.
    """
    stored = store.scores(role)
    n, c = len(items), scoring.task.n_classes
    lp = stored.logprobs.copy() if stored is not None else np.full((n, c), np.nan)
    missing = rows[~np.isfinite(lp[rows]).all(axis=1)]
    if missing.size == 0:
        return lp
    scored = stored is not None and bool(np.isfinite(lp).all(axis=1).any())
    publish, edited = _found_file(store, scoring, role, spec, scored)
    if stored is not None:
        check_same_model(scoring, role, spec, items, lp, stored.provenance, shots,
                         publish=publish, edited=edited)
    new, prov = scoring.score(role, spec, [items[i] for i in missing], shots, progress)
    prov = publish(prov)
    lp[missing] = new
    if store.writable:
        try:
            if stored is None:
                store.put_scores(role, spec, np.full((n, c), np.nan), {"spec": spec})
            store.update_score_rows(role, missing.tolist(), new, prov)
        except (SessionWriteError, SessionReadOnlyError, SessionLockedError):
            pass  # a full disk (or another command's lock): used now, scored again next time
    return lp


def _found_file(store: SessionStore, scoring: Scoring, role: str, spec: str,
                scored: bool) -> tuple[Any, bool]:
    """Where ``spec`` names its file by name and digest (a new session's ``table:``,
    :mod:`activetest.session.spec_files`), find the file on this machine for ``scoring``
    (unless this process was given it); returns the function that names it by its
    stored name in a provenance (the identity where not so named), and whether the file
    is the stored one edited since (its SHA-256 another). A table first compared now is
    so named from now on (:func:`_named_now`); a ``TableScorer`` passed in names its
    files by their names (a session made before ``model_files``: as it was).

    An edited file (found where this machine recorded it, given by its path, or passed
    in as a ``TableScorer`` of one file) is used only where ``scored`` (rows of ``role``
    are stored): :func:`check_same_model` then scores them again, whatever the identity.

    Raises:
        SessionError: the file is not found (naming it, its digest, how to point to it),
            or is edited and nothing of ``role`` is stored to check it against
            (:func:`activetest.session.spec_files.edited_refusal`).
    """
    from activetest.session import spec_files

    files = store.config().model_files
    if files is None:  # a session made before: as it was
        return (lambda prov: prov), False
    digest = files.get(spec)
    if spec in scoring.scorers:  # a scorer object (a TableScorer): its files by name
        scorer = scoring.scorers[spec]
        names = spec_files.scorer_names(scorer, spec) \
            if digest is not None or spec.startswith("object:") else {}
        paths = [os.fspath(p) for p in getattr(scorer, "files", ()) or ()]
        edited = (digest is not None and len(paths) == 1 and bool(names)
                  and _edited(spec, digest, paths[0], store, role, scored))
        return (lambda prov: spec_files.publish_provenance(prov, names)), edited
    if digest is None:
        return _named_now(store, scoring, spec), False
    if spec not in scoring.raw_specs:
        # (an edited file: checked here, for every way it comes: _edited)
        scoring.raw_specs[spec] = spec_files.locate(spec, digest, store.path, role,
                                                    checkable=True)
    raw = scoring.raw_specs[spec]
    f = spec_files.spec_file(raw)
    edited = f is not None and _edited(spec, digest, f.path, store, role, scored)
    local = spec_files.local_names({spec: raw})
    return (lambda prov: spec_files.publish_provenance(prov, local)), edited


def _edited(spec: str, digest: str, path: str, store: SessionStore, role: str,
            scored: bool) -> bool:
    """Whether the file ``path`` read for the stored ``spec`` is no longer of its stored
    SHA-256 ``digest`` (its rows then checked: :func:`check_same_model`).

    Raises:
        SessionError: it is not, and nothing of ``role`` is stored (not ``scored``) to
            check it against.
    """
    from activetest.session import spec_files

    if file_sha256(path) == digest:
        return False
    if not scored:
        raise spec_files.edited_refusal(spec, digest, os.path.abspath(path), store.path,
                                        role)
    return True


def _named_now(store: SessionStore, scoring: Scoring, spec: str) -> Any:
    """A ``table:`` spec first compared after ``init``, named by its name
    (:func:`register_model`): its SHA-256 joins the config's ``model_files`` (where the
    session file can be written) and this machine's index, so a later command finds its
    file as it finds ``init``'s; returns the function that names it in a provenance."""
    from activetest.session import spec_files

    raw = scoring.raw_specs.get(spec)
    local = spec_files.local_names({spec: raw}) if raw is not None else {}
    if not local:
        return lambda prov: prov
    f = spec_files.renamed_files({spec: raw})[spec]
    digest = file_sha256(f.path)
    if store.writable:
        def add(doc: dict[str, Any]) -> dict[str, Any]:
            return {"model_files": {**(doc.get("model_files") or {}), spec: digest}}
        # (not written: its rows are not stored either, so nothing names it)
        with contextlib.suppress(SessionWriteError, SessionReadOnlyError, SessionLockedError):
            store.update_config(add)
    spec_files.remember({spec: raw})
    return lambda prov: spec_files.publish_provenance(prov, local)


#: Earlier rows scored again when a model's identity changed, and the tolerance (nats) of
#: their log-probs: a touched file or a moved model scores the same; another model not.
RECHECK_ROWS = 20
RECHECK_TOLERANCE = 1e-3
#: Of :data:`RECHECK_ROWS`: the first and the last stored rows each (the rest a seeded
#: sample of the rows between), and the sample's seed (:func:`recheck_rows`).
RECHECK_ENDS = 5
RECHECK_SEED = 0x5EC4


def recheck_rows(done: np.ndarray) -> np.ndarray:
    """The stored rows (``done``: their pool rows, ascending) that a changed model must
    score as before (:func:`check_same_model`): all of them up to :data:`RECHECK_ROWS`,
    else the first and the last :data:`RECHECK_ENDS` and a sample of the rows between
    (drawn without replacement with the fixed seed :data:`RECHECK_SEED`), ascending.

    Spread over the whole stored set, so that a file edited only in its later rows is
    seen (QA: only the first 20 rows were scored again, and an edit past them passed);
    the same rows every time (no random state), and never more than
    :data:`RECHECK_ROWS` of them, whatever the number stored (the cost is the model's
    scoring of those rows; choosing them is O(:data:`RECHECK_ROWS`)).
    """
    done = np.asarray(done, dtype=np.int64)
    if done.size <= RECHECK_ROWS:
        return done
    k = RECHECK_ROWS - 2 * RECHECK_ENDS
    rng = np.random.default_rng(RECHECK_SEED)
    middle = rng.choice(done.size - 2 * RECHECK_ENDS, size=k, replace=False) + RECHECK_ENDS
    picks = np.concatenate([np.arange(RECHECK_ENDS), np.sort(middle),
                            np.arange(done.size - RECHECK_ENDS, done.size)])
    return done[picks]


def check_same_model(scoring: Scoring, role: str, spec: str, items: Sequence[Item],
                     lp: np.ndarray, provenance: Mapping[str, Any], shots: int, *,
                     publish: Any = None, edited: bool = False) -> None:
    """Refuse to score more rows of ``role`` with a model other than the one that scored
    its earlier rows (a PE target or a compared model scored on the labelled items as they
    arrive). Where the model's identity (file path, size, mtime, settings:
    :func:`~activetest.models.cache.scorer_identity`) is the one recorded, nothing is
    done; where it changed, up to :data:`RECHECK_ROWS` earlier rows, spread over all
    of them (:func:`recheck_rows`), are scored again and must give the same log-probs (a
    copied or touched file does): QA replaced a PE target's ``table:`` file between two
    imports and the estimate mixed two models' predictions, 30 items each, without a
    word.

    ``publish``: names the identity as it was stored (a file by its stored name:
    :mod:`activetest.session.spec_files`), so that the same file is the same identity.
    ``edited``: the model's file is not of the SHA-256 the session stored for it (an
    edit that kept its size and mtime keeps its identity): the rows are scored again
    whatever the identity.

    Raises:
        SessionError: the model now scores earlier items otherwise, naming the item and
            both values.
    """
    from activetest.models.cache import scorer_identity

    was = provenance.get("scorer")
    done = np.flatnonzero(np.isfinite(lp).all(axis=1))
    if done.size == 0 or (was is None and not edited):
        return
    try:
        now_ident = jsonable(scorer_identity(scoring.scorer(spec)))
        if publish is not None:  # named as stored (a file by its name, not its path)
            now_ident = publish({"scorer": now_ident})["scorer"]
    except Exception:  # identity is provenance only: the values decide below
        now_ident = None
    if now_ident == was and not edited:
        return
    again = recheck_rows(done)
    got, _ = scoring.score(role, spec, [items[i] for i in again], shots, False)
    off = np.abs(got - lp[again]).max(axis=1)
    if np.all(off <= RECHECK_TOLERANCE):
        return
    j = int(np.argmax(off > RECHECK_TOLERANCE))
    k = int(again[j])
    raise SessionError(
        f"model {spec!r} ({role}) is not the one that scored this session's earlier items: "
        f"scored again now, item {items[k].id!r} gets log-probs "
        f"{np.round(got[j], 4).tolist()} where it got {np.round(lp[k], 4).tolist()} "
        f"(the model or its file changed since {provenance.get('scored_at', 'then')}); "
        f"scoring the new items with it would mix two models in one estimate. Restore the "
        f"model (file) that scored them, or start a new session for the new one")


def jsonable(obj: Any) -> Any:
    """``obj`` as JSON-safe data (numpy scalars to Python, non-finite floats to strings)."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(obj) else str(obj)
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    return str(obj)
