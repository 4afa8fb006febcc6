"""OpenAIScorer against real misbehaving HTTP servers: dripping answers, reflected
secrets, positive log-probs; and the CLI end to end (terminal, session file, cache).

The servers are real (``tests/models/server.py::fault_server``, on loopback); no
model is needed, so these run everywhere.
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from server import WordTokenizer, fault_server  # tests/models/server.py (on sys.path)
from tests.session.session_support import PoolFiles, cli_command, cli_env, make_pool_files

from activetest.data.demo import demo_task
from activetest.data.task import Item
from activetest.models.openai import (
    EndpointError,
    EndpointTimeoutError,
    OpenAIScorer,
    ServerFailedError,
    ServerGoneError,
)
from activetest.models.registry import get_scorer
from activetest.redaction import redact, redact_url, split_url, without_credentials
from activetest.session.scoring import stored_spec

TASK = demo_task()
ITEMS = [Item(id=f"r{i}", fields={"text": f"it works well, number {i}"}) for i in range(4)]

# Each secret is distinct and long enough to be searched for byte for byte.
KEY = "sk-live-7f3a9c1e5b2d4f60"
PASSWORD = "pw-8c2e6a4f1d9b"
PASSWORD_HASH = "pw#3b7d@9f1%2a5c"  # '#', '@' and '%' as a person might type them


def spellings(url: str) -> dict[str, tuple[str, str]]:
    """``{name: (spec, secret)}``: the ways a credential can sit in an ``openai:`` spec."""
    host = url.removeprefix("http://")
    return {
        "query-key": (f"openai:{url}?api_key={KEY}#fake-model", KEY),
        "query-token-no-model": (f"openai:{url}?access_token={PASSWORD}", PASSWORD),
        "keylike-value": (f"openai:{url}?k={KEY}&x=1#fake-model", KEY),
        "upper-scheme": (f"openai:HTTP://alice:{PASSWORD}@{host}#fake-model", PASSWORD),
        "password-with-hash": (f"openai:http://alice:{PASSWORD_HASH}@{host}#fake-model",
                               PASSWORD_HASH),
        "password-no-model": (f"openai:http://alice:{PASSWORD}@{host}", PASSWORD),
        "bare-url": (f"Http://alice:{PASSWORD_HASH}@{host}", PASSWORD_HASH),
    }


def secret_forms(secret: str) -> list[str]:
    """The secret and every part of it of 8 or more characters (a secret cut short
    at its ``#`` or ``@`` still gives most of it away)."""
    n = len(secret)
    return sorted({secret[i:j] for i in range(n) for j in range(i + 8, n + 1)})


def assert_hidden(text: str | bytes, secret: str, where: str) -> None:
    for form in secret_forms(secret):
        needle = form.encode() if isinstance(text, bytes) else form
        assert needle not in text, f"{form!r} in {where}: {text[:2000]!r}"


# --------------------------------------------------------------------- redaction


@pytest.mark.parametrize("name", list(spellings("http://127.0.0.1:9/v1")))
def test_no_spelling_of_a_spec_is_stored_or_shown_with_its_secret(name: str) -> None:
    spec, secret = spellings("http://127.0.0.1:9/v1")[name]
    stored = stored_spec(spec)
    assert_hidden(stored, secret, "stored spec")
    assert_hidden(redact(spec), secret, "redacted spec")
    assert "127.0.0.1:9/v1" in stored and "***" not in stored  # stored without trace
    # (one immediate retry: the refusal after retries, not the default 7.5 s of back-offs)
    scorer = get_scorer(spec, max_retries=1, backoff=0.0)
    assert isinstance(scorer, OpenAIScorer)
    if scorer.model is None:  # no model named and none listed (no server): no identity
        with pytest.raises(EndpointError,
                           match=r"could not connect .*is a server running") as info:
            scorer.cache_identity()
        assert_hidden(str(info.value), secret, "the refusal")
        return
    for shown in (repr(scorer), str(vars(scorer)), str(scorer.cache_identity()), scorer.name,
                  scorer.endpoint):
        assert_hidden(shown, secret, "the scorer")
    # the cache identity is the URL without credentials: the same wherever the key was
    assert scorer.cache_identity()["endpoint"] == "http://127.0.0.1:9/v1/completions" + (
        "?x=1" if name == "keylike-value" else "")


def test_redaction_rules() -> None:
    assert redact_url("HTTPS://u:p#w@h:1/v1?a=1&API-Key=z1#m") == "HTTPS://***@h:1/v1?a=1&API-Key=***#m"
    assert without_credentials("http://u:p@h/v1?token=t&api-version=2&sig=s") == \
        "http://h/v1?api-version=2"
    assert redact_url("http://h/v1?design=1&author=2") == "http://h/v1?design=1&author=***"
    assert split_url("http://u:p@ss@h/v1#m@x").userinfo == "u:p@ss"  # the LAST '@' of the host
    assert split_url("http://h/v1#org@model").userinfo is None  # a '@' after the path is not
    assert redact("HTTP 401: Authorization: Bearer abc.def_123 (set basic auth)") == \
        "HTTP 401: Authorization: Bearer *** (set basic auth)"
    assert redact(f"the key {KEY} was refused") == "the key *** was refused"


def test_empty_model_name_is_one_message_without_the_secret() -> None:
    with pytest.raises(ValueError, match="empty model name") as info:
        get_scorer(f"openai:HTTP://alice:{PASSWORD_HASH}@127.0.0.1:9/v1#")
    assert_hidden(str(info.value), PASSWORD_HASH, "the message")
    with pytest.raises(ValueError, match="http") as info:  # no scheme at all
        OpenAIScorer(f"alice:{PASSWORD}@127.0.0.1:9/v1")
    assert_hidden(str(info.value), PASSWORD, "the message")


# ------------------------------------------------------------------------ scoring


@pytest.mark.parametrize("name", ["query-key", "upper-scheme", "password-with-hash",
                                  "password-no-model"])
def test_each_spelling_reaches_the_server(name: str) -> None:
    with fault_server("ok") as srv:
        spec, _ = spellings(srv.url)[name]
        scorer = get_scorer(spec, concurrency=2)
        out = scorer.score(TASK, ITEMS, progress=False)
        assert out.shape == (len(ITEMS), 2)
        if name.startswith("query"):
            assert f"api_key={KEY}" in srv.seen[-1]  # the key was sent in the query...
        else:
            assert "authorization=Basic " in srv.seen[-1]  # ...or as basic auth
            assert "alice" not in srv.seen[-1].partition("authorization=")[0]
        assert "fake-model" in scorer.name  # named, "#fake-model" or asked from /models


def test_a_stored_spec_gets_its_query_key_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A later command builds the scorer from the stored spec, which has no key."""
    with fault_server("reflect-401") as srv:
        stored = stored_spec(spellings(srv.url)["query-key"][0])
        assert KEY not in stored
        monkeypatch.setenv("ACTIVETEST_OPENAI_PARAMS", f"api_key={KEY}")
        with pytest.raises(EndpointError, match="HTTP 401") as info:
            get_scorer(stored).score(TASK, ITEMS, progress=False)
        assert f"?api_key={KEY}" in srv.seen[-1]  # sent...
    assert_hidden(str(info.value), KEY, "the error")  # ...echoed back, never shown


@pytest.mark.parametrize("mode", ["reflect-200", "reflect-302", "reflect-401", "reflect-500"])
@pytest.mark.parametrize("name", ["query-key", "upper-scheme", "password-with-hash",
                                  "password-no-model", "env-key"])
def test_a_server_reflecting_the_secret_gets_none_printed(mode: str, name: str,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    with fault_server(mode) as srv:
        if name == "env-key":
            monkeypatch.setenv("ACTIVETEST_TEST_KEY", KEY)
            spec, secret = f"openai:{srv.url}#fake-model", KEY
            scorer = get_scorer(spec, api_key_env="ACTIVETEST_TEST_KEY", max_retries=1,
                                backoff=0.0)
        else:
            spec, secret = spellings(srv.url)[name]
            scorer = get_scorer(spec, max_retries=1, backoff=0.0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
        assert secret in srv.seen[-1] or "authorization=Basic" in srv.seen[-1]  # sent...
    message = str(info.value)
    assert_hidden(message, secret, "the error")  # ...and reflected, but never shown
    assert mode.removeprefix("reflect-") in message or "non-JSON" in message


@pytest.mark.parametrize("mode", ["drip", "drip-all"])
def test_a_dripping_server_is_stopped_at_the_deadline(mode: str) -> None:
    """A byte every 0.2 s never trips httpx's timeouts; the deadline still holds."""
    with fault_server(mode, interval=0.2) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", deadline=2.0, timeout=60, max_retries=3)
        t0 = time.monotonic()
        with pytest.raises(EndpointTimeoutError, match=r"timed out.*deadline 2 s") as info:
            scorer.score(TASK, ITEMS, progress=False)
        took = time.monotonic() - t0
    # the whole request, not each read, is bounded: at its 2 s, long before the answer's
    # last byte (over 100 bytes: over 20 s; the 8 s: room for a loaded machine)
    assert took < 2.0 + 8, took
    assert "gave up after 1 attempt" in str(info.value)


def test_positive_log_probs_are_refused_naming_the_item_and_value() -> None:
    with fault_server("positive") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", concurrency=1)
        with pytest.raises(EndpointError, match=r"item 'r0': the server gave 2\.5 as the "
                                                r"log-prob of ' negative', which is not a "
                                                r"log-probability"):
            scorer.score(TASK, ITEMS, progress=False)
        with pytest.raises(EndpointError, match=r"item 'r0': the server gave 2\.5 .*"
                                                r"' negative'"):
            scorer.generate(TASK, ITEMS[:1], max_tokens=4, progress=False)


def test_a_server_gone_during_the_echo_check_is_said_gone_not_no_echo() -> None:
    """The server answers the check's top-k request, then stops at its echo request:
    the refusal says it went away, not that echo "could not be verified"."""
    with fault_server("gone-at-echo") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="echo", concurrency=1,
                              max_retries=1, backoff=0.0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert isinstance(info.value, ServerGoneError), msg
    assert "the server went away during scoring: it had answered 1 request(s)" in msg, msg
    assert "0 of the 4 item(s) were scored" in msg, msg
    assert "echo" not in msg, msg


def test_a_timeout_during_the_echo_check_is_a_timeout_not_no_echo() -> None:
    """An echo request with no answer within the deadline is refused as a timeout at
    once (not the next candidate token's deadline too, then "echo not reliable")."""
    with fault_server("hang-at-echo", interval=5.0) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="echo", concurrency=1,
                              deadline=0.5, max_retries=0)
        t0 = time.monotonic()
        with pytest.raises(EndpointTimeoutError, match=r"timed out.*deadline 0\.5 s"):
            scorer.score(TASK, ITEMS, progress=False)
        took = time.monotonic() - t0
        echoed = [s for s in srv.seen if "completions" in s]
    assert len(echoed) == 2, srv.seen  # the top-k request and one echo request
    assert took < 0.5 + 4, took


