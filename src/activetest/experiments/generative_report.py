"""The statistics half of the SQuAD experiment: the paper's protocol on judged free-form answers.

Usage::

    python -m activetest.experiments.generative_report            # 3,000 runs, ~minutes
    python -m activetest.experiments.generative_report --runs 50 --budget 60 --out /tmp/g

Reads ``experiments/outputs/generative/squad.npz`` only (written by
:mod:`activetest.experiments.generative`; no model is run) and writes
``docs/generative.md`` with ``docs/generative/*.png``.

Protocol (the paper's, METHOD.md), for each target model and each loss
(``1 - exact match``, the primary; ``1 - token F1``, secondary):

* the pool (2,000 questions) is what is sampled; the truth is the target's mean
  loss on the disjoint test set (1,000 questions); the pool's own mean loss is
  reported as a second truth (what the estimators are unbiased for);
* R = 3,000 independent runs per method, budgets 1..400; error at budget k =
  the median over runs of ``(R_hat_k - truth)^2``; relative error = that of the
  method over that of uniform sampling (+ the plain mean); the in-context judges
  were prompted with ``n_judge`` judged answers, so every method that uses a
  judge is charged them (k labels against uniform with k + n_judge);
* methods, fixed before any run (nothing chosen on the truth):
  - ``uniform``: uniform without replacement + the mean;
  - for each surrogate p = P(wrong) (:mod:`activetest.stats.graded`: confidence
    mean/min/sum ``1 - exp(lp)``, agreement ``1 - F1``, judge ``P(no)``):
    ``S+LURE`` (the paper's acquisition: q proportional to p, floored at
    floor / R_m, proposal floor 0.1; LURE), ``S+CV`` (the same draws, control-variate
    LURE with control p), ``S fixed`` (the fixed design: score ``sqrt(p(1-p))``,
    control p, in-run lambda; adaptive LURE);
  - ``graded``: the graded adaptive design on every feature (the judges'
    included, so charged), and ``graded-free`` on the label-free ones only
    (confidence and agreement; nothing charged).
* single-run intervals: the martingale fixed-budget interval
  (:func:`activetest.stats.intervals.fixed_interval_curve`, 95%) of the graded
  designs; coverage of the pool risk, and with the pool-variance term of the
  test-set truth.

Every random choice is seeded from ``(seed, target, loss, acquisition)``: a
method's draws do not depend on which other methods run, nor on ``--jobs``.
"""

from __future__ import annotations

import argparse
import os
import re
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from activetest.stats import estimators as est
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.graded import (
    graded_design,
    p_wrong_agreement,
    p_wrong_judge,
    p_wrong_logprob,
)
from activetest.stats.intervals import fixed_interval_curve, pool_variance_curve
from activetest.stats.sampler import sample

__all__ = ["BUDGETS", "TargetResult", "load", "main", "relative_error_figure", "run_target",
           "write_report"]

BUDGETS = (50, 100, 200, 300, 400)
FLOOR = 0.1  # the proposal floor (the paper's alpha)
GOAL = 0.70
GOAL_400 = 1.05
LOSSES = {"em": "1 - exact match", "f1": "1 - token F1"}
SHORT = {"smollm2-135m": "SmolLM2-135M", "gemma3-270m": "Gemma-3-270M"}
DEFAULT_NPZ = "experiments/outputs/generative/squad.npz"


@dataclass
class Pool:
    """One target's pool and test arrays (from the npz)."""

    target: str
    score: dict[str, np.ndarray]  # loss key -> (n_pool + n_test,) judgment score in [0, 1]
    surrogates: dict[str, np.ndarray]  # name -> (n_pool,) P(wrong)
    charged: dict[str, int]  # surrogate name -> labels spent on it
    features: dict[str, object]  # keyword arguments of graded_design
    n_pool: int
    n_judge: int


