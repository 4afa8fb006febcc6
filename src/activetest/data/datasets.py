"""The shared evaluation datasets with the paper's preprocessing.

:func:`load_shared` reads one dataset from a local folder laid out like
``../shared/datasets`` (``sst2/train.tsv``, ``subj/train.jsonl``, ...) and returns
a :class:`SharedDataset`: the task, the items, and (Subj, MMLU) a separate
source of in-context examples. Item ids are the 0-based row numbers of the
records in their file, as strings (HS rows with labels 2/3 are dropped and
leave gaps); ids of the separate example source carry its file's stem as a
prefix (``"test:17"``, ``"dev:3"``) so they never collide with the items' ids.
Row-number ids let cached model outputs be stored without any dataset text.

Preprocessing, as the literature does it:

=======  ===============================  =========================================
name     file                             preprocessing
=======  ===============================  =========================================
sst2     ``sst2/train.tsv``               none (sentences keep their final space)
subj     ``subj/train.jsonl``             examples from ``subj/test.jsonl``
fpb      ``fpb/Sentences_AllAgree.txt``   ISO-8859-1, split on the last ``@``
hs       ``hatespeech/hate_speech18_...`` keep labels 0 (no) and 1 (yes) only
mmlu     ``mmlu/test.jsonl``              ``choices`` -> fields A-D; examples from dev
=======  ===============================  =========================================

:data:`PAPER_SETUPS` holds the paper's pool/test sizes and numbers of examples.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from activetest.data.builtin import get_task
from activetest.data.pool import Pool, load_pool
from activetest.data.split import Split, split_items
from activetest.data.task import Item, Task

__all__ = ["DATASETS_ENV", "PAPER_SETUPS", "SHARED_NAMES", "PaperSetup", "SharedDataset",
           "find_shared_root", "load_shared"]

#: Environment variable naming the datasets folder (used when ``root`` is not given).
DATASETS_ENV = "ACTIVETEST_DATASETS"

#: Names :func:`load_shared` accepts.
SHARED_NAMES = ("sst2", "subj", "fpb", "hs", "mmlu")

_MMLU_FIELDS = {"question": "question", "A": "choices[0]", "B": "choices[1]",
                "C": "choices[2]", "D": "choices[3]", "subject": "subject"}


@dataclass(frozen=True)
class PaperSetup:
    """The paper's experimental sizes for one dataset.

    Attributes:
        pool_size: pool size.
        test_size: held-out test-set size (0: the pool is the ground truth; ``None``:
            everything left over).
        n_examples: in-context examples for the surrogate.
        note: how the sizes relate to the files here.
    """

    pool_size: int
    test_size: int | None
    n_examples: int
    note: str = ""


#: Sizes from METHOD.md ("Pool / test sizes"; n = 50 examples, 5 for MMLU).
PAPER_SETUPS: dict[str, PaperSetup] = {
    "sst2": PaperSetup(10_000, 10_000, 50, "pool and test drawn from GLUE train"),
    "subj": PaperSetup(6_000, None, 50, "the paper reports 6,000/4,000; train has 8,000 rows, "
                                        "so the test set here is the other 2,000"),
    "fpb": PaperSetup(2_200, 0, 50, "the pool is the ground truth"),
    "hs": PaperSetup(6_000, 4_000, 50, "paper: ~6,000 / ~4,000"),
    "mmlu": PaperSetup(7_000, 7_000, 5, "examples from dev"),
}


@dataclass(frozen=True)
class SharedDataset:
    """One shared dataset, ready to split.

    Attributes:
        name: ``sst2``, ``subj``, ``fpb``, ``hs`` or ``mmlu``.
        task: the built-in task with the paper's prompt.
        items: the items (ids = row numbers in ``items.source``).
        example_source: where in-context examples come from when not from
            ``items`` (Subj: test file; MMLU: dev file), else ``None``.
        setup: the paper's sizes for this dataset.
    """

    name: str
    task: Task
    items: Pool
    example_source: Pool | None
    setup: PaperSetup

    def split(self, seed: int, *, n_examples: int | None = None, pool_size: int | None = None,
              test_size: int | bool | None = True) -> Split:
        """Split with the paper's sizes (each overridable); see :func:`split_items`.

        ``test_size=True`` (the default) means the paper's test size.
        """
        s = self.setup
        return split_items(
            self.items, seed=seed,
            n_examples=s.n_examples if n_examples is None else n_examples,
            pool_size=s.pool_size if pool_size is None else pool_size,
            test_size=s.test_size if test_size is True else test_size,
            example_source=self.example_source, n_classes=self.task.n_classes)


def find_shared_root(root: str | Path | None = None) -> Path:
    """The datasets folder: ``root``, else ``$ACTIVETEST_DATASETS``, else ``../shared/datasets``.

    Raises:
        FileNotFoundError: none of these is a folder.
    """
    candidates = [Path(root)] if root is not None else [
        *([Path(os.environ[DATASETS_ENV])] if os.environ.get(DATASETS_ENV) else []),
        Path.cwd() / ".." / "shared" / "datasets"]
    for c in candidates:
        if c.is_dir():
            return c
    raise FileNotFoundError(f"no datasets folder at {', '.join(map(str, candidates))} (pass "
                            f"root= or set ${DATASETS_ENV})")


def _prefixed(pool: Pool, prefix: str) -> Pool:
    items = tuple(Item(id=f"{prefix}:{it.id}", fields=it.fields, label=it.label) for it in pool)
    return replace(pool, items=items)


def _file(root: Path, rel: str) -> Path:
    path = root / rel
    if not path.is_file():
        raise FileNotFoundError(f"dataset file missing: {path}")
    return path


def load_shared(name: str, root: str | Path | None = None, *,
                fpb_variant: str = "AllAgree") -> SharedDataset:
    """Load one shared dataset with the paper's preprocessing (see the module docstring).

    Args:
        name: ``sst2``, ``subj``, ``fpb``, ``hs``/``hatespeech`` or ``mmlu``.
        root: the datasets folder (default: :func:`find_shared_root`).
        fpb_variant: which FPB file, ``AllAgree`` (the paper's) or ``50Agree``, ...

    Raises:
        ValueError: an unknown name.
        FileNotFoundError: the folder or a file is missing.
    """
    key = {"hatespeech": "hs", "sst-2": "sst2"}.get(name.lower(), name.lower())
    if key not in SHARED_NAMES:
        raise ValueError(f"unknown shared dataset {name!r}; expected one of "
                         f"{', '.join(SHARED_NAMES)}")
    base = find_shared_root(root)
    task = get_task(key)
    examples: Pool | None = None
    if key == "sst2":
        items = load_pool(_file(base, "sst2/train.tsv"), task=task, text_column="sentence",
                          label_column="label")
    elif key == "subj":
        items = load_pool(_file(base, "subj/train.jsonl"), task=task, label_column="label")
        examples = _prefixed(load_pool(_file(base, "subj/test.jsonl"), task=task,
                                       label_column="label"), "test")
    elif key == "fpb":
        items = load_pool(_file(base, f"fpb/Sentences_{fpb_variant}.txt"), format="fpb",
                          task=task, label_column="label")
    elif key == "hs":
        items = load_pool(_file(base, "hatespeech/hate_speech18_train.jsonl"), task=task,
                          label_column="label", drop_labels=(2, 3))
    else:
        items = load_pool(_file(base, "mmlu/test.jsonl"), task=task, label_column="answer",
                          field_columns=_MMLU_FIELDS)
        examples = _prefixed(load_pool(_file(base, "mmlu/dev.jsonl"), task=task,
                                       label_column="answer", field_columns=_MMLU_FIELDS),
                             "dev")
    return SharedDataset(name=key, task=task, items=items, example_source=examples,
                         setup=PAPER_SETUPS[key])
