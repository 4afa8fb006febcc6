"""The streamed ``init`` and a pool file's bad record (docs/pool-scale.md).

A CSV, TSV, JSONL or Parquet pool with one bad record (no id, an empty or repeated id, no
text, a label the task has not, a line that is not JSON, a row of another width) made
the streamed ``init`` fall back to the general path, which reads the whole pool and every
table into Python objects only to name the record (about 2.4 GB per million items:
killed for memory from ~1e7). The stream now refuses it itself, with the general path's
own message naming the file, the line (or row) and the item, and the general path is
never entered. Each case is made in real files and compared with the general path's
message on the same files.

tests/session/test_stream_refusal_order.py makes the same comparison for another
question (which of several problems, in the tables and the pool, is named first); here
one bad pool record in each pool format. Neither file's cases are the other's.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import (
    general_and_streamed_refusals,
    init_from_tables,
    init_refusal,
    no_general_path,
    spy_on_stream,
)

from activetest.formats.tables import read_records
from activetest.session import create, stream_base, stream_init
from activetest.session.workflow import Session

N = 300
BAD = 150  # the spoiled record: in the third block of 64


def _pool_and_tables(folder: Path, fmt: str) -> tuple[list[dict[str, Any]], Path, Path]:
    """The pool's records (texts over two lines but in TSV, which cannot hold a line
    break) and the two CSV tables of log-probs, in the pool's order."""
    rng = np.random.default_rng(7)
    z = rng.normal(size=(2, N, 2))
    lp = z - np.logaddexp(z[..., :1], z[..., 1:])
    brk = " " if fmt == "tsv" else "\n"
    records = [{"id": f"it{i}", "sentence": f"text \"{i}\", é{brk}{i % 7}",
                "label": ("negative", "positive")[i % 2]} for i in range(N)]
    tables = []
    for k, name in enumerate(("surrogate", "target")):
        path = folder / f"{name}.csv"
        path.write_text("id,negative,positive\n" + "".join(
            f"it{i},{float(lp[k, i, 0])!r},{float(lp[k, i, 1])!r}\n" for i in range(N)))
        tables.append(path)
    return records, tables[0], tables[1]


def _write(path: Path, fmt: str, records: list[dict[str, Any]]) -> None:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), path)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    elif fmt == "tsv":
        path.write_text("id\tsentence\tlabel\n" + "".join(
            f"{r['id']}\t{r['sentence']}\t{r['label']}\n" for r in records), encoding="utf-8")
    else:
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "sentence", "label"])
            w.writerows([r["id"], r["sentence"], r["label"]] for r in records)


_MARK = "SPOILED-HERE"


def _spoil(records: list[dict[str, Any]], case: str) -> str | None:
    """Write the defect ``case`` into record :data:`BAD` (and others the case names);
    returns the raw text that replaces :data:`_MARK` in the written file, if any."""
    r = records[BAD]
    if case == "none":  # a good pool
        return None
    if case == "empty id":
        r["id"] = " "
    elif case == "repeated id":  # of a record of an earlier block
        r["id"] = "it5"
    elif case == "repeated id, then an empty id":  # the general path names the first
        r["id"] = "it5"
        records[BAD + 10]["id"] = ""
    elif case == "label":
        r["label"] = "maybe"
    elif case == "no id":
        del r["id"]
    elif case == "no text":
        del r["sentence"]
    elif case == "null text":
        r["sentence"] = None
    elif case == "keys of a later block":  # a whole block's records: read by the first
        for rec in records[192:256]:  # record's keys, as the general path reads them (the
            rec["text"] = rec.pop("sentence")  # block's own were taken: never refused)
    else:
        r["sentence"] = _MARK
        return {"not json": '{"id": "it150", "sentence": ', "not an object": "[1, 2]",
                "width": "one,two", "tsv width": "one\ttwo", "quote": 'a "b" c'}[case]
    return None


_CASES = [
    *((fmt, c) for fmt in ("csv", "tsv", "jsonl", "parquet")
      for c in ("empty id", "repeated id", "label")),
    ("csv", "repeated id, then an empty id"), ("parquet", "repeated id, then an empty id"),
    ("jsonl", "no id"), ("jsonl", "no text"), ("jsonl", "null text"), ("parquet", "null text"),
    ("jsonl", "not json"), ("jsonl", "not an object"), ("jsonl", "keys of a later block"),
    ("csv", "width"), ("csv", "quote"), ("tsv", "tsv width"),
    # gzipped pools (streamed since 2026-12-07: they took the general path)
    ("csv.gz", "empty id"), ("csv.gz", "width"), ("tsv.gz", "repeated id"),
    ("jsonl.gz", "label"), ("jsonl.gz", "not json"), ("jsonl.gz", "keys of a later block")]


def _make(tmp_path: Path, fmt: str, case: str) -> tuple[Path, Path, Path]:
    """The pool (``fmt``; ``csv.gz``: a CSV pool gzipped) with the defect ``case``, and
    the two tables."""
    base = fmt.removesuffix(".gz")
    records, sur, tgt = _pool_and_tables(tmp_path, base)
    raw = _spoil(records, case)
    pool = tmp_path / f"pool.{base}"
    _write(pool, base, records)
    if raw is not None:  # a defect no writer makes: the record's line, replaced
        text = pool.read_text(encoding="utf-8")
        line = next(s for s in text.splitlines(keepends=True) if _MARK in s)
        pool.write_text(text.replace(line, raw + "\n"), encoding="utf-8")
    return _gzipped(pool) if fmt.endswith(".gz") else pool, sur, tgt


