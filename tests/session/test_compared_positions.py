"""``estimate --compare table:FILE`` checks a join by ids that look like positions without
holding either side's ids (``activetest.session.compared_positions``; QA at 1e7 items: the
pool's ids and the table's, read whole for the check, were the peak of ``estimate``): the
same outcome and message as the check of the ids held whole, in memory that does not grow
with the pool."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from session_support import make_pool_files, run_cli

from activetest.models import table
from activetest.session.compared_positions import compared_position_join
from activetest.session.store import SessionError
from activetest.session.table_positions import check_table_ids
from activetest.session.workflow import Session


def _outcome(f: Callable[[], str | None]) -> str | None:
    try:
        return f()
    except SessionError as exc:
        return f"refused: {exc}"


CASES = {
    "both rows from 0": ([str(i) for i in range(10)], [str(i) for i in range(10)]),
    "pool from 1, table a few": ([str(i) for i in range(1, 11)], ["a", "5", "3", "b"]),
    "own numbers": ([str(i) for i in range(7504, 7514)], [str(i) for i in range(7504, 7514)]),
    "table padded": ([str(i) for i in range(10)], ["7", "001", "2", "x"]),
    "table one number twice": ([str(i) for i in range(10)], ["7", "007", "1"]),
    "pool padded, table plain": ([f"{i:03}" for i in range(10)], [str(i) for i in range(10)]),
    "pool padded, table too": ([f"{i:03}" for i in range(10)], ["004", "001"]),
    "pool of floats": (["5.0", "6.0", "7.0"], ["0", "1", "2"]),
    "pool floats from 0": (["2.0", "0.0", "1.0"], ["1.0", "9"]),
    "pool not numbers": (["0", "1", "x"], ["0", "1"]),
    "pool one number twice": (["1", "01", "2"], ["1", "2"]),
    "nothing shared": ([str(i) for i in range(10)], ["10", "11"]),
    "table no numbers": ([str(i) for i in range(10)], ["a", "b"]),
}


def _blocks(ids: Sequence[str], size: int) -> Callable[[], Any]:
    return lambda: (list(ids[k:k + size]) for k in range(0, len(ids), size))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("confirmed", [False, True])
def test_the_outcome_is_that_of_the_ids_held_whole(case: str, confirmed: bool) -> None:
    pool, tab = CASES[case]
    fields = {i: {"text": f"item {i}"} for i in pool}
    want = _outcome(lambda: check_table_ids("t.csv", tab, pool, fields, confirmed=confirmed))

    def rows_of(ids: list[str]) -> tuple[int, int | None]:
        rows = [pool.index(i) for i in set(ids) if i in pool]
        return len(rows), min(rows, default=None)

    for size in (1, 2, 100):
        got = _outcome(lambda: compared_position_join(
            "t.csv", _blocks(pool, size), _blocks(tab, size), rows_of,  # noqa: B023
            lambda r: pool[r], fields, confirmed=confirmed))
        assert got == want, (case, size)


def test_the_check_holds_no_list_of_either_sides_ids(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool of 60,000 items numbered 0..N-1 and a compared table keyed so: the check
    (refused, unconfirmed, with the message of the table read whole) holds a few MB at
    most, where the ids held whole were 19-20 MB (at 1e7 items, GBs)."""
    n = 60_000
    pf = make_pool_files(tmp_path / "d", n=n)
    for f in (pf.pool, pf.surrogate, pf.target, pf.target2):
        f.write_text(re.sub(r"^r(\d+),", r"\1,", f.read_text(), flags=re.M))
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", pf.pool, "--task", "sst2", "--id-column", "id",
            "--surrogate", f"table:{pf.surrogate}", "--target", f"table:{pf.target}",
            "--seed", "1", "--no-progress", "--ids-are-positions")
    run_cli("label", db, "--n", "10", "--from-data")
    peaks: list[int] = []
    check = Session._check_compared_join

    def measured(self: Session, spec: str) -> None:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            check(self, spec)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1] - base)

    monkeypatch.setattr(Session, "_check_compared_join", measured)
    messages = []
    for size in (0, 1 << 40):  # the table read row by row, then whole
        monkeypatch.setattr(table, "STREAM_BYTES", size)
        with Session.open(db) as s:
            tracemalloc.start()
            try:
                for _ in range(2):  # (the second: the modules imported)
                    with pytest.raises(SessionError, match="look like row numbers") as exc:
                        s.estimate(compare=f"table:{pf.target2}", record=False,
                                   progress=False)
            finally:
                tracemalloc.stop()
        messages.append(str(exc.value))
    assert messages[0] == messages[1]
    assert "'0'..'59999', 60000 ids, every whole number from 0" in messages[0]
    assert peaks[1] < 8e6, peaks


def test_a_large_text_tables_rows_and_ids_are_read_in_one_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compared CSV table read row by row, the pool's ids and its whole numbers (no run:
    a join by id): its rows' check and its ids for the join's check are one pass, then
    the labelled items' rows are read (it was read a second time for its ids,
    2026-12-07)."""
    from activetest.models import table_stream

    pf = make_pool_files(tmp_path / "d", n=300)
    for f in (pf.pool, pf.surrogate, pf.target, pf.target2):
        f.write_text(re.sub(r"^r(\d+),", lambda m: f"{10 * int(m.group(1)) + 7},",
                            f.read_text(), flags=re.M))
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", pf.pool, "--task", "sst2", "--id-column", "id",
            "--surrogate", f"table:{pf.surrogate}", "--target", f"table:{pf.target}",
            "--seed", "1", "--no-progress")
    run_cli("label", db, "--n", "10", "--from-data")
    reads: list[str] = []
    real = table_stream._checked_blocks

    def counted(path: Path, *a: Any) -> Any:
        reads.append(Path(path).name)
        return real(path, *a)

    monkeypatch.setattr(table_stream, "_checked_blocks", counted)
    monkeypatch.setattr(table, "STREAM_BYTES", 0)
    with Session.open(db) as s:
        s.estimate(compare=f"table:{pf.target2}", record=False, progress=False)
    assert reads == [pf.target2.name] * 2, reads
