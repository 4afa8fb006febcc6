"""The streamed ``init`` names the problem the general path names, wherever the problems
are (docs/pool-scale.md, "`init` in chunks").

The general path reads the whole pool first, then each table in the order given, every
row of it (its id, an earlier row's id, its values) before it normalises the rows. The
stream reads them block by block, side by side: it named a row that does not normalise
in the first block before a later row's bad value or repeated id (QA: a 30,000-row CSV
with bad rows at 5 and 25,002), a later table's row before an earlier table's, and a
table's row before a later pool record. Each case is made in real files and the
streamed refusal compared with the general path's on the same files; the streamed run
never enters the general path.

tests/session/test_stream_pool_records.py looks like this file (the same comparison,
through session_support.general_and_streamed_refusals) but checks another thing: there
one bad pool record in each pool format (CSV, TSV, JSONL, Parquet, gzipped), the pool's
line or row named; here several problems at once, in tables of each table format and the
pool, and which of them is named first. Neither file's cases are the other's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from session_support import general_and_streamed_refusals

from activetest.session import stream_base


def _files(folder: Path, n: int, fmt: str, spoil: list[tuple[str, str, int]],
           order: np.ndarray | None = None, probs: bool = False) -> tuple[Path, Path, Path]:
    """An sst2 pool of ``n`` items (CSV) and two tables of log-probs (``probs``:
    probabilities) in ``fmt``, each ``(what, file, row)`` of ``spoil`` written in:
    ``nonorm`` (a log-prob row that does not normalise), ``nan`` (a value that is not
    finite), ``dup`` (item 3's id again), ``dupnear`` (the id of the row 10
    before), ``text`` (a value ``x``), ``emptyid`` (the pool's record with an empty
    id); in a table of probabilities ``range`` (a value above 1), ``sum`` (a row summing
    to 0.8), ``zero`` (a probability of 0). ``order``: the tables' rows in this order
    (joined by id)."""
    rng = np.random.default_rng(n)
    z = rng.normal(size=(2, n, 2))
    lp = z - np.logaddexp(z[..., :1], z[..., 1:])
    if probs:
        lp = np.exp(lp)
    pool_ids = [f"it{i}" for i in range(n)]
    rows = {name: [[f"it{i}", float(lp[k, i, 0]), float(lp[k, i, 1])] for i in range(n)]
            for k, name in enumerate(("surrogate", "target"))}
    if order is not None:
        rows = {name: [r[i] for i in order] for name, r in rows.items()}
    for what, name, i in spoil:
        if what == "emptyid":
            pool_ids[i] = " "
        elif what == "nonorm":
            rows[name][i][1] = 0.5
        elif what == "nan":
            rows[name][i][1] = float("nan")
        elif what == "dup":
            rows[name][i][0] = rows[name][3][0]
        elif what == "dupnear":
            rows[name][i][0] = rows[name][i - 10][0]
        elif what == "text":
            rows[name][i][1] = "x"  # type: ignore[call-overload]
        elif what in ("range", "sum", "zero"):
            rows[name][i][1:] = {"range": [1.5, -0.5], "sum": [0.3, 0.5],
                                 "zero": [0.0, 1.0]}[what]
    pool = folder / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(
        f"{pool_ids[i]},text {i},{('negative', 'positive')[i % 2]}\n" for i in range(n)))
    out = [pool]
    for name, rs in rows.items():
        path = folder / f"{name}.{fmt}"
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            neg = [r[1] for r in rs]  # (with a ``text`` value: a column of text)
            if any(isinstance(v, str) for v in neg):
                neg = [v if isinstance(v, str) else repr(v) for v in neg]
            pq.write_table(pa.table({"id": [r[0] for r in rs], "negative": neg,
                                     "positive": [r[2] for r in rs]}), path)
        elif fmt == "jsonl":
            path.write_text("".join(json.dumps(dict(zip(("id", "negative", "positive"), r,
                                                        strict=True))) + "\n" for r in rs))
        else:
            path.write_text("id,negative,positive\n" + "".join(
                f"{r[0]},{r[1]!r},{r[2]!r}\n" for r in rs))
        out.append(path)
    return out[0], out[1], out[2]


N = 300  # blocks of 64: row 250 is in the fourth block, rows 3 and 5 in the first

# (the spoiled rows, the file and the words of the message named; where the tables'
# rows are shuffled (by id) only the table's own problems)
_CASES = [
    ([("nonorm", "surrogate", 5), ("nan", "surrogate", 250)], "surrogate", "line 252"),
    ([("nonorm", "surrogate", 5), ("dup", "surrogate", 250)], "surrogate", "duplicate id"),
    ([("nan", "target", 5), ("nan", "surrogate", 250)], "surrogate", "line 252"),
    ([("nonorm", "target", 5), ("nan", "surrogate", 250)], "surrogate", "line 252"),
    ([("nonorm", "target", 5), ("nonorm", "surrogate", 250)], "surrogate", "normalise"),
    ([("nan", "surrogate", 5), ("emptyid", "", 250)], "pool", "empty id"),
    ([("nonorm", "surrogate", 5), ("dup", "target", 4), ("nonorm", "target", 200)],
     "surrogate", "line 7"),
    ([("nonorm", "surrogate", 5)], "surrogate", "line 7"),
]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("spoil,named,words", _CASES)
def test_the_stream_names_what_the_general_path_names(
        spoil: list[tuple[str, str, int]], named: str, words: str, fmt: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Problems in several blocks, tables and the pool: the stream's refusal is the
    general path's, word for word (the file and the row or line named)."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, N, fmt, spoil)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(str(tmp_path / named)), streamed
    if fmt != "csv" and words.startswith("line "):  # no header line: a JSONL file's row
        # k (from 1) is its line k, a Parquet file's is named "row k"
        words = f"{'row' if fmt == 'parquet' else 'line'} {int(words[5:]) - 1}:"
    assert words in streamed


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("second", [("nan", "surrogate", 250), ("dup", "surrogate", 250)])
def test_a_table_joined_by_id_names_a_later_rows_problem_first(
        second: tuple[str, str, int], fmt: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table in another order than the pool's (joined by id, a second pass): a row
    that does not normalise in its first block and a later row's bad value or repeated
    id: the later row is named, as the general path names it."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    order = np.random.default_rng(5).permutation(N)
    files = _files(tmp_path, N, fmt, [("nonorm", "surrogate", 5), second], order=order)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert "normalise" not in streamed and str(files[1]) in streamed


def test_the_reported_case_at_full_block_size(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's files: 30,000 rows (two blocks of 16,384), a row that does not
    normalise at row 5 and a bad value at row 25,002 of the CSV surrogate: the bad value
    is named (its line 25,004), by the stream and the general path alike."""
    files = _files(tmp_path, 30_000, "csv", [("nonorm", "surrogate", 5),
                                             ("nan", "surrogate", 25_002)])
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(f"{files[1]}: line 25004: column 'negative': value 'nan'")


