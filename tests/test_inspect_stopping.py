"""activetest.inspect.ActiveStopping in REAL inspect_ai evals (tests/inspect_runs.py).

The evals run in a subprocess (inspect's own ``mockllm/model`` provider answering by a
fixed rule; the bundled SmolLM2 through llama.cpp's server in the ``models`` test);
their logs are read back with inspect's own reader. Checked: every drawn sample's
recorded label is its score in a full run of the same samples; the stop comes when
the anytime interval is narrow enough and the rest is skipped; a run killed with
SIGKILL keeps what it recorded and a second eval continues the same draw order; the
join refuses other samples; the numbers in the log are the session's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.inspect import MANAGER, ActiveStopping, prefix_intervals
from activetest.session.workflow import Session
from tests.inspect_runs import TASK_TOML, write_pool

pytestmark = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None,
                                reason="inspect_ai is not installed (pip install -e '.[dev]')")

ROOT = Path(__file__).resolve().parents[1]


def _session(tmp: Path, n: int = 60, seed: int = 0, name: str = "s.db",
             target: str = "pool", budget: int | None = None) -> Path:
    """A session on the arithmetic pool: ``target="pool"`` a graded session with the
    task file and empty answers; ``"inspect"`` the target-free kind (``--task answers
    --target inspect``); ``budget``: the planned budget (default: the default rule's)."""
    pool = tmp / "pool.jsonl"
    if not pool.exists():
        write_pool(pool, n)
        (tmp / "arith.toml").write_text(TASK_TOML, encoding="utf-8")
    db = tmp / name
    task = str(tmp / "arith.toml") if target == "pool" else "answers"
    Session.create(db, pool=str(pool), task=task, target=target,
                   surrogate="column:p_correct", seed=seed, progress=False,
                   **({} if budget is None else {"budget": budget})).close()
    return db


def _run(tmp: Path, *runs: str, model: str = "mock", delay: float = 0.0,
         max_samples: int = 4, timeout: float = 600,
         stderr: list[str] | None = None, scorers: str = "match") -> list[dict[str, Any]]:
    """The runs' JSON lines (``stderr``: a list the run's stderr is appended to;
    ``scorers``: tests/inspect_runs.py's ``--scorers``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-m", "tests.inspect_runs", str(tmp / "logs"),
                           str(tmp / "pool.jsonl"), *runs, "--model", model, "--delay",
                           str(delay), "--max-samples", str(max_samples), "--scorers",
                           scorers], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    if stderr is not None:
        stderr.append(proc.stderr)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _scores(log: Any) -> dict[str, float]:
    """Sample id -> its match score (1/0) in a log."""
    out = {}
    for s in log.samples or []:
        v = s.scores["match"].value
        out[str(s.id)] = 1.0 if v == "C" else 0.0 if v == "I" else float(v)
    return out


def _read(path: str) -> Any:
    from inspect_ai.log import read_eval_log

    return read_eval_log(path)


def _label_by_rule(s: Session, tmp: Path, n: int) -> None:
    """Draw n and label them as the mock model's answers would be judged."""
    from tests.inspect_runs import mock_answer

    rows = {json.loads(x)["id"]: json.loads(x) for x in
            (tmp / "pool.jsonl").read_text().splitlines()}
    for a in s.select(n):
        q = rows[a.item_id]["question"]
        x, y = (int(v) for v in q.removeprefix("What is ").rstrip("?").split(" plus "))
        s.add_label(a.item_id, "correct" if mock_answer(q) == str(x + y) else "incorrect",
                    trust_people=True)  # a person's, knowingly


def test_prefix_intervals_are_the_sessions_estimate_at_every_prefix(tmp_path: Path) -> None:
    db, db30 = _session(tmp_path), _session(tmp_path, name="s30.db")
    with Session.open(db) as s, Session.open(db30) as s30:
        _label_by_rule(s, tmp_path, 40)
        _label_by_rule(s30, tmp_path, 30)  # the same seed: the same first 30 draws
        pi = prefix_intervals(s)
        assert pi.k == 40
        for j, sess in ((39, s), (29, s30)):
            m = sess.estimate(record=False).metrics["error_rate"]
            assert pi.estimate[j] == pytest.approx(m.active.estimate, abs=1e-12)
            assert (pi.fixed_low[j], pi.fixed_high[j]) == pytest.approx(
                (m.anytime.fixed_low, m.anytime.fixed_high), abs=1e-12)
            assert (pi.cs_low[j], pi.cs_high[j]) == pytest.approx(
                (m.anytime.cs_low, m.anytime.cs_high), abs=1e-12)


def test_a_real_eval_records_the_drawn_samples_scores_and_stops_when_narrow(
        tmp_path: Path) -> None:
    db = _session(tmp_path)
    full, active = _run(tmp_path, "full", f"active:{db}:0.45:50")
    flog, alog = _read(full["log"]), _read(active["log"])
    assert flog.status == alog.status == "success"
    truth = _scores(flog)
    assert len(truth) == 60
    es = alog.results.early_stopping
    assert es.manager == MANAGER
    md = es.metadata
    with Session.open(db) as s:
        order = [a.item_id for a in s.acquisitions()]
        labels = s.labels()
        levels = s.task.judgment.scores
        # who answered: the eval's model, kept for the EEE record (it said "inspect", QA)
        assert s.session_config.answer_files["target"] == {"model": "mockllm/model",
                                                           "tool": "inspect",
                                                           "tasks": ["arith"]}
        # item by item: each recorded label is the sample's score in the full run
        ran = _scores(alog)
        assert ran and set(ran) == set(labels)
        for item_id, level in labels.items():
            assert levels[level] == truth[item_id] == ran[item_id], item_id
        # the stop: the first prefix whose anytime interval is at most 0.45 wide
        pi = prefix_intervals(s)
        widths = pi.cs_high - pi.cs_low
        tau = md["stopped_at"]
        assert md["reason"] == "width reached" and tau is not None
        assert widths[tau - 1] <= 0.45 and np.all(widths[29:tau - 1] > 0.45)
        assert md["n_labels"] == tau and md["estimate"] == pytest.approx(pi.estimate[tau - 1])
        assert (md["cs_low"], md["cs_high"]) == pytest.approx((pi.cs_low[tau - 1],
                                                               pi.cs_high[tau - 1]))
        # the rest of the 50 drawn were skipped (at most what was in flight ran)
        assert order[:tau] == list(md["order"][:tau])
        assert tau <= len(ran) <= tau + 4 < 50
        stops = {str(e.id): e.reason for e in es.early_stops}
        assert len(stops) + len(ran) == 60
        assert {i for i, r in stops.items() if r == "not drawn"} == set(
            i for i in truth if i not in md["order"])
        assert all(r == "anytime interval narrow enough" for i, r in stops.items()
                   if i in md["order"])
        assert md["names"]["anytime"] == "anytime 95% confidence sequence"
        assert md["design"]["acquisition"] == "graded_fixed"
        # the estimator named as `estimate` names it: the design's own, with its control
        # (QA: "by LURE"), and the uniform runs named as the projection they are
        assert md["method"].startswith("error_rate by adaptive LURE over"), md["method"]
        assert md["uniform_runs_method"].startswith("a projection")
        # the labels came from this eval, and say so
        assert {c.source for c in s.history()} == {f"inspect:{alog.eval.eval_id}"}
        r0 = s.estimate(record=False).metrics["error_rate"]
    # the log read back into a session made again: the same draws, labels and estimate
    _from_inspect(tmp_path, active["log"], full["log"], order, labels, r0)


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "activetest", *args], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=300)


def _from_inspect(tmp: Path, log: str, other_log: str, order: list[str],
                  labels: dict[str, int], r0: Any, target: str = "pool") -> None:
    made = ["--task", "arith.toml" if target == "pool" else "answers", "--pool", "pool.jsonl",
            "--target", target, "--surrogate", "column:p_correct", "--metric", "error_rate",
            "--no-progress"]
    p = _cli(tmp, "init", "back.db", *made, "--seed", "0", "--from-inspect", log)
    assert p.returncode == 0, p.stderr
    assert f"{len(order)} draws replayed, {len(labels)} label(s) recorded" in p.stdout
    with Session.open(tmp / "back.db") as b:
        assert [a.item_id for a in b.acquisitions()] == order
        assert b.labels() == labels
        # who answered comes back with the log: an eval of another model on this copy is
        # refused as on the original (QA: it went on, mixing two models)
        assert b.session_config.answer_files["target"]["model"] == "mockllm/model"
        with pytest.raises(ValueError, match="cannot mix two models"):
            b.record_target_model("mockllm/other", "inspect")
        r = b.estimate(record=False).metrics["error_rate"]
        assert r.active.estimate == pytest.approx(r0.active.estimate, abs=1e-12)
        assert r.anytime.cs_low == pytest.approx(r0.anytime.cs_low, abs=1e-12)
    # another seed draws other items: refused, naming the first draw that differs, and
    # nothing is left behind; a log of a run without the manager is refused too
    p = _cli(tmp, "init", "other.db", *made, "--seed", "1", "--from-inspect", log)
    assert p.returncode == 2 and "seed 0" in p.stderr and "seed 1" in p.stderr, p.stderr
    assert not (tmp / "other.db").exists()
    assert "created session" not in p.stdout  # (QA: said so, then removed it)
    p = _cli(tmp, "init", "other.db", *made, "--seed", "0", "--from-inspect", other_log)
    assert p.returncode == 2 and "not an eval run with activetest.inspect" in p.stderr
    assert not (tmp / "other.db").exists()