#: What the modes whose echo requests fail answer (tests/models/server.py::_FAILED_ECHO).
REFUSED = {"refuse-at-echo": ("HTTP 400", "echo=True is not supported with logprobs"),
           "garble-at-echo": ("answered 200 with non-JSON content", "502 Bad Gateway")}


@pytest.mark.parametrize("mode", list(REFUSED))
@pytest.mark.parametrize("method", ["echo", "auto"])
def test_an_echo_request_refused_during_the_check_is_said_with_its_status_and_body(
        mode: str, method: str) -> None:
    """A server refuses the echo check's request (HTTP 400 with a JSON error; 200 with an
    HTML page): the refusal names the failed request, its status and the start of its
    answer (QA: "could not be verified (no non-blank next token to check it with)", a
    message about token content)."""
    status, body = REFUSED[mode]
    with fault_server(mode) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method=method, concurrency=1,
                              max_retries=1, backoff=0.0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert type(info.value) is EndpointError, msg  # a verdict: this server cannot echo
    assert f"the echo request that checks them failed: {status}" in msg, msg
    assert body in msg, msg
    assert "could not be verified" not in msg and "non-blank" not in msg, msg


#: The modes failing one of the echo check's requests with HTTP 503 every time (its echo
#: request, its top-k request): ``{mode: the requests answered before it in one call}``.
FAILED_CHECK = {"fail-at-echo": 1, "fail-topk": 0}


