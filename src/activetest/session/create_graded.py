"""Creating a graded (generative) session: answers, a surrogate of the judgment, the file.

The target answers every pool item in free text (generated now by a local model,
through the answer cache, or already in the pool file's ``answer`` column); a
surrogate predicts, per item, the distribution of the judgment a person will give
(``(N, L)`` log-probs over the task's judgment levels, see
:mod:`activetest.models.judges`). The acquisition (``graded_fixed``, the default
for every surrogate but ``uniform`` and ``adaptive``) is the fixed design of
docs/generative.md: proposal proportional to the sd of the loss under the
surrogate, ``sqrt(E[l^2] - E[l]^2)`` (``sqrt(p (1 - p))`` for correct/incorrect),
mixed with the uniform at an in-run lambda >= 0.1, and the surrogate's expected
loss ``E[l] = sum_l pi_l (1 - score_l)`` as control; measured on SQuAD it beats
the paper's acquisition for every surrogate (``conf:sum`` 0.67 against 0.99,
median relative error). ``acquisition="ce"`` (or ``zero_one``) keeps the paper's:
``q`` proportional to the expected loss with the usual floor (``expected_loss``).
The file stores the items, the
answers with their references (table ``answers``), the surrogate's judgment
log-probs and the sampler, like a classification session.

Surrogate specs:

``confidence`` (``confidence:mean``, ``:min``, ``:sum``)
    the target's own token log-probs (needs answers generated here);
``agree:<model spec>``
    agreement with the answers another model gives to the same prompts;
``judge:<model spec>``
    an in-context judge prompted with ``judge_examples`` (judged answers);
``column:<name>``
    a probability that the answer is correct, from a column of the pool file
    (e.g. a harness's own confidence);
``score`` (``score:<judgment>``)
    with an ``answers:FILE`` target: the harness's own automatic judgment of each
    answer in the file (exact match, a scorer's value, Every Eval Ever's score: the
    one the reader chose, or the named lm-eval metric / inspect scorer / EEE field /
    table column) as a prediction of the person's judgment, squeezed into
    [0.05, 0.95] (:func:`activetest.models.judges.score_logprobs`). It uses none
    of the person's labels; the design stays exactly unbiased whatever it predicts;
``uniform``
    no surrogate: every item equally likely (uniform sampling, for comparison);
``adaptive`` (``adaptive+agree:<model>``)
    the graded adaptive design (:func:`activetest.stats.graded.graded_design`): a
    logistic model of P(wrong) on the target's confidence summaries (and the
    agreement with another model's answers), refitted on the judgments as they
    arrive, starting from ``1 - exp(sum log-prob)``; exactly unbiased.

Targets: a model spec that can generate; ``pool`` (the pool file's ``answer``
column); or ``answers:FILE`` (a harness's own log: lm-evaluation-harness
``generate_until`` samples, inspect_ai ``.eval``, Every Eval Ever JSONL, or a
CSV/JSONL table; see :mod:`activetest.models.answer_files`). With ``answers:`` the
answers are joined to the pool BY ID (never by position; every pool id must have
an answer, and where both name the same prompt field its text must agree). Ids that
may be positions (lm-eval's ``doc_id``, inspect_ai's numbers for samples without
ids, whole numbers) join only where every item's content confirms it
(:func:`~activetest.models.answer_files.confirm_join`); ``?match=id`` declares the
pool to be in the file's order instead. When ``--pool`` is that same file, the pool
is built from it (ids, prompt fields and references agree by construction): each
item's prompt is the sample's own input, its full prompt (in-context examples and
all) kept in the ``full_prompt`` field. Options after ``?``, e.g.
``answers:log.eval?epoch=1&score=match`` or
``answers:samples.jsonl?filter=strict-match&id_field=id``.

The session file names each ``answers:`` file by its name, never its local path
(``answers:samples.jsonl?filter=none``; two of one name by their shortest distinguishing
suffix: :mod:`activetest.session.spec_files`); ``init`` says the paths.
Every ``answers:`` file's provenance is kept in the session's config
(``answer_files``, by role: format, file name and sha256, the model's name as the
log states it, n-shot, task, the judgment read as the score, the harness; never a
local path; :func:`activetest.models.answer_files.file_provenance`).

Data labels (simulation only, ``label_from_data``): a judgment given in the pool
file, else the answer file's own judgment where it equals a level's score, else,
where references exist, the automatic judge's verdict (exact match after the SQuAD
normalisation: the top level if it matches, the bottom one if not).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from activetest.data.generative import (
    FULL_PROMPT,
    GenTask,
    GradedItem,
    exact_match,
    load_graded_pool,
)
from activetest.data.task import Item
from activetest.formats.tables import column_names
from activetest.session.compare_graded import compare_role
from activetest.session.config import NoiseConfig, SessionConfig
from activetest.session.create import (
    check_floor_applies,
    check_options,
    noise_threshold,
    planned_budget,
    resolve_proposal_floor,
    resolve_task,
)
from activetest.session.design import (
    HISTORY_DESIGN,
    expected_loss,
    graded_adaptive_design,
    graded_fixed_design,
    history_columns,
    history_design,
)
from activetest.session.history_neighbours import NeighbourUpdate
from activetest.session.history_positions import PoolColumns
from activetest.session.options import check_count, compare_specs
from activetest.session.scoring import jsonable, stored_spec
from activetest.session.store import SessionError, SessionStore
from activetest.stats import ActiveSampler
from activetest.stats.blindspot import BLIND_RATIO
from activetest.stats.fewerrors import MIN_ERRORS

__all__ = ["GRADED_SURROGATES", "GradedInputs", "column_probabilities", "create_graded_session",
           "expected_loss", "fixed_design"]

#: Surrogate spec forms of graded sessions.
GRADED_SURROGATES = ("adaptive", "adaptive+agree:<model>", "confidence", "confidence:mean",
                     "confidence:min", "confidence:sum", "score", "score:<judgment>",
                     "agree:<model>", "judge:<model>", "column:<name>", "uniform")

#: What docs/generative.md measured, quoted where a surrogate is advised (median
#: relative error against uniform sampling on SQuAD, both bundled targets, the fixed
#: design): the harness's exact match as the surrogate of a partial-credit judgment
#: (loss 1 - token F1; section "The harness's own score as surrogate"), and
#: agree:/judge: on the exact-match judgment (the headline table).
SCORE_MEASURED = "0.38"
AGREE_JUDGE_MEASURED = "1.05-2.04"

#: Columns of the stored ``features`` role of a graded adaptive session.
FEATURE_COLUMNS = ("mean_lp", "min_lp", "sum_lp")


#: The graded fixed design (built in :mod:`activetest.session.design`).
fixed_design = graded_fixed_design


@dataclass
class GradedInputs:
    """What a graded session is made of, read and checked."""

    task: GenTask
    pool: list[GradedItem]
    examples: list[Item]
    target_spec: str
    surrogate_spec: str
    raw_specs: dict[str, str] = field(default_factory=dict)
    #: each ``answers:`` spec as given -> as stored (its file by name, never by its local
    #: path: :mod:`activetest.session.spec_files`)
    answer_names: dict[str, str] = field(default_factory=dict)
    answer_files: dict[str, dict[str, Any]] = field(default_factory=dict)
    harness_scores: list[float | None] | None = None
    #: where the pool's item ids are only positions, what they are (e.g. "its rows'
    #: numbers"): a response matrix is then refused (joins never guess), as in
    #: classification sessions; None: the ids are the pool's own
    positional_ids: str | None = None
    #: where the pool's ids are its rows' numbers, its columns (a refused response
    #: matrix's message names those that hold its ids, as in classification sessions)
    pool_columns: PoolColumns | None = None


def _load_pool(src: Any, task: GenTask, options: Mapping[str, Any] | None) -> list[GradedItem]:
    if isinstance(src, (str, os.PathLike)):
        return load_graded_pool(src, task, **dict(options or {}))
    out = []
    for it in src:
        if isinstance(it, GradedItem):
            out.append(it)
        elif isinstance(it, Item):
            out.append(GradedItem(it))
        else:
            raise TypeError(f"a graded pool holds GradedItem or Item, got {type(it).__name__}")
    return out


def _load_examples(src: Any, task: GenTask, options: Mapping[str, Any] | None
                   ) -> list[GradedItem]:
    """The in-context examples, read with the pool's options; a file without the pool's
    id column gets row numbers as ids (an example's id only names it), as
    :func:`activetest.session.create.create` does."""
    from activetest.formats.tables import MissingIdColumnError

    try:
        return _load_pool(src, task, options)
    except MissingIdColumnError as e:
        if e.row != 0 or not options or options.get("id_column") is None:
            raise
        return _load_pool(src, task, {**options, "id_column": None})


_ANSWER_OPTIONS = {"epoch": "epoch", "filter": "filter_name", "score": "score_name",
                   "id_field": "id_field", "evaluation": "evaluation_name", "format": "format",
                   "id_column": "id_column", "answer_column": "answer_column",
                   "skip_missing": "skip_missing"}

#: ``?skip_missing=`` values
_YES, _NO = ("1", "true", "yes"), ("0", "false", "no")


#: ``?match=`` of an ``answers:`` spec: how ids that may be positions are joined.
ANSWER_MATCH = ("content", "id")


def _spec_options(spec: str) -> tuple[str, dict[str, Any], str]:
    """(path, read_answers options, match rule) of an ``answers:`` spec."""
    path, _, query = spec.removeprefix("answers:").partition("?")
    options: dict[str, Any] = {}
    match = "content"
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key == "match":
            if value not in ANSWER_MATCH:
                raise SessionError(f"answers spec {spec!r}: match={value!r}; expected "
                                   f"match=content (the default: ids that may be positions "
                                   f"join only where the content confirms them) or match=id")
            match = value
            continue
        if key not in _ANSWER_OPTIONS:
            raise SessionError(f"answers spec {spec!r}: unknown option {key!r} (known: "
                               f"{', '.join([*_ANSWER_OPTIONS, 'match'])})")
        if key == "epoch":
            if not value.strip().isdigit():
                raise SessionError(f"answers spec {spec!r}: epoch={value!r}; expected an "
                                   f"epoch number (1, 2, ...)")
            options["epoch"] = int(value)
        elif key == "skip_missing":
            if value.lower() not in (*_YES, *_NO):
                raise SessionError(f"answers spec {spec!r}: skip_missing={value!r}; expected "
                                   f"1 (leave items without an answer out, listed) or 0")
            options["skip_missing"] = value.lower() in _YES
        else:
            options[_ANSWER_OPTIONS[key]] = value
    return path, options, match


def read_answer_spec(spec: str) -> Any:
    """The :class:`~activetest.models.answer_files.AnswerFile` an ``answers:`` spec names."""
    from activetest.models.answer_files import read_answers

    path, options, _ = _spec_options(spec)
    return read_answers(path, **options)


def answer_provenance(spec: str, answers: Any = None) -> dict[str, Any]:
    """The provenance a session keeps of an ``answers:`` file (no local path): see
    :func:`activetest.models.answer_files.file_provenance`, plus the spec's options
    (``answers``: the file as already read, else it is read here)."""
    from activetest.models.answer_files import file_provenance

    prov = file_provenance(read_answer_spec(spec) if answers is None else answers)
    prov["options"] = spec.partition("?")[2]
    return prov


def _harness_scores(target: str, name: str | None, pool: Any, task: GenTask,
                    options: Mapping[str, Any] | None, items: Sequence[GradedItem],
                    ) -> list[float | None]:
    """Per pool item, the answer file's own judgment of the target's answer: the one
    read as its score, or (``name``) the named one, joined exactly as the answers are."""
    if not name:
        return [g.extra.get("file_score") for g in items]
    if any(c in name for c in "&?="):
        raise SessionError(f"surrogate 'score:{name}': a judgment's name has no '&', '?' "
                           f"or '='")
    head, _, query = target.partition("?")
    parts = [q for q in query.split("&") if q and not q.startswith("score=")]
    try:
        named, _, _ = _from_answer_file(f"{head}?{'&'.join([*parts, f'score={name}'])}", pool,
                                     task, options)
    except ValueError as exc:
        raise SessionError(f"surrogate 'score:{name}': {exc}") from None
    if [g.item.id for g in named] != [g.item.id for g in items]:  # pragma: no cover
        raise SessionError(f"surrogate 'score:{name}': the file joined differently")
    return [g.extra.get("file_score") for g in named]


def _score_surrogate(inputs: GradedInputs) -> np.ndarray:
    from activetest.models import judges

    scores = inputs.harness_scores or []
    prov = inputs.answer_files.get("target", {})
    for g, v in zip(inputs.pool, scores, strict=True):
        if v is None:
            raise SessionError(
                f"surrogate {inputs.surrogate_spec!r}: item {g.item.id!r}: the answer file "
                f"{prov.get('file', '')} holds no judgment of this answer"
                + (" (it has none: a reader found no score in [0, 1] for every answer)"
                   if not prov.get("score_name") else "")
                + "; name one with score:<judgment> (an lm-eval metric, an inspect scorer, "
                  "EEE's score or is_correct, a table column)")
    return judges.score_logprobs([float(v) for v in scores],  # type: ignore[arg-type]
                                 inputs.task.judgment)


def _no_logprobs(inputs: GradedInputs, what: str) -> SessionError:
    """The error for a surrogate that needs token log-probs the answers lack, with the
    best measured alternative this file offers (docs/generative.md)."""
    prov = inputs.answer_files.get("target", {})
    scored = bool(prov.get("score_name")) and inputs.harness_scores is not None \
        and all(v is not None for v in inputs.harness_scores)
    source = ("this log does" if prov else "these answers (a pool column) do")
    if scored:
        advice = (f"use --surrogate score: the log's own judgment "
                  f"({prov['score_name']!r}) as the prediction of the person's (on SQuAD, "
                  f"exact match predicting a partial-credit judgment: {SCORE_MEASURED} of "
                  f"uniform sampling's error; docs/generative.md)")
    else:
        advice = ("use --surrogate uniform, or column:<name> (a probability of being "
                  "correct from the pool file), or an answers:FILE target whose log holds "
                  "a judgment (then --surrogate score); agree:<model> and judge:<model> "
                  f"measured {AGREE_JUDGE_MEASURED} times uniform sampling's error on "
                  f"SQuAD (docs/generative.md)")
    return SessionError(f"surrogate {what!r} needs the target's token log-probs, which "
                        f"{source} not have (lm-eval and Every Eval Ever logs record "
                        f"none; inspect logs only when the model was asked for log-probs); "
                        f"{advice}")


def _same_file(a: Any, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, TypeError):
        return False


def _check_join(items: Sequence[GradedItem], records: Sequence[Any], af: Any, spec: str,
                hint: str, *, prefix: str = "") -> None:
    """Refuse a join by id whose shared prompt fields disagree (normalised text), and,
    where the file's ids may be positions, one that the content does not confirm for
    every item (:func:`~activetest.models.answer_files.confirm_join`; ``?match=id``
    skips that)."""
    from activetest.data.generative import normalize_answer
    from activetest.models.answer_files import JoinItem, confirm_join

    for g, r in zip(items, records, strict=True):
        for key in set(g.item.fields) & set(r.prompt):
            pool_text = normalize_answer(g.item.fields[key])
            if pool_text != normalize_answer(r.prompt[key]) and not (
                    key == "input" and isinstance(r.meta.get("prompt_text"), str)
                    and pool_text == normalize_answer(r.meta["prompt_text"])):
                raise SessionError(
                    f"{prefix}item {g.item.id!r}: the pool's {key!r} is "
                    f"{g.item.fields[key][:60]!r} but {af.path} answered "
                    f"{r.prompt[key][:60]!r} under the same id: the ids join different "
                    f"items{hint}")
    if _spec_options(spec)[2] == "id":
        return
    try:
        confirm_join(af, [JoinItem(g.item.id, {k: v for k, v in g.item.fields.items()
                                               if k != FULL_PROMPT}, g.references, g.extra)
                          for g in items], records)
    except ValueError as exc:
        raise SessionError(f"{prefix}{exc}{hint}; or, if you know the pool lists the items "
                           f"in the file's order, add the option match=id to the answers: "
                           f"spec (answers:FILE?match=id, or &match=id after other "
                           f"options)") from None


def _judged_fields(r: Any) -> dict[str, str]:
    """A log record's prompt fields as the pool item's: the sample's own input (what a
    judge reads), and the full prompt as the model saw it, with its in-context examples
    (:data:`~activetest.data.generative.FULL_PROMPT`, shown apart), where that holds more."""
    fields = dict(r.prompt)
    full = r.meta.get("prompt_text")
    if isinstance(full, str) and FULL_PROMPT not in fields \
            and full.strip() not in {v.strip() for v in fields.values()}:
        fields[FULL_PROMPT] = full
    return fields


def _from_answer_file(spec: str, pool: Any, task: GenTask, options: Mapping[str, Any] | None
                      ) -> tuple[list[GradedItem], list[Any], Any]:
    """Pool items, their answers (as Generations) and the file as read, from an
    ``answers:`` target."""
    from activetest.models.base import Generation

    af = read_answer_spec(spec)
    path = spec.removeprefix("answers:").partition("?")[0]
    if isinstance(pool, (str, os.PathLike)) and _same_file(pool, path):
        items = [GradedItem(Item(r.item_id, _judged_fields(r)), r.references, r.answer,
                            {"file_score": r.score}) for r in af]
        records = list(af)
    else:
        items = _load_pool(pool, task, options)
        records = af.align([g.item.id for g in items])
        _check_join(items, records, af, spec,
                    f"; fix the ids, or pass --pool {path} to use the answer file itself as "
                    f"the pool")
        items = [GradedItem(g.item, g.references or r.references, r.answer,
                            {**g.extra, "file_score": r.score}) for g, r in
                 zip(items, records, strict=True)]
    gens = [Generation(text=r.answer, raw=r.answer, token_ids=(),
                       token_logprobs=tuple(r.token_logprobs or ()), finish="stop",
                       n_answer_tokens=len(r.token_logprobs or ())) for r in records]
    return items, gens, af


#: What a pool read without an id column has as its item ids (:func:`_positional_ids`).
ROW_NUMBERS = "its rows' numbers"


def _pool_columns(pool: Any, task: GenTask, options: Mapping[str, Any] | None
                  ) -> PoolColumns | None:
    """A pool file read without an id column: its columns, and the ids each would give
    as ``--id-column NAME`` (None: it would refuse them), for a refused response matrix's
    advice (:class:`~activetest.session.history_positions.PoolColumns`); None where the
    pool is no table file."""
    from activetest.formats.tables import read_records

    if not isinstance(pool, (str, os.PathLike)):
        return None
    opts = {k: v for k, v in dict(options or {}).items() if k in ("format", "encoding")}
    try:
        records = read_records(pool, **opts)
    except (OSError, ValueError):
        return None
    names = tuple(dict.fromkeys(str(k) for _, r in records[:1] for k in r))

    def ids_of(name: str) -> list[str] | None:
        try:
            return [g.item.id for g in load_graded_pool(pool, task, **{**dict(options or {}),
                                                                      "id_column": name})]
        except (OSError, ValueError):
            return None

    return PoolColumns(names, ids_of) if names else None


def _positional_ids(pool: Any, options: Mapping[str, Any] | None, target: str,
                    target_file: Any) -> str | None:
    """What the pool's item ids are where they are only positions (None: the pool's own
    ids): row numbers (``id_column=None``), or the ids of an ``answers:`` file used as
    the pool itself where they may be positions (lm-eval's ``doc_id``, inspect_ai's
    numbering: :func:`activetest.models.answer_files.ids_may_be_positions`)."""
    if options is not None and "id_column" in options and options["id_column"] is None:
        return ROW_NUMBERS
    if target_file is not None and isinstance(pool, (str, os.PathLike)) \
            and _same_file(pool, target.removeprefix("answers:").partition("?")[0]):
        from activetest.models.answer_files import ids_may_be_positions

        if ids_may_be_positions(target_file):
            return (f"the {target_file.format} file's ids, which may be only positions "
                    f"(lm-eval's doc_id, inspect_ai's sample numbers)")
    return None


def _compare_answers(inputs: GradedInputs, specs: Sequence[str], *, threads: int | None,
                     cache_dir: str | None, use_cache: bool, progress: bool,
                     ) -> dict[str, tuple[list[str], list[dict[str, Any]]]]:
    """Stored spec -> (answers, details) of each compared target, in pool order.

    ``answers:FILE`` joins the file to the pool by item id and checks the texts it
    shares with the pool (as for the target); a model spec generates with the
    session's in-context examples.
    """
    out: dict[str, tuple[list[str], list[dict[str, Any]]]] = {}
    for raw_spec in specs:
        raw_spec = str(raw_spec)
        spec = inputs.answer_names.get(raw_spec, raw_spec) if raw_spec.startswith(
            "answers:") else stored_spec(raw_spec)
        if spec == inputs.target_spec or spec in out:
            raise SessionError(f"--compare {raw_spec!r}: the same answers as the target or "
                               f"another --compare; name each target once")
        if spec == "pool":
            raise SessionError("--compare pool: a compared target's answers come from a file "
                               "(answers:FILE) or a model; the pool's 'answer' column is the "
                               "target's")
        if spec.startswith("answers:"):
            af = read_answer_spec(raw_spec)  # said as given; stored by its name
            ids = [g.item.id for g in inputs.pool]
            try:
                records = af.align(ids)
            except ValueError as exc:
                raise SessionError(f"--compare {raw_spec}: {exc}") from None
            _check_join(inputs.pool, records, af, raw_spec, "",
                        prefix=f"--compare {raw_spec}: ")
            inputs.answer_files[compare_role(spec)] = answer_provenance(spec, af)
            out[spec] = ([r.answer for r in records],
                         [{"source": spec, "token_logprobs": list(r.token_logprobs or ())}
                          for r in records])
        else:
            inputs.raw_specs[spec] = raw_spec
            gens = _answers(inputs, spec, threads=threads, cache_dir=cache_dir,
                            use_cache=use_cache, progress=progress)
            out[spec] = ([g.text for g in gens], [_generation_info(g) for g in gens])
    return out


def _generation_info(g: Any) -> dict[str, Any]:
    """What the session keeps of a generated answer beside its text."""
    return jsonable({"finish": g.finish, "token_logprobs": list(g.answer_logprobs())})


def _generator(spec: str, threads: int | None, cache_dir: str | None, use_cache: bool) -> Any:
    from activetest.models.registry import get_scorer, parse_spec

    backend, _ = parse_spec(spec)
    options = {"n_threads": threads} if threads and backend == "llamacpp" else {}
    model = get_scorer(spec, **options)
    if not callable(getattr(model, "generate", None)):
        raise SessionError(f"model {spec!r} ({backend} backend) cannot generate answers; "
                           f"use a llama.cpp model, or put the answers in the pool file's "
                           f"'answer' column and pass --target pool")
    if use_cache:
        from activetest.models.answers import CachedGenerator

        return CachedGenerator(model, cache_dir)
    return model


def _answers(inputs: GradedInputs, spec: str, *, threads: int | None, cache_dir: str | None,
             use_cache: bool, progress: bool) -> list[Any]:
    gen = _generator(inputs.raw_specs.get(spec, spec), threads, cache_dir, use_cache)
    try:
        return gen.generate(inputs.task, [g.item for g in inputs.pool], inputs.examples,
                            progress=progress)
    finally:
        close = getattr(getattr(gen, "generator", gen), "close", None)
        if callable(close):
            close()


def column_probabilities(pool: Sequence[Any], name: str) -> np.ndarray:
    """``(N,)`` a pool column's P(correct) per item (``--surrogate column:NAME``).

    Raises:
        SessionError: an item without the column, or a value that is not a probability
            (the item named).
    """
    values = []
    for g in pool:
        if name not in g.extra:
            raise SessionError(f"item {g.item.id!r}: no column {name!r} in the pool file "
                               f"(columns: "
                               f"{column_names([*g.item.fields, *g.extra], sort=True)}); name "
                               f"the column of the probability that the answer is "
                               f"correct: --surrogate column:NAME")
        raw = g.extra.get(name)
        try:
            p = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            p = float("nan")
        if not 0.0 <= p <= 1.0:
            raise SessionError(f"item {g.item.id!r}: column {name!r} is {raw!r}; expected "
                               f"the probability that the answer is correct, in [0, 1]")
        values.append(p)
    return np.array(values, dtype=np.float64)


def _surrogate(inputs: GradedInputs, answers: Sequence[str], generations: Sequence[Any] | None,
               judge_examples: Sequence[Item], *, threads: int | None, cache_dir: str | None,
               use_cache: bool, progress: bool) -> np.ndarray:
    from activetest.models import judges

    spec, task = inputs.surrogate_spec, inputs.task
    head, _, rest = spec.partition(":")
    if spec == "uniform":
        return judges.binary_to_levels(np.full(len(inputs.pool), 0.5), task.judgment)
    if head == "column" and rest:
        return judges.binary_to_levels(column_probabilities(inputs.pool, rest), task.judgment)
    if head == "score":
        return _score_surrogate(inputs)
    if head == "confidence":
        if generations is None:
            raise _no_logprobs(inputs, spec)
        return judges.confidence_logprobs(generations, task.judgment, rest or "mean")
    if head == "agree" and rest:
        other = _answers(inputs, rest, threads=threads, cache_dir=cache_dir,
                         use_cache=use_cache, progress=progress)
        return judges.agreement_logprobs(answers, [g.text for g in other], task.judgment)
    if head == "judge" and rest:
        if not judge_examples:
            raise SessionError("surrogate 'judge:<model>' needs judged examples: pass "
                               "--judge-examples FILE (columns question, answer, judgment)")
        from activetest.models.registry import get_scorer

        scorer = get_scorer(inputs.raw_specs.get(rest, rest))
        if use_cache:
            from activetest.models.cache import CachedScorer

            scorer = CachedScorer(scorer, cache_dir)
        lp = scorer.score(judges.JUDGE_TASK, judges.judge_items([g.item for g in inputs.pool],
                                                                 answers),
                          judge_examples, progress=progress)
        return judges.binary_to_levels(np.exp(lp[:, 1]), task.judgment)
    raise SessionError(f"unknown surrogate {spec!r} for a graded task; expected one of "
                       f"{', '.join(GRADED_SURROGATES)}")


def _judge_examples(src: Any, options: Mapping[str, Any] | None) -> list[Item]:
    """Judged answers for the in-context judge: question, answer, judgment (yes/no)."""
    if src is None:
        return []
    if not isinstance(src, (str, os.PathLike)):
        return list(src)
    from activetest.data.pool import read_records

    out = []
    for where, rec in read_records(src, **{k: v for k, v in dict(options or {}).items()
                                           if k in ("format", "encoding")}):
        try:
            verdict = str(rec["judgment"]).strip().casefold()
            item = Item(str(rec.get("id", where)), {"question": str(rec["question"]),
                                                    "answer": str(rec["answer"])})
        except KeyError as exc:
            raise SessionError(f"{src}, {where}: judged examples need columns question, "
                               f"answer and judgment (missing {exc})") from None
        good = {"correct", "yes", "right", "true", "1"}
        bad = {"incorrect", "no", "wrong", "false", "0"}
        if verdict not in good | bad:
            raise SessionError(f"{src}, {where}: judgment {rec['judgment']!r} is not "
                               f"correct/incorrect")
        out.append(Item(item.id, item.fields, int(verdict in good)))
    return out


def _history_inputs(inputs: GradedInputs, paths: Sequence[str | os.PathLike[str]],
                    exclude: Sequence[str], neighbours: bool | NeighbourUpdate = True,
                    signal: Any = None, target_label: str | None = None,
                    ids_are_positions: bool = False
                    ) -> tuple[np.ndarray, dict[str, Any], np.ndarray, np.ndarray, Any]:
    """Join the history to the pool, compute its features once (label-free), and return
    (stored columns, the config's ``history`` record, the first proposal, surrogate
    judgment log-probs from the prior P(wrong), and with ``neighbours`` the
    ``(responses, models)`` the neighbours' column is learnt from, else None). ``signal``:
    a :class:`~activetest.session.create_history.PoolSignal` read beside the history;
    ``ids_are_positions``: a join by ids that look like positions is confirmed
    (:mod:`activetest.session.history_positions`)."""
    from activetest.models import judges
    from activetest.session.create_history import (
        PoolItem,
        history_record,
        join_pool_history,
        target_files,
        with_neighbours,
    )
    from activetest.session.history_neighbours import settings_of
    from activetest.stats.feature_design import history_features

    target_scores = None
    if inputs.harness_scores is not None:  # the file's own judgment: finds the target's row
        target_scores = np.array([np.nan if v is None else float(v)
                                  for v in inputs.harness_scores])
    pool = [PoolItem(g.item.id, {k: v for k, v in g.item.fields.items() if k != FULL_PROMPT},
                     tuple(g.references), g.extra) for g in inputs.pool]
    joined, notes = join_pool_history(paths, pool, exclude=exclude, target_scores=target_scores,
                                      targets=target_files(inputs.raw_specs.get(
                                          inputs.target_spec, inputs.target_spec)),
                                      positional=inputs.positional_ids,
                                      target_spec=target_label or inputs.raw_specs.get(
                                          inputs.target_spec, inputs.target_spec),
                                      ids_are_positions=ids_are_positions,
                                      confirm_inputs=target_label == "inspect",
                                      pool_columns=inputs.pool_columns)
    hf = history_features(joined.scores)
    cols = history_columns(hf)
    info, R = with_neighbours(history_record(joined, hf, notes, given=paths), joined,
                              neighbours)
    if signal is not None:
        info = signal.record(info)
    # the first draw's proposal, as replayed
    scores = history_design(cols, "original", None, R, settings_of(info),
                            features=None if signal is None else signal.columns,
                            feature_names=None if signal is None else signal.names).plan([]).q
    s_lp = judges.binary_to_levels(hf.p_correct, inputs.task.judgment)
    return cols, info, scores, s_lp, None if R is None else (R, tuple(joined.models))


def create_graded_session(path: str | os.PathLike[str], *,
                          pool: Sequence[Any] | str | os.PathLike[str],
                          task: GenTask | str | os.PathLike[str], target: str,
                          surrogate: str = "confidence", proposal_floor: float | None = None,
                          seed: int | None = None, shots: int | None = None,
                          examples: Sequence[Item] | str | os.PathLike[str] | None = None,
                          judge_examples: Sequence[Item] | str | os.PathLike[str] | None = None,
                          noise_surrogate_nll: float = 5.0, n_boot: int = 1000,
                          level: float = 0.95, pool_options: Mapping[str, Any] | None = None,
                          cache_dir: str | os.PathLike[str] | None = None,
                          use_cache: bool = True, overwrite: bool = False,
                          progress: bool = True, busy_timeout: float = 5.0,
                          threads: int | None = None, metric: str = "error_rate",
                          acquisition: str | None = None, target_shots: int | None = None,
                          noise_target_nll: float = 5.0, noise_rule: str = "any",
                          compare: Sequence[str] | str = (), alpha: float | None = None,
                          budget: int | None = None,
                          history: Sequence[str | os.PathLike[str]] = (),
                          history_exclude: Sequence[str] = (),
                          history_neighbours: bool | NeighbourUpdate = True,
                          pool_signal: Any = None, target_label: str | None = None,
                          history_ids_are_positions: bool = False,
                          ids_are_positions: bool = False,
                          ) -> tuple[SessionStore, GradedInputs]:
    """Build a graded session file (see the module docstring); returns the store and inputs.

    Args:
        target: a model spec that can generate (llama.cpp), or ``pool`` to use the
            answers in the pool file's ``answer`` column.
        surrogate: see the module docstring.
        examples: in-context examples for the target's prompt (items or a file with
            the prompt fields and an ``answer`` column); ``shots`` of them, drawn with
            ``seed`` (default all).
        judge_examples: judged answers for a ``judge:`` surrogate.
        proposal_floor: the share of the uniform in a fixed proposal (0.1; ``alpha`` is
            its deprecated name).
        compare: other targets whose answers to the same items are judged too (an
            ``answers:FILE`` spec or a model that generates; one spec alone is one
            target), for the paired
            comparison; stored as ``compare:<spec>`` answers. Drawing follows the
            session target only (the difference's estimate stays unbiased: every
            judged item is weighted by the probability it was drawn with).
        budget: the labels planned; the anytime CS is tuned to it (default
            :func:`activetest.session.create.planned_budget`'s rule).
        history: response matrices of other models on the same items (with
            ``surrogate="history"``): the design is the feature design on their
            difficulty and item factors (:mod:`activetest.data.history`,
            docs/history.md); ``history_exclude``: row names never used (the target);
            ``history_neighbours``: add the neighbours' column learnt in-run
            (:mod:`activetest.session.history_neighbours`; False: without it);
            ``pool_signal`` (:class:`~activetest.session.create_history.PoolSignal`):
            the pool's own signal beside the history's features (an inspect session's
            surrogate column); ``ids_are_positions`` (``history_ids_are_positions``: its
            older name): confirm a response matrix's join by ids that look like positions
            (:mod:`activetest.session.history_positions`); ``target_label``: the target
            as the history's notice names it (``--target <target_label>``; default the target spec).

    Raises:
        ValueError: (incl. :class:`SessionError`) bad arguments or input files.
    """
    # Options of classification sessions that a graded one has no use for: refused
    # unless left at their defaults (the metric is always 1 - score, the acquisition
    # the surrogate's expected loss, and the target has no label log-probs).
    given = {"metric": metric not in ("error_rate", "log_loss"),
             "acquisition": acquisition not in (None, "ce", "zero_one", "fixed_mix",
                                                "graded_fixed"),
             "target_shots": target_shots is not None,
             "noise_target_nll": noise_target_nll != 5.0, "noise_rule": noise_rule != "any"}
    bad = sorted(k for k, v in given.items() if v)
    if bad:
        raise SessionError(f"option(s) {', '.join(bad)} do not apply to a graded task (its "
                           f"metric is 1 - the judged score; acquisition: the fixed design "
                           f"(graded_fixed, the default, or fixed_mix), the paper's expected "
                           f"loss (ce or "
                           f"zero_one), or --surrogate adaptive for the adaptive design)")
    explicit_floor = proposal_floor is not None or alpha is not None
    floor = resolve_proposal_floor(proposal_floor, alpha)
    _, seed = check_options(metric="error_rate", acquisition="zero_one",
                            proposal_floor=floor, noise_rule="any", level=level,
                            n_boot=n_boot, seed=seed)
    shots = check_count(shots, "shots", "in-context examples")
    compare = compare_specs(compare)  # one spec (a str) is one target, not its characters
    t = resolve_task(task)
    if not isinstance(t, GenTask):
        raise SessionError(f"task {t.name!r} is not a graded task")
    from activetest.session.store import check_new_session_path

    p = check_new_session_path(path, overwrite)  # before any answers are generated
    head, _, col = str(surrogate).partition(":")
    if head == "column" and col and isinstance(pool, (str, os.PathLike)):
        # the surrogate's column is not a prompt field (a task that shows every column
        # would show it to the people judging, and the surrogate would not find it)
        pool_options = {**dict(pool_options or {}), "keep_columns": (col,)}
    file_gens = target_file = None
    if target.startswith("answers:"):
        items, file_gens, target_file = _from_answer_file(target, pool, t, pool_options)
    else:
        items = _load_pool(pool, t, pool_options)
    if not items:
        raise SessionError("the pool is empty: nothing to evaluate")
    chosen: list[Item] = []
    if examples is not None:
        ex = _load_examples(examples, t, pool_options)
        ex_items = [Item(g.item.id, {**g.item.fields, "answer": g.answer or
                                     (g.references[0] if g.references else "")})
                    for g in ex if g.answer or g.references]
        if shots is not None and shots < len(ex_items):
            pick = np.sort(np.random.default_rng(seed).choice(len(ex_items), shots,
                                                             replace=False))
            ex_items = [ex_items[i] for i in pick]
        chosen = ex_items
    elif shots:
        raise SessionError(f"shots={shots} needs in-context examples: pass --examples FILE "
                           f"(prompt fields and an 'answer' column)")
    raw: dict[str, str] = {}
    from activetest.session.spec_files import rename

    # every answers: file by its name (two of one name by their shortest distinguishing
    # suffix), never its local path: it names the roles (compare:<spec>) too
    answer_names = rename([s for s in (target, *map(str, compare))
                           if s.startswith("answers:")])
    if target == "pool":
        target_spec = target
    elif target.startswith("answers:"):
        target_spec = answer_names.get(target, target)
    else:
        target_spec = stored_spec(target)
    raw[target_spec] = target
    if (surrogate == "history") != bool(history):
        raise SessionError("--surrogate history and --history FILE go together: the design "
                           "learns from other models' results (docs/history.md)")
    history_ids_are_positions = history_ids_are_positions or ids_are_positions
    if history_ids_are_positions and not history:
        raise SessionError("--ids-are-positions confirms a join by ids that look like "
                           "positions, here of --history's response matrix (a graded "
                           "session's answers are checked by their content): give --history")
    adaptive = surrogate == "adaptive" or surrogate.startswith("adaptive+")
    # before any answer is generated: the designs choose their own uniform share
    by_design = adaptive or bool(history) or (surrogate != "uniform"
                                              and acquisition not in ("ce", "zero_one"))
    check_floor_applies("graded_adaptive" if adaptive or history else "graded_fixed",
                        explicit_floor, design=by_design)
    inner = surrogate.partition("+")[2] if adaptive else surrogate
    head, sep, rest = inner.partition(":")
    surrogate_spec = inner
    if sep and head in ("agree", "judge"):
        # a judge's table of yes/no scores (read here only) by its name, as the answer
        # files; a model's path (a .gguf file, a folder) is kept: README "Local paths"
        model = stored_spec(rest)
        model = rename([model]).get(model, model)
        surrogate_spec = f"{head}:{model}"
        raw[model] = rest
    if adaptive:
        if inner and head != "agree":
            raise SessionError(f"surrogate {surrogate!r}: the graded design combines the "
                               f"target's confidence with agree:<model> only")
        surrogate_spec = "adaptive" + (f"+{surrogate_spec}" if inner else "")
    positional = _positional_ids(pool, pool_options, target, target_file)
    inputs = GradedInputs(t, items, chosen, target_spec, surrogate_spec, raw,
                          answer_names=answer_names, positional_ids=positional,
                          pool_columns=_pool_columns(pool, t, pool_options) if history
                          and positional == ROW_NUMBERS else None)
    if target.startswith("answers:"):
        inputs.answer_files["target"] = answer_provenance(target, target_file)
        inputs.harness_scores = _harness_scores(
            target, rest if head == "score" else None, pool, t, pool_options, items)
    elif head == "score":
        raise SessionError(f"surrogate {inner!r} is the harness's own judgment in an answer "
                           f"file: it needs an answers:FILE target (with --target pool, a "
                           f"pool column: column:<name>)")
    cache = None if cache_dir is None else str(Path(cache_dir).resolve())
    compared = _compare_answers(inputs, compare, threads=threads, cache_dir=cache,
                                use_cache=use_cache, progress=progress)
    gens = None
    if file_gens is not None:
        gens = file_gens if all(g.token_logprobs for g in file_gens) else None
        answers = [g.text for g in file_gens]
    elif target == "pool":
        missing = [g.item.id for g in items if g.answer is None]
        if missing:
            raise SessionError(f"--target pool: {len(missing)} item(s) have no 'answer' "
                               f"in the pool file (e.g. {missing[0]!r})")
        answers = [str(g.answer) for g in items]
    else:
        gens = _answers(inputs, target_spec, threads=threads, cache_dir=cache,
                        use_cache=use_cache, progress=progress)
        answers = [g.text for g in gens]
    features = None
    fixed = False
    hist_cols = hist_info = hist_resp = None
    if history:
        hist_cols, hist_info, scores, s_lp, hist_resp = _history_inputs(
            inputs, history, history_exclude, history_neighbours, pool_signal, target_label,
            history_ids_are_positions)
    elif adaptive:
        if gens is None:
            raise _no_logprobs(inputs, surrogate)
        from activetest.models import judges

        summaries = [np.asarray(g.answer_logprobs() or g.token_logprobs[:1] or (0.0,))
                     for g in gens]
        cols = [np.array([a.mean() for a in summaries]), np.array([a.min() for a in summaries]),
                np.array([a.sum() for a in summaries])]
        if inner:  # agreement with another model's answers
            inputs.surrogate_spec = surrogate_spec.partition("+")[2]
            other = _surrogate(inputs, answers, gens, (), threads=threads, cache_dir=cache,
                               use_cache=use_cache, progress=progress)
            inputs.surrogate_spec = surrogate_spec
            cols.append(np.exp(other[:, int(np.argmax(t.judgment.scores))]))  # P(correct)
        features = np.stack(cols, axis=1)
        # built from the stored features, as the replay rebuilds it
        scores = graded_adaptive_design(features).plan([]).q  # the first draw's proposal
        p_wrong = 1.0 - np.exp(cols[2])
        s_lp = judges.binary_to_levels(1.0 - p_wrong, t.judgment)
    else:
        s_lp = _surrogate(inputs, answers, gens, _judge_examples(judge_examples, pool_options),
                          threads=threads, cache_dir=cache, use_cache=use_cache,
                          progress=progress)
        scores = expected_loss(s_lp, t)
        if inputs.surrogate_spec != "uniform" and acquisition not in ("ce", "zero_one"):
            fixed = True
            # the first draw's proposal
            scores = graded_fixed_design(s_lp, t, "graded").plan([]).q
    sampler = ActiveSampler(scores, proposal_floor=float(floor), seed=seed)
    top, bottom = int(np.argmax(t.judgment.scores)), int(np.argmin(t.judgment.scores))
    stored_items = []
    # one rule per file: where the answer file judges its answers in the task's levels, an
    # item it left unjudged (its scorer failed) has no judgment from data, rather than
    # exact match's (QA: a mixed rule, unsaid); a file with no judgment, or one off the
    # levels (an F1), leaves exact match to judge every item, as before
    file_scores = [g.extra.get("file_score") for g in items]
    file_judged = any(v is not None for v in file_scores) and all(
        v is None or v in t.judgment.scores for v in file_scores)
    for g, a in zip(items, answers, strict=True):
        label = g.item.label
        file_score = g.extra.get("file_score")
        if label is None and file_judged and file_score is not None:
            label = t.judgment.scores.index(file_score)
        if label is None and g.references and not file_judged:
            label = top if exact_match(a, g.references) else bottom
        stored_items.append(Item(g.item.id, g.item.fields, label))
    from activetest import __version__
    from activetest.data.taskfile import task_to_dict
    from activetest.session.history_sources import publish
    from activetest.session.source_names import published_source

    # stored without the local paths read (said at init: store.said_at_init)
    hist_pub = publish(hist_info) if history and hist_info is not None else None
    config = SessionConfig(
        kind="graded", task=task_to_dict(t),
        task_ref=task if isinstance(task, str) else t.name,
        # the pool file's name and digest, never its local path (said at init); the
        # items are stored: no later command re-opens it (session/source_names.py)
        pool={**published_source({"source": str(pool) if isinstance(pool, (str, os.PathLike))
                                  else "<items>"}), "n_items": len(items)},
        examples={"n": len(chosen)}, surrogate=surrogate_spec, target=target_spec,
        metric="error_rate",
        acquisition="graded_adaptive" if adaptive or history else "graded_fixed" if fixed
        else "expected_loss", proposal_floor=float(floor),
        design_variant=HISTORY_DESIGN if history else None,
        extra={"history": hist_pub.record} if hist_pub is not None else {},
        seed=seed, shots=len(chosen), target_shots=len(chosen),
        noise=NoiseConfig(None, noise_threshold(noise_surrogate_nll, "--noise-surrogate-nll"),
                          "any"),
        n_boot=int(n_boot), level=float(level), cache_dir=cache,
        use_cache=bool(use_cache), version=__version__,
        compare=tuple(compared), answer_files=inputs.answer_files,
        planned_budget=planned_budget(budget, len(items)),
        blind_ratio=BLIND_RATIO,
        clt_min_errors=MIN_ERRORS,  # the exact interval until 5 errors (stats.fewerrors)
        sure_bounds=True,  # intervals cut to what the labels make sure
        exact_share=True,  # the exact anytime CS bounds each draw by its own uniform share
        exact_least=True,  # ... or by its least proposal, where that is more
        shared_resamples=True,  # the plain mean bootstrapped on LURE's resamples
        # the fixed design's loss named as it is (1 - score; sessions before: "log")
        graded_loss="graded" if fixed and not (adaptive or history) else None,
    )
    source = target_spec if target.startswith("answers:") else "pool file"
    info = [_generation_info(g) if gens is not None else {"source": source}
            for g in (gens or items)]

    def init(store: SessionStore) -> None:
        store.put_answers("target", range(len(items)), answers, [g.references for g in items],
                          info)
        for spec, (c_answers, c_info) in compared.items():
            store.put_answers(compare_role(spec), range(len(items)), c_answers,
                              [g.references for g in items], c_info)
        store.put_scores("surrogate", surrogate_spec, s_lp,
                         {"spec": surrogate_spec, "kind": "judgment log-probs"})
        store.put_scores("acquisition", config.acquisition, scores[:, None],
                         {"acquisition": config.acquisition, "alpha": float(floor)},
                         predictions=False)
        if hist_cols is not None:  # what the history design is rebuilt from
            store.put_scores("history", "history", hist_cols,
                             {"columns": ["p_correct", "has_history", "factor..."]},
                             predictions=False)
        if hist_resp is not None:  # ... and the neighbours' column learnt in-run
            from activetest.session.history_neighbours import put_responses

            put_responses(store, *hist_resp)
        if pool_signal is not None:  # ... and the pool's own signal beside it
            pool_signal.put(store)
        if features is not None:  # what the graded design is rebuilt from
            store.put_scores("features", "graded", features,
                             {"columns": [*FEATURE_COLUMNS, "agreement"][:features.shape[1]]},
                             predictions=False)
        state = sampler.state()
        store.init_sampler(state.proposal_floor, seed, state.rng_state)

    # The examples table wants a label; a graded example carries its answer in its fields.
    stored_examples = [Item(e.id, e.fields, 0) for e in chosen]
    store = SessionStore.create(p, config=config, items=stored_items, examples=stored_examples,
                                overwrite=overwrite, busy_timeout=busy_timeout, init=init)
    from activetest.session.spec_files import said

    # the files' paths and digests: said, not stored
    store.said_at_init = (*(hist_pub.said if hist_pub is not None else ()),
                          *said({v: k for k, v in answer_names.items()}),
                          *said({m: r for m, r in raw.items() if m != target_spec}))
    return store, inputs
