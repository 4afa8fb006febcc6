"""A session's labelling files: drawn items out to a sheet or Label Studio, labels in.

:meth:`activetest.session.workflow.Session.export` and
:meth:`~activetest.session.workflow.Session.import_file` land here. Reading and writing
the files themselves is :mod:`activetest.session.labelio` and
:mod:`activetest.session.labels`; this module joins them to a session: which draws,
the surrogate's guess, a graded session's compared answers, and one transaction for
everything an import writes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from activetest.session import compare_graded, labels, put_back_rows
from activetest.session.options import check_flag, check_path
from activetest.session.records import LabelImport
from activetest.session.store import Acquisition

__all__ = ["IMPORT_OPTIONS", "export_session", "import_session_file", "stored_sheet_answers"]

#: The options :meth:`Session.import_file <activetest.session.workflow.Session.import_file>`
#: passes on to :func:`activetest.session.labelio.import_labels`.
IMPORT_OPTIONS = ("id_column", "label_column", "from_name", "label_base")


def export_session(s: Any, path: str | os.PathLike[str], *, format: str | None,
                   which: str, predictions: bool,
                   acquisitions: Sequence[Acquisition] | None, overwrite: bool) -> int:
    """Write drawn items of session ``s`` to a file for labelling elsewhere; returns how
    many (:meth:`Session.export <activetest.session.workflow.Session.export>` documents
    the arguments and what is refused)."""
    check_path(path, "path")
    if which not in ("pending", "selected", "labelled"):
        raise ValueError(f"which must be pending, selected or labelled, got {which!r}")
    predictions = check_flag(predictions, "predictions")  # (QA: "no" wrote the guesses)
    overwrite = check_flag(overwrite, "overwrite")  # (QA: "no" wrote over a filled sheet)
    given_draws = None if acquisitions is None else _session_draws(s, acquisitions)
    current = s.store.labels()
    acq = s.pending() if which == "pending" else s.acquisitions()
    if which == "labelled":
        acq = [a for a in acq if a.index in current]
    if given_draws is not None:
        acq = given_draws
    from activetest.session.harness import check_person_labelling

    check_person_labelling(s, acq, "export")  # a harness item without an answer
    # never write over the session, nor over a sheet people filled in
    # (an imported sheet's answers are all stored: the next round may write over it)
    fmt = labels.check_export_target(path, format, session=s.store.path, overwrite=overwrite,
                                     unimported=_unimported(s))
    rows = s._display_items([a.index for a in acq])
    pred = None
    # a paired sheet is blind: the surrogate guesses the target's answers only, and a
    # guess beside one answer of an item would say which answer is the target's
    blind = bool(s.graded and s.compared_targets())
    if predictions and not blind:
        stored = s.store.scores("surrogate")
        if stored is not None and rows:
            pred = stored.logprobs[[a.index for a in acq]]
    given = [current[a.index].label if a.index in current else None for a in acq]
    steps = [a.step for a in acq]
    rows, given, steps = s.kind.export_rows(s.store, s._pool, rows, given, steps, which,
                                            acquisitions)
    return labels.export_draws(path, s.task, rows, fmt, predictions=pred,
                               labels=given if any(g is not None for g in given) else None,
                               draws=steps)


def _unimported(s: Any) -> labels.Unimported:
    """:func:`activetest.session.sheet_answers.unimported_answers` of session ``s``."""
    from activetest.session.sheet_answers import unimported_answers

    return lambda p, fmt: unimported_answers(s, p, fmt)


def stored_sheet_answers(s: Any, path: str | os.PathLike[str], format: str | None, *,
                         overwrite: bool) -> int:
    """How many answers the existing sheet ``path`` holds that session ``s`` stores, all of
    them, so that an export writes over it (0: no file, none filled in, or ``overwrite``:
    then nothing is read). For the command line to say so before it writes.

    Raises:
        ValueError: as :func:`export_session` (the session file, an unknown format, a
            missing folder, an answer not stored (named), a file that is no label sheet).
        PermissionError: the folder cannot be written.
    """
    # the session file, the format, the folder: refused as the export refuses them
    fmt = labels.check_export_target(path, format, session=s.store.path, overwrite=True)
    if check_flag(overwrite, "overwrite"):
        return 0
    return labels.refuse_filled_sheet(path, fmt, session=s.store.path,
                                      unimported=_unimported(s))


def import_session_file(s: Any, path: str | os.PathLike[str], *, format: str | None,
                        overwrite: bool, resolve: str, trust_people: bool,
                        ids_are_positions: bool = False, **options: Any) -> LabelImport:
    """Import labels into session ``s`` from a sheet or a Label Studio export, all or
    nothing (:meth:`Session.import_file
    <activetest.session.workflow.Session.import_file>` documents the rules, the
    arguments and what is refused)."""
    from activetest.session import labelio
    from activetest.session.harness import check_people_labels

    check_path(path, "path")
    overwrite = check_flag(overwrite, "overwrite")
    trust_people = check_flag(trust_people, "trust_people")  # (QA: "no" trusted)
    ids_are_positions = check_flag(ids_are_positions, "ids_are_positions")
    unknown = sorted(set(options) - set(IMPORT_OPTIONS))
    if unknown:  # (QA: Python's "import_labels() got an unexpected keyword argument")
        raise TypeError(f"import_file() got an unknown option {unknown[0]!r}; its options "
                        f"are {', '.join(IMPORT_OPTIONS)}")
    s.store.check_writable()  # a read-only session: before the file is read
    records = labelio.import_labels(path, s.task, format=format, **options)
    source = f"import:{Path(path).name}"
    index = s._row_index()
    # a blind sheet's answers A, B, ...: whose each is, from the item's shown order
    records = compare_graded.letters_to_targets(s.store, index, records)
    read = list(records)  # as given: each annotator's own label, kept for agreement
    # a hand-made sheet keyed by row numbers on a pool numbered so: refused before
    # anything is written, unless confirmed (joins never guess)
    note = _position_join(s, str(path), records, ids_are_positions)
    judged = [r for r in records if r.answer_of]
    if not judged:  # (a row marked undone is taken back there: put_back_rows)
        return dataclasses.replace(
            s.add_labels(records, source=source, overwrite=overwrite, where=str(path),
                         resolve=resolve, trust_people=trust_people), position_note=note)
    # Checks and writes in one transaction: nothing half-written, nothing changed
    # by another writer between the checks and the writes.
    put_back_rows.check_kinds(records, str(path))
    undone = put_back_rows.undone_labels(records)
    records = put_back_rows.standing(records)  # (undone: taken back, not given)
    with s.store.transaction():
        s._check_shown(records)
        todo = put_back_rows.check_taken_back(s, undone, records, overwrite=overwrite,
                                              where=str(path))
        records, conflicts = compare_graded.settle_same_answers(
            s.store, s.task, index, records, resolve)  # type: ignore[arg-type]
        judged = [r for r in records if r.answer_of]
        # compared answers' judgments: every record checked before anything is written
        checked = {spec: compare_graded.check_judgments(
            s.store, s.task, index,  # type: ignore[arg-type]
            spec, [r for r in judged if r.answer_of == spec], source=source,
            overwrite=overwrite, where=str(path), resolve=resolve)
            for spec in dict.fromkeys(r.answer_of for r in judged)}
        result = labels.add_labels(s.store, s.task, index,
                                   [r for r in records if not r.answer_of], source=source,
                                   overwrite=overwrite, where=str(path), resolve=resolve)
        check_people_labels(s, result.changes, source, trust=trust_people)
        changes, conflicts = list(result.changes), conflicts + list(result.conflicts)
        unchanged = result.unchanged
        judgments = []  # the compared answers' own changes: counted apart from labels
        for spec, (answers, same, spec_conflicts) in checked.items():
            judgments += s.store.set_judgments(compare_graded.compare_role(spec), answers,
                                               source, overwrite=overwrite, confirm=True)
            unchanged += same
            conflicts += spec_conflicts
        changes += judgments
        s._check_alike([c.index for c in changes])
        taken = put_back_rows.take_back(s, todo, source)
        return s._keep_votes(LabelImport(
            result.added, result.changed, unchanged, changes + taken, conflicts,
            judged=sum(c.action == "add" for c in judgments),
            judged_changed=sum(c.action == "change" for c in judgments),
            position_note=note, taken_back=len(taken)), read)


def _session_draws(s: Any, acquisitions: Any) -> list[Acquisition]:
    """``acquisitions`` (an export's ``acquisitions=``) as a list, each one of session
    ``s``'s draws (its step, row and item id as stored).

    Raises:
        ValueError: not a list or tuple, or an entry that is no draw of this session,
            named by its position and value (QA: ``acquisitions=5`` raised Python's
            "'int' object is not iterable", ``[1, 2]`` "'int' object has no attribute
            'index'").
    """
    if not isinstance(acquisitions, (list, tuple)):
        raise ValueError(f"acquisitions must be a list of this session's draws (from "
                         f"Session.acquisitions() or select()), or None; got "
                         f"{type(acquisitions).__name__} {acquisitions!r}")
    stored = {(a.step, a.index, a.item_id) for a in s.acquisitions()}
    for j, a in enumerate(acquisitions):
        if not isinstance(a, Acquisition) or (a.step, a.index, a.item_id) not in stored:
            what = ("no draw of this session" if isinstance(a, Acquisition) else
                    f"no Acquisition (a {type(a).__name__})")
            raise ValueError(f"acquisitions[{j}] = {a!r} is {what}: export draws from "
                             f"Session.acquisitions() or select()")
    return list(acquisitions)


def _position_join(s: Any, path: str, records: Sequence[Any], confirmed: bool) -> str | None:
    """:func:`~activetest.session.sheet_positions.check_sheet_ids` of the sheet at
    ``path`` for session ``s``: confirmed by ``confirmed`` (``--ids-are-positions``) or
    by what the session's ``init`` recorded."""
    from activetest.session.history_positions import FLAG
    from activetest.session.sheet_positions import check_sheet_ids, recorded_confirmation

    def fields_of(item_id: str) -> Any:
        row = s._row_index().get(item_id)
        return None if row is None else s._pool[row].fields

    how = FLAG if confirmed else recorded_confirmation(
        s.store.score_roles(), s.provenance, s.session_config.extra.get("history"))
    return check_sheet_ids(path, records, s.store.item_ids, fields_of, confirmed=how)