@pytest.mark.parametrize("mode", list(FAILED_CHECK))
def test_a_5xx_through_every_retry_of_the_echo_check_is_a_server_failure_not_no_echo(
        mode: str) -> None:
    """HTTP 503 on every attempt of one of the echo check's requests (its echo request,
    ``fail-at-echo``; its top-k request, ``fail-topk``) is raised as the server's failure
    (:class:`ServerFailedError`, the endpoint and status named), and not kept as "no
    echo" nor taken for "echo cannot be checked": a later call checks again (QA: a server
    overloaded for a moment was treated as one without echo for the scorer's life)."""
    before = FAILED_CHECK[mode]
    with fault_server(mode) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="echo", concurrency=1,
                              max_retries=2, backoff=0.0)
        for _ in range(2):  # the second call asks the server again: no verdict was kept
            n = len(srv.seen)
            with pytest.raises(ServerFailedError) as info:
                scorer.score(TASK, ITEMS, progress=False)
            # the requests answered before (the check's top-k), then the failing one's three
            # attempts
            assert len(srv.seen) - n == before + 3, srv.seen[n:]
            msg = str(info.value)
            assert info.value.status == 503, msg
            assert msg.startswith(f"{srv.url}/completions: HTTP 503: "), msg
            assert "overloaded" in msg and "gave up after 3 attempt(s)" in msg, msg
            assert "echo" not in msg.partition("gave up")[0].lower(), msg