def _gzipped(path: Path) -> Path:
    """``path`` gzipped as ``path.gz`` (``path`` removed)."""
    out = path.with_name(path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    path.unlink()
    return out


@pytest.mark.parametrize("fmt,case", _CASES)
def test_a_bad_pool_record_is_refused_by_the_stream(
        fmt: str, case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each bad record is refused by the stream with the general path's message, naming
    the pool file and the record's line (row, for Parquet; a CSV record's last line, as
    the csv module counts them: these texts span two lines), and the item where it has
    one; no session file is left and the general path is never entered."""
    files = _make(tmp_path, fmt, case)
    pool = files[0]
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    bad = 192 if case == "keys of a later block" else BAD
    if case in ("not json", "not an object", "width", "tsv width", "quote"):
        where = {"jsonl": f"line {bad + 1}", "tsv": f"line {bad + 2}",
                 "csv": f"line {2 * bad + 2}"}[fmt.removesuffix(".gz")]  # the line
        # replaced (one line)
    else:
        where = read_records(pool)[bad][0] if fmt != "parquet" else f"row {bad + 1}"
    assert streamed.startswith(f"{pool}, {where}: "), streamed
    if "repeated id" in case:
        first = read_records(pool)[5][0]
        assert f"duplicate id 'it5' (first at {first})" in streamed
    if case == "label":
        assert "'maybe'" in streamed


@pytest.mark.parametrize("fmt,spoil", [("csv", b"\xff"), ("csv", b"\x00"),
                                       ("jsonl", b"\xff"), ("csv.gz", b"\xff"),
                                       ("jsonl.gz", b"\x00"), ("csv.gz", b"cut"),
                                       ("jsonl.gz", b"cut")])
def test_a_bad_record_in_a_file_the_general_path_refuses_first_takes_it(
        fmt: str, spoil: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad record in a file that also has a byte that is not UTF-8 or a NUL character
    (later in the file): the general path names that byte first, reading the file whole
    before any record (memory: the file's bytes, not its records), so the stream leaves
    it to the general path, and the message is the byte's, as before."""
    files = _make(tmp_path, fmt, "label")
    pool = files[0]
    gz = fmt.endswith(".gz")
    data = gzip.decompress(pool.read_bytes()) if gz else pool.read_bytes()
    if spoil != b"cut":
        cut = data.rindex(b"negative")
        data = data[:cut] + spoil + data[cut:]
    data = gzip.compress(data, mtime=0) if gz else data
    pool.write_bytes(data[:-40] if spoil == b"cut" else data)  # a gzip stream cut short
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    general = []
    real = create.load_inputs

    def spy(*a: object, **k: object) -> object:
        general.append(1)
        return real(*a, **k)

    monkeypatch.setattr(create, "load_inputs", spy)
    said = init_refusal(tmp_path / "s.db", files)
    assert general and "maybe" not in said
    assert {b"\x00": "NUL character", b"cut": "not a valid gzip file"}.get(
        spoil, "is not valid utf-8") in said


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "csv.gz", "tsv.gz", "jsonl.gz"])
def test_a_good_pool_streams_as_before(fmt: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A text pool without a bad record streams (the stream does not fall back: TSV
    pools took the general path before) into the session the general path writes (the
    items compared; test_columns compares the rest)."""
    from activetest.session.store import SessionStore

    pool, sur, tgt = _make(tmp_path, fmt, "none")
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    ran = spy_on_stream(monkeypatch)
    Session.create(tmp_path / "s.db", pool=pool, task="sst2", surrogate=f"table:{sur}",
                   target=f"table:{tgt}", seed=3, pool_options={"id_column": "id"},
                   progress=False).close()
    assert ran
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    Session.create(tmp_path / "g.db", pool=pool, task="sst2", surrogate=f"table:{sur}",
                   target=f"table:{tgt}", seed=3, pool_options={"id_column": "id"},
                   progress=False).close()
    a, b = SessionStore.open(tmp_path / "s.db"), SessionStore.open(tmp_path / "g.db")
    try:
        assert a.items() == b.items()
        assert a.config() == b.config()  # the pool's sha256: of its text, gunzipped
    finally:
        a.close()
        b.close()


def test_init_refuses_a_bad_pool_line_with_exit_2_and_one_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line: a streamed ``init`` given a JSONL pool with a line that is not
    JSON exits 2 with the one message naming the file and line, no traceback, nothing
    written, the general path not entered."""


    pool, sur, tgt = _make(tmp_path, "jsonl", "not json")
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    db = tmp_path / "s.db"
    code, said = init_from_tables(db, pool, sur, tgt)
    assert code == 2, said
    assert f"{pool}, line {BAD + 1}: invalid JSON" in said
    assert said.count("invalid JSON") == 1 and "Traceback" not in said
    assert not db.exists() and not list(tmp_path.glob(".*creating*"))
