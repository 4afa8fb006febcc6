"""OpenAIScorer's scoring paths: probed once, recorded, and agreeing with prompt log-probs.

The ``topk`` path (the first generated token's top-k log-probs) and the fallback to
it run against a real llama-cpp-python server on the bundled SmolLM2 GGUF, which
has neither vLLM's ``logprob_token_ids`` nor SGLang's ``/generate``. SGLang's
request shape (no CPU build of SGLang exists on PyPI) and vLLM's faults (a label at
the -9999 clamp; vLLM itself runs for real in test_vllm_real.py) run against
:mod:`engine_stubs`: a small HTTP server answering
exactly the shapes the engines' sources document, with numbers from a real
``llama_cpp.Llama`` on the same GGUF. The prompt-log-prob path (``echo``) is
compared on the reference server, because llama-cpp-python's own echo is shifted
by one token (see test_openai.py).

Tolerance: class log-probs agree within ``TOL = 1e-4`` nats between paths (same
model, same whole-string token ids, the same llama.cpp kernels; the measured
differences are printed, 0 to ~1e-6 here).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from engine_stubs import engine_server  # tests/models/engine_stubs.py (on sys.path)
from server import reference_completions_server

from activetest.data.task import Item, Task
from activetest.models.cache import CachedScorer
from activetest.models.openai import EndpointError, OpenAIScorer
from activetest.models.openai_paths import ScoringPathNotice

# slow: every stub request evaluates its prompt afresh in llama.cpp, and echo asks C of them
pytestmark = [pytest.mark.slow, pytest.mark.models]

TOL = 1e-4
TASK = Task(name="sst2",
            instruction=('Classify the sentiment of the following sentence as "positive" or '
                         '"negative". Respond with "positive" or "negative".\n'),
            classes=("negative", "positive"), answer_key="Label")
FPB = Task(name="fpb",
           instruction=('Classify the sentiment of the following sentence as "negative", '
                        '"neutral" or "positive". Respond with "negative", "neutral" or '
                        '"positive".\n'),
           classes=("negative", "neutral", "positive"))
ITEMS = [Item(id=f"t{i}", fields={"text": t}) for i, t in enumerate([
    "the soup was cold and the service slow ", "what a lovely little film ",
    "the company cut its outlook for next year "])]
EXAMPLES = [Item(id="e0", fields={"text": "profit fell sharply "}, label=0),
            Item(id="e2", fields={"text": "sales beat every forecast "}, label=2)]


@pytest.fixture(scope="module")
def prompt_logprobs(gguf: Path) -> Iterator[dict[str, np.ndarray]]:
    """The prompt-log-prob path (echo) on the reference server: zero- and few-shot."""
    with reference_completions_server(gguf) as url:
        echo = OpenAIScorer(url, "ref", method="echo")
        yield {"zero": echo.score(TASK, ITEMS, progress=False),
               "few": echo.score(FPB, ITEMS, EXAMPLES, progress=False)}


def _score_noting(scorer: OpenAIScorer, task: Task, examples=()) -> tuple[np.ndarray, list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = scorer.score(task, ITEMS, examples, progress=False)
    return out, [str(w.message) for w in seen if issubclass(w.category, ScoringPathNotice)]


@pytest.mark.slow
def test_llama_server_has_no_label_id_feature_so_auto_falls_back_to_topk(
        server: str, prompt_logprobs: dict[str, np.ndarray]) -> None:
    scorer = OpenAIScorer(server, "smollm2", concurrency=2)
    zero, notes = _score_noting(scorer, TASK)
    few = scorer.score(FPB, ITEMS, EXAMPLES, progress=False)
    path = scorer.scoring_path()
    assert path is not None and path.path == "topk" and path.method == "auto"
    # probed for real: llama-cpp-python ignores logprob_token_ids and has no /generate
    assert any(p.startswith("vllm-token-ids: the answer has no log-probs") for p in path.probed)
    # with the start of the server's answer (FastAPI's {"detail":"Not Found"})
    assert any(p.startswith("sglang-token-ids: refused (HTTP 404: ") for p in path.probed)
    assert "extras/tokenize" in path.label_ids_from and len(path.label_ids) == 3
    assert len(notes) == 1 and "scoring by top-k log-probs" in notes[0], notes  # said once
    for got, want in ((zero, prompt_logprobs["zero"]), (few, prompt_logprobs["few"])):
        print(f"topk (llama server) vs echo: max |diff| = {np.abs(got - want).max():.2e}")
        np.testing.assert_allclose(got, want, atol=TOL)
    assert np.ptp(np.exp(few[:, 2])) > 0.05  # a real model: the scores vary across items


@pytest.mark.parametrize(("engine", "path"), [("vllm", "vllm-token-ids"),
                                               ("sglang", "sglang-token-ids")])
def test_engine_label_id_paths_agree_with_prompt_logprobs(
        gguf: Path, prompt_logprobs: dict[str, np.ndarray], engine: str, path: str) -> None:
    with engine_server(gguf, engine) as url:
        scorer = OpenAIScorer(url, "m", concurrency=2)
        zero, notes = _score_noting(scorer, TASK)
        few = scorer.score(FPB, ITEMS, EXAMPLES, progress=False)
        forced = OpenAIScorer(url, "m", method=path).score(TASK, ITEMS[:2], progress=False)
    rec = scorer.scoring_path()
    assert rec is not None and rec.path == path and rec.prefix_cache and rec.n_fallbacks == 0
    assert "/tokenize" in rec.label_ids_from and len(rec.label_ids) == 3
    if engine == "sglang":  # tried vLLM's field first: ignored by this server
        assert rec.probed == ("vllm-token-ids: the answer has no log-probs for the requested "
                              "logprob_token_ids",)
    assert len(notes) == 1 and engine.replace("vllm", "vLLM").replace("sglang", "SGLang") \
        in notes[0]
    for got, want in ((zero, prompt_logprobs["zero"]), (few, prompt_logprobs["few"])):
        print(f"{path} vs echo: max |diff| = {np.abs(got - want).max():.2e}")
        np.testing.assert_allclose(got, want, atol=TOL)
    np.testing.assert_allclose(forced, zero[:2], atol=TOL)
    assert rec.as_provenance()["path"] == path


def test_clamped_label_falls_back_to_prompt_logprobs_or_is_refused(
        gguf: Path, prompt_logprobs: dict[str, np.ndarray]) -> None:
    # the stub puts the last label at vLLM's -9999 clamp: a bound, never used as a value
    with engine_server(gguf, "vllm-clamp") as url:
        scorer = OpenAIScorer(url, "m")
        got = scorer.score(TASK, ITEMS, progress=False)
    np.testing.assert_allclose(got, prompt_logprobs["zero"], atol=TOL)  # filled by echo
    rec = scorer.scoring_path()
    assert rec is not None and rec.path == "vllm-token-ids"
    assert rec.n_fallbacks == len(ITEMS)
    refused = (r"item 't0': the vllm-token-ids answer's log-prob of class 'positive' "
               r"\(token id \d+\) is at vLLM's -9999 clamp .*cannot score it")
    with engine_server(gguf, "vllm-clamp-noecho") as url, \
            pytest.raises(EndpointError, match=refused):
        OpenAIScorer(url, "m", concurrency=1).score(TASK, ITEMS, progress=False)


def test_forced_id_path_without_label_ids_is_refused(gguf: Path) -> None:
    with engine_server(gguf, "plain") as url:  # no /tokenize, no tokenizer=
        with pytest.raises(EndpointError, match=r"method='vllm-token-ids': no label token "
                                                r"ids: the server has no /tokenize"):
            OpenAIScorer(url, "m", method="vllm-token-ids").score(TASK, ITEMS, progress=False)
        auto = OpenAIScorer(url, "m")
        auto.score(TASK, ITEMS[:1], progress=False)
    rec = auto.scoring_path()
    assert rec is not None and rec.path == "topk" and rec.label_ids == ()
    assert all("no label token ids" in p for p in rec.probed)


def test_path_reaches_the_session_provenance_through_the_cache(gguf: Path,
                                                               tmp_path: Path) -> None:
    from activetest.session.scoring import Scoring

    with engine_server(gguf, "vllm") as url:
        spec = f"openai:{url}#m"
        scoring = Scoring(TASK, [], {}, str(tmp_path / "cache"), use_cache=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ScoringPathNotice)
            _, prov = scoring.score("target", spec, ITEMS[:2], 0, False)
        assert isinstance(scoring.scorer(spec), CachedScorer)
    assert prov["scoring_path"]["path"] == "vllm-token-ids"
    assert prov["scoring_path"]["prefix_cache"] is True
    # the cache key holds what was asked (CachedScorer -> OpenAIScorer identity)
    assert prov["scorer"]["identity"]["identity"]["method"] == "auto"
