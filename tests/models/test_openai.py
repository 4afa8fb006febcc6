"""OpenAIScorer against a real llama-cpp-python server running the bundled SmolLM2 GGUF."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import httpx
import numpy as np
import pytest
from server import (  # tests/models/server.py (on sys.path)
    fault_server,
    free_port,
    llama_server,
    reference_completions_server,
)

from activetest.data.task import Item, Task
from activetest.models.base import Scorer
from activetest.models.openai import EndpointError, EndpointTimeoutError, OpenAIScorer

pytestmark = [pytest.mark.slow, pytest.mark.models]

# Measured on this machine (SmolLM2-135M Q4_1, llama-cpp-python 0.3 server vs in process):
# zero-shot scores agree exactly (max |diff| 0.0: same token ids, same kernels). Few-shot
# prompts differ by up to ~0.5 nats from LlamaCppScorer because the server tokenises the
# whole prompt string ("\n\n" before "Sentence" becomes "\n" "\n"), while in-process
# backends use the canonical ids(prefix) + ids(suffix); against the same whole-string ids
# computed in process they agree exactly again.
TOL = 1e-4

TASK = Task(
    name="sst2",
    instruction=('Classify the sentiment of the following sentence as "positive" or "negative". '
                 'Respond with "positive" or "negative".\n'),
    classes=("negative", "positive"), answer_key="Label")
FPB = Task(
    name="fpb",
    instruction=('Classify the sentiment of the following sentence as "negative", "neutral" or '
                 '"positive". Respond with "negative", "neutral" or "positive".\n'),
    classes=("negative", "neutral", "positive"))
TEXTS = [
    "the soup was cold and the service slow ", "what a lovely little film ",
    "i want those two hours back ", "the actors seem to be having a wonderful time ",
    "a tired plot with nothing new to say ", "funny , warm and surprisingly wise ",
    "the second half drags badly ", "an easy recommendation for a rainy afternoon ",
    "quarterly revenue rose four percent ", "the company cut its outlook for next year ",
    "shares were unchanged in early trading ", "a gorgeous score lifts every scene ",
]
ITEMS = [Item(id=f"t{i}", fields={"text": t}) for i, t in enumerate(TEXTS)][:6]
EXAMPLES = [Item(id="e0", fields={"text": "a joyless slog "}, label=0),
            Item(id="e1", fields={"text": "a delight from start to end "}, label=1),
            Item(id="e2", fields={"text": "the worst meal i have had in years "}, label=0),
            Item(id="e3", fields={"text": "bright , clever and kind "}, label=1)]


@pytest.fixture(scope="module")
def local(gguf: Path):
    from activetest.models.llamacpp import LlamaCppScorer
    scorer = LlamaCppScorer(gguf, n_ctx=512, n_threads=1)
    yield scorer
    scorer.close()


@pytest.fixture(scope="module")
def reference(server: str) -> np.ndarray:
    """Zero-shot server scores with concurrency 1 (the baseline for other settings)."""
    return OpenAIScorer(server, "smollm2", concurrency=1).score(TASK, ITEMS, progress=False)


def test_is_a_scorer_and_rows_normalise(reference: np.ndarray) -> None:
    assert isinstance(OpenAIScorer("http://127.0.0.1:1/v1", "m"), Scorer)
    assert reference.shape == (len(ITEMS), 2) and reference.dtype == np.float64
    np.testing.assert_allclose(np.logaddexp(reference[:, 0], reference[:, 1]), 0.0, atol=1e-12)
    # a real model, not a constant: the scores vary across items
    assert np.ptp(reference[:, 1]) > 0.5


def test_zero_shot_agrees_with_in_process(reference: np.ndarray, local) -> None:
    ours = local.score(TASK, ITEMS, progress=False)
    diff = float(np.abs(reference - ours).max())
    print(f"zero-shot max |server - LlamaCppScorer| = {diff:.2e}")
    assert diff < TOL


def _whole_string_scores(gguf: Path, local, task: Task, items, examples) -> np.ndarray:
    """In-process scores from the ids of the whole prompt string (as a server tokenises)."""
    from activetest.models.llama_cpu import load_llama
    llm = load_llama(model_path=str(gguf), n_ctx=512, n_threads=1, n_threads_batch=1,
                logits_all=True, verbose=False)
    first = list(local.label_tokens(task).first_ids)
    out = []
    for it in items:
        llm.reset()
        llm.eval(llm.tokenize(task.prompt(it, examples).encode(), add_bos=True))
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)[first]
        out.append(logits - np.logaddexp.reduce(logits))
    return np.array(out)


def test_few_shot_three_classes(server: str, local, gguf: Path) -> None:
    examples = [Item(id="f0", fields={"text": "profit fell sharply "}, label=0),
                Item(id="f1", fields={"text": "the meeting is on tuesday "}, label=1),
                Item(id="f2", fields={"text": "sales beat every forecast "}, label=2)]
    items = ITEMS[:4]
    remote = OpenAIScorer(server, "smollm2", concurrency=2, tokenizer=local).score(
        FPB, items, examples, progress=False)
    assert remote.shape == (4, 3)
    whole = _whole_string_scores(gguf, local, FPB, items, examples)
    np.testing.assert_allclose(remote, whole, atol=TOL)
    canonical = local.score(FPB, items, examples, progress=False)
    print(f"few-shot max |server - LlamaCppScorer (canonical ids)| = "
          f"{np.abs(remote - canonical).max():.2e}")


def test_concurrency_and_tokenizer_give_same_scores(server: str, local,
                                                    reference: np.ndarray) -> None:
    many = OpenAIScorer(server, concurrency=4, tokenizer=local)  # model: asked from the server
    np.testing.assert_allclose(many.score(TASK, ITEMS, progress=True), reference, atol=TOL)
    assert many.model and many.model.endswith(".gguf")
    assert json.dumps(many.cache_identity())


def test_failed_server_start_is_reported_and_cleaned_up(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp.server")
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"GGUF but not really")
    with pytest.raises(RuntimeError, match=r"llama_cpp.server exited with") as info, \
            llama_server(bogus, startup_timeout=120):
        pass
    assert str(bogus) in str(info.value)


def test_topk_fallback_asks_for_more(server: str, local, reference: np.ndarray) -> None:
    # top_k=1: at most one class per item is in the top-k; the others come from top-200
    narrow = OpenAIScorer(server, "smollm2", top_k=1, concurrency=2, tokenizer=local)
    np.testing.assert_allclose(narrow.score(TASK, ITEMS[:4], progress=False), reference[:4],
                               atol=TOL)
    assert narrow.n_fallbacks >= 3


def test_shifted_echo_is_detected_not_used(server: str, local) -> None:
    # llama-cpp-python's server echoes prompt log-probs shifted by one position
    echo = OpenAIScorer(server, "smollm2", method="echo")
    with pytest.raises(EndpointError, match=r"echoed prompt log-probs are not reliable.*"
                                            r"next-token log-prob is"):
        echo.score(TASK, ITEMS[:2], progress=False)
    # a class outside every top-k the server gives, with no usable echo: a clear error
    tight = OpenAIScorer(server, "smollm2", top_k=1, max_top_k=1, tokenizer=local)
    with pytest.raises(EndpointError, match=r"item 't\d+': class '(negative|positive)' "
                                            r"\(first token ' (negative|positive)'\) is not "
                                            r"among the top 1 next tokens.*raise max_top_k"):
        tight.score(TASK, ITEMS[:4], progress=False)


def test_vllm_semantics_echo_and_refused_wide_topk(gguf: Path, local,
                                                  reference: np.ndarray) -> None:
    """Against correct echo and a logprobs cap (vLLM's behaviour), every path is exact."""
    with reference_completions_server(gguf, max_logprobs=20) as url:
        echo = OpenAIScorer(url, "ref", method="echo", concurrency=2)
        np.testing.assert_allclose(echo.score(TASK, ITEMS[:3], progress=False), reference[:3],
                                   atol=TOL)
        # top_k=1 misses classes; top-200 is refused (HTTP 400); verified echo fills them in
        narrow = OpenAIScorer(url, "ref", top_k=1, max_top_k=200)  # label texts via echo
        np.testing.assert_allclose(narrow.score(TASK, ITEMS[:3], progress=False),
                                   reference[:3], atol=TOL)
        assert narrow.n_fallbacks >= 2
        assert "not checked" not in narrow._echo_why  # echo was verified before use


# " posh" is two tokens for SmolLM2 (" pos", "h"), the others one each; " pos" is unlikely
# after this prompt, so the scorers below widen their top-k fallback to find it (the
# server's echo is shifted, so it cannot stand in)
POSH = Task(name="posh", instruction=TASK.instruction, classes=("negative", "positive", "posh"),
            answer_key="Label")


def _notices(scorer: OpenAIScorer, task: Task) -> list[str]:
    import warnings

    from activetest.models.labels import MultiTokenLabelNotice

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        scorer.score(task, ITEMS[:2], progress=False)
    return [str(w.message) for w in record if issubclass(w.category, MultiTokenLabelNotice)]


def test_multi_token_label_words_are_said_with_what_the_server_shows(server: str) -> None:
    from activetest.models.labels import FIRST_TOKEN, LabelScoring

    # probed: the label ids come from the server's tokenizer, which counts whole words
    auto = OpenAIScorer(server, "smollm2", concurrency=1, max_top_k=50000)
    said = _notices(auto, POSH)
    assert len(said) == 1 and "'posh' (class 2): 2 tokens;" in said[0], said
    assert "first token's log-prob, the paper's choice" in said[0]
    assert "no full-sequence scoring" in said[0] and "full_sequence=True" not in said[0]
    assert auto.label_scoring(POSH) == LabelScoring(FIRST_TOKEN, POSH.classes, (1, 1, 2))
    assert _notices(auto, POSH) == []  # once per task
    # top-k by text, no tokenizer: only the echoed first token's text is known, which is
    # shorter than " posh": more than one token, not how many
    topk = OpenAIScorer(server, "smollm2", method="topk", concurrency=1, max_top_k=50000)
    said = _notices(topk, POSH)
    assert len(said) == 1 and "'posh' (class 2): 2 or more tokens" in said[0], said
    assert topk.label_scoring(POSH) == LabelScoring(FIRST_TOKEN, POSH.classes, (1, 1, 2),
                                                   exact=False)
    # one-token words: nothing to say, and the record says one token each
    assert _notices(OpenAIScorer(server, "smollm2", method="topk", concurrency=1), TASK) == []
    assert _notices(auto, TASK) == [] and auto.label_scoring(TASK).n_tokens == (1, 1)


def test_server_down_retries_then_names_endpoint() -> None:
    port = free_port()  # nothing listens there
    scorer = OpenAIScorer(f"http://127.0.0.1:{port}/v1", "m", max_retries=2, backoff=0.1,
                          timeout=5)
    t0 = time.monotonic()
    with pytest.raises(EndpointError, match=rf"http://127.0.0.1:{port}/v1/completions: could "
                                            rf"not connect .*gave up after 3 attempt") as info:
        scorer.score(TASK, ITEMS[:2], progress=False)
    assert not isinstance(info.value, EndpointTimeoutError)
    assert time.monotonic() - t0 >= 0.1 + 0.2  # two backoff sleeps happened


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A socket that accepts connections (kernel backlog) and never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield int(sock.getsockname()[1])
    sock.close()


def test_timeout_is_a_clear_error(silent_port: int) -> None:
    scorer = OpenAIScorer(f"http://127.0.0.1:{silent_port}/v1", "m", timeout=0.3,
                          max_retries=1, backoff=0.0, method="echo")
    t0 = time.monotonic()
    with pytest.raises(EndpointTimeoutError, match=rf"127.0.0.1:{silent_port}/v1/completions: "
                                                   r"timed out after 0.3 s"):
        scorer.score(TASK, ITEMS[:1], progress=False)
    assert 0.6 <= time.monotonic() - t0 < 10


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A misbehaving server: answers 401 and echoes the request headers in the body."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        body = json.dumps({"error": "bad key", "headers": dict(self.headers)}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_api_key_never_in_errors_or_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-5f3a9c1e7b2d"
    monkeypatch.setenv("ACTIVETEST_TEST_KEY", secret)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        scorer = OpenAIScorer(url, "m", api_key_env="ACTIVETEST_TEST_KEY", max_retries=3)
        assert secret not in repr(scorer) and "ACTIVETEST_TEST_KEY" in repr(scorer)
        assert secret not in str(vars(scorer)) and secret not in str(scorer.cache_identity())
        with pytest.raises(EndpointError, match="HTTP 401") as info:
            scorer.score(TASK, ITEMS[:1], progress=False)
        assert _Recorder.seen[-1] == f"Bearer {secret}"  # the key was sent...
        assert len(_Recorder.seen) == 1  # ...once: 401 is not retried
        assert secret not in str(info.value) and "***" in str(info.value)  # ...and scrubbed
    finally:
        httpd.shutdown()
        httpd.server_close()
    down = OpenAIScorer(f"http://user:{secret}@127.0.0.1:{free_port()}/v1", "m",
                        max_retries=0)
    assert secret not in repr(down)
    with pytest.raises(EndpointError) as info:
        down.score(TASK, ITEMS[:1], progress=False)
    assert secret not in str(info.value)


class _Flaky(http.server.BaseHTTPRequestHandler):
    """A proxy in front of the real server that answers 503 to the first requests."""

    upstream = ""
    failures_left = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with _Flaky.lock:
            fail = _Flaky.failures_left > 0
            _Flaky.failures_left -= fail
        if fail:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        r = httpx.post(_Flaky.upstream + self.path.removeprefix("/v1"), content=body,
                       headers={"Content-Type": "application/json"}, timeout=60)
        self.send_response(r.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(r.content)))
        self.end_headers()
        self.wfile.write(r.content)

    def log_message(self, *args: object) -> None:
        pass


