"""Drawing items: the stored single-run sampler, resumed exactly where it stopped.

A draw reads the sampler's state and records the new draws in ONE write
transaction, with the sampler's RNG state after them, so no other process can
draw in between and a session stopped at any moment (even ``kill -9``) resumes
with the same future draws.

LURE needs the labels of the FIRST K draws: :func:`usable_prefix` is that
prefix, and the labels of later draws wait until every earlier draw is labelled.

Adaptive designs (``adaptive``, ``pe_adaptive``, ``fixed_mix``; see
:mod:`activetest.stats.adaptive`) are deterministic functions of the pool's model
outputs, the labels in draw order and the seed. Each draw's design row (the control,
its sum over the remaining items, lambda, the labels known, the refits) is stored
with the draw, and so is every label at the moment the design first uses it, so a
resumed session replays exactly what the design saw (a later change of a label
changes the estimate, not the past draws) and makes the same future draws. A
batch (``select --n 50``) is drawn without refitting inside it, which keeps the
estimate exactly unbiased.

A session with both metrics (``--metric both``) under the default ``adaptive``
acquisition runs the two-metric design ``calibrated-both`` (one proposal from the
combined standardised residual spread, each metric's own control; see
:mod:`activetest.stats.adaptive`), recorded in the config as ``"design"``.
Sessions written before it have no ``"design"`` key and keep the meaning they
were created with: the design fitted to log loss, the error rate by LURE on its
draws. The stored design rows hold the log loss's control; the error rate's is
recomputed by the replay (a deterministic function of the same history, checked
through the stored q of every draw), so the file format is unchanged.

Replaying the whole history costs a pass over the pool per past draw, so each draw
batch also writes the sampler's state (:mod:`activetest.session.checkpoint`, same
transaction), which later commands load instead when it matches the stored history;
files without one (or with a stale or damaged one) are replayed, to the same bits. A
checkpoint written before the digests were kept is re-written with them by the first
command that replays without drawing (``estimate``, ``report``) where the file can be
written, as by the next ``select``.

The design itself is built in :mod:`activetest.session.design` (the one place, at
creation and on replay); this module draws and replays.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

import numpy as np

from activetest.session import checkpoint
from activetest.session.design import stored_design
from activetest.session.records import Waiting
from activetest.session.store import Acquisition, DrawRow, SessionError, SessionStore
from activetest.stats import ActiveSampler, SamplerState
from activetest.stats.validate import is_whole

__all__ = ["acquisition_scores_of", "describe_design", "design_controls", "design_info",
           "metric_controls", "pending", "replayed", "sampler_info", "select",
           "select_adaptive", "usable_prefix", "waiting"]


def acquisition_scores_of(store: SessionStore) -> np.ndarray:
    """The ``(N,)`` acquisition scores the session was created with."""
    stored = store.scores("acquisition")
    if stored is None:
        raise SessionError(f"{store.path}: the session has no acquisition scores")
    return stored.logprobs[:, 0]


#: A per-draw progress callback: called with 1 after each draw (a bar's advance).
Progress = Callable[[int], object]


def select(store: SessionStore, n: int, progress: Progress | None = None,
           ) -> list[Acquisition]:
    """Draw the next ``n`` items (sequentially; persisted with the sampler state);
    ``progress(1)`` after each draw.

    Raises:
        ValueError: ``n`` is not a positive integer or exceeds the items left.
        SessionReadOnlyError: the session cannot be written (before any work).
    """
    if not is_whole(n) or n < 1:  # type: ignore[operator]  # (None: int()'s TypeError)
        raise ValueError(f"the number of items to select must be a positive integer, "
                         f"got {n!r}")
    if store.config().adaptive:
        raise SessionError("this session draws by an adaptive design: use select_adaptive")
    store.check_writable()  # before the pool's scores are read (a read-only session)
    scores = acquisition_scores_of(store)
    with store.transaction():
        # Read the state inside the write transaction: no other process can draw between.
        row = store.sampler_row()
        if row is None:
            raise SessionError(f"{store.path}: the session has no sampler state")
        floor, seed, rng_state = row  # the stored column is called alpha
        acq = store.acquisitions()
        left = len(scores) - len(acq)
        if n > left:
            raise ValueError(f"cannot select {n} items: only {left} of {len(scores)} "
                             f"remain undrawn")
        state = SamplerState(proposal_floor=floor, seed=seed, rng_state=rng_state,
                             acquired=[a.index for a in acq], q=[a.q for a in acq])
        sampler = ActiveSampler.from_state(scores, state)
        idx, q = sampler.draw(int(n), progress=progress)
        return store.record_draws(idx.tolist(), q.tolist(), sampler.state().rng_state,
                                  expected_steps=len(acq))


def pending(store: SessionStore) -> list[Acquisition]:
    """Drawn items without a label, in draw order."""
    labelled = store.labels()
    return [a for a in store.acquisitions() if a.index not in labelled]


def _labelled_prefix(draws: Sequence[Acquisition] | Sequence[DrawRow],
                     labelled: Container[int]) -> int:
    """K: how many draws from the first on are all labelled."""
    k = 0
    while k < len(draws) and draws[k].index in labelled:
        k += 1
    return k


def usable_prefix(store: SessionStore) -> tuple[list[Acquisition], dict[int, int], int]:
    """``(first K draws that are all labelled, labels by row, labels waiting after them)``."""
    acq = store.acquisitions()
    labels = {i: lab.label for i, lab in store.labels().items()}
    k = _labelled_prefix(acq, labels)
    waiting = sum(1 for a in acq[k:] if a.index in labels)
    return acq[:k], labels, waiting


def _usable_rows(store: SessionStore) -> tuple[list[DrawRow], list[DrawRow], dict[int, int]]:
    """``(every draw, the first K draws that are all labelled, labels by row)``:
    :func:`usable_prefix` from the lean reads (:meth:`SessionStore.draw_rows`,
    :meth:`SessionStore.label_values`: no join on the items), for the design's draw."""
    rows = store.draw_rows()
    labels = store.label_values()
    return rows, rows[:_labelled_prefix(rows, labels)], labels


