"""The Ray scoring path's prompt: with ``--seed`` the in-context examples a session with
that seed draws (QA: it took the file's first K while ``init`` draws K stratified examples
in a seeded order, and docs/scale.md said it used "the session's prompt")."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from activetest.cli import app
from activetest.data.taskfile import load_task
from activetest.models.ray_score import prompt_examples
from activetest.session.workflow import Session


def test_seeded_examples_are_the_ones_a_session_with_that_seed_draws(tmp_path: Path) -> None:
    words = ["great", "awful", "nice", "dull", "superb", "bad", "fine", "poor", "good", "meh"]
    rows = [f"{w},{'positive' if i % 2 == 0 else 'negative'}" for i, w in enumerate(words)]
    ex = tmp_path / "ex.csv"
    ex.write_text("text,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (tmp_path / "pool.csv").write_text("id,text\na1,x\na2,y\n", encoding="utf-8")
    lp = "-1.2039728043259361,-0.35667494393873245"
    (tmp_path / "t.csv").write_text(f"id,negative,positive\na1,{lp}\na2,{lp}\n",
                                    encoding="utf-8")
    task = load_task("sst2")
    for seed in (3, 11):
        db = tmp_path / f"s{seed}.db"
        res = CliRunner().invoke(app, [
            "init", str(db), "--pool", str(tmp_path / "pool.csv"), "--id-column", "id",
            "--task", "sst2", "--examples", str(ex), "--shots", "4", "--seed", str(seed),
            "--surrogate", f"table:{tmp_path / 't.csv'}",
            "--target", f"table:{tmp_path / 't.csv'}", "--no-progress"])
        assert res.exit_code == 0, res.output
        with Session.open(db) as s:
            want = [(e.fields, e.label) for e in s.examples()]
        got = [(e.fields, e.label) for e in prompt_examples(ex, task, 4, seed)]
        assert got == want
        assert got != [(e.fields, e.label) for e in prompt_examples(ex, task, 4, None)]
    assert [e.fields["text"] for e in prompt_examples(ex, task, 3, None)] == words[:3]
