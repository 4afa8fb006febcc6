"""Data: tasks, pools, splits and in-context example selection.

* :mod:`~activetest.data.task`: the ``Item`` and ``Task`` records.
* :mod:`~activetest.data.builtin`: the paper's tasks; ``get_task(name)``.
* :mod:`~activetest.data.taskfile`: tasks from TOML/YAML files; ``load_task``.
* :mod:`~activetest.data.pool`: ``load_pool`` (CSV, TSV, JSONL, JSON, Parquet, FPB), hub.
* :mod:`~activetest.data.datasets`: the shared datasets with the paper's preprocessing.
* :mod:`~activetest.data.split`: seeded splits and stratified in-context examples.
* :mod:`~activetest.data.demo`: the generated demo task.
"""

from __future__ import annotations

from activetest import _lazy

#: Public name -> the module that defines it, imported on first use (PEP 562):
#: importing ``activetest.data.task`` (the session's store does) does not import
#: every pool reader and dataset.
_EXPORTS = {
    "UnknownTaskError": "activetest.data.builtin",
    "get_task": "activetest.data.builtin",
    "list_tasks": "activetest.data.builtin",
    "register_task": "activetest.data.builtin",
    "PAPER_SETUPS": "activetest.data.datasets",
    "SharedDataset": "activetest.data.datasets",
    "load_shared": "activetest.data.datasets",
    "demo_items": "activetest.data.demo",
    "demo_task": "activetest.data.demo",
    "MissingDependencyError": "activetest.data.pool",
    "Pool": "activetest.data.pool",
    "PoolFormatError": "activetest.data.pool",
    "load_hub_pool": "activetest.data.pool",
    "load_pool": "activetest.data.pool",
    "Split": "activetest.data.split",
    "SplitError": "activetest.data.split",
    "select_examples": "activetest.data.split",
    "split_items": "activetest.data.split",
    "Item": "activetest.data.task",
    "Task": "activetest.data.task",
    "TaskFileError": "activetest.data.taskfile",
    "dump_task": "activetest.data.taskfile",
    "load_task": "activetest.data.taskfile",
}

__all__ = [
    "PAPER_SETUPS",
    "Item",
    "MissingDependencyError",
    "Pool",
    "PoolFormatError",
    "SharedDataset",
    "Split",
    "SplitError",
    "Task",
    "TaskFileError",
    "UnknownTaskError",
    "demo_items",
    "demo_task",
    "dump_task",
    "get_task",
    "list_tasks",
    "load_hub_pool",
    "load_pool",
    "load_shared",
    "load_task",
    "register_task",
    "select_examples",
    "split_items"
]

TYPE_CHECKING = False  # not typing's: importing typing costs import time
if TYPE_CHECKING:
    from activetest.data.builtin import UnknownTaskError, get_task, list_tasks, register_task
    from activetest.data.datasets import PAPER_SETUPS, SharedDataset, load_shared
    from activetest.data.demo import demo_items, demo_task
    from activetest.data.pool import (
        MissingDependencyError,
        Pool,
        PoolFormatError,
        load_hub_pool,
        load_pool,
    )
    from activetest.data.split import Split, SplitError, select_examples, split_items
    from activetest.data.task import Item, Task
    from activetest.data.taskfile import TaskFileError, dump_task, load_task


__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS, globals())
