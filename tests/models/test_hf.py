"""The transformers backend on the two bundled GGUF models (real weights, no mocks).

Each model is loaded once per module. SmolLM2 is converted into a fresh
module-level cache folder (so the GGUF -> safetensors conversion and its reuse
are exercised on every run); Gemma uses the default per-user cache.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")

from activetest.data.demo import demo_items, demo_task
from activetest.data.task import Item, Task
from activetest.models.bundled import ModelNotFoundError, bundled_model_path
from activetest.models.hf import CONVERTED_MARKER, HFScorer, converted_dir

pytestmark = [pytest.mark.hf, pytest.mark.slow, pytest.mark.models]

TOL = 1e-4  # log-prob agreement between exact float32 paths (measured: <= 1.1e-5)
# hf (GGUF dequantised to float32) vs llama.cpp (quantised matmuls, 8-bit activations) on the
# same file differ by more than rounding. Measured on 64 demo items, 16 shots: mean |diff|
# 0.033 / 0.045 (SmolLM2 / Gemma), max 0.16 / 0.21, argmax agreement 100%. The tolerances
# leave 2-3x headroom; a wrong prompt, BOS or label token moves log-probs by whole units.
LLAMA_MEAN_TOL = 0.1
LLAMA_MAX_TOL = 0.6
LLAMA_AGREE_MIN = 0.9
# One thread: on a 2-core machine shared with other jobs, torch's two OpenMP threads wait
# for each other at every small matmul and run 10-30x slower than one thread.
THREADS = 1


@pytest.fixture(scope="module", autouse=True)
def _restore_torch_threads() -> object:
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _model_or_skip(name: str, **kw: object) -> HFScorer:
    try:
        bundled_model_path(name)
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
    return HFScorer(name, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def smol_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hf-cache")


@pytest.fixture(scope="module")
def smol(smol_cache: Path) -> HFScorer:
    return _model_or_skip("smollm2-135m", cache_dir=smol_cache, batch_size=8, n_threads=THREADS)


@pytest.fixture(scope="module")
def gemma() -> HFScorer:
    return _model_or_skip("gemma3-270m", batch_size=8, n_threads=THREADS)


@pytest.fixture(scope="module")
def task() -> Task:
    return demo_task()


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return demo_items(120, seed=7)


def _naive(scorer: HFScorer, task: Task, items: list[Item], examples: list[Item]) -> np.ndarray:
    scorer.naive = True
    try:
        return scorer.score(task, items, examples, progress=False)
    finally:
        scorer.naive = False


def _reference(scorer: HFScorer, task: Task, item: Item, examples: list[Item]) -> np.ndarray:
    """Class log-probs from the model's own full forward and full-vocabulary head."""
    logits = scorer.full_logits(scorer.prompt_ids(task, item, examples))
    lab = logits[list(scorer.label_tokens(task).first_ids)]
    return lab - np.logaddexp.reduce(lab)


def _prefix_len(scorer: HFScorer, task: Task, examples: list[Item]) -> int:
    return len(scorer.prompt_ids(task, Item("x", {"text": ""}), examples)) - len(
        scorer.tokenize(task.render_item(Item("x", {"text": ""}))))


# -- exactness ------------------------------------------------------------------------


def test_prefix_reuse_equals_naive_smollm2(smol: HFScorer, task: Task, items: list[Item]) -> None:
    examples, batch = items[:16], items[100:105]
    reuse = smol.score(task, batch, examples, progress=False)
    naive = _naive(smol, task, batch, examples)
    np.testing.assert_allclose(reuse, naive, atol=TOL, rtol=0)
    # and both equal the model's own full forward pass with its full-vocabulary head
    np.testing.assert_allclose(naive[0], _reference(smol, task, batch[0], examples),
                               atol=TOL, rtol=0)


def test_prefix_reuse_equals_naive_gemma_past_sliding_window(gemma: HFScorer, task: Task,
                                                             items: list[Item]) -> None:
    examples, batch = items[:40], items[100:103]
    n_prefix = _prefix_len(gemma, task, examples)
    assert n_prefix > 512 + 50, n_prefix  # well past Gemma 3's 512-token sliding window
    reuse = gemma.score(task, batch, examples, progress=False)
    naive = _naive(gemma, task, batch, examples)
    np.testing.assert_allclose(reuse, naive, atol=TOL, rtol=0)
    np.testing.assert_allclose(naive[0], _reference(gemma, task, batch[0], examples),
                               atol=TOL, rtol=0)


