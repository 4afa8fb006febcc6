"""The target-free session kind for inspect_ai (``init --target inspect``).

A plain pool file (id, the samples' text, a surrogate column) makes a graded session
without answers; the surrogate column is not a text field (the join with the samples
checks every text field); a pool with answers, another surrogate or options that need
the target's prompts are refused before anything is written; ``select --emit lm-eval``
is refused before drawing; ``status`` counts the target runs (labels from inspect) and
projects uniform's runs for the same width from the estimate's variance.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from activetest.session.harness import runs_summary, uniform_runs_for_width
from activetest.session.workflow import Session

ROOT = Path(__file__).resolve().parents[2]


def _pool(tmp: Path, n: int = 80, **extra: object) -> Path:
    p = tmp / "pool.jsonl"
    with p.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": f"What is {i} plus 2?",
                                "p_correct": round(0.2 + 0.6 * (i % 7) / 6, 3), **extra})
                    + "\n")
    return p


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "activetest", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=300)


INIT = ["--task", "answers", "--target", "inspect", "--surrogate", "column:p_correct",
        "--seed", "0", "--no-progress"]


def test_init_makes_a_target_free_session(tmp_path: Path) -> None:
    _pool(tmp_path)
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT)
    assert p.returncode == 0, p.stderr
    assert "target inspect" in p.stdout
    # the target's prompts are the task's, not a count of the session's own examples (QA:
    # "0 in-context example(s)")
    assert "the target's prompts are the inspect task's" in p.stdout
    assert "in-context example" not in p.stdout, p.stdout
    # what to do next is the eval, not `select` (QA: its draws `label` then refused)
    assert ("next: run the eval with activetest.inspect.ActiveStopping('s.db', ...)"
            in p.stdout), p.stdout
    p = _cli(tmp_path, "estimate", "s.db")  # nothing ran yet: the eval, not `select`
    assert p.returncode == 2 and "no labels yet: run the eval with activetest.inspect." \
        "ActiveStopping" in " ".join(p.stderr.split()), p.stderr
    with Session.open(tmp_path / "s.db") as s:
        cfg = s.session_config
        assert (cfg.kind, cfg.target, cfg.acquisition) == ("graded", "inspect", "graded_fixed")
        assert cfg.extra["harness"] == {"tool": "inspect"}
        items = s.items()
        assert items[3].fields == {"question": "What is 3 plus 2?"}  # no p_correct
        assert {a for a, _, _ in s.store.answers("target").values()} == {""}
        # the surrogate's column is the design's: P(wrong) = 1 - p_correct
        q0 = s.select(1)[0]
        assert 0 < q0.q < 1
    # uniform draws too; the same seed, the same first draw as a session made again
    p = _cli(tmp_path, "init", "u.db", "--pool", "pool.jsonl", "--task", "answers",
             "--target", "inspect", "--surrogate", "uniform", "--seed", "0", "--no-progress")
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize(("pool_extra", "args", "message"), [
    ({"answer": "4"}, INIT, r"item 'q0' has an answer in the pool file.*--target pool"),
    ({}, [*INIT[:4], "--surrogate", "smollm2-135m", *INIT[6:]],
     r"column:NAME\), other models' results \(--surrogate history with --history\), or "
     r"none \(--surrogate uniform\), not 'smollm2-135m'"),
    ({}, [*INIT, "--shots", "2"], r"shots do not apply to --target inspect"),
])
def test_what_does_not_fit_is_refused_and_nothing_is_written(
        tmp_path: Path, pool_extra: dict[str, object], args: list[str], message: str) -> None:
    _pool(tmp_path, **pool_extra)
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *args)
    assert p.returncode == 2 and re.search(message, " ".join(p.stderr.split())), p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "s.db").exists()


def test_emit_lm_eval_is_refused_before_drawing(tmp_path: Path) -> None:
    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    p = _cli(tmp_path, "select", "s.db", "--n", "3", "--emit", "lm-eval", "--out", "x.json")
    assert p.returncode == 2 and "--target lm-eval" in p.stderr
    with Session.open(tmp_path / "s.db") as s:
        assert s.store.n_acquired() == 0


def test_status_counts_the_target_runs_and_projects_uniforms(tmp_path: Path) -> None:
    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        drawn = s.select(45)
        for j, a in enumerate(drawn[:40]):  # 40 scores from an eval, 2 from a person
            s.add_label(a.item_id, "correct" if j % 3 else "incorrect", source="inspect:e1")
        for a in drawn[40:42]:
            s.add_label(a.item_id, "correct", source="cli", trust_people=True)
        assert runs_summary(s).width is None  # no estimate yet: no projection
    # said, not left out (QA: status printed nothing where the README promises it)
    out = " ".join(_cli(tmp_path, "status", "s.db").stdout.split())
    # with 42 labels and no estimate recorded, what to run, not "needs 30 labels" (QA:
    # after an inspect eval stopped on its own estimate, status said "no estimate yet")
    assert ("a uniform sample's runs for the same width: not projected yet (no recorded "
            "estimate of the 42 labels has an anytime interval: `activetest estimate s.db` "
            "records one)") in out, out
    assert ("no estimate yet: `activetest estimate s.db` computes it from the 42 usable "
            "label(s) and records it (status shows the last estimate `activetest estimate` "
            "recorded; an inspect eval's ActiveStopping keeps the estimate it stopped on in "
            "its log, not in the session)") in out, out
    assert _cli(tmp_path, "estimate", "s.db").returncode == 0
    p = _cli(tmp_path, "status", "s.db")
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and ("target runs spent: 40 (results read from inspect_ai evals "
                                  "as labels); 2 label(s) from people; 45 item(s) drawn; "
                                  "3 drawn item(s) "
                                  "without a result (not run yet, in flight, or ended "
                                  "without one, as in a killed eval: not counted as "
                                  "spent)") in out
    assert "not projected yet" not in out and "a uniform sample would need about" in out
    with Session.open(tmp_path / "s.db") as s:
        r = runs_summary(s)
        e = [x for x in s.store.estimates() if x.method == "lure"][-1]
        budget = s.session_config.planned_budget
    a = e.details["anytime"]
    assert r.width == pytest.approx(a["cs_high"] - a["cs_low"])
    assert budget is not None  # a new session: its CS, and uniform's, tuned to it
    assert r.uniform_runs == uniform_runs_for_width(e.estimate, 80, r.width, budget=budget)
    assert (f"a uniform sample would need about {r.uniform_runs} target runs for the same "
            f"anytime interval width {r.width:.4f} (a projection: the median of seeded "
            f"simulated uniform runs") in " ".join(out.split())
    # a label since the estimate: the width is said to be the last estimate's (QA: an old
    # width read beside the current count of runs)
    with Session.open(tmp_path / "s.db") as s:
        s.add_label(drawn[42].item_id, "correct", source="cli", trust_people=True)
    out = " ".join(_cli(tmp_path, "status", "s.db").stdout.split())
    assert (f"anytime interval width {r.width:.4f} of the last estimate, at 42 labels: "
            f"`activetest estimate` for the 43 now") in out, out


def test_people_are_not_shown_an_answer_that_does_not_exist(tmp_path: Path) -> None:
    """A drawn item of an inspect session has no answer until the eval runs it (the eval
    records the score, never the answer): the terminal, the sheet and the browser refuse
    to ask a person to judge it (exit 2, one message naming the item and where its label
    comes from) instead of showing the question with an empty answer; nothing is stored.
    Items with a label (the eval's score) still export; a graded session with answers is
    unaffected."""
    from activetest.session.store import SessionError
    from activetest.web.server import LabelServer

    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        drawn = s.select(3)
        s.add_label(drawn[0].item_id, "correct", source="inspect:e1")  # the eval's score
    first = f"item {drawn[1].item_id!r} (and 1 more) has"
    for args, who in ((["label", "s.db"], f"label: {first}"),
                      (["label", "s.db", "--n", "5"], "label: the items of a harness session have"),
                      (["select", "s.db", "--n", "2", "--out", "sheet.csv"],
                       "select --out: the items of a harness session have"),
                      (["export", "s.db", "--out", "sheet.csv"], f"export: {first}")):
        p = _cli(tmp_path, *args)
        err = " ".join(p.stderr.split())
        assert p.returncode == 2 and "Traceback" not in err, (args, p.stderr)
        assert (f"{who} no answer from the target yet, so there is nothing for a person to "
                f"judge" in err and "activetest.inspect.ActiveStopping" in err), err
    assert not (tmp_path / "sheet.csv").exists()
    with pytest.raises(SessionError, match=r"serve: the items of a harness session have no "
                                           r"answer from the target yet"):
        LabelServer(tmp_path / "s.db", port=0)
    with Session.open(tmp_path / "s.db") as s:  # nothing stored, nothing drawn
        assert len(s.labels()) == 1 and s.store.n_acquired() == 3
    p = _cli(tmp_path, "export", "s.db", "--out", "done.csv", "--which", "labelled")
    assert p.returncode == 0 and (tmp_path / "done.csv").read_text().count("\n") == 2, p.stderr
    # a graded session whose pool has the answers: a person judges them as before
    ans = tmp_path / "answers.jsonl"
    ans.write_text("".join(json.dumps({"id": f"a{i}", "question": f"What is {i} plus 2?",
                                       "answer": str(i + 2)}) + "\n" for i in range(40)))
    assert _cli(tmp_path, "init", "g.db", "--pool", "answers.jsonl", "--task", "answers",
                "--target", "pool", "--surrogate", "uniform", "--seed", "0",
                "--no-progress").returncode == 0
    assert _cli(tmp_path, "select", "g.db", "--n", "2").returncode == 0
    p = _cli(tmp_path, "export", "g.db", "--out", "g.csv")
    assert p.returncode == 0 and "wrote 2 pending item(s)" in p.stdout, p.stderr


def test_a_persons_label_for_an_item_no_eval_scored_is_refused_unless_trusted(
        tmp_path: Path) -> None:
    """QA: ``label`` refused an inspect item no eval had scored, but ``import`` of a sheet
    and the API took a person's label for it; ActiveStopping then skips the labelled
    item, so the target never ran it and the estimate mixed in a person's judgment."""
    from activetest.session.store import SessionError

    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        drawn = s.select(3)
        s.add_label(drawn[0].item_id, "correct", source="inspect:e1")  # the eval's score
        with pytest.raises(SessionError, match="no inspect_ai eval has scored"):
            s.add_label(drawn[1].item_id, "correct")
        correct = s.parse_label("correct")
    (tmp_path / "sheet.csv").write_text(f"item_id,label\n{drawn[1].item_id},correct\n")
    p = _cli(tmp_path, "import", "s.db", "sheet.csv")
    assert p.returncode == 2, p.stderr
    assert "no inspect_ai eval has scored" in p.stderr and \
        "--trust-labels-from-people" in p.stderr and "Traceback" not in p.stderr
    with Session.open(tmp_path / "s.db") as s:
        assert drawn[1].item_id not in s.labels()
    p = _cli(tmp_path, "import", "s.db", "sheet.csv", "--trust-labels-from-people")
    assert p.returncode == 0, p.stderr
    with Session.open(tmp_path / "s.db") as s:
        assert s.labels()[drawn[1].item_id] == correct
        # a person correcting an eval's score is not this rule's: --overwrite decides
        assert s.add_label(drawn[0].item_id, "incorrect", overwrite=True) is not None


def test_select_lists_a_draw_without_the_answer_it_does_not_have(tmp_path: Path) -> None:
    """QA: ``select`` in an inspect session listed each draw as ``What is 3 plus 2? | |``:
    the empty answer and references of an item no eval has run joined to its question."""
    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    p = _cli(tmp_path, "select", "s.db", "--n", "3")
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if "plus 2?" in line]
    assert len(rows) == 3, p.stdout
    assert all("|" not in row for row in rows), p.stdout


