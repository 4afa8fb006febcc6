"""Which llama.cpp CPU weight layouts to allow: the workaround for the AMX crash.

llama.cpp can place a model's weights in "extra" CPU buffer types: the AMX
layout (Intel Xeon Sapphire Rapids and later) and the repacked AVX2/AVX-512/NEON
layouts. llama-cpp-python 0.3.36 built on an AMX CPU (pip builds it for the CPU
it is built on) crashes with SIGSEGV in ``ggml_backend_amx_mul_mat`` on the first
decode of more than one token, for both bundled models (llama.cpp issue 20824).
Loading with ``llama_model_params.use_extra_bufts = False`` avoids it; the
binding's ``Llama(...)`` does not expose that field, so :func:`model_params_patch`
sets it on the params the binding builds, for the duration of a load.

The rule (``auto``): turn extra buffer types off only where the llama.cpp build
contains the AMX code (``AMX_INT8 = 1`` in ``llama_print_system_info()``); a
native build has it exactly when it was built on an AMX CPU. Everywhere else the
repacked layouts stay on, because turning them off costs speed there (measured
in docs/benchmarks.md, "llama.cpp extra buffer types"). ``ACTIVETEST_LLAMA_EXTRA_BUFTS``
overrides the rule: ``on`` / ``off`` / ``auto`` (default).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Iterator
from typing import Any

__all__ = [
    "ENV_VAR",
    "build_has_amx",
    "extra_bufts_enabled",
    "install_global_patch",
    "load_llama",
    "model_params_patch",
]

ENV_VAR = "ACTIVETEST_LLAMA_EXTRA_BUFTS"

_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")


@functools.cache
def build_has_amx() -> bool:
    """Whether the installed llama.cpp was compiled with its AMX kernels."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info()
    text = info.decode("utf-8", errors="replace") if isinstance(info, bytes) else str(info)
    return re.search(r"\bAMX_INT8\s*=\s*1\b", text) is not None


def extra_bufts_enabled() -> bool:
    """Whether llama.cpp may use its extra CPU buffer types (see the module docstring).

    Raises:
        ValueError: ``$ACTIVETEST_LLAMA_EXTRA_BUFTS`` is set to something other than
            on/off/auto.
    """
    value = os.environ.get(ENV_VAR, "auto").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    if value not in ("", "auto"):
        raise ValueError(f"${ENV_VAR}={os.environ[ENV_VAR]!r}: expected 'on', 'off' or 'auto'")
    return not build_has_amx()


def _binding_module():  # type: ignore[no-untyped-def]
    # the module whose name ``llama_cpp.llama.Llama.__init__`` looks the default params up in
    from llama_cpp import llama as llama_module

    return llama_module.llama_cpp


def _supports_field() -> bool:
    import llama_cpp

    return any(name == "use_extra_bufts" for name, *_ in llama_cpp.llama_model_params._fields_)


def _without_extra_bufts(original):  # type: ignore[no-untyped-def]
    def patched():  # type: ignore[no-untyped-def]
        params = original()
        params.use_extra_bufts = False
        return params

    patched._activetest_patched = True  # type: ignore[attr-defined]
    return patched


@contextlib.contextmanager
def model_params_patch(use_extra_bufts: bool | None = None) -> Iterator[bool]:
    """While active, ``Llama(...)`` loads with ``use_extra_bufts`` set as decided.

    Yields the value in force (``None`` -> :func:`extra_bufts_enabled`). Not
    thread-safe on its own: hold the caller's load lock around it.
    """
    enabled = extra_bufts_enabled() if use_extra_bufts is None else use_extra_bufts
    mod = _binding_module()
    original = mod.llama_model_default_params
    if enabled or not _supports_field() or getattr(original, "_activetest_patched", False):
        yield enabled
        return
    mod.llama_model_default_params = _without_extra_bufts(original)
    try:
        yield False
    finally:
        mod.llama_model_default_params = original


def install_global_patch() -> bool:
    """Apply the rule for the rest of the process (for servers that load models themselves).

    Returns whether extra buffer types stay enabled.
    """
    enabled = extra_bufts_enabled()
    mod = _binding_module()
    original = mod.llama_model_default_params
    if not enabled and _supports_field() and not getattr(original, "_activetest_patched", False):
        mod.llama_model_default_params = _without_extra_bufts(original)
    return enabled


def load_llama(**kwargs: Any) -> Any:
    """``llama_cpp.Llama(**kwargs)`` with the rule applied (for code that loads its own model);
    other threads' notes wait for the load (:func:`activetest._quiet.silenced`)."""
    from llama_cpp import Llama

    from activetest._quiet import silenced

    with silenced(), model_params_patch():
        return Llama(**kwargs)
