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


def _rewritten(path: Path, how: str) -> None:
    """Save the table ``path`` anew, as an editor does (a new file put in its place): its
    rows reversed (``reordered``), or the surrogate's row :data:`BAD` and row 50 changing
    places (``swapped``), or rows 3 and 4 (``swapped_early``)."""
    lines = path.read_text().splitlines(True)
    rows = lines[1:]
    if how == "reordered":
        rows.reverse()
    else:
        a, b = (BAD, 50) if how == "swapped" else (3, 4)
        rows[a], rows[b] = rows[b], rows[a]
    new = path.with_name(path.name + ".new")
    new.write_text(lines[0] + "".join(rows))
    new.replace(path)


def _spoil(path: Path, what: str) -> None:
    """The surrogate's row :data:`BAD` a NaN (``nan``: refused by the fast reader, its line
    found by reading the table again) or row 3's id (``dup``: the pool's order broken,
    the repeat named by reading the table again), in place of its normalising one."""
    lines = path.read_text().splitlines(True)
    row = lines[BAD + 1].split(",")
    if what == "nan":
        row[1] = "nan"
    else:
        row[0] = "it3"
        row[1] = row[2].strip()
    lines[BAD + 1] = ",".join(row).rstrip("\n") + "\n"
    path.write_text("".join(lines))


def _edit_on_reread(monkeypatch: pytest.MonkeyPatch, path: Path, how: str) -> list[int]:
    """Rewrite ``path`` (:func:`_rewritten`) as the stream begins reading it again (the
    general path's reader of rows called, :func:`activetest.models.table.stream_rows`);
    the list gets a 1 when it was."""
    real = table_mod.stream_rows
    edits: list[int] = []

    def edited(*a: object, **k: object) -> object:
        if not edits:
            _rewritten(path, how)
            edits.append(1)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(table_mod, "stream_rows", edited)
    return edits


#: Per spoiled row and rewrite: the row first reached with another id (from 1), its id
#: as streamed and as read again (a NaN's block: every row read again is checked; a
#: repeat: the two rows named, row 3 first).
_SEEN = {("nan", "reordered"): (1, "it0", f"it{N - 1}"),
         ("nan", "swapped"): (51, "it50", f"it{BAD}"),
         ("dup", "reordered"): (4, "it3", f"it{N - 4}"),
         ("dup", "swapped_early"): (4, "it3", "it4")}


@pytest.mark.parametrize(("what", "how"), sorted(_SEEN))
def test_a_table_rewritten_before_its_rows_are_read_again_is_refused_naming_both_ids(
        what: str, how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused row found by reading the table again (a NaN the fast reader does not
    take, or a row repeating row 3's id), the table rewritten in between (its rows
    reordered, or two swapped): each row read again is confirmed by the id the stream
    read there, and the first that is not refuses ``init`` through the CLI, exit 2,
    naming the file, the row and both ids; no session file, no line named from the
    rewritten file's rows (before 2026-12-08: the NaN's new line was named as row 201's,
    and a repeat fell back to the general path, which read the rewritten file as
    if nothing had changed)."""
    files = _files(tmp_path)
    sur = files[1]
    _spoil(sur, what)
    monkeypatch.setattr(create, "load_inputs", no_general_path)  # (the stream says it)
    edits = _edit_on_reread(monkeypatch, sur, how)
    out = _init(tmp_path, files, code=2)
    assert edits, "the table was not read again"
    row, before, now = _SEEN[what, how]
    assert out.startswith(f"error: {sur} changed while init read it: "), out
    assert (f"row {row} of the table (from 1) had id {before!r} when it was read, but has "
            f"{now!r} (line {row + 1}) now") in out, out
    assert "duplicate id" not in out and "not finite" not in out, out  # no refusal
    assert not (tmp_path / "s.db").exists()  # named from the rewritten rows


@pytest.mark.parametrize("what", ["nan", "dup"])
def test_the_same_spoiled_table_unchanged_is_refused_naming_its_row(
        what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same spoiled files, unchanged, are refused by the stream naming
    the row's line (the NaN's; the repeat's, and row 3's)."""
    files = _files(tmp_path)
    _spoil(files[1], what)
    monkeypatch.setattr(create, "load_inputs", no_general_path)
    out = _init(tmp_path, files, code=2)
    assert f"{files[1]}: line {BAD + 2}" in out and "changed while" not in out, out
    if what == "dup":
        assert "line 5" in out, out