def test_a_folder_given_to_import_is_said_to_be_no_labels_file(tmp_path: Path) -> None:
    """QA: ``import S.db folder`` said "cannot tell the format from the suffix ''"; an
    inspect session's is told where its labels come from instead."""
    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    (tmp_path / "logs").mkdir()
    p = _cli(tmp_path, "import", "s.db", "logs")
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in err and "suffix ''" not in err, err
    assert "logs is a folder, not a file: import reads a label file" in err
    assert "runs in inspect_ai: its labels are the eval's scores, recorded by " \
        "activetest.inspect.ActiveStopping" in err


def test_estimate_and_report_say_what_the_labels_of_inspect_evals_are(tmp_path: Path) -> None:
    """The labels of a --target inspect session are the evals' per-sample scores read as
    judgment levels: estimate, its JSON, status and the report say so, as they do for
    lm-eval (QA: only status said where they came from)."""
    _pool(tmp_path)
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT)
    assert p.returncode == 0, p.stderr
    with Session.open(tmp_path / "s.db") as s:
        for j, a in enumerate(s.select(6)):
            s.add_label(a.item_id, "correct" if j % 3 else "incorrect", source="inspect:e1")
        data = s.report_data(progress=False)
    what = "inspect_ai's per-sample scores (1 eval(s) with activetest.inspect.ActiveStopping"
    assert data.info["Labels"].startswith(what), data.info
    for args in (["estimate", "s.db"], ["status", "s.db"]):
        out = " ".join(_cli(tmp_path, *args).stdout.split())
        assert f"labels: {what}" in out and "incorrect = 0, correct = 1" in out, out
    got = json.loads(_cli(tmp_path, "estimate", "s.db", "--json").stdout)
    assert got["labels_from"].startswith(what)


