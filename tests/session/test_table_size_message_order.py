"""A ``table:`` with a bad row is refused with the same message whatever its size, on the
general ``init`` path: before the joins by position are checked
(:meth:`~activetest.models.table.TableScorer.confirms_content`).

QA: a small table was read whole before the join checks (its bad row named), a large
one (above ``table.STREAM_BYTES``, read row by row) not: a pool numbered by its rows
was refused for its join by position instead, and a large Parquet table with content
checks had its bad value named only after another table's join was refused.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from activetest.formats.label_records import CHECK_COLUMN
from activetest.models import table
from activetest.session import stream_init
from activetest.session.workflow import Session

N = 50
SMALL, LARGE = 1 << 40, 0  # table.STREAM_BYTES: every table read whole / row by row


def _probs() -> np.ndarray:
    return np.random.default_rng(0).uniform(0.1, 0.9, N)


def _refusal(db: Path, size: int, monkeypatch: pytest.MonkeyPatch, **kw: object) -> str:
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)  # the general path
    monkeypatch.setattr(table, "STREAM_BYTES", size)
    with pytest.raises(ValueError) as exc:
        Session.create(db, task="sst2", progress=False, **kw)  # type: ignore[arg-type]
    return str(exc.value)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_pool_numbered_by_its_rows_names_the_tables_bad_row_at_any_size(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = tmp_path / "pool.csv"
    pool.write_text("sentence,label\n" + "".join(f"text {i},positive\n" for i in range(N)))
    p = _probs()
    t = tmp_path / f"t.{fmt}"
    if fmt == "csv":
        t.write_text("id,negative,positive\n" + "".join(
            f"{i},{'x' if i == 7 else math.log1p(-x)},{math.log(x)}\n" for i, x in enumerate(p)))
    else:
        t.write_text("".join(
            f'{{"id": {i}, "negative": {"true" if i == 7 else math.log1p(-x)}, '
            f'"positive": {math.log(x)}}}\n' for i, x in enumerate(p)))
    spec = f"table:{t}"
    got = {size: _refusal(tmp_path / f"{size}.db", size, monkeypatch, pool=pool,
                          surrogate=spec, target=spec) for size in (SMALL, LARGE)}
    assert got[SMALL] == got[LARGE], got
    line = 9 if fmt == "csv" else 8  # (after the CSV's header)
    assert got[SMALL].startswith(f"{t}: line {line}: column 'negative': expected a "
                                 f"number"), got


def test_a_large_parquet_table_with_content_checks_names_its_bad_value_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The surrogate (content checked, so its join is confirmed) has a NaN; the target's
    ids and the pool's look like positions (refused): the surrogate, given first, is
    named first at any size."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = tmp_path / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(f"{i},text {i},positive\n"
                                                    for i in range(N)))
    p = _probs()
    neg = np.log1p(-p)
    neg[9] = np.nan
    s = tmp_path / "s.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(N)], "negative": neg,
                             "positive": np.log(p), CHECK_COLUMN: ["0" * 16] * N}), s)
    t = tmp_path / "t.csv"
    t.write_text("id,negative,positive\n" + "".join(f"{i},{math.log1p(-x)},{math.log(x)}\n"
                                                    for i, x in enumerate(p)))
    got = {size: _refusal(tmp_path / f"{size}.db", size, monkeypatch, pool=pool,
                          surrogate=f"table:{s}", target=f"table:{t}",
                          pool_options={"id_column": "id"}) for size in (SMALL, LARGE)}
    assert got[SMALL] == got[LARGE], got
    assert got[SMALL] == (f"{s}: row 10: column 'negative': value nan is not finite "
                          f"(NaN/inf are not allowed)"), got


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("ids", ["own", "numbers"])
def test_a_large_tables_rows_and_ids_are_read_in_one_pass_before_it_is_scored(
        ids: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large CSV or Parquet table (read row by row) on the general path: its rows' check
    and its ids (for the join by position's check) are one pass, then scoring reads it
    (it was read a second time for its ids: a CSV table until 2026-12-07, a Parquet one
    until later that day); where the pool's ids are its own (an id that is no whole
    number) its ids are not needed at all. ``numbers``: the pool's and the table's ids
    whole numbers, but no run from 0 or 1 (a join by id)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from activetest.models import table_stream

    def name(i: int) -> str:
        return f"it{i}" if ids == "own" else str(10 * i + 7)

    pool = tmp_path / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(f"{name(i)},text {i},positive\n"
                                                    for i in range(N)))
    p = _probs()
    specs = []
    for k in ("s", "t"):
        t = tmp_path / f"{k}.{fmt}"
        if fmt == "csv":
            t.write_text("id,negative,positive\n" + "".join(
                f"{name(i)},{math.log1p(-x)},{math.log(x)}\n" for i, x in enumerate(p)))
        else:
            pq.write_table(pa.table({"id": [name(i) for i in range(N)],
                                     "negative": np.log1p(-p), "positive": np.log(p)}), t)
        specs.append(f"table:{t}")
    reads: list[str] = []
    real = table_stream._checked_blocks

    def counted(path: Path, *a: object) -> object:
        reads.append(Path(path).name)
        return real(path, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(table_stream, "_checked_blocks", counted)
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)  # the general path
    monkeypatch.setattr(table, "STREAM_BYTES", LARGE)
    Session.create(tmp_path / "s.db", task="sst2", progress=False, pool=pool,
                   surrogate=specs[0], target=specs[1], pool_options={"id_column": "id"})
    assert sorted(reads) == [f"s.{fmt}", f"s.{fmt}", f"t.{fmt}", f"t.{fmt}"], reads
