"""OpenAIScorer against a real vLLM server (the CPU build), on the bundled SmolLM2.

vLLM serves the bundled SmolLM2 in float32 from the transformers folder that
:class:`~activetest.models.hf.HFScorer` converts the bundled GGUF into (the same
weights in both), so its numbers can be checked three ways:

- ``method="auto"`` probes the real server and chooses vLLM's ``logprob_token_ids``
  (the first generated token's log-probs of the label ids, ids from the server's
  ``/tokenize``); zero-shot, its class log-probs agree with transformers in process
  within ``TOL_HF`` (the same token ids: a zero-shot prompt tokenises the same whole
  or in two parts; measured ~5e-6 nats, float32 kernels of two libraries);
- few-shot, with the prompt-log-prob path (``echo``) on the same server within
  ``TOL`` (measured 0: one engine, the same ids);
- the reason the id path exists: vLLM reads its prefix cache for it and not for
  ``echo`` requests, which ask for prompt log-probs (counted by vLLM's own
  ``/metrics``: prefix-cache hits).

vLLM lives in ``.venv-vllm`` (``scripts/install_vllm.sh``, run by ``scripts/test.sh``).
Without it the module skips; so does a server that cannot start on this CPU (its
log in the reason), and so does a test during which the server process died (a
crash on this CPU, not a wrong number). Everything else after a start can fail.
SGLang has no CPU build on PyPI (``sglang`` needs CUDA kernels), so its request
shape stays on the stub of test_openai_paths.py.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_openai_paths import EXAMPLES, FPB, ITEMS, TASK  # tests/models (on sys.path)
from vllm_server import (
    VLLMServer,
    VLLMStartError,
    prefix_cache_counts,
    vllm_python,
    vllm_server,
)

from activetest.data.task import Item, Task
from activetest.models.openai import OpenAIScorer
from activetest.models.openai_paths import ScoringPathNotice

pytestmark = [pytest.mark.slow, pytest.mark.models,
              pytest.mark.skipif(vllm_python() is None,
                                 reason="no vLLM: run scripts/install_vllm.sh "
                                        "(or set ACTIVETEST_VLLM_PYTHON)")]

TOL = 1e-4
TOL_HF = 1e-4
BLOCK = 128  # vLLM's KV block on CPU: the prefix cache matches whole blocks


@pytest.fixture(scope="module")
def hf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled SmolLM2 as a transformers folder (HFScorer's GGUF conversion)."""
    pytest.importorskip("transformers")
    from activetest.models.bundled import bundled_model_path
    from activetest.models.hf import HFScorer, converted_dir

    cache = tmp_path_factory.mktemp("vllm-hf-cache")
    scorer = HFScorer("smollm2-135m", cache_dir=cache, n_threads=1)
    scorer.score(TASK, ITEMS[:1], progress=False)  # converts and saves the folder
    folder = converted_dir(bundled_model_path("smollm2-135m"), cache)
    assert (folder / "model.safetensors").is_file()
    return folder


@pytest.fixture(scope="module")
def served(hf_dir: Path) -> Iterator[VLLMServer]:
    try:
        with vllm_server(hf_dir, name="smol") as server:
            yield server
    except VLLMStartError as exc:
        pytest.skip(f"vLLM cannot serve on this machine: {exc}")


@contextlib.contextmanager
def _alive(served: VLLMServer) -> Iterator[str]:
    """The server's URL for a test's body; a body during which the server died skips."""
    if not served.alive():
        pytest.skip(f"the vLLM server died earlier on this machine:\n{served.log_tail()}")
    try:
        yield served.url
    except Exception:
        if not served.alive():
            pytest.skip(f"the vLLM server died during the test:\n{served.log_tail()}")
        raise


def _auto(url: str, task: Task, examples: tuple[Item, ...] = ()) -> tuple[np.ndarray, list[str],
                                                                          OpenAIScorer]:
    scorer = OpenAIScorer(url, "smol", concurrency=2)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = scorer.score(task, ITEMS, examples, progress=False)
    return out, [str(w.message) for w in seen if issubclass(w.category, ScoringPathNotice)], scorer