def load(path: str | os.PathLike[str]) -> dict[str, Pool]:
    """The per-target pools of ``squad.npz``: scores, surrogates and the graded features."""
    d = np.load(path)
    nj, npool = int(d["n_judge"]), int(d["n_pool"])
    targets = sorted({k.split("/")[0] for k in d.files if k.endswith("/em")})
    out: dict[str, Pool] = {}
    for t in targets:
        ev = slice(nj, None)  # pool then test (the judge examples excluded)
        score = {"em": d[f"{t}/em"][ev].astype(np.float64),
                 "f1": d[f"{t}/f1"][ev].astype(np.float64)}
        P = slice(0, npool)
        lp = {k: d[f"{t}/{k}"][ev].astype(np.float64)[P] for k in ("mean_lp", "min_lp",
                                                                    "sum_lp")}
        sur = {f"conf:{k[:-3]}": p_wrong_logprob(v) for k, v in lp.items()}
        charged = dict.fromkeys(sur, 0)
        agree = {k.split(":", 1)[1]: d[k][ev].astype(np.float64)[P]
                 for k in sorted(d.files) if k.startswith(f"{t}/agree:")}
        judges = {k.split(":", 1)[1]: d[k].astype(np.float64)[P]
                  for k in sorted(d.files) if k.startswith(f"{t}/judge:")}
        for o, a in agree.items():  # "agree": F1 with the other model's answer
            key = "agree" if len(agree) == 1 else f"agree:{o}"
            sur[key] = p_wrong_agreement(a)
            charged[key] = 0
        for j, lj in judges.items():
            sur[f"judge:{j}"] = p_wrong_judge(lj)
            charged[f"judge:{j}"] = nj
        feats = dict(mean_lp=lp["mean_lp"], min_lp=lp["min_lp"], sum_lp=lp["sum_lp"],
                     agreement=list(agree.values()), judges=list(judges.values()))
        out[t] = Pool(t, score, sur, charged, feats, npool, nj)
    return out


def _rng(seed: int, *names: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(
        [int(seed), *(zlib.crc32(n.encode()) for n in names)]))


def auroc(score: np.ndarray, wrong: np.ndarray) -> float:
    """P(score of a wrong answer > score of a right one), ties counted half (a diagnostic)."""
    w = np.asarray(wrong, dtype=bool)
    if w.all() or not w.any():
        return float("nan")
    from scipy.stats import rankdata
    r = rankdata(score)
    n1 = w.sum()
    return float((r[w].sum() - n1 * (n1 + 1) / 2) / (n1 * (~w).sum()))


@dataclass
class TargetResult:
    """Summaries of one (target, loss): per method, curves over budgets 1..budget."""

    target: str
    loss: str
    truth: float
    pool_risk: float
    n_runs: int
    budget: int
    charged: dict[str, int] = field(default_factory=dict)
    rel: dict[str, np.ndarray] = field(default_factory=dict)  # vs the test-set truth
    rel_pool: dict[str, np.ndarray] = field(default_factory=dict)  # vs the pool risk
    mse: dict[str, np.ndarray] = field(default_factory=dict)
    coverage: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    auroc: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


def _methods(pool: Pool) -> list[tuple[str, str]]:
    """(method name, acquisition) in table order."""
    out = [("uniform", "uniform")]
    for s in pool.surrogates:
        out += [(f"{s}+LURE", s), (f"{s}+CV", s), (f"{s} fixed", f"{s} fixed")]
    return [*out, ("graded", "graded"), ("graded-free", "graded-free")]


