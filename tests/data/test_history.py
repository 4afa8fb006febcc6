"""Response matrices read from real files and joined to a pool by id, with the refusals."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from activetest.data.history import HistoryJoinError, join_history
from activetest.formats.history import HistoryFormatError, read_response_matrix

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "history"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_csv_tsv_gzip_and_parquet_alike(tmp_path: Path) -> None:
    text = ",q1,q2,q3\nm/a,1,0,\nm/b,0.5,NA,1.0\n"
    a = read_response_matrix(_write(tmp_path / "h.csv", text))
    b = read_response_matrix(_write(tmp_path / "h.tsv", text.replace(",", "\t")))
    (tmp_path / "h.csv.gz").write_bytes(gzip.compress(text.encode()))
    c = read_response_matrix(tmp_path / "h.csv.gz")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"model": ["m/a", "m/b"], "q1": [1.0, 0.5], "q2": [0.0, None],
                             "q3": [None, 1.0]}), tmp_path / "h.parquet")
    d = read_response_matrix(tmp_path / "h.parquet")
    for m in (a, b, c, d):
        assert m.models == ("m/a", "m/b") and m.item_ids == ("q1", "q2", "q3")
        np.testing.assert_array_equal(m.scores, [[1, 0, np.nan], [0.5, np.nan, 1]])


def test_parquet_written_by_pandas_with_the_models_as_index(tmp_path: Path) -> None:
    """pandas stores a named index as the LAST Parquet column: a matrix pivoted from a
    long table (``pivot_table(index="model", ...)``) reads with its models as the rows
    (QA: the first item column was read as the names, a misleading refusal); typed
    booleans are 1/0; an index of several levels is refused, not guessed at."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    long = pd.DataFrame({"model": ["m/a", "m/a", "m/b", "m/b", "m/c"],
                         "item": ["q1", "q2", "q1", "q2", "q2"],
                         "correct": [1.0, 0.0, 0.0, 1.0, 1.0]})
    wide = long.pivot_table(index="model", columns="item", values="correct")
    wide.to_parquet(tmp_path / "pivot.parquet")
    m = read_response_matrix(tmp_path / "pivot.parquet")
    assert m.models == ("m/a", "m/b", "m/c") and m.item_ids == ("q1", "q2")
    np.testing.assert_array_equal(m.scores, [[1, 0], [0, 1], [np.nan, 1]])
    flags = pd.DataFrame({"model": ["m/a", "m/b"], "q1": [True, False], "q2": [None, True]})
    flags.to_parquet(tmp_path / "bool.parquet", index=False)
    b = read_response_matrix(tmp_path / "bool.parquet")
    np.testing.assert_array_equal(b.scores, [[1, np.nan], [0, 1]])
    two = wide.copy()
    two.index = pd.MultiIndex.from_tuples([("m/a", 1), ("m/b", 1), ("m/c", 2)],
                                          names=["model", "run"])
    two.to_parquet(tmp_path / "two.parquet")
    with pytest.raises(HistoryFormatError, match=r"two.parquet: pandas wrote an index of 2"):
        read_response_matrix(tmp_path / "two.parquet")


@pytest.mark.parametrize(("text", "match"), [
    (",q1,q1\nm,1,0\n", "repeated"),
    (",q1,q2\nm,1,2\n", r"line 2, column 'q2': 2.0 is not a score"),
    (",q1,q2\nm,1,yes\n", "line 2, column 'q2'"),
    (",q1,q2\nm,1\n", "line 2: 2 fields"),
    (",q1\nm,1\nm,0\n", "'m' repeated"),
    (",q1\n,1\n", "empty model name"),
    ("", "empty file"),
])
def test_malformed_files_are_refused_with_file_and_line(tmp_path: Path, text: str,
                                                        match: str) -> None:
    f = _write(tmp_path / "bad.csv", text)
    with pytest.raises(HistoryFormatError, match=match) as e:
        read_response_matrix(f)
    assert "bad.csv" in str(e.value)


