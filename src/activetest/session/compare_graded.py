"""Two targets' answers on the same items, judged: the paired comparison of a graded task.

In a classification session one label serves every model, so comparing targets
needs only their predictions. In a graded session a judgment belongs to one
answer: a second target (declared at creation, ``compare=[...]``; its answers are
stored as role ``compare:<spec>``) needs its own answers judged on the drawn items.

How a compared target's loss at a drawn item is found, in this order:

1. its own judgment (table ``judgments``);
2. else, if its answer is the same text as the session target's (after collapsing
   whitespace; nothing else: "the Broncos" and "Broncos" may deserve different
   judgments), the target's judgment -- derived when read, never copied, so a
   later change of that label carries over;
3. else the same for another compared target whose identical answer was judged;
4. else it is missing: the comparison waits for it (the labeller asks for it).

The draws follow the session target's design only; LURE weights each judged item
by the probability it was drawn with, so the estimate of ``R_target - R_other``
stays unbiased (:func:`activetest.session.estimate.estimate_report`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.data.generative import GenTask
from activetest.session.records import LabelError
from activetest.session.store import Acquisition, LabelChange, SessionStore

__all__ = ["PendingJudgment", "add_judgments", "compare_role", "compared_losses",
           "compared_specs", "judgment_of", "pending_judgments", "same_answer"]


def compare_role(spec: str) -> str:
    """The store role of a compared target's answers and judgments."""
    return f"compare:{spec}"


def compared_specs(config: Mapping[str, Any]) -> list[str]:
    """The compared targets a graded session was created with (stored specs)."""
    return [str(s) for s in config.get("compare", ()) or ()]


def same_answer(a: str, b: str) -> bool:
    """Whether two answers are the same text (whitespace collapsed; case kept)."""
    return " ".join(a.split()) == " ".join(b.split())


@dataclass(frozen=True)
class PendingJudgment:
    """A drawn, labelled-or-not item whose compared answer still needs a judgment."""

    acquisition: Acquisition
    spec: str
    answer: str


def judgment_of(store: SessionStore, spec: str, row: int, *,
                _cache: dict[str, Any] | None = None) -> int | None:
    """The judgment level that applies to ``spec``'s answer at pool ``row`` (rules 1-3
    of the module docstring), or None while it is missing."""
    c = _cache if _cache is not None else {}
    if "answers" not in c:
        specs = compared_specs(store.config())
        c["answers"] = {"target": store.answers("target"),
                        **{s: store.answers(compare_role(s)) for s in specs}}
        c["judged"] = {"target": store.labels(),
                       **{s: store.judgments(compare_role(s)) for s in specs}}
    answers, judged = c["answers"], c["judged"]
    own = judged.get(spec, {}).get(row)
    if own is not None:
        return int(own.label)
    text = answers.get(spec, {}).get(row, ("",))[0]
    for other in ("target", *[s for s in answers if s not in ("target", spec)]):
        j = judged.get(other, {}).get(row)
        if j is not None and same_answer(answers[other].get(row, ("",))[0], text):
            return int(j.label)
    return None


def compared_losses(store: SessionStore, task: GenTask, spec: str,
                    rows: Sequence[int]) -> tuple[np.ndarray, list[int]]:
    """``(K,)`` the compared target's loss ``1 - score`` at ``rows`` (NaN where its
    judgment is missing) and the positions that are missing."""
    scores = np.asarray(task.judgment.scores, dtype=np.float64)
    cache: dict[str, Any] = {}
    out = np.full(len(rows), np.nan)
    missing = []
    for k, row in enumerate(rows):
        j = judgment_of(store, spec, int(row), _cache=cache)
        if j is None:
            missing.append(k)
        else:
            out[k] = 1.0 - scores[j]
    return out, missing


def pending_judgments(store: SessionStore) -> list[PendingJudgment]:
    """Drawn items, in draw order, whose compared answers still need a judgment.

    An answer identical to one already judged (or to the target's, once the target's
    is judged) is not pending; the target's own judgment is the session's label,
    asked for first.
    """
    specs = compared_specs(store.config())
    if not specs:
        return []
    cache: dict[str, Any] = {}
    labelled = store.labels()
    out = []
    for a in store.acquisitions():
        for spec in specs:
            if judgment_of(store, spec, a.index, _cache=cache) is not None:
                continue
            text = cache["answers"][spec].get(a.index, ("",))[0]
            if a.index not in labelled and same_answer(
                    cache["answers"]["target"].get(a.index, ("",))[0], text):
                continue  # judged with the target's answer
            out.append(PendingJudgment(a, spec, text))
    return out


def add_judgments(store: SessionStore, task: GenTask, index: Mapping[str, int], spec: str,
                  records: Iterable[tuple[str, Any]], *, source: str,
                  overwrite: bool = False) -> list[LabelChange]:
    """Judge ``spec``'s answers: ``(item_id, level)`` records, checked whole, written in
    one transaction.

    Raises:
        LabelError: every bad record listed (unknown target or item, an item never
            drawn, an unknown judgment level); nothing is written then.
    """
    from activetest.session.labels import parse_label

    specs = compared_specs(store.config())
    if spec not in specs:
        known = ", ".join(map(repr, specs)) or "none (pass --compare when creating the session)"
        raise LabelError(f"{spec!r} is not a compared target of this session; compared "
                         f"targets: {known}")
    drawn = {a.index for a in store.acquisitions()}
    problems, answers = [], []
    for item_id, raw in records:
        row = index.get(str(item_id))
        if row is None:
            problems.append(f"item {item_id!r} is not in the pool")
            continue
        if row not in drawn:
            problems.append(f"item {item_id!r} was never selected; only selected items can be "
                            f"judged")
            continue
        try:
            answers.append((row, parse_label(task, raw)))
        except LabelError as exc:
            problems.append(f"item {item_id!r}: {exc}")
    if problems:
        raise LabelError(f"{len(problems)} judgment problem(s); nothing was written:\n  "
                         + "\n  ".join(problems[:20]))
    return store.set_judgments(compare_role(spec), answers, source, overwrite=overwrite)
