"""``init --history``: a response matrix joined by ids that are only row numbers ("joins
never guess"): a pool whose id column is 0..N-1 (pandas' index) and a matrix whose
columns are 0..N-1 is refused unless ``--ids-are-positions`` (its older name
``--history-ids-are-positions``) confirms it
(real CLI, real files, real SQLite; docs/history.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from session_support import make_pool_files, run_cli_process

from activetest.session.store import SessionError
from activetest.session.workflow import Session

N, H = 40, 30


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=200)


def _truth() -> tuple[np.ndarray, np.ndarray]:
    """Per-item difficulty and H models' right/wrong from a logistic model: items of the
    dataset's own order."""
    rng = np.random.default_rng(0)
    b = np.linspace(-3, 3, N)
    Y = rng.random((H, N)) < 1 / (1 + np.exp(-(b[None, :] + rng.normal(0, 0.5, (H, 1)))))
    return b, Y.astype(int)


def _pool(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "question": f"what is item {k}?",
                                        "answer": "a", "references": ["a"]}) + "\n"
                            for k, i in enumerate(ids)))
    return path


def _matrix(path: Path, cols: list[str], Y: np.ndarray) -> Path:
    path.write_text("model," + ",".join(cols) + "\n" + "".join(
        f"m{h}," + ",".join(map(str, Y[h])) + "\n" for h in range(len(Y))))
    return path


def _init(db: Path, pool: Path, hist: Path, *extra: object, code: int = 0) -> str:
    return cli("init", db, "--task", "answers", "--pool", pool, "--target", "pool",
               "--surrogate", "history", "--history", hist, "--history-exclude", "m0",
               "--seed", "1", "--no-progress", *extra, code=code)


def _p_correct(db: Path) -> np.ndarray:
    with Session.open(db) as s:
        return s.store.scores("history").logprobs[:, 0]


def test_row_numbers_on_both_sides_are_refused_naming_the_file_the_item_and_both_sides(
        tmp_path: Path) -> None:
    _, Y = _truth()
    pool = _pool(tmp_path / "pool.jsonl", [str(k) for k in range(N)])  # pandas' index
    hist = _matrix(tmp_path / "hist.csv", [str(k) for k in range(N)], Y)
    out = _init(tmp_path / "s.db", pool, hist, code=2)
    assert out.count("error:") == 1, out
    assert ("hist.csv: its item ids and the pool's look like row numbers (positions), not "
            "ids (the pool's: '0'..'39', 40 ids, every whole number from 0; its columns: "
            "'0'..'39', 40 columns, every whole number from 0): pool item '0' ('what is "
            "item 0?') would get the results of column '0'") in out, out
    assert "shuffled, filtered or is of another split" in out
    assert "--ids-are-positions confirms the join" in out
    assert not (tmp_path / "s.db").exists()
    # 1..N on both sides (a 1-based doc index), and a matrix of the first 1..2N over a pool
    # numbered 1..N: the same
    pool1 = _pool(tmp_path / "pool1.jsonl", [str(k + 1) for k in range(N)])
    wide = _matrix(tmp_path / "wide.csv", [str(k + 1) for k in range(2 * N)],
                   np.hstack([Y, Y]))
    out = _init(tmp_path / "s.db", pool1, wide, code=2)
    assert "every whole number from 1" in out and "'1'..'80', 80 columns" in out
    # the flag without --history is refused too
    out = cli("init", tmp_path / "s.db", "--task", "answers", "--pool", pool, "--target",
              "pool", "--surrogate", "uniform", "--no-progress",
              "--history-ids-are-positions", code=2)
    assert ("--ids-are-positions confirms a join by ids that look like positions, here of "
            "--history's response matrix (a graded session's answers are checked by their "
            "content): give --history") in out
    # --target lm-eval's history is runs joined by their documents: the flag does not apply
    out = cli("init", tmp_path / "s.db", "--task", "answers", "--pool", pool, "--target",
              "lm-eval", "--surrogate", "history", "--history", tmp_path, "--no-progress",
              "--history-ids-are-positions", code=2)
    assert "checked against the pool run's documents: leave it out" in out
    assert not (tmp_path / "s.db").exists()