def test_batched_equals_unbatched(smol: HFScorer, task: Task, items: list[Item]) -> None:
    examples, batch = items[:8], items[60:70]
    lengths = {len(smol.tokenize(task.render_item(it))) for it in batch}
    assert len(lengths) > 3  # padding is really exercised
    smol.batch_size = 1
    try:
        one = smol.score(task, batch, examples, progress=False)
    finally:
        smol.batch_size = 8
    eight = smol.score(task, batch, examples, progress=False)
    np.testing.assert_allclose(one, eight, atol=TOL, rtol=0)
    # The cached prefix is shared, never modified: scoring again gives the same numbers.
    np.testing.assert_array_equal(eight, smol.score(task, batch, examples, progress=False))


def test_rows_normalised_and_informative(smol: HFScorer, task: Task, items: list[Item]) -> None:
    examples, batch = items[:16], items[20:52]
    lp = smol.score(task, batch, examples, progress=False)
    assert lp.shape == (32, 2) and lp.dtype == np.float64
    assert np.all(np.isfinite(lp)) and np.all(lp <= 0)
    np.testing.assert_allclose(np.logaddexp.reduce(lp, axis=1), 0.0, atol=1e-12)
    labels = np.array([it.label for it in batch])
    assert (lp.argmax(1) == labels).mean() > 0.6  # a real model, not noise


def test_empty_prefix_and_no_items(smol: HFScorer, items: list[Item]) -> None:
    bare = Task(name="bare", instruction="", classes=("negative", "positive"), answer_key="Label")
    assert smol.bos is None  # SmolLM2's GGUF adds no BOS, so the prefix is truly empty
    batch = items[:4]
    np.testing.assert_allclose(smol.score(bare, batch, progress=False),
                               _naive(smol, bare, batch, []), atol=TOL, rtol=0)
    assert smol.score(bare, [], progress=False).shape == (0, 2)


def test_full_sequence_multi_token_labels(smol: HFScorer, items: list[Item]) -> None:
    task = Task(name="multi", instruction="Is this review glowing or scathing?\n",
                classes=("scathing", "glowing"), answer_key="Verdict")
    smol.full_sequence = True
    try:
        labels = smol.label_tokens(task)
        assert labels.multi_token
        examples, batch = items[:4], items[30:33]
        reuse = smol.score(task, batch, examples, progress=False)
        naive = _naive(smol, task, batch, examples)
        ids = smol.prompt_ids(task, batch[0], examples)
        # Independent reference: full-vocabulary log-probs token by token, summed.
        seq_lp = []
        for seq in labels.sequences:
            total = 0.0
            for t, tok in enumerate(seq):
                logits = smol.full_logits(ids + list(seq[:t]))
                total += float(logits[tok] - np.logaddexp.reduce(logits))
            seq_lp.append(total)
    finally:
        smol.full_sequence = False
    np.testing.assert_allclose(reuse, naive, atol=TOL, rtol=0)
    ref = np.array(seq_lp) - np.logaddexp.reduce(seq_lp)
    np.testing.assert_allclose(reuse[0], ref, atol=TOL, rtol=0)
    np.testing.assert_allclose(np.logaddexp.reduce(reuse, axis=1), 0.0, atol=1e-12)


# -- agreement with llama.cpp ---------------------------------------------------------


@pytest.mark.parametrize("name", ["smollm2-135m", "gemma3-270m"])
def test_agrees_with_llamacpp(name: str, request: pytest.FixtureRequest, task: Task,
                              items: list[Item]) -> None:
    llamacpp = pytest.importorskip("activetest.models.llamacpp")
    pytest.importorskip("llama_cpp")
    hf: HFScorer = request.getfixturevalue("smol" if name.startswith("smollm2") else "gemma")
    ll = llamacpp.LlamaCppScorer(name, n_ctx=2048, n_threads=THREADS)
    try:
        examples, batch = items[:16], items[40:64]
        assert hf.bos == ll.bos
        assert hf.prompt_ids(task, batch[0], examples) == ll.prompt_ids(task, batch[0], examples)
        a = hf.score(task, batch, examples, progress=False)
        b = ll.score(task, batch, examples, progress=False)
    finally:
        ll.close()
    diff = np.abs(a - b)
    assert diff.mean() < LLAMA_MEAN_TOL, diff.mean()
    assert diff.max() < LLAMA_MAX_TOL, diff.max()
    assert (a.argmax(1) == b.argmax(1)).mean() >= LLAMA_AGREE_MIN


# -- conversion cache -----------------------------------------------------------------