def test_joins_by_id_reports_coverage_and_drops_the_target(tmp_path: Path) -> None:
    f = _write(tmp_path / "h.csv", "model,b,a,zz\nx,1,0,1\ntarget,0,1,1\ny,0,0,0\n")
    g = _write(tmp_path / "g.csv", "model,c\nw,1\n")
    h = join_history([f, g], ["a", "b", "c", "d"], exclude=["target"])
    assert h.models == ("x", "y", "w") and h.n_covered == 3 and h.ignored_items == 1
    np.testing.assert_array_equal(h.scores, [[0, 1, np.nan, np.nan], [0, 0, np.nan, np.nan],
                                             [np.nan, np.nan, 1, np.nan]])
    msg = "\n".join(h.messages())
    assert "3 of 4 pool items" in msg and "'target' not used (named" in msg
    # the target's row found by its own scores under another name
    h2 = join_history([f], ["a", "b", "c", "d"], target_scores=np.array([1, 0, np.nan, 0]))
    assert h2.models == ("x", "y") and "identical" in h2.excluded[0][1]
    # a file whose only row is the target's is read but gives no model: named apart (QA:
    # "history: 2 model(s) from h.csv, t.csv" though t.csv gave none)
    t = _write(tmp_path / "t.csv", "model,a,b,c,d\nmine,1,0,1,0\n")
    h4 = join_history([f, t], ["a", "b", "c", "d"], exclude=["target"],
                      target_scores=np.array([1, 0, 1, 0]))
    assert h4.models == ("x", "y") and h4.unused_sources == (str(t),)
    first = h4.messages()[0]
    assert first.startswith(f"history: 2 model(s) from {f} ({t} read too: none of its rows "
                            f"used, below); "), first
    assert h.unused_sources == () and f"from {f}, {g};" in h.messages()[0]
    # a row with no result on the pool's items (every cell missing, or only on items not
    # in the pool) is not counted as a model (it was: "history: 21 model(s)")
    e = _write(tmp_path / "e.csv", "model,a,b,zz\nx,1,0,1\nempty,,,\nelsewhere,,,1\n")
    h3 = join_history([e], ["a", "b"])
    assert h3.models == ("x",)
    assert dict(h3.excluded) == {"empty": "no result on any pool item",
                                 "elsewhere": "no result on any pool item"}


def test_join_refusals(tmp_path: Path) -> None:
    f = _write(tmp_path / "h.csv", "model,0,1,2\nx,1,0,1\n")
    with pytest.raises(HistoryJoinError, match=r"'0' in the history, 'q0' in the pool.*"
                                               r"never by position"):
        join_history([f], ["q0", "q1", "q2"])
    # the dataset's own ids (row numbers on both sides are refused: test below)
    f = _write(tmp_path / "q.csv", "model,q0,q1,q2\nx,1,0,1\n")
    with pytest.raises(HistoryJoinError, match="matches no history row"):
        join_history([f], ["q0", "q1"], exclude=["nobody"])
    g = _write(tmp_path / "r.csv", "model,q0,q1,q2\nx,1,1,1\n")
    with pytest.raises(HistoryJoinError, match=r"model 'x' is in .*q.csv and in .*r.csv with "
                                               r"other results: item 'q1' is 0 in the first "
                                               r"and 1 in the second \(1 of 3 shared"):
        join_history([f, g], ["q0", "q1", "q2"])
    with pytest.raises(HistoryJoinError, match="no history row is left"):
        join_history([f], ["q0", "q1"], exclude=["x"])
    # pool ids that repeat cannot say which item a column is (mutation check)
    with pytest.raises(HistoryJoinError, match="the pool's item ids repeat"):
        join_history([f], ["q0", "q1", "q1"])


