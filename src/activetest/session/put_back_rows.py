"""The rows of an imported file that are not labels to add: an annotator's answer of a
named kind, and a label taken back (an undo).

The sheet a session file put back leaves beside it
(:func:`activetest.session.store_marks.put_back_error`) carries, besides the labels,
each annotator's answer with the kind the ``annotations`` table kept it as
(``annotation_kind``: an adjudication comes back an adjudication, not a vote) and what
the command took back (``undone``: the time of the undo), so that ``import`` puts the
session back as it was. A record with ``undone`` set is never a label to add:

* an annotator's answer undone is kept undone
  (:func:`activetest.session.annotators.keep_undone`): the file's row marked so, or the
  row added, marked so (nothing lost, no vote);
* a label undone is taken back where the session holds it (:func:`check_taken_back`,
  then :func:`take_back`): removed through the history (an ``undo`` row keeps it).
  Where the session holds another label for the item, the import is refused unless
  ``overwrite``, naming the file's row, the item and both labels.

Records without these (every other file) import as before. A sheet of that sheet's
older layouts (:data:`activetest.formats.sheets.PUT_BACK_HEADERS`: before
``annotation_kind`` and ``undone``) wrote a label the command took back as a row with an
empty ``label`` cell: it is a label taken back that the row does not name
(:attr:`~activetest.formats.label_records.LabelRecord.unnamed_undo`), refused where the
session holds a label for its item unless ``overwrite`` (:func:`check_taken_back`), never
skipped unsaid.
A file's ``annotation_kind`` and ``undone`` columns are read so only where its header is
that sheet's as a whole (:data:`activetest.formats.sheets.PUT_BACK_HEADERS`); a pool's
own columns of those names are cells like any other. An undone row's label is in its
``undone_label`` cell (its ``label`` cell empty, so that an activetest from before the
``undone`` column skips it); each label of the sheet keeps its own ``source``
(:attr:`~activetest.formats.label_records.LabelRecord.own_source`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from activetest.session.annotator_records import GROUND_TRUTH_KIND, IMPORT_KIND, names_no_one
from activetest.session.records import LabelError
from activetest.session.store_rows import LabelChange

__all__ = ["ANNOTATION_KINDS", "TakeBack", "check_kinds", "check_taken_back", "standing",
           "take_back", "undone_labels"]

#: The kinds of the ``annotations`` table (:mod:`activetest.session.annotators`): the
#: page's ``answer`` and ``adjudication``, an imported annotator's label, and one a Label
#: Studio export marks as the reference answer.
ANNOTATION_KINDS = ("answer", "adjudication", IMPORT_KIND, GROUND_TRUTH_KIND)


@dataclass(frozen=True)
class TakeBack:
    """A label the session holds that an imported record takes back (:func:`take_back`).

    Attributes:
        index: the item's pool row; item_id: its id.
        role: ``"target"`` or the compared answer's ``compare:<spec>``.
        label: the class held (and removed); source: whose it is.
    """

    index: int
    item_id: str
    role: str
    label: int
    source: str


def _undone(r: Any) -> bool:
    return not isinstance(r, tuple) and getattr(r, "undone", None) is not None


def standing(records: Sequence[Any]) -> list[Any]:
    """The records that are labels (or answers) given: those not marked undone."""
    return [r for r in records if not _undone(r)]


def undone_labels(records: Sequence[Any]) -> list[Any]:
    """The records that take a label back: marked undone, naming no annotator (an
    annotator's answer undone is :func:`activetest.session.annotators.keep_undone`'s)."""
    return [r for r in records if _undone(r) and names_no_one(getattr(r, "annotator", None))]


def _loc(r: Any, n: int, where: str) -> str:
    loc = getattr(r, "where", None) or (f"{where}, record {n}" if where else f"record {n}")
    return f"{loc}: "


def check_kinds(records: Sequence[Any], where: str = "") -> None:
    """Refuse a record whose ``kind`` is none of :data:`ANNOTATION_KINDS`, or that names a
    kind but no annotator (a kind is an annotator's answer's).

    Raises:
        LabelError: listing each such record (its file and line); nothing may be written.
    """
    problems = []
    for n, r in enumerate(records, start=1):
        kind = None if isinstance(r, tuple) else getattr(r, "kind", None)
        if kind is None:
            continue
        if kind not in ANNOTATION_KINDS:
            problems.append(f"{_loc(r, n, where)}item {r.item_id!r}: annotation_kind "
                            f"{kind!r} is none of {', '.join(ANNOTATION_KINDS)} (the kinds "
                            f"a session keeps an annotator's answer as); leave it empty for "
                            f"an imported annotator's label")
        elif names_no_one(getattr(r, "annotator", None)):
            problems.append(f"{_loc(r, n, where)}item {r.item_id!r}: annotation_kind "
                            f"{kind!r} but no annotator: a kind is an annotator's answer's "
                            f"(fill in the annotator, or leave the kind empty for a label)")
    if problems:
        raise LabelError(f"{len(problems)} label problem(s); nothing was imported:\n  "
                         + "\n  ".join(problems[:20])
                         + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20
                            else ""))


def check_taken_back(s: Any, records: Sequence[Any], given: Sequence[Any], *,
                     overwrite: bool, where: str = "") -> list[TakeBack]:
    """The labels the open session ``s`` holds that ``records`` (:func:`undone_labels`)
    take back; ``given``: the file's records that stand (an item may not have both a
    label that stands and one taken back; an annotator's answer that stands is a vote).

    A record whose item holds no label takes nothing back (the file put back never had
    it). One whose item holds another label than the record's is refused, unless
    ``overwrite`` (then that label is taken back: the history keeps it); so is one that
    names no label (:attr:`~activetest.formats.label_records.LabelRecord.unnamed_undo`:
    the sheet's older layouts) where the item holds one: which label the command took
    back is not known, so the one held is taken back only where told.

    Raises:
        LabelError: listing every bad record (file and line): an item not drawn, a class
            or compared target unknown, an item both labelled and taken back, another
            label held (or one held where the record names none) without ``overwrite``;
            nothing may be written then.
    """
    from activetest.session.compare_graded import compare_role
    from activetest.session.labels import parse_label

    if not records:
        return []
    store = s.store
    index = s._row_index()
    drawn = {a.index for a in store.acquisitions()}
    specs = set(s.compared_targets()) if s.graded else set()
    names = s.task.class_names
    both = {(str(r.item_id), getattr(r, "answer_of", None) or "")  # (an annotator's
            for r in given if not isinstance(r, tuple)  # answer is a vote: it may stand)
            and names_no_one(getattr(r, "annotator", None))}
    both |= {(str(r[0]), "") for r in given if isinstance(r, tuple)}
    problems: list[str] = []
    out: list[TakeBack] = []
    for n, r in enumerate(records, start=1):
        at, item_id = _loc(r, n, where), str(r.item_id)
        spec = getattr(r, "answer_of", None) or ""
        whose = f" (answer of {spec})" if spec else ""
        row = index.get(item_id)
        if row is None or row not in drawn:
            problems.append(f"{at}item {item_id!r} is not a drawn item of this session; the "
                            f"file takes its label back (undone {r.undone})")
            continue
        if spec and spec not in specs:
            problems.append(f"{at}item {item_id!r}: answer_of {spec!r} is no compared target "
                            f"of this session")
            continue
        unnamed = getattr(r, "unnamed_undo", False) is True  # the row names no label
        try:
            y = None if unnamed else parse_label(s.task, r.label)
        except LabelError as exc:
            problems.append(f"{at}item {item_id!r}{whose}: {exc}")
            continue
        if (item_id, spec) in both:
            problems.append(f"{at}item {item_id!r}{whose}: the file both gives it a label and "
                            f"takes one back (undone {r.undone}); keep one of the rows")
            continue
        role = compare_role(spec) if spec else "target"
        held = (store.labels(check=False) if role == "target" else store.judgments(role))
        cur = held.get(row)
        if cur is None:
            continue  # not held: nothing to take back
        shown = names[cur.label] if 0 <= cur.label < len(names) else cur.label
        if y is None and not overwrite:  # (QA: such a row was skipped unsaid, and the
            # label the file put back held stayed after import)
            problems.append(f"{at}item {item_id!r}{whose}: the file takes back its label "
                            f"(undone {r.undone}) without naming it (an empty label cell: "
                            f"the sheet's layout before the undone_label column), and the "
                            f"session holds {shown!r} (from {cur.source}); pass --overwrite "
                            f"(overwrite=True) to take that back (the history keeps it), or "
                            f"delete the row to keep it")
            continue
        if y is not None and cur.label != y and not overwrite:
            problems.append(f"{at}item {item_id!r}{whose}: the file takes back label "
                            f"{names[y]!r} (undone {r.undone}), but the session holds "
                            f"{shown!r} (from {cur.source}); pass --overwrite (overwrite="
                            f"True) to take that back too (the history keeps it), or delete "
                            f"the row to keep it")
            continue
        out.append(TakeBack(row, item_id, role, int(cur.label), str(cur.source)))
    if problems:
        raise LabelError(f"{len(problems)} label problem(s); nothing was imported:\n  "
                         + "\n  ".join(problems[:20])
                         + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20
                            else ""))
    return out


def take_back(s: Any, todo: Sequence[TakeBack], source: str) -> list[LabelChange]:
    """Remove each label of ``todo`` (:func:`check_taken_back`) from the open session
    ``s``, in its open transaction; each removal is an ``undo`` row of the history whose
    source is ``source (undone)``. Returns those rows."""
    return [s.store.revert(LabelChange(0, t.index, t.item_id, None, t.label, "undo",
                                       t.source, "", t.role),
                           f"{source} (undone)", s.task.class_names) for t in todo]