def waiting(store: SessionStore) -> Waiting | None:
    """The first unlabelled draw and the later labelled draws whose labels wait for it."""
    acq = store.acquisitions()
    labelled = store.labels()
    k = _labelled_prefix(acq, labelled)
    if k == len(acq):
        return None
    later = tuple(a.item_id for a in acq[k + 1:] if a.index in labelled)
    return Waiting(acq[k].item_id, acq[k].step, later)


def select_adaptive(store: SessionStore, n: int,
                    losses_of: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                    after: Callable[[Any], None] | None = None,
                    before: Callable[[Any], None] | None = None,
                    progress: Progress | None = None) -> list[Acquisition]:
    """Draw the next ``n`` items with the session's adaptive design (one batch);
    ``progress(1)`` after each draw (each a pass over the pool).

    ``losses_of(rows, labels)`` gives the target's losses on labelled rows for a
    design without target predictions on the pool (``pe_adaptive``); it is called
    BEFORE the write transaction (it may run the target model). ``after(sampler)`` is
    called with the sampler once the draws are committed (``Session.select`` advances
    the blind spot's state there); ``before(sampler)`` just before the draws (where
    ``Session.select`` asks the sampler to keep what that advance will need).

    Raises:
        ValueError: ``n`` is not a positive integer or exceeds the items left.
        SessionError: the stored history does not replay (the pool's outputs changed).
        SessionReadOnlyError: the session cannot be written (before any work).
    """

    if not is_whole(n) or n < 1:  # type: ignore[operator]  # (None: int()'s TypeError)
        raise ValueError(f"the number of items to select must be a positive integer, "
                         f"got {n!r}")
    # a read-only session: refused before the design is built (QA: 27 s and 500 MB of
    # work at 1e7 items, refused at the first write)
    store.check_writable()
    design = stored_design(store)
    read, used, labels = _usable_rows(store)
    rows_used = np.array([a.index for a in used], dtype=np.int64)
    ys_used = np.array([labels[i] for i in rows_used], dtype=np.int64)
    new_losses = None
    if design.needs_losses and rows_used.size:
        if losses_of is None:
            raise SessionError("this design needs the target's losses on labelled items")
        new_losses = np.asarray(losses_of(rows_used, ys_used), dtype=np.float64)
    with store.transaction():
        row = store.sampler_row()
        if row is None:
            raise SessionError(f"{store.path}: the session has no sampler state")
        _, seed, rng_state = row
        # draws are only ever appended (steps 1, 2, ...): under the write lock the same
        # count means the rows read above, else another process drew meanwhile
        acq = read if store.n_acquired() == len(read) else store.draw_rows()
        dd = store.design_draws()
        if len(dd) != len(acq):
            raise SessionError(f"{store.path}: {len(acq)} draws but {len(dd)} design rows")
        left = design.n - len(acq)
        if n > left:
            raise ValueError(f"cannot select {n} items: only {left} of {design.n} remain "
                             f"undrawn")
        seen = [d for d in dd if d[5] is not None]
        # the labels the design has not used yet: the usable prefix beyond what it saw
        k0 = len(seen)
        first_use: list[tuple[int, int, float]] = []
        Ls = None
        if len(used) > k0:
            ys = ys_used[k0:]
            Ls = (new_losses[k0:] if new_losses is not None
                  else design.losses_of(rows_used[k0:], ys))
            first_use = [(used[k0 + j].step, int(ys[j]), float(Ls[j])) for j in range(len(ys))]

        def ready(defer: bool) -> Any:
            """The sampler of the stored history, the new labels observed, ``before``
            called (``defer``: its last refit run again only where the first draw
            does not refit anyway: :meth:`AdaptiveSampler.settle_last_refit`)."""
            sampler = _replay(store, design, seed, rng_state, acq, dd, defer_redo=defer)
            if Ls is not None:
                sampler.observe(labels=[int(y) for y in ys_used[k0:]],
                                losses=[float(x) for x in Ls])
            if after is not None:  # the draws' mixtures, for the blind spot's advance
                sampler.mixtures = []
            if before is not None:
                before(sampler)
            return sampler

        sampler = ready(True)
        try:
            sampler.settle_last_refit()
        except ValueError:  # the checkpoint's refit does not run again: as without deferring
            sampler = ready(False)
        m0 = len(acq)
        idx, q = sampler.draw(int(n), progress=progress)
        rows = [(sampler.control[m], sampler.control_rest[m], sampler.lam[m],
                 sampler.n_known[m], sampler.refits[m]) for m in range(m0, m0 + len(idx))]
        out = store.record_design_draws(idx.tolist(), q.tolist(), sampler.state().rng_state,
                                        rows, first_use, expected_steps=m0)
        checkpoint.save(store, sampler)  # same transaction: the next command need not replay
    if after is not None:
        after(sampler)
    return out


