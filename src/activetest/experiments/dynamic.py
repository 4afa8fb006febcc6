"""The paper's dynamic-surrogate ablation, reduced: update the in-context prompt after each label.

The paper keeps the surrogate fixed (one pass over the pool) and reports that
updating it inside the loop gave no consistent gain. This module repeats that
ablation with the bundled models, reduced to fit a 2-core machine:

* per seed, a pool of ``pool_size`` (500) items drawn from the cached pool of
  one shared dataset (``experiments/outputs/<dataset>.npz``), and ``n_shots``
  (10) in-context examples drawn stratified from the cached example rows;
* the target is the OTHER bundled model, static: its cached few-shot class
  log-probabilities on the pool (no target call here);
* the paper's acquisition (CE, proposal floored at 0.1 / R_m, one item at a
  time, without replacement) for ``budget`` (40) labels; LURE estimates of the
  target's mean log loss on the pool (the truth: LURE is unbiased for it);
* **dynamic**: after every acquisition the acquired item, with its label, is
  appended to the surrogate's prompt and the remaining pool is re-scored before
  the next draw; **static**: the prompt stays at the 10 examples, same seed, the
  same uniform random number at every draw (common random numbers), so the two
  differ only by the surrogate's updates. Static and uniform are also simulated
  with many runs per seed (cheap) for a precise reference.

Cost: re-scoring is ``budget`` passes over the pool per seed. The scorers keep
the prompt prefix's key/value cache, so an item costs only its own tokens (the
prefix, which grows by one example per step, is evaluated once per pass). Every
pass is written to ``<cache_dir>/<pair>/seed-<k>.npz`` as soon as it is done
(atomic), so an interrupted run resumes at the pass it stopped at; finished seeds
hold everything the report needs (no dataset text), so ``--report`` runs without
the datasets or the models.

Run (one process per model pair, in the background; see docs/dynamic.md)::

    nice -n 19 python -m activetest.experiments.dynamic run --pair smollm2-gemma --seeds 20
    python -m activetest.experiments.dynamic report
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from activetest.experiments.outputs import DatasetOutputs
from activetest.stats import acquisition_scores, log_loss, sample
from activetest.stats.estimators import lure_curve
from activetest.stats.proposal import proposal

__all__ = ["PAIRS", "DynamicPair", "PairSummary", "SeedResult", "SeedSetup", "load_seed", "main",
           "report", "run_pair", "run_seed", "seed_setup", "static_run", "summarise"]

#: Tag mixed into every seed so these draws never coincide with other experiments'.
_TAG = 0xD1A


@dataclass(frozen=True)
class DynamicPair:
    """One (dataset, surrogate, target) setting of the ablation.

    Attributes:
        name: short name used for the cache folder and on the command line.
        dataset: shared dataset name (its cached outputs give pool, labels, target).
        surrogate: bundled model re-scored with the growing prompt.
        backend: the surrogate's backend (``hf`` for SmolLM2, ``llamacpp`` for Gemma,
            the cheaper per item of the two on this machine, see docs/dynamic.md).
        target: cached ``"model/mode"`` outputs used as the static target.
    """

    name: str
    dataset: str
    surrogate: str
    backend: str
    target: str


PAIRS: dict[str, DynamicPair] = {
    "smollm2-gemma": DynamicPair("smollm2-gemma", "sst2", "smollm2-135m", "hf",
                                 "gemma3-270m/few"),
    "gemma-smollm2": DynamicPair("gemma-smollm2", "sst2", "gemma3-270m", "llamacpp",
                                 "smollm2-135m/few"),
}

DEFAULT_CACHE = Path("experiments") / "cache" / "dynamic"
DEFAULT_OUTPUTS = Path("experiments") / "outputs"


@dataclass(frozen=True)
class SeedSetup:
    """What one seed fixes before any model call: pool positions and examples."""

    seed: int
    pool_idx: np.ndarray  # positions in the cached pool, sorted
    example_ids: tuple[str, ...]  # in-context example ids, in prompt order


@dataclass(frozen=True)
class SeedResult:
    """One seed's stored run (complete when ``len(picks) == budget``).

    Attributes:
        scores: ``(steps, N, C)`` surrogate log-probs used for each draw (NaN on
            items already acquired); ``scores[0]`` is the static surrogate.
        picks, q: the dynamic run's acquired pool positions and their proposal probs.
        seconds: CPU seconds spent scoring, per pass.
    """

    setup: SeedSetup
    budget: int
    scores: np.ndarray
    picks: np.ndarray
    q: np.ndarray
    seconds: np.ndarray

    @property
    def complete(self) -> bool:
        """All ``budget`` acquisitions are done."""
        return len(self.picks) == self.budget


def _draw_rng(seed: int, step: int) -> np.random.Generator:
    """The generator of the draw at ``step`` (shared by the dynamic and static runs)."""
    return np.random.default_rng([_TAG, seed, 1, step])


def seed_setup(outputs: DatasetOutputs, seed: int, *, pool_size: int, n_shots: int,
               example_labels: dict[str, int]) -> SeedSetup:
    """The seed's pool (positions in the cached pool) and stratified in-context examples."""
    from activetest.data.split import select_examples
    from activetest.data.task import Item

    rng = np.random.default_rng([_TAG, seed])
    n = len(outputs.pool_rows)
    if pool_size > n:
        raise ValueError(f"pool_size {pool_size} exceeds the cached pool ({n} items)")
    pool_idx = np.sort(rng.choice(n, size=pool_size, replace=False))
    cands = [Item(str(r), {}, example_labels[str(r)]) for r in outputs.example_rows]
    n_classes = int(outputs.pool_labels.max()) + 1
    ex = select_examples(cands, n_shots, rng, n_classes=n_classes)
    return SeedSetup(seed, pool_idx, tuple(it.id for it in ex))