def test_concurrent_requests_to_a_failing_server_retry_one_at_a_time() -> None:
    """Four requests in flight get HTTP 503 together, and every request after them too:
    one of them retries (``max_retries`` times), the others wait for it and give up with
    it, so the server gets 4 + 3 requests, counted by the server (before: each retried on
    its own schedule, up to 4 x 4, a retry storm on a failing server)."""
    n, retries = 4, 3
    items = ITEMS[:n]  # one request an item, all in flight at once: none queued after
    with fault_server("fail-all", crowd=n) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=n,
                              max_retries=retries, backoff=0.05,
                              tokenizer=WordTokenizer())  # (no echo request first)
        with pytest.raises(ServerFailedError) as info:
            scorer.score(TASK, items, progress=False)
        seen = len(srv.seen)
    msg = str(info.value)
    assert seen == n + retries, srv.seen
    assert msg.startswith(f"{srv.url}/completions: HTTP 503: "), msg
    assert (f"gave up after {retries + 1} attempt(s)" in msg
            or ("gave up after 1 attempt(s)" in msg and "another request to the server "
                "retried meanwhile (one retries at a time) and the server failed it "
                "through every retry" in msg)), msg


def test_a_429_through_every_retry_of_the_wider_top_k_is_a_server_failure() -> None:
    """HTTP 429 on every attempt of the wider top-k request (``max_top_k``) is raised as
    the server's failure (:class:`ServerFailedError`), not kept as "this server refuses
    max_top_k" (which sent every later item to echo for the scorer's life)."""
    with fault_server("throttle-wide") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                              max_retries=1, backoff=0.0)
        for _ in range(2):  # the second call asks for the wider top-k again
            with pytest.raises(ServerFailedError) as info:
                scorer.score(TASK, ITEMS, progress=False)
            msg = str(info.value)
            assert info.value.status == 429 and "HTTP 429: " in msg, msg
            assert "rate limit reached" in msg and "gave up after 2 attempt(s)" in msg, msg


def test_a_gateway_page_for_the_wider_top_k_is_a_refusal_said_with_its_answer() -> None:
    """A 200 HTML page (a gateway's) that says "HTTP 413" for the wider top-k request
    (``max_top_k``) is a refusal by the one rule of refusals (``openai_paths.refused``: 200
    with an answer that is not JSON, as the probe and the echo check take it), and the
    item's refusal says so with the page's text (before: the item was refused as "not
    among the top 20 next tokens" alone, the wider request unsaid). The page came back
    when asked again (once: one page may be a passing gateway's,
    test_openai_refusals.py), and the message says so and how to ask again."""
    with fault_server("garble-wide") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                              max_top_k=200, max_retries=0, backoff=0.0)
        for _ in range(2):  # the second call keeps the verdict and says it again
            with pytest.raises(EndpointError) as info:
                scorer.score(TASK, ITEMS, progress=False)
            msg = str(info.value)
            assert "item 'r0': class 'negative'" in msg and "not among the top 20" in msg, msg
            assert ("the server refused the wider request for max_top_k=200 log-probs "
                    "(answered 200 with non-JSON content") in msg, msg
            assert "HTTP 413" in msg and "raising max_top_k cannot help" in msg, msg
            assert ("; the same came back when asked again, so no later item asks for it "
                    "in this run (a new run asks again)), so raising") in msg, msg


