"""``activetest init``: create a session from a pool, a task and the models."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from activetest.cli._app import (
    LABEL_SCORING_HELP,
    Acq,
    LabelScoringMode,
    Metric,
    NewSessionArg,
    NoProgress,
    Threads,
    _err,
    _escape,
    _out,
    _user_errors,
    app,
)


def _check_history(paths: Sequence[str]) -> None:
    """``--history`` as typed (a ``str``, not a ``Path``, which drops a trailing separator:
    ``runs/*/`` was said as ``runs/*``, QA) is refused where empty (a ``Path`` made ``""``
    the current folder).

    Raises:
        SessionError: an empty ``--history``.
    """
    from activetest.session.store import SessionError

    if any(not str(p).strip() for p in paths):
        raise SessionError("--history is empty: name a response matrix, a folder of runs "
                           "or a glob pattern")


def _neighbours_option(history: bool, on: bool, until: int | None, after: str | None
                       ) -> Any:
    """``init``'s neighbours' column options as ``Session.create`` takes them: False,
    True, or a :class:`~activetest.session.history_neighbours.NeighbourUpdate`.

    Raises:
        SessionError: a limited update without --history, without the column, or with
            bad values.
    """
    from activetest.session.history_neighbours import NeighbourUpdate
    from activetest.session.store import SessionError

    if until is None and after is None:
        return on
    if not history:
        raise SessionError("--history-neighbours-until/--history-neighbours-after shape the "
                           "neighbours' column of --history: give --history")
    if not on:
        raise SessionError("--history-neighbours-until/--history-neighbours-after with "
                           "--no-history-neighbours: there is no column to limit")
    if until is None:
        raise SessionError("--history-neighbours-after needs --history-neighbours-until")
    return NeighbourUpdate(until, "drop" if after is None else after)


@app.command()
@_user_errors
def init(
    session: NewSessionArg,
    pool: Annotated[Path, typer.Option("--pool", help="Pool file (CSV, TSV, JSONL, JSON, "
                                       "Parquet, FPB), or lm-eval samples file(s): a file, "
                                       "folder or glob, whose records' docs become the "
                                       "items.", show_default=False)],
    task: Annotated[str, typer.Option("--task", help="Built-in task name: classification "
                                      "(sst2, subj, fpb, hs, mmlu, demo) or graded, free-form "
                                      "answers judged by people (squad, answers); or a task "
                                      "file (.toml; kind = \"graded\" for a graded task).",
                                      show_default=False)],
    surrogate: Annotated[str, typer.Option("--surrogate", help=(
        "Surrogate model spec. Classification: a bundled model (smollm2-135m, gemma3-270m), "
        "FILE.gguf, hf:ORG/MODEL, openai:URL#MODEL, table:FILE (per-item "
        "log-probs; ?kind=probs|logits), or history (with --history). Graded tasks: "
        "confidence:mean|min|sum (the target's own), score (the answer file's judgment), "
        "agree:MODEL, judge:MODEL, column:NAME (a pool column), history, uniform; with "
        "--target lm-eval: pool-run, history (with --history; pool-run with --history: "
        "both); with --target inspect: column:NAME, history, uniform (README, 'Models')."),
        show_default=False)],
    target: Annotated[str, typer.Option("--target", help=(
        "Target model spec (the model being evaluated): the model specs above, "
        "table:FILE or lm-eval samples (table:samples_TASK_DATE.jsonl?filter=none); graded "
        "tasks: answers:FILE (an answer log: lm-eval, inspect_ai, EEE, a table), pool (the "
        "pool's answer column), or a model that generates; harness loops: lm-eval (run by "
        "lm-eval on the drawn items only), inspect (run by inspect_ai's ActiveStopping) "
        "(README, 'Models')."), show_default=False)],
    metric: Annotated[Metric, typer.Option(help="What to estimate.")] = Metric.log_loss,
    acquisition: Annotated[Acq | None, typer.Option(metavar="<name>",
        help="Acquisition. Classification: adaptive (default: the calibrated-residual "
             "design, learns the surrogate's calibration from the labels), pe_adaptive "
             "(surrogate only), fixed_mix; the paper's ce, pe (surrogate only), zero_one; "
             "uniform; compare (the paired difference with the one --compare model). "
             "Graded tasks: graded_fixed (default, also fixed_mix: the fixed design "
             "of the surrogate's loss spread), the paper's ce or zero_one (expected loss); "
             "--surrogate adaptive for the graded adaptive design, --surrogate uniform for "
             "uniform sampling.",
        show_default=False)] = None,
    proposal_floor: Annotated[float | None, typer.Option(
        "--proposal-floor", help="Share of the uniform distribution mixed into a fixed "
        "acquisition's proposal (ce, pe, zero_one, compare), the paper's alpha (0 < floor "
        "<= 1; default 0.1); not the confidence level. The adaptive designs choose their "
        "own uniform share from the labels (refused with them).",
        show_default=False)] = None,
    alpha: Annotated[float | None, typer.Option(
        "--alpha", hidden=True, help="Deprecated name of --proposal-floor.",
        show_default=False)] = None,
    seed: Annotated[int | None, typer.Option(help="Sampler seed (default: random, stored).",
                                             show_default=False)] = None,
    budget: Annotated[int | None, typer.Option(
        help="Labels you plan to collect (stored): the anytime confidence sequence is "
             "narrowest there (about 1.3x the fixed-budget interval). Default: 400, at most "
             "half the pool; at most two thirds of the pool is kept (tuned nearer the "
             "whole pool, it is far wider before). With --from-inspect: the log's "
             "(another is refused).", show_default=False)] = None,
    shots: Annotated[int | None, typer.Option(help="In-context examples drawn (stratified) "
                                              "from --examples; default: all of them.",
                                              show_default=False)] = None,
    examples: Annotated[Path | None, typer.Option(help="Labelled in-context examples, "
                                                  "disjoint from the pool (graded tasks: "
                                                  "with an 'answer' column).",
                                                  show_default=False)] = None,
    judge_examples: Annotated[Path | None, typer.Option(
        help="Graded tasks with a judge:<model> surrogate: judged answers (columns "
             "question, answer, judgment).", show_default=False)] = None,
    compare: Annotated[list[str] | None, typer.Option(
        "--compare", metavar="<spec>", help="Another target to compare with the target on the same "
                          "labels (repeatable). Classification: scored on the pool now, "
                          "compared at every estimate; with --acquisition compare the "
                          "labels go where the two may differ. Graded tasks: its answers "
                          "are judged too (answers:FILE or a model).",
        show_default=False)] = None,
    target_shots: Annotated[int | None, typer.Option(
        help="How many of the examples the target sees (0: zero-shot; default: same as "
             "the surrogate).", show_default=False)] = None,
    id_column: Annotated[str | None, typer.Option(help="Pool column with item ids (default: "
                                                  "row numbers).", show_default=False)] = None,
    text_column: Annotated[str | None, typer.Option(help="Pool column with the text.",
                                                    show_default=False)] = None,
    label_column: Annotated[str | None, typer.Option(
        help="Pool column with known labels (used only by simulations).",
        show_default=False)] = None,
    pool_format: Annotated[str | None, typer.Option(
        help="Pool (and examples) file format when the suffix does not say: csv, tsv, "
             "jsonl, json, parquet, fpb.", show_default=False)] = None,
    encoding: Annotated[str | None, typer.Option(
        help="Text encoding of the pool and examples files (default utf-8).",
        show_default=False)] = None,
    label_base: Annotated[int | None, typer.Option(
        help="How the pool and examples files number classes if their labels are numbers: "
             "0 or 1 (the first class is written 0, or 1). Default: the task's label_base "
             "(built-in tasks: 0); without one, numeric labels are refused. Class names "
             "always work.", show_default=False)] = None,
    noise_target_nll: Annotated[float, typer.Option(help="Label-noise alarm: flag labels "
                                                    "with target NLL above this.")] = 5.0,
    noise_surrogate_nll: Annotated[float, typer.Option(help="... or surrogate NLL above "
                                                       "this.")] = 5.0,
    cache_dir: Annotated[Path | None, typer.Option(help="Score cache folder (default: "
                                                   "$ACTIVETEST_CACHE or ~/.cache/activetest).",
                                                   show_default=False)] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the score "
                                           "cache.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing session "
                                            "file (one holding labels is kept beside it, "
                                            "renamed NAME.replaced-TIME.db); any other "
                                            "file is refused.")] = False,
    from_inspect: Annotated[list[Path] | None, typer.Option(
        "--from-inspect", metavar="<path>", help="An inspect_ai log of an eval run with "
        "activetest.inspect.ActiveStopping on a session made with these same options, or "
        "a folder of such logs; repeatable (a session that ran several evals: give every "
        "eval's log, or the folder). The newest log's draws are replayed (and checked) "
        "and its labels recorded, each confirmed by the sample in the log of the eval "
        "that recorded it.", show_default=False)] = None,
    trust_labels_from_people: Annotated[bool, typer.Option(
        "--trust-labels-from-people", help="With --from-inspect: also record the log's "
        "labels from people and imports, and those of an eval without an id "
        "(inspect:unknown), by item id (no sample confirms them); refused without it. "
        "(`import` has it too: people's labels for items an lm-eval target has not run.)")
    ] = False,
    label_scoring: Annotated[LabelScoringMode, typer.Option(
        "--label-scoring", help=LABEL_SCORING_HELP + " Applies to the surrogate, the target "
        "and every --compare model, and is stored: later commands (the target scored on "
        "the labelled items, estimate --compare) score the same way.")
    ] = LabelScoringMode.first_token,
    threads: Threads = None,
    no_progress: NoProgress = False,
    # as typed (str, not Path: a Path drops a trailing separator, and `runs/*/` was
    # said as `runs/*`)
    history: Annotated[list[str] | None, typer.Option(
        "--history", metavar="<path>",
        help="Other models' results on the same items (graded tasks: with "
        "--surrogate history; classification: with --metric error_rate; --target lm-eval: "
        "folders of their lm-eval runs, docs/harness.md): a response matrix, "
        "rows = models, columns = item ids, cells 0/1 or scores in [0, 1] (CSV, TSV, "
        "Parquet), or a folder of other models' lm-eval samples, inspect_ai logs or Every "
        "Eval Ever instance files (one model per file); repeatable. Joined by item id; see "
        "docs/history.md.", show_default=False)] = None,
    history_exclude: Annotated[list[str] | None, typer.Option(
        "--history-exclude", metavar="<name>", help="A --history row (model name) never "
        "to use: the target itself; repeatable.", show_default=False)] = None,
    ids_are_positions: Annotated[bool, typer.Option(
        "--ids-are-positions", "--history-ids-are-positions", help="Confirm a join by ids "
        "that look like positions: of a table: of predictions or a --history response "
        "matrix to the pool, both sides' ids row numbers (0..N-1 or 1..N), or a pool "
        "without --id-column. Refused otherwise, as a shuffled, filtered or other split's "
        "file would give every item another item's predictions or history. Only where the "
        "file was written from this very pool in this order. docs/history.md.")] = False,
    history_neighbours: Annotated[bool, typer.Option(
        "--history-neighbours/--no-history-neighbours", help="With --history: add the "
        "similarity-weighted neighbours' column, learnt from the labels as they arrive "
        "(stores the joined response matrix); --no-history-neighbours: the design without "
        "it. docs/history.md.")] = True,
    history_neighbours_until: Annotated[int | None, typer.Option(
        "--history-neighbours-until", help="With --history: recompute the neighbours' "
        "column only at refits that know at most this many labels, then drop it (or "
        "freeze it: --history-neighbours-after); default: at every refit. docs/harness.md.",
        show_default=False)] = None,
    history_neighbours_after: Annotated[str | None, typer.Option(
        "--history-neighbours-after", help="With --history-neighbours-until: drop (set the "
        "column to 0: the features' model from then on) or freeze (keep it as last "
        "computed).", show_default=False)] = None,
) -> None:
    """Create a session: load the pool, score it with the surrogate (and target), store all.

    Predictions made elsewhere (table:FILE) join the pool by item id: the
    --id-column values, else the row numbers (0, 1, ...). lm-evaluation-harness
    --log_samples files are keyed by doc_id (<task>/<doc_id> for a folder or glob
    of per-subject files) and checked twice: each record's choices are matched to
    the task's classes by label word, and each pool item's text must occur in the
    record's doc. The simplest pool for them is the samples file itself: --pool
    samples_x.jsonl --target table:samples_x.jsonl (ids and texts agree by
    construction). "pool item 'N' is not this record's document" means the pool
    lists the documents in another order (or is another dataset): use the
    samples file as the pool, or give --id-column holding lm-eval's doc_id.
    Spec options: table:FILE?filter=NAME (several lm-eval filters),
    ?choices=positional (choice j is class j), ?match=id (no text check).
    """
    from activetest.session.workflow import Session

    if alpha is not None:  # the deprecated name still works
        _err.print("note: --alpha is deprecated; it is the proposal floor: use "
                   "--proposal-floor")
        proposal_floor = alpha
    pool_options = {k: v for k, v in (("id_column", id_column), ("text_column", text_column),
                                      ("label_column", label_column), ("format", pool_format),
                                      ("encoding", encoding), ("label_base", label_base))
                    if v is not None}
    _check_history(history or ())
    neighbours = _neighbours_option(bool(history), history_neighbours,
                                    history_neighbours_until, history_neighbours_after)
    log = None
    session_path = Path(session)
    confirm: list[Any] = []
    if trust_labels_from_people and not from_inspect:
        from activetest.session.store import SessionError

        raise SessionError("--trust-labels-from-people is about the labels of "
                           "--from-inspect's log: give --from-inspect")
    if from_inspect:  # read before creating: a bad log leaves nothing behind
        from activetest.inspect import read_logs

        log, confirm, notes = read_logs(from_inspect)
        for line in notes:
            _err.print(f"note: {_escape(line)}")
        if budget is None and log.planned_budget is not None:
            budget = log.planned_budget  # the log's: its anytime intervals are tuned there
    level = {} if log is None or log.level is None else {"level": log.level}
    held: list[Any] = []  # the history's "cannot be recognised" notice, said after the replay
    with _holding_target_notice(log is not None and bool(history), held):
        made = Session.create(
            session, pool=pool, task=task, surrogate=surrogate, target=target,
            metric=metric.value, acquisition=None if acquisition is None
            else acquisition.value, proposal_floor=proposal_floor, seed=seed, shots=shots,
            examples=examples, target_shots=target_shots,
            noise_target_nll=noise_target_nll,
            noise_surrogate_nll=noise_surrogate_nll, pool_options=pool_options,
            cache_dir=cache_dir, use_cache=not no_cache, overwrite=overwrite,
            progress=not no_progress, threads=threads, **level,
            label_scoring=label_scoring.value,
            **({"budget": budget} if budget is not None else {}),
            **({"judge_examples": judge_examples} if judge_examples else {}),
            **({"compare": list(compare)} if compare else {}),
            **({"history": list(history), "history_exclude": list(history_exclude or ()),
                "history_neighbours": neighbours} if history else {}),
            **({"ids_are_positions": True} if ids_are_positions else {}))
    with made as s:
        if log is not None:  # first: a refused log leaves no "created session" line (QA)
            _restore_log(s, log, session_path, confirm, trust_labels_from_people)
            _say_target_in_history(s, held)
        cfg = s.session_config
        # the history's messages with the paths as given (the file keeps them without)
        for line in s.store.said_at_init or (cfg.extra.get("history") or {}).get(
                "messages", []):
            _out.print(_escape(line))
        if cfg.extra.get("history"):
            from activetest.session.history_neighbours import design_label

            _out.print(f"design: {design_label(cfg.extra['history'])}")
        tool = (cfg.extra.get("harness") or {}).get("tool")
        # a harness target runs with the harness's own prompts (QA: "0 in-context
        # example(s)" for an lm-eval target run 3-shot)
        # a history session scores its target on the labelled items only, so nothing
        # of a file target is stored yet: its spec says it is read from a file (QA: "0
        # in-context example(s) for the target" of a `table:` target)
        read = [role for role in ("surrogate", "target")
                if s.provenance(role).get("source") in ("table", "lm-eval samples")
                or str(cfg.target if role == "target" else cfg.surrogate).partition(":")[0]
                == "table"]
        prompts = {"lm-eval": "the target's prompts are lm-eval's (its runs' n-shot, kept "
                              "by import)",
                   "inspect": "the target's prompts are the inspect task's"}.get(
            str(tool), f"{cfg.shots} in-context example(s)" + (
                " for models scored here (the surrogate's and the target's predictions are "
                "read from files)" if len(read) == 2 else
                f" for the {'target' if read == ['surrogate'] else 'surrogate'}" if read
                else ""))
        _out.print(f"created session {_escape(str(session_path))}: {s.n_items} items, task "
                   f"{_escape(repr(s.task.name))}, {prompts}")
        kept = s.store.replaced
        if kept is not None:  # --overwrite of a labelled session: its labels are kept
            _out.print(f"the session file it replaced held {kept.n_labels} label(s): kept as "
                       f"{_escape(str(kept.path))} (open it to use them; remove it when "
                       f"they are no longer needed)")
        from activetest.session.history_neighbours import surrogate_label

        # what draws (QA: "surrogate history" for --surrogate column:NAME --history)
        shown = surrogate_label(cfg.surrogate, cfg.extra.get("history"))
        _out.print(f"surrogate {_escape(shown)}, target {_escape(cfg.target)}, "
                   f"metric {cfg.metric}, acquisition {cfg.acquisition}, "
                   + ("" if cfg.adaptive else f"proposal floor {cfg.proposal_floor:g}, ")
                   + f"seed {cfg.seed}")
        if budget is not None and cfg.planned_budget is not None \
                and cfg.planned_budget < budget:
            # kept, not refused, as the option's help says (QA: stored without a word)
            _out.print(f"planned budget {cfg.planned_budget} labels, not the {budget} asked "
                       f"for: at most two thirds of the pool's {s.n_items} items is kept (a "
                       f"CS tuned nearer the whole pool is too wide before it); labelling "
                       f"past it stays valid")
        if cfg.label_scoring_mode != LabelScoringMode.first_token.value:
            _out.print(f"label scoring: {cfg.label_scoring_mode} (each class is the summed "
                       f"log-prob of its whole label word, for every model scored here; a "
                       f"table: file's scores are read as they are)")
        for role in ("surrogate", "target"):
            prov = s.provenance(role)
            if prov.get("source") in ("table", "lm-eval samples"):
                _out.print(f"{role}: predictions read from the file ({prov['source']}); "
                           f"in-context examples: {prov.get('n_examples', 'unknown')} (as the "
                           f"file says, not --shots)")
        if ids_are_positions:
            _positions_said(s, cfg)
        # 10 at a time, or the whole of a smaller pool (QA: --n 10 of 6 items is refused)
        path, k = _escape(str(session_path)), min(10, s.n_items)
        if tool == "inspect":  # QA: `select` drew items that `label` then refused
            _out.print(f"next: run the eval with activetest.inspect.ActiveStopping({path!r}, "
                       f"...) as its early_stopping (docs/harness_inspect.md)")
        elif tool == "lm-eval":
            _out.print(f"next: activetest select {path} --n {k} --emit lm-eval --out "
                       f"samples.json, then lm_eval ... --samples samples.json "
                       f"(docs/harness.md)")
        else:
            _out.print(f"next: activetest select {path} --n {k}")


def _positions_said(s: Any, cfg: Any) -> None:
    """``--ids-are-positions``: each prediction table joined by ids that look like
    positions, as confirmed (its scores' provenance says so), or that nothing here
    needed it (the history says so of its own files)."""
    from activetest.session.table_positions import PROVENANCE_KEY

    roles = ["surrogate", "target", *(f"compare:{c}" for c in cfg.compare or ())]
    said = list(dict.fromkeys(p[PROVENANCE_KEY] for r in roles
                              if PROVENANCE_KEY in (p := s.provenance(r))))
    for line in said:
        _out.print(f"predictions: {_escape(line)}")
    if not said and not (cfg.extra.get("history") or {}).get("by_position") \
            and not cfg.extra.get("history"):
        _out.print("note: --ids-are-positions: no file here is joined by ids that look like "
                   "positions (nothing to confirm; the joins are by id)")


@contextlib.contextmanager
def _holding_target_notice(hold: bool, held: list[Any]) -> Iterator[None]:
    """While a session is made for ``init --from-inspect`` with ``--history``, keep back
    the notice that the target's own run cannot be recognised in the history before its
    labels (:class:`activetest.session.create_history.HistoryTargetNotice`) in ``held``:
    the replay records the evals' labels and their model, after which it can be
    (:func:`_say_target_in_history`). Other warnings are shown as they came."""
    if not hold:
        yield
        return
    import warnings

    from activetest.session.create_history import HistoryTargetNotice

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            yield
    finally:
        for w in caught:
            if issubclass(w.category, HistoryTargetNotice):
                held.append(w)
            else:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _say_target_in_history(s: Any, held: Sequence[Any]) -> None:
    """After ``init --from-inspect``'s replay: where the history holds the target's own
    run (a row of the model the evals ran, or one agreeing with their scores), say so as
    ``status`` does; else show the notice held back while the session was made (QA: the
    copy of a session whose eval had been warned that the history holds its own model's
    run said only that the target's run "cannot be recognised ... before labelling")."""
    import warnings

    from activetest.session.harness_history import history_target_note

    said = history_target_note(s) if s.session_config.extra.get("history") else None
    if said is not None:
        _err.print(f"note: {_escape(said)}")
        return
    for w in held:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def _restore_log(s: Any, log: Any, session: Path, confirm: Any = (),
                 trust_people: bool = False) -> None:
    """``init --from-inspect``: replay the newest log's draws and labels (each confirmed
    by the log of the eval that recorded it, among ``confirm``); on failure remove the
    session just made."""
    from activetest.inspect import restore
    from activetest.inspect.log import eval_tasks

    try:
        n = restore(s, log, confirm, trust_people=trust_people)
    except BaseException:
        s.close()
        session.unlink(missing_ok=True)
        raise
    by = sorted({src.split("inspect-log:", 1)[1] for src in
                 (lab.source for lab in s.store.labels().values())
                 if src.startswith("inspect-log:")})
    from activetest.inspect.log import NO_EVAL_ID

    trusted = [lab.source for lab in s.store.labels().values()
               if "(via inspect-log:" in lab.source]
    no_id = sum(1 for src in trusted if src.startswith(NO_EVAL_ID))
    people = len(trusted) - no_id
    # the inspect task each eval ran is named, not checked: labels join by the sample's
    # content, as the manager joins them (an eval of a renamed task on the same samples
    # is the same session's); evals of several tasks are noted (QA: a log with another
    # eval.task was taken without a word)
    tasks = eval_tasks([*confirm, log], set(by) | {log.eval_id})
    if len(tasks) > 1:
        _err.print(f"note: the evals whose labels were read ran {len(tasks)} inspect tasks: "
                   + "; ".join(f"{_escape(repr(t))} (eval {', '.join(ids)})"
                               for t, ids in sorted(tasks.items()))
                   + ". Each label was joined by its sample's content (every prompt field "
                     "of the pool item in the sample's input), not by task name: check "
                     "that they ran the same benchmark")
    _out.print(f"from {_escape(log.path)}"
               + (f" (inspect task {_escape(repr(log.task))})" if log.task else "")
               + f": {len(log.draws)} draws replayed, {n} label(s) "
               f"recorded (the eval's scores"
               + (f", of {len(by)} evals, each confirmed by its own log" if len(by) > 1 else "")
               + (f"; {people} label(s) from people or imports, taken on trust by item id"
                  if people else "")
               + (f"; {no_id} score(s) of an eval without an id ({NO_EVAL_ID}), taken on "
                  f"trust by item id" if no_id else "") + ")")
