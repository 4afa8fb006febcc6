"""How good is the projection of the labels a session needs for a narrow anytime interval?

``estimate --target-width W`` (and ``status`` after it) says "the anytime interval
reaches width W at about K labels (a projection)"
(:func:`activetest.stats.projection.labels_for_cs_width`). This measures that number
against what the same run then needed: simulated runs of the design a session draws
with, on pools where every item's loss is known; at 30, 60 and 100 labels each run not
yet narrow enough projects its total, and the run goes on to the first budget at which
its CS (the session's: tuned to the planned budget ``default_budget(N)``, the design's
model variance as its SE floor) is at most W wide. Printed per group of pools: the
median over runs of projection / actual (and the 10th-90th percentiles), and the share
of runs whose projection was below what they needed, for both ways of guessing the
variance of the draws to come (``future="average"``: the average of the draws so far,
how it was; ``future="recent"``: the design's own model variance at its last draws,
the default).

Pools:

* ``bundled``: each bundled model the target of the other's few-shot surrogate on the
  five shared classification datasets (``experiments/outputs/*.npz``; loss = the
  target's argmax is wrong), drawn by the graded adaptive design of a harness session
  (:func:`activetest.session.design.graded_adaptive_design` over
  :func:`activetest.session.harness.choice_features`);
* each group also with uniform draws without replacement (no model: both ways guess
  the average of the draws so far; ``recent`` lets the skewness allowance fade);
* ``history``: held-out models of the two shared response matrices
  (``../shared/datasets/history``; skipped without it), drawn by the history design of
  sessions (history features + the neighbours' column).

``--bootstrap``: instead, the bootstrap interval's projection (``estimate --target-width``
prints it too: "a bootstrap 95% interval of width W needs about K labels"), on the
designs' runs: the bootstrap's width at budget M taken as its B -> inf limit
``2 z sd(t) / sqrt(M)`` (``t`` the reweighted terms at M, what the session resamples),
budgets on a grid of 5; projected by ``labels_for_width`` as it was (``1/sqrt(K)``
shrinkage) and with the design's variance ratio (``variance_ratio=``, how sessions run
it now).

``--cost``: instead, the CPU seconds of one projection at pool sizes 1e5-1e7 (a session
at 200 labels asking for width 0.01), in blocks of budgets growing fourfold (how it runs)
against every budget at once (how it ran), both in this run.

``--no-error-yet``: instead, uniform draws of rare errors (error rates 1-5%, N = 5,000)
whose first 30 or 60 labels show no error: every term is equal, and the projection
gives the draws to come the variance of a loss at 0 or 1 by Laplace's rule (since
2026-12-04; before, "narrow at the next label" whatever the width asked for).

Usage (CPU minutes; docs/projection.md)::

    nice -n 10 python benchmarks/cs_projection.py --runs 40 --width 0.1 --horizon 2200
    nice -n 10 python benchmarks/cs_projection.py --bootstrap --runs 20 --width 0.06 --horizon 1500
    python benchmarks/cs_projection.py --cost
    nice -n 10 python benchmarks/cs_projection.py --no-error-yet --runs 400
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import harness_runs as hr  # noqa: E402
from _cells import printed_ratio  # noqa: E402
from activetest.session.design import graded_adaptive_design  # noqa: E402
from activetest.stats.adaptive import simulate_design  # noqa: E402
from activetest.stats.confseq import asymptotic_cs, default_budget  # noqa: E402
from activetest.stats.estimators import adaptive_lure_theta  # noqa: E402
from activetest.stats.projection import labels_for_cs_width  # noqa: E402

CHECKPOINTS = (30, 60, 100)
#: The projections compared: (name, ``future``, clipped to [0, 1]).
WAYS = (("as it was: `average`, unclipped", "average", False),
        ("`recent`, unclipped", "recent", False),
        ("as sessions now: `recent`, clipped", "recent", True))


def pool_rows(p: hr.Pool, runs: int, width: float, horizon: int, seed: int,
              uniform: bool = False) -> list[tuple]:
    """``(checkpoint, projection by future..., actual stop)`` of every run of pool ``p``
    not yet narrow enough at the checkpoint (actual NaN: not narrow enough by ``horizon``);
    ``uniform``: uniform draws without replacement (no model) instead of the design."""
    N = p.loss.size
    K = min(horizon, N - 1)
    rng = np.random.default_rng([seed, zlib.crc32(p.name.encode()), 2 + uniform])
    if uniform:
        idx = np.stack([rng.permutation(N)[:K] for _ in range(runs)])
        q = np.broadcast_to(1.0 / (N - np.arange(K)), idx.shape)
        th = adaptive_lure_theta(p.loss[idx], q, N)
        model_var = np.full((runs, K), np.nan)
    else:
        design = (graded_adaptive_design(p.features) if p.prior is None
                  else hr.history_design(p, "features+neighbours"))
        d = simulate_design(design, losses=p.loss, labels=None, budget=K, n_runs=runs,
                            random_state=rng, model_var=True)
        th = adaptive_lure_theta(p.loss[d.indices], d.q, N, control=d.control,
                                 control_rest=d.control_rest)
        model_var = d.model_var
    budget = default_budget(N)
    out = []
    for r in range(runs):
        mv = None if uniform else model_var[r]
        cs = asymptotic_cs(th[r], N, model_var=mv, budget=budget, value_range=(0.0, 1.0))
        ok = np.flatnonzero(cs.width <= width)
        stop = float(ok[0] + 1) if ok.size else np.nan
        for k in CHECKPOINTS:
            if k >= K or stop <= k:
                continue
            proj = [labels_for_cs_width(th[r, :k], N, width, budget=budget, future=f,
                                        model_var=None if mv is None else mv[:k],
                                        value_range=(0.0, 1.0) if clip else None)
                    for _, f, clip in WAYS]
            out.append((k, *proj, stop))
    return out


def summary(rows: list[tuple], group: str) -> list[str]:
    """Markdown table rows of one group."""
    a = np.array(rows, dtype=np.float64)
    lines = []
    for k in CHECKPOINTS:
        s = a[a[:, 0] == k]
        if not len(s):
            continue
        fin = np.isfinite(s[:, -1])
        cells = []
        for j in range(len(WAYS)):
            rat = s[fin, 1 + j] / s[fin, -1]
            cells.append(f"{np.median(rat):.2f} ({np.percentile(rat, 10):.2f}-"
                         f"{np.percentile(rat, 90):.2f}); {np.mean(rat < 1):.0%}")
        lines.append(f"| {group} | {k} | {len(s)} | {fin.mean():.0%} | "
                     f"{np.median(s[fin, -1]):.0f} | " + " | ".join(cells) + " |")
    return lines


def bootstrap_rows(p: hr.Pool, runs: int, width: float, horizon: int, seed: int
                   ) -> list[tuple]:
    """``(checkpoint, projection as it was, as it is, actual)`` of the bootstrap's width."""
    from activetest.stats import BootstrapResult, labels_for_width
    from activetest.stats.estimators import adaptive_lure_weights
    from activetest.stats.projection import future_variance_ratio

    N = p.loss.size
    K = min(horizon, N - 1)
    design = (graded_adaptive_design(p.features) if p.prior is None
              else hr.history_design(p, "features+neighbours"))
    rng = np.random.default_rng([seed, zlib.crc32(p.name.encode()), 2])
    d = simulate_design(design, losses=p.loss, labels=None, budget=K, n_runs=runs,
                        random_state=rng, model_var=True)
    th = adaptive_lure_theta(p.loss[d.indices], d.q, N, control=d.control,
                             control_rest=d.control_rest)
    z = 1.959963984540054
    grid = np.arange(10, K + 1, 5)
    out = []
    for r in range(runs):
        widths = np.array([2 * z * (M * adaptive_lure_weights(N, M) * th[r, :M]).std(ddof=1)
                           / np.sqrt(M) for M in grid])
        ok = np.flatnonzero(widths <= width)
        stop = float(grid[ok[0]]) if ok.size else np.nan
        for k in CHECKPOINTS:
            if k >= K or stop <= k:
                continue
            w = float(widths[np.searchsorted(grid, k)])
            res = BootstrapResult(0.0, w / (2 * z), -w / 2, w / 2, 0.95, "normal", k)
            ratio = future_variance_ratio(th[r, :k], N, model_var=d.model_var[r, :k])
            out.append((k, labels_for_width(res, width),
                        labels_for_width(res, width, variance_ratio=ratio), stop))
    return out


