"""Does a CS whose weights follow the adaptive design's own variance need fewer runs?

Idea (c) of docs/harness.md, "History pools: which design": the session's estimate
weights the per-draw estimates ``theta_m`` by ``w_m = N / ((N - m)(N - m + 1))``, the
inverse of uniform sampling's per-draw variance. An adaptive design's per-draw variance
falls faster than uniform's as it learns, so its early draws (poor controls) might weigh
too much. Any PREDICTABLE weights ``v_m`` (known before draw m) keep
``Z_M = sum v_m (theta_m - R)`` a martingale, so the asymptotic confidence sequence of
:mod:`activetest.stats.confseq` applies to ``sum v theta / sum v`` on the clock
``N sum v`` (the intrinsic time when ``v_m`` is proportional to the inverse of the true
per-draw variance). Here

    v_m = w_m a_m,  a_m = clip(x_1 (N - m)(N - m + 1) / (N (N - 1) x_m), 1/A, A),

``x_m`` the design's own prediction of ``N^2 Var(theta_m | past)`` (``model_var``,
F_{m-1}-measurable): ``a_m`` is how much the design's predicted per-draw variance has
fallen since its first draw beyond uniform's finite-population fall (1 for uniform
sampling, whose weights are then the session's). The centre ``sum v theta / sum v`` is
not exactly unbiased at a fixed budget (its weights are random); the CS stays valid.
Everything else is the table's: SE the larger of the observed (``sum c^2 (theta -
R~)^2 / kappa``, ``c = v / sum v``) and the model's, Hall's correction, the normal mixture
tuned at 200 labels, clipped to [0, 1], from 30 runs on; stop at the first budget whose
half-width is <= h.

Usage (CPU minutes; same pools, seeds and design as ``harness_runs.py --no-bundled
--history-design features``)::

    nice -n 10 python benchmarks/harness_weighted_cs.py --runs 100

Each cell is a CS's median runs, its ratio to uniform's median runs and the coverage at
the stop; the ratio is that of the two medians as the table prints them (whole runs,
:func:`harness_runs.shown_ratio`'s rule), and the summary lines' median and range are of
those ratio cells as printed (until 2026-12-06 the cells showed the ratio of the
unrounded medians, and not the CS's median, so a reader could not get it back).
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
from activetest.stats.adaptive import simulate_design  # noqa: E402
from activetest.stats.confseq import normal_mixture_factor, normal_mixture_rho2  # noqa: E402
from activetest.stats.estimators import adaptive_lure_theta  # noqa: E402
from activetest.stats.intervals import hall_bounds  # noqa: E402

CAPS = (4.0, 30.0)


def weighted_cs(theta: np.ndarray, v: np.ndarray, N: int, model_var: np.ndarray | None,
                alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the asymptotic CS (mixture at 200 labels) on weights ``v``, budgets
    1..K (K < N), per run (module docstring)."""
    W = np.cumsum(v, -1)
    s = theta.mean(-1, keepdims=True)
    d = theta - s
    est = s + np.cumsum(v * d, -1) / W
    e = est - s
    A0, A1, A2 = (np.cumsum(v**2 * d**k, -1) for k in range(3))
    C0, C1, C2, C3 = (np.cumsum(v**3 * d**k, -1) for k in range(4))
    m2 = np.maximum(A2 - 2 * e * A1 + e * e * A0, 0.0)
    m3 = C3 - 3 * e * C2 + 3 * e * e * C1 - e**3 * C0
    S2, S3 = A0 / W**2, C0 / W**3
    kappa = 1 - 2 * S3 / S2 + S2
    with np.errstate(all="ignore"):
        var = m2 / W**2 / kappa
        g = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0)
        if model_var is not None:
            vm = np.cumsum(v**2 * np.where(np.isfinite(model_var), model_var, 0.0), -1) / N**2
            v_obs, var = var, np.maximum(var, vm / W**2)
            g = np.where(var > 0, g * (v_obs / np.where(var > 0, var, 1.0)) ** 1.5, 0.0)
    var[..., 0] = np.inf
    f = normal_mixture_factor(N * W, normal_mixture_rho2(200, alpha), alpha)
    lo, hi = hall_bounds(est, np.sqrt(var), g, f)
    early = np.arange(1, theta.shape[-1] + 1) < hr.START
    return (np.maximum(np.where(early, -np.inf, lo), 0.0),
            np.minimum(np.where(early, np.inf, hi), 1.0))


