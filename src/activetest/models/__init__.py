"""Models: scoring backends (items -> N x C class log-probabilities)."""

from __future__ import annotations

from activetest.models._util import forward_progress, phased_progress_bar, progress_bar
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
from activetest.models.cache import CacheCorruptionWarning, CachedScorer, ScoreCache
from activetest.models.calibration import CalibratedScorer, contextual_calibration
from activetest.models.labels import (
    LabelScoring,
    LabelTokenCollision,
    LabelTokens,
    MultiTokenLabelNotice,
    canonical_ids,
    label_sequences,
    label_token_ids,
    select_label_tokens,
    task_label_tokens,
)
from activetest.models.llamacpp import ContextOverflowError, LlamaCppScorer, TruncationWarning
from activetest.models.registry import BACKENDS, get_scorer, parse_spec

__all__ = [
    "BACKENDS",
    "BUNDLED_MODELS",
    "BundledModel",
    "CacheCorruptionWarning",
    "CachedScorer",
    "CalibratedScorer",
    "ContextOverflowError",
    "LabelScoring",
    "LabelTokenCollision",
    "LabelTokens",
    "LlamaCppScorer",
    "ModelNotFoundError",
    "MultiTokenLabelNotice",
    "ScoreCache",
    "Scorer",
    "Scores",
    "TruncationWarning",
    "bundled_model_path",
    "canonical_ids",
    "contextual_calibration",
    "default_cache_dir",
    "forward_progress",
    "get_scorer",
    "label_sequences",
    "label_token_ids",
    "model_format",
    "parse_spec",
    "phased_progress_bar",
    "progress_bar",
    "resolve_model",
    "select_label_tokens",
    "task_label_tokens",
]