def cost() -> None:
    """Print the CPU seconds of one projection, in blocks and at once (``--cost``)."""
    from activetest.stats.intervals import moment_curves
    from activetest.stats.projection import _projected_widths

    rng = np.random.default_rng(0)
    print("| pool size N | labels projected | in blocks (CPU-s) | every budget at once "
          "(CPU-s) | ratio |")
    print("|---|---|---|---|---|")
    for N in (10**5, 10**6, 10**7):
        th = rng.normal(0.3, 0.5, 200)
        mv = np.full(200, 0.2) * N * N
        reps = 5
        t0 = time.process_time()
        for _ in range(reps):
            got = labels_for_cs_width(th, N, 0.01, budget=400, model_var=mv,
                                      value_range=(0.0, 1.0))
        blocks = (time.process_time() - t0) / reps
        est, se, gam, df = (float(x[-1]) for x in moment_curves(th, N, mv))
        M = th.size
        W_M = M / (N - M)
        cs = asymptotic_cs(th, N, model_var=mv, budget=400)
        t0 = time.process_time()
        for _ in range(reps):
            fm = np.arange(M + 1, N)
            per = mv[-5:] / ((N - np.arange(M - 4, M + 1)) * (N - np.arange(M - 4, M + 1) + 1.0))
            w = _projected_widths(fm, N, N - 1, est=est, se=se, gam=gam, df=df, M=M,
                                  V_now=se**2 * W_M**2, s2=float(per.mean()), alpha=0.05,
                                  planned_labels=200, budget=400, future="recent",
                                  cs_now=(float(cs.low[-1]), float(cs.high[-1])),
                                  value_range=(0.0, 1.0))
            once = int(fm[np.flatnonzero(w <= 0.01)[0]])
        at_once = (time.process_time() - t0) / reps
        assert once == got, (once, got)
        r = printed_ratio(at_once, blocks, digits=3)  # of the two cells as printed
        print(f"| {N:,} | {got:,} | {blocks:.3f} | {at_once:.3f} | "
              + ("- |" if r is None else f"{_ratio(r)}x |"))


