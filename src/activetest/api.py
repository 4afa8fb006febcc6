"""Active testing in memory: the default method on arrays, without files.

::

    import activetest as at

    run = at.ActiveTest(surrogate=S, target=T, metric="error_rate", seed=0)
    for i in run.next(10):        # the next 10 pool rows to label (one batch)
        run.label(i, y_of(i))     # the class a person gives item i
    report = run.estimate()       # the record `activetest estimate` prints

:class:`ActiveTest` draws by the adaptive design a session uses by default
(:mod:`activetest.stats.adaptive`: proposal and control refitted from the labels
between batches, exactly unbiased), or by any other classification acquisition of a
session (the paper's fixed ones, the ``compare`` design for two models), and estimates
with
:func:`activetest.session.estimate.session_estimate`, the policy behind
``Session.estimate`` (with the classification kind's inputs,
:class:`activetest.session.kinds.Classification`): from the same predictions,
seed, batches and labels it makes the same draws and returns the same
:class:`~activetest.session.records.EstimateReport` as a
:class:`~activetest.session.workflow.Session` (tested to 1e-12). A session is this
run persisted in a file, with a task, a pool of texts and models that score it; use
one when labels are collected over days or by several people.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from activetest.session import design, draw, kinds
from activetest.session import estimate as est
from activetest.session.blind_memory import MemoryCurves
from activetest.session.config import SessionConfig
from activetest.session.options import check_level, check_n_boot, check_target_width
from activetest.session.records import METRICS, EstimateReport
from activetest.stats import ActiveSampler, AdaptiveSampler
from activetest.stats.validate import NORM_TOL, as_logprobs, row_name

__all__ = ["FIXED_ACQUISITIONS", "IN_MEMORY_ACQUISITIONS", "ActiveTest"]

#: The acquisitions :class:`ActiveTest` runs: the session's adaptive designs for
#: classification (``adaptive``, the default, needs the target's predictions on the
#: whole pool; ``pe_adaptive`` only the surrogate's, the target is asked about the
#: labelled items only; ``fixed_mix`` is the design without learning), and its fixed
#: acquisitions (:data:`FIXED_ACQUISITIONS`).
IN_MEMORY_ACQUISITIONS = ("adaptive", "pe_adaptive", "fixed_mix", "ce", "pe", "zero_one",
                          "uniform", "compare")

#: The fixed acquisitions :class:`ActiveTest` runs, as a session draws them (the
#: floored proposal of fixed scores, LURE): the paper's ``ce`` and ``pe`` (the surrogate
#: alone: the target is asked about the labelled items only), ``zero_one``, ``uniform``
#: and ``compare`` (labels where the target and one model given as ``compare=`` may
#: differ, docs/compare.md).
FIXED_ACQUISITIONS = ("ce", "pe", "zero_one", "uniform", "compare")

#: A target known only where asked: ``rows -> (len(rows), C)`` predictions.
TargetFunction = Callable[[np.ndarray], Any]


def _index(value: Any, what: str) -> int:
    """An integer (Python or numpy), refusing bools and floats (named as the caller
    wrote them: ``True``, not numpy's ``np.True_``)."""
    shown = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be an integer, got {shown!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{what} must be an integer, got {shown!r}") from None


def _label_values(given: Any, name: str) -> Any:
    """``rows`` or ``ys`` of :meth:`ActiveTest.label_many` as a sequence: an iterator
    (a generator) read into a list (QA: it was taken for one row, "rows and ys differ
    in length (10 vs 1)"); a string or a mapping refused by name (a dict's keys are not
    labelled rows in draw order, a string is not rows)."""
    if isinstance(given, (str, bytes, Mapping)):
        what = "pool rows" if name == "rows" else "class indices"
        hint = (": for a dict of row -> label pass label_many(list(d), list(d.values()))"
                if isinstance(given, Mapping) else "")
        raise ValueError(f"{name} must be a sequence of {what} (a list or a 1-D array), "
                         f"got {type(given).__name__}{hint}")
    if not hasattr(given, "__len__") and hasattr(given, "__iter__"):
        return list(given)
    if np.ndim(given) == 0:  # (QA: ys=0 was taken for [0]; None, True or 2.5 refused as
        # "rows and ys differ in length (2 vs 1)")
        what = "pool rows" if name == "rows" else "class indices"
        raise ValueError(f"{name} must be a sequence of {what} (a list or a 1-D array), got "
                         f"{type(given).__name__} {given!r}: for one row use label(i, y)")
    return given


def _compare_mapping(compare: Any) -> dict[str, Any]:
    """``compare=`` as a dict name -> predictions (None: none), refusing anything else
    (a list of arrays has no names to report the comparisons under)."""
    if compare is None:
        return {}
    if not isinstance(compare, Mapping):
        raise ValueError(f"compare must be a mapping of name -> that model's (N, C) "
                         f"predictions on the pool, e.g. compare={{'old': T2}}, got "
                         f"{type(compare).__name__}")
    return dict(compare)


def as_class_logprobs(x: Any, name: str, n_classes: int | None = None, *,
                      row_names: Sequence[str] | None = None) -> np.ndarray:
    """``(N, C)`` class log-probabilities from log-probabilities or probabilities.

    An array with no negative entry is read as probabilities (each row must sum to 1);
    otherwise as log-probabilities (each row's ``logsumexp`` must be 0). ``row_names``:
    what the messages call each row (default ``"row i"``).

    Raises:
        ValueError: not a 2-D numeric array, a probability of exactly 0 (its log loss
            is infinite), rows that do not sum to 1, or non-finite values.
    """
    try:
        if x is None:  # (QA: "got shape ()")
            raise TypeError
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric (N, C) array (one row per pool item, "
                         f"one column per class), got {type(x).__name__}") from None
    # one column is no classifier: said as such by as_logprobs (QA: zeros read as
    # probabilities, "row 0 sums to 0, not 1")
    if a.ndim == 2 and a.shape[1] >= 2 and a.size and np.all(np.isfinite(a)) \
            and np.all(a >= 0):
        sums = a.sum(axis=1)
        off = np.abs(sums - 1.0) > NORM_TOL
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"{name} looks like probabilities (no negative entry), but "
                             f"{row_name(i, row_names)} sums to {sums[i]:.6g}, not 1: pass "
                             f"normalised probabilities or log-probabilities (raw logits: "
                             f"activetest.stats.log_softmax)")
        if np.any(a == 0):
            i, j = np.argwhere(a == 0)[0]
            at = f"[{i}, {j}]" if row_names is None else f" {row_names[i]}, class {j},"
            raise ValueError(f"{name}{at} is a probability of exactly 0, whose log loss "
                             f"is infinite: floor it, e.g. np.clip(p, 1e-12, 1), and renormalise")
        a = np.log(a)
    return as_logprobs(a, name, n_classes, row_names=row_names)


class ActiveTest:
    """One active test held in memory: draw, label, estimate.

    Args:
        surrogate: ``(N, C)`` the surrogate's class log-probabilities (or
            probabilities) on every pool item: the cheap model that guides the draws.
        target: the model being evaluated: ``(N, C)`` class log-probabilities (or
            probabilities) on the pool, or a function ``rows -> (len(rows), C)`` that
            predicts given pool rows, called only for labelled rows (for the PE design,
            whose target is not run on the whole pool).
        metric: ``"log_loss"`` (the default), ``"error_rate"`` or ``"both"``. The design
            is fitted to the error rate for ``"error_rate"``, to the log loss for
            ``"log_loss"``; with ``"both"`` the default design serves both at once (one
            proposal from both metrics' standardised residual spread, each metric with its
            own learnt control; exactly unbiased), as a session with both metrics does.
        seed: the seed of the draws (default: fresh entropy, see :attr:`seed`).
        acquisition: ``"adaptive"`` (the default with a target array), ``"pe_adaptive"``
            (the default with a target function; an array target is then used on
            labelled rows only, as a PE session does), ``"fixed_mix"``, or a fixed
            acquisition (:data:`FIXED_ACQUISITIONS`: the paper's ``"ce"`` and ``"pe"``,
            ``"zero_one"``, ``"uniform"``, ``"compare"``), drawn and estimated as a
            session with that acquisition does; see :data:`IN_MEMORY_ACQUISITIONS`.
        compare: name -> another model's ``(N, C)`` predictions on the pool, compared
            with the target at every :meth:`estimate` (as ``init --compare``): the paired
            difference with the sure bounds and its own blind spot. The ``"compare"``
            acquisition draws for the difference with exactly one of them.
        ids: the N item ids named in the estimate (flagged labels, notes); default
            ``"0"``, ``"1"``, ...
        n_boot, level: the bootstrap's resamples and every interval's coverage
            (defaults as a session's: 1000 and 0.95).
        budget: the labels planned, 1..N; the anytime CS is tuned to it, but to at most
            two thirds of the pool (default as a new session's: 400, at most half the
            pool; :func:`activetest.session.create.planned_budget`).

    Raises:
        ValueError: arrays of the wrong shape or not normalised, an unknown metric or
            acquisition, a target function where the design needs the target on the
            whole pool, duplicate ids (each message says what to pass instead).

    Labels count in draw order, as in a session: the estimate uses the first K draws
    that all have a label, and the design learns from them when :meth:`next` draws the
    next batch (never inside a batch, which keeps the estimate exactly unbiased).
    Drawing one item at a time lets the design learn the most.

    Example::

        run = ActiveTest(surrogate=S, target=T, metric="error_rate", seed=0)
        while run.n_labelled < 200:
            for i in run.next(10):
                run.label(i, ask_a_person(i))
        r = run.estimate().metrics["error_rate"]
        r.active.estimate, r.anytime.fixed_low, r.anytime.cs_low, r.active.low
    """

    def __init__(self, surrogate: Any, target: Any = None, *, metric: str = "log_loss",
                 seed: int | None = None, acquisition: str | None = None,
                 ids: Sequence[Any] | None = None, n_boot: int = 1000,
                 level: float = 0.95, budget: int | None = None,
                 compare: Mapping[str, Any] | None = None) -> None:
        from activetest.session.create import check_options, planned_budget
        from activetest.stats.blindspot import new_blind_ratio
        from activetest.stats.fewerrors import MIN_ERRORS

        if target is None:
            raise ValueError("target is required: the target's (N, C) predictions on the "
                             "pool, or a function rows -> (len(rows), C) predictions (the PE "
                             "design then asks it about labelled rows only)")
        if acquisition is None:
            acquisition = "pe_adaptive" if callable(target) else "adaptive"
        acquisition, seed = check_options(metric=metric, acquisition=acquisition,
                                          proposal_floor=0.1, noise_rule="any", level=level,
                                          n_boot=n_boot, seed=seed)
        if acquisition not in IN_MEMORY_ACQUISITIONS:
            raise ValueError(f"ActiveTest runs the acquisitions "
                             f"{', '.join(IN_MEMORY_ACQUISITIONS)}; got {acquisition!r} "
                             f"(graded tasks: a Session)")
        compared = _compare_mapping(compare)
        if acquisition == "compare" and len(compared) != 1:
            raise ValueError(f"the compare acquisition draws for the difference between the "
                             f"target and ONE other model: give compare={{name: (N, C) "
                             f"predictions}} with one entry (got {len(compared)})")
        S = as_class_logprobs(surrogate, "surrogate")
        N, C = S.shape
        self._target_fn: TargetFunction | None = None
        pe = acquisition in ("pe_adaptive", "pe")
        if callable(target):
            if not pe:
                raise ValueError(f"acquisition {acquisition!r} needs the target's (N, C) "
                                 f"predictions on the whole pool; with a target function use "
                                 f"acquisition='pe_adaptive' (or the paper's 'pe')")
            self._target_fn = target
            T = np.full((N, C), np.nan)
        else:
            T = as_class_logprobs(target, "target")
            if T.shape != S.shape:
                raise ValueError(f"target has shape {T.shape} but surrogate {S.shape}: both "
                                 f"need one row per pool item and one column per class, in "
                                 f"the same order")
            if pe:  # as a PE session: the target on labelled rows
                on_pool = T
                self._target_fn = lambda rows: on_pool[rows]
                T = np.full((N, C), np.nan)
        self._ids = self._check_ids(ids, N)
        self._S, self._T = S, T
        self._metric, self._acquisition, self._seed = metric, acquisition, int(seed)
        self._n_boot, self._level = int(n_boot), float(level)
        known = T if np.all(np.isfinite(T)) else None
        self._compare = {str(name): self._pool_predictions(name, other, N, C)
                         for name, other in compared.items()}
        # what a session stores for these options, so the same design as a session's
        self._config = SessionConfig(
            task={}, surrogate="array", target="array", metric=metric,
            acquisition=acquisition, seed=self._seed, n_boot=self._n_boot, level=self._level,
            design_variant=design.design_variant(metric, acquisition),
            planned_budget=planned_budget(budget, N),
            blind_ratio=new_blind_ratio(design.new_design_rule(acquisition)),
            design_rule=design.new_design_rule(acquisition),
            clt_min_errors=MIN_ERRORS, sure_bounds=True, exact_share=True, exact_least=True,
            shared_resamples=True,
            compare=tuple(self._compare) or None)
        self._scores: np.ndarray | None = None  # a fixed acquisition's
        if acquisition in FIXED_ACQUISITIONS:
            self._design = None
            self._scores = design.initial_scores(
                self._config, S, known, N,
                other_logprobs=next(iter(self._compare.values()), None))
            self._sampler: Any = ActiveSampler(self._scores,
                                               proposal_floor=self._config.proposal_floor,
                                               seed=self._seed)
        else:
            self._design = design.pool_design(self._config, S, known)
            self._sampler = AdaptiveSampler(self._design, seed=self._seed)
        self._labels: dict[int, int] = {}
        # the blind spot's running state between estimates (a repeat estimate replays
        # the new draws only, the same numbers to the last bit)
        self._blind_memory = MemoryCurves()

    def _pool_predictions(self, name: Any, other: Any, n: int | None = None,
                          n_classes: int | None = None) -> np.ndarray:
        """``(N, C)`` log-probs of a compared model, checked (one row per pool item)."""
        n = self.n_pool if n is None else n
        o_lp = as_class_logprobs(other, f"compare[{name!r}]",
                                 self.n_classes if n_classes is None else n_classes)
        if o_lp.shape[0] != n:
            raise ValueError(f"compare[{name!r}] must have one row per pool item ({n}), "
                             f"got {o_lp.shape[0]}")
        return o_lp

    def _pool_row_name(self, row: int) -> str:
        """How a message names pool row ``row``: its number, and its id where ids were
        given (the default ids are the row numbers)."""
        item = self._ids[row]
        return f"pool row {row}" + ("" if item == str(row) else f", item {item!r}")

    @staticmethod
    def _check_ids(ids: Sequence[Any] | None, n: int) -> tuple[str, ...]:
        if ids is None:
            return tuple(str(i) for i in range(n))
        # a string is one id, not a sequence of its characters; a number is none (QA:
        # ids=5 raised Python's "'int' object is not iterable")
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__") or \
                (isinstance(ids, np.ndarray) and ids.ndim != 1):
            got = (f"an array of shape {ids.shape}" if isinstance(ids, np.ndarray) else
                   type(ids).__name__)
            raise ValueError(f"ids must be a sequence of the {n} item ids (a list or a 1-D "
                             f"array), got {got}")
        out = tuple(str(i) for i in ids)
        if len(out) != n:
            raise ValueError(f"ids must name the {n} pool items, got {len(out)} ids")
        first: dict[str, int] = {}
        for row, item in enumerate(out):  # one pass (a count per id was O(N^2))
            if first.setdefault(item, row) != row:
                raise ValueError(f"ids must be unique, {item!r} is the id of rows "
                                 f"{first[item]} and {row} (ids are compared as strings)")
        return out

    def __repr__(self) -> str:
        return (f"ActiveTest(N={self.n_pool}, C={self.n_classes}, metric={self._metric!r}, "
                f"acquisition={self._acquisition!r}, seed={self._seed}, "
                f"drawn={len(self.drawn)}, labelled={self.n_labelled})")

    # ------------------------------------------------------------------ state

    @property
    def n_pool(self) -> int:
        """N, the pool size."""
        return int(self._S.shape[0])

    @property
    def n_classes(self) -> int:
        """C, the number of classes (labels are ``0..C-1``)."""
        return int(self._S.shape[1])

    @property
    def metric(self) -> str:
        """``log_loss``, ``error_rate`` or ``both``."""
        return self._metric

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics estimated."""
        return METRICS if self._metric == "both" else (self._metric,)

    @property
    def acquisition(self) -> str:
        """The design drawing the items (see :data:`IN_MEMORY_ACQUISITIONS`)."""
        return self._acquisition

    @property
    def seed(self) -> int:
        """The seed of the draws (and the bootstraps): keep it to repeat the run."""
        return self._seed

    @property
    def ids(self) -> tuple[str, ...]:
        """The item ids, in pool order."""
        return self._ids

    @property
    def drawn(self) -> list[int]:
        """Every pool row drawn so far, in draw order."""
        return [int(i) for i in self._sampler.acquired]

    @property
    def pending(self) -> list[int]:
        """Drawn rows without a label, in draw order."""
        return [i for i in self.drawn if i not in self._labels]

    @property
    def labels(self) -> dict[int, int]:
        """Current labels: pool row -> class index."""
        return dict(self._labels)

    @property
    def n_labelled(self) -> int:
        """Drawn rows with a label."""
        return len(self._labels)

    # ------------------------------------------------------------------ drawing

    def next(self, k: int = 1) -> list[int]:
        """Draw the next ``k`` pool rows to label: one batch, drawn sequentially.

        Before drawing, the design learns from the labels given so far that it may use
        (the labelled prefix of the draw order); within the batch it is not refitted.
        Before its first label an adaptive design draws uniformly, so a large first
        batch (``next(50)``) is a uniform sample, whose interval can be too narrow where
        a pool's rare large losses were not met; draw the first labels about 10 at a time
        (docs/robustness.md, "Known coverage gaps").

        Raises:
            ValueError: ``k`` is not a positive integer or exceeds the rows left.
        """
        k = _index(k, "k (how many items to draw)")
        if k < 1:
            raise ValueError(f"k (how many items to draw) must be >= 1, got {k}")
        left = self._sampler.n_remaining
        if left == 0:  # (QA: "cannot draw 1 items: only 0 of 60 remain undrawn")
            raise ValueError(f"every one of the {self.n_pool} pool items has been drawn: "
                             f"nothing is left to draw (label the pending ones and "
                             f"estimate: with all labelled, the estimate is the pool's value)")
        if k > left:
            raise ValueError(f"cannot draw {k} items: only {left} of {self.n_pool} remain "
                             f"undrawn (next({left}) draws them all)")
        self._observe()
        idx, _ = self._sampler.draw(k)
        return [int(i) for i in idx]

    def _observe(self) -> None:
        """Show the design the labels of the usable prefix it has not seen yet (a fixed
        acquisition learns nothing)."""
        if self._design is None:
            return
        k, seen = self._usable(), len(self._sampler.losses)
        if k <= seen:
            return
        rows = np.asarray(self._sampler.acquired[seen:k], dtype=np.int64)
        ys = np.array([self._labels[int(i)] for i in rows], dtype=np.int64)
        if self._design.needs_losses:  # PE: the target's losses on the labelled rows
            L = est.per_item_loss(self._config.design_metric,
                                  self._target_rows(rows), ys)
        else:
            L = self._design.losses_of(rows, ys)
        self._sampler.observe(labels=[int(y) for y in ys], losses=[float(x) for x in L])

    def _usable(self) -> int:
        """K: the first K draws all have a label."""
        acq = self._sampler.acquired
        k = 0
        while k < len(acq) and acq[k] in self._labels:
            k += 1
        return k

    def _target_rows(self, rows: np.ndarray) -> np.ndarray:
        """``(len(rows), C)`` target log-probs at ``rows`` (a target function is asked
        once per row, for the rows it has not answered yet)."""
        missing = np.unique(rows[~np.all(np.isfinite(self._T[rows]), axis=1)])
        if missing.size and self._target_fn is not None:
            got = self._target_fn(missing.copy())
            n_got = np.shape(got)[0] if np.ndim(got) == 2 else None
            if n_got is not None and n_got != missing.size:
                raise ValueError(f"the target function returned {n_got} row(s) for "
                                 f"{missing.size} pool row(s): one row per row asked")
            # a bad row is named by the pool row (and item) it answers too, not only by
            # its place in the returned array
            self._T[missing] = as_class_logprobs(
                got, "target(rows)", self.n_classes,
                row_names=[f"row {k} ({self._pool_row_name(int(r))})"
                           for k, r in enumerate(missing)])
        return self._T[rows]

    # ------------------------------------------------------------------ labels

    def label(self, i: int, y: int, *, overwrite: bool = False) -> None:
        """Give drawn pool row ``i`` the class ``y`` (``0..C-1``).

        Args:
            overwrite: replace a different label given before. The draws already made
                stay as they are (the design saw the old label); the estimate uses the
                new one.

        Raises:
            ValueError: ``i`` was not drawn (a label for an item never drawn cannot be
                weighted), ``y`` is not a class index, or ``i`` has another label and
                ``overwrite`` is False.
        """
        for name, given in (("i", i), ("y", y)):
            if isinstance(given, (str, bytes)):
                continue  # refused below as not an integer, by the value
            if np.ndim(given) != 0:  # (QA: y=[1, 2] was refused naming "ys", label_many's)
                one = "pool row" if name == "i" else "class index"
                raise ValueError(f"{name} must be one {one}, got {type(given).__name__} of "
                                 f"shape {np.shape(given)}: for many rows use "
                                 f"label_many(rows, ys)")
        self.label_many([i], [y], overwrite=overwrite)

    def label_many(self, rows: Sequence[int], ys: Sequence[int], *,
                   overwrite: bool = False) -> None:
        """Label many drawn rows at once; all are checked before any is stored.

        Args:
            rows, ys: the pool rows and their classes, in the same order: lists, 1-D
                arrays or any iterables (a generator is read once).

        Raises:
            ValueError: as :meth:`label`, naming the first bad pair; or the two
                sequences differ in length, or give one row two different labels.
        """
        rows, ys = _label_values(rows, "rows"), _label_values(ys, "ys")
        for name, given in (("rows", rows), ("ys", ys)):
            shape = np.shape(given)
            if len(shape) > 1:  # (QA: one-hot labels read "5 vs 10")
                hint = (": one-hot labels? pass ys.argmax(axis=1)" if name == "ys" and
                        len(shape) == 2 and shape[1] == self.n_classes else "")
                raise ValueError(f"{name} must be one value per labelled row (1-D), got an "
                                 f"array of shape {shape}{hint}")
        rows, ys = list(np.ravel(rows)), list(np.ravel(ys))
        if len(rows) != len(ys):
            raise ValueError(f"rows and ys differ in length ({len(rows)} vs {len(ys)}): give "
                             f"one label per row")
        drawn = set(self._sampler.acquired)
        new: dict[int, int] = {}
        C = self.n_classes
        for r, y in zip(rows, ys, strict=True):
            i = _index(r, "a pool row")
            c = _index(y, f"the label of row {i}")
            if not 0 <= i < self.n_pool:
                raise ValueError(f"row {i} is not in the pool (rows 0..{self.n_pool - 1})")
            if i not in drawn:
                raise ValueError(f"row {i} has not been drawn: label the rows next() returned "
                                 f"(a label for any other item could not be weighted)")
            if not 0 <= c < C:
                raise ValueError(f"label {c} of row {i} is not a class index in 0..{C - 1}")
            if new.get(i, c) != c:
                raise ValueError(f"row {i} is given two labels, {new[i]} and {c}")
            old = self._labels.get(i)
            if old is not None and old != c and not overwrite:
                raise ValueError(f"row {i} already has label {old}; pass overwrite=True to "
                                 f"change it to {c}")
            new[i] = c
        self._labels.update(new)

    # ------------------------------------------------------------------ estimates

    def labelled_draws(self) -> est.LabelledDraws:
        """The usable labelled prefix of the draws (what the estimate is computed from)."""
        acq = self.drawn
        k = self._usable()
        rows = np.asarray(acq[:k], dtype=np.int64)
        waiting = sum(i in self._labels for i in acq[k:])
        return est.LabelledDraws(
            n_pool=self.n_pool, item_ids=tuple(self._ids[i] for i in rows),
            steps=tuple(range(1, k + 1)), rows=rows,
            q=np.asarray(self._sampler.q[:k], dtype=np.float64),
            y=np.array([self._labels[int(i)] for i in rows], dtype=np.int64),
            n_selected=len(acq), n_waiting=waiting,
            first_unlabelled=(self._ids[acq[k]], k + 1) if waiting else None)

    def estimate(self, *, compare: Mapping[str, Any] | None = None, n_boot: int | None = None,
                 level: float | None = None,
                 target_width: float | None = None) -> EstimateReport:
        """Every metric's estimate from the labels so far: what ``activetest estimate`` prints.

        Per metric (:class:`~activetest.session.records.MetricEstimate`): the design's
        exactly unbiased estimate ``active.estimate`` with the fixed-budget interval
        (``anytime.fixed_low/high``: valid when the number of labels was fixed in
        advance), the confidence sequence (``anytime.cs_low/high``: valid however and
        whenever you stop) and the paper's bootstrap (``active.low/high``); plus the
        label-noise alarm and notes. The same draws and labels give the same record
        as :meth:`activetest.Session.estimate`. The blind spot is continued from the
        last estimate's (at the same ``level``, the labels it used unchanged): a repeat
        estimate replays only the draws labelled since, with the same numbers to the
        last bit.

        Args:
            compare: name -> another target's ``(N, C)`` predictions, compared with the
                target on the same labels (a paired, unbiased difference). Where the
                target is known on the pool too (an array), the difference's intervals use
                what both predictions tell, as a session that compared the model at
                creation: cut to the sure bounds, and widened only for unexplored items
                where the two could differ (docs/compare.md).
            n_boot, level: bootstrap resamples and interval coverage (default: the run's).
            target_width: also project the labels needed for an interval this wide.

        Raises:
            ValueError: no usable label yet (the first draw has none), bad arguments,
                or ``compare`` naming a model compared since the run was made with other
                predictions.
        """
        # the types first (a string is refused, a float not truncated)
        level = None if level is None else check_level(level)
        n_boot = None if n_boot is None else check_n_boot(n_boot)
        target_width = check_target_width(target_width)
        extra = _compare_mapping(compare)
        draws = self.labelled_draws()
        if draws.k == 0:
            raise ValueError("no usable labels yet: draw items with next(k) and label them "
                             "with label(i, y), the first drawn item first (the estimate uses "
                             "the labels of the first draws, in order)")
        kind = kinds.Classification()
        t_lp = self._target_rows(draws.rows)
        from activetest.session.blindspot import (
            blind_spot_pass,
            compared_bounds,
            design_difference_weight_bounds,
            other_loss_bounds,
        )
        from activetest.session.estimate_differences import difference_moments_of

        compared, known = {}, {}
        # the models given at construction first (compared at every estimate), as a
        # session compares those named at creation
        given = dict(self._compare)
        for name, other in extra.items():
            o_lp = self._pool_predictions(name, other)
            mine = given.get(str(name))
            if mine is None:
                given[str(name)] = o_lp
            elif not np.allclose(mine, o_lp, rtol=0.0, atol=1e-9):
                # (QA: it silently took the place of the model given at construction,
                # which the compare acquisition draws for); the same model again (as
                # probabilities, say) is the one compared since
                raise ValueError(f"compare[{str(name)!r}] differs from the model compared "
                                 f"under that name since the run was made (compared at "
                                 f"every estimate): give this one another name")
        for name, o_lp in given.items():
            compared[name] = kind.losses(draws, self.metrics, o_lp[draws.rows])
            # both targets known on the pool: the bounds of a model a session compared at
            # creation (the sure bounds, the difference's own blind spot)
            cb = None if self._T is None else compared_bounds(self.metrics, self._T, o_lp)
            if cb is not None:
                known[name] = cb
        K, s = draws.k, self._sampler
        fixed = self._design is None
        if not fixed and self._config.exact_share:  # as a new session: each draw's share
            draws = dataclasses.replace(draws, q_share=np.asarray(s.lam[:K], dtype=np.float64))
        metrics = () if fixed else self._config.design_metrics  # each with its own control
        design_controls = {}
        for m in metrics:
            g, G, V = s.controls("zero_one" if m == "error_rate" else "log")
            design_controls[m] = (g[:K], G[:K], V[:K])
        inputs = kind.estimate_inputs(draws, self.metrics, surrogate_pool=self._S,
                                      target_pool=self._T, target_lp=t_lp, compare=compared)
        inputs = dataclasses.replace(inputs, difference_bounds={
            name: dict(cb.difference) for name, cb in known.items()},
            other_loss_bounds=other_loss_bounds(known),
            proposal_scores=self._scores if known else None,
            difference_weight_bounds={} if fixed or not known else
            design_difference_weight_bounds(self._config, s, k=K, differences=known,
                                            losses=inputs.losses, compare=inputs.compare))
        # the paired differences' moments: an adaptive design's blind-spot pass sums them
        # under each draw's proposal for their variance floor (one replay for both)
        moments = None if not known else difference_moments_of(
            self.metrics, surrogate_pool=self._S, target_pool=self._T,
            compared={name: given[name] for name in known})
        passed = blind_spot_pass(  # as a session: what rarely drawn items could hide
            self._config, None, k=K, n_pool=self.n_pool, metrics=self.metrics,
            sampler=None if fixed else s, rows=[int(i) for i in draws.rows],
            target_pool=self._T, loss_bounds=inputs.loss_bounds,
            pool_controls=inputs.pool_controls, level=level, differences=known,
            scores=self._scores, memory=self._blind_memory,
            second_moments=None if fixed or moments is None else moments.second)
        blind = passed.spots
        if self._config.exact_least and passed.least_q is not None:  # as a new session
            draws = dataclasses.replace(draws, q_least=passed.least_q[:K])
        # the session's estimate policy (noise rule, seed, floor): the same code path
        # models known on the pool are compared as a session compares those given at
        # creation (no hint to create one)
        names = tuple(dict.fromkeys([*(self._config.compare or ()), *known]))
        config = dataclasses.replace(self._config, compare=names or None)
        floors = est.variance_floors(  # as a session: the fixed compare proposal's floors
            self._acquisition, None if inputs.proposal_scores is None or not fixed else
            (inputs.proposal_scores, float(self._config.proposal_floor)),
            inputs.pool_controls, draws, not fixed,
            others={name: est.controls(["error_rate"], self._S, o_lp)["error_rate"]
                    for name, o_lp in given.items() if name in known}
            if self._acquisition == "compare" and "error_rate" in self.metrics else None)
        floors = dataclasses.replace(floors, differences=est.difference_floors(
            self.metrics, draws, surrogate_pool=self._S, target_pool=self._T,
            compared={name: given[name] for name in known},
            acquisition=self._acquisition, sampler=None if fixed else s,
            proposal=None if not fixed or self._scores is None else
            (self._scores, float(self._config.proposal_floor)), moments=moments,
            second_sums=passed.second_sums))
        return est.session_estimate(
            config, draws, inputs, design_controls=design_controls, floors=floors,
            design_info=None if fixed else draw.sampler_info(s, self._acquisition, metrics),
            n_boot=n_boot, level=level, target_width=target_width, blind_spots=blind)
