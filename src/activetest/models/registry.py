"""Turn a model spec string into a :class:`~activetest.models.base.Scorer`.

Spec forms (``backend:`` prefixes are optional where the backend can be inferred)::

    smollm2-135m, gemma3-270m            bundled GGUF models -> llamacpp
    path/to/model.gguf                   GGUF file -> llamacpp
    path/to/hf-model-dir                 local Hugging Face directory -> hf
    llamacpp:smollm2-135m                explicit backend
    hf:gemma3-270m                       transformers backend
    openai:http://127.0.0.1:8000/v1#model-name
                                         OpenAI-compatible server (``#model`` optional)
    table:predictions.csv                predictions computed elsewhere
    table:logs/samples_*.jsonl?filter=x  lm-eval samples (a file, folder or glob), with
                                         options (:func:`~activetest.models.table.parse_table_spec`)
    calibrated:smollm2-135m              any of the above with contextual calibration
                                         (:mod:`activetest.models.calibration`)

Backends other than llamacpp are imported lazily, so their dependencies
(torch, transformers, an HTTP client) are needed only when used; ``options``
are passed through to the backend's constructor unchanged.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from activetest.models.base import Scorer
from activetest.models.bundled import BUNDLED_MODELS, ModelNotFoundError
from activetest.redaction import redact

__all__ = ["BACKENDS", "CALIBRATED", "FULL_SEQUENCE_BACKENDS", "get_scorer",
           "label_scoring_options", "parse_spec"]

BACKENDS: dict[str, str] = {
    "llamacpp": "activetest.models.llamacpp.LlamaCppScorer",
    "hf": "activetest.models.hf.HFScorer",
    "openai": "activetest.models.openai.OpenAIScorer",
    "table": "activetest.models.table.TableScorer",
}
"""Backend name -> ``module.Class`` of its scorer."""

_TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet", ".csv.gz", ".tsv.gz",
                   ".jsonl.gz", ".json.gz")

#: Backends that can score a class by its whole label word (``full_sequence=True``).
FULL_SEQUENCE_BACKENDS = ("llamacpp", "hf")

#: Spec prefix that wraps the model in :class:`~activetest.models.calibration.CalibratedScorer`.
CALIBRATED = "calibrated:"


def parse_spec(spec: str, backend: str | None = None) -> tuple[str, str]:
    """Split a spec into ``(backend, rest)``, inferring the backend when not given.

    Raises:
        ValueError: unknown backend, an empty spec, a backend given twice
            differently, or a spec whose backend cannot be inferred.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"model spec must be a non-empty string, got {redact(repr(spec))}")
    spec = spec.strip()
    if spec.startswith(CALIBRATED):  # a wrapper: the backend is the wrapped model's
        return parse_spec(spec[len(CALIBRATED):], backend)
    head, sep, rest = spec.partition(":")
    if sep and head in BACKENDS:
        if backend is not None and backend != head:
            raise ValueError(f"model spec {redact(spec)!r} names backend {head!r} but backend="
                             f"{backend!r} was also given")
        backend, spec = head, rest
        if not spec:
            raise ValueError(f"model spec {head + ':'!r} names no model after the backend")
    if backend is not None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; expected one of {sorted(BACKENDS)}")
        return backend, spec
    return _infer_backend(spec), spec


def _infer_backend(spec: str) -> str:
    if spec in BUNDLED_MODELS:
        return "llamacpp"
    if spec.lower().startswith(("http://", "https://")):
        return "openai"
    path = Path(spec).expanduser()
    lower = spec.lower()
    if lower.endswith(".gguf"):
        return "llamacpp"
    if lower.endswith(_TABLE_SUFFIXES):
        return "table"
    if path.is_dir():
        return "hf"
    if path.is_file():
        with path.open("rb") as f:
            if f.read(4) == b"GGUF":
                return "llamacpp"
    if not path.exists():
        raise ModelNotFoundError(
            f"model {redact(spec)!r} is not a bundled model ({', '.join(sorted(BUNDLED_MODELS))}), "
            f"an existing .gguf file or model directory, a table file, or a URL; "
            f"prefix a backend ({', '.join(f'{b}:' for b in BACKENDS)}) to be explicit")
    raise ValueError(f"cannot tell which backend serves {redact(spec)!r}; prefix one of "
                     f"{', '.join(f'{b}:' for b in BACKENDS)}")


