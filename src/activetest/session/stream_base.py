"""What every part of the streamed ``init`` shares: the block size, how Parquet files are
read, and the signals (:class:`NotStreamable`: take the general path) and refusals
(:class:`StreamRefusedError`: the general path's message, said while streaming) of
:mod:`activetest.session.stream_init`."""

from __future__ import annotations

import zlib

from activetest.formats.tables import PoolFormatError

__all__ = ["BLOCK", "PARQUET_READ", "READ_ERRORS", "NotStreamable", "StreamRefusedError",
           "StreamRefusedPoolError"]

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