#: Why echo is not trusted on a server refusing the echo check's top-k request.
UNCHECKABLE = ("it cannot be checked: the check compares an echoed log-prob with a top-k "
               "next-token log-prob, and the server refused the top-k request")
#: What the probe says of each path on a server refusing every top-k request
#: (``refuse-topk``: HTTP 400; no /tokenize, so no label token ids): the top-k
#: request's answer once, at topk.
NO_TOPK = ["no way to read class log-probs from this server: topk: refused (HTTP 400: ",
           "logprobs are not supported without echo",
           "vllm-token-ids: no label token ids", "sglang-token-ids: no label token ids",
           f"echo: {UNCHECKABLE} (said above, topk)"]


def test_a_server_refusing_every_top_k_request_gets_the_probe_s_summary() -> None:
    """A server that refuses every top-k request (HTTP 400) and has no label-id feature:
    the probe refuses it naming each way it tried and what came of it, echo included
    (before: the echo check's own top-k request raised that raw refusal, so the summary
    never came); ``method="echo"`` says why echo cannot be trusted, without sending the
    user to ``method='topk'``, which the server refuses."""
    with fault_server("refuse-topk") as srv:
        auto = OpenAIScorer(srv.url, "fake-model", concurrency=1, max_retries=0)
        with pytest.raises(EndpointError) as info:
            auto.score(TASK, ITEMS, progress=False)
        echo = OpenAIScorer(srv.url, "fake-model", method="echo", concurrency=1,
                            max_retries=0)
        with pytest.raises(EndpointError) as said:
            echo.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert type(info.value) is EndpointError, msg
    assert msg.startswith(f"{srv.url}/completions: {NO_TOPK[0]}"), msg
    for text in NO_TOPK:
        assert text in msg, msg
    assert msg.count(srv.url) == 1, msg  # the endpoint, named once (at the start)
    assert msg.count(NO_TOPK[1]) == 1, msg  # the server's answer, said once
    msg = str(said.value)
    assert msg.startswith(f"{srv.url}/completions: echoed prompt log-probs are not "
                          f"reliable on this server ({UNCHECKABLE} (HTTP 400: "), msg
    assert NO_TOPK[1] in msg, msg  # what the server said to the top-k request
    assert "method='topk' cannot be used either" in msg, msg


#: What the refusal of an item says where the server refused the wider top-k request
#: (``refuse-wide``: vLLM's HTTP 400 above ``--max-logprobs``; its echo fails the check).
#: (the item: any, where requests run concurrently)
WIDE_REFUSED = ["class 'negative' (first token ' negative') is not among the top 20 next tokens",
                "the server refused the wider request for max_top_k=200 log-probs (HTTP 400: ",
                "greater than max allowed: 20",
                "so raising max_top_k cannot help; a server that allows more top log-probs "
                "can (vLLM: --max-logprobs 200 or more)", "method='echo'"]


def test_a_refused_wider_top_k_is_not_answered_by_raising_max_top_k(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that refuses the wider top-k request (HTTP 400, vLLM above its
    ``--max-logprobs``) and whose echo fails the check: the item's refusal names the
    server's refusal and what can help, not "raise max_top_k ($ACTIVETEST_OPENAI_MAX_TOP_K
    =1000)", which that server just refused (QA)."""
    monkeypatch.delenv("ACTIVETEST_OPENAI_MAX_TOP_K", raising=False)
    with fault_server("refuse-wide") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                              max_retries=0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert "item 'r0': class 'negative'" in msg, msg
    for text in WIDE_REFUSED:
        assert text in msg, msg
    assert "ACTIVETEST_OPENAI_MAX_TOP_K" not in msg and "raise max_top_k" not in msg, msg


@pytest.mark.parametrize(("mode", "method"), [("deny-wide", "topk"), ("deny-at-echo", "echo"),
                                              ("deny-at-echo", "auto")])
