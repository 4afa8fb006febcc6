"""Other models' results as the design's features: held-out models of two response matrices.

``python -m activetest.experiments history`` -> docs/history.md (tables between markers).

For each response matrix (``../shared/datasets/history/``): hold out T whole models
(rows) as targets; every other row is history (rows identical to a target's are
dropped from its history, as a session does). The history features
(:func:`activetest.stats.feature_design.history_features`: shrunk difficulty and
low-rank item factors, the rank chosen on the history alone) are computed once per
scenario, never from a target's labels. Per target, R runs of each method, the
target's per-item loss ``1 - score`` revealed one label at a time:

* ``design``: the feature design (adaptive LURE, control = predicted P(wrong));
* ``design (difficulty only)``: the same with rank 0 (an ablation);
* ``uniform``: the mean of uniform draws; its squared error is computed exactly,
  ``S^2 / M (N - M) / (N - 1)``, and is the denominator of every relative error;
* ``PPI++``: uniform draws, ``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci`` (the
  package itself) with the same model fitted on the same labels (MAP, ridge by
  evidence, as the design's last refit) predicting every pool item; not cross-fitted
  (slightly optimistic for PPI++);
* ``cross-PPI``: the same with ``FOLDS``-fold cross-fitting
  (``ppi_py.crossppi_mean_pointestimate``; each fold's model fitted on the other folds);
* ``IRT-style``: the same fitted model's predictions for the unlabelled items plus the
  labelled losses, no correction (tinyBenchmarks' idea); its interval is the
  Bernoulli plug-in ``1.96 sqrt(sum_unlabelled g (1 - g)) / N``.

Scenarios: ``random`` (T targets at random, all other rows history) and
``cross`` (history = the rows below the median accuracy, targets = T rows at or
above it: history from weaker models, targets from stronger ones).
Intervals: the design's fixed-budget interval (``fixed_interval_curve`` with the
design's variance floor, as sessions use) at each budget, and its anytime
confidence sequence (``asymptotic_cs``) over budgets 30..M_max, both 95%.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from activetest.experiments.coverage import ASYMPTOTIC_CS
from activetest.experiments.history_baselines import baselines
from activetest.experiments.probe import Probe, probe_id
from activetest.formats.history import ResponseMatrix, read_response_matrix
from activetest.stats.adaptive import simulate_design
from activetest.stats.confseq import MIN_LABELS, asymptotic_cs
from activetest.stats.estimators import adaptive_lure_theta
from activetest.stats.feature_design import (
    HistoryFeatures,
    design_matrix,
    feature_design,
    history_features,
)
from activetest.stats.intervals import fixed_interval_curve

__all__ = ["MATRICES", "METHODS", "ScenarioResult", "behaviour_probe", "render", "run_scenario",
           "study"]

MATRICES = {"mmlu_pro_math": "mmlu_pro_math_8b.csv", "bbh": "bbh_shuffled_objects_5.csv"}
METHODS = ("design", "design (difficulty only)", "PPI++", "cross-PPI", "IRT-style")
#: Folds of the cross-fitted PPI baseline.
FOLDS = 2
BUDGETS = (25, 50, 100, 200, 400)
MARK_BEGIN = "<!-- history:begin -->"
MARK_END = "<!-- history:end -->"


def section_markers(section: str = "main") -> tuple[str, str]:
    """The markers of a section of docs/history.md (``--section``): ``main`` the main tables,
    any other name ``<!-- history-NAME:begin -->`` (the small-budget study of each matrix)."""
    if section == "main":
        return MARK_BEGIN, MARK_END
    return f"<!-- history-{section}:begin -->", f"<!-- history-{section}:end -->"


@dataclass(frozen=True)
class ScenarioResult:
    """One matrix, one scenario: per target and budget.

    Attributes:
        rel: ``(n_methods, T, B)`` mean squared error over runs / uniform's exact one.
        cov_fixed: ``(T, B)`` the design's fixed-budget interval coverage.
        cov_anytime: ``(T,)`` its anytime CS coverage (every budget 30..max at once).
        cov_ppi, cov_irt: ``(T, B)`` PPI++'s and the IRT-style interval's coverage.
        bias_irt: ``(T, B)`` mean IRT-style error (estimate - truth).
        accuracy: ``(T,)`` the targets' accuracy; rank: the factors' rank; n_history:
            history rows; budgets, runs, seconds as run.
    """

    matrix: str
    scenario: str
    budgets: tuple[int, ...]
    runs: int
    baseline_runs: int
    n_items: int
    n_history: int
    rank: int
    rel: np.ndarray
    cov_fixed: np.ndarray
    cov_anytime: np.ndarray
    cov_ppi: np.ndarray
    cov_irt: np.ndarray
    bias_irt: np.ndarray
    accuracy: np.ndarray
    seconds: float


def _targets(M: ResponseMatrix, scenario: str, n_targets: int, seed: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """(target rows, history mask): targets distinct non-constant rows."""
    S = M.scores
    H = S.shape[0]
    acc = np.nanmean(S, axis=1)
    ok = np.nanstd(S, axis=1) > 0
    rng = np.random.default_rng(seed)
    if scenario == "random":
        pool = np.flatnonzero(ok)
        targets = rng.choice(pool, size=min(n_targets, pool.size), replace=False)
        hist = np.ones(H, dtype=bool)
        hist[targets] = False
    elif scenario == "cross":
        med = np.median(acc)
        hist = acc < med
        pool = np.flatnonzero(~hist & ok)
        targets = rng.choice(pool, size=min(n_targets, pool.size), replace=False)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return np.sort(targets), hist


def run_scenario(M: ResponseMatrix, scenario: str, *, n_targets: int = 30, n_runs: int = 200,
                 budgets: tuple[int, ...] = BUDGETS, seed: int = 0, baseline_runs: int = 0,
                 log: bool = False) -> ScenarioResult:
    """Every method on every held-out target of one scenario (module docstring);
    ``baseline_runs``: runs of the uniform-draw baselines (PPI++, cross-PPI, IRT-style),
    default ``n_runs`` (computed by :func:`activetest.experiments.history_baselines.baselines`)."""
    n_base = baseline_runs or n_runs
    t0 = time.time()
    S = M.scores
    N = S.shape[1]
    budgets = tuple(b for b in budgets if b < N)
    Mmax = max(budgets)
    targets, hist = _targets(M, scenario, n_targets, seed)
    H = S[hist]
    hf = history_features(H, random_state=seed)
    hf0 = HistoryFeatures(hf.p_correct, np.zeros((N, 0)), hf.covered, hf.n_models, 0)
    designs = (feature_design(history=hf), feature_design(history=hf0))
    X = design_matrix(hf.prior_wrong, hf.columns())
    T, B = len(targets), len(budgets)
    rel = np.full((len(METHODS), T, B), np.nan)
    cov_fixed, cov_ppi, cov_irt, bias_irt = (np.full((T, B), np.nan) for _ in range(4))
    cov_any = np.full(T, np.nan)
    bidx = np.array(budgets) - 1
    for t, row in enumerate(targets):
        L = 1.0 - S[row]
        if np.isnan(L).any():
            raise ValueError(f"{M.source}: target {M.models[row]!r} has missing cells")
        truth = L.mean()
        # rows identical to the target are dropped from its history (a session's rule)
        same = np.all(H == S[row][None, :], axis=1)  # noqa: SIM300
        des, X_t = designs, X
        if same.any():
            hft = history_features(H[~same], rank=hf.rank)
            hft0 = HistoryFeatures(hft.p_correct, np.zeros((N, 0)), hft.covered,
                                   hft.n_models, 0)
            des = (feature_design(history=hft), feature_design(history=hft0))
            X_t = design_matrix(hft.prior_wrong, hft.columns())
        uvar = L.var() * N / (N - 1) / np.array(budgets) * (N - np.array(budgets)) / N
        for d_i, d in enumerate(des):
            runs = simulate_design(d, losses=L, labels=None, budget=Mmax, n_runs=n_runs,
                                   random_state=seed + 1000 * t + d_i, model_var=d_i == 0)
            est = runs.curve(L)[:, bidx]
            rel[d_i, t] = ((est - truth) ** 2).mean(axis=0) / uvar
            if d_i == 0:
                th = adaptive_lure_theta(L[runs.indices], runs.q, N, runs.control,
                                         runs.control_rest)
                ci = fixed_interval_curve(th, N, model_var=runs.model_var)
                lo, hi = ci.low[:, bidx], ci.high[:, bidx]
                cov_fixed[t] = ((lo <= truth) & (truth <= hi)).mean(axis=0)
                cs = asymptotic_cs(th, N, model_var=runs.model_var, value_range=(0.0, 1.0))
                cov_any[t] = cs.covers(truth, start=MIN_LABELS).mean()
        br = baselines(X_t, L, budgets, n_base, np.random.default_rng(seed + 7919 * (t + 1)),
                       folds=FOLDS)
        e_ppi, e_cross, e_irt, c_ppi, c_irt = br.ppi, br.cross, br.irt, br.cov_ppi, br.cov_irt
        if log:
            print(f"  {Path(M.source).name} {scenario} target {t + 1}/{T}: design "
                  f"{rel[0, t, bidx.size // 2]:.2f} at M = {budgets[B // 2]} "
                  f"({time.time() - t0:.0f} s)", flush=True)
        rel[2, t] = ((e_ppi - truth) ** 2).mean(axis=0) / uvar
        rel[3, t] = ((e_cross - truth) ** 2).mean(axis=0) / uvar
        rel[4, t] = ((e_irt - truth) ** 2).mean(axis=0) / uvar
        cov_ppi[t], cov_irt[t] = c_ppi.mean(axis=0), c_irt.mean(axis=0)
        bias_irt[t] = (e_irt - truth).mean(axis=0)
    return ScenarioResult(Path(M.source).name, scenario, budgets, n_runs, n_base, N,
                          int(hist.sum()),
                          hf.rank, rel, cov_fixed, cov_any, cov_ppi, cov_irt, bias_irt,
                          S[targets].mean(axis=1), time.time() - t0)


def behaviour_probe() -> Probe:
    """The history experiment's behaviour probe (:mod:`activetest.experiments.probe`):
    :func:`run_scenario` (both designs with their intervals, PPI++, cross-PPI, IRT-style)
    on both scenarios of a tiny matrix, and the design's intervals themselves (the tables
    show only their coverage, which a tiny run barely moves). Self-contained (its imports
    inside), so that the re-keying tool can run it against an old checkout."""
    import tempfile
    from pathlib import Path

    from activetest.experiments.history import (
        MATRICES,
        adaptive_lure_theta,
        asymptotic_cs,
        feature_design,
        fixed_interval_curve,
        history_features,
        run_scenario,
        simulate_design,
    )
    from activetest.experiments.probe import BUDGETS, Probe, tiny_matrix
    from activetest.formats.history import read_response_matrix

    out = []
    with tempfile.TemporaryDirectory() as d:
        M = read_response_matrix(tiny_matrix(Path(d) / MATRICES["bbh"]))
    for sc in ("random", "cross"):
        r = run_scenario(M, sc, n_targets=3, n_runs=2, budgets=BUDGETS, seed=1,
                         baseline_runs=2)
        out += [r.rel, r.cov_fixed, r.cov_anytime, r.cov_ppi, r.cov_irt, r.bias_irt,
                r.accuracy, [r.rank, r.n_history, r.n_items, *r.budgets]]
    S = M.scores
    L, N = 1.0 - S[0], S.shape[1]
    runs = simulate_design(feature_design(history=history_features(S[2:], random_state=1)),
                           losses=L, labels=None, budget=36, n_runs=2, random_state=1,
                           model_var=True)
    th = adaptive_lure_theta(L[runs.indices], runs.q, N, runs.control, runs.control_rest)
    ci = fixed_interval_curve(th, N, model_var=runs.model_var)
    cs = asymptotic_cs(th, N, model_var=runs.model_var, value_range=(0.0, 1.0))
    return Probe.of("history", *out, runs.indices, th, ci.low, ci.high, cs.low, cs.high)


@functools.cache
def _probe() -> Probe:
    return behaviour_probe()


def _key(path: Path, scenario: str, n_targets: int, n_runs: object, budgets: tuple[int, ...],
         seed: int, cache: str | Path | None) -> str:
    """The cache key: the data file's content, the run parameters and the stored
    behaviour probe of ``cache`` that today's matches (:func:`behaviour_probe`,
    :func:`activetest.experiments.probe.probe_id`; a refactor that changes no number keeps
    the key, see :mod:`activetest.experiments.cache`)."""
    from activetest.experiments.cache import file_fingerprint
    h = hashlib.sha256()
    h.update(f"{path.name}:{file_fingerprint(path)}:{scenario}:{n_targets}:{n_runs}:{budgets}:"
             f"{seed}".encode())
    h.update(probe_id(cache, _probe()).encode())
    return h.hexdigest()[:20]


def study(root: str | Path, *, n_targets: int = 30, n_runs: int = 200,
          budgets: tuple[int, ...] = BUDGETS, seed: int = 0,
          scenarios: tuple[str, ...] = ("random", "cross"),
          matrices: tuple[str, ...] = tuple(MATRICES), cache: str | Path | None = None,
          baseline_runs: int = 0, cross_targets: int | None = None,
          cross_runs: int | None = None, log: bool = True) -> list[ScenarioResult]:
    """Run (or read from ``cache``, a folder of ``.npz``) every matrix x scenario;
    ``cross_runs``: runs of every method in the cross scenario (default ``n_runs`` and
    ``baseline_runs``)."""
    out = []
    for name in matrices:
        path = Path(root) / MATRICES[name]
        M = None
        for sc in scenarios:
            nt = n_targets if sc != "cross" or cross_targets is None else cross_targets
            nr, nb = ((n_runs, baseline_runs) if sc != "cross" or cross_runs is None
                      else (cross_runs, cross_runs))
            f = None
            if cache is not None:
                key = _key(path, sc, nt, (nr, nb), budgets, seed, cache)
                f = Path(cache) / f"history-{name}-{sc}-{key}.npz"
                if f.exists():
                    with np.load(f, allow_pickle=False) as z:
                        out.append(_from_npz(z))
                    if log:
                        print(f"{name}/{sc}: from cache {f}", flush=True)
                    continue
            if M is None:
                M = read_response_matrix(path)
            res = run_scenario(M, sc, n_targets=nt, n_runs=nr, budgets=budgets,
                               seed=seed, baseline_runs=nb, log=log)
            if log:
                print(f"{name}/{sc}: {res.seconds:.0f} s", flush=True)
            if f is not None:
                probe_id(cache, _probe(), store=True)  # the probe its key names
                f.parent.mkdir(parents=True, exist_ok=True)
                np.savez_compressed(f, **_to_npz(res))
            out.append(res)
    return out


_ARRAYS = ("rel", "cov_fixed", "cov_anytime", "cov_ppi", "cov_irt", "bias_irt", "accuracy")


def _to_npz(r: ScenarioResult) -> dict[str, np.ndarray]:
    d = {k: getattr(r, k) for k in _ARRAYS}
    d["meta"] = np.array([r.matrix, r.scenario])
    d["nums"] = np.array([r.runs, r.baseline_runs, r.n_items, r.n_history, r.rank, r.seconds])
    d["budgets"] = np.array(r.budgets)
    return d


def _from_npz(z: np.lib.npyio.NpzFile) -> ScenarioResult:
    nums = z["nums"]
    return ScenarioResult(str(z["meta"][0]), str(z["meta"][1]),
                          tuple(int(b) for b in z["budgets"]), int(nums[0]), int(nums[1]),
                          int(nums[2]), int(nums[3]), int(nums[4]),
                          *(z[k] for k in _ARRAYS[:6]), z["accuracy"], float(nums[5]))


def _f(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "-"


def render(results: list[ScenarioResult], command: str, level: int = 3) -> str:
    """Markdown tables of the study (each scenario under a heading of ``level``)."""
    lines = [f"Command: `{command}`.", ""]
    for r in results:
        T = r.rel.shape[1]
        lines += [f"{'#' * level} {r.matrix}, {r.scenario} ({T} held-out models, "
                  f"{r.n_history} history models, {r.n_items} items, factor rank {r.rank} "
                  "chosen on the history; "
                  f"per held-out model {r.runs} runs of each design, {r.baseline_runs} of "
                  "each uniform-draw baseline)", "",
                  "Median over held-out models of the relative squared error (mean squared "
                  "error over runs / uniform sampling's exact one; below 1 = better than "
                  "uniform); in brackets the share of held-out models above 1 (losing to "
                  "uniform) and the largest value.", "",
                  "| method | " + " | ".join(f"M = {b}" for b in r.budgets) + " |",
                  "|---|" + "---|" * len(r.budgets)]
        for k, name in enumerate(METHODS):
            cells = []
            for b in range(len(r.budgets)):
                v = r.rel[k, :, b]
                cells.append(f"{_f(np.median(v))} ({(v > 1).mean():.0%}, max {_f(v.max())})")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        for k, name in ((2, "PPI++"), (3, "cross-PPI")):
            d = np.median(r.rel[0] / r.rel[k], axis=0)
            lines.append(f"Median over held-out models of design / {name} (same features, same "
                         "number of labels): " + ", ".join(f"M = {b}: {_f(v)}" for b, v in
                                                           zip(r.budgets, d, strict=True))
                         + ".")
        lines += [
                  "", "Coverage of 95% intervals (mean over held-out models; the worst model "
                  "in brackets):", "",
                  "| interval | " + " | ".join(f"M = {b}" for b in r.budgets) + " |",
                  "|---|" + "---|" * len(r.budgets)]
        for name, c in (("design, fixed-budget", r.cov_fixed), ("PPI++ (ppi_py)", r.cov_ppi),
                        ("IRT-style, Bernoulli plug-in", r.cov_irt)):
            lines.append(f"| {name} | " + " | ".join(
                f"{c[:, b].mean():.3f} ({c[:, b].min():.2f})" for b in range(len(r.budgets)))
                + " |")
        lines += ["", f"Design, {ASYMPTOTIC_CS} over M = {MIN_LABELS}..{max(r.budgets)} "
                  f"at once: {r.cov_anytime.mean():.3f} (worst model "
                  f"{r.cov_anytime.min():.2f}). IRT-style mean error (estimate - truth) at "
                  + ", ".join(f"M = {b}: {np.mean(r.bias_irt[:, i]):+.4f} (largest "
                              f"|{np.abs(r.bias_irt[:, i]).max():.3f}|)"
                              for i, b in enumerate(r.budgets)) + ".",
                  f"Held-out accuracy {r.accuracy.min():.2f}-{r.accuracy.max():.2f}; "
                  f"{r.seconds:.0f} s.", ""]
    return "\n".join(lines)


def write_doc(doc: str | Path, text: str, section: str = "main") -> Path:
    """Replace the study's part of ``doc`` (between the section's markers,
    :func:`section_markers`) with ``text``."""
    begin, end = section_markers(section)
    p = Path(doc)
    old = p.read_text(encoding="utf-8") if p.exists() else f"{begin}\n{end}\n"
    if begin not in old or end not in old:
        old = old.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    a, rest = old.split(begin, 1)
    _, b = rest.split(end, 1)
    p.write_text(f"{a}{begin}\n{text}\n{end}{b}", encoding="utf-8")
    return p


def add_parser(sub: object) -> None:
    """Register ``history`` on the experiments' subcommands."""
    p = sub.add_parser("history", help="other models' results as features: held-out models "  # type: ignore[attr-defined]
                       "of the shared response matrices -> docs/history.md")
    p.add_argument("--root", default="../shared/datasets/history",
                   help="the response matrices' folder (default: %(default)s)")
    p.add_argument("--out", default="docs/history.md",
                   help="the doc written (default: %(default)s)")
    p.add_argument("--targets", type=int, default=30, help="held-out models (default: %(default)s)")
    p.add_argument("--runs", type=int, default=200,
                   help="runs of the design per held-out model (default: %(default)s)")
    p.add_argument("--baseline-runs", type=int, default=0,
                   help="runs of PPI++, cross-PPI, IRT-style (default --runs)")
    p.add_argument("--cross-targets", type=int, default=None,
                   help="held-out models of the cross-population scenario (default --targets)")
    p.add_argument("--budgets", type=int, nargs="*", default=list(BUDGETS),
                   help="label budgets (default: %(default)s)")
    p.add_argument("--matrices", nargs="*", default=list(MATRICES),
                   help="matrices (default: %(default)s)")
    p.add_argument("--scenarios", nargs="*", default=["random", "cross"],
                   help="held-out scenarios (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    p.add_argument("--cache", default="experiments/cache",
                   help="folder of cached results ('' for none)")
    p.add_argument("--cross-runs", type=int, default=None,
                   help="runs of every method in the cross-population scenario (default "
                   "--runs and --baseline-runs)")
    p.add_argument("--section", default="main",
                   help="which part of the doc to write: 'main' (the main tables) or a name "
                   "(between <!-- history-NAME:begin/end --> markers)")
    p.add_argument("--no-write", action="store_true", help="print, do not write the doc")