def test_a_confirmed_join_by_row_numbers_is_made_said_and_named_in_the_report(
        tmp_path: Path) -> None:
    _, Y = _truth()
    pool = _pool(tmp_path / "pool.jsonl", [str(k) for k in range(N)])
    hist = _matrix(tmp_path / "hist.csv", [str(k) for k in range(N)], Y)
    db = tmp_path / "s.db"
    out = _init(db, pool, hist, "--ids-are-positions")
    assert (f"history: 29 model(s) from {hist}; 40 of 40 pool items have history") in out
    assert (f"history: {hist} joined by ids that look like row numbers (the pool's: "
            f"'0'..'39', 40 ids, every whole number from 0; its columns: '0'..'39', 40 "
            f"columns, every whole number from 0), as --ids-are-positions confirms: "
            f"nothing checked that pool item '0' is the item of its column '0'") in out, out
    with Session.open(db) as s:
        assert s.config["history"]["by_position"] == [hist.name]  # never the local path
        s.select(5)
        s.label_from_data()
        info = s.report_data(progress=False).info
    assert info["History"].endswith("; joined by position, not checked (hist.csv: ids that "
                                    "look like row numbers, confirmed with "
                                    "--ids-are-positions)"), info


def test_real_ids_are_unaffected(tmp_path: Path) -> None:
    """A dataset's own ids join as before, no note, nothing recorded: text ids, and whole
    numbers that are no run from 0 or 1 (the shared MMLU-Pro matrix's question ids)."""
    _, Y = _truth()
    for name, ids in (("text", [f"q{k}" for k in range(N)]),
                      ("numbers", [str(7504 + k) for k in range(N)])):
        pool = _pool(tmp_path / f"{name}.jsonl", ids)
        hist = _matrix(tmp_path / f"{name}.csv", ids, Y)
        db = tmp_path / f"{name}.db"
        out = _init(db, pool, hist)
        assert "40 of 40 pool items have history" in out and "row numbers" not in out, out
        with Session.open(db) as s:
            assert "by_position" not in s.config["history"]
    # the flag where nothing needs it: joined by id, said
    out = _init(tmp_path / "again.db", tmp_path / "text.jsonl", tmp_path / "text.csv",
                "--history-ids-are-positions")
    assert ("history: --ids-are-positions: no response matrix here is joined by "
            "ids that look like positions (nothing to confirm; the join is by id)") in out


def test_what_the_refusal_protects_from_a_matrix_of_a_shuffled_copy(tmp_path: Path) -> None:
    """The matrix was written from a shuffled copy of the dataset, its columns that copy's
    row numbers; the pool is the dataset in its own order, its ids its row numbers. Joined
    by the numbers (as it was before this rule, silently), every item gets another item's
    history: the design's difficulty no longer follows the items' (correlation near 0).
    Refused without the flag; with the dataset's own ids on both sides the join is right
    whatever the column order."""
    b, Y = _truth()
    perm = np.random.default_rng(7).permutation(N)  # column k of the copy is item perm[k]
    rows = [str(k) for k in range(N)]
    pool = _pool(tmp_path / "pool.jsonl", rows)
    shuffled = _matrix(tmp_path / "shuffled.csv", rows, Y[:, perm])
    out = _init(tmp_path / "refused.db", pool, shuffled, code=2)
    assert "look like row numbers" in out and "shuffled.csv" in out
    assert not (tmp_path / "refused.db").exists()
    # what a wrong confirmation (the old silent join) gives
    _init(tmp_path / "wrong.db", pool, shuffled, "--history-ids-are-positions")
    wrong = np.corrcoef(_p_correct(tmp_path / "wrong.db"), b)[0, 1]
    # the dataset's own ids: the same shuffled matrix, its columns named by item
    ids = [f"item-{k}" for k in range(N)]
    pool_ids = _pool(tmp_path / "pool_ids.jsonl", ids)
    by_id = _matrix(tmp_path / "by_id.csv", [ids[j] for j in perm], Y[:, perm])
    _init(tmp_path / "right.db", pool_ids, by_id)
    right = np.corrcoef(_p_correct(tmp_path / "right.db"), b)[0, 1]
    assert right > 0.9 and abs(wrong) < 0.4, (right, wrong)


