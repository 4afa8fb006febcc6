"""Coverage hunt: configurations not measured before (QA, 2026-12-06).

Every case is a synthetic pool run through the public in-memory API (``ActiveTest``:
the draws and estimates sessions make), one seeded run per seed (run seeds from 3000);
printed per label count: the coverage of the fixed-budget interval and of the anytime
CS (its running intersection, as a session reports it), with Monte Carlo standard
errors sqrt(p (1 - p) / n), the median fixed-budget width and the share of runs where
the error rate's exact CS stands in (few-errors rule, ``basis == "exact"``).

Pools (:func:`_pool`; N items, C classes, pool seed 5): labels uniform over the classes;
the target's row is a Dirichlet(0.5) draw with its argmax put on the true class for a
share 1 - ``err`` of the items (on another class otherwise) and its confidence drawn at
random; the surrogate is the target's row with log-normal noise (sd 0.4). ``err`` sets
the pool's error rate.

Cases:

- ``batch10-mid`` / ``batch25-mid``: the default adaptive design, error rate, drawn 10
  (25) at a time, budgets 20-100; N = 1,000, C = 4, error rate near 0.5.
- ``batch10-high``: the same, error rate near 0.97 (the few-errors rule's mirror case).
- ``batch10-mid-log`` / ``batch25-mid-log``: the default design, log loss, error rate
  near 0.5, 10 (25) at a time.
- ``batch10-high-log``: log loss, error rate near 0.97, 10 at a time.
- ``pe-mid`` / ``pe-mid-log``: ``pe_adaptive`` with the target a function known only on
  drawn rows, error rate / log loss, one at a time, error rate near 0.3.
- ``pe-batch10-mid``: the same, error rate, 10 at a time.
- ``other-init`` / ``other-late``: the default adaptive design fitted to the target,
  error rate; the *other* compared model's own error rate (``other_anytime``), the model
  given at construction (``compare=`` of ``ActiveTest``) or only at estimate time
  (``run.estimate(compare=...)``). The other model is right where the target is wrong
  on 30 % of those items and wrong on 15 % of the target's right items.
- ``other-init-log`` / ``other-late-log``: the same with the log loss.
- ``hostile-POOL-{err,log}-batch{10,25}``: the hostile pools of
  :mod:`activetest.experiments.hostile` (seed 0; docs/robustness.md "Hostile pools"),
  drawn by ``ActiveTest`` with the default design 10 (25) at a time from 20 (25) labels
  (the suite draws one at a time, from 50).
- ``many-classes-50``: the default design, error rate, C = 50, N = 2,000, error rate
  near 0.3, one at a time (budgets 30-200).
- ``other-hostile`` (``-batch10``), ``ce-other-hostile``, ``zero-one-other-hostile``
  (``-late``), ``pe-other-hostile``: the compared model's own error rate where it errs on
  10 % of the items the target is confidently right on (:func:`_other_hostile`), under
  the default design (one / 10 at a time), the paper's CE, the ``zero_one`` acquisition
  and ``pe_adaptive``.
- ``other-rare-miss-log``, ``pe-other-rare-miss-log``: the compared model's own log loss,
  1 % confident misses where the target is right (:func:`_other_rare_miss`).
- ``pe-rare-miss-log``, ``adaptive-rare-miss-log-batch25``: the target (and the
  surrogate, copying it) with 1 % confident misses (:func:`_rare_miss_target`).
- ``pe-gap3-pool``, ``adaptive-gap3-pool``, ``adaptive-gap3-pool-batch50``,
  ``hostile-rare-miss-log-batch50``: benchmarks/coverage_gaps.py's uniform-rare-miss pool
  (and the hostile rare_miss pool) under ``pe_adaptive`` and the default design, 10 or 50
  at a time.
- ``small-pool`` (``-log``): N = 80, up to 2/3 of the pool; ``level-99`` / ``level-80``
  (``-log``): other coverage levels; ``budget-30`` (``-log``): the CS tuned to a planned
  budget of 30, run to 400; ``fixed-mix``: the design without learning; ``both-batch10``
  (``-log``): ``metric="both"``, each metric read.
- Graded (:data:`GRADED`; real ``Session`` files, 300 questions, the graded default
  design, 10 at a time): ``graded-interior`` (``-confident``, ``-sure``): 95-96 % of the
  answers at a middle judgment level (loss 0.3), the rest "wrong", the surrogate column
  unrelated / confident / sure; ``graded-binary-rare`` (``-confident``, ``-sure``): two
  levels, the few-errors rule's own case; ``graded-benign``, ``graded-mostly-good``:
  spread levels, where the few-errors rule for partial credit must cost (nearly) nothing.

Run from the repository root (``--list`` prints every case's one-line description):
    python benchmarks/coverage_hunt.py --case batch10-mid --seeds 200
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import activetest as at


def _pool(N: int, C: int, err: float, seed: int = 5, noise: float = 0.4
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, surrogate log-probs, target log-probs)``: see the module docstring."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, N)
    P = rng.dirichlet(np.ones(C) * 0.5, N)
    wrong = rng.random(N) < err
    top = np.where(wrong, (y + rng.integers(1, C, N)) % C, y) if C > 1 else y
    # move the row's largest mass onto `top`, then sharpen it at random
    j = P.argmax(1)
    rows = np.arange(N)
    P[rows, j], P[rows, top] = P[rows, top], P[rows, j].copy()
    P[rows, top] += rng.uniform(0, 1.5, N)
    P /= P.sum(1, keepdims=True)
    P = 0.995 * P + 0.005 / C
    Sp = P * np.exp(rng.normal(0, noise, P.shape))
    Sp /= Sp.sum(1, keepdims=True)
    return y, np.log(Sp), np.log(P)


def _other(y: np.ndarray, T: np.ndarray, seed: int = 9) -> np.ndarray:
    """A second model: the target's row, but right on 30 % of the target's wrong items
    and wrong on 15 % of its right items (the top mass moved)."""
    rng = np.random.default_rng(seed)
    N, C = T.shape
    P = np.exp(T)
    t = P.argmax(1)
    right = t == y
    flip_to_right = (~right) & (rng.random(N) < 0.3)
    flip_to_wrong = right & (rng.random(N) < 0.15)
    new = t.copy()
    new[flip_to_right] = y[flip_to_right]
    new[flip_to_wrong] = (y[flip_to_wrong] + rng.integers(1, C, flip_to_wrong.sum())) % C
    rows = np.arange(N)
    Q = P.copy()
    Q[rows, t], Q[rows, new] = Q[rows, new], Q[rows, t].copy()
    return np.log(Q)


def _other_hostile(y: np.ndarray, T: np.ndarray, seed: int = 9) -> np.ndarray:
    """A second model that agrees with the target except on 10 % of the items where the
    target is confidently right (p(true) > 0.8): there it puts its top mass on another
    class (an error the design, fitted to the target, has no reason to look for)."""
    rng = np.random.default_rng(seed)
    N, C = T.shape
    P = np.exp(T)
    t = P.argmax(1)
    pick = (t == y) & (P[np.arange(N), y] > 0.8) & (rng.random(N) < 0.1)
    new = t.copy()
    new[pick] = (y[pick] + rng.integers(1, C, pick.sum())) % C
    rows = np.arange(N)
    Q = P.copy()
    Q[rows, t], Q[rows, new] = Q[rows, new], Q[rows, t].copy()
    return np.log(Q)


def _other_rare_miss(y: np.ndarray, T: np.ndarray, seed: int = 9) -> np.ndarray:
    """A second model equal to the target except on 1 % of the items where the target is
    right: there it gives the true class 1e-4 (log loss 9.2)."""
    rng = np.random.default_rng(seed)
    N = T.shape[0]
    P = np.exp(T)
    pick = (P.argmax(1) == y) & (rng.random(N) < 0.01 / max((P.argmax(1) == y).mean(), 1e-9))
    Q = P.copy()
    Q[pick, y[pick]] = 0.0
    Q[pick] *= (1 - 1e-4) / Q[pick].sum(1, keepdims=True)
    Q[pick, y[pick]] = 1e-4
    return np.log(Q)


def _rare_miss_target(y: np.ndarray, S: np.ndarray, T: np.ndarray, seed: int = 7
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The target (and the surrogate, which copies it there) give the true class 1e-4
    on 1 % of the items: rare confident misses neither model hints at."""
    rng = np.random.default_rng(seed)
    P, Sp = np.exp(T), np.exp(S)
    pick = rng.random(len(y)) < 0.01
    P[pick, y[pick]] = 0.0
    P[pick] *= (1 - 1e-4) / P[pick].sum(1, keepdims=True)
    P[pick, y[pick]] = 1e-4
    Sp[pick] = P[pick]
    return np.log(Sp), np.log(P)