def test_5xx_is_retried(server: str, local, reference: np.ndarray) -> None:
    _Flaky.upstream, _Flaky.failures_left = server, 3
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        out = OpenAIScorer(url, "smollm2", max_retries=3, backoff=0.01, concurrency=1,
                           tokenizer=local).score(TASK, ITEMS[:2], progress=False)
        np.testing.assert_allclose(out, reference[:2], atol=TOL)
        assert _Flaky.failures_left == 0
        _Flaky.failures_left = 10
        with pytest.raises(EndpointError, match=r"HTTP 503.*gave up after 2 attempt"):
            OpenAIScorer(url, "smollm2", max_retries=1, backoff=0.01, tokenizer=local).score(
                TASK, ITEMS[:1], progress=False)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"base_url": "127.0.0.1:8000"}, "http"),
    ({"model": ""}, "model"),
    ({"top_k": 5, "max_top_k": 2}, "max_top_k"),
    ({"concurrency": 0}, "concurrency"),
    ({"timeout": 0}, "timeout"),
    ({"max_retries": -1}, "max_retries"),
    ({"method": "guess"}, "method"),
    ({"top_k": 0}, "top_k"),
])
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kwargs}
    with pytest.raises(ValueError, match=message):
        OpenAIScorer(**args)


def test_cache_keeps_apart_the_models_one_url_served(tmp_path: Path, gguf: Path,
                                                    local) -> None:
    """QA: a server on one port served SmolLM2, then Gemma; ``openai:URL`` without ``#model``
    handed the second the first one's cached scores (the key had no model in it).

    Kept fast (was ~150 s, nearly all of it Gemma): llama-cpp-python's server answers an
    ``echo`` request (how a scorer without ``tokenizer=`` learns each label's first
    token, once per task and scorer) by sorting the whole vocabulary (262k for Gemma) in
    Python for every prompt token: each scorer is given the served model's tokenizer
    (which the cache key leaves out: ``cache_identity`` is the endpoint, the served
    model, the method), the prompt is short and each model name has one scorer, its
    fresh scores asked of the server past the cache."""
    from activetest.models.bundled import bundled_model_path
    from activetest.models.cache import CachedScorer
    from activetest.models.llamacpp import LlamaCppScorer

    pytest.importorskip("llama_cpp.server")
    try:
        gemma = Path(bundled_model_path("gemma3-270m"))
    except Exception as exc:  # not installed in this environment
        pytest.skip(f"bundled Gemma not available: {exc}")
    task = Task(name="sst2-short", instruction='Say "negative" or "positive".\n',
                classes=TASK.classes, answer_key="Label")
    items = [Item(id=f"s{i}", fields={"text": t}) for i, t in enumerate(
        ("so bad ", "so good ", "dull "))]
    port = free_port()
    got: dict[str, tuple[np.ndarray, np.ndarray, dict]] = {}
    gemma_tokens = LlamaCppScorer(gemma, n_ctx=128, n_threads=1)
    for name, path, tokens in (("smollm2", gguf, local), ("gemma", gemma, gemma_tokens)):
        with llama_server(path, n_ctx=128, n_threads=1, port=port) as url:
            # the same name for both (llama-cpp-python answers any name with its model)
            for spec_model in (None, "same-name"):
                scorer = OpenAIScorer(url, spec_model, concurrency=1, tokenizer=tokens)
                if spec_model is None:
                    # one pass first: the server's first prompt is evaluated whole, later
                    # ones reuse the previous prompt's prefix, and the two can differ on
                    # some CPUs (Gemma on an AMD EPYC: 0.04 nats on the first item): the
                    # kernels' batching, not the cache this test is about
                    scorer.score(task, items, progress=False)
                cached = CachedScorer(scorer, tmp_path)
                lp = cached.score(task, items, progress=False)
                fresh = scorer.score(task, items, progress=False)  # past the cache
                assert cached.hits == 0, (name, spec_model)  # never the other model's entry
                np.testing.assert_allclose(lp, fresh, atol=TOL)
                got[f"{name}/{spec_model}"] = (lp, fresh, cached.cache_identity())
    gemma_tokens.close()
    assert np.abs(got["smollm2/None"][0] - got["gemma/None"][0]).max() > 1e-3
    ident = got["gemma/None"][2]["identity"]["model"]
    assert ident["id"] == str(gemma)  # the served model, named in the identity (provenance)
    assert got["gemma/same-name"][2]["identity"]["model"]["served"]["id"] == str(gemma)


