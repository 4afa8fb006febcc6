"""Other models' results joined to a pool: the history a session's design learns from.

:func:`join_history` reads one or more response matrices
(:func:`activetest.formats.history.read_response_matrix`) and aligns their item
columns to the pool's items BY ID, with the house's join rules:

* an item id is matched exactly (after stripping blanks); nothing is joined by
  position. A response matrix carries no item content, so ids that are only
  positions could never be confirmed: a matrix that shares no id with the pool
  is refused, naming the file and an id of each side;
* a history that covers fewer items than the pool is reported (items without
  history still work: the design gives them the average difficulty and learns
  their offset); columns for items not in the pool are ignored (counted, and the
  first few named, control characters shown escaped: QA, an id holding one was only
  counted);
* the target's own row is never used: rows named in ``exclude`` are dropped (a
  name that matches no row is refused, it is likely a typo), and so is any row
  identical to ``target_scores`` (the target's own automatic scores where a
  session has them) on every item both have; every dropped row is said;
* the same model in two files is one row where its results agree on every item both
  have (said), and refused where they differ, naming both files and an item (it would
  count twice); a row identical to a row of an earlier file under another name is
  dropped and said;
* columns that equal a pool id but for case, blanks, leading zeros, a number's ``.0``
  or control and invisible characters are never joined: the refusal or the count of
  ignored columns names one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from activetest.formats.history import ResponseMatrix, read_response_matrix
from activetest.formats.near_ids import NEAR_MISS_WHY, near_misses
from activetest.formats.run_settings import settings_base

__all__ = ["HistoryJoinError", "PoolHistory", "join_history", "near_misses"]


class HistoryJoinError(ValueError):
    """A history that cannot be joined to the pool (the message names file, items, sides)."""


@dataclass(frozen=True)
class PoolHistory:
    """History rows aligned to a pool.

    Attributes:
        scores: ``(H, N)`` scores in [0, 1] of H other models on the pool's N items (pool
            order), NaN where missing.
        models: the H row names.
        sources: the files read.
        n_covered: pool items with at least one history cell.
        excluded: ``(name, why)`` for every dropped row.
        ignored_items: matrix columns that are not pool items.
        near_miss: an ignored column and the pool id it equals but for case, blanks,
            leading zeros, a number's ``.0`` or control and invisible characters (never
            joined: said), or None.
        notes: more to say (rows that equal the target's scores on too few items to be
            told apart).
        ignored_examples: the first few ignored columns' ids (named in the messages).
        unused_sources: files read none of whose rows is used (all dropped: the
            target's own run, a copy of another file's row), named apart (QA: "1
            model(s) from A, B" when B's only row was the target's).
        by_position: files joined by ids that look like positions, as the user confirmed
            (:mod:`activetest.session.history_positions`); empty: every join by id.
        source_models: per file of ``sources``, the model rows it gave (all of them,
            used or not).
    """

    scores: np.ndarray
    models: tuple[str, ...]
    sources: tuple[str, ...]
    n_covered: int
    excluded: tuple[tuple[str, str], ...]
    ignored_items: int
    near_miss: tuple[str, str] | None = None
    notes: tuple[str, ...] = ()
    ignored_examples: tuple[str, ...] = ()
    unused_sources: tuple[str, ...] = ()
    by_position: tuple[str, ...] = ()
    source_models: tuple[tuple[str, ...], ...] = ()

    def messages(self) -> list[str]:
        """What a person should be told about the join (coverage, dropped rows)."""
        n = self.scores.shape[1]
        used = [x for x in self.sources if x not in self.unused_sources]
        unused = ("" if not self.unused_sources else
                  f" ({', '.join(self.unused_sources)} read too: none of "
                  f"{'its' if len(self.unused_sources) == 1 else 'their'} rows used, below)")
        out = [f"history: {len(self.models)} model(s) from {', '.join(used)}{unused}; "
               f"{self.n_covered} of {n} pool items have history"
               + ("" if self.n_covered == n else
                  f" ({n - self.n_covered} without: they get the average difficulty)")]
        if self.ignored_items:
            shown = ", ".join(map(repr, self.ignored_examples))
            more = ", ..." if self.ignored_items > len(self.ignored_examples) else ""
            out.append(f"history: {self.ignored_items} item column(s) are not in the pool "
                       f"(ignored" + (f": {shown}{more}" if shown else "") + ")"
                       + ("" if self.near_miss is None else
                          "; " + _near_miss_note(*self.near_miss)))
        out += [f"history: row {name!r} not used ({why})" for name, why in self.excluded]
        return out + list(self.notes)


def _norm(s: str) -> str:
    return str(s).strip()


def _near_miss_note(col: str, pool_id: str) -> str:
    return (f"e.g. {col!r} in the history is {pool_id!r} in the pool but for "
            f"{NEAR_MISS_WHY}: ids are matched exactly, never guessed (rename the columns to "
            f"the pool's ids)")


#: Shared items a history row must equal the target's own scores on to be taken for the
#: target's own run (fewer: it is kept; 0/1 rows agree on a few items by chance).
MIN_SAME_ITEMS = 20


def join_history(paths: Sequence[str | Path | ResponseMatrix], pool_ids: Sequence[str], *,
                 exclude: Sequence[str] = (), target_scores: np.ndarray | None = None,
                 ids_are_positions: bool = False) -> PoolHistory:
    """Join response matrices to the pool's item ids (module docstring).

    Args:
        paths: response-matrix files (or matrices already read).
        pool_ids: the pool's item ids, in pool order.
        exclude: model names never to use (the target's own row).
        target_scores: ``(N,)`` the target's own scores on the pool (NaN where unknown)
            to detect its row under another name, or None.
        ids_are_positions: confirm a matrix's join by ids that look like positions
            (:func:`~activetest.data.history_ids.positions_in_disguise`: the pool's ids
            and the matrix's columns both row numbers): made and listed in the result's
            ``by_position``; refused otherwise ("joins never guess").

    Raises:
        HistoryJoinError: no shared id, ids that look like positions on both sides (not
            confirmed), a model in two files with other results on an item, an ``exclude``
            name that matches no row, or no row left.
    """
    from activetest.data.history_ids import positions_in_disguise

    ids = [_norm(i) for i in pool_ids]
    pos = {i: k for k, i in enumerate(ids)}
    if len(pos) != len(ids):
        raise HistoryJoinError("the pool's item ids repeat: a history cannot be joined by id")
    N = len(ids)
    blocks: list[np.ndarray] = []
    models: list[str] = []
    where: dict[str, str] = {}
    sources: list[str] = []
    ignored = 0
    ignored_examples: list[str] = []
    near_miss: tuple[str, str] | None = None
    src_of: list[int] = []
    by_position: list[str] = []
    rows: dict[str, np.ndarray] = {}  # a model's row, filled in place where merged
    merged: set[int] = set()  # files whose rows were merged into an earlier file's
    notes: list[str] = []
    given: list[tuple[str, ...]] = []
    for p in paths:
        M = p if isinstance(p, ResponseMatrix) else read_response_matrix(p)
        cols = [_norm(c) for c in M.item_ids]
        hit = [(c, pos[i]) for c, i in enumerate(cols) if i in pos]
        miss = near_misses(cols, ids, pos)
        if not hit:
            head = f"{M.source}: none of its {len(cols)} item ids is a pool item id"
            rows_are_items = [m for m in M.models if _norm(m) in pos]
            if rows_are_items:
                raise HistoryJoinError(
                    f"{head}, but its rows are named by pool item ids (e.g. "
                    f"{rows_are_items[0]!r}; its columns e.g. {cols[0]!r}): it looks "
                    f"transposed, the items as rows; a response matrix has one row per "
                    f"model (its name first) and one column per item id: transpose it")
            if miss is not None:
                raise HistoryJoinError(f"{head}: {_near_miss_note(*miss)}")
            raise HistoryJoinError(
                f"{head} (e.g. {cols[0]!r} in the history, {ids[0]!r} in the pool); a "
                "history is joined by item id only, never by position (it has no item "
                "content to confirm one): rename its columns to the pool's ids")
        d = positions_in_disguise(ids, cols)
        if d is not None and not ids_are_positions:  # joins never guess
            raise HistoryJoinError(
                f"{M.source}: its item ids and the pool's look like row numbers "
                f"(positions), not ids (the pool's: {d.pool.describe('ids')}; its columns: "
                f"{d.matrix.describe('columns')}): pool item {d.first!r} would get the "
                f"results of column {d.first!r} by the number alone, and a response matrix "
                f"holds no item content to confirm it is the same item; give both sides "
                f"the dataset's own ids, or, if the matrix was written from this very pool "
                f"in this order, ids_are_positions=True confirms the join")
        if d is not None:
            by_position.append(M.source)
        ignored += len(cols) - len(hit)
        ignored_examples += [c for c in cols if c not in pos][:3 - len(ignored_examples)]
        near_miss = near_miss or miss
        block = np.full((len(M.models), N), np.nan)
        c_idx = np.array([c for c, _ in hit])
        p_idx = np.array([k for _, k in hit])
        block[:, p_idx] = M.scores[:, c_idx]
        for r, name in enumerate(M.models):
            if name in where:  # one model twice: one row where its results agree
                notes.append(_merge(rows, name, where[name], M.source, block[r], ids))
                merged.add(len(sources))
                continue
            where[name] = M.source
            rows[name] = block[r].copy()
            blocks.append(rows[name])  # the same array: a later merge fills it
            models.append(name)
            src_of.append(len(sources))
        sources.append(M.source)
        given.append(tuple(M.models))
    S = np.vstack(blocks)
    drop = np.zeros(len(models), dtype=bool)
    excluded: list[tuple[str, str]] = []
    for name in exclude:
        hits = [k for k, m in enumerate(models) if m == _norm(name)]
        if not hits:  # a model whose runs at other settings are rows named apart: all
            hits = [k for k, m in enumerate(models) if settings_base(m) == _norm(name)]
        if not hits:
            raise HistoryJoinError(f"--history-exclude {name!r} matches no history row "
                                   f"(rows are named like {models[0]!r})")
        for k in hits:
            if not drop[k]:
                drop[k] = True
                excluded.append((models[k], "named by --history-exclude"))
    if target_scores is not None:
        t = np.asarray(target_scores, dtype=np.float64).reshape(-1)
        if t.shape != (N,):
            raise ValueError(f"target_scores must have {N} entries, got {t.shape}")
        both = ~np.isnan(S) & ~np.isnan(t)[None, :]
        # identical on enough shared items to be the target, not a chance match (QA: a
        # sparse row agreeing on its 1 shared item was dropped as the target): on
        # MIN_SAME_ITEMS, or on every item where the target and any history are known
        # if there are fewer
        need = min(MIN_SAME_ITEMS, int((~np.isnan(t) & (~np.isnan(S)).any(axis=0)).sum()))
        same = ((both.sum(axis=1) >= max(need, 1))
                & np.all(np.where(both, t[None, :] == S, True), axis=1))
        # on fewer than MIN_SAME_ITEMS items several rows agree by chance (QA: a target
        # known on 3 items took 12 of 40 rows for itself): one such row is the target's,
        # several cannot be told apart and are kept, said
        weak = np.flatnonzero(same & ~drop & (both.sum(axis=1) < MIN_SAME_ITEMS))
        if len(weak) > 1:
            same[weak] = False
            names = ", ".join(repr(models[k]) for k in weak[:3]) + (", ..." if len(weak) > 3
                                                                    else "")
            notes.append(f"history: {len(weak)} rows ({names}) equal the target's own scores "
                         f"on every item both have, at most {int(both[weak].sum(axis=1).max())}"
                         f": too few to tell which, if any, is the target's own run (all "
                         f"kept); --history-exclude NAME leaves it out")
        for k in np.flatnonzero(same & ~drop):
            drop[k] = True
            excluded.append((models[k], f"identical to the target's own scores on "
                                        f"{int(both[k].sum())} items: taken for the target"))
    _drop_copies(S, models, sources, np.array(src_of, dtype=np.int64), drop, excluded)
    for k in np.flatnonzero(np.isnan(S).all(axis=1) & ~drop):  # nothing to learn from
        drop[k] = True
        excluded.append((models[k], "no result on any pool item"))
    if drop.all():
        raise HistoryJoinError("no history row is left once the target's own rows and rows "
                               "with no result on the pool are dropped")
    S = S[~drop]
    kept = tuple(m for m, d in zip(models, drop, strict=True) if not d)
    n_cov = int((~np.isnan(S)).any(axis=0).sum())
    src = np.array(src_of, dtype=np.int64)
    unused = tuple(x for j, x in enumerate(sources)
                   if j not in merged and not np.any((src == j) & ~drop))
    return PoolHistory(S, kept, tuple(sources), n_cov, tuple(excluded), ignored, near_miss,
                       tuple(notes), tuple(ignored_examples), unused, tuple(by_position),
                       tuple(given))


def _merge(rows: dict[str, np.ndarray], name: str, first: str, second: str,
           row: np.ndarray, ids: Sequence[str]) -> str:
    """Merge a model's row of a second file into its row of the first (in place) where
    their results agree on every item both have, and say so; two runs of one model that
    differ are refused (QA: the same model given twice counted twice; refused even where
    the two agreed).

    Raises:
        HistoryJoinError: naming the model, both files and an item with both values.
    """
    had = rows[name]
    both = ~np.isnan(had) & ~np.isnan(row)
    differ = np.flatnonzero(both & (had != row))
    if len(differ):
        k = int(differ[0])
        raise HistoryJoinError(
            f"model {name!r} is in {first} and in {second} with other results: item "
            f"{ids[k]!r} is {had[k]:g} in the first and {row[k]:g} in the second "
            f"({len(differ)} of {int(both.sum())} shared item(s) differ): two runs of one "
            f"model, and which is meant is not guessed; keep one of them in the history "
            f"(or, if they are two models, name them apart)")
    more = int((np.isnan(had) & ~np.isnan(row)).sum())
    had[np.isnan(had)] = row[np.isnan(had)]
    return (f"history: model {name!r} is in {first} and in {second}, its results agreeing "
            f"on the {int(both.sum())} item(s) both have: one row"
            + (f" ({more} more item(s) from the second)" if more else ""))


def _drop_copies(S: np.ndarray, models: Sequence[str], sources: Sequence[str],
                 src_of: np.ndarray, drop: np.ndarray, excluded: list[tuple[str, str]]
                 ) -> None:
    """Drop (in place, said) a row identical to a row of an EARLIER file under another
    name: the same model in a matrix and a folder of logs would count twice (QA: it did).
    Identical means equal on every item both have, on at least :data:`MIN_SAME_ITEMS`
    items (all if fewer are shared), and not one value throughout (two models right on
    every item are not taken for one). Of the two, the row with results on more items is
    kept (QA: a partial run of a model, e.g. a target's rounds, earlier in name order than
    its full run, dropped the full one and the history of every item the partial one
    lacks). Rows within one file are the file's own."""
    known = ~np.isnan(S)
    for k in range(len(models)):
        prev = np.flatnonzero((src_of < src_of[k]) & ~drop)
        if drop[k] or not len(prev):
            continue
        both = known[prev] & known[k][None, :]
        n = both.sum(axis=1)
        equal = np.all(np.where(both, S[prev] == S[k][None, :], True), axis=1)
        lo = np.where(both, S[k][None, :], np.inf).min(axis=1)
        hi = np.where(both, S[k][None, :], -np.inf).max(axis=1)
        need = np.minimum(MIN_SAME_ITEMS, known[k].sum())
        same = np.flatnonzero(equal & (n >= np.maximum(need, 1)) & (hi > lo))
        if len(same):
            j = prev[same[0]]
            gone, kept = (j, k) if known[k].sum() > known[j].sum() else (k, j)
            drop[gone] = True
            more = ", which has results on more items" if kept == k else ""
            excluded.append((models[gone], f"identical to row {models[kept]!r} of "
                                           f"{sources[src_of[kept]]} on {int(n[same[0]])} "
                                           f"items{more}: the same model counted once"))
