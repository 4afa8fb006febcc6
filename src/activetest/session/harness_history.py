"""Other models' lm-eval runs as the history of an lm-eval session.

``activetest init eval.db --pool POOL_RUN --target lm-eval --history DIR`` (docs/harness.md):
the design learns from other models' results on the same tasks, read from the folders
lm-eval ``--log_samples`` wrote for them (one ``samples_<task>_<date>.jsonl`` per task and
model; recursively). Their per-item value is **the session's own metric** (``acc`` by
default) under the pool run's filter, so a history cell means exactly what a label of the
target means.

**Joins never guess.** An lm-eval item is ``<task>/<doc_id>``, and ``doc_id`` is a position
in the task's split: a log's record joins a pool item only where its task and ``doc_id``
name the item AND its document is the pool's (the same fingerprint,
:func:`activetest.formats.lmeval_results.doc_fingerprint`); a record of another document
under a pool item's id refuses the whole history, naming the file and line, the item and
both documents. A response matrix (a file of item columns) holds no document, so it is
refused in such a session: its columns would be positions taken on trust. Records of
documents the pool does not have are counted and passed over, as are records of other
lm-eval filters.

**Rows are models**: the files of one model (by the model lm-eval's results file beside
them names, else the folder lm-eval wrote them in; a local path named by its last
component or its shortest distinguishing suffix, never whole) make one row, every task in
it; two
files of one model giving one document two values are refused (which run is meant is not
guessed). The target's own run cannot be recognised by its results (it has none before
its first round): a :class:`~activetest.session.create_history.HistoryTargetNotice` says
so unless ``--history-exclude NAME`` names it; rows identical to an earlier file's row
under another name count once, as in every history (:func:`activetest.data.history.join_history`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from activetest.formats.tables import missing_file
from activetest.session.history_neighbours import NeighbourUpdate
from activetest.session.store import SessionError

__all__ = ["HarnessHistory", "history_rows", "lmeval_history", "lmeval_target_settings",
           "pool_run_note", "rows_of_local_model", "target_in_history"]


@dataclass(frozen=True)
class HarnessHistory:
    """An lm-eval session's history, joined and turned into features (label-free).

    Attributes:
        columns: ``(N, 2 + r)`` the stored features
            (:func:`activetest.session.design.history_columns`).
        p_correct: ``(N,)`` the items' shrunk mean correctness over the history.
        info: the config's ``history`` record (with ``"neighbours"`` where the design has
            the neighbours' column).
        responses: ``(H, N)`` the joined response matrix the neighbours' column is learnt
            from (None: no column).
        models: its row names.
        files: each row's samples files (row name -> paths), to tell the pool run's own
            (:func:`pool_run_note`).
    """

    columns: np.ndarray
    p_correct: np.ndarray
    info: dict[str, Any]
    responses: np.ndarray | None
    models: tuple[str, ...]
    files: Mapping[str, Sequence[str]] = dataclasses.field(default_factory=dict)


def pool_run_note(hist: HarnessHistory, pool: Sequence[Any]) -> str | None:
    """The note ``init --surrogate pool-run --history`` gives where history rows are read
    from the pool run's own samples files (the pool's records ``pool``: the same file, or
    a copy of the same bytes): that run's results then serve twice (its choice features as
    the pool signal, its per-item results as a history row). Unbiased either way; the
    history is meant as other models' runs. Each file is hashed at most once, and only
    where its size is a pool file's."""
    from activetest.formats.history import file_sha256

    mine = [Path(f) for f in sorted({r.where.rsplit(": ", 1)[0] for r in pool})]
    mine = [p for p in mine if p.is_file()]
    real = {p.resolve() for p in mine}
    sizes = {p.stat().st_size for p in mine}
    sums: set[str] | None = None

    def is_mine(f: str) -> bool:
        nonlocal sums
        if Path(f).resolve() in real:
            return True
        if Path(f).stat().st_size not in sizes:
            return False
        sums = {file_sha256(p) for p in mine} if sums is None else sums
        return file_sha256(f) in sums

    rows = [m for m in hist.models if any(is_mine(f) for f in hist.files.get(m, ()))]
    if not rows:
        return None
    names = ", ".join(repr(m) for m in rows)
    leave = f"--history-exclude {names}" if len(rows) == 1 else \
        "--history-exclude with each"
    return (f"history row(s) {names} are read from the pool run's own samples files: with "
            f"--surrogate pool-run that run serves twice, as the pool signal and as a history "
            f"row (the estimate stays unbiased; the history is meant as other models' runs): "
            f"{leave} uses it once")


