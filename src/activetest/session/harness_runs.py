"""What a harness session spent and what uniform sampling would have needed: the target
runs counted by their labels' sources (:func:`runs_summary`), the runs a uniform sample
needs for the same anytime width (:func:`uniform_runs_for_width`, a projection), and
what the labels were read as (:func:`labels_from`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from activetest.session.harness_base import TOOL_NAMES, harness_config, is_target_run

__all__ = ["PROJECTION_RUNS", "UNIFORM_RUNS_METHOD", "RunsSummary", "labels_from",
           "runs_summary", "uniform_runs_for_width"]


#: Seeded uniform runs :func:`uniform_runs_for_width` simulates (fewer where each run
#: needs more than 10,000 draws: at most 1e6 draws in all, at least 30 runs); the Monte
#: Carlo SE of their median stop is about 1-3% of it (tests/session/test_lmeval_loop.py).
PROJECTION_RUNS = 100
_PROJECTION_DRAWS = 1_000_000


def _analytic_runs(S2: float, N: int, width: float, alpha: float, budget: int | None) -> int:
    """The first budget from 30 where ``2 SE_m f(tau_m) <= width`` with the exact
    finite-population ``SE_m^2 = S^2 (N - m) / (N m)`` (the deterministic projection;
    budgets searched in growing blocks, so a large pool costs what the answer needs)."""
    from activetest.stats.confseq import asymptotic_cs_multiplier, budget_cs_multiplier

    K = min(N, 4096)
    while True:
        m = np.arange(1, K + 1, dtype=np.float64)
        se = np.sqrt(S2 * (N - m) / (N * m))
        mult = (asymptotic_cs_multiplier(N, K, alpha=alpha) if budget is None
                else budget_cs_multiplier(N, K, int(budget), alpha=alpha))
        ok = np.flatnonzero((2 * se * mult <= width) & (m >= 30))
        if ok.size:
            return int(m[ok[0]])
        if K == N:
            return int(N)
        K = min(N, 8 * K)


def uniform_runs_for_width(p: float, N: int, width: float, *, alpha: float = 0.05,
                           budget: int | None = None, runs: int = PROJECTION_RUNS,
                           seed: int = 0, labels: int | None = None,
                           sure: bool = False) -> int:
    """Target runs a uniform sample (without replacement) needs for an anytime CS of
    ``width``, for a pool whose per-item results have mean ``p``: a projection by
    simulation, not a guarantee.

    The median, over ``runs`` seeded uniform samples of a pool of ``N`` items of which
    ``round(p N)`` are errors, of the first budget from 30 labels where the session's own
    CS family is at most ``width`` wide: :func:`activetest.stats.confseq.asymptotic_cs`
    (Hall's skewness correction, clipped to [0, 1]) tuned to the session's planned
    ``budget`` as its estimate's CS is, or the normal mixture of sessions without one
    (``budget=None``); with ``sure`` (a session recording ``sure_bounds``) cut as the
    session's is to what each run's labels make sure
    (:func:`activetest.session.estimate_base.sure_risk_curve`: the errors seen, plus at
    most one for each item not drawn), so that a pool nearly all drawn reaches any width,
    and a width of 0 (a point, as at a census) needs the whole pool. Simulated because a
    run's CS crosses the width when its own variance estimate does, and is
    skewness-corrected: the deterministic projection from
    ``p (1 - p)`` was 7-10% high near a planned budget, where the tuned CS is flat, and
    37% low for skewed results (docs/harness.md). The same arguments give the same number
    (a fixed seed).

    ``labels``: how many labels ``p`` was estimated from. An estimate at 0 or 1 (no error
    labelled yet, or no success) is no spread seen, not no spread: the pool is then given
    Laplace's rate ``(labels p + 1) / (labels + 2)``; without ``labels`` such a pool has
    no spread, and any run's CS is a point from 30 labels on (before 2026-12-04 sessions
    were told "about 30 target runs" that way, whatever the width)."""
    from activetest.session.estimate_base import cut_to_sure_arrays, sure_bounds_of_runs
    from activetest.stats.confseq import asymptotic_cs
    from activetest.stats.estimators import adaptive_lure_theta

    if not 0.0 <= p <= 1.0 or N < 1 or not width >= 0 or runs < 1:
        raise ValueError(f"need 0 <= p <= 1, N >= 1, width >= 0 and runs >= 1, got "
                         f"p={p!r}, N={N!r}, width={width!r}, runs={runs!r}")
    if width <= 1e-12:  # a point: the sure bounds of a census alone
        return int(N)
    n_err = min(max(round(p * N), 0), N)
    if n_err in (0, N) and labels is not None and labels >= 1:
        p = (labels * p + 1.0) / (labels + 2.0)  # Laplace's rule of succession
        n_err = min(max(round(p * N), 1), N - 1)
    if n_err in (0, N) or N <= 30:
        return min(30, N)  # no spread: any run's CS is a point from 30 labels on
    S2 = n_err * (N - n_err) / (N * max(N - 1, 1))  # the pool's variance (ddof 1)
    # each run's first H draws, without replacement (pool rows below n_err are the errors)
    analytic = _analytic_runs(S2, N, width, alpha, budget)
    H = min(N, 2 * analytic + 500)
    R = max(min(runs, _PROJECTION_DRAWS // H), min(runs, 30))
    rng = np.random.default_rng(seed)
    L = np.stack([rng.choice(N, size=H, replace=False) < n_err
                  for _ in range(R)]).astype(np.float64)
    q = np.broadcast_to(1.0 / (N - np.arange(H, dtype=np.float64)), L.shape)
    theta = adaptive_lure_theta(L, q, N)
    cs = asymptotic_cs(theta, N, alpha=alpha, value_range=(0.0, 1.0), budget=budget)
    lo, hi = (cut_to_sure_arrays(cs.low, cs.high, *sure_bounds_of_runs(L, N)) if sure
              else (cs.low, cs.high))
    ok = (hi - lo <= width) & (np.arange(1, H + 1) >= 30)
    stops = np.where(ok.any(axis=1), ok.argmax(axis=1) + 1.0, np.inf)
    med = float(np.median(stops))
    if not np.isfinite(med):  # most runs need more than the horizon (the pool, or twice
        return int(H)           # the deterministic projection): at least that many
    return int(np.ceil(med))


@dataclass(frozen=True)
class RunsSummary:
    """Target runs of a harness session.

    Attributes:
        drawn: items drawn (runs asked for).
        target_runs: labels that are the target's own results (source ``lm-eval:``,
            ``inspect:`` or ``inspect-log:``).
        person_labels: labels from anything else (a person's judgment).
        width: the current anytime interval's width (None before an estimate).
        uniform_runs: a uniform sample's projected runs for the same width (None
            without a width): :func:`uniform_runs_for_width` at the estimate.
        labels_from: what the target's results were read as (:func:`labels_from`;
            None: no result read yet, or not known).
        width_labels: the labels of the estimate ``width`` is of (None without one).
        tasks: the harness tasks the target's runs were of, as the session keeps them
            (an inspect eval's ``eval.task``; empty: none kept).
    """

    drawn: int
    target_runs: int
    person_labels: int
    width: float | None
    uniform_runs: int | None
    tool: str = "lm-eval"
    labels_from: str | None = None
    width_labels: int | None = None
    tasks: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data, ``width`` and ``uniform_runs`` named by what they are (QA:
        ``status --json`` gave both bare)."""
        out = asdict(self)
        out["width_interval"] = "the last recorded estimate's anytime confidence sequence"
        out["uniform_runs_method"] = UNIFORM_RUNS_METHOD
        return out


#: What :attr:`RunsSummary.uniform_runs` (and an inspect eval's ``uniform_runs``) is.
UNIFORM_RUNS_METHOD = ("a projection: the median of seeded simulated uniform runs to the same "
                       "anytime width, error rate = the estimate, with the session's "
                       "confidence-sequence family")


def labels_from(session: Any) -> str | None:
    """What a harness session's labels are, in words: for lm-eval, the per-item
    metric(s) its results were read as and their task(s), e.g. ``"lm-eval's per-item
    acc_mutual_info (task at_sst2_mi); the error rate is 1 - its mean"`` (QA: no output
    named the metric, ``--metric-key`` or the session's default); for inspect_ai, the
    evals' per-sample scores read as the task's judgment levels (QA: its estimate and
    report named nothing). None: not a harness session, or no result read yet."""
    h = harness_config(session)
    if h is not None and h.get("tool") == "inspect":
        evals = {str(lab.source) for lab in session.store.labels().values()
                 if is_target_run(lab.source)}
        if not evals:
            return None
        j = session.task.judgment
        levels = ", ".join(f"{lv} = {sc:g}" for lv, sc in zip(j.levels, j.scores, strict=True))
        target = (session.session_config.answer_files or {}).get("target") or {}
        tasks = target.get("tasks") if isinstance(target, Mapping) else None
        named = (f" of inspect task{'s' if len(tasks) > 1 else ''} "
                 f"{', '.join(repr(str(t)) for t in tasks)}"
                 if isinstance(tasks, list) and tasks else "")
        return (f"inspect_ai's per-sample scores ({len(evals)} eval(s){named} with "
                f"activetest.inspect.ActiveStopping; each score read as a judgment level: "
                f"{levels}); the error rate is 1 - their mean")
    if h is None or h.get("tool") != "lm-eval":
        return None
    read = [info for _, _, info in session.store.answers("target").values() if "metric" in info]
    metrics = sorted({str(info["metric"]) for info in read})
    if not metrics:
        return None
    tasks = sorted({str(info.get("lm_eval_task")) for info in read})
    return (f"lm-eval's per-item {', '.join(metrics)} ({'tasks' if len(tasks) > 1 else 'task'} "
            f"{', '.join(tasks)}); the error rate is 1 - its mean")


def runs_summary(session: Any) -> RunsSummary | None:
    """The target runs spent, and what uniform sampling would need (None: not a harness
    session). The width is the last estimate's anytime interval."""
    from activetest.stats.confseq import MIN_LABELS

    h = harness_config(session)
    if h is None:
        return None
    labels = session.store.labels().values()
    runs = sum(1 for lab in labels if is_target_run(lab.source))
    person = len(labels) - runs
    width = uniform = at = None
    for e in reversed(session.store.estimates()):
        if e.method != "lure":
            continue
        a = e.details.get("anytime") if isinstance(e.details, Mapping) else None
        if e.n_labels >= MIN_LABELS and isinstance(a, Mapping) and all(
                isinstance(a.get(k), (int, float)) for k in ("cs_low", "cs_high")):
            width = float(a["cs_high"]) - float(a["cs_low"])
            at = int(e.n_labels)
            if width > 0:
                uniform = uniform_runs_for_width(
                    min(max(e.estimate, 0.0), 1.0), session.n_items, width,
                    alpha=1 - (e.level or 0.95),
                    budget=session.session_config.planned_budget, labels=e.n_labels,
                    sure=bool(session.session_config.sure_bounds))
        break
    target = (session.session_config.answer_files or {}).get("target")
    kept = target.get("tasks") if isinstance(target, Mapping) else None
    return RunsSummary(len(session.acquisitions()), runs, person, width, uniform,
                       TOOL_NAMES.get(str(h.get("tool")), str(h.get("tool"))),
                       labels_from(session), at,
                       tuple(str(t) for t in kept) if isinstance(kept, list) else ())