def _load_class(backend: str) -> Any:
    target = BACKENDS[backend]
    module_name, _, cls_name = target.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = {"hf": " (install the extra: pip install 'activetest[hf]')"}.get(backend, "")
        raise ImportError(f"backend {backend!r} is not available: cannot import "
                          f"{module_name} ({exc}){hint}") from exc
    return getattr(module, cls_name)


def get_scorer(spec: str | os.PathLike[str], backend: str | None = None,
               **options: Any) -> Scorer:
    """Build the scorer a spec names.

    Args:
        spec: see the module docstring, e.g. ``"smollm2-135m"``, ``"hf:gemma3-270m"``,
            ``"openai:http://127.0.0.1:8000/v1#my-model"``, ``"table:preds.csv"``.
        backend: force a backend (``llamacpp``, ``hf``, ``openai``, ``table``);
            default: the spec's prefix, else inferred (GGUF files -> llamacpp).
        **options: keyword arguments for the backend's constructor
            (e.g. ``n_ctx=4096`` for llamacpp).

    For ``openai`` the part after ``#`` is passed as ``model=``; every other backend
    gets the rest of the spec as its first argument.

    Raises:
        ValueError: malformed spec or unknown backend.
        ModelNotFoundError: the model does not exist (says what to install).
        ImportError: the backend's module or its dependencies are missing.
    """
    text = os.fspath(spec).strip()
    if text.startswith(CALIBRATED):
        from activetest.models.calibration import CONTENT_FREE, CalibratedScorer

        inner = text[len(CALIBRATED):]
        if parse_spec(inner, backend)[0] == "table":
            # a table holds the scores of its own items only (QA: "sur.csv: no row for 3 of
            # 3 item id(s): '__content_free_0__', ...")
            raise ValueError(
                f"model spec {redact(text)!r}: contextual calibration scores content-free "
                f"inputs ({', '.join(map(repr, CONTENT_FREE))}) with the model's prompt, "
                f"which a table: file "
                f"of precomputed scores cannot do; calibrate the model that wrote the table "
                f"(calibrated:MODEL), or pass the table without calibrated:")
        return CalibratedScorer(get_scorer(inner, backend, **options))
    name, rest = parse_spec(text, backend)
    cls = _load_class(name)
    if name == "openai":
        from activetest.models.openai import split_spec

        url, model = split_spec(rest)
        if model == "":
            raise ValueError(f"model spec {redact(os.fspath(spec))!r}: empty model name after "
                             f"'#' (write the URL alone to use the server's one model)")
        if model:
            options = {"model": model, **options}
        return cls(url, **options)
    if name == "table":
        from activetest.models.table import parse_table_spec

        path, spec_options = parse_table_spec(rest)
        return cls(path, **{**spec_options, **options})
    return cls(rest, **options)


def label_scoring_options(spec: str | os.PathLike[str], mode: str, *,
                          name: str | None = None) -> dict[str, Any]:
    """The :func:`get_scorer` options that make the model ``spec`` read each class from its
    label word as ``mode`` says (:data:`~activetest.models.labels.LABEL_SCORING_MODES`).

    ``first-token`` (every backend's default) needs none; ``full-sequence`` is
    ``full_sequence=True`` for the backends that have it (:data:`FULL_SEQUENCE_BACKENDS`),
    and nothing for a ``table:`` file (its scores were made elsewhere and are read as
    they are). ``name``: how the model is named in the error (default: the spec).

    Raises:
        ValueError: an unknown mode, or full-sequence for a backend without it
            (``openai:``: a server's completions show first tokens only), naming the model.
    """
    from activetest.models.labels import FIRST_TOKEN, LABEL_SCORING_MODES

    if mode not in LABEL_SCORING_MODES:
        raise ValueError(f"label scoring must be one of {', '.join(LABEL_SCORING_MODES)}, "
                         f"got {mode!r}")
    if mode == FIRST_TOKEN:
        return {}
    backend, _ = parse_spec(os.fspath(spec))
    if backend in FULL_SEQUENCE_BACKENDS:
        return {"full_sequence": True}
    if backend == "table":
        return {}
    who = name if name is not None else repr(redact(os.fspath(spec)))
    raise ValueError(f"model {who}: the {backend} backend has no full-sequence scoring (it "
                     f"reads each class from its label word's first token only), so it "
                     f"cannot score whole words (--label-scoring {mode}); score by first "
                     f"tokens (--label-scoring first-token, the default), or use a llama.cpp "
                     f"or transformers model (a bundled name, FILE.gguf, hf:MODEL)")