def _run_then_kill(tmp_path: Path, spec: str, db: Path, *, delay: float, max_samples: int,
                   at_labels: int, unrecorded: bool = False) -> None:
    """Start a real inspect eval of ``spec`` in a child process and kill -9 its process
    group once the session holds ``at_labels`` labels (fails if it ends before that);
    ``unrecorded``: and once some drawn item has no label yet (a batch is running)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    proc = subprocess.Popen([sys.executable, "-m", "tests.inspect_runs", str(tmp_path / "logs"),
                             str(tmp_path / "pool.jsonl"), spec, "--delay", str(delay),
                             "--max-samples", str(max_samples)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1 if unrecorded else 0.3)
            with Session.open(db) as s:
                n_labels = len(s.labels())
                running = len(s.acquisitions()) > n_labels
            if n_labels >= at_labels and (running or not unrecorded):
                break
        assert proc.poll() is None, "the eval ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_killed_eval_keeps_its_labels_and_the_next_continues_the_draws(
        tmp_path: Path) -> None:
    db = _session(tmp_path)
    _run_then_kill(tmp_path, f"active:{db}:-:40", db, delay=0.4, max_samples=2, at_labels=6)
    with Session.open(db) as s:
        first = [a.item_id for a in s.acquisitions()]
        kept = s.labels()
    assert len(first) == 40 and 6 <= len(kept) < 40
    # its log says it did not finish, and where its labels are (it said the log was not
    # an ActiveStopping run, QA)
    from activetest.inspect.log import read_log

    (killed,) = (tmp_path / "logs").glob("*.eval")
    with pytest.raises(ValueError, match="did not finish") as info:
        read_log(killed)
    assert "running the eval again" in str(info.value)
    # a budget of what is left: the unrecorded draws come first, so nothing new is drawn
    full, again = _run(tmp_path, "full", f"active:{db}:-:{40 - len(kept)}")
    truth = _scores(_read(full["log"]))
    md = _read(again["log"]).results.early_stopping.metadata
    with Session.open(db) as s:
        assert [a.item_id for a in s.acquisitions()] == first  # the same draws, no new ones
        labels = s.labels()
        levels = s.task.judgment.scores
    # the second eval ran exactly what the first had not recorded, in draw order
    assert md["order"] == [i for i in first if i not in kept]
    assert set(labels) == set(first)
    assert {i: levels[v] for i, v in labels.items()} == {i: truth[i] for i in first}
    assert md["reason"] == "budget spent" and md["n_labels"] == 40
    # read back from the folder of logs: the killed eval's labels are confirmed by the
    # samples its log holds (inspect writes them as they complete, so a kill may lose
    # some: then refused, naming that log), the full run's log is passed over
    k_id = _read(str(killed)).eval.eval_id
    held = {str(smp.id) for smp in _read(str(killed)).samples or ()}
    mine = {i for i, src in md["sources"].items() if src == f"inspect:{k_id}"}
    assert mine == set(kept)
    made = ["--task", "arith.toml", "--pool", "pool.jsonl", "--target", "pool", "--surrogate",
            "column:p_correct", "--seed", "0", "--no-progress"]
    p = _cli(tmp_path, "init", "back.db", *made, "--from-inspect", str(tmp_path / "logs"))
    err = " ".join(p.stderr.split())
    assert "Traceback" not in err and f"{Path(full['log']).name}: passed over" in err, err
    if mine <= held:
        assert p.returncode == 0, p.stderr
        with Session.open(tmp_path / "back.db") as b:
            assert b.labels() == labels
            assert [a.item_id for a in b.acquisitions()] == first
        # the kill's other outcome, made certain: a label recorded by the killed eval
        # whose sample inspect had not yet written to its log (the killed log, less that
        # sample, as a kill a moment earlier leaves it)
        lost = sorted(mine)[0]
        cut = tmp_path / "logs-cut"
        shutil.copytree(tmp_path / "logs", cut)
        with zipfile.ZipFile(killed) as src, \
                zipfile.ZipFile(cut / killed.name, "w", zipfile.ZIP_DEFLATED) as dst:
            for entry in src.infolist():
                if entry.filename != f"samples/{lost}_epoch_1.json":
                    dst.writestr(entry, src.read(entry))
        p = _cli(tmp_path, "init", "cut.db", *made, "--from-inspect", str(cut))
        err = " ".join(p.stderr.split())
        assert not (tmp_path / "cut.db").exists()
    else:
        lost = sorted(mine - held)[0]
        cut = tmp_path / "logs"
    # QA: refused as "has a score in the log", naming the killed log (which has none for
    # it), without why or what is left; now: which eval, that it was killed, its log, and
    # where the label is
    assert p.returncode == 2 and "Traceback" not in err and err.count("error:") == 1, err
    assert (f"item {lost!r} was scored by eval {k_id}, which did not finish (killed or "
            f"cancelled): its log {cut / killed.name} holds" in err), err
    assert "so no log confirms it and nothing was recorded" in err
    assert "session file that eval's ActiveStopping wrote to" in err


def test_from_inspect_takes_the_logs_planned_budget_and_refuses_another(
        tmp_path: Path) -> None:
    """QA: ``--from-inspect`` with another ``--budget`` than the eval's session made a
    copy whose anytime intervals differ for the same draws and labels (the confidence
    sequence is tuned to the planned budget)."""
    db = _session(tmp_path, budget=40)  # not the default rule's 30
    (active,) = _run(tmp_path, f"active:{db}:-:12")
    md = _read(active["log"]).results.early_stopping.metadata
    assert md["planned_budget"] == 40 and md["level"] == 0.95
    with Session.open(db) as s:
        r0 = s.estimate(record=False).metrics["error_rate"]
    made = ["--task", "arith.toml", "--pool", "pool.jsonl", "--target", "pool",
            "--surrogate", "column:p_correct", "--metric", "error_rate", "--seed", "0",
            "--no-progress", "--from-inspect", active["log"]]
    p = _cli(tmp_path, "init", "other.db", *made, "--budget", "20")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert ("the log's session planned a budget of 40 labels, this one 20"
            in " ".join(p.stderr.split())), p.stderr
    assert not (tmp_path / "other.db").exists()
    for name, extra in (("back.db", []), ("same.db", ["--budget", "40"])):
        p = _cli(tmp_path, "init", name, *made, *extra)  # none given: the log's is taken
        assert p.returncode == 0, p.stderr
        with Session.open(tmp_path / name) as b:
            assert b.session_config.planned_budget == 40
            r = b.estimate(record=False).metrics["error_rate"]
            assert (r.anytime.cs_low, r.anytime.cs_high) == pytest.approx(
                (r0.anytime.cs_low, r0.anytime.cs_high), abs=1e-12)


def test_an_eval_with_nothing_left_to_run_says_so(tmp_path: Path) -> None:
    """QA: running a finished eval again "to continue" skipped every sample; inspect wrote
    no results (the README's ``log.results.early_stopping`` raised AttributeError) and
    ``--from-inspect`` on that log called it "not an eval run with ActiveStopping"."""
    from activetest.inspect.log import read_log

    db = _session(tmp_path)
    (first,) = _run(tmp_path, f"active:{db}:0.45:50")
    md = _read(first["log"]).results.early_stopping.metadata
    assert md["reason"] == "width reached"
    with Session.open(db) as s:
        before = (s.labels(), [a.item_id for a in s.acquisitions()])
    err: list[str] = []
    (again,) = _run(tmp_path, f"active:{db}:0.45:50", stderr=err)
    log = _read(again["log"])
    assert again["status"] == "success" and log.results is None and not log.samples
    # said when the order was drawn, with why
    assert (f"{db}: nothing left to run: the anytime interval was at most 0.45 wide at "
            f"{md['stopped_at']} labels" in " ".join(err[0].split())), err[0][-3000:]
    with Session.open(db) as s:  # nothing drawn, nothing recorded
        assert (s.labels(), [a.item_id for a in s.acquisitions()]) == before
    with pytest.raises(ValueError, match="no samples ran in this eval") as info:
        read_log(again["log"])
    assert "not an eval run" not in str(info.value)
    p = _cli(tmp_path, "init", "back.db", "--task", "arith.toml", "--pool", "pool.jsonl",
             "--target", "pool", "--surrogate", "column:p_correct", "--seed", "0",
             "--no-progress", "--from-inspect", again["log"])
    assert p.returncode == 2 and "no samples ran in this eval" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "back.db").exists()
    # the folder of logs as a history (QA: refused, "the log holds no samples (status
    # 'success'; was the eval run with log_samples=False?)"): the eval in which no sample
    # ran is passed over, said; given by name, it is refused as such
    # (the pool's p_correct as a column of the design: a pool column of numbers no sample
    # shows is refused by the history log's content check with --surrogate history); the
    # eval that ran is the session's own ActiveStopping run, its labels: dropped, said,
    # never history (other models' results: a matrix)
    hist = ["--task", "answers", "--pool", "pool.jsonl", "--target", "inspect",
            "--surrogate", "column:p_correct", "--seed", "0", "--no-progress", "--history"]
    p = _cli(tmp_path, "init", "hist.db", *hist, str(tmp_path / "logs"), "--history",
             str(_history_matrix(tmp_path)))
    err = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 0, err
    assert (f"not logs of a model's run (passed over: {Path(again['log']).name} (an eval in "
            f"which no sample ran))" in err), err
    assert "log_samples=False" not in err and "history: 5 model(s)" in err, err
    assert (f"row 'mockllm/model' not used ({first['log']} is an eval run with "
            f"activetest.inspect.ActiveStopping (session s.db)") in err, err
    p = _cli(tmp_path, "init", "one.db", *hist, again["log"])
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in err and err.count("error:") == 1, err
    assert "no sample ran in this eval" in err and "log_samples=False" not in err, err
    assert not (tmp_path / "one.db").exists()
    stop = ActiveStopping(db, width=0.45)
    try:
        with pytest.warns(UserWarning, match="nothing left to run"):
            assert "nothing left to run" in (stop.nothing_to_run() or "")
    finally:
        stop.close()
    stop = ActiveStopping(db, width=0.01, budget=1)
    try:  # a narrower width runs more
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert stop.nothing_to_run() is None and len(stop.order()) == 1
    finally:
        stop.close()


def test_the_join_refuses_other_samples(tmp_path: Path) -> None:
    import asyncio

    from inspect_ai.dataset import Sample

    from tests.inspect_runs import _samples

    db = _session(tmp_path, n=40)
    samples = _samples(tmp_path / "pool.jsonl")
    run = ActiveStopping(db, width=0.2)
    with pytest.raises(ValueError, match=r"1 pool item\(s\) are not samples.*'sum-039'"):
        asyncio.run(run.start_task(None, samples[:-1], 1))
    swapped = [*samples[:-2], Sample(id=samples[-2].id, input=samples[-1].input),
               samples[-1]]
    with pytest.raises(ValueError, match=r"pool item 'sum-038' is not sample 'sum-038'.*"
                                         r"What is 13 plus 1.*What is 20 plus 6"):
        ActiveStopping(db).dataset(swapped)
    with pytest.raises(ValueError, match="epochs=2"):
        asyncio.run(ActiveStopping(db).start_task(None, samples, 2))
    # positional ids: refused unless the items' texts confirm them
    pool = tmp_path / "num"
    pool.mkdir()
    rows = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()]
    (pool / "pool.jsonl").write_text("".join(json.dumps({**r, "id": str(j + 1)}) + "\n"
                                             for j, r in enumerate(rows)))
    (pool / "arith.toml").write_text(TASK_TOML)
    db2 = _session(pool, name="n.db")
    numbered = [Sample(id=j + 1, input=s.input) for j, s in enumerate(samples)]
    ActiveStopping(db2).dataset(numbered)  # texts confirm every id
    shifted = [Sample(id=j + 1, input=samples[(j + 1) % 40].input) for j in range(40)]
    with pytest.raises(ValueError, match=r"pool item '1' is not sample '1'.*\(40 of 40"):
        ActiveStopping(db2).dataset(shifted)
    with pytest.raises(ValueError, match="without an id"):
        ActiveStopping(db2).dataset([Sample(input="x")])


def test_scores_that_are_not_a_level_are_refused(tmp_path: Path) -> None:
    import asyncio

    from inspect_ai.scorer import SampleScore, Score

    from tests.inspect_runs import _samples

    db = _session(tmp_path, n=40)
    stop = ActiveStopping(db, budget=5)
    with pytest.warns(UserWarning, match="not in draw order.*ActiveStopping.dataset"):
        asyncio.run(stop.start_task(None, _samples(tmp_path / "pool.jsonl"), 1))
    first = stop.order()[0]

    def ss(v: Any) -> SampleScore:
        return SampleScore(score=Score(value=v), sample_id=first)

    with pytest.raises(ValueError, match=r"2 scorers \['a', 'b'\].*scorer=NAME"):
        asyncio.run(stop.complete_sample(first, 1, {"a": ss("C"), "b": ss("I")}))
    with pytest.raises(ValueError, match=r"gave 0.5.*incorrect=0, correct=1"):
        asyncio.run(stop.complete_sample(first, 1, {"m": ss(0.5)}))
    with pytest.raises(ValueError, match=r"several values \['acc', 'f1'\]"):
        asyncio.run(stop.complete_sample(first, 1, {"m": ss({"acc": 1, "f1": 0.5})}))
    asyncio.run(stop.complete_sample(first, 1, {"m": ss("C")}))
    asyncio.run(stop.complete_sample(stop.order()[1], 1, {}))  # errored: nothing recorded
    third = stop.order()[2]
    with Session.open(db) as s:  # a person labels the third while it runs
        s.add_label(third, "correct", trust_people=True)
    asyncio.run(stop.complete_sample(third, 1, {"m": ss("I")}))
    with Session.open(db) as s:
        assert s.labels() == {first: 1, third: 1}  # the person's label stands
    md = asyncio.run(stop.complete_task())
    assert md["recorded"] == {first: 1.0} and md["unscored"] == [stop.order()[1]]
    assert md["conflicts"] == {third: 0.0}
    assert md["reason"] == "incomplete" and md["estimate"] is None
    with pytest.raises(ValueError, match="width must be"):
        ActiveStopping(db, width=0)
    with pytest.raises(ValueError, match="budget must be"):
        ActiveStopping(db, budget=0)


@pytest.mark.models
@pytest.mark.slow
def test_the_bundled_model_through_a_local_server_item_by_item(tmp_path: Path) -> None:
    from activetest.models.bundled import bundled_model_path

    try:
        bundled_model_path("smollm2-135m")
    except Exception as exc:  # pragma: no cover - the bundled model's package is missing
        pytest.skip(f"bundled model not installed: {exc}")
    db = _session(tmp_path, n=40)
    db2 = _session(tmp_path, name="batched.db")
    full, active, batched = _run(tmp_path, "full", f"active:{db}:-:15",
                                 f"active:{db2}:-:12:3", model="smollm2", max_samples=2)
    truth, ran = _scores(_read(full["log"])), _scores(_read(active["log"]))
    md = _read(active["log"]).results.early_stopping.metadata
    with Session.open(db) as s:
        drawn = [a.item_id for a in s.acquisitions()]
        labels = s.labels()
        levels = s.task.judgment.scores
    assert len(drawn) == 15 and set(ran) == set(labels) == set(drawn)
    assert {i: levels[v] for i, v in labels.items()} == {i: truth[i] for i in drawn}
    assert md["runs"] == 15 and md["reason"] == "budget spent"
    # in batches of 3 inside the eval, refitted between them: item by item the same
    mb = _read(batched["log"]).results.early_stopping.metadata
    with Session.open(db2) as s:
        drawn = [a.item_id for a in s.acquisitions()]
        labels = s.labels()
        known = [d[3] for d in s.store.design_draws()]
    assert len(drawn) == 12 and set(labels) == set(drawn) == set(_scores(_read(
        batched["log"])))
    assert {i: levels[v] for i, v in labels.items()} == {i: truth[i] for i in drawn}
    assert known == [3 * (j // 3) for j in range(12)] and mb["batches"] == [3] * 4


def test_restore_replays_a_design_that_refits_batch_by_batch(tmp_path: Path) -> None:
    from activetest.inspect import LogRecord, restore

    db, again = _session(tmp_path), _session(tmp_path, name="again.db")
    with Session.open(db) as s:
        _label_by_rule(s, tmp_path, 10)  # batch 1, all labelled
        _label_by_rule(s, tmp_path, 12)  # batch 2, drawn knowing 10 labels
        s.select(5)                      # batch 3, knowing 22; left unlabelled
        acq, lab = s.acquisitions(), s.labels()
        known = tuple(d[3] for d in s.store.design_draws())
        assert sorted(set(known)) == [0, 10, 22]  # three batches, refitted between
        scores = s.task.judgment.scores
        inputs = {i: "Question: " + " ".join(str(v) for v in s.item(i).fields.values())
                  for i in lab}  # what a sample's input shows of its item
        rec = LogRecord("x.eval", "e1", s.n_items, s.session_config.acquisition, 0,
                        tuple(a.item_id for a in acq), tuple(a.q for a in acq),
                        {i: float(scores[v]) for i, v in lab.items()}, known, None, inputs)
    with Session.open(again) as b:
        assert restore(b, rec) == 22
        assert [(a.item_id, a.q) for a in b.acquisitions()] == [(a.item_id, a.q) for a in acq]
        assert b.labels() == lab
    # the same ids with other content (QA: a pool with its questions moved one row along
    # took the log's scores): refused before anything is recorded, naming both texts
    ids = sorted(inputs)
    moved = {i: inputs[ids[(k + 1) % len(ids)]] for k, i in enumerate(ids)}
    shifted = _session(tmp_path, name="shifted.db")
    with Session.open(shifted) as d:
        with pytest.raises(ValueError, match=r"pool item '.*' is not the log's sample .*: the "
                                             r"item reads .*, the sample's input"):
            restore(d, LogRecord(rec.path, rec.eval_id, rec.n_pool, rec.acquisition,
                                 rec.seed, rec.draws, rec.q, rec.labels, known, None, moved))
        assert d.labels() == {} and d.store.n_acquired() == 0
        without = {i: v for i, v in inputs.items() if i != ids[0]}  # a sample not in the log
        with pytest.raises(ValueError, match="the log holds no sample for it"):
            restore(d, LogRecord(rec.path, rec.eval_id, rec.n_pool, rec.acquisition,
                                 rec.seed, rec.draws, rec.q, rec.labels, known, None, without))
    # a log whose draws this session does not make (two swapped): refused, naming both
    other = _session(tmp_path, name="other.db")
    swapped = (rec.draws[1], rec.draws[0], *rec.draws[2:])
    bad = LogRecord(rec.path, rec.eval_id, rec.n_pool, rec.acquisition, rec.seed, swapped,
                    rec.q, rec.labels, known, None, inputs)
    with Session.open(other) as c, pytest.raises(
            ValueError, match=rf"draw 1 of the log is '{swapped[0]}'.*this session's is "
                              rf"'{swapped[1]}'"):
        restore(c, bad)


def test_importing_the_manager_does_not_import_inspect_ai_nor_shadow_inspect() -> None:
    code = ("import inspect, sys\nimport activetest.inspect as ai\n"
            "print('inspect_ai' in sys.modules, hasattr(inspect, 'signature'),"
            " ai.ActiveStopping.__module__)")
    out = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(ROOT / "src"),
                                                           "PATH": ""},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "activetest.inspect.manager"]


def test_the_join_checks_every_prompt_field(tmp_path: Path) -> None:
    from inspect_ai.dataset import Sample

    (tmp_path / "qa.toml").write_text(
        'name = "qa"\nkind = "graded"\ninstruction = "Answer briefly."\n[templates]\n'
        'item = "Context: {context}\\nQuestion: {question}\\nAnswer:"\n'
        'example = "Context: {context}\\nQuestion: {question}\\nAnswer: {answer}\\n\\n"\n')
    rows = [{"id": f"q{i}", "context": f"Room {i} is painted {c}.", "question":
             f"What colour is room {i}?", "answer": "", "p": 0.5}
            for i, c in enumerate(["red", "blue", "green"])]
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "qa.db"
    Session.create(db, pool=str(tmp_path / "qa.jsonl"), task=str(tmp_path / "qa.toml"),
                   target="pool", surrogate="column:p", seed=0, progress=False).close()

    def shown(ctx: list[str]) -> list[Any]:
        return [Sample(id=r["id"], input=f"Context: {c}\nQuestion: {r['question']}\nAnswer:")
                for r, c in zip(rows, ctx, strict=True)]

    ActiveStopping(db).dataset(shown([r["context"] for r in rows]))
    wrong = [rows[1]["context"], rows[0]["context"], rows[2]["context"]]
    with pytest.raises(ValueError, match=r"pool item 'q0' is not sample 'q0'.*\(2 of 3"):
        ActiveStopping(db).dataset(shown(wrong))


# ---------------------------------------------------------------- batches inside one eval

def _drive(db: Path, tmp: Path, *, width: float | None, budget: int | None, batch: int,
           seed: int) -> dict[str, Any]:
    """The manager driven through inspect's protocol outside inspect (asyncio), every
    sample answered by the mock rule after a random delay: a random completion order."""
    import asyncio
    import random

    from inspect_ai.scorer import SampleScore, Score

    from tests.inspect_runs import _samples, mock_answer

    rows = {json.loads(x)["id"]: json.loads(x)["question"]
            for x in (tmp / "pool.jsonl").read_text().splitlines()}
    rng = random.Random(seed)

    def value(item_id: str) -> str:
        q = rows[item_id]
        a, b = (int(v) for v in q.removeprefix("What is ").rstrip("?").split(" plus "))
        return "C" if mock_answer(q) == str(a + b) else "I"

    async def main() -> dict[str, Any]:
        stop = ActiveStopping(db, width=width, budget=budget, batch=batch)
        samples = list(stop.dataset(_samples(tmp / "pool.jsonl")))
        await stop.start_task(None, samples, 1)

        async def one(smp: Any) -> None:
            if await stop.schedule_sample(smp.id, 1) is not None:
                return
            await asyncio.sleep(rng.random() * 0.005)
            await stop.complete_sample(smp.id, 1, {"match": SampleScore(
                score=Score(value=value(str(smp.id))), sample_id=smp.id)})

        await asyncio.gather(*(one(s) for s in samples))
        return await stop.complete_task()

    return asyncio.run(main())


def test_labels_of_an_eval_without_an_id_are_target_runs(tmp_path: Path) -> None:
    """QA: the manager driven without an eval id (inspect's protocol called directly)
    recorded the source ``inspect``, which ``status`` counted as people's labels."""
    from activetest.session.harness import runs_summary

    db = _session(tmp_path, target="inspect")
    _drive(db, tmp_path, width=None, budget=8, batch=4, seed=1)
    with Session.open(db) as s:
        assert {c.source for c in s.history()} == {"inspect:unknown"}
        # a label an earlier version wrote so ("inspect") is a target run's result too
        s.add_label(s.select(1)[0].item_id, "correct", source="inspect")
        r = runs_summary(s)
    assert r is not None and (r.target_runs, r.person_labels) == (9, 0)
    p = _cli(tmp_path, "status", str(db))
    assert p.returncode == 0 and ("target runs spent: 9 (results read from inspect_ai evals "
                                  "as labels); 0 label(s) from people") in " ".join(
        p.stdout.split()), p.stdout


def test_a_stop_before_30_labels_records_no_asymptotic_cs_but_the_exact_one(
        tmp_path: Path) -> None:
    """QA: an eval whose budget ran out before 30 labels, on a session without the
    few-errors rule (a file written before it), recorded the anytime CS as the clipped
    range ``[0, 1]``, plain numbers read as an interval; now no CS where it claims
    nothing, a note saying why, and the exact CS (valid at any number of labels) as the
    session's ``estimate`` shows it there. With the rule (new sessions) the exact CS
    stands in while few errors show, and is recorded beside the CS."""
    import sqlite3

    db = _session(tmp_path, target="inspect")
    con = sqlite3.connect(db)
    doc = json.loads(con.execute("SELECT json FROM config WHERE id = 1").fetchone()[0])
    doc.pop("clt_min_errors")  # as a session written before the few-errors rule
    with con:
        con.execute("UPDATE config SET json = ? WHERE id = 1", (json.dumps(doc),))
    con.close()
    md = _drive(db, tmp_path, width=None, budget=20, batch=4, seed=1)
    assert md["reason"] == "budget spent" and md["n_labels"] == 20
    assert md["cs_low"] is None and md["cs_high"] is None
    assert "claims nothing before 30 labels" in md["cs_note"]
    assert "only the fixed-budget interval" in md["cs_note"]  # no rule: no exact CS here
    assert md["exact_low"] is None and md["fixed_low"] is not None

    new = _session(tmp_path, name="new.db", target="inspect")
    md = _drive(new, tmp_path, width=None, budget=20, batch=4, seed=1)
    assert md["names"]["exact"].startswith("exact")
    with Session.open(new) as s:
        a = s.estimate(record=False).metrics[s.metrics[0]].anytime
    assert a is not None and a.exact_low is not None and a.basis == "exact"
    assert (md["exact_low"], md["exact_high"]) == pytest.approx((a.exact_low, a.exact_high),
                                                                abs=1e-12)
    assert (md["cs_low"], md["cs_high"]) == pytest.approx((a.cs_low, a.cs_high), abs=1e-12)
    assert "cs_note" not in md


def test_the_stop_is_the_first_prefix_at_most_the_width_wide(tmp_path: Path) -> None:
    """At a width the CS reaches only some labels after it starts, the manager stops at
    the first prefix whose anytime interval is at most that wide, not one earlier
    (mutation check: stopping at 1.5 times the width passed the real evals, whose width
    is reached at 30 labels, where the CS starts)."""
    db = _session(tmp_path, target="inspect")
    _drive(db, tmp_path, width=None, budget=60, batch=1, seed=0)  # every draw
    with Session.open(db) as s:
        order = [a.item_id for a in s.acquisitions()]
        pi = prefix_intervals(s)
    w = pi.cs_high - pi.cs_low
    assert len(order) == 60

    def first(width: float) -> int:
        return int(np.flatnonzero(w[29:] <= width)[0]) + 30

    # a width first reached well after 30 labels, whose 1.5 times is reached earlier
    cands = [x for x in w[35:55] if first(x) > 31 and first(1.5 * x) < first(x)]
    assert cands, w
    # a hair above a width seen: the CS at a prefix differs in the last bit with the
    # labels after it (its tuning), and an exact tie then decided the stop one later
    width = float(cands[0]) * (1 + 1e-9)
    md = _drive(_session(tmp_path, name="twin.db", target="inspect"), tmp_path,
                width=width, budget=60, batch=1, seed=0)
    assert md["draws"] == order[:len(md["draws"])]
    assert md["reason"] == "width reached" and md["stopped_at"] == first(width)
    assert md["cs_high"] - md["cs_low"] <= width


def test_batches_inside_one_real_eval_item_by_item_refit_between_and_stop(
        tmp_path: Path) -> None:
    # the target-free session kind (--target inspect): no answers on the pool
    db = _session(tmp_path, target="inspect")
    full, active = _run(tmp_path, "full", f"active:{db}:0.45:50:4", delay=0.02)
    flog, alog = _read(full["log"]), _read(active["log"])
    assert alog.status == "success"
    truth, ran = _scores(flog), _scores(alog)
    md = alog.results.early_stopping.metadata
    with Session.open(db) as s:
        order = [a.item_id for a in s.acquisitions()]
        labels = s.labels()
        levels = s.task.judgment.scores
        # who answered: the eval's model, kept for the EEE record (it said "inspect", QA)
        assert s.session_config.answer_files["target"] == {"model": "mockllm/model",
                                                           "tool": "inspect",
                                                           "tasks": ["arith"]}
        known = [d[3] for d in s.store.design_draws()]
        pi = prefix_intervals(s)
        r0 = s.estimate(record=False).metrics["error_rate"]
    # item by item: each recorded label is the sample's score in the full run
    assert ran and set(ran) == set(labels)
    assert all(levels[v] == truth[i] == ran[i] for i, v in labels.items())
    # batches of 4, each drawn knowing every label of the batches before it
    assert known == [4 * (j // 4) for j in range(len(order))]
    assert md["batches"] == [4] * len(md["batches"]) and len(order) == 4 * len(md["batches"])
    assert "refitted on the completed scores between batches" in md["design"]["batch"]
    # the stop: the first prefix whose anytime interval is at most 0.45 wide; the rest of
    # its batch had started with it, and no batch was drawn after it
    widths = pi.cs_high - pi.cs_low
    tau = md["stopped_at"]
    assert md["reason"] == "width reached" and tau is not None
    assert widths[tau - 1] <= 0.45 and np.all(widths[29:tau - 1] > 0.45)
    assert md["runs"] == len(ran) == len(order) == 4 * -(-tau // 4) < 50
    stops = {str(e.id): e.reason for e in alog.results.early_stopping.early_stops}
    assert len(stops) + len(ran) == 60 and set(stops.values()) == {"not drawn"}
    # the completion order changes nothing: the same session driven with random
    # completion orders draws the same items with the same probabilities and stops there
    for seed in (1, 2):
        m2 = _drive(_session(tmp_path, name=f"twin{seed}.db", target="inspect"), tmp_path,
                    width=0.45, budget=50, batch=4, seed=seed)
        assert m2["draws"] == order and m2["q"] == pytest.approx(md["q"], abs=1e-15)
        assert m2["stopped_at"] == tau and m2["estimate"] == pytest.approx(md["estimate"])
    # and the log reads back into a session made again, batch by batch
    _from_inspect(tmp_path, active["log"], full["log"], order, labels, r0, target="inspect")
    # status right after the eval: what to run for the estimate, as for any session (QA:
    # "no estimate yet" and "not projected yet (it needs an estimate from 30 labels")
    out = " ".join(_cli(tmp_path, "status", str(db)).stdout.split())
    assert (f"no estimate yet: `activetest estimate {db}` computes it from the {len(labels)} "
            f"usable label(s)") in out and "ActiveStopping keeps the estimate" in out, out
    assert "needs an estimate from 30" not in out, out
    # status: the target runs spent, and uniform's projected runs for the same width
    assert _cli(tmp_path, "estimate", str(db)).returncode == 0
    p = _cli(tmp_path, "status", str(db), "--json")
    runs = json.loads(p.stdout)["target_runs"]
    assert runs["target_runs"] == len(labels) and runs["person_labels"] == 0
    assert runs["tool"] == "inspect_ai evals" and runs["uniform_runs"] >= 30
    # the log carries uniform's projection at the stop too
    from activetest.session.harness import uniform_runs_for_width

    with Session.open(db) as s:
        budget = s.session_config.planned_budget
        assert s.session_config.sure_bounds is True  # its CS family: cut to what is sure
    assert md["uniform_runs"] == uniform_runs_for_width(
        md["estimate"], 60, md["cs_high"] - md["cs_low"], budget=budget, sure=True)


def test_a_killed_batched_eval_resumes_with_its_unrecorded_draws_then_new_batches(
        tmp_path: Path) -> None:
    # The kill must land while a batch runs: the poll waits for drawn items without labels,
    # but a batch's three answers end together, so the kill can still come just after the
    # batch is recorded and before the next is drawn; then nothing waits, and the scenario
    # is run again in a fresh folder (at most three times).
    for attempt in range(3):
        where = tmp_path / f"try-{attempt}"
        where.mkdir()
        db = _session(where)
        _run_then_kill(where, f"active:{db}:-:40:3", db, delay=0.3, max_samples=3,
                       at_labels=7, unrecorded=True)
        with Session.open(db) as s:
            first = [a.item_id for a in s.acquisitions()]
            kept = s.labels()
        assert len(first) % 3 == 0 and 7 <= len(kept) <= len(first) < 40
        waiting = [i for i in first if i not in kept]
        if waiting:
            break
    assert waiting, "three kills in a row landed between batches"
    full, again = _run(where, "full", f"active:{db}:-:{40 - len(kept)}:3", max_samples=3)
    truth = _scores(_read(full["log"]))
    md = _read(again["log"]).results.early_stopping.metadata
    with Session.open(db) as s:
        acq = [a.item_id for a in s.acquisitions()]
        labels = s.labels()
        levels = s.task.judgment.scores
        known = [d[3] for d in s.store.design_draws()]
    # the draws of the killed eval stand; its unrecorded ones ran first, as one batch, then
    # new batches of 3, each drawn knowing every label before it
    assert acq[:len(first)] == first and len(acq) == 40
    assert md["order"][:len(waiting)] == waiting
    assert md["batches"][0] == len(waiting) and set(md["batches"][1:-1]) <= {3}
    assert known[len(first):] == [len(first) + 3 * (j // 3) for j in range(40 - len(first))]
    assert {i: levels[v] for i, v in labels.items()} == {i: truth[i] for i in acq}
    assert md["reason"] == "budget spent" and md["n_labels"] == 40


def test_a_batched_eval_that_could_hold_up_its_samples_is_refused(tmp_path: Path) -> None:
    import asyncio
    from types import SimpleNamespace

    from inspect_ai.log import EvalConfig

    from tests.inspect_runs import _samples

    db = _session(tmp_path, n=40)
    samples = _samples(tmp_path / "pool.jsonl")
    for cfg, msg in ((EvalConfig(max_samples=4), r"max_samples=40 \(got 4\)"),
                     (EvalConfig(), r"max_samples=40 \(got None\)"),
                     (EvalConfig(max_samples=40, fail_on_error=False), "score_on_error")):
        stop = ActiveStopping(db, batch=4)
        with pytest.raises(ValueError, match=msg):
            asyncio.run(stop.start_task(SimpleNamespace(config=cfg),
                                        list(stop.dataset(samples)), 1))
        stop.close()
    stop = ActiveStopping(db, batch=4)  # scored errors: every sample reports
    asyncio.run(stop.start_task(SimpleNamespace(config=EvalConfig(
        max_samples=40, fail_on_error=False, score_on_error=True)),
        list(stop.dataset(samples)), 1))
    stop.close()
    with pytest.raises(ValueError, match="batch must be"):
        ActiveStopping(db, batch=0)


# ---------------------------------------------------------------- several evals, one session

_MADE = ["--task", "arith.toml", "--pool", "pool.jsonl", "--target", "pool", "--surrogate",
         "column:p_correct", "--metric", "error_rate", "--seed", "0", "--no-progress"]


def _state(db: Path) -> tuple[list[tuple[str, float]], dict[str, int], Any]:
    """A session's draws (item, q), labels and error-rate estimate."""
    with Session.open(db) as s:
        return ([(a.item_id, a.q) for a in s.acquisitions()], s.labels(),
                s.estimate(record=False).metrics["error_rate"])


def _same(tmp: Path, copy: str, db: Path) -> None:
    """The copy holds the session's draws and labels and reports its estimate exactly."""
    (d0, l0, r0), (d1, l1, r1) = _state(db), _state(tmp / copy)
    assert d1 == d0 and l1 == l0
    assert (r1.active.estimate, r1.anytime.cs_low, r1.anytime.cs_high) == (
        r0.active.estimate, r0.anytime.cs_low, r0.anytime.cs_high)


def _records(db: Path) -> list[str]:
    """Every record of the session file (SQLite's dump: tables, rows, sampler state)."""
    import sqlite3

    con = sqlite3.connect(db)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_an_eval_of_another_model_is_refused_before_anything_is_drawn(
        tmp_path: Path) -> None:
    """QA: an eval of model B on a session whose labels are model A's was refused at
    ``start_task``, but ``stop.dataset(samples)`` (built before inspect names the model)
    had already drawn its items: the session held B's draws, unrecorded, which A's next
    eval then ran. The dataset now only looks ahead; the draws are made once the eval is
    accepted, so a refused eval leaves the session file record for record as it was."""
    db = _session(tmp_path)
    (first,) = _run(tmp_path, f"active:{db}:-:8")
    before = _records(db)
    with Session.open(db) as s:
        assert len(s.acquisitions()) == 8 and len(s.labels()) == 8
    # one batch, and batches: two evals of model B, one after another in one process
    refused = _run(tmp_path, f"active:{db}:-:8", f"active:{db}:-:8:4", model="mock-other")
    assert len(refused) == 2
    for other in refused:
        log = _read(other["log"])
        assert other["status"] == "error" and "cannot mix two models" in log.error.message
    assert _records(db) == before  # neither left a record (records are only ever added)
    # model A goes on where it stopped; the dataset's order is the order drawn
    err: list[str] = []
    (again,) = _run(tmp_path, f"active:{db}:-:8", stderr=err)
    md = _read(again["log"]).results.early_stopping.metadata
    assert again["status"] == "success" and len(md["draws"]) == 16
    assert md["order"] == md["draws"][8:] and "not in draw order" not in err[0]
    assert md["draws"][:8] == _read(first["log"]).results.early_stopping.metadata["draws"]


def test_from_inspect_reads_a_session_of_several_evals_from_all_their_logs(
        tmp_path: Path) -> None:
    """QA: ``init --from-inspect`` on the newest log of a session that ran two evals (the
    README's "run again to continue") was refused: the log's labels are the session's, the
    first eval's samples are in the first eval's log only. Now each label is confirmed by
    the log of the eval that recorded it (the log's ``sources``)."""
    db = _session(tmp_path)
    first, second = _run(tmp_path, f"active:{db}:-:10", f"active:{db}:-:8")
    e1 = _read(first["log"]).eval.eval_id
    e2 = _read(second["log"]).eval.eval_id
    md = _read(second["log"]).results.early_stopping.metadata
    assert len(md["labels"]) == 18 and set(md["sources"].values()) == {
        f"inspect:{e1}", f"inspect:{e2}"}
    # the newest log alone: refused, naming the eval whose log is missing and its file
    p = _cli(tmp_path, "init", "one.db", *_MADE, "--from-inspect", second["log"])
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert (f"10 of the log's labels were recorded by inspect evals whose logs are not among "
            f"those given: eval {e1} (10 label(s)" in err), err
    assert f"its log is {first['log']}" in err and "--from-inspect can be repeated" in err
    assert not (tmp_path / "one.db").exists()
    # both logs (oldest first, or the other way round), or the folder: the same session
    for name, given in (("both.db", [first["log"], second["log"]]),
                        ("swapped.db", [second["log"], first["log"]]),
                        ("folder.db", [str(tmp_path / "logs")])):
        args = [a for g in given for a in ("--from-inspect", g)]
        p = _cli(tmp_path, "init", name, *_MADE, *args)
        assert p.returncode == 0, p.stderr
        assert ("18 draws replayed, 18 label(s) recorded (the eval's scores, of 2 evals, "
                "each confirmed by its own log)" in " ".join(p.stdout.split())), p.stdout
        _same(tmp_path, name, db)
    with Session.open(tmp_path / "both.db") as b:  # each label names the eval it came from
        src = {c.item_id: c.source for c in b.history()}
        assert sorted(set(src.values())) == sorted({f"inspect-log:{e1}", f"inspect-log:{e2}"})
        assert all(src[i] == f"inspect-log:{e1}" for i in _read(first["log"]).results
                   .early_stopping.metadata["recorded"])
    # a log of the first eval whose sample is another item (same id, other text): refused
    tampered = _read(first["log"])
    from inspect_ai.log import write_eval_log

    sid = next(iter(tampered.results.early_stopping.metadata["recorded"]))
    smp = next(s for s in tampered.samples if str(s.id) == sid)
    smp.input = "Question: What is 99 plus 99?\nAnswer:"
    write_eval_log(tampered, str(tmp_path / "tampered.eval"))
    p = _cli(tmp_path, "init", "t.db", *_MADE, "--from-inspect", str(tmp_path / "tampered.eval"),
             "--from-inspect", second["log"])
    assert p.returncode == 2 and f"pool item {sid!r} is not the log's sample" in p.stderr
    assert not (tmp_path / "t.db").exists()


def test_from_inspect_refuses_a_log_whose_sample_was_scored_otherwise(tmp_path: Path) -> None:
    """QA: a log re-scored or edited after the eval (a labelled sample's score in the log
    is now the other one) gave the early-stopping record's labels without a word, while
    the log's own sample said otherwise. Refused, naming the file, the item and both
    scores; the log as inspect wrote it still reads back. A record with fewer draw
    probabilities than draws is one message, not a traceback; a log in the folder that is
    a broken link is refused, named."""
    from inspect_ai.log import write_eval_log

    db = _session(tmp_path)
    (run,) = _run(tmp_path, f"active:{db}:-:10")
    p = _cli(tmp_path, "init", "ok.db", *_MADE, "--from-inspect", run["log"])
    assert p.returncode == 0, p.stderr
    log = _read(run["log"])
    labels = log.results.early_stopping.metadata["labels"]
    sid = next(iter(labels))
    smp = next(s for s in log.samples if str(s.id) == sid)
    (name, score), = smp.scores.items()
    score.value = "I" if score.value == "C" else "C"
    write_eval_log(log, str(tmp_path / "rescored.eval"))
    p = _cli(tmp_path, "init", "t.db", *_MADE, "--from-inspect", str(tmp_path / "rescored.eval"))
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr and err.count("error:") == 1, err
    assert (f"rescored.eval: item {sid!r}: the log's sample was scored "
            f"{1 - labels[sid]:g} (scorer {name!r}), but its label is {labels[sid]:g}") in err
    assert not (tmp_path / "t.db").exists()
    # metadata with one draw probability fewer than draws: one message (QA: a traceback)
    log = _read(run["log"])
    log.results.early_stopping.metadata["q"] = log.results.early_stopping.metadata["q"][:-1]
    write_eval_log(log, str(tmp_path / "short.eval"))
    p = _cli(tmp_path, "init", "u.db", *_MADE, "--from-inspect", str(tmp_path / "short.eval"))
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr and err.count("error:") == 1, err
    assert "short.eval: damaged ActiveStopping metadata (10 draws but 9 draw probabilities" \
        in err
    assert not (tmp_path / "u.db").exists()
    # a label of an item no draw holds: refused (QA: never recorded, without a word)
    log = _read(run["log"])
    md = log.results.early_stopping.metadata
    undrawn = next(f"sum-{i:03d}" for i in range(60) if f"sum-{i:03d}" not in md["draws"])
    md["labels"][undrawn] = 1.0
    write_eval_log(log, str(tmp_path / "extra.eval"))
    p = _cli(tmp_path, "init", "u.db", *_MADE, "--from-inspect", str(tmp_path / "extra.eval"),
             "--trust-labels-from-people")
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and err.count("error:") == 1, err
    assert (f"extra.eval: damaged ActiveStopping metadata (1 label(s) of items no draw "
            f"holds, e.g. {undrawn!r}" in err), err
    assert not (tmp_path / "u.db").exists()
    # a folder of logs where one is a broken link (the latest eval's, on a disk not
    # mounted): refused, named (QA: passed over unsaid, an older state read instead)
    folder = tmp_path / "logs"
    (folder / "2099-01-01T00-00-00-00-00_arith_gone.eval").symlink_to(tmp_path / "gone.eval")
    p = _cli(tmp_path, "init", "v.db", *_MADE, "--from-inspect", str(folder))
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and err.count("error:") == 1, err
    assert "arith_gone.eval: not a readable file (a broken link" in err
    assert not (tmp_path / "v.db").exists()
    # a damaged .eval in the folder (cut short: a disk that filled up) is refused alike
    # (QA: passed over with a note, the session read as of an older eval); a .json that
    # is no log (inspect's logs.json listing) is still passed over, said
    (folder / "2099-01-01T00-00-00-00-00_arith_gone.eval").unlink()
    cut = folder / "2099-01-01T00-00-00-00-00_arith_cut.eval"
    cut.write_bytes(Path(run["log"]).read_bytes()[:3000])
    (folder / "logs.json").write_text('{"listing": []}')
    p = _cli(tmp_path, "init", "w.db", *_MADE, "--from-inspect", str(folder))
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and err.count("error:") == 1 and "Traceback" not in err, err
    assert ("arith_cut.eval: a damaged inspect_ai log, which inspect_ai cannot read" in err
            and "it may be the log of the session's latest eval" in err), err
    assert not (tmp_path / "w.db").exists()
    cut.unlink()
    p = _cli(tmp_path, "init", "w.db", *_MADE, "--from-inspect", str(folder))
    assert p.returncode == 0 and "logs.json: passed over" in p.stderr, p.stderr


def _edited(tmp: Path, log_path: str, name: str, edit: Any, *, old: bool = False) -> str:
    """A copy of the log whose first labelled sample went through ``edit(sample, label)``
    (``old``: the early-stopping record without ``scorer`` and ``value_key``, as written
    before activetest recorded them); its path."""
    from inspect_ai.log import write_eval_log

    log = _read(log_path)
    md = log.results.early_stopping.metadata
    if old:
        del md["scorer"], md["value_key"]
    sid = next(iter(md["labels"]))
    edit(next(s for s in log.samples if str(s.id) == sid), md["labels"][sid])
    write_eval_log(log, str(tmp / name))
    return str(tmp / name)


def _refused(tmp: Path, log: str) -> str:
    """``init --from-inspect log``'s one error message (checked: exit 2, nothing made)."""
    p = _cli(tmp, "init", "r.db", *_MADE, "--from-inspect", log)
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr and err.count("error:") == 1, err
    assert not (tmp / "r.db").exists() and "nothing was recorded" in err, err
    return err


def test_from_inspect_checks_the_named_scorers_value_of_a_task_with_several(
        tmp_path: Path) -> None:
    """QA: a labelled sample with several scorers, or with no score, was taken from the
    early-stopping record unchecked (an edited log gave its old labels without a word).
    The manager now records the scorer its labels are (``scorer=`` or the task's one);
    read back, that scorer's value must be the label; a sample without it, or with no
    score, is refused. A log that does not name its scorer (written earlier) is checked
    as far as it can be: the label must be one of the sample's values."""
    from inspect_ai.scorer import Score

    db = _session(tmp_path)
    (run,) = _run(tmp_path, f"active:{db}:-:10", scorers="two")
    md = _read(run["log"]).results.early_stopping.metadata
    assert md["scorer"] == "match" and md["value_key"] is None
    p = _cli(tmp_path, "init", "ok.db", *_MADE, "--from-inspect", run["log"])
    assert p.returncode == 0, p.stderr
    _same(tmp_path, "ok.db", db)
    sid, lab = next(iter(md["labels"].items()))

    def flip(s: Any, label: float) -> None:  # match says the other level; length stays
        s.scores["match"].value = "I" if label == 1 else "C"

    err = _refused(tmp_path, _edited(tmp_path, run["log"], "flip.eval", flip))
    assert (f"flip.eval: item {sid!r}: the log's sample was scored {1 - lab:g} (scorer "
            f"'match'), but its label is {lab:g}" in err), err
    err = _refused(tmp_path, _edited(tmp_path, run["log"], "gone.eval",
                                     lambda s, _: s.scores.pop("match")))
    assert (f"gone.eval: item {sid!r}: the log's sample has no score from scorer 'match', "
            f"whose value the eval recorded as the label (the sample's scorers: ['length'])"
            in err), err
    err = _refused(tmp_path, _edited(tmp_path, run["log"], "none.eval",
                                     lambda s, _: setattr(s, "scores", {})))
    assert (f"none.eval: item {sid!r}: the log's sample has no score, but its label is "
            f"{lab:g}" in err and "records only scored samples" in err), err
    # a log that does not name its scorer: the label must be one of the sample's values
    p = _cli(tmp_path, "init", "old.db", *_MADE, "--from-inspect",
             _edited(tmp_path, run["log"], "old.eval", lambda s, _: None, old=True))
    assert p.returncode == 0, p.stderr

    def both(s: Any, label: float) -> None:
        flip(s, label)
        s.scores["length"] = Score(value=7.0)

    err = _refused(tmp_path, _edited(tmp_path, run["log"], "old2.eval", both, old=True))
    assert (f"old2.eval: item {sid!r}: the log's sample was scored {1 - lab:g} (scorer "
            f"'match'), 7 (scorer 'length'), but its label is {lab:g}" in err
            and "the log does not name the scorer whose value is the label" in err), err


def test_from_inspect_reads_a_dict_valued_score_at_the_managers_value_key(
        tmp_path: Path) -> None:
    """QA: a labelled sample whose score is a dict was taken unchecked. The manager reads
    the label at ``value_key`` and now records it; read back, that key's value must be
    the label, and a dict without it is refused."""
    db = _session(tmp_path)
    (run,) = _run(tmp_path, f"active:{db}:-:10", scorers="dict")
    md = _read(run["log"]).results.early_stopping.metadata
    assert md["scorer"] == "graded" and md["value_key"] == "correct"
    p = _cli(tmp_path, "init", "ok.db", *_MADE, "--from-inspect", run["log"])
    assert p.returncode == 0, p.stderr
    _same(tmp_path, "ok.db", db)
    sid, lab = next(iter(md["labels"].items()))

    def flip(s: Any, label: float) -> None:
        s.scores["graded"].value["correct"] = 1.0 - label

    err = _refused(tmp_path, _edited(tmp_path, run["log"], "flip.eval", flip))
    assert (f"flip.eval: item {sid!r}: the log's sample was scored {1 - lab:g} (scorer "
            f"'graded', key 'correct'), but its label is {lab:g}" in err), err
    err = _refused(tmp_path, _edited(tmp_path, run["log"], "nokey.eval",
                                     lambda s, _: s.scores["graded"].value.pop("correct")))
    assert (f"nokey.eval: item {sid!r}: the log's sample's scorer 'graded' gave a dict "
            f"without the key the eval read as the label (value_key 'correct'; its keys: "
            f"['length'])" in err), err
    err = _refused(tmp_path, _edited(tmp_path, run["log"], "old.eval", flip, old=True))
    assert "(scorer 'graded', key 'correct')" in err and "key 'length'" in err, err


def test_from_inspect_names_the_inspect_task_and_notes_evals_of_several(
        tmp_path: Path) -> None:
    """QA: a log whose ``eval.task`` was changed, its samples the pool's, was taken without
    a word. Decided: the task name is not checked, since labels join by the sample's
    content as the manager joins them (it runs an eval of a renamed task on the same
    samples as the same session's); the task is named in the line that reports the
    replay, and evals of several tasks get a note naming each task and its evals."""
    db = _session(tmp_path)
    first, second = _run(tmp_path, f"active:{db}:-:6", f"active:{db}:-:4")
    e1, e2 = (_read(r["log"]).eval.eval_id for r in (first, second))

    from inspect_ai.log import write_eval_log

    log = _read(second["log"])
    log.eval.task = "arith_v2"
    write_eval_log(log, str(tmp_path / "renamed.eval"))
    p = _cli(tmp_path, "init", "a.db", *_MADE, "--from-inspect", first["log"])
    assert p.returncode == 0 and "(inspect task 'arith'): 6 draws replayed" in p.stdout, p.stderr
    assert "note:" not in p.stderr, p.stderr
    p = _cli(tmp_path, "init", "b.db", *_MADE, "--from-inspect", first["log"],
             "--from-inspect", str(tmp_path / "renamed.eval"))
    assert p.returncode == 0, p.stderr
    assert "renamed.eval (inspect task 'arith_v2'): 10 draws replayed" in p.stdout, p.stdout
    err = " ".join(p.stderr.split())
    assert (f"note: the evals whose labels were read ran 2 inspect tasks: 'arith' (eval "
            f"{e1}); 'arith_v2' (eval {e2}). Each label was joined by its sample's content"
            in err), err
    _same(tmp_path, "b.db", db)


def test_from_inspect_names_a_folders_log_of_another_session(tmp_path: Path) -> None:
    """QA: a folder holding the logs of two sessions was refused at the draw check ("made
    from another pool, surrogate or seed") with nothing pointing at the folder's other
    session; now a note names the log whose draws part from the newest log's."""
    ours = _session(tmp_path)
    other = _session(tmp_path, seed=1, name="other.db")
    _run(tmp_path, f"active:{ours}:-:6")
    (late,) = _run(tmp_path, f"active:{other}:-:6")  # the newest log: the other session's
    p = _cli(tmp_path, "init", "a.db", *_MADE, "--from-inspect", "logs")
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in err, err
    assert "seed 1; this one 60 items, acquisition graded_fixed, seed 0" in err, err
    newest = f"logs/{Path(late['log']).name}"
    assert (f"the log of another session than the newest log's ({newest})" in err
            and "only the newest log's session is read" in err), err
    assert not (tmp_path / "a.db").exists()
    # one session's folder: no such note
    p = _cli(tmp_path, "init", "b.db", *_MADE, "--seed", "1", "--from-inspect",
             late["log"])
    assert p.returncode == 0 and "another session" not in p.stderr, p.stderr


def test_from_inspect_names_the_sessions_of_a_folder_at_the_draw_check(
        tmp_path: Path) -> None:
    """QA: a folder holding the logs of two sessions of one pool size, acquisition and
    seed (made from the pool's rows in two orders) was refused at the draw
    check, "made from another pool, surrogate or seed", without saying that the folder
    holds another session's logs. The refusal now names the session read (the newest
    log's), the other session's logs, and which of them is this session's, to give
    alone; given alone, they restore it."""
    ours = _session(tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "pool.jsonl").read_text().splitlines()]
    (tmp_path / "pool_b.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                   for r in reversed(rows)))
    other = tmp_path / "other.db"
    Session.create(other, pool=str(tmp_path / "pool_b.jsonl"), task=str(tmp_path / "arith.toml"),
                   target="pool", surrogate="column:p_correct", seed=0, progress=False).close()
    (mine,) = _run(tmp_path, f"active:{ours}:-:6")
    time.sleep(1.1)  # inspect's start time is to the second
    _run(tmp_path, f"active:{other}:-:8")  # the newest log: the other session's
    p = _cli(tmp_path, "init", "a.db", *_MADE, "--from-inspect", "logs")
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in err, (p.stdout, err)
    assert "the log was made from another pool, surrogate" in err, err
    log = f"logs/{Path(mine['log']).name}"
    assert "The logs given hold 2 sessions: the newest log's (logs/" in err, err
    assert (f"This session is the one of {log}: give its logs alone (--from-inspect {log}, "
            f"its newest log, or a folder of its logs only)") in err, err
    assert not (tmp_path / "a.db").exists()
    p = _cli(tmp_path, "init", "b.db", *_MADE, "--from-inspect", log)
    assert p.returncode == 0, p.stderr
    _same(tmp_path, "b.db", ours)


def test_status_names_the_inspect_tasks_of_the_evals(tmp_path: Path) -> None:
    """QA: the inspect task an eval ran was named by `init --from-inspect` only; `status`
    now names the tasks of the evals whose scores are labels, run by the manager or read
    back from their logs."""
    from inspect_ai.log import write_eval_log

    db = _session(tmp_path, target="inspect")
    first, second = _run(tmp_path, f"active:{db}:-:6", f"active:{db}:-:4")
    p = _cli(tmp_path, "status", str(db))
    assert p.returncode == 0 and "(2 eval(s) of inspect task 'arith' with" in " ".join(
        p.stdout.split()), p.stdout
    log = _read(second["log"])
    log.eval.task = "arith_v2"
    write_eval_log(log, str(tmp_path / "renamed.eval"))
    made = ["--task", "answers", "--pool", "pool.jsonl", "--target", "inspect", "--surrogate",
            "column:p_correct", "--metric", "error_rate", "--seed", "0", "--no-progress"]
    p = _cli(tmp_path, "init", "b.db", *made, "--from-inspect", first["log"],
             "--from-inspect", str(tmp_path / "renamed.eval"))
    assert p.returncode == 0, p.stderr
    p = _cli(tmp_path, "status", "b.db")
    assert p.returncode == 0 and "of inspect tasks 'arith', 'arith_v2' with" in " ".join(
        p.stdout.split()), p.stdout


def test_from_inspect_keeps_the_task_of_a_log_naming_no_model(tmp_path: Path) -> None:
    """QA: ``init --from-inspect`` kept the evals' inspect tasks only with the eval's
    model: a log naming no model left a session whose ``status`` named no task. The
    tasks are now kept (and named by ``status``) with or without a model."""
    from inspect_ai.log import write_eval_log

    db = _session(tmp_path, target="inspect")
    (run,) = _run(tmp_path, f"active:{db}:-:6")
    log = _read(run["log"])
    log.eval.model = ""
    write_eval_log(log, str(tmp_path / "nomodel.eval"))
    made = ["--task", "answers", "--pool", "pool.jsonl", "--target", "inspect", "--surrogate",
            "column:p_correct", "--metric", "error_rate", "--seed", "0", "--no-progress"]
    p = _cli(tmp_path, "init", "n.db", *made, "--from-inspect", str(tmp_path / "nomodel.eval"))
    assert p.returncode == 0, p.stderr
    p = _cli(tmp_path, "status", "n.db")
    out = " ".join(p.stdout.split())
    assert p.returncode == 0 and "(1 eval(s) of inspect task 'arith' with" in out, out
    p = _cli(tmp_path, "status", "n.db", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["target_runs"]["tasks"] == ["arith"], \
        p.stdout


def test_from_inspect_takes_peoples_labels_only_when_told_to(tmp_path: Path) -> None:
    """QA: a session holding a person's label (given before the eval) could not be read
    back from its log. No sample shows a person's label, so it is refused unless
    ``--trust-labels-from-people`` (then taken by id, its source kept and marked)."""
    db = _session(tmp_path)
    with Session.open(db) as s:
        _label_by_rule(s, tmp_path, 3)  # a person's labels (source "api"), before the eval
        s.add_label(s.select(1)[0].item_id, "correct", source="import:pl.csv",
                    trust_people=True)
    (run,) = _run(tmp_path, f"active:{db}:-:8")
    eid = _read(run["log"]).eval.eval_id
    p = _cli(tmp_path, "init", "p.db", *_MADE, "--from-inspect", run["log"])
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert ("4 of the log's labels are not an inspect eval's scores but labels from people "
            "or imports" in err and "'api', 'import:pl.csv'" in err
            and "--trust-labels-from-people" in err), err
    assert not (tmp_path / "p.db").exists()
    p = _cli(tmp_path, "init", "p.db", *_MADE, "--from-inspect", run["log"],
             "--trust-labels-from-people")
    assert p.returncode == 0, p.stderr
    assert ("4 label(s) from people or imports, taken on trust by item id"
            in " ".join(p.stdout.split())), p.stdout
    _same(tmp_path, "p.db", db)
    with Session.open(tmp_path / "p.db") as b:
        assert sorted({c.source for c in b.history()}) == [
            f"api (via inspect-log:{eid})", f"import:pl.csv (via inspect-log:{eid})",
            f"inspect-log:{eid}"]
    p = _cli(tmp_path, "init", "q.db", *_MADE, "--trust-labels-from-people")
    assert p.returncode == 2 and "give --from-inspect" in p.stderr


def test_from_inspect_takes_labels_of_an_eval_without_an_id_only_when_told_to(
        tmp_path: Path) -> None:
    """QA: labels ActiveStopping recorded without an eval id (``inspect:unknown``: its
    protocol driven outside inspect, or inspect gave none) could never be read back: no
    log names that eval, and ``--from-inspect`` refused them without saying what to do.
    Like people's labels they cannot be confirmed by a sample: refused, naming how many
    and ``--trust-labels-from-people``, which takes them by item id (still counted as
    target runs); a copy's later log reads back the same way."""
    from activetest.session.harness import is_target_run

    db = _session(tmp_path)
    _drive(db, tmp_path, width=None, budget=8, batch=4, seed=1)  # no eval id: 8 labels
    (run,) = _run(tmp_path, f"active:{db}:-:8")  # a real eval goes on: 8 more
    eid = _read(run["log"]).eval.eval_id
    assert sorted(set(_read(run["log"]).results.early_stopping.metadata["sources"]
                      .values())) == [f"inspect:{eid}", "inspect:unknown"]
    p = _cli(tmp_path, "init", "u.db", *_MADE, "--from-inspect", run["log"])
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert ("8 of the log's labels were recorded by ActiveStopping driven without an eval id "
            "(e.g. item" in err and "source 'inspect:unknown'" in err
            and "Give --trust-labels-from-people" in err and "nothing was recorded" in err), err
    assert "labels from people" not in err, err
    assert not (tmp_path / "u.db").exists()
    p = _cli(tmp_path, "init", "u.db", *_MADE, "--from-inspect", run["log"],
             "--trust-labels-from-people")
    assert p.returncode == 0, p.stderr
    said = " ".join(p.stdout.split())
    assert ("16 label(s) recorded (the eval's scores; 8 score(s) of an eval without an id "
            "(inspect:unknown), taken on trust by item id)" in said), said
    _same(tmp_path, "u.db", db)
    with Session.open(tmp_path / "u.db") as b:
        assert sorted({c.source for c in b.history()}) == [
            f"inspect-log:{eid}", f"inspect:unknown (via inspect-log:{eid})"]
        # the target's scores still: `status` of a --target inspect session counts them
        assert all(is_target_run(lab.source) for lab in b.store.labels().values())
    # the copy runs on; its log's trusted labels are read back as trusted again
    (more,) = _run(tmp_path, f"active:{tmp_path / 'u.db'}:-:4")
    logs = ["--from-inspect", run["log"], "--from-inspect", more["log"]]
    p = _cli(tmp_path, "init", "v.db", *_MADE, *logs)
    assert p.returncode == 2 and "8 of the log's labels were recorded by ActiveStopping" in (
        " ".join(p.stderr.split())), p.stderr
    p = _cli(tmp_path, "init", "v.db", *_MADE, *logs, "--trust-labels-from-people")
    assert p.returncode == 0, p.stderr
    _same(tmp_path, "v.db", tmp_path / "u.db")


def test_from_inspect_reads_logs_written_before_sources(tmp_path: Path) -> None:
    """A log without ``sources`` (activetest before 2026-12-05) reads as before: a single
    eval's log alone; the newest of several evals with the earlier logs given too (each
    label confirmed by the sample of that id in a log given), and alone it is refused,
    saying to give the earlier logs."""
    from inspect_ai.log import write_eval_log

    db = _session(tmp_path)
    first, second = _run(tmp_path, f"active:{db}:-:10", f"active:{db}:-:6")
    old = []
    for k, run in enumerate((first, second)):
        log = _read(run["log"])
        del log.results.early_stopping.metadata["sources"]
        write_eval_log(log, str(tmp_path / f"old{k}.eval"))
        old.append(str(tmp_path / f"old{k}.eval"))
    p = _cli(tmp_path, "init", "one.db", *_MADE, "--from-inspect", old[0])
    assert p.returncode == 0 and "10 draws replayed, 10 label(s) recorded" in p.stdout, p.stderr
    p = _cli(tmp_path, "init", "two.db", *_MADE, "--from-inspect", old[1])
    assert p.returncode == 2 and "the log holds no sample for it" in p.stderr
    assert "give the logs of the session's earlier evals too" in " ".join(p.stderr.split())
    p = _cli(tmp_path, "init", "two.db", *_MADE, "--from-inspect", old[0], "--from-inspect",
             old[1])
    assert p.returncode == 0, p.stderr
    _same(tmp_path, "two.db", db)


def _history_matrix(tmp: Path, twin: bool = False) -> Path:
    """Five other models' results on the arithmetic pool (a response matrix by the pool's
    ids): each is wrong where a is a multiple of its own k or above its own limit, so
    together they say which sums are hard, as the mock model finds them."""
    from tests.inspect_runs import write_pool

    rows = write_pool(tmp / "pool.jsonl", 60) if not (tmp / "pool.jsonl").exists() else [
        json.loads(x) for x in (tmp / "pool.jsonl").read_text().splitlines()]
    lines = ["model," + ",".join(r["id"] for r in rows)]
    rules = ((5, 21), (5, 19), (10, 20), (4, 22), (7, 18)) + (((5, 20),) if twin else ())
    for m, (k, limit) in enumerate(rules):
        cells = []
        for r in rows:
            a = int(r["question"].removeprefix("What is ").split(" plus ")[0])
            cells.append("0" if (a % k == 0 and a > 0) or a > limit else "1")
        lines.append(f"other-{m}," + ",".join(cells))
    path = tmp / "history.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_an_inspect_session_draws_by_history_and_its_column_inside_a_real_eval(
        tmp_path: Path) -> None:
    """``--target inspect`` with ``--history``: the manager draws from the history design
    (with the pool column beside it: both), batch by batch, in a real eval; every recorded
    label is the full run's score and the draws are the design's own, refitted on the
    completed scores between batches (issue 22: "surrogate scores, history features, or
    both")."""
    from activetest.session.design import POOL_SIGNAL, stored_design
    from activetest.stats.adaptive import AdaptiveSampler

    hist = _history_matrix(tmp_path)
    (tmp_path / "arith.toml").write_text(TASK_TOML, encoding="utf-8")
    base = ["--pool", "pool.jsonl", "--task", "answers", "--target", "inspect", "--seed", "0",
            "--no-progress", "--history", str(hist), "--history-exclude", "other-4"]
    p = _cli(tmp_path, "init", "uni.db", *base, "--surrogate", "uniform")
    assert p.returncode == 2 and "--surrogate uniform draws uniformly" in p.stderr
    assert not (tmp_path / "uni.db").exists()
    p = _cli(tmp_path, "init", "h.db", *base, "--surrogate", "history")
    assert p.returncode == 0, p.stderr
    assert "design: history features + neighbours" in p.stdout
    p = _cli(tmp_path, "init", "s.db", *base, "--surrogate", "column:p_correct")
    assert p.returncode == 0, p.stderr
    assert "history: 4 model(s)" in p.stdout and "'other-4' not used" in p.stdout
    assert "design: history features + pool column p_correct + neighbours" in p.stdout
    db = tmp_path / "s.db"
    with Session.open(db) as s:
        assert s.session_config.extra["history"]["features"] == [POOL_SIGNAL]
        design = stored_design(s.store)
        assert "pool column p_correct (log-odds)" in design.columns
    full, active = _run(tmp_path, "full", f"active:{db}:0.3:50:4")
    truth, ran = _scores(_read(full["log"])), _scores(_read(active["log"]))
    with Session.open(db) as s:
        order = [a.index for a in s.acquisitions()]
        ids = s.store.item_ids()
        labels = s.labels()
        levels = s.task.judgment.scores
    assert ran and set(ran) == set(labels) and len(order) == len(ran)
    assert all(levels[v] == truth[i] == ran[i] for i, v in labels.items())
    ref = AdaptiveSampler(design, seed=0)
    loss = np.array([1.0 - truth[i] for i in ids])
    while len(ref.acquired) < len(order):
        idx, _ = ref.draw(4)
        ref.observe(losses=loss[idx].tolist())
    assert order == list(ref.acquired)
    # init --from-inspect of its log: the replay rebuilds the same design and confirms
    # every draw; made without the neighbours' column it is refused, the history named
    made = [*base, "--surrogate", "column:p_correct", "--from-inspect", active["log"]]
    p = _cli(tmp_path, "init", "back.db", *made)
    assert p.returncode == 0, p.stderr
    assert f"{len(order)} draws replayed, {len(labels)} label(s) recorded" in p.stdout
    with Session.open(tmp_path / "back.db") as b:
        assert [a.index for a in b.acquisitions()] == order and b.labels() == labels
    p = _cli(tmp_path, "init", "other.db", *made, "--no-history-neighbours")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "another pool, surrogate, history (the --history files and options) or seed" \
        in " ".join(p.stderr.split())
    assert not (tmp_path / "other.db").exists()


def test_status_says_when_a_history_row_is_the_targets_own_run(tmp_path: Path) -> None:
    """An inspect target has no results before its eval, so its own run in the history
    cannot be recognised at init; once 20 or more labels equal a row on every item it has,
    ``status`` names the row and the way to leave it out. (Rows ``other-1`` and
    ``other-5`` are wrong exactly where the mock model is: twins of the target.)"""
    hist = _history_matrix(tmp_path, twin=True)
    said = {}
    for name, exclude in (("one.db", ["other-1"]), ("two.db", [])):
        db = tmp_path / name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the init notice: its run is not recognisable
            Session.create(db, pool=str(tmp_path / "pool.jsonl"), task="answers",
                           target="inspect", surrogate="history", history=[str(hist)],
                           history_exclude=exclude, seed=0, progress=False).close()
        with Session.open(db) as s:
            _label_by_rule(s, tmp_path, 12)
        p = _cli(tmp_path, "status", str(db))
        assert p.returncode == 0 and "the target's results" not in p.stdout  # 12: too few
        with Session.open(db) as s:
            _label_by_rule(s, tmp_path, 48)  # the whole pool: only the twins still agree
        said[name] = " ".join(_cli(tmp_path, "status", str(db)).stdout.split())
    assert "note: history row 'other-5' agrees with the target's results on every one of " \
           "the 60 labelled items it has" in said["one.db"], said["one.db"]
    assert "--history-exclude 'other-5'" in said["one.db"]
    assert "note: history rows 'other-1', 'other-5' agree with the target's results on " \
           "every labelled item they have (60 or more each)" in said["two.db"], said["two.db"]
    assert "--history-exclude NAME" in said["two.db"]


def test_an_eval_of_a_model_the_history_holds_is_named_at_start_and_in_status(
        tmp_path: Path) -> None:
    """The history of an inspect session may hold a run of the model the eval turns out to
    be (a matrix row named ``mockllm/model``): unknown at init (the target is named by the
    eval), said when the eval starts (a warning on the eval's stderr) and by ``status``
    from then on, with the way to leave it out, and by ``init --from-inspect`` of the eval's
    log with the same history; a session whose history has no such row says nothing."""
    hist = _history_matrix(tmp_path)
    text = hist.read_text(encoding="utf-8").splitlines()
    own = text[1].replace("other-0,", "mockllm/model,", 1)  # named as the eval's model
    hist.write_text("\n".join([*text, own]) + "\n", encoding="utf-8")
    (tmp_path / "arith.toml").write_text(TASK_TOML, encoding="utf-8")
    said = {}
    for name, exclude in (("own.db", []), ("clean.db", ["mockllm/model"])):
        db = tmp_path / name
        p = _cli(tmp_path, "init", name, "--pool", "pool.jsonl", "--task", "answers",
                 "--target", "inspect", "--seed", "0", "--no-progress", "--history",
                 str(hist), "--surrogate", "column:p_correct",
                 *(["--history-exclude", exclude[0]] if exclude else []))
        assert p.returncode == 0, p.stderr
        err: list[str] = []
        (run,) = _run(tmp_path, f"active:{db}:-:8", stderr=err)
        assert run["status"] == "success"
        # the session read back from the eval's log, with the same history (QA: the copy
        # said only that the target's run "cannot be recognised ... before labelling")
        p = _cli(tmp_path, "init", f"copy-{name}", "--pool", "pool.jsonl", "--task",
                 "answers", "--target", "inspect", "--seed", "0", "--no-progress",
                 "--history", str(hist), "--surrogate", "column:p_correct",
                 *(["--history-exclude", exclude[0]] if exclude else []),
                 "--from-inspect", run["log"])
        assert p.returncode == 0, p.stderr
        # the eval's log given to import: said to be no label file, and where its labels
        # come from (QA: "cannot tell the format from the suffix '.eval'; name it with
        # --format", which no format reads)
        with Session.open(db) as s:
            before = s.labels()
        imp = _cli(tmp_path, "import", name, run["log"])
        flat = " ".join(imp.stderr.split())
        assert imp.returncode == 2 and flat.count("error:") == 1, flat
        assert "is an inspect_ai log (.eval), not a label file" in flat, flat
        assert "recorded by activetest.inspect.ActiveStopping" in flat and "suffix" not in flat
        with Session.open(db) as s:
            assert s.labels() == before and before  # nothing lost, nothing added
        said[name] = (" ".join(err[0].split()),
                      " ".join(_cli(tmp_path, "status", str(db)).stdout.split()),
                      " ".join(p.stderr.split()))
    start, status, copy = said["own.db"]
    for text in (start, status, copy):
        assert "the history holds a run of the target's own model ('mockllm/model')" in text
        assert "--history-exclude 'mockllm/model'" in text
    assert "note: the history holds a run" in status and "note: the history holds" in copy
    assert "cannot be recognised" not in copy, copy
    assert all("target's own model" not in t for t in said["clean.db"]), said["clean.db"]


def _readme_history_command() -> list[str]:
    """The README's inspect ``init --history`` command (its words; lines joined)."""
    import re
    import shlex

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"`(activetest init past\.db [^`]*--history past_logs)`", text)
    assert m, "the README names no inspect init --history command"
    return shlex.split(m.group(1))[1:]


def test_an_eval_run_with_activestopping_is_no_history_and_the_readme_command_runs(
        tmp_path: Path) -> None:
    """The target's own results are never history (issue 21). An inspect session's earlier
    eval with ActiveStopping wrote a log whose scores are its labels of its target; given
    as --history (QA: only warned about, "cannot be recognised", and used) it is dropped,
    said: the target is named only by the eval, so it cannot be told from this target's
    run. A session remade --from-inspect with the same --history, that log among it,
    replays the same draws; the log alone leaves no history, refused, saying why. The
    README's command (a pool with a surrogate's column: --surrogate column:NAME) runs on
    another full eval's log; --surrogate history needs a pool of the samples' text only."""
    from activetest.formats.inspect import ACTIVE_STOPPING

    assert ACTIVE_STOPPING == MANAGER
    hist = _history_matrix(tmp_path)
    (tmp_path / "arith.toml").write_text(TASK_TOML, encoding="utf-8")
    base = ["--pool", "pool.jsonl", "--task", "answers", "--target", "inspect",
            "--surrogate", "column:p_correct", "--seed", "0", "--no-progress"]
    mine = ["--history", str(hist), "--history-exclude", "other-1"]  # other-1: the twin
    p = _cli(tmp_path, "init", "s.db", *base, *mine)
    assert p.returncode == 0, p.stderr
    db = tmp_path / "s.db"
    full, active = _run(tmp_path, "full", f"active:{db}:0.45:30")
    own, past = tmp_path / "own", tmp_path / "past_logs"
    own.mkdir()
    past.mkdir()
    log = own / Path(active["log"]).name
    shutil.move(active["log"], log)
    shutil.move(full["log"], past / Path(full["log"]).name)
    with Session.open(db) as s:
        order, labels = [a.item_id for a in s.acquisitions()], s.labels()
    assert labels
    p = _cli(tmp_path, "init", "h.db", *base, *mine, "--history", "own")
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 0, out
    assert (f"history: row 'mockllm/model' not used (own/{log.name} is an eval run with "
            f"activetest.inspect.ActiveStopping (session s.db): its scores are an inspect "
            f"session's labels of its target") in out, out
    assert "history: 4 model(s) from" in out, out
    with Session.open(tmp_path / "h.db") as h:
        rec = h.session_config.extra["history"]
        assert rec["n_models"] == 4 and "mockllm/model" in [e[0] for e in rec["excluded"]]
    # the session remade from its log with the same history, the log among it
    p = _cli(tmp_path, "init", "copy.db", *base, *mine, "--history", "own",
             "--from-inspect", str(log))
    assert p.returncode == 0, p.stdout + p.stderr
    with Session.open(tmp_path / "copy.db") as c:
        assert [a.item_id for a in c.acquisitions()] == order and c.labels() == labels
    p = _cli(tmp_path, "init", "o.db", *base, "--history", "own")
    err = " ".join(p.stderr.split())
    assert p.returncode == 2 and "Traceback" not in err and err.count("error:") == 1, err
    assert ("no history is left once the target's own run is dropped (row 'mockllm/model': "
            f"own/{log.name} is an eval run with activetest.inspect.ActiveStopping") in err, err
    assert not (tmp_path / "o.db").exists()
    # the README's command, as it stands, on another full eval's log
    args = _readme_history_command()
    p = _cli(tmp_path, *args)
    out = " ".join((p.stdout + p.stderr).split())
    assert p.returncode == 0, out
    assert "history: 1 model(s)" in out, out
    assert "surrogate column:p_correct beside the history's features" in out, out
    # --surrogate history: refused for this pool (its column is no sample's text), taken
    # for a pool of the samples' text only, as the README says
    alone = ["history" if a == "column:p_correct" else a for a in args]
    alone[alone.index("past.db")] = "alone.db"
    p = _cli(tmp_path, *alone)
    assert p.returncode == 2 and "--surrogate column:p_correct" in p.stderr, p.stderr
    rows = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()]
    (tmp_path / "text.jsonl").write_text("".join(json.dumps(
        {"id": r["id"], "question": r["question"]}) + "\n" for r in rows), encoding="utf-8")
    alone[alone.index("pool.jsonl")] = "text.jsonl"
    p = _cli(tmp_path, *alone)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "surrogate history, target inspect" in p.stdout, p.stdout


def test_the_logs_design_record_names_the_column_that_draws_beside_the_history(
        tmp_path: Path) -> None:
    """QA: the early-stopping metadata's design record said ``"surrogate": "history"`` for
    a session made with ``--surrogate column:p_correct --history FILE`` (the stored name,
    the design's rule), where ``status`` names the pool column beside the history's
    features; it now says the same, with ``surrogate_column`` beside it. A session without
    history keeps its surrogate and no such key."""
    _history_matrix(tmp_path)  # (writes the pool too)
    p = _cli(tmp_path, "init", "hist.db", "--task", "answers", "--pool", "pool.jsonl",
             "--target", "inspect", "--surrogate", "column:p_correct", "--seed", "0",
             "--no-progress", "--history", "history.csv")
    assert p.returncode == 0, p.stderr
    md = _drive(tmp_path / "hist.db", tmp_path, width=None, budget=6, batch=3, seed=1)
    design = md["design"]
    assert design["surrogate"] == "column:p_correct beside the history's features", design
    assert design["surrogate_column"] == "p_correct", design
    plain = _session(tmp_path, target="inspect", name="plain.db")
    design = _drive(plain, tmp_path, width=None, budget=6, batch=3, seed=1)["design"]
    assert design["surrogate"] == "column:p_correct" and "surrogate_column" not in design
