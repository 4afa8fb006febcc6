"""What OpenAIScorer says when a server, a gateway or a proxy refuses a request: the
start of the answer (credentials masked), the 407 of a proxy, and a gateway's one
non-JSON page for the wider top-k request.

The servers are real (``tests/models/server.py``: :func:`fault_server` and a proxy, on
loopback); no model is needed, so these run everywhere.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from server import QUOTED_SECRET, WordTokenizer, fault_server, proxy_wanting_credentials

from activetest.data.demo import demo_task
from activetest.data.task import Item
from activetest.models.openai import EndpointError, OpenAIScorer
from activetest.models.openai_paths import ScoringPathNotice

TASK = demo_task()
ITEMS = [Item(id=f"r{i}", fields={"text": f"it works well, number {i}"}) for i in range(4)]


#: The start of the page ``garble-topk`` answers a top-k request with, as it is said.
PAGE = ("answered 200 with non-JSON content '<html><body>upstream timed out (retry via "
        "http://***@gateway.internal/retry)</body></html>'; is this an OpenAI-compatible "
        "/completions endpoint?; gave up after 1 attempt(s) in ")


@pytest.mark.parametrize("method", ["echo", "auto"])
def test_a_non_json_200_for_the_top_k_is_said_with_the_start_of_its_body(method: str) -> None:
    """A gateway answers every top-k request with 200 and an HTML page: the refusal (why
    echo cannot be checked) quotes the page once, its credential masked (QA: it said "the
    server refused the top-k request (HTTP 200)", and nothing of what the server said;
    then the probe's summary quoted it twice, at topk and at echo)."""
    with fault_server("garble-topk") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method=method, concurrency=1,
                              max_retries=0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    took = r"\d+\.\d s \(deadline 120 s, \$ACTIVETEST_OPENAI_DEADLINE; max_retries=0\)"
    unchecked = ("it cannot be checked: the check compares an echoed log-prob with a top-k "
                 "next-token log-prob, and the server refused the top-k request")
    no_ids = ("no label token ids: the server has no /tokenize or /extras/tokenize and no "
              "tokenizer= was given")
    if method == "auto":  # the probe's summary, exactly
        shape = (re.escape(f"{srv.url}/completions: no way to read class log-probs from "
                           f"this server: topk: refused ({PAGE}") + took
                 + re.escape(f"); vllm-token-ids: {no_ids}; sglang-token-ids: {no_ids}; "
                             f"echo: {unchecked} (said above, topk)"))
    else:
        shape = (re.escape(f"{srv.url}/completions: echoed prompt log-probs are not reliable "
                           f"on this server ({unchecked} ({PAGE}") + took
                 + re.escape(")); it refuses top-k requests too, so method='topk' cannot be "
                             "used either"))
    assert re.fullmatch(shape, msg), msg
    assert msg.count("upstream timed out") == 1, msg
    assert "(HTTP 200)" not in msg and QUOTED_SECRET not in msg, msg


@pytest.mark.parametrize("method", ["topk", "echo", "auto"])
def test_one_answer_that_is_not_json_is_asked_again_as_a_5xx_is(method: str) -> None:
    """The first completions request (the label words' first tokens by echo; the echo
    check's top-k; the probe's top-k) gets 200 with a body cut short (not JSON): it is
    asked again, as a 5xx is, and the run ends as on a server that answered it whole:
    the same scores and path, or the same refusal (this server's echo fails its check)
    (before: the one answer failed the run, the echo check took it for a refusal of
    top-k, and the probe too, choosing echo)."""
    runs = {}
    for mode in ("ok", "garble-once"):
        with fault_server(mode) as srv:
            scorer = OpenAIScorer(srv.url, "fake-model", method=method, concurrency=1,
                                  max_retries=1, backoff=0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ScoringPathNotice)
                try:
                    out = scorer.score(TASK, ITEMS, progress=False)
                except EndpointError as exc:
                    out = str(exc).replace(srv.url, "URL")
            path = scorer.scoring_path()
            runs[mode] = (out, path and path.path, len(srv.seen))
    (ok, ok_path, ok_seen), (out, got_path, seen) = runs["ok"], runs["garble-once"]
    if method == "echo":  # refused on both: the echo check's verdict
        assert out == ok and "echoed log-prob of ' positive'" in str(ok), (out, ok)
    else:
        np.testing.assert_array_equal(out, ok)
    assert got_path == ok_path == ("topk" if method == "auto" else method), got_path
    assert seen == ok_seen + 1, (seen, ok_seen)  # the garbled one, asked once more


def test_an_answer_that_is_never_json_is_said_once_after_every_retry() -> None:
    """A gateway answers every top-k request with 200 and an HTML page: the request is
    asked ``max_retries`` times more, then refused as an answer that is not JSON, with the
    start of the page once (credentials masked) and the attempts made."""
    with fault_server("garble-topk") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                              max_retries=2, backoff=0.0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS[:1], progress=False)
        # the label words' first tokens (two echo requests), then the item's top-k thrice
        topk = srv.seen[2:]
    msg = str(info.value)
    assert type(info.value) is EndpointError and info.value.status == 200, msg
    assert len(topk) == 3, srv.seen
    assert msg.startswith(f"{srv.url}/completions: answered 200 with non-JSON content "
                          f"'<html><body>upstream timed out (retry via "
                          f"http://***@gateway.internal/retry)</body></html>'; is this an "
                          f"OpenAI-compatible /completions endpoint?; gave up after 3 "
                          f"attempt(s) in "), msg
    assert msg.count("upstream timed out") == 1 and QUOTED_SECRET not in msg, msg


