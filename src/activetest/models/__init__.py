"""Models: scoring backends (items -> N x C class log-probabilities)."""

from __future__ import annotations

from activetest.models.base import Scorer, Scores
from activetest.models.bundled import (
    BUNDLED_MODELS,
    BundledModel,
    ModelNotFoundError,
    bundled_model_path,
    default_cache_dir,
    model_format,
    resolve_model,
)
from activetest.models.labels import (
    LabelTokenCollision,
    LabelTokens,
    canonical_ids,
    label_sequences,
    label_token_ids,
    select_label_tokens,
    task_label_tokens,
)

__all__ = [
    "BUNDLED_MODELS",
    "BundledModel",
    "LabelTokenCollision",
    "LabelTokens",
    "ModelNotFoundError",
    "Scorer",
    "Scores",
    "bundled_model_path",
    "canonical_ids",
    "default_cache_dir",
    "label_sequences",
    "label_token_ids",
    "model_format",
    "resolve_model",
    "select_label_tokens",
    "task_label_tokens",
]