def _atomic_save(path: Path, **arrays: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp.npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _save(path: Path, res: SeedResult) -> None:
    _atomic_save(path, seed=np.int64(res.setup.seed), pool_idx=res.setup.pool_idx,
                 example_ids=np.asarray(res.setup.example_ids, dtype=str),
                 budget=np.int64(res.budget), scores=res.scores, picks=res.picks, q=res.q,
                 seconds=res.seconds)


def load_seed(path: str | os.PathLike[str]) -> SeedResult:
    """Read a seed file written by :func:`run_seed`."""
    with np.load(path, allow_pickle=False) as z:
        setup = SeedSetup(int(z["seed"]), z["pool_idx"].astype(np.int64),
                          tuple(str(x) for x in z["example_ids"]))
        return SeedResult(setup, int(z["budget"]), z["scores"].astype(np.float64),
                          z["picks"].astype(np.int64), z["q"].astype(np.float64),
                          z["seconds"].astype(np.float64))


def _draw(scores: np.ndarray, target_lp: np.ndarray, remaining: np.ndarray, floor: float,
          rng: np.random.Generator) -> tuple[int, float]:
    """One CE draw over the remaining items: (position, its proposal probability)."""
    a = np.zeros(len(remaining))
    a[remaining] = acquisition_scores("ce", surrogate_logprobs=scores[remaining],
                                      target_logprobs=target_lp[remaining])
    p = proposal(a, remaining, floor)
    i = int(rng.choice(len(p), p=p))
    return i, float(p[i])


def static_run(scores0: np.ndarray, target_lp: np.ndarray, seed: int, budget: int,
               floor: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """The static surrogate's run with the same per-draw generators as the dynamic one."""
    remaining = np.ones(len(scores0), dtype=bool)
    picks, qs = [], []
    for m in range(budget):
        i, q = _draw(scores0, target_lp, remaining, floor, _draw_rng(seed, m))
        remaining[i] = False
        picks.append(i)
        qs.append(q)
    return np.asarray(picks, dtype=np.int64), np.asarray(qs)


def run_seed(scorer: object, task: object, pool_items: Sequence[object],
             examples: Sequence[object], target_lp: np.ndarray, setup: SeedSetup, *,
             budget: int, path: Path | None = None, floor: float = 0.1,
             progress: bool = False) -> SeedResult:
    """The dynamic run of one seed, resuming from ``path`` and saving after every pass.

    ``pool_items`` are the seed's pool items (labels used only when appended to the
    prompt), ``examples`` its initial in-context examples, ``target_lp`` the static
    target's ``(N, C)`` log-probs on the pool.
    """
    n = len(pool_items)
    n_classes = target_lp.shape[1]
    scores = np.full((0, n, n_classes), np.nan)
    picks = np.zeros(0, dtype=np.int64)
    qs = np.zeros(0)
    secs = np.zeros(0)
    if path is not None and path.exists():
        old = load_seed(path)
        if (not np.array_equal(old.setup.pool_idx, setup.pool_idx)
                or old.setup.example_ids != setup.example_ids or old.budget != budget):
            raise ValueError(f"{path}: stored for another pool, examples or budget; move it "
                             f"away to start this seed again")
        scores, picks, qs, secs = old.scores, old.picks, old.q, old.seconds
        if len(scores) > len(picks) + 1:
            raise ValueError(f"{path}: {len(scores)} passes but {len(picks)} picks")
    remaining = np.ones(n, dtype=bool)
    remaining[picks] = False
    for m in range(len(picks), budget):
        if len(scores) == m:  # this pass is not stored yet: score the remaining items
            prompt = list(examples) + [pool_items[i] for i in picks]
            rest = np.flatnonzero(remaining)
            t0 = time.process_time()
            lp = np.asarray(scorer.score(task, [pool_items[i] for i in rest], prompt,  # type: ignore[attr-defined]
                                         progress=progress), dtype=np.float64)
            step = np.full((1, n, n_classes), np.nan)
            step[0, rest] = lp
            scores = np.concatenate([scores, step])
            secs = np.append(secs, time.process_time() - t0)
        i, q = _draw(scores[m], target_lp, remaining, floor,
                     _draw_rng(setup.seed, m))
        remaining[i] = False
        picks = np.append(picks, i)
        qs = np.append(qs, q)
        res = SeedResult(setup, budget, scores, picks, qs, secs)
        if path is not None:
            _save(path, res)
    return SeedResult(setup, budget, scores, picks, qs, secs)


def _example_labels(outputs: DatasetOutputs, ds: object) -> dict[str, int]:
    items = {it.id: it for it in ds.items}  # type: ignore[attr-defined]
    src = getattr(ds, "example_source", None)
    if src is not None:
        items.update({it.id: it for it in src})
    out: dict[str, int] = {}
    for r in outputs.example_rows:
        it = items.get(str(r))
        if it is None or it.label is None:
            raise ValueError(f"{outputs.dataset}: cached example row {r} is not in the dataset")
        out[str(r)] = int(it.label)
    return out


def run_pair(pair: DynamicPair, seeds: Sequence[int], *, pool_size: int = 500,
             n_shots: int = 10, budget: int = 40, cache_dir: Path = DEFAULT_CACHE,
             outputs_dir: Path = DEFAULT_OUTPUTS, root: str | None = None,
             n_threads: int = 1, device: str | None = None, progress: bool = False,
             log: object = None) -> list[Path]:
    """Run (or resume) every seed of one pair; returns the seed files.

    ``device`` (``hf`` surrogates only, e.g. ``"cuda"``) moves the re-scoring to an
    accelerator; the seeds' files do not record it (hf float32 on GPU and CPU agree
    to ~1e-5 in a log-prob, far below what changes a draw's distribution).
    """
    from activetest.data.datasets import load_shared
    from activetest.models.registry import get_scorer

    outputs = DatasetOutputs.load(outputs_dir / f"{pair.dataset}.npz")
    ds = load_shared(pair.dataset, root)
    by_id = {it.id: it for it in ds.items}
    if ds.example_source is not None:
        by_id.update({it.id: it for it in ds.example_source})
    # Joins never guess: the cached rows must be the dataset's rows with the same labels.
    for r, y in zip(outputs.pool_rows, outputs.pool_labels, strict=True):
        it = by_id.get(str(r))
        if it is None or it.label != int(y):
            raise ValueError(f"{pair.dataset}: cached pool row {r} (label {y}) does not match "
                             f"the dataset ({'missing' if it is None else it.label})")
    ex_labels = _example_labels(outputs, ds)
    target_all = outputs.outputs[pair.target].pool
    scorer = None
    paths = []
    try:
        for s in seeds:
            setup = seed_setup(outputs, s, pool_size=pool_size, n_shots=n_shots,
                               example_labels=ex_labels)
            path = cache_dir / pair.name / f"seed-{s:03d}.npz"
            paths.append(path)
            if path.exists() and load_seed(path).complete:
                continue
            if scorer is None:
                opts: dict[str, object] = {"n_threads": n_threads}
                if device is not None:
                    if pair.backend != "hf":
                        raise ValueError(f"{pair.name}: --device is for hf surrogates only")
                    opts["device"] = device
                scorer = get_scorer(pair.surrogate, pair.backend, **opts)
            pool_items = [by_id[str(outputs.pool_rows[i])] for i in setup.pool_idx]
            examples = [by_id[e] for e in setup.example_ids]
            t0 = time.time()
            res = run_seed(scorer, ds.task, pool_items, examples, target_all[setup.pool_idx],
                           setup, budget=budget, path=path, progress=progress)
            if log is not None:
                print(f"{pair.name} seed {s}: done, {res.seconds.sum():.0f} CPU-s scoring, "
                      f"{time.time() - t0:.0f} s wall", file=log, flush=True)  # type: ignore[arg-type]
    finally:
        close = getattr(scorer, "close", None)
        if callable(close):
            close()
    return paths


@dataclass(frozen=True)
class PairSummary:
    """The ablation's numbers for one pair (seeds that finished only)."""

    pair: DynamicPair
    seeds: tuple[int, ...]
    budgets: tuple[int, ...]
    mse_dynamic: tuple[float, ...]  # median over seeds of (R_hat - R)^2
    mse_static: tuple[float, ...]  # same seeds, same random numbers
    mse_static_many: tuple[float, ...]  # median over seeds x n_runs
    mse_uniform_many: tuple[float, ...]
    dynamic_wins: tuple[float, ...]  # share of seeds where dynamic's error < static's
    sign_p: tuple[float, ...]  # two-sided sign test of dynamic vs static
    acc_first: float  # surrogate accuracy on the remaining pool, first pass (mean over seeds)
    acc_last: float  # ... last pass
    corr_first: float  # Pearson corr(CE score, target loss) on the remaining pool
    corr_last: float
    cpu_s_per_pass: float
    n_runs: int


def _acc_corr(scores: np.ndarray, labels: np.ndarray, loss: np.ndarray,
              target_lp: np.ndarray) -> tuple[float, float]:
    ok = ~np.isnan(scores[:, 0])
    s = scores[ok]
    acc = float((s.argmax(1) == labels[ok]).mean())
    ce = acquisition_scores("ce", surrogate_logprobs=s, target_logprobs=target_lp[ok])
    c = float(np.corrcoef(ce, loss[ok])[0, 1]) if ce.std() > 0 else float("nan")
    return acc, c


def summarise(pair: DynamicPair, results: Sequence[SeedResult], outputs: DatasetOutputs, *,
              budgets: Sequence[int] = (10, 20, 30, 40), n_runs: int = 2000,
              floor: float = 0.1) -> PairSummary:
    """The paper's metric for dynamic, static and uniform on the finished seeds."""
    from scipy.stats import binomtest

    done = [r for r in results if r.complete]
    if not done:
        raise ValueError(f"{pair.name}: no finished seed")
    budget = min(r.budget for r in done)
    budgets = tuple(b for b in budgets if b <= budget) or (budget,)
    tgt_all = outputs.outputs[pair.target].pool
    sq_dyn, sq_sta, sq_sta_many, sq_uni = [], [], [], []
    accs, _corrs = [], []
    for r in done:
        idx = r.setup.pool_idx
        tgt = tgt_all[idx]
        y = outputs.pool_labels[idx]
        loss = log_loss(tgt, y)
        truth = float(loss.mean())
        n = len(idx)
        est_dyn = lure_curve(loss[r.picks], r.q, n)
        p_s, q_s = static_run(r.scores[0], tgt, r.setup.seed, budget, floor)
        est_sta = lure_curve(loss[p_s], q_s, n)
        a0 = acquisition_scores("ce", surrogate_logprobs=r.scores[0], target_logprobs=tgt)
        rng = np.random.default_rng([_TAG, r.setup.seed, 2])
        pi, qi = sample(a0, budget, n_runs=n_runs, proposal_floor=floor, random_state=rng)
        est_many = lure_curve(loss[pi], qi, n)
        ui = np.argsort(rng.random((n_runs, n)), axis=1)[:, :budget]
        est_uni = np.cumsum(loss[ui], axis=1) / np.arange(1, budget + 1)
        b = np.asarray(budgets) - 1
        sq_dyn.append((est_dyn[b] - truth) ** 2)
        sq_sta.append((est_sta[b] - truth) ** 2)
        sq_sta_many.append((est_many[:, b] - truth) ** 2)
        sq_uni.append((est_uni[:, b] - truth) ** 2)
        accs.append((_acc_corr(r.scores[0], y, loss, tgt), _acc_corr(r.scores[-1], y, loss, tgt)))
    d, s = np.array(sq_dyn), np.array(sq_sta)
    wins = (d < s).sum(0)
    ties = (d == s).sum(0)
    pvals = tuple(float(binomtest(int(w), int(len(done) - t)).pvalue) if len(done) > t
                  else float("nan") for w, t in zip(wins, ties, strict=True))
    acc = np.array(accs)  # (seeds, 2, 2)
    return PairSummary(
        pair, tuple(r.setup.seed for r in done), budgets,
        tuple(float(x) for x in np.median(d, 0)), tuple(float(x) for x in np.median(s, 0)),
        tuple(float(x) for x in np.median(np.concatenate(sq_sta_many), 0)),
        tuple(float(x) for x in np.median(np.concatenate(sq_uni), 0)),
        tuple(float(x) for x in wins / len(done)), pvals,
        float(acc[:, 0, 0].mean()), float(acc[:, 1, 0].mean()),
        float(np.nanmean(acc[:, 0, 1])), float(np.nanmean(acc[:, 1, 1])),
        float(np.mean([r.seconds.mean() for r in done])), n_runs)


def _progress_line(pair: DynamicPair, r: SeedResult, outputs: DatasetOutputs) -> str:
    """What an unfinished seed shows so far: the surrogate's change, and the draws."""
    tgt = outputs.outputs[pair.target].pool[r.setup.pool_idx]
    y = outputs.pool_labels[r.setup.pool_idx]
    loss = log_loss(tgt, y)
    k = len(r.scores) - 1
    gone = np.isnan(r.scores[k, :, 0])  # acquired before pass k
    first = np.where(gone[:, None], np.nan, r.scores[0])  # the same items as the last pass
    (a0, c0), (ak, ck) = (_acc_corr(first, y, loss, tgt), _acc_corr(r.scores[k], y, loss, tgt))
    p_s, _ = static_run(r.scores[0], tgt, r.setup.seed, len(r.picks))
    same = int(np.argmax(p_s != r.picks)) if (p_s != r.picks).any() else len(r.picks)
    return (f"- seed {r.setup.seed}, first pass -> pass {k + 1} ({k} labels appended), on the "
            f"{int((~gone).sum())} items left: surrogate accuracy {a0:.3f} -> {ak:.3f}, Pearson "
            f"corr(CE, target loss) {c0:.2f} -> {ck:.2f}, mean |change| of a class log-prob "
            f"{np.nanmean(np.abs(r.scores[k] - r.scores[0])):.3f}; the first {same} of "
            f"{len(r.picks)} draws equal the static run's.")


def report(cache_dir: Path = DEFAULT_CACHE, outputs_dir: Path = DEFAULT_OUTPUTS,
           pairs: Sequence[str] = tuple(PAIRS), n_runs: int = 2000) -> str:
    """Markdown tables of the finished seeds of every pair (no models, no datasets)."""
    lines = []
    for name in pairs:
        pair = PAIRS[name]
        files = sorted((cache_dir / name).glob("seed-*.npz"))
        results = [load_seed(f) for f in files]
        done = [r for r in results if r.complete]
        partial = [r for r in results if not r.complete]
        head = (f"### {pair.dataset}: {pair.target} (static, cached) <- {pair.surrogate} "
                f"({pair.backend}) surrogate")
        going = ", ".join(f"seed {r.setup.seed} at {len(r.picks)}/{r.budget} labels"
                          for r in partial)
        outputs = DatasetOutputs.load(outputs_dir / f"{pair.dataset}.npz")
        progress = [_progress_line(pair, r, outputs) for r in partial if len(r.scores) > 1]
        if not done:
            lines += [head, "", f"No finished seed yet (in progress: {going or 'none'}).", "",
                      *progress, *([""] if progress else [])]
            continue
        sm = summarise(pair, done, outputs, n_runs=n_runs)
        lines += [head, "",
                  f"Seeds finished: {len(sm.seeds)} ({', '.join(map(str, sm.seeds))})"
                  + (f"; in progress: {going}" if partial else "")
                  + f". Pool {len(done[0].setup.pool_idx)}, {len(done[0].setup.example_ids)} "
                  f"initial examples, CE acquisition (floor 0.1), LURE, log loss; truth = the "
                  f"target's mean log loss on the seed's pool. Mean CPU-s per pool pass: "
                  f"{sm.cpu_s_per_pass:.0f}.", "",
                  "| labels | dynamic | static (same draws) | dynamic / static | static, "
                  f"{sm.n_runs} runs/seed | uniform, {sm.n_runs} runs/seed | dynamic / uniform "
                  "| static / uniform | seeds dynamic better | sign-test p |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for j, b in enumerate(sm.budgets):
            lines.append(
                f"| {b} | {sm.mse_dynamic[j]:.3g} | {sm.mse_static[j]:.3g} | "
                f"{sm.mse_dynamic[j] / sm.mse_static[j]:.2f} | {sm.mse_static_many[j]:.3g} | "
                f"{sm.mse_uniform_many[j]:.3g} | {sm.mse_dynamic[j] / sm.mse_uniform_many[j]:.2f}"
                f" | {sm.mse_static_many[j] / sm.mse_uniform_many[j]:.2f} | "
                f"{sm.dynamic_wins[j]:.2f} | {sm.sign_p[j]:.2g} |")
        lines += ["", f"Surrogate on the remaining pool, first pass -> last pass (mean over "
                      f"seeds): accuracy {sm.acc_first:.3f} -> {sm.acc_last:.3f}; Pearson "
                      f"corr(CE, target loss) {sm.corr_first:.2f} -> {sm.corr_last:.2f}.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m activetest.experiments.dynamic run|report``."""
    ap = argparse.ArgumentParser(prog="python -m activetest.experiments.dynamic",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run or resume seeds of one pair (needs the datasets)")
    r.add_argument("--pair", choices=sorted(PAIRS), required=True)
    r.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1 (default 20)")
    r.add_argument("--first-seed", type=int, default=0)
    r.add_argument("--pool", type=int, default=500)
    r.add_argument("--shots", type=int, default=10)
    r.add_argument("--budget", type=int, default=40)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--device", default=None, help="hf surrogates: torch device (e.g. cuda)")
    r.add_argument("--datasets", default=None, help="datasets folder (default ../shared/datasets)")
    r.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    r.add_argument("--outputs-dir", type=Path, default=DEFAULT_OUTPUTS)
    p = sub.add_parser("report", help="tables from the cached seeds (no models needed)")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--outputs-dir", type=Path, default=DEFAULT_OUTPUTS)
    p.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args(argv)
    if args.cmd == "report":
        print(report(args.cache_dir, args.outputs_dir, n_runs=args.runs))
        return 0
    from activetest.data.datasets import find_shared_root

    try:
        find_shared_root(args.datasets)
    except FileNotFoundError as exc:
        print(f"dynamic: skipped, the shared datasets are not here ({exc})", file=sys.stderr)
        return 0
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    run_pair(PAIRS[args.pair], seeds, pool_size=args.pool, n_shots=args.shots,
             budget=args.budget, cache_dir=args.cache_dir, outputs_dir=args.outputs_dir,
             root=args.datasets, n_threads=args.threads, device=args.device, log=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
