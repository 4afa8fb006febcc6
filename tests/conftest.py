"""The test run's activetest cache folder: a temporary one, so that the suite leaves no
record on this machine.

Without it every test that stores a session with a prediction table wrote where that
table was into the user's ``~/.cache/activetest/files.json`` (the index
:func:`activetest.session.spec_files.locate` reads first): hundreds of paths under
``/tmp`` after one run, and a later test (or the user) could find a file by a test's
record. Each pytest process (each xdist worker too) gets its own folder as
``$ACTIVETEST_CACHE``, removed at its end. Its subfolders that hold what is costly to
make again and is keyed by content (the joined bundled model in ``models/``, converted
Hugging Face models in ``hf/``, the score and answer caches) are links to the real cache's,
so the tests read and fill those as before; only the top level (``files.json``) is the
run's own. Tests that need a cache of their own still set ``ACTIVETEST_CACHE`` themselves.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: The environment variable naming the real cache folder during a test run (read by the
#: tests that check the run leaves it alone; set once, so xdist workers, which inherit
#: the controller's temporary ``ACTIVETEST_CACHE``, keep the real one).
REAL_CACHE_ENV = "ACTIVETEST_TESTS_REAL_CACHE"
#: The real cache's subfolders the run shares (each keyed by content; see module docstring).
SHARED = ("models", "hf", "scores", "answers")

_made: list[str] = []


def real_cache_dir() -> Path:
    """The user's activetest cache folder, as it was before this run set its own."""
    return Path(os.environ[REAL_CACHE_ENV])


def pytest_configure(config: pytest.Config) -> None:
    """Point ``$ACTIVETEST_CACHE`` at a fresh folder linking the real cache's shared parts."""
    from activetest._tmpfiles import default_cache_dir

    if REAL_CACHE_ENV not in os.environ:
        os.environ[REAL_CACHE_ENV] = str(default_cache_dir())
    real = real_cache_dir()
    run = tempfile.mkdtemp(prefix="activetest-tests-cache-")
    _made.append(run)
    for name in SHARED:
        with_it = real / name
        try:
            with_it.mkdir(parents=True, exist_ok=True)
        except OSError:  # a real cache that cannot be written: the run's own folder
            continue
        os.symlink(with_it, Path(run) / name, target_is_directory=True)
    os.environ["ACTIVETEST_CACHE"] = run


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove this process's cache folder (the links only, never what they point to)."""
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)


def _hypothesis_profile() -> None:
    """Hypothesis's health check that data generation is "too slow" fails a property test
    on a loaded CI machine (2 cores, two xdist workers and their servers) for no fault
    of the code: it is suppressed for the whole run; each test's own settings (examples,
    no deadline) still apply."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # (hypothesis comes with the dev extra)
        return
    settings.register_profile("activetest", suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("activetest")


_hypothesis_profile()
