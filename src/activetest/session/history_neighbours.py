"""The similarity-weighted neighbours' column in history sessions (``init --history``).

The feature design of a history session (:func:`activetest.session.design.history_design`)
learns from label-free history features (difficulty, item factors). The neighbours'
column (:mod:`activetest.stats.neighbours`) is learnt in-run: before every refit, the
history models are weighted by how well they predict the target's labels so far, and
their prediction (leave-one-out on the labelled items) becomes one more column of the
design's model matrix. It needs the whole joined response matrix, not only its features,
so a session with it stores:

- the joined response matrix as the scores role :data:`ROLE` (``(N, H)``: one row per
  pool item in pool order, one column per history model in the join's row order,
  scores in [0, 1], NaN where the join has no cell; the target's own row is never in it:
  :func:`activetest.session.create_history.join_pool_history` drops it first), written
  in the same transaction as the rest of the session (schema 4: chunked columns,
  :mod:`activetest.session.columns`);
- in the config's ``history`` record the key ``"neighbours"``
  (:meth:`NeighbourSettings.record`): the flip probability ``eps`` chosen at ``init`` by
  :func:`activetest.stats.neighbours.choose_eps` on the history alone (seed
  :data:`EPS_SEED`), every candidate's score, and the column's prior weight.

A config without the key is the design without the column (every session written
before it, and ``init --no-history-neighbours``): the same numbers as before. With
``init --history-neighbours-until K`` the record also holds ``update_until`` and
``after``: the column is recomputed only at refits that know at most K labels, then
dropped (``"drop"``: set to 0, the design's model from then on the features' alone) or
frozen (``"freeze"``) (:func:`activetest.stats.neighbours.neighbour_design`); a record
without them updates the column at every refit.

Cost: the stored matrix is ``8 N H`` bytes in the file; the design's data from it (three
``N x H`` float64 arrays, :func:`stored_neighbour_history`) is built once per open store,
in one compiled pass from the stored item-major layout, and kept while the store is open
(docs/history.md, "In a session", gives the measured times).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from activetest.session.store import SessionError, SessionStore

__all__ = ["AFTER", "EPS_SEED", "KEY", "MAX_CELLS", "ROLE", "NeighbourSettings",
           "NeighbourUpdate", "choose_settings", "column_label",
           "design_label", "put_responses", "settings_of", "stored_neighbour_history",
           "stored_responses", "surrogate_column", "surrogate_label"]

#: The scores role holding the joined response matrix (items x history models).
ROLE = "history_responses"
#: The key of the config's ``history`` record (absent: no neighbours' column).
KEY = "neighbours"
#: Seed of the eps choice at ``init`` (:func:`activetest.stats.neighbours.choose_eps`).
EPS_SEED = 0
#: The most history cells (``H x N``) a new session takes the neighbours' column for:
#: every command holds about five float64 copies of the matrix (1.6 GB at this size);
#: above it ``init`` leaves the column out and says so.
MAX_CELLS = 40_000_000
#: What a limited update does with the column after its last label count (the modes of
#: :data:`activetest.stats.neighbours.AFTER_MODES`, not imported: ``status`` reads this
#: module and loads no design).
AFTER = ("drop", "freeze")


@dataclass(frozen=True)
class NeighbourUpdate:
    """A limited update of the neighbours' column (``init --history-neighbours-until``).

    Attributes:
        until: the column is recomputed at refits that know at most this many labels.
        after: then ``"drop"`` (set to 0 on every item) or ``"freeze"`` (kept).
    """

    until: int
    after: str = "drop"

    def __post_init__(self) -> None:
        if isinstance(self.until, bool) or not isinstance(self.until, int) or self.until < 0:
            raise SessionError(f"--history-neighbours-until is {self.until!r}; it must be a "
                               f"count of labels >= 0")
        if self.after not in AFTER:
            raise SessionError(f"--history-neighbours-after is {self.after!r}; it must be "
                               f"one of {', '.join(AFTER)}")


@dataclass(frozen=True)
class NeighbourSettings:
    """What a session records of its neighbours' column (config ``history.neighbours``).

    Attributes:
        eps: the flip probability of the neighbours' mixture, in (0, 0.5).
        prior_weight: prior mean of the column's weight in the design's ridge prior.
        eps_scores: ``(eps, mean held-out log-likelihood per item)`` per candidate tried
            at ``init`` (shown, not used by the design).
        update: a limited update of the column (None: recomputed at every refit).
    """

    eps: float
    prior_weight: float = 1.0
    eps_scores: tuple[tuple[float, float], ...] = ()
    update: NeighbourUpdate | None = None

    def record(self) -> dict[str, Any]:
        """The JSON record stored in the config (the limited update's keys only where
        there is one: every other record is as before it)."""
        rec: dict[str, Any] = {
            "eps": float(self.eps), "prior_weight": float(self.prior_weight),
            "eps_scores": [[float(e), float(s)] for e, s in self.eps_scores], "role": ROLE}
        if self.update is not None:
            rec.update(update_until=int(self.update.until), after=self.update.after)
        return rec

    @classmethod
    def from_record(cls, rec: Any, where: str = "config.history.neighbours"
                    ) -> NeighbourSettings:
        """The settings of a stored record.

        Raises:
            SessionError: a record this activetest cannot rebuild the design from.
        """
        if not isinstance(rec, Mapping):
            raise SessionError(f"{where} is {rec!r}, not a record")
        eps, pw = rec.get("eps"), rec.get("prior_weight", 1.0)
        if (not isinstance(eps, (int, float)) or isinstance(eps, bool)
                or not 0.0 < float(eps) < 0.5):
            raise SessionError(f"{where}.eps is {eps!r}; it must lie in (0, 0.5)")
        if (not isinstance(pw, (int, float)) or isinstance(pw, bool)
                or not math.isfinite(float(pw))):
            raise SessionError(f"{where}.prior_weight is {pw!r}; it must be a number")
        scores = tuple((float(e), float(s)) for e, s in rec.get("eps_scores") or ())
        update = None
        if "update_until" in rec or "after" in rec:
            until, after = rec.get("update_until"), rec.get("after", "drop")
            try:  # NeighbourUpdate's own checks, named by the record's keys
                update = NeighbourUpdate(until, after)  # type: ignore[arg-type]
            except SessionError:
                raise SessionError(f"{where}: update_until {until!r}, after {after!r}; they "
                                   f"must be a count of labels >= 0 and one of "
                                   f"{', '.join(AFTER)}") from None
        return cls(float(eps), float(pw), scores, update)


def choose_settings(responses: np.ndarray, prior_weight: float | None = None,
                    update: NeighbourUpdate | None = None) -> NeighbourSettings:
    """The settings a new session records: eps chosen on the ``(H, N)`` joined history
    alone (:func:`activetest.stats.neighbours.choose_eps`, seed :data:`EPS_SEED`), the
    prior weight :data:`activetest.stats.neighbours.PRIOR_WEIGHT` unless given, and the
    limited update if any."""
    from activetest.stats.neighbours import PRIOR_WEIGHT, choose_eps

    eps, scores = choose_eps(responses, random_state=EPS_SEED)
    return NeighbourSettings(float(eps), PRIOR_WEIGHT if prior_weight is None
                             else float(prior_weight), tuple(scores), update)


def put_responses(store: SessionStore, responses: np.ndarray, models: Sequence[str]) -> None:
    """Store the ``(H, N)`` joined response matrix as role :data:`ROLE` (``(N, H)``, item
    rows in pool order), inside the caller's transaction."""
    R = np.asarray(responses, dtype=np.float64)
    store.put_scores(ROLE, "history", np.ascontiguousarray(R.T),
                     {"layout": "pool items (rows, pool order) x history models (columns)",
                      "models": list(models), "cells": "score in [0, 1], NaN missing"},
                     predictions=False)