def boost(x: np.ndarray, N: int, cap: float) -> np.ndarray:
    """``a_m`` of the module docstring from the design's predicted variances ``x``."""
    m = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    with np.errstate(all="ignore"):
        a = x[:, :1] * (N - m) * (N - m + 1) / (N * (N - 1) * x)
    return np.clip(np.where(np.isfinite(a) & (a > 0), a, 1.0), 1.0 / cap, cap)


def cell(n: np.ndarray, u_n: np.ndarray, cov: np.ndarray) -> tuple[float, str]:
    """A table cell for a CS's stopping runs ``n`` against uniform's ``u_n`` (and its
    coverage at the stop ``cov``): the ratio of the two medians as printed, rounded as
    its cell prints it, and the cell "median runs: ratio (coverage)"."""
    ratio = round(hr._shown_over(float(np.median(n)), float(np.median(u_n))), 2)
    return ratio, f"{np.median(n):.0f}: {ratio:.2f} ({cov.mean():.2f})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--held-out", type=int, default=3)
    a = ap.parse_args(argv)
    names = ["session weights", *[f"design-variance weights, A = {c:g}" for c in CAPS]]
    ratios: dict[tuple[str, float], list[float]] = {}
    print("| pool | h | uniform runs | " + " | ".join(f"{n}: runs: ratio (coverage)"
                                                   for n in names)
          + " |\n|---|---|---|" + "---|" * len(names))
    for p in hr.history_pools(a.held_out, seed=a.seed):
        t0 = time.process_time()
        N, truth, K = p.loss.size, float(p.loss.mean()), p.loss.size - 1
        rng = np.random.default_rng([a.seed, zlib.crc32(p.name.encode()), 1])
        d = simulate_design(hr.history_design(p, "features"), losses=p.loss, labels=None,
                            budget=N, n_runs=a.runs, random_state=rng, model_var=True)
        th = adaptive_lure_theta(p.loss[d.indices], d.q, N, control=d.control,
                                 control_rest=d.control_rest)[:, :K]
        x = d.model_var[:, :K]
        m = np.arange(1, K + 1, dtype=np.float64)
        w = np.broadcast_to(N / ((N - m) * (N - m + 1)), th.shape)
        ulo, uhi = hr.uniform_runs(p, a.runs, a.seed)
        curves = [weighted_cs(th, w, N, x)] + [weighted_cs(th, w * boost(x, N, c), N, x)
                                               for c in CAPS]
        for h in hr.WIDTHS:
            u_n, _ = hr._stop(ulo, uhi, h, truth)
            cells = []
            for name, (lo, hi) in zip(names, curves, strict=True):
                n, cov = hr._stop(lo, hi, h, truth)
                r, text = cell(n, u_n, cov)
                ratios.setdefault((name, h), []).append(r)
                cells.append(text)
            print(f"| {p.name} | {h} | {np.median(u_n):.0f} | " + " | ".join(cells) + " |",
                  flush=True)
        print(f"<!-- {p.name}: {time.process_time() - t0:.0f} CPU-s -->", flush=True)
    for (name, h), r in ratios.items():
        print(f"\n{name}, h = {h}: median ratio to uniform {np.median(r):.3f} "
              f"(range {min(r):.2f}-{max(r):.2f}, {len(r)} pools)")


if __name__ == "__main__":
    main()