def _replay(store: SessionStore, design: Any, seed: int | None, rng_state: Any,
            acq: list[Acquisition] | list[DrawRow], dd: list[Any], *,
            defer_redo: bool = False) -> Any:
    """The sampler of the stored history: from its checkpoint when one matches the
    history exactly (:mod:`activetest.session.checkpoint`; ``defer_redo``: see its
    :func:`~activetest.session.checkpoint.load`), else by a full replay."""
    sampler = checkpoint.load(store, design, seed, rng_state, acq, dd, defer_redo=defer_redo)
    if sampler is not None:
        return sampler
    return _full_replay(store, design, seed, rng_state, acq, dd)


def _full_replay(store: SessionStore, design: Any, seed: int | None, rng_state: Any,
                 acq: list[Acquisition] | list[DrawRow], dd: list[Any]) -> Any:
    """The sampler rebuilt from the stored draws and the labels the design saw."""
    from activetest.stats.adaptive import AdaptiveSampler, AdaptiveState

    seen = [(d[5], d[6]) for d in dd if d[5] is not None]
    state = AdaptiveState(design.spec(), seed, rng_state,
                          acquired=[a.index for a in acq], q=[a.q for a in acq],
                          control=[d[0] for d in dd], control_rest=[d[1] for d in dd],
                          lam=[d[2] for d in dd], n_known=[d[3] for d in dd],
                          labels=[int(y) for y, _ in seen],
                          losses=[float(L) for _, L in seen], refits=[d[4] for d in dd])
    try:
        return AdaptiveSampler.from_state(design, state)
    except ValueError as exc:
        raise SessionError(f"{store.path}: the adaptive design does not replay its "
                           f"history ({exc})") from None


