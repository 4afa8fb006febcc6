"""Labelled terms that are all the same (a target equally confident on every item, every
label agreeing with it): the CLT has no spread to estimate. Rounding left an SE of 7e-19,
so the fixed-budget interval and the anytime CS were points and `estimate` said "you may
stop now" after 45 equal log losses of a 200-item pool (QA); the CS now claims nothing
until the terms differ, and every output says the point claims nothing."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
from session_support import make_pool_files, run_cli

from activetest.session.workflow import Session
from activetest.stats.intervals import moment_curves


def test_equal_terms_up_to_rounding_have_no_spread() -> None:
    theta = np.full(45, 0.05101597658953495)
    theta[::3] += 1.3877787807814457e-17  # the rounding an adaptive LURE term carries
    _, se, _, _ = moment_curves(theta, 200)
    assert np.all(se[1:] == 0.0)
    _, se, _, _ = moment_curves(theta, 200, model_var=np.full(45, np.nan))
    assert np.all(se[1:] == 0.0)
    theta[-1] += 1e-6  # a real spread stays one
    _, se, _, _ = moment_curves(theta, 200)
    assert se[-1] > 0


def test_equal_log_losses_are_no_basis_to_stop(tmp_path: Path) -> None:
    files = make_pool_files(tmp_path / "data", n=200)
    perfect = tmp_path / "data" / "perfect.csv"  # right on every item, equally sure
    with perfect.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "negative", "positive"])
        for i, y in zip(files.ids, files.labels, strict=True):
            w.writerow([i, -0.05, -3.0] if y == 0 else [i, -3.0, -0.05])
    db = tmp_path / "z.db"
    run_cli("init", db, "--pool", files.pool, "--id-column", "id", "--task", "demo",
            "--surrogate", f"table:{files.surrogate}", "--target",
            f"table:{perfect}?kind=logits", "--metric", "log_loss", "--seed", 0,
            "--no-progress")
    run_cli("select", db, "--n", 45)
    with Session.open(db) as s:
        s.label_from_data()
        r = s.estimate(target_width=0.1, progress=False)
    a = r.metrics["log_loss"].anytime
    assert a is not None and not a.may_stop
    assert a.cs_high - a.cs_low > 1.0  # the whole range, not the point
    out = " ".join(run_cli("estimate", db, "--target-width", 0.1).split())
    assert "you may stop now" not in out, out
    assert ("log loss: every labelled term is the same so far, so the fixed-budget interval "
            "is a point that claims nothing") in out, out
    assert "read the exact anytime 95% CS" in out
    # nor a projection of the CS's width from no spread (QA: "at about 197 labels")
    assert a.labels_needed is None and "log_loss: the anytime" not in out
    assert "log_loss: no projection while every labelled term is the same" in out
    status = " ".join(run_cli("status", db).split())
    assert "every labelled term is the same so far" in status, status
    from activetest.session.annotator_agreement import progress

    with Session.open(db) as s:  # the labelling page's progress line says it too
        (m,) = progress(s, target_width=0.1).metrics
    assert not m.may_stop and (m.basis_note or "").startswith(
        "log loss: every labelled term is the same so far"), m


def test_a_compared_models_equal_losses_are_noted_alike_by_estimate_and_status(
        tmp_path: Path) -> None:
    """A compared model equally sure and right on every labelled item: its anytime CS is
    "unbounded (see the note)". `estimate` had no note for it, and `status` printed a
    generic one ("the labelled terms have no spread yet ..."); both now say the
    no-spread sentence, the same one (estimate_notes.no_spread_line)."""
    files = make_pool_files(tmp_path / "data", n=200)
    db = tmp_path / "c.db"
    run_cli("init", db, "--pool", files.pool, "--id-column", "id", "--task", "demo",
            "--surrogate", f"table:{files.surrogate}", "--target",
            f"table:{files.target}", "--metric", "log_loss", "--seed", 0, "--no-progress")
    run_cli("select", db, "--n", 40)
    run_cli("label", db, "--from-data")
    other = tmp_path / "data" / "sure.csv"  # right on every item, equally sure
    with other.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "negative", "positive"])
        for i, y in zip(files.ids, files.labels, strict=True):
            w.writerow([i, -0.1, -2.3] if y == 0 else [i, -2.3, -0.1])
    spec = f"table:{other}?kind=logits"
    shown = "table:sure.csv?kind=logits"  # (a new session names it by its name)
    sentence = (f"{shown}'s log loss: every labelled term is the same so far, so the "
                f"fixed-budget interval is a point that claims nothing (no spread to "
                f"estimate) and the anytime CS is the whole range until they differ: "
                f"label more")
    out = run_cli("estimate", db, "--compare", spec)
    assert f"{shown} LURE estimate" in out and \
        "anytime 95% confidence sequence unbounded (see the note)" in out, out
    assert f"note: {sentence}" in out.splitlines(), out
    lines = [x.strip() for x in run_cli("status", db).splitlines()]
    at = next(i for i, x in enumerate(lines) if f"compared target {shown}" in x)
    assert lines[at + 2] == "anytime 95% confidence sequence unbounded (see the note)", lines
    assert f"note: {sentence}" in lines[at + 1:at + 5], lines
    assert not any("no spread yet" in x for x in lines), lines
