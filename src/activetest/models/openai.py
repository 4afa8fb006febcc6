"""Score items through any OpenAI-compatible *completions* endpoint that returns log-probs.

This is the backend for pools too large for one machine: point it at a vLLM,
llama.cpp (``llama-server`` or ``python -m llama_cpp.server``), Ollama or TGI
server, e.g. ``OpenAIScorer("http://gpu-box:8000/v1", "meta-llama/Llama-3.1-8B")``.
Requests go to ``{base_url}/completions`` (the legacy text-completions API, not
chat), ``concurrency`` at a time, with retries.

How class log-probs are obtained
--------------------------------
The paper's class probabilities are a softmax over the next-token logits of each
label word's FIRST token (``" " + word`` after ``"{answer_key}:"``). A
completions server gives log-probs, not logits, but ``log_softmax`` over a subset
of tokens is the same whether it starts from logits or from full-vocabulary
log-probs (the normaliser cancels), so renormalising the classes' token
log-probs over the classes gives exactly the paper's quantity.

``method="auto"`` (the default) probes the server once per task and uses the best
of four paths it supports: vLLM's ``logprob_token_ids`` and SGLang's
``token_ids_logprob`` (the first generated token's log-probs of the label token
ids, which lets the engine serve the prompt from its prefix cache), then the two
below; the choice is announced once and recorded (:meth:`OpenAIScorer.scoring_path`,
the session's score provenance). See :mod:`activetest.models.openai_paths`.

``method="topk"`` (one request per item)
    ``max_tokens=1, logprobs=top_k, temperature=0``: the server returns the
    ``top_k`` most likely next tokens with their log-probs, and each class's
    first token is looked up there by its text. A class whose first token is
    NOT among them is handled honestly, never guessed or floored: the item is
    asked again with ``logprobs=max_top_k`` (default 200; vLLM refuses more than
    its ``--max-logprobs``, default 20, and is then skipped for the scorer's life;
    a 200 that is not JSON, a gateway's page, is asked once more before it counts
    as such a refusal: :meth:`OpenAIScorer._wide_top`), then, if still
    missing, scored exactly by an ``echo`` request (below) when the server's echo
    passed the check below; otherwise :class:`EndpointError` names the item and
    the class. ``n_fallbacks`` counts the items that needed this.
``method="echo"`` (C requests per item, exact for every class)
    ``prompt + " " + word`` with ``echo=True, logprobs=1, max_tokens=1``: the
    server returns the log-prob of every prompt token; the one at the label's
    first token, found by its text offset, is the class log-prob. vLLM supports
    this; llama.cpp's ``llama-server``, Ollama and OpenAI's current models do
    not. llama-cpp-python's server (0.3.x) answers, but with each prompt token
    scored by the distribution that *follows* it (shifted by one), so echo is
    used only after it reproduced a top-k next-token log-prob on the first
    prompt (checked once per scorer); on a server that fails the check,
    ``method="echo"`` raises and top-k fallbacks cannot use echo.

The first token's text is learned from the server itself: with ``method="topk"``
and no ``tokenizer``, one echo request per class on the first item's prompt
shows how the server tokenises ``"...Answer: word"`` (context-dependent, like
:mod:`activetest.models.labels`). Servers without echo need ``tokenizer``: any
object with ``tokenize(text) -> ids`` (no special tokens) and ``detokenize(ids)
-> str`` for the served model, e.g. a :class:`~activetest.models.llamacpp.LlamaCppScorer`
on the same GGUF; the label ids then come from
:func:`~activetest.models.labels.task_label_tokens` (with its collision check).

Label words of more than one token
----------------------------------
Every path reads the FIRST token of each label word; this backend has no
full-sequence scoring. Where a word has more than one token, the scorer says so once
per task (:class:`~activetest.models.labels.MultiTokenLabelNotice`) and records it
(:meth:`OpenAIScorer.label_scoring`, in a session's score provenance as
``label_scoring``). How much it can know depends on what the server shows: where the
label ids come from a tokenizer (``tokenizer=``, or the server's ``/tokenize`` that the
id paths use) every word's token count is exact; where only the first token's TEXT is
known (top-k and echo without a tokenizer: the echoed ``"...Answer: word"``), a first
token shorter than ``" " + word`` shows that the word has more than one token, but not
how many (recorded as 2 with ``exact=False``, said as "2 or more"), and a first token
that is the whole word is one. The echo path learns those texts too (C echo requests
once per task), which also refuses two classes sharing their first token there.

Limits
------
- Prompts are sent as text, and the server tokenises the whole prompt at once,
  whereas in-process backends use the canonical ``[bos] + ids(prefix) +
  ids(suffix)`` (see :mod:`activetest.models.labels`). Zero-shot prompts give
  the same ids (measured: identical scores to :class:`LlamaCppScorer` through
  llama-cpp-python's server on SmolLM2). Few-shot prompts can differ at the
  ``"\\n\\n"`` before each item (SmolLM2's BPE makes it ``"\\n"`` ``"\\n"`` in
  the whole string), which moved SmolLM2's class log-probs by up to ~0.4-0.5
  nats; against in-process scores of the same whole-string ids they agree
  exactly. Scores from a server and from an in-process backend should
  therefore not be mixed within one evaluation.
- Server-side batching and kernels can make results agree with in-process
  scoring only to a tolerance, not bit for bit.
- Top-k lookups match token *text*; two distinct tokens with the same text are
  indistinguishable (a server returns one of them).
- llama-cpp-python's server needs ``logits_all`` (its default) for log-probs
  and converts its whole context window to log-probs on every request, so a
  small ``--n_ctx`` is much faster; it also serialises requests, so
  ``concurrency`` helps only with servers that batch (vLLM, TGI, llama-server).

Deadline and answers
--------------------
``deadline`` bounds each request in wall-clock time, all attempts, back-offs and
the reading of the answer together: httpx's timeouts bound each network
operation only, so a server that sends its answer a byte at a time would never
trip them; the exchange runs in a daemon thread that the request abandons at the
deadline (:meth:`OpenAIScorer._exchange`). Answers over 64 MiB are refused, and so
are log-probs above 0 (beyond 1e-3 of float noise): a server returning logits or
scores is named with the item.

Credentials
-----------
The API key is read from the environment variable ``api_key_env`` at request
time; it is never stored on the scorer. ``user:password@`` in the URL becomes
HTTP basic auth, and credential query parameters (``?api_key=...``) stay in the
request URL only; neither is kept in anything stored or shown. Every message
passes through :func:`activetest.redaction.redact`, which also knows each
credential this scorer used, so a server that echoes one back in its headers or
error body cannot get it printed. Reprs show the variable's name only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import suppress
from typing import Any, Protocol

import httpx
import numpy as np

from activetest.data.task import Item, Task
from activetest.models._util import ScoringCancelledError, progress_bar
from activetest.models.base import Generation
from activetest.models.labels import (
    FIRST_TOKEN,
    LabelScoring,
    LabelScoringLog,
    LabelTokenCollision,
    task_label_tokens,
)
from activetest.models.openai_http import (
    DEADLINE_ENV,
    PARAMS_ENV,
    USERINFO_ENV,
    EndpointClient,
    EndpointError,
    EndpointTimeoutError,
    ServerFailedError,
    ServerGoneError,
    began,
)
from activetest.models.openai_paths import (
    CLAMP,
    METHODS,
    ScoringPath,
    ScoringPathNotice,
    refused,
    sglang_body,
    sglang_values,
    vllm_body,
    vllm_values,
)
from activetest.redaction import (
    redact,
    redact_url,
    split_url,
    without_credentials,
)

__all__ = ["DEADLINE_ENV", "MAX_TOP_K_ENV", "PARAMS_ENV", "USERINFO_ENV", "EndpointError",
           "EndpointTimeoutError", "OpenAIScorer", "ServerFailedError", "ServerGoneError",
           "TokenizerLike",
           "env_max_top_k", "redact_spec", "split_spec"]

_ECHO_TOL = 1e-3  # echoed vs next-token log-prob of the same token
#: Why echo is not trusted where the echo check's top-k request was refused.
_UNCHECKABLE = ("it cannot be checked: the check compares an echoed log-prob with a top-k "
                "next-token log-prob, and the server refused the top-k request")


class TokenizerLike(Protocol):
    """The served model's tokenizer: plain ids, no special tokens added."""

    def tokenize(self, text: str) -> list[int]:
        """The token ids of ``text``, without special tokens (no BOS)."""
        ...

    def detokenize(self, ids: Sequence[int]) -> str:
        """The text of the token ids ``ids`` (the inverse of :meth:`tokenize`)."""
        ...


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


