"""A streamed ``init`` joins a prediction table by id when it is not in the pool's order
(a sharded scoring job's table, a table with fewer or more rows): a second pass over the
table against the items already written to the session file, memory the result and one
block (docs/pool-scale.md). Every session is compared with the general path's (which
joins in memory), and every refusal with the general path's message, word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import create_from_tables, same_session, spy_on_stream, tsv_tables
from session_support import write_pool_tables as write_pool

from activetest.session import stream_base, stream_init

#: The tables' formats; a ``.gz`` one gzipped, its pool too (CSV or JSONL: a JSON-array
#: table's pool is a CSV file), both streamed since 2026-12-07 (the general path before).
FORMATS = ["csv", "tsv", "jsonl", "parquet", "csv.gz", "jsonl.gz", "json", "json.gz"]


def _kind(path: Path) -> tuple[str, bool]:
    """The format of the file ``path`` by its name, and whether it is gzipped."""
    name = path.name
    return Path(name.removesuffix(".gz")).suffix.lstrip("."), name.endswith(".gz")


def _put(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path``, gzipped where its name ends in ``.gz``."""
    import gzip

    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def _text(path: Path) -> bytes:
    """The bytes of ``path``, gunzipped where its name ends in ``.gz``."""
    import gzip

    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def _rewrite(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` (id, negative, positive[, content_check]) as the table at ``path``
    (its format by its suffix; gzipped where it ends in ``.gz``)."""
    import json

    import pyarrow as pa

    fmt, _ = _kind(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    elif fmt == "jsonl":
        _put(path, "".join(json.dumps(r) + "\n" for r in rows).encode())
    elif fmt == "json":
        _put(path, json.dumps(rows, indent=1).encode())
    else:
        sep = "\t" if fmt == "tsv" else ","
        cols = list(rows[0])
        _put(path, (sep.join(cols) + "\n" + "".join(
            sep.join(repr(r[c]) if isinstance(r[c], float) else str(r[c]) for c in cols)
            + "\n" for r in rows)).encode())


def _rows(path: Path) -> list[dict[str, Any]]:
    import io
    import json

    import pyarrow.csv as pcsv
    import pyarrow.json as pjson
    import pyarrow.parquet as pq

    fmt, _ = _kind(path)
    if fmt == "parquet":
        return pq.read_table(path).to_pylist()  # type: ignore[no-any-return]
    if fmt == "json":
        return json.loads(_text(path))  # type: ignore[no-any-return]
    if fmt == "jsonl":
        return pjson.read_json(io.BytesIO(_text(path))).to_pylist()  # type: ignore[no-any-return]
    opts = pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",")
    return pcsv.read_csv(io.BytesIO(_text(path)),  # type: ignore[no-any-return]
                         parse_options=opts).to_pylist()


def _files(tmp: Path, fmt: str, n: int = 200) -> tuple[Path, Path, Path]:
    base, gz = fmt.removesuffix(".gz"), fmt.endswith(".gz")
    files = write_pool(tmp, n, "csv" if base in ("tsv", "json") else base)
    if base == "tsv":
        files = tsv_tables(files)
    if base == "json":  # the CSV tables as JSON arrays
        tables = []
        for path in files[1:]:
            tables.append(path.with_suffix(".json"))
            _rewrite(tables[-1], _rows(path))
            path.unlink()
        files = (files[0], tables[0], tables[1])
    if not gz:
        return files
    out = []
    for path in files:  # gzipped: the pool too
        out.append(path.with_name(path.name + ".gz"))
        _put(out[-1], path.read_bytes())
        path.unlink()
    return out[0], out[1], out[2]


def _both(tmp: Path, files: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
          ) -> tuple[str | None, str | None, list[int]]:
    """Create the session by the stream and by the general path: their refusals (None:
    made; then the two sessions are asserted the same) and the stream's spy (an entry:
    it ran to its end, no fall back)."""
    out = []
    with monkeypatch.context() as m:
        ran = spy_on_stream(m)
        for name, general in (("s.db", False), ("g.db", True)):
            if general:
                m.setattr(stream_init, "try_stream", lambda *a, **k: None)
            try:
                create_from_tables(tmp / name, files).close()
                out.append(None)
            except ValueError as exc:
                out.append(str(exc))
                assert not (tmp / name).exists()
                if not general:  # refused by the stream itself, not by a fall back
                    assert isinstance(exc, stream_init.StreamRefusedError), repr(exc)
    if out == [None, None]:
        same_session(tmp / "s.db", tmp / "g.db")
    assert not list(tmp.glob(".*creating*"))
    return out[0], out[1], ran


@pytest.mark.parametrize("fmt", FORMATS)
def test_tables_in_the_pools_order_stream_into_the_general_paths_session(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables in the pool's order (gzipped, JSON arrays: they and a gzipped pool took the
    general path before 2026-12-07) are streamed, blocks of 64 rows, into the session the
    general path writes: its config (the pool's sha256 of its text, gunzipped), items,
    scores and sampler, bit for bit."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    streamed, general, ran = _both(tmp_path, files, monkeypatch)
    assert streamed is None and general is None and ran


def test_a_table_is_gunzipped_by_its_bytes_not_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the general path reads a table: a gzipped one named ``.csv`` is gunzipped, a
    plain one named ``.csv.gz`` is not; both stream into the general path's session."""
    import gzip

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    pool, sur, tgt = write_pool(tmp_path, 200, "csv")
    plain = sur.with_name("surrogate.csv.gz")
    plain.write_bytes(sur.read_bytes())
    packed = tgt.with_name("target-packed.csv")
    packed.write_bytes(gzip.compress(tgt.read_bytes(), mtime=0))
    streamed, general, ran = _both(tmp_path, (pool, plain, packed), monkeypatch)
    assert streamed is None and general is None and ran


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_shuffled_table_with_rows_of_other_items_is_joined_by_id(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both tables shuffled, the target's with rows of items the pool does not have among
    them (a larger pool's table): the stream joins them by id, blocks of 64 rows, and
    makes the general path's session."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    rng = np.random.default_rng(1)
    for k, path in enumerate(files[1:]):
        rows = _rows(path)
        if k == 1:
            rows += [{"id": f"other{j}", "negative": -0.1, "positive": float(np.log1p(
                -np.exp(-0.1)))} for j in range(90)]
        _rewrite(path, [rows[i] for i in rng.permutation(len(rows))])
    streamed, general, ran = _both(tmp_path, files, monkeypatch)
    assert streamed is None and general is None and ran


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("how", ["shuffled", "in order, shorter"])
def test_pool_items_without_a_row_are_named_as_the_general_path_names_them(
        fmt: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table without rows for 1 or 12 pool items (shuffled, or in the pool's order
    with its last rows missing) is refused with the general path's message: how many,
    the first ten ids in the pool's order, "and 2 more"."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    for drop in (1, 12):
        d = tmp_path / str(drop)
        d.mkdir()
        files = _files(d, fmt)
        rows = _rows(files[2])
        if how == "shuffled":
            gone = set(np.random.default_rng(drop).choice(200, drop, replace=False).tolist())
            keep = [r for i, r in enumerate(rows) if i not in gone]
            keep = [keep[i] for i in np.random.default_rng(2).permutation(len(keep))]
        else:
            gone, keep = set(range(200 - drop, 200)), rows[:200 - drop]
        _rewrite(files[2], keep)
        streamed, general, _ = _both(d, files, monkeypatch)
        assert streamed is not None and streamed == general, (streamed, general)
        first = min(gone)
        assert f"no row for {drop} of 200 item id(s): 'it{first}'" in streamed
        assert ("and 2 more" in streamed) == (drop == 12)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_of_no_pool_item_says_whose_ids_it_has(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA at 1e5 items: a table keyed by numbers beside a pool of ``it0``... said only
    "no row for 100000 of 100000 item id(s): 'it0', ...". Where no pool item has a row
    both paths say so, word for word, with the first ids of each and what to check; a
    table that misses only some items gets no such line."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    rows = _rows(files[2])
    _rewrite(files[2], [dict(r, id=f"row{i}") for i, r in enumerate(rows)])
    streamed, general, _ = _both(tmp_path, files, monkeypatch)
    assert streamed is not None and streamed == general, (streamed, general)
    assert "no row for 200 of 200 item id(s): 'it0'" in streamed
    assert ("no pool item has a row: the table's ids begin 'row0', 'row1', 'row2', the "
            "pool's 'it0', 'it1', 'it2'") in streamed and "?id=COLUMN" in streamed
    d = tmp_path / "some"
    d.mkdir()
    files = _files(d, fmt)
    _rewrite(files[2], _rows(files[2])[:150])
    streamed, general, _ = _both(d, files, monkeypatch)
    assert streamed is not None and streamed == general
    assert "no row for 50 of 200" in streamed and "no pool item has a row" not in streamed


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["a later block", "the same block", "an item of no pool",
                                   "an item of no pool, the same block"])
def test_a_repeated_id_in_a_shuffled_table_names_both_rows(
        fmt: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shuffled table that repeats an id (a pool item's, in a later block or the same
    one; or an id the pool does not have) is refused as the general path refuses it,
    naming both rows (lines of a text file, row numbers of a Parquet one)."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    rows = _rows(files[1])
    rows = [rows[i] for i in np.random.default_rng(3).permutation(len(rows))]
    if where.startswith("an item of no pool"):
        extra = {"id": "stray", "negative": -0.1, "positive": float(np.log1p(-np.exp(-0.1)))}
        at = 40 if where.endswith("same block") else 150
        rows = [*rows[:20], extra, *rows[20:at], dict(extra), *rows[at:]]
    else:
        at = 150 if where == "a later block" else 40
        rows = [*rows[:at], dict(rows[10]), *rows[at:]]
    _rewrite(files[1], rows)
    streamed, general, _ = _both(tmp_path, files, monkeypatch)
    assert streamed is not None and streamed == general, (streamed, general)
    assert "duplicate id" in streamed


def test_a_content_check_for_other_content_is_refused_in_a_shuffled_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shuffled Parquet table with the ``content_check`` column (a scoring job's) is
    joined by id with each item's content confirmed; two rows written for other content
    are refused with the general path's message, naming the first in the pool's order."""
    from activetest.formats.label_records import content_check
    from activetest.session.workflow import Session

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = write_pool(tmp_path, 200, "parquet")
    with monkeypatch.context() as m:  # the items as a session holds them
        m.setattr(stream_init, "try_stream", lambda *a, **k: None)
        create_from_tables(tmp_path / "ref.db", files).close()
    with Session.open(tmp_path / "ref.db") as s:
        checks = {it.id: content_check(it.fields) for it in s.store.items()}
    rows = _rows(files[1])
    for r in rows:
        r["content_check"] = checks[r["id"]]
    order = np.random.default_rng(4).permutation(len(rows))
    _rewrite(files[1], [rows[i] for i in order])
    streamed, general, ran = _both(tmp_path, files, monkeypatch)
    assert streamed is None and general is None and ran
    for r in rows:
        if r["id"] in ("it185", "it33"):  # it33 comes first in the pool, after in the table
            r["content_check"] = "c000000000000"
    bad = [rows[i] for i in order]
    assert [r["id"] for r in bad].index("it185") < [r["id"] for r in bad].index("it33")
    for spaced in (False, True):  # then an id with spaces around it: its row is the
        for r in bad:  # item's, and checked
            if spaced and r["id"] == "it33":
                r["id"] = " it33 "
        _rewrite(files[1], bad)
        for f in tmp_path.glob("[sg].db"):
            f.unlink()
        streamed, general, _ = _both(tmp_path, files, monkeypatch)
        assert streamed is not None and streamed == general, (streamed, general)
        assert "the row for item 'it33' was written for other content" in streamed


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_table_with_no_rows_is_refused_as_the_general_path_refuses_it(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of no rows (a header alone; an empty JSONL file) is joined by id, as it
    ends before the pool, and refused with the general path's "no data rows" (it named
    every pool item as having no row)."""
    import pyarrow as pa

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"id": pa.array([], pa.string()),
                                 "negative": pa.array([], pa.float64()),
                                 "positive": pa.array([], pa.float64())}), files[2])
    else:
        sep = "\t" if fmt.startswith("tsv") else ","
        _put(files[2], {"jsonl": b"", "json": b"[]"}.get(
            _kind(files[2])[0], (sep.join(["id", "negative", "positive"]) + "\n").encode()))
    streamed, general, _ = _both(tmp_path, files, monkeypatch)
    assert streamed is not None and streamed == general, (streamed, general)
    assert streamed.endswith(files[2].name + ": no data rows")


@pytest.mark.parametrize("fmt,defect", [  # (a JSON object's keys are its columns: no twice)
    *((f, d) for f in ("csv", "tsv", "jsonl", "csv.gz", "jsonl.gz", "json", "json.gz")
      for d in ("a NUL", "a byte that is not UTF-8")),
    ("csv", "a column named twice"), ("tsv", "a column named twice"),
    ("csv.gz", "a column named twice"),
    *((f, "a broken gzip stream") for f in ("csv.gz", "jsonl.gz", "json.gz")),
    *((f, "a bad value, then a malformed row at the end")
      for f in ("csv", "csv.gz", "jsonl", "jsonl.gz", "json", "json.gz")),
    *((f, "a row not normalised, then a malformed row at the end") for f in ("json", "json.gz"))])
@pytest.mark.parametrize("order", ["shuffled", "in the pool's order"])
def test_a_table_the_general_path_refuses_before_any_row_is_not_accepted(
        fmt: str, defect: str, order: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A text table with a NUL or a byte that is not UTF-8 in a column the fast reader
    does not read, or a header naming a class column twice, is refused as the general
    path refuses it (it was accepted: pyarrow reads only the id and class columns); so is
    a gzipped one whose gzip stream is cut, and one with a malformed row (line, JSON
    array) after a row with a bad value (QA: the stream named the value's row, the
    general path, which parses the whole file first, the malformed one), or after a row
    that is not normalised."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    rows = _rows(files[2])
    if order == "shuffled":
        rows = [rows[i] for i in np.random.default_rng(5).permutation(len(rows))]
    for r in rows:
        r["note"] = "x"
    if defect.startswith("a bad value"):
        rows[3]["negative"] = "abc"
    elif defect.startswith("a row not normalised"):  # (a JSON array is read in blocks of
        rows[3]["negative"] = 5.0  # rows: the value refused before the end is read)
    _rewrite(files[2], rows)
    data = _text(files[2])
    json_text = _kind(files[2])[0] in ("jsonl", "json")
    if defect == "a column named twice":
        sep = b"\t" if fmt == "tsv" else b","
        data = data.replace(sep + b"note\n", sep + b"negative\n", 1)
    elif defect.endswith("at the end"):  # the last row (line) or the array cut
        data = data.rstrip()[:-(3 if _kind(files[2])[0] == "csv" else 1)] + b"\n"
    elif defect != "a broken gzip stream":
        bad = b"\x00" if defect == "a NUL" else b"\xff"
        data = data.replace(b'"x"', b'"' + bad + b'"', 1) if json_text else (
            data.replace(b"x\n", bad + b"\n", 1))
    _put(files[2], data)
    if defect == "a broken gzip stream":
        files[2].write_bytes(files[2].read_bytes()[:-30])  # cut: the end of the rows lost
    out = []
    for name, general in (("s.db", False), ("g.db", True)):  # the stream falls back
        with monkeypatch.context() as m:
            if general:
                m.setattr(stream_init, "try_stream", lambda *a, **k: None)
            with pytest.raises(ValueError) as exc:
                create_from_tables(tmp_path / name, files).close()
        out.append(str(exc.value))
        assert not (tmp_path / name).exists()
    assert out[0] == out[1]


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_a_header_alone_without_a_class_column_says_no_data_rows(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CSV or TSV table that is a header alone and also lacks a class column: the
    general path says it has no data rows (it reads the rows before the columns); the
    stream said "missing column(s)" (QA)."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    files[2].write_text(("\t" if fmt == "tsv" else ",").join(["id", "negative"]) + "\n")
    streamed, general, _ = _both(tmp_path, files, monkeypatch)
    assert streamed is not None and streamed == general, (streamed, general)
    assert streamed.endswith("target" + files[2].suffix + ": no data rows")


def _renumbered(files: tuple[Path, Path, Path], spell: str = "{}") -> None:
    """The pool's and tables' ids ``it0``.. made ``0``.. (pandas' index as the id), each
    number written as ``spell`` writes it (``{:03d}``: ``007``)."""
    import re

    for f in files:
        if f.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            t = pq.read_table(f)
            ids = [re.sub(r"^it(\d+)$", lambda m: spell.format(int(m[1])), str(i))
                   for i in t.column("id").to_pylist()]
            pq.write_table(t.set_column(t.schema.get_field_index("id"), "id",
                                        pa.array(ids)), f)
        else:
            f.write_text(re.sub(r"\bit(\d+)\b", lambda m: spell.format(int(m[1])),
                                f.read_text()))


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_a_shuffled_table_keyed_by_row_numbers_is_refused_by_the_stream_itself(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool numbered 0..N-1 and a target table keyed so in another order (with rows of
    another pool's items after them): the stream compares both sides' ids as it joins the
    table by id, in constant memory, and refuses the join by positions with the general
    path's message, word for word, without falling back to the general path (which reads
    everything into memory: at 1e7 items killed for memory before it says a word); as
    ``ids_are_positions`` confirms, it makes the general path's session, the join said
    in the provenance."""
    from activetest.session.workflow import Session

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    _renumbered(files)
    for k, path in enumerate(files[1:]):  # both shuffled, the target's with more rows
        rows = _rows(path)
        for r in rows:
            r["id"] = str(r["id"])
        rows += [{"id": str(200 + j), "negative": -0.1,
                  "positive": float(np.log1p(-np.exp(-0.1)))} for j in range(30 * k)]
        _rewrite(path, [rows[i] for i in np.random.default_rng(5).permutation(len(rows))])

    for kw in ({}, {"ids_are_positions": True}):
        got = _stream_or_general(tmp_path, files, monkeypatch, **kw)
        if kw:
            assert got == [None, None], got  # (the two sessions asserted the same)
            with Session.open(tmp_path / "s.db") as s:
                assert (f"target.{fmt}: joined by ids that look like row numbers (the "
                        f"pool's: '0'..'199', 200 ids, every whole number from 0; the "
                        f"table's: '0'..'229', 230 ids, every whole number from 0), as "
                        f"--ids-are-positions confirms") in \
                    s.provenance("target")["joined_by_position"]
        else:
            assert got[0] is not None and got[0] == got[1], got
            assert (f"surrogate.{fmt}: its item ids and the pool's look like row numbers "
                    f"(positions), not ids (the pool's: '0'..'199', 200 ids, every whole "
                    f"number from 0; the table's: '0'..'199', 200 ids, every whole number "
                    f"from 0): pool item '0'") in got[0], got[0]


def _stream_or_general(tmp: Path, files: tuple[Path, Path, Path],
                       monkeypatch: pytest.MonkeyPatch, **kw: object) -> list[str | None]:
    """The session made by the stream (which must not fall back to the general path: it
    reads every id into memory) and by the general path: their refusals (None: made,
    then the two sessions are asserted the same)."""
    from activetest.session import create
    from activetest.session.store import SessionError

    def fell_back(*a: object, **k: object) -> None:
        raise AssertionError("the stream fell back to the general path")

    for f in tmp.glob("[sg].db"):
        f.unlink()
    got: list[str | None] = []
    for name, general in (("s.db", False), ("g.db", True)):
        with monkeypatch.context() as m:
            ran = spy_on_stream(m)
            m.setattr(*((stream_init, "try_stream", lambda *a, **k: None) if general
                        else (create, "load_inputs", fell_back)))
            try:
                create_from_tables(tmp / name, files, **kw).close()
                got.append(None)
                assert ran or general
            except (SessionError, ValueError) as exc:
                got.append(str(exc))
                assert not (tmp / name).exists()
    if got == [None, None]:
        same_session(tmp / "s.db", tmp / "g.db")
    return got


def _shuffle(path: Path, spell: str, more: int = 0, seed: int = 5) -> None:
    """The table's rows in another order, ``more`` rows of other items (ids 200..) after
    them, ids written as ``spell`` writes a number."""
    rows = _rows(path)
    for r in rows:
        r["id"] = spell.format(int(float(r["id"])))
    rows += [{"id": spell.format(200 + j), "negative": -0.1,
              "positive": float(np.log1p(-np.exp(-0.1)))} for j in range(more)]
    _rewrite(path, [rows[i] for i in np.random.default_rng(seed).permutation(len(rows))])


@pytest.mark.parametrize(("fmt", "spell"), [("csv", "{:03d}"), ("jsonl", "{}.0"),
                                            ("parquet", "{:04d}")])
def test_ids_written_as_padded_or_float_numbers_are_compared_by_the_stream_itself(
        fmt: str, spell: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: a pool and shuffled tables whose ids are row numbers written ``000``..``199``
    (or ``0.0``..) took the general path, every id in memory (at 1e7 items, killed for
    memory before a word): the stream counts such ids in the session file and refuses the
    join by positions with the general path's message, word for word; as
    ``ids_are_positions`` confirms, it makes the general path's session."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt)
    _renumbered(files, spell)
    for k, path in enumerate(files[1:]):
        _shuffle(path, spell, more=30 * k)
    got = _stream_or_general(tmp_path, files, monkeypatch)
    assert got[0] is not None and got[0] == got[1], got
    first, last = spell.format(0), spell.format(199)
    assert (f"surrogate.{fmt}: its item ids and the pool's look like row numbers "
            f"(positions), not ids (the pool's: {first!r}..{last!r}, 200 ids, every whole "
            f"number from 0; the table's: {first!r}..{last!r}, 200 ids, every whole number "
            f"from 0)") in got[0], got[0]
    assert _stream_or_general(tmp_path, files, monkeypatch, ids_are_positions=True) \
        == [None, None]


def test_a_number_written_twice_in_a_shuffled_table_is_no_position_join_in_the_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shuffled table keyed 0..199 with a row of another item ``007`` (7 written twice:
    no run of row numbers, as the general path counts it) is joined by id, by the stream
    itself (it fell back to the general path: QA), not by positions (the surrogate's
    table, in the pool's order, is, as confirmed); ids ``000``.. of a pool numbered
    0..199 share none of its ids: no join by positions either, the items without a row
    named as the general path names them."""
    from activetest.session.store import SessionStore

    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, "jsonl")
    _renumbered(files)
    rows = _rows(files[2])
    _rewrite(files[2], [*({**r, "id": str(r["id"])} for r in rows[::-1]),
                        {"id": "007", "negative": -0.1,
                         "positive": float(np.log1p(-np.exp(-0.1)))}])
    assert _stream_or_general(tmp_path, files, monkeypatch, ids_are_positions=True) \
        == [None, None]
    with SessionStore.open(tmp_path / "s.db") as s:
        assert "joined_by_position" in s.scores("surrogate").provenance
        assert "joined_by_position" not in s.scores("target").provenance
    _shuffle(files[1], "{:04d}")
    got = _stream_or_general(tmp_path, files, monkeypatch)
    assert got[0] is not None and got[0] == got[1], got
    assert "surrogate.jsonl: no row for 200 of 200 item id(s)" in got[0], got[0]


def test_two_tables_joined_by_positions_name_the_first_given_in_both_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The surrogate's table shuffled (joined by id, a second pass) and the target's in
    the pool's order, both keyed by row numbers: the stream refused the target's first
    (checked as the pool was read), the general path the surrogate's (the first given);
    now both name the surrogate's, as they do where the target's is the shuffled one."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    for shuffled in (1, 2):  # the surrogate's shuffled, then the target's
        (tmp_path / str(shuffled)).mkdir()
        files = _files(tmp_path / str(shuffled), "csv")
        _renumbered(files)
        _shuffle(files[shuffled], "{}")
        got = _stream_or_general(tmp_path, files, monkeypatch)
        assert got[0] is not None and got[0] == got[1], got
        assert got[0].startswith(f"{files[1]}: its item ids and the pool's look like row "
                                 f"numbers"), got[0]
