"""A streamed ``init`` whose first table is refused counts no pool ids as numbers.

The pool's whole-number ids are counted to tell a join by ids that look like positions
(:mod:`activetest.session.table_positions`); an id written as another spelling of a whole
number (``007``) is counted in the session file, every item read again
(:func:`activetest.session.stream_number_ids.sql_number_ids`). Once the first table
given is refused, no table is joined, so the count was wasted work (2026-12-07); and
where it could not be made there (a whole number above SQLite's largest integer) the
stream fell back to the general path, which reads the pool and the tables into memory to
name the same refusal (at 1e7 items, killed for memory first), or rather failed: the
count's refusal, raised in SQLite's call of a function, reached the stream as a failed
write ("cannot create the session file"), with good tables too. Real files; the refusal
compared word for word with the general path's, a session made compared with its.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from session_support import create_from_tables, general_and_streamed_refusals, same_session

from activetest.session import stream_base, stream_init, stream_number_ids

N = 200


def _files(folder: Path, huge: bool, nan: bool = True) -> tuple[Path, Path, Path]:
    """A pool of ids written with leading zeros (``007``; with ``huge``, the last a whole
    number above 2**63) and two CSV tables in its order, the surrogate's row 5 a NaN
    (``nan``; else good tables)."""
    ids = [f"{i:04d}" for i in range(N)]
    if huge:
        ids[-1] = str(2**64 + 3)
    pool = folder / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(
        f"{ids[i]},text {i},{('negative', 'positive')[i % 2]}\n" for i in range(N)))
    rng = np.random.default_rng(3)
    out = [pool]
    for k, name in enumerate(("surrogate", "target")):
        z = rng.normal(size=(N, 2))
        lp = z - np.logaddexp(z[:, :1], z[:, 1:])
        cells = [[repr(float(v)) for v in row] for row in lp]
        if k == 0 and nan:
            cells[5][0] = "nan"
        path = folder / f"{name}.csv"
        path.write_text("id,negative,positive\n" + "".join(
            f"{ids[i]},{cells[i][0]},{cells[i][1]}\n" for i in range(N)))
        out.append(path)
    return out[0], out[1], out[2]


@pytest.mark.parametrize("huge", [False, True])
def test_the_first_tables_refusal_counts_no_pool_ids(
        huge: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The surrogate refused (a NaN at row 5): the general path's message, from the
    stream (no fall back), and the pool's ids not counted in the session file."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, huge)
    counted: list[str] = []
    real = stream_number_ids.sql_number_ids

    def spy(conn: object, ids: str, **k: bool) -> object:
        counted.append(ids)
        return real(conn, ids, **k)

    monkeypatch.setattr(stream_number_ids, "sql_number_ids", spy)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch)
    assert streamed == general
    assert streamed.startswith(f"{files[1]}: line 7: column 'negative': value 'nan'"), streamed
    assert counted == [], counted


def test_an_id_too_large_for_sqlite_in_good_tables_makes_the_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Good tables beside such a pool (ids ``0007``, one above 2**63): the session is made,
    as the general path makes it (that path counts the ids); the init failed with "cannot
    create the session file (user-defined function raised exception)" (2026-12-07): the
    count's refusal, raised in SQLite's call of a function, reached the stream as a failed
    write."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, huge=True, nan=False)
    create_from_tables(tmp_path / "s.db", files).close()
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    create_from_tables(tmp_path / "g.db", files).close()
    same_session(tmp_path / "s.db", tmp_path / "g.db")
