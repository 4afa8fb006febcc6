"""Two targets compared on the same labels: draws for the difference against draws for one.

On the cached full runs of the bundled models (``experiments/outputs/<dataset>.npz``:
every pool item scored, so the truth is known), pairs of targets are compared by the
paired difference of their error rates, ``R_A - R_B``, from the same labels:

* ``uniform``: uniform sampling without replacement;
* ``A's own``: the paper's accuracy acquisition for target A (``zero_one``: the
  surrogate's expected 0-1 loss of A, floored proposal 0.1), as a session created for A
  and asked ``estimate --compare B`` draws (a fixed proposal, for a like-for-like
  comparison);
* ``compare``: the ``compare`` acquisition (``init --acquisition compare --compare B``:
  ``sqrt`` of the surrogate's expected squared difference, 0 where A and B predict the
  same class; floored proposal 0.1), its scores raised as a session's are
  (``session.design.compare_scores``: every item where A and B can differ drawn at 0.6
  of the uniform rate or more, so that none stays unexplored; ``--raw-compare``: the
  raw scores, as sessions created before 2026-12-05).

Every estimate is LURE of the per-item difference (unbiased under each). Printed per pair
and budget: the mean squared error over the runs divided by uniform's (the same number
of runs, independent draws), and for the intervals a session shows for the difference
(the martingale-CLT fixed-budget 95% interval with the few-differences rule, whose
exact CS for ``compare`` bounds each draw by the items the proposal could draw, as
sessions created since 2026-12-05 do, widened by
the blind spot: for ``A's own`` every unexplored item bounded by 1, as a session that
only scored B on the labelled items must; for ``compare`` only the unexplored items where
A and B predict differently, and intersected with the sure bounds (the labelled
differences -+ the number of unlabelled items where they predict differently, over N),
as a session that scored B on the pool at creation does; for ``compare`` the variance of
each draw under the surrogate's model of the difference is a floor of the interval's, as
sessions that scored B on the pool at creation take since 2026-12-06,
``session.estimate.difference_floors``; ``--without-floor``: as before) their coverage
and median width.

``--metric log_loss``: the same for the log loss (``A's own``: the paper's CE
acquisition for A; ``compare``: the acquisition's log-loss score). Its intervals: the
CLT ones (no few-errors rule for the log loss); ``A's own`` is not widened (a session
that scored B on the labelled items only does not know B's log-loss bound on the pool),
``compare`` is widened for the unexplored items, each by the two targets' largest
log-probability difference there, and cut to the sure bounds.

Pairs: the same model with and without its 8 in-context examples, and the two bundled
models with theirs. Surrogate: the calibrated few-shot run of the model that is not A
(``few-cal``; for the cross pair A's own calibrated run). One seed per setting.

Run from the repository root (error rate: about 4 CPU-minutes at 1,000 runs; log loss:
about 2):
    python benchmarks/compare_design.py --runs 1000
    python benchmarks/compare_design.py --runs 1000 --metric log_loss
Results: docs/compare.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from activetest.experiments.outputs import DatasetOutputs  # noqa: E402
from activetest.session.design import compare_scores  # noqa: E402
from activetest.stats import (  # noqa: E402
    acquisition_scores,
    adaptive_lure_theta,
    sample,
)
from activetest.stats.betting import paired_difference_exact_cs  # noqa: E402
from activetest.stats.blindspot import BLIND_RATIO, blind_spot_curve  # noqa: E402
from activetest.stats.blindspot_replay import floored_proposals  # noqa: E402
from activetest.stats.estimators import adaptive_lure_weights  # noqa: E402
from activetest.stats.fewerrors import MIN_ERRORS, few_differences, switch_to_exact  # noqa: E402
from activetest.stats.intervals import fixed_interval_curve  # noqa: E402
from activetest.stats.model_floor import (  # noqa: E402
    class_losses,
    difference_moments,
    labelled_mean_floor,
)
from activetest.stats.proposal import floored_model_var, floored_weight_bound  # noqa: E402

OUTPUTS = ROOT / "experiments" / "outputs"
BUDGETS = (50, 100, 200)
FLOOR = 0.1
G, S = "gemma3-270m", "smollm2-135m"
#: (A, B, surrogate) per pair
PAIRS = ((f"{G}/few", f"{G}/zero", f"{S}/few-cal"),
         (f"{S}/few", f"{S}/zero", f"{G}/few-cal"),
         (f"{G}/few", f"{S}/few", f"{G}/few-cal"))


def _intervals(la: np.ndarray, lb: np.ndarray, idx: np.ndarray, q: np.ndarray,
               scores: np.ndarray | None, bound: np.ndarray | float | None, N: int,
               metric: str, model_var: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(R, K)`` fixed-budget interval of the difference as a session shows it: CLT;
    for the error rate the exact CS while fewer than 5 labels differ from the most common
    difference; widened by the blind spot with per-item bounds ``bound`` (None: not
    widened, the log loss of a model not known on the pool; uniform sampling: nothing is
    unexplored); a ``bound`` known per item also gives the sure bounds; ``model_var``
    (``(R, K)``): the floor of each draw's variance."""
    A, B = la[idx], lb[idx]
    d = A - B
    fi = fixed_interval_curve(adaptive_lure_theta(d, q, N), N, skew_widens_only=True,
                              model_var=model_var)
    lo, hi = fi.low, fi.high
    few = np.zeros(d.shape, dtype=bool)
    if metric == "error_rate":
        qf = 1.0 if scores is None else FLOOR / (1.0 + FLOOR)
        if scores is not None and isinstance(bound, np.ndarray):  # as a compare session
            W = np.stack([floored_weight_bound(scores, bound, r, FLOOR) for r in idx])
            rest = bound.sum() - np.cumsum(bound[idx], axis=1)
            ex = paired_difference_exact_cs(A, B, q, N, bound_a=1.0, bound_b=1.0,
                                            weight_bound=W, rest_bound=rest)
        else:
            ex = paired_difference_exact_cs(A, B, q, N, bound_a=1.0, bound_b=1.0, q_floor=qf)
        few = np.stack([few_differences(r, MIN_ERRORS) for r in d])
        lo, hi = switch_to_exact(lo, hi, ex.low, ex.high, few, intersect=False)
    if scores is not None and bound is not None:
        D = np.stack([blind_spot_curve(floored_proposals(scores, r, FLOOR), r, bound, N=N,
                                       ratio=BLIND_RATIO).widen_high for r in idx])
        D = np.where(few, 0.0, D)  # where the exact CS stands in nothing is widened
        lo, hi = lo - D, hi + D
    if metric == "error_rate":
        lo, hi = np.maximum(lo, -1.0), np.minimum(hi, 1.0)
    if isinstance(bound, np.ndarray):  # B known on the pool: the sure bounds, as sessions
        rest = bound.sum() - np.cumsum(bound[idx], axis=1)
        seen = np.cumsum(d, axis=1)
        s_lo, s_hi = (seen - rest) / N, (seen + rest) / N
        c_lo, c_hi = np.maximum(lo, s_lo), np.minimum(hi, s_hi)
        empty = c_lo > c_hi
        lo, hi = np.where(empty, s_lo, c_lo), np.where(empty, s_hi, c_hi)
    return lo, hi