def test_the_python_join_refuses_ids_that_look_like_row_numbers(tmp_path: Path) -> None:
    """``join_history`` called from Python takes the session's rule: a pool numbered
    0..N-1 and a matrix whose columns are 0..N-1 join only with ``ids_are_positions=True``
    (then listed in ``by_position``); the dataset's own numbering joins as before."""
    f = _write(tmp_path / "h.csv", "model,0,1,2\nx,1,0,1\ny,0,0,1\n")
    with pytest.raises(HistoryJoinError, match=r"h.csv: its item ids and the pool's look like "
                                               r"row numbers.*pool item '0' would get the "
                                               r"results of column '0'.*ids_are_positions"):
        join_history([f], ["0", "1", "2"])
    h = join_history([f], ["0", "1", "2"], ids_are_positions=True)
    assert h.by_position == (str(f),) and h.n_covered == 3
    g = _write(tmp_path / "g.csv", "model,7504,7505,7506\nx,1,0,1\n")
    h = join_history([g], ["7504", "7505", "7506"])
    assert h.by_position == () and h.n_covered == 3


def test_the_shared_matrices_read_whole() -> None:
    path = SHARED / "bbh_shuffled_objects_5.csv"
    if not path.exists():
        pytest.skip("../shared/datasets/history is absent")
    m = read_response_matrix(path)
    assert m.scores.shape == (4027, 250) and m.item_ids[0] == "X0"
    assert set(np.unique(m.scores)) <= {0.0, 1.0}


def test_a_sparse_row_that_agrees_on_a_few_items_is_not_taken_for_the_target(
        tmp_path: Path) -> None:
    """QA: a history row sharing one item with the target's own scores, and agreeing
    there, was dropped as "identical to the target's own scores on 1 items". A row is
    taken for the target only on MIN_SAME_ITEMS shared items (or all the target and the
    history share, where fewer)."""
    from activetest.data.history import MIN_SAME_ITEMS

    n = 40
    rng = np.random.default_rng(2)
    t = (rng.random(n) < 0.6).astype(float)
    ids = [f"i{k}" for k in range(n)]
    dense = "".join(f"m{h}," + ",".join(str(int(v)) for v in rng.random(n) < 0.5) + "\n"
                    for h in range(3))
    sparse = "few," + ",".join(str(int(t[k])) if k < 3 else "" for k in range(n)) + "\n"
    same = "copy," + ",".join(str(int(v)) for v in t) + "\n"
    f = _write(tmp_path / "h.csv", "model," + ",".join(ids) + "\n" + dense + sparse + same)
    h = join_history([f], ids, target_scores=t)
    assert "few" in h.models and "copy" not in h.models
    assert dict(h.excluded)["copy"].startswith(f"identical to the target's own scores on {n}")
    assert n >= MIN_SAME_ITEMS


def test_only_json_files_named_results_are_taken_for_lm_evals_results_file(
        tmp_path: Path) -> None:
    """QA: any file whose name started with ``results_`` was skipped as lm-eval's results
    file, without being listed: an instance log named ``results_b_samples.jsonl`` was
    lost from the history silently."""
    from activetest.formats.history import is_sidecar

    assert is_sidecar(tmp_path / "results_2026-01-01T00-00-00.json")
    assert not is_sidecar(tmp_path / "results_b_samples.jsonl")
    assert is_sidecar(tmp_path / "logs.json")


def test_ids_alike_but_not_equal_are_named_never_joined(tmp_path: Path) -> None:
    """Columns equal to pool ids but for case, blanks, leading zeros or a number's '.0'
    are not joined (never guessed) and one is named, in the refusal and in the count of
    ignored columns; a transposed matrix (items as rows) is said to be one (QA: both
    were refused with an unrelated pair of ids, or ignored silently)."""
    pool = ["7", "8", "9", "10"]
    f = _write(tmp_path / "f.csv", "model,7.0,8.0,9.0\nx,1,0,1\n")
    with pytest.raises(HistoryJoinError, match=r"f.csv: .*'7.0' in the history is '7' in "
                                               r"the pool but for case.*never guessed"):
        join_history([f], pool)
    g = _write(tmp_path / "g.csv", "model,007,8,09,10\nx,1,0,1,1\ny,0,0,1,1\n")
    h = join_history([g], pool)
    assert h.n_covered == 2 and h.ignored_items == 2
    assert "'007' in the history is '7' in the pool" in "\n".join(h.messages())
    t = _write(tmp_path / "t.csv", "item,m1,m2\n7,1,0\n8,0,1\n")
    with pytest.raises(HistoryJoinError, match=r"t.csv: .*rows are named by pool item ids "
                                               r"\(e.g. '7'.*transposed"):
        join_history([t], pool)