def test_a_refused_label_id_path_is_said_with_the_start_of_its_body() -> None:
    """A strict server refuses vLLM's ``logprob_token_ids`` (HTTP 400) and has no SGLang
    ``/generate`` (404, an HTML page): the probe records each refusal with what the server
    said, credentials masked (QA: "vllm-token-ids: refused (HTTP 400)" alone), and scores
    by top-k."""
    with fault_server("refuse-ids") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", concurrency=1, max_retries=0)
        with pytest.warns(Warning, match="top-k"):
            out = scorer.score(TASK, ITEMS, progress=False)
    assert out.shape == (len(ITEMS), 2)
    path = scorer.scoring_path()
    assert path is not None and path.path == "topk" and "/tokenize" in path.label_ids_from
    vllm, sglang = path.probed
    assert vllm.startswith("vllm-token-ids: refused (HTTP 400: "), vllm
    assert ("unknown field: logprob_token_ids (strict schema; see "
            "http://***@docs.internal/api)") in vllm, vllm
    assert sglang.startswith("sglang-token-ids: refused (HTTP 404: <html><body>404: no route "
                             "/generate on this gateway</body></html>"), sglang
    assert "API root" not in sglang, sglang  # the URL is right: /generate is not there
    assert QUOTED_SECRET not in str(path.as_provenance()), path