def _loss(lp: np.ndarray, y: np.ndarray, metric: str) -> np.ndarray:
    if metric == "error_rate":
        return (lp.argmax(1) != y).astype(float)
    lp = lp - np.logaddexp.reduce(lp, axis=1, keepdims=True)
    return -lp[np.arange(len(y)), y]


@dataclass(frozen=True)
class Case:
    """One configuration: pool, design, metric, batch size, budgets, what is measured."""

    doc: str
    N: int = 1000
    C: int = 4
    err: float = 0.5
    metric: str = "error_rate"
    acquisition: str = "adaptive"
    batch: int = 1
    budgets: tuple[int, ...] = (20, 30, 50, 100)
    target_fn: bool = False   # the target a function on drawn rows (PE)
    other: str = ""           # "", "init" or "late": measure the compared model's own
    other_kind: str = "random"  # "random", "hostile", "rare_miss": which second model
    rare_miss: bool = False   # the target (and surrogate) with 1 % confident misses
    level: float = 0.95
    budget: int | None = None  # the planned budget (ActiveTest's budget=)
    read: str = ""            # with metric "both": the metric read (default error rate)
    hostile: str = ""         # a pool of activetest.experiments.hostile instead (seed 0)
    gap3: bool = False        # coverage_gaps.py's uniform-rare-miss pool instead


