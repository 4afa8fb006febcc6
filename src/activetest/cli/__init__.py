"""The ``activetest`` command line: a thin layer over :mod:`activetest.session`.

Every command parses its arguments, calls the Python API and prints. User errors
(bad files, unknown labels, a locked or newer session file, ...) print one clear
message to stderr and exit with code 2; nothing already collected is lost.

One module per command group, in the order ``activetest --help`` lists them:
``_app`` (the typer app, consoles, option types, the user-error wrapper and the
shared printing helpers), ``_init``, ``_select``, ``_label`` (``label``, ``serve``, the
terminal labelling loop), ``_files`` (``export``, ``labelstudio-config``, ``import``),
``_estimate``, ``_status`` (``report``, ``status``), ``_jobs`` (``demo``, ``score``) and
``_main`` (the console script's entry point). Importing this package registers every
command on :data:`app`. No command module imports another's commands; ``_main`` imports
``select`` and ``status`` to call their plain forms directly.
"""

from __future__ import annotations

# Each import registers its commands on `app`, in this order (the order of --help).
# isort: off
from activetest.cli import _init, _select, _label, _files, _estimate, _status, _jobs  # noqa: F401
# isort: on
from activetest.cli._app import app
from activetest.cli._main import main


def _full_short_help() -> None:
    """``activetest --help`` lists each command with its docstring's first paragraph in
    full (click cuts a derived one at 45 characters)."""
    import inspect

    for info in app.registered_commands:
        doc = inspect.getdoc(info.callback) if info.callback else None
        if info.short_help is None and doc:
            info.short_help = " ".join(doc.split("\n\n")[0].split())


_full_short_help()

__all__ = ["app", "main"]
