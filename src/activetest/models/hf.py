"""transformers backend (torch) with few-shot prefix key/value reuse.

Every item's prompt is ``prefix + suffix`` (instruction and in-context examples,
then the item). With the canonical tokenisation
(:func:`~activetest.models.labels.canonical_ids`) the prefix ids do not depend on
the item, so :class:`HFScorer` runs the prefix through the model ONCE, keeps its
``DynamicCache`` and, for each batch of items:

* right-pads the batch's suffix ids to a common length L;
* gives every row a view of the prefix cache expanded to the batch (no copy: the
  cache layers append by concatenation, so the shared prefix tensors are never
  written to);
* passes an attention mask covering prefix + suffix (prefix and real suffix
  tokens 1, padding 0) and position ids ``P .. P + L - 1`` (P = prefix length);
* reads the final hidden state at each row's LAST real token and multiplies it by
  the output-embedding rows of the label tokens only. Class log-probabilities are
  a float64 log-softmax over those logits (the full-vocabulary head is never
  computed in first-token mode, which matters for Gemma's 262k-token vocabulary).

Right padding is exact: a real token never attends to a later (padding) token
under the causal mask. Sliding-window layers (Gemma 3: 512 tokens) keep the last
``window - 1`` prefix positions in the cache, which is all that any suffix token
can see, so prefix reuse stays exact with prefixes longer than the window.

``naive=True`` runs the full canonical prompt for each item separately (batch 1,
no cache reuse): the reference the prefix-reuse path is tested against and the
baseline of ``benchmarks/bench_scoring.py``.

**Loading.** ``model`` is a bundled name (``"smollm2-135m"``, ``"gemma3-270m"``),
a ``.gguf`` file, a local Hugging Face model directory, or a hub id (downloaded by
transformers; users with internet only). transformers dequantises a GGUF fully
on load, which takes 10-40 s; the converted model and tokenizer are therefore
saved once as safetensors under ``<cache_dir>/hf/<file stem>-<size>-<mtime_ns>``
(``cache_dir`` defaults to :func:`~activetest.models.bundled.default_cache_dir`)
and later loads read that folder (about a second). A changed GGUF file (size or
mtime) gets a new folder.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from activetest._tmpfiles import sweep_tmp, tmp_prefix
from activetest.data.task import Item, Task
from activetest.models._util import ContextOverflowError, log_softmax, progress_bar
from activetest.models.base import Generation
from activetest.models.bundled import (
    BUNDLED_MODELS,
    ModelNotFoundError,
    default_cache_dir,
    file_identity,
    model_format,
    resolve_model,
)
from activetest.models.labels import (
    FULL_SEQUENCE_REMEDY,
    LabelScoring,
    LabelScoringLog,
    LabelTokens,
    canonical_ids,
    task_label_tokens,
)
from activetest.supervise import note

__all__ = ["CONVERTED_MARKER", "HFScorer", "converted_dir"]

_DTYPES = ("float32", "bfloat16", "float16")
CONVERTED_MARKER = "activetest-converted.json"
"""File written last into a conversion-cache folder; its presence marks the folder complete."""


def converted_dir(gguf_path: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None
                  = None) -> Path:
    """The conversion-cache folder for a GGUF file (keyed by its size and mtime)."""
    ident = file_identity(gguf_path)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / "hf" / f"{Path(gguf_path).stem}-{ident['size']}-{ident['mtime_ns']}"


def _eos_ids(model: Any, tok: Any) -> list[int]:
    """End-of-sequence token ids of a model (its generation config, else the tokenizer)."""
    ids = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if ids is None:
        ids = getattr(tok, "eos_token_id", None)
    if ids is None:
        return []
    return [int(i) for i in (ids if isinstance(ids, (list, tuple)) else [ids])]


@contextlib.contextmanager
def _native_gqa(enabled: bool) -> Iterator[None]:
    """Let sdpa attend grouped key/value heads directly, with a mask (CPU only).

    transformers otherwise copies every key/value head ``heads / kv_heads`` times
    (``repeat_kv``) whenever a mask is given, i.e. for every cached-prefix batch; on
    CPU, torch's sdpa supports ``enable_gqa`` with a mask, which measured 1.5x faster
    at 50 shots with identical scores. transformers reads this switch at call time.
    """
    key = "TRANSFORMERS_SDPA_FORCE_GQA"
    if not enabled or key in os.environ:
        yield
        return
    os.environ[key] = "1"
    try:
        yield
    finally:
        os.environ.pop(key, None)


@contextlib.contextmanager
def _quiet_transformers(quiet: bool) -> Iterator[None]:
    """Silence transformers' per-load progress bars and warnings (restored afterwards)."""
    if not quiet:
        yield
        return
    from transformers.utils import logging as tlog

    bars, level = tlog.is_progress_bar_enabled(), tlog.get_verbosity()
    tlog.disable_progress_bar()
    tlog.set_verbosity_error()
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if bars:
            tlog.enable_progress_bar()


