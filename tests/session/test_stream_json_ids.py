"""A JSONL or JSON-array table whose ids are numbers in some rows and strings in others
streams (docs/pool-scale.md, "`init` in chunks").

pyarrow's JSON reader takes such an id column for one that changes type and refuses the
block, and a block of records handed to pyarrow could not be one array, so such tables
took the general path (every row a Python object). The table reader takes a string id
as written and an integer in decimal, which is unambiguous; the stream now reads such
ids by the same rule. Real files, compared with the general path's session (bit for
bit) or refusal (word for word).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from session_support import create_from_tables as _create
from session_support import streamed_is_the_general_session

from activetest.session import create, stream_base, stream_init

N = 300  # blocks of 64


def _id(i: int) -> Any:
    """Item ``i``'s id as written: a number for even items, a string for odd ones."""
    return i if i % 2 == 0 else f"it{i}"


def _files(folder: Path, fmt: str, spoil: dict[int, Any] | None = None
           ) -> tuple[Path, Path, Path]:
    """A JSONL pool and two tables in ``fmt`` (``jsonl``, ``json``, ``.gz`` gzipped),
    the ids of :func:`_id`; ``spoil``: the surrogate's row -> the id written there."""
    rng = np.random.default_rng(11)
    z = rng.normal(size=(2, N, 2))
    lp = z - np.logaddexp(z[..., :1], z[..., 1:])
    pool = folder / "pool.jsonl"
    pool.write_text("".join(json.dumps({"id": _id(i), "sentence": f"text {i}",
                                        "label": ("negative", "positive")[i % 3 == 0]}) + "\n"
                            for i in range(N)))
    out = [pool]
    for k, name in enumerate(("surrogate", "target")):
        recs = [{"id": _id(i), "negative": float(lp[k, i, 0]),
                 "positive": float(lp[k, i, 1])} for i in range(N)]
        for i, value in (spoil or {}).items() if k == 0 else ():
            recs[i]["id"] = value
        base = fmt.removesuffix(".gz")
        text = (json.dumps(recs, indent=1) if base == "json"
                else "".join(json.dumps(r) + "\n" for r in recs))
        path = folder / f"{name}.{fmt}"
        if fmt.endswith(".gz"):
            path.write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            path.write_text(text)
        out.append(path)
    return out[0], out[1], out[2]


@pytest.mark.parametrize("fmt", ["jsonl", "json", "jsonl.gz", "json.gz"])
def test_ids_of_both_kinds_stream_into_the_general_paths_session(
        fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids that are numbers and strings in one table (in every block): the stream runs to
    its end, the general path is not entered, and the session is the general path's."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    streamed_is_the_general_session(tmp_path, _files(tmp_path, fmt), monkeypatch)


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
@pytest.mark.parametrize("spoil,words", [
    ({200: "4"}, "duplicate id '4'"),  # item 4's id, a number in its row, as text here
    ({200: 200.0}, "must be a string or integer"),  # a float is no id
    ({200: True}, "must be a string or integer"),
])
def test_an_id_of_both_kinds_is_refused_as_the_general_path_refuses_it(
        spoil: dict[int, Any], words: str, fmt: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The same id written as a number in one row and as text in another is one id (the
    table reader's rule): refused as repeated, naming both rows; an id that is neither a
    string nor an integer is refused naming its row, as the general path names it."""
    monkeypatch.setattr(stream_base, "BLOCK", 64)
    files = _files(tmp_path, fmt, spoil)
    real_try = stream_init.try_stream
    monkeypatch.setattr(stream_init, "try_stream", lambda *a, **k: None)
    with pytest.raises(ValueError) as general:
        _create(tmp_path / "g.db", files)
    monkeypatch.setattr(stream_init, "try_stream", real_try)
    monkeypatch.setattr(create, "load_inputs", lambda *a, **k: pytest.fail("general path"))
    with pytest.raises(ValueError) as streamed:
        _create(tmp_path / "s.db", files)
    assert str(streamed.value) == str(general.value)
    assert str(streamed.value).startswith(str(files[1])) and words in str(streamed.value)