# rows of a table of probabilities that the rule refuses (its checks in turn: values in
# [0, 1], then sums, then zeros), the words of the row named
_PROBS_CASES = [
    ([("sum", "surrogate", 5), ("range", "surrogate", 250)], "must lie in [0, 1]"),
    ([("zero", "surrogate", 5), ("sum", "surrogate", 250)], "sum to 0.8"),
    ([("zero", "surrogate", 5), ("range", "surrogate", 100), ("sum", "surrogate", 250)],
     "must lie in [0, 1]"),
    ([("range", "surrogate", 5), ("sum", "surrogate", 250)], "must lie in [0, 1]"),
    ([("sum", "surrogate", 5), ("sum", "surrogate", 250), ("nan", "surrogate", 290)],
     "not finite"),
]


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("spoil,words", _PROBS_CASES)
def test_a_table_of_probabilities_names_the_row_of_the_rules_first_check(
        spoil: list[tuple[str, str, int]], words: str, fmt: str, shuffled: bool,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``?kind=probs``: the general path checks every row's range, then every row's sum,
    then zeros, so a later block's row out of range is named before an earlier block's
    row that does not sum to 1 (the stream named the earlier, 2026-12-07), in the pool's
    order and joined by id alike."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    order = np.random.default_rng(5).permutation(N) if shuffled else None
    files = _files(tmp_path, N, fmt, spoil, order=order, probs=True)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch,
                                                      kind="?kind=probs")
    assert streamed == general
    assert words in streamed and str(files[1]) in streamed