def test_conversion_cache_is_written_and_reused(smol: HFScorer, smol_cache: Path,
                                                task: Task, items: list[Item]) -> None:
    gguf = bundled_model_path("smollm2-135m")
    target = converted_dir(gguf, smol_cache)
    assert smol.converted_path == target
    assert smol.loaded_from == gguf  # the module fixture converted from the GGUF itself
    for name in (CONVERTED_MARKER, "config.json", "model.safetensors", "tokenizer.json"):
        assert (target / name).is_file(), name
    stamp = (target / "model.safetensors").stat().st_mtime_ns
    again = HFScorer("smollm2-135m", cache_dir=smol_cache, n_threads=THREADS)
    assert again.loaded_from == target  # read from the safetensors copy, not the GGUF
    assert (target / "model.safetensors").stat().st_mtime_ns == stamp  # not rewritten
    examples, batch = items[:4], items[50:52]
    np.testing.assert_array_equal(again.score(task, batch, examples, progress=False),
                                  smol.score(task, batch, examples, progress=False))


def test_conversion_cache_key_follows_size_and_mtime(tmp_path: Path) -> None:
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + bytes(60))
    first = converted_dir(f, tmp_path)
    assert first == converted_dir(f, tmp_path)
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert converted_dir(f, tmp_path) != first
    f.write_bytes(b"GGUF" + bytes(61))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert converted_dir(f, tmp_path) != first


# -- bad input ------------------------------------------------------------------------


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="dtype"):
        HFScorer("smollm2-135m", dtype="float8")
    with pytest.raises(ValueError, match="batch_size"):
        HFScorer("smollm2-135m", batch_size=0)
    with pytest.raises(ValueError, match="n_threads"):
        HFScorer("smollm2-135m", n_threads=0)
    with pytest.raises(ModelNotFoundError, match="no-such-model"):
        HFScorer("./no-such-model.gguf")


def test_missing_field_names_item(smol: HFScorer, task: Task) -> None:
    with pytest.raises(ValueError, match="'broken'"):
        smol.score(task, [Item("broken", {"txt": "oops"})], progress=False)


# -- a model folder of one's own --------------------------------------------------------


def _tiny_folder(folder: Path, tok: object, seed: int, max_positions: int = 2048) -> Path:
    """A tiny real Llama (random weights, seed ``seed``) with SmolLM2's tokenizer, saved as
    a Hugging Face model folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,  # type: ignore[arg-type]
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=max_positions,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)  # type: ignore[attr-defined]
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)  # type: ignore[attr-defined]
    return folder


def test_folder_cache_key_follows_weights_overwritten_in_place(
        tmp_path: Path, smol: HFScorer, task: Task, items: list[Item]) -> None:
    """QA: new weights copied over ``model.safetensors`` left the folder's size and mtime
    as they were, and the score cache handed back the old weights' scores."""
    import shutil

    from activetest.models.cache import CachedScorer

    folder = _tiny_folder(tmp_path / "mine", smol._tok, seed=0)
    other = _tiny_folder(tmp_path / "other", smol._tok, seed=1)
    cache = tmp_path / "cache"
    first = CachedScorer(HFScorer(str(folder), n_threads=THREADS), cache)
    old = first.score(task, items[:4], progress=False)
    shutil.copyfile(other / "model.safetensors", folder / "model.safetensors")
    again = CachedScorer(HFScorer(str(folder), n_threads=THREADS), cache)
    new = again.score(task, items[:4], progress=False)
    assert again.hits == 0
    fresh = HFScorer(str(folder), n_threads=THREADS).score(task, items[:4], progress=False)
    np.testing.assert_allclose(new, fresh, atol=TOL)
    assert np.abs(new - old).max() > 1e-3


def test_prompt_longer_than_the_context_window_is_refused(
        tmp_path: Path, smol: HFScorer, task: Task) -> None:
    """QA: the hf backend scored a prompt past max_position_embeddings without a word
    (llama.cpp refuses it): refused before the model runs, naming item, length, limit."""
    from activetest.models import ContextOverflowError

    scorer = HFScorer(str(_tiny_folder(tmp_path / "short", smol._tok, seed=0, max_positions=64)),
                      n_threads=THREADS)
    assert scorer.max_length == 64
    short, long = Item("short", {"text": "Fine."}), Item("long", {"text": "Good food. " * 40})
    assert scorer.score(task, [short], progress=False).shape == (1, task.n_classes)
    n = len(scorer.prompt_ids(task, long))
    with pytest.raises(ContextOverflowError,
                       match=rf"model 'short': item 'long': prompt is {n} tokens .* context "
                             rf"window of 64 tokens") as info:
        scorer.score(task, [short, long], progress=False)
    assert "truncate" not in str(info.value)  # no option this backend does not have
