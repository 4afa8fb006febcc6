"""Coverage of intervals and confidence sequences on the cached outputs -> ``docs/intervals.md``.

Usage::

    python -m activetest.experiments coverage --outputs experiments/outputs --out docs

For every dataset and setting of :func:`activetest.experiments.paper.settings_for`
and every method of :data:`METHODS`, draw R runs of M labels and measure, against
the pool risk (what the estimators are unbiased for) and the test-set truth:

* fixed-budget coverage at every budget 10..M: the paper's bootstrap (the
  B -> inf limit of resampling the reweighted losses, ``sd^2 = var(terms)/M``)
  and the martingale-CLT interval of :mod:`activetest.stats.intervals`;
* time-uniform coverage: the share of runs whose CS (asymptotic, exact)
  contains the pool risk at every budget at once;
* optional stopping: stop at the first budget >= 30 where the width is at most W
  (W = the median bootstrap width at 100 labels, fixed per setting before
  looking at any run's coverage); the share of stopped intervals that cover;
* the width cost of anytime validity (CS width / fixed width at 100 and M).

The measurements are in :mod:`activetest.experiments.coverage_runs` (every name
re-exported here). A method is a function ``Context -> Terms`` (per-run, per-draw theta_m and the
inputs of the bootstrap and of the exact anytime CS); adding one is one line in
:data:`METHODS`.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from activetest.experiments.coverage_figures import (
    BandCurves,
    CoverageCurves,
    plot_band,
    plot_coverage_figures,
)
from activetest.experiments.coverage_runs import (
    METHODS,
    STOP_FROM,
    Context,
    PairedCoverage,
    SettingCoverage,
    Terms,
    adaptive_cv_lure,
    ce_lure,
    evaluate,
    gap_sd,
    lure_bootstrap_sd,
    paired_pairs,
    run_paired,
    run_setting_coverage,
    theta_bootstrap_sd,
)
from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import Setting, settings_for
from activetest.stats import log_loss
from activetest.stats.betting import exact_cs
from activetest.stats.confseq import MIN_LABELS, asymptotic_cs
from activetest.stats.intervals import fixed_interval_curve

__all__ = ["ASYMPTOTIC_CS", "EXACT_CS", "FIXED_INTERVAL", "METHODS", "Context", "PairedCoverage",
           "SettingCoverage", "Terms", "adaptive_cv_lure", "band_curves", "coverage_study",
           "evaluate", "lure_bootstrap_sd", "run_paired", "table_name", "theta_bootstrap_sd"]


# ---------------------------------------------------------------- the write-up


def _f(x: float, d: int = 3) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{x:.{d}f}"


def _pooled(rows: list[SettingCoverage], attr: str, key: str) -> np.ndarray:
    return np.mean([getattr(r, attr)[key] for r in rows if key in getattr(r, attr)], axis=0)


def band_curves(data: DatasetOutputs, setting: Setting, budget: int, seed: int
                ) -> BandCurves:
    """One seeded run of CE + LURE (log loss) on ``setting``: its estimate, fixed-budget
    interval, both CSs, the pool risk and the test-set truth at every label count
    ``1..budget`` (what ``cs_band.png`` draws; :func:`~activetest.experiments.
    coverage_figures.plot_band`)."""
    tgt, sur = data.outputs[setting.target], data.outputs[setting.surrogate]
    ctx = Context(tgt.pool, sur.pool, data.pool_labels, "log", 1, budget, seed)
    t = ce_lure(ctx)
    N = ctx.N
    mart = fixed_interval_curve(t.theta, N)
    asym = asymptotic_cs(t.theta, N)
    ex = exact_cs(grid_size=4001, **{k: (v[0] if isinstance(v, np.ndarray) and v.ndim == 2
                                         else v) for k, v in (t.exact or {}).items()})
    test = None if data.pool_is_truth else float(log_loss(tgt.test, data.test_labels).mean())
    return BandCurves(dataset=setting.dataset, target=setting.target,
                      surrogate=setting.surrogate, seed=seed, pool_size=N,
                      estimate=mart.estimate[0],
                      fixed_low=mart.low[0], fixed_high=mart.high[0],
                      anytime_low=asym.low[0], anytime_high=asym.high[0],
                      exact_low=np.asarray(ex.low), exact_high=np.asarray(ex.high),
                      claimed_from=MIN_LABELS, pool_risk=float(ctx.per_item.mean()),
                      test_truth=test)


def coverage_study(outputs_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str], *,
                   n_runs: int = 3000, budget: int = 400, exact_runs: int = 1000,
                   losses: Sequence[str] = ("log", "zero_one"),
                   methods: Sequence[str] = tuple(METHODS), datasets: Sequence[str] | None = None,
                   seed: int = 0, progress: bool = True,
                   cache: str | os.PathLike[str] | None = None) -> Path:
    """Run the study on every cached dataset and write ``intervals.md`` and its PNGs.

    ``cache``: a pickle of the measurements; read if it exists (to re-render the
    page without re-running), written otherwise. It holds only arrays and names.
    """
    outputs_dir, out_dir = Path(outputs_dir), Path(out_dir)
    files = sorted(outputs_dir.glob("*.npz"))
    if datasets:
        files = [f for f in files if f.stem in set(datasets)]
    if not files:
        raise FileNotFoundError(f"no cached outputs (*.npz) in {outputs_dir}")
    img = out_dir / "intervals"
    img.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows: list[SettingCoverage] = []
    first: tuple[DatasetOutputs, Setting] | None = None
    seconds = None
    paired: list[PairedCoverage] = []
    if cache is not None and Path(cache).exists():
        with open(cache, "rb") as fh:
            rows, paired, seconds = pickle.load(fh)
    for f in files:
        data = DatasetOutputs.load(f)
        for setting in settings_for(data):
            if first is None or (data.dataset == "sst2" and first[0].dataset != "sst2"):
                first = (data, setting)  # the example run: SST-2 (it has a test set) if there
            for loss in losses if seconds is None else ():
                if progress:
                    print(f"  {data.dataset}: {setting.label} ({loss})", flush=True)
                rows += run_setting_coverage(data, setting, loss=loss, n_runs=n_runs,
                                             budget=budget, exact_runs=exact_runs, seed=seed,
                                             methods=methods)
        for a, b, sur in paired_pairs(data) if seconds is None else ():
            if progress:
                print(f"  {data.dataset}: {a} - {b} (paired, surrogate {sur})", flush=True)
            paired.append(run_paired(data, a, b, sur, n_runs=n_runs, budget=budget,
                                     exact_runs=exact_runs, seed=seed))
    for f in files:  # cheap, and filled in for cached measurements too
        data = DatasetOutputs.load(f)
        for r in rows:
            if r.setting.dataset == data.dataset:
                r.gap_sd = gap_sd(data, r.setting, r.loss)
    if seconds is None:
        seconds = time.perf_counter() - t0
        if cache is not None:
            with open(cache, "wb") as fh:
                pickle.dump((rows, paired, seconds), fh)
    K = min(budget, min(r.fixed["martingale"].shape[0] for r in rows))
    lines = _write_up(rows, K, n_runs=n_runs, exact_runs=exact_runs, losses=losses,
                      methods=methods, seconds=seconds, outputs_dir=outputs_dir)
    main = [r for r in rows if r.method == "ce+lure" and r.loss == "log"] or rows
    plot_coverage_figures(CoverageCurves.pool(main, K, STOP_FROM), img)
    if first is not None:
        plot_band(band_curves(*first, K, seed), img)
    lines += _paired_section(paired, K)
    if first is not None:
        lines += _speed(*first, n_runs=n_runs, budget=K, exact_runs=exact_runs, seed=seed)
    path = out_dir / "intervals.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _speed(data: DatasetOutputs, setting: Setting, *, n_runs: int, budget: int,
           exact_runs: int, seed: int) -> list[str]:
    """Wall time of the interval computations on one setting's runs (this machine)."""
    tgt, sur = data.outputs[setting.target], data.outputs[setting.surrogate]
    ctx = Context(tgt.pool, sur.pool, data.pool_labels, "log", n_runs, budget, seed)
    t = ce_lure(ctx)
    t0 = time.perf_counter()
    fixed_interval_curve(t.theta, ctx.N)
    t1 = time.perf_counter()
    asymptotic_cs(t.theta, ctx.N)
    t2 = time.perf_counter()
    n_ex = max(1, min(exact_runs, n_runs))
    kw = {k: (v[:n_ex] if isinstance(v, np.ndarray) and v.ndim == 2 else v)
          for k, v in (t.exact or {}).items()}
    exact_cs(grid_size=512, **kw)
    t3 = time.perf_counter()
    return ["## Speed", "",
            f"On this machine (one thread), for {n_runs:,} runs x {budget} budgets of a pool of "
            f"{ctx.N:,}: the fixed interval at every budget {t1 - t0:.2f} s, the {ASYMPTOTIC_CS} "
            f"{t2 - t1:.2f} s (both O(R K), cumulative sums), the {EXACT_CS} for {n_ex:,} runs "
            f"{t3 - t2:.2f} s (numba, O(R K G) on a 512-point grid per run). One session's "
            "single run is instant.", ""]


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else float("nan")