@pytest.mark.parametrize("what", ["nonorm", "nan"])
def test_a_content_check_for_other_content_is_named_after_the_tables_rows(
        what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Parquet table with a ``content_check`` column written for other content from row
    5 on and a later row that does not normalise (or a bad value): the general path reads
    the whole table (its rows' normalisation included) before it confirms any row's
    content, so the later row is named (the stream named the content check, 2026-12-07)."""
    import pyarrow.parquet as pq

    from activetest.data.pool import load_pool
    from activetest.formats.label_records import CHECK_COLUMN, content_check

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, N, "parquet", [(what, "surrogate", 250)])
    items = load_pool(files[0], task="sst2", id_column="id").items
    fp = [content_check(it.fields) for it in items]
    for path in files[1:]:
        t = pq.read_table(path)
        shown = [fp[i] if i < 5 or path != files[1] else fp[(i + 1) % N] for i in range(N)]
        pq.write_table(t.append_column(CHECK_COLUMN, [shown]), path)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert str(files[1]) in streamed and "other content" not in streamed
    assert ("normalise" if what == "nonorm" else "not finite") in streamed


# a row repeating an earlier row's id, and in the same block of the table (or its own
# row) a value that is not finite: the general path reads each row's id before its
# values, so it names the repeated id; the stream named the value (2026-12-07)
_REPEAT_CASES = [
    ([("dup", "surrogate", 4), ("nan", "surrogate", 5)], "line 6: duplicate id"),
    ([("dup", "surrogate", 6), ("nan", "surrogate", 6)], "line 8: duplicate id"),
    ([("dup", "surrogate", 70), ("nan", "surrogate", 72)], "line 72: duplicate id"),
    ([("nan", "surrogate", 4), ("dup", "surrogate", 5)], "line 6: column 'negative'"),
    ([("dup", "surrogate", 4), ("text", "surrogate", 5)], "line 6: duplicate id"),
    ([("dup", "surrogate", 70), ("text", "surrogate", 70)], "line 72: duplicate id"),
]


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("spoil,words", _REPEAT_CASES)
def test_a_repeated_id_before_a_bad_value_in_its_block_is_named_first(
        spoil: list[tuple[str, str, int]], words: str, fmt: str, shuffled: bool,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same tiny files on both paths, word for word: in the pool's order (the first
    row with the id an earlier block's, a pool item's) and joined by id alike."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    order = np.random.default_rng(5).permutation(N) if shuffled else None
    files = _files(tmp_path, N, fmt, spoil, order=order)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    if fmt != "csv":  # no header line (as above)
        words = f"{'row' if fmt == 'parquet' else 'line'} {int(words.split()[1][:-1]) - 1}:" \
                + words.split(":", 1)[1]
    assert streamed.startswith(f"{files[1]}: {words}"), streamed


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_pool_read_on_after_the_first_tables_refusal_encodes_no_more_items(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The surrogate refused in the pool's first block (a NaN at row 5): the pool is read
    to its end (a later record of it would be named first, as the case above with an
    empty id shows), but its later items' fields are not encoded for the session file,
    which is removed (each one was, 2026-12-07); the refusal is the general path's."""
    from activetest.session import stream_init

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, N, fmt, [("nan", "surrogate", 5)])
    encoded: list[object] = []
    real = stream_init._dumps

    def counted(obj: object) -> str:
        if isinstance(obj, dict) and "text" in obj:  # an item's fields
            encoded.append(obj)
        return real(obj)

    monkeypatch.setattr(stream_init, "_dumps", counted)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general and "not finite" in streamed
    assert len(encoded) == 64, len(encoded)  # the first block's, written before its rows


def test_a_tables_text_is_read_for_problems_before_any_row_once_per_init(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV table of probabilities with three rows the rule refuses, each by an earlier
    check than the one before (a zero at 5, a sum at 100, a value above 1 at 250): each
    replaces the last as the table's late refusal, and before each the whole text was
    read for a problem named before any row (a malformed line), three times for one
    file (2026-12-07); now once. The refusal is the general path's."""
    from activetest.models import table_stream

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, N, "csv", [("zero", "surrogate", 5), ("sum", "surrogate", 100),
                                        ("range", "surrogate", 250)], probs=True)
    scans: list[str] = []
    real = table_stream.refuse_file_problems

    def counted(path: Path, *a: object) -> None:
        scans.append(Path(path).name)
        real(path, *a)  # type: ignore[arg-type]

    monkeypatch.setattr(table_stream, "refuse_file_problems", counted)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch,
                                                      kind="?kind=probs")
    assert streamed == general and "must lie in [0, 1]" in streamed
    assert scans == ["surrogate.csv"], scans


def test_a_repeated_id_whose_first_row_is_held_from_the_tables_last_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 30,000-row CSV table read by pyarrow in two blocks (of 21,999 and 8,001 rows with
    pyarrow 1 MiB blocks), the pool's in 64s: row 22,000 repeats the id of row 21,990 (a
    row read but not yet joined when the second block is read) and row 22,002 has a NaN:
    the repeated id is named, as the general path names it."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, 30_000, "csv", [("dupnear", "surrogate", 22_000),
                                             ("nan", "surrogate", 22_002)])
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(f"{files[1]}: line 22002: duplicate id 'it21990' (first at "
                               f"line 21992)"), streamed