#: A log-prob above this is refused as not a log-probability (float noise allowed).
_LOGPROB_TOL = 1e-3


def split_spec(text: str) -> tuple[str, str | None]:
    """``"URL#model"`` -> ``(URL, model)``: model None without ``#``, ``""`` after an empty one.

    The model separator is the first ``#`` after the URL's userinfo, so a password
    holding ``#`` (or ``@``) stays part of the URL (see :mod:`activetest.redaction`).
    """
    parts = split_url(text)
    rest = parts.rest if parts is not None else text
    head, sep, model = rest.partition("#")
    url = text[:len(text) - len(rest)] + head
    return url, (model if sep else None)


def redact_spec(spec: str) -> str:
    """A model spec as it may be stored and shown: its URL without any credential.

    The URL's userinfo and credential query parameters are removed without trace
    (:func:`~activetest.redaction.without_credentials`), whatever the scheme's case
    and whatever the password holds; specs without a URL are returned unchanged.
    """
    m = re.search(r"[A-Za-z][A-Za-z0-9+.\-]*://", spec)
    if not m:
        return spec
    url, model = split_spec(spec[m.start():])
    stored = spec[:m.start()] + without_credentials(url)
    if model is not None:
        stored += "#" + model
    return redact(stored)


class _NotALogprobError(Exception):
    """The server gave a positive log-prob (logits or scores, not log-probabilities)."""


def _check_logprob(value: float, token: str) -> None:
    """Refuse a value that cannot be a log-probability (NaN is left to the finite check)."""
    if value > _LOGPROB_TOL:
        raise _NotALogprobError(f"the server gave {value:.6g} as the log-prob of {token!r}, which "
                           f"is not a log-probability (a number <= 0); is it returning "
                           f"logits or scores?")


def _answered(exc: EndpointError) -> str:
    """What the server answered a failed request, as ``exc`` says it without its endpoint:
    the status and the start of the body (the first 200 characters of a 200 that is not
    JSON, 300 of another status), credentials masked (``***``, as every message of
    :meth:`~activetest.models.openai_http.EndpointClient._error`).

    QA, 2026-12-07: refusals said "HTTP 200" or "refused (HTTP 404)" alone, and a person
    could not tell what the server (or a gateway before it) had said.
    """
    return str(exc).removeprefix(f"{exc.endpoint}: ")


def _advance_quietly(fut: Future[None], advance: Callable[[], None]) -> None:
    # A done-callback must not raise (concurrent.futures would only log it): a sibling
    # job's cancellation reaches this scorer when its own requests finish instead.
    if not fut.cancelled() and fut.exception() is None:
        with suppress(ScoringCancelledError):
            advance()


#: How many next-token log-probs a ``topk`` scorer asks for, once, for an item whose
#: classes are not all in its first ``top_k`` (``max_top_k``), when not given: the way
#: a command line raises it (QA, 2026-12-07: the refusal said "raise max_top_k", which
#: an ``openai:`` spec cannot; llama-cpp-python's server, whose echo cannot stand in,
#: gives thousands).
MAX_TOP_K_ENV = "ACTIVETEST_OPENAI_MAX_TOP_K"


