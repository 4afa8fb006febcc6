"""Writing the report's files: whole or not at all, and a failure names the file.

A figure or document is written to a temporary file beside its place and renamed over
it, so a full disk or a killed run leaves the previous report's file whole (never half
a PNG), and an error raised while writing (``ENOSPC`` from ``write`` or ``close``
carries no file name) is raised again naming the file it was for.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["write_file"]


def write_file(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` by a temporary file and a rename; returns the path.

    Raises:
        OSError: of the same kind as the failure, naming ``path`` (the temporary file is
            removed).
    """
    out = Path(path)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        # a full disk says so at write or close, with no file name (QA: the CLI then
        # blamed standard output); the temporary name would mean nothing to the reader
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(out)) from None
    return out
