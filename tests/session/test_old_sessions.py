"""Session files written by earlier activetest versions still open and give the same estimate.

``tests/session/data/old/`` holds small session files of every stored schema (1-3),
each written by the version that introduced it (``make_old_sessions.py`` says how),
and ``expected.json`` their estimates as computed when they were committed. Every
number of the estimate must come back to 1e-12: a change of what an old file means is
a change a person would read as a different result.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from activetest.models import get_scorer
from activetest.session.workflow import Session

OLD = Path(__file__).parent / "data" / "old"
FILES = sorted(OLD.glob("schema*.db"))
EXPECTED = json.loads((OLD / "expected.json").read_text(encoding="utf-8"))


def old_estimate(src: Path, tmp_path: Path) -> dict[str, Any]:
    """The estimate of a copy of ``src`` (the committed file is never written)."""
    path = tmp_path / src.name
    shutil.copyfile(src, path)
    with Session.open(path) as s:
        spec = s.store.config().target
        # PE sessions run the target on labelled items: its table lies in inputs/
        scorers = {spec: get_scorer(f"table:{OLD / 'inputs' / 'target.csv'}")}
    with Session.open(path, scorers=scorers) as s:
        return s.estimate(record=False, progress=False).to_dict()


def numbers(obj: Any, prefix: str = "") -> dict[str, float]:
    """Every number in a JSON-like record, by its path."""
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(numbers(v, f"{prefix}/{k}"))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(numbers(v, f"{prefix}/{i}"))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[prefix] = float(obj)
    return out


def test_every_schema_is_covered() -> None:
    names = {p.name for p in FILES}
    for schema in (1, 2, 3):
        assert any(n.startswith(f"schema{schema}_") for n in names), schema
    assert set(EXPECTED) == {p.stem for p in FILES}


@pytest.mark.parametrize("src", FILES, ids=[p.stem for p in FILES])
def test_old_session_gives_the_same_estimate(src: Path, tmp_path: Path) -> None:
    got = numbers(old_estimate(src, tmp_path))
    want = numbers(EXPECTED[src.stem])
    missing = sorted(set(want) - set(got))
    assert not missing, f"numbers no longer reported: {missing[:10]}"
    for key, w in want.items():
        g = got[key]
        same = (g == w or (math.isnan(g) and math.isnan(w))
                or abs(g - w) <= 1e-12 * max(1.0, abs(w)))
        assert same, f"{src.name}{key}: {g!r} != {w!r}"
    assert want, "no number compared"


#: What ``status`` says beside a stored spec whose recorded local path names nothing here.
ABSENT = "(the path recorded at init; nothing is there on this machine)"


@pytest.mark.parametrize("name", ["schema1_ce_both", "schema3_graded_compare"])
def test_status_says_a_recorded_path_that_is_not_on_this_machine(
        name: str, tmp_path: Path) -> None:
    """QA: an old session (its specs stored with the absolute paths ``init`` was given,
    here ``/tmp/oldout/...`` of the machine that made it) printed ``target
    table:/tmp/oldout/target.csv`` as if that file were in use; ``status`` (text, Python's
    ``print(status)`` and ``--json``) now says beside each such spec that it is the path
    recorded at init and that nothing is there. (Where the path does exist, the spec is
    printed as stored.)"""
    from typer.testing import CliRunner

    from activetest.cli import app

    path = tmp_path / f"{name}.db"
    shutil.copyfile(OLD / f"{name}.db", path)
    with Session.open(path) as s:
        cfg = s.session_config
        st = s.status()
    specs = [cfg.target, cfg.surrogate, *(cfg.compare or ())]
    recorded = [x for x in specs if "/tmp/oldout/" in x]
    assert recorded, specs
    absent = [x for x in recorded if not Path(x.partition(":")[2]).exists()]
    assert st.absent_paths == tuple(absent)
    res = CliRunner().invoke(app, ["status", str(path)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    for spec in recorded:
        assert spec in text, (spec, text)
        assert (f"{spec} {ABSENT}" in text) == (spec in absent), (spec, text)
    if cfg.target in absent:
        assert f"target {cfg.target} {ABSENT}" in str(st)
    res = CliRunner().invoke(app, ["status", str(path), "--json"])
    assert json.loads(res.output)["absent_paths"] == absent


@pytest.mark.parametrize("name", ["schema1_ce_both", "schema3_graded_compare"])
def test_the_report_says_a_recorded_path_that_is_not_on_this_machine(
        name: str, tmp_path: Path) -> None:
    """QA: the report (HTML and Markdown) printed an old session's stored specs as they
    are (``Target: table:/tmp/oldout/target.csv``), a local path of the machine that made
    it, as if that file were in use here; it now says beside each, as ``status`` does,
    that it is the path recorded at init and that nothing is there (the header's target
    and surrogate, and a compared target under the comparison)."""
    import html as htmllib
    import re

    from activetest.session.report import write_report

    path = tmp_path / f"{name}.db"
    shutil.copyfile(OLD / f"{name}.db", path)
    with Session.open(path) as s:
        cfg = s.session_config
        absent = s.status().absent_paths
        scorers = {cfg.target: get_scorer(f"table:{OLD / 'inputs' / 'target.csv'}")}
    assert absent, name
    with Session.open(path, scorers=scorers) as s:
        pending = s.pending_judgments()  # (the copy's:) judged, so the comparison is shown
        if pending:
            labels = s.labels()
            s.judge_many(pending[0].spec, [(p.acquisition.item_id,
                                            labels[p.acquisition.item_id]) for p in pending])
        data = s.report_data(progress=False)
    assert bool(data.comparison) == bool(cfg.compare), name
    assert tuple(data.absent_paths) == absent
    md = write_report(data, tmp_path / "r")
    page = htmllib.unescape(re.sub(r"<[^>]+>", "", (tmp_path / "r" / "report.html")
                                   .read_text(encoding="utf-8")))
    text = md.read_text(encoding="utf-8").replace("\\", "")
    for doc in (" ".join(text.split()), " ".join(page.split())):
        for role, spec in (("Target", cfg.target), ("Surrogate", cfg.surrogate)):
            said = f"{role}: {spec} {ABSENT}"
            assert (said in doc) == (spec in absent), (said, doc[:600])
        for spec in cfg.compare or ():
            assert (f"Second target {spec} {ABSENT}." in doc) == (spec in absent), doc