def test_the_same_model_in_two_files_under_two_names_counts_once(tmp_path: Path) -> None:
    """A row identical to a row of an earlier file under another name (a matrix and a
    folder of logs holding the same run) is dropped and said (QA: counted twice); rows of
    one file are the file's own, and rows right on every item are not taken for one."""
    ids = [f"q{i}" for i in range(30)]
    row = [str((i * 7) % 3 % 2) for i in range(30)]
    other = [str(1 - int(v)) for v in row]
    a = _write(tmp_path / "a.csv", "model," + ",".join(ids) + "\nm/a," + ",".join(row)
               + "\nm/a-again," + ",".join(row) + "\nall-right," + ",".join(["1"] * 30)
               + "\n")
    b = _write(tmp_path / "b.csv", "model," + ",".join(ids) + "\nalias," + ",".join(row)
               + "\nb," + ",".join(other) + "\nalso-all-right," + ",".join(["1"] * 30)
               + "\n")
    h = join_history([a, b], ids)
    assert h.models == ("m/a", "m/a-again", "all-right", "b", "also-all-right")
    assert h.excluded == (("alias", f"identical to row 'm/a' of {a} on 30 items: the same "
                                    "model counted once"),)
    assert "row 'alias' not used (identical to row 'm/a'" in "\n".join(h.messages())


def test_of_two_rows_of_one_model_the_one_with_more_results_is_kept(tmp_path: Path) -> None:
    """A partial run of a model (a target's rounds, a run cut short) in an earlier file
    than its full run under another name: the full row is kept, the partial one dropped
    and said (QA: the full row was dropped, and with it the history of every item the
    partial row lacks)."""
    ids = [f"q{i}" for i in range(40)]
    row = [str((i * 7) % 3 % 2) for i in range(40)]
    a = _write(tmp_path / "a.csv", "model," + ",".join(ids[:25]) + "\npartial,"
               + ",".join(row[:25]) + "\n")
    b = _write(tmp_path / "b.csv", "model," + ",".join(ids) + "\nfull," + ",".join(row)
               + "\n")
    h = join_history([a, b], ids)
    assert h.models == ("full",) and h.n_covered == 40
    assert h.excluded == (("partial", f"identical to row 'full' of {b} on 25 items, which "
                                      "has results on more items: the same model counted "
                                      "once"),)
    # the other way round (the full run first) the partial one is dropped as before
    h = join_history([b, a], ids)
    assert h.models == ("full",) and h.n_covered == 40
    assert h.excluded == (("partial", f"identical to row 'full' of {b} on 25 items: the "
                                      "same model counted once"),)


def test_a_read_error_names_the_file(tmp_path: Path) -> None:
    """QA: a response matrix (or any input file) whose read fails (EIO: a failing disk, a
    stale network mount) said ``error: Input/output error`` naming no file."""
    if not Path("/proc/self/mem").exists():
        pytest.skip("needs Linux's /proc/self/mem (reading it fails with EIO)")
    link = tmp_path / "h.csv"
    link.symlink_to("/proc/self/mem")
    with pytest.raises(OSError) as e:
        read_response_matrix(link)
    assert e.value.filename == str(link) and "Input/output error" in str(e.value)


@pytest.mark.parametrize("cell", ["0_1", "\u0661", "1_0e-1", "inf"])
def test_a_cell_that_is_not_a_plain_number_is_refused(tmp_path: Path, cell: str) -> None:
    """QA: Python's float() took '0_1' as 1.0 and digits of other scripts ('١' is 1), so
    a garbled cell was read as a score; a score is a plain decimal number in [0, 1]."""
    f = _write(tmp_path / "h.csv", f",q1,q2\nm,1,{cell}\n")
    with pytest.raises(HistoryFormatError, match=r"h.csv: line 2, column 'q2': .* is not a "
                                                  r"score in \[0, 1\]"):
        read_response_matrix(f)
    ok = read_response_matrix(_write(tmp_path / "ok.csv", ",q1,q2,q3,q4\nm,1.,.5,5e-1,+0\n"))
    np.testing.assert_array_equal(ok.scores, [[1, 0.5, 0.5, 0]])


