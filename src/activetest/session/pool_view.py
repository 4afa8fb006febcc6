"""The pool of a session file, read only where it is needed.

A session's commands touch few items (the 50 drawn, the labels imported), so they
must not decode the whole pool (N JSON documents: 82 % of ``status`` at N = 1e6).
:class:`PoolView` is the pool as a ``Sequence[Item]`` whose items are read from the
file when indexed (and kept); :class:`RowIndex` is the ``item id -> row`` mapping,
looked up in the file's item-id index per id. Both read the whole pool only when
iterated as a whole (kept for callers that want every item).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import overload

from activetest.data.task import Item
from activetest.session.store import SessionStore

__all__ = ["PoolView", "RowIndex"]


class PoolView(Sequence[Item]):
    """The pool items of ``store``, each read when first indexed."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._n: int | None = None
        self._got: dict[int, Item] = {}

    def __len__(self) -> int:
        if self._n is None:
            self._n = self.store.n_items()
        return self._n

    def prefetch(self, rows: Iterable[int]) -> None:
        """Read the items at ``rows`` in one pass (before indexing them one by one)."""
        want = [int(r) for r in rows if int(r) not in self._got]
        if want:
            self._got.update(self.store.items_at(want))

    @overload
    def __getitem__(self, i: int) -> Item: ...

    @overload
    def __getitem__(self, i: slice) -> list[Item]: ...

    def __getitem__(self, i: int | slice) -> Item | list[Item]:
        if isinstance(i, slice):
            rows = range(len(self))[i]
            self.prefetch(rows)
            return [self._got[r] for r in rows]
        n = len(self)
        r = int(i) + n if int(i) < 0 else int(i)
        if not 0 <= r < n:
            raise IndexError(f"pool row {i} is outside 0..{n - 1}")
        if r not in self._got:
            self.prefetch([r])
        return self._got[r]

    def __iter__(self) -> Iterator[Item]:
        yield from self.store.items()


class RowIndex(Mapping[str, int]):
    """``item id -> pool row`` of ``store``, looked up per id (and kept)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._got: dict[str, int | None] = {}

    def prefetch(self, item_ids: Iterable[str]) -> None:
        """Look up many ids in one pass."""
        want = [str(i) for i in item_ids if str(i) not in self._got]
        if want:
            found = self.store.rows_of(want)
            self._got.update({i: found.get(i) for i in want})

    def __getitem__(self, item_id: str) -> int:
        key = str(item_id)
        if key not in self._got:
            self.prefetch([key])
        row = self._got[key]
        if row is None:
            raise KeyError(item_id)
        return row

    def __contains__(self, item_id: object) -> bool:
        try:
            self[str(item_id)]
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return self.store.n_items()

    def __iter__(self) -> Iterator[str]:
        yield from self.store.item_ids()

