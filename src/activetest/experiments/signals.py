"""More signals in one calibrated design, on our own data (issue 21, item 6).

Usage::

    python -m activetest.experiments.signals                 # ~40 CPU-minutes from scratch
    python -m activetest.experiments.signals --runs 50 --budget 60 --out /tmp/s  # seconds

Reads the cached model outputs only (``experiments/outputs/*.npz`` and
``experiments/outputs/generative/squad.npz``; no model is run), writes
``docs/signals.md``; per-setting summaries are cached in ``experiments/cache/signals-paper.npz`` and
``signals-squad.npz``,
keyed by the data, the run parameters and :func:`behaviour_probe` (the numbers this
module's code paths give on a tiny problem; :mod:`activetest.experiments.probe`).

The question: today's designs reach a median relative squared error (active / uniform)
of 0.776 on the paper's 40 settings (the calibrated design, log loss;
docs/reproduction.md) and 0.67 on SQuAD (the fixed design on the target's sequence
probability, 1 - exact match; docs/generative.md). Do more label-free signals in the
same calibrated design do better, on the same runs?

Paper settings (log loss; the target runs on the pool, as in every paper setting):
the calibrated design with extra per-class signals
(:func:`activetest.stats.class_signals.class_signal_design`; prior = the setting's
surrogate, extra signals start at weight 0):

* ``today``: no extra signal (the calibrated design itself, bit for bit);
* ``+other model``: the other bundled model's few-shot log-probabilities (left out
  where they are the target's own, already in the model);
* ``+calibration``: the setting's surrogate's contextually calibrated probabilities
  (its calibrated *log*-probabilities differ from the raw ones by a constant per class
  and an item's normaliser, which the per-class centring removes; the probabilities
  differ non-linearly);
* ``+all``: the other model's log-probabilities, the probabilities of both few-shot
  models raw and calibrated, and the target's own probabilities (its confidence).

Every variant uses the uniforms of the reproduction's ``adaptive+cv_lure`` row
(``simulate``'s seed for ``"adaptive"``), the uniform baseline is the reproduction's,
and the error is charged as there (zero-shot targets: k labels against uniform's k +
n_shots). The four variants run on the first ``--runs`` (200) of the reproduction's
runs; ``today`` and ``+all`` (:data:`PRECISE_VARIANTS`) also on ``--precise-runs``
(3,000, all of them), where ``today`` is the reproduction's own cached row
(``experiments/cache/designs.npz``) and only ``+all`` is simulated.

SQuAD (loss 1 - exact match, test-set truth, both targets): the report's protocol
(:mod:`activetest.experiments.generative_report`), with

* ``conf:sum fixed``: today's best, the fixed design on ``p = 1 - exp(sum lp)``;
* ``graded``: the report's graded design on every feature (its own seed, as reported);
* ``features: confidence``: the feature design
  (:func:`activetest.stats.feature_design.feature_design`: prior ``p``, refits from 2
  labels) on the target's confidence ``[mean lp, min lp, answer tokens, finished]``;
* ``features: + other model``: plus the agreement F1 with the other model's answer and
  the other model's confidence in its own answer ``[mean, min, sum lp]``;
* ``features: + judges``: plus both in-context judges' log-odds (charged their 8
  judged examples).

The feature variants use the uniforms of ``conf:sum fixed``. Contextual calibration
does not apply to SQuAD's free-form answers (no classes; the judges' content-free
scores were not cached).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from activetest.experiments.cache import ResultCache
from activetest.experiments.outputs import DatasetOutputs
from activetest.experiments.paper import PAPER_BUDGETS, Setting, settings_for
from activetest.experiments.probe import Probe, probe_id
from activetest.stats import estimators as est
from activetest.stats import log_loss, simulate
from activetest.stats.adaptive import AdaptiveDesign, simulate_design
from activetest.stats.class_signals import class_signal_design
from activetest.stats.feature_design import feature_design
from activetest.stats.graded import graded_design, judge_log_odds, p_wrong_logprob
from activetest.stats.sampler import sample
from activetest.stats.simulate import seed_for

__all__ = ["PAPER_VARIANTS", "PRECISE_VARIANTS", "SQUAD_VARIANTS", "SquadPool",
           "behaviour_probe", "load_squad", "main", "paper_signals", "run_paper_setting",
           "run_squad_target"]

PAPER_VARIANTS = ("today", "+other model", "+calibration", "+all")
#: The variants re-run on all of the reproduction's runs (``--precise-runs``): today's
#: design and the best variant at 200 runs, paired on the same runs.
PRECISE_VARIANTS = ("today", "+all")
SQUAD_VARIANTS = ("conf:sum fixed", "graded", "features: confidence",
                  "features: + other model", "features: + judges")
#: The reported numbers this experiment asks about (docs/reproduction.md, docs/generative.md).
REPORTED = {"paper": 0.776, "squad": 0.67}
FLOOR = 0.1
#: The results caches, one per part (so the two parts can run as separate processes).
DEFAULT_CACHE = {"paper": Path("experiments/cache/signals-paper.npz"),
                 "squad": Path("experiments/cache/signals-squad.npz")}
DEFAULT_SQUAD = Path("experiments/outputs/generative/squad.npz")


# ------------------------------------------------------------------ paper settings
def paper_signals(data: DatasetOutputs, setting: Setting, variant: str) -> list[np.ndarray]:
    """The extra per-class signals of ``variant`` (module docstring) for one setting;
    signals identical to one already in the model (or to one another) are left out."""
    out = data.outputs
    tgt = out[setting.target].pool
    sur_model = setting.surrogate.split("/")[0]
    fews = sorted(k for k in out if k.endswith("/few"))
    others = [k for k in fews if k.split("/")[0] != sur_model]
    cals = [k for k in sorted(out) if k.endswith("/few-cal")]
    own_cal = [k for k in cals if k.split("/")[0] == sur_model]
    if variant == "today":
        sig: list[np.ndarray] = []
    elif variant == "+other model":
        sig = [out[k].pool for k in others]
    elif variant == "+calibration":
        sig = [np.exp(out[k].pool) for k in own_cal]
    elif variant == "+all":
        sig = ([out[k].pool for k in others] + [np.exp(out[k].pool) for k in fews]
               + [np.exp(out[k].pool) for k in cals] + [np.exp(tgt)])
    else:
        raise ValueError(f"unknown variant {variant!r}; expected one of "
                         f"{', '.join(PAPER_VARIANTS)}")
    sur = out[setting.surrogate].pool
    kept: list[np.ndarray] = []
    for a in sig:
        if not any(np.array_equal(a, h) for h in (sur, tgt, *kept)):
            kept.append(a)
    return kept


def _truth(data: DatasetOutputs, setting: Setting) -> float:
    tgt = data.outputs[setting.target]
    if data.pool_is_truth:
        return float(log_loss(tgt.pool, data.pool_labels).mean())
    return float(log_loss(tgt.test, data.test_labels).mean())


def _relative(mse: np.ndarray, base: np.ndarray, budget: int, offset: int, total: int
              ) -> np.ndarray:
    rel = np.full(budget, np.nan)
    k = np.arange(1, budget + 1)
    ok = k + offset <= total
    with np.errstate(divide="ignore", invalid="ignore"):
        rel[ok] = mse[k[ok] - 1] / base[k[ok] + offset - 1]
    return rel


def run_paper_setting(data: DatasetOutputs, setting: Setting, *, n_runs: int, budget: int,
                      seed: int, variants: Sequence[str] = PAPER_VARIANTS
                      ) -> dict[str, np.ndarray]:
    """``variant -> (budget,)`` relative error (active / uniform, charged as the
    reproduction charges it) on the reproduction's runs of one setting; also ``"k:<variant>"``
    the number of extra signals."""
    tgt, sur = data.outputs[setting.target], data.outputs[setting.surrogate]
    y = data.pool_labels
    n = len(y)
    offset = data.n_shots if setting.zero_shot else 0
    total = min(budget + offset, n)
    truth = _truth(data, setting)
    sim = simulate(target_logprobs=tgt.pool, labels=y, surrogate_logprobs=sur.pool,
                   methods=["uniform+mean"], budget=total, n_runs=n_runs, truth=truth,
                   random_state=seed, proposal_floor=FLOOR)
    base = sim.median_squared_error("uniform+mean")
    L = log_loss(tgt.pool, y)
    out: dict[str, np.ndarray] = {}
    for v in variants:
        sig = paper_signals(data, setting, v)
        design = class_signal_design(tgt.pool, sur.pool, sig)
        runs = simulate_design(design, losses=L, labels=y, budget=total, n_runs=n_runs,
                               random_state=seed_for(seed, "adaptive"))
        mse = np.median((runs.curve(L) - truth) ** 2, axis=0)
        out[v] = _relative(mse, base, budget, offset, total)
        out[f"k:{v}"] = np.array([float(len(sig))])
    return out


# ------------------------------------------------------------------ SQuAD
@dataclass(frozen=True)
class SquadPool:
    """One SQuAD target's arrays: pool then test scores, pool features.

    Attributes:
        target: the model's name.
        em: ``(n_pool + n_test,)`` exact match of the target's answers.
        conf: ``(n_pool, 5)`` the target's ``[mean lp, min lp, sum lp, answer tokens,
            finished]``.
        other: ``(n_pool, 4)`` ``[agreement F1 with the other model's answer, the other
            model's mean, min, sum lp]``.
        judges: ``(J, n_pool, 2)`` judges' log-probs ``[no, yes]``.
        n_pool, n_judge: pool size; judged examples each judge saw (charged).
    """

    target: str
    em: np.ndarray
    conf: np.ndarray
    other: np.ndarray
    judges: np.ndarray
    n_pool: int
    n_judge: int


def load_squad(path: str | Path = DEFAULT_SQUAD) -> dict[str, SquadPool]:
    """The per-target pools of ``squad.npz`` (layout: :mod:`activetest.experiments.generative`)."""
    d = np.load(path)
    nj, npool = int(d["n_judge"]), int(d["n_pool"])
    targets = sorted({k.split("/")[0] for k in d.files if k.endswith("/em")})
    ev, P = slice(nj, None), slice(0, npool)
    out = {}
    for t in targets:
        (o,) = [x for x in targets if x != t]

        def col(key: str) -> np.ndarray:
            return d[key][ev].astype(np.float64)[P]
        conf = np.column_stack([col(f"{t}/mean_lp"), col(f"{t}/min_lp"), col(f"{t}/sum_lp"),
                                col(f"{t}/n_tokens"), col(f"{t}/finished")])
        other = np.column_stack([col(f"{t}/agree:{o}"), col(f"{o}/mean_lp"),
                                 col(f"{o}/min_lp"), col(f"{o}/sum_lp")])
        judges = np.stack([d[k].astype(np.float64)[P] for k in sorted(d.files)
                           if k.startswith(f"{t}/judge:")])
        out[t] = SquadPool(t, d[f"{t}/em"][ev].astype(np.float64), conf, other, judges,
                           npool, nj)
    return out


def _rng(seed: int, *names: str) -> np.random.Generator:
    """The report's seeding (:func:`activetest.experiments.generative_report._rng`)."""
    return np.random.default_rng(np.random.SeedSequence(
        [int(seed), *(zlib.crc32(n.encode()) for n in names)]))


def _squad_design(pool: SquadPool, variant: str) -> tuple[AdaptiveDesign, int, str]:
    """(design, labels charged, seed name) of one SQuAD variant."""
    c = pool.conf
    p = p_wrong_logprob(c[:, 2])
    judges = [judge_log_odds(j) for j in pool.judges]
    if variant == "conf:sum fixed":
        return (AdaptiveDesign.fixed(np.sqrt(p * (1 - p)), p, lam=None, name="fixed"), 0,
                "conf:sum fixed")
    if variant == "graded":
        return (graded_design(mean_lp=c[:, 0], min_lp=c[:, 1], sum_lp=c[:, 2],
                              agreement=[pool.other[:, 0]], judges=list(pool.judges)),
                pool.n_judge if len(judges) else 0, "graded")
    cols = [c[:, [0, 1, 3, 4]]]
    charged = 0
    if variant in ("features: + other model", "features: + judges"):
        cols.append(pool.other)
    if variant == "features: + judges":
        cols += [j[:, None] for j in judges]
        charged = pool.n_judge if judges else 0
    if variant not in SQUAD_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of "
                         f"{', '.join(SQUAD_VARIANTS)}")
    return feature_design(features=np.hstack(cols), prior=p), charged, "conf:sum fixed"


