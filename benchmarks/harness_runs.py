"""Target runs needed to reach a narrow anytime interval: active draws against uniform.

Inside a harness (lm-evaluation-harness, inspect_ai) the expensive part is the
target's run on an item; the item's answer key is known, so the target's result
(correct or not) is the label. This measures, on cached FULL runs (every item
scored, so the truth is known), how many target runs each design needs before
its 95% anytime interval (the session's asymptotic confidence sequence,
:func:`activetest.stats.confseq.asymptotic_cs`, clipped to [0, 1], from 30 runs
on) has half-width at most h, for h = 0.03 and 0.02:

* ``active``: the graded adaptive design (:meth:`AdaptiveDesign.graded`, what a
  harness session draws with) on label-free features of the item:
  - bundled surrogate alone (``experiments/outputs/<d>.npz``): the other bundled
    model's few-shot class log-probs with the answer key known, exactly as a
    ``--target lm-eval --surrogate pool-run`` session stores and draws them
    (:func:`activetest.session.harness.choice_features`, the session's
    :func:`~activetest.session.design.graded_adaptive_design`: top log-prob, minus
    entropy, log-prob of the key, whether its top class is the key, which class the
    key is; prior P(wrong) = 1 - its probability of the key);
  - history (``../shared/datasets/history/*.csv``, the held-out model's row and
    rows identical to it removed, as sessions remove them): the other models' mean
    correctness per item and the item's first 8 SVD factors of the other models'
    centred matrix; prior 1 - mean correctness;
* ``uniform-cs``: uniform sampling without replacement, the same CS family;
* ``uniform-wilson``: uniform with a fixed-n Wilson interval, n chosen in
  advance with the pool's TRUE accuracy (the most favourable plan for uniform):
  the smallest n whose Wilson half-width (with the finite-population factor) is
  at most h.

Stop = the first budget >= 30 whose CS half-width is <= h; coverage = the share
of runs whose CS at the stop holds the pool's true accuracy. Every run is seeded.

``--cs`` chooses the CS's tuning, the same rule for every design and for uniform:

* ``mixture`` (default, the measured table): the normal mixture tuned at 200 labels
  (``planned_labels``), what sessions made before the planned budget ran;
* ``planned``: the CS tuned to a planned budget (``asymptotic_cs(..., budget=T)``, what
  new sessions run) with T chosen from the requested half-width h before any label, as a
  user would (:func:`planned_budget_for_width`): the first budget at which the CS's
  half-width at its own planned budget (``budget_line_constant`` SEs) reaches h, with the
  SE projected from a label-free variance (the design's prior model at its first draw;
  uniform: ``p0 (1 - p0)`` with p0 the design's prior mean loss, 0.5 without one),
  capped at N - 1 (not at the session's ``max_budget``: a width-driven plan on a small
  pool is near the whole pool, and the CS is only needed near it);
* ``sure``: ``mixture`` cut at every budget, as sessions cut it since 2026-12-06, to
  the bounds each run's labels make sure (the labelled losses plus at most 1 for each
  item not drawn; :func:`activetest.session.estimate_base.cut_to_sure_arrays`, where
  that removes a tenth of the width or more). Its cached rows are keyed by the rule but
  the behaviour probe does not run the cut (its tests do:
  ``tests/session/test_sure_bounds.py``); measure it without ``--cache``.

``--held-out K``: K held-out models per history matrix (seeded pick, default 3: the
measured table's six pools).

``--history-design D [D ...]``: the history pools' design(s) (:data:`HISTORY_DESIGNS`),
each on the same pools, seeds and CS; with several, a table of the designs follows.
``features+neighbours-freezeK`` / ``-dropK``: the neighbours' column recomputed only up
to K labels, then kept or set to 0 (:data:`LIMITED`). ``--tuning K``: instead of the
``--held-out`` models, K OTHER models per matrix (never one of them), to tune on before
a design is judged on the held-out pools.
``--cache DIR``: per-pool rows of the history pools, keyed by the pool's data and the run
parameters, each file naming the design's :func:`behaviour_probe` it was computed under
(stored in ``DIR/probes``); a cached pool whose probe matches today's within a tolerance
(:data:`activetest.experiments.probe.PROBE_RTOL`) is read, not measured
(``experiments/cache/harness-runs`` holds the measured ones, so the tables of
docs/harness.md re-render in seconds).
``--rekey-cache DIR``: move a folder's entries keyed by the former rule (the probe's
numbers rounded to 6 digits and hashed into the key) to today's names.

Usage (writes the Markdown table; CPU minutes)::

    nice -n 10 python benchmarks/harness_runs.py --runs 200 --out docs/harness_runs.md
    # the history designs on 30 held-out pools, from the cache (seconds)
    python benchmarks/harness_runs.py --runs 100 --no-bundled --held-out 15 --cs mixture \
        --history-design features features+neighbours features+neighbours-w0 \
        --cache experiments/cache/harness-runs
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _cells import printed_ratio  # noqa: E402
from activetest.experiments.probe import Probe, stored_probe  # noqa: E402
from activetest.experiments.probe import probe_id as stored_probe_id  # noqa: E402
from activetest.session.design import graded_adaptive_design  # noqa: E402
from activetest.session.harness import choice_features  # noqa: E402
from activetest.stats.adaptive import AdaptiveDesign, simulate_design  # noqa: E402
from activetest.stats.confseq import asymptotic_cs, budget_line_constant  # noqa: E402
from activetest.stats.estimators import adaptive_lure_theta  # noqa: E402

OUTPUTS = ROOT / "experiments" / "outputs"
HISTORY = ROOT.parent / "shared" / "datasets" / "history"
WIDTHS = (0.03, 0.02)
START = 30


@dataclass(frozen=True)
class Pool:
    """One measured setting: the per-item loss (1 = the target got it wrong), features."""

    name: str
    surrogate: str
    loss: np.ndarray
    features: np.ndarray
    prior: np.ndarray | None  # None: the session's design (prior from the key's log-prob)
    others: np.ndarray | None = None  # history: the other models' rows (for --history-design)


def bundled_pools() -> list[Pool]:
    """Each bundled model as the target, the other as the surrogate, on every dataset."""
    from activetest.experiments.outputs import DatasetOutputs

    out = []
    models = ("gemma3-270m/few", "smollm2-135m/few")
    for path in sorted(OUTPUTS.glob("*.npz")):
        d = DatasetOutputs.load(path)
        y = np.asarray(d.pool_labels, dtype=np.int64)
        for t, s in (models, models[::-1]):
            tl, sl = d.outputs[t].pool, d.outputs[s].pool
            loss = (tl.argmax(1) != y).astype(np.float64)
            feats, _ = choice_features(sl, y)  # what a harness session stores
            out.append(Pool(f"{d.dataset} {t.split('/')[0]}", s.split("/")[0], loss, feats,
                            None))
    return out


def history_pools(n_models: int = 3, seed: int = 0, tuning: int = 0) -> list[Pool]:
    """Held-out models of each history matrix (seeded pick), features from the others.

    ``tuning`` > 0: instead, that many OTHER models per matrix (never one of the
    ``n_models`` picked above; drawn among the rest of the same accuracy band with the
    seed ``[seed, crc32(file name), 1]``), to tune on before a design is judged on the
    held-out pools."""
    out = []
    for path in sorted(HISTORY.glob("*.csv")) if HISTORY.is_dir() else []:
        M = read_history(path)
        rng = np.random.default_rng([seed, zlib.crc32(path.name.encode())])
        acc = M.mean(1)
        mid = np.flatnonzero((acc > 0.15) & (acc < 0.85))  # models with room either way
        picked = rng.choice(mid, size=min(n_models, mid.size), replace=False)
        if tuning > 0:
            rest = np.setdiff1d(mid, picked)
            trng = np.random.default_rng([seed, zlib.crc32(path.name.encode()), 1])
            picked = trng.choice(rest, size=min(tuning, rest.size), replace=False)
        for r in picked:
            out.append(history_pool(f"{path.stem} model {r}", M, int(r)))
    return out


def read_history(path: Path) -> np.ndarray:
    """A history response matrix as the pools use it: models x items, an index column
    before the items dropped, and the items with a missing result in any row."""
    import csv

    with path.open() as f:
        rows = list(csv.reader(f))
    M = np.array([[float(x) for x in r[1:]] for r in rows[1:]], dtype=np.float64)
    if M.shape[1] == len(rows[1]) - 1 and not np.all(np.isin(M[:, 0], (0.0, 1.0))):
        M = M[:, 1:]  # an index column before the items
    return M[:, ~np.isnan(M).any(0)]


def history_pool(name: str, M: np.ndarray, r: int) -> Pool:
    """Row ``r`` of the response matrix ``M`` held out as the target, features from the
    other rows (module docstring). Rows identical to the target's (re-submissions of the
    same model) are dropped from its history, as sessions drop them
    (:func:`activetest.data.history.join_history`; ``read_history``'s matrices have no
    missing cell, so identical on the shared items is identical on every item)."""
    others = np.delete(M, r, axis=0)
    return _pool(name, M[r], others[~np.all(others == M[r][None, :], axis=1)])


def _pool(name: str, target: np.ndarray, others: np.ndarray) -> Pool:
    """The history pool of the target's row ``target`` with the history rows ``others``."""
    mean = others.mean(0)
    _, S, Vt = np.linalg.svd(others - mean, full_matrices=False)
    feats = np.column_stack([mean, Vt[:8].T * S[:8]])
    return Pool(name, "history", 1.0 - target, feats, np.clip(1.0 - mean, 0.02, 0.98),
                others)


