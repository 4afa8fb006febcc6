"""The in-memory run and the ``activetest`` command give the same numbers.

A session made, drawn, labelled and estimated through the CLI (``init``, ``select``,
``import`` of a label sheet, ``estimate --json``) and an :class:`ActiveTest` given the
same predictions, seed, batches and labels: the same draws and the same JSON record
after every round (the in-memory run continuing its blind spot between estimates, the
session from its file).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from activetest.api import ActiveTest
from activetest.session.workflow import Session
from tests.session.session_support import make_pool_files, run_cli


def _close(a: Any, b: Any, where: str = "") -> None:
    """Equal JSON records: the same keys, numbers to 1e-12 (NaN equals NaN)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{j}]")
    elif isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(
            a, b, rel_tol=1e-12, abs_tol=1e-12), f"{where}: {a!r} != {b!r}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


@pytest.mark.parametrize(("acquisition", "metric"), [("ce", "both"), ("adaptive", "log_loss")])
def test_the_cli_session_and_the_in_memory_run_agree(tmp_path: Path, acquisition: str,
                                                     metric: str) -> None:
    pf = make_pool_files(tmp_path / "data", n=150, seed=4)
    db = tmp_path / "s.db"
    run_cli("init", db, "--pool", pf.pool, "--task", "demo", "--surrogate",
            f"table:{pf.surrogate}", "--target", f"table:{pf.target}", "--seed", 11,
            "--acquisition", acquisition, "--metric", metric, "--id-column", "id",
            "--no-progress")
    with Session.open(db) as s:
        S, T = s.store.scores("surrogate").logprobs, s.store.scores("target").logprobs
    run = ActiveTest(S, T, metric=metric, seed=11, acquisition=acquisition, ids=pf.ids)
    for b in (10, 25, 40):
        run_cli("select", db, "--n", b)
        rows = run.next(b)
        with Session.open(db) as s:
            assert [a.item_id for a in s.acquisitions()] == [pf.ids[r] for r in run.drawn]
        sheet = tmp_path / "labels.csv"
        with sheet.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["item_id", "label"])
            w.writerows([pf.ids[r], ["negative", "positive"][pf.labels[r]]] for r in rows)
        run_cli("import", db, sheet)
        run.label_many(rows, pf.labels[rows])
        theirs = json.loads(run_cli("estimate", db, "--json", "--no-progress"))
        _close(run.estimate().to_dict(), theirs)
    assert theirs["n_labels"] == 75
    assert np.isfinite(theirs["metrics"][metric if metric != "both" else "log_loss"]
                       ["anytime"]["fixed_low"])