CASES: dict[str, Case] = {
    "batch10-mid": Case("default design, error rate ~0.5, next(10)", batch=10),
    "batch25-mid": Case("default design, error rate ~0.5, next(25)", batch=25,
                        budgets=(25, 50, 75, 100)),
    "batch10-high": Case("default design, error rate ~0.97, next(10)", err=0.97, batch=10),
    "batch10-mid-log": Case("default design, log loss, error rate ~0.5, next(10)",
                            metric="log_loss", batch=10),
    "batch25-mid-log": Case("default design, log loss, error rate ~0.5, next(25)",
                            metric="log_loss", batch=25, budgets=(25, 50, 75, 100)),
    "batch10-high-log": Case("default design, log loss, error rate ~0.97, next(10)",
                             metric="log_loss", err=0.97, batch=10),
    "pe-mid": Case("pe_adaptive, target a function, error rate ~0.3", err=0.3,
                   acquisition="pe_adaptive", target_fn=True, budgets=(20, 30, 50, 100)),
    "pe-mid-log": Case("pe_adaptive, target a function, log loss, error rate ~0.3",
                       err=0.3, metric="log_loss", acquisition="pe_adaptive",
                       target_fn=True, budgets=(20, 30, 50, 100)),
    "pe-batch10-mid": Case("pe_adaptive, target a function, error rate ~0.3, next(10)",
                           err=0.3, acquisition="pe_adaptive", target_fn=True, batch=10),
    "other-init": Case("default design; the compared model's own error rate, given at "
                       "construction", err=0.3, other="init", budgets=(20, 30, 50, 100, 200)),
    "other-late": Case("default design; the compared model's own error rate, given at "
                       "estimate time", err=0.3, other="late", budgets=(20, 30, 50, 100, 200)),
    "other-init-log": Case("default design, log loss; the compared model's own log loss, "
                           "given at construction", err=0.3, metric="log_loss", other="init",
                           budgets=(20, 30, 50, 100, 200)),
    "other-late-log": Case("default design, log loss; the compared model's own log loss, "
                           "given at estimate time", err=0.3, metric="log_loss",
                           other="late", budgets=(20, 30, 50, 100, 200)),
    "other-hostile": Case("default design, error rate; the compared model's own error "
                          "rate, wrong on 10 % of the target's confident right items",
                          err=0.3, other="init", other_kind="hostile",
                          budgets=(20, 30, 50, 100, 200)),
    "other-hostile-batch10": Case("as other-hostile, next(10)", err=0.3, other="init",
                                  other_kind="hostile", batch=10,
                                  budgets=(20, 30, 50, 100, 200)),
    "other-rare-miss-log": Case("default design, log loss; the compared model's own log "
                                "loss, 1 % confident misses where the target is right",
                                err=0.3, metric="log_loss", other="init",
                                other_kind="rare_miss", budgets=(30, 50, 100, 200, 400)),
    "ce-other-hostile": Case("the paper's CE acquisition, error rate; the compared model's "
                             "own error rate (as other-hostile)", err=0.3, acquisition="ce",
                             other="init", other_kind="hostile",
                             budgets=(20, 30, 50, 100, 200)),
    "zero-one-other-hostile": Case("the zero_one acquisition, error rate; the compared "
                                   "model's own error rate (as other-hostile)", err=0.3,
                                   acquisition="zero_one", other="init",
                                   other_kind="hostile", budgets=(20, 30, 50, 100, 200)),
    "zero-one-other-hostile-late": Case("as zero-one-other-hostile, the model given at "
                                        "estimate time", err=0.3, acquisition="zero_one",
                                        other="late", other_kind="hostile",
                                        budgets=(20, 30, 50, 100, 200)),
    "pe-other-hostile": Case("pe_adaptive, target a function; the compared model's own error "
                             "rate (as other-hostile), given at construction", err=0.3,
                             acquisition="pe_adaptive", target_fn=True, other="init",
                             other_kind="hostile", budgets=(20, 30, 50, 100, 200)),
    "pe-other-rare-miss-log": Case("pe_adaptive, target a function, log loss; the compared "
                                   "model's own log loss (as other-rare-miss-log)", err=0.3,
                                   metric="log_loss", acquisition="pe_adaptive",
                                   target_fn=True, other="init", other_kind="rare_miss",
                                   budgets=(30, 50, 100, 200, 400)),
    "pe-gap3-pool": Case("pe_adaptive, target a function, log loss, next(10), on "
                         "coverage_gaps.py's uniform-rare-miss pool (N = 2,000, C = 10, 1 % "
                         "confident misses)", metric="log_loss", acquisition="pe_adaptive",
                         target_fn=True, gap3=True, batch=10, budgets=(30, 50, 100, 200, 400)),
    "adaptive-gap3-pool": Case("default design, log loss, next(10), on coverage_gaps.py's "
                               "uniform-rare-miss pool", metric="log_loss", gap3=True,
                               batch=10, budgets=(30, 50, 100, 200, 400)),
    "adaptive-gap3-pool-batch50": Case("default design, log loss, next(50), on "
                                       "coverage_gaps.py's uniform-rare-miss pool",
                                       metric="log_loss", gap3=True, batch=50,
                                       budgets=(50, 100, 200, 400)),
    "hostile-rare-miss-log-batch50": Case("hostile pool rare_miss, log loss, default "
                                          "design, next(50)", hostile="rare_miss",
                                          metric="log_loss", batch=50,
                                          budgets=(50, 100, 200, 400)),
    "pe-rare-miss-log": Case("pe_adaptive, target a function, log loss, 1 % confident "
                             "misses copied by the surrogate", err=0.3, metric="log_loss",
                             acquisition="pe_adaptive", target_fn=True, rare_miss=True,
                             budgets=(30, 50, 100, 200, 400)),
    "adaptive-rare-miss-log-batch25": Case("default design, log loss, 1 % confident misses "
                                           "copied by the surrogate, next(25)", err=0.3,
                                           metric="log_loss", rare_miss=True, batch=25,
                                           budgets=(25, 50, 100, 200, 400)),
    "small-pool": Case("default design, error rate ~0.3, N = 80, up to 2/3 of the pool",
                       N=80, err=0.3, budgets=(20, 30, 40, 53)),
    "small-pool-log": Case("default design, log loss, error rate ~0.3, N = 80",
                           N=80, err=0.3, metric="log_loss", budgets=(20, 30, 40, 53)),
    "level-99": Case("default design, error rate ~0.3, level 0.99", err=0.3, level=0.99,
                     budgets=(20, 30, 50, 100, 200)),
    "level-99-log": Case("default design, log loss, error rate ~0.3, level 0.99", err=0.3,
                         metric="log_loss", level=0.99, budgets=(20, 30, 50, 100, 200)),
    "level-80": Case("default design, error rate ~0.3, level 0.80", err=0.3, level=0.80,
                     budgets=(20, 30, 50, 100, 200)),
    "level-80-log": Case("default design, log loss, error rate ~0.3, level 0.80", err=0.3,
                         metric="log_loss", level=0.80, budgets=(20, 30, 50, 100, 200)),
    "budget-30": Case("default design, error rate ~0.3, budget=30 planned, run to 400",
                      err=0.3, budget=30, budgets=(30, 50, 100, 200, 400)),
    "budget-30-log": Case("default design, log loss, error rate ~0.3, budget=30 planned, "
                          "run to 400", err=0.3, metric="log_loss", budget=30,
                          budgets=(30, 50, 100, 200, 400)),
    "fixed-mix": Case("fixed_mix design, error rate ~0.3", err=0.3, acquisition="fixed_mix",
                      budgets=(20, 30, 50, 100, 200)),
    "both-batch10-log": Case("default design, metric both (log loss read), next(10)",
                             err=0.3, metric="both", batch=10, read="log_loss"),
    "both-batch10": Case("default design, metric both (error rate read), next(10)",
                         err=0.3, metric="both", batch=10),
    "many-classes-50": Case("default design, error rate, C = 50, N = 2,000, error ~0.3",
                            N=2000, C=50, err=0.3, budgets=(30, 50, 100, 200)),
}


