"""The hostile-pool suite (issue 20): error ratio to uniform and interval coverage.

Usage::

    python -m activetest.experiments.robustness --runs 200 --out tables.md
    python -m activetest.experiments.robustness --from-json   # the cached suite's tables

A run writes its results to ``runs/robustness.json`` (:data:`RUN_JSON`, not committed)
or to ``--json PATH``; the committed cache docs/robustness.md is written from
(:data:`CACHE_JSON`) only when named: ``--json experiments/cache/robustness.json``
(QA: a 3-run toy suite once overwrote it by default). ``--from-json`` reads the cache
(or ``--json PATH``).

For every pool of :mod:`activetest.experiments.hostile` and both losses (log loss,
error rate), R runs of each method up to 400 labels, on the pool's own mean loss as
the truth:

* ``uniform``: uniform sampling without replacement, the sample mean;
* ``paper``: the paper's acquisition (CE for the log loss, the expected 0-1 loss for
  the error rate) with floor 0.1 and LURE;
* ``original`` / ``earned``: the calibrated adaptive design fitted to the loss, with
  the original and the earned in-run rule (:mod:`activetest.stats.adaptive`),
  estimated by adaptive LURE with its own control.

Reported: the median squared error over runs, divided by uniform's, at 50, 100, 200
and 400 labels (for the constant pool, where uniform is exact, the median squared
errors themselves), and the coverage (to 1e-12: an exact estimate differs from the
pool mean by rounding) of the pool risk by every interval a session
reports: the fixed-budget interval at each budget (with the design's model-variance
floor, as sessions compute it), and the time-uniform coverage from 30 to 400 labels
of the asymptotic confidence sequence and of the exact (betting) one (loss bound: 1
for the error rate, the target's largest log loss on the pool for the log loss;
proposal floor 0.1 for the designs, 0.1/1.1 for the paper's). Each method's draws
come from its own seed; the seeds and R are written into the output.

With ``--widened`` also what NEW sessions report (:mod:`activetest.stats.blindspot`,
:mod:`activetest.stats.confseq`): for ``uniform`` and ``earned`` (the design new
sessions run), the anytime CS tuned to the planned budget 400 (``budget=``), and the
fixed-budget interval and that CS widened by the blind spot at ``blind_ratio``
(default: what a new session with that design records,
:func:`activetest.stats.blindspot.new_blind_ratio`: 1/5 for the earned rule), widened
at every budget and then intersected and clipped as
:func:`activetest.session.estimate.interval_curves` does; with the median width ratio
widened / plain of the fixed-budget interval.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from activetest.experiments.coverage import ASYMPTOTIC_CS, EXACT_CS
from activetest.experiments.hostile import POOLS, HostilePool, hostile_pool
from activetest.stats import acquisition_scores, sample
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.betting import exact_cs, log_loss_bound
from activetest.stats.blindspot import blind_spot_curve, new_blind_ratio
from activetest.stats.blindspot_replay import design_proposals
from activetest.stats.confseq import asymptotic_cs, running_intersection
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.fewerrors import MIN_ERRORS, few_errors, switch_to_exact
from activetest.stats.intervals import fixed_interval_curve

__all__ = ["BUDGETS", "METHODS", "PoolResult", "main", "paper_settings", "run_pool", "tables"]

#: The committed results docs/robustness.md shows (read by ``--from-json``; written by a
#: run only where ``--json`` names it).
CACHE_JSON = "experiments/cache/robustness.json"
#: Where a run writes its results when ``--json`` is not given (git-ignored).
RUN_JSON = "runs/robustness.json"
BUDGETS = (50, 100, 200, 400)
METHODS = ("uniform", "paper", "original", "earned")
#: The methods whose intervals ``--widened`` reports as new sessions compute them.
WIDENED_METHODS = ("uniform", "earned")
#: The planned budget of the budget-tuned CS (the new sessions' default, 400 labels).
PLANNED = 400
#: The confidence sequences are checked from this many labels on (the anytime CS's
#: own start, :data:`activetest.stats.confseq.MIN_LABELS`).
CS_FROM = 30
LEVEL = 0.95
PAPER_FLOOR = 0.1


@dataclass
class PoolResult:
    """One pool and loss: per method, the median squared error at :data:`BUDGETS` and
    the coverages (fixed-budget per budget; anytime and exact: time-uniform)."""

    pool: str
    loss: str
    risk: float
    n_runs: int
    mse: dict[str, list[float]] = field(default_factory=dict)
    fixed: dict[str, list[float]] = field(default_factory=dict)
    anytime: dict[str, float] = field(default_factory=dict)
    exact: dict[str, float] = field(default_factory=dict)
    lam400: dict[str, float] = field(default_factory=dict)
    #: ``--widened`` (module docstring): budget-tuned anytime CS, plain and widened
    #: (time-uniform), the widened fixed-budget interval per budget, and the median
    #: width ratio widened / plain of the fixed-budget interval per budget.
    anytime_budget: dict[str, float] = field(default_factory=dict)
    anytime_wide: dict[str, float] = field(default_factory=dict)
    fixed_wide: dict[str, list[float]] = field(default_factory=dict)
    width_ratio: dict[str, list[float]] = field(default_factory=dict)
    blind_ratio: float | None = None
    #: ``--widened``, error rate: the few-errors rule of new sessions
    #: (:mod:`activetest.stats.fewerrors`) on top of the widened intervals: fixed-budget
    #: coverage per budget, anytime (time-uniform), and the share of runs whose interval
    #: at each budget is the CLT one (not the exact anytime CS).
    fixed_rule: dict[str, list[float]] = field(default_factory=dict)
    anytime_rule: dict[str, float] = field(default_factory=dict)
    clt_share: dict[str, list[float]] = field(default_factory=dict)

    def ratio(self, method: str) -> list[float]:
        """Median squared error / uniform's at each budget (NaN where uniform's is 0)."""
        base = np.array(self.mse["uniform"])
        m = np.array(self.mse[method])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(base > 0, m / base, np.nan).tolist()


def _draws(pool: HostilePool, method: str, loss: str, budget: int, n_runs: int, seed: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None,
                      np.ndarray | None, float, float | None]:
    """``(idx, q, g, G, model_var, q_floor, lam at the last draw)`` of R runs."""
    n = pool.labels.shape[0]
    if method in ("original", "earned"):
        d = AdaptiveDesign.calibrated(pool.target, pool.surrogate, loss=loss, rule=method)
        runs = simulate_design(d, losses=pool.losses(loss), labels=pool.labels, budget=budget,
                               n_runs=n_runs, random_state=seed, model_var=True)
        return (runs.indices, runs.q, runs.control, runs.control_rest, runs.model_var, 0.1,
                float(np.median(runs.lam[:, -1])))
    if method == "uniform":
        scores = np.ones(n)
        idx, q = sample(scores, budget, n_runs=n_runs, proposal_floor=1.0, random_state=seed)
        return idx, q, None, None, None, 1.0, None
    acq = "ce" if loss == "log" else "zero_one"
    scores = acquisition_scores(acq, surrogate_logprobs=pool.surrogate,
                                target_logprobs=pool.target)
    idx, q = sample(scores, budget, n_runs=n_runs, proposal_floor=PAPER_FLOOR, random_state=seed)
    return idx, q, None, None, None, PAPER_FLOOR / (1 + PAPER_FLOOR), None


def run_pool(name: str, loss: str, *, n_runs: int, seed: int = 0, pool_seed: int = 0,
             budgets: Sequence[int] = BUDGETS, methods: Sequence[str] = METHODS,
             exact: bool = True, widened: bool = False,
             blind_ratio: float | None = None) -> PoolResult:
    """Simulate every method on one pool and loss (module docstring)."""
    pool = hostile_pool(name, seed=pool_seed)
    L = pool.losses(loss)
    n = L.shape[0]
    risk = float(L.mean())
    M = max(budgets)
    bound = 1.0 if loss == "zero_one" else log_loss_bound(pool.target)
    vrange = (0.0, bound)
    res = PoolResult(name, loss, risk, n_runs)
    if widened:  # what a new session with the earned design records, unless given
        res.blind_ratio = new_blind_ratio("earned") if blind_ratio is None else blind_ratio
    b = np.asarray(budgets) - 1
    for k, method in enumerate(methods):
        idx, q, g, G, mv, floor, lam = _draws(pool, method, loss, M, n_runs, seed + 1000 * k)
        Ld = L[idx]
        theta = adaptive_lure_theta(Ld, q, n, control=g, control_rest=G)
        fi = fixed_interval_curve(theta, n, level=LEVEL, model_var=mv)
        est = fi.estimate
        res.mse[method] = np.median((est[:, b] - risk) ** 2, axis=0).tolist()
        tol = 1e-12 * max(1.0, abs(risk))  # an exact estimate differs from the mean by rounding
        cov = (fi.low[:, b] - tol <= risk) & (risk <= fi.high[:, b] + tol)
        res.fixed[method] = cov.mean(axis=0).tolist()
        cs = asymptotic_cs(theta, n, alpha=1 - LEVEL, value_range=vrange, model_var=mv)
        inside = (cs.low[:, CS_FROM - 1:] - tol <= risk) & (risk <= cs.high[:, CS_FROM - 1:] + tol)
        res.anytime[method] = float(inside.all(axis=1).mean())
        rule = widened and method in WIDENED_METHODS and loss == "zero_one"
        ex = None
        if exact or rule:  # the few-errors rule needs the exact anytime CS of the error rate
            extra: dict[str, Any] = {} if g is None else {
                "control": g, "control_rest": G, "control_low": 0.0, "control_high": bound}
            ex = exact_cs(Ld, q, n, loss_high=bound, q_floor=floor, alpha=1 - LEVEL, **extra)
        if exact and ex is not None:
            ok = (ex.low[:, CS_FROM - 1:] - tol <= risk) & (risk <= ex.high[:, CS_FROM - 1:] + tol)
            res.exact[method] = float(ok.all(axis=1).mean())
        if lam is not None:
            res.lam400[method] = lam
        if widened and method in WIDENED_METHODS:
            _widened(res, pool, method, loss, idx, theta, fi, mv, bound, res.blind_ratio, tol, b,
                     Ld=Ld, ex=ex if rule else None)
    return res


def _widened(res: PoolResult, pool: HostilePool, method: str, loss: str, idx: np.ndarray,
             theta: np.ndarray, fi: Any, mv: np.ndarray | None, bound: float,
             ratio: float | None, tol: float, b: np.ndarray, *, Ld: np.ndarray | None = None,
             ex: Any = None) -> None:
    """The intervals new sessions report (module docstring), into ``res``; with ``ex``
    (the exact anytime CS of the error rate) also under the few-errors rule."""
    n, risk = pool.labels.shape[0], res.risk
    K = idx.shape[1]
    B = np.minimum(-pool.target.min(axis=1), bound) if loss == "log" else np.ones(n)
    cs = asymptotic_cs(theta, n, alpha=1 - LEVEL, model_var=mv, budget=PLANNED,
                       intersect=False)
    wl, wh = np.zeros((idx.shape[0], K)), np.zeros((idx.shape[0], K))
    if method != "uniform":  # uniform sampling explores everything: D = 0
        design = AdaptiveDesign.calibrated(pool.target, pool.surrogate, loss=loss, rule=method)
        for r in range(idx.shape[0]):
            acq = idx[r]
            c = blind_spot_curve(design_proposals(design, acq, labels=pool.labels[acq]), acq,
                                 B, N=n, level=LEVEL, ratio=float(ratio or 0.0))
            wl[r], wh[r] = c.widen_low, c.widen_high

    few = None if ex is None else few_errors(Ld, MIN_ERRORS)

    def covered_always(lo: np.ndarray, hi: np.ndarray, switch: bool = False) -> float:
        lo, hi = np.maximum(lo, 0.0), np.minimum(hi, bound)
        if switch:  # the exact anytime CS at the budgets with few errors, then intersected
            lo, hi = switch_to_exact(lo, hi, ex.low, ex.high, few)
        else:
            lo, hi = running_intersection(lo, hi)
        ok = (lo[:, CS_FROM - 1:] - tol <= risk) & (risk <= hi[:, CS_FROM - 1:] + tol)
        return float(ok.all(axis=1).mean())

    res.anytime_budget[method] = covered_always(np.asarray(cs.low), np.asarray(cs.high))
    res.anytime_wide[method] = covered_always(np.asarray(cs.low) - wl, np.asarray(cs.high) + wh)
    flo, fhi = fi.low[:, b] - wl[:, b], fi.high[:, b] + wh[:, b]
    res.fixed_wide[method] = ((flo - tol <= risk) & (risk <= fhi + tol)).mean(axis=0).tolist()
    if few is not None:
        res.anytime_rule[method] = covered_always(np.asarray(cs.low) - wl,
                                                  np.asarray(cs.high) + wh, switch=True)
        rlo, rhi = switch_to_exact(flo, fhi, ex.low[:, b], ex.high[:, b], few[:, b],
                                   intersect=False)
        res.fixed_rule[method] = ((rlo - tol <= risk) & (risk <= rhi + tol)).mean(0).tolist()
        res.clt_share[method] = (~few[:, b]).mean(axis=0).tolist()
    w0 = fi.high[:, b] - fi.low[:, b]
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero width (exact): n/a
        # (an SE of 0 is the exact point, padded by the rounding of a sum: n/a too)
        wr = np.where((w0 > 0) & (fi.se[:, b] > 0), (fhi - flo) / w0, np.nan)
    res.width_ratio[method] = [float(np.median(c[np.isfinite(c)])) if np.isfinite(c).any()
                               else float("nan") for c in wr.T]


def _cell(x: float, digits: int = 2) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:.{digits}f}"


def tables(results: Sequence[PoolResult], command: str) -> list[str]:
    """Markdown tables of the results (error ratios, then coverage)."""
    out = [f"Command: `{command}`", "",
           "Median squared error / uniform's (pool risk as the truth; constant pool: "
           "the median squared errors, uniform's is exact):", "",
           "| pool | loss | risk | " + " | ".join(
               f"{m} at {bb}" for m in METHODS[1:] for bb in BUDGETS) + " |",
           "|---|---|---|" + "---|" * (len(METHODS[1:]) * len(BUDGETS))]
    for r in results:
        if r.pool == "constant":
            cells = [f"{x:.1e}" for m in METHODS[1:] for x in r.mse[m]]
        else:
            cells = [_cell(x) for m in METHODS[1:] for x in r.ratio(m)]
        out.append(f"| {r.pool} | {r.loss} | {r.risk:.3f} | " + " | ".join(cells) + " |")
    out += ["", "Coverage of the pool risk (nominal 0.95): fixed-budget interval at "
            f"{', '.join(map(str, BUDGETS))} labels; {ASYMPTOTIC_CS} and {EXACT_CS}: "
            f"share of runs covered at every budget from {CS_FROM} to {max(BUDGETS)}:", "",
            "| pool | loss | method | " + " | ".join(f"fixed-budget at {bb}" for bb in BUDGETS)
            + f" | {ASYMPTOTIC_CS} | {EXACT_CS} |",
            "|---|---|---|" + "---|" * (len(BUDGETS) + 2)]
    for r in results:
        for m in METHODS:
            fx = " | ".join(_cell(x) for x in r.fixed[m])
            out.append(f"| {r.pool} | {r.loss} | {m} | {fx} | {_cell(r.anytime[m])} | "
                       f"{_cell(r.exact.get(m, float('nan')))} |")
    wide = [r for r in results if r.fixed_wide]
    if wide:
        out += ["", "What new sessions report (`--widened`, blind ratio "
                f"{wide[0].blind_ratio:g}): fixed-budget interval widened by the blind spot "
                f"at {', '.join(map(str, BUDGETS))} labels (median width widened / plain); "
                f"{ASYMPTOTIC_CS} tuned to {PLANNED} labels, plain and widened, time-uniform "
                f"from {CS_FROM} to {max(BUDGETS)}:", "",
                "| pool | loss | method | " + " | ".join(
                    f"widened fixed-budget at {bb} (width x)" for bb in BUDGETS)
                + " | anytime (budget) | anytime widened |",
                "|---|---|---|" + "---|" * (len(BUDGETS) + 2)]
        for r in wide:
            for m in r.fixed_wide:
                fx = " | ".join(f"{_cell(c)} ({_cell(w)})" for c, w
                                in zip(r.fixed_wide[m], r.width_ratio[m], strict=True))
                out.append(f"| {r.pool} | {r.loss} | {m} | {fx} | "
                           f"{_cell(r.anytime_budget[m])} | {_cell(r.anytime_wide[m])} |")
    rule = [r for r in results if r.fixed_rule]
    if rule:
        out += ["", f"Error rate with the few-errors rule of new sessions (a CLT interval only "
                f"from {MIN_ERRORS} errors and {MIN_ERRORS} labels without one, else the "
                f"{EXACT_CS}; `activetest.stats.fewerrors`), on top of the widened intervals: "
                f"fixed-budget coverage at {', '.join(map(str, BUDGETS))} labels (share of "
                f"runs with the CLT interval there), anytime time-uniform from {CS_FROM} to "
                f"{max(BUDGETS)}:", "",
                "| pool | method | " + " | ".join(f"fixed-budget at {bb} (CLT share)"
                                                  for bb in BUDGETS)
                + " | anytime |",
                "|---|---|" + "---|" * (len(BUDGETS) + 1)]
        for r in rule:
            for m in r.fixed_rule:
                fx = " | ".join(f"{_cell(c)} ({_cell(s)})" for c, s
                                in zip(r.fixed_rule[m], r.clt_share[m], strict=True))
                out.append(f"| {r.pool} | {m} | {fx} | {_cell(r.anytime_rule[m])} |")
    return out


def paper_settings(outputs: str | Path = "experiments/outputs", *, n_runs: int = 300,
                   loss: str = "log", rules: Sequence[str] = ("original", "earned"),
                   budgets: Sequence[int] = (50, 100, 200, 300, 400)
                   ) -> dict[str, np.ndarray]:
    """The calibrated design with each rule on the paper's 40 settings: rule -> ``(40,
    len(budgets))`` relative error (median squared error / uniform's, the test-set truth,
    zero-shot targets charged their in-context labels, as docs/reproduction.md does).
    Uniform from seed 0, the designs from seed 7 (the same uniforms for both rules)."""
    from activetest.experiments.outputs import DatasetOutputs
    from activetest.experiments.paper import settings_for
    from activetest.stats import log_loss, simulate, zero_one_loss

    lossf = log_loss if loss == "log" else zero_one_loss
    out: dict[str, list[list[float]]] = {r: [] for r in rules}
    for ds in ("fpb", "hs", "mmlu", "sst2", "subj"):
        data = DatasetOutputs.load(Path(outputs) / f"{ds}.npz")
        y = data.pool_labels
        for st in settings_for(data):
            tgt, sur = data.outputs[st.target], data.outputs[st.surrogate]
            off = data.n_shots if st.zero_shot else 0
            truth = (float(lossf(tgt.pool, y).mean()) if data.pool_is_truth
                     else float(lossf(tgt.test, data.test_labels).mean()))
            sim = simulate(target_logprobs=tgt.pool, labels=y, surrogate_logprobs=sur.pool,
                           methods=["uniform+mean"], budget=min(max(budgets) + off, len(y)),
                           n_runs=n_runs, truth=truth, random_state=0, loss=loss)
            base = sim.median_squared_error("uniform+mean")
            L = lossf(tgt.pool, y)
            for rule in rules:
                d = AdaptiveDesign.calibrated(tgt.pool, sur.pool, loss=loss, rule=rule)
                runs = simulate_design(d, losses=L, labels=y, budget=max(budgets),
                                       n_runs=n_runs, random_state=7)
                mse = np.median((runs.curve(L) - truth) ** 2, axis=0)
                out[rule].append([mse[b - 1] / base[b - 1 + off] for b in budgets])
    return {r: np.array(v) for r, v in out.items()}


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: run the suite, write the JSON results (``--json``, default
    :data:`RUN_JSON`; never :data:`CACHE_JSON` unless named) and print the tables
    (``--out``: also to a file); ``--from-json``: the tables of stored results."""
    ap = argparse.ArgumentParser(prog="python -m activetest.experiments.robustness",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pools", nargs="*", default=list(POOLS))
    ap.add_argument("--losses", nargs="*", default=["log", "zero_one"])
    ap.add_argument("--no-exact", action="store_true", help=f"skip the {EXACT_CS} (slow)")
    ap.add_argument("--widened", action="store_true",
                    help="also the intervals new sessions report (budget-tuned CS, blind-spot "
                         "widening) for uniform and the earned design")
    ap.add_argument("--blind-ratio", type=float, default=None,
                    help="unexplored threshold (default: new sessions' for the earned rule)")
    ap.add_argument("--json", default=None,
                    help=f"a run writes its results here (default {RUN_JSON}; the committed "
                         f"cache {CACHE_JSON} only where named); --from-json reads them "
                         f"from here (default {CACHE_JSON})")
    ap.add_argument("--from-json", action="store_true",
                    help="print the tables of the stored results without simulating")
    ap.add_argument("--out", default=None, help="also write the tables to this file")
    ap.add_argument("--paper-settings", action="store_true",
                    help="instead: both rules on the paper's 40 settings (median relative "
                         "error; experiments/outputs)")
    a = ap.parse_args(argv)
    if a.paper_settings:
        for loss in a.losses:
            rel = paper_settings(n_runs=a.runs, loss=loss)
            for rule, arr in rel.items():
                print(f"{loss} {rule}: median {np.median(arr):.3f}, at 400 losing to uniform "
                      f"{int((arr[:, -1] > 1).sum())}/{arr.shape[0]}, worst "
                      f"{arr[:, -1].max():.2f}", flush=True)
        return
    command = ("python -m activetest.experiments.robustness --runs "
               f"{a.runs} --seed {a.seed}" + (" --no-exact" if a.no_exact else "")
               + (" --widened" if a.widened else "")
               + (f" --blind-ratio {a.blind_ratio:g}" if a.blind_ratio is not None else ""))
    if a.from_json:
        stored = json.loads(Path(a.json or CACHE_JSON).read_text(encoding="utf-8"))
        results = [PoolResult(**r) for r in stored["results"]]
        command = stored["command"]
    else:
        t0 = time.perf_counter()
        results = []
        for name in a.pools:
            for loss in a.losses:
                r = run_pool(name, loss, n_runs=a.runs, seed=a.seed, exact=not a.no_exact,
                             widened=a.widened, blind_ratio=a.blind_ratio)
                results.append(r)
                print(f"{name} {loss}: " + ", ".join(
                    f"{m} {_cell(r.ratio(m)[-1])}" for m in METHODS[1:]), flush=True)
        written = Path(a.json or RUN_JSON)  # the committed cache only where named
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(json.dumps(
            {"command": command, "runs": a.runs, "seed": a.seed,
             "seconds": time.perf_counter() - t0,
             "results": [r.__dict__ for r in results]}, indent=1), encoding="utf-8")
        print(f"results written to {written}", flush=True)
    lines = tables(results, command)
    print("\n".join(lines))
    if a.out:
        Path(a.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover
    main()
