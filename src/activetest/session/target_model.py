"""Who answered for a harness target: the model (and its local path, weights, prompts
and in-context examples) a session's imported results name, checked against those it
keeps and written in one transaction
(:meth:`activetest.session.workflow.Session.record_target_model`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from activetest.session.store import SessionError, SessionStore

__all__ = ["record_target_model"]


def record_target_model(store: SessionStore, model: str | None, tool: str,
                        tasks: Iterable[str] = (), n_shot: Mapping[str, int] | None = None,
                        row_names: Iterable[str] = (),
                        variant: Mapping[str, str] | None = None,
                        prompts: Mapping[str, Mapping[str, str]] | None = None,
                        stated: str | None = None) -> None:
    """Keep who answered for a harness target in ``store``'s configuration
    (``answer_files["target"]``), checked against what it keeps, in one transaction; the
    arguments and the rules are those of
    :meth:`activetest.session.workflow.Session.record_target_model`.

    Raises:
        SessionError: the session's results so far are of another model (another local
            path of the same last name too, other weights), or of the same task with
            another number of in-context examples or another prompt.
    """
    from activetest.formats.model_ids import path_digests, same_local_model

    paths = list(path_digests(stated)) if model is not None and stated else None

    def change(doc: dict[str, Any]) -> dict[str, Any]:
        files = dict(doc.get("answer_files") or {})
        before = dict(files.get("target") or {})
        had = before.get("model")
        if model is not None and isinstance(had, str) and had and had != model:
            raise SessionError(
                f"these results are of {model} ({tool}); the session's earlier results "
                f"are of {had}: one estimate cannot mix two models (create another "
                f"session for {model})")
        had_paths = before.get("model_path")
        if paths and isinstance(had_paths, list) and had_paths \
                and not same_local_model([str(d) for d in had_paths], paths):
            raise SessionError(
                f"these results are of {model} at the local path {stated} ({tool}); the "
                f"session's earlier results are of a {had} at another local path (neither "
                f"path ends the other: not one folder mounted elsewhere): two models of "
                f"one name, and one "
                f"estimate cannot mix two models (run the drawn items with the earlier "
                f"model, or create another session for {stated})")
        kept = before.get("model_variant")
        if variant is not None and isinstance(kept, dict) and dict(kept) != dict(variant):
            from activetest.formats.history import lmeval_variant_text as variant_text

            # QA: a round of gguf_file=B.gguf joined rounds of gguf_file=A.gguf, both
            # named by the folder, as one target
            raise SessionError(
                f"these results are of {model or had} ({tool}) with {variant_text(variant)}; "
                f"the session's earlier results with {variant_text(kept)}: other weights "
                f"of the model, and one estimate cannot mix two models (run the drawn "
                f"items with the earlier --model_args, or create another session for "
                f"these weights)")
        shots = dict(before.get("n_shot") or {})
        for task, n in sorted((n_shot or {}).items()):
            if task in shots and shots[task] != n:
                # QA: a round run 0-shot was imported beside 3-shot rounds without a
                # word, one estimate of two prompts
                raise SessionError(
                    f"these results of task {task!r} were run with {n} in-context "
                    f"example(s) ({tool}'s n-shot); the session's earlier results of it "
                    f"with {shots[task]}: one estimate cannot mix two prompts (run the "
                    f"drawn items again with --num_fewshot {shots[task]}, or create "
                    f"another session for the {n}-shot target)")
            shots[task] = n
        kept_prompts = dict(before.get("prompt_config") or {})
        for task, digest in sorted((prompts or {}).items()):
            had_p = kept_prompts.get(task)
            if isinstance(had_p, dict) and dict(had_p) != dict(digest):
                keys = sorted(k for k in set(had_p) | set(digest)
                              if had_p.get(k) != digest.get(k))
                # QA: a round run with an edited task YAML (another doc_to_text) was
                # imported beside the first rounds, one estimate of two prompts
                raise SessionError(
                    f"these results of task {task!r} were run with another prompt than "
                    f"the session's earlier results of it (lm-eval's task config "
                    f"differs in {', '.join(keys)}): one estimate cannot mix two prompts "
                    f"(run the drawn items again with the earlier task config, or create "
                    f"another session for this prompt)")
            kept_prompts.setdefault(task, dict(digest))
        files["target"] = {**before, "tool": tool}
        if model is not None:
            files["target"]["model"] = model
        if variant is not None and not isinstance(kept, dict):
            files["target"]["model_variant"] = dict(variant)
        if paths is not None and not (isinstance(had_paths, list) and had_paths):
            files["target"]["model_path"] = paths  # digests, never the path
        if shots:
            files["target"]["n_shot"] = shots
        if kept_prompts:
            files["target"]["prompt_config"] = kept_prompts
        rows = {str(n) for n in row_names} | {
            str(n) for n in before.get("row_names") or () if isinstance(n, str)}
        if rows:
            files["target"]["row_names"] = sorted(rows)
        new_tasks = {str(t) for t in tasks if t}
        if new_tasks:
            had_tasks = before.get("tasks")
            known = [str(t) for t in had_tasks] if isinstance(had_tasks, list) else []
            files["target"]["tasks"] = sorted({*known, *new_tasks})
        return {"answer_files": files}

    store.update_config(change)
