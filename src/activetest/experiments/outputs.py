"""Cached model outputs for the paper's experiments (no dataset text inside).

One compressed ``.npz`` file per dataset holds the row numbers of the pool,
test and in-context items in the shared files, their labels, and for every
(model, mode) the class log-probabilities on the pool and the test set, stored
as float32 and renormalised in float64 on load. That is all the statistics
need, so the experiments re-run in minutes without any model, and the files are
small enough to commit (about 100-300 KB each).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from activetest.stats.losses import log_softmax

__all__ = ["DatasetOutputs", "ModelOutputs"]


@dataclass
class ModelOutputs:
    """One model in one prompting mode on one dataset.

    Attributes:
        pool: ``(N_pool, C)`` class log-probabilities (float64 after loading).
        test: ``(N_test, C)``; empty ``(0, C)`` when the pool is the truth.
    """

    pool: np.ndarray
    test: np.ndarray


@dataclass
class DatasetOutputs:
    """Everything the statistics need for one dataset.

    Attributes:
        dataset: short name (``sst2``, ``subj``, ``fpb``, ``hs``, ``mmlu``).
        pool_rows, test_rows, example_rows: item ids (row numbers in the shared files).
        pool_labels, test_labels: class indices.
        n_shots: in-context examples used for few-shot prompts.
        outputs: ``"model/mode"`` (e.g. ``"gemma3-270m/few"``) -> :class:`ModelOutputs`.
        meta: free-form provenance (seeds, sizes, backends, dates).
    """

    dataset: str
    pool_rows: np.ndarray
    test_rows: np.ndarray
    example_rows: np.ndarray
    pool_labels: np.ndarray
    test_labels: np.ndarray
    n_shots: int
    outputs: dict[str, ModelOutputs] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)

    @property
    def pool_is_truth(self) -> bool:
        """True where no held-out test set exists (FPB): the pool is the truth."""
        return len(self.test_labels) == 0

    def save(self, path: str | Path) -> Path:
        """Write a compressed ``.npz`` (atomic: temp file then rename)."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {
            "pool_rows": np.asarray(self.pool_rows).astype(str),
            "test_rows": np.asarray(self.test_rows).astype(str),
            "example_rows": np.asarray(self.example_rows).astype(str),
            "pool_labels": np.asarray(self.pool_labels, dtype=np.int16),
            "test_labels": np.asarray(self.test_labels, dtype=np.int16),
            "n_shots": np.array(self.n_shots),
            "dataset": np.array(self.dataset),
            "meta_keys": np.array(list(self.meta), dtype=str),
            "meta_values": np.array(list(self.meta.values()), dtype=str),
        }
        for key, mo in self.outputs.items():
            arrays[f"lp|{key}|pool"] = np.asarray(mo.pool, dtype=np.float32)
            arrays[f"lp|{key}|test"] = np.asarray(mo.test, dtype=np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> DatasetOutputs:
        """Read a file written by :meth:`save`."""
        path = Path(path)
        try:
            z = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a readable outputs file ({exc})") from None
        with z:
            out = cls(dataset=str(z["dataset"]), pool_rows=z["pool_rows"],
                      test_rows=z["test_rows"], example_rows=z["example_rows"],
                      pool_labels=z["pool_labels"].astype(np.int64),
                      test_labels=z["test_labels"].astype(np.int64), n_shots=int(z["n_shots"]),
                      meta=dict(zip(z["meta_keys"].tolist(), z["meta_values"].tolist(),
                                    strict=True)))
            for name in z.files:
                if name.startswith("lp|") and name.endswith("|pool"):
                    key = name[3:-5]
                    # float32 storage: renormalise in float64 so rows are exact log-softmaxes
                    pool = log_softmax(z[name].astype(np.float64))
                    test = z[f"lp|{key}|test"].astype(np.float64)
                    out.outputs[key] = ModelOutputs(pool, log_softmax(test) if test.size else test)
        return out