def run_squad_target(pool: SquadPool, *, n_runs: int, budget: int, seed: int,
                     variants: Sequence[str] = SQUAD_VARIANTS) -> dict[str, np.ndarray]:
    """``variant -> (budget,)`` relative error (1 - exact match, test-set truth) of one
    target, the report's uniform baseline and charging; ``"pool:<variant>"`` the same
    against the pool risk."""
    n = pool.n_pool
    L = 1.0 - pool.em[:n]
    truth = float(1.0 - pool.em[n:].mean())
    risk = float(L.mean())
    total = min(budget + pool.n_judge, n)
    idx, _ = sample(np.ones(n), total, n_runs=n_runs, proposal_floor=FLOOR,
                    random_state=_rng(seed, pool.target, "em", "uniform"))
    uni = est.uniform_mean_curve(L[idx])
    out: dict[str, np.ndarray] = {}
    for v in variants:
        design, charged, name = _squad_design(pool, v)
        runs = simulate_design(design, losses=L, labels=None, budget=budget, n_runs=n_runs,
                               random_state=_rng(seed, pool.target, "em", name))
        curve = runs.curve(L)
        for key, value in ((v, truth), (f"pool:{v}", risk)):
            base = np.median((uni - value) ** 2, axis=0)
            mse = np.median((curve[:, :budget] - value) ** 2, axis=0)
            out[key] = _relative(mse, base, budget, charged, total)
    return out