def test_status_json_names_the_width_and_the_uniform_projection(tmp_path: Path) -> None:
    """`status --json` of a harness session names its ``width`` (the last estimate's
    anytime CS) and its ``uniform_runs`` (a projection), as the text does (QA: bare)."""
    _pool(tmp_path)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        for j, a in enumerate(s.select(35)):
            s.add_label(a.item_id, "correct" if j % 3 else "incorrect", source="inspect:e1")
        s.estimate(progress=False)
    runs = json.loads(_cli(tmp_path, "status", "s.db", "--json").stdout)["target_runs"]
    assert runs["uniform_runs"] is not None and runs["width"] is not None
    assert runs["width_interval"].endswith("anytime confidence sequence")
    assert runs["uniform_runs_method"].startswith("a projection")


def test_status_names_the_inspect_task_kept_before_any_score(tmp_path: Path) -> None:
    """QA: the inspect task an eval ran is kept when the eval starts (the manager's
    record of who answered), but `status` named it only with the scores read (and
    `status --json` only inside a sentence): an eval killed before its first score left a
    session whose status named no task. Both name it now."""
    _pool(tmp_path)
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT)
    assert p.returncode == 0, p.stderr
    with Session.open(tmp_path / "s.db") as s:  # what ActiveStopping.start_task keeps
        s.record_target_model("mockllm/model", "inspect", ["arith"])
    p = _cli(tmp_path, "status", "s.db")
    assert p.returncode == 0, p.stderr
    assert "the target's runs are of inspect task 'arith' (no result read yet)" in " ".join(
        p.stdout.split()), p.stdout
    p = _cli(tmp_path, "status", "s.db", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["target_runs"]["tasks"] == ["arith"], p.stdout


def test_status_at_a_census_says_nothing_is_left_to_project(tmp_path: Path) -> None:
    """QA: with every pool item run and estimated (the anytime interval a point, width
    0), status said "a uniform sample's runs for the same width: not projected yet (it
    needs an estimate from 30 labels or more ...)" beside a last estimate from 40 labels.
    It now says there is nothing to project, and why."""
    _pool(tmp_path, n=40)
    assert _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT).returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        for j, a in enumerate(s.select(40)):
            s.add_label(a.item_id, "correct" if j % 3 else "incorrect", source="inspect:e1")
    assert _cli(tmp_path, "estimate", "s.db").returncode == 0
    with Session.open(tmp_path / "s.db") as s:
        r = runs_summary(s)
    assert r.width == 0 and r.uniform_runs is None and r.width_labels == 40
    p = _cli(tmp_path, "status", "s.db")
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and "not projected yet" not in out, out
    assert ("a uniform sample's runs for the same width: none to project (the last "
            "estimate's anytime interval, at 40 labels, is a point: the pool's value is "
            "known)") in out, out