for _pool_name, _metric in [("rare_miss", "log_loss"), ("rare_miss", "error_rate"),
                            ("near_constant", "error_rate"), ("anti_correlated", "error_rate"),
                            ("anti_correlated", "log_loss"), ("wrong_class", "error_rate"),
                            ("wrong_class", "log_loss"), ("label_noise", "log_loss")]:
    for _b in (10, 25):
        _short = "log" if _metric == "log_loss" else "err"
        CASES[f"hostile-{_pool_name.replace('_', '-')}-{_short}-batch{_b}"] = Case(
            f"hostile pool {_pool_name} (N = 2,000, C = 4), {_metric}, default design, "
            f"next({_b})", hostile=_pool_name, metric=_metric, batch=_b,
            budgets=(20, 30, 50, 100, 200) if _b == 10 else (25, 50, 100, 200))


#: Graded cases: judgment levels and scores, the share of items at each level (the
#: target's answers), the budgets, drawn 10 at a time by a Session with the graded
#: default design; pool of 300 questions, surrogate a pool column unrelated to the
#: levels (``column:p``).
GRADED: dict[str, dict] = {
    "graded-interior": {
        "doc": "graded session, levels wrong/poor/good/right (scores 0, 0.3, 0.7, 1): 96 % "
               "of the answers 'good' (loss 0.3), 4 % 'wrong' (loss 1)",
        "levels": ["wrong", "poor", "good", "right"], "scores": [0.0, 0.3, 0.7, 1.0],
        "shares": [0.04, 0.0, 0.96, 0.0]},
    "graded-interior-confident": {
        "doc": "as graded-interior, 5 % 'wrong', the surrogate column confident (p in "
               "[0.98, 0.999])",
        "levels": ["wrong", "poor", "good", "right"], "scores": [0.0, 0.3, 0.7, 1.0],
        "shares": [0.05, 0.0, 0.95, 0.0], "p": (0.98, 0.999)},
    "graded-interior-sure": {
        "doc": "as graded-interior, 5 % 'wrong', the surrogate column sure (p in "
               "[0.995, 0.9995], e.g. a model's own answer probability)",
        "levels": ["wrong", "poor", "good", "right"], "scores": [0.0, 0.3, 0.7, 1.0],
        "shares": [0.05, 0.0, 0.95, 0.0], "p": (0.995, 0.9995)},
    "graded-benign": {
        "doc": "graded session, four levels (scores 0, 0.3, 0.7, 1) in equal shares, the "
               "surrogate column unrelated: where the rule must cost nothing",
        "levels": ["wrong", "poor", "good", "right"], "scores": [0.0, 0.3, 0.7, 1.0],
        "shares": [0.25, 0.25, 0.25, 0.25]},
    "graded-mostly-good": {
        "doc": "graded session, levels as graded-benign: 10 % 'wrong', 60 % 'good', 30 % "
               "'right', the surrogate column unrelated",
        "levels": ["wrong", "poor", "good", "right"], "scores": [0.0, 0.3, 0.7, 1.0],
        "shares": [0.1, 0.0, 0.6, 0.3]},
    "graded-binary-sure": {
        "doc": "as graded-interior-sure with two levels (incorrect/correct): its control",
        "levels": ["incorrect", "correct"], "scores": [0.0, 1.0], "shares": [0.05, 0.95],
        "p": (0.995, 0.9995)},
    "graded-binary-confident": {
        "doc": "as graded-binary-rare, 5 % incorrect, the surrogate column confident (p in "
               "[0.98, 0.999]): the control of graded-interior-confident",
        "levels": ["incorrect", "correct"], "scores": [0.0, 1.0], "shares": [0.05, 0.95],
        "p": (0.98, 0.999)},
    "graded-binary-rare": {
        "doc": "graded session, levels incorrect/correct: 4 % of the answers incorrect "
               "(the few-errors rule's own case, as a control)",
        "levels": ["incorrect", "correct"], "scores": [0.0, 1.0], "shares": [0.04, 0.96]},
}
GRADED_BUDGETS = (20, 30, 50, 100)


