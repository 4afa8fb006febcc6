"""The console script's entry point: a supervised child where scoring runs, and plain
``status`` / ``select`` calls made directly (without typer's parsing).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import typer

from activetest.cli._app import app
from activetest.cli._select import select
from activetest.cli._status import status


def _wants_supervisor(args: Sequence[str]) -> bool:
    from activetest.supervise import wants_supervisor

    return wants_supervisor(args)


_PLAIN_SECONDS = re.compile(r"[0-9]+(\.[0-9]*)?")


def _plain_status(args: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of ``status SESSION [--json] [--busy-timeout SECONDS]`` written
    plainly (each option at most once, seconds as digits), else None.

    Such a ``status`` is called directly: typer's parsing builds a pydantic validator
    per option, which costs more than the command itself at any pool size. Any other
    form (``--help``, a typo, ``--busy-timeout=3``) goes through typer, as before."""
    if not args or args[0] != "status":
        return None
    out: dict[str, Any] = {"as_json": False, "busy_timeout": 5.0}
    rest = list(args[1:])
    while rest:
        a = rest.pop(0)
        if a == "--json" and not out["as_json"]:
            out["as_json"] = True
        elif (a == "--busy-timeout" and "seen_timeout" not in out and rest
              and _PLAIN_SECONDS.fullmatch(rest[0])):
            out["busy_timeout"] = float(rest.pop(0))
            out["seen_timeout"] = True
        elif a and not a.startswith("-") and "session" not in out:
            out["session"] = Path(a)
        else:
            return None
    out.pop("seen_timeout", None)
    return out if "session" in out else None


_PLAIN_COUNT = re.compile(r"[0-9]+")


def _plain_select(args: Sequence[str]) -> dict[str, Any] | None:
    """The arguments of ``select SESSION --n N [--busy-timeout SECONDS]`` written
    plainly (``-n`` too; each option once, numbers as digits), else None: called
    directly, as a plain ``status`` (:func:`_plain_status`); any other form goes through
    typer."""
    if not args or args[0] != "select":
        return None
    out: dict[str, Any] = {}
    rest = list(args[1:])
    while rest:
        a = rest.pop(0)
        if a in ("--n", "-n") and "n" not in out and rest and _PLAIN_COUNT.fullmatch(rest[0]):
            out["n"] = int(rest.pop(0))
        elif (a == "--busy-timeout" and "busy_timeout" not in out and rest
              and _PLAIN_SECONDS.fullmatch(rest[0])):
            out["busy_timeout"] = float(rest.pop(0))
        elif a and not a.startswith("-") and "session" not in out:
            out["session"] = Path(a)
        else:
            return None
    return out if "session" in out and "n" in out else None


#: Commands that do no linear algebra: numpy's OpenBLAS starts with one thread for them.
_NO_BLAS_COMMANDS = ("status", "import")


def _one_blas_thread(args: Sequence[str]) -> None:
    """For ``status`` and ``import``, which do no linear algebra, let numpy's OpenBLAS
    start one thread (unless ``OPENBLAS_NUM_THREADS`` is set already): loading it with a
    thread per core costs ~0.06 CPU-s on 2 cores, a fifth of a ``status``, and more with
    more cores. Called before numpy is imported (this module does not import it); the
    commands start no child that would inherit the setting."""
    if args and args[0] in _NO_BLAS_COMMANDS and "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


#: The exit code when the reader of the output went away (``activetest ... | head``):
#: Python's documented convention, and what rich and click use.
BROKEN_PIPE_EXIT = 1


def _show_notices() -> None:
    """Show the package's own warnings (a scoring path chosen, a corrupt cache file, a
    text cut to fit: classes and calls under ``activetest``) as one line ``note: ...``
    on stderr, without Python's file, line and source; other warnings as Python shows
    them. Messages are redacted like every other line the command prints.

    Every warning is written through :func:`activetest._quiet.emit`: one given while
    another thread loads a llama.cpp model, which points stderr at /dev/null for the
    load, is written when the load is done instead of lost."""
    import warnings

    from activetest._quiet import emit

    shown = warnings.showwarning
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        ours = (category.__module__.split(".")[0] == "activetest"
                or os.path.abspath(filename).startswith(package + os.sep))
        if not ours or not issubclass(category, UserWarning):
            emit(lambda: shown(message, category, filename, lineno, file, line))
            return
        from activetest.redaction import redact

        text = " ".join(redact(str(message)).split())

        def write() -> None:
            # no terminal to tell (a closed stderr): the note is lost, as Python's own
            # would be; sys.stderr is looked up when the note is written
            with contextlib.suppress(OSError):
                print(f"note: {text}", file=sys.stderr if file is None else file, flush=True)

        emit(write)

    show.emits = True  # type: ignore[attr-defined]  # (_quiet.silenced leaves it as it is)
    warnings.showwarning = show


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``activetest`` console script.

    The package's warnings are shown as ``note: ...`` lines (:func:`_show_notices`).
    A closed output pipe (``| head``, ``| true``) ends every command the same way: no
    message, exit code :data:`BROKEN_PIPE_EXIT`, the output pointed at the null device
    so that nothing more is written. What a command stores (draws, labels) is
    committed before it prints."""
    _show_notices()
    try:
        try:
            _run(argv)
        finally:
            sys.stdout.flush()  # output still buffered meets a closed pipe here
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        sys.exit(BROKEN_PIPE_EXIT)


def _run(argv: Sequence[str] | None) -> None:
    """The command line: the supervisor, a plain status/select, or typer's app."""
    from activetest import supervise

    args = list(sys.argv[1:] if argv is None else argv)
    if _wants_supervisor(args):
        sys.exit(supervise.run_supervised(args))
    _one_blas_thread(args)
    # SIGTERM unwinds like Ctrl-C (temporary files removed); a supervised child also
    # terminates when its parent dies (a `kill -9` of the command the user started)
    supervise.handle_sigterm()
    supervise.watch_parent()
    for parse, command in ((_plain_status, status), (_plain_select, select)):
        plain = parse(args)
        if plain is not None:
            try:
                command(**plain)
            except typer.Exit as exc:
                sys.exit(exc.exit_code)
            return
    app(args=args, prog_name="activetest")