def test_a_classification_pool_numbered_0_to_n_is_refused_and_confirmed_alike(
        tmp_path: Path) -> None:
    """Classification sessions take the same rule: a pool whose id column holds 0..N-1
    (its tables keyed alike) and a matrix of columns 0..N-1."""
    import re

    pf = make_pool_files(tmp_path / "d", n=N)
    for f in (pf.pool, pf.surrogate, pf.target):  # ids r0.. -> 0..
        f.write_text(re.sub(r"^r(\d+),", r"\1,", f.read_text(), flags=re.M))
    rng = np.random.default_rng(0)
    hist = _matrix(tmp_path / "m.csv", [str(k) for k in range(N)],
                   (rng.random((6, N)) < 0.5).astype(int))
    base = ("init", tmp_path / "c.db", "--task", "demo", "--pool", pf.pool, "--id-column",
            "id", "--surrogate", f"table:{pf.surrogate}", "--target", f"table:{pf.target}",
            "--metric", "error_rate", "--history", hist, "--history-exclude", "m0",
            "--seed", "2", "--no-progress")
    out = cli(*base, code=2)
    assert "m.csv: its item ids and the pool's look like row numbers (positions)" in out, out
    assert not (tmp_path / "c.db").exists()
    out = cli(*base, "--history-ids-are-positions")
    assert f"history: {hist} joined by ids that look like row numbers" in out, out
    with Session.open(tmp_path / "c.db") as s:
        assert s.config["history"]["by_position"] == [hist.name]  # never the local path


def test_a_graded_pool_of_row_numbers_is_confirmed_by_the_same_flag(tmp_path: Path) -> None:
    """A pool read without an id column (its ids its rows' numbers) joined no matrix
    (refused before this rule, tests/session/test_history_session.py); the flag confirms
    that join too."""
    _, Y = _truth()
    pool = _pool(tmp_path / "pool.jsonl", [f"q{k}" for k in range(N)])
    hist = _matrix(tmp_path / "m.csv", [str(k) for k in range(N)], Y)
    kw = dict(pool=pool, task="answers", target="pool", surrogate="history", history=[hist],
              history_exclude=["m0"], progress=False, pool_options={"id_column": None})
    with pytest.raises(SessionError, match=r"ids are its rows' numbers.*"
                                           r"--ids-are-positions confirms the join"):
        Session.create(tmp_path / "x.db", **kw)  # type: ignore[arg-type]
    with Session.create(tmp_path / "y.db", ids_are_positions=True,
                        **kw) as s:  # type: ignore[arg-type]
        h = s.config["history"]
        assert h["by_position"] == [hist.name] and h["n_covered"] == N
        assert any("which are its rows' numbers, as --ids-are-positions confirms"
                   in m for m in h["messages"]), h["messages"]


def test_a_pool_without_id_column_names_the_columns_that_hold_the_matrix_ids(
        tmp_path: Path) -> None:
    """A classification pool read without an id column (its ids its rows' numbers) and a
    response matrix: the refusal said "--id-column NAME" whatever the pool (QA); it names
    the pool's column that holds the matrix's ids, or says that none does, naming the
    pool's columns; with that column the join is by id."""
    import re

    pf = make_pool_files(tmp_path / "d", n=N)
    pool = pf.pool.with_name("pool_qid.csv")  # its ids r0.. in a column no task names
    pool.write_text(re.sub(r"^id,", "qid,", pf.pool.read_text()))
    rng = np.random.default_rng(0)
    Y = (rng.random((6, N)) < 0.5).astype(int)
    base = ("--task", "demo", "--pool", pool, "--surrogate", f"table:{pf.surrogate}",
            "--target", f"table:{pf.target}", "--metric", "error_rate", "--history-exclude",
            "m0", "--seed", "2", "--no-progress")
    hist = _matrix(tmp_path / "m.csv", list(pf.ids), Y)
    out = cli("init", tmp_path / "a.db", *base, "--history", hist, code=2)
    assert out.count("error:") == 1, out
    assert ("the pool's column 'qid' holds the ids of 40 of the matrix's 40 columns: pass "
            "--id-column qid") in out, out
    other = _matrix(tmp_path / "o.csv", [f"x{k}" for k in range(N)], Y)
    out = cli("init", tmp_path / "b.db", *base, "--history", other, code=2)
    assert ("no column of the pool ('qid', 'text', 'label') holds the matrix's column ids: "
            "give the pool a column of the ids the matrix uses and pass --id-column NAME") \
        in out, out
    assert not (tmp_path / "a.db").exists() and not (tmp_path / "b.db").exists()
    out = cli("init", tmp_path / "c.db", *base, "--id-column", "qid", "--history", hist)
    with Session.open(tmp_path / "c.db") as s:
        assert s.config["history"]["n_covered"] == N