def run_graded(name: str, seeds: int, first_seed: int = 3000, n: int = 300) -> dict:
    """Coverages of a graded case (:data:`GRADED`) over ``seeds`` sessions."""
    from activetest import Session

    g = GRADED[name]
    levels, scores = g["levels"], np.asarray(g["scores"])
    rng = np.random.default_rng(5)
    lev = rng.permutation(np.repeat(np.arange(len(levels)),
                                    np.round(np.asarray(g["shares"]) * n).astype(int)))[:n]
    truth = float(np.mean(1.0 - scores[lev]))
    tmp = Path(tempfile.mkdtemp())
    (tmp / "t.toml").write_text(
        'kind = "graded"\nname = "qa"\ninstruction = ""\n[templates]\n'
        'item = "Q: {question}\\nA:"\nexample = "Q: {question}\\nA: {answer}\\n"\n'
        f'[judgment]\nlevels = {json.dumps(levels)}\nscores = {json.dumps(scores.tolist())}\n',
        encoding="utf-8")
    p = rng.uniform(*g.get("p", (0.05, 0.95)), n)
    (tmp / "pool.jsonl").write_text("".join(json.dumps(
        {"id": f"q{i}", "question": f"question {i}?", "answer": f"a{i}",
         "p": round(float(p[i]), 3)}) + "\n" for i in range(n)), encoding="utf-8")
    rec = {b: {"fixed": [], "cs": [], "width": [], "exact": [], "est": []}
           for b in GRADED_BUDGETS}
    for k in range(seeds):
        db = tmp / f"s{k}.db"
        with Session.create(db, pool=str(tmp / "pool.jsonl"), task=str(tmp / "t.toml"),
                            surrogate="column:p", target="pool", seed=first_seed + k,
                            progress=False, n_boot=20) as s:
            got = 0
            for b in GRADED_BUDGETS:
                while got < b:
                    s.select(min(10, b - got))
                    ids = [x.item_id for x in s.acquisitions()][got:]
                    s.add_labels([(i, levels[lev[int(i[1:])]]) for i in ids])
                    got += len(ids)
                r = s.estimate(record=False, progress=False)
                iv, d = r.metrics["error_rate"].anytime, rec[b]
                d["fixed"].append(iv.fixed_low <= truth <= iv.fixed_high)
                d["cs"].append(iv.cs_low <= truth <= iv.cs_high)
                d["width"].append(iv.fixed_high - iv.fixed_low)
                d["exact"].append(iv.basis == "exact")
                d["est"].append(r.metrics["error_rate"].active.estimate)
        db.unlink()
    return {"case": name, "truth": truth, "seeds": seeds, "rec": rec, "doc": g["doc"],
            "level": 0.95}


