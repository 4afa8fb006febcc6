"""Runs of one model with other stated settings are named apart (formats/run_settings.py)."""

from __future__ import annotations

from activetest.formats.run_settings import (
    inspect_settings,
    name_apart,
    row_settings,
    settings_base,
)


def test_inspect_settings_read_the_plan_generation_and_task_args() -> None:
    header = {"plan": {"steps": [
        {"solver": "system_message", "params_passed": {"template": "Be terse."}},
        {"solver": "generate", "params_passed": {}}],
        "config": {"temperature": 0.0, "max_tokens": 6, "max_connections": 2}},
        "eval": {"task_args": {"shots": 3}}}
    got = inspect_settings(header)
    assert got == {"plan": "system_message(template='Be terse.') > generate()",
                   "temperature": "0.0", "max_tokens": "6", "task_args": "shots=3"}
    assert inspect_settings({}) == {}


def test_name_apart_names_only_a_models_runs_whose_settings_differ() -> None:
    names = {0: "m", 1: "m", 2: "m", 3: "other", 4: "other"}
    settings = {0: {"n-shot": "1"}, 1: {"n-shot": "3"}, 2: {"n-shot": "3"},
                3: {"n-shot": "0"}, 4: {"n-shot": "0"}}
    out, notes = name_apart(names, settings)
    # the 3-shot runs (a partial run and the rest) stay one row; 'other' agrees: unchanged
    assert out == {0: "m [n-shot=1]", 1: "m [n-shot=3]", 2: "m [n-shot=3]", 3: "other",
                   4: "other"}
    assert len(notes) == 1 and "'m [n-shot=1]', 'm [n-shot=3]'" in notes[0]
    out, _ = name_apart({0: "m", 1: "m"}, {0: {"plan": "x" * 80}, 1: {}})
    assert out[1] == "m [plan=not stated]" and len(out[0]) < 70 and "#" in out[0]
    assert settings_base(out[0]) == "m" and settings_base("m") == "m"


def test_row_settings_read_back_what_name_apart_wrote() -> None:
    """The settings a row's name states, read back as :func:`name_apart` wrote them (what
    an lm-eval import compares with the target's, as init does): a plan with commas inside
    its brackets stays one value; "not stated" is no setting; no brackets, none."""
    runs = {1: {"n-shot": "0"}, 2: {"n-shot": "3"}, 3: {}}
    names, _ = name_apart({k: "org/m" for k in runs}, runs)
    assert [row_settings(names[k]) for k in (1, 2, 3)] == [{"n-shot": "0"}, {"n-shot": "3"},
                                                          {}]
    plans = {1: {"plan": "generate(a=1, b='x, y')", "temperature": "0.5"},
             2: {"plan": "generate()", "temperature": "0"}}
    names, _ = name_apart({k: "m" for k in plans}, plans)
    assert [row_settings(names[k]) for k in (1, 2)] == [plans[1], plans[2]]
    assert row_settings("org/m") == {} and row_settings("m [checkpoint]") == {}
