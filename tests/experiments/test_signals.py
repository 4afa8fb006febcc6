"""More signals in one calibrated design (issue 21, item 6): the experiment's own code paths,
reduced (the full run: ``python -m activetest.experiments.signals``, docs/signals.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from activetest.experiments import signals
from activetest.experiments.paper import Setting, run_setting

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ROOT / "experiments" / "outputs"


@pytest.mark.parametrize("target", ["a/zero", "a/few"])
def test_today_is_the_reproductions_adaptive_row(target: str) -> None:
    """The ``today`` row is the reproduction's ``adaptive+cv_lure`` (same design, same
    uniforms, same uniform baseline and charging), to the last bit; the extra signals
    change the draws."""
    data = signals._tiny_data()
    s = Setting("probe", target, "b/few")
    r = run_setting(data, s, n_runs=5, budget=20, random_state=2,
                    methods=("uniform+mean", "adaptive+cv_lure"))
    mine = signals.run_paper_setting(data, s, n_runs=5, budget=20, seed=2)
    assert np.array_equal(r.relative["adaptive+cv_lure"], mine["today"], equal_nan=True)
    assert not np.array_equal(mine["today"], mine["+all"], equal_nan=True)
    assert mine["k:today"][0] == 0 and mine["k:+all"][0] >= 3


def test_signals_never_duplicate_what_the_model_has() -> None:
    """A few-shot target is one of the two few-shot models: its log-probs are not added
    again as the 'other model'."""
    data = signals._tiny_data()
    few = Setting("probe", "a/few", "b/few")
    assert signals.paper_signals(data, few, "+other model") == []
    zero = Setting("probe", "a/zero", "b/few")
    (other,) = signals.paper_signals(data, zero, "+other model")
    assert np.array_equal(other, data.outputs["a/few"].pool)
    with pytest.raises(ValueError, match="unknown variant"):
        signals.paper_signals(data, zero, "+everything")


def test_probe_moves_when_a_variant_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache key's probe runs every variant: a changed design moves it."""
    base = signals.behaviour_probe()
    signals.behaviour_probe.cache_clear()
    orig = signals.class_signal_design
    monkeypatch.setattr(signals, "class_signal_design",
                        lambda *a, **k: orig(*a, **{**k, "lam": 0.3}))
    assert signals.behaviour_probe() != base
    signals.behaviour_probe.cache_clear()
    monkeypatch.setattr(signals, "class_signal_design", orig)
    fd = signals.feature_design
    monkeypatch.setattr(signals, "feature_design", lambda **k: fd(**{**k, "lam": 0.3}))
    assert signals.behaviour_probe() != base
    signals.behaviour_probe.cache_clear()
    monkeypatch.setattr(signals, "feature_design", fd)
    assert signals.behaviour_probe() == base


@pytest.mark.skipif(not (OUTPUTS / "hs.npz").exists()
                    or not (OUTPUTS / "generative" / "squad.npz").exists(),
                    reason="cached model outputs not in this checkout")
def test_reduced_run_writes_the_report(tmp_path: Path) -> None:
    """What CI runs: one dataset's 8 settings and both SQuAD targets, few runs; a
    hand-written section of the report survives its regeneration."""
    kept = "<!-- begin reading -->\n## Reading\n\nwritten by hand\n<!-- end reading -->"
    (tmp_path / "signals.md").write_text(f"# old\n\n{kept}\n\nold numbers\n", encoding="utf-8")
    signals.main(["--outputs", str(OUTPUTS), "--squad", str(OUTPUTS / "generative" / "squad.npz"),
                  "--runs", "4", "--precise-runs", "6", "--squad-runs", "4", "--budget", "60",
                  "--datasets", "hs",
                  "--no-cache", "--out", str(tmp_path)])
    text = (tmp_path / "signals.md").read_text(encoding="utf-8")
    assert "## Answer" in text and kept in text and "old numbers" not in text
    for v in (*signals.PAPER_VARIANTS, *signals.SQUAD_VARIANTS):
        assert f"| {v} | **" in text, v
    assert "The paper's 8 settings" in text  # the count is the settings run, not 40
    assert "| design | median | HS |" in text and "| gemma3-270m |" in text
    # the precise part: today's design and +all on more runs, paired, in its own table
    assert "At 6 runs per setting" in text and "not measured here" not in text
    precise = text.split("### The same at 6 runs per setting")[1].split("## SQuAD")[0]
    assert [v for v in signals.PAPER_VARIANTS if f"| {v} | **" in precise] == \
        list(signals.PRECISE_VARIANTS)