def stored_responses(store: SessionStore) -> np.ndarray:
    """``(H, N)`` the response matrix stored by :func:`put_responses`.

    Raises:
        SessionError: it is missing.
    """
    got = store.scores(ROLE)
    if got is None:
        raise SessionError(f"{store.path}: the history's response matrix (scores {ROLE!r}) "
                           f"is missing; the config's history record names the neighbours' "
                           f"column, which needs it")
    return got.logprobs.T


def stored_neighbour_history(store: SessionStore, settings: NeighbourSettings,
                             p_correct: np.ndarray) -> Any:
    """The neighbours' data (:class:`activetest.stats.neighbours.NeighbourHistory`) of the
    stored response matrix, its missing cells at ``p_correct`` (the stored shrunk mean
    correctness), flip probability ``settings.eps``: built once per open store and kept
    (:meth:`SessionStore.derived`, keyed by eps, ``p_correct``'s bytes and the stored
    matrix's row), so a :class:`~activetest.session.workflow.Session`'s later commands
    do not read and rebuild it. The same arrays, bit for bit, as
    ``neighbour_history(stored_responses(store), p_correct=p_correct, eps=settings.eps)``.

    Raises:
        SessionError: the matrix is missing.
    """
    import hashlib

    from activetest.stats.neighbours import neighbour_history

    p = np.ascontiguousarray(p_correct, dtype=np.float64)
    key = (float(settings.eps), p.shape, hashlib.sha256(p.tobytes()).hexdigest())
    return store.derived(ROLE, key, lambda: neighbour_history(
        stored_responses(store), p_correct=p, eps=settings.eps))