def _files(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[Path], list[str]]:
    """The samples files the ``--history`` paths name: folders recursively, samples
    files, and glob patterns of either (``'runs/*/'``: every model's folder); and the
    notes for a file named twice (the same folder given twice, a folder and a file in it:
    read once, said).

    Raises:
        SessionError: a path that names no samples file (an empty folder, a response
            matrix, lm-eval's results summary), named with what to give instead.
        FileNotFoundError: a path that does not exist, or a pattern that matches nothing,
            said as every missing input is (:func:`activetest.formats.tables.missing_file`,
            naming --history; QA: "--history nope: no such file or folder" and "the
            pattern matches nothing" were this reader's own words).
    """
    import glob

    from activetest.formats.globs import is_pattern
    from activetest.session.create_history import HISTORY_GIVEN_AS

    out: list[Path] = []
    seen: set[Path] = set()
    twice: list[str] = []
    for p in paths:
        text = str(p)
        if is_pattern(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise FileNotFoundError(missing_file(text, HISTORY_GIVEN_AS))
            found = [f for m in matches for f in _files_of(Path(m))]
        else:
            found = _files_of(Path(text))
        for f in found:
            if f.resolve() in seen:
                twice.append(str(f))
                continue
            seen.add(f.resolve())
            out.append(f)
    notes = [] if not twice else [
        f"history: {len(twice)} samples file(s) are given twice ({twice[0]}"
        f"{', ...' if len(twice) > 1 else ''}): read once"]
    return out, notes


def _files_of(path: Path) -> list[Path]:
    """The samples files of one folder or file (:func:`_files`)."""
    from activetest.formats.lmeval import lmeval_files, looks_like_lmeval
    from activetest.session.create_history import HISTORY_GIVEN_AS

    give = ("give the folder(s) lm-eval --log_samples wrote for the other models (their "
            "samples_<task>_<date>.jsonl files; their documents are checked against the "
            "pool's)")
    if path.is_file():
        name = path.name.lower()
        if name.startswith("results_") and name.endswith(".json"):
            raise SessionError(f"--history {path}: lm-eval's results summary, which holds "
                               f"no per-item results: {give}")
        if not looks_like_lmeval(path):
            raise SessionError(
                f"--history {path}: not an lm-eval samples file. In an lm-eval session the "
                f"items are '<task>/<doc_id>', and a doc_id is a position in the task's "
                f"split: a response matrix holds no document to confirm that its columns "
                f"are the pool's documents, so it is not joined: {give}")
        return [path]
    if path.is_dir():
        try:
            return lmeval_files(path)
        except ValueError:
            raise SessionError(f"--history {path}: no lm-eval samples file in the folder or "
                               f"below it: {give}") from None
    raise FileNotFoundError(missing_file(path, HISTORY_GIVEN_AS))


def _model_of(path: Path) -> str | None:
    """The model a samples file is of: the model its results file names, as written (a
    local path too: :func:`_models_of` names it); None where none is named (a run whose
    ``--model_args`` name no model has a random id as its results file's model name,
    which is not read: :func:`_models_of` names it by its folder). A results file that
    cannot be read is refused, named (QA: the folder named the model without a word)."""
    from activetest.formats.history import ResultsFileError, lmeval_stated_model

    try:
        return lmeval_stated_model(path)
    except ResultsFileError as exc:
        raise SessionError(f"--history: {exc}") from None


@dataclass(frozen=True)
class _Rows:
    """Which row each samples file is of (:func:`_models_of`).

    Attributes:
        names: each file -> its row's name (never a local path).
        folders: each folder that names a row (its files' results name no model),
            resolved -> the row's name (``--history-exclude FOLDER``: :func:`_row_names`).
        stated: each row named by a model at a local path -> that path as its results
            file wrote it (to tell it from the target's: :func:`target_in_history`).
        notes: where one model's runs at other n-shots were named apart, said.
    """

    names: Mapping[Path, str]
    folders: Mapping[Path, str]
    stated: Mapping[str, str]
    notes: tuple[str, ...] = ()


def _folder_names(folders: Sequence[Path], taken: set[str]) -> dict[Path, str]:
    """Each (resolved) folder of runs whose results name no model -> its row's name: its
    last component, or where another such folder shares it, its shortest suffix of path
    components no other folder ends with (as :func:`activetest.formats.model_ids.
    distinct_names` names local models), and no model's row is named (``taken``); never
    the whole local path (QA: ``/home/me/runs/h2/__main__`` landed in the session file
    and its reports)."""
    parts = {f: tuple(p for p in f.parts if p != f.anchor) or (f.anchor,) for f in folders}
    out: dict[Path, str] = {}
    for f, p in parts.items():
        others = [q for g, q in parts.items() if g != f]
        name = next((n for k in range(1, len(p) + 1)
                     if not any(q[len(q) - k:] == p[len(p) - k:] for q in others)
                     and (n := "/".join(p[len(p) - k:])) not in taken), None)
        out[f] = name if name is not None else f"{'/'.join(p)} (folder)"
    return out


def _models_of(files: Sequence[Path]) -> _Rows:
    """Each samples file's row (:class:`_Rows`): its model (:func:`_model_of`), a model at
    a local path named by its last component, or where another model of the files shares
    it, by its shortest distinguishing suffix
    (:func:`activetest.formats.model_ids.distinct_names`; QA: ``pretrained=/runs/a/
    checkpoint-1000`` and ``/runs/b/checkpoint-1000`` were one model, ``checkpoint-1000``,
    later named by their folders as whole paths); with the weights of the named model it
    ran where its ``model_args`` say (``smollm2 (gguf_file=A.gguf)``); a run whose results
    name no model by its folder (:func:`_folder_names`); never a local path."""
    from activetest.formats.history import lmeval_model_variant, lmeval_settings
    from activetest.formats.model_ids import distinct_names, local_parts, variant_name
    from activetest.formats.run_settings import name_apart

    raw = {f: _model_of(f) for f in files}
    names = distinct_names([m for m in raw.values() if m is not None])
    out = {f: variant_name(names.get(m, m), lmeval_model_variant(f))
           for f, m in raw.items() if m is not None}
    stated = {out[f]: m for f, m in raw.items() if m is not None and local_parts(m)}
    folders = _folder_names(sorted({f.parent.resolve() for f, m in raw.items() if m is None}),
                            set(out.values()))
    for f, m in raw.items():
        if m is None:
            out[f] = folders[f.parent.resolve()]
    # one model's runs at other n-shots are two systems: named apart (QA: SmolLM2's 1-
    # and 3-shot runs were refused as "two results" of one model)
    out, said = name_apart(out, {f: lmeval_settings(f) for f in files})
    stated = {**stated, **{out[f]: raw[f] for f in files
                           if raw[f] is not None and local_parts(raw[f])}}
    return _Rows({f: out[f] for f in files}, folders, stated, tuple(said))


def _row_names(exclude: Sequence[str], models: Sequence[str],
               folders: Mapping[Path, str]) -> list[str]:
    """``--history-exclude`` names as the rows are named: a row named by its folder (a run
    whose results name no model, :func:`_folder_names`) is named by that folder however
    it is written (absolute or relative, ``./``, a trailing ``/``: QA, refused as matching
    no row). Only names of existing folders are compared as paths."""
    out = []
    for x in (x.strip() for x in exclude):
        if x not in models and x and Path(x).is_dir():
            x = folders.get(Path(x).resolve(), x)
        out.append(x)
    return out


def _snippet(doc: Any) -> str:
    from activetest.formats.lmeval_results import doc_snippet

    return doc_snippet(doc)


def _read_rows(files: Sequence[Path], pool: Sequence[Any], metric: str,
               models: Mapping[Path, str]
               ) -> tuple[dict[str, dict[int, tuple[float, str]]], dict[str, list[str]],
                          list[str]]:
    """model -> {pool row: (value, where)}, model -> its files, and notes (``models``:
    each file's row, :func:`_models_of`)."""
    from activetest.formats.lmeval_results import read_results

    pos = {r.key: k for k, r in enumerate(pool)}
    want = pool[0].filter
    rows: dict[str, dict[int, tuple[float, str]]] = {}
    sources: dict[str, list[str]] = {}
    outside = other_filter = 0
    cut: list[str] = []
    for f in files:
        try:
            records = read_results([f], cut=cut)
        except ValueError as exc:
            raise SessionError(f"--history: {exc}") from None
        model = models[f]
        row = rows.setdefault(model, {})
        sources.setdefault(model, []).append(str(f))
        bad: list[tuple[Any, Any]] = []
        for r in records:
            k = pos.get(r.key)
            if k is None:  # another task's record is that, whatever its filter (QA: a
                outside += 1  # history's other tasks were counted as "other filters")
                continue
            if r.filter != want:
                other_filter += 1
                continue
            if r.doc is None or r.fingerprint != pool[k].fingerprint:
                bad.append((r, pool[k]))
                continue
            v = r.metrics.get(metric)
            if v is None or not 0.0 <= v <= 1.0:
                has = (f"its {metric} is {r.unread[metric]}, not a number" if metric in r.unread
                       else f"{metric} = {v:g}" if v is not None
                       else f"it has {', '.join(sorted(r.metrics)) or 'no metric'}")
                raise SessionError(
                    f"--history {r.where}: document {r.key!r} has no per-item {metric!r} in "
                    f"[0, 1] ({has}): the history's values are the session's metric, the one "
                    f"its labels are")
            if k in row and row[k][0] != v:
                raise SessionError(
                    f"--history: model {model!r} has two results for {r.key!r}: {row[k][0]:g} "
                    f"({row[k][1]}) and {v:g} ({r.where}); which run is meant is not guessed: "
                    f"keep one run per model in the history folders")
            row[k] = (float(v), r.where)
        if bad:
            r, mine = bad[0]
            theirs = "no document (run lm-eval with --log_samples)" if r.doc is None else \
                repr(_snippet(r.doc))
            raise SessionError(
                f"--history {r.where}: item {r.key!r} is another document than the pool's: "
                f"the pool has {_snippet(mine.doc)!r} ({mine.where}), this log {theirs} "
                f"({len(bad)} of its records differ). A doc_id is a position in the task's "
                f"split, so another revision or order of the dataset moves it; nothing of "
                f"this history is joined: use runs of the pool's dataset revision")
    notes = []
    if outside:
        notes.append(f"history: {outside} record(s) of documents the pool does not have "
                     f"(other tasks or a larger split) are passed over")
    if other_filter:
        notes.append(f"history: {other_filter} record(s) of other lm-eval filters than the "
                     f"pool run's ({want!r}) are passed over")
    if cut:
        notes.append(f"history: the unfinished last record of {len(cut)} file(s) a killed "
                     f"run left is skipped ({cut[0]})")
    return rows, sources, notes


def lmeval_history(paths: Sequence[str | os.PathLike[str]], pool: Sequence[Any], *,
                   metric: str, exclude: Sequence[str] = (),
                   neighbours: bool | NeighbourUpdate = True) -> HarnessHistory:
    """Join other models' lm-eval runs to an lm-eval session's pool (module docstring) and
    compute the history's features once.

    Args:
        paths: folders (or samples files, or globs) of other models' lm-eval runs.
        pool: the pool run's records (:class:`~activetest.formats.lmeval_results.HarnessRecord`),
            in pool order, all of one filter.
        metric: the session's per-item metric (the history's values).
        exclude: model names never to use (the target's own runs).
        neighbours: add the neighbours' column learnt in-run
            (:func:`activetest.session.create_history.with_neighbours`).

    Raises:
        SessionError: a file that cannot be read, a record of another document under a
            pool item's id (named), a missing metric, one model's two values for an item,
            an ``exclude`` name that matches no model, or no history left.
        FileNotFoundError: a path that does not exist or a pattern that matches nothing
            (:func:`activetest.formats.tables.missing_file`'s words, naming --history).
    """
    import warnings

    from activetest.data.history import HistoryJoinError, join_history
    from activetest.formats.history import ResponseMatrix
    from activetest.formats.model_ids import path_digests
    from activetest.session.create_history import (
        HistoryTargetNotice,
        history_record,
        with_neighbours,
    )
    from activetest.session.design import history_columns
    from activetest.session.history_sources import HistoryFile, LocalPaths
    from activetest.stats.feature_design import history_features

    files, twice = _files(paths)
    named = _models_of(files)
    rows, sources, notes = _read_rows(files, pool, metric, named.names)
    notes = [*twice, *named.notes, *notes]
    if not any(rows.values()):
        raise SessionError(f"--history: none of the records in {', '.join(map(str, paths))} "
                           f"is of a pool document (task and doc_id) under the pool run's "
                           f"filter ({pool[0].filter!r}): no history to learn from")
    keys = [r.key for r in pool]
    mats = []
    above: list[str] = []  # a model's files' common folder, named in messages
    for model, cells in rows.items():
        scores = np.full(len(pool), np.nan)
        for k, (v, _) in cells.items():
            scores[k] = v
        mine = sources[model]
        if len(mine) > 1:
            above.append(os.path.commonpath(mine))
        where = mine[0] if len(mine) == 1 else f"{os.path.commonpath(mine)} ({len(mine)} files)"
        mats.append(ResponseMatrix(where, (model,), tuple(keys), scores[None, :]))
    try:
        # keyed by the pool run's own keys, each record's document checked against
        # the pool's (above): confirmed by content, whatever the keys look like
        joined = join_history(mats, keys, exclude=_row_names(exclude, list(rows), named.folders),
                              ids_are_positions=True)
    except HistoryJoinError as exc:
        raise SessionError(f"--history: {exc}") from None
    if not exclude:
        warnings.warn("the target's own results cannot be recognised in the history (an "
                      "lm-eval target has none before its first round): a run of the "
                      "target's model in the history folders would be used as another "
                      "model's; --history-exclude NAME leaves it out", HistoryTargetNotice,
                      stacklevel=2)
    # init's line names the paths given (one entry per model would run on for a folder
    # of many models, and lm-eval's folders of two models may share a name); the record
    # names them without their local paths (history_sources.publish)
    joined = dataclasses.replace(joined, sources=tuple(str(p) for p in paths),
                                 by_position=())  # joined by content, not by position
    hf = history_features(joined.scores)
    local = LocalPaths(tuple(str(p) for p in paths),
                       tuple(HistoryFile(str(f), (named.names[f],)) for f in files),
                       tuple(above))
    info, R = with_neighbours(history_record(joined, hf, notes, local=local), joined,
                              neighbours)
    info["models"] = list(joined.models)  # to recognise the target's model at import
    # and which rows are of local models, by digests (never the path): a row of
    # /b/checkpoint-1000 is not the target /a/checkpoint-1000 (target_in_history)
    info["model_paths"] = {m: list(path_digests(named.stated[m])) for m in joined.models
                           if m in named.stated}
    return HarnessHistory(history_columns(hf), hf.p_correct, info, R, tuple(joined.models),
                          {m: tuple(sources[m]) for m in joined.models})


def history_rows(session: Any) -> list[str]:
    """The names of a session's history rows: the rows of the neighbours' matrix, in its
    order; the ``history`` record's list (lm-eval sessions) holds the same names where
    there is no matrix (``--no-history-neighbours``); empty without a history."""
    from activetest.session.history_neighbours import ROLE

    rec = session.session_config.extra.get("history")
    if not isinstance(rec, dict):
        return []
    stored = session.store.scores(ROLE)
    names = list((stored.provenance or {}).get("models", []) if stored is not None else ())
    return [str(n) for n in names or list(rec.get("models") or ())]


def rows_of_local_model(session: Any, stated: Sequence[str | None]) -> list[str]:
    """The history rows of a session that name a model at one of the local paths
    ``stated`` (the target's, as its results files write it): rows named by a
    distinguishing suffix of several components (``a/checkpoint-1000``) whose components
    end the path's (:func:`activetest.formats.model_ids.names_the_path`; a row of one
    component is the model's public name, compared as such)."""
    from activetest.formats.model_ids import names_the_path

    return sorted({n for n in history_rows(session) for p in stated
                   if "/" in n and names_the_path(n, p)})


def _same_model(rec: Mapping[str, Any], row: str, paths: Sequence[str] | None
                ) -> tuple[bool | None, str]:
    """Whether history row ``row``, of the target's model's name, is of the target's model
    by the house's identity (:func:`activetest.formats.model_ids.same_local_model`): True,
    False, or None where it cannot be told (one is known to be at a local path, the other
    not known to be, or of a public name of that last name), with why. ``paths``: the target's
    :func:`~activetest.formats.model_ids.path_digests` (empty: its name is no local path;
    None: not known); the row's are the history record's ``model_paths`` (an lm-eval
    session's since they are kept; a row not in it: no local path)."""
    from activetest.formats.model_ids import same_local_model

    kept = rec.get("model_paths")
    mine = [str(d) for d in kept.get(row) or ()] if isinstance(kept, dict) else None
    if mine and paths:
        return same_local_model(mine, paths), ""
    if not mine and not paths:
        return True, ""  # neither is known to be a local path: by name, as ever
    row_is = ("a model at a local path of that last name" if mine else
              "a model of that public name" if mine is not None else
              "a model of that name, at a local path or not (the session keeps no more of "
              "its history's models)")
    target_is = ("a model at a local path of that last name" if paths else
                 "a model of that public name" if paths is not None else
                 "a model of that name, at a local path or not (its results were imported "
                 "before activetest kept more)")
    return None, f"the row is of {row_is}, the target's results of {target_is}"


def history_target_note(session: Any) -> str | None:
    """:func:`target_in_history` for a session as stored: the model its target's results
    name (a harness target: lm-eval's or inspect's name, with the weights lm-eval states),
    the row names a history folder gives a run of its local model, and its local path's
    digests, as kept in the config's ``answer_files.target``. What ``status`` says, and
    ``init --from-inspect`` once the replay has recorded the evals' labels."""
    who = (session.session_config.answer_files or {}).get("target") or {}
    ran, rows = who.get("model"), who.get("row_names")
    if isinstance(ran, str) and isinstance(who.get("model_variant"), dict):
        from activetest.formats.model_ids import variant_name

        ran = variant_name(ran, who["model_variant"])  # its weights: the row's name
    paths = who.get("model_path")  # the local path's digests, where kept
    shots = who.get("n_shot")  # how it ran: each task's n-shot, where kept
    return target_in_history(session, ran if isinstance(ran, str) else None,
                             [str(n) for n in rows] if isinstance(rows, list) else (),
                             [str(d) for d in paths] if isinstance(paths, list) else None,
                             settings=lmeval_target_settings(
                                 shots if isinstance(shots, dict) else {}))


def lmeval_target_settings(n_shot: Mapping[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """How an lm-eval target ran, as :func:`target_in_history` takes it: ``(task,
    settings)`` per task of ``n_shot`` (task -> lm-eval's n-shot, as its results files
    state it and the session keeps it), each settings as a history log's
    (:func:`activetest.formats.history.lmeval_settings`: ``{"n-shot": "3"}``)."""
    return [(str(t), {"n-shot": str(n)}) for t, n in sorted(n_shot.items())]


def target_in_history(session: Any, model: str | None, also: Sequence[str] = (),
                      paths: Sequence[str] | None = None,
                      settings: Sequence[tuple[str | None, Mapping[str, str]]] | None = None
                      ) -> str | None:
    """Say where a graded session's history (an lm-eval or inspect session's, or any with
    ``--surrogate history``) holds the target's own run, once its labels tell (lm-eval's
    ``import``, ``status``): a history row of the model the results files name
    (``model``, or a name in ``also``: the row name a history folder gives a run of the
    target's local model, :func:`activetest.formats.history.lmeval_local_row_name`), or a
    row equal to the target's results on every labelled item it has (at
    least :data:`activetest.data.history.MIN_SAME_ITEMS` of them). Such a row has steered the
    draws as another model's; the estimate stays unbiased and its intervals valid (they
    are for any design), but the history is not what it was meant to be. None: no
    history, or no such row. ``paths``: the target's local path's digests
    (:func:`activetest.formats.model_ids.path_digests`; empty: ``model`` is no local path;
    None: not known): a row of ``model``'s name at another local path is another model
    (QA: a history's ``/b/checkpoint-1000`` was said to be the target ``/a/checkpoint-1000``),
    and one that cannot be told from it is said as such, with why. ``settings``: how the
    target ran, ``(its task or None, its settings)`` per results file or task
    (:func:`lmeval_target_settings`; None: not known): a row of ``model``'s runs named
    apart by their settings (``m [n-shot=0]``) is the target's own only where the settings
    its name states are the target's, as ``init --history`` decides
    (:func:`activetest.session.create_history.settings_are_own`: other settings are
    another system, kept; settings that cannot be compared, the target's)."""
    from activetest.data.history import MIN_SAME_ITEMS
    from activetest.formats.run_settings import row_settings, settings_base
    from activetest.session.history_neighbours import ROLE

    rec = session.session_config.extra.get("history")
    if not isinstance(rec, dict):
        return None
    advice = ("it has steered the draws as another model's run; the estimate stays unbiased "
              "and its intervals valid (they hold for any design), but to draw without it "
              "create the session again with --history-exclude")
    stored = session.store.scores(ROLE)
    names = history_rows(session)
    runs = [] if model is None or model in names else [
        n for n in names if settings_base(str(n)) == model]  # its runs named apart
    if runs and settings is not None:  # those at other settings are other systems, as init
        # keeps them (QA: a single row 'm [n-shot=0]' was said to be a 3-shot target's own)
        from activetest.session.create_history import settings_are_own

        def own(row: dict[str, str]) -> bool:
            # a row's name states only the settings that told it apart: compared on those
            return settings_are_own(row, [(t, {k: v for k, v in o.items() if k in row})
                                          for t, o in settings])[0]

        runs = [n for n in runs if own(row_settings(str(n)))]
    if len(runs) > 1:
        return (f"the history holds runs of the target's own model named apart by their "
                f"settings ({', '.join(repr(n) for n in runs)}): "
                + advice.replace("it has steered the draws as another model's run",
                                 "they have steered the draws as other models' runs")
                + " "
                + " --history-exclude ".join(repr(n) for n in runs))
    model = runs[0] if runs else model
    if model is not None and model in names:
        same, why = _same_model(rec, model, paths)
        if same:
            return f"the history holds a run of the target's own model ({model!r}): " \
                   f"{advice} {model!r}"
        if same is None:
            return (f"history row {model!r} has the name of the target's model, and whether "
                    f"it is the same model cannot be told ({why}): if it is the target's own "
                    f"run, {advice} {model!r}")
    # a run of the target's local model: a row named by the folder lm-eval wrote it in (as
    # a path in an lm-eval session's history, as the folder's name in another's)
    # (or a local model's row named by its distinguishing suffix: rows_of_local_model)
    row = next((n for n in names if str(n) and (str(n) in set(also)
                                                 or Path(str(n)).name in set(also))), None)
    if row is not None:
        return f"the history holds a run of the target's own model ({row!r}): {advice} " \
               f"{row!r}"
    labels = session.labels()
    judgment = getattr(session.task, "judgment", None)  # graded: a label is a level
    if stored is None or judgment is None or len(labels) < MIN_SAME_ITEMS:
        return None
    rows = session.store.rows_of(labels)
    levels = np.asarray(judgment.scores, dtype=np.float64)
    cols = np.array([rows[i] for i in labels])
    mine = np.array([levels[v] for v in labels.values()])
    R = stored.logprobs.T[:, cols]
    known = ~np.isnan(R)
    same = (known.sum(axis=1) >= MIN_SAME_ITEMS) & np.all(
        np.where(known, mine[None, :] == R, True), axis=1)
    if not same.any():
        return None
    hits = [int(k) for k in np.flatnonzero(same)]
    if len(hits) == 1:
        k = hits[0]
        return (f"history row {names[k]!r} agrees with the target's results on every one of "
                f"the {int(known[k].sum())} labelled items it has: if it is the target's own "
                f"run under another name, {advice} {names[k]!r}")
    shown = ", ".join(repr(names[k]) for k in hits[:3]) + (
        f" and {len(hits) - 3} more" if len(hits) > 3 else "")
    least = min(int(known[k].sum()) for k in hits)
    return (f"history rows {shown} agree with the target's results on every labelled item "
            f"they have ({least} or more each): if one is the target's own run under another "
            f"name, {advice} NAME")
