"""A table's ids are read by one rule on the stream and on the general path: text with
Python's white space (``str.strip``) trimmed, and nothing else (docs/pool-scale.md,
"`init` in chunks").

The fast (streamed) reader trimmed a text id with pyarrow's ``utf8_trim_whitespace``,
the general path with ``str.strip``: where the two tables of white space differed, a
table streamed at pool scale would join (or refuse) ids the general path reads
otherwise, a silent join difference. Each character Python calls white space
(``c.isspace()``: the ASCII ones, ``\\x1c``-``\\x1f``, ``\\x85``, ``\\xa0``,
``\\u2000``-``\\u200a``, ``\\u3000``, ...) is written before, after and around a pool's
and a probability table's ids, in every format the stream reads, in the pool's order and
shuffled (joined by id); ``\\u200b`` and ``\\ufeff``, which are not white space to
Python, are kept in an id by both (a join refused in the same words). Real files;
sessions compared bit for bit, refusals word for word.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from session_support import general_and_streamed_refusals, streamed_is_the_general_session

from activetest.session import stream_base

#: Every character Python's ``str.strip`` removes.
SPACES = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
#: Characters that look like white space and are not to Python (kept in an id).
NOT_SPACES = "\u200b\ufeff"
FORMATS = ["csv", "tsv", "jsonl", "json", "parquet"]


def _padded(i: int, chars: str, shift: int = 0) -> str:
    """Item ``i``'s id ``it{i}`` with one of ``chars`` before it, after it or both
    (cycling through both from ``shift``: each character in each place)."""
    c = chars[(i + shift) % len(chars)]
    where = ((i + shift) // len(chars)) % 3
    return (c if where != 1 else "") + f"it{i}" + (c if where != 0 else "")


def _write(path: Path, fmt: str, header: list[str], rows: list[list[object]]) -> None:
    """``rows`` under ``header`` in ``fmt``: CSV and TSV quoted where a cell needs it
    (Python's writer, lines ended by ``\\r\\n``: a cell holding ``\\r`` or ``\\n``
    quoted), JSONL one object a line, JSON an array, Parquet by pyarrow."""
    if fmt in ("csv", "tsv"):
        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, delimiter="," if fmt == "csv" else "\t", lineterminator="\r\n")
            w.writerow(header)
            w.writerows(rows)
    elif fmt in ("jsonl", "json"):
        recs = [dict(zip(header, r, strict=True)) for r in rows]
        path.write_text(json.dumps(recs, indent=1) if fmt == "json" else
                        "".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({h: [r[k] for r in rows] for k, h in enumerate(header)}),
                       path)


def _files(folder: Path, fmt: str, table_chars: str, *, shuffled: bool = False
           ) -> tuple[Path, Path, Path]:
    """An sst2 pool (JSONL; its ids padded with :data:`SPACES`) and two probability tables
    in ``fmt``, in the pool's order or ``shuffled``: the surrogate's ids padded with
    ``table_chars``, the target's with :data:`SPACES` (each row another character than
    its item's in the pool). Only the surrogate may be refused: where both tables are,
    the general path names the one whose scoring fails first (they are scored in two
    threads), which a comparison with the stream's would make flaky."""
    n = 3 * len(SPACES) + 7  # every character in every place, in blocks of 16 rows
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, n)
    pool = folder / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": _padded(i, SPACES, 1), "sentence": f"text {i}",
                                        "label": ("negative", "positive")[y[i]]}) + "\n"
                            for i in range(n)), encoding="utf-8")
    order = rng.permutation(n) if shuffled else np.arange(n)
    out = [pool]
    for name, chars in (("surrogate", table_chars), ("target", SPACES)):
        p = rng.dirichlet([1.0, 1.0], size=n)
        rows: list[list[object]] = [[_padded(int(i), chars, 2), float(p[i, 0]),
                                     float(p[i, 1])] for i in order]
        path = folder / f"{name}.{fmt}"
        _write(path, fmt, ["id", "negative", "positive"], rows)
        out.append(path)
    return out[0], out[1], out[2]


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_ids_padded_with_white_space_stream_into_the_general_paths_session(
        fmt: str, shuffled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every white space character Python strips, before, after and around the pool's and
    the table's ids: the stream runs to its end (the general path made to fail), and its
    session is the general path's, bit for bit (the ids trimmed alike, each row joined to
    its item)."""
    monkeypatch.setattr(stream_base, "BLOCK", 16)
    files = _files(tmp_path, fmt, SPACES, shuffled=shuffled)
    _same_session_of_probs(tmp_path, files, monkeypatch)


def _same_session_of_probs(folder: Path, files: tuple[Path, Path, Path],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`streamed_is_the_general_session` of tables of probabilities (``?kind=probs``)."""
    import session_support

    real = session_support.create_from_tables
    monkeypatch.setattr(session_support, "create_from_tables",
                        lambda db, fs, kind="", **kw: real(db, fs, "?kind=probs", **kw))
    streamed_is_the_general_session(folder, files, monkeypatch)


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_characters_that_are_not_white_space_stay_in_an_id_on_both_paths(
        fmt: str, shuffled: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``\\u200b`` and ``\\ufeff`` around a table's ids (not white space to Python): kept
    in the id by both paths, so no row is joined to its item, refused in the same words
    by both (not trimmed on one path, joined there)."""
    monkeypatch.setattr(stream_base, "BLOCK", 16)
    files = _files(tmp_path, fmt, NOT_SPACES, shuffled=shuffled)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch,
                                                      kind="?kind=probs")
    assert streamed == general
    assert "surrogate." in general and ("no row for" in general or "where item" in general)


def test_the_fast_readers_trim_is_pythons_strip_for_every_code_point() -> None:
    """pyarrow's ``utf8_trim_whitespace`` (the fast reader's trim of a text id) removes
    from each end exactly what ``str.strip`` (the general path's) removes, for every
    code point but the surrogates (no UTF-8 text holds one): a pyarrow built on other
    Unicode data than this Python is named by the first character that differs."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chars = [chr(i) for i in range(sys.maxunicode + 1) if not 0xD800 <= i < 0xE000]
    for text in ("{c}x{c}", "{c}", "x{c}{c}y"):
        given = [text.format(c=c) for c in chars]
        got = pc.utf8_trim_whitespace(pa.array(given)).to_pylist()
        differ = [f"U+{ord(c):04X}" for c, g, r in zip(chars, given, got, strict=True)
                  if r != g.strip()]
        assert not differ, (text, differ[:10])