def settings_of(history: Mapping[str, Any] | None) -> NeighbourSettings | None:
    """The neighbours' settings of a config's ``history`` record (None: no column)."""
    if not history or KEY not in history:
        return None
    return NeighbourSettings.from_record(history[KEY])


def design_label(history: Mapping[str, Any] | None) -> str | None:
    """What status and reports call a history session's design (None: not one)."""
    if history is None:
        return None
    from activetest.session.config import POOL_SIGNAL

    feats = list(history.get("features") or ())
    parts = ["history features"] + (["surrogate"] if "surrogate" in feats else []) + (
        [str(history.get("pool_signal") or "the pool's own signal")]
        if POOL_SIGNAL in feats else [])
    s = settings_of(history)
    if s is None:
        return " + ".join(parts) + " (no neighbours)"
    tail = "" if s.update is None else (
        f", updated until {s.update.until} labels, then "
        f"{'dropped' if s.update.after == 'drop' else 'frozen'}")
    return " + ".join([*parts, "neighbours"]) + f" (eps {s.eps:g}, prior weight " \
        f"{s.prior_weight:g}{tail})"


#: How a history session's pool signal named by ``pool_signal`` reads where it is a pool
#: column (sessions made before ``"pool_column"`` was recorded).
_COLUMN_LABEL = "pool column "


def surrogate_label(surrogate: str, history: Mapping[str, Any] | None) -> str:
    """The surrogate ``init``, ``status`` (text and ``--json``), reports and Every Eval Ever
    records name: ``surrogate`` as stored, except where an inspect session draws by a pool
    column beside the history's features (``--surrogate column:NAME --history``: stored as
    ``history``, the design's rule), which is named for what draws: ``column:NAME beside
    the history's features`` (the column: :func:`surrogate_column`).

    Args:
        surrogate: the config's surrogate.
        history: the config's ``history`` record (None: no history).
    """
    column = surrogate_column(surrogate, history)
    return surrogate if column is None else column_label(column)


def column_label(column: str) -> str:
    """What draws in a session made with ``--surrogate column:NAME --history``, as every
    reader names it: ``column:NAME beside the history's features``
    (:func:`surrogate_label`; :class:`~activetest.session.records.SessionStatus`).

    Args:
        column: the pool column (``NAME``).
    """
    return f"column:{column} beside the history's features"


def surrogate_column(surrogate: str, history: Mapping[str, Any] | None) -> str | None:
    """The pool column a history session draws by beside the history's features
    (``--surrogate column:NAME --history``: ``NAME``), from its ``history`` record's
    ``pool_column``, or, in a session made before that was recorded, from its design's
    signal's name (``pool column NAME``); None where the session has no such column
    (``--surrogate history``, a pool run's signal, no history).

    Args:
        surrogate: the config's surrogate (stored as ``history`` in such a session).
        history: the config's ``history`` record (None: no history).
    """
    if not history or surrogate != "history":
        return None
    from activetest.session.config import POOL_SIGNAL

    if POOL_SIGNAL not in (history.get("features") or ()):
        return None
    column = history.get("pool_column")
    label = history.get("pool_signal")
    if not isinstance(column, str) and isinstance(label, str) \
            and label.startswith(_COLUMN_LABEL):  # the only producer's wording (harness.py)
        column = label[len(_COLUMN_LABEL):]
    return column if isinstance(column, str) else None
