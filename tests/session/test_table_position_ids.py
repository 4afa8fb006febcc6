"""``init`` with ``table:`` predictions joined by ids that are only row numbers ("joins
never guess"): a pool whose id column is 0..N-1 (pandas' index) and prediction tables
keyed 0..N-1 are refused unless ``--ids-are-positions`` confirms the join, in the
streamed ``init`` (a CSV pool) and the general one (a JSON pool) alike (real CLI, real
files, real SQLite; docs/history.md "Ids that are only positions")."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, fake_logprobs, make_pool_files, run_cli_process

from activetest.session.store import SessionError
from activetest.session.workflow import Session

N = 60


def cli(*args: object, code: int = 0) -> str:
    return run_cli_process(*args, code=code, columns=200)


def _numbered(root: Path) -> PoolFiles:
    """The session tests' pool and tables with their ids "r0".."r59" made 0..59 (pandas'
    index written as the id column)."""
    pf = make_pool_files(root, n=N)
    for f in (pf.pool, pf.surrogate, pf.target, pf.target2):
        f.write_text(re.sub(r"^r(\d+),", r"\1,", f.read_text(), flags=re.M))
    return pf


def _as_json(pool: Path) -> Path:
    """The CSV pool as a JSON array (a pool the streamed ``init`` does not take)."""
    with pool.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = pool.with_suffix(".json")
    out.write_text(json.dumps(rows), encoding="utf-8")
    return out


def _init(db: Path, pool: Path, sur: Path, tgt: Path, *extra: object, code: int = 0) -> str:
    return cli("init", db, "--task", "sst2", "--pool", pool, "--id-column", "id",
               "--surrogate", f"table:{sur}", "--target", f"table:{tgt}", "--seed", "1",
               "--no-progress", *extra, code=code)


@pytest.mark.parametrize("path", ["streamed", "general"])
def test_tables_and_pool_both_numbered_by_rows_are_refused_naming_the_file_item_and_sides(
        tmp_path: Path, path: str) -> None:
    pf = _numbered(tmp_path / "d")
    pool = pf.pool if path == "streamed" else _as_json(pf.pool)
    db = tmp_path / "s.db"
    out = _init(db, pool, pf.surrogate, pf.target, code=2)
    assert out.count("error:") == 1, out
    text = pf.pool.read_text().splitlines()[1].split(",", 1)[1][:57]
    assert (f"surrogate.csv: its item ids and the pool's look like row numbers (positions), "
            f"not ids (the pool's: '0'..'59', 60 ids, every whole number from 0; the "
            f"table's: '0'..'59', 60 ids, every whole number from 0): pool item '0' "
            f"('{text}...') would get the predictions of the table's row '0' by the number "
            f"alone") in out, out
    assert "shuffled, filtered or is of another split" in out
    assert "--ids-are-positions confirms the join" in out
    assert not db.exists()
    # only the target numbered so (the surrogate keyed by the dataset's ids, "r0".."r59",
    # in a pool numbered 1..60 whose target table is 1..60): the same for the target
    ids = [str(k + 1) for k in range(N)]
    one = tmp_path / "one"
    one.mkdir()
    for f in (pf.pool, pf.target):
        (one / f.name).write_text(re.sub(r"^(\d+),", lambda m: f"{int(m[1]) + 1},",
                                         f.read_text(), flags=re.M))
    pool1 = one / "pool.csv" if path == "streamed" else _as_json(one / "pool.csv")
    sur = tmp_path / "sur.csv"
    sur.write_text("id,negative,positive\n" + "".join(
        f"{i},-0.69314718,-0.69314718\n" for i in ids))
    out = _init(db, pool1, sur, one / "target.csv", code=2)
    assert "sur.csv: its item ids" in out and "every whole number from 1" in out, out
    # a compared table (general path: --compare) too
    out = cli("init", db, "--task", "sst2", "--pool", _as_json(pf.pool), "--id-column",
              "id", "--surrogate", "table:" + str(pf.surrogate), "--target",
              "table:" + str(pf.target), "--compare", "table:" + str(pf.target2),
              "--ids-are-positions", "--no-progress")
    assert "target2.csv: joined by ids that look like row numbers" in out, out


@pytest.mark.parametrize("path", ["streamed", "general"])
def test_a_confirmed_join_is_made_said_and_recorded_and_the_session_works_on(
        tmp_path: Path, path: str) -> None:
    pf = _numbered(tmp_path / "d")
    pool = pf.pool if path == "streamed" else _as_json(pf.pool)
    db = tmp_path / "s.db"
    out = _init(db, pool, pf.surrogate, pf.target, "--ids-are-positions")
    for f in (pf.surrogate, pf.target):
        assert (f"predictions: {f}: joined by ids that look like row numbers (the pool's: "
                f"'0'..'59', 60 ids, every whole number from 0; the table's: '0'..'59', 60 "
                f"ids, every whole number from 0), as --ids-are-positions confirms: nothing "
                f"checked that its row '0' was written for pool item '0'") in out, out
    with Session.open(db) as s:
        for role in ("surrogate", "target"):
            assert "joined by ids that look like row numbers" in \
                s.provenance(role)["joined_by_position"]
    # the stored session is read as made: select, label, estimate and report, no flag
    cli("select", db, "--n", "10")
    with Session.open(db) as s:
        s.label_from_data()
    out = cli("estimate", db)
    assert "LURE" in out, out
    cli("report", db, "--out", tmp_path / "r.html")
    # the older name of the flag is the same option
    out = _init(tmp_path / "t.db", pool, pf.surrogate, pf.target,
                "--history-ids-are-positions")
    assert "as --ids-are-positions confirms" in out


def test_real_ids_are_unaffected(tmp_path: Path) -> None:
    """The dataset's own ids (text, or whole numbers that are no run from 0 or 1) join
    as before: no refusal, no note, nothing recorded; the flag where nothing needs it
    is said."""
    pf = make_pool_files(tmp_path / "d", n=N)  # ids "r0".."r59"
    num = tmp_path / "n"
    num.mkdir()
    for f in (pf.pool, pf.surrogate, pf.target):  # MMLU-Pro-like question ids 7504..
        (num / f.name).write_text(re.sub(r"^r(\d+),", lambda m: f"{7504 + int(m[1])},",
                                         f.read_text(), flags=re.M))
    for name, root in (("text", pf.dir), ("numbers", num)):
        for pool in (root / "pool.csv", _as_json(root / "pool.csv")):
            db = tmp_path / f"{name}-{pool.suffix[1:]}.db"
            out = _init(db, pool, root / "surrogate.csv", root / "target.csv")
            assert "row numbers" not in out and "created session" in out, out
            with Session.open(db) as s:
                assert "joined_by_position" not in s.provenance("target")
    out = _init(tmp_path / "flag.db", pf.pool, pf.surrogate, pf.target,
                "--ids-are-positions")
    assert ("note: --ids-are-positions: no file here is joined by ids that look like "
            "positions (nothing to confirm; the joins are by id)") in out, out


def test_what_the_refusal_protects_from_a_table_of_a_shuffled_copy(tmp_path: Path) -> None:
    """The target's table was written from a shuffled copy of the pool, keyed by that
    copy's row numbers; the pool is in its own order, keyed by its row numbers. Joined by
    the numbers (as before this rule, silently), every item gets another item's
    predictions: with every item labelled the estimated error rate is that of the wrong
    pairing, far from the target's true error rate (which the dataset's own ids give)."""
    pf = make_pool_files(tmp_path / "d", n=N)
    rng = np.random.default_rng(3)
    T = fake_logprobs(pf.labels, 0.9, 3.0, rng)  # the target: right on ~90% of items
    truth = float(np.mean(T.argmax(axis=1) != pf.labels))
    perm = rng.permutation(N)  # row k of the copy is pool item perm[k]

    def table(path: Path, ids: list[str], lp: np.ndarray) -> Path:
        path.write_text("id,negative,positive\n" + "".join(
            f"{i},{a!r},{b!r}\n" for i, (a, b) in zip(ids, lp.tolist(), strict=True)))
        return path

    rows = [str(k) for k in range(N)]
    num = tmp_path / "n"
    num.mkdir()
    pool = num / "pool.csv"
    pool.write_text(re.sub(r"^r(\d+),", r"\1,", pf.pool.read_text(), flags=re.M))
    sur = table(num / "surrogate.csv", rows, np.log(np.full((N, 2), 0.5)))
    shuffled = table(num / "shuffled.csv", rows, T[perm])
    out = _init(tmp_path / "refused.db", pool, shuffled, shuffled, code=2)
    assert "shuffled.csv: its item ids and the pool's look like row numbers" in out, out
    assert not (tmp_path / "refused.db").exists()

    def census(db: Path) -> float:
        with Session.open(db) as s:
            s.select(N)
            s.label_from_data()
            return float(s.estimate(record=False, progress=False)
                         .metrics["error_rate"].active.estimate)

    # what a wrong confirmation (the old silent join) gives
    _init(tmp_path / "wrong.db", pool, sur, shuffled, "--metric", "error_rate",
          "--ids-are-positions")
    wrong = census(tmp_path / "wrong.db")
    # the dataset's own ids: the same shuffled table, its rows named by item
    by_id = table(tmp_path / "by_id.csv", [pf.ids[j] for j in perm], T[perm])
    sur_ids = table(tmp_path / "sur_ids.csv", pf.ids, np.log(np.full((N, 2), 0.5)))
    _init(tmp_path / "right.db", pf.pool, sur_ids, by_id, "--metric", "error_rate")
    right = census(tmp_path / "right.db")
    assert right == pytest.approx(truth) and abs(wrong - truth) > 0.2, (truth, right, wrong)


def test_the_python_api_takes_the_same_rule_and_keyword(tmp_path: Path) -> None:
    pf = _numbered(tmp_path / "d")
    kw = dict(pool=pf.pool, task="sst2", surrogate=f"table:{pf.surrogate}",
              target=f"table:{pf.target}", progress=False, pool_options={"id_column": "id"})
    with pytest.raises(SessionError, match=r"surrogate.csv: its item ids and the pool's look "
                                           r"like row numbers"):
        Session.create(tmp_path / "x.db", **kw)  # type: ignore[arg-type]
    assert not (tmp_path / "x.db").exists()  # the streamed init leaves nothing behind
    with Session.create(tmp_path / "y.db", ids_are_positions=True,
                        **kw) as s:  # type: ignore[arg-type]
        assert "joined_by_position" in s.provenance("target")


def test_estimate_compare_takes_the_same_rule_where_it_joins_a_table(tmp_path: Path) -> None:
    """``estimate --compare table:FILE`` joins the table to the stored pool then: a table
    keyed 0..N-1 on a pool numbered so is refused unless ``--ids-are-positions``
    confirms it; once joined (stored), later estimates do not ask again."""
    pf = _numbered(tmp_path / "d")
    db = tmp_path / "s.db"
    _init(db, pf.pool, pf.surrogate, pf.target, "--ids-are-positions")
    cli("select", db, "--n", "10")
    with Session.open(db) as s:
        s.label_from_data()
    out = cli("estimate", db, "--compare", f"table:{pf.target2}", code=2)
    assert out.count("error:") == 1 and ("target2.csv: its item ids and the pool's look "
                                         "like row numbers") in out, out
    out = cli("estimate", db, "--compare", f"table:{pf.target2}", "--ids-are-positions")
    assert "compare (log_loss)" in out, out
    out = cli("estimate", db, "--compare", f"table:{pf.target2}")
    assert "compare (log_loss)" in out, out


@pytest.mark.parametrize("path", ["streamed", "general"])
def test_a_pool_without_id_column_whose_id_column_is_row_numbers_says_both_at_once(
        tmp_path: Path, path: str) -> None:
    """``init`` without ``--id-column`` on a pool whose ``id`` column is 0..N-1 and tables
    keyed so: the refusal said "pass --id-column id", after which the position refusal
    met the user (two steps); it now says at once that the column's ids look like row
    numbers too, and how to confirm, which then makes the session. A pool whose ``id``
    column holds the dataset's own ids is told to pass it, as before."""
    pf = _numbered(tmp_path / "d")
    pool = pf.pool if path == "streamed" else _as_json(pf.pool)
    db = tmp_path / "s.db"
    args = ("init", db, "--task", "sst2", "--pool", pool, "--surrogate",
            f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--no-progress")
    out = cli(*args, code=2)
    assert out.count("error:") == 1, out
    assert ("the pool has a column 'id', but its values and the table's ids look like row "
            "numbers too (the pool's: '0'..'59', 60 ids, every whole number from 0; the "
            "table's: '0'..'59', 60 ids, every whole number from 0), so --id-column id "
            "alone would join them by the numbers as well") in out, out
    assert out.endswith("if the table's ids are the pool's 'id' values (written from "
                        "this very pool, its ids travelling with its rows), --id-column id "
                        "--ids-are-positions confirms the join"), out
    out = cli(*args, "--id-column", "id", "--ids-are-positions")
    assert "created session" in out, out
    own = make_pool_files(tmp_path / "own", n=N)  # ids "r0".."r59" in the id column
    out = cli("init", tmp_path / "t.db", "--task", "sst2", "--pool", own.pool,
              "--surrogate", f"table:{own.surrogate}", "--target", f"table:{own.target}",
              "--no-progress", code=2)
    assert "the pool has a column 'id': pass --id-column id" in out, out