def _table(header: Sequence[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *["| " + " | ".join(r) + " |" for r in body]]


def _by_dataset(rows: list[SettingCoverage], dsets: Sequence[str]
                ) -> Iterator[tuple[str, list[SettingCoverage]]]:
    """``(dataset, its rows)`` for each of ``dsets``, then ``("all", rows)``; groups
    without rows are left out."""
    for ds in [*dsets, "all"]:
        rs = rows if ds == "all" else [r for r in rows if r.setting.dataset == ds]
        if rs:
            yield ds, rs


def _dataset_table(rows: list[SettingCoverage], dsets: Sequence[str], keys: Sequence[str],
                   cell: Callable[[list[SettingCoverage], str], str]) -> list[str]:
    """A table with a row per dataset (:func:`_by_dataset`) and a column per key:
    ``cell(the dataset's rows, key)``."""
    return _table(["dataset", *map(table_name, keys)],
                  [[ds, *(cell(rs, k) for k in keys)] for ds, rs in _by_dataset(rows, dsets)])


#: What the page calls the study's ``asymptotic CS`` and ``exact CS``: the product's
#: anytime and exact anytime confidence sequences (:mod:`activetest.session.interval_names`;
#: the figures say "anytime 95% confidence sequence (asymptotic)").
ASYMPTOTIC_CS = "anytime CS (asymptotic)"
EXACT_CS = "exact anytime CS"
#: What the page calls the study's ``martingale`` interval (the product's fixed-budget one).
FIXED_INTERVAL = "fixed-budget interval"


def table_name(key: str) -> str:
    """What the page's tables call one of the study's intervals: the product's name
    (:mod:`activetest.session.interval_names`), e.g. the study's ``martingale`` rows are
    the "fixed-budget interval" (QA: the tables said "martingale", "martingale (pool)",
    "martingale width" where figures, CLI and sessions say fixed-budget interval), its
    ``asymptotic CS (from 30)`` the "anytime CS (asymptotic, from 30)" and its
    ``exact CS`` the "exact anytime CS" (QA: ``"asymptotic CS"`` / ``"exact CS"`` where status,
    estimate and the figures say anytime / exact anytime). The study's own keys (and so
    its cache) are unchanged."""
    name = (key.replace("martingale", FIXED_INTERVAL)
            .replace("asymptotic CS", ASYMPTOTIC_CS).replace("exact CS", EXACT_CS))
    return name.replace(") (", ", ")


def _write_up(rows: list[SettingCoverage], K: int, *, n_runs: int, exact_runs: int,
              losses: Sequence[str], methods: Sequence[str], seconds: float,
              outputs_dir: Path) -> list[str]:
    """The markdown page: tables computed from ``rows``; the prose states the method."""
    def sel(method: str, loss: str) -> list[SettingCoverage]:
        return [r for r in rows if r.method == method and r.loss == loss]

    main = sel("ce+lure", "log")
    dsets = list(dict.fromkeys(r.setting.dataset for r in main))
    lines = [
        "# Intervals you can stop on: coverage on the bundled outputs", "",
        f"Generated by `python -m activetest.experiments coverage` in {seconds:.0f} s from "
        f"`{outputs_dir}`: every setting of docs/reproduction.md (each target zero-/few-shot "
        f"with each few-shot surrogate), {n_runs:,} runs of {K} labels per setting, the "
        "paper's floored proposal (proposal floor 0.1), seed fixed, nothing tuned on the truth. "
        f"The {EXACT_CS} is computed on the first {exact_runs:,} runs of each setting. "
        "Methods: " + ", ".join(f"`{m}`" for m in methods) + "; losses: "
        + ", ".join(f"`{x}`" for x in losses) + ". The math is in the docstrings of "
        "`activetest.stats.intervals` and `activetest.stats.confseq`.", "",
        *_sessions_since(),
        *_recommendation(),
        *_goals(main, K),
        "## Fixed-budget coverage of the pool risk", "",
        "Share of runs whose 95% interval contains the pool risk at a budget fixed in "
        "advance; pooled over the settings of each dataset (CE + LURE, log loss). "
        "`bootstrap` is the paper's recipe (resample the reweighted losses; here its "
        "B -> inf limit, which the B = 1,000 version matches within ~2% in sd) at "
        "+-1.96 sd; the `fixed-budget interval` is `fixed_interval_curve` (martingale-CLT "
        "SE with the finite-population factor, Hall's skewness correction, Student quantiles); "
        "`plain z` is the same SE with +-1.96. The last column is the worst single "
        "setting's minimum over budgets >= 30 (binomial sd "
        f"{np.sqrt(0.95 * 0.05 / n_runs):.3f} per budget and setting at {n_runs:,} runs, so "
        "a setting's minimum over hundreds of budgets sits ~3 sd below its coverage).", "",
    ]
    lines += _fixed_table(main, dsets, K)
    lines += ["", "![coverage by budget](intervals/coverage_by_budget.png)", "",
              f"*The figure: the table's rows at every budget 10..{K} (CE + LURE, log loss, "
              "95%); solid black: the nominal 0.95, dashed: the "
              "goal 0.94 from 30 labels. " + _FIGURE_COMMANDS + "*", "",
              "Why the corrections: inverse-probability terms are right-skewed (a rare "
              "item with a small q and a large loss); the runs that have not met one yet have "
              "a low estimate *and* a low SE, so the symmetric interval misses almost only "
              "on one side at small budgets (HS: items with near-zero loss and a few large "
              "ones). The bootstrap has the same problem there and, lacking the factor "
              "1 - M/N, over-covers at large budgets.", ""]
    lines += _other_methods(rows, methods, losses, K)
    lines += _uniform_section(main, dsets)
    lines += _stopping_section(main, dsets)
    lines += _width_section(main, dsets, K)
    lines += _test_truth_section(main, dsets, K)
    lines += _error_rate_section(sel("ce+lure", "zero_one"), dsets, K) if "zero_one" in losses \
        else []
    adaptive = sel("adaptive+cv_lure", "log")
    if adaptive:
        lines += _adaptive_section(adaptive, rows, dsets, K)
    lines += _notes()
    return lines


def _fixed_table(main: list[SettingCoverage], dsets: Sequence[str], K: int) -> list[str]:
    """Fixed-budget coverage by dataset and interval, at a few budgets and at worst."""
    b30 = STOP_FROM - 1
    body = []
    cols = sorted({b for b in (10, 30, 100, K) if b <= K})
    keys = [k for k in ("bootstrap", "martingale", "martingale (observed SE only)",
                        "martingale (plain z)") if all(k in r.fixed for r in main)]
    for ds, rs in _by_dataset(main, dsets):
        for key in keys:
            c = _pooled(rs, "fixed", key)
            worst = min(float(r.fixed[key][b30:].min()) for r in rs)
            body.append([ds, table_name(key), *(_f(c[b - 1]) for b in cols),
                         _f(float(c[b30:].min())), _f(worst)])
    return _table(["dataset", "interval", *map(str, cols), "min over >= 30",
                   "worst setting, min >= 30"], body)


def _adaptive_section(adaptive: list[SettingCoverage], rows: list[SettingCoverage],
                      dsets: Sequence[str], K: int) -> list[str]:
    """The same study for ADAPTIVE.md's design, which sessions use by default."""
    lines = [
        "## The adaptive design (the sessions' default)", "",
        "ADAPTIVE.md's calibrated-residual design (`adaptive+cv_lure`: refitted proposal "
        "mixed with at least 10% of the uniform, learnt control, estimate "
        "R_M = sum_m c_m theta_m) on the same settings and seeds; its theta_m go into the "
        "same fixed interval and CS (the bootstrap resamples its terms t_m = M c_m "
        "theta_m). Its residuals L - g are small on most items and large on a few "
        "surprises drawn at the uniform share, so a run that has not met them has a low "
        "estimate and a low SE at once (the studentized statistic has a heavy left tail). "
        "Its intervals therefore take the design's own prediction of each term's variance "
        "as a floor (`model_var=`, the `activetest.stats.intervals` docstring): SE = "
        "max(observed, model), asymptotically conservative; sessions do the same. The "
        "rows marked 'observed SE only' show the intervals without it. The same goals, "
        "measured for it:", "",
        *_goals(adaptive, K, "the adaptive design", heading="###"),
    ]
    lines += ["Fixed-budget coverage of the pool risk (adaptive design, log loss):", "",
              *_fixed_table(adaptive, dsets, K), ""]
    ce = {(r.setting.dataset, r.setting.label): r for r in rows
          if r.method == "ce+lure" and r.loss == "log"}
    body = []
    for ds, rs in _by_dataset(adaptive, dsets):
        tu = _mean([r.uniform["asymptotic CS (from 30)"] for r in rs])
        tu_obs = _mean([r.uniform.get("asymptotic CS, observed SE only (from 30)", np.nan)
                        for r in rs])
        stop = _mean([r.stopping["asymptotic CS"][0] for r in rs])
        boot = _mean([r.stopping["bootstrap"][0] for r in rs])
        ratio = float(np.median([r.ratios["asymptotic CS / martingale"][1] for r in rs]))
        rel = [r.widths["martingale"][1] / ce[(r.setting.dataset, r.setting.label)]
               .widths["martingale"][1] for r in rs
               if (r.setting.dataset, r.setting.label) in ce]
        body.append([ds, _f(tu), _f(tu_obs), _f(stop), _f(boot), _f(ratio, 2),
                     _f(float(np.median(rel)), 2) if rel else "n/a"])
    lines += ["Time-uniform coverage (with and without the design's variance floor), "
              f"coverage at the optional stop ({ASYMPTOTIC_CS} and bootstrap), the "
              f"{ASYMPTOTIC_CS} / {FIXED_INTERVAL} width ratio at {K} labels, and the adaptive "
              f"design's {FIXED_INTERVAL} width at {K} labels relative to CE + LURE's (median "
              "over settings; "
              "below 1: the design's intervals are narrower for the same labels):", "",
              *_table(["dataset", f"{ASYMPTOTIC_CS} time-uniform", "observed SE only",
                       f"{ASYMPTOTIC_CS} at stop", "bootstrap at stop",
                       f"{ASYMPTOTIC_CS} / {FIXED_INTERVAL} at {K}",
                       f"{FIXED_INTERVAL} width vs CE at {K}"], body),
              ""]
    return lines


def _sessions_since() -> list[str]:
    """What sessions do beyond the study (the page said it by hand, so a re-run of the
    study dropped it): the few-errors rule, the blind spot, the exact anytime CS's bounds."""
    return [
        "Sessions created since issue 20 also tune the anytime CS to their planned budget and "
        "widen both intervals for their blind spot (items drawn far below the uniform rate and "
        "never drawn), and show the error rate's exact confidence sequence in place of both CLT "
        "intervals until 5 errors and 5 correct items are labelled (and, for graded judgments "
        "with partial credit, 5 labels away from the most common level; the few-errors rule, "
        "`clt_min_errors`): [robustness.md](robustness.md). An adaptive design's exact anytime CS "
        "bets, "
        "in sessions created since 2026-12-06 (config `exact_share`), with each draw bounded by "
        "the share of the uniform the design recorded at that draw (1 while it still draws "
        "uniformly: every remaining item then has probability at least `share / (N - m + 1)`, "
        "known before the draw), not by the least share any draw may have (0.1), which bet as "
        "if each item could weigh 10 times what it could: a 99%-accurate target with no error "
        "in 200 labels of 2,000 got [0, 0.341] from the default design beside uniform "
        "sampling's [0, 0.034]; now [0, 0.034] from both (`tests/session/test_few_errors.py`; "
        "the bound is checked draw by draw on every design's replayed proposals in "
        "`tests/stats/test_blindspot.py`). Older files keep the least share and their numbers. "
        "Once the design leaves the uniform it mixes in only 10% of it, yet its proposal gives "
        "every item it could draw several times that share (the spread it predicts is never "
        "near zero on most pools): sessions created since 2026-12-06 (later that day; config "
        "`exact_least`) bound each draw by the least probability its proposal gave any "
        "remaining item, `min_{S_m} q_m(i)`, which is known before the draw as the share is "
        "(the proposal is a function of the earlier labels), so the CS stays exact; the blind "
        "spot's pass replays the design draw by draw anyway and computes that minimum in the "
        "same loop, keeping it in its stored state, so it costs nothing at pool scale. The "
        "bound is the larger of the two (each holds). On a target wrong on 6% of 2,000 items, "
        "after 200 labels of the default design: the exact anytime CS [0.007, 0.180] by the share, "
        "[0.007, 0.108] by the least proposal (`tests/session/test_few_errors.py`, which "
        "computes both by hand from the design's replayed proposals; the pass's minimum is "
        "checked against them draw by draw, from the first draw and continued from its state, "
        "in `tests/stats/test_blindspot.py`). Older files keep the share's bound and their "
        "numbers; a stored pass state from before it is not continued (the next estimate "
        "replays from the first draw once).", "",
    ]


def _recommendation() -> list[str]:
    return [
        "## What sessions should show", "",
        "- **Default: the fixed-budget interval and the anytime CS (asymptotic) "
        "side by side**, both from the per-draw theta_m (`fixed_interval(theta, N)` and "
        "`asymptotic_cs(theta, N)`; theta from LURE, CV-LURE or the adaptive design). The "
        "fixed interval is the honest answer when the budget was set in advance; the CS is "
        "the one to read when the person decides when to stop by looking (which is what "
        "`status` and `--target-width` invite): it covers at every budget at once, so any "
        "stopping rule keeps its 95%. Both are asymptotic and are claimed from 30 labels on "
        "(or once every pool item is labelled, a census of a pool smaller than that: the "
        "pool's value is then known exactly and the CS is that point, shown as such). "
        "With an adaptive design both take the design's own prediction of each term's "
        "variance as a floor for the SE (`model_var=`; see the adaptive design's section).",
        "- **Instead of the bootstrap**: same cost, a justification (martingale CLT under the "
        "sequential, adaptive, without-replacement design), the finite-population factor "
        "(the bootstrap over-covers the pool risk as M/N grows and under-covers where the "
        "terms are skewed), and the same per-draw terms for every estimator.",
        "- **The exact anytime CS** (`exact_cs`, for a loss with a known bound) on request, "
        "labelled as the guarantee: it holds for every pool and every design, with no asymptotics, "
        "but its upper end pays for the proposal floor (items drawn at 1/11 of the uniform "
        "rate could hide large losses), so it is many times wider.",
        "- `labels_for_cs_width(theta, N, W)` projects when the anytime CS (asymptotic) will "
        "be W wide (labelled a projection: the CS's own formula at later budgets, with the "
        "variance of the design as it is now, its skewness allowance fading; measured "
        "against what simulated runs then needed in [projection.md](projection.md)); "
        "stopping when the *observed* CS is narrow enough is what is valid.",
        "- **A stop reads one CS**: `estimate --target-width`, `status` and `inspect`'s stop "
        "read the CS the outputs show (the anytime CS (asymptotic), or the exact anytime CS "
        "where it stands in "
        "while the labels show few errors, `stats/fewerrors.py`), never whichever of the "
        "asymptotic and the exact anytime CS is narrower at the moment: a choice between two "
        "confidence "
        "sequences made after seeing them covers at 1 - 2 alpha by the union bound, not 1 - "
        "alpha. So before 30 labels, a session whose labels show enough errors for the CLT is "
        "not told to stop on an exact anytime CS that is already narrower than the width asked "
        "(`exact_low`/`exact_high` are in the JSON; a user who commits to the exact anytime CS in "
        "advance may stop on it alone).",
        "- Paired comparison of two targets on the same draws: "
        "`paired_difference_cs(theta_a, theta_b, N)`; `high < 0` at any budget means A has "
        "the lower risk, anytime (exact: `paired_difference_exact_cs`).",
        "- **Cut to what the labels make sure** (sessions created since 2026-12-06, which "
        "record `sure_bounds`; older files show the numbers they had): every pool item's loss "
        "lies in `[0, B]` (B = 1 for the error rate and a graded task's `1 - score`; for the "
        "log loss the target's largest possible loss, where the target is known on the pool), "
        "so after K labels of distinct items the pool's risk lies, with certainty given the "
        "labels, in `[S_K / N, (S_K + (N - K) B) / N]` (S_K: the labelled losses' sum; "
        "`estimate_base.sure_risk_curve`). The fixed-budget interval, the anytime CS "
        "(asymptotic or exact; before 30 labels the anytime CS (asymptotic) claims nothing and "
        "stays the "
        "whole range) and the compared target's intervals are intersected with it at every "
        "label count where that removes at least a tenth of the interval's width "
        "(`SURE_CUT_SHARE`: a smaller cut, such as a CS's lower end moved from 0 to 6 errors / "
        "400 items, changes nothing a reader acts on; once they cut one of an estimate's "
        "intervals, and are said, every interval of that estimate is intersected with them, so "
        "none reaches beyond what the note calls sure), which cannot lower any coverage; the "
        "JSON records `sure_low`/`sure_high` where they cut, and a note says so, e.g. with 32 "
        "of 40 items labelled and 6 errors, the error rate is surely within [0.15, 0.35], "
        "whatever the 8 others are, and a fixed-budget interval reaching below 0.15 is cut "
        "there. On large pools it seldom cuts: the upper bound binds once `(N - K) B / N` falls "
        "below the interval's width, the lower one once the labelled losses add up to nearly "
        "all of the risk (a design that has drawn most of the errors). The intervals keep their "
        "names (a paired difference whose intervals are entirely its own sure bounds is the one "
        "case named \"sure bounds\", [compare.md](compare.md)); an estimate outside the bounds "
        "(an unbiased estimate can: each label weighs by how unlikely its draw was) is said beside "
        "the number and in a note, not moved; the bootstrap interval "
        "is not cut. The labels a width needs count them too: by the label count where the "
        "bounds are at most 0.9 of the width (and the CS is claimed), any wider CS is cut "
        "within it, so the projection is at most that count; where that count is what the line "
        "shows, it is certain, not a projection, and `estimate`, `status`, the report and the "
        "JSON (`labels_needed_sure`) say so (\"within width 0.12 by 36 labels at the latest: "
        "certain\"). `inspect`'s stop reads the cut CS, and its \"uniform runs for the same "
        "width\" projection (and `status`'s) cuts the simulated uniform runs' CS by the same "
        "tenth rule (their fixed-budget interval, which can also put the bounds in force, is "
        "not simulated: the projection is, if anything, high).", "",
        "After each label a session has the per-draw estimates `theta` (1-D, one per "
        "label so far; `estimators.adaptive_lure_theta` or the same formula for LURE / "
        "CV-LURE) and calls:", "",
        "```python",
        "from activetest.stats import (anytime_summary, fixed_interval, asymptotic_cs,",
        "                              exact_cs, labels_for_cs_width, paired_difference_cs)",
        "s = anytime_summary(theta, N, target_width=W)  # all of the below in one call:",
        "fi = fixed_interval(theta, N)            # .estimate .low .high .se (budget fixed ahead)",
        "cs = asymptotic_cs(theta, N)             # .low[-1], .high[-1]: valid at any stop",
        "done = cs.width[-1] <= W                 # 'you may stop now'",
        "more = labels_for_cs_width(theta, N, W)  # projected total labels (a projection)",
        "ex = exact_cs(losses, q, N, loss_high=B, q_floor=0.1 / 1.1)  # the guarantee",
        "```", "",
    ]


def settings_below(rows: list[SettingCoverage], key: str = "asymptotic CS (from 30)",
                   level: float = 0.95) -> str:
    """The settings whose time-uniform coverage ``key`` is below ``level``, every one of
    them named with its coverage, lowest first ("4 of 40 settings fall below 0.95: ...");
    where none is, the lowest one."""
    ranked = sorted(rows, key=lambda r: r.uniform[key])

    def name(r: SettingCoverage) -> str:
        return f"{r.setting.dataset} {r.setting.label} {_f(r.uniform[key])}"

    below = [r for r in ranked if r.uniform[key] < level]
    if not below:
        low = f" (the lowest: {name(ranked[0])})" if ranked else ""
        return f"none of {len(rows)} settings falls below {level}{low}"
    verb = "falls" if len(below) == 1 else "fall"
    return (f"{len(below)} of {len(rows)} settings {verb} below {level}: "
            + ", ".join(name(r) for r in below))


def _goals(main: list[SettingCoverage], K: int,
           title: str = "CE + LURE", heading: str = "##") -> list[str]:
    b30 = STOP_FROM - 1
    fixed = _pooled(main, "fixed", "martingale")
    fixed_min = float(fixed[b30:].min())
    by_ds = {}
    for r in main:
        by_ds.setdefault(r.setting.dataset, []).append(r)
    ds_min = {d: float(_pooled(rs, "fixed", "martingale")[b30:].min()) for d, rs in by_ds.items()}
    tu = _mean([r.uniform["asymptotic CS (from 30)"] for r in main])
    tu_ex = _mean([r.uniform.get("exact CS (from 1)", np.nan) for r in main])
    st_cs = _mean([r.stopping["asymptotic CS"][0] for r in main])
    st_b = _mean([r.stopping["bootstrap"][0] for r in main])
    st_b10 = _mean([r.stopping["bootstrap, checked from 10"][0] for r in main])
    ratio = [r.ratios["asymptotic CS / martingale"][1] for r in main]
    ratio_b = [r.ratios["asymptotic CS / bootstrap"][1] for r in main]

    def ok(x: bool) -> str:
        return "met" if x else "**not met**"

    bad_ds = [d for d, v in ds_min.items() if v < 0.94]
    wide = [r for r in main if r.ratios["asymptotic CS / martingale"][1] > 1.6]
    return [
        f"{heading} Goals of issue 13 ({title}, log loss, all {len(main)} settings)", "",
        f"- Fixed-budget coverage of the pool risk >= 0.94 at every budget >= 30: pooled over "
        f"all settings the minimum over budgets is {_f(fixed_min)} ({ok(fixed_min >= 0.94)}); "
        "pooled per dataset " + ", ".join(f"{d} {_f(v)}" for d, v in ds_min.items())
        + (f" ({ok(False)} on {', '.join(bad_ds)}, mostly at small budgets: where the "
           "proposal (and, for the adaptive design, the learnt control) tracks most losses "
           "well, the few items it underweights carry the largest importance weights, so a "
           "single draw's term is strongly skewed; the runs that have not drawn them yet "
           "have a low estimate and a low SE at once and cannot tell)"
           if bad_ds else " (met)") + ".",
        f"- Time-uniform coverage >= 0.95: {ASYMPTOTIC_CS} from 30 labels {_f(tu)} on average "
        f"over settings ({ok(tu >= 0.95)}); {settings_below(main)}"
        f"; the {EXACT_CS} from the first label {_f(tu_ex)} on average (valid in every "
        "setting by construction).",
        f"- Optional stopping (width <= the median bootstrap width at 100 labels): "
        f"{ASYMPTOTIC_CS} {_f(st_cs)} ({ok(st_cs >= 0.95)}), bootstrap {_f(st_b)} checked from 30 "
        f"and {_f(st_b10)} checked from 10 ({ok(st_b < 0.95)}: it falls below).",
        f"- {ASYMPTOTIC_CS} width at {K} labels <= 1.6x the {FIXED_INTERVAL}: median ratio "
        "over settings "
        f"{_f(float(np.median(ratio)), 2)} ({ok(float(np.median(ratio)) <= 1.6)}); "
        f"{len(wide)} of {len(main)} settings exceed 1.6 (largest {_f(max(ratio), 2)}"
        + (", " + ", ".join(sorted({r.setting.dataset for r in wide})) if wide else "")
        + ": where the terms are most skewed, Hall's correction widens the CS a little more "
        f"than the {FIXED_INTERVAL}). Against the bootstrap's width: median "
        f"{_f(float(np.median(ratio_b)), 2)}, largest {_f(max(ratio_b), 2)}.", "",
    ]


def _other_methods(rows: list[SettingCoverage], methods: Sequence[str], losses: Sequence[str],
                   K: int) -> list[str]:
    b30 = STOP_FROM - 1
    body = []
    for m in methods:
        for loss in losses:
            rs = [r for r in rows if r.method == m and r.loss == loss]
            if not rs:
                continue
            c = _pooled(rs, "fixed", "martingale")
            cb = _pooled(rs, "fixed", "bootstrap")
            body.append([m, loss, _f(float(c[b30:].min())), _f(float(c[min(100, K) - 1:].mean())),
                         _f(float(cb[b30:].min())),
                         _f(_mean([r.uniform["asymptotic CS (from 30)"] for r in rs])),
                         _f(_mean([r.stopping["asymptotic CS"][0] for r in rs])),
                         _f(_mean([r.stopping["bootstrap"][0] for r in rs]))])
    return ["Every method and loss (pooled over all settings): "
            "coverage of the fixed-budget interval (minimum over budgets >= 30, "
            "mean over 100..K), the bootstrap's minimum, the time-uniform coverage of the "
            f"{ASYMPTOTIC_CS} and the coverage at the optional stop for that CS and the bootstrap. "
            "With the CE proposal, CV-LURE nearly collapses to LURE (q is proportional to "
            "its control; ADAPTIVE.md), so the rows agree closely.", "",
            *_table(["method", "loss", f"{FIXED_INTERVAL} min >= 30",
                     f"{FIXED_INTERVAL} mean >= 100",
                     "bootstrap min >= 30", f"{ASYMPTOTIC_CS} time-uniform",
                     f"{ASYMPTOTIC_CS} at stop", "bootstrap at stop"], body), ""]


#: Under each coverage figure: the command that makes it, and the one that redraws it.
_FIGURE_COMMANDS = ("Made by `python -m activetest.experiments coverage` (the whole study); "
                    "`python -m activetest.experiments replot` redraws it from the curves the "
                    "study saved beside it (`intervals/coverage_curves.npz`) without "
                    "simulating.")


def _uniform_section(main: list[SettingCoverage], dsets: list[str]) -> list[str]:
    def cell(rs: list[SettingCoverage], k: str) -> str:
        v = [r.uniform[k] for r in rs if k in r.uniform]
        return f"{_f(_mean(v))} ({_f(min(v), 2)})"

    return ["## Time-uniform coverage", "",
            "Share of runs whose interval contains the pool risk at *every* budget of its "
            "window at once (mean over the settings of a dataset; worst setting in "
            "brackets). The fixed-budget intervals are not built for this and fail; the "
            f"{ASYMPTOTIC_CS} is claimed from 30 labels (started at 10 it is not yet normal "
            f"enough where the terms are skewed); the {EXACT_CS} holds from the first label.",
            "",
            *_dataset_table(main, dsets, list(main[0].uniform), cell), "",
            "![checking after every label](intervals/peeking.png)", "",
            "*The figure: checking after every label from 30 (CE + LURE, log loss, 95%, "
            "all settings pooled): the share of runs whose interval has excluded the pool "
            f"risk at some budget by M; the anytime CSs are the tables' `{ASYMPTOTIC_CS}` and "
            f"`{EXACT_CS}`. "
            + _FIGURE_COMMANDS + "*", ""]


def _stopping_section(main: list[SettingCoverage], dsets: list[str]) -> list[str]:
    def cell(rs: list[SettingCoverage], k: str) -> str:
        v = [r.stopping[k] for r in rs if k in r.stopping]
        return f"{_f(_mean([x[0] for x in v]))} @{_mean([x[1] for x in v]):.0f}"

    return ["## Optional stopping", "",
            "The rule a person with a target width uses: stop at the first budget (from 30 "
            "labels, or 10 for the naive row) where the interval is at most W wide, W = the "
            "median bootstrap width at 100 labels of that setting; a run that never gets "
            "there stops at the last budget. Share of stopped intervals containing the pool "
            "risk, and the mean stopping budget after `@`. Stopping when the interval "
            "*looks* narrow selects the runs whose spread is underestimated, which are the "
            "runs that missed the heavy items; only an interval valid at every budget keeps "
            "its level under such a rule.", "",
            *_dataset_table(main, dsets, list(main[0].stopping), cell), ""]


def _width_section(main: list[SettingCoverage], dsets: list[str], K: int) -> list[str]:
    rk = list(main[0].ratios)
    body = []
    for ds, rs in _by_dataset(main, dsets):
        cells = []
        for k in rk:
            v = [r.ratios[k] for r in rs if k in r.ratios]
            cells.append(f"{_f(float(np.median([x[0] for x in v])), 2)} / "
                         f"{_f(float(np.median([x[1] for x in v])), 2)}")
        w = [r.widths["martingale"] for r in rs]
        cells.append(f"{_f(float(np.median([x[0] for x in w])))} / "
                     f"{_f(float(np.median([x[1] for x in w])))}")
        body.append([ds, *cells])
    return ["## The width cost of anytime validity", "",
            f"Median over runs, then over settings, of the width ratio at 100 / {K} labels, "
            "and the fixed-budget interval's median width (nats). The ratio of the "
            f"{ASYMPTOTIC_CS} is the deterministic multiplier (1.57 at 100 and 400 labels for N = "
            "2,000 with rho fixed for 200 labels) times a skewness term that vanishes with M; the "
            f"{EXACT_CS} pays mostly at its upper end (see the notes).", "",
            *_table(["dataset", *map(table_name, rk), table_name("martingale") + " width"],
                    body), "",
            "![one run](intervals/cs_band.png)", "",
            "*The figure: one seeded run of CE + LURE (log loss) on the first SST-2 setting, "
            "with its three 95% intervals at every label count. Made by "
            "`python -m activetest.experiments coverage` "
            "(it draws the run again from the cached outputs: seconds); "
            "`python -m activetest.experiments replot` redraws it from the run saved beside "
            "it (`intervals/cs_band.npz`).*", ""]


def _test_truth_section(main: list[SettingCoverage], dsets: list[str], K: int) -> list[str]:
    rs_t = [r for r in main if r.test_truth is not None]
    if not rs_t:
        return []
    keys = list(rs_t[0].fixed_test)
    body = []
    for ds in dsets:
        rs = [r for r in rs_t if r.setting.dataset == ds]
        if not rs:
            continue
        gap = float(np.median([abs(r.pool_risk - r.test_truth) for r in rs]))
        j = min(100, K) - 1
        body.append([ds, _f(gap), *(f"{_f(float(_pooled(rs, 'fixed_test', k)[j]))} / "
                                    f"{_f(float(_pooled(rs, 'fixed_test', k)[K - 1]))}"
                                    for k in keys),
                     f"{_f(float(_pooled(rs, 'fixed', 'martingale')[j]))} / "
                     f"{_f(float(_pooled(rs, 'fixed', 'martingale')[K - 1]))}"])
    worst = sorted(rs_t, key=lambda r: r.fixed_test["martingale (pool)"][K - 1])[:4]
    gaps = {(r.setting.dataset, r.setting.target): r.gap_sd for r in rs_t}
    far = max(gaps, key=lambda k: abs(gaps[k]))
    wl = [f"{r.setting.dataset} {r.setting.label}: pool {r.pool_risk:.3f}, test "
          f"{r.test_truth:.3f} ({r.gap_sd:+.1f} sd of the difference of the two means); "
          "coverage of the test truth "
          f"{_f(float(r.fixed_test['martingale (pool)'][K - 1]))} (pool interval) -> "
          f"{_f(float(r.fixed_test['+ S2/N + S2/N_test'][K - 1]))} (widened), of the pool risk "
          f"{_f(float(r.fixed['martingale'][K - 1]))}" for r in worst]
    return ["## The test-set truth is not the pool risk", "",
            f"Coverage at {min(100, K)} / {K} labels of the *test-set* truth (FPB has none: "
            "its pool is the truth), pooled over settings; `gap` is the median |pool risk - "
            "test truth|. The estimators are unbiased for the pool's own mean loss; the pool "
            "is itself a sample of N items, so its risk is off the population risk by the "
            "pool's sampling error (sd S/sqrt(N)), and a test set of N_test items is off it "
            "by S/sqrt(N_test) more. The pool interval cannot see either: as M grows it "
            "shrinks around the pool risk, and its coverage of the test truth falls while "
            "its coverage of the pool risk stays at 95%. Adding S^2/N (with S^2 estimated "
            "from the same labels: `pool_variance_curve`, `fixed_interval_curve(..., "
            "pool_variance=...)`) gives an interval for the population risk; adding "
            "S^2/N_test as well gives the interval to compare with a test set's mean.", "",
            *_table(["dataset", "gap", *map(table_name, keys),
                     f"pool risk ({table_name('martingale')})"], body), "",
            "The settings whose test truth is covered least:", "",
            *[f"- {x}" for x in wl], "",
            "The widened interval covers the test truth in 95% of (pool, test) splits, not "
            "in every split: the split is fixed here, and the coverage over runs of one "
            "split is near 1 when its pool-test gap is small against the sd of the "
            "difference of the two means, sqrt(S_pool^2/N + S_test^2/N_test), and falls "
            f"towards 0 as the gap passes ~2 sd. Over the {len(gaps)} (dataset, target) "
            "pairs with a test set the gaps are "
            + ", ".join(f"{g:+.1f}" for g in sorted(gaps.values()))
            + f" sd: {sum(abs(g) > 2 for g in gaps.values())} beyond 2 sd, where chance "
            f"gives {0.0455 * len(gaps):.1f} on average, "
            f"so {far[0]} {far[1]} (the largest gap) is an unlucky split rather than a "
            "broken interval; the same runs cover its pool risk at 95%.", ""]


def _error_rate_section(rs: list[SettingCoverage], dsets: list[str], K: int) -> list[str]:
    if not rs:
        return []
    b30 = STOP_FROM - 1
    body = []
    for ds, r_ in _by_dataset(rs, dsets):
        c = _pooled(r_, "fixed", "martingale")
        body.append([ds, _f(float(c[b30:].min())),
                     _f(_mean([r.uniform["asymptotic CS (from 30)"] for r in r_])),
                     _f(_mean([r.uniform.get("exact CS (from 1)", np.nan) for r in r_])),
                     _f(_mean([r.stopping["asymptotic CS"][0] for r in r_])),
                     _f(_mean([r.stopping["bootstrap"][0] for r in r_])),
                     f"{_f(float(np.median([r.widths['martingale'][1] for r in r_])))} / "
                     f"{_f(float(np.median([r.widths['asymptotic CS'][1] for r in r_])))} / "
                     f"{_f(float(np.median([r.widths.get('exact CS', (np.nan,) * 2)[1] for r in r_])))}"])  # noqa: E501
    return ["## Error rate (0-1 loss, the bound 1 is known a priori)", "",
            "The same study with the error rate (acquisition: the surrogate's expected 0-1 "
            "loss of the target). Widths at " + str(K) + " labels: fixed-budget interval / "
            f"{ASYMPTOTIC_CS} / {EXACT_CS}.", "",
            *_table(["dataset", f"{FIXED_INTERVAL} min >= 30", f"{ASYMPTOTIC_CS} time-uniform",
                     f"{EXACT_CS} time-uniform", f"{ASYMPTOTIC_CS} at stop",
                     "bootstrap at stop", "widths"], body), ""]


def _paired_section(paired: list[PairedCoverage], K: int) -> list[str]:
    if not paired:
        return []
    body = []
    for p in paired:
        cells = [p.dataset, f"{p.a} - {p.b}", p.surrogate, f"{p.diff:+.3f}"]
        for k in ("asymptotic CS", "exact CS"):
            u = p.uniform.get(f"{k} (from 30)" if k == "asymptotic CS" else f"{k} (from 1)")
            dd = p.decided.get(k)
            if dd is None:
                cells += ["n/a"] * 3
                continue
            cells += [_f(u), f"{_f(dd[0], 2)} / {_f(dd[1], 3)}",
                      "n/a" if not np.isfinite(dd[2]) else f"{dd[2]:.0f}"]
        body.append(cells)
    return ["## Is A better than B, anytime? The paired CS", "",
            "Each model zero-shot (A) against itself few-shot (B), evaluated on the same "
            f"draws ({paired[0].n_runs:,} runs of {K} labels; {EXACT_CS} on the first "
            f"{paired[0].n_exact:,}), acquired by the sum of the surrogate's expected losses "
            "of both targets (label-free), log loss. `paired_difference_cs(theta_a, theta_b, "
            f"N)` is the {ASYMPTOTIC_CS} of R_A - R_B (the per-draw estimates are linear in the "
            "loss); it *decides* at the first budget from 30 where it excludes 0. Columns: "
            "the pool's true difference; time-uniform coverage of it; the share of runs that "
            f"decided by {K} labels / decided the wrong sign (which needs the CS to exclude "
            "the truth, so at most 1 - level = 0.05); the mean budget of a decision.", "",
            *_table(["dataset", "A - B", "surrogate", "true diff.",
                     *(f"{ASYMPTOTIC_CS} {c}" for c in ("time-uniform", "decided / wrong",
                                                        "decision at")),
                     *(f"{EXACT_CS} {c}" for c in ("time-uniform", "decided / wrong",
                                                   "decision at"))], body), "",
            "What sessions report for a comparison (`estimate --compare`) differs from this "
            "log-loss",
            "table for error rates: there the few-errors rule holds for the other target's "
            "error rate",
            "and for the difference (the exact anytime CS while fewer than 5 labelled items differ "
            "from the",
            "most common difference: two targets that agree on every labelled item used to "
            "get a",
            "point interval at 0), and the blind spot widens both; measured in",
            "[robustness.md](robustness.md) (\"Two targets compared on the same labels when "
            "they",
            "rarely differ\").", ""]


def _notes() -> list[str]:
    return [
        "## Notes and limits", "",
        "- All of this is design-based: the pool is fixed and the randomness is the draws. "
        "The asymptotic guarantees (of the fixed interval and the anytime CS) need the per-draw "
        "terms to "
        "be close to normal in aggregate; where a few items with small q carry large losses "
        "(HS; FPB with the few-shot Gemma surrogate) the first 30-100 labels may not have met "
        "them, which no variance estimate from those labels can see. The exact anytime CS does not "
        "rely on this.",
        "- The exact anytime CS's upper end: theta_m can be as large as (labels so far + B / "
        "q_min) / "
        "N with q_min = 0.1 / (1.1 (N - m + 1)) under the paper's floor, so the bets against "
        "a too-high value are capped at about c / (11 B) (c = 1/2), and the upper bound shrinks "
        "slowly. A larger floor (proposal floor 0.5 or uniform sampling) makes it several times "
        "tighter at some cost in estimator efficiency; per-item loss bounds and the exact "
        "min_i q_m(i) of the proposal (which a session has) can be passed to `betting_cs`.",
        "- The anytime CS (asymptotic) runs Robbins' normal mixture on the clock tau_M = N M / (N "
        "- M), uniform sampling's intrinsic time, with rho fixed a priori for 200 labels; Hall's "
        "skewness correction is applied to it as to the fixed interval, and it vanishes "
        "with M, so the CS remains asymptotic in the sense of Waudby-Smith et al.",
        "- The adaptive design's exact anytime CS uses its lambda >= 0.1 uniform share as the "
        "floor (q >= 0.1 / (N - m + 1)) and bounds its learnt control by the loss bound.",
        "- `confseq` (PyPI) implements betting CSs for [0, 1] data, with replacement or "
        "uniformly without replacement (equal weights), in Python loops over a grid and a "
        "C++ extension; it has no weighted or adaptive without-replacement design and no "
        "control variate, so the package implements its own (numba, one pass over a "
        "per-run grid; the proof is in `activetest.stats.confseq`).", "",
    ]
