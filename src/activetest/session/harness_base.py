"""What every harness module needs to know of a session: whether its target runs in a
harness (lm-eval or inspect_ai, the ``harness`` entry of its config) and which labels are
the target's own results (by their source), not people's.

Split out of :mod:`activetest.session.harness` (which re-exports every name) so that the
harness's rooms (session creation there, lm-eval's emit/import in
:mod:`activetest.session.harness_lmeval`, the runs projection in
:mod:`activetest.session.harness_runs`) share it without importing one another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["HARNESS_SOURCE", "TARGET_RUN_SOURCES", "TOOL_NAMES", "harness_config",
           "harness_tool", "is_target_run"]

#: Label source prefix of a target run's result.
HARNESS_SOURCE = "lm-eval:"
#: Label source prefixes of target runs' results: lm-eval, an inspect eval, an inspect log.
TARGET_RUN_SOURCES = (HARNESS_SOURCE, "inspect:", "inspect-log:")
#: The source ActiveStopping wrote for an eval without an id before 2026-12-05 (QA: such
#: labels were counted as people's); it now writes ``inspect:unknown``.
_INSPECT_WITHOUT_ID = "inspect"


def is_target_run(source: str) -> bool:
    """Whether a label with this source is a target run's result (lm-eval, an inspect
    eval, an inspect log), not a person's label."""
    return source == _INSPECT_WITHOUT_ID or source.startswith(TARGET_RUN_SOURCES)


#: What each harness tool's results are called where ``status`` counts them.
TOOL_NAMES = {"lm-eval": "lm-eval", "inspect": "inspect_ai evals"}


def harness_config(session: Any) -> Mapping[str, Any] | None:
    """The ``harness`` entry of a session's config (None: not a harness session)."""
    h = session.session_config.extra.get("harness")
    return h if isinstance(h, Mapping) else None


def harness_tool(session: Any) -> str | None:
    """``lm-eval`` or ``inspect`` for a session whose target runs in a harness, else None."""
    h = harness_config(session)
    tool = h.get("tool") if h is not None else None
    return tool if isinstance(tool, str) else None
