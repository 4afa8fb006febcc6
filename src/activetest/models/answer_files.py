"""A target's answers joined to a pool: :func:`confirm_join` and :func:`ids_may_be_positions`.

Reading the files is :mod:`activetest.formats.answers` (lm-eval, inspect_ai, Every
Eval Ever, CSV/TSV/JSONL tables); its names are re-exported here, so code importing
``activetest.models.answer_files`` keeps working.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from activetest.formats.answer_records import AnswerFile, AnswerRecord, own_input
from activetest.formats.answers import (
    FORMATS,
    Format,
    detect_format,
    file_provenance,
    public_model_name,
    read_answers,
)

__all__ = ["FORMATS", "AnswerFile", "AnswerRecord", "Format", "JoinItem", "confirm_join",
           "detect_format", "file_provenance", "ids_may_be_positions", "public_model_name",
           "read_answers"]


# --------------------------------------------------------------------------- joins


_WHOLE_NUMBER = re.compile(r"[0-9]+")


def ids_may_be_positions(answers: AnswerFile) -> bool:
    """Whether ``answers``' ids may be no more than positions.

    lm-eval's ``doc_id`` is the document's position in its split (unless
    ``id_field=`` named a doc field); inspect_ai numbers the samples of a dataset
    without ids 1..N; Every Eval Ever's lm-eval converter writes ``doc_id`` as
    ``sample_id``; a table's ids may be row numbers. So: an lm-eval file read by
    ``doc_id``, or a file whose every id is a whole number.
    """
    if answers.format == "lmeval" and not answers.provenance.get("id_field"):
        return True
    return bool(answers.records) and all(_WHOLE_NUMBER.fullmatch(r.item_id)
                                         for r in answers.records)


@dataclass(frozen=True)
class JoinItem:
    """A pool item as :func:`confirm_join` compares it with the record of the same id.

    Attributes:
        item_id: the pool's id.
        fields: the prompt fields (texts).
        references: the pool's references (may be empty).
        extra: the pool's other columns (compared with a log's sample metadata).
    """

    item_id: str
    fields: Mapping[str, str]
    references: Sequence[str] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def _fold(text: str) -> str:
    """Text for comparison: Unicode NFKC, case-folded, without any whitespace."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def _excerpt(text: str, n: int = 90, *, end: bool = False) -> str:
    """``repr`` of ``text`` cut to about ``n`` characters (its end, with ``end``)."""
    one = " ".join(text.split())
    if len(one) > n:
        one = "..." + one[-(n - 3):] if end else one[: n - 3] + "..."
    return repr(one)


def _own_text(r: AnswerRecord, n_shot: int | None) -> str:
    """The folded texts of a record's own input (its prompt fields; for an lm-eval
    record with a ``doc``, also its rendered prompt without the examples)."""
    parts = [_fold(v) for v in r.prompt.values() if isinstance(v, str)]
    full = r.meta.get("prompt_text")
    if "input" not in r.prompt and isinstance(full, str):
        parts.append(_fold(own_input(full, n_shot)))
    return "\x00".join(p for p in parts if p)


def _same_value(a: Any, b: Any) -> bool:
    return _fold(str(a)) == _fold(str(b))