def test_auto_chooses_vllm_label_ids_and_agrees_with_transformers(hf_dir: Path,
                                                                  served: VLLMServer) -> None:
    from activetest.models.hf import HFScorer

    with _alive(served) as vllm_url:
        got, notes, scorer = _auto(vllm_url, TASK)
        rec = scorer.scoring_path()
        assert rec is not None and rec.path == "vllm-token-ids" and rec.method == "auto"
        assert rec.probed == () and rec.n_fallbacks == 0 and rec.prefix_cache
        assert "/tokenize" in rec.label_ids_from and len(rec.label_ids) == len(TASK.classes)
        assert len(notes) == 1 and "vLLM's logprob_token_ids" in notes[0], notes
        want = HFScorer(hf_dir, n_threads=1).score(TASK, ITEMS, progress=False)
        print(f"vLLM (vllm-token-ids) vs transformers, zero-shot: max |diff| = "
              f"{np.abs(got - want).max():.2e}")
        np.testing.assert_allclose(got, want, atol=TOL_HF)
        assert np.ptp(np.exp(got[:, 1])) > 0.05  # a real model: the scores vary across items


def test_few_shot_label_ids_agree_with_prompt_logprobs_on_the_same_server(
        served: VLLMServer) -> None:
    with _alive(served) as vllm_url:
        got, _, scorer = _auto(vllm_url, FPB, tuple(EXAMPLES))
        rec = scorer.scoring_path()
        assert rec is not None and rec.path == "vllm-token-ids" and len(rec.label_ids) == 3
        echo = OpenAIScorer(vllm_url, "smol", method="echo")
        want = echo.score(FPB, ITEMS, EXAMPLES, progress=False)
        assert echo.scoring_path() is not None and echo.scoring_path().path == "echo"
        print(f"vLLM vllm-token-ids vs echo, few-shot: max |diff| = {np.abs(got - want).max():.2e}")
        np.testing.assert_allclose(got, want, atol=TOL)
        forced = OpenAIScorer(vllm_url, "smol", method="vllm-token-ids").score(
            FPB, ITEMS[:2], EXAMPLES, progress=False)
        np.testing.assert_allclose(forced, got[:2], atol=TOL)


def test_the_label_id_path_reads_vllms_prefix_cache_and_echo_does_not(served: VLLMServer) -> None:
    with _alive(served) as vllm_url:
        # a few-shot prefix of several KV blocks, shared by every item
        sentence = ("the film was a slow and tedious affair with moments of real beauty and a "
                    "lead performance that carries it through")
        words = sentence.split(" ")
        examples = [Item(id=f"e{i}", fields={"text": " ".join(words[i:i + 12])}, label=i % 2)
                    for i in range(14)]
        items = [Item(id=f"x{i}", fields={"text": f"item {i}: " + " ".join(words[i:i + 8])})
                 for i in range(6)]
        ids = OpenAIScorer(vllm_url, "smol", method="vllm-token-ids", concurrency=1)
        h0, _ = prefix_cache_counts(vllm_url)
        by_ids = ids.score(TASK, items, examples, progress=False)
        h1, _ = prefix_cache_counts(vllm_url)
        echo = OpenAIScorer(vllm_url, "smol", method="echo", concurrency=1)
        by_echo = echo.score(TASK, items, examples, progress=False)
        h2, _ = prefix_cache_counts(vllm_url)
        np.testing.assert_allclose(by_ids, by_echo, atol=TOL)
        id_hits, echo_hits = h1 - h0, h2 - h1
        n_echo = len(items) * len(TASK.classes)  # echo asks one request per item and class
        print(f"prefix-cache hits: vllm-token-ids {id_hits:.0f} tokens over {len(items)} requests, "
              f"echo {echo_hits:.0f} over {n_echo}")
        # the prefix is at least two blocks: every item after the first reads them
        assert id_hits >= 2 * BLOCK * (len(items) - 1), id_hits
        # echo requests (prompt log-probs) recompute the prompt: under one block each, on average
        assert echo_hits < BLOCK * n_echo, echo_hits


def test_the_path_reaches_a_session_provenance(served: VLLMServer, tmp_path: Path) -> None:
    from activetest.session.scoring import Scoring

    with _alive(served) as vllm_url:
        scoring = Scoring(TASK, [], {}, str(tmp_path / "cache"), use_cache=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ScoringPathNotice)
            scores, prov = scoring.score("target", f"openai:{vllm_url}#smol", ITEMS, 0, False)
        assert np.asarray(scores).shape == (len(ITEMS), len(TASK.classes))
        assert prov["scoring_path"]["path"] == "vllm-token-ids"
        assert prov["scoring_path"]["prefix_cache"] is True
