"""TableScorer: class scores computed elsewhere, read from CSV/TSV/JSONL/Parquet files."""

from __future__ import annotations

import contextlib
import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from activetest.data.task import Item, Task
from activetest.models import table
from activetest.models.base import Scorer
from activetest.models.table import TableScorer, read_table

_HC = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]  # (a loaded CI machine)

TASK = Task(name="fpb", instruction="Classify.\n", classes=("negative", "neutral", "positive"))
RNG = np.random.default_rng(7)
LOGITS = RNG.normal(0.0, 3.0, size=(12, 3))
IDS = [f"fpb-{i:03d}" for i in range(12)]


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


LOGPROBS = _log_softmax(LOGITS)
VALUES = {"logits": LOGITS, "logprobs": LOGPROBS, "probs": np.exp(LOGPROBS)}


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def _reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: the table read whole (a small file) and row by row, keeping only
    the rows asked for (a file above ``STREAM_BYTES``, here every file): the same
    numbers and the same messages."""
    if request.param == "streamed":
        monkeypatch.setattr(table, "STREAM_BYTES", 0)
    return str(request.param)


def _items(ids: list[str]) -> list[Item]:
    return [Item(id=i, fields={"text": "t"}) for i in ids]


def _write(path: Path, kind: str, *, columns=TASK.classes, id_column: str = "id",
           ids: list[str] = IDS) -> Path:
    vals = VALUES[kind]
    rows = [{id_column: i, **{c: float(v) for c, v in zip(columns, vals[r], strict=True)},
             "note": "x"} for r, i in enumerate(ids)]
    fmt = path.suffix
    if fmt in (".csv", ".tsv"):
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]),
                               delimiter="\t" if fmt == ".tsv" else ",")
            w.writeheader()
            w.writerows({k: repr(v) if isinstance(v, float) else v for k, v in r.items()}
                        for r in rows)
    elif fmt == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif fmt == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
@pytest.mark.parametrize("kind", ["logprobs", "probs", "logits"])
def test_each_kind_and_format(tmp_path: Path, suffix: str, kind: str) -> None:
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    path = _write(tmp_path / f"preds{suffix}", kind)
    scorer = TableScorer(path, kind=kind)
    assert isinstance(scorer, Scorer)
    order = [5, 0, 11, 3]
    out = scorer.score(TASK, _items([IDS[i] for i in order]), progress=False)
    assert out.shape == (4, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out, LOGPROBS[order], atol=1e-12)


def test_explicit_columns_and_id_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", "logits", columns=("c0", "c1", "c2"), id_column="doc")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['negative', 'neutral', "
                                         r"'positive'\]; the file has \['doc', 'c0'"):
        TableScorer(path, id_column="doc", kind="logits").score(TASK, _items(IDS[:2]))
    scorer = TableScorer(path, id_column="doc", columns=["c2", "c1", "c0"], kind="logits")
    out = scorer.score(TASK, _items(IDS[:3]))
    np.testing.assert_allclose(out, LOGPROBS[:3, ::-1], atol=1e-12)
    with pytest.raises(ValueError, match="has 2 entries"):
        TableScorer(path, id_column="doc", columns=["c0", "c1"]).score(TASK, _items(IDS[:1]))


def test_gzip_json_and_spec_options(tmp_path: Path) -> None:
    import gzip

    from activetest.models.registry import get_scorer
    from activetest.session.scoring import stored_spec

    path = _write(tmp_path / "p.csv", "probs", columns=("c0", "c1", "c2"), id_column="doc")
    gz = tmp_path / "p.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    rows = [{"doc": i, "c0": float(a), "c1": float(b), "c2": float(c)}
            for i, (a, b, c) in zip(IDS, VALUES["probs"], strict=True)]
    js = tmp_path / "p.json"
    js.write_text(json.dumps(rows), encoding="utf-8")
    for f in (path, gz, js):
        scorer = get_scorer(f"table:{f}?kind=probs&id=doc&columns=c0,c1,c2")
        np.testing.assert_allclose(scorer.score(TASK, _items(IDS[:4])), LOGPROBS[:4],
                                   atol=1e-9)
    with pytest.raises(ValueError, match=r"unknown option 'knd=probs'"):
        get_scorer(f"table:{path}?knd=probs")
    with pytest.raises(ValueError, match=r"tolerance='x' is not a number"):
        get_scorer(f"table:{path}?tolerance=x")
    # stored specs keep their options, with the path made absolute
    assert stored_spec(f"table:{path}?kind=probs") == f"table:{path.resolve()}?kind=probs"


def test_integer_ids_match_string_item_ids(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.jsonl", "logprobs", ids=[str(i) for i in range(12)])
    text = path.read_text(encoding="utf-8").replace('"id": "3"', '"id": 3')
    path.write_text(text, encoding="utf-8")
    out = TableScorer(path).score(TASK, _items(["3", "4"]))
    np.testing.assert_allclose(out, LOGPROBS[[3, 4]], atol=1e-12)


def test_missing_ids_are_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", "logprobs")
    scorer = TableScorer(path)
    with pytest.raises(ValueError, match=r"no row for 2 of 3 item id\(s\): 'nope-1', 'nope-2'"):
        scorer.score(TASK, _items([IDS[0], "nope-1", "nope-2"]))
    many = [f"m{i}" for i in range(15)]
    with pytest.raises(ValueError, match="and 5 more"):
        scorer.score(TASK, _items(many))


def _csv_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(("kind", "cell", "message"), [
    ("logits", "nan", "value 'nan' is not finite"),
    ("logits", "inf", "value 'inf' is not finite"),
    ("logits", "-Infinity", "not finite"),
    ("logits", "abc", "expected a number, got 'abc'"),
    ("logits", "", "expected a number, got ''"),
    ("probs", "0.9", "probabilities sum to"),
    ("probs", "-0.1", r"must lie in \[0, 1\]"),
    ("logprobs", "0.5", "do not normalise"),
])
def test_bad_csv_value_names_file_line_column(tmp_path: Path, kind: str, cell: str,
                                              message: str) -> None:
    path = _write(tmp_path / "p.csv", kind)
    lines = _csv_lines(path)
    cells = lines[4].split(",")
    cells[2] = cell  # column "neutral" of the 4th data row (line 5)
    lines[4] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        TableScorer(path, kind=kind).score(TASK, _items(IDS[:1]))
    assert f"{path}: line 5:" in str(info.value)
    if "number" in message or "finite" in message:
        assert "column 'neutral'" in str(info.value)


def test_a_probability_of_zero_names_file_and_line(tmp_path: Path) -> None:
    """A hard prediction (probability exactly 0 for a class) has log-probability -inf,
    which no estimate can use: refused where it is read, naming the file and line (it was
    a message about a non-finite value in ``target_logprobs`` at row 0, no file, no
    line)."""
    path = _write(tmp_path / "p.csv", "probs")
    lines = _csv_lines(path)
    cells = lines[4].split(",")
    cells[1:4] = ["0", "0.25", "0.75"]
    lines[4] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a probability of 0") as info:
        TableScorer(path, kind="probs").score(TASK, _items(IDS[:1]))
    assert f"{path}: line 5:" in str(info.value) and "above 0" in str(info.value)


def test_a_table_of_probabilities_read_as_anything_else_says_probs(tmp_path: Path) -> None:
    """A table of probabilities read as log-probs (the default) was refused with a hint to
    add ?kind=logits, which then softmaxed the probabilities again: a log loss of 0.48 for
    0.33, no error (QA). Both now name ?kind=probs; logits still read as logits."""
    path = _write(tmp_path / "p.csv", "probs")
    with pytest.raises(ValueError, match=r"these are probabilities; add \?kind=probs"):
        TableScorer(path).score(TASK, _items(IDS[:1]))
    with pytest.raises(ValueError, match=r"would softmax them again.*\?kind=probs"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))
    out = TableScorer(path, kind="probs").score(TASK, _items(IDS[:2]), progress=False)
    np.testing.assert_allclose(out, LOGPROBS[:2], atol=1e-12)
    logits = _write(tmp_path / "l.csv", "logits")
    with pytest.raises(ValueError, match=r"for unnormalised scores \(logits\) \?kind=logits"):
        TableScorer(logits).score(TASK, _items(IDS[:1]))


def test_logits_beyond_float64_are_refused_with_the_line(tmp_path: Path) -> None:
    """Logits 1e308 apart: a class of probability 0 (log-prob -inf). Refused where read,
    naming the line; no numpy warning (QA: a RuntimeWarning with a source path, then a
    message about log-probabilities)."""
    import warnings

    path = tmp_path / "x.csv"
    path.write_text("id,negative,neutral,positive\n" + "".join(
        f"{i},1e308,0,-1e308\n" for i in IDS), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"line 2: logits .* differ by more than float64"):
            TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))


def test_bad_jsonl_rows_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.jsonl", "logits")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[6] = lines[6].replace('"neutral": ', '"neutral": NaN, "x": ')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 7: column 'neutral': value nan is not finite"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))
    lines[6] = "{not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 7: not valid JSON"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))
    lines[6] = "[1, 2, 3]"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 7: expected a JSON object, got list"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))
    lines[6] = json.dumps({"id": IDS[6], "negative": 1.0, "positive": 2.0})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 7: missing column 'neutral'"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))


def test_parquet_bad_value_names_row(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    rows = [{"id": i, "negative": float(a), "neutral": float(b), "positive": float(c)}
            for i, (a, b, c) in zip(IDS, LOGITS, strict=True)]
    rows[2]["positive"] = float("inf")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "p.parquet")
    with pytest.raises(ValueError, match=r"p\.parquet: row 3: column 'positive'.*not finite"):
        TableScorer(tmp_path / "p.parquet", kind="logits").score(TASK, _items(IDS[:1]))
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ValueError, match="cannot read as Parquet"):
        TableScorer(tmp_path / "junk.parquet").score(TASK, _items(IDS[:1]))


def test_duplicate_ids_and_ragged_rows(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", "logits")
    lines = _csv_lines(path)
    lines[3] = lines[1]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 4: duplicate id 'fpb-000' \(first at line 2\)"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))
    lines = _csv_lines(_write(path, "logits"))
    lines[2] += ",extra"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 3: 6 fields, header has 5"):
        TableScorer(path, kind="logits").score(TASK, _items(IDS[:1]))


def test_bad_arguments(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", "logits")
    with pytest.raises(ValueError, match="kind must be one of"):
        TableScorer(path, kind="odds")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"absent\.csv: no such file or folder \(given as "
                                         r"the prediction table, table:FILE\)"):
        TableScorer(tmp_path / "absent.csv")
    (tmp_path / "p.xlsx").write_bytes(b"")
    with pytest.raises(ValueError, match="cannot tell the format"):
        TableScorer(tmp_path / "p.xlsx")
    (tmp_path / "header.csv").write_text("id,negative,neutral,positive\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no data rows"):
        TableScorer(tmp_path / "header.csv").score(TASK, _items(IDS[:1]))


def test_cache_identity_follows_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", "logits")
    scorer = TableScorer(path, kind="logits")
    before = scorer.cache_identity()
    assert json.dumps(before) and before["kind"] == "logits"
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert scorer.cache_identity() != before


def test_read_table_function(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.tsv", "probs")
    ids, lp = read_table(path, columns=TASK.classes, kind="probs")
    assert ids == IDS
    np.testing.assert_allclose(lp, LOGPROBS, atol=1e-12)


_cell = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.text(max_size=8),
                  st.integers(-10**400, 10**400).map(str), st.sampled_from(["", "1e999", '"']))


@settings(max_examples=200, deadline=None, suppress_health_check=_HC)
@given(rows=st.lists(st.lists(_cell, min_size=0, max_size=6), max_size=6),
       kind=st.sampled_from(["logprobs", "probs", "logits"]))
def test_fuzz_csv_parses_or_value_error(tmp_path: Path, rows: list[list[str]], kind: str) -> None:
    path = tmp_path / "fuzz.csv"
    text = "id,negative,neutral,positive\n" + "".join(",".join(r) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    try:
        ids, lp = read_table(path, columns=TASK.classes, kind=kind)  # type: ignore[arg-type]
    except ValueError:
        return
    assert len(ids) == len(set(ids)) == lp.shape[0] and lp.shape[1] == 3
    assert not np.isnan(lp).any()


_KEYS = st.sampled_from(["id", "negative", "neutral", "positive", "z"])
_jcell = st.one_of(st.none(), st.booleans(), st.integers(-10**400, 10**400),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2))


@settings(max_examples=200, deadline=None, suppress_health_check=_HC)
@given(recs=st.lists(st.dictionaries(_KEYS, _jcell, max_size=5), max_size=6),
       kind=st.sampled_from(["logprobs", "probs", "logits"]))
def test_fuzz_jsonl_parses_or_value_error(tmp_path: Path, recs: list[dict], kind: str) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    try:
        ids, lp = read_table(path, columns=TASK.classes, kind=kind)  # type: ignore[arg-type]
    except ValueError:
        return
    assert len(ids) == lp.shape[0] and not np.isnan(lp).any()


@settings(max_examples=100, deadline=None, suppress_health_check=_HC)
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".csv", ".jsonl", ".parquet"]))
def test_fuzz_bytes_parse_or_value_error(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    with contextlib.suppress(ValueError):
        TableScorer(path).score(TASK, _items(["a"]))


def test_a_table_gone_since_the_scorer_was_made_is_named(tmp_path: Path) -> None:
    """The file removed after the scorer was made (a spec checked at ``init``, the file
    moved before ``estimate``): a ValueError naming it, read whole or row by row (the
    size looked up to choose between them raised FileNotFoundError: a traceback)."""
    path = _write(tmp_path / "p.csv", "logprobs")
    scorer = TableScorer(path)
    path.unlink()
    with pytest.raises(ValueError, match=r"p\.csv: cannot read"):
        scorer.score(TASK, _items(IDS[:1]))