def _ratio(r: float) -> str:
    """A ratio as written: two significant digits below 10 (0.76 printed as "1" read as
    no difference), whole numbers above."""
    return f"{r:.2g}" if r < 10 else f"{r:.0f}"


def no_error_yet(runs: int, seed: int) -> None:
    """Print the projection for runs whose first labels show no error (``--no-error-yet``)."""
    from activetest.stats import sample

    N, horizon = 5000, 4000
    print(f"Uniform draws (N = {N:,}, {runs} runs per error rate, seed {seed}) whose first "
          "k labels show no error: projection / the labels the same run needed (median, "
          "10th-90th percentile; share below); CS tuned to 400 labels, clipped to [0, 1]. "
          "Before: k + 1 every time.\n")
    print("| error rate | first k labels without an error | such runs | width | labels "
          "needed (median) | projection / needed |")
    print("|---|---|---|---|---|---|")
    for e, rate in enumerate((0.01, 0.02, 0.05)):
        rng = np.random.default_rng([seed, e])
        L = (rng.random(N) < rate).astype(np.float64)
        idx, q = sample(np.ones(N), horizon, n_runs=runs, random_state=seed + e)
        th = adaptive_lure_theta(L[idx], q, N)
        for k in (30, 60):
            quiet = [r for r in range(runs) if not L[idx[r, :k]].any()]
            for w in (0.02, 0.05):
                rat, need = [], []
                for r in quiet:
                    cs = asymptotic_cs(th[r], N, budget=400, value_range=(0.0, 1.0))
                    ok = np.flatnonzero(cs.width <= w)
                    if not ok.size:
                        continue
                    proj = labels_for_cs_width(th[r, :k], N, w, budget=400,
                                               value_range=(0.0, 1.0))
                    need.append(ok[0] + 1)
                    rat.append(proj / need[-1])
                rat = np.asarray(rat)
                print(f"| {rate:.0%} ({int(L.sum())} errors) | {k} | {len(quiet)} | {w:g} | "
                      f"{np.median(need):.0f} | {np.median(rat):.2f} "
                      f"({np.percentile(rat, 10):.2f}-{np.percentile(rat, 90):.2f}); "
                      f"{np.mean(rat < 1):.0%} |")


