"""One class-numbering rule through every entry point (see activetest.data.classes).

Class names and label words are read everywhere; a NUMBER is a class only where
the file's numbering is declared (``--label-base``, or ``label_base`` in the task
file for pool and example files); the terminal's keys are 1..C, shown on screen.
On a 4-class task a silent off-by-one would turn "Sports" into "World": every
test below fails if a number is guessed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from activetest.cli import app
from activetest.data.classes import LabelReader
from activetest.data.pool import PoolFormatError, load_pool
from activetest.data.taskfile import load_task
from activetest.session.labelio import LabelFileError, import_labels
from activetest.session.workflow import Session

runner = CliRunner()
CLASSES = ["World", "Sports", "Business", "Sci/Tech"]
TASK = """name = "news"
instruction = "Topic?"
classes = ["World", "Sports", "Business", "Sci/Tech"]
"""


def run(*args: object, input: str | None = None, code: int = 0) -> str:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == code, (result.exit_code, result.output, result.exception)
    if code == 2:
        assert "Traceback" not in result.output
    return result.output


def _csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture
def news(tmp_path: Path) -> dict[str, Path]:
    """A 4-class task file, a 12-item pool labelled by NUMBERS (1-based), tables."""
    (tmp_path / "news.toml").write_text(TASK, encoding="utf-8")
    ys = [k % 4 for k in range(12)]
    pool = _csv(tmp_path / "pool.csv", ["id", "text", "label"],
                [[f"n{k}", f"headline {k}", y + 1] for k, y in enumerate(ys)])
    named = _csv(tmp_path / "named.csv", ["id", "text", "label"],
                 [[f"n{k}", f"headline {k}", CLASSES[y]] for k, y in enumerate(ys)])
    examples = _csv(tmp_path / "ex.csv", ["id", "text", "label"],
                    [[f"e{k}", f"example {k}", k % 4 + 1] for k in range(8)])
    rng = np.random.default_rng(0)
    for name in ("sur", "tgt"):
        lp = np.log(rng.dirichlet(np.ones(4), size=12))
        _csv(tmp_path / f"{name}.csv", ["id", *CLASSES],
             [[f"n{k}", *map(float, row)] for k, row in enumerate(lp)])
    return {"task": tmp_path / "news.toml", "pool": pool, "named": named, "examples": examples,
            "sur": tmp_path / "sur.csv", "tgt": tmp_path / "tgt.csv", "dir": tmp_path}


def init(f: dict[str, Path], db: Path, *extra: object, pool: str = "pool",
         code: int = 0) -> str:
    return run("init", db, "--pool", f[pool], "--task", f["task"], "--id-column", "id",
               "--surrogate", f"table:{f['sur']}", "--target", f"table:{f['tgt']}",
               "--seed", "3", "--no-progress", *extra, code=code)


def _data_labels(db: Path) -> list[int | None]:
    with Session.open(db) as s:
        return [it.label for it in s.items()]


def test_pool_numbers_need_a_declared_base(news: dict[str, Path]) -> None:
    out = init(news, news["dir"] / "a.db", code=2)
    assert "pool.csv, line 2: label '1' is a number" in out and "--label-base" in out
    init(news, news["dir"] / "one.db", "--label-base", "1")
    init(news, news["dir"] / "zero.db", "--label-base", "0", pool="named")
    init(news, news["dir"] / "names.db", pool="named")
    want = [k % 4 for k in range(12)]
    assert _data_labels(news["dir"] / "one.db") == want
    assert _data_labels(news["dir"] / "names.db") == want  # names need no declaration
    assert _data_labels(news["dir"] / "zero.db") == want
    # counted from 0 instead, the same file means other classes, or fails: never silently
    out = init(news, news["dir"] / "b.db", "--label-base", "0", code=2)
    assert "label '4' is not a class number 0..3" in out


def test_examples_follow_the_same_rule(news: dict[str, Path]) -> None:
    out = init(news, news["dir"] / "a.db", "--examples", news["examples"], pool="named",
               code=2)
    assert "ex.csv, line 2: label '1' is a number" in out
    init(news, news["dir"] / "b.db", "--examples", news["examples"], "--label-base", "1",
         pool="named")
    with Session.open(news["dir"] / "b.db") as s:
        assert {e.id: e.label for e in s.examples()} == {f"e{k}": k % 4 for k in range(8)}


def test_the_task_file_declares_its_pool_numbering(news: dict[str, Path]) -> None:
    news["task"].write_text(TASK + "label_base = 1\n", encoding="utf-8")
    init(news, news["dir"] / "a.db")
    assert _data_labels(news["dir"] / "a.db") == [k % 4 for k in range(12)]
    task = load_task(news["task"])
    assert task.label_base == 1
    # the task's declaration is for its pool and example files, not for label sheets
    sheet = _csv(news["dir"] / "s.csv", ["item_id", "label"], [["n0", "2"]])
    with pytest.raises(LabelFileError, match=r"s\.csv, line 2: label '2' is a number"):
        import_labels(sheet, task)


def _session(news: dict[str, Path]) -> Path:
    db = news["dir"] / "s.db"
    init(news, db, pool="named")
    run("select", db, "--n", "4")
    return db


def test_sheets_and_jsonl_need_a_declared_base(news: dict[str, Path]) -> None:
    db = _session(news)
    with Session.open(db) as s:
        ids = [a.item_id for a in s.acquisitions()]
    sheet = _csv(news["dir"] / "s.csv", ["item_id", "label"], [[ids[0], "1"], [ids[1], "Sports"]])
    out = run("import", db, sheet, code=2)
    assert "s.csv, line 2: label '1' is a number" in out and "--label-base" in out
    assert json.loads(run("status", db, "--json"))["n_labelled"] == 0
    run("import", db, sheet, "--label-base", "1")
    with Session.open(db) as s:
        assert s.labels() == {ids[0]: 0, ids[1]: 1}
    jl = news["dir"] / "s.jsonl"
    jl.write_text(json.dumps({"item_id": ids[2], "label": 2}) + "\n", encoding="utf-8")
    assert "line 1: label 2 is a number" in run("import", db, jl, code=2)
    run("import", db, jl, "--label-base", "0")
    with Session.open(db) as s:
        assert s.labels()[ids[2]] == 2  # Business


def test_label_studio_choices_are_class_names(news: dict[str, Path]) -> None:
    db = _session(news)
    with Session.open(db) as s:
        ids = [a.item_id for a in s.acquisitions()]
        text = s.item(ids[0]).fields["text"]  # a task's text must be its item's
    export = news["dir"] / "ls.json"

    def write(choice: str) -> None:
        export.write_text(json.dumps([{
            "id": 1, "data": {"text": text, "item_id": ids[0]},
            "annotations": [{"id": 1, "completed_by": 1, "was_cancelled": False,
                             "result": [{"from_name": "label", "to_name": "text",
                                         "type": "choices",
                                         "value": {"choices": [choice]}}]}]}]))
    write("1")
    assert "label '1' is a number" in run("import", db, export, code=2)
    write("Sci/Tech")
    run("import", db, export)
    with Session.open(db) as s:
        assert s.labels() == {ids[0]: 3}


def test_terminal_keys_are_one_based_and_shown(news: dict[str, Path]) -> None:
    db = _session(news)
    out = run("label", db, input="2\nBusiness\n0\nsci/tech\nq\n")
    assert "1=World" in out and "4=Sci/Tech" in out  # the keys are on every screen
    assert "saved: Sports" in out and "saved: Business" in out and "saved: Sci/Tech" in out
    assert "unknown answer '0'" in out  # no key 0: a number never means a 0-based index
    with Session.open(db) as s:
        ids = [a.item_id for a in s.acquisitions()]
        assert s.labels() == {ids[0]: 1, ids[1]: 2, ids[2]: 3}


def test_exported_labels_equal_the_stored_ones(news: dict[str, Path]) -> None:
    db = _session(news)
    run("label", db, input="4\n1\n3\n2\n")
    with Session.open(db) as s:
        stored = s.labels()
    assert sorted(stored.values()) == [0, 1, 2, 3]
    for suffix in (".csv", ".jsonl"):
        out = news["dir"] / f"done{suffix}"
        run("export", db, "--out", out, "--which", "labelled")
        if suffix == ".csv":
            rows = list(csv.DictReader(out.open(encoding="utf-8")))
        else:
            rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
        assert {r["item_id"]: r["label"] for r in rows} == {
            i: CLASSES[y] for i, y in stored.items()}
        # and they import back as the same labels, with no declaration needed
        assert "0 new label(s), changed 0, 4 already present" in run("import", db, out)


def test_numeric_label_words_are_words(tmp_path: Path) -> None:
    task_path = tmp_path / "stars.toml"
    task_path.write_text('name = "stars"\ninstruction = "Stars?"\n'
                         'classes = ["1", "2", "3", "4", "5"]\n', encoding="utf-8")
    task = load_task(task_path)
    pool = _csv(tmp_path / "p.csv", ["text", "label"], [["a", 3], ["b", "5"]])
    assert [it.label for it in load_pool(pool, task=task)] == [2, 4]
    assert [it.label for it in load_pool(pool, task=task, label_base=1)] == [2, 4]
    with pytest.raises(PoolFormatError, match=r"label word '1' is class 0 but would read as "
                                              r"class 1 counted from 0.*ambiguous"):
        load_pool(pool, task=task, label_base=0)


def test_reader_refuses_other_bases_and_floats() -> None:
    task = load_task("sst2")
    with pytest.raises(ValueError, match="label base must be 0 or 1"):
        LabelReader(task, base=2)
    reader = LabelReader(task)  # no base: numbers refused
    with pytest.raises(ValueError, match="is a number"):
        reader(1.0, "x")
    assert reader(" Positive ", "x") == 1 and reader("", "x") is None
    assert LabelReader(task, base=1)(2.0, "x") == 1


def test_reader_ignores_unicode_form_and_the_case_of_label_map_keys(tmp_path: Path) -> None:
    """QA: 'négatif' typed in NFD (e + combining accent) was "unknown label 'négatif';
    expected one of 'négatif', ..." (both look the same); a label_map key 'neg' did not
    read 'NEG', and the message did not list the map's keys."""
    import unicodedata

    task_path = tmp_path / "fr.toml"
    task_path.write_text('name = "fr"\ninstruction = "Avis ?"\nclasses = ["négatif", '
                         '"positif"]\n', encoding="utf-8")
    task = load_task(task_path)
    reader = LabelReader(task, label_map={"neg": 0, "pos": "positif"})
    nfd = unicodedata.normalize("NFD", "négatif")
    assert nfd != "négatif" and reader(nfd, "x") == 0
    assert reader(" NEG ", "x") == 0 and reader("Pos", "x") == 1
    with pytest.raises(ValueError, match=r"unknown label 'neutre'; expected one of 'négatif', "
                                         r"'positif' or a label_map key \('neg', 'pos'\)"):
        reader("neutre", "x")
