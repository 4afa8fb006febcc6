"""lm-evaluation-harness ``--log_samples`` files: moved to :mod:`activetest.formats.lmeval`
(reading the format) and :mod:`activetest.data.choices` (putting a file's choices on the
task's classes).

This name stays so that code importing ``activetest.models.lmeval`` keeps working.
"""

from __future__ import annotations

from activetest.data.choices import CHOICE_RULES, ChoiceAlignment, class_logprobs, gold_classes
from activetest.formats.lmeval import (
    LmEvalSamples,
    check_documents,
    document_texts,
    lmeval_documents,
    lmeval_files,
    load_lmeval_samples,
    looks_like_lmeval,
    normalise_text,
    read_lmeval_samples,
    task_of_file,
)

__all__ = ["CHOICE_RULES", "ChoiceAlignment", "LmEvalSamples", "check_documents",
           "class_logprobs", "document_texts", "gold_classes", "lmeval_documents", "lmeval_files",
           "load_lmeval_samples", "looks_like_lmeval", "normalise_text", "read_lmeval_samples",
           "task_of_file"]
