"""The checks a :class:`~activetest.session.workflow.Session` makes before it works on a
file: the stored pool's size against its configuration (a damaged page), and the
keywords given to ``Session.create`` (a pool file's reading option given directly)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from activetest.session.config import SessionConfig
from activetest.session.store import SessionStore

__all__ = ["check_pool_keywords", "check_pool_size"]


def check_pool_size(store: SessionStore, cfg: SessionConfig) -> None:
    """Refuse a session file whose items table does not end where its configuration says
    the pool does (a damaged page: the pool would be read short, silently; one look up
    the table's key, not a scan). Files from before the size was recorded are not
    checked."""
    want = cfg.pool.get("n_items")
    if isinstance(want, bool) or not isinstance(want, int):
        return
    have = store.n_items()
    if have != want:
        from activetest.session.store_errors import damaged

        raise damaged(store.path, ValueError(
            f"its items table ends at row {have - 1} but the pool has {want} items"))


def check_pool_keywords(options: Mapping[str, Any]) -> None:
    """Refuse a pool file's reading option given to
    :meth:`~activetest.session.workflow.Session.create` directly.

    ``activetest init --id-column id`` reads in Python as ``pool_options={"id_column":
    "id"}``; given as ``id_column="id"`` it failed deep inside with "create_session() got
    an unexpected keyword argument 'id_column'" (QA), naming neither the method called
    nor what to pass.

    Raises:
        TypeError: naming the keyword and the ``pool_options`` to pass instead.
    """
    import inspect

    from activetest.data.pool import load_pool

    reading = set(inspect.signature(load_pool).parameters) - {"path", "task"}
    bad = [k for k in options if k in reading]
    if bad:
        given = ", ".join(f"{k!r}: {options[k]!r}" for k in bad)
        what = "options" if len(bad) > 1 else "an option"
        raise TypeError(f"Session.create() got {', '.join(f'{k}=' for k in bad)}: {what} of "
                        f"reading the pool file; pass pool_options={{{given}}} (as "
                        f"`activetest init --{bad[0].replace('_', '-')}`)")