def replayed(store: SessionStore) -> Any:
    """The session's adaptive sampler rebuilt from its stored history (None before
    it has a sampler state): one replay, for :func:`design_info` and
    :func:`design_controls` to share. A checkpoint written before the digests were
    kept is re-written with them after the replay where the file can be written
    (:func:`activetest.session.checkpoint.renew`)."""
    row = store.sampler_row()
    if row is None:
        return None
    design, acq, dd = stored_design(store), store.acquisitions(), store.design_draws()
    sampler = checkpoint.load(store, design, row[1], row[2], acq, dd)
    if sampler is None:
        sampler = _full_replay(store, design, row[1], row[2], acq, dd)
        # a checkpoint written before the digests: re-written with them where the file
        # can be written, so the next command loads it (the replay's state to the last
        # bit: no number changes); else this command replays every time
        checkpoint.renew(store, sampler, row[2])
    return sampler


def design_info(store: SessionStore, sampler: Any = None) -> dict[str, Any]:
    """The adaptive design's state: its name, refits, lambda, ridge and fitted weights
    (``sampler``: :func:`replayed`, if the caller has it already)."""
    sampler = replayed(store) if sampler is None else sampler
    if sampler is None:
        return {}
    cfg = store.config()
    info = sampler_info(sampler, cfg.acquisition, cfg.design_metrics)
    if "model" in info:  # a history design: as init and status name it (with its features)
        from activetest.session.history_neighbours import design_label

        info["model"] = design_label(cfg.extra.get("history")) or info["model"]
    return info


def sampler_info(sampler: Any, acquisition: str | None,
                 metrics: tuple[str, ...] = ()) -> dict[str, Any]:
    """:func:`design_info` of a live ``sampler`` drawing by ``acquisition`` (no store);
    ``metrics``: those the design gives a control for (each with its own)."""
    info = sampler.info()
    info["design"] = acquisition
    info["metrics"] = list(metrics)
    w = info.get("weights")  # name them
    name = str(getattr(sampler.design, "name", ""))
    # init --history: "features", "features+neighbours", and with
    # --history-neighbours-until "features+neighbours-dropK" / "-freezeK" (QA: those were
    # described as the graded design, their weights named "mean log-prob", ...)
    history = name == "features" or name.startswith("features+neighbours")
    if history:  # name the design
        info["model"] = ("history features + neighbours" if "+neighbours" in name
                         else "history features")
    if w and history:
        names = list(getattr(sampler.design, "columns", ())) or (
            ["difficulty log-odds", "intercept"] + [f"factor {k}" for k in range(1, len(w) - 1)])
        info["weights"] = dict(zip(names, w, strict=False))
    elif w and info["design"] == "graded_adaptive":
        # columns of graded_matrix: logit of the prior, intercept, standardised features
        names = ["prior log-odds", "intercept", "mean log-prob", "min log-prob",
                 "sum log-prob", "agreement"]
        info["weights"] = dict(zip(names, w, strict=False))
    elif w:
        names = ["surrogate log-prob", "target log-prob"] + [
            f"offset class {c}" for c in range(1, len(w) - 1)]
        info["weights"] = dict(zip(names, w, strict=False))
    return info


#: Fitted weights a one-line description names (the largest by size; the rest counted).
MAX_WEIGHTS_SHOWN = 10

#: Acquisitions whose design fits no model: a fixed proposal whose uniform share (lambda)
#: is re-chosen in-run, which is why their estimate is adaptive LURE.
FIXED_MODEL = ("graded_fixed", "fixed_mix")


def describe_design(info: dict[str, Any]) -> tuple[str, str | None]:
    """One line for :func:`design_info`'s state ("3 refit(s), lambda 0.3, ridge 1") and
    one for its fitted weights (None before a fit)."""
    parts = [f"{info.get('refits', 0)} refit(s)", f"lambda {info.get('lam', 0):.2g}"]
    if info.get("design") in FIXED_MODEL:  # nothing is fitted: the uniform share moves
        parts[0] = (f"the surrogate's proposal as it is (no model fitted), its uniform "
                    f"share lambda re-chosen in-run {info.get('refits', 0)} time(s)")
    if "model" in info:  # what the design learns from (history sessions)
        parts.insert(0, str(info["model"]))
    if len(info.get("metrics", ())) > 1:  # the two-metric design
        parts.insert(0, "one proposal for " + " and ".join(
            m.replace("_", " ") for m in info["metrics"]) + ", each with its own control")
    if "ridge" in info:
        parts.append(f"ridge {info['ridge']:g}")
    if "rule" in info:  # absent: the original rule (sessions before design_rule)
        parts.append(f"{info['rule']} in-run rule")
    w = info.get("weights")
    weights = None
    if isinstance(w, dict):
        items = list(w.items())
        if len(items) > MAX_WEIGHTS_SHOWN:  # e.g. 64 history factors on one line (QA)
            top = sorted(items, key=lambda kv: -abs(float(kv[1])))[:MAX_WEIGHTS_SHOWN]
            keep = {k for k, _ in top}
            weights = ", ".join(f"{k} {v:.3g}" for k, v in items if k in keep) + (
                f", and {len(items) - len(top)} smaller (estimate --json: all)")
        else:
            weights = ", ".join(f"{k} {v:.3g}" for k, v in items)
    return ", ".join(parts), weights


