"""``estimate --compare table:FILE`` of a large table reads only the labelled items'
rows (QA: at 1e6 items it read the whole table into memory, 0.9 GB, for 30 labels), with
every check of the table read whole: the same numbers, the same refusals."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles, make_pool_files, run_cli

from activetest.models import table, table_read


def _session(tmp_path: Path) -> tuple[PoolFiles, Path]:
    pf = make_pool_files(tmp_path / "data")
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
            f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--id-column", "id",
            "--seed", "5", "--no-progress")
    run_cli("label", db, "--n", "12", "--from-data")
    return pf, db


def _other(path: Path, pf: PoolFiles, extra: int = 2000) -> Path:
    """The second target's table with ``extra`` rows of items the pool does not have."""
    lines = pf.target2.read_text(encoding="utf-8").splitlines()
    rng = np.random.default_rng(0)
    z = rng.normal(size=(extra, 2))
    lp = z - np.logaddexp(z[:, :1], z[:, 1:])
    lines += [f"x{i},{float(a)!r},{float(b)!r}" for i, (a, b) in enumerate(lp)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _compare_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("compare"))


def test_compare_reads_only_the_labelled_rows(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    pf, db = _session(tmp_path)
    other = _other(tmp_path / "other.csv", pf)
    whole_db = tmp_path / "whole.db"
    shutil.copy(db, whole_db)
    want = _compare_line(run_cli("estimate", whole_db, "--compare", f"table:{other}"))
    monkeypatch.setattr(table, "STREAM_BYTES", 0)  # every table is large

    def never(*a: object, **k: object) -> object:
        raise AssertionError("the whole table was read into memory")

    monkeypatch.setattr(table_read, "read_table", never)
    monkeypatch.setattr(table, "read_table", never)
    got = _compare_line(run_cli("estimate", db, "--compare", f"table:{other}"))
    assert got.replace(str(db), "") == want.replace(str(whole_db), "")
    assert "LURE estimate" in got


@pytest.mark.parametrize("problem", ["a value", "a repeated id", "a labelled item's row"])
def test_compare_refuses_what_the_whole_table_refuses(tmp_path: Path, problem: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A problem in a row of no labelled item is still refused (every row is read), with
    the file and the line; a labelled item without a row is named."""
    pf, db = _session(tmp_path)
    other = _other(tmp_path / "other.csv", pf)
    lines = other.read_text(encoding="utf-8").splitlines()
    if problem == "a value":
        lines[1500] = "x1499,nan,-0.1"
        want = f"{other}: line 1501: column 'negative': value 'nan' is not finite"
    elif problem == "a repeated id":
        lines[1500] = "x3,-0.6931,-0.6931"
        want = f"{other}: line 1501: duplicate id 'x3' (first at line"
    else:
        from activetest.session.workflow import Session

        with Session.open(db) as s:
            gone = s.acquisitions()[4].item_id
        lines = [line for line in lines if not line.startswith(f"{gone},")]
        want = f"{other}: no row for 1 of 12 item id(s): '{gone}'"
    other.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.setattr(table, "STREAM_BYTES", 0)
    out = " ".join(run_cli("estimate", db, "--compare", f"table:{other}", code=2).split())
    assert want in out, out
    monkeypatch.setattr(table, "STREAM_BYTES", 1 << 40)  # the same as read whole
    assert want in " ".join(run_cli("estimate", db, "--compare", f"table:{other}",
                                    code=2).split())
