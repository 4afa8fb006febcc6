"""Runs of one model with other stated settings are named apart (formats/run_settings.py)."""

from __future__ import annotations

from activetest.formats.run_settings import inspect_settings, name_apart, settings_base


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
