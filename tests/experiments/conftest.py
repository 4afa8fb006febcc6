"""Helpers shared by the experiments' tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def shift_keyword(mp: pytest.MonkeyPatch, mod: Any, fn: str,
                  when: Callable[[tuple[Any, ...], dict[str, Any]], bool], **over: Any) -> None:
    """Patch ``mod.fn`` so that calls for which ``when(args, kwargs)`` holds run with the
    keyword arguments ``over`` in place of the caller's (a behaviour probe must move)."""
    orig = getattr(mod, fn)

    def wrapped(*a: Any, **k: Any) -> Any:
        if when(a, k):
            k = {**k, **over}
        return orig(*a, **k)
    mp.setattr(mod, fn, wrapped)
