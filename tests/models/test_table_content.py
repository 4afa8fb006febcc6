"""A Parquet table with a content_check column (what ray_score writes) joins by id AND content."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from activetest.data.task import Item, Task
from activetest.models import table
from activetest.models.table import TableScorer

pytest.importorskip("pyarrow")

TASK = Task(name="t", instruction="Classify.\n", classes=("negative", "positive"))
ITEMS = [Item(id=str(i), fields={"text": t}) for i, t in enumerate(["bad", "good", "fine"])]


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def _reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table read whole and row by row, keeping only the rows (and the content
    checks) of the items scored (a file above ``STREAM_BYTES``)."""
    if request.param == "streamed":
        monkeypatch.setattr(table, "STREAM_BYTES", 0)


def test_rows_are_checked_against_the_items_content(tmp_path: Path) -> None:
    from activetest.models.ray_score import _write_parquet

    lp = np.log(np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]))
    path = tmp_path / "preds.parquet"
    _write_parquet(path, ITEMS, TASK, lp, {"model": "test"})
    np.testing.assert_allclose(TableScorer(path).score(TASK, ITEMS), lp, atol=1e-12)
    # the same ids (positions) on a pool in another order: refused, never joined
    swapped = [Item(id=it.id, fields=other.fields) for it, other in zip(ITEMS, ITEMS[::-1],
                                                                         strict=True)]
    with pytest.raises(ValueError, match=r"preds.parquet: the row for item '0' was written "
                                         r"for other content \(content_check c\w+ in the "
                                         r"file, c\w+ for this item's fields\)"):
        TableScorer(path).score(TASK, swapped)
    assert TableScorer(path).score(TASK, swapped[1:2]).shape == (1, 2)  # '1' is unchanged
