"""In-process llama.cpp backend (llama-cpp-python) with few-shot prefix reuse.

Every item's prompt is ``prefix + suffix``: the instruction and in-context
examples (identical for all items) followed by the item. With the canonical
tokenisation (:func:`~activetest.models.labels.canonical_ids`) the prefix ids do
not depend on the item, so :class:`LlamaCppScorer` evaluates the prefix ONCE and
keeps its key/value cache: for each item it rewinds the context to the end of
the prefix (``llama_memory_seq_rm`` from that position on, then
``Llama.n_tokens = len(prefix)``) and evaluates only the item's suffix. Models
with a sliding-window cache (Gemma 3: 512 tokens) are loaded with
``swa_full=True`` so that entries older than the window are kept and the rewind
is exact. The prefix state also survives between :meth:`LlamaCppScorer.score`
calls with the same prefix, so chunked scoring (the score cache) pays for the
prefix only once.

Logits are read with ``llama_cpp.llama_get_logits_ith(ctx, -1)`` (``Llama.eval``
leaves ``Llama.scores`` at zero unless the model was loaded with
``logits_all=True``, which would cost a full-vocabulary row per prompt token).
Class log-probabilities are a log-softmax over the label tokens' logits only,
computed in float64 with log-sum-exp.

``naive=True`` evaluates the full prompt from an empty cache for every item (no
reuse): the reference the prefix-reuse path is tested against, and the
baseline of the speed benchmark. It decodes the prefix and the suffix in two
calls, like the reuse path, because llama.cpp's results can depend on how a
prompt is split into decode batches: SmolLM2 (Q4_1) gives bit-identical logits
for any split, but Gemma 3 270M (Q4_K_M) moves by up to ~0.07 nats in a class
log-probability between splits (measured on x86-64 CPU with llama-cpp-python
0.3.36, even for prompts shorter than its 512-token window), presumably because
different batch shapes take matrix-multiplication kernels with a different
summation order and Gemma's large activations amplify the rounding. With the
same split, reuse and naive agree exactly unless the cache state is wrong.

**Items longer than the context.** If ``prefix + suffix`` (plus the extra label
tokens in full-sequence mode) does not fit in ``n_ctx`` the default is to raise
:class:`ContextOverflowError` (a ``ValueError``) naming the item. With
``truncate=True`` the item's longest template field is instead cut from the
LEFT (its end, nearest the answer, is kept) until the prompt fits, with a
:class:`TruncationWarning`. A prefix that alone does not fit always raises.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest._quiet import silenced
from activetest.data.generative import cut_at_stop
from activetest.data.task import Item, Task
from activetest.models._util import (
    QUIET_OUTPUT_LOCK,
    ContextOverflowError,
    log_softmax,
    progress_bar,
)
from activetest.models.base import Generation
from activetest.models.bundled import BUNDLED_MODELS, file_identity, model_format, resolve_model
from activetest.models.labels import (
    FULL_SEQUENCE_REMEDY,
    LabelScoring,
    LabelScoringLog,
    LabelTokens,
    canonical_ids,
    task_label_tokens,
)
from activetest.models.llama_cpu import model_params_patch
from activetest.supervise import maybe_crash, note

# llama.cpp is built with OpenMP, whose idle threads spin by default: on a busy machine
# that made one SmolLM2 decode 8x slower (3.0 s vs 0.37 s). Passive waiting costs
# little when the machine is idle. Must be set before llama_cpp loads; users can override.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__all__ = [
    "ContextOverflowError",
    "LlamaCppScorer",
    "TruncationWarning",
    "log_softmax",
]


class TruncationWarning(UserWarning):
    """An item's text was shortened to fit the context window."""


# one load at a time, and no notice while one runs (see QUIET_OUTPUT_LOCK)
_LOAD_LOCK = QUIET_OUTPUT_LOCK


def _default_threads() -> int:
    # llama.cpp's own convention: half the logical CPUs (the physical cores on SMT
    # machines). Its worker threads spin at barriers, so oversubscribing the CPU is
    # catastrophic (measured: 10x slower with 2 threads on 2 busy cores than with 1).
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, n // 2)