def main(argv: list[str] | None = None) -> None:
    """Print the table (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--metric", choices=("error_rate", "log_loss"), default="error_rate")
    ap.add_argument("--raw-compare", action="store_true",
                    help="the compare design's raw scores sqrt(E[d^2]), not raised for "
                         "exploration as sessions created since 2026-12-05 do")
    ap.add_argument("--without-floor", action="store_true",
                    help="the compare design's difference without the variance floor of "
                         "the surrogate's model of it (as sessions before 2026-12-06)")
    ap.add_argument("--plot", type=Path, default=None,
                    help="also write a figure of the squared-error ratios at 100 labels")
    a = ap.parse_args(argv)
    log = a.metric == "log_loss"
    t0 = time.process_time()
    at = np.array(BUDGETS) - 1
    print(f"{a.runs} runs per design and setting, seed {a.seed}; floor {FLOOR}; "
          f"{a.metric.replace('_', ' ')}; nominal 0.95"
          f"{'; the difference without its variance floor' if a.without_floor else ''}.\n")
    head = " | ".join(f"MSE / uniform's at {m}: A's own; compare" for m in BUDGETS)
    print(f"| dataset | A vs B (surrogate) | A, B predict differently | R_A - R_B | {head} | "
          f"coverage at 50 / 100 / 200: uniform; A's own; compare | median width at 100: "
          f"uniform; A's own; compare |")
    print("|---|---|---|---|" + "---|" * len(BUDGETS) + "---|---|")
    ratios = []
    shown: list[tuple[str, float, float]] = []
    for path in sorted(OUTPUTS.glob("*.npz")):
        o = DatasetOutputs.load(path)
        y = np.asarray(o.pool_labels, dtype=np.int64)
        N = y.size
        for k, (ma, mb, ms) in enumerate(PAIRS):
            TA, TB, SS = o.outputs[ma].pool, o.outputs[mb].pool, o.outputs[ms].pool
            n = np.arange(N)
            la = -TA[n, y] if log else (TA.argmax(1) != y).astype(np.float64)
            lb = -TB[n, y] if log else (TB.argmax(1) != y).astype(np.float64)
            truth = float(la.mean() - lb.mean())
            differ = TA.argmax(1) != TB.argmax(1)
            if not (la != lb).any():
                print(f"| {o.dataset} | {ma} vs {mb} ({ms}) | {differ.mean():.0%} | 0 | the "
                      f"same losses on every item: any design's difference is exact |")
                continue
            own = acquisition_scores("ce" if log else "zero_one", surrogate_logprobs=SS,
                                     target_logprobs=TA)
            cmp_bound = np.abs(TA - TB).max(axis=1) if log else differ.astype(float)
            moments = difference_moments(SS, class_losses(a.metric, TA),
                                         class_losses(a.metric, TB))
            designs = {"uniform": (None, None),
                       "own": (own, None if log else 1.0),
                       "compare": (compare_scores(a.metric, SS, TA, TB, proposal_floor=FLOOR,
                                                  blind_ratio=None if a.raw_compare
                                                  else BLIND_RATIO), cmp_bound)}
            mse, cov, width = {}, {}, {}
            for j, (name, (scores, bound)) in enumerate(designs.items()):
                idx, q = sample(np.ones(N) if scores is None else scores, max(BUDGETS),
                                n_runs=a.runs, proposal_floor=1.0 if scores is None else FLOOR,
                                random_state=[a.seed, k, j, int.from_bytes(
                                    o.dataset.encode()[:4].ljust(4, b"\0"), "little")])
                d = la[idx] - lb[idx]
                th = adaptive_lure_theta(d, q, N)
                est = np.stack([(adaptive_lure_weights(N, m) * th[:, :m]).sum(axis=1)
                                for m in BUDGETS], axis=1)  # LURE after the first m
                mse[name] = ((est - truth) ** 2).mean(axis=0)
                V = None
                if name == "compare" and not a.without_floor:  # B known on the pool
                    h, x = moments
                    zero = np.zeros(N)
                    V = np.stack([labelled_mean_floor(
                        floored_model_var(scores, FLOOR, r, zero, x),
                        h.sum() - np.concatenate([[0.0], np.cumsum(h[r])[:-1]]),
                        la[r] - lb[r], qq, N, drawn_second=x[r],
                        prior_second=float(x.mean()))
                        for r, qq in zip(idx, q, strict=True)])
                lo, hi = _intervals(la, lb, idx, q, scores, bound, N, a.metric, V)
                tol = 1e-12  # a point interval at the truth, summed in another order
                cov[name] = ((lo[:, at] - tol <= truth) & (truth <= hi[:, at] + tol)).mean(0)
                width[name] = float(np.median(hi[:, at[1]] - lo[:, at[1]]))
            r = [(mse["own"][i] / mse["uniform"][i], mse["compare"][i] / mse["uniform"][i])
                 for i in range(len(BUDGETS))]
            ratios.append(r[1][1])
            shown.append((f"{o.dataset}: {_short(ma)} vs {_short(mb)}", r[1][0], r[1][1]))
            cells = " | ".join(f"{x:.2f}; **{z:.2f}**" for x, z in r)
            covs = "; ".join("/".join(f"{c:.2f}" for c in cov[n]) for n in designs)
            wid = "; ".join(f"{width[n]:.3f}" for n in designs)
            print(f"| {o.dataset} | {ma} vs {mb} ({ms}) | {differ.mean():.0%} | {truth:+.3f} | "
                  f"{cells} | {covs} | {wid} |")
    print(f"\nmedian over the {len(ratios)} settings of the compare design's MSE / uniform's at "
          f"100 labels: {np.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    print(f"({time.process_time() - t0:.0f} CPU-s)")
    if a.plot is not None:
        _plot(shown, a.plot, a.metric, a.runs)
        print(f"wrote {a.plot}")


def _short(model: str) -> str:
    """``gemma3-270m/few`` -> ``Gemma few``."""
    name, prompt = model.split("/")
    return f"{'Gemma' if name.startswith('gemma') else 'SmolLM2'} {prompt}"


def _plot(rows: list[tuple[str, float, float]], path: Path, metric: str, runs: int) -> None:
    """Write :func:`ratio_figure` to ``path``."""
    import matplotlib.pyplot as plt

    fig = ratio_figure(rows, metric, runs)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ratio_figure(rows: list[tuple[str, float, float]], metric: str, runs: int) -> Any:
    """A dot plot of each setting's mean squared error over uniform sampling's at 100
    labels: the first target's own acquisition and the compare design (log scale); the
    title names the estimate (LURE of R_A - R_B), the data and the runs, the legend the
    dashed line at 1 (QA: the title said neither what was estimated nor by what, and the
    line at 1 was in no legend)."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(rows, key=lambda r: r[2])
    floor = 0.005  # smaller ratios (the difference all but known) drawn at the axis' end
    fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 2.2), layout="constrained")
    y = np.arange(len(rows))
    ax.scatter([max(r[1], floor) for r in rows], y, marker="s", color="0.55",
               label="first target's own acquisition")
    ax.scatter([max(r[2], floor) for r in rows], y, marker="o", color="tab:blue",
               label="compare acquisition")
    ax.axvline(1.0, color="0.3", lw=1, ls="--", label="uniform sampling (= 1)")
    ax.set_xscale("log")
    ax.set_yticks(y, [r[0] for r in rows])
    ax.set_xlabel("mean squared error of the estimated R_A - R_B / uniform sampling's,\n"
                  "100 labels (left of 1: better)")
    what = "error rates" if metric == "error_rate" else "log losses"
    low = any(min(r[1:]) < floor for r in rows)
    fig.suptitle(f"Difference of two {what}, R_A - R_B, estimated by LURE\nthe bundled "
                 f"models' full runs on the five datasets' pools, {runs:,} runs per point"
                 + (f"\n(ratios below {floor} drawn at {floor})" if low else ""),
                 fontsize=10)
    xs = [max(v, floor) for r in rows for v in r[1:]]
    ticks = [v for v in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10)
             if min(xs) / 1.5 <= v <= max(xs) * 1.5]
    ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    fig.legend(loc="outside lower center", ncols=3, fontsize=8)
    return fig


if __name__ == "__main__":
    main()