def _gguf_adds_bos(path: Path) -> bool | None:
    """GGUF ``tokenizer.ggml.add_bos_token`` (what llama.cpp obeys), or None if absent."""
    try:
        from gguf import GGUFReader
    except ImportError:  # pragma: no cover - gguf is required to load GGUF with transformers
        return None
    reader = GGUFReader(str(path), "r")
    field = reader.fields.get("tokenizer.ggml.add_bos_token")
    if field is None or not field.data:
        return None
    return bool(field.parts[field.data[0]][0])


def _tokenizer_bos(tok: Any) -> int | None:
    """The BOS id the tokenizer itself prepends with special tokens on, else None."""
    plain = tok.encode("a", add_special_tokens=False)
    full = tok.encode("a", add_special_tokens=True)
    if len(full) > len(plain) and full[1:1 + len(plain)] == plain:
        return int(full[0])
    return None


class HFScorer:
    """Score items with a transformers causal LM, reusing the few-shot prefix's KV cache.

    Args:
        model: a bundled model name, a ``.gguf`` file, a local Hugging Face model
            directory, or a hub id (see the module docstring).
        device: torch device, e.g. ``"cpu"`` or ``"cuda"``.
        dtype: ``"float32"`` (default; exact), ``"bfloat16"`` or ``"float16"``
            (about twice as fast on CPU, shifts log-probs by ~0.05).
        batch_size: items per forward pass in prefix-reuse mode.
        full_sequence: score multi-token label words by the summed log-probability
            of their whole token sequence (then normalised over the classes)
            instead of their first token only.
        cache_dir: cache root for converted GGUF models (default
            :func:`~activetest.models.bundled.default_cache_dir`); also where the
            bundled Gemma file is assembled.
        naive: run the full prompt for every item (no prefix reuse).
        name: display name (default: the bundled name, file name or hub id).
        verbose: show transformers' loading progress bars and warnings.
        n_threads: torch CPU threads (sets ``torch.set_num_threads`` for the whole
            process; default: leave torch's setting). On a machine shared with other
            busy processes, fewer threads than cores can be many times faster: each of
            the hundreds of small matmuls per forward waits for all its threads.

    Raises:
        ModelNotFoundError: no such bundled model, path or (offline) hub id.
        ValueError: bad ``dtype``, ``batch_size`` or model file.
        ImportError: torch or transformers is not installed (extra ``hf``).
    """

    backend = "hf"
    #: what the :class:`~activetest.models.labels.MultiTokenLabelNotice` advises
    multi_token_remedy = FULL_SEQUENCE_REMEDY

    def __init__(self, model: str | os.PathLike[str], *, device: str = "cpu",
                 dtype: str = "float32", batch_size: int = 16, full_sequence: bool = False,
                 cache_dir: str | os.PathLike[str] | None = None, naive: bool = False,
                 name: str | None = None, verbose: bool = False,
                 n_threads: int | None = None) -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {list(_DTYPES)}, got {dtype!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if n_threads is not None and n_threads < 1:
            raise ValueError(f"n_threads must be >= 1, got {n_threads}")
        try:
            import torch
            import transformers  # noqa: F401
        except ImportError as exc:
            raise ImportError("the 'hf' backend needs torch and transformers: "
                              "pip install 'activetest[hf]'") from exc
        self._torch = torch
        if n_threads is not None:
            torch.set_num_threads(n_threads)  # process-wide: torch has no per-model setting
        self.device = torch.device(device)
        self.dtype = dtype
        self.batch_size = batch_size
        self.full_sequence = full_sequence
        self._label_log = LabelScoringLog(self.multi_token_remedy)
        self.naive = naive
        self.verbose = verbose
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        spec = os.fspath(model)
        self.spec = spec
        self.source, self.model_path = self._locate(spec)
        self.name = name or (spec if spec in BUNDLED_MODELS else
                             self.model_path.name if self.model_path else spec)
        self.converted_path: Path | None = None
        self.loaded_from: Path | str = ""
        self._model, self._tok = self._load()
        self._base = self._model.base_model
        head = self._model.get_output_embeddings()
        if head is None:
            raise ValueError(f"model {spec!r} has no output embedding (not a causal LM)")
        self._head_w = head.weight
        self._head_b = getattr(head, "bias", None)
        cfg = self._model.config.get_text_config(decoder=True)
        limit = getattr(cfg, "max_position_embeddings", None)
        #: the model's context window in tokens (its config's max_position_embeddings), or
        #: None when the config names none
        self.max_length: int | None = int(limit) if isinstance(limit, int) and limit > 0 else None
        self._softcap = getattr(cfg, "final_logit_softcapping", None)
        self._logit_scale = getattr(cfg, "logit_scale", None)
        fwd = inspect.signature(self._base.forward).parameters
        self._cache_kw = "cache" if "cache" in fwd else "past_key_values"
        self._bos = self._find_bos()
        # (prefix ids, DynamicCache) of the last prefix, reused across score() calls
        self._prefix: tuple[tuple[int, ...], Any] | None = None

    # -- loading ----------------------------------------------------------------------

    def _locate(self, spec: str) -> tuple[str, Path | None]:
        """('gguf'|'hf', path) for local models, ('hub', None) for a hub id."""
        if spec in BUNDLED_MODELS or Path(spec).expanduser().exists():
            path = resolve_model(spec, cache_dir=self.cache_dir)
            return model_format(path), Path(path)
        looks_like_hub = (spec.count("/") == 1 and not spec.startswith((".", "/", "~"))
                          and not spec.endswith(".gguf"))
        if looks_like_hub:
            return "hub", None
        resolve_model(spec, cache_dir=self.cache_dir)  # raises ModelNotFoundError with advice
        raise ModelNotFoundError(spec)  # pragma: no cover - resolve_model raised

    def _torch_dtype(self) -> Any:
        return getattr(self._torch, self.dtype)

    def _from_pretrained(self, where: str, **kw: Any) -> tuple[Any, Any]:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model = AutoModelForCausalLM.from_pretrained(where, dtype=self._torch_dtype(), **kw)
        tok = AutoTokenizer.from_pretrained(where, **kw)
        return model, tok

    def _load(self) -> tuple[Any, Any]:
        note(event="loading", model=self.name, backend=self.backend)
        with _quiet_transformers(not self.verbose):
            return self._load_any()

    def _load_any(self) -> tuple[Any, Any]:
        if self.source == "hub":
            try:
                model, tok = self._from_pretrained(self.spec)
            except OSError as exc:
                raise ModelNotFoundError(
                    f"model {self.spec!r} is not a bundled model ({', '.join(BUNDLED_MODELS)}), "
                    f"a local path, or a reachable Hugging Face hub id: {exc}") from exc
            self.loaded_from = self.spec
        elif self.source == "hf":
            assert self.model_path is not None
            model, tok = self._from_pretrained(str(self.model_path))
            self.loaded_from = self.model_path
        else:
            model, tok = self._load_gguf()
        model.to(self.device)
        model.eval()
        return model, tok

    def _load_gguf(self) -> tuple[Any, Any]:
        assert self.model_path is not None
        target = converted_dir(self.model_path, self.cache_dir)
        self.converted_path = target
        if (target / CONVERTED_MARKER).is_file():
            try:
                model, tok = self._from_pretrained(str(target))
                self.loaded_from = target
                return model, tok
            except (OSError, ValueError):
                shutil.rmtree(target, ignore_errors=True)  # damaged: convert again
        model, tok = self._from_pretrained(str(self.model_path.parent),
                                           gguf_file=self.model_path.name)
        self.loaded_from = self.model_path
        try:
            self._save_converted(model, tok, target)
        except OSError:
            self.converted_path = None  # read-only cache: still usable, just slow next time
        return model, tok

    def _save_converted(self, model: Any, tok: Any, target: Path) -> None:
        """Save a GGUF-loaded (fully dequantised) model as safetensors, atomically."""
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_tmp([target.parent])  # half-written conversions of runs that were killed
        tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix(target.name), suffix=".tmp",
                                    dir=target.parent))
        try:
            # transformers marks a GGUF-loaded model as quantised (hf_quantizer and
            # config.quantization_config) and refuses save_pretrained; the weights are
            # plain dequantised tensors, so drop the markers on a shallow copy.
            saved = copy.copy(model)
            saved.hf_quantizer = None
            saved.is_quantized = False
            saved.config = copy.deepcopy(model.config)
            if hasattr(saved.config, "quantization_config"):
                del saved.config.quantization_config
            saved.save_pretrained(str(tmp), safe_serialization=True)
            tok.save_pretrained(str(tmp))
            meta = {"source": file_identity(self.model_path), "transformers":
                    __import__("transformers").__version__}
            (tmp / CONVERTED_MARKER).write_text(json.dumps(meta, indent=1))
            if target.exists():  # another process won the race: keep theirs
                shutil.rmtree(tmp, ignore_errors=True)
                return
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _find_bos(self) -> int | None:
        tok_bos = _tokenizer_bos(self._tok)
        if self.source == "gguf":
            # Follow the GGUF flag as llama.cpp does, so both backends see the same ids.
            assert self.model_path is not None
            flag = _gguf_adds_bos(self.model_path)
            if flag is not None:
                bos = self._tok.bos_token_id
                return int(bos) if flag and bos is not None else None
        return tok_bos

    # -- tokenisation -----------------------------------------------------------------

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` with no BOS or other special tokens."""
        if not text:
            return []
        return list(self._tok.encode(text, add_special_tokens=False))

    def detokenize(self, ids: Sequence[int]) -> str:
        """Text of ``ids`` (special tokens kept as text)."""
        return str(self._tok.decode(list(ids), skip_special_tokens=False))

    @property
    def bos(self) -> int | None:
        """The BOS id prepended to every prompt, or ``None`` if the model uses none."""
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
                             self._bos)

    def cache_identity(self) -> dict[str, Any]:
        """Everything that determines this scorer's outputs (for the score cache)."""
        if self.model_path is not None:
            model: Any = file_identity(self.model_path)  # a folder: each file in it
        else:  # the hub revision the files came from (a hub id moves to new weights)
            model = {"hub_id": self.spec,
                     "revision": getattr(self._model.config, "_commit_hash", None)}
        return {"backend": self.backend, "model": model, "dtype": self.dtype,
                "full_sequence": self.full_sequence, "naive": self.naive,
                "device": self.device.type}

    @property
    def n_parameters(self) -> int:
        """Total parameter count (tied embeddings counted once)."""
        return sum(p.numel() for p in self._model.parameters())

    @property
    def n_embedding_parameters(self) -> int:
        """Parameters of the input embedding table (a lookup, not a matmul)."""
        return int(self._model.get_input_embeddings().weight.numel())

    # -- scoring ----------------------------------------------------------------------

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """``(len(items), C)`` float64 class log-probabilities (rows log-sum-exp to 0).

        Raises:
            LabelTokenCollision: two label words share their first token (first-token mode).
            ContextOverflowError: a prompt (prefix, item and, in full-sequence mode, the
                label's tokens) is longer than the model's ``max_position_embeddings``.
            ValueError: an item lacks a template field, or a prompt tokenises to nothing.
        """
        labels = self.label_tokens(task)
        # said once per task: a label word of several tokens is scored by its first token
        self._label_log.record(task, LabelScoring.of(labels, full_sequence=self.full_sequence),
                               model=repr(self.name))
        prefix_ids = canonical_ids(self.tokenize, task.prefix(examples), "", self._bos)
        suffixes = [self.tokenize(task.render_item(it)) for it in items]
        for it, ids in zip(items, suffixes, strict=True):
            if not ids and not prefix_ids:
                raise ValueError(f"item {it.id!r}: the prompt tokenises to no ids")
        # Full-sequence scoring differs from first-token scoring only for multi-token labels.
        seqs = labels.sequences if (self.full_sequence and labels.multi_token) else None
        self._check_fits(task, items, examples, prefix_ids, suffixes,
                         max(len(q) for q in seqs) - 1 if seqs is not None else 0)
        out = np.empty((len(items), task.n_classes), dtype=np.float64)
        if not items:
            return out
        desc = f"{self.name} ({task.name}{', naive' if self.naive else ''})"
        with (progress_bar(len(items), desc, progress and len(items) > 1) as advance,
              self._torch.inference_mode(), _native_gqa(self.device.type == "cpu")):
            if self.naive:
                for i, suffix in enumerate(suffixes):
                    out[i] = self._score_rows(labels, seqs, [], None, [suffix], [prefix_ids])[0]
                    advance()
            else:
                cache = self._prefix_cache(prefix_ids)
                # Longest first: batches of similar length waste little on padding.
                order = sorted(range(len(items)), key=lambda i: -len(suffixes[i]))
                step = self.batch_size if seqs is None else max(1, self.batch_size // len(seqs))
                for start in range(0, len(order), step):
                    idx = order[start:start + step]
                    out[idx] = self._score_rows(labels, seqs, prefix_ids, cache,
                                                [suffixes[i] for i in idx], None)
                    advance(len(idx))
        return out

    def _check_fits(self, task: Task, items: Sequence[Item], examples: Sequence[Item],
                    prefix_ids: list[int], suffixes: list[list[int]], extra: int) -> None:
        """Refuse, before any forward pass, a prompt longer than the model's context window
        (positions past ``max_position_embeddings`` give numbers the model was never
        trained to give)."""
        limit = self.max_length
        if limit is None:
            return
        n_prefix = len(prefix_ids)
        if n_prefix + 1 + extra > limit:
            raise ContextOverflowError(
                f"task {task.name!r}: the prompt prefix ({len(examples)} in-context examples) "
                f"is {n_prefix} tokens, which leaves no room for an item in the model's "
                f"context window of {limit} tokens (max_position_embeddings)",
                "use fewer or shorter examples, or a model with a longer context",
                model=repr(self.name))
        for it, ids in zip(items, suffixes, strict=True):
            total = n_prefix + len(ids) + extra
            if total > limit:
                raise ContextOverflowError(
                    f"item {it.id!r}: prompt is {total} tokens (prefix {n_prefix}, item "
                    f"{len(ids)}{f', label {extra}' if extra else ''}), more than the model's "
                    f"context window of {limit} tokens (max_position_embeddings)",
                    "shorten the item, use fewer in-context examples, or a model with a "
                    "longer context", model=repr(self.name))

    def _prefix_cache(self, prefix_ids: list[int]) -> Any:
        """The prefix's DynamicCache (None for an empty prefix), computed once per prefix."""
        key = tuple(prefix_ids)
        if self._prefix is not None and self._prefix[0] == key:
            return self._prefix[1]
        self._prefix = None
        if not prefix_ids:
            return None
        from transformers import DynamicCache

        cache = DynamicCache(config=self._model.config)
        ids = self._torch.tensor([prefix_ids], dtype=self._torch.long, device=self.device)
        self._base(input_ids=ids, use_cache=True, **{self._cache_kw: cache})
        self._prefix = (key, cache)
        return cache

    def _expanded(self, cache: Any, batch: int) -> Any:
        """A per-batch cache whose layers are views of the prefix cache expanded to ``batch``.

        The layers' ``update`` concatenates into new tensors, so the prefix's own
        tensors are never modified and the views cost no memory.
        """
        out = copy.copy(cache)
        out.layers = []
        for layer in cache.layers:
            new = copy.copy(layer)
            if getattr(layer, "is_initialized", False) and layer.keys is not None:
                new.keys = layer.keys.expand(batch, -1, -1, -1)
                new.values = layer.values.expand(batch, -1, -1, -1)
            out.layers.append(new)
        return out

    def _score_rows(self, labels: LabelTokens, seqs: Sequence[Sequence[int]] | None,
                    prefix_ids: list[int], cache: Any, suffixes: list[list[int]],
                    naive_prefixes: list[list[int]] | None) -> np.ndarray:
        """Class log-probs for a batch of suffixes after a shared (cached) prefix.

        In naive mode ``naive_prefixes`` holds each row's prefix ids, which are
        prepended and run without a cache (one row at a time).
        """
        torch = self._torch
        n_classes = len(labels.words)
        if naive_prefixes is not None:
            suffixes = [p + s for p, s in zip(naive_prefixes, suffixes, strict=True)]
            cache, n_prefix = None, 0
        else:
            n_prefix = len(prefix_ids)
        # rows: (item, class) pairs in full-sequence mode, else one row per item
        rows: list[list[int]] = []
        if seqs is None:
            rows = suffixes
        else:
            for s in suffixes:
                rows.extend(s + list(seq[:-1]) for seq in seqs)
        width = max(len(r) for r in rows)
        b = len(rows)
        ids = torch.zeros((b, width), dtype=torch.long)
        mask = torch.zeros((b, n_prefix + width), dtype=torch.long)
        mask[:, :n_prefix] = 1
        for r, row in enumerate(rows):
            ids[r, :len(row)] = torch.tensor(row, dtype=torch.long)
            mask[r, n_prefix:n_prefix + len(row)] = 1
        pos = (torch.arange(width, dtype=torch.long) + n_prefix).unsqueeze(0).expand(b, -1)
        kw: dict[str, Any] = {}
        if cache is not None:
            kw[self._cache_kw] = self._expanded(cache, b)
        out = self._base(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                         position_ids=pos.to(self.device), use_cache=cache is not None, **kw)
        hidden = out.last_hidden_state  # (b, width, H)
        if seqs is None:
            last = torch.tensor([len(r) - 1 for r in rows], device=self.device)
            h = hidden[torch.arange(b, device=self.device), last]  # (b, H)
            logits = self._logits(h, list(labels.first_ids))
            return log_softmax(logits)
        # Full sequences: sum of full-vocabulary log-probs of each label token, then
        # normalised over the classes.
        res = np.empty((len(suffixes), n_classes), dtype=np.float64)
        r = 0
        for i, s in enumerate(suffixes):
            for c, seq in enumerate(seqs):
                at = torch.arange(len(s) - 1, len(s) - 1 + len(seq), device=self.device)
                lp = log_softmax(self._logits(hidden[r, at], None))
                res[i, c] = float(lp[np.arange(len(seq)), list(seq)].sum())
                r += 1
        return log_softmax(res)

    def _logits(self, h: Any, token_ids: list[int] | None) -> np.ndarray:
        """Output logits of hidden states ``h`` (n, H) for ``token_ids`` (all if None), float64."""
        w = self._head_w if token_ids is None else self._head_w[token_ids]
        logits = h.float() @ w.float().T
        if self._head_b is not None:
            bias = self._head_b if token_ids is None else self._head_b[token_ids]
            logits = logits + bias.float()
        if self._logit_scale is not None:
            logits = logits * float(self._logit_scale)
        if self._softcap is not None:
            logits = self._torch.tanh(logits / self._softcap) * self._softcap
        return logits.double().cpu().numpy()

    def generate(self, task: Any, items: Sequence[Item], examples: Sequence[Item] = (), *,
                 max_tokens: int | None = None, stop: Sequence[str] | None = None,
                 progress: bool = True) -> list[Generation]:
        """Greedy answers of ``items`` with their token log-probs (the prefix cache reused).

        The same contract as :meth:`LlamaCppScorer.generate`: the highest logit wins
        (lowest id on a tie), the token that completes a stop string is kept in
        ``token_ids`` but not counted in ``n_answer_tokens``, end-of-sequence stops.
        """
        from transformers import DynamicCache

        from activetest.data.generative import cut_at_stop

        torch = self._torch
        max_tokens = int(max_tokens if max_tokens is not None else task.max_tokens)
        stops = tuple(stop if stop is not None else getattr(task, "stop", ()))
        prefix_ids = canonical_ids(self.tokenize, task.prefix(examples), "", self._bos)
        eos = set(_eos_ids(self._model, self._tok))
        out: list[Generation] = []
        note(event="generating with", model=self.name, backend=self.backend)
        with (progress_bar(len(items), f"{self.name} (answers)", progress and len(items) > 1)
              as advance, torch.inference_mode(), _native_gqa(self.device.type == "cpu")):
            base = None if self.naive else self._prefix_cache(prefix_ids)
            for item in items:
                suffix = self.tokenize(task.render_item(item))
                if base is None:  # the cache fills up as the prompt runs, then grows per token
                    cache = DynamicCache(config=self._model.config)
                    feed, n_past = list(prefix_ids) + suffix, 0
                else:
                    cache, feed, n_past = self._expanded(base, 1), suffix, len(prefix_ids)
                ids: list[int] = []
                lps: list[float] = []
                finish, n_answer = "length", None
                for _ in range(max_tokens):
                    t = torch.tensor([feed], dtype=torch.long, device=self.device)
                    pos = torch.arange(n_past, n_past + len(feed), device=self.device)[None]
                    res = self._base(input_ids=t, position_ids=pos, use_cache=True,
                                     **{self._cache_kw: cache})
                    n_past += len(feed)
                    logits = self._logits(res.last_hidden_state[0, -1:], None)[0]
                    tok = int(np.argmax(logits))
                    if tok in eos:
                        finish = "eos"
                        break
                    ids.append(tok)
                    lps.append(float(log_softmax(logits)[tok]))
                    if any(s in self.detokenize(ids) for s in stops):
                        finish, n_answer = "stop", len(ids) - 1
                        break
                    feed = [tok]
                raw = self.detokenize(ids)
                out.append(Generation(text=cut_at_stop(raw, stops), raw=raw, token_ids=tuple(ids),
                                      token_logprobs=tuple(lps), finish=finish,
                                      n_answer_tokens=len(ids) if n_answer is None
                                      else n_answer))
                advance()
        return out

    def full_logits(self, ids: Sequence[int]) -> np.ndarray:
        """The model's own full-vocabulary logits at the last position of ``ids`` (float64).

        Runs the complete ``AutoModelForCausalLM`` forward (its own head, soft-capping
        and all), independent of the scoring path: used to check it.
        """
        with self._torch.inference_mode():
            t = self._torch.tensor([list(ids)], dtype=self._torch.long, device=self.device)
            return self._model(input_ids=t).logits[0, -1].double().cpu().numpy()

    def close(self) -> None:
        """Drop the model and the cached prefix (frees memory now)."""
        self._prefix = None
        self._model = self._base = self._head_w = self._head_b = None

    def __repr__(self) -> str:
        mode = "naive" if self.naive else f"prefix-reuse, batch {self.batch_size}"
        return f"HFScorer({self.name!r}, {self.dtype}, {self.device}, {mode})"