def env_max_top_k(top_k: int) -> int:
    """``max_top_k`` from ``$ACTIVETEST_OPENAI_MAX_TOP_K`` (200 where unset or blank).

    Args:
        top_k: the scorer's first request size; the value must be at least this.

    Raises:
        ValueError: naming the variable, for a value that is no whole number or below
            ``top_k``.
    """
    raw = os.environ.get(MAX_TOP_K_ENV, "").strip()
    if not raw:
        return max(200, top_k)
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"${MAX_TOP_K_ENV}={raw!r}: expected a whole number of "
                         f"log-probs, e.g. 1000") from None
    if value < top_k:
        raise ValueError(f"${MAX_TOP_K_ENV}={raw!r}: must be >= top_k={top_k}")
    return value


class OpenAIScorer(EndpointClient):
    """Class log-probs from an OpenAI-compatible completions endpoint (vLLM, llama.cpp, ...).

    Args:
        base_url: the API root, e.g. ``"http://127.0.0.1:8000/v1"`` (``/completions``
            is appended unless already there).
        model: the model name the server expects in requests; default: the one model
            the server lists at ``{base_url}/models`` (an error if it lists several).
        api_key_env: environment variable holding the API key (sent as a Bearer
            token when set; local servers usually need none).
        concurrency: requests in flight at once.
        timeout: seconds allowed per attempt (connect, write, read, each).
        deadline: seconds one request may take over all its attempts, retries and
            back-off included (default ``$ACTIVETEST_OPENAI_DEADLINE``, else 120): a
            server that is down or never answers fails within this time.
        max_retries: retries after the first attempt on connection errors,
            timeouts, HTTP 5xx/429/408, and a 200 whose body is not JSON; other 4xx
            fail at once.
        backoff: first retry delay in seconds; doubles each retry (capped at 30 s;
            a 429/503 ``Retry-After`` header is honoured up to that cap).
        tokenizer: the served model's tokenizer (``tokenize``/``detokenize``),
            needed with ``method="topk"`` on servers that cannot echo prompt log-probs.
        method: ``"auto"`` (probe the server once per task and use the best path it
            supports), or one path: ``"vllm-token-ids"``, ``"sglang-token-ids"``,
            ``"topk"``, ``"echo"``; see :mod:`activetest.models.openai_paths`.
        top_k: how many next-token log-probs to request with ``method="topk"``.
        max_top_k: how many to request, once, for an item whose classes are not all in
            the top ``top_k`` (servers that refuse that many fall back to echo); default
            ``$ACTIVETEST_OPENAI_MAX_TOP_K``, else 200 (the variable is how a command
            line raises it: an ``openai:`` spec has no options).
        extra_body: extra JSON fields for every request (server-specific options).
    """

    backend = "openai"
    #: what the :class:`~activetest.models.labels.MultiTokenLabelNotice` advises
    multi_token_remedy = ("this backend reads first tokens only (it has no full-sequence "
                          "scoring); label words of one token each (a task file's classes) "
                          "avoid the question")

    def __init__(self, base_url: str, model: str | None = None, *,
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 8,
                 timeout: float = 60.0, deadline: float | None = None,
                 max_retries: int = 4, backoff: float = 0.5,
                 tokenizer: TokenizerLike | None = None,
                 method: str = "auto", top_k: int = 20,
                 max_top_k: int | None = None,
                 extra_body: Mapping[str, Any] | None = None) -> None:
        super().__init__(base_url, model, api_key_env=api_key_env, concurrency=concurrency,
                         timeout=timeout, deadline=deadline, max_retries=max_retries,
                         backoff=backoff, extra_body=extra_body)
        if method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k}")
        if max_top_k is None:
            max_top_k = env_max_top_k(top_k)
        elif max_top_k < top_k:
            raise ValueError(f"max_top_k must be >= top_k={top_k}, got {max_top_k}")
        self.tokenizer = tokenizer
        self.method = method
        self.top_k = int(top_k)
        self.max_top_k = int(max_top_k)
        # learned from the server: are echoed prompt log-probs right? is max_top_k allowed?
        self._echo_ok: bool | None = None
        self._echo_why = "not checked"
        self._wide_ok: bool | None = None
        self._wide_why = ""  # the server's refusal of the wider top-k request
        self._topk_refused = False  # the echo check's top-k request was refused
        self._texts: dict[tuple[str, ...], list[str]] = {}  # label first-token texts
        self._lock = threading.RLock()
        self.n_fallbacks = 0
        # per task (answer key and classes): label ids and where they came from, the path
        self._ids: dict[tuple[str, ...], tuple[tuple[int, ...], str, str]] = {}
        self._paths: dict[tuple[str, ...], ScoringPath] = {}
        self._last_path: ScoringPath | None = None
        # per task: the label words' token counts where a tokenizer gave them (exact)
        self._counted: dict[tuple[str, ...], LabelScoring] = {}
        self._label_log = LabelScoringLog(self.multi_token_remedy)

    def __repr__(self) -> str:
        return (f"OpenAIScorer({self._shown!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r}, method={self.method!r}, "
                f"top_k={self.top_k}, concurrency={self.concurrency})")

    def cache_identity(self) -> dict[str, Any]:
        """What determines this scorer's outputs (for the score cache; no credentials).

        The model is the one the server says it serves, asked now
        (:meth:`~activetest.models.openai_http.EndpointClient.served_model`): a server
        restarted with other weights on the same URL gets other cache entries.

        Raises:
            EndpointError: no model name was given and the server does not say which
                one it serves (a key without the model could hand back another model's
                scores).
        """
        return {"backend": self.backend, "endpoint": without_credentials(self._url.value),
                "model": self.served_model(),
                "method": self.method, "extra_body": self.extra_body}

    # ------------------------------------------------------------ responses

    def _logprobs_obj(self, data: dict[str, Any]) -> dict[str, Any]:
        try:
            lp = data["choices"][0]["logprobs"]
        except (KeyError, IndexError, TypeError):
            raise self._error(f"response has no choices[0].logprobs; does the server "
                              f"support logprobs on /completions?{began(data)}") from None
        if not isinstance(lp, dict):
            raise self._error(f"response has no logprobs ({json.dumps(lp)}); does the server "
                              f"support logprobs on /completions?{began(data)}")
        return lp

    def _top_logprobs(self, data: dict[str, Any]) -> dict[str, float]:
        """The first generated position's top log-probs, ``{token text: logprob}``."""
        lp = self._logprobs_obj(data)
        try:
            if "content" in lp and isinstance(lp["content"], list):  # chat-style shape
                entry = lp["content"][0]
                top = {str(t["token"]): float(t["logprob"]) for t in entry["top_logprobs"]}
            else:
                top = {str(k): float(v) for k, v in lp["top_logprobs"][0].items()}
        except (KeyError, IndexError, TypeError, AttributeError, ValueError):
            raise self._error(f"response's logprobs hold no top_logprobs for the first "
                              f"generated token{began(data)}") from None
        for text, value in top.items():
            _check_logprob(value, text)
        return top

    def _echo_first(self, data: dict[str, Any], prompt: str, label: str) -> tuple[str, float]:
        """Text and log-prob of the token that starts ``label`` right after ``prompt``."""
        lp = self._logprobs_obj(data)
        tokens, values = lp.get("tokens"), lp.get("token_logprobs")
        offsets = lp.get("text_offset")
        if not isinstance(tokens, list) or not isinstance(values, list) or not tokens:
            raise self._no_echo("no per-token logprobs")
        if not isinstance(offsets, list) or len(offsets) != len(tokens):
            offsets, pos = [], 0
            for t in tokens:
                offsets.append(pos)
                pos += len(str(t))
        # offsets are characters on most servers, bytes on some: accept either
        targets = {len(prompt), len(prompt.encode("utf-8"))}
        for i, (tok, off) in enumerate(zip(tokens, offsets, strict=False)):
            if off in targets and isinstance(tok, str) and tok and label.startswith(tok):
                value = values[i] if i < len(values) else None
                if value is None or not isinstance(value, (int, float)):
                    raise self._no_echo(f"no logprob for the label token {tok!r}")
                _check_logprob(float(value), tok)
                return tok, float(value)
        if len(tokens) <= 2:
            raise self._no_echo(f"only {len(tokens)} token(s) came back")
        raise self._error(f"no token starts the label {label!r} at the end of the prompt "
                          f"(the server's tokenizer merged it with the preceding text?); "
                          f"tokens near the end: {tokens[-6:]!r}")

    def _no_echo(self, why: str) -> EndpointError:
        self._echo_ok, self._echo_why = False, why
        return self._error(f"does not return prompt log-probs with echo=True ({why}); use "
                           f"method='topk' with tokenizer= for this server")

    # -------------------------------------------------------------- scoring

    def _echo_request(self, client: httpx.Client, prompt: str, label: str) -> dict[str, Any]:
        """The answer to echoing ``prompt + label`` (its per-token log-probs)."""
        return self._post(client, {"prompt": prompt + label, "echo": True, "logprobs": 1,
                                   "max_tokens": 1})

    def _echo(self, client: httpx.Client, prompt: str, label: str) -> tuple[str, float]:
        """Text and echoed log-prob of the first token of ``label`` after ``prompt``."""
        return self._echo_first(self._echo_request(client, prompt, label), prompt, label)

    def _top(self, client: httpx.Client, prompt: str, k: int) -> dict[str, float]:
        data = self._post(client, {"prompt": prompt, "logprobs": k, "max_tokens": 1,
                                   "echo": False})
        return self._top_logprobs(data)

    def _check_echo(self, client: httpx.Client, prompt: str) -> bool:
        """Whether echoed prompt log-probs equal next-token log-probs on this server.

        Some servers return echo log-probs shifted by one position (llama-cpp-python
        0.3's server scores prompt token i with the distribution that FOLLOWS it),
        so echo is trusted only after it reproduces a top-k next-token log-prob: the
        most likely non-blank next token ``t`` of ``prompt`` must get the same
        log-prob when echoed in ``prompt + t``. Checked once per scorer. A request of
        the check that the server refuses (:func:`~activetest.models.openai_paths.refused`)
        is the verdict "no echo": an echo request, said with the server's status and the
        start of its answer; the top-k request, because there is then nothing to compare
        the echo with. Anything else is raised, not taken for "no echo", and the check
        is made again later: a server gone, a timeout, a status to retry through every
        retry (:class:`ServerGoneError`, :class:`EndpointTimeoutError`,
        :class:`ServerFailedError`), and a 401/403 (credentials).
        """
        with self._lock:
            if self._echo_ok is not None:
                return self._echo_ok
            try:
                top = self._top(client, prompt, self.top_k)
            except EndpointError as exc:
                if not refused(exc):  # a server gone, failed, timed out, or auth: raised
                    raise
                # refused (as _probe takes it): with no next-token log-prob to compare
                # with, echo cannot be trusted, and the same request is refused again.
                # (Raised, this refusal cut _probe short of its summary of every path.)
                self._uncheckable(exc)
                return False
            why = "no non-blank next token to check it with"
            for text, value in sorted(top.items(), key=lambda kv: -kv[1])[:3]:
                if not text.strip():
                    continue
                try:
                    data = self._echo_request(client, prompt, text)
                except EndpointError as exc:
                    if not refused(exc):  # not a verdict on echo: raised
                        # A server gone, or one that did not answer within the deadline,
                        # says nothing of whether it echoes (swallowed, each next candidate
                        # waited out another deadline, and the refusal blamed echo, "could
                        # not be verified", instead of the server); nor does a 5xx (429,
                        # ...) through every retry, a server overloaded for a moment, nor a
                        # 401/403, a key wanted. Each was kept as "no echo" for the
                        # scorer's life; raised, naming the endpoint and status, _echo_ok
                        # stays unknown: checked again later.
                        raise
                    # the server refused the echo request (echo unsupported, or a body it
                    # cannot take; 200 with no JSON): the same request with another token
                    # would be refused too. (QA: this said "could not be verified (no
                    # non-blank next token ...)", about token content, not the request.)
                    said = _answered(exc)
                    self._echo_ok = False
                    self._echo_why = f"the echo request that checks them failed: {said}"
                    return False
                try:
                    tok, echoed = self._echo_first(data, prompt, text)
                except EndpointError:
                    if self._echo_ok is False:  # the server cannot echo at all
                        return False
                    continue
                if tok != text:
                    why = f"the echoed text {text!r} did not come back as one token"
                    continue
                self._echo_ok = abs(echoed - value) <= _ECHO_TOL
                self._echo_why = (f"the echoed log-prob of {text!r} after the prompt is "
                                  f"{echoed:.4f}, the next-token log-prob is {value:.4f}")
                return self._echo_ok
            self._echo_ok, self._echo_why = False, f"could not be verified ({why})"
            return False

    def _uncheckable(self, exc: EndpointError) -> None:
        """The echo check's verdict where the server refused its top-k request (``exc``):
        no echo, as it cannot be checked, said with the server's answer."""
        self._echo_ok, self._topk_refused = False, True
        self._echo_why = f"{_UNCHECKABLE} ({_answered(exc)})"

    def _label_texts(self, client: httpx.Client, task: Task, prompt: str) -> list[str]:
        """The text of each class's first token as the server reports tokens."""
        if self.tokenizer is not None:
            tok = self.tokenizer
            labels = task_label_tokens(tok.tokenize, task)
            return [tok.detokenize([i]) for i in labels.first_ids]
        key = (task.answer_key, *task.classes)
        if key in self._texts:
            return self._texts[key]
        # token TEXTS from echo are right even where echoed log-prob VALUES are not
        texts = [self._echo(client, prompt, " " + w)[0] for w in task.classes]
        seen: dict[str, int] = {}
        for j, t in enumerate(texts):
            if t in seen:
                i = seen[t]
                err = LabelTokenCollision(task.classes[i], task.classes[j], -1, index_a=i,
                                          index_b=j)
                err.args = (f"label words {task.classes[i]!r} (class {i}) and "
                            f"{task.classes[j]!r} (class {j}) share their first token "
                            f"{t!r} on {self._shown}, so first-token scoring cannot tell "
                            f"them apart; choose label words that differ in their first token",)
                raise err
            seen[t] = j
        self._texts[key] = texts
        return texts

    def _missing(self, client: httpx.Client, task: Task, item: Item, prompt: str,
                 missing: list[int], texts: Sequence[str]) -> dict[int, float]:
        """Exact log-probs of classes absent from the top-k: wider top-k, then echo."""
        found: dict[int, float] = {}
        if self.max_top_k > self.top_k and self._wide_ok is not False:
            try:
                top = self._wide_top(client, prompt)
                self._wide_ok = True
            except EndpointError as exc:  # e.g. vLLM refuses more than --max-logprobs
                # the one rule of refusals (openai_paths.refused): a 429 through every
                # retry is a server rate-limiting for a while, and a 401/403 wants
                # credentials; neither refuses max_top_k (kept as a refusal, they sent
                # every later item to echo for the scorer's life). Read from the status,
                # not the message (which took a gateway's 200 page saying "HTTP 413" for a 4xx)
                if self._wide_ok is True or not refused(exc):
                    raise
                self._wide_ok = False
                self._wide_why = _answered(exc)
                if exc.status == 200:  # asked twice (_wide_top): say so, and how to ask again
                    self._wide_why += ("; the same came back when asked again, so no later "
                                       "item asks for it in this run (a new run asks again)")
                top = {}
            found = {c: top[texts[c]] for c in missing if texts[c] in top}
        rest = [c for c in missing if c not in found]
        if rest and self._check_echo(client, prompt):
            for c in rest:
                found[c] = self._echo(client, prompt, " " + task.classes[c])[1]
            rest = []
        if rest:
            c = rest[0]
            widest = self.max_top_k if self._wide_ok else self.top_k
            if self._wide_ok is False:
                # (QA: this advised raising max_top_k, which the server had just refused)
                then = (f"the server refused the wider request for max_top_k={self.max_top_k} "
                        f"log-probs ({self._wide_why}), so raising max_top_k cannot help; "
                        f"a server that allows more top log-probs can (vLLM: --max-logprobs "
                        f"{self.max_top_k} or more), or one whose echoed prompt log-probs "
                        f"pass the check (method='echo')")
            else:
                then = (f"raise max_top_k (${MAX_TOP_K_ENV}=1000 on the command line, now "
                        f"{self.max_top_k}; max_top_k= in Python)")
            raise self._error(
                f"item {item.id!r}: class {task.classes[c]!r} (first token {texts[c]!r}) is "
                f"not among the top {widest} next tokens, and echoed prompt log-probs cannot "
                f"be used to score it exactly ({self._echo_why}); {then}")
        with self._lock:
            self.n_fallbacks += 1
        return found

    def _wide_top(self, client: httpx.Client, prompt: str) -> dict[str, float]:
        """The top ``max_top_k`` next-token log-probs of ``prompt``; a 200 that is not
        JSON (or not an object) is asked again once before it is raised.

        Why once more: a refusal of the wider request is kept for the scorer's life (every
        later item goes to echo, or is refused, without asking), so it should be the
        server's answer, not a gateway's. A 400 (vLLM above ``--max-logprobs``) is the
        server's; a 200 with a web page in place of JSON is usually a gateway or proxy
        in between, and often a passing one ("502 Bad Gateway" served with 200). QA,
        2026-12-07: one such page turned the wider path off for the whole run. One more
        request, made at most once per scorer (the verdict is kept either way), tells a
        passing page from a steady one; a steady one is then a refusal, said as asked twice.
        """
        try:
            return self._top(client, prompt, self.max_top_k)
        except EndpointError as exc:
            if exc.status != 200:
                raise
        return self._top(client, prompt, self.max_top_k)

    def _score_topk(self, client: httpx.Client, task: Task, item: Item, prompt: str,
                    texts: Sequence[str]) -> np.ndarray:
        top = self._top(client, prompt, self.top_k)
        row = np.array([top.get(t, np.nan) for t in texts], dtype=np.float64)
        missing = [c for c, t in enumerate(texts) if t not in top]
        if missing:
            for c, value in self._missing(client, task, item, prompt, missing, texts).items():
                row[c] = value
        return row

    def _score_echo(self, client: httpx.Client, task: Task, prompt: str) -> np.ndarray:
        return np.array([self._echo(client, prompt, " " + w)[1] for w in task.classes],
                        dtype=np.float64)

    # ------------------------------------------------------- scoring paths

    def _server_tokenize(self, client: httpx.Client) -> tuple[Callable[[str], list[int]],
                                                              str] | None:
        """The server's own tokenizer as ``text -> ids`` (no special tokens), or None.

        vLLM and SGLang answer ``POST /tokenize`` (``add_special_tokens=false``);
        llama-cpp-python's server ``POST /extras/tokenize``, which adds BOS: the ids
        every text starts with (those of ``""``) are removed.
        """
        shapes = [(self._root("/tokenize"), lambda t: {"model": self.model, "prompt": t,
                                                       "add_special_tokens": False}),
                  (self._root("/extras/tokenize"), lambda t: {"input": t})]
        for url, body in shapes:
            try:
                data = self._post(client, body(""), url=url)
            except EndpointError as exc:
                if refused(exc):
                    continue
                raise
            head = data.get("tokens")
            if not isinstance(head, list) or not all(isinstance(i, int) for i in head):
                continue
            lead = list(head)

            def tokenize(text: str, url: str = url, body: Any = body,
                         lead: list[int] = lead) -> list[int]:
                data = self._post(client, body(text), url=url)
                ids = data.get("tokens")
                if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
                    raise self._error(f"the tokenizer at {redact_url(url)} answered without "
                                      f"a list of token ids{began(data)}")
                return ids[len(lead):] if ids[:len(lead)] == lead else ids

            return tokenize, f"the server's tokenizer ({redact_url(url)})"
        return None

    def _label_ids(self, client: httpx.Client, task: Task) -> tuple[tuple[int, ...], str, str]:
        """``(first label token ids, where from, why none)``; ids empty when unknown."""
        key = (task.answer_key, *task.classes)
        if key in self._ids:
            return self._ids[key]
        if self.tokenizer is not None:
            labels = task_label_tokens(self.tokenizer.tokenize, task)
            found: tuple[tuple[int, ...], str, str] = (labels.first_ids, "tokenizer=", "")
        else:
            tok = self._server_tokenize(client)
            if tok is None:
                labels = None
                found = ((), "", "no label token ids: the server has no /tokenize or "
                                 "/extras/tokenize and no tokenizer= was given")
            else:
                labels = task_label_tokens(tok[0], task)
                found = (labels.first_ids, tok[1], "")
        if labels is not None:  # the whole words' token counts come with them
            self._counted[key] = LabelScoring.of(labels, full_sequence=False)
        self._ids[key] = found
        return found

    def _id_values(self, client: httpx.Client, path: str, prompt: str,
                   ids: Sequence[int]) -> dict[int, float]:
        if path == "vllm-token-ids":
            return vllm_values(self._post(client, vllm_body(prompt, ids)))
        return sglang_values(self._post(client, sglang_body(prompt, ids),
                                        url=self._root("/generate")))

    def _probe(self, client: httpx.Client, task: Task, prompt: str) -> ScoringPath:
        """Try the paths on ``prompt``, best first; the first that gives every label."""
        probed: list[str] = []
        try:  # the plain path first: it also says whether the server answers at all
            self._top(client, prompt, self.top_k)
            topk_ok = True
        except EndpointError as exc:
            if not refused(exc):
                raise
            topk_ok = False
            # the summary names the endpoint once, at its start
            probed.append(f"topk: refused ({_answered(exc)})")
            with self._lock:
                if self._echo_ok is None:  # the echo check's top-k request is this one:
                    self._uncheckable(exc)  # its verdict, without asking (retries) again
        ids, source, why = self._label_ids(client, task)
        for path, what in (("vllm-token-ids", "logprob_token_ids"),
                           ("sglang-token-ids", "token_ids_logprob at /generate")):
            if not ids:
                probed.append(f"{path}: {why}")
                continue
            try:
                got = self._id_values(client, path, prompt, ids)
            except EndpointError as exc:
                if not refused(exc):
                    raise
                probed.append(f"{path}: refused ({_answered(exc)})")
                continue
            if all(i in got for i in ids):
                return ScoringPath(path, self.method, self.endpoint, tuple(probed), ids, source)
            probed.append(f"{path}: the answer has no log-probs for the requested {what}")
        if topk_ok:
            return ScoringPath("topk", self.method, self.endpoint, tuple(probed), ids, source)
        if self._check_echo(client, prompt):
            return ScoringPath("echo", self.method, self.endpoint, tuple(probed), ids, source)
        # the top-k request refused above is the one the check asks: its answer is said
        # once (QA: the summary quoted the same body twice, in topk: and in echo:)
        probed.append(f"echo: {_UNCHECKABLE} (said above, topk)" if not topk_ok
                      and self._topk_refused else f"echo: {self._echo_why}")
        raise self._error(f"no way to read class log-probs from this server: "
                          f"{'; '.join(probed)}")

    def _path(self, client: httpx.Client, task: Task, prompt: str) -> ScoringPath:
        """The path for ``task`` (probed once per task with ``method="auto"``)."""
        key = (task.answer_key, *task.classes)
        with self._lock:
            if key in self._paths:
                return self._paths[key]
            if self.method == "auto":
                chosen = self._probe(client, task, prompt)
                warnings.warn(chosen.describe(), ScoringPathNotice, stacklevel=3)
            elif self.method in ("vllm-token-ids", "sglang-token-ids"):
                ids, source, why = self._label_ids(client, task)
                if not ids:
                    raise self._error(f"method={self.method!r}: {why}")
                chosen = ScoringPath(self.method, self.method, self.endpoint, (), ids, source)
            else:
                chosen = ScoringPath(self.method, self.method, self.endpoint)
            self._paths[key] = chosen
            return chosen

    def _score_ids(self, client: httpx.Client, task: Task, item: Item, prompt: str,
                   path: ScoringPath) -> np.ndarray:
        """One item by an id path; a class without an exact value: echo, else refused."""
        got = self._id_values(client, path.path, prompt, path.label_ids)
        row = np.full(task.n_classes, np.nan)
        rest: list[int] = []
        for c, tid in enumerate(path.label_ids):
            value = got.get(tid)
            if value is None or value <= CLAMP:
                rest.append(c)
                continue
            _check_logprob(value, f"token id {tid}")
            row[c] = value
        if rest:
            if not self._check_echo(client, prompt):
                c = rest[0]
                said = ("at vLLM's -9999 clamp (a bound, not a value)"
                        if got.get(path.label_ids[c]) is not None else "missing")
                raise self._error(
                    f"item {item.id!r}: the {path.path} answer's log-prob of class "
                    f"{task.classes[c]!r} (token id {path.label_ids[c]}) is {said}, and "
                    f"echoed prompt log-probs cannot score it exactly ({self._echo_why})")
            for c in rest:
                row[c] = self._echo(client, prompt, " " + task.classes[c])[1]
            with self._lock:
                self.n_fallbacks += 1
        return row

    def _label_scoring(self, client: httpx.Client, task: Task, prompt: str,
                       texts: Sequence[str]) -> LabelScoring:
        """Each label word's token count, as far as this server lets it be known.

        Exact where a tokenizer gave the label tokens (``tokenizer=``, or the server's
        ``/tokenize`` the id paths use). Otherwise only the first token's text is known
        (echoed, :meth:`_label_texts`): a first token shorter than ``" " + word`` shows
        that the word has more than one token, but not how many (recorded as 2 with
        ``exact=False``: "2 or more"); a first token that is the whole word is one.
        """
        key = (task.answer_key, *task.classes)
        if key not in self._counted and self.tokenizer is not None:
            self._counted[key] = LabelScoring.of(task_label_tokens(self.tokenizer.tokenize,
                                                                   task), full_sequence=False)
        if key in self._counted:
            return self._counted[key]
        texts = list(texts) or self._label_texts(client, task, prompt)
        return LabelScoring(FIRST_TOKEN, tuple(task.classes),
                            tuple(1 if t == " " + w else 2
                                  for t, w in zip(texts, task.classes, strict=True)),
                            exact=False)

    def label_scoring(self, task: Task) -> LabelScoring | None:
        """How :meth:`score` read ``task``'s classes from their label words (always the
        first token; each word's token count as far as known, :meth:`_label_scoring`);
        None before it scored the task."""
        return self._label_log.get(task)

    def scoring_path(self) -> ScoringPath | None:
        """How the last :meth:`score` call read its log-probs (None before any)."""
        if self._last_path is None:
            return None
        return dataclasses.replace(self._last_path, n_fallbacks=self.n_fallbacks)

    def generate(self, task: Any, items: Sequence[Item], examples: Sequence[Item] = (), *,
                 max_tokens: int | None = None, stop: Sequence[str] | None = None,
                 progress: bool = True) -> list[Generation]:
        """Greedy answers (``temperature=0``) with their token log-probs from the server.

        The server applies the stop strings itself; where it still returns the token
        that completed one, that token is not counted in ``n_answer_tokens``. It
        reports token texts, not ids, so ``token_ids`` is empty. ``finish`` is the server's
        ``finish_reason`` (``stop`` or ``length``; ``eos`` is reported as ``stop``).

        Raises:
            EndpointError: the server failed or answered without the text or log-probs.
        """
        from activetest.data.generative import cut_at_stop

        max_tokens = int(max_tokens if max_tokens is not None else task.max_tokens)
        stops = list(stop if stop is not None else getattr(task, "stop", ()))
        prompts = [task.prompt(it, examples) for it in items]
        out: list[Generation | None] = [None] * len(items)
        if not items:
            return []
        self._cancel.clear()
        with self._client() as client:
            self._resolve_model(client)

            def one(i: int) -> None:
                body: dict[str, Any] = {"prompt": prompts[i], "max_tokens": max_tokens,
                                        "logprobs": 1, "echo": False}
                if stops:
                    body["stop"] = stops[:4]  # the OpenAI API takes at most 4
                data = self._post(client, body)
                try:
                    choice = data["choices"][0]
                    raw = str(choice["text"])
                except (KeyError, IndexError, TypeError):
                    raise self._error(f"item {items[i].id!r}: the response has no "
                                      f"choices[0].text{began(data)}") from None
                lp = self._logprobs_obj(data)
                values = [float(v) for v in (lp.get("token_logprobs") or []) if v is not None]
                if not all(np.isfinite(values)):
                    raise self._error(f"item {items[i].id!r}: non-finite token log-prob")
                shown = [str(t) for t in lp.get("tokens") or []]
                try:
                    for k, v in enumerate(lp.get("token_logprobs") or []):
                        if v is not None:
                            _check_logprob(float(v), shown[k] if k < len(shown) else f"#{k}")
                except _NotALogprobError as exc:
                    raise self._error(f"item {items[i].id!r}: {exc}") from None
                reason = str(choice.get("finish_reason") or "stop")
                # Some servers (llama-cpp-python) also return the token that completed a
                # stop string: the answer's tokens are those before it.
                n_answer, acc = len(values), ""
                for k, t in enumerate(lp.get("tokens") or []):
                    acc += str(t)
                    if any(s in acc for s in stops):
                        n_answer = min(k, len(values))
                        break
                # a server reports token texts, not ids: token_ids stays empty
                out[i] = Generation(text=cut_at_stop(raw, stops), raw=raw, token_ids=(),
                                    token_logprobs=tuple(values),
                                    finish="length" if reason == "length" else "stop",
                                    n_answer_tokens=n_answer)

            with progress_bar(len(items), f"answering via {self.name}", progress) as advance:
                self._run_all(len(items), one, advance)
        return [g for g in out if g is not None]

    def _run_all(self, n: int, one: Callable[[int], None], advance: Callable[[], None]) -> None:
        """``one(i)`` for every i, ``concurrency`` at a time; the first error stops the rest.

        On an error the waiting requests are cancelled and the ones in flight are told
        to stop at their next attempt (they end within moments, not after their
        timeout); once every job has ended, the error raised is the first in the order
        of i (not the first in time, which varies from run to run), a job stopped by the
        cancellation only where no job failed otherwise (as
        :func:`~activetest.models._util.run_parallel` chooses). On Ctrl-C the
        exception reaches the caller at once, without waiting for the requests.
        """
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        futures: list[Future[None]] = []
        try:
            for i in range(n):
                fut = pool.submit(one, i)
                fut.add_done_callback(lambda f: _advance_quietly(f, advance))
                futures.append(fut)
            wait(futures, return_when=FIRST_EXCEPTION)
            if any(f.done() and not f.cancelled() and f.exception() is not None
                   for f in futures):
                self._cancel.set()
                # (the waiting ones are cancelled, the ones running end: joined, as a
                # future cancelled from the queue is never said done to wait())
                pool.shutdown(wait=True, cancel_futures=True)
                # every job has ended: their errors in job order (QA: the one raised was
                # whichever failed first in time, so two failures gave either message)
                errors = [e for f in futures if not f.cancelled()
                          and (e := f.exception()) is not None]
                real = [e for e in errors if not isinstance(e, ScoringCancelledError)]
                raise (real or errors)[0]
        except BaseException:
            self._cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def score(self, task: Task, items: Sequence[Item], examples: Sequence[Item] = (), *,
              progress: bool = True) -> np.ndarray:
        """``(len(items), C)`` float64 class log-probs (rows log-sum-exp to 0).

        Raises:
            EndpointError: the endpoint is unreachable after retries, refuses the
                request, or cannot provide a class's log-prob (message names it).
            EndpointTimeoutError: every attempt timed out.
            ServerFailedError: the server answered a request's last attempt with a
                status to retry (5xx, 429, ...), after every retry.
            ServerGoneError: the server, having answered, refused or cut the connection
                through every retry (it went away): saying how many of the items were
                scored before (none is kept here; a score cache keeps its chunks).
            LabelTokenCollision: two classes' label words share their first token.
        """
        prompts = [task.prompt(it, examples) for it in items]
        out = np.empty((len(items), task.n_classes), dtype=np.float64)
        if not items:
            return out
        self._cancel.clear()
        scored = [0]  # the items scored so far (said where the server goes away)
        count = threading.Lock()
        try:
            with self._client() as client:
                self._resolve_model(client)
                texts: list[str] = []
                try:
                    path = self._path(client, task, prompts[0])
                    self._last_path = path
                    if path.path == "topk":
                        texts = self._label_texts(client, task, prompts[0])
                    elif path.path == "echo" and not self._check_echo(client, prompts[0]):
                        # (method='topk' is no way out where the top-k was refused)
                        then = ("it refuses top-k requests too, so method='topk' cannot "
                                "be used either" if self._topk_refused
                                else "use method='topk'")
                        raise self._error(f"echoed prompt log-probs are not reliable on "
                                          f"this server ({self._echo_why}); {then}")
                    if self._label_log.get(task) is None:  # said once per task where due
                        self._label_log.record(
                            task, self._label_scoring(client, task, prompts[0], texts),
                            model=repr(self.name))
                except _NotALogprobError as exc:
                    raise self._error(f"item {items[0].id!r}: {exc}") from None

                def one(i: int) -> None:
                    try:
                        if path.path == "topk":
                            row = self._score_topk(client, task, items[i], prompts[i],
                                                   texts)
                        elif path.path == "echo":
                            row = self._score_echo(client, task, prompts[i])
                        else:
                            row = self._score_ids(client, task, items[i], prompts[i], path)
                    except _NotALogprobError as exc:
                        raise self._error(f"item {items[i].id!r}: {exc}") from None
                    if not np.isfinite(row).all():
                        raise self._error(f"item {items[i].id!r}: non-finite log-prob "
                                          f"{row.tolist()}")
                    out[i] = _log_softmax(row)
                    with count:
                        scored[0] += 1

                with progress_bar(len(items), f"scoring via {self.name}",
                                  progress) as advance:
                    self._run_all(len(items), one, advance)
        except ServerGoneError as exc:  # (QA: "could not connect" of a server that died)
            raise exc.during_scoring(scored[0], len(items)) from None
        return out
