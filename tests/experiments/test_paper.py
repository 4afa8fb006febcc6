"""The paper's protocol on synthetic cached outputs (statistics only, fast)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from activetest.experiments.outputs import DatasetOutputs, ModelOutputs
from activetest.experiments.paper import (
    Setting,
    bootstrap_coverage,
    calibrated_settings,
    filter_noisy,
    load_paper_table,
    run_setting,
    settings_for,
)
from activetest.models.calibration import contextual_calibration
from activetest.stats import log_loss, log_softmax

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _outputs(n_pool: int = 600, n_test: int = 600, seed: int = 0) -> DatasetOutputs:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_pool + n_test, 2)) * 2
    y = (rng.random(n_pool + n_test) < np.exp(log_softmax(z))[:, 1]).astype(int)
    out = DatasetOutputs("toy", np.arange(n_pool).astype(str),
                         np.arange(n_pool, n_pool + n_test).astype(str), np.array(["e0"]),
                         y[:n_pool], y[n_pool:], n_shots=8, meta={"seed": str(seed)})
    for name, scale, noise in (("a", 1.0, 0.3), ("b", 1.5, 0.8)):
        for mode, extra in (("zero", 1.0), ("few", 0.5)):
            lp = log_softmax(z * scale + rng.normal(size=z.shape) * noise * extra)
            out.outputs[f"{name}/{mode}"] = ModelOutputs(lp[:n_pool], lp[n_pool:])
    return out


def test_outputs_round_trip(tmp_path: Path) -> None:
    o = _outputs()
    p = o.save(tmp_path / "toy.npz")
    back = DatasetOutputs.load(p)
    assert back.dataset == "toy" and back.n_shots == 8 and back.meta == {"seed": "0"}
    np.testing.assert_array_equal(back.pool_labels, o.pool_labels)
    np.testing.assert_array_equal(back.pool_rows, o.pool_rows)
    for k, mo in o.outputs.items():
        np.testing.assert_allclose(back.outputs[k].pool, mo.pool, atol=1e-6)
        np.testing.assert_allclose(np.exp(back.outputs[k].test).sum(1), 1.0, atol=1e-12)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"bad\.npz"):
        DatasetOutputs.load(tmp_path / "bad.npz")


def test_error_rate_setting_measures_error_rates() -> None:
    o = _outputs()
    s = Setting("toy", "b/few", "a/few")
    r = run_setting(o, s, n_runs=100, budget=40, loss="zero_one",
                    methods=("uniform+mean", "zero_one+lure", "adaptive+cv_lure"))
    assert r.truth == pytest.approx((o.outputs["b/few"].test.argmax(1) != o.test_labels).mean())
    assert r.pool_risk == pytest.approx((o.outputs["b/few"].pool.argmax(1) != o.pool_labels)
                                        .mean())
    assert np.all(np.isfinite(r.relative["adaptive+cv_lure"]))


def test_settings_and_a_run() -> None:
    o = _outputs()
    settings = settings_for(o)
    assert len(settings) == 8  # 4 targets x 2 few-shot surrogates
    s = Setting("toy", "b/zero", "a/few")
    assert s.zero_shot and not s.self_surrogate
    r = run_setting(o, s, n_runs=200, budget=60, random_state=0)
    assert r.offset == 8
    truth = log_loss(o.outputs["b/zero"].test, o.test_labels).mean()
    assert r.truth == pytest.approx(truth)
    assert r.mse["ce+lure"].shape == (60,)
    # relative error charges the 8 shots: NaN past budget + offset would be out of range
    assert np.all(np.isfinite(r.relative["ce+lure"]))
    assert -1 <= r.diagnostics["corr_ce_loss"] <= 1
    few = run_setting(o, Setting("toy", "b/few", "b/few"), n_runs=50, budget=20)
    assert few.offset == 0
    np.testing.assert_allclose(few.relative["uniform+mean"], 1.0)
    assert len(r.at("ce+lure", (10, 60, 100))) == 3 and np.isnan(r.at("ce+lure", (100,))[0])


def test_bootstrap_coverage_is_near_nominal_on_an_easy_pool() -> None:
    o = _outputs(2000, 0)
    cov = bootstrap_coverage(o, Setting("toy", "a/few", "a/few"), n_runs=200, n_boot=300,
                             budgets=(100, 200, 300))
    assert cov.covered.shape == (200, 3)
    # +-2 sd nominally covers 95%; runs are independent, so the rate's SE is ~ 0.015/sqrt(3)
    assert 0.85 < cov.rate(100, pool=True) <= 1.0


def test_filter_noisy_drops_high_nll_items() -> None:
    o = _outputs()
    f = filter_noisy(o, "b/zero", 3.0)
    nll = log_loss(o.outputs["b/zero"].pool, o.pool_labels)
    assert len(f.pool_labels) == int((nll <= 3).sum()) < len(o.pool_labels)
    assert f.outputs["a/few"].pool.shape[0] == len(f.pool_labels)


def test_paper_table_loads() -> None:
    path = SHARED / "paper" / "risk_error_tables.csv"
    if not path.exists():
        pytest.skip("../shared/paper is absent")
    t = load_paper_table(path)
    assert len(t) == 376
    assert t[("HS", "70B-zero", "Uniform", 200)] == pytest.approx(0.6363e-4)


def test_reproduce_writes_the_report(tmp_path: Path) -> None:
    from activetest.experiments.reproduce import main
    o = _outputs(800, 400)
    o.dataset = "sst2"
    # A calibrated surrogate (as `score` adds): a beyond-the-paper section, not a setting.
    few = o.outputs["a/few"]
    cf = np.log(np.array([[0.7, 0.3]]))
    o.outputs["a/few-cal"] = ModelOutputs(contextual_calibration(few.pool, cf),
                                          contextual_calibration(few.test, cf))
    assert len(settings_for(o)) == 8 and len(calibrated_settings(o)) == 4
    o.save(tmp_path / "outputs" / "sst2.npz")
    table = SHARED / "paper" / "risk_error_tables.csv"
    main(["run", "--outputs", str(tmp_path / "outputs"), "--out", str(tmp_path / "docs"),
          "--runs", "60", "--budget", "100", "--coverage-runs", "20", "--boot", "100",
          "--paper-table", str(table), "--cache", str(tmp_path / "cache.npz")])
    md = (tmp_path / "docs" / "reproduction.md").read_text()
    assert "Median relative error" in md and "## SST-2" in md and "Label-noise study" in md
    assert "| b/zero <- a/few |" in md
    assert "### Calibrated surrogates (beyond the paper)" in md
    assert "Not scored yet: Subj, FPB, HS, MMLU." in md  # missing datasets are named
    assert "## Beyond the paper: calibrated surrogates" in md
    assert "a/few-cal" not in md.split("## Beyond the paper")[0]  # not in the headline
    if table.exists():
        assert "7B-zero" in md
    png = tmp_path / "docs" / "reproduction" / "sst2_relative_error.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the curves it draws are saved beside it, and the page says how to redraw it
    assert png.with_suffix(".npz").exists()
    assert "`python -m activetest.experiments replot` redraws it" in md
    # the adaptive designs' rows, in the headline, per dataset, and for the calibrated set
    assert "## Beyond the paper: adaptive designs" in md
    assert "| adaptive+cv_lure (original rule) |" in md and "On the 8 paper settings:" in md
    # every rule-dependent adaptive row says it ran the original rule, not the default's
    assert "**Which in-run rule.**" in md and "| adaptive | **" not in md
    assert "On the 4 calibrated-surrogate settings:" in md
    assert "On the 8 paper settings, for the error rate" in md and "| 0-1+LURE |" in md
    assert ("CE+LURE / adaptive (original rule) / fixed-mix / PE-adaptive (original rule)"
            in md)
    first = re.search(r"(\d+) of (\d+) entries hit", md)
    # a first run computes the entries (identical ones, e.g. a noise filter that drops
    # nothing, are computed once)
    assert first is not None and int(first.group(1)) < int(first.group(2)) / 2
    # a second run takes them from the cache, and writes the same tables
    main(["run", "--outputs", str(tmp_path / "outputs"), "--out", str(tmp_path / "again"),
          "--runs", "60", "--budget", "100", "--coverage-runs", "20", "--boot", "100",
          "--paper-table", str(table), "--cache", str(tmp_path / "cache.npz")])
    md2 = (tmp_path / "again" / "reproduction.md").read_text()
    assert f"{first.group(2)} of {first.group(2)} entries hit" in md2
    strip = lambda t: t.split("## Headline", 1)[1]  # noqa: E731 - the header holds timings
    assert strip(md2) == strip(md)
    main(["run", "--outputs", str(tmp_path / "outputs"), "--out", str(tmp_path / "paper"),
          "--runs", "60", "--budget", "100", "--coverage-runs", "20", "--boot", "100",
          "--no-designs"])
    assert "adaptive" not in (tmp_path / "paper" / "reproduction.md").read_text()


def test_committed_outputs_rerun_in_reduced_form(tmp_path: Path) -> None:
    """CI reruns the paper pipeline on the committed model outputs, so it cannot rot."""
    from activetest.experiments.reproduce import reproduce
    outputs = Path(__file__).resolve().parents[2] / "experiments" / "outputs"
    files = sorted(outputs.glob("*.npz"))
    assert files, "the cached model outputs must be committed in experiments/outputs"
    for f in files:
        d = DatasetOutputs.load(f)
        assert len(d.pool_labels) >= 2000 and d.outputs
        for mo in d.outputs.values():
            assert mo.pool.shape[0] == len(d.pool_labels)
            assert mo.test.shape[0] == len(d.test_labels) or d.pool_is_truth
    md = reproduce(outputs, tmp_path, n_runs=100, budget=60, coverage_runs=10, n_boot=100,
                   progress=False).read_text()
    assert "## Diagnosis" in md and "## Single-run error bars" in md
    assert "## Beyond the paper: adaptive designs" in md


def test_dataset_notes_flag_chance_models_and_an_off_truth_pool() -> None:
    from activetest.experiments.reproduce import _dataset_notes

    def notes(o: DatasetOutputs) -> str:
        rs = [run_setting(o, s, n_runs=200, budget=100) for s in settings_for(o)]
        return " ".join(_dataset_notes(o, rs))

    assert notes(_outputs()) == ""  # informative models, pool and test alike
    # Models that ignore the input: at chance.
    o = _outputs(seed=1)
    rng = np.random.default_rng(99)  # not _outputs' stream: these must not track the labels
    for k, mo in o.outputs.items():
        o.outputs[k] = ModelOutputs(log_softmax(rng.normal(size=mo.pool.shape) * 0.1),
                                    log_softmax(rng.normal(size=mo.test.shape) * 0.1))
    assert "at chance" in notes(o)
    # A test set whose labels are flipped: the truth is far from the pool's risk.
    o = _outputs(seed=2)
    o.test_labels = 1 - o.test_labels
    text = notes(o)
    assert "off the test-set truth for" in text and "a/zero" in text and "at chance" not in text


def test_the_results_cache_keys_on_code_not_on_its_comments(tmp_path: Path) -> None:
    from activetest.experiments.cache import ResultCache, source_fingerprint
    a = 'def f(x):\n    """Doc."""\n    return x + 1  # one\n'
    b = 'def f(x):\n    """Other words."""\n\n    return x + 1\n'
    c = 'def f(x):\n    """Doc."""\n    return x + 2\n'
    assert source_fingerprint(a) == source_fingerprint(b) != source_fingerprint(c)
    k1 = ResultCache.key("code", np.arange(3.0), 0.5)
    assert k1 == ResultCache.key("code", np.arange(3.0), 0.5)
    assert k1 != ResultCache.key("code", np.arange(3.0) + 1e-12, 0.5)
    assert k1 != ResultCache.key("code", np.arange(3, dtype=np.float32), 0.5)
    cache = ResultCache(tmp_path / "c.npz")
    cache.put(k1, {"rel": np.ones(4), "unused": np.zeros(2)})
    cache.save()
    again = ResultCache(tmp_path / "c.npz")
    got = again.get(k1, ["rel"])
    assert got is not None and np.all(got["rel"] == 1) and again.get("other", ["rel"]) is None
    again.prune({k1})  # keeps the arrays that were read, drops the rest
    again.save()
    assert sorted(np.load(tmp_path / "c.npz").files) == [f"{k1}|rel"]
