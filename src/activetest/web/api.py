"""The labelling page's JSON API: its calls, what a request's fields may hold, and the
error that tells the page to stop (the session file was replaced).

The calls themselves are answered by :class:`activetest.web.server.LabelServer`; the
transport is :mod:`activetest.web.http`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

__all__ = ["CALLS", "MAX_WAIT", "WAITS_PER_BROWSER", "WRITES", "OtherSessionError",
           "ServerStoppingError", "SessionReplacedError", "ahead_of", "annotator_of",
           "held_reply", "holding_of", "item_id_of", "levels_of", "wait_of"]

#: Every call of the API, as (method, name under ``api/``).
CALLS = frozenset({("GET", "state"), ("GET", "progress"), ("POST", "hello"), ("POST", "next"),
                    ("POST", "answer"), ("POST", "answers"), ("POST", "undo"), ("POST", "skip"),
                    ("POST", "disagreements"), ("POST", "adjudicate"), ("POST", "release"),
                    ("POST", "wait"), ("POST", "alive")})

#: The calls that can give an item to another person or end their wait (an item given
#: back, set aside, answered or settled): ``api/wait`` answers after each.
WRITES = frozenset({"answer", "answers", "undo", "skip", "release", "adjudicate"})

#: The longest ``api/wait`` (seconds): the page asks again at least this often.
MAX_WAIT = 25.0

#: The most ``api/wait`` calls held open for one browser (the ``browser`` a page sends,
#: the same in every tab of it): a browser opens at most 6 connections to one address,
#: so tabs beyond these are answered at once (``crowded``) and ask again on a timer,
#: leaving connections for the answers and page loads of the other tabs (QA: with 6
#: tabs waiting, an answer given in a 7th waited up to 25 s to be sent).
WAITS_PER_BROWSER = 2

_BROWSER = re.compile(r"[A-Za-z0-9_-]{1,64}")


class SessionReplacedError(ValueError):
    """The session file was replaced (or removed) under a running server: nothing more
    is stored; restart ``activetest serve`` (HTTP 409)."""


class OtherSessionError(ValueError):
    """A call from a page loaded for another session than the one this address serves
    now (``serve OTHER.db`` restarted with the same ``--port`` and ``--token``): nothing
    is stored (HTTP 421: the page keeps its answers for their own session)."""


class ServerStoppingError(ValueError):
    """The server is stopping (or stopped) and stores nothing more; a server started
    again at the same address takes the call (HTTP 503: the page keeps its answers and
    sends them again)."""

    def __init__(self) -> None:
        super().__init__("the labelling server is stopping; nothing was stored (start "
                         "`activetest serve` again with this address's --port and --token "
                         "to go on)")


def annotator_of(body: dict[str, Any]) -> str:
    """The annotator's name from a request: text (see ``check_name``)."""
    from activetest.session.annotators import check_name

    raw = body.get("annotator")
    if raw is not None and not isinstance(raw, str):
        raise ValueError(f"the annotator's name must be text, got {_json_kind(raw)}")
    return check_name("" if raw is None else raw)  # missing: refused as an empty name


def item_id_of(body: dict[str, Any]) -> str:
    """The item's id from a request: text, as the page got it from the server.

    Raises:
        ValueError: missing, or not text (QA: a body without ``item_id`` was read as the
            item ``'None'``, which a pool may hold, and a list as its Python spelling).
    """
    raw = body.get("item_id")
    if raw is None:
        raise ValueError("item_id is missing: the id of the item answered (text)")
    if not isinstance(raw, str):
        raise ValueError(f"item_id must be the item's id as text, got {_json_kind(raw)}")
    return raw


def _json_kind(value: Any) -> str:
    """What a JSON value that is not text is, in words (for a refusal)."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"a number ({value!r})"
    return "a list" if isinstance(value, list) else "an object"


def held_reply(items: Sequence[Any]) -> dict[str, Any]:
    """``{"item": the next, "ahead": those after it}``, or ``{"done": true}``."""
    if not items:
        return {"done": True}
    return {"item": asdict(items[0]), "ahead": [asdict(x) for x in items[1:]]}


def ahead_of(body: dict[str, Any]) -> int:
    """How many items past the next one the page asks to hold at hand (0..5).

    Raises:
        ValueError: not a whole number from 0 to 5.
    """
    raw = body.get("ahead", 0)
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 <= raw <= 5:
        raise ValueError("ahead must be a number of items from 0 to 5")
    return raw


def wait_of(body: dict[str, Any]) -> tuple[int, float, str | None]:
    """``api/wait``'s ``since`` (the ``changes`` count a reply gave), ``seconds``
    (0..:data:`MAX_WAIT`, the longest wait) and ``browser`` (the page's browser, an id
    its tabs share; None: not said).

    Raises:
        ValueError: ``since`` is not a whole number, ``seconds`` not a number in range,
            or ``browser`` not 1 to 64 of A-Z, a-z, 0-9, '-', '_'.
    """
    since, seconds = body.get("since"), body.get("seconds", MAX_WAIT)
    browser = body.get("browser")
    if browser is not None and not (isinstance(browser, str) and _BROWSER.fullmatch(browser)):
        raise ValueError("browser must be 1 to 64 of A-Z, a-z, 0-9, '-' and '_'")
    if not isinstance(since, int) or isinstance(since, bool):
        raise ValueError("since must be the whole number 'changes' of the reply before")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or \
            not 0 <= seconds <= MAX_WAIT:
        raise ValueError(f"seconds must be a number from 0 to {MAX_WAIT:g}")
    return since, float(seconds), browser


def holding_of(body: dict[str, Any]) -> list[str]:
    """``api/alive``'s ``holding``: the ids of the items the page shows and holds at hand
    (0 to 10; none: an empty list).

    Raises:
        ValueError: not a list of at most 10 item ids (text).
    """
    raw = body.get("holding", [])
    if not isinstance(raw, list) or len(raw) > 10 or not all(isinstance(x, str) for x in raw):
        raise ValueError("holding must be a list of at most 10 item ids (text)")
    return raw


def levels_of(body: dict[str, Any]) -> list[int]:
    """The answer's levels as the page numbers them (1, 2, ...), returned from 0.

    Raises:
        ValueError: not a non-empty list of whole numbers.
    """
    raw = body.get("levels")
    if not isinstance(raw, list) or not raw or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in raw):
        raise ValueError("levels must be a list of level numbers (1, 2, ...)")
    return [v - 1 for v in raw]
