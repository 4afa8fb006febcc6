"""The Session API on prediction tables: draws, labels, estimates, comparisons, files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, _write_table, run_cli_process

from activetest.data.pool import PoolFormatError
from activetest.data.task import Item
from activetest.models.table import TableScorer
from activetest.session.labelio import LabelFileError
from activetest.session.store import SessionError
from activetest.session.workflow import LabelError, Session
from activetest.stats import (
    ActiveSampler,
    acquisition_scores,
    expected_log_loss,
    expected_zero_one_loss,
    labels_for_width,
    log_loss,
    lure,
    lure_terms,
    predictive_entropy,
    zero_one_loss,
)


def _create(pf: PoolFiles, path: Path, **kw: object) -> Session:
    # the paper's CE acquisition (the default is the adaptive design: test_adaptive_session)
    args: dict[str, object] = dict(pool=pf.pool, task="demo",
                                   surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=7, progress=False,
                                   pool_options={"id_column": "id"}, acquisition="ce")
    args.update(kw)
    return Session.create(path, **args)  # type: ignore[arg-type]


def _table(path: Path, task_name: str = "demo") -> np.ndarray:
    from activetest.data import get_task

    ids = []
    with path.open() as f:
        ids = [row["id"] for row in csv.DictReader(f)]
    items = [Item(i, {"text": ""}) for i in ids]
    return TableScorer(path).score(get_task(task_name), items, progress=False)


def test_draws_match_the_sampler_whatever_the_batching(pool_files: PoolFiles,
                                                       tmp_path: Path) -> None:
    s_lp, t_lp = _table(pool_files.surrogate), _table(pool_files.target)
    scores = acquisition_scores("ce", surrogate_logprobs=s_lp, target_logprobs=t_lp)
    ref_idx, ref_q = ActiveSampler(scores, proposal_floor=0.1, seed=7).draw(12)
    with _create(pool_files, tmp_path / "a.db") as s:
        got = s.select(3) + s.select(1) + s.select(8)
    assert [a.index for a in got] == ref_idx.tolist()
    assert [a.q for a in got] == ref_q.tolist()  # bit-identical
    assert [a.step for a in got] == list(range(1, 13))
    assert [a.item_id for a in got] == [pool_files.ids[i] for i in ref_idx]


def test_estimate_is_lure_with_the_stored_q(pool_files: PoolFiles, tmp_path: Path) -> None:
    t_lp = _table(pool_files.target)
    with _create(pool_files, tmp_path / "a.db", metric="both") as s:
        acq = s.select(20)
        assert s.label_from_data() == 20
        r = s.estimate()
        idx = np.array([a.index for a in acq])
        q = np.array([a.q for a in acq])
        y = pool_files.labels[idx]
        N = len(pool_files.ids)
        ll = log_loss(t_lp[idx], y)
        assert r.n_labels == 20 and r.n_pool == N
        assert r.metrics["log_loss"].active.estimate == pytest.approx(lure(ll, q, N), rel=1e-12)
        assert r.metrics["log_loss"].uniform.estimate == pytest.approx(ll.mean(), rel=1e-12)
        zo = zero_one_loss(t_lp[idx], y)
        assert r.metrics["error_rate"].active.estimate == pytest.approx(lure(zo, q, N))
        assert r.metrics["log_loss"].curve[-1] == pytest.approx(lure(ll, q, N))
        assert len(r.metrics["log_loss"].curve) == 20
        # The same call gives the same interval (seeded bootstrap), and it is recorded.
        r2 = s.estimate()
        assert r2.metrics["log_loss"].active == r.metrics["log_loss"].active
        rows = s.estimates_history()
        assert {(e.metric, e.method) for e in rows} == {
            (m, k) for m in ("log_loss", "error_rate") for k in ("lure", "mean", "cv_lure")}
        # Control-variate LURE: mean_pool(h) + LURE(loss - h), h = the surrogate's
        # expected loss of the target over the whole pool.
        s_lp = _table(pool_files.surrogate)
        h = expected_log_loss(s_lp, t_lp)
        cv = r.metrics["log_loss"].cv
        assert cv is not None
        assert cv.estimate == pytest.approx(h.mean() + lure(ll - h[idx], q, N), rel=1e-12)
        assert r.metrics["log_loss"].control_mean == pytest.approx(h.mean(), rel=1e-12)
        h01 = expected_zero_one_loss(s_lp, t_lp)
        cv01 = r.metrics["error_rate"].cv
        assert cv01 is not None
        assert cv01.estimate == pytest.approx(h01.mean() + lure(zo - h01[idx], q, N), rel=1e-12)
        assert cv.low < cv.estimate < cv.high
        assert "only 20 labels" in " ".join(r.warnings)
        st = s.status()
        assert (st.n_items, st.n_selected, st.n_labelled, st.n_pending, st.n_usable) == (
            N, 20, 20, 0, 20)


def test_only_the_labelled_prefix_of_the_draws_is_used(pool_files: PoolFiles,
                                                       tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        acq = s.select(6)
        with pytest.raises(SessionError, match="no usable labels"):
            s.add_label(acq[1].item_id, 1)
            s.estimate()
        s.add_label(acq[0].item_id, 0)
        s.add_label(acq[3].item_id, "positive")
        r = s.estimate(record=False)
        assert (r.n_labels, r.n_waiting) == (2, 1)
        assert any("wait for item" in w for w in r.warnings)
        assert [a.item_id for a in s.pending()] == [acq[i].item_id for i in (2, 4, 5)]
        assert s.n_pending() == 3  # counted in SQL, the same items


def test_label_errors_are_clear_and_write_nothing(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        acq = s.select(3)
        a, b = acq[0].item_id, acq[1].item_id
        s.add_label(a, "negative")
        unselected = next(i for i in pool_files.ids if i not in {x.item_id for x in acq})
        bad = [(b, "positive", "f.csv, line 2"), ("nope", "positive", "f.csv, line 3"),
               (b, "maybe", "f.csv, line 4"), (unselected, 1, "f.csv, line 5"),
               (a, "positive", "f.csv, line 6")]
        with pytest.raises(LabelError) as exc:
            s.add_labels(bad)
        msg = str(exc.value)
        assert "4 label problem(s); nothing was imported" in msg
        assert "f.csv, line 3: item 'nope' is not in the pool" in msg
        assert "f.csv, line 4" in msg and "unknown label 'maybe'" in msg
        assert f"f.csv, line 5: item {unselected!r} was never selected" in msg
        assert f"f.csv, line 6: item {a!r} already has label 'negative'" in msg
        assert s.labels() == {a: 0}  # b was valid but the whole import was refused
        # Records that disagree about one item leave it out (reported), and only it.
        c = acq[2].item_id
        res = s.add_labels([(b, 1, "f.csv, line 1"), (b, 0, "f.csv, line 2"),
                            (c, 0, "f.csv, line 3")])
        assert (res.added, [x.item_id for x in res.left_out]) == (1, [b])
        assert res.conflicts[0].votes == (("positive", "f.csv, line 1", "f.csv, line 1"),
                                          ("negative", "f.csv, line 2", "f.csv, line 2"))
        assert s.labels() == {a: 0, c: 0}
        s.undo(res.changes[0])
        # Overwrite replaces and keeps the history.
        res = s.add_labels([(a, "positive"), (b, "positive")], overwrite=True)
        assert (res.added, res.changed, res.unchanged) == (1, 1, 0)
        assert s.labels() == {a: 1, b: 1}
        assert [(h.action, h.old, h.new) for h in s.history(a)] == [("add", None, 0),
                                                                   ("change", 0, 1)]
        res = s.add_labels([(a, 1)])
        assert (res.added, res.changed, res.unchanged) == (0, 0, 1)
        # a mapping and lists are labels too; anything else is named (QA: a dict failed
        # with "'str' object has no attribute 'item_id'")
        s.undo(s.add_labels({c: "positive"}).changes[0])
        assert s.add_labels([[c, "positive"]]).added == 1 and s.labels()[c] == 1
        for bad_records, says in ((["nope"], r"label 1 is .nope.: give \(item_id, label\) "
                                              "pairs, a mapping item_id -> label"),
                                  ("nope", "^records must be .*got the string 'nope'"),
                                  ([(c,)], r"label 1 is \('.*',\): a pair is")):
            with pytest.raises(TypeError, match=says):
                s.add_labels(bad_records)


def test_pe_scores_the_target_only_on_labelled_items(pool_files: PoolFiles,
                                                     tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db", acquisition="pe") as s:
        stored = s.store.scores("target")
        assert stored is not None and not stored.scored.any()
        acq = s.select(5)
        s.label_from_data()
        s.estimate()
        stored = s.store.scores("target")
        assert stored is not None
        assert set(np.flatnonzero(stored.scored)) == {a.index for a in acq}
        s_lp = _table(pool_files.surrogate)
        ref, _ = ActiveSampler(acquisition_scores("pe", surrogate_logprobs=s_lp), seed=7).draw(5)
        assert [a.index for a in acq] == ref.tolist()
        # No target predictions on the pool: the control is the surrogate's own
        # expected loss (its entropy), which still gives an unbiased CV-LURE.
        r = s.estimate(record=False)
        h = predictive_entropy(s_lp)
        idx = np.array([a.index for a in acq])
        q = np.array([a.q for a in acq])
        ll = log_loss(_table(pool_files.target)[idx], pool_files.labels[idx])
        cv = r.metrics["log_loss"].cv
        assert cv is not None
        assert cv.estimate == pytest.approx(h.mean() + lure(ll - h[idx], q, len(s_lp)),
                                            rel=1e-12)


def test_noise_alarm_flags_confidently_contradicted_labels(pool_files: PoolFiles,
                                                          tmp_path: Path) -> None:
    t_lp = _table(pool_files.target)
    y = pool_files.labels
    # Make the target near-certain of the wrong class on items 0..9.
    for k in range(10):
        t_lp[k, 1 - y[k]] = np.log1p(-1e-4)
        t_lp[k, y[k]] = np.log(1e-4)
    table = tmp_path / "noisy_target.csv"
    _write_table(table, pool_files.ids, t_lp)
    with _create(pool_files, tmp_path / "a.db", target=f"table:{table}",
                 acquisition="uniform") as s:
        acq = s.select(40)
        s.label_from_data()
        r = s.estimate()
    flagged_rows = {a.index for a in acq if a.index < 10}
    assert flagged_rows, "the uniform draw of 40/60 should include some of items 0..9"
    assert {f.item_id for f in r.flagged} >= {pool_files.ids[i] for i in flagged_rows}
    assert all(f.target_nll > 5 or f.surrogate_nll > 5 for f in r.flagged)
    idx = np.array([a.index for a in acq])
    terms = lure_terms(log_loss(t_lp[idx], y[idx]), np.array([a.q for a in acq]), 60)
    keep = np.array([pool_files.ids[i] not in {f.item_id for f in r.flagged} for i in idx])
    assert r.metrics["log_loss"].without_flagged == pytest.approx(terms[keep].mean())


def test_paired_comparison_and_labels_needed(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        s.select(25)
        s.label_from_data()
        r = s.estimate(compare=f"table:{pool_files.target2}", target_width=0.05)
        (c,) = r.comparisons
        m = r.metrics["log_loss"]
        assert c.difference.estimate == pytest.approx(m.active.estimate - c.other.estimate)
        assert c.difference.low < c.difference.estimate < c.difference.high
        # the 1/sqrt(labels) projection, beyond the pool: not capped at it (the bootstrap
        # has no finite-population factor; QA), and the command line says so
        assert m.labels_needed == labels_for_width(m.active, 0.05) > s.n_items == 60
        assert s.store.scores(f"compare:{c.spec}") is not None
    out = " ".join(run_cli_process("estimate", tmp_path / "a.db", "--target-width", "0.05",
                                   columns=200).split())
    assert ("log_loss: a bootstrap 95% interval of width 0.05 is not reached within the "
            "pool's 60 items") in out, out


def test_bad_pools_and_arguments(pool_files: PoolFiles, tmp_path: Path) -> None:
    dup = tmp_path / "dup.csv"
    dup.write_text("id,text,label\na,good,positive\nb,bad,negative\na,fine,positive\n")
    with pytest.raises(PoolFormatError, match=r"dup.csv, line 4: duplicate id 'a'"):
        _create(pool_files, tmp_path / "d.db", pool=dup)
    items = [Item("x", {"text": "a"}), Item("x", {"text": "b"})]
    with pytest.raises(SessionError, match="duplicate item id 'x'"):
        _create(pool_files, tmp_path / "d.db", pool=items, pool_options=None)
    with pytest.raises(ValueError, match="acquisition must be one of"):
        _create(pool_files, tmp_path / "d.db", acquisition="nll")
    with pytest.raises(SessionError, match="needs labelled in-context examples"):
        _create(pool_files, tmp_path / "d.db", shots=4)
    assert not (tmp_path / "d.db").exists()
    with _create(pool_files, tmp_path / "a.db") as s, pytest.raises(ValueError,
                                                                   match="only 60 of 60"):
        s.select(61)


def test_examples_and_target_shots_are_recorded(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db", examples=pool_files.examples, shots=6,
                 target_shots=0) as s:
        ex = s.examples()
        assert len(ex) == 6 and {e.label for e in ex} == {0, 1}
        assert {e.id for e in ex} <= {f"e{k}" for k in range(20)}
        assert (s.config["shots"], s.config["target_shots"]) == (6, 0)
        # both models are prediction tables: the session's prompt was not used, and a
        # plain table does not say how its predictions were made
        prov = s.store.scores("surrogate")
        assert prov is not None and prov.provenance["n_examples"] == "unknown"
        t = s.store.scores("target")
        assert t is not None and t.provenance["n_examples"] == "unknown"
        s.select(2)
        s.label_from_data()
        assert s.report_data(progress=False).info["Target in-context examples"] == "unknown"
    with Session.open(tmp_path / "a.db") as s:
        assert s.examples() == ex  # same examples, same order, after reopening


def test_export_and_import_round_trip(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        acq = s.select(5)
        sheet = tmp_path / "todo.csv"
        assert s.export(sheet) == 5
        rows = list(csv.DictReader(sheet.open()))
        assert [r["item_id"] for r in rows] == [a.item_id for a in acq]
        for r in rows[:3]:
            r["label"] = ["negative", "positive"][pool_files.labels[pool_files.ids.index(
                r["item_id"])]]
        with sheet.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        res = s.import_file(sheet)
        assert res.added == 3
        assert len(s.pending()) == s.n_pending() == 2
        # Label Studio: export the rest, answer in the export format, import.
        ls = tmp_path / "tasks.json"
        assert s.export(ls) == 2
        tasks = json.loads(ls.read_text())
        for t in tasks:
            t["annotations"] = [{"result": [{"from_name": "label", "to_name": "text",
                                             "type": "choices",
                                             "value": {"choices": ["negative"]}}]}]
        ls.write_text(json.dumps(tasks))
        assert s.import_file(ls).added == 2
        assert s.pending() == [] and s.n_pending() == 0
        hist = s.history()
        assert {h.source for h in hist} == {"csv:todo.csv", "labelstudio:tasks.json"}


def test_malformed_label_file_names_file_and_line(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db") as s:
        acq = s.select(2)
        bad = tmp_path / "bad.jsonl"
        bad.write_text(json.dumps({"item_id": acq[0].item_id, "label": "positive"}) + "\n"
                       + '{"item_id": "x", "label": \n')
        with pytest.raises(LabelFileError, match=r"bad\.jsonl.*line 2"):
            s.import_file(bad)
        assert s.labels() == {}
        # A well-formed file whose 3rd line labels an item that was never drawn: the
        # error names that line, and the good line before it is not imported either.
        never = next(i for i in pool_files.ids if i not in {a.item_id for a in acq})
        sheet = tmp_path / "round1.csv"
        sheet.write_text(f"item_id,label\n{acq[0].item_id},positive\n{never},negative\n")
        with pytest.raises(LabelError, match=rf"round1\.csv, line 3: item '{never}' was never "
                                             rf"selected"):
            s.import_file(sheet)
        assert s.labels() == {}


def test_report_is_written(pool_files: PoolFiles, tmp_path: Path) -> None:
    with _create(pool_files, tmp_path / "a.db", metric="both") as s:
        s.select(30)
        s.label_from_data()
        md = s.write_report(tmp_path / "rep", compare=[f"table:{pool_files.target2}"],
                            target_width=0.1, progress=False)
    text = md.read_text()
    assert "log loss" in text and "error rate" in text and "Comparison" in text
    assert "Control-variate LURE with 30 labels" in text
    for name in ("report.html", "estimates.png", "acquisition.png"):
        assert (tmp_path / "rep" / name).stat().st_size > 1000


def test_who_answered_is_checked_where_it_is_written(pool_files: PoolFiles,
                                                     tmp_path: Path) -> None:
    """Two runs of different models on one session at once (two evals started together):
    each process checked the model it had read, then wrote, and both passed (QA). The
    check now reads the stored model in the writing transaction."""
    from session_support import labelled_table_session

    from activetest.session.workflow import Session

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=1, n=4)
    with Session.open(db) as a, Session.open(db) as b:  # both read "no model yet"
        a.record_target_model("org/model-a", "inspect")
        with pytest.raises(SessionError, match="earlier results are of org/model-a"):
            b.record_target_model("org/model-b", "inspect")
        b.record_target_model("org/model-a", "inspect")  # the same model: fine
    with Session.open(db) as s:
        assert s.session_config.answer_files["target"] == {"model": "org/model-a",
                                                           "tool": "inspect"}


def test_the_repr_of_a_session_says_what_it_is_and_how_far_it_is(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    """QA: ``s`` at a prompt showed ``<activetest.session.workflow.Session object at ...>``."""
    path = tmp_path / "s.db"
    s = _create(pool_files, path)
    s.select(3)
    s.add_label(s.acquisitions()[0].item_id, 0)
    text = repr(s)
    assert text.startswith(f"Session(path={str(path)!r}, kind='classification', task='demo'")
    assert "acquisition='ce'" in text and text.endswith("N=60, selected=3, labelled=1)")
    s.close()
    assert repr(s).endswith("N=60, closed)")


def test_print_of_a_status_reads_as_status_begins(pool_files: PoolFiles,
                                                  tmp_path: Path) -> None:
    """QA: ``print(s.status())`` dumped the dataclass, naming an adaptive design's estimate
    ``method='lure'`` and a proposal floor the adaptive designs do not use."""
    path = tmp_path / "s.db"
    s = Session.create(path, pool=pool_files.pool, task="demo",
                       surrogate=f"table:{pool_files.surrogate}",
                       target=f"table:{pool_files.target}", seed=0, progress=False,
                       pool_options={"id_column": "id"})
    assert "no estimate yet" in str(s.status())
    s.select(12)
    s.label_from_data()
    s.estimate(progress=False)
    text = str(s.status())
    assert "acquisition adaptive, seed 0" in text and "proposal floor" not in text
    assert "pool 60 items of pool.csv (sha256 " in text  # the file, as the report names it
    assert "…): 12 selected, 12 labelled, 0 pending" in text
    assert "log_loss adaptive LURE " in text and "method=" not in text
    assert "SessionStatus(" in repr(s.status())  # repr keeps every field
    s.close()
    ce = tmp_path / "ce.db"
    with _create(pool_files, ce) as c:
        assert "acquisition ce, proposal floor 0.1, seed" in str(c.status())