def run_target(pool: Pool, loss: str, *, n_runs: int, budget: int, seed: int,
               budgets: Sequence[int] = BUDGETS, graded: bool = True) -> TargetResult:
    """Simulate every method on one target for one loss and summarise (see the module doc);
    ``graded=False`` leaves the graded designs out (only the surrogates' methods)."""
    t0 = time.perf_counter()
    n = pool.n_pool
    score = pool.score[loss]
    L = 1.0 - score[:n]
    truth = float(1.0 - score[n:].mean())
    res = TargetResult(pool.target, loss, truth, float(L.mean()), n_runs, budget)
    extra = max(pool.charged.values(), default=0)
    total = min(budget + extra, n)
    wrong = (pool.score["em"][:n] < 1)
    for s, p in pool.surrogates.items():
        res.auroc[s] = auroc(p, wrong)
    curves: dict[str, np.ndarray] = {}
    idx, _ = sample(np.ones(n), total, n_runs=n_runs, proposal_floor=FLOOR,
                    random_state=_rng(seed, pool.target, loss, "uniform"))
    curves["uniform"] = est.uniform_mean_curve(L[idx])
    res.charged["uniform"] = 0
    for s, p in pool.surrogates.items():
        idx, q = sample(p, budget, n_runs=n_runs, proposal_floor=FLOOR,
                        random_state=_rng(seed, pool.target, loss, s))
        curves[f"{s}+LURE"] = est.lure_curve(L[idx], q, n)
        curves[f"{s}+CV"] = est.cv_lure_curve(L[idx], q, n, p[idx], float(p.mean()))
        design = AdaptiveDesign.fixed(np.sqrt(p * (1 - p)), p, lam=None, name="fixed")
        runs = simulate_design(design, losses=L, labels=None, budget=budget, n_runs=n_runs,
                               random_state=_rng(seed, pool.target, loss, f"{s} fixed"))
        curves[f"{s} fixed"] = runs.curve(L)
        for m in (f"{s}+LURE", f"{s}+CV", f"{s} fixed"):
            res.charged[m] = pool.charged[s]
    f = pool.features
    free = {k: v for k, v in f.items() if k != "judges"}
    for name, kw, charge in (("graded", f, pool.n_judge if f["judges"] else 0),
                             ("graded-free", free, 0)) if graded else ():
        design = graded_design(**kw)  # type: ignore[arg-type]
        runs = simulate_design(design, losses=L, labels=None, budget=budget, n_runs=n_runs,
                               random_state=_rng(seed, pool.target, loss, name),
                               model_var=True)
        curves[name] = runs.curve(L)
        res.charged[name] = charge
        Li = L[runs.indices]
        theta = est.adaptive_lure_theta(Li, runs.q, n, runs.control, runs.control_rest)
        cols = np.array([b for b in budgets if b <= budget]) - 1
        ci = fixed_interval_curve(theta, n, model_var=runs.model_var)  # as sessions do
        lo, hi = ci.low[:, cols], ci.high[:, cols]
        cov = {"pool": ((lo <= res.pool_risk) & (res.pool_risk <= hi)).mean(axis=0)}
        theta2 = est.adaptive_lure_theta(Li**2, runs.q, n)
        pv = pool_variance_curve(theta2, theta, n)
        cp = fixed_interval_curve(theta, n, pool_variance=pv, model_var=runs.model_var)
        lo, hi = cp.low[:, cols], cp.high[:, cols]
        cov["test"] = ((lo <= truth) & (truth <= hi)).mean(axis=0)
        res.coverage[name] = cov
    for truth_kind, target_value, store in (("test", truth, res.rel),
                                            ("pool", res.pool_risk, res.rel_pool)):
        base = np.median((curves["uniform"] - target_value) ** 2, axis=0)
        for m, c in curves.items():
            mse = np.median((c[:, :budget] - target_value) ** 2, axis=0)
            if truth_kind == "test":
                res.mse[m] = mse
            off = res.charged[m]
            rel = np.full(budget, np.nan)
            k = np.arange(1, budget + 1)
            ok = k + off <= total
            with np.errstate(divide="ignore", invalid="ignore"):
                rel[ok] = mse[k[ok] - 1] / base[k[ok] + off - 1]
            store[m] = rel
    res.seconds = time.perf_counter() - t0
    return res


#: Sections of docs/generative.md that other measurements write (e.g.
#: :mod:`activetest.experiments.harness_score`), between ``<!-- begin NAME -->`` and
#: ``<!-- end NAME -->``; regenerating this report keeps them.
_KEPT = re.compile(r"<!-- begin ([\w-]+) -->.*?<!-- end \1 -->", re.S)


