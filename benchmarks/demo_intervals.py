"""The demo's intervals over many seeded runs: is active testing's interval no wider than
uniform sampling's from the same number of labels, for log loss AND the error rate?

Reproduce (the first command scores the demo's 1,000 reviews with the bundled models,
minutes; a re-run reads the score cache)::

    python -m activetest demo --out /tmp/demo-design
    python benchmarks/demo_intervals.py --session /tmp/demo-design/demo.db
    python benchmarks/demo_intervals.py --session ... --runs 50 --no-write   # a quick look

What it does, on the demo session's stored scores and pool labels (the truth is
known there, as in the demo):

1. ``--runs`` (200) demo-sized runs of the design a session with both metrics runs
   (the two-metric calibrated design, :meth:`AdaptiveDesign.calibrated_both`, with the
   earned in-run rule new sessions record, and with the original rule of sessions
   before it), each
   as the demo draws it: ``AdaptiveSampler(seed=r)`` in batches of ``--batch`` (10)
   labels, refitted only between batches, to ``--labels`` (100) labels. Each
   metric's fixed-budget interval is the session's (adaptive LURE with the metric's
   own control, the design's model variance as floor, Hall's skewness-corrected
   studentized interval; :func:`activetest.session.estimate.anytime`; for the error
   rate the few-errors rule of new sessions, :mod:`activetest.stats.fewerrors`: the
   exact anytime CS while fewer than 5 errors are labelled). Not applied: the blind-spot
   widening (:mod:`activetest.stats.blindspot`). Uniform
   sampling: ``--labels`` items drawn without replacement with
   ``default_rng([r, 1])`` (the demo's uniform draw for seed r), its fixed-budget
   interval ``mean +- z sd / sqrt(n) sqrt(1 - n/N)``
   (:func:`activetest.session.demo.uniform_interval`). Reported per metric: the
   share of runs whose active interval is no wider than uniform's, the median
   widths, and each interval's coverage of the truth. The same is done for the
   design sessions with both metrics ran before (fitted to log loss, the error
   rate by plain LURE on its q, the observed SE alone), for contrast.
2. The typical error as the demo prints it: ``simulate`` with ``--sim-runs`` (3,000)
   sequential runs, seed 0, the median squared error at ``--labels`` labels over
   uniform sampling's, of the two-metric design (``adaptive_both_earned+cv_lure``, new
   sessions; ``adaptive_both+cv_lure``, the original rule), the
   paper's CE + LURE, and the old log-loss design (``adaptive_log``: ``+cv_lure``
   for log loss, ``+lure`` for the error rate).

Nothing here is tuned: the design's knobs are fixed in code, chosen before this
measurement (see :mod:`activetest.stats.adaptive`).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import write_section  # noqa: E402
from activetest.experiments.coverage import EXACT_CS  # noqa: E402
from activetest.session.demo import uniform_interval  # noqa: E402
from activetest.session.store import SessionStore  # noqa: E402
from activetest.stats import (  # noqa: E402
    adaptive_lure_theta,
    fixed_interval,
    log_loss,
    simulate,
    zero_one_loss,
)
from activetest.stats.adaptive import LAMBDAS, AdaptiveDesign, AdaptiveSampler  # noqa: E402
from activetest.stats.betting import exact_cs  # noqa: E402
from activetest.stats.fewerrors import MIN_ERRORS, few_errors  # noqa: E402

DOC = ROOT / "docs" / "demo.md"
SECTION = "Both metrics from one run: the demo's intervals over 200 runs"
METRICS = (("log_loss", "log", "log loss"), ("error_rate", "zero_one", "error rate"))


def load(session: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Target and surrogate log-probs and the pool's labels of a demo session file."""
    with SessionStore.open(session) as st:
        t, s = st.scores("target"), st.scores("surrogate")
        items = st.items()
    if t is None or s is None or any(it.label is None for it in items):
        raise SystemExit(f"{session}: not a demo session (scores and pool labels needed)")
    y = np.array([it.label for it in items], dtype=np.int64)
    return t.logprobs, s.logprobs, y


