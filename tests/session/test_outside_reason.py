"""Why an unbiased estimate lies outside what the risk can be, said for the draws the
session made: importance-weighted draws weigh each label by how unlikely its draw was;
under uniform draws every label weighs alike, and it is the control variate's doing
(QA: control-variate LURE of uniform draws was explained by "how unlikely its draw
was")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from session_support import make_pool_files
from typer.testing import CliRunner

from activetest.cli import app

runner = CliRunner()


def run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return " ".join(result.output.split())


def _session(tmp_path: Path, acquisition: str, seed: int, metric: str) -> Path:
    """30 demo reviews, the second target's predictions as the surrogate (a control that
    tracks the target's losses poorly), two labels: control-variate LURE below 0."""
    pf = make_pool_files(tmp_path / "data", n=30, seed=0)
    db = tmp_path / f"{acquisition}.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate", f"table:{pf.target2}",
        "--target", f"table:{pf.target}", "--id-column", "id", "--seed", seed,
        "--acquisition", acquisition, "--metric", metric, "--no-progress")
    run("select", db, "--n", "2")
    run("label", db, "--from-data")
    return db


def test_uniform_draws_name_the_control_variate_not_the_weights(tmp_path: Path) -> None:
    db = _session(tmp_path, "uniform", 1, "both")
    text = run("estimate", db)
    m = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]
    cv, mean, pool = m["cv"]["estimate"], m["uniform"]["estimate"], m["control_mean"]
    assert cv < 0
    said = (f"error rate: control-variate LURE {cv:.4g} lies outside the values the risk "
            f"can take ([0, 1]): an unbiased estimate can, with few labels (every draw was "
            f"made at the uniform rate, so no label weighs more than another: it is the "
            f"control variate's doing, which adds the control's mean prediction over the "
            f"pool ({pool:.4g}) minus its mean on the 2 labelled item(s) "
            f"({pool - (cv - mean):.4g}), {cv - mean:+.4g}, to the labelled losses' mean "
            f"({mean:.4g}))")
    assert said in text, text
    assert "unlikely" not in text, text
    # the sure-bounds line of the log loss, cut for control-variate LURE: the same reason,
    # and status repeats it as recorded
    assert re.search(r"The estimate -[0-9.]+ lies outside these bounds: an unbiased "
                     r"estimate can \(every draw was made at the uniform rate", text), text
    assert "lies outside these bounds: an unbiased estimate can (every draw was made at " \
        "the uniform rate" in run("status", db)


def test_weighted_draws_name_the_weights_and_the_control(tmp_path: Path) -> None:
    db = _session(tmp_path, "ce", 3, "error_rate")
    text = run("estimate", db)
    cv = json.loads(run("estimate", db, "--json"))["metrics"]["error_rate"]["cv"]["estimate"]
    assert cv < 0
    assert (f"error rate: control-variate LURE {cv:.4g} lies outside the values the risk "
            f"can take ([0, 1]): an unbiased estimate can, with few labels (each label "
            f"weighs by how unlikely its draw was, and the control variate adds the "
            f"control's mean prediction over the pool minus its weighted mean on the "
            f"labelled items)") in text, text


def test_a_difference_of_uniform_draws_outside_its_sure_bounds_names_what_they_know(
        tmp_path: Path) -> None:
    """The paired difference of uniform draws is the labelled differences' mean; it lies
    outside the sure bounds because those know each unlabelled item's bound (0 where the
    two error rates' predictions agree), not because of weights."""
    pf = make_pool_files(tmp_path / "data", n=30, seed=0)
    db = tmp_path / "cmp.db"
    run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
        f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
        "--seed", "4", "--acquisition", "uniform", "--metric", "error_rate", "--compare",
        f"table:{pf.target2}", "--no-progress")
    run("select", db, "--n", "3")
    run("label", db, "--from-data")
    text = run("estimate", db)
    (c,) = json.loads(run("estimate", db, "--json"))["comparisons"]
    d = c["difference"]["estimate"]
    assert f"(error rate): the estimate {d:.4g} lies outside the bounds that hold surely" \
        in text, text
    # (not "with few labels": QA, it read oddly at 37 of 40, as the single risk's did)
    assert ("an unbiased estimate can (every draw was made at the uniform "
            "rate, so it is the plain mean of the labelled differences; the bounds know "
            "what that mean does not: each unlabelled item adds at most its own bound on "
            "the difference (for two error rates 0 where the two predictions agree), at "
            "most ") in text, text
    assert "unlikely" not in text