def test_no_model_name_and_no_model_list_refuses_the_cache(tmp_path: Path) -> None:
    """Without ``#model`` a server that does not list its model gives no cache key: refused
    with what to do, not keyed by the URL alone."""
    from activetest.models.cache import CachedScorer

    with fault_server("reflect-401") as srv:  # answers, but lists no model
        unlisted = OpenAIScorer(srv.url, max_retries=0)
        with pytest.raises(EndpointError, match=r"cannot list the served models .*HTTP 401"
                                                r".*score cache.*openai:URL#name"):
            CachedScorer(unlisted, tmp_path).score(TASK, ITEMS[:1], progress=False)
    # no server at all (QA: a dead llama.cpp server was refused with "name the model:
    # openai:URL#name", which only led to "could not connect" once named): said as such
    down = OpenAIScorer(f"http://127.0.0.1:{free_port()}/v1", max_retries=0)
    with pytest.raises(EndpointError, match=r"could not connect .*is a server running at "
                                            r"this address") as info:
        CachedScorer(down, tmp_path).score(TASK, ITEMS[:1], progress=False)
    assert "URL#name" not in str(info.value) and "cannot be told apart" not in str(info.value)
    named = OpenAIScorer(f"http://127.0.0.1:{free_port()}/v1", "m", max_retries=0)
    assert named.cache_identity()["model"] == {"id": "m"}  # a given name is all there is