# ------------------------------------------------------------------ probe, cache
def _tiny_data() -> DatasetOutputs:
    """The probe's tiny dataset (:func:`activetest.experiments.probe._tiny_outputs`) with
    two few-shot models and their calibrated versions."""
    from activetest.experiments.outputs import ModelOutputs
    from activetest.experiments.probe import _tiny_outputs
    from activetest.stats.losses import log_softmax

    data = _tiny_outputs()
    assert isinstance(data, DatasetOutputs)
    for k, shift in (("a", (0.7, -0.2)), ("b", (-0.4, 0.5))):
        few = data.outputs[f"{k}/few"]
        s = np.array(shift)
        data.outputs[f"{k}/few-cal"] = ModelOutputs(log_softmax(few.pool - s),
                                                    log_softmax(few.test - s))
    return data


def _tiny_squad() -> SquadPool:
    rng = np.random.default_rng(11)
    n, nt = 60, 40
    z = rng.normal(size=n + nt)
    em = (rng.random(n + nt) < 1 / (1 + np.exp(-z))).astype(float)
    lp = -np.abs(rng.normal((1 - z[:n])[:, None], 1, (n, 3)))
    conf = np.column_stack([lp, rng.integers(1, 9, n), rng.random(n) < 0.9])
    other = np.column_stack([rng.random(n), -np.abs(rng.normal(size=(n, 3)))])
    j = rng.normal(z[:n, None], 1, (2, n, 2))
    judges = j - np.logaddexp(j[..., :1], j[..., 1:])
    return SquadPool("tiny", em, conf.astype(float), other, judges, n, 3)


