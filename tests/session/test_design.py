"""session/design.py, the one place a design is built: the design it builds is the one
every session used (old files of schemas 1-3 and new sessions), so the draws from the
same seed are the same."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest
from session_support import PoolFiles

from activetest.session import design as sd
from activetest.session import draw
from activetest.session.config import SessionConfig
from activetest.session.store import SessionError, SessionStore
from activetest.session.workflow import Session
from activetest.stats import acquisition_scores
from activetest.stats.adaptive import AdaptiveDesign, AdaptiveSampler

OLD = Path(__file__).parent / "data" / "old"
SRC = Path(__file__).resolve().parents[2] / "src" / "activetest"


def _stored(store: SessionStore, role: str) -> np.ndarray:
    s = store.scores(role)
    assert s is not None
    return s.logprobs


@pytest.mark.parametrize("name", sorted(p.stem for p in OLD.glob("schema*.db")))
def test_the_design_of_every_old_file_is_the_one_it_was_created_with(name: str,
                                                                    tmp_path: Path) -> None:
    path = tmp_path / f"{name}.db"
    shutil.copyfile(OLD / f"{name}.db", path)
    with SessionStore.open(path) as store:
        cfg = store.config()
        stored_q = _stored(store, "acquisition")[:, 0]
        if cfg.adaptive:
            built = sd.stored_design(store)
            # the first draw's proposal, as stored at creation
            np.testing.assert_allclose(built.plan([]).q, stored_q, rtol=1e-12, atol=0)
            sampler = draw.replayed(store)  # refuses a history the design does not replay
            assert sampler is not None
            assert sampler.acquired == [a.index for a in store.acquisitions()]
        elif not cfg.graded:
            t = _stored(store, "target")
            t_lp = t if np.all(np.isfinite(t)) else None
            scores = sd.initial_scores(cfg, _stored(store, "surrogate"), t_lp, len(stored_q))
            np.testing.assert_allclose(scores, stored_q, rtol=1e-12, atol=0)
        else:  # the paper's expected loss of a graded session written before graded_fixed
            from activetest.data.taskfile import task_from_dict

            task = task_from_dict(cfg.task, "config.task", index_values=True)
            np.testing.assert_allclose(sd.expected_loss(_stored(store, "surrogate"), task),
                                       stored_q, rtol=1e-12, atol=0)


def _create(pf: PoolFiles, path: Path, **kw: object) -> Session:
    args: dict[str, object] = dict(pool=pf.pool, task="demo", surrogate=f"table:{pf.surrogate}",
                                   target=f"table:{pf.target}", seed=11, progress=False,
                                   pool_options={"id_column": "id"})
    args.update(kw)
    return Session.create(path, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(("acquisition", "metric", "name", "loss"), [
    ("adaptive", "log_loss", "calibrated", "log"),
    ("adaptive", "error_rate", "calibrated", "zero_one"),
    ("adaptive", "both", "calibrated-both", "log"),
    ("pe_adaptive", "log_loss", "pe", "log"),
    ("fixed_mix", "both", "fixed_mix", "log"),
])
def test_a_new_session_draws_what_the_built_design_draws(
        pool_files: PoolFiles, tmp_path: Path, acquisition: str, metric: str, name: str,
        loss: str) -> None:
    with _create(pool_files, tmp_path / "s.db", acquisition=acquisition, metric=metric) as s:
        cfg = s.session_config
        assert sd.design_name(cfg) == name
        # new sessions record the earned in-run rule (absent: the original one)
        assert cfg.design_rule == sd.design_rule(cfg) == "earned"
        assert cfg.to_dict()["design_rule"] == "earned"
        S = _stored(s.store, "surrogate")
        T = None if acquisition == "pe_adaptive" else _stored(s.store, "target")
        ref = AdaptiveSampler(AdaptiveDesign.from_name(name, surrogate_logprobs=S,
                                                       target_logprobs=T, loss=loss,
                                                       rule="earned"), seed=11)
        built = AdaptiveSampler(sd.stored_design(s.store), seed=11)
        np.testing.assert_array_equal(sd.pool_design(cfg, S, T).plan([]).q,
                                      s.acquisition_scores())
        from activetest.models import get_scorer

        # the target's log-probs on the pool, for the losses a PE design is given
        T_all = get_scorer(f"table:{pool_files.target}").score(s.task, s.items(), [],
                                                                progress=False)
        got = []
        for b in [1] * 12 + [4, 3]:
            got += s.select(b)
            s.label_from_data()
            rows = [a.index for a in got[-b:]]
            ys = pool_files.labels[rows]
            losses = (-T_all[rows, ys]).tolist() if cfg.design_loss == "log" \
                else (np.argmax(T_all[rows], axis=1) != ys).astype(float).tolist()
            for smp in (ref, built):
                idx, _ = smp.draw(b)
                assert idx.tolist() == rows
                smp.observe(labels=ys.tolist(), losses=losses)
        assert ref.acquired == built.acquired == [a.index for a in got]
        np.testing.assert_array_equal(ref.q, built.q)


@pytest.mark.parametrize("acquisition", ["ce", "pe", "zero_one", "uniform"])
def test_fixed_acquisitions_store_the_stats_scores(pool_files: PoolFiles, tmp_path: Path,
                                                  acquisition: str) -> None:
    with _create(pool_files, tmp_path / "f.db", acquisition=acquisition) as s:
        S = _stored(s.store, "surrogate")
        T = _stored(s.store, "target")
        T = T if np.all(np.isfinite(T)) else None
        assert (T is None) == (acquisition == "pe")
        want = acquisition_scores(acquisition, surrogate_logprobs=S, target_logprobs=T,
                                  n=len(S))
        np.testing.assert_array_equal(s.acquisition_scores(), want)
        np.testing.assert_array_equal(sd.initial_scores(s.session_config, S, T, len(S)), want)


def test_the_two_metric_variant_is_recorded_and_checked() -> None:
    assert sd.design_variant("both", "adaptive") == "calibrated-both"
    assert sd.design_variant("both", "fixed_mix") is None
    assert sd.design_variant("log_loss", "adaptive") is None
    cfg = SessionConfig(task={}, surrogate="s", target="t", metric="both",
                        acquisition="adaptive", seed=0, design_variant="calibrated-triple")
    with pytest.raises(SessionError, match=r"config\.design is 'calibrated-triple'"):
        sd.design_name(cfg)
    fixed = SessionConfig(task={}, surrogate="s", target="t", metric="log_loss",
                          acquisition="ce", seed=0)
    with pytest.raises(SessionError, match="not an adaptive design"):
        sd.design_name(fixed)


def test_the_in_run_rule_is_recorded_and_an_absent_key_is_the_original_rule() -> None:
    """A config without ``design_rule`` (every file before it, and main's) builds the
    original rule; new adaptive sessions record the earned one; an unknown rule is refused
    by name; the key round-trips, and is not written where it was not read."""
    assert sd.new_design_rule("adaptive") == sd.new_design_rule("pe_adaptive") == "earned"
    assert sd.new_design_rule("ce") is None and sd.new_design_rule("uniform") is None
    old = SessionConfig(task={}, surrogate="s", target="t", metric="log_loss",
                        acquisition="adaptive", seed=0)
    assert old.design_rule is None and sd.design_rule(old) == "original"
    assert "design_rule" not in old.to_dict()
    new = SessionConfig.from_dict({**old.to_dict(), "design_rule": "earned"})
    assert sd.design_rule(new) == "earned"
    assert new.to_dict() == {**old.to_dict(), "design_rule": "earned"}
    rng = np.random.default_rng(3)
    S = rng.normal(size=(60, 3))
    S -= np.log(np.exp(S).sum(axis=1, keepdims=True))
    T = S + rng.normal(size=(60, 3))
    T -= np.log(np.exp(T).sum(axis=1, keepdims=True))
    assert sd.pool_design(old, S, T).rule == "original"
    assert sd.pool_design(new, S, T).rule == "earned"
    # the two rules' first proposals differ (earned: uniform until labels earn the model)
    assert not np.allclose(sd.pool_design(old, S, T).plan([]).q,
                           sd.pool_design(new, S, T).plan([]).q)
    np.testing.assert_allclose(sd.pool_design(new, S, T).plan([]).q, 1 / 60, rtol=1e-15)
    # the design's state names the rule (only a non-original one: old records unchanged)
    assert draw.describe_design({"refits": 1, "lam": 0.5, "rule": "earned"})[0] == (
        "1 refit(s), lambda 0.5, earned in-run rule")
    bad = SessionConfig.from_dict({**old.to_dict(), "design_rule": "newer"})
    with pytest.raises(SessionError, match=r"config\.design_rule is 'newer'"):
        sd.design_rule(bad)


def _imports(module: Path, rooms: set[str]) -> set[str]:
    """The modules of ``activetest.session`` (``rooms``) that ``module`` imports, at any
    level of the file (function-level imports too)."""
    out = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                for name in (f"{node.module}.{a.name}", node.module):
                    room = name.removeprefix("activetest.session.")
                    if name.startswith("activetest.session.") and room in rooms:
                        out.add(room)
                        break
    return out


def test_no_import_circle_through_the_rooms_that_build_and_draw() -> None:
    session = SRC / "session"
    names = {p.stem for p in session.glob("*.py")}
    graph = {p.stem: _imports(p, names) for p in session.glob("*.py")}
    rooms = ("config", "design", "draw", "create", "create_graded", "store", "records")

    def reaches(a: str, b: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            m = todo.pop()
            for n in graph.get(m, ()):
                if n == b:
                    return True
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return False

    for room in rooms:
        assert not reaches(room, room), room
    assert "design" in graph["draw"] and "design" in graph["create"]


def test_a_long_list_of_fitted_weights_names_the_largest() -> None:
    """A history design fits ~66 weights: one line named all of them (QA); it names the
    10 largest by size, in their order, and counts the rest."""
    from activetest.session.draw import MAX_WEIGHTS_SHOWN, describe_design

    w = {f"factor {k}": (k if k % 2 else -k) / 100 for k in range(1, 21)}
    _, line = describe_design({"refits": 3, "lam": 0.1, "weights": w})
    assert line is not None and line.endswith(", and 10 smaller (estimate --json: all)")
    named = [part.rsplit(" ", 1)[0] for part in line.split(", and")[0].split(", ")]
    assert named == [f"factor {k}" for k in range(21 - MAX_WEIGHTS_SHOWN, 21)]
    _, short = describe_design({"weights": {"a": 1.0, "b": -2.0}})
    assert short == "a 1, b -2"
