"""``python -m activetest.models.llama_server``: llama.cpp's OpenAI-compatible server, safely.

A drop-in for ``python -m llama_cpp.server`` (same arguments; needs the
``server`` extra) that applies :mod:`activetest.models.llama_cpu`'s rule before
any model loads (on AMX builds the stock server crashes on its first request)
and accepts the bundled model names for ``--model``::

    python -m activetest.models.llama_server --model gemma3-270m --port 8000
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from activetest.models.bundled import BUNDLED_MODELS, resolve_model
from activetest.models.llama_cpu import install_global_patch

__all__ = ["main"]


def _resolve_models(argv: Sequence[str]) -> list[str]:
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--model" and i + 1 < len(out) and out[i + 1] in BUNDLED_MODELS:
            out[i + 1] = str(resolve_model(out[i + 1]))
        elif arg.startswith("--model=") and arg.partition("=")[2] in BUNDLED_MODELS:
            out[i] = f"--model={resolve_model(arg.partition('=')[2])}"
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Run the server with ``argv`` (default: the command line)."""
    args = _resolve_models(sys.argv[1:] if argv is None else argv)
    install_global_patch()
    try:
        from llama_cpp.server.__main__ import main as server_main
    except ImportError as exc:
        raise SystemExit(f"llama.cpp's server is not installed ({exc}); "
                         f"pip install 'activetest[server]'") from exc
    sys.argv = [sys.argv[0], *args]
    server_main()


if __name__ == "__main__":
    main()
