"""The draws part of :class:`activetest.session.store.SessionStore`: the single-run
sampler's state, the acquisitions (written in the same transaction as the state that
produced them) and an adaptive design's per-draw record.

A mixin: its methods use the store's connection, reads and transactions
(:mod:`activetest.session.store`), and are the store's own methods to every caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from activetest.session.store_errors import SessionError
from activetest.session.store_rows import Acquisition, DrawRow, now
from activetest.session.store_rows import dumps as _dumps

__all__ = ["DrawsMixin"]


class DrawsMixin:
    """:class:`~activetest.session.store.SessionStore`'s draws (module docstring)."""

    # ------------------------------------------------------------------ sampler

    def init_sampler(self, alpha: float, seed: int | None, rng_state: Mapping[str, Any]) -> None:
        """Store the sampler's starting state (once, at creation)."""
        with self.transaction() as c:
            c.execute("INSERT OR REPLACE INTO sampler (id, alpha, seed, rng_state, updated) "
                      "VALUES (1, ?, ?, ?, ?)", (float(alpha), seed, _dumps(dict(rng_state)),
                                                 now()))

    def sampler_row(self) -> tuple[float, int | None, dict[str, Any]] | None:
        """``(alpha, seed, rng_state)`` after the last draw, or None before init."""
        rows = self._read("SELECT alpha, seed, rng_state FROM sampler WHERE id = 1")
        if not rows:
            return None
        alpha, seed, state = rows[0]
        return float(alpha), (None if seed is None else int(seed)), json.loads(state)

    def record_draws(self, indices: Sequence[int], q: Sequence[float],
                     rng_state: Mapping[str, Any], *, expected_steps: int) -> list[Acquisition]:
        """Append draws and the sampler state after them, in ONE transaction.

        Args:
            indices, q: the new draws, in order.
            rng_state: the generator state after the last of them.
            expected_steps: how many draws the caller's sampler was restored from;
                if another process drew meanwhile the write is refused.

        Raises:
            SessionError: the stored acquisitions changed since the caller read them.
        """
        at = now()
        with self.transaction() as c:
            have = int(c.execute("SELECT COUNT(*) FROM acquisitions").fetchone()[0])
            if have != expected_steps:
                raise SessionError(f"{self.path}: another process drew items meanwhile "
                                   f"({have} draws stored, expected {expected_steps}); retry")
            rows = [(have + k + 1, int(i), float(qq), at)
                    for k, (i, qq) in enumerate(zip(indices, q, strict=True))]
            c.executemany("INSERT INTO acquisitions (step, idx, q, created) VALUES (?, ?, ?, ?)",
                          rows)
            c.execute("UPDATE sampler SET rng_state = ?, updated = ? WHERE id = 1",
                      (_dumps(dict(rng_state)), at))
        ids = self.ids_at(r[1] for r in rows)
        return [Acquisition(s, i, ids[i], qq, a) for s, i, qq, a in rows]

    def record_design_draws(self, indices: Sequence[int], q: Sequence[float],
                            rng_state: Mapping[str, Any], design: Sequence[Sequence[float]],
                            seen: Sequence[tuple[int, int, float]], *,
                            expected_steps: int) -> list[Acquisition]:
        """Like :meth:`record_draws`, with each draw's design row, in ONE transaction.

        Args:
            design: per new draw ``(control, control_rest, lam, n_known, refits)``.
            seen: ``(step, label, loss)`` of earlier draws whose label the design
                used for the first time now (kept, so that a resumed design replays
                exactly what it saw even if a label is changed later).
        """
        with self.transaction() as c:
            acq = self.record_draws(indices, q, rng_state, expected_steps=expected_steps)
            c.executemany(
                "INSERT INTO design_draws (step, control, control_rest, lam, n_known, refits) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                ((a.step, float(d[0]), float(d[1]), float(d[2]), int(d[3]), int(d[4]))
                 for a, d in zip(acq, design, strict=True)))
            c.executemany("UPDATE design_draws SET seen_label = ?, seen_loss = ? WHERE step = ? "
                          "AND seen_label IS NULL",
                          ((int(y), float(L), int(s)) for s, y, L in seen))
        return acq

    def design_draws(self) -> list[tuple[float, float, float, int, int, int | None,
                                         float | None]]:
        """Per draw, in order: ``(control, control_rest, lam, n_known, refits, seen_label,
        seen_loss)`` (empty for sessions without an adaptive design)."""
        if self.schema_version < 2:
            return []
        rows = self._read("SELECT control, control_rest, lam, n_known, refits, seen_label, "
                          "seen_loss FROM design_draws ORDER BY step")
        return [(float(a), float(b), float(c), int(d), int(e),
                 None if f is None else int(f), None if g is None else float(g))
                for a, b, c, d, e, f, g in rows]

    def acquisitions(self) -> list[Acquisition]:
        """Every draw, in step order."""
        return [Acquisition(int(s), int(i), iid, float(q), created) for s, i, iid, q, created in
                self._read("SELECT a.step, a.idx, i.item_id, a.q, a.created FROM acquisitions a "
                           "CROSS JOIN items i ON i.idx = a.idx ORDER BY a.step")]

    def draw_rows(self) -> list[DrawRow]:
        """Every draw's step, item row and q, in step order (:meth:`acquisitions`
        without the item ids and times: no join on the items, about a seventh of its
        cost; for the design's replay, which needs no more)."""
        return [DrawRow(int(s), int(i), float(q)) for s, i, q in
                self._read("SELECT step, idx, q FROM acquisitions ORDER BY step")]

    def n_pending(self) -> int:
        """Number of draws without a label (:meth:`acquisitions` less those in
        :meth:`labels`, counted in SQL: no row read into Python)."""
        return int(self._read("SELECT COUNT(*) FROM acquisitions a WHERE NOT EXISTS "
                              "(SELECT 1 FROM labels l WHERE l.idx = a.idx)")[0][0])

    def n_acquired(self) -> int:
        """Number of draws so far."""
        return int(self._read("SELECT COUNT(*) FROM acquisitions")[0][0])

    def acquisition_steps(self, rows: Iterable[int]) -> dict[int, int]:
        """Pool row -> the step at which it was drawn, of ``rows`` only (those drawn),
        read by the draws' unique row index (:meth:`acquisitions` reads every draw)."""
        rows = list(rows)
        got = self._rows_at("SELECT idx, step FROM acquisitions WHERE idx IN", (), rows)
        if got is None:
            want = {int(r) for r in rows}
            return {a.index: a.step for a in self.acquisitions() if a.index in want}
        return {int(i): int(st) for i, st in got}

    def acquisition_step(self, index: int) -> int | None:
        """The step at which row ``index`` was drawn, or None."""
        rows = self._read("SELECT step FROM acquisitions WHERE idx = ?", (int(index),))
        return int(rows[0][0]) if rows else None
