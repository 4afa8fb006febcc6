"""What the outputs say once every pool item is labelled (a census), and where a
bootstrap interval is already as narrow as asked: measurements, not projections, and no
"(from 30 labels)" beside a CS that the same output calls narrow enough to stop on (QA)."""

from __future__ import annotations

import json
from pathlib import Path

from session_support import PoolFiles, make_pool_files, run_cli

from activetest.session.workflow import Session


def _census(tmp_path: Path, n: int = 3) -> Path:
    """A ``table:`` session of ``n`` items compared with a second target at creation,
    every item drawn and labelled from the pool's own labels."""
    files = make_pool_files(tmp_path / "data", n=n)
    return _labelled(tmp_path / "census.db", files, n, "--compare",
                     f"table:{files.target2}", "--metric", "both")


def _labelled(db: Path, files: PoolFiles, draws: int, *extra: object) -> Path:
    """A ``table:`` session of ``files`` at ``db`` (``extra``: more init options) with
    ``draws`` items drawn and labelled from the pool's own labels."""
    run_cli("init", db, "--pool", files.pool, "--id-column", "id", "--task", "demo",
            "--surrogate", f"table:{files.surrogate}", "--target", f"table:{files.target}",
            "--seed", 0, "--no-progress", *extra)
    run_cli("select", db, "--n", draws)
    with Session.open(db) as s:
        s.label_from_data()
    return db


def test_a_census_shows_its_cs_and_says_the_estimate_is_the_pools_value(
        tmp_path: Path) -> None:
    db = _census(tmp_path)
    out = " ".join(run_cli("estimate", db, "--target-width", 0.1).split())
    assert "you may stop now" in out
    # the CS it stops on is shown (a point), in the table and for the compared target
    assert "(from 30 labels)" not in out, out
    # no projection of labels beyond the pool: every item is labelled
    assert "not reached within the pool" not in out and "projected" not in out, out
    assert "log_loss: every pool item is labelled: the estimate is the pool's exact value" \
        in out
    status = " ".join(run_cli("status", db).split())
    assert "(from 30 labels)" not in status and "anytime 95% confidence sequence [" in status
    with Session.open(db) as s:
        data = s.report_data(progress=False)
        r = s.estimate(record=False, progress=False)
    for rows in data.history.values():  # the report's table and band: the CS at the census
        assert rows[-1].active.anytime is not None
    for c in data.comparison:
        assert c.difference.anytime is not None and c.other.anytime is not None
    for rec in json.loads(run_cli("estimate", db, "--format", "eee")):
        details = rec["evaluation_results"][0]["score_details"]["details"]
        assert "anytime_low" in details, details
    assert r.n_labels == r.n_pool == 3


def test_the_reports_labels_needed_projects_nothing_at_a_census(tmp_path: Path) -> None:
    """At a census `estimate` says the estimate is the pool's exact value and projects no
    labels; the report's "Labels needed" table said "not within the pool (3 items; about
    N projected)" for the active bootstrap interval (QA: "about 6146 projected" beside
    300 of 300 labelled)."""
    db = _census(tmp_path)
    run_cli("report", db, "--out", tmp_path / "report", "--target-width", 0.01)
    md = (tmp_path / "report" / "report.md").read_text()
    table = md.split("## Labels needed", 1)[1].split("## Figures", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| log loss")
            or line.startswith("| error rate")]
    assert len(rows) == 2, table
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2] == "reached (3 used)", row  # the CS: a point at the census
        assert cells[3] == "every item labelled: the pool's exact value", row
    # the estimates table: no bootstrap interval around the plain mean, the pool's value
    # at a census, as estimate and status show none (QA: [0.2471, 0.3529] around 0.3000)
    head, *body = [line for line in md.split("## Estimates", 1)[1].split("\n\n", 2)[1]
                   .splitlines() if line.startswith("|")]
    col = [c.strip() for c in head.strip("|").split("|")].index(
        "uniform-equivalent: bootstrap 95% interval")
    for line in body[1:]:  # (after the |---| row)
        assert [c.strip() for c in line.strip("|").split("|")][col] == "—", line


def test_a_difference_known_to_be_zero_is_not_undecided(tmp_path: Path) -> None:
    db = _census(tmp_path)
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False)
    zero = [c for c in r.comparisons if c.difference_anytime is not None
            and c.difference_anytime.cs_high - c.difference_anytime.cs_low <= 1e-9
            and abs(c.difference.estimate) <= 1e-12]
    assert zero  # on this pool the two targets' error rates are equal
    out = " ".join(run_cli("estimate", db).split())
    assert "no difference (known exactly)" in out, out
    run_cli("report", db, "--out", tmp_path / "report")
    assert "no difference (known exactly" in (tmp_path / "report" / "report.md").read_text()


