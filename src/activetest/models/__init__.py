"""Models: scoring backends (items -> N x C class log-probabilities)."""

from activetest.models.base import Scorer, Scores

__all__ = ["Scorer", "Scores"]