def _stop(lo: np.ndarray, hi: np.ndarray, h: float, truth: float) -> tuple[np.ndarray, np.ndarray]:
    """Per run: the first budget >= START with half-width <= h (N if none), covered there."""
    R, K = lo.shape
    ok = (hi - lo)[:, START - 1:] <= 2 * h + 1e-12
    first = np.where(ok.any(1), np.argmax(ok, axis=1) + START - 1, K - 1)
    rows = np.arange(R)
    cov = (lo[rows, first] <= truth) & (hi[rows, first] >= truth)
    return first + 1, cov


#: ``--cs``: the CS's tuning (module docstring).
CS_RULES = ("mixture", "planned", "sure")


def _sure_cut(lo: np.ndarray, hi: np.ndarray, L: np.ndarray, N: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """The CS ``(lo, hi)`` (runs x budgets) cut to what each run's labelled losses ``L``
    (the same shape, in draw order) make sure, as a session cuts its own."""
    from activetest.session.estimate_base import cut_to_sure_arrays, sure_bounds_of_runs

    return cut_to_sure_arrays(lo, hi, *sure_bounds_of_runs(L, N))


def planned_budget_for_width(S2: float, N: int, h: float) -> int:
    """The planned budget for a half-width ``h``: the first M >= 30 (at most N - 1) whose
    projected SE ``sqrt(S2 (N - M) / (N M))`` times the budget-tuned CS's multiplier at
    its planned budget (``budget_line_constant()``, 2.63) is at most h. ``S2``: a
    per-item variance known before any label."""
    c = budget_line_constant()
    m = np.arange(1, N, dtype=np.float64)
    se = np.sqrt(max(S2, 1e-12) * (N - m) / (N * m))
    ok = np.flatnonzero((c * se <= h) & (m >= START))
    return int(m[ok[0]]) if ok.size else int(N - 1)


def _cs(theta: np.ndarray, N: int, model_var: np.ndarray | None, budget: int | None = None
        ) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.empty_like(theta), np.empty_like(theta)
    for r in range(theta.shape[0]):
        cs = asymptotic_cs(theta[r], N, value_range=(0.0, 1.0),
                           model_var=None if model_var is None else model_var[r],
                           budget=budget)
        lo[r], hi[r] = cs.low, cs.high
    return lo, hi


#: ``--history-design``: how the history pools are drawn. ``svd8`` (the default, the
#: measured table): the graded design on the other models' mean correctness and 8 SVD
#: factors, the original in-run rule; ``svd8-earned``: the same with the earned rule;
#: ``features`` / ``features-earned``: the design a ``--surrogate history`` session draws
#: with (:func:`activetest.stats.feature_design.feature_design` on
#: :func:`~activetest.stats.feature_design.history_features`: shrunk difficulty, factors
#: of a rank chosen on the history alone), with the original or the earned rule (history
#: sessions record no ``design_rule``, so they run the original rule: ``features``).
#: ``features+neighbours``: ``features`` (original rule) plus the similarity-weighted
#: neighbours' column (:mod:`activetest.stats.neighbours`: ``neighbour_history`` of the
#: other models' rows, eps chosen on them by ``choose_eps`` with seed 0, prior weight 1,
#: the module's default), recomputed from the labels only when the design refits (its
#: refit schedule is the batches' boundaries here, as in a harness run, where the design
#: refits only between batches); ``features+neighbours-w0``: the same, prior weight 0;
#: ``features+neighbours-freezeK`` / ``-dropK`` (any K >= 0, :data:`LIMITED`): prior weight
#: 1, the column recomputed only at refits that know at most K labels, then kept as it was
#: (freeze) or set to 0 (drop) (``neighbour_design(..., update_until=K, after=...)``).
HISTORY_DESIGNS = ("svd8", "svd8-earned", "features", "features-earned",
                   "features+neighbours", "features+neighbours-w0")
#: The neighbours' designs with a limited update: ``features+neighbours-<mode><K>``.
LIMITED = re.compile(r"features\+neighbours-(freeze|drop)(\d+)")


def history_design_name(s: str) -> str:
    """``--history-design``'s type: one of :data:`HISTORY_DESIGNS` or :data:`LIMITED`."""
    if s in HISTORY_DESIGNS or LIMITED.fullmatch(s):
        return s
    raise argparse.ArgumentTypeError(f"{s!r} is not one of {', '.join(HISTORY_DESIGNS)} nor "
                                     f"features+neighbours-freezeK / -dropK")


def history_design(p: Pool, kind: str) -> AdaptiveDesign:
    """The design of a history pool (:data:`HISTORY_DESIGNS`)."""
    from activetest.stats.feature_design import feature_design, history_features
    from activetest.stats.neighbours import neighbour_design, neighbour_history

    rule = "earned" if kind.endswith("-earned") else "original"
    if kind.startswith("svd8"):
        return AdaptiveDesign.graded(p.features, prior=p.prior, rule=rule)
    assert p.others is not None
    hf = history_features(p.others)
    design = feature_design(history=hf, rule=rule)
    if kind.startswith("features+neighbours"):
        nh = neighbour_history(p.others, p_correct=hf.p_correct)
        lim = LIMITED.fullmatch(kind)
        design = neighbour_design(design, nh,
                                  prior_weight=0.0 if kind.endswith("-w0") else 1.0,
                                  update_until=int(lim.group(2)) if lim else None,
                                  after=lim.group(1) if lim else "freeze")
    return design


def active_theta(p: Pool, runs: int, seed: int, hist: str = "svd8"
                 ) -> tuple[np.ndarray, np.ndarray | None, dict]:
    """The design's per-draw estimates theta and model variances over the whole pool, per
    run, and the label-free variances the ``planned`` rule plans with (``design``: its
    prior model's at the first draw; ``uniform``: ``p0 (1 - p0)``)."""
    N = p.loss.size
    design = (graded_adaptive_design(p.features) if p.prior is None
              else history_design(p, hist) if p.surrogate == "history"
              else AdaptiveDesign.graded(p.features, prior=p.prior))
    rng = np.random.default_rng([seed, zlib.crc32(p.name.encode()), 1])
    d = simulate_design(design, losses=p.loss, labels=None, budget=N, n_runs=runs,
                        random_state=rng, model_var=True)
    L = p.loss[d.indices]
    th = adaptive_lure_theta(L, d.q, N, control=d.control, control_rest=d.control_rest)
    # label-free: the design's prior at its first draw (the same in every run)
    x1 = float(d.model_var[0, 0]) if d.model_var is not None else float("nan")
    p0 = float(d.control_rest[0, 0]) / N
    p0 = p0 if 0.0 < p0 < 1.0 else 0.5
    info = {"design": x1 / (N * (N - 1)) if np.isfinite(x1) and x1 > 0 else p0 * (1 - p0),
            "uniform": p0 * (1 - p0), "losses": L}
    return th, d.model_var, info


def active_runs(p: Pool, runs: int, seed: int, hist: str = "svd8"
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """(lo, hi) of the active CS (the ``mixture`` rule) over the whole pool, per run; N."""
    th, mv, _ = active_theta(p, runs, seed, hist)
    return *_cs(th, p.loss.size, mv), p.loss.size


def uniform_runs(p: Pool, runs: int, seed: int, budget: int | None = None,
                 sure: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of uniform sampling's CS (same family; ``budget``: tuned to it; ``sure``:
    cut as the ``sure`` rule cuts it), per run."""
    N = p.loss.size
    rng = np.random.default_rng([seed, zlib.crc32(p.name.encode()), 2])
    idx = np.stack([rng.permutation(N) for _ in range(runs)])
    q = np.broadcast_to(1.0 / (N - np.arange(N)), idx.shape)
    th = adaptive_lure_theta(p.loss[idx], q, N)
    lo, hi = _cs(th, N, None, budget)
    return _sure_cut(lo, hi, p.loss[idx], N) if sure else (lo, hi)


def wilson_n(acc: float, N: int, h: float, z: float = 1.959963984540054) -> int:
    """Smallest n whose Wilson half-width at the true accuracy (finite-population
    factor ``sqrt((N - n) / (N - 1))``) is at most h."""
    for n in range(1, N + 1):
        fpc = np.sqrt((N - n) / max(N - 1, 1))
        zz = z * fpc
        half = zz / (1 + zz**2 / n) * np.sqrt(acc * (1 - acc) / n + zz**2 / (4 * n * n))
        if half <= h:
            return n
    return N


def measure(pools: list[Pool], runs: int, seed: int, hist: str = "svd8",
            cs: str | tuple[str, ...] = "mixture", cache: Path | None = None) -> list[dict]:
    """Rows per pool, width and CS rule (``cs``: one of :data:`CS_RULES` or several,
    measured on the same simulated runs). ``cache``: a folder of per-pool results keyed
    by :func:`cache_key` (a pool found there under a probe that matches today's,
    :func:`cached_entry`, is read, not measured)."""
    rules = (cs,) if isinstance(cs, str) else tuple(cs)
    rows = []
    for p in pools:
        f = None
        if cache is not None and p.surrogate == "history":
            hit = cached_entry(cache, p, runs, seed, hist, rules)
            if hit is not None:
                rows += json.loads(hit.read_text())
                continue
            f = (cache / f"{_slug(p.name)}-{cache_key(p, runs, seed, hist, rules)}-"
                         f"{probe_id(cache, hist)}.json")
        start = len(rows)
        t0 = time.process_time()
        N = p.loss.size
        truth = float(p.loss.mean())
        th, mv, info = active_theta(p, runs, seed, hist)
        for rule, h in ((r, h) for r in rules for h in WIDTHS):
            plan = ""
            if rule == "mixture":
                alo, ahi = _cs(th, N, mv)
                ulo, uhi = uniform_runs(p, runs, seed)
            elif rule == "sure":  # the mixture CS cut to what each run's labels make sure
                alo, ahi = _sure_cut(*_cs(th, N, mv), info["losses"], N)
                ulo, uhi = uniform_runs(p, runs, seed, sure=True)
            else:  # the CS tuned to a budget planned for the width h
                Ta = planned_budget_for_width(info["design"], N, h)
                Tu = planned_budget_for_width(info["uniform"], N, h)
                alo, ahi = _cs(th, N, mv, Ta)
                ulo, uhi = uniform_runs(p, runs, seed, Tu)
                plan = f"{Ta} / {Tu}"
            a_n, a_cov = _stop(alo, ahi, h, truth)
            u_n, u_cov = _stop(ulo, uhi, h, truth)
            rows.append(dict(pool=p.name, surrogate=p.surrogate, N=N, acc=1 - truth, h=h,
                             plan=plan, cs=rule, runs=runs,
                             design=hist if p.surrogate == "history" else "session",
                             active=float(np.median(a_n)), active_mean=float(a_n.mean()),
                             uniform=float(np.median(u_n)), uniform_mean=float(u_n.mean()),
                             wilson=wilson_n(1 - truth, N, h),
                             a_cov=float(a_cov.mean()), u_cov=float(u_cov.mean()),
                             cpu=time.process_time() - t0))
        print(f"{p.name:32s} N={N} done ({time.process_time() - t0:.0f} s)", flush=True)
        if f is not None:
            f.parent.mkdir(parents=True, exist_ok=True)
            tmp = f.with_suffix(".tmp")
            tmp.write_text(json.dumps(rows[start:], indent=0))
            tmp.replace(f)
    return rows


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name)


def _data_digest(p: Pool) -> str:
    """Digest of a history pool's data: its name, the held-out model's losses and the
    other models' rows, exactly (0/1, scores and NaN as read from the matrix). Not the
    features: they come out of an SVD whose bits (signs included) differ between CPUs, BLAS
    builds and thread counts (seen: ``OPENBLAS_NUM_THREADS=1`` against the default on one
    machine), so a key on them missed the committed cache on every other machine; they are
    a function of the rows, and :func:`behaviour_probe` runs the code that makes them."""
    h = hashlib.sha256(p.name.encode())
    for a in (p.loss, p.others):
        if a is not None:
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()[:16]


# The behaviour probe's tolerance (``PROBE_RTOL`` and ``PROBE_ATOL`` of
# :mod:`activetest.experiments.probe`, shared with the experiments' caches): a cached entry
# is valid when every number of the probe it was computed under is within 1e-6 (relative)
# of today's, or within 1e-12 for numbers that are zero up to rounding
# (:meth:`Probe.matches`).
# The designs refit logistic models on SVD features, and their per-draw estimates differ
# between CPUs in their last digits (an AMD EPYC and an Intel Xeon with AMX, the same
# numpy and OpenBLAS: the 8th-10th digit). Hashing the probe's numbers, rounded, made the
# key hang on those digits: at 10 digits it missed the committed cache on every other
# machine (QA, 2026-12-05), and at 6 a number near a rounding edge could still flip it.
# Compared with a tolerance, last digits never matter, and a change of behaviour (a
# number moving in its 3rd-6th digit) still misses. :class:`Probe` (its ``name`` is the
# design probed) and the stored probes' folder are those of
# :mod:`activetest.experiments.probe`.

#: Significant digits of the former rule (the probe's numbers hashed after rounding), kept
#: only to recognise entries keyed by it (:func:`rekey_cache`).
LEGACY_PROBE_DIGITS = 6


@functools.cache
def behaviour_probe(hist: str) -> Probe:
    """What this benchmark computes, on a tiny history pool (the probe matrix of
    :func:`activetest.experiments.probe.tiny_matrix`, row 0 held out): the design's
    (``hist``) and uniform's per-draw estimates, both CS rules' bounds, the planned
    budgets and the Wilson n. A cached entry is used only while today's probe matches the
    one it was computed under (:meth:`Probe.matches`): a change of any number these code
    paths give beyond the last digits makes it miss (it is recomputed)."""
    import tempfile

    from activetest.experiments.probe import tiny_matrix
    from activetest.formats.history import read_response_matrix

    with tempfile.TemporaryDirectory() as d:
        M = read_response_matrix(tiny_matrix(Path(d) / "probe.csv")).scores
    # a fixed pool: every other row as history, row 0's twin included. The probe checks
    # what is computed from a pool; which rows a pool's history holds is in each entry's
    # key (the pool's data, :func:`cache_key`), so the probe leaves history_pool's row
    # rule out (dropping the twin here would miss every committed entry, whose pools
    # have no twin and are unchanged)
    p = _pool("probe model 0", M[0], np.delete(M, 0, axis=0))
    N = p.loss.size
    th, mv, info = active_theta(p, 2, 1, hist)
    Ta = planned_budget_for_width(info["design"], N, 0.1)
    out = [th, mv if mv is not None else np.zeros(0), [info["design"], info["uniform"], Ta],
           *_cs(th, N, mv), *_cs(th, N, mv, Ta), *uniform_runs(p, 2, 1),
           *uniform_runs(p, 2, 1, Ta), [wilson_n(0.3, N, 0.1)]]
    return Probe.of(hist, *out)


def cache_key(p: Pool, runs: int, seed: int, hist: str, rules: tuple[str, ...]) -> str:
    """The cache key of a history pool's rows: the pool's data (:func:`_data_digest`) and
    the run parameters. The behaviour of the code is not in it: an entry's file names the
    probe it was computed under, compared with today's by :func:`cached_entry`."""
    h = hashlib.sha256(f"{hist}:{runs}:{seed}:{','.join(rules)}:{START}:{WIDTHS}".encode())
    h.update(_data_digest(p).encode())
    return h.hexdigest()[:16]


def cached_entry(cache: Path, p: Pool, runs: int, seed: int, hist: str,
                 rules: tuple[str, ...]) -> Path | None:
    """The cached rows of ``p`` (``{slug}-{cache_key}-{probe id}.json``) computed under a
    probe that matches today's :func:`behaviour_probe` (None: none; it is measured)."""
    today = behaviour_probe(hist)
    for f in sorted(cache.glob(f"{_slug(p.name)}-{cache_key(p, runs, seed, hist, rules)}-*.json")):
        stored = stored_probe(cache / "probes" / f"{f.stem.rsplit('-', 1)[1]}.json")
        if stored is not None and stored.matches(today):
            return f
    return None


def probe_id(cache: Path, hist: str) -> str:
    """The id new entries of ``hist`` are stored under: a stored probe that matches
    today's (so the entries a CPU adds join those another CPU made), else today's,
    written to ``probes/`` (:func:`activetest.experiments.probe.probe_id`)."""
    return stored_probe_id(cache, behaviour_probe(hist), store=True)


def _legacy_key(p: Pool, runs: int, seed: int, hist: str, rules: tuple[str, ...]) -> str:
    """The key of the former rule: :func:`cache_key`'s hash with the probe's numbers,
    rounded to :data:`LEGACY_PROBE_DIGITS`, hashed in (:func:`rekey_cache`)."""
    h = hashlib.sha256(f"{hist}:{runs}:{seed}:{','.join(rules)}:{START}:{WIDTHS}".encode())
    h.update(_data_digest(p).encode())
    h.update(behaviour_probe(hist).digest(LEGACY_PROBE_DIGITS).encode())
    return h.hexdigest()[:16]


def rekey_cache(cache: Path, seed: int = 0) -> tuple[int, list[str]]:
    """Move the entries keyed by the former rule (``{slug}-{key}.json``, the probe's
    rounded numbers hashed into the key) to today's names, each only after checking, from
    its own rows (pool, design, runs, CS rules; ``seed``), that today's code gives its
    key; returns how many moved and the files left as they were (why)."""
    legacy = re.compile(r"(.+)-([0-9a-f]{16})\.json")
    pools: dict[str, Pool] = {}
    moved, left = 0, []
    for f in sorted(cache.glob("*.json")):
        m = legacy.fullmatch(f.name)
        if m is None or re.fullmatch(r".+-[0-9a-f]{16}-[0-9a-f]{16}\.json", f.name):
            continue
        rows = json.loads(f.read_text())
        name, hist, runs = rows[0]["pool"], rows[0]["design"], int(rows[0]["runs"])
        rules = tuple(dict.fromkeys(r["cs"] for r in rows))
        if name not in pools:
            mat, _, row = name.partition(" model ")
            pools[name] = history_pool(name, read_history(HISTORY / f"{mat}.csv"), int(row))
        p = pools[name]
        if _legacy_key(p, runs, seed, hist, rules) != m.group(2):
            left.append(f"{f.name}: not the key today's code gives its rows")
            continue
        f.rename(cache / f"{m.group(1)}-{cache_key(p, runs, seed, hist, rules)}-"
                         f"{probe_id(cache, hist)}.json")
        moved += 1
    return moved, left


def shown_ratio(r: dict, to: str) -> float:
    """A row's active runs over its ``to`` ("uniform" or "wilson") runs, of the two
    medians as the table prints them (whole runs: a median of an even number of runs
    can end in .5, so the unrounded ratio can differ from the cells' in its last digit,
    213.5 / 838 = 0.25 beside the cells 214 and 838, 0.26)."""
    return _shown_over(r["active"], r[to])


def _shown_over(a: float, b: float) -> float:
    """``a / b`` of two median runs as the tables print them (whole runs)."""
    got = printed_ratio(a, b, digits=0)
    return float("nan") if got is None else got


def table(rows: list[dict], runs: int) -> str:
    """The rows' Markdown table (median runs of each design; each ratio column is that
    of the medians as printed, :func:`shown_ratio`), then per surrogate and width the
    median and range of those ratio columns and the coverage at the stop."""
    planned = any(r.get("plan") for r in rows)
    head = ("| pool (target) | surrogate | N | acc | h | active runs | uniform CS runs | "
            "ratio | Wilson fixed n | ratio | coverage at stop (active / uniform) |"
            + (" planned budget (active / uniform) |" if planned else "") + "\n"
            "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if planned else "")
            + "\n")
    body = "".join(
        f"| {r['pool']} | {r['surrogate']} | {r['N']} | {r['acc']:.3f} | {r['h']:.2f} | "
        f"{r['active']:.0f} | {r['uniform']:.0f} | {shown_ratio(r, 'uniform'):.2f} | "
        f"{r['wilson']} | {shown_ratio(r, 'wilson'):.2f} | {r['a_cov']:.3f} / "
        f"{r['u_cov']:.3f} |" + (f" {r['plan']} |" if planned else "") + "\n" for r in rows)
    out = head + body
    for src in sorted({r["surrogate"] == "history" for r in rows}):
        for h in WIDTHS:
            sel = [r for r in rows if (r["surrogate"] == "history") == src and r["h"] == h]
            if not sel:
                continue
            ratios = np.array([shown_ratio(r, "uniform") for r in sel])
            wil = np.array([shown_ratio(r, "wilson") for r in sel])
            cov = np.array([r["a_cov"] for r in sel])
            out += (f"\n{'history features' if src else 'bundled surrogate alone'}, h = {h}: "
                    f"median ratio to uniform (same CS) {np.median(ratios):.2f} "
                    f"(range {ratios.min():.2f}-{ratios.max():.2f}), to fixed-n Wilson "
                    f"{np.median(wil):.2f}; coverage at the stop {cov.min():.3f}-"
                    f"{cov.max():.3f} over {len(sel)} pools x {runs} runs.\n")
            if src:  # per history matrix: the pools' sizes differ (250 and 1,351 items)
                for mat in sorted({r["pool"].split(" model ")[0] for r in sel}):
                    part = np.array([shown_ratio(r, "uniform") for r in sel
                                     if r["pool"].startswith(mat + " ")])
                    out += (f"  {mat}: median {np.median(part):.2f} (range "
                            f"{part.min():.2f}-{part.max():.2f}, {part.size} pools)\n")
    return out


def _matrix(r: dict) -> str:
    return r["pool"].split(" model ")[0]


def designs_table(rows: list[dict]) -> str:
    """History pools only: one row per design, CS rule and width (the same pools, seeds
    and CS for each), then per design after the first its runs against the first's,
    pool by pool; every ratio is of the median runs as the per-design tables print them
    (:func:`shown_ratio`)."""
    hist = [r for r in rows if r["surrogate"] == "history"]
    designs = list(dict.fromkeys(r["design"] for r in hist))
    rules = list(dict.fromkeys(r["cs"] for r in hist))
    mats = sorted({_matrix(r) for r in hist})
    size = {m: next(r["N"] for r in hist if _matrix(r) == m) for m in mats}
    out = ("| history design | CS rule | h | runs per pool | pools | median ratio to uniform "
           "(range) | " + " | ".join(f"{m} (N = {size[m]})" for m in mats)
           + " | median ratio to fixed-n Wilson | median runs active / uniform ("
           + "; ".join(mats) + ") | coverage at stop, active (uniform) |\n"
           + "|---" * (9 + len(mats)) + "|\n")

    def med(x: list[float]) -> str:
        a = np.asarray(x)
        return f"{np.median(a):.2f} ({a.min():.2f}-{a.max():.2f})" if a.size else "-"

    for d, c, h in ((d, c, h) for d in designs for c in rules for h in WIDTHS):
        sel = [r for r in hist if r["design"] == d and r["cs"] == c and r["h"] == h]
        if not sel:
            continue
        per = [[r for r in sel if _matrix(r) == m] for m in mats]
        runs_ = "; ".join(f"{np.median([r['active'] for r in s]):.0f} / "
                          f"{np.median([r['uniform'] for r in s]):.0f}" for s in per if s)
        ac = np.array([r["a_cov"] for r in sel])
        uc = np.array([r["u_cov"] for r in sel])
        nruns = "/".join(str(n) for n in sorted({r.get("runs", 0) for r in sel}))
        out += (f"| `{d}` | `{c}` | {h:.2f} | {nruns} | {len(sel)} | "
                f"{med([shown_ratio(r, 'uniform') for r in sel])} | "
                + " | ".join(med([shown_ratio(r, "uniform") for r in s]) for s in per)
                + f" | {np.median([shown_ratio(r, 'wilson') for r in sel]):.2f} | {runs_} | "
                f"{ac.min():.2f}-{ac.max():.2f} ({uc.min():.2f}-{uc.max():.2f}) |\n")
    for d, c, h in ((d, c, h) for d in designs[1:] for c in rules for h in WIDTHS):
        base = {r["pool"]: r for r in hist
                if r["design"] == designs[0] and r["cs"] == c and r["h"] == h}
        pair = [(r, base[r["pool"]]) for r in hist if r["design"] == d and r["cs"] == c
                and r["h"] == h and r["pool"] in base]
        if not pair:
            continue
        q = np.array([_shown_over(a["active"], b["active"]) for a, b in pair])
        out += (f"\n`{d}` against `{designs[0]}`, `{c}`, h = {h}: median runs ratio "
                f"{np.median(q):.2f} (range {q.min():.2f}-{q.max():.2f}); fewer runs on "
                f"{(q < 1).sum()}, more on {(q > 1).sum()} of {q.size} pools")
        for m in mats:
            qm = np.array([_shown_over(a["active"], b["active"]) for a, b in pair
                           if _matrix(a) == m])
            if qm.size:
                out += (f"; {m}: median {np.median(qm):.2f}, fewer on {(qm < 1).sum()} of "
                        f"{qm.size}")
        out += ".\n"
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="substring of the pool names to keep "
                    "('A|B': either)")
    ap.add_argument("--no-history", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--history-design", type=history_design_name, nargs="+", default=["svd8"],
                    help="the design of the history pools (HISTORY_DESIGNS); several: each "
                         "on the same pools, seeds and CS, then a table of the designs")
    ap.add_argument("--cache", type=Path, default=None,
                    help="folder of per-pool results (history pools), keyed by the pool's "
                         "data, the run parameters and the design's behaviour probe: a "
                         "cached pool is read, not measured (experiments/cache/harness-runs "
                         "holds the measured ones)")
    ap.add_argument("--no-bundled", action="store_true")
    ap.add_argument("--held-out", type=int, default=3,
                    help="held-out models per history matrix (seeded pick)")
    ap.add_argument("--tuning", type=int, default=0,
                    help="instead of the --held-out models, this many OTHER models per "
                         "history matrix (seeded, never one of the --held-out ones): to tune "
                         "on before judging on the held-out pools")
    ap.add_argument("--cs", choices=CS_RULES, nargs="+", default=["mixture"],
                    help="the CS's tuning, the same for every design (CS_RULES); several: "
                         "one table each, on the same simulated runs")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON")
    ap.add_argument("--merge", type=Path, nargs="+", default=None,
                    help="render the tables from these --json files (runs split by --only) "
                         "instead of measuring")
    ap.add_argument("--rekey-cache", type=Path, default=None, metavar="DIR",
                    help="move the entries of a cache folder keyed by the former rule (the "
                         "probe's rounded numbers hashed into the key) to today's names, "
                         "each after checking today's code gives its key, and stop")
    a = ap.parse_args(argv)
    if a.rekey_cache is not None:
        moved, left = rekey_cache(a.rekey_cache, a.seed)
        print(f"{moved} entries moved to today's names; {len(left)} left as they were")
        print("".join(f"  {why}\n" for why in left), end="")
        return
    if a.merge:
        rows = [r for f in a.merge for r in json.loads(f.read_text())]
        print("\n".join((f"CS rule `{c}`:\n\n" if len(a.cs) > 1 else "")
                        + table([r for r in rows if r["cs"] == c], a.runs) for c in a.cs))
        return
    bundled = [] if a.no_bundled else bundled_pools()
    history = [] if a.no_history else history_pools(a.held_out, seed=a.seed, tuning=a.tuning)
    keep = [p for p in bundled + history if any(o in p.name for o in a.only.split("|"))]
    rows = measure([p for p in keep if p.surrogate != "history"], a.runs, a.seed,
                   cs=tuple(a.cs))
    for d in a.history_design:
        rows += measure([p for p in keep if p.surrogate == "history"], a.runs, a.seed, d,
                        tuple(a.cs), a.cache)
    if a.json is not None:
        a.json.write_text(json.dumps(rows))
    designs = a.history_design if history else a.history_design[:1]
    text = "\n".join((f"History design `{d}`, " if len(designs) > 1 else "")
                     + (f"CS rule `{c}`:\n\n" if len(a.cs) > 1 else
                        ":\n\n" if len(designs) > 1 else "")
                     + table([r for r in rows if r["cs"] == c
                              and r.get("design", d) in (d, "session")], a.runs)
                     for d in designs for c in a.cs)
    if len(designs) > 1:
        text += "\nThe history designs on the same pools, seeds and CS:\n\n" + designs_table(rows)
    print(text)
    if a.out is not None:
        a.out.write_text(f"<!-- python benchmarks/harness_runs.py {' '.join(argv or sys.argv[1:])}"
                         f" -->\n{text}")


if __name__ == "__main__":
    main()
