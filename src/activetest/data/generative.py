"""Generative (graded) tasks: a prompt, a free-form answer, and a judgment of it.

For a classification task the loss comes from the target's class probabilities;
here the target *answers* in free text, someone (a person, or an automatic judge
with references) *judges* the answer, and the per-item loss is ``1 - score`` of
the judgment. :class:`GenTask` renders the prompts exactly as :class:`Task` does
(a shared prefix of instruction and in-context examples, then the item), so the
backends reuse the prefix's key/value cache when generating.

SQuAD v1.1 (:func:`load_squad`) comes with the official automatic judge:
answers and references are normalised (lower case, punctuation and the articles
a/an/the removed, whitespace collapsed), then :func:`exact_match` is 1 when the
answer equals any reference and :func:`token_f1` is the best token-overlap F1
over the references (Rajpurkar et al. 2016, the official evaluation script).
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from activetest.data.task import Item, TaskFileError
from activetest.formats.tables import column_names, read_records

__all__ = ["ANSWERS", "FULL_PROMPT", "SQUAD", "GenTask", "GradedItem", "Judgment", "QAItem",
           "cut_at_stop", "exact_match", "gen_task_from_dict", "gen_task_to_dict",
           "load_graded_pool", "load_squad", "normalize_answer", "token_f1"]


@dataclass(frozen=True)
class Judgment:
    """The judgment levels people (or a judge) choose from, and the score of each.

    ``levels[k]`` is shown to the person, ``scores[k]`` in [0, 1] is its credit; the
    loss of an item judged ``k`` is ``1 - scores[k]``.
    """

    levels: tuple[str, ...] = ("incorrect", "correct")
    scores: tuple[float, ...] = (0.0, 1.0)

    def __post_init__(self) -> None:
        if len(self.levels) < 2 or len(self.levels) != len(self.scores):
            raise ValueError(f"judgment needs >= 2 levels with one score each, got "
                             f"{list(self.levels)} and {list(self.scores)}")
        if len(set(self.levels)) != len(self.levels):
            raise ValueError(f"judgment levels must be distinct, got {list(self.levels)}")
        if any(not 0.0 <= s <= 1.0 for s in self.scores):
            raise ValueError(f"judgment scores must lie in [0, 1], got {list(self.scores)}")

    def loss(self, level: int) -> float:
        """``1 - score`` of a level."""
        return 1.0 - self.scores[level]


#: The item field holding a harness log's full prompt (its in-context examples, then the
#: item's own input) when the log is the pool: judging screens show the own input.
FULL_PROMPT = "full_prompt"


@dataclass(frozen=True)
class GenTask:
    """A generative task: instruction, templates, and how answers are judged.

    Attributes:
        name: short identifier, e.g. ``"squad"``.
        instruction: printed once at the top of every prompt.
        item_template: the item suffix, ending just before the answer (e.g.
            ``"...\\nAnswer:"``); ``str.format`` fields from the item.
        example_template: one in-context example, with ``{answer}`` filled in.
        stop: strings that end an answer (not included in it).
        max_tokens: the longest answer generated.
        judgment: the levels a judge chooses from.
        columns: where each template field is found in a pool file.
    """

    name: str
    instruction: str
    item_template: str
    example_template: str
    stop: tuple[str, ...] = ("\n",)
    max_tokens: int = 16
    judgment: Judgment = field(default_factory=Judgment)
    columns: Mapping[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"task {self.name!r}: max_tokens must be >= 1, got "
                             f"{self.max_tokens}")
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "columns", dict(self.columns))

    # A person labels a graded item by choosing a judgment level, so to the labelling
    # machinery (parsing, sheets, Label Studio, the terminal) the levels are the classes.
    @property
    def classes(self) -> tuple[str, ...]:
        """The judgment levels (what a person chooses from)."""
        return self.judgment.levels

    @property
    def class_names(self) -> tuple[str, ...]:
        """The judgment levels, as shown."""
        return self.judgment.levels

    @property
    def n_classes(self) -> int:
        """Number of judgment levels."""
        return len(self.judgment.levels)

    @property
    def label_map(self) -> dict[str, int]:
        """Other words people use for the levels of a binary judgment."""
        if self.judgment.levels != ("incorrect", "correct"):
            return {}
        return {"wrong": 0, "no": 0, "false": 0, "right": 1, "yes": 1, "true": 1}

    #: Fields a judge sees beyond the prompt's (sheets, Label Studio).
    display_extra: tuple[str, ...] = ("answer", "references")
    #: The question put to the person judging (Label Studio's header).
    judge_prompt: str = "Is the answer correct? Judge it against the question and the references."

    def display(self, item: Item, answer: str | None = None,
                references: Sequence[str] = ()) -> str:
        """What a judge sees: the item's prompt fields, the answer and the references.

        A log's full prompt (:data:`FULL_PROMPT`: the in-context examples before the
        item's own input) is not shown, only said to exist, below the answer."""
        lines = [f"{k}: {v}" for k, v in item.fields.items() if k != FULL_PROMPT]
        if references:
            lines.append("references: " + " | ".join(references))
        lines.append(f"answer to judge: {answer if answer is not None else '(none)'}")
        full = item.fields.get(FULL_PROMPT)
        if full:
            lines.append(f"(the model's full prompt, {len(full):,} characters with what came "
                         f"before this input, is the item's {FULL_PROMPT!r} field)")
        return "\n".join(lines)

    def template_fields(self) -> set[str]:
        """The item fields the templates refer to (``answer`` is the examples' own)."""
        names: set[str] = set()
        for tpl in (self.item_template, self.example_template):
            for _, fname, _, _ in string.Formatter().parse(tpl):
                if fname:
                    names.add(fname.split(".")[0].split("[")[0])
        return names - {"answer"}

    def _fmt(self, template: str, item: Item, **extra: str) -> str:
        try:
            return template.format(**{**item.fields, **extra})
        except KeyError as exc:
            raise ValueError(f"task {self.name!r}: item {item.id!r} has no field {exc.args[0]!r} "
                             f"(has {sorted(item.fields)})") from None

    def render_item(self, item: Item) -> str:
        """The item suffix of the prompt."""
        return self._fmt(self.item_template, item)

    def render_example(self, item: Item) -> str:
        """One in-context example with its answer (``fields["answer"]``)."""
        if "answer" not in item.fields:
            raise ValueError(f"in-context example {item.id!r} has no 'answer' field")
        return self._fmt(self.example_template, item)

    def prefix(self, examples: Sequence[Item] = ()) -> str:
        """Instruction plus the in-context examples, in the given order."""
        return self.instruction + "".join(self.render_example(e) for e in examples)

    def prompt(self, item: Item, examples: Sequence[Item] = ()) -> str:
        """The full prompt for one item."""
        return self.prefix(examples) + self.render_item(item)

    def clean(self, text: str) -> str:
        """A generated continuation cut at the first stop string, stripped."""
        return cut_at_stop(text, self.stop)