@cache
def behaviour_probe() -> Probe:
    """Every variant's numbers on a tiny classification dataset (a zero-shot and a
    few-shot target) and a tiny SQuAD-like pool (:mod:`.probe`)."""

    data = _tiny_data()
    nums = []
    for target in ("a/zero", "a/few"):
        r = run_paper_setting(data, Setting("probe", target, "b/few"), n_runs=3, budget=15,
                              seed=1)
        nums += [r[k] for k in sorted(r)]
    r = run_squad_target(_tiny_squad(), n_runs=3, budget=15, seed=1)
    nums += [r[k] for k in sorted(r)]
    return Probe.of("signals", *nums)


def _probe_part(store: ResultCache, save: bool = False) -> str:
    """The behaviour part of a key in ``store``: the id of the probe stored beside it that
    today's :func:`behaviour_probe` matches (:func:`activetest.experiments.probe.probe_id`;
    ``save``: today's stored when none does, as when an entry is stored)."""
    return probe_id(None if store.path is None else store.path.parent, behaviour_probe(),
                    store=save)


def _paper_key(store: ResultCache, data: DatasetOutputs, setting: Setting, n_runs: int,
               budget: int, seed: int, variants: Sequence[str] = PAPER_VARIANTS) -> str:
    arrays = [data.outputs[k].pool for k in sorted(data.outputs)]
    return ResultCache.key("signals-paper", _probe_part(store), setting.label, *arrays,
                           data.pool_labels, _truth(data, setting), data.n_shots,
                           n_runs, budget, seed, tuple(variants))


def _squad_key(store: ResultCache, pool: SquadPool, n_runs: int, budget: int, seed: int
               ) -> str:
    return ResultCache.key("signals-squad", _probe_part(store), pool.target, pool.em,
                           pool.conf, pool.other, pool.judges, pool.n_judge, n_runs, budget,
                           seed, SQUAD_VARIANTS)


# ------------------------------------------------------------------ report
def _at(rel: np.ndarray, budgets: Sequence[int]) -> list[float]:
    return [float(rel[b - 1]) if b <= len(rel) else float("nan") for b in budgets]


def _table(rows: dict[str, list[tuple[str, np.ndarray]]], variants: Sequence[str],
           budgets: Sequence[int], group_names: dict[str, str], ref: str) -> list[str]:
    """Markdown: per variant the median over groups and budgets, per group, per budget,
    settings losing to uniform at the largest budget and the worst there, the share of
    (setting, budget) cells where the variant beats the reference row and the median of
    its paired ratio to the reference row over those cells."""
    top = max(budgets)
    groups = list(rows)
    lines = ["| design | median | " + " | ".join(group_names.get(g, g) for g in groups)
             + " | " + " | ".join(f"at {b}" for b in budgets)
             + f" | losing to uniform at {top} | worst at {top} | cells below {ref} "
             f"| median ratio to {ref} |",
             "|---|---|" + "---|" * (len(groups) + len(budgets)) + "---|---|---|---|"]
    for v in variants:
        cells = {g: [_at(d[v], budgets) for _, d in rows[g]] for g in groups}
        refc = {g: [_at(d[ref], budgets) for _, d in rows[g]] for g in groups}
        allv = np.array([x for g in groups for r in cells[g] for x in r])
        allr = np.array([x for g in groups for r in refc[g] for x in r])
        last = np.array([r[-1] for g in groups for r in cells[g]])
        ok = np.isfinite(allv) & np.isfinite(allr)
        below = "-" if v == ref else f"{(allv[ok] < allr[ok]).mean():.0%}"
        ratio = "-" if v == ref else f"{np.median(allv[ok] / allr[ok]):.3f}"
        lines.append(
            f"| {v} | **{np.nanmedian(allv):.3f}** | "
            + " | ".join(f"{np.nanmedian(cells[g]):.2f}" for g in groups) + " | "
            + " | ".join(f"{np.nanmedian([r[j] for g in groups for r in cells[g]]):.2f}"
                         for j in range(len(budgets)))
            + f" | {(last > 1).sum()}/{last.size} | {np.nanmax(last):.2f} | {below} "
            f"| {ratio} |")
    return lines


