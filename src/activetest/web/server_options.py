"""The labelling server's own options, checked in one place (:class:`ServerOptions`).

:class:`~activetest.web.server.LabelServer` takes them as keyword arguments (its public
signature) and builds this record first, so that a wrong one is refused by name before
the session file is opened; the record is what the server keeps.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["SILENT_SECONDS", "ServerOptions"]

#: The default of ``silent_seconds``: a page not heard of for this long (no
#: ``api/alive``) gives its items back. Long enough for a tab in the background, whose
#: timers the browser slows to one a minute.
SILENT_SECONDS = 180.0

#: A token given by the caller (``--token``): URL-safe, long enough to stay a secret.
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,}")


@dataclass(frozen=True)
class ServerOptions:
    """Where and how the labelling page is served (see :class:`LabelServer`'s Args).

    Attributes:
        host: the address to listen on.
        port: the port, 0..65535 (0: a free one; the socket checks the range).
        token: the URL's secret as given (None: the server makes a random one).
        adjudicators: the names that may settle disagreements, as stored (stripped).
        target_width: the anytime interval width that says "you may stop now" (None:
            no such line).
        busy_timeout: seconds to wait for another process's lock on the file.
        silent_seconds: a page not heard of for this long gives its items back.
    """

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    adjudicators: frozenset[str] = frozenset()
    target_width: float | None = None
    busy_timeout: float = 5.0
    silent_seconds: float = SILENT_SECONDS

    @classmethod
    def check(cls, *, host: Any = "127.0.0.1", port: Any = 0, token: Any = None,
              adjudicators: Any = (), target_width: Any = None, busy_timeout: Any = 5.0,
              silent_seconds: Any = SILENT_SECONDS) -> ServerOptions:
        """The record of the arguments as a caller gave them, each refused by name when
        wrong (QA: ``port=None``, ``host=None`` and ``token=5`` raised Python's
        TypeErrors; ``adjudicators="ann"`` was read as the names "a" and "n", and
        ``adjudicators=[1, 2]`` as the names "1" and "2"; ``target_width="a"`` was kept,
        for the progress line).

        Raises:
            ValueError: the first wrong argument, named, with what it expects.
        """
        from activetest.session.annotators import check_name
        from activetest.session.options import check_target_width

        if token is not None and (not isinstance(token, str) or not _TOKEN.fullmatch(token)):
            raise ValueError(f"token {token!r}: expected at least 16 characters of A-Z, a-z, "
                             f"0-9, '-' and '_' (the secret in the page's address, e.g. the "
                             f"one a previous `activetest serve` printed)")
        if not isinstance(host, str):
            raise ValueError(f"host must be an address to listen on (a string, e.g. "
                             f"'127.0.0.1'), got {type(host).__name__} {host!r}")
        if isinstance(port, bool) or not isinstance(port, numbers.Integral):
            raise ValueError(f"port must be an integer 0..65535 (0: a free one), got "
                             f"{type(port).__name__} {port!r}")
        if isinstance(adjudicators, (str, bytes)) or not isinstance(adjudicators, Iterable):
            raise ValueError(f"adjudicators must be a sequence of names, got "
                             f"{type(adjudicators).__name__} {adjudicators!r}"
                             + (f" (one: adjudicators=[{adjudicators!r}])"
                                if isinstance(adjudicators, str) else ""))
        names = list(adjudicators)
        for name in names:
            if not isinstance(name, str):  # (check_name refuses it too; this names the list)
                raise ValueError(f"adjudicators must be names (text), got "
                                 f"{type(name).__name__} {name!r} in {names!r}"
                                 + (f" (as text: adjudicators={[str(n) for n in names]!r})"
                                    if isinstance(name, numbers.Number) else ""))
        judges = frozenset(check_name(a, "adjudicator", "adjudicators") for a in names)
        width = check_target_width(target_width)
        if not (isinstance(silent_seconds, (int, float)) and not isinstance(silent_seconds, bool)
                and 0 < silent_seconds < float("inf")):
            raise ValueError(f"--silent-seconds must be a positive number of seconds, got "
                             f"{silent_seconds!r}")
        return cls(host=host, port=int(port), token=token, adjudicators=judges,
                   target_width=width, busy_timeout=busy_timeout,
                   silent_seconds=float(silent_seconds))