_GEN_KEYS = {"kind", "name", "instruction", "templates", "stop", "max_tokens", "judgment",
             "columns", "description"}


def gen_task_from_dict(data: Mapping[str, Any], source: str = "task") -> GenTask:
    """A :class:`GenTask` from plain data (a task file with ``kind = "graded"``).

    Schema::

        kind = "graded"
        name = "qa"
        instruction = "Answer the question."
        stop = ["\n"]                       # optional, default a newline
        max_tokens = 32                     # optional, default 16
        [templates]                         # required: item ends before the answer
        item = "Question: {question}\nAnswer:"
        example = "Question: {question}\nAnswer: {answer}\n\n"
        [judgment]                          # optional; default incorrect/correct = 0/1
        levels = ["incorrect", "partly", "correct"]
        scores = [0.0, 0.5, 1.0]

    Raises:
        ValueError: a missing, unknown or ill-typed key (naming file and key).
    """
    def fail(key: str, msg: str) -> ValueError:
        return TaskFileError(f"{source}: key {key!r}: {msg}")

    unknown = sorted(set(map(str, data)) - _GEN_KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown key for a graded task (known: "
                               f"{', '.join(sorted(_GEN_KEYS))})")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise fail("name", "is required (a non-empty string)")
    if not isinstance(data.get("instruction"), str):
        raise fail("instruction", "is required (a string; may be empty)")
    templates = data.get("templates")
    if not isinstance(templates, Mapping) or not all(
            isinstance(templates.get(k), str) for k in ("item", "example")):
        raise fail("templates", "needs 'item' and 'example' strings (the example uses "
                                "{answer})")
    if "{answer}" not in templates["example"] or "{answer}" in templates["item"]:
        raise fail("templates", "the example must use {answer} and the item must not")
    stop = data.get("stop", ["\n"])
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        raise fail("stop", f"expected a list of non-empty strings, got {stop!r}")
    max_tokens = data.get("max_tokens", 16)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise fail("max_tokens", f"expected a positive integer, got {max_tokens!r}")
    jd = data.get("judgment", {})
    if not isinstance(jd, Mapping):
        raise fail("judgment", "expected a table with 'levels' and 'scores'")
    try:
        judgment = Judgment(tuple(jd.get("levels", ("incorrect", "correct"))),
                            tuple(float(x) for x in jd.get("scores", (0.0, 1.0))))
    except (TypeError, ValueError) as exc:
        raise fail("judgment", str(exc)) from None
    columns = data.get("columns", {})
    if not isinstance(columns, Mapping):
        raise fail("columns", "expected a table")
    instruction = str(data["instruction"])
    if instruction and not instruction.endswith("\n"):
        instruction += "\n"
    return GenTask(name=str(data["name"]).strip(), instruction=instruction,
                   item_template=templates["item"], example_template=templates["example"],
                   stop=tuple(stop), max_tokens=int(max_tokens), judgment=judgment,
                   columns={str(k): str(v) for k, v in columns.items()})


def gen_task_to_dict(task: GenTask) -> dict[str, Any]:
    """Plain data for ``task``; inverse of :func:`gen_task_from_dict`."""
    out: dict[str, Any] = {
        "kind": "graded", "name": task.name, "instruction": task.instruction,
        "templates": {"item": task.item_template, "example": task.example_template},
        "stop": list(task.stop), "max_tokens": task.max_tokens,
        "judgment": {"levels": list(task.judgment.levels),
                     "scores": list(task.judgment.scores)}}
    if task.columns:
        out["columns"] = dict(task.columns)
    return out


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """``text`` up to the first of the stop strings, stripped."""
    cut = len(text)
    for s in stops:
        i = text.find(s)
        if i >= 0:
            cut = min(cut, i)
    return text[:cut].strip()


SQUAD = GenTask(
    name="squad",
    instruction="Answer the question with a short span copied from the context.\n\n",
    item_template="Context: {context}\nQuestion: {question}\nAnswer:",
    example_template="Context: {context}\nQuestion: {question}\nAnswer: {answer}\n\n",
    stop=("\n",),
    max_tokens=16,
    columns={"context": "context", "question": "question"},
)
"""SQuAD v1.1: answer with a span of the context; judged by exact match or token F1."""

ANSWERS = GenTask(name="answers", instruction="", item_template="",
                  example_template="{answer}")
"""Judging answers read from a file (``--target answers:FILE``): whatever prompt fields
the file has are shown; nothing is generated."""


# --------------------------------------------------------------------------- SQuAD


@dataclass(frozen=True)
class QAItem:
    """One SQuAD question: its prompt fields and the reference answers."""

    id: str
    context: str
    question: str
    references: tuple[str, ...]
    article: str = ""

    def item(self, answer: str | None = None) -> Item:
        """As a prompt :class:`Item` (with ``answer`` for an in-context example)."""
        fields = {"context": self.context, "question": self.question}
        if answer is not None:
            fields["answer"] = answer
        return Item(self.id, fields)


def load_squad(path: str | Path) -> list[QAItem]:
    """Every question of an official SQuAD v1.1 JSON file, in file order.

    Raises:
        ValueError: the file is not SQuAD JSON (names the first bad entry).
    """
    p = Path(path)
    try:
        data: Any = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{p}: expected SQuAD JSON with a top-level 'data' list")
    out: list[QAItem] = []
    for a, article in enumerate(data["data"]):
        for g, para in enumerate(article.get("paragraphs", [])):
            try:
                context = str(para["context"])
                for qa in para["qas"]:
                    refs = tuple(str(x["text"]) for x in qa["answers"])
                    out.append(QAItem(str(qa["id"]), context, str(qa["question"]), refs,
                                      str(article.get("title", ""))))
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{p}: article {a}, paragraph {g}: missing {exc}") from None
    return out


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """The official SQuAD normalisation: lower case, no punctuation/articles, one space."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(answer: str, references: Sequence[str]) -> float:
    """1.0 if the normalised answer equals any normalised reference, else 0.0."""
    a = normalize_answer(answer)
    return float(any(a == normalize_answer(r) for r in references))


def token_f1(answer: str, references: Sequence[str]) -> float:
    """The best token-overlap F1 of the normalised answer over the references."""
    a = normalize_answer(answer).split()
    best = 0.0
    for r in references:
        ref = normalize_answer(r).split()
        common = sum((Counter(a) & Counter(ref)).values())
        if not a or not ref:
            f1 = float(a == ref)
        elif common == 0:
            f1 = 0.0
        else:
            p, q = common / len(a), common / len(ref)
            f1 = 2 * p * q / (p + q)
        best = max(best, f1)
    return best


# --------------------------------------------------------------------------- pools


@dataclass(frozen=True)
class GradedItem:
    """One item of a graded pool.

    Attributes:
        item: the prompt fields (``Item.label`` is the judgment level a file gave, if any).
        references: reference answers (empty if none).
        answer: the target's answer, when the pool file already holds it.
        extra: the file's other columns (e.g. a confidence score), as read.
    """

    item: Item
    references: tuple[str, ...] = ()
    answer: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def _references(value: Any, where: str) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    text = str(value)
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return tuple(str(v) for v in parsed)
    if " | " in text:
        return tuple(t.strip() for t in text.split(" | "))
    return (text,)


def load_graded_pool(path: str | Path, task: GenTask, *, format: str | None = None,
                     id_column: str | None = "id", encoding: str | None = None,
                     references_column: str = "references", answer_column: str = "answer",
                     keep_columns: Sequence[str] = (),
                     ) -> list[GradedItem]:
    """A graded pool from SQuAD JSON or a table (CSV/TSV/JSONL/JSON/Parquet).

    SQuAD JSON (``data[].paragraphs[].qas[]``) gives one item per question, id the
    question id, references its answers. A table needs the task's template fields
    (through ``task.columns``; a task without template fields, such as ``answers``,
    takes every other column), an id column (``id_column``; None: row numbers), and
    optionally ``references`` (a JSON list, ``" | "``-separated text, or one answer),
    ``answer`` (the target's answer, if it was generated elsewhere) and ``judgment``
    (a level name: a judgment already given). ``keep_columns`` (a surrogate's column,
    ``--surrogate column:NAME``) are kept beside the item, never shown as prompt fields.

    Raises:
        ValueError: a missing field or id, a duplicate id, an unknown judgment level
            (naming the file and line).
    """
    p = Path(path)
    if p.suffix.lower() == ".json":
        try:
            head = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            head = None
        if isinstance(head, dict) and isinstance(head.get("data"), list):
            return [GradedItem(q.item(), q.references) for q in load_squad(p)]
    fields = sorted(task.template_fields())
    cols = {f: task.columns.get(f, f) for f in fields}
    out: list[GradedItem] = []
    seen: dict[str, str] = {}
    for n, (where, rec) in enumerate(read_records(p, format=format, encoding=encoding)):
        at = f"{p}, {where}"
        missing = [c for c in cols.values() if c not in rec]
        if missing:
            raise ValueError(f"{at}: no column(s) {missing} (columns: "
                             f"{column_names(rec, sort=True)}); map the "
                             f"task's fields to columns in the task file's [columns]")
        if id_column is not None and id_column not in rec:
            from activetest.formats.tables import MissingIdColumnError

            raise MissingIdColumnError(f"{at}: no id column {id_column!r} (columns: "
                                       f"{column_names(rec, sort=True)}); name the id "
                                       f"column with --id-column", n)
        item_id = str(n) if id_column is None else str(rec.get(id_column, "")).strip()
        if not item_id:
            raise ValueError(f"{at}: no id in column {id_column!r}; name the id column with "
                             f"--id-column")
        if item_id in seen:
            raise ValueError(f"{at}: duplicate id {item_id!r} (first at {seen[item_id]})")
        seen[item_id] = where
        label = None
        raw = rec.get("judgment")
        if raw not in (None, ""):
            levels = [lv.casefold() for lv in task.classes]
            if str(raw).strip().casefold() not in levels:
                raise ValueError(f"{at}: judgment {raw!r} is not one of {list(task.classes)}")
            label = levels.index(str(raw).strip().casefold())
        answer = rec.get(answer_column)
        used = {*cols.values(), id_column, references_column, answer_column, "judgment",
                *keep_columns}
        prompt = {f: str(rec[c]) for f, c in cols.items()}
        if not cols:  # a task that generates nothing (judging answers): every other column
            prompt = {str(k): str(v) for k, v in rec.items() if k not in used}
            used |= set(prompt)
        out.append(GradedItem(Item(item_id, prompt, label),
                              _references(rec.get(references_column), at),
                              None if answer is None else str(answer),
                              {k: v for k, v in rec.items()
                               if k not in used or k in keep_columns}))
    return out