def test_a_403_is_said_as_credentials_never_taken_for_a_refusal(mode: str, method: str) -> None:
    """HTTP 403 for the wider top-k request or for the echo check's echo request is an
    error naming credentials (the one rule of refusals, ``openai_paths.refused``), not
    "the server refuses max_top_k" (before: any 4xx) nor "echo is not reliable" (before:
    any failure of the echo request), and no verdict is kept: a second call asks again."""
    with fault_server(mode) as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method=method, concurrency=1,
                              max_top_k=200, max_retries=0)
        for _ in range(2):
            n = len(srv.seen)
            with pytest.raises(EndpointError) as info:
                scorer.score(TASK, ITEMS, progress=False)
            msg = str(info.value)
            assert info.value.status == 403, msg
            assert "HTTP 403: " in msg and "the server wants credentials" in msg, msg
            assert "not among the top" not in msg and "echoed prompt" not in msg, msg
            assert len(srv.seen) > n, srv.seen  # asked again: no verdict was kept


# ------------------------------------------------------------------- the CLI


def _session_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file())


def _init_openai(tmp_path: Path, pf: PoolFiles, url: str, env: dict[str, str],
                 timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``activetest init`` (a child process) of ``tmp_path/s.db`` over the pool files
    ``pf`` with a ``table:`` surrogate and an ``openai:`` target at ``url`` (model
    ``fake-model``), without progress bars or the score cache; its output captured."""
    return subprocess.run(cli_command(
        "init", str(tmp_path / "s.db"), "--pool", str(pf.pool), "--task", "demo",
        "--surrogate", f"table:{pf.surrogate}", "--target", f"openai:{url}#fake-model",
        "--id-column", "id", "--no-progress", "--no-cache"),
        env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_cli_stops_a_dripping_server_at_the_deadline(tmp_path: Path) -> None:
    pf = make_pool_files(tmp_path / "data", n=12)
    deadline = 3.0
    with fault_server("drip", interval=0.5) as srv:  # an answer takes over 50 s
        env = {**cli_env(tmp_path), "ACTIVETEST_OPENAI_DEADLINE": str(deadline)}
        t0 = time.monotonic()
        proc = _init_openai(tmp_path, pf, srv.url, env=env, timeout=120)
        took = time.monotonic() - t0
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1, proc.stderr
    assert "timed out" in proc.stderr and "deadline 3 s" in proc.stderr
    # the deadline plus the command's own start (imports, the supervised child; 40 s:
    # room for a loaded machine), long before one answer's 50 s
    assert took < deadline + 40, took
    assert not (tmp_path / "s.db").exists()


@pytest.mark.slow
def test_cli_never_prints_or_stores_a_secret_in_any_spelling(tmp_path: Path) -> None:
    pf = make_pool_files(tmp_path / "data", n=12)
    with fault_server("ok") as srv:
        # the spellings that leaked (a key a server reflects in its headers among them)
        cases = {name: spellings(srv.url)[name]
                 for name in ("query-key", "upper-scheme", "password-with-hash")}
        cases["env-key"] = (f"openai:{srv.url}#fake-model", KEY)
        for name, (spec, secret) in cases.items():
            env = {**cli_env(tmp_path / name), "OPENAI_API_KEY": KEY if name == "env-key" else ""}
            db = tmp_path / name / "s.db"
            db.parent.mkdir()
            outputs = []
            n0 = len(srv.seen)
            for args in (("init", str(db), "--pool", str(pf.pool), "--task", "demo",
                          "--surrogate", f"table:{pf.surrogate}", "--target", spec,
                          "--id-column", "id", "--seed", "1", "--no-progress"),
                         ("status", str(db))):
                proc = subprocess.run(cli_command(*args), env=env, capture_output=True,
                                      text=True, timeout=300)
                assert proc.returncode == 0, (name, proc.stderr)
                outputs += [proc.stdout, proc.stderr]
            sent = "".join(srv.seen[n0:])
            assert secret in sent or "Basic" in sent, (name, sent)  # it was used
            assert_hidden("".join(outputs), secret, f"{name}: the terminal")
            assert_hidden(_session_bytes(db), secret, f"{name}: the session file")
            metas = list((tmp_path / name / "cache").rglob("meta.json"))
            assert metas, name
            for p in (tmp_path / name).rglob("*"):
                if p.is_file():
                    assert_hidden(p.read_bytes(), secret, f"{name}: {p}")
            with contextlib.closing(sqlite3.connect(db)) as con:
                (config,) = con.execute("SELECT json FROM config").fetchone()
            assert f"{srv.url.removeprefix('http://')}#fake-model" in config, config
        # an empty model name, and a server reflecting the secret: one message, no secret
        spec, secret = spellings(srv.url)["password-with-hash"]
        proc = subprocess.run(cli_command(
            "init", str(tmp_path / "e.db"), "--pool", str(pf.pool), "--task", "demo",
            "--surrogate", f"table:{pf.surrogate}", "--target", spec.removesuffix("fake-model"),
            "--id-column", "id", "--no-progress"), env=cli_env(tmp_path), capture_output=True,
            text=True, timeout=300)
    assert proc.returncode == 2 and "empty model name" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1
    assert_hidden(proc.stdout + proc.stderr, secret, "the terminal")
    with fault_server("reflect-401") as srv:
        spec, secret = spellings(srv.url)["query-key"]
        proc = subprocess.run(cli_command(
            "init", str(tmp_path / "r.db"), "--pool", str(pf.pool), "--task", "demo",
            "--surrogate", f"table:{pf.surrogate}", "--target", spec, "--id-column", "id",
            "--no-progress"), env={**cli_env(tmp_path), "ACTIVETEST_OPENAI_DEADLINE": "5"},
            capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "HTTP 401" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1
    assert_hidden(proc.stdout + proc.stderr, secret, "the terminal")


def test_cli_shows_the_scoring_path_as_one_note_line(tmp_path: Path) -> None:
    """The scoring path an ``openai:`` target was probed to (a ScoringPathNotice) is one
    ``note: ...`` line on stderr (QA: a raw Python warning with its file, line and
    source line)."""
    pf = make_pool_files(tmp_path / "data", n=12)
    with fault_server("ok") as srv:
        proc = _init_openai(tmp_path, pf, srv.url, env=cli_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    notes = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(notes) == 1, proc.stderr
    assert notes[0].startswith("note: ") and "scoring by" in notes[0], proc.stderr
    assert "Warning" not in proc.stderr and ".py:" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(("mode", "said"), [
    ("refuse-at-echo", ["the echo request that checks them failed: HTTP 400: ",
                        "echo=True is not supported with logprobs"]),
    ("fail-at-echo", ["/v1/completions: HTTP 503: ", "the server is overloaded",
                      "gave up after"])])
def test_cli_says_an_echo_check_request_failed_not_no_echo(tmp_path: Path, mode: str,
                                                           said: list[str]) -> None:
    """``init`` with an ``openai:`` target whose echo check's request is refused (400) or
    fails through every retry (503): exit 2, one message naming the endpoint and the
    server's status and answer, no session file (QA: "could not be verified (no
    non-blank next token ...)" for both, and the 503 kept as "no echo")."""
    pf = make_pool_files(tmp_path / "data", n=12)
    with fault_server(mode) as srv:
        proc = _init_openai(tmp_path, pf, srv.url,
                            env={**cli_env(tmp_path), "ACTIVETEST_OPENAI_DEADLINE": "3"})
    err = proc.stderr
    assert proc.returncode == 2, err
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert srv.url.removeprefix("http://") in err, err
    for text in said:
        assert text in err, err
    assert "could not be verified" not in err and "non-blank" not in err, err
    if mode == "fail-at-echo":  # the server's failure, not a verdict on echo
        assert "echoed prompt log-probs" not in err, err
    assert not (tmp_path / "s.db").exists()


