"""Shared data for the model tests: a small hand-written sentiment task.

Model fixtures are module-scoped (each module that uses one loads its model, or starts
its server, once); this file holds the data fixtures, the skip helper and the bundled
SmolLM2 GGUF with its llama-cpp-python server (``gguf``, ``server``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.lmeval_harness import lmeval_files  # noqa: F401 - a fixture for this folder

from activetest.data.task import Item, Task

SENTIMENT = Task(
    name="toy-sentiment",
    instruction='Classify the sentiment of the following sentence as "positive" or "negative". '
                'Respond with "positive" or "negative".\n',
    classes=("negative", "positive"),
    answer_key="Answer",
)

# In-context examples (alternating labels, fixed order); long enough that 40 of them
# make a prefix of more than 512 tokens (Gemma 3's sliding-window size).
_EXAMPLES = [
    ("I loved every minute of this film, the acting was superb and the story moving.", 1),
    ("The food was cold, the waiter was rude and we waited an hour for the bill.", 0),
    ("What a delightful surprise: the hotel staff upgraded our room for free.", 1),
    ("This phone broke after two days and customer support never answered my emails.", 0),
    ("The concert was fantastic and the band played all of my favourite songs.", 1),
    ("The plot made no sense and I nearly fell asleep halfway through the movie.", 0),
    ("Our new puppy is adorable and has brought so much joy to the whole family.", 1),
    ("The package arrived damaged and half of the items were missing entirely.", 0),
    ("She gave a brilliant, inspiring speech that everyone applauded for minutes.", 1),
    ("The hike was miserable: it rained all day and the trail was pure mud.", 0),
    ("This is the best pizza I have ever eaten, crisp, fresh and full of flavour.", 1),
    ("The software update deleted my files and now the laptop will not start.", 0),
    ("The teacher was kind and patient, and my daughter finally enjoys maths.", 1),
    ("I regret buying these shoes; they hurt my feet and fell apart in a week.", 0),
    ("The garden looks beautiful this spring, full of colourful flowers and birds.", 1),
    ("The train was late again, overcrowded and dirty, a truly awful commute.", 0),
    ("We had a wonderful holiday with sunny weather and lovely, friendly people.", 1),
    ("The book was dull, repetitive and far too long for such a thin story.", 0),
    ("Thank you so much for your help, you made my day a lot easier and happier.", 1),
    ("The noise from the construction site kept us awake all night, terrible.", 0),
    ("The new café downtown serves excellent coffee and the pastries are divine.", 1),
    ("My flight was cancelled and the airline refused to refund the ticket.", 0),
    ("The museum exhibition was fascinating and beautifully put together.", 1),
    ("The hotel room smelled of smoke and the sheets were stained and torn.", 0),
    ("He is a generous, funny friend who always makes everyone feel welcome.", 1),
    ("The repair cost twice the quote and the car still makes the same noise.", 0),
    ("The children had a great time at the park and laughed all afternoon.", 1),
    ("The meeting was a complete waste of time and nothing was decided.", 0),
    ("This album is a masterpiece; every track is catchy, warm and heartfelt.", 1),
    ("The apartment was tiny, overpriced and the landlord ignored every complaint.", 0),
    ("I am thrilled with the results, the team did an outstanding job.", 1),
    ("The soup was bland, the bread stale, and the dessert never arrived.", 0),
    ("The sunset over the lake was breathtaking and the evening perfectly calm.", 1),
    ("The game crashed constantly and I lost hours of progress, so frustrating.", 0),
    ("The nurses were caring and attentive, and I felt safe the whole time.", 1),
    ("The instructions were confusing and the furniture pieces did not fit.", 0),
    ("What a lovely wedding, the music, the food and the speeches were perfect.", 1),
    ("The service was slow, the prices high, and the staff plainly indifferent.", 0),
    ("My grandmother's cake recipe is wonderful, moist, rich and so comforting.", 1),
    ("The traffic jam lasted three hours and ruined the start of our trip.", 0),
]
EXAMPLES = [Item(f"ex{i}", {"text": t}, y) for i, (t, y) in enumerate(_EXAMPLES)]

_TEST = [
    ("This movie was wonderful and I enjoyed it very much.", 1),
    ("The service was terrible and the food was disgusting.", 0),
    ("I am so happy with my new bike, it rides beautifully.", 1),
    ("The battery died after an hour, what a useless gadget.", 0),
    ("A charming, funny and heartwarming story for all ages.", 1),
    ("The worst hotel I have ever stayed in, dirty and loud.", 0),
    ("The staff were friendly and the room was spotless.", 1),
    ("I hated the ending; it was boring and predictable.", 0),
    ("Great value for money, I would definitely buy it again.", 1),
    ("The product arrived broken and the seller ignored me.", 0),
    ("An excellent performance by a truly gifted actress.", 1),
    ("The lecture was dull and far too long.", 0),
    ("We had a fantastic dinner with delicious food and great wine.", 1),
    ("My order was wrong, cold and very late.", 0),
    ("The view from the top of the mountain was amazing.", 1),
    ("This is a poorly written, painfully boring novel.", 0),
    ("I love this song, it always puts me in a good mood.", 1),
    ("The printer jams every time, I am so annoyed.", 0),
    ("Such a beautiful day, the park was lovely and peaceful.", 1),
    ("The customer service was rude and completely unhelpful.", 0),
]
TEST_ITEMS = [Item(f"t{i}", {"text": t}, y) for i, (t, y) in enumerate(_TEST)]


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"bundled model package {module!r} is not installed")
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")


@pytest.fixture(scope="session")
def require_package() -> Callable[[str], None]:
    """``require_package(module)`` skips the test when a model package is missing."""
    return _require


@pytest.fixture(scope="session")
def sentiment_task() -> Task:
    """A binary sentiment task with the paper's prompt structure."""
    return SENTIMENT


@pytest.fixture(scope="session")
def icl_examples() -> list[Item]:
    """40 labelled in-context examples, alternating classes."""
    return list(EXAMPLES)


@pytest.fixture(scope="session")
def sentiment_items() -> list[Item]:
    """20 easy labelled sentiment items (10 per class)."""
    return list(TEST_ITEMS)


@pytest.fixture(scope="module")
def gguf() -> Path:
    """The bundled SmolLM2-135M GGUF (skips where it is not installed)."""
    bundled = pytest.importorskip("activetest.models.bundled")
    try:
        return Path(bundled.bundled_model_path("smollm2-135m"))
    except Exception as exc:  # not installed in this environment
        pytest.skip(f"bundled SmolLM2 not available: {exc}")


@pytest.fixture(scope="module")
def server(gguf: Path) -> Iterator[str]:
    """A real llama-cpp-python server on :func:`gguf` (n_ctx 512, one thread), one per
    module that uses it: its ``/v1`` base URL."""
    pytest.importorskip("llama_cpp.server")
    # (imported here: tests/experiments/test_dynamic.py imports this file as a module,
    # before pytest has put tests/models on sys.path)
    from tests.models.server import llama_server

    with llama_server(gguf, n_ctx=512, n_threads=1) as url:
        yield url