def test_init_and_status_name_the_column_that_draws_beside_the_history(
        tmp_path: Path) -> None:
    """QA: ``--surrogate column:p_correct --history FILE`` said "surrogate history" at
    ``init`` and in ``status`` (the stored surrogate is the design's, ``history``), as if the
    pool's column took no part in the draws; both now name the column beside the history's
    features, a session made before the column was recorded too (named from its design's
    signal); ``--surrogate history`` is still "surrogate history"."""
    _pool(tmp_path)
    hist = tmp_path / "history.csv"
    with hist.open("w") as f:  # three other models' results by the pool's ids
        f.write("model," + ",".join(f"q{i}" for i in range(80)) + "\n")
        for m in range(3):
            f.write(f"other-{m}," + ",".join("0" if (i + m) % 5 == 0 else "1"
                                             for i in range(80)) + "\n")
    both = "surrogate column:p_correct beside the history's features"
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT, "--history",
             "history.csv")
    assert p.returncode == 0, p.stderr
    assert f"{both}, target inspect" in p.stdout, p.stdout
    assert "surrogate history" not in p.stdout, p.stdout
    assert f"target inspect; {both}; metric" in _cli(tmp_path, "status", "s.db").stdout
    # status --json and the Every Eval Ever records say the same, the column beside it
    # (QA: both said "surrogate": "history")
    named = {"surrogate": both.removeprefix("surrogate "), "surrogate_column": "p_correct"}

    def said() -> None:
        got = json.loads(_cli(tmp_path, "status", "s.db", "--json").stdout)
        assert {k: got.get(k) for k in named} == named, got
        p = _cli(tmp_path, "estimate", "s.db", "--format", "eee", "--no-progress")
        assert p.returncode == 0, p.stderr
        recs = json.loads(p.stdout)
        for rec in recs if isinstance(recs, list) else [recs]:
            details = rec["evaluation_results"][0]["score_details"]["details"]
            assert {k: details.get(k) for k in named} == named, details

    with Session.open(tmp_path / "s.db") as s:
        for j, a in enumerate(s.select(6)):
            s.add_label(a.item_id, "correct" if j % 3 else "incorrect", source="inspect:e1")
    said()
    with Session.open(tmp_path / "s.db") as s:  # as a session made before the key was kept
        rec = dict(s.session_config.extra["history"])
        assert rec.pop("pool_column") == "p_correct"
        s.store.update_config({"history": rec})
    assert f"target inspect; {both}; metric" in _cli(tmp_path, "status", "s.db").stdout
    said()
    plain = ["history" if a == "column:p_correct" else a for a in INIT]
    p = _cli(tmp_path, "init", "h.db", "--pool", "pool.jsonl", *plain, "--history",
             "history.csv")
    assert p.returncode == 0, p.stderr
    assert "surrogate history, target inspect" in p.stdout, p.stdout
    assert "target inspect; surrogate history; metric" in _cli(tmp_path, "status",
                                                               "h.db").stdout
    got = json.loads(_cli(tmp_path, "status", "h.db", "--json").stdout)
    assert got["surrogate"] == "history" and "surrogate_column" not in got, got


