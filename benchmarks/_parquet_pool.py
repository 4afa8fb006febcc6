"""The Parquet pool and prediction tables that the ``init`` benchmarks of a table's
content write (bench_cut_table.py, bench_text_table.py): one generator, so that both
measure the same files."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def write_pool_and_tables(paths: tuple[Path, Path, Path], n: int,
                          values: Callable[[np.ndarray], Any] | None = None) -> None:
    """Write a Parquet pool of ``n`` items (``id`` ``it0``..., ``sentence``, ``label``
    negative/positive) and two tables of random log-probs (``id``, ``negative``,
    ``positive``; in the pool's order) to ``paths`` (pool, surrogate, target), in row
    groups of 1M rows, seed 0: the labels ``integers(0, 2)``, each table's logits
    ``normal(0, 1, (m, 2))`` normalised to log-probs, drawn block by block in that order.

    Args:
        paths: the pool's, the surrogate's and the target's files.
        n: the number of items.
        values: a class column's ``(m,)`` float64 log-probs -> what is written (e.g. an
            array of text); None: the floats themselves.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    writers: list = [None, None, None]
    for start in range(0, n, 1_000_000):
        m = min(1_000_000, n - start)
        ids = pc.binary_join_element_wise(
            "it", pc.cast(pa.array(np.arange(start, start + m)), pa.string()), "")
        y = rng.integers(0, 2, m)
        tables = [pa.table({"id": ids, "sentence": pc.binary_join_element_wise(
            "text #", pc.cast(pa.array(np.arange(start, start + m)), pa.string()), ""),
            "label": pa.array(np.array(["negative", "positive"])[y])})]
        for _ in range(2):
            z = rng.normal(0, 1, (m, 2))
            lp = z - np.logaddexp(z[:, :1], z[:, 1:])
            neg, pos = (lp[:, 0], lp[:, 1]) if values is None else (values(lp[:, 0]),
                                                                  values(lp[:, 1]))
            tables.append(pa.table({"id": ids, "negative": neg, "positive": pos}))
        for k, t in enumerate(tables):
            writers[k] = writers[k] or pq.ParquetWriter(paths[k], t.schema)
            writers[k].write_table(t)
    for w in writers:
        w.close()
