"""A streamed ``init`` whose ``table:`` file changes while it reads it: the refused row's
line is found by reading the table again (:func:`activetest.session.stream_tables.
read_again`), each row reached there checked by its id against the id streamed. Where
they differ, the user is told once, with exit 2: the file, the row and both ids (as read
and now), never a traceback, never a line named from another row (2026-12-07: a
``StreamMismatchError`` reached the terminal as a traceback, exit 1).

The files are real CSV files on disk and ``init`` is the real CLI (typer's runner); the
table is rewritten (its first row deleted) at the moment the stream begins reading it
again, through a hook on the general path's reader of rows
(:func:`activetest.models.table.stream_rows`), as an editor's save between the stream's
two readings would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from session_support import no_general_path, run_cli

from activetest.errors import UserFacingError
from activetest.models import table as table_mod
from activetest.session import create, stream_base

N = 300
BAD = 200  # the surrogate's row that does not normalise


def _files(folder: Path) -> tuple[Path, Path, Path]:
    """An sst2 pool of :data:`N` items and two tables of log-probs in its order, the
    surrogate's row :data:`BAD` not normalising (refused by its line, found by reading
    the table again)."""
    pool = folder / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(
        f"it{i},text {i},{('negative', 'positive')[i % 2]}\n" for i in range(N)))
    out = [pool]
    for name in ("sur", "tgt"):
        lp = np.log(np.full((N, 2), 0.5))
        if name == "sur":
            lp[BAD, 0] = -0.5
        path = folder / f"{name}.csv"
        path.write_text("id,negative,positive\n" + "".join(
            f"it{i},{float(a)!r},{float(b)!r}\n" for i, (a, b) in enumerate(lp)))
        out.append(path)
    return out[0], out[1], out[2]


def _init(folder: Path, files: tuple[Path, Path, Path], code: int) -> str:
    pool, sur, tgt = files
    return " ".join(run_cli("init", folder / "s.db", "--pool", pool, "--task", "sst2",
                            "--id-column", "id", "--text-column", "sentence",
                            "--surrogate", f"table:{sur}", "--target", f"table:{tgt}",
                            "--seed", "3", "--no-progress", code=code).split())


def test_a_table_changed_while_init_reads_it_is_one_message_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(tmp_path)
    sur = files[1]
    monkeypatch.setattr(create, "load_inputs", no_general_path)  # (the stream says it)
    real = table_mod.stream_rows
    edits: list[int] = []

    def edited_first(*a: object, **k: object) -> object:
        if not edits:  # the first reading again: the file saved anew, its first row gone
            lines = sur.read_text().splitlines(True)
            sur.write_text(lines[0] + "".join(lines[2:]))
            edits.append(1)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(table_mod, "stream_rows", edited_first)
    out = _init(tmp_path, files, code=2)
    assert edits
    assert out.startswith(f"error: {sur} changed while init read it: "), out
    assert "row 1 of the table (from 1) had id 'it0' when it was read, but has 'it1' (line 2)" \
        " now" in out, out
    assert "line 202" not in out and "line 201" not in out, out  # no line named from it
    assert not (tmp_path / "s.db").exists()


def test_the_same_table_unchanged_names_the_row_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same files, unchanged, are refused naming the row's line."""
    files = _files(tmp_path)
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    out = _init(tmp_path, files, code=2)
    assert f"{files[1]}: line {BAD + 2}" in out and "changed while" not in out, out


def test_a_mismatch_is_said_to_the_user_not_raised_as_a_crash() -> None:
    """Any :class:`StreamMismatchError` (the two readers disagreeing too) is an error the
    CLI says in one message with exit 2 (:class:`UserFacingError`)."""
    assert issubclass(stream_base.StreamMismatchError, UserFacingError)
