"""A ``table:`` compared at ``estimate --compare`` whose ids and the pool's both look like
row numbers is refused unless confirmed (``estimate(ids_are_positions=True)``), as
``init`` refuses such a table (:mod:`activetest.session.compared_positions` does the
join; this module asks it for an open
:class:`~activetest.session.workflow.Session`)."""

from __future__ import annotations

from typing import Any

__all__ = ["FieldsById", "check_compared_join"]


def check_compared_join(s: Any, spec: str, *, confirmed: bool) -> None:
    """Refuse a ``table:`` compared now (``estimate --compare``) with the session ``s``
    whose ids and the pool's both look like row numbers, unless ``confirmed``
    (``estimate(ids_are_positions=True)``; the join by
    :mod:`activetest.session.compared_positions`, as ``init`` refuses one by
    :mod:`activetest.session.table_positions`). Other kinds of session, other scorers, a
    pool with an id that is no whole number and a table whose content confirms the join
    pass.

    Raises:
        SessionError: the join by positions, unconfirmed (the table, an item and both
            sides named).
    """
    from activetest.data.history_ids import number_ids
    from activetest.models.table import TableScorer
    from activetest.session.compared_positions import BLOCK, compared_position_join

    if s.kind.name != "classification":
        return
    scorer = s._scoring().scorer(spec)
    if not isinstance(scorer, TableScorer):
        return
    store = s.store
    # a pool id that is no whole number: the pool's ids are its own, never positions
    # (told without reading every id, or the table's: 1e6 ids were 70 MB more)
    if any(number_ids([i]) is None for i in store.ids_with_a_non_digit(100)):
        return
    # a text table has no content checks: its rows are checked as its ids are read for
    # the join's check, one pass (a large one was read twice, 2026-12-07)
    text = scorer.format in ("csv", "tsv", "jsonl", "json")
    if not text and scorer.confirms_content(s.task):
        return
    # both sides' ids read in blocks, never held (at 1e7 items they were the peak)
    compared_position_join(
        str(scorer.path), lambda: store.item_id_blocks(BLOCK),
        lambda: scorer.item_id_blocks(s.task), store.pool_rows_of,
        lambda row: store.items_at([row])[row].id, FieldsById(s),
        confirmed=confirmed)
    if text:  # rows the join's check did not read (the pool's ids its own): as before
        scorer.confirms_content(s.task)


class FieldsById:
    """A pool id -> its item's fields, read from the session file when asked (a refusal
    names one item). ``session``: an open
    :class:`~activetest.session.workflow.Session`."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getitem__(self, item_id: str) -> Any:
        return self._session.item(item_id).fields