def _paired(rows: dict[str, list[tuple[str, np.ndarray]]], v: str, ref: str,
            budgets: Sequence[int]) -> tuple[float, float]:
    """Median over (setting, budget) cells of ``v``'s ratio to ``ref``, and the share of
    cells where ``v`` is below ``ref``."""
    a = np.array([x for g in rows for _, d in rows[g] for x in _at(d[v], budgets)])
    b = np.array([x for g in rows for _, d in rows[g] for x in _at(d[ref], budgets)])
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.median(a[ok] / b[ok])), float((a[ok] < b[ok]).mean())


def _verdict(today: float, val: float, low: int, n: int, p: float) -> str:
    """Whether more signals beat today's design: a median lower by more than 0.01 *and*
    lower in a significant majority of the settings (two-sided sign test, p < 0.05). The
    gap it prints is that of the two medians as printed (three decimals), so a reader
    gets it back from them."""
    gap = round(today, 3) - round(val, 3)
    if val < today - 0.01 and low > n / 2 and p < 0.05:
        return f"more signals **beat** today's design (by {gap:.3f})."
    if val > today + 0.01 and low < n / 2 and p < 0.05:
        return "more signals do **worse** than today's design."
    if val < today - 0.01:
        return (f"a median lower by {gap:.3f}, but not in a significant majority of "
                "the settings (a gain on some datasets, a loss on others): more signals do "
                "**not** measurably beat today's design.")
    return "more signals do **not** measurably beat today's design."


def _sign_test(rows: dict[str, list[tuple[str, np.ndarray]]], v: str, ref: str,
               budgets: Sequence[int]) -> tuple[int, int, float]:
    """Settings where ``v`` is below ``ref`` (median over the budgets of the paired
    ratio), the settings compared, and the two-sided sign test's p-value (ties left out):
    the settings, not the correlated budgets of one setting, are the independent units."""
    from scipy.stats import binomtest

    r = [np.nanmedian(np.array(_at(d[v], budgets)) / np.array(_at(d[ref], budgets)))
         for g in rows for _, d in rows[g]]
    r = np.array([x for x in r if np.isfinite(x) and x != 1.0])
    low = int((r < 1).sum())
    return low, r.size, float(binomtest(low, r.size).pvalue) if r.size else 1.0


def _median(rows: dict[str, list[tuple[str, np.ndarray]]], v: str,
            budgets: Sequence[int]) -> float:
    return float(np.nanmedian([x for g in rows for _, d in rows[g] for x in _at(d[v], budgets)]))


_KEPT = re.compile(r"<!-- begin ([\w-]+) -->.*?<!-- end \1 -->", re.S)


