"""A JSON array of row objects (``[{...}, {...}]``) read one record at a time
(:func:`iter_json_array`), in memory that does not grow with the file: the standard
library's decoder (:meth:`json.JSONDecoder.raw_decode`) on a window of the text, no new
dependency.

Only what :func:`json.loads` of the whole text would take is given, as it would give it:
an object per record, in order. Anything else -- malformed JSON anywhere (before or after
the records given so far), a top level that is not an array, a record that is not an
object, an object that repeats a key (which every reader refuses:
:func:`activetest.formats._json.loads`), text after the array -- raises
:class:`NotAStreamedArray` where it is met: the
reader of the whole text names such a problem (its message gives the line, column and
character of the whole document, which a window does not know), and does so before any
row's, so a caller that streams reads the file whole to refuse it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from activetest.formats import _json

__all__ = ["CHUNK", "NotAStreamedArray", "RepeatedKeyInArray", "iter_json_array",
           "record_repeating_a_key"]

#: Characters read at a time (read as ``json_array.CHUNK``, so a test can make it small).
CHUNK = 1 << 18

_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace (json.loads skips only these)
_NO_REPEATS = json.JSONDecoder(object_pairs_hook=_json.object_without_repeats)


class NotAStreamedArray(ValueError):  # noqa: N818 - a signal: read the file whole
    """The text is no JSON array of objects read so (see the module docstring)."""


class RepeatedKeyInArray(NotAStreamedArray):
    """An object that repeats the key :attr:`key` (in a record, at any depth)."""

    def __init__(self, key: str) -> None:
        super().__init__("an object repeats a key")
        self.key = key


def iter_json_array(f: IO[str], *, start: tuple[int, int] | None = None,
                    at: Callable[[int, int], None] | None = None
                    ) -> Iterator[tuple[str, dict[str, Any]]]:
    """``("record i", object)`` of each record of the JSON array in the text file ``f``
    (``i`` from 0, as the whole reader names records). An object that repeats a key is
    no such array (every reader refuses it, :func:`activetest.formats._json.loads`;
    the table reader kept the last value until 2026-12-07).

    ``at(i, c)``: called before record ``i`` is read, ``c`` the character of the text
    (from 0, as ``f`` reads it) its ``{`` is at. ``start``: ``(i, c)`` as ``at`` gave
    them: read from record ``i`` on, the ``c`` characters before it read and passed over
    (decoded, not parsed: the records before it are not checked).

    Raises:
        NotAStreamedArray: the text is not such an array (module docstring), when met
            (:class:`RepeatedKeyInArray` for a repeated key).
    """
    reader = _Window(f, _NO_REPEATS)
    i = 0
    if start is not None:
        i = start[0]
        reader.skip(start[1])
    else:
        if reader.next_char() != "[":
            raise NotAStreamedArray("not an array")
        reader.pos += 1
        if reader.next_char() == "]":
            reader.pos += 1
            reader.end()
            return
    while True:
        if at is not None:
            reader.next_char()
            at(i, reader.base + reader.pos)
        rec = reader.value()
        if not isinstance(rec, dict):
            raise NotAStreamedArray(f"record {i} is not an object")
        yield f"record {i}", rec
        i += 1
        ch = reader.next_char()
        reader.pos += 1
        if ch == "]":
            reader.end()
            return
        if ch != ",":
            raise NotAStreamedArray("expected , or ]")


class _Window:
    """The text of ``f`` read a chunk at a time, from :attr:`pos` on."""

    def __init__(self, f: IO[str], decoder: json.JSONDecoder) -> None:
        self.f = f
        self.decoder = decoder
        self.buf = ""
        self.pos = 0
        self.base = 0  # the characters of the text before buf's first
        self.eof = False

    def skip(self, n: int) -> None:
        """Pass over the text's next ``n`` characters (read, not parsed; buf empty)."""
        while n > 0:
            data = self.f.read(min(n, CHUNK))
            if not data:
                break
            n -= len(data)
            self.base += len(data)

    def _more(self) -> bool:
        """Read a chunk more (what was consumed dropped); False at the end of the file."""
        if self.eof:
            return False
        data = self.f.read(CHUNK)
        if not data:
            self.eof = True
            return False
        self.base += self.pos
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def next_char(self) -> str:
        """The next character after whitespace ("" at the end of the file)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def value(self) -> Any:
        """The JSON value at :attr:`pos` (after whitespace), read on until it is whole."""
        self.next_char()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except _json.RepeatedKeyError as exc:  # (an object is whole when its hook
                raise RepeatedKeyInArray(exc.key) from None  # runs)
            except (ValueError, RecursionError):
                if self._more():  # perhaps cut by the window's end
                    continue
                raise NotAStreamedArray("malformed JSON") from None
            if (end == len(self.buf) and not isinstance(value, (dict, list))
                    and self._more()):  # a number or word the window's end may have cut
                continue
            self.pos = end
            return value

    def end(self) -> None:
        """Nothing but whitespace may follow the array."""
        if self.next_char() != "":
            raise NotAStreamedArray("text after the array")


def record_repeating_a_key(text: str) -> int | None:
    """The number (from 0) of the record of the JSON array ``text`` in which an object
    first repeats a key, as :func:`json.loads` of the whole text meets it (records read
    in order, any value; one that is no object passed over: the whole reader refuses it
    after the text is parsed); None where the top level is no array or no record before
    the text's first problem repeats a key. Memory: the text and a record."""
    import io

    reader = _Window(io.StringIO(text), _NO_REPEATS)
    if reader.next_char() != "[":
        return None
    reader.pos += 1
    i = 0
    while True:
        try:
            reader.value()
        except RepeatedKeyInArray:
            return i
        except NotAStreamedArray:
            return None
        ch = reader.next_char()
        reader.pos += 1
        if ch != ",":
            return None
        i += 1
