"""``init --history`` in a classification session: the feature design over other models'
results and the surrogate's probabilities, the target run only on the labelled items
(real files, real SQLite; the draws checked against the design itself)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, make_pool_files

from activetest.session.store import SessionError
from activetest.session.workflow import Session
from activetest.stats import adaptive_lure
from activetest.stats.adaptive import AdaptiveSampler


def _target_errors(pf: PoolFiles) -> np.ndarray:
    import csv

    with pf.target.open() as f:
        rows = list(csv.DictReader(f))
    pred = np.array([int(float(r["positive"]) > float(r["negative"])) for r in rows])
    return (pred != pf.labels).astype(float)


def _history(pf: PoolFiles, path: Path, H: int = 30, with_target: bool = True) -> Path:
    """H other models that err where the target tends to (a shared difficulty), the
    target's own row named 'me', and one pool item without history."""
    rng = np.random.default_rng(4)
    err = _target_errors(pf)
    n = len(pf.ids)
    b = np.where(err > 0, -1.0, 1.5) + rng.normal(0, 0.5, n)
    Y = rng.random((H, n)) < 1 / (1 + np.exp(-(b[None, :] + rng.normal(0, 0.5, (H, 1)))))
    lines = ["model," + ",".join(pf.ids[1:])]
    lines += [f"m{h}," + ",".join(str(int(v)) for v in Y[h, 1:]) for h in range(H)]
    if with_target:
        lines.append("me," + ",".join(str(int(1 - v)) for v in err[1:]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _create(pf: PoolFiles, path: Path, hist: Path, **kw: object) -> Session:
    args: dict[str, object] = dict(pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=5, progress=False,
                                   metric="error_rate", pool_options={"id_column": "id"},
                                   history=[hist], history_exclude=["me"])
    args.update(kw)
    return Session.create(path, **args)  # type: ignore[arg-type]


def test_classification_history_draws_by_the_feature_design_and_is_exact_at_census(
        tmp_path: Path) -> None:
    pf = make_pool_files(tmp_path / "data")
    hist = _history(pf, tmp_path / "history.csv")
    err = _target_errors(pf)
    with _create(pf, tmp_path / "h.db", hist) as s:
        cfg = s.config
        assert cfg["acquisition"] == "pe_adaptive" and cfg["design"] == "features"
        assert cfg["history"]["features"] == ["surrogate"] and "design_rule" not in cfg
        assert cfg["history"]["n_models"] == 30 and cfg["history"]["n_covered"] == 59
        assert ["me", "named by --history-exclude"] in cfg["history"]["excluded"]
        assert not np.isfinite(s.store.scores("target").logprobs).any()  # not on the pool
        from activetest.session.design import history_design, stored_design
        from activetest.session.history_neighbours import settings_of, stored_responses

        # new sessions: with the neighbours' column (test_history_neighbours_session.py)
        ref_design = history_design(s.store.scores("history").logprobs, "original",
                                    s.store.scores("surrogate").logprobs,
                                    stored_responses(s.store), settings_of(cfg["history"]))
        assert stored_design(s.store).spec() == ref_design.spec()
        ref = AdaptiveSampler(ref_design, seed=5)
        got = []
        for b in [1] * 8 + [4, 3]:
            got += s.select(b)
            s.label_from_data()
            idx, _ = ref.draw(b)
            ref.observe(labels=pf.labels[idx].tolist(), losses=err[idx].tolist())
        assert [a.index for a in got] == ref.acquired
        np.testing.assert_allclose([a.q for a in got], ref.q, rtol=1e-12, atol=0)
        assert ref.refits[-1] >= 3  # the design did learn
        from activetest.session.draw import design_info

        info = design_info(s.store)
        # the design named as init and status name it, its surrogate features included
        assert info["model"].startswith("history features + surrogate + neighbours (eps ")
        w = info["weights"]  # each fitted weight under its own name
        r = cfg["history"]["rank"]
        assert list(w) == ["difficulty log-odds", "intercept",
                           *[f"factor {k + 1}" for k in range(r)], "no history",
                           "surrogate P(class 2)", "surrogate entropy", "surrogate max P",
                           "neighbours"]
        r = s.estimate().metrics["error_rate"].active.estimate
        want = adaptive_lure(err[ref.acquired], np.array(ref.q), len(err),
                             np.array(ref.control), np.array(ref.control_rest))
        assert r == pytest.approx(float(want), rel=1e-12)
    with Session.open(tmp_path / "h.db") as s:  # reopened: the design replays, then goes on
        s.select(s.n_items - len(got))
        s.label_from_data()
        est = s.estimate().metrics["error_rate"].active.estimate
    assert est == pytest.approx(err.mean(), abs=1e-9)  # at census: the pool's error rate


def test_classification_history_refusals(tmp_path: Path) -> None:
    pf = make_pool_files(tmp_path / "data")
    hist = _history(pf, tmp_path / "history.csv")
    with pytest.raises(SessionError, match="--metric error_rate"):
        _create(pf, tmp_path / "a.db", hist, metric="log_loss")
    with pytest.raises(SessionError, match="leave --acquisition out"):
        _create(pf, tmp_path / "b.db", hist, acquisition="adaptive")
    with pytest.raises(SessionError, match="matches no history row"):
        _create(pf, tmp_path / "c.db", hist, history_exclude=["nobody"])
    bad = tmp_path / "positional.csv"
    bad.write_text("model," + ",".join(str(i) for i in range(60)) + "\nm1," + ",".join(
        "1" for _ in range(60)) + "\n")
    with pytest.raises(SessionError, match="never by position"):
        _create(pf, tmp_path / "d.db", bad, history_exclude=[])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SessionError, match="no harness log"):
        _create(pf, tmp_path / "e.db", empty, history_exclude=[])
    (empty / "notes.txt").write_text("not a log\n")
    (empty / "samples_x_2026-01-01T00-00-00.jsonl").write_text("{not json\n")
    with pytest.raises(SessionError, match=r"samples_x_2026-01-01T00-00-00\.jsonl"):
        _create(pf, tmp_path / "f.db", empty, history_exclude=[])
    # QA: --surrogate history (with --history or without) was looked up as a model
    # ("'history' is not a bundled model ..."); classification takes a surrogate model
    for extra in ({}, {"history": [hist], "history_exclude": ["me"]}):
        with pytest.raises(SessionError, match=r"--surrogate history is for graded tasks .* "
                                               r"--surrogate MODEL --history FILE\|DIR"):
            Session.create(tmp_path / "g.db", pool=pf.pool, task="demo", surrogate="history",
                           target=f"table:{pf.target}", metric="error_rate", progress=False,
                           pool_options={"id_column": "id"}, **extra)
    assert not any(tmp_path.glob("*.db"))  # nothing half-made


def test_a_response_matrix_never_joins_a_pool_keyed_by_row_numbers(tmp_path: Path) -> None:
    """QA: a matrix whose columns are 0..N-1 was joined to a pool whose ids are its rows'
    numbers (no id column), by position alone, and used as history. A matrix has no item
    content to confirm a join by: refused, naming the file and what the pool's ids are."""
    pf = make_pool_files(tmp_path / "d", n=60)
    lines = pf.pool.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    k = header.index("id")
    positional = tmp_path / "pool_rows.csv"  # the same pool without its id column
    import csv
    import io

    rows = list(csv.reader(io.StringIO(pf.pool.read_text(encoding="utf-8"))))
    with positional.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([r[:k] + r[k + 1:] for r in rows])
    rng = np.random.default_rng(0)
    hist = tmp_path / "m.csv"
    hist.write_text("model," + ",".join(str(i) for i in range(60)) + "\n" + "".join(
        f"m{h}," + ",".join(str(int(v)) for v in rng.random(60) < 0.5) + "\n"
        for h in range(5)), encoding="utf-8")
    with pytest.raises(SessionError, match=r"m\.csv: a response matrix holds no item content, "
                                           r"and the pool's item ids are its rows' numbers"):
        _create(pf, tmp_path / "s.db", hist, pool=positional, pool_options={},
                history_exclude=())
    assert not (tmp_path / "s.db").exists()


def test_a_table_targets_identical_row_is_dropped_and_said(tmp_path: Path) -> None:
    """QA: with a ``table:FILE.csv`` target (class scores) the target's own row in a
    response matrix was used as history: only an lm-eval target's right/wrong was known to
    compare rows with. Where the pool carries its labels, the table's top class against
    them is the target's right/wrong, and the identical row is dropped and said, as for
    the other kinds (real CLI, real files)."""
    from session_support import run_cli_process

    pf = make_pool_files(tmp_path / "data")
    hist = _history(pf, tmp_path / "history.csv")  # 'me': the target's own row
    out = run_cli_process("init", tmp_path / "s.db", "--pool", pf.pool, "--task", "demo",
                          "--id-column", "id", "--surrogate", f"table:{pf.surrogate}",
                          "--target", f"table:{pf.target}", "--metric", "error_rate",
                          "--history", hist, "--seed", "5", "--no-progress", columns=300)
    assert "row 'me' not used (identical to the target's own scores on 59 items" in out, out
    assert "history: 30 model(s)" in out
    # both models are read from files, the target too though a history session scores
    # it on the labelled items only (QA: "0 in-context example(s) for the target")
    assert "example(s) for the target" not in out, out
    assert ("0 in-context example(s) for models scored here (the surrogate's and the "
            "target's predictions are read from files)") in out, out
    with Session.open(tmp_path / "s.db") as s:
        assert [e[0] for e in s.config["history"]["excluded"]] == ["me"]
    # one result differs: no longer the target's row (a chance match is not dropped)
    lines = hist.read_text().splitlines()
    me = lines[-1].split(",")
    me[1] = str(1 - int(me[1]))
    hist.write_text("\n".join([*lines[:-1], ",".join(me)]) + "\n")
    out = run_cli_process("init", tmp_path / "t.db", "--pool", pf.pool, "--task", "demo",
                          "--id-column", "id", "--surrogate", f"table:{pf.surrogate}",
                          "--target", f"table:{pf.target}", "--metric", "error_rate",
                          "--history", hist, "--seed", "5", "--no-progress", columns=300)
    assert "history: 31 model(s)" in out and "not used" not in out, out


def test_a_table_scorer_objects_identical_row_is_dropped(tmp_path: Path) -> None:
    """The same with the target given as a TableScorer object (the Python API)."""
    from activetest.models.table import TableScorer

    pf = make_pool_files(tmp_path / "data")
    hist = _history(pf, tmp_path / "history.csv")
    with _create(pf, tmp_path / "h.db", hist, target=TableScorer(pf.target),
                 history_exclude=[]) as s:
        assert dict(map(tuple, s.config["history"]["excluded"]))["me"].startswith(
            "identical to the target's own scores on 59 items")
