"""Test-only: the real command line (``activetest ARGS``, in this process) with one
deliberate race. When llama.cpp's model load has the process's stdout and stderr pointed
at /dev/null (inside llama-cpp-python's own silencing, inside the scorer's load), another
thread gives an activetest notice and a foreign warning, and a line goes straight to fd 2
as llama.cpp's own log does; then the load goes on. Run with ``ACTIVETEST_SUPERVISED=0``
so that the command runs here, where the race is set up. At exit it prints on stdout
whether stderr pointed at /dev/null when the other thread spoke.

Usage: python notice_during_load.py ARGS...
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import warnings
from typing import Any

import llama_cpp.llama_cpp as binding

from activetest.cli import main
from activetest.models.openai_paths import ScoringPathNotice

NOTICE = "a notice from another thread during the load"
FOREIGN = "a foreign warning from another thread during the load"
NATIVE = b"llama.cpp-style log line written to fd 2 during the load\n"

_real_load = binding.llama_model_load_from_file
_silenced: list[bool] = []


def _speak() -> None:
    warnings.warn(NOTICE, ScoringPathNotice, stacklevel=1)
    warnings.warn(FOREIGN, RuntimeWarning, stacklevel=1)


def _load(*args: Any) -> Any:
    if not _silenced:
        _silenced.append(os.path.samestat(os.fstat(2), os.stat(os.devnull)))
        other = threading.Thread(target=_speak)
        other.start()
        other.join()
        os.write(2, NATIVE)
    return _real_load(*args)


if __name__ == "__main__":
    binding.llama_model_load_from_file = _load
    atexit.register(lambda: print(f"stderr silenced when the other thread spoke: {_silenced}"))
    main(sys.argv[1:])
