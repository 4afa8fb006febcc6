"""Logs of several sessions given to ``init --from-inspect``: told apart, named.

A session only grows: each of its logs holds a prefix of its newest log's draws. Logs whose
draws part from the newest log's are another session's (a folder of two sessions' logs).
:func:`other_sessions` groups them, session by session; where the session made again is
refused (another pool size, acquisition or seed; a draw that differs),
:func:`sessions_hint` says which logs were read, which are another session's, and which of
those match the session made (QA: a folder of two sessions' logs was refused at the draw
check, "made from another pool, surrogate or seed", the refusal naming no other session).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["OtherSession", "other_sessions", "parting_draw", "sessions_hint"]


@dataclass(frozen=True)
class OtherSession:
    """Logs given beside the newest log that are another session's.

    Attributes:
        paths: its logs, oldest first.
        draws: its draws as its newest log holds them.
        n_pool, acquisition, seed: its pool size, design and sampler seed.
        parts_at: the first draw (0-based) where it parts from the newest log's.
    """

    paths: tuple[str, ...]
    draws: tuple[str, ...]
    n_pool: int
    acquisition: str
    seed: int | None
    parts_at: int


def parting_draw(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The first draw where two logs' draws differ (one of them longer than the other is
    not a difference: a session only grows); None where one is a prefix of the other."""
    return next((j for j, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)


def other_sessions(older: Sequence[Any], newest: Any) -> tuple[OtherSession, ...]:
    """The sessions of the logs ``older`` (oldest first) whose draws part from ``newest``'s,
    each log in the session whose draws it shares (a prefix of one another's)."""
    groups: list[list[Any]] = []
    for r in older:
        if parting_draw(r.draws, newest.draws) is None \
                and len(r.draws) <= len(newest.draws):
            continue
        head = next((g for g in groups if all(parting_draw(r.draws, x.draws) is None
                                              for x in g)), None)
        if head is None:
            groups.append([r])
        else:
            head.append(r)
    out = []
    for g in groups:
        last = max(g, key=lambda x: len(x.draws))
        j = parting_draw(last.draws, newest.draws)
        out.append(OtherSession(tuple(x.path for x in g), tuple(last.draws), last.n_pool,
                                last.acquisition, last.seed,
                                len(newest.draws) if j is None else j))
    return tuple(out)


def sessions_hint(newest_path: str, others: Sequence[OtherSession], n_pool: int,
                  acquisition: str, seed: int | None, drawn: Sequence[str]) -> str:
    """What a refusal of the session made again adds where the logs given hold other
    sessions' (empty where they do not): the session read (the newest log's), each other
    session's logs, and those whose session matches the one made (its pool size,
    acquisition and seed, and the draws ``drawn`` so far), to be given alone."""
    if not others:
        return ""
    parts = []
    match = []
    for o in others:
        logs = ", ".join(o.paths)
        parts.append(f"{logs} ({len(o.paths)} log(s); {o.n_pool} items, acquisition "
                     f"{o.acquisition}, seed {o.seed}; its draw {o.parts_at + 1} is "
                     f"{o.draws[o.parts_at]!r})" if o.parts_at < len(o.draws) else
                     f"{logs} ({len(o.paths)} log(s); {o.n_pool} items, acquisition "
                     f"{o.acquisition}, seed {o.seed})")
        if (o.n_pool, o.acquisition, o.seed) == (n_pool, acquisition, seed) \
                and parting_draw(o.draws, drawn) is None:
            match.append(o)
    head = (f". The logs given hold {len(others) + 1} sessions: the newest log's "
            f"({newest_path}), the one read, and "
            + ("another's: " if len(others) == 1 else "others': ") + "; ".join(parts))
    if len(match) == 1:
        return (head + f". This session is the one of {', '.join(match[0].paths)}: give "
                       f"its logs alone (--from-inspect {match[0].paths[-1]}, its newest "
                       f"log, or a folder of its logs only)")
    return (head + ". Give the logs of one session only (a folder each, or the newest log "
                   "of the session by name)")