class _Pool:
    """What the pool's items are told apart by: folded texts, references, an index."""

    def __init__(self, pool: Sequence[JoinItem]) -> None:
        from collections import Counter

        from activetest.data.generative import normalize_answer

        self.items = pool
        self.texts = [tuple(t for t in (_fold(str(v)) for v in it.fields.values()) if t)
                      for it in pool]
        self.key = [tuple(sorted(t)) for t in self.texts]
        self.refs = [frozenset(x for x in (normalize_answer(str(r)) for r in it.references)
                               if x) for it in pool]
        self.ref_count = Counter(self.refs)
        # items whose texts are the same but whose references differ cannot be told
        # apart by their texts (items alike in both are interchangeable: no join of
        # them can put an answer on an item it was not given for)
        self.text_count = Counter(self.key)
        self.text_refs_count = Counter(zip(self.key, self.refs, strict=True))
        self._counts: dict[tuple[str, ...], Counter[tuple[str, ...]]] = {}
        # To find another item's text in the rest of a record's input without scanning
        # the pool: each item's anchor (its longest text) is indexed by its k-grams at
        # offsets 0..k-1, so that any occurrence of it covers a k-gram of the text at a
        # multiple of k. Anchors shorter than 16 characters are not looked for.
        self.anchor = [max(t, key=len) if t else "" for t in self.texts]
        usable = [i for i, a in enumerate(self.anchor) if len(a) >= 16]
        self.k = min(32, (min((len(self.anchor[i]) for i in usable), default=0) + 1) // 2)
        self.index: dict[str, list[tuple[int, int]]] = {}
        for i in usable:
            a = self.anchor[i]
            for d in range(self.k):
                self.index.setdefault(a[d: d + self.k], []).append((i, d))

    def unique(self, i: int, names: tuple[str, ...], source: str) -> bool:
        """Whether item ``i``'s values of ``names`` (``source``: its ``fields``, or its
        ``columns``: extra and fields) tell it apart from every other item."""
        from collections import Counter

        def values(it: JoinItem) -> tuple[str, ...]:
            got = it.fields if source == "fields" else {**it.extra, **it.fields}
            return tuple(_fold(str(got.get(n, ""))) for n in names)

        cache = (source, *names)
        if cache not in self._counts:
            self._counts[cache] = Counter(values(it) for it in self.items)
        return self._counts[cache][values(self.items[i])] == 1

    def texts_tell_apart(self, i: int) -> bool:
        """Whether item ``i``'s texts tell it apart: every other item with the same texts
        has the same references too."""
        return self.text_count[self.key[i]] == self.text_refs_count[(self.key[i],
                                                                     self.refs[i])]

    def later(self, i: int, text: str, start: int) -> int | None:
        """Another item whose every text occurs in ``text`` after ``start`` (None: none)."""
        if not self.k:
            return None
        tail = text[start + 1:]
        for j in range(0, len(tail) - self.k + 1, self.k):
            for h, d in self.index.get(tail[j: j + self.k], ()):
                if j >= d and self.key[h] != self.key[i] \
                        and tail.startswith(self.anchor[h], j - d) \
                        and all(t in tail for t in self.texts[h]):
                    return h
        return None


def _evidence(pool: _Pool, i: int, r: AnswerRecord, text: str) -> tuple[list[str], list[str]]:
    """(what confirms, what contradicts) that record ``r`` is pool item ``i``."""
    from activetest.data.generative import exact_match, normalize_answer, token_f1

    it = pool.items[i]
    pro: list[str] = []
    con: list[str] = []
    shared = tuple(sorted(k for k in set(it.fields) & set(r.prompt)
                          if _fold(str(it.fields[k]))))
    for k in shared:
        if not _same_value(it.fields[k], r.prompt[k]) and not (
                k == "input" and isinstance(r.meta.get("prompt_text"), str)
                and _same_value(it.fields[k], r.meta["prompt_text"])):
            con.append(f"its {k!r} is {_excerpt(r.prompt[k], 60)} where the pool's is "
                       f"{_excerpt(str(it.fields[k]), 60)}")
    if shared and not con and pool.unique(i, shared, "fields"):
        pro.append(f"its {', '.join(map(repr, shared))} equal the pool's")
    md = r.meta.get("metadata")
    if isinstance(md, Mapping):
        cols = {**it.extra, **it.fields}
        names = tuple(sorted(k for k in set(cols) & set(md) - set(shared)
                             if cols[k] not in (None, "") and md[k] not in (None, "")))
        differ = [k for k in names if not _same_value(cols[k], md[k])]
        for k in differ:
            con.append(f"its metadata {k!r} is {_excerpt(str(md[k]), 40)} where the pool's "
                       f"column is {_excerpt(str(cols[k]), 40)}")
        if names and not differ and pool.unique(i, names, "columns"):
            pro.append(f"its metadata {', '.join(map(repr, names))} equal the pool's")
    texts = pool.texts[i]
    if texts and text and all(t in text for t in texts):
        start = min(text.rfind(t) for t in texts)
        h = pool.later(i, text, start)
        if h is None:
            if pool.texts_tell_apart(i):
                pro.append("the pool item's text occurs in its input")
        else:
            con.append(f"its input asks pool item {pool.items[h].item_id!r}'s question "
                       f"(the pool item's text occurs in it only before, as an in-context "
                       f"example)")
    refs = frozenset(x for x in (normalize_answer(t) for t in r.references) if x)
    if refs and pool.refs[i]:
        if refs == pool.refs[i] and pool.ref_count[refs] == 1:
            pro.append("its references equal the pool's")
        elif not refs & pool.refs[i]:
            con.append(f"its references {list(r.references)[:3]} share none with the pool's "
                       f"{list(it.references)[:3]}")
    if r.score in (0.0, 1.0) and it.references and not refs:
        if r.score == 0.0 and exact_match(r.answer, it.references):
            con.append(f"the file judged its answer {_excerpt(r.answer, 40)} wrong, but it "
                       f"is one of the pool's references")
        elif r.score == 1.0 and r.answer.strip() and token_f1(r.answer, it.references) == 0:
            con.append(f"the file judged its answer {_excerpt(r.answer, 40)} right, but it "
                       f"shares no word with the pool's references "
                       f"{list(it.references)[:3]}")
    return pro, con


def confirm_join(answers: AnswerFile, pool: Sequence[JoinItem],
                 records: Sequence[AnswerRecord]) -> None:
    """Refuse a join by ids that may be positions unless every item's content confirms it.

    Where :func:`ids_may_be_positions`, the same id on both sides says nothing by
    itself: a pool listing the same items in another order would put every answer
    (and the file's judgment of it) on another item. So each joined pair
    (``pool[i]``, ``records[i]``) must be confirmed by what both sides have, and
    nothing they have may contradict it. Confirms (each only where it tells the
    item apart from every other pool item):

    - a prompt field both sides have, with equal text (normalised: Unicode NFKC,
      case and whitespace ignored);
    - the sample's metadata (inspect_ai; Every Eval Ever's ``metadata``) equal to the
      pool's columns of those names;
    - the pool item's prompt texts occurring in the record's own input (its prompt
      without the in-context examples; for lm-eval also its ``doc``), with no other
      pool item's texts after them (an item that occurs only as an earlier
      in-context example is not the record's question), unless another pool item has
      the same texts and other references (then the texts cannot tell which);
    - equal references (SQuAD-normalised sets).

    Contradicts: a shared field, a metadata value or references (no reference in
    common) that differ; the record's input asking another pool item's question;
    a file judgment against the pool's references (a file without references of
    its own judged a reference answer wrong, or an answer sharing no word with the
    references right). Every item is checked; the join is cheap.

    Does nothing when the ids are not positions.

    Raises:
        ValueError: naming the file, the first unconfirmed item, both sides and how
            many items are unconfirmed.
    """
    if not ids_may_be_positions(answers):
        return
    p = _Pool(pool)
    bad: list[tuple[int, list[str], list[str]]] = []
    for i, r in enumerate(records):
        pro, con = _evidence(p, i, r, _own_text(r, answers.n_shot))
        if con or not pro:
            bad.append((i, pro, con))
    if not bad:
        return
    i, _, con = next((b for b in bad if b[2]), bad[0])
    it, r = pool[i], records[i]
    why = "; ".join(con) if con else (
        "nothing confirms it: the pool item's text does not occur in the record's input, "
        "and no field, metadata or references of both sides tell it apart")
    shown = ", ".join(f"{k} {_excerpt(str(v), 70)}" for k, v in it.fields.items()) or "no text"
    refs = f", references {list(it.references)[:3]}" if it.references else ""
    full = r.meta.get("prompt_text")
    own = r.prompt.get("input") or (own_input(full, answers.n_shot) if isinstance(full, str)
                                    else " ".join(f"{k}: {v}" for k, v in r.prompt.items()))
    rrefs = f", references {list(r.references)[:3]}" if r.references else ""
    kind = ("lm-eval doc_ids, which are positions" if answers.format == "lmeval"
            and not answers.provenance.get("id_field") else
            "whole numbers, which may be positions")
    raise ValueError(
        f"{answers.path}: the record of id {r.item_id!r} is not shown to be the pool's item "
        f"{it.item_id!r}: this file's ids are {kind}, so the content must confirm each "
        f"joined item, and here {why}. The pool's item: {shown}"
        f"{refs}; the file's record: input {_excerpt(own, 90, end=True)}{rrefs}, answer "
        f"{_excerpt(r.answer, 40)} ({len(bad)} of {len(pool)} items unconfirmed)")