def test_parquet_with_repeated_columns_or_a_missing_float_name_is_refused_plainly(
        tmp_path: Path) -> None:
    """QA: a Parquet file with an item column twice was refused with pyarrow's internal
    dump ("Multiple matches for FieldRef.Name(q1) in ... __fragment_index"), calling the
    file unreadable; a model-name column of floats with a NaN (a missing name) gave a model
    named 'nan'."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table([pa.array(["m/a", "m/b"]), pa.array([1, 0]), pa.array([0, 1])],
                            names=["model", "q1", "q1"]), tmp_path / "dup.parquet")
    with pytest.raises(HistoryFormatError) as e:
        read_response_matrix(tmp_path / "dup.parquet")
    assert str(e.value) == f"{tmp_path / 'dup.parquet'}: its column names: item id(s) " \
                           f"repeated: ['q1']"
    pq.write_table(pa.table({"model": [1.0, float("nan")], "q1": [1, 0]}),
                   tmp_path / "nan.parquet")
    with pytest.raises(HistoryFormatError, match=r"nan.parquet: row 1: empty model name"):
        read_response_matrix(tmp_path / "nan.parquet")


def test_a_target_known_on_few_items_takes_no_row_that_agrees_by_chance(
        tmp_path: Path) -> None:
    """QA: a target whose own scores are known on 3 pool items (a partial log, a pool with
    few labels) took every history row that agreed on those 3 for its own run: 12 of 40
    rows dropped, "identical to the target's own scores on 3 items". Several rows agreeing
    on fewer than MIN_SAME_ITEMS items cannot be told apart: all are kept, and said; one
    such row is still taken for the target."""
    n, H = 60, 40
    rng = np.random.default_rng(0)
    S = (rng.random((H, n)) < 0.6).astype(int)
    ids = [f"q{k}" for k in range(n)]
    f = _write(tmp_path / "h.csv", "model," + ",".join(ids) + "\n" + "".join(
        f"m{h}," + ",".join(map(str, S[h])) + "\n" for h in range(H)))
    t = np.full(n, np.nan)
    t[:3] = 1.0
    agree = [f"m{h}" for h in range(H) if S[h, :3].all()]
    assert len(agree) > 1
    h = join_history([f], ids, target_scores=t)
    assert len(h.models) == H and h.excluded == ()
    (note,) = [m for m in h.messages() if "too few to tell" in m]
    assert note.startswith(f"history: {len(agree)} rows ({agree[0]!r}, ") and "at most 3" in note


def test_a_matrix_without_its_model_name_column_says_so(tmp_path: Path) -> None:
    """A header of item ids only, rows of scores only: the first column is read as the
    names, so the second row repeats "model '0'"; the refusal says the file may lack its
    model-name column (QA: it said the repeat and no more). A real repeated name keeps
    the plain message."""
    p = _write(tmp_path / "noname.csv", "q1,q2,q3\n0,1,1\n0,0,1\n")
    with pytest.raises(HistoryFormatError) as e:
        read_response_matrix(p)
    msg = str(e.value)
    assert "model '0' repeated" in msg and "lack its model-name column" in msg
    assert "'q1'" in msg
    p2 = _write(tmp_path / "dup.csv", "model,q1\nm,1\nm,0\n")
    with pytest.raises(HistoryFormatError) as e2:
        read_response_matrix(p2)
    assert "model 'm' repeated" in str(e2.value)
    assert "model-name column" not in str(e2.value)


def test_an_item_id_holding_a_control_character_is_named(tmp_path: Path) -> None:
    """QA: an item id holding a NUL (or another control character) was counted as an
    ignored column and never named. A NUL in an item id or a model name (CSV, TSV,
    Parquet) is refused, naming the file, the column and the id; another control or
    invisible character is not the pool's id (joined exactly), and the ignored columns
    are named, escaped, with the pool id it equals but for that character."""
    pool = ["q1", "q2", "q3"]
    nul = _write(tmp_path / "nul.csv", "model,q1,q2\x00,q3\nx,1,0,1\n")
    with pytest.raises(HistoryFormatError, match=r"nul.csv: line 1: item column 3 "
                                                 r"\('q2\\x00'\) holds a NUL character"):
        read_response_matrix(nul)
    tsv = _write(tmp_path / "nul.tsv", "model\tq1\tq2\tq3\nx\x00\t1\t0\t1\n")
    with pytest.raises(HistoryFormatError, match=r"nul.tsv: line 2: the model name "
                                                 r"'x\\x00' holds a NUL character"):
        read_response_matrix(tsv)
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"model": ["x"], "q1": [1.0], "q2\x00": [0.0], "q3": [1.0]}),
                   tmp_path / "nul.parquet")
    with pytest.raises(HistoryFormatError, match=r"nul.parquet: its column names: item "
                                                 r"column 3 \('q2\\x00'\) holds a NUL"):
        read_response_matrix(tmp_path / "nul.parquet")
    bel = _write(tmp_path / "bel.csv", "model,q1,q2\x07,q3,q9,q10\nx,1,0,1,1,1\n")
    said = "\n".join(join_history([bel], pool).messages())
    assert ("3 item column(s) are not in the pool (ignored: 'q2\\x07', 'q9', 'q10'); e.g. "
            "'q2\\x07' in the history is 'q2' in the pool but for case, blanks, leading "
            "zeros, a number's '.0' or control and invisible characters" in said), said
    zw = _write(tmp_path / "zw.csv", "model,q1,q2\u200b,q3\nx,1,0,1\n")
    assert "(ignored: 'q2\\u200b'); e.g. 'q2\\u200b' in the history is 'q2'" in "\n".join(
        join_history([zw], pool).messages())


def test_one_model_in_two_files_is_one_row_where_its_results_agree(tmp_path: Path) -> None:
    """The same model in two matrices (a partial run and the rest, or the same results
    twice) is one row, said (QA: refused; given through folders named otherwise, counted
    twice); its cells from both files."""
    f = _write(tmp_path / "a.csv", "model,q0,q1,q2,q3\nx,1,0,,\ny,0,0,1,1\n")
    g = _write(tmp_path / "b.csv", "model,q1,q2,q3\nx,0,1,1\nz,1,1,0\n")
    h = join_history([f, g], ["q0", "q1", "q2", "q3"])
    assert h.models == ("x", "y", "z")
    np.testing.assert_array_equal(h.scores[0], [1, 0, 1, 1])
    assert (f"history: model 'x' is in {f} and in {g}, its results agreeing on the 1 "
            f"item(s) both have: one row (2 more item(s) from the second)") in h.messages()
    assert h.unused_sources == ()


def test_a_wide_matrix_is_read_without_counting_each_item_over_all(tmp_path: Path) -> None:
    """QA: the check for a repeated item column counted each item over all items
    (O(M^2)): 10 s of a 20,000-item matrix's read was that check. 60,000 items (one
    repeated last, named) within 15 CPU-s; it took minutes before."""
    import signal

    n = 60_000
    items = [f"q{j}" for j in range(n)]
    ok, bad = tmp_path / "ok.csv", tmp_path / "bad.csv"
    ok.write_text("," + ",".join(items) + "\nm1," + ",".join("1" * n) + "\n")
    bad.write_text("," + ",".join([*items[:-1], items[-2]]) + "\nm1," + ",".join("1" * n)
                   + "\n")

    def too_slow(*_: object) -> None:
        raise TimeoutError("reading the matrix took more than 15 CPU-s")

    old = signal.signal(signal.SIGVTALRM, too_slow)
    signal.setitimer(signal.ITIMER_VIRTUAL, 15.0)
    try:
        assert read_response_matrix(ok).item_ids == tuple(items)
        with pytest.raises(HistoryFormatError, match=rf"item id\(s\) repeated: \['q{n - 2}'\]"):
            read_response_matrix(bad)
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, old)