def _kept_sections(path: Path) -> list[str]:
    """Hand-written sections of an existing report (between ``<!-- begin NAME -->`` and
    ``<!-- end NAME -->``), kept when the report is regenerated."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    return [x for m in _KEPT.finditer(text) for x in (m.group(0), "")]


def write_report(paper: dict[str, list[tuple[str, dict[str, np.ndarray]]]],
                 squad: dict[str, dict[str, np.ndarray]], path: Path, *, n_runs: int,
                 squad_runs: int, budget: int, seed: int, command: str, elapsed: float,
                 hits: int, entries: int, reproduced: float | None,
                 precise: dict[str, list[tuple[str, dict[str, np.ndarray]]]] | None = None,
                 precise_runs: int = 0) -> Path:
    """``docs/signals.md`` from the per-setting and per-target results (``precise``:
    :data:`PRECISE_VARIANTS` on ``precise_runs`` runs per setting, or empty)."""
    budgets = [b for b in PAPER_BUDGETS if b <= budget]
    names = {"sst2": "SST-2", "subj": "Subj", "fpb": "FPB", "hs": "HS", "mmlu": "MMLU"}
    lines = ["# More signals in one calibrated design, on our own data", "",
             f"Generated by `{command}` in {elapsed:.0f} s from the cached model outputs "
             f"(`experiments/outputs/*.npz`, `experiments/outputs/generative/squad.npz`; no "
             f"model is run; {hits} of {entries} cached summaries hit in "
             "`experiments/cache/signals-{paper,squad}.npz`, keyed by the data, the run "
             "parameters and the behaviour probe of `src/activetest/experiments/signals.py`). Seed "
             f"{seed}, budgets {', '.join(map(str, budgets))}; relative error = median "
             "squared error over runs / uniform sampling's on the same budget (charged as "
             "in the reports: zero-shot targets and judges pay their in-context labels). "
             "Nothing was tuned on the truth: the variants were fixed before the first run.",
             ""]
    head: list[str] = []
    if paper:
        p_today = _median(paper, "today", budgets)
        p_best = min(PAPER_VARIANTS[1:], key=lambda v: _median(paper, v, budgets))
        p_val = _median(paper, p_best, budgets)
        n_set = sum(len(r) for r in paper.values())
        ratio, below = _paired(paper, p_best, "today", budgets)
        p_low, p_all, p_p = _sign_test(paper, p_best, "today", budgets)
        head.append(
            f"- **The paper's {n_set} settings (log loss)**: on the same {n_runs:,} runs per "
            f"setting (the first {n_runs:,} of the reproduction's 3,000, design and uniform "
            f"alike) today's calibrated design has {p_today:.3f} and the best variant with "
            f"more signals, `{p_best}`, {p_val:.3f} (paired: median ratio to today "
            f"{ratio:.3f}, below today in {below:.0%} of the (setting, budget) cells; lower "
            f"in {p_low} of {p_all} settings, sign test p = {p_p:.2g}). "
            + f"On these runs: {_verdict(p_today, p_val, p_low, p_all, p_p)} "
            + f"Today's design on all 3,000 runs: {REPORTED['paper']} (reported"
            + (f"; {reproduced:.3f} from the reproduction's cache"
               if reproduced is not None else "")
            + ")"
            + ("." if precise else
               f"; the variants were not run on 3,000, so whether {REPORTED['paper']} is "
               "beaten at that precision is not measured here."))
    if paper and precise:
        q_set = sum(len(r) for r in precise.values())
        q_today = _median(precise, "today", budgets)
        q_best = PRECISE_VARIANTS[-1]
        q_val = _median(precise, q_best, budgets)
        q_ratio, q_below = _paired(precise, q_best, "today", budgets)
        k_low, k_all, p_sign = _sign_test(precise, q_best, "today", budgets)
        verdict = f"At this precision: {_verdict(q_today, q_val, k_low, k_all, p_sign)}"
        head.append(
            f"- **At {precise_runs:,} runs per setting** ("
            + (f"the paper's {q_set} settings" if q_set == n_set else
               f"{q_set} of the paper's {n_set} settings, the others not run yet")
            + ", the "
            f"reproduction's runs, design and uniform alike; `{q_best}` was chosen as the "
            f"best variant on the first {n_runs:,} of them): today's design {q_today:.3f} "
            f"(reported {REPORTED['paper']}), `{q_best}` {q_val:.3f} (paired: median ratio "
            f"to today {q_ratio:.3f}, below today in {q_below:.0%} of the (setting, budget) "
            f"cells; lower in {k_low} of {k_all} settings by the median over the budgets of "
            f"the paired ratio, two-sided sign test p = {p_sign:.2g}). " + verdict)
    if squad:
        srows = {t: [(t, r)] for t, r in squad.items()}
        s_today = _median(srows, "conf:sum fixed", budgets)
        s_feat = [v for v in SQUAD_VARIANTS if v.startswith("features")]
        s_best = min(s_feat, key=lambda v: _median(srows, v, budgets))
        s_val = _median(srows, s_best, budgets)
        prow = {t: [(t, {v: r[f"pool:{v}"] for v in SQUAD_VARIANTS})] for t, r in squad.items()}
        p_best_s = min(SQUAD_VARIANTS[1:], key=lambda v: _median(prow, v, budgets))
        head.append(
            f"- **SQuAD (1 - exact match, test-set truth)**: today's `conf:sum fixed` "
            f"{s_today:.3f} on the report's {squad_runs:,} runs per target (reported "
            f"{REPORTED['squad']}); best feature design `{s_best}` {s_val:.3f}. "
            + ("More signals do **not** beat it" if s_val > s_today - 0.01 else
               "More signals beat it")
            + f". Against the pool risk: `conf:sum fixed` "
            f"{_median(prow, 'conf:sum fixed', budgets):.3f}, best `{p_best_s}` "
            f"{_median(prow, p_best_s, budgets):.3f}.")
    lines += ["## Answer", "", *head, ""]
    if paper:
        lines += [f"## The paper's {n_set} settings (log loss, target on the pool)", "",
                  "The calibrated design (`activetest.stats.adaptive`) with extra per-class "
                  "signals (`activetest.stats.class_signals`): the prior is the setting's "
                  "surrogate, every extra signal starts at weight 0 and is weighed by the "
                  "labels (ridge by evidence at each refit). `today` is the calibrated design "
                  "itself (bit for bit); `+other model` adds the other bundled model's few-shot "
                  "log-probabilities (where they are not the target's own); `+calibration` the "
                  "surrogate's contextually calibrated probabilities; `+all` the other model's "
                  "log-probabilities, both few-shot models' probabilities raw and calibrated, "
                  "and the target's probabilities. All on the same runs (the reproduction's "
                  "uniforms for `adaptive+cv_lure`) against the same uniform runs.", "",
                  *_table(paper, PAPER_VARIANTS, budgets, names, "today"), ""]
        ks = {v: sorted({int(d[f"k:{v}"][0]) for g in paper for _, d in paper[g]})
              for v in PAPER_VARIANTS}
        lines += ["Extra signals per setting: " + "; ".join(
            f"{v} {'/'.join(map(str, k))}" for v, k in ks.items()) + ".", ""]
    if paper and precise:
        lines += [f"### The same at {precise_runs:,} runs per setting: "
                  f"{' and '.join(f'`{v}`' for v in PRECISE_VARIANTS)}", "",
                  f"The reproduction's {precise_runs:,} runs per setting (its uniforms for "
                  "`adaptive+cv_lure` and its uniform baseline; the first "
                  f"{n_runs:,} are the runs above), so `today` is the reproduction's "
                  f"`adaptive+cv_lure` row. Both designs on the same runs, {q_set} settings.",
                  "",
                  *_table(precise, PRECISE_VARIANTS, budgets, names, "today"), ""]
    if squad:
        srows = {t: [(t, r)] for t, r in squad.items()}
        lines += ["## SQuAD (1 - exact match, test-set truth)", "",
                  "`conf:sum fixed` and `graded` as in docs/generative.md (the report's seeds); "
                  "the feature design (`activetest.stats.feature_design.feature_design`, prior "
                  "1 - exp(sum lp), refits from 2 labels) on the target's confidence `[mean lp, "
                  "min lp, answer tokens, finished]`, then with the other model (agreement F1 "
                  "and its confidence in its own answer), then with both judges (charged 8 "
                  "labels). The feature rows use the `conf:sum fixed` row's uniforms.", "",
                  *_table(srows, SQUAD_VARIANTS, budgets, {}, "conf:sum fixed"), "",
                  "Against the pool risk (what the estimators are unbiased for):", "",
                  *_table({t: [(t, {v: r[f"pool:{v}"] for v in SQUAD_VARIANTS})]
                           for t, r in squad.items()}, SQUAD_VARIANTS, budgets, {},
                          "conf:sum fixed"), ""]
    lines += [*_kept_sections(path), "## Re-running", "",
              "`python -m activetest.experiments.signals` (cached summaries: seconds; from "
              "scratch about 9 CPU-minutes, measured 2026-12-02 as 37 min wall for the paper "
              "part and 19 min for SQuAD at a load average of 10-20 on 2 cores, `nice -n 10`; "
              "the precise part, `+all` on 3,000 runs per setting with today's rows from the "
              "reproduction's cache, about 45 CPU-seconds per setting, 30 CPU-minutes in all, "
              "measured 2026-12-02 on the same machine at a load average of 11-16, where it "
              "took 73 min of wall time in 4-8 processes at `nice -n 15`; `--precise-runs 0` "
              "skips it, `--precise-cached-only` "
              "shows the settings already cached; "
              "`--runs`/`--squad-runs`/`--budget` shrink it, `--no-paper`/`--no-squad` run "
              "one part, `--no-cache` recomputes). CI runs a reduced version "
              "(`tests/experiments/test_signals.py`).", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _reproduction_row(data: DatasetOutputs, setting: Setting, n_runs: int, budget: int,
                      seed: int, store: ResultCache | None = None) -> np.ndarray | None:
    """The reproduction's cached ``adaptive+cv_lure`` relative error of one setting (its
    key rule, :class:`activetest.experiments.reproduce._Designs`; the same design, runs,
    uniform baseline and charging as ``today`` here, bit for bit:
    ``tests/experiments/test_signals.py``), or None when
    ``experiments/cache/designs.npz`` has no entry for it under today's probe."""
    from activetest.experiments.paper import DESIGN_METHODS
    from activetest.experiments.reproduce import DEFAULT_CACHE, _code

    if store is None:
        if not DEFAULT_CACHE.exists():
            return None
        store = ResultCache(DEFAULT_CACHE)
    key = ResultCache.key(_code(store.path), data.outputs[setting.target].pool,
                          data.outputs[setting.surrogate].pool, data.pool_labels,
                          _truth(data, setting), data.n_shots if setting.zero_shot else 0,
                          n_runs, budget, seed, DESIGN_METHODS)
    got = store.get(key, ["rel:adaptive+cv_lure"])
    return None if got is None else got["rel:adaptive+cv_lure"]