def test_the_status_record_names_the_column_that_draws_beside_the_history(
        tmp_path: Path) -> None:
    """QA: ``print(session.status())`` and ``SessionStatus.to_dict()`` said "surrogate
    history" for a session made with ``--surrogate column:p_correct --history FILE``, where
    ``status`` (text and ``--json``) names the column beside the history's features. The
    record, given the column (``surrogate_column``, as ``Session.status()`` gives it), says
    the same as ``status``; without one it says the stored surrogate, as before."""
    import dataclasses

    from activetest.session.history_neighbours import surrogate_column, surrogate_label

    _pool(tmp_path)
    hist = tmp_path / "history.csv"
    with hist.open("w") as f:
        f.write("model," + ",".join(f"q{i}" for i in range(80)) + "\n")
        for m in range(3):
            f.write(f"other-{m}," + ",".join("0" if (i + m) % 5 == 0 else "1"
                                             for i in range(80)) + "\n")
    p = _cli(tmp_path, "init", "s.db", "--pool", "pool.jsonl", *INIT, "--history",
             "history.csv")
    assert p.returncode == 0, p.stderr
    both = "column:p_correct beside the history's features"
    with Session.open(tmp_path / "s.db") as s:
        st = s.status()
        record = s.session_config.extra["history"]
    assert st.surrogate == "history"  # as stored: the design's rule
    column = surrogate_column(st.surrogate, record)
    assert column == "p_correct"
    assert st.surrogate_column == column  # Session.status() gives it
    assert f"target inspect, surrogate {both}, metric" in str(st), str(st)
    named = dataclasses.replace(st, surrogate_column=column)
    assert named.surrogate_name == both == surrogate_label(st.surrogate, record)
    assert f"target inspect, surrogate {both}, metric" in str(named), str(named)
    d = named.to_dict()
    assert (d["surrogate"], d["surrogate_column"]) == (both, "p_correct"), d
    json.dumps(d)  # still plain JSON
    # no column: the stored surrogate, and no surrogate_column key (as status --json)
    plain = dataclasses.replace(st, surrogate_column=None)
    assert "surrogate history, metric" in str(plain)
    assert plain.to_dict()["surrogate"] == "history"
    assert "surrogate_column" not in plain.to_dict()
