"""What every part of the streamed ``init`` shares: the block size, how Parquet files are
read, and the signals (:class:`NotStreamable`: take the general path) and refusals
(:class:`StreamRefusedError`: the general path's message, said while streaming) of
:mod:`activetest.session.stream_init`."""

from __future__ import annotations

import zlib

from activetest.errors import UserFacingError
from activetest.formats.tables import PoolFormatError

__all__ = ["BLOCK", "CONTENT_RANK", "PARQUET_READ", "READ_ERRORS", "LateRefusalError",
           "NotStreamable", "StreamMismatchError", "StreamRefusedError",
           "StreamRefusedPoolError", "TableRefusals"]

#: Records per block (pool and tables); read as ``stream_base.BLOCK`` where used, so a
#: test can make it small.
BLOCK = 16_384

#: How Parquet files are read: in 1 MiB reads, without pre-buffering (which keeps
#: every column chunk read so far: ~30 bytes per item of a prediction table, 3 GB at
#: 1e8 items, measured with pyarrow 26).
PARQUET_READ = {"memory_map": False, "pre_buffer": False, "buffer_size": 1 << 20}

#: What a reader raises on input the general path reads (or refuses with a message); a
#: broken gzip stream raises EOFError or zlib.error.
READ_ERRORS = (ValueError, UnicodeError, OSError, KeyError, TypeError, IndexError, EOFError,
               zlib.error)


class NotStreamable(Exception):  # noqa: N818 - a signal, not an error
    """This input takes the general path (internal: never reaches a user)."""


class StreamRefusedError(ValueError):
    """An input refused while streaming, with the general path's message: a problem it
    can name exactly (a table's row with a value that is not a finite number or not
    normalised, an empty or missing id, or an earlier row's id; a pool record the pool
    reader refuses or whose id an earlier record has, a content check that does not
    match),
    where falling back would read the whole pool and tables into memory only to say the
    same (about 1.8 GB per million items: killed for memory from ~1e7 items)."""


class StreamRefusedPoolError(StreamRefusedError, PoolFormatError):
    """A pool's record refused while streaming: the general path's
    :class:`~activetest.formats.tables.PoolFormatError`, with its message."""


class StreamMismatchError(UserFacingError, RuntimeError):
    """The stream and the general path's rules read a table's rows differently, found
    where a refused row is read again to name its line
    (:func:`activetest.session.stream_tables.read_again`): the table file changed while
    ``init`` read it (its size, time or inode are not those it had when the stream began
    reading it), or a bug here. Said with both sides, never turned into a refusal that
    names a wrong line; a :class:`~activetest.errors.UserFacingError`, so the CLI says it
    in one message and exits 2 (it was a traceback, 2026-12-07)."""


#: The rank of a content check written for other content among a table's late refusals:
#: after every check of the rows' normalisation (ranks 0-2,
#: :class:`~activetest.models.table_read.RowRuleError`), which the general path makes as
#: it reads the table, before it confirms any row's content.
CONTENT_RANK = 3


class LateRefusalError(StreamRefusedError):
    """A table's refusal that the general path makes only once it has read every row of
    the table (a row that does not normalise; a content check written for other
    content): a problem of a later row (a value that is no finite number, an empty id,
    an earlier row's id) is named first, so the stream reads the table on before it says
    this one. ``rank``: the general path's order among the late refusals (the lowest is
    named, the first row of it: the normalisation rule's check,
    :class:`~activetest.models.table_read.RowRuleError`, then :data:`CONTENT_RANK`)."""

    def __init__(self, message: str, rank: int = 0) -> None:
        super().__init__(message)
        self.rank = rank


class TableRefusals:
    """The refusals of a streamed ``init``'s tables (by their place among the tables
    read: surrogate, target where needed, compared), said in the general path's order:
    it reads the whole pool first (a pool's record is refused at once), then each table
    in the order given, every row of it before it normalises the rows. So the table
    given first of those refused is named, and within a table a row's problem before a
    :class:`LateRefusalError`, wherever in the table the two are (QA, 2026-12-07: a row
    that did not normalise in the first block was named before a later row's bad value,
    a later table's row before an earlier table's, a table's row before a later pool
    record)."""

    def __init__(self) -> None:
        self.by_table: dict[int, StreamRefusedError] = {}

    def add(self, k: int, exc: StreamRefusedError) -> None:
        """Table ``k`` is refused with ``exc`` (a late refusal kept only until a row's
        problem of the same table, or a late one of a lower rank, replaces it)."""
        if self.open_to(k, exc.rank if isinstance(exc, LateRefusalError) else -1):
            self.by_table[k] = exc

    def open_to(self, k: int, rank: int) -> bool:
        """Whether a late refusal of ``rank`` (-1: a row's problem) of a later row would
        replace table ``k``'s refusal: none yet, or a late one of a higher rank. Where it
        would not, the stream skips that check of the table's later rows (since
        2026-12-07: a table whose only problem was a row at 5 that does not normalise had
        every later block converted, though only a later row's own problem could be
        named then)."""
        old = self.by_table.get(k)
        return old is None or (isinstance(old, LateRefusalError) and rank < old.rank)

    def reads(self, k: int) -> bool:
        """Whether table ``k`` is read on: no table before it is refused, and it is
        refused late if at all (its later rows may hold the problem named)."""
        first = self.first()
        if first is None:
            return True
        j, exc = first
        return k < j or (k == j and isinstance(exc, LateRefusalError))

    def forget(self, k: int) -> None:
        """Table ``k`` is joined by id instead, which reads it again from its first row
        (and refuses it there)."""
        self.by_table.pop(k, None)

    def first(self) -> tuple[int, StreamRefusedError] | None:
        """The refusal to say: of the table given first, with its place; None if none."""
        if not self.by_table:
            return None
        k = min(self.by_table)
        return k, self.by_table[k]
