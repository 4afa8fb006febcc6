"""Data: tasks, pools, splits and in-context example selection.

* :mod:`~activetest.data.task`: the ``Item`` and ``Task`` records.
* :mod:`~activetest.data.builtin`: the paper's tasks; ``get_task(name)``.
* :mod:`~activetest.data.taskfile`: tasks from TOML/YAML files; ``load_task``.
* :mod:`~activetest.data.pool`: ``load_pool`` (CSV, TSV, JSONL, JSON, Parquet, FPB), hub.
* :mod:`~activetest.data.datasets`: the shared datasets with the paper's preprocessing.
* :mod:`~activetest.data.split`: seeded splits and stratified in-context examples.
* :mod:`~activetest.data.demo`: the generated demo task.
"""

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
    "split_items",
]
