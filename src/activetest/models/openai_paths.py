"""How an OpenAI-compatible server is asked for class log-probs: the four paths and their record.

:class:`~activetest.models.openai.OpenAIScorer` reads the paper's quantity, the
log-probs of each class's first label token at the position after the prompt, in
one of four ways (``method=``), best first:

``vllm-token-ids``
    vLLM's ``/v1/completions`` with ``logprob_token_ids`` (the label token ids),
    ``logprobs=1``, ``max_tokens=1`` and ``return_tokens_as_token_ids``: the first
    GENERATED position's log-probs of exactly those ids come back in
    ``choices[0].logprobs.top_logprobs[0]`` under keys ``"token_id:<id>"`` (vLLM's
    ``CompletionRequest.logprob_token_ids``, "Specific vocab token IDs to return
    logprobs for at each generated position"; it needs ``logprobs`` set; values
    are clamped at -9999.0). No prompt log-probs are asked for, so the engine serves
    the few-shot prefix from its prefix cache. A vLLM without the field ignores it
    (its extra fields are dropped): the answer then lacks the ``token_id:`` keys and
    the path counts as unsupported.
``sglang-token-ids``
    SGLang's native ``POST /generate`` with ``return_logprob``,
    ``token_ids_logprob`` (the label ids), ``logprob_start_len=-1`` (SGLang's "only
    the output tokens": no input log-probs, so the whole prompt can come from the
    radix cache) and ``max_new_tokens=1``; the values are
    ``meta_info.output_token_ids_logprobs[0]``, entries ``[logprob, token_id, text]``.
``topk``
    any OpenAI-compatible server (llama.cpp's servers, Ollama, TGI, ...):
    ``logprobs=top_k`` on a one-token completion; each label token is looked up by
    its text among the top ``top_k`` next tokens (see :mod:`activetest.models.openai`
    for what happens when one is not among them: a wider top-k, then exact prompt
    log-probs, else a refusal naming the item and class; never a guessed value).
``echo``
    the prompt log-prob fallback: ``prompt + " " + word`` with ``echo=True`` gives
    the log-prob of the label token as a *prompt* token. Exact, but C requests per
    item, and asking for prompt log-probs makes vLLM recompute the whole prompt
    instead of reading its prefix cache.

The id paths need the label token ids: from ``tokenizer=``, else from the server's
own tokenizer (``POST /tokenize`` on vLLM and SGLang, ``POST /extras/tokenize`` on
llama-cpp-python's server), with :func:`~activetest.models.labels.task_label_tokens`'
rule and collision check.

``method="auto"`` (the default) probes the server once per task on the first
prompt, in that order, and uses the first path that answers with every label's
log-prob; a path "is not supported" when the server refuses the request
(:func:`refused`, the one rule of every fallback) or ignores the field. Any other
failure (401/403, 5xx after retries, timeouts) is an error, not a reason to try the
next path. The choice is announced once
(:class:`ScoringPathNotice`) and recorded (:class:`ScoringPath`, in the session's
score provenance as ``scoring_path``).

Where an id path leaves a label without an exact value (missing from the answer,
or at vLLM's -9999 clamp), that class is scored by the ``echo`` path for that item
when the server's echo passed its check, else the item is refused with its id, the
class and the path; :attr:`ScoringPath.n_fallbacks` counts such items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from activetest.models.openai_http import EndpointError

__all__ = ["CLAMP", "METHODS", "PATHS", "UNSUPPORTED_STATUS", "ScoringPath",
           "ScoringPathNotice", "refused", "sglang_body", "sglang_values", "vllm_body",
           "vllm_values"]

#: The paths, best first (see the module docstring).
PATHS = ("vllm-token-ids", "sglang-token-ids", "topk", "echo")
#: What ``method=`` accepts: a path, or ``auto`` (probe).
METHODS = ("auto", *PATHS)
#: HTTP statuses that mean "this server does not do that" (200: an answer that is not
#: JSON, e.g. a web page served for an unknown path); see :func:`refused`.
UNSUPPORTED_STATUS = frozenset({200, 400, 404, 405, 422, 501})


def refused(exc: EndpointError) -> bool:
    """Whether a failed request was *refused*: the server does not do what was asked, so
    the scorer may try another way. The one rule of every fallback of
    :class:`~activetest.models.openai.OpenAIScorer`: the probe's paths and the server's
    tokenizer, the echo check's top-k and echo requests, and the wider top-k request
    (``max_top_k``).

    Refused: the server answered at once with HTTP 400, 404, 405, 422 or 501, or with
    200 and something that is not JSON through every retry (a web page served for a
    path it does not have, a gateway's page): :data:`UNSUPPORTED_STATUS`, read from
    ``exc.status``, never from the message (whose text may quote a body saying "HTTP
    4..."). Not refused, and raised as the error it is: 401 and 403 (credentials: the
    message names the variables that set them; a server that wants a key says nothing
    of what it supports), a status retried through every retry (408, 429, 5xx:
    :class:`~activetest.models.openai_http.ServerFailedError`, a server failing for a
    while), a timeout, a server gone, and any other status.

    Args:
        exc: the request's :class:`~activetest.models.openai_http.EndpointError`.
    """
    return exc.status in UNSUPPORTED_STATUS
#: vLLM clamps log-probs at this value; a value there is a bound, not a log-prob.
CLAMP = -9999.0
#: Whether a path lets the engine serve the prompt from its prefix cache.
_PREFIX_CACHE = {"vllm-token-ids": True, "sglang-token-ids": True, "topk": True,
                 "echo": False}


class ScoringPathNotice(UserWarning):
    """Which path an ``openai:`` model scores by, said once when it is chosen."""


@dataclass(frozen=True)
class ScoringPath:
    """How an OpenAI-compatible server's class log-probs were obtained.

    Attributes:
        path: the path used (one of :data:`PATHS`).
        method: what was asked for: ``auto`` (probed) or the path itself.
        endpoint: the URL (no credentials).
        probed: one line per path tried before it, with why it was not used.
        label_ids: the label token ids the id paths asked for (empty when unknown).
        label_ids_from: where they came from (``tokenizer=``, the server's tokenizer
            endpoint, or ``""``).
        n_fallbacks: items where a class had to be scored another way (a wider
            top-k or echoed prompt log-probs) because the path did not give it.
    """

    path: str
    method: str
    endpoint: str
    probed: tuple[str, ...] = ()
    label_ids: tuple[int, ...] = ()
    label_ids_from: str = ""
    n_fallbacks: int = 0

    @property
    def prefix_cache(self) -> bool:
        """Whether the path lets the engine serve the prompt from its prefix cache."""
        return _PREFIX_CACHE[self.path]

    def describe(self) -> str:
        """One sentence for people: the path, what it reads, and what was tried first."""
        what = {"vllm-token-ids": "vLLM's logprob_token_ids (the first generated token's "
                                  "log-probs of the label tokens)",
                "sglang-token-ids": "SGLang's token_ids_logprob (the first generated token's "
                                    "log-probs of the label tokens)",
                "topk": "top-k log-probs of the first generated token (labels looked up by "
                        "text)",
                "echo": "echoed prompt log-probs (C requests per item; no prefix cache)"}
        tried = f"; not used: {'; '.join(self.probed)}" if self.probed else ""
        return f"{self.endpoint}: scoring by {what[self.path]}{tried}"

    def as_provenance(self) -> dict[str, Any]:
        """The record as JSON-ready data (for a session's score provenance)."""
        out = asdict(self)
        out["probed"] = list(self.probed)
        out["label_ids"] = list(self.label_ids)
        out["prefix_cache"] = self.prefix_cache
        return out


def vllm_body(prompt: str, ids: Sequence[int]) -> dict[str, Any]:
    """The ``/v1/completions`` request for vLLM's ``logprob_token_ids``."""
    return {"prompt": prompt, "max_tokens": 1, "echo": False, "logprobs": 1,
            "logprob_token_ids": [int(i) for i in ids], "return_tokens_as_token_ids": True}


def vllm_values(data: Mapping[str, Any]) -> dict[int, float]:
    """``token id -> log-prob`` from a vLLM answer (empty when it has no ``token_id:`` keys)."""
    try:
        top = data["choices"][0]["logprobs"]["top_logprobs"][0]
    except (KeyError, IndexError, TypeError):
        return {}
    if not isinstance(top, Mapping):
        return {}
    out: dict[int, float] = {}
    for key, value in top.items():
        head, sep, tail = str(key).partition("token_id:")
        if sep and not head and tail.isdigit() and isinstance(value, (int, float)):
            out[int(tail)] = float(value)
    return out


def sglang_body(prompt: str, ids: Sequence[int]) -> dict[str, Any]:
    """The native ``/generate`` request for SGLang's ``token_ids_logprob``."""
    return {"text": prompt, "sampling_params": {"max_new_tokens": 1, "temperature": 0.0},
            "return_logprob": True, "logprob_start_len": -1, "top_logprobs_num": 0,
            "token_ids_logprob": [int(i) for i in ids], "return_text_in_logprobs": False}


def sglang_values(data: Mapping[str, Any]) -> dict[int, float]:
    """``token id -> log-prob`` from an SGLang ``/generate`` answer (empty if absent)."""
    try:
        first = data["meta_info"]["output_token_ids_logprobs"][0]
    except (KeyError, IndexError, TypeError):
        return {}
    out: dict[int, float] = {}
    for entry in first if isinstance(first, list) else ():
        if (isinstance(entry, (list, tuple)) and len(entry) >= 2
                and isinstance(entry[0], (int, float)) and isinstance(entry[1], int)):
            out[int(entry[1])] = float(entry[0])
    return out