def design_controls(store: SessionStore, k: int, sampler: Any = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(g_m, G_m, V_m)`` of the first ``k`` draws of an adaptive session: the
    controls, and the design's own prediction ``V_m = N^2 Var(theta_m | past)``
    (recomputed by the replay, ``sampler`` or :func:`replayed`; NaN before a learnt
    design's first fit), which the intervals take as a floor for their variance.
    For a two-metric design: the first metric's (see :func:`metric_controls`)."""
    dd = store.design_draws()[:k]
    g = np.array([d[0] for d in dd], dtype=np.float64)
    G = np.array([d[1] for d in dd], dtype=np.float64)
    sampler = replayed(store) if sampler is None and dd else sampler
    V = (np.full(len(dd), np.nan) if sampler is None
         else np.asarray(sampler.model_var[:k], dtype=np.float64))
    return g, G, V


def metric_controls(store: SessionStore, k: int, sampler: Any = None
                    ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """metric -> ``(g_m, G_m, V_m)`` of the first ``k`` draws, for every metric the
    session's design has a control for (``SessionConfig.design_metrics``): the first from the
    stored design rows (:func:`design_controls`), a two-metric design's second from
    the replay (``sampler`` or :func:`replayed`), whose draws match the stored ones."""
    metrics = store.config().design_metrics
    if len(store.design_draws()) and sampler is None:
        sampler = replayed(store)
    out = {metrics[0]: design_controls(store, k, sampler)}
    if len(metrics) > 1:
        loss = "zero_one" if metrics[1] == "error_rate" else "log"
        if sampler is None:
            out[metrics[1]] = (np.zeros(0), np.zeros(0), np.zeros(0))
        else:
            g, G, V = sampler.controls(loss)
            out[metrics[1]] = (g[:k], G[:k], V[:k])
    return out


def uniform_batch_note(store: SessionStore, drawn: Sequence[Acquisition]) -> str | None:
    """The line ``select`` prints when an adaptive design drew a batch of more than its
    first refit's worth of items at the uniform rate because it knew no label yet (None
    otherwise).

    An adaptive design learns only between batches: before its first label it draws
    uniformly (the earned rule; docs/robustness.md), and a batch is drawn without
    refitting inside it (which keeps the estimate exactly unbiased). ``select --n 50`` at
    the start is then a uniform sample of 50, and where a pool's rare large losses were
    not met a uniform sample's interval can be too narrow (docs/robustness.md, "Known
    coverage gaps": the default design drawn 50 at once covered 0.545 at 50 labels on
    the rare-miss pool, 10 at a time 0.99-1.00). The note says so; the caller adds what
    to do in its own terms (``select --n 10``, ``ActiveStopping(batch=10)``).
    """
    from activetest.stats.adaptive.design import SCHEDULE_FIRST

    if not drawn or len(drawn) <= SCHEDULE_FIRST or not store.config().adaptive:
        return None
    n_items = store.n_items()
    if any(abs(a.q * (n_items - a.step + 1) - 1.0) > 1e-9 for a in drawn):
        return None  # the design drew by its model somewhere in the batch
    prefix, _, _ = usable_prefix(store)
    if prefix:  # it knew labels and chose the uniform rate (the model must beat it)
        return None
    return (f"draws {drawn[0].step}..{drawn[-1].step} are uniform sampling: the design "
            f"knows no label yet and learns only between batches (where rare large losses "
            f"are not met, a uniform sample's interval can be too narrow: "
            f"docs/robustness.md)")