class LlamaCppScorer:
    """Score items with a GGUF model in process, reusing the few-shot prefix's KV cache.

    Args:
        model: a bundled model name (``"smollm2-135m"``, ``"gemma3-270m"``) or a
            path to a ``.gguf`` file.
        n_ctx: context window in tokens (prefix + item + label tokens).
        n_threads: CPU threads (default: half the CPUs available to the process, at
            least 1, as llama.cpp does; more threads than free cores is very slow).
        n_batch: tokens per llama.cpp decode call.
        full_sequence: score multi-token label words by the summed log-probability
            of their whole token sequence (then normalised over the classes)
            instead of their first token only.
        naive: evaluate the full prompt for every item (no prefix reuse).
        truncate: cut over-long items from the left instead of raising (see the
            module docstring).
        verbose: let llama.cpp print its logs.
        name: display name (default: the bundled name or the file name).

    Raises:
        ModelNotFoundError: the model is not bundled/installed or the path does not exist.
        ValueError: the path is not a GGUF file, or an argument is out of range.
    """

    backend = "llamacpp"
    #: what the :class:`~activetest.models.labels.MultiTokenLabelNotice` advises
    multi_token_remedy = FULL_SEQUENCE_REMEDY

    def __init__(self, model: str | os.PathLike[str], *, n_ctx: int = 8192,
                 n_threads: int | None = None, n_batch: int = 512, full_sequence: bool = False,
                 naive: bool = False, truncate: bool = False, verbose: bool = False,
                 name: str | None = None) -> None:
        if n_ctx < 16:
            raise ValueError(f"n_ctx must be >= 16, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        if n_batch < 1:
            raise ValueError(f"n_batch must be >= 1, got {n_batch}")
        path = resolve_model(model)
        if model_format(path) != "gguf":
            raise ValueError(f"llama.cpp needs a .gguf file, got the directory {str(path)!r}; "
                             f"use the 'hf' backend for Hugging Face model directories")
        self.model_path = Path(path)
        spec = os.fspath(model)
        self.name = name or (spec if spec in BUNDLED_MODELS else self.model_path.name)
        self.full_sequence = full_sequence
        self._label_log = LabelScoringLog(self.multi_token_remedy)
        self.naive = naive
        self.truncate = truncate
        self.verbose = verbose
        # The cache identity names the size asked for, so that it is known before the
        # model loads; ``n_ctx`` becomes the context's actual size once loaded.
        self._n_ctx_asked = n_ctx
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _default_threads()
        self.n_batch = n_batch
        # The model loads on first use, not here: a score-cache hit, a spec check or a
        # session that only reads stored scores never pays the seconds a load takes.
        self._llm_obj: Any = None
        self._bos: int | None = None
        self.n_vocab = 0
        # ids whose key/value entries currently sit at positions [0, len) of the context
        self._prefix_ids: list[int] | None = None
        self._rewind_warned = False
        #: whether llama.cpp's extra CPU buffer types (AMX, repacked layouts) are in use;
        #: known once loaded (:mod:`activetest.models.llama_cpu` decides)
        self.extra_bufts: bool | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on first use)."""
        return self._llm_obj is not None

    @property
    def _llm(self) -> Any:
        if self._llm_obj is None:
            self._load()
        return self._llm_obj

    def _load(self) -> None:
        from llama_cpp import Llama

        note(event="loading", model=self.name, backend=self.backend)
        maybe_crash("llamacpp load")

        swa_kwargs = _swa_full_kwargs(Llama)
        # One load at a time in the process: llama-cpp-python silences a load by
        # pointing the process's stdout/stderr file descriptors at /dev/null and back,
        # which two threads loading at once would leave pointing at /dev/null; the
        # stretch is marked silenced() so that notes and progress from other threads
        # meanwhile are said after it instead of lost (activetest._quiet says how).
        with _LOAD_LOCK, silenced(), model_params_patch() as extra_bufts:
            _install_log_filter()
            llm = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx,
                        n_batch=self.n_batch, n_ubatch=self.n_batch, n_threads=self.n_threads,
                        n_threads_batch=self.n_threads, logits_all=False,
                        verbose=self.verbose, **swa_kwargs)
        meta = getattr(llm, "metadata", {}) or {}
        if not swa_kwargs and any(k.endswith(".attention.sliding_window") for k in meta):
            # A binding that cannot ask for a full-size sliding-window cache may drop
            # entries the next item still needs; evaluate the prefix per item instead.
            warnings.warn(f"{self.name}: this llama-cpp-python has no swa_full option; "
                          f"prefix reuse is disabled for this sliding-window model",
                          RuntimeWarning, stacklevel=3)
            self.naive = True
        self.extra_bufts = extra_bufts
        self.n_ctx = int(llm.n_ctx())  # llama.cpp may round the size up
        self.n_vocab = int(llm.n_vocab())
        self._bos = int(llm.token_bos()) if _adds_bos(llm) else None
        self._llm_obj = llm

    # -- tokenisation ---------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` with no BOS and no special-token parsing."""
        if not text:
            return []
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (invalid UTF-8 at a cut is dropped)."""
        return self._llm.detokenize(list(ids)).decode("utf-8", errors="ignore")

    @property
    def bos(self) -> int | None:
        """The BOS id prepended to every prompt, or ``None`` if the model uses none."""
        self._llm  # noqa: B018 - loads the model, which defines the BOS
        return self._bos

    def label_tokens(self, task: Task) -> LabelTokens:
        """The task's label tokens for this model (raises ``LabelTokenCollision``)."""
        return task_label_tokens(self.tokenize, task, full_sequence=self.full_sequence)

    def label_scoring(self, task: Task) -> LabelScoring | None:
        """How :meth:`score` read ``task``'s classes from their label words (first token
        or whole word, each word's token count); None before it scored the task."""
        return self._label_log.get(task)

    def prompt_ids(self, task: Task, item: Item, examples: Sequence[Item] = ()) -> list[int]:
        """The canonical token ids of one item's full prompt."""
        return canonical_ids(self.tokenize, task.prefix(examples), task.render_item(item),
                             self.bos)

    def logits(self, ids: Sequence[int]) -> np.ndarray:
        """Full-vocabulary float64 logits after ``ids``, decoded from an empty cache.

        For checks and debugging (e.g. against :meth:`prompt_ids`); it discards the
        kept prefix state, so the next :meth:`score` evaluates the prefix again.
        """
        self._prefix_ids = None
        self._llm.reset()
        self._eval(list(ids))
        return self._last_logits()

    def cache_identity(self) -> dict[str, Any]:
        """Everything that determines this scorer's outputs (for the score cache)."""
        if not self.naive and not _has_swa_full():
            self._llm  # noqa: B018 - loading may switch a sliding-window model to naive
        return {"backend": self.backend, "model": file_identity(self.model_path),
                "full_sequence": self.full_sequence, "naive": self.naive,
                "truncate": self.truncate, "n_ctx": self._n_ctx_asked}

    # -- scoring --------------------------------------------------------------------

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """``(len(items), C)`` float64 class log-probabilities (rows log-sum-exp to 0).

        Raises:
            LabelTokenCollision: two label words share their first token.
            ContextOverflowError: the prefix, or an item (unless ``truncate``), does
                not fit in ``n_ctx``.
        """
        labels = self.label_tokens(task)
        # said once per task: a label word of several tokens is scored by its first token
        self._label_log.record(task, LabelScoring.of(labels, full_sequence=self.full_sequence),
                               model=repr(self.name))
        extra = max(len(s) for s in labels.sequences) - 1 if self.full_sequence else 0
        prefix_text = task.prefix(examples)
        prefix_ids = canonical_ids(self.tokenize, prefix_text, "", self.bos)
        if len(prefix_ids) + 1 + extra > self.n_ctx:
            raise ContextOverflowError(
                f"task {task.name!r}: the prompt prefix ({len(examples)} in-context examples) "
                f"is {len(prefix_ids)} tokens, which leaves no room for an item in n_ctx="
                f"{self.n_ctx}", "use fewer or shorter examples or a larger n_ctx",
                model=repr(self.name))
        note(event="scoring with", model=self.name, backend=self.backend)
        out = np.empty((len(items), task.n_classes), dtype=np.float64)
        desc = f"{self.name} ({task.name}{', naive' if self.naive else ''})"
        with progress_bar(len(items), desc, progress and len(items) > 1) as advance:
            for i, item in enumerate(items):
                suffix_ids = self._suffix_ids(task, item, len(prefix_ids), extra)
                if self.naive:
                    # From an empty cache every time; the same two decode calls as the
                    # reuse path (see the module docstring on split sensitivity).
                    self._prefix_ids = None
                    self._llm.reset()
                    if prefix_ids:
                        self._eval(prefix_ids)
                    self._eval(suffix_ids)
                else:
                    self._ensure_prefix(prefix_ids)
                    self._rewind(len(prefix_ids))
                    self._eval(suffix_ids)
                out[i] = self._class_logprobs(labels)
                advance()
        return out

    def _suffix_ids(self, task: Task, item: Item, n_prefix: int, extra: int) -> list[int]:
        ids = self.tokenize(task.render_item(item))
        over = n_prefix + len(ids) + extra - self.n_ctx
        if over <= 0:
            return ids
        if not self.truncate:
            raise ContextOverflowError(
                f"item {item.id!r}: prompt is {n_prefix + len(ids) + extra} tokens (prefix "
                f"{n_prefix}, item {len(ids)}{f', label {extra}' if extra else ''}), more than "
                f"n_ctx={self.n_ctx}", "shorten the item, use fewer in-context examples, a "
                "larger n_ctx, or truncate=True to cut the item's text from the left",
                model=repr(self.name))
        return self._truncated_suffix(task, item, n_prefix, extra)

    def _truncated_suffix(self, task: Task, item: Item, n_prefix: int, extra: int) -> list[int]:
        fields = {k: v for k, v in item.fields.items() if k in task.template_fields()}
        if not fields:
            raise ContextOverflowError(f"item {item.id!r}: too long for n_ctx={self.n_ctx} and "
                                       f"has no template field to truncate",
                                       model=repr(self.name))
        key = max(fields, key=lambda k: len(self.tokenize(fields[k])))
        field_ids = self.tokenize(fields[key])
        dropped = 0
        for _ in range(8):  # re-tokenising a cut text can shift the count by a token or two
            rendered = task.render_item(Item(item.id, {**item.fields, key: self.detokenize(
                field_ids[dropped:])}, item.label))
            ids = self.tokenize(rendered)
            over = n_prefix + len(ids) + extra - self.n_ctx
            if over <= 0:
                warnings.warn(f"item {item.id!r}: field {key!r} cut from the left by {dropped} of "
                              f"{len(field_ids)} tokens to fit n_ctx={self.n_ctx}",
                              TruncationWarning, stacklevel=4)
                return ids
            if dropped >= len(field_ids):
                break
            dropped = min(len(field_ids), dropped + over + 2)
        raise ContextOverflowError(f"item {item.id!r}: does not fit in n_ctx={self.n_ctx} even "
                                   f"with its field {key!r} removed", model=repr(self.name))

    def _ensure_prefix(self, prefix_ids: list[int]) -> None:
        if self._prefix_ids == prefix_ids:
            return
        self._prefix_ids = None
        self._llm.reset()
        if prefix_ids:
            self._eval(prefix_ids)
        self._prefix_ids = list(prefix_ids)

    def _rewind(self, n: int) -> None:
        """Drop the cache entries from position ``n`` on, keeping the first ``n`` tokens."""
        import llama_cpp

        if self._llm.n_tokens == n:
            return
        mem = llama_cpp.llama_get_memory(self._llm.ctx)
        # llama.cpp refuses a partial removal where it cannot do one (e.g. recurrent
        # state, or a sliding-window cache that has already dropped old entries); then
        # the prefix is evaluated again instead of silently reusing a wrong state.
        if not llama_cpp.llama_memory_seq_rm(mem, 0, n, -1):
            if not self._rewind_warned:
                warnings.warn(f"{self.name}: llama.cpp cannot rewind its cache to the end of "
                              f"the prompt prefix; re-evaluating the prefix for every item",
                              RuntimeWarning, stacklevel=4)
                self._rewind_warned = True
            keep = [int(t) for t in self._llm.input_ids[:n]]
            self._llm.reset()
            if keep:
                self._eval(keep)
            return
        self._llm.n_tokens = n

    def _eval(self, ids: Sequence[int]) -> None:
        if not ids:
            raise ValueError("nothing to evaluate: the prompt tokenised to no ids")
        self._llm.eval(list(ids))

    def _last_logits(self) -> np.ndarray:
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        if not ptr:
            raise RuntimeError("llama.cpp returned no logits for the last token")
        arr = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)),
                                    shape=(self.n_vocab,))
        return np.array(arr, dtype=np.float64)  # copy: the buffer is reused by the next eval

    def _class_logprobs(self, labels: LabelTokens) -> np.ndarray:
        logits = self._last_logits()
        if not self.full_sequence:
            return log_softmax(logits[list(labels.first_ids)])
        # Full sequences: log p(seq) = sum_t log softmax(logits_t)[seq_t] over the whole
        # vocabulary, then normalised over the classes.
        base = log_softmax(logits)
        n0 = self._llm.n_tokens
        seq_lp = np.empty(len(labels.sequences), dtype=np.float64)
        for c, seq in enumerate(labels.sequences):
            total = float(base[seq[0]])
            for t in range(1, len(seq)):
                self._rewind(n0 + t - 1)
                self._eval([seq[t - 1]])
                total += float(log_softmax(self._last_logits())[seq[t]])
            seq_lp[c] = total
        return log_softmax(seq_lp)

    # -- generation -----------------------------------------------------------------

    def generate(self, task: Any, items: Sequence[Item], examples: Sequence[Item] = (), *,
                 max_tokens: int | None = None, stop: Sequence[str] | None = None,
                 progress: bool = True) -> list[Generation]:
        """Greedy answers of ``items`` with their token log-probs (prefix cache reused).

        Args:
            task: anything with ``prefix(examples)``, ``render_item(item)`` and,
                unless ``max_tokens``/``stop`` are given, ``max_tokens``/``stop``
                attributes (a :class:`~activetest.data.generative.GenTask`).
            items, examples: the prompts' items and in-context examples.
            max_tokens: the most tokens generated per item.
            stop: strings that end an answer; the token that completes one is kept
                in ``token_ids`` but not counted in ``n_answer_tokens``.

        Greedy decoding takes the highest logit (lowest token id on a tie), so the
        answer is a deterministic function of model, prompt and settings.
        """
        import llama_cpp

        max_tokens = int(max_tokens if max_tokens is not None else task.max_tokens)
        stops = tuple(stop if stop is not None else getattr(task, "stop", ()))
        prefix_ids = canonical_ids(self.tokenize, task.prefix(examples), "", self.bos)
        vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        out: list[Generation] = []
        note(event="generating with", model=self.name, backend=self.backend)
        with progress_bar(len(items), f"{self.name} ({getattr(task, 'name', 'task')}, "
                          f"answers)", progress and len(items) > 1) as advance:
            for item in items:
                suffix_ids = self._suffix_ids(task, item, len(prefix_ids), max_tokens)
                self._ensure_prefix(prefix_ids)
                self._rewind(len(prefix_ids))
                self._eval(suffix_ids)
                ids: list[int] = []
                lps: list[float] = []
                finish, n_answer = "length", None
                for _ in range(max_tokens):
                    logits = self._last_logits()
                    tok = int(np.argmax(logits))
                    if llama_cpp.llama_vocab_is_eog(vocab, tok):
                        finish = "eos"
                        break
                    ids.append(tok)
                    lps.append(float(log_softmax(logits)[tok]))
                    text = self.detokenize(ids)
                    if any(s in text for s in stops):
                        finish, n_answer = "stop", len(ids) - 1
                        break
                    self._eval([tok])
                raw = self.detokenize(ids)
                out.append(Generation(text=cut_at_stop(raw, stops), raw=raw, token_ids=tuple(ids),
                                      token_logprobs=tuple(lps), finish=finish,
                                      n_answer_tokens=len(ids) if n_answer is None
                                      else n_answer))
                advance()
        return out

    def close(self) -> None:
        """Free the llama.cpp model and context now (otherwise at garbage collection)."""
        llm = getattr(self, "_llm_obj", None)
        if llm is not None:
            with _LOAD_LOCK:
                llm.close()
            self._llm_obj = None
            self._prefix_ids = None

    def __repr__(self) -> str:
        mode = "naive" if self.naive else "prefix-reuse"
        return f"LlamaCppScorer({self.name!r}, n_ctx={self.n_ctx}, {mode})"