def main(argv: list[str] | None = None) -> None:
    """Print the table (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="runs per pool")
    ap.add_argument("--width", type=float, default=0.1, help="the CS width asked for")
    ap.add_argument("--horizon", type=int, default=600, help="labels a run may go to")
    ap.add_argument("--held-out", type=int, default=3, help="held-out models per matrix")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cost", action="store_true", help="time one projection instead")
    ap.add_argument("--bootstrap", action="store_true",
                    help="the bootstrap interval's projection instead")
    ap.add_argument("--no-error-yet", action="store_true",
                    help="runs whose first labels show no error, instead")
    a = ap.parse_args(argv)
    t0 = time.process_time()
    if a.no_error_yet:
        no_error_yet(a.runs, a.seed)
        print(f"\n({time.process_time() - t0:.0f} CPU-s)")
        return
    if a.cost:
        cost()
        return
    if a.bootstrap:
        groups = {"bundled": hr.bundled_pools()}
        if hr.HISTORY.is_dir():
            groups["history"] = hr.history_pools(a.held_out, a.seed)
        print(f"Projection of the labels to a bootstrap interval (normal, B -> inf) of width "
              f"{a.width:g}: projection / the labels the same run needed (median over runs, "
              f"10th-90th percentile; share below). {a.runs} runs per pool, up to "
              f"{a.horizon} labels; seed {a.seed}.\n")
        print("| pools | at labels | runs not yet narrow | labels needed (median) | as it was: "
              "1/sqrt(K) | as sessions now: the design's variance ratio |")
        print("|---|---|---|---|---|---|")
        for name, pools in groups.items():
            rows = np.array([row for p in pools
                             for row in bootstrap_rows(p, a.runs, a.width, a.horizon, a.seed)],
                            dtype=np.float64)
            for k in CHECKPOINTS:
                s = rows[rows[:, 0] == k]
                fin = np.isfinite(s[:, -1])
                cells = []
                for j in (1, 2):
                    rat = s[fin, j] / s[fin, -1]
                    cells.append(f"{np.median(rat):.2f} ({np.percentile(rat, 10):.2f}-"
                                 f"{np.percentile(rat, 90):.2f}); {np.mean(rat < 1):.0%}")
                print(f"| {name} ({len(pools)}), the design | {k} | {len(s)} | "
                      f"{np.median(s[fin, -1]):.0f} | " + " | ".join(cells) + " |")
        print(f"\n({time.process_time() - t0:.0f} CPU-s)")
        return
    groups = {"bundled": hr.bundled_pools()}
    if hr.HISTORY.is_dir():
        groups["history"] = hr.history_pools(a.held_out, a.seed)
    print(f"Projection of the labels to an anytime (asymptotic CS, tuned to the planned "
          f"budget) width of {a.width:g}: projection / the labels the same run needed "
          f"(median over runs, 10th-90th percentile; share of runs projected below what "
          f"they needed). {a.runs} runs per pool, up to {a.horizon} labels; seed {a.seed}.\n")
    print("| pools | at labels | runs not yet narrow | narrow by the horizon | labels "
          "needed (median) | " + " | ".join(w[0] for w in WAYS) + " |")
    print("|---|---|---|---|---|" + "---|" * len(WAYS))
    for name, pools in groups.items():
        rows = [row for p in pools for row in pool_rows(p, a.runs, a.width, a.horizon, a.seed)]
        for line in summary(rows, f"{name} ({len(pools)}), the design"):
            print(line)
        rows = [row for p in pools
                for row in pool_rows(p, a.runs, a.width, a.horizon, a.seed, uniform=True)]
        for line in summary(rows, f"{name} ({len(pools)}), uniform"):
            print(line)
    print(f"\n({time.process_time() - t0:.0f} CPU-s)")


if __name__ == "__main__":
    main()