def test_a_suggested_id_column_of_row_numbers_is_not_suggested(tmp_path: Path) -> None:
    """QA: a pool without an id column whose column 'qid' holds 0..N-1, and a matrix of
    columns 0..N-1: the refusal said "pass --id-column qid", and the run with it was then
    refused (both sides look like row numbers). The column is checked when suggested: the
    refusal says at once that it would meet the same rule, naming both sides."""
    import re

    pf = make_pool_files(tmp_path / "d", n=N)
    pool = pf.pool.with_name("pool_qid.csv")
    lines = re.sub(r"^id,", "qid,", pf.pool.read_text()).splitlines(keepends=True)
    pool.write_text(lines[0] + "".join(re.sub(r"^r(\d+),", r"\1,", line)
                                       for line in lines[1:]))
    rng = np.random.default_rng(0)
    Y = (rng.random((6, N)) < 0.5).astype(int)
    base = ("--task", "demo", "--pool", pool, "--surrogate", f"table:{pf.surrogate}",
            "--target", f"table:{pf.target}", "--metric", "error_rate", "--history-exclude",
            "m0", "--seed", "2", "--no-progress")
    hist = _matrix(tmp_path / "m.csv", [str(k) for k in range(N)], Y)
    out = " ".join(cli("init", tmp_path / "a.db", *base, "--history", hist, code=2).split())
    assert out.count("error:") == 1, out
    assert "pass --id-column qid" not in out, out
    assert ("the pool's column 'qid' holds the matrix's column ids, but its values and the "
            "matrix's columns look like row numbers too (the pool's: '0'..'39', 40 ids, "
            "every whole number from 0; its columns: '0'..'39', 40 columns, every whole "
            "number from 0), so --id-column qid alone would join them by the numbers as "
            "well") in out, out
    # what the advice says of the column holds: with it, the same rule refuses
    out = " ".join(cli("init", tmp_path / "b.db", *base, "--id-column", "qid", "--history",
                       hist, code=2).split())
    assert "look like row numbers (positions)" in out, out
    assert not (tmp_path / "a.db").exists() and not (tmp_path / "b.db").exists()


def test_a_graded_pool_without_id_column_names_the_column_that_holds_the_matrix_ids(
        tmp_path: Path) -> None:
    """QA: a graded pool read without an id column (its ids its rows' numbers) and a
    response matrix: the refusal gave the generic "--id-column NAME" advice, where a
    classification pool's names the column that holds the matrix's ids. The same advice
    now: the column, or that none holds them; with that column the join is by id."""
    _, Y = _truth()
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"qid": f"q{k}", "question": f"what is item {k}?",
                                        "answer": "a", "references": ["a"]}) + "\n"
                            for k in range(N)))
    hist = _matrix(tmp_path / "m.csv", [f"q{k}" for k in range(N)], Y)
    kw = dict(pool=pool, task="answers", target="pool", surrogate="history", history=[hist],
              history_exclude=["m0"], progress=False)
    with pytest.raises(SessionError, match=r"the pool's column 'qid' holds the ids of 40 of "
                                           r"the matrix's 40 columns: pass --id-column qid"):
        Session.create(tmp_path / "x.db", pool_options={"id_column": None},
                       **kw)  # type: ignore[arg-type]
    other = _matrix(tmp_path / "o.csv", [f"x{k}" for k in range(N)], Y)
    with pytest.raises(SessionError, match=r"no column of the pool \('qid', 'question', "
                                           r"'answer', 'references'\) holds the matrix's "
                                           r"column ids"):
        Session.create(tmp_path / "y.db", pool_options={"id_column": None},
                       **{**kw, "history": [other]})  # type: ignore[arg-type]
    with Session.create(tmp_path / "z.db", pool_options={"id_column": "qid"},
                        **kw) as s:  # type: ignore[arg-type]
        assert s.config["history"]["n_covered"] == N