def _reproduced(outputs: Path, budget: int, seed: int) -> float | None:
    """Median of the reproduction's cached ``adaptive+cv_lure`` rows (3,000 runs;
    :func:`_reproduction_row`), None unless every one of the 40 settings is in
    ``experiments/cache/designs.npz`` under today's probe."""
    from activetest.experiments.reproduce import DEFAULT_CACHE

    if not DEFAULT_CACHE.exists():
        return None
    store = ResultCache(DEFAULT_CACHE)
    budgets = [b for b in PAPER_BUDGETS if b <= budget]
    vals: list[float] = []
    for f in sorted(outputs.glob("*.npz")):
        data = DatasetOutputs.load(f)
        for s in settings_for(data):
            row = _reproduction_row(data, s, 3000, budget, seed, store)
            if row is None:
                return None
            vals += _at(row, budgets)
    return float(np.nanmedian(vals)) if vals else None


def _paper_cached(store: ResultCache, data: DatasetOutputs, setting: Setting, *, n_runs: int,
                  budget: int, seed: int, variants: Sequence[str],
                  reproduction: ResultCache | None = None, compute: bool = True
                  ) -> dict[str, np.ndarray] | None:
    """:func:`run_paper_setting` through the results cache (key: :func:`_paper_key`);
    ``compute=False``: None where the cache has no entry.

    ``reproduction``: the reproduction's results cache; where it holds this setting's
    ``adaptive+cv_lure`` row for these runs, ``today`` is taken from it instead of being
    simulated again (the same numbers: :func:`_reproduction_row`)."""
    key = _paper_key(store, data, setting, n_runs, budget, seed, variants)
    names = [*variants, *(f"k:{v}" for v in variants)]
    got = store.get(key, names)
    if got is None and compute:
        known: dict[str, np.ndarray] = {}
        if "today" in variants and reproduction is not None:
            row = _reproduction_row(data, setting, n_runs, budget, seed, reproduction)
            if row is not None:
                known = {"today": row, "k:today": np.zeros(1)}
        todo = [v for v in variants if v not in known]
        print(f"  {data.dataset}: {setting.label} ({n_runs:,} runs: {', '.join(todo)}"
              + ("; today from the reproduction's cache" if known else "") + ")", flush=True)
        got = {**known, **run_paper_setting(data, setting, n_runs=n_runs, budget=budget,
                                            seed=seed, variants=todo)}
        _probe_part(store, save=True)  # the probe its key names
        store.put(key, got)
        store.save()  # after every setting: an interrupted run keeps what it computed
    return got


