"""The blind spot's running state of an in-memory run, kept between its estimates.

A session keeps the blind-spot curves' running state in its file
(:mod:`activetest.session.blind_checkpoint`), so each estimate continues it over the
draws labelled since. :class:`activetest.ActiveTest` has no file: it keeps the state
here, under the same key (a fixed acquisition's
:func:`activetest.session.blind_checkpoint.fixed_key`: the acquisition, its floor and
scores, the curves' bounds, the level, the blind ratio, the first budget computed and the
draws; an adaptive design's :func:`activetest.session.blind_checkpoint.curve_key`: its
spec, the same, and the labels, losses and labels known at each draw), and the next
estimate continues it where the key of its first ``k`` draws is the one kept. The
numbers are those of a replay from the first draw, to the last bit (the continued pass
repeats the same float operations in the same order). Only the latest state is kept (an
adaptive design's holds a few per-item arrays: about 50 MB at 1e6 items).
"""

from __future__ import annotations

from dataclasses import dataclass

from activetest.stats.blindspot_replay import CurveState, FixedCurveState

__all__ = ["MemoryCurves"]


@dataclass
class MemoryCurves:
    """The latest blind-spot state of an in-memory run and its key (none: ``k`` is None).

    Attributes:
        key: the key of the state after its first ``k`` draws.
        state: a fixed acquisition's running state
            (:class:`~activetest.stats.blindspot_replay.FixedCurveState`) or an
            adaptive design's (:class:`~activetest.stats.blindspot_replay.CurveState`:
            the replayed design's state with it, its per-item arrays the replay's own).
    """

    key: str | None = None
    state: FixedCurveState | CurveState | None = None

    @property
    def k(self) -> int | None:
        """The draws of the state kept (None: none)."""
        return None if self.state is None else self.state.k

    def take(self, key: str) -> FixedCurveState | CurveState | None:
        """The state kept if its key is ``key`` (else None); either way none is kept
        after (a continued pass changes the state's exposure in place: a pass that
        stops part way must not leave it behind as the state of its first ``k`` draws)."""
        state = self.state if self.key == key else None
        self.key = self.state = None
        return state

    def keep(self, key: str, state: FixedCurveState | CurveState) -> None:
        """Keep ``state`` (after its first ``state.k`` draws, of key ``key``)."""
        self.key, self.state = key, state
