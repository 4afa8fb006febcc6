"""Unit tests of the creation room's option checks and of model specs as stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from activetest.session.compare_graded import compare_role, compared_specs, same_answer
from activetest.session.config import SessionConfig
from activetest.session.create import check_options, planned_budget
from activetest.session.scoring import normalise_spec, stored_spec

OK = {"metric": "log_loss", "acquisition": None, "proposal_floor": 0.1, "noise_rule": "any",
      "level": 0.95, "n_boot": 1000, "seed": 3}


def test_check_options_fills_the_defaults() -> None:
    assert check_options(**OK) == ("adaptive", 3)
    assert check_options(**{**OK, "acquisition": "ce"}) == ("ce", 3)
    acquisition, seed = check_options(**{**OK, "seed": None})  # fresh entropy
    assert acquisition == "adaptive" and 0 <= seed < 2**63


@pytest.mark.parametrize(("change", "message"), [
    ({"metric": "accuracy"}, "metric must be one of log_loss, error_rate, both, got 'accuracy'"),
    ({"acquisition": "graded_fixed"}, "(graded_fixed is for graded tasks"),
    ({"proposal_floor": 0}, "the proposal floor (alpha) must be in (0, 1], got 0"),
    ({"noise_rule": "some"}, "noise_rule must be 'any' or 'all', got 'some'"),
    ({"level": 1.0}, "level must be a coverage in (0, 1), e.g. 0.95, got 1.0"),
    ({"n_boot": 1}, "n_boot must be a whole number of bootstrap resamples, 2 or more "
                    "(e.g. 1000), got 1"),
    ({"seed": -1}, "seed must be an integer in 0..2**63-1, or None (left out) for fresh "
                   "entropy; got -1"),
    # the type before the range: a string is refused, not compared (a TypeError was)
    ({"level": "0.9"}, "level must be a coverage in (0, 1), e.g. 0.95, got '0.9'"),
    ({"level": True}, "level must be a coverage in (0, 1), e.g. 0.95, got True"),
    ({"n_boot": "100"}, "n_boot must be a whole number of bootstrap resamples, 2 or more "
                        "(e.g. 1000), got '100'"),
    # a float is refused, not truncated (10.5 was stored as 10 resamples)
    ({"n_boot": 10.5}, "got 10.5"),
    ({"n_boot": 100.0}, "got 100.0"),
    ({"n_boot": True}, "got True"),
    ({"n_boot": 10**7}, "n_boot must be <= 1,000,000"),
])
def test_check_options_messages(change: dict, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        check_options(**{**OK, **change})
    assert message in str(exc.value)


def test_numpy_numbers_are_options_too() -> None:
    assert check_options(**{**OK, "n_boot": np.int64(200), "level": np.float32(0.9)}) \
        == ("adaptive", 3)


def test_planned_budget_takes_any_integer_and_nothing_else() -> None:
    assert planned_budget(np.int64(300), 500) == 300  # it was refused (QA)
    assert planned_budget(np.int32(10), 500) == 10 and planned_budget(None, 500) == 250
    for bad in (True, np.True_, 300.0, "300", 0, 501):
        with pytest.raises(ValueError, match="must be a whole number of labels from 1 to "
                                             "the pool's 500 items"):
            planned_budget(bad, 500)


def test_specs_as_stored(tmp_path: Path) -> None:
    table = tmp_path / "preds.csv"
    table.write_text("id,negative,positive\n", encoding="utf-8")
    assert normalise_spec(f"table:{table}") == f"table:{table.resolve()}"
    assert normalise_spec("smollm2-135m") == "smollm2-135m"  # a name, not a file
    assert stored_spec("smollm2-135m") == "smollm2-135m"


def test_compared_targets_of_a_graded_config() -> None:
    base = {"task": {}, "surrogate": "s", "target": "t", "metric": "error_rate",
            "acquisition": "graded_fixed", "seed": 0, "kind": "graded"}
    config = SessionConfig.from_dict({**base, "compare": ["a.jsonl", "b.jsonl"]})
    assert compared_specs(config) == ["a.jsonl", "b.jsonl"]
    assert compared_specs(SessionConfig.from_dict(base)) == []
    assert compare_role("a.jsonl") == "compare:a.jsonl"
    assert same_answer(" Paris ", "Paris")
    assert not same_answer("Paris", "Lyon")
    assert not same_answer("paris", "Paris")  # case kept
