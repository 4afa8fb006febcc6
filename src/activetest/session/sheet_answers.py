"""Which answers of a filled sheet a session does not hold yet.

``select --out sheet.csv`` and ``export --out sheet.csv`` refuse to write over a sheet
that holds answers (:func:`activetest.session.labels.refuse_filled_sheet`): they may not
be imported yet. After ``import`` every one of them is stored, and the next round's
``select --out sheet.csv`` may write over it (QA: it was refused every round of the
select / fill / import loop). :func:`unimported_answers` says which answers are not
stored, read as ``import`` reads them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from activetest.session.records import LabelError

__all__ = ["unimported_answers"]


def _vote_kept(store: Any, row: int, role: str, who: str, kind: str, label: int) -> bool:
    """Whether annotator ``who``'s latest vote of this ``kind`` on item ``row`` (role
    ``role``) in the ``annotations`` table is ``label`` (what
    :func:`activetest.session.annotators.keep_votes` stores of an import), read through
    the session's own store (one way in to the file: a connection of its own, opened by
    the file's path as a URI, read no file where the name holds ``#``, and every kept
    vote was "not stored")."""
    from activetest.session.annotator_records import has_annotations

    if not has_annotations(store):  # no vote was ever kept
        return False
    last = store._read("SELECT label FROM annotations WHERE idx = ? AND role = ? AND "
                       "annotator = ? AND kind = ? AND undone IS NULL ORDER BY id DESC "
                       "LIMIT 1", (row, role, who, kind))
    return bool(last) and int(last[0][0]) == int(label)


def unimported_answers(s: Any, path: str | Path, fmt: str) -> list[str]:
    """The answers filled in the sheet ``path`` (format ``fmt``, as
    :func:`activetest.session.labels.export_format` names it) that session ``s`` does
    not hold, each as ``"<where>: item <id> <label>"``; empty when every one is stored.

    A record is read as ``import`` reads it (the session's classes, a blind sheet's
    letters); it is stored when the session holds the same label for its item (a
    compared target's answer: the same judgment), or, for a record naming an annotator,
    when that annotator's latest kept vote on the item is that label; a record marked
    undone (a label or an answer taken back, the sheet a session file put back leaves)
    when the session does NOT hold it so.

    Raises:
        LabelFileError, LabelError: the sheet's answers cannot be read as this session's
            labels (an unknown class, a letter beyond the item's answers); the caller
            keeps the file then.
    """
    from activetest.formats.sheets import filled_labels
    from activetest.session import compare_graded, labelio
    from activetest.session.annotator_records import GROUND_TRUTH_KIND, IMPORT_KIND, check_name

    kind = "json" if fmt == "labelstudio" else fmt
    records = labelio.import_labels(path, s.task, format=kind)
    missing = []
    unread = filled_labels(Path(path), kind) - len(records)
    if unread > 0:  # a cell filled in that import does not read as an answer
        missing.append(f"{path}: {unread} filled-in label cell(s) not read as labels")
    index = s._row_index()
    records = compare_graded.letters_to_targets(s.store, index, records)
    config = s.store.config()
    labels = s.store.labels(check=False)
    for rec in records:
        row = index.get(str(rec.item_id))
        spec = getattr(rec, "answer_of", None) or ""
        role = "target"
        current = labels
        if spec:
            role = compare_graded.compare_role(compare_graded.stored_compared(config, spec))
            current = s.store.judgments(role)
        who = getattr(rec, "annotator", None)
        if row is None:
            stored = False
        elif isinstance(who, str) and who.strip():
            try:
                name = check_name(who)
            except LabelError:
                stored = False
            else:
                vote = GROUND_TRUTH_KIND if getattr(rec, "ground_truth", False) else IMPORT_KIND
                stored = _vote_kept(s.store, row, role, name, vote, rec.label)
        else:
            old = current.get(row)
            stored = old is not None and (old.label == rec.label  # (a label taken back
                                          or getattr(rec, "unnamed_undo", False) is True)
            # that the row does not name: "stored" while the session holds none)
        if getattr(rec, "undone", None) and row is not None:
            # a label (or an answer) taken back: in the session as long as the session
            # does not hold it (QA: a put-back sheet of undone rows was written over)
            stored = not stored
        if not stored:
            names = s.task.class_names
            given = (names[rec.label] if 0 <= rec.label < len(names)
                     else "(its label, not named)" if getattr(rec, "unnamed_undo", False)
                     else rec.label)
            of = f" (answer of {spec})" if spec else ""
            back = " taken back" if getattr(rec, "undone", None) else ""
            missing.append(f"{rec.where or path}: item {rec.item_id!r}{of} {given!r}{back}")
    return missing