def main(args: object) -> None:
    """Run :func:`study` from parsed arguments and write (or print) the tables."""
    a = args
    res = study(a.root, n_targets=a.targets, n_runs=a.runs,  # type: ignore[attr-defined]
                budgets=tuple(a.budgets), seed=a.seed,  # type: ignore[attr-defined]
                scenarios=tuple(a.scenarios), matrices=tuple(a.matrices),  # type: ignore[attr-defined]
                cache=a.cache or None, baseline_runs=a.baseline_runs,  # type: ignore[attr-defined]
                cross_targets=a.cross_targets, cross_runs=a.cross_runs)  # type: ignore[attr-defined]
    cmd = (f"python -m activetest.experiments history --targets {a.targets} "  # type: ignore[attr-defined]
           f"--runs {a.runs} --baseline-runs {a.baseline_runs} "  # type: ignore[attr-defined]
           f"--cross-targets {a.cross_targets} "  # type: ignore[attr-defined]
           + (f"--cross-runs {a.cross_runs} " if a.cross_runs else "")  # type: ignore[attr-defined]
           + f"--matrices {' '.join(a.matrices)} "  # type: ignore[attr-defined]
           f"--budgets {' '.join(map(str, a.budgets))} "  # type: ignore[attr-defined]
           f"--seed {a.seed}"  # type: ignore[attr-defined]
           + (f" --section {a.section}" if a.section != "main" else ""))  # type: ignore[attr-defined]
    text = render(res, cmd, 3 if a.section == "main" else 5)  # type: ignore[attr-defined]
    if a.no_write:  # type: ignore[attr-defined]
        print(text)
    else:
        print(f"wrote {write_doc(a.out, text, a.section)}")  # type: ignore[attr-defined]