def test_a_proxy_asking_for_credentials_is_named_with_the_proxy_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy between activetest and the server answers 407 (Proxy Authentication
    Required): the message says that a proxy asked for credentials and names the
    variables that choose and configure it (before: "HTTP 407: ..." and no hint, where
    401/403 name the server's own key variables)."""
    with proxy_wanting_credentials() as proxy:
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        # the server's address is never reached: the proxy answers for it
        scorer = OpenAIScorer("http://127.0.0.1:9/v1", "fake-model", concurrency=1,
                              max_retries=0)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert proxy.seen and proxy.seen[0].startswith("http://127.0.0.1:9/"), proxy.seen
    assert msg.startswith("http://127.0.0.1:9/v1/completions: HTTP 407: "), msg
    assert "407 Proxy Authentication Required (squid)" in msg, msg
    for text in ("a proxy between activetest and the server asked for credentials",
                 "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"):
        assert text in msg, msg
    assert "OPENAI_API_KEY" not in msg and "***" not in msg, msg  # not the server's key


def test_one_gateway_page_for_the_wider_top_k_is_asked_again_not_kept_for_life() -> None:
    """A gateway answers the first wider top-k request (``max_top_k``) with a 200 HTML
    page, the next with the server's JSON: the request is asked again once, the classes
    are read from the wider top-k, and the wider path stays on for every later item
    (before: the one page was kept as the server's refusal of ``max_top_k`` for the
    scorer's life, and every item was refused, this server's echo failing its check)."""
    with fault_server("garble-wide-once") as srv:
        scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                              max_top_k=200, max_retries=0, backoff=0.0)
        out = scorer.score(TASK, ITEMS, progress=False)
    expected = np.array([-1.9, -2.3]) - np.logaddexp(-1.9, -2.3)
    for row in out:
        assert row.tolist() == pytest.approx(expected.tolist(), abs=1e-12)
    assert scorer.n_fallbacks == len(ITEMS)


@pytest.mark.parametrize(("how", "said"), [
    ("label texts by echo", "response has no logprobs (null); does the server support logprobs on "
             "/completions?; the answer began: {\"note\": \"logprobs are off here (see "
             "http://***@wiki.internal)\", \"choices\": [{\"text\": \" positive\", "
             "\"logprobs\": null}]}"),
    ("top-k", "response's logprobs hold no top_logprobs for the first generated token; the "
             "answer began: {\"note\": \"logprobs are off here (see http://***@wiki.internal)"
             "\", \"choices\": [{\"text\": \" positive\", \"logprobs\": {\"tokens\": "
             "[\" positive\"]}}]}"),
    (None, "cannot list the served models (unexpected answer: no data[].id; the answer "
           "began: {\"models\": [\"fake-model\"], \"note\": \"logprobs are off here (see "
           "http://***@wiki.internal)\"}")])
def test_an_answer_of_the_wrong_shape_is_said_with_its_start(how: str | None,
                                                             said: str) -> None:
    """JSON answers without what was asked (log-probs null, no ``top_logprobs``, a model
    list without ``data``): the message quotes the start of the answer, credentials
    masked (before: "response has no logprobs (null)" and the like, nothing of what the
    server sent)."""
    with fault_server("odd-json") as srv:
        if how is None:  # no model named: asked from /models
            scorer = OpenAIScorer(srv.url, max_retries=0)
        else:  # without a tokenizer the label words' first tokens are learned by echo
            scorer = OpenAIScorer(srv.url, "fake-model", method="topk", concurrency=1,
                                  max_retries=0, tokenizer=WordTokenizer() if how == "top-k"
                                  else None)
        with pytest.raises(EndpointError) as info:
            scorer.score(TASK, ITEMS, progress=False)
    msg = str(info.value)
    assert said in msg, msg
    assert QUOTED_SECRET not in msg, msg


def test_a_web_page_for_a_probed_route_is_asked_once_not_retried() -> None:
    """A gateway that answers every route it lacks with 200 and its web app's page: the
    tokenizer routes the probe tries are each asked once (their pages are the routes'
    absence, not a passing fault; retried as a 5xx is, each cost its whole retry
    schedule), and the run scores as on a server without them."""
    scores, paths = {}, []
    for mode in ("spa", "ok"):
        with fault_server(mode) as srv:
            scorer = OpenAIScorer(srv.url, "fake-model", method="auto", concurrency=1,
                                  max_retries=3, backoff=0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ScoringPathNotice)
                scores[mode] = scorer.score(TASK, ITEMS, progress=False)
            if mode == "spa":
                paths = [s.split()[0].removeprefix("path=").split("?")[0]
                         for s in srv.seen]
    out, ok = scores["spa"], scores["ok"]
    np.testing.assert_array_equal(out, ok)
    other = [p for p in paths if not p.endswith(("/completions", "/models"))]
    assert other and len(other) == len(set(other)), paths  # each probed route once