def _kept_sections(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    return [m.group(0) for m in _KEPT.finditer(text)]


def _run_one(args: tuple) -> TargetResult:
    pool, loss, n_runs, budget, seed, budgets = args
    return run_target(pool, loss, n_runs=n_runs, budget=budget, seed=seed, budgets=budgets)


def _fmt(x: float, d: int = 2) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.{d}f}"


def _at(arr: np.ndarray, budgets: Sequence[int]) -> list[float]:
    return [float(arr[b - 1]) if b <= len(arr) else float("nan") for b in budgets]


def _smooth(x: np.ndarray, half: int = 10) -> np.ndarray:
    """Centred running median over ``2 half + 1`` budgets (NaN-aware), for the plots only."""
    out = np.full(x.shape, np.nan)
    for i in range(x.shape[0]):
        w = x[max(0, i - half): i + half + 1]
        if np.isfinite(w).any():
            out[i] = np.nanmedian(w)
    return out


#: The smallest text of the figures, in points (the legends were 7 pt: QA).
MIN_FONT = 8.0


def relative_error_figure(r: TargetResult) -> Any:
    """The figure of one target's relative error by budget (loss 1 - EM), each method
    named, the data (SQuAD v1.1 dev, the bundled outputs), the runs and the truth in the
    title, the line at 1 (uniform sampling) in the legend; no text below
    :data:`MIN_FONT` (QA: the title named neither data nor runs, the legends were 7 pt
    and the grey line at 1 was unexplained); each legend below its panel, over no curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 6.2), sharey=True, layout="constrained")
    k = np.arange(1, r.budget + 1)
    surs = [m[: -len("+LURE")] for m in r.rel if m.endswith("+LURE")]
    cmap = plt.get_cmap("tab10")
    for ax, suffix, title in ((axes[0], "+LURE", "paper's acquisition (q ~ P(wrong)) + LURE"),
                              (axes[1], " fixed", "fixed design (q ~ sd, control P(wrong)) "
                                                  "and the graded designs")):
        for i, s in enumerate(surs):
            ax.plot(k, _smooth(r.rel[f"{s}{suffix}"]), color=cmap(i % 10), lw=1.3, label=s)
        if suffix == " fixed":
            ax.plot(k, _smooth(r.rel["graded"]), color="k", lw=2.4,
                    label="graded (all features)")
            ax.plot(k, _smooth(r.rel["graded-free"]), color="k", lw=1.8, ls="--",
                    label="graded (label-free)")
        ax.axhline(1.0, color="grey", lw=0.8, label="uniform sampling + the mean (= 1)")
        ax.set_ylim(0, 2)
        ax.set_xlim(10, r.budget)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("labels (judge methods: plus the 8 judged examples, charged)")
        # below the panel: inside it, the legend hid the curves between 1.1 and 2 (QA)
        ax.legend(fontsize=MIN_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.13),
                  ncols=3, frameon=False)
    axes[0].set_ylabel("relative error (running median over 21 budgets)")
    fig.suptitle(f"{SHORT.get(r.target, r.target)} on SQuAD v1.1 dev (bundled outputs), "
                 f"loss {LOSSES[r.loss]}, {r.n_runs:,} runs per method\nmedian squared "
                 "error against the test-set truth / uniform sampling's (lower is better)",
                 fontsize=11)
    return fig


def _plot(r: TargetResult, path: Path, budgets: Sequence[int]) -> None:
    import matplotlib.pyplot as plt

    fig = relative_error_figure(r)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_report(results: Sequence[TargetResult], out_dir: str | os.PathLike[str], *,
                 elapsed: float, command: str, budgets: Sequence[int] = BUDGETS,
                 pools: dict[str, Pool] | None = None, plots: bool = True) -> Path:
    """``docs/generative.md`` (and its plots) from the per-target results."""
    out = Path(out_dir)
    (out / "generative").mkdir(parents=True, exist_ok=True)
    em = [r for r in results if r.loss == "em"]
    f1 = [r for r in results if r.loss == "f1"]
    methods = list(em[0].rel)
    bud = [b for b in budgets if b <= em[0].budget]
    last = bud[-1]

    def med(rs: Sequence[TargetResult], m: str, pool: bool = False) -> float:
        vals = [v for r in rs for v in _at((r.rel_pool if pool else r.rel)[m], bud)]
        return float(np.nanmedian(vals))

    def worst(rs: Sequence[TargetResult], m: str) -> float:
        return max(_at(r.rel[m], [last])[0] for r in rs)

    head = {m: med(em, m) for m in methods if m != "uniform"}
    best = min(head, key=lambda m: head[m])
    ok = [m for m in head if worst(em, m) <= GOAL_400]
    lines = [
        "# Active testing of generative answers: SQuAD with the bundled models", "",
        f"Generated by `{command}` in {elapsed:.0f} s ({elapsed / 60:.1f} min) on this "
        f"machine from `{DEFAULT_NPZ}` alone (no model is run; the answers, judgments and "
        "surrogates were computed by `python -m activetest.experiments.generative`). "
        f"{em[0].n_runs:,} runs per method, budgets 1..{em[0].budget}, proposal floor {FLOOR}, "
        "seeds fixed, nothing tuned on the truth.", "",
        "## Setup", "",
        "- Task: SQuAD v1.1 dev, free-form answers of each bundled model (3 shots, greedy, at "
        "most 16 tokens); judged by the official exact match (EM; loss 1 - EM) and token F1 "
        "(loss 1 - F1, secondary).",
        f"- Pool of {pools[em[0].target].n_pool if pools else 2000:,} "
        "questions (what is sampled); a disjoint test set of 1,000 gives the truth (the "
        "target's mean test loss); the pool's own mean loss is the second truth.",
        "- Surrogates, each a label-free P(wrong): the target's confidence "
        "`conf:mean|min|sum` = 1 - exp(mean / min / summed answer-token log-prob); "
        "`agree` = 1 - token F1 between the target's and the other model's answers; `judge:J` = "
        "P(no) of model J asked 'Correct? yes/no' after "
        f"{pools[em[0].target].n_judge if pools else 8} judged examples (charged: k labels "
        "against uniform with k + 8).",
        "- Methods: `S+LURE` the paper's acquisition (q proportional to P(wrong), floor "
        "/ R_m) with LURE; `S+CV` the same draws with control-variate LURE (control "
        "P(wrong)); `S fixed` the fixed design (score sqrt(p(1 - p)), control p, in-run "
        "lambda >= 0.1) with adaptive LURE; `graded` the graded adaptive design "
        "(`activetest.stats.graded.graded_design`: a logistic P(wrong) on every feature, "
        "prior-centred on 1 - exp(sum log-prob), refitted at 10, 12, 15, 19, ... labels with "
        "an evidence-chosen ridge, in-run lambda; charged for the judges); `graded-free` the "
        "same on the label-free features only (confidence and agreement).", "",
        "| target | pool risk (1 - EM) | test truth | pool risk (1 - F1) | "
        + " | ".join(f"AUROC {s}" for s in em[0].auroc) + " |",
        "|---|---|---|---|" + "---|" * len(em[0].auroc),
    ]
    for r in em:
        rf = next((x for x in f1 if x.target == r.target), None)
        lines.append(f"| {SHORT.get(r.target, r.target)} | {r.pool_risk:.3f} | {r.truth:.3f} | "
                     f"{_fmt(rf.pool_risk, 3) if rf else 'n/a'} | "
                     + " | ".join(_fmt(v) for v in r.auroc.values()) + " |")
    lines += [
        "", "AUROC: how well each surrogate's P(wrong) ranks wrong (EM = 0) above right "
        "answers on the pool; a diagnostic computed with the labels, never used by a method.",
        "", "## Headline", "",
        f"Median relative error (active / uniform, loss 1 - EM, test-set truth) over both "
        f"targets and the budgets {', '.join(map(str, bud))}: best method **{best}: "
        f"{head[best]:.2f}** (goal <= {GOAL}); its worst setting at {last} labels: "
        f"{worst(em, best):.2f} (goal <= {GOAL_400}). Graded design (all features): "
        f"{head['graded']:.2f}, worst at {last}: {worst(em, 'graded'):.2f}; label-free graded "
        f"design: {head['graded-free']:.2f}, worst at {last}: {worst(em, 'graded-free'):.2f}. "
        f"Methods with no setting above {GOAL_400} at {last} labels: {len(ok)} of {len(head)}.",
        "",
        "| method | median rel. error | vs pool risk | "
        + " | ".join(f"{SHORT.get(r.target, r.target)} at {last}" for r in em)
        + " | labels charged |",
        "|---|---|---|" + "---|" * len(em) + "---|",
    ]
    for m in sorted(head, key=lambda m: head[m]):
        lines.append(f"| {m} | {head[m]:.2f} | {med(em, m, pool=True):.2f} | "
                     + " | ".join(_fmt(_at(r.rel[m], [last])[0]) for r in em)
                     + f" | {em[0].charged[m]} |")
    lines += ["", "(`uniform` is 1 by construction and not listed.)", ""]
    for r in em:
        lines += [f"## {SHORT.get(r.target, r.target)}: relative error by budget (1 - EM)", "",
                  f"Truth (test) {r.truth:.4f}, pool risk {r.pool_risk:.4f}; uniform's median "
                  "squared error at " + ", ".join(f"{b}: {v:.2e}" for b, v in
                                                  zip(bud, _at(r.mse['uniform'], bud),
                                                      strict=True)) + ".", "",
                  "| method | " + " | ".join(str(b) for b in bud) + " |",
                  "|---|" + "---|" * len(bud)]
        for m in methods:
            if m != "uniform":
                lines.append(f"| {m} | " + " | ".join(_fmt(v) for v in _at(r.rel[m], bud))
                             + " |")
        lines.append("")
        if plots:
            lines += [f"![relative error, {r.target}](generative/{r.target}-em.png)", "",
                      f"*The figure: {SHORT.get(r.target, r.target)}'s relative error "
                      f"(loss 1 - EM; median over {r.n_runs:,} runs of the squared error "
                      "against the test-set truth, over uniform sampling's; running median "
                      f"over 21 budgets) at every budget 10..{r.budget}: left, each "
                      "surrogate's paper acquisition with LURE; right, each surrogate's "
                      "fixed design and the graded designs; grey: uniform sampling (1). "
                      f"Made by `{command}`, with the tables.*", ""]
    lines += ["## Single-run intervals of the graded designs", "",
              "Share of runs whose fixed-budget 95% interval (martingale CLT, "
              "`activetest.stats.intervals.fixed_interval_curve`, with the design's own "
              "variance prediction as a floor, `model_var=`, as sessions compute it) covers "
              "the pool risk (what the estimate is unbiased for), and, with the "
              "pool-variance term (`pool_variance=`), the test-set truth.", "",
              "| target | loss | design | covers | " + " | ".join(str(b) for b in bud) + " |",
              "|---|---|---|---|" + "---|" * len(bud)]
    for r in results:
        for d, cov in r.coverage.items():
            for kind in ("pool", "test"):
                lines.append(f"| {SHORT.get(r.target, r.target)} | {LOSSES[r.loss]} | {d} | "
                             f"{'pool risk' if kind == 'pool' else 'test truth'} | "
                             + " | ".join(_fmt(v) for v in cov[kind][:len(bud)]) + " |")
    if f1:
        head_f1 = {m: med(f1, m) for m in methods if m != "uniform"}
        lines += ["", "## Secondary: loss 1 - token F1", "",
                  "The same runs' protocol with the graded loss 1 - F1 (the surrogates still "
                  "predict P(wrong); the graded designs fit the soft loss).", "",
                  "| method | median rel. error | "
                  + " | ".join(f"{SHORT.get(r.target, r.target)} at {last}" for r in f1)
                  + " |", "|---|---|" + "---|" * len(f1)]
        for m in sorted(head_f1, key=lambda m: head_f1[m]):
            lines.append(f"| {m} | {head_f1[m]:.2f} | "
                         + " | ".join(_fmt(_at(r.rel[m], [last])[0]) for r in f1) + " |")
    lines += ["", "## Reading", "", *_reading(em, head, best, worst, bud, last, pools), "",
              "## Re-running", "",
              f"`{command}` (about {elapsed / 60:.0f} min on 2 CPU cores; `--runs`/`--budget` "
              "shrink it; `--jobs` sets the worker processes; the numbers do not depend on "
              "it). CI runs a reduced version (`tests/experiments/test_generative.py`).", ""]
    path = out / "generative.md"
    kept = _kept_sections(path)
    if kept:  # sections other measurements write (between their markers), kept in place
        at = lines.index("## Re-running")
        lines[at:at] = [*kept, ""]
    path.write_text("\n".join(lines) + "\n")
    if plots:
        for r in em:
            _plot(r, out / "generative" / f"{r.target}-em.png", bud)
    return path


def _pool_med(rs: Sequence[TargetResult], m: str, bud: Sequence[int]) -> float:
    return float(np.nanmedian([v for r in rs for v in _at(r.rel_pool[m], bud)]))


def _reading(em: Sequence[TargetResult], head: dict[str, float], best: str, worst,
             bud: Sequence[int], last: int, pools: dict[str, Pool] | None = None) -> list[str]:
    """Plain sentences from the numbers (no hand-written claims that could go stale)."""
    out = []
    for r in em:
        name = SHORT.get(r.target, r.target)
        vals = {m: float(np.nanmedian(_at(r.rel[m], bud))) for m in r.rel if m != "uniform"}
        b = min(vals, key=lambda m: vals[m])
        bs = max(r.auroc, key=lambda s: r.auroc[s])
        out.append(f"- {name} (error rate {r.pool_risk:.2f} on the pool): best method {b} "
                   f"({vals[b]:.2f}); the graded design {vals['graded']:.2f}, label-free "
                   f"{vals['graded-free']:.2f}; the best-ranking single surrogate ({bs}, AUROC "
                   f"{r.auroc[bs]:.2f}) gives {vals[f'{bs}+LURE']:.2f} with the paper's "
                   f"acquisition and LURE, {vals[f'{bs}+CV']:.2f} with CV-LURE, "
                   f"{vals[f'{bs} fixed']:.2f} with the fixed design.")
    if pools:
        for r in em:
            pool = pools[r.target]
            p_agree = pool.surrogates.get("agree")
            p_sum = pool.surrogates["conf:sum"]
            gap = (r.pool_risk - r.truth) ** 2
            txt = (f"- Why the paper's acquisition gains little on "
                   f"{SHORT.get(r.target, r.target)}: {r.pool_risk:.0%} of its pool answers "
                   f"are wrong and conf:sum puts P(wrong) >= 0.5 on "
                   f"{(p_sum >= 0.5).mean():.0%} of the pool, so q proportional to P(wrong) is "
                   "nearly uniform over most of the pool; the variance-optimal proposal for a "
                   "0/1 loss with control p is proportional to sqrt(p(1 - p)), which the fixed "
                   "and graded designs use.")
            if p_agree is not None:
                txt += (f" Agreement gives P(wrong) = 0 to the {(p_agree == 0).mean():.0%} of "
                        "answers the two models share exactly, many of them still wrong: those "
                        "items sit at the floor, weigh 10 when drawn, and the error explodes "
                        "(the paper's failure mode of a miscalibrated surrogate).")
            txt += (f" The test set is a second sample: (pool risk - test truth)^2 = "
                    f"{gap:.1e} against uniform's median squared error "
                    f"{_at(r.mse['uniform'], [last])[0]:.1e} at {last} labels, a floor no "
                    "estimator of the pool can go below; the 'vs pool risk' column removes it.")
            out.append(txt)
    lure = [m for m in head if m.endswith("+LURE")]
    cv = [m for m in head if m.endswith("+CV")]
    fx = [m for m in head if m.endswith(" fixed")]
    out.append(f"- Across surrogates (median over them of the headline number): paper "
               f"acquisition + LURE {np.median([head[m] for m in lure]):.2f}, + CV-LURE "
               f"{np.median([head[m] for m in cv]):.2f}, fixed design "
               f"{np.median([head[m] for m in fx]):.2f}. The judges, near chance here, "
               f"are charged {em[0].charged.get('graded', 0)} labels: uniform gets "
               f"{em[0].charged.get('graded', 0) / bud[0]:.0%} more labels at {bud[0]}, "
               f"{em[0].charged.get('graded', 0) / last:.0%} at {last}.")
    if "conf:sum fixed" in head and pools:
        out.append(f"- `conf:sum fixed` is the graded design's prior model (P(wrong) = 1 - "
                   "exp(sum log-prob)) without learning. Learning the calibration from the "
                   f"labels moves the median relative error from {head['conf:sum fixed']:.2f} "
                   f"to {head['graded-free']:.2f} (label-free features) / "
                   f"{head['graded']:.2f} (all) against the test-set truth, and from "
                   f"{_pool_med(em, 'conf:sum fixed', bud):.2f} to "
                   f"{_pool_med(em, 'graded-free', bud):.2f} / "
                   f"{_pool_med(em, 'graded', bud):.2f} against the pool risk.")
    goal = head[best] <= GOAL and worst(em, best) <= GOAL_400
    out.append(f"- Goal (best <= {GOAL}, no setting above {GOAL_400} at {last}): "
               + ("met" if goal else "not met") + f" by {best} ({head[best]:.2f}, worst at "
               f"{last} {worst(em, best):.2f}). The best row is picked here on the truth, for "
               "reporting only; a user without labels cannot pick it, while the graded "
               "designs need no such choice (they weigh every surrogate from the labels as "
               "they arrive). Sessions draw every fixed surrogate with the fixed design by "
               "default (acquisition `graded_fixed`; `--acquisition ce` keeps the paper's), "
               "since it is at least as good as the paper's acquisition for every surrogate "
               "here; `--surrogate confidence:sum` is therefore the 'conf:sum fixed' row.")
    cov = [float(c["pool"][i]) for r in em for c in r.coverage.values()
           for i in range(len(c["pool"]))]
    out.append(f"- Intervals: the graded designs' 95% martingale intervals cover the pool risk "
               f"in {min(cov):.0%} to {max(cov):.0%} of runs across targets and budgets. "
               "Against the test-set truth the pool-variance term accounts for the pool being "
               "a sample, not for the test set's own sampling error, so coverage there can "
               "fall short where the two sets differ ("
               + (", ".join(f"{SHORT.get(r.target, r.target)}: down to "
                            f"{min(float(c['test'].min()) for c in r.coverage.values()):.2f}"
                            for r in em) or "none") + ").")
    out.append("- Reading a single budget: the uniform mean of a 0/1 loss takes few values, so "
               "its median squared error jumps between neighbouring budgets and so do the "
               "ratios (the plots show a running median over 21 budgets); the medians over "
               "budgets and targets above are the numbers to compare.")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--npz", default=DEFAULT_NPZ)
    p.add_argument("--out", default="docs")
    p.add_argument("--runs", type=int, default=3000)
    p.add_argument("--budget", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--losses", nargs="+", default=list(LOSSES), choices=list(LOSSES))
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    pools = load(a.npz)
    if "em" not in a.losses:
        p.error("--losses must include em (the primary loss)")
    tasks = [(pools[t], loss, a.runs, a.budget, a.seed, BUDGETS) for loss in a.losses
             for t in pools]
    if a.jobs > 1:
        with ProcessPoolExecutor(max_workers=a.jobs) as ex:
            results = list(ex.map(_run_one, tasks))
    else:
        results = [_run_one(t) for t in tasks]
    elapsed = time.perf_counter() - t0
    cmd = "python -m activetest.experiments.generative_report"
    if a.runs != 3000 or a.budget != 400:
        cmd += f" --runs {a.runs} --budget {a.budget}"
    path = write_report(results, a.out, elapsed=elapsed, command=cmd, pools=pools,
                        plots=not a.no_plots)
    print(f"wrote {path} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