def test_cli_gives_the_probe_s_summary_for_a_server_refusing_top_k(tmp_path: Path) -> None:
    """``init`` with an ``openai:`` target that refuses every top-k request: exit 2, one
    message saying how each way of reading class log-probs went, no traceback, no
    session file (before: the raw HTTP 400 of the echo check's top-k request)."""
    pf = make_pool_files(tmp_path / "data", n=12)
    with fault_server("refuse-topk") as srv:
        proc = _init_openai(tmp_path, pf, srv.url,
                            env={**cli_env(tmp_path), "ACTIVETEST_OPENAI_DEADLINE": "3"})
    err = proc.stderr
    assert proc.returncode == 2, err
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert srv.url.removeprefix("http://") in err, err
    for text in NO_TOPK:
        assert text in err, err
    assert err.count(srv.url.removeprefix("http://")) == 1, err  # the endpoint, once
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(("mode", "said", "unsaid"), [
    ("refuse-wide", WIDE_REFUSED, ["ACTIVETEST_OPENAI_MAX_TOP_K", "raise max_top_k"]),
    ("deny-wide", ["HTTP 403: ", "may ask for at most 20 logprobs",
                   "the server wants credentials"], ["not among the top"]),
    ("fail-topk", ["/v1/completions: HTTP 503: ", "the server is overloaded", "gave up after"],
     ["refused", "echo"])])