def run_case(name: str, seeds: int, first_seed: int = 3000) -> dict:
    """Coverages of one case over ``seeds`` runs (see the module docstring)."""
    if name in GRADED:
        return run_graded(name, seeds, first_seed)
    c = CASES[name]
    if c.hostile:
        from activetest.experiments.hostile import hostile_pool

        hp = hostile_pool(c.hostile, seed=0)
        y, S, T = hp.labels, hp.surrogate, hp.target
    elif c.gap3:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from coverage_gaps import _rare_miss

        y, S, T = _rare_miss()
    else:
        y, S, T = _pool(c.N, c.C, c.err)
    if c.rare_miss:
        S, T = _rare_miss_target(y, S, T)
    other_lp = ({"random": _other, "hostile": _other_hostile, "rare_miss": _other_rare_miss}
         [c.other_kind](y, T) if c.other else None)
    metric = (c.read or "error_rate") if c.metric == "both" else c.metric
    truth = float(_loss(other_lp if c.other else T, y, metric).mean())
    rec = {b: {"fixed": [], "cs": [], "width": [], "exact": [], "est": []}
           for b in c.budgets}
    for s in range(seeds):
        target = (lambda rows: T[rows]) if c.target_fn else T
        run = at.ActiveTest(surrogate=S, target=target, metric=c.metric, level=c.level,
                            seed=first_seed + s, acquisition=c.acquisition, n_boot=50,
                            budget=c.budget,
                            compare={"B": other_lp} if c.other == "init" else None)
        k = 0
        for b in c.budgets:
            while k < b:
                for i in run.next(min(c.batch, b - k)):
                    run.label(i, int(y[i]))
                    k += 1
            r = run.estimate(compare={"B": other_lp} if c.other == "late" else None)
            if c.other:
                iv = r.comparisons[0].other_anytime
                est = r.comparisons[0].other.estimate
            else:
                iv = r.metrics[metric].anytime
                est = r.metrics[metric].active.estimate
            d = rec[b]
            d["fixed"].append(iv.fixed_low <= truth <= iv.fixed_high)
            d["cs"].append(iv.cs_low <= truth <= iv.cs_high)
            d["width"].append(iv.fixed_high - iv.fixed_low)
            d["exact"].append(iv.basis == "exact")
            d["est"].append(est)
    return {"case": name, "truth": truth, "seeds": seeds, "rec": rec, "doc": c.doc,
            "level": c.level}


