"""The scores part of :class:`activetest.session.store.SessionStore`: each model's stored
log-probs per role (chunked columns from schema 4, one blob before), their shared and
derived copies while a store is open, and the target's predictions.

A mixin: its methods use the store's connection, reads and transactions
(:mod:`activetest.session.store`), and are the store's own methods to every caller.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from activetest.session import columns as cols
from activetest.session.store_errors import DamagedSessionError
from activetest.session.store_rows import StoredScores, now
from activetest.session.store_rows import dumps as _dumps

__all__ = ["ScoresMixin", "score_column"]


def score_column(role: str) -> str:
    """The column holding ``role``'s scores (schema 4)."""
    return f"scores:{role}"


_score_column = score_column


class ScoresMixin:
    """:class:`~activetest.session.store.SessionStore`'s scores (module docstring)."""

    # ------------------------------------------------------------------ scores

    @contextlib.contextmanager
    def shared_scores(self) -> Iterator[None]:
        """Inside: :meth:`scores` reads each role's log-probs once and returns the same
        read-only array to every caller (an estimate's pool arrays, its design and its
        blind spot read them from one copy, not three); a write of a role's scores
        drops its copy."""
        outer = self._shared is not None
        if not outer:
            self._shared = {}
        try:
            yield
        finally:
            if not outer:
                self._shared = None

    def derived(self, role: str, key: Any, compute: Callable[[], Any]) -> Any:
        """A value computed from ``role``'s stored scores (by ``compute``), kept while this
        store is open: the next call with the same hashable ``key`` returns the same
        object, not computed again, as long as the role's stored row (spec, shape and
        write time) is the one it was computed from. One value per role (a new key
        replaces it); a write of the role's scores through this store drops it. The
        caller must not change the value (it is shared by every later call)."""
        rows = self._read("SELECT spec, n_rows, n_classes, updated FROM scores WHERE role = ?",
                          (role,))
        stamp = (key, *rows[0]) if rows else None
        got = self._derived.get(role)
        if stamp is not None and got is not None and got[0] == stamp:
            return got[1]
        value = compute()
        if stamp is not None:
            self._derived[role] = (stamp, value)
        return value

    def put_scores(self, role: str, spec: str, logprobs: np.ndarray,
                   provenance: Mapping[str, Any], *, predictions: bool | None = None) -> None:
        """Store (replace) a model's ``(N, C)`` log-probs; NaN rows mean "not scored".

        ``predictions`` (default: for every role but the surrogate) also records
        the model's predicted class and its probability per scored item.
        """
        self._derived.pop(role, None)
        if self._shared is not None:
            self._shared.pop(role, None)
        lp = np.ascontiguousarray(logprobs, dtype="<f8")
        n = self.n_items()
        if lp.ndim != 2 or lp.shape[0] != n:
            raise ValueError(f"scores for {role!r} must have shape (N={n}, C), got {lp.shape}")
        with self.transaction() as c:
            if self._version >= 4:  # chunked columns; predictions derived from the scores
                cols.write_column(c, _score_column(role), lp)
                c.execute("INSERT OR REPLACE INTO scores (role, spec, n_rows, n_classes, "
                          "logprobs, provenance, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (role, spec, lp.shape[0], lp.shape[1], b"",
                           _dumps(dict(provenance)), now()))
                return
            c.execute("INSERT OR REPLACE INTO scores (role, spec, n_rows, n_classes, logprobs, "
                      "provenance, updated) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (role, spec, lp.shape[0], lp.shape[1], lp.tobytes(),
                       _dumps(dict(provenance)), now()))
            if predictions if predictions is not None else role != "surrogate":
                c.execute("DELETE FROM predictions WHERE role = ?", (role,))
                ok = ~np.isnan(lp).any(axis=1)
                pred = np.argmax(np.where(ok[:, None], lp, 0.0), axis=1)
                prob = np.exp(lp[np.arange(n), pred])
                c.executemany("INSERT INTO predictions (role, idx, predicted, probability) "
                              "VALUES (?, ?, ?, ?)",
                              ((role, int(i), int(pred[i]), float(prob[i]))
                               for i in np.flatnonzero(ok)))

    def update_score_rows(self, role: str, rows: Sequence[int], logprobs: np.ndarray,
                          provenance: Mapping[str, Any] | None = None) -> StoredScores:
        """Fill in the rows ``rows`` of a stored role (one transaction); returns the result."""
        self._derived.pop(role, None)
        if self._shared is not None:
            self._shared.pop(role, None)
        with self.transaction() as c:
            info = cols.column_info(c, _score_column(role)) if self._version >= 4 else None
            if info is not None:  # only the chunks holding the rows are rewritten
                r = np.asarray(rows, dtype=np.int64)
                cols.update_rows(c, info, r, np.asarray(logprobs, dtype=np.float64))
                prov_text = c.execute("SELECT provenance FROM scores WHERE role = ?",
                                      (role,)).fetchone()[0]
                prov = json.loads(prov_text)
                prov.update(provenance or {})
                c.execute("UPDATE scores SET provenance = ?, updated = ? WHERE role = ?",
                          (_dumps(prov), now(), role))
        if info is not None:
            out = self.scores(role)
            assert out is not None
            return out
        with self.transaction():
            cur = self.scores(role)
            if cur is None:
                raise KeyError(f"no scores stored for {role!r}")
            lp = cur.logprobs.copy()
            lp[np.asarray(rows, dtype=np.int64)] = np.asarray(logprobs, dtype=np.float64)
            prov = dict(cur.provenance)
            if provenance:
                prov.update(provenance)
            self.put_scores(role, cur.spec, lp, prov)
        out = self.scores(role)
        assert out is not None
        return out

    def scores(self, role: str) -> StoredScores | None:
        """The stored scores of ``role``, or None (inside :meth:`shared_scores`: one
        read-only copy)."""
        if self._shared is not None:
            if role not in self._shared:
                got = self._read_scores(role)
                if got is None:
                    return None
                got.logprobs.flags.writeable = False
                self._shared[role] = got
            return self._shared[role]
        return self._read_scores(role)

    def _read_scores(self, role: str) -> StoredScores | None:
        rows = self._read("SELECT spec, n_rows, n_classes, logprobs, provenance, updated "
                          "FROM scores WHERE role = ?", (role,))
        if not rows:
            return None
        spec, n, c, blob, prov, updated = rows[0]
        if len(blob) == 0 and int(n) * int(c) > 0:  # schema 4: in chunked columns
            lp = self.score_rows_of(role)
        else:
            lp = np.frombuffer(blob, dtype="<f8").reshape(int(n), int(c)).astype(np.float64)
        return StoredScores(role, spec, lp, json.loads(prov), updated)

    def score_rows_of(self, role: str, rows: np.ndarray | None = None) -> np.ndarray:
        """``role``'s stored log-probs at pool ``rows`` (all rows: None), reading only
        the chunks that hold them (schema 4; older files read the blob).

        Raises:
            KeyError: no scores stored for ``role``.
            DamagedSessionError: a column whose chunks are missing or of the wrong size.
        """
        info = cols.column_info(self._conn, _score_column(role)) if self._has_columns() \
            else None
        if info is None:
            stored = self.scores(role)
            if stored is None:
                raise KeyError(f"no scores stored for {role!r}")
            return stored.logprobs if rows is None else stored.logprobs[rows]
        try:
            if rows is None:
                return cols.read_column(self._conn, info)
            return cols.read_rows(self._conn, info, rows)
        except ValueError as exc:
            raise DamagedSessionError(f"{self.path}: the stored scores of {role} are "
                                      f"damaged ({exc}); restore the file from a "
                                      f"backup") from None

    def score_provenance(self, role: str) -> dict[str, Any] | None:
        """The provenance stored with ``role``'s scores, without reading the scores (None:
        no scores stored for ``role``)."""
        rows = self._read("SELECT provenance FROM scores WHERE role = ?", (role,))
        return json.loads(rows[0][0]) if rows else None

    def score_roles(self) -> list[str]:
        """The roles with stored scores."""
        return [r[0] for r in self._read("SELECT role FROM scores ORDER BY role")]

    def predictions(self, role: str = "target") -> dict[int, tuple[int, float]]:
        """``idx -> (predicted class, its probability)`` for ``role``."""
        if self._version >= 4:  # derived from the stored scores
            stored = self.scores(role)
            if stored is None:
                return {}
            lp = stored.logprobs
            ok = np.flatnonzero(~np.isnan(lp).any(axis=1))
            pred = np.argmax(lp[ok], axis=1)
            prob = np.exp(lp[ok, pred])
            return {int(i): (int(p), float(pr)) for i, p, pr in zip(ok, pred, prob, strict=True)}
        return {int(i): (int(p), float(pr)) for i, p, pr in self._read(
            "SELECT idx, predicted, probability FROM predictions WHERE role = ?", (role,))}