def _has_swa_full() -> bool:
    from llama_cpp import Llama

    return bool(_swa_full_kwargs(Llama))


#: llama.cpp lines printed even with ``verbose=False`` that tell the user nothing
#: actionable (they describe a setting this module chose deliberately).
_NOISE = (b"using full-size SWA cache",)
_log_callback: Any = None  # kept referenced: llama.cpp holds a raw pointer to it


def _install_log_filter() -> None:
    """Drop :data:`_NOISE` lines from llama.cpp's log; pass the rest to the binding's."""
    global _log_callback
    if _log_callback is not None:
        return
    import llama_cpp
    from llama_cpp import _logger

    original = _logger.llama_log_callback

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if text and any(n in text for n in _NOISE):
            return
        original(level, text, user_data)

    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    _log_callback = callback


def _swa_full_kwargs(llama_cls: Any) -> dict[str, Any]:
    """Ask for a full-size sliding-window cache where the binding supports it."""
    import inspect

    if "swa_full" in inspect.signature(llama_cls.__init__).parameters:
        return {"swa_full": True}
    return {}


def _adds_bos(llm: Any) -> bool:
    """Whether the model's tokenizer prepends BOS (GGUF ``tokenizer.ggml.add_bos_token``)."""
    meta = getattr(llm, "metadata", {}) or {}
    flag = meta.get("tokenizer.ggml.add_bos_token")
    if flag is not None:
        return str(flag).lower() == "true"
    return int(llm.token_bos()) >= 0
