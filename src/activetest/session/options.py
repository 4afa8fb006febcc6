"""The scalar options a caller passes, checked type first, then range.

``Session.create``, ``Session.estimate`` and the in-memory :class:`~activetest.ActiveTest`
take the same options (``level``, ``n_boot``, ``target_width``, ``shots``, ``compare``).
Each is checked here once, so a wrong type is the same :class:`ValueError` saying what
to pass wherever it is given, never a ``TypeError`` from comparing a string with a
number, and a float or a string is refused, not truncated (``n_boot=10.7`` is not 10
resamples).
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

__all__ = ["GRADED_TARGETS", "MIN_TARGET_WIDTH", "as_integer", "check_classification_targets",
           "check_count", "check_flag", "check_label_scoring", "check_level", "check_n_boot",
           "check_path", "check_target_width", "compare_specs"]

#: The narrowest interval width a projection is made for (narrower ones would need
#: more labels than any pool has, and overflow the projection).
MIN_TARGET_WIDTH = 1e-6


def _shown(value: Any) -> Any:
    """``value`` as the caller wrote it (``True``, ``300``: not ``np.True_``, ``np.int64(300)``)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "shape", None) == () else value


def as_integer(value: Any) -> int | None:
    """``value`` as an int if it is an integer (Python or numpy), else None: a bool
    (Python's or numpy's, ``np.True_``), a float (even ``300.0``) or a string is not one
    (refused by the callers, not truncated)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def check_level(level: Any) -> float:
    """An interval coverage in (0, 1) as a float.

    Raises:
        ValueError: not a real number (a string, a bool) or outside (0, 1).
    """
    if isinstance(level, bool) or not isinstance(level, numbers.Real) \
            or not 0 < float(level) < 1:
        raise ValueError(f"level must be a coverage in (0, 1), e.g. 0.95, got "
                         f"{_shown(level)!r}")
    return float(level)


def check_n_boot(n_boot: Any) -> int:
    """The bootstrap's resamples: an integer (Python or numpy) from 2 to
    :data:`activetest.stats.bootstrap.MAX_BOOT`.

    Raises:
        ValueError: a float, a string or a bool (refused, not truncated), or out of range.
    """
    from activetest.stats.bootstrap import MAX_BOOT

    n = as_integer(n_boot)
    if n is None or n < 2:
        raise ValueError(f"n_boot must be a whole number of bootstrap resamples, 2 or more "
                         f"(e.g. 1000), got {_shown(n_boot)!r}")
    if n > MAX_BOOT:
        raise ValueError(f"n_boot must be <= {MAX_BOOT:,}, got {n:,} (more resamples "
                         f"change the interval by far less than its own width)")
    return n


def check_target_width(target_width: Any) -> float | None:
    """The interval width whose labels are projected (None: none), as a float: a real
    number from :data:`MIN_TARGET_WIDTH`, finite.

    Raises:
        ValueError: not a real number (a string, a bool: ``True`` is not a width of 1),
            NaN, infinite or below the minimum.
    """
    if target_width is None:
        return None
    if isinstance(target_width, bool) or not isinstance(target_width, numbers.Real) \
            or not MIN_TARGET_WIDTH <= float(target_width) < math.inf:
        raise ValueError(f"target width must be a number from {MIN_TARGET_WIDTH:g} (in the "
                         f"metric's units, e.g. 0.05), got {_shown(target_width)!r}")
    return float(target_width)


def check_count(value: Any, name: str, what: str) -> int | None:
    """A count of 0 or more (None stays None): ``shots``, ``target_shots``.

    ``what`` says what is counted, for the message (``"in-context examples"``).

    Raises:
        ValueError: a float, a string or a bool, or a negative number, naming ``name``.
    """
    if value is None:
        return None
    n = as_integer(value)
    if n is None or n < 0:
        raise ValueError(f"{name} must be a whole number of {what}, 0 or more, got "
                         f"{_shown(value)!r}")
    return n


def check_flag(value: Any, name: str) -> bool:
    """A yes/no option (``overwrite``, ``predictions``, ``progress``) as a bool: ``True``
    or ``False`` (a numpy bool too).

    Raises:
        ValueError: anything else, named with ``name`` and the value (QA: ``"no"`` was
            read as yes and ``None`` as no, silently).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {type(value).__name__} "
                     f"{_shown(value)!r}")


