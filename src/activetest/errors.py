"""The base of errors that are the user's to act on, beyond ``ValueError`` and friends.

Bad input raises ``ValueError`` subclasses (a pool file, a label, a task) or
``FileNotFoundError``; failures outside the input, such as a model server that
is down or answers nonsense, raise a :class:`UserFacingError` subclass. The CLI
shows any of them as one message and exits 2.
"""

from __future__ import annotations

__all__ = ["UserFacingError"]


class UserFacingError(Exception):
    """An error whose message tells the user what happened and what to do."""