def test_precise_today_is_taken_from_the_reproductions_cache() -> None:
    """At the reproduction's run count ``today`` is not simulated again: the
    reproduction's cached ``adaptive+cv_lure`` row is the same numbers (to float32, as
    both caches store them); without that entry it is simulated."""
    from activetest.experiments.cache import ResultCache
    from activetest.experiments.reproduce import _Designs

    data = signals._tiny_data()
    s = Setting("probe", "a/zero", "b/few")
    res = run_setting(data, s, n_runs=5, budget=20, random_state=2,
                      methods=("uniform+mean", "ce+lure"))
    designs = ResultCache(None)
    _Designs(designs, 5, 20, 2).add(data, s, res)
    kw = {"n_runs": 5, "budget": 20, "seed": 2, "variants": signals.PRECISE_VARIANTS}
    fresh = signals.run_paper_setting(data, s, n_runs=5, budget=20, seed=2,
                                      variants=signals.PRECISE_VARIANTS)
    hits = designs.hits
    got = signals._paper_cached(ResultCache(None), data, s, reproduction=designs, **kw)
    assert designs.hits == hits + 1  # taken from the reproduction's cache
    alone = signals._paper_cached(ResultCache(None), data, s, reproduction=ResultCache(None),
                                  **kw)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731 - what the caches store
    for v in signals.PRECISE_VARIANTS:
        assert np.array_equal(f32(got[v]), f32(fresh[v]), equal_nan=True), v
        assert np.array_equal(f32(alone[v]), f32(got[v]), equal_nan=True), v
    assert got["k:today"][0] == 0 and got["k:+all"][0] == fresh["k:+all"][0]


@pytest.mark.skipif(not (OUTPUTS / "hs.npz").exists(),
                    reason="cached model outputs not in this checkout")
def test_precise_cached_only_shows_what_the_cache_holds(tmp_path: Path) -> None:
    """``--precise-cached-only`` renders the precise table from cached settings alone and
    says what was not run; it computes nothing."""
    args = ["--outputs", str(OUTPUTS), "--no-squad", "--runs", "4", "--precise-runs", "6",
            "--budget", "60", "--datasets", "hs", "--cache-dir", str(tmp_path / "c"),
            "--out", str(tmp_path)]
    signals.main([*args, "--precise-cached-only"])
    text = (tmp_path / "signals.md").read_text(encoding="utf-8")
    assert "### The same at 6 runs" not in text and "not measured here" in text
    signals.main(args)  # computes and caches the precise settings
    signals.main([*args, "--precise-cached-only"])
    text = (tmp_path / "signals.md").read_text(encoding="utf-8")
    assert "### The same at 6 runs" in text and "on the same runs, 8 settings." in text
    assert "At 6 runs per setting** (the paper's 8 settings" in text


def test_a_gain_needs_a_lower_median_and_a_majority_of_settings() -> None:
    """The verdict counts settings (the independent units), not correlated budgets: a
    lower median from a few settings is not a gain; ties are left out of the sign test."""
    budgets = [50, 100]

    def rows(ratios: list[float]) -> dict[str, list[tuple[str, dict[str, np.ndarray]]]]:
        return {"d": [(f"s{i}", {"today": np.ones(100), "+all": np.full(100, r)})
                      for i, r in enumerate(ratios)]}

    low, n, p = signals._sign_test(rows([0.9] * 10), "+all", "today", budgets)
    assert (low, n) == (10, 10) and p == pytest.approx(2 / 2**10)
    assert "**beat**" in signals._verdict(1.0, 0.9, low, n, p)
    low, n, p = signals._sign_test(rows([0.5] * 4 + [1.1] * 6 + [1.0] * 3), "+all", "today",
                                   budgets)
    assert (low, n) == (4, 10) and p > 0.05
    assert "not** measurably" in signals._verdict(1.0, 0.8, low, n, p)
    assert "**worse**" in signals._verdict(1.0, 1.1, 0, 10, 2 / 2**10)


def test_the_verdicts_gap_is_that_of_the_printed_medians() -> None:
    """signals.md printed 'today's design has 0.717 and ... 0.664' and then 'a median lower
    by 0.054' (the unrounded medians' gap): the gap is now the printed medians'."""
    assert "lower by 0.053," in signals._verdict(0.7174, 0.6636, 23, 40, 0.43)
    assert "(by 0.053)" in signals._verdict(0.7174, 0.6636, 40, 40, 1e-12)


@pytest.mark.skipif(not (OUTPUTS / "hs.npz").exists(),
                    reason="cached model outputs not in this checkout")
def test_the_committed_cache_holds_every_paper_setting_at_todays_key() -> None:
    """docs/signals.md renders without simulating: the committed cache holds the four
    variants on 200 runs and today/+all on 3,000 runs for every paper setting, at the keys
    of today's behaviour probe."""
    from activetest.experiments.cache import ResultCache
    from activetest.experiments.outputs import DatasetOutputs
    from activetest.experiments.paper import settings_for

    store = ResultCache(ROOT / signals.DEFAULT_CACHE["paper"])
    n = 0
    for f in sorted(OUTPUTS.glob("*.npz")):
        data = DatasetOutputs.load(f)
        for s in settings_for(data):
            for runs, variants in ((200, signals.PAPER_VARIANTS),
                                   (3000, signals.PRECISE_VARIANTS)):
                got = signals._paper_cached(store, data, s, n_runs=runs, budget=400, seed=0,
                                            variants=variants, compute=False)
                assert got is not None, (data.dataset, s.label, runs)
            n += 1
    assert n == 40
