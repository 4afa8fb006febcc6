"""Estimates as Every Eval Ever aggregate records, checked against the real schema.

The schema (``data/eee/eval.schema.json``, Every Eval Ever 0.3.0, MIT; see the
README there) validates every record through ``jsonschema``; our own
:func:`check_eee_aggregate` must agree with it on valid records and on broken
ones. With ``ACTIVETEST_EEE_PYTHON`` naming a Python that has ``every-eval-ever``
installed, Every Eval Ever's own validator checks the records too.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import activetest
from activetest.session.eee import (
    EEE_SCHEMA_VERSION,
    KNOWN_METRICS,
    check_eee_aggregate,
    eee_aggregate,
    eee_datastore_path,
)

SCHEMA_PATH = Path(__file__).parent / "data" / "eee" / "eval.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))

BASE: dict[str, Any] = {
    "metric": "risk", "estimate": 0.231, "ci_low": 0.18, "ci_high": 0.29, "level": 0.95,
    "standard_error": 0.027, "method": "LURE + bootstrap", "n_labels": 200, "pool_size": 2000,
    "model": "smollm2-135m", "model_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
    "dataset": "squad", "evaluated_at": "2026-12-01T10:00:00Z",
    "retrieved_at": 1796119800.5, "n_bootstrap": 2000,
}


def _schema_errors(record: Any) -> list[str] | None:
    """The real schema's complaints about ``record`` (None: jsonschema is not installed)."""
    try:
        import jsonschema
    except ImportError:
        return None
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(record)]


def _roundtrip(record: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(record, allow_nan=False))
    return out


def test_the_schema_accepts_what_we_write() -> None:
    if _schema_errors({}) is None:
        pytest.skip("jsonschema not installed")
    assert _schema_errors(eee_aggregate(**BASE)) == []
    assert _schema_errors({})  # and it does reject


def test_schema_is_the_vendored_0_3_0() -> None:
    assert SCHEMA["version"] == EEE_SCHEMA_VERSION == "0.3.0"
    assert set(SCHEMA["required"]) == {"schema_version", "evaluation_id", "retrieved_timestamp",
                                       "source_metadata", "model_info", "eval_library",
                                       "evaluation_results"}


def test_a_lure_estimate_as_an_eee_record() -> None:
    rec = _roundtrip(eee_aggregate(**BASE))
    assert _schema_errors(rec) in (None, []) and check_eee_aggregate(rec) == []
    assert rec["schema_version"] == "0.3.0"
    assert rec["retrieved_timestamp"] == "1796119800.5"
    when = datetime(2026, 12, 1, 10, tzinfo=timezone.utc).timestamp()
    assert float(rec["evaluation_timestamp"]) == when
    assert rec["evaluation_id"] == "squad/HuggingFaceTB/SmolLM2-135M-Instruct/1796119800.5"
    assert rec["eval_library"] == {"name": "activetest", "version": activetest.__version__,
                                   "additional_details": {"method": "LURE + bootstrap"}}
    assert rec["model_info"]["developer"] == "HuggingFaceTB"
    assert rec["model_info"]["name"] == "smollm2-135m"
    (res,) = rec["evaluation_results"]
    assert res["evaluation_name"] == "squad"
    assert res["source_data"] == {"dataset_name": "squad", "source_type": "other",
                                  "additional_details": {"pool_size": "2000"}}
    mc = res["metric_config"]
    assert mc["lower_is_better"] is True and mc["score_type"] == "continuous"
    assert (mc["min_score"], mc["max_score"]) == (0.0, 1.0)
    sd = res["score_details"]
    assert sd["score"] == 0.231
    unc = sd["uncertainty"]
    # the uncertainty method is named where EEE readers look for it
    assert unc["standard_error"] == {"value": 0.027, "method": "LURE + bootstrap"}
    assert unc["confidence_interval"] == {"lower": 0.18, "upper": 0.29,
                                          "confidence_level": 0.95,
                                          "method": "LURE + bootstrap"}
    assert unc["num_samples"] == 200 and unc["num_bootstrap_samples"] == 2000
    assert sd["details"]["estimator"] == "LURE + bootstrap"
    assert sd["details"]["labels"] == "200" and sd["details"]["pool_size"] == "2000"
    assert sd["details"]["labelled_fraction"] == "0.1"


@pytest.mark.parametrize("metric", sorted(KNOWN_METRICS))
def test_every_known_metric_validates(metric: str) -> None:
    rec = _roundtrip(eee_aggregate(**{**BASE, "metric": metric}))
    assert _schema_errors(rec) in (None, []) and check_eee_aggregate(rec) == []
    mc = rec["evaluation_results"][0]["metric_config"]
    assert mc["lower_is_better"] is KNOWN_METRICS[metric][0]
    if metric == "log_loss":
        assert mc["max_score"] == "Infinity" and mc["metric_unit"] == "nats"