def _cell(v: float, n: int, level: float = 0.95) -> str:
    se = np.sqrt(max(v * (1 - v), 0.0) / n)
    mark = "**" if v < level - 0.02 else ""
    return f"{mark}{v:.3f}{mark} ({se:.3f})"


def main(argv: list[str] | None = None) -> None:
    """Print the coverages of one case (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=sorted([*CASES, *GRADED]))
    ap.add_argument("--list", action="store_true", help="print every case and exit")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--first-seed", type=int, default=3000)
    a = ap.parse_args(argv)
    if a.list or a.case is None:
        for name, c in sorted(CASES.items()):
            print(f"{name}: {c.doc}")
        for name, g in sorted(GRADED.items()):
            print(f"{name}: {g['doc']}")
        return
    warnings.filterwarnings("ignore")
    t0 = time.process_time()
    out = run_case(a.case, a.seeds, a.first_seed)
    n, lv = a.seeds, out["level"]
    print(f"{a.case}: {out['doc']}; truth {out['truth']:.4f}, {n} seeds from "
          f"{a.first_seed}, {time.process_time() - t0:.0f} CPU-s")
    print("| labels | fixed-budget coverage (SE) | anytime CS coverage (SE) "
          "| median fixed width | exact-CS share | mean estimate |")
    print("|---|---|---|---|---|---|")
    for b, d in out["rec"].items():
        print(f"| {b} | {_cell(float(np.mean(d['fixed'])), n, lv)} | "
              f"{_cell(float(np.mean(d['cs'])), n, lv)} | {np.median(d['width']):.3f} | "
              f"{np.mean(d['exact']):.2f} | {np.mean(d['est']):.4f} |")


if __name__ == "__main__":
    main()
