"""One rule for what a label written in a file means, used by every reader.

Class numbers mean different things in different places (the terminal labeller
shows keys 1..C, Python and most datasets count from 0), so a bare number in a
file is never guessed at. :class:`LabelReader` reads a raw label value as:

1. a label word or class name of the task (exact, then ignoring case and
   surrounding blanks), or a key of a ``label_map`` (the task file's, or one
   given to the reader): always;
2. a class NUMBER (an integer, an integral float, or a string of digits) only
   where a numbering is declared for that file: ``base`` 0 or 1 (the CLI's
   ``--label-base``, or the task file's ``label_base`` for its pool and example
   files), so that class ``k`` is written ``k + base``;
3. anything else, and a number without a declared numbering, is refused with
   an error naming the file, the line and what was expected.

A task whose label words are themselves numerals (star ratings ``"1"``..``"5"``)
reads them as words (rule 1); a declared base that would read them differently
is refused as ambiguous.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from activetest.data.task import Task

__all__ = ["LABEL_BASES", "LabelReader", "check_label_base"]

#: The class numberings a file may declare: counted from 0 or from 1.
LABEL_BASES = (0, 1)
_INT = re.compile(r"^[+-]?\d{1,18}$")


def check_label_base(base: Any, what: str = "label base") -> int | None:
    """``base`` if it is None, 0 or 1; a ValueError otherwise."""
    if base is None:
        return None
    if isinstance(base, bool) or not isinstance(base, int) or base not in LABEL_BASES:
        raise ValueError(f"{what} must be 0 or 1 (classes counted from 0 or from 1), got "
                         f"{base!r}")
    return base


def _key(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _fold(text: str) -> str:
    """A label as compared when case, surrounding blanks and Unicode form do not count
    (NFC: 'é' typed as e + combining accent is 'é')."""
    return unicodedata.normalize("NFC", text.strip()).casefold()


def _short(value: Any, n: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."


class LabelReader:
    """Raw label value -> class index under the rule of the module docstring.

    Args:
        task: the task (its label words, class names and ``label_map``); None
            reads only ``label_map`` keys and declared numbers.
        base: the file's declared class numbering (0 or 1), or None: numbers refused.
        label_map: more raw value -> class mappings (values: a class index, 0-based,
            or a label word / class name), consulted before the task's.
        error: the exception type raised (a ``ValueError`` subclass).
        number_hint: how the user declares a numbering where this file is read
            (shown when a number is refused).

    Raises:
        ValueError: a ``label_map`` value that is not a class, or a base that
            contradicts numeric label words.
    """

    def __init__(self, task: Task | None, *, base: int | None = None,
                 label_map: Mapping[Any, int | str] | None = None,
                 error: type[ValueError] = ValueError,
                 number_hint: str = "pass --label-base 0 or 1 (label_base= in Python)") -> None:
        self.task = task
        self.base = check_label_base(base)
        self.error = error
        self.number_hint = number_hint
        self.n_classes = task.n_classes if task is not None else None
        self.exact: dict[str, int] = {}
        self.folded: dict[str, int] = {}
        if task is not None:
            for names in (task.classes, task.class_names):
                for i, w in enumerate(names):
                    self.exact.setdefault(w, i)
                    self.folded.setdefault(_fold(w), i)
        self.map: dict[str, int] = {}
        for key, value in (label_map or {}).items():
            self.map[_key(key)] = self._target(key, value)
        if task is not None:
            for key, idx in task.label_map.items():
                self.map.setdefault(key, idx)
        # case, blanks and Unicode form are ignored for label_map keys as for label words
        # (QA: 'NEG' refused where the map had 'neg'; a word typed in NFD refused beside
        # the same word in NFC, "expected one of 'négatif', ...")
        self.map_folded: dict[str, int] = {}
        for key, idx in self.map.items():
            self.map_folded.setdefault(_fold(key), idx)
        if self.base is not None and task is not None:
            for i, w in enumerate(task.classes):
                if _INT.match(w.strip()) and int(w) - self.base != i:
                    raise ValueError(f"task {task.name!r}: label word {w!r} is class {i} but "
                                     f"would read as class {int(w) - self.base} counted from "
                                     f"{self.base}: the numbering is ambiguous; drop the "
                                     f"label base (the words are read as words)")

    def _target(self, key: Any, value: int | str) -> int:
        if isinstance(value, str):
            if value in self.exact:
                return self.exact[value]
            words = ", ".join(self.task.classes) if self.task else "no task given"
            raise ValueError(f"label_map[{key!r}] = {value!r} is not a label word of the task "
                             f"({words})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (
                self.n_classes is not None and value >= self.n_classes):
            raise ValueError(f"label_map[{key!r}] = {value!r} is not a valid class index")
        return value

    def _fail(self, where: str, msg: str) -> ValueError:
        return self.error(f"{where}: {msg}" if where else msg)

    def expected(self) -> str:
        """What a label may be, for error messages."""
        keys = ""
        if self.map:
            shown = sorted(self.map)
            keys = (" or a label_map key (" + ", ".join(map(repr, shown[:12]))
                    + (", ..." if len(shown) > 12 else "") + ")")
        if self.task is None:
            return "a label_map key" + keys[len(" or a label_map key"):] + (
                "" if self.base is None else f" or a class number counted from {self.base}")
        words = ", ".join(repr(w) for w in self.task.classes)
        names = ""
        if tuple(self.task.class_names) != tuple(self.task.classes):
            names = " (or the class names " + ", ".join(map(repr, self.task.class_names)) + ")"
        number = ("" if self.base is None else
                  f" or a class number {self.base}..{self.task.n_classes - 1 + self.base}")
        return f"one of {words}{names}{number}{keys}"

    def _number(self, n: int, raw: Any, where: str) -> int:
        if self.base is None:
            words = f"the class name ({self.expected()})" if self.task is not None else \
                "a label_map key"
            raise self._fail(where, f"label {_short(raw)} is a number, but this file declares "
                             f"no class numbering (the terminal labeller counts classes from "
                             f"1, most datasets from 0): write {words}, or declare it: "
                             f"{self.number_hint}")
        y = n - self.base
        if y < 0 or (self.n_classes is not None and y >= self.n_classes):
            span = (f"{self.base}..{self.n_classes - 1 + self.base}" if self.n_classes
                    is not None else f">= {self.base}")
            raise self._fail(where, f"label {_short(raw)} is not a class number {span} "
                             f"(classes counted from {self.base})")
        return y

    def __call__(self, raw: Any, where: str) -> int | None:
        """The class index of ``raw``; None for an empty or missing label.

        Raises:
            the reader's ``error``: naming ``where`` and what was expected.
        """
        if raw is None or (isinstance(raw, float) and math.isnan(raw)):
            return None
        if isinstance(raw, bool):
            raise self._fail(where, f"label {raw!r} is a boolean; expected {self.expected()}")
        if isinstance(raw, float) and not raw.is_integer():
            raise self._fail(where, f"label {raw!r} is not a whole number; expected "
                             f"{self.expected()}")
        if not isinstance(raw, (str, int, float)):
            raise self._fail(where, f"label {_short(raw)} is a {type(raw).__name__}; "
                             f"expected {self.expected()}")
        key = _key(raw)
        if key == "":
            return None
        if isinstance(raw, str):
            if raw in self.exact:
                return self.exact[raw]
            if key in self.exact:
                return self.exact[key]
        if key in self.map:
            return self.map[key]
        if not isinstance(raw, str) and key in self.exact:  # numeric label words: 5 -> "5"
            return self.exact[key]
        if _fold(key) in self.map_folded:
            return self.map_folded[_fold(key)]
        if _fold(key) in self.folded:
            return self.folded[_fold(key)]
        if _INT.match(key):
            return self._number(int(key), raw, where)
        if re.fullmatch(r"[+-]?\d+", key):
            raise self._fail(where, f"label {key[:20]}... is not a class number")
        raise self._fail(where, f"unknown label {_short(raw)}; expected {self.expected()}")