def main(argv: Sequence[str] | None = None) -> None:
    """Command line (module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m activetest.experiments.signals")
    ap.add_argument("--outputs", default="experiments/outputs")
    ap.add_argument("--squad", default=str(DEFAULT_SQUAD))
    ap.add_argument("--out", default="docs")
    ap.add_argument("--runs", type=int, default=200, help="runs per paper setting")
    ap.add_argument("--precise-runs", type=int, default=3000,
                    help=f"runs per paper setting for {' and '.join(PRECISE_VARIANTS)} "
                    "(paired; 0: skip)")
    ap.add_argument("--precise-cached-only", action="store_true",
                    help="show only the --precise-runs settings already in the cache")
    ap.add_argument("--squad-runs", type=int, default=3000, help="runs per SQuAD target")
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", nargs="*", default=None)
    ap.add_argument("--no-paper", action="store_true")
    ap.add_argument("--no-squad", action="store_true")
    ap.add_argument("--cache-dir", default=str(DEFAULT_CACHE["paper"].parent),
                    help="folder of signals-paper.npz and signals-squad.npz")
    ap.add_argument("--no-cache", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    stores = {part: ResultCache(None if a.no_cache else Path(a.cache_dir) / p.name)
              for part, p in DEFAULT_CACHE.items()}
    store = stores["paper"]
    paper: dict[str, list[tuple[str, dict[str, np.ndarray]]]] = {}
    precise: dict[str, list[tuple[str, dict[str, np.ndarray]]]] = {}
    outputs = Path(a.outputs)
    if not a.no_paper:
        files = sorted(outputs.glob("*.npz"))
        if a.datasets:
            files = [f for f in files if f.stem in set(a.datasets)]
        from activetest.experiments.reproduce import DEFAULT_CACHE as DESIGNS_CACHE
        designs = (ResultCache(DESIGNS_CACHE) if DESIGNS_CACHE.exists() and not a.no_cache
                   else None)
        parts = [(paper, a.runs, PAPER_VARIANTS, True)]
        if a.precise_runs > 0:
            parts.append((precise, a.precise_runs, PRECISE_VARIANTS, not a.precise_cached_only))
        for f in files:
            data = DatasetOutputs.load(f)
            for rows, n_runs, variants, compute in parts:
                for s in settings_for(data):
                    got = _paper_cached(store, data, s, n_runs=n_runs, budget=a.budget,
                                        seed=a.seed, variants=variants,
                                        reproduction=designs, compute=compute)
                    if got is not None:
                        rows.setdefault(data.dataset, []).append((s.label, got))
                store.save()
    squad: dict[str, dict[str, np.ndarray]] = {}
    if not a.no_squad and Path(a.squad).exists():
        store = stores["squad"]
        for t, pool in load_squad(a.squad).items():
            key = _squad_key(store, pool, a.squad_runs, a.budget, a.seed)
            names = [*SQUAD_VARIANTS, *(f"pool:{v}" for v in SQUAD_VARIANTS)]
            got = store.get(key, names)
            if got is None:
                print(f"  squad: {t}", flush=True)
                got = run_squad_target(pool, n_runs=a.squad_runs, budget=a.budget,
                                       seed=a.seed)
                _probe_part(store, save=True)
                store.put(key, got)
            squad[t] = got
        store.save()
    reproduced = (_reproduced(outputs, a.budget, a.seed)
                  if paper and not a.datasets else None)
    argv_s = " ".join(sys.argv[1:] if argv is None else argv)
    command = "python -m activetest.experiments.signals" + (f" {argv_s}" if argv_s else "")
    path = write_report(paper, squad, Path(a.out) / "signals.md", n_runs=a.runs,
                        squad_runs=a.squad_runs, budget=a.budget, seed=a.seed,
                        command=command, elapsed=time.perf_counter() - t0,
                        hits=sum(s.hits for s in stores.values()),
                        entries=sum(s.hits + s.misses for s in stores.values()),
                        reproduced=reproduced, precise=precise,
                        precise_runs=a.precise_runs)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