def one_run(design: AdaptiveDesign, y: np.ndarray, losses: dict[str, np.ndarray], n: int,
            batch: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """One demo-like run: metric -> (estimate, low, high) of the fixed-budget interval."""
    N = y.shape[0]
    sm = AdaptiveSampler(design, seed=seed)
    while len(sm.acquired) < n:
        idx, _ = sm.draw(min(batch, n - len(sm.acquired)))
        sm.observe(labels=y[idx].tolist())
    idx = np.array(sm.acquired)
    q = np.array(sm.q)
    out = {}
    for metric, loss, _ in METRICS:
        L = losses[metric][idx]
        if loss in design.losses:  # the metric's own control and model variance
            g, G, V = sm.controls(loss)
            theta = adaptive_lure_theta(L, q, N, control=g, control_rest=G)
        else:  # the old sessions: plain LURE on the design's q, the observed SE alone
            theta, V = adaptive_lure_theta(L, q, N), None
        fi = fixed_interval(theta, N, level=0.95, model_var=V)
        low, high = fi.low, fi.high
        if metric == "error_rate" and design.rule == "earned" \
                and few_errors(L, MIN_ERRORS)[-1]:  # new sessions: the exact CS stands in
            extra = {} if V is None else {"control": g, "control_rest": G,
                                          "control_low": 0.0, "control_high": 1.0}
            ex = exact_cs(L, q, N, loss_high=1.0, q_floor=min(LAMBDAS), **extra)
            low, high = float(ex.low[-1]), float(ex.high[-1])
        out[metric] = (fi.estimate, low, high)
    return out


def measure(t: np.ndarray, s: np.ndarray, y: np.ndarray, *, runs: int, n: int, batch: int,
            sim_runs: int) -> dict[str, object]:
    N = y.shape[0]
    losses = {"log_loss": log_loss(t, y), "error_rate": zero_one_loss(t, y)}
    truth = {m: float(v.mean()) for m, v in losses.items()}
    designs = {"two-metric (earned rule, new sessions)":
               AdaptiveDesign.calibrated_both(t, s, rule="earned"),
               "two-metric (original rule)": AdaptiveDesign.calibrated_both(t, s),
               "log-loss only (before)": AdaptiveDesign.calibrated(t, s, loss="log")}
    rows: dict[str, dict[str, dict[str, float]]] = {}
    uni: dict[str, list[tuple[float, float, float]]] = {m: [] for m, _, _ in METRICS}
    for r in range(runs):
        uidx = np.random.default_rng([r, 1]).choice(N, size=n, replace=False)
        for m, _, _ in METRICS:
            u = uniform_interval(losses[m][uidx], N, 0.95)
            uni[m].append((u.estimate, u.low, u.high))
    U = {m: np.array(v) for m, v in uni.items()}
    t0 = time.perf_counter()
    for name, design in designs.items():
        got = [one_run(design, y, losses, n, batch, r) for r in range(runs)]
        rows[name] = {}
        for m, _, _ in METRICS:
            A = np.array([g[m] for g in got])
            wa, wu = A[:, 2] - A[:, 1], U[m][:, 2] - U[m][:, 1]
            rows[name][m] = {
                "no_wider": float(np.mean(wa <= wu)),
                "width": float(np.median(wa)), "width_uniform": float(np.median(wu)),
                "cover": float(np.mean((A[:, 1] <= truth[m]) & (truth[m] <= A[:, 2]))),
                "cover_uniform": float(np.mean((U[m][:, 1] <= truth[m])
                                               & (truth[m] <= U[m][:, 2]))),
                "sq_ratio": float(np.median((A[:, 0] - truth[m]) ** 2)
                                  / np.median((U[m][:, 0] - truth[m]) ** 2)),
            }
    seconds_runs = time.perf_counter() - t0
    ratios: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for m, loss, _ in METRICS:
        old = "adaptive_log+cv_lure" if loss == "log" else "adaptive_log+lure"
        methods = ["uniform+mean", "adaptive_both_earned+cv_lure", "adaptive_both+cv_lure",
                   "ce+lure", old]
        sim = simulate(target_logprobs=t, labels=y, surrogate_logprobs=s, methods=methods,
                       budget=n, n_runs=sim_runs, loss=loss, random_state=0)
        b = float(sim.median_squared_error("uniform+mean")[-1])
        ratios[m] = {k: float(sim.median_squared_error(k)[-1]) / b for k in methods[1:]}
        ratios[m]["old"] = ratios[m].pop(old)
    return {"truth": truth, "rows": rows, "ratios": ratios, "N": N,
            "seconds_runs": seconds_runs, "seconds_sim": time.perf_counter() - t0}


def render(res: dict[str, object], args: argparse.Namespace) -> str:
    truth, rows, ratios = res["truth"], res["rows"], res["ratios"]  # type: ignore[misc]
    cmd = (f"python benchmarks/demo_intervals.py --session {args.session}"
           + ("" if args.runs == 200 else f" --runs {args.runs}"))
    lines = [
        f"## {SECTION}", "",
        "Reproduce: `python -m activetest demo --out /tmp/demo-design` (scores the demo's "
        "pool; minutes), then "
        f"`{cmd}` ({res['seconds_runs']:.0f} s for the runs, {res['seconds_sim']:.0f} s for "
        f"the {args.sim_runs:,} simulated ones; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, shared). The demo's scores (seed 0: N = {res['N']:,} "
        f"generated reviews, Gemma 3 270M surrogate, SmolLM2-135M target, 8-shot), "
        f"{args.runs} runs of {args.labels} labels each drawn as the demo draws them "
        f"(batches of {args.batch}, seed r for run r), true log loss "
        f"{truth['log_loss']:.4f}, true error rate {truth['error_rate']:.4f}.", "",
        "A session with both metrics runs the two-metric calibrated design (one proposal "
        "from the combined standardised residual spread, each metric with its own control "
        "and model-variance floor); new sessions run it with the earned in-run rule "
        f"(docs/robustness.md) and report the error rate's {EXACT_CS} while fewer than "
        f"{MIN_ERRORS} errors are labelled (never, here, at {args.labels} labels); sessions "
        "before ran the original rule. Before the two-metric design, such sessions ran "
        "the design fitted to log loss and estimated the error rate by plain LURE on its "
        "draws. Not applied here: the blind-spot widening (1/5 the uniform rate for the "
        "earned rule; 1.00x median on the paper settings). Each run's 95% "
        "fixed-budget interval (what a session shows; the README's headline) is compared "
        "with uniform sampling's from the same number of labels, mean +- z sd / sqrt(n) "
        "sqrt(1 - n/N) (uniform draw `default_rng([r, 1])`, the demo's), both unclipped:", "",
        "| design | metric | active no wider than uniform | median width (uniform) | "
        "coverage (uniform) | median squared error / uniform's |",
        "|---|---|---|---|---|---|",
    ]
    for name, per in rows.items():  # type: ignore[union-attr]
        for m, _, label in METRICS:
            r = per[m]
            lines.append(f"| {name} | {label} | **{100 * r['no_wider']:.1f}%** | "
                         f"{r['width']:.3f} ({r['width_uniform']:.3f}) | "
                         f"{r['cover']:.3f} ({r['cover_uniform']:.3f}) | "
                         f"{r['sq_ratio']:.2f} |")
    lines += [
        "", f"Typical error (`simulate`, {args.sim_runs:,} sequential runs of the five "
        f"methods below together, seed 0; median squared error at {args.labels} labels / "
        f"uniform sampling's). The demo prints the same ratio from its own `simulate` of "
        f"three methods (uniform, the session's design, CE + LURE) with the same seed, and "
        f"each method's runs have a random stream of their own (`stats.simulate.seed_for`: "
        f"adding a method changes no other's), so on the same scores it prints these "
        f"numbers (0.25 / 0.24 and CE + LURE 0.60 / 0.61 on the 2-core AMD EPYC machine, "
        f"2026-12-06). On 2026-12-05 a demo printed 0.23 / 0.25 and 0.63 / 0.69 (log loss "
        f"/ error rate): scores that differ slightly (the bundled models' floating-point "
        f"results differ between CPUs, below) move a median over 3,000 runs by a few "
        f"hundredths:",
        "", "| metric | two-metric design, earned rule (`adaptive_both_earned+cv_lure`) | "
        "original rule (`adaptive_both+cv_lure`) | paper's CE + LURE | "
        "log-loss design before (`adaptive_log`) |", "|---|---|---|---|---|",
    ]
    for m, _, label in METRICS:
        r = ratios[m]  # type: ignore[index]
        lines.append(f"| {label} | **{r['adaptive_both_earned+cv_lure']:.2f}** | "
                     f"{r['adaptive_both+cv_lure']:.2f} | {r['ce+lure']:.2f} | "
                     f"{r['old']:.2f} |")
    both = rows["two-metric (earned rule, new sessions)"]  # type: ignore[index]
    old = rows["log-loss only (before)"]  # type: ignore[index]
    orig = rows["two-metric (original rule)"]  # type: ignore[index]
    er, ll = both["error_rate"], both["log_loss"]
    goal = "met" if er["no_wider"] >= 0.9 else "NOT met"
    lines += ["", "(`adaptive_log`: `+cv_lure` for log loss, `+lure` for the error rate, "
              "as those sessions estimated it.)", "",
              f"Reading: the goal of issue 24 (the error rate's interval no wider than "
              f"uniform's in at least 90% of the runs) is {goal}: "
              f"{100 * er['no_wider']:.1f}% (before: {100 * old['error_rate']['no_wider']:.1f}%"
              f", its median width {old['error_rate']['width']:.3f} against uniform's "
              f"{old['error_rate']['width_uniform']:.3f}). Serving both costs log loss a "
              f"little: {100 * ll['no_wider']:.1f}% of runs no wider than uniform "
              f"(the log-loss-only design: {100 * old['log_loss']['no_wider']:.1f}%), typical "
              f"error {ratios['log_loss']['adaptive_both_earned+cv_lure']:.2f}x uniform's against "  # type: ignore[index]
              f"{ratios['log_loss']['old']:.2f}x. The per-run comparison is noisy on both "  # type: ignore[index]
              f"sides (uniform's interval width varies with its sample sd), so with "
              f"{args.runs} runs each share has a standard error of about "
              f"{100 * np.sqrt(0.9 * 0.1 / args.runs):.0f} points.", "",
              f"The earned in-run rule of new sessions pays for its robustness on hostile "
              f"pools (docs/robustness.md) here: typical error "
              f"{ratios['log_loss']['adaptive_both_earned+cv_lure']:.2f}x / "  # type: ignore[index]
              f"{ratios['error_rate']['adaptive_both_earned+cv_lure']:.2f}x uniform's "  # type: ignore[index]
              f"against the original rule's {ratios['log_loss']['adaptive_both+cv_lure']:.2f}x"  # type: ignore[index]
              f" / {ratios['error_rate']['adaptive_both+cv_lure']:.2f}x (log loss / error "  # type: ignore[index]
              f"rate), median widths {ll['width']:.3f} / {er['width']:.3f} against "
              f"{orig['log_loss']['width']:.3f} / {orig['error_rate']['width']:.3f} (its "
              f"uniform start and smoothed scores cost early labels; its model-variance floor "
              f"keeps the width steady, so it is no wider than uniform's in more runs).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--session", type=Path, required=True,
                    help="a demo session file (python -m activetest demo --out DIR)")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--labels", type=int, default=100)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--sim-runs", type=int, default=3000)
    ap.add_argument("--no-write", action="store_true", help=f"print only; do not edit {DOC}")
    args = ap.parse_args(argv)
    t, s, y = load(args.session)
    res = measure(t, s, y, runs=args.runs, n=args.labels, batch=args.batch,
                  sim_runs=args.sim_runs)
    text = render(res, args)
    print(text)
    if not args.no_write:
        if not DOC.exists():
            DOC.write_text("# The demo\n\nMeasurements on the demo's own scores "
                           "(`python -m activetest demo`).\n")
        write_section(text, SECTION, DOC)
        print(f"wrote the section of {DOC}")


if __name__ == "__main__":
    main()
