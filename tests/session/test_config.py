"""SessionConfig: every stored shape reads, writes back unchanged, and bad ones say why."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from activetest.session.config import ACQUISITIONS, ConfigError, SessionConfig, acquisition

OLD = Path(__file__).parent / "data" / "old"


def stored_configs() -> dict[str, dict]:
    """The configs of the committed session files of schemas 1-3 (read-only)."""
    out = {}
    for p in sorted(OLD.glob("schema*.db")):
        con = sqlite3.connect(f"file:{p}?immutable=1", uri=True)
        try:
            (raw,) = con.execute("SELECT json FROM config WHERE id = 1").fetchone()
        finally:
            con.close()
        out[p.stem] = json.loads(raw)
    return out


CONFIGS = stored_configs()


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_stored_shape_round_trips(name: str) -> None:
    d = CONFIGS[name]
    cfg = SessionConfig.from_dict(d)
    assert cfg.to_dict() == d
    assert json.dumps(cfg.to_dict(), sort_keys=True) == json.dumps(d, sort_keys=True)
    assert cfg.graded == name.endswith(("graded", "graded_compare"))
    assert cfg.proposal_floor == d["alpha"] and cfg.level == d["level"]
    assert cfg.adaptive == ("adaptive" in name or cfg.acquisition == "graded_fixed")


def test_derived_properties() -> None:
    base = CONFIGS["schema3_adaptive_both"]
    cfg = SessionConfig.from_dict(base)
    assert cfg.design == "calibrated" and cfg.needs_target and cfg.metrics == (
        "log_loss", "error_rate")
    pe = SessionConfig.from_dict({**base, "acquisition": "pe_adaptive", "metric": "error_rate"})
    assert pe.design == "pe" and not pe.needs_target and pe.design_loss == "zero_one"
    ce = SessionConfig.from_dict({**base, "acquisition": "ce", "metric": "log_loss"})
    assert not ce.adaptive and ce.design is None and ce.design_metric == "log_loss"


def test_unknown_keys_are_kept() -> None:
    d = {**CONFIGS["schema1_ce_both"], "written_by_a_newer_version": [1, 2]}
    assert SessionConfig.from_dict(d).to_dict() == d


@pytest.mark.parametrize(("change", "words"), [
    ({"metric": "accuracy"}, "metric"),
    ({"acquisition": "best"}, "unknown acquisition"),
    ({"alpha": 0}, "proposal floor"),
    ({"level": 1.5}, "level"),
    ({"seed": -1}, "seed"),
    ({"seed": "7"}, "seed"),
    ({"n_boot": 1}, "n_boot"),
    ({"noise": "loud"}, "noise"),
    ({"compare": "answers:x"}, "compare"),
    ({"pool": []}, "pool"),
])
def test_bad_values_are_named(change: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        SessionConfig.from_dict({**CONFIGS["schema2_adaptive_log"], **change})


@pytest.mark.parametrize("bad", [{}, [], "x", None, {"task": {}, "surrogate": "s"}])
def test_missing_keys_are_named(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"lacks|not a JSON object"):
        SessionConfig.from_dict(bad)


def test_one_list_of_acquisitions() -> None:
    from activetest.session.records import ACQUISITION_CHOICES, ADAPTIVE_ACQUISITIONS

    assert set(ACQUISITION_CHOICES) <= set(ACQUISITIONS)
    for name, design in ADAPTIVE_ACQUISITIONS.items():
        assert acquisition(name).design == design
    with pytest.raises(ConfigError, match="expected one of"):
        acquisition("nope")


def test_the_two_metric_variant_and_answer_files_are_attributes() -> None:
    both = SessionConfig.from_dict(CONFIGS["schema3_adaptive_both"])
    assert both.design_variant == CONFIGS["schema3_adaptive_both"].get("design")
    d = {**CONFIGS["schema3_adaptive_both"], "design": "calibrated-both"}
    cfg = SessionConfig.from_dict(d)
    assert cfg.design == "calibrated-both" and cfg.design_metrics == ("log_loss", "error_rate")
    assert "design" not in cfg.extra and cfg.to_dict() == d
    plain = {k: v for k, v in d.items() if k != "design"}
    cfg = SessionConfig.from_dict(plain)
    assert cfg.design_variant is None and "design" not in cfg.to_dict()
    assert cfg.design == "calibrated" and cfg.design_metrics == ("log_loss",)
    graded = CONFIGS["schema3_graded_compare"]
    g = SessionConfig.from_dict(graded)
    assert g.answer_files == graded.get("answer_files") and "answer_files" not in g.extra
    assert g.to_dict() == graded
    for name, d in CONFIGS.items():  # nothing the code reads is left in extra
        assert not SessionConfig.from_dict(d).extra, name


def test_a_config_without_target_shots_means_as_many_as_the_surrogate() -> None:
    d = {k: v for k, v in CONFIGS["schema1_ce_both"].items() if k != "target_shots"}
    d["shots"] = 4
    cfg = SessionConfig.from_dict(d)
    assert cfg.target_shots is None and cfg.target_examples == 4
    assert cfg.to_dict() == d  # and nothing is added when written back
    assert SessionConfig.from_dict({**d, "target_shots": 0}).target_examples == 0


def test_label_scoring_is_a_config_key_read_as_first_token_where_absent() -> None:
    """``init --label-scoring``: stored as ``label_scoring``; a file from before it reads as
    first-token (the only way it was scored) and is written back without the key."""
    from activetest.models.labels import LABEL_SCORING_MODES
    from activetest.session.config import LABEL_SCORING

    assert LABEL_SCORING == LABEL_SCORING_MODES  # the two layers name the same modes
    base = {"task": {}, "surrogate": "s", "target": "t", "metric": "log_loss",
            "acquisition": "ce", "seed": 0}
    old = SessionConfig.from_dict(base)
    assert old.label_scoring is None and old.label_scoring_mode == "first-token"
    assert "label_scoring" not in old.to_dict()
    for mode in LABEL_SCORING:
        cfg = SessionConfig.from_dict({**base, "label_scoring": mode})
        assert cfg.label_scoring_mode == mode and cfg.to_dict()["label_scoring"] == mode
    for bad in ("whole-word", 1, True):
        with pytest.raises(ConfigError, match="label_scoring"):
            SessionConfig.from_dict({**base, "label_scoring": bad})
