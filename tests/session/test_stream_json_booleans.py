"""A JSON ``true`` or ``false`` in a ``table:`` file's class column is no number a user
meant: the table reader refuses it (``expected a number, got True``, naming the file,
the line or record and the column), and the streamed ``init`` refuses it in the same
words (2026-12-07: after a number in the same column, pyarrow converted it to 1.0 or 0.0,
so a JSONL or JSON-array table of logits with one ``true`` was taken by the stream and
refused by the general path).

Real files on disk; each refusal compared word for word between the two readers on the
same files (the general path made to fail while the stream runs), and once through the
real CLI (exit 2, one message). Pool labels are read by the general path's own reader in
both paths (:mod:`activetest.session.stream_pool`), so they agree there by construction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from session_support import general_and_streamed_refusals, no_general_path, run_cli

from activetest.session import create

N = 40
AT = 5  # the surrogate's row with the boolean


def _files(folder: Path, fmt: str, value: bool) -> tuple[Path, Path, Path]:
    """An sst2 pool of :data:`N` items and two tables of logits in its order (``jsonl``:
    one object a line; ``json``: an array), the surrogate's column ``negative`` ``value``
    (a JSON boolean) at row :data:`AT`, a number in every other row."""
    folder.mkdir(exist_ok=True)
    pool = folder / "pool.csv"
    pool.write_text("id,sentence,label\n" + "".join(
        f"it{i},text {i},{('negative', 'positive')[i % 2]}\n" for i in range(N)))
    out = [pool]
    for name in ("sur", "tgt"):
        recs: list[dict[str, object]] = [{"id": f"it{i}", "negative": 0.25, "positive": -0.5}
                                         for i in range(N)]
        if name == "sur":
            recs[AT]["negative"] = value
        path = folder / f"{name}.{fmt}"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs) if fmt == "jsonl"
                        else json.dumps(recs))
        out.append(path)
    return out[0], out[1], out[2]


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
@pytest.mark.parametrize("value", [True, False])
def test_a_boolean_after_numbers_is_refused_as_the_table_reader_refuses_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, value: bool) -> None:
    files = _files(tmp_path, fmt, value)
    general, streamed = general_and_streamed_refusals(tmp_path, files, monkeypatch,
                                                      "?kind=logits")
    where = f"line {AT + 1}" if fmt == "jsonl" else f"record {AT}"
    assert general == (f"{files[1]}: {where}: column 'negative': expected a number, "
                       f"got {value}"), general
    assert streamed == general


def test_the_cli_refuses_it_with_exit_2(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    pool, sur, tgt = _files(tmp_path, "jsonl", True)
    monkeypatch.setattr(create, "load_inputs", no_general_path)  # (the stream says it)
    out = run_cli("init", tmp_path / "s.db", "--pool", pool, "--task", "sst2",
                  "--id-column", "id", "--text-column", "sentence", "--surrogate",
                  f"table:{sur}?kind=logits", "--target", f"table:{tgt}?kind=logits",
                  "--no-progress", code=2)
    assert " ".join(out.split()) == (f"error: {sur}: line {AT + 1}: column 'negative': "
                                     f"expected a number, got True"), out
    assert not (tmp_path / "s.db").exists()