def test_a_bootstrap_interval_already_as_narrow_as_asked_is_no_projection(
        tmp_path: Path) -> None:
    db = _labelled(tmp_path / "s.db", make_pool_files(tmp_path / "data", n=200), 60,
                   "--metric", "error_rate")
    with Session.open(db) as s:
        r = s.estimate(record=False, progress=False, target_width=0.9)
    m = r.metrics["error_rate"]
    assert m.labels_needed is not None and m.labels_needed <= r.n_labels
    out = " ".join(run_cli("estimate", db, "--target-width", 0.9).split())
    assert "0 more" not in out, out
    assert (f"error_rate: the bootstrap 95% interval is {m.active.high - m.active.low:.4g} "
            f"wide, within 0.9 (no guarantee: stop on the anytime 95% confidence sequence)"
            in out), out


def test_one_label_says_its_bootstrap_point_claims_nothing(tmp_path: Path) -> None:
    db = _labelled(tmp_path / "one.db", make_pool_files(tmp_path / "data", n=20), 1,
                   "--metric", "both")
    out = " ".join(run_cli("estimate", db).split())
    assert ("one label has no spread: the fixed-budget interval and the CS need two or more, "
            "and the bootstrap interval shown is that label's own value, a point that claims "
            "nothing") in out, out


def test_no_blind_spot_widening_is_said_of_intervals_one_label_does_not_show(
        tmp_path: Path) -> None:
    """QA: with one label under CE, `estimate` showed '—' for the fixed-budget interval
    and the CS while its notes said both were "widened by +0.28" for the blind spot, and
    `status` repeated that line under intervals it did not show. With 40 labels the
    intervals are shown, and so is their widening."""
    files = make_pool_files(tmp_path / "data", n=200)
    db = _labelled(tmp_path / "one.db", files, 1, "--metric", "error_rate",
                   "--acquisition", "ce")
    out = " ".join(run_cli("estimate", db).split())
    assert "one label has no spread" in out and "widened by" not in out, out
    status = " ".join(run_cli("status", db).split())
    assert "widened by" not in status, status
    run_cli("select", db, "--n", 39)  # enough errors for the CLT intervals to be shown
    with Session.open(db) as s:
        s.label_from_data()
    out = " ".join(run_cli("estimate", db).split())
    assert "fixed-budget 95% interval and anytime 95% confidence sequence widened by" in out, out


def test_status_shows_the_exact_cs_row_estimate_shows(tmp_path: Path) -> None:
    """QA: before 30 labels `estimate` shows the exact anytime CS (valid at any number of
    labels) where the asymptotic one says "(from 30 labels)"; `status` left that row out,
    so it showed no anytime interval at all."""
    files = make_pool_files(tmp_path / "data", n=60)
    db = _labelled(tmp_path / "s.db", files, 12, "--metric", "error_rate")
    out = " ".join(run_cli("estimate", db).split())
    status = " ".join(run_cli("status", db).split())
    with Session.open(db) as s:
        a = s.estimate(record=False, progress=False).metrics["error_rate"].anytime
    assert a is not None and a.exact_low is not None
    row = f"exact anytime 95% confidence sequence [{a.exact_low:.4f}, {a.exact_high:.4f}]"
    assert "exact anytime 95% confidence sequence" in out
    assert row in status, status


def test_a_census_of_equal_terms_does_not_say_the_bootstrap_missed_undrawn_items() -> None:
    """QA: every item labelled and every labelled term the same (no error): the note
    said "the bootstrap cannot see what was not drawn", at a census, where everything
    was drawn; short of a census it is said."""
    import numpy as np

    from activetest import ActiveTest

    rng = np.random.default_rng(0)
    S, T = np.log(rng.dirichlet([1, 1, 1], size=6)), rng.dirichlet([1, 1, 1], size=6)
    for k, said in ((5, True), (6, False)):
        run = ActiveTest(S, T, metric="error_rate", seed=0)
        rows = run.next(k)
        run.label_many(rows, [int(T[r].argmax()) for r in rows])  # no error
        r = run.estimate()
        assert r.metrics["error_rate"].active.std == 0.0
        assert any("cannot see what was not drawn" in w for w in r.warnings) is said, \
            (k, r.warnings)