def check_path(value: Any, name: str, what: str = "a file") -> str | os.PathLike[str]:
    """A path argument (a file to write or read, a report folder): a string or a
    ``pathlib.Path`` that names something, returned as given.

    ``what`` says what it should name, for the message (``"a file"``, ``"a folder"``).

    Raises:
        ValueError: anything else (None, a number, bytes), or an empty or blank string,
            named with ``name`` and the value (QA: ``export(None)`` raised Python's
            "expected str, bytes or os.PathLike object, not NoneType", and
            ``write_report("")`` wrote the report into the working folder).
    """
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise ValueError(f"{name} must be a path naming {what} (a string or a "
                         f"pathlib.Path), got {type(value).__name__} {_shown(value)!r}")
    if not text.strip():
        raise ValueError(f"{name} must name {what}, got {value!r}")
    return value  # type: ignore[no-any-return]


def compare_specs(compare: Any) -> list[Any]:
    """The compared targets as a list: a spec (``str`` or path) or a single model
    object is one target; a list or tuple is several; None, ``()`` or ``[]`` is none.
    (A string is never read as its characters.)

    Raises:
        ValueError: anything else, named with its value: ``0``, ``False`` or ``""`` are
            not "no comparison" (QA: they were read as none, silently), nor is an
            empty or blank spec a model; an entry that is neither a spec nor a model
            object.
    """
    if compare is None:
        return []
    many = isinstance(compare, (list, tuple))
    out = list(compare) if many else [compare]
    for j, o in enumerate(out):  # (QA: compare=5 raised "'int' object has no attribute 'score'")
        at = f"compare[{j}]" if many else "compare"
        if isinstance(o, (str, os.PathLike)):
            if not os.fspath(o).strip():
                raise ValueError(f"{at}: {o!r} is an empty model spec; name a model (e.g. "
                                 f"'table:other.csv'), or pass None for no comparison")
        elif not callable(getattr(o, "score", None)):
            also = "" if many else (", nor a list or tuple of them (None, () or [] for no "
                                    "comparison)")
            raise ValueError(f"{at}: {_shown(o)!r} is neither a model spec (a string, e.g. "
                             f"'table:other.csv') nor a model object (one with a score "
                             f"method){also}; got {type(o).__name__}")
    return out


def check_label_scoring(mode: Any, models: Any = ()) -> str:
    """``label_scoring`` (``first-token`` or ``full-sequence``), checked with the models
    given as specs (``models``), before anything is read or scored: a model whose backend
    cannot read its classes that way (``openai:`` and full-sequence) is refused by name.

    Raises:
        ValueError: an unknown mode, or a model that cannot score by it.
    """
    from activetest.session.config import LABEL_SCORING

    if not isinstance(mode, str) or mode not in LABEL_SCORING:
        raise ValueError(f"label_scoring must be one of {', '.join(LABEL_SCORING)}, got "
                         f"{_shown(mode)!r}")
    if mode != LABEL_SCORING[0]:
        from activetest.models.registry import label_scoring_options
        from activetest.session.scoring import stored_spec

        for m in models:
            if isinstance(m, (str, os.PathLike)):
                label_scoring_options(m, mode, name=repr(stored_spec(os.fspath(m))))
    return mode


#: Target specs only a graded task reads (``answers:FILE`` and the bare words), with what
#: each is; a classification target gives class log-probs instead.
GRADED_TARGETS = {"answers:": "an answer log (answers:FILE)",
                  "pool": "the pool's answer column (pool)",
                  "lm-eval": "a target run by lm-eval (lm-eval)",
                  "inspect": "a target run by inspect_ai (inspect)"}


def check_classification_targets(targets: Any, task_name: str) -> None:
    """Refuse, before anything is read or scored, a classification task's target (or
    compared target) given as a graded task's: ``answers:FILE`` (QA: read as a table
    path, "answers:nope.jsonl: no such file or folder (given as the prediction table)"),
    or the bare words ``pool``, ``lm-eval``, ``inspect`` where no file of that name
    exists (QA: "'pool' is not a bundled model"). The message says what a
    classification target is instead.

    Args:
        targets: the target and the compared targets (specs or model objects; only
            strings and paths are looked at).
        task_name: the classification task's name, for the message.

    Raises:
        ValueError: a graded task's target spec.
    """
    for spec in targets:
        if not isinstance(spec, (str, os.PathLike)):
            continue
        text = os.fspath(spec).strip()
        word = "answers:" if text.startswith("answers:") else text.partition("?")[0]
        if word not in GRADED_TARGETS or (word != "answers:" and os.path.exists(text)):
            continue
        raise ValueError(
            f"{text}: {GRADED_TARGETS[word]} is a target of graded tasks (free-form answers "
            f"judged by people; --task squad, answers or a task file with kind = "
            f"\"graded\"); task {task_name!r} is a classification task, whose target gives "
            f"class log-probs: a model (smollm2-135m, gemma3-270m, FILE.gguf, hf:ORG/MODEL, "
            f"openai:URL#MODEL) or its predictions read from a file, table:FILE (per-item "
            f"log-probs, or an lm-eval samples file: table:samples_TASK_DATE.jsonl)")