def test_cli_says_what_the_server_did_with_a_top_k_request(
        tmp_path: Path, mode: str, said: list[str], unsaid: list[str]) -> None:
    """``init`` with an ``openai:`` target whose server refuses the wider top-k (400), wants
    credentials for it (403), or fails every top-k request (503): exit 2, one message
    saying so, no traceback, no session file."""
    pf = make_pool_files(tmp_path / "data", n=12)
    with fault_server(mode) as srv:
        env = {k: v for k, v in cli_env(tmp_path).items()
               if k != "ACTIVETEST_OPENAI_MAX_TOP_K"}
        proc = _init_openai(tmp_path, pf, srv.url, env={**env, "ACTIVETEST_OPENAI_DEADLINE": "3"})
    err = proc.stderr
    assert proc.returncode == 2, err
    assert "Traceback" not in err and err.count("error:") == 1, err
    assert srv.url.removeprefix("http://") in err, err
    for text in said:
        assert text in err, err
    for text in unsaid:
        assert text not in err.partition("gave up")[0], err
    assert not (tmp_path / "s.db").exists()


# ------------------------------------------------------- the model list, retried


def test_the_model_list_waits_for_a_server_coming_up() -> None:
    """``GET /models`` (no ``#name``) is retried as completions requests are: a server
    that comes up a moment late is found (QA: it failed at once with "could not
    connect"), and one that never comes says "could not connect" after the retries."""
    import http.server
    import threading

    from server import _FaultHandler, free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    handler = type("Handler", (_FaultHandler,), {"mode": "ok", "seen": []})
    box: dict[str, http.server.ThreadingHTTPServer] = {}

    def come_up() -> None:
        time.sleep(0.8)  # the first attempts are refused
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        httpd.daemon_threads = True
        box["httpd"] = httpd
        httpd.serve_forever()

    threading.Thread(target=come_up, daemon=True).start()
    try:
        scorer = OpenAIScorer(url, max_retries=4, backoff=0.3)
        assert scorer.cache_identity()["model"]["id"] == "fake-model"
        assert scorer.model == "fake-model"
    finally:
        for _ in range(50):
            if "httpd" in box:
                break
            time.sleep(0.1)
        box["httpd"].shutdown()
        box["httpd"].server_close()
    assert any("/v1/models" in seen for seen in handler.seen), handler.seen
    down = OpenAIScorer(f"http://127.0.0.1:{free_port()}/v1", max_retries=2, backoff=0.1)
    t0 = time.monotonic()
    with pytest.raises(EndpointError, match=r"could not connect .*is a server running at "
                                            r"this address\?; gave up after 3 attempt"):
        down.cache_identity()
    assert time.monotonic() - t0 >= 0.25  # it waited 0.1 s, then 0.2 s, between tries


def test_of_two_failed_requests_the_first_in_item_order_is_raised() -> None:
    """Two requests fail differently: the second item's answer comes first and is read
    whole, but is slow to read (9 MB) and fails once read (a logit, not a log-prob); the
    third item's HTTP 400 comes after that, at once. The error raised is the second
    item's, the first in item order, every time (before: the first in time, the 400, while
    the other was still being read; which fails first varies from run to run)."""
    items = [ITEMS[0], Item(id="slow", fields={"text": "SLOW-FAULT here"}),
             Item(id="fast", fields={"text": "FAST-FAULT here"})]
    for _ in range(2):
        with fault_server("two-faults") as srv:
            scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=3,
                                  max_retries=0)
            with pytest.raises(EndpointError) as info:
                scorer.score(TASK, items, progress=False)
        assert "'slow'" in str(info.value) and "FAST-FAULT" not in str(info.value), \
            str(info.value)