def test_options_validate() -> None:
    variants = [
        {"ci_low": None, "ci_high": None, "level": None},  # no interval
        {"standard_error": None, "n_bootstrap": None},
        {"level": None},
        {"hf_repo": "rajpurkar/squad", "hf_split": "validation"},
        {"dataset_url": "https://example.org/pool.csv"},
        {"metric": "judge_score", "lower_is_better": False, "min_score": 0, "max_score": 10,
         "metric_unit": "points", "description": "a judge's 0-10 grade"},
        {"interval_method": "percentile bootstrap of LURE", "source_organization": "ACME",
         "evaluator_relationship": "first_party", "deployment_type": "self_deployed",
         "model_availability": "open_weights", "details": {"seed": 3, "acquisition": "ce"}},
        {"model_id": None, "model": "a local file.gguf"},
        {"evaluated_at": datetime(2026, 1, 2, tzinfo=timezone(timedelta(hours=2))),
         "retrieved_at": None, "evaluation_id": "my-run-1"},
    ]
    for change in variants:
        rec = _roundtrip(eee_aggregate(**{**BASE, **change}))
        assert _schema_errors(rec) in (None, []), change
        assert check_eee_aggregate(rec) == [], change
    rec = eee_aggregate(**{**BASE, "hf_repo": "rajpurkar/squad"})
    assert rec["evaluation_results"][0]["source_data"]["samples_number"] == 2000
    rec = eee_aggregate(**{**BASE, "model_id": None, "model": "a local file.gguf"})
    assert rec["model_info"]["id"] == "a local file.gguf"
    assert rec["model_info"]["developer"] == "unknown"
    rec = eee_aggregate(**{**BASE, "details": {"seed": 3}})
    assert rec["evaluation_results"][0]["score_details"]["details"]["seed"] == "3"


@pytest.mark.parametrize(("change", "message"), [
    ({"estimate": math.nan}, r"estimate must be finite"),
    ({"estimate": "0.2"}, r"estimate must be a number"),
    ({"ci_low": 0.3, "ci_high": 0.2}, r"ci_low 0.3 is above ci_high 0.2"),
    ({"ci_high": None}, r"give both ci_low and ci_high"),
    ({"ci_low": None, "ci_high": None}, r"level given without ci_low"),
    ({"level": 1.0}, r"level must lie strictly between 0 and 1"),
    ({"level": 95}, r"level must lie in \[0.0, 1.0\]"),
    ({"standard_error": -0.1}, r"standard_error must lie in"),
    ({"n_labels": 0}, r"n_labels must be an integer >= 1"),
    ({"n_labels": 2001}, r"n_labels 2001 exceeds pool_size 2000"),
    ({"pool_size": 10.0}, r"pool_size must be an integer"),
    ({"n_bootstrap": True}, r"n_bootstrap must be an integer"),
    ({"method": " "}, r"method must be a non-empty string"),
    ({"metric": "bleu"}, r"metric 'bleu' is not one of .*give lower_is_better"),
    ({"evaluator_relationship": "friend"}, r"evaluator_relationship must be one of"),
    ({"deployment_type": "cloud"}, r"deployment_type must be one of"),
    ({"model_availability": "open"}, r"model_availability must be one of"),
    ({"evaluated_at": datetime(2026, 1, 1)}, r"evaluated_at: a datetime needs a time zone"),
    ({"evaluated_at": "yesterday"}, r"evaluated_at: 'yesterday' is neither Unix seconds"),
    ({"retrieved_at": -5}, r"retrieved_at: -5 is not a Unix time"),
    ({"min_score": "Inf", "metric": "x", "lower_is_better": True, "max_score": 1},
     r"min_score must be a number"),
])
def test_bad_estimates_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        eee_aggregate(**{**BASE, **change})


