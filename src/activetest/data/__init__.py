"""Data: tasks, pools, splits and in-context example selection."""

from activetest.data.task import Item, Task

__all__ = ["Item", "Task"]