def _mutations(rec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Broken copies of a valid record, each named."""
    out: list[tuple[str, dict[str, Any]]] = []

    def edit(name: str, fn: Any) -> None:
        r = copy.deepcopy(rec)
        fn(r)
        out.append((name, r))

    res = "evaluation_results"
    for key in ("schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata",
                "model_info", "eval_library", "evaluation_results"):
        edit(f"no {key}", lambda r, k=key: r.pop(k))
    edit("extra top-level field", lambda r: r.update(estimate=0.2))
    edit("timestamp as a number", lambda r: r.update(retrieved_timestamp=1.5))
    edit("bad source type", lambda r: r["source_metadata"].update(source_type="paper"))
    edit("bad relationship", lambda r: r["source_metadata"].update(evaluator_relationship="x"))
    edit("no org", lambda r: r["source_metadata"].pop("source_organization_name"))
    edit("no library version", lambda r: r["eval_library"].pop("version"))
    edit("library details not strings",
         lambda r: r["eval_library"]["additional_details"].update(n=3))
    edit("no model id", lambda r: r["model_info"].pop("id"))
    edit("no model details", lambda r: r["model_info"].pop("additional_details"))
    edit("no deployment", lambda r: r["model_info"]["additional_details"].pop("deployment_type"))
    edit("bad availability",
         lambda r: r["model_info"]["additional_details"].update(model_availability="free"))
    edit("results not a list", lambda r: r.update(evaluation_results={}))
    for key in ("evaluation_name", "source_data", "metric_config", "score_details"):
        edit(f"result without {key}", lambda r, k=key: r[res][0].pop(k))
    edit("no lower_is_better", lambda r: r[res][0]["metric_config"].pop("lower_is_better"))
    edit("lower_is_better not bool",
         lambda r: r[res][0]["metric_config"].update(lower_is_better="yes"))
    edit("continuous without max", lambda r: r[res][0]["metric_config"].pop("max_score"))
    edit("levels without names", lambda r: r[res][0]["metric_config"].update(score_type="levels"))
    edit("bad score type", lambda r: r[res][0]["metric_config"].update(score_type="graded"))
    edit("max score text", lambda r: r[res][0]["metric_config"].update(max_score="one"))
    edit("no score", lambda r: r[res][0]["score_details"].pop("score"))
    edit("score text", lambda r: r[res][0]["score_details"].update(score="0.2"))
    edit("details not strings", lambda r: r[res][0]["score_details"]["details"].update(n=1))
    edit("se without value",
         lambda r: r[res][0]["score_details"]["uncertainty"]["standard_error"].pop("value"))
    edit("ci without upper",
         lambda r: r[res][0]["score_details"]["uncertainty"]["confidence_interval"].pop("upper"))
    edit("level above 1", lambda r: r[res][0]["score_details"]["uncertainty"][
        "confidence_interval"].update(confidence_level=95))
    edit("num_samples float",
         lambda r: r[res][0]["score_details"]["uncertainty"].update(num_samples=2.5))
    edit("url source without url", lambda r: r[res][0].update(
        source_data={"dataset_name": "d", "source_type": "url"}))
    edit("unknown source kind", lambda r: r[res][0].update(
        source_data={"dataset_name": "d", "source_type": "ftp"}))
    edit("source details not strings",
         lambda r: r[res][0]["source_data"]["additional_details"].update(pool_size=2000))
    return out


def test_our_check_agrees_with_the_schema_on_broken_records() -> None:
    pytest.importorskip("jsonschema")
    rec = _roundtrip(eee_aggregate(**BASE))
    for name, broken in _mutations(rec):
        theirs = _schema_errors(broken)
        ours = check_eee_aggregate(broken)
        assert theirs, f"{name}: the schema accepts it (the mutation is not a break)"
        assert ours, f"{name}: the schema rejects it ({theirs[:2]}), our check does not"
    assert check_eee_aggregate([]) == ["record: must be an object"]


def test_datastore_path() -> None:
    rec = eee_aggregate(**BASE)
    u = "0f8b3c1e-6a2d-4c5e-9b7a-1d2e3f4a5b6c"
    assert eee_datastore_path(rec, u) == f"data/squad/HuggingFaceTB/SmolLM2-135M-Instruct/{u}.json"
    odd = eee_aggregate(**{**BASE, "dataset": "data", "model_id": "me/my model:v2"})
    assert eee_datastore_path(odd, u) == f"data/_data/me/my_model_v2/{u}.json"
    with pytest.raises(ValueError, match="UUID4"):
        eee_datastore_path(rec, "0f8b3c1e-6a2d-1c5e-9b7a-1d2e3f4a5b6c")
    parts = eee_datastore_path(rec).split("/")
    assert len(parts) == 5 and parts[-1].endswith(".json")


@pytest.mark.skipif(not os.environ.get("ACTIVETEST_EEE_PYTHON"),
                    reason="set ACTIVETEST_EEE_PYTHON to a Python with every-eval-ever")
def test_every_eval_evers_own_validator_accepts_the_records(tmp_path: Path) -> None:
    records = [eee_aggregate(**BASE),
               eee_aggregate(**{**BASE, "metric": "log_loss", "hf_repo": "stanfordnlp/sst2"}),
               eee_aggregate(**{**BASE, "dataset_url": "https://example.org/pool.csv",
                                "ci_low": None, "ci_high": None, "level": None})]
    paths = []
    for rec in records:
        rel = eee_datastore_path(rec)
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(rec, allow_nan=False), encoding="utf-8")
        paths.append(rel)
    proc = subprocess.run([os.environ["ACTIVETEST_EEE_PYTHON"], "-m", "every_eval_ever",
                           "validate", "--format", "json", *paths], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert len(report) == 3
    assert all(r["valid"] and not r["errors"] and not r["warnings"] for r in report), report
